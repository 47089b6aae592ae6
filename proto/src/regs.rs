//! The register map: one table for the RTL's CSR block, soc-ctl and the software engine.
//!
//! The bus is 32 bits wide with byte addresses. 64-bit registers take two
//! words: the low half at `addr`, the high half at `addr + 4` (read high, low,
//! high again to get a consistent value while counters run).
//!
//! Times are in *time units*: clock cycles in the RTL, nanoseconds in the
//! software engine. Configuration registers can only be written while
//! `CTRL.ENABLE` is 0; a running cluster changes its timeout through a CONFIG
//! consensus instance instead (only increases, as §5.2 says).
//!
//! [`REGISTERS`] is the table; [`addr`] names the addresses; [`Config`] is the
//! typed configuration with [`Config::validate`], which refuses illegal
//! combinations with an error naming the field and the legal range.

use core::fmt;

/// Largest cluster (leader ids are 0..n, the leader counter wraps modulo n).
pub const MAX_NODES: u32 = 64;
/// Largest number of redundant multicast trees |G|.
pub const MAX_TREES: u32 = 4;
/// Most DECIDE messages the software receiver (proto's model, the engine, the simulator)
/// tracks at once while their copies arrive. It is a property of the datapath, not of the
/// protocol or the wire: [`Config::validate_for`] takes the datapath's capacity, and
/// [`Config::validate`] checks against this one.
pub const MAX_IN_FLIGHT: u32 = 1024;
/// Messages in flight the RTL receiver tracks (`rtl::rsbcast_rx::IN_FLIGHT`: its first-copy
/// times in a RAM of as many words): as many as the software receiver, so a configuration's
/// in-flight rule is the same on a card and in software. It was 4 (a shift queue of registers)
/// before 2026-11-27.
pub const IN_FLIGHT_RTL: u32 = MAX_IN_FLIGHT;
/// Most requests the RTL leader puts in one DECIDE (`rtl::pkt_gen::SLOTS`, its frame slots):
/// with a larger `batch_max` it decides batches of at most this many. It was 4 before
/// 2026-12-06, then 6.
pub const BATCH_RTL: u32 = 8;
/// Largest request payload the RTL takes (bytes; `rtl::lowi_core::ENGINE_MAX_PAYLOAD`):
/// longer ones count as oversize.
pub const PAYLOAD_RTL: u32 = 128;

/// What a datapath can do, for [`Config::validate_for`]: configurations are checked against the
/// datapath that will run them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datapath {
    /// Messages in flight its receiver tracks.
    pub in_flight: u32,
    /// It tags and checks packets ([`crate::auth`]); `auth_mode` ≠ 0 needs it.
    pub tags: bool,
    /// `Some((entries, payload))`: its leader builds DECIDEs of at most `entries` requests of
    /// at most `payload` bytes each and does not cut a batch at the MTU, so the MTU must hold
    /// such a DECIDE whole. `None`: it cuts batches at the MTU as the model does.
    pub fixed_batch: Option<(u32, u32)>,
}

impl Datapath {
    /// proto's model: the software engine and the simulator.
    pub const SOFTWARE: Datapath = Datapath {
        in_flight: MAX_IN_FLIGHT,
        tags: true,
        fixed_batch: None,
    };
    /// The RTL core (rtl/README): 1,024 messages in flight, no packet tags (the card refuses
    /// `auth_mode` ≠ 0; rtl/README says why), batches of at most 8 requests of at most 128
    /// bytes, not cut at the MTU.
    pub const CARD: Datapath = Datapath {
        in_flight: IN_FLIGHT_RTL,
        tags: false,
        fixed_batch: Some((BATCH_RTL, PAYLOAD_RTL)),
    };
}
/// Largest egress FIFO depth (requests).
pub const MAX_FIFO_DEPTH: u32 = 4096;
/// Largest number of requests in one DECIDE.
pub const MAX_BATCH: u32 = 255;
const _: () = assert!(MAX_TREES == 4);
/// Value of the read-only `MAGIC` register: "NC", 0, wire version.
pub const MAGIC_VALUE: u32 = 0x4E43_0000 | crate::wire::VERSION as u32;

/// Who may write a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Configuration: read/write, only while `CTRL.ENABLE` = 0.
    Config,
    /// Control: read/write at any time (`CTRL`).
    Control,
    /// Read only (status, counters).
    ReadOnly,
}

/// One register of the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Register {
    /// Name used by soc-ctl and in error messages (lower case).
    pub name: &'static str,
    /// Byte address on the CSR bus.
    pub addr: u16,
    /// 32 or 64.
    pub width: u8,
    /// Who may write it.
    pub access: Access,
    /// Value after reset.
    pub reset: u64,
    /// Smallest legal value.
    pub min: u64,
    /// Largest legal value.
    pub max: u64,
    /// One line for `soc-ctl regs dump` and the README table.
    pub doc: &'static str,
}

