"""Every malformed / foreign / other-kind / unauthorized frame class, built from
proto/README.md's tables (shared by the pkt_parser and nc_node benches)."""

import ncframes as nf


def bad_frames():
    """(name, frame, client port?, expected class) for every malformed/foreign/other/unauthorized
    class (node_count any: the DECIDEs are of epoch 0, whose leader is node 0)."""
    good = nf.decide(9, 0, 1, 0, 1, 0, nf.BATCH, [nf.entry(5, 1, b"v")])
    req = nf.request(9, 4, 1, b"r")

    def tf(pkt, **kw):
        return nf.udp_frame(pkt, dst_port=nf.DECIDE_PORT, dst_ip=0xEF4E4301, **kw)

    def cf(pkt, **kw):
        return nf.udp_frame(pkt, dst_port=nf.CLIENT_PORT, dst_ip=0x0A000001, **kw)

    def patch(pkt, off, b):
        p = bytearray(pkt)
        p[off:off + len(b)] = b
        return bytes(p)

    ip_bad = bytearray(tf(good))
    ip_bad[14 + 8] ^= 1  # TTL changed, checksum not fixed
    udp_bad = bytearray(tf(good))
    udp_bad[-1] ^= 0x20
    udp_len_bad = bytearray(tf(good))
    udp_len_bad[38:40] = (len(good) + 8 - 1).to_bytes(2, "big")
    hb = nf.decide(9, 0, 1, 0, 1, 0, nf.HEARTBEAT)
    return [
        ("wrong magic", tf(patch(good, 0, b"\x4e\x44")), False, nf.FOREIGN),
        ("wrong version", tf(patch(good, 2, b"\x02")), False, nf.FOREIGN),
        ("other cluster", tf(patch(good, 4, (10).to_bytes(4, "big"))), False, nf.FOREIGN),
        ("packet < 4 bytes", tf(b"NC\x01"), False, nf.FOREIGN),
        ("other UDP port", nf.udp_frame(good, dst_port=7999), False, nf.FOREIGN),
        ("not UDP", tf(good, proto=6), False, nf.FOREIGN),
        ("not IPv4", tf(good, ethertype=0x86DD), False, nf.FOREIGN),
        ("fragment", tf(good, frag=0x2000), False, nf.FOREIGN),
        ("header cut short", tf(good[:10]), False, nf.MALFORMED),
        ("kind 0", tf(patch(good, 3, b"\x00")), False, nf.MALFORMED),
        ("kind 7", tf(patch(good, 3, b"\x07")), False, nf.MALFORMED),
        ("body_len too large", tf(patch(good, 8, (len(good) - 11).to_bytes(2, "big"))), False, nf.MALFORMED),
        ("trailing byte", tf(good + b"\x00"), False, nf.MALFORMED),
        ("key_id 1 without a tag", tf(patch(good, 11, b"\x01")), False, nf.MALFORMED),
        ("tagged, body_len counting the tag", tf(patch(nf.tagged(good), 8, (len(good) - 4).to_bytes(2, "big"))), False, nf.MALFORMED),
        ("DECIDE body short", tf(nf.header(nf.DECIDE, 9, 8, 0) + bytes(8)), False, nf.MALFORMED),
        ("DECIDE reserved", tf(nf.decide(9, 0, 1, 0, 1, 0, nf.BATCH, [nf.entry(5, 1)], reserved=1)), False, nf.MALFORMED),
        ("decide_kind 4", tf(patch(hb, 12 + 17, b"\x04")), False, nf.MALFORMED),
        ("heartbeat with count 1", tf(nf.decide(9, 0, 1, 0, 1, 0, nf.HEARTBEAT, count=1)), False, nf.MALFORMED),
        ("batch with count 0", tf(nf.decide(9, 0, 1, 0, 1, 0, nf.BATCH, [nf.entry(5, 1)], count=0)), False, nf.MALFORMED),
        ("batch count beyond body", tf(nf.decide(9, 0, 1, 0, 1, 0, nf.BATCH, [nf.entry(5, 1)], count=3)), False, nf.MALFORMED),
        ("IPv4 header checksum", bytes(ip_bad), False, nf.MALFORMED),
        ("UDP checksum", bytes(udp_bad), False, nf.MALFORMED),
        ("UDP length", bytes(udp_len_bad), False, nf.MALFORMED),
        ("IPv4 options (IHL 6)", tf(good, ihl_byte=0x46), False, nf.MALFORMED),
        ("REQUEST seq 0", cf(nf.request(9, 4, 0, b"r")), True, nf.MALFORMED),
        ("REQUEST entry flags", cf(nf.request(9, 4, 1, b"r", flags=0x02)), True, nf.MALFORMED),
        ("REQUEST entry reserved", cf(patch(req, 12 + 7, b"\x01")), True, nf.MALFORMED),
        ("REQUEST payload_len past end", cf(patch(req, 12 + 4, b"\x00\x09")), True, nf.MALFORMED),
        # a valid batch whose UDP payload (9002 bytes) exceeds MAX_PACKET_LEN = 8972
        ("oversize batch", tf(nf.decide(9, 0, 1, 0, 1, 0, nf.BATCH, [nf.entry(5, 1, bytes(8950))])), False, nf.MALFORMED),
        ("REQUEST on a tree port", tf(req), False, nf.OTHER),
        ("DECIDE on the client port", cf(good), True, nf.OTHER),
        ("REPLY_OK on a tree port", tf(nf.reply_ok(9, 0, 1, 0, 1, 1)), False, nf.OTHER),
        # issue 18: well formed, but not from a member as far as the card can tell
        ("DECIDE not from its epoch's leader", tf(nf.decide(9, 1, 1, 0, 1, 0, nf.BATCH, [nf.entry(5, 1, b"v")])), False, nf.UNAUTHORIZED),
        ("DECIDE from a client id", tf(nf.decide(9, nf.SENDER_NONE, 1, 0, 1, 0, nf.HEARTBEAT)), False, nf.UNAUTHORIZED),
        ("DECIDE tagged", tf(nf.tagged(good, key_id=7)), False, nf.UNAUTHORIZED),
        ("REPLY_OK tagged on a tree port", tf(nf.tagged(nf.reply_ok(9, 0, 1, 0, 1, 1))), False, nf.UNAUTHORIZED),
        ("REQUEST tagged", cf(nf.tagged(req, key_id=255)), True, nf.UNAUTHORIZED),
        ("DECIDE tagged on the client port", cf(nf.tagged(good)), True, nf.UNAUTHORIZED),
    ]
