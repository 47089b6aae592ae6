//! pkt_parser against proto (`frame::parse_udp` then `wire::parse`, then what `Node` refuses as
//! unauthorized: a tagged packet when it holds no key, a DECIDE not from its epoch's leader) on
//! valid frames, forged and tagged ones, and frames broken in their headers, streamed back to
//! back on the 64-bit bus.

mod common;

use common::lockstep::{decide, request, tagged};
use proto::frame::{self, UdpMeta};
use proto::wire::{self, DecideKind, DecideMeta, Entry, Packet, ParseError};
use rtl::lowi_core::class;
use rtl::pkt_parser::PktParser;
use rtl::sim::{Cycle, Rng, bits, val};

const CLUSTER: u32 = 0xC0FFEE;
const PORT: u16 = 7400;

fn frame(payload: &[u8], port: u16) -> Vec<u8> {
    let meta = UdpMeta {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: frame::multicast_mac([239, 78, 67, 1]),
        src_ip: [10, 0, 0, 1],
        dst_ip: [239, 78, 67, 1],
        src_port: 5555,
        dst_port: port,
        ttl: 8,
    };
    let mut buf = vec![0u8; frame::PAYLOAD_OFFSET + payload.len()];
    let n = frame::emit_udp(&meta, payload, &mut buf).expect("frame fits");
    buf.truncate(n);
    buf
}

/// (class, DECIDE meta, REQUEST (client, seq, payload)).
type Verdict = (u64, Option<DecideMeta>, Option<(u32, u64, Vec<u8>)>);

/// What proto makes of a frame: (class, DECIDE meta or REQUEST fields), or None when the frame
/// is outside what the RTL checks (see rtl/README.md). `n`: node_count.
fn expected(f: &[u8], client_mode: bool, n: u8) -> Option<Verdict> {
    if f.len() > 14 && f[12..14] == [8, 0] && f.len() > 14 && f[14] >> 4 == 4 && f[14] & 15 > 5 {
        return None; // IPv4 options: proto takes them, the RTL does not
    }
    let (meta, payload) = match frame::parse_udp(f) {
        Err(frame::FrameError::NotUdp(_)) => return Some((class::FOREIGN, None, None)),
        Err(frame::FrameError::Malformed(_)) => return Some((class::MALFORMED, None, None)),
        Ok(x) => x,
    };
    if meta.dst_port != PORT {
        return Some((class::FOREIGN, None, None));
    }
    let kind_expected = if client_mode {
        wire::Kind::Request
    } else {
        wire::Kind::Decide
    };
    Some(match wire::parse(payload, CLUSTER) {
        Err(ParseError::Foreign(_)) => (class::FOREIGN, None, None),
        Err(ParseError::Malformed(why)) => {
            let inside = [
                "entry ",
                "batch entry",
                "config entry",
                "config item",
                "decide has bytes after",
            ];
            let kind = payload.get(3).copied();
            if kind != Some(kind_expected as u8) || inside.iter().any(|w| why.starts_with(w)) {
                return None; // bodies the RTL does not look into
            }
            (class::MALFORMED, None, None)
        }
        // Parsed, then refused by `Node` as not from a member: every tagged packet (a card
        // holds no keys; proto::auth::verify with an empty ring) and, on a tree port
        // (receive_tree), a DECIDE whose sender is not the leader of its epoch.
        Ok((h, _)) if h.key_id != 0 => (class::UNAUTHORIZED, None, None),
        Ok((h, Packet::Decide(d)))
            if !client_mode && h.sender as u32 != d.meta.epoch % n as u32 =>
        {
            (class::UNAUTHORIZED, None, None)
        }
        Ok((_, Packet::Decide(d))) if !client_mode => (class::EXPECTED, Some(d.meta), None),
        Ok((_, Packet::Request(e))) if client_mode => {
            if e.is_config() {
                (class::OTHER, None, None)
            } else {
                (
                    class::EXPECTED,
                    None,
                    Some((e.client_id, e.seq, e.payload.to_vec())),
                )
            }
        }
        Ok(_) => (class::OTHER, None, None),
    })
}

