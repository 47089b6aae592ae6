//! Every program answers the same way (issue 16): `--help` and `--version` (exit code 0, the
//! version line naming the program), a usage error with exit code 2 and clap's `error:`, the
//! shared flags of the root README's table where the table says they are, exit code 2 for a bad
//! cluster file or an illegal flag value, and `--json` as one JSON document on stdout.

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
    // `--json` wherever the table lists it.
    ("soc-ctl", &["regs", "dump"], &["--json"]),
    ("soc-ctl", &["regs", "get"], &["--json"]),
    ("soc-ctl", &["log"], &["--json"]),
    ("soc-ctl", &["join"], &["--json"]),
    ("soc-ctl", &["set-timeout"], &["--json"]),
    ("soc-ctl", &["set-auth"], &["--json"]),
    ("soc-ctl", &["reload-keys"], &["--json"]),
    ("nc-client", &["send"], &["--json"]),
    ("nc-client", &["load"], &["--json"]),
    ("nc-lab", &["status"], &["--json"]),
    ("nc-lab", &["redis", "status"], &["--json"]),
    ("nc-lab", &["zk", "status"], &["--json"]),
    ("redis-nc-bench", &[], &["--json"]),
    ("zk-nc-bench", &[], &["--json"]),
    // The load flags: how many (`--requests`), how concurrent (`--clients`, `--window`), how
    // big (`--payload`), which cluster sizes (`--nodes`).
    (
        "nc-client",
        &["load"],
        &["--requests", "--window", "--payload"],
    ),
    (
        "nc-lab",
        &["bench"],
        &["--requests", "--clients", "--payload", "--nodes"],
    ),
    (
        "nc-lab",
        &["demo"],
        &["--requests", "--window", "--payload"],
    ),
    ("nc-lab", &["soak"], &["--clients", "--window", "--payload"]),
    (
        "redis-nc-bench",
        &[],
        &["--requests", "--clients", "--payload", "--nodes"],
    ),
    ("zk-nc-bench", &[], &["--requests", "--clients", "--nodes"]),
];

/// Names that meant the same as a shared flag before the family was made one: still accepted
/// (hidden aliases, so old commands run), never shown.
const RETIRED: &[&str] = &["--total", "--ops", "--conns", "--writers", "--size"];

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
        for f in RETIRED {
            assert!(
                !out.lines()
                    .any(|l| l.trim_start().starts_with(&format!("{f} "))),
                "{name} {sub:?} --help still lists the retired {f}:\n{out}"
            );
        }
    }
}

