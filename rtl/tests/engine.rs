//! nc_engine driven with frames only (no model): latency from a frame's last beat to the
//! decision, and bad frames at the frame level (wrong UDP port, truncated header, wrong magic
//! or cluster, an oversize batch, a DECIDE from a stale leader counter, a DECIDE not from its
//! epoch's leader, tagged packets): each dropped and counted, nothing delivered.

mod common;

use common::lockstep::{config_writes, decide, request, streams_ready, tagged};
use proto::frame::{self, UdpMeta};
use proto::regs::{Config, Counter, addr, ctrl};
use proto::wire::{self, DecideKind, DecideMeta};
use rtl::nc_engine::NcEngine;
use rtl::sim::{Cycle, Rng, bits, val};

struct Engine {
    c: Cycle<NcEngine>,
    delivered_at: Vec<u64>,
    /// Reply drops flagged, and overruns seen.
    reply_drops: u64,
    overruns: u64,
    /// Random backpressure: each output stream's `ready` is high with this probability (%)
    /// each cycle, from this generator (None: always ready).
    backpressure: Option<(Rng, u64)>,
    /// Per output stream (g0..g3, then `H` and `R`): its frames, checked as a MAC takes them.
    streams: [Stream; 6],
}

/// `Engine::streams` index of the host stream and of the client reply stream.
const H: usize = 4;
const R: usize = 5;

/// What the checks of one output stream keep: the beat offered and not taken last cycle, the
/// frame begun (cycle of its first beat, bytes so far), and the frames taken (first beat
/// cycle, last beat cycle, bytes).
#[derive(Default)]
struct Stream {
    held: Option<(u64, u64, bool)>,
    cur: Option<(u64, Vec<u8>)>,
    frames: Vec<(u64, u64, Vec<u8>)>,
}

impl Stream {
    /// This cycle's beat: AXI-Stream rules (an offered beat stays offered, unchanged, until
    /// taken) and no gap inside a frame (a MAC would abort it); a taken beat is collected.
    fn sample(&mut self, name: &str, cycle: u64, valid: bool, ready: bool, beat: (u64, u64, bool)) {
        if let Some(h) = self.held {
            assert!(valid, "{name} cycle {cycle}: an offered beat was withdrawn");
            assert_eq!(beat, h, "{name} cycle {cycle}: an offered beat changed");
        }
        if self.cur.is_some() {
            assert!(valid, "{name} cycle {cycle}: a gap inside a frame");
        }
        self.held = (valid && !ready).then_some(beat);
        if valid && ready {
            let n = beat.1.count_ones() as usize;
            let cur = self.cur.get_or_insert((cycle, Vec::new()));
            cur.1.extend_from_slice(&beat.0.to_le_bytes()[..n]);
            if beat.2 {
                let (first, bytes) = self.cur.take().unwrap();
                self.frames.push((first, cycle, bytes));
            }
        }
    }
}

