//! Small primitives whose Verilog is written by hand because rust-hdl 0.46 cannot express them
//! without width warnings (zero extension). Each has a Rust `update` for the simulator and a
//! one-line Verilog body that does the same.

use rust_hdl::prelude::*;

/// `v` as an N-bit value (bits above N dropped).
pub fn bits<const N: usize>(v: u64) -> Bits<N> {
    Bits::<N>::from(v)
}

/// The low 64 bits of `b` (all of it when N ≤ 64).
pub fn val<const N: usize>(b: Bits<N>) -> u64 {
    word(b, 0)
}

/// Bits `at..at + 64` of `b` (those below N; the rest 0).
pub fn word<const N: usize>(b: Bits<N>, at: usize) -> u64 {
    (at..N.min(at + 64)).fold(0u64, |a, i| a | (b.get_bit(i) as u64) << (i - at))
}

/// `wide = {0, narrow}`.
#[derive(LogicBlock, Default)]
pub struct ZeroExtend<const N: usize, const M: usize> {
    /// Input.
    pub narrow: Signal<In, Bits<N>>,
    /// `narrow` zero-extended to M bits.
    pub wide: Signal<Out, Bits<M>>,
}

impl<const N: usize, const M: usize> Logic for ZeroExtend<N, M> {
    fn update(&mut self) {
        self.wide.next = bit_cast::<M, N>(self.narrow.val());
    }
    fn connect(&mut self) {
        self.wide.connect();
    }
    fn hdl(&self) -> Verilog {
        assert!(M > N, "ZeroExtend widens");
        Verilog::Custom(format!("always @(*) wide = {{{}'d0, narrow}};", M - N))
    }
}

/// `out = a +' b`, the ones-complement sum of two 16-bit words (the end-around carry added
/// back), by carry select: `a + b` and `a + b + 1` side by side (the latter as the upper 16 bits
/// of `{a, 1} + {b, 1}`, one carry chain), the first sum's carry picking one. Written out
/// because Yosys makes `if a + b < a { a + b + 1 }` three carry chains in series; every IPv4
/// checksum step of the generators (`pkt_gen`, `pkt_gen_512`, `host_gen`, `reply_gen`) uses it
/// (rtl/README "Place and route").
#[derive(LogicBlock, Default)]
pub struct OnesAdd {
    pub a: Signal<In, Bits<16>>,
    pub b: Signal<In, Bits<16>>,
    pub out: Signal<Out, Bits<16>>,
}

impl Logic for OnesAdd {
    fn update(&mut self) {
        let s = val(self.a.val()) + val(self.b.val());
        self.out.next = Bits::<16>::from((s & 0xFFFF) + (s >> 16));
    }
    fn connect(&mut self) {
        self.out.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "wire [16:0] s0 = {1'b0, a} + {1'b0, b};\n\
             /* verilator lint_off UNUSEDSIGNAL */\n\
             wire [16:0] s1 = {a, 1'b1} + {b, 1'b1}; // bit 0 is always 0\n\
             /* verilator lint_on UNUSEDSIGNAL */\n\
             always @(*) out = s0[16] ? s1[16:1] : s0[15:0];"
                .into(),
        )
    }
}

/// One 3:2 compressor step modulo 0xFFFF: `x + y + z ≡ s + c`, the carries rotated left by one
/// (the carry out of bit 15 weighs 2^16 ≡ 1).
fn csa16(x: u64, y: u64, z: u64) -> (u64, u64) {
    let maj = (x & y) | (x & z) | (y & z);
    (x ^ y ^ z, ((maj << 1) | (maj >> 15)) & 0xFFFF)
}

