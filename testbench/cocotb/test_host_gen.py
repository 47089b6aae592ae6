"""Bench of host_gen alone: DECIDE copies streamed on the four tree inputs (follower decisions
at `rx_deliver`) and the leader's DECIDE frames streamed on `l_*` (`lead_load` and `lead_ulen` in
the first beat, as pkt_gen's tree 0 gives them) in, one host-path frame per decision out
on the 64-bit `h_*` stream. Every host frame must be byte for byte the frame ncframes.py builds:
the decided copy's UDP payload from the `src_mac`/`src_ip`/`src_port` inputs to
`host_mac`/`host_ip`/`host_port`, TTL 16, UDP checksum 0, DF set as proto emits (nodelib's
`host_copy` with the bench's configuration). Timing: first beat in the cycle after the strobe,
one pending slot, `drop` when the stream and the slot are both taken."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import ncframes as nf
import nctb
from nodelib import (GEN_SRC_IP, GEN_SRC_MAC, GEN_TTL, HOST_IP, HOST_MAC, HOST_PORT,
                     generated_decide, host_copy, tree_frame)

CLUSTER, SENDER = 0x0A0B0C0D, 1
MAX_FRAME = 2048  # one capture buffer: 256 beats
# The registers' reset values (those nodelib.host_copy assumes) ...
DEFAULT_CFG = dict(src_mac=GEN_SRC_MAC, src_ip=GEN_SRC_IP, src_port=nf.DECIDE_PORT,
                   host_mac=HOST_MAC, host_ip=HOST_IP, host_port=HOST_PORT, ttl=GEN_TTL)
# ... and other addresses and TTL: every header field must follow the config inputs.
OTHER_CFG = dict(src_mac=bytes([0x02, 0x11, 0x22, 0x33, 0x44, 0x55]), src_ip=0xC0A80703,
                 src_port=0x9C41, host_mac=bytes([0x06, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE]),
                 host_ip=0xAC10FE09, host_port=0x2329, ttl=201)


def host_frame(copy, cfg):
    """The host frame for a decided copy (a whole frame, maybe padded) under config `cfg`."""
    udp_len = int.from_bytes(copy[38:40], "big")
    payload = copy[nf.PAYLOAD_OFFSET:34 + udp_len]
    return nf.udp_frame(payload, dst_port=cfg["host_port"], src_port=cfg["src_port"],
                        src_ip=cfg["src_ip"], dst_ip=cfg["host_ip"], src_mac=cfg["src_mac"],
                        dst_mac=cfg["host_mac"], udp_csum=False, ttl=cfg["ttl"], frag=0x4000)


def copy_frame(tree, instance, seq, kind=nf.BATCH, entries=(), sender=SENDER):
    ents = [nf.entry(c, s, p) for c, s, p in entries]
    return tree_frame(nf.decide(CLUSTER, sender, instance, 5, seq, tree, kind, ents), tree, sender)


def diff(a, b):
    return [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y][:8], len(a), len(b)


class Host:
    def __init__(self, dut, cfg):
        self.dut = dut
        self.cfg = cfg
        for t in range(4):
            for s in ("data", "keep", "valid", "last"):
                getattr(dut, f"t{t}_{s}").value = 0
        for s in ("data", "keep", "valid", "last"):
            getattr(dut, f"l_{s}").value = 0
        dut.rx_deliver.value = 0
        dut.rx_port.value = 0
        dut.lead_load.value = 0
        dut.lead_ulen.value = 0
        dut.src_mac.value = int.from_bytes(cfg["src_mac"], "big")
        dut.src_ip.value = cfg["src_ip"]
        dut.src_port.value = cfg["src_port"]
        dut.host_mac.value = int.from_bytes(cfg["host_mac"], "big")
        dut.host_ip.value = cfg["host_ip"]
        dut.host_port.value = cfg["host_port"]
        dut.ttl.value = cfg["ttl"]
        dut.room.value = 1  # no output FIFO in front of the host stream's receiver
        self.cycle = 0
        self.out = nctb.StreamFrames(dut, "h")
        self.frames = self.out.frames  # (first cycle, last cycle, bytes)
        self.drops = []        # cycles with drop
        self.delivers = []     # cycles with rx_deliver (port)
        self.loads = []        # cycles with lead_load
        self.last_beats = [[] for _ in range(4)]  # per tree: cycles of a copy's last beat
        self.busy = set()
        nctb.start_clock(dut.clock)
        cocotb.start_soon(self.watch())

    async def watch(self):
        d = self.dut
        while True:
            await RisingEdge(d.clock)
            self.cycle += 1
            await ReadOnly()
            if int(d.drop.value):
                self.drops.append(self.cycle)
            if int(d.rx_deliver.value):
                self.delivers.append((self.cycle, int(d.rx_port.value)))
            if int(d.lead_load.value):
                self.loads.append(self.cycle)
            for t in range(4):
                if int(getattr(d, f"t{t}_valid").value) and int(getattr(d, f"t{t}_last").value):
                    self.last_beats[t].append(self.cycle)
            if not int(d.h_valid.value):
                continue
            assert int(d.busy.value), "busy while a frame streams"
            self.out.sample(self.cycle)

    async def settle(self):
        """The config's part of the IPv4 checksum follows the inputs 2 cycles later, and a
        previous test may have left a frame streaming: wait until idle."""
        await nctb.cycles(self.dut.clock, 4)
        for _ in range(64):
            await ReadOnly()
            if not int(self.dut.busy.value) and not int(self.dut.h_valid.value):
                break
            await RisingEdge(self.dut.clock)
        else:
            raise AssertionError("host_gen never idle")
        await RisingEdge(self.dut.clock)
        self.frames.clear()
        self.drops.clear()

    async def stream(self, tree, frame):
        """One beat per cycle on tree `tree`; returns at the start of the second cycle after the
        last beat (inputs idle since the first): a strobe now is 2 cycles after the last beat."""
        assert tree not in self.busy
        self.busy.add(tree)
        d = self.dut
        for data, keep, last in nf.beats(frame):
            getattr(d, f"t{tree}_data").value = data
            getattr(d, f"t{tree}_keep").value = keep
            getattr(d, f"t{tree}_valid").value = 1
            getattr(d, f"t{tree}_last").value = int(last)
            await RisingEdge(d.clock)
        for s in ("data", "keep", "valid", "last"):
            getattr(d, f"t{tree}_{s}").value = 0
        self.busy.discard(tree)
        await RisingEdge(d.clock)

    async def lead_stream(self, frame):
        """The leader's frame on l_*, one beat per cycle from now, lead_load and lead_ulen (the
        UDP length: frame length - 34) in its first beat (as nc_engine wires pkt_gen's h_load /
        h_ulen / m0_*)."""
        d = self.dut
        for i, (data, keep, last) in enumerate(nf.beats(frame)):
            d.l_data.value = data
            d.l_keep.value = keep
            d.l_valid.value = 1
            d.l_last.value = int(last)
            d.lead_load.value = int(i == 0)
            d.lead_ulen.value = len(frame) - 34
            await RisingEdge(d.clock)
            d.lead_load.value = 0
        for s in ("data", "keep", "valid", "last"):
            getattr(d, f"l_{s}").value = 0

    async def strobe(self, deliver=None, lead=None):
        """One cycle with rx_deliver (rx_port = `deliver`) and/or lead_load (`lead` = a frame,
        which then streams on l_* in the background)."""
        d = self.dut
        if deliver is not None:
            d.rx_deliver.value = 1
            d.rx_port.value = deliver
        if lead is not None:
            assert len(lead) <= MAX_FRAME
            cocotb.start_soon(self.lead_stream(lead))
        await RisingEdge(d.clock)
        d.rx_deliver.value = 0
        d.rx_port.value = 0


@cocotb.test()
async def follower_copy_on_every_tree_and_padded_copy(dut):
    """A copy streamed on tree p, rx_deliver 2 cycles after its last beat: the host frame starts
    in the cycle after the strobe (3 after the last copy beat). Copies on the other trees at the
    same time are not taken; a padded copy gives the unpadded payload."""
    h = Host(dut, DEFAULT_CFG)
    await h.settle()
    ents = [(0x11223344, 0x0102030405060708, b"abc"), (5, 6, b""), (7, 8, b"12345678")]
    want = []
    for p in range(4):
        copies = [copy_frame(t, 100 + p, 10 * p + t, nf.BATCH, ents[:1 + (t + p) % 3])
                  for t in range(4)]
        others = [cocotb.start_soon(h.stream(t, copies[t])) for t in range(4) if t != p]
        await h.stream(p, copies[p])       # returns 2 cycles after the last beat: rx_deliver now
        await h.strobe(deliver=p)
        for o in others:
            await o
        await nctb.cycles(dut.clock, 24)  # the longest copy here: 18 beats
        assert host_frame(copies[p], DEFAULT_CFG) == host_copy(copies[p])  # nodelib agrees
        want.append(host_copy(copies[p]))
        (dc, port) = h.delivers[-1]
        assert port == p and h.last_beats[p][-1] == dc - 2
        first, last, got = h.frames[-1]
        assert first == dc + 1, f"tree {p}: first beat {first}, strobe {dc}"
        assert last - first + 1 == (len(got) + 7) // 8, "one beat per cycle"
    # a padded copy on tree 2: a heartbeat with 20 junk bytes after the datagram, which are
    # captured but not forwarded (the length comes from the UDP header)
    hb = copy_frame(2, 200, 77, nf.HEARTBEAT)
    padded = hb + bytes(range(0xA0, 0xA0 + 20))
    await h.stream(2, padded)
    await h.strobe(deliver=2)
    await nctb.cycles(dut.clock, 16)
    want.append(host_copy(hb))
    assert h.frames[-1][0] == h.delivers[-1][0] + 1
    got = [f[2] for f in h.frames]
    assert len(got) == len(want), (len(got), len(want))
    for k, (g, w) in enumerate(zip(got, want)):
        assert g == w, (k, diff(g, w))
    assert h.drops == []


@cocotb.test()
async def leader_frames_and_other_config(dut):
    """lead_load in the first beat of pkt_gen's tree-0 frame: the host frame (payload = bytes
    42..34 + lead_ulen) starts in the next cycle (streamed live, one cycle behind); every header field
    follows the config inputs. Issue 17: entries of up to 128 payload bytes (a 1,230-byte frame
    of 8 x 128, the largest pkt_gen builds, past the 1,024 bytes of the buffers before 8 slots)."""
    h = Host(dut, OTHER_CFG)
    await h.settle()
    ents = [(0xCAFE0001, 0x1111, b"hello"), (0xCAFE0002, 0x2222, b"x"),
            (0xCAFE0003, 0x3333, b""), (0xCAFE0004, 0x4444, b"87654321")]
    big = [(0xBEEF0000 + i, i, bytes((i * 31 + j) & 0xFF for j in range(128))) for i in range(8)]
    imgs = [generated_decide(CLUSTER, SENDER, 0, nf.BATCH, 41, 3, 9, ents),
            generated_decide(CLUSTER, SENDER, 0, nf.HEARTBEAT, 42, 3, 10),
            generated_decide(CLUSTER, SENDER, 0, nf.BATCH, 43, 3, 11, big)]
    assert len(imgs[2]) == 1230
    for img in imgs:
        await h.strobe(lead=img)
        await nctb.cycles(dut.clock, 170)
        first, last, got = h.frames[-1]
        assert first == h.loads[-1] + 1, f"first beat {first}, lead_load {h.loads[-1]}"
        assert got == host_frame(img, OTHER_CFG), diff(got, host_frame(img, OTHER_CFG))
        assert got[6:12] == OTHER_CFG["src_mac"] and got[0:6] == OTHER_CFG["host_mac"]
    # follower copies under the same config, one of them of 8 128-byte entries
    for c in (copy_frame(3, 43, 11, nf.BATCH, ents[:2]), copy_frame(0, 44, 12, nf.BATCH, big)):
        await h.stream(3, c)
        await h.strobe(deliver=3)
        await nctb.cycles(dut.clock, 170)
        assert h.frames[-1][0] == h.delivers[-1][0] + 1
        assert h.frames[-1][2] == host_frame(c, OTHER_CFG), \
            diff(h.frames[-1][2], host_frame(c, OTHER_CFG))
    assert len(h.frames) == 5 and h.drops == []


@cocotb.test()
async def pending_slot_and_drop(dut):
    """A decision while a frame streams waits in the pending slot and starts in the cycle after
    that frame's last beat; one while the stream and the slot are both taken is dropped (`drop`
    in its strobe cycle, no frame for it). Leader and follower in one cycle: leader first."""
    h = Host(dut, DEFAULT_CFG)
    await h.settle()
    a = generated_decide(CLUSTER, SENDER, 0, nf.BATCH, 60, 4, 1, [(1, 2, b"aaaaaaaa")] * 3)
    b = copy_frame(1, 61, 2, nf.BATCH, [(3, 4, b"bb")])
    c = generated_decide(CLUSTER, SENDER, 0, nf.HEARTBEAT, 62, 4, 3)
    e = copy_frame(3, 63, 4, nf.BATCH, [(5, 6, b"e")])
    await h.stream(3, e)                      # e is tree 3's completed copy from now on
    await h.stream(1, b)                      # b is tree 1's completed copy from now on
    await h.strobe(lead=a)                    # cycle s: a streams from s + 1
    await RisingEdge(dut.clock)
    await h.strobe(deliver=1)                 # s + 2: b → pending slot
    await RisingEdge(dut.clock)
    await h.strobe(deliver=3)                 # s + 4: stream and slot taken → dropped
    await nctb.cycles(dut.clock, 40)
    s = h.loads[0]
    assert [x[0] for x in h.delivers[-2:]] == [s + 2, s + 4]
    assert h.drops == [s + 4], (h.drops, s)
    assert [f[2] for f in h.frames] == [host_copy(a), host_copy(b)], \
        [diff(x, y) for x, y in zip([f[2] for f in h.frames], [host_copy(a), host_copy(b)])]
    (fa, la, _), (fb, _, _) = h.frames
    assert fa == s + 1 and fb == la + 1, f"pending frame back to back ({la} → {fb})"

    # leader and follower in one cycle: the leader's streams, the follower's waits in the slot
    # and follows back to back; a third decision meanwhile is dropped
    h.frames.clear()
    h.drops.clear()
    d2 = copy_frame(2, 70, 5, nf.BATCH, [(9, 9, b"zz")])
    await h.stream(2, d2)
    await h.strobe(deliver=2, lead=c)         # cycle s2
    s2 = h.loads[-1]
    await nctb.cycles(dut.clock, 3)
    await h.strobe(deliver=3)                 # dropped
    await nctb.cycles(dut.clock, 40)
    assert h.delivers[-2][0] == s2
    assert h.drops == [h.delivers[-1][0]] and h.delivers[-1][0] > s2
    assert [f[2] for f in h.frames] == [host_copy(c), host_copy(d2)]
    (f0, l0, _), (f1, _, _) = h.frames
    assert f0 == s2 + 1 and f1 == l0 + 1
