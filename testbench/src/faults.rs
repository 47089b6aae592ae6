//! Fault injection drawn from the seed.

use std::fmt;

use crate::rng::Rng;
use crate::sim::Timing;

/// Fault classes (`--faults` names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Faults(u16);

/// Every class with its CLI name and what it does.
pub const CLASSES: &[(&str, u16, &str)] = &[
    (
        "crash",
        1 << 0,
        "crash up to n-1 nodes (a given node or whoever leads) at any moment",
    ),
    (
        "midsend",
        1 << 1,
        "the leader crashes between its copies on different trees",
    ),
    (
        "linkdown",
        1 << 2,
        "one tree's link goes down (and maybe up again) for some nodes",
    ),
    ("drop", 1 << 3, "random copies are dropped for a while"),
    (
        "late",
        1 << 4,
        "one copy arrives later than Δ_I: a synchrony violation",
    ),
    (
        "join",
        1 << 5,
        "a node is absent at START and joins mid-run with a state transfer",
    ),
    (
        "config",
        1 << 6,
        "a client raises the timeout through a CONFIG instance",
    ),
    (
        "partition",
        1 << 7,
        "tree 0 goes down for some nodes just as the leader crashes after its tree-0 copy",
    ),
    (
        "restart",
        1 << 8,
        "a crashed node, or one that made a safe exit, restarts and joins again",
    ),
    (
        "pause",
        1 << 9,
        "a process is frozen (SIGSTOP) about a timeout long, the leader at its lease's edge, or a follower for longer",
    ),
    (
        "recovery-crash",
        1 << 10,
        "the node a recovery elects crashes right after it begins to lead",
    ),
    (
        "second-fault",
        1 << 11,
        "copies are dropped just after a recovery (a second NET-FAULT during it)",
    ),
];

impl Faults {
    /// Every class.
    pub const ALL: Faults = Faults(0xFFF);
    /// No faults.
    pub const NONE: Faults = Faults(0);

    /// Parse a comma-separated list of class names, `all` or `none`.
    pub fn parse(s: &str) -> Result<Faults, String> {
        let mut f = 0;
        for name in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            match name {
                "all" => f |= Faults::ALL.0,
                "none" => {}
                _ => match CLASSES.iter().find(|c| c.0 == name) {
                    Some(c) => f |= c.1,
                    None => {
                        let names: Vec<&str> = CLASSES.iter().map(|c| c.0).collect();
                        return Err(format!(
                            "unknown fault class {name:?}; known: all, none, {}",
                            names.join(", ")
                        ));
                    }
                },
            }
        }
        Ok(Faults(f))
    }

    /// Whether `name` is enabled.
    pub fn has(self, name: &str) -> bool {
        CLASSES.iter().any(|c| c.0 == name && self.0 & c.1 != 0)
    }
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Faults::ALL {
            return write!(f, "all");
        }
        let names: Vec<&str> = CLASSES
            .iter()
            .filter(|c| self.0 & c.1 != 0)
            .map(|c| c.0)
            .collect();
        if names.is_empty() {
            write!(f, "none")
        } else {
            write!(f, "{}", names.join(","))
        }
    }
}

/// Nodes as a bit set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeSet(pub u64);

impl NodeSet {
    /// Members in increasing order.
    pub fn iter(self) -> impl Iterator<Item = u8> {
        (0..64u8).filter(move |i| self.0 & (1 << i) != 0)
    }
}

/// One injected fault (times are in simulated time units).
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// Crash `node` at `at`.
    Crash { node: u8, at: u64 },
    /// Crash whoever leads at `at`.
    CrashLeader { at: u64 },
    /// The leader at `at` crashes before step `after` of its next send with a value
    /// (steps: its |G| copies, then its decision, then its OKs).
    MidSend { at: u64, after: u8 },
    /// `node`'s link on `tree` is down from `at` (until `until`).
    LinkDown {
        node: u8,
        tree: u8,
        at: u64,
        until: Option<u64>,
    },
    /// Tree 0 goes down for `nodes` at `at`, and the leader crashes after its next tree-0 copy.
    Partition { nodes: NodeSet, at: u64 },
    /// Copies (on `tree`, or any) are dropped with probability `p` in `from..until`.
    Drop {
        from: u64,
        until: u64,
        p: f64,
        tree: Option<u8>,
    },
    /// The first copy to `to` after `at` is delayed by Δ_I + `extra`.
    Late { at: u64, to: u8, extra: u64 },
    /// `node` restarts at `at` if it is down (crashed or safe-exited) and joins again.
    Restart { node: u8, at: u64 },
    /// `node` is absent at START and is enabled as a joining node at `at`.
    Join { node: u8, at: u64 },
    /// Client `client`'s `nth` request is a CONFIG raising the timeout.
    Config { client: u8, nth: u32 },
    /// The leader (or `node`) is frozen at `at` for `dur`; what reaches it meanwhile waits.
    Pause { node: Option<u8>, at: u64, dur: u64 },
    /// The first node a recovery elects crashes as it begins to lead.
    RecoveryCrash,
    /// Copies are dropped for a while right after the first recovery.
    SecondFault,
}

/// The faults of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultPlan {
    /// In drawing order.
    pub faults: Vec<Fault>,
}

