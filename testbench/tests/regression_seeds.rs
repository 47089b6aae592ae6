//! Seeds that once broke the recovery extension, replayed on every test run. Each found a
//! hole the CI campaigns did not reach (testbench/README.md, "Recovery campaigns"); each must
//! stay clean. Replay one with its trace: `nc-sim --nodes N --trees 2 --faults all --seed S`.

use testbench::faults::Faults;
use testbench::sim::{EarlySends, SimConfig, run};

fn replay(nodes: u8, seed: u64, early: EarlySends, auth: EarlySends) -> Vec<String> {
    let cfg = SimConfig {
        nodes,
        trees: 2,
        faults: Faults::parse("all").unwrap(),
        trace: false,
        node_hook: None,
        early,
        auth,
    };
    run(seed, &cfg).verdict.violations
}

/// (n, seed, what it found), found before early sends and tags existed: replayed with both off.
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

/// (n, seed, what it found), found by campaigns with the default `--early-sends mixed --auth
/// mixed` (fifteenth session, `--first-seed 700000` and `--first-seed 1000000`).
const MIXED_SEEDS: &[(u8, u64, &str)] = &[
    (
        3,
        703_687,
        "a follower that faulted under a leader dropped its kept copies when it locked onto the \
         same leader's stream, which then died before the state transfer: the recovery lost \
         what that leader had acknowledged",
    ),
    (
        3,
        718_512,
        "a leader resumed from a pause sent at a queued datagram's time inside its lease, then \
         stepped down in the same input (it heard it was alone): the driver's lease check, \
         which asked the node's lease after the input, found none and let the late send's OKs \
         go",
    ),
    (3, 725_799, "as 718512"),
    (
        3,
        1_121_165,
        "a leader that was alone reported a longer log, then paused; the others moved to the \
         next round, forgot its report and elected a shorter log, losing its acknowledged write",
    ),
    (
        3,
        1_008_752,
        "a node's kept copies of epoch 0 were elected into instance 2 although the leader of \
         epoch 1 had decided instance 2 differently (a second history)",
    ),
    (
        3,
        1_138_571,
        "a node with a gap asked for it to be filled by a node whose report counted kept \
         copies it had not decided: the transfer was refused for ever and no one led",
    ),
    (
        3,
        1_005_613,
        "a node's own gap was bridged exactly by its kept copies, which it could neither \
         decide (the host had later instances) nor serve to the other node's gap fill: both \
         stayed in Recovering for ever",
    ),
    (
        3,
        2_097_626,
        "a rejoining node locked onto its leader's stream past messages whose copies were still \
         on their way on the other tree; those copies no longer reached its kept copies, and \
         the recovery after the leader crashed lost the write it had acknowledged",
    ),
    (
        3,
        3_033_648,
        "the copy that showed a follower its gap was the only copy of an acknowledged message \
         it got (the other was dropped), and it did not go to the kept copies",
    ),
    (
        3,
        4_021_383,
        "the simulator ran a paused follower's timer at the instant it resumed before the \
         datagrams that had queued up (the engine reads them first): it timed out on a live \
         leader and decided its instances again",
    ),
    (
        3,
        5_088_602,
        "a follower faulted when its leader's link on tree 1 went down, locked onto the same \
         leader's stream while the link was briefly up, and faulted again on the next \
         messages: copies after its lock-on point did not go to its kept copies, so the 36 \
         writes the leader went on acknowledging alone (the other follower was paused) were \
         lost when it crashed",
    ),
    (
        3,
        5_066_222,
        "as 5088602 (a lock-on between two safe exits): the recovery then decided instances \
         25 and 26 differently from the acknowledged ones",
    ),
];

#[test]
fn seeds_that_once_broke_recovery_stay_clean() {
    let mut failed = Vec::new();
    let off = SEEDS.iter().map(|&(n, s, w)| (n, s, w, EarlySends::Off));
    let mixed = MIXED_SEEDS
        .iter()
        .map(|&(n, s, w)| (n, s, w, EarlySends::Mixed));
    for (n, seed, what, mode) in off.chain(mixed) {
        let v = replay(n, seed, mode, mode);
        if !v.is_empty() {
            failed.push(format!("n={n} seed={seed} ({what}): {}", v.join("; ")));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
