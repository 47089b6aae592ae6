//! Redis-NC end to end (root): the namespace lab configured for 4 nodes, 3 started; on every
//! host a real redis-server, xdp-log on the PCIe veth and redis-nc reading the XDP decision log
//! (with its engine's control socket and the other fronts as peers). Stock-protocol clients in
//! the clients namespace run SET/GET on shared keys at every front, INCR and unique-key SETs,
//! while:
//! - engine logs keep 1000 instances, so a replica that starts late needs a snapshot;
//! - 1 % of node 2's host copies are dropped (nftables, before XDP sees them);
//! - node 2's engine and redis-nc are SIGKILLed and restarted: the engine joins again, the
//!   replica catches up by itself (repairs from the engine's log, a snapshot from a peer);
//! - node 3 joins with its redis-server, by one command (`redis-nc --join MEMBER`);
//! - the leader's node (engine and redis-nc) is SIGKILLed.
//!
//! Afterwards: every live replica's `DEBUG DIGEST` is equal, every unique key answered OK is
//! on every live replica, every INCR reply is unique, and the history (reads at every front) is
//! linearizable.

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::{Load, bins, caught_up, field, info};
use host_app::lincheck::{self, Verdict};
use host_app::resp::Value;
use nc_tools::app_lab::{RedisNcLab, front};
use nc_tools::demo::{request, wait_for};

#[test]
fn redis_nc_survives_kills_restarts_a_join_and_drops_with_linearizable_history() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: needs root (namespaces, XDP); CI runs it as root");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let prefix = format!("ncr{}", std::process::id() % 10_000);
    let b = bins();
    let mut rl = RedisNcLab::start_some(
        &prefix,
        tmp.path(),
        4,
        &[0, 1, 2],
        // Short engine logs: a node that joins or restarts late needs a snapshot from a peer.
        &["--log-keep", "1000"],
        &b.bins,
        &b.redis_nc,
    )
    .expect("Redis-NC lab");
    let lab = rl.lab.clone();
    rl.lab
        .host_drop_rate(2, 1)
        .expect("nftables drop on node 2");
    let load = Load::new(Some(rl.lab.clients()));
    let mut clients = vec![
        load.unique(front(0), 0),
        load.unique(front(1), 1),
        load.incr(front(1)),
        load.incr(front(2)),
    ];
    for i in 0..3u8 {
        clients.push(load.registers(front(i), i as u64));
    }
    let leader = || {
        (0..4u8)
            .find(|&i| request(&lab, i, "status").is_ok_and(|s| s["is_leader"] == true))
            .expect("a leader")
    };
    let ops = |n: u64| {
        let before = load.ops.load(Ordering::Relaxed);
        wait_for(Duration::from_secs(60), "client operations", || {
            load.ops.load(Ordering::Relaxed) >= before + n
        })
        .unwrap();
    };
    ops(600);

    // Node 2 (a follower) dies whole and comes back.
    rl.lab.kill(2);
    rl.kill_app(2);
    ops(300);
    rl.restart_engine(2, leader())
        .expect("node 2's engine joins again");
    rl.start_node_app(2).expect("node 2's redis-nc");
    let mut c2 = rl.connect(2).unwrap();
    if let Err(e) = wait_for(
        Duration::from_secs(60),
        "node 2's replica serves again",
        || caught_up(&info(&mut c2), 50),
    ) {
        panic!("{e}\nnode 2:\n{}\n{}", info(&mut c2), rl.log_tails(2, 40));
    }
    println!("node 2 after its restart:\n{}", info(&mut c2));

    // Node 3 joins with its redis-server, with one command: `redis-nc --join MEMBER`.
    rl.add_by_app(3, leader()).expect("node 3 joins");
    let mut c3 = rl.connect(3).unwrap();
    if let Err(e) = wait_for(Duration::from_secs(60), "node 3's replica serves", || {
        let i = info(&mut c3);
        caught_up(&i, 50) && field(&i, "nc_applied") > 0
    }) {
        panic!("{e}\nnode 3:\n{}\n{}", info(&mut c3), rl.log_tails(3, 40));
    }
    println!("node 3 after its join:\n{}", info(&mut c3));
    clients.push(load.registers(front(3), 3));
    ops(300);

    // The leader's node dies.
    let dead = leader();
    rl.lab.kill(dead);
    rl.kill_app(dead);
    let t_kill = Instant::now();
    wait_for(Duration::from_secs(30), "a new leader", || {
        (0..4u8)
            .filter(|&i| i != dead)
            .any(|i| request(&lab, i, "status").is_ok_and(|s| s["is_leader"] == true))
    })
    .unwrap();
    println!("new leader after {:?}", t_kill.elapsed());
    ops(300);
    load.stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }

    let live: Vec<u8> = (0..4u8).filter(|&i| i != dead).collect();
    let mut conns: Vec<_> = live.iter().map(|&i| rl.connect(i).unwrap()).collect();
    let mut digests: Vec<Value> = Vec::new();
    wait_for(
        Duration::from_secs(30),
        "equal digests on the live replicas",
        || {
            digests = conns
                .iter_mut()
                .map(|c| c.call(&[b"DEBUG", b"DIGEST"]).unwrap())
                .collect();
            let applied: Vec<u64> = conns
                .iter_mut()
                .map(|c| field(&info(c), "nc_applied"))
                .collect();
            digests.iter().all(|d| *d == digests[0]) && applied.iter().all(|a| *a == applied[0])
        },
    )
    .unwrap_or_else(|e| panic!("{e}: {digests:?}"));
    for (i, c) in live.iter().zip(conns.iter_mut()) {
        println!("node {i}:\n{}", info(c));
    }
    assert!(
        matches!(&digests[0], Value::Simple(s) if s.len() == 40 && s != &"0".repeat(40)),
        "not a digest of a non-empty dataset: {:?}",
        digests[0]
    );
    let acked = load.acked.lock().unwrap().clone();
    for c in &mut conns {
        for k in &acked {
            // A node whose engine made the safe exit since (a stall on a loaded machine) answers
            // TRYAGAIN until it rejoined: asked again, as a client would; any other answer
            // than 1 is a lost write.
            let t0 = Instant::now();
            let got = loop {
                match c.call(&[b"EXISTS", k.as_bytes()]).unwrap() {
                    Value::Error(e)
                        if e.starts_with("TRYAGAIN") && t0.elapsed() < Duration::from_secs(60) =>
                    {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    v => break v,
                }
            };
            assert_eq!(got, Value::Integer(1), "{k} lost");
        }
    }
    assert_eq!(
        load.duplicate_incrs(),
        Vec::<i64>::new(),
        "INCR replies given twice"
    );
    let history = load.history.lock().unwrap().clone();
    println!(
        "{} register operations, {} INCRs, {} unique writes acknowledged",
        history.len(),
        load.incrs.lock().unwrap().len(),
        acked.len()
    );
    assert!(history.len() > 300, "too little history: {}", history.len());
    match lincheck::check(&history, 5_000_000) {
        Verdict::Linearizable => {}
        other => panic!("history not linearizable: {other:?}"),
    }
}
