//! `redis-nc --metrics ADDR` and `zk-nc node --metrics ADDR` on a 1-node loopback cluster (no
//! root): each endpoint fetched over TCP, every line parsed strictly as Prometheus text format
//! 0.0.4, and its values checked against what the node reports itself (INFO nanoconsensus, the
//! engine's status).

mod common;
#[path = "../../soc-ctl/tests/common/prom.rs"]
mod prom;

use std::net::{SocketAddr, SocketAddrV4};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{bins, field, info};
use host_app::resp::Value;
use nc_tools::app_lab::connect_in;
use nc_tools::demo::{request, start_cluster, wait_for};
use nc_tools::netlab::Lab;

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn v4(a: SocketAddr) -> SocketAddrV4 {
    match a {
        SocketAddr::V4(a) => a,
        SocketAddr::V6(_) => unreachable!(),
    }
}

/// Both tests' labs use the loopback file's addresses: one at a time.
static ONE_LAB: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The lab's engines stop with the test.
struct Down(Lab);
impl Drop for Down {
    fn drop(&mut self) {
        let _ = self.0.down();
    }
}

fn one_node_lab(tag: &str, dir: &std::path::Path) -> Down {
    let prefix = format!("{tag}{}", std::process::id() % 10_000);
    let mut lab = Lab::new(&prefix, Some(dir.join("lab")));
    lab.netns = false;
    lab.up(1).expect("lab up");
    Down(lab)
}

#[test]
fn redis_nc_serves_prometheus_metrics() {
    let _one = ONE_LAB.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let down = one_node_lab("nmr", tmp.path());
    let lab = &down.0;
    let bins = bins();
    start_cluster(lab, &bins.bins, &[0]).expect("cluster");
    let (front, metrics) = (prom::free_addr(), prom::free_addr());
    let log = tmp.path().join("redis-nc.log");
    let _p = Kill(
        Command::new(&bins.redis_nc)
            .args(["--config", &lab.cfg_path().display().to_string()])
            .args(["--node", "0", "--listen", &front.to_string()])
            .args(["--dir", &tmp.path().join("redis").display().to_string()])
            .args(["--engine-ctl", &lab.ctl(0).display().to_string()])
            .args(["--metrics", &metrics.to_string()])
            .env_remove(host_app::auth::REDIS_ENV)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let mut c = connect_in(None, v4(front), Duration::from_secs(30)).unwrap();
    wait_for(
        Duration::from_secs(20),
        "PONG",
        || matches!(c.call(&[b"PING"]), Ok(Value::Simple(ref s)) if s == "PONG"),
    )
    .unwrap();
    for k in 0..20 {
        let key = format!("k{k}");
        let r = c.call(&[b"SET", key.as_bytes(), b"v"]).unwrap();
        assert_eq!(r, Value::Simple("OK".into()));
    }
    assert_eq!(
        c.call(&[b"GET", b"k3"]).unwrap(),
        Value::Bulk(Some(b"v".to_vec()))
    );
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(
        stderr.contains(&format!("metrics on http://{metrics}/metrics")),
        "{stderr}"
    );

    let before = info(&mut c);
    let page = prom::scrape(metrics);
    let after = info(&mut c);
    let l: &[(&str, &str)] = &[("node", "0")];
    let applied = page.must("nc_applied_instance", l) as u64;
    assert!(field(&before, "nc_applied") <= applied && applied <= field(&after, "nc_applied"));
    let decided = page.must("nc_engine_decided_instance", l) as u64;
    // The engine's instance is sampled by a watcher thread: it can trail the replica.
    assert_eq!(
        page.must("nc_apply_lag", l) as u64,
        decided.saturating_sub(applied)
    );
    // No write ran between the two INFOs: the write figures are exact.
    let writes = field(&after, "nc_stage_writes");
    assert_eq!(writes, 20);
    assert_eq!(page.must("nc_stage_writes_total", l) as u64, writes);
    for k in ["propose_ns", "apply_wait_ns", "decided_writes"] {
        assert_eq!(
            page.must(&format!("nc_stage_{k}_total"), l) as u64,
            field(&after, &format!("nc_stage_{k}")),
            "{k}"
        );
    }
    assert_eq!(
        page.must("nc_read_barriers_total", l) as u64,
        field(&after, "nc_read_barriers")
    );
    assert!(page.must("nc_read_barriers_total", l) >= 1.0);
    let copies = page.must("nc_feed_host_copies_total", l) as u64;
    assert!(
        field(&before, "nc_host_copies") <= copies && copies <= field(&after, "nc_host_copies")
    );
    assert_eq!(
        page.must("nc_mode", &[("node", "0"), ("mode", "serving")]),
        1.0
    );
    assert_eq!(page.types["nc_write_latency_seconds"], "histogram");
    assert_eq!(
        prom::check_histogram(&page, "nc_write_latency_seconds", l),
        writes
    );
    assert_eq!(prom::http_get(metrics, "/").0, 404);
}

#[test]
fn zk_nc_serves_prometheus_metrics() {
    let _one = ONE_LAB.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let down = one_node_lab("nmz", tmp.path());
    let lab = &down.0;
    let bins = bins();
    start_cluster(lab, &bins.bins, &[0]).expect("cluster");
    let (zk, front, metrics) = (prom::free_addr(), prom::free_addr(), prom::free_addr());
    let log = tmp.path().join("zk-nc.log");
    let _p = Kill(
        Command::new(&bins.zk_nc)
            .args(["node", "--config", &lab.cfg_path().display().to_string()])
            .args(["--node", "0", "--zk", &zk.to_string()])
            .args(["--dir", &tmp.path().join("zk").display().to_string()])
            .args(["--engine-ctl", &lab.ctl(0).display().to_string()])
            .args(["--listen", &front.to_string(), "--no-fsync"])
            .args(["--metrics", &metrics.to_string()])
            .env_remove(host_app::auth::ZK_ENV)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_for(Duration::from_secs(90), "the metrics endpoint", || {
        std::net::TcpStream::connect(metrics).is_ok()
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", std::fs::read_to_string(&log).unwrap()));
    let writes = 5;
    for k in 0..writes {
        let o = Command::new(&bins.zk_nc)
            .args(["--config", &lab.cfg_path().display().to_string()])
            .args(["write", "--front", &front.to_string()])
            .args(["create", &format!("/m{k}"), "x"])
            .env_remove(host_app::auth::ZK_ENV)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{}{}",
            String::from_utf8_lossy(&o.stderr),
            std::fs::read_to_string(&log).unwrap()
        );
    }
    let page = prom::scrape(metrics);
    let st = request(lab, 0, "status").unwrap();
    let l: &[(&str, &str)] = &[("node", "0")];
    let applied = page.must("nc_applied_instance", l) as u64;
    assert!(applied >= writes, "{applied}");
    assert!(applied <= st["last_decided"].as_u64().unwrap());
    let decided = page.get("nc_engine_decided_instance", l);
    if let Some(d) = decided {
        // The engine's instance is sampled by a watcher thread: it can trail the replica.
        assert_eq!(page.must("nc_apply_lag", l), (d - applied as f64).max(0.0));
    }
    assert!(page.must("nc_feed_host_copies_total", l) >= writes as f64);
    assert_eq!(
        page.must("nc_mode", &[("node", "0"), ("mode", "serving")]),
        1.0
    );
    assert_eq!(page.must("nc_zk_refused_total", l), 0.0);
    assert_eq!(
        prom::check_histogram(&page, "nc_write_latency_seconds", l),
        writes
    );
}
