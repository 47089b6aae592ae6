//! Nano-consensus on the SoC: the control CLI's library (`soc-ctl`), the software datapath
//! (`nc-engine`: proto's reference model over real UDP sockets) and a client (`nc-client`).
//!
//! Protocol logic lives in `proto` only; this crate carries out its actions on sockets.

pub mod client;
pub mod cluster;
pub mod engine;
pub mod log;
pub mod logging;
pub mod metrics;
pub mod mmsg;
pub mod privilege;
pub mod regfile;
pub mod wait;

/// The default control socket of node `id`'s engine.
pub fn default_ctl_path(id: u64) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("nc-engine-{id}.sock"))
}
