//! Writes proposed together (group commit at a front): a node's fronts have at most `limit`
//! proposals undecided at once; writes that arrive while that many are in flight wait in a queue
//! and leave together, as one entry, in the next proposal.
//!
//! Nothing waits for a timer. A lone write finds nothing in flight and is proposed at once, as
//! it would be alone; under load, the time one proposal takes to be decided is the time the
//! next one gathers writes in. So the batch grows with the load by itself: at 50 connections
//! one decision carries the writes of many, where it carried one each before (each decision
//! costs every engine a wake-up per tree, and that cost, not the protocol, was the limit).
//!
//! There is no proposer thread either: the session whose write is first in the queue when a
//! slot frees proposes the queue with its own [`Client`], and wakes the sessions of the writes
//! it carried when the leader's OK comes. Exactly-once is per proposal: its (client id, seq)
//! is that session's, and the apply side runs each carried command once, in queue order.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

use soc_ctl::client::Client;

use crate::redis::{batch_overhead, batch_payload};

/// Where a write's reply will be: the proposal's (client id, seq) and, for a write carried in a
/// batch, its index in the batch's reply array.
pub type ReplyKey = (u32, u64, Option<u16>);

/// A write decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proposed {
    /// The instance that decided it.
    pub instance: u64,
    /// Where its reply will be.
    pub key: ReplyKey,
}

/// What the proposals did (sums, for INFO and metrics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProposeStats {
    /// Proposals sent (each one request to the leader).
    pub proposals: u64,
    /// Writes they carried.
    pub writes: u64,
}

struct Slot {
    payload: Vec<u8>,
    thread: Thread,
    done: OnceLock<Result<Proposed, String>>,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Arc<Slot>>,
    in_flight: usize,
    stats: ProposeStats,
}

/// A node's group commit.
pub struct Proposer {
    st: Mutex<State>,
    limit: usize,
    max_payload: usize,
}

impl Proposer {
    /// At most `limit` proposals in flight (0: every write proposed alone, at once, however many
    /// are in flight), each at most `max_payload` bytes (the engine's largest entry payload).
    pub fn new(limit: usize, max_payload: usize) -> Proposer {
        Proposer {
            st: Mutex::new(State::default()),
            limit,
            max_payload,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the proposals did so far.
    pub fn stats(&self) -> ProposeStats {
        self.lock().stats
    }

    /// Propose `payload` (one encoded RESP command) and wait until it is decided, or fails: the
    /// error says why (it may still take effect). `client` is the calling session's own.
    pub fn propose(
        &self,
        client: &mut Client,
        payload: &[u8],
        give_up: Duration,
    ) -> Result<Proposed, String> {
        if self.limit == 0 || payload.len() + batch_overhead(2) > self.max_payload {
            // Alone: batching off, or too large to share a proposal.
            let mut st = self.lock();
            st.stats.proposals += 1;
            st.stats.writes += 1;
            drop(st);
            return Self::send(client, &[payload], give_up).map(|instance| Proposed {
                instance,
                key: (client.client_id, client.last_seq(), None),
            });
        }
        let me = Arc::new(Slot {
            payload: payload.to_vec(),
            thread: std::thread::current(),
            done: OnceLock::new(),
        });
        let deadline = Instant::now() + give_up;
        let mut st = self.lock();
        st.queue.push_back(me.clone());
        loop {
            if let Some(r) = me.done.get() {
                return r.clone();
            }
            let queued = st.queue.iter().any(|s| Arc::ptr_eq(s, &me));
            if queued && st.in_flight < self.limit {
                let batch = self.take(&mut st);
                st.in_flight += 1;
                st.stats.proposals += 1;
                st.stats.writes += batch.len() as u64;
                drop(st);
                let cmds: Vec<&[u8]> = batch.iter().map(|s| s.payload.as_slice()).collect();
                let r = Self::send(client, &cmds, give_up);
                let seq = client.last_seq();
                st = self.lock();
                st.in_flight -= 1;
                let alone = batch.len() == 1;
                for (i, s) in batch.iter().enumerate() {
                    let _ = s.done.set(r.clone().map(|instance| Proposed {
                        instance,
                        key: (client.client_id, seq, (!alone).then_some(i as u16)),
                    }));
                    if !Arc::ptr_eq(s, &me) {
                        s.thread.unpark();
                    }
                }
                // A slot is free: the first write still queued proposes the queue.
                if let Some(next) = st.queue.front() {
                    next.thread.unpark();
                }
                continue;
            }
            if queued && Instant::now() >= deadline {
                st.queue.retain(|s| !Arc::ptr_eq(s, &me));
                return Err(format!(
                    "{} proposals of this node stayed undecided for {give_up:?}",
                    st.in_flight
                ));
            }
            drop(st);
            // Woken when this write is decided or a slot frees; the timeout re-checks.
            std::thread::park_timeout(Duration::from_millis(20));
            st = self.lock();
        }
    }

    /// The writes at the head of the queue that fit one proposal (at least the first).
    fn take(&self, st: &mut State) -> Vec<Arc<Slot>> {
        let mut batch: Vec<Arc<Slot>> = Vec::new();
        let mut bytes = 0;
        while let Some(s) = st.queue.front() {
            let more = bytes + s.payload.len();
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

    /// One request carrying `cmds` (alone, or as a batch), to its decision's instance.
    fn send(client: &mut Client, cmds: &[&[u8]], give_up: Duration) -> Result<u64, String> {
        let r = match cmds {
            [one] => client.request(0, one, give_up),
            _ => client.request(0, &batch_payload(cmds.iter().copied()), give_up),
        };
        r.map(|ok| ok.instance).map_err(|e| e.to_string())
    }
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
        let p = Proposer::new(1, 40);
        let mut st = State::default();
        for n in [10, 10, 10, 10, 30] {
            st.queue.push_back(Arc::new(Slot {
                payload: vec![b'x'; n],
                thread: std::thread::current(),
                done: OnceLock::new(),
            }));
        }
        let sizes = |b: Vec<Arc<Slot>>| b.iter().map(|s| s.payload.len()).collect::<Vec<_>>();
        // 3 × 10 + "*3\r\n" = 34 ≤ 40; a fourth would make 44.
        assert_eq!(sizes(p.take(&mut st)), vec![10, 10, 10]);
        // 10 + 30 + "*2\r\n" = 44 > 40: the 10 goes alone.
        assert_eq!(sizes(p.take(&mut st)), vec![10]);
        assert_eq!(sizes(p.take(&mut st)), vec![30]);
        assert!(p.take(&mut st).is_empty());
    }
}
