//! `host_gen`: the host-path frame, one per decision, on one 64-bit output stream (AXI-Stream
//! shape: `h_data`, `h_keep`, `h_valid`, `h_last`; no backpressure, the receiver takes a beat
//! every cycle; byte x of a beat is bits 8x+7..8x, as in `pkt_gen` and `pkt_parser`).
//!
//! The frame is `proto::frame::emit_udp(&UdpMeta { src_mac, dst_mac: host_mac, src_ip,
//! dst_ip: host_ip, src_port, dst_port: host_port, ttl }, payload, ..)` with UDP
//! checksum 0 ("none"): the Ethernet/IPv4/UDP header is regenerated from the config inputs (the
//! constant bytes copied from a frame emitted by proto, the field bytes placed by the probed
//! [`crate::layout::Layout`], the IPv4 checksum from a constant partial sum plus the variable
//! words, pipelined: the config inputs change only while the node is disabled, and the
//! checksum's address part follows them two cycles later), and `payload` is the decided DECIDE
//! packet, unchanged byte for byte (its `tree` byte included): the UDP payload of the decided
//! copy.
//!
//! Two sources of decisions:
//! - **Follower** (`rx_deliver`, `rx_port` = p): the four tree input streams are watched exactly
//!   as `nc_engine` receives them (`t<p>_data/keep/valid/last`, one beat per cycle when valid;
//!   bytes whose keep bit is 0 are captured as 0) and each tree's frames are captured in two images (ping-pong): a frame is written into
//!   image `cur`; at its last beat `done` := `cur` and `cur` flips, so the next frame on the
//!   tree (which may start in the very next cycle) goes into the other image. At `rx_deliver`
//!   the decided copy is image `done` of tree p, the most recently *completed* frame of that
//!   tree. This is always the copy that completed delivery: `nc_engine` raises `rx_deliver`
//!   2 cycles after that frame's last beat (parser verdict + holding register), at most 7 when
//!   its verdict waits for other ports in the holding register, and a legal Ethernet frame is at
//!   least 60 bytes = 8 beats, so no second frame can complete on that tree in between (its
//!   last beat comes 8 or more cycles later). The payload length is read from the captured
//!   frame's UDP length field, not from the frame length (a frame may be padded).
//! - **Leader** (`lead_load`): `lead_img` (a whole frame image, byte x at bits 8x+7..8x, as
//!   `pkt_gen`'s image) and `lead_len` (its length in bytes); payload = bytes 42..`lead_len`.
//!
//! If both come in one cycle the leader's goes first (the model orders a tick's actions before
//! the event's). A decision is latched (copied) in the cycle of its strobe; when the stream is
//! idle (or in its last beat) the frame's first beat is valid in the next cycle, so with
//! `nc_engine`'s 2 cycles from a copy's last beat to `rx_deliver` the host frame starts 3 cycles
//! after the last copy beat. Frames stream back to back. One pending slot: a decision that
//! comes while a frame streams waits there and starts in the cycle after that frame's last beat;
//! one that comes while the stream and the slot are both taken is dropped (`drop` high in its
//! strobe cycle; two drops in one cycle give one pulse), never a corrupted frame. A frame that
//! does not fit the image ([`IMG_BITS`] = 176 bytes: a captured frame of more than 22 beats, a UDP
//! length outside 8..=142, a `lead_len` outside 42..=176) cannot be forwarded: `drop` too.
//! Lanes whose `h_keep` bit is 0 carry don't-care bytes.

use proto::frame::{self, UdpMeta};
use rust_hdl::prelude::*;

use crate::layout::{Field, Layout};
use crate::pkt_gen::IMG_BITS;
use crate::prim::{ByteSrc, HostHeader, LaneRep, ZeroExtend};

/// Beats of a frame image.
pub const IMG_BEATS: usize = IMG_BITS / 64;
/// Bytes of a frame image: the longest frame that can be forwarded.
pub const IMG_BYTES: usize = IMG_BITS / 8;

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
}

/// A `Bits<N>` with bits `lo..hi` set.
fn ones<const N: usize>(lo: usize, hi: usize) -> Constant<Bits<N>> {
    let mut b = Bits::<N>::default();
    for i in lo..hi {
        b = b.replace_bit(i, true);
    }
    Constant::new(b)
}

/// The reference frame whose constant header bytes are copied (any addresses, empty payload).
fn reference() -> Vec<u8> {
    let udp = UdpMeta {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: [2, 0, 0, 0, 0, 2],
        src_ip: [10, 0, 0, 1],
        dst_ip: [10, 0, 0, 2],
        src_port: 1,
        dst_port: 2,
        ttl: 64,
    };
    let mut f = vec![0u8; frame::PAYLOAD_OFFSET];
    frame::emit_udp(&udp, &[], &mut f).expect("fits");
    f
}

fn place(map: &mut [ByteSrc], f: Field, input: usize) {
    for j in 0..f.len {
        map[f.off + j] = ByteSrc::Field(input, j);
    }
}

