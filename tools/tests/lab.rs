//! nc-lab end to end: the demo in namespaces (root) and on loopback, agreement and failover
//! asserted; `down` leaves no namespace behind; `up` and `down` are idempotent.

use std::process::Command;

const LAB: &str = env!("CARGO_BIN_EXE_nc-lab");

/// One cluster at a time. The demo's software timing (loop 0.3 ms, Δ 4 ms, timeout 50 ms) is a
/// synchrony bound: three clusters of 3–4 engines at once on a 2-core machine broke it now and
/// then (a follower timing out beside the real successor, or the successor faulting), and the
/// protocol then does what it must (late ticks, stale copies, a safe exit), which these tests
/// rightly count as failures. With two busy loops beside them, the three tests run in parallel
/// failed in 2 of 9 runs (CI saw one such failure); one at a time, in 0 of 14.
static ONE_CLUSTER: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_cluster() -> std::sync::MutexGuard<'static, ()> {
    ONE_CLUSTER.lock().unwrap_or_else(|e| e.into_inner())
}

/// nc-lab finds nc-engine and soc-ctl beside itself: make sure they are built (same profile).
fn build_engine() {
    nc_tools::demo::Bins::built_for_tests(
        env!("CARGO"),
        std::path::Path::new(LAB).parent().unwrap(),
    );
}

fn lab(prefix: &str, state: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let o = Command::new(LAB)
        .args(["--prefix", prefix, "--state"])
        .arg(state)
        .args(args)
        .output()
        .expect("run nc-lab");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn namespaces(prefix: &str) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&format!("{prefix}-")))
        .map(str::to_string)
        .collect()
}

/// Check the demo's summary: agreement on 3 live nodes and a takeover after the timeout.
fn check_demo(out: &str) {
    assert!(out.contains("logs identical on 3 live nodes: yes"), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("failover:"))
        .expect("failover line");
    let ms: f64 = line
        .split("node 1 sent ")
        .nth(1)
        .and_then(|r| r.split(" ms").next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    // Software timing: timeout 50 ms, loop 0.3 ms; the takeover comes after the timeout.
    assert!(ms >= 50.0, "took over before the timeout: {line}");
    let viol = out
        .lines()
        .find(|l| l.starts_with("synchrony violations"))
        .unwrap();
    let late_ticks_at_1: u64 = viol
        .split("node 1: ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!(
        ms <= 50.0 + 2.0 * 0.3 || late_ticks_at_1 > 0,
        "takeover later than timeout + 2 loop periods without a counted late tick: {line}"
    );
    assert!(out.contains("followers sent 0 (no acks)"), "{out}");
}

/// stderr is not a terminal here: progress comes as plain lines, never `\r`-framed bars.
fn no_frames(err: &str) {
    assert!(
        !err.contains('\r'),
        "a progress frame off a terminal:\n{err:?}"
    );
    assert!(
        err.lines().count() < 200,
        "progress off a terminal should be an occasional line:\n{err}"
    );
}

#[test]
fn demo_in_namespaces_then_nothing_left_behind() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: the namespace lab needs root (CI runs it as root)");
        return;
    }
    let _one = one_cluster();
    build_engine();
    let prefix = format!("nct{}", std::process::id() % 10_000);
    let state = tempfile::tempdir().unwrap();
    let st = state.path().join("lab");
    // up twice (idempotent), a fault command, down twice (idempotent).
    let (ok, out, err) = lab(&prefix, &st, &["up", "--nodes", "3"]);
    assert!(ok, "{out}{err}");
    assert_eq!(namespaces(&prefix).len(), 2 + 2 * 3);
    assert!(lab(&prefix, &st, &["up", "--nodes", "3"]).0);
    assert_eq!(namespaces(&prefix).len(), 8);
    let (ok, _, err) = lab(
        &prefix,
        &st,
        &["fault", "link-down", "--node", "1", "--tree", "b"],
    );
    assert!(ok, "{err}");
    let (ok, _, err) = lab(
        &prefix,
        &st,
        &[
            "fault", "drop", "--node", "1", "--tree", "a", "--rate", "30",
        ],
    );
    assert!(ok, "{err}");
    let (ok, _, err) = lab(&prefix, &st, &["fault", "kill", "--node", "0"]);
    assert!(!ok && err.contains("not running"), "{err}");
    assert!(lab(&prefix, &st, &["down"]).0);
    assert!(lab(&prefix, &st, &["down"]).0);
    assert!(namespaces(&prefix).is_empty());

    let (ok, out, err) = lab(
        &prefix,
        &st,
        &["demo", "--requests", "6000", "--window", "4"],
    );
    assert!(ok, "demo failed:\n{out}\n{err}");
    println!("{out}");
    check_demo(&out);
    no_frames(&err);
    assert!(out.contains("IP multicast in network namespaces"), "{out}");
    assert!(
        namespaces(&prefix).is_empty(),
        "the demo left namespaces behind"
    );
    assert!(!st.exists(), "the demo left its state folder behind");
    // No veth or bridge of ours leaked into the root namespace.
    let links = Command::new("ip").args(["-o", "link"]).output().unwrap();
    let links = String::from_utf8_lossy(&links.stdout);
    for name in [" pcie", " tree-a", " tree-b", " a0@", " c0@"] {
        assert!(
            !links.contains(name),
            "{name} left in the root namespace:\n{links}"
        );
    }
}

