//! A Nano-consensus client over UDP: sends REQUESTs to the leader, follows NOT_LEADER redirects,
//! retransmits the same (client id, seq) on silence (the application's apply step makes that
//! idempotent), and a pipelined load generator that measures request → OK latency.

use std::collections::BTreeMap;
use std::io;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use proto::wire::{self, Entry, Packet};

use crate::cluster::ClientAuth;

/// A decided request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ok {
    /// The instance that decided it.
    pub instance: u64,
    /// Its index in that instance's batch.
    pub index: u16,
}

/// A client of one cluster.
pub struct Client {
    sock: UdpSocket,
    cluster_id: u32,
    /// Client id (distinguishes its requests from everyone else's).
    pub client_id: u32,
    nodes: Vec<SocketAddrV4>,
    /// Index of the node believed to lead.
    pub leader: usize,
    next_seq: u64,
    /// Retransmit after this much silence.
    pub retry_after: Duration,
    /// Tag requests and check replies (`[auth]` of cluster.toml); None: untagged requests, and
    /// replies are taken without checking a tag.
    auth: Option<ClientAuth>,
    /// Replies refused: a wrong or missing tag.
    pub unauthorized: u64,
    /// The socket's read timeout as last set (setting it is a system call; most requests wait
    /// with the same one as the request before).
    read_timeout: Option<Duration>,
}

impl Client {
    /// A client that knows every node's client address.
    pub fn new(cluster_id: u32, client_id: u32, nodes: Vec<SocketAddrV4>) -> io::Result<Client> {
        let sock = UdpSocket::bind("0.0.0.0:0")?;
        Ok(Client {
            sock,
            cluster_id,
            client_id,
            nodes,
            leader: 0,
            next_seq: 1,
            retry_after: Duration::from_millis(50),
            auth: None,
            unauthorized: 0,
            read_timeout: None,
        })
    }

    /// Tag requests with `auth`'s key and accept only replies it verifies
    /// (`ClusterFile::client_auth`).
    pub fn with_auth(mut self, auth: Option<ClientAuth>) -> Client {
        self.auth = auth;
        self
    }

