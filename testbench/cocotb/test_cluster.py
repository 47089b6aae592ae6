"""Three nodes (hdl/cluster3.v: 3 x nc_engine, its pkt_gen included) joined by a cocotb network
model.

The model plays the two multicast trees: it collects the DECIDE frames each node generates on
its tree t output (g<t>) and streams each into tree port t of every other node after a
per-(sender, receiver, tree) delay, counted from the frame's first beat. Links can be cut and
senders silenced. Clients stream REQUEST frames (built in Python, ncframes.py) to the node whose
STATUS says LEADER."""

import heapq
import random
import struct

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import ncframes as nf
import nctb

N = 3
TREES = 2
CLUSTER = 9
CFG = dict(node_count=N, cluster_id=CLUSTER, trees=TREES, loop_period=80, delta=50, drift=1,
           timeout=200, batch_max=4, fifo_depth=8)
# timeout 200 > max(2*delta, loop_period + delta) + drift = 131


def delay(src, dst, tree):
    """Per-link one-way delay in cycles (all well inside the window delta + drift = 51)."""
    return 4 + 3 * dst + 5 * tree + src


class Cluster:
    live = None  # the current test's cluster: a previous test's coroutines stand down

    def __init__(self, dut):
        Cluster.live = self
        self.dut = dut
        self.clock = dut.clock
        self.nodes = [nctb.Node(dut, f"n{i}_") for i in range(N)]
        self.cycle = 0
        # per (node, port): heap of (due, order, frame, client, tree); port TREES = client port
        self.queue = {(i, q): [] for i in range(N) for q in range(TREES + 1)}
        self.order = 0
        self.cut = set()       # (dst, tree): that tree's link into dst is down
        self.silent = set()    # senders whose copies the network no longer carries
        self.sends = [[] for _ in range(N)]      # (cycle, kind, instance, epoch, seq, count)
        self.decided = [[] for _ in range(N)]    # instances decided (leader: at send)
        self.delivered = [[] for _ in range(N)]  # instances delivered (follower)
        self.faults = [[] for _ in range(N)]
        self.took_copy = [[] for _ in range(N)]  # cycles in which a DECIDE copy reached the core
        self.generated = [[] for _ in range(N)]  # (tree, frame) as each pkt_gen streamed them
        self.overruns = [0] * N
        self.forwarding = False  # set once every node is disabled and its generator idle
        self.client_seq = 0
        cocotb.start_soon(self.count())
        for i in range(N):
            cocotb.start_soon(self.watch(i))
            for q in range(TREES + 1):
                cocotb.start_soon(self.feed(i, q))

    async def count(self):
        while Cluster.live is self:
            await RisingEdge(self.clock)
            self.cycle += 1

    def forward(self, src, tree, start, frame):
        """A generated frame of `src` on tree `tree` (first beat in cycle `start`)."""
        if not self.forwarding:
            return  # a frame (or the tail of one) still coming out of a previous test's node
        self.generated[src].append((tree, frame))
        if src in self.silent:
            return
        for dst in range(N):
            if dst != src and (dst, tree) not in self.cut:
                self.push(dst, start + delay(src, dst, tree), frame, False, tree)

    def push(self, dst, due, frame, client, tree):
        self.order += 1
        heapq.heappush(self.queue[(dst, TREES if client else tree)],
                       (due, self.order, frame, client, tree))

    async def watch(self, i):
        p = self.nodes[i].p
        deliver_prev = False
        gen = [nctb.StreamFrames(p, f"g{t}") for t in range(TREES)]
        while Cluster.live is self:
            await RisingEdge(self.clock)
            await ReadOnly()
            cyc = self.cycle
            if deliver_prev:
                self.delivered[i].append(int(p.last_instance.value))
            deliver_prev = bool(int(p.rx_deliver.value))
            if int(p.rx_taken.value):
                self.took_copy[i].append(cyc)
            if int(p.tick_fault.value) or int(p.rx_fault.value):
                self.faults[i].append(cyc)
            if int(p.gen_overrun.value):
                self.overruns[i] += 1
            if int(p.send.value):
                msg = (cyc, int(p.send_kind.value), int(p.send_instance.value),
                       int(p.send_epoch.value), int(p.send_seq.value), int(p.send_count.value))
                self.sends[i].append(msg)
                if msg[1] == nf.BATCH:
                    self.decided[i].append(msg[2])
            # the generated frames, one 64-bit beat per cycle per tree
            for t in range(TREES):
                frame = gen[t].sample(cyc)
                if frame is not None:
                    self.forward(i, t, frame[0], frame[2])

    async def feed(self, i, port):
        node = self.nodes[i]
        q = self.queue[(i, port)]
        while Cluster.live is self:
            await RisingEdge(self.clock)
            if q and q[0][0] <= self.cycle:
                _, _, frame, client, tree = heapq.heappop(q)
                verdict = await node.stream(frame, client=client, tree=tree)
                if Cluster.live is self:
                    assert verdict == nf.EXPECTED, f"node {i}: parser verdict {verdict}"

    async def pause_trees(self, pct, seed):
        """Every node's tree streams paused at random: each `g<t>_ready` high in `pct` % of
        the cycles (a MAC that cannot always take a beat; issue 17 item 2). The frames reach
        the network later, whole, and the copies' delays are counted from their first beat
        taken."""
        rng = random.Random(seed)
        while Cluster.live is self:
            await RisingEdge(self.clock)
            for n in self.nodes:
                for t in range(TREES):
                    getattr(n.p, f"g{t}_ready").value = int(rng.random() * 100 < pct)

    def leader(self):
        for i, n in enumerate(self.nodes):
            if int(n.p.status.value) & nctb.ST_LEADER and i not in self.silent:
                return i
        return None

    def request(self):
        dst = self.leader()
        assert dst is not None, "no leader"
        self.client_seq += 1
        frame = nf.udp_frame(nf.request(CLUSTER, 77, self.client_seq, bytes([self.client_seq])),
                             dst_port=nf.CLIENT_PORT, dst_ip=0x0A000001 + dst)
        self.push(dst, self.cycle, frame, True, 0)

    async def boot(self):
        nctb.start_clock(self.clock)
        for n in self.nodes:
            await n.reset()
        # a previous test may have left a node sending: wait until every generator is idle
        # (frames are up to ~20 beats), then start forwarding with empty queues
        for _ in range(40):
            await RisingEdge(self.clock)
        await ReadOnly()
        for n in self.nodes:
            assert not int(n.p.gen_busy.value) and not any(
                int(getattr(n.p, f"g{t}_valid").value) for t in range(TREES))
        await RisingEdge(self.clock)
        for q in self.queue.values():
            q.clear()
        self.forwarding = True
        for i, n in enumerate(self.nodes):
            await n.configure(node_id=i, **CFG)
            await n.write(nctb.CTRL, nctb.ENABLE)
        await self.nodes[0].write(nctb.CTRL, nctb.ENABLE | nctb.START_BIT)
        await nctb.tick(self.clock, 60)
        for n in self.nodes:
            assert int(n.p.state.value) == nctb.ACTIVE

    async def traffic(self, periods):
        for k in range(periods):
            await nctb.cycles(self.clock, 37 if k % 2 else 43)
            self.request()
            await nctb.cycles(self.clock, CFG["loop_period"] - 40)


