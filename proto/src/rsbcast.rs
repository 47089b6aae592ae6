//! RSBCAST receiver (Alg. 1), the hardware way: per-tree sequence tracking.
//!
//! A message is DELIVERed when a copy of it arrived on every one of the |G|
//! trees within the window Δ_I + Δ_D of its first copy. Messages are
//! identified by the leader's per-epoch `msg_seq`; each tree is FIFO, so on
//! tree `t` the copies must arrive as seq 0, 1, 2, … A copy that skips a seq
//! on its tree means that tree lost a message: NET-FAULT at once (without
//! waiting for the window). Several messages may be in flight when the loop
//! period is shorter than the window; their first-copy times wait in a queue
//! of at most [`crate::regs::MAX_IN_FLIGHT`]. Sequence numbers are compared
//! as serial numbers (RFC 1982), so an epoch may run past 2^32 messages.
//!
//! State: `next[t]` (next seq expected on tree t), `base = min_t next[t]`
//! (oldest incomplete message) and `first[i]` = arrival time of the first copy
//! of message `base + i`. The message `base` completes when the last tree
//! that lacked it delivers it; that copy is the one handed up.

use alloc::collections::VecDeque;

use crate::regs::{MAX_IN_FLIGHT, MAX_TREES};

/// What one copy did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyOutcome {
    /// First copy of a new message: not complete yet (|G| > 1).
    First,
    /// A further copy; the message is still missing copies on other trees.
    More,
    /// This copy completed its message: DELIVER it.
    Deliver,
    /// This tree already delivered this seq (a duplicate): ignore.
    Duplicate,
    /// NET-FAULT.
    Fault(FaultKind),
}

/// Why RSBCAST gave up (the NET-FAULT upcall).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Not every tree delivered a copy within the window. `missing` is a bit mask of trees.
    MissingCopy {
        /// Trees (bit t) whose copy did not arrive.
        missing: u8,
    },
    /// A tree skipped a message (it was lost on that tree).
    SeqGap {
        /// The tree.
        tree: u8,
        /// Seq expected on it.
        expected: u32,
        /// Seq that arrived.
        got: u32,
    },
    /// More messages in flight than the receiver can track.
    TooManyInFlight,
}

/// RSBCAST receiver state for one epoch.
#[derive(Clone, Debug)]
pub struct Receiver {
    trees: u8,
    window: u64,
    next: [u32; MAX_TREES as usize],
    base: u32,
    first: VecDeque<u64>,
}

impl Receiver {
    /// A receiver expecting seq `start` on each of `trees` trees.
    pub fn new(trees: u8, window: u64, start: u32) -> Self {
        Receiver {
            trees,
            window,
            next: [start; MAX_TREES as usize],
            base: start,
            first: VecDeque::new(),
        }
    }

    /// Messages that have at least one copy but are not complete.
    pub fn in_flight(&self) -> usize {
        self.first.len()
    }

    /// Seq of the oldest message not yet delivered.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// When the oldest incomplete message's window closes (NET-FAULT if `now` passes it).
    pub fn deadline(&self) -> Option<u64> {
        self.first.front().map(|f| f + self.window + 1)
    }

    /// Check the window of the oldest incomplete message at `now`.
    pub fn expire(&self, now: u64) -> Option<FaultKind> {
        let f = *self.first.front()?;
        if now > f + self.window {
            Some(FaultKind::MissingCopy {
                missing: self.missing_of(self.base),
            })
        } else {
            None
        }
    }

    /// Trees that have not delivered seq `s`.
    fn missing_of(&self, s: u32) -> u8 {
        let off = s.wrapping_sub(self.base);
        (0..self.trees)
            .filter(|&t| self.next[t as usize].wrapping_sub(self.base) <= off)
            .fold(0, |m, t| m | 1 << t)
    }

