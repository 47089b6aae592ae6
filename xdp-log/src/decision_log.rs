//! [`DecisionLog`]: what a host application uses to read decisions in instance order from the
//! pinned log, in any process.
//!
//! The log is a BPF array mapped into this process (BPF_F_MMAPABLE), so reading a decision is
//! a memory copy, no system call. A slot is read like a seqlock: `commit` (= instance + 1)
//! before and after copying it must be equal and name the wanted instance; the kernel clears
//! `commit` before rewriting a slot and sets it last, so a torn copy is never returned.

use crate::loader::{check_log_layout, open_map, read_config};
use crate::record::{self, Decision, RecordError};
use aya::maps::{Array, Map, MapData, RingBuf};
use common::{LOG_CAPACITY, SLOT_HEADER_LEN, SLOT_LEN, config, map_name, slot, state};
use std::os::fd::{AsFd, AsRawFd};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{Ordering, fence};
use std::time::{Duration, Instant};

/// Default number of instances the log may run ahead of a missing one before the missing one
/// is declared a gap (it may still arrive late, out of order, until then).
pub const DEFAULT_REORDER_WINDOW: u64 = 16;

/// What the application must handle.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    /// Instance `expected` was missed: overwritten by a later lap (the reader fell more than
    /// the log capacity behind) or never logged while the log moved on by more than the reorder
    /// window. The application must resynchronise (state transfer) and then
    /// [`DecisionLog::seek`] past its snapshot; until then every read returns this error.
    #[error(
        "gap: instance {expected} was missed (oldest instance still in the log: {oldest_available:?}); resynchronise by state transfer"
    )]
    Gap {
        /// The instance the reader needed next.
        expected: u64,
        /// The oldest instance the log holds now, if any (when `expected` went missing rather
        /// than overwritten, this can be below `expected`: resume above `expected`).
        oldest_available: Option<u64>,
    },
    /// A committed slot that does not hold a valid decision (should not happen; reported, never
    /// skipped).
    #[error("corrupt slot for instance {instance}: {why}")]
    Corrupt {
        /// The instance read.
        instance: u64,
        /// What is wrong.
        why: RecordError,
    },
    /// The pinned maps could not be opened or read.
    #[error("xdp-log maps: {0}")]
    Maps(String),
}

/// The pinned log mapped read-only into this process.
struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; readers only copy from it.
unsafe impl Send for Mapping {}

