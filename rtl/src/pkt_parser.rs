//! `pkt_parser`: Ethernet II / IPv4 / UDP / Nano-consensus header parser on a 64-bit
//! streaming bus (AXI-Stream shape: `data`, `keep`, `valid`, `last`; `ready` is always high:
//! the parser never stalls). Frame byte `x` is in beat `x / 8`, lane `x % 8` (`data[8l+7:8l]`).
//!
//! The first ten beats (80 bytes: every header field the core needs) are kept; the IPv4 header
//! and UDP checksums are summed as the frame streams, each beat's words (by lane masks
//! registered a beat ahead) into a ones-complement sum kept in carry-save form
//! ([`crate::prim::OnesCsa`]), so that no carry chain runs in any cycle. In the cycle after the
//! last beat, `valid` is high for one cycle with `class` (see `lowi_core::class`) and the
//! fields. Field offsets come from [`crate::layout::Layout::probe`] (proto's emitter), never
//! from a table here; the checksums' lane masks assume Ethernet II and a 20-byte IPv4 header
//! (checked when the parser is built). Frames longer than 65,535 bytes are not supported (the
//! frame length is 16 bits).
//!
//! Checks, in proto's order (`frame::parse_udp`, then `wire::parse`):
//! frame shorter than Ethernet, ether_type not IPv4, fragment, protocol not UDP, UDP port not
//! ours → FOREIGN (not ours: the model's driver never hands such frames over); truncated IPv4
//! header, version/IHL not 4/5 (IPv4 options are not supported), IPv4 total length, header
//! checksum, UDP length, UDP checksum (when not 0) → MALFORMED; then the packet: shorter than 4
//! bytes, magic, version, cluster id → FOREIGN; longer than `wire::MAX_PACKET_LEN` (an
//! oversize batch), shorter than the header, kind, body length (+ the 8-byte tag when `key_id`
//! ≠ 0) → MALFORMED; DECIDE (tree port): body shorter than its header, reserved word,
//! decide_kind, count for the kind, a heartbeat/START with a body, a batch too short for its
//! entries → MALFORMED; REQUEST (client port): entry flags, reserved byte, seq 0, payload length
//! → MALFORMED. Then, as proto does after parsing (issue 18, members only): a tagged packet
//! (`key_id` ≠ 0: the card holds no keys, so its key is always unknown) and, on a tree port, a
//! DECIDE whose `sender` is not `epoch mod node_count` → UNAUTHORIZED. That needs no division:
//! `epoch mod n` ≡ the sum of its eight nibbles' residues `(k · 16^j) mod n`, which a table
//! for `n` holds ([`sender_table`], input `sender_tab`, from a [`SenderTable`] that `nc_engine`
//! shares among its parsers). Each half of the epoch gives two pair sums (< 2n each: the high
//! half from the kept beats, the low half from the bus in the beat that brings it); then their
//! total `s` (< 8n) and `sender + m · n` for m = 0..7 are registered, and the verdict cycle only
//! compares: the sender is the leader iff `sender < n` and `s` is one of them. The verdict
//! still comes one cycle after the last beat. Not
//! checked (documented in rtl/README.md): the inside of a DECIDE's entries, and the bodies of
//! packet kinds the port does not expect (they count as ignored, `class::OTHER`, or as
//! unauthorized when tagged); RECOVER (kind 7) is not a kind the card knows (MALFORMED).

use proto::frame::PAYLOAD_OFFSET;
use proto::wire::{self, DecideKind, Kind};
use rust_hdl::prelude::*;

use crate::layout::Layout;
use crate::lowi_core::{CLASS_BITS, class};
use crate::prim::{ByteSwap, CsaIsFfff, JoinBeats, LaneMask, OnesCsa, Unused, ZeroExtend, val};

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
}

/// Bits of [`sender_table`]: the nibble residues `(k · 16^j) mod n` for the epoch's eight
/// nibbles `j` and `k` = 1..15 (6 bits each, entry `15·j + k − 1`), then `m · n` for `m` = 1..7
/// (9 bits each, from bit [`TAB_MULT`]).
pub const SENDER_TAB_BITS: usize = TAB_MULT + 7 * 9;
/// Where the multiples of `n` start in [`sender_table`].
pub const TAB_MULT: usize = 8 * 15 * 6;

/// What the parsers need of `node_count` (1..=64) to judge a DECIDE's sender against
/// `epoch mod node_count` in a few additions: [`SenderTable`]'s contents for `n`, and what a
/// harness drives `pkt_parser`'s `sender_tab` with. `n` = 0 or above 64 (refused by `csr`) gives
/// the table of `n mod 64` (0 as 64), as `SenderTable` does.
pub fn sender_table(n: u8) -> Bits<SENDER_TAB_BITS> {
    let n = match n % 64 {
        0 => 64u64,
        v => v as u64,
    };
    let mut t = Bits::<SENDER_TAB_BITS>::default();
    for j in 0..8u32 {
        for k in 1..16u64 {
            let r = (k * 16u64.pow(j)) % n;
            t.set_bits::<6>(6 * (15 * j as usize + k as usize - 1), r.into());
        }
    }
    for m in 1..8u64 {
        t.set_bits::<9>(TAB_MULT + 9 * (m as usize - 1), (m * n).into());
    }
    t
}

/// Bits of one ROM row of [`SenderTable`]: the table in eight slices (the last one 97 bits).
const SLICE: usize = SENDER_TAB_BITS.div_ceil(8);
// `SenderTable` writes the last slice's width as a literal (rust-hdl's Verilog needs one).
const _: () = assert!(SENDER_TAB_BITS - 7 * SLICE == 97);

/// `tab` = [`sender_table`]`(node_count)`, kept in eight register slices that a 3-bit counter
/// refreshes one per cycle, without end, from a ROM of 512 rows (node_count mod 64, slice) × 98
/// bits: three block RAMs on an ECP5 (512 × 36 each), where the whole table per row took 21
/// (64 × 783 bits fills an eighth of each). After `node_count` changes, `tab` is the new table
/// within 9 cycles (a mix of the two before). `node_count` changes only while the node is
/// disabled. The parsers that share it (`nc_engine` has one for its five) read flip-flops.
#[derive(LogicBlock)]
pub struct SenderTable {
    pub clock: Signal<In, Clock>,
    /// `node_count` mod 64 (`node_count` is 1..=64: 0 stands for 64).
    pub node_count: Signal<In, Bits<6>>,
    /// The table, for `pkt_parser`'s `sender_tab`.
    pub tab: Signal<Out, Bits<SENDER_TAB_BITS>>,
    rom: SyncROM<Bits<SLICE>, 9>,
    /// The slice read now, and the one whose row the ROM gives now.
    c: DFF<Bits<3>>,
    cd: DFF<Bits<3>>,
    addr: Signal<Local, Bits<9>>,
    n9: ZeroExtend<6, 9>,
    c9: ZeroExtend<3, 9>,
    r0: DFF<Bits<SLICE>>,
    r1: DFF<Bits<SLICE>>,
    r2: DFF<Bits<SLICE>>,
    r3: DFF<Bits<SLICE>>,
    r4: DFF<Bits<SLICE>>,
    r5: DFF<Bits<SLICE>>,
    r6: DFF<Bits<SLICE>>,
    r7: DFF<Bits<{ SENDER_TAB_BITS - 7 * SLICE }>>,
    slices: JoinSlices,
    k1_3: Constant<Bits<3>>,
    k3_9: Constant<Bits<9>>,
    ks: [Constant<Bits<3>>; 8],
}

impl Default for SenderTable {
    fn default() -> Self {
        let tables: Vec<_> = (0..64u8).map(sender_table).collect();
        let rom = (0..512usize)
            .map(|row| {
                let t = tables[row >> 3];
                let mut out = Bits::<SLICE>::default();
                for i in 0..SLICE {
                    let b = SLICE * (row & 7) + i;
                    out = out.replace_bit(i, b < SENDER_TAB_BITS && t.get_bit(b));
                }
                out
            })
            .collect::<Vec<_>>()
            .into_iter();
        Self {
            clock: Default::default(),
            node_count: Default::default(),
            tab: Default::default(),
            rom: rom.into(),
            c: Default::default(),
            cd: Default::default(),
            addr: Default::default(),
            n9: Default::default(),
            c9: Default::default(),
            r0: Default::default(),
            r1: Default::default(),
            r2: Default::default(),
            r3: Default::default(),
            r4: Default::default(),
            r5: Default::default(),
            r6: Default::default(),
            r7: Default::default(),
            slices: Default::default(),
            k1_3: k(1),
            k3_9: k(3),
            ks: std::array::from_fn(|i| k(i as u64)),
        }
    }
}

impl Logic for SenderTable {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, c, cd, r0, r1, r2, r3, r4, r5, r6, r7);
        self.rom.clock.next = self.clock.val();
        self.c.d.next = self.c.q.val() + self.k1_3.val();
        self.cd.d.next = self.c.q.val();
        self.n9.narrow.next = self.node_count.val();
        self.c9.narrow.next = self.c.q.val();
        self.addr.next = (self.n9.wide.val() << self.k3_9.val()) | self.c9.wide.val();
        self.rom.address.next = self.addr.val();
        if self.cd.q.val() == self.ks[0].val() {
            self.r0.d.next = self.rom.data.val();
        }
        if self.cd.q.val() == self.ks[1].val() {
            self.r1.d.next = self.rom.data.val();
        }
        if self.cd.q.val() == self.ks[2].val() {
            self.r2.d.next = self.rom.data.val();
        }
        if self.cd.q.val() == self.ks[3].val() {
            self.r3.d.next = self.rom.data.val();
        }
        if self.cd.q.val() == self.ks[4].val() {
            self.r4.d.next = self.rom.data.val();
        }
        if self.cd.q.val() == self.ks[5].val() {
            self.r5.d.next = self.rom.data.val();
        }
        if self.cd.q.val() == self.ks[6].val() {
            self.r6.d.next = self.rom.data.val();
        }
        if self.cd.q.val() == self.ks[7].val() {
            self.r7.d.next = self.rom.data.val().get_bits::<97>(0);
        }
        self.slices.s0.next = self.r0.q.val();
        self.slices.s1.next = self.r1.q.val();
        self.slices.s2.next = self.r2.q.val();
        self.slices.s3.next = self.r3.q.val();
        self.slices.s4.next = self.r4.q.val();
        self.slices.s5.next = self.r5.q.val();
        self.slices.s6.next = self.r6.q.val();
        self.slices.s7.next = self.r7.q.val();
        self.tab.next = self.slices.out.val();
    }
}