/// pkt_parser: a ones-complement checksum kept in carry-save form (`s`, `c`: the sum is
/// `s + c` modulo 0xFFFF), one beat added per cycle without a carry chain: `s_n`, `c_n` =
/// (`first` ? (`init`, 0) : (`s`, `c`)) + the beat's four big-endian 16-bit words (lane `2i`
/// the high byte of word `i`; lanes whose `mask` bit is 0 count as zero; word 3 doubled when
/// `dbl3`: a word counted twice, as the UDP length is), by four 3:2 compressor steps in three
/// levels with end-around carries (a carry out of bit 15 weighs 2^16 ≡ 1). (`s`, `c`) is
/// (0, 0) only if every word added was zero; [`CsaIsFfff`] checks the result.
#[derive(LogicBlock, Default)]
pub struct OnesCsa {
    pub s: Signal<In, Bits<16>>,
    pub c: Signal<In, Bits<16>>,
    pub first: Signal<In, Bit>,
    pub init: Signal<In, Bits<16>>,
    pub data: Signal<In, Bits<64>>,
    pub mask: Signal<In, Bits<8>>,
    pub dbl3: Signal<In, Bit>,
    pub s_n: Signal<Out, Bits<16>>,
    pub c_n: Signal<Out, Bits<16>>,
}

impl Logic for OnesCsa {
    fn update(&mut self) {
        let (d, m) = (val(self.data.val()), val(self.mask.val()));
        let w = |i: u64| {
            let lane = |l: u64| ((d >> (8 * l)) & 0xFF) * ((m >> l) & 1);
            (lane(2 * i) << 8) | lane(2 * i + 1)
        };
        let w3 = if self.dbl3.val() {
            ((w(3) << 1) | (w(3) >> 15)) & 0xFFFF
        } else {
            w(3)
        };
        let (s, c) = if self.first.val() {
            (val(self.init.val()), 0)
        } else {
            (val(self.s.val()), val(self.c.val()))
        };
        let (s1, c1) = csa16(s, c, w(0));
        let (s2, c2) = csa16(w(1), w(2), w3);
        let (s3, c3) = csa16(s1, c1, s2);
        let (s4, c4) = csa16(s3, c3, c2);
        self.s_n.next = s4.into();
        self.c_n.next = c4.into();
    }
    fn connect(&mut self) {
        self.s_n.connect();
        self.c_n.connect();
    }
    fn hdl(&self) -> Verilog {
        let lanes: Vec<String> = (0..8)
            .rev()
            .map(|l| format!("{{8{{mask[{l}]}}}}"))
            .collect();
        let words: String = (0..4)
            .map(|i| {
                format!(
                    "wire [15:0] w{i} = {{m[{}:{}], m[{}:{}]}};\n",
                    16 * i + 7,
                    16 * i,
                    16 * i + 15,
                    16 * i + 8
                )
            })
            .collect();
        let csa = |o: &str, x: &str, y: &str, z: &str| {
            format!(
                "wire [15:0] {o}_s = {x} ^ {y} ^ {z};\n\
                 wire [15:0] {o}_m = ({x} & {y}) | ({x} & {z}) | ({y} & {z});\n\
                 wire [15:0] {o}_c = {{{o}_m[14:0], {o}_m[15]}};\n"
            )
        };
        Verilog::Custom(format!(
            "wire [63:0] m = data & {{{}}};\n{words}\
             wire [15:0] w3d = dbl3 ? {{w3[14:0], w3[15]}} : w3;\n\
             wire [15:0] bs = first ? init : s;\n\
             wire [15:0] bc = first ? 16'd0 : c;\n\
             {}{}{}{}\
             always @(*) s_n = k4_s;\n\
             always @(*) c_n = k4_c;",
            lanes.join(", "),
            csa("k1", "bs", "bc", "w0"),
            csa("k2", "w1", "w2", "w3d"),
            csa("k3", "k1_s", "k1_c", "k2_s"),
            csa("k4", "k3_s", "k3_c", "k2_c"),
        ))
    }
}

/// `eq` = the checksum kept as (`s`, `c`) by [`OnesCsa`] verifies: `s + c` is 0xFFFF or
/// 0x1FFFE (≡ 0 modulo 0xFFFF, and not the all-zero sum). Tested without an adder: `a + b = k`
/// exactly when the carries it needs (`a ^ b ^ k`) are the ones it makes.
#[derive(LogicBlock, Default)]
pub struct CsaIsFfff {
    pub s: Signal<In, Bits<16>>,
    pub c: Signal<In, Bits<16>>,
    pub eq: Signal<Out, Bit>,
}

