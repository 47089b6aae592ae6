//! ZooKeeper-NC's writer front: `zk-nc write --front ADDR …` (or any program speaking its JSON
//! lines) submits a create / setData / delete through a node, which proposes it to the cluster,
//! waits until its own replica applied the decided instance, and answers with what ZooKeeper
//! returned there (the path created, the new data version, or ZooKeeper's refusal). Every
//! replica applies the same operations in the same order, so that answer is every replica's.
//!
//! A node that is out (its engine faulted, joining or unreachable, or its apply loop stopped)
//! answers at once with an error that says so (`TRYAGAIN …` / `CLUSTERDOWN …`).
//!
//! Protocol: one JSON object per line each way. Requests: `{"op":"create","path":P,"data":D}`,
//! `{"op":"set","path":P,"data":D,"version":V|null}`, `{"op":"delete","path":P,"version":V|null}`,
//! `{"op":"get","path":P}` (a linearizable read: a barrier through the log, then this replica),
//! `{"op":"info"}`, `{"op":"snapshot"}` (a peer's state transfer), `{"op":"auth","password":P}`.
//! Answers:
//! `{"ok":{"instance":N,"result":"created","path":P}}`,
//! `{"ok":{"instance":N,"result":"set","version":V}}`, `{"ok":{"instance":N,"result":"deleted"}}`,
//! `{"ok":{"instance":N,"result":"refused","error":E}}`,
//! `{"ok":{"instance":N,"result":"data","data":D,"version":V}}` (get),
//! `{"ok":{"result":"authenticated"}}` (auth), or `{"err":E}`.
//!
//! With a password (`zk-nc node --password-file PATH` or `ZK_NC_PASSWORD`), every request of a
//! connection before a successful `auth` is answered `{"err":"NOAUTH …"}` ([`zk_gate`]); a wrong
//! password `{"err":"WRONGPASS …"}`. Peers taking a snapshot authenticate with their own
//! password (a cluster's fronts share one).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use soc_ctl::client::Client;
use soc_ctl::cluster::ClientAuth;
use soc_ctl::log::{from_hex, to_hex};
use soc_ctl::regfile::write_line;

use crate::auth::Password;
use crate::engine_watch::{EngineWatch, Out, RIDE_OUT};
use crate::fd_limit::{Spare, out_of_descriptors, tell_and_close};
use crate::feed::FeedStats;
use crate::zk::{ZkDone, ZkOp, ZkOutcome, ZkSnapshot};

/// A front's request for a snapshot, answered by the apply loop between two batches.
pub type SnapshotRequest = std::sync::mpsc::Sender<Result<ZkSnapshot, String>>;

/// A front's read of one path (once the replica applied the read's barrier), answered by the
/// apply loop: the data and data version, or ZooKeeper's refusal.
pub type ReadRequest = (
    String,
    std::sync::mpsc::Sender<Result<(Vec<u8>, i32), String>>,
);

#[derive(Default)]
struct St {
    transferring: Option<String>,
    transfers: u64,
    applied: u64,
    results: HashMap<(u32, u64), (u64, ZkOutcome)>,
    /// Writes whose writers gave up waiting (their results are not kept), with their
    /// instances; pruned when a snapshot is installed past them.
    abandoned: HashMap<(u32, u64), u64>,
    /// The instance of the last snapshot installed (outcomes of writes up to it are unknown).
    snapshot_at: u64,
    stopped: Option<String>,
    feed: FeedStats,
    refused: u64,
}

/// One ZooKeeper-NC node: what the apply loop and the writer front share.
pub struct ZkNode {
    /// This node's id.
    pub node: u8,
    cluster: u32,
    nodes: Vec<SocketAddrV4>,
    engine: Option<Arc<EngineWatch>>,
    st: Mutex<St>,
    cv: Condvar,
    next_client: AtomicU32,
    snapshots: Mutex<Option<tokio::sync::mpsc::UnboundedSender<SnapshotRequest>>>,
    reads: Mutex<Option<tokio::sync::mpsc::UnboundedSender<ReadRequest>>>,
    password: Option<Password>,
    /// Packet tags for the requests this node's writer front proposes (cluster.toml `[auth]`).
    packet_auth: std::sync::OnceLock<ClientAuth>,
    /// Proposal → applied here, of the writes answered (`nc_write_latency_seconds`).
    write_latency: soc_ctl::metrics::Histogram,
}