/// [`SenderTable`]'s slices joined (`s0` in the low bits).
#[derive(LogicBlock, Default)]
pub struct JoinSlices {
    pub s0: Signal<In, Bits<SLICE>>,
    pub s1: Signal<In, Bits<SLICE>>,
    pub s2: Signal<In, Bits<SLICE>>,
    pub s3: Signal<In, Bits<SLICE>>,
    pub s4: Signal<In, Bits<SLICE>>,
    pub s5: Signal<In, Bits<SLICE>>,
    pub s6: Signal<In, Bits<SLICE>>,
    pub s7: Signal<In, Bits<{ SENDER_TAB_BITS - 7 * SLICE }>>,
    pub out: Signal<Out, Bits<SENDER_TAB_BITS>>,
}

impl Logic for JoinSlices {
    fn update(&mut self) {
        let mut t = Bits::<SENDER_TAB_BITS>::default();
        let s = [
            self.s0.val(),
            self.s1.val(),
            self.s2.val(),
            self.s3.val(),
            self.s4.val(),
            self.s5.val(),
            self.s6.val(),
        ];
        for (i, v) in s.iter().enumerate() {
            t.set_bits::<SLICE>(SLICE * i, *v);
        }
        t.set_bits::<{ SENDER_TAB_BITS - 7 * SLICE }>(7 * SLICE, self.s7.val());
        self.out.next = t;
    }
    fn connect(&mut self) {
        self.out.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(*) out = {s7, s6, s5, s4, s3, s2, s1, s0};".into())
    }
}

/// Half of `epoch mod n` before the last reduction: for the four nibbles `k_p` of `value` (p = 0
/// least significant), `tab`'s residue for (p, k_p) (0 for k_p = 0), summed in pairs: `lo` =
/// p 0 + p 1, `hi` = p 2 + p 3 (each term < n, so each pair < 2n ≤ 128). `tab` is four positions
/// of [`sender_table`] (entry `15·p + k − 1`, 6 bits). Each lookup is a 16-way multiplexer
/// written as a tree of 2-way ones (a `case` became a chain of comparisons).
#[derive(LogicBlock, Default)]
pub struct NibbleSum {
    pub tab: Signal<In, Bits<360>>,
    pub value: Signal<In, Bits<16>>,
    pub lo: Signal<Out, Bits<7>>,
    pub hi: Signal<Out, Bits<7>>,
}

impl Logic for NibbleSum {
    fn update(&mut self) {
        let (tab, v) = (self.tab.val(), val(self.value.val()));
        let r = |p: usize| match (v >> (4 * p)) & 15 {
            0 => 0,
            k => val(tab.get_bits::<6>(6 * (15 * p + k as usize - 1))),
        };
        self.lo.next = (r(0) + r(1)).into();
        self.hi.next = (r(2) + r(3)).into();
    }
    fn connect(&mut self) {
        self.lo.connect();
        self.hi.connect();
    }
    fn hdl(&self) -> Verilog {
        // The tree over nibble bits `bit`..0 for entries `first`.. of position `p`.
        fn tree(p: usize, bit: i32, first: usize) -> String {
            if bit < 0 {
                return match first {
                    0 => "6'd0".into(),
                    k => {
                        let lo = 6 * (15 * p + k - 1);
                        format!("tab[{}:{lo}]", lo + 5)
                    }
                };
            }
            format!(
                "(value[{}] ? {} : {})",
                4 * p + bit as usize,
                tree(p, bit - 1, first + (1 << bit)),
                tree(p, bit - 1, first)
            )
        }
        let mut body = String::new();
        for p in 0..4 {
            body += &format!("wire [5:0] v{p} = {};\n", tree(p, 3, 0));
        }
        body +=
            "always @(*) lo = {1'd0, v0} + {1'd0, v1};\nalways @(*) hi = {1'd0, v2} + {1'd0, v3};";
        Verilog::Custom(body)
    }
}

/// The epoch's four pair sums (`a_lo`, `a_hi` of its high half, `b_lo`, `b_hi` of its low
/// half: their sum is ≡ epoch mod n and < 8n) and the claimed sender against the multiples of
/// `n` (`mult`: `m · n` for m = 1..7, 9 bits each): `s` = the sum, `p` = `sender + m · n` for
/// m = 0..7 (10 bits each), `in_range` = `sender < n`. The sender is the epoch's leader iff
/// `in_range` and `s` equals one of `p` ([`AnyEqual`]).
#[derive(LogicBlock, Default)]
pub struct SenderMatch {
    pub a_lo: Signal<In, Bits<7>>,
    pub a_hi: Signal<In, Bits<7>>,
    pub b_lo: Signal<In, Bits<7>>,
    pub b_hi: Signal<In, Bits<7>>,
    pub sender: Signal<In, Bits<8>>,
    pub mult: Signal<In, Bits<63>>,
    pub s: Signal<Out, Bits<10>>,
    pub p: Signal<Out, Bits<80>>,
    pub in_range: Signal<Out, Bit>,
}

impl Logic for SenderMatch {
    fn update(&mut self) {
        let (mult, snd) = (self.mult.val(), val(self.sender.val()));
        let m = |i: usize| val(mult.get_bits::<9>(9 * (i - 1)));
        self.s.next = [&self.a_lo, &self.a_hi, &self.b_lo, &self.b_hi]
            .iter()
            .map(|x| val(x.val()))
            .sum::<u64>()
            .into();
        let mut p = Bits::<80>::default();
        p.set_bits::<10>(0, snd.into());
        for i in 1..8 {
            p.set_bits::<10>(10 * i, (snd + m(i)).into());
        }
        self.p.next = p;
        self.in_range.next = snd < m(1);
    }
    fn connect(&mut self) {
        self.s.connect();
        self.p.connect();
        self.in_range.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut body = String::from(
            "always @(*) s = ({3'd0, a_lo} + {3'd0, a_hi}) + ({3'd0, b_lo} + {3'd0, b_hi});\n\
             always @(*) in_range = {1'd0, sender} < mult[8:0];\n\
             always @(*) begin\n    p[9:0] = {2'd0, sender};\n",
        );
        for i in 1..8 {
            body += &format!(
                "    p[{}:{}] = {{2'd0, sender}} + {{1'd0, mult[{}:{}]}};\n",
                10 * i + 9,
                10 * i,
                9 * i - 1,
                9 * (i - 1)
            );
        }
        body += "end";
        Verilog::Custom(body)
    }
}

/// `hit` = `s` equals one of the eight 10-bit words of `p`.
#[derive(LogicBlock, Default)]
pub struct AnyEqual {
    pub s: Signal<In, Bits<10>>,
    pub p: Signal<In, Bits<80>>,
    pub hit: Signal<Out, Bit>,
}

impl Logic for AnyEqual {
    fn update(&mut self) {
        let (s, p) = (self.s.val(), self.p.val());
        self.hit.next = (0..8).any(|i| p.get_bits::<10>(10 * i) == s);
    }
    fn connect(&mut self) {
        self.hit.connect();
    }
    fn hdl(&self) -> Verilog {
        let eq: Vec<String> = (0..8)
            .map(|i| format!("(s == p[{}:{}])", 10 * i + 9, 10 * i))
            .collect();
        Verilog::Custom(format!("always @(*) hit = {};", eq.join(" | ")))
    }
}

/// A judged frame's record: its verdict and the fields read after it (issue 17 item 5: one
/// definition for the parser's `rec`, `nc_engine`'s holding registers, their picks and its
/// event register; in Verilog one vector, the fields in this order from bit 0).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct Record {
    /// `lowi_core::class`.
    pub verdict: Bits<CLASS_BITS>,
    pub sender: Bits<8>,
    pub epoch: Bits<32>,
    pub seq: Bits<32>,
    pub tree: Bits<8>,
    pub decide_kind: Bits<2>,
    pub decide_instance: Bits<64>,
    pub client: Bits<32>,
    pub req_seq: Bits<64>,
    pub req_len: Bits<16>,
    /// Request payload, first byte in bits 63..56.
    pub req_payload: Bits<64>,
    /// The frame's length in bytes.
    pub frame_len: Bits<16>,
    /// The sender's addresses (where a reply goes).
    pub eth_src: Bits<48>,
    pub eth_dst: Bits<48>,
    pub ip_src: Bits<32>,
    pub udp_src: Bits<16>,
}

