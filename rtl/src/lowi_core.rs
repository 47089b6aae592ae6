//! `lowi_core`: the LOWI engine of one node (paper Alg. 2–3, Fig. 4, §5.2) as
//! `proto::node::Node` defines it, for the states Disabled, Armed, Active and Faulted.
//!
//! Every cycle runs two phases in one combinational pass, in the model's order:
//! 1. *tick* (`Node::tick`): RSBCAST window expiry → NET-FAULT; timeout → `epoch += 1`,
//!    the leader counter advances modulo n, and the node whose id matches starts looping at
//!    once; the loop send (Fig. 4: loop counter ≥ period AND leader AND FIFO state picks batch
//!    or heartbeat).
//! 2. *event*: at most one of a CTRL write (ENABLE / START / CLEAR_COUNTERS), a parsed DECIDE
//!    copy from a tree, or a parsed client request. A copy or a request is taken into the
//!    event register (`i_rx_*`, `i_cl_*`) in the cycle it comes and acted on in the next; a
//!    CTRL write comes registered from `csr` (rtl/README, "The event pipeline"). The tick is
//!    not delayed: in the model's terms every event arrives one cycle later. The copy's
//!    comparisons with the state (epoch, instance, the joining tests, its class and tree, a
//!    request's length) are made in the cycle it comes, against every value the state can
//!    have when it is acted on; a record of what the act stage did picks one (the judge
//!    stage, at the end of `update`; rtl/README "Step 2, `lowi_core`'s part").
//!
//! Its outputs are the actions of that cycle (strobes with their fields) and counter
//! increments, split into the tick part and the event part so that CLEAR_COUNTERS (an event)
//! clears what the tick counted earlier in the same cycle, exactly as the model does.
//!
//! The leader id is `epoch mod node_count`: a timeout advances it modulo n; a jump to a copy's
//! epoch takes the copy's `sender`, which is that epoch's leader (a DECIDE from anyone else is
//! UNAUTHORIZED, never EXPECTED: `pkt_parser` judges it, as `Node` does). No division here.

use proto::regs::{ctrl, status};
use proto::wire::DecideKind;
use rust_hdl::prelude::*;
use rust_hdl::widgets::dff_with_init::DFFWithInit;

use crate::prim::ZeroExtend;
use crate::rsbcast_rx::outcome;

/// Lifecycle state codes of the `state` output (the subset of `proto::node::State` the RTL
/// implements: all but the software's recovery extension). Plain 3-bit codes rather than a
/// rust-hdl enum, whose Verilog localparams would be declared unused in every register module.
pub mod state {
    /// CTRL.ENABLE = 0.
    pub const DISABLED: u64 = 0;
    /// Enabled, waiting for START.
    pub const ARMED: u64 = 1;
    /// Running member.
    pub const ACTIVE: u64 = 2;
    /// Safe exit after a NET-FAULT.
    pub const FAULTED: u64 = 3;
    /// Enabled with CTRL.JOIN: locking onto the live stream, then following it until ACTIVATE
    /// (the card's recovery CSR sequence, proto/README).
    pub const JOINING: u64 = 4;
}

/// Width of the `state` codes.
pub const STATE_BITS: usize = 3;

/// Values of the fault code outputs (`tick_fault_code`, `rx_fault_code`).
pub mod fault {
    /// RSBCAST window expired (`FaultKind::MissingCopy`).
    pub const MISSING_COPY: u64 = 1;
    /// A tree skipped a seq (`FaultKind::SeqGap`).
    pub const SEQ_GAP: u64 = 2;
    /// More in flight than tracked (`FaultKind::TooManyInFlight`).
    pub const TOO_MANY_IN_FLIGHT: u64 = 3;
    /// Delivered instance does not continue the log (`NetFault::InstanceMismatch`).
    pub const INSTANCE_MISMATCH: u64 = 4;
    /// New epoch while copies were in flight (`NetFault::EpochChangeInFlight`).
    pub const EPOCH_CHANGE_IN_FLIGHT: u64 = 5;
    /// The 32-bit leader counter would wrap (`NetFault::EpochExhausted`).
    pub const EPOCH_EXHAUSTED: u64 = 6;
}

/// Values of `rx_class` / `cl_class` (what the packet parser made of a frame).
pub mod class {
    /// A valid packet of the expected kind (DECIDE on a tree port, REQUEST on the client port).
    pub const EXPECTED: u64 = 0;
    /// A valid packet of another kind (counted as ignored).
    pub const OTHER: u64 = 1;
    /// Not ours (counted as foreign).
    pub const FOREIGN: u64 = 2;
    /// Ours but malformed (counted as malformed).
    pub const MALFORMED: u64 = 3;
    /// Well formed but not from whom it claims to be (counted as unauthorized; issue 18): a
    /// tagged packet (the card holds no keys), or a DECIDE whose sender is not the leader of
    /// its epoch (`epoch mod node_count`, judged by `pkt_parser`).
    pub const UNAUTHORIZED: u64 = 4;
}

/// Width of `rx_class` / `cl_class`.
pub const CLASS_BITS: usize = 3;

/// Largest request payload `nc_core`'s egress FIFO entry stores (bytes; its `P` = 1024 bits),
/// the cap of the exported `lowi_core`. `nc_engine` is built with [`ENGINE_MAX_PAYLOAD`].
pub const MAX_PAYLOAD: u64 = 128;

/// Largest request payload `nc_engine` takes (bytes): what its client port keeps of a request
/// (`req_capture`) and its DECIDE generator (`pkt_gen`) streams per entry, 128 since issue 17 (8
/// before).
pub const ENGINE_MAX_PAYLOAD: u64 = proto::regs::PAYLOAD_RTL as u64;

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
}

block! {
    /// The judge stage's test of a copy's epoch `x` against one value `r` the epoch register can
    /// have when the copy is acted on (`r1` = `r + 1`), registered: `x < r`, `x > r`, and the
    /// same against `r + 1` (what a timeout in the act cycle makes it). The `r + 1` pair is
    /// derived (`x < r + 1` is `x <= r`), so it holds whenever `r` is not `u32::MAX`, the only
    /// case a timeout can use it (a timeout at `u32::MAX` is EpochExhausted).
    pub struct EpochJudge() {
        pub clock: Signal<In, Clock>,
        pub x: Signal<In, Bits<32>>,
        pub r: Signal<In, Bits<32>>,
        pub r1: Signal<In, Bits<32>>,
        pub lt: Signal<Out, Bit>,
        pub gt: Signal<Out, Bit>,
        pub lt1: Signal<Out, Bit>,
        pub gt1: Signal<Out, Bit>,
        q_lt: DFF<Bit>,
        q_gt: DFF<Bit>,
        q_lt1: DFF<Bit>,
        q_gt1: DFF<Bit>,
        z_gt: Signal<Local, Bit>,
    }
}

impl Default for EpochJudge {
    fn default() -> Self {
        Self::build()
    }
}

impl Logic for EpochJudge {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, q_lt, q_gt, q_lt1, q_gt1);
        self.z_gt.next = self.x.val() > self.r.val();
        self.q_lt.d.next = self.x.val() < self.r.val();
        self.q_gt.d.next = self.z_gt.val();
        self.q_lt1.d.next = !self.z_gt.val();
        self.q_gt1.d.next = self.z_gt.val() && (self.x.val() != self.r1.val());
        self.lt.next = self.q_lt.q.val();
        self.gt.next = self.q_gt.q.val();
        self.lt1.next = self.q_lt1.q.val();
        self.gt1.next = self.q_gt1.q.val();
    }
}

block! {
    /// `x == i + k` (wrapping, 64 bits) without an adder: `x ^ i ^ k` must equal the carries
    /// `i + k` would have if it were `x`, `((i & k) | ((i | k) & !x)) << 1` (a sum's carry into
    /// bit j is the majority of bit j − 1's addends and carry, and that carry is `x ^ i ^ k` at
    /// bit j − 1). Each bit is then a function of two bits of `x` and two of `i` (one LUT4),
    /// and the AND tree is any equality's: no carry chain in front of it.
    pub struct SumEq(addend: u64) {
        /// The value tested.
        pub x: Signal<In, Bits<64>>,
        /// The addend.
        pub i: Signal<In, Bits<64>>,
        /// `x == i + k`.
        pub eq: Signal<Out, Bit>,
        t: Signal<Local, Bits<64>>,
        c: Signal<Local, Bits<64>>,
        kk: Constant<Bits<64>> = k(addend),
        k1: Constant<Bits<64>> = k(1),
    }
}

impl SumEq {
    /// The test of `x == i + k`.
    pub fn new(k: u64) -> Self {
        Self::build(k)
    }
}

impl Logic for SumEq {
    #[hdl_gen]
    fn update(&mut self) {
        self.t.next = self.x.val() ^ self.i.val() ^ self.kk.val();
        self.c.next = ((self.i.val() & self.kk.val())
            | ((self.i.val() | self.kk.val()) & !self.x.val()))
            << self.k1.val();
        self.eq.next = self.t.val() == self.c.val();
    }
}

