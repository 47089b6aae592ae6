//! `out_fifo`: an AXI-Stream FIFO in front of an output port, so that the MAC behind the port
//! may pause the stream (`out_ready` low) while the generator in front of it runs at one beat
//! per cycle (issue 17, item 2).
//!
//! A beat (`in_data`, `in_keep`, `in_last`) is written whenever `in_valid` is high; the beats
//! leave in order on `out_*`, a beat being taken in a cycle with `out_valid` and `out_ready`
//! both high (AXI-Stream: `out_valid` never waits for `out_ready`, and a beat offered stays
//! offered, unchanged, until it is taken). Into an empty FIFO a beat is offered in the cycle
//! it comes (`out_*` follow `in_*` through one multiplexer): taken then, it is never stored;
//! not taken, it goes into an output register and stays offered. Otherwise a beat written in
//! cycle t is offered from cycle t + 1 at the earliest: when no beat waits in the RAM and the
//! offer is free (or taken in cycle t) it goes straight into the output register; else it is
//! written into the RAM and read out (a registered read) in its turn.
//!
//! The generators never stall inside a frame: a generator starts a frame only when `room` says
//! that the free entries (neither written and not yet taken) hold its longest frame
//! (`room_min`; `room` is one register, decided a cycle early from the count and that cycle's
//! write and take), so a frame always goes into the FIFO whole and leaves it without a gap unless
//! the MAC pauses. A beat written into a full FIFO is dropped (the engine's room rule never lets
//! that happen; the module test checks the drop).
//!
//! Storage: `2^A` words of 73 bits (data, keep, last), synchronous write and registered read
//! (block RAM in a vendor flow; generic `synth` makes flip-flops of it).

use rust_hdl::prelude::*;

use crate::prim::ZeroExtend;

/// Bits of a stored beat: 64 data bits, 8 keep bits, `last`.
const WORD: usize = 73;

block! {
    /// The FIFO (`A`: address bits, `2^A` beats).
    pub struct OutFifo<const A: usize>() {
        pub clock: Signal<In, Clock>,
        pub in_data: Signal<In, Bits<64>>,
        pub in_keep: Signal<In, Bits<8>>,
        pub in_valid: Signal<In, Bit>,
        pub in_last: Signal<In, Bit>,
        pub out_data: Signal<Out, Bits<64>>,
        pub out_keep: Signal<Out, Bits<8>>,
        pub out_valid: Signal<Out, Bit>,
        pub out_last: Signal<Out, Bit>,
        pub out_ready: Signal<In, Bit>,
        /// The FIFO holds no beat (none written and not yet taken), from registers.
        pub empty: Signal<Out, Bit>,
        /// A constant at most `2^A`: the entries the writer's longest frame needs free.
        pub room_min: Signal<In, Bits<16>>,
        /// At least `room_min` entries free (`2^A` less the beats written and not yet taken),
        /// from one register (decided in the cycle before from the count
        /// and the cycle's write and take; the writer's start decision reads no adder).
        pub room: Signal<Out, Bit>,
        ram: RAM<Bits<WORD>, A>,
        /// Next RAM address to write.
        wr: DFF<Bits<A>>,
        /// Next RAM address to read out (the offered beat, if any, is at `rd - 1`).
        rd: DFF<Bits<A>>,
        /// Beats written and not yet taken (the offered one included).
        n_store: DFF<Bits<16>>,
        /// Beats written and not yet read out.
        n_avail: DFF<Bits<16>>,
        /// `n_store == 0`, `n_store == 2^A` and `n_avail == 0`, kept beside the counts (the
        /// take, bypass and write decisions read a flip-flop, not a 16-bit comparison).
        r_empty: DFFWithInit<Bit> = DFFWithInit::new(true),
        r_full: DFF<Bit>,
        r_na0: DFFWithInit<Bit> = DFFWithInit::new(true),
        /// A beat is offered: the RAM's read data, or `o_reg` when `o_reg_sel`.
        o_valid: DFF<Bit>,
        o_reg_sel: DFF<Bit>,
        o_reg: DFF<Bits<WORD>>,
        /// Not `room` (so that the power-on value, an empty FIFO, has room).
        r_noroom: DFF<Bit>,
        /// `2^A - room_min` (the most beats with room left) and one more.
        lim: Signal<Local, Bits<16>>,
        lim1: Signal<Local, Bits<16>>,
        /// The count grows (a beat stored, none taken) or shrinks (taken, none stored).
        grow: Signal<Local, Bit>,
        shrink: Signal<Local, Bit>,
        bypass: Signal<Local, Bit>,
        /// The FIFO holds nothing and a beat comes: it is offered in this cycle.
        through: Signal<Local, Bit>,
        /// ... and taken in this cycle: it is not stored.
        passed: Signal<Local, Bit>,
        o_word: Signal<Local, Bits<WORD>>,
        take: Signal<Local, Bit>,
        load: Signal<Local, Bit>,
        write: Signal<Local, Bit>,
        raddr: Signal<Local, Bits<A>>,
        xd: ZeroExtend<64, WORD>,
        xk: ZeroExtend<8, WORD>,
        word: Signal<Local, Bits<WORD>>,
        k1_16: Constant<Bits<16>> = Constant::new(1.into()),
        k64_16: Constant<Bits<16>> = Constant::new(64.into()),
        k_depth: Constant<Bits<16>> = Constant::new((1u64 << A).into()),
        k_depth1: Constant<Bits<16>> = Constant::new(((1u64 << A) - 1).into()),
        k1_a: Constant<Bits<A>> = Constant::new(1.into()),
        k_last: Constant<Bits<WORD>> = Constant::new(Bits::<WORD>::from(1u64) << 72),
        k0_w: Constant<Bits<WORD>> = Constant::new(Bits::<WORD>::default()),
    }
}

