//! Redis-NC on the namespace lab (root): engines in `nic-I`, and in every `host-I` xdp-log on the
//! PCIe veth plus a `redis-nc` (with its own redis-server) reading the pinned decision log.
//! Used by the end-to-end test and by `redis-nc-bench`.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::demo::{Bins, in_netns, soc_ctl, start_cluster};
use crate::netlab::{Lab, host_client_addr};
use soc_ctl::cluster::ClusterFile;
use xdp_log::loader::{AttachOptions, Mode, attach, source_toward};

use host_app::auth::{Password, REDIS_ENV, ZK_ENV};
use host_app::resp::{self, Value};

/// xdp-log's members-only settings for node i's host (issue 18): the one source address its
/// host copies come from and the node count. The engine sends them from a socket bound to
/// `0.0.0.0:0` in `nic-I` to its `host_addr`, so the source is what the kernel's route there
/// picks (nic-I's end of the PCIe veth); asked of the kernel in `nic-I`, not assumed.
pub fn xdp_members(lab: &Lab, f: &ClusterFile, i: u8) -> io::Result<(Vec<Ipv4Addr>, u8)> {
    let host = f.nodes[usize::from(i)].host_addr;
    let port = f.ports.host as u16;
    let src = in_netns(Some(lab.nic(i)), move || {
        source_toward(host, port).map_err(|e| format!("{e:#}"))
    })
    .join()
    .map_err(|_| io::Error::other("source lookup thread died"))?
    .map_err(|e| io::Error::other(format!("host copy source of node {i}: {e}")))?;
    Ok((vec![src], f.nodes.len() as u8))
}

/// xdp-log attached to node i's host end of the PCIe veth (`pcie` in `host-I`), consuming the
/// host copies it logs, as a host of the lab's applications runs it; detached on drop.
pub struct HostLog {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HostLog {
    /// Attach on node i's host (its pin folder `/sys/fs/bpf/<prefix>-<i>` must not exist: see
    /// [`HostLog::clear_stale`]).
    pub fn attach(lab: &Lab, i: u8) -> io::Result<HostLog> {
        let f = lab.load().map_err(|e| io::Error::other(e.to_string()))?;
        let (allow_sources, nodes) = xdp_members(lab, &f, i)?;
        let opts = AttachOptions {
            iface: "pcie".into(),
            mode: Mode::Skb,
            pin_dir: pin_dir(&lab.prefix, i),
            cluster_id: f.cluster_id as u32,
            port: f.ports.host as u16,
            consume: true,
            allow_sources,
            nodes,
        };
        let (tx, rx) = mpsc::channel::<()>();
        let (ok_tx, ok_rx) = mpsc::channel();
        let thread = in_netns(Some(lab.host(i)), move || match attach(&opts) {
            Ok(a) => {
                let _ = ok_tx.send(Ok(()));
                let _ = rx.recv();
                let _ = a.detach();
            }
            Err(e) => {
                let _ = ok_tx.send(Err(format!("{e:#}")));
            }
        });
        ok_rx
            .recv()
            .map_err(|_| io::Error::other("attach thread died"))?
            .map_err(|e| io::Error::other(format!("xdp-log on host-{i}: {e}")))?;
        Ok(HostLog {
            stop: Some(tx),
            thread: Some(thread),
        })
    }

    /// Remove node i's pin folder of this lab's prefix if one is left (by a run that was
    /// killed: its namespaces, and with them the attachment, are gone, the pins stay). Only
    /// for a caller that owns the prefix, which a lab's `up` already claims.
    pub fn clear_stale(lab: &Lab, i: u8) {
        let pin = pin_dir(&lab.prefix, i);
        if pin.exists() {
            let _ = xdp_log::loader::detach_pinned(&pin);
        }
    }
}

impl Drop for HostLog {
    /// Detach, and wait until it is done (the next attach on the same host would find it).
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The RESP port of every front.
pub const FRONT_PORT: u16 = 6379;

/// The arguments of the application on node i: (i, cluster file, pin folder, state folder).
pub type AppArgs = dyn Fn(u8, &Path, &Path, &Path) -> Vec<String> + Send + Sync;

/// A running Redis-NC cluster on the lab; everything is stopped and removed on drop.
pub struct RedisNcLab {
    /// The lab.
    pub lab: Lab,
    procs: Vec<(u8, Child)>,
    host_logs: Vec<HostLog>,
    /// Folder for redis-servers and logs.
    pub dir: PathBuf,
    program: PathBuf,
    args: Box<AppArgs>,
    bins: Bins,
}

/// Node i's ZooKeeper (ZooKeeper-NC) address.
/// `--nodes` of the application benches: each cluster size 1..=MAX_NODES, at least one.
pub fn check_node_counts(nodes: &[u8]) -> Result<(), String> {
    if nodes.is_empty()
        || nodes
            .iter()
            .any(|&n| n == 0 || u32::from(n) > proto::regs::MAX_NODES)
    {
        return Err(format!(
            "--nodes: legal values are 1..={}",
            proto::regs::MAX_NODES
        ));
    }
    Ok(())
}

pub fn zk_addr(i: u8) -> SocketAddrV4 {
    SocketAddrV4::new(host_client_addr(i), 2181)
}

/// The arguments of `zk-nc node` for node i of a lab of `n` configured nodes (for
/// [`RedisNcLab::start_app`]): the XDP log, its engine's control socket, its writer front, and
/// the other nodes' fronts as peers.
pub fn zk_nc_node_args(
    i: u8,
    n: u8,
    cfg: &Path,
    pin: &Path,
    dir: &Path,
    no_fsync: bool,
) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "node".into(),
        "--config".into(),
        cfg.display().to_string(),
        "--node".into(),
        i.to_string(),
        "--dir".into(),
        dir.join(format!("zk-{i}")).display().to_string(),
        "--zk".into(),
        zk_addr(i).to_string(),
        "--pin".into(),
        pin.display().to_string(),
        // The lab's engine control sockets live beside its cluster file.
        "--engine-ctl".into(),
        cfg.with_file_name(format!("e{i}.sock"))
            .display()
            .to_string(),
        "--listen".into(),
        zk_front(i).to_string(),
    ];
    for j in (0..n).filter(|&j| j != i) {
        v.extend(["--peer".into(), zk_front(j).to_string()]);
    }
    if no_fsync {
        v.push("--no-fsync".into());
    }
    v
}