block! {
    /// The core.
    pub struct LowiCore(overhead: u64, max_payload: u64) {
        /// Clock.
        pub clock: Signal<In, Clock>,
        // ---- configuration (from the CSR block)
        /// `node_id`.
        pub node_id: Signal<In, Bits<8>>,
        /// `node_count`.
        pub node_count: Signal<In, Bits<8>>,
        /// `trees` (|G|).
        pub trees: Signal<In, Bits<8>>,
        /// `loop_period` (cycles).
        pub loop_period: Signal<In, Bits<32>>,
        /// `min_gap` (cycles; 0 = early sends off): with requests queued, the loop counter
        /// reaching it sends at once.
        pub min_gap: Signal<In, Bits<32>>,
        /// `timeout` (cycles).
        pub timeout: Signal<In, Bits<32>>,
        /// `batch_max`.
        pub batch_max: Signal<In, Bits<13>>,
        /// `fifo_depth`.
        pub fifo_depth: Signal<In, Bits<13>>,
        /// `mtu`.
        pub mtu: Signal<In, Bits<16>>,
        // ---- events
        /// A CTRL register write this cycle, with a value the core can take: no undefined bit,
        /// JOIN only with ENABLE (`csr` judges that in the bus cycle; the others change
        /// nothing and do not come here), and with `node_id` unchanged since the cycle before
        /// (`csr` passes a CTRL write on a cycle after its bus cycle and takes configuration
        /// writes only while Disabled; so never in the first cycle).
        pub ctrl_write: Signal<In, Bit>,
        /// Its value.
        pub ctrl_value: Signal<In, Bits<32>>,
        /// A frame from a tree port this cycle (parsed).
        pub rx_valid: Signal<In, Bit>,
        /// Which tree port.
        pub rx_port: Signal<In, Bits<2>>,
        /// What the parser made of it (see [`class`]).
        pub rx_class: Signal<In, Bits<CLASS_BITS>>,
        /// Header `sender`.
        pub rx_sender: Signal<In, Bits<8>>,
        /// DECIDE `epoch`.
        pub rx_epoch: Signal<In, Bits<32>>,
        /// DECIDE `tree`.
        pub rx_tree: Signal<In, Bits<8>>,
        /// DECIDE `decide_kind`.
        pub rx_kind: Signal<In, Bits<2>>,
        /// DECIDE `instance`.
        pub rx_instance: Signal<In, Bits<64>>,
        /// DECIDE `msg_seq` (a joining node's lock-on and the copies before its lock-on point).
        pub rx_seq: Signal<In, Bits<32>>,
        /// The CSR block took a TIMEOUT write in the cycle before (allowed while Joining: the
        /// members' timeout from the state transfer, which ACTIVATE needs; registered in `csr`, so
        /// that nothing of this cycle's tick reaches back into the CSR block's write).
        pub timeout_written: Signal<In, Bit>,
        /// A frame from the client port this cycle (parsed).
        pub cl_valid: Signal<In, Bit>,
        /// What the parser made of it (see [`class`]).
        pub cl_class: Signal<In, Bits<CLASS_BITS>>,
        /// Entry `payload_len`.
        pub cl_len: Signal<In, Bits<16>>,
        /// From `rsbcast_rx`: the oldest message's window expired.
        pub rx_expired: Signal<In, Bit>,
        /// From `rsbcast_rx`: trees that missed it.
        pub rx_missing: Signal<In, Bits<4>>,
        /// From `rsbcast_rx`: a message is in flight (a register).
        pub rx_busy: Signal<In, Bit>,
        /// From `rsbcast_rx`: what this cycle's copy does (registered state).
        pub rx_outcome: Signal<In, Bits<3>>,
        /// From `rsbcast_rx`: what it does against a fresh receiver.
        pub rx_outcome_fresh: Signal<In, Bits<3>>,
        /// To `rsbcast_rx`: record this cycle's copy.
        pub rx_apply: Signal<Out, Bit>,
        /// To `rsbcast_rx`: start afresh (new epoch or protocol reset).
        pub rx_restart: Signal<Out, Bit>,
        /// To `rsbcast_rx`: the seq a restart expects next (0, or a joining node's lock-on point).
        pub rx_restart_base: Signal<Out, Bits<32>>,
        /// Logical egress FIFO length (requests not yet taken by a send).
        pub fifo_len: Signal<In, Bits<13>>,
        /// `fifo_len != 0`, registered beside it by the FIFO (`egress_fifo`'s `nz`): the
        /// tick's send reads it instead of a 13-input OR.
        pub fifo_nz: Signal<In, Bit>,
        /// `fifo_len < fifo_depth` and `fifo_len < fifo_depth + batch_max`, registered beside it
        /// by the FIFO (`egress_fifo`'s `room` / `room_b`, from the candidates of its next
        /// count): whether a request has room is a pick of register bits, no comparison of the
        /// length in front of the push.
        pub fifo_room: Signal<In, Bit>,
        pub fifo_room_b: Signal<In, Bit>,
        /// The frame generator cannot take a send this cycle: the loop waits (a send is late,
        /// never dropped). Never high when `loop_period` covers a frame's time (the covered
        /// subset).
        pub tx_hold: Signal<In, Bit>,
        // ---- egress FIFO control
        /// Queue this cycle's client request.
        pub fifo_push: Signal<Out, Bit>,
        /// Drop every queued request. From the tick (a NET-FAULT or a new epoch) and from a
        /// register: an event that clears (an adopted epoch, a copy's NET-FAULT, a CTRL mode
        /// change) clears a cycle later (`u_clr`), when the node does not lead by its registers.
        /// Never with a send that takes requests (a fault's tick sends nothing, a new epoch's
        /// first send is a heartbeat, and `u_clr` comes to a node that does not lead).
        pub fifo_clear: Signal<Out, Bit>,
        /// This cycle's send is a batch: it takes `min(fifo_len, batch_max)` requests (its
        /// `send_count`; the FIFO computes that number itself, from its length and `bmax`).
        pub fifo_take_now: Signal<Out, Bit>,
        // ---- actions
        /// A DECIDE goes out on every tree this cycle.
        pub send: Signal<Out, Bit>,
        /// Its `decide_kind`.
        pub send_kind: Signal<Out, Bits<2>>,
        /// Its `count`.
        pub send_count: Signal<Out, Bits<8>>,
        /// Its `instance`.
        pub send_instance: Signal<Out, Bits<64>>,
        /// Its `epoch`.
        pub send_epoch: Signal<Out, Bits<32>>,
        /// Its `msg_seq`.
        pub send_seq: Signal<Out, Bits<32>>,
        /// The leader decides this cycle's send (a BATCH): hand it to the host.
        pub lead_deliver: Signal<Out, Bit>,
        /// This cycle's DECIDE copy completed a value: hand it to the host.
        pub rx_deliver: Signal<Out, Bit>,
        /// A timeout advanced the leader counter (epoch/leader: `epoch`, `leader` after the edge).
        pub tick_leader_changed: Signal<Out, Bit>,
        /// The new epoch of a timeout.
        pub tick_epoch: Signal<Out, Bits<32>>,
        /// The new leader of a timeout.
        pub tick_leader: Signal<Out, Bits<8>>,
        /// This cycle's copy carried a later epoch, which was adopted (`rx_epoch`).
        pub rx_leader_changed: Signal<Out, Bit>,
        /// NET-FAULT in the tick phase.
        pub tick_fault: Signal<Out, Bit>,
        /// Its code (see [`fault`]).
        pub tick_fault_code: Signal<Out, Bits<3>>,
        /// Trees that missed the expired message.
        pub tick_fault_missing: Signal<Out, Bits<4>>,
        /// NET-FAULT in the event phase.
        pub rx_fault: Signal<Out, Bit>,
        /// Its code (see [`fault`]).
        pub rx_fault_code: Signal<Out, Bits<3>>,
        /// State changed by CTRL (to `mode_state`): ENABLE / JOIN / disable, or ACTIVATE.
        pub state_mode: Signal<Out, Bit>,
        /// The state CTRL set.
        pub mode_state: Signal<Out, Bits<STATE_BITS>>,
        /// START made this node Active.
        pub state_start: Signal<Out, Bit>,
        /// Delivering START made this armed node Active, or an accepted copy made a joining node
        /// Active (ACTIVATE after a silence of a timeout waits for the next copy).
        pub state_rx_active: Signal<Out, Bit>,
        /// Stale-epoch violation.
        pub viol_stale: Signal<Out, Bit>,
        /// Deposed violation (epoch `rx_epoch`).
        pub viol_deposed: Signal<Out, Bit>,
        /// NOT_LEADER reply to this cycle's request.
        pub nl_reply: Signal<Out, Bit>,
        /// Its `leader`.
        pub nl_leader: Signal<Out, Bits<8>>,
        /// Its `epoch`.
        pub nl_epoch: Signal<Out, Bits<32>>,
        // ---- counter increments (tick phase, then event phase; see module doc)
        /// CLEAR_COUNTERS strobe (between the phases).
        pub clear_counters: Signal<Out, Bit>,
        pub tick_net_fault: Signal<Out, Bit>,
        pub tick_timeout: Signal<Out, Bit>,
        pub tick_sent_value: Signal<Out, Bit>,
        pub tick_sent_hb: Signal<Out, Bit>,
        pub tick_dropped: Signal<Out, Bits<13>>,
        pub ev_foreign: Signal<Out, Bit>,
        pub ev_malformed: Signal<Out, Bit>,
        /// A frame refused as not from a member (class UNAUTHORIZED) on a tree or the client port.
        pub ev_unauthorized: Signal<Out, Bit>,
        pub ev_ignored: Signal<Out, Bit>,
        pub ev_stale: Signal<Out, Bit>,
        pub ev_duplicate: Signal<Out, Bit>,
        pub ev_net_fault: Signal<Out, Bit>,
        pub ev_delivered: Signal<Out, Bit>,
        pub ev_dropped: Signal<Out, Bits<13>>,
        pub ev_accepted: Signal<Out, Bit>,
        pub ev_not_leader: Signal<Out, Bit>,
        pub ev_sent_hb: Signal<Out, Bit>,
        pub ev_oversize: Signal<Out, Bit>,
        // ---- registers seen by the CSR block
        /// Lifecycle state.
        pub state: Signal<Out, Bits<STATE_BITS>>,
        /// STATUS register.
        pub status: Signal<Out, Bits<32>>,
        /// Leader counter.
        pub epoch: Signal<Out, Bits<32>>,
        /// `epoch mod node_count`.
        pub leader: Signal<Out, Bits<8>>,
        /// Last decided instance.
        pub last_instance: Signal<Out, Bits<64>>,
        /// The copy acted on this cycle (the one that came in the cycle before): its tree port,
        /// for `rsbcast_rx` (which keeps the seq that came in the cycle before itself).
        pub ev_port: Signal<Out, Bits<2>>,
        /// Where a lock-on by this copy would start the receiver (`rx_restart_base` then): its
        /// seq + 1 if `lock_take`, else `lock_kept`; from registers, before the judgement.
        pub lock_take: Signal<Out, Bit>,
        pub lock_kept: Signal<Out, Bits<32>>,
        i_rx_valid: DFF<Bit>,
        i_rx_port: DFF<Bits<2>>,
        i_rx_class: DFF<Bits<CLASS_BITS>>,
        i_rx_sender: DFF<Bits<8>>,
        i_rx_epoch: DFF<Bits<32>>,
        i_rx_kind: DFF<Bits<2>>,
        i_rx_instance: DFF<Bits<64>>,
        i_rx_seq: DFF<Bits<32>>,
        /// `rx_seq + 1`, registered beside it (the lock-on point and its comparisons without an
        /// adder in front).
        i_rx_seq1: DFF<Bits<32>>,
        i_cl_valid: DFF<Bit>,
        i_cl_class: DFF<Bits<CLASS_BITS>>,
        i_cl_len: DFF<Bits<16>>,
        r_state: DFF<Bits<STATE_BITS>>,
        r_epoch: DFF<Bits<32>>,
        /// `r_epoch + 1`, kept beside it (a timeout's epoch without an adder in the tick phase).
        r_epoch1: DFFWithInit<Bits<32>> = DFFWithInit::new(Bits::<32>::from(1u64)),

        /// `r_epoch == u32::MAX`, kept beside it (from the candidates of its next value).
        r_emax: DFF<Bit>,
        r_lead: DFF<Bit>,
        /// The last instance (`lins`) and `lins + 1`, `+ 2`, `+ 3` are applied a cycle late: the
        /// act stage records what it did (`u_li_d` delivered, `u_li_p` placed, `u_ep_zero` mode
        /// change, `u_li_v` batch sent) and registers the candidates (`w_*`); the values of this
        /// cycle (`e_lins*`) are picked from those registers, and `r_lins*` keep them every
        /// cycle, so no act-stage decision drives an enable of these 256 flip-flops.
        r_lins: DFF<Bits<64>>,
        /// `lins + 1`, kept beside it (no 64-bit adder after the tick phase).
        r_lins1: DFFWithInit<Bits<64>> = DFFWithInit::new(Bits::<64>::from(1u64)),
        /// `lins + 2`, kept beside it too (a completing copy in the cycle of a batch send is
        /// compared with it; a 64-bit adder in front of that comparison was the critical path).
        r_lins2: DFFWithInit<Bits<64>> = DFFWithInit::new(Bits::<64>::from(2u64)),
        /// `lins + 3`, kept beside it (`lins + 2` after a batch send; no adder behind the pick).
        r_lins3: DFFWithInit<Bits<64>> = DFFWithInit::new(Bits::<64>::from(3u64)),
        e_lins: Signal<Local, Bits<64>>,
        e_lins1: Signal<Local, Bits<64>>,
        e_lins2: Signal<Local, Bits<64>>,
        e_lins3: Signal<Local, Bits<64>>,
        /// The acted copy's instance, − 1, + 1, + 2, + 3, and `lins + 4` (after a batch send).
        w_inst: DFF<Bits<64>>,
        w_m1: DFF<Bits<64>>,
        w_p1: DFF<Bits<64>>,
        w_p2: DFF<Bits<64>>,
        w_p3: DFF<Bits<64>>,
        w_l4: DFF<Bits<64>>,
        /// `e_lins3 + 1` for each register `e_lins3` is picked from (`w_p2 + 1` is `w_p3`: both
        /// are loaded from the same copy every cycle), then the same pick: no 64-bit pick in
        /// front of the increment (`u_ep_zero` → `e_lins3` → `w_l4`, 8.16 ns, until 2026-12-07).
        v_p4: Signal<Local, Bits<64>>,
        v_l5: Signal<Local, Bits<64>>,
        v_r4: Signal<Local, Bits<64>>,
        l2_rx1: Signal<Local, Bits<64>>,
        l2_rx2: Signal<Local, Bits<64>>,
        /// The leader after `r_leader` (`(r_leader + 1) mod n`), and whether that is this node,
        /// kept beside it (from the candidates of `r_leader`'s next value).
        r_nl: DFF<Bits<8>>,
        r_nl_me: DFF<Bit>,
        r_send_seq: DFF<Bits<32>>,
        r_loop: DFF<Bits<32>>,
        /// `r_loop + 1` (wrapping: 0 while `r_loop` is saturated), kept beside it: the
        /// comparisons below take it from a register, not behind a 32-bit increment (two carry
        /// chains in series, `r_loop` → `r_mg`, until 2026-12-07).
        r_loop1: DFFWithInit<Bits<32>> = DFFWithInit::new(Bits::<32>::from(1u64)),
        /// `r_loop >= loop_period`, and `r_loop >= min_gap` with early sends on (`min_gap` ≠ 0),
        /// kept beside it.
        r_lp: DFF<Bit>,
        r_mg: DFF<Bit>,
        l_inc: Signal<Local, Bits<32>>,
        /// `r_loop == u32::MAX`: the comparisons take the plain increment (`r_loop1`), and the
        /// saturation picks between their results (at `u32::MAX` both comparisons hold).
        l_max: Signal<Local, Bit>,
        r_since_rx: DFF<Bits<32>>,
        /// `r_since_rx >= timeout`, kept beside it (computed from its candidate next values).
        r_ge: DFF<Bit>,
        s_max: Signal<Local, Bit>,
        /// `r_ge`'s comparisons of `s + 1` with `t` and `2t` without the increment: `t == s + 1`
        /// and `2t == s + 1` (`SumEq` on the values zero-extended: no wrap), beside `s >= t`
        /// and `s >= 2t`.
        g_eq1: SumEq = SumEq::new(1),
        g_eq2: SumEq = SumEq::new(1),
        zx_s: ZeroExtend<32, 64>,
        zx_t: ZeroExtend<32, 64>,
        t2: Signal<Local, Bits<32>>,
        r_sync_viol: DFF<Bit>,
        r_leader: DFF<Bits<8>>,
        // ---- joining (Control::EnableJoin in the model)
        /// Locked onto the live stream (`STATUS.SYNCED`; the model's `sync` is None).
        r_synced: DFF<Bit>,
        /// No instance decided yet (the model's `lins` is None): the first delivery sets the place.
        r_lins_none: DFF<Bit>,
        /// Before the lock-on: the trees that showed a copy of epoch `r_sepoch`, and the newest
        /// seq those copies carried with its successor beside it (the model's `Sync`).
        r_sv: DFF<Bits<4>>,
        r_sepoch: DFF<Bits<32>>,
        r_newest: DFF<Bits<32>>,
        r_newest1: DFF<Bits<32>>,
        /// Copies of seqs before `r_skip_seq` are not ours (the model's `skip_below`).
        r_skip: DFF<Bit>,
        r_skip_seq: DFF<Bits<32>>,
        /// TIMEOUT written while joining (`timeout_from_member`).
        r_tmo_member: DFF<Bit>,
        /// ACTIVATE came after a silence of a timeout: Active at the next accepted copy.
        r_act_rx: DFF<Bit>,
        /// Decodes of the state kept beside it (their next values made from the events beside
        /// `r_state`'s next-value chain, at the end of `update`), so the tick's decisions are one or two
        /// LUTs from registers: `r_on`
        /// the window runs (Armed, Active, or Joining locked on), `r_fol` Active and not
        /// leading, `r_led` Active and leading.
        r_on: DFF<Bit>,
        r_fol: DFF<Bit>,
        r_led: DFF<Bit>,
        /// Armed, Disabled (where a START is taken), and `node_id == 0` (the node that may
        /// start), kept beside the state and the configuration. `node_id` is stable for a cycle
        /// before every CTRL write: `csr` takes configuration writes only while Disabled and
        /// passes a CTRL write on a cycle after its bus cycle.
        r_arm: DFF<Bit>,
        /// Joining (the CTRL verdict and the copy's listen test read it).
        r_jn: DFF<Bit>,
        r_dis: DFFWithInit<Bit> = DFFWithInit::new(true),
        r_id0: DFFWithInit<Bit> = DFFWithInit::new(true),
        /// The next values of `r_synced` and `r_lead` (the decodes read them).
        /// Active, Joining, Armed after the tick (`p_state`), from the decodes.
        p_act: Signal<Local, Bit>,
        p_jn: Signal<Local, Bit>,
        p_arm: Signal<Local, Bit>,
        /// The next state's decodes, from the events (see the end of `update`).
        d_go: Signal<Local, Bit>,
        d_keep: Signal<Local, Bit>,
        d_act: Signal<Local, Bit>,
        d_arm: Signal<Local, Bit>,
        d_jn: Signal<Local, Bit>,
        d_dis: Signal<Local, Bit>,
        n_synced: Signal<Local, Bit>,
        n_lead: Signal<Local, Bit>,
        // tick phase
        t_expire: Signal<Local, Bit>,
        t_timeout: Signal<Local, Bit>,
        t_exhaust: Signal<Local, Bit>,
        t_new_epoch: Signal<Local, Bit>,
        t_fault: Signal<Local, Bit>,
        t_leader: Signal<Local, Bits<8>>,
        n_inc: Signal<Local, Bits<8>>,
        n_nl: Signal<Local, Bits<8>>,
        x_inc: Signal<Local, Bits<8>>,
        s_nl: Signal<Local, Bits<8>>,
        z_nl: Signal<Local, Bits<8>>,
        m_eq1: Signal<Local, Bit>,
        m_eq2: Signal<Local, Bit>,
        m_ok_v: Signal<Local, Bit>,
        m_ok_n: Signal<Local, Bit>,
        t_become: Signal<Local, Bit>,
        t_send: Signal<Local, Bit>,
        t_value: Signal<Local, Bit>,
        t_seq: Signal<Local, Bits<32>>,
        p_state: Signal<Local, Bits<STATE_BITS>>,
        p_epoch: Signal<Local, Bits<32>>,
        e_lt0: Signal<Local, Bit>,
        e_lt1: Signal<Local, Bit>,
        e_gt0: Signal<Local, Bit>,
        e_gt1: Signal<Local, Bit>,
        e_lt: Signal<Local, Bit>,
        e_gt: Signal<Local, Bit>,
        p_lead: Signal<Local, Bit>,
        p_leader: Signal<Local, Bits<8>>,
        p_is_leader: Signal<Local, Bit>,
        p_fifo_len: Signal<Local, Bits<13>>,
        p_send_seq: Signal<Local, Bits<32>>,
        p_send_seq1: Signal<Local, Bits<32>>,
        ss1: Signal<Local, Bits<32>>,
        ss2: Signal<Local, Bits<32>>,
        p_since_rx: Signal<Local, Bits<32>>,
        p_in_flight: Signal<Local, Bit>,
        e_len: Signal<Local, Bits<13>>,
        /// From registers only: `min(fifo_len, batch_max)` and what a batch would leave; the
        /// FIFO's registered comparisons say whether that and the FIFO (and an empty FIFO) leave
        /// room below `fifo_depth`; the tick picks. What a batch leaves has room when
        /// `fifo_len < batch_max + fifo_depth` (`fifo_room_b`) and `fifo_depth` is not 0.
        f_min: Signal<Local, Bits<13>>,
        f_rest: Signal<Local, Bits<13>>,
        f_zero: Signal<Local, Bit>,
        /// `fifo_depth != 0`, registered: configuration, which changes only while Disabled, and
        /// is read only while leading.
        r_dnz: DFF<Bit>,
        q_room: Signal<Local, Bit>,
        // ctrl
        c_en: Signal<Local, Bit>,
        c_join: Signal<Local, Bit>,
        c_start_bit: Signal<Local, Bit>,
        c_activate: Signal<Local, Bit>,
        c_clear_bit: Signal<Local, Bit>,
        c_may_start: Signal<Local, Bit>,
        /// The CTRL verdict against the state before the tick (`_r`) and against Faulted
        /// (`_f`, the tick's only change of state); the tick picks (`c_ok`, `c_mode`).
        c_ok_r: Signal<Local, Bit>,
        c_mode_r: Signal<Local, Bit>,
        c_ok_f: Signal<Local, Bit>,
        c_mode_f: Signal<Local, Bit>,
        /// The CTRL values that change the mode in some state, by the value alone (a write
        /// comes only with a value the core can take: JOIN only with ENABLE; ACTIVATE never
        /// changes the mode): 0, ENABLE|JOIN, ENABLE, ENABLE|START (CLEAR_COUNTERS aside).
        m_dis: Signal<Local, Bit>,
        m_join: Signal<Local, Bit>,
        m_en: Signal<Local, Bit>,
        m_start: Signal<Local, Bit>,
        c_ok: Signal<Local, Bit>,
        c_mode: Signal<Local, Bit>,
        c_start: Signal<Local, Bit>,
        c_clear: Signal<Local, Bit>,
        c_may_act: Signal<Local, Bit>,
        c_act: Signal<Local, Bit>,
        c_act_now: Signal<Local, Bit>,
        // joining
        j_joining: Signal<Local, Bit>,
        j_syncing: Signal<Local, Bit>,
        j_go: Signal<Local, Bit>,
        j_same: Signal<Local, Bit>,
        j_one: Signal<Local, Bits<4>>,
        j_mask: Signal<Local, Bits<4>>,
        j_v: Signal<Local, Bits<4>>,
        j_lock: Signal<Local, Bit>,
        j_full_s: Signal<Local, Bit>,
        j_full_n: Signal<Local, Bit>,
        j_newer: Signal<Local, Bit>,
        j_take: Signal<Local, Bit>,
        j_seq1: Signal<Local, Bits<32>>,
        j_start: Signal<Local, Bits<32>>,
        j_new_epoch: Signal<Local, Bit>,
        j_skip_d: Signal<Local, Bit>,
        /// The judge stage's skip test of the copy that comes (`seq − skip_seq` negative), against
        /// each value `r_skip_seq` can have when the copy is acted on: unchanged, or a lock-on by
        /// the copy acted on now at its `seq + 1` or at the kept `r_newest1`.
        g_skip_a: Signal<Local, Bit>,
        g_skip_b: Signal<Local, Bit>,
        g_skip_c: Signal<Local, Bit>,
        /// The one of them that holds when the copy is acted on, picked in the judge stage by
        /// what the act stage does in the same cycle (`j_lock`, `j_take`): `r_skip_seq` next
        /// cycle. (Picked after the registers a cycle later, by `u_lock` / `u_take`, until
        /// 2026-12-07: `u_lock`'s fan-out then led the core's longest paths.)
        u_skip: DFF<Bit>,
        u_take: DFF<Bit>,
        /// The copy's epoch judged against each value `r_epoch` can have when it is acted on:
        /// unchanged (`ej_a`), a timeout's `r_epoch + 1` (`ej_b`), 0 after a mode change
        /// (`ej_z`), the copy acted on now's epoch, adopted or locked on (`ej_d`); the act stage's
        /// record (`u_ep_*`) picks one a cycle later.
        ej_a: EpochJudge,
        ej_b: EpochJudge,
        ej_z: EpochJudge,
        ej_d: EpochJudge,
        z_b1: Signal<Local, Bits<32>>,
        z_d1: Signal<Local, Bits<32>>,
        u_ep_rx: DFF<Bit>,
        u_ep_zero: DFF<Bit>,
        u_ep_inc: DFF<Bit>,
        /// An event cleared the FIFO last cycle: the FIFO drops its requests now (the model
        /// dropped them then, and they were counted then).
        u_clr: DFF<Bit>,
        /// Joining: the copy's epoch against `r_sepoch` (or, `u_jgo`, the copy before's, in
        /// `ej_d`), and whether its seq is newer than `r_newest` (or the copy before's seq, when
        /// that one was taken).
        g_same_a: DFF<Bit>,
        g_new_a: DFF<Bit>,
        g_new_b: DFF<Bit>,
        z_nd_a: Signal<Local, Bits<32>>,
        z_nd_b: Signal<Local, Bits<32>>,
        u_jgo: DFF<Bit>,
        /// The copy's instance against each pair `r_lins1` / `r_lins2` can hold when it is acted
        /// on: unchanged (`h_eq1` / `h_eq2`), after a batch send (`h_eq2` / `h_eq3`), placed
        /// before the copy acted on now (`h_p0` / `h_p1`), or delivered by it (`h_p1` / `h_p2`);
        /// `u_li_*` picks. A mode change needs no candidate: it leaves the node Disabled, Armed
        /// or Joining before its first delivery, where the instance is not compared (or it was
        /// Disabled, with the registers at 1 / 2 already, and START makes it the leader). And the
        /// instance's own tests: 0, the last.
        /// `h_eq*` is the copy's instance against this cycle's `e_lins1` / `2` / `3`: compared
        /// with every register those picks read (`c_*`), and the one-bit results picked. (The
        /// 64-bit pick in front of two equality trees, `ij_a` / `ij_v` until 2026-12-07, led
        /// `nc_core`'s longest paths: `u_ep_zero` → `e_lins1` → `ij_a`.)
        h_eq1: DFF<Bit>,
        h_eq2: DFF<Bit>,
        h_eq3: DFF<Bit>,
        c_inst: Signal<Local, Bit>,
        c_p1: Signal<Local, Bit>,
        c_p2: Signal<Local, Bit>,
        c_p3: Signal<Local, Bit>,
        c_l1: Signal<Local, Bit>,
        c_l2: Signal<Local, Bit>,
        c_l3: Signal<Local, Bit>,
        c_l4: Signal<Local, Bit>,
        c_k1: Signal<Local, Bit>,
        c_k2: Signal<Local, Bit>,
        c_k3: Signal<Local, Bit>,
        /// The copy's instance against the acted copy's `i`, `i + 1`, `i + 2`, the sums tested
        /// without an adder ([`SumEq`]; `i + 1` / `i + 2` were added in front of the
        /// comparisons until 2026-12-07: `i_rx_instance` → `ij_d`, 8.7 ns).
        h_p0: DFF<Bit>,
        h_p1: DFF<Bit>,
        h_p2: DFF<Bit>,
        n_p1: SumEq = SumEq::new(1),
        n_p2: SumEq = SumEq::new(2),
        u_li_v: DFF<Bit>,
        u_li_p: DFF<Bit>,
        u_li_d: DFF<Bit>,
        g_i_zero: DFF<Bit>,
        g_i_max: DFF<Bit>,
        /// The request's length against the MTU and the FIFO entry (judged as it comes).
        g_oversize: DFF<Bit>,
        /// The copy's class and sender (an expected DECIDE from another node), and its tree
        /// against its port and `trees` (judged as it comes).
        g_decide: DFF<Bit>,
        g_port_ok: DFF<Bit>,
        j_skipped: Signal<Local, Bit>,
        j_placed: Signal<Local, Bit>,
        j_act_rx: Signal<Local, Bit>,
        r_start_ok: Signal<Local, Bit>,
        // rx
        r_decide: Signal<Local, Bit>,
        r_port_ok: Signal<Local, Bit>,
        /// `r_listen` without the tick's fault (`r_listen = !t_fault && r_listen_nf`).
        r_listen_nf: Signal<Local, Bit>,
        r_listen: Signal<Local, Bit>,
        r_go: Signal<Local, Bit>,
        /// `r_go` without the tick's fault (which stops every copy: `r_go = !t_fault && r_go_nf`).
        r_go_nf: Signal<Local, Bit>,
        r_stale: Signal<Local, Bit>,
        r_higher: Signal<Local, Bit>,
        r_inflight_fault: Signal<Local, Bit>,
        r_adopt: Signal<Local, Bit>,
        r_own: Signal<Local, Bit>,
        r_copy: Signal<Local, Bit>,
        /// `r_own` / `r_copy` for each outcome of the tick: no new epoch (`_n`), a new epoch
        /// (`_e`); the receiver's `apply` picks one by `t_new_epoch`.
        x_own_n: Signal<Local, Bit>,
        x_copy_n: Signal<Local, Bit>,
        x_own_e: Signal<Local, Bit>,
        x_copy_e: Signal<Local, Bit>,
        r_dup: Signal<Local, Bit>,
        r_seq_fault: Signal<Local, Bit>,
        r_accept: Signal<Local, Bit>,
        r_complete: Signal<Local, Bit>,
        r_armed: Signal<Local, Bit>,
        r_start_kind: Signal<Local, Bit>,
        r_value_kind: Signal<Local, Bit>,
        r_bad_start: Signal<Local, Bit>,
        r_mismatch: Signal<Local, Bit>,
        r_mm_v: Signal<Local, Bit>,
        r_mm_n: Signal<Local, Bit>,
        r_any_fault: Signal<Local, Bit>,
        /// The copy's verdicts for each outcome of the tick without a fault: no new epoch and
        /// no batch sent (`_n`), a batch sent (`_v`), a new epoch (`_e`); picked last by
        /// `t_value`, `t_new_epoch` and `t_fault` (which stops the copy).
        y_inflight_n: Signal<Local, Bit>,
        y_adopt_n: Signal<Local, Bit>,
        y_out_n: Signal<Local, Bits<3>>,
        y_complete_n: Signal<Local, Bit>,
        y_complete_e: Signal<Local, Bit>,
        y_bad_start: Signal<Local, Bit>,
        y_dl_ok: Signal<Local, Bit>,
        y_fixed_n: Signal<Local, Bit>,
        y_fault_n: Signal<Local, Bit>,
        y_fault_v: Signal<Local, Bit>,
        y_fault_e: Signal<Local, Bit>,
        y_dl_n: Signal<Local, Bit>,
        y_dl_v: Signal<Local, Bit>,
        y_dl_e: Signal<Local, Bit>,
        /// `r_adopt || r_any_fault`: the copy empties the FIFO (its requests count as dropped).
        y_drop: Signal<Local, Bit>,
        // client
        q_req: Signal<Local, Bit>,
        q_oversize: Signal<Local, Bit>,
        c_expected: Constant<Bits<CLASS_BITS>> = k(class::EXPECTED),
        c_other: Constant<Bits<CLASS_BITS>> = k(class::OTHER),
        c_foreign: Constant<Bits<CLASS_BITS>> = k(class::FOREIGN),
        c_malformed: Constant<Bits<CLASS_BITS>> = k(class::MALFORMED),
        c_unauthorized: Constant<Bits<CLASS_BITS>> = k(class::UNAUTHORIZED),
        s_disabled: Constant<Bits<STATE_BITS>> = k(state::DISABLED),
        s_armed: Constant<Bits<STATE_BITS>> = k(state::ARMED),
        s_active: Constant<Bits<STATE_BITS>> = k(state::ACTIVE),
        s_faulted: Constant<Bits<STATE_BITS>> = k(state::FAULTED),
        s_joining: Constant<Bits<STATE_BITS>> = k(state::JOINING),
        k_t0: Constant<Bits<4>> = k(0b0001),
        k_t1: Constant<Bits<4>> = k(0b0010),
        k_t2: Constant<Bits<4>> = k(0b0100),
        k_t3: Constant<Bits<4>> = k(0b1000),
        k_m1: Constant<Bits<4>> = k(0b0001),
        k_m2: Constant<Bits<4>> = k(0b0011),
        k_m3: Constant<Bits<4>> = k(0b0111),
        k_m4: Constant<Bits<4>> = k(0b1111),
        k0_4: Constant<Bits<4>> = k(0),
        k1_tr: Constant<Bits<8>> = k(1),
        k2_tr: Constant<Bits<8>> = k(2),
        k3_tr: Constant<Bits<8>> = k(3),
        k0_2: Constant<Bits<2>> = k(0),
        k1_2: Constant<Bits<2>> = k(1),
        k2_2: Constant<Bits<2>> = k(2),
        r_out: Signal<Local, Bits<3>>,
        k_hb: Constant<Bits<2>> = k(DecideKind::Heartbeat as u64),
        k_batch: Constant<Bits<2>> = k(DecideKind::Batch as u64),
        k_start: Constant<Bits<2>> = k(DecideKind::Start as u64),
        k_config: Constant<Bits<2>> = k(DecideKind::Config as u64),
        k_f_missing: Constant<Bits<3>> = k(fault::MISSING_COPY),
        k_f_gap: Constant<Bits<3>> = k(fault::SEQ_GAP),
        k_f_too_many: Constant<Bits<3>> = k(fault::TOO_MANY_IN_FLIGHT),
        k_f_mismatch: Constant<Bits<3>> = k(fault::INSTANCE_MISMATCH),
        k_f_in_flight: Constant<Bits<3>> = k(fault::EPOCH_CHANGE_IN_FLIGHT),
        k_f_exhausted: Constant<Bits<3>> = k(fault::EPOCH_EXHAUSTED),
        k_o_first: Constant<Bits<3>> = k(outcome::FIRST),
        k_o_more: Constant<Bits<3>> = k(outcome::MORE),
        k_o_deliver: Constant<Bits<3>> = k(outcome::DELIVER),
        k_o_dup: Constant<Bits<3>> = k(outcome::DUPLICATE),
        k_o_gap: Constant<Bits<3>> = k(outcome::GAP),
        k_o_too_many: Constant<Bits<3>> = k(outcome::TOO_MANY),
        k0_6: Constant<Bits<6>> = k(0),
        k0_8: Constant<Bits<8>> = k(0),
        k1_8: Constant<Bits<8>> = k(1),
        k_sender_none: Constant<Bits<8>> = k(proto::wire::SENDER_NONE as u64),
        k0_13: Constant<Bits<13>> = k(0),
        k1_13: Constant<Bits<13>> = k(1),
        s_base: Signal<Local, Bits<32>>,
        k0_32: Constant<Bits<32>> = k(0),
        k1_32: Constant<Bits<32>> = k(1),
        k2_32: Constant<Bits<32>> = k(2),
        k_max_32: Constant<Bits<32>> = k(u32::MAX as u64),
        k_half_32: Constant<Bits<32>> = k(1 << 31),
        k0_64: Constant<Bits<64>> = k(0),
        k1_64: Constant<Bits<64>> = k(1),
        k2_64: Constant<Bits<64>> = k(2),
        k3_64: Constant<Bits<64>> = k(3),
        k4_64: Constant<Bits<64>> = k(4),
        k_max_64: Constant<Bits<64>> = k(u64::MAX),
        /// CTRL bits (`proto::regs::ctrl`) and the bits it does not define.
        k_ctrl_enable: Constant<Bits<32>> = k(ctrl::ENABLE as u64),
        k_ctrl_join: Constant<Bits<32>> = k(ctrl::JOIN as u64),
        k_ctrl_start: Constant<Bits<32>> = k(ctrl::START as u64),
        k_ctrl_activate: Constant<Bits<32>> = k(ctrl::ACTIVATE as u64),
        k_ctrl_clear: Constant<Bits<32>> = k(ctrl::CLEAR_COUNTERS as u64),
        k_overhead: Constant<Bits<16>> = k(overhead),
        k_max_payload: Constant<Bits<16>> = k(max_payload),
        k_st_leader: Constant<Bits<32>> = k(status::LEADER as u64),
        k_st_active: Constant<Bits<32>> = k(status::ACTIVE as u64),
        k_st_fault: Constant<Bits<32>> = k(status::NET_FAULT as u64),
        k_st_armed: Constant<Bits<32>> = k(status::ARMED as u64),
        k_st_sync: Constant<Bits<32>> = k(status::SYNC_VIOLATION as u64),
        k_st_joining: Constant<Bits<32>> = k(status::JOINING as u64),
        k_st_synced: Constant<Bits<32>> = k(status::SYNCED as u64),
        k_st_zero: Constant<Bits<32>> = k(0),
    }
}

