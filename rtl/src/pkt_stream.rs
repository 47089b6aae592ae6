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
//!   probed layout, then the payload bytes, those past `payload_len` zeroed): up to 144 bytes
//!   (18 words of 64 bits) in a slot of [`SlotRam`] (a memory per word: distributed RAM, not
//!   flip-flops), with the beat and lane where it starts in the frame (from the frame length
//!   before it, summed as the entries arrive, in registers). There are two banks of [`SLOTS`]
//!   (8) slots: each latched command's entries fill the bank the frame before it does not read, so
//!   they can arrive while that frame streams, as with the image, and nothing is copied when a
//!   frame starts;
//! - the body is read out word by word: each entry of the frame walks its words with a one-hot
//!   select (a register set 4 beats before the entry's first beat, then shifted; word k's
//!   memory is read at the slot that picks it, registered, then the picked word taken from
//!   the 18 memories' outputs and registered), and beat b's body bytes
//!   are, for every entry, its word and the one before it shifted to the entry's first lane (an
//!   8-way byte multiplexer), ORed: bytes outside an entry are zero. The body starts at frame
//!   byte 78 (beat 9, lane 6).
//!
//! So no select drives more than a word's worth of multiplexers and nothing wider than two
//! words is shifted (`pkt_gen` placed at 120 MHz with a 152-byte shifting packer; rtl/README
//! "Place and route"); the frame is up to 78 + 8 × 144 = 1,230 bytes (154 beats). Four readers
//! read the entries (reader r: entries r and r + 4), since 2026-12-06 (4 entries before it, then
//! 6, now 8: every slot of the two banks).
//!
//! The host path: in the first beat of a value frame (BATCH or CONFIG: a decision) `h_load` is
//! high; tree 0's frame is the host copy (`host_gen` takes its beats from `m0_*`).

use proto::frame;
use proto::wire::{self, DecideKind};
use rust_hdl::prelude::*;

use crate::pkt_gen::{GenReady, SLOTS, entry_head_map, header_map, ip_const_sum};
use crate::prim::{ByteAlign, ByteSwap, EntryHead, HeaderBytes, OnesAdd, PayloadMask, ZeroExtend};

/// Payload bytes an entry can carry.
pub const MAX_ENTRY_PAYLOAD: usize = 128;
/// Bits of an entry's wire bytes (16-byte header + payload).
pub const ENTRY_BITS: usize = 8 * (wire::ENTRY_HEADER_LEN + MAX_ENTRY_PAYLOAD);
/// 64-bit words of an entry's wire bytes.
pub const WORDS: usize = ENTRY_BITS / 64;
/// The longest frame (bytes): header and [`SLOTS`] entries of [`MAX_ENTRY_PAYLOAD`] bytes.
pub const MAX_FRAME: usize = HDR_LEN + SLOTS * (wire::ENTRY_HEADER_LEN + MAX_ENTRY_PAYLOAD);

/// DECIDE header bytes (Ethernet, IPv4, UDP, common and DECIDE headers).
const HDR_LEN: usize = 78;
const HDR_BEATS: u64 = 10;
const BODY_BEAT: u64 = 9;

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
}

block! {
    /// One tree's IPv4 header checksum for the streaming frame, registered: `!(ps + the group
    /// address's halves + total_len)`. The configuration's part takes two registered adders
    /// (`r_gs` = the group's halves, `r_pg` = `ps` + `r_gs`: configuration changes only while
    /// the core is disabled, so it is settled long before a send); `r_cs` adds the total length
    /// every cycle (valid from beat 1's cycle; the checksum is in beat 3). The order of the terms
    /// does not change the sum (a one's-complement sum is 0 only when every term is).
    pub struct TreeChecksum() {
        pub clock: Signal<In, Clock>,
        pub group: Signal<In, Bits<32>>,
        /// IPv4 checksum's part common to all trees (constant words + source address + TTL),
        /// registered.
        pub ps: Signal<In, Bits<16>>,
        /// The streaming frame's IPv4 total length, a register.
        pub total_len: Signal<In, Bits<16>>,
        pub csum: Signal<Out, Bits<16>>,
        r_gs: DFF<Bits<16>>,
        r_pg: DFF<Bits<16>>,
        r_cs: DFF<Bits<16>>,
        add_gs: OnesAdd,
        add_pg: OnesAdd,
        add_cs: OnesAdd,
    }
}

impl Default for TreeChecksum {
    fn default() -> Self {
        Self::build()
    }
}

impl Logic for TreeChecksum {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_gs, r_pg, r_cs);
        self.add_gs.a.next = self.group.val().get_bits::<16>(16);
        self.add_gs.b.next = self.group.val().get_bits::<16>(0);
        self.r_gs.d.next = self.add_gs.out.val();
        self.add_pg.a.next = self.ps.val();
        self.add_pg.b.next = self.r_gs.q.val();
        self.r_pg.d.next = self.add_pg.out.val();
        self.add_cs.a.next = self.r_pg.q.val();
        self.add_cs.b.next = self.total_len.val();
        self.r_cs.d.next = !self.add_cs.out.val();
        self.csum.next = self.r_cs.q.val();
    }
}

