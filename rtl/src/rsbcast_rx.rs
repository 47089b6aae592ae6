//! `rsbcast_rx`: the RSBCAST receiver (paper Alg. 1) the way `proto::rsbcast::Receiver` does it.
//!
//! Per tree `t` it keeps `next[t]`, the sequence number that tree owes next; `base` is the oldest
//! message not yet delivered and `first[i]` the cycle at which the first copy of message
//! `base + i` arrived, for up to [`IN_FLIGHT`] messages (as many as the model tracks,
//! `proto::regs::MAX_IN_FLIGHT`). `first` of message `s` is written, when its first copy
//! arrives, to a RAM at address `s mod 2^A` (block RAM in a vendor flow: 2 DP16KD on an ECP5
//! for 1,024 × 32 bits); the head's two entries are also kept in registers (`first0`,
//! `first1`), and the RAM's registered read port always holds the third (`base + 2`: the read
//! address is the next cycle's `base + 2`, a write to that address in the same cycle is
//! forwarded), so a delivery shifts the head by one every cycle if need be. The bitmask of copies seen for
//! a message is implicit: tree `t` has delivered message `s` iff `next[t] > s` (trees are FIFO);
//! `missing` is that mask for the oldest message, and `expired` says its Δ window (counted from
//! its first copy) has passed. `expired` is a register: [`RxUpdate`] computes next cycle's value
//! from the registers only (`now - first ≥ window` for the head kept and for the head shifted out,
//! `window = 0` for a first copy into an empty queue), and the cycle's `apply` / `restart` only
//! pick one, so no 32-bit subtraction and comparison sits in front of the caller's tick. It is
//! judged against the `window` of the cycle before; `window` may change only while nothing is in
//! flight or before a `restart` (the core's configuration changes only while Disabled, and
//! leaving Disabled restarts the receiver).
//!
//! `top` (`base + count`, the seq of the next new message) and `full` (`count` at the
//! capacity) are registers beside `count`, so that judging a copy needs one 32-bit equality
//! against a register, not a subtraction and a comparison with the count.
//!
//! Two combinational halves: [`RxJudge`] says what this cycle's copy would do, against the
//! registered state (`outcome`) and against a fresh receiver (`outcome_fresh`), from the state
//! and the copy's tree and seq only; [`RxUpdate`] computes the next state from `apply` and
//! `restart`. The caller (`lowi_core`) decides from the outcome whether to apply the copy; as the
//! outcome never depends on `apply`, there is no combinational loop (and Verilator sees none,
//! because this top only wires the halves).

use rust_hdl::prelude::*;

/// Address bits of the exported receiver's RAM of first-copy times: it tracks `2^IN_FLIGHT_BITS`
/// messages in flight.
pub const IN_FLIGHT_BITS: usize = 10;

/// Messages in flight the hardware tracks: `proto::regs::IN_FLIGHT_RTL`, as many as the
/// software receiver (`MAX_IN_FLIGHT`). `Config::validate_for(IN_FLIGHT_RTL)` refuses a
/// configuration whose window spans more than `IN_FLIGHT - 1` send gaps; a copy of one more
/// message in flight faults as "too many in flight", as in the model.
pub const IN_FLIGHT: u64 = 1 << IN_FLIGHT_BITS;
const _: () = assert!(IN_FLIGHT == proto::regs::IN_FLIGHT_RTL as u64);

