//! The root README's "Use Redis-NC in one minute" block, run as written (the cargo line skipped,
//! `./target/release/` replaced by this build's folder, the lab's prefix made unique), with the
//! stock `redis-cli`: the SET at one front is read at another, INCR answers 1, INFO shows the
//! Nanoconsensus section, and `down` leaves nothing running.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_readme_redis_block_runs_as_written() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let section = readme
        .split("## Use Redis-NC in one minute")
        .nth(1)
        .expect("the README has the section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_nc-lab"));
    let dir = bin.parent().unwrap().display().to_string();
    // The product binaries the block starts (not linked by this crate).
    let _ = nc_tools::app_lab::built_for_tests(env!("CARGO"), bin.parent().unwrap());
    let prefix = format!("nrm{}", std::process::id() % 10_000);
    let tmp = tempfile::tempdir().unwrap();
    let script: String = block
        .lines()
        .filter(|l| !l.starts_with("cargo "))
        .map(|l| {
            l.replace("./target/release/", &format!("{dir}/")).replace(
                "nc-lab redis",
                &format!(
                    "nc-lab --prefix {prefix} --state {}/lab redis",
                    tmp.path().display()
                ),
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    // Ports of the README (6380..6382) are the block's own; nothing else in this test binary
    // uses them.
    let o = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        // The block runs fronts without a password, used by a redis-cli without one.
        .env_remove(host_app::auth::REDIS_ENV)
        .env_remove("REDISCLI_AUTH")
        .output()
        .expect("bash");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "the README block failed:\n{out}\n{err}");
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
    assert_eq!(after_up.first(), Some(&"OK"), "{out}");
    assert_eq!(
        after_up.get(1),
        Some(&"hello"),
        "read at another front: {out}"
    );
    assert_eq!(after_up.get(2), Some(&"1"), "{out}");
    assert!(
        out.contains("nc_mode:serving") && out.contains("nc_engine:Active"),
        "{out}"
    );
    assert!(out.contains("down"), "{out}");
    let left = Command::new("pgrep")
        .args([
            "-f",
            &format!("nc-lab-{prefix}|{}/lab", tmp.path().display()),
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "processes left after down: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}
