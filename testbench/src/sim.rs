//! The deterministic cluster simulator.
//!
//! All nodes run proto's [`Node`] in one process. An in-memory network joins
//! them with |G| trees (per-link delay within the bound Δ_I, FIFO per link
//! and tree, as a multicast tree is); clients talk to nodes over their own
//! links. Everything random — timing registers, link delays, client load,
//! faults — comes from one seed, so a seed replays the same run exactly.
//! Nodes are ticked exactly at their [`Node::next_deadline`], so the run is
//! the same as ticking every time unit, only faster.
//!
//! The simulator plays the host application too: it records every decision,
//! and for a joining node it runs the state transfer (JOIN_REQUEST to a
//! member, STATE_CHUNK back, reassembly with CRC) and then activates it.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::fmt::Write as _;
use std::sync::Arc;

use proto::join::{self, Joiner};
use proto::log::DecisionLog;
use proto::node::{Action, Control, Node, Source, State};
use proto::regs::{self, Config, Counter};
use proto::wire::{self, DecideKind, Entry, Packet};

use crate::check;
use crate::faults::{Fault, FaultPlan, Faults};
use crate::rng::Rng;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// n.
    pub nodes: u8,
    /// |G|.
    pub trees: u8,
    /// Fault classes the seed may draw from.
    pub faults: Faults,
    /// Record the event trace (for replays).
    pub trace: bool,
    /// Called on every node after it is created (tests use it to switch on deliberate bugs).
    pub node_hook: Option<fn(&mut Node)>,
    /// Whether the seeds' configurations send early (`min_gap` > 0).
    pub early: EarlySends,
    /// Whether the seeds' nodes and clients tag every packet (`auth_mode` 2, key 1; the
    /// same off / on / mixed choice, drawn from its own stream).
    pub auth: EarlySends,
}

/// The key ring of every simulated node (key 1).
pub fn sim_keys() -> proto::auth::Keyring {
    let mut k = proto::auth::Keyring::new();
    k.insert(1, *b"nc-sim cluster k")
        .expect("one key fits an empty ring");
    k
}

/// Whether a seed's packets are tagged: drawn from its own stream, so that the other draws of
/// a seed do not change.
fn choose_auth(seed: u64, auth: EarlySends) -> bool {
    let mut rng = Rng::new(seed ^ 0xA077_5167_0000_0001);
    match auth {
        EarlySends::Off => false,
        EarlySends::On => true,
        EarlySends::Mixed => rng.chance(0.5),
    }
}

/// Early sends (`min_gap`) in a campaign.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EarlySends {
    /// `min_gap` = 0: every send on the loop (the seeds of campaigns before early sends
    /// replay unchanged).
    Off,
    /// Every seed draws a `min_gap` in 1..=loop_period.
    On,
    /// Half the seeds draw one (decided by the seed).
    #[default]
    Mixed,
}

impl EarlySends {
    /// `off`, `on` or `mixed`.
    pub fn parse(s: &str) -> Result<EarlySends, String> {
        match s {
            "off" => Ok(EarlySends::Off),
            "on" => Ok(EarlySends::On),
            "mixed" => Ok(EarlySends::Mixed),
            _ => Err(format!("{s:?}: expected off, on or mixed")),
        }
    }

    /// The name `parse` takes.
    pub fn name(self) -> &'static str {
        match self {
            EarlySends::Off => "off",
            EarlySends::On => "on",
            EarlySends::Mixed => "mixed",
        }
    }
}

/// The `min_gap` of a seed: drawn from its own stream, so that the other draws of a seed (and
/// the seeds of campaigns without early sends) do not change.
fn choose_min_gap(seed: u64, early: EarlySends, c: &Config) -> u32 {
    let mut rng = Rng::new(seed ^ 0xEA21_5E4D_0000_0001);
    let on = match early {
        EarlySends::Off => false,
        EarlySends::On => true,
        EarlySends::Mixed => rng.chance(0.5),
    };
    if !on {
        return 0;
    }
    let p = c.loop_period as u64;
    let floor = c
        .window()
        .div_ceil(proto::regs::MAX_IN_FLIGHT as u64 - 1)
        .max(1);
    let g = match rng.range(0, 3) {
        0 => floor,
        1 => p / 8,
        2 => p / 2,
        _ => p,
    };
    g.clamp(floor, p) as u32
}

/// The timing and load a seed chose.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Node configuration shared by all (node_id set per node).
    pub cfg: Config,
    /// Smallest one-way tree latency.
    pub min_delay: u64,
    /// Clients.
    pub clients: usize,
    /// Requests per client.
    pub requests: u32,
    /// Mean time between a client's requests.
    pub interval: u64,
    /// A client resends after this long without a reply.
    pub client_timeout: u64,
}

/// One decision as a node's host saw it.
#[derive(Clone, Debug)]
pub struct DecisionRec {
    /// When.
    pub time: u64,
    /// Which node.
    pub node: u8,
    /// Instance.
    pub instance: u64,
    /// Batch or config.
    pub kind: DecideKind,
    /// Number of entries.
    pub count: u16,
    /// The decided entries (wire bytes), shared by every node's record of the same message.
    pub entries: Arc<[u8]>,
    /// Decided by a recovery from a copy kept after a safe exit (not within Δ by RSBCAST).
    pub recovered: bool,
}

/// A decided value as a log holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logged {
    /// Batch or config.
    pub kind: DecideKind,
    /// Number of entries.
    pub count: u16,
    /// The entries (wire bytes).
    pub entries: Vec<u8>,
}

/// A log: instance → decided value.
pub type Log = BTreeMap<u64, Logged>;

/// How the copies of one message fared, per receiver.
struct CopyLoss {
    /// Trees the message went out on.
    sent_trees: u8,
    /// Copies lost per receiver.
    lost: Vec<u8>,
    /// Receiver was taking part when the message was sent.
    live: Vec<bool>,
}

/// One message a leader sent (all its copies).
#[derive(Clone, Debug)]
pub struct SendRec {
    /// When.
    pub time: u64,
    /// Which node.
    pub node: u8,
    /// Its epoch.
    pub epoch: u32,
}