impl FaultPlan {
    /// Draw faults for a run of `n` nodes and `g` trees from the enabled classes.
    pub fn draw(rng: &mut Rng, n: u8, g: u8, t: &Timing, enabled: Faults) -> FaultPlan {
        let p = t.cfg.loop_period as u64;
        let to = t.cfg.timeout as u64;
        let begin = t.cfg.delta as u64 + to;
        let horizon = begin + t.requests as u64 * t.interval + 2 * to;
        let when = |rng: &mut Rng| rng.range(begin, horizon);
        let mut faults = Vec::new();
        let mut crashes_left = n.saturating_sub(1) as u64;
        let mut joiner = None;
        if enabled.has("join") && n >= 2 && rng.chance(0.4) {
            let node = rng.range(1, n as u64 - 1) as u8;
            joiner = Some(node);
            faults.push(Fault::Join {
                node,
                at: when(rng),
            });
        }
        if enabled.has("crash") && crashes_left > 0 && rng.chance(0.6) {
            for _ in 0..rng.range(1, crashes_left) {
                let at = when(rng);
                if rng.chance(0.5) {
                    faults.push(Fault::CrashLeader { at });
                } else {
                    faults.push(Fault::Crash {
                        node: rng.range(0, n as u64 - 1) as u8,
                        at,
                    });
                }
                crashes_left -= 1;
            }
        }
        if enabled.has("midsend") && crashes_left > 0 && rng.chance(0.3) {
            // Between two copies (|G| > 1), after the copies but before the decision (g),
            // or after the decision but before the OKs (g + 1).
            faults.push(Fault::MidSend {
                at: when(rng),
                after: rng.range(1, g as u64 + 1) as u8,
            });
            crashes_left -= 1;
        }
        if enabled.has("partition") && g > 1 && n >= 3 && crashes_left > 0 && rng.chance(0.2) {
            let mut set = 0u64;
            while set == 0 || set.count_ones() >= n as u32 - 1 {
                set = rng.next_u64() & ((1u64 << n) - 1);
            }
            faults.push(Fault::Partition {
                nodes: NodeSet(set),
                at: when(rng),
            });
        }
        if enabled.has("linkdown") && rng.chance(0.25) {
            let tree = rng.range(0, g as u64 - 1) as u8;
            for _ in 0..rng.range(1, (n as u64 - 1).max(1)) {
                let at = when(rng);
                let until = rng.chance(0.5).then(|| at + rng.range(p, 20 * p));
                faults.push(Fault::LinkDown {
                    node: rng.range(0, n as u64 - 1) as u8,
                    tree,
                    at,
                    until,
                });
            }
        }
        if enabled.has("drop") && rng.chance(0.25) {
            let from = when(rng);
            faults.push(Fault::Drop {
                from,
                until: from + rng.range(10 * p, 100 * p),
                p: rng.range(1, 30) as f64 / 1000.0,
                tree: rng.chance(0.5).then(|| rng.range(0, g as u64 - 1) as u8),
            });
        }
        if enabled.has("late") && rng.chance(0.15) {
            let mut to_node = rng.range(0, n as u64 - 1) as u8;
            if Some(to_node) == joiner {
                to_node = 0;
            }
            faults.push(Fault::Late {
                at: when(rng),
                to: to_node,
                extra: rng.range(1, 3 * to),
            });
        }
        if enabled.has("restart") && n >= 2 && rng.chance(0.5) {
            // Restarts only act on nodes that are down then; the horizon is stretched so they
            // also land after the crashes and safe exits drawn above.
            for _ in 0..rng.range(1, n as u64) {
                faults.push(Fault::Restart {
                    node: rng.range(0, n as u64 - 1) as u8,
                    at: rng.range(begin, horizon + 4 * to),
                });
            }
        }
        if enabled.has("pause") && rng.chance(0.3) {
            let window = t.cfg.window();
            let (node, dur) = if rng.chance(0.7) {
                // The leader, resuming around the moment its followers time out on it.
                (
                    None,
                    rng.range(to.saturating_sub(window), to + 2 * t.cfg.delta as u64),
                )
            } else {
                (
                    Some(rng.range(0, n as u64 - 1) as u8),
                    rng.range(to, 3 * to),
                )
            };
            faults.push(Fault::Pause {
                node,
                at: when(rng),
                dur,
            });
        }
        if enabled.has("recovery-crash") && crashes_left > 0 && rng.chance(0.3) {
            faults.push(Fault::RecoveryCrash);
            crashes_left -= 1;
        }
        debug_assert!(crashes_left < n as u64, "at most n-1 crashes");
        if enabled.has("second-fault") && rng.chance(0.3) {
            faults.push(Fault::SecondFault);
        }
        if enabled.has("config") && rng.chance(0.3) {
            faults.push(Fault::Config {
                client: 0,
                nth: rng.range(1, t.requests as u64) as u32,
            });
        }
        FaultPlan { faults }
    }
}

impl fmt::Display for FaultPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.faults.is_empty() {
            return write!(f, "no faults");
        }
        for (i, x) in self.faults.iter().enumerate() {
            if i > 0 {
                write!(f, "; ")?;
            }
            write!(f, "{x:?}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names_and_refuse_unknown() {
        assert_eq!(Faults::parse("all").unwrap(), Faults::ALL);
        let f = Faults::parse("crash,join").unwrap();
        assert!(f.has("crash") && f.has("join") && !f.has("drop"));
        assert_eq!(f.to_string(), "crash,join");
        assert!(Faults::parse("crash,flood").unwrap_err().contains("flood"));
        assert_eq!(Faults::parse("none").unwrap(), Faults::NONE);
    }
}
