#!/usr/bin/env bash
# Idempotent setup of everything the demo and the tests need on a fresh Debian 12 machine.
# Safe to run again: each step checks first and installs only what is missing.
# (Later parts of the project add their own steps here: apt packages, the cocotb venv (below),
# bpf-linker, rust-src.)
set -euo pipefail

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

for comp in rustfmt clippy; do
    if ! rustup component list --installed 2>/dev/null | grep -q "^$comp"; then
        say "installing rustup component $comp"
        rustup component add "$comp"
    fi
done

say "ok: rustc $have, rustfmt and clippy present"

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
