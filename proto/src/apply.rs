//! Exactly-once application of decided entries.
//!
//! A client that gets no reply retransmits the same (client id, seq), so one
//! request can be decided in two instances (the paper: proposed values are
//! distinguishable). The log keeps both; the application applies the first
//! and skips the rest. [`Applier`] is that filter, the same on every node
//! because every node sees the same log. Client sequence numbers start at 1
//! (0 is refused by the wire format) and may be pipelined (decided out of order).

use alloc::collections::{BTreeMap, BTreeSet};

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

    /// Number of clients seen.
    pub fn clients(&self) -> usize {
        self.clients.len()
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
}
