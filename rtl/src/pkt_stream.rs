//! The 64-bit DECIDE generator `nc_engine` uses (exported as `pkt_gen`), issue 17: entries of up
//! to [`MAX_ENTRY_PAYLOAD`] (128) payload bytes, *streamed* into the frame instead of placed in a
//! whole-frame image.
//!
//! The same ports and rules as the image generator ([`crate::pkt_gen::PktGenImg`], which the
//! 512-bit `pkt_gen_512` still is): a send latches its command, the batch's entries are collected
//! from the FIFO's stream (at most [`SLOTS`]), and once they have arrived the frame streams one
//! beat per cycle on every tree at once, each tree with its own destination MAC/IP, IPv4
//! checksum and `tree` byte; the next frame starts in the cycle after the last beat; `ready` and
//! `overrun` are as there (no queued send). What differs is how the entries reach the beats:
//!
//! - each entry is turned into its wire bytes as it arrives (the 16-byte entry header from the
//!   probed layout, then the payload bytes, those past `payload_len` zeroed): up to 144 bytes in
//!   a *fill slot*; when a frame starts, the fill slots are copied to the *frame slots* (so the
//!   next command's entries can arrive while this frame streams, as with the image);
//! - the body is streamed by a byte packer: a register of up to 152 bytes whose first 8 bytes are
//!   the body beat. Each body beat it shifts out 8 bytes, and when fewer than 8 would be left it
//!   appends the next entry at the byte where they end (a shift by 0..7 bytes): an entry is at
//!   least 16 bytes, so the packer never runs dry inside a frame. The body starts at frame byte 78
//!   (beat 9, lane 6: the packer starts with 6 zero bytes under the header's last lanes).
//!
//! So the frame costs one 8-way byte shift of one entry per cycle, not a placement of every
//! entry anywhere in the frame; the frame is up to 78 + 4 × 144 = 654 bytes (82 beats).
//!
//! The host path: in the first beat of a value frame (BATCH or CONFIG: a decision) `h_load` is
//! high; tree 0's frame is the host copy (`host_gen` takes its beats from `m0_*`).

use proto::frame;
use proto::wire::{self, DecideKind};
use rust_hdl::prelude::*;

use crate::pkt_gen::{GenReady, SLOTS, entry_head_map, header_map, ip_const_sum};
use crate::prim::{ByteSwap, EntryHead, HeaderBytes, OnesAdd, ZeroExtend};

/// Payload bytes an entry can carry.
pub const MAX_ENTRY_PAYLOAD: usize = 128;
/// Bits of an entry's wire bytes (16-byte header + payload).
pub const ENTRY_BITS: usize = 8 * (wire::ENTRY_HEADER_LEN + MAX_ENTRY_PAYLOAD);
/// Bits of the packer: an entry appended behind up to 7 bytes left.
pub const ACC_BITS: usize = ENTRY_BITS + 64;
/// The longest frame (bytes): header and [`SLOTS`] entries of [`MAX_ENTRY_PAYLOAD`] bytes.
pub const MAX_FRAME: usize = HDR_LEN + SLOTS * (wire::ENTRY_HEADER_LEN + MAX_ENTRY_PAYLOAD);

/// DECIDE header bytes (Ethernet, IPv4, UDP, common and DECIDE headers).
const HDR_LEN: usize = 78;
const HDR_BEATS: u64 = 10;
const BODY_BEAT: u64 = 9;

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
}

/// One tree's header beat: the 78 DECIDE header bytes for this tree (destination MAC/IP, IPv4
/// checksum, `tree` byte), beat `beat` of them (0 past beat 9).
#[derive(LogicBlock)]
pub struct TreeHeader {
    pub group: Signal<In, Bits<32>>,
    /// IPv4 checksum's constant part (constant words + source address + TTL), registered.
    pub ps: Signal<In, Bits<16>>,
    pub total_len: Signal<In, Bits<16>>,
    pub udp_len: Signal<In, Bits<16>>,
    pub body_len: Signal<In, Bits<16>>,
    pub port: Signal<In, Bits<16>>,
    pub cluster: Signal<In, Bits<32>>,
    pub sender: Signal<In, Bits<8>>,
    pub inst: Signal<In, Bits<64>>,
    pub epoch: Signal<In, Bits<32>>,
    pub seq: Signal<In, Bits<32>>,
    pub kind: Signal<In, Bits<8>>,
    pub count: Signal<In, Bits<16>>,
    pub src_mac: Signal<In, Bits<48>>,
    pub src_ip: Signal<In, Bits<32>>,
    pub ttl: Signal<In, Bits<8>>,
    pub beat: Signal<In, Bits<8>>,
    pub out: Signal<Out, Bits<64>>,
    hdr: HeaderBytes,
    xh: ZeroExtend<624, 640>,
    add_cs_a: OnesAdd,
    cs_b: Signal<Local, Bits<16>>,
    add_cs_c: OnesAdd,
    cs_d: Signal<Local, Bits<16>>,
    add_cs_e: OnesAdd,
    cs_f: Signal<Local, Bits<16>>,
    boff: Signal<Local, Bits<10>>,
    bw: ZeroExtend<8, 10>,
    k_tree: Constant<Bits<8>>,
    k6_10: Constant<Bits<10>>,
    k_hdr_beats: Constant<Bits<10>>,
    k_mac_mask: Constant<Bits<24>>,
    k0_64: Constant<Bits<64>>,
}

