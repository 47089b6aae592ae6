//! `nc-engine --metrics ADDR`: every node's Prometheus endpoint fetched over TCP, parsed strictly
//! as text format 0.0.4, its values checked against the control socket's `status`; and
//! `soc-ctl watch --metrics` reading a node through its endpoint.

mod common;
#[path = "common/prom.rs"]
mod prom;

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use common::{Cluster, SOC_CTL, counter, test_file};
use proto::regs::Counter;
use soc_ctl::client::load;

#[test]
fn every_engine_serves_its_status_as_prometheus_text() {
    let file = test_file(3, 2, 73);
    let cluster_id = file.cluster_id as u32;
    let mut c = Cluster::new(file);
    let addrs: Vec<SocketAddr> = (0..3).map(|_| prom::free_addr()).collect();
    for i in 0..3u8 {
        c.engine_args = vec!["--metrics".into(), addrs[i as usize].to_string()];
        c.spawn(i);
        assert!(
            c.engine_log(i)
                .contains(&format!("metrics on http://{}/metrics", addrs[i as usize])),
            "{}",
            c.engine_log(i)
        );
    }
    c.engine_args.clear();
    let cfg = c.cfg.display().to_string();
    for i in 0..3u8 {
        c.soc_ctl(i, &["--node", &i.to_string(), "init", "--config", &cfg]);
    }
    c.soc_ctl(0, &["start"]);
    c.wait(Duration::from_secs(10), "every node active", |c| {
        (0..3).all(|i| c.status(i)["state"] == "Active")
    });
    let r = load(
        cluster_id,
        31,
        c.client_addrs(),
        300,
        8,
        16,
        Duration::from_secs(60),
    )
    .expect("load");
    assert_eq!(r.decided, 300);

    for i in 0..3u8 {
        let addr = addrs[i as usize];
        let before = c.status(i);
        let page = prom::scrape(addr);
        let after = c.status(i);
        let node = i.to_string();
        let l: &[(&str, &str)] = &[("node", &node)];
        // Every register counter, as a counter family, between the two status answers.
        for k in Counter::ALL {
            let name = format!("nc_{}_total", k.name());
            assert_eq!(page.types.get(&name).map(String::as_str), Some("counter"));
            let v = page.must(&name, l) as u64;
            assert!(
                counter(&before, k.name()) <= v && v <= counter(&after, k.name()),
                "node {i} {name} {v} not within status {} ..= {}",
                counter(&before, k.name()),
                counter(&after, k.name())
            );
        }
        // Decisions carry batches: 300 requests are fewer decisions, all accepted by the leader.
        assert!(page.must("nc_delivered_total", l) >= 1.0);
        if i == 0 {
            assert!(page.must("nc_requests_accepted_total", l) >= 300.0);
        }
        // Values that do not move on an idle, healthy cluster.
        assert_eq!(page.must("nc_epoch", l), after["epoch"].as_f64().unwrap());
        assert_eq!(page.must("nc_leader", l), after["leader"].as_f64().unwrap());
        assert_eq!(page.must("nc_is_leader", l), if i == 0 { 1.0 } else { 0.0 });
        assert_eq!(
            page.must("nc_state", &[("node", &node), ("state", "Active")]),
            1.0
        );
        assert_eq!(
            page.must("nc_timeout", l),
            after["timeout"].as_f64().unwrap()
        );
        let last = page.must("nc_last_decided_instance", l) as u64;
        assert!(
            before["last_decided"].as_u64().unwrap() <= last
                && last <= after["last_decided"].as_u64().unwrap()
        );
        let len = page.must("nc_log_len", l) as u64;
        assert!(
            before["log_len"].as_u64().unwrap() <= len && len <= after["log_len"].as_u64().unwrap()
        );
        page.must("nc_engine_max_send_gap_seconds", l);
        assert_eq!(page.types["nc_engine_max_send_gap_seconds"], "gauge");
        // How long requests waited in the leader: every one of the 300 timed there (a
        // retransmission keeps its first arrival), none elsewhere.
        assert_eq!(page.types["nc_request_decided_seconds"], "histogram");
        let timed = page.must("nc_request_decided_seconds_count", l);
        let inf = page.must(
            "nc_request_decided_seconds_bucket",
            &[("node", &node), ("le", "+Inf")],
        );
        assert_eq!(timed, inf);
        if i == 0 {
            assert!(timed >= 300.0, "node 0 timed {timed} requests");
            let sum = page.must("nc_request_decided_seconds_sum", l);
            assert!(sum > 0.0 && sum / timed < 1.0, "mean {} s", sum / timed);
        } else {
            assert_eq!(timed, 0.0, "node {i} is no leader and timed requests");
        }
        for s in &page.samples {
            assert!(
                s.labels.iter().any(|(k, v)| k == "node" && *v == node),
                "{s:?} has no node label"
            );
        }
        // Anything but /metrics is a 404.
        assert_eq!(prom::http_get(addr, "/").0, 404);
        assert_eq!(prom::http_get(addr, "/metricsx").0, 404);
    }

    // `soc-ctl watch` through node 1's endpoint prints the same view as through its socket.
    let remote = Command::new(SOC_CTL)
        .args([
            "watch",
            "--metrics",
            &format!("http://{}", addrs[1]),
            "--count",
            "2",
            "--interval-ms",
            "50",
        ])
        .output()
        .unwrap();
    assert!(
        remote.status.success(),
        "{}",
        String::from_utf8_lossy(&remote.stderr)
    );
    let remote = String::from_utf8_lossy(&remote.stdout).into_owned();
    let local = c.soc_ctl(1, &["watch", "--count", "1"]);
    let head = |s: &str| -> String {
        // "follower epoch E leader L instance I | ...": role, epoch and leader.
        s.lines()
            .next()
            .unwrap_or("")
            .split(" instance")
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(remote.lines().count(), 2, "{remote}");
    assert_eq!(head(&remote), head(&local), "{remote}\n{local}");
    assert!(
        head(&local).starts_with("follower epoch 0 leader 0"),
        "{local}"
    );
    // host:port works too; a dead endpoint is an error naming it.
    let o = c.soc_ctl(
        1,
        &["watch", "--metrics", &addrs[2].to_string(), "--count", "1"],
    );
    assert!(o.starts_with("follower epoch 0 leader 0"), "{o}");
    let dead = prom::free_addr();
    let o = Command::new(SOC_CTL)
        .args(["watch", "--metrics", &dead.to_string(), "--count", "1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains(&dead.to_string()));
}