/// Everything a run recorded, for the checker.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// Decisions in the order they happened.
    pub decisions: Vec<DecisionRec>,
    /// Leader sends.
    pub sends: Vec<SendRec>,
    /// (node, time, client, seq): requests a leader queued.
    pub accepted: Vec<(u8, u64, u32, u64)>,
    /// (client, seq) → (flags, payload) of every request a client sent.
    pub requests: HashMap<(u32, u64), (u8, Vec<u8>)>,
    /// (time, client, seq, instance, index) of every OK a client got.
    pub oks: Vec<(u64, u32, u64, u64, u16)>,
    /// Requests each client still had unanswered at the end.
    pub unanswered: usize,
    /// Per node: crash time.
    pub crashed_at: Vec<Option<u64>>,
    /// Per node: NET-FAULT time.
    pub faulted_at: Vec<Option<u64>>,
    /// Per node: when it was enabled (None: never).
    pub enabled_at: Vec<Option<u64>>,
    /// Per node: log taken over from a snapshot.
    pub snapshot_log: Vec<Log>,
    /// Per node at the end: state, last decided.
    pub final_state: Vec<(State, Option<u64>)>,
    /// Per node at the end: its timeout register.
    pub final_timeout: Vec<u32>,
    /// Per node: the spans during which it was an active member (START delivered or a
    /// join completed, until it crashed or made a safe exit); `None` = still is at the end.
    pub member: Vec<Vec<(u64, Option<u64>)>>,
    /// Per node: when it was restarted (after a crash or a safe exit) to join again.
    pub restarts: Vec<Vec<u64>>,
    /// Per node: `decisions.len()` at each restart or rejoin: the node's decisions from that
    /// index on start a new sequence (for the integrity check).
    pub restart_marks: Vec<Vec<usize>>,
    /// Per node: NET-FAULTs over the whole run (every incarnation).
    pub net_faults: Vec<u32>,
    /// Per node: synchrony violations it reported.
    pub violations_seen: Vec<u64>,
    /// Per node: deliveries after its NET-FAULT (must stay 0).
    pub delivered_after_fault: Vec<u64>,
    /// The largest timeout any node ended with.
    pub max_timeout: u64,
    /// A packet was delayed beyond Δ_I (injected synchrony violation).
    pub late_injected: bool,
    /// Some live receiver lost every copy of a message that went out on all trees.
    pub redundancy_exceeded: bool,
    /// Network faults (drops, link downs, late packets, mid-send crashes) were injected.
    pub network_faults: bool,
    /// Events processed.
    pub events: u64,
    /// The run was cut off by the time cap instead of ending quietly.
    pub hit_cap: bool,
    /// Simulated end time.
    pub end: u64,
    /// Rejoins after a safe exit (the recovery extension).
    pub rejoins: u64,
    /// Gap fills asked for during recoveries (`Action::FillGap`).
    pub gap_fills: u64,
    /// Recoveries: a node elected by a recovery round began to lead.
    pub recoveries: u64,
    /// Per node at the end: the longest outage it had (safe exit → back in service).
    pub max_outage: Vec<u64>,
    /// The run ended because no node had been active for a long time (a minority left).
    pub stuck: bool,
    /// At the end: every link is up and no drop window is open (network faults were transient).
    pub network_healed: bool,
    /// At the end: alive nodes that are, or were and can come back as, members (they hold a log).
    pub capable_at_end: usize,
    /// A process was paused (frozen) for a while (injected).
    pub paused: bool,
}

/// The result of one seed.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The seed.
    pub seed: u64,
    /// Timing and load the seed chose.
    pub timing: Timing,
    /// The faults the seed drew.
    pub plan: FaultPlan,
    /// What happened.
    pub history: History,
    /// The checker's verdict.
    pub verdict: check::Verdict,
    /// The event trace (when asked for).
    pub trace: Vec<String>,
}

#[derive(Clone, Debug)]
enum Target {
    Node(u8),
    Leader,
}

#[derive(Clone, Debug)]
enum Ev {
    Tick(u8),
    Tree {
        to: u8,
        tree: u8,
        bytes: Arc<Vec<u8>>,
        /// (src, epoch, msg_seq) of the message, for loss bookkeeping.
        msg: (u8, u32, u32),
    },
    ToNode {
        to: u8,
        bytes: Vec<u8>,
    },
    ToClient {
        client: usize,
        bytes: Vec<u8>,
    },
    Peer {
        to: u8,
        bytes: Vec<u8>,
    },
    ClientWake(usize),
    Start,
    Crash(Target),
    ArmMidsend {
        target: Target,
        after: u8,
    },
    Link {
        node: u8,
        tree: u8,
        up: bool,
    },
    JoinEnable(u8),
    Restart(u8),
    Pause {
        target: Target,
        dur: u64,
    },
    Resume(u8),
    JoinRetry(u8, u32),
}

struct Queued {
    time: u64,
    order: u64,
    ev: Ev,
}
impl PartialEq for Queued {
    fn eq(&self, o: &Self) -> bool {
        (self.time, self.order) == (o.time, o.order)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Queued {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.time, self.order).cmp(&(o.time, o.order))
    }
}

struct SimNode {
    node: Node,
    alive: bool,
    tick_at: Option<u64>,
    midsend: Option<u8>,
    /// Frozen (a paused process) until then: its inputs wait, with their arrival times.
    paused_until: Option<u64>,
    deferred: Vec<(u64, Ev)>,
    link_up: Vec<bool>,
    /// The host application's log (what it serves to joiners).
    log: DecisionLog,
    // Joining host side (proto's joiner; the simulator only moves its packets).
    join_requested: bool,
    joiner: Joiner,
    join_attempt: u32,
}

struct Outstanding {
    flags: u8,
    payload: Vec<u8>,
    resend_at: u64,
    hinted: bool,
}

struct Client {
    id: u32,
    next_seq: u64,
    left: u32,
    next_new: u64,
    guess: u8,
    out: BTreeMap<u64, Outstanding>,
    wake_at: Option<u64>,
    config_at: Option<u32>,
}

struct Sim {
    cfg: SimConfig,
    t: Timing,
    rng: Rng,
    now: u64,
    order: u64,
    queue: BinaryHeap<Reverse<Queued>>,
    nodes: Vec<SimNode>,
    clients: Vec<Client>,
    /// Last delivery time per (src, dst, tree) link: trees are FIFO.
    link_last: HashMap<(u8, u8, u8), u64>,
    /// Copies of (src, epoch, seq) lost per receiver; sent trees.
    lost: HashMap<(u8, u32, u32), CopyLoss>,
    drop_window: Option<(u64, u64, f64, Option<u8>)>,
    late_pending: Option<(u64, u8, u64)>,
    h: History,
    trace: Vec<String>,
    out: Vec<Action>,
    /// Replaying a paused node's inputs: the model runs at their arrival times, but what it
    /// sends leaves now (the driver checks the lease again, as the engine does after its
    /// send system call).
    replaying: bool,
    replay_time: Option<u64>,
    recovery_crash_armed: bool,
    second_fault_armed: bool,
}

/// Run one seed.
pub fn run(seed: u64, cfg: &SimConfig) -> RunReport {
    let mut rng = Rng::new(seed);
    let mut t = choose_timing(&mut rng, cfg);
    t.cfg.min_gap = choose_min_gap(seed, cfg.early, &t.cfg);
    if choose_auth(seed, cfg.auth) {
        t.cfg.auth_key = 1;
        t.cfg.auth_mode = 2;
    }
    debug_assert!(t.cfg.validate().is_ok(), "{:?}", t.cfg);
    let plan = FaultPlan::draw(&mut rng.fork(), cfg.nodes, cfg.trees, &t, cfg.faults);
    let mut sim = Sim::new(cfg.clone(), t, rng.fork());
    sim.schedule_plan(&plan);
    sim.run();
    let history = sim.finish();
    let verdict = check::check(&history, &t, cfg.nodes);
    RunReport {
        seed,
        timing: t,
        plan,
        history,
        verdict,
        trace: sim.trace,
    }
}

