//! pkt_gen against proto: every tree's frame must be the frame `proto::frame::emit_udp` makes
//! of the DECIDE `proto::wire` emits (UDP checksum 0, which proto's parser accepts), and frames
//! of consecutive sends follow each other with no idle beat.

use proto::frame::{self, UdpMeta};
use proto::wire::{DecideKind, DecideMeta};
use rtl::lockstep::{decide, mac};
use rtl::pkt_gen::{PktGen, TTL};
use rtl::sim::{Cycle, Rng};
use rust_hdl::prelude::*;

fn bits<const N: usize>(v: u64) -> Bits<N> {
    Bits::<N>::from(v)
}
fn val<const N: usize>(b: Bits<N>) -> u64 {
    (0..N.min(64)).fold(0u64, |a, i| a | (b.get_bit(i) as u64) << i)
}

const GROUPS: [u32; 4] = [0xEF4E_4301, 0xEF4E_4302, 0xEF00_0003, 0xE123_4567];
const PORT: u16 = 7400;
const CLUSTER: u32 = 0xAABB_CCDD;
const SENDER: u8 = 3;

type Entries = Vec<(u32, u64, Vec<u8>)>;

/// This node's MAC and IPv4 address (the `src_mac_*` and `src_ip` registers).
type Src = (u64, u32);
const SRC: Src = (0x024E_4300_0001, 0x0A4E_4301);

fn expected(meta: DecideMeta, entries: &Entries, tree: u8, src: Src) -> Vec<u8> {
    let p = decide(CLUSTER, SENDER, DecideMeta { tree, ..meta }, entries);
    let g = GROUPS[tree as usize].to_be_bytes();
    let m = UdpMeta {
        src_mac: mac(src.0),
        dst_mac: frame::multicast_mac(g),
        src_ip: src.1.to_be_bytes(),
        dst_ip: g,
        src_port: PORT,
        dst_port: PORT,
        ttl: TTL,
    };
    let mut f = vec![0u8; frame::PAYLOAD_OFFSET + p.len()];
    frame::emit_udp(&m, &p, &mut f).unwrap();
    f[40] = 0; // UDP checksum: the generator sends 0 ("none")
    f[41] = 0;
    f
}

struct Gen {
    c: Cycle<PktGen>,
    frames: [Vec<Vec<u8>>; 4],
    cur: [Vec<u8>; 4],
    first_beats: Vec<u64>,
    last_beats: Vec<u64>,
    /// Host copies offered (`h_load`): the image's first `h_len` bytes, and the cycle.
    host: Vec<(Vec<u8>, u64)>,
}

