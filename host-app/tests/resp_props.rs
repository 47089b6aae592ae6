//! RESP parser properties: every value round-trips, every strict prefix asks for more bytes,
//! and arbitrary bytes never panic (an answer is a value, a wait, or an error).

use host_app::resp::{Value, parse};
use proptest::prelude::*;

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        "[a-zA-Z0-9 ]{0,12}".prop_map(Value::Simple),
        "[a-zA-Z0-9 ]{0,12}".prop_map(Value::Error),
        any::<i64>().prop_map(Value::Integer),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..40)).prop_map(Value::Bulk),
        Just(Value::Array(None)),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop::collection::vec(inner, 0..6).prop_map(|v| Value::Array(Some(v)))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn values_round_trip_and_prefixes_wait(v in value()) {
        let b = v.to_bytes();
        prop_assert_eq!(parse(&b).unwrap(), Some((v, b.len())));
        for cut in 0..b.len() {
            prop_assert_eq!(parse(&b[..cut]).unwrap(), None);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(Some((v, used))) = parse(&b) {
            prop_assert!(used <= b.len());
            prop_assert_eq!(v.to_bytes(), b[..used].to_vec());
        }
    }
}
