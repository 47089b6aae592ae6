//! pkt_gen against proto: every tree's frame must be the frame `proto::frame::emit_udp` makes
//! of the DECIDE `proto::wire` emits (UDP checksum 0, which proto's parser accepts), and frames
//! of consecutive sends follow each other with no idle beat. Both the 64-bit generator
//! (`PktGen`, the one in `nc_engine`) and the 512-bit one (`PktGen512`) are tested; the rate
//! tests feed the entries as `egress_fifo` streams them (one per cycle, from 2 cycles after the
//! send, behind the previous batch's entries) and print the measured figures (`--nocapture`).

mod common;

use common::lockstep::{decide, generated_frame, payload_bits};
use proto::frame::{self, UdpMeta};
use proto::wire::{DecideKind, DecideMeta};
use rtl::layout::mac_bytes;
use std::collections::VecDeque;

use rtl::pkt_gen::{IMG_BITS_512, PktGen, PktGenImg};
use rtl::pkt_stream::MAX_ENTRY_PAYLOAD;
use rtl::sim::{Cycle, Rng, bits, val};
use rust_hdl::prelude::*;

const GROUPS: [u32; 4] = [0xEF4E_4301, 0xEF4E_4302, 0xEF00_0003, 0xE123_4567];
const PORT: u16 = 7400;
const CLUSTER: u32 = 0xAABB_CCDD;
const SENDER: u8 = 3;

/// A FIFO entry: client_id, seq, payload.
type Entry = (u32, u64, Vec<u8>);
type Entries = Vec<Entry>;

/// This node's MAC and IPv4 address and the TTL (the `src_mac_*`, `src_ip` and `ttl`
/// registers).
type Src = (u64, u32, u8);
const SRC: Src = (0x024E_4300_0001, 0x0A4E_4301, 16);

fn expected(meta: DecideMeta, entries: &Entries, tree: u8, src: Src) -> Vec<u8> {
    let p = decide(CLUSTER, SENDER, DecideMeta { tree, ..meta }, entries);
    let g = GROUPS[tree as usize].to_be_bytes();
    let m = UdpMeta {
        src_mac: mac_bytes(src.0),
        dst_mac: frame::multicast_mac(g),
        src_ip: src.1.to_be_bytes(),
        dst_ip: g,
        src_port: PORT,
        dst_port: PORT,
        ttl: src.2,
    };
    generated_frame(m, &p)
}

/// What the tests need of a generator: the 64-bit streaming one (`PktGen`, in `nc_engine`) and
/// the image generators (`PktGenImg`: the 512-bit one, and the 64-bit one for comparison).
trait Uut: Block + Sized {
    /// Beat width in bytes.
    const BYTES: usize;
    /// Payload bytes an entry can carry.
    const MAX_PAYLOAD: usize;
    /// Entries a frame can carry.
    const MAX_ENTRIES: u64;
    fn make() -> Cycle<Self>;
    fn configure(&mut self, trees: u8, src: Src);
    /// Per tree: valid, the beat's bytes, keep bits, last.
    fn outs(&self) -> [(bool, Vec<u8>, Vec<bool>, bool); 4];
    fn overrun(&self) -> bool;
    /// A send in this cycle would be taken.
    fn ready(&self) -> bool;
    fn h_load(&self) -> bool;
    /// The image generators offer tree 0's whole frame with `h_load`.
    fn h_img(&self) -> Option<Vec<u8>>;
    /// The streaming generator offers its frame's UDP length with `h_load`.
    fn h_ulen(&self) -> Option<u64> {
        None
    }
    fn set_send(&mut self, on: bool, meta: DecideMeta, count: usize);
    fn set_entry(&mut self, on: bool, e: &Entry);
}

