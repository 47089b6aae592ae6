//! ZooKeeper-NC on loopback, no root needed.
//!
//! - The root README's "Use ZooKeeper-NC in one minute" block, run as written (the cargo line
//!   skipped, `./target/release/` replaced by this build's folder, the lab's state folder and
//!   prefix made unique), with `zk-nc write` and the stock `zkCli.sh`: the create at one front is
//!   read at another node's ZooKeeper, the set answers version 1, the linearizable read at a
//!   third front sees it, the direct `create` at a node's ZooKeeper is refused, and `down`
//!   leaves nothing running.
//! - The write guard: straight at every replica's ZooKeeper, a client (the `zookeeper_client`
//!   crate, the protocol zkCli.sh speaks) can read, but its create, setData, delete and setAcl
//!   fail with NoAuth, also when it authenticates with a digest identity of its own; the
//!   replicas' trees stay identical.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use nc_tools::netlab::Lab;
use zookeeper_client as zkc;

/// Both tests start three JVMs: one at a time.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn readme_block() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let section = readme
        .split("## Use ZooKeeper-NC in one minute")
        .nth(1)
        .expect("the README has the section");
    section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block")
        .to_string()
}

/// This build's folder, with the product binaries the block starts (not linked by this crate).
fn bin_dir() -> (PathBuf, nc_tools::app_lab::AppBins) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_nc-lab"));
    let dir = bin.parent().unwrap().to_path_buf();
    let bins = nc_tools::app_lab::built_for_tests(env!("CARGO"), &dir);
    (dir, bins)
}

