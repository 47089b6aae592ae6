//! `pkt_gen`: DECIDE frames on one `W`-bit stream per tree (AXI-Stream shape: `data`, `keep`,
//! `valid`, `last`; the receiving MAC takes a beat every cycle), built from `nc_core`'s send
//! command and the batch's entries (the `ok_*` stream of the egress FIFO). This file holds the
//! *image* generator `PktGenImg`, whose entries carry up to 8 payload bytes: [`PktGen512`] (512-bit
//! beats, exported as `pkt_gen_512`) is one. The 64-bit generator exported as `pkt_gen`, [`PktGen`],
//! streams entries of up to 128 bytes instead (`crate::pkt_stream`, issue 17). The frame bytes are
//! the same at every width; only the beat changes (byte x of the frame is byte x mod W/8 of beat
//! x / (W/8)).
//!
//! A send latches its command; once the batch's entries have arrived the whole frame image is
//! latched (header + entries, at most 4 entries of up to 8 payload bytes) and streamed,
//! one beat per cycle, identically on every tree except each tree's destination MAC/IP, IPv4
//! checksum and `tree` byte. The next frame starts in the cycle after the last beat when it
//! is ready (back to back). A send while another is still waiting to start is dropped
//! (`overrun`) — unless `Q` = 1 (the 512-bit generator), where one such send is queued behind
//! the waiting one when the waiting one is sure to start before the queued one's first entry can
//! arrive (the streaming frame ends within 2 cycles; always so for frames of at most 3 beats):
//! entries come from the FIFO one per cycle, 2 cycles after their send, so without the queue a
//! full batch's send must wait 6 cycles for the previous one's start, with it 4 (the FIFO's
//! rate). The entry slots are refilled from the cycle a frame starts (its image is latched then).
//! UDP checksum 0 ("none", which proto accepts). Every byte's place comes from proto: the
//! constant bytes are those of a frame emitted by `proto::frame::emit_udp`, and the field
//! bytes — the source MAC and IPv4 address from the `src_mac_*` / `src_ip` registers and the
//! TTL from the `ttl` register among them — are placed by [`crate::layout::Layout`].
//!
//! The host path: in the first beat of a value frame (BATCH or CONFIG: a decision) `h_load`
//! is high with tree 0's whole frame image on `h_img` and its length on `h_len`, for
//! `host_gen` to readdress (the model's host copy is tree 0's packet).

use proto::frame::{self, UdpMeta};
use proto::wire::{self, Decide, DecideKind, DecideMeta, Entry, Packet};
use rust_hdl::prelude::*;

use crate::layout::{Field, Layout};
use crate::prim::{ByteSrc, EntryBytes, HeaderBytes, OnesAdd, ZeroExtend};

/// Entries one frame of the streaming generator ([`crate::pkt_stream::PktGen`]) can carry
/// (`nc_core` caps a batch there); the image generators here take 4.
pub const SLOTS: usize = proto::regs::BATCH_RTL as usize;
/// Source MAC of the reference frame (any: the generated frames take it from `src_mac`).
const REF_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
/// TTL of the reference frames the byte maps are cut from (any: the generated frames take
/// it from the `ttl` register).
const REF_TTL: u8 = 64;
/// Image width: the header and 4 entries of at most 24 bytes, rounded up to whole beats.
pub const IMG_BITS: usize = 1408;
/// The 512-bit generator's image: [`IMG_BITS`] rounded up to whole 512-bit beats (3).
pub const IMG_BITS_512: usize = 1536;

/// The 512-bit generator (64 keep bits, a 1536-bit image, one send queued behind the waiting
/// one), exported as `pkt_gen_512`.
pub type PktGen512 = PktGenImg<512, 64, IMG_BITS_512, 1>;

pub use crate::pkt_stream::PktGen;

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
}

/// The reference frame whose constant bytes the generator copies (any field values).
fn reference() -> Vec<u8> {
    let meta = DecideMeta {
        instance: 1,
        epoch: 1,
        msg_seq: 1,
        tree: 0,
        kind: DecideKind::Heartbeat,
    };
    let p = Packet::Decide(Decide {
        meta,
        count: 0,
        entries_raw: &[],
    })
    .to_vec(1, 1)
    .expect("valid");
    let udp = UdpMeta {
        src_mac: REF_MAC,
        dst_mac: frame::multicast_mac([239, 0, 0, 1]),
        src_ip: [10, 0, 0, 1],
        dst_ip: [239, 0, 0, 1],
        src_port: 1,
        dst_port: 1,
        ttl: REF_TTL,
    };
    let mut f = vec![0u8; frame::PAYLOAD_OFFSET + p.len()];
    frame::emit_udp(&udp, &p, &mut f).expect("fits");
    f
}

fn place(map: &mut [ByteSrc], base: usize, f: Field, input: usize) {
    for j in 0..f.len {
        map[f.off - base + j] = ByteSrc::Field(input, j);
    }
}

/// The header byte map (inputs in `HeaderBytes::INPUTS` order).
pub fn header_map() -> Vec<ByteSrc> {
    let l = Layout::probe();
    let r = reference();
    let mut m: Vec<ByteSrc> = r[..78].iter().map(|&b| ByteSrc::Const(b)).collect();
    place(
        &mut m,
        0,
        Field {
            off: l.eth_dst.off + 3,
            len: 3,
        },
        0,
    );
    place(&mut m, 0, l.ip_total_len, 1);
    place(&mut m, 0, l.ip_csum, 2);
    place(&mut m, 0, l.ip_dst, 3);
    place(&mut m, 0, l.udp_len, 4);
    place(&mut m, 0, l.udp_src, 5);
    place(&mut m, 0, l.udp_dst, 5);
    for j in 0..l.udp_csum.len {
        m[l.udp_csum.off + j] = ByteSrc::Const(0);
    }
    place(&mut m, 0, l.cluster, 6);
    place(&mut m, 0, l.body_len, 7);
    place(&mut m, 0, l.sender, 8);
    place(&mut m, 0, l.d_instance, 9);
    place(&mut m, 0, l.d_epoch, 10);
    place(&mut m, 0, l.d_seq, 11);
    place(&mut m, 0, l.d_tree, 12);
    place(&mut m, 0, l.d_kind, 13);
    place(&mut m, 0, l.d_count, 14);
    place(&mut m, 0, l.eth_src, 15);
    place(&mut m, 0, l.ip_src, 16);
    place(&mut m, 0, l.ip_ttl, 17);
    m
}

