#!/usr/bin/env bash
# Simulator campaigns on seeds no run has covered yet, outside CI. CI replays the same seeds every
# time (tools/test-all.sh); every fresh range of 100 000-200 000 seeds has found recovery holes
# the CI seeds never reached (testbench/README.md). This runs a new range each day: by default the
# first seed is the day number times 1,000,000, so each day's run covers seeds no earlier day did.
#   bash tools/sim-campaign.sh                      # n=3 200000, n=5 40000, n=9 10000 seeds
#   FIRST=9000000 bash tools/sim-campaign.sh        # a given range
#   SEEDS=20000 bash tools/sim-campaign.sh          # n=3 seeds (n=5 gets a fifth, n=9 a twentieth)
# Prints each campaign's FAIL lines (each with its replay command) and summary; exits 1 if any
# campaign found a violation. A benchmark-like job (tens of minutes on 2 cores), not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${SEEDS:-200000}
first=${FIRST:-$(($(date -u +%s) / 86400 * 1000000))}
case "$seeds$first" in
    *[!0-9]*) echo "tools/sim-campaign.sh: SEEDS and FIRST must be whole numbers (got SEEDS=$seeds FIRST=$first)" >&2; exit 2 ;;
esac
[ "$seeds" -ge 20 ] || { echo "tools/sim-campaign.sh: SEEDS must be at least 20 (got $seeds)" >&2; exit 2; }
cargo build --release -q -p nc-testbench --bin nc-sim
sim=target/release/nc-sim
echo "sim-campaign: seeds from $first (early sends and packet tags mixed, every fault class)"
failed=0
for spec in "3 $seeds" "5 $((seeds / 5))" "9 $((seeds / 20))"; do
    set -- $spec
    echo "== n=$1 |G|=2, $2 seeds from $first"
    # pipefail: the pipeline fails when the simulator does (exit 1 on a violation).
    if ! "$sim" --nodes "$1" --trees 2 --seeds "$2" --first-seed "$first" | grep -E '^(FAIL|  replay|n=|seeds=)'; then
        failed=1
    fi
done
if [ "$failed" -ne 0 ]; then
    echo "sim-campaign: violations found: replay each with the command printed under its FAIL line" >&2
    exit 1
fi
echo "sim-campaign: no violation"
