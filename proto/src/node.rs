//! The LOWI reference model: one node as a sans-IO state machine.
//!
//! Drivers (the RTL harness, the software engine's sockets, the simulator)
//! feed it events and carry out the [`Action`]s it returns; it never does I/O
//! and never reads a clock. Time is an abstract integer (`now`): clock cycles
//! for the RTL, nanoseconds for software. Every input first runs the
//! time-driven transitions due at `now` ([`Node::tick`] does only that), so
//! a driver may call `tick` every cycle (RTL) or only at
//! [`Node::next_deadline`] (software, simulator): both give the same result.
//!
//! Semantics (paper Alg. 1–3 with the hardware rules of §5.2):
//! - **Loop (leader).** A send happens when `now ≥ next_send`; then
//!   `next_send = now + loop_period` (the loop counter resets after each
//!   send). Requests never touch the loop counter, with one exception:
//!   with `min_gap` > 0 (early sends), a leader with requests queued sends
//!   as soon as the loop counter reaches `min_gap`, without waiting for the
//!   loop; that send resets the counter like any other. Heartbeats stay on
//!   the loop. A send takes up to
//!   `batch_max` requests from the egress FIFO (within the MTU) as one
//!   BATCH instance, or one CONFIG request as a CONFIG instance, or sends a
//!   heartbeat ⊥ when the FIFO is empty. The leader decides at send time:
//!   it RSBCASTs one copy per tree, hands the decision to its host and
//!   answers each client OK.
//! - **Heartbeats** carry the next instance (`last decided + 1`) and do not
//!   consume it: the instance repeats until a value is decided.
//! - **Receive (follower).** Every accepted copy resets the timeout counter.
//!   A DECIDE is delivered when RSBCAST completes it ([`crate::rsbcast`]).
//!   A delivered value must be the next instance; anything else means this
//!   node's log and the leader's differ, and the node exits safely.
//! - **Succession (OWI).** When `timeout` passes without an accepted copy,
//!   `epoch += 1` and the leader is `epoch mod node_count` — no messages.
//!   The node whose id matches starts looping at once. A copy from a higher
//!   epoch is adopted (that leader timed out earlier); a copy from a lower
//!   epoch is stale: ignored and counted as a synchrony violation.
//! - **NET-FAULT safe exit.** A missing copy, a gap in a tree's sequence or
//!   an instance mismatch stops the node: it decides nothing more until it is
//!   disabled and re-enabled (as a joining node).
//! - **Rate limiting.** Requests beyond `fifo_depth` are dropped and counted;
//!   requests that cannot fit in one DECIDE are dropped and counted.
//! - **START** (§5.2). The designated leader (id = 0 mod n at epoch 0) sends
//!   START; armed followers that deliver it become active.
//! - **Joining** (§5.2). An enabled joining node locks onto the live stream
//!   (no START), delivers every decision from then on, and becomes active
//!   when the control software says the state transfer is done.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec;
use alloc::vec::Vec;

use crate::auth::{self, Keyring};
use crate::regs::{self, Config, Counter, RegError, addr, ctrl, status};
use crate::rsbcast::{CopyOutcome, FaultKind, Receiver};
use crate::wire::{self, Decide, DecideKind, DecideMeta, Entry, Packet, ParseError};

/// Who sent a tree datagram, as far as the driver knows from its source address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The address of member `id` (the packet's sender id must be `id`).
    Member(u8),
    /// An address that is no member's: dropped and counted.
    NotMember,
    /// Nothing is known of the source address ([`Node::receive_tree`]; the RTL, which has no
    /// member address table). The checks that need no address still apply: a DECIDE only from
    /// its epoch's leader, a RECOVER only from an id inside the cluster.
    Unchecked,
}

/// Lifecycle of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// `CTRL.ENABLE` = 0: configuration writable, nothing runs.
    Disabled,
    /// Enabled, waiting for START.
    Armed,
    /// Enabled with `CTRL.JOIN`: following the live stream, state transfer pending.
    Joining,
    /// A running member.
    Active,
    /// Safe exit after a NET-FAULT.
    Faulted,
    /// With recovery on (software only): no live leader after a safe exit; electing one with
    /// the other survivors (a majority of `node_count` must take part).
    Recovering,
}

/// Why a node made a safe exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetFault {
    /// RSBCAST gave up on a message.
    Rsbcast(FaultKind),
    /// A delivered DECIDE does not continue this node's log.
    InstanceMismatch {
        /// Instance this node expected next.
        expected: u64,
        /// Instance the message carried.
        got: u64,
    },
    /// A new epoch began while copies of an older message were still arriving.
    EpochChangeInFlight,
    /// The 32-bit leader counter would wrap (only after a copy claiming a huge epoch).
    EpochExhausted,
    /// The driver could not send every copy of a message ([`Node::copies_failed`]): RSBCAST is
    /// all or nothing, so the leader makes the safe exit.
    SendFailed,
    /// The driver's kernel dropped datagrams on tree `tree` (a full receive buffer,
    /// [`Node::receive_overflow`]): copies may be missing that no sequence number shows.
    InputOverflow {
        /// The tree whose socket dropped datagrams.
        tree: u8,
    },
}

/// A synchrony violation the node observed (it is counted and reported, never hidden).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Violation {
    /// The leader sent `late` time units after its loop deadline (more than `late_tick_slack`).
    LateTick {
        /// How late.
        late: u64,
    },
    /// A copy from an epoch this node already left.
    StaleEpoch {
        /// The copy's epoch.
        epoch: u32,
    },
    /// A copy came after its message's RSBCAST window.
    LateCopy {
        /// The tree.
        tree: u8,
    },
    /// This leader saw a copy from a later epoch: it was timed out on while alive.
    Deposed {
        /// The later epoch.
        epoch: u32,
    },
    /// With recovery on: this leader's send came so late that its followers may already have
    /// timed out on it (the lease had passed), so it stepped down instead of deciding.
    LeaseExpired {
        /// How far past the loop deadline the send was due.
        late: u64,
    },
}

/// A decision handed to the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The instance decided.
    pub instance: u64,
    /// Epoch of the leader that decided it.
    pub epoch: u32,
    /// `Batch` or `Config`.
    pub kind: DecideKind,
    /// The DECIDE packet (UDP payload) as sent or completed; consumers ignore its `tree` field.
    pub packet: Vec<u8>,
    /// Decided by a recovery from a copy this node kept after its safe exit (its leader sent
    /// it, but not every tree delivered it), not by RSBCAST within Δ (recovery extension).
    pub recovered: bool,
}

impl Decision {
    /// The decided entries, parsed from `packet`.
    pub fn decide(&self, cluster_id: u32) -> Decide<'_> {
        match wire::parse(&self.packet, cluster_id) {
            Ok((_, Packet::Decide(d))) => d,
            // A Decision is only built from packets this crate emitted or validated.
            _ => unreachable!("a Decision always holds a valid DECIDE"),
        }
    }
}

/// What the driver must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send `packet` (a UDP payload) on tree `tree`'s multicast group.
    Send {
        /// Tree index.
        tree: u8,
        /// UDP payload.
        packet: Vec<u8>,
        /// A leader's DECIDE with recovery on: the end of the lease this send was judged under
        /// (see [`Node::copies_failed`]). The model judged it at the time of its input, which
        /// may be a datagram's arrival before a stall of the driver; a driver whose copies
        /// leave when `now + window` has reached it must treat the send as failed. Carried by
        /// the send itself: the node may have stepped down by the end of the same input (a
        /// later datagram of the same read), so its state no longer tells. `None` otherwise.
        lease_end: Option<u64>,
    },
    /// Send `packet` (a UDP payload) to the client `client_id` (the driver knows its address).
    Reply {
        /// Client to answer.
        client_id: u32,
        /// UDP payload.
        packet: Vec<u8>,
    },
    /// Hand a decision to the host (the DECIDE frame of the host path).
    Deliver(Decision),
    /// The leader changed (timeout or a later epoch seen).
    LeaderChanged {
        /// New epoch.
        epoch: u32,
        /// New leader id.
        leader: u8,
    },
    /// The node's state changed.
    StateChanged(State),
    /// NET-FAULT: the node made a safe exit.
    NetFault(NetFault),
    /// A synchrony violation was observed.
    Violation(Violation),
    /// With recovery on: this node left the cluster (safe exit) and is coming back through the
    /// join path: the driver must run a state transfer from a live member (as for
    /// [`Control::EnableJoin`]) once the node has locked onto the stream (`STATUS.SYNCED`).
    Rejoin,
    /// With recovery on: this recovering node holds decisions beyond a gap in its log (it
    /// rejoined a stream after missing instances, and no leader is left). The driver must
    /// transfer a snapshot covering `instance` (the gap's last instance) from node `from`,
    /// which reported a log without a gap up to there, merge it into its log and call
    /// [`Node::gap_filled`]. Until then this node cannot lead, and no one that lacks its
    /// decisions beyond the gap can be elected.
    FillGap {
        /// The node to transfer from.
        from: u8,
        /// The snapshot must cover this instance.
        instance: u64,
    },
    /// With recovery on: decisions that fill this recovering node's own gap from the copies it
    /// kept after its safe exit (its log ended before them and it decided instances after them
    /// on the same leader's stream). The driver merges them into its log as it merges a
    /// [`Action::FillGap`] transfer: they are decided, but they are not handed to the host
    /// now, since the host has instances after them already.
    FilledFromKept(Vec<Decision>),
    /// With recovery on: a recovery round ended with this node back in service at `epoch`
    /// (as its leader, or following the elected leader).
    Recovered {
        /// The epoch the cluster restarted in.
        epoch: u32,
        /// Its leader.
        leader: u8,
        /// The last decided instance the restart kept.
        lins: u64,
    },
}

/// An output the driver could not carry out ([`Node::output_dropped`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dropped {
    /// A client reply (OK or NOT_LEADER).
    Reply,
    /// The host copy of a decision.
    HostCopy,
}

/// Control operations (the strobes and mode bits of `CTRL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// ENABLE=1: armed, waiting for START.
    Enable,
    /// ENABLE=1, JOIN=1: join a running cluster.
    EnableJoin,
    /// ENABLE=0: stop; protocol state back to reset values (counters kept).
    Disable,
    /// START strobe: the designated leader starts the cluster.
    Start,
    /// ACTIVATE strobe: a joining node's state transfer is done.
    Activate,
    /// CLEAR_COUNTERS strobe.
    ClearCounters,
}

/// Deliberate bugs, compiled only with the `mutations` feature: the simulator's
/// tests switch them on to show that its checker catches a broken protocol.
#[cfg(feature = "mutations")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mutations {
    /// Deliver a message on its first copy instead of waiting for all |G| (breaks RSBCAST).
    pub deliver_on_first_copy: bool,
    /// Receiving a copy does not reset the follower's timeout counter (followers depose a live leader).
    pub skip_timeout_reset: bool,
    /// The leader ignores its lease and decides however late its send is.
    pub skip_lease: bool,
    /// A recovery candidate leads without the majority of votes.
    pub recover_without_majority: bool,
}

#[derive(Clone, Debug)]
struct Queued {
    client_id: u32,
    seq: u64,
    flags: u8,
    payload: Vec<u8>,
}

impl Queued {
    fn entry(&self) -> Entry<'_> {
        Entry {
            client_id: self.client_id,
            seq: self.seq,
            flags: self.flags,
            payload: &self.payload,
        }
    }
}

/// Joining node, before it has locked onto the stream: the epoch of the copies it watches (a
/// copy of another epoch starts over), the trees that showed one (bit t: tree t), and the newest
/// seq those copies carried (serial-number order, kept as they arrive: one comparison per copy,
/// which the card does in the copy's cycle).
#[derive(Clone, Debug, Default)]
struct Sync {
    epoch: Option<u32>,
    trees: u8,
    newest: u32,
}

/// Figures of the recovery extension (software only; not registers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveryStats {
    /// Safe exits after which this node set out to come back (rejoin or recovery).
    pub rejoins_started: u64,
    /// Rejoins that ended with the node active again.
    pub rejoins_done: u64,
    /// Recovery rounds this node entered.
    pub rounds: u64,
    /// Recoveries that put this node back in service (as leader or follower).
    pub recoveries: u64,
    /// Time from the safe exit to the last time this node was back in service.
    pub last_outage: Option<u64>,
    /// The longest such time.
    pub max_outage: u64,
    /// Leader: times it stopped because every other node had reported a safe exit.
    pub leader_stops: u64,
    /// Leader: sends refused because the lease had passed (it stepped down).
    pub lease_expired: u64,
    /// START refused because the cluster was seen running.
    pub start_refused: u64,
    /// Instances decided when entering a recovery from copies kept after the safe exit.
    pub kept_after_fault: u64,
    /// Gaps in this node's log filled by a transfer during a recovery (`FillGap`).
    pub gaps_filled: u64,
    /// RECOVER packets sent / received.
    pub recover_sent: u64,
    /// RECOVER packets received.
    pub recover_received: u64,
}

/// A follower that made the safe exit keeps the messages its leader went on sending in that
/// epoch, from any tree, in order and without a gap: the leader decided them (and may have
/// acknowledged them) although not every tree delivered them. If no leader is left, they join
/// its log when it enters the recovery, so a leader that crashed after its followers faulted
/// loses none of its acknowledged writes. If a live stream is found instead, they are dropped
/// (the state transfer brings whatever was decided).
#[derive(Clone, Debug)]
struct Tentative {
    epoch: u32,
    next_seq: u32,
    lins: u64,
    entries: Vec<(u64, DecideKind, Vec<u8>)>,
    /// Messages of the epoch that came before `next_seq` did, by seq: a copy of a later
    /// message on one tree may arrive before the earlier message's copy on another (the very
    /// gap that made the safe exit is such a case), so a later seq is no proof that the
    /// earlier message was lost on every tree. They are taken in order once it comes.
    ahead: BTreeMap<u32, (u64, DecideKind, Vec<u8>)>,
    closed: bool,
}

impl Tentative {
    /// The most messages held ahead of a missing one (the software receiver's in-flight
    /// capacity): beyond it the earlier message is taken for lost and the stream for closed.
    const AHEAD_MAX: usize = 1024;
    /// The most messages kept (at most one MTU each): a rejoining node with a gap keeps every
    /// copy until its state transfer, and this bounds its memory if the transfer never comes.
    const ENTRIES_MAX: usize = 16 * 1024;