impl Engine {
    fn new(cfg: &Config) -> Self {
        let mut e = Engine {
            c: Cycle::new(NcEngine::default(), |c| &mut c.clock),
            delivered_at: Vec::new(),
            reply_drops: 0,
            overruns: 0,
            backpressure: None,
            streams: Default::default(),
        };
        streams_ready(&mut e.c.uut, [true; 4], true, true);
        for (a, v) in config_writes(cfg) {
            e.write(a, v);
        }
        e.write(addr::CTRL, ctrl::ENABLE);
        e
    }
    fn cycle(&mut self) {
        if let Some((rng, pct)) = &mut self.backpressure {
            let mut r = [false; 6];
            for x in &mut r {
                *x = rng.pct(*pct);
            }
            streams_ready(&mut self.c.uut, [r[0], r[1], r[2], r[3]], r[4], r[5]);
        }
        self.c.settle();
        {
            let u = &self.c.uut;
            let ports = [
                (
                    u.g0_valid.val(),
                    u.g0_ready.val(),
                    u.g0_data.val(),
                    u.g0_keep.val(),
                    u.g0_last.val(),
                ),
                (
                    u.g1_valid.val(),
                    u.g1_ready.val(),
                    u.g1_data.val(),
                    u.g1_keep.val(),
                    u.g1_last.val(),
                ),
                (
                    u.g2_valid.val(),
                    u.g2_ready.val(),
                    u.g2_data.val(),
                    u.g2_keep.val(),
                    u.g2_last.val(),
                ),
                (
                    u.g3_valid.val(),
                    u.g3_ready.val(),
                    u.g3_data.val(),
                    u.g3_keep.val(),
                    u.g3_last.val(),
                ),
                (
                    u.h_valid.val(),
                    u.h_ready.val(),
                    u.h_data.val(),
                    u.h_keep.val(),
                    u.h_last.val(),
                ),
                (
                    u.r_valid.val(),
                    u.r_ready.val(),
                    u.r_data.val(),
                    u.r_keep.val(),
                    u.r_last.val(),
                ),
            ];
            for (i, (v, r, d, k, l)) in ports.into_iter().enumerate() {
                let name = ["g0", "g1", "g2", "g3", "h", "r"][i];
                self.streams[i].sample(name, self.c.cycle, v, r, (val(d), val(k), l));
            }
        }
        if self.c.uut.rx_deliver.val() {
            self.delivered_at.push(self.c.cycle);
        }
        let u = &self.c.uut;
        self.overruns += u.gen_overrun.val() as u64;
        self.reply_drops += u.reply_drop_ok.val() as u64 + u.reply_drop_nl.val() as u64;
        self.c.edge();
    }
    fn write(&mut self, a: u16, v: u32) {
        let u = self.c.uut.as_mut();
        u.csr_addr.next = bits(a as u64);
        u.csr_wdata.next = bits(v as u64);
        u.csr_write.next = true;
        self.cycle();
        self.c.uut.csr_write.next = false;
    }
    fn read(&mut self, a: u16) -> u64 {
        self.c.uut.csr_addr.next = bits(a as u64);
        self.c.settle();
        val(self.c.uut.csr_rdata.val())
    }
    fn counter(&mut self, c: Counter) -> u64 {
        self.read(c.addr())
    }
    /// Stream a frame on tree `t`; returns the cycle of its last beat.
    fn frame(&mut self, t: usize, f: &[u8]) -> u64 {
        let chunks: Vec<&[u8]> = f.chunks(8).collect();
        let mut last = 0;
        for (i, ch) in chunks.iter().enumerate() {
            let mut w = [0u8; 8];
            w[..ch.len()].copy_from_slice(ch);
            let u = self.c.uut.as_mut();
            let (d, k, v, l) = match t {
                0 => (
                    &mut u.t0_data,
                    &mut u.t0_keep,
                    &mut u.t0_valid,
                    &mut u.t0_last,
                ),
                4 => (&mut u.c_data, &mut u.c_keep, &mut u.c_valid, &mut u.c_last),
                _ => (
                    &mut u.t1_data,
                    &mut u.t1_keep,
                    &mut u.t1_valid,
                    &mut u.t1_last,
                ),
            };
            d.next = bits(u64::from_le_bytes(w));
            k.next = bits((1u64 << ch.len()) - 1);
            v.next = true;
            l.next = i + 1 == chunks.len();
            last = self.c.cycle;
            self.cycle();
        }
        let u = self.c.uut.as_mut();
        u.t0_valid.next = false;
        u.t1_valid.next = false;
        u.t0_last.next = false;
        u.t1_last.next = false;
        u.c_valid.next = false;
        u.c_last.next = false;
        last
    }
    fn idle(&mut self, n: u64) {
        for _ in 0..n {
            self.cycle();
        }
    }
}

fn cfg() -> Config {
    Config {
        node_id: 1,
        node_count: 3,
        cluster_id: 77,
        trees: 2,
        loop_period: 40,
        delta: 30,
        drift: 0,
        timeout: 80,
        ..Config::default()
    }
}

fn udp(c: &Config, payload: &[u8], port: u16, tree: usize) -> Vec<u8> {
    let meta = UdpMeta {
        src_mac: [2, 0, 0, 0, 0, 5],
        dst_mac: frame::multicast_mac(c.tree_groups[tree].to_be_bytes()),
        src_ip: [10, 0, 0, 5],
        dst_ip: c.tree_groups[tree].to_be_bytes(),
        src_port: 7400,
        dst_port: port,
        ttl: 4,
    };
    let mut f = vec![0u8; frame::PAYLOAD_OFFSET + payload.len()];
    let n = frame::emit_udp(&meta, payload, &mut f).unwrap();
    f.truncate(n);
    f
}

