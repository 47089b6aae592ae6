//! Writes proposed together (group commit at a front): a node's fronts have at most `limit`
//! proposals undecided at once; writes that arrive while that many are in flight wait in a queue
//! and leave together, as one entry, in the next proposal.
//!
//! Nothing waits for a timer. A lone write finds an idle lane and is proposed at once; under
//! load, the time one proposal takes to be decided is the time the next one gathers writes in,
//! so the batch grows with the load by itself (each decision costs every engine a wake-up per
//! tree and a trip through the network stack: that cost, not the protocol, is the limit).
//!
//! Each of the `limit` proposals in flight has a **lane**: a thread with its own [`Client`] that
//! takes what is queued, proposes it, and hands the outcome of every write it carried to the
//! front's `done` callback, then takes what queued meanwhile. A session does not wait for a lane
//! to be scheduled or for its own thread to be woken: it queues its write and goes back to its
//! connection, and the lane answers the client (the session threads of 50 connections, woken
//! one by one to send the next proposal and to answer, were where the time went; batches stayed
//! at 4–5 writes). Exactly-once is per proposal: its (client id, seq) is the lane's, and the
//! apply side runs each carried command once, in queue order.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use soc_ctl::client::Client;

use crate::redis::{batch_overhead, batch_payload};

/// Where a write's reply will be: the proposal's (client id, seq) and, for a write carried in a
/// batch, its index in the batch's reply array.
pub type ReplyKey = (u32, u64, Option<u16>);

/// A proposal decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decided {
    /// The instance that decided it.
    pub instance: u64,
    client_id: u32,
    seq: u64,
    alone: bool,
}

impl Decided {
    /// A proposal of one write, sent by `client` (its last request).
    pub fn alone(instance: u64, client: &Client) -> Decided {
        Decided {
            instance,
            client_id: client.client_id,
            seq: client.last_seq(),
            alone: true,
        }
    }

    /// A proposal of `client_id`'s request `seq` (`alone`: one write, not a batch), decided at
    /// `instance`.
    pub fn of(instance: u64, client_id: u32, seq: u64, alone: bool) -> Decided {
        Decided {
            instance,
            client_id,
            seq,
            alone,
        }
    }

    /// Where the reply of the `i`-th write it carried will be.
    pub fn key(&self, i: usize) -> ReplyKey {
        (self.client_id, self.seq, (!self.alone).then_some(i as u16))
    }
}

/// What the proposals did (sums, for INFO and metrics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProposeStats {
    /// Proposals sent (each one request to the leader).
    pub proposals: u64,
    /// Writes they carried.
    pub writes: u64,
}

struct State<T> {
    queue: VecDeque<(Vec<u8>, T)>,
    stats: ProposeStats,
    lanes: bool,
    /// Proposals in flight (a lane's or a session's own).
    busy: usize,
    /// Lanes waiting for work (a push or a release wakes one only when some wait: a condvar
    /// notification is a system call even when nobody waits).
    idle: usize,
}

/// What a lane does with a proposal's outcome: the tags of the writes it carried, in queue
/// order, and the decision (or why there is none: the writes may still take effect).
pub type Done<T> = dyn Fn(Vec<T>, Result<Decided, String>) + Send + Sync;

/// [`Done`] called on the caller's own thread: it may borrow.
pub type Outcome<'a, T> = dyn Fn(Vec<T>, Result<Decided, String>) + 'a;

/// A node's group commit; `T` is what the front keeps with each write to answer it.
pub struct Proposer<T> {
    st: Mutex<State<T>>,
    cv: Condvar,
    limit: usize,
    max_payload: usize,
}