impl Default for LowiCore {
    fn default() -> Self {
        Self::new(MAX_PAYLOAD)
    }
}

impl LowiCore {
    /// The core; requests with more than `max_payload` payload bytes count as oversize (the
    /// egress FIFO stores no more).
    pub fn new(max_payload: u64) -> Self {
        use proto::frame::{IPV4_LEN, UDP_LEN};
        use proto::wire::{DECIDE_HEADER_LEN, ENTRY_HEADER_LEN, HEADER_LEN, TAG_LEN};
        // A request of payload_len p is oversize when HEADER + DECIDE header + entry header + p
        // + the room the model always keeps for a tag exceeds the largest UDP payload at this
        // MTU (mtu - IPv4 - UDP): p + overhead > mtu (`Node::client_request`).
        let overhead =
            (IPV4_LEN + UDP_LEN + HEADER_LEN + DECIDE_HEADER_LEN + ENTRY_HEADER_LEN + TAG_LEN)
                as u64;
        Self::build(overhead, max_payload)
    }
}

impl Logic for LowiCore {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            r_state,
            r_on,
            r_fol,
            r_led,
            r_arm,
            r_jn,
            r_dis,
            r_id0,
            r_dnz,
            r_epoch,
            r_epoch1,
            r_emax,
            r_lead,
            r_lins,
            r_lins1,
            r_lins2,
            w_inst,
            w_m1,
            w_p1,
            w_p2,
            r_lins3,
            w_p3,
            w_l4,
            r_nl,
            r_nl_me,
            r_send_seq,
            r_loop,
            r_loop1,
            r_lp,
            r_mg,
            r_since_rx,
            r_ge,
            r_sync_viol,
            r_leader,
            r_synced,
            r_lins_none,
            r_sv,
            r_sepoch,
            r_newest,
            r_newest1,
            r_skip,
            r_skip_seq,
            r_tmo_member,
            r_act_rx,
            u_skip,
            u_take,
            u_ep_rx,
            u_ep_zero,
            u_ep_inc,
            u_clr,
            g_same_a,
            g_new_a,
            g_new_b,
            u_jgo,
            u_li_v,
            u_li_p,
            u_li_d,
            h_eq1,
            h_eq2,
            h_eq3,
            h_p0,
            h_p1,
            h_p2,
            g_i_zero,
            g_i_max,
            g_oversize,
            g_decide,
            g_port_ok,
            i_rx_valid,
            i_rx_port,
            i_rx_class,
            i_rx_sender,
            i_rx_epoch,
            i_rx_kind,
            i_rx_instance,
            i_rx_seq,
            i_rx_seq1,
            i_cl_valid,
            i_cl_class,
            i_cl_len
        );
        // The event register: a copy or a request is taken in the cycle it comes and acted on in
        // the next (rtl/README, "The event pipeline"); CTRL comes registered from `csr`.
        self.i_rx_valid.d.next = self.rx_valid.val();
        self.i_rx_port.d.next = self.rx_port.val();
        self.i_rx_class.d.next = self.rx_class.val();
        self.i_rx_sender.d.next = self.rx_sender.val();
        self.i_rx_epoch.d.next = self.rx_epoch.val();
        self.i_rx_kind.d.next = self.rx_kind.val();
        self.i_rx_instance.d.next = self.rx_instance.val();
        self.i_rx_seq.d.next = self.rx_seq.val();
        self.i_rx_seq1.d.next = self.rx_seq.val() + self.k1_32.val();
        self.i_cl_valid.d.next = self.cl_valid.val();
        self.i_cl_class.d.next = self.cl_class.val();
        self.i_cl_len.d.next = self.cl_len.val();
        self.ev_port.next = self.i_rx_port.q.val();

        // ================= the instance registers, a cycle late =================
        // What the act stage did last cycle, in its order (a delivery, a START or a joining
        // node's first heartbeat, a mode change, a batch send): the values of this cycle.
        if self.u_li_d.q.val() {
            self.e_lins.next = self.w_inst.q.val();
            self.e_lins1.next = self.w_p1.q.val();
            self.e_lins2.next = self.w_p2.q.val();
            self.e_lins3.next = self.w_p3.q.val();
        } else if self.u_li_p.q.val() {
            self.e_lins.next = self.w_m1.q.val();
            self.e_lins1.next = self.w_inst.q.val();
            self.e_lins2.next = self.w_p1.q.val();
            self.e_lins3.next = self.w_p2.q.val();
        } else if self.u_ep_zero.q.val() {
            self.e_lins.next = self.k0_64.val();
            self.e_lins1.next = self.k1_64.val();
            self.e_lins2.next = self.k2_64.val();
            self.e_lins3.next = self.k3_64.val();
        } else if self.u_li_v.q.val() {
            self.e_lins.next = self.r_lins1.q.val();
            self.e_lins1.next = self.r_lins2.q.val();
            self.e_lins2.next = self.r_lins3.q.val();
            self.e_lins3.next = self.w_l4.q.val();
        } else {
            self.e_lins.next = self.r_lins.q.val();
            self.e_lins1.next = self.r_lins1.q.val();
            self.e_lins2.next = self.r_lins2.q.val();
            self.e_lins3.next = self.r_lins3.q.val();
        }

        // ================= tick phase =================
        // The window runs while armed, active, or joining once locked onto the stream (`r_on`).
        // Every decision is made from the state's decodes kept beside it: a timeout needs a
        // follower (`r_fol`), which the window covers, so it is one with the stream alive.
        self.t_expire.next = self.r_on.q.val() && self.rx_expired.val();
        self.t_timeout.next = self.r_fol.q.val() && !self.rx_expired.val() && self.r_ge.q.val();
        self.t_exhaust.next = self.t_timeout.val() && self.r_emax.q.val();
        self.t_new_epoch.next = self.t_timeout.val() && !self.r_emax.q.val();
        self.t_fault.next = self.t_expire.val() || self.t_exhaust.val();
        self.t_leader.next = self.r_nl.q.val();
        self.t_become.next = self.t_new_epoch.val() && self.r_nl_me.q.val();

        self.p_state.next = self.r_state.q.val();
        if self.t_fault.val() {
            self.p_state.next = self.s_faulted.val();
        }
        self.p_epoch.next = self.r_epoch.q.val();
        // r_epoch + 2 and the acted copy's epoch + 1: r_epoch1's candidates, and the judge
        // stage's.
        self.z_b1.next = self.r_epoch1.q.val() + self.k1_32.val();
        self.z_d1.next = self.i_rx_epoch.q.val() + self.k1_32.val();
        self.p_lead.next = self.r_lead.q.val();
        self.p_leader.next = self.r_leader.q.val();
        self.p_since_rx.next = self.r_since_rx.q.val();
        self.p_in_flight.next = self.rx_busy.val();
        self.p_fifo_len.next = self.fifo_len.val();
        // (`u_clr`: an event's clear still to come; its requests were counted dropped then.)
        if self.t_fault.val() || self.u_clr.q.val() {
            self.p_fifo_len.next = self.k0_13.val();
        }
        if self.t_new_epoch.val() {
            self.p_epoch.next = self.r_epoch1.q.val();
            self.p_lead.next = self.t_become.val();
            self.p_leader.next = self.t_leader.val();
            self.p_since_rx.next = self.r_since_rx.q.val() - self.timeout.val();
            self.p_in_flight.next = false;
            self.p_fifo_len.next = self.k0_13.val();
        }
        // Leader after the tick: Active and leading with the stream alive (an expiry faults;
        // a leader never times out), or a follower that becomes the leader of a new epoch.
        self.p_is_leader.next =
            (self.r_led.q.val() && !self.rx_expired.val()) || self.t_become.val();
        // Fig. 4: the send trigger is loop counter AND leader (AND the generator can take it);
        // the FIFO state picks the kind. Early sends: one more comparator, the loop counter
        // against `min_gap` while the FIFO holds requests. (`fifo_len`, not the tick's
        // `p_fifo_len`: they differ only after a fault, where no one leads, or a new epoch, where
        // the new leader sends anyway.)
        // Written as two terms, the leader's and the new leader's: a node that leads by its
        // registers (`r_led`) is no Active follower, so it never times out into a new epoch;
        // the leader's term waits for six register bits, not for the timeout's chain.
        self.t_send.next = (self.r_led.q.val()
            && !self.rx_expired.val()
            && !self.tx_hold.val()
            && (self.r_lp.q.val() || (self.fifo_nz.val() && self.r_mg.q.val())))
            || (self.t_become.val() && !self.tx_hold.val());
        // `p_fifo_len` is not 0: the FIFO holds requests and the tick did not empty it (a send
        // comes from a leader, so never with a fault; a new epoch's first send is a heartbeat).
        // Only the leader's term of `t_send` sends a batch (the new leader's is the new epoch's
        // heartbeat), so `t_value` is six register bits and every event's pick of the send's two
        // outcomes (the instance check, the request's room, the FIFO) waits for two LUTs.
        self.t_value.next = self.r_led.q.val()
            && !self.rx_expired.val()
            && !self.tx_hold.val()
            && self.fifo_nz.val()
            && (self.r_lp.q.val() || self.r_mg.q.val());
        if self.fifo_len.val() >= self.batch_max.val() {
            self.f_min.next = self.batch_max.val();
        } else {
            self.f_min.next = self.fifo_len.val();
        }
        self.f_rest.next = self.fifo_len.val() - self.f_min.val();
        self.r_dnz.d.next = self.fifo_depth.val().any();
        // p_fifo_len is fifo_len, or 0 after a fault or a new epoch in the tick.
        self.f_zero.next = self.t_fault.val() || self.t_new_epoch.val();
        if self.t_become.val() {
            self.t_seq.next = self.k0_32.val();
        } else {
            self.t_seq.next = self.r_send_seq.q.val();
        }
        // The send seq after the tick (`p_send_seq`) and after a START as well (`p_send_seq1`),
        // from r_send_seq + 1 / + 2 summed beside the tick, which only selects.
        self.ss1.next = self.r_send_seq.q.val() + self.k1_32.val();
        self.ss2.next = self.r_send_seq.q.val() + self.k2_32.val();
        if self.t_become.val() {
            if self.t_send.val() {
                self.p_send_seq.next = self.k1_32.val();
                self.p_send_seq1.next = self.k2_32.val();
            } else {
                self.p_send_seq.next = self.k0_32.val();
                self.p_send_seq1.next = self.k1_32.val();
            }
        } else if self.t_send.val() {
            self.p_send_seq.next = self.ss1.val();
            self.p_send_seq1.next = self.ss2.val();
        } else {
            self.p_send_seq.next = self.r_send_seq.q.val();
            self.p_send_seq1.next = self.ss1.val();
        }
        self.e_len.next = self.p_fifo_len.val();
        if self.t_value.val() {
            self.e_len.next = self.f_rest.val();
        }

        if self.f_zero.val() {
            self.q_room.next = self.fifo_depth.val().any();
        } else if self.t_value.val() {
            self.q_room.next = self.r_dnz.q.val() && self.fifo_room_b.val();
        } else {
            self.q_room.next = self.fifo_room.val();
        }

        // ================= event phase: CTRL =================
        self.c_en.next = (self.ctrl_value.val() & self.k_ctrl_enable.val()).any();
        self.c_join.next = (self.ctrl_value.val() & self.k_ctrl_join.val()).any();
        self.c_start_bit.next = (self.ctrl_value.val() & self.k_ctrl_start.val()).any();
        self.c_activate.next = (self.ctrl_value.val() & self.k_ctrl_activate.val()).any();
        self.c_clear_bit.next = (self.ctrl_value.val() & self.k_ctrl_clear.val()).any();
        // The state the CTRL write meets is the tick's (`p_state`): `r_state`, or Faulted after an
        // expiry or an exhausted epoch. The verdict is made against both from registers, beside
        // the tick, which only picks (no state decode behind the tick's decisions).
        self.c_may_start.next = self.c_en.val()
            && !self.c_join.val()
            && self.r_id0.q.val()
            && (self.r_arm.q.val() || self.r_dis.q.val());
        // ACTIVATE: a joining node that locked onto the stream, decided an instance and took the
        // members' timeout (a TIMEOUT write while joining); JOIN needs ENABLE. A refused write
        // changes nothing.
        self.c_may_act.next = self.c_en.val()
            && self.c_join.val()
            && self.r_jn.q.val()
            && self.r_synced.q.val()
            && !self.r_lins_none.q.val()
            && (self.r_tmo_member.q.val() || self.timeout_written.val());
        self.c_ok_r.next = self.ctrl_write.val()
            && (!self.c_start_bit.val() || self.c_may_start.val())
            && (!self.c_activate.val() || self.c_may_act.val());
        // The mode changes unless it is the current one: ENABLE|JOIN while Joining, ENABLE while
        // Armed / Active / Faulted, 0 while Disabled. By value (`m_*`), so that the verdict on
        // ACTIVATE (which never changes the mode: it is taken only while Joining, with JOIN)
        // and on START is not in front of it: 0 changes it unless Disabled, ENABLE|JOIN unless
        // Joining, ENABLE from Disabled or Joining, ENABLE|START (taken by node 0 while Armed
        // or Disabled) from Disabled.
        self.m_dis.next = !self.c_en.val() && !self.c_start_bit.val() && !self.c_activate.val();
        self.m_join.next = self.c_join.val() && !self.c_start_bit.val() && !self.c_activate.val();
        self.m_en.next = self.c_en.val()
            && !self.c_join.val()
            && !self.c_start_bit.val()
            && !self.c_activate.val();
        self.m_start.next = self.c_en.val()
            && !self.c_join.val()
            && self.c_start_bit.val()
            && !self.c_activate.val();
        self.c_mode_r.next = self.ctrl_write.val()
            && ((self.m_dis.val() && !self.r_dis.q.val())
                || (self.m_join.val() && !self.r_jn.q.val())
                || (self.m_en.val() && (self.r_dis.q.val() || self.r_jn.q.val()))
                || (self.m_start.val() && self.r_id0.q.val() && self.r_dis.q.val()));
        // Faulted: no START (only Armed or Disabled start), no ACTIVATE (only Joining); the mode
        // changes on ENABLE|JOIN and on 0, not on ENABLE alone.
        self.c_ok_f.next =
            self.ctrl_write.val() && !self.c_start_bit.val() && !self.c_activate.val();
        self.c_mode_f.next = self.ctrl_write.val() && (self.m_dis.val() || self.m_join.val());
        if self.t_fault.val() {
            self.c_ok.next = self.c_ok_f.val();
            self.c_mode.next = self.c_mode_f.val();
        } else {
            self.c_ok.next = self.c_ok_r.val();
            self.c_mode.next = self.c_mode_r.val();
        }
        self.c_clear.next = self.c_ok.val() && self.c_clear_bit.val();
        // START (`c_ok && c_start_bit`, without the tick's pick): what `c_may_start` takes,
        // without ACTIVATE (taken only while joining), and Armed only with the stream alive
        // (an Armed node whose window expires faults in this tick's).
        self.c_start.next = self.ctrl_write.val()
            && self.c_start_bit.val()
            && self.c_may_start.val()
            && !self.c_activate.val()
            && (self.r_dis.q.val() || !self.rx_expired.val());
        // ACTIVATE: Active now if a copy came within the last timeout (the timeout counter is in
        // step with the members'), else at the next accepted copy.
        self.c_act.next = self.c_ok.val() && self.c_activate.val();
        self.c_act_now.next = self.c_act.val() && (self.r_since_rx.q.val() < self.timeout.val());

        // ================= event phase: DECIDE copy =================
        // (Judged in the cycle the copy came: its class and sender, its tree against its port.)
        self.r_decide.next = self.g_decide.q.val();
        self.r_port_ok.next = self.g_port_ok.q.val();
        // The state after the tick, from the decodes: a fault leaves none of these.
        self.p_act.next = !self.t_fault.val() && (self.r_fol.q.val() || self.r_led.q.val());
        self.p_jn.next = !self.t_fault.val() && self.r_jn.q.val();
        self.p_arm.next = !self.t_fault.val() && self.r_arm.q.val();
        // Without a fault in the tick, a node listens while Active, Joining, or Armed for a
        // START or with messages in flight (a new epoch comes from an Active follower, which
        // listens, so `rx_busy` for `p_in_flight` changes nothing); a fault stops it.
        self.r_listen_nf.next = self.r_fol.q.val()
            || self.r_led.q.val()
            || self.r_jn.q.val()
            || (self.r_arm.q.val()
                && ((self.i_rx_kind.q.val() == self.k_start.val()) || self.rx_busy.val()));
        self.r_listen.next = !self.t_fault.val() && self.r_listen_nf.val();
        // A joining node before its lock-on only watches the trees (`j_go`, below).
        self.j_joining.next = self.p_jn.val();
        // Before its lock-on a joining node's tick cannot fault: the window is off (`r_on` is
        // Armed, Active or Joining locked on) and it does not time out (`r_fol` is Active), so
        // `p_jn`'s `!t_fault` is true here and is left out: the skip and lock-on judgements do
        // not wait for the tick's timeout and window comparisons (`r_emax` → `t_fault` →
        // `j_go` → `j_lock` → the epoch registers' picks was `nc_core`'s longest path on
        // 995b66c, 9.74 ns).
        self.j_syncing.next = self.r_jn.q.val() && !self.r_synced.q.val();
        self.r_go_nf.next = self.i_rx_valid.q.val()
            && self.r_decide.val()
            && self.r_port_ok.val()
            && self.r_listen_nf.val()
            && (!self.r_jn.q.val() || self.r_synced.q.val());
        self.r_go.next = !self.t_fault.val() && self.r_go_nf.val();
        self.j_go.next = self.i_rx_valid.q.val()
            && self.r_decide.val()
            && self.r_port_ok.val()
            && self.j_syncing.val();
        // Lock-on (the model's `sync_copy`): the trees that showed a copy of one epoch (a copy
        // of another epoch starts over) and the newest seq those copies carried; once every
        // tree has, the receiver starts at that seq plus one.
        // (Judged a cycle before: the copy's epoch against `r_sepoch`, or the copy before's
        // when that one set it.)
        if self.u_jgo.q.val() {
            self.j_same.next =
                !self.r_sv.q.val().any() || (!self.ej_d.lt.val() && !self.ej_d.gt.val());
        } else {
            self.j_same.next = !self.r_sv.q.val().any() || self.g_same_a.q.val();
        }
        if self.i_rx_port.q.val() == self.k0_2.val() {
            self.j_one.next = self.k_t0.val();
        } else if self.i_rx_port.q.val() == self.k1_2.val() {
            self.j_one.next = self.k_t1.val();
        } else if self.i_rx_port.q.val() == self.k2_2.val() {
            self.j_one.next = self.k_t2.val();
        } else {
            self.j_one.next = self.k_t3.val();
        }
        if self.j_same.val() {
            self.j_v.next = self.r_sv.q.val() | self.j_one.val();
        } else {
            self.j_v.next = self.j_one.val();
        }
        if self.trees.val() == self.k1_tr.val() {
            self.j_mask.next = self.k_m1.val();
        } else if self.trees.val() == self.k2_tr.val() {
            self.j_mask.next = self.k_m2.val();
        } else if self.trees.val() == self.k3_tr.val() {
            self.j_mask.next = self.k_m3.val();
        } else {
            self.j_mask.next = self.k_m4.val();
        }
        // Whether every tree has shown a copy, for both outcomes of `j_same` (picked last).
        self.j_full_s.next =
            ((self.r_sv.q.val() | self.j_one.val()) & self.j_mask.val()) == self.j_mask.val();
        self.j_full_n.next = (self.j_one.val() & self.j_mask.val()) == self.j_mask.val();
        if self.j_same.val() {
            self.j_lock.next = self.j_go.val() && self.j_full_s.val();
        } else {
            self.j_lock.next = self.j_go.val() && self.j_full_n.val();
        }
        // The newest seq: this copy's when it is the first of the epoch or newer than the kept
        // one ((seq - newest) as i32 > 0), else the kept one; its successor is the lock-on point
        // (`r_newest1` kept beside `r_newest`, `seq + 1` beside the comparison).
        // (Judged a cycle before, against `r_newest` or the copy before's seq if it took it.)
        if self.u_jgo.q.val() && self.u_take.q.val() {
            self.j_newer.next = self.g_new_b.q.val();
        } else {
            self.j_newer.next = self.g_new_a.q.val();
        }
        self.j_take.next = !self.j_same.val() || !self.r_sv.q.val().any() || self.j_newer.val();
        self.j_seq1.next = self.i_rx_seq1.q.val();
        self.lock_take.next = self.j_take.val();
        self.lock_kept.next = self.r_newest1.q.val();
        if self.j_take.val() {
            self.j_start.next = self.j_seq1.val();
        } else {
            self.j_start.next = self.r_newest1.q.val();
        }
        // The copy's epoch against r_epoch (`e_*0`) and r_epoch + 1 (`e_*1`), judged a cycle
        // before against every value r_epoch can have now; the record of what the act stage did
        // then picks one, and this cycle's tick picks the pair below.
        if self.u_ep_rx.q.val() {
            self.e_lt0.next = self.ej_d.lt.val();
            self.e_gt0.next = self.ej_d.gt.val();
            self.e_lt1.next = self.ej_d.lt1.val();
            self.e_gt1.next = self.ej_d.gt1.val();
        } else if self.u_ep_zero.q.val() {
            self.e_lt0.next = self.ej_z.lt.val();
            self.e_gt0.next = self.ej_z.gt.val();
            self.e_lt1.next = self.ej_z.lt1.val();
            self.e_gt1.next = self.ej_z.gt1.val();
        } else if self.u_ep_inc.q.val() {
            self.e_lt0.next = self.ej_b.lt.val();
            self.e_gt0.next = self.ej_b.gt.val();
            self.e_lt1.next = self.ej_b.lt1.val();
            self.e_gt1.next = self.ej_b.gt1.val();
        } else {
            self.e_lt0.next = self.ej_a.lt.val();
            self.e_gt0.next = self.ej_a.gt.val();
            self.e_lt1.next = self.ej_a.lt1.val();
            self.e_gt1.next = self.ej_a.gt1.val();
        }
        self.j_new_epoch.next = self.j_lock.val() && (self.e_lt0.val() || self.e_gt0.val());
        if self.t_new_epoch.val() {
            self.e_lt.next = self.e_lt1.val();
            self.e_gt.next = self.e_gt1.val();
        } else {
            self.e_lt.next = self.e_lt0.val();
            self.e_gt.next = self.e_gt0.val();
        }
        self.r_stale.next = self.r_go.val() && self.e_lt.val();
        self.r_higher.next = self.r_go.val() && self.e_gt.val();
        self.r_inflight_fault.next = self.r_higher.val() && self.p_in_flight.val();
        self.r_adopt.next = self.r_higher.val() && !self.p_in_flight.val();
        self.r_own.next =
            self.r_go.val() && !self.e_lt.val() && !self.e_gt.val() && self.p_is_leader.val();
        // Copies of the lock-on epoch before the lock-on point are not ours (a later epoch
        // starts the receiver afresh and ends this).
        // (Judged a cycle before against `r_skip_seq` or either lock-on point, `g_skip_*`,
        // and picked then: `u_skip`.)
        self.j_skip_d.next = self.u_skip.q.val();
        self.j_skipped.next = self.r_go.val()
            && self.r_skip.q.val()
            && !self.e_lt.val()
            && !self.e_gt.val()
            && !self.r_own.val()
            && self.j_skip_d.val();
        self.r_copy.next = self.r_go.val()
            && !self.r_stale.val()
            && !self.r_inflight_fault.val()
            && !self.r_own.val()
            && !self.j_skipped.val();
        // The receiver's `apply` and `restart` are `r_copy` and the restarting events, judged
        // for both outcomes of the tick and picked last by `t_new_epoch` (and stopped by
        // `t_fault`: one LUT after the registers), not through the tick's leadership
        // (`t_become`, `p_is_leader`) and its picks of the epoch's verdicts: the receiver's
        // whole next state waits for them.
        // Without a new epoch the copy meets r_epoch (`e_*0`), `p_in_flight` is `rx_busy` and
        // the node leads iff `r_led` and no expiry; with one it meets r_epoch + 1 (`e_*1`),
        // nothing is in flight and it leads iff it is the new leader (`r_nl_me`: a leader by its
        // registers is no follower, so never times out). `r_adopt` only adds to a restart
        // that the new epoch makes anyway. (`j_skipped` is `r_skip && !e_gt && j_skip_d` once
        // the copy is neither stale nor our own.)
        self.x_own_n.next = self.r_go_nf.val()
            && !self.e_lt0.val()
            && !self.e_gt0.val()
            && self.r_led.q.val()
            && !self.rx_expired.val();
        self.x_copy_n.next = self.r_go_nf.val()
            && !self.e_lt0.val()
            && (!self.e_gt0.val() || !self.rx_busy.val())
            && !self.x_own_n.val()
            && (!self.r_skip.q.val() || self.e_gt0.val() || !self.j_skip_d.val());
        self.x_own_e.next =
            self.r_go_nf.val() && !self.e_lt1.val() && !self.e_gt1.val() && self.r_nl_me.q.val();
        self.x_copy_e.next = self.r_go_nf.val()
            && !self.e_lt1.val()
            && !self.x_own_e.val()
            && (!self.r_skip.q.val() || self.e_gt1.val() || !self.j_skip_d.val());
        self.rx_restart.next = self.t_new_epoch.val()
            || (self.r_go.val() && self.e_gt0.val() && !self.rx_busy.val())
            || self.c_mode.val()
            || self.j_lock.val();
        if self.j_lock.val() {
            self.rx_restart_base.next = self.j_start.val();
        } else {
            self.rx_restart_base.next = self.k0_32.val();
        }
        if self.t_new_epoch.val() {
            self.rx_apply.next = self.x_copy_e.val();
        } else {
            self.rx_apply.next = self.x_copy_n.val();
        }
        if self.t_fault.val() {
            self.rx_apply.next = false;
        }
        if self.t_new_epoch.val() || self.r_adopt.val() || self.c_mode.val() {
            self.r_out.next = self.rx_outcome_fresh.val();
        } else {
            self.r_out.next = self.rx_outcome.val();
        }
        self.r_dup.next = self.r_copy.val() && (self.r_out.val() == self.k_o_dup.val());
        self.r_seq_fault.next = self.r_copy.val()
            && ((self.r_out.val() == self.k_o_gap.val())
                || (self.r_out.val() == self.k_o_too_many.val()));
        self.r_complete.next = self.r_copy.val() && (self.r_out.val() == self.k_o_deliver.val());
        self.r_accept.next = self.r_complete.val()
            || (self.r_copy.val()
                && ((self.r_out.val() == self.k_o_first.val())
                    || (self.r_out.val() == self.k_o_more.val())));
        self.r_armed.next = self.p_arm.val();
        self.r_start_kind.next = self.i_rx_kind.q.val() == self.k_start.val();
        self.r_value_kind.next = (self.i_rx_kind.q.val() == self.k_batch.val())
            || (self.i_rx_kind.q.val() == self.k_config.val());
        // A START's bad instance while Armed (`r_complete` has no fault in the tick, so Armed
        // is `r_arm`); the per-outcome verdicts below read it too.
        self.y_bad_start.next = self.r_arm.q.val()
            && self.r_start_kind.val()
            && (self.g_i_zero.q.val() || self.g_i_max.q.val());
        self.r_bad_start.next = self.r_complete.val() && self.y_bad_start.val();
        // The copy must continue the log: instance = p_lins + 1, i.e. r_lins + 2 when this
        // cycle's send decided a batch, else r_lins + 1 (both compared before the tick is known).
        // (Judged a cycle before against every pair r_lins1 / r_lins2 can hold now; the record of
        // what the act stage did then picks one.)
        if self.u_li_d.q.val() {
            self.m_eq1.next = self.h_p1.q.val();
            self.m_eq2.next = self.h_p2.q.val();
        } else if self.u_li_p.q.val() {
            self.m_eq1.next = self.h_p0.q.val();
            self.m_eq2.next = self.h_p1.q.val();
        } else if self.u_li_v.q.val() {
            self.m_eq1.next = self.h_eq2.q.val();
            self.m_eq2.next = self.h_eq3.q.val();
        } else {
            self.m_eq1.next = self.h_eq1.q.val();
            self.m_eq2.next = self.h_eq2.q.val();
        }
        // Both outcomes of this cycle's send are judged (`_v`: it decided a batch), and the
        // tick's `t_value` picks last, in front of the fault and the FIFO's clear (the faults
        // that do not depend on the send are ORed in after the pick).
        self.m_ok_v.next = self.m_eq2.val();
        self.m_ok_n.next = self.m_eq1.val();
        // A joining node's first delivery sets its place: any instance but 0 (and the last).
        if self.r_lins_none.q.val() {
            self.m_ok_v.next = !self.g_i_zero.q.val();
            self.m_ok_n.next = !self.g_i_zero.q.val();
        }
        self.r_mm_v.next = self.r_complete.val()
            && !self.r_armed.val()
            && (!self.m_ok_v.val() || self.g_i_max.q.val());
        self.r_mm_n.next = self.r_complete.val()
            && !self.r_armed.val()
            && (!self.m_ok_n.val() || self.g_i_max.q.val());
        if self.t_value.val() {
            self.r_mismatch.next = self.r_mm_v.val();
        } else {
            self.r_mismatch.next = self.r_mm_n.val();
        }
        // The copy's faults, its emptying of the FIFO and its delivery, judged for each outcome
        // of the tick (a fault stops the copy; without one the copy meets the registered
        // decodes: Armed is `r_arm`, a mode change is `c_mode_r`) and picked last, so that the
        // tick's `t_value` and `t_new_epoch` are one LUT from the counters, the FIFO's clear and
        // the host port. `y_*_n` is the state `r_complete`, `r_out`, `r_adopt` and
        // `r_inflight_fault` stand for without a new epoch, `y_*_e` with one (nothing in flight,
        // a fresh receiver, the epoch `r_epoch + 1`: `x_copy_e`).
        self.y_inflight_n.next = self.r_go_nf.val() && self.e_gt0.val() && self.rx_busy.val();
        self.y_adopt_n.next = self.r_go_nf.val() && self.e_gt0.val() && !self.rx_busy.val();
        if self.y_adopt_n.val() || self.c_mode_r.val() {
            self.y_out_n.next = self.rx_outcome_fresh.val();
        } else {
            self.y_out_n.next = self.rx_outcome.val();
        }
        self.y_complete_n.next =
            self.x_copy_n.val() && (self.y_out_n.val() == self.k_o_deliver.val());
        self.y_complete_e.next =
            self.x_copy_e.val() && (self.rx_outcome_fresh.val() == self.k_o_deliver.val());
        // (The parts that do not depend on the outcome: `y_bad_start` above, a delivery's kind
        // and state; and without a new epoch, the faults that are not the instance check.)
        self.y_dl_ok.next = !self.r_arm.q.val() && !self.g_i_max.q.val() && self.r_value_kind.val();
        self.y_fixed_n.next = self.y_inflight_n.val()
            || (self.x_copy_n.val()
                && ((self.y_out_n.val() == self.k_o_gap.val())
                    || (self.y_out_n.val() == self.k_o_too_many.val())))
            || (self.y_complete_n.val() && self.y_bad_start.val());
        self.y_fault_n.next = self.y_fixed_n.val()
            || (self.y_complete_n.val()
                && !self.r_arm.q.val()
                && (!self.m_ok_n.val() || self.g_i_max.q.val()));
        self.y_fault_v.next = self.y_fixed_n.val()
            || (self.y_complete_n.val()
                && !self.r_arm.q.val()
                && (!self.m_ok_v.val() || self.g_i_max.q.val()));
        self.y_fault_e.next = (self.x_copy_e.val()
            && ((self.rx_outcome_fresh.val() == self.k_o_gap.val())
                || (self.rx_outcome_fresh.val() == self.k_o_too_many.val())))
            || (self.y_complete_e.val() && self.y_bad_start.val())
            || (self.y_complete_e.val()
                && !self.r_arm.q.val()
                && (!self.m_ok_n.val() || self.g_i_max.q.val()));
        self.y_dl_n.next = self.y_complete_n.val() && self.y_dl_ok.val() && self.m_ok_n.val();
        self.y_dl_v.next = self.y_complete_n.val() && self.y_dl_ok.val() && self.m_ok_v.val();
        self.y_dl_e.next = self.y_complete_e.val() && self.y_dl_ok.val() && self.m_ok_n.val();
        if self.t_value.val() {
            self.r_any_fault.next = self.y_fault_v.val();
            self.y_drop.next = self.y_adopt_n.val() || self.y_fault_v.val();
        } else if self.t_new_epoch.val() {
            self.r_any_fault.next = self.y_fault_e.val();
            self.y_drop.next = (self.r_go_nf.val() && self.e_gt1.val()) || self.y_fault_e.val();
        } else {
            self.r_any_fault.next = self.y_fault_n.val();
            self.y_drop.next = self.y_adopt_n.val() || self.y_fault_n.val();
        }
        if self.t_fault.val() {
            self.r_any_fault.next = false;
            self.y_drop.next = false;
        }
        self.j_placed.next = self.r_complete.val()
            && !self.r_armed.val()
            && !self.r_mismatch.val()
            && self.r_lins_none.q.val();
        self.j_act_rx.next = self.r_accept.val() && self.j_joining.val() && self.r_act_rx.q.val();
        self.r_start_ok.next = self.r_complete.val()
            && self.r_armed.val()
            && self.r_start_kind.val()
            && !self.r_bad_start.val();

        // ================= event phase: client request =================
        self.q_req.next =
            self.i_cl_valid.q.val() && (self.i_cl_class.q.val() == self.c_expected.val());
        // The FIFO stores payloads of up to `max_payload` bytes (`LowiCore::new`); longer ones
        // count as oversize.
        // (Judged in the cycle the request came, `g_oversize`.)
        self.q_oversize.next = self.g_oversize.q.val();

        // ================= outputs =================
        self.send.next = self.t_send.val() || self.c_start.val();
        self.send_count.next = self.k0_8.val();
        self.send_kind.next = self.k_hb.val();
        self.send_instance.next = self.e_lins1.val();
        self.send_epoch.next = self.p_epoch.val();
        self.send_seq.next = self.t_seq.val();
        if self.t_value.val() {
            self.send_kind.next = self.k_batch.val();
            // A batch takes min(fifo_len, batch_max): never after a fault or a new epoch in
            // this tick, which empty the FIFO first (p_fifo_len = 0, so no batch).
            self.send_count.next = self.f_min.val().get_bits::<8>(0);
        }
        if self.c_start.val() {
            self.send_kind.next = self.k_start.val();
            if self.c_mode.val() {
                self.send_instance.next = self.k1_64.val();
                self.send_epoch.next = self.k0_32.val();
                self.send_seq.next = self.k0_32.val();
            }
        }
        self.lead_deliver.next = self.t_value.val();
        self.fifo_take_now.next = self.t_value.val();
        self.tick_leader_changed.next = self.t_new_epoch.val();
        self.tick_epoch.next = self.p_epoch.val();
        self.tick_leader.next = self.t_leader.val();
        self.tick_fault.next = self.t_fault.val();
        self.tick_fault_missing.next = self.rx_missing.val();
        if self.t_expire.val() {
            self.tick_fault_code.next = self.k_f_missing.val();
        } else {
            self.tick_fault_code.next = self.k_f_exhausted.val();
        }
        self.rx_leader_changed.next = self.r_adopt.val() || self.j_new_epoch.val();
        self.rx_fault.next = self.r_any_fault.val();
        self.rx_fault_code.next = self.k_f_mismatch.val();
        if self.r_inflight_fault.val() {
            self.rx_fault_code.next = self.k_f_in_flight.val();
        } else if self.r_seq_fault.val() {
            if self.r_out.val() == self.k_o_gap.val() {
                self.rx_fault_code.next = self.k_f_gap.val();
            } else {
                self.rx_fault_code.next = self.k_f_too_many.val();
            }
        }
        if self.t_value.val() {
            self.rx_deliver.next = self.y_dl_v.val();
        } else if self.t_new_epoch.val() {
            self.rx_deliver.next = self.y_dl_e.val();
        } else {
            self.rx_deliver.next = self.y_dl_n.val();
        }
        if self.t_fault.val() {
            self.rx_deliver.next = false;
        }
        self.state_mode.next = self.c_mode.val() || self.c_act_now.val();
        if self.c_act_now.val() {
            self.mode_state.next = self.s_active.val();
        } else if self.c_en.val() && self.c_join.val() {
            self.mode_state.next = self.s_joining.val();
        } else if self.c_en.val() {
            self.mode_state.next = self.s_armed.val();
        } else {
            self.mode_state.next = self.s_disabled.val();
        }
        self.state_start.next = self.c_start.val();
        self.state_rx_active.next = self.r_start_ok.val() || self.j_act_rx.val();
        self.viol_stale.next = self.r_stale.val();
        self.viol_deposed.next = self.r_higher.val() && self.p_is_leader.val();
        self.nl_reply.next = self.q_req.val() && !self.p_is_leader.val();
        if (self.p_act.val() || (self.j_joining.val() && self.r_synced.q.val()))
            && (self.p_leader.val() != self.node_id.val())
        {
            self.nl_leader.next = self.p_leader.val();
        } else {
            self.nl_leader.next = self.k_sender_none.val();
        }
        self.nl_epoch.next = self.p_epoch.val();
        self.fifo_push.next = self.q_req.val()
            && self.p_is_leader.val()
            && !self.q_oversize.val()
            && self.q_room.val();
        // An event's clear comes a cycle later, from `u_clr` (no judgement of this cycle's
        // copy or CTRL write in front of the FIFO's pointers). The stale length is read in that
        // cycle only where it is not a leader's: the count of dropped requests, which
        // `p_fifo_len` makes 0 (another event's clear in it must not count them twice). The
        // tick reads `fifo_len` / `fifo_nz` only for a leader, and the node does not lead by
        // its registers then: an adopted epoch makes it a follower, a fault Faulted, a mode
        // change Armed, Joining or Disabled, and ENABLE|START leads from Disabled, whose FIFO
        // is already empty; nor does it time out or expire then (the timeout counter and the
        // receiver restart with every clearing event but a fault, which stops both). A CTRL
        // mode change clears; with a fault in the tick the FIFO is cleared anyway, so the
        // verdict against the registered state (`c_mode_r`) does, without the tick's pick.
        self.u_clr.d.next = self.y_drop.val() || self.c_mode_r.val();
        self.fifo_clear.next = self.t_fault.val() || self.t_new_epoch.val() || self.u_clr.q.val();

        // counters
        self.clear_counters.next = self.c_clear.val();
        self.tick_net_fault.next = self.t_fault.val();
        self.tick_timeout.next = self.t_timeout.val();
        self.tick_sent_value.next = self.t_value.val();
        self.tick_sent_hb.next = self.t_send.val() && !self.t_value.val();
        self.tick_dropped.next = self.k0_13.val();
        if self.t_fault.val() || self.t_new_epoch.val() {
            self.tick_dropped.next = self.fifo_len.val();
        }
        self.ev_foreign.next = (self.i_rx_valid.q.val()
            && (self.i_rx_class.q.val() == self.c_foreign.val()))
            || (self.i_cl_valid.q.val() && (self.i_cl_class.q.val() == self.c_foreign.val()));
        self.ev_malformed.next = (self.i_rx_valid.q.val()
            && (self.i_rx_class.q.val() == self.c_malformed.val()))
            || (self.i_cl_valid.q.val() && (self.i_cl_class.q.val() == self.c_malformed.val()));
        self.ev_unauthorized.next = (self.i_rx_valid.q.val()
            && (self.i_rx_class.q.val() == self.c_unauthorized.val()))
            || (self.i_cl_valid.q.val() && (self.i_cl_class.q.val() == self.c_unauthorized.val()));
        self.ev_ignored.next = (self.i_rx_valid.q.val()
            && (self.i_rx_class.q.val() == self.c_other.val()))
            || (self.i_cl_valid.q.val() && (self.i_cl_class.q.val() == self.c_other.val()))
            || (self.i_rx_valid.q.val()
                && (self.i_rx_class.q.val() == self.c_expected.val())
                && !(self.r_decide.val() && self.r_port_ok.val() && self.r_listen.val()))
            || self.r_own.val()
            || self.j_go.val()
            || self.j_skipped.val()
            || (self.r_complete.val() && self.r_armed.val() && !self.r_start_kind.val());
        self.ev_stale.next = self.r_stale.val();
        self.ev_duplicate.next = self.r_dup.val();
        self.ev_net_fault.next = self.r_any_fault.val();
        self.ev_delivered.next = self.rx_deliver.val();
        self.ev_dropped.next = self.k0_13.val();
        if self.y_drop.val() {
            self.ev_dropped.next = self.e_len.val();
        }
        if self.q_req.val()
            && self.p_is_leader.val()
            && !self.q_oversize.val()
            && !self.q_room.val()
        {
            self.ev_dropped.next = self.k1_13.val();
        }
        self.ev_accepted.next = self.fifo_push.val();
        self.ev_not_leader.next = self.nl_reply.val();
        self.ev_sent_hb.next = self.c_start.val();
        self.ev_oversize.next = self.q_req.val() && self.p_is_leader.val() && self.q_oversize.val();

        // ================= next state =================
        self.r_state.d.next = self.p_state.val();
        self.r_epoch.d.next = self.p_epoch.val();
        self.n_lead.next = self.p_lead.val();
        self.r_leader.d.next = self.p_leader.val();
        // The instance registers keep this cycle's values; what the act stage does to them
        // shows in the next cycle's `e_lins*` (the candidates below, the record `u_*`).
        self.r_lins.d.next = self.e_lins.val();
        self.r_lins1.d.next = self.e_lins1.val();
        self.r_lins2.d.next = self.e_lins2.val();
        self.r_lins3.d.next = self.e_lins3.val();
        self.l2_rx1.next = self.i_rx_instance.q.val() + self.k1_64.val();
        self.l2_rx2.next = self.i_rx_instance.q.val() + self.k2_64.val();
        self.w_inst.d.next = self.i_rx_instance.q.val();
        self.w_m1.d.next = self.i_rx_instance.q.val() - self.k1_64.val();
        self.w_p1.d.next = self.l2_rx1.val();
        self.w_p2.d.next = self.l2_rx2.val();
        self.w_p3.d.next = self.i_rx_instance.q.val() + self.k3_64.val();
        self.v_p4.next = self.w_p3.q.val() + self.k1_64.val();
        self.v_l5.next = self.w_l4.q.val() + self.k1_64.val();
        self.v_r4.next = self.r_lins3.q.val() + self.k1_64.val();
        if self.u_li_d.q.val() {
            self.w_l4.d.next = self.v_p4.val();
        } else if self.u_li_p.q.val() {
            self.w_l4.d.next = self.w_p3.q.val();
        } else if self.u_ep_zero.q.val() {
            self.w_l4.d.next = self.k4_64.val();
        } else if self.u_li_v.q.val() {
            self.w_l4.d.next = self.v_l5.val();
        } else {
            self.w_l4.d.next = self.v_r4.val();
        }
        self.r_send_seq.d.next = self.p_send_seq.val();
        if self.r_since_rx.q.val() == self.k_max_32.val() {
            self.r_since_rx.d.next = self.p_since_rx.val();
        } else {
            self.r_since_rx.d.next = self.p_since_rx.val() + self.k1_32.val();
        }
        // r_ge follows r_since_rx: both candidates of the count (with and without a timeout's
        // subtraction) are compared with `timeout` from registers, the tick picks one. With
        // s = r_since_rx (>= timeout t when a timeout fires), the count after one is s - t + 1
        // (saturated: s - t), and s - t + 1 >= t is s + 1 >= 2t, i.e. ((s + 1) >> 1) >= t: one
        // comparison behind the increment instead of a subtraction, an increment and a
        // comparison in series. The two differ only at s = u32::MAX with t = 2^31 (the count
        // saturated: s - t + 1 >= t holds, ((s + 1) >> 1) >= t does not), which no follower
        // reaches: it times out when s reaches t, long before s saturates.
        // The saturation picks between the comparisons' results, not in front of them
        // (s = u32::MAX: `u32::MAX >= t` always, and `u32::MAX >> 1 >= t` is `t < 2^31`).
        // Below it `s + 1` does not wrap, and no increment sits in front of a comparison:
        // `s + 1 >= t` is `s >= t || t == s + 1`, and `(s + 1) >> 1 >= t`, i.e.
        // `s + 1 >= 2t`, is `t < 2^31 && (s >= 2t || 2t == s + 1)` (`2t` then fits in 32
        // bits; with `t >= 2^31` it exceeds any `s + 1`). Each equality is a `SumEq`. `2t` is
        // written twice, `t2` for the 32-bit comparison and the zero-extended `t` shifted for
        // `g_eq2`: a local of this block fed into a sub-block whose output it reads is a loop to
        // Verilator's lint (UNOPTFLAT), a sub-block's output passed on is not.
        self.s_max.next = self.r_since_rx.q.val() == self.k_max_32.val();
        self.t2.next = self.timeout.val() << self.k1_32.val();
        self.zx_s.narrow.next = self.r_since_rx.q.val();
        self.zx_t.narrow.next = self.timeout.val();
        self.g_eq1.x.next = self.zx_t.wide.val();
        self.g_eq1.i.next = self.zx_s.wide.val();
        self.g_eq2.x.next = self.zx_t.wide.val() << self.k1_64.val();
        self.g_eq2.i.next = self.zx_s.wide.val();
        if self.t_new_epoch.val() {
            if self.s_max.val() {
                self.r_ge.d.next = !self.timeout.val().get_bit(31);
            } else {
                self.r_ge.d.next = !self.timeout.val().get_bit(31)
                    && ((self.r_since_rx.q.val() >= self.t2.val()) || self.g_eq2.eq.val());
            }
        } else {
            self.r_ge.d.next = self.s_max.val()
                || (self.r_since_rx.q.val() >= self.timeout.val())
                || self.g_eq1.eq.val();
        }
        self.l_max.next = self.r_loop.q.val() == self.k_max_32.val();
        if self.l_max.val() {
            self.l_inc.next = self.r_loop.q.val();
            self.r_loop1.d.next = self.r_loop1.q.val();
        } else {
            self.l_inc.next = self.r_loop1.q.val();
            self.r_loop1.d.next = self.r_loop1.q.val() + self.k1_32.val();
        }
        if self.t_send.val() || self.c_start.val() {
            self.r_loop.d.next = self.k1_32.val();
            self.r_loop1.d.next = self.k2_32.val();
            self.r_lp.d.next = self.loop_period.val() <= self.k1_32.val();
            self.r_mg.d.next = self.min_gap.val().any() && (self.min_gap.val() <= self.k1_32.val());
        } else {
            self.r_loop.d.next = self.l_inc.val();
            self.r_lp.d.next = self.l_max.val() || (self.r_loop1.q.val() >= self.loop_period.val());
            self.r_mg.d.next = self.min_gap.val().any()
                && (self.l_max.val() || (self.r_loop1.q.val() >= self.min_gap.val()));
        }
        self.r_sync_viol.d.next =
            self.r_sync_viol.q.val() || self.r_stale.val() || self.viol_deposed.val();
        // CTRL: CLEAR_COUNTERS, then the mode (reset_protocol), then START.
        if self.c_clear.val() {
            self.r_sync_viol.d.next = false;
        }
        // Joining registers: kept unless an event below changes them.
        self.n_synced.next = self.r_synced.q.val();
        self.r_lins_none.d.next = self.r_lins_none.q.val() && !self.j_placed.val();
        self.r_sv.d.next = self.r_sv.q.val();
        self.r_sepoch.d.next = self.r_sepoch.q.val();
        self.r_newest.d.next = self.r_newest.q.val();
        self.r_newest1.d.next = self.r_newest1.q.val();
        self.r_skip.d.next = self.r_skip.q.val()
            && !self.r_complete.val()
            && !self.r_adopt.val()
            && !self.t_new_epoch.val();
        self.r_skip_seq.d.next = self.r_skip_seq.q.val();
        self.r_tmo_member.d.next =
            self.r_tmo_member.q.val() || (self.timeout_written.val() && self.j_joining.val());
        self.r_act_rx.d.next = self.r_act_rx.q.val() && !self.j_act_rx.val();
        if self.c_mode.val() {
            if self.c_en.val() && self.c_join.val() {
                self.r_state.d.next = self.s_joining.val();
            } else if self.c_en.val() {
                self.r_state.d.next = self.s_armed.val();
            } else {
                self.r_state.d.next = self.s_disabled.val();
            }
            self.n_synced.next = false;
            self.r_lins_none.d.next = self.c_en.val() && self.c_join.val();
            self.r_sv.d.next = self.k0_4.val();
            self.r_skip.d.next = false;
            self.r_tmo_member.d.next = false;
            self.r_act_rx.d.next = false;
            self.r_epoch.d.next = self.k0_32.val();
            self.n_lead.next = false;
            self.r_leader.d.next = self.k0_8.val();
            self.r_send_seq.d.next = self.k0_32.val();
            self.r_since_rx.d.next = self.k0_32.val();
            self.r_ge.d.next = !self.timeout.val().any();
            self.r_sync_viol.d.next = false;
        }
        if self.c_act.val() {
            if self.c_act_now.val() {
                self.r_state.d.next = self.s_active.val();
            } else {
                self.r_act_rx.d.next = true;
            }
        }
        if self.c_start.val() {
            self.r_state.d.next = self.s_active.val();
            self.n_lead.next = true;
            if self.c_mode.val() {
                self.r_send_seq.d.next = self.k1_32.val();
            } else {
                self.r_send_seq.d.next = self.p_send_seq1.val();
            }
        }
        // DECIDE copy.
        if self.r_adopt.val() {
            self.r_epoch.d.next = self.i_rx_epoch.q.val();
            self.n_lead.next = false;
            // The adopted epoch's leader is `epoch mod node_count`, which is the copy's sender:
            // a DECIDE from anyone else is UNAUTHORIZED (pkt_parser, as the model refuses it),
            // never EXPECTED, so it never gets here.
            self.r_leader.d.next = self.i_rx_sender.q.val();
        }
        // A joining node's copy before the lock-on: the stream is alive (the timeout counter
        // restarts), the trees' last copies are kept, and the last tree locks on.
        if self.j_go.val() {
            self.r_sv.d.next = self.j_v.val();
            self.r_sepoch.d.next = self.i_rx_epoch.q.val();
            if self.j_take.val() {
                self.r_newest.d.next = self.i_rx_seq.q.val();
                self.r_newest1.d.next = self.j_seq1.val();
            }
        }
        if self.j_lock.val() {
            self.n_synced.next = true;
            self.r_skip.d.next = true;
            self.r_skip_seq.d.next = self.j_start.val();
        }
        if self.j_new_epoch.val() {
            self.r_epoch.d.next = self.i_rx_epoch.q.val();
            self.r_leader.d.next = self.i_rx_sender.q.val();
        }
        if self.r_accept.val() || self.j_go.val() {
            self.r_since_rx.d.next = self.k1_32.val();
            self.r_ge.d.next = self.timeout.val() <= self.k1_32.val();
        }
        if self.j_act_rx.val() {
            self.r_state.d.next = self.s_active.val();
        }
        if self.r_start_ok.val() {
            self.r_state.d.next = self.s_active.val();
        }
        if self.r_any_fault.val() {
            self.r_state.d.next = self.s_faulted.val();
        }
        self.r_synced.d.next = self.n_synced.val();
        self.r_lead.d.next = self.n_lead.val();
        // The decodes from the events themselves, beside `r_state`'s chain (not behind it):
        // a fault ends Faulted; a start, an activation or a START makes Active (`d_go`); a
        // mode change Joining / Armed / Disabled; else the state after the tick.
        self.d_go.next = self.r_start_ok.val()
            || self.j_act_rx.val()
            || self.c_start.val()
            || (self.c_act.val() && self.c_act_now.val());
        self.d_keep.next = !self.r_any_fault.val() && !self.d_go.val();
        self.d_act.next = !self.r_any_fault.val()
            && (self.d_go.val() || (!self.c_mode.val() && self.p_act.val()));
        if self.c_mode.val() {
            self.d_arm.next = self.d_keep.val() && self.c_en.val() && !self.c_join.val();
            self.d_jn.next = self.d_keep.val() && self.c_en.val() && self.c_join.val();
            self.d_dis.next = self.d_keep.val() && !self.c_en.val();
        } else {
            self.d_arm.next = self.d_keep.val() && self.p_arm.val();
            self.d_jn.next = self.d_keep.val() && self.p_jn.val();
            self.d_dis.next = self.d_keep.val() && self.r_dis.q.val();
        }
        self.r_on.d.next =
            self.d_arm.val() || self.d_act.val() || (self.d_jn.val() && self.n_synced.val());
        self.r_fol.d.next = self.d_act.val() && !self.n_lead.val();
        self.r_led.d.next = self.d_act.val() && self.n_lead.val();
        self.r_arm.d.next = self.d_arm.val();
        self.r_jn.d.next = self.d_jn.val();
        self.r_dis.d.next = self.d_dis.val();
        self.r_id0.d.next = !self.node_id.val().any();

        // The values kept beside r_lins and r_leader, from their next values.
        // r_epoch1 follows r_epoch's next value (+1) from each of its candidates, summed
        // beside it (no adder behind the copy's judgement): r_epoch1 (+1 after a timeout), 1
        // after a mode change, an adopted or locked-on epoch's + 1.
        if self.t_new_epoch.val() {
            self.r_epoch1.d.next = self.z_b1.val();
        } else {
            self.r_epoch1.d.next = self.r_epoch1.q.val();
        }
        if self.c_mode.val() {
            self.r_epoch1.d.next = self.k1_32.val();
        }
        if self.r_adopt.val() || self.j_new_epoch.val() {
            self.r_epoch1.d.next = self.z_d1.val();
        }
        // r_emax likewise: r_epoch1 == MAX after a timeout, 0 after a mode change, the copy's.
        if self.t_new_epoch.val() {
            self.r_emax.d.next = self.r_epoch1.q.val() == self.k_max_32.val();
        } else {
            self.r_emax.d.next = self.r_emax.q.val();
        }
        if self.c_mode.val() {
            self.r_emax.d.next = false;
        }
        if self.r_adopt.val() || self.j_new_epoch.val() {
            self.r_emax.d.next = self.i_rx_epoch.q.val() == self.k_max_32.val();
        }
        // r_nl / r_nl_me follow r_leader's next value, from each of its candidates: r_leader
        // (next: r_nl), after a timeout r_nl (next: n_nl), 0 (next: 1 mod n) and an adopted
        // epoch's sender (next: s_nl).
        self.n_inc.next = self.r_nl.q.val() + self.k1_8.val();
        if self.n_inc.val() == self.node_count.val() {
            self.n_nl.next = self.k0_8.val();
        } else {
            self.n_nl.next = self.n_inc.val();
        }
        self.x_inc.next = self.i_rx_sender.q.val() + self.k1_8.val();
        if self.x_inc.val() == self.node_count.val() {
            self.s_nl.next = self.k0_8.val();
        } else {
            self.s_nl.next = self.x_inc.val();
        }
        if self.node_count.val() == self.k1_8.val() {
            self.z_nl.next = self.k0_8.val();
        } else {
            self.z_nl.next = self.k1_8.val();
        }
        if self.t_new_epoch.val() {
            self.r_nl.d.next = self.n_nl.val();
            self.r_nl_me.d.next = self.n_nl.val() == self.node_id.val();
        } else {
            self.r_nl.d.next = self.r_nl.q.val();
            self.r_nl_me.d.next = self.r_nl_me.q.val();
        }
        if self.c_mode.val() {
            self.r_nl.d.next = self.z_nl.val();
            self.r_nl_me.d.next = self.z_nl.val() == self.node_id.val();
        }
        if self.r_adopt.val() || self.j_new_epoch.val() {
            self.r_nl.d.next = self.s_nl.val();
            self.r_nl_me.d.next = self.s_nl.val() == self.node_id.val();
        }

        // ================= registers out =================
        self.state.next = self.r_state.q.val();
        self.epoch.next = self.r_epoch.q.val();
        self.leader.next = self.r_leader.q.val();
        self.last_instance.next = self.e_lins.val();
        self.s_base.next = self.k_st_zero.val();
        if self.r_state.q.val() == self.s_active.val() {
            if self.r_lead.q.val() {
                self.s_base.next = self.k_st_active.val() | self.k_st_leader.val();
            } else {
                self.s_base.next = self.k_st_active.val();
            }
        } else if self.r_state.q.val() == self.s_faulted.val() {
            self.s_base.next = self.k_st_fault.val();
        } else if self.r_state.q.val() == self.s_armed.val() {
            self.s_base.next = self.k_st_armed.val();
        } else if self.r_state.q.val() == self.s_joining.val() {
            if self.r_synced.q.val() {
                self.s_base.next = self.k_st_joining.val() | self.k_st_synced.val();
            } else {
                self.s_base.next = self.k_st_joining.val();
            }
        }
        if self.r_sync_viol.q.val() {
            self.status.next = self.s_base.val() | self.k_st_sync.val();
        } else {
            self.status.next = self.s_base.val();
        }

        // ================= judge stage (the copy that comes, raw `rx_*`) =================
        // Against every value the state can have when the copy is acted on next cycle; the
        // act stage records what it did (`u_*`) and picks then (rtl/README, "Step 2").
        self.u_ep_rx.d.next = self.r_adopt.val() || self.j_new_epoch.val();
        self.u_ep_zero.d.next = self.c_mode.val();
        self.u_ep_inc.d.next = self.t_new_epoch.val();
        self.ej_a.clock.next = self.clock.val();
        self.ej_a.x.next = self.rx_epoch.val();
        self.ej_a.r.next = self.r_epoch.q.val();
        self.ej_a.r1.next = self.r_epoch1.q.val();
        self.ej_b.clock.next = self.clock.val();
        self.ej_b.x.next = self.rx_epoch.val();
        self.ej_b.r.next = self.r_epoch1.q.val();
        self.ej_b.r1.next = self.z_b1.val();
        self.ej_z.clock.next = self.clock.val();
        self.ej_z.x.next = self.rx_epoch.val();
        self.ej_z.r.next = self.k0_32.val();
        self.ej_z.r1.next = self.k1_32.val();
        self.ej_d.clock.next = self.clock.val();
        self.ej_d.x.next = self.rx_epoch.val();
        self.ej_d.r.next = self.i_rx_epoch.q.val();
        self.ej_d.r1.next = self.z_d1.val();
        self.u_jgo.d.next = self.j_go.val();
        // The lock-on skip test, (seq - skip_seq) as i32 < 0 (the difference's top bit):
        // against `r_skip_seq`, or a lock-on by the copy acted on now at its `seq + 1` or at
        // the kept `r_newest1`; this cycle's act stage picks (`r_skip_seq`'s next value below).
        self.g_skip_a.next = (self.rx_seq.val() - self.r_skip_seq.q.val()) >= self.k_half_32.val();
        self.g_skip_b.next = (self.rx_seq.val() - self.j_seq1.val()) >= self.k_half_32.val();
        self.g_skip_c.next = (self.rx_seq.val() - self.r_newest1.q.val()) >= self.k_half_32.val();
        if !self.j_lock.val() {
            self.u_skip.d.next = self.g_skip_a.val();
        } else if self.j_take.val() {
            self.u_skip.d.next = self.g_skip_b.val();
        } else {
            self.u_skip.d.next = self.g_skip_c.val();
        }
        self.u_take.d.next = self.j_take.val();
        self.g_same_a.d.next = self.rx_epoch.val() == self.r_sepoch.q.val();
        self.z_nd_a.next = self.rx_seq.val() - self.r_newest.q.val();
        self.z_nd_b.next = self.rx_seq.val() - self.i_rx_seq.q.val();
        self.g_new_a.d.next = self.z_nd_a.val().any() && (self.z_nd_a.val() < self.k_half_32.val());
        self.g_new_b.d.next = self.z_nd_b.val().any() && (self.z_nd_b.val() < self.k_half_32.val());
        self.u_li_d.d.next = self.rx_deliver.val();
        self.u_li_p.d.next =
            self.r_start_ok.val() || (self.j_placed.val() && !self.r_value_kind.val());
        self.u_li_v.d.next = self.t_value.val();
        // `rx_instance` against every register `e_lins1` / `2` / `3` are picked from, then the
        // same pick (in the same order) of the one-bit results.
        self.c_inst.next = self.rx_instance.val() == self.w_inst.q.val();
        self.c_p1.next = self.rx_instance.val() == self.w_p1.q.val();
        self.c_p2.next = self.rx_instance.val() == self.w_p2.q.val();
        self.c_p3.next = self.rx_instance.val() == self.w_p3.q.val();
        self.c_l1.next = self.rx_instance.val() == self.r_lins1.q.val();
        self.c_l2.next = self.rx_instance.val() == self.r_lins2.q.val();
        self.c_l3.next = self.rx_instance.val() == self.r_lins3.q.val();
        self.c_l4.next = self.rx_instance.val() == self.w_l4.q.val();
        self.c_k1.next = self.rx_instance.val() == self.k1_64.val();
        self.c_k2.next = self.rx_instance.val() == self.k2_64.val();
        self.c_k3.next = self.rx_instance.val() == self.k3_64.val();
        if self.u_li_d.q.val() {
            self.h_eq1.d.next = self.c_p1.val();
            self.h_eq2.d.next = self.c_p2.val();
            self.h_eq3.d.next = self.c_p3.val();
        } else if self.u_li_p.q.val() {
            self.h_eq1.d.next = self.c_inst.val();
            self.h_eq2.d.next = self.c_p1.val();
            self.h_eq3.d.next = self.c_p2.val();
        } else if self.u_ep_zero.q.val() {
            self.h_eq1.d.next = self.c_k1.val();
            self.h_eq2.d.next = self.c_k2.val();
            self.h_eq3.d.next = self.c_k3.val();
        } else if self.u_li_v.q.val() {
            self.h_eq1.d.next = self.c_l2.val();
            self.h_eq2.d.next = self.c_l3.val();
            self.h_eq3.d.next = self.c_l4.val();
        } else {
            self.h_eq1.d.next = self.c_l1.val();
            self.h_eq2.d.next = self.c_l2.val();
            self.h_eq3.d.next = self.c_l3.val();
        }
        self.h_p0.d.next = self.rx_instance.val() == self.i_rx_instance.q.val();
        self.n_p1.x.next = self.rx_instance.val();
        self.n_p1.i.next = self.i_rx_instance.q.val();
        self.h_p1.d.next = self.n_p1.eq.val();
        self.n_p2.x.next = self.rx_instance.val();
        self.n_p2.i.next = self.i_rx_instance.q.val();
        self.h_p2.d.next = self.n_p2.eq.val();
        self.g_i_zero.d.next = self.rx_instance.val() == self.k0_64.val();
        self.g_i_max.d.next = self.rx_instance.val() == self.k_max_64.val();
        self.g_decide.d.next = (self.rx_class.val() == self.c_expected.val())
            && (self.rx_sender.val() != self.node_id.val());
        self.g_port_ok.d.next = (self.rx_tree.val() < self.trees.val())
            && (self.rx_tree.val().get_bits::<6>(2) == self.k0_6.val())
            && (self.rx_tree.val().get_bits::<2>(0) == self.rx_port.val());
        // The FIFO stores payloads of up to `max_payload` bytes (`LowiCore::new`); longer ones
        // count as oversize.
        self.g_oversize.d.next = ((self.cl_len.val() + self.k_overhead.val()) > self.mtu.val())
            || (self.cl_len.val() > self.k_max_payload.val());
    }
}
