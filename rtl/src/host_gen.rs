//! `host_gen`: the host-path frame, one per decision, on one 64-bit output stream (AXI-Stream
//! shape: `h_data`, `h_keep`, `h_valid`, `h_last`, a beat every cycle once a frame starts; byte
//! x of a beat is bits 8x+7..8x, as in `pkt_gen` and `pkt_parser`). A frame starts only with
//! `room` high: in `nc_engine` the stream goes into an output FIFO (`crate::out_fifo`) that
//! the MAC may pause, and `room` says it can take a whole frame.
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
//! Issue 17: frames are not latched as whole images any more but kept in RAM (a vendor flow maps
//! it to block RAM) and read back beat by beat, so a copy may be as long as one capture buffer
//! ([`MAX_FRAME_BYTES`] = 2048 bytes; a DECIDE of 8 entries of 128 payload bytes, the most
//! `pkt_gen` builds, is 1,230).
//!
//! Five input streams are captured, each by a [`Capture`]: the four tree inputs exactly as
//! `nc_engine` receives them (`t<p>_data/keep/valid/last`, one beat per cycle when valid; bytes
//! whose keep bit is 0 are captured as 0) and the leader's own tree-0 DECIDE stream (`l_*`,
//! `pkt_gen`'s `m0_*`). Each writes its frames into a RAM of [`BUFS`] buffers of [`BUF_BEATS`]
//! beats: a frame goes into buffer `cur`; at its last beat `cur` becomes `done` (with the UDP
//! length taken from beat 4 as it passed) and the next frame (which may start in the very next
//! cycle) goes into a buffer that is neither `done` nor one the host stream or the pending slot
//! still reads — four buffers always leave one.
//!
//! Two sources of decisions:
//! - **Follower** (`rx_deliver`, `rx_port` = p): the decided copy is buffer `done` of tree p,
//!   the most recently *completed* frame of that tree. This is always the copy that completed
//!   delivery: `nc_engine` raises `rx_deliver` 2 cycles after that frame's last beat (parser
//!   verdict + holding register), at most 7 when its verdict waits for other ports in the
//!   holding register, and a legal Ethernet frame is at least 60 bytes = 8 beats, so no second
//!   frame can complete on that tree in between (its last beat comes 8 or more cycles later).
//!   The payload length is the captured frame's UDP length, not the frame length (a frame may be
//!   padded).
//! - **Leader** (`lead_load`, in the first beat of the decided frame on `l_*`, with its UDP
//!   length `lead_ulen`, which `pkt_gen` keeps in a register; payload = bytes 42..34 +
//!   `lead_ulen`): the decision refers to the buffer being written.
//!   When it can start at once it streams *live*: each beat is the leader stream's beat of the
//!   cycle before (registered), so its first beat still comes one cycle after `lead_load`; when
//!   it waits in the pending slot it is read back from its buffer, which is written ahead of
//!   the read.
//!
//! If both come in one cycle the leader's goes first (the model orders a tick's actions before
//! the event's). A decision's buffer, length and source are latched in the cycle of its strobe;
//! when the stream is idle (or in its last beat) the frame's first beat is valid in the next
//! cycle (the RAM read of its beat 0 is issued in the strobe cycle), so with `nc_engine`'s 2
//! cycles from a copy's last beat to `rx_deliver` the host frame starts 3 cycles after the last
//! copy beat. Frames stream back to back. One pending slot: a decision that comes while a frame
//! streams waits there and starts in the cycle after that frame's last beat; one that comes
//! while the stream and the slot are both taken is dropped (`drop` high in its strobe cycle; two
//! drops in one cycle give one pulse), never a corrupted frame. A frame that does not fit a
//! buffer (a captured frame of more than 256 beats, a UDP length outside 8..=2014, from the
//! captured frame or from `lead_ulen`) cannot be forwarded: `drop` too. Lanes whose `h_keep` bit is 0 carry
//! don't-care bytes.

use proto::frame::{self, UdpMeta};
use rust_hdl::prelude::*;

use crate::layout::{Field, Layout};
use crate::prim::{ByteSrc, HostHeader, KeepMask, OnesAdd, ZeroExtend};

/// Beats of one capture buffer.
pub const BUF_BEATS: usize = 1 << BEAT_BITS;
/// Address bits of a beat in a buffer.
const BEAT_BITS: usize = 8;
/// A capture RAM's address: {buffer, beat}.
const ADDR_BITS: usize = BEAT_BITS + 2;
/// A capture's beat counter: one bit above a buffer's beats (it saturates there).
const CNT_BITS: usize = BEAT_BITS + 1;
// The host stream's beat registers (`r_beat`, `beat_nx`, `beat16`) are written as 8 bits.
const _: () = assert!(BEAT_BITS == 8);
/// Buffers per input stream: the one being written, the last completed one, and the ones the
/// host stream and the pending slot read.
pub const BUFS: usize = 4;
/// The longest frame that can be forwarded (bytes): one buffer.
pub const MAX_FRAME_BYTES: usize = 8 * BUF_BEATS;
/// The beat that carries the UDP length (lanes 6..7).
const UDP_LEN_BEAT: u64 = 4;

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
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

