//! redis-nc-bench: SET throughput and latency of Redis-NC (n = 1, 2, 3) against an unreplicated
//! redis-server and against redis-server with one replica and `WAIT 1 0` after each write, all
//! on the namespace lab, with the same RESP client; plus one `redis-benchmark -t set` run against
//! Redis-NC to show the stock tool works. Needs root. Its fronts run without a password (the lab
//! does not pass `REDIS_NC_PASSWORD` on), so its clients send no AUTH.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use hdrhistogram::Histogram;
use host_app::resp::Value;
use nc_tools::app_lab::{RedisNcLab, connect_in, front};
use nc_tools::bench::{median, ratio_text};
use nc_tools::demo::Bins;
use nc_tools::netlab::cpu_ns_of as cpu_of;
use nc_tools::netlab::host_client_addr;

/// Redis-NC SET benchmark against Redis (unreplicated) and Redis + WAIT, on the namespace lab.
#[derive(Parser)]
#[command(name = "redis-nc-bench", version)]
struct Args {
    /// Cluster sizes for Redis-NC.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    nodes: Vec<u8>,
    /// SETs per run (formerly --ops).
    #[arg(
        long = "requests",
        alias = "ops",
        value_name = "N",
        default_value_t = 20_000
    )]
    ops: u64,
    /// Client connections, each one request at a time like redis-benchmark -P 1 (formerly
    /// --conns); every system is measured at each count (the goals use 1 and 50).
    #[arg(
        long = "clients",
        alias = "conns",
        value_name = "N,...",
        value_delimiter = ',',
        default_value = "1,50"
    )]
    conns: Vec<u64>,
    /// Value size in bytes (formerly --size).
    #[arg(
        long = "payload",
        alias = "size",
        value_name = "BYTES",
        default_value_t = 64
    )]
    size: usize,
    /// Also write the table here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write a bar chart of SET/s (SVG) here.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Print the runs as one JSON object instead of the tables (--out still gets the tables).
    #[arg(long)]
    json: bool,
    /// Redis-NC's early-send gap in µs (cluster.toml `timing.min_gap_ns`; 0 = off, every send
    /// on the 1 ms loop) [default: gen-config's, 20]. A larger gap trades latency at one
    /// connection for throughput at many (docs/benchmarks.md).
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(0..=300))]
    min_gap_us: Option<u64>,
    /// Redis-NC's writes proposed together: `redis-nc --proposals` for every node (0: each
    /// write proposed alone, as before) [default: redis-nc's, 1].
    #[arg(long, value_name = "N")]
    proposals: Option<usize>,
    /// Measure everything this many times, each round Redis-NC's clusters then the baselines
    /// (fresh labs each round); the tables show the median of each figure over the rounds and
    /// each ratio's median with its range (ratios of the same round). The unreplicated
    /// baseline alone moves by about 25 % between runs on a shared machine.
    #[arg(long, value_name = "R", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    rounds: u32,
}

/// The `nc_stage_*` sums of a front's `INFO nanoconsensus`.
fn stages(clients: &str, addr: SocketAddrV4) -> Result<[u64; 9], String> {
    let mut c = connect_in(Some(clients.to_string()), addr, Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    let text = match c
        .call(&[b"INFO", b"nanoconsensus"])
        .map_err(|e| e.to_string())?
    {
        Value::Bulk(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
        other => return Err(format!("INFO answered {other:?}")),
    };
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("nc_stage_{k}:")))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    Ok([
        field("writes"),
        field("propose_ns"),
        field("apply_wait_ns"),
        field("apply_batches"),
        field("apply_instances"),
        field("apply_ns"),
        field("decided_writes"),
        field("proposals"),
        field("proposed_writes"),
    ])
}

/// One row of the per-stage breakdown: the deltas of [`stages`] over a run.
fn breakdown(conns: &str, a: [u64; 9], b: [u64; 9]) -> String {
    let d: Vec<u64> = (0..9).map(|k| b[k].saturating_sub(a[k])).collect();
    let per = |x: u64, n: u64| x as f64 / n.max(1) as f64 / 1000.0;
    let waited = d[0].saturating_sub(d[6]);
    format!(
        "| {conns} | {} | {} | {:.2} | {:.1} | {} | {:.2} | {:.1} |",
        d[0],
        d[6],
        d[8] as f64 / d[7].max(1) as f64,
        per(d[1], d[0]),
        if waited == 0 {
            "—".to_string()
        } else {
            format!("{:.1}", per(d[2], waited))
        },
        d[4] as f64 / d[3].max(1) as f64,
        per(d[5], d[3]),
    )
}

