//! Property tests for soc-ctl's parsers: `cluster.toml` (`ClusterFile::parse`), the decision-log
//! snapshot (`DecisionLog::decode`), the control protocol (`parse_control_line`) and the TCP
//! packet reader (`read_packet`).
//!
//! None of them may panic on any input; what they accept round-trips; what they refuse is an
//! error that says something.

use std::collections::BTreeMap;
use std::io::{self, Cursor, Read};
use std::sync::Arc;

use proptest::prelude::*;
use proto::wire::{DecideKind, HEADER_LEN};
use soc_ctl::cluster::ClusterFile;
use soc_ctl::engine::{CtlRequest, parse_control_line, read_packet};
use soc_ctl::log::{Conflict, DecisionLog, Logged};

// ---------------------------------------------------------------------------
// cluster.toml
// ---------------------------------------------------------------------------

/// A valid loopback cluster: 1..=8 nodes, 1..=4 trees, any 127.base/8 subnet, ports that fit.
fn loopback_file() -> impl Strategy<Value = ClusterFile> {
    (1u8..=8, 1u8..=4, any::<u8>(), 1u16..=65533)
        .prop_map(|(n, trees, base, port)| ClusterFile::loopback(n, trees, base, port))
}

/// The checks every `parse` result must pass: an error names a key and says what is wrong; an
/// accepted file is valid and survives `to_toml` + `parse` unchanged.
fn check_cluster_parse(text: &str) -> Result<(), TestCaseError> {
    match ClusterFile::parse(text) {
        Err(e) => {
            prop_assert!(!e.key.is_empty(), "empty key in {:?} for {:?}", e, text);
            prop_assert!(
                !e.message.is_empty(),
                "empty message in {:?} for {:?}",
                e,
                text
            );
        }
        Ok(f) => {
            prop_assert_eq!(f.validate(), Ok(()));
            let again = f.to_toml();
            prop_assert_eq!(ClusterFile::parse(&again), Ok(f), "re-parsing {}", again);
        }
    }
    Ok(())
}

/// One edit of a file's text (positions are taken modulo the text's length).
#[derive(Clone, Debug)]
enum TextEdit {
    /// Remove `len` chars at `at`.
    Delete { at: usize, len: usize },
    /// Insert `s` at `at`.
    Insert { at: usize, s: String },
    /// Replace the char at `at` with `c`.
    Replace { at: usize, c: char },
    /// Replace the `nth` number value with `num`.
    Number { nth: usize, num: String },
    /// Remove line `nth`.
    DropLine { nth: usize },
    /// Repeat line `nth`.
    DupLine { nth: usize },
    /// Swap lines `a` and `b`.
    SwapLines { a: usize, b: usize },
}

/// Text that looks like TOML (keys, brackets, quotes, digits, dots, newlines) or anything at all.
fn toml_ish() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_\\[\\]=\". 0-9\n#{},'-]{0,12}",
        prop::sample::select(vec![
            "\n[timing]\n",
            "\n[[nodes]]\n",
            "\n[[trees]]\ngroup = \"239.1.2.3\"\n",
            "transport = \"multicast\"\n",
            "tree_ifaces = [\"lo\", \"eth0\"]\n",
            "id = 0\n",
            "= ",
            "\"",
            "'''",
            "\"\"\"",
            "[",
            "]]",
            "é",
            "\u{2028}",
            "\r\n",
            "\t",
        ])
        .prop_map(str::to_string),
        any::<String>(),
    ]
}

fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => any::<u64>().prop_map(|v| v.to_string()),
        1 => any::<i64>().prop_map(|v| v.to_string()),
        4 => (0u64..100_000).prop_map(|v| v.to_string()),
        1 => any::<u32>().prop_map(|v| format!("0x{v:x}")),
        2 => prop::sample::select(vec![
            "0", "1", "-1", "1_000", "1e3", "1.5", "inf", "nan", "+7", "0o17", "0b11", "",
            "00", "256", "65536", "18446744073709551616", "9223372036854775808",
        ])
        .prop_map(str::to_string),
    ]
}

