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
    /// When the source was last read on while a backlog was applied ([`Feed::take_kept`]).
    last_drain: Option<Instant>,
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

/// While a backlog is applied, the source is read on at most this often, at most
/// [`DRAIN_MAX`] decisions at a time.
const DRAIN_EVERY: Duration = Duration::from_millis(1);
const DRAIN_MAX: usize = 4096;

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
            last_drain: None,
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
        if let Some(l) = self.take_kept(want) {
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
        if let Some(l) = self.take_kept(want) {
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

    /// Run `transfer` (taking and installing a snapshot from a peer, which takes as long as the
    /// dataset is large) and meanwhile keep, on a thread of its own, the host copies that
    /// arrive. Under load the XDP log and the engine's log cover only so many instances (1,024
    /// slots; `--log-keep`): a replica that ignored its feed for the transfer's duration would
    /// find both past the snapshot's instance and need another transfer, then another, never
    /// catching up. What is kept here follows the snapshot (taken after the keeping began),
    /// and whatever lies between the two the engine's log repairs. At most [`AHEAD_MAX`]
    /// instances are kept. `transfer` runs on the calling thread: a server it starts (with
    /// `PDEATHSIG`, which follows the thread that started it) lives as long as that thread.
    pub fn while_transferring<T>(&mut self, transfer: impl FnOnce() -> T) -> T {
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let keeper = s.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::Acquire) {
                    self.keep_arrivals(Duration::from_millis(5));
                }
            });
            // Set when `transfer` returns or unwinds (the scope waits for the keeper).
            struct Done<'a>(&'a std::sync::atomic::AtomicBool);
            impl Drop for Done<'_> {
                fn drop(&mut self) {
                    self.0.store(true, std::sync::atomic::Ordering::Release);
                }
            }
            let t = {
                let _done = Done(&done);
                transfer()
            };
            if let Err(p) = keeper.join() {
                std::panic::resume_unwind(p);
            }
            t
        })
    }

    /// Keep what arrives within about `wait`, in order, wherever the source is: a position the
    /// XDP log no longer holds moves to the oldest one it holds. A hole below what arrived
    /// (lost host copies) is repaired from the engine's log at once, while it still holds
    /// them. Whether anything was read.
    fn keep_arrivals(&mut self, wait: Duration) -> bool {
        if self.ahead.len() >= AHEAD_MAX {
            std::thread::sleep(wait);
            return false;
        }
        let cluster = self.cluster;
        let got = match &mut self.source {
            Source::Udp(_) => match self.receive(0, wait) {
                Some(Arrived::Instance(i, l)) => Some((i, l)),
                _ => None,
            },
            Source::Xdp(log) => match log.next_timeout(wait) {
                Ok(Some(d)) => {
                    self.stats.received += 1;
                    Logged::from_packet(&d.packet, cluster).map(|(i, l)| (i, Arc::new(l)))
                }
                Ok(None) => None,
                // Lapped (resume at the oldest instance held) or missed (resume after it:
                // the engine's log repairs it later).
                Err(xdp_log::LogError::Gap {
                    expected,
                    oldest_available,
                }) => {
                    log.seek(oldest_available.unwrap_or(0).max(expected + 1));
                    return true;
                }
                Err(xdp_log::LogError::Corrupt { instance, .. }) => {
                    log.seek(instance + 1);
                    return true;
                }
                Err(_) => {
                    std::thread::sleep(wait);
                    None
                }
            },
        };
        let Some((i, l)) = got else {
            return false;
        };
        let below = self.ahead.range(..i).next_back().map(|(k, _)| *k);
        self.ahead.insert(i, l);
        if let Some(b) = below
            && b + 1 < i
            && self.engine.is_some()
            && let Ok(got) = self.ask_engine(b + 1, i - 1)
        {
            let added = self.keep_from_engine(got.log, b + 1, i - 1);
            self.count_repair(added);
        }
        true
    }

    /// `want` if it was kept; while more is kept behind it (a backlog after a transfer or a
    /// gap), the source is read on too (at most every millisecond, without waiting), so that
    /// the XDP ring does not lap and lost copies are repaired while the engine holds them.
    fn take_kept(&mut self, want: u64) -> Option<Arc<Logged>> {
        let l = self.ahead.remove(&want)?;
        if !self.ahead.is_empty() && self.last_drain.is_none_or(|t| t.elapsed() >= DRAIN_EVERY) {
            for _ in 0..DRAIN_MAX {
                if !self.keep_arrivals(Duration::ZERO) {
                    break;
                }
            }
            self.last_drain = Some(Instant::now());
        }
        Some(l)
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
        let first = got.first;
        let added = self.keep_from_engine(got.log, from, to);
        if let Some(l) = self.ahead.remove(&from) {
            self.count_repair(added);
            return Next::Decision(from, l);
        }
        // The engine lacks `from`: truncated or joined after it (a state transfer is needed),
        // or not decided there yet (a host copy can overtake the engine's publish: wait).
        if hole || first.is_some_and(|f| f > from) || self.ahead.len() > AHEAD_MAX {
            return self.confirm_behind(from, to);
        }
        Next::Idle
    }

    /// The engine's log lacked `from`. An engine that is joining again merges what it missed
    /// into its log when the join completes: until it is an active member its log can show a
    /// hole that closes, and the join can complete between the log's answer and a status
    /// asked after it. So: the engine settled (active, not rejoining), then its log asked
    /// again, then the same settled status (no safe exit or rejoin in between). Only a hole
    /// seen inside that is a lost instance ([`Next::Behind`]).
    fn confirm_behind(&mut self, from: u64, to: u64) -> Next {
        let Some(before) = self.engine_settled() else {
            return Next::Idle;
        };
        let Ok(got) = self.ask_engine(from, to) else {
            return Next::Idle;
        };
        let first = got.first;
        let added = self.keep_from_engine(got.log, from, to);
        if let Some(l) = self.ahead.remove(&from) {
            self.count_repair(added);
            return Next::Decision(from, l);
        }
        if self.engine_settled() != Some(before) {
            return Next::Idle;
        }
        self.stats.unrepairable += 1;
        Next::Behind {
            need: from,
            engine_first: first,
        }
    }

    /// Keep the instances `from..=to` of what the engine's log answered; how many were new.
    fn keep_from_engine(&mut self, log: soc_ctl::log::DecisionLog, from: u64, to: u64) -> u64 {
        let mut added = 0;
        for (i, l) in log.map.range(from..=to) {
            added += u64::from(self.ahead.insert(*i, l.clone()).is_none());
        }
        added
    }

    /// One repair, if it brought instances.
    fn count_repair(&mut self, added: u64) {
        if added > 0 {
            self.stats.repairs += 1;
            self.stats.repaired += added;
        }
    }

    /// The engine is an active member, not coming back from a safe exit: its epoch and the
    /// counts of its rejoins and recoveries (which change when it leaves and comes back), or
    /// `None` when it is not settled or cannot be asked.
    fn engine_settled(&mut self) -> Option<(u64, u64, u64)> {
        let bus = self.bus.as_mut()?;
        match bus.request("status") {
            Ok(v) if v["state"] == "Active" && v["recovery"]["rejoining"] != true => Some((
                v["epoch"].as_u64()?,
                v["recovery"]["rejoins_started"].as_u64()?,
                v["recovery"]["recoveries"].as_u64()?,
            )),
            Ok(_) => None,
            Err(_) => {
                self.bus = None;
                None
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

#[cfg(test)]
mod tests {
    use super::*;
    use proto::wire::DecideKind;
    use serde_json::{Value, json};
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixListener;

    fn logged(i: u64) -> Arc<Logged> {
        Arc::new(Logged {
            kind: DecideKind::Batch,
            count: 0,
            entries: i.to_be_bytes().to_vec(),
        })
    }

    /// The answer to `decisions FROM TO` from a log holding `held`.
    fn decisions(held: &[u64], from: u64) -> Value {
        let range: Vec<_> = held
            .iter()
            .filter(|i| **i >= from)
            .map(|i| (*i, logged(*i)))
            .collect();
        json!({
            "first": held.first(),
            "last": held.last(),
            "count": range.len(),
            "hex": soc_ctl::log::to_hex(&soc_ctl::log::encode(&range)),
        })
    }

    fn status(state: &str, rejoining: bool, rejoins: u64) -> Value {
        json!({
            "state": state,
            "epoch": 4,
            "recovery": { "rejoining": rejoining, "rejoins_started": rejoins, "recoveries": 1 },
        })
    }

    /// A feed whose engine is a control socket answering the scripted `decisions` and `status`
    /// answers in turn (the last one repeats), and the number of requests of each.
    fn feed_with_engine(
        dir: &std::path::Path,
        logs: Vec<Value>,
        statuses: Vec<Value>,
    ) -> (Feed, std::thread::JoinHandle<(usize, usize)>) {
        feed_with_engine_fn(dir, move |n| logs[n.min(logs.len() - 1)].clone(), statuses)
    }

    /// [`feed_with_engine`] with the `n`-th `decisions` answer (from 0) given by `log`.
    fn feed_with_engine_fn(
        dir: &std::path::Path,
        mut log: impl FnMut(usize) -> Value + Send + 'static,
        statuses: Vec<Value>,
    ) -> (Feed, std::thread::JoinHandle<(usize, usize)>) {
        let path = dir.join("ctl");
        let l = UnixListener::bind(&path).unwrap();
        let engine = std::thread::spawn(move || {
            let (s, _) = l.accept().unwrap();
            let mut w = s.try_clone().unwrap();
            let (mut nd, mut ns) = (0, 0);
            for line in BufReader::new(s).lines() {
                let line = line.unwrap();
                let ok = if line.starts_with("decisions") {
                    nd += 1;
                    log(nd - 1)
                } else {
                    assert_eq!(line, "status");
                    ns += 1;
                    statuses[(ns - 1).min(statuses.len() - 1)].clone()
                };
                writeln!(w, "{}", json!({ "ok": ok })).unwrap();
            }
            (nd, ns)
        });
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        (Feed::new(Source::Udp(udp), 1, Some(path)), engine)
    }

    /// The replica applied 2; no host copy comes, so the feed asks the engine for 3 on.
    fn next_after_2(feed: &mut Feed) -> Next {
        feed.next(2, Duration::from_millis(1))
    }

    /// The feed hands out `from..=to` in order (the replica applied `from - 1`).
    fn decisions_in_order(feed: &mut Feed, from: u64, to: u64) -> Vec<Arc<Logged>> {
        (from..=to)
            .map(|i| match feed.next(i - 1, Duration::from_millis(1)) {
                Next::Decision(n, l) if n == i => l,
                other => panic!("instance {i}: {other:?}"),
            })
            .collect()
    }

    /// A host copy of instance `i` (one request whose payload is `i`).
    fn host_copy(i: u64) -> Vec<u8> {
        use proto::wire::{Decide, DecideMeta, Entry, Packet};
        let payload = i.to_be_bytes();
        let e = Entry {
            client_id: 7,
            seq: i,
            flags: 0,
            payload: &payload,
        };
        let mut raw = vec![0u8; e.wire_len()];
        proto::wire::emit_entries([e].iter(), &mut raw).unwrap();
        let meta = DecideMeta {
            instance: i,
            epoch: 0,
            msg_seq: i as u32,
            tree: 0,
            kind: DecideKind::Batch,
        };
        Packet::Decide(Decide {
            meta,
            count: 1,
            entries_raw: &raw,
        })
        .to_vec(1, 0)
        .unwrap()
    }

    #[test]
    fn host_copies_arriving_during_a_transfer_are_kept_for_after_it() {
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = udp.local_addr().unwrap();
        // No engine: a gap could only be filled by another transfer.
        let mut feed = Feed::new(Source::Udp(udp), 1, None);
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        // The transfer installs a snapshot of instance 104 while 100..=110 arrive.
        let snapshot = feed.while_transferring(|| {
            for i in 100..=110 {
                tx.send_to(&host_copy(i), to).unwrap();
            }
            std::thread::sleep(Duration::from_millis(100));
            104
        });
        // Nothing arrives after it: 105..=110 come from what was kept, in order.
        for (l, i) in decisions_in_order(&mut feed, snapshot + 1, 110)
            .iter()
            .zip(105..)
        {
            assert_eq!(l.requests(), vec![(7, i)]);
        }
        assert!(matches!(
            feed.next(110, Duration::from_millis(1)),
            Next::Idle
        ));
        assert_eq!(feed.stats.received, 11);
    }

    #[test]
    fn a_copy_lost_during_a_transfer_is_repaired_from_the_engine_at_once() {
        let dir = tempfile::tempdir().unwrap();
        // The engine's log holds 100..=110 now; asked later it would hold 109 on only (its
        // log is short and moves on): the keeper must ask while it still holds 103.
        let moved_on = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (mut feed, engine) = feed_with_engine_fn(
            dir.path(),
            {
                let moved_on = moved_on.clone();
                move |_| {
                    if moved_on.load(std::sync::atomic::Ordering::SeqCst) {
                        decisions(&[109, 110], 103)
                    } else {
                        decisions(&(100..=110).collect::<Vec<_>>(), 103)
                    }
                }
            },
            vec![status("Active", false, 1)],
        );
        let Source::Udp(s) = &feed.source else {
            unreachable!()
        };
        let to = s.local_addr().unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let snapshot = feed.while_transferring(|| {
            for i in (100..=110).filter(|i| *i != 103) {
                tx.send_to(&host_copy(i), to).unwrap();
            }
            std::thread::sleep(Duration::from_millis(100));
            moved_on.store(true, std::sync::atomic::Ordering::SeqCst);
            101
        });
        decisions_in_order(&mut feed, snapshot + 1, 110);
        assert_eq!((feed.stats.repairs, feed.stats.repaired), (1, 1));
        drop(feed);
        assert_eq!(engine.join().unwrap(), (1, 0));
    }

    #[test]
    fn a_hole_that_a_join_closes_while_the_feed_looks_is_not_a_lost_instance() {
        let dir = tempfile::tempdir().unwrap();
        // The first answer shows the rejoining engine's hole (it locked onto the stream at 5);
        // the join completes before the status is asked: the log holds 3 and 4 by then.
        let (mut feed, engine) = feed_with_engine(
            dir.path(),
            vec![decisions(&[5, 6], 3), decisions(&[3, 4, 5, 6], 3)],
            vec![status("Active", false, 1)],
        );
        match next_after_2(&mut feed) {
            Next::Decision(3, l) => assert_eq!(l, logged(3)),
            other => panic!("expected instance 3, got {other:?}"),
        }
        decisions_in_order(&mut feed, 4, 6);
        assert_eq!(feed.stats.unrepairable, 0);
        drop(feed);
        assert_eq!(engine.join().unwrap(), (2, 1));
    }

    #[test]
    fn a_hole_in_a_settled_engine_is_a_lost_instance() {
        let dir = tempfile::tempdir().unwrap();
        let (mut feed, engine) = feed_with_engine(
            dir.path(),
            vec![decisions(&[5, 6], 3)],
            vec![status("Active", false, 1)],
        );
        match next_after_2(&mut feed) {
            Next::Behind {
                need: 3,
                engine_first: Some(5),
            } => {}
            other => panic!("expected Behind at 3, got {other:?}"),
        }
        assert_eq!(feed.stats.unrepairable, 1);
        drop(feed);
        assert_eq!(engine.join().unwrap(), (2, 2));
    }

    #[test]
    fn a_hole_in_an_engine_that_is_not_settled_is_waited_for() {
        for statuses in [
            // Joining, or rejoining after a safe exit: the join merges the hole.
            vec![status("Joining", false, 0)],
            vec![status("Active", true, 1)],
            // Settled, then a safe exit and a rejoin between the two looks.
            vec![status("Active", false, 1), status("Active", false, 2)],
        ] {
            let dir = tempfile::tempdir().unwrap();
            let (mut feed, engine) =
                feed_with_engine(dir.path(), vec![decisions(&[5, 6], 3)], statuses);
            let got = next_after_2(&mut feed);
            assert!(matches!(got, Next::Idle), "{got:?}");
            assert_eq!(feed.stats.unrepairable, 0);
            drop(feed);
            engine.join().unwrap();
        }
    }
}
