//! Writes seed corpora for the fuzz targets: valid cluster files (loopback and multicast, 1..=8
//! nodes, 1..=4 trees), snapshots of a few logs, and every kind of control request.
//!
//! ```text
//! cd soc-ctl/fuzz && cargo run --example seeds -- corpus
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use proto::wire::DecideKind;
use soc_ctl::cluster::{ClusterFile, Transport};
use soc_ctl::log::{DecisionLog, Logged};

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).expect("write a seed");
}

fn main() {
    let root = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "corpus".to_string());
    let root = Path::new(&root);
    let dirs = ["cluster_toml", "snapshot", "control_line"].map(|t| {
        let d = root.join(t);
        std::fs::create_dir_all(&d).expect("create a corpus directory");
        d
    });

    // cluster.toml: loopback files, and the same clusters on multicast with interfaces.
    let mut n_files = 0;
    for (n, trees) in [(1, 1), (3, 2), (5, 3), (8, 4)] {
        let f = ClusterFile::loopback(n, trees, 0, 7400);
        f.validate().expect("a valid loopback file");
        write(
            &dirs[0],
            &format!("loopback-{n}-{trees}.toml"),
            f.to_toml().as_bytes(),
        );
        let mut m = f.clone();
        m.transport = Transport::Multicast;
        for node in &mut m.nodes {
            node.tree_ifaces = (0..trees).map(|t| format!("veth{t}")).collect();
        }
        m.validate().expect("a valid multicast file");
        write(
            &dirs[0],
            &format!("multicast-{n}-{trees}.toml"),
            m.to_toml().as_bytes(),
        );
        n_files += 2;
    }

    // Snapshots: empty, one record of each kind, a dense run, a sparse one.
    let rec = |kind, count: u16, entries: &[u8]| {
        Arc::new(Logged {
            kind,
            count,
            entries: entries.to_vec(),
        })
    };
    let logs: [BTreeMap<u64, Arc<Logged>>; 4] = [
        BTreeMap::new(),
        [
            (
                1,
                rec(
                    DecideKind::Batch,
                    1,
                    &[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1, 42],
                ),
            ),
            (2, rec(DecideKind::Config, 1, &[0; 24])),
        ]
        .into(),
        (10..20)
            .map(|i| {
                (
                    i,
                    rec(
                        DecideKind::Batch,
                        (i % 3) as u16,
                        &vec![i as u8; i as usize],
                    ),
                )
            })
            .collect(),
        [
            (0, rec(DecideKind::Config, 0, &[])),
            (1 << 40, rec(DecideKind::Batch, u16::MAX, b"x")),
            (u64::MAX, rec(DecideKind::Batch, 2, b"last")),
        ]
        .into(),
    ];
    for (k, map) in logs.into_iter().enumerate() {
        let log = DecisionLog { map };
        let b = log.encode(u64::MAX);
        assert_eq!(DecisionLog::decode(&b), Ok(log));
        write(&dirs[1], &format!("log-{k}.bin"), &b);
    }

    // Control requests.
    let lines = [
        "read 0",
        "read 0x1c",
        "write 0x40 1000",
        "write 65535 4294967295",
        "status",
        "log 0 18446744073709551615",
        "log 0x10 0x5",
        "join 1",
        "drop-tree 0 on",
        "drop-tree 3 off",
        "reset-stats",
        "  status\t",
    ];
    for (k, l) in lines.iter().enumerate() {
        soc_ctl::engine::parse_control_line(l).expect("a valid request");
        write(&dirs[2], &format!("req-{k}.txt"), l.as_bytes());
    }
    println!(
        "{n_files} cluster files, 4 snapshots, {} requests under {}",
        lines.len(),
        root.display()
    );
}
