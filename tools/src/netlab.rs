//! The testbed of docs/design.md in network namespaces: per node a `nic-I` namespace (the engine, as
//! on the card) and a `host-I` namespace (the host) joined by a veth (the PCIe stand-in); every
//! `nic-I` on two bridges `tree-a` and `tree-b` (the two multicast trees) and on a `clients`
//! bridge; a `clients` namespace. The bridges live in a switch namespace of their own, so the
//! lab never touches the root namespace. Every name carries the prefix (default `ncl`); `down`
//! deletes exactly the namespaces that match the prefix's pattern.
//!
//! Without root the same lab runs on loopback (127.0.0.0/8 unicast fan-out), with no namespaces.

use std::fmt;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use soc_ctl::cluster::{ClusterFile, Transport, Tree};
use soc_ctl::regfile::EngineBus;

/// A failed lab operation (what was run and what it said).
#[derive(Debug)]
pub struct LabError(pub String);

impl fmt::Display for LabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LabError {}

impl From<soc_ctl::cluster::ClusterError> for LabError {
    fn from(e: soc_ctl::cluster::ClusterError) -> Self {
        LabError(e.to_string())
    }
}

impl From<std::io::Error> for LabError {
    fn from(e: std::io::Error) -> Self {
        LabError(e.to_string())
    }
}

/// Δ of a lab whose engines run with real-time priority (SCHED_FIFO, root): the loopback
/// cluster file's ([`ClusterFile::loopback`]).
pub const REALTIME_DELTA_NS: u64 = soc_ctl::cluster::DEFAULT_DELTA_NS;

/// Δ of a lab whose engines cannot get real-time priority (`nc-lab` as an ordinary user). A
/// loaded machine preempts such an engine for milliseconds (late ticks of 7–34 ms were seen),
/// and followers then saw a message's second-tree copy more than 4 ms after its first, which
/// is a safe exit. Measured as the user `nobody` with 3 CPU hogs on 2 cores, Redis-NC lab starts
/// with Δ 4 ms had safe exits in 9 of 14, with Δ 16 ms in 1 of 20. docs/benchmarks.md,
/// thirteenth session.
pub const NO_REALTIME_DELTA_NS: u64 = 16_000_000;

/// [`NO_REALTIME_DELTA_NS`], lowered where the other timing fields need it: the messages in
/// flight within the RSBCAST window must fit the software receiver (window / send gap <
/// `MAX_IN_FLIGHT` - 1) and the timeout must exceed 2Δ + drift. Never below `t`'s own Δ.
pub fn delta_without_realtime(t: &soc_ctl::cluster::Timing) -> u64 {
    let gap = if t.min_gap_ns == 0 {
        t.loop_period_ns
    } else {
        t.min_gap_ns
    };
    let in_flight = (u64::from(proto::regs::MAX_IN_FLIGHT) - 2) * gap;
    // timeout > max(2Δ, loop_period + Δ) + drift.
    let room = t.timeout_ns.saturating_sub(t.drift_ns + 1);
    NO_REALTIME_DELTA_NS
        .min(in_flight.saturating_sub(t.drift_ns))
        .min(room.saturating_sub(1) / 2)
        .min(room.saturating_sub(1 + t.loop_period_ns))
        .max(t.delta_ns)
}

/// Give a lab's timing the early-send gap `gap_ns`, with the Δ that goes with it: the
/// loopback file's, widened by [`delta_without_realtime`] when this process's engines cannot
/// have real-time priority. Every place that changes a lab's gap goes through here, so that a
/// Δ widened for one gap is not kept with a smaller one.
pub fn set_min_gap(t: &mut soc_ctl::cluster::Timing, gap_ns: u64) {
    t.min_gap_ns = gap_ns;
    t.delta_ns = REALTIME_DELTA_NS;
    if soc_ctl::privilege::realtime_missing(50).is_some() {
        t.delta_ns = delta_without_realtime(t);
    }
}

/// Result of lab operations.
pub type Result<T> = std::result::Result<T, LabError>;

/// Serialises building and removing labs: an interrupt handler's `down` waits until a running
/// `up` has finished instead of racing it.
static LAB_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn lab_lock() -> std::sync::MutexGuard<'static, ()> {
    LAB_LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Run a command; its stderr becomes the error. It runs in its own process group, so a Ctrl-C
