#!/usr/bin/env python3
"""Static timing from nextpnr's SDF: which registers are late, and from where.

nextpnr reports one critical path per clock. A design that misses its clock by 2x has
thousands of late endpoints, and one path says little about them. This reads the SDF that
`rtl/pnr.sh` has nextpnr write (`$OUT/<module>.sdf`; after placement only, `ROUTE=0`, its
interconnect delays are nextpnr's estimates, after routing the routed ones), computes the
latest arrival at every register and RAM input (the cells' IOPATH delays and the
INTERCONNECT delays, the slow corner: the third number of each triple, plus the input's
setup), and prints:

- the worst path, pin by pin (its arrival should be 1 / Fmax of nextpnr's report, within the
  few tens of ps nextpnr adds for clock skew);
- the late endpoints grouped by register (a vector's bits together: the instance name up to
  yosys' `_TRELLIS_FF_Q...`/`_DP16KD...` suffix) with the register family each one's worst
  path starts from, worst first: the paths to cut, not one of them.

With `--from REGEX` only the paths that start at a cell whose name matches REGEX are timed:
what a register family feeds when it is not the worst start of any input.

Usage: python3 rtl/sta.py OUT/nc_engine.sdf [--period NS] [--top N] [--path REGEX] [--from REGEX]
"""

import argparse
import re
import sys
from collections import defaultdict

TRIPLE = r"\((-?[0-9.]*):(-?[0-9.]*):(-?[0-9.]*)\)"
RE_CELLTYPE = re.compile(r'\(CELLTYPE "([^"]*)"\)')
RE_INSTANCE = re.compile(r"\(INSTANCE ?(.*)\)\s*$")
RE_INTERCONNECT = re.compile(r"\(INTERCONNECT (\S+) (\S+) " + TRIPLE)
RE_IOPATH = re.compile(r"\(IOPATH (\S+) (\S+) " + TRIPLE)
RE_SETUP = re.compile(r"\(SETUPHOLD \((?:posedge|negedge) (\S+)\) \((?:posedge|negedge) (\S+)\) " + TRIPLE)


def ps(groups):
    """The slow corner of an SDF triple (ps); an empty field counts as 0."""
    return float(groups[2] or groups[1] or groups[0] or 0)


def unescape(name):
    return name.replace("\\", "")


def split_pin(path):
    """`inst/pin` (the SDF's DIVIDER is `/`; the pin is the last part)."""
    inst, _, pin = path.rpartition("/")
    return unescape(inst), pin


def parse(path):
    edges = defaultdict(list)  # (inst, pin) -> [((inst, pin), delay)]
    setup = {}  # (inst, pin) -> setup ps, for pins checked against a clock
    cell_type = {}
    inst = None
    with open(path) as f:
        for line in f:
            m = RE_INTERCONNECT.search(line)
            if m:
                edges[split_pin(m.group(1))].append((split_pin(m.group(2)), ps(m.group(3, 4, 5))))
                continue
            m = RE_IOPATH.search(line)
            if m:
                a, b = m.group(1), m.group(2)
                d = ps(m.group(3, 4, 5))
                # A clock-to-output arc (CLK, CLKA, CLKB, the RAM's WCK) starts a path.
                if a.upper().startswith("CLK") or a.upper() == "WCK":
                    edges[("<clock>", "")].append(((inst, b), d))
                else:
                    edges[(inst, a)].append(((inst, b), d))
                continue
            m = RE_SETUP.search(line)
            if m:
                key = (inst, m.group(1))
                setup[key] = max(setup.get(key, 0.0), ps(m.group(3, 4, 5)))
                continue
            m = RE_CELLTYPE.search(line)
            if m:
                ctype = m.group(1)
                continue
            m = RE_INSTANCE.search(line)
            if m:
                inst = unescape(m.group(1).strip())
                cell_type[inst] = ctype
    return edges, setup, cell_type


def only_from(edges, regex):
    """The edges with the clock-to-output arcs limited to the cells whose name matches regex."""
    kept = dict(edges)
    kept[("<clock>", "")] = [(b, d) for b, d in edges[("<clock>", "")] if re.search(regex, b[0])]
    return kept


