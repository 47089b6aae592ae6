//! Property tests for the wire format, the framing, the register map and state transfer.
//!
//! Generated values are owned (`Vec<u8>` payloads); the borrowed `wire::Packet`
//! is built from them for each emit/parse.

use proptest::prelude::*;
use proto::frame::{self, FrameError, PAYLOAD_OFFSET, UdpMeta};
use proto::regs::{self, Access, Config, REGISTERS, RegError};
use proto::transfer::{Reassembly, Snapshot, chunk_packets, crc32};
use proto::wire::{
    self, CHUNK_FLAG_ERROR, CHUNK_FLAG_LAST, CONFIG_ITEM_LEN, ConfigItem, Decide, DecideKind,
    DecideMeta, ENTRY_FLAG_CONFIG, Entry, Header, JoinRequest, Kind, Packet, ParseError, Recover,
    ReplyNotLeader, ReplyOk, StateChunk,
};

// ---------------------------------------------------------------------------
// Owned packet values
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
struct OwnedEntry {
    client_id: u32,
    seq: u64,
    flags: u8,
    payload: Vec<u8>,
}

impl OwnedEntry {
    fn entry(&self) -> Entry<'_> {
        Entry {
            client_id: self.client_id,
            seq: self.seq,
            flags: self.flags,
            payload: &self.payload,
        }
    }
}

#[derive(Clone, Debug)]
struct OwnedChunk {
    transfer_id: u32,
    flags: u8,
    instance: u64,
    offset: u64,
    total_len: u64,
    crc32: u32,
    timeout: u32,
    data: Vec<u8>,
}

#[derive(Clone, Debug)]
enum Owned {
    Request(OwnedEntry),
    Decide {
        meta: DecideMeta,
        entries: Vec<OwnedEntry>,
        /// The entries as emitted by `wire::emit_entries` (what `Decide::entries_raw` holds).
        raw: Vec<u8>,
    },
    ReplyOk(ReplyOk),
    ReplyNotLeader(ReplyNotLeader),
    JoinRequest(JoinRequest),
    StateChunk(OwnedChunk),
    Recover(Recover),
}

impl Owned {
    fn packet(&self) -> Packet<'_> {
        match self {
            Owned::Request(e) => Packet::Request(e.entry()),
            Owned::Decide { meta, entries, raw } => Packet::Decide(Decide {
                meta: *meta,
                count: entries.len() as u16,
                entries_raw: raw,
            }),
            Owned::ReplyOk(r) => Packet::ReplyOk(*r),
            Owned::ReplyNotLeader(r) => Packet::ReplyNotLeader(*r),
            Owned::JoinRequest(j) => Packet::JoinRequest(*j),
            Owned::Recover(r) => Packet::Recover(*r),
            Owned::StateChunk(c) => Packet::StateChunk(StateChunk {
                transfer_id: c.transfer_id,
                flags: c.flags,
                instance: c.instance,
                offset: c.offset,
                total_len: c.total_len,
                crc32: c.crc32,
                timeout: c.timeout,
                data: &c.data,
            }),
        }
    }
}

fn decide(meta: DecideMeta, entries: Vec<OwnedEntry>) -> Owned {
    let borrowed: Vec<Entry<'_>> = entries.iter().map(OwnedEntry::entry).collect();
    let mut raw = vec![0u8; borrowed.iter().map(Entry::wire_len).sum()];
    let n = wire::emit_entries(borrowed.iter(), &mut raw).expect("emit_entries");
    assert_eq!(n, raw.len());
    Owned::Decide { meta, entries, raw }
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// Small values and edge values are more interesting than uniform ones.
fn u64_any() -> impl Strategy<Value = u64> {
    prop_oneof![
        2 => any::<u64>(),
        1 => 0u64..16,
        1 => Just(u64::MAX),
        1 => (u64::MAX - 16)..=u64::MAX,
    ]
}

fn u32_any() -> impl Strategy<Value = u32> {
    prop_oneof![3 => any::<u32>(), 1 => 0u32..16, 1 => Just(u32::MAX)]
}

fn seq() -> impl Strategy<Value = u64> {
    prop_oneof![3 => 1u64..1000, 1 => 1u64..=u64::MAX, 1 => Just(u64::MAX)]
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..=max)
}

