//! `csr`: the register file on a simple memory-mapped bus (32-bit data, byte addresses,
//! one write strobe, combinational read data).
//!
//! A write is registered and applied in the next cycle (a read in the cycle after a write's bus
//! cycle still returns the old value; two cycles after, the new one): the core acts on every
//! event, a CTRL write included, one cycle after it comes (rtl/README, "The event pipeline").
//!
//! Every address, reset value and legal range comes from `proto::regs` when the circuit is
//! built (they become sized `localparam`s in the Verilog): `REGISTERS` for the configuration
//! registers and `addr` / `Counter::addr` for the rest. Configuration writes are taken only
//! while the core is Disabled and only inside the register's legal range (refused writes change
//! nothing, as in the model). The cross-field rules of `Config::validate` (node_id < node_count,
//! the timeout bound, distinct groups and ports) are the control software's job (soc-ctl refuses
//! such configurations before writing them); the RTL does not re-check them.
//! Reset values are the registers' initial values (FPGA power-on, no reset wire).

use proto::regs::{self, Counter, Register, addr, ctrl};
use rust_hdl::prelude::*;
use rust_hdl::widgets::dff_with_init::DFFWithInit;

use crate::lowi_core::{STATE_BITS, state};
use crate::prim::ZeroExtend;

fn reg(a: u16) -> &'static Register {
    regs::REGISTERS
        .iter()
        .find(|r| r.addr == a)
        .expect("address from proto::regs::addr")
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
}

block! {
    /// One 32-bit configuration register with a legal range narrower than all of `u32`.
    pub struct ConfigReg(r: &'static Register) {
        pub clock: Signal<In, Clock>,
        /// Read address.
        pub bus_addr: Signal<In, Bits<16>>,
        /// The bus's write strobe and data in their own cycle (with `bus_addr`): whether the
        /// write is to this register and in range is judged then and registered (`r_hit`).
        pub bus_wnow: Signal<In, Bit>,
        pub bus_data: Signal<In, Bits<32>>,
        /// The write data a cycle later (`csr` registers its bus writes: see the module doc).
        pub bus_wdata: Signal<In, Bits<32>>,
        /// Configuration writes allowed (core Disabled).
        pub writable: Signal<In, Bit>,
        pub value: Signal<Out, Bits<32>>,
        /// `value` when addressed, else 0 (OR-ed into the read data).
        pub rdata: Signal<Out, Bits<32>>,
        r: DFFWithInit<Bits<32>> = DFFWithInit::new(Bits::<32>::from(r.reset)),
        /// A bus write to this register with a value in range came in the cycle before.
        r_hit: DFF<Bit>,
        address: Constant<Bits<16>> = k(r.addr as u64),
        min: Constant<Bits<32>> = k(r.min),
        span: Constant<Bits<32>> = k(r.max - r.min),
        zero: Constant<Bits<32>> = k(0),
    }
}

impl ConfigReg {
    /// The register at `a` in `proto::regs::REGISTERS`.
    pub fn new(a: u16) -> Self {
        let r = reg(a);
        assert!(r.width == 32 && r.access == regs::Access::Config);
        assert!(
            r.max - r.min < u32::MAX as u64,
            "full-range registers use ConfigRegAny"
        );
        Self::build(r)
    }
}

impl Logic for ConfigReg {
    #[hdl_gen]
    fn update(&mut self) {
        self.r.clock.next = self.clock.val();
        self.r_hit.clock.next = self.clock.val();
        self.r.d.next = self.r.q.val();
        // The address and min <= v <= max (one unsigned comparison: v - min <= max - min,
        // wrapping) judged in the bus cycle and registered with the data: the write cycle only
        // ANDs `writable` (no comparison in front of the write; since 2026-12-07 the address
        // too, whose comparison sat behind the core's state in `nc_core`'s late paths).
        self.r_hit.d.next = self.bus_wnow.val()
            && (self.bus_addr.val() == self.address.val())
            && ((self.bus_data.val() - self.min.val()) <= self.span.val());
        if self.r_hit.q.val() && self.writable.val() {
            self.r.d.next = self.bus_wdata.val();
        }
        self.value.next = self.r.q.val();
        if self.bus_addr.val() == self.address.val() {
            self.rdata.next = self.r.q.val();
        } else {
            self.rdata.next = self.zero.val();
        }
    }
}

block! {
    /// One 32-bit configuration register whose legal range is every `u32` (no check).
    pub struct ConfigRegAny(r: &'static Register) {
        pub clock: Signal<In, Clock>,
        /// Read address.
        pub bus_addr: Signal<In, Bits<16>>,
        /// The bus's write strobe in its own cycle (with `bus_addr`): whether the write is to
        /// this register is judged then and registered (`r_hit`).
        pub bus_wnow: Signal<In, Bit>,
        /// The write data a cycle later (`csr` registers its bus writes: see the module doc).
        pub bus_wdata: Signal<In, Bits<32>>,
        /// Configuration writes allowed (core Disabled).
        pub writable: Signal<In, Bit>,
        pub value: Signal<Out, Bits<32>>,
        /// `value` when addressed, else 0 (OR-ed into the read data).
        pub rdata: Signal<Out, Bits<32>>,
        r: DFFWithInit<Bits<32>> = DFFWithInit::new(Bits::<32>::from(r.reset)),
        /// A bus write to this register came in the cycle before.
        r_hit: DFF<Bit>,
        address: Constant<Bits<16>> = k(r.addr as u64),
        zero: Constant<Bits<32>> = k(0),
    }
}

impl ConfigRegAny {
    /// The register at `a` in `proto::regs::REGISTERS`.
    pub fn new(a: u16) -> Self {
        let r = reg(a);
        assert!(r.width == 32 && r.access == regs::Access::Config);
        assert!(
            r.min == 0 && r.max == u32::MAX as u64,
            "ranged registers use ConfigReg"
        );
        Self::build(r)
    }
}

