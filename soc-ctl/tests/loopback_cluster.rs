//! Real `nc-engine` processes on 127.0.0.0/8 (the loopback transport): decisions, the host
//! path, failover after kill -9, a tree failing at one follower, bad packets, CONFIG.

mod common;

use std::collections::BTreeMap;
use std::net::{SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{Cluster, counter, test_file};
use proto::wire::{self, Decide, DecideKind, DecideMeta, Packet};
use soc_ctl::client::load;

/// What the host path delivered: instance → (client id, seq) of each entry.
type HostFrames = BTreeMap<u64, Vec<(u32, u64)>>;

/// Every DECIDE frame that reaches a host address, by instance.
fn host_listener(
    addr: SocketAddrV4,
    cluster: u32,
) -> (Arc<AtomicBool>, std::thread::JoinHandle<HostFrames>) {
    let sock = UdpSocket::bind(addr).expect("bind the host address");
    // A deep buffer: the host path is UDP, and a burst of small instances (early sends) must not
    // overflow this test's socket while its thread waits for a core (CI caught 491 of 2945 lost
    // there). Root may go past rmem_max.
    let deep = 16 << 20;
    if nix::sys::socket::setsockopt(&sock, nix::sys::socket::sockopt::RcvBufForce, &deep).is_err() {
        let _ = nix::sys::socket::setsockopt(&sock, nix::sys::socket::sockopt::RcvBuf, &deep);
    }
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let h = std::thread::spawn(move || {
        let mut got = BTreeMap::new();
        let mut buf = [0u8; 65536];
        while !s2.load(Ordering::Relaxed) {
            if let Ok(n) = sock.recv(&mut buf) {
                let Ok((_, Packet::Decide(d))) = wire::parse(&buf[..n], cluster) else {
                    panic!("the host path carried something that is not a DECIDE");
                };
                let e: Vec<(u32, u64)> = d.entries().map(|e| (e.client_id, e.seq)).collect();
                assert!(
                    got.insert(d.meta.instance, e).is_none(),
                    "instance {} handed to the host twice",
                    d.meta.instance
                );
            }
        }
        got
    });
    (stop, h)
}

#[test]
fn three_nodes_decide_identical_logs_and_feed_the_host() {
    let file = test_file(3, 2, 31);
    let cluster_id = file.cluster_id as u32;
    let host1 = SocketAddrV4::new(file.nodes[1].host_addr, file.ports.host as u16);
    let (stop, host) = host_listener(host1, cluster_id);
    let mut c = Cluster::new(file);
    c.start(&[0, 1, 2]);
    assert_eq!(c.status(0)["is_leader"], true);

    let r = load(
        cluster_id,
        11,
        c.client_addrs(),
        3000,
        16,
        32,
        Duration::from_secs(60),
    )
    .expect("load");
    println!("3-node loopback (test timing, 2 ms loop): {}", r.summary());
    assert_eq!(r.decided, 3000);
    c.settle(&[0, 1, 2]);
    let logs: Vec<Vec<String>> = (0..3).map(|i| c.log(i)).collect();
    assert!(!logs[0].is_empty());
    assert_eq!(logs[0], logs[1], "node 0 and node 1 logs differ");
    assert_eq!(logs[0], logs[2], "node 0 and node 2 logs differ");
    // Instances are contiguous from 1.
    for (k, line) in logs[0].iter().enumerate() {
        assert!(line.starts_with(&format!("{} ", k + 1)), "gap at {line}");
    }

    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let frames = host.join().expect("host listener");
    // The host path got exactly the logged instances, and every OK names the right entry.
    assert_eq!(frames.len(), logs[1].len(), "host frames vs node 1's log");
    for ((instance, index), (client, seq)) in &r.oks {
        let e = frames
            .get(instance)
            .unwrap_or_else(|| panic!("instance {instance} not at the host"));
        assert_eq!(
            e[*index as usize],
            (*client, *seq),
            "OK for instance {instance} index {index}"
        );
    }
    for i in 0..3 {
        let st = c.status(i);
        assert_eq!(counter(&st, "net_faults"), 0, "node {i}: {st}");
        println!(
            "node {i}: late ticks {} late copies {} stale {}",
            counter(&st, "late_ticks"),
            counter(&st, "late_copies"),
            counter(&st, "stale_epoch")
        );
    }

    // Bad input at a follower's tree socket and client port: dropped and counted, nothing else.
    let before = c.status(1);
    let log_before = c.log(1);
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let tree0 = SocketAddrV4::new(c.file.nodes[1].tree_addrs[0], c.file.ports.decide as u16);
    let client1 = SocketAddrV4::new(c.file.nodes[1].client_addr, c.file.ports.client as u16);
    let good = Packet::Decide(Decide {
        meta: DecideMeta {
            instance: 1_000_000,
            epoch: 0,
            msg_seq: 0,
            tree: 0,
            kind: DecideKind::Heartbeat,
        },
        count: 0,
        entries_raw: &[],
    });
    let foreign = good.to_vec(cluster_id + 1, 0).unwrap();
    let mut truncated = good.to_vec(cluster_id, 0).unwrap();
    truncated.truncate(20);
    let mut bad_len = good.to_vec(cluster_id, 0).unwrap();
    bad_len[9] ^= 0x40; // body_len no longer matches
    for p in [&foreign, &truncated, &bad_len] {
        s.send_to(p, tree0).unwrap();
        s.send_to(p, client1).unwrap();
    }
    c.wait(Duration::from_secs(5), "the bad packets counted", |c| {
        let st = c.status(1);
        counter(&st, "foreign") >= counter(&before, "foreign") + 2
            && counter(&st, "malformed") >= counter(&before, "malformed") + 4
    });
    let after = c.status(1);
    assert_eq!(counter(&after, "foreign"), counter(&before, "foreign") + 2);
    assert_eq!(
        counter(&after, "malformed"),
        counter(&before, "malformed") + 4
    );
    assert_eq!(after["state"], "Active");
    assert_eq!(counter(&after, "net_faults"), 0);
    // The log may still grow by a retransmission of the load decided late (a loaded machine: a
    // client resent after 50 ms of silence); the bad packets must add nothing of their own, so
    // what node 1 holds is its old log and then what the leader decided too.
    c.settle(&[0, 1, 2]);
    let log_after = c.log(1);
    assert!(
        log_after.starts_with(&log_before),
        "bad packets changed the log: {:?} then {:?}",
        &log_before[log_before.len().saturating_sub(3)..],
        &log_after[log_before.len().saturating_sub(3)..]
    );
    let log0 = c.log(0);
    let n = log_after.len().min(log0.len());
    assert_eq!(
        log_after[..n],
        log0[..n],
        "bad packets changed node 1's log"
    );

    // The monitoring commands a user runs.
    let w = c.soc_ctl(1, &["watch", "--count", "2", "--interval-ms", "20"]);
    assert_eq!(w.lines().count(), 2, "{w}");
    assert!(w.starts_with("follower epoch 0 leader 0"), "{w}");
    let j: serde_json::Value = serde_json::from_str(&c.soc_ctl(0, &["status", "--json"])).unwrap();
    assert_eq!(j["role"], "leader");
    assert!(j["counters"]["sent_values"].as_u64().unwrap() > 0);
    let d = c.soc_ctl(2, &["regs", "dump"]);
    assert!(d.contains("delivered") && d.contains("tree_group1"), "{d}");

    // CONFIG: raise the timeout everywhere through consensus; a decrease is refused everywhere.
    let cfg = c.cfg.display().to_string();
    c.soc_ctl(0, &["set-timeout", "--config", &cfg, "300000000"]);
    c.settle(&[0, 1, 2]);
    for i in 0..3 {
        assert_eq!(
            c.soc_ctl(i, &["regs", "get", "timeout"]).trim(),
            "300000000"
        );
    }
    c.soc_ctl(0, &["set-timeout", "--config", &cfg, "250000000"]);
    c.settle(&[0, 1, 2]);
    for i in 0..3 {
        let st = c.status(i);
        assert_eq!(st["timeout"], 300_000_000, "node {i} took a decrease");
        assert_eq!(counter(&st, "config_rejected"), 1, "node {i}");
    }
}

#[test]
fn kill_the_leader_and_the_next_node_takes_over() {
    let file = test_file(3, 2, 32);
    let cluster_id = file.cluster_id as u32;
    let timeout = file.timing.timeout_ns;
    let period = file.timing.loop_period_ns;
    let mut c = Cluster::new(file);
    c.start(&[0, 1, 2]);
    let addrs = c.client_addrs();
    let client = std::thread::spawn(move || {
        load(cluster_id, 21, addrs, 3000, 2, 16, Duration::from_secs(60))
    });
    c.wait(Duration::from_secs(10), "some decisions", |c| {
        c.status(1)["last_decided"].as_u64().unwrap_or(0) > 100
    });
    let t_kill = Instant::now();
    c.kill(0);
    c.wait(Duration::from_secs(10), "node 1 leads", |c| {
        c.status(1)["is_leader"] == true
    });
    let seen = t_kill.elapsed();
    let r = client
        .join()
        .unwrap()
        .expect("every request decided despite the failover");
    assert_eq!(r.decided, 3000);
    let st1 = c.status(1);
    let takeover = st1["engine"]["takeover_ns"]
        .as_u64()
        .expect("node 1 took over");
    let late = counter(&st1, "late_ticks");
    println!(
        "failover: last copy from node 0 → node 1's first send = {:.3} ms (timeout {} ms + loop {} ms); \
         kill → node 1 seen leading {:.1} ms; late ticks at node 1: {late}; client: {}",
        takeover as f64 / 1e6,
        timeout / 1_000_000,
        period / 1_000_000,
        seen.as_secs_f64() * 1e3,
        r.summary()
    );
    assert!(
        takeover <= timeout + 2 * period || late > 0,
        "takeover took {takeover} ns > timeout + 2 loop periods, and no late tick explains it"
    );
    assert!(
        takeover >= timeout,
        "took over before the timeout: {takeover} ns"
    );
    c.settle(&[1, 2]);
    assert_eq!(c.log(1), c.log(2));
    assert_eq!(c.status(2)["leader"], 1);

    // A DECIDE from the dead leader's epoch (stale), from its address, is dropped and counted,
    // nothing delivered.
    let before = c.status(2);
    let last = before["last_decided"].as_u64().unwrap();
    let s = UdpSocket::bind(SocketAddrV4::new(c.file.nodes[0].tree_addrs[0], 0)).unwrap();
    for tree in 0..2u8 {
        let p = Packet::Decide(Decide {
            meta: DecideMeta {
                instance: last,
                epoch: 0,
                msg_seq: 999,
                tree,
                kind: DecideKind::Heartbeat,
            },
            count: 0,
            entries_raw: &[],
        })
        .to_vec(cluster_id, 0)
        .unwrap();
        let to = SocketAddrV4::new(
            c.file.nodes[2].tree_addrs[tree as usize],
            c.file.ports.decide as u16,
        );
        s.send_to(&p, to).unwrap();
    }
    c.wait(Duration::from_secs(5), "stale copies counted", |c| {
        counter(&c.status(2), "stale_epoch") >= counter(&before, "stale_epoch") + 2
    });
    let after = c.status(2);
    assert_eq!(after["state"], "Active");
    assert_eq!(after["epoch"], before["epoch"]);
    assert_eq!(counter(&after, "delivered"), counter(&before, "delivered"));
}

#[test]
fn a_tree_down_at_one_follower_faults_it_and_it_rejoins_by_itself_when_the_tree_is_back() {
    let file = test_file(3, 2, 33);
    let cluster_id = file.cluster_id as u32;
    let mut c = Cluster::new(file);
    c.start(&[0, 1, 2]);
    load(
        cluster_id,
        31,
        c.client_addrs(),
        200,
        4,
        16,
        Duration::from_secs(30),
    )
    .expect("load");
    c.soc_ctl(2, &["drop-tree", "1", "on"]);
    c.wait(Duration::from_secs(5), "node 2 NET-FAULT", |c| {
        counter(&c.status(2), "net_faults") == 1
    });
    // It made the safe exit and is coming back through the join path, but cannot lock onto
    // the stream while a tree is missing: it stays out, decides nothing, and says why.
    let st2 = c.status(2);
    assert_eq!(st2["state"], "Joining", "{st2}");
    assert_eq!(st2["recovery"]["rejoining"], true, "{st2}");
    let frozen = c.log(2);
    let r = load(
        cluster_id,
        32,
        c.client_addrs(),
        1000,
        4,
        16,
        Duration::from_secs(30),
    )
    .expect("the others go on");
    assert_eq!(r.decided, 1000);
    c.settle(&[0, 1]);
    assert_eq!(c.log(0), c.log(1));
    assert!(c.log(0).len() > frozen.len());
    assert_eq!(c.log(2), frozen, "a node that cannot lock on delivered");
    assert_eq!(
        c.log(0)[..frozen.len()],
        frozen[..],
        "the faulted node's prefix agrees"
    );
    assert_eq!(c.status(0)["state"], "Active");
    assert_eq!(c.status(1)["state"], "Active");
    assert_eq!(
        c.status(2)["state"],
        "Joining",
        "no recovery while a leader runs"
    );
    // The tree comes back: node 2 locks on, takes a snapshot from a member, and is active again
    // with the same log, without anyone running a command on it.
    c.soc_ctl(2, &["drop-tree", "1", "off"]);
    c.wait(Duration::from_secs(10), "node 2 active again", |c| {
        c.status(2)["state"] == "Active"
    });
    let r = load(
        cluster_id,
        33,
        c.client_addrs(),
        300,
        4,
        16,
        Duration::from_secs(30),
    )
    .expect("load after the rejoin");
    assert_eq!(r.decided, 300);
    c.settle(&[0, 1, 2]);
    assert_eq!(c.log(2), c.log(0), "the rejoined node's log");
    let rec = &c.status(2)["recovery"];
    assert_eq!(rec["rejoins_done"], 1, "{rec}");
}

/// The demo's old failure: the leader dies between its tree-0 and tree-1 copies, so every
/// follower sees one copy of that message and makes the safe exit. The followers must recover
/// by themselves (a majority of 3), decide again, and keep every acknowledged write.
#[test]
fn leader_killed_after_its_first_tree_copy_the_cluster_decides_again() {
    let file = test_file(3, 2, 35);
    let cluster_id = file.cluster_id as u32;
    let hosts: Vec<_> = [1usize, 2]
        .iter()
        .map(|&i| {
            host_listener(
                SocketAddrV4::new(file.nodes[i].host_addr, file.ports.host as u16),
                cluster_id,
            )
        })
        .collect();
    let mut c = Cluster::new(file);
    // Node 0 (the leader) is killed right after the tree-0 copy of its 40th value message.
    c.engine_args = vec!["--crash-after-first-copy".into(), "40".into()];
    c.spawn(0);
    c.engine_args.clear();
    c.spawn(1);
    c.spawn(2);
    let cfg = c.cfg.display().to_string();
    for i in 0..3u8 {
        c.soc_ctl(i, &["--node", &i.to_string(), "init", "--config", &cfg]);
    }
    c.soc_ctl(0, &["start"]);
    let addrs = c.client_addrs();
    let t0 = Instant::now();
    let r = load(cluster_id, 41, addrs, 2000, 4, 16, Duration::from_secs(60))
        .expect("every request decided although the leader died mid-RSBCAST");
    assert_eq!(r.decided, 2000);
    let outage = t0.elapsed();
    assert!(
        c.procs[0].as_mut().unwrap().try_wait().unwrap().is_some(),
        "the fault injection did not kill node 0"
    );
    assert!(c.engine_log(0).contains("fault injection"));
    c.settle(&[1, 2]);
    let (s1, s2) = (c.status(1), c.status(2));
    for st in [&s1, &s2] {
        assert_eq!(st["state"], "Active", "{st}");
        assert_eq!(
            counter(st, "net_faults"),
            1,
            "each follower faulted once: {st}"
        );
        assert_eq!(st["recovery"]["recoveries"], 1, "{st}");
    }
    assert!(s1["epoch"].as_u64().unwrap() >= 1);
    assert_eq!(s1["epoch"], s2["epoch"]);
    assert_eq!(c.log(1), c.log(2), "the survivors' logs");
    std::thread::sleep(Duration::from_millis(100));
    let frames: Vec<HostFrames> = hosts
        .into_iter()
        .map(|(stop, h)| {
            stop.store(true, Ordering::Relaxed);
            h.join().expect("host listener")
        })
        .collect();
    assert_eq!(
        frames[0], frames[1],
        "the two hosts got different decisions"
    );
    // Contiguous instances, every acknowledged request in them. A request in the message the
    // leader died sending was never acknowledged; the recovery keeps that message (a follower
    // holds its tree-0 copy), and the client's retry is decided again: the log may hold it
    // twice, and the exactly-once applier applies it once.
    let mut applier = proto::apply::Applier::new();
    let (mut applied, mut repeated) = (0usize, 0usize);
    for (k, (inst, entries)) in frames[0].iter().enumerate() {
        assert_eq!(*inst, k as u64 + 1, "a gap in the decided instances");
        for &(client, seq) in entries {
            if applier.admit(client, seq) {
                applied += 1;
            } else {
                repeated += 1;
            }
        }
    }
    assert_eq!(applied, 2000, "every request applied exactly once");
    for ((instance, index), (client, seq)) in &r.oks {
        let e = frames[0]
            .get(instance)
            .unwrap_or_else(|| panic!("acknowledged instance {instance} lost"));
        assert_eq!(
            e[*index as usize],
            (*client, *seq),
            "OK for {instance}.{index}"
        );
    }
    println!(
        "leader killed mid-RSBCAST: recovered at epoch {} (max outage node 1 {:.1} ms, node 2 {:.1} ms); \
         {} requests decided in {:.2} s, {repeated} retried request(s) in the log twice (applied once); client: {}",
        s1["epoch"],
        s1["recovery"]["max_outage_ns"].as_f64().unwrap_or(0.0) / 1e6,
        s2["recovery"]["max_outage_ns"].as_f64().unwrap_or(0.0) / 1e6,
        r.decided,
        outage.as_secs_f64(),
        r.summary()
    );
}

/// A follower frozen (SIGSTOP) for twice the timeout while the leader goes on: its socket
/// holds the copies that arrived meanwhile, and they count as arrived when the kernel stamped
/// them, so on SIGCONT it does not time out on a leader that never went silent.
#[test]
fn a_paused_follower_is_not_fooled_into_a_timeout() {
    let file = test_file(3, 2, 36);
    let timeout = file.timing.timeout_ns;
    let mut c = Cluster::new(file);
    c.start(&[0, 1, 2]);
    let pid = nix::unistd::Pid::from_raw(c.procs[2].as_ref().unwrap().id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    std::thread::sleep(Duration::from_nanos(2 * timeout));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let st = c.status(2);
    assert_eq!(counter(&st, "timeouts"), 0, "{st}");
    assert_eq!(counter(&st, "stale_epoch"), 0, "{st}");
    assert_eq!(
        (st["state"].as_str(), st["epoch"].as_u64()),
        (Some("Active"), Some(0)),
        "{st}"
    );
    c.settle(&[0, 1, 2]);
    assert_eq!(c.log(2), c.log(0));
}

#[test]
fn one_node_with_the_busy_poll_timer() {
    let file = test_file(1, 2, 34);
    let cluster_id = file.cluster_id as u32;
    let mut c = Cluster::new(file);
    c.engine_args = vec![
        "--timer".into(),
        "busy".into(),
        "--realtime".into(),
        "0".into(),
    ];
    c.start(&[0]);
    let r = load(
        cluster_id,
        41,
        c.client_addrs(),
        300,
        4,
        8,
        Duration::from_secs(30),
    )
    .expect("load");
    assert_eq!(r.decided, 300);
    let st = c.status(0);
    assert_eq!(st["engine"]["timer"], "busy");
    assert_eq!(counter(&st, "delivered"), c.log(0).len() as u64);
}

/// Receive one datagram on `sock` (IP_RECVTTL on) with the TTL it arrived with.
fn recv_with_ttl(sock: &UdpSocket) -> (Vec<u8>, i32) {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, SockaddrIn, recvmsg};
    let mut buf = vec![0u8; 65536];
    let mut space = nix::cmsg_space!(i32);
    let (n, ttl) = {
        let mut iov = [std::io::IoSliceMut::new(&mut buf)];
        let m = recvmsg::<SockaddrIn>(
            sock.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::empty(),
        )
        .expect("recvmsg");
        let ttl = m.cmsgs().expect("cmsgs").find_map(|c| match c {
            ControlMessageOwned::Ipv4Ttl(t) => Some(t),
            _ => None,
        });
        (m.bytes, ttl.expect("IP_RECVTTL gave the TTL"))
    };
    buf.truncate(n);
    (buf, ttl)
}

/// cluster.toml's `ttl` reaches the wire: the reply to a request and the host-path frame of its
/// decision arrive with that TTL (read with IP_RECVTTL on the receiving sockets).
#[test]
fn replies_and_host_frames_carry_the_configured_ttl() {
    use nix::sys::socket::{setsockopt, sockopt::Ipv4RecvTtl};
    let mut file = test_file(1, 2, 37);
    file.ttl = 42;
    let cluster_id = file.cluster_id as u32;
    let host = UdpSocket::bind(SocketAddrV4::new(
        file.nodes[0].host_addr,
        file.ports.host as u16,
    ))
    .expect("bind the host address");
    let client = UdpSocket::bind("127.37.30.1:0").expect("bind a client socket");
    for s in [&host, &client] {
        setsockopt(s, Ipv4RecvTtl, &true).expect("IP_RECVTTL");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    }
    let mut c = Cluster::new(file);
    c.start(&[0]);
    let req = Packet::Request(wire::Entry {
        client_id: 77,
        seq: 1,
        flags: 0,
        payload: b"ttl",
    })
    .to_vec(cluster_id, wire::SENDER_NONE)
    .unwrap();
    client.send_to(&req, c.client_addrs()[0]).unwrap();
    let (reply, ttl) = recv_with_ttl(&client);
    assert!(
        matches!(
            wire::parse(&reply, cluster_id),
            Ok((_, Packet::ReplyOk(r))) if r.client_id == 77 && r.seq == 1
        ),
        "a REPLY_OK for the request"
    );
    assert_eq!(ttl, 42, "the reply's TTL");
    let (frame, ttl) = recv_with_ttl(&host);
    let Ok((_, Packet::Decide(d))) = wire::parse(&frame, cluster_id) else {
        panic!("the host path carried something that is not a DECIDE");
    };
    assert_eq!(d.entries().map(|e| e.client_id).collect::<Vec<_>>(), [77]);
    assert_eq!(ttl, 42, "the host frame's TTL");
}

/// Without the recovery extension (the paper's permanent safe exit, as on a card), a faulted
/// node comes back by the CSR sequence that `soc-ctl rejoin` drives: it waits (and says so)
/// while a tree is still down, and is active again, deciding with the others, once it is back.
#[test]
fn a_faulted_node_comes_back_by_the_csr_sequence() {
    let file = test_file(3, 2, 41);
    let cluster_id = file.cluster_id as u32;
    let mut c = Cluster::new(file);
    c.engine_args = vec!["--no-recovery".into()];
    c.start(&[0, 1, 2]);
    load(
        cluster_id,
        41,
        c.client_addrs(),
        200,
        4,
        16,
        Duration::from_secs(30),
    )
    .expect("load");
    c.soc_ctl(2, &["drop-tree", "1", "on"]);
    c.wait(Duration::from_secs(5), "node 2 NET-FAULT", |c| {
        counter(&c.status(2), "net_faults") == 1
    });
    assert_eq!(c.status(2)["state"], "Faulted", "no recovery: it stays out");
    // A tree is still down: no SYNCED; rejoin says why and leaves the node joining.
    let o = c.soc_ctl_raw(2, &["rejoin", "--sync-wait-ms", "300"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "rejoin succeeded with a tree down");
    assert!(err.contains("no STATUS.SYNCED"), "{err}");
    assert_eq!(c.status(2)["state"], "Joining");
    // The tree is back: the same command resumes and brings it in.
    c.soc_ctl(2, &["drop-tree", "1", "off"]);
    let out = c.soc_ctl(2, &["rejoin"]);
    assert!(
        out.contains("resuming at step 3") && out.contains("active again"),
        "{out}"
    );
    assert_eq!(c.status(2)["state"], "Active");
    let r = load(
        cluster_id,
        42,
        c.client_addrs(),
        300,
        4,
        16,
        Duration::from_secs(30),
    )
    .expect("load after the rejoin");
    assert_eq!(r.decided, 300);
    c.settle(&[0, 1, 2]);
    let (l0, l2) = (c.log(0), c.log(2));
    assert!(
        !l2.is_empty() && l0.ends_with(&l2[l2.len() - 100..]),
        "node 2 decides with the others"
    );
    assert_eq!(c.status(2)["last_decided"], c.status(0)["last_decided"]);
}

/// Issue 18's attack: one BATCH DECIDE per tree with the right cluster id, an epoch three higher
/// and the next instance, from an address that is no member's; then from a member's address
/// claiming another member's id; then with a sender that is not the leader of the epoch. Every
/// node drops and counts all of them (`unauthorized`); epoch, leader, instance and logs stay,
/// and the cluster goes on deciding.
#[test]
fn forged_decides_are_dropped_and_counted_and_change_nothing() {
    let file = test_file(3, 2, 38);
    let cluster_id = file.cluster_id as u32;
    let mut c = Cluster::new(file.clone());
    c.start(&[0, 1, 2]);
    let r = load(
        cluster_id,
        91,
        c.client_addrs(),
        20,
        2,
        8,
        Duration::from_secs(30),
    )
    .unwrap();
    assert_eq!(r.decided, 20);
    c.settle(&[0, 1, 2]);
    let view = |c: &Cluster, i: u8| {
        let s = c.status(i);
        (
            s["epoch"].as_u64(),
            s["leader"].as_u64(),
            s["last_decided"].as_u64(),
            s["state"].as_str().map(str::to_string),
        )
    };
    let before: Vec<_> = (0..3).map(|i| view(&c, i)).collect();
    let logs: Vec<_> = (0..3).map(|i| c.log(i)).collect();
    let counted = |c: &Cluster, i: u8| counter(&c.status(i), "unauthorized");
    let base: Vec<u64> = (0..3).map(|i| counted(&c, i)).collect();
    let next = before[0].2.unwrap_or(0) + 1;
    let epoch = before[0].0.unwrap_or(0) as u32 + 3;
    let forged = |sender: u8, tree: u8| {
        let e = wire::Entry {
            client_id: 666,
            seq: 1,
            flags: 0,
            payload: b"forged",
        };
        let mut raw = vec![0u8; e.wire_len()];
        wire::emit_entries([e].iter(), &mut raw).unwrap();
        Packet::Decide(Decide {
            meta: DecideMeta {
                instance: next,
                epoch,
                msg_seq: 0,
                tree,
                kind: DecideKind::Batch,
            },
            count: 1,
            entries_raw: &raw,
        })
        .to_vec(cluster_id, sender)
        .unwrap()
    };
    let leader = (epoch % 3) as u8;
    let outsider = UdpSocket::bind("127.0.99.99:0").unwrap();
    let member2 = UdpSocket::bind(SocketAddrV4::new(file.nodes[2].tree_addrs[0], 0)).unwrap();
    for j in 0..3usize {
        for t in 0..2u8 {
            let to = SocketAddrV4::new(
                file.nodes[j].tree_addrs[t as usize],
                file.ports.decide as u16,
            );
            // Not a member's address (the right leader id inside).
            outsider.send_to(&forged(leader, t), to).unwrap();
            // A member's address, another member's id.
            member2.send_to(&forged(leader, t), to).unwrap();
            // A member's address and id, but not the leader of that epoch.
            member2.send_to(&forged(2, t), to).unwrap();
        }
    }
    c.wait(
        Duration::from_secs(5),
        "every node counted 6 forged copies",
        |c| (0..3).all(|i| counted(c, i) == base[i as usize] + 6),
    );
    std::thread::sleep(Duration::from_millis(300));
    for i in 0..3u8 {
        assert_eq!(counted(&c, i), base[i as usize] + 6, "node {i}");
        assert_eq!(view(&c, i), before[i as usize], "node {i} changed");
        assert_eq!(c.log(i), logs[i as usize], "node {i}'s log changed");
    }
    // The state-transfer port serves members only: a stranger's connection is closed unread.
    {
        use socket2::{Domain, SockAddr, Socket, Type};
        use std::io::{Read, Write};
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        s.bind(&SockAddr::from(SocketAddrV4::new(
            [127, 0, 99, 99].into(),
            0,
        )))
        .unwrap();
        s.connect(&SockAddr::from(c.client_addrs()[1])).unwrap();
        let mut t: std::net::TcpStream = s.into();
        t.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = t.write_all(&[0u8; 40]);
        let mut b = [0u8; 64];
        assert!(
            matches!(t.read(&mut b), Ok(0) | Err(_)),
            "closed without an answer"
        );
        c.wait(Duration::from_secs(5), "the refusal counted", |c| {
            c.status(1)["engine"]["unauthorized_transfers"] == 1
        });
    }
    // The cluster goes on.
    let r = load(
        cluster_id,
        92,
        c.client_addrs(),
        20,
        2,
        8,
        Duration::from_secs(30),
    )
    .unwrap();
    assert_eq!(r.decided, 20);
    c.settle(&[0, 1, 2]);
    assert_eq!(c.log(1), c.log(0));
    assert_eq!(c.log(2), c.log(0));
}

/// A follower stopped under load long enough for its kernel to drop tree copies (full receive
/// buffers): when it runs again it has read fewer copies than the leader sent, and the silence
/// after the last one it holds is not a silent leader. It must make the safe exit and rejoin
/// (NET-FAULT InputOverflow), never time out into leadership from a log that lacks decisions
/// (the soak once saw that lose an acknowledged write). Every acknowledged request is in the
/// log at the place its OK named, and the logs agree.
#[test]
fn a_follower_whose_kernel_dropped_copies_rejoins_instead_of_leading() {
    let file = test_file(3, 2, 47);
    let cluster_id = file.cluster_id as u32;
    let timeout = file.timing.timeout_ns;
    let mut c = Cluster::new(file);
    c.start(&[0, 1, 2]);
    let (stop, client) = background_load(&c, cluster_id, 81, 16, 1024);
    c.wait(Duration::from_secs(10), "load running", |c| {
        c.status(0)["last_decided"].as_u64().unwrap_or(0) > 200
    });
    let pid = nix::unistd::Pid::from_raw(c.procs[2].as_ref().unwrap().id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    // Several timeouts: the leader keeps deciding (alone with node 1) and node 2's socket
    // buffers fill and overflow.
    std::thread::sleep(Duration::from_nanos(6 * timeout));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let r = client.join().unwrap().expect("load across the stall");
    assert!(r.decided > 0);
    c.wait(Duration::from_secs(30), "every node back in", |c| {
        (0..3u8).all(|i| c.status(i)["state"] == "Active")
    });
    c.settle(&[0, 1, 2]);
    let st2 = c.status(2);
    assert!(
        st2["recovery"]["rx_overflows"].as_u64().unwrap_or(0) > 0,
        "the stall was too short to overflow node 2's buffers: {st2}"
    );
    assert!(counter(&st2, "net_faults") > 0, "{st2}");
    // What the test is about: node 2 never timed out into leadership from its holed log.
    assert_eq!(counter(&st2, "timeouts"), 0, "node 2 timed out: {st2}");
    let leader = c.status(0)["leader"].as_u64().expect("node 0's leader");
    for i in 0..3u8 {
        assert_eq!(
            c.status(i)["leader"].as_u64(),
            Some(leader),
            "node {i}: {}",
            c.status(i)
        );
    }
    assert_ne!(leader, 2, "node 2 leads: {st2}");
    let st0 = c.status(0);
    if leader != 0 {
        // The host ran node 0's loop later than its lease allows (a loaded CI machine): node 0
        // stepped down safely and node 1 timed out into the next epoch. That is the protocol
        // working, not this test's failure; anything else moving the leader is.
        let late = st0["engine"]["late_tick_max_ns"].as_u64().unwrap_or(0);
        let stops = st0["recovery"]["leader_stops"].as_u64().unwrap_or(0);
        assert!(
            late > 0 && stops > 0,
            "node {leader} leads without a late tick at node 0 to explain it: {st0}"
        );
        println!("node 0 stepped down after a late tick of {late} ns; node {leader} leads");
    } else {
        assert_eq!(counter(&st0, "timeouts"), 0, "{st0}");
        assert_eq!(counter(&c.status(1), "timeouts"), 0);
        assert_eq!(c.log(1), c.log(0));
    }
    // Every node's log agrees with the leader's (a node that rejoined holds it from where it
    // joined on).
    let log_l = c.log(leader as u8);
    for i in (0..3u8).filter(|&i| u64::from(i) != leader) {
        let log = c.log(i);
        assert!(
            log.iter().all(|l| log_l.contains(l)),
            "node {i}'s log differs from the leader's"
        );
    }
    // Every OK names the place its request holds in the leader's log.
    let entries = entries_of(&c, leader as u8);
    let mut checked = 0;
    for ((inst, idx), (cl, sq)) in &r.oks {
        if let Some(reqs) = entries.get(inst) {
            assert_eq!(
                reqs.get(*idx as usize),
                Some(&(*cl as u64, *sq)),
                "OK for client {cl} seq {sq} named instance {inst} entry {idx}"
            );
            checked += 1;
        }
    }
    assert!(checked > 0);
}

/// The soak's divergence under early sends, made certain: a follower preempted after reading
/// its trees and before running its timers, for longer than the timeout, while the leader goes
/// on. The copies that arrived meanwhile are queued, unread; a follower that ran its timers at
/// the clock would time out on them and lead a new epoch from a log without what the leader
/// decided meanwhile. It must read them first: no timeout, no new epoch, one log.
#[test]
fn a_follower_stalled_between_its_read_and_its_timers_does_not_time_out() {
    let file = test_file(3, 2, 53);
    let cluster_id = file.cluster_id as u32;
    let timeout_ms = file.timing.timeout_ns / 1_000_000;
    let mut c = Cluster::new(file);
    c.engine_args = vec![
        "--inject-stall".into(),
        format!("after-read:50:{}", 3 * timeout_ms),
    ];
    start_with_args_on(&mut c, 1);
    let addrs = c.client_addrs();
    let r = load(cluster_id, 43, addrs, 600, 2, 4, Duration::from_secs(60))
        .expect("load across the stall");
    assert_eq!(r.decided, 600);
    c.wait(Duration::from_secs(10), "the injected stall", |c| {
        c.engine_log(1).contains("fault injection: stalled")
    });
    std::thread::sleep(Duration::from_millis(3 * timeout_ms + 200));
    c.settle(&[0, 1, 2]);
    for i in 0..3u8 {
        let st = c.status(i);
        assert_eq!(counter(&st, "timeouts"), 0, "node {i} timed out: {st}");
        assert_eq!(
            (st["state"].as_str(), st["epoch"].as_u64()),
            (Some("Active"), Some(0)),
            "node {i}: {st}"
        );
    }
    assert_eq!(c.log(1), c.log(0), "the stalled follower's log");
    assert_eq!(c.log(2), c.log(0));
}

/// A leader stalled after its model decided to send and before the copies leave, for longer
/// than the timeout: the followers time out and the next node leads. The stalled leader's
/// message must not leave at all (a follower that has not timed out yet would decide it while
/// the new leader decides another value at that place): the engine judges the lease at the
/// present just before the send, holds the message back and makes the safe exit; the node
/// rejoins, and every log agrees.
#[test]
fn a_leader_stalled_before_its_copies_leave_holds_them_back() {
    let file = test_file(3, 2, 54);
    let cluster_id = file.cluster_id as u32;
    let timeout_ms = file.timing.timeout_ns / 1_000_000;
    let mut c = Cluster::new(file);
    c.engine_args = vec![
        "--inject-stall".into(),
        format!("before-send:20:{}", 3 * timeout_ms),
    ];
    start_with_args_on(&mut c, 0);
    let addrs = c.client_addrs();
    let r = load(cluster_id, 44, addrs, 600, 2, 4, Duration::from_secs(60))
        .expect("load across the leader's stall");
    assert_eq!(r.decided, 600);
    // The followers took over while node 0 slept: wait for it to wake.
    c.wait(Duration::from_secs(10), "node 0's lease verdict", |c| {
        c.engine_log(0).contains("lease:")
    });
    let log0 = c.engine_log(0);
    assert!(log0.contains("fault injection: stalled"), "{log0}");
    assert!(
        log0.contains("lease: a message held back"),
        "the late message left: {log0}"
    );
    c.wait(Duration::from_secs(30), "node 0 back in", |c| {
        c.status(0)["state"] == "Active"
    });
    c.settle(&[0, 1, 2]);
    let st0 = c.status(0);
    assert!(st0["epoch"].as_u64().unwrap() >= 1, "{st0}");
    assert_eq!(st0["recovery"]["lease_late_sends"], 1, "{st0}");
    let log1 = c.log(1);
    assert_eq!(c.log(2), log1);
    let log0 = c.log(0);
    assert!(
        log0.iter().all(|l| log1.contains(l)),
        "node 0's log holds what the others do not"
    );
}

/// Start three nodes, node `special` with `c.engine_args` (the others without), and START.
fn start_with_args_on(c: &mut Cluster, special: u8) {
    c.spawn(special);
    c.engine_args.clear();
    for i in (0..3u8).filter(|&i| i != special) {
        c.spawn(i);
    }
    let cfg = c.cfg.display().to_string();
    for i in 0..3u8 {
        c.soc_ctl(i, &["--node", &i.to_string(), "init", "--config", &cfg]);
    }
    c.soc_ctl(0, &["start"]);
    c.wait(Duration::from_secs(10), "every node active", |c| {
        (0..3u8).all(|i| c.status(i)["state"] == "Active")
    });
}

/// A leader stalled between its read of the trees and its timers for longer than the timeout,
/// under load: its successor decides (and acknowledges) many instances meanwhile, more copies
/// than one read takes. When it runs again its lease has passed: it steps down — and as a
/// follower its timers must not run before it has read those queued copies (the soak's lost
/// acknowledgements: it timed out through three epochs, led one from its old log, and the
/// others rejoined to it).
#[test]
fn a_leader_stalled_after_its_read_steps_down_without_timing_out() {
    let file = test_file(3, 2, 55);
    let cluster_id = file.cluster_id as u32;
    let timeout_ms = file.timing.timeout_ns / 1_000_000;
    let mut c = Cluster::new(file);
    c.engine_args = vec![
        "--inject-stall".into(),
        format!("leader-after-read:300:{}", 3 * timeout_ms),
    ];
    start_with_args_on(&mut c, 0);
    let (stop, client) = background_load(&c, cluster_id, 82, 8, 64);
    c.wait(Duration::from_secs(20), "node 0's stall and its end", |c| {
        c.engine_log(0).contains("fault injection: stalled")
            && c.status(0)["epoch"].as_u64().unwrap_or(0) >= 1
    });
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let r = client.join().unwrap().expect("load across the stall");
    assert!(r.decided > 0);
    c.wait(Duration::from_secs(30), "every node active", |c| {
        (0..3u8).all(|i| c.status(i)["state"] == "Active")
    });
    c.settle(&[0, 1, 2]);
    let st0 = c.status(0);
    assert_eq!(counter(&st0, "timeouts"), 0, "node 0 timed out: {st0}");
    let leader = c.status(1)["leader"].as_u64().unwrap() as u8;
    assert_ne!(leader, 0, "node 0 still leads: {st0}");
    let log_l = c.log(leader);
    for i in 0..3u8 {
        let l = c.log(i);
        assert!(
            l.iter().all(|e| log_l.contains(e)),
            "node {i}'s log holds what the leader's does not"
        );
    }
    // Every OK names the place its request holds in the leader's log.
    let entries = entries_of(&c, leader);
    assert!(!r.oks.is_empty());
    for ((inst, idx), (cl, sq)) in &r.oks {
        assert_eq!(
            entries.get(inst).and_then(|e| e.get(*idx as usize)),
            Some(&(*cl as u64, *sq)),
            "OK for client {cl} seq {sq} named instance {inst} entry {idx}"
        );
    }
}

/// A load of `window` outstanding requests of `payload` bytes from client `id` until the flag is
/// set; the thread returns its report (with every OK it got).
#[allow(clippy::type_complexity)]
fn background_load(
    c: &Cluster,
    cluster_id: u32,
    id: u32,
    window: usize,
    payload: usize,
) -> (
    Arc<AtomicBool>,
    std::thread::JoinHandle<Result<soc_ctl::client::LoadReport, String>>,
) {
    let addrs = c.client_addrs();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let client = std::thread::spawn(move || {
        soc_ctl::client::load_until(
            cluster_id,
            id,
            addrs,
            window,
            payload,
            &stop2,
            true,
            Duration::from_secs(120),
            None,
            &mut |_| {},
        )
        .map_err(|e| e.to_string())
    });
    (stop, client)
}

/// Node `i`'s log as instance → its requests (client, seq), read in pages.
fn entries_of(c: &Cluster, i: u8) -> std::collections::HashMap<u64, Vec<(u64, u64)>> {
    let mut entries = std::collections::HashMap::new();
    let mut from = 1u64;
    loop {
        let v = c
            .request(i, &format!("entries {from} 18446744073709551615"))
            .unwrap();
        let rows = v.as_array().unwrap();
        for row in rows {
            let inst = row[0].as_u64().unwrap();
            let reqs = row[1]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
                .collect();
            entries.insert(inst, reqs);
            from = inst + 1;
        }
        if rows.len() < soc_ctl::engine::ENTRIES_MAX {
            return entries;
        }
    }
}
