//! zk-nc: ZooKeeper replicated by Nano-consensus. `zk-nc node` runs one node (a real standalone
//! ZooKeeper plus the apply loop); `zk-nc write` submits a create / set / delete to the cluster.
//! Reads go to any node's ZooKeeper directly (zkCli.sh -server ADDR get PATH).

use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use host_app::feed::{Feed, Next, Source};
use host_app::zk::{ZkApplier, ZkOp, ZkOutcome, ZkServer};
use proto::log::Logged;
use soc_ctl::client::Client;
use soc_ctl::cluster::{ClusterFile, Transport};

#[derive(Parser)]
#[command(version, about = "ZooKeeper replicated by Nano-consensus")]
struct Args {
    /// The cluster file.
    #[arg(long, short, global = true, default_value = "cluster.toml")]
    config: PathBuf,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one node: a standalone ZooKeeper on --zk, fed by the decision log.
    Node {
        #[arg(long, short)]
        node: u8,
        /// Folder for ZooKeeper's data and logs.
        #[arg(long)]
        dir: PathBuf,
        /// Where ZooKeeper listens (clients read here).
        #[arg(long)]
        zk: SocketAddrV4,
        /// Decisions from the XDP log pinned here; without it, from a UDP socket on the host port.
        #[arg(long)]
        pin: Option<PathBuf>,
        /// This node's engine control socket (nc-engine --ctl): lost host copies are fetched
        /// from its log instead of stopping the replica.
        #[arg(long)]
        engine_ctl: Option<PathBuf>,
        /// Run the local ZooKeeper with forceSync=no (the replicated log, not the local disk,
        /// is what survives a crash here).
        #[arg(long)]
        no_fsync: bool,
    },
    /// Submit a write and wait until the cluster decided it.
    Write {
        #[command(subcommand)]
        op: WriteOp,
        /// Client id [default: from the process id].
        #[arg(long)]
        client_id: Option<u32>,
    },
}

#[derive(Subcommand)]
enum WriteOp {
    /// create PATH DATA
    Create { path: String, data: String },
    /// setData PATH DATA
    Set {
        path: String,
        data: String,
        #[arg(long)]
        version: Option<i32>,
    },
    /// delete PATH
    Delete {
        path: String,
        #[arg(long)]
        version: Option<i32>,
    },
}

fn main() -> ExitCode {
    let a = Args::parse();
    let file = match ClusterFile::load(&a.config) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("zk-nc: {}: {e}", a.config.display());
            return ExitCode::from(2);
        }
    };
    let file = if !nix::unistd::geteuid().is_root() && file.transport == Transport::Multicast {
        file.as_loopback()
    } else {
        file
    };
    let r = match a.cmd {
        Cmd::Node {
            node,
            dir,
            zk,
            pin,
            engine_ctl,
            no_fsync,
        } => run_node(&file, node, &dir, zk, pin, engine_ctl, !no_fsync),
        Cmd::Write { op, client_id } => {
            let op = match op {
                WriteOp::Create { path, data } => ZkOp::Create {
                    path,
                    data: data.into_bytes(),
                },
                WriteOp::Set {
                    path,
                    data,
                    version,
                } => ZkOp::Set {
                    path,
                    data: data.into_bytes(),
                    version,
                },
                WriteOp::Delete { path, version } => ZkOp::Delete { path, version },
            };
            // Refuse what every replica would refuse, before it costs an instance.
            match ZkOp::decode(&op.encode()) {
                Err(e) => Err(e),
                Ok(_) => {
                    let id = client_id.unwrap_or(0x7A00_0000 | (std::process::id() & 0xFF_FFFF));
                    Client::new(file.cluster_id as u32, id, file.client_addrs())
                        .map_err(|e| e.to_string())
                        .and_then(|mut c| {
                            c.request(0, &op.encode(), Duration::from_secs(10)).map_err(|e| e.to_string())
                        })
                        .map(|ok| {
                            println!(
                                "decided at instance {}; every replica applies it there (read back with zkCli.sh -server NODE get PATH)",
                                ok.instance
                            )
                        })
                }
            }
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("zk-nc: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_node(
    file: &ClusterFile,
    node: u8,
    dir: &std::path::Path,
    zk: SocketAddrV4,
    pin: Option<PathBuf>,
    engine_ctl: Option<PathBuf>,
    fsync: bool,
) -> Result<(), String> {
    let setup = file.node(node as u64).map_err(|e| e.to_string())?;
    let cluster = file.cluster_id as u32;
    let server = Arc::new(ZkServer::start_with(dir, zk, fsync).map_err(|e| e.to_string())?);
    {
        let server = server.clone();
        let _ = ctrlc::set_handler(move || {
            server.stop();
            std::process::exit(130);
        });
    }
    // A blocking reader hands decided instances, in order and with every gap repaired from
    // the engine's log, to the async applier.
    let source = match pin {
        Some(pin) => Source::Xdp(Box::new(
            xdp_log::DecisionLog::open_at(&pin, 1).map_err(|e| e.to_string())?,
        )),
        None => Source::Udp(
            std::net::UdpSocket::bind(setup.host_sock())
                .map_err(|e| format!("{}: {e}", setup.host_sock()))?,
        ),
    };
    let mut feed = Feed::new(source, cluster, engine_ctl);
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(u64, Arc<Logged>)>(4096);
    std::thread::spawn(move || {
        let mut at = 0u64;
        let mut last_report = (0u64, std::time::Instant::now());
        loop {
            match feed.next(at, Duration::from_millis(5)) {
                Next::Decision(i, l) => {
                    at = i;
                    if tx.blocking_send((i, l)).is_err() {
                        return;
                    }
                }
                Next::Idle => {}
                Next::Behind { need, engine_first } => {
                    eprintln!(
                        "zk-nc: instance {need} is lost for this node (its engine holds from \
                         {engine_first:?}) and ZooKeeper-NC has no state transfer yet: apply \
                         stopped; restart the node from an empty ZooKeeper while the engines' \
                         logs reach back to instance 1"
                    );
                    return;
                }
            }
            let st = feed.stats;
            if st.repairs > last_report.0 && last_report.1.elapsed() > Duration::from_secs(1) {
                eprintln!(
                    "zk-nc: {} gaps in the host copies, {} repairs ({} instances) from the engine's log",
                    st.gaps, st.repairs, st.repaired
                );
                last_report = (st.repairs, std::time::Instant::now());
            }
        }
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let mut applier = ZkApplier::connect(zk, 0).await.map_err(|e| e.to_string())?;
        eprintln!("zk-nc: node {node} applying decisions to ZooKeeper at {zk}");
        let mut refused = 0u64;
        while let Some(first) = rx.recv().await {
            // Everything that is already waiting goes into one pipelined batch.
            let mut packets = vec![first];
            while packets.len() < 512
                && let Ok(p) = rx.try_recv()
            {
                packets.push(p);
            }
            let refs: Vec<(u64, &Logged)> = packets
                .iter()
                .filter(|(i, _)| *i > applier.applied)
                .map(|(i, l)| (*i, &**l))
                .collect();
            for (_, _, o) in applier.apply_many(&refs).await.map_err(|e| e.to_string())? {
                if let ZkOutcome::Refused(why) = o {
                    refused += 1;
                    if refused <= 10 {
                        eprintln!(
                            "zk-nc: refused by ZooKeeper (identically on every replica): {why}"
                        );
                    }
                }
            }
        }
        Err::<(), String>("the decision reader stopped".into())
    })
}
