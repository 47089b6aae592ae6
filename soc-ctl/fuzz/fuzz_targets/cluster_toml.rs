//! Fuzz `ClusterFile::parse` (cluster.toml).
//!
//! Input: the bytes as UTF-8 (an invalid sequence ends the text: its valid prefix is parsed).
//! Checks: `parse` never panics; an error names a key and says what is wrong; an accepted file
//! validates, gives every node a setup, and survives `to_toml` + `parse` unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use soc_ctl::cluster::ClusterFile;

fn utf8_prefix(data: &[u8]) -> &str {
    match std::str::from_utf8(data) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&data[..e.valid_up_to()]).expect("the valid prefix"),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = utf8_prefix(data);
    match ClusterFile::parse(text) {
        Err(e) => {
            assert!(!e.key.is_empty(), "empty key: {e:?}");
            assert!(!e.message.is_empty(), "empty message: {e:?}");
        }
        Ok(f) => {
            assert_eq!(f.validate(), Ok(()));
            for id in 0..f.nodes.len() as u64 {
                let s = f
                    .node(id)
                    .unwrap_or_else(|e| panic!("node {id} of an accepted file: {e}"));
                assert_eq!(u64::from(s.config.node_id), id);
            }
            let again = f.to_toml();
            assert_eq!(ClusterFile::parse(&again), Ok(f), "re-parsing {again}");
        }
    }
});