fn text_edit() -> impl Strategy<Value = TextEdit> {
    let at = any::<usize>();
    prop_oneof![
        1 => (at, 1usize..40).prop_map(|(at, len)| TextEdit::Delete { at, len }),
        2 => (at, toml_ish()).prop_map(|(at, s)| TextEdit::Insert { at, s }),
        1 => (at, any::<char>()).prop_map(|(at, c)| TextEdit::Replace { at, c }),
        5 => (any::<usize>(), number_text()).prop_map(|(nth, num)| TextEdit::Number { nth, num }),
        2 => any::<usize>().prop_map(|nth| TextEdit::DropLine { nth }),
        1 => any::<usize>().prop_map(|nth| TextEdit::DupLine { nth }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| TextEdit::SwapLines { a, b }),
    ]
}

fn apply_edit(text: &str, e: &TextEdit) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    match e {
        TextEdit::Delete { at, len } => {
            if n > 0 {
                let at = at % n;
                chars.drain(at..(at + len).min(n));
            }
        }
        TextEdit::Insert { at, s } => {
            let at = at % (n + 1);
            chars.splice(at..at, s.chars());
        }
        TextEdit::Replace { at, c } => {
            if n > 0 {
                chars[at % n] = *c;
            }
        }
        TextEdit::Number { nth, num } => {
            let mut runs = Vec::new();
            let mut i = 0;
            while i < n {
                // A number value (`key = 123`), not the digits of an address.
                if chars[i].is_ascii_digit() && i >= 2 && chars[i - 2..i] == ['=', ' '] {
                    let start = i;
                    while i < n && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                    runs.push(start..i);
                } else {
                    i += 1;
                }
            }
            if !runs.is_empty() {
                let r = runs[nth % runs.len()].clone();
                chars.splice(r, num.chars());
            }
        }
        TextEdit::DropLine { nth }
        | TextEdit::DupLine { nth }
        | TextEdit::SwapLines { a: nth, .. } => {
            let mut lines: Vec<&str> = text.split('\n').collect();
            let k = nth % lines.len();
            match e {
                TextEdit::DropLine { .. } => {
                    lines.remove(k);
                }
                TextEdit::DupLine { .. } => lines.insert(k, lines[k]),
                TextEdit::SwapLines { b, .. } => {
                    let b = b % lines.len();
                    lines.swap(k, b);
                }
                _ => unreachable!(),
            }
            return lines.join("\n");
        }
    }
    chars.into_iter().collect()
}