macro_rules! uut_common {
    () => {
        fn configure(&mut self, trees: u8, src: Src) {
            self.sender.next = bits(SENDER as u64);
            self.cluster.next = bits(CLUSTER as u64);
            self.trees.next = bits(trees as u64);
            self.port.next = bits(PORT as u64);
            self.group0.next = bits(GROUPS[0] as u64);
            self.group1.next = bits(GROUPS[1] as u64);
            self.group2.next = bits(GROUPS[2] as u64);
            self.group3.next = bits(GROUPS[3] as u64);
            self.src_mac.next = bits(src.0);
            self.src_ip.next = bits(src.1 as u64);
            self.ttl.next = bits(src.2 as u64);
        }
        fn outs(&self) -> [(bool, Vec<u8>, Vec<bool>, bool); 4] {
            fn o<const W: usize, const K: usize>(
                v: bool,
                d: Bits<W>,
                k: Bits<K>,
                l: bool,
            ) -> (bool, Vec<u8>, Vec<bool>, bool) {
                (
                    v,
                    (0..K).map(|x| val(d.get_bits::<8>(8 * x)) as u8).collect(),
                    (0..K).map(|x| k.get_bit(x)).collect(),
                    l,
                )
            }
            [
                o(
                    self.m0_valid.val(),
                    self.m0_data.val(),
                    self.m0_keep.val(),
                    self.m0_last.val(),
                ),
                o(
                    self.m1_valid.val(),
                    self.m1_data.val(),
                    self.m1_keep.val(),
                    self.m1_last.val(),
                ),
                o(
                    self.m2_valid.val(),
                    self.m2_data.val(),
                    self.m2_keep.val(),
                    self.m2_last.val(),
                ),
                o(
                    self.m3_valid.val(),
                    self.m3_data.val(),
                    self.m3_keep.val(),
                    self.m3_last.val(),
                ),
            ]
        }
        fn overrun(&self) -> bool {
            self.overrun.val()
        }
        fn ready(&self) -> bool {
            self.ready.val()
        }
        fn h_load(&self) -> bool {
            self.h_load.val()
        }
        fn set_send(&mut self, on: bool, meta: DecideMeta, count: usize) {
            self.send.next = on;
            self.send_kind.next = bits(meta.kind as u64);
            self.send_count.next = bits(count as u64);
            self.send_instance.next = bits(meta.instance);
            self.send_epoch.next = bits(meta.epoch as u64);
            self.send_seq.next = bits(meta.msg_seq as u64);
        }
    };
}

impl<const W: usize, const K: usize, const I: usize, const Q: usize> Uut for PktGenImg<W, K, I, Q> {
    const BYTES: usize = K;
    const MAX_PAYLOAD: usize = 8;
    const MAX_ENTRIES: u64 = 4;
    fn make() -> Cycle<Self> {
        Cycle::new(Self::default(), |g| &mut g.clock)
    }
    uut_common!();
    fn h_img(&self) -> Option<Vec<u8>> {
        let len = val(self.h_len.val()) as usize;
        let img = self.h_img.val();
        Some(
            (0..len)
                .map(|x| val(img.get_bits::<8>(8 * x)) as u8)
                .collect(),
        )
    }
    fn set_entry(&mut self, on: bool, e: &Entry) {
        let mut w = [0u8; 8];
        w[..e.2.len()].copy_from_slice(&e.2);
        self.e_valid.next = on;
        self.e_client.next = bits(e.0 as u64);
        self.e_seq.next = bits(e.1);
        self.e_len.next = bits(e.2.len() as u64);
        // The FIFO's payload word may carry junk past payload_len (Ethernet padding).
        self.e_payload.next = bits(u64::from_be_bytes(w) | if e.2.len() < 8 { 0x5A } else { 0 });
    }
}

