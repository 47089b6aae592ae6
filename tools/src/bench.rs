//! `nc-lab bench`: LOWI (nc-engine) against a Raft baseline (raft-rs in nc-raft). Both run on the
//! same lab, with the same UDP client, payloads and client windows. The bench writes a markdown
//! table with ratios and an SVG plot of latency against throughput. It also runs an
//! interaction-stability test in the spirit of the paper's Table 1: one-way latency between two
//! nodes, idle and with CPU-stress neighbours.

use std::fmt::Write as _;
use std::net::{SocketAddrV4, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde_json::Value;
use soc_ctl::client::{LoadReport, load_with};

use crate::demo::{Bins, in_netns, request, start_cluster, wait_for};
use crate::netlab::{self, Lab, LabError, Result};
use crate::raft_node;

/// What to sweep.
#[derive(Clone, Debug)]
pub struct BenchOpts {
    /// Requests per point.
    pub requests: u64,
    /// Client windows (outstanding requests): the offered load.
    pub windows: Vec<usize>,
    /// LOWI batch sizes (batch_max).
    pub batches: Vec<u8>,
    /// Request payload bytes.
    pub payload: usize,
    /// Seconds per interaction-stability run (0 = skip).
    pub stability_secs: u64,
    /// Output folder (results.md, latency-throughput.svg).
    pub out: PathBuf,
    /// Client threads sharing each window (one client process cannot saturate the leader).
    pub clients: usize,
    /// LOWI's early-send gap (`timing.min_gap_ns`; 0 = off); None: the lab's cluster file.
    pub min_gap_ns: Option<u64>,
    /// Cluster sizes: each runs both systems on a lab of that many nodes.
    pub nodes: Vec<u8>,
    /// LOWI with packet tags (`[auth]` mode required): off, on, or both side by side.
    pub tags: Tags,
    /// Rounds of every sweep, LOWI's then Raft's, alternating (at least 1).
    pub rounds: usize,
}

/// Which LOWI runs carry packet tags (SipHash-2-4, proto::auth).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Tags {
    /// Untagged packets (the paper's format).
    Off,
    /// Every packet tagged and checked.
    On,
    /// Both, side by side, with the cost of tags printed.
    Both,
}

impl Tags {
    fn runs(self) -> &'static [bool] {
        match self {
            Tags::Off => &[false],
            Tags::On => &[true],
            Tags::Both => &[false, true],
        }
    }
}

/// The LOWI system name of a point.
fn lowi_name(batch: u8, tagged: bool) -> String {
    format!("LOWI b={batch}{}", if tagged { " tagged" } else { "" })
}

/// One measured point.
#[derive(Clone, Debug)]
pub struct Point {
    /// "LOWI b=64" or "Raft".
    pub system: String,
    /// Cluster size.
    pub nodes: u8,
    /// Client window.
    pub window: usize,
    /// Decided requests per second.
    pub rate: f64,
    /// Request → OK latency.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Packets the leader sent per decided request.
    pub leader_pkts: f64,
    /// CPU time of the leader's process per 1,000 decided requests (ms).
    pub cpu_leader_ms: f64,
    /// CPU time of the followers' processes together per 1,000 decided requests (ms).
    pub cpu_followers_ms: f64,
    /// The round it was measured in (0-based).
    pub round: usize,
}

/// Each point's figures as the median over its rounds (one point per system, size, window, in
/// the order first measured).
fn medians(points: &[Point]) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    for p in points {
        if out
            .iter()
            .any(|m| m.system == p.system && m.nodes == p.nodes && m.window == p.window)
        {
            continue;
        }
        let same: Vec<&Point> = points
            .iter()
            .filter(|q| q.system == p.system && q.nodes == p.nodes && q.window == p.window)
            .collect();
        let med = |f: fn(&Point) -> f64| median(same.iter().map(|q| f(q)).collect());
        out.push(Point {
            rate: med(|q| q.rate),
            p50_us: med(|q| q.p50_us),
            p99_us: med(|q| q.p99_us),
            leader_pkts: med(|q| q.leader_pkts),
            cpu_leader_ms: med(|q| q.cpu_leader_ms),
            cpu_followers_ms: med(|q| q.cpu_followers_ms),
            ..p.clone()
        });
    }
    out
}