/// Node i's ZooKeeper-NC writer front (`zk-nc node --listen`).
pub fn zk_front(i: u8) -> SocketAddrV4 {
    SocketAddrV4::new(host_client_addr(i), 2190)
}

/// Node i's front address.
pub fn front(i: u8) -> SocketAddrV4 {
    SocketAddrV4::new(host_client_addr(i), FRONT_PORT)
}

/// The arguments of `redis-nc` for node i of a lab of `n` configured nodes: the XDP decision
/// log, its engine's control socket, and the other nodes' fronts as peers.
pub fn redis_nc_args(lab: &Lab, n: u8) -> Box<AppArgs> {
    let lab = lab.clone();
    Box::new(move |i, cfg, pin, dir| {
        let fronts: Vec<String> = (0..n).map(|j| front(j).to_string()).collect();
        let mut a = redis_nc_node_args(i, cfg, dir, &lab.ctl(i), &fronts);
        a.extend(["--pin".into(), pin.display().to_string()]);
        a
    })
}

/// The arguments of `redis-nc` for node i whatever the host path: its cluster file, its folder
/// `dir/redis-I`, its front `fronts[i]`, its engine's control socket, and the other fronts as
/// peers.
pub fn redis_nc_node_args(
    i: u8,
    cfg: &Path,
    dir: &Path,
    ctl: &Path,
    fronts: &[String],
) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "--config".into(),
        cfg.display().to_string(),
        "--node".into(),
        i.to_string(),
        "--listen".into(),
        fronts[i as usize].clone(),
        "--dir".into(),
        dir.join(format!("redis-{i}")).display().to_string(),
        "--engine-ctl".into(),
        ctl.display().to_string(),
    ];
    for (j, f) in fronts.iter().enumerate() {
        if j != i as usize {
            a.extend(["--peer".into(), f.clone()]);
        }
    }
    a
}

impl RedisNcLab {
    /// Every process of the cluster: the engines, the apps and what they started (redis-servers).
    pub fn pids(&self) -> Vec<i32> {
        let n = self.procs.len() as u8;
        (0..n)
            .filter_map(|i| self.lab.pid(i))
            .chain(
                self.procs
                    .iter()
                    .flat_map(|(_, c)| crate::netlab::with_descendants(c.id() as i32)),
            )
            .collect()
    }

    /// Bring up `n` nodes (lab prefix `prefix`, state under `dir`), engines started, xdp-log
    /// attached on every host, redis-nc (binary `redis_nc`) running on every host.
    pub fn start(
        prefix: &str,
        dir: &Path,
        n: u8,
        bins: &Bins,
        redis_nc: &Path,
    ) -> io::Result<RedisNcLab> {
        Self::start_some(
            prefix,
            dir,
            n,
            &(0..n).collect::<Vec<_>>(),
            &[],
            bins,
            redis_nc,
        )
    }

    /// [`RedisNcLab::start`] with the early-send gap `min_gap_ns` in the cluster file (None:
    /// gen-config's) and `extra` arguments for every redis-nc (e.g. `--proposals 0`).
    pub fn start_tuned(
        prefix: &str,
        dir: &Path,
        n: u8,
        bins: &Bins,
        redis_nc: &Path,
        min_gap_ns: Option<u64>,
        extra: &[String],
    ) -> io::Result<RedisNcLab> {
        let mut lab = Lab::new(prefix, Some(dir.join("lab")));
        lab.netns = true;
        lab.min_gap_ns = min_gap_ns;
        let base = redis_nc_args(&lab, n);
        let extra = extra.to_vec();
        let args: Box<AppArgs> = Box::new(move |i, cfg, pin, dir| {
            let mut a = base(i, cfg, pin, dir);
            a.extend(extra.iter().cloned());
            a
        });
        let all: Vec<u8> = (0..n).collect();
        let me = Self::start_with(lab, dir, n, &all, bins, redis_nc, args)?;
        for i in 0..n {
            me.connect(i)?;
        }
        Ok(me)
    }

