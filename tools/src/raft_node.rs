//! The Raft baseline: a raft-rs (`raft` 0.7) `RawNode` driven over the same UDP transport, the same
//! addresses and the same client protocol as nc-engine, so the one client measures both.
//!
//! - Peers exchange raft messages (protobuf-encoded) as UDP datagrams on `ports.decide + 10`
//!   at their tree-a address.
//! - Clients send our REQUEST packets to the client port. The leader proposes each one as an
//!   entry and answers REPLY_OK (instance = raft index) when the entry is committed. That is
//!   commit at the leader, the same point at which LOWI's leader answers. A follower answers
//!   NOT_LEADER with the leader's id.
//! - Storage is raft-rs's `MemStorage` (no fsync), like the engine, which keeps its log in memory:
//!   the comparison is of the protocols, not of disks.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::time::{Duration, Instant};

use protobuf::Message as _;
use raft::prelude::{Entry, EntryType, Message};
use raft::storage::MemStorage;
use raft::{Config, RawNode, StateRole};
use soc_ctl::cluster::NodeSetup;

use proto::wire::{self, Packet};

/// Raft timing.
#[derive(Clone, Copy, Debug)]
pub struct RaftOpts {
    /// One raft tick.
    pub tick: Duration,
    /// Election timeout in ticks.
    pub election_ticks: usize,
    /// Heartbeat in ticks.
    pub heartbeat_ticks: usize,
}

impl Default for RaftOpts {
    fn default() -> Self {
        // 5 ms ticks: heartbeats every 5 ms, elections after 50–100 ms (like LOWI's 50 ms timeout).
        RaftOpts {
            tick: Duration::from_millis(5),
            election_ticks: 10,
            heartbeat_ticks: 1,
        }
    }
}

/// Counters a bench reads (printed as JSON on SIGUSR1-free exit: the bench asks over UDP).
#[derive(Clone, Copy, Debug, Default)]
pub struct RaftCounters {
    /// Datagrams sent to peers.
    pub peer_packets: u64,
    /// Entries committed with a client request.
    pub committed: u64,
    /// Replies sent.
    pub replies: u64,
}

