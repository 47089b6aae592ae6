//! The `xdp-log` binary as an operator uses it, in namespaces this test creates (root only):
//! attach in the foreground, stats --json, tail, clean detach on Ctrl-C (SIGINT), on `detach`
//! from another process, and attach --keep followed by `detach`; members only (--allow-source,
//! --nodes, --any-source; a forged DECIDE counted `unauthorized`).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use xdp_log::testbed::{RawSender, Testbed, is_root};

#[path = "../../soc-ctl/tests/common/prom.rs"]
mod prom;

const BIN: &str = env!("CARGO_BIN_EXE_xdp-log");
const CLUSTER: u32 = 0x4e43_0c11;
const PORT: u16 = 7402;

/// A command that runs in namespace `ns`; keep the returned file open until it is spawned.
fn in_ns(ns: &str, args: &[&str]) -> (Command, std::fs::File) {
    use std::os::fd::AsRawFd;
    let ns_file = std::fs::File::open(format!("/run/netns/{ns}")).unwrap();
    let fd = ns_file.as_raw_fd();
    let mut c = Command::new(BIN);
    c.args(args);
    // SAFETY: between fork and exec only setns, which is async-signal-safe (no allocation).
    unsafe {
        c.pre_exec(move || {
            if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    (c, ns_file)
}

fn run(args: &[&str]) -> Output {
    let o = Command::new(BIN).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "xdp-log {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < Duration::from_secs(30), "timed out: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let mut st = None;
    wait_for("xdp-log attach exits", || {
        st = child.try_wait().unwrap();
        st.is_some()
    });
    st.unwrap()
}

fn attached(tb: &Testbed) -> bool {
    let out = Command::new("ip")
        .args(["-n", &tb.host_ns, "link", "show", &tb.host_if])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).contains("prog/xdp")
}

fn stats(pin: &str) -> serde_json::Value {
    serde_json::from_slice(&run(&["stats", "--pin", pin, "--json"]).stdout).unwrap()
}

fn ip_str(a: [u8; 4]) -> String {
    std::net::Ipv4Addr::from(a).to_string()
}

fn attach_fg(tb: &Testbed, pin: &str, extra: &[&str]) -> Child {
    let cluster = CLUSTER.to_string();
    let port = PORT.to_string();
    let mut args = vec![
        "attach",
        "--iface",
        &tb.host_if,
        "--pin",
        pin,
        "--cluster-id",
        &cluster,
        "--port",
        &port,
    ];
    args.extend_from_slice(extra);
    let (mut c, _ns) = in_ns(&tb.host_ns, &args);
    c.stdout(Stdio::null()).spawn().unwrap()
}

fn decide(instance: u64, kind: proto::wire::DecideKind) -> Vec<u8> {
    let e = proto::wire::Entry {
        client_id: 1,
        seq: instance,
        flags: 0,
        payload: b"cli",
    };
    let mut raw = [0u8; 64];
    let n = if kind == proto::wire::DecideKind::Batch {
        proto::wire::emit_entries([&e], &mut raw).unwrap()
    } else {
        0
    };
    proto::wire::Packet::Decide(proto::wire::Decide {
        meta: proto::wire::DecideMeta {
            instance,
            epoch: 0,
            msg_seq: 0,
            tree: 0,
            kind,
        },
        count: u16::from(n > 0),
        entries_raw: &raw[..n],
    })
    .to_vec(CLUSTER, 0)
    .unwrap()
}

#[test]
fn attach_stats_tail_detach() {
    if !is_root() {
        eprintln!("SKIPPED: the xdp-log CLI test needs root (CI runs it as root)");
        return;
    }
    let tb = Testbed::new().unwrap();
    let pin = tb.pin_dir.to_str().unwrap().to_string();
    let link = tb.pin_dir.join("link");

    let nic = ip_str(tb.nic_ip);
    let members = ["--allow-source", &nic, "--nodes", "3"];

    // 0. Members only is a choice the operator makes: without --allow-source or --any-source,
    // or without --nodes, attach is refused before anything is loaded.
    for args in [
        vec!["--nodes", "3"],
        vec!["--allow-source", &nic],
        vec!["--any-source", "--allow-source", &nic, "--nodes", "3"],
        vec!["--allow-source", &nic, "--nodes", "65"],
    ] {
        let mut a = vec!["attach", "--iface", &tb.host_if, "--pin", &pin];
        a.extend(args.iter().copied());
        let (mut c, _ns) = in_ns(&tb.host_ns, &a);
        let o = c.output().unwrap();
        assert!(!o.status.success(), "refused: {args:?}");
        assert!(!attached(&tb) && !link.exists(), "{args:?}");
    }

    // 1. Foreground attach (skb mode), stats, tail, Ctrl-C.
    let mut fg = attach_fg(&tb, &pin, &[&["--mode", "skb"][..], &members].concat());
    wait_for("link pinned", || link.exists());
    assert!(attached(&tb));
    assert_eq!(stats(&pin)["logged"], 0);
    let mut tail = Command::new(BIN)
        .args(["tail", "--pin", &pin, "--count", "3"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stranger = tb.nic_ip;
    stranger[3] = 9;
    let frames: Vec<Vec<u8>> = [
        decide(1, proto::wire::DecideKind::Batch),
        decide(2, proto::wire::DecideKind::Heartbeat),
        decide(2, proto::wire::DecideKind::Batch),
    ]
    .iter()
    .map(|p| tb.frame(PORT, p))
    // A forged instance 3 from an address not allowed: counted, not logged, not tailed.
    .chain([tb.frame_from(stranger, PORT, &decide(3, proto::wire::DecideKind::Batch))])
    .chain([tb.frame(PORT, &decide(3, proto::wire::DecideKind::Batch))])
    .collect();
    tb.run_in(&tb.nic_ns, || {
        let s = RawSender::new(&tb.nic_if).unwrap();
        for f in &frames {
            s.send(f).unwrap();
        }
    })
    .unwrap();
    wait_for("tail exits", || tail.try_wait().unwrap().is_some());
    let mut out = String::new();
    tail.stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    for (i, l) in lines.iter().enumerate() {
        assert!(
            l.starts_with(&format!("instance {} ", i + 1)),
            "line {i}: {l}"
        );
        assert!(l.contains("Batch") && l.contains("1:"), "{l}");
    }
    let s = stats(&pin);
    assert_eq!(s["logged"], 3, "{s}");
    assert_eq!(s["heartbeats"], 1, "{s}");
    assert_eq!(s["unauthorized"], 1, "{s}");
    assert_eq!(s["seen"], 5, "{s}");
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(fg.id() as i32, libc::SIGINT) }, 0);
    assert!(wait_exit(&mut fg).success());
    assert!(!Path::new(&pin).exists(), "pins removed on Ctrl-C");
    assert!(!attached(&tb), "detached on Ctrl-C");

    // 2. Foreground attach (native, no checks), `detach` from another process: both end cleanly.
    let mut fg = attach_fg(
        &tb,
        &pin,
        &["--mode", "native", "--any-source", "--nodes", "0"],
    );
    wait_for("link pinned", || link.exists());
    assert!(attached(&tb));
    run(&["detach", "--pin", &pin]);
    assert!(!attached(&tb), "detached by `detach`");
    assert!(wait_exit(&mut fg).success());
    assert!(!Path::new(&pin).exists());

    // 3. attach --keep exits at once, stays attached until `detach`.
    let mut k = attach_fg(&tb, &pin, &[&["--keep"][..], &members].concat());
    assert!(wait_exit(&mut k).success());
    assert!(attached(&tb) && link.exists());
    let (mut c, _ns) = in_ns(
        &tb.host_ns,
        &[
            &["attach", "--iface", &tb.host_if, "--pin", &pin][..],
            &members,
        ]
        .concat(),
    );
    let o = c.output().unwrap();
    assert!(
        !o.status.success(),
        "a second attach on the same pins is refused"
    );
    run(&["detach", "--pin", &pin]);
    assert!(!attached(&tb));
    assert!(!Path::new(&pin).exists());
    let o = Command::new(BIN)
        .args(["detach", "--pin", &pin])
        .output()
        .unwrap();
    assert!(
        !o.status.success(),
        "detach with nothing pinned is an error"
    );
}

/// `attach --metrics ADDR`: the endpoint (in the attach's namespace) fetched over TCP, parsed
/// strictly as Prometheus text format 0.0.4, every counter equal to `stats --json`.
#[test]
fn attach_serves_prometheus_metrics() {
    if !is_root() {
        eprintln!("SKIPPED: the xdp-log CLI test needs root (CI runs it as root)");
        return;
    }
    let tb = Testbed::new().unwrap();
    let pin = tb.pin_dir.to_str().unwrap().to_string();
    let addr: std::net::SocketAddr = "127.0.0.1:9464".parse().unwrap();
    let a = addr.to_string();
    let mut fg = attach_fg(
        &tb,
        &pin,
        &[
            "--mode",
            "skb",
            "--any-source",
            "--nodes",
            "0",
            "--metrics",
            &a,
        ],
    );
    wait_for("link pinned", || tb.pin_dir.join("link").exists());
    let frames: Vec<Vec<u8>> = [
        decide(1, proto::wire::DecideKind::Batch),
        decide(2, proto::wire::DecideKind::Heartbeat),
        decide(2, proto::wire::DecideKind::Batch),
    ]
    .iter()
    .map(|p| tb.frame(PORT, p))
    .collect();
    tb.run_in(&tb.nic_ns, || {
        let s = RawSender::new(&tb.nic_if).unwrap();
        for f in &frames {
            s.send(f).unwrap();
        }
    })
    .unwrap();
    wait_for("2 logged", || stats(&pin)["logged"] == 2);
    let ready = || {
        tb.run_in(&tb.host_ns, || std::net::TcpStream::connect(addr).is_ok())
            .unwrap()
    };
    wait_for("the metrics endpoint", ready);
    let before = stats(&pin);
    let page = tb.run_in(&tb.host_ns, || prom::scrape(addr)).unwrap();
    let after = stats(&pin);
    let l: &[(&str, &str)] = &[("iface", &tb.host_if)];
    for (k, v) in before.as_object().unwrap() {
        let name = format!("nc_xdp_{k}_total");
        assert_eq!(page.types.get(&name).map(String::as_str), Some("counter"));
        let m = page.must(&name, l) as u64;
        assert!(
            v.as_u64().unwrap() <= m && m <= after[k].as_u64().unwrap(),
            "{name} {m}: stats {v} ..= {}",
            after[k]
        );
    }
    assert_eq!(page.must("nc_xdp_logged_total", l), 2.0);
    assert_eq!(page.must("nc_xdp_heartbeats_total", l), 1.0);
    assert_eq!(page.must("nc_xdp_attached", l), 1.0);
    let (code, ..) = tb
        .run_in(&tb.host_ns, || prom::http_get(addr, "/x"))
        .unwrap();
    assert_eq!(code, 404);
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    assert_eq!(unsafe { libc::kill(fg.id() as i32, libc::SIGINT) }, 0);
    assert!(wait_exit(&mut fg).success());
}
