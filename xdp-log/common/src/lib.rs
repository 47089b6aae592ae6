//! xdp-log: the one definition of the BPF map layouts that the XDP program (kernel side,
//! `xdp-log/ebpf`) and userspace (`xdp-log`: loader and `DecisionLog`) share.
//!
//! The packet format itself is not defined here: it comes from `proto` (offsets and constants
//! of `proto::wire` and `proto::frame`). This crate only says how a decision is stored.
//!
//! Map fields written by the kernel are in host byte order (the maps never leave the machine);
//! the packet bytes copied into a slot are the packet's own (big-endian, as `proto` defines).
#![no_std]
#![warn(missing_docs)]

use proto::wire::MAX_PACKET_LEN;

/// Names of the maps in the object file, which are also their file names under the pin folder.
pub mod map_name {
    /// `BPF_MAP_TYPE_ARRAY` of [`crate::LogSlot`], [`crate::LOG_CAPACITY`] entries, mmapable:
    /// the decision log indexed by `instance % LOG_CAPACITY`.
    pub const LOG: &str = "NCXDP_LOG";
    /// `BPF_MAP_TYPE_RINGBUF` of [`crate::RING_BYTES`] bytes: each logged decision again, as a
    /// [`crate::LogSlot`] cut after `SLOT_HEADER_LEN + len` bytes, for streaming consumers.
    pub const RING: &str = "NCXDP_RING";
    /// `BPF_MAP_TYPE_PERCPU_ARRAY` of `u64`, [`crate::counter::COUNT`] entries: the counters.
    pub const STATS: &str = "NCXDP_STATS";
    /// `BPF_MAP_TYPE_ARRAY` of `u32`, [`crate::config::COUNT`] entries: written by the loader.
    pub const CONFIG: &str = "NCXDP_CONFIG";
    /// `BPF_MAP_TYPE_ARRAY` of `u64`, [`crate::state::COUNT`] entries: kernel-side state.
    pub const STATE: &str = "NCXDP_STATE";
    /// `BPF_MAP_TYPE_HASH` from [`crate::source_key`] (`u32`) to `u8` (1), at most
    /// [`crate::MAX_SOURCES`] entries: the IPv4 source addresses a DECIDE may come from, written
    /// by the loader. Consulted only when [`crate::config::FLAG_CHECK_SOURCE`] is set.
    pub const SOURCES: &str = "NCXDP_SOURCES";
    /// `BPF_MAP_TYPE_RINGBUF` of [`crate::BELL_BYTES`] bytes: the doorbell. Each logged decision
    /// puts its instance (`u64`) here after its slot is committed and the head raised, so a
    /// reader can sleep in `poll` on this map's fd instead of polling the log; the reader
    /// empties it (moves the consumer position) before it looks at the log again.
    pub const BELL: &str = "NCXDP_BELL";
    /// All maps, in the order the loader pins them.
    pub const ALL: [&str; 7] = [LOG, RING, STATS, CONFIG, STATE, SOURCES, BELL];
}

/// The XDP program's function name in the object file.
pub const PROGRAM_NAME: &str = "nc_xdp_log";

/// Slots in the decision log (a power of two; a slot holds one instance).
pub const LOG_CAPACITY: u32 = 1024;
/// Bytes of a slot's packet area: the largest packet `proto` accepts, rounded up to 8, so a
/// valid DECIDE always fits whole (nothing is ever truncated; longer packets are malformed).
pub const SLOT_DATA_LEN: usize = MAX_PACKET_LEN.div_ceil(8) * 8;
/// Bytes of a slot before its packet area.
pub const SLOT_HEADER_LEN: usize = 32;
/// Bytes of one slot (the array map's value size).
pub const SLOT_LEN: usize = SLOT_HEADER_LEN + SLOT_DATA_LEN;
/// Ring buffer size in bytes (a power-of-two multiple of the page size).
pub const RING_BYTES: u32 = 4 << 20;
/// Doorbell size in bytes (one page: 256 records of a `u64` and its 8-byte header; when it is
/// full its reader has not emptied it yet, so it is awake or about to be, and nothing is lost).
pub const BELL_BYTES: u32 = 4096;
/// Most entries of the source allow-list ([`map_name::SOURCES`]).
pub const MAX_SOURCES: u32 = 64;

