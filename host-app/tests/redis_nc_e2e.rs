//! Redis-NC end to end (root): the namespace lab with 3 engines; on every host a real
//! redis-server, xdp-log on the PCIe veth and redis-nc reading the XDP decision log. Stock-protocol
//! clients (RESP over TCP) write and read through node 1's front while the leader's engine is
//! killed. Afterwards: every write answered OK is on every surviving replica, the replicas'
//! DEBUG DIGESTs are equal, and the recorded history on a few keys is linearizable.

use std::io::{Read, Write};
use std::net::{SocketAddrV4, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use host_app::lincheck::{self, Event, Op, Verdict};
use host_app::resp::{self, Value};
use nc_tools::demo::{Bins, in_netns, request, start_cluster, wait_for};
use nc_tools::netlab::{Lab, host_client_addr};
use xdp_log::loader::{AttachOptions, Mode, attach};

fn bins() -> Bins {
    let ok = Command::new(env!("CARGO"))
        .args(["build", "-q", "-p", "soc-ctl", "--bins"])
        .status()
        .expect("cargo")
        .success();
    assert!(ok, "building soc-ctl's binaries failed");
    let dir = PathBuf::from(env!("CARGO_BIN_EXE_redis-nc"))
        .parent()
        .unwrap()
        .to_path_buf();
    Bins {
        engine: dir.join("nc-engine"),
        soc_ctl: dir.join("soc-ctl"),
    }
}

/// A minimal stock-protocol client: one RESP command, one reply.
struct Resp {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Resp {
    fn call(&mut self, args: &[&[u8]]) -> std::io::Result<Value> {
        self.s.write_all(&Value::command(args).to_bytes())?;
        let mut chunk = [0u8; 4096];
        loop {
            if let Some((v, used)) = resp::parse(&self.buf).map_err(std::io::Error::other)? {
                self.buf.drain(..used);
                return Ok(v);
            }
            let n = self.s.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

struct Guard {
    lab: Lab,
    procs: Vec<Child>,
    stop_xdp: Vec<std::sync::mpsc::Sender<()>>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        // SIGTERM: redis-nc stops its redis-server, then exits.
        for p in &mut self.procs {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
            let _ = p.wait();
        }
        for s in &self.stop_xdp {
            let _ = s.send(());
        }
        std::thread::sleep(Duration::from_millis(100));
        let _ = self.lab.down();
    }
}

#[test]
fn redis_nc_survives_a_leader_kill_with_linearizable_history() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: needs root (namespaces, XDP); CI runs it as root");
        return;
    }
    let bins = bins();
    let tmp = tempfile::tempdir().unwrap();
    let prefix = format!("ncr{}", std::process::id() % 10_000);
    let mut lab = Lab::new(&prefix, Some(tmp.path().join("lab")));
    lab.netns = true;
    let f = lab.up(3).expect("lab up");
    let mut g = Guard {
        lab: lab.clone(),
        procs: vec![],
        stop_xdp: vec![],
    };
    start_cluster(&lab, &bins, &[0, 1, 2]).expect("cluster");
    let cfg = lab.cfg_path();
    for i in 0..3u8 {
        let pin = PathBuf::from(format!("/sys/fs/bpf/{prefix}-{i}"));
        let opts = AttachOptions {
            iface: "pcie".into(),
            mode: Mode::Skb,
            pin_dir: pin.clone(),
            cluster_id: f.cluster_id as u32,
            port: f.ports.host as u16,
            consume: true,
        };
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (ok_tx, ok_rx) = std::sync::mpsc::channel();
        in_netns(Some(lab.host(i)), move || match attach(&opts) {
            Ok(a) => {
                ok_tx.send(Ok(())).unwrap();
                let _ = rx.recv();
                let _ = a.detach();
            }
            Err(e) => ok_tx.send(Err(format!("{e:#}"))).unwrap(),
        });
        ok_rx.recv().unwrap().expect("attach xdp-log");
        g.stop_xdp.push(tx);
        // nsenter switches only the network namespace, so the bpffs pins stay visible.
        let listen = SocketAddrV4::new(host_client_addr(i), 6379);
        let log = std::fs::File::create(tmp.path().join(format!("redis-nc-{i}.log"))).unwrap();
        let child = Command::new("nsenter")
            .arg(format!("--net=/run/netns/{}", lab.host(i)))
            .arg(env!("CARGO_BIN_EXE_redis-nc"))
            .arg("--config")
            .arg(&cfg)
            .args([
                "--node",
                &i.to_string(),
                "--listen",
                &listen.to_string(),
                "--pin",
            ])
            .arg(&pin)
            .arg("--dir")
            .arg(tmp.path().join(format!("redis-{i}")))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        g.procs.push(child);
    }
    let front1 = SocketAddrV4::new(host_client_addr(1), 6379);
    let connect = move || {
        let t0 = Instant::now();
        loop {
            if let Ok(s) = TcpStream::connect(front1) {
                return Resp { s, buf: Vec::new() };
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "front of node 1 did not come up"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    // Clients: three on four keys (SET unique values, GET), one writing unique keys.
    let t0 = Instant::now();
    let now = move || t0.elapsed().as_nanos() as u64;
    let progress = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for c in 0..3u64 {
        let (progress, connect) = (progress.clone(), connect);
        workers.push(in_netns(Some(lab.clients()), move || {
            let mut r = connect();
            let mut hist = Vec::new();
            for k in 0..700u64 {
                let key = format!("k{}", (k * 7 + c) % 4);
                let invoke = now();
                if k % 2 == 0 {
                    let v = format!("c{c}-{k}");
                    let res = r.call(&[b"SET", key.as_bytes(), v.as_bytes()]);
                    let ok = matches!(res, Ok(Value::Simple(ref s)) if s == "OK");
                    hist.push(Event {
                        key: key.into_bytes(),
                        op: Op::Set(v.into_bytes()),
                        read: None,
                        invoke,
                        ret: ok.then(now),
                    });
                    if res.is_err() {
                        r = connect();
                    }
                } else {
                    match r.call(&[b"GET", key.as_bytes()]) {
                        Ok(Value::Bulk(b)) => hist.push(Event {
                            key: key.into_bytes(),
                            op: Op::Get,
                            read: b,
                            invoke,
                            ret: Some(now()),
                        }),
                        Ok(_) => {}
                        Err(_) => r = connect(),
                    }
                }
                progress.fetch_add(1, Ordering::Relaxed);
            }
            hist
        }));
    }
    let (stop2, connect2) = (stop.clone(), connect);
    let uniq = in_netns(Some(lab.clients()), move || {
        let mut r = connect2();
        let mut acked = Vec::new();
        let mut n = 0u64;
        while !stop2.load(Ordering::Relaxed) {
            n += 1;
            let key = format!("u{n}");
            match r.call(&[b"SET", key.as_bytes(), b"x"]) {
                Ok(Value::Simple(s)) if s == "OK" => acked.push(key),
                Ok(_) => {}
                Err(_) => r = connect2(),
            }
        }
        acked
    });
    wait_for(Duration::from_secs(60), "a third of the operations", || {
        progress.load(Ordering::Relaxed) >= 700
    })
    .unwrap();
    lab.kill(0);
    let mut history = Vec::new();
    for w in workers {
        history.extend(w.join().expect("client"));
    }
    stop.store(true, Ordering::Relaxed);
    let acked = uniq.join().expect("unique writer");
    assert!(
        request(&lab, 1, "status").unwrap()["is_leader"] == true,
        "node 1 took over"
    );

    // Every replica that survived reaches the same instance.
    let last = || {
        request(&lab, 1, "status").unwrap()["last_decided"]
            .as_u64()
            .unwrap()
    };
    let mut replicas: Vec<Resp> = (1..3u8)
        .map(|i| {
            let s = in_netns(Some(lab.clients()), move || {
                TcpStream::connect(SocketAddrV4::new(host_client_addr(i), 6379)).unwrap()
            })
            .join()
            .unwrap();
            Resp { s, buf: Vec::new() }
        })
        .collect();
    // Both replicas converge on the same dataset (a divergence never would): poll for 10 s.
    let target = last();
    let mut digests: Vec<Value> = Vec::new();
    let t_settle = Instant::now();
    while t_settle.elapsed() < Duration::from_secs(10) {
        digests = replicas
            .iter_mut()
            .map(|r| r.call(&[b"DEBUG", b"DIGEST"]).unwrap())
            .collect();
        if digests[0] == digests[1] {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    println!(
        "{} operations recorded, {} unique writes acknowledged, last instance {target}, digests {:?}",
        history.len(),
        acked.len(),
        digests
    );
    for d in &digests {
        assert!(
            matches!(d, Value::Simple(s) if s.len() == 40 && s != &"0".repeat(40)),
            "not a digest of a non-empty dataset: {d:?}"
        );
    }
    assert_eq!(digests[0], digests[1], "surviving replicas differ");
    for r in &mut replicas {
        for k in &acked {
            assert_eq!(
                r.call(&[b"EXISTS", k.as_bytes()]).unwrap(),
                Value::Integer(1),
                "{k} lost"
            );
        }
    }
    assert!(history.len() > 1500);
    match lincheck::check(&history, 5_000_000) {
        Verdict::Linearizable => {}
        other => panic!("history not linearizable: {other:?}\n{}", logs(tmp.path())),
    }
}

fn logs(dir: &Path) -> String {
    (0..3)
        .map(|i| std::fs::read_to_string(dir.join(format!("redis-nc-{i}.log"))).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n---\n")
}