def check_consistent(c, members):
    """Each member decided/delivered a consecutive run of instances, all the same prefix."""
    logs = {i: sorted(c.decided[i] + c.delivered[i]) for i in members}
    for i, log in logs.items():
        assert log == list(range(1, len(log) + 1)), f"node {i}: {log}"
    return logs


@cocotb.test()
async def start_steady_decisions_then_leader_stops_and_node1_takes_over(dut):
    c = Cluster(dut)
    await c.boot()
    await c.traffic(6)
    await nctb.tick(c.clock, 100)
    logs = check_consistent(c, range(N))
    assert len(logs[0]) >= 3 and logs[1] == logs[0] and logs[2] == logs[0], logs
    # every send went out as one generated frame per tree, carrying that send's fields
    sent = [(s[1], s[2], s[3], s[4]) for s in c.sends[0]]
    for t in range(TREES):
        frames = [f for tt, f in c.generated[0] if tt == t]
        hdr = [struct.unpack(">QIIBB", f[42 + 12:42 + 30]) for f in frames]
        assert [(k, inst, ep, seq) for inst, ep, seq, tree, k in hdr] == sent[:len(hdr)], t
        assert len(hdr) >= len(sent) - 1 and all(h[3] == t for h in hdr)
    assert c.overruns == [0, 0, 0]
    assert c.faults == [[], [], []]
    gaps = [b[0] - a[0] for a, b in zip(c.sends[0], c.sends[0][1:])]
    assert gaps and all(g == CFG["loop_period"] for g in gaps), gaps
    # The leader stops: the network carries none of its copies, and it is disabled.
    c.silent.add(0)
    await c.nodes[0].write(nctb.CTRL, 0)
    stop = c.cycle
    await nctb.tick(c.clock, CFG["timeout"] + CFG["loop_period"] + 60)
    last_copy = max(x for x in c.took_copy[1] if x <= stop + 60)
    first = [s for s in c.sends[1] if s[3] == 1][0]
    assert first[0] - last_copy <= CFG["timeout"] + 3, (first, last_copy)
    assert first[0] - last_copy >= CFG["timeout"], (first, last_copy)
    assert (first[1], first[3], first[4]) == (nf.HEARTBEAT, 1, 0), first
    assert int(c.nodes[1].p.status.value) & nctb.ST_LEADER
    assert int(c.nodes[2].p.epoch.value) == 1 and int(c.nodes[2].p.leader.value) == 1
    # decisions continue under node 1, node 2 follows it
    before = len(c.delivered[2])
    await c.traffic(4)
    await nctb.tick(c.clock, 100)
    logs = check_consistent(c, [1, 2])
    assert len(c.delivered[2]) >= before + 2, c.delivered[2]
    assert logs[1] == logs[2], logs
    assert c.faults == [[], [], []]


