//! `nc-lab demo`: a real cluster working, end to end. Three engines start (namespaces and IP
//! multicast as root, loopback otherwise). A client load runs with a progress bar. The leader is
//! killed in the middle, a fourth node joins, and the demo prints the figures and checks that
//! the logs agree.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use soc_ctl::client::{LoadReport, load_with};
use soc_ctl::regfile::EngineBus;

use crate::netlab::{Lab, LabError, Result};
use crate::progress::Progress;

/// The programs the lab runs (found next to `nc-lab`).
#[derive(Clone, Debug)]
pub struct Bins {
    /// nc-engine.
    pub engine: PathBuf,
    /// soc-ctl.
    pub soc_ctl: PathBuf,
}

impl Bins {
    /// The binaries beside the running executable.
    pub fn beside_me() -> Result<Bins> {
        let me = std::env::current_exe()?;
        let dir = me.parent().expect("an executable has a folder");
        let b = Bins {
            engine: dir.join("nc-engine"),
            soc_ctl: dir.join("soc-ctl"),
        };
        for p in [&b.engine, &b.soc_ctl] {
            if !p.exists() {
                return Err(LabError(format!(
                    "{} is missing: build with `cargo build --release -p soc-ctl -p nc-tools`",
                    p.display()
                )));
            }
        }
        Ok(b)
    }
}

impl Bins {
    /// For tests: build soc-ctl's binaries with `cargo` (the test's own, same profile) and take
    /// them from `dir` (the folder of the test's binaries).
    pub fn built_for_tests(cargo: &str, dir: &Path) -> Bins {
        let ok = Command::new(cargo)
            .args(["build", "-q", "-p", "soc-ctl", "--bins"])
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "building soc-ctl's binaries failed");
        Bins {
            engine: dir.join("nc-engine"),
            soc_ctl: dir.join("soc-ctl"),
        }
    }
}

/// Run `f` on a thread inside network namespace `ns` (sockets it creates live there).
pub fn in_netns<T: Send + 'static>(
    ns: Option<String>,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    std::thread::spawn(move || {
        if let Some(ns) = ns {
            let file = std::fs::File::open(format!("/run/netns/{ns}"))
                .unwrap_or_else(|e| panic!("open namespace {ns}: {e}"));
            nix::sched::setns(file, nix::sched::CloneFlags::CLONE_NEWNET)
                .unwrap_or_else(|e| panic!("setns {ns}: {e}"));
        }
        f()
    })
}

