//! The control socket (Unix, 0600): one request per line, one JSON answer per line. Register
//! requests go to the engine thread; log reads are served here from the shared log.

use std::io::{self, BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::{Cmd, EngineHandle, Reply, Shared, ctx};

pub(super) fn bind_control(path: &Path) -> io::Result<UnixListener> {
    if path.exists() {
        // A live engine answers; a stale socket file from a killed one does not.
        if UnixStream::connect(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "{}: another engine is running on this control socket",
                    path.display()
                ),
            ));
        }
        ctx(std::fs::remove_file(path), || {
            format!("stale control socket {}", path.display())
        })?;
    }
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        ctx(std::fs::create_dir_all(dir), || {
            format!("control socket directory {}", dir.display())
        })?;
    }
    // Bound and listening under a temporary name, then renamed into place: the socket file
    // appears only once it accepts (a client that waits for the file, as scripts do, is never
    // refused in the moment between bind and listen), and with its final permissions.
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let l = ctx(UnixListener::bind(&tmp), || {
        format!("control socket {}", tmp.display())
    })?;
    let placed = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
        .and_then(|()| std::fs::rename(&tmp, path));
    if placed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    ctx(placed, || format!("control socket {}", path.display()))?;
    Ok(l)
}

pub(super) fn serve_control(l: UnixListener, h: EngineHandle, shared: Arc<Mutex<Shared>>) {
    for conn in l.incoming() {
        let Ok(s) = conn else { continue };
        let h = h.clone();
        let shared = shared.clone();
        std::thread::spawn(move || {
            let mut w = match s.try_clone() {
                Ok(w) => w,
                Err(_) => return,
            };
            for line in BufReader::new(s).lines() {
                let Ok(line) = line else { return };
                let r = control_request(&h, &shared, line.trim());
                let v = match r {
                    Ok(v) => json!({ "ok": v }),
                    Err(e) => json!({ "err": e }),
                };
                // One write per answer (a `status` written with `writeln!` was ~2,000 one-byte
                // sendto calls, and each Redis-NC front polls it every 20 ms).
                if crate::regfile::write_line(&mut w, &v).is_err() {
                    return;
                }
            }
        });
    }
}

fn num(s: Option<&str>, what: &str) -> Result<u64, String> {
    let s = s.ok_or_else(|| format!("missing {what}"))?;
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("{what}: '{s}' is not a number"))
}

/// A request of the control protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CtlRequest {
    /// `read ADDR`
    Read(u16),
    /// `write ADDR VALUE`
    Write(u16, u32),
    /// `status`
    Status,
    /// `log FROM TO`
    Log(u64, u64),
    /// `entries FROM TO`: the requests each decided instance holds (at most 10 000 instances)
    Entries(u64, u64),
    /// `decisions FROM TO`: the decided instances themselves (proto's log encoding, hex), for a
    /// host application that missed host copies (at most 10 000 instances or 4 MiB)
    Decisions(u64, u64),
    /// `join MEMBER_ID`
    Join(u64),
    /// `drop-tree TREE on|off`
    DropTree(u8, bool),
    /// `reset-stats`
    ResetStats,
    /// `reload-keys`: read the key file again (key rotation)
    ReloadKeys,
}

/// The most instances one `entries` request returns (ask again from the last one + 1).
pub const ENTRIES_MAX: usize = 10_000;

/// The most encoded bytes one `decisions` answer carries (at least one instance is always sent).
pub const DECISIONS_MAX_BYTES: usize = 4 << 20;

