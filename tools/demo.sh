#!/usr/bin/env bash
# The main job (README): a real Nano-consensus cluster at work, `nc-lab demo`.
# As root: network namespaces, two multicast trees on Linux bridges, SCHED_FIFO engines;
# otherwise the same cluster on loopback. 3 nodes start, a client load runs, the leader is
# killed midway, a fourth node joins, and the logs of the live nodes are compared.
# Extra arguments go to `nc-lab demo` (e.g. --requests 200000 --window 32 --keep).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

bash tools/setup.sh demo
cargo build --release --locked -q -p soc-ctl -p nc-tools
exec ./target/release/nc-lab demo "$@"