/// A loopback file with some numbers (timing, limits, ports, cluster id) replaced by random
/// ones (small, near the legal bounds, or up to i64::MAX: TOML integers are signed 64-bit).
fn perturbed_file() -> impl Strategy<Value = ClusterFile> {
    let v = prop_oneof![
        0u64..=20,
        0u64..=70_000,
        0u64..=100_000_000,
        Just(u32::MAX as u64),
        Just(u32::MAX as u64 + 1),
        0u64..=i64::MAX as u64,
    ];
    (
        loopback_file(),
        proptest::collection::vec((0usize..12, v), 0..3),
    )
        .prop_map(|(mut f, changes)| {
            for (field, v) in changes {
                *match field {
                    0 => &mut f.cluster_id,
                    1 => &mut f.timing.loop_period_ns,
                    2 => &mut f.timing.timeout_ns,
                    3 => &mut f.timing.delta_ns,
                    4 => &mut f.timing.drift_ns,
                    5 => &mut f.timing.late_tick_slack_ns,
                    6 => &mut f.limits.fifo_depth,
                    7 => &mut f.limits.batch_max,
                    8 => &mut f.limits.mtu,
                    9 => &mut f.ports.decide,
                    10 => &mut f.ports.client,
                    _ => &mut f.ports.host,
                } = v;
            }
            f
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn valid_cluster_files_round_trip(f in loopback_file()) {
        let text = f.to_toml();
        prop_assert_eq!(f.validate(), Ok(()));
        prop_assert_eq!(ClusterFile::parse(&text), Ok(f.clone()));
        for id in 0..f.nodes.len() as u64 {
            let s = f.node(id).expect("every node of a valid file has a setup");
            prop_assert_eq!(s.config.node_id as u64, id);
            prop_assert_eq!(s.config.node_count as usize, f.nodes.len());
            prop_assert_eq!(s.config.trees as usize, f.trees.len());
        }
        prop_assert!(f.node(f.nodes.len() as u64).is_err());
    }

    /// `parse` is deserialization followed by `validate`: a file with random numbers parses
    /// exactly when it validates, and then to itself; else with validate's error.
    #[test]
    fn parse_is_deserialize_then_validate(f in perturbed_file()) {
        let text = f.to_toml();
        match f.validate() {
            Ok(()) => prop_assert_eq!(ClusterFile::parse(&text), Ok(f)),
            Err(e) => {
                prop_assert!(!e.key.is_empty() && !e.message.is_empty(), "{:?}", e);
                prop_assert_eq!(ClusterFile::parse(&text), Err(e));
            }
        }
    }

    #[test]
    fn mutated_cluster_files_never_panic(
        f in loopback_file(),
        edits in proptest::collection::vec(text_edit(), 1..4),
    ) {
        let mut text = f.to_toml();
        for e in &edits {
            text = apply_edit(&text, e);
        }
        check_cluster_parse(&text)?;
    }

    #[test]
    fn arbitrary_text_never_panics(text in prop_oneof![any::<String>(), toml_ish()]) {
        check_cluster_parse(&text)?;
    }
}

// ---------------------------------------------------------------------------
// decision-log snapshots
// ---------------------------------------------------------------------------

/// The snapshot's per-record header: instance u64, kind u8, count u16, len u32.
const REC_HEADER: usize = 8 + 1 + 2 + 4;

fn logged() -> impl Strategy<Value = Logged> {
    (
        prop_oneof![Just(DecideKind::Batch), Just(DecideKind::Config)],
        any::<u16>(),
        proptest::collection::vec(any::<u8>(), 0..48),
    )
        .prop_map(|(kind, count, entries)| Logged {
            kind,
            count,
            entries,
        })
}

/// Instances: dense from a random start, or spread over the whole u64 range.
fn instance_keys() -> impl Strategy<Value = Vec<u64>> {
    prop_oneof![
        (any::<u64>(), proptest::collection::vec(1u64..4, 0..12)).prop_map(|(start, gaps)| {
            let mut i = start;
            let mut keys = vec![i];
            for g in gaps {
                match i.checked_add(g) {
                    Some(n) => i = n,
                    None => break,
                }
                keys.push(i);
            }
            keys
        }),
        proptest::collection::btree_set(any::<u64>(), 0..12)
            .prop_map(|s| s.into_iter().collect::<Vec<_>>()),
    ]
}

fn decision_log() -> impl Strategy<Value = DecisionLog> {
    instance_keys()
        .prop_flat_map(|keys| {
            let n = keys.len();
            (Just(keys), proptest::collection::vec(logged(), n))
        })
        .prop_map(|(keys, values)| DecisionLog {
            map: keys
                .into_iter()
                .zip(values)
                .map(|(i, l)| (i, Arc::new(l)))
                .collect(),
        })
}

/// The whole log's encoding.
fn encode_all(log: &DecisionLog) -> Vec<u8> {
    log.encode(0, u64::MAX)
}

/// Whatever `decode` accepts is canonical: encoding it again gives the same bytes.
fn check_decode(b: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(log) = DecisionLog::decode(b) {
        prop_assert_eq!(encode_all(&log), b);
        prop_assert!(
            log.map
                .values()
                .all(|l| matches!(l.kind, DecideKind::Batch | DecideKind::Config))
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn snapshots_round_trip(log in decision_log()) {
        let b = encode_all(&log);
        let expected_len: usize = log.map.values().map(|l| REC_HEADER + l.entries.len()).sum();
        prop_assert_eq!(b.len(), expected_len);
        prop_assert_eq!(DecisionLog::decode(&b), Ok(log.clone()));
        // `encode(upto)` keeps exactly the instances <= upto.
        if let Some((&mid, _)) = log.map.iter().nth(log.map.len() / 2) {
            let head = DecisionLog::decode(&log.encode(0, mid)).unwrap();
            let want: BTreeMap<_, _> = log.map.range(..=mid).map(|(i, l)| (*i, l.clone())).collect();
            prop_assert_eq!(head.map, want);
        }
    }

    /// A strict prefix decodes iff it ends at a record boundary, and then to the records before it.
    #[test]
    fn truncated_snapshots_are_refused(log in decision_log()) {
        let b = encode_all(&log);
        let mut boundaries = vec![0usize];
        for l in log.map.values() {
            boundaries.push(boundaries.last().unwrap() + REC_HEADER + l.entries.len());
        }
        for cut in 0..b.len() {
            let r = DecisionLog::decode(&b[..cut]);
            match boundaries.iter().position(|&x| x == cut) {
                Some(k) => {
                    let want: BTreeMap<_, _> =
                        log.map.iter().take(k).map(|(i, l)| (*i, l.clone())).collect();
                    prop_assert_eq!(r.map(|d| d.map), Ok(want), "cut {}", cut);
                }
                None => prop_assert!(r.is_err(), "prefix of {} bytes (of {}) decodes", cut, b.len()),
            }
        }
    }

    /// Records out of order (or repeated), or of a kind that is not a value, are refused.
    #[test]
    fn disordered_or_bad_kind_snapshots_are_refused(
        log in decision_log(),
        a in any::<usize>(),
        bad_kind in prop_oneof![Just(0u8), Just(2u8), 4u8..=255],
    ) {
        prop_assume!(!log.map.is_empty());
        let recs: Vec<Vec<u8>> = log
            .map
            .iter()
            .map(|(i, l)| soc_ctl::log::encode(&[(*i, l.clone())]))
            .collect();
        // Repeat one record right after itself.
        let k = a % recs.len();
        let mut dup: Vec<u8> = Vec::new();
        for (j, r) in recs.iter().enumerate() {
            dup.extend_from_slice(r);
            if j == k {
                dup.extend_from_slice(r);
            }
        }
        prop_assert!(DecisionLog::decode(&dup).is_err());
        // Reverse the order (needs two records).
        if recs.len() > 1 {
            let rev: Vec<u8> = recs.iter().rev().flatten().copied().collect();
            prop_assert!(DecisionLog::decode(&rev).is_err());
        }
        // A kind byte that is not Batch or Config.
        let mut bad = recs.concat();
        let off: usize = recs[..k].iter().map(Vec::len).sum::<usize>() + 8;
        bad[off] = bad_kind;
        prop_assert!(DecisionLog::decode(&bad).is_err());
    }

    #[test]
    fn arbitrary_snapshot_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..512)) {
        check_decode(&b)?;
    }

    /// Random record-shaped bytes (a valid kind, small lengths) reach past the header checks.
    #[test]
    fn record_shaped_bytes_never_panic(
        recs in proptest::collection::vec(
            (any::<u64>(), 0u8..5, any::<u16>(), 0u32..40, proptest::collection::vec(any::<u8>(), 0..40)),
            0..6,
        ),
        cut in any::<usize>(),
    ) {
        let mut b = Vec::new();
        for (i, kind, count, len, body) in recs {
            b.extend_from_slice(&i.to_be_bytes());
            b.push(kind);
            b.extend_from_slice(&count.to_be_bytes());
            b.extend_from_slice(&len.to_be_bytes());
            b.extend_from_slice(&body);
        }
        check_decode(&b)?;
        let cut = cut % (b.len() + 1);
        check_decode(&b[..cut])?;
    }

    /// A merge that meets a conflicting instance changes nothing and names the first conflict;
    /// a merge without conflicts yields the union and counts the new instances.
    #[test]
    fn merge_conflicts_change_nothing(
        mine in decision_log(),
        theirs in decision_log(),
        pick in any::<usize>(),
        other_value in logged(),
    ) {
        // Without conflicts: the union.
        let mut clean = theirs.clone();
        for (i, l) in &mine.map {
            clean.map.insert(*i, l.clone());
        }
        let mut merged = mine.clone();
        let new = clean.map.keys().filter(|i| !mine.map.contains_key(i)).count();
        prop_assert_eq!(merged.merge(clean.clone()), Ok(new));
        prop_assert_eq!(&merged, &clean);
        // Merging the same log again adds nothing.
        prop_assert_eq!(merged.merge(clean.clone()), Ok(0));

        // With a conflict at one of mine's instances.
        prop_assume!(!mine.map.is_empty());
        let (&at, old) = mine.map.iter().nth(pick % mine.map.len()).unwrap();
        prop_assume!(**old != other_value);
        let mut conflicting = theirs;
        conflicting.map.insert(at, Arc::new(other_value));
        let first = conflicting
            .map
            .iter()
            .find(|(i, l)| mine.map.get(*i).is_some_and(|m| m != *l))
            .map(|(i, _)| *i)
            .unwrap();
        let mut m = mine.clone();
        prop_assert_eq!(m.merge(conflicting), Err(Conflict { instance: first }));
        prop_assert_eq!(m, mine);
    }
}

// ---------------------------------------------------------------------------
// control protocol
// ---------------------------------------------------------------------------

fn ctl_request() -> impl Strategy<Value = CtlRequest> {
    prop_oneof![
        any::<u16>().prop_map(CtlRequest::Read),
        (any::<u16>(), any::<u32>()).prop_map(|(a, v)| CtlRequest::Write(a, v)),
        Just(CtlRequest::Status),
        (any::<u64>(), any::<u64>()).prop_map(|(a, b)| CtlRequest::Log(a, b)),
        (any::<u64>(), any::<u64>()).prop_map(|(a, b)| CtlRequest::Entries(a, b)),
        (any::<u64>(), any::<u64>()).prop_map(|(a, b)| CtlRequest::Decisions(a, b)),
        any::<u64>().prop_map(CtlRequest::Join),
        (any::<u8>(), any::<bool>()).prop_map(|(t, on)| CtlRequest::DropTree(t, on)),
        Just(CtlRequest::ResetStats),
        Just(CtlRequest::ReloadKeys),
    ]
}

/// How a number is written: decimal, 0x lower-case hex, 0x upper-case hex, 0x with zeros.
fn write_num(v: u64, style: u8) -> String {
    match style % 4 {
        0 => v.to_string(),
        1 => format!("{v:#x}"),
        2 => format!("0x{v:X}"),
        _ => format!("0x000{v:x}"),
    }
}

/// The request's words, numbers written in `styles` (cycled).
fn words(r: &CtlRequest, styles: &[u8]) -> Vec<String> {
    let mut s = styles.iter().cycle();
    let mut n = |v: u64| write_num(v, *s.next().unwrap());
    match r {
        CtlRequest::Read(a) => vec!["read".into(), n(*a as u64)],
        CtlRequest::Write(a, v) => vec!["write".into(), n(*a as u64), n(*v as u64)],
        CtlRequest::Status => vec!["status".into()],
        CtlRequest::Log(a, b) => vec!["log".into(), n(*a), n(*b)],
        CtlRequest::Entries(a, b) => vec!["entries".into(), n(*a), n(*b)],
        CtlRequest::Decisions(a, b) => vec!["decisions".into(), n(*a), n(*b)],
        CtlRequest::Join(m) => vec!["join".into(), n(*m)],
        CtlRequest::DropTree(t, on) => vec![
            "drop-tree".into(),
            n(*t as u64),
            if *on { "on" } else { "off" }.into(),
        ],
        CtlRequest::ResetStats => vec!["reset-stats".into()],
        CtlRequest::ReloadKeys => vec!["reload-keys".into()],
    }
}

/// Blanks between (and around) words: anything `split_whitespace` splits on.
fn blanks() -> impl Strategy<Value = String> {
    "[ \t\u{0B}\u{0C}\r\u{A0}\u{2003}\u{3000}]{1,3}"
}

fn join_words(words: &[String], seps: &[String], lead: bool, trail: bool) -> String {
    let mut line = String::new();
    if lead {
        line.push_str(&seps[0]);
    }
    for (k, w) in words.iter().enumerate() {
        if k > 0 {
            line.push_str(&seps[k % seps.len()]);
        }
        line.push_str(w);
    }
    if trail {
        line.push_str(&seps[seps.len() - 1]);
    }
    line
}

/// Control-protocol-like lines: mostly a known verb and 0..=3 arguments (numbers of every size,
/// on/off, noise), separated by all kinds of blanks.
fn ctl_ish() -> impl Strategy<Value = String> {
    let verb = prop_oneof![
        6 => prop::sample::select(vec![
            "read", "write", "status", "log", "join", "drop-tree", "reset-stats",
        ])
        .prop_map(str::to_string),
        1 => prop::sample::select(vec!["READ", "drop_tree", "on", "", "0x10"]).prop_map(str::to_string),
        1 => "\\PC{0,6}",
    ];
    let arg = prop_oneof![
        3 => (0u64..300).prop_map(|v| v.to_string()),
        2 => (any::<u64>(), any::<u8>()).prop_map(|(v, style)| write_num(v, style)),
        2 => prop::sample::select(vec![
            "on", "off", "0x", "0x-1", "-1", "+1", "0x+1", "0X10", "1_0", "65535", "65536",
            "255", "256", "4294967295", "4294967296", "18446744073709551615",
            "18446744073709551616", "0x10000", "0x100000000",
        ])
        .prop_map(str::to_string),
        1 => "[0-9]{17,25}",
        1 => "0x[0-9a-fA-F]{15,20}",
        1 => "\\PC{1,4}",
    ];
    (
        blanks(),
        verb,
        proptest::collection::vec((blanks(), arg), 0..=3),
        proptest::option::of(blanks()),
    )
        .prop_map(|(lead, verb, args, trail)| {
            let mut line = if lead.len() % 2 == 0 {
                lead
            } else {
                String::new()
            };
            line.push_str(&verb);
            for (b, a) in args {
                line.push_str(&b);
                line.push_str(&a);
            }
            line.push_str(&trail.unwrap_or_default());
            line
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn control_lines_never_panic(line in prop_oneof![any::<String>(), ctl_ish()]) {
        let r = parse_control_line(&line);
        // Only the words count: the same words joined by single spaces parse the same.
        let words: Vec<&str> = line.split_whitespace().collect();
        prop_assert_eq!(parse_control_line(&words.join(" ")), r.clone(), "{:?}", line);
        match r {
            Err(e) => prop_assert!(!e.is_empty()),
            // What parses is refused again with a trailing word.
            Ok(_) => {
                let longer = format!("{line} extra");
                prop_assert!(parse_control_line(&longer).is_err(), "{:?} parses", longer);
            }
        }
    }

    #[test]
    fn control_requests_round_trip(
        r in ctl_request(),
        styles in proptest::collection::vec(any::<u8>(), 1..4),
        seps in proptest::collection::vec(blanks(), 1..4),
        lead in any::<bool>(),
        trail in any::<bool>(),
    ) {
        let plain = words(&r, &[0]).join(" ");
        prop_assert_eq!(parse_control_line(&plain), Ok(r.clone()), "{:?}", plain);
        let line = join_words(&words(&r, &styles), &seps, lead, trail);
        prop_assert_eq!(parse_control_line(&line), Ok(r), "{:?}", line);
    }

    #[test]
    fn trailing_words_are_refused(
        r in ctl_request(),
        styles in proptest::collection::vec(any::<u8>(), 1..4),
        extra in prop_oneof!["[!-~]{1,10}", "\\PC{1,4}".prop_filter("a word", |s| !s.trim().is_empty())],
        sep in blanks(),
    ) {
        let mut w = words(&r, &styles);
        w.push(extra.trim().to_string());
        let line = w.join(&sep);
        let e = parse_control_line(&line);
        prop_assert!(e.is_err(), "{:?} gives {:?}", line, e);
    }

    /// Numbers too large for their field are refused, never truncated.
    #[test]
    fn out_of_range_numbers_are_refused(
        big16 in (u16::MAX as u64 + 1)..=u64::MAX,
        big32 in (u32::MAX as u64 + 1)..=u64::MAX,
        big8 in (u8::MAX as u64 + 1)..=u64::MAX,
        style in any::<u8>(),
    ) {
        let n = |v| write_num(v, style);
        let lines = [
            format!("read {}", n(big16)),
            format!("write {} 1", n(big16)),
            format!("write 1 {}", n(big32)),
            format!("drop-tree {} on", n(big8)),
            // Beyond u64.
            format!("join {}0", u64::MAX),
            format!("log 0 0x1{big8:016x}"),
        ];
        for line in &lines {
            let r = parse_control_line(line);
            prop_assert!(r.is_err(), "{:?} gives {:?}", line, r);
        }
    }

    /// A request missing its last word is refused.
    #[test]
    fn missing_words_are_refused(r in ctl_request(), styles in proptest::collection::vec(any::<u8>(), 1..4)) {
        let mut w = words(&r, &styles);
        prop_assume!(w.len() > 1);
        w.pop();
        prop_assert!(parse_control_line(&w.join(" ")).is_err());
    }
}

// ---------------------------------------------------------------------------
// TCP packet reader
// ---------------------------------------------------------------------------

/// A stream that hands out at most `chunk` bytes per read and is interrupted now and then
/// (as a TCP stream may be): `read_exact` must not care.
struct Trickle<'a> {
    data: &'a [u8],
    chunk: usize,
    interrupt_every: usize,
    reads: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reads += 1;
        if self.interrupt_every > 0 && self.reads.is_multiple_of(self.interrupt_every) {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let n = self.chunk.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// What `read_packet` must return for a stream holding `b`: the header plus body_len bytes
/// (plus the 8-byte tag when the key id, byte 11, is not 0), or an error if the stream ends
/// first.
fn expected_packet(b: &[u8]) -> Option<&[u8]> {
    if b.len() < HEADER_LEN {
        return None;
    }
    let tag = if b[11] == 0 { 0 } else { proto::wire::TAG_LEN };
    let n = HEADER_LEN + u16::from_be_bytes([b[8], b[9]]) as usize + tag;
    b.get(..n)
}

/// A header claiming `body_len`, then some body bytes (not necessarily that many).
fn packet_ish() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec(any::<u8>(), 8),
        prop_oneof![0u16..64, any::<u16>()],
        proptest::collection::vec(any::<u8>(), 2),
        proptest::collection::vec(any::<u8>(), 0..96),
    )
        .prop_map(|(head, len, rest, body)| {
            let mut b = head;
            b.extend_from_slice(&len.to_be_bytes());
            b.extend_from_slice(&rest);
            b.extend_from_slice(&body);
            b
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn read_packet_takes_exactly_one_packet(
        b in prop_oneof![proptest::collection::vec(any::<u8>(), 0..128), packet_ish()],
        chunk in 1usize..20,
        interrupt_every in prop_oneof![Just(0usize), 2usize..5],
    ) {
        let mut c = Cursor::new(&b[..]);
        let r = read_packet(&mut c);
        match expected_packet(&b) {
            Some(p) => {
                prop_assert_eq!(r.as_deref().ok(), Some(p));
                prop_assert_eq!(c.position() as usize, p.len(), "read past the packet");
            }
            None => prop_assert_eq!(r.map_err(|e| e.kind()), Err(io::ErrorKind::UnexpectedEof)),
        }
        // The same through a trickling, interrupted stream.
        let mut t = Trickle { data: &b, chunk, interrupt_every, reads: 0 };
        let r = read_packet(&mut t).ok();
        prop_assert_eq!(r.as_deref(), expected_packet(&b));
    }

    /// Packets back to back on one stream come out one by one.
    #[test]
    fn read_packet_splits_a_stream(
        bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..6),
        tail in proptest::collection::vec(any::<u8>(), 0..11),
    ) {
        let mut stream = Vec::new();
        for body in &bodies {
            stream.extend_from_slice(&[0x4E, 0x43, 1, 2, 0, 0, 0, 7]);
            stream.extend_from_slice(&(body.len() as u16).to_be_bytes());
            stream.extend_from_slice(&[0, 0]);
            stream.extend_from_slice(body);
        }
        stream.extend_from_slice(&tail);
        let mut c = Cursor::new(&stream[..]);
        for body in &bodies {
            let p = read_packet(&mut c).expect("a whole packet");
            prop_assert_eq!(p.len(), HEADER_LEN + body.len());
            prop_assert_eq!(&p[HEADER_LEN..], &body[..]);
        }
        // Fewer than 12 bytes left: an error, never a short packet.
        prop_assert!(read_packet(&mut c).is_err());
    }
}
