//! redis-nc: one Redis-NC node — a real redis-server, the apply loop, and the RESP front.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use host_app::auth::REDIS_ENV;
use host_app::engine_watch::EngineWatch;
use host_app::feed::Feed;
use host_app::front::{self, Node, Reads, Source};
use host_app::redis::{RedisApplier, RedisServer};
use soc_ctl::cluster::ClusterFile;

/// Redis replicated by Nano-consensus: stock Redis clients connect to --listen; writes are
/// decided by the cluster and applied on every node's redis-server in the same order.
/// The most proposals in flight `--proposals` takes.
const MAX_PROPOSALS: usize = 64;

#[derive(Parser)]
#[command(
    name = "redis-nc",
    version,
    after_help = "Authentication: with --requirepass-file PATH (its first line) or, without it, the \
                  environment variable REDIS_NC_PASSWORD, clients must AUTH (as with Redis's \
                  requirepass; redis-cli: REDISCLI_AUTH=... redis-cli ...). The password is never \
                  taken from the command line. Give every node of a cluster the same password: \
                  a node authenticates with it at its --peer fronts."
)]
struct Args {
    /// The cluster file (node client addresses, host port, cluster id).
    #[arg(long, short)]
    config: PathBuf,
    /// This node's id.
    #[arg(long, short)]
    node: u8,
    /// Use the loopback addresses of a multicast file (its engines run with
    /// `nc-engine --loopback`); a loopback file needs no flag.
    #[arg(long)]
    loopback: bool,
    /// Folder for this node's redis-server (socket, log).
    #[arg(long)]
    dir: PathBuf,
    /// Where stock clients connect (RESP).
    #[arg(long, default_value = "127.0.0.1:6380")]
    listen: SocketAddr,
    /// Decisions from the XDP log pinned here (xdp-log attach --pin DIR); without it, from a
    /// UDP socket on the node's host address and port.
    #[arg(long)]
    pin: Option<PathBuf>,
    /// This node's engine control socket (nc-engine --ctl): lost host copies are fetched from
    /// its log, and the front says why when the engine is out. Without it (a card), every
    /// gap needs a snapshot from a peer.
    #[arg(long)]
    engine_ctl: Option<PathBuf>,
    /// Another node's Redis-NC front (repeat for each): where this node takes a snapshot when it
    /// starts behind the cluster (restart, join) or loses more than its engine's log holds.
    #[arg(long = "peer")]
    peers: Vec<SocketAddr>,
    /// Join a running cluster through node MEMBER first: configure this node's engine
    /// (--engine-ctl) from the cluster file, enable it with JOIN and wait until it is active.
    /// With --peer, the replica then catches up by itself: one command brings a node in.
    #[arg(long, value_name = "MEMBER", requires = "engine_ctl")]
    join: Option<u8>,
    /// How reads are served: `linearizable` (a read barrier through the log) or `local`
    /// (read-your-writes for each front's own clients, one round cheaper).
    #[arg(long, value_enum, default_value = "linearizable")]
    reads: Reads,
    /// Receive buffer of the UDP host socket, bytes (without --pin; 0: the system default).
    #[arg(long, default_value_t = 4 << 20)]
    host_rcvbuf: usize,
    /// Writes proposed together: at most this many proposals of this node's fronts undecided at
    /// once (each proposed by a thread of its own); writes that arrive meanwhile leave together,
    /// as one entry, in the next (no timer: a lone write goes at once). 0: every write proposed
    /// alone, at once. 0..=64.
    #[arg(
        long,
        value_name = "N",
        env = "REDIS_NC_PROPOSALS",
        default_value_t = host_app::front::DEFAULT_PROPOSALS
    )]
    proposals: usize,
    /// Require AUTH with the password on this file's first line (like Redis's requirepass; the
    /// same password is sent to the --peer fronts). Without it, the environment variable
    /// REDIS_NC_PASSWORD, if set. An unreadable or empty file stops the start (exit code 2).
    #[arg(long, value_name = "PATH")]
    requirepass_file: Option<PathBuf>,
    /// Serve Prometheus metrics (text format 0.0.4) at http://ADDR/metrics: applied instance,
    /// lag, mode, feed counters, read barriers, the nc_stage_* sums of INFO nanoconsensus and a
    /// write latency histogram. Absent: no endpoint.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    #[command(flatten)]
    log: soc_ctl::logging::LogArgs,
}

