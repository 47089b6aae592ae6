//! The whole host path, end to end (root): three engines in the namespace lab, the XDP program
//! of xdp-log attached to the host end of node 1's PCIe veth, a client load; the decisions the
//! host application reads through `xdp_log::DecisionLog` are exactly node 1's decision log.

use std::path::PathBuf;
use std::time::Duration;

use nc_tools::app_lab::xdp_members;
use nc_tools::demo::{Bins, in_netns, logs, settle, start_cluster};
use nc_tools::netlab::Lab;
use proto::transfer::crc32;
use soc_ctl::client::load;
use xdp_log::DecisionLog;
use xdp_log::loader::{AttachOptions, Mode, attach, read_stats};

fn bins() -> Bins {
    Bins::built_for_tests(
        env!("CARGO"),
        PathBuf::from(env!("CARGO_BIN_EXE_nc-lab"))
            .parent()
            .unwrap(),
    )
}

fn run(mode: Mode, tag: &str) {
    let bins = bins();
    let state = tempfile::tempdir().unwrap();
    let prefix = format!("{tag}{}", std::process::id() % 10_000);
    let mut lab = Lab::new(&prefix, Some(state.path().join("lab")));
    lab.netns = true;
    struct Down(Lab);
    impl Drop for Down {
        fn drop(&mut self) {
            let _ = self.0.down();
        }
    }
    let f = lab.up(3).expect("lab up");
    let _down = Down(lab.clone());
    start_cluster(&lab, &bins, &[0, 1, 2]).expect("cluster");

    let pin = PathBuf::from(format!("/sys/fs/bpf/{prefix}"));
    // Members only: node 1's host copies are heard from its NIC's address alone, and only from
    // the leader of their epoch.
    let (allow_sources, nodes) = xdp_members(&lab, &f, 1).expect("host copy source");
    let opts = AttachOptions {
        iface: "pcie".into(),
        mode,
        pin_dir: pin.clone(),
        cluster_id: f.cluster_id as u32,
        port: f.ports.host as u16,
        consume: false,
        allow_sources,
        nodes,
    };
    // Attach from inside host-1 (where its end of the PCIe veth lives); keep it attached on that
    // thread until told to detach.
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let holder = in_netns(Some(lab.host(1)), move || match attach(&opts) {
        Ok(a) => {
            ready_tx.send(Ok(())).unwrap();
            let _ = rx.recv();
            a.detach().map_err(|e| format!("{e:#}"))
        }
        Err(e) => {
            let msg = format!("{e:#}");
            ready_tx.send(Err(msg.clone())).unwrap();
            Err(msg)
        }
    });
    ready_rx
        .recv()
        .unwrap()
        .expect("attach xdp-log on host-1's pcie");

    let (cluster, addrs) = (f.cluster_id as u32, f.client_addrs());
    let r = in_netns(Some(lab.clients()), move || {
        // At most one instance per request (early sends decide small batches): 1000 requests
        // fit the XDP log's 1024 slots whatever the batching.
        load(cluster, 5, addrs, 1000, 8, 48, Duration::from_secs(60))
    })
    .join()
    .unwrap()
    .expect("load");
    assert_eq!(r.decided, 1000);
    settle(&lab, &[0, 1, 2]).unwrap();
    let engine_log = &logs(&lab, &[1]).unwrap()[0];
    assert!(
        engine_log.len() < 1024,
        "the test must fit the XDP log's 1024 slots"
    );

    let mut dl = DecisionLog::open(&pin).expect("open the pinned log");
    let mut host = Vec::new();
    while let Some(d) = dl
        .next_timeout(Duration::from_millis(200))
        .expect("no gap, no corruption")
    {
        let de = d.decide();
        host.push(format!(
            "{} {:?} {} {:08x}",
            d.instance,
            d.kind,
            d.count,
            crc32(de.entries_raw)
        ));
    }
    println!(
        "{mode:?}: {} decisions read through XDP on host-1, {} in node 1's log; client {}",
        host.len(),
        engine_log.len(),
        r.summary()
    );
    let stats = read_stats(&pin).expect("stats");
    let named: Vec<(&str, u64)> = stats.named().collect();
    if host != *engine_log {
        let first = |v: &[String]| v.iter().take(3).cloned().collect::<Vec<_>>();
        panic!(
            "the host's decisions differ from the engine's log: host {} (first {:?}), engine {} (first {:?}); XDP counters {named:?}",
            host.len(),
            first(&host),
            engine_log.len(),
            first(engine_log)
        );
    }
    let get = |k: &str| {
        named
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| *v)
            .unwrap_or(0)
    };
    assert_eq!(get("logged"), host.len() as u64, "{named:?}");
    assert_eq!(get("malformed"), 0, "{named:?}");
    assert_eq!(
        get("unauthorized"),
        0,
        "genuine host copies are heard: {named:?}"
    );
    assert_eq!(get("gaps"), 0, "{named:?}");
    tx.send(()).unwrap();
    holder.join().unwrap().expect("detach");
    assert!(!pin.exists(), "pins left behind");
}

#[test]
fn engine_host_path_through_xdp_equals_the_engine_log() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: needs root (namespaces, XDP); CI runs it as root");
        return;
    }
    // Generic (skb) mode: the lab's links carry 9000-byte frames (a full DECIDE), which native XDP
    // on a veth refuses without multi-buffer support (bpf_link_create: ERANGE, tried).
    run(Mode::Skb, "nch");
}