/// Register addresses.
pub mod addr {
    #![allow(missing_docs)]
    pub const MAGIC: u16 = 0x000;
    pub const CTRL: u16 = 0x004;
    pub const STATUS: u16 = 0x008;
    pub const NODE_ID: u16 = 0x010;
    pub const NODE_COUNT: u16 = 0x014;
    pub const CLUSTER_ID: u16 = 0x018;
    pub const TREES: u16 = 0x01C;
    pub const LOOP_PERIOD: u16 = 0x020;
    pub const TIMEOUT: u16 = 0x024;
    pub const DELTA: u16 = 0x028;
    pub const DRIFT: u16 = 0x02C;
    pub const FIFO_DEPTH: u16 = 0x030;
    pub const BATCH_MAX: u16 = 0x034;
    pub const MTU: u16 = 0x038;
    pub const DECIDE_PORT: u16 = 0x03C;
    pub const CLIENT_PORT: u16 = 0x040;
    pub const HOST_PORT: u16 = 0x044;
    pub const LATE_TICK_SLACK: u16 = 0x048;
    pub const MIN_GAP: u16 = 0x04C;
    pub const TREE_GROUP0: u16 = 0x050;
    pub const TREE_GROUP1: u16 = 0x054;
    pub const TREE_GROUP2: u16 = 0x058;
    pub const TREE_GROUP3: u16 = 0x05C;
    pub const SRC_MAC_HI: u16 = 0x060;
    pub const SRC_MAC_LO: u16 = 0x064;
    pub const SRC_IP: u16 = 0x068;
    pub const HOST_MAC_HI: u16 = 0x06C;
    pub const HOST_MAC_LO: u16 = 0x070;
    pub const HOST_IP: u16 = 0x074;
    pub const TTL: u16 = 0x078;
    pub const AUTH_MODE: u16 = 0x07C;
    pub const AUTH_KEY: u16 = 0x090;
    pub const EPOCH: u16 = 0x080;
    pub const LEADER: u16 = 0x084;
    pub const INSTANCE: u16 = 0x088;
    /// First counter; counter `i` (see [`super::Counter`]) is at `COUNTERS + 8 * i`.
    pub const COUNTERS: u16 = 0x100;
}

/// `CTRL` bits.
pub mod ctrl {
    /// 1: the engine runs (armed for START, or joining when `JOIN` is also set). 0: stopped; config writable.
    pub const ENABLE: u32 = 1 << 0;
    /// With `ENABLE`: enter as a joining node (follow live decisions, no START needed).
    pub const JOIN: u32 = 1 << 1;
    /// Write 1 (strobe): the designated leader sends START (initial synchronisation).
    pub const START: u32 = 1 << 2;
    /// Write 1 (strobe): a joining node whose state transfer is done becomes active.
    pub const ACTIVATE: u32 = 1 << 3;
    /// Write 1 (strobe): zero all counters.
    pub const CLEAR_COUNTERS: u32 = 1 << 4;
    /// Every defined bit.
    pub const ALL: u32 = ENABLE | JOIN | START | ACTIVATE | CLEAR_COUNTERS;
}

/// `STATUS` bits.
pub mod status {
    /// This node is the leader (it loops and sends).
    pub const LEADER: u32 = 1 << 0;
    /// Joining: following live decisions, state transfer not yet done.
    pub const JOINING: u32 = 1 << 1;
    /// Active member of the running cluster.
    pub const ACTIVE: u32 = 1 << 2;
    /// Safe exit after a network fault: decides nothing until re-enabled.
    pub const NET_FAULT: u32 = 1 << 3;
    /// Enabled, waiting for START.
    pub const ARMED: u32 = 1 << 4;
    /// Sticky: a synchrony violation was observed (late tick, late copy, stale epoch).
    pub const SYNC_VIOLATION: u32 = 1 << 5;
    /// Joining node has locked onto the live message stream.
    pub const SYNCED: u32 = 1 << 6;
}