fn config_payload() -> impl Strategy<Value = Vec<u8>> {
    let addr = prop_oneof![
        3 => proptest::sample::select(REGISTERS.iter().map(|r| r.addr).collect::<Vec<_>>()),
        1 => any::<u16>(),
    ];
    proptest::collection::vec((addr, u32_any()), 1..8).prop_map(|items| {
        items
            .into_iter()
            .flat_map(|(addr, value)| ConfigItem { addr, value }.to_bytes())
            .collect()
    })
}

fn plain_entry(max_payload: usize) -> impl Strategy<Value = OwnedEntry> {
    (u32_any(), seq(), bytes(max_payload)).prop_map(|(client_id, seq, payload)| OwnedEntry {
        client_id,
        seq,
        flags: 0,
        payload,
    })
}

fn config_entry() -> impl Strategy<Value = OwnedEntry> {
    (u32_any(), seq(), config_payload()).prop_map(|(client_id, seq, payload)| OwnedEntry {
        client_id,
        seq,
        flags: ENTRY_FLAG_CONFIG,
        payload,
    })
}

fn meta(kind: DecideKind) -> impl Strategy<Value = DecideMeta> {
    (u64_any(), u32_any(), u32_any(), any::<u8>()).prop_map(
        move |(instance, epoch, msg_seq, tree)| DecideMeta {
            instance,
            epoch,
            msg_seq,
            tree,
            kind,
        },
    )
}

fn state_chunk() -> impl Strategy<Value = OwnedChunk> {
    let flags = proptest::sample::select(vec![
        0,
        CHUNK_FLAG_LAST,
        CHUNK_FLAG_ERROR,
        CHUNK_FLAG_LAST | CHUNK_FLAG_ERROR,
    ]);
    (
        any::<u32>(),
        flags,
        u64_any(),
        u64_any(),
        u64_any(),
        (any::<u32>(), any::<u32>()),
        bytes(600),
    )
        .prop_map(
            |(transfer_id, flags, instance, off, extra, (crc32, timeout), data)| {
                let len = data.len() as u64;
                let (offset, total_len) = if flags & CHUNK_FLAG_ERROR != 0 {
                    // A refusal: offset and total are not checked.
                    (off, extra)
                } else {
                    let offset = off.min(u64::MAX - len);
                    let end = offset + len;
                    let total = if flags & CHUNK_FLAG_LAST != 0 {
                        end
                    } else {
                        end + extra.min(u64::MAX - end)
                    };
                    (offset, total)
                };
                OwnedChunk {
                    transfer_id,
                    flags,
                    instance,
                    offset,
                    total_len,
                    crc32,
                    timeout,
                    data,
                }
            },
        )
}

fn owned_packet() -> impl Strategy<Value = Owned> {
    prop_oneof![
        plain_entry(1200).prop_map(Owned::Request),
        config_entry().prop_map(Owned::Request),
        meta(DecideKind::Heartbeat).prop_map(|m| decide(m, vec![])),
        meta(DecideKind::Start).prop_map(|m| decide(m, vec![])),
        (
            meta(DecideKind::Batch),
            proptest::collection::vec(plain_entry(200), 1..20)
        )
            .prop_map(|(m, es)| decide(m, es)),
        (meta(DecideKind::Config), config_entry()).prop_map(|(m, e)| decide(m, vec![e])),
        (u32_any(), seq(), u64_any(), any::<u16>()).prop_map(
            |(client_id, seq, instance, index)| {
                Owned::ReplyOk(ReplyOk {
                    client_id,
                    seq,
                    instance,
                    index,
                })
            }
        ),
        (u32_any(), seq(), any::<u8>(), u32_any()).prop_map(|(client_id, seq, leader, epoch)| {
            Owned::ReplyNotLeader(ReplyNotLeader {
                client_id,
                seq,
                leader,
                epoch,
            })
        }),
        (any::<u32>(), u32_any(), u64_any(), u64_any()).prop_map(
            |(transfer_id, max_chunk, min_instance, have)| {
                Owned::JoinRequest(JoinRequest {
                    transfer_id,
                    max_chunk,
                    min_instance,
                    have,
                })
            }
        ),
        state_chunk().prop_map(Owned::StateChunk),
        (
            u32_any(),
            u32_any(),
            u64_any(),
            u64_any(),
            any::<u8>(),
            u32_any()
        )
            .prop_map(|(round, epoch, a, b, vote, timeout)| {
                Owned::Recover(Recover {
                    round,
                    epoch,
                    lins: a.min(b),
                    top: a.max(b),
                    vote,
                    timeout,
                })
            }),
    ]
}

