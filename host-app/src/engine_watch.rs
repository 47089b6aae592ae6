//! The node's engine as its host application sees it: its state, polled every 20 ms on the
//! engine's control socket, so that a front can answer at once when its node is out instead of
//! letting clients wait for a decision that cannot reach this replica.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use soc_ctl::regfile::EngineBus;

/// How long a command waits for its node's engine while it is out only for a moment (see
/// [`EngineWatch::ride_out`]) before it is answered `TRYAGAIN`.
pub const RIDE_OUT: Duration = Duration::from_secs(2);

#[derive(Clone, Debug, Default)]
struct View {
    /// At least one poll has finished.
    seen: bool,
    /// Its state (`Active`, `Joining`, …); `None`: unreachable.
    state: Option<String>,
    rejoining: bool,
    last_decided: Option<u64>,
    error: Option<String>,
    /// Since when it has been out only for a moment ([`Out::Transient`]) without a break.
    transient_since: Option<std::time::Instant>,
}

impl View {
    /// Why node `node` cannot serve now (`None`: its engine is an active member, or not seen yet).
    fn out(&self, node: u8) -> Option<Out> {
        if !self.seen {
            return None;
        }
        match self.state.as_deref() {
            None => Some(Out::Down(format!(
                "node {node}: its engine is unreachable ({})",
                self.error.as_deref().unwrap_or("?")
            ))),
            Some("Active") if !self.rejoining => None,
            Some(s @ ("Joining" | "Recovering" | "Faulted"))
                if self.rejoining || s != "Faulted" =>
            {
                Some(Out::Transient(format!(
                    "node {node}: its engine is out ({s}) and coming back by itself; another \
                     node serves meanwhile"
                )))
            }
            Some(s) => Some(Out::Down(format!(
                "node {node}: its engine is {s} (see `soc-ctl status`)"
            ))),
        }
    }
}

/// Why a node cannot serve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Out {
    /// It is coming back by itself (rejoin, recovery, join): `-TRYAGAIN`.
    Transient(String),
    /// It needs a person (engine unreachable, stopped, not started): `-CLUSTERDOWN`.
    Down(String),
}

/// A watched engine.
#[derive(Debug, Default)]
pub struct EngineWatch {
    view: Mutex<View>,
}

impl EngineWatch {
    /// Start watching the engine whose control socket is `ctl` (a thread polls it).
    pub fn spawn(ctl: PathBuf) -> Arc<EngineWatch> {
        let w = Arc::new(EngineWatch::default());
        let me = w.clone();
        std::thread::spawn(move || me.run(ctl));
        w
    }

