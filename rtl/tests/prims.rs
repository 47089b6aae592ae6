//! The primitives whose Verilog is written by hand (`Verilog::Custom`) against their Rust
//! `update`, which is what every other rtl test simulates: random and edge vectors through each
//! one's exported Verilog on Icarus, every output compared. (cocotb runs the whole modules'
//! Verilog; this finds a primitive whose two halves disagree on a case the modules rarely
//! reach, such as a carry-save checksum of (0xFFFF, 0xFFFF).) Needs `iverilog` (tools/setup.sh).

use std::fmt::Write as _;
use std::process::Command;

use rtl::pkt_parser::{AnyEqual, NibbleSum, SenderMatch, sender_table};
use rtl::pkt_stream::{BANK_SLOTS, READERS, SLOT_BITS, SlotRam, WORDS};
use rtl::prim::{ByteAlign, CsaIsFfff, LaneMask, LaneWrite, OnesAdd, OnesCsa, PayloadMask};
use rtl::sim::{Rng, clock_edge, settle, word};
use rust_hdl::prelude::*;

/// `N` bits as Icarus prints them with `%h`: ⌈N/4⌉ lowercase hex digits.
fn hex<const N: usize>(b: Bits<N>) -> String {
    (0..N.div_ceil(4))
        .rev()
        .map(|d| {
            let v = (0..4)
                .filter(|i| 4 * d + i < N && b.get_bit(4 * d + i))
                .fold(0u32, |a, i| a | 1 << i);
            char::from_digit(v, 16).unwrap()
        })
        .collect()
}

fn random<const N: usize>(rng: &mut Rng) -> Bits<N> {
    let mut b = Bits::<N>::default();
    for i in 0..N {
        b = b.replace_bit(i, rng.next_u64() & 1 == 1);
    }
    b
}