macro_rules! counters {
    ($($(#[doc = $d:literal])* $v:ident = $name:literal,)*) => {
        /// The 64-bit counters, in register order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum Counter { $($(#[doc = $d])* $v,)* }
        impl Counter {
            /// Every counter in register order.
            pub const ALL: &'static [Counter] = &[$(Counter::$v,)*];
            /// Register name.
            pub fn name(self) -> &'static str { match self { $(Counter::$v => $name,)* } }
            /// One-line description.
            pub fn doc(self) -> &'static str { match self { $(Counter::$v => concat!($($d),*).trim_ascii(),)* } }
            /// Byte address.
            pub fn addr(self) -> u16 { addr::COUNTERS + 8 * self as u16 }
        }
    };
}

counters! {
    /// DECIDE messages with a value (batch or config) sent by this node as leader.
    SentValues = "sent_values",
    /// Heartbeats (and START) sent by this node as leader.
    SentHeartbeats = "sent_heartbeats",
    /// Decisions handed to the host.
    Delivered = "delivered",
    /// Client requests queued in the egress FIFO.
    RequestsAccepted = "requests_accepted",
    /// Client requests dropped because the FIFO was full (rate limiting).
    RequestsDropped = "requests_dropped",
    /// Client requests dropped because they cannot fit in one DECIDE at this MTU.
    RequestsOversize = "requests_oversize",
    /// NOT_LEADER replies sent.
    NotLeaderReplies = "not_leader_replies",
    /// Packets of ours that broke the format (dropped).
    Malformed = "malformed",
    /// Packets of another cluster, version or protocol (dropped).
    Foreign = "foreign",
    /// NET-FAULTs raised (safe exits).
    NetFaults = "net_faults",
    /// Timeouts: leader counter advanced.
    Timeouts = "timeouts",
    /// DECIDE copies from an older epoch (a leader we already timed out on: synchrony violation).
    StaleEpoch = "stale_epoch",
    /// Second copy of one message on one tree (dropped).
    DuplicateCopies = "duplicate_copies",
    /// Copies that arrived after the RSBCAST window (synchrony violation).
    LateCopies = "late_copies",
    /// Loop ticks later than the loop period by more than LATE_TICK_SLACK (synchrony violation).
    LateTicks = "late_ticks",
    /// CONFIG register changes applied.
    ConfigApplied = "config_applied",
    /// CONFIG register changes refused (illegal value or a decrease).
    ConfigRejected = "config_rejected",
    /// Packets ignored in the current state (e.g. a DECIDE while armed, a copy on an unknown tree).
    Ignored = "ignored",
    /// Client replies (OK, NOT_LEADER) the datapath could not send: a full reply queue, a failed
    /// send or an unknown client address. The request itself was handled; only its answer is missing.
    RepliesDropped = "replies_dropped",
    /// Decisions whose host copy the datapath could not send (a full host queue or a failed send).
    HostDropped = "host_dropped",
    /// Packets refused as not from a member (dropped): a wrong tag, a key id not held, an
    /// untagged packet while tags are required (`auth_mode` 2), a DECIDE whose sender is not the
    /// leader of its epoch, a RECOVER from an id outside the cluster, or — when the driver knows
    /// the source address — a tree packet from an address that is no member's, or whose sender
    /// id is not the member at that address; also packets this node could not tag (its send key
    /// is not in its ring).
    Unauthorized = "unauthorized",
}

const fn cfg(
    name: &'static str,
    addr: u16,
    reset: u64,
    min: u64,
    max: u64,
    doc: &'static str,
) -> Register {
    Register {
        name,
        addr,
        width: 32,
        access: Access::Config,
        reset,
        min,
        max,
        doc,
    }
}

const fn ro(name: &'static str, addr: u16, width: u8, reset: u64, doc: &'static str) -> Register {
    Register {
        name,
        addr,
        width,
        access: Access::ReadOnly,
        reset,
        min: 0,
        max: if width == 64 {
            u64::MAX
        } else {
            u32::MAX as u64
        },
        doc,
    }
}

const U32: u64 = u32::MAX as u64;
const GROUP_MIN: u64 = 0xE000_0000;
const GROUP_MAX: u64 = 0xEFFF_FFFF;

/// Every register except the counters (those follow [`Counter::ALL`] from [`addr::COUNTERS`]).
pub const REGISTERS: &[Register] = &[
    ro(
        "magic",
        addr::MAGIC,
        32,
        MAGIC_VALUE as u64,
        "\"NC\", 0, wire version",
    ),
    Register {
        name: "ctrl",
        addr: addr::CTRL,
        width: 32,
        access: Access::Control,
        reset: 0,
        min: 0,
        max: ctrl::ALL as u64,
        doc: "bit0 ENABLE, bit1 JOIN, bit2 START (strobe), bit3 ACTIVATE (strobe), bit4 CLEAR_COUNTERS (strobe)",
    },
    ro(
        "status",
        addr::STATUS,
        32,
        0,
        "bit0 LEADER, bit1 JOINING, bit2 ACTIVE, bit3 NET_FAULT, bit4 ARMED, bit5 SYNC_VIOLATION, bit6 SYNCED",
    ),
    cfg(
        "node_id",
        addr::NODE_ID,
        0,
        0,
        MAX_NODES as u64 - 1,
        "this node's id; must be < node_count",
    ),
    cfg(
        "node_count",
        addr::NODE_COUNT,
        3,
        1,
        MAX_NODES as u64,
        "n: number of nodes; leader = epoch mod n",
    ),
    cfg(
        "cluster_id",
        addr::CLUSTER_ID,
        1,
        0,
        U32,
        "packets of other clusters are foreign",
    ),
    cfg(
        "trees",
        addr::TREES,
        2,
        1,
        MAX_TREES as u64,
        "|G|: redundant multicast trees; DELIVER needs a copy from each",
    ),
    cfg(
        "loop_period",
        addr::LOOP_PERIOD,
        125,
        1,
        U32,
        "time between two leader sends (the loop / heartbeat register)",
    ),
    cfg(
        "timeout",
        addr::TIMEOUT,
        375,
        1,
        U32,
        "follower timeout; must exceed max(2*delta, loop_period + delta) + drift",
    ),
    cfg(
        "delta",
        addr::DELTA,
        125,
        1,
        U32,
        "Δ_I: bound on one-way interaction latency between two nodes",
    ),
    cfg(
        "drift",
        addr::DRIFT,
        2,
        0,
        U32,
        "Δ_D: bound on clock drift between two nodes; RSBCAST window = delta + drift",
    ),
    cfg(
        "fifo_depth",
        addr::FIFO_DEPTH,
        64,
        1,
        MAX_FIFO_DEPTH as u64,
        "egress FIFO capacity in requests; more are dropped and counted",
    ),
    cfg(
        "batch_max",
        addr::BATCH_MAX,
        16,
        1,
        MAX_BATCH as u64,
        "most requests in one DECIDE (also bounded by the MTU)",
    ),
    cfg(
        "mtu",
        addr::MTU,
        1500,
        576,
        9000,
        "IP MTU of the trees; a DECIDE never exceeds it",
    ),
    cfg(
        "decide_port",
        addr::DECIDE_PORT,
        7400,
        1,
        65535,
        "UDP port of DECIDE traffic on the trees",
    ),
    cfg(
        "client_port",
        addr::CLIENT_PORT,
        7401,
        1,
        65535,
        "UDP port clients send requests to",
    ),
    cfg(
        "host_port",
        addr::HOST_PORT,
        7402,
        1,
        65535,
        "UDP port of the DECIDE copies handed to the host",
    ),
    cfg(
        "late_tick_slack",
        addr::LATE_TICK_SLACK,
        0,
        0,
        U32,
        "a send later than loop_period + this is counted as a late tick",
    ),
    cfg(
        "min_gap",
        addr::MIN_GAP,
        0,
        0,
        U32,
        "early sends: a leader with requests queued sends once this has passed since its last send, without waiting for the loop; 0 = off (every send on the loop); must be <= loop_period",
    ),
    cfg(
        "tree_group0",
        addr::TREE_GROUP0,
        0xEF4E_4301,
        GROUP_MIN,
        GROUP_MAX,
        "IPv4 multicast group of tree 0 (224.0.0.0/4)",
    ),
    cfg(
        "tree_group1",
        addr::TREE_GROUP1,
        0xEF4E_4302,
        GROUP_MIN,
        GROUP_MAX,
        "IPv4 multicast group of tree 1",
    ),
    cfg(
        "tree_group2",
        addr::TREE_GROUP2,
        0xEF4E_4303,
        GROUP_MIN,
        GROUP_MAX,
        "IPv4 multicast group of tree 2",
    ),
    cfg(
        "tree_group3",
        addr::TREE_GROUP3,
        0xEF4E_4304,
        GROUP_MIN,
        GROUP_MAX,
        "IPv4 multicast group of tree 3",
    ),
    cfg(
        "src_mac_hi",
        addr::SRC_MAC_HI,
        0x024E,
        0,
        0xFFFF,
        "this node's MAC address, first two bytes (a unicast address: bit 8 clear)",
    ),
    cfg(
        "src_mac_lo",
        addr::SRC_MAC_LO,
        0x4300_0001,
        0,
        U32,
        "this node's MAC address, last four bytes",
    ),
    cfg(
        "src_ip",
        addr::SRC_IP,
        0x0A4E_4301,
        0,
        U32,
        "this node's IPv4 address: source of every frame the FPGA datapath sends",
    ),
    cfg(
        "host_mac_hi",
        addr::HOST_MAC_HI,
        0x024E,
        0,
        0xFFFF,
        "the host's MAC address (host-path copies), first two bytes (unicast: bit 8 clear)",
    ),
    cfg(
        "host_mac_lo",
        addr::HOST_MAC_LO,
        0x4300_00FE,
        0,
        U32,
        "the host's MAC address, last four bytes",
    ),
    cfg(
        "host_ip",
        addr::HOST_IP,
        0x0A4E_43FE,
        0,
        U32,
        "the host's IPv4 address: destination of the host-path copies",
    ),
    cfg(
        "ttl",
        addr::TTL,
        16,
        1,
        255,
        "IPv4 TTL of every frame the datapath sends: tree copies, host-path copies, replies",
    ),
    cfg(
        "auth_mode",
        addr::AUTH_MODE,
        0,
        0,
        2,
        "packet tags (SipHash-2-4, proto::auth): 0 off (send untagged), 1 on (send tagged, still accept untagged: for turning tags on), 2 required (untagged refused); tagged packets are always checked",
    ),
    cfg(
        "auth_key",
        addr::AUTH_KEY,
        0,
        0,
        255,
        "id of the key this node tags with (its key ring holds it); 0 = none; must be >= 1 when auth_mode != 0; a CONFIG instance changes it (key rotation)",
    ),
    ro(
        "epoch",
        addr::EPOCH,
        32,
        0,
        "leader counter (advances at every timeout)",
    ),
    ro(
        "leader",
        addr::LEADER,
        32,
        0,
        "current leader id = epoch mod node_count",
    ),
    ro("instance", addr::INSTANCE, 64, 0, "last decided instance"),
];

/// Look a register (or counter) up by its name.
pub fn by_name(name: &str) -> Option<Register> {
    REGISTERS
        .iter()
        .copied()
        .chain(Counter::ALL.iter().map(|c| counter_register(*c)))
        .find(|r| r.name == name)
}

/// Look a register (or counter) up by the address of its first word.
pub fn by_addr(a: u16) -> Option<Register> {
    REGISTERS
        .iter()
        .copied()
        .chain(Counter::ALL.iter().map(|c| counter_register(*c)))
        .find(|r| r.addr == a)
}

/// The register-table row of a counter.
pub fn counter_register(c: Counter) -> Register {
    ro(c.name(), c.addr(), 64, 0, c.doc())
}

/// Which register a 32-bit word address falls in, and whether it is the high half.
pub fn word(a: u16) -> Option<(Register, bool)> {
    if !a.is_multiple_of(4) {
        return None;
    }
    if let Some(r) = by_addr(a) {
        return Some((r, false));
    }
    match by_addr(a.wrapping_sub(4)) {
        Some(r) if r.width == 64 => Some((r, true)),
        _ => None,
    }
}

/// A refused register access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegError {
    /// No register at this address (or not 4-byte aligned).
    UnknownAddress(u16),
    /// No register of this name.
    UnknownName,
    /// The register is read-only.
    ReadOnly(&'static str),
    /// A configuration register written while the engine is enabled.
    WhileEnabled(&'static str),
    /// The value is outside the register's legal range.
    OutOfRange {
        /// Register name.
        field: &'static str,
        /// Value given.
        value: u64,
        /// Smallest legal value.
        min: u64,
        /// Largest legal value.
        max: u64,
    },
    /// The value is in range, but together with the other registers it is illegal.
    Config(ConfigError),
    /// A control action not possible in the current state (e.g. START on a follower).
    Control(&'static str),
}

impl fmt::Display for RegError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegError::UnknownAddress(a) => write!(f, "no register at address {a:#05x}"),
            RegError::UnknownName => write!(f, "no register of that name"),
            RegError::ReadOnly(n) => write!(f, "{n} is read-only"),
            RegError::WhileEnabled(n) => write!(
                f,
                "{n} can only be written while ctrl.ENABLE=0 (a running cluster raises its timeout through a CONFIG instance)"
            ),
            RegError::OutOfRange {
                field,
                value,
                min,
                max,
            } => {
                write!(
                    f,
                    "{field}={value} is out of range: legal values are {min}..={max}"
                )
            }
            RegError::Config(e) => e.fmt(f),
            RegError::Control(why) => write!(f, "ctrl: {why}"),
        }
    }
}

/// Check that `value` is within `reg`'s legal range (not the cross-field rules).
pub fn check_range(reg: &Register, value: u64) -> Result<(), RegError> {
    if value < reg.min || value > reg.max {
        return Err(RegError::OutOfRange {
            field: reg.name,
            value,
            min: reg.min,
            max: reg.max,
        });
    }
    Ok(())
}

/// The typed configuration of one node (the values of the `Config` registers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// This node's id, `0..node_count`.
    pub node_id: u8,
    /// n.
    pub node_count: u8,
    /// Cluster id carried in every packet.
    pub cluster_id: u32,
    /// |G|.
    pub trees: u8,
    /// Time between leader sends.
    pub loop_period: u32,
    /// Follower timeout.
    pub timeout: u32,
    /// Δ_I.
    pub delta: u32,
    /// Δ_D.
    pub drift: u32,
    /// Egress FIFO capacity.
    pub fifo_depth: u16,
    /// Most requests per DECIDE.
    pub batch_max: u8,
    /// IP MTU.
    pub mtu: u16,
    /// UDP port of tree traffic.
    pub decide_port: u16,
    /// UDP port for client requests.
    pub client_port: u16,
    /// UDP port of host copies.
    pub host_port: u16,
    /// Allowed lateness of a leader send before it counts as a late tick.
    pub late_tick_slack: u32,
    /// Smallest time between two leader sends when requests are queued (early sends);
    /// 0 = off: every send waits for the loop. See [`Config::send_gap`].
    pub min_gap: u32,
    /// Multicast group per tree (IPv4, host order). (A literal 4 = MAX_TREES: rustc 1.95
    /// ICEs on struct-update syntax when this length is a const expression.)
    pub tree_groups: [u32; 4],
    /// This node's MAC address (48 bits; registers `src_mac_hi`, `src_mac_lo`).
    pub src_mac: u64,
    /// This node's IPv4 address (host order).
    pub src_ip: u32,
    /// The host's MAC address (48 bits; `host_mac_hi`, `host_mac_lo`).
    pub host_mac: u64,
    /// The host's IPv4 address (host order).
    pub host_ip: u32,
    /// IPv4 TTL of the frames the datapath sends.
    pub ttl: u8,
    /// Packet tags: 0 off, 1 on (untagged still accepted), 2 required.
    pub auth_mode: u8,
    /// Key id this node tags with (0 = none).
    pub auth_key: u8,
}

