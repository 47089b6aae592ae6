//! nc-raft: the Raft baseline node (raft-rs over UDP, same client protocol as nc-engine).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use nc_tools::raft_node::{self, RaftOpts};
use soc_ctl::cluster::ClusterFile;

/// One raft-rs node for benchmarks: peers on ports.decide + 10 at the tree-a address, clients on
/// the client port with nc-engine's REQUEST / REPLY_OK / NOT_LEADER packets.
#[derive(Parser)]
#[command(
    name = "nc-raft",
    version,
    mut_arg("verbose", |a| a.help(
        "Log raft-rs's own records (elections, role changes; debug events); -vv: its debug \
         records too (trace)"
    ))
)]
struct Args {
    /// The cluster file (the same one nc-engine uses).
    #[arg(long, short)]
    config: PathBuf,
    /// This node's id (0-based; raft id = node + 1).
    #[arg(long, short)]
    node: u64,
    /// Use the loopback addresses of a multicast file (its engines run with
    /// `nc-engine --loopback`); a loopback file needs no flag.
    #[arg(long)]
    loopback: bool,
    /// Raft tick in ms (heartbeat = 1 tick, election timeout = 10 ticks).
    #[arg(long, default_value_t = 5)]
    tick_ms: u64,
    #[command(flatten)]
    log: soc_ctl::logging::LogArgs,
}

fn main() -> ExitCode {
    let a = Args::parse();
    a.log.init();
    let file = match ClusterFile::load(&a.config) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("nc-raft: {}: {e}", a.config.display());
            return ExitCode::from(2);
        }
    };
    let file = if a.loopback { file.as_loopback() } else { file };
    let setup = match file.node(a.node) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("nc-raft: {e}");
            return ExitCode::from(2);
        }
    };
    let opts = RaftOpts {
        tick: Duration::from_millis(a.tick_ms.max(1)),
        ..RaftOpts::default()
    };
    tracing::info!(
        node = a.node,
        "nc-raft: node {} of {}, peers on {}, clients on {}, tick {:?}",
        a.node,
        setup.config.node_count,
        raft_node::peer_addr(&setup, a.node as usize),
        setup.client_sock(a.node as u8),
        opts.tick
    );
    match raft_node::run(&setup, opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nc-raft: {e}");
            ExitCode::FAILURE
        }
    }
}