impl Logic for ConfigRegAny {
    #[hdl_gen]
    fn update(&mut self) {
        self.r.clock.next = self.clock.val();
        self.r_hit.clock.next = self.clock.val();
        self.r.d.next = self.r.q.val();
        self.r_hit.d.next = self.bus_wnow.val() && (self.bus_addr.val() == self.address.val());
        if self.r_hit.q.val() && self.writable.val() {
            self.r.d.next = self.bus_wdata.val();
        }
        self.value.next = self.r.q.val();
        if self.bus_addr.val() == self.address.val() {
            self.rdata.next = self.r.q.val();
        } else {
            self.rdata.next = self.zero.val();
        }
    }
}

block! {
    /// One 64-bit counter: `value += tick + tick_n`, then cleared if `clear`, then `+= ev + ev_n`
    /// (the model's order within one cycle: tick phase, CLEAR_COUNTERS, event phase).
    ///
    /// The cycle's increments and `clear` are registered first and added in the next cycle, so no
    /// 64-bit adder sits behind the core's tick and event logic: a count shows on the bus one cycle
    /// after the cycle it counts (CLEAR_COUNTERS too, in the same order against the increments).
    pub struct Counter64(c: Counter) {
        pub clock: Signal<In, Clock>,
        pub bus_addr: Signal<In, Bits<16>>,
        pub clear: Signal<In, Bit>,
        pub tick: Signal<In, Bit>,
        pub tick_n: Signal<In, Bits<13>>,
        pub ev: Signal<In, Bit>,
        pub ev_n: Signal<In, Bits<13>>,
        pub rdata: Signal<Out, Bits<32>>,
        r: DFF<Bits<64>>,
        r_clear: DFF<Bit>,
        r_tick: DFF<Bit>,
        r_tick_n: DFF<Bits<13>>,
        r_ev: DFF<Bit>,
        r_ev_n: DFF<Bits<13>>,
        ta: Signal<Local, Bits<16>>,
        ea: Signal<Local, Bits<16>>,
        amount: Signal<Local, Bits<16>>,
        base: Signal<Local, Bits<64>>,
        lo: Constant<Bits<16>> = k(c.addr() as u64),
        hi: Constant<Bits<16>> = k(c.addr() as u64 + 4),
        zero: Constant<Bits<64>> = k(0),
        one16: Constant<Bits<16>> = k(1),
        zero32: Constant<Bits<32>> = k(0),
        xn: ZeroExtend<13, 16>,
        xm: ZeroExtend<13, 16>,
        xa: ZeroExtend<16, 64>,
    }
}

impl Counter64 {
    /// The counter `c` (address from `proto::regs::Counter::addr`).
    pub fn new(c: Counter) -> Self {
        Self::build(c)
    }
}

impl Logic for Counter64 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r, r_clear, r_tick, r_tick_n, r_ev, r_ev_n);
        // This cycle's increments and clear, registered.
        self.r_clear.d.next = self.clear.val();
        self.r_tick.d.next = self.tick.val();
        self.r_tick_n.d.next = self.tick_n.val();
        self.r_ev.d.next = self.ev.val();
        self.r_ev_n.d.next = self.ev_n.val();
        // Last cycle's, added now: (value + tick part, or 0 if cleared) + event part, i.e.
        // (cleared ? 0 : value) + (cleared ? 0 : tick part) + event part (at most 2 · 8192).
        self.xn.narrow.next = self.r_tick_n.q.val();
        self.xm.narrow.next = self.r_ev_n.q.val();
        if self.r_tick.q.val() {
            self.ta.next = self.xn.wide.val() + self.one16.val();
        } else {
            self.ta.next = self.xn.wide.val();
        }
        if self.r_ev.q.val() {
            self.ea.next = self.xm.wide.val() + self.one16.val();
        } else {
            self.ea.next = self.xm.wide.val();
        }
        if self.r_clear.q.val() {
            self.amount.next = self.ea.val();
            self.base.next = self.zero.val();
        } else {
            self.amount.next = self.ta.val() + self.ea.val();
            self.base.next = self.r.q.val();
        }
        self.xa.narrow.next = self.amount.val();
        self.r.d.next = self.base.val() + self.xa.wide.val();
        if self.bus_addr.val() == self.lo.val() {
            self.rdata.next = self.r.q.val().get_bits::<32>(0);
        } else if self.bus_addr.val() == self.hi.val() {
            self.rdata.next = self.r.q.val().get_bits::<32>(32);
        } else {
            self.rdata.next = self.zero32.val();
        }
    }
}

/// The counters in register order, as the `Csr` fields are declared (checked against
/// `proto::regs::Counter::ALL` by a test).
pub const COUNTER_FIELDS: [Counter; 21] = [
    Counter::SentValues,
    Counter::SentHeartbeats,
    Counter::Delivered,
    Counter::RequestsAccepted,
    Counter::RequestsDropped,
    Counter::RequestsOversize,
    Counter::NotLeaderReplies,
    Counter::Malformed,
    Counter::Foreign,
    Counter::NetFaults,
    Counter::Timeouts,
    Counter::StaleEpoch,
    Counter::DuplicateCopies,
    Counter::LateCopies,
    Counter::LateTicks,
    Counter::ConfigApplied,
    Counter::ConfigRejected,
    Counter::Ignored,
    Counter::RepliesDropped,
    Counter::HostDropped,
    Counter::Unauthorized,
];

/// The configuration registers' values, as `csr` holds them (issue 17 item 5: one port, one
/// definition, from `csr` through `nc_core` to `nc_engine`; in Verilog one vector, the fields
/// in this order from bit 0, 32 bits each). `auth_mode` and `auth_key` are exported like every
/// configuration register and acted on by nothing (the card holds no keys and tags nothing;
/// rtl/README "Who is heard").
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct Cfg {
    pub node_id: Bits<32>,
    pub node_count: Bits<32>,
    pub cluster_id: Bits<32>,
    pub trees: Bits<32>,
    pub loop_period: Bits<32>,
    pub timeout: Bits<32>,
    pub delta: Bits<32>,
    pub drift: Bits<32>,
    pub fifo_depth: Bits<32>,
    pub batch_max: Bits<32>,
    pub mtu: Bits<32>,
    pub decide_port: Bits<32>,
    pub client_port: Bits<32>,
    pub host_port: Bits<32>,
    pub late_tick_slack: Bits<32>,
    pub min_gap: Bits<32>,
    pub tree_group0: Bits<32>,
    pub tree_group1: Bits<32>,
    pub tree_group2: Bits<32>,
    pub tree_group3: Bits<32>,
    pub src_mac_hi: Bits<32>,
    pub src_mac_lo: Bits<32>,
    pub src_ip: Bits<32>,
    pub host_mac_hi: Bits<32>,
    pub host_mac_lo: Bits<32>,
    pub host_ip: Bits<32>,
    pub ttl: Bits<32>,
    pub auth_mode: Bits<32>,
    pub auth_key: Bits<32>,
}