impl Logic for CsaIsFfff {
    fn update(&mut self) {
        let t = val(self.s.val()) + val(self.c.val());
        self.eq.next = t == 0xFFFF || t == 0x1FFFE;
    }
    fn connect(&mut self) {
        self.eq.connect();
    }
    fn hdl(&self) -> Verilog {
        let test = |k: &str| {
            format!(
                "wire [16:0] ci_{k} = a ^ b ^ 17'h{k};\n\
                 wire [16:0] co_{k} = (a & b) | (ci_{k} & (a ^ b));\n\
                 wire eq_{k} = (ci_{k} == {{co_{k}[15:0], 1'b0}});\n"
            )
        };
        Verilog::Custom(format!(
            "wire [16:0] a = {{1'b0, s}};\nwire [16:0] b = {{1'b0, c}};\n\
             /* verilator lint_off UNUSEDSIGNAL */\n{}{}/* verilator lint_on UNUSEDSIGNAL */\n\
             always @(*) eq = eq_0FFFF | eq_1FFFE;",
            test("0FFFF"),
            test("1FFFE")
        ))
    }
}

/// pkt_parser: the lanes of the next beat that still belong to the UDP datagram. In beat 4
/// (`at4`), from the UDP length on the bus (the next beat starts 6 bytes into the datagram),
/// lane `k` is in when `ulen > 6 + k`; later, from `rem` (the
/// datagram's bytes left at this beat's start), lane `k` of the next beat is in when
/// `rem > 8 + k`. Comparisons with constants only, both sets side by side.
#[derive(LogicBlock, Default)]
pub struct LaneMask {
    pub ulen: Signal<In, Bits<16>>,
    pub rem: Signal<In, Bits<16>>,
    pub at4: Signal<In, Bit>,
    pub mask: Signal<Out, Bits<8>>,
}

impl Logic for LaneMask {
    fn update(&mut self) {
        let (x, base) = if self.at4.val() {
            (val(self.ulen.val()), 6)
        } else {
            (val(self.rem.val()), 8)
        };
        self.mask.next = ((1u64 << x.saturating_sub(base).min(8)) - 1).into();
    }
    fn connect(&mut self) {
        self.mask.connect();
    }
    fn hdl(&self) -> Verilog {
        let set = |v: &str, base: u64| {
            (0..8)
                .rev()
                .map(|k| format!("({v} > 16'd{})", base + k))
                .collect::<Vec<_>>()
                .join(", ")
        };
        Verilog::Custom(format!(
            "wire [7:0] from_len = {{{}}};\nwire [7:0] from_rem = {{{}}};\n\
             always @(*) mask = at4 ? from_len : from_rem;",
            set("ulen", 6),
            set("rem", 8)
        ))
    }
}

/// A sink for bits a block keeps but does not read (`pkt_parser` keeps whole beats and reads
/// only its fields): no output, and the Verilog says the input is unused on purpose (Synthesis
/// removes what feeds only this).
#[derive(LogicBlock, Default)]
pub struct Unused<const N: usize> {
    pub x: Signal<In, Bits<N>>,
}

impl<const N: usize> Logic for Unused<N> {
    fn update(&mut self) {}
    fn connect(&mut self) {}
    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "/* verilator lint_off UNUSEDSIGNAL */\nwire unused = ^x;\n/* verilator lint_on UNUSEDSIGNAL */"
                .into(),
        )
    }
}

/// `out = {h9, …, h0}`: 78 header bytes (nine 64-bit beats and six bytes of the tenth) as one vector (beat 0 in the low bits, so
/// frame byte `x` is `out[8x +: 8]`).
#[derive(LogicBlock, Default)]
pub struct JoinBeats {
    pub h0: Signal<In, Bits<64>>,
    pub h1: Signal<In, Bits<64>>,
    pub h2: Signal<In, Bits<64>>,
    pub h3: Signal<In, Bits<64>>,
    pub h4: Signal<In, Bits<64>>,
    pub h5: Signal<In, Bits<64>>,
    pub h6: Signal<In, Bits<64>>,
    pub h7: Signal<In, Bits<64>>,
    pub h8: Signal<In, Bits<64>>,
    pub h9: Signal<In, Bits<48>>,
    /// The joined vector.
    pub out: Signal<Out, Bits<624>>,
}