/// One system measured at one connection count in one round.
struct Run {
    name: String,
    conns: u64,
    round: usize,
    rate: f64,
    /// Latency percentiles and maximum, µs.
    p50: f64,
    p99: f64,
    max: f64,
    /// CPU ms per 1,000 SETs of the system's processes (servers, engines, fronts; not the
    /// benchmark's clients), from the kernel's accounting.
    cpu_per_k: f64,
    /// `-TRYAGAIN` answers, each retried (the SET's latency includes its retries).
    tryagain: u64,
}

impl Run {
    fn new(name: &str, conns: u64, round: usize, m: Measured, cpu_per_k: f64) -> Run {
        let q = |x: f64| m.lat.value_at_quantile(x) as f64 / 1000.0;
        Run {
            name: name.to_string(),
            conns,
            round,
            rate: m.rate,
            p50: q(0.5),
            p99: q(0.99),
            max: m.lat.max() as f64 / 1000.0,
            cpu_per_k,
            tryagain: m.tryagain,
        }
    }
}

/// What the rounds measured.
#[derive(Default)]
struct Rounds {
    runs: Vec<Run>,
    breakdown_rows: Vec<String>,
    cpu_rows: Vec<String>,
    /// The stock `redis-benchmark` line (first round).
    stock: String,
}

impl Rounds {
    fn find(&self, name: &str, conns: u64, round: usize) -> Option<&Run> {
        self.runs
            .iter()
            .find(|r| r.name == name && r.conns == conns && r.round == round)
    }

    /// `f(system's run) / f(base's run)` in each round where both were measured.
    fn ratios(&self, name: &str, base: &str, conns: u64, f: fn(&Run) -> f64) -> Vec<f64> {
        let rounds = self.runs.iter().map(|r| r.round + 1).max().unwrap_or(0);
        (0..rounds)
            .filter_map(|k| Some(f(self.find(name, conns, k)?) / f(self.find(base, conns, k)?)))
            .collect()
    }

    /// Each (system, connections) once, in the order first measured, with its figures as
    /// medians over the rounds (`-TRYAGAIN` answers summed).
    fn medians(&self) -> Vec<Run> {
        let mut out: Vec<Run> = Vec::new();
        for r in &self.runs {
            if out.iter().any(|m| m.name == r.name && m.conns == r.conns) {
                continue;
            }
            let same: Vec<&Run> = self
                .runs
                .iter()
                .filter(|q| q.name == r.name && q.conns == r.conns)
                .collect();
            let med = |f: fn(&Run) -> f64| median(same.iter().map(|q| f(q)).collect());
            out.push(Run {
                name: r.name.clone(),
                conns: r.conns,
                round: 0,
                rate: med(|q| q.rate),
                p50: med(|q| q.p50),
                p99: med(|q| q.p99),
                max: med(|q| q.max),
                cpu_per_k: med(|q| q.cpu_per_k),
                tryagain: same.iter().map(|q| q.tryagain).sum(),
            });
        }
        out
    }
}

/// Consecutive `-TRYAGAIN` answers to one SET before the run stops (1 ms apart: a failover
/// answers within about 100 ms).
const TRYAGAIN_LIMIT: u32 = 10_000;

/// What one load run measured.
struct Measured {
    rate: f64,
    lat: Histogram<u64>,
    tryagain: u64,
}