/// The header byte map (inputs in `HostHeader::INPUTS` order).
pub fn header_map() -> Vec<ByteSrc> {
    let l = Layout::probe();
    let r = reference();
    let mut m: Vec<ByteSrc> = r.iter().map(|&b| ByteSrc::Const(b)).collect();
    place(&mut m, l.eth_dst, 0);
    place(&mut m, l.eth_src, 1);
    place(&mut m, l.ip_total_len, 2);
    place(&mut m, l.ip_csum, 3);
    place(&mut m, l.ip_src, 4);
    place(&mut m, l.ip_dst, 5);
    place(&mut m, l.udp_src, 6);
    place(&mut m, l.udp_dst, 7);
    place(&mut m, l.udp_len, 8);
    place(&mut m, l.ip_ttl, 9);
    for j in 0..l.udp_csum.len {
        m[l.udp_csum.off + j] = ByteSrc::Const(0);
    }
    m
}

/// One's-complement sum (IPv4 checksum) of the reference header's words that do not change:
/// everything but total_len, the checksum, the two addresses and the TTL byte (its word counts
/// the protocol byte only).
fn ip_const_sum() -> u64 {
    let l = Layout::probe();
    let r = reference();
    let ip = l.ip_vihl.off;
    let var = [
        l.ip_total_len.off,
        l.ip_csum.off,
        l.ip_src.off,
        l.ip_src.off + 2,
        l.ip_dst.off,
        l.ip_dst.off + 2,
    ];
    let mut s: u64 = 0;
    for w in 0..frame::IPV4_LEN / 2 {
        let off = ip + 2 * w;
        if !var.contains(&off) {
            let hi = if off == l.ip_ttl.off { 0 } else { r[off] };
            s += u16::from_be_bytes([hi, r[off + 1]]) as u64;
        }
    }
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    s
}