    /// A lab configured for `n` nodes of which only `started` run (the others can join later,
    /// [`RedisNcLab::add`]), with redis-nc on every started host.
    /// `engine_args` go to every engine (e.g. `--log-keep 1000`).
    pub fn start_some(
        prefix: &str,
        dir: &Path,
        n: u8,
        started: &[u8],
        engine_args: &[&str],
        bins: &Bins,
        redis_nc: &Path,
    ) -> io::Result<RedisNcLab> {
        let mut lab = Lab::new(prefix, Some(dir.join("lab")));
        lab.netns = true;
        lab.engine_args = engine_args.iter().map(|a| a.to_string()).collect();
        let args = redis_nc_args(&lab, n);
        let me = Self::start_with(lab, dir, n, started, bins, redis_nc, args)?;
        for &i in started {
            me.connect(i)?;
        }
        Ok(me)
    }

    /// Bring up `n` nodes with `program ARGS(i, cluster file, pin folder, dir)` on every host
    /// (in the host's network namespace), after the engines and xdp-log.
    pub fn start_app(
        prefix: &str,
        dir: &Path,
        n: u8,
        bins: &Bins,
        program: &Path,
        args: &(dyn Fn(u8, &Path, &Path, &Path) -> Vec<String> + Sync),
    ) -> io::Result<RedisNcLab> {
        let mut lab = Lab::new(prefix, Some(dir.join("lab")));
        lab.netns = true;
        let all: Vec<u8> = (0..n).collect();
        let fixed: Vec<Vec<String>> = all
            .iter()
            .map(|&i| args(i, &lab.cfg_path(), &pin_dir(prefix, i), dir))
            .collect();
        let args: Box<AppArgs> = Box::new(move |i, _, _, _| fixed[i as usize].clone());
        Self::start_with(lab, dir, n, &all, bins, program, args)
    }

    /// A lab configured for `n` nodes of which `started` run `program ARGS(i, …)` (the others
    /// can join later, [`RedisNcLab::add`]); `engine_args` go to every engine.
    #[allow(clippy::too_many_arguments)]
    pub fn start_app_some(
        prefix: &str,
        dir: &Path,
        n: u8,
        started: &[u8],
        engine_args: &[&str],
        bins: &Bins,
        program: &Path,
        args: Box<AppArgs>,
    ) -> io::Result<RedisNcLab> {
        let mut lab = Lab::new(prefix, Some(dir.join("lab")));
        lab.netns = true;
        lab.engine_args = engine_args.iter().map(|a| a.to_string()).collect();
        Self::start_with(lab, dir, n, started, bins, program, args)
    }

    fn start_with(
        lab: Lab,
        dir: &Path,
        n: u8,
        started: &[u8],
        bins: &Bins,
        program: &Path,
        args: Box<AppArgs>,
    ) -> io::Result<RedisNcLab> {
        let err = |e: crate::netlab::LabError| io::Error::other(e.to_string());
        lab.up(n).map_err(err)?;
        let mut me = RedisNcLab {
            lab: lab.clone(),
            procs: vec![],
            host_logs: vec![],
            dir: dir.to_path_buf(),
            program: program.to_path_buf(),
            args,
            bins: bins.clone(),
        };
        start_cluster(&lab, bins, started).map_err(err)?;
        for &i in started {
            me.attach_xdp(i)?;
            me.start_node_app(i)?;
        }
        Ok(me)
    }

    fn attach_xdp(&mut self, i: u8) -> io::Result<()> {
        self.host_logs.push(HostLog::attach(&self.lab, i)?);
        Ok(())
    }

    /// Start the application on node i (in its host's namespace), its stderr appended to
    /// `app-I.log`.
    pub fn start_node_app(&mut self, i: u8) -> io::Result<()> {
        self.start_node_app_with(i, &[])
    }

