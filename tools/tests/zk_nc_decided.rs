//! ZooKeeper-NC: a decided write whose outcome its front cannot learn is not answered
//! `TRYAGAIN` or `CLUSTERDOWN`, which writers take for "not done" and retry elsewhere (a decided
//! write retried is applied twice). Before, this test got `CLUSTERDOWN … apply stopped`. Node 1's
//! ZooKeeper is stopped (SIGSTOP), so node 1's replica cannot apply: a create sent to front 1
//! is decided by the cluster but not applied there, and front 1 answers an error that names the
//! instance and says a retry would apply it twice. The other fronts read the created node.

mod common;

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use common::{bins, zookeeper_pid};
use nc_tools::demo::wait_for;
use nc_tools::netlab::Lab;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

#[test]
fn a_decided_write_without_its_outcome_is_not_answered_tryagain() {
    let bins = bins();
    let tmp = tempfile::tempdir().unwrap();
    let mut lab = Lab::new(
        &format!("nzd{}", std::process::id() % 10_000),
        Some(tmp.path().join("lab")),
    );
    lab.netns = false;
    /// Takes the lab down and lets a stopped ZooKeeper run again when dropped.
    struct Down(Lab, Option<Pid>);
    impl Drop for Down {
        fn drop(&mut self) {
            if let Some(p) = self.1 {
                let _ = kill(p, Signal::SIGCONT);
            }
            let _ = self.0.down();
        }
    }
    let mut down = Down(lab.clone(), None);
    let (zk_base, front_base) = (2381u16, 2391u16);
    nc_tools::app_lab::zk_up(&lab, &bins.bins, &bins.zk_nc, 3, zk_base, front_base)
        .unwrap_or_else(|e| panic!("zk up: {e}"));
    let front = |i: u16| SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, front_base + i));
    let zk = Pid::from_raw(zookeeper_pid(&lab.dir.join("zk-1")).expect("node 1's ZooKeeper runs"));
    kill(zk, Signal::SIGSTOP).unwrap();
    down.1 = Some(zk);
    let mut w = host_app::zk_front::connect(front(1)).unwrap();
    let t0 = Instant::now();
    let r = host_app::zk_front::call(&mut w, &json!({"op": "create", "path": "/d", "data": "1"}));
    let waited = t0.elapsed();
    let Err(e) = &r else {
        panic!("a create at a front whose ZooKeeper is stopped answered {r:?}");
    };
    assert!(
        e.starts_with("ERR ") && e.contains("decided at instance") && e.contains("twice"),
        "a decided create was answered {e:?} after {waited:?}"
    );
    eprintln!("front 1 answered after {waited:?}: {e}");
    // Decided: the other replicas have it.
    for i in [0u16, 2] {
        let mut c = host_app::zk_front::connect(front(i)).unwrap();
        let mut got = json!(null);
        wait_for(
            Duration::from_secs(30),
            "the node at the other fronts",
            || {
                got = host_app::zk_front::call(&mut c, &json!({"op": "get", "path": "/d"}))
                    .unwrap_or_else(|e| json!(e));
                got["result"] == "data" && got["data"] == "1"
            },
        )
        .unwrap_or_else(|_| panic!("front {i}: /d reads {got}"));
    }
}