/// The host-path frame generator.
#[derive(LogicBlock)]
pub struct HostGen {
    pub clock: Signal<In, Clock>,
    /// Tree 0 stream in (as `nc_engine` receives it; watched only).
    pub t0_data: Signal<In, Bits<64>>,
    pub t0_keep: Signal<In, Bits<8>>,
    pub t0_valid: Signal<In, Bit>,
    pub t0_last: Signal<In, Bit>,
    /// Tree 1 stream in (as `nc_engine` receives it; watched only).
    pub t1_data: Signal<In, Bits<64>>,
    pub t1_keep: Signal<In, Bits<8>>,
    pub t1_valid: Signal<In, Bit>,
    pub t1_last: Signal<In, Bit>,
    /// Tree 2 stream in (as `nc_engine` receives it; watched only).
    pub t2_data: Signal<In, Bits<64>>,
    pub t2_keep: Signal<In, Bits<8>>,
    pub t2_valid: Signal<In, Bit>,
    pub t2_last: Signal<In, Bit>,
    /// Tree 3 stream in (as `nc_engine` receives it; watched only).
    pub t3_data: Signal<In, Bits<64>>,
    pub t3_keep: Signal<In, Bits<8>>,
    pub t3_valid: Signal<In, Bit>,
    pub t3_last: Signal<In, Bit>,
    /// A follower decision: the last completed frame of tree `rx_port` is the decided copy.
    pub rx_deliver: Signal<In, Bit>,
    pub rx_port: Signal<In, Bits<2>>,
    /// A leader decision: `lead_img` (frame image, byte x at bits 8x+7..8x) of `lead_len` bytes.
    pub lead_load: Signal<In, Bit>,
    pub lead_img: Signal<In, Bits<1408>>,
    pub lead_len: Signal<In, Bits<16>>,
    /// Config: the node's MAC (most significant byte first on the wire), IPv4 address and
    /// UDP source port; the host's MAC, IPv4 address and UDP port; the IPv4 TTL (register `ttl`).
    pub src_mac: Signal<In, Bits<48>>,
    pub src_ip: Signal<In, Bits<32>>,
    pub src_port: Signal<In, Bits<16>>,
    pub host_mac: Signal<In, Bits<48>>,
    pub host_ip: Signal<In, Bits<32>>,
    pub host_port: Signal<In, Bits<16>>,
    pub ttl: Signal<In, Bits<8>>,
    /// The host frame out.
    pub h_data: Signal<Out, Bits<64>>,
    pub h_keep: Signal<Out, Bits<8>>,
    pub h_valid: Signal<Out, Bit>,
    pub h_last: Signal<Out, Bit>,
    /// A frame streams or one waits.
    pub busy: Signal<Out, Bit>,
    /// A decision was dropped this cycle (stream and pending slot taken, or it does not fit).
    pub drop: Signal<Out, Bit>,
    r_t0_b0: DFF<Bits<1408>>,
    r_t0_b1: DFF<Bits<1408>>,
    r_t0_beat: DFF<Bits<8>>,
    r_t0_cur: DFF<Bit>,
    r_t0_done: DFF<Bit>,
    r_t0_big0: DFF<Bit>,
    r_t0_big1: DFF<Bit>,
    r_t1_b0: DFF<Bits<1408>>,
    r_t1_b1: DFF<Bits<1408>>,
    r_t1_beat: DFF<Bits<8>>,
    r_t1_cur: DFF<Bit>,
    r_t1_done: DFF<Bit>,
    r_t1_big0: DFF<Bit>,
    r_t1_big1: DFF<Bit>,
    r_t2_b0: DFF<Bits<1408>>,
    r_t2_b1: DFF<Bits<1408>>,
    r_t2_beat: DFF<Bits<8>>,
    r_t2_cur: DFF<Bit>,
    r_t2_done: DFF<Bit>,
    r_t2_big0: DFF<Bit>,
    r_t2_big1: DFF<Bit>,
    r_t3_b0: DFF<Bits<1408>>,
    r_t3_b1: DFF<Bits<1408>>,
    r_t3_beat: DFF<Bits<8>>,
    r_t3_cur: DFF<Bit>,
    r_t3_done: DFF<Bit>,
    r_t3_big0: DFF<Bit>,
    r_t3_big1: DFF<Bit>,
    r_streaming: DFF<Bit>,
    r_beat: DFF<Bits<8>>,
    r_lastidx: DFF<Bits<8>>,
    r_lastkeep: DFF<Bits<8>>,
    r_img: DFF<Bits<1408>>,
    r_ulen: DFF<Bits<16>>,
    r_asrc: DFF<Bits<16>>,
    r_adst: DFF<Bits<16>>,
    r_asum: DFF<Bits<16>>,
    r_csum: DFF<Bits<16>>,
    r_p_valid: DFF<Bit>,
    r_p_img: DFF<Bits<1408>>,
    r_p_ulen: DFF<Bits<16>>,
    bm0: Signal<Local, Bits<1408>>,
    wd0: Signal<Local, Bits<1408>>,
    bm1: Signal<Local, Bits<1408>>,
    wd1: Signal<Local, Bits<1408>>,
    bm2: Signal<Local, Bits<1408>>,
    wd2: Signal<Local, Bits<1408>>,
    bm3: Signal<Local, Bits<1408>>,
    wd3: Signal<Local, Bits<1408>>,
    rx_img: Signal<Local, Bits<1408>>,
    rx_big: Signal<Local, Bit>,
    rx_ulen_le: Signal<Local, Bits<16>>,
    rx_ulen: Signal<Local, Bits<16>>,
    rx_ok: Signal<Local, Bit>,
    lead_ulen: Signal<Local, Bits<16>>,
    lead_ok: Signal<Local, Bit>,
    last_beat: Signal<Local, Bit>,
    can_start: Signal<Local, Bit>,
    start: Signal<Local, Bit>,
    s_img: Signal<Local, Bits<1408>>,
    s_ulen: Signal<Local, Bits<16>>,
    p_load: Signal<Local, Bit>,
    p_free: Signal<Local, Bit>,
    p_img: Signal<Local, Bits<1408>>,
    p_ulen: Signal<Local, Bits<16>>,
    lastidx: Signal<Local, Bits<8>>,
    tail: Signal<Local, Bits<3>>,
    lastkeep: Signal<Local, Bits<8>>,
    total_len: Signal<Local, Bits<16>>,
    boff: Signal<Local, Bits<11>>,
    frame: Signal<Local, Bits<1408>>,
    cs1: Signal<Local, Bits<16>>,
    cs1c: Signal<Local, Bits<16>>,
    cs1t: Signal<Local, Bits<16>>,
    cs1tc: Signal<Local, Bits<16>>,
    cs2: Signal<Local, Bits<16>>,
    cs2c: Signal<Local, Bits<16>>,
    cs3: Signal<Local, Bits<16>>,
    cs3c: Signal<Local, Bits<16>>,
    cs4: Signal<Local, Bits<16>>,
    cs4c: Signal<Local, Bits<16>>,
    cs5: Signal<Local, Bits<16>>,
    cs5c: Signal<Local, Bits<16>>,
    rep0: LaneRep,
    bw0: ZeroExtend<8, 11>,
    rep1: LaneRep,
    bw1: ZeroExtend<8, 11>,
    rep2: LaneRep,
    bw2: ZeroExtend<8, 11>,
    rep3: LaneRep,
    bw3: ZeroExtend<8, 11>,
    beatw: ZeroExtend<8, 11>,
    ttlw: ZeroExtend<8, 16>,
    hdr: HostHeader,
    xh: ZeroExtend<336, 1408>,
    k0_2: Constant<Bits<2>>,
    k1_2: Constant<Bits<2>>,
    k2_2: Constant<Bits<2>>,
    k0_8: Constant<Bits<8>>,
    k1_8: Constant<Bits<8>>,
    k_beats: Constant<Bits<8>>,
    k_sat8: Constant<Bits<8>>,
    k_ff8: Constant<Bits<8>>,
    k1_16: Constant<Bits<16>>,
    k8_16: Constant<Bits<16>>,
    k0_3: Constant<Bits<3>>,
    k3_8: Constant<Bits<8>>,
    k_lastidx: Constant<Bits<8>>,
    k_tail: Constant<Bits<3>>,
    k6_11: Constant<Bits<11>>,
    k_udp_off: Constant<Bits<16>>,
    k_ip_len: Constant<Bits<16>>,
    k_min_len: Constant<Bits<16>>,
    k_max_len: Constant<Bits<16>>,
    k_min_ulen: Constant<Bits<16>>,
    k_max_ulen: Constant<Bits<16>>,
    k_ipsum: Constant<Bits<16>>,
    o_udp_len: Constant<Bits<11>>,
    k_lane0: Constant<Bits<1408>>,
    k_paymask: Constant<Bits<1408>>,
}