/// Exit code 2 for a configuration error (a missing or malformed cluster file) or an illegal
/// flag value, like clap's usage errors; the message starts with the program's name.
#[test]
fn config_errors_and_illegal_flag_values_exit_2() {
    let progs = programs();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "nodes = 7\n").unwrap();
    let state = dir.path().join("lab");
    let st = state.to_str().unwrap();
    let lab = |args: &[&'static str]| -> Vec<String> {
        ["--prefix", "nccli", "--state", st, "--loopback"]
            .iter()
            .map(|s| s.to_string())
            .chain(args.iter().map(|s| s.to_string()))
            .collect()
    };
    let mut cases: Vec<(&str, Vec<String>)> = Vec::new();
    for cfg in [&missing, &bad] {
        let c = cfg.to_str().unwrap();
        let with = |name: &'static str, args: &[&str]| -> (&'static str, Vec<String>) {
            (name, args.iter().map(|a| a.replace("CFG", c)).collect())
        };
        cases.extend([
            with("nc-engine", &["--config", "CFG", "--node", "0"]),
            with("nc-raft", &["--config", "CFG", "--node", "0"]),
            with("nc-client", &["--config", "CFG", "send", "x"]),
            with("zk-nc", &["--config", "CFG", "write", "create", "/a", "b"]),
            with(
                "redis-nc",
                &["--config", "CFG", "--node", "0", "--dir", "/tmp"],
            ),
            with("soc-ctl", &["init", "--config", "CFG"]),
            with("soc-ctl", &["set-timeout", "--config", "CFG", "100000000"]),
            with(
                "soc-ctl",
                &["set-auth", "--config", "CFG", "--mode", "on", "--key", "1"],
            ),
        ]);
    }
    let strs = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let many_sources: Vec<String> = ["attach", "--iface", "lo", "--nodes", "3"]
        .iter()
        .map(|s| s.to_string())
        .chain((0..65).flat_map(|i| ["--allow-source".into(), format!("10.0.0.{}", i + 1)]))
        .collect();
    cases.extend([
        (
            "soc-ctl",
            strs(&["gen-key", "--out", "/nonexistent/k", "--id", "0"]),
        ),
        ("soc-ctl", strs(&["regs", "get", "no_such_register"])),
        ("soc-ctl", strs(&["regs", "set", "trees", "9"])),
        ("soc-ctl", strs(&["regs", "set", "loop_period", "ten"])),
        ("soc-ctl", strs(&["regs", "set", "status", "1"])),
        ("nc-lab", lab(&["up", "--nodes", "0"])),
        ("nc-lab", lab(&["demo", "--nodes", "1"])),
        ("nc-lab", lab(&["soak", "--clients", "0"])),
        ("nc-lab", lab(&["bench", "--windows", "0"])),
        (
            "nc-lab",
            lab(&["redis", "--requirepass-file", "/nonexistent", "status"]),
        ),
        (
            "redis-nc",
            strs(&[
                "--config",
                "x",
                "--node",
                "0",
                "--dir",
                "/tmp",
                "--proposals",
                "65",
            ]),
        ),
        ("redis-nc-bench", strs(&["--clients", "0"])),
        ("zk-nc-bench", strs(&["--clients", "0"])),
        ("xdp-log", many_sources),
    ]);
    for (name, args) in &cases {
        let path = &progs.iter().find(|(n, _)| n == name).unwrap().1;
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (rc, _, err) = run(path, &args);
        assert_eq!(rc, 2, "{name} {args:?}: {err}");
        assert!(
            err.starts_with(&format!("{name}: ")),
            "{name} {args:?}: {err}"
        );
    }
    assert!(!state.exists(), "a refused nc-lab command made a lab");
}

fn json_of(name: &str, args: &[&str], out: &str) -> serde_json::Value {
    let mut docs = serde_json::Deserializer::from_str(out).into_iter::<serde_json::Value>();
    let v = docs
        .next()
        .unwrap_or_else(|| panic!("{name} {args:?}: no output"))
        .unwrap_or_else(|e| panic!("{name} {args:?}: not JSON ({e}):\n{out}"));
    assert!(
        docs.next().is_none(),
        "{name} {args:?}: more than one document:\n{out}"
    );
    v
}