impl Uut for PktGen {
    const BYTES: usize = 8;
    const MAX_PAYLOAD: usize = MAX_ENTRY_PAYLOAD;
    const MAX_ENTRIES: u64 = rtl::pkt_gen::SLOTS as u64;
    fn make() -> Cycle<Self> {
        let mut c = Cycle::new(Self::default(), |g| &mut g.clock);
        // The streams' receivers take a beat every cycle (no output FIFO in front of them).
        c.uut.room.next = true;
        c.settle();
        c
    }
    uut_common!();
    fn h_img(&self) -> Option<Vec<u8>> {
        None
    }
    fn h_ulen(&self) -> Option<u64> {
        Some(val(self.h_ulen.val()))
    }
    fn set_entry(&mut self, on: bool, e: &Entry) {
        // The FIFO's payload word may carry junk past payload_len (Ethernet padding).
        let mut w: Vec<u8> = e.2.clone();
        w.resize(MAX_ENTRY_PAYLOAD, 0x5A);
        self.e_valid.next = on;
        self.e_client.next = bits(e.0 as u64);
        self.e_seq.next = bits(e.1);
        self.e_len.next = bits(e.2.len() as u64);
        self.e_payload.next = payload_bits::<1024>(&w);
    }
}

struct Gen<G: Uut> {
    c: Cycle<G>,
    frames: [Vec<Vec<u8>>; 4],
    cur: [Vec<u8>; 4],
    first_beats: Vec<u64>,
    last_beats: Vec<u64>,
    /// Host copies offered (`h_load`): the image's first `h_len` bytes (image generators) or
    /// tree 0's frame that starts in that beat (the streaming one), and the cycle.
    host: Vec<(Vec<u8>, u64)>,
    /// `h_load` cycles of the streaming generator and its `h_ulen` there, waiting for their
    /// frame to end.
    host_open: Vec<(u64, u64)>,
    /// Cycles with `overrun` high (a send dropped).
    overruns: Vec<u64>,
}

type Gen64 = Gen<PktGen>;

impl<G: Uut> Gen<G> {
    fn new(trees: u8, src: Src) -> Self {
        let mut c = G::make();
        c.uut.as_mut().configure(trees, src);
        Gen {
            c,
            frames: Default::default(),
            cur: Default::default(),
            first_beats: vec![],
            last_beats: vec![],
            host: vec![],
            host_open: vec![],
            overruns: vec![],
        }
    }
    fn cycle(&mut self) {
        self.c.settle();
        let u = &self.c.uut;
        let outs = u.outs();
        if u.overrun() {
            self.overruns.push(self.c.cycle);
        }
        if u.h_load() {
            match u.h_img() {
                Some(img) => self.host.push((img, self.c.cycle)),
                None => self
                    .host_open
                    .push((self.c.cycle, u.h_ulen().expect("a streaming generator"))),
            }
        }
        for (t, (v, d, k, l)) in outs.into_iter().enumerate() {
            if !v {
                continue;
            }
            if t == 0 && self.cur[0].is_empty() {
                self.first_beats.push(self.c.cycle);
            }
            // Keep: the first n bytes of the beat, all of them but in the last beat.
            let n = k.iter().take_while(|&&b| b).count();
            assert!(k[n..].iter().all(|&b| !b), "keep is contiguous");
            assert!(l || n == G::BYTES, "only the last beat is partial");
            self.cur[t].extend_from_slice(&d[..n]);
            if l {
                let f = std::mem::take(&mut self.cur[t]);
                if t == 0 {
                    self.last_beats.push(self.c.cycle);
                    let first = *self.first_beats.last().unwrap();
                    if self.host_open.first().map(|h| h.0) == Some(first) {
                        let (_, ulen) = self.host_open.remove(0);
                        assert_eq!(
                            ulen as usize,
                            f.len() - frame::ETH_LEN - frame::IPV4_LEN,
                            "h_ulen is the host copy's UDP length"
                        );
                        self.host.push((f.clone(), first));
                    }
                }
                self.frames[t].push(f);
            }
        }
        self.c.edge();
        let u = self.c.uut.as_mut();
        u.set_send(
            false,
            DecideMeta {
                instance: 0,
                epoch: 0,
                msg_seq: 0,
                tree: 0,
                kind: DecideKind::Heartbeat,
            },
            0,
        );
        u.set_entry(false, &(0, 0, vec![]));
    }
    fn send(&mut self, meta: DecideMeta, count: usize) {
        self.c.uut.as_mut().set_send(true, meta, count);
    }
    fn entry(&mut self, e: &Entry) {
        self.c.uut.as_mut().set_entry(true, e);
    }
}

