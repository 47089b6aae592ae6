//! Parsing of the records the XDP program writes: a log slot, or a ring buffer record (the same
//! bytes cut after the packet). The layout is `xdp_log_common` ([`common::slot`]); the packet is
//! checked again with `proto::wire::parse`, so a reader never trusts the kernel side blindly.

use common::{SLOT_DATA_LEN, SLOT_HEADER_LEN, slot};
use proto::wire::{self, DecideKind, Packet};

/// One decision as the host application receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The consensus instance decided.
    pub instance: u64,
    /// The leader's epoch.
    pub epoch: u32,
    /// The node that sent the host copy.
    pub sender: u8,
    /// The tree of the copy.
    pub tree: u8,
    /// `Batch` or `Config` (heartbeats and START decide nothing and are never logged).
    pub kind: DecideKind,
    /// Number of entries.
    pub count: u16,
    /// The whole packet (UDP payload), as `proto::wire::parse` accepts it.
    pub packet: Vec<u8>,
    cluster_id: u32,
}

impl Decision {
    /// The parsed DECIDE (a view into [`Decision::packet`]); its `entries()` are the requests.
    pub fn decide(&self) -> wire::Decide<'_> {
        match wire::parse(&self.packet, self.cluster_id) {
            Ok((_, Packet::Decide(d))) => d,
            // `parse_record` accepted exactly this packet as a DECIDE.
            _ => unreachable!("a Decision always holds a valid DECIDE"),
        }
    }

    /// The cluster the decision belongs to.
    pub fn cluster_id(&self) -> u32 {
        self.cluster_id
    }
}

