//! Fuzz `DecisionLog::decode` (the decision-log snapshot a joiner installs).
//!
//! Checks: `decode` never panics; whatever it accepts is canonical (encoding the log again
//! gives exactly the input bytes), holds only Batch/Config values, formats as `soc-ctl log`
//! lines, and merges into an empty log (all new) and into itself (nothing new). Every strict
//! prefix of an accepted input that does not end at a record boundary is refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::wire::DecideKind;
use soc_ctl::log::DecisionLog;

/// The snapshot's per-record header: instance u64, kind u8, count u16, len u32.
const REC_HEADER: usize = 8 + 1 + 2 + 4;

fuzz_target!(|data: &[u8]| {
    let Ok(log) = DecisionLog::decode(data) else {
        return;
    };
    assert_eq!(log.encode(u64::MAX), data, "decode is not canonical");
    assert!(
        log.map
            .values()
            .all(|l| matches!(l.kind, DecideKind::Batch | DecideKind::Config))
    );
    assert_eq!(log.lines(0, u64::MAX).len(), log.map.len());

    let mut empty = DecisionLog::default();
    assert_eq!(empty.merge(log.clone()), Ok(log.map.len()));
    assert_eq!(empty, log);
    let mut same = log.clone();
    assert_eq!(same.merge(log.clone()), Ok(0));

    // Truncations: only record boundaries decode (checked on small inputs: quadratic).
    if data.len() <= 512 {
        let mut boundaries = vec![0usize];
        for l in log.map.values() {
            boundaries.push(boundaries.last().unwrap() + REC_HEADER + l.entries.len());
        }
        for cut in 0..data.len() {
            let r = DecisionLog::decode(&data[..cut]);
            assert_eq!(
                r.is_ok(),
                boundaries.contains(&cut),
                "prefix of {cut} bytes"
            );
        }
    }
});
