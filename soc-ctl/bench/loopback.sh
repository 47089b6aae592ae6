#!/usr/bin/env bash
# Measure a 3-node loopback cluster of release nc-engines with the default software timing
# (soc-ctl gen-config: 1 ms loop, early sends 20 µs after the last send, Δ 4 ms, drift 0.5 ms,
# timeout 50 ms): request → OK
# latency percentiles and decisions/s for several client windows, then every node's
# synchrony-violation counters. Usage: soc-ctl/bench/loopback.sh [TOTAL] [TIMER]
set -euo pipefail
cd "$(dirname "$0")/../.."
total=${1:-100000}
timer=${2:-timerfd}
cargo build --release --locked -q -p soc-ctl
bin=target/release
dir=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM
$bin/soc-ctl gen-config --nodes 3 --net 99 --port 27400 > "$dir/cluster.toml"
for i in 0 1 2; do
    $bin/nc-engine --config "$dir/cluster.toml" --node $i --ctl "$dir/e$i.sock" --timer "$timer" 2> "$dir/e$i.log" &
    pids+=($!)
done
for i in 0 1 2; do
    for _ in $(seq 100); do [ -S "$dir/e$i.sock" ] && break; sleep 0.05; done
    $bin/soc-ctl --ctl "$dir/e$i.sock" init --config "$dir/cluster.toml" --node $i > /dev/null
done
$bin/soc-ctl --ctl "$dir/e0.sock" start > /dev/null
sleep 0.2
echo "3-node loopback cluster, $(nproc) cores, timer $timer, $(head -1 "$dir/e0.log" | sed 's/.*realtime/realtime/')"
for w in 1 16 64; do
    printf 'window %-3s ' "$w"
    $bin/nc-client --config "$dir/cluster.toml" --client-id $((100 + w)) load --requests "$total" --window "$w" --payload 64
done
for i in 0 1 2; do
    $bin/soc-ctl --ctl "$dir/e$i.sock" status --json | python3 -c '
import json, sys
s = json.load(sys.stdin); c = s["counters"]
print("node %s: %-8s instance %7d late_ticks %d late_copies %d stale_epoch %d timeouts %d net_faults %d, worst tick %.2f ms late" % (
    s["node_id"], s["role"], s["instance"], c["late_ticks"], c["late_copies"], c["stale_epoch"],
    c["timeouts"], c["net_faults"], s["engine"]["late_tick_max_ns"] / 1e6))'
done