const GIVE_UP: Duration = Duration::from_secs(10);

impl ZkNode {
    /// Tag the requests this node proposes with the cluster's key (`ClusterFile::client_auth`);
    /// set once, before the front serves.
    pub fn set_packet_auth(&self, auth: ClientAuth) {
        let _ = self.packet_auth.set(auth);
    }

    /// A proposal client of this node with id `id`, its requests tagged with the cluster's key.
    fn client(&self, id: u32) -> std::io::Result<Client> {
        Ok(Client::new(self.cluster, id, self.nodes.clone())?
            .with_auth(self.packet_auth.get().cloned()))
    }

    /// A node of cluster `cluster` whose nodes' client addresses are `nodes`. With a
    /// `password`, its writer front requires `{"op":"auth"}` first.
    pub fn new(
        node: u8,
        cluster: u32,
        nodes: Vec<SocketAddrV4>,
        engine: Option<Arc<EngineWatch>>,
        password: Option<Password>,
    ) -> Arc<ZkNode> {
        let start = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.subsec_nanos());
        Arc::new(ZkNode {
            node,
            cluster,
            nodes,
            engine,
            st: Mutex::new(St::default()),
            cv: Condvar::new(),
            next_client: AtomicU32::new(start),
            snapshots: Mutex::new(None),
            reads: Mutex::new(None),
            password,
            packet_auth: std::sync::OnceLock::new(),
            write_latency: soc_ctl::metrics::Histogram::default(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, St> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The apply loop applied everything up to `applied`, with these outcomes.
    pub fn applied(&self, applied: u64, outcomes: Vec<(u32, u64, ZkOutcome)>) {
        let mut st = self.lock();
        for (c, q, o) in outcomes {
            if let ZkOutcome::Refused(why) = &o {
                st.refused += 1;
                if st.refused <= 10 {
                    tracing::warn!(
                        "zk-nc: refused by ZooKeeper (identically on every replica): {why}"
                    );
                }
            }
            // Only this node's writers wait for results (their client ids carry the node id).
            if c >> 24 == self.node as u32 && st.abandoned.remove(&(c, q)).is_none() {
                st.results.insert((c, q), (applied, o));
            }
        }
        st.applied = applied;
        drop(st);
        self.cv.notify_all();
    }

    /// Where the front sends snapshot requests (the apply loop's side of the channel).
    pub fn serve_snapshots(&self, tx: tokio::sync::mpsc::UnboundedSender<SnapshotRequest>) {
        *self.snapshots.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
    }

    /// Where the front sends reads (the apply loop's side of the channel).
    pub fn serve_reads(&self, tx: tokio::sync::mpsc::UnboundedSender<ReadRequest>) {
        *self.reads.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
    }

    /// A linearizable read: a barrier (an empty request) through the log, then the path as this
    /// replica holds it once it applied the barrier's instance (every write acknowledged before
    /// the read began was decided before the barrier).
    pub fn read(&self, client: &mut Client, path: &str) -> Result<(u64, Value), String> {
        let (instance, _) = self.write_raw(client, &[])?;
        let tx = self
            .reads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or("this node serves no reads")?;
        let (rtx, rrx) = std::sync::mpsc::channel();
        tx.send((path.to_string(), rtx))
            .map_err(|_| "the apply loop is gone")?;
        let r = rrx
            .recv_timeout(GIVE_UP)
            .map_err(|_| "the apply loop did not answer".to_string())?;
        Ok((
            instance,
            match r {
                Ok((d, v)) => json!({"instance": instance, "result": "data",
                    "data": String::from_utf8_lossy(&d), "version": v}),
                Err(e) => json!({"instance": instance, "result": "refused", "error": e}),
            },
        ))
    }

    /// The replica is loading a snapshot (`Some(what)`) or serving again (`None`).
    pub fn set_transferring(&self, what: Option<String>) {
        self.lock().transferring = what;
        self.cv.notify_all();
    }

    /// A snapshot was installed: the replica is at `instance`.
    pub fn installed(&self, instance: u64) {
        let mut st = self.lock();
        st.applied = instance;
        st.snapshot_at = instance;
        st.abandoned.retain(|_, at| *at > instance);
        st.transferring = None;
        st.transfers += 1;
        drop(st);
        self.cv.notify_all();
    }

    fn snapshot(&self) -> Result<ZkSnapshot, String> {
        if let Some(e) = self.unavailable(&self.lock()) {
            return Err(e);
        }
        let tx = self
            .snapshots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or("this node serves no snapshots")?;
        let (rtx, rrx) = std::sync::mpsc::channel();
        tx.send(rtx).map_err(|_| "the apply loop is gone")?;
        rrx.recv_timeout(Duration::from_secs(120))
            .map_err(|_| "the apply loop did not answer".to_string())?
    }

    /// The feed's counters (gaps, repairs).
    pub fn set_feed(&self, feed: FeedStats) {
        self.lock().feed = feed;
    }

    /// The apply loop stopped for good (the reason).
    pub fn stop(&self, why: String) {
        tracing::error!("zk-nc: apply stopped: {why}");
        self.lock().stopped = Some(why);
        self.cv.notify_all();
    }

    /// Why the apply loop stopped for good, if it did.
    pub fn stopped(&self) -> Option<String> {
        self.lock().stopped.clone()
    }

    fn unavailable(&self, st: &St) -> Option<String> {
        if let Some(what) = &st.transferring {
            return Some(format!(
                "TRYAGAIN ZooKeeper-NC node {}: its replica is loading a snapshot ({what})",
                self.node
            ));
        }
        if let Some(why) = &st.stopped {
            return Some(format!(
                "CLUSTERDOWN ZooKeeper-NC node {}: apply stopped: {why}",
                self.node
            ));
        }
        match self.engine.as_ref()?.out(self.node)? {
            Out::Transient(why) => Some(format!("TRYAGAIN ZooKeeper-NC {why}")),
            Out::Down(why) => Some(format!("CLUSTERDOWN ZooKeeper-NC {why}")),
        }
    }

    /// The error of a write (`payload`) decided at `instance` whose outcome this replica could
    /// not produce (`why`). Not `TRYAGAIN`: the write takes effect on every replica, and a
    /// writer that retried it would apply it twice. A read's barrier (empty) changes nothing:
    /// its read can be retried, `TRYAGAIN`.
    fn decided_unknown(&self, payload: &[u8], instance: u64, why: &str) -> String {
        if payload.is_empty() {
            return format!(
                "TRYAGAIN ZooKeeper-NC node {}: read barrier decided at instance {instance} but \
                 not applied here ({why})",
                self.node
            );
        }
        format!(
            "ERR ZooKeeper-NC node {}: decided at instance {instance}, so it takes effect on \
             every replica, but not applied here ({why}): its outcome is unknown, and a retry \
             would apply it twice",
            self.node
        )
    }

    /// Propose `op`, wait until this replica applied it, and say what ZooKeeper answered.
    pub fn write(&self, client: &mut Client, op: &ZkOp) -> Result<(u64, ZkOutcome), String> {
        self.write_raw(client, &op.encode())
    }

    fn write_raw(&self, client: &mut Client, payload: &[u8]) -> Result<(u64, ZkOutcome), String> {
        let t0 = Instant::now();
        // An engine out only for a moment is waited for first (at most RIDE_OUT).
        if let Some(w) = &self.engine {
            w.ride_out(self.node, RIDE_OUT);
        }
        if let Some(e) = self.unavailable(&self.lock()) {
            return Err(e);
        }
        let ok = client.request(0, payload, GIVE_UP).map_err(|e| {
            self.unavailable(&self.lock()).unwrap_or_else(|| {
                format!(
                    "TRYAGAIN ZooKeeper-NC node {}: no leader acknowledged the write ({e}); \
                         it may still take effect",
                    self.node
                )
            })
        })?;
        let key = (client.client_id, client.last_seq());
        let deadline = Instant::now() + GIVE_UP;
        let mut st = self.lock();
        loop {
            if st.applied >= ok.instance {
                self.write_latency.observe(t0.elapsed());
                return match st.results.remove(&key) {
                    Some((_, o)) => Ok((ok.instance, o)),
                    // A snapshot installed past it: applied, but not here.
                    None if ok.instance <= st.snapshot_at && !payload.is_empty() => Err(self
                        .decided_unknown(
                            payload,
                            ok.instance,
                            "this replica installed a snapshot past it",
                        )),
                    // Decided twice (a retransmission): applied under the first decision.
                    None => Ok((ok.instance, ZkOutcome::Duplicate)),
                };
            }
            // Decided: an engine out only for a moment (a safe exit and its recovery) is
            // waited for, as a write arriving then would be (`RIDE_OUT`).
            let out = self.unavailable(&st).filter(|_| {
                !(st.transferring.is_none()
                    && st.stopped.is_none()
                    && self
                        .engine
                        .as_ref()
                        .is_some_and(|w| w.briefly_out(self.node, RIDE_OUT)))
            });
            let now = Instant::now();
            let gave_up = out.or_else(|| {
                (now >= deadline)
                    .then(|| format!("not applied within {GIVE_UP:?}, applied {}", st.applied))
            });
            if let Some(why) = gave_up {
                st.abandoned.insert(key, ok.instance);
                return Err(self.decided_unknown(payload, ok.instance, &why));
            }
            st = self
                .cv
                .wait_timeout(st, (deadline - now).min(Duration::from_millis(20)))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// The Prometheus page of `zk-nc node --metrics`: applied instance, lag, the feed's
    /// counters, refusals, transfers, and the write latency histogram (`node` label).
    pub fn metrics_text(&self) -> String {
        let node = self.node.to_string();
        let l: &[(&str, &str)] = &[("node", &node)];
        let (applied, f, refused, transfers, mode) = {
            let st = self.lock();
            let mode = if st.stopped.is_some() {
                "stopped"
            } else if st.transferring.is_some() {
                "transferring"
            } else {
                "serving"
            };
            (st.applied, st.feed, st.refused, st.transfers, mode)
        };
        let decided = self.engine.as_ref().and_then(|e| e.last_decided());
        let mut t = soc_ctl::metrics::Text::new();
        crate::metrics::apply_and_feed(&mut t, l, applied, decided, &f);
        t.one(
            "nc_mode",
            "gauge",
            "The node's mode: serving, transferring or stopped (the label; the value is 1).",
            &[("node", &node), ("mode", mode)],
            1,
        );
        t.one(
            "nc_zk_refused_total",
            "counter",
            "Writes ZooKeeper refused (identically on every replica).",
            l,
            refused,
        );
        t.one(
            "nc_transfers_total",
            "counter",
            "Snapshots (tree copies) installed from a peer.",
            l,
            transfers,
        );
        t.histogram(
            "nc_write_latency_seconds",
            "Writes answered: proposal to applied at this node.",
            l,
            &self.write_latency,
        );
        t.finish()
    }

    fn info(&self) -> Value {
        let st = self.lock();
        let decided = self.engine.as_ref().and_then(|e| e.last_decided());
        json!({
            "node": self.node,
            "engine": self.engine.as_ref().map(|e| e.describe()),
            "applied": st.applied,
            "engine_decided": decided,
            "lag": decided.map(|d| d.saturating_sub(st.applied)),
            "stopped": st.stopped,
            "host_copies": st.feed.received,
            "gaps": st.feed.gaps,
            "repairs": st.feed.repairs,
            "repaired_instances": st.feed.repaired,
            "refused": st.refused,
            "transferring": st.transferring,
            "transfers": st.transfers,
        })
    }
}

/// A request to a writer front.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// `{"op":"info"}`: the node's figures.
    Info,
    /// `{"op":"snapshot"}`: a peer's state transfer.
    Snapshot,
    /// `{"op":"get","path":P}`: a linearizable read.
    Get(String),
    /// A write.
    Write(ZkOp),
    /// `{"op":"auth","password":P}`: authenticate this connection.
    Auth(Attempt),
}

/// A password a client sent (its `Debug` form does not show it).
#[derive(Clone, PartialEq, Eq)]
pub struct Attempt(pub String);

impl std::fmt::Debug for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Attempt(..)")
    }
}

/// The answer to a request sent before a successful `auth` while a password is set.
pub const NOAUTH: &str =
    "NOAUTH Authentication required: send {\"op\":\"auth\",\"password\":P} first";
/// The answer to a wrong password.
pub const WRONGPASS: &str = "WRONGPASS invalid password";

/// The authentication gate of a writer-front connection, before the request `req` (as parsed)
/// runs. `Some(answer)`: the gate answers it (`auth` always; anything else, even a line that
/// does not parse, while a `password` is set and the connection has not authenticated, with
/// [`NOAUTH`]). `None`: the request goes on. `authed` is the connection's state; a successful
/// `auth` sets it, a failed one leaves it.
pub fn zk_gate(
    password: Option<&Password>,
    authed: &mut bool,
    req: &Result<Request, String>,
) -> Option<Value> {
    match (req, password) {
        (Ok(Request::Auth(_)), None) => Some(json!({
            "err": "ERR auth: this front has no password set (zk-nc node --password-file or ZK_NC_PASSWORD)"
        })),
        (Ok(Request::Auth(a)), Some(p)) => Some(if p.matches(a.0.as_bytes()) {
            *authed = true;
            json!({"ok": {"result": "authenticated"}})
        } else {
            json!({ "err": WRONGPASS })
        }),
        (_, Some(_)) if !*authed => Some(json!({ "err": NOAUTH })),
        _ => None,
    }
}

/// Parse one request line.
pub fn parse_request(line: &str) -> Result<Request, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let s = |k: &str| -> Result<String, String> {
        v[k].as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("'{k}' must be a string"))
    };
    let version = match &v["version"] {
        Value::Null => None,
        n => Some(
            n.as_i64()
                .and_then(|x| i32::try_from(x).ok())
                .ok_or("'version' must be a 32-bit integer or null")?,
        ),
    };
    let op = match v["op"].as_str() {
        Some("info") => return Ok(Request::Info),
        Some("snapshot") => return Ok(Request::Snapshot),
        Some("get") => return Ok(Request::Get(s("path")?)),
        Some("auth") => return Ok(Request::Auth(Attempt(s("password")?))),
        Some("create") => ZkOp::Create {
            path: s("path")?,
            data: s("data")?.into_bytes(),
        },
        Some("set") => ZkOp::Set {
            path: s("path")?,
            data: s("data")?.into_bytes(),
            version,
        },
        Some("delete") => ZkOp::Delete {
            path: s("path")?,
            version,
        },
        _ => {
            return Err("'op' must be create, set, delete, get, info, snapshot or auth".into());
        }
    };
    // Refuse what every replica would refuse, before it costs an instance.
    ZkOp::decode(&op.encode())?;
    Ok(Request::Write(op))
}