/// An illegal configuration: names the field, the value and what would be legal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The register name of the field to change.
    pub field: &'static str,
    /// Its current value.
    pub value: u64,
    /// Smallest legal value given the other fields.
    pub min: u64,
    /// Largest legal value given the other fields.
    pub max: u64,
    /// The rule that was broken.
    pub rule: &'static str,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={} is illegal: {} (legal here: {}..={})",
            self.field, self.value, self.rule, self.min, self.max
        )
    }
}

impl Default for Config {
    /// The reset values of the register map.
    fn default() -> Self {
        let r = |a| by_addr(a).map(|r| r.reset).unwrap_or(0);
        Config {
            node_id: r(addr::NODE_ID) as u8,
            node_count: r(addr::NODE_COUNT) as u8,
            cluster_id: r(addr::CLUSTER_ID) as u32,
            trees: r(addr::TREES) as u8,
            loop_period: r(addr::LOOP_PERIOD) as u32,
            timeout: r(addr::TIMEOUT) as u32,
            delta: r(addr::DELTA) as u32,
            drift: r(addr::DRIFT) as u32,
            fifo_depth: r(addr::FIFO_DEPTH) as u16,
            batch_max: r(addr::BATCH_MAX) as u8,
            mtu: r(addr::MTU) as u16,
            decide_port: r(addr::DECIDE_PORT) as u16,
            client_port: r(addr::CLIENT_PORT) as u16,
            host_port: r(addr::HOST_PORT) as u16,
            late_tick_slack: r(addr::LATE_TICK_SLACK) as u32,
            min_gap: r(addr::MIN_GAP) as u32,
            tree_groups: [
                r(addr::TREE_GROUP0) as u32,
                r(addr::TREE_GROUP1) as u32,
                r(addr::TREE_GROUP2) as u32,
                r(addr::TREE_GROUP3) as u32,
            ],
            src_mac: r(addr::SRC_MAC_HI) << 32 | r(addr::SRC_MAC_LO),
            src_ip: r(addr::SRC_IP) as u32,
            host_mac: r(addr::HOST_MAC_HI) << 32 | r(addr::HOST_MAC_LO),
            host_ip: r(addr::HOST_IP) as u32,
            ttl: r(addr::TTL) as u8,
            auth_mode: r(addr::AUTH_MODE) as u8,
            auth_key: r(addr::AUTH_KEY) as u8,
        }
    }
}

