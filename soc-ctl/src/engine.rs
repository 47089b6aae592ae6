//! `nc-engine`: one node's software datapath. It runs proto's [`Node`] over real UDP sockets and
//! carries out its actions; it holds no protocol logic of its own.
//!
//! Threads: the *engine* thread owns the node and every datapath socket and is the only one that
//! touches the node; the *control* thread serves the Unix socket (0600) and forwards each request
//! to the engine thread over a channel (plus a wake-up datagram, so a sleeping engine sees it);
//! the *state* thread serves snapshots of the decision log to joining nodes over TCP.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener};
use std::os::fd::AsFd;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use nix::poll::PollTimeout;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use proto::node::{Action, Dropped, Node, Source, State, Violation};
use proto::regs::{self, Counter};
use proto::transfer::Snapshot;
use proto::wire::{self, Packet};
use serde_json::{Value, json};

mod control;
mod sockets;
mod transfer;
pub use control::{CtlRequest, ENTRIES_MAX, parse_control_line};
pub use transfer::read_packet;

use control::{bind_control, serve_control};
use sockets::{Sockets, ctx, open_sockets};

use crate::cluster::{NodeSetup, Transport};
use crate::log::{DecisionLog, Logged};
use crate::mmsg::{self, Datagram};

/// How the engine thread waits for its next deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TimerMode {
    /// Sleep in poll(2) on the sockets and a CLOCK_MONOTONIC timerfd armed at the next deadline.
    Timerfd,
    /// Spin on non-blocking sockets and the clock (one core at 100%, the lowest jitter).
    Busy,
}

/// Nanoseconds on CLOCK_REALTIME (the clock of the kernel's receive timestamps).
fn realtime_ns() -> u64 {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_REALTIME).expect("CLOCK_REALTIME");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// Nanoseconds on CLOCK_MONOTONIC: the engine's `now`.
pub fn now_ns() -> u64 {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// A request to the engine thread.
#[derive(Debug)]
pub enum Cmd {
    /// Read a 32-bit register word.
    Read(u16),
    /// Write a 32-bit register word.
    Write(u16, u32),
    /// Everything `soc-ctl status` shows.
    Status,
    /// `soc-ctl join MEMBER`: answered when the node is active (or the join failed).
    Join(u64),
    /// A join's snapshot transfer from a member ended (the join thread).
    Snapshot(u8, Result<Snapshot, String>),
    /// A gap's snapshot transfer ended (`Action::FillGap`).
    GapSnapshot(u8, Result<Snapshot, String>),
    /// Test hook for the loopback transport: drop (and count) everything received on a tree.
    DropTree(u8, bool),
    /// Clear the engine's own statistics (takeover time, longest send gap).
    ResetStats,
    /// Read the key file (`auth.key_file`) again (a key rotation adds or removes keys).
    ReloadKeys,
}

type Reply = Result<Value, String>;

/// A way to talk to a running engine thread.
#[derive(Clone)]
pub struct EngineHandle {
    tx: mpsc::Sender<(Cmd, mpsc::Sender<Reply>)>,
    wake: Arc<UnixDatagram>,
}

impl EngineHandle {
    /// Run `cmd` on the engine thread and wait for its answer.
    pub fn call(&self, cmd: Cmd) -> Reply {
        let (tx, rx) = mpsc::channel();
        self.tx
            .send((cmd, tx))
            .map_err(|_| "engine stopped".to_string())?;
        let _ = self.wake.send(&[1]);
        rx.recv().map_err(|_| "engine stopped".to_string())?
    }
}

/// What the state thread serves (updated by the engine thread).
#[derive(Default)]
struct Shared {
    log: DecisionLog,
    lins: Option<u64>,
    timeout: u32,
    active: bool,
    /// State-transfer connections refused: not from a member's address, or a packet with a
    /// wrong or missing tag.
    unauthorized_transfers: u64,
    /// The node's packet tags, for the state transfer (kept in step by `publish`).
    auth: transfer::TransferAuth,
}

/// The engine's own measurements (not protocol state).
#[derive(Clone, Debug, Default)]
struct Stats {
    /// Last time a datagram arrived on a tree.
    last_tree_rx: Option<u64>,
    /// Took over as leader by timeout: waiting for the first send.
    takeover_pending: Option<u64>,
    /// Last takeover: last tree receive → first own send, ns.
    takeover_ns: Option<u64>,
    /// Leader: time of the last message sent (a message = its |G| copies).
    last_send: Option<u64>,
    /// Leader: the longest time between two messages since the last reset.
    max_send_gap_ns: u64,
    /// Datagrams dropped by the DropTree test hook.
    fault_drops: u64,
    /// Synchrony violations by kind.
    late_tick_max_ns: u64,
    deposed: u64,
    /// Sends that failed at the socket.
    send_errors: u64,
    /// Replies for a client whose address is unknown.
    reply_unknown_client: u64,
    /// Messages (all copies of one send) that did not leave whole: the leader's safe exit.
    partial_sends: u64,
    /// Sends whose copies left after the lease had passed (treated as failed: not acknowledged).
    lease_late_sends: u64,
    /// Tree datagrams the kernel dropped before the engine read them (full receive buffers),
    /// seen as increases of `SO_RXQ_OVFL`: each made this node fault if it was following.
    rx_overflows: u64,
    /// Publishes that found the state lock busy (the decisions went with a later one).
    publish_deferred: u64,
    /// An instance logged again with a different value (must stay 0).
    log_conflicts: u64,
    /// Instances dropped from the log's old end (it keeps `log_keep`).
    log_truncated: u64,
}

/// Requests a leader times at most at once (`Engine::requests_at`).
const REQUESTS_TIMED: usize = 1 << 16;

/// The engine (owned by the engine thread).
pub struct Engine {
    setup: NodeSetup,
    node: Node,
    socks: Sockets,
    clients: HashMap<u32, SocketAddr>,
    shared: Arc<Mutex<Shared>>,
    stats: Stats,
    drop_tree: [bool; 4],
    timer: TimerMode,
    rx: mpsc::Receiver<(Cmd, mpsc::Sender<Reply>)>,
    wake: UnixDatagram,
    out: Vec<Action>,
    verbose: bool,
    /// For the transfer threads.
    handle: EngineHandle,
    /// The joining side of state transfers.
    join: transfer::JoinRun,
    /// Buffers for one recvmmsg on a tree socket.
    rx_batch: mmsg::RecvBatch,
    /// Buffers for one recvmmsg on the client socket (taken while its datagrams are fed).
    client_batch: Option<mmsg::RecvBatch>,
    /// The highest `SO_RXQ_OVFL` drop count seen per tree socket.
    rx_drops: [u32; 4],
    crash_after_first_copy: Option<u64>,
    inject_stall: Option<(StallAt, std::time::Duration)>,
    /// Rounds that read tree copies while following (for `StallAt::AfterRead`).
    rounds_read: u64,
    values_sent: u64,
    /// The time of the last input fed to the node (inputs go in time order).
    last_input_at: u64,
    /// Tree datagrams read and not yet fed to the node.
    arrivals: Vec<Arrival>,
    /// Leader: when each request not yet decided arrived, by (client id, seq) (at most
    /// [`REQUESTS_TIMED`]; cleared when full, e.g. of requests a leader that stepped down holds).
    requests_at: HashMap<(u32, u64), u64>,
    /// Leader: a request's arrival → the send that decided it (`nc_request_decided_seconds`);
    /// None without `--metrics` (nothing reads it: requests are not timed).
    decide_latency: Option<Arc<crate::metrics::Histogram>>,
    /// A time by which every tree datagram that had arrived has been read: the clock read
    /// before the last read of every tree socket, or before the last wait whose readable trees
    /// were all read (a tree epoll did not report was empty when it answered).
    read_all_at: u64,
    /// The clock read just before the last wait for input.
    wait_entered: u64,
    /// Decisions not yet in the shared log (its lock was busy).
    pending: Vec<(u64, Arc<Logged>)>,
    /// How many instances the log keeps.
    log_keep: usize,
    /// The shared log's length and first instance at the last publish.
    log_len: usize,
    log_first: Option<u64>,
}

/// A tree datagram with its kernel arrival time (CLOCK_MONOTONIC ns).
struct Arrival {
    at: u64,
    tree: u8,
    /// The kernel dropped datagrams on this tree's socket before this one was queued.
    overflow: bool,
    from: Option<Ipv4Addr>,
    bytes: Vec<u8>,
}

/// Fault injection for tests: where the engine thread stalls once (a preemption at the worst
/// moment, made certain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StallAt {
    /// As an active follower, after the N-th round that read tree copies: between its read of
    /// the trees and its timers.
    AfterRead(u64),
    /// As leader, after the model emitted its N-th value message and before its copies leave.
    BeforeSend(u64),
    /// As leader, after its N-th round's read of the trees: before its requests and timers.
    LeaderAfterRead(u64),
    /// As leader, between the first tree's copies of its N-th value message and the other
    /// trees' copies (one `sendmmsg` each side of the stall).
    BetweenCopies(u64),
}

