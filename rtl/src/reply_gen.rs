//! `reply_gen`: the client reply frames of a node — REPLY_OK for every decided request (the
//! `ok_*` stream of `nc_core`, one entry per cycle) and REPLY_NOT_LEADER for a request refused
//! by a node that is not leader (`nl_*`) — on one 64-bit output stream (AXI-Stream shape:
//! `r_data`, `r_keep`, `r_valid`, `r_last`, and `r_ready`: a beat offered stays offered until a
//! cycle with `r_ready` takes it; with `r_ready` always high the receiver takes a beat every
//! cycle; byte x of a beat is bits 8x+7..8x, as in `pkt_gen` and `pkt_parser`).
//!
//! Ports:
//! - `ok_valid`, `ok_client`, `ok_seq`, `ok_instance`, `ok_index` and the client's address
//!   `ok_mac`, `ok_ip`, `ok_port`: one OK command (at most one per cycle);
//! - `nl_valid`, `nl_client`, `nl_seq`, `nl_leader`, `nl_epoch`, `nl_mac`, `nl_ip`, `nl_port`:
//!   one NOT_LEADER command (at most one per cycle, possibly with an OK in the same cycle);
//! - configuration `src_mac`, `src_ip`, `src_port` (the client port), `cluster`, `sender` (this
//!   node's id), `ttl` (register `ttl`): MAC/IP as integers whose most significant byte goes first on the wire. They
//!   are read while a frame streams, so they must not change while `busy` (they come from
//!   registers that are written only while the node is disabled);
//! - `r_data`, `r_keep`, `r_valid`, `r_last`: the frames; `busy`: a frame is streaming or
//!   queued; `drop_ok` / `drop_nl`: this cycle's OK / NOT_LEADER command found the queue full
//!   and was dropped (its frame is never sent; the queued ones are untouched).
//!
//! Commands are queued in arrival order (an OK before a NOT_LEADER of the same cycle) in a
//! queue of `2^A` entries (default 8) that includes the frame being streamed; a frame's last
//! beat frees its entry in the cycle it is taken. The head of the queue streams one beat per
//! cycle while `r_ready` is high, and the next frame's first beat follows its last beat in the next cycle (back to back). A
//! command that arrives at an idle generator has its first beat valid in the next cycle (the
//! queue is a register file with a combinational read port, see [`QueueRam`]).
//!
//! Every frame is `proto::frame::emit_udp` of the packet `proto::node::Node` sends
//! (`Packet::ReplyOk` / `Packet::ReplyNotLeader`, `to_vec(cluster_id, node_id)`) with the
//! UDP checksum 0 ("none"). Both replies are [`FRAME_LEN`] = 78 bytes, above Ethernet's
//! 60-byte minimum, so there is no padding question (`emit_udp` does not pad). The constant
//! bytes are copied from frames emitted by proto, the header fields are placed by
//! [`crate::layout::Layout`], the reply body fields by offsets probed here the same way (two
//! packets differing in one field), and the IPv4 checksum is a constant partial sum plus the
//! source and destination addresses and the TTL, in two registered halves (constant, `src_ip`
//! and TTL every cycle, then + the head's destination: the checksum is needed in beat 3 only,
//! and the head does not change while its frame streams), which keeps the adders off the
//! output path.

use proto::frame::{self, UdpMeta};
use proto::wire::{self, Packet, ReplyNotLeader, ReplyOk};
use rust_hdl::prelude::*;

use crate::layout::{Field, Layout, mac_bytes};
use crate::prim::{ByteSrc, OnesAdd, ReplyNlBytes, ReplyOkBytes, ZeroExtend};

/// Bytes of a reply frame (both kinds): Ethernet + IPv4 + UDP headers, the common header and
/// the fixed-size reply body.
pub const FRAME_LEN: usize = frame::PAYLOAD_OFFSET + wire::HEADER_LEN + wire::REPLY_LEN;
/// Bits of a reply frame.
pub const FRAME_BITS: usize = 8 * FRAME_LEN;
/// Beats of a reply frame on the 64-bit bus.
pub const BEATS: usize = FRAME_LEN.div_ceil(8);
/// The frame image rounded up to whole beats.
pub const IMG_BITS: usize = 64 * BEATS;
/// Bits of a bit index into the image (exactly, as Verilator's WIDTH lint wants).
const IDX_BITS: usize = (usize::BITS - (IMG_BITS - 1).leading_zeros()) as usize;

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
}

/// The values of every variable field of one reply frame.
#[derive(Clone, Copy, Debug)]
pub struct ReplyFields {
    pub src_mac: u64,
    pub src_ip: u32,
    pub src_port: u16,
    pub dst_mac: u64,
    pub dst_ip: u32,
    pub dst_port: u16,
    pub cluster: u32,
    pub sender: u8,
    pub ttl: u8,
}

