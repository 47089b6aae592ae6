//! docs/deploy.md, followed in the namespace lab as if each namespace were a machine (root;
//! without root it prints SKIPPED).
//!
//! - Machine `ncI` is the lab's `nic-I` (`tree-a`, `tree-b` and `clients` stand for `eth1`,
//!   `eth2` and `eth0`); node 1 takes the card path: its engine in `nic-1` stands in for the
//!   card's SoC, `host-1` is the host with `xdp-log` on the `pcie` veth and `redis-nc --pin`.
//! - The cluster file comes from `soc-ctl gen-config --transport multicast --member …` with the
//!   lab's addresses and interfaces, the key from `soc-ctl gen-key`; the multicast routes are
//!   the guide's.
//! - Every service runs the `ExecStartPre`/`ExecStart`/`ExecStop` lines of the unit files in
//!   `deploy/systemd/` (read from there, `%i`, `%d` and the `node-I.env` variables substituted
//!   as systemd does), in its machine's namespace, as an unprivileged user holding exactly the
//!   unit's `AmbientCapabilities=` (`setpriv`). systemd itself does not run; these paths are
//!   mapped to the test's folders: /usr/local/bin, /etc/nano-consensus, /run/nano-consensus,
//!   /var/lib/nano-consensus, /sys/fs/bpf/nano-consensus; the user nano-consensus is `nobody`.
//! - Then the guide's sequence: `soc-ctl init`/`start`, the fronts, requests from `nc-client`
//!   (unprivileged, in the clients namespace), a SET read at the other fronts with AUTH, node 3
//!   joining with `soc-ctl join` and its front catching up. Checks: every engine's log is the
//!   same, the fronts' digests are equal, the engines run real-time with the unit's
//!   capabilities, the XDP log refused nothing. `systemd-analyze verify` checks the unit files
//!   where the tool exists.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use host_app::auth::Password;
use host_app::resp::Value;
use nc_tools::app_lab::{RespConn, connect_in};
use nc_tools::netlab::{Lab, host_client_addr};

const NODES: u8 = 4;
/// The node that takes the card path.
const CARD: u8 = 1;
const PASSWORD: &str = "deploy-test-password";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// soc-ctl's, host-app's and xdp-log's binaries (what `cargo install` puts in /usr/local/bin).
fn bins() -> PathBuf {
    let ok = Command::new(env!("CARGO"))
        .args([
            "build", "-q", "-p", "soc-ctl", "-p", "host-app", "-p", "xdp-log", "--bins",
        ])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "building the binaries failed");
    PathBuf::from(env!("CARGO_BIN_EXE_nc-lab"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// One unit file's `[Service]` lines that matter here.
#[derive(Debug, Default)]
struct Unit {
    name: String,
    user: Option<String>,
    caps: Vec<String>,
    pre: Vec<String>,
    start: String,
    stop: Vec<String>,
}

fn unit(name: &str) -> Unit {
    let path = repo().join("deploy/systemd").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut u = Unit {
        name: name.into(),
        ..Unit::default()
    };
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        assert!(
            !line.ends_with('\\'),
            "{name}: continued lines are not handled here"
        );
        let Some((k, v)) = line.split_once('=') else {
            panic!("{name}: not KEY=VALUE: {line}")
        };
        if section != "[Service]" {
            continue;
        }
        match k {
            "User" => u.user = Some(v.into()),
            "AmbientCapabilities" => u.caps = v.split_whitespace().map(String::from).collect(),
            "ExecStartPre" => u.pre.push(v.into()),
            "ExecStart" => u.start = v.into(),
            "ExecStop" => u.stop.push(v.into()),
            _ => {}
        }
    }
    assert!(!u.start.is_empty(), "{name}: no ExecStart");
    u
}

/// A `KEY=VALUE` file as systemd's `EnvironmentFile=` reads it (no quotes used here).
fn env_file(path: &Path) -> HashMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once('=').expect("KEY=VALUE");
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect()
}

/// Where this test puts what the guide puts in system folders, and who runs the services.
struct Host {
    bins: PathBuf,
    etc: PathBuf,
    run: PathBuf,
    state: PathBuf,
    creds: PathBuf,
    bpf: PathBuf,
    user: String,
    group: String,
}