/// A random heartbeat, START or batch of 1..=`most` entries (a third of the batches exactly
/// `most`) with 0..=`max` payload bytes (for `max` > 8, a quarter of them exactly `max`),
/// every payload byte different.
fn random_batch(rng: &mut Rng, most: u64, max: usize) -> (DecideMeta, Entries) {
    let kind =
        [DecideKind::Heartbeat, DecideKind::Batch, DecideKind::Start][rng.range(0, 2) as usize];
    let n = if kind == DecideKind::Batch && rng.one_in(3) {
        most
    } else if kind == DecideKind::Batch {
        rng.range(1, most)
    } else {
        0
    };
    let entries = (0..n)
        .map(|_| {
            let len = if max > 8 && rng.one_in(4) {
                max
            } else {
                rng.range(0, max as u64) as usize
            };
            let salt = rng.next_u64() as u8;
            (
                rng.next_u64() as u32,
                rng.range(1, u64::MAX),
                (0..len).map(|i| (i as u8).wrapping_mul(7) ^ salt).collect(),
            )
        })
        .collect();
    let meta = DecideMeta {
        instance: rng.next_u64() >> 8,
        epoch: rng.next_u64() as u32,
        msg_seq: rng.next_u64() as u32,
        tree: 0,
        kind,
    };
    (meta, entries)
}

fn every_tree_gets_the_frame_proto_emits<G: Uut>() -> (usize, usize) {
    let (mut over8, mut full) = (0, 0);
    for seed in 0..30 {
        let mut rng = Rng::new(seed);
        let trees = rng.range(1, 4) as u8;
        let src = (
            rng.next_u64() & 0xFEFF_FFFF_FFFF,
            rng.next_u64() as u32,
            rng.range(1, 255) as u8,
        );
        let mut g = Gen::<G>::new(trees, src);
        let mut want = Vec::new();
        for _ in 0..3 {
            let (meta, entries) = random_batch(&mut rng, G::MAX_ENTRIES, G::MAX_PAYLOAD);
            over8 += entries.iter().filter(|e| e.2.len() > 8).count();
            full += entries.iter().filter(|e| e.2.len() == 128).count();
            g.send(meta, entries.len());
            g.cycle();
            g.cycle();
            for e in &entries {
                g.entry(e);
                g.cycle();
            }
            // (A frame is at most 154 beats: 8 entries of 128 bytes.)
            for _ in 0..166 {
                g.cycle();
            }
            want.push((meta, entries));
        }
        for t in 0..4u8 {
            let got = &g.frames[t as usize];
            if t >= trees {
                assert!(got.is_empty(), "no frame on an unused tree");
                continue;
            }
            assert_eq!(got.len(), want.len(), "seed {seed} tree {t}");
            for (f, (meta, entries)) in got.iter().zip(&want) {
                assert_eq!(f, &expected(*meta, entries, t, src), "seed {seed} tree {t}");
                assert!(frame::parse_udp(f).is_ok());
            }
        }
        // The host copy: tree 0's frame of every decision (BATCH), offered in its first beat.
        let values: Vec<_> = want
            .iter()
            .filter(|(m, _)| m.kind == DecideKind::Batch)
            .collect();
        assert_eq!(
            g.host.len(),
            values.len(),
            "seed {seed}: one host copy per decision"
        );
        for ((img, at), (meta, entries)) in g.host.iter().zip(values) {
            assert_eq!(
                img,
                &expected(*meta, entries, 0, src),
                "seed {seed} host copy"
            );
            assert!(
                g.first_beats.contains(at),
                "seed {seed}: offered in the first beat"
            );
        }
        assert!(g.overruns.is_empty());
    }
    (over8, full)
}

