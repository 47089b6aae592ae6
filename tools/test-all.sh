#!/usr/bin/env bash
# Every test of the project, in one command (README: "run all tests").
# Runs each check, prints a summary line "checks: N passed, M failed", exits 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

bash tools/setup.sh || exit 1

passed=0
failed=0
failures=()
step() {
    local name=$1
    shift
    printf '\n=== %s\n$ %s\n' "$name" "$*"
    local t0=$SECONDS
    if "$@"; then
        passed=$((passed + 1))
        printf -- '--- ok: %s (%ds)\n' "$name" $((SECONDS - t0))
    else
        failed=$((failed + 1))
        failures+=("$name")
        printf -- '--- FAILED: %s (%ds)\n' "$name" $((SECONDS - t0))
    fi
}

step "format" cargo fmt --all -- --check
step "clippy" cargo clippy --workspace --all-targets --locked -- -D warnings
step "proto without alloc (parse/emit/registers only)" cargo build -p nc-proto --no-default-features --locked
step "unit, property and checker tests" cargo test --workspace --locked
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
step "rtl: yosys synthesis of nc_engine (the top)" bash rtl/synth.sh nc_engine

# --- cocotb / formal --- (testbench/README.md: every cocotb bench on each simulator, then the
# yosys proofs; formal/run.sh also requires that three deliberately broken copies of lowi_core
# fail their proofs). Each fails loudly when cocotb (.venv), the simulator or yosys is missing.
step "cocotb benches on Icarus" make -C testbench SIM=icarus
step "cocotb benches on Verilator" make -C testbench SIM=verilator
step "formal: yosys sat -tempinduct on lowi_core (and broken copies must fail)" make -C testbench formal

echo
if [ "$failed" -gt 0 ]; then
    printf 'failed: %s\n' "${failures[@]}"
fi
echo "checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
