//! Benchmark (root): one stream of DECIDE frames into the host end of a veth where xdp-log is
//! attached (not consuming), read at the same time by
//!   (a) the XDP path: the kernel's `logged` counter and an application reading the log with
//!       `DecisionLog` (in order; gaps counted and skipped by seeking — a benchmark, not an app),
//!   (b) a plain UDP socket bound to the same port in the host namespace.
//! Prints counts, rates over the same clock (from the first frame sent to the last one each
//! reader saw), and their ratio.
//!
//! `cargo run --release -p xdp-log --example bench -- [--frames N] [--mode native|skb]
//!  [--entries K] [--payload BYTES] [--pps RATE]` (`--pps`: pace the sender, 0 = as fast as it can)

use anyhow::{Context, Result, bail};
use proto::wire::{Decide, DecideKind, DecideMeta, Entry, Packet, emit_entries};
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};
use xdp_log::loader::{self, AttachOptions, Mode};
use xdp_log::testbed::{RawSender, Testbed, is_root};
use xdp_log::{DecisionLog, LogError};

const CLUSTER: u32 = 0x4e43_0b0b;
const PORT: u16 = 7402;

fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    let a: Vec<String> = std::env::args().collect();
    a.iter()
        .position(|x| x == name)
        .and_then(|i| a.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn packet(instance: u64, entries: usize, payload: usize) -> Vec<u8> {
    let body = vec![0x5a; payload];
    let es: Vec<Entry<'_>> = (0..entries)
        .map(|k| Entry {
            client_id: k as u32,
            seq: instance,
            flags: 0,
            payload: &body,
        })
        .collect();
    let mut raw = vec![0u8; 9000];
    let n = emit_entries(es.iter(), &mut raw).unwrap();
    Packet::Decide(Decide {
        meta: DecideMeta {
            instance,
            // Epoch 3 of 3 nodes: node 0 (the sender) leads it, so the members-only check
            // configured below hears every frame.
            epoch: 3,
            msg_seq: instance as u32,
            tree: 0,
            kind: DecideKind::Batch,
        },
        count: entries as u16,
        entries_raw: &raw[..n],
    })
    .to_vec(CLUSTER, 0)
    .unwrap()
}

fn main() -> Result<()> {
    if !is_root() {
        bail!("the benchmark needs root (network namespaces and XDP)");
    }
    let frames: u64 = arg("--frames", 200_000);
    let mode = match arg("--mode", "native".to_string()).as_str() {
        "skb" => Mode::Skb,
        _ => Mode::Native,
    };
    let entries: usize = arg("--entries", 1);
    let payload: usize = arg("--payload", 64);
    let pps: u64 = arg("--pps", 0);

    let tb = Testbed::new()?;
    let att = tb.run_in(&tb.host_ns, || {
        loader::attach(&AttachOptions {
            iface: tb.host_if.clone(),
            mode,
            pin_dir: tb.pin_dir.clone(),
            cluster_id: CLUSTER,
            port: PORT,
            consume: false,
            allow_sources: vec![tb.nic_ip.into()],
            nodes: 3,
        })
    })??;

    let done = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = mpsc::channel();

    // (b) plain UDP socket in the host namespace.
    let udp = {
        let ns = tb.host_ns.clone();
        let done = done.clone();
        let ready = ready_tx.clone();
        std::thread::spawn(move || -> Result<(u64, Option<Instant>)> {
            Testbed::enter(&ns)?;
            let s = UdpSocket::bind(("0.0.0.0", PORT))?;
            s.set_read_timeout(Some(Duration::from_millis(200)))?;
            ready.send(())?;
            let mut buf = [0u8; 9000];
            let (mut n, mut last) = (0u64, None);
            loop {
                match s.recv(&mut buf) {
                    Ok(_) => {
                        n += 1;
                        last = Some(Instant::now());
                    }
                    Err(_) if done.load(Ordering::Relaxed) => return Ok((n, last)),
                    Err(_) => {}
                }
            }
        })
    };
    // (a) an application reading the log in order.
    let app = {
        let pin = tb.pin_dir.clone();
        let done = done.clone();
        let ready = ready_tx.clone();
        std::thread::spawn(move || -> Result<(u64, u64, Option<Instant>)> {
            let mut log = DecisionLog::open_at(&pin, 1).map_err(anyhow::Error::from)?;
            ready.send(())?;
            let (mut n, mut gaps, mut last) = (0u64, 0u64, None);
            loop {
                match log.next_timeout(Duration::from_millis(200)) {
                    Ok(Some(_)) => {
                        n += 1;
                        last = Some(Instant::now());
                    }
                    Ok(None) if done.load(Ordering::Relaxed) => return Ok((n, gaps, last)),
                    Ok(None) => {}
                    Err(LogError::Gap {
                        expected,
                        oldest_available,
                    }) => {
                        gaps += 1;
                        let at = oldest_available.context("gap with an empty log")?;
                        log.seek(at.max(expected + 1));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
        })
    };
    ready_rx.recv()?;
    ready_rx.recv()?;

    let pkts: Vec<Vec<u8>> = (1..=frames)
        .map(|i| tb.frame(PORT, &packet(i, entries, payload)))
        .collect();
    let frame_len = pkts[0].len();
    let t0 = Instant::now();
    let t_send = tb.run_in(&tb.nic_ns, || -> Result<Duration> {
        let s = RawSender::new(&tb.nic_if)?;
        for (k, p) in pkts.iter().enumerate() {
            if pps > 0 {
                // Frame k leaves no earlier than k / pps seconds after the start.
                let due = Duration::from_secs_f64(k as f64 / pps as f64);
                while t0.elapsed() < due {
                    std::hint::spin_loop();
                }
            }
            s.send(p)?;
        }
        Ok(t0.elapsed())
    })??;
    // The XDP program runs in the receive path of each frame; poll its counter until it stops.
    let mut logged = 0;
    let mut t_logged = t_send;
    loop {
        let l = loader::read_stats(&tb.pin_dir)?.get(common::counter::LOGGED);
        if l == logged && l > 0 && t0.elapsed() > t_logged + Duration::from_millis(300) {
            break;
        }
        if l != logged {
            logged = l;
            t_logged = t0.elapsed();
        }
        if logged >= frames {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(500));
    done.store(true, Ordering::Relaxed);
    let (udp_n, udp_last) = udp.join().expect("udp thread")?;
    let (app_n, app_gaps, app_last) = app.join().expect("app thread")?;
    let stats = loader::read_stats(&tb.pin_dir)?;
    att.detach()?;

    let rate = |n: u64, d: Duration| n as f64 / d.as_secs_f64();
    let since = |t: Option<Instant>| t.map(|t| t - t0).unwrap_or(Duration::ZERO);
    let (t_udp, t_app) = (since(udp_last), since(app_last));
    println!(
        "xdp-log bench: {frames} DECIDE frames of {frame_len} B ({entries} entr{} x {payload} B), mode {mode:?}, sender {}",
        if entries == 1 { "y" } else { "ies" },
        if pps > 0 {
            format!("paced at {pps} frames/s")
        } else {
            "unpaced".to_string()
        }
    );
    println!(
        "sender (AF_PACKET, nic ns):   {frames} sent in {:.3} s = {:.0} frames/s",
        t_send.as_secs_f64(),
        rate(frames, t_send)
    );
    println!(
        "XDP path, kernel log:         {logged} logged ({:.2}% of sent) in {:.3} s = {:.0} decisions/s",
        100.0 * logged as f64 / frames as f64,
        t_logged.as_secs_f64(),
        rate(logged, t_logged)
    );
    println!(
        "XDP path, DecisionLog reader: {app_n} read in order ({app_gaps} gaps) in {:.3} s = {:.0} decisions/s",
        t_app.as_secs_f64(),
        rate(app_n, t_app)
    );
    println!(
        "UDP socket reader:            {udp_n} received ({:.2}% of sent) in {:.3} s = {:.0} decisions/s",
        100.0 * udp_n as f64 / frames as f64,
        t_udp.as_secs_f64(),
        rate(udp_n, t_udp)
    );
    println!(
        "ratio XDP logged / UDP received: {:.3} (counts), {:.3} (rates)",
        logged as f64 / udp_n.max(1) as f64,
        rate(logged, t_logged) / rate(udp_n, t_udp).max(1e-9)
    );
    println!("counters: {}", stats.to_json());
    Ok(())
}