/// Sends as `nc_engine`'s loop makes them: one in every cycle `ready` allows, each a random
/// batch whose entries come as `egress_fifo` streams them (one per cycle, from 2 cycles after
/// the send, behind the earlier ones). The next batch's entries then arrive while the frame
/// before it streams, so a generator that let them overwrite that frame's entries before it
/// has sent them, or that read a previous frame's slots into this one, fails here (every
/// batch differs); every frame must be proto's.
fn sends_at_ready_with_random_batches<G: Uut>() {
    for seed in 0..20 {
        let mut rng = Rng::new(100 + seed);
        let src = (0x02_11_22_33_44_55, 0x0A00_0001, 64);
        let mut g = Gen::<G>::new(4, src);
        let mut want = Vec::new();
        let mut fifo: VecDeque<(u64, Entry)> = VecDeque::new();
        let mut last_out = 0u64;
        let sends = 30;
        while g.frames[0].len() < sends {
            assert!(
                g.c.cycle < 200 * sends as u64,
                "seed {seed}: frames stopped"
            );
            g.c.settle();
            if want.len() < sends && g.c.uut.ready() {
                let (meta, entries) = random_batch(&mut rng, G::MAX_ENTRIES, G::MAX_PAYLOAD);
                g.send(meta, entries.len());
                for e in &entries {
                    let at = (g.c.cycle + 2).max(last_out + 1);
                    last_out = at;
                    fifo.push_back((at, e.clone()));
                }
                want.push((meta, entries));
            }
            if let Some((at, _)) = fifo.front()
                && *at == g.c.cycle
            {
                let (_, e) = fifo.pop_front().unwrap();
                g.entry(&e);
            }
            g.cycle();
        }
        assert!(g.overruns.is_empty(), "seed {seed}: a send was dropped");
        for t in 0..4u8 {
            for (i, (f, (meta, entries))) in g.frames[t as usize].iter().zip(&want).enumerate() {
                assert_eq!(
                    f,
                    &expected(*meta, entries, t, src),
                    "seed {seed} tree {t} frame {i}"
                );
            }
        }
        let gaps: Vec<u64> = g
            .last_beats
            .iter()
            .zip(g.first_beats.iter().skip(1))
            .map(|(a, b)| b - a)
            .collect();
        assert!(
            gaps.contains(&1),
            "seed {seed}: some frames back to back ({gaps:?})"
        );
    }
}

#[test]
fn sends_at_ready_with_random_batches_64() {
    sends_at_ready_with_random_batches::<PktGen>();
}

#[test]
fn sends_at_ready_with_random_batches_512() {
    sends_at_ready_with_random_batches::<PktGenImg<512, 64, IMG_BITS_512, 1>>();
}

/// The streaming generator `nc_engine` uses: entries of 0 to 128 payload bytes (issue 17).
#[test]
fn every_tree_gets_the_frame_proto_emits_64() {
    let (over8, full) = every_tree_gets_the_frame_proto_emits::<PktGen>();
    eprintln!("entries of more than 8 payload bytes: {over8}, of 128: {full}");
    assert!(over8 >= 20 && full >= 10, "{over8} {full}");
}

/// The 64-bit image generator (entries of up to 8 bytes; what `pkt_gen_512` is at 64 bits).
#[test]
fn every_tree_gets_the_frame_proto_emits_64_image() {
    every_tree_gets_the_frame_proto_emits::<PktGenImg>();
}

/// The same random sequences on the 512-bit generator: the same bytes, in 64-byte beats.
#[test]
fn every_tree_gets_the_frame_proto_emits_512() {
    every_tree_gets_the_frame_proto_emits::<PktGenImg<512, 64, IMG_BITS_512, 1>>();
}

