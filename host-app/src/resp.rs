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

/// A decimal integer in its one canonical spelling (no '+', no leading zeros, no "-0").
fn int(s: &[u8]) -> Result<i64, RespError> {
    std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse::<i64>().ok().filter(|n| n.to_string() == t))
        .ok_or_else(|| RespError(format!("invalid integer '{}'", String::from_utf8_lossy(s))))
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
            Value::Integer(i) => out.extend_from_slice(format!(":{i}").as_bytes()),
            Value::Bulk(None) => out.extend_from_slice(b"$-1"),
            Value::Bulk(Some(b)) => {
                out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
                out.extend_from_slice(b);
            }
            Value::Array(None) => out.extend_from_slice(b"*-1"),
            Value::Array(Some(items)) => {
                out.extend_from_slice(format!("*{}\r\n", items.len()).as_bytes());
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
    fn commands() {
        let c = Value::command(&[b"INCR", b"n"]);
        assert_eq!(c.as_command().unwrap(), vec![&b"INCR"[..], b"n"]);
        assert_eq!(Value::Integer(1).as_command(), None);
        assert_eq!(
            Value::Array(Some(vec![Value::Integer(1)])).as_command(),
            None
        );
    }
}