/// The answer to a write, as JSON.
pub fn answer(instance: u64, o: &ZkOutcome) -> Value {
    match o {
        ZkOutcome::Done(ZkDone::Created(p)) => {
            json!({"instance": instance, "result": "created", "path": p})
        }
        ZkOutcome::Done(ZkDone::Set { version }) => {
            json!({"instance": instance, "result": "set", "version": version})
        }
        ZkOutcome::Done(ZkDone::Deleted) => json!({"instance": instance, "result": "deleted"}),
        ZkOutcome::Refused(e) => json!({"instance": instance, "result": "refused", "error": e}),
        ZkOutcome::Duplicate => json!({"instance": instance, "result": "duplicate"}),
        ZkOutcome::Barrier => json!({"instance": instance, "result": "barrier"}),
    }
}

/// Serve writers on `listener` until the process ends.
///
/// Out of file descriptors, a writer that connects is answered `{"err": "…"}` and closed (one
/// descriptor is kept spare to accept it), and accept failures never spin this thread.
pub fn serve(listener: TcpListener, node: Arc<ZkNode>) {
    let mut spare = Spare::new("zk-nc writer front: accept");
    loop {
        spare.keep();
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // Out of descriptors (accept fails at the limit even with no writer waiting):
                // the spare makes room to tell one waiting writer why; with none waiting, rest
                // instead of spinning.
                let mut told = false;
                if out_of_descriptors(&e) && listener.set_nonblocking(true).is_ok() {
                    let (took, _) = spare.accept_one(&listener);
                    let _ = listener.set_nonblocking(false);
                    if let Some(s) = took {
                        spare.refused(&e);
                        refuse(s, &e);
                        told = true;
                    }
                } else {
                    spare.other_error(&e);
                }
                if !told {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                continue;
            }
        };
        let node = node.clone();
        let started = std::thread::Builder::new()
            .name("zk-writer".into())
            .spawn(move || {
                let low = node.next_client.fetch_add(1, Ordering::Relaxed) & 0xFF_FFFF;
                let id = (node.node as u32) << 24 | low.max(1);
                let _ = session(stream, &node, id);
            });
        if let Err(e) = started {
            tracing::warn!("zk-nc writer front: a session thread: {e}");
        }
    }
}