/// Full batches sent as fast as their frames leave: the frames follow each other with no idle
/// beat (line rate of the 64-bit bus), and decisions per cycle = 1 / beats per frame.
#[test]
fn full_batches_leave_back_to_back() {
    for len in [8, 128] {
        full_batches_of_len_leave_back_to_back(len);
    }
}

fn full_batches_of_len_leave_back_to_back(len: usize) {
    let mut g = Gen64::new(2, SRC);
    let entries: Entries = (0..4).map(|i| (i, i as u64 + 1, vec![7; len])).collect();
    let beats = expected(
        DecideMeta {
            instance: 1,
            epoch: 0,
            msg_seq: 0,
            tree: 0,
            kind: DecideKind::Batch,
        },
        &entries,
        0,
        SRC,
    )
    .len()
    .div_ceil(8) as u64;
    let frames = 6;
    let mut t = 0;
    for i in 0..frames {
        // The next send comes while the previous frame streams; its entries follow 2 cycles later.
        g.send(
            DecideMeta {
                instance: i + 1,
                epoch: 0,
                msg_seq: i as u32,
                tree: 0,
                kind: DecideKind::Batch,
            },
            4,
        );
        g.cycle();
        g.cycle();
        for e in &entries {
            g.entry(e);
            g.cycle();
        }
        t += 2 + 4;
        while t < (i + 1) * beats {
            g.cycle();
            t += 1;
        }
    }
    for _ in 0..3 * beats {
        g.cycle();
    }
    assert_eq!(g.frames[0].len(), frames as usize);
    let gaps: Vec<u64> = g.first_beats.windows(2).map(|w| w[1] - w[0]).collect();
    eprintln!(
        "frame of {beats} beats ({} B), starts every {gaps:?} cycles",
        g.frames[0][0].len()
    );
    assert!(gaps.iter().all(|&d| d == beats), "back to back: {gaps:?}");
    for (a, b) in g.last_beats.iter().zip(g.first_beats.iter().skip(1)) {
        assert_eq!(b - a, 1, "no idle beat between frames");
    }
}

/// What a run at a fixed send period gave (tree 0).
#[derive(Debug)]
struct Rate {
    /// Beats of one frame.
    beats: u64,
    /// Frames sent / sends.
    frames: usize,
    sends: usize,
    overruns: usize,
    /// Cycles between consecutive first beats (steady state: after the first two frames).
    gaps: Vec<u64>,
    /// Idle cycles between a frame's last beat and the next first beat, minus one (0 = back to back).
    idle: Vec<u64>,
}