/// One vector: the inputs and the outputs the Rust model gives (name, width, hex).
struct Vector {
    inputs: Vec<(&'static str, usize, String)>,
    outputs: Vec<(&'static str, usize, String)>,
}

/// A port's value as a vector writes it.
trait Port {
    fn width(&self) -> usize;
    fn hex(&self) -> String;
}

impl<const N: usize> Port for Bits<N> {
    fn width(&self) -> usize {
        N
    }
    fn hex(&self) -> String {
        hex(*self)
    }
}

impl Port for bool {
    fn width(&self) -> usize {
        1
    }
    fn hex(&self) -> String {
        (*self as u8).to_string()
    }
}

/// Sets `block`'s inputs, settles it, and records the inputs and the outputs it gives.
macro_rules! vector {
    ($b:ident, [$($i:ident = $v:expr),* $(,)?], [$($o:ident),* $(,)?]) => {{
        $( $b.$i.next = $v; )*
        settle(&mut $b);
        Vector {
            inputs: vec![$( (stringify!($i), Port::width(&$b.$i.val()), Port::hex(&$b.$i.val())) ),*],
            outputs: vec![$( (stringify!($o), Port::width(&$b.$o.val()), Port::hex(&$b.$o.val())) ),*],
        }
    }};
}

/// Runs `vectors` through `block`'s exported Verilog on Icarus; panics at the first output
/// that differs from the Rust model's.
fn against_icarus<B: Block>(name: &str, block: B, vectors: &[Vector]) {
    against_icarus_clocked(name, block, vectors, false)
}

/// As [`against_icarus`]; with `clocked`, the block's `clock` input rises and falls after each
/// vector's outputs are read (as [`edge`] does in Rust).
fn against_icarus_clocked<B: Block>(name: &str, mut block: B, vectors: &[Vector], clocked: bool) {
    block.connect_all();
    let dut = generate_verilog(&block);
    let first = &vectors[0];
    let outs: Vec<(&str, usize)> = first.outputs.iter().map(|(n, w, _)| (*n, *w)).collect();
    let mut tb = String::from("`timescale 1ns / 1ps\nmodule tb;\n");
    for (n, w, _) in &first.inputs {
        writeln!(tb, "reg [{}:0] {n};", w - 1).unwrap();
    }
    for (n, w) in &outs {
        writeln!(tb, "wire [{}:0] {n};", w - 1).unwrap();
    }
    let ports: Vec<String> = first
        .inputs
        .iter()
        .map(|(n, _, _)| *n)
        .chain(outs.iter().map(|(n, _)| *n))
        .map(|n| format!(".{n}({n})"))
        .collect();
    let mut ports = ports;
    if clocked {
        tb += "reg clock = 0;\n";
        ports.push(".clock(clock)".into());
    }
    writeln!(tb, "top dut({});\ninitial begin", ports.join(", ")).unwrap();
    let fmt = vec!["%h"; outs.len()].join(" ");
    let names: Vec<&str> = outs.iter().map(|(n, _)| *n).collect();
    for v in vectors {
        for (n, w, x) in &v.inputs {
            writeln!(tb, "    {n} = {w}'h{x};").unwrap();
        }
        writeln!(tb, "    #1 $display(\"{fmt}\", {});", names.join(", ")).unwrap();
        if clocked {
            tb += "    clock = 1;\n    #1 clock = 0;\n";
        }
    }
    tb += "    $finish;\nend\nendmodule\n";
    let dir = std::env::temp_dir().join(format!("nc-prims-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("dut.v"), dut).unwrap();
    std::fs::write(dir.join("tb.v"), tb).unwrap();
    let run = |cmd: &mut Command| {
        let o = cmd
            .current_dir(&dir)
            .output()
            .unwrap_or_else(|e| panic!("{name}: cannot run {cmd:?} ({e}): run tools/setup.sh"));
        assert!(
            o.status.success(),
            "{name}: {cmd:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    run(Command::new("iverilog").args(["-g2012", "-s", "tb", "-o", "tb.vvp", "tb.v", "dut.v"]));
    let got = run(Command::new("vvp").args(["-n", "tb.vvp"]));
    let lines: Vec<&str> = got.lines().filter(|l| !l.starts_with("VCD")).collect();
    assert_eq!(lines.len(), vectors.len(), "{name}: {got}");
    for (v, line) in vectors.iter().zip(lines) {
        let want: Vec<&str> = v.outputs.iter().map(|(_, _, x)| x.as_str()).collect();
        assert_eq!(
            line.split(' ').collect::<Vec<_>>(),
            want,
            "{name}: Verilog and Rust differ on inputs {:?} (outputs {names:?})",
            v.inputs
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ones_add_and_the_carry_save_checksum() {
    let mut rng = Rng::new(1);
    let edge = [0u64, 1, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF];
    let pick16 = |rng: &mut Rng| -> Bits<16> {
        if rng.pct(40) {
            edge[rng.range(0, edge.len() as u64 - 1) as usize].into()
        } else {
            random::<16>(rng)
        }
    };
    // OnesAdd
    let mut b = OnesAdd::default();
    b.connect_all();
    let mut vs = Vec::new();
    for _ in 0..300 {
        let (a, c) = (pick16(&mut rng), pick16(&mut rng));
        vs.push(vector!(b, [a = a, b = c], [out]));
    }
    against_icarus("OnesAdd", OnesAdd::default(), &vs);
    // CsaIsFfff: every pair of edge values, then random ones.
    let mut b = CsaIsFfff::default();
    b.connect_all();
    let mut vs = Vec::new();
    let mut pairs: Vec<(Bits<16>, Bits<16>)> = edge
        .iter()
        .flat_map(|&x| edge.iter().map(move |&y| (x.into(), y.into())))
        .collect();
    pairs.extend((0..200).map(|_| {
        let x = random::<16>(&mut rng);
        (x, !x)
    }));
    pairs.extend((0..200).map(|_| (pick16(&mut rng), pick16(&mut rng))));
    let mut hits = 0;
    for (s, c) in pairs {
        vs.push(vector!(b, [s = s, c = c], [eq]));
        hits += b.eq.val() as u32;
    }
    assert!(hits > 200, "{hits}");
    against_icarus("CsaIsFfff", CsaIsFfff::default(), &vs);
    // OnesCsa
    let mut b = OnesCsa::default();
    b.connect_all();
    let mut vs = Vec::new();
    for _ in 0..400 {
        let (s, c, init) = (pick16(&mut rng), pick16(&mut rng), pick16(&mut rng));
        let data: Bits<64> = if rng.pct(20) {
            (!0u64).into()
        } else {
            random::<64>(&mut rng)
        };
        let mask: Bits<8> = random::<8>(&mut rng);
        let (first, dbl3) = (rng.pct(30), rng.pct(30));
        vs.push(vector!(
            b,
            [
                s = s,
                c = c,
                init = init,
                data = data,
                mask = mask,
                first = first,
                dbl3 = dbl3
            ],
            [s_n, c_n]
        ));
    }
    against_icarus("OnesCsa", OnesCsa::default(), &vs);
}

/// The Rust model of the carry-save checksum is the ones-complement sum: beats of random words
/// (some all ones, some masked), the last word chosen half the time so that the sum verifies.
#[test]
fn the_carry_save_checksum_is_the_ones_complement_sum() {
    let mut rng = Rng::new(2);
    let mut csa = OnesCsa::default();
    let mut chk = CsaIsFfff::default();
    csa.connect_all();
    chk.connect_all();
    let fold = |x: u64| {
        let x = (x & 0xFFFF) + (x >> 16);
        (x & 0xFFFF) + (x >> 16)
    };
    let mut verified = 0;
    for _ in 0..3000 {
        let beats = rng.range(1, 12);
        let init = if rng.pct(50) { 17 } else { 0 };
        let (mut s, mut c, mut sum) = (Bits::<16>::default(), Bits::<16>::default(), init);
        let make_ok = rng.pct(50);
        for i in 0..beats {
            let mut words: Vec<u64> = (0..4)
                .map(|_| match rng.range(0, 9) {
                    0 => 0xFFFF,
                    1 => 0,
                    _ => rng.next_u64() & 0xFFFF,
                })
                .collect();
            let mask = if rng.pct(70) {
                0xFF
            } else {
                rng.next_u64() & 0xFF
            };
            let dbl3 = rng.pct(20);
            // Word `j` as the sum counts it (word 3 twice when doubled).
            let term = |words: &[u64], mask: u64, j: usize| {
                masked(words, mask, j) * if j == 3 && dbl3 { 2 } else { 1 }
            };
            if make_ok && i + 1 == beats {
                // Choose word 0 (lanes 0-1 forced in) so that the whole sum is 0xFFFF.
                let rest: u64 = (1..4).map(|j| term(&words, mask, j)).sum();
                let partial = fold(sum + rest);
                words[0] = 0xFFFF - partial;
            }
            let mask = if make_ok && i + 1 == beats {
                mask | 3
            } else {
                mask
            };
            let data = words.iter().enumerate().fold(0u64, |d, (j, w)| {
                d | ((w >> 8) << (16 * j)) | ((w & 0xFF) << (16 * j + 8))
            });
            csa.s.next = s;
            csa.c.next = c;
            csa.first.next = i == 0;
            csa.init.next = init.into();
            csa.data.next = data.into();
            csa.mask.next = mask.into();
            csa.dbl3.next = dbl3;
            settle(&mut csa);
            s = csa.s_n.val();
            c = csa.c_n.val();
            sum += (0..4).map(|j| term(&words, mask, j)).sum::<u64>();
            sum = fold(sum);
        }
        chk.s.next = s;
        chk.c.next = c;
        settle(&mut chk);
        let sc = (s.index() + c.index()) as u64;
        assert_eq!(
            sc % 0xFFFF,
            sum % 0xFFFF,
            "carry-save sum is not the ones-complement sum"
        );
        assert_eq!(chk.eq.val(), sum == 0xFFFF, "s {s:?} c {c:?} sum {sum:x}");
        verified += chk.eq.val() as u32;
    }
    assert!(verified > 1000, "{verified}");
}

/// Word `i` of a beat (`words`, big-endian) with the lanes of `mask` only (lane `2i` is the high
/// byte).
fn masked(words: &[u64], mask: u64, i: usize) -> u64 {
    let lane = |l: usize| {
        ((words[l / 2] >> if l.is_multiple_of(2) { 8 } else { 0 }) & 0xFF) * ((mask >> l) & 1)
    };
    (lane(2 * i) << 8) | lane(2 * i + 1)
}

#[test]
fn the_sender_checks_and_lane_primitives() {
    let mut rng = Rng::new(3);
    // NibbleSum over real tables.
    let mut b = NibbleSum::default();
    b.connect_all();
    let mut vs = Vec::new();
    for _ in 0..300 {
        let n = rng.range(1, 64) as u8;
        let tab = sender_table(n).get_bits::<360>(if rng.pct(50) { 360 } else { 0 });
        let value = random::<16>(&mut rng);
        vs.push(vector!(b, [tab = tab, value = value], [lo, hi]));
    }
    against_icarus("NibbleSum", NibbleSum::default(), &vs);
    // SenderMatch
    let mut b = SenderMatch::default();
    b.connect_all();
    let mut vs = Vec::new();
    for _ in 0..300 {
        let n = rng.range(1, 64) as u8;
        let mult = sender_table(n).get_bits::<63>(rtl::pkt_parser::TAB_MULT);
        let (a_lo, a_hi, b_lo, b_hi) = (
            random::<7>(&mut rng),
            random::<7>(&mut rng),
            random::<7>(&mut rng),
            random::<7>(&mut rng),
        );
        let sender = random::<8>(&mut rng);
        vs.push(vector!(
            b,
            [
                a_lo = a_lo,
                a_hi = a_hi,
                b_lo = b_lo,
                b_hi = b_hi,
                sender = sender,
                mult = mult
            ],
            [s, p, in_range]
        ));
    }
    against_icarus("SenderMatch", SenderMatch::default(), &vs);
    // AnyEqual, half the time with `s` one of the words.
    let mut b = AnyEqual::default();
    b.connect_all();
    let mut vs = Vec::new();
    for _ in 0..300 {
        let p = random::<80>(&mut rng);
        let s = if rng.pct(50) {
            p.get_bits::<10>(10 * rng.range(0, 7) as usize)
        } else {
            random::<10>(&mut rng)
        };
        vs.push(vector!(b, [s = s, p = p], [hit]));
    }
    against_icarus("AnyEqual", AnyEqual::default(), &vs);
    // LaneMask around its thresholds.
    let mut b = LaneMask::default();
    b.connect_all();
    let mut vs = Vec::new();
    for _ in 0..300 {
        let small = |rng: &mut Rng| -> Bits<16> {
            if rng.pct(80) {
                rng.range(0, 20).into()
            } else {
                random::<16>(rng)
            }
        };
        let (ulen, rem, at4) = (small(&mut rng), small(&mut rng), rng.pct(50));
        vs.push(vector!(b, [ulen = ulen, rem = rem, at4 = at4], [mask]));
    }
    against_icarus("LaneMask", LaneMask::default(), &vs);
    // LaneWrite, lanes past the vector included.
    let mut b = LaneWrite::<192>::default();
    b.connect_all();
    let mut vs = Vec::new();
    for _ in 0..100 {
        let (inp, data, lane) = (
            random::<192>(&mut rng),
            random::<64>(&mut rng),
            Bits::<5>::from(rng.range(0, 5)),
        );
        vs.push(vector!(b, [inp = inp, data = data, lane = lane], [out]));
    }
    against_icarus("LaneWrite", LaneWrite::<192>::default(), &vs);
}

#[test]
fn the_generator_byte_alignment() {
    let mut rng = Rng::new(5);
    // ByteAlign: every lane offset, and the byte order against a plain 128-bit shift.
    let mut b = ByteAlign::default();
    b.connect_all();
    let mut vs = Vec::new();
    for i in 0..160 {
        let (hi, lo, a) = (rng.next_u64(), rng.next_u64() >> 8, i % 8);
        let v = vector!(
            b,
            [
                hi = Bits::<64>::from(hi),
                lo = Bits::<56>::from(lo),
                a = Bits::<3>::from(a)
            ],
            [out]
        );
        let pair = (u128::from(hi) << 64) | (u128::from(lo) << 8);
        assert_eq!(
            b.out.val(),
            Bits::<64>::from((pair >> (64 - 8 * a)) as u64),
            "a = {a}"
        );
        vs.push(v);
    }
    against_icarus("ByteAlign", ByteAlign::default(), &vs);
}

#[test]
fn the_generator_payload_mask() {
    // PayloadMask: every length from 0 to 255 (above 128 every byte is kept; the core never
    // gives one), each byte against the rule `j < len` on random data.
    let mut rng = Rng::new(6);
    let mut b = PayloadMask::default();
    b.connect_all();
    let mut vs = Vec::new();
    for len in 0..256u64 {
        let data = random::<1024>(&mut rng);
        let v = vector!(b, [data = data, len = Bits::<8>::from(len)], [out]);
        let got = b.out.val();
        for j in 0..128 {
            let bit = 1023 - 8 * j;
            let want = if (j as u64) < len || len > 128 {
                data.get_bits::<8>(bit - 7)
            } else {
                Bits::<8>::default()
            };
            assert_eq!(got.get_bits::<8>(bit - 7), want, "len {len}, byte {j}");
        }
        vs.push(v);
    }
    against_icarus("PayloadMask", PayloadMask::default(), &vs);
}

#[test]
fn the_generator_slot_memory() {
    // SlotRam: random writes and reads, each word picked by at most one reader per cycle (a
    // reader may pick several: their OR), each reader at a random slot, the outputs a cycle
    // after the picks, against Icarus; and against a plain model of the slots.
    let mut rng = Rng::new(7);
    let mut b = SlotRam::default();
    b.connect_all();
    let mut mem = [[0u64; WORDS]; BANK_SLOTS];
    let mut want = [0u64; READERS];
    let mut vs = Vec::new();
    let slot = |rng: &mut Rng| rng.range(0, BANK_SLOTS as u64 - 1) as usize;
    for i in 0..300 {
        let wdata = random::<1152>(&mut rng);
        let waddr = slot(&mut rng);
        let we = rng.pct(60) || i < 16;
        let mut sel = [0u64; READERS];
        for k in 0..WORDS {
            if rng.pct(60) {
                sel[rng.range(0, READERS as u64 - 1) as usize] |= 1 << k;
            }
        }
        let addr = [
            slot(&mut rng),
            slot(&mut rng),
            slot(&mut rng),
            slot(&mut rng),
        ];
        let s = |x: u64| Bits::<WORDS>::from(x);
        let a = |x: usize| Bits::<SLOT_BITS>::from(x as u64);
        let v = vector!(
            b,
            [
                we = we,
                waddr = a(waddr),
                wdata = wdata,
                sel0 = s(sel[0]),
                sel1 = s(sel[1]),
                sel2 = s(sel[2]),
                sel3 = s(sel[3]),
                addr0 = a(addr[0]),
                addr1 = a(addr[1]),
                addr2 = a(addr[2]),
                addr3 = a(addr[3])
            ],
            [out0, out1, out2, out3]
        );
        let outs = [b.out0.val(), b.out1.val(), b.out2.val(), b.out3.val()];
        for (r, out) in outs.iter().enumerate() {
            assert_eq!(
                hex(*out),
                format!("{:016x}", want[r]),
                "cycle {i}, reader {r}"
            );
        }
        vs.push(v);
        // The next cycle's outputs: the words picked now, read before this cycle's write.
        for (r, w) in want.iter_mut().enumerate() {
            *w = (0..WORDS)
                .filter(|&k| sel[r] >> k & 1 == 1)
                .fold(0, |o, k| o | mem[addr[r]][k]);
        }
        if we {
            for (k, w) in mem[waddr].iter_mut().enumerate() {
                *w = word(wdata, 64 * k);
            }
        }
        clock_edge(&mut b, |b| &mut b.clock);
    }
    against_icarus_clocked("SlotRam", SlotRam::default(), &vs, true);
}

#[test]
#[should_panic(expected = "two readers read word")]
fn the_generator_slot_memory_refuses_two_reads_of_one_word() {
    let mut b = SlotRam::default();
    b.connect_all();
    b.sel1.next = Bits::<WORDS>::from(0b100u64);
    b.sel3.next = Bits::<WORDS>::from(0b110u64);
    settle(&mut b);
    clock_edge(&mut b, |b| &mut b.clock);
}
