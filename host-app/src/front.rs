//! Redis-NC's node process: the apply loop (decisions → the local redis-server, exactly once,
//! every gap repaired, a snapshot from a peer when the engine cannot fill it) and the RESP front
//! that stock clients talk to.
//!
//! - **Writes** become Nano-consensus requests to the leader; the client gets the local
//!   redis-server's own reply once the local replica applied the decided instance.
//! - **Reads** are linearizable at every front by default: a read barrier (an empty request) goes
//!   through the log and the read is served once the local replica applied the barrier's
//!   instance (every write acknowledged anywhere before the read began was decided before the
//!   barrier, so it is applied). Concurrent reads share one barrier. `--reads local` serves
//!   read-your-writes only (each front sees its own acknowledged writes), one round cheaper.
//! - **Fast, honest errors**: a front whose engine is out (faulted, joining, recovering,
//!   unreachable), or whose replica is loading a snapshot, answers with `-TRYAGAIN` (coming
//!   back by itself) or `-CLUSTERDOWN` (needs a person), saying why: at once, except that a
//!   command waits for an engine that is only recovering, rejoining or joining until that
//!   outage is [`RIDE_OUT`] old (a safe exit under a scheduling stall is usually over in tens
//!   of milliseconds).
//! - `INFO` has a `# Nanoconsensus` section: mode, engine state, applied instance, lag, repairs,
//!   transfers.
//! - **Authentication** like Redis's `requirepass` ([`resp_gate`]): with a password, every
//!   command before a successful `AUTH` is answered `-NOAUTH Authentication required.`; peers
//!   taking a snapshot (`NC.SNAPSHOT`) authenticate with this node's password.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use proto::apply::Applier;
use proto::log::Logged;
use soc_ctl::client::Client;
use soc_ctl::cluster::ClientAuth;

use crate::auth::Password;
use crate::engine_watch::{EngineWatch, Out, RIDE_OUT};
pub use crate::feed::Source;
use crate::feed::{Feed, FeedStats, Next};
use crate::propose::{Decided, Proposer, ReplyKey};
use crate::redis::{Applied, Conn, RedisApplier, RedisServer, bgsave_done};
use crate::resp::{self, Value};

mod event_loop;

/// How reads are served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Reads {
    /// Through a read barrier in the log: linearizable at every front.
    Linearizable,
    /// From the local replica once it applied this front's acknowledged writes:
    /// read-your-writes for the clients of one front, possibly stale across fronts.
    Local,
}

/// What the replica is doing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum Mode {
    /// Applying decisions.
    #[default]
    Serving,
    /// Installing a snapshot from a peer (it lacks instance `need`).
    Transferring {
        need: u64,
        last_error: Option<String>,
    },
    /// Stopped for good (the reason).
    Stopped(String),
}

/// A snapshot's instance and exactly-once record; its RDB is being written by a fork.
type SnapshotStart = (u64, Vec<u8>);

#[derive(Default)]
struct St {
    applied: u64,
    /// The instance of the last snapshot installed (replies of writes up to it are unknown).
    snapshot_at: u64,
    replies: HashMap<ReplyKey, Value>,
    mode: Mode,
    feed: FeedStats,
    transfers: u64,
    snapshots_served: u64,
    /// A front asks the apply loop for a snapshot of this moment.
    snap_wanted: Option<mpsc::Sender<io::Result<SnapshotStart>>>,
    /// This node's client ids already used in the log (never reused after a restart).
    our_ids: HashSet<u32>,
    /// Fronts waiting for an instance to be applied (woken one by one, not all at once:
    /// 50 connections woken on every apply write cost more CPU than the writes).
    waiters: BTreeMap<u64, Vec<std::thread::Thread>>,
    /// Writes whose replies are not kept, with their instances: answered at their decision
    /// (fixed replies), or given up waiting for (`wait_applied` failed). Pruned when a
    /// snapshot is installed past them (they are never applied here then).
    answered: HashMap<ReplyKey, u64>,
    /// The applied instance at which the lag bound found the replica stuck (no progress for
    /// [`LAG_STUCK`]): while it stays there, writes answered at their decision do not wait.
    lag_stuck: Option<u64>,
}

/// Where writes spend their time (sums, so that a bench can take deltas; INFO `nc_stage_*`).
#[derive(Clone, Copy, Default)]
struct Stages {
    /// Writes answered (at their decision or after their instance was applied).
    writes: u64,
    /// Of those, writes answered at their decision (a reply that does not depend on the
    /// state); the others waited for the local replica (`apply_wait_ns`).
    decided_writes: u64,
    /// Request → the leader's OK (the engine's round trip: consensus).
    propose_ns: u64,
    /// The leader's OK → the local replica applied the instance (host path and apply loop).
    apply_wait_ns: u64,
    /// Pipelined writes of the apply loop.
    apply_batches: u64,
    /// Instances they applied.
    apply_instances: u64,
    /// Time in redis-server for them (write, execute, replies read).
    apply_ns: u64,
}

#[derive(Default)]
struct BarrierState {
    started: u64,
    completed: u64,
    in_flight: bool,
    instance: u64,
    error: Option<(u64, String)>,
    sent: u64,
}

/// One Redis-NC node: what the apply loop and the fronts share.
pub struct Node {
    /// This node's id.
    pub node: u8,
    cluster: u32,
    nodes: Vec<SocketAddrV4>,
    reads: Reads,
    server: Arc<RedisServer>,
    st: Mutex<St>,
    snapshot_lock: Mutex<()>,
    barrier: Mutex<BarrierState>,
    barrier_cv: Condvar,
    acked: Mutex<u64>,
    stages: Mutex<Stages>,
    /// Request → answer of the writes answered with success (`nc_write_latency_seconds`).
    write_latency: soc_ctl::metrics::Histogram,
    next_client: AtomicU32,
    engine: Option<Arc<EngineWatch>>,
    /// What clients must `AUTH` with (and what this node sends to its peers' fronts).
    password: Option<Password>,
    /// Packet tags for the requests this node's fronts propose (cluster.toml `[auth]`).
    packet_auth: std::sync::OnceLock<ClientAuth>,
    /// Writes proposed together ([`Node::set_proposals`]; [`DEFAULT_PROPOSALS`] until set).
    proposer: std::sync::OnceLock<Arc<Proposer<Pending>>>,
}

/// What a front keeps with a write queued for a lane, to answer it.
struct Pending {
    t0: Instant,
    answer: Answer,
}

enum Answer {
    /// A write whose reply is fixed: the lane answers the connection itself.
    Fixed { reply: Value, conn: Arc<ConnOut> },
    /// The session waits for the decision (its reply comes from the local replica).
    Wait(Arc<Waiting>),
}

struct Waiting {
    done: std::sync::OnceLock<Result<(u64, ReplyKey), String>>,
    thread: std::thread::Thread,
}

/// A connection's outgoing side, shared by whoever runs its commands (the event loop or its
/// session thread) and the lanes that answer its writes.
struct ConnOut {
    out: Mutex<OutBuf>,
    /// The connection's session thread, once it has one (woken when its outstanding write is
    /// answered).
    thread: std::sync::OnceLock<std::thread::Thread>,
    /// The event loop's doorbell and this connection's token there: rung when a write is
    /// answered while the loop holds further commands of the connection.
    bell: Option<(Arc<event_loop::Bell>, u64)>,
}

struct OutBuf {
    stream: TcpStream,
    /// A write answered by a lane and not yet answered on the connection: the session handles
    /// no further command until it is (replies leave in command order).
    outstanding: bool,
    /// Reply bytes a lane could not send without waiting (the client does not read): the
    /// session sends them before anything else, waiting as long as it takes. A lane never
    /// waits for a client.
    backlog: Vec<u8>,
    /// The event loop holds further commands of this connection until the outstanding write
    /// is answered: ring its bell then.
    resume: bool,
}