/// The entry byte map (inputs in `EntryBytes::INPUTS` order): a batch entry (flags 0).
pub fn entry_map() -> Vec<ByteSrc> {
    let l = Layout::probe();
    let base = frame::PAYLOAD_OFFSET + wire::HEADER_LEN;
    let e = Entry {
        client_id: 1,
        seq: 1,
        flags: 0,
        payload: &[0; 8],
    };
    let r = Packet::Request(e)
        .to_vec(1, wire::SENDER_NONE)
        .expect("valid");
    let mut m: Vec<ByteSrc> = r[wire::HEADER_LEN..]
        .iter()
        .map(|&b| ByteSrc::Const(b))
        .collect();
    assert_eq!(m.len(), 24);
    place(&mut m, base, l.e_client, 0);
    m[l.e_len.off - base] = ByteSrc::Const(0);
    place(
        &mut m,
        base,
        Field {
            off: l.e_len.off + 1,
            len: 1,
        },
        1,
    );
    place(&mut m, base, l.e_seq, 2);
    place(&mut m, base, l.e_payload, 3);
    m
}

/// The entry header's byte map (inputs in `EntryHead::INPUTS` order): the first 16 bytes of
/// [`entry_map`].
pub fn entry_head_map() -> Vec<ByteSrc> {
    entry_map()[..wire::ENTRY_HEADER_LEN].to_vec()
}

/// One's-complement sum (IPv4 checksum) of the reference header's words that do not change:
/// everything but total_len, checksum, the source and destination addresses and the TTL byte
/// (its word counts the protocol byte only).
pub(crate) fn ip_const_sum() -> u64 {
    let l = Layout::probe();
    let r = reference();
    let ip = l.ip_vihl.off;
    let mut s: u64 = 0;
    for w in 0..10 {
        let off = ip + 2 * w;
        if off == l.ip_total_len.off
            || off == l.ip_csum.off
            || off == l.ip_dst.off
            || off == l.ip_dst.off + 2
            || off == l.ip_src.off
            || off == l.ip_src.off + 2
        {
            continue;
        }
        let hi = if off == l.ip_ttl.off { 0 } else { r[off] };
        s += u16::from_be_bytes([hi, r[off + 1]]) as u64;
    }
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    s
}

block! {
    /// `ready`: whether a send in this cycle would be taken, computed from the generator's
    /// registers only — its own block, so that the core may gate its send on it without a
    /// combinational loop (Verilator's UNOPTFLAT would see one through `pkt_gen`'s main block,
    /// which reads `send`). The same rules as `start`, `q_room` and `overrun` there.
    pub struct GenReady(queue: bool) {
        pub c_pending: Signal<In, Bit>,
        pub q_pending: Signal<In, Bit>,
        pub streaming: Signal<In, Bit>,
        pub beat: Signal<In, Bits<8>>,
        pub nbeats: Signal<In, Bits<8>>,
        pub n_got: Signal<In, Bits<8>>,
        pub count: Signal<In, Bits<8>>,
        pub ready: Signal<Out, Bit>,
        last: Signal<Local, Bit>,
        start: Signal<Local, Bit>,
        room: Signal<Local, Bit>,
        queue: Constant<Bit> = Constant::new(queue),
        k1: Constant<Bits<8>> = k(1),
        k3: Constant<Bits<8>> = k(3),
    }
}

impl GenReady {
    pub(crate) fn new(queue: bool) -> Self {
        Self::build(queue)
    }
}

impl Logic for GenReady {
    #[hdl_gen]
    fn update(&mut self) {
        self.last.next =
            self.streaming.val() && (self.beat.val() == self.nbeats.val() - self.k1.val());
        self.start.next = self.c_pending.val()
            && (!self.streaming.val() || self.last.val())
            && (self.n_got.val() == self.count.val());
        self.room.next = self.queue.val()
            && self.c_pending.val()
            && !self.start.val()
            && !self.q_pending.val()
            && (!self.streaming.val() || ((self.beat.val() + self.k3.val()) >= self.nbeats.val()));
        self.ready.next = !((self.c_pending.val() && !self.start.val() && !self.room.val())
            || (self.start.val() && self.q_pending.val()));
    }
}

/// The image generator: `W`-bit output beats with `K` = `W`/8 keep bits, an image of `I` bits
/// (the frame, [`IMG_BITS`] at least, rounded up to whole beats) and `Q` (0 or 1) queued sends
/// behind the waiting one. [`PktGen512`] is the 512-bit one; the 64-bit generator `nc_engine`
/// uses is the streaming [`PktGen`].
#[derive(LogicBlock)]
pub struct PktGenImg<
    const W: usize = 64,
    const K: usize = 8,
    const I: usize = IMG_BITS,
    const Q: usize = 0,