/// The parser.
#[derive(LogicBlock)]
pub struct PktParser {
    pub clock: Signal<In, Clock>,
    /// Stream in: data (lane l = frame byte 8·beat + l).
    pub s_data: Signal<In, Bits<64>>,
    /// Byte enables of the beat (contiguous from lane 0; all ones except on the last beat).
    pub s_keep: Signal<In, Bits<8>>,
    pub s_valid: Signal<In, Bit>,
    pub s_last: Signal<In, Bit>,
    /// Always high: the parser takes a beat every cycle.
    pub s_ready: Signal<Out, Bit>,
    /// 0: a tree port (expects DECIDE); 1: the client port (expects REQUEST).
    pub client_mode: Signal<In, Bit>,
    /// Our UDP port on this interface (`decide_port` or `client_port`).
    pub port: Signal<In, Bits<16>>,
    /// `cluster_id`.
    pub cluster_id: Signal<In, Bits<32>>,
    /// [`sender_table`]`(node_count)`, from a [`SenderTable`] (a DECIDE must come from
    /// `epoch mod node_count`; a tree port only).
    pub sender_tab: Signal<In, Bits<SENDER_TAB_BITS>>,
    /// A frame ended in the previous cycle: its verdict and fields are valid now.
    pub valid: Signal<Out, Bit>,
    /// A frame ends in this cycle (its last beat is on the bus): `valid` is high in the next
    /// cycle. Lets a consumer register a decision on the next cycle's verdict
    /// (`nc_engine`'s arbitration, rtl/README "Step 16").
    pub ends: Signal<Out, Bit>,
    /// The frame's verdict and fields (valid with `valid`).
    pub rec: Signal<Out, Record>,
    beat: DFF<Bits<16>>,
    h0: DFF<Bits<64>>,
    h1: DFF<Bits<64>>,
    h2: DFF<Bits<64>>,
    h3: DFF<Bits<64>>,
    h4: DFF<Bits<64>>,
    h5: DFF<Bits<64>>,
    h6: DFF<Bits<64>>,
    h7: DFF<Bits<64>>,
    h8: DFF<Bits<64>>,
    h9: DFF<Bits<48>>,
    flen: DFF<Bits<16>>,
    /// The checksums as they stream (see `update`), in carry-save form.
    i_csa: OnesCsa,
    u_csa: OnesCsa,
    i_s: DFF<Bits<16>>,
    i_c: DFF<Bits<16>>,
    u_s: DFF<Bits<16>>,
    u_c: DFF<Bits<16>>,
    /// The beats' lane masks, registered at the beat before; the datagram's bytes left at the
    /// beat's start (from beat 5 on).
    i_mask: DFF<Bits<8>>,
    u_mask: DFF<Bits<8>>,
    u_rem: DFF<Bits<16>>,
    u_rem_n: Signal<Local, Bits<16>>,
    /// The beat now streaming is not beat 0 (`bn0`; low at reset, as the beat counter is 0) /
    /// is beat 1 / 2 / 3 / 4 (registered from `beat_n`).
    bn0: DFF<Bit>,
    bq1: DFF<Bit>,
    bq2: DFF<Bit>,
    bq3: DFF<Bit>,
    bq4: DFF<Bit>,
    /// The beat now streaming is beat 5 / … / 9: the header registers' write enables (with
    /// `!bn0` and `bq1`–`bq4`), no beat comparison in front of them.
    bq5: DFF<Bit>,
    bq6: DFF<Bit>,
    bq7: DFF<Bit>,
    bq8: DFF<Bit>,
    bq9: DFF<Bit>,
    u_lanes: LaneMask,
    sw_ulen: ByteSwap<16>,
    i_chk: CsaIsFfff,
    u_chk: CsaIsFfff,
    /// The checksums' tests of the sums after the last beat taken (`i_chk`, `u_chk` of the
    /// sums' next values, registered with them): final in a frame's verdict cycle.
    i_ok: DFF<Bit>,
    u_ok: DFF<Bit>,
    k_ip_first: Constant<Bits<8>>,
    k_ip_last: Constant<Bits<8>>,
    k_udp_first: Constant<Bits<8>>,
    k_ff8: Constant<Bits<8>>,
    k_udp16: Constant<Bits<16>>,
    k0_32: Constant<Bits<32>>,
    done: DFF<Bit>,
    /// The beat now streaming brings the epoch's low half (registered from the beat counter's
    /// next value).
    at_eplo: DFF<Bit>,
    beat_n: Signal<Local, Bits<16>>,
    /// The epoch's high half's residue sum (from the kept beats, every cycle).
    ep_hi: NibbleSum,
    sw_ep_hi: ByteSwap<16>,
    ep_a_lo: DFF<Bits<7>>,
    ep_a_hi: DFF<Bits<7>>,
    /// Its low half's (from the bus, in the beat that brings it).
    ep_lo: NibbleSum,
    sw_ep_lo: ByteSwap<16>,
    ep_b_lo: DFF<Bits<7>>,
    ep_b_hi: DFF<Bits<7>>,
    /// `a + b`, `sender + m · n`, `sender < n`, registered; compared in the verdict cycle.
    ep_match: SenderMatch,
    ep_s: DFF<Bits<10>>,
    ep_p: DFF<Bits<80>>,
    ep_in: DFF<Bit>,
    ep_hit: AnyEqual,
    o_ep_hi: Constant<Bits<10>>,
    o_ep_lo_lane: Constant<Bits<6>>,
    o_mult: Constant<Bits<10>>,
    k_ep_lo_beat: Constant<Bits<16>>,
    /// `HEADER_LEN + 8`, `+ TAG_LEN` when tagged: what `body_len` adds up to `udp_len` with.
    hdr_udp: Signal<Local, Bits<16>>,
    v_base: Signal<Local, Bits<CLASS_BITS>>,
    bad_sender: Signal<Local, Bit>,
    /// The format checks, judged a cycle early: from the header as it will be after the beat
    /// on the bus (`beats_n`) and registered, so that in the verdict cycle each `ck_*.q` is
    /// the check of the header registers (the frame length's and the checksums' tests are
    /// registered too, and the port and cluster are compared with the configuration of the
    /// last beat's cycle), and that cycle only picks the class in proto's order (see
    /// `update`). `f_*` fields other than the outputs' read `beats_n`.
    beats_n: JoinBeats,
    beats_n_rest: Unused<624>,
    /// IPv4 / UDP: not Ethernet II IPv4 (foreign); the IPv4 header's format (malformed); a
    /// fragment or not UDP (foreign); the UDP length's format (malformed); a UDP checksum is
    /// present; `plen` < 4 (foreign); `plen` above the largest packet (malformed).
    ck_eth: DFF<Bit>,
    /// `ip_total_len + 14`, the IPv4 datagram's end in the frame (compared with `flen` in the
    /// verdict cycle).
    ip_end: DFF<Bits<16>>,
    /// The frame length's checks (`flen` < 14, `flen` < 34, `ip_end` > `flen`), judged in the
    /// cycle of the last beat from the length it gives (`flen_n`, what `flen` takes then) and
    /// registered: the verdict cycle reads three bits instead of two comparisons and a carry
    /// chain (`ip_end > flen` was the start of `nc_engine`'s longest path, 2026-12-02).
    ck_f14: DFF<Bit>,
    ck_f34: DFF<Bit>,
    ck_end: DFF<Bit>,
    ck_ip: DFF<Bit>,
    ck_frag: DFF<Bit>,
    ck_udp: DFF<Bit>,
    ck_csum: DFF<Bit>,
    ck_short: DFF<Bit>,
    ck_long: DFF<Bit>,
    /// Nano-consensus: magic / version (foreign); shorter than the header (malformed); kind and
    /// lengths (malformed); a tag (`key_id` ≠ 0).
    ck_magic: DFF<Bit>,
    ck_hdr: DFF<Bit>,
    ck_kind: DFF<Bit>,
    ck_tag: DFF<Bit>,
    /// Tree port: not a DECIDE (other); the DECIDE header's format (malformed); a value
    /// (BATCH / CONFIG); a value's count (malformed); a HEARTBEAT's / START's (malformed).
    ck_t_other: DFF<Bit>,
    ck_t_head: DFF<Bit>,
    ck_t_value: DFF<Bit>,
    ck_t_count: DFF<Bit>,
    ck_t_empty: DFF<Bit>,
    /// Client port: not a REQUEST (other); the entry's format (malformed); a CONFIG request.
    ck_c_other: DFF<Bit>,
    ck_c_entry: DFF<Bit>,
    ck_c_config: DFF<Bit>,
    /// The configuration's checks, a cycle early like the others (the configuration is written
    /// only while the core is disabled): the UDP destination is not the port's, the cluster is
    /// not ours. The verdict cycle reads no configuration register (they sit in `csr`, across
    /// the die from the parsers).
    ck_port: DFF<Bit>,
    ck_cluster: DFF<Bit>,
    /// The DECIDE header's checks, each made on the bus beat (`*_s`) and on the kept beat
    /// (`*_h`) and picked by the beat flag last (as `beats_n` would pick the bytes): the beat
    /// flags' fan-out reaches a few multiplexers instead of every byte of the fields.
    /// Field offsets within their beat (beat 8: `d_kind`; beat 9: `d_count`, `d_reserved`).
    o8_d_kind: Constant<Bits<6>>,
    o9_d_count: Constant<Bits<6>>,
    o9_d_reserved: Constant<Bits<6>>,
    kind_s: Signal<Local, Bits<8>>,
    kind_h: Signal<Local, Bits<8>>,
    /// The DECIDE kind after this beat is above the largest, a value (BATCH or CONFIG), CONFIG.
    kind_bad: Signal<Local, Bit>,
    kind_val: Signal<Local, Bit>,
    kind_cfg: Signal<Local, Bit>,
    /// The DECIDE header's reserved word after this beat is not 0.
    res_nz: Signal<Local, Bit>,
    sw_cnt_s: ByteSwap<16>,
    sw_cnt_h: ByteSwap<16>,
    cnt_s: Signal<Local, Bits<16>>,
    cnt_h: Signal<Local, Bits<16>>,
    /// The entries the body has room for: (body_len − header) / 16.
    ent_room: Signal<Local, Bits<16>>,
    /// `ck_t_count` and "the count is not 0" with the count from the bus beat / the kept one.
    cnt_bad_s: Signal<Local, Bit>,
    cnt_bad_h: Signal<Local, Bit>,
    cnt_nz: Signal<Local, Bit>,
    sw_n_e_len: ByteSwap<16>,
    n_e_len: Signal<Local, Bits<16>>,
    sw_n_e_seq: ByteSwap<64>,
    n_e_seq: Signal<Local, Bits<64>>,
    beats: JoinBeats,
    /// The kept beats' bytes no field reads (the IPv4 header's other words: its checksum is
    /// summed as it streams).
    beats_rest: Unused<624>,
    o_eth_dst: Constant<Bits<10>>,
    sw_eth_dst: ByteSwap<48>,
    f_eth_dst: Signal<Local, Bits<48>>,
    o_eth_src: Constant<Bits<10>>,
    sw_eth_src: ByteSwap<48>,
    f_eth_src: Signal<Local, Bits<48>>,
    o_ip_src: Constant<Bits<10>>,
    sw_ip_src: ByteSwap<32>,
    f_ip_src: Signal<Local, Bits<32>>,
    o_udp_src: Constant<Bits<10>>,
    sw_udp_src: ByteSwap<16>,
    f_udp_src: Signal<Local, Bits<16>>,
    o_ether_type: Constant<Bits<10>>,
    sw_ether_type: ByteSwap<16>,
    f_ether_type: Signal<Local, Bits<16>>,
    o_ip_vihl: Constant<Bits<10>>,
    f_ip_vihl: Signal<Local, Bits<8>>,
    o_ip_total_len: Constant<Bits<10>>,
    sw_ip_total_len: ByteSwap<16>,
    f_ip_total_len: Signal<Local, Bits<16>>,
    o_ip_frag: Constant<Bits<10>>,
    sw_ip_frag: ByteSwap<16>,
    f_ip_frag: Signal<Local, Bits<16>>,
    o_ip_proto: Constant<Bits<10>>,
    f_ip_proto: Signal<Local, Bits<8>>,
    o_udp_dst: Constant<Bits<10>>,
    sw_udp_dst: ByteSwap<16>,
    f_udp_dst: Signal<Local, Bits<16>>,
    o_udp_len: Constant<Bits<10>>,
    sw_udp_len: ByteSwap<16>,
    f_udp_len: Signal<Local, Bits<16>>,
    o_udp_csum: Constant<Bits<10>>,
    sw_udp_csum: ByteSwap<16>,
    f_udp_csum: Signal<Local, Bits<16>>,
    o_magic: Constant<Bits<10>>,
    sw_magic: ByteSwap<16>,
    f_magic: Signal<Local, Bits<16>>,
    o_version: Constant<Bits<10>>,
    f_version: Signal<Local, Bits<8>>,
    o_kind: Constant<Bits<10>>,
    f_kind: Signal<Local, Bits<8>>,
    o_cluster: Constant<Bits<10>>,
    sw_cluster: ByteSwap<32>,
    f_cluster: Signal<Local, Bits<32>>,
    o_body_len: Constant<Bits<10>>,
    sw_body_len: ByteSwap<16>,
    f_body_len: Signal<Local, Bits<16>>,
    o_sender: Constant<Bits<10>>,
    f_sender: Signal<Local, Bits<8>>,
    o_key_id: Constant<Bits<10>>,
    f_key_id: Signal<Local, Bits<8>>,
    o_d_instance: Constant<Bits<10>>,
    sw_d_instance: ByteSwap<64>,
    f_d_instance: Signal<Local, Bits<64>>,
    o_d_epoch: Constant<Bits<10>>,
    sw_d_epoch: ByteSwap<32>,
    f_d_epoch: Signal<Local, Bits<32>>,
    o_d_seq: Constant<Bits<10>>,
    sw_d_seq: ByteSwap<32>,
    f_d_seq: Signal<Local, Bits<32>>,
    o_d_tree: Constant<Bits<10>>,
    f_d_tree: Signal<Local, Bits<8>>,
    o_d_kind: Constant<Bits<10>>,
    /// The output's two bits (the checks read all 8: `kind_s`, `kind_h`).
    f_d_kind: Signal<Local, Bits<2>>,
    o_e_client: Constant<Bits<10>>,
    sw_e_client: ByteSwap<32>,
    f_e_client: Signal<Local, Bits<32>>,
    o_e_len: Constant<Bits<10>>,
    sw_e_len: ByteSwap<16>,
    f_e_len: Signal<Local, Bits<16>>,
    o_e_flags: Constant<Bits<10>>,
    f_e_flags: Signal<Local, Bits<8>>,
    o_e_reserved: Constant<Bits<10>>,
    f_e_reserved: Signal<Local, Bits<8>>,
    o_e_seq: Constant<Bits<10>>,
    sw_e_seq: ByteSwap<64>,
    f_e_seq: Signal<Local, Bits<64>>,
    o_e_payload: Constant<Bits<10>>,
    sw_e_payload: ByteSwap<64>,
    f_e_payload: Signal<Local, Bits<64>>,
    pos: Signal<Local, Bits<16>>,
    nbytes: Signal<Local, Bits<16>>,
    flen_n: Signal<Local, Bits<16>>,
    k0_16: Constant<Bits<16>>,
    k1_16: Constant<Bits<16>>,
    k8_16: Constant<Bits<16>>,
    k3_16: Constant<Bits<16>>,
    k4_16: Constant<Bits<16>>,
    k5_16: Constant<Bits<16>>,
    k14_16: Constant<Bits<16>>,
    k20_16: Constant<Bits<16>>,
    k34_16: Constant<Bits<16>>,
    k_eth: Constant<Bits<16>>,
    k_frag_mask: Constant<Bits<16>>,
    k0_8: Constant<Bits<8>>,
    k_vihl: Constant<Bits<8>>,
    k_udp: Constant<Bits<8>>,
    k_version: Constant<Bits<8>>,
    k_kind_max: Constant<Bits<8>>,
    k_kind_decide: Constant<Bits<8>>,
    k_kind_request: Constant<Bits<8>>,
    k_dk_max: Constant<Bits<8>>,
    k_dk_batch: Constant<Bits<8>>,
    k_dk_config: Constant<Bits<8>>,
    k_flag_config: Constant<Bits<8>>,
    k_flags_other: Constant<Bits<8>>,
    k_magic: Constant<Bits<16>>,
    k_dhdr: Constant<Bits<16>>,
    k_ehdr: Constant<Bits<16>>,
    k_ehdr_shift: Constant<Bits<16>>,
    k1_count: Constant<Bits<16>>,
    k0_64: Constant<Bits<64>>,
    k0_48: Constant<Bits<48>>,
    c_expected: Constant<Bits<CLASS_BITS>>,
    c_other: Constant<Bits<CLASS_BITS>>,
    c_foreign: Constant<Bits<CLASS_BITS>>,
    c_malformed: Constant<Bits<CLASS_BITS>>,
    c_unauthorized: Constant<Bits<CLASS_BITS>>,
    k_hdr_udp: Constant<Bits<16>>,
    k_hdr_udp_tag: Constant<Bits<16>>,
    k_max_udp: Constant<Bits<16>>,
    k12_16: Constant<Bits<16>>,
    k28_16: Constant<Bits<16>>,
    k9_16: Constant<Bits<16>>,
    k_keep1: Constant<Bits<8>>,
    k_keep2: Constant<Bits<8>>,
    k_keep3: Constant<Bits<8>>,
    k_keep4: Constant<Bits<8>>,
    k_keep5: Constant<Bits<8>>,
    k_keep6: Constant<Bits<8>>,
    k_keep7: Constant<Bits<8>>,
    k2_16: Constant<Bits<16>>,
    k6_16: Constant<Bits<16>>,
    k7_16: Constant<Bits<16>>,
}