#[test]
fn demo_on_loopback() {
    let _one = one_cluster();
    build_engine();
    let state = tempfile::tempdir().unwrap();
    let st = state.path().join("lab");
    let (ok, out, err) = lab(
        "nctl",
        &st,
        &["--loopback", "demo", "--requests", "6000", "--window", "4"],
    );
    assert!(ok, "demo failed:\n{out}\n{err}");
    println!("{out}");
    check_demo(&out);
    no_frames(&err);
    assert!(out.contains("loopback"), "{out}");
}

#[test]
fn ctrl_c_during_the_demo_leaves_nothing_behind() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: the namespace lab needs root (CI runs it as root)");
        return;
    }
    let _one = one_cluster();
    build_engine();
    let prefix = format!("ncc{}", std::process::id() % 10_000);
    let state = tempfile::tempdir().unwrap();
    let st = state.path().join("lab");
    // Interrupt at several points: while the namespaces are built, while engines start, under load.
    for ms in [300u64, 1200, 2500] {
        let mut child = Command::new(LAB)
            .args(["--prefix", &prefix, "--state"])
            .arg(&st)
            .args(["demo", "--requests", "10000000"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(ms));
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGINT,
        )
        .unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "interrupted at {ms} ms but exited 0");
        assert!(
            namespaces(&prefix).is_empty(),
            "namespaces left after Ctrl-C at {ms} ms"
        );
        assert!(!st.exists(), "state left after Ctrl-C at {ms} ms");
        let engines = Command::new("pgrep")
            .args(["-f", &st.display().to_string()])
            .output()
            .unwrap();
        assert!(
            engines.stdout.is_empty(),
            "engines left after Ctrl-C at {ms} ms"
        );
    }
}

/// The soak, small: leader kills with restarts, a link flap (namespaces only) and a stall under
/// load; the cluster serves after each, the logs agree and every acknowledged request is where
/// its OK said (the full soak is `nc-lab soak`, docs/benchmarks.md).
#[test]
fn soak_smoke_kills_flaps_and_stalls_lose_nothing() {
    let _one = one_cluster();
    build_engine();
    let root = nix::unistd::geteuid().is_root();
    let state = tempfile::tempdir().unwrap();
    let st = state.path().join("lab");
    let mut args = vec![
        "soak",
        "--kills",
        "3",
        "--stalls",
        "1",
        "--fault-secs",
        "6",
        "--memory-secs",
        "4",
        "--seed",
        "3",
        // Early sends at the soak's 200 µs (~30k requests/s here): the load under which the
        // smoke found a lost input and a follower timing out on copies it had not read yet
        // (docs/benchmarks.md, "Faults survived"; both fixed, each with a test of its own).
        "--min-gap-us",
        "200",
    ];
    if root {
        args.extend(["--flaps", "2"]);
    } else {
        args.extend(["--flaps", "0"]);
        args.insert(0, "--loopback");
    }
    let (ok, out, err) = lab(&format!("ncs{}", std::process::id() % 10_000), &st, &args);
    println!("{out}");
    assert!(ok, "soak failed:\n{out}\n{err}");
    assert!(out.contains("soak: PASSED"), "{out}");
    no_frames(&err);
    assert!(
        out.contains("| leader SIGKILL (+ restart, join) | 3 |"),
        "{out}"
    );
    assert!(
        out.contains("elsewhere or missing: 0, not checkable (instance never read): 0"),
        "{out}"
    );
    assert!(
        out.contains("| node 0 |"),
        "the memory phase printed no RSS:\n{out}"
    );
}
