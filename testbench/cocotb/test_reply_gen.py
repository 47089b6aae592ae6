"""Bench of reply_gen alone: OK commands (`ok_*`, a batch's burst of consecutive cycles) and
NOT_LEADER commands (`nl_*`) in, one client reply frame per command out on the 64-bit `r_*`
stream. Every frame must be byte for byte the frame ncframes.py builds (`reply_ok` /
`reply_not_leader` in a UDP frame from the `src_mac`/`src_ip`/`src_port` inputs to the
command's `*_mac`/`*_ip`/`*_port`, TTL 16, UDP checksum 0, DF set as proto emits). Timing: first
beat one cycle after a command at an idle generator, frames back to back, an OK before a
NOT_LEADER of the same cycle, and a queue of 8 whose overflow is dropped and flagged."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import ncframes as nf
import nctb
from nodelib import GEN_SRC_IP, GEN_SRC_MAC, GEN_TTL

CLUSTER, SENDER = 0x0A0B0C0D, 2
SRC_PORT = nf.CLIENT_PORT
DEPTH, BEATS = 8, 10  # queue entries; beats of a 78-byte reply frame


def client_addr(i):
    return bytes([0x02, 0xC0, 0, 0, i >> 8, i & 0xFF]), 0x0A000200 + i, 40000 + i


def ok_cmd(i):
    """The i-th OK command: (client, seq, instance, index, mac, ip, port)."""
    mac, ip, port = client_addr(i)
    return ("ok", 0x1000 + i, 0x0102030405060700 + i, 0x1111222233330000 + i, i % 4, mac, ip,
            port)


def nl_cmd(i):
    """The i-th NOT_LEADER command: (client, seq, leader, epoch, mac, ip, port)."""
    mac, ip, port = client_addr(0x100 + i)
    return ("nl", 0x2000 + i, 0xA0B0C0D0E0F00000 + i, i % 3, 0x7000 + i, mac, ip, port)


def expected(cmd):
    if cmd[0] == "ok":
        _, client, seq, inst, index, mac, ip, port = cmd
        pkt = nf.reply_ok(CLUSTER, SENDER, client, index, seq, inst)
    else:
        _, client, seq, leader, epoch, mac, ip, port = cmd
        pkt = nf.reply_not_leader(CLUSTER, SENDER, client, leader, seq, epoch)
    return nf.udp_frame(pkt, dst_port=port, src_port=SRC_PORT, src_ip=GEN_SRC_IP, dst_ip=ip,
                        src_mac=GEN_SRC_MAC, dst_mac=mac, udp_csum=False, ttl=GEN_TTL,
                        frag=0x4000)


def diff(a, b):
    return [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y][:8], len(a), len(b)


class Reply:
    def __init__(self, dut):
        self.dut = dut
        for s in ("ok_valid", "ok_client", "ok_seq", "ok_instance", "ok_index", "ok_mac", "ok_ip",
                  "ok_port", "nl_valid", "nl_client", "nl_seq", "nl_leader", "nl_epoch",
                  "nl_mac", "nl_ip", "nl_port"):
            getattr(dut, s).value = 0
        dut.src_mac.value = int.from_bytes(GEN_SRC_MAC, "big")
        dut.src_ip.value = GEN_SRC_IP
        dut.src_port.value = SRC_PORT
        dut.cluster.value = CLUSTER
        dut.sender.value = SENDER
        dut.ttl.value = GEN_TTL
        dut.r_ready.value = 1
        self.cycle = 0
        self.out = nctb.StreamFrames(dut, "r")
        self.frames = self.out.frames  # (first cycle, last cycle, bytes)
        self.cmds = []       # (cycle, "ok"/"nl") of every command presented
        self.drops = []      # (cycle, drop_ok, drop_nl) of cycles with a drop
        self.idle_busy = []  # cycles where busy disagreed with "a frame streams or is queued"
        nctb.start_clock(dut.clock)
        cocotb.start_soon(self.watch())

    async def watch(self):
        d = self.dut
        while True:
            await RisingEdge(d.clock)
            self.cycle += 1
            await ReadOnly()
            if int(d.ok_valid.value):
                self.cmds.append((self.cycle, "ok"))
            if int(d.nl_valid.value):
                self.cmds.append((self.cycle, "nl"))
            if int(d.drop_ok.value) or int(d.drop_nl.value):
                self.drops.append((self.cycle, int(d.drop_ok.value), int(d.drop_nl.value)))
            if not int(d.r_valid.value):
                assert not self.out.inside, f"cycle {self.cycle}: idle beat inside a frame"
                continue
            assert int(d.busy.value), "busy while a frame streams"
            self.out.sample(self.cycle)

    async def settle(self):
        """Wait until nothing streams or waits (a previous test may have left frames queued)."""
        await nctb.cycles(self.dut.clock, 2)
        for _ in range(DEPTH * BEATS + 8):
            await ReadOnly()
            if not int(self.dut.busy.value):
                break
            await RisingEdge(self.dut.clock)
        else:
            raise AssertionError("reply_gen never idle")
        await RisingEdge(self.dut.clock)
        self.frames.clear()
        self.drops.clear()
        self.cmds.clear()

    async def cycle_of(self, ok=None, nl=None):
        """One cycle with an OK command and/or a NOT_LEADER command."""
        d = self.dut
        if ok is not None:
            _, client, seq, inst, index, mac, ip, port = ok
            d.ok_valid.value = 1
            d.ok_client.value = client
            d.ok_seq.value = seq
            d.ok_instance.value = inst
            d.ok_index.value = index
            d.ok_mac.value = int.from_bytes(mac, "big")
            d.ok_ip.value = ip
            d.ok_port.value = port
        if nl is not None:
            _, client, seq, leader, epoch, mac, ip, port = nl
            d.nl_valid.value = 1
            d.nl_client.value = client
            d.nl_seq.value = seq
            d.nl_leader.value = leader
            d.nl_epoch.value = epoch
            d.nl_mac.value = int.from_bytes(mac, "big")
            d.nl_ip.value = ip
            d.nl_port.value = port
        await RisingEdge(d.clock)
        # the command inputs return to 0: the queue must hold its own copy of the fields
        for s in ("ok_valid", "ok_client", "ok_seq", "ok_instance", "ok_index", "ok_mac",
                  "ok_ip", "ok_port", "nl_valid", "nl_client", "nl_seq", "nl_leader", "nl_epoch",
                  "nl_mac", "nl_ip", "nl_port"):
            getattr(d, s).value = 0

    def check_frames(self, want):
        got = [f[2] for f in self.frames]
        assert len(got) == len(want), (len(got), len(want))
        for k, (g, w) in enumerate(zip(got, want)):
            assert g == w, (k, diff(g, w))
        for k, (first, last, _) in enumerate(self.frames):
            assert last - first + 1 == BEATS, f"frame {k}: one beat per cycle"
            if k:
                assert first == self.frames[k - 1][1] + 1, f"frame {k} not back to back"


@cocotb.test()
async def ok_burst_and_not_leader_back_to_back(dut):
    """A batch's OKs on 4 consecutive cycles with a NOT_LEADER in the second of them, at an
    idle generator: first beat one cycle after the first command, then OK0, OK1, NL, OK2, OK3
    back to back, each byte for byte; then a lone NOT_LEADER and a lone OK at an idle
    generator, each with its first beat in the next cycle."""
    r = Reply(dut)
    await r.settle()
    oks = [ok_cmd(i) for i in range(4)]
    nl = nl_cmd(0)
    for i, ok in enumerate(oks):
        await r.cycle_of(ok=ok, nl=nl if i == 1 else None)
    await nctb.cycles(dut.clock, 5 * BEATS + 4)
    r.check_frames([expected(c) for c in (oks[0], oks[1], nl, oks[2], oks[3])])
    assert r.frames[0][0] == r.cmds[0][0] + 1, (r.frames[0], r.cmds[0])
    assert r.drops == [], r.drops
    await ReadOnly()
    assert not int(dut.busy.value), "busy after the last frame"
    await RisingEdge(dut.clock)

    for cmd in (nl_cmd(1), ok_cmd(9)):
        r.frames.clear()
        r.cmds.clear()
        if cmd[0] == "nl":
            await r.cycle_of(nl=cmd)
        else:
            await r.cycle_of(ok=cmd)
        await nctb.cycles(dut.clock, BEATS + 3)
        r.check_frames([expected(cmd)])
        assert r.frames[0][0] == r.cmds[0][0] + 1
    assert r.drops == [], r.drops


def model(schedule):
    """The queue rules (rtl/src/reply_gen.rs): the head streams 10 beats from the cycle after it
    is queued at an idle generator; a frame's last beat frees its entry in that same cycle; an
    OK is taken before a NOT_LEADER of its cycle while there is space. `schedule`: per cycle,
    (ok or None, nl or None). Returns the taken commands in order and per cycle (drop_ok,
    drop_nl)."""
    count, beat, taken, drops = 0, 0, [], []
    for ok, nl in schedule:
        last = count > 0 and beat == BEATS - 1
        space = DEPTH - count + (1 if last else 0)
        d = [0, 0]
        for k, cmd in enumerate((ok, nl)):
            if cmd is None:
                continue
            if space:
                taken.append(cmd)
                space -= 1
            else:
                d[k] = 1
        drops.append(tuple(d))
        if count:
            beat = 0 if last else beat + 1
        count = DEPTH - space
    return taken, drops


@cocotb.test()
async def queue_full_drops_exactly_the_commands_that_do_not_fit(dut):
    """OK + NOT_LEADER every cycle fills the 8-entry queue in 4 cycles; then a cycle with one
    free slot takes the OK and drops the NOT_LEADER, a lone OK and a lone NOT_LEADER are
    dropped, and a command in the cycle of a frame's last beat takes the entry it frees.
    drop_ok / drop_nl are high exactly for the dropped commands; the queued frames come out
    intact and in order, back to back."""
    r = Reply(dut)
    await r.settle()
    n_ok, n_nl = iter(range(100)), iter(range(100))
    schedule = [(ok_cmd(next(n_ok)), nl_cmd(next(n_nl))) for _ in range(3)]   # 6 queued
    schedule.append((ok_cmd(next(n_ok)), None))                               # 7
    schedule.append((ok_cmd(next(n_ok)), nl_cmd(next(n_nl))))                 # OK fits, NL not
    schedule.append((ok_cmd(next(n_ok)), None))                               # dropped
    schedule.append((None, nl_cmd(next(n_nl))))                               # dropped
    schedule += [(None, None)] * 2                                            # cycles 7, 8
    schedule.append((ok_cmd(next(n_ok)), nl_cmd(next(n_nl))))  # cycle 9: none free
    schedule.append((ok_cmd(next(n_ok)), nl_cmd(next(n_nl))))  # cycle 10: frame 0's last beat
    taken, drops = model(schedule)
    # the plan by hand, so that the model cannot agree with the RTL by accident
    assert drops == [(0, 0)] * 4 + [(0, 1), (1, 0), (0, 1), (0, 0), (0, 0), (1, 1), (0, 1)], drops
    assert len(taken) == 9
    for ok, nl in schedule:
        await r.cycle_of(ok=ok, nl=nl)
    s = r.cmds[0][0]
    await nctb.cycles(dut.clock, (DEPTH + 2) * BEATS + 4)
    want_drops = [(s + c, d[0], d[1]) for c, d in enumerate(drops) if d != (0, 0)]
    assert r.drops == want_drops, (r.drops, want_drops)
    r.check_frames([expected(c) for c in taken])
    assert r.frames[0][0] == s + 1 and r.frames[0][1] == s + BEATS
    # the queue works again after the overflow
    r.frames.clear()
    r.cmds.clear()
    r.drops.clear()
    await r.cycle_of(ok=ok_cmd(50), nl=nl_cmd(50))
    await nctb.cycles(dut.clock, 2 * BEATS + 3)
    r.check_frames([expected(ok_cmd(50)), expected(nl_cmd(50))])
    assert r.frames[0][0] == r.cmds[0][0] + 1
    assert r.drops == [], r.drops
