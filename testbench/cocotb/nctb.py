"""Shared helpers of the cocotb benches: clock, CSR bus, frame streaming, register map.

Register addresses are taken from proto/README.md's register table (written out here, not
imported from Rust)."""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge, Timer

import ncframes as nf

CLK_NS = 8  # the paper's board: 8 ns loop granularity

# ---- register map (proto/README.md)
MAGIC, CTRL, STATUS = 0x000, 0x004, 0x008
NODE_ID, NODE_COUNT, CLUSTER_ID, TREES = 0x010, 0x014, 0x018, 0x01C
LOOP_PERIOD, TIMEOUT, DELTA, DRIFT = 0x020, 0x024, 0x028, 0x02C
FIFO_DEPTH, BATCH_MAX, MTU = 0x030, 0x034, 0x038
DECIDE_PORT_R, CLIENT_PORT_R = 0x03C, 0x040
TTL_R = 0x078
EPOCH, LEADER, INSTANCE = 0x080, 0x084, 0x088
COUNTERS = {
    "sent_values": 0x100, "sent_heartbeats": 0x108, "delivered": 0x110,
    "requests_accepted": 0x118, "requests_dropped": 0x120, "requests_oversize": 0x128,
    "not_leader_replies": 0x130, "malformed": 0x138, "foreign": 0x140, "net_faults": 0x148,
    "timeouts": 0x150, "stale_epoch": 0x158, "duplicate_copies": 0x160, "late_copies": 0x168,
    "late_ticks": 0x170, "config_applied": 0x178, "config_rejected": 0x180, "ignored": 0x188,
    "replies_dropped": 0x190, "host_dropped": 0x198, "unauthorized": 0x1A0,
}
ENABLE, JOIN, START_BIT, ACTIVATE, CLEAR_COUNTERS = 1, 2, 4, 8, 16
ST_LEADER, ST_JOINING, ST_ACTIVE, ST_NET_FAULT, ST_ARMED, ST_SYNC_VIOL = 1, 2, 4, 8, 16, 32
ST_SYNCED = 64
# lowi_core::state
DISABLED, ARMED, ACTIVE, FAULTED, JOINING = 0, 1, 2, 3, 4


def start_clock(clock):
    cocotb.start_soon(Clock(clock, CLK_NS, units="ns").start())


class Port:
    """Signals of one node, by name: `Port(dut)` for a single node, `Port(dut, "n1_")` for a
    node of the cluster wrapper."""

    def __init__(self, dut, prefix=""):
        self.dut = dut
        self.prefix = prefix

    def __getattr__(self, name):
        return getattr(self.dut, self.prefix + name)


class Node:
    """Drives one nc_engine: the CSR bus and its five frame streams (t0..t3 for the trees, c
    for the client port)."""

    PORTS = ("t0_", "t1_", "t2_", "t3_", "c_")
    OUTPUTS = ("g0_", "g1_", "g2_", "g3_", "h_", "r_")

    def __init__(self, dut, prefix=""):
        self.p = Port(dut, prefix)
        self.clock = dut.clock
        self.busy = set()
        p = self.p
        p.csr_addr.value = 0
        p.csr_wdata.value = 0
        p.csr_write.value = 0
        for port in self.PORTS:
            for sig in ("data", "keep", "valid", "last"):
                getattr(p, port + sig).value = 0
        # The output streams' receivers take a beat every cycle unless a test pauses them (the
        # cluster wrapper ties these inputs high itself).
        for out in self.OUTPUTS:
            ready = getattr(p, out + "ready", None)
            if ready is not None:
                ready.value = 1

    async def write(self, addr, value):
        """One CSR write (one cycle), then the bus idles."""
        p = self.p
        await RisingEdge(self.clock)
        p.csr_addr.value = addr
        p.csr_wdata.value = value
        p.csr_write.value = 1
        await RisingEdge(self.clock)
        p.csr_write.value = 0

    async def read(self, addr):
        """Combinational read data: address now, value in this cycle's read-only phase."""
        await RisingEdge(self.clock)
        self.p.csr_addr.value = addr
        await ReadOnly()
        return int(self.p.csr_rdata.value)

    async def read64(self, addr):
        while True:
            hi = await self.read(addr + 4)
            lo = await self.read(addr)
            hi2 = await self.read(addr + 4)
            if hi == hi2:
                return (hi << 32) | lo

    async def counter(self, name):
        return await self.read64(COUNTERS[name])

    async def counters(self):
        return {k: await self.counter(k) for k in COUNTERS}

    async def flush(self):
        """End any frame a previous test left half-streamed (cocotb stops a test's coroutines
        wherever they are): one last beat on every port, then let the verdicts drain."""
        await RisingEdge(self.clock)
        for port in self.PORTS:
            getattr(self.p, port + "valid").value = 1
            getattr(self.p, port + "last").value = 1
            getattr(self.p, port + "keep").value = 0xFF
            getattr(self.p, port + "data").value = 0
        await RisingEdge(self.clock)
        for port in self.PORTS:
            getattr(self.p, port + "valid").value = 0
            getattr(self.p, port + "last").value = 0
            getattr(self.p, port + "keep").value = 0
        for _ in range(12):
            await RisingEdge(self.clock)

    async def reset(self):
        """The RTL has no reset wire (power-on values) and cocotb runs every test of a module in
        one simulation: each test starts by ending any half-streamed frame, disabling the node
        and clearing its counters."""
        await self.flush()
        await self.write(CTRL, 0)
        await self.write(CTRL, CLEAR_COUNTERS)

    async def configure(self, **regs):
        addr = {"node_id": NODE_ID, "node_count": NODE_COUNT, "cluster_id": CLUSTER_ID,
                "trees": TREES, "loop_period": LOOP_PERIOD, "timeout": TIMEOUT, "delta": DELTA,
                "drift": DRIFT, "fifo_depth": FIFO_DEPTH, "batch_max": BATCH_MAX, "mtu": MTU,
                "ttl": TTL_R}
        for k, v in regs.items():
            await self.write(addr[k], v)
        for k, v in regs.items():
            got = await self.read(addr[k])
            assert got == v, f"register {k}: wrote {v}, reads {got}"

    async def stream(self, frame, client=False, tree=0, wait_taken=True):
        """Push one frame on a tree port (or the client port), one 8-byte beat per cycle.
        With `wait_taken`, return in the read-only phase of the cycle in which the core takes
        the parsed frame (`rx_taken` with `rx_port` = tree, or `cl_taken`), with its verdict;
        None if it was never taken."""
        port = "c_" if client else f"t{tree}_"
        assert port not in self.busy, "one frame at a time per port"
        self.busy.add(port)
        p = self.p
        data_s, keep_s = getattr(p, port + "data"), getattr(p, port + "keep")
        valid_s, last_s = getattr(p, port + "valid"), getattr(p, port + "last")
        for data, keep, last in nf.beats(frame):
            await RisingEdge(self.clock)
            data_s.value = data
            keep_s.value = keep
            valid_s.value = 1
            last_s.value = int(last)
        await RisingEdge(self.clock)
        valid_s.value = 0
        last_s.value = 0
        keep_s.value = 0
        self.busy.discard(port)
        if not wait_taken:
            return None
        for _ in range(16):
            await ReadOnly()
            if client and int(p.cl_taken.value):
                return int(p.ev_verdict.value)
            if not client and int(p.rx_taken.value) and int(p.rx_port.value) == tree:
                return int(p.ev_verdict.value)
            await RisingEdge(self.clock)
        return None