struct Parser {
    c: Cycle<PktParser>,
}

impl Parser {
    fn new(client_mode: bool, node_count: u8) -> Self {
        let mut c = Cycle::new(PktParser::default(), |p| &mut p.clock);
        c.uut.client_mode.next = client_mode;
        c.uut.sender_tab.next = rtl::pkt_parser::sender_table(node_count);
        c.uut.port.next = bits(PORT as u64);
        c.uut.cluster_id.next = bits(CLUSTER as u64);
        c.settle();
        Parser { c }
    }

    /// Stream frames back to back; returns the verdicts (one per frame) with their fields.
    fn run(&mut self, frames: &[Vec<u8>]) -> Vec<(u64, u64, Vec<u64>)> {
        self.run_idle(frames, None)
    }

    /// The same, with `idle` = (rng, percent): before each beat, idle cycles (`s_valid` low)
    /// while the rng says so, inside frames as between them.
    fn run_idle(
        &mut self,
        frames: &[Vec<u8>],
        mut idle: Option<(&mut Rng, u64)>,
    ) -> Vec<(u64, u64, Vec<u64>)> {
        let mut out = Vec::new();
        let collect = |c: &Cycle<PktParser>, out: &mut Vec<(u64, u64, Vec<u64>)>| {
            let u = &c.uut;
            let r = u.rec.val();
            if u.valid.val() {
                out.push((
                    c.cycle,
                    val(r.verdict),
                    vec![
                        val(r.decide_instance),
                        val(r.epoch),
                        val(r.seq),
                        val(r.tree),
                        val(r.decide_kind),
                        val(r.client),
                        val(r.req_seq),
                        val(r.req_len),
                        val(r.req_payload),
                        val(r.frame_len),
                    ],
                ));
            }
        };
        for f in frames {
            let beats = f.chunks(8).collect::<Vec<_>>();
            for (i, b) in beats.iter().enumerate() {
                while let Some((rng, pct)) = idle.as_mut()
                    && rng.pct(*pct)
                {
                    self.c.uut.s_valid.next = false;
                    self.c.uut.s_last.next = false;
                    self.c.settle();
                    collect(&self.c, &mut out);
                    self.c.edge();
                }
                let mut w = [0u8; 8];
                w[..b.len()].copy_from_slice(b);
                let u = self.c.uut.as_mut();
                u.s_data.next = bits(u64::from_le_bytes(w));
                u.s_keep.next = bits((1u64 << b.len()) - 1);
                u.s_valid.next = true;
                u.s_last.next = i + 1 == beats.len();
                self.c.settle();
                assert!(self.c.uut.s_ready.val());
                collect(&self.c, &mut out);
                self.c.edge();
            }
        }
        self.c.uut.s_valid.next = false;
        self.c.uut.s_last.next = false;
        self.c.settle();
        collect(&self.c, &mut out);
        self.c.edge();
        out
    }
}

