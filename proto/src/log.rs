//! The decision log every driver keeps (the software engine, the simulator) and its one
//! snapshot encoding, which a member serves to a joining node ([`crate::join`]).
//!
//! A decided value is identified by its instance and its entries (client id, seq, flags,
//! payload): those bytes are the same on every node. The DECIDE's `tree`, `msg_seq` and epoch
//! fields are how it travelled, not what was decided, and are not compared.
//!
//! Encoding, per instance in increasing order: `instance u64 BE, kind u8, count u16 BE,
//! len u32 BE, entries` (the entries as on the wire).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use crate::transfer::crc32;
use crate::wire::{self, DecideKind, Packet};

/// One decided instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logged {
    /// Batch or Config.
    pub kind: DecideKind,
    /// Number of entries.
    pub count: u16,
    /// The entries as on the wire.
    pub entries: Vec<u8>,
}

impl Logged {
    /// From a decided DECIDE packet (`None` if it is not one).
    pub fn from_packet(packet: &[u8], cluster_id: u32) -> Option<(u64, Logged)> {
        match wire::parse(packet, cluster_id) {
            Ok((_, Packet::Decide(d))) => Some((
                d.meta.instance,
                Logged {
                    kind: d.meta.kind,
                    count: d.count,
                    entries: d.entries_raw.to_vec(),
                },
            )),
            _ => None,
        }
    }

    /// The requests in this decision, in order: (client id, seq).
    pub fn requests(&self) -> Vec<(u32, u64)> {
        wire::Entries::of(&self.entries, self.count)
            .map(|e| (e.client_id, e.seq))
            .collect()
    }

    /// One line for `soc-ctl log`: instance, kind, entry count, CRC-32 of the entries.
    pub fn line(&self, instance: u64) -> String {
        format!(
            "{instance} {:?} {} {:08x}",
            self.kind,
            self.count,
            crc32(&self.entries)
        )
    }
}

/// Why a snapshot (an encoded log) does not decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SnapshotError {
    /// Bytes after the last whole record.
    Trailing {
        /// How many.
        bytes: usize,
    },
    /// A record whose kind is not a value (batch or config).
    Kind {
        /// The record's instance.
        instance: u64,
        /// The kind byte.
        kind: u8,
    },
    /// A record announces more entry bytes than follow.
    Length {
        /// The record's instance.
        instance: u64,
        /// Bytes announced.
        len: usize,
    },
    /// Instances must increase.
    Order {
        /// The instance out of order.
        instance: u64,
    },
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::Trailing { bytes } => write!(f, "bad snapshot: {bytes} trailing bytes"),
            SnapshotError::Kind { instance, kind } => {
                write!(f, "bad snapshot: instance {instance} has kind {kind}")
            }
            SnapshotError::Length { instance, len } => {
                write!(f, "bad snapshot: instance {instance} announces {len} bytes")
            }
            SnapshotError::Order { instance } => {
                write!(f, "bad snapshot: instance {instance} out of order")
            }
        }
    }
}

/// An instance both logs hold, with different values (an agreement violation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The instance.
    pub instance: u64,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AGREEMENT VIOLATION: instance {} differs between the snapshot and this node's log",
            self.instance
        )
    }
}

/// The decision log: instance → decided value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecisionLog {
    /// The entries (shared, so readers copy a range cheaply and encode it outside any lock).
    pub map: BTreeMap<u64, Arc<Logged>>,
}

const REC_HEADER: usize = 8 + 1 + 2 + 4;

impl DecisionLog {
    /// Record a decision (the first value of an instance stays; a different second one is a
    /// [`Conflict`] and changes nothing).
    pub fn insert(&mut self, instance: u64, l: Arc<Logged>) -> Result<(), Conflict> {
        match self.map.get(&instance) {
            Some(old) if *old != l => Err(Conflict { instance }),
            Some(_) => Ok(()),
            None => {
                self.map.insert(instance, l);
                Ok(())
            }
        }
    }

    /// Encode every instance over `from..=to`.
    pub fn encode(&self, from: u64, to: u64) -> Vec<u8> {
        encode(&self.range(from, to))
    }