impl Config {
    /// The RSBCAST window: all copies of a message must arrive within this of the first (Δ_I + Δ_D).
    pub fn window(&self) -> u64 {
        self.delta as u64 + self.drift as u64
    }

    /// The smallest legal timeout for the other fields: max(2·Δ_I, loop_period + Δ_I) + Δ_D + 1.
    pub fn min_timeout(&self) -> u64 {
        let d = self.delta as u64;
        (2 * d).max(self.loop_period as u64 + d) + self.drift as u64 + 1
    }

    /// The smallest time between two leader sends: `min_gap` when early sends are on, else
    /// the loop period. It bounds how many messages can be in flight at once.
    pub fn send_gap(&self) -> u64 {
        if self.min_gap == 0 {
            self.loop_period as u64
        } else {
            self.min_gap as u64
        }
    }

    /// Largest entry payload that fits one DECIDE at this MTU.
    pub fn max_entry_payload(&self) -> usize {
        (self.mtu as usize)
            .saturating_sub(crate::frame::IPV4_LEN + crate::frame::UDP_LEN)
            .saturating_sub(
                crate::wire::HEADER_LEN
                    + crate::wire::DECIDE_HEADER_LEN
                    + crate::wire::ENTRY_HEADER_LEN,
            )
    }

    /// Largest UDP payload (a whole DECIDE) at this MTU.
    pub fn max_packet(&self) -> usize {
        (self.mtu as usize).saturating_sub(crate::frame::IPV4_LEN + crate::frame::UDP_LEN)
    }

