"""Bench of pkt_gen alone (the 64-bit streaming generator: entries of up to 128 payload bytes): a send command (and a batch's entries, as the FIFO's OK stream gives
them) in, one DECIDE frame per tree out on the 64-bit streams. Each frame must be byte for byte
the frame ncframes.py builds from proto/README.md's layout (with the source MAC/IP of the
src_mac/src_ip registers' reset values, pkt_gen's generation-time TTL and UDP checksum 0)."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import ncframes as nf
import nctb
from nodelib import GEN_SRC_IP, GEN_SRC_MAC, GEN_TTL, generated_decide

CLUSTER, PORT, SENDER = 0x0A0B0C0D, 7400, 2
GROUPS = [0xEF4E4301, 0xEF4E4302, 0xEF4E4303, 0xEF4E4304]


def expected(tree, kind, instance, epoch, seq, entries=()):
    return generated_decide(CLUSTER, SENDER, tree, kind, instance, epoch, seq, entries, PORT)


class Gen:
    def __init__(self, dut, trees=2):
        self.dut = dut
        for s in ("send", "send_kind", "send_count", "send_instance", "send_epoch", "send_seq",
                  "e_valid", "e_client", "e_seq", "e_len", "e_payload"):
            getattr(dut, s).value = 0
        dut.sender.value = SENDER
        dut.cluster.value = CLUSTER
        dut.trees.value = trees
        dut.port.value = PORT
        dut.src_mac.value = int.from_bytes(GEN_SRC_MAC, "big")
        dut.src_ip.value = GEN_SRC_IP
        dut.ttl.value = GEN_TTL
        if hasattr(dut, "room"):  # the streaming pkt_gen's; pkt_gen_512 has none
            dut.room.value = 1  # no output FIFO in front of the streams' receivers
        for i, g in enumerate(GROUPS):
            getattr(dut, f"group{i}").value = g
        self.streams = [nctb.StreamFrames(dut, f"m{t}") for t in range(4)]
        self.frames = [s.frames for s in self.streams]  # per tree: (first cycle, last cycle, bytes)
        self.cycle = 0
        self.overruns = 0
        nctb.start_clock(dut.clock)
        cocotb.start_soon(self.watch())

    async def watch(self):
        d = self.dut
        while True:
            await RisingEdge(d.clock)
            self.cycle += 1
            await ReadOnly()
            self.overruns += int(d.overrun.value)
            for s in self.streams:
                s.sample(self.cycle)

    async def send(self, kind, instance, epoch, seq, entries=()):
        d = self.dut
        await RisingEdge(d.clock)
        d.send.value = 1
        d.send_kind.value = kind
        d.send_count.value = len(entries)
        d.send_instance.value = instance
        d.send_epoch.value = epoch
        d.send_seq.value = seq
        await RisingEdge(d.clock)
        d.send.value = 0
        await RisingEdge(d.clock)  # the FIFO's entries follow two cycles after the send
        for c, s, p in entries:
            d.e_valid.value = 1
            d.e_client.value = c
            d.e_seq.value = s
            d.e_len.value = len(p)
            # the payload word's width: 128 bytes (pkt_gen), 8 (pkt_gen_512's image generator)
            d.e_payload.value = int.from_bytes(p.ljust(len(d.e_payload) // 8, b"\0"), "big")
            await RisingEdge(d.clock)
        d.e_valid.value = 0


def diff(a, b):
    return [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y][:8], len(a), len(b)


@cocotb.test()
async def heartbeat_and_batch_frames_on_every_tree(dut):
    g = Gen(dut, trees=2)
    await g.send(nf.HEARTBEAT, 7, 3, 11)
    await nctb.cycles(dut.clock, 30)
    ents = [(0x11223344, 0x0102030405060708, b"abc"), (5, 6, b""), (7, 8, b"12345678")]
    await g.send(nf.BATCH, 7, 3, 12, ents)
    await nctb.cycles(dut.clock, 40)
    for t in range(2):
        got = [f[2] for f in g.frames[t]]
        want = [expected(t, nf.HEARTBEAT, 7, 3, 11), expected(t, nf.BATCH, 7, 3, 12, ents)]
        assert len(got) == 2, (t, len(got))
        for k in range(2):
            assert got[k] == want[k], (t, k, diff(got[k], want[k]))
        # one beat per cycle, no gap inside a frame
        assert all(f[1] - f[0] + 1 == (len(f[2]) + 7) // 8 for f in g.frames[t])
    assert g.frames[2] == [] and g.frames[3] == [], "trees = 2: nothing on trees 2 and 3"
    assert g.overruns == 0


@cocotb.test()
async def start_on_four_trees_and_back_to_back_frames(dut):
    g = Gen(dut, trees=4)
    await g.send(nf.START, 1, 0, 0)
    await g.send(nf.HEARTBEAT, 1, 0, 1)  # a send right after: the frames follow back to back
    await nctb.cycles(dut.clock, 40)
    for t in range(4):
        got = [f[2] for f in g.frames[t]]
        assert got == [expected(t, nf.START, 1, 0, 0), expected(t, nf.HEARTBEAT, 1, 0, 1)], \
            (t, [diff(a, b) for a, b in zip(got, [expected(t, nf.START, 1, 0, 0)])])
        (f0, l0, _), (f1, _, _) = g.frames[t]
        assert f1 == l0 + 1, f"tree {t}: frames back to back ({l0} → {f1})"


@cocotb.test()
async def full_size_entries(dut):
    """Issue 17: entries of up to 128 payload bytes (a Redis SET with a 64-byte value is about
    100), streamed into the frame: 4 entries of 128, 64, 0 and 101 bytes, then the largest
    frame (1,230 bytes: 8 x 128; four readers, so entries 4..7 are each reader's second)."""
    g = Gen(dut, trees=3)
    ents = [(1, 2, bytes((i * 7 + 1) & 0xFF for i in range(128))),
            (3, 4, bytes(range(64, 128))), (5, 6, b""), (7, 8, bytes(range(101)))]
    full = [(9 + i, 10 + i, bytes((i + j) & 0xFF for j in range(128))) for i in range(8)]
    await g.send(nf.BATCH, 40, 2, 5, ents)
    await nctb.cycles(dut.clock, 80)
    await g.send(nf.BATCH, 41, 2, 6, full)
    await nctb.cycles(dut.clock, 176)
    for t in range(3):
        got = [f[2] for f in g.frames[t]]
        want = [expected(t, nf.BATCH, 40, 2, 5, ents), expected(t, nf.BATCH, 41, 2, 6, full)]
        assert len(got) == 2, (t, len(got))
        for k in range(2):
            assert got[k] == want[k], (t, k, diff(got[k], want[k]))
        assert len(got[1]) == 1230 and all(
            f[1] - f[0] + 1 == (len(f[2]) + 7) // 8 for f in g.frames[t])
    assert g.overruns == 0


@cocotb.test()
async def sends_at_ready_with_random_batches(dut):
    """As nc_engine's loop drives it: a send in every cycle `ready` allows, each a random
    heartbeat or batch of 1-8 entries of 0-128 bytes, the entries as egress_fifo streams them
    (one per cycle, from 2 cycles after the send, behind the earlier ones). The next batch's
    entries arrive while the frame before it streams (it must not overwrite that frame's), the
    frames leave back to back, and every one is ncframes' frame."""
    import random
    from cocotb.triggers import FallingEdge

    rng = random.Random(17)
    g = Gen(dut, trees=2)
    d = dut
    want, fifo, last_out, n = [], [], 0, 24
    cycle = 0
    while len(g.frames[0]) < n:
        await FallingEdge(d.clock)  # registers settled: read `ready`, drive the next edge
        cycle += 1
        assert cycle < 200 * n, "frames stopped"
        d.send.value = 0
        d.e_valid.value = 0
        if len(want) < n and int(d.ready.value):
            kind = rng.choice([nf.HEARTBEAT, nf.BATCH, nf.BATCH])
            ents = []
            if kind == nf.BATCH:
                for _ in range(rng.randint(1, 8)):
                    ln = 128 if rng.random() < 0.25 else rng.randint(0, 128)
                    ents.append((rng.getrandbits(32), rng.getrandbits(64) | 1,
                                 bytes(rng.getrandbits(8) for _ in range(ln))))
            meta = (len(want) + 1, 9, len(want))
            d.send.value = 1
            d.send_kind.value = kind
            d.send_count.value = len(ents)
            d.send_instance.value, d.send_epoch.value, d.send_seq.value = meta
            for e in ents:
                last_out = max(cycle + 2, last_out + 1)
                fifo.append((last_out, e))
            want.append((kind, meta, ents))
        if fifo and fifo[0][0] == cycle:
            _, (c, s, p) = fifo.pop(0)
            d.e_valid.value = 1
            d.e_client.value = c
            d.e_seq.value = s
            d.e_len.value = len(p)
            d.e_payload.value = int.from_bytes(p.ljust(128, b"\xa5"), "big")
    await nctb.cycles(dut.clock, 2)
    # (`send` is held to the falling edge here, so the monitor's `overrun` samples would see
    # the taken send against the latched command; that no send was dropped is the count.)
    for t in range(2):
        got = [f[2] for f in g.frames[t]]
        assert len(got) == n, (t, len(got))
        for k, (kind, (i, e, s), ents) in enumerate(want):
            exp = expected(t, kind, i, e, s, ents)
            assert got[k] == exp, (t, k, diff(got[k], exp))
    starts = [f[0] - p[1] for p, f in zip(g.frames[0], g.frames[0][1:])]
    assert 1 in starts, f"some frames back to back: {starts}"