block! {
    /// One input stream's capture: its frames written into a RAM of [`BUFS`] buffers of
    /// [`BUF_BEATS`] 64-bit beats (bytes whose keep bit is 0 written as 0). A frame goes into
    /// buffer `cur`; at its last beat `cur` becomes `done` (with the frame's UDP length, from
    /// beat 4, and whether it had more beats than a buffer holds) and the next frame goes into a
    /// buffer that is neither the one just completed nor one the stream or the pending slot
    /// still read (`used`).
    pub struct Capture(leader: bool) {
        pub clock: Signal<In, Clock>,
        pub data: Signal<In, Bits<64>>,
        pub keep: Signal<In, Bits<8>>,
        pub valid: Signal<In, Bit>,
        pub last: Signal<In, Bit>,
        /// Buffers the host stream and the pending slot read (one bit each).
        pub used: Signal<In, Bits<4>>,
        /// The leader's stream only: the UDP length of the frame starting in this beat
        /// (`lead_ulen`).
        pub lead_ulen: Signal<In, Bits<16>>,
        /// The frame a decision of this cycle refers to: for a tree the last completed one (its
        /// buffer, UDP length, and whether it had more beats than a buffer); for the leader's
        /// stream the one being written (its UDP length from `lead_ulen`).
        pub pick: Signal<Out, Bits<2>>,
        pub pick_ulen: Signal<Out, Bits<16>>,
        /// The frame may be forwarded: not longer than a buffer and a UDP length in the range a
        /// host frame takes (for a tree registered with the frame's last beat, so that a decision
        /// needs no comparison; for the leader's stream from `lead_ulen`).
        pub pick_ok: Signal<Out, Bit>,
        /// Read port: {buffer, beat}; data one cycle later.
        pub raddr: Signal<In, Bits<ADDR_BITS>>,
        pub rdata: Signal<Out, Bits<64>>,
        ram: RAM<Bits<64>, ADDR_BITS>,
        kmask: KeepMask,
        r_cur: DFF<Bits<2>>,
        r_done: DFF<Bits<2>>,
        r_beat: DFF<Bits<CNT_BITS>>,
        r_big: DFF<Bit>,
        r_ulen: DFF<Bits<16>>,
        r_done_ulen: DFF<Bits<16>>,
        r_done_ok: DFF<Bit>,
        /// The beat now coming is the one with the UDP length (registered a beat ahead); the UDP
        /// length so far is in the range a host frame takes.
        r_at_ulen: DFF<Bit>,
        r_ulen_ok: DFF<Bit>,
        ok_now: Signal<Local, Bit>,
        curw: ZeroExtend<2, ADDR_BITS>,
        beatw: ZeroExtend<BEAT_BITS, ADDR_BITS>,
        avail: Signal<Local, Bits<4>>,
        free: Signal<Local, Bits<2>>,
        ulen_le: Signal<Local, Bits<16>>,
        ulen_now: Signal<Local, Bits<16>>,
        big_now: Signal<Local, Bit>,
        k0_2: Constant<Bits<2>> = k(0),
        k1_2: Constant<Bits<2>> = k(1),
        k2_2: Constant<Bits<2>> = k(2),
        k3_2: Constant<Bits<2>> = k(3),
        k1_4: Constant<Bits<4>> = k(1),
        k0_c: Constant<Bits<CNT_BITS>> = k(0),
        k1_c: Constant<Bits<CNT_BITS>> = k(1),
        k_sat: Constant<Bits<CNT_BITS>> = k((1 << CNT_BITS) - 1),
        k_beats: Constant<Bits<CNT_BITS>> = k(BUF_BEATS as u64),
        k_ulen_beat1: Constant<Bits<CNT_BITS>> = k(UDP_LEN_BEAT - 1),
        k_bb: Constant<Bits<ADDR_BITS>> = k(BEAT_BITS as u64),
        k8_16: Constant<Bits<16>> = k(8),
        k0_16: Constant<Bits<16>> = k(0),
        k_leader: Constant<Bit> = Constant::new(leader),
        k_min_ulen: Constant<Bits<16>> = k(frame::UDP_LEN as u64),
        k_max_ulen: Constant<Bits<16>> =
            k((MAX_FRAME_BYTES - frame::ETH_LEN - frame::IPV4_LEN) as u64),
    }
}

impl Capture {
    /// A tree's capture (`leader` false) or the leader stream's.
    fn new(leader: bool) -> Self {
        let l = Layout::probe();
        assert_eq!(
            (l.udp_len.off / 8, l.udp_len.off % 8),
            (UDP_LEN_BEAT as usize, 6),
            "the UDP length is lanes 6..7 of beat 4"
        );
        Self::build(leader)
    }
}

