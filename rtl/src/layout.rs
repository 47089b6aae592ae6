//! Where each field sits in a frame, found by asking proto (never written down here): two
//! packets that differ in one field are emitted with `proto::wire` and the bytes that differ
//! are that field. Offsets are frame offsets (the packet starts at `frame::PAYLOAD_OFFSET`).
//! The Ethernet/IPv4/UDP header fields are the standard ones (RFC 791/768), placed with
//! proto's `frame::ETH_LEN`/`IPV4_LEN` (IHL = 5, as `frame::emit_udp` writes).

use proto::frame::{ETH_LEN, IPV4_LEN, PAYLOAD_OFFSET};
use proto::wire::{self, Decide, DecideKind, DecideMeta, Entry, Packet};

/// A 48-bit MAC register value (`*_mac_hi`:`*_mac_lo`, first byte most significant) as the
/// six bytes of a frame.
pub fn mac_bytes(v: u64) -> [u8; 6] {
    let b = v.to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

/// A field: frame offset and width in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Byte offset in the Ethernet frame.
    pub off: usize,
    /// Bytes.
    pub len: usize,
}

/// Every field the packet parser reads.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub eth_dst: Field,
    pub eth_src: Field,
    pub ether_type: Field,
    pub ip_vihl: Field,
    pub ip_total_len: Field,
    pub ip_frag: Field,
    pub ip_proto: Field,
    pub ip_src: Field,
    pub ip_ttl: Field,
    pub ip_csum: Field,
    pub ip_dst: Field,
    pub udp_src: Field,
    pub udp_dst: Field,
    pub udp_len: Field,
    pub udp_csum: Field,
    pub magic: Field,
    pub version: Field,
    pub kind: Field,
    pub cluster: Field,
    pub body_len: Field,
    pub sender: Field,
    pub reserved: Field,
    pub d_instance: Field,
    pub d_epoch: Field,
    pub d_seq: Field,
    pub d_tree: Field,
    pub d_kind: Field,
    pub d_count: Field,
    pub d_reserved: Field,
    pub e_client: Field,
    pub e_len: Field,
    pub e_flags: Field,
    pub e_reserved: Field,
    pub e_seq: Field,
    pub e_payload: Field,
}

fn diff(a: &[u8], b: &[u8], from: usize) -> Field {
    let first = (from..a.len().min(b.len()))
        .find(|&i| a[i] != b[i])
        .expect("fields differ");
    let last = (from..a.len().min(b.len()))
        .rev()
        .find(|&i| a[i] != b[i])
        .expect("fields differ");
    Field {
        off: PAYLOAD_OFFSET + first,
        len: last - first + 1,
    }
}

