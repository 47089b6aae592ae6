//! What the engine does that may need a privilege, and how to tell whether this process has
//! it. Multicast needs none: joining a group, IP_PKTINFO, SO_TIMESTAMPNS and the ports ≥ 1024
//! of the default cluster file are open to every user. Labs use [`realtime_missing`] too: an
//! engine without real-time priority gets a wider Δ (tools/src/netlab.rs).

/// Linux capability numbers (linux/capability.h).
const CAP_IPC_LOCK: u32 = 14;
const CAP_SYS_NICE: u32 = 23;

/// Printed after a refused socket operation.
pub const SOCKET_PRIVILEGES: &str = "a privilege or permission is missing for the step named above: \
    a port below 1024 needs CAP_NET_BIND_SERVICE; SO_BINDTODEVICE (the tree interfaces) \
    needs CAP_NET_RAW on Linux before 5.7 only; the control socket's folder must be writable \
    by this user (docs/deploy.md, \"Privileges\")";

/// Whether the process's effective capability set holds `cap` (/proc/self/status CapEff).
fn has_cap(cap: u32) -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        })
        .is_some_and(|bits| bits & (1 << cap) != 0)
}

/// The soft limit named `name` in /proc/self/limits (None: unlimited; 0 if unreadable).
fn soft_limit(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let v = text
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("0");
    if v == "unlimited" {
        None
    } else {
        Some(v.parse().unwrap_or(0))
    }
}

/// Why SCHED_FIFO at priority `p` with memory locked cannot work here, naming what is
/// missing; None when it can.
pub fn realtime_missing(p: u8) -> Option<String> {
    let fifo = has_cap(CAP_SYS_NICE)
        || soft_limit("Max realtime priority").is_none_or(|l| l >= u64::from(p));
    let lock = has_cap(CAP_IPC_LOCK) || soft_limit("Max locked memory").is_none();
    let mut missing = Vec::new();
    if !fifo {
        missing.push(format!(
            "SCHED_FIFO needs CAP_SYS_NICE (or RLIMIT_RTPRIO >= {p})"
        ));
    }
    if !lock {
        missing.push(
            "locking its memory (mlockall) needs CAP_IPC_LOCK (or an unlimited RLIMIT_MEMLOCK)"
                .to_string(),
        );
    }
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "{}: run as root, with `AmbientCapabilities=CAP_SYS_NICE CAP_IPC_LOCK` (deploy/systemd/nc-engine@.service), or after `setcap cap_sys_nice,cap_ipc_lock+ep nc-engine`",
        missing.join("; ")
    ))
}
