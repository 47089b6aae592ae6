//! Fuzz `wire::parse` and `frame::parse_udp`.
//!
//! Checks: neither panics on any input; whatever `wire::parse` accepts, emitting
//! the parsed packet again gives exactly the input bytes (parse is canonical)
//! and a DECIDE's entry iterator yields exactly `count` entries; the input as
//! a frame goes through `frame::parse_udp` (and its UDP payload through
//! `wire::parse`); the input as a UDP payload survives `emit_udp` + `parse_udp`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::{frame, wire};

/// A fixed cluster id (the one the README's worked example and the seeds use).
const CLUSTER: u32 = 0xAABB_CCDD;

fn check(bytes: &[u8], cluster: u32) {
    let Ok((h, p)) = wire::parse(bytes, cluster) else {
        return;
    };
    assert_eq!(h.cluster_id, cluster);
    assert_eq!(h.kind, p.kind());
    if let wire::Packet::Decide(d) = &p {
        assert_eq!(d.entries().count(), d.count as usize);
        for e in d.entries() {
            let item_bytes = e.config_items().count() * wire::CONFIG_ITEM_LEN;
            assert_eq!(item_bytes, if e.is_config() { e.payload.len() } else { 0 });
        }
    }
    let again = p
        .to_vec(h.cluster_id, h.sender)
        .unwrap_or_else(|e| panic!("parse accepted {p:?} but emit refuses it: {e}"));
    assert_eq!(again, bytes, "re-emitting {p:?} gives other bytes");
}

fn check_packet(bytes: &[u8]) {
    check(bytes, CLUSTER);
    // The cluster id the bytes claim, so that the fuzzer gets past that check.
    if let Some(c) = bytes.get(4..8) {
        let claimed = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        if claimed != CLUSTER {
            check(bytes, claimed);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check_packet(data);

    // The input as a whole Ethernet frame.
    if let Ok((_, payload)) = frame::parse_udp(data) {
        check_packet(payload);
    }

    // The input as a UDP payload: framing must give it back unchanged.
    let meta = frame::UdpMeta {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: frame::multicast_mac([239, 78, 67, 1]),
        src_ip: [10, 0, 0, 1],
        dst_ip: [239, 78, 67, 1],
        src_port: 7400,
        dst_port: 7400,
        ttl: 1,
    };
    let mut f = vec![0u8; frame::PAYLOAD_OFFSET + data.len()];
    if data.len() <= usize::from(u16::MAX) - frame::IPV4_LEN - frame::UDP_LEN {
        let n = frame::emit_udp(&meta, data, &mut f).expect("emit_udp of a payload that fits");
        assert_eq!(frame::parse_udp(&f[..n]), Ok((meta, data)));
    } else {
        assert!(frame::emit_udp(&meta, data, &mut f).is_err());
    }
});
