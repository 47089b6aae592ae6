//! The decision feed of a replica: decided instances in order, with every gap repaired.
//!
//! Host copies travel one way (UDP to the host port, or the XDP decision log) and can be lost:
//! under load a socket buffer overflows, the XDP ring laps a slow reader. A lost copy is not
//! the end of a replica: the feed notices the gap (a later instance arrived, the XDP log
//! reports it, or the feed went quiet while the engine's log moved on) and fetches the missing
//! instances from the node's own engine (`decisions FROM TO` on its control socket). Only when
//! the engine no longer holds them (its log is bounded, or it joined after them) does the feed
//! answer [`Next::Behind`]: the application then needs a state transfer from a peer.

use std::collections::BTreeMap;
use std::net::UdpSocket;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use proto::log::Logged;
use proto::wire::{self, Packet};
use soc_ctl::regfile::{EngineBus, RegAccessError};

/// Where host copies come from.
pub enum Source {
    /// The XDP decision log pinned under bpffs (xdp-log attached to the host interface).
    Xdp(Box<xdp_log::DecisionLog>),
    /// A plain UDP socket bound to the host address and port (without root or XDP).
    Udp(UdpSocket),
}

/// What [`Feed::next`] found.
#[derive(Debug)]
pub enum Next {
    /// The next instance.
    Decision(u64, Arc<Logged>),
    /// Nothing new within the wait.
    Idle,
    /// Instance `need` is lost for this node: the engine's log no longer holds it (or there is
    /// no engine to ask). The application must install a snapshot from a peer.
    Behind {
        /// The first instance the replica lacks.
        need: u64,
        /// The oldest instance the engine still holds, if it was asked.
        engine_first: Option<u64>,
    },
}

/// Counters of the feed (shown in `INFO nanoconsensus`).
#[derive(Clone, Copy, Debug, Default)]
pub struct FeedStats {
    /// Host copies received.
    pub received: u64,
    /// Gaps found in the host copies.
    pub gaps: u64,
    /// Repairs: fetches from the engine's log that returned missing instances.
    pub repairs: u64,
    /// Instances obtained by repairs.
    pub repaired: u64,
    /// Gaps the engine could not fill (a state transfer was needed).
    pub unrepairable: u64,
}

/// The feed: a source of host copies, the engine to repair gaps from, and what arrived early.
pub struct Feed {
    source: Source,
    cluster: u32,
    engine: Option<PathBuf>,
    bus: Option<EngineBus>,
    /// Decisions that arrived (or were fetched) ahead of the next one.
    ahead: BTreeMap<u64, Arc<Logged>>,
    /// When the engine was last asked while the feed was quiet.
    last_idle_check: Option<Instant>,
    /// How often a quiet feed asks the engine whether it missed something.
    idle_check: Duration,
    buf: Vec<u8>,
    /// The UDP source's receive timeout as last set (set again only when the wait changes: the
    /// apply loop always waits the same, and a `setsockopt` per decision showed in `strace`).
    udp_timeout: Option<Duration>,
    /// Counters.
    pub stats: FeedStats,
}

/// More than this many early decisions kept means the gap will not close by itself.
const AHEAD_MAX: usize = 100_000;

impl Feed {
    /// A feed from `source`; gaps are repaired from the engine whose control socket is `engine`
    /// (without one, every gap needs a state transfer).
    pub fn new(source: Source, cluster: u32, engine: Option<PathBuf>) -> Feed {
        Feed {
            source,
            cluster,
            engine,
            bus: None,
            ahead: BTreeMap::new(),
            last_idle_check: None,
            idle_check: Duration::from_millis(20),
            buf: vec![0u8; 65536],
            udp_timeout: None,
            stats: FeedStats::default(),
        }
    }

    /// The next decided instance after `applied`, waiting at most about `wait`.
    pub fn next(&mut self, applied: u64, wait: Duration) -> Next {
        let want = applied + 1;
        // Early arrivals at or below `applied` are stale (a snapshot covered them).
        while self.ahead.first_key_value().is_some_and(|(i, _)| *i < want) {
            self.ahead.pop_first();
        }
        if let Some(l) = self.ahead.remove(&want) {
            return Next::Decision(want, l);
        }
        match self.receive(want, wait) {
            Some(Arrived::Instance(i, l)) if i == want => Next::Decision(i, l),
            Some(Arrived::Instance(i, l)) if i > want => {
                self.ahead.insert(i, l);
                self.stats.gaps += 1;
                self.repair(want, i - 1)
            }
            Some(Arrived::Instance(..)) => Next::Idle, // a duplicate of an applied instance
            Some(Arrived::Gap) => {
                self.stats.gaps += 1;
                self.repair(want, u64::MAX)
            }
            None => {
                // Quiet: the last copies before a pause may be the lost ones.
                let due = self
                    .last_idle_check
                    .is_none_or(|t| t.elapsed() >= self.idle_check);
                if due && self.engine.is_some() {
                    self.last_idle_check = Some(Instant::now());
                    return self.repair(want, u64::MAX);
                }
                Next::Idle
            }
        }
    }

