"""Bench of the top, nc_engine (nc_core behind a pkt_parser per tree port and one for the client
port): registers over the CSR bus, Ethernet frames built in Python (ncframes.py) on the
streaming ports."""

import random

import cocotb
from cocotb.triggers import RisingEdge

import ncframes as nf
import nctb
from badframes import bad_frames
from nodelib import (CFG, CLUSTER, WINDOW, both_trees, client_frame, decide_frame, generated_decide,
                     host_copy, make_node, reply_frame)


async def boot(dut, node_id, **over):
    nctb.start_clock(dut.clock)
    return await make_node(dut, node_id, **over)


async def follow_start(node):
    """An armed follower takes node 0's START (epoch 0, seq 0, instance 1) on both trees."""
    await both_trees(node, 1, 0, 0, nf.START)
    await nctb.tick(node.clock, 2)  # the core acts on a copy in the cycle after it takes it
    assert int(node.p.state.value) == nctb.ACTIVE


def expected_decides(mon, tree, **kw):
    """The DECIDE frame each of node 0's sends must put on `tree`, with the entries its OKs
    name (built in Python)."""
    want = []
    for x in mon.sends:
        ents = [(o[1], o[2], o[5].to_bytes(128, "big")[:o[6]]) for o in mon.oks
                if x["kind"] == nf.BATCH and o[3] == x["instance"]]
        want.append(generated_decide(CLUSTER, 0, tree, x["kind"], x["instance"], x["epoch"],
                                     x["seq"], ents, **kw))
    return want


@cocotb.test()
async def registers_reset_values_and_refused_writes(dut):
    nctb.start_clock(dut.clock)
    node = nctb.Node(dut)
    assert await node.read(nctb.MAGIC) == 0x4E430001
    # reset values (proto/README.md's register table)
    for addr, v in [(nctb.NODE_COUNT, 3), (nctb.CLUSTER_ID, 1), (nctb.TREES, 2),
                    (nctb.LOOP_PERIOD, 125), (nctb.TIMEOUT, 375), (nctb.DELTA, 125),
                    (nctb.DRIFT, 2), (nctb.FIFO_DEPTH, 64), (nctb.BATCH_MAX, 16),
                    (nctb.MTU, 1500), (nctb.TTL_R, 16), (nctb.STATUS, 0)]:
        assert await node.read(addr) == v, hex(addr)
    # out of the legal range: refused, nothing changes
    await node.write(nctb.TREES, 5)
    await node.write(nctb.MTU, 100)
    await node.write(nctb.TTL_R, 0)
    await node.write(nctb.TTL_R, 256)
    assert await node.read(nctb.TREES) == 2
    assert await node.read(nctb.MTU) == 1500
    assert await node.read(nctb.TTL_R) == 16
    await node.write(nctb.TREES, 3)
    assert await node.read(nctb.TREES) == 3
    # configuration is frozen while enabled
    await node.write(nctb.CTRL, nctb.ENABLE)
    assert await node.read(nctb.STATUS) & nctb.ST_ARMED
    await node.write(nctb.LOOP_PERIOD, 77)
    assert await node.read(nctb.LOOP_PERIOD) == 125
    await node.write(nctb.CTRL, 0)
    await node.write(nctb.LOOP_PERIOD, 77)
    assert await node.read(nctb.LOOP_PERIOD) == 77