    /// Read a config field by register address (None if `a` is not a config register).
    pub fn get(&self, a: u16) -> Option<u64> {
        Some(match a {
            addr::NODE_ID => self.node_id as u64,
            addr::NODE_COUNT => self.node_count as u64,
            addr::CLUSTER_ID => self.cluster_id as u64,
            addr::TREES => self.trees as u64,
            addr::LOOP_PERIOD => self.loop_period as u64,
            addr::TIMEOUT => self.timeout as u64,
            addr::DELTA => self.delta as u64,
            addr::DRIFT => self.drift as u64,
            addr::FIFO_DEPTH => self.fifo_depth as u64,
            addr::BATCH_MAX => self.batch_max as u64,
            addr::MTU => self.mtu as u64,
            addr::DECIDE_PORT => self.decide_port as u64,
            addr::CLIENT_PORT => self.client_port as u64,
            addr::HOST_PORT => self.host_port as u64,
            addr::LATE_TICK_SLACK => self.late_tick_slack as u64,
            addr::MIN_GAP => self.min_gap as u64,
            addr::TREE_GROUP0 => self.tree_groups[0] as u64,
            addr::TREE_GROUP1 => self.tree_groups[1] as u64,
            addr::TREE_GROUP2 => self.tree_groups[2] as u64,
            addr::TREE_GROUP3 => self.tree_groups[3] as u64,
            addr::SRC_MAC_HI => self.src_mac >> 32,
            addr::SRC_MAC_LO => self.src_mac & U32,
            addr::SRC_IP => self.src_ip as u64,
            addr::HOST_MAC_HI => self.host_mac >> 32,
            addr::HOST_MAC_LO => self.host_mac & U32,
            addr::HOST_IP => self.host_ip as u64,
            addr::TTL => self.ttl as u64,
            addr::AUTH_MODE => self.auth_mode as u64,
            addr::AUTH_KEY => self.auth_key as u64,
            _ => return None,
        })
    }

    /// Set a config field by register address after checking its range
    /// (the cross-field rules are [`Config::validate`]'s job).
    pub fn set(&mut self, a: u16, v: u64) -> Result<(), RegError> {
        let reg = by_addr(a).ok_or(RegError::UnknownAddress(a))?;
        if reg.access != Access::Config {
            return Err(RegError::ReadOnly(reg.name));
        }
        check_range(&reg, v)?;
        match a {
            addr::NODE_ID => self.node_id = v as u8,
            addr::NODE_COUNT => self.node_count = v as u8,
            addr::CLUSTER_ID => self.cluster_id = v as u32,
            addr::TREES => self.trees = v as u8,
            addr::LOOP_PERIOD => self.loop_period = v as u32,
            addr::TIMEOUT => self.timeout = v as u32,
            addr::DELTA => self.delta = v as u32,
            addr::DRIFT => self.drift = v as u32,
            addr::FIFO_DEPTH => self.fifo_depth = v as u16,
            addr::BATCH_MAX => self.batch_max = v as u8,
            addr::MTU => self.mtu = v as u16,
            addr::DECIDE_PORT => self.decide_port = v as u16,
            addr::CLIENT_PORT => self.client_port = v as u16,
            addr::HOST_PORT => self.host_port = v as u16,
            addr::LATE_TICK_SLACK => self.late_tick_slack = v as u32,
            addr::MIN_GAP => self.min_gap = v as u32,
            addr::TREE_GROUP0 => self.tree_groups[0] = v as u32,
            addr::TREE_GROUP1 => self.tree_groups[1] = v as u32,
            addr::TREE_GROUP2 => self.tree_groups[2] = v as u32,
            addr::TREE_GROUP3 => self.tree_groups[3] = v as u32,
            addr::SRC_MAC_HI => self.src_mac = v << 32 | (self.src_mac & U32),
            addr::SRC_MAC_LO => self.src_mac = (self.src_mac & !U32) | v,
            addr::SRC_IP => self.src_ip = v as u32,
            addr::HOST_MAC_HI => self.host_mac = v << 32 | (self.host_mac & U32),
            addr::HOST_MAC_LO => self.host_mac = (self.host_mac & !U32) | v,
            addr::HOST_IP => self.host_ip = v as u32,
            addr::TTL => self.ttl = v as u8,
            addr::AUTH_MODE => self.auth_mode = v as u8,
            addr::AUTH_KEY => self.auth_key = v as u8,
            _ => return Err(RegError::UnknownAddress(a)),
        }
        Ok(())
    }