impl Default for HostGen {
    fn default() -> Self {
        assert_eq!(
            IMG_BITS, 1408,
            "LaneRep and the ports are written for 22 beats"
        );
        assert!(
            Layout::probe().ip_csum.off >= 8,
            "the registered checksum is right from beat 1 on: it must not be in beat 0"
        );
        Self {
            clock: Default::default(),
            t0_data: Default::default(),
            t0_keep: Default::default(),
            t0_valid: Default::default(),
            t0_last: Default::default(),
            t1_data: Default::default(),
            t1_keep: Default::default(),
            t1_valid: Default::default(),
            t1_last: Default::default(),
            t2_data: Default::default(),
            t2_keep: Default::default(),
            t2_valid: Default::default(),
            t2_last: Default::default(),
            t3_data: Default::default(),
            t3_keep: Default::default(),
            t3_valid: Default::default(),
            t3_last: Default::default(),
            rx_deliver: Default::default(),
            rx_port: Default::default(),
            lead_load: Default::default(),
            lead_img: Default::default(),
            lead_len: Default::default(),
            src_mac: Default::default(),
            src_ip: Default::default(),
            src_port: Default::default(),
            host_mac: Default::default(),
            host_ip: Default::default(),
            host_port: Default::default(),
            ttl: Default::default(),
            h_data: Default::default(),
            h_keep: Default::default(),
            h_valid: Default::default(),
            h_last: Default::default(),
            busy: Default::default(),
            drop: Default::default(),
            r_t0_b0: Default::default(),
            r_t0_b1: Default::default(),
            r_t0_beat: Default::default(),
            r_t0_cur: Default::default(),
            r_t0_done: Default::default(),
            r_t0_big0: Default::default(),
            r_t0_big1: Default::default(),
            r_t1_b0: Default::default(),
            r_t1_b1: Default::default(),
            r_t1_beat: Default::default(),
            r_t1_cur: Default::default(),
            r_t1_done: Default::default(),
            r_t1_big0: Default::default(),
            r_t1_big1: Default::default(),
            r_t2_b0: Default::default(),
            r_t2_b1: Default::default(),
            r_t2_beat: Default::default(),
            r_t2_cur: Default::default(),
            r_t2_done: Default::default(),
            r_t2_big0: Default::default(),
            r_t2_big1: Default::default(),
            r_t3_b0: Default::default(),
            r_t3_b1: Default::default(),
            r_t3_beat: Default::default(),
            r_t3_cur: Default::default(),
            r_t3_done: Default::default(),
            r_t3_big0: Default::default(),
            r_t3_big1: Default::default(),
            r_streaming: Default::default(),
            r_beat: Default::default(),
            r_lastidx: Default::default(),
            r_lastkeep: Default::default(),
            r_img: Default::default(),
            r_ulen: Default::default(),
            r_asrc: Default::default(),
            r_adst: Default::default(),
            r_asum: Default::default(),
            r_csum: Default::default(),
            r_p_valid: Default::default(),
            r_p_img: Default::default(),
            r_p_ulen: Default::default(),
            bm0: Default::default(),
            wd0: Default::default(),
            bm1: Default::default(),
            wd1: Default::default(),
            bm2: Default::default(),
            wd2: Default::default(),
            bm3: Default::default(),
            wd3: Default::default(),
            rx_img: Default::default(),
            rx_big: Default::default(),
            rx_ulen_le: Default::default(),
            rx_ulen: Default::default(),
            rx_ok: Default::default(),
            lead_ulen: Default::default(),
            lead_ok: Default::default(),
            last_beat: Default::default(),
            can_start: Default::default(),
            start: Default::default(),
            s_img: Default::default(),
            s_ulen: Default::default(),
            p_load: Default::default(),
            p_free: Default::default(),
            p_img: Default::default(),
            p_ulen: Default::default(),
            lastidx: Default::default(),
            tail: Default::default(),
            lastkeep: Default::default(),
            total_len: Default::default(),
            boff: Default::default(),
            frame: Default::default(),
            cs1: Default::default(),
            cs1c: Default::default(),
            cs1t: Default::default(),
            cs1tc: Default::default(),
            cs2: Default::default(),
            cs2c: Default::default(),
            cs3: Default::default(),
            cs3c: Default::default(),
            cs4: Default::default(),
            cs4c: Default::default(),
            cs5: Default::default(),
            cs5c: Default::default(),
            rep0: Default::default(),
            bw0: Default::default(),
            rep1: Default::default(),
            bw1: Default::default(),
            rep2: Default::default(),
            bw2: Default::default(),
            rep3: Default::default(),
            bw3: Default::default(),
            beatw: Default::default(),
            ttlw: Default::default(),
            hdr: HostHeader::new(header_map()),
            xh: Default::default(),
            k0_2: k(0),
            k1_2: k(1),
            k2_2: k(2),
            k0_8: k(0),
            k1_8: k(1),
            k_beats: k(IMG_BEATS as u64),
            k_sat8: k(0xFF),
            k_ff8: k(0xFF),
            k1_16: k(1),
            k8_16: k(8),
            k0_3: k(0),
            k3_8: k(3),
            k_lastidx: k((frame::ETH_LEN + frame::IPV4_LEN + 7 - 8) as u64),
            k_tail: k(((frame::ETH_LEN + frame::IPV4_LEN) % 8) as u64),
            k6_11: k(6),
            k_udp_off: k((frame::ETH_LEN + frame::IPV4_LEN) as u64),
            k_ip_len: k(frame::IPV4_LEN as u64),
            k_min_len: k(frame::PAYLOAD_OFFSET as u64),
            k_max_len: k(IMG_BYTES as u64),
            k_min_ulen: k(frame::UDP_LEN as u64),
            k_max_ulen: k((IMG_BYTES - frame::ETH_LEN - frame::IPV4_LEN) as u64),
            k_ipsum: k(ip_const_sum()),
            o_udp_len: k(8 * Layout::probe().udp_len.off as u64),
            k_lane0: ones(0, 64),
            k_paymask: ones(8 * frame::PAYLOAD_OFFSET, IMG_BITS),
        }
    }
}

