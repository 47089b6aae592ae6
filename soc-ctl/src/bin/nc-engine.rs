//! nc-engine: one node's software datapath (proto's LOWI model over real UDP sockets).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use soc_ctl::cluster::{ClusterFile, Transport};
use soc_ctl::engine::{self, EngineOpts, TimerMode};
use soc_ctl::privilege;

/// One Nano-consensus node in software: the paper's SoC path (③b) over UDP multicast
/// (or 127.0.0.0/8 unicast fan-out). Configure and start it with `soc-ctl`.
#[derive(Parser)]
#[command(
    name = "nc-engine",
    version,
    after_help = "\
Typical use (3 nodes on loopback):
  soc-ctl gen-config --nodes 3 > cluster.toml
  nc-engine --config cluster.toml --node 0 &   (and --node 1, --node 2)
  soc-ctl --node I init --config cluster.toml   (on every node)
  soc-ctl --node 0 start",
    mut_arg("verbose", |a| a.help(
        "Log state changes, leader changes and synchrony violations to stderr (debug events; \
         -vv: trace)"
    ))
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
    /// Override the file's transport: `loopback` runs a multicast file on 127.0.0.0/8 (unicast
    /// fan-out, every node on this machine). Nothing is switched for you: without this (or
    /// --loopback) the file's `transport` is used.
    #[arg(long, value_enum)]
    transport: Option<TransportArg>,
    /// Same as `--transport loopback`.
    #[arg(long, conflicts_with = "transport")]
    loopback: bool,
    /// Real-time priority (SCHED_FIFO 1..=99) for the engine thread, with memory locked.
    /// Needs CAP_SYS_NICE (or an RLIMIT_RTPRIO of at least P) and CAP_IPC_LOCK (or an unlimited
    /// RLIMIT_MEMLOCK); root has both. Asked for without them, the engine refuses to start
    /// [default: 50 with --timer timerfd when the process holds them, else off with a note;
    /// 0 = off].
    #[arg(long)]
    realtime: Option<u8>,
    #[command(flatten)]
    log: soc_ctl::logging::LogArgs,
    /// Keep the paper's permanent safe exit: no automatic rejoin after a NET-FAULT and no
    /// recovery when every follower faulted (also no leader lease and no START guard).
    #[arg(long)]
    no_recovery: bool,
    /// Fault injection for tests: as leader, send the tree-0 copy of this node's N-th value
    /// message, then SIGKILL itself before the other trees' copies leave.
    #[arg(long, value_name = "N", hide = true)]
    crash_after_first_copy: Option<u64>,
    /// Fault injection for tests: stall the engine thread once, MS milliseconds, at POINT:
    /// `after-read:N` (as a follower, after the N-th round that read tree copies, before its
    /// timers run), `before-send:N` (as leader, after the model emitted its N-th value
    /// message, before the copies leave), `between-copies:N` (as leader, after the first
    /// tree's copies of its N-th value message left and before the other trees' do: a
    /// preemption there longer than Δ is a safe exit for every follower) or
    /// `leader-after-read:N` (as leader, after its N-th round's read of the trees, before its
    /// requests and timers).
    #[arg(long, value_name = "POINT:N:MS", hide = true, value_parser = parse_stall)]
    inject_stall: Option<(engine::StallAt, std::time::Duration)>,
    /// Instances the decision log keeps (the newest; what `soc-ctl log` shows and what a
    /// joining node receives as its snapshot). Bounds the engine's memory: about 1.3 kB per
    /// instance with full batches of 64-byte requests.
    #[arg(long, value_name = "N", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    log_keep: u64,
    /// Serve Prometheus metrics (text format 0.0.4) at http://ADDR/metrics: every register
    /// counter, role, epoch, leader, instance, state, log length and the engine's statistics.
    /// Absent: no endpoint.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<std::net::SocketAddr>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum TransportArg {
    Multicast,
    Loopback,
}

fn main() -> ExitCode {
    let a = Args::parse();
    a.log.init();
    let mut file = match ClusterFile::load(&a.config) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("nc-engine: {}: {e}", a.config.display());
            return ExitCode::from(2);
        }
    };
    let want = match (a.transport, a.loopback) {
        (Some(TransportArg::Loopback), _) | (None, true) => Transport::Loopback,
        (Some(TransportArg::Multicast), _) => Transport::Multicast,
        (None, false) => file.transport,
    };
    if want == Transport::Loopback {
        if file.transport == Transport::Multicast {
            tracing::info!(
                "nc-engine: loopback as asked: running the multicast cluster file on 127.0.0.0/8 (unicast fan-out; node i's tree addresses 127.0.1.(i+1), 127.0.2.(i+1), client 127.0.10.(i+1))"
            );
        }
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
        (Some(p), _) => {
            let p = p.min(99);
            if let Some(missing) = privilege::realtime_missing(p) {
                eprintln!("nc-engine: --realtime {p}: {missing}, or pass --realtime 0");
                return ExitCode::from(2);
            }
            Some(p)
        }
        (None, TimerMode::Timerfd) => match privilege::realtime_missing(50) {
            None => Some(50),
            Some(missing) => {
                tracing::warn!(
                    "nc-engine: note: real-time priority off ({missing}); ticks can be late under load. --realtime 0 turns it off without this note"
                );
                None
            }
        },
        (None, _) => None,
    };
    if realtime.is_some() && a.timer == TimerMode::Busy {
        tracing::warn!(
            "nc-engine: warning: a busy-polling SCHED_FIFO thread owns its core (the kernel's RT throttling leaves 5%)"
        );
    }
    tracing::info!(
        node = a.node,
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
        // -v, or RUST_LOG asking for the engine's debug events.
        verbose: tracing::enabled!(target: "soc_ctl::engine", tracing::Level::DEBUG),
        recovery: !a.no_recovery,
        crash_after_first_copy: a.crash_after_first_copy,
        inject_stall: a.inject_stall,
        log_keep: a.log_keep as usize,
        metrics: a.metrics,
    });
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nc-engine: {e}");
            if matches!(e.kind(), std::io::ErrorKind::PermissionDenied) {
                eprintln!("nc-engine: {}", privilege::SOCKET_PRIVILEGES);
            }
            ExitCode::FAILURE
        }
    }
}

/// `--inject-stall POINT:N:MS`.
fn parse_stall(v: &str) -> Result<(engine::StallAt, std::time::Duration), String> {
    let usage = || {
        format!(
            "{v:?}: expected after-read:N:MS, before-send:N:MS, between-copies:N:MS or leader-after-read:N:MS (N, MS ≥ 1)"
        )
    };
    let mut it = v.split(':');
    let (Some(point), Some(n), Some(ms), None) = (it.next(), it.next(), it.next(), it.next())
    else {
        return Err(usage());
    };
    let n: u64 = n.parse().ok().filter(|&n| n >= 1).ok_or_else(usage)?;
    let ms: u64 = ms.parse().ok().filter(|&m| m >= 1).ok_or_else(usage)?;
    let at = match point {
        "after-read" => engine::StallAt::AfterRead(n),
        "before-send" => engine::StallAt::BeforeSend(n),
        "between-copies" => engine::StallAt::BetweenCopies(n),
        "leader-after-read" => engine::StallAt::LeaderAfterRead(n),
        _ => return Err(usage()),
    };
    Ok((at, std::time::Duration::from_millis(ms)))
}