/// The frame proto emits for `packet` (UDP checksum as proto computes it).
pub fn emit(f: &ReplyFields, packet: &[u8]) -> Vec<u8> {
    let meta = UdpMeta {
        src_mac: mac_bytes(f.src_mac),
        dst_mac: mac_bytes(f.dst_mac),
        src_ip: f.src_ip.to_be_bytes(),
        dst_ip: f.dst_ip.to_be_bytes(),
        src_port: f.src_port,
        dst_port: f.dst_port,
        ttl: f.ttl,
    };
    let mut v = vec![0u8; frame::PAYLOAD_OFFSET + packet.len()];
    frame::emit_udp(&meta, packet, &mut v).expect("reply frame fits");
    v
}

/// REPLY_OK packet as the model emits it (`to_vec(cluster_id, node_id)`).
pub fn ok_packet(cluster: u32, sender: u8, r: ReplyOk) -> Vec<u8> {
    Packet::ReplyOk(r).to_vec(cluster, sender).expect("valid")
}

/// REPLY_NOT_LEADER packet as the model emits it (`to_vec(cluster_id, node_id)`).
pub fn nl_packet(cluster: u32, sender: u8, r: ReplyNotLeader) -> Vec<u8> {
    Packet::ReplyNotLeader(r)
        .to_vec(cluster, sender)
        .expect("valid")
}

const FIELDS_A: ReplyFields = ReplyFields {
    src_mac: 0x0211_2233_4455,
    src_ip: 0x0A01_0203,
    src_port: 0x1234,
    dst_mac: 0x0266_7788_99AA,
    dst_ip: 0x0A04_0506,
    dst_port: 0x5678,
    cluster: 0x0102_0304,
    sender: 1,
    ttl: 64,
};
const FIELDS_B: ReplyFields = ReplyFields {
    src_mac: 0xFDEE_DDCC_BBAA,
    src_ip: 0xF5FE_FDFC,
    src_port: 0xEDCB,
    dst_mac: 0xFD99_8877_6655,
    dst_ip: 0xF5FB_FAF9,
    dst_port: 0xA987,
    cluster: 0xFEFD_FCFB,
    sender: 0xFE,
    ttl: 0xF5,
};
const OK_A: ReplyOk = ReplyOk {
    client_id: 1,
    seq: 1,
    instance: 1,
    index: 1,
};
const NL_A: ReplyNotLeader = ReplyNotLeader {
    client_id: 1,
    seq: 1,
    leader: 1,
    epoch: 1,
};

/// The bytes where two packets differ, as a frame field.
fn diff(a: &[u8], b: &[u8]) -> Field {
    assert_eq!(a.len(), b.len());
    let first = (0..a.len()).find(|&i| a[i] != b[i]).expect("differ");
    let last = (0..a.len()).rev().find(|&i| a[i] != b[i]).expect("differ");
    Field {
        off: frame::PAYLOAD_OFFSET + first,
        len: last - first + 1,
    }
}

/// Frame offsets of the REPLY_OK body fields, probed from proto.
#[derive(Clone, Copy, Debug)]
pub struct OkLayout {
    pub client: Field,
    pub index: Field,
    pub seq: Field,
    pub instance: Field,
}

/// Frame offsets of the REPLY_NOT_LEADER body fields, probed from proto.
#[derive(Clone, Copy, Debug)]
pub struct NlLayout {
    pub client: Field,
    pub leader: Field,
    pub seq: Field,
    pub epoch: Field,
}

impl OkLayout {
    pub fn probe() -> Self {
        let p = |r: ReplyOk| ok_packet(5, 2, r);
        let a = p(OK_A);
        OkLayout {
            client: diff(
                &a,
                &p(ReplyOk {
                    client_id: !1,
                    ..OK_A
                }),
            ),
            index: diff(&a, &p(ReplyOk { index: !1, ..OK_A })),
            seq: diff(&a, &p(ReplyOk { seq: !1, ..OK_A })),
            instance: diff(
                &a,
                &p(ReplyOk {
                    instance: !1,
                    ..OK_A
                }),
            ),
        }
    }
}

impl NlLayout {
    pub fn probe() -> Self {
        let p = |r: ReplyNotLeader| nl_packet(5, 2, r);
        let a = p(NL_A);
        NlLayout {
            client: diff(
                &a,
                &p(ReplyNotLeader {
                    client_id: !1,
                    ..NL_A
                }),
            ),
            leader: diff(&a, &p(ReplyNotLeader { leader: !1, ..NL_A })),
            seq: diff(&a, &p(ReplyNotLeader { seq: !1, ..NL_A })),
            epoch: diff(&a, &p(ReplyNotLeader { epoch: !1, ..NL_A })),
        }
    }
}

fn place(map: &mut [ByteSrc], f: Field, input: usize) {
    for j in 0..f.len {
        map[f.off + j] = ByteSrc::Field(input, j);
    }
}

/// Place a 1-byte input in the last (least significant) byte of a wider big-endian field, the
/// other bytes zero (the OK index is 16 bits on the wire, 8 bits at the port).
fn place_low(map: &mut [ByteSrc], f: Field, input: usize) {
    for j in 0..f.len - 1 {
        map[f.off + j] = ByteSrc::Const(0);
    }
    map[f.off + f.len - 1] = ByteSrc::Field(input, 0);
}