/// The median (the mean of the middle two for an even count); 0 for none.
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// A ratio over rounds: its median, then its range when there was more than one round.
pub fn ratio_text(v: &[f64]) -> String {
    let m = median(v.to_vec());
    if v.len() < 2 {
        return format!("{m:.2}");
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{m:.2} ({lo:.2}–{hi:.2})")
}

/// CPU time used by the processes of one system during a run (the kernel's accounting).
struct Cpu {
    pids: Vec<i32>,
    leader: usize,
    start: Vec<u64>,
}

impl Cpu {
    fn start(pids: Vec<i32>, leader: usize) -> Cpu {
        let start = pids.iter().map(|&p| netlab::cpu_ns(p)).collect();
        Cpu {
            pids,
            leader,
            start,
        }
    }

    /// (leader, followers) in ms per 1,000 of `decided`.
    fn per_k(&self, decided: u64) -> (f64, f64) {
        let used: Vec<u64> = self
            .pids
            .iter()
            .zip(&self.start)
            .map(|(&p, &s)| netlab::cpu_ns(p).saturating_sub(s))
            .collect();
        let leader = used.get(self.leader).copied().unwrap_or(0);
        let rest: u64 = used.iter().sum::<u64>() - leader;
        (
            netlab::ms_per_k(leader, decided),
            netlab::ms_per_k(rest, decided),
        )
    }
}

fn point(
    system: &str,
    nodes: u8,
    window: usize,
    r: &LoadReport,
    pkts: f64,
    cpu: (f64, f64),
) -> Point {
    Point {
        system: system.into(),
        nodes,
        window,
        rate: r.rate(),
        p50_us: r.latency.value_at_quantile(0.5) as f64 / 1000.0,
        p99_us: r.latency.value_at_quantile(0.99) as f64 / 1000.0,
        leader_pkts: pkts,
        cpu_leader_ms: cpu.0,
        cpu_followers_ms: cpu.1,
        round: 0,
    }
}

fn client_ns(lab: &Lab) -> Option<String> {
    lab.netns.then(|| lab.clients())
}

/// `clients` client threads (ids `id`, `id + 1`, …) share `total` requests and the window.
fn run_load(
    lab: &Lab,
    id: u32,
    total: u64,
    window: usize,
    payload: usize,
    clients: usize,
) -> Result<LoadReport> {
    let f = lab.load()?;
    let (cluster, addrs) = (f.cluster_id as u32, f.client_addrs());
    let auth = f.client_auth()?;
    let k = clients.clamp(1, window.max(1));
    let threads: Vec<_> = (0..k)
        .map(|c| {
            let addrs = addrs.clone();
            let auth = auth.clone();
            let share = total / k as u64 + u64::from((c as u64) < total % k as u64);
            let w = window / k + usize::from(c < window % k);
            in_netns(client_ns(lab), move || {
                load_with(
                    cluster,
                    id + c as u32,
                    addrs,
                    share,
                    w,
                    payload,
                    Duration::from_secs(300),
                    auth,
                    &mut |_| {},
                )
            })
        })
        .collect();
    let mut merged: Option<LoadReport> = None;
    for t in threads {
        let r = t
            .join()
            .map_err(|_| LabError("client thread panicked".into()))?
            .map_err(|e| LabError(format!("client: {e}")))?;
        merged = Some(match merged {
            None => r,
            Some(mut m) => {
                m.decided += r.decided;
                m.retransmits += r.retransmits;
                m.elapsed = m.elapsed.max(r.elapsed);
                m.latency.add(&r.latency).expect("same histogram bounds");
                m.max_ok_gap = m.max_ok_gap.max(r.max_ok_gap);
                m
            }
        });
    }
    Ok(merged.expect("at least one client"))
}

/// LOWI at one batch size over every window.
fn lowi(
    lab: &Lab,
    bins: &Bins,
    o: &BenchOpts,
    batch: u8,
    tagged: bool,
    id: &mut u32,
) -> Result<Vec<Point>> {
    let mut f = lab.load()?;
    f.limits.batch_max = batch as u64;
    if let Some(g) = o.min_gap_ns {
        netlab::set_min_gap(&mut f.timing, g);
    }
    f.auth = None;
    if tagged {
        let key_file = lab.dir.join("bench.key");
        if !key_file.exists() {
            soc_ctl::cluster::generate_key_file(&key_file, 1)?;
        }
        f.auth = Some(soc_ctl::cluster::Auth {
            mode: soc_ctl::cluster::AuthMode::Required,
            key: 1,
            key_file,
        });
    }
    let system = lowi_name(batch, tagged);
    std::fs::write(lab.cfg_path(), f.to_toml())?;
    let n = f.nodes.len() as u8;
    let all: Vec<u8> = (0..n).collect();
    start_cluster(lab, bins, &all)?;
    // The hosts take their copies as the applications' hosts do: xdp-log on the PCIe veth logs
    // and consumes them. Without it every host copy would go up the host namespace's UDP stack
    // to no socket and end in an ICMP error, work no deployment does (6 % of a follower
    // engine's samples at window 4, all of it charged to the engine's own send).
    let mut host_logs = Vec::new();
    if lab.netns {
        for &i in &all {
            crate::app_lab::HostLog::clear_stale(lab, i);
            host_logs.push(crate::app_lab::HostLog::attach(lab, i)?);
        }
    }
    let fanout = if lab.netns {
        1
    } else {
        f.nodes.len() as u64 - 1
    };
    let trees = f.trees.len() as u64;
    let mut out = Vec::new();
    for &w in &o.windows {
        let before = request(lab, 0, "status")?;
        *id += 16;
        let cpu = Cpu::start(all.iter().filter_map(|&i| lab.pid(i)).collect(), 0);
        let r = run_load(lab, *id, o.requests, w, o.payload, o.clients)?;
        let cpu = cpu.per_k(r.decided);
        let after = request(lab, 0, "status")?;
        let d = |k: &str| {
            after["counters"][k].as_u64().unwrap_or(0) - before["counters"][k].as_u64().unwrap_or(0)
        };
        let pkts = (d("sent_values") + d("sent_heartbeats")) * trees * fanout;
        out.push(point(
            &system,
            n,
            w,
            &r,
            pkts as f64 / r.decided as f64,
            cpu,
        ));
        eprintln!("  {system:<16} n={n} window {w:<3} {}", r.summary());
    }
    drop(host_logs);
    for i in all {
        lab.kill(i);
    }
    Ok(out)
}

fn raft_stats(lab: &Lab, addr: SocketAddrV4) -> Option<Value> {
    in_netns(client_ns(lab), move || {
        let s = UdpSocket::bind("0.0.0.0:0").ok()?;
        s.set_read_timeout(Some(Duration::from_millis(200))).ok()?;
        s.send_to(raft_node::STATS_REQUEST, addr).ok()?;
        let mut b = [0u8; 512];
        let n = s.recv(&mut b).ok()?;
        serde_json::from_slice(&b[..n]).ok()
    })
    .join()
    .ok()
    .flatten()
}

fn raft(lab: &Lab, raft_bin: &Path, o: &BenchOpts, id: &mut u32) -> Result<Vec<Point>> {
    let mut f = lab.load()?;
    // The baseline speaks untagged packets: a tagged LOWI run before it must not leave its
    // [auth] for the clients (they would refuse every untagged reply).
    if f.auth.take().is_some() {
        std::fs::write(lab.cfg_path(), f.to_toml())?;
    }
    let addrs = f.client_addrs();
    let n = f.nodes.len();
    for i in 0..n as u8 {
        let args = [
            "--config".to_string(),
            lab.cfg_path().display().to_string(),
            "--node".into(),
            i.to_string(),
        ];
        lab.spawn_in_nic(i, "r", raft_bin, &args)?;
    }
    let mut leader = None;
    wait_for(Duration::from_secs(20), "a raft leader", || {
        leader = (0..n).find(|&i| raft_stats(lab, addrs[i]).is_some_and(|s| s["leader"] == true));
        leader.is_some()
    })?;
    let mut out = Vec::new();
    for &w in &o.windows {
        let l = (0..n)
            .find(|&i| raft_stats(lab, addrs[i]).is_some_and(|s| s["leader"] == true))
            .or(leader)
            .expect("a leader");
        let before = raft_stats(lab, addrs[l]).unwrap_or_default();
        *id += 16;
        let cpu = Cpu::start(
            (0..n as u8)
                .filter_map(|i| lab.pid_tagged("r", i))
                .collect(),
            l,
        );
        let r = run_load(lab, *id, o.requests, w, o.payload, o.clients)?;
        let cpu = cpu.per_k(r.decided);
        let after = raft_stats(lab, addrs[l]).unwrap_or_default();
        let pkts = after["peer_packets"].as_u64().unwrap_or(0)
            - before["peer_packets"].as_u64().unwrap_or(0);
        out.push(point(
            "Raft",
            n as u8,
            w,
            &r,
            pkts as f64 / r.decided as f64,
            cpu,
        ));
        eprintln!("  Raft        n={n} window {w:<3} {}", r.summary());
    }
    for i in 0..n as u8 {
        lab.kill_tagged("r", i);
    }
    Ok(out)
}

/// One-way latency percentiles (ns) between node 0 and node 1 on tree a, for `secs` seconds,
/// one datagram every 100 µs, with `stress` CPU-burning neighbour threads.
pub fn stability(lab: &Lab, secs: u64, stress: usize) -> Result<Histogram<u64>> {
    let f = lab.load()?;
    let to = SocketAddrV4::new(f.nodes[1].tree_addrs[0], 7499);
    let from = SocketAddrV4::new(f.nodes[0].tree_addrs[0], 0);
    let ns = |i: u8| lab.netns.then(|| lab.nic(i));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let burners: Vec<_> = (0..stress)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    std::hint::black_box(x);
                }
            })
        })
        .collect();
    let rx = UdpSocketInNs::bind(ns(1), to)?;
    let end = Instant::now() + Duration::from_secs(secs);
    let sender = in_netns(ns(0), move || -> std::io::Result<()> {
        let s = UdpSocket::bind(from)?;
        while Instant::now() < end {
            let t = soc_ctl::engine::now_ns().to_be_bytes();
            s.send_to(&t, to)?;
            std::thread::sleep(Duration::from_micros(100));
        }
        Ok(())
    });
    let hist = in_netns(None, move || {
        let mut h = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).expect("bounds");
        let mut b = [0u8; 64];
        let _ = rx.0.set_read_timeout(Some(Duration::from_millis(200)));
        while Instant::now() < end + Duration::from_millis(100) {
            if let Ok(n) = rx.0.recv(&mut b)
                && n == 8
            {
                let sent = u64::from_be_bytes(b[..8].try_into().expect("8"));
                h.saturating_record(soc_ctl::engine::now_ns().saturating_sub(sent).max(1));
            }
        }
        h
    })
    .join()
    .map_err(|_| LabError("receiver panicked".into()))?;
    let _ = sender.join();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for b in burners {
        let _ = b.join();
    }
    Ok(hist)
}