/// `sends` sends, one every `period` cycles (the leader loop at `loop_period` = `period` with a
/// full FIFO), each taking `count` entries of `len` payload bytes, whose entries come as
/// `egress_fifo` streams them: one per cycle, the first 2 cycles after the send, behind the
/// previous batches' entries. With no overrun every frame must be proto's, byte for byte.
fn rate<G: Uut>(period: u64, count: usize, len: usize, sends: usize) -> Rate {
    let mut g = Gen::<G>::new(4, SRC);
    let kind = if count == 0 {
        DecideKind::Heartbeat
    } else {
        DecideKind::Batch
    };
    let meta = |i: usize| DecideMeta {
        instance: i as u64 + 1,
        epoch: 5,
        msg_seq: i as u32,
        tree: 0,
        kind,
    };
    let batch = |i: usize| -> Entries {
        (0..count)
            .map(|j| {
                let n = (i * count + j) as u32;
                (n, n as u64 + 1, vec![n as u8; len])
            })
            .collect()
    };
    let mut fifo: VecDeque<(u64, Entry)> = VecDeque::new();
    let mut last_out = 0u64;
    let mut sent = 0;
    let end = period * sends as u64 + 40;
    for t in 0..end {
        if t % period == 0 && sent < sends {
            g.send(meta(sent), count);
            for e in batch(sent) {
                // One per cycle, from 2 cycles after the send, behind the earlier entries.
                let at = (t + 2).max(last_out + 1);
                last_out = at;
                fifo.push_back((at, e));
            }
            sent += 1;
        }
        if let Some((at, _)) = fifo.front()
            && *at == g.c.cycle
        {
            let (_, e) = fifo.pop_front().unwrap();
            g.entry(&e);
        }
        g.cycle();
    }
    let beats = expected(meta(0), &batch(0), 0, SRC)
        .len()
        .div_ceil(G::BYTES) as u64;
    if g.overruns.is_empty() {
        assert_eq!(g.frames[0].len(), sends);
        for t in 0..4 {
            for (i, f) in g.frames[t].iter().enumerate() {
                assert_eq!(f, &expected(meta(i), &batch(i), t as u8, SRC), "frame {i}");
            }
        }
    }
    let gaps = g
        .first_beats
        .windows(2)
        .skip(1)
        .map(|w| w[1] - w[0])
        .collect();
    let idle = g
        .last_beats
        .iter()
        .zip(g.first_beats.iter().skip(1))
        .skip(1)
        .map(|(a, b)| b - a - 1)
        .collect();
    Rate {
        beats,
        frames: g.frames[0].len(),
        sends,
        overruns: g.overruns.len(),
        gaps,
        idle,
    }
}

/// Every steady-state frame started `gap` cycles after the previous one.
fn steady(r: &Rate, gap: u64) -> bool {
    !r.gaps.is_empty() && r.gaps.iter().all(|&d| d == gap)
}

fn report(what: &str, period: u64, r: &Rate, per_frame: usize) {
    let Some(&gap) = r.gaps.first() else {
        eprintln!(
            "{what}: send every {period} cycles: {} of {} frames, {} overruns (no steady rate)",
            r.frames, r.sends, r.overruns
        );
        return;
    };
    eprintln!(
        "{what}: send every {period} cycles: {} of {} frames, {} overruns, {} beats/frame, a frame every {gap} cycles ({} idle beats) = {:.4} decisions/cycle, {:.4} requests/cycle",
        r.frames,
        r.sends,
        r.overruns,
        r.beats,
        r.idle.first().copied().unwrap_or(0),
        1.0 / gap as f64,
        per_frame as f64 / gap as f64,
    );
}

/// 512-bit, full batches (4 entries of 8 bytes: 174-byte frames, 3 beats). The FIFO streams one
/// entry per cycle, so a full batch every 4 cycles is the most the FIFO can feed: with the send
/// queue the generator keeps that rate (a frame every 4 cycles, 1 idle beat per frame, 0.25
/// decisions and 1 request per cycle); at 3 cycles the entries fall behind and sends are dropped.
/// Without the queue the send has to wait for the previous frame's start (2 + 4 cycles after its
/// send): a frame every 6 cycles.
#[test]
fn wide_full_batches_every_four_cycles() {
    let r = rate::<PktGenImg<512, 64, IMG_BITS_512, 1>>(4, 4, 8, 10);
    report("512-bit, full batches, queue", 4, &r, 4);
    assert_eq!((r.beats, r.overruns), (3, 0));
    assert!(steady(&r, 4) && r.idle.iter().all(|&i| i == 1), "{r:?}");
    let r = rate::<PktGenImg<512, 64, IMG_BITS_512, 1>>(3, 4, 8, 10);
    report("512-bit, full batches, queue", 3, &r, 4);
    assert!(r.overruns > 0, "faster than the FIFO can feed: {r:?}");

    let r = rate::<PktGenImg<512, 64, IMG_BITS_512, 0>>(6, 4, 8, 10);
    report("512-bit, full batches, no queue", 6, &r, 4);
    assert_eq!(r.overruns, 0);
    assert!(steady(&r, 6) && r.idle.iter().all(|&i| i == 3), "{r:?}");
    let r = rate::<PktGenImg<512, 64, IMG_BITS_512, 0>>(5, 4, 8, 10);
    report("512-bit, full batches, no queue", 5, &r, 4);
    assert!(r.overruns > 0, "{r:?}");
}