> {
    pub clock: Signal<In, Clock>,
    pub send: Signal<In, Bit>,
    pub send_kind: Signal<In, Bits<2>>,
    pub send_count: Signal<In, Bits<8>>,
    pub send_instance: Signal<In, Bits<64>>,
    pub send_epoch: Signal<In, Bits<32>>,
    pub send_seq: Signal<In, Bits<32>>,
    pub e_valid: Signal<In, Bit>,
    pub e_client: Signal<In, Bits<32>>,
    pub e_seq: Signal<In, Bits<64>>,
    pub e_len: Signal<In, Bits<8>>,
    pub e_payload: Signal<In, Bits<64>>,
    pub sender: Signal<In, Bits<8>>,
    pub cluster: Signal<In, Bits<32>>,
    pub trees: Signal<In, Bits<8>>,
    pub port: Signal<In, Bits<16>>,
    pub group0: Signal<In, Bits<32>>,
    pub group1: Signal<In, Bits<32>>,
    pub group2: Signal<In, Bits<32>>,
    pub group3: Signal<In, Bits<32>>,
    /// This node's MAC address (register `src_mac_hi`:`src_mac_lo`), first byte most significant.
    pub src_mac: Signal<In, Bits<48>>,
    /// This node's IPv4 address (register `src_ip`).
    pub src_ip: Signal<In, Bits<32>>,
    /// IPv4 TTL of the frames (register `ttl`).
    pub ttl: Signal<In, Bits<8>>,
    pub m0_data: Signal<Out, Bits<W>>,
    pub m0_keep: Signal<Out, Bits<K>>,
    pub m0_valid: Signal<Out, Bit>,
    pub m0_last: Signal<Out, Bit>,
    pub m1_data: Signal<Out, Bits<W>>,
    pub m1_keep: Signal<Out, Bits<K>>,
    pub m1_valid: Signal<Out, Bit>,
    pub m1_last: Signal<Out, Bit>,
    pub m2_data: Signal<Out, Bits<W>>,
    pub m2_keep: Signal<Out, Bits<K>>,
    pub m2_valid: Signal<Out, Bit>,
    pub m2_last: Signal<Out, Bit>,
    pub m3_data: Signal<Out, Bits<W>>,
    pub m3_keep: Signal<Out, Bits<K>>,
    pub m3_valid: Signal<Out, Bit>,
    pub m3_last: Signal<Out, Bit>,
    pub busy: Signal<Out, Bit>,
    pub overrun: Signal<Out, Bit>,
    /// A send in this cycle would be taken (not an overrun); from registers only, so the core
    /// can hold its loop on it without a combinational loop (`nc_engine` does: a send waits,
    /// it is never dropped).
    pub ready: Signal<Out, Bit>,
    /// First beat of a value frame (a decision): its tree-0 image is on `h_img`.
    pub h_load: Signal<Out, Bit>,
    /// Tree 0's whole frame image (byte x in bits 8x+7..8x) while a frame streams.
    pub h_img: Signal<Out, Bits<I>>,
    /// The frame's length in bytes.
    pub h_len: Signal<Out, Bits<16>>,
    r_c_pending: DFF<Bit>,
    r_c_kind: DFF<Bits<2>>,
    r_c_count: DFF<Bits<8>>,
    r_c_instance: DFF<Bits<64>>,
    r_c_epoch: DFF<Bits<32>>,
    r_c_seq: DFF<Bits<32>>,
    r_n_got: DFF<Bits<8>>,
    /// The IPv4 checksum's constant words + source address + TTL, registered (configuration is
    /// written only while the core is disabled, so it is settled long before a send).
    r_ps: DFF<Bits<16>>,
    r_q_pending: DFF<Bit>,
    r_q_kind: DFF<Bits<2>>,
    r_q_count: DFF<Bits<8>>,
    r_q_instance: DFF<Bits<64>>,
    r_q_epoch: DFF<Bits<32>>,
    r_q_seq: DFF<Bits<32>>,
    q_take: Signal<Local, Bit>,
    q_room: Signal<Local, Bit>,
    ready_unit: GenReady,
    k_queue: Constant<Bit>,
    k3_8: Constant<Bits<8>>,
    r_streaming: DFF<Bit>,
    r_beat: DFF<Bits<8>>,
    r_nbeats: DFF<Bits<8>>,
    r_lastkeep: DFF<Bits<K>>,
    r_img: DFF<Bits<I>>,
    r_f_len: DFF<Bits<16>>,
    r_f_kind: DFF<Bits<2>>,
    r_f_count: DFF<Bits<8>>,
    r_f_instance: DFF<Bits<64>>,
    r_f_epoch: DFF<Bits<32>>,
    r_f_seq: DFF<Bits<32>>,
    r_s0_client: DFF<Bits<32>>,
    r_s0_len: DFF<Bits<8>>,
    r_s0_seq: DFF<Bits<64>>,
    r_s0_payload: DFF<Bits<64>>,
    r_s1_client: DFF<Bits<32>>,
    r_s1_len: DFF<Bits<8>>,
    r_s1_seq: DFF<Bits<64>>,
    r_s1_payload: DFF<Bits<64>>,
    r_s2_client: DFF<Bits<32>>,
    r_s2_len: DFF<Bits<8>>,
    r_s2_seq: DFF<Bits<64>>,
    r_s2_payload: DFF<Bits<64>>,
    r_s3_client: DFF<Bits<32>>,
    r_s3_len: DFF<Bits<8>>,
    r_s3_seq: DFF<Bits<64>>,
    r_s3_payload: DFF<Bits<64>>,
    start: Signal<Local, Bit>,
    add_ps_a: OnesAdd,
    ps_b: Signal<Local, Bits<16>>,
    add_ps_c: OnesAdd,
    ps_d: Signal<Local, Bits<16>>,
    add_ps_e: OnesAdd,
    ps_f: Signal<Local, Bits<16>>,
    last_beat: Signal<Local, Bit>,
    wslot: Signal<Local, Bits<8>>,
    l_len: Signal<Local, Bits<16>>,
    l_nbeats: Signal<Local, Bits<16>>,
    l_lastbytes: Signal<Local, Bits<16>>,
    boff: Signal<Local, Bits<11>>,
    e_img: Signal<Local, Bits<I>>,
    total_len: Signal<Local, Bits<16>>,
    udp_len: Signal<Local, Bits<16>>,
    body_len: Signal<Local, Bits<16>>,
    pm0: Signal<Local, Bits<64>>,
    off0: Signal<Local, Bits<16>>,
    t0: Signal<Local, Bits<I>>,
    pm1: Signal<Local, Bits<64>>,
    off1: Signal<Local, Bits<16>>,
    t1: Signal<Local, Bits<I>>,
    pm2: Signal<Local, Bits<64>>,
    off2: Signal<Local, Bits<16>>,
    t2: Signal<Local, Bits<I>>,
    pm3: Signal<Local, Bits<64>>,
    off3: Signal<Local, Bits<16>>,
    t3: Signal<Local, Bits<I>>,
    off4: Signal<Local, Bits<16>>,
    add_cs0_a: OnesAdd,
    cs0_b: Signal<Local, Bits<16>>,
    add_cs0_c: OnesAdd,
    cs0_d: Signal<Local, Bits<16>>,
    add_cs0_e: OnesAdd,
    cs0_f: Signal<Local, Bits<16>>,
    frame0: Signal<Local, Bits<I>>,
    add_cs1_a: OnesAdd,
    cs1_b: Signal<Local, Bits<16>>,
    add_cs1_c: OnesAdd,
    cs1_d: Signal<Local, Bits<16>>,
    add_cs1_e: OnesAdd,
    cs1_f: Signal<Local, Bits<16>>,
    frame1: Signal<Local, Bits<I>>,
    add_cs2_a: OnesAdd,
    cs2_b: Signal<Local, Bits<16>>,
    add_cs2_c: OnesAdd,
    cs2_d: Signal<Local, Bits<16>>,
    add_cs2_e: OnesAdd,
    cs2_f: Signal<Local, Bits<16>>,
    frame2: Signal<Local, Bits<I>>,
    add_cs3_a: OnesAdd,
    cs3_b: Signal<Local, Bits<16>>,
    add_cs3_c: OnesAdd,
    cs3_d: Signal<Local, Bits<16>>,
    add_cs3_e: OnesAdd,
    cs3_f: Signal<Local, Bits<16>>,
    frame3: Signal<Local, Bits<I>>,
    lenw0: ZeroExtend<8, 16>,
    lenw1: ZeroExtend<8, 16>,
    lenw2: ZeroExtend<8, 16>,
    lenw3: ZeroExtend<8, 16>,
    beatw: ZeroExtend<8, 11>,
    kindw: ZeroExtend<2, 8>,
    countw: ZeroExtend<8, 16>,
    ttlw: ZeroExtend<8, 16>,
    ent0: EntryBytes,
    ent1: EntryBytes,
    ent2: EntryBytes,
    ent3: EntryBytes,
    xe0: ZeroExtend<192, I>,
    xe1: ZeroExtend<192, I>,
    xe2: ZeroExtend<192, I>,
    xe3: ZeroExtend<192, I>,
    hdr0: HeaderBytes,
    hdr1: HeaderBytes,
    hdr2: HeaderBytes,
    hdr3: HeaderBytes,
    xh0: ZeroExtend<624, I>,
    xh1: ZeroExtend<624, I>,
    xh2: ZeroExtend<624, I>,
    xh3: ZeroExtend<624, I>,
    k0_8: Constant<Bits<8>>,
    k_batch: Constant<Bits<2>>,
    k_config: Constant<Bits<2>>,
    k1_8: Constant<Bits<8>>,
    k4_8: Constant<Bits<8>>,
    k1_16: Constant<Bits<16>>,
    k8_16: Constant<Bits<16>>,
    k3_16: Constant<Bits<16>>,
    k_lgw_11: Constant<Bits<11>>,
    k_km1_16: Constant<Bits<16>>,
    k_lgk_16: Constant<Bits<16>>,
    k_k_16: Constant<Bits<16>>,
    k16_16: Constant<Bits<16>>,
    k_hdr_len: Constant<Bits<16>>,
    k_eth: Constant<Bits<16>>,
    k_udp_off: Constant<Bits<16>>,
    k_pkt_off: Constant<Bits<16>>,
    k_ipsum: Constant<Bits<16>>,
    k_keep_all: Constant<Bits<K>>,
    k0_64: Constant<Bits<64>>,
    k_ones64: Constant<Bits<64>>,
    k64_16: Constant<Bits<16>>,
    k_mac_mask: Constant<Bits<24>>,
    k0_img: Constant<Bits<I>>,
    kt0: Constant<Bits<8>>,
    kt1: Constant<Bits<8>>,
    kt2: Constant<Bits<8>>,
    kt3: Constant<Bits<8>>,
    k0_8i: Constant<Bits<8>>,
    k1_8i: Constant<Bits<8>>,
    k2_8i: Constant<Bits<8>>,
    k3_8i: Constant<Bits<8>>,
}

