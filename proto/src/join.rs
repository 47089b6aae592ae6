//! The join (§5.2) and the other state transfers, sans-IO: what a member serves, what a
//! joining node asks for, and how a received snapshot becomes part of its log. The software
//! engine and the simulator both drive this one implementation; they only move the bytes
//! (TCP in the engine, an ordered peer link in the simulator).
//!
//! A joining node (CTRL = ENABLE|JOIN, or a node coming back after its safe exit) first locks
//! onto the live stream and logs what it delivers from its first instance `f` on. It then asks
//! a member for a snapshot covering `f - 1` ([`Joiner::ask`]); the member cuts its log into
//! STATE_CHUNKs ([`serve`]); the joiner reassembles them ([`Joiner::chunk`]) and installs the
//! snapshot once its own log reaches the snapshot's instance ([`install`]): the snapshot's
//! decisions join its log (a conflict is refused), it takes the member's timeout and ACTIVATEs.
//! A node that was a member before asks only for what it lacks (`have` = its place).
//! A recovering node with a gap in its log fills it the same way ([`fill_gap`]).

use alloc::format;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use crate::log::{self, Conflict, DecisionLog, Logged, SnapshotError};
use crate::node::{Action, Control, Node, State};
use crate::regs::{self, RegError};
use crate::transfer::{self, Reassembly, Snapshot, TransferError};
use crate::wire::{self, JoinRequest, Packet, StateChunk};

/// What a member knows when it serves a request (copied from its node under whatever lock
/// its driver holds; the log itself is passed separately).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its node id (the sender of the chunks).
    pub id: u8,
    /// The cluster id.
    pub cluster_id: u32,
    /// Its last decided instance with no gap before it.
    pub lins: Option<u64>,
    /// Its node is active (or recovering: it serves its log without a gap).
    pub serving: bool,
    /// Its timeout register (the joiner takes it).
    pub timeout: u32,
}

impl Member {
    /// A node's view as a member.
    pub fn of(node: &Node) -> Member {
        let c = node.config();
        Member {
            id: c.node_id,
            cluster_id: c.cluster_id,
            lins: node.last_decided(),
            serving: matches!(node.state(), State::Active | State::Recovering),
            timeout: c.timeout,
        }
    }
}

/// Why a member refused a request (sent to the joiner in an error chunk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The member is not active itself.
    NotServing,
    /// The member has not decided the instance asked for.
    Behind {
        /// Its last decided instance.
        lins: Option<u64>,
        /// The instance the snapshot must cover.
        wanted: u64,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotServing => write!(f, "member is not active"),
            Refusal::Behind { lins, wanted } => write!(
                f,
                "member has decided up to {lins:?}, the snapshot must cover {wanted}"
            ),
        }
    }
}

/// What a member does with a JOIN_REQUEST.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Serve {
    /// Send a snapshot of its log over `from..=to` (`to` is its last decided instance).
    Range {
        /// First instance (the joiner holds those before it).
        from: u64,
        /// Last instance: the snapshot's instance.
        to: u64,
    },
    /// Refuse, saying why.
    Refuse(Refusal),
}

/// Decide how to answer `r`.
pub fn plan(m: &Member, r: &JoinRequest) -> Serve {
    match m.lins {
        _ if !m.serving => Serve::Refuse(Refusal::NotServing),
        Some(l) if l >= r.min_instance => Serve::Range {
            from: r.have.saturating_add(1),
            to: l,
        },
        lins => Serve::Refuse(Refusal::Behind {
            lins,
            wanted: r.min_instance,
        }),
    }
}

/// The STATE_CHUNK packets of a [`Serve::Range`] answer: `range` is the member's log over
/// that range (copied under the driver's lock, encoded here outside it), `to` its end.
pub fn chunks(m: &Member, r: &JoinRequest, to: u64, range: &[(u64, Arc<Logged>)]) -> Vec<Vec<u8>> {
    transfer::chunk_packets(
        m.cluster_id,
        m.id,
        r.transfer_id,
        to,
        m.timeout,
        &log::encode(range),
        r.max_chunk as usize,
    )
}

/// The one error chunk of a [`Serve::Refuse`] answer.
pub fn refusal(m: &Member, r: &JoinRequest, why: Refusal) -> Vec<u8> {
    let why = format!("{why}");
    Packet::StateChunk(StateChunk {
        transfer_id: r.transfer_id,
        flags: wire::CHUNK_FLAG_ERROR,
        instance: m.lins.unwrap_or(0),
        offset: 0,
        total_len: 0,
        crc32: 0,
        timeout: 0,
        data: why.as_bytes(),
    })
    .to_vec(m.cluster_id, m.id)
    .expect("an error chunk fits")
}

