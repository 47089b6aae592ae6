#!/usr/bin/env bash
# Synthesise exported modules with Yosys 0.23 (`synth -top M -flatten; stat; ltp -noff`) and
# print, per module: cells, flip-flops (cells whose type contains DFF) and the longest
# topological path (ltp: logic levels between flip-flops/ports, an Fmax proxy).
#   bash rtl/synth.sh              # every exported module (the table in rtl/README.md)
#   bash rtl/synth.sh MODULE...    # some of them (rtl/verilog/MODULE.v)
#   VERBOSE=1 bash rtl/synth.sh nc_core   # also the full cell statistics
# Fails if yosys is missing (run tools/setup.sh first) or synthesis fails.
set -euo pipefail
cd "$(dirname "$0")/verilog"
command -v yosys >/dev/null 2>&1 || { echo "rtl/synth.sh: yosys not found (run tools/setup.sh)" >&2; exit 1; }
if [ "$#" -eq 0 ]; then
    set -- rsbcast_rx lowi_core egress_fifo csr pkt_parser req_capture pkt_gen pkt_gen_512 host_gen reply_gen nc_core nc_engine
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '%-12s %8s %8s %5s\n' module cells ffs ltp
for top in "$@"; do
    yosys -q -l "$log" -p "read_verilog ${top}.v; synth -top ${top} -flatten; stat; ltp -noff" >/dev/null
    # The last statistics block is ours (synth prints one of its own before).
    stats=$(awk '/Printing statistics/ {buf = ""} {buf = buf $0 "\n"} END {printf "%s", buf}' "$log")
    cells=$(echo "$stats" | awk '/Number of cells:/ {print $4}')
    ffs=$(echo "$stats" | awk '$1 ~ /DFF/ {n += $2} END {print n + 0}')
    ltp=$(sed -n 's/.*Longest topological path in .* (length=\([0-9]*\)).*/\1/p' "$log")
    [ -n "$cells" ] && [ -n "$ltp" ] || { echo "rtl/synth.sh: no statistics for $top" >&2; exit 1; }
    printf '%-12s %8s %8s %5s\n' "$top" "$cells" "$ffs" "$ltp"
    if [ -n "${VERBOSE:-}" ]; then echo "$stats"; fi
done