impl ConnOut {
    fn lock(&self) -> MutexGuard<'_, OutBuf> {
        self.out.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// From the session: wait until no write of this connection is outstanding.
    fn wait_answered(&self) {
        let mut o = self.lock();
        while o.outstanding {
            drop(o);
            std::thread::park_timeout(Duration::from_millis(20));
            o = self.lock();
        }
    }

    /// From the session: wait until no write of this connection is outstanding, then send the
    /// backlog and `bytes`.
    fn send(&self, bytes: &[u8]) -> io::Result<()> {
        self.wait_answered();
        let mut o = self.lock();
        if !o.backlog.is_empty() {
            let b = std::mem::take(&mut o.backlog);
            o.stream.write_all(&b)?;
        }
        if !bytes.is_empty() {
            o.stream.write_all(bytes)?;
        }
        Ok(())
    }

    /// From a lane: the outstanding write's reply, sent without waiting (what the socket does
    /// not take goes to the backlog).
    fn answer(&self, reply: &Value) {
        let bytes = reply.to_bytes();
        let mut o = self.lock();
        o.outstanding = false;
        let mut at = 0;
        if o.backlog.is_empty() {
            use std::os::fd::AsRawFd;
            while at < bytes.len() {
                match nix::sys::socket::send(
                    o.stream.as_raw_fd(),
                    &bytes[at..],
                    nix::sys::socket::MsgFlags::MSG_DONTWAIT
                        | nix::sys::socket::MsgFlags::MSG_NOSIGNAL,
                ) {
                    Ok(n) => at += n,
                    Err(nix::errno::Errno::EINTR) => {}
                    // Would block (or the client is gone: the session's next read says so).
                    Err(_) => break,
                }
            }
        }
        o.backlog.extend_from_slice(&bytes[at..]);
        let resume = std::mem::take(&mut o.resume);
        drop(o);
        if resume && let Some((bell, token)) = &self.bell {
            bell.ring(*token);
        }
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }
}

/// Proposals a node's fronts have in flight at most by default (`redis-nc --proposals`).
pub const DEFAULT_PROPOSALS: usize = 1;
/// The largest proposal until [`Node::set_proposals`] gives the engine's (its smallest legal
/// MTU leaves more).
const DEFAULT_MAX_PAYLOAD: usize = 1024;

/// How long a write or a read waits for the cluster before it answers `-TRYAGAIN`.
const GIVE_UP: Duration = Duration::from_secs(10);