#[derive(Clone, Debug)]
enum Mutation {
    /// XOR byte `at % len` with `mask` (non-zero).
    Flip { at: usize, mask: u8 },
    /// Set byte `at % len` to `v`.
    Set { at: usize, v: u8 },
    /// Keep only the first `n % (len + 1)` bytes.
    Truncate(usize),
    /// Append bytes.
    Extend(Vec<u8>),
    /// Remove byte `at % len`.
    Remove(usize),
    /// Insert `v` before byte `at % (len + 1)`.
    Insert { at: usize, v: u8 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 1u8..=255).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(at, v)| Mutation::Set { at, v }),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => bytes(24).prop_map(Mutation::Extend),
        1 => any::<usize>().prop_map(Mutation::Remove),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, v)| Mutation::Insert { at, v }),
    ]
}

fn mutate(b: &mut Vec<u8>, m: &Mutation) {
    let len = b.len();
    match m {
        Mutation::Flip { at, mask } if len > 0 => b[at % len] ^= mask,
        Mutation::Set { at, v } if len > 0 => b[at % len] = *v,
        Mutation::Truncate(n) => b.truncate(n % (len + 1)),
        Mutation::Extend(x) => b.extend_from_slice(x),
        Mutation::Remove(at) if len > 0 => {
            b.remove(at % len);
        }
        Mutation::Insert { at, v } => b.insert(at % (len + 1), *v),
        _ => {}
    }
}

// ---------------------------------------------------------------------------
// Checks shared by several properties
// ---------------------------------------------------------------------------

const CLUSTER: u32 = 0xAABB_CCDD;

/// Whatever `parse` accepts must re-emit to exactly the same bytes (parse is canonical),
/// and the entry iterator of a DECIDE must yield exactly `count` entries.
fn check_canonical(bytes: &[u8], cluster: u32) -> Result<(), TestCaseError> {
    if let Ok((h, p)) = wire::parse(bytes, cluster) {
        prop_assert_eq!(h.cluster_id, cluster);
        prop_assert_eq!(h.kind, p.kind());
        if let Packet::Decide(d) = &p {
            prop_assert_eq!(d.entries().count(), d.count as usize);
        }
        let again = p.to_vec(h.cluster_id, h.sender);
        prop_assert!(
            again.is_ok(),
            "parse accepted what emit refuses: {:?}",
            again
        );
        // A tagged packet re-emits as its untagged self (the tag is auth's business).
        let plain = proto::auth::strip(bytes);
        prop_assert_eq!(h.key_id == 0, plain.len() == bytes.len());
        prop_assert_eq!(
            again.unwrap(),
            plain.as_ref(),
            "re-emitting {:?} differs",
            p
        );
    }
    Ok(())
}

