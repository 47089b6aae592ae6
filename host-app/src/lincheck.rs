//! A linearizability checker for key–value histories (Wing & Gong's search, with Lowe's
//! memoisation of visited states), per key: a history is linearizable iff each key's
//! sub-history is (linearizability is local, Herlihy & Wing).
//!
//! The model of one key is a register: `Set(v)` writes, `Del` removes, `Get` returns the value
//! or nothing. Operations that never returned (the client timed out, or the server died) may
//! have taken effect at any point after their invocation, or never: the search may linearize
//! them or leave them out. Writes that returned must be linearized between invocation and return.

use std::collections::{BTreeMap, HashSet};

/// What an operation did.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Write a value.
    Set(Vec<u8>),
    /// Remove the key.
    Del,
    /// Read; the result is in [`Event::read`].
    Get,
}

/// One operation of a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The key.
    pub key: Vec<u8>,
    /// The operation.
    pub op: Op,
    /// For `Get`: what it returned (`None`: the key was absent).
    pub read: Option<Vec<u8>>,
    /// Invocation time (any monotonic unit).
    pub invoke: u64,
    /// Return time; `None` if it never returned (outcome unknown).
    pub ret: Option<u64>,
}

/// Why a history is not linearizable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The key whose sub-history has no linearization.
    pub key: Vec<u8>,
    /// How many operations that key had.
    pub ops: usize,
}

/// Result of a check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every key's sub-history is linearizable.
    Linearizable,
    /// These keys are not.
    NotLinearizable(Vec<Violation>),
    /// The search gave up on a key after `budget` states (too many concurrent operations).
    Unknown {
        /// The key.
        key: Vec<u8>,
    },
}

/// Check a whole history, key by key; `budget` bounds the states visited per key.
pub fn check(history: &[Event], budget: usize) -> Verdict {
    let mut by_key: BTreeMap<&[u8], Vec<&Event>> = BTreeMap::new();
    for e in history {
        by_key.entry(&e.key).or_default().push(e);
    }
    let mut bad = Vec::new();
    for (key, events) in by_key {
        match check_key(&events, budget) {
            Some(true) => {}
            Some(false) => bad.push(Violation {
                key: key.to_vec(),
                ops: events.len(),
            }),
            None => return Verdict::Unknown { key: key.to_vec() },
        }
    }
    if bad.is_empty() {
        Verdict::Linearizable
    } else {
        Verdict::NotLinearizable(bad)
    }
}