fn encode_entry(client_id: u32, seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(12 + payload.len());
    v.extend_from_slice(&client_id.to_be_bytes());
    v.extend_from_slice(&seq.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

fn decode_entry(d: &[u8]) -> Option<(u32, u64)> {
    if d.len() < 12 {
        return None;
    }
    Some((
        u32::from_be_bytes(d[..4].try_into().ok()?),
        u64::from_be_bytes(d[4..12].try_into().ok()?),
    ))
}

/// The raft peer address of node `id` (0-based).
pub fn peer_addr(setup: &NodeSetup, id: usize) -> SocketAddrV4 {
    SocketAddrV4::new(setup.nodes[id].tree_addrs[0], setup.config.decide_port + 10)
}

/// raft-rs's log (slog) as `tracing` events of this module: its info records (elections, role
/// changes) at debug (`nc-raft -v`), its debug and trace records at trace (`-vv`), its warnings
/// and errors as they are. Nothing is formatted unless the event is enabled.
struct ToTracing;

impl slog::Drain for ToTracing {
    type Ok = ();
    type Err = slog::Never;

    fn log(&self, r: &slog::Record<'_>, values: &slog::OwnedKVList) -> Result<(), slog::Never> {
        let kv = || {
            use slog::KV;
            let mut s = KvText(String::new());
            let _ = r.kv().serialize(r, &mut s);
            let _ = values.serialize(r, &mut s);
            s.0
        };
        match r.level() {
            slog::Level::Critical | slog::Level::Error => {
                tracing::error!("raft: {}{}", r.msg(), kv())
            }
            slog::Level::Warning => tracing::warn!("raft: {}{}", r.msg(), kv()),
            slog::Level::Info => tracing::debug!("raft: {}{}", r.msg(), kv()),
            slog::Level::Debug | slog::Level::Trace => tracing::trace!("raft: {}{}", r.msg(), kv()),
        }
        Ok(())
    }
}

/// A record's key-value pairs as ` key=value`.
struct KvText(String);

impl slog::Serializer for KvText {
    fn emit_arguments(&mut self, key: slog::Key, val: &std::fmt::Arguments<'_>) -> slog::Result {
        use std::fmt::Write;
        let _ = write!(self.0, " {key}={val}");
        Ok(())
    }
}

/// A stats request on the client port: the magic text `stats?`; the answer is JSON.
pub const STATS_REQUEST: &[u8] = b"stats?";

/// Run a raft node until the process is killed.
pub fn run(setup: &NodeSetup, opts: RaftOpts) -> io::Result<()> {
    let me = setup.config.node_id as usize;
    let n = setup.config.node_count as usize;
    let cluster = setup.config.cluster_id;
    let peers_sock = UdpSocket::bind(peer_addr(setup, me))?;
    let client_sock = UdpSocket::bind(setup.client_sock(me as u8))?;
    for s in [&peers_sock, &client_sock] {
        s.set_nonblocking(true)?;
    }
    let cfg = Config {
        id: me as u64 + 1,
        election_tick: opts.election_ticks,
        heartbeat_tick: opts.heartbeat_ticks,
        // Fits one UDP datagram.
        max_size_per_msg: 48 * 1024,
        max_inflight_msgs: 256,
        ..Default::default()
    };
    cfg.validate()
        .map_err(|e| io::Error::other(e.to_string()))?;
    let voters: Vec<u64> = (1..=n as u64).collect();
    let storage = MemStorage::new_with_conf_state((voters, vec![]));
    let logger = slog::Logger::root(ToTracing, slog::o!());
    let mut node =
        RawNode::new(&cfg, storage, &logger).map_err(|e| io::Error::other(e.to_string()))?;
    let mut clients: HashMap<u32, SocketAddr> = HashMap::new();
    let mut counters = RaftCounters::default();
    let mut next_tick = Instant::now() + opts.tick;
    let mut buf = vec![0u8; 65536];
    loop {
        // Inputs.
        let mut idle = true;
        for _ in 0..256 {
            match peers_sock.recv_from(&mut buf) {
                Ok((len, _)) => {
                    idle = false;
                    if let Ok(m) = Message::parse_from_bytes(&buf[..len]) {
                        let _ = node.step(m);
                    }
                }
                Err(_) => break,
            }
        }
        for _ in 0..256 {
            match client_sock.recv_from(&mut buf) {
                Ok((len, from)) => {
                    idle = false;
                    if &buf[..len] == STATS_REQUEST {
                        let st = format!(
                            "{{\"node\":{me},\"leader\":{},\"peer_packets\":{},\"committed\":{},\"replies\":{}}}",
                            node.raft.state == StateRole::Leader,
                            counters.peer_packets,
                            counters.committed,
                            counters.replies
                        );
                        let _ = client_sock.send_to(st.as_bytes(), from);
                        continue;
                    }
                    let Ok((_, Packet::Request(e))) = wire::parse(&buf[..len], cluster) else {
                        continue;
                    };
                    clients.insert(e.client_id, from);
                    if node.raft.state == StateRole::Leader {
                        let data = encode_entry(e.client_id, e.seq, e.payload);
                        let _ = node.propose(vec![], data);
                    } else {
                        let leader = node.raft.leader_id;
                        let p = Packet::ReplyNotLeader(wire::ReplyNotLeader {
                            client_id: e.client_id,
                            seq: e.seq,
                            leader: if leader == 0 {
                                wire::SENDER_NONE
                            } else {
                                (leader - 1) as u8
                            },
                            epoch: node.raft.term as u32,
                        });
                        if let Ok(b) = p.to_vec(cluster, me as u8) {
                            let _ = client_sock.send_to(&b, from);
                        }
                    }
                }
                Err(_) => break,
            }
        }
        if Instant::now() >= next_tick {
            node.tick();
            next_tick += opts.tick;
        }
        if node.has_ready() {
            ready(
                &mut node,
                setup,
                &peers_sock,
                &client_sock,
                &clients,
                &mut counters,
                cluster,
                me,
            );
        }
        if idle {
            // Event-driven, like nc-engine: block until a datagram arrives or the next tick.
            let wait = next_tick.saturating_duration_since(Instant::now());
            soc_ctl::wait::readable(&[&peers_sock, &client_sock], wait)?;
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn ready(
    node: &mut RawNode<MemStorage>,
    setup: &NodeSetup,
    peers: &UdpSocket,
    client_sock: &UdpSocket,
    clients: &HashMap<u32, SocketAddr>,
    counters: &mut RaftCounters,
    cluster: u32,
    me: usize,
) {
    let send = |msgs: Vec<Message>, counters: &mut RaftCounters| {
        for m in msgs {
            let to = m.to as usize - 1;
            if let Ok(b) = m.write_to_bytes()
                && peers.send_to(&b, peer_addr(setup, to)).is_ok()
            {
                counters.peer_packets += 1;
            }
        }
    };
    let apply = |entries: Vec<Entry>, counters: &mut RaftCounters, leader: bool| {
        for e in entries {
            if e.get_entry_type() != EntryType::EntryNormal || e.data.is_empty() {
                continue;
            }
            counters.committed += 1;
            if !leader {
                continue;
            }
            if let Some((client_id, seq)) = decode_entry(&e.data)
                && let Some(to) = clients.get(&client_id)
            {
                let p = Packet::ReplyOk(wire::ReplyOk {
                    client_id,
                    index: 0,
                    seq,
                    instance: e.index,
                });
                if let Ok(b) = p.to_vec(cluster, me as u8)
                    && client_sock.send_to(&b, to).is_ok()
                {
                    counters.replies += 1;
                }
            }
        }
    };
    let leader = node.raft.state == StateRole::Leader;
    let mut rd = node.ready();
    send(rd.take_messages(), counters);
    if !rd.snapshot().is_empty() {
        let _ = node.store().wl().apply_snapshot(rd.snapshot().clone());
    }
    apply(rd.take_committed_entries(), counters, leader);
    if !rd.entries().is_empty() {
        let _ = node.store().wl().append(rd.entries());
    }
    if let Some(hs) = rd.hs() {
        node.store().wl().set_hardstate(hs.clone());
    }
    send(rd.take_persisted_messages(), counters);
    let mut light = node.advance(rd);
    if let Some(commit) = light.commit_index() {
        node.store().wl().mut_hard_state().set_commit(commit);
    }
    send(light.take_messages(), counters);
    apply(light.take_committed_entries(), counters, leader);
    node.advance_apply();
}