/// The header part of both maps (inputs 0..=8 and 13 in the byte maps' order), over `reference`.
fn header_map(reference: &[u8]) -> Vec<ByteSrc> {
    assert_eq!(reference.len(), FRAME_LEN, "reply frame length");
    let l = Layout::probe();
    let mut m: Vec<ByteSrc> = reference.iter().map(|&b| ByteSrc::Const(b)).collect();
    place(&mut m, l.eth_dst, 0);
    place(&mut m, l.eth_src, 1);
    place(&mut m, l.ip_csum, 2);
    place(&mut m, l.ip_src, 3);
    place(&mut m, l.ip_dst, 4);
    place(&mut m, l.udp_src, 5);
    place(&mut m, l.udp_dst, 6);
    for j in 0..l.udp_csum.len {
        m[l.udp_csum.off + j] = ByteSrc::Const(0);
    }
    place(&mut m, l.cluster, 7);
    place(&mut m, l.sender, 8);
    place(&mut m, l.ip_ttl, 13);
    m
}

/// Every byte where two frames with all-different fields differ must come from an input (or
/// be the UDP checksum, sent as 0): nothing variable is left as a constant.
fn check_map(m: &[ByteSrc], a: &[u8], b: &[u8]) {
    let l = Layout::probe();
    for i in 0..a.len() {
        let csum = (l.udp_csum.off..l.udp_csum.off + l.udp_csum.len).contains(&i);
        if a[i] != b[i] && !csum {
            assert!(
                matches!(m[i], ByteSrc::Field(..)),
                "reply frame byte {i} varies but is mapped as a constant"
            );
        }
    }
}

/// The REPLY_OK frame map (inputs in `ReplyOkBytes::INPUTS` order).
pub fn ok_map() -> Vec<ByteSrc> {
    let r = emit(
        &FIELDS_A,
        &ok_packet(FIELDS_A.cluster, FIELDS_A.sender, OK_A),
    );
    let b = emit(
        &FIELDS_B,
        &ok_packet(
            FIELDS_B.cluster,
            FIELDS_B.sender,
            ReplyOk {
                client_id: !1,
                seq: !1,
                instance: !1,
                index: 0xFE,
            },
        ),
    );
    let o = OkLayout::probe();
    let mut m = header_map(&r);
    place(&mut m, o.client, 9);
    place_low(&mut m, o.index, 10);
    place(&mut m, o.seq, 11);
    place(&mut m, o.instance, 12);
    check_map(&m, &r, &b);
    m
}

/// The REPLY_NOT_LEADER frame map (inputs in `ReplyNlBytes::INPUTS` order).
pub fn nl_map() -> Vec<ByteSrc> {
    let r = emit(
        &FIELDS_A,
        &nl_packet(FIELDS_A.cluster, FIELDS_A.sender, NL_A),
    );
    let b = emit(
        &FIELDS_B,
        &nl_packet(
            FIELDS_B.cluster,
            FIELDS_B.sender,
            ReplyNotLeader {
                client_id: !1,
                seq: !1,
                leader: !1,
                epoch: !1,
            },
        ),
    );
    let o = NlLayout::probe();
    let mut m = header_map(&r);
    place(&mut m, o.client, 9);
    place(&mut m, o.leader, 10);
    place(&mut m, o.seq, 11);
    place(&mut m, o.epoch, 12);
    check_map(&m, &r, &b);
    m
}

/// One's-complement sum of the IPv4 header words of a reply frame that do not change: all but
/// the checksum, the two addresses and the TTL byte, whose word counts the protocol byte only
/// (the same for both kinds: same length, protocol).
fn ip_const_sum() -> u64 {
    let l = Layout::probe();
    let sum = |r: &[u8]| {
        let ip = l.ip_vihl.off;
        let skip = |f: Field, off: usize| (f.off..f.off + f.len).contains(&off);
        let mut s: u64 = 0;
        for w in 0..frame::IPV4_LEN / 2 {
            let off = ip + 2 * w;
            if skip(l.ip_csum, off) || skip(l.ip_src, off) || skip(l.ip_dst, off) {
                continue;
            }
            let hi = if off == l.ip_ttl.off { 0 } else { r[off] };
            s += u16::from_be_bytes([hi, r[off + 1]]) as u64;
        }
        while s > 0xFFFF {
            s = (s & 0xFFFF) + (s >> 16);
        }
        s
    };
    let ok = sum(&emit(&FIELDS_A, &ok_packet(1, 1, OK_A)));
    let nl = sum(&emit(&FIELDS_A, &nl_packet(1, 1, NL_A)));
    assert_eq!(ok, nl, "both reply kinds share the IPv4 header");
    ok
}