    /// Record a copy of message `seq` on `tree` at `now`.
    pub fn copy(&mut self, now: u64, tree: u8, seq: u32) -> CopyOutcome {
        if let Some(f) = self.expire(now) {
            return CopyOutcome::Fault(f);
        }
        let t = tree as usize;
        let expected = self.next[t];
        // Serial-number comparison: how far `seq` is ahead of what this tree owes us.
        match (seq.wrapping_sub(expected) as i32).signum() {
            -1 => return CopyOutcome::Duplicate,
            1 => {
                return CopyOutcome::Fault(FaultKind::SeqGap {
                    tree,
                    expected,
                    got: seq,
                });
            }
            _ => {}
        }
        // Offsets from `base` are 0..=in_flight, so they never wrap.
        let newest = self.first.len() as u32;
        let off = seq.wrapping_sub(self.base);
        if off == newest {
            if self.first.len() >= MAX_IN_FLIGHT as usize {
                return CopyOutcome::Fault(FaultKind::TooManyInFlight);
            }
            self.first.push_back(now);
        }
        // A further copy of an older message: its window is no older than the
        // oldest one's, which `expire` has just checked.
        self.next[t] = seq.wrapping_add(1);
        let min = self.next[..self.trees as usize]
            .iter()
            .map(|n| n.wrapping_sub(self.base))
            .min()
            .unwrap_or(off + 1);
        if min > 0 {
            // Exactly one message completes: the one this copy belongs to.
            debug_assert_eq!((min, off), (1, 0));
            self.first.pop_front();
            self.base = self.base.wrapping_add(1);
            CopyOutcome::Deliver
        } else if off == newest {
            CopyOutcome::First
        } else {
            CopyOutcome::More
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivers_when_all_trees_arrive_within_window() {
        let mut r = Receiver::new(2, 10, 0);
        assert_eq!(r.copy(100, 0, 0), CopyOutcome::First);
        assert_eq!(r.deadline(), Some(111));
        assert_eq!(r.copy(110, 1, 0), CopyOutcome::Deliver);
        assert_eq!(r.in_flight(), 0);
        assert_eq!(r.copy(111, 1, 0), CopyOutcome::Duplicate);
    }

    #[test]
    fn window_expiry_is_a_fault_naming_the_missing_tree() {
        let mut r = Receiver::new(3, 10, 0);
        r.copy(100, 0, 0);
        r.copy(101, 2, 0);
        assert_eq!(r.expire(110), None);
        assert_eq!(
            r.expire(111),
            Some(FaultKind::MissingCopy { missing: 0b010 })
        );
        assert_eq!(
            r.copy(111, 1, 0),
            CopyOutcome::Fault(FaultKind::MissingCopy { missing: 0b010 })
        );
    }

    #[test]
    fn pipelined_messages_complete_in_order() {
        let mut r = Receiver::new(2, 10, 0);
        assert_eq!(r.copy(0, 0, 0), CopyOutcome::First);
        assert_eq!(r.copy(2, 0, 1), CopyOutcome::First);
        assert_eq!(r.copy(4, 0, 2), CopyOutcome::First);
        assert_eq!(r.in_flight(), 3);
        assert_eq!(r.copy(8, 1, 0), CopyOutcome::Deliver);
        assert_eq!(r.copy(9, 1, 1), CopyOutcome::Deliver);
        assert_eq!(r.copy(13, 1, 2), CopyOutcome::Deliver);
        assert_eq!(r.base(), 3);
    }

    #[test]
    fn a_skipped_seq_on_a_tree_is_a_gap() {
        let mut r = Receiver::new(2, 10, 0);
        r.copy(0, 0, 0);
        r.copy(1, 1, 0);
        assert_eq!(
            r.copy(5, 1, 2),
            CopyOutcome::Fault(FaultKind::SeqGap {
                tree: 1,
                expected: 1,
                got: 2
            })
        );
    }

    #[test]
    fn late_copy_of_a_later_message() {
        let mut r = Receiver::new(2, 10, 0);
        r.copy(0, 0, 0);
        r.copy(5, 0, 1);
        // tree 1 delivers 0 in time, 1 too late (its window opened at 5).
        assert_eq!(r.copy(9, 1, 0), CopyOutcome::Deliver);
        assert_eq!(
            r.copy(16, 1, 1),
            CopyOutcome::Fault(FaultKind::MissingCopy { missing: 0b10 })
        );
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut r = Receiver::new(2, 10, u32::MAX - 1);
        for (i, s) in [u32::MAX - 1, u32::MAX, 0, 1].into_iter().enumerate() {
            let at = 10 * i as u64;
            assert_eq!(r.copy(at, 0, s), CopyOutcome::First);
            assert_eq!(r.copy(at + 1, 1, s), CopyOutcome::Deliver);
            assert_eq!(r.copy(at + 2, 1, s), CopyOutcome::Duplicate);
        }
        assert_eq!(r.base(), 2);
        assert_eq!(
            r.copy(50, 0, 4),
            CopyOutcome::Fault(FaultKind::SeqGap {
                tree: 0,
                expected: 2,
                got: 4
            })
        );
    }

    #[test]
    fn single_tree_delivers_every_copy() {
        let mut r = Receiver::new(1, 10, 5);
        assert_eq!(r.copy(0, 0, 5), CopyOutcome::Deliver);
        assert_eq!(r.copy(1, 0, 6), CopyOutcome::Deliver);
        assert_eq!(r.deadline(), None);
    }
}
