//! The software engine's decision log (the state it serves to joiners) and its snapshot encoding.
//!
//! A decided value is identified by its instance and its entries (client id, seq, flags,
//! payload): those bytes are the same on every node. The DECIDE's `tree`, `msg_seq` and epoch
//! fields are how it travelled, not what was decided, and are not compared.

use std::collections::BTreeMap;
use std::sync::Arc;

use proto::transfer::crc32;
use proto::wire::{DecideKind, Packet};

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
        match proto::wire::parse(packet, cluster_id) {
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
        proto::wire::Entries::of(&self.entries, self.count)
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

/// A snapshot or log that does not decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotError(pub String);

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bad snapshot: {}", self.0)
    }
}

/// The decision log: instance → decided value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecisionLog {
    /// The entries (shared, so readers copy a range cheaply and format it outside any lock).
    pub map: BTreeMap<u64, Arc<Logged>>,
}

const REC_HEADER: usize = 8 + 1 + 2 + 4;

impl DecisionLog {
    /// Encode every instance up to and including `upto`: per instance
    /// `instance u64 BE, kind u8, count u16 BE, len u32 BE, entries`.
    pub fn encode(&self, upto: u64) -> Vec<u8> {
        encode(&self.range(0, upto))
    }

    /// Decode [`DecisionLog::encode`]'s output (every length checked).
    pub fn decode(mut b: &[u8]) -> Result<DecisionLog, SnapshotError> {
        let mut map = BTreeMap::new();
        let mut last = None;
        while !b.is_empty() {
            if b.len() < REC_HEADER {
                return Err(SnapshotError(format!("{} trailing bytes", b.len())));
            }
            let i = u64::from_be_bytes(b[..8].try_into().expect("8 bytes"));
            let kind = DecideKind::from_u8(b[8])
                .filter(|k| k.is_value())
                .ok_or_else(|| SnapshotError(format!("instance {i}: kind {}", b[8])))?;
            let count = u16::from_be_bytes([b[9], b[10]]);
            let len = u32::from_be_bytes(b[11..15].try_into().expect("4 bytes")) as usize;
            if b.len() < REC_HEADER + len {
                return Err(SnapshotError(format!(
                    "instance {i}: {len} bytes announced"
                )));
            }
            if last.is_some_and(|l| i <= l) {
                return Err(SnapshotError(format!("instance {i} out of order")));
            }
            last = Some(i);
            map.insert(
                i,
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
    /// the same value (else nothing changes and the conflicting instance is returned).
    pub fn merge(&mut self, other: DecisionLog) -> Result<usize, u64> {
        for (i, l) in &other.map {
            if let Some(mine) = self.map.get(i)
                && mine != l
            {
                return Err(*i);
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

    /// Lines for `soc-ctl log` over `from..=to`.
    pub fn lines(&self, from: u64, to: u64) -> Vec<String> {
        lines(&self.range(from, to))
    }
}

/// Lines for `soc-ctl log`.
pub fn lines(range: &[(u64, Arc<Logged>)]) -> Vec<String> {
    range.iter().map(|(i, l)| l.line(*i)).collect()
}

/// Encode entries as [`DecisionLog::encode`] does.
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
            entries: vec![n; 20],
        })
    }

    #[test]
    fn encode_decode_merge() {
        let mut a = DecisionLog::default();
        for i in 1..=5 {
            a.map.insert(i, logged(i as u8));
        }
        let snap = DecisionLog::decode(&a.encode(3)).unwrap();
        assert_eq!(snap.map.len(), 3);
        let mut b = DecisionLog::default();
        b.map.insert(3, logged(3));
        b.map.insert(4, logged(4));
        assert_eq!(b.merge(snap.clone()), Ok(2));
        assert_eq!(b.lines(0, 10).len(), 4);
        let mut t = a.clone();
        assert_eq!(t.truncate_to(2), 3);
        assert_eq!(t.map.keys().copied().collect::<Vec<_>>(), [4, 5]);
        assert_eq!(t.truncate_to(0), 1, "at least one instance is kept");
        let mut c = DecisionLog::default();
        c.map.insert(2, logged(9));
        assert_eq!(c.merge(snap), Err(2));
        assert_eq!(c.map.len(), 1, "a conflicting merge changes nothing");
        let enc = a.encode(5);
        for cut in 0..enc.len() {
            let r = DecisionLog::decode(&enc[..cut]);
            assert!(r.is_err() || cut % (REC_HEADER + 20) == 0, "cut {cut}");
        }
    }
}