/// Timing registers and load for a seed: always a legal configuration.
pub fn choose_timing(rng: &mut Rng, cfg: &SimConfig) -> Timing {
    let delta = rng.pick(&[400u64, 1000, 2500]);
    let drift = rng.range(0, delta / 10);
    let window = delta + drift;
    // Loop periods below and above the window (several messages in flight, or one).
    let loop_period = match rng.range(0, 3) {
        0 => window / 4,
        1 => window / 2 + 1,
        2 => window + rng.range(1, window),
        _ => 3 * window,
    };
    let mut c = Config {
        node_id: 0,
        node_count: cfg.nodes,
        trees: cfg.trees,
        loop_period: loop_period as u32,
        delta: delta as u32,
        drift: drift as u32,
        timeout: 0,
        fifo_depth: rng.range(4, 64) as u16,
        batch_max: rng.range(1, 8) as u8,
        cluster_id: rng.next_u64() as u32,
        ..Config::default()
    };
    c.timeout = (c.min_timeout() + rng.range(0, 2 * delta)) as u32;
    debug_assert!(c.validate().is_ok(), "{c:?}");
    Timing {
        cfg: c,
        min_delay: delta / 10,
        clients: rng.range(1, 4) as usize,
        requests: rng.range(10, 40) as u32,
        interval: loop_period * rng.range(1, 4),
        // Longer than a full FIFO takes to drain, so a client does not resend what is merely queued.
        client_timeout: 3 * c.timeout as u64
            + 4 * delta
            + (c.fifo_depth as u64).div_ceil(c.batch_max as u64) * 2 * loop_period,
    }
}

impl Sim {
    fn new(cfg: SimConfig, t: Timing, mut rng: Rng) -> Sim {
        let n = cfg.nodes as usize;
        let nodes = (0..cfg.nodes)
            .map(|i| {
                let mut node = Node::new(Config {
                    node_id: i,
                    ..t.cfg
                })
                .expect("choose_timing makes legal configs");
                node.set_recovery(true);
                node.set_keys(sim_keys());
                if let Some(hook) = cfg.node_hook {
                    hook(&mut node);
                }
                SimNode {
                    node,
                    alive: true,
                    tick_at: None,
                    midsend: None,
                    paused_until: None,
                    deferred: Vec::new(),
                    link_up: vec![true; cfg.trees as usize],
                    log: DecisionLog::default(),
                    join_requested: false,
                    joiner: Joiner::default().with_max_chunk(256),
                    join_attempt: 0,
                }
            })
            .collect();
        let clients = (0..t.clients)
            .map(|i| Client {
                id: 100 + i as u32,
                next_seq: 1,
                left: t.requests,
                next_new: 0,
                guess: rng.range(0, n as u64 - 1) as u8,
                out: BTreeMap::new(),
                wake_at: None,
                config_at: None,
            })
            .collect();
        let h = History {
            crashed_at: vec![None; n],
            faulted_at: vec![None; n],
            enabled_at: vec![None; n],
            snapshot_log: vec![BTreeMap::new(); n],
            violations_seen: vec![0; n],
            member: vec![Vec::new(); n],
            restarts: vec![Vec::new(); n],
            restart_marks: vec![Vec::new(); n],
            net_faults: vec![0; n],
            delivered_after_fault: vec![0; n],
            ..History::default()
        };
        Sim {
            cfg,
            t,
            rng,
            now: 0,
            order: 0,
            queue: BinaryHeap::new(),
            nodes,
            clients,
            link_last: HashMap::new(),
            lost: HashMap::new(),
            drop_window: None,
            late_pending: None,
            h,
            trace: Vec::new(),
            out: Vec::new(),
            replaying: false,
            replay_time: None,
            recovery_crash_armed: false,
            second_fault_armed: false,
        }
    }

    fn at(&mut self, time: u64, ev: Ev) {
        self.order += 1;
        self.queue.push(Reverse(Queued {
            time,
            order: self.order,
            ev,
        }));
    }

    fn log(&mut self, f: impl FnOnce() -> String) {
        if self.cfg.trace {
            let line = format!("{:>10} {}", self.now, f());
            self.trace.push(line);
        }
    }

    fn schedule_plan(&mut self, plan: &FaultPlan) {
        let joiner = plan.faults.iter().find_map(|f| match f {
            Fault::Join { node, at } => Some((*node, *at)),
            _ => None,
        });
        for i in 0..self.cfg.nodes {
            if joiner.map(|(j, _)| j) == Some(i) {
                continue;
            }
            let mut out = std::mem::take(&mut self.out);
            self.nodes[i as usize]
                .node
                .control(0, Control::Enable, &mut out)
                .expect("enable");
            self.out = out;
            self.out.clear();
            self.h.enabled_at[i as usize] = Some(0);
        }
        let start = self.t.cfg.delta as u64;
        self.at(start, Ev::Start);
        for c in 0..self.clients.len() {
            let first = start + self.t.cfg.timeout as u64 + self.rng.range(0, self.t.interval);
            self.clients[c].next_new = first;
            self.wake_client(c, first);
        }
        for f in &plan.faults {
            match *f {
                Fault::Crash { node, at } => self.at(at, Ev::Crash(Target::Node(node))),
                Fault::Restart { node, at } => self.at(at, Ev::Restart(node)),
                Fault::CrashLeader { at } => self.at(at, Ev::Crash(Target::Leader)),
                Fault::MidSend { at, after } => {
                    // Stopping between copies leaves a message on some trees only; after all
                    // copies it is a plain crash.
                    self.h.network_faults |= after < self.cfg.trees;
                    self.at(
                        at,
                        Ev::ArmMidsend {
                            target: Target::Leader,
                            after,
                        },
                    )
                }
                Fault::LinkDown {
                    node,
                    tree,
                    at,
                    until,
                } => {
                    self.h.network_faults = true;
                    self.at(
                        at,
                        Ev::Link {
                            node,
                            tree,
                            up: false,
                        },
                    );
                    if let Some(u) = until {
                        self.at(
                            u,
                            Ev::Link {
                                node,
                                tree,
                                up: true,
                            },
                        );
                    }
                }
                Fault::Partition { nodes, at } => {
                    self.h.network_faults = true;
                    for node in nodes.iter() {
                        self.at(
                            at,
                            Ev::Link {
                                node,
                                tree: 0,
                                up: false,
                            },
                        );
                    }
                    self.at(
                        at,
                        Ev::ArmMidsend {
                            target: Target::Leader,
                            after: 1,
                        },
                    );
                }
                Fault::Drop {
                    from,
                    until,
                    p,
                    tree,
                } => {
                    self.h.network_faults = true;
                    self.drop_window = Some((from, until, p, tree));
                }
                Fault::Late { at, to, extra } => {
                    self.late_pending = Some((at, to, extra));
                }
                Fault::Join { node, at } => self.at(at, Ev::JoinEnable(node)),
                Fault::Config { client, nth } => {
                    if let Some(c) = self.clients.get_mut(client as usize) {
                        c.config_at = Some(nth);
                    }
                }
                Fault::Pause { node, at, dur } => {
                    let target = node.map_or(Target::Leader, Target::Node);
                    self.at(at, Ev::Pause { target, dur });
                }
                Fault::RecoveryCrash => self.recovery_crash_armed = true,
                Fault::SecondFault => self.second_fault_armed = true,
            }
        }
    }

