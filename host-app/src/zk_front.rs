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
//! `{"op":"info"}`, `{"op":"snapshot"}` (a peer's state transfer). Answers:
//! `{"ok":{"instance":N,"result":"created","path":P}}`,
//! `{"ok":{"instance":N,"result":"set","version":V}}`, `{"ok":{"instance":N,"result":"deleted"}}`,
//! `{"ok":{"instance":N,"result":"refused","error":E}}`,
//! `{"ok":{"instance":N,"result":"data","data":D,"version":V}}` (get), or `{"err":E}`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use soc_ctl::client::Client;
use soc_ctl::log::{from_hex, to_hex};

use crate::engine_watch::{EngineWatch, Out};
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
}

const GIVE_UP: Duration = Duration::from_secs(10);

impl ZkNode {
    /// A node of cluster `cluster` whose nodes' client addresses are `nodes`.
    pub fn new(
        node: u8,
        cluster: u32,
        nodes: Vec<SocketAddrV4>,
        engine: Option<Arc<EngineWatch>>,
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
                    eprintln!("zk-nc: refused by ZooKeeper (identically on every replica): {why}");
                }
            }
            // Only this node's writers wait for results (their client ids carry the node id).
            if c >> 24 == self.node as u32 {
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
        eprintln!("zk-nc: apply stopped: {why}");
        self.lock().stopped = Some(why);
        self.cv.notify_all();
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

    /// Propose `op`, wait until this replica applied it, and say what ZooKeeper answered.
    pub fn write(&self, client: &mut Client, op: &ZkOp) -> Result<(u64, ZkOutcome), String> {
        self.write_raw(client, &op.encode())
    }

    fn write_raw(&self, client: &mut Client, payload: &[u8]) -> Result<(u64, ZkOutcome), String> {
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
                return match st.results.remove(&key) {
                    Some((_, o)) => Ok((ok.instance, o)),
                    // Decided twice (a retransmission): applied under the first decision.
                    None => Ok((ok.instance, ZkOutcome::Duplicate)),
                };
            }
            if let Some(e) = self.unavailable(&st) {
                return Err(e);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(format!(
                    "TRYAGAIN ZooKeeper-NC node {}: decided at instance {} but not applied here \
                     within {GIVE_UP:?} (applied {})",
                    self.node, ok.instance, st.applied
                ));
            }
            st = self
                .cv
                .wait_timeout(st, (deadline - now).min(Duration::from_millis(20)))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
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
        _ => return Err("'op' must be create, set, delete or info".into()),
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
pub fn serve(listener: TcpListener, node: Arc<ZkNode>) {
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let node = node.clone();
        std::thread::spawn(move || {
            let low = node.next_client.fetch_add(1, Ordering::Relaxed) & 0xFF_FFFF;
            let id = (node.node as u32) << 24 | low.max(1);
            let _ = session(stream, &node, id);
        });
    }
}

fn session(stream: TcpStream, node: &ZkNode, client_id: u32) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let mut w = stream.try_clone()?;
    let mut client = Client::new(node.cluster, client_id, node.nodes.clone())?;
    for line in BufReader::new(stream).lines() {
        let line = line?;
        let a = match parse_request(&line) {
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
        };
        writeln!(w, "{a}")?;
    }
    Ok(())
}

/// A writer: send one request line to a front, get its answer.
pub fn call(
    front: &mut (BufReader<TcpStream>, TcpStream),
    request: &Value,
) -> Result<Value, String> {
    writeln!(front.1, "{request}").map_err(|e| e.to_string())?;
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

/// Ask a peer's writer front for a snapshot.
pub fn fetch_snapshot(peer: std::net::SocketAddr) -> Result<ZkSnapshot, String> {
    let mut f = connect(peer).map_err(|e| format!("peer {peer}: {e}"))?;
    let _ = f.1.set_read_timeout(Some(Duration::from_secs(150)));
    let v = call(&mut f, &json!({"op": "snapshot"})).map_err(|e| format!("peer {peer}: {e}"))?;
    snapshot_from_json(&v).map_err(|e| format!("peer {peer}: {e}"))
}