fn dec(meta: DecideMeta, cluster: u32, sender: u8, entries: &[Entry<'_>]) -> Vec<u8> {
    let len: usize = entries.iter().map(|e| e.wire_len()).sum();
    let mut raw = vec![0u8; len];
    wire::emit_entries(entries.iter(), &mut raw).expect("entries fit");
    Packet::Decide(Decide {
        meta,
        count: entries.len() as u16,
        entries_raw: &raw,
    })
    .to_vec(cluster, sender)
    .expect("valid DECIDE")
}

fn req(e: Entry<'_>) -> Vec<u8> {
    Packet::Request(e)
        .to_vec(0x0102_0304, wire::SENDER_NONE)
        .expect("valid REQUEST")
}

/// The remaining bytes of `0..n` (packet offsets) not covered by `used` (frame offsets).
fn rest(n: usize, base: usize, used: &[Field]) -> Field {
    let free: Vec<usize> = (base..base + n)
        .filter(|&i| {
            !used
                .iter()
                .any(|f| (f.off - PAYLOAD_OFFSET..f.off - PAYLOAD_OFFSET + f.len).contains(&i))
        })
        .collect();
    assert!(
        !free.is_empty() && free.windows(2).all(|w| w[1] == w[0] + 1),
        "one reserved run: {free:?}"
    );
    Field {
        off: PAYLOAD_OFFSET + free[0],
        len: free.len(),
    }
}

impl Layout {
    /// Probe proto.
    pub fn probe() -> Layout {
        let f = |off, len| Field { off, len };
        let m = DecideMeta {
            instance: 1,
            epoch: 1,
            msg_seq: 1,
            tree: 1,
            kind: DecideKind::Heartbeat,
        };
        let base = dec(m, 5, 2, &[]);
        let e = Entry {
            client_id: 1,
            seq: 1,
            flags: 0,
            payload: &[0; 8],
        };
        let b2 = dec(
            DecideMeta {
                kind: DecideKind::Batch,
                ..m
            },
            5,
            2,
            &[e],
        );
        let b3 = dec(
            DecideMeta {
                kind: DecideKind::Batch,
                ..m
            },
            5,
            2,
            &[e, e],
        );
        assert_eq!(&base[..2], &wire::MAGIC.to_be_bytes());
        assert_eq!(base[2], wire::VERSION);
        let magic = f(PAYLOAD_OFFSET, 2);
        let version = f(PAYLOAD_OFFSET + 2, 1);
        // The first byte in which a DECIDE and a REQUEST differ is `kind`.
        let kind = f(diff(&base, &req(e), 0).off, 1);
        assert_eq!(base[kind.off - PAYLOAD_OFFSET], wire::Kind::Decide as u8);
        let cluster = diff(&base, &dec(m, !5, 2, &[]), 0);
        let sender = diff(&base, &dec(m, 5, !2, &[]), 0);
        let body_len = {
            let d = diff(&b2, &b3, 0);
            f(d.off - 1, 2) // the low byte differs (40 vs 56); the field is 16 bits
        };
        let reserved = rest(
            wire::HEADER_LEN,
            0,
            &[magic, version, kind, cluster, body_len, sender],
        );
        let h = wire::HEADER_LEN;
        let d_instance = diff(&base, &dec(DecideMeta { instance: !1, ..m }, 5, 2, &[]), h);
        let d_epoch = diff(&base, &dec(DecideMeta { epoch: !1, ..m }, 5, 2, &[]), h);
        let d_seq = diff(&base, &dec(DecideMeta { msg_seq: !1, ..m }, 5, 2, &[]), h);
        let d_tree = diff(&base, &dec(DecideMeta { tree: 2, ..m }, 5, 2, &[]), h);
        let d_kind = diff(
            &base,
            &dec(
                DecideMeta {
                    kind: DecideKind::Start,
                    ..m
                },
                5,
                2,
                &[],
            ),
            h,
        );
        let d_count = {
            let d = diff(&b2, &b3, h);
            f(d.off - 1, 2)
        };
        let d_reserved = rest(
            wire::DECIDE_HEADER_LEN,
            h,
            &[d_instance, d_epoch, d_seq, d_tree, d_kind, d_count],
        );
        let r = req(e);
        let e_client = diff(&r, &req(Entry { client_id: !1, ..e }), h);
        let e_seq = diff(&r, &req(Entry { seq: !1, ..e }), h);
        let e_flags = diff(
            &r,
            &req(Entry {
                flags: wire::ENTRY_FLAG_CONFIG,
                ..e
            }),
            h,
        );
        let e_len = {
            let d = diff(
                &req(Entry {
                    payload: &[0; 1],
                    ..e
                }),
                &req(Entry {
                    payload: &[0; 2],
                    ..e
                }),
                h,
            );
            f(d.off - 1, 2)
        };
        let e_reserved = rest(
            wire::ENTRY_HEADER_LEN,
            h,
            &[e_client, e_seq, e_flags, e_len],
        );
        let e_payload = {
            let d = diff(
                &r,
                &req(Entry {
                    payload: &[0xFF; 8],
                    ..e
                }),
                h,
            );
            assert_eq!(d.len, 8);
            d
        };
        Layout {
            eth_dst: f(0, 6),
            eth_src: f(6, 6),
            ether_type: f(12, 2),
            ip_vihl: f(ETH_LEN, 1),
            ip_total_len: f(ETH_LEN + 2, 2),
            ip_frag: f(ETH_LEN + 6, 2),
            ip_proto: f(ETH_LEN + 9, 1),
            ip_src: f(ETH_LEN + 12, 4),
            ip_ttl: f(ETH_LEN + 8, 1),
            ip_csum: f(ETH_LEN + 10, 2),
            ip_dst: f(ETH_LEN + 16, 4),
            udp_src: f(ETH_LEN + IPV4_LEN, 2),
            udp_dst: f(ETH_LEN + IPV4_LEN + 2, 2),
            udp_len: f(ETH_LEN + IPV4_LEN + 4, 2),
            udp_csum: f(ETH_LEN + IPV4_LEN + 6, 2),
            magic,
            version,
            kind,
            cluster,
            body_len,
            sender,
            reserved,
            d_instance,
            d_epoch,
            d_seq,
            d_tree,
            d_kind,
            d_count,
            d_reserved,
            e_client,
            e_len,
            e_flags,
            e_reserved,
            e_seq,
            e_payload,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probed_offsets_match_proto_readme_table() {
        // proto/README.md's table for the 64-bit bus: magic at frame byte 42, DECIDE instance
        // at 54, epoch 62, msg_seq 66, tree 70, decide_kind 71, count 72, reserved 74.
        let l = Layout::probe();
        assert_eq!(
            (l.magic.off, l.cluster.off, l.body_len.off, l.sender.off),
            (42, 46, 50, 52)
        );
        assert_eq!((l.d_instance.off, l.d_epoch.off, l.d_seq.off), (54, 62, 66));
        assert_eq!(
            (l.d_tree.off, l.d_kind.off, l.d_count.off, l.d_reserved),
            (70, 71, 72, Field { off: 74, len: 4 })
        );
        assert_eq!(
            (
                l.e_client.off,
                l.e_len.off,
                l.e_flags.off,
                l.e_reserved.off,
                l.e_seq.off,
                l.e_payload.off
            ),
            (54, 58, 60, 61, 62, 70)
        );
        assert_eq!(l.reserved, Field { off: 53, len: 1 });
    }
}