/// Options of a running engine.
pub struct EngineOpts {
    /// The node's setup from cluster.toml.
    pub setup: NodeSetup,
    /// How to wait for deadlines.
    pub timer: TimerMode,
    /// The control socket path.
    pub ctl_path: PathBuf,
    /// Print every state change and violation to stderr.
    pub verbose: bool,
    /// Run the engine thread SCHED_FIFO with this priority (1..=99) and lock memory (root).
    pub realtime: Option<u8>,
    /// Survive faults by itself (proto's recovery extension): rejoin after a safe exit, recover
    /// with the other survivors when no leader is left. Off: the paper's permanent safe exit.
    pub recovery: bool,
    /// Fault injection for tests: as leader, send the first copy (tree 0) of this node's N-th
    /// value message, then SIGKILL itself before the other trees' copies.
    pub crash_after_first_copy: Option<u64>,
    /// Fault injection for tests: stall the engine thread once, this long, at this point.
    pub inject_stall: Option<(StallAt, std::time::Duration)>,
    /// The decision log keeps the newest this many instances (what `soc-ctl log` shows and a
    /// joining node receives); older ones are dropped, so memory stays bounded.
    pub log_keep: usize,
    /// Serve Prometheus metrics (`GET /metrics`, from the `status` answer) on this address.
    pub metrics: Option<SocketAddr>,
}