    fn new(epoch: u32, next_seq: u32, lins: u64) -> Tentative {
        Tentative {
            epoch,
            next_seq,
            lins,
            entries: Vec::new(),
            ahead: BTreeMap::new(),
            closed: false,
        }
    }

    /// A message of the leader's stream, in whatever order its copies came.
    fn offer(&mut self, d: &Decide<'_>, bytes: &[u8]) {
        if self.closed {
            return;
        }
        let m = d.meta;
        if m.epoch != self.epoch {
            // Another epoch: the stream we faulted under has ended for us.
            self.closed = true;
            return;
        }
        let ahead = m.msg_seq.wrapping_sub(self.next_seq) as i32;
        if ahead < 0 {
            return; // a copy of a message already taken
        }
        if ahead > 0 {
            if self.ahead.len() >= Self::AHEAD_MAX {
                self.close();
            } else {
                self.ahead
                    .entry(m.msg_seq)
                    .or_insert_with(|| (m.instance, m.kind, bytes.to_vec()));
            }
            return;
        }
        self.take(m.instance, m.kind, bytes.to_vec());
        while !self.closed {
            let Some((instance, kind, b)) = self.ahead.remove(&self.next_seq) else {
                break;
            };
            self.take(instance, kind, b);
        }
    }

    /// The stream ends for the kept copies: nothing more is taken (what was taken stays).
    fn close(&mut self) {
        self.closed = true;
        self.ahead.clear();
    }

    /// Message `next_seq`.
    fn take(&mut self, instance: u64, kind: DecideKind, bytes: Vec<u8>) {
        self.next_seq = self.next_seq.wrapping_add(1);
        if instance != self.lins.wrapping_add(1) {
            self.close();
        } else if kind.is_value() {
            if self.entries.len() >= Self::ENTRIES_MAX {
                // The bound on what a node keeps (a rejoining node whose state transfer has
                // not come for this long): the stream is taken for closed here.
                return self.close();
            }
            self.lins = instance;
            self.entries.push((instance, kind, bytes));
        }
    }
}

/// What a recovering node knows about its round.
#[derive(Clone, Debug)]
struct Round {
    /// The round (= the epoch to restart in).
    round: u32,
    /// When this node entered it.
    entered: u64,
    /// Per node: (lins, vote) reported in this round.
    /// Per node: its report in this round (lins, top, vote).
    reports: Vec<Option<(u64, u64, u8)>>,
    /// Whom this node votes for in this round.
    vote: u8,
    /// When to broadcast the next report.
    next_report: u64,
    /// The settle time of this round has passed (checked once).
    settled: bool,
    /// At the settle time, the candidate could not win (silent, or a shorter log than someone's).
    hopeless: bool,
    /// Having voted for another node, this one stays in the round until then: the candidate may
    /// lead on our vote until its lead window closes, and its first copy takes up to a window.
    promised_until: u64,
}

/// A recovering node's round, as `soc-ctl status` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundStatus {
    /// The round (= the epoch the cluster restarts in if it elects `candidate`).
    pub round: u32,
    /// Its candidate (`round mod n`).
    pub candidate: u8,
    /// Nodes heard from in this round (this one included).
    pub heard: Vec<u8>,
    /// Votes for the candidate heard so far (this node's included).
    pub votes: usize,
    /// Votes the candidate needs: a majority of `node_count`.
    pub majority: usize,
    /// The highest decision any report of this round holds: only a candidate whose log
    /// reaches it with no gap can be elected.
    pub longest: u64,
    /// This node's gap, if it holds decisions beyond one: (first missing, last missing);
    /// it asks a participant that covers it for a transfer.
    pub gap: Option<(u64, u64)>,
}

/// One node of the cluster.
#[derive(Clone, Debug)]
pub struct Node {
    cfg: Config,
    /// The keys this node tags and checks packets with ([`crate::auth`]; not a register).
    keys: Keyring,
    state: State,
    epoch: u32,
    /// Last decided instance (`lins`); `None` for a joining node that has not delivered yet.
    lins: Option<u64>,
    /// The epoch this node entered as its leader (by START or its own timeout).
    lead_epoch: Option<u32>,
    /// ACTIVATE came after a silence: become active at the next accepted copy.
    activate_on_rx: bool,
    /// Joining: TIMEOUT was written (from the state transfer) since enabling.
    timeout_from_member: bool,
    /// Joining: the largest valid timeout of the CONFIG instances logged so far.
    joining_config_timeout: Option<u32>,
    // Leader side.
    next_send: u64,
    send_seq: u32,
    fifo: VecDeque<Queued>,
    // Follower side.
    last_rx: u64,
    rx: Option<Receiver>,
    /// Joining: copies of seqs before this one belong to messages that started before we
    /// locked on (cleared at the first delivery).
    skip_below: Option<u32>,
    sync: Option<Sync>,
    first_logged: Option<u64>,
    counters: [u64; Counter::ALL.len()],
    sync_violation: bool,
    // Recovery extension (software only; see the README's recovery section).
    recovery_on: bool,
    /// A node that was a member and is coming back: its last decided instance with no gap
    /// before it (what it reports in a recovery), and when it made the safe exit.
    member_lins: Option<(u64, u64)>,
    /// The epoch this node was in at its safe exit.
    fault_epoch: u32,
    /// Rejoining, not yet locked on: when the next FAULT notice is due.
    next_notice: u64,
    /// Recovering: the current round.
    round: Option<Round>,
    /// Leader: per node, when its last FAULT notice or recovery report arrived.
    peer_out: Vec<Option<u64>>,
    /// Per node: the log end (its `top`) of the last RECOVER it sent us, heard in any state and
    /// any round since a leader was last followed. A node whose report of a longer log went
    /// silent (paused, crashed) may hold writes its leader acknowledged: no shorter log may be
    /// elected while its report stands, whatever round the others have moved on to.
    heard_top: Vec<Option<u64>>,
    /// Leader: time of its last send (the lease runs from it).
    last_send_at: u64,
    /// Leader: the lease of its last send (the followers may time out from then on).
    lease_end: u64,
    /// Leader: the smallest timeout a node that is out reported (it may still run the one
    /// from before a CONFIG raised it, and start a recovery after that silence).
    out_timeout: Option<u32>,
    /// Armed: last time a copy of a running cluster was seen (START guard).
    armed_seen: Option<u64>,
    /// The highest recovery round heard of.
    seen_round: u32,
    /// When a recovery report (round ≥ 1) was last heard.
    recovery_heard: Option<u64>,
    /// Leader: the instance of its last send if it carried a value (rolled back by `copies_failed`).
    last_value_sent: Option<u64>,
    /// The latest `now` of any input (time of the safe exit for `fault`).
    clock: u64,
    /// Follower with recovery on: the first copy of each message in flight (seq, bytes).
    inflight: VecDeque<(u32, Vec<u8>)>,
    /// After a follower's safe exit: what its leader went on sending (see `Tentative`).
    tentative: Option<Tentative>,
    /// Recovering with a gap in its log: (first instance it holds after the gap, last one).
    gap: Option<(u64, u64)>,
    /// Recovering with a gap: the node asked to fill it, and when.
    gap_asked: Option<(u8, u64)>,
    /// A leader elected by a recovery, until its first send is known to have left: its log
    /// end and kept copies before it decided them (`copies_failed` puts them back).
    lead_rollback: Option<(Option<u64>, Option<Tentative>)>,
    rstats: RecoveryStats,
    /// Deliberate bugs for checker tests.
    #[cfg(feature = "mutations")]
    pub mutations: Mutations,
}

impl Node {
    /// A disabled node with this configuration (refused with a named error if illegal).
    pub fn new(cfg: Config) -> Result<Node, regs::ConfigError> {
        cfg.validate()?;
        Ok(Node {
            cfg,
            keys: Keyring::new(),
            state: State::Disabled,
            epoch: 0,
            lins: Some(0),
            lead_epoch: None,
            activate_on_rx: false,
            timeout_from_member: false,
            joining_config_timeout: None,
            next_send: 0,
            send_seq: 0,
            fifo: VecDeque::new(),
            last_rx: 0,
            rx: None,
            skip_below: None,
            sync: None,
            first_logged: None,
            counters: [0; Counter::ALL.len()],
            sync_violation: false,
            recovery_on: false,
            member_lins: None,
            fault_epoch: 0,
            next_notice: 0,
            round: None,
            peer_out: vec![None; cfg.node_count as usize],
            heard_top: vec![None; cfg.node_count as usize],
            last_send_at: 0,
            lease_end: 0,
            armed_seen: None,
            seen_round: 0,
            last_value_sent: None,
            clock: 0,
            inflight: VecDeque::new(),
            tentative: None,
            gap: None,
            gap_asked: None,
            out_timeout: None,
            lead_rollback: None,
            recovery_heard: None,
            rstats: RecoveryStats::default(),
            #[cfg(feature = "mutations")]
            mutations: Mutations::default(),
        })
    }