    /// The next instance (`applied + 1`) if it is already here, without waiting and without
    /// asking the engine: the apply loop takes every decision that is ready and applies them
    /// in one pipelined write. Anything else (a later instance, a gap) is left to [`Feed::next`].
    pub fn next_ready(&mut self, applied: u64) -> Option<(u64, Arc<Logged>)> {
        let want = applied + 1;
        if let Some(l) = self.ahead.remove(&want) {
            return Some((want, l));
        }
        let cluster = self.cluster;
        let (i, l) = match &mut self.source {
            Source::Udp(s) => {
                use std::os::fd::AsRawFd;
                let n = nix::sys::socket::recv(
                    s.as_raw_fd(),
                    &mut self.buf,
                    nix::sys::socket::MsgFlags::MSG_DONTWAIT,
                )
                .ok()?;
                let packet = &self.buf[..n];
                match wire::parse(packet, cluster) {
                    Ok((_, Packet::Decide(d))) if d.meta.kind.is_value() => {
                        self.stats.received += 1;
                        Logged::from_packet(packet, cluster)?
                    }
                    _ => return None,
                }
            }
            Source::Xdp(log) => {
                if log.next_instance() != Some(want) {
                    return None;
                }
                let d = log.try_next().ok()??;
                self.stats.received += 1;
                Logged::from_packet(&d.packet, cluster)?
            }
        };
        let l = Arc::new(l);
        if i == want {
            return Some((i, l));
        }
        if i > want {
            self.ahead.insert(i, l);
        }
        None
    }

    fn receive(&mut self, want: u64, wait: Duration) -> Option<Arrived> {
        let cluster = self.cluster;
        match &mut self.source {
            Source::Udp(s) => {
                let t = wait.max(Duration::from_micros(100));
                if self.udp_timeout != Some(t) && s.set_read_timeout(Some(t)).is_ok() {
                    self.udp_timeout = Some(t);
                }
                let n = s.recv(&mut self.buf).ok()?;
                let packet = &self.buf[..n];
                match wire::parse(packet, cluster) {
                    Ok((_, Packet::Decide(d))) if d.meta.kind.is_value() => {
                        self.stats.received += 1;
                        let (i, l) = Logged::from_packet(packet, cluster)?;
                        Some(Arrived::Instance(i, Arc::new(l)))
                    }
                    _ => None,
                }
            }
            Source::Xdp(log) => {
                if log.next_instance() != Some(want) {
                    log.seek(want);
                }
                match log.next_timeout(wait) {
                    Ok(Some(d)) => {
                        self.stats.received += 1;
                        let (i, l) = Logged::from_packet(&d.packet, cluster)?;
                        Some(Arrived::Instance(i, Arc::new(l)))
                    }
                    Ok(None) => None,
                    // A missed instance, a corrupt slot: the engine's log has the decision.
                    Err(_) => Some(Arrived::Gap),
                }
            }
        }
    }

    /// Fetch `from..=to` from the engine; the next decision if it came.
    fn repair(&mut self, from: u64, to: u64) -> Next {
        if self.engine.is_none() {
            self.stats.unrepairable += 1;
            return Next::Behind {
                need: from,
                engine_first: None,
            };
        }
        let got = match self.ask_engine(from, to) {
            Ok(d) => d,
            // The engine is unreachable (restarting, killed): nothing to do but wait; the
            // application shows the engine's state to its clients.
            Err(_) => return Next::Idle,
        };
        // The engine holds later instances but not `from`: a hole in its log (it rejoined).
        let hole = got
            .log
            .map
            .first_key_value()
            .is_some_and(|(i, _)| *i > from);
        let mut added = 0;
        for (i, l) in got.log.map {
            if i >= from {
                added += u64::from(self.ahead.insert(i, l).is_none());
            }
        }
        if let Some(l) = self.ahead.remove(&from) {
            if added > 0 {
                self.stats.repairs += 1;
                self.stats.repaired += added;
            }
            return Next::Decision(from, l);
        }
        // The engine lacks `from`: truncated or joined after it (a state transfer is needed),
        // or not decided there yet (a host copy can overtake the engine's publish: wait).
        if hole || got.first.is_some_and(|f| f > from) || self.ahead.len() > AHEAD_MAX {
            // An engine that is joining again merges what it missed into its log when the join
            // completes: until it is an active member, its log can show a hole that closes.
            if !self.engine_active() {
                return Next::Idle;
            }
            self.stats.unrepairable += 1;
            return Next::Behind {
                need: from,
                engine_first: got.first,
            };
        }
        Next::Idle
    }

    /// The engine is an active member, not coming back from a safe exit.
    fn engine_active(&mut self) -> bool {
        let Some(bus) = self.bus.as_mut() else {
            return false;
        };
        match bus.request("status") {
            Ok(v) => v["state"] == "Active" && v["recovery"]["rejoining"] != true,
            Err(_) => {
                self.bus = None;
                false
            }
        }
    }

    fn ask_engine(&mut self, from: u64, to: u64) -> Result<soc_ctl::regfile::Decisions, ()> {
        if self.bus.is_none() {
            let path = self.engine.as_ref().ok_or(())?;
            self.bus = Some(EngineBus::connect(path).map_err(drop)?);
        }
        let bus = self.bus.as_mut().ok_or(())?;
        match bus.decisions(from, to) {
            Ok(d) => Ok(d),
            Err(RegAccessError::Io(_)) | Err(RegAccessError::Refused(_)) => {
                self.bus = None;
                Err(())
            }
        }
    }
}

enum Arrived {
    Instance(u64, Arc<Logged>),
    Gap,
}
