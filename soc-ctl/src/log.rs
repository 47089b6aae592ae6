//! The software engine's decision log: proto's [`proto::log`] (one log and one snapshot codec
//! for the engine, the simulator and every joiner), and the lines `soc-ctl log` prints.

use std::sync::Arc;

pub use proto::log::{Conflict, DecisionLog, Logged, SnapshotError, encode};

/// Lines for `soc-ctl log`.
pub fn lines(range: &[(u64, Arc<Logged>)]) -> Vec<String> {
    range.iter().map(|(i, l)| l.line(*i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::wire::DecideKind;

    fn logged(n: u8) -> Arc<Logged> {
        Arc::new(Logged {
            kind: DecideKind::Batch,
            count: 1,
            entries: vec![n; 20],
        })
    }

    #[test]
    fn truncation_keeps_the_newest_and_every_cut_snapshot_is_refused_or_whole() {
        let mut a = DecisionLog::default();
        for i in 1..=5 {
            a.map.insert(i, logged(i as u8));
        }
        assert_eq!(lines(&a.range(0, 10)).len(), 5);
        let mut t = a.clone();
        assert_eq!(t.truncate_to(2), 3);
        assert_eq!(t.map.keys().copied().collect::<Vec<_>>(), [4, 5]);
        assert_eq!(t.truncate_to(0), 1, "at least one instance is kept");
        let enc = a.encode(0, 5);
        let rec = 15 + 20;
        for cut in 0..enc.len() {
            let r = DecisionLog::decode(&enc[..cut]);
            assert!(r.is_err() || cut % rec == 0, "cut {cut}");
        }
    }
}
