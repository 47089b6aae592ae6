//! nc-engine: one node's software datapath (proto's LOWI model over real UDP sockets).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use soc_ctl::cluster::{ClusterFile, Transport};
use soc_ctl::engine::{self, EngineOpts, TimerMode};

/// One Nano-consensus node in software: the paper's SoC path (③b) over UDP multicast
/// (or 127.0.0.0/8 unicast fan-out). Configure and start it with `soc-ctl`.
#[derive(Parser)]
#[command(
    version,
    after_help = "\
Typical use (3 nodes on loopback):
  soc-ctl gen-config --nodes 3 > cluster.toml
  nc-engine --config cluster.toml --node 0 &   (and --node 1, --node 2)
  soc-ctl --node I init --config cluster.toml   (on every node)
  soc-ctl --node 0 start"
)]
struct Args {
    /// The cluster file (nodes, trees, ports, timing).
    #[arg(long, short)]
    config: PathBuf,
    /// This node's id.
    #[arg(long, short)]
    node: u64,
    /// Control socket for soc-ctl (created 0600) [default: $TMPDIR/nc-engine-<node>.sock].
    #[arg(long, env = "NC_CTL")]
    ctl: Option<PathBuf>,
    /// How the engine thread waits for its next deadline.
    #[arg(long, value_enum, default_value_t = TimerMode::Timerfd)]
    timer: TimerMode,
    /// Override the file's transport. Without root a multicast cluster runs as loopback.
    #[arg(long, value_enum)]
    transport: Option<TransportArg>,
    /// Real-time priority (SCHED_FIFO 1..=99) for the engine thread, with memory locked:
    /// [default: 50 as root with --timer timerfd, off otherwise; 0 = off].
    #[arg(long)]
    realtime: Option<u8>,
    /// Log state changes, leader changes and synchrony violations to stderr.
    #[arg(long, short)]
    verbose: bool,
    /// Keep the paper's permanent safe exit: no automatic rejoin after a NET-FAULT and no
    /// recovery when every follower faulted (also no leader lease and no START guard).
    #[arg(long)]
    no_recovery: bool,
    /// Fault injection for tests: as leader, send the tree-0 copy of this node's N-th value
    /// message, then SIGKILL itself before the other trees' copies leave.
    #[arg(long, value_name = "N", hide = true)]
    crash_after_first_copy: Option<u64>,
    /// Instances the decision log keeps (the newest; what `soc-ctl log` shows and what a
    /// joining node receives as its snapshot). Bounds the engine's memory: about 1.3 kB per
    /// instance with full batches of 64-byte requests.
    #[arg(long, value_name = "N", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    log_keep: u64,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum TransportArg {
    Multicast,
    Loopback,
}

fn main() -> ExitCode {
    let a = Args::parse();
    let mut file = match ClusterFile::load(&a.config) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("nc-engine: {}: {e}", a.config.display());
            return ExitCode::from(2);
        }
    };
    let root = nix::unistd::geteuid().is_root();
    let want = match a.transport {
        Some(TransportArg::Loopback) => Transport::Loopback,
        Some(TransportArg::Multicast) => Transport::Multicast,
        None if !root && file.transport == Transport::Multicast => {
            eprintln!(
                "nc-engine: not root: running the multicast cluster on loopback (127.0.0.0/8 unicast fan-out)"
            );
            Transport::Loopback
        }
        None => file.transport,
    };
    if want == Transport::Loopback {
        file = file.as_loopback();
    } else if file.transport != Transport::Multicast {
        eprintln!(
            "nc-engine: --transport multicast needs a file with transport = \"multicast\" (interfaces per tree)"
        );
        return ExitCode::from(2);
    }
    let setup = match file.node(a.node) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("nc-engine: {e}");
            return ExitCode::from(2);
        }
    };
    let ctl_path = a.ctl.unwrap_or_else(|| soc_ctl::default_ctl_path(a.node));
    let realtime = match (a.realtime, a.timer) {
        (Some(0), _) => None,
        (Some(p), _) => Some(p.min(99)),
        (None, TimerMode::Timerfd) if root => Some(50),
        (None, _) => None,
    };
    if realtime.is_some() && a.timer == TimerMode::Busy {
        eprintln!(
            "nc-engine: warning: a busy-polling SCHED_FIFO thread owns its core (the kernel's RT throttling leaves 5%)"
        );
    }
    eprintln!(
        "nc-engine: node {} of {}, {} transport, {} trees, timer {:?}, realtime {:?}, control socket {}",
        a.node,
        file.nodes.len(),
        want,
        file.trees.len(),
        a.timer,
        realtime,
        ctl_path.display()
    );
    let r = engine::run(EngineOpts {
        realtime,
        setup,
        timer: a.timer,
        ctl_path,
        verbose: a.verbose,
        recovery: !a.no_recovery,
        crash_after_first_copy: a.crash_after_first_copy,
        log_keep: a.log_keep as usize,
    });
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nc-engine: {e}");
            ExitCode::FAILURE
        }
    }
}