/// Make the calling thread SCHED_FIFO at `priority` and lock the process's memory, so that
/// neither ordinary processes nor page faults delay the loop (needs root or CAP_SYS_NICE).
#[allow(unsafe_code)]
pub fn make_realtime(priority: u8) -> io::Result<()> {
    let param = nix::libc::sched_param {
        sched_priority: priority.clamp(1, 99) as i32,
    };
    // SAFETY: sched_setscheduler reads `param` (a valid, initialised struct) and changes only
    // the scheduling policy of the calling thread (pid 0).
    let r = unsafe { nix::libc::sched_setscheduler(0, nix::libc::SCHED_FIFO, &param) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    nix::sys::mman::mlockall(
        nix::sys::mman::MlockAllFlags::MCL_CURRENT | nix::sys::mman::MlockAllFlags::MCL_FUTURE,
    )?;
    Ok(())
}

/// Start an engine: open every socket (errors name the socket), start the state and control
/// threads, and run the engine loop on the calling thread (it returns only on error).
pub fn run(opts: EngineOpts) -> io::Result<()> {
    let setup = opts.setup;
    let mut node = Node::new(setup.config)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    node.set_recovery(opts.recovery);
    node.set_keys(setup.keys);
    if !node.can_seal() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "auth.key: key {} is not in the key file (it holds {:?})",
                setup.config.auth_key,
                setup.keys.ids()
            ),
        ));
    }
    let socks = open_sockets(&setup)?;
    let shared = Arc::new(Mutex::new(Shared {
        timeout: setup.config.timeout,
        auth: transfer::TransferAuth::of(&node),
        ..Shared::default()
    }));
    let state_addr = setup.client_sock(setup.config.node_id);
    let listener = ctx(TcpListener::bind(state_addr), || {
        format!("state transfer: bind TCP {state_addr}")
    })?;
    let (wake_engine, wake_ctl) = UnixDatagram::pair()?;
    wake_engine.set_nonblocking(true)?;
    let (tx, rx) = mpsc::channel();
    let handle = EngineHandle {
        tx,
        wake: Arc::new(wake_ctl),
    };
    let decide_latency = opts.metrics.map(|_| {
        Arc::new(crate::metrics::Histogram::new(
            crate::metrics::DECIDE_BOUNDS_NS,
        ))
    });
    if let (Some(addr), Some(lat)) = (opts.metrics, decide_latency.clone()) {
        let h = handle.clone();
        let bound = ctx(
            crate::metrics::serve(addr, move || {
                h.call(Cmd::Status)
                    .map(|st| crate::metrics::engine_text(&st, &lat))
            }),
            || format!("metrics: bind TCP {addr}"),
        )?;
        tracing::info!("nc-engine: metrics on http://{bound}/metrics");
    }
    let ctl = bind_control(&opts.ctl_path)?;
    {
        let shared = shared.clone();
        let cluster = setup.config.cluster_id;
        let id = setup.config.node_id;
        let members: Vec<Ipv4Addr> = setup
            .nodes
            .iter()
            .flat_map(|n| std::iter::once(n.client_addr).chain(n.tree_addrs.iter().copied()))
            .collect();
        std::thread::Builder::new()
            .name("state".into())
            .spawn(move || transfer::serve_state(listener, shared, cluster, id, members))?;
    }
    let self_handle = handle.clone();
    {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("control".into())
            .spawn(move || serve_control(ctl, handle, shared))?;
    }
    if let Some(p) = opts.realtime {
        ctx(make_realtime(p), || format!("SCHED_FIFO priority {p}"))?;
    }
    let mut e = Engine {
        setup,
        node,
        socks,
        clients: HashMap::new(),
        shared,
        stats: Stats::default(),
        drop_tree: [false; 4],
        timer: opts.timer,
        rx,
        wake: wake_engine,
        out: Vec::new(),
        verbose: opts.verbose,
        handle: self_handle,
        join: transfer::JoinRun::default(),
        rx_batch: mmsg::RecvBatch::new(64),
        client_batch: Some(mmsg::RecvBatch::new(64)),
        rx_drops: [0; 4],
        crash_after_first_copy: opts.crash_after_first_copy,
        inject_stall: opts.inject_stall,
        rounds_read: 0,
        values_sent: 0,
        last_input_at: 0,
        arrivals: Vec::new(),
        requests_at: HashMap::new(),
        decide_latency,
        read_all_at: 0,
        wait_entered: 0,
        pending: Vec::new(),
        log_keep: opts.log_keep,
        log_len: 0,
        log_first: None,
    };
    e.run()
}

/// epoll tokens: tree t is token t.
const TOKEN_CLIENT: u64 = 32;
const TOKEN_WAKE: u64 = 33;
const TOKEN_TIMER: u64 = 34;

fn bit(token: u64) -> u64 {
    1 << token
}

/// The engine's wait: one epoll set registered at start, and the timerfd's armed deadline.
struct Waiter {
    epoll: Epoll,
    events: Vec<EpollEvent>,
    armed: Option<u64>,
}

impl Engine {
    fn run(&mut self) -> io::Result<()> {
        let timerfd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        // Every socket is registered once (level-triggered): a wake-up reports which are
        // readable, and only those are read (no EAGAIN round per socket per wake-up).
        let mut wait = Waiter {
            epoll: Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?,
            events: vec![EpollEvent::empty(); 16],
            armed: None,
        };
        for (t, s) in self.socks.rx.iter().enumerate() {
            wait.epoll
                .add(s.as_fd(), EpollEvent::new(EpollFlags::EPOLLIN, t as u64))?;
        }
        wait.epoll.add(
            self.socks.client.as_fd(),
            EpollEvent::new(EpollFlags::EPOLLIN, TOKEN_CLIENT),
        )?;
        wait.epoll.add(
            self.wake.as_fd(),
            EpollEvent::new(EpollFlags::EPOLLIN, TOKEN_WAKE),
        )?;
        wait.epoll.add(
            timerfd.as_fd(),
            EpollEvent::new(EpollFlags::EPOLLIN, TOKEN_TIMER),
        )?;
        let trace = std::env::var_os("NC_TRACE_WAKE").is_some();
        let mut marks = [0u64; 5];
        // The first round reads everything.
        let mut ready = u64::MAX;
        loop {
            marks[0] = now_ns();
            self.commands(ready & bit(TOKEN_WAKE) != 0);
            self.drive_join(marks[0]);
            marks[1] = now_ns();
            // What the tree sockets hold (at most 64 datagrams each, so that a flood cannot
            // starve the loop), fed in arrival order.
            let read_at = now_ns();
            if self.node.next_deadline().is_some_and(|d| d <= read_at) {
                // This round runs a deadline: read every tree first (see `sleep`).
                ready |= self.all_trees();
            }
            let heard = self.stats.last_tree_rx;
            let backlog = self.read_and_feed(ready);
            if !backlog {
                self.read_all_at = self.read_all_at.max(self.wait_entered);
            }
            if let Some((StallAt::AfterRead(nth), pause)) = self.inject_stall
                && self.stats.last_tree_rx != heard
                && self.node.state() == State::Active
                && !self.node.is_leader()
            {
                self.rounds_read += 1;
                if self.rounds_read == nth {
                    self.stall(pause, "between its read of the trees and its timers");
                }
            }
            if let Some((StallAt::LeaderAfterRead(nth), pause)) = self.inject_stall
                && self.node.is_leader()
            {
                self.rounds_read += 1;
                if self.rounds_read == nth {
                    self.stall(
                        pause,
                        "as leader, between its read of the trees and its timers",
                    );
                }
            }
            marks[2] = now_ns();
            // Requests wait in their socket while tree copies are still queued (time has not
            // reached them yet).
            let clients = ready & bit(TOKEN_CLIENT) != 0 && !backlog;
            // A request runs the node's timers: at a time the trees have been read up to
            // (`present`; none while copies are still queued beyond a few batches).
            if clients && let Some(now) = self.present() {
                self.check_overflow(now);
                // Up to 64 requests in one recvmmsg (no EAGAIN round after the last one), fed
                // to the node together: they leave in one batch (`Node::receive_clients`).
                let mut batch = self.client_batch.take().expect("client batch");
                let got = batch.recv(&self.socks.client).unwrap_or(0);
                if got > 0 {
                    self.client_datagrams(&batch, got, now);
                }
                self.client_batch = Some(batch);
            }
            marks[3] = now_ns();
            // A deadline that has passed runs at `present`: a node that is not leading reads
            // every tree after reading the clock first, so no timeout or window expiry fires
            // ahead of a copy that arrived before it (this process may have been preempted or
            // stopped since its last read, or have just stepped down as leader).
            if self.node.next_deadline().is_some_and(|d| d <= now_ns())
                && let Some(now) = self.present()
            {
                self.last_input_at = now;
                // Before a follower's timers run: copies its kernel dropped (while this
                // process was stopped, say) make it fault, not time out into leadership.
                self.check_overflow(now);
                self.node.tick(now, &mut self.out);
                self.carry_out(now);
            }
            marks[4] = now_ns();
            if trace && marks[4] - marks[0] > 5_000_000 {
                let m: Vec<u64> = marks.windows(2).map(|w| (w[1] - w[0]) / 1000).collect();
                tracing::warn!("slow round: commands/trees/clients/tick us {m:?}");
            }
            let before_sleep = now_ns();
            self.wait_entered = before_sleep;
            let deadline = self.node.next_deadline();
            ready = match self.timer {
                TimerMode::Busy => {
                    std::hint::spin_loop();
                    u64::MAX
                }
                TimerMode::Timerfd => self.sleep(&timerfd, &mut wait)?,
            };
            if trace {
                let n = now_ns();
                if let Some(d) = deadline
                    && n > d + 5_000_000
                {
                    tracing::warn!(
                        "late wake: slept {} us, {} us past the deadline",
                        (n - before_sleep) / 1000,
                        (n - d) / 1000
                    );
                }
            }
        }
    }