impl<const A: usize> Default for OutFifo<A> {
    fn default() -> Self {
        assert!((2..=15).contains(&A), "out_fifo: 4 to 2^15 beats");
        Self::build()
    }
}

impl<const A: usize> Logic for OutFifo<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, wr, rd, n_store, n_avail, r_empty, r_full, r_na0, o_valid, o_reg_sel,
            o_reg, r_noroom
        );
        self.ram.write_clock.next = self.clock.val();
        self.ram.read_clock.next = self.clock.val();
        self.take.next = self.o_valid.q.val() && self.out_ready.val();
        // A beat is read out when one was written (at an earlier edge) and the offer is free or
        // taken this cycle.
        self.load.next = !self.r_na0.q.val() && (!self.o_valid.q.val() || self.take.val());
        // Into an empty FIFO the arriving beat is offered at once; taken at once, it is done.
        self.through.next = self.in_valid.val() && self.r_empty.q.val();
        self.passed.next = self.through.val() && self.out_ready.val();
        // With no beat waiting in the RAM and the offer free, the arriving beat (not passed
        // through) goes straight into the output register.
        self.bypass.next = self.in_valid.val()
            && !self.passed.val()
            && self.r_na0.q.val()
            && (!self.o_valid.q.val() || self.take.val());
        self.write.next =
            self.in_valid.val() && !self.passed.val() && !self.bypass.val() && !self.r_full.q.val();
        // The read address: the next beat when one is read out, else the offered beat again (so
        // that the registered read keeps offering it).
        if self.load.val() {
            self.raddr.next = self.rd.q.val();
        } else {
            self.raddr.next = self.rd.q.val() - self.k1_a.val();
        }
        self.ram.read_address.next = self.raddr.val();
        self.xd.narrow.next = self.in_data.val();
        self.xk.narrow.next = self.in_keep.val();
        if self.in_last.val() {
            self.word.next =
                self.k_last.val() | (self.xk.wide.val() << self.k64_16.val()) | self.xd.wide.val();
        } else {
            self.word.next =
                self.k0_w.val() | (self.xk.wide.val() << self.k64_16.val()) | self.xd.wide.val();
        }
        self.ram.write_address.next = self.wr.q.val();
        self.ram.write_data.next = self.word.val();
        self.ram.write_enable.next = self.write.val();
        if self.write.val() {
            self.wr.d.next = self.wr.q.val() + self.k1_a.val();
        }
        if self.load.val() {
            self.rd.d.next = self.rd.q.val() + self.k1_a.val();
        }
        if self.write.val() && !self.load.val() {
            self.n_avail.d.next = self.n_avail.q.val() + self.k1_16.val();
            self.r_na0.d.next = false;
        } else if !self.write.val() && self.load.val() {
            self.n_avail.d.next = self.n_avail.q.val() - self.k1_16.val();
            self.r_na0.d.next = self.n_avail.q.val() == self.k1_16.val();
        }
        self.grow.next = (self.write.val() || self.bypass.val()) && !self.take.val();
        self.shrink.next = !(self.write.val() || self.bypass.val()) && self.take.val();
        if self.grow.val() {
            self.n_store.d.next = self.n_store.q.val() + self.k1_16.val();
            self.r_empty.d.next = false;
            self.r_full.d.next = self.n_store.q.val() == self.k_depth1.val();
        } else if self.shrink.val() {
            self.n_store.d.next = self.n_store.q.val() - self.k1_16.val();
            self.r_empty.d.next = self.n_store.q.val() == self.k1_16.val();
            self.r_full.d.next = false;
        }
        // `room` for the next cycle: the next count at most `lim`, compared from this count
        // (`n_store + 1 <= lim` is `n_store < lim`; `n_store - 1 <= lim` is `n_store <= lim + 1`).
        self.lim.next = self.k_depth.val() - self.room_min.val();
        self.lim1.next = self.lim.val() + self.k1_16.val();
        self.r_noroom.d.next = self.n_store.q.val() > self.lim.val();
        if self.grow.val() {
            self.r_noroom.d.next = self.n_store.q.val() >= self.lim.val();
        } else if self.shrink.val() {
            self.r_noroom.d.next = self.n_store.q.val() > self.lim1.val();
        }
        self.room.next = !self.r_noroom.q.val();
        self.o_valid.d.next =
            self.load.val() || self.bypass.val() || (self.o_valid.q.val() && !self.take.val());
        if self.load.val() {
            self.o_reg_sel.d.next = false;
        } else if self.bypass.val() {
            self.o_reg_sel.d.next = true;
            self.o_reg.d.next = self.word.val();
        }
        if self.o_reg_sel.q.val() {
            self.o_word.next = self.o_reg.q.val();
        } else {
            self.o_word.next = self.ram.read_data.val();
        }
        self.out_valid.next = self.o_valid.q.val() || self.through.val();
        if self.o_valid.q.val() {
            self.out_data.next = self.o_word.val().get_bits::<64>(0);
            self.out_keep.next = self.o_word.val().get_bits::<8>(64);
            self.out_last.next = self.o_word.val().get_bit(72);
        } else {
            self.out_data.next = self.in_data.val();
            self.out_keep.next = self.in_keep.val();
            self.out_last.next = self.in_last.val();
        }
        self.empty.next = self.r_empty.q.val();
    }
}
