"""A node under test with a per-cycle monitor, and the frames a leader/follower exchange."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

import ncframes as nf
import nctb

# Source MAC / IPv4 and TTL of generated frames: the reset values of the src_mac_hi/src_mac_lo/
# src_ip and ttl registers (proto/README.md's register table)
GEN_SRC_MAC = bytes([0x02, 0x4E, 0x43, 0x00, 0x00, 0x01])
GEN_SRC_IP = (10 << 24) | (78 << 16) | (67 << 8) | 1
GEN_TTL = 16

CLUSTER = 9
# A legal small configuration: timeout 70 > max(2*delta, loop_period + delta) + drift = 61.
# (ttl: the reset value, written again at every boot because a bench that changes it leaves it
# changed for the next test in the same simulation)
CFG = dict(node_count=3, cluster_id=CLUSTER, trees=2, loop_period=40, delta=20, drift=1,
           timeout=70, batch_max=4, fifo_depth=4, ttl=GEN_TTL)
WINDOW = CFG["delta"] + CFG["drift"]


class Monitor:
    """Samples one node's outputs in the read-only phase of every cycle."""

    def __init__(self, node):
        self.node = node
        self.p = node.p
        self.cycle = 0
        self.sends = []      # dicts: cycle, kind, count, instance, epoch, seq
        self.lead = []       # cycles with lead_deliver
        self.delivers = []   # cycles with rx_deliver
        self.faults = []     # (cycle, "tick"/"rx", code)
        self.oks = []        # (cycle, client, seq, instance, index, payload, len)
        self.leader_changes = []  # (cycle, epoch after)
        self.nl = []         # cycles with a NOT_LEADER reply
        # frames as (first cycle, last cycle, bytes): generated per tree (g*), host port (h_*),
        # client port out (r_*)
        self._streams = [nctb.StreamFrames(self.p, x) for x in ("g0", "g1", "g2", "g3", "h", "r")]
        self.gen = [s.frames for s in self._streams[:4]]
        self.host = self._streams[4].frames
        self.replies = self._streams[5].frames
        cocotb.start_soon(self.run())

    async def run(self):
        p = self.p
        while True:
            await RisingEdge(self.node.clock)
            self.cycle += 1
            await ReadOnly()
            if int(p.send.value):
                self.sends.append(dict(cycle=self.cycle, kind=int(p.send_kind.value),
                                       count=int(p.send_count.value),
                                       instance=int(p.send_instance.value),
                                       epoch=int(p.send_epoch.value), seq=int(p.send_seq.value)))
            if int(p.lead_deliver.value):
                self.lead.append(self.cycle)
            if int(p.rx_deliver.value):
                self.delivers.append(self.cycle)
            if int(p.tick_fault.value):
                self.faults.append((self.cycle, "tick", int(p.tick_fault_code.value)))
            if int(p.rx_fault.value):
                self.faults.append((self.cycle, "rx", int(p.rx_fault_code.value)))
            if int(p.tick_leader_changed.value) or int(p.rx_leader_changed.value):
                self.leader_changes.append(self.cycle)
            if int(p.nl_reply.value):
                self.nl.append(self.cycle)
            for s in self._streams:
                s.sample(self.cycle)
            if int(p.ok_valid.value):
                self.oks.append((self.cycle, int(p.ok_client.value), int(p.ok_seq.value),
                                 int(p.ok_instance.value), int(p.ok_index.value),
                                 int(p.ok_payload.value), int(p.ok_len.value)))

    def state(self):
        return int(self.p.state.value)


async def make_node(dut, node_id, prefix="", **over):
    node = nctb.Node(dut, prefix)
    cfg = dict(CFG, node_id=node_id)
    cfg.update(over)
    await node.reset()
    await node.configure(**cfg)
    mon = Monitor(node)
    await node.write(nctb.CTRL, nctb.ENABLE)
    return node, mon, cfg


def tree_frame(packet, tree, cluster_sender=0):
    """A DECIDE packet as it arrives on tree `tree` (its group, the decide port)."""
    return nf.udp_frame(packet, dst_port=nf.DECIDE_PORT, src_ip=0x0A000001 + cluster_sender,
                        dst_ip=0xEF4E4301 + tree)


