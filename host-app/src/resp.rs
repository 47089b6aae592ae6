//! RESP2, the Redis protocol: what stock clients (redis-cli, redis-benchmark) send and expect.
//! The parser never panics, never reads past what it was given, and tells "need more bytes"
//! apart from "this is not RESP".

use std::fmt;

/// A RESP2 value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// `+OK`
    Simple(String),
    /// `-ERR …`
    Error(String),
    /// `:42`
    Integer(i64),
    /// `$3\r\nfoo` (`None`: the null bulk string `$-1`)
    Bulk(Option<Vec<u8>>),
    /// `*2 …` (`None`: the null array `*-1`)
    Array(Option<Vec<Value>>),
}

/// Input that is not RESP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RespError(pub String);

impl fmt::Display for RespError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Protocol error: {}", self.0)
    }
}

impl std::error::Error for RespError {}

/// Largest bulk string accepted (Redis's proto-max-bulk-len default is 512 MB; ours is smaller
/// because a command must fit one DECIDE entry anyway).
pub const MAX_BULK: usize = 64 * 1024 * 1024;
/// Largest array accepted.
pub const MAX_ARRAY: usize = 1024 * 1024;
const MAX_DEPTH: usize = 8;

/// Parse one value from the start of `buf`: `Ok(Some((value, bytes used)))`, `Ok(None)` when
/// `buf` holds only a prefix of a value, or an error when it cannot be RESP.
pub fn parse(buf: &[u8]) -> Result<Option<(Value, usize)>, RespError> {
    parse_at(buf, 0, 0)
}

fn line(buf: &[u8], at: usize) -> Result<Option<(&[u8], usize)>, RespError> {
    let rest = &buf[at.min(buf.len())..];
    match rest.iter().position(|&b| b == b'\n') {
        None => {
            if rest.len() > 64 * 1024 {
                return Err(RespError("line too long".into()));
            }
            Ok(None)
        }
        Some(i) if i == 0 || rest[i - 1] != b'\r' => {
            Err(RespError("line not ended by CRLF".into()))
        }
        Some(i) => Ok(Some((&rest[..i - 1], at + i + 1))),
    }
}

/// A decimal integer in its one canonical spelling (no '+', no leading zeros, no "-0"). No
/// allocation: every bulk and array header of every command goes through here.
fn int(s: &[u8]) -> Result<i64, RespError> {
    canonical_int(s)
        .ok_or_else(|| RespError(format!("invalid integer '{}'", String::from_utf8_lossy(s))))
}

fn canonical_int(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, s),
    };
    let first = *digits.first()?;
    if !digits.iter().all(u8::is_ascii_digit) || (first == b'0' && (digits.len() > 1 || neg)) {
        return None;
    }
    // Accumulated on the negative side, so that i64::MIN parses too.
    let mut n: i64 = 0;
    for &d in digits {
        n = n.checked_mul(10)?.checked_sub(i64::from(d - b'0'))?;
    }
    if neg { Some(n) } else { n.checked_neg() }
}

/// Append `tag`, the decimal `n` and CRLF (a bulk or array header), without `format!`.
pub(crate) fn header(out: &mut Vec<u8>, tag: u8, n: i64) {
    out.push(tag);
    decimal(out, n);
    out.extend_from_slice(b"\r\n");
}

fn decimal(out: &mut Vec<u8>, n: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut m = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[at..]);
}

