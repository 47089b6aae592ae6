//! Test harness: real `nc-engine` processes, driven through their control sockets and the
//! `soc-ctl` binary, exactly as a user would.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use soc_ctl::cluster::ClusterFile;
use soc_ctl::regfile::EngineBus;

pub const ENGINE: &str = env!("CARGO_BIN_EXE_nc-engine");
pub const SOC_CTL: &str = env!("CARGO_BIN_EXE_soc-ctl");

/// Timing for tests on a shared, noisy machine: 2 ms loop, Δ 20 ms, drift 2 ms, timeout 200 ms,
/// early sends 50 µs after the last send.
pub fn test_file(n: u8, trees: u8, net: u8) -> ClusterFile {
    let mut f = ClusterFile::loopback(n, trees, net, 7400);
    f.timing.loop_period_ns = 2_000_000;
    f.timing.delta_ns = 20_000_000;
    f.timing.drift_ns = 2_000_000;
    f.timing.timeout_ns = 200_000_000;
    f.timing.late_tick_slack_ns = 5_000_000;
    f.timing.min_gap_ns = 50_000;
    f.validate().expect("test timing is legal");
    f
}

pub struct Cluster {
    pub dir: tempfile::TempDir,
    pub file: ClusterFile,
    pub cfg: PathBuf,
    pub procs: Vec<Option<Child>>,
    /// Extra environment and arguments for every engine.
    pub engine_args: Vec<String>,
    /// Wrap engine commands (e.g. `ip netns exec NS`), per node.
    pub wrap: Option<Box<dyn Fn(u8) -> Vec<String>>>,
}

impl Cluster {
    pub fn new(file: ClusterFile) -> Cluster {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = dir.path().join("cluster.toml");
        std::fs::write(&cfg, file.to_toml()).expect("write cluster.toml");
        let n = file.nodes.len();
        Cluster {
            dir,
            file,
            cfg,
            procs: (0..n).map(|_| None).collect(),
            engine_args: vec![],
            wrap: None,
        }
    }

    pub fn ctl(&self, i: u8) -> PathBuf {
        self.dir.path().join(format!("e{i}.sock"))
    }

    pub fn engine_log(&self, i: u8) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("e{i}.log"))).unwrap_or_default()
    }

    /// Start node i's engine and wait for its control socket.
    pub fn spawn(&mut self, i: u8) {
        let log = std::fs::File::create(self.dir.path().join(format!("e{i}.log"))).unwrap();
        let mut argv: Vec<String> = self.wrap.as_ref().map(|w| w(i)).unwrap_or_default();
        argv.push(ENGINE.into());
        argv.extend([
            "--config".into(),
            self.cfg.display().to_string(),
            "--node".into(),
            i.to_string(),
            "--ctl".into(),
            self.ctl(i).display().to_string(),
            "--verbose".into(),
        ]);
        argv.extend(self.engine_args.iter().cloned());
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn nc-engine");
        self.procs[i as usize] = Some(child);
        let t0 = Instant::now();
        while EngineBus::connect(&self.ctl(i)).is_err() {
            if let Some(Ok(Some(st))) = self.procs[i as usize].as_mut().map(|c| c.try_wait()) {
                panic!("nc-engine {i} exited ({st}):\n{}", self.engine_log(i));
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "engine {i} did not come up"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `soc-ctl --ctl <node i> ARGS`, which must succeed.
    pub fn soc_ctl(&self, i: u8, args: &[&str]) -> String {
        let o = self.soc_ctl_raw(i, args);
        assert!(
            o.status.success(),
            "soc-ctl {args:?} on node {i} failed: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    pub fn soc_ctl_raw(&self, i: u8, args: &[&str]) -> Output {
        Command::new(SOC_CTL)
            .arg("--ctl")
            .arg(self.ctl(i))
            .args(args)
            .output()
            .expect("run soc-ctl")
    }

    pub fn request(&self, i: u8, line: &str) -> Result<Value, String> {
        let mut b = EngineBus::connect(&self.ctl(i)).map_err(|e| e.to_string())?;
        b.request(line).map_err(|e| e.to_string())
    }

    pub fn status(&self, i: u8) -> Value {
        self.request(i, "status").expect("status")
    }

    pub fn log(&self, i: u8) -> Vec<String> {
        let v = self.request(i, "log 0 18446744073709551615").expect("log");
        v.as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect()
    }

    /// Start the given nodes, init each, START on node 0.
    pub fn start(&mut self, nodes: &[u8]) {
        for &i in nodes {
            self.spawn(i);
        }
        for &i in nodes {
            let cfg = self.cfg.display().to_string();
            self.soc_ctl(i, &["--node", &i.to_string(), "init", "--config", &cfg]);
        }
        self.soc_ctl(0, &["start"]);
        self.wait(Duration::from_secs(10), "every node active", |c| {
            nodes.iter().all(|&i| c.status(i)["state"] == "Active")
        });
    }

    pub fn wait(&self, limit: Duration, what: &str, mut cond: impl FnMut(&Cluster) -> bool) {
        let t0 = Instant::now();
        while !cond(self) {
            if t0.elapsed() > limit {
                panic!("timed out waiting for: {what}\n{}", self.dump());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Wait until every listed node has decided the same last instance (the stream is idle).
    pub fn settle(&self, nodes: &[u8]) {
        self.wait(
            Duration::from_secs(10),
            "all nodes at the same instance",
            |c| {
                let l: Vec<Value> = nodes
                    .iter()
                    .map(|&i| c.status(i)["last_decided"].clone())
                    .collect();
                l.windows(2).all(|w| w[0] == w[1])
            },
        );
    }

    pub fn kill(&mut self, i: u8) {
        if let Some(mut c) = self.procs[i as usize].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn client_addrs(&self) -> Vec<std::net::SocketAddrV4> {
        self.file.client_addrs()
    }

    pub fn dump(&self) -> String {
        let mut s = String::new();
        for i in 0..self.procs.len() as u8 {
            if self.procs[i as usize].is_some() {
                s += &format!("--- node {i} status: {:?}\n", self.request(i, "status"));
                let log = self.engine_log(i);
                let tail: Vec<&str> = log.lines().rev().take(15).collect();
                s += &format!(
                    "--- node {i} stderr (last lines):\n{}\n",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                );
            }
        }
        s
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..self.procs.len() as u8 {
            self.kill(i);
        }
    }
}

/// Counter value from a status.
pub fn counter(st: &Value, name: &str) -> u64 {
    st["counters"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("counter {name} in {st}"))
}
