//! State transfer in the engine: the member side (the *state* thread answers JOIN_REQUESTs over
//! TCP) and the joining side (the engine thread drives proto's [`Joiner`]; a short-lived thread
//! per attempt moves the bytes). The protocol logic is proto's ([`proto::join`]); this file only
//! carries it over sockets.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proto::auth::{self, Keyring};
use proto::join::{self, Ask, JoinError, Joiner, Member, Serve};
use proto::node::State;
use proto::transfer::Snapshot;
use proto::wire::{self, Packet};
use serde_json::{Value, json};

use super::{Cmd, Engine, Reply, Shared, now_ns};

/// Read one packet of ours from a stream (the header's body_len delimits it, plus the tag
/// when its key id is not 0).
pub fn read_packet(s: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut b = vec![0u8; wire::HEADER_LEN];
    s.read_exact(&mut b)?;
    let body = u16::from_be_bytes([b[8], b[9]]) as usize;
    let tag = if b[wire::header_offset::KEY_ID] == 0 {
        0
    } else {
        wire::TAG_LEN
    };
    b.resize(wire::HEADER_LEN + body + tag, 0);
    s.read_exact(&mut b[wire::HEADER_LEN..])?;
    Ok(b)
}

/// The node's packet tags as the state transfer needs them (a copy: the transfer threads do
/// not touch the node).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TransferAuth {
    keys: Keyring,
    mode: u8,
    key: u8,
}

impl TransferAuth {
    pub(super) fn of(node: &proto::node::Node) -> TransferAuth {
        TransferAuth {
            keys: *node.keys(),
            mode: node.config().auth_mode,
            key: node.config().auth_key,
        }
    }

    /// Tag `p` when tags are on.
    fn seal(&self, mut p: Vec<u8>) -> Result<Vec<u8>, String> {
        if self.mode != 0 {
            auth::seal_vec(&mut p, &self.keys, self.key).map_err(|e| e.to_string())?;
        }
        Ok(p)
    }

    /// Check `p`'s tag (untagged is refused while tags are required) and drop it.
    fn open(&self, p: &[u8]) -> Result<Vec<u8>, auth::AuthError> {
        auth::verify(p, &self.keys, self.mode == 2)?;
        Ok(auth::strip(p).into_owned())
    }
}

/// Count a state-transfer connection refused (not from a member, or without a right tag).
fn refused(shared: &Mutex<Shared>) {
    if let Ok(mut sh) = shared.lock() {
        sh.unauthorized_transfers += 1;
    }
}

/// The member side: one thread per connection answers one JOIN_REQUEST. Only members are
/// served: a connection from an address that is no member's (`members`) is closed at once and
/// counted (`unauthorized_transfers` in the engine's status).
pub(super) fn serve_state(
    l: TcpListener,
    shared: Arc<Mutex<Shared>>,
    cluster: u32,
    id: u8,
    members: Vec<Ipv4Addr>,
) {
    for conn in l.incoming() {
        let Ok(mut s) = conn else { continue };
        let member = matches!(s.peer_addr(), Ok(SocketAddr::V4(a)) if members.contains(a.ip()));
        if !member {
            refused(&shared);
            continue;
        }
        let shared = shared.clone();
        std::thread::spawn(move || {
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let Ok(p) = read_packet(&mut s) else { return };
            let tags = shared.lock().map(|sh| sh.auth).unwrap_or_default();
            // A member's address is not enough: with tags on, the request must carry one.
            let Ok(p) = tags.open(&p) else {
                return refused(&shared);
            };
            let Ok((_, Packet::JoinRequest(r))) = wire::parse(&p, cluster) else {
                return;
            };
            // Copy (shared pointers) under the lock; encode outside it, so the engine
            // thread never waits for a transfer.
            let (m, answer) = {
                let sh = shared.lock().expect("state lock");
                let m = Member {
                    id,
                    cluster_id: cluster,
                    lins: sh.lins,
                    serving: sh.active,
                    timeout: sh.timeout,
                };
                let answer = match join::plan(&m, &r) {
                    Serve::Range { from, to } => Ok((to, sh.log.range(from, to))),
                    Serve::Refuse(why) => Err(why),
                };
                (m, answer)
            };
            let packets = match answer {
                Ok((to, range)) => join::chunks(&m, &r, to, &range),
                Err(why) => vec![join::refusal(&m, &r, why)],
            };
            for p in packets {
                let Ok(p) = tags.seal(p) else { return };
                if s.write_all(&p).is_err() {
                    return;
                }
            }
        });
    }
}