    fn run(&mut self) {
        let p = self.t.cfg.loop_period as u64;
        let t_out = self.t.cfg.timeout as u64;
        let cap = 4000 * p + 60 * t_out + 200 * self.t.client_timeout;
        let mut quiet_since: Option<u64> = None;
        // With recovery, a safe exit is not the end; but a minority that cannot recover stays
        // out for good: stop when no node has been active for longer than recoveries take.
        let stuck_after = 8 * t_out + 4 * (self.cfg.nodes as u64 + 2) * self.round_len();
        let mut last_active = 0u64;
        while let Some(Reverse(q)) = self.queue.pop() {
            if q.time > cap {
                break;
            }
            self.now = q.time;
            self.h.events += 1;
            self.step(q.ev);
            if self
                .nodes
                .iter()
                .any(|n| n.alive && matches!(n.node.state(), State::Active | State::Armed))
            {
                last_active = self.now;
            } else if self.now > last_active + stuck_after {
                self.h.stuck = true;
                self.log(|| "end: no node active for a long time (stuck)".into());
                break;
            }
            let clients_done = self.clients.iter().all(|c| c.left == 0 && c.out.is_empty());
            // A node coming back after a safe exit holds the run only once it has locked on
            // (a tree that stays down may keep it out for good).
            let joining = self.nodes.iter().any(|n| {
                n.alive
                    && n.node.state() == State::Joining
                    && (!n.node.is_rejoining() || n.node.status_bits() & regs::status::SYNCED != 0)
            });
            // A recovery in progress holds the run too, for as long as recoveries take.
            let recovering = self
                .nodes
                .iter()
                .any(|n| n.alive && n.node.state() == State::Recovering);
            if clients_done && !joining {
                let since = *quiet_since.get_or_insert(self.now);
                // Let heartbeats run a while so every follower catches up and timeouts are exercised.
                let settle = 3 * self.h_max_timeout() + 4 * self.t.cfg.delta as u64 + 4 * p;
                if self.now > since + settle && (!recovering || self.now > since + stuck_after) {
                    break;
                }
            } else {
                quiet_since = None;
            }
        }
        self.h.end = self.now;
        self.h.hit_cap = self.queue.peek().is_some_and(|Reverse(q)| q.time > cap);
    }

    /// A recovery round's length (proto's node.rs: settle + timeout + 2·window).
    fn round_len(&self) -> u64 {
        let w = self.t.cfg.window();
        2 * w + self.t.cfg.loop_period as u64 + self.h_max_timeout() + 2 * w
    }

