//! ZooKeeper-NC end to end (root): the namespace lab with 3 engines; on every host a real
//! standalone ZooKeeper, xdp-log on the PCIe veth and `zk-nc node` applying the decision log.
//! Writes (create, versioned setData, delete) go through Nano-consensus while the leader's
//! engine is killed; afterwards every acknowledged write is visible, read back with the
//! ZooKeeper client protocol from each surviving node's own server, and the trees are identical.

use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::time::Duration;

use host_app::zk::ZkOp;
use nc_tools::app_lab::{self, AppBins, RedisNcLab, zk_addr, zk_nc_node_args};
use nc_tools::demo::{in_netns, request};
use soc_ctl::client::Client;

fn bins() -> AppBins {
    app_lab::built_for_tests(
        env!("CARGO"),
        PathBuf::from(env!("CARGO_BIN_EXE_nc-lab"))
            .parent()
            .unwrap(),
    )
}

/// (path, data) of every node under / on one server, read with the ZooKeeper client protocol.
fn tree(ns: String, addr: SocketAddrV4) -> Vec<(String, Vec<u8>)> {
    in_netns(Some(ns), move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let c = zookeeper_client::Client::connect(&addr.to_string())
                .await
                .expect("connect");
            let mut names = c.list_children("/").await.expect("children");
            names.retain(|n| n != "zookeeper");
            names.sort();
            let mut out = Vec::new();
            for n in names {
                let p = format!("/{n}");
                // A node may be deleted between the listing and the read (applies go on).
                match c.get_data(&p).await {
                    Ok((data, _)) => out.push((p, data)),
                    Err(zookeeper_client::Error::NoNode) => {}
                    Err(e) => panic!("get {p}: {e}"),
                }
            }
            out
        })
    })
    .join()
    .unwrap()
}

#[test]
fn zk_nc_survives_a_leader_kill_and_replicas_agree() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: needs root (namespaces, XDP); CI runs it as root");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let prefix = format!("ncz{}", std::process::id() % 10_000);
    let b = bins();
    let rl = RedisNcLab::start_app(
        &prefix,
        tmp.path(),
        3,
        &b.bins,
        &b.zk_nc,
        &|i, cfg, pin, dir| zk_nc_node_args(i, cfg, pin, dir, false),
    )
    .expect("ZooKeeper-NC lab");
    // Every node's ZooKeeper answers before the writes start (it takes seconds to boot).
    for i in 0..3u8 {
        let out = tree(rl.lab.clients(), zk_addr(i));
        assert!(out.is_empty(), "node {i}'s tree starts empty: {out:?}");
    }
    let f = rl.lab.load().unwrap();
    let (cluster, addrs) = (f.cluster_id as u32, f.client_addrs());
    let lab = rl.lab.clone();
    let writer = in_netns(Some(rl.lab.clients()), move || {
        let mut c = Client::new(cluster, 0x7A00_0001, addrs).unwrap();
        let mut acked = Vec::new();
        for k in 0..240u32 {
            if k == 80 {
                lab.kill(0);
            }
            let path = format!("/n{}", k % 120);
            // Two rounds over 120 nodes: create, then a versioned set (version 0 succeeds once).
            let op = if k < 120 {
                ZkOp::Create {
                    path: path.clone(),
                    data: format!("v{k}").into_bytes(),
                }
            } else {
                ZkOp::Set {
                    path: path.clone(),
                    data: format!("w{k}").into_bytes(),
                    version: Some(0),
                }
            };
            if c.request(0, &op.encode(), Duration::from_secs(10)).is_ok() {
                acked.push(op);
            }
        }
        // And delete one node.
        let del = ZkOp::Delete {
            path: "/n7".into(),
            version: None,
        };
        c.request(0, &del.encode(), Duration::from_secs(10))
            .expect("delete decided");
        acked
    });
    let acked = writer.join().unwrap();
    assert!(
        request(&rl.lab, 1, "status").unwrap()["is_leader"] == true,
        "node 1 took over"
    );
    assert!(
        acked.len() >= 200,
        "only {} writes acknowledged",
        acked.len()
    );
    // Both surviving replicas converge (poll until equal, 15 s).
    let t0 = std::time::Instant::now();
    let (mut t1, mut t2) = (Vec::new(), Vec::new());
    while t0.elapsed() < Duration::from_secs(15) {
        t1 = tree(rl.lab.clients(), zk_addr(1));
        t2 = tree(rl.lab.clients(), zk_addr(2));
        if t1 == t2 && t1.len() == 119 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    println!(
        "{} writes acknowledged; node 1 and node 2 hold {} and {} znodes",
        acked.len(),
        t1.len(),
        t2.len()
    );
    assert_eq!(t1, t2, "the surviving replicas differ");
    assert_eq!(t1.len(), 119, "120 created, /n7 deleted");
    assert!(!t1.iter().any(|(p, _)| p == "/n7"));
    // Every acknowledged versioned set is visible (it ran on version 0, right after its create).
    for op in &acked {
        if let ZkOp::Set { path, data, .. } = op
            && path != "/n7"
        {
            let got = t1.iter().find(|(p, _)| p == path).map(|(_, d)| d.clone());
            assert_eq!(got.as_deref(), Some(&data[..]), "{path}");
        }
    }
}