@cocotb.test()
async def loop_period_heartbeats_and_instance_numbering(dut):
    # ttl: not the reset value, so every generated frame below shows the register reached it
    node, mon, cfg = await boot(dut, 0, loop_period=40, batch_max=4, fifo_depth=8, ttl=3)
    await node.write(nctb.CTRL, nctb.ENABLE | nctb.START_BIT)
    await nctb.cycles(dut.clock, 100)
    # requests at odd moments: they must not move the loop
    # (issue 17: payloads of up to 128 bytes, streamed whole into the DECIDE and host frames)
    sizes = [1, 128, 2, 100, 128]
    for i, wait in enumerate([3, 17, 1, 29, 11]):
        await nctb.cycles(dut.clock, wait)
        p = bytes((0x41 + i + 3 * j) & 0xFF for j in range(sizes[i]))
        await node.stream(client_frame(7, i + 1, p), client=True)
    await nctb.cycles(dut.clock, 250)
    s = mon.sends
    assert s[0]["kind"] == nf.START and s[0]["instance"] == 1 and s[0]["epoch"] == 0
    gaps = [b["cycle"] - a["cycle"] for a, b in zip(s, s[1:])]
    assert len(gaps) >= 8 and all(g == cfg["loop_period"] for g in gaps), gaps
    assert [x["seq"] for x in s] == list(range(len(s))), "msg_seq counts every send"
    # Heartbeats repeat the next instance; a batch decides it; the one after continues.
    last = 0
    decided = []
    for x in s[1:]:
        if x["kind"] == nf.HEARTBEAT:
            assert x["instance"] == last + 1 and x["count"] == 0, x
        else:
            assert x["kind"] == nf.BATCH and x["instance"] == last + 1 and x["count"] >= 1, x
            last = x["instance"]
            decided.append(x)
    assert sum(x["count"] for x in decided) == 5
    assert len(decided) >= 2, "requests spread over several loop periods"
    assert [c for c in mon.lead] == [x["cycle"] for x in decided], "leader decides at send"
    assert int(dut.last_instance.value) == last
    # an OK per request, in order, naming the instance and index that decided it
    assert [o[2] for o in mon.oks] == [1, 2, 3, 4, 5]
    assert all(o[1] == 7 for o in mon.oks)
    for x in decided:
        mine = [o for o in mon.oks if o[3] == x["instance"]]
        assert [o[4] for o in mine] == list(range(x["count"]))
    assert [o[5] >> 1016 for o in mon.oks] == [0x41, 0x42, 0x43, 0x44, 0x45], "payload bytes"
    assert [o[5].to_bytes(128, "big")[:o[6]] for o in mon.oks] == \
        [bytes((0x41 + i + 3 * j) & 0xFF for j in range(n)) for i, n in enumerate(sizes)]
    # every send leaves as one generated DECIDE frame per tree, byte for byte the Python one
    for t in range(2):
        want = expected_decides(mon, t, ttl=3)
        got = [f[2] for f in mon.gen[t]]
        assert got == want[:len(got)] and len(got) >= len(want) - 1, (t, len(got), len(want))
    assert mon.gen[2] == [] and mon.gen[3] == []
    # the host path: every decision's tree-0 frame readdressed to the host, one cycle behind it
    tree0 = {c: f for c, _, f in mon.gen[0]}
    assert len(mon.host) == len(decided), mon.host
    for (c, _, f), x in zip(mon.host, decided):
        assert c - 1 in tree0, "first host beat 1 cycle after the tree-0 frame's first beat"
        assert tree0[c - 1][nf.PAYLOAD_OFFSET + 12:nf.PAYLOAD_OFFSET + 20] == x["instance"].to_bytes(8, "big")
        assert f == host_copy(tree0[c - 1], ttl=3)
    # the client port: one REPLY_OK per request, to the address it came from, in order
    want_ok = [reply_frame(nf.reply_ok(CLUSTER, 0, o[1], o[4], o[2], o[3]), o[1], ttl=3)
               for o in mon.oks]
    assert [r[2] for r in mon.replies] == want_ok, mon.replies
    hb = sum(1 for x in s if x["kind"] in (nf.HEARTBEAT, nf.START))
    assert await node.counter("sent_heartbeats") == hb
    assert await node.counter("sent_values") == len(decided)
    assert await node.counter("requests_accepted") == 5
    assert await node.read(nctb.STATUS) & (nctb.ST_LEADER | nctb.ST_ACTIVE) == 5


async def pause_randomly(dut, names, pct, seed):
    """Each cycle, each `<name>_ready` high with probability `pct` % (a MAC pausing the
    stream)."""
    rng = random.Random(seed)
    while True:
        await RisingEdge(dut.clock)
        for n in names:
            getattr(dut, f"{n}_ready").value = int(rng.random() * 100 < pct)


