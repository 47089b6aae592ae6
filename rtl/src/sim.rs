//! Cycle stepping of a rust-hdl circuit without the threaded `Simulation` testbench:
//! set inputs, [`Cycle::settle`] (combinational outputs of this cycle), read outputs,
//! [`Cycle::edge`] (rising and falling clock edge). Also the few helpers every bench needs:
//! [`bits`] and [`val`] between `u64` and `Bits`, [`word`] (64 bits of a wide value),
//! [`settle`] and [`clock_edge`] for a block driven without a `Cycle`.

use rust_hdl::prelude::*;

/// A circuit driven cycle by cycle.
pub struct Cycle<B: Block> {
    /// The circuit.
    pub uut: Box<B>,
    clock: fn(&mut B) -> &mut Signal<In, Clock>,
    /// Rising edges so far.
    pub cycle: u64,
}

impl<B: Block> Cycle<B> {
    /// Connect and check the circuit (as the Verilog export does) and settle it.
    pub fn new(uut: B, clock: fn(&mut B) -> &mut Signal<In, Clock>) -> Self {
        let mut uut = Box::new(uut);
        uut.connect_all();
        check_all(uut.as_ref()).expect("rust-hdl circuit checks");
        let mut c = Cycle {
            uut,
            clock,
            cycle: 0,
        };
        c.settle();
        c
    }

    /// Propagate the combinational logic until nothing changes.
    pub fn settle(&mut self) {
        settle(self.uut.as_mut());
    }

    /// One clock cycle: rising edge (registers take their inputs), settle, falling edge.
    pub fn edge(&mut self) {
        self.settle();
        clock_edge(self.uut.as_mut(), self.clock);
        self.cycle += 1;
    }
}

/// Propagate a block's combinational logic until nothing changes.
pub fn settle<B: Block>(b: &mut B) {
    assert!(
        simulate(b, 200),
        "circuit did not converge (combinational loop?)"
    );
}

/// A rising and a falling edge of `clock`, each settled (outputs read before it are the
/// cycle's; registers take their inputs at the rising edge).
pub fn clock_edge<B: Block>(b: &mut B, clock: fn(&mut B) -> &mut Signal<In, Clock>) {
    clock(b).next = Clock { clk: true };
    settle(b);
    clock(b).next = Clock { clk: false };
    settle(b);
}

/// The value helpers, defined with the primitives whose simulation models use them.
pub use crate::prim::{bits, val, word};

/// A small deterministic PRNG (xorshift64*), so tests need no extra crate and print seeds.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// Seeded generator (any seed; 0 is remapped).
    pub fn new(seed: u64) -> Self {
        // splitmix64 of the seed, so that neighbouring seeds give unrelated streams.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    /// True with probability 1/`n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.next_u64().is_multiple_of(n)
    }
    /// True with probability `p` percent.
    pub fn pct(&mut self, p: u64) -> bool {
        self.next_u64() % 100 < p
    }
}