impl Mapping {
    fn new(map: &MapData) -> Result<Mapping, LogError> {
        let len = SLOT_LEN * LOG_CAPACITY as usize;
        let fd = map.fd().as_fd().as_raw_fd();
        // SAFETY: mapping a BPF_F_MMAPABLE array read-only; the kernel checks the length.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(LogError::Maps(format!(
                "mmap of the log failed: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(Mapping {
            ptr: NonNull::new(p.cast()).expect("mmap returned a non-null address"),
            len,
        })
    }

    /// The commit word of slot `idx`.
    fn commit(&self, idx: usize) -> u64 {
        debug_assert!(idx < LOG_CAPACITY as usize);
        // SAFETY: inside the mapping and 8-aligned (SLOT_LEN is a multiple of 8).
        unsafe { std::ptr::read_volatile(self.ptr.as_ptr().add(idx * SLOT_LEN).cast::<u64>()) }
    }

    /// Copy slot `idx` (header and `len` packet bytes) into `out`; None when torn or not `want`.
    fn copy(&self, idx: usize, want_commit: u64, out: &mut Vec<u8>) -> bool {
        let base = idx * SLOT_LEN;
        if self.commit(idx) != want_commit {
            return false;
        }
        fence(Ordering::Acquire);
        // SAFETY: inside the mapping.
        let len_b = unsafe {
            std::ptr::read_volatile(self.ptr.as_ptr().add(base + slot::LEN).cast::<[u8; 2]>())
        };
        let n = SLOT_HEADER_LEN + usize::from(u16::from_le_bytes(len_b)).min(common::SLOT_DATA_LEN);
        out.clear();
        out.reserve(n + 8);
        // Whole 8-byte words (a slot is 8-aligned and a multiple of 8 long), then cut to n.
        for w in 0..n.div_ceil(8) {
            // SAFETY: base + 8 * ceil(n / 8) <= base + SLOT_LEN, inside the mapping, 8-aligned.
            // Volatile: the kernel may be writing concurrently; the commit re-check below rejects
            // such a copy.
            let v = unsafe {
                std::ptr::read_volatile(self.ptr.as_ptr().add(base + 8 * w).cast::<u64>())
            };
            out.extend_from_slice(&v.to_ne_bytes());
        }
        out.truncate(n);
        fence(Ordering::Acquire);
        self.commit(idx) == want_commit
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the region this struct mapped.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Reads decisions in instance order from the log pinned by `xdp-log attach`.
///
/// ```no_run
/// # fn main() -> Result<(), xdp_log::LogError> {
/// let mut log = xdp_log::DecisionLog::open_at("/sys/fs/bpf/nc-xdp-log".as_ref(), 1)?;
/// loop {
///     match log.next_blocking() {
///         Ok(d) => { for e in d.decide().entries() { let _ = (e.client_id, e.seq, e.payload); } }
///         Err(xdp_log::LogError::Gap { expected, .. }) => {
///             // state transfer up to some instance s >= expected, then:
///             # let s = expected;
///             log.seek(s + 1);
///         }
///         Err(e) => return Err(e),
///     }
/// }
/// # }
/// ```
pub struct DecisionLog {
    map: Mapping,
    _log: MapData,
    state: Array<MapData, u64>,
    cluster_id: u32,
    next: Option<u64>,
    reorder_window: u64,
    gap: Option<LogError>,
    buf: Vec<u8>,
    /// When the last decision was read: a busy log is polled with short naps.
    last_hit: Option<Instant>,
    /// The program's doorbell (None: a program loaded by an older xdp-log, which has none;
    /// the log is then polled).
    bell: Option<RingBuf<MapData>>,
}

/// With a doorbell, the longest sleep between two looks at the log. The bell wakes one reader:
/// if several processes read one log, each takes the rings it sees, and another reader may
/// sleep through a decision until this backstop.
const BELL_BACKSTOP: Duration = Duration::from_millis(10);

/// While decisions kept coming within this, [`DecisionLog::next_timeout`] polls the log with
/// naps of at most [`BUSY_NAP`] (a decision waits ≤ 50 µs to be seen); a quiet log is waited for
/// on the doorbell.
const BUSY_FOR: Duration = Duration::from_millis(20);
const BUSY_NAP: Duration = Duration::from_micros(50);

impl DecisionLog {
    /// Open the log pinned under `pin_dir`, starting at the oldest instance it holds now (or,
    /// if it is empty, at the first instance logged from now on).
    pub fn open(pin_dir: &Path) -> Result<DecisionLog, LogError> {
        let err = |e: anyhow::Error| LogError::Maps(format!("{e:#}"));
        let log = MapData::from_pin(pin_dir.join(map_name::LOG))
            .map_err(|e| LogError::Maps(format!("open {}: {e}", map_name::LOG)))?;
        check_log_layout(&log).map_err(err)?;
        let map = Mapping::new(&log)?;
        let state = match open_map(pin_dir, map_name::STATE).map_err(err)? {
            m @ Map::Array(_) => Array::try_from(m).map_err(|e| LogError::Maps(e.to_string()))?,
            _ => return Err(LogError::Maps("NCXDP_STATE is not an array".into())),
        };
        let cluster_id = read_config(pin_dir).map_err(err)?[config::CLUSTER_ID as usize];
        // The bell is optional: a program pinned by an older xdp-log has none.
        let bell = match open_map(pin_dir, map_name::BELL) {
            Ok(m) => Some(RingBuf::try_from(m).map_err(|e| {
                LogError::Maps(format!("{} is not a ring buffer: {e}", map_name::BELL))
            })?),
            Err(_) => None,
        };
        Ok(DecisionLog {
            map,
            _log: log,
            state,
            cluster_id,
            next: None,
            reorder_window: DEFAULT_REORDER_WINDOW,
            gap: None,
            buf: Vec::with_capacity(SLOT_LEN),
            last_hit: None,
            bell,
        })
    }

    /// Open the log and start at `next_instance` (e.g. a snapshot's instance + 1).
    pub fn open_at(pin_dir: &Path, next_instance: u64) -> Result<DecisionLog, LogError> {
        let mut l = DecisionLog::open(pin_dir)?;
        l.seek(next_instance);
        Ok(l)
    }

    /// Continue at `next_instance` (after a state transfer); clears a reported gap.
    pub fn seek(&mut self, next_instance: u64) {
        self.next = Some(next_instance);
        self.gap = None;
    }

    /// The instance the next successful read returns (None: not decided yet, see [`open`](Self::open)).
    pub fn next_instance(&self) -> Option<u64> {
        self.next
    }

    /// How far the log may run ahead of a missing instance before it is a gap (default 16).
    pub fn set_reorder_window(&mut self, instances: u64) {
        self.reorder_window = instances;
    }

    /// The cluster id the program is configured for.
    pub fn cluster_id(&self) -> u32 {
        self.cluster_id
    }

    /// Highest instance logged + 1 (0: nothing logged yet).
    pub fn head(&self) -> Result<u64, LogError> {
        self.state
            .get(&state::HEAD, 0)
            .map_err(|e| LogError::Maps(e.to_string()))
    }

    /// The oldest instance the log holds (committed slots within one capacity below the head).
    pub fn oldest_available(&self) -> Result<Option<u64>, LogError> {
        let head = self.head()?;
        let low = head.saturating_sub(u64::from(LOG_CAPACITY));
        Ok((0..LOG_CAPACITY as usize)
            .map(|i| self.map.commit(i))
            .filter(|&c| c > low && c <= head)
            .map(|c| c - 1)
            .min())
    }

    /// Whether the next instance's slot is committed now (memory only, no system call; false
    /// before the first decision is found or after a gap).
    fn committed(&self) -> bool {
        match self.next {
            Some(n) if self.gap.is_none() => {
                self.map.commit((n % u64::from(LOG_CAPACITY)) as usize) == n + 1
            }
            _ => false,
        }
    }

    /// The next decision if it is in the log now; `Ok(None)` if it has not arrived (yet).
    pub fn try_next(&mut self) -> Result<Option<Decision>, LogError> {
        if let Some(g) = &self.gap {
            return Err(g.clone());
        }
        let want = match self.next {
            Some(n) => n,
            None => match self.oldest_available()? {
                Some(o) => {
                    self.next = Some(o);
                    o
                }
                None => return Ok(None),
            },
        };
        let idx = (want % u64::from(LOG_CAPACITY)) as usize;
        let want_commit = want + 1;
        let c = self.map.commit(idx);
        if c == want_commit {
            if !self.map.copy(idx, want_commit, &mut self.buf) {
                return Ok(None); // rewritten while copying: it is a later lap now; next call sees it
            }
            return match record::parse_record(&self.buf, self.cluster_id) {
                Ok(d) => {
                    self.next = Some(want + 1);
                    Ok(Some(d))
                }
                Err(why) => Err(LogError::Corrupt {
                    instance: want,
                    why,
                }),
            };
        }
        // Not there. Read the head first, then the commit word again: anything the kernel
        // logged before that head was published is visible in the second read (it sets commit
        // before it raises head), so "head moved past the window and the slot still lacks the
        // instance" really means missed, not "logged while we were looking".
        let head = self.head()?;
        fence(Ordering::Acquire);
        let c = self.map.commit(idx);
        if c == want_commit {
            return Ok(None); // arrived meanwhile: the next call reads it
        }
        if c > want_commit || head > want_commit.saturating_add(self.reorder_window) {
            let g = LogError::Gap {
                expected: want,
                oldest_available: self.oldest_available()?,
            };
            self.gap = Some(g.clone());
            return Err(g);
        }
        Ok(None)
    }

    /// Whether this log has the program's doorbell (see [`next_timeout`](Self::next_timeout)).
    pub fn has_bell(&self) -> bool {
        self.bell.is_some()
    }

    /// Wait up to `timeout` for the next decision (`Ok(None)` on timeout).
    ///
    /// While decisions keep coming (one within the last 20 ms) the mapped log is polled: up to
    /// 64 spins on the slot's commit word (memory reads, yielding the CPU), then sleeps growing
    /// from 20 µs to 50 µs. A quiet log is waited for on the program's doorbell: the thread
    /// sleeps in `poll` on the bell (no wake-up while nothing arrives, where polling would wake
    /// up to 1,000 times a second) until the next decision rings it. The bell is emptied before
    /// the log is looked at again, so a decision logged after that look rings it anew and none
    /// is slept through. (The bell has one consumer position: when several processes read one
    /// log, one of them may sleep until `BELL_BACKSTOP`, 10 ms, before it sees a decision.)
    ///
    /// Why not the bell at every load: waking the reader at once, in the softirq that logged the
    /// decision, was measured to cost more than the polling it saves while decisions come every
    /// few hundred µs (Redis-NC at one connection on 2 cores: p50 197–203 µs against 145–165 µs,
    /// the engines' CPU per write up by a fifth; docs/benchmarks.md, "Eleventh session"): the
    /// wake-up lands on the cores the decision's own path needs at that moment. Without a bell
    /// (a program pinned by an older xdp-log) a quiet log is polled with naps up to 1 ms.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Decision>, LogError> {
        let t0 = Instant::now();
        let mut nap = Duration::from_micros(20);
        let mut spins = 0u32;
        loop {
            if let Some(d) = self.try_next()? {
                self.last_hit = Some(Instant::now());
                return Ok(Some(d));
            }
            let waited = t0.elapsed();
            if waited >= timeout {
                return Ok(None);
            }
            let busy = self.last_hit.is_some_and(|t| t.elapsed() < BUSY_FOR);
            if !busy && self.bell.is_some() {
                if let Some(d) = self.sleep_on_bell(timeout - waited)? {
                    self.last_hit = Some(Instant::now());
                    return Ok(Some(d));
                }
            } else if spins < 64 {
                // Spin on the slot's commit word only (a memory read): `try_next` on a missing
                // instance also reads the head, a system call, which 64 spins per wait made
                // the apply loops' main cost (~5 % of a core per idle Redis-NC front).
                while spins < 64 && !self.committed() {
                    spins += 1;
                    std::hint::spin_loop();
                    std::thread::yield_now();
                }
                spins = 64;
            } else {
                let max_nap = if busy {
                    BUSY_NAP
                } else {
                    Duration::from_millis(1)
                };
                std::thread::sleep(nap.min(timeout - waited));
                nap = (nap * 2).min(max_nap);
            }
        }
    }

    /// Empty the bell, look at the log once more, then sleep on the bell for at most `wait`
    /// (and `BELL_BACKSTOP`). What was logged before the bell was emptied is seen by that look;
    /// what is logged after rings the bell again and ends the sleep.
    fn sleep_on_bell(&mut self, wait: Duration) -> Result<Option<Decision>, LogError> {
        let Some(bell) = self.bell.as_mut() else {
            return Ok(None);
        };
        while bell.next().is_some() {}
        let fd = bell.as_raw_fd();
        if let Some(d) = self.try_next()? {
            return Ok(Some(d));
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // Whole milliseconds (poll's unit), rounded up: never a loop of 0 ms polls.
        let ms = wait.min(BELL_BACKSTOP).as_micros().div_ceil(1000).max(1) as libc::c_int;
        // SAFETY: one valid pollfd for the duration of the call.
        if unsafe { libc::poll(&mut pfd, 1, ms) } < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(LogError::Maps(format!("poll on {}: {e}", map_name::BELL)));
            }
        }
        Ok(None)
    }

    /// Wait for the next decision as long as it takes (a gap is returned as an error).
    pub fn next_blocking(&mut self) -> Result<Decision, LogError> {
        loop {
            if let Some(d) = self.next_timeout(Duration::from_secs(3600))? {
                return Ok(d);
            }
        }
    }
}

/// A `DecisionLog` can move to the thread that applies decisions.
const _: () = {
    const fn send<T: Send>() {}
    send::<DecisionLog>();
    send::<Decision>();
};
