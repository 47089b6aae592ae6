//! For the metrics tests of every crate (`#[path]`-included): a `curl`-style HTTP GET over a
//! plain TCP stream, and a strict parser of the Prometheus text format 0.0.4 that refuses any
//! line it does not understand.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// One sample.
#[derive(Clone, Debug)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

/// A parsed page: families (name → type) and samples in page order.
#[derive(Debug, Default)]
pub struct Page {
    pub types: HashMap<String, String>,
    pub help: HashMap<String, String>,
    pub samples: Vec<Sample>,
}

impl Page {
    /// The value of the only sample named `name` with (at least) these labels.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let m: Vec<&Sample> = self
            .samples
            .iter()
            .filter(|s| {
                s.name == name
                    && labels
                        .iter()
                        .all(|(k, v)| s.labels.iter().any(|(a, b)| a == k && b == v))
            })
            .collect();
        assert!(
            m.len() <= 1,
            "{name} {labels:?} matches {} samples",
            m.len()
        );
        m.first().map(|s| s.value)
    }

    /// `get`, which must be there.
    pub fn must(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels)
            .unwrap_or_else(|| panic!("no sample {name} {labels:?}"))
    }
}

/// `GET path` at `addr`: (status code, Content-Type, body).
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String, String) {
    let mut c = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    c.read_to_string(&mut raw).expect("read the answer");
    let (head, body) = raw.split_once("\r\n\r\n").expect("an HTTP answer");
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .expect("a status line");
    let mut ctype = String::new();
    let mut len = None;
    for l in lines {
        let (k, v) = l.split_once(':').expect("a header");
        match k.to_ascii_lowercase().as_str() {
            "content-type" => ctype = v.trim().to_string(),
            "content-length" => len = Some(v.trim().parse::<usize>().unwrap()),
            _ => {}
        }
    }
    assert_eq!(len, Some(body.len()), "Content-Length");
    (status, ctype, body.to_string())
}

/// Fetch `/metrics` (which must answer 200 with the 0.0.4 text type) and parse it strictly.
pub fn scrape(addr: SocketAddr) -> Page {
    let (status, ctype, body) = http_get(addr, "/metrics");
    assert_eq!(status, 200, "{body}");
    assert!(
        ctype.starts_with("text/plain; version=0.0.4"),
        "Content-Type {ctype}"
    );
    parse(&body).unwrap_or_else(|e| panic!("{e}\n--- page:\n{body}"))
}

fn is_name(s: &str, colon: bool) -> bool {
    let mut c = s.chars();
    let ok_first = |ch: char| ch.is_ascii_alphabetic() || ch == '_' || (colon && ch == ':');
    c.next().is_some_and(ok_first)
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || (colon && ch == ':'))
}

fn parse_value(v: &str) -> Option<f64> {
    match v {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => {
            // Go's ParseFloat syntax: digits, '.', exponent, sign; no words like "inf".
            if v.is_empty()
                || !v
                    .chars()
                    .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
            {
                return None;
            }
            v.parse().ok()
        }
    }
}

/// The family a sample belongs to (a histogram's `_bucket`, `_sum`, `_count`).
fn family_of<'a>(name: &'a str, types: &HashMap<String, String>) -> &'a str {
    if types.contains_key(name) {
        return name;
    }
    for suf in ["_bucket", "_sum", "_count"] {
        if let Some(f) = name.strip_suffix(suf)
            && matches!(
                types.get(f).map(String::as_str),
                Some("histogram" | "summary")
            )
        {
            return f;
        }
    }
    name
}

