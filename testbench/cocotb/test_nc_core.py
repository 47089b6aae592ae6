"""Bench of nc_core alone (lowi_core + rsbcast_rx + egress_fifo + csr) at its parsed-field
interface: the bench plays the packet parser (rx_* / cl_* with a class) and reads the CSR bus."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import ncframes as nf
import nctb

CFG = dict(node_count=3, cluster_id=9, trees=2, loop_period=40, delta=20, drift=1, timeout=70,
           batch_max=4, fifo_depth=8)
RX = ("rx_valid", "rx_port", "rx_class", "rx_sender", "rx_epoch", "rx_seq", "rx_tree", "rx_kind",
      "rx_instance")
CL = ("cl_valid", "cl_class", "cl_len", "cl_client", "cl_seq", "cl_payload")


class Core(nctb.Node):
    """CSR helpers of nctb.Node; parsed events instead of frames."""

    def __init__(self, dut):
        self.p = nctb.Port(dut)
        self.clock = dut.clock
        self.dut = dut
        self.width = len(dut.cl_payload) // 8  # payload bytes an entry holds (128)
        for s in ("csr_addr", "csr_wdata", "csr_write", "tx_hold", "drop_reply_ok", "drop_reply_nl",
                  "cl_mac", "cl_ip", "cl_port",
                  "drop_host") + RX + CL:
            getattr(dut, s).value = 0
        self.cycle = 0
        self.oks = []
        self.delivers = []
        self.sends = []
        cocotb.start_soon(self.watch())

    async def watch(self):
        d = self.dut
        while True:
            await RisingEdge(d.clock)
            self.cycle += 1
            await ReadOnly()
            if int(d.ok_valid.value):
                self.oks.append((int(d.ok_client.value), int(d.ok_seq.value),
                                 int(d.ok_instance.value), int(d.ok_index.value),
                                 int(d.ok_len.value), int(d.ok_payload.value)))
            if int(d.rx_deliver.value):
                self.delivers.append(self.cycle)
            if int(d.send.value):
                self.sends.append((int(d.send_kind.value), int(d.send_instance.value),
                                   int(d.send_count.value)))

    async def flush(self):
        pass  # no frame streams at this interface

    async def event(self, **sigs):
        await RisingEdge(self.clock)
        for k, v in sigs.items():
            getattr(self.dut, k).value = v
        await RisingEdge(self.clock)
        for k in sigs:
            if k.endswith("_valid"):
                getattr(self.dut, k).value = 0

    async def copy(self, tree, epoch, seq, kind, instance, cls=nf.EXPECTED):
        await self.event(rx_valid=1, rx_port=tree, rx_tree=tree, rx_class=cls,
                         rx_sender=epoch % 3, rx_epoch=epoch, rx_seq=seq, rx_kind=kind,
                         rx_instance=instance)

    async def req(self, client, seq, payload):
        await self.event(cl_valid=1, cl_class=nf.EXPECTED, cl_len=len(payload), cl_client=client,
                         cl_seq=seq, cl_payload=int.from_bytes(
                             payload[:self.width].ljust(self.width, b"\0"), "big"))


async def boot(dut, node_id, **over):
    nctb.start_clock(dut.clock)
    c = Core(dut)
    await c.reset()
    cfg = dict(CFG, node_id=node_id)
    cfg.update(over)
    await c.configure(**cfg)
    await c.write(nctb.CTRL, nctb.ENABLE)
    return c


@cocotb.test()
async def ok_replies_carry_batch_instance_index_and_payload(dut):
    c = await boot(dut, 0)
    await c.write(nctb.CTRL, nctb.ENABLE | nctb.START_BIT)
    # 6 requests, batch_max 4: batches of 4 and 2; payloads up to the 128 bytes an entry holds
    # (issue 17), and one longer, refused as oversize (counted, not queued)
    sizes = [1, c.width, 9, 64, c.width - 1, 0]
    payloads = [bytes((31 * i + k) & 0xFF for k in range(n)) for i, n in enumerate(sizes)]
    for i, p in enumerate(payloads):
        await c.req(0x100 + i, 10 + i, p)
    await c.req(0x1FF, 99, bytes(c.width + 1))
    await nctb.cycles(dut.clock, 2 * CFG["loop_period"] + 10)
    assert [s[0] for s in c.sends[:3]] == [nf.START, nf.BATCH, nf.BATCH], c.sends
    assert [s[2] for s in c.sends[1:3]] == [4, 2]
    assert [(o[0], o[1], o[2], o[3], o[4]) for o in c.oks] == \
        [(0x100 + i, 10 + i, 1 if i < 4 else 2, i if i < 4 else i - 4, len(p))
         for i, p in enumerate(payloads)]
    for o, p in zip(c.oks, payloads):
        assert o[5].to_bytes(c.width, "big")[:len(p)] == p
    assert await c.counter("requests_oversize") == 1
    assert await c.read64(nctb.INSTANCE) == 2
    assert await c.counter("sent_values") == 2
    assert await c.counter("delivered") == 2  # the leader hands its decisions to its host


@cocotb.test()
async def adopting_a_later_epoch_takes_its_leader_and_stale_copies_count(dut):
    c = await boot(dut, 2, timeout=5000)
    await c.copy(0, 0, 0, nf.START, 1)
    await c.copy(1, 0, 0, nf.START, 1)
    assert await c.read(nctb.STATUS) == nctb.ST_ACTIVE
    # a heartbeat of epoch 1000 (leader 1000 mod 3 = 1) is adopted
    await c.copy(0, 1000, 0, nf.HEARTBEAT, 1)
    await c.copy(1, 1000, 0, nf.HEARTBEAT, 1)
    # the copy's sender is the epoch's leader (the parser refuses any other): LEADER at once
    assert await c.read(nctb.EPOCH) == 1000
    assert await c.read(nctb.LEADER) == 1000 % 3
    # a copy of an older epoch: stale, a synchrony violation, nothing delivered
    await c.copy(0, 999, 5, nf.BATCH, 1)
    assert await c.counter("stale_epoch") == 1
    assert await c.read(nctb.STATUS) & nctb.ST_SYNC_VIOL
    assert c.delivers == []
    # the current leader's batch is delivered
    await c.copy(0, 1000, 1, nf.BATCH, 1)
    await c.copy(1, 1000, 1, nf.BATCH, 1)
    await nctb.tick(dut.clock)
    assert len(c.delivers) == 1
    assert await c.read64(nctb.INSTANCE) == 1
    # a parser verdict of each class is counted by the core
    for cls, ctr in [(nf.FOREIGN, "foreign"), (nf.MALFORMED, "malformed"), (nf.OTHER, "ignored"),
                     (nf.UNAUTHORIZED, "unauthorized")]:
        await c.copy(0, 1000, 2, nf.BATCH, 2, cls=cls)
        assert await c.counter(ctr) == 1, ctr
    # CLEAR_COUNTERS (with ENABLE kept) zeroes them and the sticky SYNC_VIOLATION
    await c.write(nctb.CTRL, nctb.ENABLE | nctb.CLEAR_COUNTERS)
    assert await c.counter("stale_epoch") == 0
    assert not await c.read(nctb.STATUS) & nctb.ST_SYNC_VIOL


@cocotb.test()
async def a_card_joins_a_running_cluster_by_the_csr_sequence(dut):
    # proto/README "Recovery on a card": CTRL <- ENABLE|JOIN, lock onto the stream, decide,
    # TIMEOUT <- the members' timeout, CTRL <- ENABLE|JOIN|ACTIVATE.
    c = await boot(dut, 2, timeout=5000)
    await c.write(nctb.CTRL, 0)
    await c.write(nctb.CTRL, nctb.ENABLE | nctb.JOIN)
    assert await c.read(nctb.STATUS) == nctb.ST_JOINING
    assert await c.read(nctb.CTRL) == nctb.ENABLE | nctb.JOIN
    # not locked on yet: ACTIVATE is refused (changes nothing), JOIN alone too
    await c.write(nctb.CTRL, nctb.ENABLE | nctb.JOIN | nctb.ACTIVATE)
    await c.write(nctb.CTRL, nctb.JOIN)
    assert await c.read(nctb.STATUS) == nctb.ST_JOINING
    # epoch 4 (leader 1), seq 40 seen on tree 0, then seq 41 on tree 1: locked on at 42
    await c.copy(0, 4, 40, nf.BATCH, 700)
    assert await c.read(nctb.STATUS) == nctb.ST_JOINING
    await c.copy(1, 4, 41, nf.BATCH, 701)
    assert await c.read(nctb.STATUS) == nctb.ST_JOINING | nctb.ST_SYNCED
    assert await c.read(nctb.EPOCH) == 4 and await c.read(nctb.LEADER) == 1
    # seq 41 on tree 0 is before the lock-on point: not ours; 42 is the first we decide
    await c.copy(0, 4, 41, nf.BATCH, 701)
    assert c.delivers == []
    await c.copy(0, 4, 42, nf.BATCH, 702)
    await c.copy(1, 4, 42, nf.BATCH, 702)
    await nctb.tick(dut.clock)
    assert len(c.delivers) == 1
    assert await c.read64(nctb.INSTANCE) == 702
    # decided, but no timeout from the members yet: ACTIVATE refused
    await c.write(nctb.CTRL, nctb.ENABLE | nctb.JOIN | nctb.ACTIVATE)
    assert await c.read(nctb.STATUS) == nctb.ST_JOINING | nctb.ST_SYNCED
    await c.write(nctb.TIMEOUT, 6000)  # the one config write taken while joining
    await c.write(nctb.DELTA, 3)  # any other is refused
    assert await c.read(nctb.TIMEOUT) == 6000 and await c.read(nctb.DELTA) == CFG["delta"]
    await c.write(nctb.CTRL, nctb.ENABLE | nctb.JOIN | nctb.ACTIVATE)
    assert await c.read(nctb.STATUS) == nctb.ST_ACTIVE
    assert await c.read(nctb.CTRL) == nctb.ENABLE
    # a member again: the next batch is decided in step
    await c.copy(0, 4, 43, nf.BATCH, 703)
    await c.copy(1, 4, 43, nf.BATCH, 703)
    await nctb.tick(dut.clock)
    assert len(c.delivers) == 2
    assert await c.read64(nctb.INSTANCE) == 703