@cocotb.test()
async def paused_output_streams_carry_every_frame_whole(dut):
    """Issue 17 item 2: the tree, host and client streams paused at random (AXI-Stream
    `ready`). The Monitor's streams check that an offered beat stays offered, unchanged, and
    that no frame has a gap; every send still leaves as its DECIDE frame on each tree, byte for
    byte, every decision reaches the host (or is counted as a host drop), every request is
    answered (or its reply counted as dropped)."""
    node, mon, cfg = await boot(dut, 0, loop_period=60, batch_max=4, fifo_depth=8)
    pauser = cocotb.start_soon(pause_randomly(dut, ("g0", "g1", "h", "r"), 55, 17))
    await node.write(nctb.CTRL, nctb.ENABLE | nctb.START_BIT)
    sizes = [128, 3, 128, 64, 128, 1, 100, 128]
    for i, size in enumerate(sizes):
        await nctb.cycles(dut.clock, 7 * i + 1)
        p = bytes((0x30 + i + 5 * j) & 0xFF for j in range(size))
        await node.stream(client_frame(9, i + 1, p), client=True)
    await nctb.cycles(dut.clock, 1200)
    pauser.kill()
    for n in ("g0", "g1", "h", "r"):
        getattr(dut, f"{n}_ready").value = 1
    await node.write(nctb.CTRL, 0)  # no more heartbeats: the FIFOs drain
    await nctb.cycles(dut.clock, 300)
    s = mon.sends
    decided = [x for x in s if x["kind"] == nf.BATCH]
    assert sum(x["count"] for x in decided) == len(sizes)
    for t in range(2):
        want = expected_decides(mon, t)
        got = [f[2] for f in mon.gen[t]]
        assert got == want, (t, len(got), len(want))
    by_instance = {f[nf.PAYLOAD_OFFSET + 12:nf.PAYLOAD_OFFSET + 20]: f for _, _, f in mon.gen[0]}
    dropped = await node.counter("host_dropped")
    assert len(mon.host) + dropped == len(decided), (len(mon.host), dropped, len(decided))
    for _, _, f in mon.host:
        inst = f[nf.PAYLOAD_OFFSET + 12:nf.PAYLOAD_OFFSET + 20]
        assert f == host_copy(by_instance[inst]), inst
    replies_dropped = await node.counter("replies_dropped")
    want_ok = [reply_frame(nf.reply_ok(CLUSTER, 0, o[1], o[4], o[2], o[3]), o[1]) for o in mon.oks]
    assert len(mon.replies) + replies_dropped == len(sizes)
    if replies_dropped == 0:
        assert [r[2] for r in mon.replies] == want_ok
    dut._log.info("paused streams: %d sends (%d with values), %d host frames (%d dropped), "
                  "%d replies (%d dropped)", len(s), len(decided), len(mon.host), dropped,
                  len(mon.replies), replies_dropped)


@cocotb.test()
async def fifo_overflow_drops_oversize_and_not_leader(dut):
    node, mon, cfg = await boot(dut, 0, loop_period=1000, fifo_depth=3, batch_max=2, timeout=1100)
    await node.write(nctb.CTRL, nctb.ENABLE | nctb.START_BIT)
    for i in range(6):
        await node.stream(client_frame(3, i + 1), client=True)
    await node.stream(client_frame(3, 99, bytes(129)), client=True)  # 129 bytes: over the RTL's 128
    assert await node.counter("requests_accepted") == 3
    assert await node.counter("requests_dropped") == 3
    assert await node.counter("requests_oversize") == 1
    await nctb.cycles(dut.clock, 1000)
    batch = [x for x in mon.sends if x["kind"] == nf.BATCH]
    assert len(batch) == 1 and batch[0]["count"] == 2, mon.sends  # batch_max
    assert [o[2] for o in mon.oks] == [1, 2]
    # A follower answers NOT_LEADER and queues nothing.
    await node.write(nctb.CTRL, 0)
    await node.write(nctb.NODE_ID, 1)
    await node.write(nctb.CTRL, nctb.ENABLE)
    await both_trees(node, 1, 0, 0, nf.START)
    n0 = len(mon.nl)
    await node.stream(client_frame(3, 50), client=True)
    await nctb.tick(dut.clock, 2)  # NOT_LEADER in the cycle after the core takes the request
    assert len(mon.nl) == n0 + 1
    await nctb.cycles(dut.clock, 12)
    # the NOT_LEADER frame names leader 0 (epoch 0), from node 1, to the client's address
    assert mon.replies[-1][2] == reply_frame(nf.reply_not_leader(CLUSTER, 1, 3, 0, 50, 0), 3)
    assert len(mon.replies) == 3, "two OKs, then the NOT_LEADER"
    assert await node.counter("not_leader_replies") == 1
    assert await node.counter("requests_accepted") == 3