block! {
    /// The register file.
    pub struct Csr() {
        pub clock: Signal<In, Clock>,
        /// Byte address.
        pub bus_addr: Signal<In, Bits<16>>,
        /// Write data.
        pub bus_wdata: Signal<In, Bits<32>>,
        /// Write strobe.
        pub bus_write: Signal<In, Bit>,
        /// Read data of `bus_addr` (combinational; reads have no side effects).
        pub bus_rdata: Signal<Out, Bits<32>>,
        /// A write to CTRL that the core can take (handled by `lowi_core`): its value has no
        /// undefined bit, and JOIN only with ENABLE. The others change nothing, as the model
        /// refuses them, and are judged here in the bus cycle (no 32-bit test in front of the
        /// core's CTRL verdict).
        pub ctrl_write: Signal<Out, Bit>,
        /// Its value (0 in the cycles without `ctrl_write`).
        pub ctrl_value: Signal<Out, Bits<32>>,
        /// A TIMEOUT write was taken in the cycle before (while Disabled, or Joining: `lowi_core`
        /// notes the latter).
        pub timeout_written: Signal<Out, Bit>,
        pub state: Signal<In, Bits<STATE_BITS>>,
        pub status: Signal<In, Bits<32>>,
        pub epoch: Signal<In, Bits<32>>,
        pub leader: Signal<In, Bits<8>>,
        pub last_instance: Signal<In, Bits<64>>,
        pub clear_counters: Signal<In, Bit>,
        pub tick_net_fault: Signal<In, Bit>,
        pub tick_timeout: Signal<In, Bit>,
        pub tick_sent_value: Signal<In, Bit>,
        pub tick_sent_hb: Signal<In, Bit>,
        pub ev_foreign: Signal<In, Bit>,
        pub ev_malformed: Signal<In, Bit>,
        /// A frame refused as not from a member (`lowi_core::class::UNAUTHORIZED`).
        pub ev_unauthorized: Signal<In, Bit>,
        pub ev_ignored: Signal<In, Bit>,
        /// Output drops (reply_gen's full queue; host_gen's busy slots), counted in the event
        /// phase.
        pub drop_reply_ok: Signal<In, Bit>,
        pub drop_reply_nl: Signal<In, Bit>,
        pub drop_host: Signal<In, Bit>,
        pub ev_stale: Signal<In, Bit>,
        pub ev_duplicate: Signal<In, Bit>,
        pub ev_net_fault: Signal<In, Bit>,
        pub ev_delivered: Signal<In, Bit>,
        pub ev_accepted: Signal<In, Bit>,
        pub ev_not_leader: Signal<In, Bit>,
        pub ev_sent_hb: Signal<In, Bit>,
        pub ev_oversize: Signal<In, Bit>,
        pub tick_dropped: Signal<In, Bits<13>>,
        pub ev_dropped: Signal<In, Bits<13>>,
        /// The configuration registers' values.
        pub cfg: Signal<Out, Cfg>,
        /// `delta + drift`: the RSBCAST window (registered: both change only while disabled, and
        /// the sum follows a write one cycle later, before an ENABLE can follow it).
        pub window: Signal<Out, Bits<32>>,
        r_window: DFF<Bits<32>>,
        r_node_id: ConfigReg = ConfigReg::new(addr::NODE_ID),
        r_node_count: ConfigReg = ConfigReg::new(addr::NODE_COUNT),
        r_cluster_id: ConfigRegAny = ConfigRegAny::new(addr::CLUSTER_ID),
        r_trees: ConfigReg = ConfigReg::new(addr::TREES),
        r_loop_period: ConfigReg = ConfigReg::new(addr::LOOP_PERIOD),
        r_timeout: ConfigReg = ConfigReg::new(addr::TIMEOUT),
        r_delta: ConfigReg = ConfigReg::new(addr::DELTA),
        r_drift: ConfigRegAny = ConfigRegAny::new(addr::DRIFT),
        r_fifo_depth: ConfigReg = ConfigReg::new(addr::FIFO_DEPTH),
        r_batch_max: ConfigReg = ConfigReg::new(addr::BATCH_MAX),
        r_mtu: ConfigReg = ConfigReg::new(addr::MTU),
        r_decide_port: ConfigReg = ConfigReg::new(addr::DECIDE_PORT),
        r_client_port: ConfigReg = ConfigReg::new(addr::CLIENT_PORT),
        r_host_port: ConfigReg = ConfigReg::new(addr::HOST_PORT),
        r_late_tick_slack: ConfigRegAny = ConfigRegAny::new(addr::LATE_TICK_SLACK),
        r_min_gap: ConfigRegAny = ConfigRegAny::new(addr::MIN_GAP),
        r_tree_group0: ConfigReg = ConfigReg::new(addr::TREE_GROUP0),
        r_tree_group1: ConfigReg = ConfigReg::new(addr::TREE_GROUP1),
        r_tree_group2: ConfigReg = ConfigReg::new(addr::TREE_GROUP2),
        r_tree_group3: ConfigReg = ConfigReg::new(addr::TREE_GROUP3),
        r_src_mac_hi: ConfigReg = ConfigReg::new(addr::SRC_MAC_HI),
        r_src_mac_lo: ConfigRegAny = ConfigRegAny::new(addr::SRC_MAC_LO),
        r_src_ip: ConfigRegAny = ConfigRegAny::new(addr::SRC_IP),
        r_host_mac_hi: ConfigReg = ConfigReg::new(addr::HOST_MAC_HI),
        r_host_mac_lo: ConfigRegAny = ConfigRegAny::new(addr::HOST_MAC_LO),
        r_host_ip: ConfigRegAny = ConfigRegAny::new(addr::HOST_IP),
        r_ttl: ConfigReg = ConfigReg::new(addr::TTL),
        /// Stored and read back only: the card does not tag packets, and soc-ctl refuses
        /// `auth_mode` != 0 for it (`Datapath::CARD`; rtl/README "Who is heard").
        r_auth_mode: ConfigReg = ConfigReg::new(addr::AUTH_MODE),
        r_auth_key: ConfigReg = ConfigReg::new(addr::AUTH_KEY),
        c_sent_values: Counter64 = Counter64::new(Counter::SentValues),
        c_sent_heartbeats: Counter64 = Counter64::new(Counter::SentHeartbeats),
        c_delivered: Counter64 = Counter64::new(Counter::Delivered),
        c_requests_accepted: Counter64 = Counter64::new(Counter::RequestsAccepted),
        c_requests_dropped: Counter64 = Counter64::new(Counter::RequestsDropped),
        c_requests_oversize: Counter64 = Counter64::new(Counter::RequestsOversize),
        c_not_leader_replies: Counter64 = Counter64::new(Counter::NotLeaderReplies),
        c_malformed: Counter64 = Counter64::new(Counter::Malformed),
        c_foreign: Counter64 = Counter64::new(Counter::Foreign),
        c_net_faults: Counter64 = Counter64::new(Counter::NetFaults),
        c_timeouts: Counter64 = Counter64::new(Counter::Timeouts),
        c_stale_epoch: Counter64 = Counter64::new(Counter::StaleEpoch),
        c_duplicate_copies: Counter64 = Counter64::new(Counter::DuplicateCopies),
        c_late_copies: Counter64 = Counter64::new(Counter::LateCopies),
        c_late_ticks: Counter64 = Counter64::new(Counter::LateTicks),
        c_config_applied: Counter64 = Counter64::new(Counter::ConfigApplied),
        c_config_rejected: Counter64 = Counter64::new(Counter::ConfigRejected),
        c_ignored: Counter64 = Counter64::new(Counter::Ignored),
        c_replies_dropped: Counter64 = Counter64::new(Counter::RepliesDropped),
        c_host_dropped: Counter64 = Counter64::new(Counter::HostDropped),
        /// Frames the parser refused as not from a member: a DECIDE whose sender is not its
        /// epoch's leader, any tagged packet (the card holds no keys; rtl/README "Who is heard").
        c_unauthorized: Counter64 = Counter64::new(Counter::Unauthorized),
        leader32: ZeroExtend<8, 32>,
        s_disabled: Constant<Bits<STATE_BITS>> = k(state::DISABLED),
        s_joining: Constant<Bits<STATE_BITS>> = k(state::JOINING),
        /// The bus write's data, registered: a write is applied (to a register, or as the CTRL
        /// event) in the cycle after the bus cycle, as the core acts on every event one cycle
        /// after it comes (rtl/README, "The event pipeline"); whether it is taken is judged in
        /// the bus cycle and registered beside it (`r_hit` in each register, `r_t_hit`,
        /// `w_ctrl`).
        w_data: DFF<Bits<32>>,
        /// A bus write to TIMEOUT inside its range, judged in the bus cycle (as `ConfigReg`
        /// judges its own, `r_hit`).
        r_t_hit: DFF<Bit>,
        t_min: Constant<Bits<32>> = k(reg(addr::TIMEOUT).min),
        t_span: Constant<Bits<32>> = k(reg(addr::TIMEOUT).max - reg(addr::TIMEOUT).min),
        /// The registered write is to CTRL with a value the core can take (decoded from the
        /// bus, beside `w_data`).
        w_ctrl: DFF<Bit>,
        /// The value of a write `w_ctrl` takes, else 0: its own register beside the core's CTRL
        /// verdict, not `w_data`, whose bits every configuration register loads (a different
        /// input, so Yosys keeps the two apart). ENABLE was `w_data`'s bit 0, placed among the
        /// configuration registers: the longest routed path of `880373a` ran from it into the
        /// core's act decision.
        w_cv: DFF<Bits<32>>,
        c_ctrl: Signal<Local, Bit>,
        t_writable: Signal<Local, Bit>,
        r_tw: DFF<Bit>,
        a_timeout: Constant<Bits<16>> = k(addr::TIMEOUT as u64),
        fixed: Signal<Local, Bits<32>>,
        a_magic: Constant<Bits<16>> = k(addr::MAGIC as u64),
        a_ctrl: Constant<Bits<16>> = k(addr::CTRL as u64),
        v_undef: Constant<Bits<32>> = k(!ctrl::ALL as u64),
        v_join: Constant<Bits<32>> = k(ctrl::JOIN as u64),
        a_status: Constant<Bits<16>> = k(addr::STATUS as u64),
        a_epoch: Constant<Bits<16>> = k(addr::EPOCH as u64),
        a_leader: Constant<Bits<16>> = k(addr::LEADER as u64),
        a_instance: Constant<Bits<16>> = k(addr::INSTANCE as u64),
        a_instance_hi: Constant<Bits<16>> = k(addr::INSTANCE as u64 + 4),
        v_magic: Constant<Bits<32>> = k(regs::MAGIC_VALUE as u64),
        v_enable: Constant<Bits<32>> = k(ctrl::ENABLE as u64),
        v_enable_join: Constant<Bits<32>> = k((ctrl::ENABLE | ctrl::JOIN) as u64),
        zero32: Constant<Bits<32>> = k(0),
        zero13: Constant<Bits<13>> = k(0),
        one13: Constant<Bits<13>> = k(1),
    }
}

