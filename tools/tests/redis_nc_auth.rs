//! Redis-NC fronts with a password (`--requirepass-file`), on loopback (no root), driven by the
//! stock `redis-cli` with the password in `REDISCLI_AUTH` (never on its command line):
//! - without AUTH every command is answered `NOAUTH Authentication required.`;
//! - a wrong password is `WRONGPASS …`, and the commands after it still `NOAUTH`;
//! - with the password a SET at one front is read at another;
//! - a node started after the engines' logs moved past instance 1 takes a snapshot from a peer
//!   (`NC.SNAPSHOT` behind the peers' AUTH) and serves the same data;
//! - the password is on no process's command line.
//!
//! And a front whose password file is missing or empty does not start (exit code 2, the file
//! named), for `redis-nc` and `zk-nc`.

mod common;

use std::net::{SocketAddrV4, TcpListener};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{bins, field, info};
use host_app::auth::{Password, REDIS_ENV, ZK_ENV};
use host_app::resp::Value;
use nc_tools::app_lab::{self, RespConn, connect_in};
use nc_tools::demo::{request, start_cluster, wait_for};
use nc_tools::netlab::Lab;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Running children, killed on drop (with the lab).
struct Procs {
    lab: Lab,
    children: Vec<Child>,
}

impl Drop for Procs {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = self.lab.down();
    }
}