impl Logic for Capture {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            r_cur,
            r_done,
            r_beat,
            r_big,
            r_ulen,
            r_done_ulen,
            r_done_ok,
            r_at_ulen,
            r_ulen_ok
        );
        self.ram.write_clock.next = self.clock.val();
        self.ram.read_clock.next = self.clock.val();
        self.kmask.keep.next = self.keep.val();
        self.curw.narrow.next = self.r_cur.q.val();
        self.beatw.narrow.next = self.r_beat.q.val().get_bits::<BEAT_BITS>(0);
        self.ram.write_address.next =
            (self.curw.wide.val() << self.k_bb.val()) | self.beatw.wide.val();
        self.ram.write_data.next = self.data.val() & self.kmask.out.val();
        self.ram.write_enable.next = self.valid.val() && (self.r_beat.q.val() < self.k_beats.val());
        self.ram.read_address.next = self.raddr.val();
        self.rdata.next = self.ram.read_data.val();
        // The UDP length (big-endian in lanes 6..7 of beat 4).
        self.ulen_le.next = self.data.val().get_bits::<16>(48);
        if self.valid.val() && self.r_at_ulen.q.val() {
            self.ulen_now.next =
                (self.ulen_le.val() << self.k8_16.val()) | (self.ulen_le.val() >> self.k8_16.val());
            self.ok_now.next = (self.ulen_now.val() >= self.k_min_ulen.val())
                && (self.ulen_now.val() <= self.k_max_ulen.val());
        } else {
            self.ulen_now.next = self.r_ulen.q.val();
            self.ok_now.next = self.r_ulen_ok.q.val();
        }
        self.big_now.next = self.r_big.q.val() || (self.r_beat.q.val() >= self.k_beats.val());
        // The next buffer: the lowest one that is neither being completed nor read.
        self.avail.next = !(self.used.val() | (self.k1_4.val() << self.r_cur.q.val()));
        if self.avail.val().get_bit(0) {
            self.free.next = self.k0_2.val();
        } else if self.avail.val().get_bit(1) {
            self.free.next = self.k1_2.val();
        } else if self.avail.val().get_bit(2) {
            self.free.next = self.k2_2.val();
        } else if self.avail.val().get_bit(3) {
            self.free.next = self.k3_2.val();
        } else {
            // (never: at most three of the four are excluded)
            self.free.next = self.k0_2.val();
        }
        if self.valid.val() {
            self.r_ulen.d.next = self.ulen_now.val();
            self.r_ulen_ok.d.next = self.ok_now.val();
            self.r_big.d.next = self.big_now.val();
            self.r_at_ulen.d.next = self.r_beat.q.val() == self.k_ulen_beat1.val();
            if self.r_beat.q.val() == self.k0_c.val() {
                self.r_ulen.d.next = self.k0_16.val();
                self.r_ulen_ok.d.next = false;
                self.r_big.d.next = false;
            }
            if self.last.val() {
                self.r_at_ulen.d.next = false;
                self.r_done.d.next = self.r_cur.q.val();
                self.r_done_ulen.d.next = self.ulen_now.val();
                self.r_done_ok.d.next = !self.big_now.val() && self.ok_now.val();
                self.r_cur.d.next = self.free.val();
                self.r_beat.d.next = self.k0_c.val();
            } else if self.r_beat.q.val() != self.k_sat.val() {
                self.r_beat.d.next = self.r_beat.q.val() + self.k1_c.val();
            }
        }
        if self.k_leader.val() {
            self.pick.next = self.r_cur.q.val();
            self.pick_ulen.next = self.lead_ulen.val();
            self.pick_ok.next = (self.pick_ulen.val() >= self.k_min_ulen.val())
                && (self.pick_ulen.val() <= self.k_max_ulen.val());
        } else {
            self.pick.next = self.r_done.q.val();
            self.pick_ulen.next = self.r_done_ulen.q.val();
            self.pick_ok.next = self.r_done_ok.q.val();
        }
    }
}

block! {
    /// A frame's last beat from its UDP length: the index of the beat
    /// (`(ulen + 34 + 7) / 8 - 1`) and its keep (frame length mod 8, 0 = all eight bytes).
    /// `HostGen` has one per candidate (the pending slot, the leader's frame, each tree's
    /// copy) so that the start decision picks results, with no adder behind it.
    pub struct FrameEnd() {
        pub ulen: Signal<In, Bits<16>>,
        pub lastidx: Signal<Out, Bits<16>>,
        pub lastkeep: Signal<Out, Bits<8>>,
        tail: Signal<Local, Bits<3>>,
        k_lastidx: Constant<Bits<16>> = k((frame::ETH_LEN + frame::IPV4_LEN + 7 - 8) as u64),
        k_tail: Constant<Bits<3>> = k(((frame::ETH_LEN + frame::IPV4_LEN) % 8) as u64),
        k_ff8: Constant<Bits<8>> = k(0xFF),
        k3_16: Constant<Bits<16>> = k(3),
        k0_3: Constant<Bits<3>> = k(0),
    }
}

impl Default for FrameEnd {
    fn default() -> Self {
        Self::build()
    }
}

impl Logic for FrameEnd {
    #[hdl_gen]
    fn update(&mut self) {
        self.lastidx.next = (self.ulen.val() + self.k_lastidx.val()) >> self.k3_16.val();
        self.tail.next = self.ulen.val().get_bits::<3>(0) + self.k_tail.val();
        if self.tail.val() == self.k0_3.val() {
            self.lastkeep.next = self.k_ff8.val();
        } else {
            self.lastkeep.next = !(self.k_ff8.val() << self.tail.val());
        }
    }
}

