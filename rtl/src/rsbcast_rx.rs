//! `rsbcast_rx`: the RSBCAST receiver (paper Alg. 1) the way `proto::rsbcast::Receiver` does it.
//!
//! Per tree `t` it keeps `next[t]`, the sequence number that tree owes next; `base` is the oldest
//! message not yet delivered and `first[i]` the cycle at which the first copy of message
//! `base + i` arrived, for up to [`IN_FLIGHT`] messages (as many as the model tracks,
//! `proto::regs::MAX_IN_FLIGHT`). `first` of message `s` is written, when its first copy
//! arrives, to a RAM at address `s mod 2^A` (block RAM in a vendor flow: 2 DP16KD on an ECP5
//! for 1,024 × 32 bits). The two oldest messages are kept in registers as their ages
//! (`age0`, `age1`: `now - first`, modulo 2^32, counted up every cycle beside `now`), the third
//! as its time (`first2`), and the RAM's two registered read ports hold `first` of `base + 3`
//! (one for `base` kept, one for `base` moved; a write to the address read in the same cycle is
//! forwarded). When the head shifts, `age1` takes `(now + 1) - first2` (`now + 1` is a register
//! too) and `first2` the RAM's word. The block RAM's output is late, so the word of the read
//! for this cycle's `base` (one LUT picks the port) goes into a register in every cycle (`f3`,
//! the forwarding's flag and word beside it), and a shift only sets a flag that `first2` is
//! there now (the next cycle moves it into `first2` unless it shifts again): no decision of
//! the act stage, and no forwarding, sits behind the RAM. A delivery shifts the head by one
//! every cycle if need be. The bitmask of copies seen for a message is implicit: tree `t` has delivered message `s` iff
//! `next[t] > s` (trees are FIFO); `missing` is that mask for the oldest message, and `expired`
//! says its Δ window (counted from its first copy) has passed. `expired` is a register:
//! [`RxUpdate`] computes next cycle's value from the registers only (`age ≥ window` for the
//! head kept and for the head shifted out, `window = 0` for a first copy into an empty queue:
//! one comparison of a register with `window`, no subtraction in front), and the cycle's
//! `apply` / `restart` only pick one, so no 32-bit comparison sits in front of the caller's
//! tick. It is judged against the `window` of the cycle before; `window` may change only while
//! nothing is in flight or before a `restart` (the core's configuration changes only while Disabled, and
//! leaving Disabled restarts the receiver).
//!
//! `top` (`base + count`, the seq of the next new message) and `full` (`count` at the
//! capacity) are registers beside `count`, so that judging a copy needs one 32-bit equality
//! against a register, not a subtraction and a comparison with the count.
//!
//! A copy is judged in the cycle it comes (`in_tree`, `in_seq`) and acted on in the next, when
//! the caller presents its tree again (`copy_tree`; its seq is the `in_seq` the receiver
//! registered) with `apply` / `restart` (rtl/README, "The event pipeline"). [`RxPre`], the
//! judge stage, cannot know what the act stage does in the same cycle to the copy before, so it judges the coming copy against each state the receiver
//! can be in next cycle (nothing changed; the copy before applied; a restart at `restart_base`;
//! a restart that took the copy before), from registers and inputs only, and registers every
//! verdict; in the next cycle the registered record of what the act stage did picks one
//! (`outcome`), and `outcome_fresh` is the verdict against a receiver restarted at 0 (a restart
//! in the act cycle itself). [`RxJudge`] gives the act stage each tree's next seq and the
//! oldest message's missing trees; [`RxUpdate`] computes the next state from `apply` and
//! `restart`. The caller (`lowi_core`) decides from the outcome whether to apply the copy; as
//! the outcome never depends on `apply` in the same cycle, there is no combinational loop.

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

/// The verdict word inside the receiver: the [`outcome`] (bits 0-2) with its two decodes the act
/// stage needs, `APPLIED` (FIRST, MORE or DELIVER: an applied copy changes the state) and
/// `DELIVERS` (DELIVER). The judge stage registers words, so the act stage's pick of one yields
/// those decisions as bits, with no decoder of the picked code behind it.
mod word {
    use super::outcome;
    pub const APPLIED: u64 = 1 << 3;
    pub const DELIVERS: u64 = 1 << 4;
    pub const FIRST: u64 = outcome::FIRST | APPLIED;
    pub const MORE: u64 = outcome::MORE | APPLIED;
    pub const DELIVER: u64 = outcome::DELIVER | APPLIED | DELIVERS;
    pub const DUPLICATE: u64 = outcome::DUPLICATE;
    pub const GAP: u64 = outcome::GAP;
    pub const TOO_MANY: u64 = outcome::TOO_MANY;
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
}
block! {
    /// The act stage's view of the copy the core acts on (`copy_tree`, `copy_seq`, which came in
    /// the cycle before): each tree's next seq if it is applied, and the oldest message's missing
    /// trees (combinational, from the registered state).
    pub struct RxJudge<const A: usize>() {
        pub trees: Signal<In, Bits<3>>,
        pub copy_tree: Signal<In, Bits<2>>,
        /// `copy_seq + 1` (summed, registered, in the cycle the copy came).
        pub copy_seq1: Signal<In, Bits<32>>,
        pub q_next0: Signal<In, Bits<32>>,
        pub q_next1: Signal<In, Bits<32>>,
        pub q_next2: Signal<In, Bits<32>>,
        pub q_next3: Signal<In, Bits<32>>,
        pub q_base: Signal<In, Bits<32>>,
        /// Trees (bit t) that have not delivered the oldest message.
        pub missing: Signal<Out, Bits<4>>,
        /// `next[t]` after the copy is applied.
        pub n0: Signal<Out, Bits<32>>,
        pub n1: Signal<Out, Bits<32>>,
        pub n2: Signal<Out, Bits<32>>,
        pub n3: Signal<Out, Bits<32>>,
        m0: Signal<Local, Bits<4>>,
        m1: Signal<Local, Bits<4>>,
        m2: Signal<Local, Bits<4>>,
        m3: Signal<Local, Bits<4>>,
        /// The low `A + 1` bits (`next[t] - base` is 0 to `2^A`: see `missing`).
        c_lo: Constant<Bits<32>> = k((2 << A) - 1),
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
        // `next[t] == base` on the low `A + 1` bits: every tree's `next` is at least `base`
        // (trees deliver in order, and `base` moves past a message only once every tree has
        // it) and at most `top = base + count`, `count` ≤ `2^A`; so `next[t] - base` is 0 to
        // `2^A` (modulo 2^32) and its low `A + 1` bits are 0 only when it is. An 11-bit
        // comparison instead of a 32-bit one, a LUT level less behind the `next` registers.
        if !((self.q_next0.val() ^ self.q_base.val()) & self.c_lo.val()).any() {
            self.m0.next = self.bit0_4.val();
        } else {
            self.m0.next = self.c0_4.val();
        }
        if (self.trees.val() > self.c1_3.val())
            && !((self.q_next1.val() ^ self.q_base.val()) & self.c_lo.val()).any()
        {
            self.m1.next = self.bit1_4.val();
        } else {
            self.m1.next = self.c0_4.val();
        }
        if (self.trees.val() > self.c2_3.val())
            && !((self.q_next2.val() ^ self.q_base.val()) & self.c_lo.val()).any()
        {
            self.m2.next = self.bit2_4.val();
        } else {
            self.m2.next = self.c0_4.val();
        }
        if (self.trees.val() > self.c3_3.val())
            && !((self.q_next3.val() ^ self.q_base.val()) & self.c_lo.val()).any()
        {
            self.m3.next = self.bit3_4.val();
        } else {
            self.m3.next = self.c0_4.val();
        }
        self.missing.next = self.m0.val() | self.m1.val() | self.m2.val() | self.m3.val();
        self.n0.next = self.q_next0.val();
        self.n1.next = self.q_next1.val();
        self.n2.next = self.q_next2.val();
        self.n3.next = self.q_next3.val();
        if self.copy_tree.val() == self.tree0.val() {
            self.n0.next = self.copy_seq1.val();
        } else if self.copy_tree.val() == self.tree1.val() {
            self.n1.next = self.copy_seq1.val();
        } else if self.copy_tree.val() == self.tree2.val() {
            self.n2.next = self.copy_seq1.val();
        } else {
            self.n3.next = self.copy_seq1.val();
        }
    }
}