    fn run(&self, ctl: PathBuf) {
        let mut bus: Option<EngineBus> = None;
        loop {
            let seen = (|| -> Result<serde_json::Value, String> {
                if bus.is_none() {
                    bus = Some(EngineBus::connect(&ctl).map_err(|e| e.to_string())?);
                }
                let b = bus.as_mut().ok_or("no connection")?;
                b.request("status").map_err(|e| e.to_string())
            })();
            {
                let mut v = self.view.lock().unwrap_or_else(|p| p.into_inner());
                v.seen = true;
                match seen {
                    Ok(s) => {
                        v.state = s["state"].as_str().map(str::to_string);
                        v.rejoining = s["recovery"]["rejoining"] == true;
                        v.last_decided = s["last_decided"].as_u64();
                        v.error = None;
                    }
                    Err(e) => {
                        bus = None;
                        v.state = None;
                        v.error = Some(e);
                    }
                }
                let transient = matches!(v.out(0), Some(Out::Transient(_)));
                v.transient_since = match (transient, v.transient_since) {
                    (false, _) => None,
                    (true, None) => Some(std::time::Instant::now()),
                    (true, since) => since,
                };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The last instance the engine decided (`None`: not known yet).
    pub fn last_decided(&self) -> Option<u64> {
        self.view
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .last_decided
    }

    /// Why node `node` cannot serve now (`None`: its engine is an active member, or not seen yet).
    pub fn out(&self, node: u8) -> Option<Out> {
        self.view
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .out(node)
    }

    /// Wait while node `node`'s engine is out only for a moment (recovering after a safe exit,
    /// rejoining, joining: [`Out::Transient`]), until `limit` after it went out. A command that
    /// arrives then is answered a little later instead of at once with `TRYAGAIN` (a safe exit
    /// under a scheduling stall is usually over within tens of milliseconds); once the outage
    /// is older than `limit` (a long rejoin), commands are answered at once again, so clients
    /// turn to another node instead of waiting each time.
    pub fn ride_out(&self, node: u8, limit: Duration) {
        while self.briefly_out(node, limit) {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Whether the engine is out only for a moment ([`Out::Transient`]) and has been for less
    /// than `limit`: what [`EngineWatch::ride_out`] waits for, asked without waiting.
    pub fn briefly_out(&self, node: u8, limit: Duration) -> bool {
        let v = self.view.lock().unwrap_or_else(|p| p.into_inner());
        matches!(v.out(node), Some(Out::Transient(_)))
            && v.transient_since.is_some_and(|t| t.elapsed() < limit)
    }

    /// One line for INFO-like reports.
    pub fn describe(&self) -> String {
        let v = self.view.lock().unwrap_or_else(|p| p.into_inner());
        match (&v.state, v.seen) {
            (_, false) => "not seen yet".into(),
            (Some(s), _) if v.rejoining => format!("{s} (rejoining)"),
            (Some(s), _) => s.clone(),
            (None, _) => format!("unreachable ({})", v.error.as_deref().unwrap_or("?")),
        }
    }
}

/// Bring this node's engine (control socket `ctl`, configuration `config`) into a running
/// cluster through `member`: configure it, enable it with JOIN, and wait until it joined (the
/// engine fetches the member's log and goes active). The engine's answer.
pub fn join_cluster(
    ctl: &std::path::Path,
    config: &proto::regs::Config,
    member: u8,
) -> Result<serde_json::Value, String> {
    let bus = EngineBus::connect(ctl).map_err(|e| e.to_string())?;
    let mut r = soc_ctl::regfile::Registers::new(bus);
    soc_ctl::regfile::configure(&mut r, config)?;
    soc_ctl::regfile::join_engine(&mut r, member as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::net::UnixListener;
    use std::time::Instant;

    /// A control socket that answers `status` with `state(elapsed since start)`.
    fn scripted(dir: &std::path::Path, state: fn(Duration) -> &'static str) -> PathBuf {
        let path = dir.join("e.sock");
        let l = UnixListener::bind(&path).unwrap();
        std::thread::spawn(move || {
            let t0 = Instant::now();
            for s in l.incoming() {
                let Ok(s) = s else { return };
                let mut w = s.try_clone().unwrap();
                for line in BufReader::new(s).lines() {
                    let Ok(_) = line else { break };
                    let v = serde_json::json!({"ok": {"state": state(t0.elapsed()),
                        "recovery": {"rejoining": false}, "last_decided": 1}});
                    if writeln!(w, "{v}").is_err() {
                        break;
                    }
                }
            }
        });
        path
    }

    fn seen(w: &EngineWatch) {
        let t0 = Instant::now();
        while w.describe() == "not seen yet" {
            assert!(t0.elapsed() < Duration::from_secs(10), "never seen");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_command_rides_out_a_short_recovery() {
        let dir = tempfile::tempdir().unwrap();
        let w = EngineWatch::spawn(scripted(dir.path(), |t| {
            if t < Duration::from_millis(300) {
                "Recovering"
            } else {
                "Active"
            }
        }));
        seen(&w);
        assert!(matches!(w.out(0), Some(Out::Transient(_))));
        let t0 = Instant::now();
        w.ride_out(0, Duration::from_secs(20));
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "waited to the limit"
        );
        assert_eq!(w.out(0).map(|_| ()), None, "back: served");
    }

    #[test]
    fn a_longer_outage_is_waited_for_only_up_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let start = Instant::now();
        let w = EngineWatch::spawn(scripted(dir.path(), |_| "Recovering"));
        seen(&w);
        w.ride_out(0, Duration::from_millis(200));
        // The limit counts from when the outage was first seen (after `start`).
        assert!(start.elapsed() >= Duration::from_millis(200));
        assert!(matches!(w.out(0), Some(Out::Transient(_))), "still out");
    }

    #[test]
    fn an_outage_older_than_the_limit_is_not_waited_for_again() {
        let dir = tempfile::tempdir().unwrap();
        let w = EngineWatch::spawn(scripted(dir.path(), |_| "Joining"));
        seen(&w);
        assert!(w.briefly_out(0, Duration::from_millis(200)));
        w.ride_out(0, Duration::from_millis(200));
        assert!(!w.briefly_out(0, Duration::from_millis(200)));
        // The outage is now older than the limit: the next command is answered at once.
        let t0 = Instant::now();
        w.ride_out(0, Duration::from_millis(200));
        assert!(
            t0.elapsed() < Duration::from_millis(100),
            "{:?}",
            t0.elapsed()
        );
        assert!(matches!(w.out(0), Some(Out::Transient(_))), "still out");
    }

    #[test]
    fn an_outage_that_needs_a_person_is_not_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let w = EngineWatch::spawn(scripted(dir.path(), |_| "Disabled"));
        seen(&w);
        assert!(!w.briefly_out(0, Duration::from_secs(20)));
        let t0 = Instant::now();
        w.ride_out(0, Duration::from_secs(20));
        assert!(t0.elapsed() < Duration::from_secs(10));
        assert!(matches!(w.out(0), Some(Out::Down(_))));
    }
}
