//! `nc-sim`: run the deterministic cluster simulator over many seeds and check every run.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser;
use testbench::campaign::campaign;
use testbench::faults::{CLASSES, Faults};
use testbench::sim::{EarlySends, SimConfig, run};

/// `println!` that ends the program quietly when stdout is closed (e.g. piped into `head`).
macro_rules! say {
    ($($t:tt)*) => {
        if writeln!(std::io::stdout().lock(), $($t)*).is_err() {
            std::process::exit(0);
        }
    };
}

#[derive(Parser, Debug)]
#[command(
    name = "nc-sim",
    version,
    about = "Deterministic Nano-consensus cluster simulator: runs seeds with injected faults and checks \
             agreement, validity, integrity, liveness and safe exit on every run",
    after_help = fault_help()
)]
struct Args {
    /// Number of nodes n (1..=64).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=64))]
    nodes: u8,
    /// Number of redundant multicast trees |G| (1..=4).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=4))]
    trees: u8,
    /// How many seeds to run.
    #[arg(long, default_value_t = 1000)]
    seeds: u64,
    /// First seed of the campaign.
    #[arg(long, default_value_t = 0)]
    first_seed: u64,
    /// Replay exactly this seed and print its event trace.
    #[arg(long)]
    seed: Option<u64>,
    /// Fault classes to draw from: a comma-separated list, `all` or `none`.
    #[arg(long, default_value = "all", value_parser = Faults::parse)]
    faults: Faults,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// With --seed: print only the verdict, not the trace.
    #[arg(long)]
    quiet: bool,
    /// Plant a deliberate protocol bug in every node to watch the checker fail
    /// (needs `--features mutations`): deliver-on-first-copy, skip-timeout-reset, skip-lease,
    /// recover-without-majority.
    #[arg(long, value_parser = ["deliver-on-first-copy", "skip-timeout-reset", "skip-lease", "recover-without-majority"])]
    mutate: Option<String>,
    /// Early sends (`min_gap`): off, on (every seed draws a min_gap), or mixed (half the seeds).
    #[arg(long, default_value = "mixed", value_parser = EarlySends::parse)]
    early_sends: EarlySends,
    /// Packet tags (auth_mode 2): off, on (every seed's nodes and clients tag), or mixed.
    #[arg(long, default_value = "mixed", value_parser = EarlySends::parse)]
    auth: EarlySends,
}

#[cfg(feature = "mutations")]
fn mutation_hook(name: Option<&str>) -> Result<Option<fn(&mut proto::node::Node)>, String> {
    fn first_copy(n: &mut proto::node::Node) {
        n.mutations.deliver_on_first_copy = true;
    }
    fn no_reset(n: &mut proto::node::Node) {
        n.mutations.skip_timeout_reset = true;
    }
    fn no_lease(n: &mut proto::node::Node) {
        n.mutations.skip_lease = true;
    }
    fn no_majority(n: &mut proto::node::Node) {
        n.mutations.recover_without_majority = true;
    }
    Ok(match name {
        None => None,
        Some("deliver-on-first-copy") => Some(first_copy),
        Some("skip-lease") => Some(no_lease),
        Some("recover-without-majority") => Some(no_majority),
        Some(_) => Some(no_reset),
    })
}

#[cfg(not(feature = "mutations"))]
fn mutation_hook(name: Option<&str>) -> Result<Option<fn(&mut proto::node::Node)>, String> {
    match name {
        None => Ok(None),
        Some(_) => Err("--mutate needs a build with `--features mutations`".into()),
    }
}

fn fault_help() -> String {
    let mut s = String::from("Fault classes:\n");
    for (name, _, doc) in CLASSES {
        s.push_str(&format!("  {name:<14} {doc}\n"));
    }
    s.push_str("\nThe last line is always `seeds=K violations=V`; the exit code is 1 when V > 0.");
    s
}

fn replay_cmd(a: &Args, seed: u64) -> String {
    let (features, mutate) = match &a.mutate {
        Some(m) => (" --features mutations", format!(" --mutate {m}")),
        None => ("", String::new()),
    };
    format!(
        "cargo run --release -p nc-testbench{features} --bin nc-sim -- --nodes {} --trees {} --faults {} --early-sends {} --auth {}{mutate} --seed {seed}",
        a.nodes,
        a.trees,
        a.faults,
        a.early_sends.name(),
        a.auth.name()
    )
}

fn main() -> ExitCode {
    let a = Args::parse();
    let node_hook = match mutation_hook(a.mutate.as_deref()) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("nc-sim: {e}");
            return ExitCode::from(2);
        }
    };
    let cfg = SimConfig {
        nodes: a.nodes,
        trees: a.trees,
        faults: a.faults,
        trace: a.seed.is_some() && !a.quiet,
        node_hook,
        early: a.early_sends,
        auth: a.auth,
    };
    if let Some(seed) = a.seed {
        let r = run(seed, &cfg);
        let c = &r.timing.cfg;
        say!(
            "seed {seed}: n={} |G|={} loop_period={} min_gap={} auth_mode={} timeout={} delta={} drift={} fifo_depth={} batch_max={} clients={}x{}",
            c.node_count,
            c.trees,
            c.loop_period,
            c.min_gap,
            c.auth_mode,
            c.timeout,
            c.delta,
            c.drift,
            c.fifo_depth,
            c.batch_max,
            r.timing.clients,
            r.timing.requests
        );
        say!("faults: {}", r.plan);
        for line in &r.trace {
            say!("{line}");
        }
        let h = &r.history;
        say!(
            "events={} decisions={} oks={} net_faults={} synchrony_violation_injected={} redundancy_exceeded={} safety_claimed={} liveness_claimed={}",
            h.events,
            h.decisions.len(),
            h.oks.len(),
            h.net_faults.iter().sum::<u32>(),
            h.late_injected,
            h.redundancy_exceeded,
            r.verdict.safety_claimed,
            r.verdict.liveness_claimed
        );
        for u in &r.verdict.unclaimed {
            say!("not claimed (synchrony violation or redundancy exceeded injected): {u}");
        }
        for v in &r.verdict.violations {
            say!("VIOLATION: {v}");
        }
        say!("seeds=1 violations={}", r.verdict.violations.len().min(1));
        return if r.verdict.violations.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let start = std::time::Instant::now();
    let s = campaign(&cfg, a.first_seed, a.seeds, threads);
    let secs = start.elapsed().as_secs_f64();
    for r in &s.failed {
        say!("FAIL seed={}: {}", r.seed, r.verdict.violations.join("; "));
        say!("  replay: {}", replay_cmd(&a, r.seed));
    }
    say!(
        "n={} |G|={} faults={} safety_claimed={} liveness_claimed={} recovery_claimed={} rejoins={} gap_fills={} recoveries={} \
         max_outage={:.1} timeouts (seed {}) synchrony_violations_injected={} (detected by a node: {}) \
         redundancy_exceeded={} unclaimed_failures={} decisions={} net_faults={} events={} time={secs:.1}s",
        a.nodes,
        a.trees,
        a.faults,
        s.safety_claimed,
        s.liveness_claimed,
        s.recovery_claimed,
        s.rejoins,
        s.gap_fills,
        s.recoveries,
        s.max_outage_timeouts.0,
        s.max_outage_timeouts.1,
        s.late_injected,
        s.late_detected,
        s.redundancy_exceeded,
        s.unclaimed_failures,
        s.decisions,
        s.net_faults,
        s.events
    );
    say!("seeds={} violations={}", s.seeds, s.failed.len());
    if s.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