    /// Wait for input or the node's next deadline. Which sources are readable (bit per token).
    /// The timerfd is re-armed only when the deadline moved earlier than the armed one (or none
    /// is armed): a leader's deadline moves later with every send, and a timer that fires
    /// before the deadline costs one wake-up per loop period at most, where re-arming cost a
    /// system call per send. A deadline already due polls without blocking (the sockets'
    /// state still decides what the next round reads).
    fn sleep(&mut self, timerfd: &TimerFd, w: &mut Waiter) -> io::Result<u64> {
        let deadline = self.node.next_deadline();
        let due = deadline.is_some_and(|d| d <= now_ns());
        // With no deadline, an armed timer fires once, harmlessly.
        if let Some(d) = deadline
            && !due
            && w.armed.is_none_or(|a| d < a)
        {
            let ts = TimeSpec::new(
                (d / 1_000_000_000) as nix::libc::time_t,
                (d % 1_000_000_000) as nix::libc::c_long,
            );
            timerfd.set(
                Expiration::OneShot(ts),
                TimerSetTimeFlags::TFD_TIMER_ABSTIME,
            )?;
            w.armed = Some(d);
        }
        let timeout = if due {
            PollTimeout::ZERO
        } else {
            PollTimeout::NONE
        };
        let n = match w.epoll.wait(&mut w.events, timeout) {
            Ok(n) => n,
            // A signal, or a SIGSTOP/SIGCONT (epoll_wait returns EINTR after one, whatever
            // queued meanwhile): read everything.
            Err(nix::errno::Errno::EINTR) => return Ok(u64::MAX),
            Err(e) => return Err(e.into()),
        };
        let mut ready = 0u64;
        for e in &w.events[..n] {
            ready |= bit(e.data());
        }
        if ready & bit(TOKEN_TIMER) != 0 {
            // Fired: drain its expiry count; it is no longer armed.
            let _ = timerfd.wait();
            w.armed = None;
        }
        if due {
            // A round that runs a deadline reads every tree first: a copy that arrived before
            // the deadline (after epoll answered, or on a tree it did not report) must reach
            // the node before a timeout or a window expiry does. (The round itself checks the
            // deadline again before its reads: a timer that fired at the deadline is caught
            // there, and one that fired before a deadline that moved later reads nothing more.)
            ready |= self.all_trees();
        }
        Ok(ready)
    }

    /// Read every tree socket (up to 64 datagrams each) into `into`, sorted by arrival time.
    /// Whether a socket may hold more (it gave 64).
    fn read_trees(&mut self, ready: u64, into: &mut Vec<Arrival>) -> bool {
        let mut backlog = false;
        for t in 0..self.socks.rx.len() {
            if ready & bit(t as u64) == 0 {
                continue;
            }
            // At most one batch (64) per socket and turn, in one recvmmsg.
            let got = self.rx_batch.recv(&self.socks.rx[t]).unwrap_or(0);
            // The clocks are read after the datagrams were received: read before, a stop of
            // this process in between would date datagrams that arrived during it before their
            // arrival (every stamp past `real` saturates to `mono`).
            let mono = now_ns();
            let real = realtime_ns();
            for k in 0..got {
                let Some((bytes, stamp)) = self.rx_batch.get(k) else {
                    break;
                };
                // The kernel stamps with CLOCK_REALTIME; the engine's clock is CLOCK_MONOTONIC.
                let at = stamp
                    .map(|r| mono.saturating_sub(real.saturating_sub(r)))
                    .unwrap_or(mono)
                    .clamp(self.last_input_at.min(mono), mono);
                // A drop count above the last one seen: datagrams were lost before this one.
                let drops = self.rx_batch.drops(k).unwrap_or(0);
                let overflow = drops > self.rx_drops[t];
                self.rx_drops[t] = self.rx_drops[t].max(drops);
                into.push(Arrival {
                    at,
                    tree: t as u8,
                    overflow,
                    from: self.rx_batch.source(k),
                    bytes: bytes.to_vec(),
                });
            }
            backlog |= got == self.rx_batch.capacity();
        }
        into.sort_by_key(|a| a.at);
        backlog
    }

    /// Carry out an injected stall (once).
    fn stall(&mut self, pause: std::time::Duration, what: &str) {
        self.inject_stall = None;
        tracing::warn!(
            node = self.setup.config.node_id,
            "nc-engine node {}: fault injection: stalled {} ms {what}",
            self.setup.config.node_id,
            pause.as_millis()
        );
        std::thread::sleep(pause);
    }