    fn h_max_timeout(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| n.node.config().timeout as u64)
            .max()
            .unwrap_or(0)
    }

    fn step(&mut self, ev: Ev) {
        // A paused process does nothing; what reaches it waits in its socket. Up to and
        // including the instant it resumes: an event of that instant ordered before its Resume
        // would otherwise run ahead of the input that queued up (a timer before the datagrams
        // the engine reads first, and a follower timing out on a leader whose copies wait).
        let to = match &ev {
            Ev::Tick(i) => Some(*i),
            Ev::Tree { to, .. } | Ev::ToNode { to, .. } | Ev::Peer { to, .. } => Some(*to),
            _ => None,
        };
        if let Some(i) = to
            && self.nodes[i as usize]
                .paused_until
                .is_some_and(|u| self.now <= u)
        {
            let sn = &mut self.nodes[i as usize];
            if let Ev::Tick(_) = ev {
                if sn.tick_at == Some(self.now) {
                    sn.tick_at = None;
                }
            } else {
                sn.deferred.push((self.now, ev));
            }
            return;
        }
        match ev {
            Ev::Tick(i) => {
                let n = &mut self.nodes[i as usize];
                if n.tick_at == Some(self.now) {
                    n.tick_at = None;
                }
                if n.alive {
                    let now = self.now;
                    self.with_node(i, |node, out| node.tick(now, out));
                }
            }
            Ev::Tree {
                to,
                tree,
                bytes,
                msg,
            } => {
                let from = Source::Member(msg.0);
                if !self.nodes[to as usize].link_up[tree as usize] {
                    // The link went down while the copy was on its way.
                    if let Some(c) = self.lost.get_mut(&msg) {
                        c.lost[to as usize] += 1;
                    }
                } else if self.nodes[to as usize].alive {
                    let now = self.now;
                    self.with_node(to, |node, out| {
                        node.receive_tree_from(now, tree, from, &bytes, out)
                    });
                }
            }
            Ev::ToNode { to, bytes } => {
                if self.nodes[to as usize].alive {
                    let now = self.now;
                    let before = self.nodes[to as usize]
                        .node
                        .counter(Counter::RequestsAccepted);
                    self.with_node(to, |node, out| node.receive_client(now, &bytes, out));
                    if self.nodes[to as usize]
                        .node
                        .counter(Counter::RequestsAccepted)
                        > before
                        && let Ok((_, Packet::Request(e))) =
                            wire::parse(&bytes, self.t.cfg.cluster_id)
                    {
                        self.h.accepted.push((to, now, e.client_id, e.seq));
                    }
                }
            }
            Ev::ToClient { client, bytes } => self.client_receive(client, &bytes),
            Ev::Peer { to, bytes } => self.peer_receive(to, &bytes),
            Ev::ClientWake(c) => {
                if self.clients[c].wake_at == Some(self.now) {
                    self.clients[c].wake_at = None;
                }
                self.client_wake(c);
            }
            Ev::Start => {
                let now = self.now;
                self.log(|| "control: START on node 0".into());
                if self.nodes[0].alive {
                    self.with_node(0, |node, out| {
                        let _ = node.control(now, Control::Start, out);
                    });
                }
            }
            Ev::Crash(target) => {
                if let Some(i) = self.resolve(&target) {
                    self.crash(i, "crash");
                }
            }
            Ev::ArmMidsend { target, after } => {
                if let Some(i) = self.resolve(&target) {
                    self.log(|| {
                        format!("fault: node {i} will crash before step {after} of its next send (copies, decision, OKs)")
                    });
                    self.nodes[i as usize].midsend = Some(after);
                }
            }
            Ev::Link { node, tree, up } => {
                self.log(|| {
                    format!(
                        "fault: node {node} link on tree {tree} {}",
                        if up { "up" } else { "down" }
                    )
                });
                self.nodes[node as usize].link_up[tree as usize] = up;
            }
            Ev::JoinEnable(i) => {
                // (A restart may have brought the node in already.)
                if self.nodes[i as usize].alive && self.h.enabled_at[i as usize].is_none() {
                    let now = self.now;
                    self.log(|| format!("control: node {i} enabled as joining"));
                    self.h.enabled_at[i as usize] = Some(now);
                    self.with_node(i, |node, out| {
                        let _ = node.control(now, Control::EnableJoin, out);
                    });
                }
            }
            Ev::Restart(i) => self.restart(i),
            Ev::Pause { target, dur } => {
                if let Some(i) = self.resolve(&target)
                    && self.nodes[i as usize].paused_until.is_none()
                {
                    self.log(|| format!("fault: node {i} paused for {dur}"));
                    self.h.paused = true;
                    self.nodes[i as usize].paused_until = Some(self.now + dur);
                    self.at(self.now + dur, Ev::Resume(i));
                }
            }
            Ev::Resume(i) => self.resume(i),
            Ev::JoinRetry(i, attempt) => {
                let sn = &self.nodes[i as usize];
                // Only the retry of the current attempt counts (older ones are stale).
                if sn.alive && sn.node.state() == State::Joining && sn.join_attempt == attempt {
                    self.nodes[i as usize].join_requested = false;
                    self.maybe_request_snapshot(i);
                }
            }
        }
    }

    /// A paused node resumes: it reads what queued up meanwhile, in order, each input at its
    /// arrival time (the engine's kernel receive timestamps), then runs what is due now.
    fn resume(&mut self, i: u8) {
        let sn = &mut self.nodes[i as usize];
        sn.paused_until = None;
        let events = std::mem::take(&mut sn.deferred);
        self.log(|| {
            format!(
                "fault: node {i} resumes with {} queued input(s)",
                events.len()
            )
        });
        let mut peer = Vec::new();
        self.replaying = true;
        for (t, ev) in events {
            if !self.nodes[i as usize].alive {
                break;
            }
            self.replay_time = Some(t);
            match ev {
                Ev::Tree {
                    to,
                    tree,
                    bytes,
                    msg,
                } if self.nodes[to as usize].link_up[tree as usize] => {
                    let from = Source::Member(msg.0);
                    self.with_node(to, |node, out| {
                        node.receive_tree_from(t, tree, from, &bytes, out)
                    });
                }
                Ev::ToNode { to, bytes } => {
                    let before = self.nodes[to as usize]
                        .node
                        .counter(Counter::RequestsAccepted);
                    self.with_node(to, |node, out| node.receive_client(t, &bytes, out));
                    if self.nodes[to as usize]
                        .node
                        .counter(Counter::RequestsAccepted)
                        > before
                        && let Ok((_, Packet::Request(e))) =
                            wire::parse(&bytes, self.t.cfg.cluster_id)
                    {
                        self.h.accepted.push((to, t, e.client_id, e.seq));
                    }
                }
                Ev::Peer { .. } => peer.push(ev),
                _ => {}
            }
        }
        self.replay_time = None;
        let now = self.now;
        if self.nodes[i as usize].alive {
            self.with_node(i, |node, out| node.tick(now, out));
        }
        self.replaying = false;
        for ev in peer {
            self.step(ev);
        }
    }

    /// Which node a fault aims at: a given one, or whoever leads now (if alive).
    fn resolve(&self, t: &Target) -> Option<u8> {
        match *t {
            Target::Node(i) => self.nodes[i as usize].alive.then_some(i),
            Target::Leader => self
                .nodes
                .iter()
                .position(|n| n.alive && n.node.is_leader())
                .map(|i| i as u8),
        }
    }

    fn crash(&mut self, i: u8, why: &str) {
        if !self.nodes[i as usize].alive {
            return;
        }
        // Never crash the last member standing: the model tolerates n−1 crashes, not n
        // (a node still joining is not a member until its state transfer is done).
        let members = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(j, n)| {
                *j != i as usize
                    && n.alive
                    && matches!(n.node.state(), State::Active | State::Armed)
            })
            .count();
        if members == 0 {
            return;
        }
        self.nodes[i as usize].alive = false;
        self.h.crashed_at[i as usize] = Some(self.now);
        self.end_membership(i);
        self.log(|| format!("fault: node {i} {why}"));
    }

    fn end_membership(&mut self, i: u8) {
        if let Some((_, end @ None)) = self.h.member[i as usize].last_mut() {
            *end = Some(self.now);
        }
    }

    /// A crashed node restarts (a new process, empty state), or a node that made a safe
    /// exit is disabled and re-enabled; either way it joins again with a state transfer.
    fn restart(&mut self, i: u8) {
        let now = self.now;
        let sn = &mut self.nodes[i as usize];
        let crashed = !sn.alive;
        if !crashed && sn.node.state() != State::Faulted {
            return;
        }
        if crashed {
            let cfg = Config {
                node_id: i,
                ..self.t.cfg
            };
            sn.node = Node::new(cfg).expect("the run's config is legal");
            sn.node.set_recovery(true);
            sn.node.set_keys(sim_keys());
            if let Some(hook) = self.cfg.node_hook {
                hook(&mut sn.node);
            }
            sn.alive = true;
            sn.midsend = None;
        }
        sn.tick_at = None;
        sn.log = DecisionLog::default();
        sn.join_requested = false;
        sn.joiner.abandon();
        self.h.restarts[i as usize].push(now);
        self.h.restart_marks[i as usize].push(self.h.decisions.len());
        self.h.enabled_at[i as usize].get_or_insert(now);
        self.h.crashed_at[i as usize] = None;
        self.h.faulted_at[i as usize] = None;
        self.log(|| {
            format!(
                "fault: node {i} restarts ({}) and joins again",
                if crashed {
                    "after a crash"
                } else {
                    "after its safe exit"
                }
            )
        });
        self.with_node(i, |node, out| {
            let _ = node.control(now, Control::Disable, out);
            let _ = node.control(now, Control::EnableJoin, out);
        });
    }

    /// Run `f` on node `i` and carry out the actions it returns.
    fn with_node(&mut self, i: u8, f: impl FnOnce(&mut Node, &mut Vec<Action>)) {
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        f(&mut self.nodes[i as usize].node, &mut out);
        self.carry_out(i, out);
    }

    /// Carry out node `i`'s actions.
    fn carry_out(&mut self, i: u8, mut out: Vec<Action>) {
        let mut sent_trees = 0u8;
        let mut msg: Option<(u32, u32)> = None;
        // A mid-send crash falls before step k of a leader send: its copies (one step
        // each), then its decision, then its OKs.
        let leader_send = out.iter().any(|a| matches!(a, Action::Send { .. }));
        let mut step = 0u8;
        // The engine's check after its send system call: copies that leave after the lease are
        // a failed send (no delivery, no OK; the leader steps out and rejoins).
        let mut late_send = false;
        let mut skipping = false;
        let mut extra = Vec::new();
        // The lease each DECIDE send was judged under travels with it: the node may have
        // stepped down later in the same input, so its state after it no longer tells.
        let window = self.t.cfg.window();
        if self.replaying
            && leader_send
            && out.iter().any(|a| matches!(a, Action::Send { lease_end: Some(end), .. } if self.now + window >= *end))
        {
            late_send = true;
            let now = self.now;
            self.log(|| format!("n{i} resumed past its lease: its send fails"));
            self.nodes[i as usize].node.copies_failed(now, &mut extra);
        }
        for a in out.drain(..) {
            if !self.nodes[i as usize].alive {
                break;
            }
            // From its first copy on (a decision kept from before, e.g. by a recovery, still goes).
            if late_send
                && matches!(&a, Action::Send { packet, .. } if packet.get(3) == Some(&(wire::Kind::Decide as u8)))
            {
                skipping = true;
            }
            if skipping
                && matches!(
                    a,
                    Action::Send { .. } | Action::Deliver(_) | Action::Reply { .. }
                )
            {
                continue;
            }
            if leader_send
                && matches!(
                    a,
                    Action::Send { .. } | Action::Deliver(_) | Action::Reply { .. }
                )
            {
                if self.nodes[i as usize].midsend == Some(step) {
                    self.crash(i, "crashed in the middle of a leader send");
                    if !self.nodes[i as usize].alive {
                        break;
                    }
                }
                step = step.saturating_add(1);
            }
            match a {
                Action::Send { tree, packet, .. } => {
                    if let Ok((_, Packet::Decide(d))) = wire::parse(&packet, self.t.cfg.cluster_id)
                    {
                        msg = Some((d.meta.epoch, d.meta.msg_seq));
                        if tree == 0 {
                            let (e, s, k, inst) =
                                (d.meta.epoch, d.meta.msg_seq, d.meta.kind, d.meta.instance);
                            self.log(|| {
                                format!("n{i} send epoch={e} seq={s} {k:?} instance={inst}")
                            });
                        }
                    }
                    sent_trees += 1;
                    self.multicast(i, tree, Arc::new(packet));
                }
                Action::Reply { client_id, packet } => {
                    let c = (client_id - 100) as usize;
                    let d = self.rng.range(self.t.min_delay, self.t.cfg.delta as u64);
                    self.at(
                        self.now + d,
                        Ev::ToClient {
                            client: c,
                            bytes: packet,
                        },
                    );
                }
                Action::Deliver(d) => {
                    let (count, entries): (u16, Arc<[u8]>) = {
                        let dd = d.decide(self.t.cfg.cluster_id);
                        (dd.count, Arc::from(dd.entries_raw))
                    };
                    // (A paused node's replayed input decides now: its copies and host frame
                    // leave now, whatever time the model ran the input at.)
                    let now = self.now;
                    let inst = d.instance;
                    self.log(|| {
                        format!(
                            "n{i} decide instance={inst} {:?} {} bytes",
                            d.kind,
                            entries.len()
                        )
                    });
                    if self.h.faulted_at[i as usize].is_some() {
                        self.h.delivered_after_fault[i as usize] += 1;
                    }
                    let sn = &mut self.nodes[i as usize];
                    sn.log.map.insert(
                        d.instance,
                        Arc::new(proto::log::Logged {
                            kind: d.kind,
                            count,
                            entries: entries.to_vec(),
                        }),
                    );
                    self.h.decisions.push(DecisionRec {
                        time: now,
                        node: i,
                        instance: d.instance,
                        kind: d.kind,
                        count,
                        entries,
                        // Not within Δ by construction: kept copies decided by a recovery, or a
                        // paused process catching up.
                        recovered: d.recovered || self.replaying,
                    });
                }
                Action::NetFault(f) => {
                    self.log(|| format!("n{i} NET-FAULT {f:?}"));
                    self.h.faulted_at[i as usize].get_or_insert(self.now);
                    self.h.net_faults[i as usize] += 1;
                    self.end_membership(i);
                }
                Action::Violation(v) => {
                    self.log(|| format!("n{i} synchrony violation {v:?}"));
                    self.h.violations_seen[i as usize] += 1;
                }
                Action::LeaderChanged { epoch, leader } => {
                    self.log(|| format!("n{i} leader -> {leader} (epoch {epoch})"));
                }
                Action::FilledFromKept(ds) => {
                    // As a gap fill's transfer: into the log, not a delivery (the node decided
                    // later instances already).
                    self.log(|| format!("n{i} fills its gap from {} kept copies", ds.len()));
                    self.h.gap_fills += 1;
                    let cluster = self.t.cfg.cluster_id;
                    let mut got = DecisionLog::default();
                    for d in &ds {
                        if let Some((instance, l)) =
                            proto::log::Logged::from_packet(&d.packet, cluster)
                        {
                            got.map.insert(instance, Arc::new(l));
                        }
                    }
                    self.record_snapshot(i, &got);
                    if let Err(e) = self.nodes[i as usize].log.merge(got) {
                        self.log(|| format!("n{i} gap fill from kept copies conflicts: {e:?}"));
                    }
                }
                Action::FillGap { from, instance } => {
                    // A recovering node with a gap in its log: transfer the gap from `from`.
                    self.log(|| {
                        format!("n{i} asks n{from} to fill its gap up to instance {instance}")
                    });
                    self.h.gap_fills += 1;
                    let sn = &mut self.nodes[i as usize];
                    sn.join_attempt += 1;
                    let ask = sn.joiner.ask_gap(&sn.node, from, instance);
                    self.peer_send(i, from, ask.packet);
                }
                Action::Rejoin => {
                    // The node left after its safe exit and comes back through the join path:
                    // a new incarnation for the integrity check; any transfer in progress is
                    // abandoned (the host asks again once the node has locked on).
                    self.log(|| format!("n{i} rejoins through the join path"));
                    let at = self.replay_time.unwrap_or(self.now);
                    self.h.restarts[i as usize].push(at);
                    self.h.restart_marks[i as usize].push(self.h.decisions.len());
                    self.h.faulted_at[i as usize] = None;
                    self.h.rejoins += 1;
                    let sn = &mut self.nodes[i as usize];
                    sn.join_requested = false;
                    sn.joiner.abandon();
                    sn.join_attempt += 1;
                }
                Action::Recovered {
                    epoch,
                    leader,
                    lins,
                } => {
                    self.log(|| {
                        format!("n{i} recovered: epoch={epoch} leader={leader} lins={lins}")
                    });
                    if leader == i {
                        self.h.recoveries += 1;
                    }
                    if leader == i && self.recovery_crash_armed {
                        self.recovery_crash_armed = false;
                        self.crash(i, "crashed right after the recovery elected it");
                    }
                    if leader == i && self.second_fault_armed {
                        self.second_fault_armed = false;
                        self.h.network_faults = true;
                        let p = self.t.cfg.loop_period as u64;
                        self.drop_window = Some((self.now, self.now + 10 * p, 0.3, None));
                        self.log(|| "fault: copies dropped (p=0.3) just after the recovery".into());
                    }
                }
                Action::StateChanged(s) => {
                    if s == State::Active {
                        self.h.member[i as usize].push((self.now, None));
                    }
                    let (place, lins) = (
                        self.nodes[i as usize].node.place(),
                        self.nodes[i as usize].node.last_decided(),
                    );
                    self.log(|| {
                        format!("n{i} state {s:?} (place {place:?}, last decided {lins:?})")
                    })
                }
            }
        }
        if let Some((epoch, seq)) = msg {
            self.h.sends.push(SendRec {
                time: self.now,
                node: i,
                epoch,
            });
            if let Some(e) = self.lost.get_mut(&(i, epoch, seq)) {
                e.sent_trees = sent_trees;
            }
        }
        self.out = out;
        if !extra.is_empty() {
            return self.carry_out(i, extra);
        }
        if self.nodes[i as usize].alive {
            self.reschedule(i);
            self.maybe_request_snapshot(i);
        }
    }

    fn reschedule(&mut self, i: u8) {
        let now = self.now;
        let n = &mut self.nodes[i as usize];
        if let Some(t) = n.node.next_deadline() {
            let t = t.max(now + 1);
            if n.tick_at.is_none_or(|s| t < s) {
                n.tick_at = Some(t);
                self.at(t, Ev::Tick(i));
            }
        }
    }

    /// One copy on tree `tree` from `src` to every other node: link state, drops, delays, FIFO order.
    fn multicast(&mut self, src: u8, tree: u8, bytes: Arc<Vec<u8>>) {
        // Loss bookkeeping is for DECIDE copies only (RECOVER packets are not RSBCAST).
        let decide = match wire::parse(&bytes, self.t.cfg.cluster_id) {
            Ok((_, Packet::Decide(d))) => Some((d.meta.epoch, d.meta.msg_seq)),
            _ => None,
        };
        let (epoch, seq) = decide.unwrap_or((u32::MAX, u32::MAX));
        let n = self.cfg.nodes as usize;
        let up_src = self.nodes[src as usize].link_up[tree as usize];
        for dst in 0..self.cfg.nodes {
            if dst == src {
                continue;
            }
            // Would this receiver take part? (for the redundancy bookkeeping)
            let live = {
                let d = &self.nodes[dst as usize];
                d.alive && !matches!(d.node.state(), State::Disabled | State::Faulted)
            };
            let mut lost = !up_src || !self.nodes[dst as usize].link_up[tree as usize];
            if let Some((from, until, p, only)) = self.drop_window
                && self.now >= from
                && self.now < until
                && only.is_none_or(|t| t == tree)
                && self.rng.chance(p)
            {
                lost = true;
                self.log(|| {
                    format!("fault: drop tree {tree} copy {src}->{dst} epoch={epoch} seq={seq}")
                });
            }
            if decide.is_some() {
                let rec = self
                    .lost
                    .entry((src, epoch, seq))
                    .or_insert_with(|| CopyLoss {
                        sent_trees: 0,
                        lost: vec![0; n],
                        live: vec![false; n],
                    });
                rec.live[dst as usize] |= live;
                if lost {
                    rec.lost[dst as usize] += 1;
                }
            }
            if lost {
                continue;
            }
            let mut delay = self.rng.range(self.t.min_delay, self.t.cfg.delta as u64);
            if let Some((at, to, extra)) = self.late_pending
                && self.now >= at
                && to == dst
                && live
            {
                self.late_pending = None;
                self.h.late_injected = true;
                delay = self.t.cfg.delta as u64 + extra;
                self.log(|| {
                    format!("fault: tree {tree} copy {src}->{dst} delayed by {delay} (beyond Δ_I)")
                });
            }
            let key = (src, dst, tree);
            let when = (self.now + delay).max(self.link_last.get(&key).copied().unwrap_or(0));
            self.link_last.insert(key, when);
            self.at(
                when,
                Ev::Tree {
                    to: dst,
                    tree,
                    bytes: bytes.clone(),
                    msg: (src, epoch, seq),
                },
            );
        }
    }

    // ----- clients -----------------------------------------------------------

    fn wake_client(&mut self, c: usize, t: u64) {
        let cl = &mut self.clients[c];
        if cl.wake_at.is_none_or(|w| t < w) {
            cl.wake_at = Some(t);
            self.at(t, Ev::ClientWake(c));
        }
    }

    fn client_send(&mut self, c: usize, seq: u64) {
        let n = self.cfg.nodes;
        let cl = &mut self.clients[c];
        let o = &cl.out[&seq];
        let to = cl.guess % n;
        let bytes = Packet::Request(Entry {
            client_id: cl.id,
            seq,
            flags: o.flags,
            payload: &o.payload,
        })
        .to_vec(self.t.cfg.cluster_id, wire::SENDER_NONE)
        .expect("client requests fit");
        let mut bytes = bytes;
        if self.t.cfg.auth_mode != 0 {
            proto::auth::seal_vec(&mut bytes, &sim_keys(), self.t.cfg.auth_key)
                .expect("the clients hold the cluster's key");
        }
        let d = self.rng.range(self.t.min_delay, self.t.cfg.delta as u64);
        self.at(self.now + d, Ev::ToNode { to, bytes });
    }

    fn client_wake(&mut self, c: usize) {
        let now = self.now;
        let n = self.cfg.nodes;
        // Resends: after a NOT_LEADER hint go to the named node; after silence try the next one.
        let due: Vec<u64> = self.clients[c]
            .out
            .iter()
            .filter(|(_, o)| now >= o.resend_at)
            .map(|(s, _)| *s)
            .collect();
        for seq in due {
            let cl = &mut self.clients[c];
            let o = cl.out.get_mut(&seq).expect("due");
            if !o.hinted {
                cl.guess = (cl.guess + 1) % n;
            }
            o.hinted = false;
            o.resend_at = now + self.t.client_timeout;
            self.client_send(c, seq);
        }
        let cl = &mut self.clients[c];
        if cl.left > 0 && now >= cl.next_new && cl.out.len() < 2 {
            let seq = cl.next_seq;
            cl.next_seq += 1;
            cl.left -= 1;
            let nth = self.clients[c].next_seq as u32 - 1;
            let (flags, payload) = if self.clients[c].config_at == Some(nth) {
                let v = self.t.cfg.timeout + self.rng.range(1, 2 * self.t.cfg.delta as u64) as u32;
                let item = wire::ConfigItem {
                    addr: regs::addr::TIMEOUT,
                    value: v,
                };
                (wire::ENTRY_FLAG_CONFIG, item.to_bytes().to_vec())
            } else {
                let len = self.rng.range(1, 48) as usize;
                (0, (0..len).map(|_| self.rng.next_u64() as u8).collect())
            };
            let id = self.clients[c].id;
            self.h.requests.insert((id, seq), (flags, payload.clone()));
            self.clients[c].out.insert(
                seq,
                Outstanding {
                    flags,
                    payload,
                    resend_at: now + self.t.client_timeout,
                    hinted: false,
                },
            );
            self.client_send(c, seq);
            let gap = self
                .rng
                .range(self.t.interval / 2, self.t.interval * 3 / 2)
                .max(1);
            self.clients[c].next_new = now + gap;
        }
        let cl = &self.clients[c];
        let mut next = cl.out.values().map(|o| o.resend_at).min();
        // A new request is due at next_new, but only once a pipeline slot is free (a reply wakes us).
        if cl.left > 0 && cl.out.len() < 2 {
            let nn = cl.next_new.max(now + 1);
            next = Some(next.map_or(nn, |x| x.min(nn)));
        }
        if let Some(t) = next {
            self.wake_client(c, t.max(now + 1));
        }
    }

    fn client_receive(&mut self, c: usize, bytes: &[u8]) {
        let now = self.now;
        let p = self.t.cfg.loop_period as u64;
        match wire::parse(bytes, self.t.cfg.cluster_id) {
            Ok((_, Packet::ReplyOk(r))) => {
                self.h
                    .oks
                    .push((now, r.client_id, r.seq, r.instance, r.index));
                self.clients[c].out.remove(&r.seq);
                self.wake_client(c, now + 1);
            }
            Ok((_, Packet::ReplyNotLeader(r))) => {
                let n = self.cfg.nodes;
                let cl = &mut self.clients[c];
                cl.guess = if r.leader == wire::SENDER_NONE {
                    (cl.guess + 1) % n
                } else {
                    r.leader
                };
                if let Some(o) = cl.out.get_mut(&r.seq) {
                    o.hinted = true;
                    o.resend_at = now + p.max(1);
                    let t = o.resend_at;
                    self.wake_client(c, t);
                }
            }
            _ => {}
        }
    }

    // ----- join / state transfer (the host application's part) -------------

    fn maybe_request_snapshot(&mut self, j: u8) {
        let sn = &self.nodes[j as usize];
        if sn.join_requested || sn.node.state() != State::Joining {
            return;
        }
        if sn.node.last_decided().is_none() {
            return;
        }
        let members: Vec<u8> = (0..self.cfg.nodes)
            .filter(|&m| {
                m != j
                    && self.nodes[m as usize].alive
                    && self.nodes[m as usize].node.state() == State::Active
            })
            .collect();
        if members.is_empty() {
            return;
        }
        let m = self.rng.pick(&members);
        let sn = &mut self.nodes[j as usize];
        // The host holds its log from before a safe exit: it asks only for what it lacks.
        let Some(ask) = sn.joiner.ask(&sn.node, m, true) else {
            return;
        };
        sn.join_requested = true;
        sn.join_attempt += 1;
        let attempt = sn.join_attempt;
        let (min_instance, have) = (ask.request.min_instance, ask.request.have);
        self.log(|| {
            format!("n{j} asks n{m} for a snapshot covering instance {min_instance} (it has up to {have})")
        });
        // If the member dies or the transfer stalls, ask again.
        let retry = self.now + 4 * self.t.cfg.timeout as u64 + 4 * self.t.cfg.delta as u64;
        self.at(retry, Ev::JoinRetry(j, attempt));
        self.peer_send(j, m, ask.packet);
    }

    /// Node-to-node control traffic (state transfer): a reliable, ordered stream, like TCP.
    fn peer_send(&mut self, from: u8, to: u8, bytes: Vec<u8>) {
        let key = (from, to, u8::MAX);
        let d = self.rng.range(self.t.min_delay, self.t.cfg.delta as u64);
        let when = (self.now + d).max(self.link_last.get(&key).copied().unwrap_or(0));
        self.link_last.insert(key, when);
        self.at(when, Ev::Peer { to, bytes });
    }

    fn peer_receive(&mut self, to: u8, bytes: &[u8]) {
        if !self.nodes[to as usize].alive {
            return;
        }
        let Ok((h, p)) = wire::parse(bytes, self.t.cfg.cluster_id) else {
            return;
        };
        match p {
            Packet::JoinRequest(r) => {
                let sn = &self.nodes[to as usize];
                let packets = join::serve(&join::Member::of(&sn.node), &sn.log, &r);
                for bytes in packets {
                    self.peer_send(to, h.sender, bytes);
                }
            }
            Packet::StateChunk(c) => {
                let now = self.now;
                let sn = &mut self.nodes[to as usize];
                let snapshot = match sn.joiner.chunk(&c) {
                    Ok(None) => return,
                    Ok(Some(s)) => s,
                    Err(e) => {
                        let attempt = sn.join_attempt;
                        self.log(|| format!("n{to} state transfer failed: {e}; retrying"));
                        self.at(now + self.t.cfg.timeout as u64, Ev::JoinRetry(to, attempt));
                        return;
                    }
                };
                let instance = snapshot.instance;
                // What the snapshot holds, for the checker (a member's log must agree too).
                let got = DecisionLog::decode(&snapshot.data).unwrap_or_default();
                if sn.node.state() == State::Recovering {
                    let mut log = std::mem::take(&mut sn.log);
                    let mut took = Ok(false);
                    self.with_node(to, |node, out| {
                        took = join::fill_gap(node, &mut log, &snapshot, now, out);
                    });
                    self.restore_log(to, log);
                    match took {
                        Ok(taken) => {
                            self.record_snapshot(to, &got);
                            self.log(|| {
                                format!("n{to} gap filled up to instance {instance}: taken={taken}")
                            });
                        }
                        Err(e) => self.log(|| format!("n{to} gap fill refused: {e}")),
                    }
                    return;
                }
                // Install: the snapshot's decisions join the host's log, the node takes the
                // member's timeout and activates (proto's join does all three, or nothing).
                let mut log = std::mem::take(&mut self.nodes[to as usize].log);
                let mut r = Err(join::JoinError::NotJoining(State::Disabled));
                self.with_node(to, |node, out| {
                    r = join::install(node, &mut log, &snapshot, now, out);
                });
                self.restore_log(to, log);
                match r {
                    Ok(_) => {
                        self.record_snapshot(to, &got);
                        self.log(|| {
                            format!("n{to} state transfer done at instance {instance}; activating")
                        });
                    }
                    Err(e) => {
                        let attempt = self.nodes[to as usize].join_attempt;
                        let first = self.nodes[to as usize].node.first_logged();
                        self.log(|| format!("n{to} snapshot at {instance} not installed ({e}; first logged {first:?}); retrying"));
                        self.at(
                            now + self.t.cfg.loop_period as u64,
                            Ev::JoinRetry(to, attempt),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    /// Put back a host log taken out for a transfer, with what was decided meanwhile (the
    /// actions the transfer's step carried out).
    fn restore_log(&mut self, i: u8, log: DecisionLog) {
        let during = std::mem::replace(&mut self.nodes[i as usize].log, log);
        for (k, l) in during.map {
            self.nodes[i as usize].log.map.insert(k, l);
        }
    }

    /// A node's host took a snapshot's decisions: the checker compares them too.
    fn record_snapshot(&mut self, to: u8, got: &DecisionLog) {
        let snap = &mut self.h.snapshot_log[to as usize];
        for (i, l) in &got.map {
            snap.insert(
                *i,
                Logged {
                    kind: l.kind,
                    count: l.count,
                    entries: l.entries.clone(),
                },
            );
        }
    }

    fn finish(&mut self) -> History {
        let g = self.cfg.trees;
        for c in self.lost.values() {
            if c.sent_trees == g && c.lost.iter().zip(&c.live).any(|(l, live)| *live && *l >= g) {
                self.h.redundancy_exceeded = true;
            }
        }
        self.h.final_state = self
            .nodes
            .iter()
            .map(|n| (n.node.state(), n.node.last_decided()))
            .collect();
        self.h.max_timeout = self.h_max_timeout();
        self.h.max_outage = self
            .nodes
            .iter()
            .map(|n| n.node.recovery_stats().max_outage)
            .collect();
        self.h.network_healed = self.nodes.iter().all(|n| n.link_up.iter().all(|&u| u))
            && self
                .drop_window
                .is_none_or(|(_, until, _, _)| until <= self.h.end);
        self.h.capable_at_end = self
            .nodes
            .iter()
            .filter(|n| {
                n.alive
                    && (matches!(n.node.state(), State::Active | State::Recovering)
                        || n.node.is_rejoining())
            })
            .count();
        self.h.final_timeout = self.nodes.iter().map(|n| n.node.config().timeout).collect();
        self.h.unanswered = self
            .clients
            .iter()
            .map(|c| c.out.len() + c.left as usize)
            .sum();
        if self.cfg.trace {
            let mut s = String::new();
            for (i, n) in self.nodes.iter().enumerate() {
                let _ = write!(
                    s,
                    "node {i}: alive={} state={:?} epoch={} last_decided={:?}; ",
                    n.alive,
                    n.node.state(),
                    n.node.epoch(),
                    n.node.last_decided()
                );
            }
            self.trace.push(format!("{:>10} end: {s}", self.now));
        }
        std::mem::take(&mut self.h)
    }
}