/// Send `ask` to `member` over TCP and reassemble the answer with `joiner` (a copy of the
/// engine's, holding this transfer's reassembly).
fn fetch(
    me: Ipv4Addr,
    member: SocketAddrV4,
    cluster: u32,
    tags: TransferAuth,
    ask: &Ask,
    mut joiner: Joiner,
) -> Result<Snapshot, String> {
    let mut s = connect_from(me, member).map_err(|e| format!("connect {member}: {e}"))?;
    // The member encodes the whole snapshot before its first byte leaves (every chunk carries
    // the total's CRC), and its state thread is an ordinary one beside SCHED_FIFO engines: a
    // long log under load took more than the 10 s this was (the soak smoke, debug build, ~25k
    // instances: every attempt timed out, and the log only grew). 30 s, then the next member.
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    s.write_all(&tags.seal(ask.packet.clone())?)
        .map_err(|e| e.to_string())?;
    loop {
        let p = read_packet(&mut s).map_err(|e| format!("state from {member}: {e}"))?;
        // A joiner installs only what a key holder sent.
        let p = tags
            .open(&p)
            .map_err(|e| format!("state from {member} refused: {e}"))?;
        match wire::parse(&p, cluster) {
            Ok((_, Packet::StateChunk(c))) => match joiner.chunk(&c) {
                Ok(Some(snap)) => return Ok(snap),
                Ok(None) if joiner.in_progress() => {}
                Ok(None) => return Err(format!("state from {member}: chunk of another transfer")),
                Err(e) => return Err(format!("state from {member}: {e}")),
            },
            Ok(_) => return Err(format!("state from {member}: unexpected packet")),
            Err(e) => return Err(format!("state from {member}: {e:?}")),
        }
    }
}

/// A TCP connection to `to` from this node's own client address `me` (a member serves only
/// members' addresses; without the bind, loopback would pick 127.0.0.1).
fn connect_from(me: Ipv4Addr, to: SocketAddrV4) -> std::io::Result<TcpStream> {
    use socket2::{Domain, Protocol, SockAddr, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP))?;
    s.bind(&SockAddr::from(SocketAddrV4::new(me, 0)))?;
    s.connect_timeout(&SockAddr::from(to), Duration::from_secs(2))?;
    Ok(s.into())
}

/// The joining side, owned by the engine thread.
#[derive(Default)]
pub(super) struct JoinRun {
    joiner: Joiner,
    gap_joiner: Joiner,
    /// A fetch thread is running.
    fetching: bool,
    /// A snapshot waiting for the node's own log to reach its instance.
    pending: Option<(Snapshot, usize)>,
    /// `soc-ctl join`: the member to ask first.
    prefer: Option<u8>,
    /// Members asked so far in this join (the next one is asked after a failure).
    turn: usize,
    attempts: u32,
    next_try: u64,
    started: Option<u64>,
    /// `soc-ctl join` callers waiting for the outcome.
    waiters: Vec<mpsc::Sender<Reply>>,
    /// Gap fills started (`Action::FillGap`).
    pub gap_fills: u64,
    /// Joins driven by the engine itself after a safe exit.
    pub auto_joins: u64,
}

/// A `soc-ctl join` gives up after this long.
const JOIN_LIMIT_NS: u64 = 30_000_000_000;