block! {
    /// The host-path frame generator.
    pub struct HostGen() {
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
        /// The leader's tree-0 DECIDE stream (`pkt_gen`'s `m0_*`; watched only).
        pub l_data: Signal<In, Bits<64>>,
        pub l_keep: Signal<In, Bits<8>>,
        pub l_valid: Signal<In, Bit>,
        pub l_last: Signal<In, Bit>,
        /// A follower decision: the last completed frame of tree `rx_port` is the decided copy.
        pub rx_deliver: Signal<In, Bit>,
        pub rx_port: Signal<In, Bits<2>>,
        /// A leader decision, in the first beat of its frame on `l_*`, whose UDP length is
        /// `lead_ulen` (frame length - 34).
        pub lead_load: Signal<In, Bit>,
        pub lead_ulen: Signal<In, Bits<16>>,
        /// Config: the node's MAC (most significant byte first on the wire), IPv4 address and
        /// UDP source port; the host's MAC, IPv4 address and UDP port; the IPv4 TTL (register
        /// `ttl`).
        pub src_mac: Signal<In, Bits<48>>,
        pub src_ip: Signal<In, Bits<32>>,
        pub src_port: Signal<In, Bits<16>>,
        pub host_mac: Signal<In, Bits<48>>,
        pub host_ip: Signal<In, Bits<32>>,
        pub host_port: Signal<In, Bits<16>>,
        pub ttl: Signal<In, Bits<8>>,
        /// The output FIFO behind the host stream has room for a whole frame (from registers):
        /// a frame starts only then (`nc_engine`; tie high where the host stream's receiver
        /// takes a beat every cycle). Without room a decision waits in the pending slot, or is
        /// dropped (`drop`) when that is taken too.
        pub room: Signal<In, Bit>,
        /// The host frame out.
        pub h_data: Signal<Out, Bits<64>>,
        pub h_keep: Signal<Out, Bits<8>>,
        pub h_valid: Signal<Out, Bit>,
        pub h_last: Signal<Out, Bit>,
        /// A frame streams or one waits.
        pub busy: Signal<Out, Bit>,
        /// A decision was dropped this cycle (stream and pending slot taken, or it does not fit).
        pub drop: Signal<Out, Bit>,
        cap0: Capture = Capture::new(false),
        cap1: Capture = Capture::new(false),
        cap2: Capture = Capture::new(false),
        cap3: Capture = Capture::new(false),
        cap4: Capture = Capture::new(true),
        r_streaming: DFF<Bit>,
        r_beat: DFF<Bits<8>>,
        r_lastidx: DFF<Bits<16>>,
        /// The streaming frame's next beat is its last (registered a beat ahead, so that no
        /// comparison precedes the start decision and the RAM read address).
        r_at_last: DFF<Bit>,
        beat_nx: Signal<Local, Bits<8>>,
        beat16: ZeroExtend<8, 16>,
        r_lastkeep: DFF<Bits<8>>,
        r_ulen: DFF<Bits<16>>,
        r_src: DFF<Bits<3>>,
        r_buf: DFF<Bits<2>>,
        r_live: DFF<Bit>,
        r_ldata: DFF<Bits<64>>,
        r_asrc: DFF<Bits<16>>,
        r_adst: DFF<Bits<16>>,
        r_a3: DFF<Bits<16>>,
        r_asum: DFF<Bits<16>>,
        r_csum: DFF<Bits<16>>,
        r_p_valid: DFF<Bit>,
        r_p_src: DFF<Bits<3>>,
        r_p_buf: DFF<Bits<2>>,
        r_p_ulen: DFF<Bits<16>>,
        rx_buf: Signal<Local, Bits<2>>,
        rx_ulen: Signal<Local, Bits<16>>,
        rx_fwd: Signal<Local, Bit>,
        rx_src: Signal<Local, Bits<3>>,
        rx_ok: Signal<Local, Bit>,
        lead_ok: Signal<Local, Bit>,
        last_beat: Signal<Local, Bit>,
        can_start: Signal<Local, Bit>,
        start: Signal<Local, Bit>,
        s_src: Signal<Local, Bits<3>>,
        s_buf: Signal<Local, Bits<2>>,
        s_ulen: Signal<Local, Bits<16>>,
        s_live: Signal<Local, Bit>,
        p_load: Signal<Local, Bit>,
        p_free: Signal<Local, Bit>,
        p_src: Signal<Local, Bits<3>>,
        p_buf: Signal<Local, Bits<2>>,
        p_ulen: Signal<Local, Bits<16>>,
        st_used: Signal<Local, Bits<4>>,
        p_used: Signal<Local, Bits<4>>,
        sx0: Signal<Local, Bits<4>>,
        px0: Signal<Local, Bits<4>>,
        sx1: Signal<Local, Bits<4>>,
        px1: Signal<Local, Bits<4>>,
        sx2: Signal<Local, Bits<4>>,
        px2: Signal<Local, Bits<4>>,
        sx3: Signal<Local, Bits<4>>,
        px3: Signal<Local, Bits<4>>,
        sx4: Signal<Local, Bits<4>>,
        px4: Signal<Local, Bits<4>>,
        rd_bufw: ZeroExtend<2, ADDR_BITS>,
        rd_beatw: ZeroExtend<BEAT_BITS, ADDR_BITS>,
        raddr: Signal<Local, Bits<ADDR_BITS>>,
        body: Signal<Local, Bits<64>>,
        hbeat: Signal<Local, Bits<64>>,
        /// The started frame's last beat (index, keep), picked from the candidates' (`fe_*`).
        s_lastidx: Signal<Local, Bits<16>>,
        s_lastkeep: Signal<Local, Bits<8>>,
        fe_p: FrameEnd,
        fe_l: FrameEnd,
        fe0: FrameEnd,
        fe1: FrameEnd,
        fe2: FrameEnd,
        fe3: FrameEnd,
        /// The follower's copy's (`fe0`..`fe3` picked by `rx_port`, as `rx_ulen`).
        rx_lastidx: Signal<Local, Bits<16>>,
        rx_lastkeep: Signal<Local, Bits<8>>,
        total_len: Signal<Local, Bits<16>>,
        boff: Signal<Local, Bits<9>>,
        add_cs1: OnesAdd,
        cs1c: Signal<Local, Bits<16>>,
        add_cs1t: OnesAdd,
        cs1tc: Signal<Local, Bits<16>>,
        add_cs2: OnesAdd,
        cs2c: Signal<Local, Bits<16>>,
        add_cs3: OnesAdd,
        cs3c: Signal<Local, Bits<16>>,
        add_cs4: OnesAdd,
        cs4c: Signal<Local, Bits<16>>,
        add_cs5: OnesAdd,
        cs5c: Signal<Local, Bits<16>>,
        beatw: ZeroExtend<8, 9>,
        ttlw: ZeroExtend<8, 16>,
        hdr: HostHeader = HostHeader::new(header_map()),
        xh: ZeroExtend<336, 384>,
        k0_2: Constant<Bits<2>> = k(0),
        k1_2: Constant<Bits<2>> = k(1),
        k2_2: Constant<Bits<2>> = k(2),
        k_lead: Constant<Bits<3>> = k(4),
        k0_3s: Constant<Bits<3>> = k(0),
        k1_3s: Constant<Bits<3>> = k(1),
        k2_3s: Constant<Bits<3>> = k(2),
        k3_3s: Constant<Bits<3>> = k(3),
        k1_4: Constant<Bits<4>> = k(1),
        k0_4: Constant<Bits<4>> = k(0),
        k0_8: Constant<Bits<8>> = k(0),
        k1_8: Constant<Bits<8>> = k(1),
        k_ff8: Constant<Bits<8>> = k(0xFF),
        k8_16: Constant<Bits<16>> = k(8),
        k1_16: Constant<Bits<16>> = k(1),
        k6_9: Constant<Bits<9>> = k(6),
        k_bb: Constant<Bits<ADDR_BITS>> = k(BEAT_BITS as u64),
        k_hdr_beats: Constant<Bits<9>> = k(frame::PAYLOAD_OFFSET.div_ceil(8) as u64),
        k_mixed_beat: Constant<Bits<8>> = k((frame::PAYLOAD_OFFSET / 8) as u64),
        k_ip_len: Constant<Bits<16>> = k(frame::IPV4_LEN as u64),
        k_ipsum: Constant<Bits<16>> = k(ip_const_sum()),
        k_mixed_mask: Constant<Bits<64>> = k(u64::MAX << (8 * (frame::PAYLOAD_OFFSET % 8))),
        k_ones64: Constant<Bits<64>> = k(u64::MAX),
        k0_64: Constant<Bits<64>> = k(0),
    }
}