@cocotb.test()
async def one_tree_link_cut_to_one_follower_faults_it_others_continue(dut):
    """(With every tree stream paused in a random 30 % of the cycles throughout.)"""
    c = Cluster(dut)
    await c.boot()
    cocotb.start_soon(c.pause_trees(70, 17))
    await c.traffic(3)
    await nctb.tick(c.clock, 60)
    check_consistent(c, range(N))
    n2 = len(c.delivered[2])
    assert n2 >= 2
    c.cut.add((2, 1))  # tree 1's link into node 2 goes down
    await c.traffic(5)
    await nctb.tick(c.clock, 100)
    assert len(c.faults[2]) == 1, c.faults
    assert int(c.nodes[2].p.state.value) == nctb.FAULTED
    assert int(c.nodes[2].p.status.value) & nctb.ST_NET_FAULT
    assert len(c.delivered[2]) == n2, "no DELIVER after NET-FAULT"
    assert c.faults[0] == [] and c.faults[1] == []
    logs = check_consistent(c, [0, 1])
    assert logs[0] == logs[1] and len(logs[1]) >= n2 + 4, logs
    # the leader still leads (followers never answer it), node 2 stays out
    assert int(c.nodes[0].p.status.value) & nctb.ST_LEADER
    assert await c.nodes[2].counter("net_faults") == 1
    assert await c.nodes[2].counter("delivered") == n2
    # The link is repaired and node 2 comes back by the CSR sequence (proto/README, "Recovery
    # on a card"; issue 17 item 6): CTRL <- 0, CTRL <- ENABLE|JOIN, SYNCED once both trees
    # showed a copy of the leader's stream, decisions from the next message on (the host
    # application's snapshot would cover what came before), TIMEOUT <- the members' timeout,
    # ACTIVATE: a member again, deciding in step with the others.
    c.cut.discard((2, 1))
    n = c.nodes[2]
    await n.write(nctb.CTRL, 0)
    await n.write(nctb.CTRL, nctb.ENABLE | nctb.JOIN)
    assert await n.read(nctb.STATUS) == nctb.ST_JOINING
    assert await n.read(nctb.CTRL) == nctb.ENABLE | nctb.JOIN
    for _ in range(3 * CFG["loop_period"] // 10):
        if await n.read(nctb.STATUS) & nctb.ST_SYNCED:
            break
        await nctb.tick(c.clock, 10)
    assert await n.read(nctb.STATUS) == nctb.ST_JOINING | nctb.ST_SYNCED
    joined = len(c.delivered[2])
    await c.traffic(3)
    await nctb.tick(c.clock, 100)
    mine = c.delivered[2][joined:]
    assert len(mine) >= 2 and mine == list(range(mine[0], mine[0] + len(mine))), mine
    assert await n.read(nctb.STATUS) == nctb.ST_JOINING | nctb.ST_SYNCED
    await n.write(nctb.TIMEOUT, CFG["timeout"])
    await n.write(nctb.CTRL, nctb.ENABLE | nctb.JOIN | nctb.ACTIVATE)
    assert await n.read(nctb.STATUS) == nctb.ST_ACTIVE
    assert int(n.p.state.value) == nctb.ACTIVE
    await c.traffic(4)
    await nctb.tick(c.clock, 100)
    mine = c.delivered[2][joined:]
    lead = sorted(c.decided[0])
    assert len(mine) >= 6 and mine == [x for x in lead if x >= mine[0]], (mine, lead)
    assert len(c.faults[2]) == 1 and c.faults[0] == [] and c.faults[1] == [], c.faults