/// Values of `outcome`.
pub mod outcome {
    /// First copy of a new message (|G| > 1).
    pub const FIRST: u64 = 1;
    /// A further copy; the message still misses copies.
    pub const MORE: u64 = 2;
    /// This copy completed its message: DELIVER.
    pub const DELIVER: u64 = 3;
    /// The tree already delivered this seq.
    pub const DUPLICATE: u64 = 4;
    /// The tree skipped a seq: NET-FAULT.
    pub const GAP: u64 = 5;
    /// More messages in flight than [`super::IN_FLIGHT`]: NET-FAULT.
    pub const TOO_MANY: u64 = 6;
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
}
block! {
    /// What a copy does, from the registered state (combinational).
    pub struct RxJudge<const A: usize>() {
        pub trees: Signal<In, Bits<3>>,
        pub copy_tree: Signal<In, Bits<2>>,
        pub copy_seq: Signal<In, Bits<32>>,
        pub q_next0: Signal<In, Bits<32>>,
        pub q_next1: Signal<In, Bits<32>>,
        pub q_next2: Signal<In, Bits<32>>,
        pub q_next3: Signal<In, Bits<32>>,
        pub q_base: Signal<In, Bits<32>>,
        pub q_count: Signal<In, Bits<16>>,
        /// `base + count`: the seq of the next new message (registered beside `count`).
        pub q_top: Signal<In, Bits<32>>,
        /// `count` is the capacity (registered).
        pub q_full: Signal<In, Bit>,
        pub missing: Signal<Out, Bits<4>>,
        pub in_flight: Signal<Out, Bits<16>>,
        pub outcome: Signal<Out, Bits<3>>,
        pub outcome_fresh: Signal<Out, Bits<3>>,
        pub push: Signal<Out, Bit>,
        pub n0: Signal<Out, Bits<32>>,
        pub n1: Signal<Out, Bits<32>>,
        pub n2: Signal<Out, Bits<32>>,
        pub n3: Signal<Out, Bits<32>>,
        expected: Signal<Local, Bits<32>>,
        diff: Signal<Local, Bits<32>>,
        seq1: Signal<Local, Bits<32>>,
        done0: Signal<Local, Bit>,
        done1: Signal<Local, Bit>,
        done2: Signal<Local, Bit>,
        done3: Signal<Local, Bit>,
        m0: Signal<Local, Bits<4>>,
        m1: Signal<Local, Bits<4>>,
        m2: Signal<Local, Bits<4>>,
        m3: Signal<Local, Bits<4>>,
        o_cur: Signal<Local, Bits<3>>,
        o_fresh: Signal<Local, Bits<3>>,
        p: Signal<Local, Bit>,
        c1_32: Constant<Bits<32>> = k(1),
        c1_3: Constant<Bits<3>> = k(1),
        c2_3: Constant<Bits<3>> = k(2),
        c3_3: Constant<Bits<3>> = k(3),
        c0_4: Constant<Bits<4>> = k(0),
        bit0_4: Constant<Bits<4>> = k(1),
        bit1_4: Constant<Bits<4>> = k(2),
        bit2_4: Constant<Bits<4>> = k(4),
        bit3_4: Constant<Bits<4>> = k(8),
        tree0: Constant<Bits<2>> = k(0),
        tree1: Constant<Bits<2>> = k(1),
        tree2: Constant<Bits<2>> = k(2),
        o_first: Constant<Bits<3>> = k(outcome::FIRST),
        o_more: Constant<Bits<3>> = k(outcome::MORE),
        o_deliver: Constant<Bits<3>> = k(outcome::DELIVER),
        o_duplicate: Constant<Bits<3>> = k(outcome::DUPLICATE),
        o_gap: Constant<Bits<3>> = k(outcome::GAP),
        o_too_many: Constant<Bits<3>> = k(outcome::TOO_MANY),
    }
}

impl<const A: usize> Default for RxJudge<A> {
    fn default() -> Self {
        assert!(
            (1..16).contains(&A),
            "rsbcast_rx: 2 to 2^15 messages in flight"
        );
        Self::build()
    }
}

