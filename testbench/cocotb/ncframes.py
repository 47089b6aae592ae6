"""Nano-consensus frames built in Python from the byte layout documented in proto/README.md.

This is deliberately an independent implementation of the wire format (nothing is imported
from the Rust crates): Ethernet II / IPv4 (IHL 5) / UDP around a 12-byte common header and a
DECIDE or REQUEST body, all integers big-endian.  If the RTL and this file disagree about an
offset, the benches fail.
"""

import struct

MAGIC = 0x4E43
VERSION = 1
HEADER_LEN = 12
ENTRY_HEADER_LEN = 16
DECIDE_HEADER_LEN = 24
PAYLOAD_OFFSET = 42  # 14 Ethernet + 20 IPv4 + 8 UDP

# kind
REQUEST, DECIDE, REPLY_OK, REPLY_NOT_LEADER, JOIN_REQUEST, STATE_CHUNK = 1, 2, 3, 4, 5, 6
# decide_kind
HEARTBEAT, BATCH, START, CONFIG = 0, 1, 2, 3
ENTRY_FLAG_CONFIG = 0x01
SENDER_NONE = 0xFF

# lowi_core::class (the parser's verdict); UNAUTHORIZED: well formed but refused as not from a
# member (tagged: the card holds no keys; a DECIDE whose sender is not epoch mod node_count)
EXPECTED, OTHER, FOREIGN, MALFORMED, UNAUTHORIZED = 0, 1, 2, 3, 4
TAG_LEN = 8

DECIDE_PORT = 7400
CLIENT_PORT = 7401


def header(kind, cluster_id, body_len, sender, reserved=0, magic=MAGIC, version=VERSION):
    return struct.pack(">HBBIHBB", magic, version, kind, cluster_id, body_len, sender, reserved)


def tagged(pkt, key_id=1, tag=bytes(range(0xA0, 0xA0 + TAG_LEN))):
    """A packet tagged with key `key_id`: header byte 11 (key_id) set and an 8-byte tag after
    the body (body_len unchanged). The tag's value does not matter to a node without the key."""
    return pkt[:11] + bytes([key_id]) + pkt[12:] + tag


def entry(client_id, seq, payload=b"", flags=0, reserved=0):
    return struct.pack(">IHBBQ", client_id, len(payload), flags, reserved, seq) + bytes(payload)


def decide_body(instance, epoch, msg_seq, tree, decide_kind, entries=(), count=None, reserved=0):
    ents = b"".join(entries)
    if count is None:
        count = len(entries)
    return struct.pack(">QIIBBHI", instance, epoch, msg_seq, tree, decide_kind, count, reserved) + ents


def decide(cluster_id, sender, instance, epoch, msg_seq, tree, decide_kind, entries=(), **kw):
    body = decide_body(instance, epoch, msg_seq, tree, decide_kind, entries, **kw)
    return header(DECIDE, cluster_id, len(body), sender) + body


def request(cluster_id, client_id, seq, payload=b"", flags=0):
    body = entry(client_id, seq, payload, flags)
    return header(REQUEST, cluster_id, len(body), SENDER_NONE) + body


def reply_ok(cluster_id, sender, client_id, index, seq, instance):
    body = struct.pack(">IHHQQ", client_id, index, 0, seq, instance)
    return header(REPLY_OK, cluster_id, len(body), sender) + body


def reply_not_leader(cluster_id, sender, client_id, leader, seq, epoch):
    body = struct.pack(">IBBHQII", client_id, leader, 0, 0, seq, epoch, 0)
    return header(REPLY_NOT_LEADER, cluster_id, len(body), sender) + body


def sender_table(n):
    """What pkt_parser's `sender_tab` input carries for node_count `n` (rtl::pkt_parser::
    sender_table; nc_engine's SenderTable holds it): the residues (k * 16**j) % n of the epoch's
    nibbles (j 0..7, k 1..15; 6 bits each, entry 15*j + k - 1), then m * n for m 1..7 (9 bits
    each, from bit 720)."""
    n = n % 64 or 64
    t = 0
    for j in range(8):
        for k in range(1, 16):
            t |= ((k * 16 ** j) % n) << (6 * (15 * j + k - 1))
    for m in range(1, 8):
        t |= (m * n) << (720 + 9 * (m - 1))
    return t


def csum16(data):
    """RFC 1071 one's-complement sum, folded and complemented."""
    if len(data) % 2:
        data = data + b"\x00"
    s = sum(struct.unpack(">%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ip_to_bytes(ip):
    return struct.pack(">I", ip)


def group_mac(group):
    # IPv4 multicast MAC: 01:00:5e + low 23 bits of the group address.
    return bytes([0x01, 0x00, 0x5E, (group >> 16) & 0x7F, (group >> 8) & 0xFF, group & 0xFF])


def udp_frame(payload, dst_port=DECIDE_PORT, src_port=40000, src_ip=0x0A000001,
              dst_ip=0xEF4E4301, src_mac=b"\x02\x00\x00\x00\x00\x01", dst_mac=None,
              udp_csum=True, ttl=1, ident=0, frag=0x4000, proto=17, ethertype=0x0800,
              ihl_byte=0x45):
    """Ethernet II + IPv4 (no options) + UDP around `payload` (the Nano-consensus packet)."""
    if dst_mac is None:
        dst_mac = group_mac(dst_ip)
    udp_len = 8 + len(payload)
    total_len = 20 + udp_len
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", ihl_byte, 0, total_len, ident, frag, ttl, proto, 0,
                               ip_to_bytes(src_ip), ip_to_bytes(dst_ip)))
    struct.pack_into(">H", ip, 10, csum16(bytes(ip)))
    udp = bytearray(struct.pack(">HHHH", src_port, dst_port, udp_len, 0)) + payload
    if udp_csum:
        pseudo = ip_to_bytes(src_ip) + ip_to_bytes(dst_ip) + struct.pack(">BBH", 0, 17, udp_len)
        c = csum16(pseudo + bytes(udp))
        struct.pack_into(">H", udp, 6, c if c != 0 else 0xFFFF)
    eth = dst_mac + src_mac + struct.pack(">H", ethertype)
    return bytes(eth) + bytes(ip) + bytes(udp)


def fix_udp_csum(frame):
    """Recompute the IPv4 header and UDP checksums of `frame` after a payload edit."""
    f = bytearray(frame)
    f[24:26] = b"\x00\x00"
    f[24:26] = struct.pack(">H", csum16(bytes(f[14:34])))
    udp_len = struct.unpack(">H", f[38:40])[0]
    f[40:42] = b"\x00\x00"
    pseudo = bytes(f[26:34]) + struct.pack(">BBH", 0, 17, udp_len)
    c = csum16(pseudo + bytes(f[34:34 + udp_len]))
    f[40:42] = struct.pack(">H", c if c != 0 else 0xFFFF)
    return bytes(f)


def beats(frame):
    """The frame on a 64-bit bus: byte x in beat x // 8, lane x % 8 (lane l = data[8l+7:8l]).
    Yields (data, keep, last)."""
    n = (len(frame) + 7) // 8
    for b in range(n):
        chunk = frame[8 * b:8 * b + 8]
        data = int.from_bytes(chunk, "little")
        keep = (1 << len(chunk)) - 1
        yield data, keep, b == n - 1
