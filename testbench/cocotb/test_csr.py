"""Bench of the csr register file alone: bus reads/writes, legal ranges, config frozen unless
Disabled, CTRL strobes, read-through registers, counters (increments, tick+event, clear)."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import nctb

EVENTS = ["tick_net_fault", "tick_timeout", "tick_sent_value", "tick_sent_hb", "ev_foreign",
          "ev_malformed", "ev_ignored", "ev_stale", "ev_duplicate", "ev_net_fault",
          "ev_delivered", "ev_accepted", "ev_not_leader", "ev_sent_hb", "ev_oversize",
          "ev_unauthorized"]


class Bus:
    def __init__(self, dut):
        self.dut = dut
        dut.bus_addr.value = 0
        dut.bus_wdata.value = 0
        dut.bus_write.value = 0
        for s in EVENTS + ["clear_counters", "tick_dropped", "ev_dropped", "state", "status",
                           "epoch", "leader", "last_instance"]:
            getattr(dut, s).value = 0
        nctb.start_clock(dut.clock)

    async def write(self, addr, value):
        """One bus write; returns the CTRL strobe of the next cycle, in which csr applies it
        (the write is registered)."""
        await RisingEdge(self.dut.clock)
        self.dut.bus_addr.value = addr
        self.dut.bus_wdata.value = value
        self.dut.bus_write.value = 1
        await RisingEdge(self.dut.clock)
        self.dut.bus_write.value = 0
        await ReadOnly()
        return (int(self.dut.ctrl_write.value), int(self.dut.ctrl_value.value))

    async def read(self, addr):
        await RisingEdge(self.dut.clock)
        self.dut.bus_addr.value = addr
        await ReadOnly()
        return int(self.dut.bus_rdata.value)

    async def read64(self, addr):
        return (await self.read(addr + 4)) << 32 | await self.read(addr)

    async def pulse(self, **sigs):
        await RisingEdge(self.dut.clock)
        for k, v in sigs.items():
            getattr(self.dut, k).value = v
        await RisingEdge(self.dut.clock)
        for k in sigs:
            getattr(self.dut, k).value = 0


@cocotb.test()
async def config_registers_ranges_and_freeze(dut):
    b = Bus(dut)
    assert await b.read(nctb.MAGIC) == 0x4E430001
    assert await b.read(nctb.TIMEOUT) == 375
    for addr, bad, good in [(nctb.TREES, 0, 4), (nctb.TREES, 5, 1), (nctb.NODE_COUNT, 65, 64),
                            (nctb.NODE_ID, 64, 63), (nctb.FIFO_DEPTH, 4097, 4096),
                            (nctb.BATCH_MAX, 256, 255), (nctb.MTU, 575, 9000),
                            (nctb.LOOP_PERIOD, 0, 1), (nctb.DECIDE_PORT_R, 0, 65535),
                            (nctb.TTL_R, 0, 1), (nctb.TTL_R, 256, 255)]:
        before = await b.read(addr)
        await b.write(addr, bad)
        assert await b.read(addr) == before, f"{addr:#x}: {bad} refused"
        await b.write(addr, good)
        assert await b.read(addr) == good, f"{addr:#x}: {good} taken"
    await b.write(nctb.DELTA, 40)
    await b.write(nctb.DRIFT, 3)
    # the write is applied at the edge after the write() returned; the window (registered)
    # follows one edge later
    await RisingEdge(dut.clock)
    await RisingEdge(dut.clock)
    await ReadOnly()
    assert int(dut.window.value) == 43, "RSBCAST window = delta + drift"
    # `cfg` is csr::Cfg: 29 fields of 32 bits from bit 0, `delta` the seventh.
    assert len(dut.cfg) == 29 * 32, "csr::Cfg changed"
    assert (int(dut.cfg.value) >> (6 * 32)) & 0xFFFFFFFF == 40
    for st in (nctb.ARMED, nctb.ACTIVE, nctb.FAULTED):
        await RisingEdge(dut.clock)
        dut.state.value = st
        await b.write(nctb.DELTA, 99)
        assert await b.read(nctb.DELTA) == 40, f"frozen in state {st}"
    await RisingEdge(dut.clock)
    dut.state.value = nctb.DISABLED
    await b.write(nctb.DELTA, 99)
    assert await b.read(nctb.DELTA) == 99


@cocotb.test()
async def ctrl_strobe_and_read_through(dut):
    b = Bus(dut)
    assert await b.write(nctb.CTRL, nctb.ENABLE | nctb.START_BIT) == (1, 5)
    assert (await b.write(nctb.DELTA, 5))[0] == 0, "no CTRL strobe for another register"
    # A CTRL value the core cannot take changes nothing, as the model refuses it: csr judges it
    # in the bus cycle and passes no strobe on (an undefined bit; JOIN without ENABLE).
    # A refused write is no strobe, and the value the core reads is 0 (csr's `w_cv`).
    assert await b.write(nctb.CTRL, nctb.ENABLE | 0x20) == (0, 0), "an undefined CTRL bit"
    assert await b.write(nctb.CTRL, 0x8000_0000) == (0, 0), "an undefined CTRL bit"
    assert await b.write(nctb.CTRL, nctb.JOIN) == (0, 0), "JOIN without ENABLE"
    assert await b.write(nctb.CTRL, nctb.ENABLE | nctb.JOIN) == (1, 3)
    assert await b.write(nctb.CTRL, 0) == (1, 0)
    await RisingEdge(dut.clock)
    dut.status.value = 0x45
    dut.epoch.value = 0x12345678
    dut.leader.value = 2
    dut.last_instance.value = 0x1_0000_0007
    assert await b.read(nctb.STATUS) == 0x45
    assert await b.read(nctb.EPOCH) == 0x12345678
    assert await b.read(nctb.LEADER) == 2
    assert await b.read64(nctb.INSTANCE) == 0x1_0000_0007
    assert await b.read(0x04C) == 0, "an unmapped address reads 0"


@cocotb.test()
async def counters_count_and_clear(dut):
    b = Bus(dut)
    await b.pulse(clear_counters=1)
    names = {"tick_net_fault": "net_faults", "ev_net_fault": "net_faults",
             "tick_timeout": "timeouts",
             # the leader hands its own decision to its host at send: both counters
             "tick_sent_value": ("sent_values", "delivered"),
             "tick_sent_hb": "sent_heartbeats", "ev_sent_hb": "sent_heartbeats",
             "ev_foreign": "foreign", "ev_malformed": "malformed", "ev_ignored": "ignored",
             "ev_stale": "stale_epoch", "ev_duplicate": "duplicate_copies",
             "ev_delivered": "delivered", "ev_accepted": "requests_accepted",
             "ev_not_leader": "not_leader_replies", "ev_oversize": "requests_oversize",
             "ev_unauthorized": "unauthorized"}
    want = {}
    for k, (ev, ctr) in enumerate(names.items()):
        for _ in range(k % 3 + 1):
            await b.pulse(**{ev: 1})
        for c in (ctr if isinstance(ctr, tuple) else (ctr,)):
            want[c] = want.get(c, 0) + k % 3 + 1
    # tick and event parts in one cycle both count
    await b.pulse(tick_net_fault=1, ev_net_fault=1)
    want["net_faults"] += 2
    await b.pulse(tick_dropped=5, ev_dropped=2)
    await b.pulse(ev_dropped=1)
    want["requests_dropped"] = 8
    for ctr, v in want.items():
        assert await b.read64(nctb.COUNTERS[ctr]) == v, (ctr, v)
    # CLEAR_COUNTERS zeroes them; an event in the same cycle (event phase) still counts
    await b.pulse(clear_counters=1, ev_malformed=1, tick_timeout=1)
    assert await b.read64(nctb.COUNTERS["malformed"]) == 1
    assert await b.read64(nctb.COUNTERS["timeouts"]) == 0
    for ctr in want:
        if ctr != "malformed":
            assert await b.read64(nctb.COUNTERS[ctr]) == 0, ctr