impl TreeHeader {
    fn new(tree: u8) -> Self {
        Self {
            group: Default::default(),
            ps: Default::default(),
            total_len: Default::default(),
            udp_len: Default::default(),
            body_len: Default::default(),
            port: Default::default(),
            cluster: Default::default(),
            sender: Default::default(),
            inst: Default::default(),
            epoch: Default::default(),
            seq: Default::default(),
            kind: Default::default(),
            count: Default::default(),
            src_mac: Default::default(),
            src_ip: Default::default(),
            ttl: Default::default(),
            beat: Default::default(),
            out: Default::default(),
            hdr: HeaderBytes::new(header_map()),
            xh: Default::default(),
            add_cs_a: Default::default(),
            cs_b: Default::default(),
            add_cs_c: Default::default(),
            cs_d: Default::default(),
            add_cs_e: Default::default(),
            cs_f: Default::default(),
            boff: Default::default(),
            bw: Default::default(),
            k_tree: k(tree as u64),
            k6_10: k(6),
            k_hdr_beats: k(HDR_BEATS),
            k_mac_mask: k(0x7F_FFFF),
            k0_64: k(0),
        }
    }
}

impl Logic for TreeHeader {
    #[hdl_gen]
    fn update(&mut self) {
        self.hdr.mac_lo.next = self.group.val().get_bits::<24>(0) & self.k_mac_mask.val();
        self.hdr.total_len.next = self.total_len.val();
        self.hdr.dst_ip.next = self.group.val();
        self.hdr.udp_len.next = self.udp_len.val();
        self.hdr.port.next = self.port.val();
        self.hdr.cluster.next = self.cluster.val();
        self.hdr.body_len.next = self.body_len.val();
        self.hdr.sender.next = self.sender.val();
        self.hdr.inst.next = self.inst.val();
        self.hdr.epoch.next = self.epoch.val();
        self.hdr.seq.next = self.seq.val();
        self.hdr.tree.next = self.k_tree.val();
        self.hdr.kind.next = self.kind.val();
        self.hdr.count.next = self.count.val();
        self.hdr.src_mac.next = self.src_mac.val();
        self.hdr.src_ip.next = self.src_ip.val();
        self.hdr.ttl.next = self.ttl.val();
        // One's-complement sum: the registered constant part + total_len + both halves of the
        // group address.
        self.add_cs_a.a.next = self.ps.val();
        self.add_cs_a.b.next = self.total_len.val();
        self.cs_b.next = self.add_cs_a.out.val();
        self.add_cs_c.a.next = self.cs_b.val();
        self.add_cs_c.b.next = self.group.val().get_bits::<16>(16);
        self.cs_d.next = self.add_cs_c.out.val();
        self.add_cs_e.a.next = self.cs_d.val();
        self.add_cs_e.b.next = self.group.val().get_bits::<16>(0);
        self.cs_f.next = self.add_cs_e.out.val();
        self.hdr.ip_csum.next = !self.cs_f.val();
        self.xh.narrow.next = self.hdr.out.val();
        self.bw.narrow.next = self.beat.val();
        self.boff.next = self.bw.wide.val() << self.k6_10.val();
        // (Tested on the widened beat the offset is made from, so that the simulator's settling
        // passes never index past the header.)
        if self.bw.wide.val() < self.k_hdr_beats.val() {
            self.out.next = self.xh.wide.val().get_bits::<64>(self.boff.val().index());
        } else {
            self.out.next = self.k0_64.val();
        }
    }
}

