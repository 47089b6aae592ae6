//! Writes proposed together (host-app README "Writes proposed together"), on loopback: many
//! connections write at one front at once, so the front carries several writes in one proposal,
//! and every client must still get its own command's reply. Each client checks replies it can
//! predict exactly (the length of its own list after RPUSH, of its own string after APPEND, +OK
//! for SET, a rising counter for INCR): a reply routed to the wrong write, or a write applied
//! twice or not at all, fails the test. Then the replicas must be identical, and the front must
//! have carried more writes than it sent proposals (else nothing here was batched).
//!
//! Beside them, pipelining clients send each round's SET, GET, INCR and GET in one write: a lane
//! answers the SETs and a session the rest, and the replies must still come in command order,
//! each GET seeing the write just before it on its connection.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::{Fronts, field, info};
use host_app::resp::Value;
use nc_tools::demo::wait_for;
use nc_tools::netlab::Lab;

const CLIENTS: u64 = 24;
const ROUNDS: u64 = 60;
/// Connections that pipeline their commands.
const PIPES: u64 = 4;

#[test]
fn writes_carried_together_each_get_their_own_reply() {
    let tmp = tempfile::tempdir().unwrap();
    let lab = Lab::new(
        &format!("nrb{}", std::process::id() % 10_000),
        Some(tmp.path().join("lab")),
    );
    let mut f = Fronts::up(lab, tmp.path());
    for i in 0..3 {
        f.start(i);
    }
    let SocketAddr::V4(front) = f.addr(0) else {
        unreachable!()
    };
    let go = Arc::new(Barrier::new((CLIENTS + PIPES) as usize));
    let pipes: Vec<_> = (0..PIPES)
        .map(|c| {
            let go = go.clone();
            std::thread::spawn(move || pipelined(front.into(), c, &go))
        })
        .collect();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let go = go.clone();
            std::thread::spawn(move || {
                let mut r =
                    nc_tools::app_lab::connect_in(None, front, Duration::from_secs(20)).unwrap();
                let (list, text, key) = (format!("l{c}"), format!("t{c}"), format!("s{c}"));
                let mut counters = Vec::new();
                go.wait();
                for n in 1..=ROUNDS {
                    let call = |r: &mut nc_tools::app_lab::RespConn, args: &[&[u8]]| {
                        r.call(args).unwrap_or_else(|e| panic!("client {c}: {e}"))
                    };
                    let v = format!("c{c}-{n}");
                    assert_eq!(
                        call(&mut r, &[b"SET", key.as_bytes(), v.as_bytes()]),
                        Value::Simple("OK".into()),
                        "client {c} SET, round {n}"
                    );
                    assert_eq!(
                        call(&mut r, &[b"RPUSH", list.as_bytes(), v.as_bytes()]),
                        Value::Integer(n as i64),
                        "client {c} RPUSH, round {n}: its list's length"
                    );
                    assert_eq!(
                        call(&mut r, &[b"APPEND", text.as_bytes(), b"xy"]),
                        Value::Integer(2 * n as i64),
                        "client {c} APPEND, round {n}: its string's length"
                    );
                    match call(&mut r, &[b"INCR", b"counter"]) {
                        Value::Integer(i) => counters.push(i),
                        other => panic!("client {c} INCR, round {n}: {other:?}"),
                    }
                }
                assert!(
                    counters.windows(2).all(|w| w[0] < w[1]),
                    "client {c}: its INCR replies must rise: {counters:?}"
                );
                counters
            })
        })
        .collect();
    for p in pipes {
        p.join().expect("a pipelining client failed");
    }
    let mut all: Vec<i64> = clients
        .into_iter()
        .flat_map(|h| h.join().expect("a client failed"))
        .collect();
    all.sort_unstable();
    let want: Vec<i64> = (1..=(CLIENTS * ROUNDS) as i64).collect();
    assert!(
        all == want,
        "INCR replies must be exactly 1..={}",
        CLIENTS * ROUNDS
    );

    let mut c0 = f.connect(0);
    let i0 = info(&mut c0);
    println!("front 0:\n{i0}");
    let (proposals, carried) = (
        field(&i0, "nc_stage_proposals"),
        field(&i0, "nc_stage_proposed_writes"),
    );
    assert_eq!(
        carried,
        4 * CLIENTS * ROUNDS + 2 * PIPES * ROUNDS,
        "every write went through the proposer"
    );
    assert!(
        proposals < carried,
        "{CLIENTS} connections writing at once must share proposals ({proposals} for {carried} writes)"
    );
    let mut conns: Vec<_> = (0..3).map(|i| f.connect(i)).collect();
    let mut digests = Vec::new();
    wait_for(Duration::from_secs(30), "equal digests", || {
        let applied: Vec<u64> = conns
            .iter_mut()
            .map(|c| field(&info(c), "nc_applied"))
            .collect();
        digests = conns
            .iter_mut()
            .map(|c| c.call(&[b"DEBUG", b"DIGEST"]).unwrap())
            .collect();
        digests.iter().all(|d| *d == digests[0]) && applied.iter().all(|a| *a == applied[0])
    })
    .unwrap_or_else(|e| panic!("{e}: {digests:?}"));
    // Every replica holds each client's full list and string.
    for c in &mut conns {
        for k in 0..CLIENTS {
            assert_eq!(
                c.call(&[b"LLEN", format!("l{k}").as_bytes()]).unwrap(),
                Value::Integer(ROUNDS as i64)
            );
        }
    }
}

/// Pipelining client `c`: each round's four commands in one write, then their four replies, which
/// must be in command order and see this connection's own writes.
fn pipelined(front: SocketAddr, c: u64, go: &Barrier) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(front).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let (key, n_key) = (format!("p{c}"), format!("pn{c}"));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    go.wait();
    for n in 1..=ROUNDS {
        let v = format!("p{c}-{n}");
        let mut out = Vec::new();
        for cmd in [
            Value::command(&[b"SET", key.as_bytes(), v.as_bytes()]),
            Value::command(&[b"GET", key.as_bytes()]),
            Value::command(&[b"INCR", n_key.as_bytes()]),
            Value::command(&[b"GET", n_key.as_bytes()]),
        ] {
            cmd.encode(&mut out);
        }
        s.write_all(&out).unwrap();
        let mut got = Vec::new();
        while got.len() < 4 {
            match host_app::resp::parse(&buf).unwrap() {
                Some((v, used)) => {
                    buf.drain(..used);
                    got.push(v);
                }
                None => {
                    let k = s.read(&mut chunk).unwrap();
                    assert!(
                        k > 0,
                        "pipelining client {c}: the front closed the connection"
                    );
                    buf.extend_from_slice(&chunk[..k]);
                }
            }
        }
        assert_eq!(
            got,
            vec![
                Value::Simple("OK".into()),
                Value::Bulk(Some(v.into_bytes())),
                Value::Integer(n as i64),
                Value::Bulk(Some(n.to_string().into_bytes())),
            ],
            "pipelining client {c}, round {n}: replies out of order or a write not seen"
        );
    }
}