impl Default for PktParser {
    fn default() -> Self {
        assert_eq!(
            wire::ENTRY_HEADER_LEN,
            16,
            "entry bound uses a shift by log2(ENTRY_HEADER_LEN)"
        );
        let l = Layout::probe();
        let bit = |f: crate::layout::Field| k::<10>(8 * f.off as u64);
        // The DECIDE header's checks read `d_kind` in beat 8 and `d_count`, `d_reserved` in
        // beat 9's six kept bytes (`h9`).
        assert!(
            l.d_kind.off >= 64 && l.d_kind.off + l.d_kind.len <= 72,
            "d_kind in beat 8"
        );
        for f in [l.d_count, l.d_reserved] {
            assert!(
                f.off >= 72 && f.off + f.len <= 78,
                "d_count, d_reserved in h9"
            );
        }
        // The checksums' lane masks (`update`) are written for Ethernet II and a 20-byte IPv4
        // header: the IPv4 header is frame bytes 14..34 (beat 1 lane 6 to beat 4 lane 1), the
        // pseudo-header's addresses start at byte 26 (beat 3 lane 2), and beat 4 ends with the
        // UDP length (bytes 38-39); the datagram's bytes from beat 5 (byte 40) on are
        // udp_len - 6.
        assert_eq!(
            (l.ip_vihl.off, l.ip_src.off, l.udp_len.off, l.udp_src.off),
            (14, 26, 38, 34),
            "the checksum masks' frame offsets"
        );
        // The sender check (see the module doc): the epoch's high half is read from the kept
        // beats, its low half from the bus in the beat that brings it, which must come after
        // the high half's and the sender's, and before the shortest DECIDE frame's last beat
        // (the verdict comes two cycles after it at the earliest).
        let ep = l.d_epoch.off;
        assert_eq!(l.d_epoch.len, 4, "the epoch is 32 bits");
        let lo_beat = ((ep + 2) / 8) as u64;
        assert!(
            (ep + 3) / 8 == (ep + 2) / 8 && (ep + 1) / 8 < (ep + 2) / 8,
            "the epoch's halves are not in two beats"
        );
        assert!(
            l.sender.off / 8 < (ep + 2) / 8,
            "the sender comes after the epoch"
        );
        let min_decide = PAYLOAD_OFFSET + wire::HEADER_LEN + wire::DECIDE_HEADER_LEN;
        assert!(
            (min_decide - 1) / 8 > (ep + 2) / 8,
            "the shortest DECIDE frame ends with the epoch"
        );
        Self {
            clock: Default::default(),
            s_data: Default::default(),
            s_keep: Default::default(),
            s_valid: Default::default(),
            s_last: Default::default(),
            s_ready: Default::default(),
            client_mode: Default::default(),
            port: Default::default(),
            cluster_id: Default::default(),
            sender_tab: Default::default(),
            valid: Default::default(),
            ends: Default::default(),
            rec: Default::default(),
            beat: Default::default(),
            h0: Default::default(),
            h1: Default::default(),
            h2: Default::default(),
            h3: Default::default(),
            h4: Default::default(),
            h5: Default::default(),
            h6: Default::default(),
            h7: Default::default(),
            h8: Default::default(),
            h9: Default::default(),
            flen: Default::default(),
            i_csa: Default::default(),
            u_csa: Default::default(),
            i_s: Default::default(),
            i_c: Default::default(),
            u_s: Default::default(),
            u_c: Default::default(),
            i_mask: Default::default(),
            u_mask: Default::default(),
            u_rem: Default::default(),
            u_rem_n: Default::default(),
            bn0: Default::default(),
            bq1: Default::default(),
            bq2: Default::default(),
            bq3: Default::default(),
            bq4: Default::default(),
            bq5: Default::default(),
            bq6: Default::default(),
            bq7: Default::default(),
            bq8: Default::default(),
            bq9: Default::default(),
            u_lanes: Default::default(),
            sw_ulen: Default::default(),
            i_chk: Default::default(),
            u_chk: Default::default(),
            i_ok: Default::default(),
            u_ok: Default::default(),
            k_ip_first: k(0xC0),
            k_ip_last: k(0x03),
            k_udp_first: k(0xFC),
            k_ff8: k(0xFF),
            k_udp16: k(17),
            k0_32: k(0),
            done: Default::default(),
            at_eplo: Default::default(),
            beat_n: Default::default(),
            ep_hi: Default::default(),
            sw_ep_hi: Default::default(),
            ep_a_lo: Default::default(),
            ep_a_hi: Default::default(),
            ep_lo: Default::default(),
            sw_ep_lo: Default::default(),
            ep_b_lo: Default::default(),
            ep_b_hi: Default::default(),
            ep_match: Default::default(),
            ep_s: Default::default(),
            ep_p: Default::default(),
            ep_in: Default::default(),
            ep_hit: Default::default(),
            o_ep_hi: k(8 * ep as u64),
            o_ep_lo_lane: k(8 * ((ep as u64 + 2) % 8)),
            o_mult: k(TAB_MULT as u64),
            k_ep_lo_beat: k(lo_beat),
            hdr_udp: Default::default(),
            v_base: Default::default(),
            bad_sender: Default::default(),
            beats_n: Default::default(),
            beats_n_rest: Default::default(),
            ck_eth: Default::default(),
            ip_end: Default::default(),
            ck_f14: Default::default(),
            ck_f34: Default::default(),
            ck_end: Default::default(),
            ck_ip: Default::default(),
            ck_frag: Default::default(),
            ck_udp: Default::default(),
            ck_csum: Default::default(),
            ck_short: Default::default(),
            ck_long: Default::default(),
            ck_magic: Default::default(),
            ck_hdr: Default::default(),
            ck_kind: Default::default(),
            ck_tag: Default::default(),
            ck_t_other: Default::default(),
            ck_t_head: Default::default(),
            ck_t_value: Default::default(),
            ck_t_count: Default::default(),
            ck_t_empty: Default::default(),
            ck_c_other: Default::default(),
            ck_c_entry: Default::default(),
            ck_c_config: Default::default(),
            ck_port: Default::default(),
            ck_cluster: Default::default(),
            o8_d_kind: k(8 * l.d_kind.off as u64 - 512),
            o9_d_count: k(8 * l.d_count.off as u64 - 576),
            o9_d_reserved: k(8 * l.d_reserved.off as u64 - 576),
            kind_s: Default::default(),
            kind_h: Default::default(),
            kind_bad: Default::default(),
            kind_val: Default::default(),
            kind_cfg: Default::default(),
            res_nz: Default::default(),
            sw_cnt_s: Default::default(),
            sw_cnt_h: Default::default(),
            cnt_s: Default::default(),
            cnt_h: Default::default(),
            ent_room: Default::default(),
            cnt_bad_s: Default::default(),
            cnt_bad_h: Default::default(),
            cnt_nz: Default::default(),
            sw_n_e_len: Default::default(),
            n_e_len: Default::default(),
            sw_n_e_seq: Default::default(),
            n_e_seq: Default::default(),
            beats: Default::default(),
            beats_rest: Default::default(),
            o_eth_dst: bit(l.eth_dst),
            sw_eth_dst: Default::default(),
            f_eth_dst: Default::default(),
            o_eth_src: bit(l.eth_src),
            sw_eth_src: Default::default(),
            f_eth_src: Default::default(),
            o_ip_src: bit(l.ip_src),
            sw_ip_src: Default::default(),
            f_ip_src: Default::default(),
            o_udp_src: bit(l.udp_src),
            sw_udp_src: Default::default(),
            f_udp_src: Default::default(),
            o_ether_type: bit(l.ether_type),
            sw_ether_type: Default::default(),
            f_ether_type: Default::default(),
            o_ip_vihl: bit(l.ip_vihl),
            f_ip_vihl: Default::default(),
            o_ip_total_len: bit(l.ip_total_len),
            sw_ip_total_len: Default::default(),
            f_ip_total_len: Default::default(),
            o_ip_frag: bit(l.ip_frag),
            sw_ip_frag: Default::default(),
            f_ip_frag: Default::default(),
            o_ip_proto: bit(l.ip_proto),
            f_ip_proto: Default::default(),
            o_udp_dst: bit(l.udp_dst),
            sw_udp_dst: Default::default(),
            f_udp_dst: Default::default(),
            o_udp_len: bit(l.udp_len),
            sw_udp_len: Default::default(),
            f_udp_len: Default::default(),
            o_udp_csum: bit(l.udp_csum),
            sw_udp_csum: Default::default(),
            f_udp_csum: Default::default(),
            o_magic: bit(l.magic),
            sw_magic: Default::default(),
            f_magic: Default::default(),
            o_version: bit(l.version),
            f_version: Default::default(),
            o_kind: bit(l.kind),
            f_kind: Default::default(),
            o_cluster: bit(l.cluster),
            sw_cluster: Default::default(),
            f_cluster: Default::default(),
            o_body_len: bit(l.body_len),
            sw_body_len: Default::default(),
            f_body_len: Default::default(),
            o_sender: bit(l.sender),
            f_sender: Default::default(),
            o_key_id: bit(l.reserved),
            f_key_id: Default::default(),
            o_d_instance: bit(l.d_instance),
            sw_d_instance: Default::default(),
            f_d_instance: Default::default(),
            o_d_epoch: bit(l.d_epoch),
            sw_d_epoch: Default::default(),
            f_d_epoch: Default::default(),
            o_d_seq: bit(l.d_seq),
            sw_d_seq: Default::default(),
            f_d_seq: Default::default(),
            o_d_tree: bit(l.d_tree),
            f_d_tree: Default::default(),
            o_d_kind: bit(l.d_kind),
            f_d_kind: Default::default(),
            o_e_client: bit(l.e_client),
            sw_e_client: Default::default(),
            f_e_client: Default::default(),
            o_e_len: bit(l.e_len),
            sw_e_len: Default::default(),
            f_e_len: Default::default(),
            o_e_flags: bit(l.e_flags),
            f_e_flags: Default::default(),
            o_e_reserved: bit(l.e_reserved),
            f_e_reserved: Default::default(),
            o_e_seq: bit(l.e_seq),
            sw_e_seq: Default::default(),
            f_e_seq: Default::default(),
            o_e_payload: bit(l.e_payload),
            sw_e_payload: Default::default(),
            f_e_payload: Default::default(),
            pos: Default::default(),
            nbytes: Default::default(),
            flen_n: Default::default(),
            k0_16: k(0),
            k1_16: k(1),
            k8_16: k(8),
            k3_16: k(3),
            k4_16: k(4),
            k5_16: k(5),
            k14_16: k(14),
            k20_16: k(20),
            k34_16: k(34),
            k_eth: k(0x0800),
            k_frag_mask: k(0x3FFF),
            k0_8: k(0),
            k_vihl: k(0x45),
            k_udp: k(17),
            k_version: k(wire::VERSION as u64),
            k_kind_max: k(Kind::StateChunk as u64),
            k_kind_decide: k(Kind::Decide as u64),
            k_kind_request: k(Kind::Request as u64),
            k_dk_max: k(DecideKind::Config as u64),
            k_dk_batch: k(DecideKind::Batch as u64),
            k_dk_config: k(DecideKind::Config as u64),
            k_flag_config: k(wire::ENTRY_FLAG_CONFIG as u64),
            k_flags_other: k(!(wire::ENTRY_FLAG_CONFIG as u64) & 0xFF),
            k_magic: k(wire::MAGIC as u64),
            k_dhdr: k(wire::DECIDE_HEADER_LEN as u64),
            k_ehdr: k(wire::ENTRY_HEADER_LEN as u64),
            k_ehdr_shift: k(wire::ENTRY_HEADER_LEN.trailing_zeros() as u64),
            k1_count: k(1),
            k0_64: k(0),
            k0_48: k(0),
            c_expected: k(class::EXPECTED),
            c_other: k(class::OTHER),
            c_foreign: k(class::FOREIGN),
            c_malformed: k(class::MALFORMED),
            c_unauthorized: k(class::UNAUTHORIZED),
            k_hdr_udp: k(wire::HEADER_LEN as u64 + 8),
            k_hdr_udp_tag: k((wire::HEADER_LEN + wire::TAG_LEN) as u64 + 8),
            k_max_udp: k(wire::MAX_PACKET_LEN as u64 + 8),
            k12_16: k(12),
            k28_16: k(28),
            k9_16: k(9),
            k_keep1: k(1),
            k_keep2: k(3),
            k_keep3: k(7),
            k_keep4: k(15),
            k_keep5: k(31),
            k_keep6: k(63),
            k_keep7: k(127),
            k2_16: k(2),
            k6_16: k(6),
            k7_16: k(7),
        }
    }
}