    fn all_trees(&self) -> u64 {
        bit(self.socks.rx.len() as u64) - 1
    }

    /// Read the tree sockets `ready` names (see `read_trees`) and feed what they held to the
    /// node in arrival order: after a stall of this process the copies count as arrived when
    /// they did (a pause is not a silent leader), and the trees' copies interleave as the
    /// network delivered them. Whether a socket may hold more.
    fn read_and_feed(&mut self, ready: u64) -> bool {
        if ready & self.all_trees() == self.all_trees() {
            self.read_all_at = now_ns();
        }
        let mut arrivals = std::mem::take(&mut self.arrivals);
        let backlog = self.read_trees(ready, &mut arrivals);
        for a in arrivals.drain(..) {
            if a.overflow {
                self.stats.rx_overflows += 1;
                let now = a.at.max(self.last_input_at);
                self.node.receive_overflow(now, a.tree, &mut self.out);
                self.carry_out(now);
            }
            self.tree_datagram(a.tree, a.from, &a.bytes, a.at);
        }
        self.arrivals = arrivals;
        backlog
    }

    /// The time at which an input that runs the node's timers (a client request, a deadline)
    /// reaches it, or None when it cannot yet. A node that is not leading first reads every
    /// tree socket after reading the clock: a copy that arrived before the present but is
    /// still queued (this process was preempted or stopped after its last read) must reach the
    /// node before a timeout or a window expiry at the present does — a follower that timed
    /// out with its leader's copies unread would lead from a log without them. A leader takes
    /// the clock (its lease is judged at the present, and `carry_out` judges it again just
    /// before copies leave), and reads the trees first only when its last read of them is older
    /// than `late_tick_slack` (it was stopped or preempted since): a successor's copies queued
    /// meanwhile must depose it at their arrival, before a lease that expired in the stall
    /// makes it step down at the present and time out through epochs on copies it has not read
    /// (the soak's lost acknowledgements). None while the sockets still hold more after a few
    /// batches (the next rounds read on).
    fn present(&mut self) -> Option<u64> {
        let now = now_ns();
        if self.node.is_leader()
            && now.saturating_sub(self.read_all_at) <= self.node.config().late_tick_slack as u64
        {
            return Some(now.max(self.last_input_at));
        }
        for _ in 0..4 {
            if !self.read_and_feed(self.all_trees()) {
                return Some(now.max(self.last_input_at));
            }
        }
        None
    }

    /// Ask the kernel whether it dropped datagrams on a tree socket since the last look; if so
    /// the node hears of it (`Node::receive_overflow`).
    /// Drops while the node was not an active follower (joining, say) are taken note of and
    /// not held against it later.
    fn check_overflow(&mut self, now: u64) {
        if self.node.is_leader() {
            return;
        }
        for t in 0..self.socks.rx.len() {
            let Some(drops) = mmsg::socket_drops(&self.socks.rx[t]) else {
                continue;
            };
            if drops > self.rx_drops[t] {
                self.rx_drops[t] = drops;
                self.stats.rx_overflows += 1;
                self.node.receive_overflow(now, t as u8, &mut self.out);
                self.carry_out(now);
            }
        }
    }

    fn tree_datagram(&mut self, tree: u8, from: Option<Ipv4Addr>, bytes: &[u8], at: u64) {
        if self.drop_tree[tree as usize] {
            self.stats.fault_drops += 1;
            return;
        }
        // Inputs reach the node in time order.
        let now = at.max(self.last_input_at);
        self.last_input_at = now;
        self.stats.last_tree_rx = Some(now);
        // Heard only from members: the source address names the member (its sender id must
        // match), anything else is dropped and counted by the node (`unauthorized`).
        let source = match from.and_then(|ip| self.setup.member_at(ip)) {
            Some(m) => Source::Member(m),
            None => Source::NotMember,
        };
        self.node
            .receive_tree_from(now, tree, source, bytes, &mut self.out);
        self.carry_out(now);
    }

    /// The first `got` datagrams of `batch`, read from the client socket together, fed at `now`
    /// (from `present`).
    fn client_datagrams(&mut self, batch: &mmsg::RecvBatch, got: usize, now: u64) {
        let now = now.max(self.last_input_at);
        let timed = self.decide_latency.is_some() && self.node.is_leader();
        let mut all = Vec::with_capacity(got);
        for k in 0..got {
            let (Some((bytes, _)), Some(from)) = (batch.get(k), batch.source_addr(k)) else {
                continue;
            };
            if let Ok((_, Packet::Request(e))) = wire::parse(bytes, self.setup.config.cluster_id) {
                self.clients.insert(e.client_id, SocketAddr::V4(from));
                if timed {
                    if self.requests_at.len() >= REQUESTS_TIMED {
                        self.requests_at.clear();
                    }
                    // A retransmission keeps its first arrival.
                    self.requests_at.entry((e.client_id, e.seq)).or_insert(now);
                }
            }
            all.push(bytes);
        }
        self.last_input_at = now;
        self.node.receive_clients(now, all, &mut self.out);
        self.carry_out(now);
    }

