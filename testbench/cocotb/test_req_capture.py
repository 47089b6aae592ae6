"""Bench of req_capture alone (issue 17): request frames built in Python (ncframes.py) streamed
on the 64-bit bus; in the cycle after each frame's last beat (when pkt_parser gives its verdict)
`payload` must be the request's first 128 payload bytes, zeros past a shorter one."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import ncframes as nf
import nctb

KEPT = 128


class Capture:
    def __init__(self, dut):
        self.dut = dut
        dut.s_valid.value = 0
        dut.s_last.value = 0
        dut.s_data.value = 0
        self.got = []
        nctb.start_clock(dut.clock)
        cocotb.start_soon(self.watch())

    async def watch(self):
        d = self.dut
        after_last = False
        while True:
            await RisingEdge(d.clock)
            await ReadOnly()
            if after_last:
                self.got.append(int(d.payload.value))
            after_last = bool(int(d.s_valid.value)) and bool(int(d.s_last.value))

    async def send(self, frames, gap):
        d = self.dut
        for f in frames:
            for data, _keep, last in nf.beats(f):
                await RisingEdge(d.clock)
                d.s_data.value = data
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


def want(payload):
    return int.from_bytes(payload[:KEPT].ljust(KEPT, b"\0"), "big")


@cocotb.test()
async def first_128_payload_bytes_of_each_request(dut):
    assert len(dut.payload) == 8 * KEPT
    c = Capture(dut)
    payloads = [bytes((13 * k + n) & 0xFF for k in range(n))
                for n in (0, 5, 100, 128, 150, 8, 127, 129, 64)]
    frames = [nf.udp_frame(nf.request(9, 1 + i, 1 + i, p), dst_port=nf.CLIENT_PORT)
              for i, p in enumerate(payloads)]
    frames[2] += bytes(7)  # Ethernet padding after the datagram: not payload
    for gap in (0, 1):  # back to back, then one idle cycle between frames
        c.got.clear()
        await c.send(frames, gap)
        assert len(c.got) == len(frames), c.got
        for n, (g, p) in enumerate(zip(c.got, payloads)):
            assert g == want(p), (gap, n, len(p), hex(g))
