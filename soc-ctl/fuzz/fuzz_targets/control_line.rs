//! Fuzz `parse_control_line` (the engine's control socket protocol).
//!
//! Input: the bytes as UTF-8 (an invalid sequence ends the text: its valid prefix is parsed).
//! Checks: never panics; an error says something; the result depends only on the words (the
//! line with its words joined by single spaces parses the same); an accepted request, written
//! back in its canonical text form, parses to itself, and refuses a trailing word.
#![no_main]

use libfuzzer_sys::fuzz_target;
use soc_ctl::engine::{CtlRequest, parse_control_line};

fn utf8_prefix(data: &[u8]) -> &str {
    match std::str::from_utf8(data) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&data[..e.valid_up_to()]).expect("the valid prefix"),
    }
}

/// The request's canonical text form (decimal numbers, single spaces).
fn text(r: &CtlRequest) -> String {
    match r {
        CtlRequest::Read(a) => format!("read {a}"),
        CtlRequest::Write(a, v) => format!("write {a} {v}"),
        CtlRequest::Status => "status".into(),
        CtlRequest::Log(from, to) => format!("log {from} {to}"),
        CtlRequest::Entries(from, to) => format!("entries {from} {to}"),
        CtlRequest::Join(m) => format!("join {m}"),
        CtlRequest::DropTree(t, on) => format!("drop-tree {t} {}", if *on { "on" } else { "off" }),
        CtlRequest::ResetStats => "reset-stats".into(),
    }
}

fuzz_target!(|data: &[u8]| {
    let line = utf8_prefix(data);
    let r = parse_control_line(line);
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(parse_control_line(&words.join(" ")), r, "{line:?}");
    match r {
        Err(e) => assert!(!e.is_empty(), "{line:?}: empty error"),
        Ok(req) => {
            let canonical = text(&req);
            assert_eq!(
                parse_control_line(&canonical),
                Ok(req),
                "{line:?} -> {canonical:?}"
            );
            let longer = format!("{canonical} x");
            assert!(parse_control_line(&longer).is_err(), "{longer:?} accepted");
        }
    }
});