impl<const A: usize> Logic for RxJudge<A> {
    #[hdl_gen]
    fn update(&mut self) {
        // The trees the oldest incomplete message still misses (its window check is
        // registered: `RxUpdate::d_expired`).
        if self.q_next0.val() == self.q_base.val() {
            self.m0.next = self.bit0_4.val();
        } else {
            self.m0.next = self.c0_4.val();
        }
        if (self.trees.val() > self.c1_3.val()) && (self.q_next1.val() == self.q_base.val()) {
            self.m1.next = self.bit1_4.val();
        } else {
            self.m1.next = self.c0_4.val();
        }
        if (self.trees.val() > self.c2_3.val()) && (self.q_next2.val() == self.q_base.val()) {
            self.m2.next = self.bit2_4.val();
        } else {
            self.m2.next = self.c0_4.val();
        }
        if (self.trees.val() > self.c3_3.val()) && (self.q_next3.val() == self.q_base.val()) {
            self.m3.next = self.bit3_4.val();
        } else {
            self.m3.next = self.c0_4.val();
        }
        self.missing.next = self.m0.val() | self.m1.val() | self.m2.val() | self.m3.val();
        self.in_flight.next = self.q_count.val();
        // Against a fresh receiver: seq 0 is the first copy (complete at once if |G| = 1).
        if self.copy_seq.val().any() {
            if self.copy_seq.val().get_bit(31) {
                self.o_fresh.next = self.o_duplicate.val();
            } else {
                self.o_fresh.next = self.o_gap.val();
            }
        } else if self.trees.val() == self.c1_3.val() {
            self.o_fresh.next = self.o_deliver.val();
        } else {
            self.o_fresh.next = self.o_first.val();
        }
        self.outcome_fresh.next = self.o_fresh.val();
        // Against the registered state. Serial-number order: `seq - expected` negative is a
        // duplicate, positive a gap.
        if self.copy_tree.val() == self.tree0.val() {
            self.expected.next = self.q_next0.val();
        } else if self.copy_tree.val() == self.tree1.val() {
            self.expected.next = self.q_next1.val();
        } else if self.copy_tree.val() == self.tree2.val() {
            self.expected.next = self.q_next2.val();
        } else {
            self.expected.next = self.q_next3.val();
        }
        self.diff.next = self.copy_seq.val() - self.expected.val();
        // A new message: its seq is `base + count` (`top`, a register: no subtraction here).
        self.p.next = self.copy_seq.val() == self.q_top.val();
        self.push.next = self.p.val();
        self.seq1.next = self.copy_seq.val() + self.c1_32.val();
        self.n0.next = self.q_next0.val();
        self.n1.next = self.q_next1.val();
        self.n2.next = self.q_next2.val();
        self.n3.next = self.q_next3.val();
        if self.copy_tree.val() == self.tree0.val() {
            self.n0.next = self.seq1.val();
        } else if self.copy_tree.val() == self.tree1.val() {
            self.n1.next = self.seq1.val();
        } else if self.copy_tree.val() == self.tree2.val() {
            self.n2.next = self.seq1.val();
        } else {
            self.n3.next = self.seq1.val();
        }
        // The oldest message is complete when every tree in use is past it.
        self.done0.next = self.n0.val() != self.q_base.val();
        self.done1.next =
            (self.trees.val() <= self.c1_3.val()) || (self.n1.val() != self.q_base.val());
        self.done2.next =
            (self.trees.val() <= self.c2_3.val()) || (self.n2.val() != self.q_base.val());
        self.done3.next =
            (self.trees.val() <= self.c3_3.val()) || (self.n3.val() != self.q_base.val());
        if self.diff.val().get_bit(31) {
            self.o_cur.next = self.o_duplicate.val();
        } else if self.diff.val().any() {
            self.o_cur.next = self.o_gap.val();
        } else if self.p.val() && self.q_full.val() {
            self.o_cur.next = self.o_too_many.val();
        } else if self.done0.val() && self.done1.val() && self.done2.val() && self.done3.val() {
            self.o_cur.next = self.o_deliver.val();
        } else if self.p.val() {
            self.o_cur.next = self.o_first.val();
        } else {
            self.o_cur.next = self.o_more.val();
        }
        self.outcome.next = self.o_cur.val();
    }
}