block! {
    /// A register file of `2^A` words of `W` bits with two write ports (both may write in one
    /// cycle, to different addresses) and one combinational read port: the reply queue. Written by
    /// hand (as the primitives of `prim.rs`) because rust-hdl's `RAM` has one write port and a
    /// registered read, which would delay a frame's first beat by a cycle. A write is seen on
    /// the read port from the next cycle on, as in a plain register file, but it reaches the
    /// array a cycle later: the write ports are registered (one enable flip-flop each, so the
    /// accept decision that drives them fans out to two flip-flops instead of every word's
    /// clock enables), and the read port takes a pending write to its address first.
    pub struct QueueRam<const W: usize, const A: usize>() {
        pub clock: Signal<In, Clock>,
        /// Write port 0.
        pub we0: Signal<In, Bit>,
        pub wa0: Signal<In, Bits<A>>,
        pub wd0: Signal<In, Bits<W>>,
        /// Write port 1 (another address than port 0's when both write).
        pub we1: Signal<In, Bit>,
        pub wa1: Signal<In, Bits<A>>,
        pub wd1: Signal<In, Bits<W>>,
        /// Read address and data (combinational).
        pub ra: Signal<In, Bits<A>>,
        pub rd: Signal<Out, Bits<W>>,
        _mem: Vec<Bits<W>> = vec![Bits::<W>::default(); 1 << A],
        /// The writes of the cycle before (address, data), not yet in `_mem`.
        _pend: [Option<(usize, Bits<W>)>; 2] = [None, None],
    }
}

impl<const W: usize, const A: usize> Default for QueueRam<W, A> {
    fn default() -> Self {
        Self::build()
    }
}

impl<const W: usize, const A: usize> Logic for QueueRam<W, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            for (a, d) in self._pend.iter().flatten() {
                self._mem[*a] = *d;
            }
            self._pend = [
                self.we0
                    .val()
                    .then(|| (self.wa0.val().index(), self.wd0.val())),
                self.we1
                    .val()
                    .then(|| (self.wa1.val().index(), self.wd1.val())),
            ];
        }
        let ra = self.ra.val().index();
        self.rd.next = match self._pend {
            [_, Some((a, d))] if a == ra => d,
            [Some((a, d)), _] if a == ra => d,
            _ => self._mem[ra],
        };
    }
    fn connect(&mut self) {
        self.rd.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "reg [{w}:0] mem [0:{n}];\n\
             reg pwe0, pwe1;\n\
             reg [{a}:0] pwa0, pwa1;\n\
             reg [{w}:0] pwd0, pwd1;\n\
             initial begin\n\
             \x20   pwe0 = 1'b0;\n\
             \x20   pwe1 = 1'b0;\n\
             \x20   pwa0 = {A}'d0;\n\
             \x20   pwa1 = {A}'d0;\n\
             \x20   pwd0 = {W}'d0;\n\
             \x20   pwd1 = {W}'d0;\n\
             end\n\
             always @(posedge clock) begin\n\
             \x20   if (pwe0) mem[pwa0] <= pwd0;\n\
             \x20   if (pwe1) mem[pwa1] <= pwd1;\n\
             \x20   pwe0 <= we0;\n\
             \x20   pwa0 <= wa0;\n\
             \x20   pwd0 <= wd0;\n\
             \x20   pwe1 <= we1;\n\
             \x20   pwa1 <= wa1;\n\
             \x20   pwd1 <= wd1;\n\
             end\n\
             always @(*) begin\n\
             \x20   if (pwe1 && pwa1 == ra) rd = pwd1;\n\
             \x20   else if (pwe0 && pwa0 == ra) rd = pwd0;\n\
             \x20   else rd = mem[ra];\n\
             end",
            w = W - 1,
            n = (1usize << A) - 1,
            a = A - 1,
        ))
    }
}