/// CPU (ns) used so far by `pids`, summed by program name (`/proc/PID/comm`).
fn cpu_by_program(pids: &[i32]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for &p in pids {
        let name = std::fs::read_to_string(format!("/proc/{p}/comm"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into());
        *m.entry(name).or_default() += nc_tools::netlab::cpu_ns(p);
    }
    m
}

/// ms of CPU per 1,000 SETs between two [`cpu_of`] readings.
fn per_k(before: u64, after: u64, ops: u64) -> f64 {
    nc_tools::netlab::ms_per_k(after.saturating_sub(before), ops)
}

const UNREPLICATED: &str = "redis-server, unreplicated";
const WAIT: &str = "redis-server + 1 replica, WAIT 1 0 after each SET";

/// `conns` connections from the clients namespace, `ops` SETs in all; `wait` adds WAIT 1 0.
fn load(
    clients: &str,
    addr: SocketAddrV4,
    ops: u64,
    conns: u64,
    size: usize,
    wait: bool,
) -> Result<Measured, String> {
    let t0 = Instant::now();
    let threads: Vec<_> = (0..conns)
        .map(|c| {
            let ns = Some(clients.to_string());
            let n = ops / conns + u64::from(c < ops % conns);
            std::thread::spawn(move || -> Result<(Histogram<u64>, u64), String> {
                let mut h =
                    Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("bounds");
                let mut r =
                    connect_in(ns, addr, Duration::from_secs(10)).map_err(|e| e.to_string())?;
                let v = vec![b'x'; size];
                let mut tryagain = 0u64;
                for i in 0..n {
                    let key = format!("key:{c}:{i}");
                    let s = Instant::now();
                    let mut tries = 0u32;
                    // A SET is idempotent: a TRYAGAIN (not decided, e.g. during a failover) is
                    // retried, as a client would, and counted.
                    loop {
                        match r
                            .call(&[b"SET", key.as_bytes(), &v])
                            .map_err(|e| e.to_string())?
                        {
                            Value::Simple(ok) if ok == "OK" => break,
                            Value::Error(e) if e.starts_with("TRYAGAIN") => {
                                tryagain += 1;
                                tries += 1;
                                if tries >= TRYAGAIN_LIMIT {
                                    return Err(format!(
                                        "SET {key}: -{e} {tries} times in a row: the cluster does not serve"
                                    ));
                                }
                                std::thread::sleep(Duration::from_millis(1));
                            }
                            other => return Err(format!("SET answered {other:?}")),
                        }
                    }
                    if wait {
                        match r.call(&[b"WAIT", b"1", b"0"]).map_err(|e| e.to_string())? {
                            Value::Integer(1) => {}
                            other => return Err(format!("WAIT answered {other:?}")),
                        }
                    }
                    h.saturating_record(s.elapsed().as_nanos() as u64);
                }
                Ok((h, tryagain))
            })
        })
        .collect();
    let mut all = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("bounds");
    let mut tryagain = 0;
    for t in threads {
        let (h, n) = t
            .join()
            .map_err(|_| "client thread panicked".to_string())??;
        all.add(&h).map_err(|e| e.to_string())?;
        tryagain += n;
    }
    Ok(Measured {
        rate: ops as f64 / t0.elapsed().as_secs_f64(),
        lat: all,
        tryagain,
    })
}

/// A plain redis-server (no persistence) on host i's client address, port 6390, in that host's
/// namespace; `replica_of` makes it a replica of that host's server.
fn baseline_redis(
    lab: &nc_tools::netlab::Lab,
    i: u8,
    replica_of: Option<u8>,
    log: &Path,
) -> std::io::Result<Child> {
    let bind = host_client_addr(i).to_string();
    let mut args = vec![
        "redis-server",
        "--port",
        "6390",
        "--bind",
        &bind,
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "no",
    ];
    let primary = replica_of.map(|p| host_client_addr(p).to_string());
    if let Some(p) = &primary {
        args.extend(["--replicaof", p, "6390"]);
    }
    nsenter(&lab.host(i), &args, log)
}

fn nsenter(ns: &str, args: &[&str], log: &Path) -> std::io::Result<Child> {
    // Run in the log's folder: a replica's RDB sync writes dump.rdb into its working directory.
    Command::new("nsenter")
        .current_dir(log.parent().unwrap_or(Path::new("/tmp")))
        .arg(format!("--net=/run/netns/{ns}"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log)?)
        .spawn()
}

fn main() -> ExitCode {
    let a = Args::parse();
    if let Err(e) = check(&a) {
        eprintln!("redis-nc-bench: {e}");
        return ExitCode::from(2);
    }
    match run(&a) {
        Ok((table, json)) => {
            if a.json {
                println!("{json}");
            } else {
                println!("{table}");
            }
            if let Some(p) = &a.out
                && let Err(e) = std::fs::write(p, &table)
            {
                eprintln!("redis-nc-bench: {}: {e}", p.display());
                return ExitCode::FAILURE;
            }
            // A round that failed after others: their figures were printed, the run failed.
            if json["failed"].is_string() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("redis-nc-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Illegal flag values (exit code 2).
fn check(a: &Args) -> Result<(), String> {
    nc_tools::app_lab::check_node_counts(&a.nodes)?;
    if a.conns.is_empty() || a.conns.contains(&0) {
        return Err("--clients: legal values are 1 and more".into());
    }
    if a.ops == 0 {
        return Err("--requests 0: legal values are 1 and more".into());
    }
    Ok(())
}

/// One round: each Redis-NC cluster size, then the baselines on the largest one's lab, in
/// `tmp`; what it measured goes into `m`.
fn measure_round(
    a: &Args,
    bins: &Bins,
    redis_nc: &Path,
    tmp: &Path,
    round: usize,
    m: &mut Rounds,
) -> Result<(), String> {
    // A row's connections, with the round when there are several.
    let label = |c: u64| {
        if a.rounds > 1 {
            format!("{c} (round {})", round + 1)
        } else {
            c.to_string()
        }
    };
    let max_n = a.nodes.iter().copied().max().unwrap_or(3).max(2);
    for &n in &a.nodes {
        let d = tmp.join(format!("nc{n}"));
        let gap = a.min_gap_us.map(|us| us * 1000);
        let extra: Vec<String> = a
            .proposals
            .map(|p| vec!["--proposals".into(), p.to_string()])
            .unwrap_or_default();
        let mut rl = RedisNcLab::start_tuned("ncrb", &d, n, bins, redis_nc, gap, &extra)
            .map_err(|e| e.to_string())?;
        let clients = rl.lab.clients();
        // Warm up (leader known, connections open), then measure at the leader's host.
        load(&clients, front(0), 500, 4, a.size, false)?;
        let pids = rl.pids();
        for &c in &a.conns {
            let before = stages(&clients, front(0))?;
            let by0 = cpu_by_program(&pids);
            let cpu0 = cpu_of(&pids);
            let measured = load(&clients, front(0), a.ops, c, a.size, false)?;
            let rate = measured.rate;
            let cpu_per_k = per_k(cpu0, cpu_of(&pids), a.ops);
            if n == max_n {
                let by = cpu_by_program(&pids)
                    .into_iter()
                    .map(|(k, v)| {
                        let was = by0.get(&k).copied().unwrap_or(0);
                        format!("{k} {:.1}", per_k(was, v, a.ops))
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                m.cpu_rows
                    .push(format!("| {} | {cpu_per_k:.1} | {by} |", label(c)));
            }
            if n == max_n {
                m.breakdown_rows
                    .push(breakdown(&label(c), before, stages(&clients, front(0))?));
            }
            eprintln!("Redis-NC n={n}, {c} connection(s): {rate:.0} SET/s");
            m.runs.push(Run::new(
                &format!("Redis-NC, n = {n}"),
                c,
                round,
                measured,
                cpu_per_k,
            ));
        }
        let stock_conns = a.conns.iter().copied().max().unwrap_or(50);
        if round == 0 && (n == max_n.min(3) || n == *a.nodes.last().unwrap_or(&3)) {
            // The stock tool against the same front.
            let out = Command::new("ip")
                .args(["netns", "exec", &clients, "redis-benchmark", "-h"])
                .arg(host_client_addr(0).to_string())
                .args(["-p", "6379", "-t", "set", "-q", "--csv"])
                .args([
                    "-n",
                    &a.ops.to_string(),
                    "-c",
                    &stock_conns.to_string(),
                    "-d",
                    &a.size.to_string(),
                ])
                .output()
                .map_err(|e| format!("redis-benchmark: {e}"))?;
            m.stock = format!(
                "`redis-benchmark -t set -n {} -c {} -d {}` against Redis-NC (n = {n}) front: {}",
                a.ops,
                stock_conns,
                a.size,
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .last()
                    .unwrap_or("(no output)")
            );
        }
        // Baselines on the largest lab: plain redis-server in host-0, and a replica in host-1,
        // with the Redis-NC cluster stopped first (its idle engines and fronts took CPU from
        // the baselines until the ninth session).
        if n == max_n {
            rl.stop_cluster();
            let primary = SocketAddrV4::new(host_client_addr(0), 6390);
            let p = baseline_redis(&rl.lab, 0, None, &d.join("primary.log"))
                .map_err(|e| e.to_string())?;
            let mut kill = vec![p];
            let res = (|kill: &mut Vec<Child>| -> Result<(), String> {
                load(&clients, primary, 500, 4, a.size, false)?;
                let primary_pid = vec![kill[0].id() as i32];
                for &c in &a.conns {
                    let cpu0 = cpu_of(&primary_pid);
                    let measured = load(&clients, primary, a.ops, c, a.size, false)?;
                    let cpu_per_k = per_k(cpu0, cpu_of(&primary_pid), a.ops);
                    eprintln!(
                        "redis-server unreplicated, {c} connection(s): {:.0} SET/s",
                        measured.rate
                    );
                    m.runs
                        .push(Run::new(UNREPLICATED, c, round, measured, cpu_per_k));
                }
                let r = baseline_redis(&rl.lab, 1, Some(0), &d.join("replica.log"))
                    .map_err(|e| e.to_string())?;
                kill.push(r);
                // Wait for the replica to connect (WAIT 1 0 must return 1).
                let mut c = connect_in(Some(clients.clone()), primary, Duration::from_secs(5))
                    .map_err(|e| e.to_string())?;
                let t0 = Instant::now();
                while c
                    .call(&[b"WAIT", b"1", b"100"])
                    .map_err(|e| e.to_string())?
                    != Value::Integer(1)
                {
                    if t0.elapsed() > Duration::from_secs(20) {
                        return Err("the replica did not connect".into());
                    }
                }
                let both: Vec<i32> = kill.iter().map(|k| k.id() as i32).collect();
                for &c in &a.conns {
                    let cpu0 = cpu_of(&both);
                    let measured = load(&clients, primary, a.ops, c, a.size, true)?;
                    let cpu_per_k = per_k(cpu0, cpu_of(&both), a.ops);
                    eprintln!(
                        "redis-server + replica, WAIT 1 0, {c} connection(s): {:.0} SET/s",
                        measured.rate
                    );
                    m.runs.push(Run::new(WAIT, c, round, measured, cpu_per_k));
                }
                Ok(())
            })(&mut kill);
            for mut k in kill {
                let _ = k.kill();
                let _ = k.wait();
            }
            res?;
        }
        drop(rl);
    }
    Ok(())
}

/// The tables, and the runs as one JSON object.
fn run(a: &Args) -> Result<(String, serde_json::Value), String> {
    if !nix::unistd::geteuid().is_root() {
        return Err("needs root (network namespaces, XDP)".into());
    }
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = me.parent().expect("a folder").to_path_buf();
    let bins = Bins {
        engine: dir.join("nc-engine"),
        soc_ctl: dir.join("soc-ctl"),
    };
    let redis_nc = dir.join("redis-nc");
    for p in [&bins.engine, &bins.soc_ctl, &redis_nc] {
        if !p.exists() {
            return Err(format!(
                "{} missing: cargo build --release -p soc-ctl -p host-app -p nc-tools",
                p.display()
            ));
        }
    }
    let scratch = nc_tools::app_lab::BenchScratch::new("redis-nc-bench", "ncrb")?;
    let tmp = scratch.dir.clone();
    let mut m = Rounds::default();
    let mut failed = None;
    for round in 0..a.rounds as usize {
        if a.rounds > 1 {
            eprintln!("round {} of {}", round + 1, a.rounds);
        }
        let r = measure_round(
            a,
            &bins,
            &redis_nc,
            &tmp.join(format!("round{round}")),
            round,
            &mut m,
        );
        match r {
            Ok(()) => {}
            // The rounds before it still count: they are reported, with the failure.
            Err(e) if round > 0 => {
                eprintln!("redis-nc-bench: round {}: {e}", round + 1);
                m.runs.retain(|r| r.round < round);
                failed = Some(format!(
                    "Round {} of {} failed ({e}); the figures are those of the {round} round(s) before it.\n",
                    round + 1,
                    a.rounds
                ));
                break;
            }
            Err(e) => return Err(e),
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let med = m.medians();
    if let Some(p) = &a.plot {
        let bars: Vec<(String, f64)> = med
            .iter()
            .map(|r| (format!("{} ({} conn.)", r.name, r.conns), r.rate))
            .collect();
        nc_tools::plot::bars(p, "SET throughput (same client, same lab)", "SET/s", &bars)?;
    }
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{} SETs of {} B per run, from the clients namespace, each connection one request at a time; Redis-NC measured at the leader's host front, early sends {} µs after the last send, at most {} proposals of a front in flight (0: each write proposed alone).\n",
        a.ops,
        a.size,
        a.min_gap_us
            .unwrap_or(soc_ctl::cluster::DEFAULT_MIN_GAP_NS / 1000),
        a.proposals.unwrap_or(host_app::front::DEFAULT_PROPOSALS)
    );
    if let Some(f) = &failed {
        let _ = writeln!(t, "{f}");
    }
    if a.rounds > 1 {
        let _ = writeln!(
            t,
            "{} rounds, each Redis-NC's clusters then the baselines: every figure below is the median over the rounds; each ratio is the median of the rounds' ratios, with their range.\n",
            a.rounds
        );
    }
    let _ = writeln!(
        t,
        "| system | connections | SET/s | p50 µs | p99 µs | max µs | SET/s × unreplicated redis | CPU ms / 1k SETs (servers, engines, fronts) |"
    );
    let _ = writeln!(
        t,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    let rate = |r: &Run| r.rate;
    let p50 = |r: &Run| r.p50;
    for r in &med {
        let x = m.ratios(&r.name, UNREPLICATED, r.conns, rate);
        let _ = writeln!(
            t,
            "| {} | {} | {:.0} | {:.1} | {:.1} | {:.1} | {} | {:.1} |",
            r.name,
            r.conns,
            r.rate,
            r.p50,
            r.p99,
            r.max,
            if x.is_empty() {
                "-".to_string()
            } else {
                ratio_text(&x)
            },
            r.cpu_per_k
        );
    }
    let retried: Vec<String> = med
        .iter()
        .filter(|r| r.tryagain > 0)
        .map(|r| format!("{}, {} connection(s): {}", r.name, r.conns, r.tryagain))
        .collect();
    let _ = writeln!(
        t,
        "\n`-TRYAGAIN` answers (each retried after 1 ms; the SET's latency includes its retries; summed over the rounds): {}",
        if retried.is_empty() {
            "none".to_string()
        } else {
            retried.join("; ")
        }
    );
    // The goals (issue 15), for the largest Redis-NC cluster measured: met when the median
    // over the rounds meets it.
    let big = a.nodes.iter().copied().max().unwrap_or(3);
    let nc = format!("Redis-NC, n = {big}");
    let goal = |x: &[f64], met: fn(f64) -> bool| {
        if met(median(x.to_vec())) {
            "met"
        } else {
            "missed"
        }
    };
    let _ = writeln!(t, "\nGoals, Redis-NC n = {big}:\n");
    let _ = writeln!(t, "| goal | measured | |");
    let _ = writeln!(t, "| --- | ---: | --- |");
    let lo = a.conns.iter().copied().min().unwrap_or(1);
    let hi = a.conns.iter().copied().max().unwrap_or(50);
    let x = m.ratios(&nc, UNREPLICATED, lo, p50);
    if !x.is_empty() {
        let _ = writeln!(
            t,
            "| {lo} connection(s): p50 ≤ 4 × redis-server's | {} × | {} |",
            ratio_text(&x),
            goal(&x, |v| v <= 4.0)
        );
    }
    let x = m.ratios(&nc, UNREPLICATED, hi, rate);
    if !x.is_empty() {
        let _ = writeln!(
            t,
            "| {hi} connections: SET/s ≥ 0.5 × redis-server's | {} × | {} |",
            ratio_text(&x),
            goal(&x, |v| v >= 0.5)
        );
    }
    let x = m.ratios(&nc, WAIT, hi, rate);
    if !x.is_empty() {
        let _ = writeln!(
            t,
            "| {hi} connections: SET/s ≥ 2 × redis-server + replica + WAIT | {} × | {} |",
            ratio_text(&x),
            goal(&x, |v| v >= 2.0)
        );
    }
    let max_n = a.nodes.iter().copied().max().unwrap_or(3).max(2);
    if !m.breakdown_rows.is_empty() {
        let _ = writeln!(
            t,
            "\nWhere a Redis-NC write spends its time (n = {max_n}, the leader's front, means over the run; INFO nanoconsensus `nc_stage_*`):\n"
        );
        let _ = writeln!(
            t,
            "| connections | writes | answered at the decision | writes per proposal | request → leader's OK µs (consensus) | OK → applied here µs (host path + apply loop; the writes that waited) | instances per apply write | apply write µs (redis-server) |"
        );
        let _ = writeln!(
            t,
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        for r in &m.breakdown_rows {
            let _ = writeln!(t, "{r}");
        }
    }
    if !m.cpu_rows.is_empty() {
        let _ = writeln!(
            t,
            "\nWhere Redis-NC's CPU goes (n = {max_n}, every node's processes, ms per 1,000 SETs, by program):\n"
        );
        let _ = writeln!(t, "| connections | all | by program |");
        let _ = writeln!(t, "| ---: | ---: | --- |");
        for r in &m.cpu_rows {
            let _ = writeln!(t, "{r}");
        }
    }
    if !m.stock.is_empty() {
        let _ = writeln!(t, "\n{}", m.stock);
    }
    let json = serde_json::json!({
        "failed": failed,
        "ops": a.ops,
        "value_bytes": a.size,
        "rounds": a.rounds,
        "runs": m
            .runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "system": r.name,
                    "connections": r.conns,
                    "round": r.round + 1,
                    "per_second": r.rate,
                    "p50_us": r.p50,
                    "p99_us": r.p99,
                    "max_us": r.max,
                    "cpu_ms_per_1k": r.cpu_per_k,
                    "tryagain": r.tryagain,
                })
            })
            .collect::<Vec<_>>(),
        "redis_benchmark": m.stock,
    });
    Ok((t, json))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, conns: u64, round: usize, rate: f64, p50: f64) -> Run {
        Run {
            name: name.into(),
            conns,
            round,
            rate,
            p50,
            p99: p50 * 2.0,
            max: p50 * 4.0,
            cpu_per_k: 10.0,
            tryagain: round as u64,
        }
    }

    #[test]
    fn ratios_pair_each_round_with_its_own_baseline_and_figures_are_medians() {
        let nc = "Redis-NC, n = 3";
        let m = Rounds {
            runs: vec![
                run(nc, 1, 0, 5_000.0, 160.0),
                run(UNREPLICATED, 1, 0, 25_000.0, 40.0),
                run(nc, 1, 1, 6_000.0, 150.0),
                run(UNREPLICATED, 1, 1, 30_000.0, 30.0),
                run(nc, 1, 2, 4_000.0, 200.0),
                run(UNREPLICATED, 1, 2, 20_000.0, 50.0),
                // A round whose baseline is missing gives no ratio.
                run(nc, 1, 3, 9_000.0, 100.0),
            ],
            ..Rounds::default()
        };
        assert_eq!(
            m.ratios(nc, UNREPLICATED, 1, |r| r.rate),
            vec![0.2, 0.2, 0.2]
        );
        assert_eq!(
            m.ratios(nc, UNREPLICATED, 1, |r| r.p50),
            vec![4.0, 5.0, 4.0]
        );
        assert!(m.ratios(nc, WAIT, 1, |r| r.rate).is_empty());
        let med = m.medians();
        assert_eq!(med.len(), 2);
        assert_eq!(
            (med[0].name.as_str(), med[0].rate, med[0].p50),
            (nc, 5_500.0, 155.0)
        );
        assert_eq!(med[0].tryagain, 1 + 2 + 3);
        assert_eq!(
            (med[1].name.as_str(), med[1].rate, med[1].p50),
            (UNREPLICATED, 25_000.0, 40.0)
        );
    }
}