block! {
    /// The sign of `a - b` (modulo 2^32, combinational): `a[31] ^ b[31]` and the borrow into bit
    /// 31, `a[30:0] < b[30:0]`. Only the sign of the copy's distances is needed (their zero is
    /// an equality, tested beside), and a subtraction whose other 31 bits go unused is what
    /// Verilator's lint refuses.
    pub struct SubNeg() {
        pub a: Signal<In, Bits<32>>,
        pub b: Signal<In, Bits<32>>,
        pub neg: Signal<Out, Bit>,
    }
}

impl Default for SubNeg {
    fn default() -> Self {
        Self::build()
    }
}

impl Logic for SubNeg {
    #[hdl_gen]
    fn update(&mut self) {
        self.neg.next = self.a.val().get_bit(31)
            ^ self.b.val().get_bit(31)
            ^ (self.a.val().get_bits::<31>(0) < self.b.val().get_bits::<31>(0));
    }
}

block! {
    /// A copy's outcome from its judgement against one state (combinational): `neg` / `zero`:
    /// the sign and zero of `seq - next[tree]`; `p`: `seq == top` (a new message); `full`: as
    /// many in flight as tracked; `done`: every tree has the copy's message once it is applied.
    pub struct RxVerdict() {
        pub neg: Signal<In, Bit>,
        pub zero: Signal<In, Bit>,
        pub p: Signal<In, Bit>,
        pub full: Signal<In, Bit>,
        pub done: Signal<In, Bit>,
        /// The outcome's [`word`].
        pub outcome: Signal<Out, Bits<5>>,
        o_more: Constant<Bits<5>> = k(word::MORE),
        o_first: Constant<Bits<5>> = k(word::FIRST),
        o_deliver: Constant<Bits<5>> = k(word::DELIVER),
        o_duplicate: Constant<Bits<5>> = k(word::DUPLICATE),
        o_gap: Constant<Bits<5>> = k(word::GAP),
        o_too_many: Constant<Bits<5>> = k(word::TOO_MANY),
    }
}

impl Default for RxVerdict {
    fn default() -> Self {
        Self::build()
    }
}

impl Logic for RxVerdict {
    #[hdl_gen]
    fn update(&mut self) {
        if self.neg.val() {
            self.outcome.next = self.o_duplicate.val();
        } else if !self.zero.val() {
            self.outcome.next = self.o_gap.val();
        } else if self.p.val() && self.full.val() {
            self.outcome.next = self.o_too_many.val();
        } else if self.done.val() {
            self.outcome.next = self.o_deliver.val();
        } else if self.p.val() {
            self.outcome.next = self.o_first.val();
        } else {
            self.outcome.next = self.o_more.val();
        }
    }
}

block! {
    /// Whether every tree in use has message `base` once a copy is applied (`n0..n3`: each tree's
    /// next seq then; combinational).
    pub struct RxDone() {
        pub trees: Signal<In, Bits<3>>,
        pub n0: Signal<In, Bits<32>>,
        pub n1: Signal<In, Bits<32>>,
        pub n2: Signal<In, Bits<32>>,
        pub n3: Signal<In, Bits<32>>,
        pub base: Signal<In, Bits<32>>,
        pub done: Signal<Out, Bit>,
        c1_3: Constant<Bits<3>> = k(1),
        c2_3: Constant<Bits<3>> = k(2),
        c3_3: Constant<Bits<3>> = k(3),
    }
}

impl Default for RxDone {
    fn default() -> Self {
        Self::build()
    }
}

impl Logic for RxDone {
    #[hdl_gen]
    fn update(&mut self) {
        self.done.next = (self.n0.val() != self.base.val())
            && ((self.trees.val() <= self.c1_3.val()) || (self.n1.val() != self.base.val()))
            && ((self.trees.val() <= self.c2_3.val()) || (self.n2.val() != self.base.val()))
            && ((self.trees.val() <= self.c3_3.val()) || (self.n3.val() != self.base.val()));
    }
}

block! {
    /// [`RxDone`] from the trees' comparisons with `base`, made beside the registers: for tree
    /// `t`, `e` (`next != base` for the copy before's tree `e_tree`, when `e_on`) or `q_t` (its
    /// registered `next`). The copies pick 1-bit results instead of 32-bit values in front of
    /// the comparators. The copy's own tree (`in_tree`) is past `base` whenever the verdict
    /// reads `done`: the copy is then neither a duplicate nor a gap (`in_seq == next`, which
    /// is at least `base`), so its tree owes `in_seq + 1 > base` (and `> base + 1` in the
    /// state where `base` moved on, all trees being past the old `base`).
    pub struct RxDoneSel() {
        pub trees: Signal<In, Bits<3>>,
        pub in_tree: Signal<In, Bits<2>>,
        pub e_tree: Signal<In, Bits<2>>,
        pub e_on: Signal<In, Bit>,
        pub q0: Signal<In, Bit>,
        pub q1: Signal<In, Bit>,
        pub q2: Signal<In, Bit>,
        pub q3: Signal<In, Bit>,
        pub e: Signal<In, Bit>,
        pub done: Signal<Out, Bit>,
        ne0: Signal<Local, Bit>,
        ne1: Signal<Local, Bit>,
        ne2: Signal<Local, Bit>,
        ne3: Signal<Local, Bit>,
        c1_3: Constant<Bits<3>> = k(1),
        c2_3: Constant<Bits<3>> = k(2),
        c3_3: Constant<Bits<3>> = k(3),
        tree0: Constant<Bits<2>> = k(0),
        tree1: Constant<Bits<2>> = k(1),
        tree2: Constant<Bits<2>> = k(2),
    }
}

impl Default for RxDoneSel {
    fn default() -> Self {
        Self::build()
    }
}

impl Logic for RxDoneSel {
    #[hdl_gen]
    fn update(&mut self) {
        self.ne0.next = self.q0.val();
        self.ne1.next = self.q1.val();
        self.ne2.next = self.q2.val();
        self.ne3.next = self.q3.val();
        if self.e_on.val() {
            if self.e_tree.val() == self.tree0.val() {
                self.ne0.next = self.e.val();
            } else if self.e_tree.val() == self.tree1.val() {
                self.ne1.next = self.e.val();
            } else if self.e_tree.val() == self.tree2.val() {
                self.ne2.next = self.e.val();
            } else {
                self.ne3.next = self.e.val();
            }
        }
        if self.in_tree.val() == self.tree0.val() {
            self.ne0.next = true;
        } else if self.in_tree.val() == self.tree1.val() {
            self.ne1.next = true;
        } else if self.in_tree.val() == self.tree2.val() {
            self.ne2.next = true;
        } else {
            self.ne3.next = true;
        }
        self.done.next = self.ne0.val()
            && ((self.trees.val() <= self.c1_3.val()) || self.ne1.val())
            && ((self.trees.val() <= self.c2_3.val()) || self.ne2.val())
            && ((self.trees.val() <= self.c3_3.val()) || self.ne3.val());
    }
}