impl Host {
    fn map(&self, word: &str) -> String {
        let d = |p: &Path| format!("{}/", p.display());
        word.replace("/usr/local/bin/", &d(&self.bins))
            .replace("/etc/nano-consensus/", &d(&self.etc))
            .replace("/run/nano-consensus/", &d(&self.run))
            .replace("/var/lib/nano-consensus/", &d(&self.state))
            .replace(
                "/sys/fs/bpf/nano-consensus",
                &self.bpf.display().to_string(),
            )
    }

    /// A command line of a unit, as systemd runs it for instance `node`: the prefix (`+`, `-`),
    /// then the words with `%i`, `%d`, `${VAR}` (one word) and `$VAR` (split at spaces)
    /// substituted from the node's environment file, the guide's paths and user mapped.
    fn expand(&self, line: &str, u: &Unit, node: u8) -> (String, Vec<String>) {
        let env = env_file(&self.etc.join(format!("node-{node}.env")));
        let prefix: String = line.chars().take_while(|c| "+-!@:".contains(*c)).collect();
        let creds = self
            .creds
            .join(format!("{}@{node}", u.name.trim_end_matches("@.service")));
        let var = |name: &str| -> String {
            env.get(name)
                .unwrap_or_else(|| panic!("{}: ${name} is not in node-{node}.env", u.name))
                .clone()
        };
        let mut words: Vec<String> = Vec::new();
        for w in line[prefix.len()..].split_whitespace() {
            let w = w
                .replace("%i", &node.to_string())
                .replace("%d", &creds.display().to_string());
            if let Some(name) = w.strip_prefix('$').filter(|n| !n.starts_with('{')) {
                words.extend(var(name).split_whitespace().map(|x| self.map(x)));
                continue;
            }
            let mut out = String::new();
            let mut rest = w.as_str();
            while let Some(i) = rest.find("${") {
                let end = rest[i..].find('}').expect("closing }") + i;
                out.push_str(&rest[..i]);
                out.push_str(&var(&rest[i + 2..end]));
                rest = &rest[end + 1..];
            }
            out.push_str(rest);
            words.push(self.map(&out));
        }
        // `install -o nano-consensus -g nano-consensus`: the service user and group.
        for i in 1..words.len() {
            if words[i] == "nano-consensus" {
                words[i] = if words[i - 1] == "-g" {
                    self.group.clone()
                } else {
                    self.user.clone()
                };
            }
        }
        (prefix, words)
    }

    /// `argv` in namespace `ns`; as the unit's user with its ambient capabilities unless
    /// `privileged` (systemd's `+`). `nsenter --net` switches the network namespace only, so
    /// bpffs stays the same (as on a machine; `ip netns exec` would remount /sys).
    fn command(&self, ns: &str, u: &Unit, privileged: bool, argv: &[String]) -> Command {
        let mut c = Command::new("nsenter");
        c.arg(format!("--net=/run/netns/{ns}"));
        if !privileged && u.user.is_some() {
            c.args(["setpriv", "--reuid", &self.user, "--regid", &self.group]);
            c.arg("--clear-groups");
            if !u.caps.is_empty() {
                let caps: Vec<String> = u
                    .caps
                    .iter()
                    .map(|c| format!("+{}", c.trim_start_matches("CAP_").to_lowercase()))
                    .collect();
                let caps = caps.join(",");
                c.args(["--inh-caps", &caps, "--ambient-caps", &caps]);
            }
        }
        c.args(argv);
        // A service starts with systemd's environment, not ours.
        // (RUST_MIN_STACK: what .cargo/config.toml gives the test harness's threads.)
        for v in [
            "NC_CTL",
            "NC_BAR",
            "REDIS_NC_PASSWORD",
            "ZK_NC_PASSWORD",
            "RUST_MIN_STACK",
        ] {
            c.env_remove(v);
        }
        c
    }

    /// Run the unit's `ExecStartPre` lines, then start its `ExecStart` (a long-running
    /// service: its stderr into `log`).
    fn start(&self, ns: &str, u: &Unit, node: u8, log: &Path) -> Child {
        self.pre(ns, u, node);
        let (prefix, argv) = self.expand(&u.start, u, node);
        let log = std::fs::File::create(log).unwrap();
        self.command(ns, u, prefix.contains('+'), &argv)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {argv:?}: {e}", u.name))
    }