/// A socket created inside a namespace (it stays there when used from another thread).
struct UdpSocketInNs(UdpSocket);

impl UdpSocketInNs {
    fn bind(ns: Option<String>, a: SocketAddrV4) -> Result<UdpSocketInNs> {
        in_netns(ns, move || UdpSocket::bind(a))
            .join()
            .map_err(|_| LabError("bind thread panicked".into()))?
            .map(UdpSocketInNs)
            .map_err(|e| LabError(format!("bind {a}: {e}")))
    }
}

fn svg_plot(points: &[Point], path: &Path) -> Result<()> {
    use plotters::prelude::*;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| LabError(format!("plot: {e}"));
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let max_x = points.iter().map(|p| p.rate / 1000.0).fold(1.0, f64::max) * 1.1;
    let max_y = points.iter().map(|p| p.p50_us).fold(1.0, f64::max) * 1.5;
    let min_y = points
        .iter()
        .map(|p| p.p50_us)
        .fold(f64::MAX, f64::min)
        .max(1.0)
        / 1.5;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "request → OK latency (p50) vs throughput",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..max_x, (min_y..max_y).log_scale())
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("decided requests per second (thousands)")
        .y_desc("p50 latency (µs, log scale)")
        .draw()
        .map_err(|e| err(&e))?;
    let label = |p: &Point| format!("{} n={}", p.system, p.nodes);
    let mut systems: Vec<String> = points.iter().map(label).collect();
    systems.dedup();
    for (k, s) in systems.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        let pts: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| &label(p) == s)
            .map(|p| (p.rate / 1000.0, p.p50_us))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(s.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(
                pts.iter()
                    .map(|&(x, y)| Circle::new((x, y), 4, color.filled())),
            )
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.9))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// A goal met or missed, in a table cell.
fn mark(met: bool) -> &'static str {
    if met { "(met)" } else { "(missed)" }
}