/// Tell a writer its connection cannot be served, and close it.
fn refuse(s: TcpStream, e: &std::io::Error) {
    let mut line = json!({ "err": format!("zk-nc cannot serve this connection: {e}") }).to_string();
    line.push('\n');
    tell_and_close(s, line.as_bytes());
}

fn session(stream: TcpStream, node: &ZkNode, client_id: u32) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let setup = || -> std::io::Result<_> {
        let w = stream.try_clone()?;
        let client = node.client(client_id)?;
        Ok((w, client))
    };
    let (mut w, mut client) = match setup() {
        Ok(x) => x,
        Err(e) => {
            refuse(stream, &e);
            return Err(e);
        }
    };
    let mut authed = false;
    // Lines are read with a bound: an unauthenticated peer must not make the front buffer an
    // endless line.
    let mut r = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        let limit = if node.password.is_some() && !authed {
            PRE_AUTH_LINE
        } else {
            MAX_LINE
        };
        let n = (&mut r).take(limit as u64 + 1).read_line(&mut line)?;
        if n == 0 {
            return Ok(());
        }
        if n > limit && !line.ends_with('\n') {
            write_line(
                &mut w,
                &json!({"err": format!("request line longer than {limit} bytes")}),
            )?;
            return Ok(());
        }
        let req = parse_request(line.trim_end_matches(['\n', '\r']));
        if let Some(a) = zk_gate(node.password.as_ref(), &mut authed, &req) {
            write_line(&mut w, &a)?;
            continue;
        }
        let a = match req {
            Err(e) => json!({ "err": e }),
            Ok(Request::Snapshot) => match node.snapshot() {
                Ok(snap) => json!({ "ok": snapshot_json(&snap) }),
                Err(e) => json!({ "err": e }),
            },
            Ok(Request::Info) => json!({ "ok": node.info() }),
            Ok(Request::Get(path)) => match node.read(&mut client, &path) {
                Ok((_, v)) => json!({ "ok": v }),
                Err(e) => json!({ "err": e }),
            },
            Ok(Request::Write(op)) => match node.write(&mut client, &op) {
                Ok((i, o)) => json!({ "ok": answer(i, &o) }),
                Err(e) => json!({ "err": e }),
            },
            Ok(Request::Auth(_)) => unreachable!("the gate answers auth"),
        };
        write_line(&mut w, &a)?;
    }
}