fn copy(
    c: &Config,
    epoch: u32,
    seq: u32,
    tree: u8,
    instance: u64,
    kind: DecideKind,
    entries: &[(u32, u64, Vec<u8>)],
) -> Vec<u8> {
    let meta = DecideMeta {
        instance,
        epoch,
        msg_seq: seq,
        tree,
        kind,
    };
    // From the leader of its epoch (anything else is refused as unauthorized).
    let sender = (epoch % c.node_count as u32) as u8;
    udp(
        c,
        &decide(c.cluster_id, sender, meta, entries),
        c.decide_port,
        tree as usize,
    )
}

fn started(c: &Config) -> Engine {
    let mut e = Engine::new(c);
    e.frame(0, &copy(c, 0, 0, 0, 1, DecideKind::Start, &[]));
    e.frame(1, &copy(c, 0, 0, 1, 1, DecideKind::Start, &[]));
    e.idle(3);
    assert_eq!(e.read(addr::STATUS) & 0b100, 0b100, "ACTIVE after START");
    e
}

#[test]
fn last_beat_of_the_last_copy_to_decision_is_three_cycles() {
    let c = cfg();
    let mut e = started(&c);
    let entries = [(9, 1, b"abc".to_vec())];
    e.frame(0, &copy(&c, 0, 1, 0, 1, DecideKind::Batch, &entries));
    e.idle(2);
    assert!(e.delivered_at.is_empty(), "not before the last copy");
    let last = e.frame(1, &copy(&c, 0, 1, 1, 1, DecideKind::Batch, &entries));
    e.idle(4);
    // Verdict one cycle after the last beat (pkt_parser), one cycle in the holding register
    // (the core takes it), one more until the core acts on it.
    assert_eq!(e.delivered_at, vec![last + 3]);
    assert_eq!(e.counter(Counter::Delivered), 1);
}

/// The issue's host-port latency: the follower's receive of the last copy → the decision out
/// on the host port, here the first beat of the host frame, and that frame is the decided
/// copy readdressed to the host (the `src_*` / `host_*` registers, TTL, UDP checksum 0): 4
/// cycles to `host_gen`'s first beat, which the empty output FIFO offers in the same cycle.
#[test]
fn last_beat_of_the_last_copy_to_the_first_host_frame_beat_is_four_cycles() {
    let c = Config {
        src_mac: 0x0200_1122_3344,
        src_ip: 0x0A09_0807,
        host_mac: 0x0255_6677_8899,
        host_ip: 0xC0A8_0102,
        host_port: 9911,
        ttl: 7,
        ..cfg()
    };
    let entries = [(9, 1, b"abc".to_vec()), (4, 7, b"12345678".to_vec())];
    follower_decides_and_hands_the_copy_to_the_host(&c, &entries);
}

/// A started follower gets a BATCH copy of `entries` on trees 0 and 1, one after the other:
/// it decides 3 cycles after the last copy beat, and its one host frame (first beat a cycle
/// later) is the decided copy readdressed to the host.
fn follower_decides_and_hands_the_copy_to_the_host(
    c: &Config,
    entries: &[(u32, u64, Vec<u8>)],
) -> Engine {
    let mut e = started(c);
    e.frame(0, &copy(c, 0, 1, 0, 1, DecideKind::Batch, entries));
    let f1 = copy(c, 0, 1, 1, 1, DecideKind::Batch, entries);
    let last = e.frame(1, &f1);
    // The host frame is as long as the copy; its last beat leaves by then.
    e.idle(f1.len() as u64 / 8 + 16);
    assert_eq!(e.delivered_at, vec![last + 3]);
    assert_eq!(e.streams[H].frames.len(), 1, "one host frame per decision");
    let (first, _, got) = &e.streams[H].frames[0];
    assert_eq!(*first, last + 4, "last copy beat → first host beat");
    assert_eq!(got, &host_frame(c, &f1));
    e
}

/// The host frame of a decided copy `f`: its UDP payload readdressed to the host.
fn host_frame(c: &Config, f: &[u8]) -> Vec<u8> {
    let meta = UdpMeta {
        src_mac: rtl::layout::mac_bytes(c.src_mac),
        dst_mac: rtl::layout::mac_bytes(c.host_mac),
        src_ip: c.src_ip.to_be_bytes(),
        dst_ip: c.host_ip.to_be_bytes(),
        src_port: c.decide_port,
        dst_port: c.host_port,
        ttl: c.ttl,
    };
    common::lockstep::generated_frame(meta, &f[frame::PAYLOAD_OFFSET..])
}