/// at the terminal reaches nc-lab (which cleans up) and not a half-done `ip` command.
pub fn run(args: &[&str]) -> Result<String> {
    use std::os::unix::process::CommandExt;
    let o = Command::new(args[0])
        .args(&args[1..])
        .process_group(0)
        .output()
        .map_err(|e| LabError(format!("{}: {e}", args.join(" "))))?;
    if !o.status.success() {
        return Err(LabError(format!(
            "`{}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Whether this process is root (namespaces need it).
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Which tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TreeName {
    /// Tree 0.
    A,
    /// Tree 1.
    B,
}

impl TreeName {
    /// Interface name inside `nic-I`.
    pub fn iface(self) -> &'static str {
        match self {
            TreeName::A => "tree-a",
            TreeName::B => "tree-b",
        }
    }
}

/// One lab: its prefix, its state folder and its cluster file.
#[derive(Clone, Debug)]
pub struct Lab {
    /// Name prefix of every namespace.
    pub prefix: String,
    /// State folder: cluster.toml, engine pids, logs and control sockets.
    pub dir: PathBuf,
    /// Namespaces (root) or loopback.
    pub netns: bool,
    /// Extra arguments for every engine this lab starts (e.g. `--log-keep 2000`).
    pub engine_args: Vec<String>,
    /// The early-send gap its cluster file gets (`timing.min_gap_ns`); None: gen-config's.
    pub min_gap_ns: Option<u64>,
}

/// Addresses of node i (netns mode).
fn tree_addr(t: u8, i: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 81, 1 + t, 1 + i)
}

fn client_addr(i: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 81, 3, 1 + i)
}

/// Node i's host on the client network (Redis-NC's front).
pub fn host_client_addr(i: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 81, 3, 101 + i)
}

/// The clients namespace's address.
pub const CLIENTS_ADDR: Ipv4Addr = Ipv4Addr::new(10, 81, 3, 200);

fn pcie_addr(i: u8, host: bool) -> Ipv4Addr {
    Ipv4Addr::new(10, 82, i, if host { 2 } else { 1 })
}

impl Lab {
    /// A lab handle (nothing is created until `up`).
    pub fn new(prefix: &str, dir: Option<PathBuf>) -> Lab {
        let dir = dir.unwrap_or_else(|| {
            std::env::temp_dir().join(format!(
                "nc-lab-{prefix}-{}",
                nix::unistd::geteuid().as_raw()
            ))
        });
        Lab {
            prefix: prefix.to_string(),
            dir,
            netns: is_root(),
            engine_args: Vec::new(),
            min_gap_ns: None,
        }
    }

    /// The same lab on loopback (no namespaces), whoever runs it.
    pub fn clone_loopback(&self) -> Lab {
        Lab {
            netns: false,
            ..self.clone()
        }
    }

    /// Namespace names.
    pub fn sw(&self) -> String {
        format!("{}-sw", self.prefix)
    }
    /// `nic-I`.
    pub fn nic(&self, i: u8) -> String {
        format!("{}-nic-{i}", self.prefix)
    }
    /// `host-I`.
    pub fn host(&self, i: u8) -> String {
        format!("{}-host-{i}", self.prefix)
    }
    /// `clients`.
    pub fn clients(&self) -> String {
        format!("{}-clients", self.prefix)
    }

    /// The lab's cluster file.
    pub fn cfg_path(&self) -> PathBuf {
        self.dir.join("cluster.toml")
    }

    /// Node i's control socket.
    pub fn ctl(&self, i: u8) -> PathBuf {
        self.dir.join(format!("e{i}.sock"))
    }

    /// Node i's engine log.
    pub fn engine_log(&self, i: u8) -> PathBuf {
        self.dir.join(format!("e{i}.log"))
    }

    fn pid_path(&self, i: u8) -> PathBuf {
        self.dir.join(format!("e{i}.pid"))
    }

    /// The cluster file of a lab of `n` nodes.
    pub fn cluster_file(&self, n: u8) -> ClusterFile {
        let mut f = ClusterFile::loopback(n, 2, 0, 7400);
        f.cluster_id = 0x4E43_4C42;
        let gap = self.min_gap_ns.unwrap_or(f.timing.min_gap_ns);
        set_min_gap(&mut f.timing, gap);
        f.trees = vec![
            Tree {
                group: Ipv4Addr::new(239, 81, 0, 1),
            },
            Tree {
                group: Ipv4Addr::new(239, 81, 0, 2),
            },
        ];
        if self.netns {
            f.transport = Transport::Multicast;
            for (i, node) in f.nodes.iter_mut().enumerate() {
                let i = i as u8;
                node.tree_addrs = vec![tree_addr(0, i), tree_addr(1, i)];
                node.tree_ifaces = vec!["tree-a".into(), "tree-b".into()];
                node.client_addr = client_addr(i);
                node.host_addr = pcie_addr(i, true);
            }
        }
        f
    }

    /// What the lab says about its timing when its engines run without real-time priority
    /// (they inherit this process's privileges); None when they have it.
    pub fn timing_note(&self, f: &ClusterFile) -> Option<String> {
        soc_ctl::privilege::realtime_missing(50)?;
        if f.timing.delta_ns <= REALTIME_DELTA_NS {
            return None;
        }
        Some(format!(
            "note: the engines run without real-time priority (not root): Δ is {} ms instead of {} ms, so that an engine preempted between its two tree sends does not force a safe exit; failover still starts after the {} ms timeout",
            f.timing.delta_ns as f64 / 1e6,
            REALTIME_DELTA_NS / 1_000_000,
            f.timing.timeout_ns / 1_000_000
        ))
    }

    /// The lab's current cluster file.
    pub fn load(&self) -> Result<ClusterFile> {
        ClusterFile::load(&self.cfg_path()).map_err(|e| {
            LabError(format!(
                "no lab is up under {} ({e}); run `nc-lab up` first",
                self.dir.display()
            ))
        })
    }

    /// Every namespace of this prefix that exists now.
    pub fn existing_namespaces(&self) -> Vec<String> {
        let list = run(&["ip", "netns", "list"]).unwrap_or_default();
        let p = &self.prefix;
        list.lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| {
                n.strip_prefix(p.as_str()).is_some_and(|rest| {
                    rest == "-sw"
                        || rest == "-clients"
                        || rest
                            .strip_prefix("-nic-")
                            .or_else(|| rest.strip_prefix("-host-"))
                            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                })
            })
            .map(str::to_string)
            .collect()
    }

    /// Build the lab for `n` nodes (idempotent: a lab of the same size is kept as it is).
    pub fn up(&self, n: u8) -> Result<ClusterFile> {
        let _lock = lab_lock();
        std::fs::create_dir_all(&self.dir)?;
        if let Ok(f) = self.load()
            && f.nodes.len() == n as usize
            && (!self.netns || self.existing_namespaces().len() == 2 + 2 * n as usize)
        {
            return Ok(f);
        }
        self.down_locked()?;
        std::fs::create_dir_all(&self.dir)?;
        let f = self.cluster_file(n);
        f.validate().map_err(|e| LabError(e.to_string()))?;
        if self.netns
            && let Err(e) = self.build_namespaces(n)
        {
            let _ = self.down_locked();
            return Err(e);
        }
        std::fs::write(self.cfg_path(), f.to_toml())?;
        Ok(f)
    }

    fn build_namespaces(&self, n: u8) -> Result<()> {
        let sw = self.sw();
        let mut all = vec![sw.clone(), self.clients()];
        for i in 0..n {
            all.push(self.nic(i));
            all.push(self.host(i));
        }
        for ns in &all {
            run(&["ip", "netns", "add", ns])?;
            run(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
        }
        // The switch forwards frames and nothing more: with br_netfilter loaded (Docker loads
        // it), every bridged frame would also run the iptables hooks (`bridge-nf-call-*`, per
        // namespace since Linux 5.3), which no physical switch does; every system the lab
        // measures paid for them on each frame.
        run(&[
            "ip",
            "netns",
            "exec",
            &sw,
            "sh",
            "-c",
            "for f in /proc/sys/net/bridge/bridge-nf-call-*; do [ -e \"$f\" ] && echo 0 > \"$f\"; done; true",
        ])?;
        for br in ["tree-a", "tree-b", "clients"] {
            run(&["ip", "-n", &sw, "link", "add", br, "type", "bridge"])?;
            // A plain flooding tree: no IGMP snooping state to warm up.
            run(&[
                "ip",
                "-n",
                &sw,
                "link",
                "set",
                br,
                "type",
                "bridge",
                "mcast_snooping",
                "0",
            ])?;
            run(&["ip", "-n", &sw, "link", "set", br, "mtu", "9000"])?;
            run(&["ip", "-n", &sw, "link", "set", br, "up"])?;
        }
        let attach = |ns: &str, ifname: &str, port: &str, br: &str, addr: Ipv4Addr, len: u8| {
            run(&[
                "ip", "link", "add", ifname, "netns", ns, "type", "veth", "peer", "name", port,
                "netns", &sw,
            ])?;
            run(&["ip", "-n", &sw, "link", "set", port, "master", br])?;
            // Jumbo frames, like the card's links: a full DECIDE (MTU 9000) is one frame.
            run(&["ip", "-n", &sw, "link", "set", port, "mtu", "9000"])?;
            run(&["ip", "-n", ns, "link", "set", ifname, "mtu", "9000"])?;
            run(&["ip", "-n", &sw, "link", "set", port, "up"])?;
            run(&[
                "ip",
                "-n",
                ns,
                "addr",
                "add",
                &format!("{addr}/{len}"),
                "dev",
                ifname,
            ])?;
            run(&["ip", "-n", ns, "link", "set", ifname, "up"])
        };
        let f = self.cluster_file(n);
        for i in 0..n {
            let nic = self.nic(i);
            attach(
                &nic,
                "tree-a",
                &format!("a{i}"),
                "tree-a",
                tree_addr(0, i),
                24,
            )?;
            attach(
                &nic,
                "tree-b",
                &format!("b{i}"),
                "tree-b",
                tree_addr(1, i),
                24,
            )?;
            attach(
                &nic,
                "clients",
                &format!("c{i}"),
                "clients",
                client_addr(i),
                24,
            )?;
            for (t, ifname) in ["tree-a", "tree-b"].iter().enumerate() {
                let g = format!("{}/32", f.trees[t].group);
                run(&["ip", "-n", &nic, "route", "add", &g, "dev", ifname])?;
            }
            // The host reaches the client network too (Redis-NC's front: stock clients connect
            // to it, and it sends requests to the leader's NIC).
            attach(
                &self.host(i),
                "clients",
                &format!("h{i}"),
                "clients",
                host_client_addr(i),
                24,
            )?;
            // The PCIe stand-in: a veth between nic-I and host-I.
            let host = self.host(i);
            run(&[
                "ip", "link", "add", "pcie", "netns", &nic, "type", "veth", "peer", "name", "pcie",
                "netns", &host,
            ])?;
            for (ns, h) in [(&nic, false), (&host, true)] {
                run(&[
                    "ip",
                    "-n",
                    ns,
                    "addr",
                    "add",
                    &format!("{}/30", pcie_addr(i, h)),
                    "dev",
                    "pcie",
                ])?;
                run(&["ip", "-n", ns, "link", "set", "pcie", "mtu", "9000"])?;
                run(&["ip", "-n", ns, "link", "set", "pcie", "up"])?;
            }
            // The card computes full checksums on the frames it DMAs to the host; a veth would
            // leave them partial (offload), and the XDP program checks the UDP checksum.
            run(&[
                "ip", "netns", "exec", &nic, "ethtool", "-K", "pcie", "tx", "off",
            ])?;
        }
        attach(
            &self.clients(),
            "clients",
            "cc",
            "clients",
            CLIENTS_ADDR,
            24,
        )?;
        Ok(())
    }

    /// Stop every engine of the lab and delete its namespaces and state (idempotent).
    pub fn down(&self) -> Result<()> {
        let _lock = lab_lock();
        self.down_locked()
    }

    /// kill -9 every process the lab started (each one's pid file in the state folder: the
    /// engines and any tagged process); the namespaces and the state stay.
    pub fn kill_all(&self) {
        if let Ok(rd) = std::fs::read_dir(&self.dir) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(stem) = name.strip_suffix(".pid")
                    && let Some(pos) = stem.find(|c: char| c.is_ascii_digit())
                    && let Ok(i) = stem[pos..].parse::<u8>()
                {
                    self.kill_tagged(&stem[..pos], i);
                }
            }
        }
    }

    fn down_locked(&self) -> Result<()> {
        self.kill_all();
        for ns in self.existing_namespaces() {
            run(&["ip", "netns", "del", &ns])?;
        }
        if self.dir.exists() {
            std::fs::remove_dir_all(&self.dir)?;
        }
        Ok(())
    }

    /// The command prefix that runs something in node i's NIC namespace (none on loopback).
    pub fn in_nic(&self, i: u8) -> Vec<String> {
        if self.netns {
            vec!["ip".into(), "netns".into(), "exec".into(), self.nic(i)]
        } else {
            vec![]
        }
    }

    /// Start node i's engine (detached; pid, log and control socket in the state folder).
    pub fn start_engine(&self, i: u8, engine: &Path) -> Result<()> {
        if self.running(i) {
            return Err(LabError(format!("node {i}'s engine is already running")));
        }
        let _ = std::fs::remove_file(self.ctl(i));
        let mut args = vec![
            "--config".to_string(),
            self.cfg_path().display().to_string(),
            "--node".into(),
            i.to_string(),
            "--ctl".into(),
            self.ctl(i).display().to_string(),
            "--verbose".into(),
        ];
        args.extend(self.engine_args.iter().cloned());
        self.spawn_in_nic(i, "e", engine, &args)?;
        let t0 = Instant::now();
        while EngineBus::connect(&self.ctl(i)).is_err() {
            if !self.running(i) {
                let log = std::fs::read_to_string(self.engine_log(i)).unwrap_or_default();
                return Err(LabError(format!("node {i}'s engine exited:\n{log}")));
            }
            if t0.elapsed() > Duration::from_secs(20) {
                return Err(LabError(format!("node {i}'s engine did not come up")));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Start `program ARGS` in node i's NIC namespace, detached, with its pid in
    /// `<tag><i>.pid` and its stderr in `<tag><i>.log` (tag "e" is the engine).
    pub fn spawn_in_nic(&self, i: u8, tag: &str, program: &Path, args: &[String]) -> Result<()> {
        // Spawn and record the pid atomically with respect to `down`, so no process escapes it.
        let _lock = lab_lock();
        if !self.dir.exists() {
            return Err(LabError("the lab is being taken down".into()));
        }
        // Appended: a restarted engine's log follows its earlier incarnations'.
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("{tag}{i}.log")))?;
        let mut argv = self.in_nic(i);
        argv.push(program.display().to_string());
        argv.extend(args.iter().cloned());
        use std::os::unix::process::CommandExt;
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| LabError(format!("{}: {e}", argv[0])))?;
        std::fs::write(
            self.dir.join(format!("{tag}{i}.pid")),
            child.id().to_string(),
        )?;
        // Reap it when it ends, so it never lingers as a zombie of this process.
        std::thread::spawn(move || {
            let mut c = child;
            let _ = c.wait();
        });
        Ok(())
    }

    /// kill -9 the process started with `tag` on node i.
    pub fn kill_tagged(&self, tag: &str, i: u8) {
        let path = self.dir.join(format!("{tag}{i}.pid"));
        if let Some(p) = pid_alive(&path) {
            let pid = nix::unistd::Pid::from_raw(p);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            let t0 = Instant::now();
            // Gone means every thread has exited (a thread-group leader shows as a zombie while
            // its other threads still close their sockets): then its ports are free again.
            while !fully_exited(p) && t0.elapsed() < Duration::from_secs(5) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let _ = std::fs::remove_file(path);
    }

    /// The pid of the process started with `tag` on node i, if it runs.
    pub fn pid_tagged(&self, tag: &str, i: u8) -> Option<i32> {
        pid_alive(&self.dir.join(format!("{tag}{i}.pid")))
    }

    /// The pid of node i's engine, if it runs.
    pub fn pid(&self, i: u8) -> Option<i32> {
        pid_alive(&self.pid_path(i))
    }

    /// Whether node i's engine runs.
    pub fn running(&self, i: u8) -> bool {
        self.pid(i).is_some()
    }

    /// kill -9 node i's engine.
    pub fn kill(&self, i: u8) {
        self.kill_tagged("e", i);
        let _ = std::fs::remove_file(self.ctl(i));
    }

    /// SIGSTOP node i's engine for `ms`, then SIGCONT: a synchrony violation on purpose.
    pub fn stall(&self, i: u8, ms: u64) -> Result<()> {
        let p = self
            .pid(i)
            .ok_or_else(|| LabError(format!("node {i}'s engine is not running")))?;
        let pid = nix::unistd::Pid::from_raw(p);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP)
            .map_err(|e| LabError(format!("SIGSTOP: {e}")))?;
        std::thread::sleep(Duration::from_millis(ms));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT)
            .map_err(|e| LabError(format!("SIGCONT: {e}")))?;
        Ok(())
    }

    fn need_netns(&self, what: &str) -> Result<()> {
        if self.netns {
            Ok(())
        } else {
            Err(LabError(format!(
                "{what} needs the namespace lab (root); on loopback use `soc-ctl drop-tree`"
            )))
        }
    }

    /// Take node i's interface on a tree down or up.
    pub fn link(&self, i: u8, tree: TreeName, up: bool) -> Result<()> {
        self.need_netns("link-down/link-up")?;
        let state = if up { "up" } else { "down" };
        run(&["ip", "-n", &self.nic(i), "link", "set", tree.iface(), state])?;
        Ok(())
    }

    /// Drop `rate` percent of what node i receives on a tree (nftables, netdev ingress);
    /// rate 0 removes the rule.
    pub fn drop_rate(&self, i: u8, tree: TreeName, rate: u8) -> Result<()> {
        let table = format!("nclab_{}", tree.iface().replace('-', "_"));
        let hook = format!("ingress device \"{}\"", tree.iface());
        self.nft_drop(i, "--rate", rate, ("netdev", &table, "drop_in"), &hook, "")
    }

    /// Drop `rate` % of node i's host copies (the DECIDEs its engine sends to its host, before
    /// XDP sees them: nftables on the NIC namespace's output). 0 stops dropping.
    pub fn host_drop_rate(&self, i: u8, rate: u8) -> Result<()> {
        let port = self.load()?.ports.host;
        let matcher = format!("udp dport {port} ");
        let table = ("inet", "nclab_host", "drop_out");
        self.nft_drop(i, "host drop rate", rate, table, "output", &matcher)
    }

    /// Replace the nftables table (family, name, chain) in node i's NIC namespace by one whose
    /// chain, on `hook`, drops `rate` % of the packets `matcher` selects; rate 0 only removes it.
    fn nft_drop(
        &self,
        i: u8,
        what: &str,
        rate: u8,
        (family, table, chain): (&str, &str, &str),
        hook: &str,
        matcher: &str,
    ) -> Result<()> {
        self.need_netns("drop")?;
        if rate > 100 {
            return Err(LabError(format!(
                "{what} {rate}: legal values are 0..=100 (percent)"
            )));
        }
        let ns = self.nic(i);
        let _ = run(&[
            "ip", "netns", "exec", &ns, "nft", "delete", "table", family, table,
        ]);
        if rate == 0 {
            return Ok(());
        }
        let rules = format!(
            "table {family} {table} {{\n chain {chain} {{\n  type filter hook {hook} priority 0; policy accept;\n  {matcher}numgen random mod 100 < {rate} counter drop\n }}\n}}\n"
        );
        let path = self.dir.join(format!("{table}-{i}.nft"));
        std::fs::write(&path, rules)?;
        run(&[
            "ip",
            "netns",
            "exec",
            &ns,
            "nft",
            "-f",
            &path.display().to_string(),
        ])?;
        Ok(())
    }
}

