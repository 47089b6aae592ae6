//! host_gen against proto: every host-path frame must be, byte for byte, the frame
//! `proto::frame::emit_udp` makes of the decided DECIDE packet with the configured addresses
//! (UDP checksum 0), and `frame::parse_udp` must give the packet back. Follower decisions come
//! from frames streamed on the four tree inputs (random gaps, sometimes padded, sometimes a next
//! frame right after, `rx_deliver` 2..7 cycles after the last beat as `nc_engine` raises it),
//! leader decisions from the leader's DECIDE stream (`pkt_gen`'s tree 0, `lead_load` in its first
//! beat). Issue 17: copies carry entries of up to 128 payload bytes (frames of up to 1,230 bytes).
//! Timing: the first beat one cycle after the strobe, back to back frames, one pending slot,
//! `drop` when the stream and the slot are taken or the frame does not fit a capture buffer
//! (2048 bytes).

mod common;

use common::lockstep::{decide, generated_frame};
use proto::frame::{self, UdpMeta};
use proto::wire::{DecideKind, DecideMeta};
use rtl::host_gen::{HostGen, MAX_FRAME_BYTES};
use rtl::sim::{Cycle, Rng, bits, val};

fn be(b: &[u8]) -> u64 {
    b.iter().fold(0, |a, &x| a << 8 | x as u64)
}

/// The configured addresses.
#[derive(Clone, Copy, Debug)]
struct Cfg {
    src_mac: [u8; 6],
    src_ip: [u8; 4],
    src_port: u16,
    host_mac: [u8; 6],
    host_ip: [u8; 4],
    host_port: u16,
    ttl: u8,
}

impl Cfg {
    fn random(rng: &mut Rng) -> Cfg {
        let mut b = [0u8; 20];
        b.iter_mut().for_each(|x| *x = rng.next_u64() as u8);
        // The source port and the TTL from one draw: the tests' later draws (copy lengths,
        // timing) stay what their plans were written for.
        let port_ttl = rng.next_u64();
        Cfg {
            src_mac: b[0..6].try_into().unwrap(),
            src_ip: b[6..10].try_into().unwrap(),
            src_port: port_ttl as u16,
            host_mac: b[10..16].try_into().unwrap(),
            host_ip: b[16..20].try_into().unwrap(),
            host_port: rng.next_u64() as u16,
            ttl: 1 + ((port_ttl >> 16) % 255) as u8,
        }
    }
    fn meta(&self) -> UdpMeta {
        UdpMeta {
            src_mac: self.src_mac,
            dst_mac: self.host_mac,
            src_ip: self.src_ip,
            dst_ip: self.host_ip,
            src_port: self.src_port,
            dst_port: self.host_port,
            ttl: self.ttl,
        }
    }
    /// The host frame host_gen must send for `payload`.
    fn expected(&self, payload: &[u8]) -> Vec<u8> {
        generated_frame(self.meta(), payload)
    }
}

/// What is driven in one cycle.
#[derive(Clone, Default)]
struct In {
    /// Per tree, then the leader's stream: (data, keep, last).
    beats: [Option<(u64, u8, bool)>; 5],
    rx: Option<u8>,
    /// The leader frame's length, in its first beat (driven as `lead_ulen` = length - 34).
    lead: Option<u16>,
}

/// A decision as the test sees it: its strobe cycle and the payload, or None when the frame
/// does not fit the image.
#[derive(Clone, Debug)]
struct Decision {
    cycle: u64,
    payload: Option<Vec<u8>>,
}

/// A stimulus being built: inputs per cycle and the decisions in strobe order (the leader's
/// before the follower's in one cycle).
#[derive(Default)]
struct Plan {
    ins: Vec<In>,
    /// (cycle, leader?, payload)
    dec: Vec<(u64, bool, Option<Vec<u8>>)>,
}