impl Logic for HostGen {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            r_t0_b0,
            r_t0_b1,
            r_t0_beat,
            r_t0_cur,
            r_t0_done,
            r_t0_big0,
            r_t0_big1,
            r_t1_b0,
            r_t1_b1,
            r_t1_beat,
            r_t1_cur,
            r_t1_done,
            r_t1_big0,
            r_t1_big1,
            r_t2_b0,
            r_t2_b1,
            r_t2_beat,
            r_t2_cur,
            r_t2_done,
            r_t2_big0,
            r_t2_big1,
            r_t3_b0,
            r_t3_b1,
            r_t3_beat,
            r_t3_cur,
            r_t3_done,
            r_t3_big0,
            r_t3_big1,
            r_streaming,
            r_beat,
            r_lastidx,
            r_lastkeep,
            r_img,
            r_ulen,
            r_asrc,
            r_adst,
            r_asum,
            r_csum,
            r_p_valid,
            r_p_img,
            r_p_ulen
        );
        // Tree 0: capture. The beat goes to lane `beat` of image `cur` (bytes whose keep bit is 0
        // zeroed); beats past the image only mark the frame oversize; the last beat makes `cur`
        // the completed image (`done`) and flips `cur`.
        self.rep0.data.next = self.t0_data.val();
        self.rep0.keep.next = self.t0_keep.val();
        self.bw0.narrow.next = self.r_t0_beat.q.val();
        self.bm0.next = self.k_lane0.val() << (self.bw0.wide.val() << self.k6_11.val());
        self.wd0.next = self.rep0.out.val() & self.bm0.val();
        if self.t0_valid.val() {
            if self.r_t0_beat.q.val() < self.k_beats.val() {
                if self.r_t0_cur.q.val() {
                    self.r_t0_b1.d.next = (self.r_t0_b1.q.val() & !self.bm0.val()) | self.wd0.val();
                } else {
                    self.r_t0_b0.d.next = (self.r_t0_b0.q.val() & !self.bm0.val()) | self.wd0.val();
                }
            }
            if self.r_t0_beat.q.val() == self.k0_8.val() {
                if self.r_t0_cur.q.val() {
                    self.r_t0_big1.d.next = false;
                } else {
                    self.r_t0_big0.d.next = false;
                }
            }
            if self.r_t0_beat.q.val() >= self.k_beats.val() {
                if self.r_t0_cur.q.val() {
                    self.r_t0_big1.d.next = true;
                } else {
                    self.r_t0_big0.d.next = true;
                }
            }
            if self.t0_last.val() {
                self.r_t0_done.d.next = self.r_t0_cur.q.val();
                self.r_t0_cur.d.next = !self.r_t0_cur.q.val();
                self.r_t0_beat.d.next = self.k0_8.val();
            } else if self.r_t0_beat.q.val() != self.k_sat8.val() {
                self.r_t0_beat.d.next = self.r_t0_beat.q.val() + self.k1_8.val();
            }
        }
        // Tree 1: capture. The beat goes to lane `beat` of image `cur` (bytes whose keep bit is 0
        // zeroed); beats past the image only mark the frame oversize; the last beat makes `cur`
        // the completed image (`done`) and flips `cur`.
        self.rep1.data.next = self.t1_data.val();
        self.rep1.keep.next = self.t1_keep.val();
        self.bw1.narrow.next = self.r_t1_beat.q.val();
        self.bm1.next = self.k_lane0.val() << (self.bw1.wide.val() << self.k6_11.val());
        self.wd1.next = self.rep1.out.val() & self.bm1.val();
        if self.t1_valid.val() {
            if self.r_t1_beat.q.val() < self.k_beats.val() {
                if self.r_t1_cur.q.val() {
                    self.r_t1_b1.d.next = (self.r_t1_b1.q.val() & !self.bm1.val()) | self.wd1.val();
                } else {
                    self.r_t1_b0.d.next = (self.r_t1_b0.q.val() & !self.bm1.val()) | self.wd1.val();
                }
            }
            if self.r_t1_beat.q.val() == self.k0_8.val() {
                if self.r_t1_cur.q.val() {
                    self.r_t1_big1.d.next = false;
                } else {
                    self.r_t1_big0.d.next = false;
                }
            }
            if self.r_t1_beat.q.val() >= self.k_beats.val() {
                if self.r_t1_cur.q.val() {
                    self.r_t1_big1.d.next = true;
                } else {
                    self.r_t1_big0.d.next = true;
                }
            }
            if self.t1_last.val() {
                self.r_t1_done.d.next = self.r_t1_cur.q.val();
                self.r_t1_cur.d.next = !self.r_t1_cur.q.val();
                self.r_t1_beat.d.next = self.k0_8.val();
            } else if self.r_t1_beat.q.val() != self.k_sat8.val() {
                self.r_t1_beat.d.next = self.r_t1_beat.q.val() + self.k1_8.val();
            }
        }
        // Tree 2: capture. The beat goes to lane `beat` of image `cur` (bytes whose keep bit is 0
        // zeroed); beats past the image only mark the frame oversize; the last beat makes `cur`
        // the completed image (`done`) and flips `cur`.
        self.rep2.data.next = self.t2_data.val();
        self.rep2.keep.next = self.t2_keep.val();
        self.bw2.narrow.next = self.r_t2_beat.q.val();
        self.bm2.next = self.k_lane0.val() << (self.bw2.wide.val() << self.k6_11.val());
        self.wd2.next = self.rep2.out.val() & self.bm2.val();
        if self.t2_valid.val() {
            if self.r_t2_beat.q.val() < self.k_beats.val() {
                if self.r_t2_cur.q.val() {
                    self.r_t2_b1.d.next = (self.r_t2_b1.q.val() & !self.bm2.val()) | self.wd2.val();
                } else {
                    self.r_t2_b0.d.next = (self.r_t2_b0.q.val() & !self.bm2.val()) | self.wd2.val();
                }
            }
            if self.r_t2_beat.q.val() == self.k0_8.val() {
                if self.r_t2_cur.q.val() {
                    self.r_t2_big1.d.next = false;
                } else {
                    self.r_t2_big0.d.next = false;
                }
            }
            if self.r_t2_beat.q.val() >= self.k_beats.val() {
                if self.r_t2_cur.q.val() {
                    self.r_t2_big1.d.next = true;
                } else {
                    self.r_t2_big0.d.next = true;
                }
            }
            if self.t2_last.val() {
                self.r_t2_done.d.next = self.r_t2_cur.q.val();
                self.r_t2_cur.d.next = !self.r_t2_cur.q.val();
                self.r_t2_beat.d.next = self.k0_8.val();
            } else if self.r_t2_beat.q.val() != self.k_sat8.val() {
                self.r_t2_beat.d.next = self.r_t2_beat.q.val() + self.k1_8.val();
            }
        }
        // Tree 3: capture. The beat goes to lane `beat` of image `cur` (bytes whose keep bit is 0
        // zeroed); beats past the image only mark the frame oversize; the last beat makes `cur`
        // the completed image (`done`) and flips `cur`.
        self.rep3.data.next = self.t3_data.val();
        self.rep3.keep.next = self.t3_keep.val();
        self.bw3.narrow.next = self.r_t3_beat.q.val();
        self.bm3.next = self.k_lane0.val() << (self.bw3.wide.val() << self.k6_11.val());
        self.wd3.next = self.rep3.out.val() & self.bm3.val();
        if self.t3_valid.val() {
            if self.r_t3_beat.q.val() < self.k_beats.val() {
                if self.r_t3_cur.q.val() {
                    self.r_t3_b1.d.next = (self.r_t3_b1.q.val() & !self.bm3.val()) | self.wd3.val();
                } else {
                    self.r_t3_b0.d.next = (self.r_t3_b0.q.val() & !self.bm3.val()) | self.wd3.val();
                }
            }
            if self.r_t3_beat.q.val() == self.k0_8.val() {
                if self.r_t3_cur.q.val() {
                    self.r_t3_big1.d.next = false;
                } else {
                    self.r_t3_big0.d.next = false;
                }
            }
            if self.r_t3_beat.q.val() >= self.k_beats.val() {
                if self.r_t3_cur.q.val() {
                    self.r_t3_big1.d.next = true;
                } else {
                    self.r_t3_big0.d.next = true;
                }
            }
            if self.t3_last.val() {
                self.r_t3_done.d.next = self.r_t3_cur.q.val();
                self.r_t3_cur.d.next = !self.r_t3_cur.q.val();
                self.r_t3_beat.d.next = self.k0_8.val();
            } else if self.r_t3_beat.q.val() != self.k_sat8.val() {
                self.r_t3_beat.d.next = self.r_t3_beat.q.val() + self.k1_8.val();
            }
        }
        // The follower's copy: the completed image of tree rx_port.
        if self.rx_port.val() == self.k0_2.val() {
            if self.r_t0_done.q.val() {
                self.rx_img.next = self.r_t0_b1.q.val();
                self.rx_big.next = self.r_t0_big1.q.val();
            } else {
                self.rx_img.next = self.r_t0_b0.q.val();
                self.rx_big.next = self.r_t0_big0.q.val();
            }
        } else if self.rx_port.val() == self.k1_2.val() {
            if self.r_t1_done.q.val() {
                self.rx_img.next = self.r_t1_b1.q.val();
                self.rx_big.next = self.r_t1_big1.q.val();
            } else {
                self.rx_img.next = self.r_t1_b0.q.val();
                self.rx_big.next = self.r_t1_big0.q.val();
            }
        } else if self.rx_port.val() == self.k2_2.val() {
            if self.r_t2_done.q.val() {
                self.rx_img.next = self.r_t2_b1.q.val();
                self.rx_big.next = self.r_t2_big1.q.val();
            } else {
                self.rx_img.next = self.r_t2_b0.q.val();
                self.rx_big.next = self.r_t2_big0.q.val();
            }
        } else {
            if self.r_t3_done.q.val() {
                self.rx_img.next = self.r_t3_b1.q.val();
                self.rx_big.next = self.r_t3_big1.q.val();
            } else {
                self.rx_img.next = self.r_t3_b0.q.val();
                self.rx_big.next = self.r_t3_big0.q.val();
            }
        }
        // The UDP length, big-endian in frame bytes 38..40 (bytes swapped from the lane order).
        self.rx_ulen_le.next = self
            .rx_img
            .val()
            .get_bits::<16>(self.o_udp_len.val().index());
        self.rx_ulen.next = (self.rx_ulen_le.val() << self.k8_16.val())
            | (self.rx_ulen_le.val() >> self.k8_16.val());
        self.rx_ok.next = self.rx_deliver.val()
            && !self.rx_big.val()
            && (self.rx_ulen.val() >= self.k_min_ulen.val())
            && (self.rx_ulen.val() <= self.k_max_ulen.val());
        self.lead_ulen.next = self.lead_len.val() - self.k_udp_off.val();
        self.lead_ok.next = self.lead_load.val()
            && (self.lead_len.val() >= self.k_min_len.val())
            && (self.lead_len.val() <= self.k_max_len.val());
        // Who goes where: the pending decision first, then the leader's, then the follower's;
        // the first takes the stream if it is free (idle or in its last beat), the next the
        // pending slot, any other is dropped.
        self.last_beat.next =
            self.r_streaming.q.val() && (self.r_beat.q.val() == self.r_lastidx.q.val());
        self.can_start.next = !self.r_streaming.q.val() || self.last_beat.val();
        self.drop.next = (self.lead_load.val() && !self.lead_ok.val())
            || (self.rx_deliver.val() && !self.rx_ok.val());
        self.start.next = false;
        self.s_img.next = self.r_p_img.q.val();
        self.s_ulen.next = self.r_p_ulen.q.val();
        self.p_load.next = false;
        self.p_free.next = false;
        self.p_img.next = self.lead_img.val();
        self.p_ulen.next = self.lead_ulen.val();
        if self.can_start.val() {
            if self.r_p_valid.q.val() {
                self.start.next = true;
                if self.lead_ok.val() {
                    self.p_load.next = true;
                    if self.rx_ok.val() {
                        self.drop.next = true;
                    }
                } else if self.rx_ok.val() {
                    self.p_load.next = true;
                    self.p_img.next = self.rx_img.val();
                    self.p_ulen.next = self.rx_ulen.val();
                } else {
                    self.p_free.next = true;
                }
            } else if self.lead_ok.val() {
                self.start.next = true;
                self.s_img.next = self.lead_img.val();
                self.s_ulen.next = self.lead_ulen.val();
                if self.rx_ok.val() {
                    self.p_load.next = true;
                    self.p_img.next = self.rx_img.val();
                    self.p_ulen.next = self.rx_ulen.val();
                }
            } else if self.rx_ok.val() {
                self.start.next = true;
                self.s_img.next = self.rx_img.val();
                self.s_ulen.next = self.rx_ulen.val();
            }
        } else if self.r_p_valid.q.val() {
            if self.lead_ok.val() || self.rx_ok.val() {
                self.drop.next = true;
            }
        } else if self.lead_ok.val() {
            self.p_load.next = true;
            if self.rx_ok.val() {
                self.drop.next = true;
            }
        } else if self.rx_ok.val() {
            self.p_load.next = true;
            self.p_img.next = self.rx_img.val();
            self.p_ulen.next = self.rx_ulen.val();
        }
        if self.p_load.val() {
            self.r_p_valid.d.next = true;
            self.r_p_img.d.next = self.p_img.val();
            self.r_p_ulen.d.next = self.p_ulen.val();
        } else if self.p_free.val() {
            self.r_p_valid.d.next = false;
        }
        self.busy.next = self.r_streaming.q.val() || self.r_p_valid.q.val();
        // The stream: a started frame's image and UDP length are latched; the index of its last
        // beat ((ulen + 34 + 7) / 8 - 1) and the last beat's keep (frame length mod 8, 0 = all
        // eight bytes) come straight from the UDP length (at most 142: 8 bits suffice).
        self.lastidx.next =
            (self.s_ulen.val().get_bits::<8>(0) + self.k_lastidx.val()) >> self.k3_8.val();
        self.tail.next = self.s_ulen.val().get_bits::<3>(0) + self.k_tail.val();
        if self.tail.val() == self.k0_3.val() {
            self.lastkeep.next = self.k_ff8.val();
        } else {
            self.lastkeep.next = !(self.k_ff8.val() << self.tail.val());
        }
        if self.start.val() {
            self.r_streaming.d.next = true;
            self.r_beat.d.next = self.k0_8.val();
            self.r_lastidx.d.next = self.lastidx.val();
            self.r_lastkeep.d.next = self.lastkeep.val();
            self.r_img.d.next = self.s_img.val();
            self.r_ulen.d.next = self.s_ulen.val();
        } else if self.last_beat.val() {
            self.r_streaming.d.next = false;
        } else if self.r_streaming.q.val() {
            self.r_beat.d.next = self.r_beat.q.val() + self.k1_8.val();
        }
        // The IPv4 checksum, pipelined (one's-complement adds with end-around carry): the
        // address words' sums (the source's with the TTL word's TTL byte) are registered (the
        // config inputs change only while the node is
        // disabled, so they are settled two cycles later), then the constant words' sum, then
        // + total_len into `r_csum`, which follows `r_ulen` one cycle later: the checksum is in
        // beat 3, and a frame's `r_ulen` is set before its beat 0.
        self.cs1.next = self.src_ip.val().get_bits::<16>(16) + self.src_ip.val().get_bits::<16>(0);
        if self.cs1.val() < self.src_ip.val().get_bits::<16>(0) {
            self.cs1c.next = self.cs1.val() + self.k1_16.val();
        } else {
            self.cs1c.next = self.cs1.val();
        }
        self.ttlw.narrow.next = self.ttl.val();
        self.cs1t.next = self.cs1c.val() + (self.ttlw.wide.val() << self.k8_16.val());
        if self.cs1t.val() < self.cs1c.val() {
            self.cs1tc.next = self.cs1t.val() + self.k1_16.val();
        } else {
            self.cs1tc.next = self.cs1t.val();
        }
        self.r_asrc.d.next = self.cs1tc.val();
        self.cs2.next =
            self.host_ip.val().get_bits::<16>(16) + self.host_ip.val().get_bits::<16>(0);
        if self.cs2.val() < self.host_ip.val().get_bits::<16>(0) {
            self.cs2c.next = self.cs2.val() + self.k1_16.val();
        } else {
            self.cs2c.next = self.cs2.val();
        }
        self.r_adst.d.next = self.cs2c.val();
        self.cs3.next = self.r_asrc.q.val() + self.r_adst.q.val();
        if self.cs3.val() < self.r_adst.q.val() {
            self.cs3c.next = self.cs3.val() + self.k1_16.val();
        } else {
            self.cs3c.next = self.cs3.val();
        }
        self.cs4.next = self.cs3c.val() + self.k_ipsum.val();
        if self.cs4.val() < self.k_ipsum.val() {
            self.cs4c.next = self.cs4.val() + self.k1_16.val();
        } else {
            self.cs4c.next = self.cs4.val();
        }
        self.r_asum.d.next = self.cs4c.val();
        self.total_len.next = self.r_ulen.q.val() + self.k_ip_len.val();
        self.cs5.next = self.r_asum.q.val() + self.total_len.val();
        if self.cs5.val() < self.total_len.val() {
            self.cs5c.next = self.cs5.val() + self.k1_16.val();
        } else {
            self.cs5c.next = self.cs5.val();
        }
        self.r_csum.d.next = !self.cs5c.val();
        self.hdr.dst_mac.next = self.host_mac.val();
        self.hdr.src_mac.next = self.src_mac.val();
        self.hdr.total_len.next = self.total_len.val();
        self.hdr.ip_csum.next = self.r_csum.q.val();
        self.hdr.src_ip.next = self.src_ip.val();
        self.hdr.dst_ip.next = self.host_ip.val();
        self.hdr.src_port.next = self.src_port.val();
        self.hdr.dst_port.next = self.host_port.val();
        self.hdr.udp_len.next = self.r_ulen.q.val();
        self.hdr.ttl.next = self.ttl.val();
        self.xh.narrow.next = self.hdr.out.val();
        self.frame.next = self.xh.wide.val() | (self.r_img.q.val() & self.k_paymask.val());
        self.beatw.narrow.next = self.r_beat.q.val();
        self.boff.next = self.beatw.wide.val() << self.k6_11.val();
        self.h_data.next = self.frame.val().get_bits::<64>(self.boff.val().index());
        self.h_valid.next = self.r_streaming.q.val();
        self.h_last.next = self.last_beat.val();
        if self.last_beat.val() {
            self.h_keep.next = self.r_lastkeep.q.val();
        } else {
            self.h_keep.next = self.k_ff8.val();
        }
    }
}