/// A follower's copy of the largest DECIDE the card builds (`pkt_gen::SLOTS` = 8 entries of
/// 128 bytes: 1,230 bytes, past the 1,024-byte capture buffers of before 2026-12-06's batches
/// of 8) is delivered and reaches the host port whole, 4 cycles after its last copy beat.
#[test]
fn a_follower_copy_of_a_full_batch_reaches_the_host_whole() {
    // The copies follow each other (154 beats each): a window and a timeout that span both.
    let c = Config {
        delta: 200,
        timeout: 1000,
        ..cfg()
    };
    assert!(c.validate().is_ok(), "{:?}", c.validate());
    let entries: Vec<(u32, u64, Vec<u8>)> = (0..rtl::pkt_gen::SLOTS as u64)
        .map(|i| {
            (
                i as u32 + 1,
                10 + i,
                (0..128).map(|j| (i * 37 + j) as u8).collect(),
            )
        })
        .collect();
    assert_eq!(
        copy(&c, 0, 1, 0, 1, DecideKind::Batch, &entries).len(),
        1230
    );
    let mut e = follower_decides_and_hands_the_copy_to_the_host(&c, &entries);
    assert_eq!(e.counter(Counter::HostDropped), 0);
}

#[test]
fn bad_frames_are_dropped_and_counted_and_nothing_is_delivered() {
    let c = cfg();
    let mut e = started(&c);
    let good = || copy(&c, 2, 0, 0, 1, DecideKind::Batch, &[(1, 1, vec![1])]);
    // Move to epoch 2 (its leader's heartbeat on both trees) so that epoch 0 is stale.
    e.frame(0, &copy(&c, 2, 0, 0, 1, DecideKind::Heartbeat, &[]));
    e.frame(1, &copy(&c, 2, 0, 1, 1, DecideKind::Heartbeat, &[]));
    e.idle(12); // the leader id is computed
    assert_eq!(e.read(addr::EPOCH), 2);
    let before = (
        e.counter(Counter::Foreign),
        e.counter(Counter::Malformed),
        e.counter(Counter::Delivered),
        e.counter(Counter::Unauthorized),
        e.counter(Counter::Ignored),
    );
    // Issue 18: a DECIDE whose sender is not its epoch's leader (node 0 claiming epoch 2, and
    // epoch 4 — a takeover — claimed by node 2), the leader's own copy tagged (the card holds no
    // keys), a tagged request on the client port.
    let forged = |epoch: u32, sender: u8| {
        let meta = DecideMeta {
            instance: 1,
            epoch,
            msg_seq: 1,
            tree: 0,
            kind: DecideKind::Batch,
        };
        let p = decide(c.cluster_id, sender, meta, &[(1, 1, vec![1])]);
        udp(&c, &p, c.decide_port, 0)
    };
    let mut rng = Rng::new(18);
    let tagged_copy = udp(
        &c,
        &tagged(&mut rng, &good()[frame::PAYLOAD_OFFSET..]),
        c.decide_port,
        0,
    );
    let tagged_request = udp(
        &c,
        &tagged(&mut rng, &request(c.cluster_id, 4, 1, b"r")),
        c.client_port,
        0,
    );
    for f in [forged(2, 0), forged(4, 2), tagged_copy] {
        e.frame(0, &f);
        e.idle(3);
    }
    e.frame(4, &tagged_request);
    e.idle(4);
    assert_eq!(
        e.counter(Counter::Unauthorized) - before.3,
        4,
        "unauthorized"
    );
    assert_eq!(e.counter(Counter::Ignored), before.4, "not ignored");
    assert_eq!(
        e.counter(Counter::NotLeaderReplies),
        0,
        "no reply to a tagged request"
    );
    assert_eq!(e.read(addr::EPOCH), 2, "no takeover");
    let wrong_port = udp(&c, &good()[frame::PAYLOAD_OFFSET..], c.decide_port + 1, 0);
    let mut truncated = good();
    truncated.truncate(frame::PAYLOAD_OFFSET + 20); // IPv4/UDP lengths now exceed the frame
    let mut bad_magic = good()[frame::PAYLOAD_OFFSET..].to_vec();
    bad_magic[0] ^= 0x80;
    let mut bad_cluster = good()[frame::PAYLOAD_OFFSET..].to_vec();
    bad_cluster[7] ^= 1;
    // An oversize batch: one entry whose payload makes the packet longer than MAX_PACKET_LEN.
    let big = vec![0x55u8; wire::MAX_PACKET_LEN];
    let mut oversize = decide(
        c.cluster_id,
        0,
        DecideMeta {
            instance: 1,
            epoch: 1,
            msg_seq: 1,
            tree: 0,
            kind: DecideKind::Batch,
        },
        &[(1, 1, vec![1])],
    );
    let extra = big.len();
    let body = u16::from_be_bytes([oversize[8], oversize[9]]) as usize + extra;
    oversize[8..10].copy_from_slice(&(body as u16).to_be_bytes());
    let plen_at = wire::HEADER_LEN + wire::DECIDE_HEADER_LEN + 4;
    let plen = u16::from_be_bytes([oversize[plen_at], oversize[plen_at + 1]]) as usize + extra;
    oversize[plen_at..plen_at + 2].copy_from_slice(&(plen as u16).to_be_bytes());
    oversize.extend_from_slice(&big);
    let stale = copy(&c, 0, 2, 0, 1, DecideKind::Batch, &[(1, 1, vec![1])]);
    for (f, _what) in [
        (wrong_port, "wrong UDP port"),
        (truncated, "truncated header"),
        (udp(&c, &bad_magic, c.decide_port, 0), "wrong magic"),
        (udp(&c, &bad_cluster, c.decide_port, 0), "wrong cluster id"),
        (udp(&c, &oversize, c.decide_port, 0), "oversize batch"),
        (stale, "stale leader counter"),
    ] {
        e.frame(0, &f);
        e.idle(4);
    }
    let after = (
        e.counter(Counter::Foreign),
        e.counter(Counter::Malformed),
        e.counter(Counter::Delivered),
    );
    assert_eq!(
        after.0 - before.0,
        3,
        "foreign: wrong port, wrong magic, wrong cluster"
    );
    assert_eq!(after.1 - before.1, 2, "malformed: truncated, oversize");
    assert_eq!(e.counter(Counter::Unauthorized) - before.3, 4);
    assert_eq!(e.counter(Counter::StaleEpoch), 1);
    assert_eq!(after.2, before.2, "nothing delivered");
    assert!(e.delivered_at.is_empty());
    assert!(
        e.streams[H].frames.is_empty(),
        "no host frame without a decision"
    );
}