    /// A reply this client accepts: it parses and, with auth, carries a good tag (untagged ones
    /// only while tags are not required).
    fn accept<'a>(&mut self, bytes: &'a [u8]) -> Option<Packet<'a>> {
        let (_, p) = wire::parse(bytes, self.cluster_id).ok()?;
        if let Some(a) = &self.auth
            && proto::auth::verify(bytes, &a.keys, a.required).is_err()
        {
            self.unauthorized += 1;
            return None;
        }
        Some(p)
    }

    /// The sequence number of the last request submitted.
    pub fn last_seq(&self) -> u64 {
        self.next_seq - 1
    }

    fn send(&self, seq: u64, flags: u8, payload: &[u8]) -> io::Result<()> {
        let p = Packet::Request(Entry {
            client_id: self.client_id,
            seq,
            flags,
            payload,
        })
        .to_vec(self.cluster_id, wire::SENDER_NONE)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{e:?}")))?;
        let mut p = p;
        if let Some(a) = &self.auth {
            proto::auth::seal_vec(&mut p, &a.keys, a.key)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        }
        self.sock.send_to(&p, self.nodes[self.leader])?;
        Ok(())
    }

    fn follow(&mut self, leader: u8) {
        if (leader as usize) < self.nodes.len() {
            self.leader = leader as usize;
        } else {
            // No leader known to that node: try the next one.
            self.leader = (self.leader + 1) % self.nodes.len();
        }
    }

    /// The socket replies arrive on (an event loop driving [`Client::submit`]ted requests waits
    /// for it to be readable).
    pub fn socket(&self) -> &UdpSocket {
        &self.sock
    }

    /// Send a request without waiting for it. The caller drives it: [`Client::poll`] when the
    /// socket is readable, [`Client::on_time`] by [`Client::due`]. The same resends and
    /// redirects as [`Client::request`], which is built on the same steps.
    pub fn submit(&mut self, flags: u8, payload: Vec<u8>) -> io::Result<InFlight> {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.send(seq, flags, &payload)?;
        let now = Instant::now();
        Ok(InFlight {
            seq,
            flags,
            payload,
            t0: now,
            sent: now,
            resend_at: None,
        })
    }

    /// A datagram for `f`: its decision, or None (a redirect schedules a resend).
    fn on_reply(&mut self, f: &mut InFlight, bytes: &[u8]) -> Option<Ok> {
        match self.accept(bytes) {
            Some(Packet::ReplyOk(r)) if r.seq == f.seq && r.client_id == self.client_id => {
                Some(Ok {
                    instance: r.instance,
                    index: r.index,
                })
            }
            Some(Packet::ReplyNotLeader(r)) if r.seq == f.seq => {
                self.follow(r.leader);
                // Resent after a short pause: the new leader may still be taking over.
                f.resend_at = Some(Instant::now() + REDIRECT_PAUSE);
                None
            }
            _ => None,
        }
    }

    /// When `f` needs [`Client::on_time`] at the latest.
    pub fn due(&self, f: &InFlight, give_up: Duration) -> Instant {
        f.resend_at
            .unwrap_or(f.sent + self.retry_after)
            .min(f.t0 + give_up)
    }

    /// Resend `f` if its time came (a redirect's pause is over, or `retry_after` passed in
    /// silence: then to the next node, the leader may be gone); an error once `give_up` has
    /// passed since it was submitted.
    pub fn on_time(&mut self, f: &mut InFlight, give_up: Duration) -> io::Result<()> {
        let now = Instant::now();
        if now.duration_since(f.t0) > give_up {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("request seq {} not decided within {give_up:?}", f.seq),
            ));
        }
        match f.resend_at {
            Some(at) if now >= at => f.resend_at = None,
            Some(_) => return Ok(()),
            None if now.duration_since(f.sent) >= self.retry_after => {
                self.leader = (self.leader + 1) % self.nodes.len();
            }
            None => return Ok(()),
        }
        self.send(f.seq, f.flags, &f.payload)?;
        f.sent = Instant::now();
        Ok(())
    }

    /// Read what the socket holds without waiting: `f`'s decision once it came.
    pub fn poll(&mut self, f: &mut InFlight) -> io::Result<Option<Ok>> {
        self.drain(|c, bytes| c.on_reply(f, bytes))
    }

    /// Read and drop what the socket holds (late replies while nothing is in flight), without
    /// waiting.
    pub fn discard(&mut self) -> io::Result<()> {
        self.drain(|_, _| None).map(|_| ())
    }

    /// Hand each datagram the socket holds to `each` until it returns a decision or the socket
    /// is empty (no waiting).
    fn drain(
        &mut self,
        mut each: impl FnMut(&mut Client, &[u8]) -> Option<Ok>,
    ) -> io::Result<Option<Ok>> {
        use std::os::fd::AsRawFd;
        let mut buf = [0u8; 2048];
        loop {
            match nix::sys::socket::recv(
                self.sock.as_raw_fd(),
                &mut buf,
                nix::sys::socket::MsgFlags::MSG_DONTWAIT,
            ) {
                Ok(n) => {
                    if let Some(ok) = each(self, &buf[..n]) {
                        return Ok(Some(ok));
                    }
                }
                Err(nix::errno::Errno::EAGAIN) => return Ok(None),
                Err(nix::errno::Errno::EINTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Submit one request and wait until it is decided (or `give_up` passes).
    pub fn request(&mut self, flags: u8, payload: &[u8], give_up: Duration) -> io::Result<Ok> {
        let mut f = self.submit(flags, payload.to_vec())?;
        let mut buf = [0u8; 2048];
        loop {
            self.on_time(&mut f, give_up)?;
            // Until the next step is due; a wait of a whole `retry_after` while at most half
            // of it is left (the common case: the first wait of a request) keeps the timeout
            // already set, so a resend may come up to half a `retry_after` late.
            let left = self
                .due(&f, give_up)
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1));
            let timeout = if left >= self.retry_after / 2 {
                self.retry_after
            } else {
                left
            };
            if self.read_timeout != Some(timeout) {
                self.sock.set_read_timeout(Some(timeout))?;
                self.read_timeout = Some(timeout);
            }
            match self.sock.recv_from(&mut buf) {
                Ok((n, _)) => {
                    if let Some(ok) = self.on_reply(&mut f, &buf[..n]) {
                        return Ok(ok);
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// How long a request redirected by NOT_LEADER waits before it is resent.
const REDIRECT_PAUSE: Duration = Duration::from_millis(1);

/// A request sent by [`Client::submit`], not decided yet.
#[derive(Debug)]
pub struct InFlight {
    seq: u64,
    flags: u8,
    payload: Vec<u8>,
    t0: Instant,
    sent: Instant,
    /// A redirect asked for a resend at this time.
    resend_at: Option<Instant>,
}

impl InFlight {
    /// Its sequence number (the client's id and this make its exactly-once key).
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

/// Result of a load run.
#[derive(Debug)]
pub struct LoadReport {
    /// Requests decided (OK received).
    pub decided: u64,
    /// Retransmissions (after silence or a redirect).
    pub retransmits: u64,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Request → OK latency in ns (first send of a seq to its OK).
    pub latency: Histogram<u64>,
    /// (instance, index) → (client id, seq) of every OK (for agreement checks).
    pub oks: BTreeMap<(u64, u16), (u32, u64)>,
    /// The longest time without any OK while requests were outstanding (a failover shows here).
    pub max_ok_gap: Duration,
}

impl LoadReport {
    /// Decided requests per second.
    pub fn rate(&self) -> f64 {
        self.decided as f64 / self.elapsed.as_secs_f64()
    }

    /// One line of percentiles in µs.
    pub fn summary(&self) -> String {
        let us = |q: f64| self.latency.value_at_quantile(q) as f64 / 1000.0;
        format!(
            "{} decided in {:.2} s = {:.0}/s, {} retransmits; latency µs p50 {:.1} p99 {:.1} p99.9 {:.1} max {:.1}",
            self.decided,
            self.elapsed.as_secs_f64(),
            self.rate(),
            self.retransmits,
            us(0.5),
            us(0.99),
            us(0.999),
            self.latency.max() as f64 / 1000.0
        )
    }
}

/// Drive `total` requests of `payload_len` bytes with up to `window` outstanding, one client id.
pub fn load(
    cluster_id: u32,
    client_id: u32,
    nodes: Vec<SocketAddrV4>,
    total: u64,
    window: usize,
    payload_len: usize,
    give_up: Duration,
) -> io::Result<LoadReport> {
    load_with(
        cluster_id,
        client_id,
        nodes,
        total,
        window,
        payload_len,
        give_up,
        None,
        &mut |_| {},
    )
}

/// [`load`] with packet tags (`auth`, from `ClusterFile::client_auth`), calling
/// `progress(decided)` about every 100 ms.
#[allow(clippy::too_many_arguments)]
pub fn load_with(
    cluster_id: u32,
    client_id: u32,
    nodes: Vec<SocketAddrV4>,
    total: u64,
    window: usize,
    payload_len: usize,
    give_up: Duration,
    auth: Option<ClientAuth>,
    progress: &mut dyn FnMut(u64),
) -> io::Result<LoadReport> {
    drive(
        cluster_id,
        client_id,
        nodes,
        Until::Total(total),
        true,
        window,
        payload_len,
        give_up,
        auth,
        progress,
    )
}

/// Drive requests with up to `window` outstanding until `stop` is set (requests still
/// outstanding then are left unanswered), calling `progress(decided)` about every 100 ms.
/// With `keep_oks` false the report's `oks` stays empty (long runs).
#[allow(clippy::too_many_arguments)]
pub fn load_until(
    cluster_id: u32,
    client_id: u32,
    nodes: Vec<SocketAddrV4>,
    window: usize,
    payload_len: usize,
    stop: &std::sync::atomic::AtomicBool,
    keep_oks: bool,
    give_up: Duration,
    auth: Option<ClientAuth>,
    progress: &mut dyn FnMut(u64),
) -> io::Result<LoadReport> {
    drive(
        cluster_id,
        client_id,
        nodes,
        Until::Stop(stop),
        keep_oks,
        window,
        payload_len,
        give_up,
        auth,
        progress,
    )
}

enum Until<'a> {
    Total(u64),
    Stop(&'a std::sync::atomic::AtomicBool),
}

#[allow(clippy::too_many_arguments)]
fn drive(
    cluster_id: u32,
    client_id: u32,
    nodes: Vec<SocketAddrV4>,
    until: Until<'_>,
    keep_oks: bool,
    window: usize,
    payload_len: usize,
    give_up: Duration,
    auth: Option<ClientAuth>,
    progress: &mut dyn FnMut(u64),
) -> io::Result<LoadReport> {
    let total = match until {
        Until::Total(t) => t,
        Until::Stop(_) => u64::MAX,
    };
    let stopped = || match until {
        Until::Stop(f) => f.load(std::sync::atomic::Ordering::Relaxed),
        Until::Total(_) => false,
    };
    let mut c = Client::new(cluster_id, client_id, nodes)?.with_auth(auth);
    c.sock.set_nonblocking(true)?;
    let payload = vec![0xA5u8; payload_len];
    let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| io::Error::other(e.to_string()))?;
    let mut outstanding: BTreeMap<u64, (Instant, Instant)> = BTreeMap::new();
    let mut oks = BTreeMap::new();
    let mut decided = 0u64;
    let mut next = 1u64;
    let mut retransmits = 0u64;
    let t0 = Instant::now();
    let mut buf = [0u8; 2048];
    let mut last_progress = Instant::now();
    let mut last_ok = Instant::now();
    let mut max_ok_gap = Duration::ZERO;
    let mut reported = Instant::now();
    while decided < total && !stopped() {
        if reported.elapsed() >= Duration::from_millis(100) {
            progress(decided);
            reported = Instant::now();
        }
        while outstanding.len() < window && next <= total {
            // The clock starts before the send: on loopback the whole decision may run inside
            // this send_to (the engine wakes on this core and answers before it returns).
            let now = Instant::now();
            c.send(next, 0, &payload)?;
            outstanding.insert(next, (now, now));
            next += 1;
        }
        let mut got = false;
        loop {
            match c.sock.recv_from(&mut buf) {
                Ok((n, from)) => {
                    got = true;
                    match c.accept(&buf[..n]) {
                        Some(Packet::ReplyOk(r)) if r.client_id == client_id => {
                            if let Some((first, _)) = outstanding.remove(&r.seq) {
                                let ns = first.elapsed().as_nanos() as u64;
                                latency.saturating_record(ns.max(1));
                                decided += 1;
                                if keep_oks {
                                    oks.insert((r.instance, r.index), (r.client_id, r.seq));
                                }
                                last_progress = Instant::now();
                                max_ok_gap = max_ok_gap.max(last_ok.elapsed());
                                last_ok = last_progress;
                            }
                        }
                        Some(Packet::ReplyNotLeader(r)) if outstanding.contains_key(&r.seq) => {
                            let redirected =
                                c.nodes.get(c.leader).map(|a| SocketAddr::V4(*a)) == Some(from);
                            if redirected {
                                c.follow(r.leader);
                            }
                            if let Some((_, sent)) = outstanding.get_mut(&r.seq) {
                                // Resend after a short pause (the new leader may still be taking over).
                                *sent = Instant::now() - c.retry_after + Duration::from_millis(2);
                            }
                        }
                        _ => {}
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        let now = Instant::now();
        if outstanding
            .values()
            .any(|(_, sent)| now.duration_since(*sent) >= c.retry_after)
            && now.duration_since(last_progress) >= c.retry_after
        {
            // Nothing decided for a while: the leader may be gone; try the next node.
            c.leader = (c.leader + 1) % c.nodes.len();
            last_progress = now;
        }
        for (seq, (_, sent)) in outstanding.iter_mut() {
            if now.duration_since(*sent) >= c.retry_after {
                c.send(*seq, 0, &payload)?;
                *sent = now;
                retransmits += 1;
            }
        }
        if t0.elapsed() > give_up {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{decided} of {total} decided within {give_up:?}"),
            ));
        }
        if !got {
            // Block until a reply arrives or the next resend / progress report is due
            // (event-driven: no sleep loop between a request and its OK).
            let now = Instant::now();
            let next_resend = outstanding
                .values()
                .map(|(_, sent)| (*sent + c.retry_after).saturating_duration_since(now))
                .min()
                .unwrap_or(c.retry_after);
            let report = (reported + Duration::from_millis(100)).saturating_duration_since(now);
            let wait = next_resend.min(report).max(Duration::from_micros(1));
            crate::wait::readable(&[&c.sock], wait)?;
        }
    }
    progress(decided);
    Ok(LoadReport {
        decided,
        retransmits,
        elapsed: t0.elapsed(),
        latency,
        oks,
        max_ok_gap,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::wire::{ReplyNotLeader, ReplyOk};

    const CLUSTER: u32 = 7;

    fn node() -> (UdpSocket, SocketAddrV4) {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let SocketAddr::V4(a) = s.local_addr().unwrap() else {
            unreachable!()
        };
        (s, a)
    }

    /// The next request a fake node receives: its seq and where it came from.
    fn request_at(s: &UdpSocket) -> (u64, SocketAddr) {
        let mut buf = [0u8; 2048];
        let (n, from) = s.recv_from(&mut buf).unwrap();
        match wire::parse(&buf[..n], CLUSTER).unwrap().1 {
            Packet::Request(e) => (e.seq, from),
            p => panic!("expected a request, got {p:?}"),
        }
    }

    fn reply(s: &UdpSocket, to: SocketAddr, p: Packet<'_>) {
        s.send_to(&p.to_vec(CLUSTER, 0).unwrap(), to).unwrap();
    }

    /// A submitted request follows a redirect after its pause, and resends to the next node
    /// after `retry_after` of silence; `poll` gives its decision; `on_time` gives up.
    #[test]
    fn a_submitted_request_is_redirected_resent_decided_and_given_up() {
        let (n0, a0) = node();
        let (n1, a1) = node();
        let mut c = Client::new(CLUSTER, 42, vec![a0, a1]).unwrap();
        c.retry_after = Duration::from_millis(30);
        let give_up = Duration::from_secs(5);

        let mut f = c.submit(0, b"x".to_vec()).unwrap();
        let (seq, from) = request_at(&n0);
        assert_eq!(seq, f.seq());
        let nl = ReplyNotLeader {
            client_id: 42,
            seq,
            leader: 1,
            epoch: 3,
        };
        reply(&n0, from, Packet::ReplyNotLeader(nl));
        crate::wait::readable(&[c.socket()], Duration::from_secs(5)).unwrap();
        assert_eq!(
            c.poll(&mut f).unwrap(),
            None,
            "a redirect is not a decision"
        );
        // Not resent before its pause is over; resent to the node named after it.
        std::thread::sleep(REDIRECT_PAUSE);
        c.on_time(&mut f, give_up).unwrap();
        let (again, from) = request_at(&n1);
        assert_eq!(again, seq, "the same request goes to the leader named");
        let ok = ReplyOk {
            client_id: 42,
            seq,
            instance: 9,
            index: 2,
        };
        // A reply for another request is not this one's decision.
        reply(&n1, from, Packet::ReplyOk(ReplyOk { seq: seq + 5, ..ok }));
        reply(&n1, from, Packet::ReplyOk(ok));
        crate::wait::readable(&[c.socket()], Duration::from_secs(5)).unwrap();
        let got = loop {
            if let Some(ok) = c.poll(&mut f).unwrap() {
                break ok;
            }
            crate::wait::readable(&[c.socket()], Duration::from_secs(5)).unwrap();
        };
        assert_eq!(
            got,
            Ok {
                instance: 9,
                index: 2
            }
        );

        // Silence: after `retry_after` the next node (n0 again) gets it.
        let mut f = c.submit(0, b"y".to_vec()).unwrap();
        let (seq, _) = request_at(&n1);
        assert!(c.due(&f, give_up) <= Instant::now() + c.retry_after);
        std::thread::sleep(c.retry_after);
        c.on_time(&mut f, give_up).unwrap();
        assert_eq!(request_at(&n0).0, seq);
        // Past `give_up`, `on_time` says so.
        std::thread::sleep(Duration::from_millis(5));
        let e = c.on_time(&mut f, Duration::from_millis(1)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        c.discard().unwrap();
    }
}