impl Logic for JoinBeats {
    fn update(&mut self) {
        let mut v = bit_cast::<624, 48>(self.h9.val());
        let h = [
            self.h8.val(),
            self.h7.val(),
            self.h6.val(),
            self.h5.val(),
            self.h4.val(),
            self.h3.val(),
            self.h2.val(),
            self.h1.val(),
            self.h0.val(),
        ];
        for b in h {
            v = (v << 64) | bit_cast::<624, 64>(b);
        }
        self.out.next = v;
    }
    fn connect(&mut self) {
        self.out.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(*) out = {h9, h8, h7, h6, h5, h4, h3, h2, h1, h0};".into())
    }
}

/// `out = {hi, lo}`: a 48-bit MAC address from its two registers (`*_mac_hi`: first two bytes).
#[derive(LogicBlock, Default)]
pub struct JoinMac {
    pub hi: Signal<In, Bits<16>>,
    pub lo: Signal<In, Bits<32>>,
    /// The address, first byte most significant.
    pub out: Signal<Out, Bits<48>>,
}

impl Logic for JoinMac {
    fn update(&mut self) {
        self.out.next =
            (bit_cast::<48, 16>(self.hi.val()) << 32) | bit_cast::<48, 32>(self.lo.val());
    }
    fn connect(&mut self) {
        self.out.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(*) out = {hi, lo};".into())
    }
}

/// `out` = `inp` with its bytes in reverse order (a big-endian field read from a little-endian
/// lane order).
#[derive(LogicBlock, Default)]
pub struct ByteSwap<const N: usize> {
    /// Input (N a multiple of 8).
    pub inp: Signal<In, Bits<N>>,
    /// Bytes reversed.
    pub out: Signal<Out, Bits<N>>,
}

impl<const N: usize> Logic for ByteSwap<N> {
    fn update(&mut self) {
        let x = self.inp.val();
        let mut v = Bits::<N>::default();
        for i in 0..N / 8 {
            for b in 0..8 {
                v = v.replace_bit(N - 8 * (i + 1) + b, x.get_bit(8 * i + b));
            }
        }
        self.out.next = v;
    }
    fn connect(&mut self) {
        self.out.connect();
    }
    fn hdl(&self) -> Verilog {
        assert!(N.is_multiple_of(8) && N >= 8);
        if N == 8 {
            return Verilog::Custom("always @(*) out = inp;".into());
        }
        let parts: Vec<String> = (0..N / 8)
            .map(|i| format!("inp[{}:{}]", 8 * i + 7, 8 * i))
            .collect();
        Verilog::Custom(format!("always @(*) out = {{{}}};", parts.join(", ")))
    }
}

/// Where one byte of a [`byte_map!`] output comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteSrc {
    /// A constant byte.
    Const(u8),
    /// Byte `j` (0 = most significant) of input `i`.
    Field(usize, usize),
}