/// Requests faster than NOT_LEADER replies can leave (a 71-byte request is 9 beats, a reply
/// 10): the reply queue fills, and every reply is either sent or counted in
/// `replies_dropped` — none disappears silently.
#[test]
fn replies_that_do_not_fit_are_counted() {
    // A follower that does not time out while the requests stream.
    let c = Config {
        timeout: 1_000_000,
        ..cfg()
    };
    let mut e = started(&c);
    let n = 120;
    for seq in 1..=n {
        let req = proto::wire::Packet::Request(proto::wire::Entry {
            client_id: 5,
            seq,
            flags: 0,
            payload: b"v",
        })
        .to_vec(c.cluster_id, proto::wire::SENDER_NONE)
        .unwrap();
        e.frame(4, &udp(&c, &req, c.client_port, 0));
    }
    e.idle(200);
    assert_eq!(e.counter(Counter::NotLeaderReplies), n);
    assert!(e.reply_drops > 0, "the queue must have overflowed");
    assert_eq!(
        e.streams[R].frames.len() as u64 + e.reply_drops,
        n,
        "sent + dropped = replies owed"
    );
    assert_eq!(e.counter(Counter::RepliesDropped), e.reply_drops);
    assert_eq!(e.counter(Counter::HostDropped), 0);
}

/// A single-node cluster (its own leader) at the smallest legal loop period, two trees, batches
/// of 4.
fn solo_at_loop_period_one() -> Config {
    Config {
        node_id: 0,
        node_count: 1,
        trees: 2,
        loop_period: 1,
        delta: 3,
        drift: 0,
        timeout: 8,
        batch_max: 4,
        fifo_depth: 32,
        ..cfg()
    }
}