impl Engine {
    /// `soc-ctl join MEMBER` (the node was set to ENABLE|JOIN): answered when the node is active.
    pub(super) fn begin_join(&mut self, member: u64, reply: mpsc::Sender<Reply>) {
        let n = self.setup.nodes.len() as u64;
        let me = self.setup.config.node_id as u64;
        if member >= n || member == me {
            let _ = reply.send(Err(format!(
                "member {member}: give another node's id, 0..={}",
                n - 1
            )));
            return;
        }
        if self.node.state() != State::Joining {
            let _ = reply.send(Err(format!(
                "not joining (state {:?}): set ctrl to ENABLE|JOIN first",
                self.node.state()
            )));
            return;
        }
        self.join.prefer = Some(member as u8);
        self.join.turn = 0;
        self.join.started.get_or_insert(now_ns());
        self.join.waiters.push(reply);
    }

    fn answer_waiters(&mut self, r: Reply) {
        for w in self.join.waiters.drain(..) {
            let _ = w.send(r.clone());
        }
        self.join.prefer = None;
        self.join.started = None;
        self.join.attempts = 0;
    }

    /// One step of the join, each turn of the engine loop: install a snapshot that waits, or
    /// ask the next member for one.
    pub(super) fn drive_join(&mut self, now: u64) {
        let j = &mut self.join;
        if self.node.state() != State::Joining {
            j.pending = None;
            if !j.waiters.is_empty() && !j.fetching {
                let s = self.node.state();
                self.answer_waiters(Err(format!("not joining any more (state {s:?})")));
            }
            return;
        }
        if !self.node.is_rejoining() && j.prefer.is_none() {
            // A node enabled with JOIN waits for `soc-ctl join` to name a member.
            return;
        }
        if j.started.is_some_and(|t| now > t + JOIN_LIMIT_NS) && !j.waiters.is_empty() {
            return self.answer_waiters(Err("join did not complete within 30 s".into()));
        }
        if let Some((snap, bytes)) = j.pending.take() {
            return self.install(now, snap, bytes);
        }
        if j.fetching || now < j.next_try {
            return;
        }
        // The member: `soc-ctl join`'s first, else the stream's leader, then the others in turn.
        let me = self.setup.config.node_id;
        let n = (self.setup.config.node_count as usize).min(self.setup.nodes.len()) as u8;
        let first = j.prefer.unwrap_or(self.node.leader());
        let order: Vec<u8> = std::iter::once(first)
            .chain(0..n)
            .filter(|&m| m != me && m < n)
            .collect();
        let Some(&member) = order.get(j.turn % order.len().max(1)) else {
            return;
        };
        let holds_place = self.node.place().is_none_or(|p| {
            p == 0
                || self
                    .shared
                    .try_lock()
                    .is_ok_and(|sh| sh.log.map.contains_key(&p))
        });
        let Some(ask) = j.joiner.ask(&self.node, member, holds_place) else {
            return;
        };
        if j.started.is_none() {
            j.started = Some(now);
            j.auto_joins += u64::from(self.node.is_rejoining());
        }
        j.fetching = true;
        j.attempts += 1;
        let to = self.setup.client_sock(member);
        let me = self.setup.me().client_addr;
        let cluster = self.setup.config.cluster_id;
        let tags = TransferAuth::of(&self.node);
        let joiner = j.joiner.clone();
        let h = self.handle.clone();
        let spawned = std::thread::Builder::new()
            .name("join".into())
            .spawn(move || {
                let r = fetch(me, to, cluster, tags, &ask, joiner);
                let _ = h.call(Cmd::Snapshot(member, r));
            });
        if spawned.is_err() {
            self.join.fetching = false;
        }
    }

    /// A fetch ended (the engine thread).
    pub(super) fn snapshot_arrived(&mut self, member: u8, r: Result<Snapshot, String>) -> Reply {
        self.join.fetching = false;
        let now = now_ns();
        match r {
            Ok(snap) => {
                let bytes = snap.data.len();
                self.install(now, snap, bytes);
            }
            Err(e) => {
                tracing::warn!(
                    node = self.setup.config.node_id,
                    member,
                    "nc-engine node {}: join attempt {} from node {member}: {e}; retrying",
                    self.setup.config.node_id,
                    self.join.attempts
                );
                self.join.turn += 1;
                self.join.next_try = now + 50_000_000;
            }
        }
        Ok(Value::Null)
    }

