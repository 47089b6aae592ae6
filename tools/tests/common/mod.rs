//! Clients and checks shared by the Redis-NC end-to-end tests: stock-protocol RESP clients that
//! reconnect when their front goes away, the history they record, and INFO fields.
#![allow(dead_code)]

use std::net::{SocketAddr, SocketAddrV4, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use host_app::lincheck::{Event, Op};
use host_app::resp::Value;
use nc_tools::app_lab::{self, RespConn, connect_in};
use nc_tools::demo::wait_for;
use nc_tools::netlab::Lab;

/// Where a client runs and what it records.
#[derive(Clone)]
pub struct Load {
    /// Network namespace of the clients (None: this one).
    pub ns: Option<String>,
    pub stop: Arc<AtomicBool>,
    pub t0: Instant,
    pub history: Arc<Mutex<Vec<Event>>>,
    pub incrs: Arc<Mutex<Vec<i64>>>,
    pub acked: Arc<Mutex<Vec<String>>>,
    pub ops: Arc<AtomicU64>,
}

impl Load {
    pub fn new(ns: Option<String>) -> Load {
        Load {
            ns,
            stop: Arc::new(AtomicBool::new(false)),
            t0: Instant::now(),
            history: Arc::default(),
            incrs: Arc::default(),
            acked: Arc::default(),
            ops: Arc::default(),
        }
    }

    fn now(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn connect(&self, a: SocketAddrV4, limit: Duration) -> Option<RespConn> {
        connect_in(self.ns.clone(), a, limit).ok()
    }

    /// A client that keeps calling `step` on a connection to `a`, making a new one when the
    /// front goes away (killed, restarted).
    fn client(
        &self,
        a: SocketAddrV4,
        mut step: impl FnMut(&Load, &mut RespConn) -> std::io::Result<()> + Send + 'static,
    ) -> JoinHandle<()> {
        let me = self.clone();
        std::thread::spawn(move || {
            let mut r = me.connect(a, Duration::from_secs(20));
            while !me.stop.load(Ordering::Relaxed) {
                let Some(c) = r.as_mut() else {
                    std::thread::sleep(Duration::from_millis(50));
                    r = me.connect(a, Duration::from_secs(1));
                    continue;
                };
                if step(&me, c).is_err() {
                    r = None;
                }
                me.ops.fetch_add(1, Ordering::Relaxed);
            }
        })
    }

    /// SET/GET on three keys shared by every register client (`c` tells their values apart).
    pub fn registers(&self, a: SocketAddrV4, c: u64) -> JoinHandle<()> {
        let mut k = 0u64;
        self.client(a, move |me, r| {
            k += 1;
            let key = format!("k{}", (k * 7 + c) % 3);
            let invoke = me.now();
            if k.is_multiple_of(2) {
                let v = format!("c{c}-{k}");
                let res = r.call(&[b"SET", key.as_bytes(), v.as_bytes()]);
                let ok = matches!(res, Ok(Value::Simple(ref s)) if s == "OK");
                // A SET without OK (an error, a lost connection) may or may not have happened.
                me.history.lock().unwrap().push(Event {
                    key: key.into_bytes(),
                    op: Op::Set(v.into_bytes()),
                    read: None,
                    invoke,
                    ret: ok.then(|| me.now()),
                });
                if !ok {
                    std::thread::sleep(Duration::from_millis(20));
                }
                res.map(drop)
            } else {
                let res = r.call(&[b"GET", key.as_bytes()]);
                match &res {
                    Ok(Value::Bulk(b)) => me.history.lock().unwrap().push(Event {
                        key: key.into_bytes(),
                        op: Op::Get,
                        read: b.clone(),
                        invoke,
                        ret: Some(me.now()),
                    }),
                    _ => std::thread::sleep(Duration::from_millis(20)),
                }
                res.map(drop)
            }
        })
    }

    /// INCR on one counter: every integer reply is recorded (they must be unique).
    pub fn incr(&self, a: SocketAddrV4) -> JoinHandle<()> {
        self.client(a, |me, r| {
            let res = r.call(&[b"INCR", b"counter"]);
            match &res {
                Ok(Value::Integer(i)) => me.incrs.lock().unwrap().push(*i),
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
            res.map(drop)
        })
    }

    /// SETs of unique keys; the ones answered OK are recorded (they must exist everywhere).
    pub fn unique(&self, a: SocketAddrV4, w: u64) -> JoinHandle<()> {
        let mut n = 0u64;
        self.client(a, move |me, r| {
            n += 1;
            let key = format!("u{w}-{n}");
            let res = r.call(&[b"SET", key.as_bytes(), b"0123456789abcdef"]);
            match &res {
                Ok(Value::Simple(s)) if s == "OK" => me.acked.lock().unwrap().push(key),
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
            res.map(drop)
        })
    }

    /// INCR replies given twice (must be none).
    pub fn duplicate_incrs(&self) -> Vec<i64> {
        let mut v = self.incrs.lock().unwrap().clone();
        v.sort_unstable();
        let mut dups: Vec<i64> = v
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0])
            .collect();
        dups.dedup();
        dups
    }
}

/// The product binaries these tests drive (built by cargo, found beside nc-lab).
pub fn bins() -> nc_tools::app_lab::AppBins {
    nc_tools::app_lab::built_for_tests(
        env!("CARGO"),
        std::path::Path::new(env!("CARGO_BIN_EXE_nc-lab"))
            .parent()
            .expect("the target folder"),
    )
}

/// `INFO nanoconsensus` of a front.
pub fn info(c: &mut RespConn) -> String {
    match c.call(&[b"INFO", b"nanoconsensus"]) {
        Ok(Value::Bulk(Some(b))) => String::from_utf8_lossy(&b).into_owned(),
        other => panic!("INFO nanoconsensus: {other:?}"),
    }
}

/// A numeric field of INFO.
pub fn field(info: &str, k: &str) -> u64 {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{k}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {k} in {info}"))
}

/// The replica is serving and within `max` instances of its engine (false while unknown).
pub fn caught_up(info: &str, max: u64) -> bool {
    let lag = info
        .lines()
        .find_map(|l| l.strip_prefix("nc_lag:"))
        .and_then(|v| v.trim().parse::<u64>().ok());
    info.contains("nc_mode:serving")
        && info.contains("nc_engine:Active")
        && lag.is_some_and(|l| l < max)
}

/// A TCP port free on loopback now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `redis-nc` fronts on loopback beside a lab's engines (each with its engine's control
/// socket and every front as a peer), started, killed and reached by index.
pub struct Fronts {
    pub lab: Lab,
    pub redis_nc: PathBuf,
    pub dir: PathBuf,
    pub ports: Vec<u16>,
    pub procs: Vec<Option<Child>>,
}

impl Fronts {
    /// Three engines of `lab` (brought up, on loopback, and started) and room for their
    /// fronts, none started yet; folders under `dir`.
    pub fn up(mut lab: Lab, dir: &std::path::Path) -> Fronts {
        lab.netns = false;
        lab.up(3).expect("lab up");
        let bins = bins();
        nc_tools::demo::start_cluster(&lab, &bins.bins, &[0, 1, 2]).expect("cluster");
        Fronts {
            lab,
            redis_nc: bins.redis_nc.clone(),
            dir: dir.to_path_buf(),
            ports: (0..3).map(|_| free_port()).collect(),
            procs: vec![None, None, None],
        }
    }

    pub fn addr(&self, i: usize) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.ports[i]))
    }

    pub fn start(&mut self, i: usize) {
        let fronts: Vec<String> = (0..self.ports.len())
            .map(|j| self.addr(j).to_string())
            .collect();
        let args = app_lab::redis_nc_node_args(
            i as u8,
            &self.lab.cfg_path(),
            &self.dir,
            &self.lab.ctl(i as u8),
            &fronts,
        );
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("redis-nc-{i}.log")))
            .unwrap();
        let child = Command::new(&self.redis_nc)
            .args(&args)
            // These fronts run without a password, whatever the environment says.
            .env_remove(host_app::auth::REDIS_ENV)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.procs[i] = Some(child);
        let mut c = self.connect(i);
        wait_for(
            Duration::from_secs(20),
            "the front answers PING",
            || matches!(c.call(&[b"PING"]), Ok(Value::Simple(ref s)) if s == "PONG"),
        )
        .unwrap();
    }

    pub fn connect(&self, i: usize) -> RespConn {
        let SocketAddr::V4(a) = self.addr(i) else {
            unreachable!()
        };
        connect_in(None, a, Duration::from_secs(20)).unwrap()
    }

    pub fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.procs[i].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Fronts {
    fn drop(&mut self) {
        for i in 0..self.procs.len() {
            self.kill(i);
        }
        let _ = self.lab.down();
    }
}

/// The pid of the redis-server whose socket is in `dir`.
pub fn redis_server_pid(dir: &std::path::Path) -> Option<i32> {
    let sock = dir.join("redis.sock").display().to_string();
    pid_with(&["redis-server", &sock])
}

/// The pid of the ZooKeeper server whose files are in `dir`.
pub fn zookeeper_pid(dir: &std::path::Path) -> Option<i32> {
    pid_with(&["java", &dir.display().to_string()])
}

/// The pid of a process whose command line contains every one of `needles`.
fn pid_with(needles: &[&str]) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid = e.file_name().to_string_lossy().parse::<i32>().ok()?;
        let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        needles.iter().all(|n| cmd.contains(n)).then_some(pid)
    })
}
