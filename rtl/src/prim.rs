//! Small primitives whose Verilog is written by hand because rust-hdl 0.46 cannot express them
//! without width warnings (zero extension). Each has a Rust `update` for the simulator and a
//! one-line Verilog body that does the same.

use rust_hdl::prelude::*;

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
