//! Exactly-once application of decided entries.
//!
//! A client that gets no reply retransmits the same (client id, seq), so one
//! request can be decided in two instances (the paper: proposed values are
//! distinguishable). The log keeps both; the application applies the first
//! and skips the rest. [`Applier`] is that filter, the same on every node
//! because every node sees the same log. Client sequence numbers start at 1
//! (0 is refused by the wire format) and may be pipelined (decided out of order).

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::fmt;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Window {
    /// Every seq below this has been applied.
    low: u64,
    /// Applied seqs ≥ `low` (out-of-order arrivals).
    above: BTreeSet<u64>,
}

/// Per-client record of applied sequence numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applier {
    clients: BTreeMap<u32, Window>,
}

impl Applier {
    /// An empty record.
    pub fn new() -> Self {
        Self::default()
    }

    /// True the first time (client, seq) is offered (apply it); false for every repeat (skip it).
    pub fn admit(&mut self, client_id: u32, seq: u64) -> bool {
        let w = self.clients.entry(client_id).or_insert(Window {
            low: 1,
            above: BTreeSet::new(),
        });
        if seq < w.low || !w.above.insert(seq) {
            return false;
        }
        while w.above.remove(&w.low) {
            w.low += 1;
        }
        true
    }

    /// Whether (client, seq) has been applied.
    pub fn applied(&self, client_id: u32, seq: u64) -> bool {
        self.clients
            .get(&client_id)
            .is_some_and(|w| seq < w.low || w.above.contains(&seq))
    }

    /// The client ids seen, in increasing order.
    pub fn client_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.clients.keys().copied()
    }

    /// Number of clients seen.
    pub fn clients(&self) -> usize {
        self.clients.len()
    }

    /// The record as bytes, part of an application snapshot (a joining replica must skip the
    /// same retransmissions as the members). Layout, big-endian: `clients u32`, then per client
    /// in increasing id order `client_id u32, low u64, above u32, seqs u64 × above` (each seq
    /// above `low`, increasing).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.clients.len() as u32).to_be_bytes());
        for (id, w) in &self.clients {
            out.extend_from_slice(&id.to_be_bytes());
            out.extend_from_slice(&w.low.to_be_bytes());
            out.extend_from_slice(&(w.above.len() as u32).to_be_bytes());
            for s in &w.above {
                out.extend_from_slice(&s.to_be_bytes());
            }
        }
        out
    }

    /// Decode [`Applier::encode`]'s bytes; anything else is refused (every length, order and
    /// bound is checked, nothing is trusted).
    pub fn decode(mut b: &[u8]) -> Result<Applier, ApplierDecodeError> {
        let mut take = |n: usize| -> Result<&[u8], ApplierDecodeError> {
            if b.len() < n {
                return Err(ApplierDecodeError::Truncated);
            }
            let (h, t) = b.split_at(n);
            b = t;
            Ok(h)
        };
        let be32 = |s: &[u8]| u32::from_be_bytes(s.try_into().expect("4 bytes"));
        let be64 = |s: &[u8]| u64::from_be_bytes(s.try_into().expect("8 bytes"));
        let n = be32(take(4)?);
        let mut clients = BTreeMap::new();
        let mut last = None;
        for _ in 0..n {
            let id = be32(take(4)?);
            if last.is_some_and(|l| id <= l) {
                return Err(ApplierDecodeError::Order { client_id: id });
            }
            last = Some(id);
            let low = be64(take(8)?);
            let count = be32(take(4)?) as usize;
            // Each seq takes 8 bytes: a count beyond what is left is refused before allocating.
            let seqs = take(count.checked_mul(8).ok_or(ApplierDecodeError::Truncated)?)?;
            if low == 0 {
                return Err(ApplierDecodeError::Order { client_id: id });
            }
            let mut above = BTreeSet::new();
            let mut prev = low; // `low` itself is not applied: every seq above must exceed it
            for c in seqs.chunks_exact(8) {
                let s = be64(c);
                if s <= prev {
                    return Err(ApplierDecodeError::Order { client_id: id });
                }
                prev = s;
                above.insert(s);
            }
            clients.insert(id, Window { low, above });
        }
        if !b.is_empty() {
            return Err(ApplierDecodeError::Trailing { bytes: b.len() });
        }
        Ok(Applier { clients })
    }
}

/// Why an encoded [`Applier`] does not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplierDecodeError {
    /// The bytes end inside a record.
    Truncated,
    /// Client ids not increasing, `low` = 0, or seqs not increasing above `low`.
    Order {
        /// The client whose record is out of order.
        client_id: u32,
    },
    /// Bytes after the last record.
    Trailing {
        /// How many.
        bytes: usize,
    },
}

impl fmt::Display for ApplierDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApplierDecodeError::Truncated => write!(f, "exactly-once record: truncated"),
            ApplierDecodeError::Order { client_id } => write!(
                f,
                "exactly-once record: client {client_id:#x} out of order (ids and seqs must increase, low >= 1)"
            ),
            ApplierDecodeError::Trailing { bytes } => {
                write!(
                    f,
                    "exactly-once record: {bytes} bytes after the last client"
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_refused_in_and_out_of_order() {
        let mut a = Applier::new();
        assert!(a.admit(1, 2));
        assert!(a.admit(1, 1));
        assert!(!a.admit(1, 2));
        assert!(!a.admit(1, 1));
        assert!(a.admit(1, 3));
        assert!(a.admit(2, 1));
        assert!(a.applied(1, 3) && !a.applied(1, 4) && !a.applied(3, 1));
        assert!(a.clients[&1].above.is_empty(), "contiguous seqs compact");
    }

    #[test]
    fn the_record_round_trips_and_bad_bytes_are_refused() {
        let mut a = Applier::new();
        for (c, s) in [(7, 1), (7, 2), (7, 5), (7, 9), (3, 4), (u32::MAX, 1)] {
            a.admit(c, s);
        }
        let b = a.encode();
        assert_eq!(Applier::decode(&b), Ok(a.clone()));
        assert_eq!(Applier::decode(&[]), Err(ApplierDecodeError::Truncated));
        assert_eq!(
            Applier::decode(&b[..b.len() - 1]),
            Err(ApplierDecodeError::Truncated)
        );
        let mut t = b.clone();
        t.push(0);
        assert_eq!(
            Applier::decode(&t),
            Err(ApplierDecodeError::Trailing { bytes: 1 })
        );
        // A huge seq count is refused without allocating.
        let mut h = 1u32.to_be_bytes().to_vec();
        h.extend_from_slice(&1u32.to_be_bytes());
        h.extend_from_slice(&1u64.to_be_bytes());
        h.extend_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(Applier::decode(&h), Err(ApplierDecodeError::Truncated));
        // A seq at or below `low` would be applied twice after a transfer: refused.
        let mut o = 1u32.to_be_bytes().to_vec();
        o.extend_from_slice(&5u32.to_be_bytes());
        o.extend_from_slice(&3u64.to_be_bytes());
        o.extend_from_slice(&1u32.to_be_bytes());
        o.extend_from_slice(&3u64.to_be_bytes());
        assert_eq!(
            Applier::decode(&o),
            Err(ApplierDecodeError::Order { client_id: 5 })
        );
        // The decoded record refuses what the original refuses.
        let mut d = Applier::decode(&b).unwrap();
        assert!(!d.admit(7, 5) && !d.admit(7, 1) && d.admit(7, 3));
    }
}