/// The member's whole answer to a JOIN_REQUEST: the STATE_CHUNK packets of a snapshot of its
/// log over `have + 1 ..= lins`, or one error chunk that says why not.
pub fn serve(m: &Member, log: &DecisionLog, r: &JoinRequest) -> Vec<Vec<u8>> {
    match plan(m, r) {
        Serve::Range { from, to } => chunks(m, r, to, &log.range(from, to)),
        Serve::Refuse(why) => alloc::vec![refusal(m, r, why)],
    }
}

/// A request for a snapshot, ready to send to `member`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ask {
    /// The member to send it to.
    pub member: u8,
    /// The JOIN_REQUEST packet.
    pub packet: Vec<u8>,
    /// The request.
    pub request: JoinRequest,
}

/// The joining side of one node's transfers.
#[derive(Clone, Debug)]
pub struct Joiner {
    transfer_id: u32,
    reassembly: Option<Reassembly>,
    max_chunk: u32,
}

impl Default for Joiner {
    fn default() -> Joiner {
        Joiner::new(0)
    }
}

/// The joiner asks for chunks of at most this many bytes (the engine's TCP carries them).
pub const CHUNK: u32 = transfer::MAX_CHUNK as u32;

impl Joiner {
    /// A joiner whose transfer ids start after `first` (a restarted driver uses a new range).
    pub fn new(first: u32) -> Joiner {
        Joiner {
            transfer_id: first,
            reassembly: None,
            max_chunk: CHUNK,
        }
    }

    /// Ask for chunks of at most `max` bytes (a driver over datagrams wants small ones).
    pub fn with_max_chunk(mut self, max: u32) -> Joiner {
        self.max_chunk = max.max(1);
        self
    }

    /// Whether a transfer is in progress (asked, its last chunk not yet taken).
    pub fn in_progress(&self) -> bool {
        self.reassembly.is_some()
    }

    /// Give up the transfer in progress (its member died, or the node left the join path).
    pub fn abandon(&mut self) {
        self.reassembly = None;
    }

    /// A joining node that has locked onto the stream and delivered: ask `member` for a
    /// snapshot covering the instance before its first logged one. `None` while the node is
    /// not there yet. The request says what the node already holds (`have`: its place, the
    /// last instance it decided with no gap before it, or 0); `holds_place` is false when the
    /// driver's log no longer has those instances (then the whole log is asked for).
    pub fn ask(&mut self, node: &Node, member: u8, holds_place: bool) -> Option<Ask> {
        if node.state() != State::Joining || node.status_bits() & regs::status::SYNCED == 0 {
            return None;
        }
        let lins = node.last_decided()?;
        let min_instance = node.first_logged().map_or(lins, |f| f - 1);
        let have = node
            .place()
            .filter(|_| holds_place)
            .map_or(0, |p| p.min(min_instance));
        Some(self.request(node, member, min_instance, have))
    }

    /// A recovering node with a gap ([`Action::FillGap`]): ask `from` for `instance`.
    pub fn ask_gap(&mut self, node: &Node, from: u8, instance: u64) -> Ask {
        let have = node.last_decided().unwrap_or(0).min(instance);
        self.request(node, from, instance, have)
    }

    fn request(&mut self, node: &Node, member: u8, min_instance: u64, have: u64) -> Ask {
        self.transfer_id = self.transfer_id.wrapping_add(1);
        self.reassembly = Some(Reassembly::new(self.transfer_id));
        let request = JoinRequest {
            transfer_id: self.transfer_id,
            max_chunk: self.max_chunk,
            min_instance,
            have,
        };
        let c = node.config();
        let packet = Packet::JoinRequest(request)
            .to_vec(c.cluster_id, c.node_id)
            .expect("a join request fits");
        Ask {
            member,
            packet,
            request,
        }
    }

    /// One STATE_CHUNK of the transfer in progress: the snapshot when it is complete. A chunk
    /// of an older transfer is ignored (`Ok(None)`); any other failure ends the transfer.
    pub fn chunk(&mut self, c: &StateChunk<'_>) -> Result<Option<Snapshot>, TransferError> {
        let Some(r) = self.reassembly.as_mut() else {
            return Ok(None);
        };
        match r.accept(c) {
            Ok(Some(s)) => {
                self.reassembly = None;
                Ok(Some(s))
            }
            Ok(None) => Ok(None),
            Err(TransferError::WrongTransfer) => Ok(None),
            Err(e) => {
                self.reassembly = None;
                Err(e)
            }
        }
    }
}