impl Plan {
    fn at(&mut self, c: u64) -> &mut In {
        while self.ins.len() <= c as usize {
            self.ins.push(In::default());
        }
        &mut self.ins[c as usize]
    }
    fn free(&self, t: usize, from: u64, n: u64) -> bool {
        (from..from + n).all(|c| {
            self.ins
                .get(c as usize)
                .is_none_or(|i| i.beats[t].is_none())
        })
    }
    /// Stream `f` on tree `t` from cycle `c` (junk in the lanes past the end); last beat cycle.
    fn frame(&mut self, t: usize, c: u64, f: &[u8]) -> u64 {
        let n = f.len().div_ceil(8);
        assert!(self.free(t, c, n as u64));
        for (i, ch) in f.chunks(8).enumerate() {
            let mut w = [0xA5u8; 8];
            w[..ch.len()].copy_from_slice(ch);
            let keep = if ch.len() == 8 {
                0xFF
            } else {
                (1u8 << ch.len()) - 1
            };
            self.at(c + i as u64).beats[t] = Some((u64::from_le_bytes(w), keep, i + 1 == n));
        }
        c + n as u64 - 1
    }
    /// rx_deliver for tree `t` in cycle `c` (the copy's payload, None = oversize).
    fn deliver(&mut self, t: u8, c: u64, payload: Option<Vec<u8>>) {
        assert!(self.at(c).rx.is_none());
        self.at(c).rx = Some(t);
        self.dec.push((c, false, payload));
    }
    /// A leader decision: its frame `f` streams on the leader's input from cycle `c`, with
    /// `lead_load` and `lead_ulen` = `len` - 34 in its first beat; the last beat's cycle.
    fn lead(&mut self, c: u64, f: Vec<u8>, len: u16) -> u64 {
        let payload = (len as usize <= MAX_FRAME_BYTES)
            .then(|| f[frame::PAYLOAD_OFFSET..len as usize].to_vec());
        let last = self.frame(4, c, &f);
        self.at(c).lead = Some(len);
        self.dec.push((c, true, payload));
        last
    }
    /// Decisions in strobe order.
    fn decisions(&self) -> Vec<Decision> {
        let mut d = self.dec.clone();
        d.sort_by_key(|(c, lead, _)| (*c, !*lead));
        d.into_iter()
            .map(|(cycle, _, payload)| Decision { cycle, payload })
            .collect()
    }
}

/// A host frame seen on the output: cycles of its first and last beat, bytes (kept lanes).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Out {
    first: u64,
    last: u64,
    bytes: Vec<u8>,
}

struct Trace {
    frames: Vec<Out>,
    drops: Vec<u64>,
    busy: Vec<bool>,
}

/// Drive the plan through host_gen (and idle cycles until it is done).
fn run(cfg: &Cfg, plan: &Plan) -> Trace {
    let mut c = Cycle::new(HostGen::default(), |h| &mut h.clock);
    {
        let u = c.uut.as_mut();
        // The host stream's receiver takes a beat every cycle (no output FIFO in front of it).
        u.room.next = true;
        u.src_mac.next = bits(be(&cfg.src_mac));
        u.src_ip.next = bits(be(&cfg.src_ip));
        u.src_port.next = bits(cfg.src_port as u64);
        u.host_mac.next = bits(be(&cfg.host_mac));
        u.host_ip.next = bits(be(&cfg.host_ip));
        u.host_port.next = bits(cfg.host_port as u64);
        u.ttl.next = bits(cfg.ttl as u64);
    }
    let mut tr = Trace {
        frames: vec![],
        drops: vec![],
        busy: vec![],
    };
    let mut cur: Option<Out> = None;
    let mut idle = 0;
    let mut i = 0usize;
    loop {
        let inp = plan.ins.get(i).cloned().unwrap_or_default();
        let u = c.uut.as_mut();
        let streams = [
            (
                &mut u.t0_data,
                &mut u.t0_keep,
                &mut u.t0_valid,
                &mut u.t0_last,
            ),
            (
                &mut u.t1_data,
                &mut u.t1_keep,
                &mut u.t1_valid,
                &mut u.t1_last,
            ),
            (
                &mut u.t2_data,
                &mut u.t2_keep,
                &mut u.t2_valid,
                &mut u.t2_last,
            ),
            (
                &mut u.t3_data,
                &mut u.t3_keep,
                &mut u.t3_valid,
                &mut u.t3_last,
            ),
            (&mut u.l_data, &mut u.l_keep, &mut u.l_valid, &mut u.l_last),
        ];
        for (t, (d, k, v, l)) in streams.into_iter().enumerate() {
            match inp.beats[t] {
                Some((data, keep, last)) => {
                    d.next = bits(data);
                    k.next = bits(keep as u64);
                    v.next = true;
                    l.next = last;
                }
                None => {
                    // Junk on an idle stream must be ignored.
                    d.next = bits(0xDEAD_BEEF_0000_0000 | i as u64);
                    k.next = bits(0xFF);
                    v.next = false;
                    l.next = i.is_multiple_of(3);
                }
            }
        }
        u.rx_deliver.next = inp.rx.is_some();
        u.rx_port.next = bits(inp.rx.unwrap_or((i % 4) as u8) as u64);
        u.lead_load.next = inp.lead.is_some();
        u.lead_ulen.next = bits(
            inp.lead
                .unwrap_or(i as u16)
                .wrapping_sub((frame::ETH_LEN + frame::IPV4_LEN) as u16) as u64,
        );
        c.settle();
        let now = c.cycle;
        let u = &c.uut;
        if u.drop.val() {
            tr.drops.push(now);
        }
        tr.busy.push(u.busy.val());
        if u.h_valid.val() {
            let keep = val(u.h_keep.val()) as u8;
            let o = cur.get_or_insert(Out {
                first: now,
                last: now,
                bytes: vec![],
            });
            let n = keep.trailing_ones() as usize;
            assert_eq!(keep as u16, (1u16 << n) - 1, "keep is a low run");
            assert!(u.h_last.val() || keep == 0xFF, "full beats before the last");
            o.bytes
                .extend_from_slice(&val(u.h_data.val()).to_le_bytes()[..n]);
            o.last = now;
            if u.h_last.val() {
                tr.frames.push(cur.take().unwrap());
            }
        } else {
            assert!(cur.is_none(), "idle beat inside a frame at cycle {now}");
        }
        c.edge();
        i += 1;
        if i >= plan.ins.len() && !tr.busy.last().unwrap() && cur.is_none() {
            idle += 1;
            if idle > 2 {
                break;
            }
        }
    }
    tr
}