/// Parse a text-format page; every line must be a HELP, a TYPE, or a sample, every family's
/// TYPE must come before its samples and only once, and a family's samples must be together.
pub fn parse(text: &str) -> Result<Page, String> {
    let mut p = Page::default();
    let mut done: HashSet<String> = HashSet::new();
    let mut current: Option<String> = None;
    let mut seen: HashSet<String> = HashSet::new();
    if !text.is_empty() && !text.ends_with('\n') {
        return Err("the page does not end with a newline".into());
    }
    for (n, line) in text.lines().enumerate() {
        let bad = |why: &str| format!("line {}: {why}: {line:?}", n + 1);
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            let rest = rest.strip_prefix(' ').unwrap_or(rest);
            let mut w = rest.splitn(3, ' ');
            match (w.next(), w.next(), w.next()) {
                (Some("HELP"), Some(name), help) => {
                    if !is_name(name, true) {
                        return Err(bad("bad metric name in HELP"));
                    }
                    let help = help.unwrap_or("");
                    // Only \\ and \n escapes are legal in HELP.
                    let mut it = help.chars();
                    while let Some(c) = it.next() {
                        if c == '\\' && !matches!(it.next(), Some('\\' | 'n')) {
                            return Err(bad("bad escape in HELP"));
                        }
                    }
                    if p.help.insert(name.into(), help.into()).is_some() {
                        return Err(bad("second HELP"));
                    }
                }
                (Some("TYPE"), Some(name), Some(kind)) => {
                    if !is_name(name, true) {
                        return Err(bad("bad metric name in TYPE"));
                    }
                    if !matches!(
                        kind,
                        "counter" | "gauge" | "histogram" | "summary" | "untyped"
                    ) {
                        return Err(bad("unknown type"));
                    }
                    if seen.contains(name) || p.types.insert(name.into(), kind.into()).is_some() {
                        return Err(bad("TYPE after samples or twice"));
                    }
                }
                (Some("HELP" | "TYPE"), ..) => return Err(bad("incomplete HELP/TYPE")),
                _ => {} // a comment
            }
            continue;
        }
        // name{labels} value [timestamp]
        let name_end = line.find(['{', ' ']).ok_or_else(|| bad("no value"))?;
        let name = &line[..name_end];
        if !is_name(name, true) {
            return Err(bad("bad metric name"));
        }
        let mut rest = &line[name_end..];
        let mut labels = Vec::new();
        if let Some(r) = rest.strip_prefix('{') {
            let mut s = r;
            loop {
                if let Some(r) = s.strip_prefix('}') {
                    s = r;
                    break;
                }
                let eq = s.find('=').ok_or_else(|| bad("label without ="))?;
                let k = &s[..eq];
                if !is_name(k, false) || k.starts_with("__") {
                    return Err(bad("bad label name"));
                }
                let r = s[eq + 1..]
                    .strip_prefix('"')
                    .ok_or_else(|| bad("label value not quoted"))?;
                let mut v = String::new();
                let mut it = r.char_indices();
                let end = loop {
                    match it.next() {
                        None => return Err(bad("unterminated label value")),
                        Some((j, '"')) => break j,
                        Some((_, '\\')) => match it.next() {
                            Some((_, '\\')) => v.push('\\'),
                            Some((_, '"')) => v.push('"'),
                            Some((_, 'n')) => v.push('\n'),
                            _ => return Err(bad("bad escape in a label value")),
                        },
                        Some((_, '\n')) => return Err(bad("newline in a label value")),
                        Some((_, c)) => v.push(c),
                    }
                };
                if labels.iter().any(|(a, _): &(String, String)| a == k) {
                    return Err(bad("label twice"));
                }
                labels.push((k.to_string(), v));
                s = &r[end + 1..];
                if let Some(r) = s.strip_prefix(',') {
                    s = r;
                } else if !s.starts_with('}') {
                    return Err(bad("expected , or }"));
                }
            }
            rest = s;
        }
        let rest = rest
            .strip_prefix(' ')
            .ok_or_else(|| bad("no space before the value"))?;
        let mut w = rest.split(' ');
        let value = parse_value(w.next().unwrap_or("")).ok_or_else(|| bad("bad value"))?;
        if let Some(ts) = w.next()
            && ts.parse::<i64>().is_err()
        {
            return Err(bad("bad timestamp"));
        }
        if w.next().is_some() {
            return Err(bad("trailing words"));
        }
        let fam = family_of(name, &p.types).to_string();
        if p.types.get(&fam).map(String::as_str) == Some("histogram")
            && name.ends_with("_bucket")
            && !labels.iter().any(|(k, _)| k == "le")
        {
            return Err(bad("histogram bucket without le"));
        }
        if current.as_deref() != Some(fam.as_str()) {
            if done.contains(&fam) {
                return Err(bad("samples of a family are not together"));
            }
            if let Some(c) = current.take() {
                done.insert(c);
            }
            current = Some(fam.clone());
        }
        seen.insert(fam);
        p.samples.push(Sample {
            name: name.to_string(),
            labels,
            value,
        });
    }
    Ok(p)
}

/// A histogram's buckets must be cumulative and end in `+Inf` = `_count`.
pub fn check_histogram(p: &Page, name: &str, labels: &[(&str, &str)]) -> u64 {
    let mut prev = 0.0;
    let mut inf = None;
    for s in p.samples.iter().filter(|s| {
        s.name == format!("{name}_bucket")
            && labels
                .iter()
                .all(|(k, v)| s.labels.iter().any(|(a, b)| a == k && b == v))
    }) {
        assert!(s.value >= prev, "{name}: buckets not cumulative");
        prev = s.value;
        let le = &s.labels.iter().find(|(k, _)| k == "le").unwrap().1;
        if le == "+Inf" {
            inf = Some(s.value);
        }
    }
    let count = p.must(&format!("{name}_count"), labels);
    assert_eq!(inf, Some(count), "{name}: +Inf bucket = _count");
    p.must(&format!("{name}_sum"), labels);
    count as u64
}

/// A free TCP port on 127.0.0.1 (bound, then released), below Linux's ephemeral range
/// (32768-60999). A port the kernel picked for `bind(0)` is an ephemeral one, and any `connect()`
/// made before the program under test binds it (a test polling an endpoint, say) may take it as
/// its source port: ZooKeeper then exits 1 with "Address already in use".
pub fn free_addr() -> SocketAddr {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // Spread over 20000-32767 by process and call, so concurrent test binaries rarely meet.
    let start = (std::process::id().wrapping_mul(7919)) % 12_768;
    for _ in 0..12_768 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = 20_000 + (start + n * 131) % 12_768;
        let a: SocketAddr = ([127, 0, 0, 1], port as u16).into();
        if std::net::TcpListener::bind(a).is_ok() {
            return a;
        }
    }
    panic!("no free TCP port on 127.0.0.1 in 20000-32767")
}