/// The key of an IPv4 source address in [`map_name::SOURCES`]: its four bytes as they stand in
/// the IPv4 header (network order), read as a native-endian `u32`. The kernel builds the key
/// from the packet's bytes and the loader from `Ipv4Addr::octets`, both with this function, so
/// neither byte-swaps.
pub const fn source_key(octets: [u8; 4]) -> u32 {
    u32::from_ne_bytes(octets)
}

/// Byte offsets of the fields of a slot (and of a ring buffer record); see [`LogSlot`].
pub mod slot {
    /// `u64`: `instance + 1` once the slot is complete; 0 while empty or being rewritten.
    /// Written last by the kernel (after everything else), cleared first.
    pub const COMMIT: usize = 0;
    /// `u64`: the instance decided.
    pub const INSTANCE: usize = 8;
    /// `u32`: the leader's epoch in the DECIDE.
    pub const EPOCH: usize = 16;
    /// `u16`: bytes of the packet in the data area (common header included).
    pub const LEN: usize = 20;
    /// `u16`: number of entries in the batch.
    pub const COUNT: usize = 22;
    /// `u8`: the `DecideKind` byte (1 Batch or 3 Config: only values are logged).
    pub const KIND: usize = 24;
    /// `u8`: the sender (node id) of the DECIDE.
    pub const SENDER: usize = 25;
    /// `u8`: the tree the copy came on.
    pub const TREE: usize = 26;
    /// `u8`: reserved, 0.
    pub const RESERVED: usize = 27;
    /// `u32`: the CPU that logged it (diagnostics).
    pub const CPU: usize = 28;
    /// The packet: the whole UDP payload (`proto::wire` common header + DECIDE body).
    pub const DATA: usize = super::SLOT_HEADER_LEN;
}

/// One slot of the decision log, as the kernel writes it (layout in [`slot`]).
#[repr(C)]
pub struct LogSlot {
    /// `instance + 1` when complete; 0 when empty or being rewritten.
    pub commit: u64,
    /// The instance decided.
    pub instance: u64,
    /// The leader's epoch.
    pub epoch: u32,
    /// Bytes of `data` in use.
    pub len: u16,
    /// Entries in the batch.
    pub count: u16,
    /// `DecideKind` byte.
    pub kind: u8,
    /// Sender node id.
    pub sender: u8,
    /// Tree of the copy.
    pub tree: u8,
    /// Reserved, 0.
    pub reserved: u8,
    /// CPU that logged the slot.
    pub cpu: u32,
    /// The packet (UDP payload).
    pub data: [u8; SLOT_DATA_LEN],
}

const _: () = {
    assert!(core::mem::size_of::<LogSlot>() == SLOT_LEN);
    assert!(core::mem::offset_of!(LogSlot, commit) == slot::COMMIT);
    assert!(core::mem::offset_of!(LogSlot, instance) == slot::INSTANCE);
    assert!(core::mem::offset_of!(LogSlot, epoch) == slot::EPOCH);
    assert!(core::mem::offset_of!(LogSlot, len) == slot::LEN);
    assert!(core::mem::offset_of!(LogSlot, count) == slot::COUNT);
    assert!(core::mem::offset_of!(LogSlot, kind) == slot::KIND);
    assert!(core::mem::offset_of!(LogSlot, sender) == slot::SENDER);
    assert!(core::mem::offset_of!(LogSlot, tree) == slot::TREE);
    assert!(core::mem::offset_of!(LogSlot, reserved) == slot::RESERVED);
    assert!(core::mem::offset_of!(LogSlot, cpu) == slot::CPU);
    assert!(core::mem::offset_of!(LogSlot, data) == slot::DATA);
    assert!(SLOT_LEN.is_multiple_of(8));
    assert!(LOG_CAPACITY.is_power_of_two());
};

