"""Bench of pkt_gen_512 alone: the 512-bit generator (64-byte beats, one queued send) that
rtl/tests/gen.rs measures in rust-hdl. The frames must be the ones pkt_gen sends, byte for byte
(ncframes.py's build of proto/README.md's layout), and the rates rtl/README.md reports must hold
on the exported Verilog: with the FIFO streaming one entry per cycle, a full batch (4 entries)
every 4 cycles and heartbeats or single entries every 2 cycles, with no overrun.
The send/entry driver and the frame collector are test_pkt_gen.py's (they take any bus width)."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import ncframes as nf
import nctb
from test_pkt_gen import Gen, diff, expected

BEAT = 64  # bytes per beat


def beats(frame):
    return (len(frame) + BEAT - 1) // BEAT


def check_frames(g, trees, want):
    """Every tree got exactly `want(tree)`, each frame's beats on consecutive cycles."""
    for t in range(4):
        got = [f[2] for f in g.frames[t]]
        if t >= trees:
            assert got == [], f"trees = {trees}: a frame on tree {t}"
            continue
        w = want(t)
        assert len(got) == len(w), (t, len(got), len(w))
        for k, (a, b) in enumerate(zip(got, w)):
            assert a == b, (t, k, diff(a, b))
        for first, last, f in g.frames[t]:
            assert last - first + 1 == beats(f), f"tree {t}: a gap inside a frame"


@cocotb.test()
async def frames_are_pkt_gens_in_64_byte_beats(dut):
    """Heartbeat (78 B, 2 beats), a batch of 1, a full batch of 4 (3 beats), START: same bytes
    as the 64-bit generator's on every tree, nothing on the trees beyond `trees`."""
    g = Gen(dut)
    for trees in (4, 2):
        dut.trees.value = trees
        for f in g.frames:
            f.clear()
        one = [(0x11223344, 0x0102030405060708, b"abc")]
        four = [(1, 2, b""), (3, 4, b"x"), (0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF, b"12345678"),
                (5, 6, b"q" * 7)]
        sent = [(nf.HEARTBEAT, 9, 3, 20, ()), (nf.BATCH, 9, 3, 21, one),
                (nf.BATCH, 9, 3, 22, four), (nf.START, 10, 4, 0, ())]
        for kind, inst, epoch, seq, ents in sent:
            await g.send(kind, inst, epoch, seq, ents)
        await nctb.cycles(dut.clock, 20)
        check_frames(g, trees, lambda t: [expected(t, *s) for s in sent])
        assert [beats(f[2]) for f in g.frames[0]] == [2, 2, 3, 2]
        assert g.overruns == 0
        await nctb.cycles(dut.clock, 5)


async def stream(dut, g, period, count, length, sends):
    """A send every `period` cycles taking `count` entries of `length` bytes; the entries come as
    egress_fifo streams them: one per cycle, the first 2 cycles after the send, behind the earlier
    batches' entries. Returns the batches sent and whether `ready` was high at every send."""
    d = dut
    kind = nf.BATCH if count else nf.HEARTBEAT
    batches, at_send, entries = [], {}, {}
    last = -1
    for i in range(sends):
        t = i * period
        ents = [(i * count + j, i * count + j + 1, bytes([(i * count + j) & 0xFF]) * length)
                for j in range(count)]
        batches.append((kind, i + 1, 5, i, tuple(ents)))
        at_send[t] = batches[-1]
        for e in ents:
            last = max(t + 2, last + 1)
            entries[last] = e
    ready_at_sends = True
    for t in range(max(max(at_send), last) + 1):
        s = at_send.get(t)
        d.send.value = int(s is not None)
        if s is not None:
            kind_, inst, epoch, seq, ents = s
            d.send_kind.value = kind_
            d.send_count.value = len(ents)
            d.send_instance.value = inst
            d.send_epoch.value = epoch
            d.send_seq.value = seq
        e = entries.get(t)
        d.e_valid.value = int(e is not None)
        if e is not None:
            c, sq, p = e
            d.e_client.value = c
            d.e_seq.value = sq
            d.e_len.value = len(p)
            d.e_payload.value = int.from_bytes(p.ljust(8, b"\0"), "big")
        await ReadOnly()
        if s is not None:
            ready_at_sends &= bool(int(d.ready.value))
        await RisingEdge(d.clock)
    d.send.value = 0
    d.e_valid.value = 0
    await nctb.cycles(d.clock, 30)
    return batches, ready_at_sends


async def rate(dut, period, count, length, sends, gap, idle):
    g = Gen(dut, trees=4)
    await nctb.cycles(dut.clock, 3)
    batches, ready = await stream(dut, g, period, count, length, sends)
    assert g.overruns == 0, f"{g.overruns} overruns at a send every {period} cycles"
    assert ready, "pkt_gen_512.ready was low at a send"
    check_frames(g, 4, lambda t: [expected(t, *b) for b in batches])
    firsts = [f[0] for f in g.frames[0]]
    lasts = [f[1] for f in g.frames[0]]
    gaps = [b - a for a, b in zip(firsts, firsts[1:])][1:]
    idles = [b - a - 1 for a, b in zip(lasts, firsts[1:])][1:]
    dut._log.info("send every %d cycles, %d entries: %d frames, a frame every %s cycles, %s idle beats",
                  period, count, len(firsts), sorted(set(gaps)), sorted(set(idles)))
    assert gaps and all(x == gap for x in gaps), (gap, gaps)
    assert all(x == idle for x in idles), (idle, idles)


@cocotb.test()
async def full_batches_every_four_cycles(dut):
    """4 entries of 8 bytes (174-byte frames, 3 beats): 0.25 decisions, 1 request per cycle."""
    await rate(dut, period=4, count=4, length=8, sends=10, gap=4, idle=1)


@cocotb.test()
async def single_entries_back_to_back(dut):
    """1 entry of 8 bytes (102-byte frames, 2 beats): a frame every 2 cycles, no idle beat."""
    await rate(dut, period=2, count=1, length=8, sends=12, gap=2, idle=0)


@cocotb.test()
async def heartbeats_back_to_back(dut):
    """78-byte heartbeats (2 beats): a frame every 2 cycles, no idle beat."""
    await rate(dut, period=2, count=0, length=0, sends=12, gap=2, idle=0)
