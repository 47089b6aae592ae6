#!/usr/bin/env bash
# Every test of the project, in one command (README: "run all tests").
# Runs each check, prints a summary line "checks: N passed, M failed" (after the names of the
# failed steps and what failed in them: test names, panics, compiler errors), exits 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

bash tools/setup.sh || exit 1

# Incremental caches only help repeated local builds; a clean run would write ~5 GB of them.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# A full disk shows up as an unrelated rustc/LLVM I/O error, so say how much room there is first.
echo "disk: $(df -h --output=avail . | tail -1 | tr -d ' ') free where target/ is written"

passed=0
failed=0
failures=()
# What failed inside the failed steps (test names, panics, compiler errors), repeated at the end:
# a long log is often read from its end only.
details=()
step_log=$(mktemp)
trap 'rm -f "$step_log"' EXIT
step() {
    local name=$1
    shift
    printf '\n=== %s\n$ %s\n' "$name" "$*"
    local t0=$SECONDS
    # Through tee into the step's log, not a pipeline: a process a step leaves behind with the
    # output still open must not keep the run waiting for the end of a pipe.
    local out rc tee_pid i
    exec {out}> >(tee "$step_log")
    tee_pid=$!
    "$@" >&"$out" 2>&1
    rc=$?
    exec {out}>&-
    for i in $(seq 50); do
        kill -0 "$tee_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        printf -- '--- ok: %s (%ds)\n' "$name" $((SECONDS - t0))
    else
        failed=$((failed + 1))
        failures+=("$name")
        printf -- '--- FAILED: %s (%ds)\n' "$name" $((SECONDS - t0))
        local line
        while IFS= read -r line; do
            details+=("$name: $line")
        # A panic's message follows "panicked at", up to rust's "note: run with RUST_BACKTRACE"
        # line: kept whole (at most 60 lines), since a test's message often carries the logs of
        # the processes it ran, and a CI report may show only the end of the run.
        done < <(awk '/^test .* \.\.\. FAILED$|^error(\[|:)|^FAIL|FAILED/ { print; next }
                      /panicked at/ { print; n = 0
                          while ((getline l) > 0 && l !~ /^note: run with/ && n < 60) {
                              print "    " l; n++ }
                          next }' "$step_log" | head -n 120)
    fi
}

step "format" cargo fmt --all -- --check
step "clippy" cargo clippy --workspace --all-targets --locked -- -D warnings
step "proto without alloc (parse/emit/registers only)" cargo build -p nc-proto --no-default-features --locked
step "unit, property and checker tests" cargo test --workspace --locked
# --- xdp-log ---
# The XDP program (xdp-log/ebpf, its own workspace, target bpfel-unknown-none) is built from source
# by xdp-log/build.rs inside the clippy/test steps above (rust-src + bpf-linker from tools/setup.sh).
# Its namespace and CLI tests (xdp-log/tests/{netns,cli}.rs) are part of `cargo test --workspace`:
# they need root and print SKIPPED without it; CI runs as root, so they run. Here: the kernel
# crate's own format and lint checks, which the root workspace does not cover.
step "xdp-log eBPF crate: format" bash -c 'cd xdp-log/ebpf && cargo fmt -- --check'
step "xdp-log eBPF crate: clippy (bpfel)" bash -c 'cd xdp-log/ebpf && RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR=../../target/xdp-log-ebpf-clippy cargo clippy --release --locked --target bpfel-unknown-none -Z build-std=core -- -D warnings'
if [ "$(id -u)" != 0 ]; then
    echo "NOTE: not root: the xdp-log namespace and CLI tests were SKIPPED (they run in CI as root)"
fi
# --- end xdp-log ---
# --- nc-lab bench smoke (the full sweep is `nc-lab bench`; see docs/benchmarks.md) ---
# Debug binaries from the test step: LOWI (untagged and tagged) and raft-rs, two windows, one batch size,
# 1 s stability.
step "nc-lab bench smoke" bash -c 'rm -rf target/bench-smoke && ./target/debug/nc-lab --prefix ncbs bench --requests 400 --windows 1,8 --batches 16 --tags both --rounds 2 --stability-secs 1 --out target/bench-smoke && grep -q "| Raft | 3 | 8 |" target/bench-smoke/results.md && grep -q "^2 rounds, each" target/bench-smoke/results.md && grep -Eq "^\| 3 \| 8 \| [0-9.]+ \([0-9.]+–[0-9.]+\)" target/bench-smoke/results.md && grep -q "| LOWI b=16 tagged | 3 | 8 |" target/bench-smoke/results.md && test -s target/bench-smoke/latency-throughput.svg'
step "build nc-sim (release)" cargo build --release --locked -p nc-testbench --bin nc-sim
sim=./target/release/nc-sim
# Simulator campaigns: a smaller version of the demo's, plus other n and |G| (a minute in all).
step "nc-sim n=3 |G|=2" "$sim" --nodes 3 --trees 2 --seeds 10000
step "nc-sim n=5 |G|=2" "$sim" --nodes 5 --trees 2 --seeds 5000
step "nc-sim n=9 |G|=2" "$sim" --nodes 9 --trees 2 --seeds 3000
step "nc-sim n=3 |G|=1" "$sim" --nodes 3 --trees 1 --seeds 3000
step "nc-sim n=4 |G|=3" "$sim" --nodes 4 --trees 3 --seeds 2000
step "nc-sim n=2 |G|=4" "$sim" --nodes 2 --trees 4 --seeds 2000
step "nc-sim n=1" "$sim" --nodes 1 --trees 2 --seeds 1000
# --- rtl --- (the rust-hdl simulation tests, the lockstep test and the Verilog freshness
# test run in "unit, property and checker tests" above)
step "rtl: verilator -Wall lint and iverilog -g2012 compile of rtl/verilog" bash rtl/lint.sh
# nc_core (the consensus core without the packet parsers and generators) takes ~4 min; the whole
# nc_engine takes ~15 min of generic synthesis on 2 cores and is a benchmark: `bash rtl/synth.sh
# nc_engine` (or placed and routed: `rtl/pnr.sh`; rtl/README.md "Place and route").
step "rtl: yosys synthesis of nc_core" bash rtl/synth.sh nc_core

# --- cocotb / formal --- (testbench/README.md: every cocotb bench on each simulator, then the
# yosys proofs; formal/run.sh also requires that three deliberately broken copies of lowi_core
# fail their proofs). Each fails loudly when cocotb (.venv), the simulator or yosys is missing.
step "cocotb benches on Icarus" make -C testbench SIM=icarus
step "cocotb benches on Verilator" make -C testbench SIM=verilator
step "formal: yosys sat -tempinduct on lowi_core (and broken copies must fail)" make -C testbench formal

echo
if [ "$failed" -gt 0 ]; then
    printf 'failed: %s\n' "${failures[@]}"
    if [ "${#details[@]}" -gt 0 ]; then
        echo "what failed in them (first lines; the step's output above has the rest):"
        printf '  %s\n' "${details[@]}"
    fi
fi
echo "checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