/// What host_gen must do with the decisions (the rules of rtl/src/host_gen.rs): frames
/// expected (first beat cycle, payload) and the drop cycles.
fn model(decisions: &[Decision], until: u64) -> (Vec<(u64, Vec<u8>)>, Vec<u64>) {
    let mut frames = vec![];
    let mut drops = vec![];
    let mut stream_last: Option<u64> = None;
    let mut pending: Option<Vec<u8>> = None;
    let mut di = 0;
    for c in 0..until {
        let mut q: Vec<Vec<u8>> = pending.take().into_iter().collect();
        let mut drop = false;
        while di < decisions.len() && decisions[di].cycle == c {
            match &decisions[di].payload {
                Some(p) => q.push(p.clone()),
                None => drop = true,
            }
            di += 1;
        }
        let can_start = stream_last.is_none_or(|l| l <= c);
        let mut q = q.into_iter();
        if can_start && let Some(p) = q.next() {
            let beats = (frame::PAYLOAD_OFFSET + p.len()).div_ceil(8) as u64;
            stream_last = Some(c + beats);
            frames.push((c + 1, p));
        }
        pending = q.next();
        if q.next().is_some() {
            drop = true;
        }
        if drop {
            drops.push(c);
        }
    }
    assert_eq!(di, decisions.len());
    (frames, drops)
}

fn check(seed: u64, cfg: &Cfg, plan: &Plan, tr: &Trace) {
    let decisions = plan.decisions();
    let until = tr.busy.len() as u64;
    let (want, want_drops) = model(&decisions, until);
    let ctx = || {
        format!(
            "seed {seed} cfg {cfg:?} decisions {:?}",
            decisions
                .iter()
                .map(|d| (d.cycle, d.payload.as_ref().map(|p| p.len())))
                .collect::<Vec<_>>()
        )
    };
    assert_eq!(tr.drops, want_drops, "drop cycles; {}", ctx());
    assert_eq!(tr.frames.len(), want.len(), "frame count; {}", ctx());
    for (i, (got, (first, payload))) in tr.frames.iter().zip(&want).enumerate() {
        assert_eq!(got.first, *first, "frame {i}: first beat cycle; {}", ctx());
        assert_eq!(
            got.bytes,
            cfg.expected(payload),
            "frame {i}: bytes; {}",
            ctx()
        );
        let (m, p) =
            frame::parse_udp(&got.bytes).unwrap_or_else(|e| panic!("frame {i}: {e}; {}", ctx()));
        assert_eq!(
            (m, p),
            (cfg.meta(), &payload[..]),
            "frame {i}: parsed; {}",
            ctx()
        );
        // Timing, independently of the model: a frame starts one cycle after its strobe, or
        // right after the previous frame's last beat (back to back).
        let prev_last = if i > 0 { tr.frames[i - 1].last } else { 0 };
        assert!(
            decisions.iter().any(|d| d.cycle + 1 == got.first) || got.first == prev_last + 1,
            "frame {i} neither follows a strobe nor the previous frame; {}",
            ctx()
        );
    }
}