/// The stock redis-cli against 127.0.0.1:`port`, with `REDISCLI_AUTH` set to `auth` (or unset):
/// its stdout (trimmed) and stderr.
fn cli(port: u16, auth: Option<&str>, args: &[&str]) -> (String, String) {
    let mut c = Command::new("redis-cli");
    c.args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .env_remove("REDISCLI_AUTH");
    if let Some(a) = auth {
        c.env("REDISCLI_AUTH", a);
    }
    let o = c
        .output()
        .expect("redis-cli (tools/setup.sh installs redis-tools)");
    (
        String::from_utf8_lossy(&o.stdout).trim().to_string(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// An authenticated connection to the front on `port`.
fn conn(port: u16, pw: &Password) -> RespConn {
    let mut c = connect_in(
        None,
        SocketAddrV4::new([127, 0, 0, 1].into(), port),
        Duration::from_secs(20),
    )
    .unwrap();
    c.auth(pw).unwrap();
    c
}

#[test]
fn fronts_with_a_password_answer_noauth_wrongpass_and_serve_after_auth() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = format!("nra{}", std::process::id() % 10_000);
    let mut lab = Lab::new(&prefix, Some(tmp.path().join("lab")));
    lab.netns = false;
    // Short engine logs: a node started late must take a snapshot from a peer.
    lab.engine_args = vec!["--log-keep".into(), "200".into()];
    lab.up(3).expect("lab up");
    let bins = bins();
    let mut procs = Procs {
        lab: lab.clone(),
        children: vec![],
    };
    start_cluster(&lab, &bins.bins, &[0, 1, 2]).expect("cluster");

    // The password file: its first line, the line end not part of it.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let password = format!("pass word {} {nanos}", std::process::id());
    let pw = Password::new(password.clone()).unwrap();
    let pw_file = tmp.path().join("requirepass");
    std::fs::write(&pw_file, format!("{password}\nnot the password\n")).unwrap();
    std::fs::set_permissions(&pw_file, std::fs::Permissions::from_mode(0o600)).unwrap();

    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let fronts: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let start = |i: u8, procs: &mut Procs| {
        let mut args =
            app_lab::redis_nc_node_args(i, &lab.cfg_path(), tmp.path(), &lab.ctl(i), &fronts);
        args.extend(["--requirepass-file".into(), pw_file.display().to_string()]);
        let log = std::fs::File::create(tmp.path().join(format!("redis-nc-{i}.log"))).unwrap();
        let child = Command::new(&bins.redis_nc)
            .args(&args)
            .env_remove(REDIS_ENV)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        procs.children.push(child);
        let mut c = conn(ports[i as usize], &pw);
        wait_for(
            Duration::from_secs(20),
            "the front answers PING after AUTH",
            || matches!(c.call(&[b"PING"]), Ok(Value::Simple(ref s)) if s == "PONG"),
        )
        .unwrap();
    };
    start(0, &mut procs);
    start(1, &mut procs);
    let (p0, p1, p2) = (ports[0], ports[1], ports[2]);

    // No AUTH: every command refused, with Redis's words.
    for (port, args) in [
        (p0, &["SET", "greeting", "hello"][..]),
        (p1, &["GET", "greeting"]),
        (p0, &["PING"]),
        (p1, &["INFO", "nanoconsensus"]),
        (p0, &["NC.SNAPSHOT"]),
    ] {
        let (out, _) = cli(port, None, args);
        assert_eq!(out, "NOAUTH Authentication required.", "{args:?}");
    }
    // A wrong password: redis-cli reports the refused AUTH, and its command is refused too.
    let (out, err) = cli(p0, Some("not-the-password"), &["SET", "greeting", "hello"]);
    assert!(
        err.contains("AUTH failed: WRONGPASS invalid username-password pair or user is disabled."),
        "{err}"
    );
    assert_eq!(out, "NOAUTH Authentication required.");
    // The second line of the file is not the password.
    let (_, err) = cli(p0, Some("not the password"), &["PING"]);
    assert!(err.contains("WRONGPASS"), "{err}");

    // The password: a SET at front 0 is read at front 1.
    let (out, err) = cli(p0, Some(&password), &["SET", "greeting", "hello"]);
    assert_eq!(out, "OK", "{err}");
    let (out, err) = cli(p1, Some(&password), &["GET", "greeting"]);
    assert_eq!(out, "hello", "{err}");
    let (out, err) = cli(p1, Some(&password), &["INCR", "visits"]);
    assert_eq!(out, "1", "{err}");
    // The keys were written once: the unauthenticated SETs did nothing.
    let (out, _) = cli(p0, Some(&password), &["DBSIZE"]);
    assert_eq!(out, "2");

    // A late node: the engines' logs no longer reach instance 1, so node 2 must take a snapshot
    // from a peer's front, which requires the password.
    let mut c0 = conn(p0, &pw);
    let mut n = 0u64;
    wait_for(
        Duration::from_secs(120),
        "node 2's engine log truncated",
        || {
            for _ in 0..50 {
                n += 1;
                let k = format!("fill-{n}");
                c0.call(&[b"SET", k.as_bytes(), b"0123456789abcdef"])
                    .unwrap();
            }
            request(&lab, 2, "status").unwrap()["log_first"]
                .as_u64()
                .is_some_and(|f| f > 1)
        },
    )
    .unwrap();
    start(2, &mut procs);
    let mut c2 = conn(p2, &pw);
    wait_for(
        Duration::from_secs(60),
        "node 2 installs a snapshot from a peer",
        || {
            std::thread::sleep(Duration::from_millis(50));
            let i = info(&mut c2);
            field(&i, "nc_transfers") >= 1 && i.contains("nc_mode:serving")
        },
    )
    .unwrap();
    println!("node 2 after its snapshot:\n{}", info(&mut c2));
    let log2 = std::fs::read_to_string(tmp.path().join("redis-nc-2.log")).unwrap();
    assert!(log2.contains("installed a snapshot"), "{log2}");
    let (out, err) = cli(p2, Some(&password), &["GET", "greeting"]);
    assert_eq!(out, "hello", "{err}");
    let (out, _) = cli(p2, None, &["GET", "greeting"]);
    assert_eq!(out, "NOAUTH Authentication required.");
    // One more write, then every replica holds the same data.
    let (out, _) = cli(p2, Some(&password), &["SET", "last", "x"]);
    assert_eq!(out, "OK");
    let mut conns: Vec<RespConn> = ports.iter().map(|&p| conn(p, &pw)).collect();
    wait_for(Duration::from_secs(30), "equal digests", || {
        std::thread::sleep(Duration::from_millis(50));
        let d: Vec<Value> = conns
            .iter_mut()
            .map(|c| c.call(&[b"DEBUG", b"DIGEST"]).unwrap())
            .collect();
        let a: Vec<u64> = conns
            .iter_mut()
            .map(|c| field(&info(c), "nc_applied"))
            .collect();
        d.iter().all(|x| *x == d[0]) && a.iter().all(|x| *x == a[0])
    })
    .unwrap();

    // The password is on no command line (only the file's path is).
    for c in &procs.children {
        let cmd = std::fs::read(format!("/proc/{}/cmdline", c.id())).unwrap();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        assert!(cmd.contains("--requirepass-file"), "{cmd}");
        assert!(!cmd.contains(&password), "{cmd}");
    }
}

/// Exit code and stderr of `program args`, with no password in the environment.
fn run(program: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(program)
        .args(args)
        .env_remove(REDIS_ENV)
        .env_remove(ZK_ENV)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_missing_or_empty_password_file_stops_the_start() {
    let bins = bins();
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-file");
    let empty = tmp.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let dir = tmp.path().join("d").display().to_string();
    for f in [&missing, &empty] {
        let f = f.display().to_string();
        let (code, err) = run(
            &bins.redis_nc,
            &[
                "--config",
                "/nonexistent.toml",
                "--node",
                "0",
                "--dir",
                &dir,
                "--requirepass-file",
                &f,
            ],
        );
        assert_eq!(code, Some(2), "redis-nc: {err}");
        assert!(err.contains(&f), "redis-nc names the file: {err}");
        let (code, err) = run(
            &bins.zk_nc,
            &[
                "--password-file",
                &f,
                "node",
                "--node",
                "0",
                "--dir",
                &dir,
                "--zk",
                "127.0.0.1:1",
            ],
        );
        assert_eq!(code, Some(2), "zk-nc: {err}");
        assert!(err.contains(&f), "zk-nc names the file: {err}");
    }
    // Nothing was started in the folder.
    assert!(!tmp.path().join("d").exists());
    // No password on the command line at all: there is no such option.
    let (code, err) = run(
        &bins.redis_nc,
        &[
            "--config",
            "/nonexistent.toml",
            "--node",
            "0",
            "--dir",
            &dir,
            "--requirepass",
            "x",
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("unexpected argument"), "{err}");
}
