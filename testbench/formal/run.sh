#!/usr/bin/env bash
# Formal proofs of lowi_core with yosys 0.23 (`sat -tempinduct`, k-induction), and the check
# that deliberately broken copies of the design FAIL them (so the proofs can fail).
#   bash testbench/formal/run.sh        (or: make -C testbench formal)
# The properties are in lowi_core_props.vh; this script includes them at the end of a copy of
# rtl/verilog/lowi_core.v. The broken copies live only in testbench/formal/build/, never in
# rtl/verilog.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src="$here/../../rtl/verilog/lowi_core.v"
out="$here/build"
command -v yosys >/dev/null 2>&1 || { echo "formal: yosys not found (run tools/setup.sh)" >&2; exit 1; }
[ -f "$src" ] || { echo "formal: $src missing" >&2; exit 1; }
grep -q '^endmodule // lowi_core$' "$src" || { echo "formal: no 'endmodule // lowi_core' in $src" >&2; exit 1; }
mkdir -p "$out"
cp "$here/lowi_core_props.vh" "$out/"
include='s|^endmodule // lowi_core$|`include "lowi_core_props.vh"\nendmodule // lowi_core|'

# make_copy NAME [SED-EXPR]: lowi_core.v with the properties included (and a mutation).
make_copy() {
    local name=$1 expr=${2:-}
    sed -e "$include" "$src" > "$out/$name.v"
    if [ -n "$expr" ]; then
        sed -i -e "$expr" "$out/$name.v"
        if cmp -s <(sed -e "$include" "$src") "$out/$name.v"; then
            echo "formal: mutation of $name did not apply (did the RTL change?)" >&2
            exit 1
        fi
    fi
}

# prove NAME PROP: exit 0 when PROP (P1, P2 or P3 of lowi_core_props.vh) is proved by
# k-induction (up to 6 steps), non-zero when yosys finds a counterexample or cannot prove it.
prove() {
    local name=$1 prop=$2
    (cd "$out" && yosys -q -l "$name.$prop.log" -p "read_verilog -formal -D$prop $name.v; prep -top lowi_core; flatten; opt_clean; sat -tempinduct -tempinduct-def -prove-asserts -set-assumes -set-init-def -set-def-inputs -maxsteps 6 -verify lowi_core" >/dev/null 2>&1)
}

declare -A what=(
    [P1]="leader id always < n"
    [P2]="no DELIVER or send while NET-FAULTed; FAULTED is left only by clearing ENABLE or by a JOIN"
    [P3]="never two sends of one epoch within one loop period"
)
status=0
for p in P1 P2 P3; do
    t0=$SECONDS
    make_copy lowi_core_formal
    if prove lowi_core_formal "$p"; then
        echo "formal: $p (${what[$p]}): PROVED ($((SECONDS - t0)) s)"
    else
        echo "formal: $p (${what[$p]}): FAILED; see $out/lowi_core_formal.$p.log" >&2
        status=1
    fi
done

# Broken copies: each must fail the proof of the property it breaks, with a counterexample
# trace that starts in the initial state (the base case of the induction).
while IFS='#' read -r name prop expr desc; do
    [ -n "$name" ] || continue
    t0=$SECONDS
    make_copy "$name" "$expr"
    if prove "$name" "$prop"; then
        echo "formal: broken copy '$name' ($desc) PROVED $prop: the proof cannot catch it" >&2
        status=1
    elif grep -q "model found for base case: FAIL" "$out/$name.$prop.log"; then
        # a real counterexample trace from the initial state, not just a failed induction step
        echo "formal: broken copy '$name' ($desc): $prop FAILS with a counterexample from reset, as it must ($((SECONDS - t0)) s)"
    else
        echo "formal: broken copy '$name': yosys did not run properly; see $out/$name.$prop.log" >&2
        status=1
    fi
done <<'MUT'
broken_wrap#P1#s/if (n_inc == node_count) begin/if (n_inc == (node_count + 8'd1)) begin/#leader counter wraps at n+1 instead of n
broken_adopt#P1#s/r_leader\$d = i_rx_sender\$q;/r_leader$d = i_rx_sender$q + 8'd1;/#an adopted epoch's leader is the sender + 1
broken_fault#P2#s/r_listen_nf = r_fol\$q ||/r_listen_nf = r_fol$q || (p_state == s_faulted) ||/#a faulted node still takes DECIDE copies
broken_loop#P3#s/(r_lp\$q ||/(((r_loop$q + 32'd1) >= loop_period) ||/g#the loop fires one cycle early
broken_gap#P3#s/ r_mg\$q)/ ((r_loop$q + 32'd1) >= min_gap))/g#an early send fires one cycle before min_gap
MUT
exit "$status"
