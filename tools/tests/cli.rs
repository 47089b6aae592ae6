//! Every program answers the same way (issue 16): `--help` and `--version` (exit code 0, the
//! version line naming the program), a usage error with exit code 2 and clap's `error:`, and the
//! shared flags of the root README's table where the table says they are.

mod common;

use std::path::PathBuf;
use std::process::Command;

/// Every binary of the workspace's product crates and tools, by name.
fn programs() -> Vec<(&'static str, PathBuf)> {
    let b = common::bins();
    let dir = PathBuf::from(env!("CARGO_BIN_EXE_nc-lab"))
        .parent()
        .unwrap()
        .to_path_buf();
    // xdp-log's binary is not a dependency of this crate's tests: build it.
    let ok = Command::new(env!("CARGO"))
        .args(["build", "-q", "-p", "xdp-log", "--bins"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "building xdp-log failed");
    vec![
        ("nc-engine", b.bins.engine.clone()),
        ("soc-ctl", b.bins.soc_ctl.clone()),
        ("nc-client", dir.join("nc-client")),
        ("redis-nc", b.redis_nc.clone()),
        ("zk-nc", b.zk_nc.clone()),
        ("xdp-log", dir.join("xdp-log")),
        ("nc-lab", env!("CARGO_BIN_EXE_nc-lab").into()),
        ("nc-raft", env!("CARGO_BIN_EXE_nc-raft").into()),
        (
            "redis-nc-bench",
            env!("CARGO_BIN_EXE_redis-nc-bench").into(),
        ),
        ("zk-nc-bench", env!("CARGO_BIN_EXE_zk-nc-bench").into()),
    ]
}

fn run(path: &PathBuf, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (
        o.status.code().expect("exited"),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The root README's table of shared flags: (program and subcommand, flags its help lists).
const SHARED: &[(&str, &[&str], &[&str])] = &[
    (
        "nc-engine",
        &[],
        &[
            "-c, --config",
            "-n, --node",
            "--ctl",
            "--loopback",
            "--metrics",
            "-v, --verbose",
        ],
    ),
    (
        "soc-ctl",
        &["init"],
        &["-c, --config", "-n, --node", "--ctl"],
    ),
    ("soc-ctl", &["status"], &["-n, --node", "--ctl", "--json"]),
    ("soc-ctl", &["watch"], &["-n, --node", "--ctl", "--metrics"]),
    ("soc-ctl", &["set-timeout"], &["-c, --config", "--loopback"]),
    ("nc-client", &[], &["-c, --config", "--loopback"]),
    (
        "redis-nc",
        &[],
        &[
            "-c, --config",
            "-n, --node",
            "--loopback",
            "--pin",
            "--engine-ctl",
            "--listen",
            "--metrics",
        ],
    ),
    (
        "zk-nc",
        &["node"],
        &[
            "-c, --config",
            "-n, --node",
            "--loopback",
            "--pin",
            "--engine-ctl",
            "--listen",
            "--metrics",
        ],
    ),
    ("xdp-log", &["attach"], &["--pin", "--metrics"]),
    ("xdp-log", &["stats"], &["--pin", "--json"]),
    (
        "nc-raft",
        &[],
        &["-c, --config", "-n, --node", "--loopback"],
    ),
    ("nc-lab", &[], &["--loopback"]),
];

#[test]
fn every_program_answers_help_version_and_usage_errors_alike() {
    let progs = programs();
    let version = env!("CARGO_PKG_VERSION");
    for (name, path) in &progs {
        let (rc, out, err) = run(path, &["--help"]);
        assert_eq!(rc, 0, "{name} --help: {err}");
        assert!(out.contains("Usage:"), "{name} --help: {out}");
        let (rc, out, err) = run(path, &["-h"]);
        assert_eq!(rc, 0, "{name} -h: {err}");
        assert!(out.contains("Usage:"), "{name} -h: {out}");
        let (rc, out, err) = run(path, &["--version"]);
        assert_eq!(rc, 0, "{name} --version: {err}");
        assert_eq!(out, format!("{name} {version}\n"), "{name} --version");
        let (rc, _, err) = run(path, &["--no-such-flag"]);
        assert_eq!(rc, 2, "{name}: a usage error exits with 2: {err}");
        assert!(
            err.contains("error:") && err.contains("--no-such-flag"),
            "{name}: {err}"
        );
    }
    for (name, sub, flags) in SHARED {
        let path = &progs.iter().find(|(n, _)| n == name).unwrap().1;
        let args: Vec<&str> = sub.iter().copied().chain(["--help"]).collect();
        let (rc, out, err) = run(path, &args);
        assert_eq!(rc, 0, "{name} {args:?}: {err}");
        for f in *flags {
            assert!(
                out.lines().any(|l| l.trim_start().starts_with(f)),
                "{name} {sub:?} --help lists no {f}:\n{out}"
            );
        }
    }
}