    /// Check every field's range and the rules between fields, for the software datapath
    /// (its receiver tracks [`MAX_IN_FLIGHT`] messages in flight).
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_for(Datapath::SOFTWARE)
    }

    /// [`Config::validate`] for the datapath `dp` (for a card: [`Datapath::CARD`]).
    pub fn validate_for(&self, dp: Datapath) -> Result<(), ConfigError> {
        let in_flight_capacity = dp.in_flight;
        for reg in REGISTERS.iter().filter(|r| r.access == Access::Config) {
            let v = self.get(reg.addr).unwrap_or(0);
            if v < reg.min || v > reg.max {
                return Err(ConfigError {
                    field: reg.name,
                    value: v,
                    min: reg.min,
                    max: reg.max,
                    rule: "out of the register's range",
                });
            }
        }
        for (field, mac) in [("src_mac_hi", self.src_mac), ("host_mac_hi", self.host_mac)] {
            if mac >> 40 & 1 == 1 {
                return Err(ConfigError {
                    field,
                    value: mac >> 32,
                    min: 0,
                    max: 0xFFFF,
                    rule: "a MAC address must be unicast: the first byte's lowest bit (bit 8 of the _hi register) must be 0",
                });
            }
        }
        if self.node_id >= self.node_count {
            return Err(ConfigError {
                field: "node_id",
                value: self.node_id as u64,
                min: 0,
                max: self.node_count as u64 - 1,
                rule: "node_id must be < node_count",
            });
        }
        let min_t = self.min_timeout();
        if min_t > U32 {
            return Err(ConfigError {
                field: "delta",
                value: self.delta as u64,
                min: 1,
                max: (U32.saturating_sub(self.drift as u64 + self.loop_period as u64 + 1))
                    .min(U32.saturating_sub(self.drift as u64 + 1) / 2),
                rule: "no 32-bit timeout can exceed max(2*delta, loop_period + delta) + drift: lower delta, loop_period or drift",
            });
        }
        if (self.timeout as u64) < min_t {
            return Err(ConfigError {
                field: "timeout",
                value: self.timeout as u64,
                min: min_t,
                max: U32,
                rule: "timeout must exceed max(2*delta, loop_period + delta) + drift (§5.2: followers must not time out on a live leader)",
            });
        }
        if self.auth_mode != 0 && !dp.tags {
            return Err(ConfigError {
                field: "auth_mode",
                value: self.auth_mode as u64,
                min: 0,
                max: 0,
                rule: "this datapath does not tag packets (a card: rtl/README, \"Packet tags\")",
            });
        }
        if self.auth_mode != 0 && self.auth_key == 0 {
            return Err(ConfigError {
                field: "auth_key",
                value: 0,
                min: 1,
                max: 255,
                rule: "tagged packets need a key id (auth_mode != 0)",
            });
        }
        if self.min_gap > self.loop_period {
            return Err(ConfigError {
                field: "min_gap",
                value: self.min_gap as u64,
                min: 0,
                max: self.loop_period as u64,
                rule: "an early send cannot wait longer than the loop (0 = early sends off)",
            });
        }
        // Messages whose copies are still arriving: at most window / send_gap + 1.
        let cap = in_flight_capacity.max(2) as u64;
        let min_gap = self.window().div_ceil(cap - 1).max(1);
        if self.send_gap() < min_gap {
            let rule = "too many messages in flight: (delta + drift) / send gap must be < the datapath's in-flight capacity - 1 (1024 in software and on a card)";
            return Err(if self.min_gap == 0 {
                ConfigError {
                    field: "loop_period",
                    value: self.loop_period as u64,
                    min: min_gap,
                    max: U32,
                    rule,
                }
            } else {
                ConfigError {
                    field: "min_gap",
                    value: self.min_gap as u64,
                    min: min_gap,
                    max: self.loop_period as u64,
                    rule,
                }
            });
        }
        let decide = (crate::frame::IPV4_LEN
            + crate::frame::UDP_LEN
            + crate::wire::HEADER_LEN
            + crate::wire::DECIDE_HEADER_LEN) as u64;
        // A DECIDE with one request of one byte must fit; on a datapath whose leader does not
        // cut a batch at the MTU, its largest DECIDE (with the room the model keeps for a tag).
        let one = decide + crate::wire::ENTRY_HEADER_LEN as u64 + 1;
        let (min_mtu, rule) = match dp.fixed_batch {
            Some((entries, payload)) => (
                (decide
                    + crate::wire::TAG_LEN as u64
                    + (self.batch_max as u64).min(entries as u64)
                        * (crate::wire::ENTRY_HEADER_LEN as u64 + payload as u64))
                    .max(one),
                "this datapath's leader does not cut a batch at the MTU: a DECIDE of min(batch_max, 8) requests of 128 bytes must fit (a card: rtl/README; or lower batch_max)",
            ),
            None => (one, "a DECIDE with one request must fit"),
        };
        if (self.mtu as u64) < min_mtu {
            return Err(ConfigError {
                field: "mtu",
                value: self.mtu as u64,
                min: min_mtu,
                max: 9000,
                rule,
            });
        }
        for t in 1..self.trees as usize {
            for u in 0..t {
                if self.tree_groups[t] == self.tree_groups[u] {
                    return Err(ConfigError {
                        field: ["tree_group0", "tree_group1", "tree_group2", "tree_group3"][t],
                        value: self.tree_groups[t] as u64,
                        min: GROUP_MIN,
                        max: GROUP_MAX,
                        rule: "each tree needs its own multicast group",
                    });
                }
            }
        }
        let ports = [
            ("decide_port", self.decide_port),
            ("client_port", self.client_port),
            ("host_port", self.host_port),
        ];
        for i in 1..ports.len() {
            for j in 0..i {
                if ports[i].1 == ports[j].1 {
                    return Err(ConfigError {
                        field: ports[i].0,
                        value: ports[i].1 as u64,
                        min: 1,
                        max: 65535,
                        rule: "decide_port, client_port and host_port must differ",
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_unique_aligned_and_reset_values_legal() {
        let all: [Register; REGISTERS.len()] = core::array::from_fn(|i| REGISTERS[i]);
        for (i, r) in all.iter().enumerate() {
            assert_eq!(r.addr % 4, 0, "{}", r.name);
            assert!(
                r.reset >= r.min && r.reset <= r.max,
                "{} reset out of range",
                r.name
            );
            for s in &all[..i] {
                assert_ne!(r.addr, s.addr, "{} and {}", r.name, s.name);
                assert_ne!(r.name, s.name);
            }
        }
        for c in Counter::ALL {
            let r = counter_register(*c);
            assert!(r.addr >= addr::COUNTERS && !all.iter().any(|s| s.addr == r.addr));
            assert!(!r.doc.is_empty());
            assert_eq!(by_name(c.name()).unwrap().addr, c.addr());
        }
        Config::default().validate().unwrap();
    }

    #[test]
    fn words_of_64_bit_registers() {
        assert_eq!(
            word(addr::INSTANCE).unwrap(),
            (by_name("instance").unwrap(), false)
        );
        assert_eq!(
            word(addr::INSTANCE + 4).unwrap(),
            (by_name("instance").unwrap(), true)
        );
        assert_eq!(word(addr::LEADER + 4), None.or(word(addr::INSTANCE)));
        assert_eq!(word(0x3), None);
        assert_eq!(word(0xFFC), None);
    }

    #[test]
    fn illegal_combinations_name_the_field() {
        let c = Config {
            node_id: 3,
            ..Config::default()
        };
        assert_eq!(c.validate().unwrap_err().field, "node_id");
        let mut c = Config::default();
        c.timeout = 2 * c.delta + c.drift;
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "timeout");
        assert_eq!(e.min, c.min_timeout());
        let c = Config {
            trees: 0,
            ..Config::default()
        };
        assert_eq!(c.validate().unwrap_err().field, "trees");
        let mut c = Config::default();
        c.tree_groups[1] = c.tree_groups[0];
        assert_eq!(c.validate().unwrap_err().field, "tree_group1");
        let c = Config {
            loop_period: 1,
            timeout: 1000,
            ..Config::default()
        };
        // 127 / 1 messages in flight: fine for the software receiver and a card alike, not
        // for a datapath that tracks 4 (the RTL's before 2026-11-27).
        let four = Datapath {
            in_flight: 4,
            ..Datapath::CARD
        };
        assert!(c.validate().is_ok());
        assert!(c.validate_for(Datapath::CARD).is_ok());
        let e = c.validate_for(four).unwrap_err();
        assert_eq!((e.field, e.min), ("loop_period", 43));
        // A window of 2^20 at a send gap of 1: beyond 1,024 in flight, refused on both with the
        // same bound.
        let wide = Config {
            loop_period: 1,
            delta: 1 << 20,
            timeout: 3 << 20,
            ..Config::default()
        };
        let (sw, card) = (
            wide.validate().unwrap_err(),
            wide.validate_for(Datapath::CARD).unwrap_err(),
        );
        assert_eq!((sw.field, sw.min), (card.field, card.min));
        assert_eq!(sw.field, "loop_period");
        // Early sends: the in-flight rule follows the smallest gap, and a gap beyond the loop
        // is refused.
        let mut c = Config {
            min_gap: 10,
            ..Config::default()
        };
        assert!(c.validate().is_ok());
        assert!(c.validate_for(Datapath::CARD).is_ok());
        let e = c.validate_for(four).unwrap_err();
        assert_eq!((e.field, e.min, e.max), ("min_gap", 43, 125));
        c.min_gap = c.loop_period + 1;
        let e = c.validate().unwrap_err();
        assert_eq!((e.field, e.max), ("min_gap", 125));
        // A card's leader does not cut a batch at the MTU: 8 requests of 128 bytes must fit
        // (28 + 36 + 8 + 8 × 144 = 1224 bytes); fewer with a smaller batch_max. The model cuts.
        let mut c = Config {
            mtu: 1223,
            ..Config::default()
        };
        assert!(c.validate().is_ok());
        let e = c.validate_for(Datapath::CARD).unwrap_err();
        assert_eq!((e.field, e.value, e.min), ("mtu", 1223, 1224));
        // The message names the card's limits (change its text with them).
        assert_eq!((BATCH_RTL, PAYLOAD_RTL), (8, 128));
        assert!(
            e.rule.contains("min(batch_max, 8) requests of 128 bytes"),
            "{}",
            e.rule
        );
        c.mtu = 1224;
        assert!(c.validate_for(Datapath::CARD).is_ok());
        c.mtu = 576;
        c.batch_max = 3;
        assert!(
            c.validate_for(Datapath::CARD).is_ok(),
            "28 + 44 + 3 × 144 = 504"
        );
        c.batch_max = 4;
        assert_eq!(c.validate_for(Datapath::CARD).unwrap_err().min, 648);
        c.batch_max = 5;
        assert_eq!(c.validate_for(Datapath::CARD).unwrap_err().min, 792);
        c.batch_max = 7;
        assert_eq!(c.validate_for(Datapath::CARD).unwrap_err().min, 1080);
        assert_eq!(Config::default().send_gap(), 125);
        let mut c = Config::default();
        assert_eq!(
            c.set(addr::TREES, 5),
            Err(RegError::OutOfRange {
                field: "trees",
                value: 5,
                min: 1,
                max: 4
            })
        );
        assert_eq!(c.set(addr::EPOCH, 1), Err(RegError::ReadOnly("epoch")));
    }
}