impl Gen {
    fn new(trees: u8, src: Src) -> Self {
        let mut c = Cycle::new(PktGen::default(), |g| &mut g.clock);
        let u = c.uut.as_mut();
        u.sender.next = bits(SENDER as u64);
        u.cluster.next = bits(CLUSTER as u64);
        u.trees.next = bits(trees as u64);
        u.port.next = bits(PORT as u64);
        u.group0.next = bits(GROUPS[0] as u64);
        u.group1.next = bits(GROUPS[1] as u64);
        u.group2.next = bits(GROUPS[2] as u64);
        u.group3.next = bits(GROUPS[3] as u64);
        u.src_mac.next = bits(src.0);
        u.src_ip.next = bits(src.1 as u64);
        Gen {
            c,
            frames: Default::default(),
            cur: Default::default(),
            first_beats: vec![],
            last_beats: vec![],
            host: vec![],
        }
    }
    fn cycle(&mut self) {
        self.c.settle();
        let u = &self.c.uut;
        let outs = [
            (
                u.m0_valid.val(),
                u.m0_data.val(),
                u.m0_keep.val(),
                u.m0_last.val(),
            ),
            (
                u.m1_valid.val(),
                u.m1_data.val(),
                u.m1_keep.val(),
                u.m1_last.val(),
            ),
            (
                u.m2_valid.val(),
                u.m2_data.val(),
                u.m2_keep.val(),
                u.m2_last.val(),
            ),
            (
                u.m3_valid.val(),
                u.m3_data.val(),
                u.m3_keep.val(),
                u.m3_last.val(),
            ),
        ];
        if u.h_load.val() {
            let len = val(u.h_len.val()) as usize;
            let img = u.h_img.val();
            let bytes = (0..len)
                .map(|x| val(img.get_bits::<8>(8 * x)) as u8)
                .collect();
            self.host.push((bytes, self.c.cycle));
        }
        for (t, (v, d, k, l)) in outs.into_iter().enumerate() {
            if !v {
                continue;
            }
            if t == 0 && self.cur[0].is_empty() {
                self.first_beats.push(self.c.cycle);
            }
            let n = val(k).count_ones() as usize;
            self.cur[t].extend_from_slice(&val(d).to_le_bytes()[..n]);
            if l {
                self.frames[t].push(std::mem::take(&mut self.cur[t]));
                if t == 0 {
                    self.last_beats.push(self.c.cycle);
                }
            }
        }
        self.c.edge();
        let u = self.c.uut.as_mut();
        u.send.next = false;
        u.e_valid.next = false;
    }
    fn send(&mut self, meta: DecideMeta, count: usize) {
        let u = self.c.uut.as_mut();
        u.send.next = true;
        u.send_kind.next = bits(meta.kind as u64);
        u.send_count.next = bits(count as u64);
        u.send_instance.next = bits(meta.instance);
        u.send_epoch.next = bits(meta.epoch as u64);
        u.send_seq.next = bits(meta.msg_seq as u64);
    }
    fn entry(&mut self, e: &(u32, u64, Vec<u8>)) {
        let mut w = [0u8; 8];
        w[..e.2.len()].copy_from_slice(&e.2);
        let u = self.c.uut.as_mut();
        u.e_valid.next = true;
        u.e_client.next = bits(e.0 as u64);
        u.e_seq.next = bits(e.1);
        u.e_len.next = bits(e.2.len() as u64);
        // The FIFO's payload word may carry junk past payload_len (Ethernet padding).
        u.e_payload.next = bits(u64::from_be_bytes(w) | if e.2.len() < 8 { 0x5A } else { 0 });
    }
}

fn random_batch(rng: &mut Rng) -> (DecideMeta, Entries) {
    let kind =
        [DecideKind::Heartbeat, DecideKind::Batch, DecideKind::Start][rng.range(0, 2) as usize];
    let n = if kind == DecideKind::Batch {
        rng.range(1, 4)
    } else {
        0
    };
    let entries = (0..n)
        .map(|_| {
            (
                rng.next_u64() as u32,
                rng.range(1, u64::MAX),
                (0..rng.range(0, 8)).map(|i| i as u8 + 0x61).collect(),
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

#[test]
fn every_tree_gets_the_frame_proto_emits() {
    for seed in 0..30 {
        let mut rng = Rng::new(seed);
        let trees = rng.range(1, 4) as u8;
        let src = (rng.next_u64() & 0xFEFF_FFFF_FFFF, rng.next_u64() as u32);
        let mut g = Gen::new(trees, src);
        let mut want = Vec::new();
        for _ in 0..3 {
            let (meta, entries) = random_batch(&mut rng);
            g.send(meta, entries.len());
            g.cycle();
            g.cycle();
            for e in &entries {
                g.entry(e);
                g.cycle();
            }
            for _ in 0..30 {
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
    }
}

/// Full batches sent as fast as their frames leave: the frames follow each other with no idle
/// beat (line rate of the 64-bit bus), and decisions per cycle = 1 / beats per frame.
#[test]
fn full_batches_leave_back_to_back() {
    let mut g = Gen::new(2, SRC);
    let entries: Entries = (0..4).map(|i| (i, i as u64 + 1, vec![7; 8])).collect();
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