/// One key's register history: Some(true/false), or None when the budget ran out.
fn check_key(events: &[&Event], budget: usize) -> Option<bool> {
    // Completed operations must all be linearized; pending ones may be.
    let n = events.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| events[i].invoke);
    let ev: Vec<&Event> = order.iter().map(|&i| events[i]).collect();
    let must: Vec<bool> = ev.iter().map(|e| e.ret.is_some()).collect();
    let words = n.div_ceil(64);
    let mut done = vec![0u64; words];
    let mut seen: HashSet<(Vec<u64>, Option<Vec<u8>>)> = HashSet::new();
    let mut visited = 0usize;
    // Iterative DFS: each frame is (state value, candidates tried so far).
    struct Frame {
        value: Option<Vec<u8>>,
        next: usize,
        chosen: Option<usize>,
    }
    let remaining_must = must.iter().filter(|m| **m).count();
    let mut left = remaining_must;
    let mut stack = vec![Frame {
        value: None,
        next: 0,
        chosen: None,
    }];
    loop {
        if left == 0 {
            return Some(true);
        }
        let Some(top) = stack.last_mut() else {
            return Some(false);
        };
        // The earliest return among the completed operations not yet linearized bounds which
        // operations may come next (their invocation must precede it).
        let bound = (0..n)
            .filter(|&i| done[i / 64] & (1 << (i % 64)) == 0)
            .filter_map(|i| ev[i].ret)
            .min()
            .unwrap_or(u64::MAX);
        let mut advanced = false;
        while top.next < n {
            let i = top.next;
            top.next += 1;
            if done[i / 64] & (1 << (i % 64)) != 0 || ev[i].invoke > bound {
                continue;
            }
            let e = ev[i];
            let next_value = match &e.op {
                Op::Set(v) => Some(v.clone()),
                Op::Del => None,
                Op::Get => {
                    // A read that never returned tells nothing; it may be left out.
                    if e.ret.is_some() && e.read != top.value {
                        continue;
                    }
                    top.value.clone()
                }
            };
            done[i / 64] |= 1 << (i % 64);
            if !seen.insert((done.clone(), next_value.clone())) {
                done[i / 64] &= !(1 << (i % 64));
                continue;
            }
            visited += 1;
            if visited > budget {
                return None;
            }
            if must[i] {
                left -= 1;
            }
            top.chosen = Some(i);
            stack.push(Frame {
                value: next_value,
                next: 0,
                chosen: None,
            });
            advanced = true;
            break;
        }
        if !advanced {
            // Backtrack: undo the choice that led here.
            stack.pop();
            if let Some(parent) = stack.last_mut()
                && let Some(i) = parent.chosen.take()
            {
                done[i / 64] &= !(1 << (i % 64));
                if must[i] {
                    left += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(k: &str, v: &str, invoke: u64, ret: Option<u64>) -> Event {
        Event {
            key: k.into(),
            op: Op::Set(v.into()),
            read: None,
            invoke,
            ret,
        }
    }

    fn get(k: &str, read: Option<&str>, invoke: u64, ret: u64) -> Event {
        Event {
            key: k.into(),
            op: Op::Get,
            read: read.map(|r| r.into()),
            invoke,
            ret: Some(ret),
        }
    }

    #[test]
    fn sequential_history_is_linearizable() {
        let h = vec![
            set("x", "1", 0, Some(1)),
            get("x", Some("1"), 2, 3),
            set("x", "2", 4, Some(5)),
            get("x", Some("2"), 6, 7),
        ];
        assert_eq!(check(&h, 10_000), Verdict::Linearizable);
    }

    #[test]
    fn a_stale_read_after_a_completed_write_is_not() {
        // The known non-linearizable history: x=2 completed before the read began, yet it saw 1.
        let h = vec![
            set("x", "1", 0, Some(1)),
            set("x", "2", 2, Some(3)),
            get("x", Some("1"), 4, 5),
        ];
        assert_eq!(
            check(&h, 10_000),
            Verdict::NotLinearizable(vec![Violation {
                key: b"x".to_vec(),
                ops: 3
            }])
        );
    }

    #[test]
    fn concurrent_operations_may_take_either_order() {
        // The write overlaps both reads: old then new is fine…
        let h = vec![
            set("x", "1", 0, Some(1)),
            set("x", "2", 2, Some(10)),
            get("x", Some("1"), 3, 4),
            get("x", Some("2"), 5, 6),
        ];
        assert_eq!(check(&h, 10_000), Verdict::Linearizable);
        // …but not new then old (the second read began after the first returned).
        let h = vec![
            set("x", "1", 0, Some(1)),
            set("x", "2", 2, Some(10)),
            get("x", Some("2"), 3, 4),
            get("x", Some("1"), 5, 6),
        ];
        assert!(matches!(check(&h, 10_000), Verdict::NotLinearizable(_)));
    }

    #[test]
    fn a_write_that_never_returned_may_or_may_not_have_happened() {
        let took_effect = vec![
            set("x", "1", 0, Some(1)),
            set("x", "2", 2, None),
            get("x", Some("2"), 5, 6),
        ];
        assert_eq!(check(&took_effect, 10_000), Verdict::Linearizable);
        let did_not = vec![
            set("x", "1", 0, Some(1)),
            set("x", "2", 2, None),
            get("x", Some("1"), 5, 6),
        ];
        assert_eq!(check(&did_not, 10_000), Verdict::Linearizable);
        // But it cannot be seen before it was invoked.
        let too_early = vec![
            set("x", "1", 0, Some(1)),
            get("x", Some("2"), 2, 3),
            set("x", "2", 4, None),
        ];
        assert!(matches!(
            check(&too_early, 10_000),
            Verdict::NotLinearizable(_)
        ));
    }

    #[test]
    fn keys_are_checked_independently_and_deletes_count() {
        let h = vec![
            set("a", "1", 0, Some(1)),
            set("b", "1", 0, Some(1)),
            Event {
                key: b"a".to_vec(),
                op: Op::Del,
                read: None,
                invoke: 2,
                ret: Some(3),
            },
            get("a", None, 4, 5),
            get("b", Some("1"), 4, 5),
            get("b", None, 6, 7),
        ];
        let Verdict::NotLinearizable(v) = check(&h, 10_000) else {
            panic!("b lost its value without a delete")
        };
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].key, b"b");
    }

    #[test]
    fn a_tiny_budget_says_unknown_rather_than_guessing() {
        let mut h = Vec::new();
        for i in 0..20u64 {
            h.push(set("x", &i.to_string(), 0, Some(100)));
        }
        h.push(get("x", Some("nope"), 101, 102));
        assert_eq!(check(&h, 50), Verdict::Unknown { key: b"x".to_vec() });
    }
}