impl<T: Send + 'static> Proposer<T> {
    /// At most `limit` proposals in flight (0: no lanes; every write is proposed alone by its
    /// session), each at most `max_payload` bytes (the engine's largest entry payload).
    pub fn new(limit: usize, max_payload: usize) -> Proposer<T> {
        Proposer {
            st: Mutex::new(State {
                queue: VecDeque::new(),
                stats: ProposeStats::default(),
                lanes: false,
                busy: 0,
                idle: 0,
            }),
            cv: Condvar::new(),
            limit,
            max_payload,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the proposals did so far.
    pub fn stats(&self) -> ProposeStats {
        self.lock().stats
    }

    /// Whether a write of `len` bytes goes through the lanes (batching on, and it fits a
    /// proposal beside another); otherwise its session proposes it alone ([`Proposer::count_alone`]).
    pub fn shares(&self, len: usize) -> bool {
        self.limit > 0 && len + batch_overhead(2) <= self.max_payload
    }

    /// Count a write its session proposes alone (too large to share, or batching off).
    pub fn count_alone(&self) {
        let mut st = self.lock();
        st.stats.proposals += 1;
        st.stats.writes += 1;
    }

    /// A write that finds nothing queued and a proposal free goes at once with its session's
    /// own client, as it would alone (no hand-over to a lane thread: one connection's latency
    /// is unchanged). True: the caller proposes it now and calls [`Proposer::release`]
    /// after; false: [`Proposer::push`] it.
    pub fn try_direct(&self) -> bool {
        let mut st = self.lock();
        if !st.queue.is_empty() || st.busy >= self.limit {
            return false;
        }
        st.busy += 1;
        st.stats.proposals += 1;
        st.stats.writes += 1;
        true
    }

    /// A proposal in flight (a lane's, or one [`Proposer::try_direct`] allowed) is decided or
    /// given up: its slot is free.
    pub fn release(&self) {
        let mut st = self.lock();
        st.busy -= 1;
        let idle = st.idle > 0;
        drop(st);
        if idle {
            self.cv.notify_all();
        }
    }

    /// Start the lanes (once; later calls do nothing): each proposes with a client from
    /// `client` and hands every outcome to `done`.
    pub fn start(
        self: &Arc<Self>,
        mut client: impl FnMut() -> io::Result<Client>,
        done: Arc<Done<T>>,
        give_up: Duration,
    ) -> io::Result<()> {
        let mut st = self.lock();
        if st.lanes {
            return Ok(());
        }
        for i in 0..self.limit {
            let c = client()?;
            let (me, done) = (self.clone(), done.clone());
            std::thread::Builder::new()
                .name(format!("propose-{i}"))
                .spawn(move || me.lane(c, &*done, give_up))?;
        }
        st.lanes = true;
        Ok(())
    }

    /// Queue a write (the lanes must be started); a lane proposes it with the writes queued
    /// beside it and gives `tag` back to `done`.
    pub fn push(&self, payload: Vec<u8>, tag: T) {
        let mut st = self.lock();
        st.queue.push_back((payload, tag));
        let idle = st.idle > 0;
        drop(st);
        if idle {
            self.cv.notify_one();
        }
    }

    fn lane(&self, mut client: Client, done: &Done<T>, give_up: Duration) {
        loop {
            let mut st = self.lock();
            while st.queue.is_empty() || st.busy >= self.limit {
                st.idle += 1;
                st = self.cv.wait(st).unwrap_or_else(|p| p.into_inner());
                st.idle -= 1;
            }
            let batch = self.claim(&mut st);
            drop(st);
            self.propose(&mut client, batch, done, give_up);
        }
    }

    /// Queue a write without waking a lane: the caller proposes the queue itself
    /// ([`Proposer::claim_now`]) and hands what it cannot to the lanes ([`Proposer::kick`]).
    /// The front's event loop does this: a lone write then costs no hand-over to another
    /// thread.
    pub fn push_quiet(&self, payload: Vec<u8>, tag: T) {
        self.lock().queue.push_back((payload, tag));
    }

    /// If a proposal is free and writes are queued: take the slot and the writes of one
    /// proposal. The caller proposes them ([`proposal`]), hands the outcome to whoever answers
    /// them, and calls [`Proposer::release`].
    pub fn claim_now(&self) -> Option<Vec<(Vec<u8>, T)>> {
        let mut st = self.lock();
        if st.queue.is_empty() || st.busy >= self.limit {
            return None;
        }
        Some(self.claim(&mut st))
    }

    /// Whether writes wait in the queue.
    pub fn queued(&self) -> bool {
        !self.lock().queue.is_empty()
    }

    /// Hand every queued write to `done` as not proposed (`why`): nothing can propose them.
    pub fn fail_queued(&self, done: &Outcome<'_, T>, why: String) {
        let tags: Vec<T> = self.lock().queue.drain(..).map(|(_, t)| t).collect();
        if !tags.is_empty() {
            done(tags, Err(why));
        }
    }

    /// A proposal taken with [`Proposer::claim_now`] is done: keep its slot for what queued
    /// meanwhile (taken as by `claim_now`), or free it (None). A lane woken by a plain
    /// [`Proposer::release`] would race the caller for the queue.
    pub fn renew(&self) -> Option<Vec<(Vec<u8>, T)>> {
        let mut st = self.lock();
        if st.queue.is_empty() {
            st.busy -= 1;
            return None;
        }
        st.busy -= 1;
        Some(self.claim(&mut st))
    }

    /// Wake a waiting lane for what is queued, if a proposal is free (the lanes must be
    /// started).
    pub fn kick(&self) {
        let st = self.lock();
        if st.idle > 0 && st.busy < self.limit && !st.queue.is_empty() {
            drop(st);
            self.cv.notify_one();
        }
    }

    /// Take a proposal slot and what is queued for it.
    fn claim(&self, st: &mut State<T>) -> Vec<(Vec<u8>, T)> {
        st.busy += 1;
        let batch = self.take(st);
        st.stats.proposals += 1;
        st.stats.writes += batch.len() as u64;
        batch
    }

    /// Propose `batch` with `client`, hand the outcome to `done`, free the slot.
    fn propose(
        &self,
        client: &mut Client,
        batch: Vec<(Vec<u8>, T)>,
        done: &Outcome<'_, T>,
        give_up: Duration,
    ) {
        let (payloads, tags): (Vec<Vec<u8>>, Vec<T>) = batch.into_iter().unzip();
        let (payload, alone) = proposal(payloads);
        let r = client
            .request(0, &payload, give_up)
            .map(|ok| Decided {
                instance: ok.instance,
                client_id: client.client_id,
                seq: client.last_seq(),
                alone,
            })
            .map_err(|e| e.to_string());
        done(tags, r);
        self.release();
    }

    /// The writes at the head of the queue that fit one proposal (at least the first).
    fn take(&self, st: &mut State<T>) -> Vec<(Vec<u8>, T)> {
        let mut batch: Vec<(Vec<u8>, T)> = Vec::new();
        let mut bytes = 0;
        while let Some((p, _)) = st.queue.front() {
            let more = bytes + p.len();
            if !batch.is_empty()
                && (more + batch_overhead(batch.len() + 1) > self.max_payload
                    || batch.len() == u16::MAX as usize)
            {
                break;
            }
            bytes = more;
            batch.extend(st.queue.pop_front());
        }
        batch
    }
}

/// The payload of one proposal carrying `payloads` (one write alone as it is, several as a
/// batch), and whether it is one write alone.
pub fn proposal(mut payloads: Vec<Vec<u8>>) -> (Vec<u8>, bool) {
    if payloads.len() == 1 {
        (payloads.pop().unwrap_or_default(), true)
    } else {
        (batch_payload(payloads.iter().map(Vec::as_slice)), false)
    }
}

/// One request carrying the one encoded command `cmd`, to its decision's instance.
pub(crate) fn send(client: &mut Client, cmd: &[u8], give_up: Duration) -> Result<u64, String> {
    client
        .request(0, cmd, give_up)
        .map(|ok| ok.instance)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::{self, Value};

    #[test]
    fn a_batch_is_an_array_of_the_commands_and_its_overhead_is_its_header() {
        let a = Value::command(&[b"SET", b"k", b"v"]).to_bytes();
        let b = Value::command(&[b"INCR", b"n"]).to_bytes();
        let p = batch_payload([a.as_slice(), b.as_slice()].into_iter());
        assert_eq!(p.len(), a.len() + b.len() + batch_overhead(2));
        let (v, used) = resp::parse(&p).unwrap().unwrap();
        assert_eq!(used, p.len());
        assert_eq!(
            v,
            Value::Array(Some(vec![
                Value::command(&[b"SET", b"k", b"v"]),
                Value::command(&[b"INCR", b"n"]),
            ]))
        );
        assert_eq!(v.as_command(), None, "a batch is not one command");
    }

    #[test]
    fn the_queue_is_taken_in_order_up_to_the_payload_limit() {
        let p: Proposer<usize> = Proposer::new(1, 40);
        let mut st = p.lock();
        for (i, n) in [10, 10, 10, 10, 30].into_iter().enumerate() {
            st.queue.push_back((vec![b'x'; n], i));
        }
        let mut take = || {
            p.take(&mut st)
                .into_iter()
                .map(|(b, i)| (b.len(), i))
                .collect::<Vec<_>>()
        };
        // 3 × 10 + "*3\r\n" = 34 ≤ 40; a fourth would make 44.
        assert_eq!(take(), vec![(10, 0), (10, 1), (10, 2)]);
        // 10 + 30 + "*2\r\n" = 44 > 40: the 10 goes alone.
        assert_eq!(take(), vec![(10, 3)]);
        assert_eq!(take(), vec![(30, 4)]);
        assert!(take().is_empty());
    }

    #[test]
    fn a_proposal_of_one_write_has_no_index_and_a_batch_numbers_its_writes() {
        let d = |alone| Decided {
            instance: 9,
            client_id: 7,
            seq: 3,
            alone,
        };
        assert_eq!(d(true).key(0), (7, 3, None));
        assert_eq!(d(false).key(2), (7, 3, Some(2)));
    }
}
