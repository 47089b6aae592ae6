//! The root README's "Use Redis-NC in one minute" block, run as written (the cargo line skipped,
//! `./target/release/` replaced by this build's folder, the lab's prefix and state folder made
//! unique), with the stock `redis-cli` and `redis-benchmark`: the SET at one front is read at
//! another, INCR answers 1, the benchmark reports a rate, INFO shows the Nanoconsensus section,
//! and `down` leaves nothing running. It runs as the test's user and, when that is root, a
//! second time as the unprivileged user `nobody` (the block needs no privilege: loopback only).

use std::path::{Path, PathBuf};
use std::process::Command;

fn readme_block() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let section = readme
        .split("## Use Redis-NC in one minute")
        .nth(1)
        .expect("the README has the section");
    section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block")
        .to_string()
}

/// Takes the block's lab down when dropped (a no-op after the block's own `down`).
struct Down {
    nc_lab: PathBuf,
    prefix: String,
    state: PathBuf,
}

impl Drop for Down {
    fn drop(&mut self) {
        let _ = Command::new(&self.nc_lab)
            .args(["--prefix", &self.prefix, "--state"])
            .arg(&self.state)
            .args(["redis", "down"])
            .output();
    }
}

/// The engines' and fronts' logs of the lab in `state` (what a failure report needs).
fn lab_logs(state: &Path) -> String {
    let mut all = String::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(state.join("lab"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        all.push_str(&format!(
            "--- {} (last {} lines)\n",
            f.display(),
            tail.len()
        ));
        for l in tail.into_iter().rev() {
            all.push_str(l);
            all.push('\n');
        }
    }
    all
}

/// Run the block with `bin_dir`'s binaries, the lab `prefix` with its state in `state`; as
/// `user` (name, group) through `setpriv` when given. Checks what it printed.
fn run_block(bin_dir: &Path, prefix: &str, state: &Path, user: Option<(&str, &str)>) {
    let script: String = readme_block()
        .lines()
        .filter(|l| !l.starts_with("cargo "))
        .map(|l| {
            l.replace("./target/release/", &format!("{}/", bin_dir.display()))
                .replace(
                    "nc-lab redis",
                    &format!(
                        "nc-lab --prefix {prefix} --state {}/lab redis",
                        state.display()
                    ),
                )
        })
        .collect::<Vec<_>>()
        .join("\n");
    // Whatever the block did, nothing of its lab outlives the test (a failed block stops before
    // its own `down`; its processes would hold the README's ports for the next run).
    let _down = Down {
        nc_lab: bin_dir.join("nc-lab"),
        prefix: prefix.to_string(),
        state: state.join("lab"),
    };
    let mut c = match user {
        Some((u, g)) => {
            let mut c = Command::new("setpriv");
            c.args(["--reuid", u, "--regid", g, "--clear-groups", "--"]);
            c.arg("bash");
            // nobody's home does not exist; nothing of the block needs one.
            c.env("HOME", state).env("USER", u).env("LOGNAME", u);
            c
        }
        None => Command::new("bash"),
    };
    // Ports of the README (6380..6382) are the block's own; nothing else in this test binary
    // uses them, and the two runs follow each other.
    let o = c
        .args(["-euo", "pipefail", "-c", &script])
        // The block runs fronts without a password, used by a redis-cli without one.
        .env_remove(host_app::auth::REDIS_ENV)
        .env_remove("REDISCLI_AUTH")
        .current_dir(state)
        .output()
        .expect("bash");
    let who = user.map_or("the test's user", |(u, _)| u);
    let out = String::from_utf8_lossy(&o.stdout).replace('\r', "\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "the README block failed as {who}:\n{out}\n{err}\n{}",
        lab_logs(state)
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines.iter().any(|l| l.contains("redis-cli -p 6380")),
        "{out}"
    );
    let after_up: Vec<&str> = lines
        .iter()
        .skip_while(|l| !l.starts_with("stop it with"))
        .skip(1)
        .copied()
        .collect();
    assert_eq!(after_up.first(), Some(&"OK"), "{out}\n{}", lab_logs(state));
    assert_eq!(
        after_up.get(1),
        Some(&"hello"),
        "read at another front: {out}"
    );
    assert_eq!(after_up.get(2), Some(&"1"), "{out}");
    // redis-benchmark -q: "SET: 8230.45 requests per second, p50=3.327 msec".
    let rate = lines
        .iter()
        .filter_map(|l| l.strip_prefix("SET: "))
        .find_map(|l| l.split_once(" requests per second"))
        .and_then(|(r, _)| r.trim().parse::<f64>().ok());
    assert!(
        rate.is_some_and(|r| r > 0.0),
        "redis-benchmark reported no rate: {out}\n{err}"
    );
    assert!(
        out.contains("nc_mode:serving") && out.contains("nc_engine:Active"),
        "{out}"
    );
    assert!(out.contains("down"), "{out}");
    let left = Command::new("pgrep")
        .args(["-f", &format!("nc-lab-{prefix}|{}/lab", state.display())])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "processes left after down ({who}): {}",
        String::from_utf8_lossy(&left.stdout)
    );
    eprintln!(
        "README block ran as {who}: SET at {:.0} requests/s",
        rate.unwrap()
    );
}

#[test]
fn the_readme_redis_block_runs_as_written() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_nc-lab"));
    let dir = bin.parent().unwrap();
    // The product binaries the block starts (not linked by this crate).
    let _ = nc_tools::app_lab::built_for_tests(env!("CARGO"), dir);
    let prefix = format!("nrm{}", std::process::id() % 10_000);
    let tmp = tempfile::tempdir().unwrap();
    run_block(dir, &prefix, tmp.path(), None);

    if !nix::unistd::geteuid().is_root() {
        // Already the unprivileged run.
        return;
    }
    // As root, again as `nobody`: the binaries must be reachable for it (every folder up to
    // them searchable, the files executable) and the state folder its own.
    let user = nix::unistd::User::from_name("nobody")
        .ok()
        .flatten()
        .expect("the user nobody");
    let group = nix::unistd::Group::from_gid(user.gid)
        .ok()
        .flatten()
        .expect("nobody's group");
    let reachable = Command::new("setpriv")
        .args([
            "--reuid",
            &user.name,
            "--regid",
            &group.name,
            "--clear-groups",
        ])
        .arg("--")
        .arg("test")
        .arg("-x")
        .arg(&bin)
        .status()
        .is_ok_and(|s| s.success());
    if !reachable {
        eprintln!(
            "SKIPPED the run as nobody: {} is not executable for it (a folder above it is not \
             searchable by others)",
            bin.display()
        );
        return;
    }
    let tmp2 = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(
        tmp2.path(),
        Some(user.uid.as_raw()),
        Some(group.gid.as_raw()),
    )
    .expect("chown the state folder to nobody");
    let prefix2 = format!("nru{}", std::process::id() % 10_000);
    run_block(
        dir,
        &prefix2,
        tmp2.path(),
        Some((user.name.as_str(), group.name.as_str())),
    );
}
