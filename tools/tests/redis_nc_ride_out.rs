//! A safe exit while clients write and read, on loopback. The leader's engine stalls 40 ms
//! between the first tree's copies of its 40th value message and the other tree's
//! (`--inject-stall between-copies:40:40`; Δ is 4 ms as root and 16 ms for other users, so
//! 40 ms is past both): every follower sees a copy missing, makes a safe exit and the cluster
//! recovers by itself. One writer per front sets a fresh key and reads it back, one command at
//! a time, throughout. Every command is answered with its result: a command that arrives while
//! its node's engine is recovering waits for it (the fronts' ride-out) instead of answering
//! `-TRYAGAIN`. Afterwards every acknowledged write reads back at every front.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{Fronts, caught_up, info};
use host_app::resp::Value;
use nc_tools::app_lab::connect_in;
use nc_tools::demo::wait_for;
use nc_tools::netlab::Lab;

#[test]
fn a_safe_exit_under_load_is_ridden_out_and_loses_no_acknowledged_write() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = format!("nro{}", std::process::id() % 10_000);
    let mut lab = Lab::new(&prefix, Some(tmp.path().join("lab")));
    lab.engine_args = vec!["--inject-stall".into(), "between-copies:40:40".into()];
    let mut f = Fronts::up(lab, tmp.path());
    for i in 0..3 {
        f.start(i);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..3usize)
        .map(|w| {
            let stop = stop.clone();
            let SocketAddr::V4(a) = f.addr(w) else {
                unreachable!()
            };
            std::thread::spawn(move || -> Result<Vec<String>, String> {
                let mut r =
                    connect_in(None, a, Duration::from_secs(20)).map_err(|e| e.to_string())?;
                let mut acked = Vec::new();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    n += 1;
                    let k = format!("w{w}-{n}");
                    let v = format!("v{n}");
                    match r.call(&[b"SET", k.as_bytes(), v.as_bytes()]) {
                        Ok(Value::Simple(ok)) if ok == "OK" => acked.push(k.clone()),
                        other => return Err(format!("front {w}: SET {k}: {other:?}")),
                    }
                    match r.call(&[b"GET", k.as_bytes()]) {
                        Ok(Value::Bulk(Some(got))) if got == v.as_bytes() => {}
                        other => {
                            return Err(format!("front {w}: GET {k} after its SET: {other:?}"));
                        }
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Ok(acked)
            })
        })
        .collect();
    // The stall, the safe exits it causes, and the recovery.
    let logs = |f: &Fronts| {
        (0..3u8)
            .map(|i| std::fs::read_to_string(f.lab.engine_log(i)).unwrap_or_default())
            .collect::<Vec<_>>()
    };
    let t0 = Instant::now();
    let faulted = loop {
        let l = logs(&f);
        if l[0].contains("fault injection: stalled")
            && l.iter().filter(|s| s.contains("safe exit")).count() >= 1
        {
            break true;
        }
        if t0.elapsed() > Duration::from_secs(60) || workers.iter().any(|w| w.is_finished()) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Writes go on for a while after the fault (the recovery happens in this time).
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::Relaxed);
    let mut acked = Vec::new();
    let mut errors = Vec::new();
    for w in workers {
        match w.join().expect("writer thread") {
            Ok(k) => acked.push(k),
            Err(e) => errors.push(e),
        }
    }
    let l = logs(&f);
    assert!(
        faulted,
        "no safe exit after the injected stall (writers' errors: {errors:?}); engine logs:\n{}",
        l.join("\n---\n")
    );
    assert!(
        errors.is_empty(),
        "commands were not served across the safe exit: {errors:?}; engine logs:\n{}",
        l.join("\n---\n")
    );
    let written: usize = acked.iter().map(Vec::len).sum();
    eprintln!(
        "acknowledged writes: {written} ({:?} per front); safe exits logged by {} engine(s)",
        acked.iter().map(Vec::len).collect::<Vec<_>>(),
        l.iter().filter(|s| s.contains("safe exit")).count()
    );
    assert!(
        acked.iter().all(|a| !a.is_empty()),
        "a front served nothing"
    );
    // Every engine Active again, every front caught up, every acknowledged write everywhere.
    let mut conns: Vec<_> = (0..3).map(|i| f.connect(i)).collect();
    wait_for(
        Duration::from_secs(30),
        "every front serving and caught up",
        || conns.iter_mut().all(|c| caught_up(&info(c), 1)),
    )
    .unwrap();
    for (i, c) in conns.iter_mut().enumerate() {
        for k in acked.iter().flatten() {
            let n = k.rsplit('-').next().unwrap();
            let want = format!("v{n}");
            match c.call(&[b"GET", k.as_bytes()]).unwrap() {
                Value::Bulk(Some(got)) if got == want.as_bytes() => {}
                other => panic!("front {i}: acknowledged {k} = {want} reads {other:?}"),
            }
        }
    }
}