/// 512-bit, batch_max = 1 (one entry of 8 bytes: 102-byte frames, 2 beats): with the queue a
/// frame every 2 cycles, back to back (line rate: 0.5 decisions per cycle); without it every 3.
#[test]
fn wide_single_entries_at_line_rate() {
    let r = rate::<PktGenImg<512, 64, IMG_BITS_512, 1>>(2, 1, 8, 12);
    report("512-bit, batch of 1, queue", 2, &r, 1);
    assert_eq!((r.beats, r.overruns), (2, 0));
    assert!(steady(&r, 2) && r.idle.iter().all(|&i| i == 0), "{r:?}");
    let r = rate::<PktGenImg<512, 64, IMG_BITS_512, 1>>(1, 1, 8, 12);
    report("512-bit, batch of 1, queue", 1, &r, 1);
    assert!(r.overruns > 0, "more than the bus carries: {r:?}");

    let r = rate::<PktGenImg<512, 64, IMG_BITS_512, 0>>(3, 1, 8, 12);
    report("512-bit, batch of 1, no queue", 3, &r, 1);
    assert_eq!(r.overruns, 0);
    assert!(steady(&r, 3) && r.idle.iter().all(|&i| i == 1), "{r:?}");
    let r = rate::<PktGenImg<512, 64, IMG_BITS_512, 0>>(2, 1, 8, 12);
    report("512-bit, batch of 1, no queue", 2, &r, 1);
    assert!(r.overruns > 0, "{r:?}");
}

/// 512-bit heartbeats (78-byte frames, 2 beats): a frame every 2 cycles, back to back, with or
/// without the queue (no entries to wait for).
#[test]
fn wide_heartbeats_at_line_rate() {
    let r = rate::<PktGenImg<512, 64, IMG_BITS_512, 1>>(2, 0, 0, 12);
    report("512-bit, heartbeats, queue", 2, &r, 0);
    assert_eq!((r.beats, r.overruns), (2, 0));
    assert!(steady(&r, 2) && r.idle.iter().all(|&i| i == 0), "{r:?}");
    let r = rate::<PktGenImg<512, 64, IMG_BITS_512, 0>>(2, 0, 0, 12);
    report("512-bit, heartbeats, no queue", 2, &r, 0);
    assert_eq!(r.overruns, 0);
    assert!(steady(&r, 2) && r.idle.iter().all(|&i| i == 0), "{r:?}");
}

/// The same three loads on the 64-bit generator (no queue, as in `nc_engine`): at the frame's
/// beat count every frame leaves back to back.
#[test]
fn narrow_rates_for_comparison() {
    for (count, len, what) in [
        (4, 8, "batches of 4 8-byte requests"),
        (1, 8, "batch of 1"),
        (0, 0, "heartbeats"),
        (4, 128, "batches of 4 128-byte requests"),
        (6, 128, "batches of 6 128-byte requests"),
        (6, 8, "batches of 6 8-byte requests"),
        (8, 128, "full batches of 128-byte requests"),
        (8, 8, "full batches of 8-byte requests"),
        (1, 128, "batch of 1 of 128 bytes"),
        (3, 77, "batch of 3 of 77 bytes"),
    ] {
        let beats = rate::<PktGen>(1000, count, len, 1).beats;
        let r = rate::<PktGen>(beats, count, len, 6);
        report(&format!("64-bit, {what}"), beats, &r, count);
        assert_eq!(r.overruns, 0);
        assert!(steady(&r, beats) && r.idle.iter().all(|&i| i == 0), "{r:?}");
    }
}
