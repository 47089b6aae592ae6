//! The checker against histories produced by a real register: every history where each
//! operation took effect at one instant inside its interval is linearizable, and a read of a
//! value nobody ever wrote makes it not linearizable.

use host_app::lincheck::{Event, Op, Verdict, check};
use proptest::prelude::*;

/// Operations as (client-chosen start, duration, kind 0=set 1=del 2=get, value, returns?).
fn history(spec: &[(u64, u64, u8, u8, bool)]) -> Vec<Event> {
    // Each operation takes effect at start + duration/2; apply them in that order to a register.
    let mut ops: Vec<(u64, usize)> = spec
        .iter()
        .enumerate()
        .map(|(i, s)| (s.0 * 4 + s.1 * 2 + 1, i))
        .collect();
    ops.sort();
    let mut reg: Option<Vec<u8>> = None;
    let mut out: Vec<Option<Event>> = vec![None; spec.len()];
    for (_, i) in ops {
        let (start, dur, kind, val, returns) = spec[i];
        let invoke = start * 4;
        let ret = invoke + dur * 4 + 2;
        let (op, read) = match kind % 3 {
            0 => {
                reg = Some(vec![val]);
                (Op::Set(vec![val]), None)
            }
            1 => {
                reg = None;
                (Op::Del, None)
            }
            _ => (Op::Get, reg.clone()),
        };
        // Only writes may be left without a return (a read that never returned is dropped).
        let ret = if returns || matches!(op, Op::Get) {
            Some(ret)
        } else {
            None
        };
        out[i] = Some(Event {
            key: b"k".to_vec(),
            op,
            read,
            invoke,
            ret,
        });
    }
    out.into_iter().flatten().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn histories_of_a_real_register_are_linearizable(
        spec in prop::collection::vec((0u64..40, 0u64..6, 0u8..3, 0u8..4, prop::bool::weighted(0.9)), 1..24)
    ) {
        let h = history(&spec);
        prop_assert_eq!(check(&h, 1_000_000), Verdict::Linearizable);
    }

    #[test]
    fn a_read_of_a_value_never_written_is_caught(
        spec in prop::collection::vec((0u64..40, 0u64..6, 0u8..3, 0u8..4, Just(true)), 1..24),
        which in any::<prop::sample::Index>(),
    ) {
        let mut h = history(&spec);
        let reads: Vec<usize> = (0..h.len()).filter(|&i| h[i].op == Op::Get).collect();
        prop_assume!(!reads.is_empty());
        let r = reads[which.index(reads.len())];
        h[r].read = Some(vec![99]);
        prop_assert!(matches!(check(&h, 1_000_000), Verdict::NotLinearizable(_)));
    }
}