/// A DECIDE, mostly from the leader of its epoch (`epoch mod n`), sometimes from anyone.
fn random_decide(rng: &mut Rng, n: u8) -> Vec<u8> {
    let kind =
        [DecideKind::Heartbeat, DecideKind::Batch, DecideKind::Start][rng.range(0, 2) as usize];
    let entries: Vec<(u32, u64, Vec<u8>)> = if kind == DecideKind::Batch {
        (0..rng.range(1, 3))
            .map(|_| {
                (
                    rng.next_u64() as u32,
                    rng.range(1, 1 << 40),
                    vec![7; rng.range(0, 20) as usize],
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let meta = DecideMeta {
        instance: rng.next_u64() >> rng.range(0, 63),
        epoch: (rng.next_u64() as u32) >> rng.range(0, 31),
        msg_seq: rng.next_u64() as u32,
        tree: rng.range(0, 3) as u8,
        kind,
    };
    let sender = if rng.pct(70) {
        (meta.epoch % n as u32) as u8
    } else {
        rng.range(0, 70) as u8
    };
    decide(CLUSTER, sender, meta, &entries)
}

fn random_request(rng: &mut Rng) -> Vec<u8> {
    let len = rng.range(0, 8) as usize;
    let payload: Vec<u8> = (0..len).map(|i| i as u8 + 1).collect();
    if rng.pct(5) {
        return Packet::Request(Entry {
            client_id: 3,
            seq: 4,
            flags: wire::ENTRY_FLAG_CONFIG,
            payload: &[0; 8],
        })
        .to_vec(CLUSTER, wire::SENDER_NONE)
        .unwrap();
    }
    request(
        CLUSTER,
        rng.next_u64() as u32,
        rng.range(1, u64::MAX),
        &payload,
    )
}

/// Break a frame: flip a header byte, truncate it, change its port, or leave it valid.
fn mangle(rng: &mut Rng, mut f: Vec<u8>) -> Vec<u8> {
    match rng.range(0, 9) {
        0..=2 => {
            let i = rng.range(0, (f.len() - 1).min(77) as u64) as usize;
            f[i] ^= 1 << rng.range(0, 7);
        }
        3 => {
            let n = rng.range(1, f.len() as u64 - 1) as usize;
            f.truncate(n);
        }
        4 => {
            // Flip a byte in the payload's header region and fix nothing: the UDP checksum breaks.
            let i = rng.range(42, (f.len() - 1).min(77) as u64) as usize;
            f[i] ^= 0x10;
        }
        _ => {}
    }
    f
}

fn check(client_mode: bool, seeds: u64) {
    let mut compared = [0u64; 5];
    for seed in 0..seeds {
        let mut rng = Rng::new(seed);
        // Any legal node_count (it changes only while the node is disabled: between runs).
        let n = if rng.pct(30) {
            rng.range(1, 64)
        } else {
            rng.range(1, 7)
        } as u8;
        let mut p = Parser::new(client_mode, n);
        let mut frames = Vec::new();
        for _ in 0..8 {
            // Mostly the port's own kind; sometimes the other one (counted as ignored).
            let own = !rng.pct(8);
            let mut payload = if client_mode == own {
                random_request(&mut rng)
            } else {
                random_decide(&mut rng, n)
            };
            if rng.pct(12) {
                // Tagged with a key the card does not hold.
                payload = tagged(&mut rng, &payload);
            }
            let port = if rng.pct(5) { PORT + 1 } else { PORT };
            let mut f = frame(&payload, port);
            if rng.pct(20) {
                // Re-emit the payload with a header byte changed (valid checksums).
                let mut pl = payload.clone();
                let i = rng.range(0, (pl.len() - 1).min(35) as u64) as usize;
                pl[i] ^= 1 << rng.range(0, 7);
                f = frame(&pl, port);
            }
            frames.push(mangle(&mut rng, f));
        }
        let got = p.run(&frames);
        assert_eq!(got.len(), frames.len(), "one verdict per frame");
        for (f, (_, verdict, fields)) in frames.iter().zip(&got) {
            let Some((want, meta, req)) = expected(f, client_mode, n) else {
                continue;
            };
            compared[want as usize] += 1;
            assert_eq!(*verdict, want, "seed {seed}: frame {f:02x?}");
            assert_eq!(fields[9], f.len() as u64);
            if let Some(m) = meta {
                assert_eq!(
                    &fields[..5],
                    &[
                        m.instance,
                        m.epoch as u64,
                        m.msg_seq as u64,
                        m.tree as u64,
                        m.kind as u64
                    ],
                    "seed {seed}"
                );
            }
            if let Some((c, s, pl)) = req {
                let mut w = [0u8; 8];
                w[..pl.len()].copy_from_slice(&pl);
                assert_eq!(
                    &fields[5..9],
                    &[c as u64, s, pl.len() as u64, u64::from_be_bytes(w)],
                    "seed {seed}"
                );
            }
        }
    }
    eprintln!("compared (expected, other, foreign, malformed, unauthorized): {compared:?}");
    assert!(
        compared.iter().all(|&n| n > 10),
        "every verdict must occur: {compared:?}"
    );
}

#[test]
fn tree_port_verdicts_and_fields_match_proto() {
    check(false, 60);
}

#[test]
fn client_port_verdicts_and_fields_match_proto() {
    check(true, 60);
}

/// A HEARTBEAT from node 1 of epoch 1 (its leader with 3 nodes).
fn heartbeat() -> Vec<u8> {
    decide(
        CLUSTER,
        1,
        DecideMeta {
            instance: 4,
            epoch: 1,
            msg_seq: 2,
            tree: 0,
            kind: DecideKind::Heartbeat,
        },
        &[],
    )
}

/// The IPv4 header checksum of `h` (20 bytes, its checksum field zero).
fn ipv4_csum(h: &[u8]) -> u16 {
    let mut sum = h
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum::<u32>();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Set `f`'s IPv4 header checksum right.
fn fix_ipv4_csum(f: &mut [u8]) {
    f[24..26].copy_from_slice(&[0, 0]);
    let c = ipv4_csum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
}

/// Other traffic on the wire is foreign whatever the bytes where our checksums would be:
/// frames that are not IPv4 (ARP, IPv6, VLAN-tagged, any type; their "IPv4 header checksum"
/// almost never holds), IPv4 that is not UDP (TCP, ICMP: their "UDP checksum" is present and
/// wrong) and UDP fragments with a broken UDP checksum: proto's order, where "not IPv4" comes
/// before the IPv4 header's checksum and "a fragment, not UDP" before the UDP checksum, which
/// the random frames never test together (one change each).
#[test]
fn other_protocols_are_foreign_whatever_their_checksums() {
    let mut rng = Rng::new(17);
    for client_mode in [false, true] {
        let mut frames = Vec::new();
        for i in 0..240 {
            let payload = if rng.pct(50) {
                request(CLUSTER, 9, 5, b"abcdefgh")
            } else {
                heartbeat()
            };
            let mut f = frame(&payload, PORT);
            match i % 3 {
                0 => {
                    let types = [
                        0x0806u16,
                        0x86DD,
                        0x8100,
                        0x88CC,
                        rng.range(0, 0xFFFF) as u16,
                    ];
                    let t = types[rng.range(0, types.len() as u64 - 1) as usize];
                    let t = if t == 0x0800 { 0x0801 } else { t };
                    f[12..14].copy_from_slice(&t.to_be_bytes());
                    for b in &mut f[14..] {
                        *b = rng.next_u64() as u8;
                    }
                }
                1 => {
                    let protos = [6u8, 1, 2, rng.range(0, 255) as u8];
                    let p = protos[rng.range(0, protos.len() as u64 - 1) as usize];
                    f[23] = if p == 17 { 6 } else { p };
                    fix_ipv4_csum(&mut f);
                    for b in &mut f[34..] {
                        *b = rng.next_u64() as u8;
                    }
                    if f[40..42] == [0, 0] {
                        f[40] = 1;
                    }
                }
                _ => {
                    // More fragments, or an offset: a fragment of a UDP datagram.
                    let frag = if rng.pct(50) {
                        0x2000u16
                    } else {
                        1 + rng.range(0, 0x1FFE) as u16
                    };
                    f[20..22].copy_from_slice(&frag.to_be_bytes());
                    fix_ipv4_csum(&mut f);
                    f[40] ^= 0x5A;
                    if f[40..42] == [0, 0] {
                        f[41] = 1;
                    }
                }
            }
            frames.push(f);
        }
        let mut p = Parser::new(client_mode, 3);
        let got = p.run(&frames);
        assert_eq!(got.len(), frames.len(), "one verdict per frame");
        for (f, (_, verdict, _)) in frames.iter().zip(&got) {
            let (want, _, _) = expected(f, client_mode, 3).expect("a frame the RTL checks");
            assert_eq!(want, class::FOREIGN, "proto: foreign: {f:02x?}");
            assert_eq!(*verdict, want, "client_mode {client_mode}: frame {f:02x?}");
        }
    }
}

/// The length checks at their bounds, which random frames rarely reach: every UDP payload
/// length from 0 to past the Nano-consensus header (a valid packet cut short, re-framed with
/// valid checksums), and an IPv4 total length of 20 to 28 (a UDP length below its own 8-byte
/// header, the UDP length field 0 to 8, no UDP checksum), on both ports, each compared with
/// proto. `pkt_parser` judges most of these a cycle before the verdict, rewritten without the
/// subtractions (`udp_len < 12` for `plen < 4`, `total_len < 28` for `total_len − 20 < 8`).
#[test]
fn the_length_checks_match_proto_at_their_bounds() {
    for client_mode in [false, true] {
        let full = if client_mode {
            request(CLUSTER, 9, 5, b"abc")
        } else {
            heartbeat()
        };
        let mut frames: Vec<Vec<u8>> = (0..=full.len()).map(|k| frame(&full[..k], PORT)).collect();
        for ulen in 0..=8u16 {
            let mut f = frame(&[], PORT);
            f[16..18].copy_from_slice(&(20 + ulen).to_be_bytes());
            fix_ipv4_csum(&mut f);
            f[38..40].copy_from_slice(&ulen.to_be_bytes());
            f[40..42].copy_from_slice(&[0, 0]);
            frames.push(f);
        }
        // An IPv4 header and nothing after it (total_len 20), cut at 33 to 35 bytes, not UDP
        // and UDP: the frame length's bound at 34 (foreign when not UDP from 34 bytes on).
        for len in 33..=35 {
            for ip_proto in [6u8, 17] {
                let mut f = frame(&[], PORT);
                f[16..18].copy_from_slice(&20u16.to_be_bytes());
                f[23] = ip_proto;
                fix_ipv4_csum(&mut f);
                f.truncate(len);
                frames.push(f);
            }
        }
        let mut p = Parser::new(client_mode, 3);
        let got = p.run(&frames);
        assert_eq!(got.len(), frames.len(), "one verdict per frame");
        let mut seen = [0u32; 5];
        for (f, (_, verdict, _)) in frames.iter().zip(&got) {
            let (want, _, _) = expected(f, client_mode, 3).expect("a frame the RTL checks");
            seen[want as usize] += 1;
            assert_eq!(*verdict, want, "client_mode {client_mode}: frame {f:02x?}");
        }
        // Each kind of bound is reached: foreign (a payload under 4 bytes), malformed (a
        // header cut short, a UDP length under 8) and the whole packet.
        assert!(
            seen[class::FOREIGN as usize] >= 4
                && seen[class::MALFORMED as usize] >= 9
                && seen[class::EXPECTED as usize] >= 1,
            "{seen:?}"
        );
    }
}

/// The sender check (`epoch mod node_count`) on every legal node_count, at the edges of the
/// epoch's range and at random, in the shortest DECIDE frames (whose verdict comes two cycles
/// after the beat bringing the epoch's low half), back to back, and for every second
/// node_count with idle cycles inside and between the frames: the epoch's leader is heard,
/// every other sender is refused.
#[test]
fn a_decide_is_heard_only_from_the_leader_of_its_epoch() {
    let mut rng = Rng::new(18);
    let mut idle_rng = Rng::new(19);
    let mut checked = [0u64; 2];
    for n in 1..=64u8 {
        let mut p = Parser::new(false, n);
        let mut frames = Vec::new();
        let mut want = Vec::new();
        for i in 0..12 {
            let epoch = match i {
                0 => 0,
                1 => u32::MAX,
                2 => 1 << 31,
                3 => n as u32 - 1,
                4 => n as u32,
                _ => (rng.next_u64() as u32) >> rng.range(0, 31),
            };
            let lead = (epoch % n as u32) as u8;
            // Every fourth: a sender ≡ the leader mod n but not below n (up to 7n above it).
            let sender = if i % 2 == 0 {
                lead
            } else if i % 4 == 3 && lead as u64 + n as u64 <= 255 {
                (lead as u64 + n as u64 * rng.range(1, (255 - lead as u64) / n as u64).min(7)) as u8
            } else if n > 1 {
                ((lead as u64 + rng.range(1, n as u64 - 1)) % n as u64) as u8
            } else {
                rng.range(1, 255) as u8
            };
            let meta = DecideMeta {
                instance: 5,
                epoch,
                msg_seq: 1,
                tree: 0,
                kind: DecideKind::Heartbeat,
            };
            frames.push(frame(&decide(CLUSTER, sender, meta, &[]), PORT));
            want.push(if sender == lead {
                class::EXPECTED
            } else {
                class::UNAUTHORIZED
            });
        }
        let got = p.run_idle(&frames, (n % 2 == 0).then_some((&mut idle_rng, 20)));
        assert_eq!(got.len(), want.len());
        for ((_, v, fields), w) in got.iter().zip(&want) {
            assert_eq!(*v, *w, "n {n} epoch {}", fields[1]);
            checked[(*w == class::UNAUTHORIZED) as usize] += 1;
        }
    }
    assert!(checked.iter().all(|&c| c > 300), "{checked:?}");
}

#[test]
fn verdict_comes_one_cycle_after_the_last_beat() {
    let mut p = Parser::new(false, 3);
    let f = frame(&random_decide(&mut Rng::new(1), 3), PORT);
    let beats = f.len().div_ceil(8) as u64;
    let got = p.run(&[f.clone(), f]);
    // Frame 1's last beat is cycle beats-1; its verdict is valid in cycle `beats`, while
    // frame 2 is already streaming (no idle beat needed between frames).
    assert_eq!(got[0].0, beats);
    assert_eq!(got[1].0, 2 * beats);
    assert_eq!(got[0].1, class::EXPECTED);
}

/// `req_capture` beside `pkt_parser` on the client port (issue 17): for every frame the parser
/// takes as a REQUEST, the capture's payload in the verdict cycle is proto's payload, its first
/// 128 bytes, zeros past it. Payloads of 0 to 150 bytes (a quarter exactly 128), frames back to
/// back or with idle cycles between them, a third with idle cycles inside (`s_valid` low between
/// beats: the capture must hold its place in the frame), some padded (Ethernet padding), mixed with DECIDEs,
/// tagged requests and broken frames (whose verdicts are not requests).
#[test]
fn req_capture_keeps_the_first_128_payload_bytes_of_each_request() {
    use rtl::req_capture::{KEPT, ReqCapture};
    let mut rng = Rng::new(17);
    let mut p = Parser::new(true, 3);
    let mut cap = Cycle::new(ReqCapture::default(), |c| &mut c.clock);
    let mut frames: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
    for _ in 0..400 {
        let len = if rng.pct(25) {
            KEPT
        } else {
            rng.range(0, 150) as usize
        };
        let salt = rng.next_u64();
        let payload: Vec<u8> = (0..len)
            .map(|i| (salt >> (8 * (i % 8))) as u8 ^ (i as u8).wrapping_mul(7))
            .collect();
        let req = request(
            CLUSTER,
            rng.next_u64() as u32,
            rng.range(1, 1 << 40),
            &payload,
        );
        let (mut f, want) = match rng.range(0, 9) {
            0 => (frame(&random_decide(&mut rng, 3), PORT), None),
            1 => (frame(&tagged(&mut rng, &req), PORT), None),
            2 => (mangle(&mut rng, frame(&req, PORT)), None),
            _ => (frame(&req, PORT), Some(payload)),
        };
        if rng.pct(20) {
            f.extend(std::iter::repeat_n(0, rng.range(1, 20) as usize));
        }
        frames.push((f, want));
    }
    let (mut checked, mut full) = (0, 0);
    let mut pending: Option<Option<Vec<u8>>> = None;
    let mut check = |p: &Cycle<PktParser>, cap: &Cycle<ReqCapture>, pending: &mut Option<_>| {
        if !p.uut.valid.val() {
            return;
        }
        let want: Option<Vec<u8>> = pending.take().expect("a verdict for a streamed frame");
        let (Some(want), true) = (want, val(p.uut.rec.val().verdict) == class::EXPECTED) else {
            return;
        };
        assert_eq!(val(p.uut.rec.val().req_len) as usize, want.len());
        let mut w = want.clone();
        w.resize(KEPT, 0);
        w.truncate(KEPT);
        let got = common::lockstep::payload_bytes(cap.uut.payload.val());
        assert_eq!(got, w, "payload of {} B", want.len());
        checked += 1;
        full += (want.len() >= KEPT) as u64;
    };
    // One cycle with no beat on the stream (both blocks watch it).
    macro_rules! idle {
        () => {
            p.c.uut.s_valid.next = false;
            p.c.uut.s_last.next = false;
            cap.uut.s_valid.next = false;
            cap.uut.s_last.next = false;
            p.c.settle();
            cap.settle();
            check(&p.c, &cap, &mut pending);
            p.c.edge();
            cap.edge();
        };
    }
    let mut inner_idle = 0;
    for (f, want) in frames {
        let beats: Vec<&[u8]> = f.chunks(8).collect();
        let gappy = rng.pct(33);
        for (i, b) in beats.iter().enumerate() {
            if gappy && i > 0 && rng.pct(25) {
                for _ in 0..rng.range(1, 3) {
                    idle!();
                    inner_idle += 1;
                }
            }
            let mut w = [0u8; 8];
            w[..b.len()].copy_from_slice(b);
            let d = u64::from_le_bytes(w);
            let last = i + 1 == beats.len();
            let u = p.c.uut.as_mut();
            u.s_data.next = bits(d);
            u.s_keep.next = bits((1u64 << b.len()) - 1);
            u.s_valid.next = true;
            u.s_last.next = last;
            let k = cap.uut.as_mut();
            k.s_data.next = bits(d);
            k.s_valid.next = true;
            k.s_last.next = last;
            p.c.settle();
            cap.settle();
            check(&p.c, &cap, &mut pending);
            p.c.edge();
            cap.edge();
        }
        pending = Some(want);
        // Sometimes idle cycles before the next frame.
        for _ in 0..rng.range(0, 2) {
            idle!();
        }
    }
    p.c.uut.s_valid.next = false;
    cap.uut.s_valid.next = false;
    p.c.settle();
    cap.settle();
    check(&p.c, &cap, &mut pending);
    eprintln!(
        "req_capture: {checked} requests compared, {full} of 128 bytes or more, \
         {inner_idle} idle cycles inside frames"
    );
    assert!(
        checked > 200 && full > 40 && inner_idle > 100,
        "{checked} requests, {full} full-size, {inner_idle} idle cycles inside frames"
    );
}

/// `SenderTable` (`nc_engine`'s, shared by its parsers) holds `sender_table(node_count)` within
/// 9 cycles of `node_count` changing (a ROM read, then eight slices; 8 are not enough), for
/// every legal node_count, in any order.
#[test]
fn the_sender_table_follows_node_count_within_nine_cycles() {
    use rtl::pkt_parser::{SenderTable, sender_table};
    let mut c = Cycle::new(SenderTable::default(), |t| &mut t.clock);
    let mut rng = Rng::new(20);
    let mut order: Vec<u8> = (1..=64).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.range(0, i as u64) as usize);
    }
    for n in order {
        c.uut.node_count.next = bits((n % 64) as u64);
        for _ in 0..9 {
            c.edge();
        }
        c.settle();
        assert!(c.uut.tab.val() == sender_table(n), "node_count {n}");
    }
}