def decide_frame(tree, instance, epoch, seq, kind, entries=(), sender=None, cluster=CLUSTER):
    if sender is None:
        sender = epoch % CFG["node_count"]
    pkt = nf.decide(cluster, sender, instance, epoch, seq, tree, kind, entries)
    return tree_frame(pkt, tree, sender)


def client_frame(client_id, seq, payload=b"x", cluster=CLUSTER):
    return nf.udp_frame(nf.request(cluster, client_id, seq, payload), dst_port=nf.CLIENT_PORT,
                        src_ip=client_ip(client_id), dst_ip=0x0A000001)


async def both_trees(node, instance, epoch, seq, kind, entries=(), gap=0):
    """A message's copies on tree 0 then tree 1 (`gap` idle cycles between them)."""
    v0 = await node.stream(decide_frame(0, instance, epoch, seq, kind, entries), tree=0)
    await nctb.cycles(node.clock, gap)
    v1 = await node.stream(decide_frame(1, instance, epoch, seq, kind, entries), tree=1)
    assert (v0, v1) == (nf.EXPECTED, nf.EXPECTED), f"parser verdicts {v0}, {v1}"


# The host_mac_hi/lo, host_ip and port registers' reset values.
HOST_MAC = bytes([0x02, 0x4E, 0x43, 0x00, 0x00, 0xFE])
HOST_IP = (10 << 24) | (78 << 16) | (67 << 8) | 254
HOST_PORT = 7402
# Where client_frame's requests come from (udp_frame's default source MAC and port).
CLIENT_MAC, CLIENT_PORT_SRC = b"\x02\x00\x00\x00\x00\x01", 40000


def client_ip(client_id):
    return 0x0A000100 + client_id


def host_copy(decide_frame_bytes, ttl=GEN_TTL):
    """The host-port frame for a decision: the decided copy's UDP payload from this node's
    source MAC/IP and the decide port to the host's MAC/IP/port (TTL `ttl`, UDP checksum 0)."""
    udp_len = int.from_bytes(decide_frame_bytes[38:40], "big")
    payload = decide_frame_bytes[nf.PAYLOAD_OFFSET:34 + udp_len]
    return nf.udp_frame(payload, dst_port=HOST_PORT, src_port=nf.DECIDE_PORT, src_ip=GEN_SRC_IP,
                        dst_ip=HOST_IP, src_mac=GEN_SRC_MAC, dst_mac=HOST_MAC, udp_csum=False,
                        ttl=ttl, frag=0x4000)


def reply_frame(packet, client_id, ttl=GEN_TTL):
    """A client reply frame: from this node's source MAC/IP and the client port to the address
    the request came from (TTL `ttl`, UDP checksum 0)."""
    return nf.udp_frame(packet, dst_port=CLIENT_PORT_SRC, src_port=nf.CLIENT_PORT,
                        src_ip=GEN_SRC_IP, dst_ip=client_ip(client_id), src_mac=GEN_SRC_MAC,
                        dst_mac=CLIENT_MAC, udp_csum=False, ttl=ttl, frag=0x4000)
GROUPS = [0xEF4E4301, 0xEF4E4302, 0xEF4E4303, 0xEF4E4304]  # tree_group reset values


def generated_decide(cluster, sender, tree, kind, instance, epoch, seq, entries=(), port=7400,
                     ttl=GEN_TTL):
    """The DECIDE frame pkt_gen must put on tree `tree`, built from proto/README.md's layout:
    entries are (client, seq, payload); UDP checksum 0 ("none"), DF set as proto emits."""
    ents = [nf.entry(c, s, p) for c, s, p in entries]
    pkt = nf.decide(cluster, sender, instance, epoch, seq, tree, kind, ents)
    return nf.udp_frame(pkt, dst_port=port, src_port=port, src_ip=GEN_SRC_IP,
                        dst_ip=GROUPS[tree], src_mac=GEN_SRC_MAC, udp_csum=False, ttl=ttl,
                        frag=0x4000)