/// `soc-ctl --ctl <node i> ARGS`.
pub fn soc_ctl(lab: &Lab, bins: &Bins, i: u8, args: &[&str]) -> Result<String> {
    let o = Command::new(&bins.soc_ctl)
        .arg("--ctl")
        .arg(lab.ctl(i))
        .args(args)
        .output()?;
    if !o.status.success() {
        return Err(LabError(format!(
            "soc-ctl {} on node {i}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// A control request to node i's engine.
pub fn request(lab: &Lab, i: u8, line: &str) -> Result<Value> {
    let mut b = EngineBus::connect(&lab.ctl(i)).map_err(|e| LabError(e.to_string()))?;
    b.request(line)
        .map_err(|e| LabError(format!("node {i}: {e}")))
}

/// Wait for a condition (polling every 5 ms).
pub fn wait_for(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) -> Result<()> {
    let t0 = Instant::now();
    while !cond() {
        if t0.elapsed() > limit {
            return Err(LabError(format!(
                "timed out after {limit:?} waiting for {what}"
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// Start engines `nodes`, configure each from the lab's file, START on node 0.
pub fn start_cluster(lab: &Lab, bins: &Bins, nodes: &[u8]) -> Result<()> {
    let cfg = lab.cfg_path().display().to_string();
    for &i in nodes {
        lab.start_engine(i, &bins.engine)?;
    }
    for &i in nodes {
        soc_ctl(
            lab,
            bins,
            i,
            &["--node", &i.to_string(), "init", "--config", &cfg],
        )?;
    }
    soc_ctl(lab, bins, 0, &["start"])?;
    wait_for(Duration::from_secs(10), "every node active", || {
        nodes
            .iter()
            .all(|&i| request(lab, i, "status").is_ok_and(|s| s["state"] == "Active"))
    })
}

/// Every listed node's decision log.
pub fn logs(lab: &Lab, nodes: &[u8]) -> Result<Vec<Vec<String>>> {
    nodes
        .iter()
        .map(|&i| {
            let v = request(lab, i, "log 0 18446744073709551615")?;
            Ok(v.as_array()
                .into_iter()
                .flatten()
                .map(|l| l.as_str().unwrap_or_default().to_string())
                .collect())
        })
        .collect()
}

/// Wait until the listed nodes have decided the same last instance.
pub fn settle(lab: &Lab, nodes: &[u8]) -> Result<()> {
    wait_for(
        Duration::from_secs(10),
        "the nodes to reach the same instance",
        || {
            let l: Vec<Value> = nodes
                .iter()
                .map(|&i| {
                    request(lab, i, "status")
                        .map(|s| s["last_decided"].clone())
                        .unwrap_or(Value::Null)
                })
                .collect();
            l.windows(2).all(|w| w[0] == w[1])
        },
    )
}

/// Demo options.
#[derive(Clone, Debug)]
pub struct DemoOpts {
    /// Nodes at the start (a further one joins).
    pub nodes: u8,
    /// Client requests.
    pub requests: u64,
    /// Outstanding requests.
    pub window: usize,
    /// Payload bytes.
    pub payload: usize,
    /// Show progress on stderr: a bar on a terminal, an occasional plain line otherwise.
    pub progress: bool,
}

/// What the demo measured.
#[derive(Debug)]
pub struct DemoReport {
    /// The client's view.
    pub load: LoadReport,
    /// Engine-measured takeover: last copy from the old leader → new leader's first send.
    pub takeover_ns: Option<u64>,
    /// Kill → new leader seen leading.
    pub failover_seen: Duration,
    /// The longest gap between two leader sends while the node joined.
    pub join_gap_ns: u64,
    /// The join's summary from soc-ctl.
    pub join: String,
    /// Live nodes and whether their logs are identical.
    pub live: Vec<u8>,
    /// Logs identical on the live nodes.
    pub agree: bool,
    /// Length of the agreed log.
    pub log_len: usize,
    /// Lines of the summary.
    pub lines: Vec<String>,
}

/// Run the demo on an (already up) lab of `opts.nodes + 1` nodes.
pub fn run_demo(lab: &Lab, bins: &Bins, opts: &DemoOpts) -> Result<DemoReport> {
    let file = lab.load()?;
    let n = opts.nodes;
    let first: Vec<u8> = (0..n).collect();
    start_cluster(lab, bins, &first)?;
    let cluster_id = file.cluster_id as u32;
    let addrs = file.client_addrs();
    let auth = file.client_auth()?;
    let (total, window, payload) = (opts.requests, opts.window, opts.payload);
    let decided = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let note = std::sync::Arc::new(std::sync::Mutex::new(String::from("steady load")));
    let bar = std::sync::Arc::new(Progress::stderr(opts.progress, 40, "demo"));
    let (d2, n2, bar2) = (decided.clone(), note.clone(), bar.clone());
    let ns = lab.netns.then(|| lab.clients());
    let client = in_netns(ns, move || {
        load_with(
            cluster_id,
            77,
            addrs,
            total,
            window,
            payload,
            Duration::from_secs(300),
            auth,
            &mut |d| {
                d2.store(d, std::sync::atomic::Ordering::Relaxed);
                let note = n2.lock().unwrap().clone();
                bar2.update(&note, d, total, || format!("{d:>7}/{total} {note:<34}"));
            },
        )
    });
    let at = |frac: u64| {
        let d = decided.clone();
        wait_for(Duration::from_secs(120), "client progress", move || {
            d.load(std::sync::atomic::Ordering::Relaxed) >= total * frac / 3
        })
    };
    // 1. Kill the leader a third of the way in, at a random point of its loop (the client load
    // is running at full window, so the leader is sending, deciding and answering then).
    at(1)?;
    let jitter_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64 % 1000);
    std::thread::sleep(Duration::from_micros(jitter_us));
    *note.lock().unwrap() = "leader (node 0) killed".into();
    let t_kill = Instant::now();
    lab.kill(0);
    wait_for(Duration::from_secs(10), "node 1 to lead", || {
        request(lab, 1, "status").is_ok_and(|s| s["is_leader"] == true)
    })
    .map_err(|e| {
        // Say why: each live node's state, leader, epoch and fault (a NET-FAULT is the safe
        // exit when a synchrony bound was broken, e.g. on an overloaded machine).
        let why: Vec<String> = (1..n)
            .map(|i| match request(lab, i, "status") {
                Ok(s) => format!("node {i}: {s}"),
                Err(e) => format!("node {i}: no status ({e})"),
            })
            .collect();
        LabError(format!("{}\n{}", e.0, why.join("\n")))
    })?;
    let failover_seen = t_kill.elapsed();
    let takeover_ns = request(lab, 1, "status")?["engine"]["takeover_ns"].as_u64();
    // 2. A new node joins two thirds of the way in.
    at(2)?;
    *note.lock().unwrap() = format!("node {n} joining");
    request(lab, 1, "reset-stats")?;
    lab.start_engine(n, &bins.engine)?;
    let join = soc_ctl(lab, bins, n, &["join", "--member", "1"])?;
    let join_gap_ns = request(lab, 1, "status")?["engine"]["max_send_gap_ns"]
        .as_u64()
        .unwrap_or(0);
    *note.lock().unwrap() = format!("node {n} joined");
    let load = client
        .join()
        .map_err(|_| LabError("the client thread panicked".into()))?
        .map_err(|e| LabError(format!("client: {e}")))?;
    bar.finish();
    // 3. Agreement.
    let live: Vec<u8> = (1..=n).filter(|&i| lab.running(i)).collect();
    settle(lab, &live)?;
    let all = logs(lab, &live)?;
    let agree = all.windows(2).all(|w| w[0] == w[1]);
    let mut lines = Vec::new();
    let statuses: Vec<Value> = live
        .iter()
        .map(|&i| request(lab, i, "status"))
        .collect::<Result<_>>()?;
    let leader = &statuses[0];
    let c = |s: &Value, k: &str| s["counters"][k].as_u64().unwrap_or(0);
    let trees = file.trees.len() as u64;
    let fanout = if lab.netns { 1 } else { n as u64 }; // loopback: one unicast per peer (n of n+1)
    let messages = c(leader, "sent_values") + c(leader, "sent_heartbeats");
    lines.push(format!(
        "transport: {}; nodes 0..{} started, node 0 killed, node {n} joined",
        if lab.netns {
            "IP multicast in network namespaces"
        } else {
            "loopback (not root)"
        },
        n - 1
    ));
    lines.push(format!("client: {}", load.summary()));
    lines.push(format!(
        "failover: node 0 killed under load (+{jitter_us} µs into a random loop period); node 1 sent {:.2} ms after the last copy from node 0 (timeout {:.1} ms); kill → node 1 leading {:.1} ms; longest client wait for an OK {:.1} ms",
        takeover_ns.map_or(f64::NAN, |t| t as f64 / 1e6),
        file.timing.timeout_ns as f64 / 1e6,
        failover_seen.as_secs_f64() * 1e3,
        load.max_ok_gap.as_secs_f64() * 1e3,
    ));
    lines.push(format!(
        "join: {}; longest gap between leader sends meanwhile {:.3} ms (loop period {:.3} ms)",
        join.lines()
            .last()
            .unwrap_or_default()
            .trim_start_matches("joined: "),
        join_gap_ns as f64 / 1e6,
        file.timing.loop_period_ns as f64 / 1e6
    ));
    let packets = messages * trees * fanout;
    let followers_sent: u64 = statuses[1..]
        .iter()
        .map(|s| c(s, "sent_values") + c(s, "sent_heartbeats"))
        .sum();
    lines.push(format!(
        "messages: leader (node 1) sent {messages} DECIDEs ({} with values, {} heartbeats) × {trees} trees{} = {packets} packets for {} requests = {:.3} packets/request; followers sent {followers_sent} (no acks)",
        c(leader, "sent_values"),
        c(leader, "sent_heartbeats"),
        if fanout > 1 { format!(" × {fanout} unicast peers") } else { String::new() },
        c(leader, "requests_accepted"),
        packets as f64 / c(leader, "requests_accepted").max(1) as f64,
    ));
    let viol: Vec<String> = live
        .iter()
        .zip(&statuses)
        .map(|(i, s)| {
            format!(
                "node {i}: {} late ticks, {} late copies, {} stale",
                c(s, "late_ticks"),
                c(s, "late_copies"),
                c(s, "stale_epoch")
            )
        })
        .collect();
    lines.push(format!("synchrony violations: {}", viol.join("; ")));
    lines.push(format!(
        "logs identical on {} live nodes: {} ({} instances)",
        live.len(),
        if agree { "yes" } else { "NO" },
        all[0].len()
    ));
    Ok(DemoReport {
        load,
        takeover_ns,
        failover_seen,
        join_gap_ns,
        join,
        live,
        agree,
        log_len: all[0].len(),
        lines,
    })
}
