//! The software engine's decision log: proto's [`proto::log`] (one log and one snapshot codec
//! for the engine, the simulator and every joiner), and the lines `soc-ctl log` prints.

use std::sync::Arc;

pub use proto::log::{Conflict, DecisionLog, Logged, SnapshotError, encode};

/// Bytes as lowercase hex (how the control socket and the application fronts carry binary
/// state inside JSON).
pub fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// [`to_hex`] back; anything but an even number of hex digits is refused.
pub fn from_hex(s: &str) -> Result<Vec<u8>, String> {
    // Every byte a hex digit (from_str_radix alone would take a leading '+').
    if !s.bytes().all(|b| b.is_ascii_hexdigit()) || !s.len().is_multiple_of(2) {
        return Err("not hex: odd length or not a hex digit".into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| "not hex".to_string()))
        .collect()
}

/// Lines for `soc-ctl log`.
pub fn lines(range: &[(u64, Arc<Logged>)]) -> Vec<String> {
    range.iter().map(|(i, l)| l.line(*i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_hex() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(from_hex(&to_hex(&all)), Ok(all));
        assert_eq!(from_hex(""), Ok(vec![]));
        for bad in ["0", "0g", "é0", "+1", "123"] {
            assert!(from_hex(bad).is_err(), "{bad}");
        }
    }
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
