//! nc-lab: the Nano-consensus testbed in network namespaces, its demo and its benchmarks.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use nc_tools::demo::{self, Bins, DemoOpts};
use nc_tools::netlab::{Lab, LabError, TreeName};

/// The Nano-consensus lab: per node a nic-I and a host-I namespace (joined by a veth, the PCIe
/// stand-in), two bridges as the two multicast trees, a clients namespace. As root it uses
/// namespaces and IP multicast; otherwise the same cluster runs on loopback.
#[derive(Parser)]
#[command(name = "nc-lab", version)]
struct Args {
    /// Prefix of every namespace the lab creates (and the only ones `down` deletes).
    #[arg(long, default_value = "ncl", global = true)]
    prefix: String,
    /// State folder (cluster.toml, engine logs, pids, control sockets)
    /// [default: $TMPDIR/nc-lab-<prefix>-<uid>].
    #[arg(long, global = true)]
    state: Option<PathBuf>,
    /// Run on loopback even as root (no namespaces).
    #[arg(long, global = true)]
    loopback: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum AppOp {
    /// Start it (idempotent lab; the engines, then the applications).
    Up {
        #[arg(long, default_value_t = 3)]
        nodes: u8,
    },
    /// Each node's state.
    Status {
        /// Print one JSON array (per node its figures, or the error it answered with).
        #[arg(long)]
        json: bool,
    },
    /// Stop everything and delete the lab's state.
    Down,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build the testbed for N nodes (idempotent) and write its cluster.toml.
    Up {
        #[arg(long, default_value_t = 3)]
        nodes: u8,
    },
    /// Stop the lab's engines and delete its namespaces and state (idempotent).
    Down,
    /// Start engines on the lab, configure them and START the cluster.
    Start {
        /// Nodes to start [default: all].
        #[arg(long, value_delimiter = ',')]
        nodes: Vec<u8>,
    },
    /// Which engines run, their roles and counters.
    Status {
        /// Print one JSON array: per node `running` and the engine's whole status.
        #[arg(long)]
        json: bool,
    },
    /// A Redis-NC cluster on loopback for stock Redis clients: `up` starts the engines and a
    /// `redis-nc` (with its redis-server) per node and prints the `redis-cli` lines; `status`
    /// shows each front's INFO nanoconsensus; `down` stops everything.
    Redis {
        #[command(subcommand)]
        op: AppOp,
        /// Node i's front listens on 127.0.0.1:PORT_BASE+i.
        #[arg(long, global = true, default_value_t = 6380)]
        port_base: u16,
        /// The fronts' password, on this file's first line: `up` starts every redis-nc with
        /// --requirepass-file PATH (clients must AUTH; redis-cli: REDISCLI_AUTH=...), `up` and
        /// `status` authenticate with it. Without it, REDIS_NC_PASSWORD if set (the fronts
        /// inherit it). Never a password on a command line.
        #[arg(long, global = true, value_name = "PATH")]
        requirepass_file: Option<PathBuf>,
    },
    /// A ZooKeeper-NC cluster on loopback: `up` starts the engines and a `zk-nc node` (with its
    /// standalone ZooKeeper and writer front) per node and prints how to write (`zk-nc write
    /// --front`) and read (`zkCli.sh -server`); `status` shows each front's figures; `down`
    /// stops everything. The nodes' ZooKeepers refuse writes that do not come from the apply
    /// loop (NoAuth). Writer fronts require ZK_NC_PASSWORD when it is set (they inherit it).
    Zk {
        #[command(subcommand)]
        op: AppOp,
        /// Node i's ZooKeeper listens on 127.0.0.1:ZK_PORT_BASE+i.
        #[arg(long, global = true, default_value_t = 2181)]
        zk_port_base: u16,
        /// Node i's writer front listens on 127.0.0.1:FRONT_PORT_BASE+i.
        #[arg(long, global = true, default_value_t = 2191)]
        front_port_base: u16,
    },
    /// Inject a fault.
    Fault {
        #[command(subcommand)]
        what: Fault,
    },
    /// The main job: 3 nodes, client load with a progress bar, the leader killed midway,
    /// a fourth node joining; prints the figures and checks that all logs agree.
    Demo {
        #[arg(long, default_value_t = 3)]
        nodes: u8,
        #[arg(long, default_value_t = 60_000)]
        requests: u64,
        /// Outstanding client requests.
        #[arg(long, default_value_t = 8)]
        window: usize,
        /// Request payload bytes.
        #[arg(long, default_value_t = 64)]
        payload: usize,
        /// Leave the lab up afterwards (for `nc-lab status`, `soc-ctl`, ...).
        #[arg(long)]
        keep: bool,
    },
    /// Faults under load for minutes: the leader SIGKILLed at random moments (then restarted:
    /// it joins again), tree links flapped, nodes stalled (they come back by themselves).
    /// Checks after every fault that the cluster serves again, and at the end that the live
    /// logs agree and every acknowledged request is in them; then a fault-free phase at full
    /// load samples each engine's resident memory (flat: the log is bounded).
    Soak {
        #[arg(long, default_value_t = 3)]
        nodes: u8,
        /// Leader kills.
        #[arg(long, default_value_t = 100)]
        kills: u32,
        /// Tree link flaps (namespace lab only; 0 on loopback).
        #[arg(long, default_value_t = 20)]
        flaps: u32,
        /// Node stalls (SIGSTOP for 1.5–4.5 timeouts).
        #[arg(long, default_value_t = 10)]
        stalls: u32,
        /// The fault phase lasts at least this many seconds (faults are spread over it).
        #[arg(long, default_value_t = 300)]
        fault_secs: u64,
        /// Seconds of the fault-free memory phase (0 skips it).
        #[arg(long, default_value_t = 600)]
        memory_secs: u64,
        /// Client threads.
        #[arg(long, default_value_t = 2)]
        clients: usize,
        /// Outstanding requests per client.
        #[arg(long, default_value_t = 8)]
        window: usize,
        /// Request payload bytes.
        #[arg(long, default_value_t = 64)]
        payload: usize,
        /// Seed of the fault schedule [default: from the clock; printed].
        #[arg(long)]
        seed: Option<u64>,
        /// Seconds without an acknowledged request after a fault before the cluster counts as stuck.
        #[arg(long, default_value_t = 10)]
        stuck_secs: u64,
        /// Also write the summary to this file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Instances each engine's log keeps (nc-engine --log-keep) [default: the engine's].
        /// The harvester must read every instance before the logs drop it: short runs of debug
        /// builds (the smoke test) keep all of them.
        #[arg(long)]
        log_keep: Option<u64>,
        /// The early-send gap in µs (cluster.toml `timing.min_gap_ns`; 0 = off). 200 µs, not
        /// the lab's 20: at 20 µs the cluster decides ~20k one-request instances a second,
        /// more than the harvester reads before the bounded logs drop them (safety is checked
        /// on what it reads, so it must read everything); 200 µs decides more requests a
        /// second (~48k on 2 cores) in fewer, larger instances.
        #[arg(long, default_value_t = 200)]
        min_gap_us: u64,
    },
    /// LOWI against a raft-rs baseline on the same lab: sweeps client windows (offered load)
    /// and LOWI batch sizes; writes results.md and latency-throughput.svg; then one-way latency
    /// idle and with CPU stress.
    Bench {
        #[arg(long, default_value_t = 20_000)]
        requests: u64,
        #[arg(long, value_delimiter = ',', default_value = "1,4,16,64")]
        windows: Vec<usize>,
        #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
        batches: Vec<u8>,
        #[arg(long, default_value_t = 64)]
        payload: usize,
        /// Seconds per interaction-stability run (0 skips it).
        #[arg(long, default_value_t = 10)]
        stability_secs: u64,
        #[arg(long, default_value = "target/nc-lab-bench")]
        out: PathBuf,
        /// Client threads sharing each window (one client thread cannot saturate the leader).
        #[arg(long, default_value_t = 4)]
        clients: usize,
        /// LOWI's early-send gap in µs (cluster.toml `timing.min_gap_ns`; 0 = off: every
        /// send waits for the 1 ms loop). Default: the lab's (gen-config's: 20).
        #[arg(long)]
        min_gap_us: Option<u64>,
        /// Cluster sizes, each on a lab of its own (3,5,9: how each system's cost grows
        /// with n).
        #[arg(long, value_delimiter = ',', default_value = "3", value_parser = clap::value_parser!(u8).range(2..=9))]
        nodes: Vec<u8>,
        /// LOWI with packet tags (cluster.toml [auth], mode required, a fresh key): off, on,
        /// or both side by side (prints the cost of tags).
        #[arg(long, value_enum, default_value = "off")]
        tags: nc_tools::bench::Tags,
        /// Rounds: each runs every LOWI sweep and then Raft's again, so that both systems
        /// meet the same moments of a shared machine; the tables show each figure's median
        /// over the rounds and each ratio's median with its range (ratios of the same round).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
        rounds: u32,
    },
}

#[derive(Subcommand)]
enum Fault {
    /// Take node I's interface on a tree down.
    LinkDown {
        #[arg(long)]
        node: u8,
        #[arg(long, value_enum)]
        tree: TreeName,
    },
    /// Bring it back up.
    LinkUp {
        #[arg(long)]
        node: u8,
        #[arg(long, value_enum)]
        tree: TreeName,
    },
    /// kill -9 node I's engine.
    Kill {
        #[arg(long)]
        node: u8,
    },
    /// Drop P percent of what node I receives on a tree (nftables; 0 removes the rule).
    Drop {
        #[arg(long)]
        node: u8,
        #[arg(long, value_enum)]
        tree: TreeName,
        #[arg(long)]
        rate: u8,
    },
    /// SIGSTOP node I's engine for X ms, then SIGCONT (a synchrony violation on purpose).
    Stall {
        #[arg(long)]
        node: u8,
        #[arg(long)]
        ms: u64,
    },
}

fn main() -> ExitCode {
    let a = Args::parse();
    let mut lab = Lab::new(&a.prefix, a.state.clone());
    lab.netns &= !a.loopback;
    match run(&lab, a.cmd) {
        Ok(code) => code,
        Err(Stop::Usage(e)) => {
            eprintln!("nc-lab: {e}");
            ExitCode::from(2)
        }
        Err(Stop::Fail(e)) => {
            eprintln!("nc-lab: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Why a command stopped: an illegal flag value or configuration (exit code 2), or a failure
/// (exit code 1).
enum Stop {
    Usage(String),
    Fail(LabError),
}

impl From<LabError> for Stop {
    fn from(e: LabError) -> Stop {
        Stop::Fail(e)
    }
}

/// Node i's port is `base + i` for i < n: refused (exit code 2) if that leaves the port range.
fn ports_fit(flag: &str, base: u16, n: usize) -> Result<(), Stop> {
    match base.checked_add(n.saturating_sub(1) as u16) {
        Some(_) if n <= u16::MAX as usize => Ok(()),
        _ => Err(Stop::Usage(format!(
            "{flag} {base}: {n} node(s) need ports {base}..{base}+{}, beyond 65535",
            n.saturating_sub(1)
        ))),
    }
}

/// `--nodes N` of `up`: refused (exit code 2) before anything of a running lab is touched.
fn node_count(n: u8) -> Result<(), Stop> {
    if n == 0 || u32::from(n) > proto::regs::MAX_NODES {
        return Err(Stop::Usage(format!(
            "--nodes {n}: legal values are 1..={}",
            proto::regs::MAX_NODES
        )));
    }
    Ok(())
}

/// ZK_NC_PASSWORD is configuration: unusable, it is refused (exit code 2).
fn zk_password() -> Result<(), Stop> {
    nc_tools::app_lab::zk_password()
        .map(drop)
        .map_err(|e| Stop::Usage(e.0))
}

/// Print `v` (one JSON document) on stdout.
fn print_json(v: &serde_json::Value) {
    println!("{v}");
}

/// On Ctrl-C or SIGTERM: stop the lab's processes and delete its namespaces, then exit 130.
fn clean_up_on_interrupt(lab: &Lab) -> Result<(), LabError> {
    let lab = lab.clone();
    ctrlc::set_handler(move || {
        eprintln!("\nnc-lab: interrupted; cleaning up");
        let _ = lab.down();
        std::process::exit(130);
    })
    .map_err(|e| LabError(format!("Ctrl-C handler: {e}")))
}

/// Say so when the lab's engines run without real-time priority (and so with a wider Δ).
fn timing_note(lab: &Lab) {
    if let Some(n) = lab.load().ok().and_then(|f| lab.timing_note(&f)) {
        println!("{n}");
    }
}

fn run(lab: &Lab, cmd: Cmd) -> Result<ExitCode, Stop> {
    match cmd {
        Cmd::Up { nodes } => {
            node_count(nodes)?;
            let f = lab.up(nodes)?;
            println!(
                "lab '{}' up: {} nodes, {}; cluster file {}",
                lab.prefix,
                f.nodes.len(),
                if lab.netns {
                    "namespaces + IP multicast"
                } else {
                    "loopback (not root)"
                },
                lab.cfg_path().display()
            );
            if let Some(n) = lab.timing_note(&f) {
                println!("{n}");
            }
        }
        Cmd::Down => {
            lab.down()?;
            println!("lab '{}' down", lab.prefix);
        }
        Cmd::Redis {
            op,
            port_base,
            requirepass_file,
        } => {
            // Always on loopback: stock clients on this machine reach the fronts directly.
            let lab = &lab.clone_loopback();
            // The password file is configuration: unreadable, it is refused (exit code 2).
            let password = || {
                nc_tools::app_lab::redis_password(requirepass_file.as_deref())
                    .map_err(|e| Stop::Usage(e.0))
            };
            match op {
                AppOp::Up { nodes } => {
                    node_count(nodes)?;
                    ports_fit("--port-base", port_base, nodes as usize)?;
                    password()?;
                    let dir = std::env::current_exe()
                        .map_err(|e| LabError(e.to_string()))?
                        .parent()
                        .map(std::path::Path::to_path_buf)
                        .unwrap_or_default();
                    let bins = Bins::beside_me()?;
                    let lines = nc_tools::app_lab::redis_up(
                        lab,
                        &bins,
                        &dir.join("redis-nc"),
                        nodes,
                        port_base,
                        requirepass_file.as_deref(),
                    )?;
                    println!(
                        "Redis-NC up: {nodes} nodes on loopback (state in {}); use any front:",
                        lab.dir.display()
                    );
                    for l in lines {
                        println!("  {l}");
                    }
                    if let Some(f) = &requirepass_file {
                        println!(
                            "the fronts require AUTH; for redis-cli: export REDISCLI_AUTH=\"$(head -n1 {})\"",
                            f.display()
                        );
                    } else if std::env::var_os(host_app::auth::REDIS_ENV).is_some() {
                        println!(
                            "the fronts require AUTH ({}); for redis-cli: export REDISCLI_AUTH=\"${}\"",
                            host_app::auth::REDIS_ENV,
                            host_app::auth::REDIS_ENV
                        );
                    }
                    timing_note(lab);
                    println!("stop it with: nc-lab redis down");
                }
                AppOp::Status { json } => {
                    let password = password()?;
                    let n = lab.load()?.nodes.len();
                    ports_fit("--port-base", port_base, n)?;
                    let all = nc_tools::app_lab::redis_status(lab, port_base, password.as_ref())?;
                    print_status(&all, json);
                }
                AppOp::Down => {
                    lab.down()?;
                    println!("Redis-NC on lab '{}' down", lab.prefix);
                }
            }
        }
        Cmd::Zk {
            op,
            zk_port_base,
            front_port_base,
        } => {
            // Always on loopback: zkCli.sh and zk-nc on this machine reach the nodes directly.
            let lab = &lab.clone_loopback();
            match op {
                AppOp::Up { nodes } => {
                    node_count(nodes)?;
                    ports_fit("--zk-port-base", zk_port_base, nodes as usize)?;
                    ports_fit("--front-port-base", front_port_base, nodes as usize)?;
                    zk_password()?;
                    let dir = std::env::current_exe()
                        .map_err(|e| LabError(e.to_string()))?
                        .parent()
                        .map(std::path::Path::to_path_buf)
                        .unwrap_or_default();
                    let lines = nc_tools::app_lab::zk_up(
                        lab,
                        &Bins::beside_me()?,
                        &dir.join("zk-nc"),
                        nodes,
                        zk_port_base,
                        front_port_base,
                    )?;
                    println!(
                        "ZooKeeper-NC up: {nodes} nodes on loopback (state in {})",
                        lab.dir.display()
                    );
                    for l in lines {
                        println!("  {l}");
                    }
                    timing_note(lab);
                    println!("stop it with: nc-lab zk down");
                }
                AppOp::Status { json } => {
                    zk_password()?;
                    let n = lab.load()?.nodes.len();
                    ports_fit("--front-port-base", front_port_base, n)?;
                    let all = nc_tools::app_lab::zk_status(lab, front_port_base)?;
                    print_status(&all, json);
                }
                AppOp::Down => {
                    lab.down()?;
                    println!("ZooKeeper-NC on lab '{}' down", lab.prefix);
                }
            }
        }
        Cmd::Start { nodes } => {
            let f = lab.load()?;
            if let Some(i) = nodes.iter().find(|&&i| i as usize >= f.nodes.len()) {
                return Err(Stop::Usage(format!(
                    "--nodes: the lab has nodes 0..{}, no node {i}",
                    f.nodes.len()
                )));
            }
            let nodes = if nodes.is_empty() {
                (0..f.nodes.len() as u8).collect()
            } else {
                nodes
            };
            demo::start_cluster(lab, &Bins::beside_me()?, &nodes)?;
            println!(
                "started nodes {nodes:?}; control sockets in {}",
                lab.dir.display()
            );
        }
        Cmd::Status { json } => {
            let f = lab.load()?;
            let mut all = Vec::new();
            for i in 0..f.nodes.len() as u8 {
                match demo::request(lab, i, "status") {
                    Ok(s) if json => {
                        all.push(serde_json::json!({"node": i, "running": true, "status": s}))
                    }
                    Ok(s) => println!(
                        "node {i}: {} epoch {} leader {} instance {} delivered {} net_faults {} late_ticks {}",
                        s["state"],
                        s["epoch"],
                        s["leader"],
                        s["last_decided"],
                        s["counters"]["delivered"],
                        s["counters"]["net_faults"],
                        s["counters"]["late_ticks"]
                    ),
                    Err(_) if json => all.push(serde_json::json!({"node": i, "running": false})),
                    Err(_) => println!("node {i}: not running"),
                }
            }
            if json {
                print_json(&serde_json::Value::Array(all));
            }
        }
        Cmd::Fault { what } => match what {
            Fault::LinkDown { node, tree } => lab.link(node, tree, false)?,
            Fault::LinkUp { node, tree } => lab.link(node, tree, true)?,
            Fault::Kill { node } => {
                if !lab.running(node) {
                    return Err(LabError(format!("node {node}'s engine is not running")).into());
                }
                lab.kill(node)
            }
            Fault::Drop { node, tree, rate } => lab.drop_rate(node, tree, rate)?,
            Fault::Stall { node, ms } => lab.stall(node, ms)?,
        },
        Cmd::Demo {
            nodes,
            requests,
            window,
            payload,
            keep,
        } => {
            if !(2..=62).contains(&nodes) {
                return Err(Stop::Usage(format!(
                    "--nodes {nodes}: legal values are 2..=62 (one more joins)"
                )));
            }
            if window == 0 {
                return Err(Stop::Usage(
                    "--window 0: legal values are 1 and more".into(),
                ));
            }
            let bins = Bins::beside_me()?;
            clean_up_on_interrupt(lab)?;
            lab.up(nodes + 1)?;
            let r = demo::run_demo(
                lab,
                &bins,
                &DemoOpts {
                    nodes,
                    requests,
                    window,
                    payload,
                    progress: true,
                },
            );
            if !keep {
                lab.down()?;
            }
            let r = r?;
            for l in &r.lines {
                println!("{l}");
            }
            return Ok(if r.agree {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
        Cmd::Soak {
            nodes,
            kills,
            flaps,
            stalls,
            fault_secs,
            memory_secs,
            clients,
            window,
            payload,
            seed,
            stuck_secs,
            out,
            log_keep,
            min_gap_us,
        } => {
            let mut with_keep = lab.clone();
            if let Some(k) = log_keep {
                with_keep
                    .engine_args
                    .extend(["--log-keep".to_string(), k.to_string()]);
            }
            let lab = &with_keep;
            if !(2..=63).contains(&nodes) {
                return Err(Stop::Usage(format!(
                    "--nodes {nodes}: legal values are 2..=63"
                )));
            }
            if clients == 0 || window == 0 {
                return Err(Stop::Usage(
                    "--clients and --window: legal values are 1 and more".into(),
                ));
            }
            if flaps > 0 && !(lab.netns && nc_tools::netlab::is_root()) {
                return Err(Stop::Usage(format!(
                    "--flaps {flaps}: link flaps need the namespace lab (root); use --flaps 0 on loopback"
                )));
            }
            let seed = seed.unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            });
            let bins = Bins::beside_me()?;
            clean_up_on_interrupt(lab)?;
            lab.up(nodes)?;
            {
                let mut f = lab.load()?;
                nc_tools::netlab::set_min_gap(&mut f.timing, min_gap_us.saturating_mul(1000));
                if let Err(e) = f.validate() {
                    let _ = lab.down();
                    return Err(Stop::Usage(format!("--min-gap-us {min_gap_us}: {e}")));
                }
                std::fs::write(lab.cfg_path(), f.to_toml()).map_err(LabError::from)?;
            }
            let r = nc_tools::soak::run_soak(
                lab,
                &bins,
                &nc_tools::soak::SoakOpts {
                    nodes,
                    kills,
                    flaps,
                    stalls,
                    fault_secs,
                    memory_secs,
                    clients,
                    window,
                    payload,
                    seed,
                    progress: true,
                    stuck_after: std::time::Duration::from_secs(stuck_secs.max(1)),
                },
            );
            if r.as_ref().map_or(true, |r| !r.ok) {
                // Keep the engines' logs of a failed soak (the lab's state folder goes with it).
                let keep = std::env::temp_dir().join(format!("nc-lab-soak-{seed}"));
                let _ = std::fs::create_dir_all(&keep);
                for i in 0..nodes {
                    let _ = std::fs::copy(lab.engine_log(i), keep.join(format!("e{i}.log")));
                }
                eprintln!("nc-lab: the engines' logs are in {}", keep.display());
            }
            lab.down()?;
            let r = r?;
            let text = r.lines.join("\n");
            println!("{text}");
            if let Some(p) = out {
                std::fs::write(&p, format!("{text}\n"))
                    .map_err(|e| LabError(format!("{}: {e}", p.display())))?;
            }
            println!("soak: {}", if r.ok { "PASSED" } else { "FAILED" });
            return Ok(if r.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            });
        }
        Cmd::Bench {
            requests,
            windows,
            batches,
            payload,
            stability_secs,
            out,
            clients,
            min_gap_us,
            nodes,
            tags,
            rounds,
        } => {
            if batches.contains(&0) {
                return Err(Stop::Usage("--batches 0: legal values are 1..=255".into()));
            }
            if windows.contains(&0) {
                return Err(Stop::Usage(
                    "--windows 0: legal values are 1 and more".into(),
                ));
            }
            if clients == 0 {
                return Err(Stop::Usage(
                    "--clients 0: legal values are 1 and more".into(),
                ));
            }
            let bins = Bins::beside_me()?;
            let raft = bins.engine.with_file_name("nc-raft");
            if !raft.exists() {
                return Err(LabError(format!(
                    "{} is missing: cargo build --release -p nc-tools",
                    raft.display()
                ))
                .into());
            }
            clean_up_on_interrupt(lab)?;
            let r = nc_tools::bench::run_bench(
                lab,
                &bins,
                &raft,
                &nc_tools::bench::BenchOpts {
                    requests,
                    windows,
                    batches,
                    payload,
                    stability_secs,
                    out: out.clone(),
                    clients,
                    min_gap_ns: min_gap_us.map(|u| u * 1000),
                    nodes,
                    tags,
                    rounds: rounds as usize,
                },
            );
            lab.down()?;
            println!("{}", r?);
            println!("(also in {})", out.join("results.md").display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The lines of `redis status` / `zk status`, or with `json` one JSON array of them.
fn print_status(all: &[nc_tools::app_lab::NodeStatus], json: bool) {
    if json {
        print_json(&serde_json::Value::Array(
            all.iter().map(|s| s.json.clone()).collect(),
        ));
    } else {
        for s in all {
            println!("{}", s.text);
        }
    }
}