    /// Decode an encoded log (every length checked).
    pub fn decode(mut b: &[u8]) -> Result<DecisionLog, SnapshotError> {
        let mut map = BTreeMap::new();
        let mut last = None;
        while !b.is_empty() {
            if b.len() < REC_HEADER {
                return Err(SnapshotError::Trailing { bytes: b.len() });
            }
            let instance = u64::from_be_bytes(b[..8].try_into().expect("8 bytes"));
            let kind =
                DecideKind::from_u8(b[8])
                    .filter(|k| k.is_value())
                    .ok_or(SnapshotError::Kind {
                        instance,
                        kind: b[8],
                    })?;
            let count = u16::from_be_bytes([b[9], b[10]]);
            let len = u32::from_be_bytes(b[11..15].try_into().expect("4 bytes")) as usize;
            if b.len() - REC_HEADER < len {
                return Err(SnapshotError::Length { instance, len });
            }
            if last.is_some_and(|l| instance <= l) {
                return Err(SnapshotError::Order { instance });
            }
            last = Some(instance);
            map.insert(
                instance,
                Arc::new(Logged {
                    kind,
                    count,
                    entries: b[REC_HEADER..REC_HEADER + len].to_vec(),
                }),
            );
            b = &b[REC_HEADER + len..];
        }
        Ok(DecisionLog { map })
    }

    /// Take a snapshot's instances that this log lacks; an instance present in both must hold
    /// the same value (else nothing changes). How many were added.
    pub fn merge(&mut self, other: DecisionLog) -> Result<usize, Conflict> {
        for (i, l) in &other.map {
            if let Some(mine) = self.map.get(i)
                && mine != l
            {
                return Err(Conflict { instance: *i });
            }
        }
        let before = self.map.len();
        for (i, l) in other.map {
            self.map.entry(i).or_insert(l);
        }
        Ok(self.map.len() - before)
    }

    /// Keep the newest `keep` instances (at least one); the older ones are dropped. How many
    /// were dropped.
    pub fn truncate_to(&mut self, keep: usize) -> usize {
        let mut n = 0;
        while self.map.len() > keep.max(1) {
            self.map.pop_first();
            n += 1;
        }
        n
    }

    /// The entries over `from..=to` (cheap: shared pointers).
    pub fn range(&self, from: u64, to: u64) -> Vec<(u64, Arc<Logged>)> {
        self.range_max(from, to, usize::MAX)
    }

    /// [`DecisionLog::range`], at most `max` instances (the first ones).
    pub fn range_max(&self, from: u64, to: u64, max: usize) -> Vec<(u64, Arc<Logged>)> {
        if from > to {
            return Vec::new();
        }
        self.map
            .range(from..=to)
            .take(max)
            .map(|(i, l)| (*i, l.clone()))
            .collect()
    }
}

/// Encode entries as a snapshot (see the module docs).
pub fn encode(range: &[(u64, Arc<Logged>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, l) in range {
        out.extend_from_slice(&i.to_be_bytes());
        out.push(l.kind as u8);
        out.extend_from_slice(&l.count.to_be_bytes());
        out.extend_from_slice(&(l.entries.len() as u32).to_be_bytes());
        out.extend_from_slice(&l.entries);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(n: u8) -> Arc<Logged> {
        Arc::new(Logged {
            kind: DecideKind::Batch,
            count: 1,
            entries: alloc::vec![n; 20],
        })
    }

    #[test]
    fn encode_decode_merge_and_conflicts() {
        let mut a = DecisionLog::default();
        for i in 1..=5u8 {
            a.insert(i as u64, logged(i)).unwrap();
        }
        let b = DecisionLog::decode(&a.encode(2, 4)).unwrap();
        assert_eq!(b.map.keys().copied().collect::<Vec<_>>(), [2, 3, 4]);
        let mut c = DecisionLog::default();
        c.insert(4, logged(4)).unwrap();
        assert_eq!(c.merge(b.clone()), Ok(2));
        let mut d = DecisionLog::default();
        d.insert(3, logged(9)).unwrap();
        assert_eq!(d.merge(b), Err(Conflict { instance: 3 }));
        assert_eq!(d.map.len(), 1, "a conflicting merge changes nothing");
        assert_eq!(d.insert(3, logged(8)), Err(Conflict { instance: 3 }));
    }

    #[test]
    fn decode_refuses_what_is_not_a_log() {
        let mut a = DecisionLog::default();
        a.insert(7, logged(1)).unwrap();
        a.insert(8, logged(2)).unwrap();
        let e = a.encode(0, u64::MAX);
        assert_eq!(
            DecisionLog::decode(&e[..e.len() - 1]),
            Err(SnapshotError::Length {
                instance: 8,
                len: 20
            })
        );
        let mut bad = e.clone();
        bad[8] = DecideKind::Heartbeat as u8;
        assert_eq!(
            DecisionLog::decode(&bad),
            Err(SnapshotError::Kind {
                instance: 7,
                kind: DecideKind::Heartbeat as u8
            })
        );
        let mut swapped = e[35..].to_vec();
        swapped.extend_from_slice(&e[..35]);
        assert_eq!(
            DecisionLog::decode(&swapped),
            Err(SnapshotError::Order { instance: 7 })
        );
        assert_eq!(
            DecisionLog::decode(&e[..3]),
            Err(SnapshotError::Trailing { bytes: 3 })
        );
    }
}
