//! The node's engine as its host application sees it: its state, polled every 20 ms on the
//! engine's control socket, so that a front can answer at once when its node is out instead of
//! letting clients wait for a decision that cannot reach this replica.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use soc_ctl::regfile::EngineBus;

#[derive(Clone, Debug, Default)]
struct View {
    /// At least one poll has finished.
    seen: bool,
    /// Its state (`Active`, `Joining`, …); `None`: unreachable.
    state: Option<String>,
    rejoining: bool,
    last_decided: Option<u64>,
    error: Option<String>,
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
        let v = self.view.lock().unwrap_or_else(|p| p.into_inner());
        if !v.seen {
            return None;
        }
        match v.state.as_deref() {
            None => Some(Out::Down(format!(
                "node {node}: its engine is unreachable ({})",
                v.error.as_deref().unwrap_or("?")
            ))),
            Some("Active") if !v.rejoining => None,
            Some(s @ ("Joining" | "Recovering" | "Faulted")) if v.rejoining || s != "Faulted" => {
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
