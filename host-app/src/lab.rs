//! Redis-NC on the namespace lab (root): engines in `nic-I`, and in every `host-I` xdp-log on the
//! PCIe veth plus a `redis-nc` (with its own redis-server) reading the pinned decision log.
//! Used by the end-to-end test and by `redis-nc-bench`.

use std::io::{self, Read, Write};
use std::net::{SocketAddrV4, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nc_tools::demo::{Bins, in_netns, start_cluster};
use nc_tools::netlab::{Lab, host_client_addr};
use xdp_log::loader::{AttachOptions, Mode, attach};

use crate::resp::{self, Value};

/// The RESP port of every front.
pub const FRONT_PORT: u16 = 6379;

/// A running Redis-NC cluster on the lab; everything is stopped and removed on drop.
pub struct RedisNcLab {
    /// The lab.
    pub lab: Lab,
    procs: Vec<Child>,
    stop_xdp: Vec<mpsc::Sender<()>>,
    /// Folder for redis-servers and logs.
    pub dir: PathBuf,
}

/// Node i's ZooKeeper (ZooKeeper-NC) address.
pub fn zk_addr(i: u8) -> SocketAddrV4 {
    SocketAddrV4::new(host_client_addr(i), 2181)
}

/// The arguments of `zk-nc node` for node i on the lab (for [`RedisNcLab::start_app`]).
pub fn zk_nc_node_args(i: u8, cfg: &Path, pin: &Path, dir: &Path, no_fsync: bool) -> Vec<String> {
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
    ];
    if no_fsync {
        v.push("--no-fsync".into());
    }
    v
}

/// Node i's front address.
pub fn front(i: u8) -> SocketAddrV4 {
    SocketAddrV4::new(host_client_addr(i), FRONT_PORT)
}

impl RedisNcLab {
    /// Bring up `n` nodes (lab prefix `prefix`, state under `dir`), engines started, xdp-log
    /// attached on every host, redis-nc (binary `redis_nc`) running on every host.
    pub fn start(
        prefix: &str,
        dir: &Path,
        n: u8,
        bins: &Bins,
        redis_nc: &Path,
    ) -> io::Result<RedisNcLab> {
        let me = Self::start_app(prefix, dir, n, bins, redis_nc, &|i, cfg, pin, dir| {
            let mut a: Vec<String> = vec!["--config".into(), cfg.display().to_string()];
            a.extend([
                "--node".into(),
                i.to_string(),
                "--listen".into(),
                front(i).to_string(),
            ]);
            a.extend(["--pin".into(), pin.display().to_string()]);
            a.extend([
                "--dir".into(),
                dir.join(format!("redis-{i}")).display().to_string(),
            ]);
            a
        })?;
        for i in 0..n {
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
        args: &dyn Fn(u8, &Path, &Path, &Path) -> Vec<String>,
    ) -> io::Result<RedisNcLab> {
        let err = |e: nc_tools::netlab::LabError| io::Error::other(e.to_string());
        let mut lab = Lab::new(prefix, Some(dir.join("lab")));
        lab.netns = true;
        let f = lab.up(n).map_err(err)?;
        let mut me = RedisNcLab {
            lab: lab.clone(),
            procs: vec![],
            stop_xdp: vec![],
            dir: dir.to_path_buf(),
        };
        let nodes: Vec<u8> = (0..n).collect();
        start_cluster(&lab, bins, &nodes).map_err(err)?;
        for i in 0..n {
            let pin = PathBuf::from(format!("/sys/fs/bpf/{prefix}-{i}"));
            let opts = AttachOptions {
                iface: "pcie".into(),
                mode: Mode::Skb,
                pin_dir: pin.clone(),
                cluster_id: f.cluster_id as u32,
                port: f.ports.host as u16,
                consume: true,
            };
            let (tx, rx) = mpsc::channel::<()>();
            let (ok_tx, ok_rx) = mpsc::channel();
            in_netns(Some(lab.host(i)), move || match attach(&opts) {
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
            me.stop_xdp.push(tx);
            // nsenter switches only the network namespace, so the bpffs pins stay visible
            // (`ip netns exec` would remount /sys).
            let log = std::fs::File::create(dir.join(format!("app-{i}.log")))?;
            let child = Command::new("nsenter")
                .arg(format!("--net=/run/netns/{}", lab.host(i)))
                .arg(program)
                .args(args(i, &lab.cfg_path(), &pin, dir))
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()?;
            me.procs.push(child);
        }
        Ok(me)
    }

    /// A RESP connection to node i's front, from the clients namespace.
    pub fn connect(&self, i: u8) -> io::Result<RespConn> {
        connect_in(Some(self.lab.clients()), front(i), Duration::from_secs(20))
    }
}

impl Drop for RedisNcLab {
    fn drop(&mut self) {
        // SIGTERM: redis-nc stops its redis-server, then exits.
        for p in &mut self.procs {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
            let _ = p.wait();
        }
        for s in &self.stop_xdp {
            let _ = s.send(());
        }
        std::thread::sleep(Duration::from_millis(100));
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