/// Indices of the per-CPU counters (map [`map_name::STATS`]); userspace sums the CPUs.
pub mod counter {
    /// Every frame the program ran on.
    pub const FRAMES: u32 = 0;
    /// IPv4/UDP frames to the configured port (the candidates).
    pub const SEEN: u32 = 1;
    /// Decisions (Batch or Config instances) written to the log (and offered to the ring).
    pub const LOGGED: u32 = 2;
    /// Candidates that break the format (IPv4/UDP lengths or checksums, IPv4 options or
    /// fragments, or what `proto::wire::parse` calls malformed).
    pub const MALFORMED: u32 = 3;
    /// Candidates that are not DECIDEs of this cluster (other magic, version, cluster or kind).
    pub const FOREIGN: u32 = 4;
    /// Logged instances more than one above the highest instance logged before.
    pub const GAPS: u32 = 5;
    /// Valid decisions whose instance is already in its slot (not logged again).
    pub const DUPLICATES: u32 = 6;
    /// Valid decisions older than the log window (their slot holds a later instance).
    pub const STALE: u32 = 7;
    /// Valid heartbeats and STARTs: counted, never logged (they decide no instance).
    pub const HEARTBEATS: u32 = 8;
    /// Logged decisions the ring buffer had no room for (the array log still has them).
    pub const RING_FULL: u32 = 9;
    /// Valid DECIDE frames dropped (consumed) because the consume flag is set.
    pub const CONSUMED: u32 = 10;
    /// A map lookup or packet copy that cannot fail did fail (the slot is left empty).
    pub const INTERNAL: u32 = 11;
    /// Valid DECIDEs (values, heartbeats, STARTs) not heard: their IPv4 source is not on the
    /// allow-list, or their `sender` is not the leader of their epoch (`epoch mod n`). Never
    /// logged, always dropped (members only, issue 18).
    pub const UNAUTHORIZED: u32 = 12;
    /// Number of counters.
    pub const COUNT: u32 = 13;
    /// Names, in index order (for `stats`).
    pub const NAMES: [&str; COUNT as usize] = [
        "frames",
        "seen",
        "logged",
        "malformed",
        "foreign",
        "gaps",
        "duplicates",
        "stale",
        "heartbeats",
        "ring_full",
        "consumed",
        "internal",
        "unauthorized",
    ];
}

/// Indices of the configuration words (map [`map_name::CONFIG`]), written by the loader.
pub mod config {
    /// The cluster id whose DECIDEs are logged.
    pub const CLUSTER_ID: u32 = 0;
    /// The UDP destination port of the host copies (register `host_port`, default 7402).
    pub const UDP_PORT: u32 = 1;
    /// [`FLAG_ENABLED`](super::config::FLAG_ENABLED) | [`FLAG_CONSUME`](super::config::FLAG_CONSUME)
    /// | [`FLAG_CHECK_SOURCE`](super::config::FLAG_CHECK_SOURCE).
    pub const FLAGS: u32 = 2;
    /// The cluster's node count `n` (register `node_count`, at most
    /// [`MAX_NODES`](super::config::MAX_NODES)): a DECIDE is heard only when its `sender` is
    /// `epoch mod n`. 0: no sender check.
    pub const NODES: u32 = 3;
    /// Number of words.
    pub const COUNT: u32 = 4;
    /// Set once the loader has written the configuration; until then everything passes.
    pub const FLAG_ENABLED: u32 = 1;
    /// Drop (XDP_DROP) valid DECIDE frames once counted/logged, so the host stack never sees them.
    pub const FLAG_CONSUME: u32 = 2;
    /// Hear DECIDEs only from the IPv4 sources in [`map_name::SOURCES`](crate::map_name::SOURCES).
    /// Unset (no allow-list configured): any source.
    pub const FLAG_CHECK_SOURCE: u32 = 4;
    /// Largest node count the kernel side accepts in [`NODES`] (the modulo stays on a small
    /// divisor; `proto` allows at most 64 nodes). A larger value: every DECIDE is unauthorized.
    pub const MAX_NODES: u32 = 255;
}

/// Indices of the kernel-side state words (map [`map_name::STATE`]).
pub mod state {
    /// `u64`: highest instance logged + 1 (0: nothing logged yet).
    pub const HEAD: u32 = 0;
    /// Number of words.
    pub const COUNT: u32 = 1;
}