block! {
    /// The streaming generator (64-bit beats, no queued send).
    pub struct PktGen() {
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
        /// payload_len (0..=128).
        pub e_len: Signal<In, Bits<8>>,
        /// Payload bytes, first byte in bits 1023..1016 (`nc_core`'s `ok_payload`); bytes past
        /// `e_len` are ignored.
        pub e_payload: Signal<In, Bits<1024>>,
        pub sender: Signal<In, Bits<8>>,
        pub cluster: Signal<In, Bits<32>>,
        pub trees: Signal<In, Bits<8>>,
        pub port: Signal<In, Bits<16>>,
        pub group0: Signal<In, Bits<32>>,
        pub group1: Signal<In, Bits<32>>,
        pub group2: Signal<In, Bits<32>>,
        pub group3: Signal<In, Bits<32>>,
        /// This node's MAC address (register `src_mac_hi`:`src_mac_lo`), first byte most
        /// significant.
        pub src_mac: Signal<In, Bits<48>>,
        /// This node's IPv4 address (register `src_ip`).
        pub src_ip: Signal<In, Bits<32>>,
        /// IPv4 TTL of the frames (register `ttl`).
        pub ttl: Signal<In, Bits<8>>,
        /// The output FIFOs behind the tree streams have room for a whole frame (from
        /// registers): a frame starts only then, so it never stalls once started (`nc_engine`;
        /// tie high where the streams' receivers take a beat every cycle).
        pub room: Signal<In, Bit>,
        pub m0_data: Signal<Out, Bits<64>>,
        pub m0_keep: Signal<Out, Bits<8>>,
        pub m0_valid: Signal<Out, Bit>,
        pub m0_last: Signal<Out, Bit>,
        pub m1_data: Signal<Out, Bits<64>>,
        pub m1_keep: Signal<Out, Bits<8>>,
        pub m1_valid: Signal<Out, Bit>,
        pub m1_last: Signal<Out, Bit>,
        pub m2_data: Signal<Out, Bits<64>>,
        pub m2_keep: Signal<Out, Bits<8>>,
        pub m2_valid: Signal<Out, Bit>,
        pub m2_last: Signal<Out, Bit>,
        pub m3_data: Signal<Out, Bits<64>>,
        pub m3_keep: Signal<Out, Bits<8>>,
        pub m3_valid: Signal<Out, Bit>,
        pub m3_last: Signal<Out, Bit>,
        pub busy: Signal<Out, Bit>,
        pub overrun: Signal<Out, Bit>,
        /// A send in this cycle would be taken (from registers only, see `PktGenImg`).
        pub ready: Signal<Out, Bit>,
        /// First beat of a value frame (a decision): tree 0's frame on `m0_*` is the host copy.
        pub h_load: Signal<Out, Bit>,
        /// A frame streams (tree 0's beats are on `m0_data`/`m0_keep`/`m0_last` whatever `trees`).
        pub h_valid: Signal<Out, Bit>,
        /// The streaming frame's length in bytes.
        pub h_len: Signal<Out, Bits<16>>,
        r_c_pending: DFF<Bit>,
        r_c_kind: DFF<Bits<2>>,
        r_c_count: DFF<Bits<8>>,
        r_c_instance: DFF<Bits<64>>,
        r_c_epoch: DFF<Bits<32>>,
        r_c_seq: DFF<Bits<32>>,
        r_n_got: DFF<Bits<8>>,
        r_ps: DFF<Bits<16>>,
        ready_unit: GenReady = GenReady::new(false),
        r_streaming: DFF<Bit>,
        r_beat: DFF<Bits<8>>,
        r_nbeats: DFF<Bits<8>>,
        /// `r_beat` is the frame's last beat.
        r_blast: DFF<Bit>,
        /// `r_n_got` one-hot (bit i: i entries so far, 0..=4).
        r_ng: DFFWithInit<Bits<5>> = DFFWithInit::new(Bits::<5>::from(1u64)),
        /// `r_n_got` equals `r_c_count`.
        r_eq: DFFWithInit<Bit> = DFFWithInit::new(true),
        r_lastkeep: DFF<Bits<8>>,
        r_f_len: DFF<Bits<16>>,
        r_f_kind: DFF<Bits<2>>,
        r_f_count: DFF<Bits<8>>,
        r_f_instance: DFF<Bits<64>>,
        r_f_epoch: DFF<Bits<32>>,
        r_f_seq: DFF<Bits<32>>,
        // Fill slots: the waiting command's entries as wire bytes (byte x in bits 8x+7..8x),
        // each with its step: the bytes it adds to the body less a beat (16 + len − 8), what
        // the packer adds to its count when it appends the entry.
        r_s0: DFF<Bits<ENTRY_BITS>>,
        r_s0_step: DFF<Bits<8>>,
        /// The header and the fill slots' entries so far: the waiting frame's length.
        r_len: DFFWithInit<Bits<16>> = DFFWithInit::new(Bits::<16>::from(HDR_LEN as u64)),
        r_s1: DFF<Bits<ENTRY_BITS>>,
        r_s1_step: DFF<Bits<8>>,
        r_s2: DFF<Bits<ENTRY_BITS>>,
        r_s2_step: DFF<Bits<8>>,
        r_s3: DFF<Bits<ENTRY_BITS>>,
        r_s3_step: DFF<Bits<8>>,
        // Frame slots 1..3 (entry 0 goes straight into the packer when the frame starts).
        r_g1: DFF<Bits<ENTRY_BITS>>,
        r_g1_step: DFF<Bits<8>>,
        r_g2: DFF<Bits<ENTRY_BITS>>,
        r_g2_step: DFF<Bits<8>>,
        r_g3: DFF<Bits<ENTRY_BITS>>,
        r_g3_step: DFF<Bits<8>>,
        // The packer: body bytes still to send (first in bits 7..0), the next frame slot.
        r_acc: DFF<Bits<ACC_BITS>>,
        /// The packer's bytes left after this beat (`r_n1`), and whether this body beat appends
        /// the next entry (`r_app`); this beat is a body beat (`r_body`).
        r_n1: DFF<Bits<8>>,
        r_app: DFF<Bit>,
        r_body: DFF<Bit>,
        r_ei: DFF<Bits<8>>,
        start: Signal<Local, Bit>,
        last_beat: Signal<Local, Bit>,
        ng_next: Signal<Local, Bits<5>>,
        got_any: Signal<Local, Bit>,
        count_next: Signal<Local, Bits<8>>,
        w0: Signal<Local, Bit>,
        w1: Signal<Local, Bit>,
        w2: Signal<Local, Bit>,
        w3: Signal<Local, Bit>,
        add_ps_a: OnesAdd,
        ps_b: Signal<Local, Bits<16>>,
        add_ps_c: OnesAdd,
        ps_d: Signal<Local, Bits<16>>,
        add_ps_e: OnesAdd,
        ps_f: Signal<Local, Bits<16>>,
        pmask: Signal<Local, Bits<1024>>,
        e_img: Signal<Local, Bits<ENTRY_BITS>>,
        elenw: ZeroExtend<8, 16>,
        head: EntryHead = EntryHead::new(entry_head_map()),
        swap: ByteSwap<1024>,
        xhead: ZeroExtend<128, ENTRY_BITS>,
        xpay: ZeroExtend<1024, ENTRY_BITS>,
        l_len: Signal<Local, Bits<16>>,
        len_base: Signal<Local, Bits<16>>,
        l_nbeats: Signal<Local, Bits<8>>,
        l_last1: Signal<Local, Bits<3>>,
        x0: ZeroExtend<ENTRY_BITS, ACC_BITS>,
        xn: ZeroExtend<ENTRY_BITS, ACC_BITS>,
        n1: Signal<Local, Bits<8>>,
        n1_first: Signal<Local, Bits<8>>,
        e_step: Signal<Local, Bits<8>>,
        n1_app: Signal<Local, Bits<8>>,
        n1_shift: Signal<Local, Bits<8>>,
        body: Signal<Local, Bits<64>>,
        total_len: Signal<Local, Bits<16>>,
        udp_len: Signal<Local, Bits<16>>,
        body_len: Signal<Local, Bits<16>>,
        kindw: ZeroExtend<2, 8>,
        countw: ZeroExtend<8, 16>,
        ttlw: ZeroExtend<8, 16>,
        th0: TreeHeader = TreeHeader::new(0),
        th1: TreeHeader = TreeHeader::new(1),
        th2: TreeHeader = TreeHeader::new(2),
        th3: TreeHeader = TreeHeader::new(3),
        k0_8: Constant<Bits<8>> = k(0),
        k1_8: Constant<Bits<8>> = k(1),
        k2_8: Constant<Bits<8>> = k(2),
        k3_8: Constant<Bits<8>> = k(3),
        k8_8: Constant<Bits<8>> = k(8),
        k_pre_8: Constant<Bits<8>> = k((HDR_LEN % 8) as u64),
        k_ehdr_8: Constant<Bits<8>> = k(wire::ENTRY_HEADER_LEN as u64),
        k_body_beat: Constant<Bits<8>> = k(BODY_BEAT),
        k3_16: Constant<Bits<16>> = k(3),
        k8_16: Constant<Bits<16>> = k(8),
        k16_16: Constant<Bits<16>> = k(wire::ENTRY_HEADER_LEN as u64),
        k64_16: Constant<Bits<16>> = k(64),
        k128_16: Constant<Bits<16>> = k(128),
        k1024_16: Constant<Bits<16>> = k(1024),
        k_hdr_len: Constant<Bits<16>> = k(HDR_LEN as u64),
        k_pre_shift: Constant<Bits<16>> = k(8 * (HDR_LEN % 8) as u64),
        k_eth: Constant<Bits<16>> = k(frame::ETH_LEN as u64),
        k_udp_off: Constant<Bits<16>> = k((frame::ETH_LEN + frame::IPV4_LEN) as u64),
        k_pkt_off: Constant<Bits<16>> = k((frame::PAYLOAD_OFFSET + wire::HEADER_LEN) as u64),
        k_ipsum: Constant<Bits<16>> = k(ip_const_sum()),
        k_keep_all: Constant<Bits<8>> = k(0xFF),
        k0_3: Constant<Bits<3>> = k(0),
        k1_3: Constant<Bits<3>> = k(1),
                k_ng0: Constant<Bits<5>> = k(1),
        k_ng1: Constant<Bits<5>> = k(2),
        k0_5: Constant<Bits<5>> = k(0),
        k1_5: Constant<Bits<5>> = k(1),
        k7_3: Constant<Bits<3>> = k(7),
        k_batch: Constant<Bits<2>> = k(DecideKind::Batch as u64),
        k_config: Constant<Bits<2>> = k(DecideKind::Config as u64),
        k_ones1024: Constant<Bits<1024>> = Constant::new(Bits::<1024>::mask()),
        k0_1024: Constant<Bits<1024>> = Constant::new(Bits::<1024>::default()),
        k0_acc: Constant<Bits<ACC_BITS>> = Constant::new(Bits::<ACC_BITS>::default()),
        k0_64: Constant<Bits<64>> = k(0),
        kt0: Constant<Bits<8>> = k(0),
        kt1: Constant<Bits<8>> = k(1),
        kt2: Constant<Bits<8>> = k(2),
        kt3: Constant<Bits<8>> = k(3),
    }
}