block! {
    /// The reply generator (`2^A` queue entries; `ReplyGen` = 8).
    pub struct ReplyGen<const A: usize = 3>(last_bytes: usize) {
        /// Clock.
        pub clock: Signal<In, Clock>,
        /// OK command: a decided request's reply (client_id, seq, instance, index in the batch) and
        /// the client's address as it sent the request.
        pub ok_valid: Signal<In, Bit>,
        pub ok_client: Signal<In, Bits<32>>,
        pub ok_seq: Signal<In, Bits<64>>,
        pub ok_instance: Signal<In, Bits<64>>,
        pub ok_index: Signal<In, Bits<8>>,
        pub ok_mac: Signal<In, Bits<48>>,
        pub ok_ip: Signal<In, Bits<32>>,
        pub ok_port: Signal<In, Bits<16>>,
        /// NOT_LEADER command: the refused request (client_id, seq), the leader this node believes
        /// in (or `SENDER_NONE`) and its epoch, and the client's address.
        pub nl_valid: Signal<In, Bit>,
        pub nl_client: Signal<In, Bits<32>>,
        pub nl_seq: Signal<In, Bits<64>>,
        pub nl_leader: Signal<In, Bits<8>>,
        pub nl_epoch: Signal<In, Bits<32>>,
        pub nl_mac: Signal<In, Bits<48>>,
        pub nl_ip: Signal<In, Bits<32>>,
        pub nl_port: Signal<In, Bits<16>>,
        /// Configuration: this node's MAC, IPv4 address and client port, the cluster id, this
        /// node's id and the IPv4 TTL (stable while `busy`).
        pub src_mac: Signal<In, Bits<48>>,
        pub src_ip: Signal<In, Bits<32>>,
        pub src_port: Signal<In, Bits<16>>,
        pub cluster: Signal<In, Bits<32>>,
        pub sender: Signal<In, Bits<8>>,
        pub ttl: Signal<In, Bits<8>>,
        /// The reply frames (AXI-Stream: a beat is taken in a cycle with `r_valid` and
        /// `r_ready`; an offered beat stays offered until taken).
        pub r_data: Signal<Out, Bits<64>>,
        pub r_keep: Signal<Out, Bits<8>>,
        pub r_valid: Signal<Out, Bit>,
        pub r_last: Signal<Out, Bit>,
        pub r_ready: Signal<In, Bit>,
        /// A frame is streaming or queued.
        pub busy: Signal<Out, Bit>,
        /// This cycle's OK / NOT_LEADER command was dropped: the queue was full.
        pub drop_ok: Signal<Out, Bit>,
        pub drop_nl: Signal<Out, Bit>,
        // The queue: one register file per field; `a` holds the instance (OK) or the epoch
        // (NOT_LEADER),
        // `b` the index (OK) or the leader (NOT_LEADER); kind 1 = NOT_LEADER.
        q_kind: QueueRam<1, A>,
        q_client: QueueRam<32, A>,
        q_seq: QueueRam<64, A>,
        q_a: QueueRam<64, A>,
        q_b: QueueRam<8, A>,
        q_mac: QueueRam<48, A>,
        q_ip: QueueRam<32, A>,
        q_port: QueueRam<16, A>,
        r_count: DFF<Bits<8>>,
        /// The queue is full / has one entry free / has two or more free / is not empty.
        r_full: DFF<Bit>,
        r_full1: DFF<Bit>,
        r_has2: DFFWithInit<Bit> = DFFWithInit::new(true),
        r_act: DFF<Bit>,
        r_rp: DFF<Bits<8>>,
        /// The write pointer and its next two values.
        r_wp: DFF<Bits<8>>,
        r_wp1: DFFWithInit<Bits<8>> = DFFWithInit::new(Bits::<8>::from(1u64)),
        r_wp2: DFFWithInit<Bits<8>> = DFFWithInit::new(Bits::<8>::from(2u64)),
        r_beat: DFF<Bits<8>>,
        /// `r_beat` is the last beat's.
        r_blast: DFF<Bit>,
        r_src_sum: DFF<Bits<16>>,
        /// The head's destination address; `r_src_sum` + its high word (`r_cs_hi`) and its low
        /// word beside it (`r_cs_lo`), which the last step adds into `r_csum`.
        r_hip: DFF<Bits<32>>,
        r_cs_hi: DFF<Bits<16>>,
        r_cs_lo: DFF<Bits<16>>,
        r_csum: DFF<Bits<16>>,
        active: Signal<Local, Bit>,
        last: Signal<Local, Bit>,
        at_last: Signal<Local, Bit>,
        acc_ok: Signal<Local, Bit>,
        acc_nl: Signal<Local, Bit>,
        wa1: Signal<Local, Bits<A>>,
        /// Room for a NOT_LEADER (beside this cycle's OK, if one is taken).
        nl_room: Signal<Local, Bit>,
        /// An OK is taken and the head does not leave, or the head leaves and no OK is taken.
        ok_in: Signal<Local, Bit>,
        ok_out: Signal<Local, Bit>,
        wp3: Signal<Local, Bits<8>>,
        wp4: Signal<Local, Bits<8>>,
        cm1: Signal<Local, Bits<8>>,
        cp1: Signal<Local, Bits<8>>,
        cp2: Signal<Local, Bits<8>>,
        boff: Signal<Local, Bits<IDX_BITS>>,
        add_cs_a: OnesAdd,
        cs_b: Signal<Local, Bits<16>>,
        add_cs_c: OnesAdd,
        cs_d: Signal<Local, Bits<16>>,
        add_cs_t: OnesAdd,
        cs_tc: Signal<Local, Bits<16>>,
        add_e: OnesAdd,
        cs_f: Signal<Local, Bits<16>>,
        add_g: OnesAdd,
        cs_h: Signal<Local, Bits<16>>,
        beat_ok: Signal<Local, Bits<64>>,
        beat_nl: Signal<Local, Bits<64>>,
        epochw: ZeroExtend<32, 64>,
        ttlw: ZeroExtend<8, 16>,
        beatw: ZeroExtend<8, IDX_BITS>,
        okb: ReplyOkBytes = ReplyOkBytes::new(ok_map()),
        nlb: ReplyNlBytes = ReplyNlBytes::new(nl_map()),
        xok: ZeroExtend<FRAME_BITS, IMG_BITS>,
        xnl: ZeroExtend<FRAME_BITS, IMG_BITS>,
        k0_1: Constant<Bits<1>> = k(0),
        k1_1: Constant<Bits<1>> = k(1),
        k0_8: Constant<Bits<8>> = k(0),
        k1_8: Constant<Bits<8>> = k(1),
        k2_8: Constant<Bits<8>> = k(2),
        k8_16: Constant<Bits<16>> = k(8),
        k6_idx: Constant<Bits<IDX_BITS>> = k(6),
        k_depth: Constant<Bits<8>> = k(1 << A),
        k_depth1: Constant<Bits<8>> = k((1 << A) - 1),
        k_depth2: Constant<Bits<8>> = k((1 << A) - 2),
        k_depth3: Constant<Bits<8>> = k((1 << A) - 3),
        k_lastbeat: Constant<Bits<8>> = k(BEATS as u64 - 1),
        k_lastkeep: Constant<Bits<8>> = k(0xFF >> (8 - last_bytes)),
        k_ff8: Constant<Bits<8>> = k(0xFF),
        k_ipsum: Constant<Bits<16>> = k(ip_const_sum()),
    }
}

