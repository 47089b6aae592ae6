//! The RESP front's authentication on a socket, with a real redis-server behind it and its
//! apply loop running (no engine: reads and local commands only, and NC.SNAPSHOT, which the
//! apply loop serves): NOAUTH before AUTH, WRONGPASS, AUTH opening the connection, QUIT, the
//! pre-auth size limit, and a peer's snapshot fetched with and without the password.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

mod common;

use common::front;
use host_app::auth::Password;
use host_app::front::{NOAUTH, WRONGPASS};
use host_app::resp::{self, Value};

struct C {
    s: TcpStream,
    buf: Vec<u8>,
}

impl C {
    fn new(a: SocketAddr) -> C {
        let s = TcpStream::connect(a).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        C { s, buf: vec![] }
    }

    /// The next reply; `None` when the front closed the connection.
    fn read(&mut self) -> Option<Value> {
        let mut chunk = [0u8; 4096];
        loop {
            if let Some((v, used)) = resp::parse(&self.buf).unwrap() {
                self.buf.drain(..used);
                return Some(v);
            }
            let n = self.s.read(&mut chunk).unwrap();
            if n == 0 {
                return None;
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    fn call(&mut self, args: &[&str]) -> Value {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        self.s.write_all(&Value::command(&a).to_bytes()).unwrap();
        self.read().expect("a reply")
    }
}

fn e(s: &str) -> Value {
    Value::Error(s.into())
}

fn ok() -> Value {
    Value::Simple("OK".into())
}

#[test]
fn the_front_requires_auth_and_peers_send_it() {
    let tmp = tempfile::tempdir().unwrap();
    let a = front(&tmp.path().join("r"), Some("correct horse"));

    let mut c = C::new(a);
    for cmd in [
        &["PING"][..],
        &["GET", "k"],
        &["DBSIZE"],
        &["INFO"],
        &["INFO", "nanoconsensus"],
        &["CONFIG", "GET", "*"],
        &["NC.SNAPSHOT"],
        &["SET", "k", "v"],
    ] {
        assert_eq!(c.call(cmd), e(NOAUTH), "{cmd:?}");
    }
    assert_eq!(c.call(&["AUTH", "correct"]), e(WRONGPASS));
    assert_eq!(c.call(&["AUTH", "nobody", "correct horse"]), e(WRONGPASS));
    assert_eq!(c.call(&["GET", "k"]), e(NOAUTH));
    assert_eq!(c.call(&["AUTH", "correct horse"]), ok());
    assert_eq!(c.call(&["PING"]), Value::Simple("PONG".into()));
    assert_eq!(c.call(&["GET", "k"]), Value::Bulk(None));
    assert_eq!(c.call(&["DBSIZE"]), Value::Integer(0));

    // AUTH default PASSWORD; a pipeline whose first command is the AUTH.
    let mut c = C::new(a);
    let mut pipe = Value::command(&[b"AUTH", b"default", b"correct horse"]).to_bytes();
    pipe.extend(Value::command(&[b"ECHO", b"hi"]).to_bytes());
    c.s.write_all(&pipe).unwrap();
    assert_eq!(c.read(), Some(ok()));
    assert_eq!(c.read(), Some(Value::Bulk(Some(b"hi".to_vec()))));

    // QUIT before AUTH: +OK, then the front closes.
    let mut c = C::new(a);
    assert_eq!(c.call(&["QUIT"]), ok());
    assert_eq!(c.read(), None);

    // Before AUTH a command may not be longer than 64 KiB (sent whole, so that the front read
    // every byte before it closes: unread bytes would turn the close into a reset).
    let mut c = C::new(a);
    let head = b"*2\r\n$4\r\nAUTH\r\n$100000\r\n".to_vec();
    let mut big = head.clone();
    big.resize(64 * 1024 + 1, b'x');
    c.s.write_all(&big).unwrap();
    match c.read() {
        Some(Value::Error(m)) => assert!(m.contains("before AUTH"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(c.read(), None);
    // After AUTH the same command is only waited for.
    let mut c = C::new(a);
    assert_eq!(c.call(&["AUTH", "correct horse"]), ok());
    c.s.write_all(&big).unwrap();
    c.s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut one = [0u8; 1];
    let waited = c.s.read(&mut one).map_err(|e| e.kind());
    assert!(
        matches!(
            waited,
            Err(std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
        ),
        "{waited:?}"
    );

    // A peer's snapshot needs the password.
    let pw = |s: &str| Password::new(s);
    let err = host_app::front::fetch_snapshot(a, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("NOAUTH"), "{err}");
    let err = host_app::front::fetch_snapshot(a, pw("wrong").as_ref())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("AUTH refused") && err.contains("WRONGPASS"),
        "{err}"
    );
    let (instance, _dedupe, rdb) = host_app::front::fetch_snapshot(a, pw("correct horse").as_ref())
        .expect("a snapshot with the password");
    assert_eq!(instance, 0);
    assert!(rdb.starts_with(b"REDIS"), "an RDB");
}

#[test]
fn without_a_password_the_front_is_open_and_auth_is_redis_s_error() {
    let tmp = tempfile::tempdir().unwrap();
    let a = front(&tmp.path().join("r"), None);
    let mut c = C::new(a);
    assert_eq!(c.call(&["PING"]), Value::Simple("PONG".into()));
    assert_eq!(
        c.call(&["AUTH", "x"]),
        e(
            "ERR AUTH <password> called without any password configured for the default user. \
           Are you sure your configuration is correct?"
        )
    );
    assert_eq!(c.call(&["AUTH", "default", "x"]), ok());
    assert_eq!(c.call(&["AUTH", "admin", "x"]), e(WRONGPASS));
    assert_eq!(c.call(&["DBSIZE"]), Value::Integer(0));
    let (instance, _, _) = host_app::front::fetch_snapshot(a, None).expect("a snapshot");
    assert_eq!(instance, 0);
}

/// The front's event loop proposes without waiting: while a write waits for a cluster that does
/// not answer (no engine listens at the node's address here), other connections are served,
/// further writes queue behind it, and after the front's give-up time each write is answered
/// `-TRYAGAIN` (never left hanging, never `+OK`).
#[test]
fn a_write_the_cluster_does_not_answer_stalls_no_other_connection() {
    let tmp = tempfile::tempdir().unwrap();
    let a = front(&tmp.path().join("r"), None);

    let send = |c: &mut C, args: &[&str]| {
        let v: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        c.s.write_all(&Value::command(&v).to_bytes()).unwrap();
    };
    let mut w1 = C::new(a);
    send(&mut w1, &["SET", "k1", "v1"]);
    let mut w2 = C::new(a);
    let mut other = C::new(a);
    assert_eq!(other.call(&["PING"]), Value::Simple("PONG".into()));
    send(&mut w2, &["SET", "k2", "v2"]);
    for _ in 0..3 {
        assert_eq!(other.call(&["PING"]), Value::Simple("PONG".into()));
        assert_eq!(other.call(&["GET", "k1"]), Value::Bulk(None));
    }
    // Neither write is answered yet.
    for w in [&mut w1, &mut w2] {
        w.s.set_nonblocking(true).unwrap();
        let mut b = [0u8; 1];
        let r = w.s.read(&mut b);
        assert!(
            matches!(&r, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "a write answered before its decision: {r:?}"
        );
        w.s.set_nonblocking(false).unwrap();
    }
    for w in [&mut w1, &mut w2] {
        match w.read() {
            Some(Value::Error(e)) => assert!(e.starts_with("TRYAGAIN"), "{e}"),
            other => panic!("a write nobody decided answered {other:?}"),
        }
    }
    assert_eq!(other.call(&["PING"]), Value::Simple("PONG".into()));
}