/// Entries of the largest DECIDE `pkt_gen` builds.
const SLOTS: u64 = rtl::pkt_gen::SLOTS as u64;

/// A random DECIDE packet from a random other sender, as a frame on tree `tree`: 1 to `most`
/// entries (the random runs: `pkt_gen::SLOTS`, 8; the directed tests keep the 4 of before
/// 2026-12-06, whose frames their timings were written for) of 0 to `max` payload bytes (a
/// quarter of them exactly `max` when it is more than 8).
fn random_copy(rng: &mut Rng, tree: u8, max: u64, most: u64) -> (Vec<u8>, Vec<u8>) {
    let kind =
        [DecideKind::Heartbeat, DecideKind::Batch, DecideKind::Start][rng.range(0, 2) as usize];
    let n = if kind == DecideKind::Batch {
        rng.range(1, most)
    } else {
        0
    };
    let entries: Vec<(u32, u64, Vec<u8>)> = (0..n)
        .map(|_| {
            (
                rng.next_u64() as u32,
                rng.next_u64(),
                (0..if max > 8 && rng.one_in(4) {
                    max
                } else {
                    rng.range(0, max)
                })
                    .map(|_| rng.next_u64() as u8)
                    .collect(),
            )
        })
        .collect();
    let meta = DecideMeta {
        instance: rng.next_u64() >> 8,
        epoch: rng.next_u64() as u32,
        msg_seq: rng.next_u64() as u32,
        tree,
        kind,
    };
    let p = decide(rng.next_u64() as u32, rng.next_u64() as u8, meta, &entries);
    let group = [
        239,
        rng.next_u64() as u8,
        rng.next_u64() as u8,
        rng.next_u64() as u8,
    ];
    let m = UdpMeta {
        src_mac: [2, 9, 9, 9, 9, rng.next_u64() as u8],
        dst_mac: frame::multicast_mac(group),
        src_ip: [10, 1, 2, rng.next_u64() as u8],
        dst_ip: group,
        src_port: rng.next_u64() as u16,
        dst_port: rng.next_u64() as u16,
        ttl: rng.range(1, 255) as u8,
    };
    let mut f = vec![0u8; frame::PAYLOAD_OFFSET + p.len()];
    frame::emit_udp(&m, &p, &mut f).unwrap();
    (f, p)
}