/// A block whose output bytes are constants or bytes of its inputs, by a map fixed when the
/// circuit is built (output byte `x` in bits `8x+7..8x`: frame order on a little-endian bus).
macro_rules! byte_map {
    ($(#[$doc:meta])* $name:ident, $bits:expr, [$($f:ident : $w:expr),* $(,)?]) => {
        $(#[$doc])*
        #[derive(LogicBlock)]
        pub struct $name {
            $(pub $f: Signal<In, Bits<{ 8 * $w }>>,)*
            /// The bytes.
            pub out: Signal<Out, Bits<$bits>>,
            _map: Vec<ByteSrc>,
        }

        impl $name {
            /// Input names and widths in bytes, in declaration order.
            pub const INPUTS: &'static [(&'static str, usize)] = &[$((stringify!($f), $w)),*];
            /// A block with this byte map (one entry per output byte).
            pub fn new(map: Vec<ByteSrc>) -> Self {
                assert_eq!(map.len() * 8, $bits);
                Self { $($f: Default::default(),)* out: Default::default(), _map: map }
            }
        }

        impl Logic for $name {
            fn update(&mut self) {
                let ins: Vec<(u64, usize)> = vec![$((val(self.$f.val()), $w)),*];
                let mut v = Bits::<$bits>::default();
                for src in self._map.iter().rev() {
                    let byte = match *src {
                        ByteSrc::Const(b) => b as u64,
                        ByteSrc::Field(i, j) => (ins[i].0 >> (8 * (ins[i].1 - 1 - j))) & 0xFF,
                    };
                    v = (v << 8) | bit_cast::<$bits, 8>(Bits::<8>::from(byte));
                }
                self.out.next = v;
            }
            fn connect(&mut self) {
                self.out.connect();
            }
            fn hdl(&self) -> Verilog {
                let parts: Vec<String> = self
                    ._map
                    .iter()
                    .rev()
                    .map(|src| match *src {
                        ByteSrc::Const(b) => format!("8'h{b:02x}"),
                        ByteSrc::Field(i, j) => {
                            let (name, w) = Self::INPUTS[i];
                            let lo = 8 * (w - 1 - j);
                            format!("{name}[{}:{lo}]", lo + 7)
                        }
                    })
                    .collect();
                Verilog::Custom(format!("always @(*) out = {{{}}};", parts.join(", ")))
            }
        }
    };
}

byte_map!(
    /// The 78 header bytes of a DECIDE frame (Ethernet, IPv4, UDP, common header, DECIDE
    /// header), map from `pkt_gen::header_map`.
    HeaderBytes,
    624,
    [mac_lo: 3, total_len: 2, ip_csum: 2, dst_ip: 4, udp_len: 2, port: 2, cluster: 4, body_len: 2, sender: 1, inst: 8, epoch: 4, seq: 4, tree: 1, kind: 1, count: 2, src_mac: 6, src_ip: 4, ttl: 1]
);

byte_map!(
    /// The 24 bytes of a DECIDE entry with a payload of up to 8 bytes (bytes past the
    /// payload are zero), map from `pkt_gen::entry_map`.
    EntryBytes,
    192,
    [client: 4, len: 1, seq: 8, payload: 8]
);

byte_map!(
    /// The 16-byte header of a DECIDE entry (client_id, payload_len, flags 0, seq), map from
    /// `pkt_gen::entry_head_map`: the streaming generator's entries carry their payload apart.
    EntryHead,
    128,
    [client: 4, len: 1, seq: 8]
);

// ---- reply_gen ------------------------------------------------------------------------------

byte_map!(
    /// The whole REPLY_OK frame (Ethernet, IPv4, UDP, common header, reply body; UDP checksum
    /// 0), map from `reply_gen::ok_map`.
    ReplyOkBytes,
    { crate::reply_gen::FRAME_BITS },
    [dst_mac: 6, src_mac: 6, ip_csum: 2, src_ip: 4, dst_ip: 4, src_port: 2, dst_port: 2, cluster: 4, sender: 1, client: 4, index: 1, seq: 8, inst: 8, ttl: 1]
);

byte_map!(
    /// The whole REPLY_NOT_LEADER frame (Ethernet, IPv4, UDP, common header, reply body; UDP
    /// checksum 0), map from `reply_gen::nl_map`.
    ReplyNlBytes,
    { crate::reply_gen::FRAME_BITS },
    [dst_mac: 6, src_mac: 6, ip_csum: 2, src_ip: 4, dst_ip: 4, src_port: 2, dst_port: 2, cluster: 4, sender: 1, client: 4, leader: 1, seq: 8, epoch: 4, ttl: 1]
);

// ---- host_gen ---------------------------------------------------------------------------------
// Primitives of `host_gen` (kept in one block).

