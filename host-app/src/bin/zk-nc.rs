//! zk-nc: ZooKeeper replicated by Nano-consensus. `zk-nc node` runs one node (a real standalone
//! ZooKeeper plus the apply loop); `zk-nc write` submits a create / set / delete to the cluster.
//! Reads go to any node's ZooKeeper directly (zkCli.sh -server ADDR get PATH).

use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use host_app::auth::{Password, ZK_ENV};
use host_app::engine_watch::EngineWatch;
use host_app::feed::{Feed, Next, Source};
use host_app::zk::{ZkApplier, ZkOp, ZkServer, ZkSnapshot};
use host_app::zk_front::{self, ReadRequest, SnapshotRequest, ZkNode};
use proto::log::Logged;
use soc_ctl::client::Client;
use soc_ctl::cluster::ClusterFile;

#[derive(Parser)]
#[command(
    name = "zk-nc",
    version,
    about = "ZooKeeper replicated by Nano-consensus",
    after_help = "Authentication: with --password-file PATH (its first line) or, without it, the \
                  environment variable ZK_NC_PASSWORD, a node's writer front (--listen) requires \
                  {\"op\":\"auth\",\"password\":P} before any other request, and `zk-nc write \
                  --front` sends it. The password is never taken from the command line. Give \
                  every node of a cluster the same password: a node authenticates with it at its \
                  --peer fronts."
)]
struct Args {
    /// The cluster file.
    #[arg(long, short, global = true, default_value = "cluster.toml")]
    config: PathBuf,
    /// The writer fronts' password, on this file's first line: `node` requires it from its
    /// writers and sends it to its --peer fronts; `write --front` sends it. Without it, the
    /// environment variable ZK_NC_PASSWORD, if set. An unreadable or empty file stops
    /// zk-nc (exit code 2).
    #[arg(long, global = true, value_name = "PATH")]
    password_file: Option<PathBuf>,
    /// Use the loopback addresses of a multicast file (its engines run with
    /// `nc-engine --loopback`); a loopback file needs no flag.
    #[arg(long, global = true)]
    loopback: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args)]
struct NodeArgs {
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
    /// Where writers submit writes and get ZooKeeper's result (`zk-nc write --front`); peers
    /// take snapshots here too.
    #[arg(long)]
    listen: Option<std::net::SocketAddr>,
    /// Another node's writer front (repeat for each): where this node takes a snapshot (a tree
    /// copy) when its engine's log no longer holds what its replica lacks (restart, join).
    #[arg(long = "peer")]
    peers: Vec<std::net::SocketAddr>,
    /// Join a running cluster through node MEMBER first: configure this node's engine
    /// (--engine-ctl) from the cluster file, enable it with JOIN and wait until it is active.
    /// With --peer, the replica then catches up by itself: one command brings a node in.
    #[arg(long, value_name = "MEMBER", requires = "engine_ctl")]
    join: Option<u8>,
    /// Run the local ZooKeeper with forceSync=no (the replicated log, not the local disk,
    /// is what survives a crash here).
    #[arg(long)]
    no_fsync: bool,
    /// Serve Prometheus metrics (text format 0.0.4) at http://ADDR/metrics: applied instance,
    /// lag, mode, feed counters, refusals and a write latency histogram. Absent: no endpoint.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<std::net::SocketAddr>,
    #[command(flatten)]
    log: soc_ctl::logging::LogArgs,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one node: a standalone ZooKeeper on --zk, fed by the decision log.
    Node(NodeArgs),
    /// Submit a write and wait until the cluster decided it.
    Write {
        #[command(subcommand)]
        op: WriteOp,
        /// A node's writer front (`zk-nc node --listen`): the write goes through that node and
        /// the answer is ZooKeeper's result there. Without it the write goes to the cluster
        /// directly and only its instance is known.
        #[arg(long)]
        front: Option<std::net::SocketAddr>,
        /// Client id without --front [default: from the process id].
        #[arg(long)]
        client_id: Option<u32>,
    },
}