/// Parse one line of the control protocol (words separated by blanks; numbers decimal or 0x hex).
/// Anything else is refused with a message saying what was expected.
pub fn parse_control_line(line: &str) -> Result<CtlRequest, String> {
    let mut w = line.split_whitespace();
    let verb = w.next().unwrap_or("");
    let addr16 = |v: u64| u16::try_from(v).map_err(|_| format!("address {v:#x} out of range"));
    let r = match verb {
        "read" => CtlRequest::Read(addr16(num(w.next(), "address")?)?),
        "write" => {
            let a = addr16(num(w.next(), "address")?)?;
            let v = num(w.next(), "value")?;
            let v = u32::try_from(v).map_err(|_| format!("value {v} does not fit 32 bits"))?;
            CtlRequest::Write(a, v)
        }
        "status" => CtlRequest::Status,
        "log" => CtlRequest::Log(num(w.next(), "from")?, num(w.next(), "to")?),
        "entries" => CtlRequest::Entries(num(w.next(), "from")?, num(w.next(), "to")?),
        "decisions" => CtlRequest::Decisions(num(w.next(), "from")?, num(w.next(), "to")?),
        "join" => CtlRequest::Join(num(w.next(), "member id")?),
        "drop-tree" => {
            let t = num(w.next(), "tree")?;
            let t = u8::try_from(t).map_err(|_| format!("tree {t} out of range"))?;
            let on = match w.next() {
                Some("on") => true,
                Some("off") => false,
                _ => return Err("drop-tree TREE on|off".into()),
            };
            CtlRequest::DropTree(t, on)
        }
        "reset-stats" => CtlRequest::ResetStats,
        "reload-keys" => CtlRequest::ReloadKeys,
        "" => return Err("empty request".into()),
        other => {
            return Err(format!(
                "unknown request '{other}': read, write, status, log, entries, decisions, join, drop-tree, reset-stats, reload-keys"
            ));
        }
    };
    if let Some(extra) = w.next() {
        return Err(format!("{verb}: unexpected '{extra}'"));
    }
    Ok(r)
}

/// One request of the control protocol; the answer is one JSON line, `{"ok": value}` or
/// `{"err": "message"}`.
fn control_request(h: &EngineHandle, shared: &Mutex<Shared>, line: &str) -> Reply {
    match parse_control_line(line)? {
        CtlRequest::Read(a) => h.call(Cmd::Read(a)),
        CtlRequest::Write(a, v) => h.call(Cmd::Write(a, v)),
        CtlRequest::Status => h.call(Cmd::Status),
        CtlRequest::Log(from, to) => {
            // Read by this thread, formatted outside the lock: the engine thread never waits.
            let range = shared.lock().expect("state lock").log.range(from, to);
            Ok(json!(crate::log::lines(&range)))
        }
        CtlRequest::Entries(from, to) => {
            // At most ENTRIES_MAX instances per request, copied under the lock, formatted outside.
            let range = {
                let sh = shared.lock().expect("state lock");
                sh.log.range_max(from, to, ENTRIES_MAX)
            };
            Ok(json!(
                range
                    .iter()
                    .map(|(i, l)| json!([i, l.requests()]))
                    .collect::<Vec<_>>()
            ))
        }
        CtlRequest::Decisions(from, to) => {
            let (range, first, last) = {
                let sh = shared.lock().expect("state lock");
                let first = sh.log.map.first_key_value().map(|(i, _)| *i);
                let last = sh.log.map.last_key_value().map(|(i, _)| *i);
                (sh.log.range_max(from, to, ENTRIES_MAX), first, last)
            };
            let mut bytes = 0;
            let kept: Vec<_> = range
                .into_iter()
                .take_while(|(_, l)| {
                    let fits = bytes == 0 || bytes + l.entries.len() <= DECISIONS_MAX_BYTES;
                    bytes += l.entries.len() + 15;
                    fits
                })
                .collect();
            let hex = crate::log::to_hex(&crate::log::encode(&kept));
            // `first`/`last`: what the log holds now (a caller below `first` needs a snapshot).
            Ok(json!({ "first": first, "last": last, "count": kept.len(), "hex": hex }))
        }
        CtlRequest::Join(member) => h.call(Cmd::Join(member)),
        CtlRequest::DropTree(t, on) => h.call(Cmd::DropTree(t, on)),
        CtlRequest::ResetStats => h.call(Cmd::ResetStats),
        CtlRequest::ReloadKeys => h.call(Cmd::ReloadKeys),
    }
}