/// Longest request line before a connection authenticated.
const PRE_AUTH_LINE: usize = 64 * 1024;
/// Longest request line (a write carries at most one DECIDE entry's worth of data).
const MAX_LINE: usize = 16 * 1024 * 1024;

/// A writer: send one request line to a front, get its answer.
pub fn call(
    front: &mut (BufReader<TcpStream>, TcpStream),
    request: &Value,
) -> Result<Value, String> {
    write_line(&mut front.1, request).map_err(|e| e.to_string())?;
    let mut line = String::new();
    front.0.read_line(&mut line).map_err(|e| e.to_string())?;
    if line.is_empty() {
        return Err("the front closed the connection".into());
    }
    let v: Value = serde_json::from_str(&line).map_err(|e| format!("bad answer: {e}"))?;
    match (v.get("ok"), v.get("err")) {
        (Some(ok), _) => Ok(ok.clone()),
        (_, Some(e)) => Err(e.as_str().unwrap_or("error").to_string()),
        _ => Err(format!("bad answer: {line}")),
    }
}

/// Connect a writer to a front.
pub fn connect(addr: std::net::SocketAddr) -> std::io::Result<(BufReader<TcpStream>, TcpStream)> {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    let _ = s.set_nodelay(true);
    Ok((BufReader::new(s.try_clone()?), s))
}