@cocotb.test()
async def follower_delivers_then_timeout_makes_next_node_leader(dut):
    node, mon, cfg = await boot(dut, 1)
    await follow_start(node)
    await both_trees(node, 1, 0, 1, nf.BATCH, [nf.entry(5, 1, b"v")])
    await nctb.tick(dut.clock, 2)
    assert len(mon.delivers) == 1
    assert int(dut.last_instance.value) == 1
    await nctb.cycles(dut.clock, 14)
    # the decided copy (the last one, tree 1's) goes to the host, first beat 1 cycle after
    # (host_gen's registered beat, which the empty output FIFO offers in the same cycle)
    copy = decide_frame(1, 1, 0, 1, nf.BATCH, [nf.entry(5, 1, b"v")])
    assert [h[2] for h in mon.host] == [host_copy(copy)], mon.host
    assert mon.host[0][0] == mon.delivers[0] + 1
    # a heartbeat repeats instance 2 and decides nothing
    await both_trees(node, 2, 0, 2, nf.HEARTBEAT)
    last_copy = mon.cycle + 1  # the cycle in which the core acts on the copy (after taking it)
    assert len(mon.delivers) == 1
    # node 0 falls silent: node 1 leads epoch 1 exactly `timeout` cycles after the last copy
    await nctb.cycles(dut.clock, cfg["timeout"] + 10)
    first = mon.sends[0]
    assert first["cycle"] - last_copy == cfg["timeout"], (first, last_copy)
    assert (first["kind"], first["epoch"], first["seq"], first["instance"]) == (nf.HEARTBEAT, 1, 0, 2)
    assert int(dut.leader.value) == 1 and int(dut.epoch.value) == 1
    assert await node.counter("timeouts") == 1
    assert await node.counter("delivered") == 1


@cocotb.test()
async def n_minus_1_successive_leader_failures(dut):
    """Node 2 of 3: leaders 0 and 1 both stay silent; two timeouts later node 2 leads."""
    node, mon, cfg = await boot(dut, 2)
    await follow_start(node)
    t0 = mon.cycle - 1  # the core acted on START's last copy (follow_start waited a cycle more)
    await nctb.cycles(dut.clock, 2 * cfg["timeout"] + 10)
    assert await node.counter("timeouts") == 2
    assert int(dut.epoch.value) == 2 and int(dut.leader.value) == 2
    first = mon.sends[0]
    assert first["epoch"] == 2 and first["seq"] == 0
    assert first["cycle"] - t0 == 2 * cfg["timeout"], (first, t0)
    assert await node.read(nctb.STATUS) & nctb.ST_LEADER


@cocotb.test()
async def rsbcast_missing_copy_is_net_fault_and_nothing_after(dut):
    node, mon, cfg = await boot(dut, 1)
    await follow_start(node)
    # tree 1's copy never comes
    await node.stream(decide_frame(0, 1, 0, 1, nf.BATCH, [nf.entry(5, 1, b"v")]), tree=0)
    first_copy = mon.cycle + 1  # the cycle in which the core acts on it
    await nctb.cycles(dut.clock, WINDOW + 5)
    assert [f[1:] for f in mon.faults] == [("tick", 1)], mon.faults  # MISSING_COPY
    # a copy at first + window is still in time: the fault is one cycle later
    assert mon.faults[0][0] - first_copy == WINDOW + 1, (mon.faults, first_copy)
    assert int(dut.state.value) == nctb.FAULTED
    assert await node.read(nctb.STATUS) & nctb.ST_NET_FAULT
    assert await node.counter("net_faults") == 1
    # a complete later message is not delivered after the safe exit, and no timeout either
    await both_trees(node, 2, 0, 2, nf.BATCH, [nf.entry(5, 2, b"w")])
    await nctb.cycles(dut.clock, cfg["timeout"] * 2)
    assert mon.delivers == [] and mon.sends == []
    assert len(mon.faults) == 1, "a faulted node takes no copy (no second fault either)"
    assert await node.counter("ignored") == 2, "both copies ignored in Faulted"
    assert await node.counter("timeouts") == 0
    # re-enable clears the fault (armed again)
    await node.write(nctb.CTRL, 0)
    await node.write(nctb.CTRL, nctb.ENABLE)
    assert await node.read(nctb.STATUS) == nctb.ST_ARMED