impl Logic for PktParser {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            beat,
            h0,
            h1,
            h2,
            h3,
            h4,
            h5,
            h6,
            h7,
            h8,
            h9,
            flen,
            done,
            at_eplo,
            ep_a_lo,
            ep_a_hi,
            ep_b_lo,
            ep_b_hi,
            ep_s,
            ep_p,
            ep_in,
            i_s,
            i_c,
            u_s,
            u_c,
            i_ok,
            u_ok,
            i_mask,
            u_mask,
            u_rem,
            bn0,
            bq1,
            bq2,
            bq3,
            bq4,
            bq5,
            bq6,
            bq7,
            bq8,
            bq9,
            ck_eth,
            ip_end,
            ck_f14,
            ck_f34,
            ck_end,
            ck_ip,
            ck_frag,
            ck_udp,
            ck_csum,
            ck_short,
            ck_long,
            ck_magic,
            ck_hdr,
            ck_kind,
            ck_tag,
            ck_t_other,
            ck_t_head,
            ck_t_value,
            ck_t_count,
            ck_t_empty,
            ck_c_other,
            ck_c_entry,
            ck_c_config,
            ck_port,
            ck_cluster
        );
        self.s_ready.next = true;
        // ---- capture
        self.beats.h0.next = self.h0.q.val();
        self.beats.h1.next = self.h1.q.val();
        self.beats.h2.next = self.h2.q.val();
        self.beats.h3.next = self.h3.q.val();
        self.beats.h4.next = self.h4.q.val();
        self.beats.h5.next = self.h5.q.val();
        self.beats.h6.next = self.h6.q.val();
        self.beats.h7.next = self.h7.q.val();
        self.beats.h8.next = self.h8.q.val();
        self.beats.h9.next = self.h9.q.val();
        self.beats_rest.x.next = self.beats.out.val();
        self.sw_eth_dst.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<48>(self.o_eth_dst.val().index());
        self.f_eth_dst.next = self.sw_eth_dst.out.val();
        self.sw_eth_src.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<48>(self.o_eth_src.val().index());
        self.f_eth_src.next = self.sw_eth_src.out.val();
        self.sw_ip_src.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<32>(self.o_ip_src.val().index());
        self.f_ip_src.next = self.sw_ip_src.out.val();
        self.sw_udp_src.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<16>(self.o_udp_src.val().index());
        self.f_udp_src.next = self.sw_udp_src.out.val();
        self.sw_ether_type.inp.next = self
            .beats_n
            .out
            .val()
            .get_bits::<16>(self.o_ether_type.val().index());
        self.f_ether_type.next = self.sw_ether_type.out.val();
        self.f_ip_vihl.next = self
            .beats_n
            .out
            .val()
            .get_bits::<8>(self.o_ip_vihl.val().index());
        self.sw_ip_total_len.inp.next = self
            .beats_n
            .out
            .val()
            .get_bits::<16>(self.o_ip_total_len.val().index());
        self.f_ip_total_len.next = self.sw_ip_total_len.out.val();
        self.sw_ip_frag.inp.next = self
            .beats_n
            .out
            .val()
            .get_bits::<16>(self.o_ip_frag.val().index());
        self.f_ip_frag.next = self.sw_ip_frag.out.val();
        self.f_ip_proto.next = self
            .beats_n
            .out
            .val()
            .get_bits::<8>(self.o_ip_proto.val().index());
        self.sw_udp_dst.inp.next = self
            .beats_n
            .out
            .val()
            .get_bits::<16>(self.o_udp_dst.val().index());
        self.f_udp_dst.next = self.sw_udp_dst.out.val();
        self.sw_udp_len.inp.next = self
            .beats_n
            .out
            .val()
            .get_bits::<16>(self.o_udp_len.val().index());
        self.f_udp_len.next = self.sw_udp_len.out.val();
        self.sw_udp_csum.inp.next = self
            .beats_n
            .out
            .val()
            .get_bits::<16>(self.o_udp_csum.val().index());
        self.f_udp_csum.next = self.sw_udp_csum.out.val();
        self.sw_magic.inp.next = self
            .beats_n
            .out
            .val()
            .get_bits::<16>(self.o_magic.val().index());
        self.f_magic.next = self.sw_magic.out.val();
        self.f_version.next = self
            .beats_n
            .out
            .val()
            .get_bits::<8>(self.o_version.val().index());
        self.f_kind.next = self
            .beats_n
            .out
            .val()
            .get_bits::<8>(self.o_kind.val().index());
        self.sw_cluster.inp.next = self
            .beats_n
            .out
            .val()
            .get_bits::<32>(self.o_cluster.val().index());
        self.f_cluster.next = self.sw_cluster.out.val();
        self.sw_body_len.inp.next = self
            .beats_n
            .out
            .val()
            .get_bits::<16>(self.o_body_len.val().index());
        self.f_body_len.next = self.sw_body_len.out.val();
        self.f_sender.next = self
            .beats
            .out
            .val()
            .get_bits::<8>(self.o_sender.val().index());
        self.f_key_id.next = self
            .beats_n
            .out
            .val()
            .get_bits::<8>(self.o_key_id.val().index());
        self.sw_d_instance.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<64>(self.o_d_instance.val().index());
        self.f_d_instance.next = self.sw_d_instance.out.val();
        self.sw_d_epoch.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<32>(self.o_d_epoch.val().index());
        self.f_d_epoch.next = self.sw_d_epoch.out.val();
        self.sw_d_seq.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<32>(self.o_d_seq.val().index());
        self.f_d_seq.next = self.sw_d_seq.out.val();
        self.f_d_tree.next = self
            .beats
            .out
            .val()
            .get_bits::<8>(self.o_d_tree.val().index());
        self.f_d_kind.next = self
            .beats
            .out
            .val()
            .get_bits::<2>(self.o_d_kind.val().index());
        self.sw_e_client.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<32>(self.o_e_client.val().index());
        self.f_e_client.next = self.sw_e_client.out.val();
        self.sw_e_len.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<16>(self.o_e_len.val().index());
        self.f_e_len.next = self.sw_e_len.out.val();
        self.f_e_flags.next = self
            .beats_n
            .out
            .val()
            .get_bits::<8>(self.o_e_flags.val().index());
        self.f_e_reserved.next = self
            .beats_n
            .out
            .val()
            .get_bits::<8>(self.o_e_reserved.val().index());
        self.sw_e_seq.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<64>(self.o_e_seq.val().index());
        self.f_e_seq.next = self.sw_e_seq.out.val();
        self.sw_e_payload.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<64>(self.o_e_payload.val().index());
        self.f_e_payload.next = self.sw_e_payload.out.val();
        self.pos.next = self.beat.q.val() << self.k3_16.val();
        // ---- the checksums, streamed: each beat's words that belong to the IPv4 header / to
        // the UDP checksum (the pseudo-header's addresses, the UDP header and the datagram:
        // frame bytes 26 to 34 + udp_len), by lane masks registered at the beat before, go
        // into a running ones-complement sum kept in carry-save form (`OnesCsa`: no carry
        // chain); the UDP one starts from the pseudo-header's protocol word and counts the UDP
        // length (beat 4's last word) twice. Each sum is tested (`CsaIsFfff`) as it is
        // registered (`i_ok`, `u_ok`), the verdict cycle reads the tests.
        self.i_csa.s.next = self.i_s.q.val();
        self.i_csa.c.next = self.i_c.q.val();
        self.i_csa.first.next = !self.bn0.q.val();
        self.i_csa.init.next = self.k0_16.val();
        self.i_csa.data.next = self.s_data.val();
        self.i_csa.mask.next = self.i_mask.q.val();
        self.i_csa.dbl3.next = false;
        self.u_csa.s.next = self.u_s.q.val();
        self.u_csa.c.next = self.u_c.q.val();
        self.u_csa.first.next = !self.bn0.q.val();
        self.u_csa.init.next = self.k_udp16.val();
        self.u_csa.data.next = self.s_data.val();
        self.u_csa.mask.next = self.u_mask.q.val();
        self.u_csa.dbl3.next = self.bq4.q.val();
        // Each sum's test is made on its next value and registered with it, so the verdict
        // cycle reads a register, not the test (rtl/README "Step 16").
        self.i_chk.s.next = self.i_csa.s_n.val();
        self.i_chk.c.next = self.i_csa.c_n.val();
        self.u_chk.s.next = self.u_csa.s_n.val();
        self.u_chk.c.next = self.u_csa.c_n.val();
        if self.s_valid.val() {
            self.i_s.d.next = self.i_csa.s_n.val();
            self.i_c.d.next = self.i_csa.c_n.val();
            self.u_s.d.next = self.u_csa.s_n.val();
            self.u_c.d.next = self.u_csa.c_n.val();
            self.i_ok.d.next = self.i_chk.eq.val();
            self.u_ok.d.next = self.u_chk.eq.val();
        }
        self.sw_ulen.inp.next = self.s_data.val().get_bits::<16>(48);
        // The masks of the next beat: the IPv4 header is frame bytes 14..34 (beat 1 lanes 6-7
        // to beat 4 lanes 0-1), the UDP sum's part bytes 26..34 + udp_len; from beat 5 on, the
        // datagram's bytes left (`u_rem`, from the UDP length on the bus in beat 4).
        if self.bq4.q.val() {
            if self.sw_ulen.out.val() < self.k6_16.val() {
                self.u_rem_n.next = self.k0_16.val();
            } else {
                self.u_rem_n.next = self.sw_ulen.out.val() - self.k6_16.val();
            }
        } else if self.u_rem.q.val() >= self.k8_16.val() {
            self.u_rem_n.next = self.u_rem.q.val() - self.k8_16.val();
        } else {
            self.u_rem_n.next = self.k0_16.val();
        }
        self.u_lanes.ulen.next = self.sw_ulen.out.val();
        self.u_lanes.rem.next = self.u_rem.q.val();
        self.u_lanes.at4.next = self.bq4.q.val();
        if self.s_valid.val() {
            self.u_rem.d.next = self.u_rem_n.val();
            self.u_mask.d.next = self.u_lanes.mask.val();
            self.i_mask.d.next = self.k0_8.val();
            if !self.bn0.q.val() {
                self.u_mask.d.next = self.k0_8.val();
                self.i_mask.d.next = self.k_ip_first.val();
            }
            if self.bq1.q.val() {
                self.u_mask.d.next = self.k0_8.val();
                self.i_mask.d.next = self.k_ff8.val();
            }
            if self.bq2.q.val() {
                self.u_mask.d.next = self.k_udp_first.val();
                self.i_mask.d.next = self.k_ff8.val();
            }
            if self.bq3.q.val() {
                self.u_mask.d.next = self.k_ff8.val();
                self.i_mask.d.next = self.k_ip_last.val();
            }
            if self.s_last.val() {
                self.u_mask.d.next = self.k0_8.val();
                self.i_mask.d.next = self.k0_8.val();
            }
        }
        // Bytes in this beat (keep is contiguous from lane 0).
        self.nbytes.next = self.k8_16.val();
        if self.s_keep.val() == self.k_keep1.val() {
            self.nbytes.next = self.k1_16.val();
        }
        if self.s_keep.val() == self.k_keep2.val() {
            self.nbytes.next = self.k2_16.val();
        }
        if self.s_keep.val() == self.k_keep3.val() {
            self.nbytes.next = self.k3_16.val();
        }
        if self.s_keep.val() == self.k_keep4.val() {
            self.nbytes.next = self.k4_16.val();
        }
        if self.s_keep.val() == self.k_keep5.val() {
            self.nbytes.next = self.k5_16.val();
        }
        if self.s_keep.val() == self.k_keep6.val() {
            self.nbytes.next = self.k6_16.val();
        }
        if self.s_keep.val() == self.k_keep7.val() {
            self.nbytes.next = self.k7_16.val();
        }
        // The frame length if this beat is the last (what `flen` takes then).
        self.flen_n.next = self.pos.val() + self.nbytes.val();
        // ---- is the sender the leader of the epoch (`epoch mod n`)? Each half of the epoch
        // gives two pair sums of nibble residues (< 2n each): the high half from the kept beats
        // (every cycle), the low half from the bus as it passes; then their total and
        // `sender + m · n` (m = 0..7) are registered, and the verdict cycle compares them.
        self.sw_ep_hi.inp.next = self
            .beats
            .out
            .val()
            .get_bits::<16>(self.o_ep_hi.val().index());
        self.ep_hi.value.next = self.sw_ep_hi.out.val();
        self.ep_hi.tab.next = self.sender_tab.val().get_bits::<360>(360);
        self.ep_a_lo.d.next = self.ep_hi.lo.val();
        self.ep_a_hi.d.next = self.ep_hi.hi.val();
        self.sw_ep_lo.inp.next = self
            .s_data
            .val()
            .get_bits::<16>(self.o_ep_lo_lane.val().index());
        self.ep_lo.value.next = self.sw_ep_lo.out.val();
        self.ep_lo.tab.next = self.sender_tab.val().get_bits::<360>(0);
        // `at_eplo` is high from the beat before until that beat is taken: the last write is
        // that beat's.
        if self.at_eplo.q.val() {
            self.ep_b_lo.d.next = self.ep_lo.lo.val();
            self.ep_b_hi.d.next = self.ep_lo.hi.val();
        }
        self.ep_match.a_lo.next = self.ep_a_lo.q.val();
        self.ep_match.a_hi.next = self.ep_a_hi.q.val();
        self.ep_match.b_lo.next = self.ep_b_lo.q.val();
        self.ep_match.b_hi.next = self.ep_b_hi.q.val();
        self.ep_match.sender.next = self.f_sender.val();
        self.ep_match.mult.next = self
            .sender_tab
            .val()
            .get_bits::<63>(self.o_mult.val().index());
        self.ep_s.d.next = self.ep_match.s.val();
        self.ep_p.d.next = self.ep_match.p.val();
        self.ep_in.d.next = self.ep_match.in_range.val();
        self.ep_hit.s.next = self.ep_s.q.val();
        self.ep_hit.p.next = self.ep_p.q.val();
        // The beat counter's next value and the stage flags for it.
        self.beat_n.next = self.beat.q.val();
        if self.s_valid.val() {
            if self.s_last.val() {
                self.beat_n.next = self.k0_16.val();
            } else {
                self.beat_n.next = self.beat.q.val() + self.k1_16.val();
            }
        }
        self.beat.d.next = self.beat_n.val();
        self.at_eplo.d.next = self.beat_n.val() == self.k_ep_lo_beat.val();
        self.bn0.d.next = self.beat_n.val() != self.k0_16.val();
        self.bq1.d.next = self.beat_n.val() == self.k1_16.val();
        self.bq2.d.next = self.beat_n.val() == self.k2_16.val();
        self.bq3.d.next = self.beat_n.val() == self.k3_16.val();
        self.bq4.d.next = self.beat_n.val() == self.k4_16.val();
        self.bq5.d.next = self.beat_n.val() == self.k5_16.val();
        self.bq6.d.next = self.beat_n.val() == self.k6_16.val();
        self.bq7.d.next = self.beat_n.val() == self.k7_16.val();
        self.bq8.d.next = self.beat_n.val() == self.k8_16.val();
        self.bq9.d.next = self.beat_n.val() == self.k9_16.val();
        self.done.d.next = false;
        // Set where `done` is (so an unknown `s_valid` in a simulator's first cycles gives
        // neither).
        self.ends.next = false;
        if self.s_valid.val() {
            if !self.bn0.q.val() {
                self.h0.d.next = self.s_data.val();
                self.h1.d.next = self.k0_64.val();
                self.h2.d.next = self.k0_64.val();
                self.h3.d.next = self.k0_64.val();
                self.h4.d.next = self.k0_64.val();
                self.h5.d.next = self.k0_64.val();
                self.h6.d.next = self.k0_64.val();
                self.h7.d.next = self.k0_64.val();
                self.h8.d.next = self.k0_64.val();
                self.h9.d.next = self.k0_48.val();
            }
            if self.bq1.q.val() {
                self.h1.d.next = self.s_data.val();
            }
            if self.bq2.q.val() {
                self.h2.d.next = self.s_data.val();
            }
            if self.bq3.q.val() {
                self.h3.d.next = self.s_data.val();
            }
            if self.bq4.q.val() {
                self.h4.d.next = self.s_data.val();
            }
            if self.bq5.q.val() {
                self.h5.d.next = self.s_data.val();
            }
            if self.bq6.q.val() {
                self.h6.d.next = self.s_data.val();
            }
            if self.bq7.q.val() {
                self.h7.d.next = self.s_data.val();
            }
            if self.bq8.q.val() {
                self.h8.d.next = self.s_data.val();
            }
            if self.bq9.q.val() {
                self.h9.d.next = self.s_data.val().get_bits::<48>(0);
            }
            if self.s_last.val() {
                self.done.d.next = true;
                self.ends.next = true;
                self.flen.d.next = self.flen_n.val();
            }
        }
        // The frame length's checks if this beat is the last: in the verdict cycle (after
        // the last beat) `ck_f14`, `ck_f34` and `ck_end` are the checks of `flen`. `ip_end` is
        // final by then in every frame whose verdict reads it: a frame that ends before beat 4
        // is shorter than 34 bytes (malformed, or foreign if shorter than 14) whatever it says.
        self.ck_f14.d.next = self.flen_n.val() < self.k14_16.val();
        self.ck_f34.d.next = self.flen_n.val() < self.k34_16.val();
        self.ck_end.d.next = self.ip_end.q.val() > self.flen_n.val();
        // ---- verdict (the cycle after the last beat, from the registers)
        self.valid.next = self.done.q.val();
        // Issue 18: what passes every format check may still be refused as not from a member
        // (in proto's order: the tag after parsing, then a DECIDE's sender): a tagged packet
        // (key_id != 0; the card holds no keys, so every key is unknown) and, on a tree port, a
        // DECIDE whose sender is not the leader of its epoch.
        self.bad_sender.next =
            !(self.client_mode.val() || (self.ep_in.q.val() && self.ep_hit.hit.val()));
        // proto's order of checks; each `ck_*` was judged a cycle early (below), the
        // configuration's too, and the checksums' tests (`i_ok`, `u_ok`) and the sender's
        // (`ep_in`, `ep_hit`) are registers, so this cycle only picks the class in that order
        // (and reads the port's kind).
        self.v_base.next = self.c_expected.val();
        if self.ck_f14.q.val() || self.ck_eth.q.val() {
            self.v_base.next = self.c_foreign.val();
        } else if self.ck_f34.q.val()
            || self.ck_ip.q.val()
            || self.ck_end.q.val()
            || !self.i_ok.q.val()
        {
            self.v_base.next = self.c_malformed.val();
        } else if self.ck_frag.q.val() {
            self.v_base.next = self.c_foreign.val();
        } else if self.ck_udp.q.val() || (self.ck_csum.q.val() && !self.u_ok.q.val()) {
            self.v_base.next = self.c_malformed.val();
        } else if self.ck_port.q.val() || self.ck_short.q.val() {
            self.v_base.next = self.c_foreign.val();
        } else if self.ck_long.q.val() {
            // Longer than any DECIDE at the largest MTU (proto refuses it too).
            self.v_base.next = self.c_malformed.val();
        } else if self.ck_magic.q.val() {
            self.v_base.next = self.c_foreign.val();
        } else if self.ck_hdr.q.val() {
            self.v_base.next = self.c_malformed.val();
        } else if self.ck_cluster.q.val() {
            self.v_base.next = self.c_foreign.val();
        } else if self.ck_kind.q.val() {
            self.v_base.next = self.c_malformed.val();
        } else if !self.client_mode.val() {
            if self.ck_t_other.q.val() {
                self.v_base.next = self.c_other.val();
            } else if self.ck_t_head.q.val()
                || (self.ck_t_value.q.val() && self.ck_t_count.q.val())
                || (!self.ck_t_value.q.val() && self.ck_t_empty.q.val())
            {
                self.v_base.next = self.c_malformed.val();
            }
        } else if self.ck_c_other.q.val() {
            self.v_base.next = self.c_other.val();
        } else if self.ck_c_entry.q.val() {
            self.v_base.next = self.c_malformed.val();
        } else if self.ck_c_config.q.val() {
            // CONFIG requests are not implemented in the RTL: ignored (and counted so).
            self.v_base.next = self.c_other.val();
        }
        // Refused as not from a member, once every format check passed (the check's result
        // enters last, one multiplexer before the output).
        self.rec.next.verdict = self.v_base.val();
        if ((self.v_base.val() == self.c_expected.val())
            && (self.ck_tag.q.val() || self.bad_sender.val()))
            || ((self.v_base.val() == self.c_other.val()) && self.ck_tag.q.val())
        {
            self.rec.next.verdict = self.c_unauthorized.val();
        }
        self.rec.next.sender = self.f_sender.val();
        self.rec.next.epoch = self.f_d_epoch.val();
        self.rec.next.seq = self.f_d_seq.val();
        self.rec.next.tree = self.f_d_tree.val();
        self.rec.next.decide_kind = self.f_d_kind.val();
        self.rec.next.decide_instance = self.f_d_instance.val();
        self.rec.next.client = self.f_e_client.val();
        self.rec.next.req_seq = self.f_e_seq.val();
        self.rec.next.req_len = self.f_e_len.val();
        self.rec.next.req_payload = self.f_e_payload.val();
        self.rec.next.frame_len = self.flen.q.val();
        self.rec.next.eth_src = self.f_eth_src.val();
        self.rec.next.eth_dst = self.f_eth_dst.val();
        self.rec.next.ip_src = self.f_ip_src.val();
        self.rec.next.udp_src = self.f_udp_src.val();
        // ---- the header-only checks, a cycle early: the header as it will be after this
        // beat, joined, its fields read (`f_*` but the outputs'; `n_*`, and the DECIDE
        // header's fields in beats 8 and 9 checked on each side of the beat flag), and each
        // check registered. In the verdict cycle (after a frame's last beat)
        // each `ck_*.q` is the check of the header registers.
        // The bytes of a header beat on the bus are its next value when it is taken; a
        // frame's last beat is always taken, and a clear (beat 0) is the next value only for
        // a frame of one beat, which `flen` < 14 makes foreign before any check is read.
        if !self.bn0.q.val() {
            self.beats_n.h0.next = self.s_data.val();
        } else {
            self.beats_n.h0.next = self.h0.q.val();
        }
        if self.bq1.q.val() {
            self.beats_n.h1.next = self.s_data.val();
        } else {
            self.beats_n.h1.next = self.h1.q.val();
        }
        if self.bq2.q.val() {
            self.beats_n.h2.next = self.s_data.val();
        } else {
            self.beats_n.h2.next = self.h2.q.val();
        }
        if self.bq3.q.val() {
            self.beats_n.h3.next = self.s_data.val();
        } else {
            self.beats_n.h3.next = self.h3.q.val();
        }
        if self.bq4.q.val() {
            self.beats_n.h4.next = self.s_data.val();
        } else {
            self.beats_n.h4.next = self.h4.q.val();
        }
        if self.bq5.q.val() {
            self.beats_n.h5.next = self.s_data.val();
        } else {
            self.beats_n.h5.next = self.h5.q.val();
        }
        if self.bq6.q.val() {
            self.beats_n.h6.next = self.s_data.val();
        } else {
            self.beats_n.h6.next = self.h6.q.val();
        }
        if self.bq7.q.val() {
            self.beats_n.h7.next = self.s_data.val();
        } else {
            self.beats_n.h7.next = self.h7.q.val();
        }
        if self.bq8.q.val() {
            self.beats_n.h8.next = self.s_data.val();
        } else {
            self.beats_n.h8.next = self.h8.q.val();
        }
        if self.bq9.q.val() {
            self.beats_n.h9.next = self.s_data.val().get_bits::<48>(0);
        } else {
            self.beats_n.h9.next = self.h9.q.val();
        }
        self.beats_n_rest.x.next = self.beats_n.out.val();
        // The DECIDE header's fields in beats 8 and 9, checked on the bus beat and on the kept
        // one, each check picked by its beat's flag.
        self.kind_s.next = self
            .s_data
            .val()
            .get_bits::<8>(self.o8_d_kind.val().index());
        self.kind_h.next = self.h8.q.val().get_bits::<8>(self.o8_d_kind.val().index());
        if self.bq8.q.val() {
            self.kind_bad.next = self.kind_s.val() > self.k_dk_max.val();
            self.kind_val.next = self.kind_s.val() == self.k_dk_batch.val()
                || self.kind_s.val() == self.k_dk_config.val();
            self.kind_cfg.next = self.kind_s.val() == self.k_dk_config.val();
        } else {
            self.kind_bad.next = self.kind_h.val() > self.k_dk_max.val();
            self.kind_val.next = self.kind_h.val() == self.k_dk_batch.val()
                || self.kind_h.val() == self.k_dk_config.val();
            self.kind_cfg.next = self.kind_h.val() == self.k_dk_config.val();
        }
        if self.bq9.q.val() {
            self.res_nz.next = self
                .s_data
                .val()
                .get_bits::<32>(self.o9_d_reserved.val().index())
                != self.k0_32.val();
        } else {
            self.res_nz.next = self
                .h9
                .q
                .val()
                .get_bits::<32>(self.o9_d_reserved.val().index())
                != self.k0_32.val();
        }
        self.sw_cnt_s.inp.next = self
            .s_data
            .val()
            .get_bits::<16>(self.o9_d_count.val().index());
        self.cnt_s.next = self.sw_cnt_s.out.val();
        self.sw_cnt_h.inp.next = self
            .h9
            .q
            .val()
            .get_bits::<16>(self.o9_d_count.val().index());
        self.cnt_h.next = self.sw_cnt_h.out.val();
        self.sw_n_e_len.inp.next = self
            .beats_n
            .out
            .val()
            .get_bits::<16>(self.o_e_len.val().index());
        self.n_e_len.next = self.sw_n_e_len.out.val();
        self.sw_n_e_seq.inp.next = self
            .beats_n
            .out
            .val()
            .get_bits::<64>(self.o_e_seq.val().index());
        self.n_e_seq.next = self.sw_n_e_seq.out.val();
        self.ck_tag.d.next = self.f_key_id.val().any();
        // `body_len + header + tag ≠ plen` as `body_len + (header + 8 + tag) ≠ udp_len`.
        if self.f_key_id.val().any() {
            self.hdr_udp.next = self.k_hdr_udp_tag.val();
        } else {
            self.hdr_udp.next = self.k_hdr_udp.val();
        }
        self.ck_eth.d.next = self.f_ether_type.val() != self.k_eth.val();
        self.ck_ip.d.next = self.f_ip_vihl.val() != self.k_vihl.val()
            || self.f_ip_total_len.val() < self.k20_16.val();
        self.ip_end.d.next = self.f_ip_total_len.val() + self.k14_16.val();
        self.ck_frag.d.next = (self.f_ip_frag.val() & self.k_frag_mask.val()) != self.k0_16.val()
            || self.f_ip_proto.val() != self.k_udp.val();
        // `total_len − 20 < 8` as `total_len < 28`: the same wherever it is read (after
        // `ck_ip`, so `total_len` ≥ 20); `udp_len ≠ total_len − 20` as `udp_len + 20 ≠
        // total_len` (modulo 2^16, the same).
        self.ck_udp.d.next = self.f_ip_total_len.val() < self.k28_16.val()
            || (self.f_udp_len.val() + self.k20_16.val()) != self.f_ip_total_len.val();
        self.ck_csum.d.next = self.f_udp_csum.val() != self.k0_16.val();
        // The payload length `plen` = `udp_len − 8` in these, compared as `udp_len` with the
        // bounds + 8: the same wherever they are read (after `ck_udp`, so `udp_len` ≥ 8).
        self.ck_short.d.next = self.f_udp_len.val() < self.k12_16.val();
        self.ck_long.d.next = self.f_udp_len.val() > self.k_max_udp.val();
        self.ck_magic.d.next = self.f_magic.val() != self.k_magic.val()
            || self.f_version.val() != self.k_version.val();
        self.ck_hdr.d.next = self.f_udp_len.val() < self.k_hdr_udp.val();
        self.ck_kind.d.next = self.f_kind.val() == self.k0_8.val()
            || self.f_kind.val() > self.k_kind_max.val()
            || (self.f_body_len.val() + self.hdr_udp.val()) != self.f_udp_len.val();
        self.ck_t_other.d.next = self.f_kind.val() != self.k_kind_decide.val();
        self.ck_t_head.d.next =
            self.f_body_len.val() < self.k_dhdr.val() || self.res_nz.val() || self.kind_bad.val();
        self.ck_t_value.d.next = self.kind_val.val();
        // A value: at least one entry (exactly one for CONFIG), and room for the entries'
        // headers (their insides are not checked here). HEARTBEAT and START carry no entries.
        self.ent_room.next = (self.f_body_len.val() - self.k_dhdr.val()) >> self.k_ehdr_shift.val();
        self.cnt_bad_s.next = self.cnt_s.val() == self.k0_16.val()
            || (self.kind_cfg.val() && self.cnt_s.val() != self.k1_count.val())
            || self.cnt_s.val() > self.ent_room.val();
        self.cnt_bad_h.next = self.cnt_h.val() == self.k0_16.val()
            || (self.kind_cfg.val() && self.cnt_h.val() != self.k1_count.val())
            || self.cnt_h.val() > self.ent_room.val();
        if self.bq9.q.val() {
            self.ck_t_count.d.next = self.cnt_bad_s.val();
            self.cnt_nz.next = self.cnt_s.val() != self.k0_16.val();
        } else {
            self.ck_t_count.d.next = self.cnt_bad_h.val();
            self.cnt_nz.next = self.cnt_h.val() != self.k0_16.val();
        }
        self.ck_t_empty.d.next = self.cnt_nz.val() || self.f_body_len.val() != self.k_dhdr.val();
        self.ck_c_other.d.next = self.f_kind.val() != self.k_kind_request.val();
        self.ck_c_entry.d.next = self.f_body_len.val() < self.k_ehdr.val()
            || (self.f_e_flags.val() & self.k_flags_other.val()) != self.k0_8.val()
            || self.f_e_reserved.val() != self.k0_8.val()
            || self.n_e_seq.val() == self.k0_64.val()
            || (self.n_e_len.val() + self.k_ehdr.val()) != self.f_body_len.val();
        self.ck_c_config.d.next = self.f_e_flags.val() == self.k_flag_config.val();
        self.ck_port.d.next = self.f_udp_dst.val() != self.port.val();
        self.ck_cluster.d.next = self.f_cluster.val() != self.cluster_id.val();
    }
}
