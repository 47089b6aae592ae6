//! The multicast transport for real: three engines in their own network namespaces, two
//! Linux bridges as the two multicast trees, a client namespace; then one tree's link goes
//! down at one follower. Needs root (CI runs as root); without root it says so and passes.
//! Only namespaces this test creates are touched; they are removed at the end.

mod common;

use std::net::Ipv4Addr;
use std::process::Command;
use std::time::Duration;

use common::{Cluster, counter, test_file};
use soc_ctl::cluster::Transport;

fn sh(args: &[&str]) {
    let o = Command::new(args[0])
        .args(&args[1..])
        .output()
        .expect("run");
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Namespaces of one test run, deleted on drop (deleting the switch removes bridges and veths).
struct Netns {
    names: Vec<String>,
}

impl Drop for Netns {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

#[test]
fn three_engines_over_real_multicast_in_namespaces() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: the multicast namespace test needs root (CI runs it as root)");
        return;
    }
    let tag = format!("{}", std::process::id() % 100_000);
    let sw = format!("ncsw{tag}");
    let node_ns: Vec<String> = (0..3).map(|i| format!("ncn{tag}-{i}")).collect();
    let cl = format!("ncc{tag}");
    let mut all = vec![sw.clone(), cl.clone()];
    all.extend(node_ns.iter().cloned());
    let _guard = Netns { names: all.clone() };
    for n in &all {
        sh(&["ip", "netns", "add", n]);
        sh(&["ip", "-n", n, "link", "set", "lo", "up"]);
    }
    for br in ["tra", "trb"] {
        sh(&["ip", "-n", &sw, "link", "add", br, "type", "bridge"]);
        // No IGMP snooping: the bridge floods multicast like a simple tree.
        sh(&[
            "ip",
            "-n",
            &sw,
            "link",
            "set",
            br,
            "type",
            "bridge",
            "mcast_snooping",
            "0",
        ]);
        sh(&["ip", "-n", &sw, "link", "set", br, "up"]);
    }
    let mut file = test_file(3, 2, 61);
    file.transport = Transport::Multicast;
    let groups = [file.trees[0].group, file.trees[1].group];
    let attach = |ns: &str, ifname: &str, peer: &str, br: &str, addr: &str| {
        sh(&[
            "ip", "link", "add", ifname, "netns", ns, "type", "veth", "peer", "name", peer,
            "netns", &sw,
        ]);
        sh(&["ip", "-n", &sw, "link", "set", peer, "master", br]);
        sh(&["ip", "-n", &sw, "link", "set", peer, "up"]);
        sh(&["ip", "-n", ns, "addr", "add", addr, "dev", ifname]);
        sh(&["ip", "-n", ns, "link", "set", ifname, "up"]);
    };
    for i in 0..3u8 {
        let ns = &node_ns[i as usize];
        let a = Ipv4Addr::new(10, 71, 1, 1 + i);
        let b = Ipv4Addr::new(10, 71, 2, 1 + i);
        attach(ns, "ta", &format!("pa{i}"), "tra", &format!("{a}/24"));
        attach(ns, "tb", &format!("pb{i}"), "trb", &format!("{b}/24"));
        sh(&[
            "ip",
            "-n",
            ns,
            "route",
            "add",
            &format!("{}/32", groups[0]),
            "dev",
            "ta",
        ]);
        sh(&[
            "ip",
            "-n",
            ns,
            "route",
            "add",
            &format!("{}/32", groups[1]),
            "dev",
            "tb",
        ]);
        let n = &mut file.nodes[i as usize];
        n.tree_addrs = vec![a, b];
        n.tree_ifaces = vec!["ta".into(), "tb".into()];
        n.client_addr = a;
        n.host_addr = a;
    }
    attach(&cl, "ta", "pcl", "tra", "10.71.1.100/24");
    file.validate().expect("valid multicast file");

    let mut c = Cluster::new(file);
    let ns2 = node_ns.clone();
    c.wrap = Some(Box::new(move |i| {
        vec![
            "ip".into(),
            "netns".into(),
            "exec".into(),
            ns2[i as usize].clone(),
        ]
    }));
    c.start(&[0, 1, 2]);
    assert!(
        c.engine_log(0).contains("multicast transport"),
        "{}",
        c.engine_log(0)
    );

    let client = |total: u32, id: u32| {
        let o = Command::new("ip")
            .args([
                "netns",
                "exec",
                &cl,
                env!("CARGO_BIN_EXE_nc-client"),
                "--config",
            ])
            .arg(&c.cfg)
            .args([
                "--client-id",
                &id.to_string(),
                "load",
                "--requests",
                &total.to_string(),
            ])
            .args(["--window", "4", "--timeout-s", "60"])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "nc-client: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    println!("multicast, 3 namespaces: {}", client(2000, 1));
    c.settle(&[0, 1, 2]);
    let l0 = c.log(0);
    assert!(l0.len() >= 2000 / 64);
    assert_eq!(l0, c.log(1));
    assert_eq!(l0, c.log(2));
    for i in 0..3 {
        assert_eq!(counter(&c.status(i), "net_faults"), 0);
    }

    // Tree b's link at follower 2 goes down: it raises NET-FAULT and stops deciding (it cannot
    // lock onto the stream again without tree b); the others go on.
    sh(&["ip", "-n", &node_ns[2], "link", "set", "tb", "down"]);
    c.wait(Duration::from_secs(5), "node 2 NET-FAULT", |c| {
        counter(&c.status(2), "net_faults") == 1
    });
    assert_eq!(c.status(2)["recovery"]["rejoining"], true);
    let frozen = c.log(2);
    println!("after the link failure: {}", client(1000, 2));
    c.settle(&[0, 1]);
    assert_eq!(c.log(0), c.log(1));
    assert!(c.log(0).len() > frozen.len());
    assert_eq!(c.log(2), frozen);
    assert_eq!(c.status(0)["state"], "Active");
    assert_eq!(c.status(1)["state"], "Active");
    assert_eq!(c.status(2)["state"], "Joining");

    // The link comes back: node 2 rejoins by itself (state transfer over TCP from a member).
    sh(&["ip", "-n", &node_ns[2], "link", "set", "tb", "up"]);
    c.wait(Duration::from_secs(10), "node 2 active again", |c| {
        c.status(2)["state"] == "Active"
    });
    println!("after the rejoin: {}", client(500, 3));
    c.settle(&[0, 1, 2]);
    assert_eq!(c.log(2), c.log(0));
}
