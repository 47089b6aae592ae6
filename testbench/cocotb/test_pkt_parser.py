"""Bench of pkt_parser alone: frames built in Python (ncframes.py) streamed on the 64-bit bus."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import ncframes as nf
import nctb
from badframes import bad_frames

CLUSTER = 9
NODE_COUNT = 7  # a DECIDE must come from epoch mod NODE_COUNT

# The `rec` output: `pkt_parser::Record`'s fields in order from bit 0, with their widths.
RECORD = [("verdict", 3), ("sender", 8), ("epoch", 32), ("seq", 32), ("tree", 8),
          ("decide_kind", 2), ("decide_instance", 64), ("client", 32), ("req_seq", 64),
          ("req_len", 16), ("req_payload", 64), ("frame_len", 16), ("eth_src", 48),
          ("eth_dst", 48), ("ip_src", 32), ("udp_src", 16)]


def record(rec):
    """`rec`'s value as {field: int}; its width must be the fields' (a changed Record fails)."""
    assert len(rec) == sum(w for _, w in RECORD), (len(rec), "pkt_parser::Record changed")
    v, out = int(rec.value), {}
    for name, w in RECORD:
        out[name] = v & ((1 << w) - 1)
        v >>= w
    return out


def worked_example_matches_readme():
    # proto/README.md, "Worked example: a heartbeat DECIDE" (cluster 0xAABBCCDD, sender 3,
    # instance 7, epoch 2, msg_seq 9, tree 1): our builder must give exactly those 36 bytes.
    want = bytes.fromhex("4e4301 02aabbccdd 0018 03 00"
                         "0000000000000007 00000002"
                         "00000009 01 00 0000 00000000".replace(" ", ""))
    got = nf.decide(0xAABBCCDD, 3, 7, 2, 9, 1, nf.HEARTBEAT)
    assert got == want, (got.hex(), want.hex())


class Parser:
    def __init__(self, dut):
        self.dut = dut
        dut.s_valid.value = 0
        dut.s_last.value = 0
        dut.s_keep.value = 0
        dut.s_data.value = 0
        dut.cluster_id.value = CLUSTER
        dut.sender_tab.value = nf.sender_table(NODE_COUNT)
        dut.client_mode.value = 0
        dut.port.value = nf.DECIDE_PORT
        self.results = []
        nctb.start_clock(dut.clock)
        cocotb.start_soon(self.watch())

    async def watch(self):
        d = self.dut
        while True:
            await RisingEdge(d.clock)
            await ReadOnly()
            assert int(d.s_ready.value) == 1, "the parser never stalls"
            if int(d.valid.value):
                self.results.append(record(d.rec))

    async def send(self, frames, gap=1):
        """Stream frames back to back (`gap` idle cycles between them)."""
        d = self.dut
        for f in frames:
            for data, keep, last in nf.beats(f):
                await RisingEdge(d.clock)
                d.s_data.value = data
                d.s_keep.value = keep
                d.s_valid.value = 1
                d.s_last.value = int(last)
            for _ in range(gap):
                await RisingEdge(d.clock)
                d.s_valid.value = 0
                d.s_last.value = 0
        await RisingEdge(d.clock)
        d.s_valid.value = 0
        d.s_last.value = 0
        await nctb.cycles(d.clock, 3)


@cocotb.test()
async def valid_decide_and_request_fields(dut):
    worked_example_matches_readme()
    p = Parser(dut)
    ents = [nf.entry(0x01020304, 0x1122334455667788, b"ab"), nf.entry(5, 6, b"")]
    sender = 0xA0B0C0D0 % NODE_COUNT  # the epoch's leader
    pkt = nf.decide(CLUSTER, sender, 0x0102030405060708, 0xA0B0C0D0, 0x11223344, 1, nf.BATCH, ents)
    f = nf.udp_frame(pkt, src_ip=0x0A000203, src_port=40123, dst_ip=0xEF4E4302,
                     src_mac=bytes.fromhex("020000000007"))
    await p.send([f])
    r = p.results[-1]
    assert r["verdict"] == nf.EXPECTED, r
    assert (r["sender"], r["epoch"], r["seq"], r["tree"], r["decide_kind"], r["decide_instance"]) == \
        (sender, 0xA0B0C0D0, 0x11223344, 1, nf.BATCH, 0x0102030405060708), r
    assert (r["ip_src"], r["udp_src"], r["eth_src"], r["frame_len"]) == \
        (0x0A000203, 40123, 0x020000000007, len(f)), r
    # REQUEST on the client port
    dut.client_mode.value = 1
    dut.port.value = nf.CLIENT_PORT
    req = nf.udp_frame(nf.request(CLUSTER, 0xCAFEF00D, 0x0102030405060708, b"hello"),
                       dst_port=nf.CLIENT_PORT, dst_ip=0x0A000001)
    await p.send([req])
    r = p.results[-1]
    assert r["verdict"] == nf.EXPECTED, r
    assert (r["client"], r["req_seq"], r["req_len"]) == (0xCAFEF00D, 0x0102030405060708, 5), r
    assert r["req_payload"] >> 24 == int.from_bytes(b"hello", "big"), hex(r["req_payload"])
    # UDP checksum 0 means "none": accepted; Ethernet padding after the IPv4 length: ignored
    await p.send([nf.udp_frame(nf.request(CLUSTER, 1, 1, b"x"), dst_port=nf.CLIENT_PORT,
                               udp_csum=False),
                  nf.udp_frame(nf.request(CLUSTER, 1, 2, b"x"), dst_port=nf.CLIENT_PORT) + bytes(5)])
    assert [r["verdict"] for r in p.results[-2:]] == [nf.EXPECTED, nf.EXPECTED]
    assert p.results[-1]["req_seq"] == 2


@cocotb.test()
async def back_to_back_frames_each_get_one_verdict(dut):
    p = Parser(dut)
    frames = [nf.udp_frame(nf.decide(CLUSTER, 0, i + 1, 0, i, i % 2, nf.HEARTBEAT),
                           dst_ip=0xEF4E4301 + i % 2) for i in range(6)]
    frames[3] = frames[3][:30]  # a truncated one in the middle (IPv4 header cut)
    await p.send(frames, gap=0)
    v = [r["verdict"] for r in p.results]
    assert v == [nf.EXPECTED] * 3 + [nf.MALFORMED] + [nf.EXPECTED] * 2, v
    assert [r["seq"] for r in p.results if r["verdict"] == nf.EXPECTED] == [0, 1, 2, 4, 5]


@cocotb.test()
async def every_bad_frame_class_gets_its_verdict(dut):
    p = Parser(dut)
    for name, frame, client, cls in bad_frames():
        dut.client_mode.value = int(client)
        dut.port.value = nf.CLIENT_PORT if client else nf.DECIDE_PORT
        await p.send([frame])
        got = p.results[-1]["verdict"]
        assert got == cls, f"{name}: verdict {got}, expected {cls}"
    assert len(p.results) == len(bad_frames())


@cocotb.test()
async def a_decide_is_heard_only_from_the_leader_of_its_epoch(dut):
    """Issue 18: epoch mod node_count (the sender table's nibble residues, `sender_tab`) on several
    node counts and epochs at the edges, in the shortest DECIDE frames (78 bytes), back to back:
    the epoch's leader gets EXPECTED, any other sender UNAUTHORIZED."""
    p = Parser(dut)
    for n in (1, 2, 3, 5, 7, 13, 31, 63, 64):
        dut.sender_tab.value = nf.sender_table(n)
        await nctb.cycles(dut.clock, 2)
        frames, want = [], []
        for i, epoch in enumerate((0, 1, n - 1, n, 1 << 31, (1 << 32) - 1, 0x12345678, 0xDEADBEEF)):
            lead = epoch % n
            for sender in (lead, (lead + 1 + i) % n if n > 1 else 1 + i):
                frames.append(nf.udp_frame(nf.decide(CLUSTER, sender, 5, epoch, 1, 0, nf.HEARTBEAT)))
                want.append(nf.EXPECTED if sender == lead else nf.UNAUTHORIZED)
        first = len(p.results)
        await p.send(frames, gap=0)
        got = [r["verdict"] for r in p.results[first:]]
        assert got == want, (n, got, want)


@cocotb.test()
async def single_byte_corruption_of_checked_bytes_is_never_expected(dut):
    """Flip one byte anywhere in the IPv4 header or the UDP payload without fixing checksums:
    the checksums (IPv4 header / UDP) must catch every one."""
    p = Parser(dut)
    good = nf.udp_frame(nf.decide(CLUSTER, 0, 1, 0, 1, 0, nf.BATCH, [nf.entry(5, 1, b"v")]))
    frames = []
    for off in list(range(14, 34)) + list(range(42, len(good), 3)):
        f = bytearray(good)
        f[off] ^= 0x5A
        frames.append(bytes(f))
    await p.send(frames)
    bad = [i for i, r in enumerate(p.results) if r["verdict"] == nf.EXPECTED]
    assert len(p.results) == len(frames) and not bad, bad