    fn install(&mut self, now: u64, snap: Snapshot, bytes: usize) {
        let r = {
            let shared = self.shared.clone();
            let mut sh = shared.lock().expect("state lock");
            self.flush_pending(&mut sh);
            join::install(&mut self.node, &mut sh.log, &snap, now, &mut self.out)
        };
        match r {
            Ok(i) => {
                let ms = self
                    .join
                    .started
                    .map_or(0.0, |t| now.saturating_sub(t) as f64 / 1e6);
                let v = json!({
                    "snapshot_instance": i.instance,
                    "snapshot_entries": i.entries,
                    "added": i.added,
                    "first_logged": i.first_logged,
                    "timeout": i.timeout,
                    "transfer_bytes": bytes,
                    "attempts": self.join.attempts,
                    "join_ms": ms,
                });
                let node = self.setup.config.node_id;
                tracing::info!(node, "nc-engine node {node}: joined: {v}");
                self.join.turn = 0;
                self.answer_waiters(Ok(v));
            }
            // The own log has not reached the snapshot yet: try again next turn.
            Err(JoinError::NotYet { .. }) => self.join.pending = Some((snap, bytes)),
            // The snapshot does not reach back to the first logged instance: ask again.
            Err(JoinError::TooOld { .. }) => {}
            Err(e) => {
                let node = self.setup.config.node_id;
                tracing::warn!(node, "nc-engine node {node}: join: {e}");
                self.join.turn += 1;
                self.join.next_try = now + 50_000_000;
                if matches!(e, JoinError::Conflict(_)) {
                    self.answer_waiters(Err(e.to_string()));
                }
            }
        }
    }

    /// `Action::FillGap`: fetch the gap from `from` on a thread of its own.
    pub(super) fn start_fill_gap(&mut self, from: u8, instance: u64) {
        self.join.gap_fills += 1;
        let ask = self.join.gap_joiner.ask_gap(&self.node, from, instance);
        let joiner = self.join.gap_joiner.clone();
        let to = self.setup.client_sock(from);
        let me = self.setup.me().client_addr;
        let cluster = self.setup.config.cluster_id;
        let tags = TransferAuth::of(&self.node);
        let h = self.handle.clone();
        let _ = std::thread::Builder::new()
            .name("fill-gap".into())
            .spawn(move || {
                let r = fetch(me, to, cluster, tags, &ask, joiner);
                let _ = h.call(Cmd::GapSnapshot(from, r));
            });
    }

    /// A gap's snapshot arrived (the engine thread): its decisions join the log, the node
    /// learns its log has no gap (the model asks again if this failed).
    pub(super) fn gap_arrived(&mut self, from: u8, r: Result<Snapshot, String>) -> Reply {
        let me = self.setup.config.node_id;
        let snap = r.inspect_err(|e| {
            tracing::warn!(
                node = me,
                "nc-engine node {me}: gap fill from node {from}: {e}"
            )
        })?;
        let now = now_ns();
        let r = {
            let shared = self.shared.clone();
            let mut sh = shared.lock().expect("state lock");
            self.flush_pending(&mut sh);
            join::fill_gap(&mut self.node, &mut sh.log, &snap, now, &mut self.out)
        };
        match r {
            Ok(taken) => {
                tracing::info!(
                    node = me,
                    instance = snap.instance,
                    "nc-engine node {me}: gap filled from node {from} up to instance {} (taken: {taken})",
                    snap.instance
                );
                Ok(json!({ "snapshot_instance": snap.instance, "taken": taken }))
            }
            Err(e) => {
                tracing::warn!(
                    node = me,
                    "nc-engine node {me}: gap fill from node {from}: {e}"
                );
                Err(e.to_string())
            }
        }
    }
}