/// Append the wire form of the command `args` (an array of bulk strings): the bytes
/// `Value::command(args).to_bytes()` gives, without building the value.
pub fn encode_command(args: &[&[u8]], out: &mut Vec<u8>) {
    header(out, b'*', args.len() as i64);
    for a in args {
        header(out, b'$', a.len() as i64);
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// What a decided entry's payload holds, found without building values (the apply loop runs
/// every command of every instance).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Commands {
    /// One command (a non-empty array of bulk strings), the whole payload.
    One,
    /// A non-empty array of commands: where each one is in the payload.
    Batch(Vec<std::ops::Range<usize>>),
}

/// Classify `payload`: exactly one command, exactly one array of commands, or neither (`None`).
/// The same answer as parsing it with [`parse`] and asking [`Value::as_command`] of it and of
/// its items (a property test checks that), so every replica classifies alike.
pub fn commands(payload: &[u8]) -> Option<Commands> {
    if scan_command(payload, 0) == Some(payload.len()) {
        return Some(Commands::One);
    }
    let (n, mut pos) = scan_header(payload, 0, b'*')?;
    if n < 1 || n as usize > MAX_ARRAY {
        return None;
    }
    let mut at = Vec::with_capacity((n as usize).min(1024));
    for _ in 0..n {
        let end = scan_command(payload, pos)?;
        at.push(pos..end);
        pos = end;
    }
    (pos == payload.len()).then_some(Commands::Batch(at))
}

fn scan_header(buf: &[u8], at: usize, tag: u8) -> Option<(i64, usize)> {
    if buf.get(at) != Some(&tag) {
        return None;
    }
    let (l, next) = line(buf, at + 1).ok()??;
    Some((canonical_int(l)?, next))
}

/// The end of the command (a non-empty array of non-null bulk strings) that starts at `at`.
fn scan_command(buf: &[u8], at: usize) -> Option<usize> {
    let (n, mut pos) = scan_header(buf, at, b'*')?;
    if n < 1 || n as usize > MAX_ARRAY {
        return None;
    }
    for _ in 0..n {
        let (len, p) = scan_header(buf, pos, b'$')?;
        if len < 0 || len as usize > MAX_BULK {
            return None;
        }
        let end = p + len as usize;
        if buf.get(end..end + 2)? != b"\r\n" {
            return None;
        }
        pos = end + 2;
    }
    Some(pos)
}

fn parse_at(buf: &[u8], at: usize, depth: usize) -> Result<Option<(Value, usize)>, RespError> {
    if depth > MAX_DEPTH {
        return Err(RespError("nesting too deep".into()));
    }
    let Some(&tag) = buf.get(at) else {
        return Ok(None);
    };
    let Some((l, next)) = line(buf, at + 1)? else {
        return Ok(None);
    };
    let text =
        || String::from_utf8(l.to_vec()).map_err(|_| RespError("status line is not UTF-8".into()));
    Ok(Some(match tag {
        b'+' => (Value::Simple(text()?), next),
        b'-' => (Value::Error(text()?), next),
        b':' => (Value::Integer(int(l)?), next),
        b'$' => {
            let n = int(l)?;
            if n == -1 {
                return Ok(Some((Value::Bulk(None), next)));
            }
            if n < 0 || n as usize > MAX_BULK {
                return Err(RespError(format!("invalid bulk length {n}")));
            }
            let n = n as usize;
            if buf.len() < next + n + 2 {
                return Ok(None);
            }
            if &buf[next + n..next + n + 2] != b"\r\n" {
                return Err(RespError("bulk string not ended by CRLF".into()));
            }
            (
                Value::Bulk(Some(buf[next..next + n].to_vec())),
                next + n + 2,
            )
        }
        b'*' => {
            let n = int(l)?;
            if n == -1 {
                return Ok(Some((Value::Array(None), next)));
            }
            if n < 0 || n as usize > MAX_ARRAY {
                return Err(RespError(format!("invalid multibulk length {n}")));
            }
            let mut items = Vec::with_capacity((n as usize).min(1024));
            let mut pos = next;
            for _ in 0..n {
                match parse_at(buf, pos, depth + 1)? {
                    Some((v, p)) => {
                        items.push(v);
                        pos = p;
                    }
                    None => return Ok(None),
                }
            }
            (Value::Array(Some(items)), pos)
        }
        other => {
            return Err(RespError(format!(
                "expected one of + - : $ *, got byte {other:#04x}"
            )));
        }
    }))
}

impl Value {
    /// Append the wire form.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Value::Simple(s) => {
                out.push(b'+');
                out.extend_from_slice(s.as_bytes());
            }
            Value::Error(s) => {
                out.push(b'-');
                out.extend_from_slice(s.as_bytes());
            }
            Value::Integer(i) => {
                out.push(b':');
                decimal(out, *i);
            }
            Value::Bulk(None) => out.extend_from_slice(b"$-1"),
            Value::Bulk(Some(b)) => {
                header(out, b'$', b.len() as i64);
                out.extend_from_slice(b);
            }
            Value::Array(None) => out.extend_from_slice(b"*-1"),
            Value::Array(Some(items)) => {
                header(out, b'*', items.len() as i64);
                for v in items {
                    v.encode(out);
                }
                return;
            }
        }
        out.extend_from_slice(b"\r\n");
    }

    /// The wire form.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.encode(&mut v);
        v
    }

    /// A command: an array of bulk strings.
    pub fn command(args: &[&[u8]]) -> Value {
        Value::Array(Some(
            args.iter().map(|a| Value::Bulk(Some(a.to_vec()))).collect(),
        ))
    }

    /// The arguments of a command (an array of bulk strings), if this is one.
    pub fn as_command(&self) -> Option<Vec<&[u8]>> {
        match self {
            Value::Array(Some(items)) if !items.is_empty() => items
                .iter()
                .map(|v| match v {
                    Value::Bulk(Some(b)) => Some(b.as_slice()),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trips_and_prefixes() {
        let v = Value::Array(Some(vec![
            Value::Bulk(Some(b"SET".to_vec())),
            Value::Bulk(Some(b"k\r\n".to_vec())),
            Value::Integer(-7),
            Value::Simple("OK".into()),
            Value::Error("ERR x".into()),
            Value::Bulk(None),
            Value::Array(None),
            Value::Array(Some(vec![])),
        ]));
        let b = v.to_bytes();
        assert_eq!(parse(&b).unwrap(), Some((v.clone(), b.len())));
        for cut in 0..b.len() {
            assert_eq!(parse(&b[..cut]).unwrap(), None, "cut {cut}");
        }
        let mut two = b.clone();
        two.extend_from_slice(&b);
        assert_eq!(parse(&two).unwrap(), Some((v, b.len())));
    }

    #[test]
    fn bad_input_is_an_error_not_a_wait() {
        for bad in [
            &b"?x\r\n"[..],
            b"$3\r\nabcd\r\n",
            b":12a\r\n",
            b"*-2\r\n",
            b"$-5\r\n",
            b"+OK\n",
            b"*1\r\n$999999999999\r\n",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let deep = "*1\r\n".repeat(20);
        assert!(parse(deep.as_bytes()).is_err());
    }

    #[test]
    fn as_command_wants_an_array_of_bulks() {
        let c = Value::command(&[b"INCR", b"n"]);
        assert_eq!(c.as_command().unwrap(), vec![&b"INCR"[..], b"n"]);
        assert_eq!(Value::Integer(1).as_command(), None);
        assert_eq!(
            Value::Array(Some(vec![Value::Integer(1)])).as_command(),
            None
        );
    }

    /// The classification [`commands`] must match: parse, then ask `as_command`.
    fn classify_by_value(p: &[u8]) -> Option<Commands> {
        match parse(p) {
            Ok(Some((cmd, used))) if used == p.len() && cmd.as_command().is_some() => {
                Some(Commands::One)
            }
            Ok(Some((Value::Array(Some(items)), used)))
                if used == p.len()
                    && !items.is_empty()
                    && items.iter().all(|c| c.as_command().is_some()) =>
            {
                let mut at = Vec::new();
                let mut pos = p.iter().position(|&b| b == b'\n').unwrap() + 1;
                for c in &items {
                    let end = pos + c.to_bytes().len();
                    at.push(pos..end);
                    pos = end;
                }
                Some(Commands::Batch(at))
            }
            _ => None,
        }
    }

    fn reference_int(s: &[u8]) -> Option<i64> {
        std::str::from_utf8(s)
            .ok()
            .and_then(|t| t.parse::<i64>().ok().filter(|n| n.to_string() == t))
    }

    #[test]
    fn integers_are_canonical_and_cover_i64() {
        for (s, v) in [
            ("0", Some(0)),
            ("-1", Some(-1)),
            ("9223372036854775807", Some(i64::MAX)),
            ("-9223372036854775808", Some(i64::MIN)),
            ("9223372036854775808", None),
            ("-9223372036854775809", None),
            ("-0", None),
            ("007", None),
            ("+5", None),
            ("", None),
            ("-", None),
            (" 5", None),
        ] {
            assert_eq!(canonical_int(s.as_bytes()), v, "{s:?}");
            assert_eq!(reference_int(s.as_bytes()), v, "{s:?}");
        }
        for n in [0, 1, -1, 10, -10, 99, i64::MAX, i64::MIN, 1 << 40] {
            let mut out = Vec::new();
            decimal(&mut out, n);
            assert_eq!(out, n.to_string().into_bytes());
        }
    }

    #[test]
    fn commands_classifies_a_command_a_batch_and_neither() {
        let one = Value::command(&[b"SET", b"k", b"v"]).to_bytes();
        assert_eq!(commands(&one), Some(Commands::One));
        let mut b = b"*2\r\n".to_vec();
        b.extend_from_slice(&one);
        let two = Value::command(&[b"INCR", b"n"]).to_bytes();
        b.extend_from_slice(&two);
        let at = 4..4 + one.len();
        let at2 = at.end..b.len();
        assert_eq!(commands(&b), Some(Commands::Batch(vec![at, at2])));
        for bad in [
            &b""[..],
            b"*0\r\n",
            b"*-1\r\n",
            b"*1\r\n$-1\r\n",
            b"+OK\r\n",
            b"*1\r\n:1\r\n",
        ] {
            assert_eq!(commands(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        let mut trailing = one.clone();
        trailing.push(b'x');
        assert_eq!(commands(&trailing), None);
    }

    fn arb_args() -> impl Strategy<Value = Vec<Vec<u8>>> {
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..6), 0..4)
    }

    fn arb_payload() -> impl Strategy<Value = Vec<u8>> {
        let command = arb_args().prop_map(|a| {
            let args: Vec<&[u8]> = a.iter().map(Vec::as_slice).collect();
            let mut out = Vec::new();
            encode_command(&args, &mut out);
            out
        });
        let batch = prop::collection::vec(arb_args(), 0..4).prop_map(|cs| {
            let mut out = Vec::new();
            header(&mut out, b'*', cs.len() as i64);
            for a in cs {
                let args: Vec<&[u8]> = a.iter().map(Vec::as_slice).collect();
                encode_command(&args, &mut out);
            }
            out
        });
        let structured = prop_oneof![command, batch];
        // Mutations: cut, a byte changed, a byte inserted, something appended.
        (
            structured,
            any::<u8>(),
            any::<prop::sample::Index>(),
            0u8..5,
        )
            .prop_map(|(mut p, b, i, how)| {
                let at = if p.is_empty() { 0 } else { i.index(p.len()) };
                match how {
                    0 => {}
                    1 => p.truncate(at),
                    2 if !p.is_empty() => p[at] = b,
                    3 => p.insert(at, b),
                    _ => p.push(b),
                }
                p
            })
    }

    proptest! {
        #[test]
        fn commands_agrees_with_parsing_values(p in arb_payload()) {
            prop_assert_eq!(commands(&p), classify_by_value(&p));
        }

        #[test]
        fn commands_agrees_on_any_bytes(p in prop::collection::vec(any::<u8>(), 0..40)) {
            prop_assert_eq!(commands(&p), classify_by_value(&p));
        }

        #[test]
        fn canonical_integers_match_the_reference(s in "-?[0-9+ ]{0,21}") {
            prop_assert_eq!(canonical_int(s.as_bytes()), reference_int(s.as_bytes()));
        }

        #[test]
        fn encode_command_is_the_value_s_wire_form(a in arb_args()) {
            let args: Vec<&[u8]> = a.iter().map(Vec::as_slice).collect();
            let mut out = Vec::new();
            encode_command(&args, &mut out);
            prop_assert_eq!(out, Value::command(&args).to_bytes());
        }
    }
}