    /// The last `n` lines of node i's application log and of its engine's, for a failure
    /// message.
    pub fn log_tails(&self, i: u8, n: usize) -> String {
        let tail = |p: PathBuf| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| format!("({e})"));
            let lines: Vec<&str> = text.lines().collect();
            let from = lines.len().saturating_sub(n);
            format!(
                "--- {} (last {n} lines)\n{}",
                p.display(),
                lines[from..].join("\n")
            )
        };
        format!(
            "{}\n{}",
            tail(self.dir.join(format!("app-{i}.log"))),
            tail(self.lab.engine_log(i))
        )
    }

    /// [`RedisNcLab::start_node_app`] with `extra` arguments after the usual ones. The
    /// application does not inherit this process's front password variables (`REDIS_NC_PASSWORD`,
    /// `ZK_NC_PASSWORD`): the lab's fronts run without a password unless `extra` gives one
    /// (`--requirepass-file`, `--password-file`), so the lab's own clients know what to send.
    pub fn start_node_app_with(&mut self, i: u8, extra: &[String]) -> io::Result<()> {
        // nsenter switches only the network namespace, so the bpffs pins stay visible
        // (`ip netns exec` would remount /sys).
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("app-{i}.log")))?;
        let pin = pin_dir(&self.lab.prefix, i);
        let child = Command::new("nsenter")
            .arg(format!("--net=/run/netns/{}", self.lab.host(i)))
            .arg(&self.program)
            .args((self.args)(i, &self.lab.cfg_path(), &pin, &self.dir))
            .args(extra)
            .env_remove(REDIS_ENV)
            .env_remove(ZK_ENV)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()?;
        self.procs.push((i, child));
        Ok(())
    }

    /// SIGKILL the application on node i (its redis-server dies with it).
    pub fn kill_app(&mut self, i: u8) {
        for (_, c) in self.procs.iter_mut().filter(|(j, _)| *j == i) {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.procs.retain(|(j, _)| *j != i);
    }

    /// Bring node i (configured, not running) into the cluster: its engine starts and joins
    /// through `member`, xdp-log attaches on its host, and its application starts.
    pub fn add(&mut self, i: u8, member: u8) -> io::Result<()> {
        let err = |e: crate::netlab::LabError| io::Error::other(e.to_string());
        self.restart_engine(i, member).map_err(err)?;
        self.attach_xdp(i)?;
        self.start_node_app(i)
    }

    /// Bring node i in with one command of the application: its engine is started (not
    /// configured), xdp-log attaches, and the application runs with `--join MEMBER`, which
    /// configures and joins the engine and then catches its replica up.
    pub fn add_by_app(&mut self, i: u8, member: u8) -> io::Result<()> {
        self.lab
            .start_engine(i, &self.bins.engine)
            .map_err(|e| io::Error::other(e.to_string()))?;
        self.attach_xdp(i)?;
        self.start_node_app_with(i, &["--join".into(), member.to_string()])
    }

    /// Start node i's engine again (after a kill) and join it through `member`.
    pub fn restart_engine(&self, i: u8, member: u8) -> crate::netlab::Result<()> {
        self.lab.start_engine(i, &self.bins.engine)?;
        let cfg = self.lab.cfg_path().display().to_string();
        soc_ctl(
            &self.lab,
            &self.bins,
            i,
            &["--node", &i.to_string(), "init", "--config", &cfg],
        )?;
        soc_ctl(
            &self.lab,
            &self.bins,
            i,
            &["join", "--member", &member.to_string()],
        )
        .map(drop)
    }

    /// A RESP connection to node i's front, from the clients namespace.
    pub fn connect(&self, i: u8) -> io::Result<RespConn> {
        connect_in(Some(self.lab.clients()), front(i), Duration::from_secs(20))
    }
}

fn pin_dir(prefix: &str, i: u8) -> PathBuf {
    PathBuf::from(format!("/sys/fs/bpf/{prefix}-{i}"))
}

