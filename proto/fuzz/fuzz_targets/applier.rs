//! Fuzz `apply::Applier::decode` (the exactly-once record in an application snapshot).
//!
//! Checks: no panic and no huge allocation on any input; whatever decodes encodes back to
//! exactly the input bytes (the encoding is canonical).
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::apply::Applier;

fuzz_target!(|data: &[u8]| {
    if let Ok(a) = Applier::decode(data) {
        assert_eq!(a.encode(), data);
    }
});
