//! §5.2 join under load: a fourth node joins a running 4-node cluster (three members up) with
//! `soc-ctl join`; the members never pause and miss nothing; the joiner's log (snapshot + own
//! live log) equals theirs.

mod common;

use std::time::Duration;

use common::{Cluster, counter, test_file};
use soc_ctl::client::load;

#[test]
fn a_node_joins_during_load_and_nobody_misses_an_instance() {
    let file = test_file(4, 2, 41);
    let cluster_id = file.cluster_id as u32;
    let period = file.timing.loop_period_ns;
    let mut c = Cluster::new(file);
    c.start(&[0, 1, 2]);
    // Some history before the join, so the snapshot is not empty.
    load(
        cluster_id,
        41,
        c.client_addrs(),
        500,
        8,
        24,
        Duration::from_secs(30),
    )
    .expect("warm-up");
    let before: Vec<_> = (0..3).map(|i| c.status(i)).collect();
    c.request(0, "reset-stats").unwrap();

    let addrs = c.client_addrs();
    let client = std::thread::spawn(move || {
        load(cluster_id, 42, addrs, 4000, 4, 24, Duration::from_secs(60))
    });
    c.wait(Duration::from_secs(10), "load running", |c| {
        c.status(0)["last_decided"].as_u64().unwrap()
            > before[0]["last_decided"].as_u64().unwrap() + 50
    });
    c.spawn(3);
    let out = c.soc_ctl(3, &["join", "--member", "1"]);
    println!("{}", out.trim());
    assert!(out.contains("joined"), "{out}");
    assert_eq!(c.status(3)["state"], "Active");
    let r = client.join().unwrap().expect("load across the join");
    assert_eq!(r.decided, 4000);
    c.settle(&[0, 1, 2, 3]);

    let logs: Vec<Vec<String>> = (0..4).map(|i| c.log(i)).collect();
    for i in 1..4 {
        assert_eq!(logs[0], logs[i], "node {i}'s log differs from node 0's");
    }
    for (k, line) in logs[0].iter().enumerate() {
        assert!(
            line.starts_with(&format!("{} ", k + 1)),
            "gap in the log at {line}"
        );
    }
    let st0 = c.status(0);
    let gap = st0["engine"]["max_send_gap_ns"].as_u64().unwrap();
    println!(
        "longest gap between two leader sends during the join: {:.3} ms (loop period {:.3} ms); {}",
        gap as f64 / 1e6,
        period as f64 / 1e6,
        r.summary()
    );
    for (i, b) in before.iter().enumerate() {
        let st = c.status(i as u8);
        assert_eq!(st["state"], "Active", "node {i}");
        assert_eq!(
            counter(&st, "timeouts"),
            counter(b, "timeouts"),
            "node {i} timed out during the join"
        );
        assert_eq!(counter(&st, "net_faults"), 0, "node {i}");
    }
    assert_eq!(st0["is_leader"], true, "the leader never changed");
    assert!(gap > 0);
    // A send later than the loop period + slack is a synchrony violation the engine must count.
    let slack = st0["counters"]["late_ticks"].as_u64().unwrap();
    assert!(
        gap <= period + 5_000_000 || slack > 0,
        "a {gap} ns gap at the leader was not counted as a late tick"
    );
    if std::env::var_os("NC_SHOW_LOG").is_some() {
        println!("{}", c.engine_log(0));
    }
}

/// The decision log is bounded (`--log-keep`): every engine keeps the newest instances only,
/// the same window on every node, and a node that joins gets that window as its snapshot.
#[test]
fn the_log_keeps_the_newest_instances_and_a_joiner_gets_that_window() {
    let file = test_file(4, 2, 42);
    let cluster_id = file.cluster_id as u32;
    let mut c = Cluster::new(file);
    c.engine_args = vec!["--log-keep".into(), "40".into()];
    c.start(&[0, 1, 2]);
    let r = load(
        cluster_id,
        43,
        c.client_addrs(),
        600,
        1,
        24,
        Duration::from_secs(60),
    )
    .expect("load");
    assert_eq!(r.decided, 600);
    c.settle(&[0, 1, 2]);
    let last = c.status(0)["last_decided"].as_u64().unwrap();
    assert!(last > 40, "not enough instances to truncate: {last}");
    let logs: Vec<Vec<String>> = (0..3).map(|i| c.log(i)).collect();
    for (i, l) in logs.iter().enumerate() {
        assert_eq!(l.len(), 40, "node {i} keeps 40 instances");
        assert!(
            l[0].starts_with(&format!("{} ", last - 39)),
            "node {i}'s window starts at {}",
            l[0]
        );
        let st = c.status(i as u8);
        assert_eq!(st["log_first"], last - 39);
        assert!(st["engine"]["log_truncated"].as_u64().unwrap() > 0);
    }
    assert_eq!(logs[0], logs[1]);
    assert_eq!(logs[0], logs[2]);
    c.spawn(3);
    let out = c.soc_ctl(3, &["join", "--member", "1"]);
    assert!(out.contains("joined"), "{out}");
    load(
        cluster_id,
        44,
        c.client_addrs(),
        20,
        1,
        24,
        Duration::from_secs(30),
    )
    .expect("load");
    c.settle(&[0, 1, 2, 3]);
    assert_eq!(c.log(3), c.log(0), "the joiner's window");
}
