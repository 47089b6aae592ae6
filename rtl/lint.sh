#!/usr/bin/env bash
# Lint and compile every exported Verilog file (rtl/verilog/*.v):
#   verilator --lint-only -Wall (only DECLFILENAME off: rust-hdl names the submodules of a file
#   after their instance path, e.g. nc_core_core_rx inside nc_core.v, which never matches the
#   file name) and Icarus `iverilog -g2012`.
# Fails (does not skip) when a tool is missing: run tools/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/verilog"
for tool in verilator iverilog; do
    command -v "$tool" >/dev/null 2>&1 || { echo "rtl/lint.sh: $tool not found (run tools/setup.sh)" >&2; exit 1; }
done
shopt -s nullglob
files=(*.v)
[ "${#files[@]}" -gt 0 ] || { echo "rtl/lint.sh: no Verilog files in rtl/verilog" >&2; exit 1; }
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "${files[@]}"; do
    top=${f%.v}
    if verilator --lint-only -Wall -Wno-DECLFILENAME --top-module "$top" "$f"; then
        echo "verilator -Wall: $f clean"
    else
        echo "verilator -Wall: $f FAILED" >&2
        status=1
    fi
    if iverilog -g2012 -s "$top" -o "$tmp/$top.vvp" "$f"; then
        echo "iverilog -g2012: $f compiles"
    else
        echo "iverilog -g2012: $f FAILED" >&2
        status=1
    fi
done
exit "$status"