@cocotb.test()
async def rsbcast_copy_within_window_delivers_late_copy_faults(dut):
    node, mon, cfg = await boot(dut, 1)
    await follow_start(node)
    e = [nf.entry(5, 1, b"v")]
    # second copy inside the window (its last beat well before WINDOW cycles): delivered
    await both_trees(node, 1, 0, 1, nf.BATCH, e, gap=WINDOW - 15)
    await nctb.tick(dut.clock, 2)
    assert len(mon.delivers) == 1 and mon.faults == []
    # second copy after the window: NET-FAULT when the window closes, the late copy delivers nothing
    e2 = [nf.entry(5, 2, b"w")]
    await both_trees(node, 2, 0, 2, nf.BATCH, e2, gap=WINDOW + 5)
    assert len(mon.delivers) == 1, mon.delivers
    assert [f[1:] for f in mon.faults] == [("tick", 1)], mon.faults
    assert int(dut.state.value) == nctb.FAULTED


@cocotb.test()
async def duplicate_and_seq_gap(dut):
    # three frames (~13 cycles each) inside one window: delta 60 (timeout raised to stay legal)
    node, mon, cfg = await boot(dut, 1, delta=60, timeout=130)
    await follow_start(node)
    e = [nf.entry(5, 1, b"v")]
    await node.stream(decide_frame(0, 1, 0, 1, nf.BATCH, e), tree=0)
    await node.stream(decide_frame(0, 1, 0, 1, nf.BATCH, e), tree=0)  # same copy again
    await node.stream(decide_frame(1, 1, 0, 1, nf.BATCH, e), tree=1)
    await nctb.tick(dut.clock, 2)
    assert len(mon.delivers) == 1
    assert await node.counter("duplicate_copies") == 1
    # seq 3 where 2 is due: a gap on tree 0 is a NET-FAULT at once (SEQ_GAP)
    await node.stream(decide_frame(0, 2, 0, 3, nf.BATCH, e), tree=0)
    await nctb.tick(dut.clock, 2)
    assert [f[1:] for f in mon.faults] == [("rx", 2)], mon.faults
    assert int(dut.state.value) == nctb.FAULTED


@cocotb.test()
async def every_malformed_frame_class_dropped_and_counted(dut):
    # ~30 frames take longer than the default timeout: a long one keeps node 0 the leader
    node, mon, cfg = await boot(dut, 1, timeout=5000)
    await follow_start(node)
    want = {nf.FOREIGN: 0, nf.MALFORMED: 0, nf.OTHER: 0, nf.UNAUTHORIZED: 0}
    for name, frame, client, cls in bad_frames():
        verdict = await node.stream(frame, client=client, tree=0)
        assert verdict == cls, f"{name}: parser verdict {verdict}, expected {cls}"
        want[cls] += 1
    assert await node.counter("foreign") == want[nf.FOREIGN]
    assert await node.counter("malformed") == want[nf.MALFORMED]
    assert await node.counter("ignored") == want[nf.OTHER]
    assert await node.counter("unauthorized") == want[nf.UNAUTHORIZED]
    assert mon.delivers == [] and mon.faults == [] and mon.nl == []
    assert await node.counter("requests_accepted") == 0
    # still a healthy follower: the next good message is delivered
    await both_trees(node, 1, 0, 1, nf.BATCH, [nf.entry(5, 1, b"v")])
    await nctb.tick(dut.clock, 2)
    assert len(mon.delivers) == 1