block! {
    /// The judge stage (rtl/README, "The event pipeline"): what the copy that comes this cycle
    /// (`in_tree`, `in_seq`) will do in the next, when the core acts on it. The state it will
    /// meet then is the registered one changed by what the act stage does in this cycle to the
    /// copy before it (`e_tree`, and `e_seq1`: its seq + 1), which is not known in time; so
    /// the copy is judged against every state that can be, each from registers and inputs
    /// only, and the act stage picks one by what this cycle's act stage did (registered):
    /// - `o_a`: nothing changed (no copy applied, no restart);
    /// - `o_b`: the copy before was applied (FIRST / MORE / DELIVER; `e_deliver`, `e_push`: its
    ///   outcome was DELIVER, it was a new message — both from registers through the act
    ///   stage's pick, a few gates);
    /// - `o_c1` / `o_c2`: a restart at a joining node's lock-on point, `e_seq + 1` or
    ///   `lock_kept` (a restart at 0 is `o_fresh`);
    /// - `o_df` / `o_dd`: a restart at 0 that took the copy before as FIRST / DELIVER;
    /// - `o_fresh`: a restart at 0, this cycle or in the next (a new epoch, an adoption, a mode
    ///   change), as `outcome_fresh` was.
    ///
    /// `p_*`: whether the copy starts a new message, in the same states (`p_d` for both `d`).
    /// The verdicts are [`word`]s.
    pub struct RxPre<const A: usize>() {
        pub trees: Signal<In, Bits<3>>,
        pub in_tree: Signal<In, Bits<2>>,
        pub in_seq: Signal<In, Bits<32>>,
        pub e_tree: Signal<In, Bits<2>>,
        /// The copy before's `seq + 1` (registered when it came: no adder in front of the
        /// comparisons with it).
        pub e_seq1: Signal<In, Bits<32>>,
        pub e_deliver: Signal<In, Bit>,
        pub e_push: Signal<In, Bit>,
        /// A restart at a lock-on point takes `e_seq + 1` (when the copy before is the newest
        /// the joining node saw) or `lock_kept` (the newest before it, plus one: `lowi_core`'s
        /// `r_newest1`); both verdicts are kept, the act stage's `lock_take` picks one.
        pub lock_kept: Signal<In, Bits<32>>,
        pub q_next0: Signal<In, Bits<32>>,
        pub q_next1: Signal<In, Bits<32>>,
        pub q_next2: Signal<In, Bits<32>>,
        pub q_next3: Signal<In, Bits<32>>,
        pub q_base: Signal<In, Bits<32>>,
        pub q_count: Signal<In, Bits<16>>,
        pub q_top: Signal<In, Bits<32>>,
        pub q_full: Signal<In, Bit>,
        pub o_a: Signal<Out, Bits<5>>,
        pub o_b: Signal<Out, Bits<5>>,
        pub o_c1: Signal<Out, Bits<5>>,
        pub o_c2: Signal<Out, Bits<5>>,
        pub o_df: Signal<Out, Bits<5>>,
        pub o_dd: Signal<Out, Bits<5>>,
        pub o_fresh: Signal<Out, Bits<5>>,
        pub p_a: Signal<Out, Bit>,
        pub p_b: Signal<Out, Bit>,
        pub p_c1: Signal<Out, Bit>,
        pub p_c2: Signal<Out, Bit>,
        pub p_d: Signal<Out, Bit>,
        v_a: RxVerdict,
        v_b: RxVerdict,
        v_bd: RxVerdict,
        v_c1: RxVerdict,
        v_c2: RxVerdict,
        v_df: RxVerdict,
        v_dd: RxVerdict,
        dn_a: RxDoneSel,
        dn_b: RxDoneSel,
        dn_bd: RxDoneSel,
        /// `next[t] != base`, `next[t] != base + 1`, and the copy before's `e_seq1` against both.
        qa0: Signal<Local, Bit>,
        qa1: Signal<Local, Bit>,
        qa2: Signal<Local, Bit>,
        qa3: Signal<Local, Bit>,
        qd0: Signal<Local, Bit>,
        qd1: Signal<Local, Bit>,
        qd2: Signal<Local, Bit>,
        qd3: Signal<Local, Bit>,
        ea_ne: Signal<Local, Bit>,
        ed_ne: Signal<Local, Bit>,
        dn_c1: RxDone,
        dn_c2: RxDone,
        dn_df: RxDone,
        dn_dd: RxDone,
        s1: Signal<Local, Bits<32>>,
        base1: Signal<Local, Bits<32>>,
        top1: Signal<Local, Bits<32>>,
        same: Signal<Local, Bit>,
        /// The sign of `in_seq - next[t]`.
        d0: SubNeg,
        d1: SubNeg,
        d2: SubNeg,
        d3: SubNeg,
        a_neg: Signal<Local, Bit>,
        a_zero: Signal<Local, Bit>,
        /// `in_seq == next[t]`: `d[t] == 0` without waiting for the subtraction.
        q_eq0: Signal<Local, Bit>,
        q_eq1: Signal<Local, Bit>,
        q_eq2: Signal<Local, Bit>,
        q_eq3: Signal<Local, Bit>,
        /// `dd == 0`.
        z_d: Signal<Local, Bit>,
        b_neg: Signal<Local, Bit>,
        b_zero: Signal<Local, Bit>,
        /// The signs of `in_seq - e_seq1`, `in_seq - lock_kept`, and `dd` (`in_seq` less the 1 or
        /// 0 its tree owes in (d)).
        dc1: SubNeg,
        dc2: SubNeg,
        dd_neg: Signal<Local, Bit>,
        dx0: Signal<Local, Bits<32>>,
        dx1: Signal<Local, Bits<32>>,
        dx2: Signal<Local, Bits<32>>,
        dx3: Signal<Local, Bits<32>>,
        c0_32: Constant<Bits<32>> = k(0),
        c1_32: Constant<Bits<32>> = k(1),
        c_last: Constant<Bits<16>> = k((1 << A) - 1),
        /// The low `A + 1` bits (`RxJudge::c_lo`).
        c_lo: Constant<Bits<32>> = k((2 << A) - 1),
        c1_3: Constant<Bits<3>> = k(1),
        tree0: Constant<Bits<2>> = k(0),
        tree1: Constant<Bits<2>> = k(1),
        tree2: Constant<Bits<2>> = k(2),
        o_first: Constant<Bits<5>> = k(word::FIRST),
        o_deliver: Constant<Bits<5>> = k(word::DELIVER),
        o_duplicate: Constant<Bits<5>> = k(word::DUPLICATE),
        o_gap: Constant<Bits<5>> = k(word::GAP),
    }
}

impl<const A: usize> Default for RxPre<A> {
    fn default() -> Self {
        Self::build()
    }
}