def beat_bytes(port, prefix):
    """The bytes of this cycle's beat on the stream `<prefix>_data` / `<prefix>_keep` of `port`,
    at the data signal's width (64 or 512 bits; byte x of the frame's beat in lane x); keep must
    be contiguous from lane 0."""
    data = getattr(port, f"{prefix}_data")
    keep = int(getattr(port, f"{prefix}_keep").value)
    n = bin(keep).count("1")
    assert keep == (1 << n) - 1 and n > 0, f"{prefix}_keep {keep:#x} not contiguous from lane 0"
    return int(data.value).to_bytes(len(data) // 8, "little")[:n]


class StreamFrames:
    """The frames of one output stream `<prefix>_data/keep/valid/last` of `port`, assembled beat
    by beat: call `sample(cycle)` in the read-only phase of every cycle. `frames` lists them as
    (first cycle, last cycle, bytes). A stream with a `<prefix>_ready` input (nc_engine's) is
    taken only in cycles with `ready` high, and checked as a MAC needs it: a beat offered and not
    taken stays offered, unchanged, and a frame once begun has no gap."""

    def __init__(self, port, prefix):
        self.port, self.prefix = port, prefix
        self.frames = []
        self._cur = None
        self._ready = getattr(port, f"{prefix}_ready", None)
        self._held = None

    @property
    def inside(self):
        """A frame has begun and not ended."""
        return self._cur is not None

    def sample(self, cycle):
        """Take this cycle's beat if `valid`; returns the frame its `last` completes, else None."""
        p, x = self.port, self.prefix
        valid = int(getattr(p, f"{x}_valid").value)
        if self._ready is not None:
            if self._held is not None or self._cur is not None:
                assert valid, f"{x} cycle {cycle}: a beat withdrawn or a gap inside a frame"
            if valid:
                beat = (int(getattr(p, f"{x}_data").value), int(getattr(p, f"{x}_keep").value),
                        int(getattr(p, f"{x}_last").value))
                if self._held is not None:
                    assert beat == self._held, f"{x} cycle {cycle}: an offered beat changed"
                self._held = None if int(self._ready.value) else beat
            if self._held is not None:
                return None
        if not valid:
            return None
        if self._cur is None:
            self._cur = [cycle, b""]
        self._cur[1] += beat_bytes(p, x)
        if not int(getattr(p, f"{x}_last").value):
            return None
        frame = (self._cur[0], cycle, self._cur[1])
        self._cur = None
        self.frames.append(frame)
        return frame


async def cycles(clock, n):
    for _ in range(n):
        await RisingEdge(clock)


async def tick(clock, n=1):
    """n rising edges, then the read-only phase: registers show what the last edge took."""
    for _ in range(n):
        await RisingEdge(clock)
    await ReadOnly()