    /// The datagrams of one tree copy: one to the tree's group (multicast), or one to each
    /// peer's address on the tree (loopback).
    fn copy_datagrams<'a>(&self, tree: u8, packet: &'a [u8], v: &mut Vec<Datagram<'a>>) {
        let c = &self.setup.config;
        let t = tree as usize;
        let from = Some(self.socks.tree_src[t]);
        match self.setup.transport {
            Transport::Multicast => v.push(Datagram {
                payload: packet,
                to: SocketAddrV4::new(Ipv4Addr::from(c.tree_groups[t]), c.decide_port),
                from,
            }),
            Transport::Loopback => {
                for (j, n) in self.setup.nodes.iter().enumerate() {
                    if j != c.node_id as usize && j < c.node_count as usize {
                        v.push(Datagram {
                            payload: packet,
                            to: SocketAddrV4::new(n.tree_addrs[t], c.decide_port),
                            from,
                        });
                    }
                }
            }
        }
    }

    /// Send every copy of one message (a run of consecutive `Send` actions) in one sendmmsg.
    /// Whether every datagram left.
    fn send_message(&mut self, copies: &[(u8, Vec<u8>)]) -> bool {
        let mut v = Vec::with_capacity(copies.len() * self.setup.nodes.len());
        for (tree, p) in copies {
            self.copy_datagrams(*tree, p, &mut v);
        }
        // Fault injection after the first tree's copies of the N-th value message: a crash
        // (SIGKILL) or a stall before the other trees' copies leave.
        let stall = match self.inject_stall {
            Some((StallAt::BetweenCopies(n), pause)) if copies.len() > 1 => Some((n, Some(pause))),
            _ => None,
        };
        if let Some((nth, pause)) = self.crash_after_first_copy.map(|n| (n, None)).or(stall)
            && let Ok((_, Packet::Decide(d))) =
                wire::parse(&copies[0].1, self.setup.config.cluster_id)
            && d.meta.kind.is_value()
        {
            self.values_sent += 1;
            if self.values_sent == nth {
                let mut first = Vec::new();
                self.copy_datagrams(copies[0].0, &copies[0].1, &mut first);
                let _ = mmsg::send_all(&self.socks.tx, &first);
                let Some(pause) = pause else {
                    tracing::warn!(
                        node = self.setup.config.node_id,
                        "nc-engine node {}: fault injection: killed after the tree-{} copy of value message {nth}",
                        self.setup.config.node_id,
                        copies[0].0
                    );
                    let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
                    return false;
                };
                self.stall(
                    pause,
                    &format!(
                        "between the tree-{} copies of value message {nth} and the other trees'",
                        copies[0].0
                    ),
                );
                let rest = &v[first.len()..];
                return matches!(mmsg::send_all(&self.socks.tx, rest), Ok(k) if k == rest.len());
            }
        }
        if copies[0].1.get(3) == Some(&(wire::Kind::Decide as u8)) {
            return matches!(mmsg::send_all(&self.socks.tx, &v), Ok(k) if k == v.len());
        }
        // Anything else (RECOVER notices and reports) is best effort on every tree: a tree
        // that is down must not keep the others' copies from leaving.
        let mut all = true;
        let mut at = 0;
        while at < v.len() {
            match mmsg::send_all(&self.socks.tx, &v[at..]) {
                Ok(k) if at + k == v.len() => break,
                Ok(k) => {
                    all = false;
                    at += k + 1;
                }
                Err(_) => {
                    all = false;
                    at += 1;
                }
            }
        }
        all
    }

    /// Client replies, in one `sendmmsg` (each to its client's last address); a reply to an
    /// unknown client or one the kernel refused is dropped and counted.
    /// The requests these OKs answer were decided at `now`: how long after they arrived.
    fn time_decided(&mut self, now: u64, replies: &[(u32, Vec<u8>)]) {
        let Some(lat) = &self.decide_latency else {
            return;
        };
        let cluster = self.setup.config.cluster_id;
        for (_, packet) in replies {
            if let Ok((_, Packet::ReplyOk(r))) = wire::parse(packet, cluster)
                && let Some(t) = self.requests_at.remove(&(r.client_id, r.seq))
            {
                lat.observe_ns(now.saturating_sub(t));
            }
        }
    }

    fn send_replies(&mut self, replies: &[(u32, Vec<u8>)]) {
        let mut batch = Vec::with_capacity(replies.len());
        for (client_id, packet) in replies {
            match self.clients.get(client_id) {
                Some(SocketAddr::V4(to)) => batch.push(mmsg::Datagram {
                    payload: packet,
                    to: *to,
                    from: None,
                }),
                _ => {
                    self.stats.reply_unknown_client += 1;
                    self.node.output_dropped(Dropped::Reply);
                }
            }
        }
        let sent = mmsg::send_all(&self.socks.client, &batch).unwrap_or(0);
        for _ in sent..batch.len() {
            self.stats.send_errors += 1;
            self.node.output_dropped(Dropped::Reply);
        }
    }

    /// Carry out the node's actions in the order it emitted them.
    fn carry_out(&mut self, now: u64) {
        let mut sent_message = false;
        let mut logged = Vec::new();
        while !self.out.is_empty() {
            let mut out = std::mem::take(&mut self.out);
            // A message that did not leave whole is not decided by this node: its host copy
            // and OKs are dropped (proto's `copies_failed`).
            let mut failed_send = false;
            let mut actions = out.drain(..).peekable();
            while let Some(a) = actions.next() {
                match a {
                    Action::Send {
                        tree,
                        packet,
                        lease_end,
                    } => {
                        // `lease_end`: the lease this message was judged under (the same for
                        // all its copies), carried by the send, since the node may have stepped
                        // down later in the same input and no longer has one.
                        let mut copies = vec![(tree, packet)];
                        while let Some(Action::Send { .. }) = actions.peek() {
                            if let Some(Action::Send { tree, packet, .. }) = actions.next() {
                                copies.push((tree, packet));
                            }
                        }
                        let decide = copies[0].1.get(3) == Some(&(wire::Kind::Decide as u8));
                        // The lease at the present, just before the copies leave: the model
                        // judged it at the time of its input, which may be a datagram's arrival
                        // before a stall of this process. A send the followers may no longer
                        // expect does not leave at all.
                        let window = self.node.config().window();
                        let expired = || lease_end.is_some_and(|end| now_ns() + window >= end);
                        if let Some((StallAt::BeforeSend(nth), pause)) = self.inject_stall
                            && let Ok((_, Packet::Decide(d))) =
                                wire::parse(&copies[0].1, self.setup.config.cluster_id)
                            && d.meta.kind.is_value()
                        {
                            self.values_sent += 1;
                            if self.values_sent == nth {
                                self.stall(
                                    pause,
                                    "after the model's send, before its copies leave",
                                );
                            }
                        }
                        let refused = decide && expired();
                        let sent = !refused && self.send_message(&copies);
                        // And after the system call: a stall between this check and the copies
                        // leaving may have let the followers time out (the copies are out; this
                        // node does not count the message decided).
                        let late = refused || (sent && decide && expired());
                        if late {
                            self.stats.lease_late_sends += 1;
                            let past =
                                (now_ns() + window).saturating_sub(lease_end.unwrap_or(0)) / 1000;
                            tracing::warn!(
                                node = self.setup.config.node_id,
                                "nc-engine node {}: lease: {} {past} us after the lease ended (not decided here; safe exit)",
                                self.setup.config.node_id,
                                if refused {
                                    "a message held back"
                                } else {
                                    "copies left"
                                },
                            );
                        }
                        if sent && !late {
                            sent_message |= decide;
                            failed_send = false;
                        } else {
                            if !sent && !refused {
                                self.stats.send_errors += 1;
                            }
                            if decide {
                                self.stats.partial_sends += u64::from(!sent && !refused);
                                failed_send = true;
                                self.node.copies_failed(now, &mut self.out);
                            }
                        }
                    }
                    Action::Reply { .. } | Action::Deliver(_) if failed_send => {}
                    Action::Reply { client_id, packet } => {
                        // A batch's OKs (consecutive replies) leave in one sendmmsg.
                        let mut replies = vec![(client_id, packet)];
                        while let Some(Action::Reply { .. }) = actions.peek() {
                            if let Some(Action::Reply { client_id, packet }) = actions.next() {
                                replies.push((client_id, packet));
                            }
                        }
                        self.send_replies(&replies);
                        self.time_decided(now, &replies);
                    }
                    Action::Deliver(d) => {
                        if self
                            .socks
                            .host
                            .send_to(&d.packet, self.setup.host_sock())
                            .is_err()
                        {
                            self.stats.send_errors += 1;
                            self.node.output_dropped(Dropped::HostCopy);
                        }
                        if let Some(l) =
                            Logged::from_packet(&d.packet, self.setup.config.cluster_id)
                        {
                            logged.push(l);
                        }
                    }
                    Action::FilledFromKept(ds) => {
                        // Into the log as a gap fill's transfer goes (no host copies: the host
                        // has later instances already).
                        logged.extend(ds.iter().filter_map(|d| {
                            Logged::from_packet(&d.packet, self.setup.config.cluster_id)
                        }));
                        self.say(|| format!("gap filled from {} kept copies", ds.len()));
                    }
                    Action::LeaderChanged { epoch, leader } => {
                        if leader == self.setup.config.node_id && self.node.is_leader() {
                            self.stats.takeover_pending = Some(now);
                            self.stats.last_send = None;
                        }
                        self.say(|| format!("epoch {epoch}: leader is node {leader}"));
                    }
                    Action::StateChanged(s) => self.say(|| format!("state {s:?}")),
                    Action::Rejoin => {
                        // The join is driven from the loop once the node has locked on.
                        self.say(|| "rejoining through the join path".into());
                    }
                    Action::FillGap { from, instance } => self.start_fill_gap(from, instance),
                    Action::Recovered {
                        epoch,
                        leader,
                        lins,
                    } => tracing::info!(
                        node = self.setup.config.node_id,
                        epoch,
                        leader,
                        instance = lins,
                        "nc-engine node {}: recovered: epoch {epoch}, leader node {leader}, last decided {lins}",
                        self.setup.config.node_id
                    ),
                    Action::NetFault(f) => {
                        tracing::warn!(
                            node = self.setup.config.node_id,
                            "nc-engine node {}: NET-FAULT {f:?}: safe exit{}",
                            self.setup.config.node_id,
                            if self.node.recovery() {
                                "; coming back by itself (rejoin, or recovery with the others)"
                            } else {
                                ""
                            }
                        )
                    }
                    Action::Violation(v) => {
                        match v {
                            Violation::LateTick { late } => {
                                self.stats.late_tick_max_ns = self.stats.late_tick_max_ns.max(late)
                            }
                            Violation::Deposed { .. } => self.stats.deposed += 1,
                            _ => {}
                        }
                        self.say(|| format!("synchrony violation {v:?}"));
                    }
                }
            }
            drop(actions);
            if self.out.is_empty() {
                self.out = out;
            }
        }
        if sent_message {
            if self.stats.takeover_pending.take().is_some()
                && let Some(rx) = self.stats.last_tree_rx
            {
                self.stats.takeover_ns = Some(now.saturating_sub(rx));
            }
            if let Some(prev) = self.stats.last_send {
                self.stats.max_send_gap_ns = self.stats.max_send_gap_ns.max(now - prev);
            }
            self.stats.last_send = Some(now);
        }
        self.publish(logged);
    }

    /// A node that made the safe exit comes back through the join path: a thread waits until
    /// it has locked onto a stream and transfers state from a live member (the leader first).
    /// Hand new decisions to the state the other threads read. The engine thread never waits
    /// for that lock (a normal-priority reader may hold it while it copies a range): when it is
    /// busy, the decisions wait here and go with the next publish. The log keeps the newest
    /// `log_keep` instances.
    fn publish(&mut self, logged: Vec<(u64, Logged)>) {
        self.pending
            .extend(logged.into_iter().map(|(i, l)| (i, Arc::new(l))));
        let shared = self.shared.clone();
        let Ok(mut sh) = shared.try_lock() else {
            self.stats.publish_deferred += 1;
            return;
        };
        self.flush_pending(&mut sh);
    }

    fn flush_pending(&mut self, sh: &mut Shared) {
        for (i, l) in self.pending.drain(..) {
            if let Some(old) = sh.log.map.insert(i, l.clone())
                && old != l
            {
                // Never expected: the protocol decides one value per instance.
                self.stats.log_conflicts += 1;
                tracing::error!(
                    node = self.setup.config.node_id,
                    instance = i,
                    "nc-engine node {}: AGREEMENT VIOLATION: instance {i} decided again with another value",
                    self.setup.config.node_id
                );
            }
        }
        self.stats.log_truncated += sh.log.truncate_to(self.log_keep) as u64;
        self.log_len = sh.log.map.len();
        self.log_first = sh.log.map.keys().next().copied();
        sh.lins = self.node.last_decided();
        sh.timeout = self.node.config().timeout;
        sh.auth = transfer::TransferAuth::of(&self.node);
        // A recovering node serves its log up to its last instance with no gap before it
        // (another participant may be filling its gap from it).
        sh.active = matches!(self.node.state(), State::Active | State::Recovering);
    }

    fn say(&self, what: impl FnOnce() -> String) {
        if self.verbose {
            let (node, t_ns) = (self.setup.config.node_id, now_ns());
            tracing::debug!(node, t_ns, "nc-engine node {node} @{t_ns}: {}", what());
        }
    }

    fn commands(&mut self, woken: bool) {
        let mut b = [0u8; 64];
        while woken && self.wake.recv(&mut b).is_ok() {}
        while let Ok((cmd, reply)) = self.rx.try_recv() {
            if let Cmd::Join(member) = cmd {
                // Answered when the join ends.
                self.begin_join(member, reply);
                continue;
            }
            let r = self.command(cmd);
            let _ = reply.send(r);
        }
    }

    fn command(&mut self, cmd: Cmd) -> Reply {
        // Commands set state; they run no timers (a stale copy cannot be overtaken here).
        let now = now_ns();
        let r = match cmd {
            Cmd::Read(a) => self
                .node
                .read_register(a)
                .map(|v| json!(v))
                .map_err(|e| e.to_string()),
            Cmd::Write(a, v) => {
                let r = self
                    .node
                    .write_register(now, a, v, &mut self.out)
                    .map(|()| Value::Null)
                    .map_err(|e| e.to_string());
                if a == regs::addr::CTRL && v & regs::ctrl::CLEAR_COUNTERS != 0 && r.is_ok() {
                    self.stats = Stats::default();
                }
                r
            }
            Cmd::Status => Ok(self.status()),
            Cmd::Join(_) => unreachable!("answered by begin_join"),
            Cmd::Snapshot(from, r) => self.snapshot_arrived(from, r),
            Cmd::GapSnapshot(from, r) => self.gap_arrived(from, r),
            Cmd::DropTree(t, on) => {
                if t >= self.node.config().trees {
                    Err(format!(
                        "tree {t}: legal are 0..={}",
                        self.node.config().trees - 1
                    ))
                } else {
                    self.drop_tree[t as usize] = on;
                    Ok(Value::Null)
                }
            }
            Cmd::ResetStats => {
                self.stats.max_send_gap_ns = 0;
                self.stats.takeover_ns = None;
                Ok(Value::Null)
            }
            Cmd::ReloadKeys => self.reload_keys(),
        };
        self.carry_out(now);
        r
    }

    /// `soc-ctl reload-keys`: the key file again. Refused (nothing changes) when it cannot be
    /// read or lacks the key this node tags with.
    fn reload_keys(&mut self) -> Reply {
        let Some(path) = self.setup.key_file.clone() else {
            return Err("this cluster has no [auth] section: no key file to read".into());
        };
        let ring = crate::cluster::load_keys(&path).map_err(|e| e.to_string())?;
        let c = self.node.config();
        if c.auth_mode != 0 && ring.get(c.auth_key).is_none() {
            return Err(format!(
                "{}: lacks key {}, which this node tags with (auth_key): nothing changed",
                path.display(),
                c.auth_key
            ));
        }
        self.node.set_keys(ring);
        if let Ok(mut sh) = self.shared.lock() {
            sh.auth = transfer::TransferAuth::of(&self.node);
        }
        Ok(json!({ "keys": ring.ids() }))
    }

    fn recovery_status(&self) -> Value {
        let n = &self.node;
        let r = n.recovery_stats();
        json!({
            "on": n.recovery(),
            "rejoining": n.is_rejoining(),
            "rejoins_started": r.rejoins_started,
            "rejoins_done": r.rejoins_done,
            "rounds": r.rounds,
            "recoveries": r.recoveries,
            "last_outage_ns": r.last_outage,
            "max_outage_ns": r.max_outage,
            "leader_stops": r.leader_stops,
            "lease_expired": r.lease_expired,
            "start_refused": r.start_refused,
            "recover_sent": r.recover_sent,
            "recover_received": r.recover_received,
            "partial_sends": self.stats.partial_sends,
            "lease_late_sends": self.stats.lease_late_sends,
                "rx_overflows": self.stats.rx_overflows,
            "auto_joins": self.join.auto_joins,
            "gap_fills": self.join.gap_fills,
            "gaps_filled": r.gaps_filled,
            "round": n.recovery_round().map(|x| json!({
                "round": x.round,
                "candidate": x.candidate,
                "heard": x.heard,
                "votes": x.votes,
                "majority": x.majority,
                "longest": x.longest,
                "gap": x.gap,
                "waiting_for_majority": x.heard.len() < x.majority,
            })),
        })
    }

    fn status(&self) -> Value {
        let n = &self.node;
        let counters: serde_json::Map<String, Value> = Counter::ALL
            .iter()
            .map(|c| (c.name().to_string(), json!(n.counter(*c))))
            .collect();
        let log_len = self.log_len;
        json!({
            "node_id": n.config().node_id,
            "state": format!("{:?}", n.state()),
            "is_leader": n.is_leader(),
            "epoch": n.epoch(),
            "leader": n.leader(),
            "last_decided": n.last_decided(),
            "first_logged": n.first_logged(),
            "fifo_len": n.fifo_len(),
            "status_bits": n.status_bits(),
            "timeout": n.config().timeout,
            "loop_period": n.config().loop_period,
            "log_len": log_len,
            "log_first": self.log_first,
            "log_keep": self.log_keep,
            "counters": counters,
            "auth": {
                "mode": n.config().auth_mode,
                "key": n.config().auth_key,
                "keys": n.keys().ids(),
            },
            "recovery": self.recovery_status(),
            "engine": {
                "transport": self.setup.transport.to_string(),
                "timer": format!("{:?}", self.timer).to_lowercase(),
                "takeover_ns": self.stats.takeover_ns,
                "max_send_gap_ns": self.stats.max_send_gap_ns,
                "late_tick_max_ns": self.stats.late_tick_max_ns,
                "deposed": self.stats.deposed,
                "fault_drops": self.stats.fault_drops,
                "send_errors": self.stats.send_errors,
                "reply_unknown_client": self.stats.reply_unknown_client,
                "publish_deferred": self.stats.publish_deferred,
                "log_truncated": self.stats.log_truncated,
                "log_conflicts": self.stats.log_conflicts,
                "unauthorized_transfers": self.shared.lock().map_or(0, |s| s.unauthorized_transfers),
            }
        })
    }
}