/// Process `p` is gone, or a zombie whose threads have all exited.
fn fully_exited(p: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
        return true;
    };
    let zombie = std::fs::read_to_string(format!("/proc/{p}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit(')')
                .next()
                .map(|r| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(true);
    zombie && tasks.count() <= 1
}

/// The pid in a pid file, if that process is alive (not a zombie).
fn pid_alive(path: &Path) -> Option<i32> {
    let p: i32 = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(p), None).ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
    let state = stat.rsplit(')').next()?.split_whitespace().next()?;
    (state != "Z").then_some(p)
}

/// `pid` and every process below it (children, their children, …), from /proc.
pub fn with_descendants(pid: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            // After "pid (comm) state ppid": comm may hold spaces, so split after its ')'.
            let rest = &stat[stat.rfind(')')? + 1..];
            Some((p, rest.split_whitespace().nth(1)?.parse().ok()?))
        })
        .collect();
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let parent = all[i];
        all.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    all
}

/// CPU time (ns) process `pid` has used so far, all its threads, from the kernel's own
/// accounting. 0 if it is gone. The live threads' `/proc/PID/task/*/schedstat` (nanoseconds),
/// or the process's own `utime + stime` (`/proc/PID/stat`, clock ticks) when that is more:
/// only the process's totals keep what threads that have ended used (a Redis front's thread
/// per connection ended when the benchmark's clients left, and the schedstat sum lost its
/// time: the fronts' CPU per SET was under-counted until the tenth session).
pub fn cpu_ns(pid: i32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    let live: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    live.max(process_cpu_ns(pid).unwrap_or(0))
}

