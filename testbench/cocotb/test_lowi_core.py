"""Bench of lowi_core alone (the LOWI engine): its rsbcast_rx, FIFO and CSR neighbours are
played by the bench (rx_outcome, rx_expired, fifo_len driven directly)."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import ncframes as nf
import nctb

LOOP, TIMEOUT = 30, 60
DELIVER = 3  # rsbcast_rx outcome
EVENT_INPUTS = ("ctrl_write", "rx_valid", "cl_valid", "rx_expired")


class Core:
    def __init__(self, dut, node_id, **cfg):
        self.dut = dut
        base = dict(node_id=node_id, node_count=3, trees=2, loop_period=LOOP, timeout=TIMEOUT,
                    batch_max=4, fifo_depth=8, mtu=1500)
        base.update(cfg)
        for k, v in base.items():
            getattr(dut, k).value = v
        for s in ("ctrl_write", "ctrl_value", "rx_valid", "rx_port", "rx_class", "rx_sender",
                  "rx_epoch", "rx_tree", "rx_kind", "rx_instance", "cl_valid", "cl_class",
                  "cl_len", "rx_expired", "rx_missing", "rx_busy", "rx_outcome",
                  "rx_outcome_fresh", "fifo_len", "fifo_nz", "fifo_room", "fifo_room_b", "tx_hold", "min_gap", "rx_seq",
                  "timeout_written"):
            getattr(dut, s).value = 0
        self.depth, self.bmax = base["fifo_depth"], base["batch_max"]
        self.fifo(0)
        self.cycle = 0
        self.log = []  # per cycle: dict of the interesting outputs when any strobe is high
        nctb.start_clock(dut.clock)
        cocotb.start_soon(self.watch())

    async def watch(self):
        d = self.dut
        strobes = ("send", "lead_deliver", "rx_deliver", "tick_leader_changed", "tick_fault",
                   "rx_fault", "fifo_push", "nl_reply", "ev_oversize")
        while True:
            await RisingEdge(d.clock)
            self.cycle += 1
            await ReadOnly()
            hit = {s: int(getattr(d, s).value) for s in strobes}
            if any(hit.values()) or int(d.ev_dropped.value):
                hit.update(cycle=self.cycle, kind=int(d.send_kind.value),
                           count=int(d.send_count.value), instance=int(d.send_instance.value),
                           epoch=int(d.send_epoch.value), seq=int(d.send_seq.value),
                           reserve=int(d.send_count.value) if int(d.fifo_take_now.value) else 0,
                           leader=int(d.tick_leader.value),
                           fault_code=int(d.tick_fault_code.value),
                           dropped=int(d.ev_dropped.value))
                self.log.append(hit)

    def fifo(self, n):
        """The FIFO's length as egress_fifo shows it: `fifo_len` and its registered `nz`,
        `room` (below fifo_depth) and `room_b` (below fifo_depth + batch_max)."""
        self.dut.fifo_len.value = n
        self.dut.fifo_nz.value = int(n != 0)
        self.dut.fifo_room.value = int(n < self.depth)
        self.dut.fifo_room_b.value = int(n < self.depth + self.bmax)

    def events(self, name):
        return [e for e in self.log if e[name]]

    async def step(self, **inputs):
        """Hold `inputs` for one cycle (event inputs drop back to 0 afterwards); returns the
        cycle in which the core acts on them: a copy or a request (registered) one cycle later,
        a CTRL write (registered in csr) and the tick inputs in that cycle. Returns after it."""
        d = self.dut
        await RisingEdge(d.clock)
        for k, v in inputs.items():
            getattr(d, k).value = v
        await ReadOnly()
        cyc = self.cycle  # the cycle that sees the inputs
        await RisingEdge(d.clock)
        for k in inputs:
            if k in EVENT_INPUTS:
                getattr(d, k).value = 0
        if "rx_valid" in inputs or "cl_valid" in inputs:
            await RisingEdge(d.clock)
            return cyc + 1
        return cyc

    async def enable(self):
        await self.step(ctrl_write=1, ctrl_value=0)  # whatever the previous test left
        await self.step(ctrl_write=1, ctrl_value=nctb.ENABLE)

    async def copy(self, epoch, kind, instance, tree=0, outcome=DELIVER, sender=0):
        return await self.step(rx_valid=1, rx_port=tree, rx_tree=tree, rx_class=nf.EXPECTED,
                               rx_sender=sender, rx_epoch=epoch, rx_kind=kind,
                               rx_instance=instance, rx_outcome=outcome, rx_outcome_fresh=outcome)

    async def value(self, name):
        await ReadOnly()
        return int(getattr(self.dut, name).value)


@cocotb.test()
async def leader_loop_heartbeats_batches_and_instances(dut):
    c = Core(dut, 0)
    await c.enable()
    t0 = await c.step(ctrl_write=1, ctrl_value=nctb.ENABLE | nctb.START_BIT)
    await nctb.cycles(dut.clock, 3 * LOOP)
    c.fifo(6)  # six queued requests: batch_max 4 per send
    await nctb.cycles(dut.clock, 2 * LOOP)
    c.fifo(0)
    await nctb.cycles(dut.clock, 2 * LOOP)
    s = c.events("send")
    assert s[0]["cycle"] == t0 and s[0]["kind"] == nf.START and s[0]["instance"] == 1
    assert all(b["cycle"] - a["cycle"] == LOOP for a, b in zip(s, s[1:])), [e["cycle"] for e in s]
    assert [e["seq"] for e in s] == list(range(len(s)))
    kinds = [(e["kind"], e["instance"], e["count"], e["reserve"]) for e in s[1:]]
    hb, batch = nf.HEARTBEAT, nf.BATCH
    assert kinds[:3] == [(hb, 1, 0, 0)] * 3, kinds
    assert kinds[3:5] == [(batch, 1, 4, 4), (batch, 2, 4, 4)], kinds
    assert kinds[5:] == [(hb, 3, 0, 0)] * len(kinds[5:]), kinds
    assert [e["cycle"] for e in c.events("lead_deliver")] == [s[4]["cycle"], s[5]["cycle"]]
    assert await c.value("last_instance") == 2
    assert await c.value("status") == nctb.ST_LEADER | nctb.ST_ACTIVE


@cocotb.test()
async def n_minus_1_timeouts_then_this_node_leads(dut):
    c = Core(dut, 2)
    await c.enable()
    t = await c.copy(0, nf.START, 1)
    assert await c.value("state") == nctb.ACTIVE
    await nctb.cycles(dut.clock, 2 * TIMEOUT + 5)
    ch = c.events("tick_leader_changed")
    assert [(e["cycle"] - t, e["epoch"], e["leader"]) for e in ch] == \
        [(TIMEOUT, 1, 1), (2 * TIMEOUT, 2, 2)], ch
    s = c.events("send")
    assert s and s[0]["cycle"] == t + 2 * TIMEOUT, "the new leader sends at once"
    assert (s[0]["kind"], s[0]["epoch"], s[0]["seq"], s[0]["instance"]) == (nf.HEARTBEAT, 2, 0, 1)
    assert await c.value("leader") == 2


@cocotb.test()
async def window_expiry_is_net_fault_then_nothing(dut):
    c = Core(dut, 1)
    await c.enable()
    await c.copy(0, nf.START, 1)
    await c.copy(0, nf.BATCH, 1)
    assert len(c.events("rx_deliver")) == 1
    await c.step(rx_expired=1, rx_missing=0b10)
    f = c.events("tick_fault")
    assert len(f) == 1 and f[0]["fault_code"] == 1  # MISSING_COPY
    assert await c.value("state") == nctb.FAULTED
    assert await c.value("status") & nctb.ST_NET_FAULT
    await c.copy(0, nf.BATCH, 2)
    await nctb.cycles(dut.clock, 3 * TIMEOUT)
    assert len(c.events("rx_deliver")) == 1, "no DELIVER after NET-FAULT"
    assert c.events("tick_leader_changed") == [] and c.events("send") == []
    await c.enable()  # re-enable: armed again, the fault is gone
    assert await c.value("status") == nctb.ST_ARMED


@cocotb.test()
async def requests_queue_drop_oversize_and_not_leader(dut):
    c = Core(dut, 0, fifo_depth=2)
    await c.enable()
    await c.step(ctrl_write=1, ctrl_value=nctb.ENABLE | nctb.START_BIT)
    await c.step(cl_valid=1, cl_class=nf.EXPECTED, cl_len=3)
    assert len(c.events("fifo_push")) == 1
    c.fifo(2)  # full
    await c.step(cl_valid=1, cl_class=nf.EXPECTED, cl_len=3)
    assert len(c.events("fifo_push")) == 1 and [e["dropped"] for e in c.log if e["dropped"]] == [1]
    c.fifo(0)
    await c.step(cl_valid=1, cl_class=nf.EXPECTED, cl_len=129)  # beyond the 128-byte entries
    assert len(c.events("ev_oversize")) == 1 and len(c.events("fifo_push")) == 1
    await c.step(cl_valid=1, cl_class=nf.EXPECTED, cl_len=128)  # the longest an entry holds
    assert len(c.events("ev_oversize")) == 1 and len(c.events("fifo_push")) == 2
    # a follower answers NOT_LEADER
    c2 = c
    dut.node_id.value = 1
    await c2.enable()
    await c2.copy(0, nf.START, 1)
    await c2.step(cl_valid=1, cl_class=nf.EXPECTED, cl_len=3)
    assert len(c2.events("nl_reply")) == 1 and len(c2.events("fifo_push")) == 2
