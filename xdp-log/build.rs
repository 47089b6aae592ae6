//! Builds the kernel side (`ebpf/`, target bpfel-unknown-none) from source and leaves the object
//! at `$OUT_DIR/nc-xdp-log.bpf.o`, which `src/lib.rs` embeds.
//!
//! Needs what `tools/setup.sh` installs: the `rust-src` component (for `-Z build-std=core`,
//! allowed on stable through `RUSTC_BOOTSTRAP=1` for this inner build only) and `bpf-linker`.
//! Fallback: `NC_XDP_LOG_BPF_OBJECT=/path/to/object` skips the build and embeds that file
//! (README, "Fallback").

use std::{
    env,
    path::{Path, PathBuf},
    process::Command,
};

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let object = out.join("nc-xdp-log.bpf.o");
    println!("cargo:rerun-if-env-changed=NC_XDP_LOG_BPF_OBJECT");
    if let Some(pre) = env::var_os("NC_XDP_LOG_BPF_OBJECT") {
        let pre = PathBuf::from(pre);
        println!("cargo:rerun-if-changed={}", pre.display());
        println!(
            "cargo:warning=xdp-log: embedding the prebuilt eBPF object {} (NC_XDP_LOG_BPF_OBJECT), not building it from source",
            pre.display()
        );
        std::fs::copy(&pre, &object).expect("copy NC_XDP_LOG_BPF_OBJECT");
        return;
    }

    let ebpf = manifest.join("ebpf");
    for p in [
        ebpf.join("src"),
        ebpf.join("Cargo.toml"),
        ebpf.join("Cargo.lock"),
        manifest.join("common/src"),
        manifest.join("common/Cargo.toml"),
        manifest.join("../proto/src"),
        manifest.join("../proto/Cargo.toml"),
    ] {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let target_dir = out.join("ebpf-target");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&ebpf)
        .args([
            "build",
            "--release",
            "--locked",
            "--target",
            "bpfel-unknown-none",
            "-Z",
            "build-std=core",
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        // Unstable -Z build-std on the stable toolchain, for this inner build only.
        .env("RUSTC_BOOTSTRAP", "1")
        .env(
            "CARGO_ENCODED_RUSTFLAGS",
            [
                "--cfg=bpf_target_arch=\"x86_64\"",
                "-Cdebuginfo=2",
                "-Clink-arg=--btf",
            ]
            .join("\x1f"),
        );
    // What the outer cargo (or clippy) set for the host build must not leak into this one.
    for v in [
        "RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS_HOST",
    ] {
        cmd.env_remove(v);
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("xdp-log: cannot run cargo to build the eBPF object: {e}"));
    if !status.success() {
        panic!(
            "xdp-log: building the eBPF program (xdp-log/ebpf) failed: {status}.\n\
             It needs the rust-src component and bpf-linker 0.13.0: run tools/setup.sh.\n\
             Fallback: NC_XDP_LOG_BPF_OBJECT=<object> (xdp-log/README.md)."
        );
    }
    let built: &Path = &target_dir.join("bpfel-unknown-none/release/xdp-log");
    std::fs::copy(built, &object).expect("copy the built eBPF object");
}