impl Default for PktGen {
    fn default() -> Self {
        assert_eq!(header_map().len(), HDR_LEN, "the DECIDE header's length");
        Self::build()
    }
}

// The header ends in beat 9, lane 6 (where the packer's 6 zero bytes end).
const _: () = assert!(HDR_LEN / 8 == BODY_BEAT as usize && HDR_LEN % 8 == 6);
const _: () = assert!(MAX_FRAME.div_ceil(8) < 256);

impl Logic for PktGen {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            r_c_pending,
            r_c_kind,
            r_c_count,
            r_c_instance,
            r_c_epoch,
            r_c_seq,
            r_n_got,
            r_ps,
            r_streaming,
            r_beat,
            r_nbeats,
            r_blast,
            r_ng,
            r_eq,
            r_lastkeep,
            r_f_len,
            r_f_kind,
            r_f_count,
            r_f_instance,
            r_f_epoch,
            r_f_seq,
            r_s0,
            r_s0_step,
            r_len,
            r_s1,
            r_s1_step,
            r_s2,
            r_s2_step,
            r_s3,
            r_s3_step,
            r_g1,
            r_g1_step,
            r_g2,
            r_g2_step,
            r_g3,
            r_g3_step,
            r_acc,
            r_n1,
            r_app,
            r_body,
            r_ei
        );
        // An arriving entry as wire bytes: the 16-byte header, then the payload (first byte
        // first, bytes past payload_len zero).
        self.elenw.narrow.next = self.e_len.val();
        self.e_step.next = self.e_len.val() + self.k_ehdr_8.val() - self.k8_8.val();
        if self.e_len.val() == self.k0_8.val() {
            self.pmask.next = self.k0_1024.val();
        } else {
            self.pmask.next = self.e_payload.val()
                & (self.k_ones1024.val()
                    << (self.k1024_16.val() - (self.elenw.wide.val() << self.k3_16.val())));
        }
        self.swap.inp.next = self.pmask.val();
        self.head.client.next = self.e_client.val();
        self.head.len.next = self.e_len.val();
        self.head.seq.next = self.e_seq.val();
        self.xhead.narrow.next = self.head.out.val();
        self.xpay.narrow.next = self.swap.out.val();
        self.e_img.next = self.xhead.wide.val() | (self.xpay.wide.val() << self.k128_16.val());
        // The frame's length: the header and the waiting command's entries, summed as they
        // arrive (`r_len`, below), so that a starting frame's length, beat count and last keep
        // come from a register (rtl/README "Place and route").
        self.l_len.next = self.r_len.q.val();
        // Beats: len / 8, rounded up (a frame is at most 654 bytes, 82 beats).
        if self.l_len.val().get_bits::<3>(0) == self.k0_3.val() {
            self.l_nbeats.next = self.l_len.val().get_bits::<8>(3);
        } else {
            self.l_nbeats.next = self.l_len.val().get_bits::<8>(3) + self.k1_8.val();
        }
        // Bytes in the last beat, less one: (len − 1) mod 8.
        self.l_last1.next = self.l_len.val().get_bits::<3>(0) - self.k1_3.val();
        // Control (as `PktGenImg` with no queue).
        self.last_beat.next = self.r_streaming.q.val() && self.r_blast.q.val();
        self.start.next = self.r_c_pending.q.val()
            && (!self.r_streaming.q.val() || self.last_beat.val())
            && self.r_eq.q.val()
            && self.room.val();
        self.ready_unit.c_pending.next = self.r_c_pending.q.val();
        self.ready_unit.q_pending.next = false;
        self.ready_unit.streaming.next = self.r_streaming.q.val();
        self.ready_unit.beat.next = self.r_beat.q.val();
        self.ready_unit.nbeats.next = self.r_nbeats.q.val();
        self.ready_unit.n_got.next = self.r_n_got.q.val();
        self.ready_unit.count.next = self.r_c_count.q.val();
        // (`ready_unit` knows no `room`: a send is taken when nothing waits, or when the
        // waiting frame starts, which needs room.)
        self.ready.next =
            self.ready_unit.ready.val() && (self.room.val() || !self.r_c_pending.q.val());
        self.overrun.next = self.send.val() && self.r_c_pending.q.val() && !self.start.val();
        self.busy.next = self.r_c_pending.q.val() || self.r_streaming.q.val();
        if self.send.val() && (!self.r_c_pending.q.val() || self.start.val()) {
            self.r_c_pending.d.next = true;
            self.r_c_kind.d.next = self.send_kind.val();
            self.r_c_count.d.next = self.send_count.val();
            self.r_c_instance.d.next = self.send_instance.val();
            self.r_c_epoch.d.next = self.send_epoch.val();
            self.r_c_seq.d.next = self.send_seq.val();
        } else if self.start.val() {
            self.r_c_pending.d.next = false;
        }
        // Entries of the waiting command, in order, into the fill slots. Slot i is written
        // when the count so far is i (`r_ng`: its one-hot decode) or, for slot 0, in a frame's
        // start cycle; `r_eq` says the count so far is the waiting command's. Both are kept as
        // the entries arrive, so that `start` and the slots' write enables (1,152 flip-flops
        // each) follow registers by a gate or two.
        if self.start.val() {
            self.len_base.next = self.k_hdr_len.val();
            self.r_len.d.next = self.k_hdr_len.val();
            self.w0.next = true;
            self.w1.next = false;
            self.w2.next = false;
            self.w3.next = false;
            self.got_any.next = true;
            if self.e_valid.val() {
                self.r_n_got.d.next = self.k1_8.val();
                self.ng_next.next = self.k_ng1.val();
            } else {
                self.r_n_got.d.next = self.k0_8.val();
                self.ng_next.next = self.k_ng0.val();
            }
        } else {
            self.len_base.next = self.r_len.q.val();
            self.w0.next = self.r_ng.q.val().get_bit(0);
            self.w1.next = self.r_ng.q.val().get_bit(1);
            self.w2.next = self.r_ng.q.val().get_bit(2);
            self.w3.next = self.r_ng.q.val().get_bit(3);
            self.got_any.next = !self.r_ng.q.val().get_bit(4);
            if self.e_valid.val() && self.got_any.val() {
                self.r_n_got.d.next = self.r_n_got.q.val() + self.k1_8.val();
                self.ng_next.next = self.r_ng.q.val() << self.k1_5.val();
            } else {
                self.ng_next.next = self.r_ng.q.val();
            }
        }
        if self.e_valid.val() && self.got_any.val() {
            self.r_len.d.next = self.len_base.val() + self.k16_16.val() + self.elenw.wide.val();
        }
        self.r_ng.d.next = self.ng_next.val();
        // The waiting command's count after this cycle (a send taken now replaces it).
        if self.send.val() && (!self.r_c_pending.q.val() || self.start.val()) {
            self.count_next.next = self.send_count.val();
        } else {
            self.count_next.next = self.r_c_count.q.val();
        }
        self.r_eq.d.next =
            (self.ng_next.val() & (self.k1_5.val() << self.count_next.val())) != self.k0_5.val();
        if self.e_valid.val() && self.w0.val() {
            self.r_s0.d.next = self.e_img.val();
            self.r_s0_step.d.next = self.e_step.val();
        }
        if self.e_valid.val() && self.w1.val() {
            self.r_s1.d.next = self.e_img.val();
            self.r_s1_step.d.next = self.e_step.val();
        }
        if self.e_valid.val() && self.w2.val() {
            self.r_s2.d.next = self.e_img.val();
            self.r_s2_step.d.next = self.e_step.val();
        }
        if self.e_valid.val() && self.w3.val() {
            self.r_s3.d.next = self.e_img.val();
            self.r_s3_step.d.next = self.e_step.val();
        }
        // The packer's next entry is always frame slot 1 (the slots shift down as entries are
        // appended); `r_n1` is the bytes left after this beat, `r_app` whether this body beat
        // appends that entry (fewer than 8 bytes would be left and the frame has another
        // entry), both registered a cycle ahead, so that the 1,152-bit shift and its
        // multiplexers follow registers (rtl/README "Place and route").
        self.xn.narrow.next = self.r_g1.q.val();
        self.x0.narrow.next = self.r_s0.q.val();
        self.n1.next = self.r_n1.q.val();
        // Candidates of the next `r_n1` and `r_app`.
        self.n1_first.next = self.k_pre_8.val() + self.r_s0_step.q.val();
        self.n1_app.next = self.n1.val() + self.r_g1_step.q.val();
        self.n1_shift.next = self.n1.val() - self.k8_8.val();
        if self.start.val() {
            self.r_streaming.d.next = true;
            self.r_beat.d.next = self.k0_8.val();
            self.r_blast.d.next = false; // a frame has 10 beats or more
            self.r_body.d.next = false;
            self.r_nbeats.d.next = self.l_nbeats.val();
            self.r_lastkeep.d.next =
                self.k_keep_all.val() >> (self.k7_3.val() - self.l_last1.val());
            self.r_f_len.d.next = self.l_len.val();
            self.r_f_kind.d.next = self.r_c_kind.q.val();
            self.r_f_count.d.next = self.r_c_count.q.val();
            self.r_f_instance.d.next = self.r_c_instance.q.val();
            self.r_f_epoch.d.next = self.r_c_epoch.q.val();
            self.r_f_seq.d.next = self.r_c_seq.q.val();
            self.r_g1.d.next = self.r_s1.q.val();
            self.r_g1_step.d.next = self.r_s1_step.q.val();
            self.r_g2.d.next = self.r_s2.q.val();
            self.r_g2_step.d.next = self.r_s2_step.q.val();
            self.r_g3.d.next = self.r_s3.q.val();
            self.r_g3_step.d.next = self.r_s3_step.q.val();
            // The body: 6 zero bytes under the header's last lanes, then entry 0.
            self.r_ei.d.next = self.k1_8.val();
            if self.k0_8.val() < self.r_c_count.q.val() {
                self.r_acc.d.next = self.x0.wide.val() << self.k_pre_shift.val();
                self.r_n1.d.next = self.n1_first.val();
                self.r_app.d.next = (self.n1_first.val() < self.k8_8.val())
                    && (self.k1_8.val() < self.r_c_count.q.val());
            } else {
                self.r_acc.d.next = self.k0_acc.val();
                self.r_n1.d.next = self.k_pre_8.val() - self.k8_8.val();
                self.r_app.d.next = false;
            }
        } else if self.last_beat.val() {
            self.r_streaming.d.next = false;
            self.r_blast.d.next = false;
        } else if self.r_streaming.q.val() {
            self.r_beat.d.next = self.r_beat.q.val() + self.k1_8.val();
            self.r_blast.d.next = self.r_beat.q.val() == self.r_nbeats.q.val() - self.k2_8.val();
            self.r_body.d.next = self.r_beat.q.val() >= self.k_body_beat.val() - self.k1_8.val();
            if self.r_body.q.val() {
                // A body beat leaves: shift it out, and append the next entry behind the bytes
                // left when fewer than a beat would remain.
                if self.r_app.q.val() {
                    self.r_acc.d.next = (self.r_acc.q.val() >> self.k64_16.val())
                        | (self.xn.wide.val() << (self.n1.val() << self.k3_8.val()));
                    self.r_n1.d.next = self.n1_app.val();
                    self.r_app.d.next = (self.n1_app.val() < self.k8_8.val())
                        && (self.r_ei.q.val() + self.k1_8.val() < self.r_f_count.q.val());
                    self.r_ei.d.next = self.r_ei.q.val() + self.k1_8.val();
                    self.r_g1.d.next = self.r_g2.q.val();
                    self.r_g1_step.d.next = self.r_g2_step.q.val();
                    self.r_g2.d.next = self.r_g3.q.val();
                    self.r_g2_step.d.next = self.r_g3_step.q.val();
                } else {
                    self.r_acc.d.next = self.r_acc.q.val() >> self.k64_16.val();
                    self.r_n1.d.next = self.n1_shift.val();
                    self.r_app.d.next = (self.n1_shift.val() < self.k8_8.val())
                        && (self.r_ei.q.val() < self.r_f_count.q.val());
                }
            }
        }
        if self.r_body.q.val() {
            self.body.next = self.r_acc.q.val().get_bits::<64>(0);
        } else {
            self.body.next = self.k0_64.val();
        }
        // The IPv4 checksum's part common to all trees (constant words + source address + TTL),
        // registered.
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
        self.total_len.next = self.r_f_len.q.val() - self.k_eth.val();
        self.udp_len.next = self.r_f_len.q.val() - self.k_udp_off.val();
        self.body_len.next = self.r_f_len.q.val() - self.k_pkt_off.val();
        self.kindw.narrow.next = self.r_f_kind.q.val();
        self.countw.narrow.next = self.r_f_count.q.val();
        self.th0.group.next = self.group0.val();
        self.th1.group.next = self.group1.val();
        self.th2.group.next = self.group2.val();
        self.th3.group.next = self.group3.val();
        self.th0.ps.next = self.r_ps.q.val();
        self.th1.ps.next = self.r_ps.q.val();
        self.th2.ps.next = self.r_ps.q.val();
        self.th3.ps.next = self.r_ps.q.val();
        self.th0.total_len.next = self.total_len.val();
        self.th1.total_len.next = self.total_len.val();
        self.th2.total_len.next = self.total_len.val();
        self.th3.total_len.next = self.total_len.val();
        self.th0.udp_len.next = self.udp_len.val();
        self.th1.udp_len.next = self.udp_len.val();
        self.th2.udp_len.next = self.udp_len.val();
        self.th3.udp_len.next = self.udp_len.val();
        self.th0.body_len.next = self.body_len.val();
        self.th1.body_len.next = self.body_len.val();
        self.th2.body_len.next = self.body_len.val();
        self.th3.body_len.next = self.body_len.val();
        self.th0.port.next = self.port.val();
        self.th1.port.next = self.port.val();
        self.th2.port.next = self.port.val();
        self.th3.port.next = self.port.val();
        self.th0.cluster.next = self.cluster.val();
        self.th1.cluster.next = self.cluster.val();
        self.th2.cluster.next = self.cluster.val();
        self.th3.cluster.next = self.cluster.val();
        self.th0.sender.next = self.sender.val();
        self.th1.sender.next = self.sender.val();
        self.th2.sender.next = self.sender.val();
        self.th3.sender.next = self.sender.val();
        self.th0.inst.next = self.r_f_instance.q.val();
        self.th1.inst.next = self.r_f_instance.q.val();
        self.th2.inst.next = self.r_f_instance.q.val();
        self.th3.inst.next = self.r_f_instance.q.val();
        self.th0.epoch.next = self.r_f_epoch.q.val();
        self.th1.epoch.next = self.r_f_epoch.q.val();
        self.th2.epoch.next = self.r_f_epoch.q.val();
        self.th3.epoch.next = self.r_f_epoch.q.val();
        self.th0.seq.next = self.r_f_seq.q.val();
        self.th1.seq.next = self.r_f_seq.q.val();
        self.th2.seq.next = self.r_f_seq.q.val();
        self.th3.seq.next = self.r_f_seq.q.val();
        self.th0.kind.next = self.kindw.wide.val();
        self.th1.kind.next = self.kindw.wide.val();
        self.th2.kind.next = self.kindw.wide.val();
        self.th3.kind.next = self.kindw.wide.val();
        self.th0.count.next = self.countw.wide.val();
        self.th1.count.next = self.countw.wide.val();
        self.th2.count.next = self.countw.wide.val();
        self.th3.count.next = self.countw.wide.val();
        self.th0.src_mac.next = self.src_mac.val();
        self.th1.src_mac.next = self.src_mac.val();
        self.th2.src_mac.next = self.src_mac.val();
        self.th3.src_mac.next = self.src_mac.val();
        self.th0.src_ip.next = self.src_ip.val();
        self.th1.src_ip.next = self.src_ip.val();
        self.th2.src_ip.next = self.src_ip.val();
        self.th3.src_ip.next = self.src_ip.val();
        self.th0.ttl.next = self.ttl.val();
        self.th1.ttl.next = self.ttl.val();
        self.th2.ttl.next = self.ttl.val();
        self.th3.ttl.next = self.ttl.val();
        self.th0.beat.next = self.r_beat.q.val();
        self.th1.beat.next = self.r_beat.q.val();
        self.th2.beat.next = self.r_beat.q.val();
        self.th3.beat.next = self.r_beat.q.val();
        self.m0_data.next = self.th0.out.val() | self.body.val();
        self.m1_data.next = self.th1.out.val() | self.body.val();
        self.m2_data.next = self.th2.out.val() | self.body.val();
        self.m3_data.next = self.th3.out.val() | self.body.val();
        self.m0_valid.next = self.r_streaming.q.val() && (self.kt0.val() < self.trees.val());
        self.m1_valid.next = self.r_streaming.q.val() && (self.kt1.val() < self.trees.val());
        self.m2_valid.next = self.r_streaming.q.val() && (self.kt2.val() < self.trees.val());
        self.m3_valid.next = self.r_streaming.q.val() && (self.kt3.val() < self.trees.val());
        self.m0_last.next = self.last_beat.val();
        self.m1_last.next = self.last_beat.val();
        self.m2_last.next = self.last_beat.val();
        self.m3_last.next = self.last_beat.val();
        if self.last_beat.val() {
            self.m0_keep.next = self.r_lastkeep.q.val();
            self.m1_keep.next = self.r_lastkeep.q.val();
            self.m2_keep.next = self.r_lastkeep.q.val();
            self.m3_keep.next = self.r_lastkeep.q.val();
        } else {
            self.m0_keep.next = self.k_keep_all.val();
            self.m1_keep.next = self.k_keep_all.val();
            self.m2_keep.next = self.k_keep_all.val();
            self.m3_keep.next = self.k_keep_all.val();
        }
        self.h_valid.next = self.r_streaming.q.val();
        self.h_len.next = self.r_f_len.q.val();
        self.h_load.next = self.r_streaming.q.val()
            && (self.r_beat.q.val() == self.k0_8.val())
            && ((self.r_f_kind.q.val() == self.k_batch.val())
                || (self.r_f_kind.q.val() == self.k_config.val()));
    }
}