impl Node {
    /// A node whose replica is `server`, in cluster `cluster` with nodes at `nodes` (client
    /// addresses). With a `password`, its front requires `AUTH` and it authenticates at its
    /// peers' fronts with the same password (a cluster's fronts share one).
    pub fn new(
        node: u8,
        cluster: u32,
        nodes: Vec<SocketAddrV4>,
        reads: Reads,
        server: Arc<RedisServer>,
        engine: Option<Arc<EngineWatch>>,
        password: Option<Password>,
    ) -> Arc<Node> {
        // Client ids of this node: its id in the top byte; the low 24 bits start at a point
        // that differs between runs, and ids the log already holds are skipped.
        let start = SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| {
            d.subsec_nanos() ^ (d.as_secs() as u32).wrapping_mul(2_654_435_761)
        });
        Arc::new(Node {
            node,
            cluster,
            nodes,
            reads,
            server,
            st: Mutex::new(St::default()),
            snapshot_lock: Mutex::new(()),
            barrier: Mutex::new(BarrierState::default()),
            barrier_cv: Condvar::new(),
            acked: Mutex::new(0),
            stages: Mutex::new(Stages::default()),
            write_latency: soc_ctl::metrics::Histogram::default(),
            next_client: AtomicU32::new(start),
            engine,
            password,
            packet_auth: std::sync::OnceLock::new(),
            proposer: std::sync::OnceLock::new(),
        })
    }

    /// Writes proposed together: at most `limit` proposals of this node's fronts in flight, the
    /// writes that arrive meanwhile leave together in the next (0: each write alone, at once);
    /// each at most `max_payload` bytes (`Config::max_entry_payload`). Set once, before the
    /// fronts serve; false if it was already set.
    pub fn set_proposals(&self, limit: usize, max_payload: usize) -> bool {
        self.proposer
            .set(Arc::new(Proposer::new(limit, max_payload)))
            .is_ok()
    }

    fn proposer(&self) -> &Arc<Proposer<Pending>> {
        self.proposer
            .get_or_init(|| Arc::new(Proposer::new(DEFAULT_PROPOSALS, DEFAULT_MAX_PAYLOAD)))
    }

    /// Start the proposer's lanes (once), each with a client of its own.
    fn start_lanes(self: &Arc<Self>) -> io::Result<()> {
        let me = Arc::downgrade(self);
        let done = move |tags: Vec<Pending>, r: Result<Decided, String>| {
            if let Some(n) = me.upgrade() {
                n.decided(tags, r);
            }
        };
        let n = self.clone();
        let client = move || n.client(n.fresh_client_id());
        self.proposer().start(client, Arc::new(done), GIVE_UP)
    }

    /// Tag the requests this node proposes with the cluster's key (`ClusterFile::client_auth`);
    /// set once, before the fronts serve.
    pub fn set_packet_auth(&self, auth: ClientAuth) {
        let _ = self.packet_auth.set(auth);
    }

    /// A proposal client of this node with id `id`, its requests tagged with the cluster's key.
    pub(crate) fn client(&self, id: u32) -> io::Result<Client> {
        Ok(Client::new(self.cluster, id, self.nodes.clone())?
            .with_auth(self.packet_auth.get().cloned()))
    }

    fn lock(&self) -> MutexGuard<'_, St> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The last applied instance.
    pub fn applied(&self) -> u64 {
        self.lock().applied
    }

    fn fresh_client_id(&self) -> u32 {
        let st = self.lock();
        loop {
            let low = self.next_client.fetch_add(1, Ordering::Relaxed) & 0xFF_FFFF;
            let id = (self.node as u32) << 24 | low;
            if low != 0 && !st.our_ids.contains(&id) {
                return id;
            }
        }
    }

    /// Why this front cannot serve now, as the RESP error to answer (`None`: it can).
    fn unavailable(&self) -> Option<Value> {
        unavailable(self, &self.lock())
    }

    /// [`Node::unavailable`] for a command about to start: an engine out only for a moment is
    /// waited for first (until the outage is [`RIDE_OUT`] old).
    fn unavailable_at_start(&self) -> Option<Value> {
        if let Some(w) = &self.engine {
            w.ride_out(self.node, RIDE_OUT);
        }
        self.unavailable()
    }

    /// The lag bound of writes answered at their decision (flow control only: the answer is
    /// the same whatever this says): wait while the local replica is more than [`FAST_LAG`]
    /// instances behind `decided` and applying. The event loop calls it, and every connection
    /// waits meanwhile, so it does not ride out an engine's outage, and a replica that makes no
    /// progress for [`LAG_STUCK`] (its redis-server stopped or hung) is not waited for again
    /// until it applies something: writes keep being answered at their decision.
    fn wait_lag(&self, decided: u64) {
        let target = decided.saturating_sub(FAST_LAG);
        let mut st = self.lock();
        if st.applied >= target || st.lag_stuck == Some(st.applied) {
            return;
        }
        let t0 = Instant::now();
        let (mut seen, mut moved) = (st.applied, t0);
        loop {
            if st.applied >= target || unavailable(self, &st).is_some() {
                return;
            }
            let now = Instant::now();
            if st.applied != seen {
                (seen, moved) = (st.applied, now);
            }
            if now - moved >= LAG_STUCK || now - t0 >= GIVE_UP {
                st.lag_stuck = Some(st.applied);
                tracing::warn!(
                    "redis-nc node {}: the local replica applied nothing for {:?} (applied {}, \
                     {} behind a decided write): writes are answered at their decision without \
                     waiting for it until it applies again",
                    self.node,
                    now - moved,
                    st.applied,
                    decided - st.applied
                );
                return;
            }
            st = self.park_until_applied(st, target, Duration::from_millis(20));
        }
    }

    /// Wait until `instance` is applied; then the reply of `key` if it was executed here.
    fn wait_applied(&self, instance: u64, key: Option<ReplyKey>) -> Result<Option<Value>, Value> {
        let deadline = Instant::now() + GIVE_UP;
        let mut st = self.lock();
        loop {
            if st.applied >= instance {
                return Ok(key.and_then(|k| st.replies.remove(&k)));
            }
            // A replica serving behind an engine out only for a moment (a safe exit and its
            // recovery) waits for it like a command arriving then would (`RIDE_OUT`): what it
            // waits for is decided, and answering TRYAGAIN would make clients retry it
            // elsewhere.
            let out = unavailable(self, &st).filter(|_| {
                !(matches!(st.mode, Mode::Serving)
                    && self
                        .engine
                        .as_ref()
                        .is_some_and(|w| w.briefly_out(self.node, RIDE_OUT)))
            });
            let now = Instant::now();
            let gave_up = out.or_else(|| {
                (now >= deadline).then(|| {
                    Value::Error(format!(
                        "TRYAGAIN Redis-NC node {}: instance {instance} not applied within \
                         {GIVE_UP:?} (applied {}, engine at {:?})",
                        self.node,
                        st.applied,
                        self.engine.as_ref().and_then(|e| e.last_decided())
                    ))
                })
            });
            if let Some(e) = gave_up {
                // Nobody waits for the reply any more: it is not kept when it comes.
                if let Some(k) = key {
                    st.answered.insert(k, instance);
                }
                return Err(e);
            }
            // Woken when the instance is applied or the mode changes; the timeout re-checks
            // what `unavailable` reads from the engine watch.
            let wait = (deadline - now).min(Duration::from_millis(20));
            st = self.park_until_applied(st, instance, wait);
        }
    }

    /// Sleep until `instance` is applied (the apply loop wakes this thread) or for `at_most`,
    /// registered once among the waiters (a wake-up takes the registration with it); the
    /// state, locked again.
    fn park_until_applied<'a>(
        &'a self,
        mut st: MutexGuard<'a, St>,
        instance: u64,
        at_most: Duration,
    ) -> MutexGuard<'a, St> {
        let me = std::thread::current();
        let list = st.waiters.entry(instance).or_default();
        if !list.iter().any(|t| t.id() == me.id()) {
            list.push(me);
        }
        drop(st);
        std::thread::park_timeout(at_most);
        self.lock()
    }

    /// Wake the fronts waiting for an instance now applied (`all`: every waiter, after a mode
    /// change).
    fn wake(&self, st: &mut St, all: bool) {
        let later = if all {
            BTreeMap::new()
        } else {
            st.waiters.split_off(&(st.applied + 1))
        };
        for t in std::mem::replace(&mut st.waiters, later)
            .into_values()
            .flatten()
        {
            t.unpark();
        }
    }

    /// [`Node::wake`] every waiter.
    fn wake_all(&self) {
        let mut st = self.lock();
        self.wake(&mut st, true);
    }

    /// The instance a read must see: a read barrier decided after the read began (shared by
    /// every read that began before it was sent).
    fn read_barrier(&self, client: &mut Client) -> Result<u64, Value> {
        let mut b = self.barrier.lock().unwrap_or_else(|p| p.into_inner());
        let mine = b.started + 1;
        loop {
            if b.completed >= mine {
                return Ok(b.instance);
            }
            if let Some((g, e)) = &b.error
                && *g >= mine
            {
                return Err(Value::Error(format!(
                    "TRYAGAIN Redis-NC node {}: read barrier not decided: {e}",
                    self.node
                )));
            }
            if !b.in_flight {
                b.in_flight = true;
                b.started = mine;
                b.sent += 1;
                drop(b);
                let r = client.request(0, &[], GIVE_UP);
                b = self.barrier.lock().unwrap_or_else(|p| p.into_inner());
                b.in_flight = false;
                match r {
                    Ok(ok) => {
                        b.completed = mine;
                        b.instance = b.instance.max(ok.instance);
                    }
                    Err(e) => b.error = Some((mine, e.to_string())),
                }
                self.barrier_cv.notify_all();
                continue;
            }
            b = self.barrier_cv.wait(b).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Propose a write; answer it when its instance is applied here, or — for a write whose
    /// reply is `fixed` (does not depend on the state: [`fixed_reply`]) — as soon as it is
    /// decided, while the local replica is at most [`FAST_LAG`] instances behind. None: a lane
    /// answers it on `conn` (a fixed reply, writes proposed together).
    fn write(
        self: &Arc<Self>,
        client: &mut Client,
        conn: &Arc<ConnOut>,
        payload: Vec<u8>,
        fixed: Option<Value>,
    ) -> Option<Value> {
        if let Some(e) = self.unavailable_at_start() {
            return Some(e);
        }
        let t0 = Instant::now();
        let proposer = self.proposer().clone();
        let decided = if proposer.shares(payload.len()) && proposer.try_direct() {
            let r = send_alone(client, &payload);
            proposer.release();
            r
        } else if proposer.shares(payload.len()) {
            if let Err(e) = self.start_lanes() {
                return Some(Value::Error(format!(
                    "TRYAGAIN Redis-NC node {}: cannot start proposing: {e}",
                    self.node
                )));
            }
            if let Some(reply) = fixed {
                conn.lock().outstanding = true;
                let answer = Answer::Fixed {
                    reply,
                    conn: conn.clone(),
                };
                proposer.push(payload, Pending { t0, answer });
                return None;
            }
            let w = Arc::new(Waiting {
                done: std::sync::OnceLock::new(),
                thread: std::thread::current(),
            });
            let answer = Answer::Wait(w.clone());
            proposer.push(payload, Pending { t0, answer });
            loop {
                if let Some(r) = w.done.get() {
                    break r.clone();
                }
                std::thread::park_timeout(Duration::from_millis(20));
            }
        } else {
            proposer.count_alone();
            send_alone(client, &payload)
        };
        let (instance, key) = match decided {
            Ok(x) => x,
            Err(e) => return Some(self.not_acknowledged(&e)),
        };
        let t1 = Instant::now();
        if let Some(reply) = fixed {
            return Some(self.fixed_decided(instance, key, t0, t1, reply));
        }
        let applied = self.wait_applied(instance, Some(key));
        if applied.is_ok() {
            let t2 = Instant::now();
            let mut s = self.stages.lock().unwrap_or_else(|p| p.into_inner());
            s.writes += 1;
            s.propose_ns += (t1 - t0).as_nanos() as u64;
            s.apply_wait_ns += (t2 - t1).as_nanos() as u64;
            drop(s);
            self.write_latency.observe(t2 - t0);
        }
        Some(match applied {
            Ok(Some(r)) => {
                let mut a = self.acked.lock().unwrap_or_else(|p| p.into_inner());
                *a = (*a).max(instance);
                r
            }
            // Applied without a reply here: in a snapshot this node installed, or as a
            // retransmission decided twice (its reply went to the first decision).
            Ok(None) if instance <= self.lock().snapshot_at => Value::Error(format!(
                "ERR Redis-NC: decided at instance {instance} and applied, but its reply is \
                 unknown here (this replica installed a snapshot past it)"
            )),
            Ok(None) => Value::Simple("OK".into()),
            Err(e) => self.decided_unanswered(instance, e),
        })
    }

    /// The answer to a write decided at `instance` whose reply this replica could not produce
    /// (`e`: why it did not apply the write in time). Not `TRYAGAIN`: the write takes effect on
    /// every replica, and a client that retried it would apply it twice.
    fn decided_unanswered(&self, instance: u64, e: Value) -> Value {
        let why = match e {
            Value::Error(s) => s,
            other => format!("{other:?}"),
        };
        // Without its TRYAGAIN / CLUSTERDOWN prefix.
        let why = why.split_once(' ').map_or(why.as_str(), |(_, rest)| rest);
        Value::Error(format!(
            "ERR Redis-NC node {}: decided at instance {instance}, so it takes effect on every \
             replica, but not applied here ({why}): its reply is unknown, and a retry would \
             apply it twice",
            self.node
        ))
    }

    /// The answer to a write no leader acknowledged (`why`).
    fn not_acknowledged(&self, why: &str) -> Value {
        self.unavailable().unwrap_or_else(|| {
            Value::Error(format!(
                "TRYAGAIN Redis-NC node {}: no leader acknowledged the write ({why}); it may \
                 still take effect",
                self.node
            ))
        })
    }

    /// A write with a fixed reply was decided at `instance` (proposed at `t0`, decided at
    /// `t1`): its answer. Decided is durable: every replica applies it at `instance`, and a
    /// later read (a barrier decided after it, or `acked` for local reads) waits for that. Only
    /// the local replica's lag is bounded, so that it cannot fall ever further behind.
    fn fixed_decided(
        &self,
        instance: u64,
        key: ReplyKey,
        t0: Instant,
        t1: Instant,
        reply: Value,
    ) -> Value {
        // Decided is durable and the reply is fixed: if the replica cannot catch up now (its
        // engine is out, its apply stopped or stuck), the answer is still the reply, not an
        // error a client would retry.
        self.wait_lag(instance);
        self.fixed_answered(instance, key, t0, t1, reply)
    }

    /// [`Node::fixed_decided`] once the local replica is close enough: the bookkeeping.
    fn fixed_answered(
        &self,
        instance: u64,
        key: ReplyKey,
        t0: Instant,
        t1: Instant,
        reply: Value,
    ) -> Value {
        {
            let mut st = self.lock();
            if st.replies.remove(&key).is_none() && st.applied < instance {
                st.answered.insert(key, instance);
            }
        }
        let mut a = self.acked.lock().unwrap_or_else(|p| p.into_inner());
        *a = (*a).max(instance);
        drop(a);
        let mut s = self.stages.lock().unwrap_or_else(|p| p.into_inner());
        s.writes += 1;
        s.decided_writes += 1;
        s.propose_ns += (t1 - t0).as_nanos() as u64;
        drop(s);
        self.write_latency.observe(t0.elapsed());
        reply
    }

    /// A lane's proposal was decided (or not): answer the writes it carried.
    fn decided(&self, tags: Vec<Pending>, r: Result<Decided, String>) {
        let t1 = Instant::now();
        // The replica's lag is waited for once for the whole proposal; decided, its fixed
        // replies are answered whatever that wait says (see `fixed_decided`).
        let fixed = tags
            .iter()
            .any(|p| matches!(p.answer, Answer::Fixed { .. }));
        if let Ok(d) = &r
            && fixed
        {
            self.wait_lag(d.instance);
        }
        for (i, p) in tags.into_iter().enumerate() {
            match p.answer {
                Answer::Fixed { reply, conn } => {
                    let v = match &r {
                        Err(e) => self.not_acknowledged(e),
                        Ok(d) => self.fixed_answered(d.instance, d.key(i), p.t0, t1, reply),
                    };
                    conn.answer(&v);
                }
                Answer::Wait(w) => {
                    let _ = w.done.set(r.clone().map(|d| (d.instance, d.key(i))));
                    w.thread.unpark();
                }
            }
        }
    }

    fn read(&self, client: &mut Client, local: &mut Conn, cmd: &Value) -> io::Result<Value> {
        if let Some(e) = self.unavailable_at_start() {
            return Ok(e);
        }
        let upto = match self.reads {
            Reads::Local => *self.acked.lock().unwrap_or_else(|p| p.into_inner()),
            Reads::Linearizable => match self.read_barrier(client) {
                Ok(i) => i,
                Err(e) => return Ok(e),
            },
        };
        if let Err(e) = self.wait_applied(upto, None) {
            return Ok(e);
        }
        match local.call(cmd) {
            Ok(v) => Ok(v),
            // The server was restarted (a snapshot was installed): one new connection.
            Err(_) => {
                *local = self.server.connect()?;
                local.call(cmd)
            }
        }
    }

    /// The `# Nanoconsensus` section of INFO.
    fn info(&self) -> String {
        let st = self.lock();
        let b = self.barrier.lock().unwrap_or_else(|p| p.into_inner());
        let mode = match &st.mode {
            Mode::Serving => "serving".to_string(),
            Mode::Transferring { need, .. } => format!("transferring (lacks instance {need})"),
            Mode::Stopped(why) => format!("stopped ({why})"),
        };
        let engine = self
            .engine
            .as_ref()
            .map_or("not watched (no --engine-ctl)".to_string(), |e| {
                e.describe()
            });
        let f = st.feed;
        let g = *self.stages.lock().unwrap_or_else(|p| p.into_inner());
        let p = self.proposer().stats();
        let decided = self.engine.as_ref().and_then(|e| e.last_decided());
        let lag = decided.map_or("unknown".to_string(), |l| {
            l.saturating_sub(st.applied).to_string()
        });
        format!(
            "# Nanoconsensus\r\nnc_node:{}\r\nnc_mode:{mode}\r\nnc_engine:{engine}\r\n\
             nc_applied:{}\r\nnc_engine_decided:{}\r\nnc_lag:{lag}\r\nnc_reads:{}\r\n\
             nc_host_copies:{}\r\nnc_gaps:{}\r\nnc_repairs:{}\r\nnc_repaired_instances:{}\r\n\
             nc_unrepairable:{}\r\nnc_transfers:{}\r\nnc_snapshot_at:{}\r\n\
             nc_snapshots_served:{}\r\nnc_read_barriers:{}\r\n\
             nc_stage_writes:{}\r\nnc_stage_propose_ns:{}\r\nnc_stage_apply_wait_ns:{}\r\n\
             nc_stage_apply_batches:{}\r\nnc_stage_apply_instances:{}\r\nnc_stage_apply_ns:{}\r\n\
             nc_stage_decided_writes:{}\r\nnc_stage_proposals:{}\r\nnc_stage_proposed_writes:{}\r\n",
            self.node,
            st.applied,
            decided.map_or("unknown".to_string(), |l| l.to_string()),
            match self.reads {
                Reads::Linearizable => "linearizable",
                Reads::Local => "local (read-your-writes per front)",
            },
            f.received,
            f.gaps,
            f.repairs,
            f.repaired,
            f.unrepairable,
            st.transfers,
            st.snapshot_at,
            st.snapshots_served,
            b.sent,
            g.writes,
            g.propose_ns,
            g.apply_wait_ns,
            g.apply_batches,
            g.apply_instances,
            g.apply_ns,
            g.decided_writes,
            p.proposals,
            p.writes,
        )
    }

    /// The Prometheus page of `redis-nc --metrics`: what INFO nanoconsensus shows, as metrics
    /// with a `node` label, and the write latency histogram.
    pub fn metrics_text(&self) -> String {
        let node = self.node.to_string();
        let l: &[(&str, &str)] = &[("node", &node)];
        let (applied, mode, f, transfers, snapshot_at, served) = {
            let st = self.lock();
            let mode = match &st.mode {
                Mode::Serving => "serving",
                Mode::Transferring { .. } => "transferring",
                Mode::Stopped(_) => "stopped",
            };
            (
                st.applied,
                mode,
                st.feed,
                st.transfers,
                st.snapshot_at,
                st.snapshots_served,
            )
        };
        let barriers = self.barrier.lock().unwrap_or_else(|p| p.into_inner()).sent;
        let g = *self.stages.lock().unwrap_or_else(|p| p.into_inner());
        let p = self.proposer().stats();
        let decided = self.engine.as_ref().and_then(|e| e.last_decided());
        let mut t = soc_ctl::metrics::Text::new();
        crate::metrics::apply_and_feed(&mut t, l, applied, decided, &f);
        t.family(
            "nc_mode",
            "gauge",
            "The front's mode: serving, transferring or stopped (the label; the value is 1).",
        );
        t.sample("nc_mode", &[("node", &node), ("mode", mode)], 1);
        let reads = match self.reads {
            Reads::Linearizable => "linearizable",
            Reads::Local => "local",
        };
        t.one(
            "nc_reads",
            "gauge",
            "How reads are served (the label; the value is 1).",
            &[("node", &node), ("reads", reads)],
            1,
        );
        let counters: [(&str, &str, u64); 12] = [
            (
                "nc_transfers_total",
                "Snapshots installed from a peer.",
                transfers,
            ),
            (
                "nc_snapshots_served_total",
                "Snapshots served to peers.",
                served,
            ),
            (
                "nc_read_barriers_total",
                "Read barriers proposed.",
                barriers,
            ),
            ("nc_stage_writes_total", "Writes answered.", g.writes),
            (
                "nc_stage_decided_writes_total",
                "Writes answered at their decision.",
                g.decided_writes,
            ),
            (
                "nc_stage_propose_ns_total",
                "Sum over writes of request to the leader's OK, ns.",
                g.propose_ns,
            ),
            (
                "nc_stage_apply_wait_ns_total",
                "Sum over writes of the leader's OK to applied here, ns.",
                g.apply_wait_ns,
            ),
            (
                "nc_stage_apply_batches_total",
                "Pipelined writes of the apply loop.",
                g.apply_batches,
            ),
            (
                "nc_stage_apply_instances_total",
                "Instances applied by those batches.",
                g.apply_instances,
            ),
            (
                "nc_stage_apply_ns_total",
                "Time in redis-server applying, ns.",
                g.apply_ns,
            ),
            (
                "nc_stage_proposals_total",
                "Proposals sent to the leader (writes proposed together count once).",
                p.proposals,
            ),
            (
                "nc_stage_proposed_writes_total",
                "Writes those proposals carried.",
                p.writes,
            ),
        ];
        for (name, help, v) in counters {
            t.one(name, "counter", help, l, v);
        }
        t.one(
            "nc_snapshot_at_instance",
            "gauge",
            "Instance of the last snapshot installed (0: none).",
            l,
            snapshot_at,
        );
        t.histogram(
            "nc_write_latency_seconds",
            "Writes answered with success: request to answer at this front.",
            l,
            &self.write_latency,
        );
        t.finish()
    }

    /// `NC.SNAPSHOT` from a peer: the state after one instance, as (instance, exactly-once
    /// record, RDB). The apply loop forks redis-server (BGSAVE) between two instances and goes
    /// on at once; the RDB is read when the fork finished writing it.
    fn serve_snapshot(&self) -> Value {
        let _one_at_a_time = self.snapshot_lock.lock().unwrap_or_else(|p| p.into_inner());
        let err = |m: String| Value::Error(format!("ERR Redis-NC snapshot: {m}"));
        let rx = {
            let mut st = self.lock();
            if st.mode != Mode::Serving {
                return err(format!("node {} is not serving ({:?})", self.node, st.mode));
            }
            let (tx, rx) = mpsc::channel();
            st.snap_wanted = Some(tx);
            rx
        };
        let (instance, dedupe) = match rx.recv_timeout(GIVE_UP) {
            Ok(Ok(x)) => x,
            Ok(Err(e)) => return err(e.to_string()),
            Err(_) => return err("the apply loop did not answer".into()),
        };
        let rdb = (|| -> io::Result<Vec<u8>> {
            let mut c = self.server.connect()?;
            let t0 = Instant::now();
            while !bgsave_done(&mut c)? {
                if t0.elapsed() > Duration::from_secs(300) {
                    return Err(io::Error::other("BGSAVE still running after 300 s"));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let path = self.server.rdb_path();
            let b = std::fs::read(&path)?;
            let _ = std::fs::remove_file(&path);
            Ok(b)
        })();
        let rdb = match rdb {
            Ok(b) if b.len() > resp::MAX_BULK => {
                return err(format!(
                    "the dataset's RDB is {} bytes, more than a transfer carries ({} bytes)",
                    b.len(),
                    resp::MAX_BULK
                ));
            }
            Ok(b) => b,
            Err(e) => return err(e.to_string()),
        };
        self.lock().snapshots_served += 1;
        Value::Array(Some(vec![
            Value::Integer(instance as i64),
            Value::Bulk(Some(dedupe)),
            Value::Bulk(Some(rdb)),
        ]))
    }
}

fn unavailable(n: &Node, st: &St) -> Option<Value> {
    let node = n.node;
    match &st.mode {
        Mode::Serving => {}
        Mode::Transferring { need, last_error } => {
            return Some(Value::Error(format!(
                "TRYAGAIN Redis-NC node {node}: its replica is loading a snapshot from a peer \
                 (it lacks instance {need}){}",
                last_error
                    .as_ref()
                    .map_or(String::new(), |e| format!("; last attempt: {e}"))
            )));
        }
        Mode::Stopped(why) => {
            return Some(Value::Error(format!(
                "CLUSTERDOWN Redis-NC node {node}: apply stopped: {why}"
            )));
        }
    }
    match n.engine.as_ref()?.out(node)? {
        Out::Transient(why) => Some(Value::Error(format!("TRYAGAIN Redis-NC {why}"))),
        Out::Down(why) => Some(Value::Error(format!("CLUSTERDOWN Redis-NC {why}"))),
    }
}

/// Ask a peer's front for a snapshot: (instance, exactly-once record, RDB). With a `password`,
/// `AUTH` first.
pub fn fetch_snapshot(
    peer: SocketAddr,
    password: Option<&Password>,
) -> io::Result<(u64, Applier, Vec<u8>)> {
    let s = TcpStream::connect_timeout(&peer, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(330)))?;
    let mut c = Conn::new(Box::new(s));
    let bad = |m: String| io::Error::other(format!("peer {peer}: {m}"));
    if let Some(p) = password {
        match c.call(&Value::command(&[b"AUTH", p.as_bytes()]))? {
            Value::Simple(ok) if ok == "OK" => {}
            Value::Error(e) => return Err(bad(format!("AUTH refused: {e}"))),
            other => return Err(bad(format!("AUTH answered {other:?}"))),
        }
    }
    match c.call(&Value::command(&[b"NC.SNAPSHOT"]))? {
        Value::Array(Some(v)) => match v.as_slice() {
            [
                Value::Integer(i),
                Value::Bulk(Some(dedupe)),
                Value::Bulk(Some(rdb)),
            ] if *i >= 0 => {
                let a = Applier::decode(dedupe).map_err(|e| bad(e.to_string()))?;
                Ok((*i as u64, a, rdb.clone()))
            }
            _ => Err(bad("malformed snapshot".into())),
        },
        Value::Error(e) => Err(bad(e)),
        other => Err(bad(format!("unexpected answer {other:?}"))),
    }
}

/// Most decided instances applied in one pipelined write.
const APPLY_BATCH: usize = 256;

/// Apply instance `i` and every decision after it that is already here, in one pipelined write
/// (counted in the `nc_stage_apply_*` figures).
fn apply_ready(
    node: &Node,
    feed: &mut Feed,
    applier: &mut RedisApplier,
    i: u64,
    l: Arc<Logged>,
) -> io::Result<Vec<Applied>> {
    let mut batch = vec![(i, l)];
    while batch.len() < APPLY_BATCH
        && let Some(d) = feed.next_ready(i + batch.len() as u64 - 1)
    {
        batch.push(d);
    }
    let t = Instant::now();
    let r = applier.apply_many(&batch);
    let mut g = node.stages.lock().unwrap_or_else(|p| p.into_inner());
    g.apply_batches += 1;
    g.apply_instances += batch.len() as u64;
    g.apply_ns += t.elapsed().as_nanos() as u64;
    r
}

/// Run the apply loop: decisions from `feed` applied to the local replica, snapshots taken
/// for peers, and a snapshot installed from `peers` when the feed cannot be repaired.
pub fn apply_loop(
    node: Arc<Node>,
    mut feed: Feed,
    mut applier: RedisApplier,
    peers: Vec<SocketAddr>,
) {
    let mut last_stats = Instant::now();
    loop {
        let wanted = node.lock().snap_wanted.take();
        if let Some(tx) = wanted {
            let _ = tx.send(applier.bgsave());
        }
        match feed.next(applier.applied, Duration::from_millis(5)) {
            Next::Decision(i, l) => match apply_ready(&node, &mut feed, &mut applier, i, l) {
                Ok(done) => {
                    let mut st = node.lock();
                    for a in done {
                        if a.client_id >> 24 == node.node as u32 {
                            st.our_ids.insert(a.client_id);
                            // Only this node's fronts wait for replies (not for those they
                            // answered at the decision).
                            let mut keep = |k: ReplyKey, r: Value| {
                                if st.answered.remove(&k).is_none() {
                                    st.replies.insert(k, r);
                                }
                            };
                            match (a.reply, a.batch) {
                                (Some(Value::Array(Some(rs))), true) => {
                                    for (i, r) in rs.into_iter().enumerate() {
                                        keep((a.client_id, a.seq, Some(i as u16)), r);
                                    }
                                }
                                (Some(r), _) => keep((a.client_id, a.seq, None), r),
                                (None, _) => {}
                            }
                        }
                    }
                    st.applied = applier.applied;
                    if last_stats.elapsed() > Duration::from_millis(10) {
                        st.feed = feed.stats;
                        last_stats = Instant::now();
                    }
                    node.wake(&mut st, false);
                }
                Err(e) => {
                    let why = format!("redis-server: {e}");
                    tracing::error!("redis-nc: apply stopped: {why}");
                    node.lock().mode = Mode::Stopped(why);
                    node.wake_all();
                    return;
                }
            },
            Next::Idle => {
                node.lock().feed = feed.stats;
            }
            Next::Behind { need, engine_first } => {
                if peers.is_empty() {
                    let why = format!(
                        "instance {need} is lost for this node (its engine holds from {engine_first:?}) \
                         and no --peer was given to take a snapshot from"
                    );
                    tracing::error!("redis-nc: {why}");
                    node.lock().mode = Mode::Stopped(why);
                    node.wake_all();
                    // Stay up for INFO; a snapshot cannot come.
                    loop {
                        std::thread::sleep(Duration::from_secs(3600));
                    }
                }
                {
                    let mut st = node.lock();
                    st.feed = feed.stats;
                    if !matches!(st.mode, Mode::Transferring { .. }) {
                        st.mode = Mode::Transferring {
                            need,
                            last_error: None,
                        };
                    }
                }
                node.wake_all();
                let applied = applier.applied;
                match feed.while_transferring(|| transfer(&node, &peers, need, applied)) {
                    Ok(a) => applier = a,
                    Err(e) => {
                        tracing::warn!(
                            instance = need,
                            "redis-nc: snapshot for instance {need}: {e}"
                        );
                        node.lock().mode = Mode::Transferring {
                            need,
                            last_error: Some(e),
                        };
                        std::thread::sleep(Duration::from_millis(200));
                    }
                }
            }
        }
    }
}

/// Take a snapshot from the first peer that covers `need − 1` (else the most advanced one
/// ahead of `applied`), install it, and go on from there.
fn transfer(
    node: &Node,
    peers: &[SocketAddr],
    need: u64,
    applied: u64,
) -> Result<RedisApplier, String> {
    let mut errors = Vec::new();
    let mut best: Option<(u64, Applier, Vec<u8>, SocketAddr)> = None;
    for p in peers {
        match fetch_snapshot(*p, node.password.as_ref()) {
            Ok((i, a, rdb)) => {
                let covers = i + 1 >= need;
                if i > applied && best.as_ref().is_none_or(|b| i > b.0) {
                    best = Some((i, a, rdb, *p));
                }
                if covers {
                    break;
                }
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    let Some((instance, dedupe, rdb, peer)) = best else {
        return Err(if errors.is_empty() {
            format!("no peer is ahead of instance {applied}")
        } else {
            errors.join("; ")
        });
    };
    node.server
        .restart_with(&rdb)
        .map_err(|e| format!("redis-server on the snapshot: {e}"))?;
    let conn = node.server.connect().map_err(|e| e.to_string())?;
    {
        let mut st = node.lock();
        st.our_ids
            .extend(dedupe.client_ids().filter(|c| c >> 24 == node.node as u32));
        st.applied = instance;
        st.snapshot_at = instance;
        // Writes up to the snapshot are never applied here: no reply of theirs comes.
        st.answered.retain(|_, at| *at > instance);
        st.transfers += 1;
        st.mode = Mode::Serving;
    }
    node.wake_all();
    tracing::info!(
        node = node.node,
        instance,
        "redis-nc: node {}: installed a snapshot of instance {instance} from {peer} ({} bytes of RDB)",
        node.node,
        rdb.len()
    );
    Ok(RedisApplier::from_snapshot(conn, instance, dedupe))
}

/// Commands decided through consensus. EXPIRE is rewritten to an absolute PEXPIREAT so every
/// replica expires the key at the same instant.
const WRITES: &[&str] = &[
    "SET",
    "SETNX",
    "DEL",
    "INCR",
    "INCRBY",
    "DECR",
    "DECRBY",
    "APPEND",
    "HSET",
    "HDEL",
    "LPUSH",
    "RPUSH",
    "SADD",
    "SREM",
    "MSET",
    "EXPIRE",
    "PEXPIREAT",
];
/// Commands served by the local replica.
const READS: &[&str] = &[
    "GET",
    "MGET",
    "EXISTS",
    "STRLEN",
    "HGET",
    "HGETALL",
    "HLEN",
    "LRANGE",
    "LLEN",
    "SMEMBERS",
    "SCARD",
    "SISMEMBER",
    "TTL",
    "PTTL",
    "TYPE",
    "DBSIZE",
    "INFO",
    "DEBUG",
];
/// Commands answered without the replica's data (no barrier).
const LOCAL: &[&str] = &["PING", "ECHO", "COMMAND", "CONFIG", "CLIENT", "SELECT"];

/// The list of supported commands (for the README and errors).
pub fn supported() -> (Vec<&'static str>, Vec<&'static str>) {
    (
        WRITES.to_vec(),
        READS.iter().chain(LOCAL).copied().collect(),
    )
}

/// A write answered at its decision may leave the local replica at most this many instances
/// behind (beyond it, the write waits for the replica: flow control for the apply loop).
const FAST_LAG: u64 = 64;

/// A replica that applies nothing for this long while writes wait for it is taken as stuck
/// (see `Node::wait_lag`); a healthy one applies within milliseconds.
const LAG_STUCK: Duration = Duration::from_millis(500);

/// The reply of a write that cannot depend on the state or fail once decided: a plain
/// `SET key value` and `MSET` are always `+OK` (redis-nc runs redis-server without maxmemory,
/// the one way they could fail). Everything else waits for its own result.
fn fixed_reply(args: &[&[u8]]) -> Option<Value> {
    let name = String::from_utf8_lossy(args[0]).to_ascii_uppercase();
    match name.as_str() {
        "SET" if args.len() == 3 => Some(Value::Simple("OK".into())),
        "MSET" if args.len() >= 3 && args.len() % 2 == 1 => Some(Value::Simple("OK".into())),
        _ => None,
    }
}

/// A write command ready to propose (EXPIRE rewritten), or an error reply.
fn prepare_write(args: &[&[u8]]) -> Result<Vec<u8>, Value> {
    let name = String::from_utf8_lossy(args[0]).to_ascii_uppercase();
    if name == "SET" && args.len() > 3 {
        let opts: Vec<String> = args[3..]
            .iter()
            .map(|a| String::from_utf8_lossy(a).to_ascii_uppercase())
            .collect();
        if opts.iter().any(|o| o != "NX" && o != "XX") {
            return Err(Value::Error(
                "ERR Redis-NC: SET options other than NX/XX are not deterministic; use SET then PEXPIREAT".into(),
            ));
        }
    }
    if name == "EXPIRE" {
        if args.len() != 3 {
            return Err(Value::Error(
                "ERR wrong number of arguments for 'expire' command".into(),
            ));
        }
        let secs: i64 = std::str::from_utf8(args[2])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| Value::Error("ERR value is not an integer or out of range".into()))?;
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let at = (now_ms + secs.saturating_mul(1000)).to_string();
        return Ok(Value::command(&[b"PEXPIREAT", args[1], at.as_bytes()]).to_bytes());
    }
    let mut out = Vec::new();
    resp::encode_command(args, &mut out);
    Ok(out)
}

/// Redis's answer to a command sent before a successful `AUTH` while a password is set.
pub const NOAUTH: &str = "NOAUTH Authentication required.";
/// Redis's answer to a wrong password (or to a user other than `default`).
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
/// Redis's answer to `AUTH password` when no password is set.
pub const AUTH_WITHOUT_PASSWORD: &str = "ERR AUTH <password> called without any password \
     configured for the default user. Are you sure your configuration is correct?";

/// Most bytes an unauthenticated connection may send before its command is complete (an `AUTH`
/// is far smaller; without a limit anyone could make the front buffer 64 MiB per connection).
const PRE_AUTH_MAX: usize = 64 * 1024;

/// The authentication gate of a RESP connection, before the command `args` runs. `Some(reply)`:
/// the gate answers the command (AUTH always; every other command but QUIT while a `password`
/// is set and the connection has not authenticated, with [`NOAUTH`]). `None`: the command goes
/// on. `authed` is the connection's state; a successful AUTH sets it, a failed one leaves it.
/// As Redis's `requirepass`: `AUTH password` and `AUTH default password`; there are no other
/// users (any other name is [`WRONGPASS`]); without a password `AUTH password` is an error and
/// `AUTH default anything` succeeds (Redis's default user is then `nopass`).
pub fn resp_gate(password: Option<&Password>, authed: &mut bool, args: &[&[u8]]) -> Option<Value> {
    let name = args.first()?;
    if name.eq_ignore_ascii_case(b"AUTH") {
        let (user, attempt) = match args {
            [_, p] => (None, *p),
            [_, u, p] => (Some(*u), *p),
            [_] => {
                return Some(Value::Error(
                    "ERR wrong number of arguments for 'auth' command".into(),
                ));
            }
            _ => return Some(Value::Error("ERR syntax error".into())),
        };
        // Redis's user names are case-sensitive.
        let default_user = user.is_none_or(|u| u == b"default");
        let ok = match password {
            None if user.is_none() => return Some(Value::Error(AUTH_WITHOUT_PASSWORD.into())),
            None => default_user,
            // Compared whatever the user name, so the time tells nothing.
            Some(p) => p.matches(attempt) & default_user,
        };
        if ok {
            *authed = true;
            return Some(Value::Simple("OK".into()));
        }
        return Some(Value::Error(WRONGPASS.into()));
    }
    if password.is_some() && !*authed && !name.eq_ignore_ascii_case(b"QUIT") {
        return Some(Value::Error(NOAUTH.into()));
    }
    None
}

/// Propose one write alone with a session's own `client`: its decision and reply key.
fn send_alone(client: &mut Client, payload: &[u8]) -> Result<(u64, ReplyKey), String> {
    let instance = crate::propose::send(client, payload, GIVE_UP)?;
    Ok((instance, Decided::alone(instance, client).key(0)))
}

/// Serve RESP clients on `listener` until the process ends (one event loop; see the
/// `front::event_loop` module).
pub fn serve(listener: TcpListener, node: Arc<Node>) {
    if let Err(e) = event_loop::run(listener, node) {
        // Not a node without a front: exit, so that whoever runs it sees it at once.
        tracing::error!("redis-nc: the front's event loop stopped: {e}");
        std::process::exit(1);
    }
}

/// How a session thread gives its connection back.
enum Flow {
    /// Every command received is answered and nothing more came for [`LINGER`]: the event loop
    /// takes the connection back.
    Idle,
    /// The client closed the connection or QUIT.
    Closed,
}

/// How long a session thread waits for its connection's next command before it gives the
/// connection back to the event loop (a client of reads and other slow commands keeps its
/// thread; a client of plain writes goes back to the loop).
const LINGER: Duration = Duration::from_millis(2);

/// Run the commands of a connection on its session thread: everything the event loop does
/// not run itself (reads, writes answered with their own result, AUTH, …). Returns when the
/// connection is idle or closed; `buf` keeps what was received of a command not yet complete.
#[allow(clippy::too_many_arguments)]
fn run_commands(
    stream: &mut TcpStream,
    node: &Arc<Node>,
    conn: &Arc<ConnOut>,
    local: &mut Conn,
    client: &mut Client,
    buf: &mut Vec<u8>,
    authed: &mut bool,
) -> io::Result<Flow> {
    let mut chunk = [0u8; 16 * 1024];
    let mut out = Vec::new();
    loop {
        // Every command already received is answered before the next read: a pipelining client
        // gets its replies in one write.
        let (cmd, used) = loop {
            match resp::parse(buf) {
                Ok(Some(x)) => break x,
                Ok(None) if node.password.is_some() && !*authed && buf.len() > PRE_AUTH_MAX => {
                    out.extend_from_slice(
                        &Value::Error(format!(
                            "ERR Protocol error: more than {PRE_AUTH_MAX} bytes of a command \
                             before AUTH"
                        ))
                        .to_bytes(),
                    );
                    conn.send(&out)?;
                    return Ok(Flow::Closed);
                }
                Ok(None) => {}
                Err(e) => {
                    out.extend_from_slice(&Value::Error(format!("ERR {e}")).to_bytes());
                    conn.send(&out)?;
                    return Ok(Flow::Closed);
                }
            }
            if !out.is_empty() {
                conn.send(&out)?;
                out.clear();
            }
            if soc_ctl::wait::readable(&[&*stream], LINGER)? == 0 {
                return Ok(Flow::Idle);
            }
            let n = stream.read(&mut chunk)?;
            if n == 0 {
                return Ok(Flow::Closed);
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        buf.drain(..used);
        // A write a lane answers is answered before the next command runs (a read after it on
        // this connection sees it; replies leave in order).
        conn.wait_answered();
        let reply = match cmd.as_command() {
            None => Value::Error("ERR Redis-NC expects commands as arrays of bulk strings".into()),
            Some(args) => {
                let name = String::from_utf8_lossy(args[0]).to_ascii_uppercase();
                if let Some(r) = resp_gate(node.password.as_ref(), authed, &args) {
                    r
                } else if name == "QUIT" {
                    Value::Simple("OK".into()).encode(&mut out);
                    conn.send(&out)?;
                    return Ok(Flow::Closed);
                } else if WRITES.contains(&name.as_str()) {
                    match prepare_write(&args) {
                        Err(e) => e,
                        Ok(payload) => {
                            let fixed = fixed_reply(&args);
                            if fixed.is_some() && node.proposer().shares(payload.len()) {
                                // A lane may answer it: what is answered already goes first.
                                conn.send(&out)?;
                                out.clear();
                            }
                            match node.write(client, conn, payload, fixed) {
                                Some(v) => v,
                                None => continue,
                            }
                        }
                    }
                } else if name == "NC.SNAPSHOT" {
                    node.serve_snapshot()
                } else if name == "DEBUG"
                    && args.get(1).map(|a| a.to_ascii_uppercase()) != Some(b"DIGEST".to_vec())
                {
                    Value::Error("ERR Redis-NC allows only DEBUG DIGEST".into())
                } else if name == "INFO"
                    && args
                        .get(1)
                        .is_some_and(|s| s.eq_ignore_ascii_case(b"nanoconsensus"))
                {
                    Value::Bulk(Some(node.info().into_bytes()))
                } else if name == "INFO" {
                    // redis-server's sections, then ours (even when the replica is out).
                    let theirs = match local.call(&cmd) {
                        Ok(Value::Bulk(Some(b))) => b,
                        _ => Vec::new(),
                    };
                    let mut all = theirs;
                    all.extend_from_slice(b"\r\n");
                    all.extend_from_slice(node.info().as_bytes());
                    Value::Bulk(Some(all))
                } else if READS.contains(&name.as_str()) {
                    node.read(client, local, &cmd)?
                } else if LOCAL.contains(&name.as_str()) {
                    match local.call(&cmd) {
                        Ok(v) => v,
                        Err(_) => {
                            *local = node.server.connect()?;
                            local.call(&cmd)?
                        }
                    }
                } else {
                    Value::Error(format!(
                        "ERR unknown or unsupported command '{name}' in Redis-NC (see host-app/README.md)"
                    ))
                }
            }
        };
        reply.encode(&mut out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only writes whose reply cannot depend on the state are answered at their decision.
    #[test]
    fn only_plain_set_and_mset_have_fixed_replies() {
        let f = |args: &[&str]| {
            let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
            fixed_reply(&a)
        };
        let ok = Some(Value::Simple("OK".into()));
        assert_eq!(f(&["SET", "k", "v"]), ok);
        assert_eq!(f(&["set", "k", "v"]), ok);
        assert_eq!(f(&["MSET", "a", "1", "b", "2"]), ok);
        for args in [
            &["SET", "k", "v", "NX"][..],
            &["SET", "k", "v", "XX"],
            &["MSET", "a"],
            &["MSET", "a", "1", "b"],
            &["INCR", "k"],
            &["DEL", "k"],
            &["SETNX", "k", "v"],
            &["APPEND", "k", "v"],
        ] {
            assert_eq!(f(args), None, "{args:?}");
        }
    }

    fn gate(pw: Option<&str>, authed: &mut bool, args: &[&str]) -> Option<Value> {
        let pw = pw.and_then(Password::new);
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        resp_gate(pw.as_ref(), authed, &a)
    }

    fn err(s: &str) -> Option<Value> {
        Some(Value::Error(s.into()))
    }

    #[test]
    fn without_auth_every_command_is_noauth_except_auth_and_quit() {
        let mut authed = false;
        for cmd in [
            &["PING"][..],
            &["GET", "k"],
            &["SET", "k", "v"],
            &["INFO", "nanoconsensus"],
            &["NC.SNAPSHOT"],
            &["HELLO", "3", "AUTH", "default", "pw"],
            &["auth2", "pw"],
            &["NOSUCHCOMMAND"],
        ] {
            assert_eq!(gate(Some("pw"), &mut authed, cmd), err(NOAUTH), "{cmd:?}");
        }
        assert_eq!(gate(Some("pw"), &mut authed, &["QUIT"]), None);
        assert_eq!(gate(Some("pw"), &mut authed, &["quit"]), None);
        assert!(!authed);
        assert_eq!(
            NOAUTH, "NOAUTH Authentication required.",
            "Redis's exact text"
        );
    }

    #[test]
    fn auth_with_the_password_opens_the_connection() {
        for cmd in [
            &["AUTH", "pw"][..],
            &["auth", "pw"],
            &["AUTH", "default", "pw"],
        ] {
            let mut authed = false;
            assert_eq!(
                gate(Some("pw"), &mut authed, cmd),
                Some(Value::Simple("OK".into()))
            );
            assert!(authed, "{cmd:?}");
            assert_eq!(gate(Some("pw"), &mut authed, &["GET", "k"]), None);
            assert_eq!(gate(Some("pw"), &mut authed, &["PING"]), None);
        }
    }

    #[test]
    fn wrong_passwords_and_other_users_are_wrongpass() {
        for cmd in [
            &["AUTH", "p"][..],
            &["AUTH", "pw "],
            &["AUTH", "PW"],
            &["AUTH", "pwpw"],
            &["AUTH", ""],
            &["AUTH", "Default", "pw"],
            &["AUTH", "admin", "pw"],
            &["AUTH", "default", "nope"],
        ] {
            let mut authed = false;
            assert_eq!(
                gate(Some("pw"), &mut authed, cmd),
                err(WRONGPASS),
                "{cmd:?}"
            );
            assert!(!authed, "{cmd:?}");
            assert_eq!(gate(Some("pw"), &mut authed, &["PING"]), err(NOAUTH));
        }
        assert_eq!(
            WRONGPASS,
            "WRONGPASS invalid username-password pair or user is disabled."
        );
        // A failed AUTH after a good one leaves the connection authenticated (as Redis does).
        let mut authed = false;
        gate(Some("pw"), &mut authed, &["AUTH", "pw"]);
        assert_eq!(
            gate(Some("pw"), &mut authed, &["AUTH", "x"]),
            err(WRONGPASS)
        );
        assert!(authed);
    }

    #[test]
    fn auth_arity_and_no_password_answers_are_redis_s() {
        let mut authed = false;
        assert_eq!(
            gate(Some("pw"), &mut authed, &["AUTH"]),
            err("ERR wrong number of arguments for 'auth' command")
        );
        assert_eq!(
            gate(Some("pw"), &mut authed, &["AUTH", "default", "pw", "x"]),
            err("ERR syntax error")
        );
        assert!(!authed);
        // No password: commands pass, AUTH password is Redis's configuration error, the
        // default user (nopass) takes any password, other users do not exist.
        assert_eq!(gate(None, &mut authed, &["GET", "k"]), None);
        assert_eq!(
            gate(None, &mut authed, &["AUTH", "x"]),
            err(
                "ERR AUTH <password> called without any password configured for the default \
                 user. Are you sure your configuration is correct?"
            )
        );
        assert_eq!(
            gate(None, &mut authed, &["AUTH", "default", "x"]),
            Some(Value::Simple("OK".into()))
        );
        assert_eq!(
            gate(None, &mut authed, &["AUTH", "someone", "x"]),
            err(WRONGPASS)
        );
    }
}