/// The smallest legal loop period (1) with requests streaming in: the loop waits for the
/// generator (`pkt_gen.ready` holds the send), so DECIDE frames leave back to back with no
/// idle beat, no send is ever dropped (`gen_overrun`), and every request the leader decided
/// is in a frame exactly once.
#[test]
fn at_loop_period_one_frames_leave_back_to_back_and_none_is_dropped() {
    let c = solo_at_loop_period_one();
    assert!(c.validate().is_ok(), "{:?}", c.validate());
    let mut e = Engine::new(&c);
    e.write(addr::CTRL, ctrl::ENABLE | ctrl::START);
    let n = 40u64;
    for seq in 1..=n {
        let req = wire::Packet::Request(wire::Entry {
            client_id: 3,
            seq,
            flags: 0,
            payload: b"8 bytes!",
        })
        .to_vec(c.cluster_id, wire::SENDER_NONE)
        .unwrap();
        e.frame(4, &udp(&c, &req, c.client_port, 0));
    }
    e.idle(100);
    assert_eq!(e.overruns, 0, "no send dropped");
    assert!(
        e.streams[0].frames.len() > 20,
        "{} frames",
        e.streams[0].frames.len()
    );
    for w in e.streams[0].frames.windows(2) {
        assert_eq!(w[1].0, w[0].1 + 1, "back to back: {:?}", (w[0].1, w[1].0));
    }
    let mut seqs = Vec::new();
    for (_, _, f) in &e.streams[0].frames {
        let (_, p) = frame::parse_udp(f).unwrap();
        if let Ok((_, wire::Packet::Decide(d))) = wire::parse(p, c.cluster_id) {
            seqs.extend(d.entries().map(|x| x.seq));
        }
    }
    assert_eq!(
        seqs,
        (1..=n).collect::<Vec<_>>(),
        "every request in one frame, in order"
    );
    assert_eq!(e.counter(Counter::RequestsAccepted), n);
    let cycles = e.streams[0].frames.last().unwrap().1 - e.streams[0].frames[0].0 + 1;
    let beats: u64 = e.streams[0].frames.iter().map(|d| d.1 - d.0 + 1).sum();
    eprintln!(
        "loop_period 1: {} frames in {cycles} cycles, {beats} beats (bus busy {:.3})",
        e.streams[0].frames.len(),
        beats as f64 / cycles as f64
    );
    assert_eq!(beats, cycles, "no idle beat");
}

/// `batch_max` above what a frame holds (the reset value is 16; `pkt_gen` carries 8): the
/// leader decides batches of at most 8 (`pkt_gen::SLOTS`) and the loop goes on, every request
/// in one frame, in order.
#[test]
fn a_batch_max_above_the_frame_slots_decides_smaller_batches() {
    let c = Config {
        node_id: 0,
        node_count: 1,
        trees: 1,
        loop_period: 150,
        delta: 3,
        drift: 0,
        timeout: 160,
        batch_max: 16,
        fifo_depth: 32,
        ..cfg()
    };
    assert!(c.validate().is_ok(), "{:?}", c.validate());
    let mut e = Engine::new(&c);
    e.write(addr::CTRL, ctrl::ENABLE | ctrl::START);
    for seq in 1..=10u64 {
        let req = wire::Packet::Request(wire::Entry {
            client_id: 3,
            seq,
            flags: 0,
            payload: b"v",
        })
        .to_vec(c.cluster_id, wire::SENDER_NONE)
        .unwrap();
        e.frame(4, &udp(&c, &req, c.client_port, 0));
    }
    e.idle(4 * 150);
    assert_eq!(e.overruns, 0);
    let mut batches = Vec::new();
    for (_, _, f) in &e.streams[0].frames {
        let (_, p) = frame::parse_udp(f).unwrap();
        if let Ok((_, wire::Packet::Decide(d))) = wire::parse(p, c.cluster_id) {
            let seqs: Vec<u64> = d.entries().map(|x| x.seq).collect();
            if !seqs.is_empty() {
                batches.push(seqs);
            }
        }
    }
    assert!(
        batches.iter().all(|b| b.len() <= rtl::pkt_gen::SLOTS),
        "{batches:?}"
    );
    assert_eq!(
        batches.concat(),
        (1..=10).collect::<Vec<_>>(),
        "{batches:?}"
    );
    assert!(
        batches.iter().any(|b| b.len() == rtl::pkt_gen::SLOTS),
        "{batches:?}"
    );
}