#[derive(Subcommand)]
enum WriteOp {
    /// get PATH: a linearizable read through --front (a barrier through the log, then that
    /// node's replica).
    Get { path: String },
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
    let password =
        match host_app::auth::load(a.password_file.as_deref(), ZK_ENV).and_then(|p| match &p {
            Some(pw) if pw.as_str().is_none() => Err(format!(
                "the password ({}) is not UTF-8: the writer front's JSON lines carry text",
                a.password_file
                    .as_ref()
                    .map_or(ZK_ENV.to_string(), |f| f.display().to_string())
            )),
            _ => Ok(p),
        }) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("zk-nc: {e}");
                return ExitCode::from(2);
            }
        };
    let file = match ClusterFile::load(&a.config) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("zk-nc: {}: {e}", a.config.display());
            return ExitCode::from(2);
        }
    };
    let file = if a.loopback { file.as_loopback() } else { file };
    let r = match a.cmd {
        Cmd::Node(n) => run_node(&file, n, password),
        Cmd::Write {
            op: WriteOp::Get { path },
            front,
            ..
        } => match front {
            None => Err("get reads through a node's writer front: give --front ADDR".into()),
            Some(addr) => zk_front::connect_auth(addr, password.as_ref())
                .map_err(|e| format!("front {e}"))
                .and_then(|mut f| {
                    zk_front::call(&mut f, &serde_json::json!({"op": "get", "path": path}))
                })
                .map(|ok| println!("{ok}")),
        },
        Cmd::Write {
            op,
            front,
            client_id,
        } => {
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
                WriteOp::Get { .. } => unreachable!("answered above"),
            };
            // Refuse what every replica would refuse, before it costs an instance.
            match ZkOp::decode(&op.encode()) {
                Err(e) => Err(e),
                Ok(_) if front.is_some() => {
                    let addr = front.expect("checked");
                    zk_front::connect_auth(addr, password.as_ref())
                        .map_err(|e| format!("front {e}"))
                        .and_then(|mut f| zk_front::call(&mut f, &zk_front::request(&op)))
                        .map(|ok| println!("{ok}"))
                }
                Ok(_) => {
                    let id = client_id.unwrap_or(0x7A00_0000 | (std::process::id() & 0xFF_FFFF));
                    let auth = file.client_auth().map_err(|e| e.to_string());
                    auth.and_then(|auth| {
                        Client::new(file.cluster_id as u32, id, file.client_addrs())
                            .map(|c| c.with_auth(auth))
                            .map_err(|e| e.to_string())
                    })
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

/// What the feed thread hands to the apply loop.
enum Item {
    Decision(u64, Arc<Logged>),
    Install(ZkSnapshot),
}

/// Apply the consecutive decisions in `batch` (those past the applier's position), pipelined.
async fn apply_batch(
    applier: &mut ZkApplier,
    node: &ZkNode,
    batch: &mut Vec<(u64, Arc<Logged>)>,
) -> Result<(), String> {
    let refs: Vec<(u64, &Logged)> = batch
        .iter()
        .filter(|(i, _)| *i > applier.applied)
        .map(|(i, l)| (*i, &**l))
        .collect();
    let r = if refs.is_empty() {
        Ok(())
    } else {
        match applier.apply_many(&refs).await {
            Ok(outcomes) => {
                node.applied(applier.applied, outcomes);
                Ok(())
            }
            Err(e) => {
                node.stop(format!("ZooKeeper: {e}"));
                Err(e.to_string())
            }
        }
    };
    batch.clear();
    r
}

/// A snapshot from the first peer that covers `need − 1` (else the most advanced one past `at`).
fn snapshot_from_peers(
    peers: &[std::net::SocketAddr],
    password: Option<&Password>,
    need: u64,
    at: u64,
) -> Result<ZkSnapshot, String> {
    let mut best: Option<ZkSnapshot> = None;
    let mut errors = Vec::new();
    for p in peers {
        match zk_front::fetch_snapshot(*p, password) {
            Ok(s) => {
                let covers = s.instance + 1 >= need;
                if s.instance > at && best.as_ref().is_none_or(|b| s.instance > b.instance) {
                    best = Some(s);
                }
                if covers {
                    break;
                }
            }
            Err(e) => errors.push(e),
        }
    }
    best.ok_or_else(|| {
        if errors.is_empty() {
            format!("no peer is past instance {at}")
        } else {
            errors.join("; ")
        }
    })
}

fn run_node(file: &ClusterFile, a: NodeArgs, password: Option<Password>) -> Result<(), String> {
    let NodeArgs {
        node,
        dir,
        zk,
        pin,
        engine_ctl,
        listen,
        peers,
        join,
        no_fsync,
        metrics,
        log,
    } = a;
    log.init();
    let fsync = !no_fsync;
    let setup = file.node(node as u64).map_err(|e| e.to_string())?;
    let cluster = file.cluster_id as u32;
    if let (Some(member), Some(ctl)) = (join, &engine_ctl) {
        let v = host_app::engine_watch::join_cluster(ctl, &setup.config, member)
            .map_err(|e| format!("joining through node {member}: {e}"))?;
        tracing::info!(
            node,
            "zk-nc: node {node}: engine joined through node {member}: {v}"
        );
    }
    let server = Arc::new(ZkServer::start_with(&dir, zk, fsync).map_err(|e| e.to_string())?);
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
    let engine = engine_ctl.clone().map(EngineWatch::spawn);
    let zk_node = ZkNode::new(node, cluster, file.client_addrs(), engine, password.clone());
    // [auth]: the requests this node proposes are tagged with the cluster's key.
    if let Some(a) = file.client_auth().map_err(|e| e.to_string())? {
        zk_node.set_packet_auth(a);
    }
    if let Some(addr) = metrics {
        let n = zk_node.clone();
        let bound = soc_ctl::metrics::serve(addr, move || Ok(n.metrics_text()))
            .map_err(|e| format!("metrics: bind TCP {addr}: {e}"))?;
        tracing::info!(
            node,
            "zk-nc: node {node}: metrics on http://{bound}/metrics"
        );
    }
    if let Some(addr) = listen {
        let l = std::net::TcpListener::bind(addr).map_err(|e| format!("listen {addr}: {e}"))?;
        let n = zk_node.clone();
        std::thread::spawn(move || zk_front::serve(l, n));
        tracing::info!(
            node,
            "zk-nc: node {node}: writers submit at {addr} ({})",
            if password.is_some() {
                "auth required"
            } else {
                "no password: anyone who reaches it may write"
            }
        );
    }
    let mut feed = Feed::new(source, cluster, engine_ctl);
    let feed_node = zk_node.clone();
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Item>(4096);
    std::thread::spawn(move || {
        let mut at = 0u64;
        let mut last_report = (0u64, std::time::Instant::now());
        loop {
            match feed.next(at, Duration::from_millis(5)) {
                Next::Decision(i, l) => {
                    at = i;
                    if tx.blocking_send(Item::Decision(i, l)).is_err() {
                        return;
                    }
                }
                Next::Idle => {}
                Next::Behind { need, engine_first } if peers.is_empty() => {
                    feed_node.stop(format!(
                        "instance {need} is lost for this node (its engine holds from \
                         {engine_first:?}) and no --peer was given to take a snapshot from"
                    ));
                    return;
                }
                Next::Behind { need, .. } => {
                    feed_node.set_transferring(Some(format!("it lacks instance {need}")));
                    let password = password.as_ref();
                    match feed
                        .while_transferring(|| snapshot_from_peers(&peers, password, need, at))
                    {
                        Ok(snap) => {
                            tracing::info!(
                                node,
                                instance = snap.instance,
                                "zk-nc: node {node}: installing a snapshot of instance {} ({} znodes)",
                                snap.instance,
                                snap.nodes.len()
                            );
                            at = snap.instance;
                            if tx.blocking_send(Item::Install(snap)).is_err() {
                                return;
                            }
                        }
                        Err(e) => {
                            tracing::warn!(
                                instance = need,
                                "zk-nc: snapshot for instance {need}: {e}"
                            );
                            feed_node.set_transferring(Some(format!(
                                "it lacks instance {need}; last attempt: {e}"
                            )));
                            std::thread::sleep(Duration::from_millis(300));
                        }
                    }
                }
            }
            let st = feed.stats;
            feed_node.set_feed(st);
            if st.repairs > last_report.0 && last_report.1.elapsed() > Duration::from_secs(1) {
                tracing::info!(
                    "zk-nc: {} gaps in the host copies, {} repairs ({} instances) from the engine's log",
                    st.gaps,
                    st.repairs,
                    st.repaired
                );
                last_report = (st.repairs, std::time::Instant::now());
            }
        }
    });
    let (snap_tx, mut snap_rx) = tokio::sync::mpsc::unbounded_channel::<SnapshotRequest>();
    zk_node.serve_snapshots(snap_tx);
    let (read_tx, mut read_rx) = tokio::sync::mpsc::unbounded_channel::<ReadRequest>();
    zk_node.serve_reads(read_tx);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let stopped_node = zk_node.clone();
    let r = rt.block_on(async move {
        let mut applier = ZkApplier::connect(zk, 0).await.map_err(|e| e.to_string())?;
        tracing::info!(
            node,
            "zk-nc: node {node} applying decisions to ZooKeeper at {zk}"
        );
        loop {
            let first = tokio::select! {
                item = rx.recv() => match item {
                    Some(i) => i,
                    None => break,
                },
                req = snap_rx.recv() => {
                    // Between two batches: the tree is the state after `applier.applied`.
                    if let Some(req) = req {
                        let _ = req.send(applier.snapshot().await.map_err(|e| e.to_string()));
                    }
                    continue;
                }
                req = read_rx.recv() => {
                    // The front waited until the read's barrier was applied.
                    if let Some((path, reply)) = req {
                        let r = applier.get(&path).await.map_err(|o| match o {
                            host_app::zk::ZkOutcome::Refused(e) => e,
                            other => format!("{other:?}"),
                        });
                        let _ = reply.send(r);
                    }
                    continue;
                }
            };
            let mut items = vec![first];
            // Everything that is already waiting goes into one pipelined batch.
            while items.len() < 512
                && let Ok(p) = rx.try_recv()
            {
                items.push(p);
            }
            let mut batch: Vec<(u64, Arc<Logged>)> = Vec::new();
            for item in items {
                match item {
                    Item::Decision(i, l) => batch.push((i, l)),
                    Item::Install(snap) => {
                        apply_batch(&mut applier, &zk_node, &mut batch).await?;
                        server.restart_empty().map_err(|e| {
                            let e = format!("ZooKeeper restart for a snapshot: {e}");
                            zk_node.stop(e.clone());
                            e
                        })?;
                        applier = ZkApplier::install(zk, &snap).await.map_err(|e| {
                            let e = format!("installing the snapshot: {e}");
                            zk_node.stop(e.clone());
                            e
                        })?;
                        zk_node.installed(snap.instance);
                        tracing::info!(
                            node,
                            instance = snap.instance,
                            "zk-nc: node {node}: at instance {} from a snapshot",
                            snap.instance
                        );
                    }
                }
            }
            apply_batch(&mut applier, &zk_node, &mut batch).await?;
        }
        Err::<(), String>("the decision reader stopped".into())
    });
    if let Some(why) = stopped_node.stopped() {
        // Stay up, as Redis-NC does: the fronts answer every request with the reason
        // (`CLUSTERDOWN … apply stopped`, or for a write decided meanwhile `ERR … decided at
        // instance N … not applied here`) and the metrics say `stopped`. Exiting here closed the
        // connection of a writer waiting for its write's outcome before it was told.
        tracing::error!(
            node,
            "zk-nc: node {node}: apply stopped for good ({why}); still answering with the reason (restart zk-nc to resume)"
        );
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    r
}