/// Authenticate a connection to a front with `password`.
pub fn authenticate(
    front: &mut (BufReader<TcpStream>, TcpStream),
    password: &Password,
) -> Result<(), String> {
    let text = password
        .as_str()
        .ok_or("the password is not UTF-8 (the writer front's JSON lines carry text)")?;
    call(front, &json!({"op": "auth", "password": text}))
        .map(drop)
        .map_err(|e| format!("auth: {e}"))
}

/// [`connect`], then [`authenticate`] when there is a `password`; errors begin with the
/// address.
pub fn connect_auth(
    addr: std::net::SocketAddr,
    password: Option<&Password>,
) -> Result<(BufReader<TcpStream>, TcpStream), String> {
    let mut f = connect(addr).map_err(|e| format!("{addr}: {e}"))?;
    if let Some(p) = password {
        authenticate(&mut f, p).map_err(|e| format!("{addr}: {e}"))?;
    }
    Ok(f)
}

/// The request for `op`.
pub fn request(op: &ZkOp) -> Value {
    let text = |d: &[u8]| String::from_utf8_lossy(d).into_owned();
    match op {
        ZkOp::Create { path, data } => json!({"op": "create", "path": path, "data": text(data)}),
        ZkOp::Set {
            path,
            data,
            version,
        } => json!({"op": "set", "path": path, "data": text(data), "version": version}),
        ZkOp::Delete { path, version } => {
            json!({"op": "delete", "path": path, "version": version})
        }
    }
}