/// Issue 17 item 2: the MAC may pause every output stream (`*_ready`). A leader at the
/// smallest loop period with requests streaming in, once with every stream always ready and
/// once with each stream's `ready` high in a random 40 % of the cycles: no beat is lost,
/// duplicated, changed while offered or withdrawn, and no frame has a gap once started (the
/// output FIFOs hold whole frames; a generator starts a frame only when they have room).
/// With backpressure the loop waits for the generator instead of dropping a send: every
/// request is decided once, in order, on every tree (the same frames on both trees but for
/// each tree's own header bytes), every decision reaches the host or is counted as a host
/// drop, and every request is answered or its reply counted as dropped.
#[test]
fn paused_output_streams_lose_no_frame_and_keep_every_frame_whole() {
    let c = solo_at_loop_period_one();
    let n = 40u64;
    for bp in [None, Some(40u64)] {
        let mut e = Engine::new(&c);
        e.backpressure = bp.map(|p| (Rng::new(0xB4C6_0017), p));
        e.write(addr::CTRL, ctrl::ENABLE | ctrl::START);
        for seq in 1..=n {
            let req = wire::Packet::Request(wire::Entry {
                client_id: 3,
                seq,
                flags: 0,
                payload: &[seq as u8; 100],
            })
            .to_vec(c.cluster_id, wire::SENDER_NONE)
            .unwrap();
            e.frame(4, &udp(&c, &req, c.client_port, 0));
        }
        e.idle(1500);
        // Then the node disabled (no more heartbeats) and every stream ready, so that the
        // FIFOs drain.
        e.backpressure = None;
        streams_ready(&mut e.c.uut, [true; 4], true, true);
        e.write(addr::CTRL, 0);
        e.idle(300);
        assert_eq!(e.overruns, 0, "{bp:?}: no send dropped");
        let mut seqs = Vec::new();
        let mut values = 0u64;
        for ((_, _, g0), (_, _, g1)) in e.streams[0].frames.iter().zip(&e.streams[1].frames) {
            let (_, p0) = frame::parse_udp(g0).expect("tree 0 frame");
            let (_, p1) = frame::parse_udp(g1).expect("tree 1 frame");
            let (_, wire::Packet::Decide(d0)) = wire::parse(p0, c.cluster_id).unwrap() else {
                panic!("{bp:?}: not a DECIDE")
            };
            let (_, wire::Packet::Decide(d1)) = wire::parse(p1, c.cluster_id).unwrap() else {
                panic!("{bp:?}: not a DECIDE")
            };
            assert_eq!((d0.meta.tree, d1.meta.tree), (0, 1));
            assert_eq!(
                (d0.meta.instance, d0.meta.msg_seq),
                (d1.meta.instance, d1.meta.msg_seq)
            );
            assert!(
                d0.entries().eq(d1.entries()),
                "{bp:?}: the trees' batches differ"
            );
            for x in d0.entries() {
                assert_eq!(x.payload, &[x.seq as u8; 100][..]);
                seqs.push(x.seq);
            }
            values += (d0.count > 0) as u64;
        }
        assert_eq!(
            e.streams[0].frames.len(),
            e.streams[1].frames.len(),
            "{bp:?}: every frame on both trees"
        );
        assert_eq!(
            seqs,
            (1..=n).collect::<Vec<_>>(),
            "{bp:?}: every request once, in order"
        );
        let host_dropped = e.counter(Counter::HostDropped);
        assert_eq!(
            e.streams[H].frames.len() as u64 + host_dropped,
            values,
            "{bp:?}: a host frame or a counted drop per decision"
        );
        for (_, _, h) in &e.streams[H].frames {
            let (_, p) = frame::parse_udp(h).expect("host frame");
            assert!(matches!(
                wire::parse(p, c.cluster_id),
                Ok((_, wire::Packet::Decide(_)))
            ));
        }
        assert_eq!(
            e.streams[R].frames.len() as u64 + e.reply_drops,
            n,
            "{bp:?}: an OK or a counted drop per request"
        );
        assert_eq!(e.counter(Counter::RepliesDropped), e.reply_drops);
        eprintln!(
            "backpressure {bp:?}: {} DECIDE frames ({values} with values), {} host frames \
             ({host_dropped} dropped), {} replies ({} dropped)",
            e.streams[0].frames.len(),
            e.streams[H].frames.len(),
            e.streams[R].frames.len(),
            e.reply_drops
        );
    }
}
