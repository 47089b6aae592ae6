//! Running many seeds, in parallel, with a deterministic report.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sim::{RunReport, SimConfig, run};

/// Totals over a campaign.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Seeds run.
    pub seeds: u64,
    /// Seeds whose promised properties failed.
    pub failed: Vec<RunReport>,
    /// Runs that promised safety.
    pub safety_claimed: u64,
    /// Runs that promised liveness.
    pub liveness_claimed: u64,
    /// Runs with an injected synchrony violation.
    pub late_injected: u64,
    /// Of those, runs where some node reported a violation or made a safe exit.
    pub late_detected: u64,
    /// Runs where redundancy was exceeded (every copy of a message lost to a live node).
    pub redundancy_exceeded: u64,
    /// Unclaimed property failures (in runs that did not promise them).
    pub unclaimed_failures: u64,
    /// Decisions made (all nodes).
    pub decisions: u64,
    /// NET-FAULT safe exits.
    pub net_faults: u64,
    /// Events simulated.
    pub events: u64,
    /// Runs that promised recovery (network faults that healed, a majority able to recover).
    pub recovery_claimed: u64,
    /// Rejoins after a safe exit, and recoveries (a node elected by a recovery round led).
    pub rejoins: u64,
    /// Gap fills during recoveries.
    pub gap_fills: u64,
    /// Recoveries.
    pub recoveries: u64,
    /// The longest outage of any node (safe exit → back in service), in timeouts, over runs
    /// that promised recovery, and its seed.
    pub max_outage_timeouts: (f64, u64),
}

/// Run seeds `first..first + count` on `threads` threads.
pub fn campaign(cfg: &SimConfig, first: u64, count: u64, threads: usize) -> Summary {
    let next = AtomicU64::new(first);
    let total = Mutex::new(Summary::default());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                let mut local = Summary::default();
                loop {
                    let seed = next.fetch_add(1, Ordering::Relaxed);
                    if seed >= first + count {
                        break;
                    }
                    let r = run(seed, cfg);
                    add(&mut local, r);
                }
                merge(
                    &mut total.lock().expect("no thread panics holding the lock"),
                    local,
                );
            });
        }
    });
    let mut s = total.into_inner().expect("no thread panicked");
    s.failed.sort_by_key(|r| r.seed);
    s
}

fn add(s: &mut Summary, r: RunReport) {
    let h = &r.history;
    s.seeds += 1;
    s.safety_claimed += r.verdict.safety_claimed as u64;
    s.liveness_claimed += r.verdict.liveness_claimed as u64;
    s.late_injected += h.late_injected as u64;
    s.late_detected += (h.late_injected
        && (h.violations_seen.iter().any(|&v| v > 0) || h.net_faults.iter().any(|&f| f > 0)))
        as u64;
    s.redundancy_exceeded += h.redundancy_exceeded as u64;
    s.unclaimed_failures += (!r.verdict.unclaimed.is_empty()) as u64;
    s.decisions += h.decisions.len() as u64;
    s.net_faults += h.net_faults.iter().map(|&f| f as u64).sum::<u64>();
    s.events += h.events;
    s.recovery_claimed += r.verdict.recovery_claimed as u64;
    s.rejoins += h.rejoins;
    s.gap_fills += h.gap_fills;
    s.recoveries += h.recoveries;
    if r.verdict.recovery_claimed {
        let o =
            h.max_outage.iter().copied().max().unwrap_or(0) as f64 / h.max_timeout.max(1) as f64;
        if o > s.max_outage_timeouts.0 {
            s.max_outage_timeouts = (o, r.seed);
        }
    }
    if !r.verdict.violations.is_empty() {
        s.failed.push(r);
    }
}

fn merge(s: &mut Summary, o: Summary) {
    s.seeds += o.seeds;
    s.safety_claimed += o.safety_claimed;
    s.liveness_claimed += o.liveness_claimed;
    s.late_injected += o.late_injected;
    s.late_detected += o.late_detected;
    s.redundancy_exceeded += o.redundancy_exceeded;
    s.unclaimed_failures += o.unclaimed_failures;
    s.decisions += o.decisions;
    s.net_faults += o.net_faults;
    s.events += o.events;
    s.recovery_claimed += o.recovery_claimed;
    s.rejoins += o.rejoins;
    s.gap_fills += o.gap_fills;
    s.recoveries += o.recoveries;
    if o.max_outage_timeouts.0 > s.max_outage_timeouts.0 {
        s.max_outage_timeouts = o.max_outage_timeouts;
    }
    s.failed.extend(o.failed);
}