byte_map!(
    /// host_gen: the 42 Ethernet/IPv4/UDP header bytes of a host-path frame, map from
    /// `host_gen::header_map` (UDP checksum 0).
    HostHeader,
    336,
    [dst_mac: 6, src_mac: 6, total_len: 2, ip_csum: 2, src_ip: 4, dst_ip: 4, src_port: 2, dst_port: 2, udp_len: 2, ttl: 1]
);

/// req_capture: `out` = `inp` with its 64-bit lane `lane` (bits `64·lane + 63 .. 64·lane`)
/// replaced by `data`; a lane past the vector changes nothing.
#[derive(LogicBlock, Default)]
pub struct LaneWrite<const N: usize> {
    /// The vector (N a multiple of 64, 2 to 31 lanes).
    pub inp: Signal<In, Bits<N>>,
    /// The lane to replace.
    pub lane: Signal<In, Bits<5>>,
    /// Its new value.
    pub data: Signal<In, Bits<64>>,
    /// `inp` with the lane replaced.
    pub out: Signal<Out, Bits<N>>,
}

impl<const N: usize> Logic for LaneWrite<N> {
    fn update(&mut self) {
        let mut v = self.inp.val();
        let l = self.lane.val().index();
        if 64 * (l + 1) <= N {
            v.set_bits::<64>(64 * l, self.data.val());
        }
        self.out.next = v;
    }
    fn connect(&mut self) {
        self.out.connect();
    }
    fn hdl(&self) -> Verilog {
        assert!(N.is_multiple_of(64) && (2..32).contains(&(N / 64)));
        // One equality per lane rather than a part select at a variable index: Yosys makes the
        // latter a shifter with carry chains (`req_capture` at 77 MHz with it, rtl/README
        // "Place and route").
        let lanes: Vec<String> = (0..N / 64)
            .map(|i| {
                format!(
                    "    out[{}:{}] = (lane == 5'd{i}) ? data : inp[{}:{}];",
                    64 * i + 63,
                    64 * i,
                    64 * i + 63,
                    64 * i
                )
            })
            .collect();
        Verilog::Custom(format!("always @(*) begin\n{}\nend", lanes.join("\n")))
    }
}

/// req_capture: a REQUEST's first 128 payload bytes, big-endian (byte 0 in bits 1023..1016, the
/// order `nc_core` takes), from the three parts its frame brings them in (lane order: byte x of
/// a part in bits 8x+7..8x): `a` payload bytes 0..2, `b` bytes 2..122, `c` bytes 122..128.
#[derive(LogicBlock, Default)]
pub struct ReqPayload {
    pub a: Signal<In, Bits<16>>,
    pub b: Signal<In, Bits<960>>,
    pub c: Signal<In, Bits<48>>,
    /// Payload bytes 0..128.
    pub out: Signal<Out, Bits<1024>>,
}

impl Logic for ReqPayload {
    fn update(&mut self) {
        let mut le = Bits::<1024>::default();
        le.set_bits::<16>(0, self.a.val());
        le.set_bits::<960>(16, self.b.val());
        le.set_bits::<48>(976, self.c.val());
        let mut v = Bits::<1024>::default();
        for j in 0..16 {
            let w = val(le.get_bits::<64>(64 * j)).swap_bytes();
            v.set_bits::<64>(1024 - 64 * (j + 1), Bits::<64>::from(w));
        }
        self.out.next = v;
    }
    fn connect(&mut self) {
        self.out.connect();
    }
    fn hdl(&self) -> Verilog {
        let byte = |i: usize| match i {
            0..2 => format!("a[{}:{}]", 8 * i + 7, 8 * i),
            2..122 => format!("b[{}:{}]", 8 * (i - 2) + 7, 8 * (i - 2)),
            _ => format!("c[{}:{}]", 8 * (i - 122) + 7, 8 * (i - 122)),
        };
        let parts: Vec<String> = (0..128).map(byte).collect();
        Verilog::Custom(format!("always @(*) out = {{{}}};", parts.join(", ")))
    }
}