impl Default for HostGen {
    fn default() -> Self {
        assert!(
            Layout::probe().ip_csum.off >= 8,
            "the registered checksum is right from beat 1 on: it must not be in beat 0"
        );
        assert_eq!(
            frame::PAYLOAD_OFFSET,
            42,
            "the payload starts in lane 2 of beat 5"
        );
        Self::build()
    }
}

impl Logic for HostGen {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            r_streaming,
            r_beat,
            r_lastidx,
            r_at_last,
            r_lastkeep,
            r_ulen,
            r_src,
            r_buf,
            r_live,
            r_ldata,
            r_asrc,
            r_adst,
            r_a3,
            r_asum,
            r_csum,
            r_p_valid,
            r_p_src,
            r_p_buf,
            r_p_ulen
        );
        clock!(self, clock, cap0, cap1, cap2, cap3, cap4);
        // Capture: every tree's stream and the leader's.
        self.cap0.data.next = self.t0_data.val();
        self.cap0.keep.next = self.t0_keep.val();
        self.cap0.valid.next = self.t0_valid.val();
        self.cap0.last.next = self.t0_last.val();
        self.cap1.data.next = self.t1_data.val();
        self.cap1.keep.next = self.t1_keep.val();
        self.cap1.valid.next = self.t1_valid.val();
        self.cap1.last.next = self.t1_last.val();
        self.cap2.data.next = self.t2_data.val();
        self.cap2.keep.next = self.t2_keep.val();
        self.cap2.valid.next = self.t2_valid.val();
        self.cap2.last.next = self.t2_last.val();
        self.cap3.data.next = self.t3_data.val();
        self.cap3.keep.next = self.t3_keep.val();
        self.cap3.valid.next = self.t3_valid.val();
        self.cap3.last.next = self.t3_last.val();
        self.cap4.data.next = self.l_data.val();
        self.cap4.keep.next = self.l_keep.val();
        self.cap4.valid.next = self.l_valid.val();
        self.cap4.last.next = self.l_last.val();
        self.cap0.lead_ulen.next = self.lead_ulen.val();
        self.cap1.lead_ulen.next = self.lead_ulen.val();
        self.cap2.lead_ulen.next = self.lead_ulen.val();
        self.cap3.lead_ulen.next = self.lead_ulen.val();
        self.cap4.lead_ulen.next = self.lead_ulen.val();
        self.r_ldata.d.next = self.l_data.val();
        // The buffers the stream and the pending slot read, per source.
        if self.r_streaming.q.val() {
            self.st_used.next = self.k1_4.val() << self.r_buf.q.val();
        } else {
            self.st_used.next = self.k0_4.val();
        }
        if self.r_p_valid.q.val() {
            self.p_used.next = self.k1_4.val() << self.r_p_buf.q.val();
        } else {
            self.p_used.next = self.k0_4.val();
        }
        if self.r_src.q.val() == self.k0_3s.val() {
            self.sx0.next = self.st_used.val();
        } else {
            self.sx0.next = self.k0_4.val();
        }
        if self.r_p_src.q.val() == self.k0_3s.val() {
            self.px0.next = self.p_used.val();
        } else {
            self.px0.next = self.k0_4.val();
        }
        self.cap0.used.next = self.sx0.val() | self.px0.val();
        if self.r_src.q.val() == self.k1_3s.val() {
            self.sx1.next = self.st_used.val();
        } else {
            self.sx1.next = self.k0_4.val();
        }
        if self.r_p_src.q.val() == self.k1_3s.val() {
            self.px1.next = self.p_used.val();
        } else {
            self.px1.next = self.k0_4.val();
        }
        self.cap1.used.next = self.sx1.val() | self.px1.val();
        if self.r_src.q.val() == self.k2_3s.val() {
            self.sx2.next = self.st_used.val();
        } else {
            self.sx2.next = self.k0_4.val();
        }
        if self.r_p_src.q.val() == self.k2_3s.val() {
            self.px2.next = self.p_used.val();
        } else {
            self.px2.next = self.k0_4.val();
        }
        self.cap2.used.next = self.sx2.val() | self.px2.val();
        if self.r_src.q.val() == self.k3_3s.val() {
            self.sx3.next = self.st_used.val();
        } else {
            self.sx3.next = self.k0_4.val();
        }
        if self.r_p_src.q.val() == self.k3_3s.val() {
            self.px3.next = self.p_used.val();
        } else {
            self.px3.next = self.k0_4.val();
        }
        self.cap3.used.next = self.sx3.val() | self.px3.val();
        if self.r_src.q.val() == self.k_lead.val() {
            self.sx4.next = self.st_used.val();
        } else {
            self.sx4.next = self.k0_4.val();
        }
        if self.r_p_src.q.val() == self.k_lead.val() {
            self.px4.next = self.p_used.val();
        } else {
            self.px4.next = self.k0_4.val();
        }
        self.cap4.used.next = self.sx4.val() | self.px4.val();
        // The follower's copy: the last completed frame of tree rx_port.
        self.fe0.ulen.next = self.cap0.pick_ulen.val();
        self.fe1.ulen.next = self.cap1.pick_ulen.val();
        self.fe2.ulen.next = self.cap2.pick_ulen.val();
        self.fe3.ulen.next = self.cap3.pick_ulen.val();
        if self.rx_port.val() == self.k0_2.val() {
            self.rx_buf.next = self.cap0.pick.val();
            self.rx_ulen.next = self.cap0.pick_ulen.val();
            self.rx_lastidx.next = self.fe0.lastidx.val();
            self.rx_lastkeep.next = self.fe0.lastkeep.val();
            self.rx_fwd.next = self.cap0.pick_ok.val();
            self.rx_src.next = self.k0_3s.val();
        } else if self.rx_port.val() == self.k1_2.val() {
            self.rx_buf.next = self.cap1.pick.val();
            self.rx_ulen.next = self.cap1.pick_ulen.val();
            self.rx_lastidx.next = self.fe1.lastidx.val();
            self.rx_lastkeep.next = self.fe1.lastkeep.val();
            self.rx_fwd.next = self.cap1.pick_ok.val();
            self.rx_src.next = self.k1_3s.val();
        } else if self.rx_port.val() == self.k2_2.val() {
            self.rx_buf.next = self.cap2.pick.val();
            self.rx_ulen.next = self.cap2.pick_ulen.val();
            self.rx_lastidx.next = self.fe2.lastidx.val();
            self.rx_lastkeep.next = self.fe2.lastkeep.val();
            self.rx_fwd.next = self.cap2.pick_ok.val();
            self.rx_src.next = self.k2_3s.val();
        } else {
            self.rx_buf.next = self.cap3.pick.val();
            self.rx_ulen.next = self.cap3.pick_ulen.val();
            self.rx_lastidx.next = self.fe3.lastidx.val();
            self.rx_lastkeep.next = self.fe3.lastkeep.val();
            self.rx_fwd.next = self.cap3.pick_ok.val();
            self.rx_src.next = self.k3_3s.val();
        }
        self.rx_ok.next = self.rx_deliver.val() && self.rx_fwd.val();
        self.lead_ok.next = self.lead_load.val() && self.cap4.pick_ok.val();
        // Who goes where: the pending decision first, then the leader's, then the follower's;
        // the first takes the stream if it is free (idle or in its last beat), the next the
        // pending slot, any other is dropped. A leader's frame that starts in its own first beat
        // streams *live* (its beats from `l_data`, one cycle behind); any other is read back from
        // its capture buffer (the leader's is being written a beat ahead of the read).
        self.last_beat.next = self.r_streaming.q.val() && self.r_at_last.q.val();
        self.can_start.next =
            (!self.r_streaming.q.val() || self.last_beat.val()) && self.room.val();
        self.drop.next = (self.lead_load.val() && !self.lead_ok.val())
            || (self.rx_deliver.val() && !self.rx_ok.val());
        self.start.next = false;
        self.s_src.next = self.r_p_src.q.val();
        self.s_buf.next = self.r_p_buf.q.val();
        self.s_ulen.next = self.r_p_ulen.q.val();
        self.fe_p.ulen.next = self.r_p_ulen.q.val();
        self.fe_l.ulen.next = self.cap4.pick_ulen.val();
        self.s_lastidx.next = self.fe_p.lastidx.val();
        self.s_lastkeep.next = self.fe_p.lastkeep.val();
        self.s_live.next = false;
        self.p_load.next = false;
        self.p_free.next = false;
        self.p_src.next = self.k_lead.val();
        self.p_buf.next = self.cap4.pick.val();
        self.p_ulen.next = self.cap4.pick_ulen.val();
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
                    self.p_src.next = self.rx_src.val();
                    self.p_buf.next = self.rx_buf.val();
                    self.p_ulen.next = self.rx_ulen.val();
                } else {
                    self.p_free.next = true;
                }
            } else if self.lead_ok.val() {
                self.start.next = true;
                self.s_src.next = self.k_lead.val();
                self.s_buf.next = self.cap4.pick.val();
                self.s_ulen.next = self.cap4.pick_ulen.val();
                self.s_lastidx.next = self.fe_l.lastidx.val();
                self.s_lastkeep.next = self.fe_l.lastkeep.val();
                self.s_live.next = true;
                if self.rx_ok.val() {
                    self.p_load.next = true;
                    self.p_src.next = self.rx_src.val();
                    self.p_buf.next = self.rx_buf.val();
                    self.p_ulen.next = self.rx_ulen.val();
                }
            } else if self.rx_ok.val() {
                self.start.next = true;
                self.s_src.next = self.rx_src.val();
                self.s_buf.next = self.rx_buf.val();
                self.s_ulen.next = self.rx_ulen.val();
                self.s_lastidx.next = self.rx_lastidx.val();
                self.s_lastkeep.next = self.rx_lastkeep.val();
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
            self.p_src.next = self.rx_src.val();
            self.p_buf.next = self.rx_buf.val();
            self.p_ulen.next = self.rx_ulen.val();
        }
        if self.p_load.val() {
            self.r_p_valid.d.next = true;
            self.r_p_src.d.next = self.p_src.val();
            self.r_p_buf.d.next = self.p_buf.val();
            self.r_p_ulen.d.next = self.p_ulen.val();
        } else if self.p_free.val() {
            self.r_p_valid.d.next = false;
        }
        self.busy.next = self.r_streaming.q.val() || self.r_p_valid.q.val();
        // The stream: a started frame's source, buffer and UDP length are latched, and its last
        // beat's index and keep, computed from each candidate's UDP length (`FrameEnd`).
        self.beat_nx.next = self.r_beat.q.val() + self.k1_8.val();
        self.beat16.narrow.next = self.r_beat.q.val();
        if self.start.val() {
            self.r_streaming.d.next = true;
            self.r_beat.d.next = self.k0_8.val();
            self.r_lastidx.d.next = self.s_lastidx.val();
            // A frame has at least 5 beats (42 header bytes): beat 0 is never its last.
            self.r_at_last.d.next = false;
            self.r_lastkeep.d.next = self.s_lastkeep.val();
            self.r_ulen.d.next = self.s_ulen.val();
            self.r_src.d.next = self.s_src.val();
            self.r_buf.d.next = self.s_buf.val();
            self.r_live.d.next = self.s_live.val();
        } else if self.last_beat.val() {
            self.r_streaming.d.next = false;
            self.r_at_last.d.next = false;
        } else if self.r_streaming.q.val() {
            self.r_beat.d.next = self.beat_nx.val();
            self.r_at_last.d.next =
                (self.beat16.wide.val() + self.k1_16.val()) == self.r_lastidx.q.val();
        }
        // The read address: the streaming frame's next beat (the RAM read is registered: the
        // data come with the beat). In a frame's start cycle it reads for beat 0 from the frame
        // before's buffer: beats 0..4 are regenerated header bytes, so that read is never used,
        // and `start` stays out of the address (rtl/README "Place and route").
        self.rd_bufw.narrow.next = self.r_buf.q.val();
        self.rd_beatw.narrow.next = self.beat_nx.val();
        // Beats are below BUF_BEATS: the address is the buffer number above the beat, no addition.
        self.raddr.next = (self.rd_bufw.wide.val() << self.k_bb.val()) | self.rd_beatw.wide.val();
        self.cap0.raddr.next = self.raddr.val();
        self.cap1.raddr.next = self.raddr.val();
        self.cap2.raddr.next = self.raddr.val();
        self.cap3.raddr.next = self.raddr.val();
        self.cap4.raddr.next = self.raddr.val();
        // The RAMs' read data come late (a block RAM's clock to out): one parallel pick of the
        // five by `r_src` (a `case`, not a chain of comparisons: four LUT levels behind the
        // RAMs on `880373a`, routed, 10.75 ns into the host FIFO), then the live stream.
        match self.r_src.q.val().index() {
            0 => self.body.next = self.cap0.rdata.val(),
            1 => self.body.next = self.cap1.rdata.val(),
            2 => self.body.next = self.cap2.rdata.val(),
            3 => self.body.next = self.cap3.rdata.val(),
            _ => self.body.next = self.cap4.rdata.val(),
        }
        if self.r_live.q.val() {
            self.body.next = self.r_ldata.q.val();
        }
        // The IPv4 checksum, pipelined (one's-complement adds with end-around carry): the
        // address words' sums (the source's with the TTL word's TTL byte) are registered, then
        // their sum, then that plus the constant words' sum (the config inputs change only
        // while the node is disabled, so they are settled three cycles later), then +
        // total_len into `r_csum`, which follows `r_ulen` one cycle later: the checksum is in
        // beat 3, and a frame's `r_ulen` is set before its beat 0.
        self.add_cs1.a.next = self.src_ip.val().get_bits::<16>(16);
        self.add_cs1.b.next = self.src_ip.val().get_bits::<16>(0);
        self.cs1c.next = self.add_cs1.out.val();
        self.ttlw.narrow.next = self.ttl.val();
        self.add_cs1t.a.next = self.cs1c.val();
        self.add_cs1t.b.next = self.ttlw.wide.val() << self.k8_16.val();
        self.cs1tc.next = self.add_cs1t.out.val();
        self.r_asrc.d.next = self.cs1tc.val();
        self.add_cs2.a.next = self.host_ip.val().get_bits::<16>(16);
        self.add_cs2.b.next = self.host_ip.val().get_bits::<16>(0);
        self.cs2c.next = self.add_cs2.out.val();
        self.r_adst.d.next = self.cs2c.val();
        self.add_cs3.a.next = self.r_asrc.q.val();
        self.add_cs3.b.next = self.r_adst.q.val();
        self.cs3c.next = self.add_cs3.out.val();
        self.r_a3.d.next = self.cs3c.val();
        self.add_cs4.a.next = self.r_a3.q.val();
        self.add_cs4.b.next = self.k_ipsum.val();
        self.cs4c.next = self.add_cs4.out.val();
        self.r_asum.d.next = self.cs4c.val();
        self.total_len.next = self.r_ulen.q.val() + self.k_ip_len.val();
        self.add_cs5.a.next = self.r_asum.q.val();
        self.add_cs5.b.next = self.total_len.val();
        self.cs5c.next = self.add_cs5.out.val();
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
        // Beats 0..4 are header bytes, beat 5 header bytes 40..41 and payload bytes, the rest
        // the captured frame's bytes.
        self.beatw.narrow.next = self.r_beat.q.val();
        self.boff.next = self.beatw.wide.val() << self.k6_9.val();
        if self.beatw.wide.val() < self.k_hdr_beats.val() {
            self.hbeat.next = self.xh.wide.val().get_bits::<64>(self.boff.val().index());
        } else {
            self.hbeat.next = self.k0_64.val();
        }
        if self.r_beat.q.val() < self.k_mixed_beat.val() {
            self.h_data.next = self.hbeat.val();
        } else if self.r_beat.q.val() == self.k_mixed_beat.val() {
            self.h_data.next = self.hbeat.val() | (self.body.val() & self.k_mixed_mask.val());
        } else {
            self.h_data.next = self.body.val() & self.k_ones64.val();
        }
        self.h_valid.next = self.r_streaming.q.val();
        self.h_last.next = self.last_beat.val();
        if self.last_beat.val() {
            self.h_keep.next = self.r_lastkeep.q.val();
        } else {
            self.h_keep.next = self.k_ff8.val();
        }
    }
}