/// Parse with a fixed cluster id and with the one the bytes claim (to get past that check).
fn check_parse_any(bytes: &[u8]) -> Result<(), TestCaseError> {
    check_canonical(bytes, CLUSTER)?;
    if bytes.len() >= 8 {
        let claimed = u32::from_be_bytes(bytes[4..8].try_into().unwrap());
        check_canonical(bytes, claimed)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// wire
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Every packet kind, tagged with a random key: it parses to the same packet, verifies
    /// with that key, and any flipped bit, another key or a ring without the id is refused.
    #[test]
    fn every_tagged_packet_verifies_and_every_change_is_refused(
        o in owned_packet(),
        cluster in u32_any(),
        sender in any::<u8>(),
        id in 1u8..=255,
        key in any::<[u8; 16]>(),
        flip in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        use proto::auth::{self, AuthError, Keyring};
        let p = o.packet();
        let mut bytes = p.to_vec(cluster, sender).expect("a valid packet emits");
        let plain = bytes.clone();
        let mut ring = Keyring::new();
        ring.insert(id, key).unwrap();
        auth::seal_vec(&mut bytes, &ring, id).unwrap();
        prop_assert_eq!(bytes.len(), plain.len() + wire::TAG_LEN);
        let (h, q) = wire::parse(&bytes, cluster).expect("a tagged packet parses");
        prop_assert_eq!(h.key_id, id);
        prop_assert_eq!(q, p);
        prop_assert_eq!(auth::verify(&bytes, &ring, true), Ok(plain.len()));
        let stripped = auth::strip(&bytes);
        prop_assert_eq!(stripped.as_ref(), &plain[..]);
        let mut t = bytes.clone();
        let i = flip.index(t.len());
        t[i] ^= 1 << bit;
        prop_assert!(auth::verify(&t, &ring, true).is_err(), "flipped byte {} bit {}", i, bit);
        let mut other = Keyring::new();
        let mut k2 = key;
        k2[0] ^= 1;
        other.insert(id, k2).unwrap();
        prop_assert_eq!(auth::verify(&bytes, &other, true), Err(AuthError::BadTag));
        prop_assert_eq!(auth::verify(&bytes, &Keyring::new(), false), Err(AuthError::UnknownKey(id)));
    }

    #[test]
    fn every_packet_kind_round_trips(o in owned_packet(), cluster in u32_any(), sender in any::<u8>()) {
        let p = o.packet();
        let bytes = p.to_vec(cluster, sender).expect("a valid packet emits");
        prop_assert_eq!(bytes.len(), p.wire_len());

        // `emit` into a larger buffer writes the same bytes and reports the length.
        let mut buf = vec![0x5Au8; bytes.len() + 7];
        prop_assert_eq!(p.emit(cluster, sender, &mut buf), Ok(bytes.len()));
        prop_assert_eq!(&buf[..bytes.len()], &bytes[..]);
        // A buffer one byte short is refused.
        prop_assert_eq!(
            p.emit(cluster, sender, &mut buf[..bytes.len() - 1]),
            Err(wire::EmitError::BufferTooSmall { needed: bytes.len() })
        );

        let (h, q) = wire::parse(&bytes, cluster).expect("an emitted packet parses");
        prop_assert_eq!(h, Header { kind: p.kind(), cluster_id: cluster, sender, key_id: 0 });
        if let (Packet::Decide(d), Owned::Decide { meta, entries, .. }) = (&q, &o) {
            prop_assert_eq!(d.meta, *meta);
            prop_assert_eq!(d.count as usize, entries.len());
            let got: Vec<Entry<'_>> = d.entries().collect();
            let want: Vec<Entry<'_>> = entries.iter().map(OwnedEntry::entry).collect();
            prop_assert_eq!(got, want);
            if meta.kind == DecideKind::Config {
                let items: Vec<ConfigItem> = d.entries().next().unwrap().config_items().collect();
                prop_assert_eq!(items.len() * CONFIG_ITEM_LEN, entries[0].payload.len());
                let back: Vec<u8> = items.iter().flat_map(|i| i.to_bytes()).collect();
                prop_assert_eq!(&back, &entries[0].payload);
            }
        }
        prop_assert_eq!(q, p);
    }

    #[test]
    fn other_cluster_is_foreign(o in owned_packet(), cluster in any::<u32>(), other in any::<u32>(), sender in any::<u8>()) {
        prop_assume!(cluster != other);
        let bytes = o.packet().to_vec(cluster, sender).unwrap();
        prop_assert_eq!(wire::parse(&bytes, other), Err(ParseError::Foreign("cluster_id")));
    }

    #[test]
    fn mutated_packets_never_panic_and_parse_canonically(
        o in owned_packet(),
        ms in proptest::collection::vec(mutation(), 1..4),
    ) {
        let mut bytes = o.packet().to_vec(CLUSTER, 1).unwrap();
        for m in &ms {
            mutate(&mut bytes, m);
        }
        check_parse_any(&bytes)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn random_bytes_never_panic_and_parse_canonically(b in bytes(2000)) {
        check_parse_any(&b)?;
    }

    /// Random bodies behind a plausible header (right magic, version, kind, cluster and
    /// body_len), so that the body checks are reached.
    #[test]
    fn random_bodies_never_panic_and_parse_canonically(
        kind in 0u8..9,
        sender in any::<u8>(),
        reserved in prop_oneof![4 => Just(0u8), 1 => any::<u8>()],
        body in prop_oneof![
            bytes(64),
            // A DECIDE-shaped body: decide kind 0..4, count 0..3, zero reserved.
            (bytes(16), 0u8..5, 0u16..3, bytes(120)).prop_map(|(a, k, c, rest)| {
                let mut b = a;
                b.resize(16, 0);
                b.push(0);
                b.push(k);
                b.extend_from_slice(&c.to_be_bytes());
                b.extend_from_slice(&[0; 4]);
                b.extend_from_slice(&rest);
                b
            }),
        ],
    ) {
        let mut b = vec![0x4E, 0x43, wire::VERSION, kind];
        b.extend_from_slice(&CLUSTER.to_be_bytes());
        b.extend_from_slice(&(body.len() as u16).to_be_bytes());
        b.push(sender);
        b.push(reserved);
        b.extend_from_slice(&body);
        if reserved != 0 {
            // A key id: the tag's 8 bytes follow the body.
            b.extend_from_slice(&[0x5A; wire::TAG_LEN]);
        }
        check_parse_any(&b)?;
    }
}

#[test]
fn every_kind_byte_is_covered() {
    // The generators above cover every `Kind`; keep this list in step with `wire::Kind`.
    for k in 1..=7u8 {
        assert!(Kind::from_u8(k).is_some());
    }
    assert!(Kind::from_u8(0).is_none() && Kind::from_u8(8).is_none());
    for k in 0..=3u8 {
        assert!(DecideKind::from_u8(k).is_some());
    }
    assert!(DecideKind::from_u8(4).is_none());
}

// ---------------------------------------------------------------------------
// frame
// ---------------------------------------------------------------------------

fn udp_meta() -> impl Strategy<Value = UdpMeta> {
    (
        any::<[u8; 6]>(),
        any::<[u8; 6]>(),
        any::<[u8; 4]>(),
        any::<[u8; 4]>(),
        any::<u16>(),
        any::<u16>(),
        any::<u8>(),
    )
        .prop_map(
            |(src_mac, dst_mac, src_ip, dst_ip, src_port, dst_port, ttl)| UdpMeta {
                src_mac,
                dst_mac,
                src_ip,
                dst_ip,
                src_port,
                dst_port,
                ttl,
            },
        )
}

fn emit_frame(m: &UdpMeta, payload: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; PAYLOAD_OFFSET + payload.len()];
    let n = frame::emit_udp(m, payload, &mut buf).expect("emit_udp");
    assert_eq!(n, buf.len());
    buf
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn frame_round_trips(m in udp_meta(), payload in bytes(1500), pad in bytes(60)) {
        let f = emit_frame(&m, &payload);
        let (got, p) = frame::parse_udp(&f).expect("an emitted frame parses");
        prop_assert_eq!(got, m);
        prop_assert_eq!(p, &payload[..]);
        // Bytes after the IPv4 packet (Ethernet padding) are not payload.
        let mut padded = f.clone();
        padded.extend_from_slice(&pad);
        let (got, p) = frame::parse_udp(&padded).expect("padding is ignored");
        prop_assert_eq!(got, m);
        prop_assert_eq!(p, &payload[..]);
        // A buffer one byte short is refused.
        let mut short = vec![0u8; f.len() - 1];
        prop_assert!(frame::emit_udp(&m, &payload, &mut short).is_err());
    }

    /// Flipping any single byte of the IPv4 header or the UDP payload is caught by the
    /// header or UDP checksum (or changes what parses, never silently nothing).
    #[test]
    fn single_byte_corruption_is_detected(
        m in udp_meta(),
        payload in bytes(300),
        at in any::<usize>(),
        mask in 1u8..=255,
    ) {
        let f = emit_frame(&m, &payload);
        let ip = frame::ETH_LEN..frame::ETH_LEN + frame::IPV4_LEN;
        let positions: Vec<usize> = ip.chain(PAYLOAD_OFFSET..f.len()).collect();
        let i = positions[at % positions.len()];
        let mut bad = f.clone();
        bad[i] ^= mask;
        match frame::parse_udp(&bad) {
            Err(_) => {}
            Ok((got, p)) => prop_assert!(
                got != m || p != &payload[..],
                "flipping byte {} with {:#04x} went unnoticed", i, mask
            ),
        }
    }

    /// Any byte of the frame, Ethernet and UDP headers included. The one blind spot is
    /// UDP's own: a checksum field turned into 0x0000 means "no checksum".
    #[test]
    fn single_byte_corruption_anywhere(
        m in udp_meta(),
        payload in bytes(100),
        at in any::<usize>(),
        mask in 1u8..=255,
    ) {
        let f = emit_frame(&m, &payload);
        let i = at % f.len();
        let mut bad = f.clone();
        bad[i] ^= mask;
        let udp_csum = PAYLOAD_OFFSET - 2..PAYLOAD_OFFSET;
        let csum_zeroed = bad[udp_csum.clone()] == [0, 0];
        match frame::parse_udp(&bad) {
            Err(_) => {}
            Ok((got, p)) => prop_assert!(
                got != m || p != &payload[..] || (udp_csum.contains(&i) && csum_zeroed),
                "flipping byte {} with {:#04x} went unnoticed", i, mask
            ),
        }
    }

    #[test]
    fn random_frames_never_panic(b in bytes(1600)) {
        let _ = frame::parse_udp(&b);
    }

    /// Random bytes behind a real Ethernet + IPv4 prefix, so that the IPv4/UDP checks run.
    #[test]
    fn random_ip_frames_never_panic(
        m in udp_meta(),
        payload in bytes(64),
        keep in 0usize..80,
        tail in bytes(80),
        ms in proptest::collection::vec(mutation(), 0..3),
    ) {
        let mut f = emit_frame(&m, &payload);
        f.truncate(keep.min(f.len()));
        f.extend_from_slice(&tail);
        for mu in &ms {
            mutate(&mut f, mu);
        }
        if let Ok((_, p)) = frame::parse_udp(&f) {
            check_parse_any(p)?;
        }
    }

    #[test]
    fn framed_packets_round_trip(o in owned_packet(), m in udp_meta()) {
        let pkt = o.packet().to_vec(CLUSTER, 2).unwrap();
        let f = emit_frame(&m, &pkt);
        prop_assert_eq!(&f[PAYLOAD_OFFSET..], &pkt[..]);
        let (_, p) = frame::parse_udp(&f).unwrap();
        let (_, q) = wire::parse(p, CLUSTER).unwrap();
        prop_assert_eq!(q, o.packet());
    }
}

#[test]
fn frame_errors_are_classified() {
    let m = UdpMeta {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: frame::multicast_mac([239, 1, 2, 3]),
        src_ip: [10, 0, 0, 1],
        dst_ip: [239, 1, 2, 3],
        src_port: 4000,
        dst_port: 4001,
        ttl: 1,
    };
    let f = emit_frame(&m, b"x");
    for n in 0..frame::ETH_LEN {
        assert_eq!(
            frame::parse_udp(&f[..n]),
            Err(FrameError::NotUdp("shorter than an Ethernet header"))
        );
    }
    for n in frame::ETH_LEN..f.len() {
        assert!(matches!(
            frame::parse_udp(&f[..n]),
            Err(FrameError::Malformed(_))
        ));
    }
}

// ---------------------------------------------------------------------------
// regs
// ---------------------------------------------------------------------------

#[test]
fn config_set_accepts_exactly_the_legal_range() {
    let config_regs: Vec<_> = REGISTERS
        .iter()
        .filter(|r| r.access == Access::Config)
        .collect();
    assert!(!config_regs.is_empty());
    for r in config_regs {
        let mut probes = vec![(r.min, true), (r.max, true)];
        if r.min > 0 {
            probes.push((r.min - 1, false));
        }
        if r.max < u64::MAX {
            probes.push((r.max + 1, false));
        }
        probes.push((u64::MAX, r.max == u64::MAX));
        probes.push((r.reset, true));
        for (v, legal) in probes {
            let mut c = Config::default();
            let res = c.set(r.addr, v);
            if legal {
                assert_eq!(res, Ok(()), "{} = {v}", r.name);
                assert_eq!(c.get(r.addr), Some(v), "{} read back", r.name);
            } else {
                assert_eq!(
                    res,
                    Err(RegError::OutOfRange {
                        field: r.name,
                        value: v,
                        min: r.min,
                        max: r.max
                    }),
                    "{} = {v}",
                    r.name
                );
                assert_eq!(
                    c,
                    Config::default(),
                    "{}: a refused write changed the config",
                    r.name
                );
            }
        }
    }
    // Registers that are not configuration are refused whatever the value.
    for r in REGISTERS.iter().filter(|r| r.access != Access::Config) {
        assert_eq!(
            Config::default().set(r.addr, r.reset),
            Err(RegError::ReadOnly(r.name))
        );
    }
    for c in regs::Counter::ALL {
        assert_eq!(
            Config::default().set(c.addr(), 0),
            Err(RegError::ReadOnly(c.name()))
        );
    }
}

fn config_regs() -> Vec<regs::Register> {
    REGISTERS
        .iter()
        .copied()
        .filter(|r| r.access == Access::Config)
        .collect()
}

/// Store `v` into the field of register `a`, truncated to the field's type
/// (deliberately bypassing `Config::set`, so out-of-range values get in).
fn poke(c: &mut Config, a: u16, v: u64) {
    use regs::addr;
    match a {
        addr::NODE_ID => c.node_id = v as u8,
        addr::NODE_COUNT => c.node_count = v as u8,
        addr::CLUSTER_ID => c.cluster_id = v as u32,
        addr::TREES => c.trees = v as u8,
        addr::LOOP_PERIOD => c.loop_period = v as u32,
        addr::TIMEOUT => c.timeout = v as u32,
        addr::DELTA => c.delta = v as u32,
        addr::DRIFT => c.drift = v as u32,
        addr::FIFO_DEPTH => c.fifo_depth = v as u16,
        addr::BATCH_MAX => c.batch_max = v as u8,
        addr::MTU => c.mtu = v as u16,
        addr::DECIDE_PORT => c.decide_port = v as u16,
        addr::CLIENT_PORT => c.client_port = v as u16,
        addr::HOST_PORT => c.host_port = v as u16,
        addr::LATE_TICK_SLACK => c.late_tick_slack = v as u32,
        addr::MIN_GAP => c.min_gap = v as u32,
        addr::TREE_GROUP0 => c.tree_groups[0] = v as u32,
        addr::TREE_GROUP1 => c.tree_groups[1] = v as u32,
        addr::TREE_GROUP2 => c.tree_groups[2] = v as u32,
        addr::TREE_GROUP3 => c.tree_groups[3] = v as u32,
        addr::SRC_MAC_HI => c.src_mac = v << 32 | (c.src_mac & 0xFFFF_FFFF),
        addr::SRC_MAC_LO => c.src_mac = (c.src_mac & !0xFFFF_FFFF) | (v & 0xFFFF_FFFF),
        addr::SRC_IP => c.src_ip = v as u32,
        addr::HOST_MAC_HI => c.host_mac = v << 32 | (c.host_mac & 0xFFFF_FFFF),
        addr::HOST_MAC_LO => c.host_mac = (c.host_mac & !0xFFFF_FFFF) | (v & 0xFFFF_FFFF),
        addr::HOST_IP => c.host_ip = v as u32,
        addr::TTL => c.ttl = v as u8,
        addr::AUTH_MODE => c.auth_mode = v as u8,
        addr::AUTH_KEY => c.auth_key = v as u8,
        _ => panic!("poke: {a:#x} is not a config register"),
    }
}

/// One value per config register, all legal (often small, so that the cross-field
/// rules are reached), and sometimes one of them replaced by anything at all.
fn config_values() -> impl Strategy<Value = Vec<u64>> {
    let legal = config_regs()
        .into_iter()
        .map(|r| {
            let small_max = r.max.min(r.min.saturating_add(400));
            prop_oneof![
                4 => r.min..=small_max,
                2 => r.min..=r.max,
                1 => proptest::sample::select(vec![r.min, r.max, r.reset]),
            ]
            .boxed()
        })
        .collect::<Vec<_>>();
    let wild = proptest::option::weighted(0.3, (any::<proptest::sample::Index>(), u64_any()));
    (legal, proptest::bool::weighted(0.6), wild).prop_map(|(mut vals, repair, wild)| {
        if repair {
            // Make the two most common cross-field rules hold, so that Ok is frequent.
            let mut c = config_of(&vals);
            c.node_id %= c.node_count.max(1);
            c.min_gap = c.min_gap.min(c.loop_period);
            c.timeout = c
                .timeout
                .max(u32::try_from(c.min_timeout()).unwrap_or(u32::MAX));
            for (r, v) in config_regs().iter().zip(vals.iter_mut()) {
                *v = c.get(r.addr).unwrap();
            }
        }
        if let Some((i, v)) = wild {
            let i = i.index(vals.len());
            vals[i] = v;
        }
        vals
    })
}

/// The config with each register's field set to the matching value (see [`poke`]).
fn config_of(vals: &[u64]) -> Config {
    let mut c = Config::default();
    for (r, v) in config_regs().iter().zip(vals) {
        poke(&mut c, r.addr, *v);
    }
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn config_set_matches_the_range(i in any::<proptest::sample::Index>(), v in u64_any()) {
        let regs = config_regs();
        let r = regs[i.index(regs.len())];
        let mut c = Config::default();
        let res = c.set(r.addr, v);
        prop_assert_eq!(res.is_ok(), r.min <= v && v <= r.max, "{} = {}: {:?}", r.name, v, res);
    }

    #[test]
    fn validate_names_a_real_register(vals in config_values()) {
        let c = config_of(&vals);
        match c.validate() {
            Ok(()) => {
                prop_assert!(c.node_id < c.node_count);
                prop_assert!(c.timeout as u64 >= c.min_timeout());
                for r in config_regs() {
                    let v = c.get(r.addr).unwrap();
                    prop_assert!(r.min <= v && v <= r.max, "{} = {} accepted", r.name, v);
                }
            }
            Err(e) => {
                let r = regs::by_name(e.field);
                prop_assert!(r.is_some(), "validate named {:?}, not a register", e.field);
                let r = r.unwrap();
                prop_assert_eq!(r.access, Access::Config);
                prop_assert_eq!(c.get(r.addr), Some(e.value), "{}", e);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// transfer
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn snapshots_round_trip(
        snapshot in bytes(5000),
        max_chunk in 1usize..2000,
        transfer_id in any::<u32>(),
        instance in u64_any(),
        cluster in any::<u32>(),
        sender in any::<u8>(),
        timeout in any::<u32>(),
    ) {
        let pkts = chunk_packets(cluster, sender, transfer_id, instance, timeout, &snapshot, max_chunk);
        prop_assert_eq!(pkts.len(), snapshot.len().div_ceil(max_chunk).max(1));
        let mut r = Reassembly::new(transfer_id);
        let mut done = None;
        for (i, p) in pkts.iter().enumerate() {
            prop_assert!(done.is_none(), "finished before the last chunk");
            let (h, q) = wire::parse(p, cluster).expect("a chunk parses");
            prop_assert_eq!(h.sender, sender);
            let Packet::StateChunk(c) = q else {
                return Err(TestCaseError::fail("not a STATE_CHUNK"));
            };
            prop_assert!(c.data.len() <= max_chunk);
            prop_assert_eq!(c.flags & CHUNK_FLAG_LAST != 0, i + 1 == pkts.len());
            done = r.accept(&c).expect("chunk accepted");
        }
        prop_assert_eq!(done, Some(Snapshot { instance, timeout, data: snapshot }));
    }

    /// The table-driven CRC-32 is the bitwise definition (reflected 0xEDB88320), byte for byte.
    #[test]
    fn crc32_is_the_bitwise_crc(data in bytes(3000)) {
        let mut c = !0u32;
        for &b in &data {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
            }
        }
        prop_assert_eq!(crc32(&data), !c);
    }
}

#[test]
fn recover_packets_round_trip_and_refuse_bad_lengths_and_reserved_bytes() {
    let r = Recover {
        round: 7,
        epoch: 6,
        lins: 1234,
        top: 1240,
        vote: 1,
        timeout: 5000,
    };
    let b = Packet::Recover(r).to_vec(CLUSTER, 2).unwrap();
    assert_eq!(b.len(), wire::HEADER_LEN + wire::RECOVER_LEN);
    assert_eq!(b[3], Kind::Recover as u8);
    let (h, p) = wire::parse(&b, CLUSTER).unwrap();
    assert_eq!((h.sender, p), (2, Packet::Recover(r)));
    // A top below lins is refused.
    let mut low = b.clone();
    low[wire::HEADER_LEN + 16..wire::HEADER_LEN + 24].copy_from_slice(&1233u64.to_be_bytes());
    assert_eq!(
        wire::parse(&low, CLUSTER),
        Err(ParseError::Malformed("recover top below lins"))
    );
    for at in wire::HEADER_LEN + 25..wire::HEADER_LEN + 28 {
        let mut bad = b.clone();
        bad[at] = 1;
        assert_eq!(
            wire::parse(&bad, CLUSTER),
            Err(ParseError::Malformed("recover reserved field not zero")),
            "reserved byte {at}"
        );
    }
    let mut short = b.clone();
    short.pop();
    short[9] -= 1; // body_len agrees with the shorter packet
    assert_eq!(
        wire::parse(&short, CLUSTER),
        Err(ParseError::Malformed("recover length"))
    );
}

// ---------------------------------------------------------------------------
// The exactly-once record (part of an application snapshot)
// ---------------------------------------------------------------------------

proptest! {
    #[test]
    fn applier_record_round_trips_and_keeps_refusing(
        admits in proptest::collection::vec((0u32..6, 1u64..40), 0..200),
        probes in proptest::collection::vec((0u32..6, 1u64..45), 0..50),
    ) {
        let mut a = proto::apply::Applier::new();
        for (c, s) in &admits {
            a.admit(*c, *s);
        }
        let b = a.encode();
        let d = proto::apply::Applier::decode(&b).expect("own encoding decodes");
        prop_assert_eq!(&d, &a);
        for (c, s) in probes {
            prop_assert_eq!(d.applied(c, s), a.applied(c, s));
        }
    }

    #[test]
    fn applier_record_parser_never_panics_and_is_canonical(b in bytes(600)) {
        if let Ok(a) = proto::apply::Applier::decode(&b) {
            prop_assert_eq!(a.encode(), b);
        }
    }
}
