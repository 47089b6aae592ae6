"""Bench of egress_fifo alone: push, reserve (a send takes a batch), read-out order, clear."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import nctb


class Fifo:
    def __init__(self, dut):
        self.dut = dut
        for s in ("push", "push_client", "push_seq", "push_len", "push_payload", "reserve", "clear"):
            getattr(dut, s).value = 0
        # fifo_depth and batch_max: a send takes min(len, bmax), so `op` sets bmax to each
        # send's count (`room` / `room_b` follow it).
        dut.depth.value = 4
        dut.bmax.value = 3
        self.out = []  # (cycle, client, seq, len, payload)
        self.cycle = 0
        nctb.start_clock(dut.clock)
        cocotb.start_soon(self.watch())

    async def watch(self):
        d = self.dut
        while True:
            await RisingEdge(d.clock)
            self.cycle += 1
            await ReadOnly()
            if int(d.out_valid.value):
                self.out.append((self.cycle, int(d.out_client.value), int(d.out_seq.value),
                                 int(d.out_len.value), int(d.out_payload.value)))

    async def op(self, push=None, reserve=0, clear=0):
        """One cycle with `push` / `reserve` / `clear`; a pushed request's fields are given in
        the cycle before (the core decides on a request one cycle after it comes)."""
        d = self.dut
        await RisingEdge(d.clock)
        if push is not None:
            c, s, payload = push
            d.push_client.value = c
            d.push_seq.value = s
            d.push_len.value = len(payload)
            d.push_payload.value = int.from_bytes(payload.ljust(len(d.push_payload) // 8, b"\0"), "big")
            await RisingEdge(d.clock)
        d.push.value = int(push is not None)
        if reserve:
            d.bmax.value = reserve
        d.reserve.value = int(reserve > 0)
        # A clear never comes with a send that takes requests (the core's contract).
        assert not (clear and reserve), "a clear with a reserve"
        d.clear.value = clear
        await ReadOnly()
        cyc = self.cycle
        await RisingEdge(d.clock)
        d.push.value = 0
        d.reserve.value = 0
        d.clear.value = 0
        return cyc

    async def length(self):
        await ReadOnly()
        n = int(self.dut.len.value)
        d = self.dut
        assert int(d.nz.value) == int(n != 0), f"nz {d.nz.value} with len {n}"
        depth, bmax = int(d.depth.value), int(d.bmax.value)
        assert int(d.room.value) == int(n < depth), f"room {d.room.value}: len {n}, depth {depth}"
        assert int(d.room_b.value) == int(n < depth + bmax), \
            f"room_b {d.room_b.value}: len {n}, depth {depth}, bmax {bmax}"
        return n


@cocotb.test()
async def push_reserve_read_out_in_order(dut):
    f = Fifo(dut)
    for i in range(5):
        await f.op(push=(100 + i, 1000 + i, bytes([0x30 + i]) * (i + 1)))
    assert await f.length() == 5
    assert f.out == [], "nothing streams out before a send takes it"
    t = await f.op(reserve=3)
    await nctb.cycles(dut.clock, 6)
    assert await f.length() == 2
    assert [o[1:4] for o in f.out] == [(100, 1000, 1), (101, 1001, 2), (102, 1002, 3)]
    assert f.out[0][0] - t == 2, "taken entries stream out two cycles after the send"
    assert [o[0] for o in f.out] == [f.out[0][0] + k for k in range(3)], "one per cycle"
    assert f.out[2][4] == int.from_bytes(b"\x32\x32\x32".ljust(len(dut.out_payload) // 8, b"\0"), "big")
    # a push in the same cycle as a reserve
    await f.op(push=(200, 2000, b"z"), reserve=2)
    await nctb.cycles(dut.clock, 6)
    assert await f.length() == 1
    assert [o[1] for o in f.out] == [100, 101, 102, 103, 104]


@cocotb.test()
async def clear_drops_untaken_entries(dut):
    f = Fifo(dut)
    await f.op(clear=1)  # whatever the previous test left
    await nctb.cycles(dut.clock, 4)
    f.out.clear()
    for i in range(4):
        await f.op(push=(i, i + 1, b""))
    await f.op(reserve=1)  # the send takes one
    await f.op(clear=1)  # the rest is dropped
    await nctb.cycles(dut.clock, 5)
    assert await f.length() == 0
    assert [o[1] for o in f.out] == [0]
    await f.op(push=(9, 9, b"q"), clear=1)  # clear happens before this cycle's push
    assert await f.length() == 1
    await f.op(reserve=1)
    await nctb.cycles(dut.clock, 5)
    assert [o[1] for o in f.out] == [0, 9]
    # with untaken entries: the push lands where the clear leaves the queue, not after them
    for i in range(3):
        await f.op(push=(20 + i, 1, b""))
    await f.op(push=(30, 1, b"p"), clear=1)
    assert await f.length() == 1
    await f.op(reserve=1)
    await nctb.cycles(dut.clock, 5)
    assert [o[1] for o in f.out] == [0, 9, 30]


@cocotb.test()
async def full_size_payloads_come_out_whole(dut):
    """Entries of the exported width (128 payload bytes, issue 17) keep every byte."""
    f = Fifo(dut)
    await f.op(clear=1)  # whatever the previous test left
    await nctb.cycles(dut.clock, 4)
    f.out.clear()
    width = len(dut.push_payload) // 8
    assert width == 128, f"egress_fifo exported with {width}-byte payloads"
    payloads = [bytes((17 * i + 3 * k + 1) & 0xFF for k in range(n))
                for i, n in enumerate((width, width - 1, 9))]
    for i, p in enumerate(payloads):
        await f.op(push=(300 + i, 3000 + i, p))
    await f.op(reserve=3)
    await nctb.cycles(dut.clock, 6)
    assert [o[1:4] for o in f.out] == [(300 + i, 3000 + i, len(p)) for i, p in enumerate(payloads)]
    for o, p in zip(f.out, payloads):
        assert o[4].to_bytes(width, "big")[:len(p)] == p