impl<const W: usize, const K: usize, const I: usize, const Q: usize> Default
    for PktGenImg<W, K, I, Q>
{
    fn default() -> Self {
        assert!(
            W.is_power_of_two() && W >= 64 && W == 8 * K,
            "pkt_gen: W = 8K, a power of two"
        );
        assert!(
            I >= IMG_BITS && I.is_multiple_of(W),
            "pkt_gen: the image is whole beats"
        );
        assert!(
            I - W < 2048 && I / W < 256,
            "pkt_gen: beat offsets fit 11 bits"
        );
        assert!(Q <= 1, "pkt_gen: at most one queued send");
        Self {
            clock: Default::default(),
            send: Default::default(),
            send_kind: Default::default(),
            send_count: Default::default(),
            send_instance: Default::default(),
            send_epoch: Default::default(),
            send_seq: Default::default(),
            e_valid: Default::default(),
            e_client: Default::default(),
            e_seq: Default::default(),
            e_len: Default::default(),
            e_payload: Default::default(),
            sender: Default::default(),
            cluster: Default::default(),
            trees: Default::default(),
            port: Default::default(),
            group0: Default::default(),
            group1: Default::default(),
            group2: Default::default(),
            group3: Default::default(),
            src_mac: Default::default(),
            src_ip: Default::default(),
            ttl: Default::default(),
            m0_data: Default::default(),
            m0_keep: Default::default(),
            m0_valid: Default::default(),
            m0_last: Default::default(),
            m1_data: Default::default(),
            m1_keep: Default::default(),
            m1_valid: Default::default(),
            m1_last: Default::default(),
            m2_data: Default::default(),
            m2_keep: Default::default(),
            m2_valid: Default::default(),
            m2_last: Default::default(),
            m3_data: Default::default(),
            m3_keep: Default::default(),
            m3_valid: Default::default(),
            m3_last: Default::default(),
            busy: Default::default(),
            overrun: Default::default(),
            ready: Default::default(),
            h_load: Default::default(),
            h_img: Default::default(),
            h_len: Default::default(),
            r_c_pending: Default::default(),
            r_c_kind: Default::default(),
            r_c_count: Default::default(),
            r_c_instance: Default::default(),
            r_c_epoch: Default::default(),
            r_c_seq: Default::default(),
            r_n_got: Default::default(),
            r_ps: Default::default(),
            r_q_pending: Default::default(),
            r_q_kind: Default::default(),
            r_q_count: Default::default(),
            r_q_instance: Default::default(),
            r_q_epoch: Default::default(),
            r_q_seq: Default::default(),
            q_take: Default::default(),
            q_room: Default::default(),
            ready_unit: GenReady::new(Q == 1),
            k_queue: Constant::new(Q == 1),
            k3_8: k(3),
            r_streaming: Default::default(),
            r_beat: Default::default(),
            r_nbeats: Default::default(),
            r_lastkeep: Default::default(),
            r_img: Default::default(),
            r_f_len: Default::default(),
            r_f_kind: Default::default(),
            r_f_count: Default::default(),
            r_f_instance: Default::default(),
            r_f_epoch: Default::default(),
            r_f_seq: Default::default(),
            r_s0_client: Default::default(),
            r_s0_len: Default::default(),
            r_s0_seq: Default::default(),
            r_s0_payload: Default::default(),
            r_s1_client: Default::default(),
            r_s1_len: Default::default(),
            r_s1_seq: Default::default(),
            r_s1_payload: Default::default(),
            r_s2_client: Default::default(),
            r_s2_len: Default::default(),
            r_s2_seq: Default::default(),
            r_s2_payload: Default::default(),
            r_s3_client: Default::default(),
            r_s3_len: Default::default(),
            r_s3_seq: Default::default(),
            r_s3_payload: Default::default(),
            start: Default::default(),
            add_ps_a: Default::default(),
            ps_b: Default::default(),
            add_ps_c: Default::default(),
            ps_d: Default::default(),
            add_ps_e: Default::default(),
            ps_f: Default::default(),
            last_beat: Default::default(),
            wslot: Default::default(),
            l_len: Default::default(),
            l_nbeats: Default::default(),
            l_lastbytes: Default::default(),
            boff: Default::default(),
            e_img: Default::default(),
            total_len: Default::default(),
            udp_len: Default::default(),
            body_len: Default::default(),
            pm0: Default::default(),
            off0: Default::default(),
            t0: Default::default(),
            pm1: Default::default(),
            off1: Default::default(),
            t1: Default::default(),
            pm2: Default::default(),
            off2: Default::default(),
            t2: Default::default(),
            pm3: Default::default(),
            off3: Default::default(),
            t3: Default::default(),
            off4: Default::default(),
            add_cs0_a: Default::default(),
            cs0_b: Default::default(),
            add_cs0_c: Default::default(),
            cs0_d: Default::default(),
            add_cs0_e: Default::default(),
            cs0_f: Default::default(),
            frame0: Default::default(),
            add_cs1_a: Default::default(),
            cs1_b: Default::default(),
            add_cs1_c: Default::default(),
            cs1_d: Default::default(),
            add_cs1_e: Default::default(),
            cs1_f: Default::default(),
            frame1: Default::default(),
            add_cs2_a: Default::default(),
            cs2_b: Default::default(),
            add_cs2_c: Default::default(),
            cs2_d: Default::default(),
            add_cs2_e: Default::default(),
            cs2_f: Default::default(),
            frame2: Default::default(),
            add_cs3_a: Default::default(),
            cs3_b: Default::default(),
            add_cs3_c: Default::default(),
            cs3_d: Default::default(),
            add_cs3_e: Default::default(),
            cs3_f: Default::default(),
            frame3: Default::default(),
            lenw0: Default::default(),
            lenw1: Default::default(),
            lenw2: Default::default(),
            lenw3: Default::default(),
            beatw: Default::default(),
            kindw: Default::default(),
            countw: Default::default(),
            ttlw: Default::default(),
            ent0: EntryBytes::new(entry_map()),
            ent1: EntryBytes::new(entry_map()),
            ent2: EntryBytes::new(entry_map()),
            ent3: EntryBytes::new(entry_map()),
            xe0: Default::default(),
            xe1: Default::default(),
            xe2: Default::default(),
            xe3: Default::default(),
            hdr0: HeaderBytes::new(header_map()),
            hdr1: HeaderBytes::new(header_map()),
            hdr2: HeaderBytes::new(header_map()),
            hdr3: HeaderBytes::new(header_map()),
            xh0: Default::default(),
            xh1: Default::default(),
            xh2: Default::default(),
            xh3: Default::default(),
            k0_8: k(0),
            k_batch: k(DecideKind::Batch as u64),
            k_config: k(DecideKind::Config as u64),
            k1_8: k(1),
            k4_8: k(4),
            k1_16: k(1),
            k8_16: k(8),
            k3_16: k(3),
            k_lgw_11: k(W.trailing_zeros() as u64),
            k_km1_16: k(K as u64 - 1),
            k_lgk_16: k(K.trailing_zeros() as u64),
            k_k_16: k(K as u64),
            k16_16: k(wire::ENTRY_HEADER_LEN as u64),
            k_hdr_len: k(78),
            k_eth: k(frame::ETH_LEN as u64),
            k_udp_off: k((frame::ETH_LEN + frame::IPV4_LEN) as u64),
            k_pkt_off: k((frame::PAYLOAD_OFFSET + wire::HEADER_LEN) as u64),
            k_ipsum: k(ip_const_sum()),
            k_keep_all: Constant::new(Bits::<K>::mask()),
            k0_64: k(0),
            k_ones64: k(u64::MAX),
            k64_16: k(64),
            k_mac_mask: k(0x7F_FFFF),
            k0_img: k(0),
            kt0: k(0),
            kt1: k(1),
            kt2: k(2),
            kt3: k(3),
            k0_8i: k(0),
            k1_8i: k(1),
            k2_8i: k(2),
            k3_8i: k(3),
        }
    }
}