impl RedisNcLab {
    /// Stop the cluster and keep the lab: every application (SIGTERM: redis-nc stops its
    /// redis-server, then exits), the XDP logs and the lab's processes (the engines). A bench that measures
    /// baselines on the same namespaces calls it first, so the idle cluster's heartbeats and
    /// pollers do not take CPU from the baselines.
    pub fn stop_cluster(&mut self) {
        for (_, p) in &mut self.procs {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
            let _ = p.wait();
        }
        self.procs.clear();
        self.host_logs.clear();
        self.lab.kill_all();
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Drop for RedisNcLab {
    fn drop(&mut self) {
        self.stop_cluster();
        let _ = self.lab.down();
    }
}

/// Connect to `addr` from inside namespace `ns`, retrying until `limit`.
pub fn connect_in(ns: Option<String>, addr: SocketAddrV4, limit: Duration) -> io::Result<RespConn> {
    in_netns(ns, move || {
        let t0 = Instant::now();
        loop {
            match TcpStream::connect(addr) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    return Ok(RespConn { s, buf: Vec::new() });
                }
                Err(e) if t0.elapsed() > limit => {
                    return Err(io::Error::new(e.kind(), format!("{addr}: {e}")));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    })
    .join()
    .map_err(|_| io::Error::other("connect thread panicked"))?
}

/// A RESP client connection (what a stock client does: one command, one reply).
pub struct RespConn {
    s: TcpStream,
    buf: Vec<u8>,
}

impl RespConn {
    /// `AUTH password` (a front with a password answers every other command `-NOAUTH` until
    /// then); an error unless the front answered `+OK`.
    pub fn auth(&mut self, password: &Password) -> io::Result<()> {
        match self.call(&[b"AUTH", password.as_bytes()])? {
            Value::Simple(s) if s == "OK" => Ok(()),
            Value::Error(e) => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("AUTH: {e}"),
            )),
            other => Err(io::Error::other(format!("AUTH answered {other:?}"))),
        }
    }

    /// Send a command, read its reply.
    pub fn call(&mut self, args: &[&[u8]]) -> io::Result<Value> {
        self.s.write_all(&Value::command(args).to_bytes())?;
        let mut chunk = [0u8; 4096];
        loop {
            if let Some((v, used)) = resp::parse(&self.buf).map_err(io::Error::other)? {
                self.buf.drain(..used);
                return Ok(v);
            }
            let n = self.s.read(&mut chunk)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// The programs a host-application test runs.
#[derive(Clone, Debug)]
pub struct AppBins {
    /// nc-engine and soc-ctl.
    pub bins: Bins,
    /// redis-nc.
    pub redis_nc: PathBuf,
    /// zk-nc.
    pub zk_nc: PathBuf,
}

/// For tests: build soc-ctl's and host-app's binaries with `cargo` (the product binaries, which
/// this crate's tests drive but do not link) into the target folder `dir`.
pub fn built_for_tests(cargo: &str, dir: &Path) -> AppBins {
    let ok = Command::new(cargo)
        .args(["build", "-q", "-p", "host-app", "--bins"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "building host-app's binaries failed");
    AppBins {
        bins: Bins::built_for_tests(cargo, dir),
        redis_nc: dir.join("redis-nc"),
        zk_nc: dir.join("zk-nc"),
    }
}

/// The password of Redis-NC fronts as `redis-nc` itself takes it: the first line of
/// `requirepass_file` when given, else `REDIS_NC_PASSWORD`, else none.
pub fn redis_password(requirepass_file: Option<&Path>) -> crate::netlab::Result<Option<Password>> {
    host_app::auth::load(requirepass_file, REDIS_ENV).map_err(crate::netlab::LabError)
}

/// `nc-lab redis up`: a Redis-NC cluster of `n` nodes on loopback (engines, and a `redis-nc` with
/// its own redis-server per node, fronts on 127.0.0.1:`port_base`+i), left running; `down`
/// stops it. The `redis-cli` lines to use. With `requirepass_file` (or `REDIS_NC_PASSWORD` in
/// this process's environment, which the fronts inherit) the fronts require AUTH with that
/// password; the file's path, never the password, goes on their command lines.
pub fn redis_up(
    lab: &Lab,
    bins: &Bins,
    redis_nc: &Path,
    n: u8,
    port_base: u16,
    requirepass_file: Option<&Path>,
) -> crate::netlab::Result<Vec<String>> {
    use crate::netlab::LabError;
    let password = redis_password(requirepass_file)?;
    if lab.netns {
        return Err(LabError(
            "redis_up runs on loopback (Lab::clone_loopback); the namespace lab with XDP is \
             what tools/tests/redis_nc_e2e.rs drives"
                .into(),
        ));
    }
    if !redis_nc.exists() {
        return Err(LabError(format!(
            "{} missing: cargo build --release -p host-app (it is found next to nc-lab)",
            redis_nc.display()
        )));
    }
    if port_base.checked_add(n as u16).is_none() {
        return Err(LabError(format!(
            "--port-base {port_base}: legal values are 1..={}",
            u16::MAX - n as u16
        )));
    }
    // redis-nc runs in the lab's folder's terms: an absolute path.
    let pass_args: Vec<String> = match requirepass_file {
        Some(f) => vec![
            "--requirepass-file".into(),
            std::path::absolute(f)?.display().to_string(),
        ],
        None => vec![],
    };
    lab.up(n)?;
    let nodes: Vec<u8> = (0..n).collect();
    start_cluster(lab, bins, &nodes)?;
    let front = |i: u8| format!("127.0.0.1:{}", port_base + i as u16);
    let fronts: Vec<String> = (0..n).map(front).collect();
    for i in 0..n {
        let mut args = redis_nc_node_args(i, &lab.cfg_path(), &lab.dir, &lab.ctl(i), &fronts);
        args.extend(pass_args.iter().cloned());
        lab.spawn_in_nic(i, "r", redis_nc, &args)?;
    }
    for i in 0..n {
        let a: SocketAddrV4 = front(i).parse().expect("an address");
        let mut c = connect_in(None, a, Duration::from_secs(20))
            .map_err(|e| LabError(format!("node {i}'s front {a}: {e}")))?;
        if let Some(p) = &password {
            c.auth(p)
                .map_err(|e| LabError(format!("node {i}'s front {a}: {e}")))?;
        }
        match c.call(&[b"PING"]) {
            Ok(Value::Simple(s)) if s == "PONG" => {}
            other => {
                return Err(LabError(format!(
                    "node {i}'s front {a} answered {other:?} (log: {})",
                    lab.dir.join(format!("r{i}.log")).display()
                )));
            }
        }
    }
    Ok((0..n)
        .map(|i| format!("redis-cli -p {}", port_base + i as u16))
        .collect())
}

/// One node's answer to `nc-lab redis status` / `nc-lab zk status`.
#[derive(Clone, Debug)]
pub struct NodeStatus {
    /// The line `status` prints for it.
    pub text: String,
    /// `{"node", "addr", "info": {...}}`, or `{"node", "addr", "error": "..."}` when it did not
    /// answer with its figures.
    pub json: serde_json::Value,
}

impl NodeStatus {
    fn new(
        node: u8,
        addr: impl std::fmt::Display,
        answer: Result<(String, serde_json::Value), String>,
    ) -> Self {
        let (text, json) = match answer {
            Ok((text, info)) => (
                text,
                serde_json::json!({"node": node, "addr": addr.to_string(), "info": info}),
            ),
            Err(e) => (
                e.clone(),
                serde_json::json!({"node": node, "addr": addr.to_string(), "error": e}),
            ),
        };
        NodeStatus {
            text: format!("node {node} ({addr}): {text}"),
            json,
        }
    }
}

/// A number if `v` is one, else the string.
fn json_scalar(v: &str) -> serde_json::Value {
    if let Ok(i) = v.parse::<i64>() {
        return i.into();
    }
    match v.parse::<f64>() {
        Ok(f) if f.is_finite() => f.into(),
        _ => v.into(),
    }
}

/// `nc-lab redis status`: every front's `INFO nanoconsensus` (after AUTH with `password` when
/// given), one per node.
pub fn redis_status(
    lab: &Lab,
    port_base: u16,
    password: Option<&Password>,
) -> crate::netlab::Result<Vec<NodeStatus>> {
    let n = lab.load()?.nodes.len() as u8;
    Ok((0..n)
        .map(|i| {
            let a = SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, port_base + i as u16);
            let info = connect_in(None, a, Duration::from_millis(500)).and_then(|mut c| {
                if let Some(p) = password {
                    c.auth(p)?;
                }
                c.call(&[b"INFO", b"nanoconsensus"])
            });
            let answer = match info {
                Ok(Value::Bulk(Some(b))) => {
                    let text = String::from_utf8_lossy(&b).into_owned();
                    let fields: Vec<&str> = text
                        .lines()
                        .filter(|l| !l.starts_with('#') && !l.is_empty())
                        .collect();
                    let json: serde_json::Map<String, serde_json::Value> = fields
                        .iter()
                        .filter_map(|l| l.split_once(':'))
                        .map(|(k, v)| (k.to_string(), json_scalar(v.trim())))
                        .collect();
                    Ok((fields.join(" "), json.into()))
                }
                Ok(Value::Error(e)) if e.starts_with("NOAUTH") => {
                    Err(format!("{e} (give --requirepass-file or set {REDIS_ENV})"))
                }
                Ok(other) => Err(format!("{other:?}")),
                Err(e) => Err(format!("not answering ({e})")),
            };
            NodeStatus::new(i, a, answer)
        })
        .collect())
}

/// Debian's ZooKeeper command-line client, beside the server launcher `zk-nc` starts.
pub fn zk_cli() -> PathBuf {
    Path::new(host_app::zk::ZK_SERVER).with_file_name("zkCli.sh")
}

/// The ZooKeeper-NC writer fronts' password as `zk-nc` itself takes it without a file:
/// `ZK_NC_PASSWORD`, else none.
pub fn zk_password() -> crate::netlab::Result<Option<Password>> {
    host_app::auth::load(None, ZK_ENV).map_err(crate::netlab::LabError)
}

/// `nc-lab zk up`: a ZooKeeper-NC cluster of `n` nodes on loopback (engines, and per node a
/// `zk-nc node` with its own standalone ZooKeeper on 127.0.0.1:`zk_port_base`+i and its writer
/// front on 127.0.0.1:`front_port_base`+i), left running until every front serves a
/// linearizable read; `down` stops it. Returns the lines to use: writes through a front with
/// `zk-nc write`, reads with `zkCli.sh` straight at a node's ZooKeeper (which refuses writes:
/// only the apply loop writes a replica) or through a front.
pub fn zk_up(
    lab: &Lab,
    bins: &Bins,
    zk_nc: &Path,
    n: u8,
    zk_port_base: u16,
    front_port_base: u16,
) -> crate::netlab::Result<Vec<String>> {
    use crate::netlab::LabError;
    let password = zk_password()?;
    if lab.netns {
        return Err(LabError(
            "zk_up runs on loopback (Lab::clone_loopback); the namespace lab with XDP is what \
             tools/tests/zk_nc_e2e.rs drives"
                .into(),
        ));
    }
    if !zk_nc.exists() {
        return Err(LabError(format!(
            "{} missing: cargo build --release -p host-app (it is found next to nc-lab)",
            zk_nc.display()
        )));
    }
    if !Path::new(host_app::zk::ZK_SERVER).exists() {
        return Err(LabError(format!(
            "{} missing: tools/setup.sh installs Debian's zookeeper",
            host_app::zk::ZK_SERVER
        )));
    }
    for base in [zk_port_base, front_port_base] {
        if base.checked_add(n as u16).is_none() {
            return Err(LabError(format!(
                "port base {base}: legal values are 1..={}",
                u16::MAX - n as u16
            )));
        }
    }
    let at = |base: u16, i: u8| SocketAddrV4::new(Ipv4Addr::LOCALHOST, base + i as u16);
    lab.up(n)?;
    let nodes: Vec<u8> = (0..n).collect();
    start_cluster(lab, bins, &nodes)?;
    let cfg = lab.cfg_path().display().to_string();
    for i in 0..n {
        let mut args: Vec<String> = vec![
            "node".into(),
            "--config".into(),
            cfg.clone(),
            "--node".into(),
            i.to_string(),
            "--dir".into(),
            lab.dir.join(format!("zk-{i}")).display().to_string(),
            "--zk".into(),
            at(zk_port_base, i).to_string(),
            "--engine-ctl".into(),
            lab.ctl(i).display().to_string(),
            "--listen".into(),
            at(front_port_base, i).to_string(),
            // The decision log, not the local disk, is what survives a crash.
            "--no-fsync".into(),
        ];
        for j in (0..n).filter(|&j| j != i) {
            args.extend(["--peer".into(), at(front_port_base, j).to_string()]);
        }
        lab.spawn_in_nic(i, "z", zk_nc, &args)?;
    }
    // A linearizable read through every front: its ZooKeeper runs, its apply loop is
    // guarding it and applying, its engine decides. The JVMs take a while to start.
    for i in 0..n {
        let front = std::net::SocketAddr::V4(at(front_port_base, i));
        let t0 = Instant::now();
        loop {
            let r = host_app::zk_front::connect_auth(front, password.as_ref()).and_then(|mut f| {
                host_app::zk_front::call(&mut f, &serde_json::json!({"op": "get", "path": "/"}))
            });
            match r {
                Ok(_) => break,
                Err(e) if t0.elapsed() > Duration::from_secs(180) => {
                    return Err(LabError(format!(
                        "node {i}'s writer front {front} does not serve reads ({e}); log: {}",
                        lab.dir.join(format!("z{i}.log")).display()
                    )));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }
    let cli = zk_cli();
    let mut lines = vec![format!(
        "write through any writer front: zk-nc -c {cfg} write --front {} create /greeting hello",
        at(front_port_base, 0)
    )];
    if cli.exists() {
        lines.push(format!(
            "read at any node's ZooKeeper:   {} -server {} get /greeting",
            cli.display(),
            at(zk_port_base, n.saturating_sub(1))
        ));
    }
    lines.push(format!(
        "linearizable read (a front):    zk-nc -c {cfg} write --front {} get /greeting",
        at(front_port_base, n.saturating_sub(1))
    ));
    lines.push(format!(
        "ZooKeepers on {}, writer fronts on {}; a write straight at a ZooKeeper fails with \
         NoAuth (only the apply loop writes a replica)",
        (0..n)
            .map(|i| at(zk_port_base, i).to_string())
            .collect::<Vec<_>>()
            .join(" "),
        (0..n)
            .map(|i| at(front_port_base, i).to_string())
            .collect::<Vec<_>>()
            .join(" ")
    ));
    Ok(lines)
}

/// `nc-lab zk status`: every writer front's `{"op":"info"}`, one per node.
pub fn zk_status(lab: &Lab, front_port_base: u16) -> crate::netlab::Result<Vec<NodeStatus>> {
    let password = zk_password()?;
    let n = lab.load()?.nodes.len() as u8;
    Ok((0..n)
        .map(|i| {
            let a = std::net::SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::LOCALHOST,
                front_port_base + i as u16,
            ));
            let answer =
                match host_app::zk_front::connect_auth(a, password.as_ref()).and_then(|mut f| {
                    host_app::zk_front::call(&mut f, &serde_json::json!({"op": "info"}))
                }) {
                    Ok(v) => Ok((v.to_string(), v)),
                    Err(e) => Err(format!("not answering ({e})")),
                };
            NodeStatus::new(i, a, answer)
        })
        .collect())
}

/// A bench run's scratch folder (`$TMPDIR/NAME-PID`) and namespace prefix, cleaned when the
/// run is interrupted (Ctrl-C, SIGTERM, SIGHUP) and, for runs that died without cleaning (kill
/// -9), when the next run of the same bench starts: their engines and applications keep running
/// in namespaces nobody can reach and their XDP pins make the next attach fail.
#[derive(Clone)]
pub struct BenchScratch {
    name: &'static str,
    prefix: &'static str,
    /// This run's folder.
    pub dir: PathBuf,
    /// `$TMPDIR/NAME.lock`, locked for as long as this process lives (the kernel lets go of
    /// it when the process ends, however it ends): two runs starting at once cannot both
    /// miss each other's folder.
    _lock: std::sync::Arc<std::fs::File>,
}

impl BenchScratch {
    /// Clean what earlier runs of bench `name` (namespace prefix `prefix`) left behind (saying
    /// so on stderr), create this run's folder, and clean it all up and exit 130 when
    /// interrupted.
    pub fn new(name: &'static str, prefix: &'static str) -> Result<BenchScratch, String> {
        let lock_path = std::env::temp_dir().join(format!("{name}.lock"));
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| format!("{}: {e}", lock_path.display()))?;
        let me = BenchScratch {
            name,
            prefix,
            dir: std::env::temp_dir().join(format!("{name}-{}", std::process::id())),
            _lock: std::sync::Arc::new(lock),
        };
        // Two runs would share the namespaces and XDP pins of `prefix` and break each other.
        match me._lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let who = me
                    .other_live_run()
                    .map_or(String::new(), |pid| format!(" (pid {pid})"));
                return Err(format!(
                    "another {name} run{who} is using the lab's namespaces ({prefix}-*) and holds {}; wait for it to end or stop it",
                    lock_path.display()
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(format!("{}: lock: {e}", lock_path.display()));
            }
        }
        let stale = me.clean(false);
        if stale > 0 {
            eprintln!(
                "{name}: cleaned up after an earlier run that did not finish ({stale} processes stopped, its namespaces and XDP pins removed)"
            );
        }
        std::fs::create_dir_all(&me.dir).map_err(|e| format!("{}: {e}", me.dir.display()))?;
        let s = me.clone();
        ctrlc::set_handler(move || {
            eprintln!("\n{name}: interrupted; cleaning up");
            s.clean(true);
            std::process::exit(130);
        })
        .map_err(|e| format!("Ctrl-C handler: {e}"))?;
        Ok(me)
    }

    /// The pid of another live run of this bench (its folder exists and its process runs
    /// this bench's program), if any.
    fn other_live_run(&self) -> Option<u32> {
        let mine = std::process::id();
        std::fs::read_dir(std::env::temp_dir())
            .ok()?
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_string_lossy()
                    .strip_prefix(&format!("{}-", self.name))
                    .and_then(|p| p.parse::<u32>().ok())
            })
            .find(|&pid| pid != mine && self.runs(pid))
    }

    /// Whether process `pid` runs this bench (a pid reused by another program does not).
    fn runs(&self, pid: u32) -> bool {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
            String::from_utf8_lossy(&c)
                .split('\0')
                .next()
                .is_some_and(|argv0| argv0.ends_with(self.name))
        })
    }