/// Why a snapshot was not installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JoinError {
    /// The node is not joining (or, for a gap, not recovering) any more.
    NotJoining(State),
    /// The node's own log has not reached the snapshot's instance yet: install it again later.
    NotYet {
        /// The snapshot's instance.
        snapshot: u64,
        /// The node's last decided instance.
        last_decided: Option<u64>,
    },
    /// The snapshot does not reach back to the node's first logged instance: ask again.
    TooOld {
        /// The snapshot's instance.
        snapshot: u64,
        /// The node's first logged instance.
        first_logged: Option<u64>,
    },
    /// The snapshot does not decode.
    Snapshot(SnapshotError),
    /// The snapshot and the node's log disagree on an instance.
    Conflict(Conflict),
    /// The member's timeout was refused.
    Timeout(RegError),
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JoinError::NotJoining(s) => write!(f, "not joining (state {s:?})"),
            JoinError::NotYet {
                snapshot,
                last_decided,
            } => write!(
                f,
                "the node's log (last decided {last_decided:?}) has not reached the snapshot's instance {snapshot} yet"
            ),
            JoinError::TooOld {
                snapshot,
                first_logged,
            } => write!(
                f,
                "the snapshot at instance {snapshot} does not reach the node's first logged instance {first_logged:?}"
            ),
            JoinError::Snapshot(e) => write!(f, "{e}"),
            JoinError::Conflict(c) => write!(f, "{c}"),
            JoinError::Timeout(e) => write!(f, "the member's timeout: {e}"),
        }
    }
}

/// What an install did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Installed {
    /// The snapshot's instance.
    pub instance: u64,
    /// Decisions it held.
    pub entries: usize,
    /// Of those, the ones the node's log lacked.
    pub added: usize,
    /// The node's first logged instance.
    pub first_logged: Option<u64>,
    /// The member's timeout, now the node's.
    pub timeout: u32,
}

/// Install a snapshot on a joining node: its decisions join `log`, the node takes the
/// member's timeout and ACTIVATEs. Refused (nothing changes) if the node's own log does not
/// meet the snapshot ([`JoinError::NotYet`], [`JoinError::TooOld`]) or disagrees with it.
pub fn install(
    node: &mut Node,
    log: &mut DecisionLog,
    snap: &Snapshot,
    now: u64,
    out: &mut Vec<Action>,
) -> Result<Installed, JoinError> {
    if node.state() != State::Joining {
        return Err(JoinError::NotJoining(node.state()));
    }
    let c = snap.instance;
    let (first, lins) = (node.first_logged(), node.last_decided());
    if lins.is_none_or(|l| l < c) {
        return Err(JoinError::NotYet {
            snapshot: c,
            last_decided: lins,
        });
    }
    if first.is_some_and(|f| f > c + 1) {
        return Err(JoinError::TooOld {
            snapshot: c,
            first_logged: first,
        });
    }
    let got = DecisionLog::decode(&snap.data).map_err(JoinError::Snapshot)?;
    let entries = got.map.len();
    // A conflicting merge changes nothing; a merged one only adds decided instances, which
    // stay even if the node then refuses the timeout (they are decided all the same).
    let added = log.merge(got).map_err(JoinError::Conflict)?;
    node.write_register(now, regs::addr::TIMEOUT, snap.timeout, out)
        .map_err(JoinError::Timeout)?;
    node.control(now, Control::Activate, out)
        .map_err(|e| JoinError::Timeout(RegError::Control(e)))?;
    Ok(Installed {
        instance: c,
        entries,
        added,
        first_logged: first,
        timeout: snap.timeout,
    })
}

/// Fill a recovering node's gap ([`Action::FillGap`]) from a snapshot: its decisions join
/// `log`, then the node learns its log has no gap ([`Node::gap_filled`]). Whether the node
/// took it (it may have left the recovery meanwhile; the decisions stay in the log, they are
/// decided).
pub fn fill_gap(
    node: &mut Node,
    log: &mut DecisionLog,
    snap: &Snapshot,
    now: u64,
    out: &mut Vec<Action>,
) -> Result<bool, JoinError> {
    let got = DecisionLog::decode(&snap.data).map_err(JoinError::Snapshot)?;
    log.merge(got).map_err(JoinError::Conflict)?;
    Ok(node.gap_filled(now, snap.instance, out))
}