impl<const W: usize, const K: usize, const I: usize, const Q: usize> Logic
    for PktGenImg<W, K, I, Q>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            r_ps,
            r_c_pending,
            r_c_kind,
            r_c_count,
            r_c_instance,
            r_c_epoch,
            r_c_seq,
            r_n_got,
            r_q_pending,
            r_q_kind,
            r_q_count,
            r_q_instance,
            r_q_epoch,
            r_q_seq,
            r_streaming,
            r_beat,
            r_nbeats,
            r_lastkeep,
            r_img,
            r_f_len,
            r_f_kind,
            r_f_count,
            r_f_instance,
            r_f_epoch,
            r_f_seq,
            r_s0_client,
            r_s0_len,
            r_s0_seq,
            r_s0_payload,
            r_s1_client,
            r_s1_len,
            r_s1_seq,
            r_s1_payload,
            r_s2_client,
            r_s2_len,
            r_s2_seq,
            r_s2_payload,
            r_s3_client,
            r_s3_len,
            r_s3_seq,
            r_s3_payload
        );
        // Entry 0: its payload bytes past payload_len are zero.
        if self.r_s0_len.q.val() == self.k0_8.val() {
            self.pm0.next = self.k0_64.val();
        } else {
            self.pm0.next = self.r_s0_payload.q.val()
                & (self.k_ones64.val()
                    << (self.k64_16.val() - (self.lenw0.wide.val() << self.k3_16.val())));
        }
        self.lenw0.narrow.next = self.r_s0_len.q.val();
        self.ent0.client.next = self.r_s0_client.q.val();
        self.ent0.len.next = self.r_s0_len.q.val();
        self.ent0.seq.next = self.r_s0_seq.q.val();
        self.ent0.payload.next = self.pm0.val();
        self.xe0.narrow.next = self.ent0.out.val();
        // Entry 1: its payload bytes past payload_len are zero.
        if self.r_s1_len.q.val() == self.k0_8.val() {
            self.pm1.next = self.k0_64.val();
        } else {
            self.pm1.next = self.r_s1_payload.q.val()
                & (self.k_ones64.val()
                    << (self.k64_16.val() - (self.lenw1.wide.val() << self.k3_16.val())));
        }
        self.lenw1.narrow.next = self.r_s1_len.q.val();
        self.ent1.client.next = self.r_s1_client.q.val();
        self.ent1.len.next = self.r_s1_len.q.val();
        self.ent1.seq.next = self.r_s1_seq.q.val();
        self.ent1.payload.next = self.pm1.val();
        self.xe1.narrow.next = self.ent1.out.val();
        // Entry 2: its payload bytes past payload_len are zero.
        if self.r_s2_len.q.val() == self.k0_8.val() {
            self.pm2.next = self.k0_64.val();
        } else {
            self.pm2.next = self.r_s2_payload.q.val()
                & (self.k_ones64.val()
                    << (self.k64_16.val() - (self.lenw2.wide.val() << self.k3_16.val())));
        }
        self.lenw2.narrow.next = self.r_s2_len.q.val();
        self.ent2.client.next = self.r_s2_client.q.val();
        self.ent2.len.next = self.r_s2_len.q.val();
        self.ent2.seq.next = self.r_s2_seq.q.val();
        self.ent2.payload.next = self.pm2.val();
        self.xe2.narrow.next = self.ent2.out.val();
        // Entry 3: its payload bytes past payload_len are zero.
        if self.r_s3_len.q.val() == self.k0_8.val() {
            self.pm3.next = self.k0_64.val();
        } else {
            self.pm3.next = self.r_s3_payload.q.val()
                & (self.k_ones64.val()
                    << (self.k64_16.val() - (self.lenw3.wide.val() << self.k3_16.val())));
        }
        self.lenw3.narrow.next = self.r_s3_len.q.val();
        self.ent3.client.next = self.r_s3_client.q.val();
        self.ent3.len.next = self.r_s3_len.q.val();
        self.ent3.seq.next = self.r_s3_seq.q.val();
        self.ent3.payload.next = self.pm3.val();
        self.xe3.narrow.next = self.ent3.out.val();
        self.off0.next = self.k_hdr_len.val();
        if self.k0_8i.val() < self.r_c_count.q.val() {
            self.t0.next = self.xe0.wide.val() << (self.off0.val() << self.k3_16.val());
            self.off1.next = self.off0.val() + self.k16_16.val() + self.lenw0.wide.val();
        } else {
            self.t0.next = self.k0_img.val();
            self.off1.next = self.off0.val();
        }
        if self.k1_8i.val() < self.r_c_count.q.val() {
            self.t1.next = self.xe1.wide.val() << (self.off1.val() << self.k3_16.val());
            self.off2.next = self.off1.val() + self.k16_16.val() + self.lenw1.wide.val();
        } else {
            self.t1.next = self.k0_img.val();
            self.off2.next = self.off1.val();
        }
        if self.k2_8i.val() < self.r_c_count.q.val() {
            self.t2.next = self.xe2.wide.val() << (self.off2.val() << self.k3_16.val());
            self.off3.next = self.off2.val() + self.k16_16.val() + self.lenw2.wide.val();
        } else {
            self.t2.next = self.k0_img.val();
            self.off3.next = self.off2.val();
        }
        if self.k3_8i.val() < self.r_c_count.q.val() {
            self.t3.next = self.xe3.wide.val() << (self.off3.val() << self.k3_16.val());
            self.off4.next = self.off3.val() + self.k16_16.val() + self.lenw3.wide.val();
        } else {
            self.t3.next = self.k0_img.val();
            self.off4.next = self.off3.val();
        }
        self.e_img.next = self.t0.val() | self.t1.val() | self.t2.val() | self.t3.val();
        self.l_len.next = self.off4.val();
        self.l_nbeats.next = (self.l_len.val() + self.k_km1_16.val()) >> self.k_lgk_16.val();
        self.l_lastbytes.next =
            self.l_len.val() - ((self.l_nbeats.val() - self.k1_16.val()) << self.k_lgk_16.val());
        // Control: a frame starts when its command is waiting, its entries have arrived, and the
        // previous frame is ending (or none is running).
        self.last_beat.next = self.r_streaming.q.val()
            && (self.r_beat.q.val() == self.r_nbeats.q.val() - self.k1_8.val());
        self.start.next = self.r_c_pending.q.val()
            && (!self.r_streaming.q.val() || self.last_beat.val())
            && (self.r_n_got.q.val() == self.r_c_count.q.val());
        // With Q = 1 a send while another waits is queued behind it, when the waiting one is sure
        // to start before the queued one's first entry can come (at least 2 cycles after the send,
        // and after the waiting one's entries): no frame streams, or the streaming frame's last
        // beat is at most 2 cycles away. Otherwise (and always with Q = 0) it is dropped.
        self.q_room.next = self.k_queue.val()
            && self.r_c_pending.q.val()
            && !self.start.val()
            && !self.r_q_pending.q.val()
            && (!self.r_streaming.q.val()
                || ((self.r_beat.q.val() + self.k3_8.val()) >= self.r_nbeats.q.val()));
        self.q_take.next = self.send.val() && self.q_room.val();
        self.ready_unit.c_pending.next = self.r_c_pending.q.val();
        self.ready_unit.q_pending.next = self.r_q_pending.q.val();
        self.ready_unit.streaming.next = self.r_streaming.q.val();
        self.ready_unit.beat.next = self.r_beat.q.val();
        self.ready_unit.nbeats.next = self.r_nbeats.q.val();
        self.ready_unit.n_got.next = self.r_n_got.q.val();
        self.ready_unit.count.next = self.r_c_count.q.val();
        self.ready.next = self.ready_unit.ready.val();
        self.overrun.next = self.send.val()
            && ((self.r_c_pending.q.val() && !self.start.val() && !self.q_take.val())
                || (self.start.val() && self.r_q_pending.q.val()));
        self.busy.next =
            self.r_c_pending.q.val() || self.r_streaming.q.val() || self.r_q_pending.q.val();
        if self.start.val() {
            self.r_c_pending.d.next = false;
            self.r_streaming.d.next = true;
            self.r_beat.d.next = self.k0_8.val();
            self.r_nbeats.d.next = self.l_nbeats.val().get_bits::<8>(0);
            self.r_lastkeep.d.next =
                self.k_keep_all.val() >> (self.k_k_16.val() - self.l_lastbytes.val());
            self.r_img.d.next = self.e_img.val();
            self.r_f_len.d.next = self.l_len.val();
            self.r_f_kind.d.next = self.r_c_kind.q.val();
            self.r_f_count.d.next = self.r_c_count.q.val();
            self.r_f_instance.d.next = self.r_c_instance.q.val();
            self.r_f_epoch.d.next = self.r_c_epoch.q.val();
            self.r_f_seq.d.next = self.r_c_seq.q.val();
        } else if self.last_beat.val() {
            self.r_streaming.d.next = false;
        } else if self.r_streaming.q.val() {
            self.r_beat.d.next = self.r_beat.q.val() + self.k1_8.val();
        }
        if self.start.val() && self.r_q_pending.q.val() {
            // The queued send becomes the waiting one (its entries come after this cycle).
            self.r_q_pending.d.next = false;
            self.r_c_pending.d.next = true;
            self.r_c_kind.d.next = self.r_q_kind.q.val();
            self.r_c_count.d.next = self.r_q_count.q.val();
            self.r_c_instance.d.next = self.r_q_instance.q.val();
            self.r_c_epoch.d.next = self.r_q_epoch.q.val();
            self.r_c_seq.d.next = self.r_q_seq.q.val();
        } else if self.send.val() && (!self.r_c_pending.q.val() || self.start.val()) {
            self.r_c_pending.d.next = true;
            self.r_c_kind.d.next = self.send_kind.val();
            self.r_c_count.d.next = self.send_count.val();
            self.r_c_instance.d.next = self.send_instance.val();
            self.r_c_epoch.d.next = self.send_epoch.val();
            self.r_c_seq.d.next = self.send_seq.val();
        }
        if self.q_take.val() {
            self.r_q_pending.d.next = true;
            self.r_q_kind.d.next = self.send_kind.val();
            self.r_q_count.d.next = self.send_count.val();
            self.r_q_instance.d.next = self.send_instance.val();
            self.r_q_epoch.d.next = self.send_epoch.val();
            self.r_q_seq.d.next = self.send_seq.val();
        }
        // Entries of the waiting command, in order.
        if self.start.val() {
            self.wslot.next = self.k0_8.val();
        } else {
            self.wslot.next = self.r_n_got.q.val();
        }
        if self.start.val() {
            self.r_n_got.d.next = self.k0_8.val();
        }
        if self.e_valid.val() && (self.wslot.val() < self.k4_8.val()) {
            self.r_n_got.d.next = self.wslot.val() + self.k1_8.val();
            if self.wslot.val() == self.k0_8i.val() {
                self.r_s0_client.d.next = self.e_client.val();
                self.r_s0_len.d.next = self.e_len.val();
                self.r_s0_seq.d.next = self.e_seq.val();
                self.r_s0_payload.d.next = self.e_payload.val();
            }
            if self.wslot.val() == self.k1_8i.val() {
                self.r_s1_client.d.next = self.e_client.val();
                self.r_s1_len.d.next = self.e_len.val();
                self.r_s1_seq.d.next = self.e_seq.val();
                self.r_s1_payload.d.next = self.e_payload.val();
            }
            if self.wslot.val() == self.k2_8i.val() {
                self.r_s2_client.d.next = self.e_client.val();
                self.r_s2_len.d.next = self.e_len.val();
                self.r_s2_seq.d.next = self.e_seq.val();
                self.r_s2_payload.d.next = self.e_payload.val();
            }
            if self.wslot.val() == self.k3_8i.val() {
                self.r_s3_client.d.next = self.e_client.val();
                self.r_s3_len.d.next = self.e_len.val();
                self.r_s3_seq.d.next = self.e_seq.val();
                self.r_s3_payload.d.next = self.e_payload.val();
            }
        }
        // The frame's lengths.
        self.total_len.next = self.r_f_len.q.val() - self.k_eth.val();
        self.udp_len.next = self.r_f_len.q.val() - self.k_udp_off.val();
        self.body_len.next = self.r_f_len.q.val() - self.k_pkt_off.val();
        self.beatw.narrow.next = self.r_beat.q.val();
        self.kindw.narrow.next = self.r_f_kind.q.val();
        self.countw.narrow.next = self.r_f_count.q.val();
        self.boff.next = self.beatw.wide.val() << self.k_lgw_11.val();
        // The part of the IPv4 checksum common to all trees: constant words + source address
        // + the TTL byte (the high byte of its word).
        // (as a tree: constant + TTL word and the two address halves in parallel, then their sum)
        self.ttlw.narrow.next = self.ttl.val();
        self.add_ps_a.a.next = self.k_ipsum.val();
        self.add_ps_a.b.next = self.ttlw.wide.val() << self.k8_16.val();
        self.ps_b.next = self.add_ps_a.out.val();
        self.add_ps_c.a.next = self.src_ip.val().get_bits::<16>(16);
        self.add_ps_c.b.next = self.src_ip.val().get_bits::<16>(0);
        self.ps_d.next = self.add_ps_c.out.val();
        self.add_ps_e.a.next = self.ps_b.val();
        self.add_ps_e.b.next = self.ps_d.val();
        self.ps_f.next = self.add_ps_e.out.val();
        self.r_ps.d.next = self.ps_f.val();
        // Tree 0: its header (destination, IPv4 checksum, tree byte) over the shared image.
        self.hdr0.mac_lo.next = self.group0.val().get_bits::<24>(0) & self.k_mac_mask.val();
        self.hdr0.total_len.next = self.total_len.val();
        self.hdr0.dst_ip.next = self.group0.val();
        self.hdr0.udp_len.next = self.udp_len.val();
        self.hdr0.port.next = self.port.val();
        self.hdr0.cluster.next = self.cluster.val();
        self.hdr0.body_len.next = self.body_len.val();
        self.hdr0.sender.next = self.sender.val();
        self.hdr0.inst.next = self.r_f_instance.q.val();
        self.hdr0.epoch.next = self.r_f_epoch.q.val();
        self.hdr0.seq.next = self.r_f_seq.q.val();
        self.hdr0.tree.next = self.kt0.val();
        self.hdr0.kind.next = self.kindw.wide.val();
        self.hdr0.count.next = self.countw.wide.val();
        self.hdr0.src_mac.next = self.src_mac.val();
        self.hdr0.src_ip.next = self.src_ip.val();
        self.hdr0.ttl.next = self.ttl.val();
        // One's-complement sum: constant words and source address (ps_d) + total_len + both
        // halves of the group address.
        self.add_cs0_a.a.next = self.r_ps.q.val();
        self.add_cs0_a.b.next = self.total_len.val();
        self.cs0_b.next = self.add_cs0_a.out.val();
        self.add_cs0_c.a.next = self.cs0_b.val();
        self.add_cs0_c.b.next = self.group0.val().get_bits::<16>(16);
        self.cs0_d.next = self.add_cs0_c.out.val();
        self.add_cs0_e.a.next = self.cs0_d.val();
        self.add_cs0_e.b.next = self.group0.val().get_bits::<16>(0);
        self.cs0_f.next = self.add_cs0_e.out.val();
        self.hdr0.ip_csum.next = !self.cs0_f.val();
        self.xh0.narrow.next = self.hdr0.out.val();
        self.frame0.next = self.xh0.wide.val() | self.r_img.q.val();
        self.m0_data.next = self.frame0.val().get_bits::<W>(self.boff.val().index());
        self.m0_valid.next = self.r_streaming.q.val() && (self.kt0.val() < self.trees.val());
        self.m0_last.next = self.last_beat.val();
        // The host copy of a decision: tree 0's frame, in its first beat.
        self.h_img.next = self.frame0.val();
        self.h_len.next = self.r_f_len.q.val();
        self.h_load.next = self.r_streaming.q.val()
            && (self.r_beat.q.val() == self.k0_8.val())
            && ((self.r_f_kind.q.val() == self.k_batch.val())
                || (self.r_f_kind.q.val() == self.k_config.val()));
        if self.last_beat.val() {
            self.m0_keep.next = self.r_lastkeep.q.val();
        } else {
            self.m0_keep.next = self.k_keep_all.val();
        }
        // Tree 1: its header (destination, IPv4 checksum, tree byte) over the shared image.
        self.hdr1.mac_lo.next = self.group1.val().get_bits::<24>(0) & self.k_mac_mask.val();
        self.hdr1.total_len.next = self.total_len.val();
        self.hdr1.dst_ip.next = self.group1.val();
        self.hdr1.udp_len.next = self.udp_len.val();
        self.hdr1.port.next = self.port.val();
        self.hdr1.cluster.next = self.cluster.val();
        self.hdr1.body_len.next = self.body_len.val();
        self.hdr1.sender.next = self.sender.val();
        self.hdr1.inst.next = self.r_f_instance.q.val();
        self.hdr1.epoch.next = self.r_f_epoch.q.val();
        self.hdr1.seq.next = self.r_f_seq.q.val();
        self.hdr1.tree.next = self.kt1.val();
        self.hdr1.kind.next = self.kindw.wide.val();
        self.hdr1.count.next = self.countw.wide.val();
        self.hdr1.src_mac.next = self.src_mac.val();
        self.hdr1.src_ip.next = self.src_ip.val();
        self.hdr1.ttl.next = self.ttl.val();
        // One's-complement sum: constant words and source address (ps_d) + total_len + both
        // halves of the group address.
        self.add_cs1_a.a.next = self.r_ps.q.val();
        self.add_cs1_a.b.next = self.total_len.val();
        self.cs1_b.next = self.add_cs1_a.out.val();
        self.add_cs1_c.a.next = self.cs1_b.val();
        self.add_cs1_c.b.next = self.group1.val().get_bits::<16>(16);
        self.cs1_d.next = self.add_cs1_c.out.val();
        self.add_cs1_e.a.next = self.cs1_d.val();
        self.add_cs1_e.b.next = self.group1.val().get_bits::<16>(0);
        self.cs1_f.next = self.add_cs1_e.out.val();
        self.hdr1.ip_csum.next = !self.cs1_f.val();
        self.xh1.narrow.next = self.hdr1.out.val();
        self.frame1.next = self.xh1.wide.val() | self.r_img.q.val();
        self.m1_data.next = self.frame1.val().get_bits::<W>(self.boff.val().index());
        self.m1_valid.next = self.r_streaming.q.val() && (self.kt1.val() < self.trees.val());
        self.m1_last.next = self.last_beat.val();
        if self.last_beat.val() {
            self.m1_keep.next = self.r_lastkeep.q.val();
        } else {
            self.m1_keep.next = self.k_keep_all.val();
        }
        // Tree 2: its header (destination, IPv4 checksum, tree byte) over the shared image.
        self.hdr2.mac_lo.next = self.group2.val().get_bits::<24>(0) & self.k_mac_mask.val();
        self.hdr2.total_len.next = self.total_len.val();
        self.hdr2.dst_ip.next = self.group2.val();
        self.hdr2.udp_len.next = self.udp_len.val();
        self.hdr2.port.next = self.port.val();
        self.hdr2.cluster.next = self.cluster.val();
        self.hdr2.body_len.next = self.body_len.val();
        self.hdr2.sender.next = self.sender.val();
        self.hdr2.inst.next = self.r_f_instance.q.val();
        self.hdr2.epoch.next = self.r_f_epoch.q.val();
        self.hdr2.seq.next = self.r_f_seq.q.val();
        self.hdr2.tree.next = self.kt2.val();
        self.hdr2.kind.next = self.kindw.wide.val();
        self.hdr2.count.next = self.countw.wide.val();
        self.hdr2.src_mac.next = self.src_mac.val();
        self.hdr2.src_ip.next = self.src_ip.val();
        self.hdr2.ttl.next = self.ttl.val();
        // One's-complement sum: constant words and source address (ps_d) + total_len + both
        // halves of the group address.
        self.add_cs2_a.a.next = self.r_ps.q.val();
        self.add_cs2_a.b.next = self.total_len.val();
        self.cs2_b.next = self.add_cs2_a.out.val();
        self.add_cs2_c.a.next = self.cs2_b.val();
        self.add_cs2_c.b.next = self.group2.val().get_bits::<16>(16);
        self.cs2_d.next = self.add_cs2_c.out.val();
        self.add_cs2_e.a.next = self.cs2_d.val();
        self.add_cs2_e.b.next = self.group2.val().get_bits::<16>(0);
        self.cs2_f.next = self.add_cs2_e.out.val();
        self.hdr2.ip_csum.next = !self.cs2_f.val();
        self.xh2.narrow.next = self.hdr2.out.val();
        self.frame2.next = self.xh2.wide.val() | self.r_img.q.val();
        self.m2_data.next = self.frame2.val().get_bits::<W>(self.boff.val().index());
        self.m2_valid.next = self.r_streaming.q.val() && (self.kt2.val() < self.trees.val());
        self.m2_last.next = self.last_beat.val();
        if self.last_beat.val() {
            self.m2_keep.next = self.r_lastkeep.q.val();
        } else {
            self.m2_keep.next = self.k_keep_all.val();
        }
        // Tree 3: its header (destination, IPv4 checksum, tree byte) over the shared image.
        self.hdr3.mac_lo.next = self.group3.val().get_bits::<24>(0) & self.k_mac_mask.val();
        self.hdr3.total_len.next = self.total_len.val();
        self.hdr3.dst_ip.next = self.group3.val();
        self.hdr3.udp_len.next = self.udp_len.val();
        self.hdr3.port.next = self.port.val();
        self.hdr3.cluster.next = self.cluster.val();
        self.hdr3.body_len.next = self.body_len.val();
        self.hdr3.sender.next = self.sender.val();
        self.hdr3.inst.next = self.r_f_instance.q.val();
        self.hdr3.epoch.next = self.r_f_epoch.q.val();
        self.hdr3.seq.next = self.r_f_seq.q.val();
        self.hdr3.tree.next = self.kt3.val();
        self.hdr3.kind.next = self.kindw.wide.val();
        self.hdr3.count.next = self.countw.wide.val();
        self.hdr3.src_mac.next = self.src_mac.val();
        self.hdr3.src_ip.next = self.src_ip.val();
        self.hdr3.ttl.next = self.ttl.val();
        // One's-complement sum: constant words and source address (ps_d) + total_len + both
        // halves of the group address.
        self.add_cs3_a.a.next = self.r_ps.q.val();
        self.add_cs3_a.b.next = self.total_len.val();
        self.cs3_b.next = self.add_cs3_a.out.val();
        self.add_cs3_c.a.next = self.cs3_b.val();
        self.add_cs3_c.b.next = self.group3.val().get_bits::<16>(16);
        self.cs3_d.next = self.add_cs3_c.out.val();
        self.add_cs3_e.a.next = self.cs3_d.val();
        self.add_cs3_e.b.next = self.group3.val().get_bits::<16>(0);
        self.cs3_f.next = self.add_cs3_e.out.val();
        self.hdr3.ip_csum.next = !self.cs3_f.val();
        self.xh3.narrow.next = self.hdr3.out.val();
        self.frame3.next = self.xh3.wide.val() | self.r_img.q.val();
        self.m3_data.next = self.frame3.val().get_bits::<W>(self.boff.val().index());
        self.m3_valid.next = self.r_streaming.q.val() && (self.kt3.val() < self.trees.val());
        self.m3_last.next = self.last_beat.val();
        if self.last_beat.val() {
            self.m3_keep.next = self.r_lastkeep.q.val();
        } else {
            self.m3_keep.next = self.k_keep_all.val();
        }
    }
}