block! {
    /// One tree's header beat: the 78 DECIDE header bytes for this tree (destination MAC/IP, IPv4
    /// checksum, `tree` byte), beat `beat` of them (0 past beat 9).
    pub struct TreeHeader(tree: u8) {
        pub group: Signal<In, Bits<32>>,
        /// The IPv4 header checksum (registered by `PktGen`).
        pub ip_csum: Signal<In, Bits<16>>,
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
        hdr: HeaderBytes = HeaderBytes::new(header_map()),
        xh: ZeroExtend<624, 640>,
        boff: Signal<Local, Bits<10>>,
        bw: ZeroExtend<8, 10>,
        k_tree: Constant<Bits<8>> = k(tree as u64),
        k6_10: Constant<Bits<10>> = k(6),
        k_hdr_beats: Constant<Bits<10>> = k(HDR_BEATS),
        k_mac_mask: Constant<Bits<24>> = k(0x7F_FFFF),
        k0_64: Constant<Bits<64>> = k(0),
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
        self.hdr.ip_csum.next = self.ip_csum.val();
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

/// Entries per bank of the generator's slots ([`SLOTS`]: every one is used).
pub const BANK: usize = 8;
/// Slot address bits: bank, then the entry in the bank.
pub const SLOT_BITS: usize = 4;
/// Slots of the generator: two banks.
pub const BANK_SLOTS: usize = 2 * BANK;
/// Readers of the slots: reader r reads entries r, r + 4, … of a frame.
pub const READERS: usize = 4;
/// `r_ng`'s width: one-hot counts 0..=BANK.
const NG: usize = BANK + 1;
const _: () = assert!(SLOTS == BANK && BANK_SLOTS == 1 << SLOT_BITS && SLOTS <= 2 * READERS);

/// Slots of the streaming generator: [`BANK_SLOTS`] entries' wire bytes (two banks of
/// [`BANK`]), read by [`READERS`] readers one 64-bit word per cycle each. An entry arrives whole
/// (`wdata`, written at slot `waddr` when `we`), so each of the [`WORDS`] words of a slot is a
/// memory of its own (word k of every slot: [`BANK_SLOTS`] × 64 bits, synchronous write,
/// registered read: distributed RAM in a vendor flow) instead of 1,152 flip-flops per slot.
/// Reader r reads, at slot `addr<r>`, the word its one-hot `sel<r>` picks, and `out<r>` is that
/// word in the next cycle (0 when nothing was picked), as a register fed by a word multiplexer
/// would give it. Word k's memory is read at the address of the reader whose select has bit k;
/// at most one reader picks a given word in a cycle (the generator's readers start their walks
/// in different cycles and shift one word per cycle; the simulator panics otherwise). A write
/// and a read of the same slot in one cycle read the old word (never done: a command's entries
/// fill the bank the streaming frame does not read).
#[derive(LogicBlock)]
pub struct SlotRam {
    pub clock: Signal<In, Clock>,
    pub we: Signal<In, Bit>,
    pub waddr: Signal<In, Bits<SLOT_BITS>>,
    pub wdata: Signal<In, Bits<ENTRY_BITS>>,
    pub sel0: Signal<In, Bits<WORDS>>,
    pub sel1: Signal<In, Bits<WORDS>>,
    pub sel2: Signal<In, Bits<WORDS>>,
    pub sel3: Signal<In, Bits<WORDS>>,
    pub addr0: Signal<In, Bits<SLOT_BITS>>,
    pub addr1: Signal<In, Bits<SLOT_BITS>>,
    pub addr2: Signal<In, Bits<SLOT_BITS>>,
    pub addr3: Signal<In, Bits<SLOT_BITS>>,
    pub out0: Signal<Out, Bits<64>>,
    pub out1: Signal<Out, Bits<64>>,
    pub out2: Signal<Out, Bits<64>>,
    pub out3: Signal<Out, Bits<64>>,
    /// Simulation state: the slots' words (`mem[slot][word]`) and each reader's word read in
    /// the last cycle.
    _mem: Box<[[u64; WORDS]; BANK_SLOTS]>,
    _out: [u64; READERS],
}

impl Default for SlotRam {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            we: Default::default(),
            waddr: Default::default(),
            wdata: Default::default(),
            sel0: Default::default(),
            addr0: Default::default(),
            out0: Default::default(),
            sel1: Default::default(),
            addr1: Default::default(),
            out1: Default::default(),
            sel2: Default::default(),
            addr2: Default::default(),
            out2: Default::default(),
            sel3: Default::default(),
            addr3: Default::default(),
            out3: Default::default(),
            _mem: Box::new([[0; WORDS]; BANK_SLOTS]),
            _out: [0; READERS],
        }
    }
}

const _: () = assert!(READERS == 4 && WORDS <= 64);