#[test]
fn the_readme_zk_block_runs_as_written() {
    let _one = ONE.lock().unwrap_or_else(|p| p.into_inner());
    if !Path::new(host_app::zk::ZK_SERVER).exists() {
        eprintln!(
            "SKIPPED: no ZooKeeper ({}); tools/setup.sh installs it",
            host_app::zk::ZK_SERVER
        );
        return;
    }
    let (dir, _) = bin_dir();
    let prefix = format!("nzr{}", std::process::id() % 10_000);
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("lab").display().to_string();
    let script: String = readme_block()
        .lines()
        .filter(|l| !l.starts_with("cargo "))
        .map(|l| {
            l.replace("./target/release/", &format!("{}/", dir.display()))
                .replace(
                    "nc-lab --state",
                    &format!("nc-lab --prefix {prefix} --state"),
                )
                .replace("/tmp/nc-zk", &state)
        })
        .collect::<Vec<_>>()
        .join("\n");
    // The README's ports (2181..2183, 2191..2193) are the block's own: the other test of this
    // file uses others, and runs after or before it.
    let o = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .env_remove(host_app::auth::ZK_ENV)
        .current_dir(tmp.path())
        .output()
        .expect("bash");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    let logs = || {
        (0..3)
            .map(|i| {
                std::fs::read_to_string(Path::new(&state).join(format!("z{i}.log")))
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        o.status.success(),
        "the README block failed:\n{out}\n{err}\n{}",
        logs()
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("zk-nc -c") && l.contains("write --front 127.0.0.1:2191")),
        "{out}"
    );
    let after_up: Vec<&str> = lines
        .iter()
        .skip_while(|l| !l.starts_with("stop it with"))
        .skip(1)
        .copied()
        .collect();
    let json = |l: Option<&&str>| -> serde_json::Value {
        serde_json::from_str(l.unwrap_or(&"")).unwrap_or_else(|e| panic!("{e}: {out}"))
    };
    let created = json(after_up.first());
    assert_eq!(created["result"], "created", "{out}");
    assert_eq!(created["path"], "/greeting", "{out}");
    // zkCli.sh prints its connection banner, then the data.
    let rest: Vec<&str> = after_up[1..].to_vec();
    let hello = rest
        .iter()
        .position(|l| *l == "hello")
        .unwrap_or_else(|| panic!("zkCli.sh at another node did not read hello: {out}"));
    let set = json(rest.get(hello + 1));
    assert_eq!(set["result"], "set", "{out}");
    assert_eq!(set["version"], 1, "{out}");
    let got = json(rest.get(hello + 2));
    assert_eq!(
        got["data"], "world",
        "linearizable read at a third front: {out}"
    );
    assert_eq!(got["version"], 1, "{out}");
    // The direct write: zkCli.sh says why on stderr and fails; the block goes on.
    assert!(
        err.contains("Insufficient permission : /direct"),
        "the direct write was not refused:\n{out}\n{err}"
    );
    assert!(lines.contains(&"refused"), "{out}");
    for i in 0..3 {
        assert!(
            lines.iter().any(|l| l.starts_with(&format!("node {i} "))
                && l.contains("\"engine\":\"Active\"")
                && l.contains("\"stopped\":null")),
            "status of node {i}: {out}"
        );
    }
    assert!(
        out.contains("ZooKeeper-NC on lab") && out.contains("down"),
        "{out}"
    );
    let left = Command::new("pgrep").args(["-f", &state]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "processes left after down: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

/// Every znode but /zookeeper: (path, data, data version), sorted; read as anyone.
async fn tree(c: &zkc::Client) -> Vec<(String, Vec<u8>, i32)> {
    let mut out = Vec::new();
    let mut level = vec!["/".to_string()];
    while let Some(p) = level.pop() {
        for k in c.list_children(&p).await.expect("list") {
            let child = if p == "/" {
                format!("/{k}")
            } else {
                format!("{p}/{k}")
            };
            if child == "/zookeeper" {
                continue;
            }
            let (d, st) = c.get_data(&child).await.expect("get");
            out.push((child.clone(), d, st.version));
            level.push(child);
        }
    }
    out.sort();
    out
}

#[test]
fn replicas_refuse_writes_that_do_not_come_from_the_apply_loop() {
    let _one = ONE.lock().unwrap_or_else(|p| p.into_inner());
    if !Path::new(host_app::zk::ZK_SERVER).exists() {
        eprintln!(
            "SKIPPED: no ZooKeeper ({}); tools/setup.sh installs it",
            host_app::zk::ZK_SERVER
        );
        return;
    }
    let (_, bins) = bin_dir();
    let tmp = tempfile::tempdir().unwrap();
    let mut lab = Lab::new(
        &format!("nzg{}", std::process::id() % 10_000),
        Some(tmp.path().join("lab")),
    );
    lab.netns = false;
    struct Down(Lab);
    impl Drop for Down {
        fn drop(&mut self) {
            let _ = self.0.down();
        }
    }
    let _down = Down(lab.clone());
    let (zk_base, front_base) = (2281u16, 2291u16);
    // The fronts run without a password here (none in the environment they inherit).
    assert!(
        std::env::var_os(host_app::auth::ZK_ENV).is_none(),
        "unset {} to run this test",
        host_app::auth::ZK_ENV
    );
    let lines = nc_tools::app_lab::zk_up(&lab, &bins.bins, &bins.zk_nc, 3, zk_base, front_base)
        .unwrap_or_else(|e| panic!("zk up: {e}"));
    assert!(lines.iter().any(|l| l.contains("NoAuth")), "{lines:?}");
    let zk = |i: u8| SocketAddrV4::new(Ipv4Addr::LOCALHOST, zk_base + i as u16);
    let front = |i: u8| {
        SocketAddr::V4(SocketAddrV4::new(
            Ipv4Addr::LOCALHOST,
            front_base + i as u16,
        ))
    };
    // Through the log: /a (with a child) and /b.
    let mut f = host_app::zk_front::connect(front(0)).unwrap();
    for (p, d) in [("/a", "1"), ("/a/c", "2"), ("/b", "3")] {
        let r = host_app::zk_front::call(
            &mut f,
            &serde_json::json!({"op": "create", "path": p, "data": d}),
        )
        .unwrap();
        assert_eq!(r["result"], "created", "{r}");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for i in 0..3 {
            // An anonymous client and one with a digest identity of its own: neither may write.
            let anon = zkc::Client::connect(&zk(i).to_string()).await.unwrap();
            let other = zkc::Client::connector()
                .with_auth("digest", b"zk-nc:guessed")
                .connect(&zk(i).to_string())
                .await
                .unwrap();
            for c in [&anon, &other] {
                let opts = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
                assert_eq!(
                    c.create(&format!("/direct{i}"), b"x", &opts).await.err(),
                    Some(zkc::Error::NoAuth),
                    "create at / of node {i}"
                );
                assert_eq!(
                    c.create("/a/direct", b"x", &opts).await.err(),
                    Some(zkc::Error::NoAuth),
                    "create under /a of node {i}"
                );
                assert_eq!(
                    c.set_data("/b", b"evil", None).await.err(),
                    Some(zkc::Error::NoAuth),
                    "setData at node {i}"
                );
                assert_eq!(
                    c.delete("/a/c", None).await.err(),
                    Some(zkc::Error::NoAuth),
                    "delete at node {i}"
                );
                assert_eq!(
                    c.set_acl("/b", zkc::Acls::anyone_all().as_ref(), None)
                        .await
                        .err(),
                    Some(zkc::Error::NoAuth),
                    "setAcl at node {i}"
                );
                assert_eq!(
                    c.set_acl("/", zkc::Acls::anyone_all().as_ref(), None)
                        .await
                        .err(),
                    Some(zkc::Error::NoAuth),
                    "setAcl of / at node {i}"
                );
                // Reads work.
                assert_eq!(c.get_data("/a/c").await.unwrap().0, b"2");
            }
        }
        // A write through the log still works after the refused ones, and every replica ends
        // with the same tree.
        let r = host_app::zk_front::call(
            &mut f,
            &serde_json::json!({"op": "set", "path": "/b", "data": "4", "version": null}),
        )
        .unwrap();
        assert_eq!(r["result"], "set", "{r}");
        let mut trees = Vec::new();
        for i in 0..3 {
            let c = zkc::Client::connect(&zk(i).to_string()).await.unwrap();
            let mut t = tree(&c).await;
            // Replicas apply asynchronously: wait until this one has the last write.
            let t0 = std::time::Instant::now();
            while !t.iter().any(|(p, d, _)| p == "/b" && d == b"4") {
                assert!(t0.elapsed() < Duration::from_secs(30), "node {i}: {t:?}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                t = tree(&c).await;
            }
            trees.push(t);
        }
        let want = vec![
            ("/a".to_string(), b"1".to_vec(), 0),
            ("/a/c".to_string(), b"2".to_vec(), 0),
            ("/b".to_string(), b"4".to_vec(), 1),
        ];
        for (i, t) in trees.iter().enumerate() {
            assert_eq!(t, &want, "node {i}'s tree");
        }
    });
}