block! {
    /// The receiver's next state, and the writes and reads of the RAM of first-copy times.
    pub struct RxUpdate<const A: usize>() {
        pub restart: Signal<In, Bit>,
        /// The seq a restart expects next on every tree (0, or a joining node's lock-on point).
        pub restart_base: Signal<In, Bits<32>>,
        pub apply: Signal<In, Bit>,
        pub copy_tree: Signal<In, Bits<2>>,
        pub outcome: Signal<In, Bits<3>>,
        pub outcome_fresh: Signal<In, Bits<3>>,
        pub push: Signal<In, Bit>,
        pub n0: Signal<In, Bits<32>>,
        pub n1: Signal<In, Bits<32>>,
        pub n2: Signal<In, Bits<32>>,
        pub n3: Signal<In, Bits<32>>,
        pub q_now: Signal<In, Bits<32>>,
        pub q_next0: Signal<In, Bits<32>>,
        pub q_next1: Signal<In, Bits<32>>,
        pub q_next2: Signal<In, Bits<32>>,
        pub q_next3: Signal<In, Bits<32>>,
        pub q_base: Signal<In, Bits<32>>,
        pub q_count: Signal<In, Bits<16>>,
        pub q_top: Signal<In, Bits<32>>,
        pub q_full: Signal<In, Bit>,
        pub q_first0: Signal<In, Bits<32>>,
        pub q_first1: Signal<In, Bits<32>>,
        pub q_first2: Signal<In, Bits<32>>,
        /// A delivery was applied last cycle (`base` moved by one at this cycle's edge).
        pub q_moved: Signal<In, Bit>,
        /// The RAMs' registered reads of last cycle's `base + 3` and `base + 4`: `first` of this
        /// cycle's `base + 3` is the first if `base` did not move, the second if it did.
        pub ram3: Signal<In, Bits<32>>,
        pub ram4: Signal<In, Bits<32>>,
        /// Last cycle's write went to the address `ram3` read (which gave the old word):
        /// `byp_first` is the word written. (`ram4`'s read needs none: it is used after a
        /// delivery, and a cycle that delivers pushes nothing into the RAM.)
        pub byp3: Signal<In, Bit>,
        pub byp_first: Signal<In, Bits<32>>,
        /// `delta + drift`: the window of the expiry computed for the next cycle.
        pub window: Signal<In, Bits<32>>,
        pub d_now: Signal<Out, Bits<32>>,
        pub d_next0: Signal<Out, Bits<32>>,
        pub d_next1: Signal<Out, Bits<32>>,
        pub d_next2: Signal<Out, Bits<32>>,
        pub d_next3: Signal<Out, Bits<32>>,
        pub d_base: Signal<Out, Bits<32>>,
        pub d_count: Signal<Out, Bits<16>>,
        pub d_top: Signal<Out, Bits<32>>,
        pub d_full: Signal<Out, Bit>,
        pub d_first0: Signal<Out, Bits<32>>,
        pub d_first1: Signal<Out, Bits<32>>,
        pub d_first2: Signal<Out, Bits<32>>,
        pub d_moved: Signal<Out, Bit>,
        /// Next cycle's `expired`: `count > 0 && now - first0 > window` of the next state.
        pub d_expired: Signal<Out, Bit>,
        /// RAM write of a pushed message's `first` (`now`) at its seq (`base + count`).
        pub w_en: Signal<Out, Bit>,
        pub w_addr: Signal<Out, Bits<A>>,
        /// RAM reads: `base + 3` and `base + 4`, from the registers only.
        pub r3: Signal<Out, Bits<A>>,
        pub r4: Signal<Out, Bits<A>>,
        x0: Signal<Local, Bits<32>>,
        x1: Signal<Local, Bits<32>>,
        e0: Signal<Local, Bit>,
        e1: Signal<Local, Bit>,
        ez: Signal<Local, Bit>,
        first3: Signal<Local, Bits<32>>,
        c0_32: Constant<Bits<32>> = k(0),
        c1_32: Constant<Bits<32>> = k(1),
        // Modulo the RAM's size (with 4 entries `base + 4` is `base`, never read: the
        // three head registers and one RAM word hold everything in flight).
        c3_a: Constant<Bits<A>> = k(3 % (1 << A)),
        c4_a: Constant<Bits<A>> = k(4 % (1 << A)),
        c0_16: Constant<Bits<16>> = k(0),
        c1_16: Constant<Bits<16>> = k(1),
        c2_16: Constant<Bits<16>> = k(2),
        c_last: Constant<Bits<16>> = k((1 << A) - 1),
        tree0: Constant<Bits<2>> = k(0),
        tree1: Constant<Bits<2>> = k(1),
        tree2: Constant<Bits<2>> = k(2),
        o_first: Constant<Bits<3>> = k(outcome::FIRST),
        o_more: Constant<Bits<3>> = k(outcome::MORE),
        o_deliver: Constant<Bits<3>> = k(outcome::DELIVER),
    }
}

impl<const A: usize> Default for RxUpdate<A> {
    fn default() -> Self {
        Self::build()
    }
}

