#!/usr/bin/env bash
# The main job (README). For now: the deterministic cluster simulator's full campaigns,
# 10000 seeds each for n = 3, 5 and 9 on two trees with every fault class, then a real
# 3-node cluster of nc-engine processes on loopback measured with nc-client.
# (It becomes the real-cluster demo, `nc-lab demo`, when the testbed lands.)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

bash tools/setup.sh
cargo build --release --locked -p nc-testbench --bin nc-sim
seeds=${SEEDS:-10000}
status=0
for n in 3 5 9; do
    echo
    echo "=== nc-sim --nodes $n --trees 2 --seeds $seeds"
    ./target/release/nc-sim --nodes "$n" --trees 2 --seeds "$seeds" || status=1
done
echo
echo "=== a real 3-node cluster (nc-engine over UDP on loopback): soc-ctl/bench/loopback.sh ${DEMO_REQUESTS:-20000}"
bash soc-ctl/bench/loopback.sh "${DEMO_REQUESTS:-20000}" || status=1
exit $status