/// A snapshot as JSON (data in hex).
pub fn snapshot_json(s: &ZkSnapshot) -> Value {
    json!({
        "instance": s.instance,
        "dedupe": to_hex(&s.dedupe),
        "nodes": s.nodes.iter().map(|(p, d, v)| json!([p, to_hex(d), v])).collect::<Vec<_>>(),
    })
}

/// [`snapshot_json`] back (every field checked).
pub fn snapshot_from_json(v: &Value) -> Result<ZkSnapshot, String> {
    let bad = |m: &str| format!("malformed snapshot: {m}");
    let instance = v["instance"].as_u64().ok_or_else(|| bad("instance"))?;
    let dedupe = from_hex(v["dedupe"].as_str().ok_or_else(|| bad("dedupe"))?)?;
    let mut nodes = Vec::new();
    for n in v["nodes"].as_array().ok_or_else(|| bad("nodes"))? {
        let path = n[0].as_str().ok_or_else(|| bad("path"))?;
        if !path.starts_with('/') {
            return Err(bad("path"));
        }
        let data = from_hex(n[1].as_str().ok_or_else(|| bad("data"))?)?;
        let version = n[2]
            .as_i64()
            .and_then(|x| i32::try_from(x).ok())
            .filter(|x| *x >= 0)
            .ok_or_else(|| bad("version"))?;
        nodes.push((path.to_string(), data, version));
    }
    Ok(ZkSnapshot {
        instance,
        dedupe,
        nodes,
    })
}

