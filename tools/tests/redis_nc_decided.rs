//! A decided write whose reply its front cannot produce is not answered `-TRYAGAIN`, which
//! clients retry (a decided INCR retried is applied twice). Node 1's redis-server is stopped
//! (SIGSTOP), so node 1's replica cannot apply anything: an INCR sent to front 1 is decided by
//! the cluster but not applied there within the front's 10 s, and front 1 answers an error that
//! names the instance and says a retry would apply it twice. Once the server runs again the
//! counter reads 1 at every front: the INCR was applied once. Before it, 200 SETs at front 1
//! are answered without each waiting for the stopped replica, and are applied there once it
//! runs again.

mod common;

use std::time::{Duration, Instant};

use common::{Fronts, redis_server_pid};
use host_app::resp::Value;
use nc_tools::demo::wait_for;
use nc_tools::netlab::Lab;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// Sends SIGCONT to the stopped server when dropped (a failed assertion included).
struct Resume(Pid);

impl Drop for Resume {
    fn drop(&mut self) {
        let _ = kill(self.0, Signal::SIGCONT);
    }
}

#[test]
fn a_decided_write_without_its_reply_is_not_answered_tryagain() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = format!("nrd{}", std::process::id() % 10_000);
    let lab = Lab::new(&prefix, Some(tmp.path().join("lab")));
    let mut f = Fronts::up(lab, tmp.path());
    for i in 0..3 {
        f.start(i);
    }
    let mut c1 = f.connect(1);
    assert_eq!(
        c1.call(&[b"SET", b"before", b"x"]).unwrap(),
        Value::Simple("OK".into())
    );
    let server = Pid::from_raw(
        redis_server_pid(&tmp.path().join("redis-1")).expect("node 1's redis-server runs"),
    );
    kill(server, Signal::SIGSTOP).unwrap();
    let resume = Resume(server);
    // SETs are answered at their decision; the front bounds its replica's lag (64 instances)
    // by waiting for it, but a replica that applies nothing is found stuck once, and the
    // writes after it are not held for it: 200 SETs take less than the one give-up (10 s)
    // that each of them past the lag bound waited before.
    let t0 = Instant::now();
    for k in 0..SETS {
        assert_eq!(
            c1.call(&[b"SET", format!("k{k}").as_bytes(), b"v"])
                .unwrap(),
            Value::Simple("OK".into()),
            "SET k{k} at a front whose replica is stuck"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{k} of {SETS} SETs in {:?}: the front waited for a replica that applies nothing",
            t0.elapsed()
        );
    }
    eprintln!(
        "{SETS} SETs at front 1 with its replica stopped: {:?}",
        t0.elapsed()
    );
    let t0 = Instant::now();
    let answer = c1.call(&[b"INCR", b"counter"]).unwrap();
    let waited = t0.elapsed();
    drop(resume);
    let Value::Error(e) = &answer else {
        panic!("INCR at a front whose replica cannot apply answered {answer:?}");
    };
    assert!(
        e.starts_with("ERR ") && e.contains("decided at instance") && e.contains("twice"),
        "a decided INCR was answered {e:?} after {waited:?}"
    );
    eprintln!("front 1 answered after {waited:?}: {e}");
    // Applied once, everywhere.
    for i in 0..3 {
        let mut c = f.connect(i);
        let mut got = Value::Bulk(None);
        wait_for(
            Duration::from_secs(30),
            "the counter at every front",
            || {
                got = c.call(&[b"GET", b"counter"]).unwrap();
                got == Value::Bulk(Some(b"1".to_vec()))
            },
        )
        .unwrap_or_else(|_| panic!("front {i}: counter {got:?}, expected 1"));
    }
    // Every SET answered OK while the replica was stopped is applied there once it runs.
    for k in 0..SETS {
        assert_eq!(
            c1.call(&[b"GET", format!("k{k}").as_bytes()]).unwrap(),
            Value::Bulk(Some(b"v".to_vec())),
            "k{k} at front 1 after its replica ran again"
        );
    }
}

/// SETs sent to front 1 while its replica is stopped (more than the front's lag bound, 64).
const SETS: usize = 200;