impl<const A: usize> Logic for RxUpdate<A> {
    #[hdl_gen]
    fn update(&mut self) {
        self.d_next0.next = self.q_next0.val();
        self.d_next1.next = self.q_next1.val();
        self.d_next2.next = self.q_next2.val();
        self.d_next3.next = self.q_next3.val();
        self.d_base.next = self.q_base.val();
        self.d_count.next = self.q_count.val();
        self.d_top.next = self.q_top.val();
        self.d_full.next = self.q_full.val();
        self.d_first0.next = self.q_first0.val();
        self.d_first1.next = self.q_first1.val();
        self.d_first2.next = self.q_first2.val();
        self.d_moved.next = false;
        self.d_now.next = self.q_now.val() + self.c1_32.val();
        // The window check of the next cycle, from registers only, for each candidate of the
        // next queue head's `first`: `(now + 1) - first > window` is `now - first >= window`
        // unless `now - first` is all ones (then `now + 1 - first` wraps to 0). Head kept: e0;
        // head shifted out (delivery): e1; a first copy into an empty queue (`first = now`):
        // `1 > window`.
        self.x0.next = self.q_now.val() - self.q_first0.val();
        self.x1.next = self.q_now.val() - self.q_first1.val();
        self.e0.next = (self.x0.val() >= self.window.val()) && !self.x0.val().all();
        self.e1.next = (self.x1.val() >= self.window.val()) && !self.x1.val().all();
        self.ez.next = self.window.val() == self.c0_32.val();
        self.d_expired.next = self.q_count.val().any() && self.e0.val();
        // The RAM: a pushed message's `first` at its seq; reads of `base + 3` and `base + 4`
        // from the registers (no copy's judgement in front of a RAM address), so that a
        // delivery finds the time of the message after the three head registers' last
        // whether or not `base` moved in the cycle before.
        self.w_en.next = false;
        self.w_addr.next = self.q_base.val().get_bits::<A>(0) + self.q_count.val().get_bits::<A>(0);
        self.r3.next = self.q_base.val().get_bits::<A>(0) + self.c3_a.val();
        self.r4.next = self.q_base.val().get_bits::<A>(0) + self.c4_a.val();
        if self.q_moved.val() {
            self.first3.next = self.ram4.val();
        } else if self.byp3.val() {
            self.first3.next = self.byp_first.val();
        } else {
            self.first3.next = self.ram3.val();
        }
        if self.restart.val() {
            self.d_expired.next = false;
            self.d_next0.next = self.restart_base.val();
            self.d_next1.next = self.restart_base.val();
            self.d_next2.next = self.restart_base.val();
            self.d_next3.next = self.restart_base.val();
            self.d_base.next = self.restart_base.val();
            self.d_count.next = self.c0_16.val();
            self.d_top.next = self.restart_base.val();
            self.d_full.next = false;
            // A copy applied in a restart's cycle is judged against a receiver at seq 0
            // (`outcome_fresh`): the caller restarts at another seq only without one.
            if self.apply.val() {
                if self.outcome_fresh.val() == self.o_deliver.val() {
                    // |G| = 1: seq 0 delivered at once.
                    self.d_next0.next = self.c1_32.val();
                    self.d_base.next = self.c1_32.val();
                    self.d_top.next = self.c1_32.val();
                } else if self.outcome_fresh.val() == self.o_first.val() {
                    if self.copy_tree.val() == self.tree0.val() {
                        self.d_next0.next = self.c1_32.val();
                    } else if self.copy_tree.val() == self.tree1.val() {
                        self.d_next1.next = self.c1_32.val();
                    } else if self.copy_tree.val() == self.tree2.val() {
                        self.d_next2.next = self.c1_32.val();
                    } else {
                        self.d_next3.next = self.c1_32.val();
                    }
                    self.d_count.next = self.c1_16.val();
                    self.d_top.next = self.c1_32.val();
                    self.d_first0.next = self.q_now.val();
                    self.d_expired.next = self.ez.val();
                }
            }
        } else if self.apply.val()
            && ((self.outcome.val() == self.o_deliver.val())
                || (self.outcome.val() == self.o_first.val())
                || (self.outcome.val() == self.o_more.val()))
        {
            self.d_next0.next = self.n0.val();
            self.d_next1.next = self.n1.val();
            self.d_next2.next = self.n2.val();
            self.d_next3.next = self.n3.val();
            if self.outcome.val() == self.o_deliver.val() {
                self.d_base.next = self.q_base.val() + self.c1_32.val();
                self.d_moved.next = true;
                if self.push.val() {
                    // |G| = 1: a new message delivered at once.
                    self.d_top.next = self.q_top.val() + self.c1_32.val();
                } else {
                    self.d_full.next = false;
                    self.d_count.next = self.q_count.val() - self.c1_16.val();
                    self.d_expired.next = (self.q_count.val() > self.c1_16.val()) && self.e1.val();
                    self.d_first0.next = self.q_first1.val();
                    self.d_first1.next = self.q_first2.val();
                    self.d_first2.next = self.first3.val();
                }
            } else if self.push.val() {
                self.d_count.next = self.q_count.val() + self.c1_16.val();
                self.d_top.next = self.q_top.val() + self.c1_32.val();
                self.d_full.next = self.q_count.val() == self.c_last.val();
                self.w_en.next = true;
                if self.q_count.val() == self.c0_16.val() {
                    self.d_first0.next = self.q_now.val();
                    self.d_expired.next = self.ez.val();
                } else if self.q_count.val() == self.c1_16.val() {
                    self.d_first1.next = self.q_now.val();
                } else if self.q_count.val() == self.c2_16.val() {
                    self.d_first2.next = self.q_now.val();
                }
            }
        }
    }
}