impl<const A: usize> Default for ReplyGen<A> {
    fn default() -> Self {
        assert!((2..=7).contains(&A), "reply_gen: 4 to 128 queue entries");
        // The IPv4 checksum is registered from the queue head: it must not be in beat 0.
        assert!(Layout::probe().ip_csum.off >= 8);
        let last_bytes = FRAME_LEN - 8 * (BEATS - 1);
        Self::build(last_bytes)
    }
}

impl<const A: usize> Logic for ReplyGen<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, r_count, r_full, r_full1, r_has2, r_act, r_rp, r_wp, r_wp1, r_wp2, r_beat,
            r_blast, r_src_sum, r_hip, r_cs_hi, r_cs_lo, r_csum
        );
        self.q_kind.clock.next = self.clock.val();
        self.q_client.clock.next = self.clock.val();
        self.q_seq.clock.next = self.clock.val();
        self.q_a.clock.next = self.clock.val();
        self.q_b.clock.next = self.clock.val();
        self.q_mac.clock.next = self.clock.val();
        self.q_ip.clock.next = self.clock.val();
        self.q_port.clock.next = self.clock.val();
        // Queue control: the head streams while the queue is not empty; its last beat frees its
        // entry in this cycle; an OK is queued before a NOT_LEADER of the same cycle.
        // The queue's occupancy is kept with the flags its accept rules need (`r_full`,
        // `r_full1`, `r_has2`, `r_act`), and the write pointer with its next two values, so
        // that the accept decisions, the two write addresses and the register file's write
        // enables come from registers through a few gates, never through a subtraction and a
        // comparison (rtl/README "Place and route").
        self.active.next = self.r_act.q.val();
        // The head's beat is offered while the queue is not empty and taken with `r_ready`; its
        // last beat taken frees its entry.
        self.at_last.next = self.active.val() && self.r_blast.q.val();
        self.last.next = self.at_last.val() && self.r_ready.val();
        // An OK is taken when an entry is free or the head frees one in this cycle; a NOT_LEADER
        // then when one more is.
        self.acc_ok.next = self.ok_valid.val() && (!self.r_full.q.val() || self.last.val());
        if self.acc_ok.val() {
            self.nl_room.next = self.r_has2.q.val() || (self.r_full1.q.val() && self.last.val());
            self.wa1.next = self.r_wp1.q.val().get_bits::<A>(0);
        } else {
            self.nl_room.next = !self.r_full.q.val() || self.last.val();
            self.wa1.next = self.r_wp.q.val().get_bits::<A>(0);
        }
        self.acc_nl.next = self.nl_valid.val() && self.nl_room.val();
        self.drop_ok.next = self.ok_valid.val() && !self.acc_ok.val();
        self.drop_nl.next = self.nl_valid.val() && !self.acc_nl.val();
        // `acc_nl` enters every register's update last (a NOT_LEADER comes from the core's
        // leadership after this cycle's tick, the latest of the inputs): each update's
        // condition is one gate of `acc_nl` and terms made from the registers, `acc_ok` and
        // `last` alone (no count of the entries taken in between).
        self.wp3.next = self.r_wp2.q.val() + self.k1_8.val();
        self.wp4.next = self.r_wp2.q.val() + self.k2_8.val();
        if self.acc_nl.val() && self.acc_ok.val() {
            self.r_wp.d.next = self.r_wp2.q.val();
            self.r_wp1.d.next = self.wp3.val();
            self.r_wp2.d.next = self.wp4.val();
        } else if self.acc_nl.val() || self.acc_ok.val() {
            self.r_wp.d.next = self.r_wp1.q.val();
            self.r_wp1.d.next = self.r_wp2.q.val();
            self.r_wp2.d.next = self.wp3.val();
        }
        if self.last.val() {
            self.r_rp.d.next = self.r_rp.q.val() + self.k1_8.val();
            self.r_beat.d.next = self.k0_8.val();
            self.r_blast.d.next = false;
        } else if self.active.val() && self.r_ready.val() {
            self.r_beat.d.next = self.r_beat.q.val() + self.k1_8.val();
            self.r_blast.d.next = self.r_beat.q.val() == self.k_lastbeat.val() - self.k1_8.val();
        }
        // The next occupancy: count − last + the entries taken (a change of −1 to +2), each
        // candidate's flags compared on the count itself.
        self.cm1.next = self.r_count.q.val() - self.k1_8.val();
        self.cp1.next = self.r_count.q.val() + self.k1_8.val();
        self.cp2.next = self.r_count.q.val() + self.k2_8.val();
        self.ok_in.next = self.acc_ok.val() && !self.last.val();
        self.ok_out.next = !self.acc_ok.val() && self.last.val();
        // +2: a NOT_LEADER and an OK in, the head staying; +1: a NOT_LEADER with the OK and
        // the head balanced, or an OK in alone; −1: the head out alone.
        if self.acc_nl.val() && self.ok_in.val() {
            self.r_count.d.next = self.cp2.val();
            self.r_full.d.next = self.r_count.q.val() == self.k_depth2.val();
            self.r_full1.d.next = self.r_count.q.val() == self.k_depth3.val();
            self.r_has2.d.next = self.r_count.q.val() < self.k_depth3.val();
            self.r_act.d.next = true;
        } else if !self.acc_nl.val() && self.ok_out.val() {
            self.r_count.d.next = self.cm1.val();
            self.r_full.d.next = false;
            self.r_full1.d.next = self.r_count.q.val() == self.k_depth.val();
            self.r_has2.d.next = self.r_count.q.val() < self.k_depth.val();
            self.r_act.d.next = self.r_count.q.val() != self.k1_8.val();
        } else if (self.acc_nl.val() && !self.ok_out.val())
            || (!self.acc_nl.val() && self.ok_in.val())
        {
            self.r_count.d.next = self.cp1.val();
            self.r_full.d.next = self.r_count.q.val() == self.k_depth1.val();
            self.r_full1.d.next = self.r_count.q.val() == self.k_depth2.val();
            self.r_has2.d.next = self.r_count.q.val() < self.k_depth2.val();
            self.r_act.d.next = true;
        }
        self.busy.next = self.active.val();
        // Queue writes: port 0 takes the OK command, port 1 the NOT_LEADER command.
        self.epochw.narrow.next = self.nl_epoch.val();
        self.q_kind.we0.next = self.acc_ok.val();
        self.q_kind.wa0.next = self.r_wp.q.val().get_bits::<A>(0);
        self.q_kind.wd0.next = self.k0_1.val();
        self.q_kind.we1.next = self.acc_nl.val();
        self.q_kind.wa1.next = self.wa1.val();
        self.q_kind.wd1.next = self.k1_1.val();
        self.q_kind.ra.next = self.r_rp.q.val().get_bits::<A>(0);
        self.q_client.we0.next = self.acc_ok.val();
        self.q_client.wa0.next = self.r_wp.q.val().get_bits::<A>(0);
        self.q_client.wd0.next = self.ok_client.val();
        self.q_client.we1.next = self.acc_nl.val();
        self.q_client.wa1.next = self.wa1.val();
        self.q_client.wd1.next = self.nl_client.val();
        self.q_client.ra.next = self.r_rp.q.val().get_bits::<A>(0);
        self.q_seq.we0.next = self.acc_ok.val();
        self.q_seq.wa0.next = self.r_wp.q.val().get_bits::<A>(0);
        self.q_seq.wd0.next = self.ok_seq.val();
        self.q_seq.we1.next = self.acc_nl.val();
        self.q_seq.wa1.next = self.wa1.val();
        self.q_seq.wd1.next = self.nl_seq.val();
        self.q_seq.ra.next = self.r_rp.q.val().get_bits::<A>(0);
        self.q_a.we0.next = self.acc_ok.val();
        self.q_a.wa0.next = self.r_wp.q.val().get_bits::<A>(0);
        self.q_a.wd0.next = self.ok_instance.val();
        self.q_a.we1.next = self.acc_nl.val();
        self.q_a.wa1.next = self.wa1.val();
        self.q_a.wd1.next = self.epochw.wide.val();
        self.q_a.ra.next = self.r_rp.q.val().get_bits::<A>(0);
        self.q_b.we0.next = self.acc_ok.val();
        self.q_b.wa0.next = self.r_wp.q.val().get_bits::<A>(0);
        self.q_b.wd0.next = self.ok_index.val();
        self.q_b.we1.next = self.acc_nl.val();
        self.q_b.wa1.next = self.wa1.val();
        self.q_b.wd1.next = self.nl_leader.val();
        self.q_b.ra.next = self.r_rp.q.val().get_bits::<A>(0);
        self.q_mac.we0.next = self.acc_ok.val();
        self.q_mac.wa0.next = self.r_wp.q.val().get_bits::<A>(0);
        self.q_mac.wd0.next = self.ok_mac.val();
        self.q_mac.we1.next = self.acc_nl.val();
        self.q_mac.wa1.next = self.wa1.val();
        self.q_mac.wd1.next = self.nl_mac.val();
        self.q_mac.ra.next = self.r_rp.q.val().get_bits::<A>(0);
        self.q_ip.we0.next = self.acc_ok.val();
        self.q_ip.wa0.next = self.r_wp.q.val().get_bits::<A>(0);
        self.q_ip.wd0.next = self.ok_ip.val();
        self.q_ip.we1.next = self.acc_nl.val();
        self.q_ip.wa1.next = self.wa1.val();
        self.q_ip.wd1.next = self.nl_ip.val();
        self.q_ip.ra.next = self.r_rp.q.val().get_bits::<A>(0);
        self.q_port.we0.next = self.acc_ok.val();
        self.q_port.wa0.next = self.r_wp.q.val().get_bits::<A>(0);
        self.q_port.wd0.next = self.ok_port.val();
        self.q_port.we1.next = self.acc_nl.val();
        self.q_port.wa1.next = self.wa1.val();
        self.q_port.wd1.next = self.nl_port.val();
        self.q_port.ra.next = self.r_rp.q.val().get_bits::<A>(0);
        // IPv4 checksum of the head's frame in registered steps: constant words + source
        // address + TTL (configuration: `r_src_sum`); the head's destination address
        // (`r_hip`), + its high word (`r_cs_hi`), + its low word (`r_csum`, used in beat 3,
        // three cycles after the head's entry is first read: the head is stable from beat 0 to
        // the last beat, and beat 3 comes at least three cycles after beat 0).
        // (as a tree: constant + TTL word and the two address halves in parallel, then their
        // sum: two adders deep, like the address sum alone)
        self.ttlw.narrow.next = self.ttl.val();
        self.add_cs_a.a.next = self.k_ipsum.val();
        self.add_cs_a.b.next = self.ttlw.wide.val() << self.k8_16.val();
        self.cs_b.next = self.add_cs_a.out.val();
        self.add_cs_c.a.next = self.src_ip.val().get_bits::<16>(16);
        self.add_cs_c.b.next = self.src_ip.val().get_bits::<16>(0);
        self.cs_d.next = self.add_cs_c.out.val();
        self.add_cs_t.a.next = self.cs_b.val();
        self.add_cs_t.b.next = self.cs_d.val();
        self.cs_tc.next = self.add_cs_t.out.val();
        self.r_src_sum.d.next = self.cs_tc.val();
        self.r_hip.d.next = self.q_ip.rd.val();
        self.add_e.a.next = self.r_src_sum.q.val();
        self.add_e.b.next = self.r_hip.q.val().get_bits::<16>(16);
        self.cs_f.next = self.add_e.out.val();
        self.r_cs_hi.d.next = self.cs_f.val();
        self.r_cs_lo.d.next = self.r_hip.q.val().get_bits::<16>(0);
        self.add_g.a.next = self.r_cs_hi.q.val();
        self.add_g.b.next = self.r_cs_lo.q.val();
        self.cs_h.next = self.add_g.out.val();
        self.r_csum.d.next = !self.cs_h.val();
        // The head's frame, both kinds; the beat is chosen by the head's kind.
        self.okb.dst_mac.next = self.q_mac.rd.val();
        self.okb.src_mac.next = self.src_mac.val();
        self.okb.ip_csum.next = self.r_csum.q.val();
        self.okb.src_ip.next = self.src_ip.val();
        self.okb.dst_ip.next = self.q_ip.rd.val();
        self.okb.src_port.next = self.src_port.val();
        self.okb.dst_port.next = self.q_port.rd.val();
        self.okb.cluster.next = self.cluster.val();
        self.okb.sender.next = self.sender.val();
        self.okb.ttl.next = self.ttl.val();
        self.okb.client.next = self.q_client.rd.val();
        self.okb.index.next = self.q_b.rd.val();
        self.okb.seq.next = self.q_seq.rd.val();
        self.okb.inst.next = self.q_a.rd.val();
        self.nlb.dst_mac.next = self.q_mac.rd.val();
        self.nlb.src_mac.next = self.src_mac.val();
        self.nlb.ip_csum.next = self.r_csum.q.val();
        self.nlb.src_ip.next = self.src_ip.val();
        self.nlb.dst_ip.next = self.q_ip.rd.val();
        self.nlb.src_port.next = self.src_port.val();
        self.nlb.dst_port.next = self.q_port.rd.val();
        self.nlb.cluster.next = self.cluster.val();
        self.nlb.sender.next = self.sender.val();
        self.nlb.ttl.next = self.ttl.val();
        self.nlb.client.next = self.q_client.rd.val();
        self.nlb.leader.next = self.q_b.rd.val();
        self.nlb.seq.next = self.q_seq.rd.val();
        self.nlb.epoch.next = self.q_a.rd.val().get_bits::<32>(0);
        self.xok.narrow.next = self.okb.out.val();
        self.xnl.narrow.next = self.nlb.out.val();
        self.beatw.narrow.next = self.r_beat.q.val();
        self.boff.next = self.beatw.wide.val() << self.k6_idx.val();
        self.beat_ok.next = self.xok.wide.val().get_bits::<64>(self.boff.val().index());
        self.beat_nl.next = self.xnl.wide.val().get_bits::<64>(self.boff.val().index());
        if self.q_kind.rd.val() == self.k1_1.val() {
            self.r_data.next = self.beat_nl.val();
        } else {
            self.r_data.next = self.beat_ok.val();
        }
        self.r_valid.next = self.active.val();
        self.r_last.next = self.at_last.val();
        if self.at_last.val() {
            self.r_keep.next = self.k_lastkeep.val();
        } else if self.active.val() {
            self.r_keep.next = self.k_ff8.val();
        } else {
            self.r_keep.next = self.k0_8.val();
        }
    }
}
