//! xdp-log: the XDP program that hands Nano-consensus decisions to host applications.
//!
//! - [`loader`]: attach / detach the program (aya) and read its counters; maps are pinned under
//!   bpffs so other processes can open them.
//! - [`DecisionLog`]: read decisions in instance order from the pinned log, block or poll; a
//!   missed instance is a [`LogError::Gap`] the application must handle, never skipped.
//! - [`record`]: the layout of a log slot / ring record (shared with the kernel side through
//!   `xdp_log_common`), parsed and checked again with `proto`.
//! - [`testbed`]: network namespaces and a raw-frame sender for the tests and the benchmark.
//!
//! The kernel side is `xdp-log/ebpf`, built from source by `build.rs` and embedded here.

pub mod decision_log;
pub mod loader;
pub mod record;
pub mod testbed;

pub use decision_log::{DEFAULT_REORDER_WINDOW, DecisionLog, LogError};
pub use record::Decision;

/// The eBPF object (built by `build.rs` from `xdp-log/ebpf`).
pub static EBPF_OBJECT: &[u8] =
    aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/nc-xdp-log.bpf.o"));