fn pct(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

/// Run the whole bench on an (already up) 3-node lab; returns the markdown report.
pub fn run_bench(lab: &Lab, bins: &Bins, raft_bin: &Path, o: &BenchOpts) -> Result<String> {
    std::fs::create_dir_all(&o.out)?;
    let mut id = 1000;
    // Every round's points; the tables show medians over rounds.
    let mut all = Vec::new();
    for &n in &o.nodes {
        lab.up(n)?;
        for round in 0..o.rounds.max(1) {
            let mut got = Vec::new();
            for &b in &o.batches {
                for &tagged in o.tags.runs() {
                    got.extend(lowi(lab, bins, o, b, tagged, &mut id)?);
                }
            }
            got.extend(raft(lab, raft_bin, o, &mut id)?);
            for p in &mut got {
                p.round = round;
            }
            all.extend(got);
        }
    }
    let points = medians(&all);
    let raft: Vec<Point> = points
        .iter()
        .filter(|p| p.system == "Raft")
        .cloned()
        .collect();
    // The ratio of two systems' figure `f` at (n, window), round by round.
    let per_round = |a: &str, b: &str, n: u8, w: usize, f: fn(&Point) -> f64| -> Vec<f64> {
        (0..o.rounds.max(1))
            .filter_map(|k| {
                let find = |s: &str| {
                    all.iter()
                        .find(|p| p.system == s && p.nodes == n && p.window == w && p.round == k)
                };
                Some(f(find(a)?) / f(find(b)?))
            })
            .collect()
    };
    let mut md = String::new();
    let f = lab.load()?;
    let _ = writeln!(
        md,
        "Transport: {}. LOWI timing: loop {} µs, early sends {}, Δ {} ms, timeout {} ms. Raft: raft-rs 0.7, 5 ms tick \
         (heartbeat 1 tick, election 10 ticks), MemStorage. {} client thread(s) sharing the window, {} requests of {} B per point; \
         closed loop.\n",
        if lab.netns {
            "IP multicast in network namespaces (veth + bridges, MTU 9000); LOWI's host copies logged and consumed by xdp-log on every host"
        } else {
            "loopback (unicast fan-out)"
        },
        f.timing.loop_period_ns / 1000,
        if f.timing.min_gap_ns == 0 {
            "off".to_string()
        } else {
            format!(
                "{} µs after the last send",
                f.timing.min_gap_ns as f64 / 1000.0
            )
        },
        f.timing.delta_ns / 1_000_000,
        f.timing.timeout_ns / 1_000_000,
        o.clients,
        o.requests,
        o.payload
    );
    if o.rounds > 1 {
        let _ = writeln!(
            md,
            "{} rounds, each LOWI's sweeps then Raft's: every figure below is the median over the rounds; each ratio is the median of the rounds' ratios, with their range.\n",
            o.rounds
        );
    }
    let _ = writeln!(
        md,
        "| system | nodes | window | decisions/s | p50 µs | p99 µs | leader packets / request | CPU ms / 1k requests: leader | followers |"
    );
    let _ = writeln!(
        md,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for p in &points {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.3} | {:.1} | {:.1} |",
            p.system,
            p.nodes,
            p.window,
            p.rate,
            p.p50_us,
            p.p99_us,
            p.leader_pkts,
            p.cpu_leader_ms,
            p.cpu_followers_ms
        );
    }
    let best_batch = o.batches.iter().max().copied().unwrap_or(1);
    let best = lowi_name(best_batch, o.tags == Tags::On);
    if o.tags == Tags::Both {
        let _ = writeln!(
            md,
            "\nThe cost of packet tags (SipHash-2-4 on every packet, `[auth]` mode required): tagged ÷ untagged LOWI, same batch and window:\n"
        );
        let _ = writeln!(
            md,
            "| nodes | batch | window | throughput × | p50 × | CPU / request, all nodes × |"
        );
        let _ = writeln!(md, "| ---: | ---: | ---: | ---: | ---: | ---: |");
        for t in points.iter().filter(|p| p.system.ends_with(" tagged")) {
            let plain = t.system.trim_end_matches(" tagged");
            if let Some(u) = points
                .iter()
                .find(|p| p.system == plain && p.window == t.window && p.nodes == t.nodes)
            {
                let (n, w, ts) = (u.nodes, u.window, t.system.as_str());
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} | {} |",
                    n,
                    plain.trim_start_matches("LOWI b="),
                    w,
                    ratio_text(&per_round(ts, plain, n, w, |p| p.rate)),
                    ratio_text(&per_round(ts, plain, n, w, |p| p.p50_us)),
                    ratio_text(
                        &per_round(ts, plain, n, w, |p| p.cpu_leader_ms + p.cpu_followers_ms)
                    )
                );
            }
        }
    }
    let _ = writeln!(
        md,
        "\nRatios, {best} ÷ Raft at the same window (throughput: higher is better; latency and packets: lower is better):\n"
    );
    let _ = writeln!(
        md,
        "| nodes | window | throughput × (goal ≥ 1.5) | p50 × (goal ≤ 0.5) | p99 × | leader packets × | CPU / request, all nodes × |"
    );
    let _ = writeln!(md, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut mean_ratio: Vec<(u8, f64)> = Vec::new();
    for r in &raft {
        if let Some(l) = points
            .iter()
            .find(|p| p.system == best && p.window == r.window && p.nodes == r.nodes)
        {
            let (n, w) = (r.nodes, r.window);
            let thr = per_round(&l.system, "Raft", n, w, |p| p.rate);
            let p50 = per_round(&l.system, "Raft", n, w, |p| p.p50_us);
            let x = median(thr.clone()) / o.windows.len() as f64;
            match mean_ratio.iter_mut().find(|m| m.0 == r.nodes) {
                Some(m) => m.1 += x,
                None => mean_ratio.push((r.nodes, x)),
            }
            let _ = writeln!(
                md,
                "| {} | {} | {} {} | {} {} | {} | {} | {} |",
                n,
                w,
                ratio_text(&thr),
                mark(median(thr.clone()) >= 1.5),
                ratio_text(&p50),
                mark(median(p50.clone()) <= 0.5),
                ratio_text(&per_round(&l.system, "Raft", n, w, |p| p.p99_us)),
                ratio_text(&per_round(&l.system, "Raft", n, w, |p| p.leader_pkts)),
                ratio_text(&per_round(&l.system, "Raft", n, w, |p| p.cpu_leader_ms
                    + p.cpu_followers_ms))
            );
        }
    }
    if mean_ratio.len() > 1 {
        let _ = writeln!(
            md,
            "\nMean throughput ratio over the windows, by cluster size (goal: higher at the largest n than at the smallest): {}",
            mean_ratio
                .iter()
                .map(|(n, x)| format!("n = {n}: {x:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let svg = o.out.join("latency-throughput.svg");
    svg_plot(&points, &svg)?;
    let _ = writeln!(md, "\nPlot: `{}`", svg.display());
    if o.stability_secs > 0 {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let _ = writeln!(
            md,
            "\nInteraction stability: one-way latency node 0 → node 1 on tree a, one datagram per 100 µs for {} s \
             (normal-priority sockets, CLOCK_MONOTONIC on both ends):\n",
            o.stability_secs
        );
        let _ = writeln!(
            md,
            "| load | samples | p50 µs | p90 | p99 | p99.9 | p99.99 | p100 |"
        );
        let _ = writeln!(
            md,
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        for (name, stress) in [
            ("idle", 0),
            ("CPU stress (one spinning thread per core)", cores),
        ] {
            let h = stability(lab, o.stability_secs, stress)?;
            let _ = writeln!(
                md,
                "| {name} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
                h.len(),
                pct(&h, 0.5),
                pct(&h, 0.9),
                pct(&h, 0.99),
                pct(&h, 0.999),
                pct(&h, 0.9999),
                h.max() as f64 / 1000.0
            );
        }
    }
    std::fs::write(o.out.join("results.md"), &md)?;
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(system: &str, window: usize, round: usize, rate: f64) -> Point {
        Point {
            system: system.into(),
            nodes: 3,
            window,
            rate,
            p50_us: round as f64 * 100.0 + rate,
            p99_us: 0.0,
            leader_pkts: 0.0,
            cpu_leader_ms: 0.0,
            cpu_followers_ms: 0.0,
            round,
        }
    }

    #[test]
    fn medians_are_taken_per_system_and_window_over_the_rounds() {
        assert_eq!(median(vec![]), 0.0);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        let all = vec![
            pt("LOWI b=64", 1, 0, 10.0),
            pt("LOWI b=64", 4, 0, 40.0),
            pt("Raft", 1, 0, 5.0),
            pt("LOWI b=64", 1, 1, 30.0),
            pt("LOWI b=64", 4, 1, 20.0),
            pt("Raft", 1, 1, 7.0),
            pt("LOWI b=64", 1, 2, 20.0),
            pt("LOWI b=64", 4, 2, 60.0),
            pt("Raft", 1, 2, 9.0),
        ];
        let m = medians(&all);
        let got: Vec<(&str, usize, f64)> = m
            .iter()
            .map(|p| (p.system.as_str(), p.window, p.rate))
            .collect();
        assert_eq!(
            got,
            [
                ("LOWI b=64", 1, 20.0),
                ("LOWI b=64", 4, 40.0),
                ("Raft", 1, 7.0)
            ]
        );
        // Each figure on its own: the p50 median is not the median-rate round's p50.
        assert_eq!(m[0].p50_us, 130.0);
        assert_eq!(ratio_text(&[2.0]), "2.00");
        assert_eq!(ratio_text(&[2.0, 1.0, 4.0]), "2.00 (1.00–4.00)");
    }
}