/// pkt_gen: a request's payload with the bytes past its length cleared (byte 0 in bits
/// 1023..1016; byte `j` kept when `j < len`, every byte when `len` is above 128, which the
/// core never gives: the shifter before it cleared every byte then). One
/// comparison of `len` with a constant per byte, not a shifter of a 1,024-bit mask by `8 · len`
/// (which Yosys made a subtraction and ten multiplexer levels, rtl/README "Step 17").
#[derive(LogicBlock, Default)]
pub struct PayloadMask {
    pub data: Signal<In, Bits<1024>>,
    pub len: Signal<In, Bits<8>>,
    pub out: Signal<Out, Bits<1024>>,
}

impl Logic for PayloadMask {
    fn update(&mut self) {
        let n = self.len.val().index().min(128);
        let mask = if n == 0 {
            Bits::<1024>::default()
        } else {
            Bits::<1024>::mask() << (1024 - 8 * n) as u64
        };
        self.out.next = self.data.val() & mask;
    }
    fn connect(&mut self) {
        self.out.connect();
    }
    fn hdl(&self) -> Verilog {
        let bytes: Vec<String> = (0..128)
            .map(|j| {
                let hi = 1023 - 8 * j;
                format!("(len > 8'd{j} ? data[{hi}:{}] : 8'd0)", hi - 7)
            })
            .collect();
        Verilog::Custom(format!("always @(*) out = {{{}}};", bytes.join(", ")))
    }
}

/// host_gen: the 64-bit byte mask of a beat's `keep` bits (byte x all ones when keep bit x is 1).
#[derive(LogicBlock, Default)]
pub struct KeepMask {
    pub keep: Signal<In, Bits<8>>,
    pub out: Signal<Out, Bits<64>>,
}

impl Logic for KeepMask {
    fn update(&mut self) {
        let k = val(self.keep.val());
        let m = (0..8).fold(0u64, |m, b| {
            if k >> b & 1 == 1 {
                m | 0xFF << (8 * b)
            } else {
                m
            }
        });
        self.out.next = Bits::<64>::from(m);
    }
    fn connect(&mut self) {
        self.out.connect();
    }
    fn hdl(&self) -> Verilog {
        let m: Vec<String> = (0..8)
            .rev()
            .map(|b| format!("{{8{{keep[{b}]}}}}"))
            .collect();
        Verilog::Custom(format!("always @(*) out = {{{}}};", m.join(", ")))
    }
}

/// pkt_gen: a beat of an entry that starts at lane `a` of a beat: lanes `a..8` are the low
/// `8 − a` bytes of `hi` (the entry's word k) and lanes `0..a` the high `a` bytes of its word
/// k − 1, whose bytes 1..8 `lo` is (byte 0 is never needed): `({hi, lo, 8'b0} >> (64 −
/// 8a))[63:0]`, lane x in bits `8x + 7 .. 8x`. An 8-way multiplexer tree on the bits of `a`.
#[derive(LogicBlock, Default)]
pub struct ByteAlign {
    pub hi: Signal<In, Bits<64>>,
    pub lo: Signal<In, Bits<56>>,
    pub a: Signal<In, Bits<3>>,
    pub out: Signal<Out, Bits<64>>,
}

impl Logic for ByteAlign {
    fn update(&mut self) {
        let a = self.a.val().index();
        let hi = val(self.hi.val());
        let lo = val(self.lo.val()) << 8;
        let v = if a == 0 {
            hi
        } else {
            (hi << (8 * a)) | (lo >> (64 - 8 * a))
        };
        self.out.next = Bits::<64>::from(v);
    }
    fn connect(&mut self) {
        self.out.connect();
    }
    fn hdl(&self) -> Verilog {
        let v = |a: usize| {
            if a == 0 {
                "hi".to_string()
            } else {
                format!("{{hi[{}:0], lo[55:{}]}}", 63 - 8 * a, 56 - 8 * a)
            }
        };
        let pair = |b: usize| format!("(a[0] ? {} : {})", v(b + 1), v(b));
        let quad = |b: usize| format!("(a[1] ? {} : {})", pair(b + 2), pair(b));
        Verilog::Custom(format!(
            "always @(*) out = a[2] ? {} : {};",
            quad(4),
            quad(0)
        ))
    }
}
