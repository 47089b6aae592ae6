"""Bench of rsbcast_rx alone (paper Alg. 1, the hardware way): outcomes per copy, the Δ window,
missing-tree mask, duplicates, gaps, too many in flight."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import nctb

FIRST, MORE, DELIVER, DUPLICATE, GAP, TOO_MANY = 1, 2, 3, 4, 5, 6
WINDOW = 10
IN_FLIGHT = 1024  # rtl::rsbcast_rx::IN_FLIGHT = proto::regs::MAX_IN_FLIGHT


class Rx:
    def __init__(self, dut, trees=2, window=WINDOW):
        self.dut = dut
        dut.trees.value = trees
        dut.window.value = window
        dut.apply.value = 0
        dut.restart.value = 0
        dut.restart_base.value = 0
        dut.copy_tree.value = 0
        dut.in_tree.value = 0
        dut.in_seq.value = 0
        dut.lock_take.value = 0
        dut.lock_kept.value = 0
        self.cycle = 0
        self.expired = []  # (cycle, missing)
        nctb.start_clock(dut.clock)
        cocotb.start_soon(self.watch())

    async def watch(self):
        while True:
            await RisingEdge(self.dut.clock)
            self.cycle += 1
            await ReadOnly()
            if int(self.dut.expired.value):
                self.expired.append((self.cycle, int(self.dut.missing.value)))

    async def restart(self, base=0):
        await RisingEdge(self.dut.clock)
        self.dut.restart.value = 1
        self.dut.restart_base.value = base
        # a lock-on point as lowi_core gives it beside the restart (the newest seq kept + 1)
        self.dut.lock_take.value = 0
        self.dut.lock_kept.value = base
        await RisingEdge(self.dut.clock)
        self.dut.restart.value = 0
        self.dut.restart_base.value = 0

    async def copy(self, tree, seq, apply=None):
        """Offer a copy; apply it the way lowi_core does (unless a fault/duplicate). A copy
        comes (`in_*`, judged) in one cycle and is acted on (`copy_*`) in the next: it comes,
        is acted on without `apply` (its outcome read) while it comes again, then is acted on
        with `apply`. Returns (outcome, the cycle it was applied in)."""
        d = self.dut
        await RisingEdge(d.clock)
        d.in_tree.value = tree
        d.in_seq.value = seq
        await RisingEdge(d.clock)
        d.copy_tree.value = tree
        await ReadOnly()
        out = int(d.outcome.value)
        await RisingEdge(d.clock)
        # (the outcome depends only on registered state and the copy, never on apply)
        d.apply.value = 1 if apply is None and out in (FIRST, MORE, DELIVER) else int(bool(apply))
        await ReadOnly()
        assert int(d.outcome.value) == out
        cyc = self.cycle
        await RisingEdge(d.clock)
        d.apply.value = 0
        return out, cyc

    async def busy(self):
        """A message is in flight (the count itself is internal; tests/modules.rs reads it)."""
        await ReadOnly()
        return int(self.dut.busy.value)


@cocotb.test()
async def deliver_when_every_tree_has_a_copy(dut):
    rx = Rx(dut)
    await rx.restart()
    assert (await rx.copy(0, 0))[0] == FIRST
    assert await rx.busy() == 1
    assert (await rx.copy(1, 0))[0] == DELIVER
    assert await rx.busy() == 0
    # the other tree first this time
    assert (await rx.copy(1, 1))[0] == FIRST
    assert (await rx.copy(0, 1))[0] == DELIVER
    await nctb.cycles(dut.clock, WINDOW + 5)
    assert rx.expired == []


@cocotb.test()
async def duplicate_gap_and_fresh_outcome(dut):
    rx = Rx(dut)
    await rx.restart()
    assert (await rx.copy(0, 0))[0] == FIRST
    assert (await rx.copy(0, 0))[0] == DUPLICATE
    assert (await rx.copy(1, 0))[0] == DELIVER
    assert (await rx.copy(1, 2))[0] == GAP  # tree 1 skipped seq 1
    await RisingEdge(dut.clock)
    dut.in_tree.value = 0
    dut.in_seq.value = 0
    await RisingEdge(dut.clock)
    await ReadOnly()
    # against a fresh receiver (restart), seq 0 would be a first copy
    assert int(dut.outcome_fresh.value) == FIRST


@cocotb.test()
async def window_expiry_names_the_missing_tree(dut):
    rx = Rx(dut)
    await rx.restart()
    _, c = await rx.copy(0, 0)
    await nctb.cycles(dut.clock, WINDOW + 5)
    assert rx.expired, "the window expired"
    first, missing = rx.expired[0]
    assert missing == 0b10, bin(missing)
    assert first - c == WINDOW + 1, (first, c)  # a copy at first + window is still in time
    # a copy inside the window (at first + window exactly) delivers
    await rx.restart()
    rx.expired.clear()
    _, c = await rx.copy(0, 0)
    await nctb.cycles(dut.clock, WINDOW - 4)  # copy() applies in its fourth cycle
    out, c2 = await rx.copy(1, 0)
    assert out == DELIVER and c2 - c == WINDOW, (out, c2 - c)
    await nctb.cycles(dut.clock, WINDOW + 2)
    assert rx.expired == []


async def stream(dut, tree, seqs, want):
    """Apply one copy per cycle on `tree` (seqs in order), each expected to be `want`: each
    comes in one cycle and is acted on in the next, while the next one comes."""
    seqs = list(seqs)
    for i in range(len(seqs) + 1):
        await RisingEdge(dut.clock)
        if i < len(seqs):
            dut.in_tree.value = tree
            dut.in_seq.value = seqs[i]
        if i == 0:
            continue
        dut.copy_tree.value = tree
        dut.apply.value = 1
        await ReadOnly()
        assert int(dut.outcome.value) == want, (tree, seqs[i - 1], int(dut.outcome.value))
        assert not int(dut.expired.value), (tree, seqs[i - 1])
    await RisingEdge(dut.clock)
    dut.apply.value = 0


@cocotb.test()
async def too_many_in_flight_and_single_tree(dut):
    # IN_FLIGHT messages in flight (their first-copy times in the RAM), one more is refused;
    # then the other tree completes them one per cycle, through the RAM's head, twice round.
    rx = Rx(dut, window=4 * IN_FLIGHT)
    await rx.restart()
    for base in (0, IN_FLIGHT):
        await stream(dut, 0, range(base, base + IN_FLIGHT), FIRST)
        assert await rx.busy() == 1
        assert (await rx.copy(0, base + IN_FLIGHT))[0] == TOO_MANY
        await stream(dut, 1, range(base, base + IN_FLIGHT), DELIVER)
        assert await rx.busy() == 0
    assert rx.expired == []
    # |G| = 1: every copy delivers at once
    await RisingEdge(dut.clock)
    dut.trees.value = 1
    await rx.restart()
    for s in range(3):
        assert (await rx.copy(0, s))[0] == DELIVER


@cocotb.test()
async def restart_at_a_lock_on_point_across_the_wrap(dut):
    # A joining node's receiver starts at the seq after the newest it saw (here near the 32-bit
    # wrap): that seq is a first copy, older ones duplicates, later ones gaps.
    rx = Rx(dut)
    base = 0xFFFF_FFFE
    await rx.restart(base)
    assert (await rx.copy(0, base - 1, apply=False))[0] == DUPLICATE
    assert (await rx.copy(0, base + 1, apply=False))[0] == GAP
    for s in (base, base + 1, 0, 1):
        s &= 0xFFFF_FFFF
        assert (await rx.copy(0, s))[0] == FIRST, hex(s)
        assert (await rx.copy(1, s))[0] == DELIVER, hex(s)
    assert await rx.busy() == 0
    assert rx.expired == []