impl Logic for SlotRam {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let reads = [
                (self.sel0.val(), self.addr0.val()),
                (self.sel1.val(), self.addr1.val()),
                (self.sel2.val(), self.addr2.val()),
                (self.sel3.val(), self.addr3.val()),
            ];
            let mut taken = 0u64;
            for (r, (sel, addr)) in reads.iter().enumerate() {
                let sel = crate::prim::val(*sel);
                assert!(
                    sel & taken == 0,
                    "SlotRam: two readers read word(s) {:#x} in one cycle",
                    sel & taken
                );
                taken |= sel;
                let slot = &self._mem[addr.index()];
                self._out[r] = (0..WORDS)
                    .filter(|&k| sel >> k & 1 == 1)
                    .fold(0, |o, k| o | slot[k]);
            }
            if self.we.val() {
                let w = self.wdata.val();
                let slot = &mut self._mem[self.waddr.val().index()];
                for (k, word) in slot.iter_mut().enumerate() {
                    *word = crate::prim::word(w, 64 * k);
                }
            }
        }
        self.out0.next = Bits::from(self._out[0]);
        self.out1.next = Bits::from(self._out[1]);
        self.out2.next = Bits::from(self._out[2]);
        self.out3.next = Bits::from(self._out[3]);
    }
    fn connect(&mut self) {
        self.out0.connect();
        self.out1.connect();
        self.out2.connect();
        self.out3.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        for k in 0..WORDS {
            v += &format!(
                "reg [63:0] m{k} [0:{}];\nreg [63:0] rd{k};\n",
                BANK_SLOTS - 1
            );
            // Word k's read address: that of the reader whose select has bit k.
            let terms: Vec<String> = (0..READERS)
                .map(|r| format!("({{{SLOT_BITS}{{sel{r}[{k}]}}}} & addr{r})"))
                .collect();
            v += &format!(
                "wire [{}:0] ra{k} = {};\n",
                SLOT_BITS - 1,
                terms.join(" | ")
            );
        }
        for r in 0..READERS {
            v += &format!("reg [{}:0] sd{r};\n", WORDS - 1);
        }
        // Everything starts at 0, as in the simulator (an FPGA's power-on values).
        v += "integer i;\ninitial begin\n";
        v += &format!("    for (i = 0; i < {BANK_SLOTS}; i = i + 1) begin\n");
        for k in 0..WORDS {
            v += &format!("        m{k}[i] = 64'd0;\n");
        }
        v += "    end\n";
        for k in 0..WORDS {
            v += &format!("    rd{k} = 64'd0;\n");
        }
        for r in 0..READERS {
            v += &format!("    sd{r} = {WORDS}'d0;\n");
        }
        v += "end\nalways @(posedge clock) begin\n";
        for k in 0..WORDS {
            v += &format!("    rd{k} <= m{k}[ra{k}];\n");
        }
        for r in 0..READERS {
            v += &format!("    sd{r} <= sel{r};\n");
        }
        v += "    if (we) begin\n";
        for k in 0..WORDS {
            v += &format!(
                "        m{k}[waddr] <= wdata[{}:{}];\n",
                64 * k + 63,
                64 * k
            );
        }
        v += "    end\nend\nalways @(*) begin\n";
        for r in 0..READERS {
            let terms: Vec<String> = (0..WORDS)
                .map(|k| format!("({{64{{sd{r}[{k}]}}}} & rd{k})"))
                .collect();
            v += &format!("    out{r} = {};\n", terms.join("\n        | "));
        }
        v += "end";
        Verilog::Custom(v)
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
        /// The streaming frame's UDP length in bytes (frame length - 34), from a register: the
        /// host path checks it in `h_load`'s cycle.
        pub h_ulen: Signal<Out, Bits<16>>,
        /// Trees 1..3 in use (`trees` > k), from registers: a frame streams on the trees in use
        /// when it starts (`nc_engine` asks their output FIFOs for room, and only theirs).
        pub use1: Signal<Out, Bit>,
        pub use2: Signal<Out, Bit>,
        pub use3: Signal<Out, Bit>,
        /// `trees` > k, registered (`trees` is written only while the core is disabled): no
        /// comparison of the configuration between the start decision and the streams.
        r_use0: DFF<Bit>,
        r_use1: DFF<Bit>,
        r_use2: DFF<Bit>,
        r_use3: DFF<Bit>,
        /// The streaming frame goes out on tree k (`r_use<k>` when it started).
        r_on0: DFF<Bit>,
        r_on1: DFF<Bit>,
        r_on2: DFF<Bit>,
        r_on3: DFF<Bit>,
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
        /// `r_n_got` one-hot (bit i: i entries so far, 0..=SLOTS).
        r_ng: DFFWithInit<Bits<NG>> = DFFWithInit::new(Bits::<NG>::from(1u64)),
        /// `r_n_got` equals `r_c_count`.
        r_eq: DFFWithInit<Bit> = DFFWithInit::new(true),
        r_lastkeep: DFF<Bits<8>>,
        /// The streaming frame's lengths, set when it starts from the summed length `r_len`:
        /// its IPv4 total length, UDP length and DECIDE body length (no subtractor between a
        /// register and an output beat).
        r_f_tl: DFF<Bits<16>>,
        r_f_ulen: DFF<Bits<16>>,
        r_f_bl: DFF<Bits<16>>,
        /// Each tree's IPv4 checksum for the streaming frame, registered.
        tc0: TreeChecksum,
        tc1: TreeChecksum,
        tc2: TreeChecksum,
        tc3: TreeChecksum,
        r_f_kind: DFF<Bits<2>>,
        r_f_count: DFF<Bits<8>>,
        r_f_instance: DFF<Bits<64>>,
        r_f_epoch: DFF<Bits<32>>,
        r_f_seq: DFF<Bits<32>>,
        /// The header and the waiting command's entries so far: the waiting frame's length.
        r_len: DFFWithInit<Bits<16>> = DFFWithInit::new(Bits::<16>::from(HDR_LEN as u64)),
        /// The bank the waiting command's entries fill (each latched command takes the other
        /// one), and the bank the streaming frame reads.
        r_cb: DFF<Bit>,
        r_fb: DFF<Bit>,
        /// The slot the next entry goes to (`r_ng` in bank `r_cb`), one-hot per bank, kept a
        /// cycle ahead so that a slot's write enable is the entry's `e_valid` and one flip-flop.
        r_wsa: DFFWithInit<Bits<BANK>> = DFFWithInit::new(Bits::<BANK>::from(1u64)),
        r_wsb: DFF<Bits<BANK>>,
        // Two banks of BANK entry slots: an entry's first beat in the frame less 5 (`r_q<bank><slot>`)
        // and its first lane (`r_a<bank><slot>`), both from the frame length before it; its wire
        // bytes are in `slots`.
        r_q00: DFF<Bits<8>>,
        r_q01: DFF<Bits<8>>,
        r_q02: DFF<Bits<8>>,
        r_q03: DFF<Bits<8>>,
        r_q04: DFF<Bits<8>>,
        r_q05: DFF<Bits<8>>,
        r_q06: DFF<Bits<8>>,
        r_q07: DFF<Bits<8>>,
        r_q10: DFF<Bits<8>>,
        r_q11: DFF<Bits<8>>,
        r_q12: DFF<Bits<8>>,
        r_q13: DFF<Bits<8>>,
        r_q14: DFF<Bits<8>>,
        r_q15: DFF<Bits<8>>,
        r_q16: DFF<Bits<8>>,
        r_q17: DFF<Bits<8>>,
        r_a00: DFF<Bits<3>>,
        r_a01: DFF<Bits<3>>,
        r_a02: DFF<Bits<3>>,
        r_a03: DFF<Bits<3>>,
        r_a04: DFF<Bits<3>>,
        r_a05: DFF<Bits<3>>,
        r_a06: DFF<Bits<3>>,
        r_a07: DFF<Bits<3>>,
        r_a10: DFF<Bits<3>>,
        r_a11: DFF<Bits<3>>,
        r_a12: DFF<Bits<3>>,
        r_a13: DFF<Bits<3>>,
        r_a14: DFF<Bits<3>>,
        r_a15: DFF<Bits<3>>,
        r_a16: DFF<Bits<3>>,
        r_a17: DFF<Bits<3>>,
        /// The entries' wire bytes, in [`SlotRam`] (slot `BANK · bank + i`).
        slots: SlotRam,
        /// The slot the next entry is written to (`BANK` · bank + the count so far mod
        /// `BANK`), a register kept beside `r_wsa`/`r_wsb` (which say whether it is written),
        /// so the slots' write address comes from a flip-flop, not a priority chain.
        r_wa: DFF<Bits<SLOT_BITS>>,
        n_lo: Signal<Local, Bits<SLOT_BITS>>,
        // Four readers: reader r reads entries r, r + 4, … of the streaming frame in turn. The
        // entry it waits for: in the frame (`r_fe`), first beat less 5 (`r_fq`), first lane
        // (`r_pa`), its second (`r_pn`, entry r + 4); the entry it reads: first lane (`r_fa`),
        // slot (`r_sl`), the one-hot word it reads next (`r_sel`); the words read (`r_win`, and
        // bytes 1..8 of the one before it, `r_wp`).
        r_fe0: DFF<Bit>,
        r_fq0: DFF<Bits<8>>,
        r_pa0: DFF<Bits<3>>,
        r_pn0: DFF<Bit>,
        r_fa0: DFF<Bits<3>>,
        r_sl0: DFF<Bits<SLOT_BITS>>,
        r_sel0: DFF<Bits<WORDS>>,
        r_win0: DFF<Bits<64>>,
        r_wp0: DFF<Bits<56>>,
        r_fe1: DFF<Bit>,
        r_fq1: DFF<Bits<8>>,
        r_pa1: DFF<Bits<3>>,
        r_pn1: DFF<Bit>,
        r_fa1: DFF<Bits<3>>,
        r_sl1: DFF<Bits<SLOT_BITS>>,
        r_sel1: DFF<Bits<WORDS>>,
        r_win1: DFF<Bits<64>>,
        r_wp1: DFF<Bits<56>>,
        r_fe2: DFF<Bit>,
        r_fq2: DFF<Bits<8>>,
        r_pa2: DFF<Bits<3>>,
        r_pn2: DFF<Bit>,
        r_fa2: DFF<Bits<3>>,
        r_sl2: DFF<Bits<SLOT_BITS>>,
        r_sel2: DFF<Bits<WORDS>>,
        r_win2: DFF<Bits<64>>,
        r_wp2: DFF<Bits<56>>,
        r_fe3: DFF<Bit>,
        r_fq3: DFF<Bits<8>>,
        r_pa3: DFF<Bits<3>>,
        r_pn3: DFF<Bit>,
        r_fa3: DFF<Bits<3>>,
        r_sl3: DFF<Bits<SLOT_BITS>>,
        r_sel3: DFF<Bits<WORDS>>,
        r_win3: DFF<Bits<64>>,
        r_wp3: DFF<Bits<56>>,
        /// The next beat's body bytes; this beat is a body beat (`r_body`).
        r_bw: DFF<Bits<64>>,
        r_body: DFF<Bit>,
        /// The frame's first beat (`start` in the cycle before).
        r_st: DFF<Bit>,
        /// `h_load` for the next cycle: a value frame (BATCH or CONFIG) starts.
        r_hl: DFF<Bit>,
        al0: ByteAlign,
        al1: ByteAlign,
        al2: ByteAlign,
        al3: ByteAlign,
        start: Signal<Local, Bit>,
        last_beat: Signal<Local, Bit>,
        ng_next: Signal<Local, Bits<NG>>,
        got_any: Signal<Local, Bit>,
        /// The count so far after this cycle if no frame starts, and `r_eq` for each count the
        /// waiting command may have after it (a send taken now, or the one waiting).
        ng_w: Signal<Local, Bits<NG>>,
        eq_send: Signal<Local, Bit>,
        eq_wait: Signal<Local, Bit>,
        wr_ok: Signal<Local, Bit>,
        latch: Signal<Local, Bit>,
        cb_next: Signal<Local, Bit>,
        lq: Signal<Local, Bits<8>>,
        la: Signal<Local, Bits<3>>,
        hit0: Signal<Local, Bit>,
        r_hit0: DFF<Bit>,
        hit1: Signal<Local, Bit>,
        r_hit1: DFF<Bit>,
        hit2: Signal<Local, Bit>,
        r_hit2: DFF<Bit>,
        hit3: Signal<Local, Bit>,
        r_hit3: DFF<Bit>,
        add_ps_a: OnesAdd,
        ps_b: Signal<Local, Bits<16>>,
        add_ps_c: OnesAdd,
        ps_d: Signal<Local, Bits<16>>,
        add_ps_e: OnesAdd,
        ps_f: Signal<Local, Bits<16>>,
        pm: PayloadMask,
        e_img: Signal<Local, Bits<ENTRY_BITS>>,
        elenw: ZeroExtend<8, 16>,
        head: EntryHead = EntryHead::new(entry_head_map()),
        swap: ByteSwap<1024>,
        xhead: ZeroExtend<128, ENTRY_BITS>,
        xpay: ZeroExtend<1024, ENTRY_BITS>,
        l_len: Signal<Local, Bits<16>>,
        l_nbeats: Signal<Local, Bits<8>>,
        l_last1: Signal<Local, Bits<3>>,
        body: Signal<Local, Bits<64>>,
        kindw: ZeroExtend<2, 8>,
        countw: ZeroExtend<8, 16>,
        ttlw: ZeroExtend<8, 16>,
        th0: TreeHeader = TreeHeader::build(0),
        th1: TreeHeader = TreeHeader::build(1),
        th2: TreeHeader = TreeHeader::build(2),
        th3: TreeHeader = TreeHeader::build(3),
        k0_8: Constant<Bits<8>> = k(0),
        k1_8: Constant<Bits<8>> = k(1),
        k2_8: Constant<Bits<8>> = k(2),
        k5_8: Constant<Bits<8>> = k(5),
        k_body_beat: Constant<Bits<8>> = k(BODY_BEAT),
        k8_16: Constant<Bits<16>> = k(8),
        k16_16: Constant<Bits<16>> = k(wire::ENTRY_HEADER_LEN as u64),
        k128_16: Constant<Bits<16>> = k(128),
        k_hdr_len: Constant<Bits<16>> = k(HDR_LEN as u64),
        k_eth: Constant<Bits<16>> = k(frame::ETH_LEN as u64),
        k_udp_off: Constant<Bits<16>> = k((frame::ETH_LEN + frame::IPV4_LEN) as u64),
        k_pkt_off: Constant<Bits<16>> = k((frame::PAYLOAD_OFFSET + wire::HEADER_LEN) as u64),
        k_ipsum: Constant<Bits<16>> = k(ip_const_sum()),
        k_keep_all: Constant<Bits<8>> = k(0xFF),
        k0_3: Constant<Bits<3>> = k(0),
        k1_3: Constant<Bits<3>> = k(1),
        k_ng0: Constant<Bits<NG>> = k(1),
        k0_ng: Constant<Bits<NG>> = k(0),
        k1_ng: Constant<Bits<NG>> = k(1),
        k_full: Constant<Bits<NG>> = k(1 << SLOTS),
        k0_bank: Constant<Bits<BANK>> = k(0),
        k1_5: Constant<Bits<5>> = k(1),
        k7_3: Constant<Bits<3>> = k(7),
        ks00: Constant<Bits<SLOT_BITS>> = k(0),
        ks01: Constant<Bits<SLOT_BITS>> = k(1),
        ks02: Constant<Bits<SLOT_BITS>> = k(2),
        ks03: Constant<Bits<SLOT_BITS>> = k(3),
        ks04: Constant<Bits<SLOT_BITS>> = k(4),
        ks05: Constant<Bits<SLOT_BITS>> = k(5),
        ks06: Constant<Bits<SLOT_BITS>> = k(6),
        ks07: Constant<Bits<SLOT_BITS>> = k(7),
        ks10: Constant<Bits<SLOT_BITS>> = k(8),
        ks11: Constant<Bits<SLOT_BITS>> = k(9),
        ks12: Constant<Bits<SLOT_BITS>> = k(10),
        ks13: Constant<Bits<SLOT_BITS>> = k(11),
        ks14: Constant<Bits<SLOT_BITS>> = k(12),
        ks15: Constant<Bits<SLOT_BITS>> = k(13),
        ks16: Constant<Bits<SLOT_BITS>> = k(14),
        ks17: Constant<Bits<SLOT_BITS>> = k(15),
        ke0: Constant<Bits<8>> = k(0),
        ke1: Constant<Bits<8>> = k(1),
        ke2: Constant<Bits<8>> = k(2),
        ke3: Constant<Bits<8>> = k(3),
        ke4: Constant<Bits<8>> = k(4),
        ke5: Constant<Bits<8>> = k(5),
        ke6: Constant<Bits<8>> = k(6),
        ke7: Constant<Bits<8>> = k(7),
        k_batch: Constant<Bits<2>> = k(DecideKind::Batch as u64),
        k_config: Constant<Bits<2>> = k(DecideKind::Config as u64),
        k0_w: Constant<Bits<WORDS>> = k(0),
        k1_w: Constant<Bits<WORDS>> = k(1),
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

// The header ends in beat 9, lane 6 (where entry 0 starts: its lane `r_a` is 6).
const _: () = assert!(HDR_LEN / 8 == BODY_BEAT as usize && HDR_LEN % 8 == 6);
const _: () = assert!(MAX_FRAME.div_ceil(8) < 256);

impl Logic for PktGen {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            r_use0,
            r_use1,
            r_use2,
            r_use3,
            r_on0,
            r_on1,
            r_on2,
            r_on3,
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
            r_f_tl,
            r_f_ulen,
            r_f_bl,
            r_f_kind,
            r_f_count,
            r_f_instance,
            r_f_epoch,
            r_f_seq,
            r_len,
            r_cb,
            r_fb,
            r_wsa,
            r_wsb,
            r_wa,
            r_q00,
            r_q01,
            r_q02,
            r_q03,
            r_q04,
            r_q05,
            r_q06,
            r_q07,
            r_q10,
            r_q11,
            r_q12,
            r_q13,
            r_q14,
            r_q15,
            r_q16,
            r_q17,
            r_a00,
            r_a01,
            r_a02,
            r_a03,
            r_a04,
            r_a05,
            r_a06,
            r_a07,
            r_a10,
            r_a11,
            r_a12,
            r_a13,
            r_a14,
            r_a15,
            r_a16,
            r_a17,
            r_fe0,
            r_fq0,
            r_pa0,
            r_pn0,
            r_fa0,
            r_sl0,
            r_sel0,
            r_win0,
            r_hit0,
            r_wp0,
            r_fe1,
            r_fq1,
            r_pa1,
            r_pn1,
            r_fa1,
            r_sl1,
            r_sel1,
            r_win1,
            r_hit1,
            r_wp1,
            r_fe2,
            r_fq2,
            r_pa2,
            r_pn2,
            r_fa2,
            r_sl2,
            r_sel2,
            r_win2,
            r_hit2,
            r_wp2,
            r_fe3,
            r_fq3,
            r_pa3,
            r_pn3,
            r_fa3,
            r_sl3,
            r_sel3,
            r_win3,
            r_hit3,
            r_wp3,
            r_bw,
            r_body,
            r_st,
            r_hl
        );
        // An arriving entry as wire bytes: the 16-byte header, then the payload (first byte
        // first, bytes past payload_len zero).
        self.elenw.narrow.next = self.e_len.val();
        self.pm.data.next = self.e_payload.val();
        self.pm.len.next = self.e_len.val();
        self.swap.inp.next = self.pm.out.val();
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
        // Beats: len / 8, rounded up (a frame is at most [`MAX_FRAME`] bytes: 1,230, 154 beats).
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
        self.latch.next = self.send.val() && (!self.r_c_pending.q.val() || self.start.val());
        // A latched command's entries go to the bank the frame before it does not read.
        if self.latch.val() {
            self.cb_next.next = !self.r_cb.q.val();
        } else {
            self.cb_next.next = self.r_cb.q.val();
        }
        self.r_cb.d.next = self.cb_next.val();
        if self.latch.val() {
            self.r_c_pending.d.next = true;
            self.r_c_kind.d.next = self.send_kind.val();
            self.r_c_count.d.next = self.send_count.val();
            self.r_c_instance.d.next = self.send_instance.val();
            self.r_c_epoch.d.next = self.send_epoch.val();
            self.r_c_seq.d.next = self.send_seq.val();
        } else if self.start.val() {
            self.r_c_pending.d.next = false;
        }
        // Entries of the waiting command, in order, into its bank's slots: slot i is written
        // when the count so far is i (`r_ng`, one-hot; `r_wsa`/`r_wsb` per bank); `r_eq` says
        // the count so far is the waiting command's. Both are kept as the entries arrive, so
        // that `start` and the slots' write enable and address follow registers by a gate or
        // two. A frame's start begins the count again; no entry arrives in that cycle
        // (`egress_fifo` streams a send's entries from 2 cycles after it, and the next send is
        // taken in the start cycle at the earliest).
        self.got_any.next = (self.r_ng.q.val() & self.k_full.val()) == self.k0_ng.val();
        self.wr_ok.next = self.e_valid.val() && self.got_any.val();
        if self.start.val() {
            self.r_len.d.next = self.k_hdr_len.val();
            self.r_n_got.d.next = self.k0_8.val();
            self.ng_next.next = self.k_ng0.val();
        } else if self.wr_ok.val() {
            self.r_len.d.next = self.r_len.q.val() + self.k16_16.val() + self.elenw.wide.val();
            self.r_n_got.d.next = self.r_n_got.q.val() + self.k1_8.val();
            self.ng_next.next = self.r_ng.q.val() << self.k1_ng.val();
        } else {
            self.ng_next.next = self.r_ng.q.val();
        }
        self.r_ng.d.next = self.ng_next.val();
        if self.cb_next.val() {
            self.r_wsa.d.next = self.k0_bank.val();
            self.r_wsb.d.next = self.ng_next.val().get_bits::<BANK>(0);
        } else {
            self.r_wsa.d.next = self.ng_next.val().get_bits::<BANK>(0);
            self.r_wsb.d.next = self.k0_bank.val();
        }
        // The same slot as a binary address: the count after this cycle mod `BANK` (a count
        // of `BANK` or more writes no slot: `r_wsa`/`r_wsb` are then 0), in the bank `cb_next`.
        if self.start.val() {
            self.n_lo.next = self.ks00.val();
        } else if self.wr_ok.val() {
            self.n_lo.next =
                (self.r_n_got.q.val().get_bits::<SLOT_BITS>(0) + self.ks01.val()) & self.ks07.val();
        } else {
            self.n_lo.next = self.r_n_got.q.val().get_bits::<SLOT_BITS>(0) & self.ks07.val();
        }
        if self.cb_next.val() {
            self.r_wa.d.next = self.n_lo.val() | self.ks10.val();
        } else {
            self.r_wa.d.next = self.n_lo.val();
        }
        // `r_eq` after this cycle: the count so far (0 when a frame starts, else `ng_w`) equals
        // the waiting command's count (a send taken now replaces it: `latch`, which is `send`
        // when a frame starts and `send && !r_c_pending` otherwise). Judged for each case from
        // registers and inputs, and picked last by `start`, so that `start` does not drive the
        // count's decoder.
        if self.wr_ok.val() {
            self.ng_w.next = self.r_ng.q.val() << self.k1_ng.val();
        } else {
            self.ng_w.next = self.r_ng.q.val();
        }
        self.eq_send.next =
            (self.ng_w.val() & (self.k1_ng.val() << self.send_count.val())) != self.k0_ng.val();
        self.eq_wait.next =
            (self.ng_w.val() & (self.k1_ng.val() << self.r_c_count.q.val())) != self.k0_ng.val();
        if self.start.val() {
            if self.send.val() {
                self.r_eq.d.next = self.send_count.val() == self.k0_8.val();
            } else {
                self.r_eq.d.next = self.r_c_count.q.val() == self.k0_8.val();
            }
        } else if self.send.val() && !self.r_c_pending.q.val() {
            self.r_eq.d.next = self.eq_send.val();
        } else {
            self.r_eq.d.next = self.eq_wait.val();
        }
        // Where the entry goes in the frame: it starts at frame byte `r_len`, so in beat
        // `r_len / 8` (kept less 5: the cycle before its first word's read starts), lane
        // `r_len mod 8`.
        self.lq.next = self.r_len.q.val().get_bits::<8>(3) - self.k5_8.val();
        self.la.next = self.r_len.q.val().get_bits::<3>(0);
        // Its wire bytes go to the slot's words in `slots`, its place to the slot's registers.
        self.slots.clock.next = self.clock.val();
        self.slots.waddr.next = self.r_wa.q.val();
        self.slots.wdata.next = self.e_img.val();
        self.slots.we.next =
            self.e_valid.val() && ((self.r_wsa.q.val() | self.r_wsb.q.val()) != self.k0_bank.val());
        if self.e_valid.val() && self.r_wsa.q.val().get_bit(0) {
            self.r_q00.d.next = self.lq.val();
            self.r_a00.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsb.q.val().get_bit(0) {
            self.r_q10.d.next = self.lq.val();
            self.r_a10.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsa.q.val().get_bit(1) {
            self.r_q01.d.next = self.lq.val();
            self.r_a01.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsb.q.val().get_bit(1) {
            self.r_q11.d.next = self.lq.val();
            self.r_a11.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsa.q.val().get_bit(2) {
            self.r_q02.d.next = self.lq.val();
            self.r_a02.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsb.q.val().get_bit(2) {
            self.r_q12.d.next = self.lq.val();
            self.r_a12.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsa.q.val().get_bit(3) {
            self.r_q03.d.next = self.lq.val();
            self.r_a03.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsb.q.val().get_bit(3) {
            self.r_q13.d.next = self.lq.val();
            self.r_a13.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsa.q.val().get_bit(4) {
            self.r_q04.d.next = self.lq.val();
            self.r_a04.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsb.q.val().get_bit(4) {
            self.r_q14.d.next = self.lq.val();
            self.r_a14.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsa.q.val().get_bit(5) {
            self.r_q05.d.next = self.lq.val();
            self.r_a05.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsb.q.val().get_bit(5) {
            self.r_q15.d.next = self.lq.val();
            self.r_a15.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsa.q.val().get_bit(6) {
            self.r_q06.d.next = self.lq.val();
            self.r_a06.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsb.q.val().get_bit(6) {
            self.r_q16.d.next = self.lq.val();
            self.r_a16.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsa.q.val().get_bit(7) {
            self.r_q07.d.next = self.lq.val();
            self.r_a07.d.next = self.la.val();
        }
        if self.e_valid.val() && self.r_wsb.q.val().get_bit(7) {
            self.r_q17.d.next = self.lq.val();
            self.r_a17.d.next = self.la.val();
        }
        // The body: every entry of the frame reads its words in turn (reader r reads entries
        // r, r + 4, …), the word for beat b read from its memory in `slots` in the cycle of beat
        // b − 3 (`r_sel` one-hot, set to word 0 in beat `first beat − 3` by a comparison
        // registered in the beat before (`r_hit`), then shifted, cleared in a frame's first
        // beat), picked from the memories' outputs in beat b − 2 (`r_win`), and beat b's body
        // bytes are each reader's word and the one before it, aligned to its entry's first lane
        // and ORed in beat b − 1 (`r_bw`): bytes outside an entry are zero (a slot's words past
        // its entry are zero, and a reader's next entry starts at least 6 beats after its last
        // one ends, so its walk over them reads zeros). A reader takes its next entry's lane and
        // slot when the walk starts, and the entry after it to wait for: every select comes from
        // a register; nothing is shifted by a variable amount wider than a word (rtl/README
        // "Place and route").
        self.hit0.next = self.r_streaming.q.val()
            && self.r_fe0.q.val()
            && (self.r_beat.q.val() == self.r_fq0.q.val());
        self.r_hit0.d.next = self.hit0.val() && !self.start.val();
        if self.r_st.q.val() {
            self.r_sel0.d.next = self.k0_w.val();
        } else if self.r_hit0.q.val() {
            self.r_sel0.d.next = self.k1_w.val();
        } else {
            self.r_sel0.d.next = self.r_sel0.q.val() << self.k1_5.val();
        }
        if self.r_hit0.q.val() {
            self.r_fa0.d.next = self.r_pa0.q.val();
            if self.r_fb.q.val() && self.r_pn0.q.val() {
                self.r_sl0.d.next = self.ks14.val();
            } else if self.r_fb.q.val() {
                self.r_sl0.d.next = self.ks10.val();
            } else if self.r_pn0.q.val() {
                self.r_sl0.d.next = self.ks04.val();
            } else {
                self.r_sl0.d.next = self.ks00.val();
            }
        }
        self.slots.sel0.next = self.r_sel0.q.val();
        self.slots.addr0.next = self.r_sl0.q.val();
        self.r_win0.d.next = self.slots.out0.val();
        self.r_wp0.d.next = self.r_win0.q.val().get_bits::<56>(8);
        self.al0.hi.next = self.r_win0.q.val();
        self.al0.lo.next = self.r_wp0.q.val();
        self.al0.a.next = self.r_fa0.q.val();
        self.hit1.next = self.r_streaming.q.val()
            && self.r_fe1.q.val()
            && (self.r_beat.q.val() == self.r_fq1.q.val());
        self.r_hit1.d.next = self.hit1.val() && !self.start.val();
        if self.r_st.q.val() {
            self.r_sel1.d.next = self.k0_w.val();
        } else if self.r_hit1.q.val() {
            self.r_sel1.d.next = self.k1_w.val();
        } else {
            self.r_sel1.d.next = self.r_sel1.q.val() << self.k1_5.val();
        }
        if self.r_hit1.q.val() {
            self.r_fa1.d.next = self.r_pa1.q.val();
            if self.r_fb.q.val() && self.r_pn1.q.val() {
                self.r_sl1.d.next = self.ks15.val();
            } else if self.r_fb.q.val() {
                self.r_sl1.d.next = self.ks11.val();
            } else if self.r_pn1.q.val() {
                self.r_sl1.d.next = self.ks05.val();
            } else {
                self.r_sl1.d.next = self.ks01.val();
            }
        }
        self.slots.sel1.next = self.r_sel1.q.val();
        self.slots.addr1.next = self.r_sl1.q.val();
        self.r_win1.d.next = self.slots.out1.val();
        self.r_wp1.d.next = self.r_win1.q.val().get_bits::<56>(8);
        self.al1.hi.next = self.r_win1.q.val();
        self.al1.lo.next = self.r_wp1.q.val();
        self.al1.a.next = self.r_fa1.q.val();
        self.hit2.next = self.r_streaming.q.val()
            && self.r_fe2.q.val()
            && (self.r_beat.q.val() == self.r_fq2.q.val());
        self.r_hit2.d.next = self.hit2.val() && !self.start.val();
        if self.r_st.q.val() {
            self.r_sel2.d.next = self.k0_w.val();
        } else if self.r_hit2.q.val() {
            self.r_sel2.d.next = self.k1_w.val();
        } else {
            self.r_sel2.d.next = self.r_sel2.q.val() << self.k1_5.val();
        }
        if self.r_hit2.q.val() {
            self.r_fa2.d.next = self.r_pa2.q.val();
            if self.r_fb.q.val() && self.r_pn2.q.val() {
                self.r_sl2.d.next = self.ks16.val();
            } else if self.r_fb.q.val() {
                self.r_sl2.d.next = self.ks12.val();
            } else if self.r_pn2.q.val() {
                self.r_sl2.d.next = self.ks06.val();
            } else {
                self.r_sl2.d.next = self.ks02.val();
            }
        }
        self.slots.sel2.next = self.r_sel2.q.val();
        self.slots.addr2.next = self.r_sl2.q.val();
        self.r_win2.d.next = self.slots.out2.val();
        self.r_wp2.d.next = self.r_win2.q.val().get_bits::<56>(8);
        self.al2.hi.next = self.r_win2.q.val();
        self.al2.lo.next = self.r_wp2.q.val();
        self.al2.a.next = self.r_fa2.q.val();
        self.hit3.next = self.r_streaming.q.val()
            && self.r_fe3.q.val()
            && (self.r_beat.q.val() == self.r_fq3.q.val());
        self.r_hit3.d.next = self.hit3.val() && !self.start.val();
        if self.r_st.q.val() {
            self.r_sel3.d.next = self.k0_w.val();
        } else if self.r_hit3.q.val() {
            self.r_sel3.d.next = self.k1_w.val();
        } else {
            self.r_sel3.d.next = self.r_sel3.q.val() << self.k1_5.val();
        }
        if self.r_hit3.q.val() {
            self.r_fa3.d.next = self.r_pa3.q.val();
            if self.r_fb.q.val() && self.r_pn3.q.val() {
                self.r_sl3.d.next = self.ks17.val();
            } else if self.r_fb.q.val() {
                self.r_sl3.d.next = self.ks13.val();
            } else if self.r_pn3.q.val() {
                self.r_sl3.d.next = self.ks07.val();
            } else {
                self.r_sl3.d.next = self.ks03.val();
            }
        }
        self.slots.sel3.next = self.r_sel3.q.val();
        self.slots.addr3.next = self.r_sl3.q.val();
        self.r_win3.d.next = self.slots.out3.val();
        self.r_wp3.d.next = self.r_win3.q.val().get_bits::<56>(8);
        self.al3.hi.next = self.r_win3.q.val();
        self.al3.lo.next = self.r_wp3.q.val();
        self.al3.a.next = self.r_fa3.q.val();
        self.r_st.d.next = self.start.val();
        self.r_hl.d.next = self.start.val()
            && ((self.r_c_kind.q.val() == self.k_batch.val())
                || (self.r_c_kind.q.val() == self.k_config.val()));
        self.r_bw.d.next =
            self.al0.out.val() | self.al1.out.val() | self.al2.out.val() | self.al3.out.val();
        self.r_use0.d.next = self.kt0.val() < self.trees.val();
        self.r_use1.d.next = self.kt1.val() < self.trees.val();
        self.r_use2.d.next = self.kt2.val() < self.trees.val();
        self.r_use3.d.next = self.kt3.val() < self.trees.val();
        self.use1.next = self.r_use1.q.val();
        self.use2.next = self.r_use2.q.val();
        self.use3.next = self.r_use3.q.val();
        if self.start.val() {
            self.r_on0.d.next = self.r_use0.q.val();
            self.r_on1.d.next = self.r_use1.q.val();
            self.r_on2.d.next = self.r_use2.q.val();
            self.r_on3.d.next = self.r_use3.q.val();
            self.r_streaming.d.next = true;
            self.r_beat.d.next = self.k0_8.val();
            self.r_blast.d.next = false; // a frame has 10 beats or more
            self.r_body.d.next = false;
            self.r_nbeats.d.next = self.l_nbeats.val();
            self.r_lastkeep.d.next =
                self.k_keep_all.val() >> (self.k7_3.val() - self.l_last1.val());
            self.r_f_tl.d.next = self.l_len.val() - self.k_eth.val();
            self.r_f_ulen.d.next = self.l_len.val() - self.k_udp_off.val();
            self.r_f_bl.d.next = self.l_len.val() - self.k_pkt_off.val();
            self.r_f_kind.d.next = self.r_c_kind.q.val();
            self.r_f_count.d.next = self.r_c_count.q.val();
            self.r_f_instance.d.next = self.r_c_instance.q.val();
            self.r_f_epoch.d.next = self.r_c_epoch.q.val();
            self.r_f_seq.d.next = self.r_c_seq.q.val();
            // The frame reads the bank its command filled.
            self.r_fb.d.next = self.r_cb.q.val();
            self.r_fe0.d.next = self.ke0.val() < self.r_c_count.q.val();
            self.r_pn0.d.next = false;
            if self.r_cb.q.val() {
                self.r_fq0.d.next = self.r_q10.q.val();
                self.r_pa0.d.next = self.r_a10.q.val();
            } else {
                self.r_fq0.d.next = self.r_q00.q.val();
                self.r_pa0.d.next = self.r_a00.q.val();
            }
            self.r_fe1.d.next = self.ke1.val() < self.r_c_count.q.val();
            self.r_pn1.d.next = false;
            if self.r_cb.q.val() {
                self.r_fq1.d.next = self.r_q11.q.val();
                self.r_pa1.d.next = self.r_a11.q.val();
            } else {
                self.r_fq1.d.next = self.r_q01.q.val();
                self.r_pa1.d.next = self.r_a01.q.val();
            }
            self.r_fe2.d.next = self.ke2.val() < self.r_c_count.q.val();
            self.r_pn2.d.next = false;
            if self.r_cb.q.val() {
                self.r_fq2.d.next = self.r_q12.q.val();
                self.r_pa2.d.next = self.r_a12.q.val();
            } else {
                self.r_fq2.d.next = self.r_q02.q.val();
                self.r_pa2.d.next = self.r_a02.q.val();
            }
            self.r_fe3.d.next = self.ke3.val() < self.r_c_count.q.val();
            self.r_pn3.d.next = false;
            if self.r_cb.q.val() {
                self.r_fq3.d.next = self.r_q13.q.val();
                self.r_pa3.d.next = self.r_a13.q.val();
            } else {
                self.r_fq3.d.next = self.r_q03.q.val();
                self.r_pa3.d.next = self.r_a03.q.val();
            }
        } else if self.last_beat.val() {
            self.r_streaming.d.next = false;
            self.r_blast.d.next = false;
        } else if self.r_streaming.q.val() {
            self.r_beat.d.next = self.r_beat.q.val() + self.k1_8.val();
            self.r_blast.d.next = self.r_beat.q.val() == self.r_nbeats.q.val() - self.k2_8.val();
            self.r_body.d.next = self.r_beat.q.val() >= self.k_body_beat.val() - self.k1_8.val();
        }
        // A reader whose walk starts waits for its next entry (start, above, loads the first).
        if !self.start.val() && self.r_hit0.q.val() {
            self.r_pn0.d.next = true;
            self.r_fe0.d.next = !self.r_pn0.q.val() && (self.ke4.val() < self.r_f_count.q.val());
            if self.r_fb.q.val() {
                self.r_fq0.d.next = self.r_q14.q.val();
                self.r_pa0.d.next = self.r_a14.q.val();
            } else {
                self.r_fq0.d.next = self.r_q04.q.val();
                self.r_pa0.d.next = self.r_a04.q.val();
            }
        }
        if !self.start.val() && self.r_hit1.q.val() {
            self.r_pn1.d.next = true;
            self.r_fe1.d.next = !self.r_pn1.q.val() && (self.ke5.val() < self.r_f_count.q.val());
            if self.r_fb.q.val() {
                self.r_fq1.d.next = self.r_q15.q.val();
                self.r_pa1.d.next = self.r_a15.q.val();
            } else {
                self.r_fq1.d.next = self.r_q05.q.val();
                self.r_pa1.d.next = self.r_a05.q.val();
            }
        }
        if !self.start.val() && self.r_hit2.q.val() {
            self.r_pn2.d.next = true;
            self.r_fe2.d.next = !self.r_pn2.q.val() && (self.ke6.val() < self.r_f_count.q.val());
            if self.r_fb.q.val() {
                self.r_fq2.d.next = self.r_q16.q.val();
                self.r_pa2.d.next = self.r_a16.q.val();
            } else {
                self.r_fq2.d.next = self.r_q06.q.val();
                self.r_pa2.d.next = self.r_a06.q.val();
            }
        }
        if !self.start.val() && self.r_hit3.q.val() {
            self.r_pn3.d.next = true;
            self.r_fe3.d.next = !self.r_pn3.q.val() && (self.ke7.val() < self.r_f_count.q.val());
            if self.r_fb.q.val() {
                self.r_fq3.d.next = self.r_q17.q.val();
                self.r_pa3.d.next = self.r_a17.q.val();
            } else {
                self.r_fq3.d.next = self.r_q07.q.val();
                self.r_pa3.d.next = self.r_a07.q.val();
            }
        }
        if self.r_body.q.val() {
            self.body.next = self.r_bw.q.val();
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
        self.tc0.clock.next = self.clock.val();
        self.tc0.group.next = self.group0.val();
        self.tc0.ps.next = self.r_ps.q.val();
        self.tc0.total_len.next = self.r_f_tl.q.val();
        self.tc1.clock.next = self.clock.val();
        self.tc1.group.next = self.group1.val();
        self.tc1.ps.next = self.r_ps.q.val();
        self.tc1.total_len.next = self.r_f_tl.q.val();
        self.tc2.clock.next = self.clock.val();
        self.tc2.group.next = self.group2.val();
        self.tc2.ps.next = self.r_ps.q.val();
        self.tc2.total_len.next = self.r_f_tl.q.val();
        self.tc3.clock.next = self.clock.val();
        self.tc3.group.next = self.group3.val();
        self.tc3.ps.next = self.r_ps.q.val();
        self.tc3.total_len.next = self.r_f_tl.q.val();
        self.kindw.narrow.next = self.r_f_kind.q.val();
        self.countw.narrow.next = self.r_f_count.q.val();
        self.th0.group.next = self.group0.val();
        self.th1.group.next = self.group1.val();
        self.th2.group.next = self.group2.val();
        self.th3.group.next = self.group3.val();
        self.th0.ip_csum.next = self.tc0.csum.val();
        self.th1.ip_csum.next = self.tc1.csum.val();
        self.th2.ip_csum.next = self.tc2.csum.val();
        self.th3.ip_csum.next = self.tc3.csum.val();
        self.th0.total_len.next = self.r_f_tl.q.val();
        self.th1.total_len.next = self.r_f_tl.q.val();
        self.th2.total_len.next = self.r_f_tl.q.val();
        self.th3.total_len.next = self.r_f_tl.q.val();
        self.th0.udp_len.next = self.r_f_ulen.q.val();
        self.th1.udp_len.next = self.r_f_ulen.q.val();
        self.th2.udp_len.next = self.r_f_ulen.q.val();
        self.th3.udp_len.next = self.r_f_ulen.q.val();
        self.th0.body_len.next = self.r_f_bl.q.val();
        self.th1.body_len.next = self.r_f_bl.q.val();
        self.th2.body_len.next = self.r_f_bl.q.val();
        self.th3.body_len.next = self.r_f_bl.q.val();
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
        self.m0_valid.next = self.r_streaming.q.val() && self.r_on0.q.val();
        self.m1_valid.next = self.r_streaming.q.val() && self.r_on1.q.val();
        self.m2_valid.next = self.r_streaming.q.val() && self.r_on2.q.val();
        self.m3_valid.next = self.r_streaming.q.val() && self.r_on3.q.val();
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
        self.h_ulen.next = self.r_f_ulen.q.val();
        // The frame's first beat (`start` in the cycle before) of a value frame, from one
        // register (`host_gen`'s start decision reads it).
        self.h_load.next = self.r_hl.q.val();
    }
}
