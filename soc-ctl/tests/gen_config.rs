//! `soc-ctl gen-config` (loopback unchanged; multicast from `--member`s, with `[auth]`; errors
//! naming the argument), and what the engine says about privileges it lacks (root: the engine
//! runs as `nobody` through `setpriv`).

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{ENGINE, SOC_CTL};
use soc_ctl::cluster::{AuthMode, ClusterFile, Transport};

fn soc_ctl(args: &[&str]) -> Output {
    Command::new(SOC_CTL).args(args).output().unwrap()
}

const MEMBERS: [&str; 3] = [
    "0,10.71.3.1,127.0.0.1,10.71.1.1:eth1,10.71.2.1:eth2",
    "1,10.71.3.2,10.72.0.2,10.71.1.2:eth1,10.71.2.2:eth2",
    "2,10.71.3.3,127.0.0.1,10.71.1.3:eth1,10.71.2.3:eth2",
];

fn multicast(extra: &[&str], members: &[&str]) -> Output {
    let mut args = vec!["gen-config", "--transport", "multicast"];
    for m in members {
        args.extend(["--member", m]);
    }
    args.extend(extra);
    soc_ctl(&args)
}

#[test]
fn the_loopback_default_is_unchanged() {
    let o = soc_ctl(&["gen-config"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text, ClusterFile::loopback(3, 2, 0, 7400).to_toml());
    let o = soc_ctl(&[
        "gen-config",
        "--nodes",
        "5",
        "--trees",
        "3",
        "--net",
        "9",
        "--port",
        "9000",
    ]);
    assert!(o.status.success());
    let f = ClusterFile::parse(&String::from_utf8(o.stdout).unwrap()).unwrap();
    assert_eq!(f, ClusterFile::loopback(5, 3, 9, 9000));
}

#[test]
fn a_multicast_file_from_members_is_what_every_reader_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("cluster.key");
    let key_s = key.display().to_string();
    assert!(
        soc_ctl(&["gen-key", "--out", &key_s, "--id", "3"])
            .status
            .success()
    );
    let o = multicast(
        &[
            "--auth-key-file",
            &key_s,
            "--auth-key-id",
            "3",
            "--group",
            "239.9.0.1",
            "--group",
            "239.9.0.2",
            "--cluster-id",
            "99",
            "--port",
            "17400",
        ],
        &MEMBERS,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let f = ClusterFile::parse(&String::from_utf8(o.stdout).unwrap()).unwrap();
    assert_eq!(f.transport, Transport::Multicast);
    assert_eq!(f.cluster_id, 99);
    assert_eq!(f.ports.decide, 17400);
    assert_eq!(f.ports.client, 17401);
    assert_eq!(f.trees[1].group.to_string(), "239.9.0.2");
    assert_eq!(f.nodes.len(), 3);
    assert_eq!(f.nodes[1].host_addr.to_string(), "10.72.0.2");
    assert_eq!(f.nodes[2].tree_addrs[1].to_string(), "10.71.2.3");
    assert_eq!(f.nodes[2].tree_ifaces, ["eth1", "eth2"]);
    let auth = f.auth.as_ref().unwrap();
    assert_eq!((auth.mode, auth.key), (AuthMode::Required, 3));
    assert_eq!(auth.key_file, key);
    // Every node's setup loads (registers through proto, the key from the file).
    for i in 0..3 {
        let s = f.node(i).unwrap();
        assert_eq!(s.config.auth_mode, 2);
        assert_eq!(s.config.auth_key, 3);
    }
    // A key id the file does not hold is refused.
    let o = multicast(&["--auth-key-file", &key_s], &MEMBERS);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--auth-key-id 1"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn bad_arguments_are_refused_naming_them() {
    let dup = "1,10.71.3.1,127.0.0.1,10.71.1.2:eth1,10.71.2.2:eth2";
    let one_tree = "1,10.71.3.2,127.0.0.1,10.71.1.2:eth1";
    let lo_tree = "1,10.71.3.2,127.0.0.1,127.0.0.9:eth1,10.71.2.2:eth2";
    let same_iface = "1,10.71.3.2,127.0.0.1,10.71.1.2:eth1,10.71.2.2:eth1";
    let cases: Vec<(Vec<&str>, Vec<&str>, &str)> = vec![
        (
            vec![],
            vec![MEMBERS[0], dup],
            "--member '1,10.71.3.1,127.0.0.1,10.71.1.2:eth1,10.71.2.2:eth2': nodes[1].client_addr",
        ),
        (
            vec![],
            vec![MEMBERS[0], one_tree],
            "nodes[1].tree_addrs: 1 addresses for 2 trees",
        ),
        (
            vec![],
            vec![MEMBERS[0], lo_tree],
            "nodes[1].tree_addrs[0]: 127.0.0.9",
        ),
        (
            vec![],
            vec![MEMBERS[0], same_iface],
            "nodes[1].tree_ifaces[1]: eth1 is also tree 0's",
        ),
        (
            vec![],
            vec![MEMBERS[1]],
            "node id 1 given as --member number 1",
        ),
        (
            vec![],
            vec!["0,10.71.3.1,127.0.0.1,10.71.1.1:eth1,eth2"],
            "tree 1: 'eth2' is not TREE_ADDR:IFACE",
        ),
        (vec![], vec![], "--transport multicast needs one --member"),
        (
            vec!["--nodes", "3"],
            vec![MEMBERS[0]],
            "--nodes is for loopback clusters",
        ),
        (
            vec!["--group", "239.1.1.1"],
            vec![MEMBERS[0]],
            "--group: 1 group(s) for 2 tree(s)",
        ),
        (
            vec!["--group", "10.0.0.1", "--group", "239.1.1.1"],
            vec![MEMBERS[0]],
            "--group: trees[0].group",
        ),
        (
            vec!["--mtu", "100"],
            vec![MEMBERS[0]],
            "--mtu: limits.mtu: 100 is out of range",
        ),
        (vec!["--port", "65535"], vec![MEMBERS[0]], "--port: ports."),
        (
            vec!["--auth-key-file", "relative.key"],
            vec![MEMBERS[0]],
            "--auth-key-file relative.key: give an absolute path",
        ),
    ];
    for (extra, members, needle) in cases {
        let o = multicast(&extra, &members);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?} {members:?}: {err}");
        assert!(err.contains(needle), "{extra:?} {members:?}: {err}");
        assert!(o.stdout.is_empty(), "nothing printed on an error");
    }
    // Loopback's options and multicast's do not mix.
    let o = soc_ctl(&["gen-config", "--member", MEMBERS[0]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("add --transport multicast"));
}

/// Run the engine as `nobody` (no capability) on a loopback file; returns (exit status or None
/// if it was still running after `wait`, stderr).
fn engine_as_nobody(args: &[&str], wait: Duration) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let cfg = dir.path().join("cluster.toml");
    let net = 60 + (std::process::id() % 50) as u8;
    std::fs::write(&cfg, ClusterFile::loopback(1, 2, net, 7400).to_toml()).unwrap();
    let ctl = dir.path().join("e0.sock");
    let err = dir.path().join("stderr");
    let mut c = Command::new("setpriv")
        .args([
            "--reuid",
            "nobody",
            "--regid",
            "nogroup",
            "--clear-groups",
            ENGINE,
        ])
        .args(["--config", &cfg.display().to_string(), "--node", "0"])
        .args(["--ctl", &ctl.display().to_string()])
        .args(args)
        .env_remove("NC_CTL")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let code = loop {
        if let Some(s) = c.try_wait().unwrap() {
            break s.code();
        }
        if t0.elapsed() > wait {
            let _ = c.kill();
            let _ = c.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (code, std::fs::read_to_string(&err).unwrap())
}

#[test]
fn missing_privileges_are_named() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: needs root (runs the engine as nobody through setpriv)");
        return;
    }
    if nix::unistd::Group::from_name("nogroup")
        .ok()
        .flatten()
        .is_none()
    {
        eprintln!("SKIPPED: no group nogroup");
        return;
    }
    // Asked for real-time priority without CAP_SYS_NICE / CAP_IPC_LOCK: refused, naming both.
    let (code, err) = engine_as_nobody(&["--realtime", "50"], Duration::from_secs(10));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--realtime 50: SCHED_FIFO needs CAP_SYS_NICE")
            && err.contains("CAP_IPC_LOCK")
            && err.contains("or pass --realtime 0"),
        "{err}"
    );
    // By default it runs without, and says why.
    let (code, err) = engine_as_nobody(&[], Duration::from_millis(1500));
    assert_eq!(code, None, "the engine keeps running: {err}");
    assert!(
        err.contains("note: real-time priority off (SCHED_FIFO needs CAP_SYS_NICE")
            && err.contains("realtime None"),
        "{err}"
    );
}

/// Generated multicast files tag packets unless told not to (issue 18: "on by default in
/// generated configs").
#[test]
fn multicast_files_are_tagged_unless_refused_explicitly() {
    let o = multicast(&[], &MEMBERS);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("packets are tagged by default"), "{err}");
    assert!(o.stdout.is_empty());
    let o = multicast(&["--no-auth"], &MEMBERS);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let f = ClusterFile::parse(&String::from_utf8(o.stdout).unwrap()).unwrap();
    assert!(f.auth.is_none());
    let o = soc_ctl(&["gen-config", "--no-auth"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--no-auth is for multicast files"));
}