impl<const A: usize> Logic for RxPre<A> {
    #[hdl_gen]
    fn update(&mut self) {
        self.s1.next = self.in_seq.val() + self.c1_32.val();
        self.base1.next = self.q_base.val() + self.c1_32.val();
        self.top1.next = self.q_top.val() + self.c1_32.val();
        self.same.next = self.in_tree.val() == self.e_tree.val();
        // (a) The registered state. `in_seq - next[t]` (negative: a duplicate; not 0: a gap)
        // is computed for every tree and the copy's tree picks the two bits (no 32-bit
        // multiplexer in front of the subtraction).
        self.d0.a.next = self.in_seq.val();
        self.d0.b.next = self.q_next0.val();
        self.d1.a.next = self.in_seq.val();
        self.d1.b.next = self.q_next1.val();
        self.d2.a.next = self.in_seq.val();
        self.d2.b.next = self.q_next2.val();
        self.d3.a.next = self.in_seq.val();
        self.d3.b.next = self.q_next3.val();
        // Zero is equality, tested beside the subtraction rather than behind its carry chain.
        self.q_eq0.next = self.in_seq.val() == self.q_next0.val();
        self.q_eq1.next = self.in_seq.val() == self.q_next1.val();
        self.q_eq2.next = self.in_seq.val() == self.q_next2.val();
        self.q_eq3.next = self.in_seq.val() == self.q_next3.val();
        if self.in_tree.val() == self.tree0.val() {
            self.a_neg.next = self.d0.neg.val();
            self.a_zero.next = self.q_eq0.val();
        } else if self.in_tree.val() == self.tree1.val() {
            self.a_neg.next = self.d1.neg.val();
            self.a_zero.next = self.q_eq1.val();
        } else if self.in_tree.val() == self.tree2.val() {
            self.a_neg.next = self.d2.neg.val();
            self.a_zero.next = self.q_eq2.val();
        } else {
            self.a_neg.next = self.d3.neg.val();
            self.a_zero.next = self.q_eq3.val();
        }
        // Whether the message at `base` (or `base + 1`) is then done: every tree's `next` is
        // past it, which for a tree's `next` here is `next != base` (trees deliver in order).
        // Compared on the low `A + 1` bits, as `RxJudge`'s `missing`: each `next` (and, in the
        // states (b) where these verdicts are picked, the copy before's `e_seq1`, its tree's
        // next) is 0 to `2^A` past the `base` of its state.
        self.qa0.next = ((self.q_next0.val() ^ self.q_base.val()) & self.c_lo.val()).any();
        self.qa1.next = ((self.q_next1.val() ^ self.q_base.val()) & self.c_lo.val()).any();
        self.qa2.next = ((self.q_next2.val() ^ self.q_base.val()) & self.c_lo.val()).any();
        self.qa3.next = ((self.q_next3.val() ^ self.q_base.val()) & self.c_lo.val()).any();
        self.qd0.next = ((self.q_next0.val() ^ self.base1.val()) & self.c_lo.val()).any();
        self.qd1.next = ((self.q_next1.val() ^ self.base1.val()) & self.c_lo.val()).any();
        self.qd2.next = ((self.q_next2.val() ^ self.base1.val()) & self.c_lo.val()).any();
        self.qd3.next = ((self.q_next3.val() ^ self.base1.val()) & self.c_lo.val()).any();
        self.ea_ne.next = ((self.e_seq1.val() ^ self.q_base.val()) & self.c_lo.val()).any();
        self.ed_ne.next = ((self.e_seq1.val() ^ self.base1.val()) & self.c_lo.val()).any();
        self.dn_a.trees.next = self.trees.val();
        self.dn_a.in_tree.next = self.in_tree.val();
        self.dn_a.e_tree.next = self.e_tree.val();
        self.dn_a.e_on.next = false;
        self.dn_a.q0.next = self.qa0.val();
        self.dn_a.q1.next = self.qa1.val();
        self.dn_a.q2.next = self.qa2.val();
        self.dn_a.q3.next = self.qa3.val();
        self.dn_a.e.next = self.ea_ne.val();
        // (b) The copy before applied: its tree owes `e_seq + 1`, `base` moved on if it
        // delivered, `top` if it was a new message.
        // Judged both ways, `base` kept (`dn_b`, `v_b`) and moved on (`dn_bd`, `v_bd`): the
        // copy before's outcome (`e_deliver`) comes late and picks the verdict last.
        self.dn_b.trees.next = self.trees.val();
        self.dn_b.in_tree.next = self.in_tree.val();
        self.dn_b.e_tree.next = self.e_tree.val();
        self.dn_b.e_on.next = true;
        self.dn_b.q0.next = self.qa0.val();
        self.dn_b.q1.next = self.qa1.val();
        self.dn_b.q2.next = self.qa2.val();
        self.dn_b.q3.next = self.qa3.val();
        self.dn_b.e.next = self.ea_ne.val();
        self.dn_bd.trees.next = self.trees.val();
        self.dn_bd.in_tree.next = self.in_tree.val();
        self.dn_bd.e_tree.next = self.e_tree.val();
        self.dn_bd.e_on.next = true;
        self.dn_bd.q0.next = self.qd0.val();
        self.dn_bd.q1.next = self.qd1.val();
        self.dn_bd.q2.next = self.qd2.val();
        self.dn_bd.q3.next = self.qd3.val();
        self.dn_bd.e.next = self.ed_ne.val();
        // (c) A restart at a lock-on point: every tree owes it, `e_seq + 1` (c1) or
        // `lock_kept` (c2).
        self.dc1.a.next = self.in_seq.val();
        self.dc1.b.next = self.e_seq1.val();
        self.dn_c1.trees.next = self.trees.val();
        self.dn_c1.base.next = self.e_seq1.val();
        self.dn_c1.n0.next = self.e_seq1.val();
        self.dn_c1.n1.next = self.e_seq1.val();
        self.dn_c1.n2.next = self.e_seq1.val();
        self.dn_c1.n3.next = self.e_seq1.val();
        self.dc2.a.next = self.in_seq.val();
        self.dc2.b.next = self.lock_kept.val();
        self.dn_c2.trees.next = self.trees.val();
        self.dn_c2.base.next = self.lock_kept.val();
        self.dn_c2.n0.next = self.lock_kept.val();
        self.dn_c2.n1.next = self.lock_kept.val();
        self.dn_c2.n2.next = self.lock_kept.val();
        self.dn_c2.n3.next = self.lock_kept.val();
        // (d) A restart at 0 that took the copy before: its tree owes 1, the others 0; `base`
        // is 0 (FIRST) or 1 (DELIVER, one tree), `top` 1.
        self.dx0.next = self.c0_32.val();
        self.dx1.next = self.c0_32.val();
        self.dx2.next = self.c0_32.val();
        self.dx3.next = self.c0_32.val();
        if self.e_tree.val() == self.tree0.val() {
            self.dx0.next = self.c1_32.val();
        } else if self.e_tree.val() == self.tree1.val() {
            self.dx1.next = self.c1_32.val();
        } else if self.e_tree.val() == self.tree2.val() {
            self.dx2.next = self.c1_32.val();
        } else {
            self.dx3.next = self.c1_32.val();
        }
        if self.same.val() {
            // `in_seq - 1`: the sign flips where the low 31 bits borrow (are all 0).
            self.dd_neg.next =
                self.in_seq.val().get_bit(31) ^ !self.in_seq.val().get_bits::<31>(0).any();
        } else {
            self.dd_neg.next = self.in_seq.val().get_bit(31);
        }
        self.dn_df.trees.next = self.trees.val();
        self.dn_df.base.next = self.c0_32.val();
        self.dn_df.n0.next = self.dx0.val();
        self.dn_df.n1.next = self.dx1.val();
        self.dn_df.n2.next = self.dx2.val();
        self.dn_df.n3.next = self.dx3.val();
        self.dn_dd.trees.next = self.trees.val();
        self.dn_dd.base.next = self.c1_32.val();
        self.dn_dd.n0.next = self.dx0.val();
        self.dn_dd.n1.next = self.dx1.val();
        self.dn_dd.n2.next = self.dx2.val();
        self.dn_dd.n3.next = self.dx3.val();
        // The copy's own tree owes `in_seq + 1` once it is applied, in the states (c) and (d)
        // (`RxDoneSel` takes it as past `base` in (a) and (b)).
        if self.in_tree.val() == self.tree0.val() {
            self.dn_c1.n0.next = self.s1.val();
            self.dn_c2.n0.next = self.s1.val();
            self.dn_df.n0.next = self.s1.val();
            self.dn_dd.n0.next = self.s1.val();
        } else if self.in_tree.val() == self.tree1.val() {
            self.dn_c1.n1.next = self.s1.val();
            self.dn_c2.n1.next = self.s1.val();
            self.dn_df.n1.next = self.s1.val();
            self.dn_dd.n1.next = self.s1.val();
        } else if self.in_tree.val() == self.tree2.val() {
            self.dn_c1.n2.next = self.s1.val();
            self.dn_c2.n2.next = self.s1.val();
            self.dn_df.n2.next = self.s1.val();
            self.dn_dd.n2.next = self.s1.val();
        } else {
            self.dn_c1.n3.next = self.s1.val();
            self.dn_c2.n3.next = self.s1.val();
            self.dn_df.n3.next = self.s1.val();
            self.dn_dd.n3.next = self.s1.val();
        }
        // The verdicts.
        self.p_a.next = self.in_seq.val() == self.q_top.val();
        if self.e_push.val() {
            self.p_b.next = self.in_seq.val() == self.top1.val();
        } else {
            self.p_b.next = self.in_seq.val() == self.q_top.val();
        }
        self.p_c1.next = self.in_seq.val() == self.e_seq1.val();
        self.p_c2.next = self.in_seq.val() == self.lock_kept.val();
        self.p_d.next = self.in_seq.val() == self.c1_32.val();
        // `dd == 0` (the copy's seq against the 1 or 0 its tree owes in (d)), from equalities.
        if self.same.val() {
            self.z_d.next = self.p_d.val();
        } else {
            self.z_d.next = !self.in_seq.val().any();
        }
        self.v_a.neg.next = self.a_neg.val();
        self.v_a.zero.next = self.a_zero.val();
        self.v_a.p.next = self.p_a.val();
        self.v_a.full.next = self.q_full.val();
        self.v_a.done.next = self.dn_a.done.val();
        // (b) The copy's tree is the copy before's: it owes `e_seq + 1` (as in (c1)).
        if self.same.val() {
            self.b_neg.next = self.dc1.neg.val();
            self.b_zero.next = self.p_c1.val();
        } else {
            self.b_neg.next = self.a_neg.val();
            self.b_zero.next = self.a_zero.val();
        }
        self.v_b.neg.next = self.b_neg.val();
        self.v_b.zero.next = self.b_zero.val();
        self.v_b.p.next = self.p_b.val();
        self.v_bd.neg.next = self.b_neg.val();
        self.v_bd.zero.next = self.b_zero.val();
        self.v_bd.p.next = self.p_b.val();
        // A new message fills the queue when it was one short; a delivery that is no new
        // message frees an entry.
        self.v_bd.full.next = self.q_full.val() && self.e_push.val();
        if self.e_push.val() {
            self.v_b.full.next = self.q_count.val() == self.c_last.val();
        } else {
            self.v_b.full.next = self.q_full.val();
        }
        self.v_b.done.next = self.dn_b.done.val();
        self.v_bd.done.next = self.dn_bd.done.val();
        self.v_c1.neg.next = self.dc1.neg.val();
        self.v_c1.zero.next = self.p_c1.val();
        self.v_c1.p.next = self.p_c1.val();
        self.v_c1.full.next = false;
        self.v_c1.done.next = self.dn_c1.done.val();
        self.v_c2.neg.next = self.dc2.neg.val();
        self.v_c2.zero.next = self.p_c2.val();
        self.v_c2.p.next = self.p_c2.val();
        self.v_c2.full.next = false;
        self.v_c2.done.next = self.dn_c2.done.val();
        self.v_df.neg.next = self.dd_neg.val();
        self.v_df.zero.next = self.z_d.val();
        self.v_df.p.next = self.p_d.val();
        self.v_df.full.next = false;
        self.v_df.done.next = self.dn_df.done.val();
        self.v_dd.neg.next = self.dd_neg.val();
        self.v_dd.zero.next = self.z_d.val();
        self.v_dd.p.next = self.p_d.val();
        self.v_dd.full.next = false;
        self.v_dd.done.next = self.dn_dd.done.val();
        self.o_a.next = self.v_a.outcome.val();
        if self.e_deliver.val() {
            self.o_b.next = self.v_bd.outcome.val();
        } else {
            self.o_b.next = self.v_b.outcome.val();
        }
        self.o_c1.next = self.v_c1.outcome.val();
        self.o_c2.next = self.v_c2.outcome.val();
        self.o_df.next = self.v_df.outcome.val();
        self.o_dd.next = self.v_dd.outcome.val();
        // Against a receiver restarted at 0.
        if self.in_seq.val().any() {
            if self.in_seq.val().get_bit(31) {
                self.o_fresh.next = self.o_duplicate.val();
            } else {
                self.o_fresh.next = self.o_gap.val();
            }
        } else if self.trees.val() == self.c1_3.val() {
            self.o_fresh.next = self.o_deliver.val();
        } else {
            self.o_fresh.next = self.o_first.val();
        }
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
        /// The picked verdict's [`word`] bits `APPLIED` / `DELIVERS`, and those of the verdict
        /// against a receiver restarted at 0 (which is FIRST, DELIVER, DUPLICATE or GAP).
        pub applied: Signal<In, Bit>,
        pub delivers: Signal<In, Bit>,
        pub fresh_applied: Signal<In, Bit>,
        pub fresh_delivers: Signal<In, Bit>,
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
        /// `count != 0`, registered beside `count` (`d_busy`).
        pub q_busy: Signal<In, Bit>,
        /// `now + 1`, registered beside `now` (from the first clock edge on: both start at 0,
        /// and nothing is in flight before a copy comes).
        pub q_now1: Signal<In, Bits<32>>,
        /// The ages of the two oldest messages in flight (`now - first`, modulo 2^32, of `base`
        /// and `base + 1`): counters kept beside `now`, so that the expiry is one comparison of a
        /// register with `window`.
        pub q_age0: Signal<In, Bits<32>>,
        pub q_age1: Signal<In, Bits<32>>,
        /// `first` of `base + 2` (a time, as the RAM keeps it) is `f3` if `q_f2l`, else
        /// `q_first2`: a delivery that shifts the head leaves it in `f3` and sets `q_f2l`; the
        /// next cycle moves it into `q_first2` unless it shifts again. `f3`, last cycle's
        /// `first` of `base + 3`, is `q_f3v` (the word forwarded, `byp_first`) if `q_f3b`, else
        /// `q_f3` (the RAM's word, registered in every cycle behind one pick of the port: `d_f3`).
        /// So the block RAM's late output meets no decision of the act stage and no forwarding
        /// before a register.
        pub q_first2: Signal<In, Bits<32>>,
        pub q_f3: Signal<In, Bits<32>>,
        pub q_f3b: Signal<In, Bit>,
        pub q_f3v: Signal<In, Bits<32>>,
        pub q_f2l: Signal<In, Bit>,
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
        /// Next `count != 0`, from the candidates of the next count (no 16-input OR behind it).
        pub d_busy: Signal<Out, Bit>,
        pub d_now1: Signal<Out, Bits<32>>,
        pub d_age0: Signal<Out, Bits<32>>,
        pub d_age1: Signal<Out, Bits<32>>,
        pub d_first2: Signal<Out, Bits<32>>,
        pub d_f3: Signal<Out, Bits<32>>,
        pub d_f3b: Signal<Out, Bit>,
        pub d_f3v: Signal<Out, Bits<32>>,
        pub d_f2l: Signal<Out, Bit>,
        pub d_moved: Signal<Out, Bit>,
        /// Next cycle's `expired`: `count > 0 && age0 > window` of the next state.
        pub d_expired: Signal<Out, Bit>,
        /// RAM write of a pushed message's `first` (`now`) at its seq (`base + count`).
        pub w_en: Signal<Out, Bit>,
        pub w_addr: Signal<Out, Bits<A>>,
        /// RAM reads: `base + 3` and `base + 4`, from the registers only.
        pub r3: Signal<Out, Bits<A>>,
        pub r4: Signal<Out, Bits<A>>,
        /// Each age one cycle on (`age + 1`), and the next cycle's age of `base + 2`
        /// (`(now + 1) - first2`, one subtraction of registers): the candidates of the next ages.
        inc0: Signal<Local, Bits<32>>,
        inc1: Signal<Local, Bits<32>>,
        y2: Signal<Local, Bits<32>>,
        /// The state after applying a copy without a restart (`a_*`) and with one (`ra_*`),
        /// computed before `restart` and `apply` (the act stage's late decisions) pick.
        a_next0: Signal<Local, Bits<32>>,
        a_next1: Signal<Local, Bits<32>>,
        a_next2: Signal<Local, Bits<32>>,
        a_next3: Signal<Local, Bits<32>>,
        a_base: Signal<Local, Bits<32>>,
        a_count: Signal<Local, Bits<16>>,
        a_top: Signal<Local, Bits<32>>,
        a_full: Signal<Local, Bit>,
        a_busy: Signal<Local, Bit>,
        a_age0: Signal<Local, Bits<32>>,
        a_age1: Signal<Local, Bits<32>>,
        a_first2: Signal<Local, Bits<32>>,
        a_f2l: Signal<Local, Bit>,
        a_moved: Signal<Local, Bit>,
        a_expired: Signal<Local, Bit>,
        a_wen: Signal<Local, Bit>,
        ra_next0: Signal<Local, Bits<32>>,
        ra_next1: Signal<Local, Bits<32>>,
        ra_next2: Signal<Local, Bits<32>>,
        ra_next3: Signal<Local, Bits<32>>,
        ra_base: Signal<Local, Bits<32>>,
        ra_count: Signal<Local, Bits<16>>,
        ra_busy: Signal<Local, Bit>,
        ra_top: Signal<Local, Bits<32>>,
        ra_age0: Signal<Local, Bits<32>>,
        ra_expired: Signal<Local, Bit>,
        q_expired: Signal<Local, Bit>,
        /// `count > 1`: a delivery leaves messages in flight.
        gt1: Signal<Local, Bit>,
        e0: Signal<Local, Bit>,
        e1: Signal<Local, Bit>,
        ez: Signal<Local, Bit>,
        f3: Signal<Local, Bits<32>>,
        /// `first` of `base + 2` (see `q_first2`).
        f2: Signal<Local, Bits<32>>,
        c0_32: Constant<Bits<32>> = k(0),
        c1_32: Constant<Bits<32>> = k(1),
        c2_32: Constant<Bits<32>> = k(2),
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
        self.d_now.next = self.q_now.val() + self.c1_32.val();
        self.d_now1.next = self.q_now.val() + self.c2_32.val();
        // The window check of the next cycle, from registers only, for each candidate of the
        // next queue head's age: `age + 1 > window` is `age >= window` unless `age` is all ones
        // (then `age + 1` wraps to 0, as `now + 1 - first` did). Head kept: e0; head shifted
        // out (delivery): e1; a first copy into an empty queue (age 1): `1 > window`.
        self.e0.next = (self.q_age0.val() >= self.window.val()) && !self.q_age0.val().all();
        self.e1.next = (self.q_age1.val() >= self.window.val()) && !self.q_age1.val().all();
        self.ez.next = self.window.val() == self.c0_32.val();
        self.q_expired.next = self.q_busy.val() && self.e0.val();
        self.gt1.next = self.q_count.val() > self.c1_16.val();
        // The RAM: a pushed message's `first` at its seq; reads of `base + 3` and `base + 4`
        // from the registers (no copy's judgement in front of a RAM address), so that a
        // delivery finds the time of the message after the three head registers' last
        // whether or not `base` moved in the cycle before (the write's enable is picked with
        // the state, below).
        self.w_addr.next = self.q_base.val().get_bits::<A>(0) + self.q_count.val().get_bits::<A>(0);
        self.r3.next = self.q_base.val().get_bits::<A>(0) + self.c3_a.val();
        self.r4.next = self.q_base.val().get_bits::<A>(0) + self.c4_a.val();
        if self.q_moved.val() {
            self.d_f3.next = self.ram4.val();
        } else {
            self.d_f3.next = self.ram3.val();
        }
        self.d_f3b.next = !self.q_moved.val() && self.byp3.val();
        self.d_f3v.next = self.byp_first.val();
        if self.q_f3b.val() {
            self.f3.next = self.q_f3v.val();
        } else {
            self.f3.next = self.q_f3.val();
        }
        if self.q_f2l.val() {
            self.f2.next = self.f3.val();
        } else {
            self.f2.next = self.q_first2.val();
        }
        self.inc0.next = self.q_age0.val() + self.c1_32.val();
        self.inc1.next = self.q_age1.val() + self.c1_32.val();
        self.y2.next = self.q_now1.val() - self.f2.val();
        // A copy applied without a restart.
        self.a_next0.next = self.q_next0.val();
        self.a_next1.next = self.q_next1.val();
        self.a_next2.next = self.q_next2.val();
        self.a_next3.next = self.q_next3.val();
        self.a_base.next = self.q_base.val();
        self.a_count.next = self.q_count.val();
        self.a_top.next = self.q_top.val();
        self.a_full.next = self.q_full.val();
        self.a_busy.next = self.q_busy.val();
        self.a_age0.next = self.inc0.val();
        self.a_age1.next = self.inc1.val();
        self.a_first2.next = self.f2.val();
        self.a_f2l.next = false;
        self.a_moved.next = false;
        self.a_expired.next = self.q_expired.val();
        self.a_wen.next = false;
        if self.applied.val() {
            self.a_next0.next = self.n0.val();
            self.a_next1.next = self.n1.val();
            self.a_next2.next = self.n2.val();
            self.a_next3.next = self.n3.val();
            if self.delivers.val() {
                self.a_base.next = self.q_base.val() + self.c1_32.val();
                self.a_moved.next = true;
                if self.push.val() {
                    // |G| = 1: a new message delivered at once.
                    self.a_top.next = self.q_top.val() + self.c1_32.val();
                } else {
                    self.a_full.next = false;
                    self.a_count.next = self.q_count.val() - self.c1_16.val();
                    self.a_busy.next = self.gt1.val();
                    self.a_expired.next = self.gt1.val() && self.e1.val();
                    self.a_age0.next = self.inc1.val();
                    self.a_age1.next = self.y2.val();
                    self.a_f2l.next = true;
                }
            } else if self.push.val() {
                self.a_count.next = self.q_count.val() + self.c1_16.val();
                self.a_busy.next = true;
                self.a_top.next = self.q_top.val() + self.c1_32.val();
                self.a_full.next = self.q_count.val() == self.c_last.val();
                self.a_wen.next = true;
                if self.q_count.val() == self.c0_16.val() {
                    self.a_age0.next = self.c1_32.val();
                    self.a_expired.next = self.ez.val();
                } else if self.q_count.val() == self.c1_16.val() {
                    self.a_age1.next = self.c1_32.val();
                } else if self.q_count.val() == self.c2_16.val() {
                    self.a_first2.next = self.q_now.val();
                }
            }
        }
        // A copy applied in a restart's cycle is judged against a receiver at seq 0
        // (`fresh_*`): the caller restarts at another seq only without one.
        self.ra_next0.next = self.restart_base.val();
        self.ra_next1.next = self.restart_base.val();
        self.ra_next2.next = self.restart_base.val();
        self.ra_next3.next = self.restart_base.val();
        self.ra_base.next = self.restart_base.val();
        self.ra_count.next = self.c0_16.val();
        self.ra_busy.next = false;
        self.ra_top.next = self.restart_base.val();
        self.ra_age0.next = self.inc0.val();
        self.ra_expired.next = false;
        if self.fresh_delivers.val() {
            // |G| = 1: seq 0 delivered at once.
            self.ra_next0.next = self.c1_32.val();
            self.ra_base.next = self.c1_32.val();
            self.ra_top.next = self.c1_32.val();
        } else if self.fresh_applied.val() {
            if self.copy_tree.val() == self.tree0.val() {
                self.ra_next0.next = self.c1_32.val();
            } else if self.copy_tree.val() == self.tree1.val() {
                self.ra_next1.next = self.c1_32.val();
            } else if self.copy_tree.val() == self.tree2.val() {
                self.ra_next2.next = self.c1_32.val();
            } else {
                self.ra_next3.next = self.c1_32.val();
            }
            self.ra_count.next = self.c1_16.val();
            self.ra_busy.next = true;
            self.ra_top.next = self.c1_32.val();
            self.ra_age0.next = self.c1_32.val();
            self.ra_expired.next = self.ez.val();
        }
        // The act stage's decisions pick last: restart, then apply.
        if self.restart.val() {
            if self.apply.val() {
                self.d_next0.next = self.ra_next0.val();
                self.d_next1.next = self.ra_next1.val();
                self.d_next2.next = self.ra_next2.val();
                self.d_next3.next = self.ra_next3.val();
                self.d_base.next = self.ra_base.val();
                self.d_count.next = self.ra_count.val();
                self.d_busy.next = self.ra_busy.val();
                self.d_top.next = self.ra_top.val();
                self.d_age0.next = self.ra_age0.val();
                self.d_expired.next = self.ra_expired.val();
            } else {
                self.d_next0.next = self.restart_base.val();
                self.d_next1.next = self.restart_base.val();
                self.d_next2.next = self.restart_base.val();
                self.d_next3.next = self.restart_base.val();
                self.d_base.next = self.restart_base.val();
                self.d_count.next = self.c0_16.val();
                self.d_busy.next = false;
                self.d_top.next = self.restart_base.val();
                self.d_age0.next = self.inc0.val();
                self.d_expired.next = false;
            }
            self.d_full.next = false;
            self.d_age1.next = self.inc1.val();
            self.d_first2.next = self.f2.val();
            self.d_f2l.next = false;
            self.d_moved.next = false;
            self.w_en.next = false;
        } else if self.apply.val() {
            self.d_next0.next = self.a_next0.val();
            self.d_next1.next = self.a_next1.val();
            self.d_next2.next = self.a_next2.val();
            self.d_next3.next = self.a_next3.val();
            self.d_base.next = self.a_base.val();
            self.d_count.next = self.a_count.val();
            self.d_busy.next = self.a_busy.val();
            self.d_top.next = self.a_top.val();
            self.d_full.next = self.a_full.val();
            self.d_age0.next = self.a_age0.val();
            self.d_age1.next = self.a_age1.val();
            self.d_first2.next = self.a_first2.val();
            self.d_f2l.next = self.a_f2l.val();
            self.d_moved.next = self.a_moved.val();
            self.d_expired.next = self.a_expired.val();
            self.w_en.next = self.a_wen.val();
        } else {
            self.d_next0.next = self.q_next0.val();
            self.d_next1.next = self.q_next1.val();
            self.d_next2.next = self.q_next2.val();
            self.d_next3.next = self.q_next3.val();
            self.d_base.next = self.q_base.val();
            self.d_count.next = self.q_count.val();
            self.d_busy.next = self.q_busy.val();
            self.d_top.next = self.q_top.val();
            self.d_full.next = self.q_full.val();
            self.d_age0.next = self.inc0.val();
            self.d_age1.next = self.inc1.val();
            self.d_first2.next = self.f2.val();
            self.d_f2l.next = false;
            self.d_moved.next = false;
            self.d_expired.next = self.q_expired.val();
            self.w_en.next = false;
        }
    }
}

