//! `rsbcast_rx`: the RSBCAST receiver (paper Alg. 1) the way `proto::rsbcast::Receiver` does it.
//!
//! Per tree `t` it keeps `next[t]`, the sequence number that tree owes next; `base` is the oldest
//! message not yet delivered and `first[i]` the cycle at which the first copy of message
//! `base + i` arrived (a shift queue of [`IN_FLIGHT`] entries). A copy is judged against the
//! state at the start of the cycle, or against a fresh receiver when `restart` is high in the
//! same cycle (a new epoch begins, or the protocol is reset). `outcome` is combinational; the
//! state changes at the clock edge only when `copy_valid` is high.
//!
//! The bitmask of copies seen for a message is implicit: tree `t` has delivered message `s` iff
//! `next[t] > s` (trees are FIFO). `missing` is that mask for the oldest message.

use rust_hdl::prelude::*;

/// Messages in flight the hardware tracks (the model tracks `proto::regs::MAX_IN_FLIGHT`; a
/// configuration whose window exceeds `IN_FLIGHT - 1` loop periods is outside what this RTL
/// covers and faults as "too many in flight").
pub const IN_FLIGHT: u64 = 4;

/// Values of `outcome`.
pub mod outcome {
    /// No copy this cycle.
    pub const NONE: u64 = 0;
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

/// The receiver.
#[derive(LogicBlock)]
pub struct RsbcastRx {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Evaluate this cycle's copy against a fresh receiver (seq 0 expected everywhere) and keep that.
    pub restart: Signal<In, Bit>,
    /// A copy to record this cycle.
    pub copy_valid: Signal<In, Bit>,
    /// The copy's tree.
    pub copy_tree: Signal<In, Bits<2>>,
    /// The copy's `msg_seq`.
    pub copy_seq: Signal<In, Bits<32>>,
    /// |G| (1..=4).
    pub trees: Signal<In, Bits<3>>,
    /// RSBCAST window in cycles (delta + drift).
    pub window: Signal<In, Bits<32>>,
    /// The oldest incomplete message's window has passed (judged on the registered state).
    pub expired: Signal<Out, Bit>,
    /// Trees (bit t) that have not delivered the oldest incomplete message.
    pub missing: Signal<Out, Bits<4>>,
    /// Messages with at least one copy, not complete (registered).
    pub in_flight: Signal<Out, Bits<3>>,
    /// What this cycle's copy does (see [`outcome`]).
    pub outcome: Signal<Out, Bits<3>>,
    now: DFF<Bits<32>>,
    next0: DFF<Bits<32>>,
    next1: DFF<Bits<32>>,
    next2: DFF<Bits<32>>,
    next3: DFF<Bits<32>>,
    base: DFF<Bits<32>>,
    count: DFF<Bits<3>>,
    first0: DFF<Bits<32>>,
    first1: DFF<Bits<32>>,
    first2: DFF<Bits<32>>,
    first3: DFF<Bits<32>>,
    // The state the copy is judged against (registered, or fresh on restart).
    e_next0: Signal<Local, Bits<32>>,
    e_next1: Signal<Local, Bits<32>>,
    e_next2: Signal<Local, Bits<32>>,
    e_next3: Signal<Local, Bits<32>>,
    e_base: Signal<Local, Bits<32>>,
    e_count: Signal<Local, Bits<3>>,
    expected: Signal<Local, Bits<32>>,
    diff: Signal<Local, Bits<32>>,
    off: Signal<Local, Bits<32>>,
    push: Signal<Local, Bit>,
    seq1: Signal<Local, Bits<32>>,
    n0: Signal<Local, Bits<32>>,
    n1: Signal<Local, Bits<32>>,
    n2: Signal<Local, Bits<32>>,
    n3: Signal<Local, Bits<32>>,
    done0: Signal<Local, Bit>,
    done1: Signal<Local, Bit>,
    done2: Signal<Local, Bit>,
    done3: Signal<Local, Bit>,
    m0: Signal<Local, Bits<4>>,
    m1: Signal<Local, Bits<4>>,
    m2: Signal<Local, Bits<4>>,
    m3: Signal<Local, Bits<4>>,
    c0_32: Constant<Bits<32>>,
    c0_29: Constant<Bits<29>>,
    c1_32: Constant<Bits<32>>,
    c0_3: Constant<Bits<3>>,
    c1_3: Constant<Bits<3>>,
    c2_3: Constant<Bits<3>>,
    c3_3: Constant<Bits<3>>,
    c_in_flight: Constant<Bits<3>>,
    c0_4: Constant<Bits<4>>,
    bit0_4: Constant<Bits<4>>,
    bit1_4: Constant<Bits<4>>,
    bit2_4: Constant<Bits<4>>,
    bit3_4: Constant<Bits<4>>,
    tree0: Constant<Bits<2>>,
    tree1: Constant<Bits<2>>,
    tree2: Constant<Bits<2>>,
    o_none: Constant<Bits<3>>,
    o_first: Constant<Bits<3>>,
    o_more: Constant<Bits<3>>,
    o_deliver: Constant<Bits<3>>,
    o_duplicate: Constant<Bits<3>>,
    o_gap: Constant<Bits<3>>,
    o_too_many: Constant<Bits<3>>,
}

impl Default for RsbcastRx {
    fn default() -> Self {
        let c = |v: u64| Constant::new(Bits::<3>::from(v));
        Self {
            clock: Default::default(),
            restart: Default::default(),
            copy_valid: Default::default(),
            copy_tree: Default::default(),
            copy_seq: Default::default(),
            trees: Default::default(),
            window: Default::default(),
            expired: Default::default(),
            missing: Default::default(),
            in_flight: Default::default(),
            outcome: Default::default(),
            now: Default::default(),
            next0: Default::default(),
            next1: Default::default(),
            next2: Default::default(),
            next3: Default::default(),
            base: Default::default(),
            count: Default::default(),
            first0: Default::default(),
            first1: Default::default(),
            first2: Default::default(),
            first3: Default::default(),
            e_next0: Default::default(),
            e_next1: Default::default(),
            e_next2: Default::default(),
            e_next3: Default::default(),
            e_base: Default::default(),
            e_count: Default::default(),
            expected: Default::default(),
            diff: Default::default(),
            off: Default::default(),
            push: Default::default(),
            seq1: Default::default(),
            n0: Default::default(),
            n1: Default::default(),
            n2: Default::default(),
            n3: Default::default(),
            done0: Default::default(),
            done1: Default::default(),
            done2: Default::default(),
            done3: Default::default(),
            m0: Default::default(),
            m1: Default::default(),
            m2: Default::default(),
            m3: Default::default(),
            c0_32: Constant::new(0.into()),
            c0_29: Constant::new(0.into()),
            c1_32: Constant::new(1.into()),
            c0_3: c(0),
            c1_3: c(1),
            c2_3: c(2),
            c3_3: c(3),
            c_in_flight: c(IN_FLIGHT),
            c0_4: Constant::new(0.into()),
            bit0_4: Constant::new(1.into()),
            bit1_4: Constant::new(2.into()),
            bit2_4: Constant::new(4.into()),
            bit3_4: Constant::new(8.into()),
            tree0: Constant::new(0.into()),
            tree1: Constant::new(1.into()),
            tree2: Constant::new(2.into()),
            o_none: c(outcome::NONE),
            o_first: c(outcome::FIRST),
            o_more: c(outcome::MORE),
            o_deliver: c(outcome::DELIVER),
            o_duplicate: c(outcome::DUPLICATE),
            o_gap: c(outcome::GAP),
            o_too_many: c(outcome::TOO_MANY),
        }
    }
}

impl Logic for RsbcastRx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, now, next0, next1, next2, next3, base, count, first0, first1, first2,
            first3
        );
        self.now.d.next = self.now.q.val() + self.c1_32.val();
        // Window check of the oldest incomplete message, and the trees it still misses.
        self.expired.next = self.count.q.val().any()
            && ((self.now.q.val() - self.first0.q.val()) > self.window.val());
        if self.next0.q.val() == self.base.q.val() {
            self.m0.next = self.bit0_4.val();
        } else {
            self.m0.next = self.c0_4.val();
        }
        if (self.trees.val() > self.c1_3.val()) && (self.next1.q.val() == self.base.q.val()) {
            self.m1.next = self.bit1_4.val();
        } else {
            self.m1.next = self.c0_4.val();
        }
        if (self.trees.val() > self.c2_3.val()) && (self.next2.q.val() == self.base.q.val()) {
            self.m2.next = self.bit2_4.val();
        } else {
            self.m2.next = self.c0_4.val();
        }
        if (self.trees.val() > self.c3_3.val()) && (self.next3.q.val() == self.base.q.val()) {
            self.m3.next = self.bit3_4.val();
        } else {
            self.m3.next = self.c0_4.val();
        }
        self.missing.next = self.m0.val() | self.m1.val() | self.m2.val() | self.m3.val();
        self.in_flight.next = self.count.q.val();

        // The state this cycle's copy is judged against.
        if self.restart.val() {
            self.e_next0.next = self.c0_32.val();
            self.e_next1.next = self.c0_32.val();
            self.e_next2.next = self.c0_32.val();
            self.e_next3.next = self.c0_32.val();
            self.e_base.next = self.c0_32.val();
            self.e_count.next = self.c0_3.val();
        } else {
            self.e_next0.next = self.next0.q.val();
            self.e_next1.next = self.next1.q.val();
            self.e_next2.next = self.next2.q.val();
            self.e_next3.next = self.next3.q.val();
            self.e_base.next = self.base.q.val();
            self.e_count.next = self.count.q.val();
        }
        if self.copy_tree.val() == self.tree0.val() {
            self.expected.next = self.e_next0.val();
        } else if self.copy_tree.val() == self.tree1.val() {
            self.expected.next = self.e_next1.val();
        } else if self.copy_tree.val() == self.tree2.val() {
            self.expected.next = self.e_next2.val();
        } else {
            self.expected.next = self.e_next3.val();
        }
        self.diff.next = self.copy_seq.val() - self.expected.val();
        self.off.next = self.copy_seq.val() - self.e_base.val();
        self.push.next = (self.off.val().get_bits::<29>(3) == self.c0_29.val())
            && (self.off.val().get_bits::<3>(0) == self.e_count.val());
        self.seq1.next = self.copy_seq.val() + self.c1_32.val();
        // `next` after this copy (only meaningful when it is in order).
        self.n0.next = self.e_next0.val();
        self.n1.next = self.e_next1.val();
        self.n2.next = self.e_next2.val();
        self.n3.next = self.e_next3.val();
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
        self.done0.next = self.n0.val() != self.e_base.val();
        self.done1.next =
            (self.trees.val() <= self.c1_3.val()) || (self.n1.val() != self.e_base.val());
        self.done2.next =
            (self.trees.val() <= self.c2_3.val()) || (self.n2.val() != self.e_base.val());
        self.done3.next =
            (self.trees.val() <= self.c3_3.val()) || (self.n3.val() != self.e_base.val());

        self.outcome.next = self.o_none.val();
        if self.restart.val() {
            self.next0.d.next = self.c0_32.val();
            self.next1.d.next = self.c0_32.val();
            self.next2.d.next = self.c0_32.val();
            self.next3.d.next = self.c0_32.val();
            self.base.d.next = self.c0_32.val();
            self.count.d.next = self.c0_3.val();
        }
        if self.copy_valid.val() {
            if self.diff.val().get_bit(31) {
                self.outcome.next = self.o_duplicate.val();
            } else if self.diff.val().any() {
                self.outcome.next = self.o_gap.val();
            } else if self.push.val() && (self.e_count.val() == self.c_in_flight.val()) {
                self.outcome.next = self.o_too_many.val();
            } else {
                self.next0.d.next = self.n0.val();
                self.next1.d.next = self.n1.val();
                self.next2.d.next = self.n2.val();
                self.next3.d.next = self.n3.val();
                if self.done0.val() && self.done1.val() && self.done2.val() && self.done3.val() {
                    self.outcome.next = self.o_deliver.val();
                    self.base.d.next = self.e_base.val() + self.c1_32.val();
                    if self.push.val() {
                        // |G| = 1: the first copy is also the last; nothing stays in flight.
                        self.count.d.next = self.e_count.val();
                    } else {
                        self.count.d.next = self.e_count.val() - self.c1_3.val();
                        self.first0.d.next = self.first1.q.val();
                        self.first1.d.next = self.first2.q.val();
                        self.first2.d.next = self.first3.q.val();
                    }
                } else if self.push.val() {
                    self.outcome.next = self.o_first.val();
                    self.count.d.next = self.e_count.val() + self.c1_3.val();
                    if self.e_count.val() == self.c0_3.val() {
                        self.first0.d.next = self.now.q.val();
                    } else if self.e_count.val() == self.c1_3.val() {
                        self.first1.d.next = self.now.q.val();
                    } else if self.e_count.val() == self.c2_3.val() {
                        self.first2.d.next = self.now.q.val();
                    } else {
                        self.first3.d.next = self.now.q.val();
                    }
                } else {
                    self.outcome.next = self.o_more.val();
                }
            }
        }
    }
}