/// `utime + stime` of process `pid` (every thread, ended ones too) in ns.
fn process_cpu_ns(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After "pid (comm)": state is field 3, utime 14, stime 15.
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    let utime: u64 = rest.nth(11)?.parse().ok()?;
    let stime: u64 = rest.next()?.parse().ok()?;
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .filter(|&h| h > 0)
        .unwrap_or(100) as u64;
    Some((utime + stime) * (1_000_000_000 / hz))
}

/// CPU (ns) the processes `pids` have used so far, together.
pub fn cpu_ns_of(pids: &[i32]) -> u64 {
    pids.iter().map(|&p| cpu_ns(p)).sum()
}

/// `ns` of CPU as ms per 1,000 of `n` (requests, SETs).
pub fn ms_per_k(ns: u64, n: u64) -> f64 {
    ns as f64 / 1e6 / (n.max(1) as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wide Δ keeps every lab cluster file legal, whatever early-send gap it has, and is
    /// 16 ms at the default gap.
    #[test]
    fn the_delta_without_realtime_keeps_the_cluster_file_legal() {
        let base = ClusterFile::loopback(3, 2, 0, 7400);
        assert_eq!(base.timing.delta_ns, REALTIME_DELTA_NS);
        assert_eq!(delta_without_realtime(&base.timing), NO_REALTIME_DELTA_NS);
        for gap_us in [0, 1, 2, 5, 10, 15, 16, 17, 20, 50, 300, 1000] {
            let mut f = base.clone();
            f.timing.min_gap_ns = gap_us * 1000;
            if f.validate().is_err() {
                continue; // a gap the lab refuses anyway (nc-lab checks its flags)
            }
            f.timing.delta_ns = delta_without_realtime(&f.timing);
            assert!(f.timing.delta_ns >= REALTIME_DELTA_NS, "gap {gap_us} µs");
            f.validate()
                .unwrap_or_else(|e| panic!("gap {gap_us} µs, Δ {}: {e}", f.timing.delta_ns));
        }
        // A long loop bounds it too (loop_period + Δ + drift < timeout).
        let mut f = base.clone();
        f.timing.loop_period_ns = 40_000_000;
        f.timing.min_gap_ns = 0;
        f.validate().unwrap();
        f.timing.delta_ns = delta_without_realtime(&f.timing);
        f.validate()
            .unwrap_or_else(|e| panic!("loop 40 ms, Δ {}: {e}", f.timing.delta_ns));
        // A short timeout bounds it too (2Δ + drift < timeout).
        let mut f = base.clone();
        f.timing.timeout_ns = 20_000_000;
        f.timing.delta_ns = delta_without_realtime(&f.timing);
        assert!(f.timing.delta_ns < 10_000_000);
        f.validate().unwrap();
    }

    /// A thread that used CPU and ended still counts (the process's totals keep it).
    #[test]
    fn cpu_of_a_process_keeps_threads_that_ended() {
        let me = std::process::id() as i32;
        let before = cpu_ns(me);
        std::thread::spawn(|| {
            // Burn 200 ms of this thread's own CPU time, however loaded the machine is.
            let own = || {
                nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
                    .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
                    .unwrap_or(u64::MAX)
            };
            let start = own();
            let mut x = 0u64;
            while own().saturating_sub(start) < 200_000_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        })
        .join()
        .unwrap();
        let used = cpu_ns(me) - before;
        // The totals are in clock ticks (10 ms): allow two of rounding.
        assert!(
            used >= 180_000_000,
            "counted {used} ns of a 200 ms thread that ended"
        );
    }
}