fn main() -> ExitCode {
    let a = Args::parse();
    if a.proposals > MAX_PROPOSALS {
        eprintln!(
            "redis-nc: --proposals: legal values are 0..={MAX_PROPOSALS} (a thread proposes each)"
        );
        return ExitCode::from(2);
    }
    a.log.init();
    let fail = |m: String| {
        eprintln!("redis-nc: {m}");
        ExitCode::FAILURE
    };
    let password = match host_app::auth::load(a.requirepass_file.as_deref(), REDIS_ENV) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("redis-nc: {e}");
            return ExitCode::from(2);
        }
    };
    let file = match ClusterFile::load(&a.config) {
        Ok(f) => f,
        Err(e) => {
            // A configuration error: exit code 2, like every program's.
            eprintln!("redis-nc: {e}");
            return ExitCode::from(2);
        }
    };
    let file = if a.loopback { file.as_loopback() } else { file };
    let setup = match file.node(a.node as u64) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("redis-nc: {e}");
            return ExitCode::from(2);
        }
    };
    let cluster = file.cluster_id as u32;
    if let (Some(member), Some(ctl)) = (a.join, &a.engine_ctl) {
        match host_app::engine_watch::join_cluster(ctl, &setup.config, member) {
            Ok(v) => tracing::info!(
                node = a.node,
                "redis-nc: node {}: engine joined through node {member}: {v}",
                a.node
            ),
            Err(e) => return fail(format!("joining through node {member}: {e}")),
        }
    }
    let server = match RedisServer::start(&a.dir) {
        Ok(s) => Arc::new(s),
        Err(e) => return fail(format!("{}: {e}", a.dir.display())),
    };
    let source = match &a.pin {
        Some(pin) => match xdp_log::DecisionLog::open_at(pin, 1) {
            Ok(l) => Source::Xdp(Box::new(l)),
            Err(e) => return fail(format!("decision log at {}: {e}", pin.display())),
        },
        None => match std::net::UdpSocket::bind(setup.host_sock()) {
            Ok(s) => {
                if a.host_rcvbuf > 0 {
                    let _ = nix::sys::socket::setsockopt(
                        &s,
                        nix::sys::socket::sockopt::RcvBuf,
                        &a.host_rcvbuf,
                    );
                }
                Source::Udp(s)
            }
            Err(e) => return fail(format!("host socket {}: {e}", setup.host_sock())),
        },
    };
    let conn = match server.connect() {
        Ok(c) => c,
        Err(e) => return fail(e.to_string()),
    };
    let listener = match TcpListener::bind(a.listen) {
        Ok(l) => l,
        Err(e) => return fail(format!("listen {}: {e}", a.listen)),
    };
    // SIGINT/SIGTERM: stop our redis-server with us (on SIGKILL the kernel does: PDEATHSIG).
    {
        let server = server.clone();
        let _ = ctrlc::set_handler(move || {
            server.stop();
            std::process::exit(130);
        });
    }
    let engine = a.engine_ctl.clone().map(EngineWatch::spawn);
    let node = Node::new(
        a.node,
        cluster,
        file.client_addrs(),
        a.reads,
        server,
        engine,
        password.clone(),
    );
    node.set_proposals(a.proposals, setup.config.max_entry_payload());
    // [auth]: the requests this node proposes are tagged with the cluster's key.
    match file.client_auth() {
        Ok(Some(a)) => node.set_packet_auth(a),
        Ok(None) => {}
        Err(e) => {
            eprintln!("redis-nc: {e}");
            return ExitCode::from(2);
        }
    }
    if let Some(addr) = a.metrics {
        let node = node.clone();
        match soc_ctl::metrics::serve(addr, move || Ok(node.metrics_text())) {
            Ok(bound) => tracing::info!("redis-nc: metrics on http://{bound}/metrics"),
            Err(e) => return fail(format!("metrics: bind TCP {addr}: {e}")),
        }
    }
    {
        let node = node.clone();
        let feed = Feed::new(source, cluster, a.engine_ctl.clone());
        let peers = a.peers.clone();
        // Named, so that `top -H` and /proc show which thread applies.
        let started = std::thread::Builder::new()
            .name("apply".into())
            .spawn(move || front::apply_loop(node, feed, RedisApplier::new(conn, 0), peers));
        if let Err(e) = started {
            return fail(format!("the apply loop's thread: {e}"));
        }
    }
    tracing::info!(
        node = a.node,
        "redis-nc: node {} serving RESP on {}, redis-server in {}, reads {:?}, {}",
        a.node,
        a.listen,
        a.dir.display(),
        a.reads,
        match (&password, &a.requirepass_file) {
            (None, _) => "no password (anyone who reaches the front may use it)".to_string(),
            (Some(_), Some(f)) => format!("AUTH required (password from {})", f.display()),
            (Some(_), None) => format!("AUTH required (password from {REDIS_ENV})"),
        }
    );
    front::serve(listener, node);
    ExitCode::SUCCESS
}