impl Default for Csr {
    fn default() -> Self {
        Self::build()
    }
}

impl Logic for Csr {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self,
            clock,
            r_window,
            r_node_id,
            r_node_count,
            r_cluster_id,
            r_trees,
            r_loop_period,
            r_timeout,
            r_delta,
            r_drift,
            r_fifo_depth,
            r_batch_max,
            r_mtu,
            r_decide_port,
            r_client_port,
            r_host_port,
            r_late_tick_slack,
            r_min_gap,
            r_tree_group0,
            r_tree_group1,
            r_tree_group2,
            r_tree_group3,
            r_src_mac_hi,
            r_src_mac_lo,
            r_src_ip,
            r_host_mac_hi,
            r_host_mac_lo,
            r_host_ip,
            r_ttl,
            r_auth_mode,
            r_auth_key,
            c_sent_values,
            c_sent_heartbeats,
            c_delivered,
            c_requests_accepted,
            c_requests_dropped,
            c_requests_oversize,
            c_not_leader_replies,
            c_malformed,
            c_foreign,
            c_net_faults,
            c_timeouts,
            c_stale_epoch,
            c_duplicate_copies,
            c_late_copies,
            c_late_ticks,
            c_config_applied,
            c_config_rejected,
            c_ignored,
            c_replies_dropped,
            c_host_dropped,
            c_unauthorized
        );
        self.r_node_id.bus_addr.next = self.bus_addr.val();
        self.r_node_id.bus_wdata.next = self.w_data.q.val();
        self.r_node_id.bus_data.next = self.bus_wdata.val();
        self.r_node_id.bus_wnow.next = self.bus_write.val();
        self.r_node_id.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.node_id = self.r_node_id.value.val();
        self.r_node_count.bus_addr.next = self.bus_addr.val();
        self.r_node_count.bus_wdata.next = self.w_data.q.val();
        self.r_node_count.bus_data.next = self.bus_wdata.val();
        self.r_node_count.bus_wnow.next = self.bus_write.val();
        self.r_node_count.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.node_count = self.r_node_count.value.val();
        self.r_cluster_id.bus_addr.next = self.bus_addr.val();
        self.r_cluster_id.bus_wdata.next = self.w_data.q.val();
        self.r_cluster_id.bus_wnow.next = self.bus_write.val();
        self.r_cluster_id.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.cluster_id = self.r_cluster_id.value.val();
        self.r_trees.bus_addr.next = self.bus_addr.val();
        self.r_trees.bus_wdata.next = self.w_data.q.val();
        self.r_trees.bus_data.next = self.bus_wdata.val();
        self.r_trees.bus_wnow.next = self.bus_write.val();
        self.r_trees.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.trees = self.r_trees.value.val();
        self.r_loop_period.bus_addr.next = self.bus_addr.val();
        self.r_loop_period.bus_wdata.next = self.w_data.q.val();
        self.r_loop_period.bus_data.next = self.bus_wdata.val();
        self.r_loop_period.bus_wnow.next = self.bus_write.val();
        self.r_loop_period.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.loop_period = self.r_loop_period.value.val();
        self.r_timeout.bus_addr.next = self.bus_addr.val();
        self.r_timeout.bus_wdata.next = self.w_data.q.val();
        self.r_timeout.bus_data.next = self.bus_wdata.val();
        self.r_timeout.bus_wnow.next = self.bus_write.val();
        // TIMEOUT also while Joining (the members' timeout from the state transfer), unless the
        // tick's NET-FAULT ends the join in this cycle.
        self.t_writable.next = (self.state.val() == self.s_disabled.val())
            || ((self.state.val() == self.s_joining.val()) && !self.tick_net_fault.val());
        self.r_timeout.writable.next = self.t_writable.val();
        // The same test as the register's (address, writable, range), registered for the core
        // (no path from the core's tick back into it).
        self.r_tw.clock.next = self.clock.val();
        self.r_tw.d.next = self.r_t_hit.q.val() && self.t_writable.val();
        self.timeout_written.next = self.r_tw.q.val();
        self.cfg.next.timeout = self.r_timeout.value.val();
        self.r_delta.bus_addr.next = self.bus_addr.val();
        self.r_delta.bus_wdata.next = self.w_data.q.val();
        self.r_delta.bus_data.next = self.bus_wdata.val();
        self.r_delta.bus_wnow.next = self.bus_write.val();
        self.r_delta.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.delta = self.r_delta.value.val();
        self.r_drift.bus_addr.next = self.bus_addr.val();
        self.r_drift.bus_wdata.next = self.w_data.q.val();
        self.r_drift.bus_wnow.next = self.bus_write.val();
        self.r_drift.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.drift = self.r_drift.value.val();
        self.r_fifo_depth.bus_addr.next = self.bus_addr.val();
        self.r_fifo_depth.bus_wdata.next = self.w_data.q.val();
        self.r_fifo_depth.bus_data.next = self.bus_wdata.val();
        self.r_fifo_depth.bus_wnow.next = self.bus_write.val();
        self.r_fifo_depth.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.fifo_depth = self.r_fifo_depth.value.val();
        self.r_batch_max.bus_addr.next = self.bus_addr.val();
        self.r_batch_max.bus_wdata.next = self.w_data.q.val();
        self.r_batch_max.bus_data.next = self.bus_wdata.val();
        self.r_batch_max.bus_wnow.next = self.bus_write.val();
        self.r_batch_max.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.batch_max = self.r_batch_max.value.val();
        self.r_mtu.bus_addr.next = self.bus_addr.val();
        self.r_mtu.bus_wdata.next = self.w_data.q.val();
        self.r_mtu.bus_data.next = self.bus_wdata.val();
        self.r_mtu.bus_wnow.next = self.bus_write.val();
        self.r_mtu.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.mtu = self.r_mtu.value.val();
        self.r_decide_port.bus_addr.next = self.bus_addr.val();
        self.r_decide_port.bus_wdata.next = self.w_data.q.val();
        self.r_decide_port.bus_data.next = self.bus_wdata.val();
        self.r_decide_port.bus_wnow.next = self.bus_write.val();
        self.r_decide_port.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.decide_port = self.r_decide_port.value.val();
        self.r_client_port.bus_addr.next = self.bus_addr.val();
        self.r_client_port.bus_wdata.next = self.w_data.q.val();
        self.r_client_port.bus_data.next = self.bus_wdata.val();
        self.r_client_port.bus_wnow.next = self.bus_write.val();
        self.r_client_port.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.client_port = self.r_client_port.value.val();
        self.r_host_port.bus_addr.next = self.bus_addr.val();
        self.r_host_port.bus_wdata.next = self.w_data.q.val();
        self.r_host_port.bus_data.next = self.bus_wdata.val();
        self.r_host_port.bus_wnow.next = self.bus_write.val();
        self.r_host_port.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.host_port = self.r_host_port.value.val();
        self.r_late_tick_slack.bus_addr.next = self.bus_addr.val();
        self.r_late_tick_slack.bus_wdata.next = self.w_data.q.val();
        self.r_late_tick_slack.bus_wnow.next = self.bus_write.val();
        self.r_late_tick_slack.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.late_tick_slack = self.r_late_tick_slack.value.val();
        self.r_min_gap.bus_addr.next = self.bus_addr.val();
        self.r_min_gap.bus_wdata.next = self.w_data.q.val();
        self.r_min_gap.bus_wnow.next = self.bus_write.val();
        self.r_min_gap.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.min_gap = self.r_min_gap.value.val();
        self.r_tree_group0.bus_addr.next = self.bus_addr.val();
        self.r_tree_group0.bus_wdata.next = self.w_data.q.val();
        self.r_tree_group0.bus_data.next = self.bus_wdata.val();
        self.r_tree_group0.bus_wnow.next = self.bus_write.val();
        self.r_tree_group0.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.tree_group0 = self.r_tree_group0.value.val();
        self.r_tree_group1.bus_addr.next = self.bus_addr.val();
        self.r_tree_group1.bus_wdata.next = self.w_data.q.val();
        self.r_tree_group1.bus_data.next = self.bus_wdata.val();
        self.r_tree_group1.bus_wnow.next = self.bus_write.val();
        self.r_tree_group1.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.tree_group1 = self.r_tree_group1.value.val();
        self.r_tree_group2.bus_addr.next = self.bus_addr.val();
        self.r_tree_group2.bus_wdata.next = self.w_data.q.val();
        self.r_tree_group2.bus_data.next = self.bus_wdata.val();
        self.r_tree_group2.bus_wnow.next = self.bus_write.val();
        self.r_tree_group2.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.tree_group2 = self.r_tree_group2.value.val();
        self.r_tree_group3.bus_addr.next = self.bus_addr.val();
        self.r_tree_group3.bus_wdata.next = self.w_data.q.val();
        self.r_tree_group3.bus_data.next = self.bus_wdata.val();
        self.r_tree_group3.bus_wnow.next = self.bus_write.val();
        self.r_tree_group3.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.tree_group3 = self.r_tree_group3.value.val();
        self.r_src_mac_hi.bus_addr.next = self.bus_addr.val();
        self.r_src_mac_hi.bus_wdata.next = self.w_data.q.val();
        self.r_src_mac_hi.bus_data.next = self.bus_wdata.val();
        self.r_src_mac_hi.bus_wnow.next = self.bus_write.val();
        self.r_src_mac_hi.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.src_mac_hi = self.r_src_mac_hi.value.val();
        self.r_src_mac_lo.bus_addr.next = self.bus_addr.val();
        self.r_src_mac_lo.bus_wdata.next = self.w_data.q.val();
        self.r_src_mac_lo.bus_wnow.next = self.bus_write.val();
        self.r_src_mac_lo.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.src_mac_lo = self.r_src_mac_lo.value.val();
        self.r_src_ip.bus_addr.next = self.bus_addr.val();
        self.r_src_ip.bus_wdata.next = self.w_data.q.val();
        self.r_src_ip.bus_wnow.next = self.bus_write.val();
        self.r_src_ip.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.src_ip = self.r_src_ip.value.val();
        self.r_host_mac_hi.bus_addr.next = self.bus_addr.val();
        self.r_host_mac_hi.bus_wdata.next = self.w_data.q.val();
        self.r_host_mac_hi.bus_data.next = self.bus_wdata.val();
        self.r_host_mac_hi.bus_wnow.next = self.bus_write.val();
        self.r_host_mac_hi.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.host_mac_hi = self.r_host_mac_hi.value.val();
        self.r_host_mac_lo.bus_addr.next = self.bus_addr.val();
        self.r_host_mac_lo.bus_wdata.next = self.w_data.q.val();
        self.r_host_mac_lo.bus_wnow.next = self.bus_write.val();
        self.r_host_mac_lo.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.host_mac_lo = self.r_host_mac_lo.value.val();
        self.r_host_ip.bus_addr.next = self.bus_addr.val();
        self.r_host_ip.bus_wdata.next = self.w_data.q.val();
        self.r_host_ip.bus_wnow.next = self.bus_write.val();
        self.r_host_ip.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.host_ip = self.r_host_ip.value.val();
        self.r_ttl.bus_addr.next = self.bus_addr.val();
        self.r_ttl.bus_wdata.next = self.w_data.q.val();
        self.r_ttl.bus_data.next = self.bus_wdata.val();
        self.r_ttl.bus_wnow.next = self.bus_write.val();
        self.r_ttl.writable.next = self.state.val() == self.s_disabled.val();
        self.cfg.next.ttl = self.r_ttl.value.val();
        self.cfg.next.auth_mode = self.r_auth_mode.value.val();
        self.cfg.next.auth_key = self.r_auth_key.value.val();
        self.r_auth_mode.bus_addr.next = self.bus_addr.val();
        self.r_auth_mode.bus_wdata.next = self.w_data.q.val();
        self.r_auth_mode.bus_data.next = self.bus_wdata.val();
        self.r_auth_mode.bus_wnow.next = self.bus_write.val();
        self.r_auth_mode.writable.next = self.state.val() == self.s_disabled.val();
        self.r_auth_key.bus_addr.next = self.bus_addr.val();
        self.r_auth_key.bus_wdata.next = self.w_data.q.val();
        self.r_auth_key.bus_data.next = self.bus_wdata.val();
        self.r_auth_key.bus_wnow.next = self.bus_write.val();
        self.r_auth_key.writable.next = self.state.val() == self.s_disabled.val();
        self.r_window.d.next = self.r_delta.value.val() + self.r_drift.value.val();
        self.window.next = self.r_window.q.val();
        self.c_sent_values.bus_addr.next = self.bus_addr.val();
        self.c_sent_values.clear.next = self.clear_counters.val();
        self.c_sent_values.tick.next = self.tick_sent_value.val();
        self.c_sent_values.tick_n.next = self.zero13.val();
        self.c_sent_values.ev.next = false;
        self.c_sent_values.ev_n.next = self.zero13.val();
        self.c_sent_heartbeats.bus_addr.next = self.bus_addr.val();
        self.c_sent_heartbeats.clear.next = self.clear_counters.val();
        self.c_sent_heartbeats.tick.next = self.tick_sent_hb.val();
        self.c_sent_heartbeats.tick_n.next = self.zero13.val();
        self.c_sent_heartbeats.ev.next = self.ev_sent_hb.val();
        self.c_sent_heartbeats.ev_n.next = self.zero13.val();
        self.c_delivered.bus_addr.next = self.bus_addr.val();
        self.c_delivered.clear.next = self.clear_counters.val();
        self.c_delivered.tick.next = self.tick_sent_value.val();
        self.c_delivered.tick_n.next = self.zero13.val();
        self.c_delivered.ev.next = self.ev_delivered.val();
        self.c_delivered.ev_n.next = self.zero13.val();
        self.c_requests_accepted.bus_addr.next = self.bus_addr.val();
        self.c_requests_accepted.clear.next = self.clear_counters.val();
        self.c_requests_accepted.tick.next = false;
        self.c_requests_accepted.tick_n.next = self.zero13.val();
        self.c_requests_accepted.ev.next = self.ev_accepted.val();
        self.c_requests_accepted.ev_n.next = self.zero13.val();
        self.c_requests_dropped.bus_addr.next = self.bus_addr.val();
        self.c_requests_dropped.clear.next = self.clear_counters.val();
        self.c_requests_dropped.tick.next = false;
        self.c_requests_dropped.tick_n.next = self.tick_dropped.val();
        self.c_requests_dropped.ev.next = false;
        self.c_requests_dropped.ev_n.next = self.ev_dropped.val();
        self.c_requests_oversize.bus_addr.next = self.bus_addr.val();
        self.c_requests_oversize.clear.next = self.clear_counters.val();
        self.c_requests_oversize.tick.next = false;
        self.c_requests_oversize.tick_n.next = self.zero13.val();
        self.c_requests_oversize.ev.next = self.ev_oversize.val();
        self.c_requests_oversize.ev_n.next = self.zero13.val();
        self.c_not_leader_replies.bus_addr.next = self.bus_addr.val();
        self.c_not_leader_replies.clear.next = self.clear_counters.val();
        self.c_not_leader_replies.tick.next = false;
        self.c_not_leader_replies.tick_n.next = self.zero13.val();
        self.c_not_leader_replies.ev.next = self.ev_not_leader.val();
        self.c_not_leader_replies.ev_n.next = self.zero13.val();
        self.c_malformed.bus_addr.next = self.bus_addr.val();
        self.c_malformed.clear.next = self.clear_counters.val();
        self.c_malformed.tick.next = false;
        self.c_malformed.tick_n.next = self.zero13.val();
        self.c_malformed.ev.next = self.ev_malformed.val();
        self.c_malformed.ev_n.next = self.zero13.val();
        self.c_foreign.bus_addr.next = self.bus_addr.val();
        self.c_foreign.clear.next = self.clear_counters.val();
        self.c_foreign.tick.next = false;
        self.c_foreign.tick_n.next = self.zero13.val();
        self.c_foreign.ev.next = self.ev_foreign.val();
        self.c_foreign.ev_n.next = self.zero13.val();
        self.c_net_faults.bus_addr.next = self.bus_addr.val();
        self.c_net_faults.clear.next = self.clear_counters.val();
        self.c_net_faults.tick.next = self.tick_net_fault.val();
        self.c_net_faults.tick_n.next = self.zero13.val();
        self.c_net_faults.ev.next = self.ev_net_fault.val();
        self.c_net_faults.ev_n.next = self.zero13.val();
        self.c_timeouts.bus_addr.next = self.bus_addr.val();
        self.c_timeouts.clear.next = self.clear_counters.val();
        self.c_timeouts.tick.next = self.tick_timeout.val();
        self.c_timeouts.tick_n.next = self.zero13.val();
        self.c_timeouts.ev.next = false;
        self.c_timeouts.ev_n.next = self.zero13.val();
        self.c_stale_epoch.bus_addr.next = self.bus_addr.val();
        self.c_stale_epoch.clear.next = self.clear_counters.val();
        self.c_stale_epoch.tick.next = false;
        self.c_stale_epoch.tick_n.next = self.zero13.val();
        self.c_stale_epoch.ev.next = self.ev_stale.val();
        self.c_stale_epoch.ev_n.next = self.zero13.val();
        self.c_duplicate_copies.bus_addr.next = self.bus_addr.val();
        self.c_duplicate_copies.clear.next = self.clear_counters.val();
        self.c_duplicate_copies.tick.next = false;
        self.c_duplicate_copies.tick_n.next = self.zero13.val();
        self.c_duplicate_copies.ev.next = self.ev_duplicate.val();
        self.c_duplicate_copies.ev_n.next = self.zero13.val();
        self.c_late_copies.bus_addr.next = self.bus_addr.val();
        self.c_late_copies.clear.next = self.clear_counters.val();
        self.c_late_copies.tick.next = false;
        self.c_late_copies.tick_n.next = self.zero13.val();
        self.c_late_copies.ev.next = false;
        self.c_late_copies.ev_n.next = self.zero13.val();
        self.c_late_ticks.bus_addr.next = self.bus_addr.val();
        self.c_late_ticks.clear.next = self.clear_counters.val();
        self.c_late_ticks.tick.next = false;
        self.c_late_ticks.tick_n.next = self.zero13.val();
        self.c_late_ticks.ev.next = false;
        self.c_late_ticks.ev_n.next = self.zero13.val();
        self.c_config_applied.bus_addr.next = self.bus_addr.val();
        self.c_config_applied.clear.next = self.clear_counters.val();
        self.c_config_applied.tick.next = false;
        self.c_config_applied.tick_n.next = self.zero13.val();
        self.c_config_applied.ev.next = false;
        self.c_config_applied.ev_n.next = self.zero13.val();
        self.c_config_rejected.bus_addr.next = self.bus_addr.val();
        self.c_config_rejected.clear.next = self.clear_counters.val();
        self.c_config_rejected.tick.next = false;
        self.c_config_rejected.tick_n.next = self.zero13.val();
        self.c_config_rejected.ev.next = false;
        self.c_config_rejected.ev_n.next = self.zero13.val();
        self.c_ignored.bus_addr.next = self.bus_addr.val();
        self.c_ignored.clear.next = self.clear_counters.val();
        self.c_ignored.tick.next = false;
        self.c_ignored.tick_n.next = self.zero13.val();
        self.c_ignored.ev.next = self.ev_ignored.val();
        self.c_ignored.ev_n.next = self.zero13.val();
        self.c_replies_dropped.bus_addr.next = self.bus_addr.val();
        self.c_replies_dropped.clear.next = self.clear_counters.val();
        self.c_replies_dropped.tick.next = false;
        self.c_replies_dropped.tick_n.next = self.zero13.val();
        self.c_replies_dropped.ev.next = self.drop_reply_ok.val();
        if self.drop_reply_nl.val() {
            self.c_replies_dropped.ev_n.next = self.one13.val();
        } else {
            self.c_replies_dropped.ev_n.next = self.zero13.val();
        }
        self.c_host_dropped.bus_addr.next = self.bus_addr.val();
        self.c_host_dropped.clear.next = self.clear_counters.val();
        self.c_host_dropped.tick.next = false;
        self.c_host_dropped.tick_n.next = self.zero13.val();
        self.c_host_dropped.ev.next = self.drop_host.val();
        self.c_host_dropped.ev_n.next = self.zero13.val();
        self.c_unauthorized.bus_addr.next = self.bus_addr.val();
        self.c_unauthorized.clear.next = self.clear_counters.val();
        self.c_unauthorized.tick.next = false;
        self.c_unauthorized.tick_n.next = self.zero13.val();
        self.c_unauthorized.ev.next = self.ev_unauthorized.val();
        self.c_unauthorized.ev_n.next = self.zero13.val();
        self.w_data.clock.next = self.clock.val();
        self.w_ctrl.clock.next = self.clock.val();
        self.w_data.d.next = self.bus_wdata.val();
        self.r_t_hit.clock.next = self.clock.val();
        self.r_t_hit.d.next = self.bus_write.val()
            && (self.bus_addr.val() == self.a_timeout.val())
            && ((self.bus_wdata.val() - self.t_min.val()) <= self.t_span.val());
        self.c_ctrl.next = self.bus_write.val()
            && (self.bus_addr.val() == self.a_ctrl.val())
            && !(self.bus_wdata.val() & self.v_undef.val()).any()
            && (!(self.bus_wdata.val() & self.v_join.val()).any()
                || (self.bus_wdata.val() & self.v_enable.val()).any());
        self.w_ctrl.d.next = self.c_ctrl.val();
        self.w_cv.clock.next = self.clock.val();
        self.w_cv.d.next = self.zero32.val();
        if self.c_ctrl.val() {
            self.w_cv.d.next = self.bus_wdata.val();
        }
        self.ctrl_write.next = self.w_ctrl.q.val();
        self.ctrl_value.next = self.w_cv.q.val();
        self.leader32.narrow.next = self.leader.val();
        self.fixed.next = self.zero32.val();
        if self.bus_addr.val() == self.a_magic.val() {
            self.fixed.next = self.v_magic.val();
        } else if self.bus_addr.val() == self.a_ctrl.val() {
            if self.state.val() == self.s_joining.val() {
                self.fixed.next = self.v_enable_join.val();
            } else if self.state.val() != self.s_disabled.val() {
                self.fixed.next = self.v_enable.val();
            }
        } else if self.bus_addr.val() == self.a_status.val() {
            self.fixed.next = self.status.val();
        } else if self.bus_addr.val() == self.a_epoch.val() {
            self.fixed.next = self.epoch.val();
        } else if self.bus_addr.val() == self.a_leader.val() {
            self.fixed.next = self.leader32.wide.val();
        } else if self.bus_addr.val() == self.a_instance.val() {
            self.fixed.next = self.last_instance.val().get_bits::<32>(0);
        } else if self.bus_addr.val() == self.a_instance_hi.val() {
            self.fixed.next = self.last_instance.val().get_bits::<32>(32);
        }
        self.bus_rdata.next = self.fixed.val()
            | self.r_node_id.rdata.val()
            | self.r_node_count.rdata.val()
            | self.r_cluster_id.rdata.val()
            | self.r_trees.rdata.val()
            | self.r_loop_period.rdata.val()
            | self.r_timeout.rdata.val()
            | self.r_delta.rdata.val()
            | self.r_drift.rdata.val()
            | self.r_fifo_depth.rdata.val()
            | self.r_batch_max.rdata.val()
            | self.r_mtu.rdata.val()
            | self.r_decide_port.rdata.val()
            | self.r_client_port.rdata.val()
            | self.r_host_port.rdata.val()
            | self.r_late_tick_slack.rdata.val()
            | self.r_min_gap.rdata.val()
            | self.r_tree_group0.rdata.val()
            | self.r_tree_group1.rdata.val()
            | self.r_tree_group2.rdata.val()
            | self.r_tree_group3.rdata.val()
            | self.r_src_mac_hi.rdata.val()
            | self.r_src_mac_lo.rdata.val()
            | self.r_src_ip.rdata.val()
            | self.r_host_mac_hi.rdata.val()
            | self.r_host_mac_lo.rdata.val()
            | self.r_host_ip.rdata.val()
            | self.r_ttl.rdata.val()
            | self.r_auth_mode.rdata.val()
            | self.r_auth_key.rdata.val()
            | self.c_sent_values.rdata.val()
            | self.c_sent_heartbeats.rdata.val()
            | self.c_delivered.rdata.val()
            | self.c_requests_accepted.rdata.val()
            | self.c_requests_dropped.rdata.val()
            | self.c_requests_oversize.rdata.val()
            | self.c_not_leader_replies.rdata.val()
            | self.c_malformed.rdata.val()
            | self.c_foreign.rdata.val()
            | self.c_net_faults.rdata.val()
            | self.c_timeouts.rdata.val()
            | self.c_stale_epoch.rdata.val()
            | self.c_duplicate_copies.rdata.val()
            | self.c_late_copies.rdata.val()
            | self.c_late_ticks.rdata.val()
            | self.c_config_applied.rdata.val()
            | self.c_config_rejected.rdata.val()
            | self.c_ignored.rdata.val()
            | self.c_replies_dropped.rdata.val()
            | self.c_host_dropped.rdata.val()
            | self.c_unauthorized.rdata.val();
    }
}
