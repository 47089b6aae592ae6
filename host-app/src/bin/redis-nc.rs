//! redis-nc: one Redis-NC node — a real redis-server, the apply loop, and the RESP front.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use host_app::front::{self, Progress, Source};
use host_app::redis::{RedisApplier, RedisServer};
use soc_ctl::cluster::{ClusterFile, Transport};

/// Redis replicated by Nano-consensus: stock Redis clients connect to --listen; writes are
/// decided by the cluster and applied on every node's redis-server in the same order.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The cluster file (node client addresses, host port, cluster id).
    #[arg(long, short)]
    config: PathBuf,
    /// This node's id.
    #[arg(long, short)]
    node: u8,
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
}

fn main() -> ExitCode {
    let a = Args::parse();
    let fail = |m: String| {
        eprintln!("redis-nc: {m}");
        ExitCode::FAILURE
    };
    let file = match ClusterFile::load(&a.config) {
        Ok(f) => f,
        Err(e) => return fail(format!("{}: {e}", a.config.display())),
    };
    let file = if !nix::unistd::geteuid().is_root() && file.transport == Transport::Multicast {
        file.as_loopback()
    } else {
        file
    };
    let setup = match file.node(a.node as u64) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string()),
    };
    let cluster = file.cluster_id as u32;
    let server = match RedisServer::start(&a.dir) {
        Ok(s) => Arc::new(s),
        Err(e) => return fail(e.to_string()),
    };
    let source = match &a.pin {
        Some(pin) => match xdp_log::DecisionLog::open_at(pin, 1) {
            Ok(l) => Source::Xdp(Box::new(l)),
            Err(e) => return fail(format!("decision log at {}: {e}", pin.display())),
        },
        None => match std::net::UdpSocket::bind(setup.host_sock()) {
            Ok(s) => Source::Udp(s),
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
    // SIGINT/SIGTERM: stop our redis-server with us (it is a child process).
    {
        let server = server.clone();
        let _ = ctrlc::set_handler(move || {
            server.stop();
            std::process::exit(130);
        });
    }
    let progress = Arc::new(Progress::default());
    {
        let progress = progress.clone();
        std::thread::spawn(move || {
            front::apply_loop(
                source,
                RedisApplier::new(conn, 0),
                cluster,
                a.node,
                progress,
            )
        });
    }
    eprintln!(
        "redis-nc: node {} serving RESP on {}, redis-server in {}",
        a.node,
        a.listen,
        a.dir.display()
    );
    front::serve(
        listener,
        server,
        progress,
        cluster,
        a.node,
        file.client_addrs(),
    );
    ExitCode::SUCCESS
}