/// `--json` prints one JSON document on stdout: nc-lab's status commands on a lab whose nodes
/// do not run, and soc-ctl's against one engine (not configured, not started).
#[test]
fn json_output_is_one_json_document() {
    let progs = programs();
    let path = |name: &str| progs.iter().find(|(n, _)| *n == name).unwrap().1.clone();
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("lab");
    let st = st.to_str().unwrap();
    let lab = |args: &[&str]| {
        let mut a = vec!["--prefix", "nccli", "--state", st, "--loopback"];
        a.extend(args);
        let (rc, out, err) = run(&path("nc-lab"), &a);
        assert_eq!(rc, 0, "nc-lab {args:?}: {err}");
        out
    };
    lab(&["up", "--nodes", "3"]);
    for args in [
        &["status", "--json"][..],
        &["redis", "--port-base", "1", "status", "--json"],
        &["zk", "--front-port-base", "1", "status", "--json"],
    ] {
        let out = lab(args);
        let v = json_of("nc-lab", args, &out);
        let nodes = v.as_array().unwrap_or_else(|| panic!("{args:?}: {v}"));
        assert_eq!(nodes.len(), 3, "{args:?}: {v}");
        for (i, n) in nodes.iter().enumerate() {
            assert_eq!(n["node"], i, "{args:?}: {v}");
            assert!(
                n["running"] == false || n["error"].is_string(),
                "{args:?}: nothing runs, yet {n}"
            );
        }
    }
    lab(&["down"]);

    // One engine on 127.197.0.0/16.
    let cfg = dir.path().join("cluster.toml");
    let (rc, toml, err) = run(
        &path("soc-ctl"),
        &["gen-config", "--nodes", "1", "--net", "197"],
    );
    assert_eq!(rc, 0, "{err}");
    std::fs::write(&cfg, toml).unwrap();
    let ctl = dir.path().join("e0.sock");
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _engine = Killed(
        Command::new(path("nc-engine"))
            .arg("--config")
            .arg(&cfg)
            .args(["--node", "0", "--realtime", "0", "--ctl"])
            .arg(&ctl)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let t0 = std::time::Instant::now();
    while !ctl.exists() && t0.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let ctl = ctl.to_str().unwrap();
    let soc_ctl = |args: &[&str]| {
        let mut a = vec!["--ctl", ctl];
        a.extend(args);
        let (rc, out, err) = run(&path("soc-ctl"), &a);
        (rc, json_of("soc-ctl", args, &out), err)
    };
    let (rc, v, err) = soc_ctl(&["status", "--json"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(v["role"], "disabled", "{v}");
    assert!(v["counters"].is_object(), "{v}");
    let (rc, v, err) = soc_ctl(&["regs", "get", "node_count", "--json"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(
        v,
        serde_json::json!({"name": "node_count", "value": v["value"]})
    );
    let (rc, v, err) = soc_ctl(&["regs", "dump", "--json"]);
    assert_eq!(rc, 0, "{err}");
    let regs = v.as_array().expect("an array");
    assert!(
        regs.iter()
            .any(|r| r["name"] == "timeout" && r["access"] == "rw"),
        "{v}"
    );
    let (rc, v, err) = soc_ctl(&["log", "--json"]);
    assert_eq!(rc, 0, "{err}");
    assert!(v.is_array(), "{v}");
}

/// The long-running programs' flags for their diagnostics (`soc_ctl::logging`), each listed by
/// its `--help`.
const LOGGING: &[(&str, &[&str])] = &[
    ("nc-engine", &[]),
    ("redis-nc", &[]),
    ("zk-nc", &["node"]),
    ("xdp-log", &["attach"]),
    ("nc-raft", &[]),
];

#[test]
fn long_running_programs_take_the_logging_flags() {
    let progs = programs();
    for (name, sub) in LOGGING {
        let path = &progs.iter().find(|(n, _)| n == name).unwrap().1;
        let args: Vec<&str> = sub.iter().copied().chain(["--help"]).collect();
        let (rc, out, err) = run(path, &args);
        assert_eq!(rc, 0, "{name} {args:?}: {err}");
        for f in ["-v, --verbose", "--log-format <FORMAT>"] {
            assert!(
                out.lines().any(|l| l.trim_start().starts_with(f)),
                "{name} {sub:?} --help lists no {f}:\n{out}"
            );
        }
        assert!(out.contains("NC_LOG_FORMAT"), "{name} {sub:?}:\n{out}");
        // An unknown format is a usage error.
        let args: Vec<&str> = sub.iter().copied().chain(["--log-format", "xml"]).collect();
        let (rc, _, err) = run(path, &args);
        assert_eq!(rc, 2, "{name} {args:?}: {err}");
        assert!(err.contains("xml"), "{name} {args:?}: {err}");
    }
}

/// nc-engine's diagnostics, one engine on 127.196.0.0/16 configured and started: text lines by
/// default; `--log-format json` (or NC_LOG_FORMAT=json) one JSON object per line with `level`
/// and `message`; `-v` adds the state changes (debug); RUST_LOG, when set, decides instead of
/// `-v`.
#[test]
fn engine_logs_text_or_json_filtered_by_verbose_or_rust_log() {
    let b = common::bins();
    let (engine, soc_ctl) = (b.bins.engine.clone(), b.bins.soc_ctl.clone());
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cluster.toml");
    let (rc, toml, err) = run(&soc_ctl, &["gen-config", "--nodes", "1", "--net", "196"]);
    assert_eq!(rc, 0, "{err}");
    std::fs::write(&cfg, toml).unwrap();
    // The engine's stderr with `args` and `env`, from its start until it is active.
    let mut runs = 0;
    let mut stderr_of = |args: &[&str], env: &[(&str, &str)], wait_for: Option<&str>| {
        runs += 1;
        let ctl = dir.path().join(format!("e{runs}.sock"));
        let log = dir.path().join(format!("e{runs}.log"));
        let mut cmd = Command::new(&engine);
        cmd.arg("--config")
            .arg(&cfg)
            .args(["--node", "0", "--realtime", "0", "--ctl"])
            .arg(&ctl)
            .args(args)
            .env_remove("RUST_LOG")
            .env_remove("NC_LOG_FORMAT")
            .envs(env.iter().copied())
            .stderr(std::fs::File::create(&log).unwrap());
        // Killed when this run ends, or when an assertion below fails.
        struct Killed(std::process::Child);
        impl Drop for Killed {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
        let child = Killed(cmd.spawn().unwrap());
        let read = || std::fs::read_to_string(&log).unwrap_or_default();
        let t0 = std::time::Instant::now();
        let limit = std::time::Duration::from_secs(20);
        while !ctl.exists() {
            assert!(t0.elapsed() < limit, "no control socket: {}", read());
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let ctl = ctl.to_str().unwrap();
        let c = cfg.to_str().unwrap();
        for a in [&["init", "--config", c, "--node", "0"][..], &["start"]] {
            let a: Vec<&str> = ["--ctl", ctl]
                .iter()
                .copied()
                .chain(a.iter().copied())
                .collect();
            let (rc, _, err) = run(&soc_ctl, &a);
            assert_eq!(rc, 0, "soc-ctl {a:?}: {err}");
        }
        loop {
            let (_, out, _) = run(&soc_ctl, &["--ctl", ctl, "status", "--json"]);
            let active = serde_json::from_str::<serde_json::Value>(&out)
                .is_ok_and(|v| v["state"] == "Active");
            if active && wait_for.is_none_or(|w| read().contains(w)) {
                break;
            }
            assert!(
                t0.elapsed() < limit,
                "not active, or no {wait_for:?}: {}",
                read()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        drop(child);
        read()
    };
    let json_lines = |what: &str, err: &str| -> Vec<serde_json::Value> {
        let lines: Vec<serde_json::Value> = err
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l)
                    .unwrap_or_else(|e| panic!("{what}: a line is not JSON ({e}): {l}"))
            })
            .collect();
        for v in &lines {
            assert!(
                v["level"].is_string() && v["message"].is_string() && v["timestamp"].is_string(),
                "{what}: {v}"
            );
        }
        lines
    };
    let startup = "nc-engine: node 0 of 1,";
    let active = "state Active";

    // Text by default: the startup line (info), no state changes.
    let err = stderr_of(&[], &[], None);
    let line = err
        .lines()
        .find(|l| l.contains(startup))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains(" INFO ") && !line.starts_with('{'), "{line}");
    assert!(!err.contains(active) && !err.contains("DEBUG"), "{err}");

    // --log-format json -v: every line a JSON object; the startup line and the state changes.
    let err = stderr_of(&["--log-format", "json", "-v"], &[], Some(active));
    let lines = json_lines("--log-format json -v", &err);
    assert!(
        lines
            .iter()
            .any(|v| v["level"] == "INFO" && v["message"].as_str().unwrap().contains(startup)),
        "{err}"
    );
    assert!(
        lines.iter().any(|v| v["level"] == "DEBUG"
            && v["node"] == 0
            && v["message"].as_str().unwrap().contains(active)),
        "{err}"
    );

    // NC_LOG_FORMAT=json, RUST_LOG=soc_ctl=debug without -v: JSON; the engine's state changes,
    // not the startup line (nc_engine's, which the filter leaves out).
    let env = [("NC_LOG_FORMAT", "json"), ("RUST_LOG", "soc_ctl=debug")];
    let err = stderr_of(&[], &env, Some(active));
    let lines = json_lines("NC_LOG_FORMAT=json RUST_LOG=soc_ctl=debug", &err);
    assert!(!err.contains(startup), "{err}");
    assert!(
        lines
            .iter()
            .any(|v| v["message"].as_str().unwrap().contains(active)),
        "{err}"
    );

    // RUST_LOG=error wins over -v: neither the info line nor the state changes.
    let err = stderr_of(&["-v"], &[("RUST_LOG", "error")], None);
    assert!(!err.contains(startup) && !err.contains(active), "{err}");
}