    /// Stop the processes of dead runs' folders (and of this run's too if `own`), this run's
    /// children if `own`, delete the prefix's namespaces and XDP pins and the dead runs'
    /// folders; returns how many processes were stopped.
    fn clean(&self, own: bool) -> usize {
        let tmp = std::env::temp_dir();
        let mine = std::process::id();
        let stem = format!("{}/{}-", tmp.display(), self.name);
        let mut dead_runs = vec![];
        if let Ok(rd) = std::fs::read_dir(&tmp) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(pid) = name
                    .strip_prefix(&format!("{}-", self.name))
                    .and_then(|p| p.parse::<u32>().ok())
                else {
                    continue;
                };
                let alive = pid != mine && self.runs(pid);
                if (pid == mine && own) || (pid != mine && !alive) {
                    dead_runs.push(format!("{stem}{pid}/"));
                }
            }
        }
        if dead_runs.is_empty() && !own {
            return 0;
        }
        let mut stopped = 0;
        if let Ok(rd) = std::fs::read_dir("/proc") {
            for e in rd.flatten() {
                let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<i32>().ok()) else {
                    continue;
                };
                if pid as u32 == mine {
                    continue;
                }
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
                let child = own
                    && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                        .ok()
                        .and_then(|s| {
                            let after = s.rsplit_once(')')?.1.to_owned();
                            after.split_whitespace().nth(1)?.parse::<u32>().ok()
                        })
                        == Some(mine);
                if child || dead_runs.iter().any(|d| cmd.contains(d.as_str())) {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                    stopped += 1;
                }
            }
        }
        // The lab's own teardown deletes the prefix's namespaces (a state folder that does not
        // exist: the processes were stopped above).
        let _ = Lab::new(self.prefix, Some(self.dir.join("no-lab"))).down();
        if let Ok(rd) = std::fs::read_dir("/sys/fs/bpf") {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name
                    .strip_prefix(&format!("{}-", self.prefix))
                    .is_some_and(|i| i.parse::<u8>().is_ok())
                {
                    let _ = xdp_log::loader::detach_pinned(&e.path());
                }
            }
        }
        for d in dead_runs {
            let _ = std::fs::remove_dir_all(d.trim_end_matches('/'));
        }
        stopped
    }
}

#[cfg(test)]
mod tests {
    use super::BenchScratch;

    #[test]
    fn a_second_bench_run_is_refused_while_the_first_holds_the_lock() {
        let first = BenchScratch::new("nc-unit-bench", "ncub").expect("the first run");
        let e = BenchScratch::new("nc-unit-bench", "ncub")
            .err()
            .expect("a second run is refused");
        assert!(
            e.contains("another nc-unit-bench run") && e.contains("nc-unit-bench.lock"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&first.dir);
    }
}