/// Why a record is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Shorter than a slot header, or `len` beyond the record.
    #[error("record truncated: {0}")]
    Truncated(&'static str),
    /// The header and the packet disagree, or the packet is not a valid value DECIDE.
    #[error("record corrupt: {0}")]
    Corrupt(&'static str),
    /// The slot is not (yet) committed.
    #[error("record not committed")]
    NotCommitted,
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The `commit` word of a slot or record (`instance + 1`, 0 when not committed), if present.
pub fn commit_of(bytes: &[u8]) -> Option<u64> {
    (bytes.len() >= 8).then(|| le64(bytes, slot::COMMIT))
}

/// The packet length a record header announces (clamped to the slot's data area).
pub fn len_of(bytes: &[u8]) -> Option<usize> {
    (bytes.len() >= SLOT_HEADER_LEN).then(|| usize::from(le16(bytes, slot::LEN)).min(SLOT_DATA_LEN))
}

/// Parse a committed slot or ring record of cluster `cluster_id`.
pub fn parse_record(bytes: &[u8], cluster_id: u32) -> Result<Decision, RecordError> {
    if bytes.len() < SLOT_HEADER_LEN {
        return Err(RecordError::Truncated("shorter than a slot header"));
    }
    let commit = le64(bytes, slot::COMMIT);
    let instance = le64(bytes, slot::INSTANCE);
    if commit == 0 {
        return Err(RecordError::NotCommitted);
    }
    if commit != instance.wrapping_add(1) {
        return Err(RecordError::Corrupt("commit is not instance + 1"));
    }
    let len = usize::from(le16(bytes, slot::LEN));
    if len > SLOT_DATA_LEN {
        return Err(RecordError::Corrupt("len larger than a slot"));
    }
    let Some(packet) = bytes.get(slot::DATA..slot::DATA + len) else {
        return Err(RecordError::Truncated("len beyond the record"));
    };
    let (h, p) = wire::parse(packet, cluster_id).map_err(|e| RecordError::Corrupt(e.what()))?;
    let Packet::Decide(d) = p else {
        return Err(RecordError::Corrupt("packet is not a DECIDE"));
    };
    if !d.meta.kind.is_value() {
        return Err(RecordError::Corrupt("a heartbeat or START in the log"));
    }
    if d.meta.instance != instance
        || d.meta.epoch != le32(bytes, slot::EPOCH)
        || d.count != le16(bytes, slot::COUNT)
        || d.meta.kind as u8 != bytes[slot::KIND]
        || h.sender != bytes[slot::SENDER]
        || d.meta.tree != bytes[slot::TREE]
    {
        return Err(RecordError::Corrupt("slot header differs from its packet"));
    }
    Ok(Decision {
        instance,
        epoch: d.meta.epoch,
        sender: h.sender,
        tree: d.meta.tree,
        kind: d.meta.kind,
        count: d.count,
        packet: packet.to_vec(),
        cluster_id,
    })
}

/// Build the record the XDP program writes for `packet` (tests and the property tests use it
/// to check [`parse_record`] against the kernel's layout).
pub fn encode_record(packet: &[u8], cluster_id: u32) -> Option<Vec<u8>> {
    let (h, Packet::Decide(d)) = wire::parse(packet, cluster_id).ok()? else {
        return None;
    };
    let mut r = vec![0u8; SLOT_HEADER_LEN + packet.len()];
    r[slot::COMMIT..slot::COMMIT + 8]
        .copy_from_slice(&(d.meta.instance.wrapping_add(1)).to_le_bytes());
    r[slot::INSTANCE..slot::INSTANCE + 8].copy_from_slice(&d.meta.instance.to_le_bytes());
    r[slot::EPOCH..slot::EPOCH + 4].copy_from_slice(&d.meta.epoch.to_le_bytes());
    r[slot::LEN..slot::LEN + 2].copy_from_slice(&(packet.len() as u16).to_le_bytes());
    r[slot::COUNT..slot::COUNT + 2].copy_from_slice(&d.count.to_le_bytes());
    r[slot::KIND] = d.meta.kind as u8;
    r[slot::SENDER] = h.sender;
    r[slot::TREE] = d.meta.tree;
    r[slot::DATA..].copy_from_slice(packet);
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proto::wire::{Decide, DecideMeta, Entry, emit_entries};

    const CLUSTER: u32 = 0x00C0_FFEE;

    fn batch(instance: u64, payloads: &[Vec<u8>]) -> Vec<u8> {
        let es: Vec<Entry<'_>> = payloads
            .iter()
            .enumerate()
            .map(|(i, p)| Entry {
                client_id: i as u32,
                seq: i as u64 + 1,
                flags: 0,
                payload: p,
            })
            .collect();
        let mut raw = vec![0u8; 9000];
        let n = emit_entries(es.iter(), &mut raw).unwrap();
        Packet::Decide(Decide {
            meta: DecideMeta {
                instance,
                epoch: 3,
                msg_seq: 1,
                tree: 1,
                kind: DecideKind::Batch,
            },
            count: es.len() as u16,
            entries_raw: &raw[..n],
        })
        .to_vec(CLUSTER, 2)
        .unwrap()
    }

    proptest! {
        #[test]
        fn round_trip(instance in 0u64..u64::MAX,
                      payloads in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 1..8)) {
            let p = batch(instance, &payloads);
            let r = encode_record(&p, CLUSTER).unwrap();
            let d = parse_record(&r, CLUSTER).unwrap();
            prop_assert_eq!(d.instance, instance);
            prop_assert_eq!(&d.packet, &p);
            let got: Vec<Vec<u8>> = d.decide().entries().map(|e| e.payload.to_vec()).collect();
            prop_assert_eq!(got, payloads);
            // A full slot (data area padded with garbage after len) parses the same.
            let mut slot = r.clone();
            slot.resize(common::SLOT_LEN, 0xAB);
            prop_assert_eq!(parse_record(&slot, CLUSTER).unwrap(), d);
        }

        #[test]
        fn any_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse_record(&bytes, CLUSTER);
        }

        #[test]
        fn any_header_change_is_refused(instance in 0u64..u64::MAX - 1, at in 0usize..SLOT_HEADER_LEN, flip in 1u8..=255) {
            let p = batch(instance, &[b"x".to_vec()]);
            let mut r = encode_record(&p, CLUSTER).unwrap();
            // reserved byte and the CPU word are diagnostics, not checked
            prop_assume!(at != slot::RESERVED && !(slot::CPU..slot::CPU + 4).contains(&at));
            r[at] ^= flip;
            prop_assert!(parse_record(&r, CLUSTER).is_err());
        }
    }

    #[test]
    fn not_committed_and_wrong_cluster() {
        let p = batch(5, &[b"abc".to_vec()]);
        let mut r = encode_record(&p, CLUSTER).unwrap();
        assert!(matches!(
            parse_record(&r, CLUSTER + 1),
            Err(RecordError::Corrupt("cluster_id"))
        ));
        r[..8].fill(0);
        assert_eq!(parse_record(&r, CLUSTER), Err(RecordError::NotCommitted));
    }
}