    fn pre(&self, ns: &str, u: &Unit, node: u8) {
        for line in &u.pre {
            let (prefix, argv) = self.expand(line, u, node);
            let o = self
                .command(ns, u, prefix.contains('+'), &argv)
                .output()
                .unwrap();
            assert!(
                o.status.success() || prefix.contains('-'),
                "{} ExecStartPre {argv:?}: {}",
                u.name,
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }

    /// Run one command line of the unit to its end (a oneshot's ExecStart, an ExecStop).
    fn run_line(&self, ns: &str, u: &Unit, node: u8, line: &str) -> Output {
        let (prefix, argv) = self.expand(line, u, node);
        let o = self
            .command(ns, u, prefix.contains('+'), &argv)
            .output()
            .unwrap();
        assert!(
            o.status.success() || prefix.contains('-'),
            "{} {argv:?}: {}{}",
            u.name,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        o
    }

    /// `soc-ctl ARGS` as the operator (root) runs it.
    fn soc_ctl(&self, args: &[&str]) -> String {
        let o = Command::new(self.bins.join("soc-ctl"))
            .args(args)
            .env_remove("NC_CTL")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "soc-ctl {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn ctl(&self, i: u8) -> String {
        self.run
            .join(format!("engine-{i}.sock"))
            .display()
            .to_string()
    }

    fn status(&self, i: u8) -> serde_json::Value {
        serde_json::from_str(&self.soc_ctl(&["--ctl", &self.ctl(i), "status", "--json"])).unwrap()
    }
}

fn wait(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(
            t0.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn chown(p: &Path, user: Option<&nix::unistd::User>, group: Option<nix::unistd::Gid>) {
    nix::unistd::chown(p, user.map(|u| u.uid), group).unwrap();
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The processes of the test's services, stopped on drop (also on a failed assertion).
struct Services {
    procs: Vec<(String, Child)>,
    stops: Vec<Box<dyn FnMut()>>,
}

impl Drop for Services {
    fn drop(&mut self) {
        // Fronts first (SIGTERM: redis-nc stops its redis-server), then the rest.
        for (name, c) in self.procs.iter_mut() {
            let sig = if name.starts_with("redis-nc") {
                nix::sys::signal::Signal::SIGTERM
            } else {
                nix::sys::signal::Signal::SIGKILL
            };
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(c.id() as i32), sig);
        }
        for (_, c) in self.procs.iter_mut() {
            let t0 = Instant::now();
            while c.try_wait().ok().flatten().is_none() && t0.elapsed() < Duration::from_secs(5) {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        for stop in self.stops.iter_mut() {
            stop();
        }
    }
}

fn front_addr(i: u8) -> SocketAddrV4 {
    let ip = if i == CARD {
        host_client_addr(i)
    } else {
        Ipv4Addr::new(10, 81, 3, 1 + i)
    };
    SocketAddrV4::new(ip, 6379)
}

fn call(c: &mut RespConn, args: &[&[u8]]) -> Value {
    // A front that is still catching up answers TRYAGAIN: ask again.
    let t0 = Instant::now();
    loop {
        let v = c.call(args).expect("front reply");
        match &v {
            Value::Error(e)
                if e.starts_with("TRYAGAIN") && t0.elapsed() < Duration::from_secs(20) =>
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            _ => return v,
        }
    }
}

#[test]
fn deploy_md_followed_in_the_namespace_lab() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: needs root (network namespaces, XDP, setpriv); CI runs it as root");
        return;
    }
    let t0 = Instant::now();
    let bins = bins();
    let user = nix::unistd::User::from_name("nobody")
        .ok()
        .flatten()
        .expect("the user nobody");
    let group = nix::unistd::Group::from_gid(user.gid)
        .ok()
        .flatten()
        .expect("nobody's group");

    let tmp = tempfile::tempdir().unwrap();
    chmod(tmp.path(), 0o755);
    let prefix = format!("ncd{}", std::process::id() % 10_000);
    let host = Host {
        bins: bins.clone(),
        etc: tmp.path().join("etc"),
        run: tmp.path().join("run"),
        state: tmp.path().join("state"),
        creds: tmp.path().join("credentials"),
        bpf: PathBuf::from(format!("/sys/fs/bpf/{prefix}")),
        user: user.name.clone(),
        group: group.name.clone(),
    };

    // The machines: the lab's namespaces (MTU 9000 on every link, no IGMP snooping).
    let mut lab = Lab::new(&prefix, Some(tmp.path().join("lab")));
    lab.netns = true;
    struct Down(Lab, PathBuf);
    impl Drop for Down {
        fn drop(&mut self) {
            let _ = self.0.down();
            let _ = std::fs::remove_dir(&self.1);
        }
    }
    // The machines booted with systemd, which mounts a bpffs on /sys/fs/bpf (sys-fs-bpf.mount)
    // before any unit runs; `xdp-log@`'s first ExecStartPre relies on it. This machine may not
    // have one (a CI host without systemd: then /sys/fs/bpf is a plain sysfs folder that not
    // even root may chmod), so mount it as boot would.
    let bpffs = Command::new("mountpoint")
        .args(["-q", "/sys/fs/bpf"])
        .status()
        .is_ok_and(|s| s.success());
    if !bpffs {
        let o = Command::new("mount")
            .args(["-t", "bpf", "bpf", "/sys/fs/bpf"])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "mount -t bpf bpf /sys/fs/bpf: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    lab.up(NODES).expect("lab up");
    let _down = Down(lab.clone(), host.bpf.clone());
    let nic = |i: u8| lab.nic(i);

    // Section 1: one route per group, on its tree's interface (eth1 = tree-a, eth2 = tree-b).
    for i in 0..NODES {
        for (group, dev) in [("239.77.0.1/32", "tree-a"), ("239.77.0.2/32", "tree-b")] {
            let ok = Command::new("ip")
                .args(["-n", &nic(i), "route", "add", group, "dev", dev])
                .status()
                .unwrap()
                .success();
            assert!(ok, "route {group} in {}", nic(i));
        }
    }

    // Section 2: /etc/nano-consensus 0750 root:nano-consensus; the services' folders.
    std::fs::create_dir(&host.etc).unwrap();
    chown(&host.etc, None, Some(group.gid));
    chmod(&host.etc, 0o750);
    for d in [&host.run, &host.state, &host.creds] {
        std::fs::create_dir(d).unwrap();
    }
    // RuntimeDirectory= / StateDirectory=: owned by the service user.
    chown(&host.run, Some(&user), Some(group.gid));
    chmod(&host.run, 0o750);

    // Section 3: the key, the cluster file (gen-config with the lab's addresses), the password.
    let key = host.etc.join("cluster.key");
    host.soc_ctl(&["gen-key", "--out", &key.display().to_string(), "--id", "1"]);
    chown(&key, Some(&user), Some(group.gid));
    let mut gen_args = vec![
        "gen-config".to_string(),
        "--transport".into(),
        "multicast".into(),
        "--auth-key-file".into(),
        key.display().to_string(),
    ];
    for i in 0..NODES {
        // The replica's host address: 127.0.0.1 on a software node, the host's end of the
        // card link on the card path.
        let host_addr = if i == CARD {
            format!("10.82.{i}.2")
        } else {
            "127.0.0.1".into()
        };
        gen_args.push("--member".into());
        gen_args.push(format!(
            "{i},10.81.3.{n},{host_addr},10.81.1.{n}:tree-a,10.81.2.{n}:tree-b",
            n = i + 1
        ));
    }
    let gen_args: Vec<&str> = gen_args.iter().map(String::as_str).collect();
    let toml = host.soc_ctl(&gen_args);
    assert!(toml.contains("transport = \"multicast\""), "{toml}");
    assert!(toml.contains("mode = \"required\""), "{toml}");
    let cfg = host.etc.join("cluster.toml");
    std::fs::write(&cfg, &toml).unwrap();
    chown(&cfg, None, Some(group.gid));
    chmod(&cfg, 0o640);
    let pw = host.etc.join("redis-password");
    std::fs::write(&pw, format!("{PASSWORD}\n")).unwrap();
    chmod(&pw, 0o600);

    // Section 4: node-I.env (the software nodes as node.env.example; node 1 the card path).
    let fronts = |i: u8| -> String {
        (0..NODES)
            .filter(|&j| j != i)
            .map(|j| format!("--peer {}", front_addr(j)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for i in 0..NODES {
        let mut env = format!(
            "NC_CONFIG=/etc/nano-consensus/cluster.toml\nNC_ENGINE_ARGS=--verbose\nREDIS_NC_LISTEN={}\n",
            front_addr(i)
        );
        if i == CARD {
            env += &format!(
                "REDIS_NC_ARGS=--pin /sys/fs/bpf/nano-consensus/node-{i} {}\n\
                 XDP_IFACE=pcie\n\
                 XDP_ARGS=--mode skb --consume --cluster-id 7 --allow-source 10.82.{i}.1 --nodes {NODES}\n",
                fronts(i)
            );
        } else {
            env += &format!(
                "REDIS_NC_ARGS=--engine-ctl /run/nano-consensus/engine-{i}.sock {}\n",
                fronts(i)
            );
        }
        std::fs::write(host.etc.join(format!("node-{i}.env")), env).unwrap();
    }
    // The example shipped with the units has the same keys.
    let example = env_file(&repo().join("deploy/systemd/node.env.example"));
    for k in [
        "NC_CONFIG",
        "NC_ENGINE_ARGS",
        "REDIS_NC_LISTEN",
        "REDIS_NC_ARGS",
    ] {
        assert!(example.contains_key(k), "node.env.example lacks {k}");
    }

    let engine = unit("nc-engine@.service");
    let redis = unit("redis-nc@.service");
    let xdp = unit("xdp-log@.service");
    let mut svc = Services {
        procs: Vec::new(),
        stops: Vec::new(),
    };
    let logs = tmp.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let log = |name: &str| logs.join(format!("{name}.log"));
    let show_logs = || -> String {
        let mut s = String::new();
        for e in std::fs::read_dir(&logs).unwrap().flatten() {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            s += &format!("--- {}:\n", e.file_name().to_string_lossy());
            for l in tail.into_iter().rev() {
                s += &format!("{l}\n");
            }
        }
        s
    };

    // Section 6: the engines, init, start.
    let start_engine = |svc: &mut Services, i: u8| {
        let name = format!("nc-engine@{i}");
        let mut child = host.start(&nic(i), &engine, i, &log(&name));
        let t0 = Instant::now();
        while !Path::new(&host.ctl(i)).exists() {
            if child.try_wait().unwrap().is_some() || t0.elapsed() > Duration::from_secs(20) {
                panic!("engine {i} did not come up:\n{}", show_logs());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        svc.procs.push((name, child));
    };
    for i in 0..3 {
        start_engine(&mut svc, i);
    }
    let cfg_s = cfg.display().to_string();
    for i in 0..3u8 {
        let out = host.soc_ctl(&[
            "--ctl",
            &host.ctl(i),
            "--node",
            &i.to_string(),
            "init",
            "--config",
            &cfg_s,
        ]);
        assert!(out.contains("enabled"), "{out}");
    }
    host.soc_ctl(&["--ctl", &host.ctl(0), "start"]);
    wait(Duration::from_secs(10), "nodes 0-2 active", || {
        (0..3).all(|i| host.status(i)["state"] == "Active")
    });
    for i in 0..3u8 {
        let text = std::fs::read_to_string(log(&format!("nc-engine@{i}"))).unwrap();
        assert!(
            text.contains("multicast transport") && text.contains("realtime Some(50)"),
            "engine {i} should run multicast and real-time with the unit's capabilities:\n{text}"
        );
        let owner = std::fs::metadata(host.ctl(i)).unwrap();
        assert_eq!(
            std::os::unix::fs::MetadataExt::uid(&owner),
            user.uid.as_raw(),
            "the engine runs as the unit's user"
        );
    }

    // Section 8, the host side of the card path: xdp-log on host-1's card link.
    let xdp_out = {
        host.pre(&lab.host(CARD), &xdp, CARD);
        host.run_line(&lab.host(CARD), &xdp, CARD, &xdp.start)
    };
    assert!(
        String::from_utf8_lossy(&xdp_out.stdout).contains("attached to pcie"),
        "{xdp_out:?}"
    );
    {
        let (host_ns, stop_lines) = (lab.host(CARD), xdp.stop.clone());
        let stop_unit = Unit {
            name: xdp.name.clone(),
            user: xdp.user.clone(),
            caps: xdp.caps.clone(),
            ..Unit::default()
        };
        let h = host_clone(&host);
        svc.stops.push(Box::new(move || {
            for l in &stop_lines {
                let (prefix, argv) = h.expand(l, &stop_unit, CARD);
                let _ = h
                    .command(&host_ns, &stop_unit, prefix.contains('+'), &argv)
                    .output();
            }
        }));
    }

    // The fronts: redis-nc@0 and @2 beside their engines, redis-nc@1 on the card's host.
    let start_front = |svc: &mut Services, i: u8| {
        // LoadCredential=: a copy of the password in the instance's credentials folder, the
        // service user's, mode 0400.
        let creds = host.creds.join(format!("redis-nc@{i}"));
        std::fs::create_dir(&creds).unwrap();
        let copy = creds.join("redis-password");
        std::fs::copy(&pw, &copy).unwrap();
        chmod(&copy, 0o400);
        chown(&copy, Some(&user), Some(group.gid));
        chown(&creds, Some(&user), Some(group.gid));
        chmod(&creds, 0o500);
        let dir = host.state.join(format!("redis-{i}"));
        std::fs::create_dir(&dir).unwrap();
        chown(&dir, Some(&user), Some(group.gid));
        chmod(&dir, 0o700);
        let ns = if i == CARD { lab.host(i) } else { nic(i) };
        let name = format!("redis-nc@{i}");
        let child = host.start(&ns, &redis, i, &log(&name));
        svc.procs.push((name, child));
    };
    for i in 0..3 {
        start_front(&mut svc, i);
    }
    let password = Password::new(PASSWORD).unwrap();
    let clients = lab.clients();
    // A front that cannot be reached: whether its process still runs, and every log.
    let connect = |svc: &mut Services, i: u8| -> RespConn {
        let mut c = connect_in(
            Some(clients.clone()),
            front_addr(i),
            Duration::from_secs(20),
        )
        .unwrap_or_else(|e| {
            let name = format!("redis-nc@{i}");
            let state = match svc.procs.iter_mut().find(|(n, _)| *n == name) {
                Some((_, child)) => match child.try_wait() {
                    Ok(Some(st)) => format!("{name} exited: {st}"),
                    Ok(None) => format!("{name} still runs"),
                    Err(e) => format!("{name}: {e}"),
                },
                None => format!("{name} was not started"),
            };
            panic!("front {i}: {e} ({state})\n{}", show_logs())
        });
        c.auth(&password).expect("AUTH");
        c
    };
    let mut f: Vec<RespConn> = (0..3).map(|i| connect(&mut svc, i)).collect();
    for c in f.iter_mut() {
        assert_eq!(call(c, &[b"PING"]), Value::Simple("PONG".into()));
    }

    // Requests from a client machine, as an unprivileged user with its copy of the key.
    let nc_client = |args: &[&str]| -> String {
        let client_unit = Unit {
            name: "nc-client".into(),
            user: Some("nano-consensus".into()),
            ..Unit::default()
        };
        let mut argv = vec![
            bins.join("nc-client").display().to_string(),
            "--config".into(),
            cfg_s.clone(),
        ];
        argv.extend(args.iter().map(|s| s.to_string()));
        let o = host
            .command(&clients, &client_unit, false, &argv)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "nc-client {args:?}: {}{}",
            String::from_utf8_lossy(&o.stderr),
            show_logs()
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let out = nc_client(&["send", "hello"]);
    assert!(out.contains("decided at instance"), "{out}");
    let out = nc_client(&["load", "--requests", "300", "--window", "4"]);
    assert!(out.contains("300 decided"), "{out}");

    // A write at one front, read at the others (linearizable reads).
    assert_eq!(
        call(&mut f[0], &[b"SET", b"greeting", b"hello"]),
        Value::Simple("OK".into())
    );
    for (i, c) in f.iter_mut().enumerate().skip(1) {
        assert_eq!(
            call(c, &[b"GET", b"greeting"]),
            Value::Bulk(Some(b"hello".to_vec())),
            "front {i}"
        );
    }
    for k in 0..20 {
        let key = format!("k{k}");
        assert_eq!(
            call(&mut f[k % 3], &[b"INCR", key.as_bytes()]),
            Value::Integer(1)
        );
    }

    // Section 7: node 3 joins the running cluster, then its front catches up.
    start_engine(&mut svc, 3);
    let out = host.soc_ctl(&["--ctl", &host.ctl(3), "join", "--member", "1"]);
    assert!(out.contains("joined"), "{out}");
    start_front(&mut svc, 3);
    f.push(connect(&mut svc, 3));
    let out = nc_client(&["load", "--requests", "200", "--window", "4"]);
    assert!(out.contains("200 decided"), "{out}");
    assert_eq!(
        call(&mut f[2], &[b"SET", b"after-join", b"yes"]),
        Value::Simple("OK".into())
    );
    assert_eq!(
        call(&mut f[3], &[b"GET", b"greeting"]),
        Value::Bulk(Some(b"hello".to_vec()))
    );

    // The fronts hold the same data.
    let mut digests = Vec::new();
    let same = (0..150).any(|_| {
        digests = f
            .iter_mut()
            .map(|c| call(c, &[b"DEBUG", b"DIGEST"]))
            .collect();
        if digests.iter().all(|d| *d == digests[0]) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
        false
    });
    assert!(
        same,
        "the fronts' digests differ: {digests:?}\n{}",
        show_logs()
    );

    // Every engine's log is the same (nothing is proposed from here on: the reads above are done).
    let engine_log = |i: u8| host.soc_ctl(&["--ctl", &host.ctl(i), "log"]);
    let mut last = Vec::new();
    let same = (0..200).any(|_| {
        last = (0..NODES).map(engine_log).collect();
        if last.iter().all(|l| *l == last[0]) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
        false
    });
    assert!(same, "the engines' logs differ:\n{last:#?}");
    let instances = last[0].lines().count();
    assert!(instances >= 100, "{instances} instances logged");
    for i in 0..NODES {
        let s = host.status(i);
        assert_eq!(s["counters"]["unauthorized"], 0, "node {i}: {s}");
    }

    // The card's host logged every decision through XDP and refused nothing.
    let xdp_stats = || -> serde_json::Value {
        let o = host.run_line(
            &lab.host(CARD),
            &xdp,
            CARD,
            "/usr/local/bin/xdp-log stats --json --pin /sys/fs/bpf/nano-consensus/node-%i",
        );
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let mut stats = xdp_stats();
    for _ in 0..50 {
        if stats["logged"].as_u64() == Some(instances as u64) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        stats = xdp_stats();
    }
    assert_eq!(stats["unauthorized"], 0, "{stats}");
    assert_eq!(stats["malformed"], 0, "{stats}");
    assert_eq!(
        stats["logged"].as_u64(),
        Some(instances as u64),
        "{stats}: the XDP log holds every instance of the engines' logs"
    );

    // The unit files themselves, where systemd-analyze exists.
    verify_units(&bins, tmp.path());

    drop(f);
    drop(svc);
    assert!(
        !host.bpf.join(format!("node-{CARD}")).exists(),
        "ExecStop left the pins"
    );
    println!(
        "deploy.md followed: 4 machines, {instances} instances on every engine, fronts equal, {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}

fn host_clone(h: &Host) -> Host {
    Host {
        bins: h.bins.clone(),
        etc: h.etc.clone(),
        run: h.run.clone(),
        state: h.state.clone(),
        creds: h.creds.clone(),
        bpf: h.bpf.clone(),
        user: h.user.clone(),
        group: h.group.clone(),
    }
}

/// `systemd-analyze verify` on the three units (it wants their programs to exist: the built
/// binaries stand in for /usr/local/bin).
fn verify_units(bins: &Path, tmp: &Path) {
    let Ok(v) = Command::new("systemd-analyze").arg("--version").output() else {
        println!("systemd-analyze verify: SKIPPED (no systemd-analyze on this machine)");
        return;
    };
    let dir = tmp.join("units");
    std::fs::create_dir_all(&dir).unwrap();
    let mut names = Vec::new();
    for u in [
        "nc-engine@.service",
        "redis-nc@.service",
        "xdp-log@.service",
    ] {
        let text = std::fs::read_to_string(repo().join("deploy/systemd").join(u)).unwrap();
        let text = text.replace("/usr/local/bin/", &format!("{}/", bins.display()));
        std::fs::write(dir.join(u), text).unwrap();
        names.push(dir.join(u.replace("@.", "@0.")).display().to_string());
    }
    let o = Command::new("systemd-analyze")
        .arg("verify")
        .args(&names)
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let ours: Vec<&str> = err
        .lines()
        .filter(|l| {
            ["nc-engine@", "redis-nc@", "xdp-log@"]
                .iter()
                .any(|u| l.contains(u))
        })
        .collect();
    assert!(
        o.status.success() && ours.is_empty(),
        "systemd-analyze verify: {err}"
    );
    println!(
        "systemd-analyze verify: the three unit files pass ({})",
        String::from_utf8_lossy(&v.stdout)
            .lines()
            .next()
            .unwrap_or("")
    );
}