#[test]
fn random_decisions_give_proto_frames_with_exact_timing() {
    let t0 = std::time::Instant::now();
    let (mut frames, mut drops, mut pend, mut b2b, mut big) = (0, 0, 0, 0, 0);
    for seed in 0..30 {
        let mut rng = Rng::new(seed);
        let cfg = Cfg::random(&mut rng);
        let mut plan = Plan::default();
        let horizon = 400;
        // Busy and quiet seeds: mean gap between frames on a tree, share of them delivered.
        let gap_max = rng.range(4, 60);
        let deliver_pct = rng.range(15, 60);
        for t in 0..4u8 {
            let mut c = rng.range(0, 20);
            while c < horizon {
                let (mut f, p) = random_copy(&mut rng, t, 128, SLOTS);
                let mut oversize = false;
                if rng.one_in(4) {
                    // Padding after the IPv4 datagram (the UDP length, not the frame, ends it).
                    let pad = rng.range(1, 20) as usize;
                    f.extend((0..pad).map(|_| rng.next_u64() as u8));
                }
                if rng.one_in(12) {
                    f.resize(
                        rng.range(MAX_FRAME_BYTES as u64 + 1, MAX_FRAME_BYTES as u64 + 76) as usize,
                        0x77,
                    );
                }
                if f.len() > MAX_FRAME_BYTES {
                    oversize = true;
                }
                let last = plan.frame(t as usize, c, &f);
                if rng.pct(deliver_pct) {
                    let d0 = rng.range(2, 7);
                    if let Some(d) = (d0..=7).find(|d| plan.at(last + d).rx.is_none()) {
                        plan.deliver(t, last + d, (!oversize).then_some(p));
                    }
                }
                // Sometimes the next frame right after (it must not overwrite the copy).
                c = last
                    + 1
                    + if rng.one_in(3) {
                        0
                    } else {
                        rng.range(1, gap_max)
                    };
            }
        }
        let mut c = rng.range(0, 10);
        while c < horizon {
            let tree = rng.range(0, 3) as u8;
            let (f, _) = random_copy(&mut rng, tree, 128, SLOTS);
            let len = if rng.one_in(10) {
                rng.range(MAX_FRAME_BYTES as u64 + 1, MAX_FRAME_BYTES as u64 + 376) as u16
            } else {
                f.len() as u16
            };
            // The leader's frames follow each other on its stream (back to back at most).
            let last = plan.lead(c, f, len);
            c = (c + rng.range(1, 4 * gap_max)).max(last + 1);
        }
        let tr = run(&cfg, &plan);
        check(seed, &cfg, &plan, &tr);
        let dec = plan.decisions();
        frames += tr.frames.len();
        drops += tr.drops.len();
        big += dec.iter().filter(|d| d.payload.is_none()).count();
        b2b += tr
            .frames
            .windows(2)
            .filter(|w| w[1].first == w[0].last + 1)
            .count();
        pend += tr
            .frames
            .iter()
            .filter(|f| !dec.iter().any(|d| d.cycle + 1 == f.first))
            .count();
    }
    eprintln!(
        "{frames} host frames ({b2b} back to back, {pend} from the pending slot), {drops} drop cycles ({big} oversize decisions), {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(frames > 50 && b2b > 10 && pend > 10 && drops > 5 && big > 3);
}

/// One copy on each tree, delivered 2 cycles after its last beat (as nc_engine does): the host
/// frame's first beat comes 3 cycles after the copy's last beat (the spec allows 4); a leader
/// image's first beat comes 1 cycle after `lead_load`.
#[test]
fn last_copy_beat_to_first_host_beat_is_three_cycles() {
    for t in 0..4u8 {
        let mut rng = Rng::new(1000 + t as u64);
        let cfg = Cfg::random(&mut rng);
        let mut plan = Plan::default();
        let (f, p) = random_copy(&mut rng, t, 128, 4);
        let last = plan.frame(t as usize, 5, &f);
        plan.deliver(t, last + 2, Some(p));
        let (lf, _) = random_copy(&mut rng, 0, 128, 4);
        let len = lf.len() as u16;
        let lead_at = last + 90;
        plan.lead(lead_at, lf, len);
        let tr = run(&cfg, &plan);
        check(1000 + t as u64, &cfg, &plan, &tr);
        assert_eq!(tr.frames.len(), 2);
        let lat = tr.frames[0].first - last;
        assert_eq!(lat, 3, "last copy beat -> first host beat");
        assert!(lat <= 4);
        assert_eq!(
            tr.frames[1].first,
            lead_at + 1,
            "lead_load -> first host beat: 1 cycle"
        );
        if t == 0 {
            eprintln!(
                "tree copy last beat at {last}, rx_deliver at {}, host frame beats {}..={} ({} B): {lat} cycles",
                last + 2,
                tr.frames[0].first,
                tr.frames[0].last,
                tr.frames[0].bytes.len()
            );
        }
    }
}

/// Decisions queue: the second waits in the pending slot and starts right after the first
/// frame's last beat; a third while both are taken is dropped (`drop` in its strobe cycle, no
/// frame); once the slot is free again a decision waits there again. The leader's goes first
/// when both come in one cycle.
#[test]
fn queued_decisions_leave_back_to_back_and_a_full_queue_drops() {
    let mut rng = Rng::new(2000);
    let cfg = Cfg::random(&mut rng);
    let mut plan = Plan::default();
    let (a, _) = random_copy(&mut rng, 0, 128, 4);
    let (b, pb) = random_copy(&mut rng, 1, 128, 4);
    let (c, pc) = random_copy(&mut rng, 2, 128, 4);
    let (d, pd) = random_copy(&mut rng, 3, 128, 4);
    let lc = plan.frame(2, 0, &c);
    let lb = plan.frame(1, lc + 1, &b);
    let la = a.len() as u16;
    // Leader A and follower B in one cycle: A streams, B waits; follower C a cycle later:
    // dropped.
    plan.lead(lb + 2, a, la);
    plan.deliver(1, lb + 2, Some(pb));
    plan.deliver(2, lb + 3, Some(pc));
    let ld = plan.frame(3, lb + 3, &d);
    plan.deliver(3, ld + 2, Some(pd));
    let tr = run(&cfg, &plan);
    check(2000, &cfg, &plan, &tr);
    let f = &tr.frames;
    assert_eq!(f.len(), 3);
    assert_eq!(
        f[0].first,
        lb + 3,
        "leader's first, one cycle after the strobes"
    );
    assert_eq!(
        f[1].first,
        f[0].last + 1,
        "the follower's from the pending slot, back to back"
    );
    assert_eq!(
        tr.drops,
        vec![lb + 3],
        "C dropped: stream and pending slot taken"
    );
    assert!(
        ld + 2 > f[1].first && ld + 2 < f[1].last,
        "D comes while B streams"
    );
    assert_eq!(
        f[2].first,
        f[1].last + 1,
        "D waited in the freed slot, back to back"
    );
    assert!(tr.busy[(lb + 3) as usize] && !tr.busy[(f[2].last + 1) as usize]);
    eprintln!(
        "frames at {:?}, drop at {:?}",
        f.iter().map(|o| (o.first, o.last)).collect::<Vec<_>>(),
        tr.drops
    );
}

/// A captured copy longer than a capture buffer (2049 bytes) and a leader frame whose
/// `lead_ulen` puts it past one are dropped, with no frame; a padded copy of exactly 2048 bytes goes out with its UDP
/// payload only.
#[test]
fn frames_longer_than_the_image_are_dropped() {
    let mut rng = Rng::new(3000);
    let cfg = Cfg::random(&mut rng);
    let mut plan = Plan::default();
    let (mut big, _) = random_copy(&mut rng, 0, 128, 4);
    big.resize(MAX_FRAME_BYTES + 1, 0x55);
    let lbig = plan.frame(0, 0, &big);
    plan.deliver(0, lbig + 2, None);
    let (mut fit, pfit) = random_copy(&mut rng, 2, 128, 4);
    fit.resize(MAX_FRAME_BYTES, 0x66);
    let lfit = plan.frame(2, 40, &fit);
    plan.deliver(2, lfit + 5, Some(pfit));
    let (limg, _) = random_copy(&mut rng, 1, 128, 4);
    plan.lead(400, limg, MAX_FRAME_BYTES as u16 + 1);
    let tr = run(&cfg, &plan);
    check(3000, &cfg, &plan, &tr);
    assert_eq!(tr.drops, vec![lbig + 2, 400]);
    assert_eq!(tr.frames.len(), 1);
    assert_eq!(tr.frames[0].first, lfit + 6);
}

/// On one tree, copies back to back: the second starts in the cycle after the first's last
/// beat and is still streaming when the first is delivered 7 cycles later (the most
/// nc_engine takes); the ping-pong images keep the first. Then the second is delivered too.
#[test]
fn a_frame_right_after_the_delivered_copy_does_not_overwrite_it() {
    let mut rng = Rng::new(4000);
    let cfg = Cfg::random(&mut rng);
    let mut plan = Plan::default();
    let (a, pa) = random_copy(&mut rng, 2, 128, 4);
    let (b, pb) = random_copy(&mut rng, 2, 8, 4);
    let (c, _) = random_copy(&mut rng, 2, 8, 4);
    let la = plan.frame(2, 3, &a);
    let lb = plan.frame(2, la + 1, &b);
    let _ = plan.frame(2, lb + 1, &c);
    plan.deliver(2, la + 7, Some(pa));
    plan.deliver(2, lb + 7, Some(pb));
    let tr = run(&cfg, &plan);
    check(4000, &cfg, &plan, &tr);
    assert_eq!(tr.frames.len(), 2);
}