def longest(edges):
    """Latest arrival at every pin (a DAG once clock-to-output arcs start the paths) and the
    predecessor of each pin on its latest path; -inf where no path from a clock arrives."""
    indeg = defaultdict(int)
    nodes = set(edges)
    for a, outs in edges.items():
        for b, _ in outs:
            indeg[b] += 1
            nodes.add(b)
    # Only paths from a clock count (register to register, as nextpnr's Fmax): the module's
    # inputs and constant drivers start none.
    arrival = {n: float("-inf") for n in nodes}
    arrival[("<clock>", "")] = 0.0
    pred = {}
    stack = [n for n in nodes if indeg[n] == 0]
    seen = 0
    while stack:
        a = stack.pop()
        seen += 1
        t = arrival[a]
        for b, d in edges.get(a, ()):
            if b not in pred or t + d > arrival[b]:
                arrival[b] = t + d
                pred[b] = a
            indeg[b] -= 1
            if indeg[b] == 0:
                stack.append(b)
    if seen != len(nodes):
        print(f"sta.py: {len(nodes) - seen} pins sit on combinational loops and were not timed", file=sys.stderr)
    return arrival, pred


FAMILY = re.compile(r"(_TRELLIS_FF_Q|_TRELLIS_FF|_DP16KD|_TRELLIS_DPR16X4|_TRELLIS_RAMW|\$).*$")


def family(inst):
    """A register's name without yosys' cell suffix: the bits of one vector together."""
    return FAMILY.sub("", inst) or inst


def start_of(pin, pred):
    while pin in pred and pred[pin][0] != "<clock>":
        pin = pred[pin]
    return pin


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sdf")
    ap.add_argument("--period", type=float, default=6.4, help="the clock period in ns (default 6.4: 156.25 MHz)")
    ap.add_argument("--top", type=int, default=40, help="how many register groups to list (default 40)")
    ap.add_argument("--path", metavar="REGEX", help="only the inputs of cells whose name matches REGEX")
    ap.add_argument("--from", dest="start", metavar="REGEX", help="only the paths from cells whose name matches REGEX")
    args = ap.parse_args()
    edges, setup, cell_type = parse(args.sdf)
    if args.start:
        edges = only_from(edges, args.start)
        if not edges[("<clock>", "")]:
            sys.exit(f"sta.py: no clocked cell's name matches --from {args.start!r}")
    arrival, pred = longest(edges)
    ends = [(arrival[p] + s, p) for p, s in setup.items() if arrival.get(p, float("-inf")) > float("-inf")]
    if not ends:
        sys.exit(f"sta.py: no clocked inputs in {args.sdf}")
    ends.sort(reverse=True)
    if args.path:
        picked = [e for e in ends if re.search(args.path, e[1][0])]
        if not picked:
            sys.exit(f"sta.py: no clocked input's cell matches {args.path!r}")
        ends = picked
    worst, wpin = ends[0]
    print(f"worst arrival {worst / 1000:.2f} ns ({1e6 / worst:.2f} MHz) at {wpin[0]}/{wpin[1]}")
    path = [wpin]
    while path[-1] in pred and pred[path[-1]][0] != "<clock>":
        path.append(pred[path[-1]])
    path.reverse()
    # Interconnect: an edge between two cells; the rest is the cells' own delay.
    wire = sum(arrival[b] - arrival[a] for a, b in zip(path, path[1:]) if a[0] != b[0])
    print(f"  ({wire / 1000:.2f} ns of it interconnect; carry-chain pins FCI/FCO not shown)")
    for p in path:
        if p[1] not in ("FCI", "FCO"):
            print(f"  {arrival[p] / 1000:7.2f}  {cell_type.get(p[0], '?'):14s} {p[0]}/{p[1]}")
    period = args.period * 1000
    late = [(t, p) for t, p in ends if t > period]
    print(f"\n{len(late)} of {len(ends)} clocked inputs arrive later than {args.period} ns")
    groups = {}
    for t, p in late:
        g = family(p[0])
        if g not in groups:
            groups[g] = [t, 0, defaultdict(float)]
        groups[g][1] += 1
        src = family(start_of(p, pred)[0])
        groups[g][2][src] = max(groups[g][2][src], t)
    print(f"\n{'worst ns':>8} {'inputs':>6}  register (the starts of its late paths, worst first)")
    for g, (t, n, srcs) in sorted(groups.items(), key=lambda kv: -kv[1][0])[: args.top]:
        s = ", ".join(f"{k} {v / 1000:.1f}" for k, v in sorted(srcs.items(), key=lambda kv: -kv[1])[:3])
        print(f"{t / 1000:8.2f} {n:6d}  {g}  <- {s}")


if __name__ == "__main__":
    main()