block! {
    /// The receiver: registers, the RAM of first-copy times (`2^A` words, written twice for its
    /// two reads: it tracks `2^A` messages in flight), [`RxJudge`] and [`RxUpdate`] (this block
    /// only wires them, and registers the RAM reads' forwarding of last cycle's write).
    ///
    /// Inputs: `in_tree` / `in_seq`, the copy that comes this cycle (judged now); `restart`
    /// starts afresh this cycle (`restart_base` expected next on every tree: 0, or a joining
    /// node's lock-on point; a copy applied in the same cycle is judged by `outcome_fresh`,
    /// against a receiver at 0, so a restart elsewhere comes without one); `apply` records this
    /// cycle's copy (`copy_tree`, and `copy_seq`: the one that came in the cycle before, judged
    /// then; its seq is `in_seq` of that cycle, which the receiver keeps itself, so there is no
    /// `copy_seq` port); `trees` = |G|; `window` = delta + drift in cycles.
    pub struct RsbcastRx<const A: usize = IN_FLIGHT_BITS>() {
        pub clock: Signal<In, Clock>,
        pub restart: Signal<In, Bit>,
        pub restart_base: Signal<In, Bits<32>>,
        pub apply: Signal<In, Bit>,
        pub copy_tree: Signal<In, Bits<2>>,
        /// Where a restart at a lock-on point in this cycle would start: `copy_seq + 1` if
        /// `lock_take`, else `lock_kept` (`lowi_core`'s `j_take` / `r_newest1`; the judge stage
        /// needs them without waiting for `restart_base`).
        pub lock_take: Signal<In, Bit>,
        pub lock_kept: Signal<In, Bits<32>>,
        /// The copy that comes this cycle (judged now, acted on in the next cycle, when it is
        /// `copy_tree` / `copy_seq`).
        pub in_tree: Signal<In, Bits<2>>,
        pub in_seq: Signal<In, Bits<32>>,
        pub trees: Signal<In, Bits<3>>,
        pub window: Signal<In, Bits<32>>,
        pub expired: Signal<Out, Bit>,
        pub missing: Signal<Out, Bits<4>>,
        /// A message is in flight (`count != 0`; a register).
        pub busy: Signal<Out, Bit>,
        pub outcome: Signal<Out, Bits<3>>,
        pub outcome_fresh: Signal<Out, Bits<3>>,
        judge: RxJudge<A>,
        pre: RxPre<A>,
        /// `in_seq + 1`, registered: the next cycle's `copy_seq + 1` (`copy_*` is the copy that
        /// came as `in_*` in the cycle before).
        r_in1: DFF<Bits<32>>,
        /// `in_seq == 0`, registered: the next cycle's `copy_seq == 0` (no 32-input NOR behind
        /// the core's event register in the act stage).
        r_sz: DFF<Bit>,
        k1_32: Constant<Bits<32>> = k(1),
        // The judge stage's verdicts on the copy acted on now, against each state it can meet.
        r_oa: DFF<Bits<5>>,
        r_ob: DFF<Bits<5>>,
        r_oc1: DFF<Bits<5>>,
        r_oc2: DFF<Bits<5>>,
        r_odf: DFF<Bits<5>>,
        r_odd: DFF<Bits<5>>,
        r_ofr: DFF<Bits<5>>,
        r_pa: DFF<Bit>,
        r_pb: DFF<Bit>,
        r_pc1: DFF<Bit>,
        r_pc2: DFF<Bit>,
        r_pd: DFF<Bit>,
        // What the act stage did in the cycle before: which state the copy meets.
        u_restart: DFF<Bit>,
        u_apply: DFF<Bit>,
        u_rbnz: DFF<Bit>,
        u_take: DFF<Bit>,
        u_fresh: DFF<Bits<5>>,
        u_out: DFF<Bits<5>>,
        /// The picked verdict's [`word`].
        sel_o: Signal<Local, Bits<5>>,
        sel_p: Signal<Local, Bit>,
        /// The [`word`] bits, as masks.
        w_applied: Constant<Bits<5>> = k(word::APPLIED),
        w_delivers: Constant<Bits<5>> = k(word::DELIVERS),
        upd: RxUpdate<A>,
        r_now: DFF<Bits<32>>,
        r_next0: DFF<Bits<32>>,
        r_next1: DFF<Bits<32>>,
        r_next2: DFF<Bits<32>>,
        r_next3: DFF<Bits<32>>,
        r_base: DFF<Bits<32>>,
        /// Messages in flight (public for the tests; `busy` is `!= 0`, kept beside it).
        pub r_count: DFF<Bits<16>>,
        r_busy: DFF<Bit>,
        r_top: DFF<Bits<32>>,
        r_full: DFF<Bit>,
        r_age0: DFF<Bits<32>>,
        r_age1: DFF<Bits<32>>,
        r_first2: DFF<Bits<32>>,
        /// The RAM's word of `base + 3`, registered in every cycle, and whether it is `first2`
        /// (see `RxUpdate::q_first2`).
        r_f3: DFF<Bits<32>>,
        r_f3b: DFF<Bit>,
        r_f3v: DFF<Bits<32>>,
        r_f2l: DFF<Bit>,
        r_now1: DFF<Bits<32>>,
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
        self.upd.q_count.next = self.r_count.q.val();
        self.r_busy.clock.next = self.clock.val();
        self.r_busy.d.next = self.upd.d_busy.val();
        self.upd.q_busy.next = self.r_busy.q.val();
        self.r_top.clock.next = self.clock.val();
        self.r_top.d.next = self.upd.d_top.val();
        self.upd.q_top.next = self.r_top.q.val();
        self.r_full.clock.next = self.clock.val();
        self.r_full.d.next = self.upd.d_full.val();
        self.upd.q_full.next = self.r_full.q.val();
        self.r_age0.clock.next = self.clock.val();
        self.r_age0.d.next = self.upd.d_age0.val();
        self.upd.q_age0.next = self.r_age0.q.val();
        self.r_age1.clock.next = self.clock.val();
        self.r_age1.d.next = self.upd.d_age1.val();
        self.upd.q_age1.next = self.r_age1.q.val();
        self.r_first2.clock.next = self.clock.val();
        self.r_first2.d.next = self.upd.d_first2.val();
        self.upd.q_first2.next = self.r_first2.q.val();
        self.r_f3.clock.next = self.clock.val();
        self.r_f3.d.next = self.upd.d_f3.val();
        self.upd.q_f3.next = self.r_f3.q.val();
        self.r_f3b.clock.next = self.clock.val();
        self.r_f3b.d.next = self.upd.d_f3b.val();
        self.upd.q_f3b.next = self.r_f3b.q.val();
        self.r_f3v.clock.next = self.clock.val();
        self.r_f3v.d.next = self.upd.d_f3v.val();
        self.upd.q_f3v.next = self.r_f3v.q.val();
        self.r_f2l.clock.next = self.clock.val();
        self.r_f2l.d.next = self.upd.d_f2l.val();
        self.upd.q_f2l.next = self.r_f2l.q.val();
        self.r_now1.clock.next = self.clock.val();
        self.r_now1.d.next = self.upd.d_now1.val();
        self.upd.q_now1.next = self.r_now1.q.val();
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
        self.judge.copy_seq1.next = self.r_in1.q.val();
        // The acted copy's verdict: the one made, in the cycle it came, against the state the
        // act stage of that cycle left.
        dff_setup!(
            self, clock, r_oa, r_ob, r_oc1, r_oc2, r_odf, r_odd, r_ofr, r_pa, r_pb, r_pc1, r_pc2,
            r_pd, u_restart, u_apply, u_rbnz, u_take, u_fresh, u_out, r_in1, r_sz
        );
        if self.u_restart.q.val() {
            // A fresh verdict is FIRST, DELIVER, DUPLICATE or GAP: applied and not delivering
            // is FIRST.
            if self.u_apply.q.val() && (self.u_fresh.q.val() & self.w_delivers.val()).any() {
                self.sel_o.next = self.r_odd.q.val();
                self.sel_p.next = self.r_pd.q.val();
            } else if self.u_apply.q.val() && (self.u_fresh.q.val() & self.w_applied.val()).any() {
                self.sel_o.next = self.r_odf.q.val();
                self.sel_p.next = self.r_pd.q.val();
            } else if self.u_rbnz.q.val() && self.u_take.q.val() {
                self.sel_o.next = self.r_oc1.q.val();
                self.sel_p.next = self.r_pc1.q.val();
            } else if self.u_rbnz.q.val() {
                self.sel_o.next = self.r_oc2.q.val();
                self.sel_p.next = self.r_pc2.q.val();
            } else {
                self.sel_o.next = self.r_ofr.q.val();
                self.sel_p.next = self.r_sz.q.val();
            }
        } else if self.u_apply.q.val() && (self.u_out.q.val() & self.w_applied.val()).any() {
            self.sel_o.next = self.r_ob.q.val();
            self.sel_p.next = self.r_pb.q.val();
        } else {
            self.sel_o.next = self.r_oa.q.val();
            self.sel_p.next = self.r_pa.q.val();
        }
        self.u_restart.d.next = self.restart.val();
        self.u_apply.d.next = self.apply.val();
        self.u_rbnz.d.next = self.restart_base.val().any();
        self.u_take.d.next = self.lock_take.val();
        self.u_fresh.d.next = self.r_ofr.q.val();
        self.u_out.d.next = self.sel_o.val();
        // The judge stage: the copy that comes now, against every state it can meet next cycle.
        self.pre.trees.next = self.trees.val();
        self.pre.in_tree.next = self.in_tree.val();
        self.pre.in_seq.next = self.in_seq.val();
        self.pre.e_tree.next = self.copy_tree.val();
        // The copy acted on now came as `in_seq` in the cycle before: its `seq + 1` was summed
        // then (`r_in1`).
        self.r_in1.d.next = self.in_seq.val() + self.k1_32.val();
        self.r_sz.d.next = !self.in_seq.val().any();
        self.pre.e_seq1.next = self.r_in1.q.val();
        self.pre.e_deliver.next = (self.sel_o.val() & self.w_delivers.val()).any();
        self.pre.e_push.next = self.sel_p.val();
        self.pre.lock_kept.next = self.lock_kept.val();
        self.pre.q_next0.next = self.r_next0.q.val();
        self.pre.q_next1.next = self.r_next1.q.val();
        self.pre.q_next2.next = self.r_next2.q.val();
        self.pre.q_next3.next = self.r_next3.q.val();
        self.pre.q_base.next = self.r_base.q.val();
        self.pre.q_count.next = self.r_count.q.val();
        self.pre.q_top.next = self.r_top.q.val();
        self.pre.q_full.next = self.r_full.q.val();
        self.r_oa.d.next = self.pre.o_a.val();
        self.r_ob.d.next = self.pre.o_b.val();
        self.r_oc1.d.next = self.pre.o_c1.val();
        self.r_oc2.d.next = self.pre.o_c2.val();
        self.r_odf.d.next = self.pre.o_df.val();
        self.r_odd.d.next = self.pre.o_dd.val();
        self.r_ofr.d.next = self.pre.o_fresh.val();
        self.r_pa.d.next = self.pre.p_a.val();
        self.r_pb.d.next = self.pre.p_b.val();
        self.r_pc1.d.next = self.pre.p_c1.val();
        self.r_pc2.d.next = self.pre.p_c2.val();
        self.r_pd.d.next = self.pre.p_d.val();
        self.upd.restart.next = self.restart.val();
        self.upd.restart_base.next = self.restart_base.val();
        self.upd.apply.next = self.apply.val();
        self.upd.copy_tree.next = self.copy_tree.val();
        self.upd.applied.next = (self.sel_o.val() & self.w_applied.val()).any();
        self.upd.delivers.next = (self.sel_o.val() & self.w_delivers.val()).any();
        self.upd.fresh_applied.next = (self.r_ofr.q.val() & self.w_applied.val()).any();
        self.upd.fresh_delivers.next = (self.r_ofr.q.val() & self.w_delivers.val()).any();
        self.upd.push.next = self.sel_p.val();
        self.upd.n0.next = self.judge.n0.val();
        self.upd.n1.next = self.judge.n1.val();
        self.upd.n2.next = self.judge.n2.val();
        self.upd.n3.next = self.judge.n3.val();
        self.missing.next = self.judge.missing.val();
        self.busy.next = self.r_busy.q.val();
        self.outcome.next = self.sel_o.val().get_bits::<3>(0);
        self.outcome_fresh.next = self.r_ofr.q.val().get_bits::<3>(0);
    }
}