/// Ask a peer's writer front for a snapshot (authenticated with `password` when given).
pub fn fetch_snapshot(
    peer: std::net::SocketAddr,
    password: Option<&Password>,
) -> Result<ZkSnapshot, String> {
    let mut f = connect_auth(peer, password).map_err(|e| format!("peer {e}"))?;
    let _ = f.1.set_read_timeout(Some(Duration::from_secs(150)));
    let v = call(&mut f, &json!({"op": "snapshot"})).map_err(|e| format!("peer {peer}: {e}"))?;
    snapshot_from_json(&v).map_err(|e| format!("peer {peer}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn pw(s: &str) -> Option<Password> {
        Password::new(s)
    }

    fn gate(p: Option<&Password>, authed: &mut bool, line: &str) -> Option<Value> {
        zk_gate(p, authed, &parse_request(line))
    }

    #[test]
    fn the_gate_answers_noauth_until_auth_succeeds() {
        let p = pw("s3cret");
        let mut authed = false;
        for line in [
            r#"{"op":"info"}"#,
            r#"{"op":"snapshot"}"#,
            r#"{"op":"get","path":"/a"}"#,
            r#"{"op":"create","path":"/a","data":"x"}"#,
            r#"{"op":"delete","path":"/a","version":null}"#,
            r#"{"op":"nope"}"#,
            r#"{"op":"auth"}"#,
            "not json",
        ] {
            assert_eq!(
                gate(p.as_ref(), &mut authed, line),
                Some(json!({ "err": NOAUTH })),
                "{line}"
            );
        }
        for wrong in ["", "s3cre", "s3crett", "S3CRET", "s3cret "] {
            let line = json!({"op": "auth", "password": wrong}).to_string();
            assert_eq!(
                gate(p.as_ref(), &mut authed, &line),
                Some(json!({ "err": WRONGPASS })),
                "{wrong:?}"
            );
            assert!(!authed);
        }
        assert_eq!(
            gate(p.as_ref(), &mut authed, r#"{"op":"info"}"#),
            Some(json!({ "err": NOAUTH }))
        );
        assert_eq!(
            gate(
                p.as_ref(),
                &mut authed,
                r#"{"op":"auth","password":"s3cret"}"#
            ),
            Some(json!({"ok": {"result": "authenticated"}}))
        );
        assert!(authed);
        assert_eq!(gate(p.as_ref(), &mut authed, r#"{"op":"info"}"#), None);
        assert_eq!(gate(p.as_ref(), &mut authed, "not json"), None);
        // A failed auth later does not close the connection again.
        assert_eq!(
            gate(p.as_ref(), &mut authed, r#"{"op":"auth","password":"x"}"#),
            Some(json!({ "err": WRONGPASS }))
        );
        assert!(authed);
    }

    #[test]
    fn without_a_password_requests_pass_and_auth_is_refused() {
        let mut authed = false;
        assert_eq!(gate(None, &mut authed, r#"{"op":"info"}"#), None);
        let a = gate(None, &mut authed, r#"{"op":"auth","password":"x"}"#).unwrap();
        assert!(a["err"].as_str().unwrap().contains("no password"), "{a}");
        assert!(
            !format!(
                "{:?}",
                parse_request(r#"{"op":"auth","password":"hunter2"}"#)
            )
            .contains("hunter2")
        );
    }

    /// A writer front on a socket (no engine, no ZooKeeper): the gate in the session, and the
    /// client side (`connect_auth`, `fetch_snapshot`) sending the password.
    #[test]
    fn a_front_on_a_socket_requires_auth_and_clients_send_it() {
        let node = ZkNode::new(
            0,
            1,
            vec![SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, 9)],
            None,
            pw("s3cret"),
        );
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || serve(l, node));

        let mut f = connect(addr).unwrap();
        let e = call(&mut f, &json!({"op": "info"})).unwrap_err();
        assert!(e.starts_with("NOAUTH"), "{e}");
        let e = call(&mut f, &json!({"op": "auth", "password": "wrong"})).unwrap_err();
        assert!(e.starts_with("WRONGPASS"), "{e}");
        let e = call(&mut f, &json!({"op": "get", "path": "/x"})).unwrap_err();
        assert!(e.starts_with("NOAUTH"), "{e}");
        let ok = call(&mut f, &json!({"op": "auth", "password": "s3cret"})).unwrap();
        assert_eq!(ok, json!({"result": "authenticated"}));
        assert_eq!(call(&mut f, &json!({"op": "info"})).unwrap()["node"], 0);

        let mut f = connect_auth(addr, pw("s3cret").as_ref()).unwrap();
        assert_eq!(call(&mut f, &json!({"op": "info"})).unwrap()["node"], 0);
        let e = connect_auth(addr, pw("other").as_ref()).unwrap_err();
        assert!(e.contains("WRONGPASS"), "{e}");

        // A peer's snapshot: refused before the gate without the password; with it, the
        // request reaches the node (which has no apply loop here to serve it).
        let e = fetch_snapshot(addr, None).unwrap_err();
        assert!(e.contains("NOAUTH"), "{e}");
        let e = fetch_snapshot(addr, pw("other").as_ref()).unwrap_err();
        assert!(e.contains("WRONGPASS"), "{e}");
        let e = fetch_snapshot(addr, pw("s3cret").as_ref()).unwrap_err();
        assert!(e.contains("serves no snapshots"), "{e}");

        // An unauthenticated connection cannot make the front buffer a long line.
        // (Exactly one byte more than allowed, so that the front read all of it before it
        // closes: unread bytes would make the close a reset.)
        let mut f = connect(addr).unwrap();
        f.1.write_all("x".repeat(PRE_AUTH_LINE + 1).as_bytes())
            .unwrap();
        let mut answer = String::new();
        f.0.read_line(&mut answer).unwrap();
        assert!(answer.contains("longer than"), "{answer}");
        answer.clear();
        assert_eq!(f.0.read_line(&mut answer).unwrap(), 0, "closed after it");
    }
}