block! {
    /// The receiver: registers, the RAM of first-copy times (`2^A` words, written twice for its
    /// two reads: it tracks `2^A` messages in flight), [`RxJudge`] and [`RxUpdate`] (this block
    /// only wires them, and registers the RAM reads' forwarding of last cycle's write).
    ///
    /// Inputs: `restart` starts afresh this cycle (`restart_base` expected next on every tree: 0, or
    /// a joining node's lock-on point; a copy applied in the same cycle is judged by
    /// `outcome_fresh`, against a receiver at 0, so a restart elsewhere comes without one); `apply` records this cycle's copy
    /// (`copy_tree`, `copy_seq`); `trees` = |G|; `window` = delta + drift in cycles.
    pub struct RsbcastRx<const A: usize = IN_FLIGHT_BITS>() {
        pub clock: Signal<In, Clock>,
        pub restart: Signal<In, Bit>,
        pub restart_base: Signal<In, Bits<32>>,
        pub apply: Signal<In, Bit>,
        pub copy_tree: Signal<In, Bits<2>>,
        pub copy_seq: Signal<In, Bits<32>>,
        pub trees: Signal<In, Bits<3>>,
        pub window: Signal<In, Bits<32>>,
        pub expired: Signal<Out, Bit>,
        pub missing: Signal<Out, Bits<4>>,
        pub in_flight: Signal<Out, Bits<16>>,
        pub outcome: Signal<Out, Bits<3>>,
        pub outcome_fresh: Signal<Out, Bits<3>>,
        judge: RxJudge<A>,
        upd: RxUpdate<A>,
        r_now: DFF<Bits<32>>,
        r_next0: DFF<Bits<32>>,
        r_next1: DFF<Bits<32>>,
        r_next2: DFF<Bits<32>>,
        r_next3: DFF<Bits<32>>,
        r_base: DFF<Bits<32>>,
        r_count: DFF<Bits<16>>,
        r_top: DFF<Bits<32>>,
        r_full: DFF<Bit>,
        r_first0: DFF<Bits<32>>,
        r_first1: DFF<Bits<32>>,
        r_first2: DFF<Bits<32>>,
        r_moved: DFF<Bit>,
        /// `first` of message `s` at address `s mod 2^A`; the same words in both (one read each).
        ram3: RAM<Bits<32>, A>,
        ram4: RAM<Bits<32>, A>,
        /// Last cycle's write went to the address read by `ram3` (`byp_first`: the word).
        r_byp3: DFF<Bit>,
        r_byp_first: DFF<Bits<32>>,
        /// `expired`, registered (computed by `RxUpdate` from the candidates of the next head).
        r_expired: DFF<Bit>,
    }
}

impl<const A: usize> Default for RsbcastRx<A> {
    fn default() -> Self {
        Self::build()
    }
}