    // ----- observers -------------------------------------------------------

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.cfg
    }
    /// Lifecycle state.
    pub fn state(&self) -> State {
        self.state
    }
    /// Current epoch (leader counter).
    pub fn epoch(&self) -> u32 {
        self.epoch
    }
    /// Current leader id (`epoch mod node_count`).
    pub fn leader(&self) -> u8 {
        (self.epoch % self.cfg.node_count as u32) as u8
    }
    /// Whether this node is the running leader: an active node leads an epoch
    /// only if it entered that epoch through its own timeout (or START), when
    /// the followers' timers expect it. A node that becomes active later in an
    /// epoch that maps to it waits, like a follower, for the next one.
    pub fn is_leader(&self) -> bool {
        self.state == State::Active && self.lead_epoch == Some(self.epoch)
    }
    /// Last decided instance (0 before the first; `None` for a joining node not yet locked on).
    pub fn last_decided(&self) -> Option<u64> {
        self.lins
    }
    /// First instance a joining node delivered (the state transfer must cover everything before it).
    pub fn first_logged(&self) -> Option<u64> {
        self.first_logged
    }
    /// Switch the recovery extension on or off (off after `new`). It goes beyond the paper, for
    /// the software datapath: FAULT notices, automatic rejoin after a safe exit, recovery when no
    /// leader is left (a majority of `node_count` must take part), the leader lease and the
    /// START guard (see the README). The RTL keeps the paper's safe exit, so its lockstep
    /// runs the model with this off.
    pub fn set_recovery(&mut self, on: bool) {
        self.recovery_on = on;
    }
    /// Whether the recovery extension is on.
    pub fn recovery(&self) -> bool {
        self.recovery_on
    }
    /// The recovery extension's figures.
    pub fn recovery_stats(&self) -> RecoveryStats {
        self.rstats
    }
    /// A node that made the safe exit and is coming back (rejoining or recovering).
    pub fn is_rejoining(&self) -> bool {
        self.member_lins.is_some()
    }
    /// A node coming back after a safe exit: its place, the last instance it decided with no gap
    /// before it (what it brings to a recovery).
    pub fn place(&self) -> Option<u64> {
        self.member_lins.map(|(l, _)| l)
    }
    /// Recovering: where its round stands.
    pub fn recovery_round(&self) -> Option<RoundStatus> {
        let r = self.round.as_ref()?;
        let candidate = (r.round % self.cfg.node_count as u32) as u8;
        Some(RoundStatus {
            round: r.round,
            candidate,
            heard: (0..self.cfg.node_count)
                .filter(|&i| r.reports[i as usize].is_some())
                .collect(),
            votes: r
                .reports
                .iter()
                .flatten()
                .filter(|x| x.2 == candidate)
                .count(),
            majority: self.majority(),
            longest: r.reports.iter().flatten().map(|x| x.1).max().unwrap_or(0),
            gap: self
                .gap
                .map(|(first, _)| (self.lins.unwrap_or(0) + 1, first - 1)),
        })
    }
    /// Requests waiting in the egress FIFO.
    pub fn fifo_len(&self) -> usize {
        self.fifo.len()
    }
    /// Messages of the current epoch whose copies are still arriving (the RSBCAST receiver's
    /// queue of first-copy times; 0 with no receiver).
    pub fn rx_in_flight(&self) -> usize {
        self.rx.as_ref().map_or(0, Receiver::in_flight)
    }
    /// A counter's value.
    pub fn counter(&self, c: Counter) -> u64 {
        self.counters[c as usize]
    }
    /// The `STATUS` register.
    pub fn status_bits(&self) -> u32 {
        let mut s = 0;
        if self.is_leader() {
            s |= status::LEADER;
        }
        match self.state {
            State::Joining => s |= status::JOINING,
            State::Active => s |= status::ACTIVE,
            State::Faulted | State::Recovering => s |= status::NET_FAULT,
            State::Armed => s |= status::ARMED,
            State::Disabled => {}
        }
        if self.sync_violation {
            s |= status::SYNC_VIOLATION;
        }
        if self.state == State::Joining && self.sync.is_none() {
            s |= status::SYNCED;
        }
        s
    }

    /// The earliest time at which `tick` has something to do (None: only an input can change anything).
    pub fn next_deadline(&self) -> Option<u64> {
        let mut d: Option<u64> = None;
        let mut at = |t: u64| d = Some(d.map_or(t, |x| x.min(t)));
        if let Some(r) = &self.round {
            at(r.next_report);
            at(r.entered + self.round_len());
            if !r.settled {
                at(r.entered + self.settle());
            }
            if r.promised_until > r.entered {
                at(r.promised_until);
            }
            return d;
        }
        if self.state == State::Joining && self.member_lins.is_some() {
            at(self.last_rx + self.cfg.timeout as u64);
            if self.sync.is_some() {
                at(self.next_notice);
            }
        }
        if !self.running() && self.state != State::Armed {
            return d;
        }
        if self.is_leader() {
            at(self.next_send);
            if let Some(t) = self.early_send_at() {
                at(t);
            }
        } else if self.timer_running() {
            at(self.last_rx + self.cfg.timeout as u64);
        }
        if let Some(r) = &self.rx
            && let Some(t) = r.deadline()
        {
            at(t);
        }
        d
    }

    // ----- registers -------------------------------------------------------

    /// Read a 32-bit word of the register map.
    pub fn read_register(&self, a: u16) -> Result<u32, RegError> {
        let (reg, high) = regs::word(a).ok_or(RegError::UnknownAddress(a))?;
        let v: u64 = match reg.addr {
            addr::MAGIC => regs::MAGIC_VALUE as u64,
            addr::CTRL => match self.state {
                State::Disabled => 0,
                State::Joining => (ctrl::ENABLE | ctrl::JOIN) as u64,
                _ => ctrl::ENABLE as u64,
            },
            addr::STATUS => self.status_bits() as u64,
            addr::EPOCH => self.epoch as u64,
            addr::LEADER => self.leader() as u64,
            addr::INSTANCE => self.lins.unwrap_or(0),
            a if a >= addr::COUNTERS => self.counters[((a - addr::COUNTERS) / 8) as usize],
            a => self.cfg.get(a).ok_or(RegError::UnknownAddress(a))?,
        };
        Ok(if high { (v >> 32) as u32 } else { v as u32 })
    }

    /// Write a 32-bit register: configuration (only while disabled, range and
    /// cross-field rules checked) or `CTRL`. Refused writes change nothing.
    pub fn write_register(
        &mut self,
        now: u64,
        a: u16,
        value: u32,
        out: &mut Vec<Action>,
    ) -> Result<(), RegError> {
        let (reg, high) = regs::word(a).ok_or(RegError::UnknownAddress(a))?;
        match reg.access {
            regs::Access::ReadOnly => Err(RegError::ReadOnly(reg.name)),
            _ if high => Err(RegError::ReadOnly(reg.name)),
            regs::Access::Control => {
                regs::check_range(&reg, value as u64)?;
                self.write_ctrl(now, value, out)
            }
            regs::Access::Config => {
                // A joining node takes the members' timeout (STATE_CHUNK `timeout`) before it
                // activates: the one config write allowed while enabled. Every node must run
                // the same timeout; a joining node never times out, so the value is free here.
                let joining_timeout = self.state == State::Joining && a == addr::TIMEOUT;
                if self.state != State::Disabled && !joining_timeout {
                    return Err(RegError::WhileEnabled(reg.name));
                }
                let mut c = self.cfg;
                c.set(a, value as u64)?;
                c.validate().map_err(RegError::Config)?;
                self.cfg = c;
                self.timeout_from_member |= joining_timeout;
                Ok(())
            }
        }
    }

    fn write_ctrl(&mut self, now: u64, v: u32, out: &mut Vec<Action>) -> Result<(), RegError> {
        let want_enable = v & ctrl::ENABLE != 0;
        let want_join = v & ctrl::JOIN != 0;
        // Check every strobe before doing anything, so a refused write changes nothing.
        let may_start = want_enable
            && !want_join
            && self.cfg.node_id == 0
            && matches!(self.state, State::Armed | State::Disabled);
        if v & ctrl::START != 0 && !may_start {
            return Err(RegError::Control(
                "START needs ENABLE=1 on the designated leader (node_id = 0 mod node_count) while armed",
            ));
        }
        if v & ctrl::ACTIVATE != 0 && !(want_enable && want_join && self.can_activate()) {
            return Err(RegError::Control(
                "ACTIVATE needs ENABLE|JOIN on a joining node that has locked onto the live stream \
                 and whose timeout was set from the state transfer",
            ));
        }
        if want_join && !want_enable {
            return Err(RegError::Control("JOIN needs ENABLE"));
        }
        if v & ctrl::CLEAR_COUNTERS != 0 {
            self.control(now, Control::ClearCounters, out)
                .map_err(RegError::Control)?;
        }
        let mode = match (want_enable, want_join) {
            (false, _) => Control::Disable,
            (true, false) => Control::Enable,
            (true, true) => Control::EnableJoin,
        };
        let same = matches!(
            (mode, self.state),
            (Control::Disable, State::Disabled)
                | (Control::EnableJoin, State::Joining)
                | (
                    Control::Enable,
                    State::Armed | State::Active | State::Faulted
                )
        );
        if !same {
            self.control(now, mode, out).map_err(RegError::Control)?;
        }
        if v & ctrl::START != 0 {
            self.control(now, Control::Start, out)
                .map_err(RegError::Control)?;
        }
        if v & ctrl::ACTIVATE != 0 {
            self.control(now, Control::Activate, out)
                .map_err(RegError::Control)?;
        }
        Ok(())
    }

    fn can_start(&self) -> bool {
        self.state == State::Armed && self.cfg.node_id == 0
    }

    fn can_activate(&self) -> bool {
        self.state == State::Joining
            && self.sync.is_none()
            && self.lins.is_some()
            && self.timeout_from_member
    }

    // ----- inputs ----------------------------------------------------------

    /// A control operation. Refused operations change nothing.
    pub fn control(
        &mut self,
        now: u64,
        c: Control,
        out: &mut Vec<Action>,
    ) -> Result<(), &'static str> {
        self.advance(now, out);
        match c {
            Control::ClearCounters => {
                self.counters = [0; Counter::ALL.len()];
                self.sync_violation = false;
            }
            Control::Disable => {
                self.reset_protocol();
                self.set_state(State::Disabled, out);
            }
            Control::Enable => {
                self.reset_protocol();
                self.set_state(State::Armed, out);
            }
            Control::EnableJoin => {
                self.reset_protocol();
                self.lins = None;
                self.sync = Some(Sync::default());
                self.set_state(State::Joining, out);
            }
            Control::Start => {
                if !self.can_start() {
                    return Err(
                        "START: only the designated leader (node 0) can start, and only while armed",
                    );
                }
                if self.recovery_on
                    && self
                        .armed_seen
                        .is_some_and(|t| now < t + self.cfg.timeout as u64)
                {
                    self.rstats.start_refused += 1;
                    return Err(
                        "START: this node saw the cluster running within the last timeout \
                         (a START would decide instance 1 again): enable it with JOIN instead",
                    );
                }
                self.last_send_at = now;
                self.set_state(State::Active, out);
                self.lead_epoch = Some(self.epoch);
                self.next_send = now;
                self.leader_send(now, Some(DecideKind::Start), out);
            }
            Control::Activate => {
                if !self.can_activate() {
                    return Err(
                        "ACTIVATE: only a joining node that has locked onto the live stream and \
                         whose timeout was written from the state transfer",
                    );
                }
                // CONFIG instances this node logged while joining: the members applied those
                // after the snapshot, and timeouts only grow, so the largest valid one wins.
                if let Some(t) = self.joining_config_timeout.take()
                    && t > self.cfg.timeout
                {
                    self.cfg.timeout = t;
                }
                // The timeout counter must be in step with the members': that holds
                // if a copy arrived within the last timeout. After a silence (the
                // cluster may have moved on through timeouts a joining node does not
                // run) it becomes active at the next copy, which carries the current epoch.
                if now < self.last_rx + self.cfg.timeout as u64 {
                    self.set_state(State::Active, out);
                } else {
                    self.activate_on_rx = true;
                }
            }
        }
        Ok(())
    }

    /// Run the time-driven transitions due at `now` (window expiry, timeout, loop send).
    pub fn tick(&mut self, now: u64, out: &mut Vec<Action>) {
        self.advance(now, out);
    }

    /// The driver could not carry out an output action (a [`Action::Reply`] or the host copy
    /// of an [`Action::Deliver`]): counted in `replies_dropped` / `host_dropped`, the only
    /// counters the driver rather than the protocol increments.
    pub fn output_dropped(&mut self, what: Dropped) {
        self.count(match what {
            Dropped::Reply => Counter::RepliesDropped,
            Dropped::HostCopy => Counter::HostDropped,
        });
    }

    /// The driver could not send every copy of the message the last [`Action::Send`]s carried
    /// (or they would leave, or left, after their `lease_end`: `now + window` at or past it)
    /// (a failed or partial send; RSBCAST is all or nothing). The leader makes the safe exit
    /// ([`NetFault::SendFailed`]) and the message is not decided by it: `last_decided` goes back
    /// to before it, and the driver must drop that send's [`Action::Deliver`] and
    /// [`Action::Reply`]s (the clients were not answered and resend). Call it before carrying
    /// out any action that came after the copies. A node that stepped down later in the same
    /// input (it heard it was alone, or a later epoch) takes the message back from the place
    /// it keeps for a recovery and makes no second safe exit; one that sent nothing ignores it.
    pub fn copies_failed(&mut self, now: u64, out: &mut Vec<Action>) {
        self.clock = self.clock.max(now);
        if let Some(k) = self.last_value_sent.take() {
            if self.lins == Some(k) {
                self.lins = Some(k - 1);
            }
            // A node that left the leader's role later in the same input (it heard it was
            // alone, or a later epoch) has already taken its log end as its place.
            if let Some((m, at)) = self.member_lins
                && m == k
            {
                self.member_lins = Some((k - 1, at));
            }
        }
        if !self.is_leader() {
            // Deposed after the send by a later part of the same input: it is out of the
            // leader's role already; only its log end goes back (above).
            self.lead_rollback = None;
            return;
        }
        if let Some((lins, tentative)) = self.lead_rollback.take() {
            // The first send of a leader a recovery elected: the kept copies it decided on
            // its election go with it (the driver drops their host copies, which follow the
            // send's copies); they are kept copies again.
            self.lins = lins;
            self.tentative = tentative;
        }
        self.fault(NetFault::SendFailed, out);
    }

    /// The driver's kernel dropped datagrams arriving on tree `tree` (its receive buffer was
    /// full, e.g. while the process was stopped) before the next datagram it hands over, at
    /// `now`. Copies may be missing that this node cannot see missing: the silence after them is
    /// not a silent leader, and a follower that took it for one would lead from a log that lacks
    /// what the leader decided meanwhile (an acknowledged write lost). An active follower
    /// therefore makes the safe exit — before its timers run at `now` — and rejoins; a leader,
    /// which receives no DECIDE copies, and nodes that are not active members are unaffected.
    pub fn receive_overflow(&mut self, now: u64, tree: u8, out: &mut Vec<Action>) {
        if self.state == State::Active && !self.is_leader() {
            self.clock = self.clock.max(now);
            self.fault(NetFault::InputOverflow { tree }, out);
        }
    }

    /// A UDP payload that arrived on tree `tree` (the DECIDE port) from an address nobody
    /// checked ([`Source::Unchecked`]): the card's case (the RTL has no member address table).
    /// The sender checks that need no address still apply (a DECIDE only from the leader of its
    /// epoch, a RECOVER only from an id `< node_count`). Drivers that know the source address
    /// use [`Node::receive_tree_from`].
    pub fn receive_tree(&mut self, now: u64, tree: u8, bytes: &[u8], out: &mut Vec<Action>) {
        self.receive_tree_from(now, tree, Source::Unchecked, bytes, out)
    }

    /// A UDP payload that arrived on tree `tree` from `from` (what the driver knows of its
    /// source address). Only members are heard: a packet from an address that is no member's or
    /// a sender id that is not the member at that address (both only when `from` says so), and,
    /// whatever `from` is, a DECIDE whose sender is not the leader of its epoch (`epoch mod n`)
    /// and a RECOVER from an id outside the cluster are dropped and counted (`unauthorized`);
    /// nothing else changes.
    pub fn receive_tree_from(
        &mut self,
        now: u64,
        tree: u8,
        from: Source,
        bytes: &[u8],
        out: &mut Vec<Action>,
    ) {
        self.advance(now, out);
        // Malformed and foreign packets are counted as such whoever sent them.
        let Some((h, p)) = self.parse(bytes) else {
            return;
        };
        // What the node keeps (logs, host copies, kept copies) is the untagged packet.
        let plain;
        let (h, p, bytes) = if h.key_id == 0 {
            (h, p, bytes)
        } else {
            plain = auth::strip(bytes).into_owned();
            match wire::parse(&plain, self.cfg.cluster_id) {
                Ok((h, p)) => (h, p, &plain[..]),
                Err(_) => return,
            }
        };
        match from {
            Source::NotMember => return self.count(Counter::Unauthorized),
            Source::Member(m) if m != h.sender => return self.count(Counter::Unauthorized),
            Source::Member(_) | Source::Unchecked => {}
        }
        // These need no address: checked for every driver (the card checks the DECIDE one; it
        // does not take RECOVER at all).
        let n = self.cfg.node_count as u32;
        let d = match p {
            Packet::Decide(d) if h.sender as u32 != d.meta.epoch % n => {
                return self.count(Counter::Unauthorized);
            }
            Packet::Decide(d) if h.sender != self.cfg.node_id => d,
            Packet::Recover(_) if h.sender as u32 >= n => {
                return self.count(Counter::Unauthorized);
            }
            Packet::Recover(r) if self.recovery_on && tree < self.cfg.trees => {
                return self.recover_packet(now, h.sender, r, out);
            }
            _ => return self.count(Counter::Ignored),
        };
        if tree >= self.cfg.trees || d.meta.tree != tree {
            // A copy must travel on the tree its header names.
            return self.count(Counter::Ignored);
        }
        match self.state {
            State::Disabled | State::Faulted => self.count(Counter::Ignored),
            State::Recovering => self.recovering_copy(now, bytes, &d, out),
            // An armed node listens from the first START copy on (later messages may
            // overtake START's other copies when the loop period is below the window).
            State::Armed
                if d.meta.kind != DecideKind::Start
                    && self.rx.as_ref().is_none_or(|r| r.in_flight() == 0) =>
            {
                self.armed_seen = Some(now);
                self.count(Counter::Ignored)
            }
            State::Joining => {
                // Every copy goes to the kept copies until the state transfer is done, before
                // the lock-on and after it. After it, the messages before the lock-on point
                // are not ours to deliver (a tree that showed a later message first made the
                // lock-on point pass them); those after it we deliver only if every tree
                // brings them, and a tree that is down for us makes us fault on them again,
                // with their copies from the live tree as the only trace of what the leader
                // may have acknowledged (seed 5088602 lost 36 acknowledged writes that way).
                if let Some(t) = self.tentative.as_mut() {
                    t.offer(&d, bytes);
                }
                if self.sync.is_some() {
                    self.sync_copy(now, &d, out)
                } else {
                    self.copy(now, bytes, &d, out)
                }
            }
            _ => self.copy(now, bytes, &d, out),
        }
    }

    /// A UDP payload that arrived on the client port.
    pub fn receive_client(&mut self, now: u64, bytes: &[u8], out: &mut Vec<Action>) {
        self.receive_clients(now, core::iter::once(bytes), out);
    }

    /// UDP payloads that arrived on the client port together (a driver that reads its socket in
    /// batches), all at `now`: the node's timers run once, before the first, and then each is
    /// taken in order. The same as [`Node::receive_client`] for each at the same instant, except
    /// that a leader's early send (README "Early sends") cannot fall between two of them: what
    /// arrived together is queued together and leaves in one batch at the next send (the
    /// driver's `tick` at [`Node::next_deadline`]), instead of the first request alone and each
    /// of the others in a message of its own whenever taking the previous one outlasted
    /// `min_gap` (measured: one request per DECIDE at every load).
    pub fn receive_clients<'a>(
        &mut self,
        now: u64,
        batch: impl IntoIterator<Item = &'a [u8]>,
        out: &mut Vec<Action>,
    ) {
        self.advance(now, out);
        for bytes in batch {
            self.client_request(bytes, out);
        }
    }

    /// One client datagram (the timers have run).
    fn client_request(&mut self, bytes: &[u8], out: &mut Vec<Action>) {
        let e = match self.parse(bytes) {
            Some((_, Packet::Request(e))) => e,
            Some(_) => return self.count(Counter::Ignored),
            None => return,
        };
        if !self.is_leader() {
            self.count(Counter::NotLeaderReplies);
            let leader = if self.running() && self.leader() != self.cfg.node_id {
                self.leader()
            } else {
                wire::SENDER_NONE
            };
            let p = Packet::ReplyNotLeader(wire::ReplyNotLeader {
                client_id: e.client_id,
                seq: e.seq,
                leader,
                epoch: self.epoch,
            });
            return self.reply(e.client_id, &p, out);
        }
        // Room for a tag is always kept, so tags can be turned on by a CONFIG instance.
        if e.wire_len() + wire::HEADER_LEN + wire::DECIDE_HEADER_LEN + wire::TAG_LEN
            > self.cfg.max_packet()
        {
            return self.count(Counter::RequestsOversize);
        }
        if self.fifo.len() >= self.cfg.fifo_depth as usize {
            return self.count(Counter::RequestsDropped);
        }
        self.count(Counter::RequestsAccepted);
        self.fifo.push_back(Queued {
            client_id: e.client_id,
            seq: e.seq,
            flags: e.flags,
            payload: e.payload.to_vec(),
        });
    }

    // ----- internals -------------------------------------------------------

    fn running(&self) -> bool {
        matches!(self.state, State::Active | State::Joining) && self.sync.is_none()
    }

    /// Only active members time out: a joining node listens (it adopts the
    /// epochs it sees) but never deposes a leader, whose timeout it may not know yet.
    fn timer_running(&self) -> bool {
        self.state == State::Active && !self.is_leader()
    }

    fn count(&mut self, c: Counter) {
        self.counters[c as usize] += 1;
    }

    /// Parse and authenticate: a tagged packet must carry the right tag for a key of this
    /// node's ring, and an untagged one is refused while tags are required (`auth_mode` 2).
    /// Refusals are counted (`unauthorized`).
    fn parse<'a>(&mut self, bytes: &'a [u8]) -> Option<(wire::Header, Packet<'a>)> {
        match wire::parse(bytes, self.cfg.cluster_id) {
            Ok(p) if auth::verify(bytes, &self.keys, self.cfg.auth_mode == 2).is_err() => {
                let _ = p;
                self.count(Counter::Unauthorized);
                None
            }
            Ok(p) => Some(p),
            Err(ParseError::Foreign(_)) => {
                self.count(Counter::Foreign);
                None
            }
            Err(ParseError::Malformed(_)) => {
                self.count(Counter::Malformed);
                None
            }
        }
    }

    fn reset_protocol(&mut self) {
        self.epoch = 0;
        self.lead_epoch = None;
        self.activate_on_rx = false;
        self.timeout_from_member = false;
        self.joining_config_timeout = None;
        self.sync_violation = false;
        self.lins = Some(0);
        self.next_send = 0;
        self.send_seq = 0;
        self.fifo.clear();
        self.last_rx = 0;
        self.rx = Some(Receiver::new(self.cfg.trees, self.cfg.window(), 0));
        self.skip_below = None;
        self.sync = None;
        self.first_logged = None;
        self.member_lins = None;
        self.fault_epoch = 0;
        self.next_notice = 0;
        self.round = None;
        self.peer_out = vec![None; self.cfg.node_count as usize];
        self.heard_top = vec![None; self.cfg.node_count as usize];
        self.last_send_at = 0;
        self.armed_seen = None;
        self.seen_round = 0;
        self.last_value_sent = None;
        self.inflight.clear();
        self.tentative = None;
        self.gap = None;
        self.gap_asked = None;
        self.out_timeout = None;
        self.lead_rollback = None;
        self.recovery_heard = None;
    }

    fn set_state(&mut self, s: State, out: &mut Vec<Action>) {
        if s == State::Active
            && let Some((_, at)) = self.member_lins.take()
        {
            // A rejoin ended (ACTIVATE after the state transfer, which brought what the kept
            // copies held).
            self.rstats.rejoins_done += 1;
            self.tentative = None;
            self.end_outage(at);
        }
        if s == State::Active {
            // A leader is followed (or this node leads): the logs heard of meanwhile are in
            // its history.
            self.heard_top.iter_mut().for_each(|h| *h = None);
        }
        if self.state != s {
            self.state = s;
            out.push(Action::StateChanged(s));
        }
    }

    fn violation(&mut self, v: Violation, out: &mut Vec<Action>) {
        self.sync_violation = true;
        out.push(Action::Violation(v));
    }

    /// Drop every queued request (counted: their clients get no OK and resend).
    fn drop_fifo(&mut self) {
        self.counters[Counter::RequestsDropped as usize] += self.fifo.len() as u64;
        self.fifo.clear();
    }

    fn fault(&mut self, f: NetFault, out: &mut Vec<Action>) {
        let was_member =
            matches!(self.state, State::Active | State::Recovering) || self.member_lins.is_some();
        if self.recovery_on && self.state == State::Active && !self.is_leader() {
            let mut t = Tentative::new(
                self.epoch,
                self.rx.as_ref().map_or(0, |r| r.base()),
                self.lins.unwrap_or(0),
            );
            for (_, b) in core::mem::take(&mut self.inflight) {
                if let Ok((_, Packet::Decide(d))) = wire::parse(&b, self.cfg.cluster_id) {
                    t.offer(&d, &b);
                }
            }
            self.tentative = Some(t);
        }
        self.count(Counter::NetFaults);
        self.drop_fifo();
        self.set_state(State::Faulted, out);
        out.push(Action::NetFault(f));
        if self.recovery_on {
            self.start_rejoin(was_member, out);
        }
    }

    fn advance(&mut self, now: u64, out: &mut Vec<Action>) {
        self.clock = self.clock.max(now);
        if self.state == State::Recovering {
            return self.recovery_step(now, out);
        }
        if self.state == State::Joining && self.member_lins.is_some() {
            // Rejoining: tell the others while not locked onto a stream; a silence of a
            // timeout means no leader is left: recover with the other survivors.
            if self.sync.is_some() && now >= self.next_notice {
                self.send_recover(0, wire::VOTE_NONE, out);
                self.next_notice = now + (self.cfg.timeout as u64 / 2).max(1);
            }
            if now >= self.last_rx + self.cfg.timeout as u64 {
                let round = self.fault_epoch.saturating_add(1).max(self.seen_round);
                return self.enter_recovery(now, round, out);
            }
        }
        if !self.running() && self.state != State::Armed {
            return;
        }
        // 1. RSBCAST window (Alg. 1 line 12); an armed node may be receiving START.
        if let Some(f) = self.rx.as_ref().and_then(|r| r.expire(now)) {
            return self.fault(NetFault::Rsbcast(f), out);
        }
        // 2. Timeout → deterministic succession (Alg. 2 lines 11–13).
        let t = self.cfg.timeout as u64;
        while self.timer_running() && now >= self.last_rx + t {
            self.last_rx += t;
            self.count(Counter::Timeouts);
            // One way to a leader at a time: a follower whose leader went silent while a
            // recovery is running takes part in it instead of running the succession (which
            // could make it lead from its own log beside the recovery's leader).
            if self.recovery_on
                && self.state == State::Active
                && self
                    .recovery_heard
                    .is_some_and(|at| now < at + self.round_len())
            {
                self.member_lins = Some((self.lins.unwrap_or(0), now));
                self.fault_epoch = self.epoch;
                self.drop_fifo();
                let round = self.epoch.saturating_add(1).max(self.seen_round);
                return self.enter_recovery(now, round, out);
            }
            let Some(next) = self.epoch.checked_add(1) else {
                return self.fault(NetFault::EpochExhausted, out);
            };
            self.new_epoch(next, out);
            if self.leader() == self.cfg.node_id {
                self.lead_epoch = Some(self.epoch);
                self.next_send = self.last_rx;
                self.last_send_at = self.last_rx;
                self.send_seq = 0;
            }
        }
        // 3. The loop (Alg. 3 line 7), or an early send: requests are queued and `min_gap`
        // has passed since the last send (README "Early sends").
        if self.is_leader() && (now >= self.next_send || self.early_send_due(now)) {
            self.leader_send(now, None, out);
        }
    }

    /// When an early send is due (None: early sends are off or nothing is queued). The loop
    /// counter restarted at `next_send - loop_period`; an early send needs it at `min_gap`.
    fn early_send_at(&self) -> Option<u64> {
        if self.cfg.min_gap == 0 || self.fifo.is_empty() {
            return None;
        }
        Some((self.next_send + self.cfg.min_gap as u64).saturating_sub(self.cfg.loop_period as u64))
    }

    fn early_send_due(&self, now: u64) -> bool {
        self.early_send_at().is_some_and(|t| now >= t)
    }

    fn new_epoch(&mut self, epoch: u32, out: &mut Vec<Action>) {
        self.epoch = epoch;
        self.inflight.clear();
        self.rx = Some(Receiver::new(self.cfg.trees, self.cfg.window(), 0));
        self.skip_below = None;
        self.drop_fifo();
        out.push(Action::LeaderChanged {
            epoch,
            leader: self.leader(),
        });
    }

    /// One leader send: START, a value from the FIFO, or a heartbeat.
    fn leader_send(&mut self, now: u64, forced: Option<DecideKind>, out: &mut Vec<Action>) {
        // An early send is not late (and must not underflow).
        let late = now.saturating_sub(self.next_send);
        if forced.is_none() && late > self.cfg.late_tick_slack as u64 {
            self.count(Counter::LateTicks);
            self.violation(Violation::LateTick { late }, out);
        }
        // The lease: the followers' timers were reset by our last send at the earliest, so
        // they may time out from `last_send_at + timeout` on. A copy sent now arrives by
        // `now + window`; if that is not before, a successor may already lead: step down.
        #[cfg(feature = "mutations")]
        let skip_lease = self.mutations.skip_lease;
        #[cfg(not(feature = "mutations"))]
        let skip_lease = false;
        if self.recovery_on
            && forced.is_none()
            && !skip_lease
            && now + self.cfg.window() >= self.last_send_at + self.lease_timeout()
        {
            self.rstats.lease_expired += 1;
            self.violation(Violation::LeaseExpired { late }, out);
            self.lead_epoch = None;
            self.last_rx = self.last_send_at;
            self.drop_fifo();
            return;
        }
        if !self.can_seal() {
            // Nothing could leave tagged: deciding here alone would acknowledge writes no
            // follower can receive. A send that cannot happen is a failed send.
            self.count(Counter::Unauthorized);
            return self.fault(NetFault::SendFailed, out);
        }
        self.lead_rollback = None;
        self.lease_end = self.last_send_at + self.lease_timeout();
        self.last_send_at = now;
        let lins = self.lins.unwrap_or(0);
        // Take the batch (Alg. 3 lines 9–11; DET = FIFO order).
        let mut take = 0;
        let mut kind = forced.unwrap_or(DecideKind::Heartbeat);
        if forced.is_none() && !self.fifo.is_empty() {
            if self.fifo[0].flags & wire::ENTRY_FLAG_CONFIG != 0 {
                kind = DecideKind::Config;
                take = 1;
            } else {
                kind = DecideKind::Batch;
                let room = self.cfg.max_packet()
                    - wire::HEADER_LEN
                    - wire::DECIDE_HEADER_LEN
                    - wire::TAG_LEN;
                let mut used = 0;
                for q in self.fifo.iter() {
                    let n = q.entry().wire_len();
                    if take == self.cfg.batch_max as usize
                        || q.flags & wire::ENTRY_FLAG_CONFIG != 0
                        || used + n > room
                    {
                        break;
                    }
                    used += n;
                    take += 1;
                }
            }
        }
        let batch: Vec<Queued> = self.fifo.drain(..take).collect();
        let instance = lins + 1;
        let mut raw = alloc::vec![0u8; batch.iter().map(|q| q.entry().wire_len()).sum()];
        let entries: Vec<Entry<'_>> = batch.iter().map(Queued::entry).collect();
        // Sizes were checked when the requests were queued; emitting cannot fail.
        let _ = wire::emit_entries(entries.iter(), &mut raw);
        let seq = self.send_seq;
        self.send_seq = self.send_seq.wrapping_add(1);
        let mut host_copy = Vec::new();
        for tree in 0..self.cfg.trees {
            let p = Packet::Decide(Decide {
                meta: DecideMeta {
                    instance,
                    epoch: self.epoch,
                    msg_seq: seq,
                    tree,
                    kind,
                },
                count: take as u16,
                entries_raw: &raw,
            });
            let packet = p
                .to_vec(self.cfg.cluster_id, self.cfg.node_id)
                .unwrap_or_default();
            if tree == 0 {
                host_copy = packet.clone();
            }
            // can_seal() was checked above: sealing cannot fail here.
            let Some(packet) = self.seal(packet) else {
                continue;
            };
            // (The `skip-lease` mutation: a leader without a lease has none to hand on either.)
            let lease_end = (self.recovery_on && !skip_lease).then_some(self.lease_end);
            out.push(Action::Send {
                tree,
                packet,
                lease_end,
            });
        }
        self.next_send = now + self.cfg.loop_period as u64;
        self.last_value_sent = kind.is_value().then_some(instance);
        if kind.is_value() {
            self.count(Counter::SentValues);
            self.decide(instance, kind, host_copy, out);
            for (index, q) in batch.iter().enumerate() {
                let ok = Packet::ReplyOk(wire::ReplyOk {
                    client_id: q.client_id,
                    seq: q.seq,
                    instance,
                    index: index as u16,
                });
                self.reply(q.client_id, &ok, out);
            }
        } else {
            self.count(Counter::SentHeartbeats);
        }
    }

    fn reply(&mut self, client_id: u32, p: &Packet<'_>, out: &mut Vec<Action>) {
        if let Some(packet) = p
            .to_vec(self.cfg.cluster_id, self.cfg.node_id)
            .ok()
            .and_then(|v| self.seal(v))
        {
            out.push(Action::Reply { client_id, packet });
        }
    }

    /// Tag an outgoing packet when tags are on (`auth_mode` ≠ 0) with key `auth_key`. None (and
    /// counted as `unauthorized`) when this node's ring lacks that key.
    fn seal(&mut self, mut packet: Vec<u8>) -> Option<Vec<u8>> {
        if self.cfg.auth_mode == 0 {
            return Some(packet);
        }
        match auth::seal_vec(&mut packet, &self.keys, self.cfg.auth_key) {
            Ok(()) => Some(packet),
            Err(_) => {
                self.count(Counter::Unauthorized);
                None
            }
        }
    }

    /// Whether this node can tag what it sends (tags off, or its send key is in its ring).
    pub fn can_seal(&self) -> bool {
        self.cfg.auth_mode == 0 || self.keys.get(self.cfg.auth_key).is_some()
    }

    /// The keys this node tags and checks packets with. Replaced whole (a key rotation adds the
    /// new key to every node's ring first, then a CONFIG instance moves `auth_key` to it).
    pub fn set_keys(&mut self, keys: Keyring) {
        self.keys = keys;
    }

    /// This node's key ring.
    pub fn keys(&self) -> &Keyring {
        &self.keys
    }

    /// Record a decision (leader at send, follower at delivery) and hand it to the host.
    fn decide(&mut self, instance: u64, kind: DecideKind, packet: Vec<u8>, out: &mut Vec<Action>) {
        self.lins = Some(instance);
        if self.first_logged.is_none() && self.state == State::Joining {
            self.first_logged = Some(instance);
        }
        // A rejoining node keeps every copy it gets until its state transfer (README "Kept
        // copies"). When its stream took up where its log ended, what it decides moves its
        // place (below), so the kept copies up to it are not kept twice: what stays is what is
        // still in flight, however long the transfer takes. (With a gap they all stay: a
        // second safe exit forgets decisions beyond the gap, and the kept copies are then
        // their only trace; seed 5066222.)
        if self.state == State::Joining
            && let (Some(t), Some((m, _))) = (self.tentative.as_mut(), self.member_lins)
            && self.first_logged.is_some_and(|f| f <= m + 1)
        {
            t.entries.retain(|e| e.0 > instance);
        }
        // A rejoining node whose stream took up where its log ended has no gap: its place (for a
        // recovery) moves with what it decides.
        if let Some((m, at)) = self.member_lins
            && self.first_logged.is_some_and(|f| f <= m + 1)
        {
            self.member_lins = Some((m.max(instance), at));
        }
        self.count(Counter::Delivered);
        let d = Decision {
            instance,
            epoch: self.epoch,
            kind,
            packet,
            recovered: self.state == State::Recovering,
        };
        if kind == DecideKind::Config {
            self.apply_config(&d);
        }
        out.push(Action::Deliver(d));
    }

    /// CONFIG instances may only raise the timeout (§5.2) and change the packet tags
    /// (`auth_mode`, `auth_key`: turning tags on, key rotation); everything else is refused and
    /// counted, identically on every node because every node decides the same entries.
    fn apply_config(&mut self, d: &Decision) {
        let items: Vec<wire::ConfigItem> = d
            .decide(self.cfg.cluster_id)
            .entries()
            .flat_map(|e| e.config_items())
            .collect();
        for item in items {
            if matches!(item.addr, addr::AUTH_MODE | addr::AUTH_KEY) {
                // Every node, joining or not, switches at this instance.
                let mut c = self.cfg;
                if c.set(item.addr, item.value as u64).is_ok() && c.validate().is_ok() {
                    self.cfg = c;
                    self.count(Counter::ConfigApplied);
                } else {
                    self.count(Counter::ConfigRejected);
                }
                continue;
            }
            if self.state == State::Joining {
                // Judged against the members' timeout, which this node learns only at
                // activation: keep the largest candidate for then.
                let mut c = self.cfg;
                if item.addr == addr::TIMEOUT
                    && c.set(item.addr, item.value as u64).is_ok()
                    && c.validate().is_ok()
                {
                    let best = self.joining_config_timeout.get_or_insert(item.value);
                    *best = (*best).max(item.value);
                }
                continue;
            }
            let mut c = self.cfg;
            let ok = item.addr == addr::TIMEOUT
                && item.value >= self.cfg.timeout
                && c.set(item.addr, item.value as u64).is_ok()
                && c.validate().is_ok();
            if ok {
                self.cfg = c;
                self.count(Counter::ConfigApplied);
            } else {
                self.count(Counter::ConfigRejected);
            }
        }
    }

    /// A joining node locks onto the stream: once every tree has shown a copy
    /// of the same epoch, it starts with the first message no tree has shown
    /// yet, so every copy of it is still to come.
    fn sync_copy(&mut self, now: u64, d: &Decide<'_>, out: &mut Vec<Action>) {
        // A stream is alive (a rejoining node's silence timer).
        self.last_rx = now;
        let Some(sync) = self.sync.as_mut() else {
            return;
        };
        let (e, s) = (d.meta.epoch, d.meta.msg_seq);
        if sync.epoch != Some(e) {
            *sync = Sync {
                epoch: Some(e),
                trees: 0,
                newest: s,
            };
        } else if (s.wrapping_sub(sync.newest) as i32) > 0 {
            sync.newest = s;
        }
        sync.trees |= 1 << d.meta.tree;
        let all = (1u8 << self.cfg.trees) - 1;
        if sync.trees & all == all {
            // One past the newest seq any tree has shown.
            let start = sync.newest.wrapping_add(1);
            self.sync = None;
            // A live stream of another epoch: its leader never had the kept copies (they were
            // never acknowledged), and the state transfer brings what it decided. The stream of
            // the epoch we faulted under is the leader that sent them: they stay kept until the
            // state transfer is done (`set_state`), since that leader may die before it, and a
            // recovery then needs them (its acknowledged writes may live on no other node).
            if self.tentative.as_ref().is_some_and(|t| t.epoch != e) {
                self.tentative = None;
            }
            if self.epoch != e {
                self.epoch = e;
                out.push(Action::LeaderChanged {
                    epoch: e,
                    leader: self.leader(),
                });
            }
            self.rx = Some(Receiver::new(self.cfg.trees, self.cfg.window(), start));
            self.skip_below = Some(start);
            self.last_rx = now;
        }
        self.count(Counter::Ignored);
    }

    /// One DECIDE copy through epoch rules and RSBCAST.
    fn copy(&mut self, now: u64, bytes: &[u8], d: &Decide<'_>, out: &mut Vec<Action>) {
        let m = d.meta;
        if m.epoch < self.epoch {
            self.count(Counter::StaleEpoch);
            return self.violation(Violation::StaleEpoch { epoch: m.epoch }, out);
        }
        if m.epoch > self.epoch {
            if self.is_leader() {
                self.violation(Violation::Deposed { epoch: m.epoch }, out);
            }
            if self.rx.as_ref().is_some_and(|r| r.in_flight() > 0) {
                return self.fault(NetFault::EpochChangeInFlight, out);
            }
            self.new_epoch(m.epoch, out);
        } else if self.is_leader() {
            // Our own epoch from someone else: cannot happen unless two nodes share an id.
            return self.count(Counter::Ignored);
        }
        if self
            .skip_below
            .is_some_and(|s| (m.msg_seq.wrapping_sub(s) as i32) < 0)
        {
            return self.count(Counter::Ignored);
        }
        let Some(rx) = self.rx.as_mut() else { return };
        let outcome = rx.copy(now, m.tree, m.msg_seq);
        #[cfg(feature = "mutations")]
        let outcome = match outcome {
            CopyOutcome::First if self.mutations.deliver_on_first_copy => CopyOutcome::Deliver,
            CopyOutcome::Deliver if self.mutations.deliver_on_first_copy && self.cfg.trees > 1 => {
                CopyOutcome::More
            }
            o => o,
        };
        match outcome {
            CopyOutcome::Duplicate => self.count(Counter::DuplicateCopies),
            CopyOutcome::Fault(f) => {
                if let FaultKind::MissingCopy { missing } = f
                    && missing & (1 << m.tree) != 0
                {
                    self.count(Counter::LateCopies);
                    self.violation(Violation::LateCopy { tree: m.tree }, out);
                }
                self.fault(NetFault::Rsbcast(f), out);
                // The copy that showed the fault is a message of the leader's stream too: it
                // goes to the kept copies (held there until the messages before it come). It
                // may be the only copy of an acknowledged message this node ever gets.
                if let Some(t) = self.tentative.as_mut() {
                    t.offer(d, bytes);
                }
            }
            CopyOutcome::First | CopyOutcome::More => {
                if self.recovery_on && self.inflight.back().is_none_or(|b| b.0 != m.msg_seq) {
                    self.inflight.push_back((m.msg_seq, bytes.to_vec()));
                    if self.inflight.len() > regs::MAX_IN_FLIGHT as usize {
                        self.inflight.pop_front();
                    }
                }
                self.reset_timer(now, out)
            }
            CopyOutcome::Deliver => {
                while self
                    .inflight
                    .front()
                    .is_some_and(|f| (f.0.wrapping_sub(m.msg_seq) as i32) <= 0)
                {
                    self.inflight.pop_front();
                }
                self.skip_below = None;
                self.reset_timer(now, out);
                self.deliver(d, bytes, out)
            }
        }
    }

    // ----- recovery extension (software only; README "Recovery") ------------

    /// The silence after which some node may act without us: our timeout, or the smaller one
    /// a node that is out reported (it was out when a CONFIG raised the timeout).
    fn lease_timeout(&self) -> u64 {
        self.out_timeout
            .map_or(self.cfg.timeout, |t| t.min(self.cfg.timeout)) as u64
    }

    fn majority(&self) -> usize {
        self.cfg.node_count as usize / 2 + 1
    }

    /// How long a round gathers reports before its candidate may lead or it is skipped: a
    /// report sent when a node entered the round reaches everyone within `window`, and nodes
    /// enter a round at most `window` apart (they move when they hear it).
    fn settle(&self) -> u64 {
        2 * self.cfg.window() + self.cfg.loop_period as u64
    }

    /// A round with a candidate that should have led but whose stream never came ends here.
    fn round_len(&self) -> u64 {
        self.settle() + self.cfg.timeout as u64 + 2 * self.cfg.window()
    }

    fn end_outage(&mut self, fault_at: u64) {
        let o = self.clock.saturating_sub(fault_at);
        self.rstats.last_outage = Some(o);
        self.rstats.max_outage = self.rstats.max_outage.max(o);
    }

    /// A RECOVER on every tree: a FAULT notice (round 0) or this node's report in `round`.
    fn send_recover(&mut self, round: u32, vote: u8, out: &mut Vec<Action>) {
        let lins = if self.state == State::Recovering {
            self.report_lins()
        } else {
            self.member_lins.map_or(self.lins.unwrap_or(0), |(l, _)| l)
        };
        let top = self.report_top().max(lins);
        let p = Packet::Recover(wire::Recover {
            round,
            epoch: self.fault_epoch,
            lins,
            top,
            vote,
            timeout: self.cfg.timeout,
        });
        let Some(packet) = p
            .to_vec(self.cfg.cluster_id, self.cfg.node_id)
            .ok()
            .and_then(|v| self.seal(v))
        else {
            return;
        };
        for tree in 0..self.cfg.trees {
            self.rstats.recover_sent += 1;
            out.push(Action::Send {
                tree,
                packet: packet.clone(),
                lease_end: None,
            });
        }
    }

    /// After a safe exit: come back through the join path (the driver transfers state from a
    /// live member once the node has locked onto a stream). A node that was a member keeps its
    /// place (its last decided instance) for a recovery, should no leader be left.
    fn start_rejoin(&mut self, was_member: bool, out: &mut Vec<Action>) {
        let now = self.clock;
        let keep = match self.member_lins {
            Some(m) => Some(m),
            None if was_member => Some((self.lins.unwrap_or(0), now)),
            None => None,
        };
        // A leader deposed right after a send in the same input: the driver may still find
        // that send failed (`copies_failed`), which takes it back from the place kept here.
        let sent = self.last_value_sent.filter(|_| keep.is_some());
        let tentative = self.tentative.take().filter(|_| keep.is_some());
        self.reset_for_rejoin(now, keep);
        self.last_value_sent = sent;
        self.tentative = tentative;
        self.rstats.rejoins_started += 1;
        self.set_state(State::Joining, out);
        out.push(Action::Rejoin);
        if keep.is_some() {
            self.send_recover(0, wire::VOTE_NONE, out);
            self.next_notice = now + (self.cfg.timeout as u64 / 2).max(1);
        }
    }

    /// Protocol state back to reset values for the join path, keeping what a node coming back
    /// carries: its epoch (the later of its own and the one it faulted in), its place
    /// (`keep`), what it heard of recoveries (rounds, when, the others' timeouts and log ends).
    /// It then locks onto a stream from `now`.
    fn reset_for_rejoin(&mut self, now: u64, keep: Option<(u64, u64)>) {
        let epoch = self.epoch.max(self.fault_epoch);
        let (seen, heard, out_t) = (self.seen_round, self.recovery_heard, self.out_timeout);
        let heard_top = core::mem::take(&mut self.heard_top);
        self.reset_protocol();
        self.epoch = epoch;
        self.fault_epoch = epoch;
        self.seen_round = seen;
        self.recovery_heard = heard;
        self.out_timeout = out_t;
        self.heard_top = heard_top;
        self.member_lins = keep;
        self.lins = None;
        self.sync = Some(Sync::default());
        self.last_rx = now;
    }

    /// No leader is left (or this leader learnt that every other node made the safe exit):
    /// elect one with the other survivors.
    fn enter_recovery(&mut self, now: u64, round: u32, out: &mut Vec<Action>) {
        let Some((lins, _)) = self.member_lins else {
            // A node that never was a member has no log to bring: it waits for a stream.
            return;
        };
        // Decisions beyond a gap (a rejoining node that locked onto the stream after missing
        // instances): the leader may have acknowledged them counting on us, so they count in
        // our report (`top`) until a transfer fills the gap (`FillGap`).
        self.gap = match (self.first_logged, self.lins) {
            (Some(f), Some(l)) if self.state == State::Joining && f > lins + 1 && l >= f => {
                Some((f, l))
            }
            _ => None,
        };
        self.gap_asked = None;
        self.sync = None;
        self.rx = None;
        self.lead_epoch = None;
        self.lins = Some(lins);
        // Our gap ends where copies we kept end: the leader that sent them sent what we decided
        // after the gap on its stream, so they fill it (no one else may be able to: a transfer
        // serves only decided instances, and another node's own gap may end at them).
        if let (Some((first, top)), Some(t)) = (self.gap, self.tentative.as_ref())
            && t.entries.first().is_some_and(|e| e.0 == lins + 1)
            && t.lins + 1 >= first
        {
            let fill: Vec<Decision> = t
                .entries
                .iter()
                .filter(|e| e.0 < first)
                .map(|(instance, kind, packet)| Decision {
                    instance: *instance,
                    epoch: t.epoch,
                    kind: *kind,
                    packet: packet.clone(),
                    recovered: true,
                })
                .collect();
            self.rstats.kept_after_fault += fill.len() as u64;
            self.rstats.gaps_filled += 1;
            out.push(Action::FilledFromKept(fill));
            self.gap = None;
            // Kept copies beyond our highest decision stay kept (reported, decided if the
            // recovery restarts from us); those up to it are in our log now.
            if let Some(t) = self.tentative.as_mut() {
                t.entries.retain(|e| e.0 > top);
                if t.entries.is_empty() {
                    self.tentative = None;
                }
            }
            self.lins = Some(top);
            if let Some((_, at)) = self.member_lins {
                self.member_lins = Some((top, at));
            }
        }
        self.new_round(now, round);
        self.set_state(State::Recovering, out);
        // What the last leader sent after our safe exit counts in our report, but is decided
        // only if a recovery restarts from it (`take_tentative`).
        if self
            .tentative
            .as_ref()
            .is_some_and(|t| t.entries.first().is_none_or(|e| e.0 != lins + 1))
        {
            self.tentative = None;
        }
        self.recovery_step(now, out);
    }

    /// The log this node brings to a recovery: its decided instances, then the copies it kept
    /// after its safe exit.
    fn report_lins(&self) -> u64 {
        let lins = self.lins.unwrap_or(0);
        match &self.tentative {
            Some(t) if self.state == State::Recovering => {
                t.entries.last().map_or(lins, |e| e.0.max(lins))
            }
            _ => lins,
        }
    }

    /// The highest instance this node decided: its report's log end, or beyond it when it holds
    /// decisions after a gap.
    fn report_top(&self) -> u64 {
        let l = self.report_lins();
        match self.gap {
            Some((_, top)) if self.state == State::Recovering => top.max(l),
            _ => l,
        }
    }

    /// The driver transferred a snapshot covering `instance` into this node's log (after
    /// [`Action::FillGap`]): with its own decisions after the gap, its log now has no gap up to
    /// its highest decided instance. Returns whether the node took it (it is still recovering
    /// with that gap); if not, the driver keeps the merged entries (they are decided) and
    /// nothing else changes.
    pub fn gap_filled(&mut self, now: u64, instance: u64, out: &mut Vec<Action>) -> bool {
        self.clock = self.clock.max(now);
        let Some((first, top)) = self.gap else {
            return false;
        };
        if self.state != State::Recovering || instance + 1 < first {
            return false;
        }
        let l = top.max(instance);
        self.gap = None;
        self.gap_asked = None;
        self.lins = Some(l);
        if let Some((_, at)) = self.member_lins {
            self.member_lins = Some((l, at));
        }
        self.rstats.gaps_filled += 1;
        self.tentative = None;
        if let Some(r) = self.round.as_mut() {
            // Report the longer log at once.
            r.next_report = now;
        }
        self.recovery_step(now, out);
        true
    }

    /// The recovery restarts from our report: decide the kept copies now (the leader that sent
    /// them decided them; it may have acknowledged them).
    fn take_tentative(&mut self, out: &mut Vec<Action>) {
        let Some(t) = self.tentative.take() else {
            return;
        };
        for (instance, kind, packet) in t.entries {
            if Some(instance) == self.lins.map(|l| l + 1) {
                self.decide(instance, kind, packet, out);
                self.rstats.kept_after_fault += 1;
            }
        }
    }

    fn new_round(&mut self, now: u64, round: u32) {
        self.rstats.rounds += 1;
        self.seen_round = self.seen_round.max(round);
        self.round = Some(Round {
            round,
            entered: now,
            reports: vec![None; self.cfg.node_count as usize],
            vote: wire::VOTE_NONE,
            next_report: now,
            settled: false,
            hopeless: false,
            promised_until: 0,
        });
    }

    /// One step of a recovery round: vote, lead, skip the round, report.
    fn recovery_step(&mut self, now: u64, out: &mut Vec<Action>) {
        let n = self.cfg.node_count as u32;
        let me = self.cfg.node_id;
        let my_lins = self.report_lins();
        let my_top = self.report_top();
        let (settle, round_len, majority) = (self.settle(), self.round_len(), self.majority());
        let window = self.cfg.window();
        let seen_round = self.seen_round;
        // The longest log any node reported since a leader was last followed, in any round:
        // one that went silent since may hold acknowledged writes.
        let heard = self.heard_top.iter().flatten().copied().max().unwrap_or(0);
        let Some(r) = self.round.as_mut() else { return };
        let cand = (r.round % n) as u8;
        // Vote: for ourselves if we are the candidate, else for a candidate whose log is at
        // least as long as ours (it then has every instance we decided, those beyond a gap
        // included).
        if r.vote == wire::VOTE_NONE {
            if cand == me {
                r.vote = me;
            } else if r.reports[cand as usize].is_some_and(|(l, _, _)| l >= my_top.max(heard)) {
                r.vote = cand;
                r.next_report = now;
                r.promised_until = now + settle + 2 * window;
            }
        }
        r.reports[me as usize] = Some((my_lins, my_top, r.vote));
        // The longest history anyone holds (a gap node's decisions beyond its gap included):
        // only a candidate whose log reaches it without a gap may lead.
        let max_lins = r
            .reports
            .iter()
            .flatten()
            .map(|x| x.1)
            .max()
            .unwrap_or(0)
            .max(heard);
        let votes = r.reports.iter().flatten().filter(|x| x.2 == cand).count();
        // A gap in our log: ask a participant whose log covers it for a transfer.
        let fill = match (self.gap, self.gap_asked) {
            (Some((first, _)), asked) if asked.is_none_or(|(_, at)| now >= at + round_len) => r
                .reports
                .iter()
                .enumerate()
                .find(|&(i, x)| i != me as usize && x.is_some_and(|(l, _, _)| l + 1 >= first))
                .map(|(i, _)| (i as u8, first - 1)),
            _ => None,
        };
        #[cfg(feature = "mutations")]
        let votes = if self.mutations.recover_without_majority {
            majority
        } else {
            votes
        };
        let settled = now >= r.entered + settle;
        // The candidate leads in a short window after the settle time only: a voter is bound
        // by its vote until that window (and the first copy's trip) has passed.
        let in_window = now <= r.entered + settle + window;
        if settled && in_window && cand == me && votes >= majority && my_lins >= max_lins {
            let round = r.round;
            return self.lead_recovered(now, round, out);
        }
        // After the settle time, a candidate that cannot win this round (silent, or with a
        // shorter log than someone's) is skipped (once our vote no longer binds us); any other
        // round ends after round_len.
        if settled && !r.settled {
            r.settled = true;
            r.hopeless = r.reports[cand as usize].is_none_or(|(l, _, _)| l < max_lins);
        }
        if let Some((from, instance)) = fill {
            self.gap_asked = Some((from, now));
            out.push(Action::FillGap { from, instance });
        }
        let Some(r) = self.round.as_mut() else { return };
        let promised = now < r.promised_until;
        let skip =
            !promised && (r.hopeless || now >= r.entered + round_len || seen_round > r.round);
        if skip {
            let next = r.round.checked_add(1).map(|x| x.max(seen_round));
            if let Some(next) = next {
                self.new_round(now, next);
                return self.recovery_step(now, out);
            }
        }
        let Some(r) = self.round.as_mut() else { return };
        if now >= r.next_report {
            r.next_report = now + (self.cfg.loop_period as u64).max(1);
            let (round, vote) = (r.round, r.vote);
            self.send_recover(round, vote, out);
        }
    }

    /// Elected in `round`: lead it, from our log's end.
    fn lead_recovered(&mut self, now: u64, round: u32, out: &mut Vec<Action>) {
        // The kept copies are decided with the first send: their host copies follow its
        // copies, so a driver that finds the send failed (or late) drops them with it.
        let before = (self.lins, self.tentative.clone());
        let mut kept = Vec::new();
        self.take_tentative(&mut kept);
        let lins = self.lins.unwrap_or(0);
        // The voters are bound until the lead window has passed: the first copy must leave
        // within it (a driver that finds its send later treats it as failed).
        let window_end = self.round.as_ref().map_or(u64::MAX, |r| {
            r.entered + self.settle() + 2 * self.cfg.window()
        });
        self.round = None;
        if let Some((_, at)) = self.member_lins.take() {
            self.end_outage(at);
        }
        self.rstats.recoveries += 1;
        self.epoch = round;
        self.lead_epoch = Some(round);
        self.next_send = now;
        self.last_send_at = now;
        self.send_seq = 0;
        self.fifo.clear();
        self.rx = Some(Receiver::new(self.cfg.trees, self.cfg.window(), 0));
        self.skip_below = None;
        self.last_rx = now;
        self.peer_out = vec![None; self.cfg.node_count as usize];
        self.set_state(State::Active, out);
        out.push(Action::LeaderChanged {
            epoch: round,
            leader: self.cfg.node_id,
        });
        out.push(Action::Recovered {
            epoch: round,
            leader: self.cfg.node_id,
            lins,
        });
        let first = out.len();
        self.leader_send(now, None, out);
        if self.is_leader() {
            self.lease_end = self.lease_end.min(window_end);
            // The first send's copies must leave within the lead window as well.
            for a in &mut out[first..] {
                if let Action::Send {
                    lease_end: Some(end),
                    ..
                } = a
                {
                    *end = (*end).min(window_end);
                }
            }
            self.lead_rollback = Some(before);
            out.extend(kept);
        } else {
            // Stepped down at once: nothing was decided.
            (self.lins, self.tentative) = before;
        }
    }

    /// A DECIDE copy reached a recovering node: a leader is alive (elected by the recovery, or
    /// one that was never gone). Follow it if our log ends where its stream starts, else rejoin.
    fn recovering_copy(&mut self, now: u64, bytes: &[u8], d: &Decide<'_>, out: &mut Vec<Action>) {
        let m = d.meta;
        if m.epoch < self.fault_epoch {
            // A stray copy of a leader we left.
            return self.count(Counter::Ignored);
        }
        // A late copy of the leader we faulted under, within reach of what we kept: a
        // straggler of a stream that went silent (a live leader would be far beyond it).
        if let Some(t) = self.tentative.as_mut()
            && m.epoch == t.epoch
            && (m.msg_seq.wrapping_sub(t.next_seq) as i32).unsigned_abs() <= regs::MAX_IN_FLIGHT
        {
            t.offer(d, bytes);
            return self.count(Counter::Ignored);
        }
        let lins = self.lins.unwrap_or(0);
        if m.instance <= lins && m.instance != u64::MAX {
            // This stream would decide instances we already decided: it cannot be ours (a
            // recovery elected a leader without our report). Stay out and say so.
            self.count(Counter::StaleEpoch);
            return self.violation(Violation::StaleEpoch { epoch: m.epoch }, out);
        }
        let round = self.round.as_ref().map_or(0, |r| r.round);
        if m.msg_seq == 0 && m.epoch >= round && m.instance == self.report_lins() + 1 {
            // The elected leader restarts from our report: our kept copies are decided.
            self.take_tentative(out);
        }
        // Anything else: a leader that never saw our kept copies (the one that sent them
        // crashed before every tree had them, so they were never acknowledged): drop them.
        self.tentative = None;
        let lins = self.lins.unwrap_or(0);
        if m.msg_seq == 0 && m.instance == lins + 1 {
            self.round = None;
            if let Some((_, at)) = self.member_lins.take() {
                self.end_outage(at);
            }
            self.rstats.recoveries += 1;
            self.epoch = m.epoch;
            self.lead_epoch = None;
            self.rx = Some(Receiver::new(self.cfg.trees, self.cfg.window(), 0));
            self.skip_below = None;
            self.last_rx = now;
            self.set_state(State::Active, out);
            out.push(Action::LeaderChanged {
                epoch: m.epoch,
                leader: self.leader(),
            });
            out.push(Action::Recovered {
                epoch: m.epoch,
                leader: self.leader(),
                lins,
            });
            return self.copy(now, bytes, d, out);
        }
        // Behind the stream, or joining it mid-way: the join path, keeping our place.
        self.round = None;
        self.reset_for_rejoin(now, self.member_lins);
        self.set_state(State::Joining, out);
        out.push(Action::Rejoin);
        self.sync_copy(now, d, out);
    }

    /// A RECOVER from node `from`.
    fn recover_packet(&mut self, now: u64, from: u8, r: wire::Recover, out: &mut Vec<Action>) {
        if from >= self.cfg.node_count || from == self.cfg.node_id {
            return self.count(Counter::Ignored);
        }
        self.rstats.recover_received += 1;
        self.heard_top[from as usize] = Some(r.top.max(r.lins));
        // A node of a later epoch than our kept copies': a leader of that epoch took over from
        // a log that ends before them (a follower that delivered or faulted on them does not
        // lead by succession), so they were never acknowledged, and it may have decided their
        // instances differently. Keeping them would bring a second history to the recovery.
        if self.tentative.as_ref().is_some_and(|t| r.epoch > t.epoch) {
            self.tentative = None;
        }
        // A node of our kept copies' epoch decided beyond them (it locked onto that leader's
        // stream after a gap): the leader sent them before what that node decided, so they
        // are in the one history. Decide them now: a node with a gap that ends at them can
        // then have it filled by a transfer from our log, which holds only decided instances
        // (else no one could ever lead: a seed of the fifteenth session's campaigns). Not
        // with a gap of our own before them: the host would get them after later instances.
        if self.state == State::Recovering
            && self.gap.is_none()
            && self
                .tentative
                .as_ref()
                .is_some_and(|t| r.epoch == t.epoch && r.top.max(r.lins) > t.lins)
        {
            self.take_tentative(out);
            if let (Some(l), Some((m, at))) = (self.lins, self.member_lins)
                && l > m
            {
                self.member_lins = Some((l, at));
            }
        }
        // Whoever leads now or later bounds its lease by the smallest timeout a node that was
        // out reported (kept: such a node may lock onto a later leader's stream and still run it).
        if r.timeout > 0 {
            self.out_timeout = Some(self.out_timeout.map_or(r.timeout, |t| t.min(r.timeout)));
        }
        if r.round > 0 {
            self.seen_round = self.seen_round.max(r.round);
            self.recovery_heard = Some(now);
        }
        match self.state {
            // A FAULT notice from a node of our epoch, or a report of a round beyond it (older
            // rounds' reports are from nodes that will see our stream).
            State::Active
                if self.is_leader()
                    && ((r.round == 0 && r.epoch == self.epoch) || r.round > self.epoch) =>
            {
                // A node of our epoch (or an older one) is out. When every other node is, the
                // writes we acknowledge live on us alone: stop and recover with them.
                self.peer_out[from as usize] = Some(now);
                let t = self.cfg.timeout as u64;
                let me = self.cfg.node_id as usize;
                let all_out = self
                    .peer_out
                    .iter()
                    .enumerate()
                    .all(|(i, p)| i == me || p.is_some_and(|at| now < at + t));
                if all_out {
                    self.rstats.leader_stops += 1;
                    self.member_lins = Some((self.lins.unwrap_or(0), now));
                    self.fault_epoch = self.epoch;
                    self.drop_fifo();
                    let round = self.epoch.saturating_add(1).max(self.seen_round);
                    self.enter_recovery(now, round, out);
                }
            }
            // A follower whose leader has gone silent (no copy for a loop period and a window)
            // hears a recovery of its epoch or a later one: it takes part instead of running
            // the succession on its own (two ways to a leader at once could decide twice).
            // It joins at the round of its own epoch if that is later (the others move up to it:
            // its epoch's leader, the one it waits for, is that round's candidate).
            State::Active
                if !self.is_leader()
                    && r.round > 0
                    && now >= self.last_rx + self.cfg.loop_period as u64 + self.cfg.window() =>
            {
                self.member_lins = Some((self.lins.unwrap_or(0), now));
                self.fault_epoch = self.epoch;
                let round = r.round.max(self.epoch).max(1);
                self.enter_recovery(now, round, out);
                self.recover_packet_in_round(now, from, r, out);
            }
            // A rejoining node takes part only if it hears no leader either: one that hears a
            // live stream (on some tree) is kept out by its own trees, not by a lost leader.
            State::Joining
                if self.member_lins.is_some()
                    && r.round > 0
                    && now >= self.last_rx + self.cfg.timeout as u64 =>
            {
                let round = r.round.max(self.fault_epoch.saturating_add(1));
                self.enter_recovery(now, round, out);
                self.recover_packet_in_round(now, from, r, out);
            }
            State::Recovering => self.recover_packet_in_round(now, from, r, out),
            _ => self.count(Counter::Ignored),
        }
    }

    fn recover_packet_in_round(
        &mut self,
        now: u64,
        from: u8,
        r: wire::Recover,
        out: &mut Vec<Action>,
    ) {
        let Some(cur) = self.round.as_ref().map(|x| x.round) else {
            return;
        };
        if r.round == 0 || r.round < cur {
            return;
        }
        if r.round > cur {
            // Move up, unless our vote in this round still binds us (recovery_step moves us
            // to the highest round heard once it no longer does).
            if self.round.as_ref().is_some_and(|x| now < x.promised_until) {
                return self.recovery_step(now, out);
            }
            self.new_round(now, r.round);
        }
        if let Some(x) = self.round.as_mut() {
            x.reports[from as usize] = Some((r.lins, r.top.max(r.lins), r.vote));
        }
        self.recovery_step(now, out);
    }

    /// Every accepted receive resets the timeout counter (§5.2).
    fn reset_timer(&mut self, now: u64, out: &mut Vec<Action>) {
        if self.activate_on_rx && self.state == State::Joining {
            self.activate_on_rx = false;
            self.set_state(State::Active, out);
        }
        #[cfg(feature = "mutations")]
        if self.mutations.skip_timeout_reset && self.state != State::Armed {
            return;
        }
        self.last_rx = now;
    }

    /// A complete message (Alg. 3 lines 14–19).
    fn deliver(&mut self, d: &Decide<'_>, bytes: &[u8], out: &mut Vec<Action>) {
        let m = d.meta;
        if self.state == State::Armed {
            // START is seq 0, so it completes before anything an armed node lets through.
            if m.kind != DecideKind::Start {
                return self.count(Counter::Ignored);
            }
            if !(1..u64::MAX).contains(&m.instance) {
                return self.fault(
                    NetFault::InstanceMismatch {
                        expected: 1,
                        got: m.instance,
                    },
                    out,
                );
            }
            self.lins = Some(m.instance - 1);
            self.set_state(State::Active, out);
            return;
        }
        // Instances run 1..u64::MAX; the last one is never decided, so `lins + 1` cannot overflow.
        let expected = match self.lins {
            Some(l) => l + 1,
            None if (1..u64::MAX).contains(&m.instance) => m.instance, // joining: the first message sets our place
            None => 1,
        };
        if m.instance != expected || m.instance == u64::MAX {
            return self.fault(
                NetFault::InstanceMismatch {
                    expected,
                    got: m.instance,
                },
                out,
            );
        }
        if m.kind.is_value() {
            self.decide(m.instance, m.kind, bytes.to_vec(), out);
        } else if self.lins.is_none() {
            self.lins = Some(m.instance.saturating_sub(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(id: u8) -> Config {
        Config {
            node_id: id,
            node_count: 3,
            trees: 2,
            loop_period: 100,
            delta: 40,
            drift: 0,
            timeout: 300,
            ..Config::default()
        }
    }

    fn request(client_id: u32, seq: u64, payload: &[u8]) -> Vec<u8> {
        Packet::Request(Entry {
            client_id,
            seq,
            flags: 0,
            payload,
        })
        .to_vec(1, wire::SENDER_NONE)
        .unwrap()
    }

    fn sends(out: &[Action]) -> Vec<(u8, Vec<u8>)> {
        out.iter()
            .filter_map(|a| match a {
                Action::Send { tree, packet, .. } => Some((*tree, packet.clone())),
                _ => None,
            })
            .collect()
    }

    /// A node enabled in `mode` (Enable or EnableJoin).
    fn enabled(c: Config, mode: Control) -> Node {
        let mut n = Node::new(c).unwrap();
        n.control(0, mode, &mut Vec::new()).unwrap();
        n
    }

    /// A leader (node 0 of `c`) that has sent START at time 0, and START's actions.
    fn started(c: Config) -> (Node, Vec<Action>) {
        let mut l = enabled(c, Control::Enable);
        let mut out = Vec::new();
        l.control(0, Control::Start, &mut out).unwrap();
        (l, out)
    }

    /// A started leader and an armed follower that delivered START at time 10.
    fn pair(leader: Config) -> (Node, Node) {
        let (l, out) = started(leader);
        let mut f = enabled(cfg(1), Control::Enable);
        relay(&out, &mut f, 10, &mut Vec::new());
        assert_eq!(f.state(), State::Active);
        (l, f)
    }

    fn decide_of(s: &[(u8, Vec<u8>)]) -> (DecideKind, u64, u32) {
        let (_, Packet::Decide(d)) = wire::parse(&s[0].1, 1).unwrap() else {
            panic!("not a DECIDE")
        };
        (d.meta.kind, d.meta.instance, d.meta.msg_seq)
    }

    /// Kept copies are bounded: past `ENTRIES_MAX` messages the stream is taken for closed and
    /// nothing more is kept (what was kept stays).
    #[test]
    fn kept_copies_stop_at_their_bound() {
        let mut t = Tentative::new(0, 0, 10);
        for k in 0..Tentative::ENTRIES_MAX as u64 + 5 {
            t.take(11 + k, DecideKind::Batch, vec![k as u8]);
        }
        assert!(t.closed);
        assert_eq!(t.entries.len(), Tentative::ENTRIES_MAX);
        assert_eq!(
            t.entries.last().unwrap().0,
            10 + Tentative::ENTRIES_MAX as u64
        );
    }

    /// Requests that arrive together go together. Fed one by one, each input's timers send what
    /// was queued before it: the first request alone, then (whenever taking one outlasts
    /// `min_gap`) each of the others alone. Fed as one batch, they leave in one DECIDE.
    #[test]
    fn requests_taken_together_leave_in_one_batch() {
        let entries = |out: &[Action]| -> Vec<u16> {
            sends(out)
                .iter()
                .filter(|(t, _)| *t == 0)
                .filter_map(|(_, p)| match wire::parse(p, 1) {
                    Ok((_, Packet::Decide(d))) if d.meta.kind == DecideKind::Batch => Some(d.count),
                    _ => None,
                })
                .collect()
        };
        let reqs: Vec<Vec<u8>> = (1..=3).map(|s| request(7, s, b"x")).collect();
        // One by one, each a little more than `min_gap` after the last (a driver that sent in
        // between): three messages of one.
        let (mut l, mut out) = started(Config {
            min_gap: 30,
            ..cfg(0)
        });
        l.tick(100, &mut out);
        out.clear();
        for (k, r) in reqs.iter().enumerate() {
            l.receive_client(131 + 31 * k as u64, r, &mut out);
        }
        l.tick(250, &mut out);
        assert_eq!(entries(&out), vec![1, 1, 1]);
        // Together: one message of three, at the next tick.
        let (mut l, mut out) = started(Config {
            min_gap: 30,
            ..cfg(0)
        });
        l.tick(100, &mut out);
        out.clear();
        l.receive_clients(131, reqs.iter().map(Vec::as_slice), &mut out);
        assert!(
            sends(&out).is_empty(),
            "the timers ran before the batch, not after it"
        );
        assert_eq!(l.next_deadline(), Some(130));
        l.tick(131, &mut out);
        assert_eq!(entries(&out), vec![3]);
        assert_eq!(l.counter(Counter::RequestsAccepted), 3);
    }

    #[test]
    fn early_sends_go_after_min_gap_restart_the_loop_and_leave_heartbeats_on_it() {
        let (mut l, mut out) = started(Config {
            min_gap: 30,
            ..cfg(0)
        });
        out.clear();
        // Nothing queued: the loop as before.
        assert_eq!(l.next_deadline(), Some(100));
        l.tick(100, &mut out);
        assert_eq!(decide_of(&sends(&out)), (DecideKind::Heartbeat, 1, 1));
        out.clear();
        // A request 10 after the send waits for the gap (100 + 30), not for the loop (200).
        l.receive_client(110, &request(7, 1, b"x"), &mut out);
        assert!(sends(&out).is_empty(), "a request alone never sends");
        assert_eq!(l.next_deadline(), Some(130));
        l.tick(129, &mut out);
        assert!(sends(&out).is_empty());
        l.tick(130, &mut out);
        assert_eq!(decide_of(&sends(&out)), (DecideKind::Batch, 1, 2));
        assert_eq!(
            l.counter(Counter::LateTicks),
            0,
            "an early send is not late"
        );
        out.clear();
        // The early send restarted the loop: the next heartbeat is due at 230.
        assert_eq!(l.next_deadline(), Some(230));
        // A request long after the gap goes at the next tick (= at once for a driver).
        l.receive_client(200, &request(7, 2, b"y"), &mut out);
        assert_eq!(l.next_deadline(), Some(160));
        l.tick(200, &mut out);
        assert_eq!(decide_of(&sends(&out)), (DecideKind::Batch, 2, 3));
        out.clear();
        l.tick(300, &mut out);
        assert_eq!(decide_of(&sends(&out)), (DecideKind::Heartbeat, 3, 4));
        // Off (the reset value): the same request waits for the loop.
        let (mut l, _) = started(cfg(0));
        let mut out = Vec::new();
        l.tick(100, &mut out);
        l.receive_client(110, &request(7, 1, b"x"), &mut out);
        assert_eq!(l.next_deadline(), Some(200));
    }

    #[test]
    fn leader_loops_heartbeats_repeat_and_requests_do_not_reset_the_loop() {
        let (mut l, mut out) = started(cfg(0));
        assert_eq!(sends(&out).len(), 2);
        assert_eq!(l.next_deadline(), Some(100));
        out.clear();
        l.tick(99, &mut out);
        assert!(sends(&out).is_empty());
        l.tick(100, &mut out);
        let s = sends(&out);
        let (_, Packet::Decide(d)) = wire::parse(&s[0].1, 1).unwrap() else {
            panic!()
        };
        assert_eq!(
            (d.meta.kind, d.meta.instance, d.meta.msg_seq),
            (DecideKind::Heartbeat, 1, 1)
        );
        out.clear();
        l.receive_client(150, &request(7, 1, b"x"), &mut out);
        assert_eq!(
            l.next_deadline(),
            Some(200),
            "a request must not move the loop"
        );
        l.tick(200, &mut out);
        assert!(
            out.iter()
                .any(|a| matches!(a, Action::Deliver(d) if d.instance == 1))
        );
        assert!(
            out.iter()
                .any(|a| matches!(a, Action::Reply { client_id: 7, .. }))
        );
        assert_eq!(l.last_decided(), Some(1));
    }

    #[test]
    fn follower_delivers_times_out_and_successor_leads() {
        let (mut l, mut f) = pair(cfg(0));
        let mut out = Vec::new();
        l.receive_client(20, &request(1, 1, b"v"), &mut out);
        l.tick(100, &mut out);
        let mut fo = Vec::new();
        for (t, p) in sends(&out) {
            f.receive_tree(120, t, &p, &mut fo);
        }
        assert!(
            fo.iter()
                .any(|a| matches!(a, Action::Deliver(d) if d.instance == 1))
        );
        // The leader dies; the follower times out at 120 + 300 and leads (epoch 1 → node 1).
        assert_eq!(f.next_deadline(), Some(420));
        fo.clear();
        f.tick(420, &mut fo);
        assert!(f.is_leader());
        assert!(fo.iter().any(|a| matches!(
            a,
            Action::LeaderChanged {
                epoch: 1,
                leader: 1
            }
        )));
        let s = sends(&fo);
        let (_, Packet::Decide(d)) = wire::parse(&s[0].1, 1).unwrap() else {
            panic!()
        };
        assert_eq!((d.meta.epoch, d.meta.instance, d.meta.msg_seq), (1, 2, 0));
    }

    #[test]
    fn missing_copy_is_a_safe_exit() {
        let (mut l, mut f) = pair(cfg(0));
        let mut out = Vec::new();
        l.receive_client(20, &request(1, 1, b"v"), &mut out);
        l.tick(100, &mut out);
        let s = sends(&out);
        let mut fo = Vec::new();
        f.receive_tree(110, 0, &s[0].1, &mut fo);
        f.tick(150, &mut fo);
        assert!(fo.is_empty(), "the window is still open at first + window");
        f.tick(151, &mut fo);
        assert!(fo.iter().any(|a| matches!(a, Action::NetFault(_))));
        assert_eq!(f.state(), State::Faulted);
        fo.clear();
        f.receive_tree(151, 1, &s[1].1, &mut fo);
        assert!(!fo.iter().any(|a| matches!(a, Action::Deliver(_))));
    }

    #[test]
    fn illegal_register_writes_change_nothing() {
        let mut n = Node::new(cfg(1)).unwrap();
        let mut out = Vec::new();
        let before = n.config().timeout;
        let e = n
            .write_register(0, addr::TIMEOUT, 10, &mut out)
            .unwrap_err();
        assert!(matches!(e, RegError::Config(c) if c.field == "timeout"));
        assert_eq!(n.config().timeout, before);
        assert!(matches!(
            n.write_register(0, addr::NODE_ID, 9, &mut out),
            Err(RegError::Config(_))
        ));
        n.write_register(0, addr::CTRL, ctrl::ENABLE, &mut out)
            .unwrap();
        assert_eq!(
            n.write_register(0, addr::TIMEOUT, 1000, &mut out),
            Err(RegError::WhileEnabled("timeout"))
        );
        assert!(matches!(
            n.write_register(0, addr::CTRL, ctrl::ENABLE | ctrl::START, &mut out),
            Err(RegError::Control(_))
        ));
        assert_eq!(n.state(), State::Armed);
        assert_eq!(n.read_register(addr::STATUS).unwrap(), status::ARMED);
        assert_eq!(n.read_register(addr::MAGIC).unwrap(), regs::MAGIC_VALUE);
    }

    /// Feed every Send in `out` to `to` at `at`.
    fn relay(out: &[Action], to: &mut Node, at: u64, fo: &mut Vec<Action>) {
        for (t, p) in sends(out) {
            to.receive_tree(at, t, &p, fo);
        }
    }

    #[test]
    fn joining_node_locks_on_logs_and_activates_in_step() {
        // n = 3: node 2 joins a running cluster of 0 and 1.
        let (mut l, mut out) = started(cfg(0));
        let mut j = enabled(cfg(2), Control::EnableJoin);
        let mut jo = Vec::new();
        // Messages seq 0..: the joiner locks on after seeing every tree, then delivers.
        for k in 1..=6u64 {
            out.clear();
            if k == 4 {
                l.receive_client(k * 100 - 50, &request(9, 1, b"w"), &mut out);
            }
            l.tick(k * 100, &mut out);
            relay(&out, &mut j, k * 100 + 10, &mut jo);
        }
        assert!(
            jo.iter()
                .any(|a| matches!(a, Action::Deliver(d) if d.instance == 1))
        );
        assert_eq!(j.first_logged(), Some(1));
        assert_eq!(j.last_decided(), Some(1));
        // A joining node neither times out nor leads, however long the silence.
        jo.clear();
        j.tick(10_000, &mut jo);
        assert!(jo.is_empty() && j.epoch() == 0 && j.state() == State::Joining);
        // ACTIVATE is refused until the members' timeout (from the state transfer) is written;
        // that write is free while joining, but still checked against the other registers.
        assert!(j.control(10_000, Control::Activate, &mut jo).is_err());
        assert!(matches!(
            j.write_register(10_000, addr::TIMEOUT, 10, &mut jo),
            Err(RegError::Config(e)) if e.field == "timeout"
        ));
        assert!(matches!(
            j.write_register(10_000, addr::CTRL, ctrl::ENABLE | ctrl::ACTIVATE, &mut jo),
            Err(RegError::Control(_))
        ));
        assert_eq!(
            j.state(),
            State::Joining,
            "a refused ACTIVATE changes nothing"
        );
        j.write_register(10_000, addr::TIMEOUT, 400, &mut jo)
            .unwrap();
        assert_eq!(j.config().timeout, 400);
        // After a silence, ACTIVATE waits for the next copy (the cluster may have moved on).
        j.control(10_000, Control::Activate, &mut jo).unwrap();
        assert_eq!(j.state(), State::Joining);
        out.clear();
        l.tick(10_000, &mut out);
        relay(&out, &mut j, 10_010, &mut jo);
        assert_eq!(j.state(), State::Active);
        assert_eq!(j.next_deadline(), Some(10_410));
    }

    #[test]
    fn an_activated_joiner_times_out_in_step_and_leads_its_epoch() {
        // Node 1 joins, activates, then the leader dies.
        let (mut l, mut out) = started(cfg(0));
        let mut j = enabled(cfg(1), Control::EnableJoin);
        let mut jo = Vec::new();
        for k in 1..=3u64 {
            out.clear();
            l.tick(k * 100, &mut out);
            relay(&out, &mut j, k * 100 + 10, &mut jo);
        }
        j.write_register(320, addr::TIMEOUT, 300, &mut jo).unwrap();
        j.control(320, Control::Activate, &mut jo).unwrap();
        assert_eq!(j.state(), State::Active);
        // The leader dies; node 1 times out into epoch 1, which is its own: it leads.
        jo.clear();
        j.tick(310 + 300, &mut jo);
        assert!(j.is_leader(), "entered epoch 1 by its own timeout");
    }

    /// A DECIDE copy of `meta` with one entry, as `sender` would send it.
    fn forged(sender: u8, meta: DecideMeta) -> Vec<u8> {
        let req = Entry {
            client_id: 66,
            seq: 1,
            flags: 0,
            payload: b"forged",
        };
        let mut raw = vec![0u8; req.wire_len()];
        wire::emit_entries([req].iter(), &mut raw).unwrap();
        Packet::Decide(Decide {
            meta,
            count: 1,
            entries_raw: &raw,
        })
        .to_vec(1, sender)
        .unwrap()
    }

    /// Copies the driver's kernel dropped: an active follower makes the safe exit at once (it
    /// must not take the silence after them for a silent leader); a leader is unaffected.
    #[test]
    fn a_follower_whose_input_overflowed_faults_instead_of_timing_out() {
        let (mut l, mut f) = pair(cfg(0));
        let mut out = Vec::new();
        l.receive_overflow(20, 0, &mut out);
        assert!(
            l.is_leader() && l.state() == State::Active,
            "the leader is unaffected"
        );
        // Long past the follower's timeout: the overflow comes first and it faults.
        f.receive_overflow(100_000, 1, &mut out);
        assert_eq!(f.state(), State::Faulted);
        assert!(
            out.iter()
                .any(|a| matches!(a, Action::NetFault(NetFault::InputOverflow { tree: 1 }))),
            "{out:?}"
        );
        out.clear();
        f.tick(200_000, &mut out);
        assert_eq!(
            f.counter(Counter::Timeouts),
            0,
            "no timeout into leadership"
        );
        assert!(!f.is_leader());
    }

    #[test]
    fn only_members_are_heard_and_a_decide_only_from_its_epochs_leader() {
        let (mut l, mut f) = pair(cfg(0));
        let mut out = Vec::new();
        let before = (f.epoch(), f.leader(), f.last_decided(), f.state());
        let meta = |tree, epoch| DecideMeta {
            instance: 1,
            epoch,
            msg_seq: 0,
            tree,
            kind: DecideKind::Batch,
        };
        for tree in 0..2 {
            // Member 2 claims epoch 3's batch, but epoch 3 is led by node 0 (3 mod 3).
            f.receive_tree_from(
                20,
                tree,
                Source::Member(2),
                &forged(2, meta(tree, 3)),
                &mut out,
            );
            // The right sender id, from an address that is no member's.
            f.receive_tree_from(
                20,
                tree,
                Source::NotMember,
                &forged(0, meta(tree, 3)),
                &mut out,
            );
            // From member 2's address, claiming to be node 0.
            f.receive_tree_from(
                20,
                tree,
                Source::Member(2),
                &forged(0, meta(tree, 3)),
                &mut out,
            );
        }
        assert_eq!(f.counter(Counter::Unauthorized), 6);
        assert_eq!(
            (f.epoch(), f.leader(), f.last_decided(), f.state()),
            before,
            "nothing else changed"
        );
        assert!(out.is_empty(), "no action: {out:?}");
        // The leader's own copies from its address are heard.
        let delivered = f.counter(Counter::Delivered);
        l.receive_client(50, &request(7, 1, b"real"), &mut out);
        l.tick(100, &mut out);
        let copies = sends(&out);
        out.clear();
        for (tree, p) in &copies {
            f.receive_tree_from(120, *tree, Source::Member(0), p, &mut out);
        }
        assert_eq!(f.counter(Counter::Unauthorized), 6);
        assert_eq!(f.counter(Counter::Delivered), delivered + 1);
        assert_eq!(f.last_decided(), Some(1));
    }

    #[test]
    fn rate_limit_oversize_not_leader_config_and_stale_epoch_are_counted() {
        let (mut l, mut f) = pair(Config {
            fifo_depth: 2,
            ..cfg(0)
        });
        let mut out = Vec::new();
        // FIFO of 2: the third request is dropped, a too-large one too.
        for s in 1..=3 {
            l.receive_client(10, &request(1, s, b"x"), &mut out);
        }
        l.receive_client(10, &request(2, 1, &[0u8; 1500]), &mut out);
        assert_eq!(l.counter(Counter::RequestsAccepted), 2);
        assert_eq!(l.counter(Counter::RequestsDropped), 1);
        assert_eq!(l.counter(Counter::RequestsOversize), 1);
        // A follower answers NOT_LEADER naming the leader.
        let mut fo = Vec::new();
        f.receive_client(10, &request(3, 1, b"y"), &mut fo);
        let Some(Action::Reply { packet, .. }) = fo.last() else {
            panic!()
        };
        let (_, Packet::ReplyNotLeader(r)) = wire::parse(packet, 1).unwrap() else {
            panic!()
        };
        assert_eq!((r.leader, r.client_id, r.seq), (0, 3, 1));
        // The batch of two goes out at the first loop tick.
        out.clear();
        l.tick(100, &mut out);
        relay(&out, &mut f, 105, &mut fo);
        // CONFIG: a larger timeout is applied on both, a smaller one refused on both.
        for (seq, v) in [(1u64, 500u32), (2, 450)] {
            let item = wire::ConfigItem {
                addr: addr::TIMEOUT,
                value: v,
            }
            .to_bytes();
            let p = Packet::Request(Entry {
                client_id: 50,
                seq,
                flags: wire::ENTRY_FLAG_CONFIG,
                payload: &item,
            })
            .to_vec(1, wire::SENDER_NONE)
            .unwrap();
            l.receive_client(120, &p, &mut out);
        }
        for k in 2..=4u64 {
            out.clear();
            l.tick(k * 100, &mut out);
            relay(&out, &mut f, k * 100 + 5, &mut fo);
        }
        for n in [&l, &f] {
            assert_eq!(n.config().timeout, 500);
            assert_eq!(
                (
                    n.counter(Counter::ConfigApplied),
                    n.counter(Counter::ConfigRejected)
                ),
                (1, 1)
            );
            assert_eq!(n.last_decided(), Some(3));
        }
        // A copy from an older epoch is stale: ignored and reported.
        let old = Packet::Decide(Decide {
            meta: DecideMeta {
                instance: 4,
                epoch: 0,
                msg_seq: 99,
                tree: 0,
                kind: DecideKind::Heartbeat,
            },
            count: 0,
            entries_raw: &[],
        })
        .to_vec(1, 0) // from epoch 0's leader
        .unwrap();
        let mut g = f.clone();
        let mut go = Vec::new();
        g.tick(905, &mut go); // 405 + timeout 500: into epoch 1 (leader 1)
        assert_eq!(g.epoch(), 1);
        go.clear();
        g.receive_tree(906, 0, &old, &mut go);
        assert_eq!(g.counter(Counter::StaleEpoch), 1);
        assert!(
            go.iter()
                .any(|a| matches!(a, Action::Violation(Violation::StaleEpoch { epoch: 0 })))
        );
        assert_ne!(g.status_bits() & status::SYNC_VIOLATION, 0);
    }
}
