//! Seeds that once broke the recovery extension, replayed on every test run. Each found a
//! hole the CI campaigns did not reach (testbench/README.md, "Recovery campaigns"); each must
//! stay clean. Replay one with its trace: `nc-sim --nodes N --trees 2 --faults all --seed S`.

use testbench::faults::Faults;
use testbench::sim::{EarlySends, SimConfig, run};

fn replay(nodes: u8, seed: u64) -> Vec<String> {
    let cfg = SimConfig {
        nodes,
        trees: 2,
        faults: Faults::parse("all").unwrap(),
        trace: false,
        node_hook: None,
        // As found (before early sends existed).
        early: EarlySends::Off,
        auth: EarlySends::Off,
    };
    run(seed, &cfg).verdict.violations
}

/// (n, seed, what it found)
const SEEDS: &[(u8, u64, &str)] = &[
    (
        3,
        120_837,
        "a rejoining node's decisions beyond the gap in its log were not counted in the recovery",
    ),
    (
        3,
        128_058,
        "a leader that stepped down (lease) ran the succession beside a running recovery",
    ),
    (3, 128_274, "as 128058, with many NET-FAULTs"),
    (
        9,
        4_796,
        "an instance decided again after several recoveries",
    ),
    (
        9,
        6_743,
        "an instance decided differently after several recoveries",
    ),
];

#[test]
fn seeds_that_once_broke_recovery_stay_clean() {
    let mut failed = Vec::new();
    for &(n, seed, what) in SEEDS {
        let v = replay(n, seed);
        if !v.is_empty() {
            failed.push(format!("n={n} seed={seed} ({what}): {}", v.join("; ")));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