impl<const A: usize> Logic for RsbcastRx<A> {
    #[hdl_gen]
    fn update(&mut self) {
        self.r_now.clock.next = self.clock.val();
        self.r_now.d.next = self.upd.d_now.val();
        self.upd.q_now.next = self.r_now.q.val();
        self.r_next0.clock.next = self.clock.val();
        self.r_next0.d.next = self.upd.d_next0.val();
        self.judge.q_next0.next = self.r_next0.q.val();
        self.upd.q_next0.next = self.r_next0.q.val();
        self.r_next1.clock.next = self.clock.val();
        self.r_next1.d.next = self.upd.d_next1.val();
        self.judge.q_next1.next = self.r_next1.q.val();
        self.upd.q_next1.next = self.r_next1.q.val();
        self.r_next2.clock.next = self.clock.val();
        self.r_next2.d.next = self.upd.d_next2.val();
        self.judge.q_next2.next = self.r_next2.q.val();
        self.upd.q_next2.next = self.r_next2.q.val();
        self.r_next3.clock.next = self.clock.val();
        self.r_next3.d.next = self.upd.d_next3.val();
        self.judge.q_next3.next = self.r_next3.q.val();
        self.upd.q_next3.next = self.r_next3.q.val();
        self.r_base.clock.next = self.clock.val();
        self.r_base.d.next = self.upd.d_base.val();
        self.judge.q_base.next = self.r_base.q.val();
        self.upd.q_base.next = self.r_base.q.val();
        self.r_count.clock.next = self.clock.val();
        self.r_count.d.next = self.upd.d_count.val();
        self.judge.q_count.next = self.r_count.q.val();
        self.upd.q_count.next = self.r_count.q.val();
        self.r_top.clock.next = self.clock.val();
        self.r_top.d.next = self.upd.d_top.val();
        self.judge.q_top.next = self.r_top.q.val();
        self.upd.q_top.next = self.r_top.q.val();
        self.r_full.clock.next = self.clock.val();
        self.r_full.d.next = self.upd.d_full.val();
        self.judge.q_full.next = self.r_full.q.val();
        self.upd.q_full.next = self.r_full.q.val();
        self.r_first0.clock.next = self.clock.val();
        self.r_first0.d.next = self.upd.d_first0.val();
        self.upd.q_first0.next = self.r_first0.q.val();
        self.r_first1.clock.next = self.clock.val();
        self.r_first1.d.next = self.upd.d_first1.val();
        self.upd.q_first1.next = self.r_first1.q.val();
        self.r_first2.clock.next = self.clock.val();
        self.r_first2.d.next = self.upd.d_first2.val();
        self.upd.q_first2.next = self.r_first2.q.val();
        self.r_moved.clock.next = self.clock.val();
        self.r_moved.d.next = self.upd.d_moved.val();
        self.upd.q_moved.next = self.r_moved.q.val();
        self.ram3.write_clock.next = self.clock.val();
        self.ram3.read_clock.next = self.clock.val();
        self.ram3.write_enable.next = self.upd.w_en.val();
        self.ram3.write_address.next = self.upd.w_addr.val();
        self.ram3.write_data.next = self.r_now.q.val();
        self.ram3.read_address.next = self.upd.r3.val();
        self.upd.ram3.next = self.ram3.read_data.val();
        self.ram4.write_clock.next = self.clock.val();
        self.ram4.read_clock.next = self.clock.val();
        self.ram4.write_enable.next = self.upd.w_en.val();
        self.ram4.write_address.next = self.upd.w_addr.val();
        self.ram4.write_data.next = self.r_now.q.val();
        self.ram4.read_address.next = self.upd.r4.val();
        self.upd.ram4.next = self.ram4.read_data.val();
        self.r_byp3.clock.next = self.clock.val();
        self.r_byp3.d.next = self.upd.w_en.val() && (self.upd.w_addr.val() == self.upd.r3.val());
        self.upd.byp3.next = self.r_byp3.q.val();
        self.r_byp_first.clock.next = self.clock.val();
        self.r_byp_first.d.next = self.r_now.q.val();
        self.upd.byp_first.next = self.r_byp_first.q.val();
        self.r_expired.clock.next = self.clock.val();
        self.r_expired.d.next = self.upd.d_expired.val();
        self.expired.next = self.r_expired.q.val();
        self.upd.window.next = self.window.val();
        self.judge.trees.next = self.trees.val();
        self.judge.copy_tree.next = self.copy_tree.val();
        self.judge.copy_seq.next = self.copy_seq.val();
        self.upd.restart.next = self.restart.val();
        self.upd.restart_base.next = self.restart_base.val();
        self.upd.apply.next = self.apply.val();
        self.upd.copy_tree.next = self.copy_tree.val();
        self.upd.outcome.next = self.judge.outcome.val();
        self.upd.outcome_fresh.next = self.judge.outcome_fresh.val();
        self.upd.push.next = self.judge.push.val();
        self.upd.n0.next = self.judge.n0.val();
        self.upd.n1.next = self.judge.n1.val();
        self.upd.n2.next = self.judge.n2.val();
        self.upd.n3.next = self.judge.n3.val();
        self.missing.next = self.judge.missing.val();
        self.in_flight.next = self.judge.in_flight.val();
        self.outcome.next = self.judge.outcome.val();
        self.outcome_fresh.next = self.judge.outcome_fresh.val();
    }
}
