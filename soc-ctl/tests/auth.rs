//! Packet tags (issue 18): real `nc-engine` processes on 127.0.0.0/8 with `[auth]` in
//! cluster.toml. Untagged, wrongly tagged and unknown-key packets are dropped and counted at
//! every node and change nothing; the state transfer refuses an untagged request; keys rotate
//! under load through `soc-ctl reload-keys` and `soc-ctl set-auth` with every request decided.

mod common;

use std::net::{SocketAddrV4, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use common::{Cluster, counter, test_file};
use proto::auth::{self, Keyring};
use proto::wire::{self, Decide, DecideKind, DecideMeta, Entry, Packet};
use soc_ctl::client::{load, load_with};
use soc_ctl::cluster::{Auth, AuthMode, ClusterFile};

const KEY1: &str = "000102030405060708090a0b0c0d0e0f";
const KEY2: &str = "f0e1d2c3b4a5968778695a4b3c2d1e0f";

fn write_keys(path: &Path, lines: &[(u8, &str)]) {
    let text: String = lines.iter().map(|(id, k)| format!("{id} {k}\n")).collect();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

fn tagged_file(net: u8, keys: &Path, key: u64) -> ClusterFile {
    let mut f = test_file(3, 2, net);
    f.auth = Some(Auth {
        mode: AuthMode::Required,
        key,
        key_file: keys.to_path_buf(),
    });
    f
}

fn view(c: &Cluster, i: u8) -> (Option<u64>, Option<u64>, Option<u64>, Option<String>) {
    let s = c.status(i);
    (
        s["epoch"].as_u64(),
        s["leader"].as_u64(),
        s["last_decided"].as_u64(),
        s["state"].as_str().map(str::to_string),
    )
}

/// A BATCH DECIDE for `instance` in `epoch` on `tree`, as node `sender` would emit it (untagged).
fn decide(cluster: u32, sender: u8, epoch: u32, instance: u64, tree: u8) -> Vec<u8> {
    let e = Entry {
        client_id: 666,
        seq: 1,
        flags: 0,
        payload: b"forged",
    };
    let mut raw = vec![0u8; e.wire_len()];
    wire::emit_entries([e].iter(), &mut raw).unwrap();
    Packet::Decide(Decide {
        meta: DecideMeta {
            instance,
            epoch,
            msg_seq: 0,
            tree,
            kind: DecideKind::Batch,
        },
        count: 1,
        entries_raw: &raw,
    })
    .to_vec(cluster, sender)
    .unwrap()
}

fn ring(id: u8, hex: &str) -> Keyring {
    auth::parse_keyfile(&format!("{id} {hex}")).unwrap()
}

#[test]
fn untagged_wrong_key_and_unknown_key_packets_are_refused_and_change_nothing() {
    let keys_dir = tempfile::tempdir().unwrap();
    let keys = keys_dir.path().join("cluster.key");
    write_keys(&keys, &[(1, KEY1)]);
    let file = tagged_file(43, &keys, 1);
    let cluster = file.cluster_id as u32;
    let client_auth = file.client_auth().unwrap();
    assert!(client_auth.is_some());
    let mut c = Cluster::new(file.clone());
    c.start(&[0, 1, 2]);
    for i in 0..3 {
        let a = &c.status(i)["auth"];
        assert_eq!((a["mode"].as_u64(), a["key"].as_u64()), (Some(2), Some(1)));
    }
    let r = load_with(
        cluster,
        51,
        c.client_addrs(),
        40,
        4,
        16,
        Duration::from_secs(30),
        client_auth.clone(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.decided, 40, "a tagging client is served");
    c.settle(&[0, 1, 2]);
    let before: Vec<_> = (0..3).map(|i| view(&c, i)).collect();
    let logs: Vec<_> = (0..3).map(|i| c.log(i)).collect();
    let base: Vec<u64> = (0..3)
        .map(|i| counter(&c.status(i), "unauthorized"))
        .collect();

    // Copies from the leader's own tree address (a member, the right sender for the epoch),
    // for the next instance: untagged, tagged with another key under id 1, tagged with id 9.
    let epoch = before[0].0.unwrap() as u32;
    let leader = before[0].1.unwrap() as u8;
    let next = before[0].2.unwrap() + 1;
    let from = UdpSocket::bind(SocketAddrV4::new(
        file.nodes[leader as usize].tree_addrs[0],
        0,
    ))
    .unwrap();
    let followers: Vec<u8> = (0..3).filter(|&i| i != leader).collect();
    for &j in &followers {
        for t in 0..2u8 {
            let to = SocketAddrV4::new(
                file.nodes[j as usize].tree_addrs[t as usize],
                file.ports.decide as u16,
            );
            let plain = decide(cluster, leader, epoch, next, t);
            from.send_to(&plain, to).unwrap();
            let mut wrong = plain.clone();
            auth::seal_vec(&mut wrong, &ring(1, KEY2), 1).unwrap();
            from.send_to(&wrong, to).unwrap();
            let mut unknown = plain.clone();
            auth::seal_vec(&mut unknown, &ring(9, KEY1), 9).unwrap();
            from.send_to(&unknown, to).unwrap();
        }
    }
    // An untagged client request to the leader: refused, no reply.
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    client
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let req = Packet::Request(Entry {
        client_id: 77,
        seq: 1,
        flags: 0,
        payload: b"untagged",
    })
    .to_vec(cluster, wire::SENDER_NONE)
    .unwrap();
    client
        .send_to(&req, c.client_addrs()[leader as usize])
        .unwrap();
    let mut b = [0u8; 256];
    assert!(
        client.recv(&mut b).is_err(),
        "an untagged request got a reply"
    );
    c.wait(Duration::from_secs(5), "every refusal counted", |c| {
        followers
            .iter()
            .all(|&j| counter(&c.status(j), "unauthorized") == base[j as usize] + 6)
            && counter(&c.status(leader), "unauthorized") == base[leader as usize] + 1
    });
    std::thread::sleep(Duration::from_millis(200));
    for i in 0..3u8 {
        let want = base[i as usize] + if i == leader { 1 } else { 6 };
        assert_eq!(counter(&c.status(i), "unauthorized"), want, "node {i}");
        assert_eq!(view(&c, i), before[i as usize], "node {i} changed");
        assert_eq!(c.log(i), logs[i as usize], "node {i}'s log changed");
    }

    // The state transfer: an untagged JOIN_REQUEST from a member's own address is closed
    // unanswered and counted.
    {
        use socket2::{Domain, SockAddr, Socket, Type};
        use std::io::{Read, Write};
        let asker = followers[0];
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        s.bind(&SockAddr::from(SocketAddrV4::new(
            file.nodes[asker as usize].client_addr,
            0,
        )))
        .unwrap();
        s.connect(&SockAddr::from(c.client_addrs()[leader as usize]))
            .unwrap();
        let mut t: std::net::TcpStream = s.into();
        t.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let ask = Packet::JoinRequest(wire::JoinRequest {
            transfer_id: 1,
            max_chunk: 1024,
            min_instance: 1,
            have: 0,
        })
        .to_vec(cluster, asker)
        .unwrap();
        t.write_all(&ask).unwrap();
        let mut b = [0u8; 64];
        assert!(
            matches!(t.read(&mut b), Ok(0) | Err(_)),
            "an untagged join request was answered"
        );
        c.wait(
            Duration::from_secs(5),
            "the refused transfer counted",
            |c| c.status(leader)["engine"]["unauthorized_transfers"] == 1,
        );
    }

    // The cluster goes on; a client without the key gets nothing decided.
    let r = load_with(
        cluster,
        52,
        c.client_addrs(),
        40,
        4,
        16,
        Duration::from_secs(30),
        client_auth,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.decided, 40);
    let untagged = load(
        cluster,
        53,
        c.client_addrs(),
        5,
        1,
        16,
        Duration::from_secs(1),
    );
    assert!(untagged.is_err(), "an untagged client was served");
    c.settle(&[0, 1, 2]);
    assert_eq!(c.log(1), c.log(0));
    assert_eq!(c.log(2), c.log(0));
}

#[test]
fn keys_rotate_under_load_and_the_old_key_is_refused_afterwards() {
    let keys_dir = tempfile::tempdir().unwrap();
    let keys = keys_dir.path().join("cluster.key");
    write_keys(&keys, &[(1, KEY1)]);
    let file = tagged_file(44, &keys, 1);
    let cluster = file.cluster_id as u32;
    let mut c = Cluster::new(file.clone());
    c.start(&[0, 1, 2]);
    // 1. The new key reaches the clients' and the nodes' key files (the nodes read it on
    // `reload-keys`); requests keep being tagged with key 1.
    write_keys(&keys, &[(1, KEY1), (2, KEY2)]);
    let client_auth = file.client_auth().unwrap();
    let addrs = c.client_addrs();
    let total = 3000;
    let loader = std::thread::spawn(move || {
        load_with(
            cluster,
            61,
            addrs,
            total,
            4,
            32,
            Duration::from_secs(60),
            client_auth,
            &mut |_| {},
        )
    });
    std::thread::sleep(Duration::from_millis(100));
    for i in 0..3u8 {
        let out = c.soc_ctl(i, &["reload-keys"]);
        assert!(out.contains("[1,2]"), "node {i}: {out}");
    }
    // 2. Every node tags with key 2 from one decided instance on, under load.
    let cfg = c.cfg.display().to_string();
    let o = c.soc_ctl(
        0,
        &[
            "set-auth", "--config", &cfg, "--mode", "required", "--key", "2",
        ],
    );
    assert!(o.contains("decided at instance"), "{o}");
    c.wait(Duration::from_secs(5), "every node tags with key 2", |c| {
        (0..3).all(|i| c.status(i)["auth"]["key"] == 2)
    });
    let r = loader.join().unwrap().expect("the load under rotation");
    assert_eq!(r.decided, total, "every request decided across the switch");
    // 3. Key 1 leaves the files; the nodes drop it.
    write_keys(&keys, &[(2, KEY2)]);
    let mut f2 = file.clone();
    f2.auth.as_mut().unwrap().key = 2;
    std::fs::write(&c.cfg, f2.to_toml()).unwrap();
    for i in 0..3u8 {
        let out = c.soc_ctl(i, &["reload-keys"]);
        assert!(out.contains("[2]"), "node {i}: {out}");
    }
    for i in 0..3u8 {
        assert_eq!(counter(&c.status(i), "unauthorized"), 0, "node {i}");
        assert_eq!(counter(&c.status(i), "config_rejected"), 0, "node {i}");
    }
    // A client still on key 1 is refused; one on key 2 is served.
    let old = load_with(
        cluster,
        62,
        c.client_addrs(),
        5,
        1,
        16,
        Duration::from_secs(1),
        file.client_auth().ok().flatten().map(|mut a| {
            a.keys = ring(1, KEY1);
            a
        }),
        &mut |_| {},
    );
    assert!(old.is_err(), "a key-1 client was served after key 1 left");
    let r = load_with(
        cluster,
        63,
        c.client_addrs(),
        200,
        4,
        32,
        Duration::from_secs(30),
        f2.client_auth().unwrap(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.decided, 200);
    c.settle(&[0, 1, 2]);
    assert_eq!(c.log(1), c.log(0));
    assert_eq!(c.log(2), c.log(0));
    // A key file others can read is refused, naming the key and the fix.
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = c.soc_ctl_raw(0, &["reload-keys"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("auth.key_file") && err.contains("chmod 600"),
        "{err}"
    );
}

/// A joiner installs only what a key holder sent: a "member" answering without a tag (here a
/// stranger listening at a dead member's address) is refused, and the join goes on with a real
/// member.
#[test]
fn a_joiner_refuses_a_snapshot_from_a_member_without_the_key() {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let keys_dir = tempfile::tempdir().unwrap();
    let keys = keys_dir.path().join("cluster.key");
    write_keys(&keys, &[(1, KEY1)]);
    // Four nodes: 0, 1 and 2 run, 2 dies, 3 joins.
    let mut file = test_file(4, 2, 45);
    file.auth = tagged_file(45, &keys, 1).auth;
    let cluster = file.cluster_id as u32;
    let mut c = Cluster::new(file.clone());
    c.start(&[0, 1, 2]);
    let r = load_with(
        cluster,
        71,
        c.client_addrs(),
        200,
        4,
        16,
        Duration::from_secs(30),
        file.client_auth().unwrap(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.decided, 200);
    c.kill(2);
    // The stranger at node 2's address answers every request with a well-formed, untagged packet.
    let fake = std::net::TcpListener::bind(c.client_addrs()[2]).unwrap();
    let asked = std::sync::Arc::new(AtomicUsize::new(0));
    let a2 = asked.clone();
    std::thread::spawn(move || {
        for conn in fake.incoming() {
            let Ok(mut s) = conn else { continue };
            a2.fetch_add(1, Ordering::Relaxed);
            let mut b = [0u8; 256];
            let _ = s.read(&mut b);
            let answer = Packet::ReplyOk(wire::ReplyOk {
                client_id: 1,
                seq: 1,
                instance: 1,
                index: 0,
            })
            .to_vec(cluster, 2)
            .unwrap();
            let _ = s.write_all(&answer);
        }
    });
    c.spawn(3);
    let out = c.soc_ctl(3, &["join", "--member", "2"]);
    assert!(out.contains("joined"), "{out}");
    assert!(
        asked.load(Ordering::Relaxed) >= 1,
        "the stranger was never asked"
    );
    let log = c.engine_log(3);
    assert!(
        log.contains("refused: untagged packet while tags are required"),
        "{log}"
    );
    c.settle(&[0, 1, 3]);
    assert_eq!(c.log(3), c.log(0), "the joiner holds the real members' log");
}
