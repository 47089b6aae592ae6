//! The property checker: judges a run from what it recorded (decisions,
//! sends, client replies), never from the model's internals.
//!
//! Safety — uniform agreement, validity, integrity, exactly-once application,
//! no lost acknowledged write, safe exit, decisions within one message delay
//! — is claimed unless the run injected a synchrony violation (a copy later
//! than Δ_I) or lost every copy of a fully sent message to a live receiver
//! (more network failures than |G| trees can mask). Liveness — requests
//! decided within a bound, failover within k·timeout + Δ_I with no live node
//! skipped, all clients answered, joins completed, identical final logs — is
//! claimed only for runs whose faults are crashes, joins and CONFIG changes.

use std::collections::{BTreeMap, HashMap, HashSet};

use proto::apply::Applier;
use proto::node::State;
use proto::wire::{Decide, DecideKind, DecideMeta};

use crate::sim::{History, Log, Logged, Timing};

/// The checker's verdict on one run.
#[derive(Clone, Debug, Default)]
pub struct Verdict {
    /// Broken properties the run promised (each a readable sentence).
    pub violations: Vec<String>,
    /// Broken properties in a run that did not promise them (injected synchrony violation or
    /// redundancy exceeded): reported, not counted.
    pub unclaimed: Vec<String>,
    /// Safety was promised.
    pub safety_claimed: bool,
    /// Liveness was promised.
    pub liveness_claimed: bool,
    /// Recovery was promised: network faults happened but healed, and at the end a majority of
    /// the configured nodes could take part in a recovery (they hold a log).
    pub recovery_claimed: bool,
}

type Entry = (u32, u64, u8, Vec<u8>);

fn entries(count: u16, raw: &[u8]) -> Vec<Entry> {
    let d = Decide {
        meta: DecideMeta {
            instance: 0,
            epoch: 0,
            msg_seq: 0,
            tree: 0,
            kind: DecideKind::Batch,
        },
        count,
        entries_raw: raw,
    };
    d.entries()
        .map(|e| (e.client_id, e.seq, e.flags, e.payload.to_vec()))
        .collect()
}

/// Check every property of a run.
pub fn check(h: &History, t: &Timing, n: u8) -> Verdict {
    let safety_claimed = !h.late_injected && !h.redundancy_exceeded;
    let liveness_claimed = safety_claimed && !h.network_faults && !h.paused;
    let mut safety = Vec::new();
    let mut live = Vec::new();
    let delta = t.cfg.delta as u64;
    let nn = n as usize;

    // Each node's effective log: snapshot (joiners) + own decisions.
    let mut logs: Vec<Log> = h.snapshot_log.clone();

    // Integrity: per node, instances decided once each, consecutively.
    // (A restarted node starts a new incarnation: its count starts again.)
    let mut last: Vec<Option<u64>> = vec![None; nn];
    let mut last_index: Vec<usize> = vec![0; nn];
    let mut first_time: HashMap<u64, u64> = HashMap::new();
    let mut agreed: BTreeMap<u64, (u8, DecideKind, u16, Vec<u8>)> = BTreeMap::new();
    for (k, d) in h.decisions.iter().enumerate() {
        let i = d.node as usize;
        if h.restart_marks[i]
            .iter()
            .any(|&m| last_index[i] <= m && m <= k)
        {
            last[i] = None;
        }
        last_index[i] = k + 1;
        if let Some(l) = last[i]
            && d.instance != l + 1
        {
            safety.push(format!(
                "integrity: node {i} decided instance {} right after {l} (at t={})",
                d.instance, d.time
            ));
        }
        last[i] = Some(d.instance);
        if !d.kind.is_value() {
            safety.push(format!(
                "validity: node {i} delivered a {:?} as instance {}",
                d.kind, d.instance
            ));
        }
        // Uniform agreement, crashed and faulted nodes included.
        match agreed.get(&d.instance) {
            Some((j, k, c, e)) if (*k, *c, &e[..]) != (d.kind, d.count, &d.entries[..]) => safety.push(format!(
                "uniform agreement: instance {} decided differently by node {j} and node {i} (t={})",
                d.instance, d.time
            )),
            Some(_) => {}
            None => {
                agreed.insert(d.instance, (d.node, d.kind, d.count, d.entries.to_vec()));
            }
        }
        // One message delay: every decision of an instance within Δ_I of the first.
        let f = *first_time.entry(d.instance).or_insert(d.time);
        if d.time > f + delta && !d.recovered {
            safety.push(format!(
                "timeliness: node {i} decided instance {} at t={}, more than Δ_I={delta} after t={f}",
                d.instance, d.time
            ));
        }
        // (A repeat would have broken the consecutive check above.)
        logs[i].insert(
            d.instance,
            Logged {
                kind: d.kind,
                count: d.count,
                entries: d.entries.to_vec(),
            },
        );
    }
    // Snapshots must agree too (they are some member's log).
    for (i, snap) in h.snapshot_log.iter().enumerate() {
        for (inst, l) in snap {
            if let Some((j, k2, c2, e2)) = agreed.get(inst)
                && (*k2, *c2, &e2[..]) != (l.kind, l.count, &l.entries[..])
            {
                safety.push(format!("uniform agreement: node {i}'s snapshot differs from node {j} at instance {inst}"));
            }
        }
    }

    // Validity: every decided entry is a request some client sent, byte for byte.
    for (inst, (_, _, c, raw)) in &agreed {
        for (client, seq, flags, payload) in entries(*c, raw) {
            match h.requests.get(&(client, seq)) {
                Some((f, p)) if *f == flags && *p == payload => {}
                _ => safety.push(format!(
                    "validity: instance {inst} holds ({client}, {seq}) that no client sent"
                )),
            }
        }
    }

    // Safe exit.
    for (i, x) in h.delivered_after_fault.iter().enumerate() {
        if *x > 0 {
            safety.push(format!(
                "safe exit: node {i} decided {x} instance(s) after its NET-FAULT"
            ));
        }
    }

    // Acknowledged writes: the OK names the right entry, and no surviving member lacks it.
    let survivors: Vec<usize> = (0..nn)
        .filter(|&i| h.crashed_at[i].is_none() && h.final_state[i].0 == State::Active)
        .collect();
    for &(time, client, seq, inst, index) in &h.oks {
        match agreed.get(&inst).map(|(_, _, c, raw)| entries(*c, raw)) {
            Some(es) if es.get(index as usize).is_some_and(|e| (e.0, e.1) == (client, seq)) => {}
            _ => safety.push(format!(
                "acknowledged write: OK at t={time} says ({client}, {seq}) is entry {index} of instance {inst}, but it is not"
            )),
        }
        // (An OK at the very end may still be on its way to the followers.)
        let settled = time + 2 * delta <= h.end;
        for &i in survivors.iter().filter(|_| settled) {
            if !logs[i].contains_key(&inst) {
                safety.push(format!(
                    "acknowledged write lost: node {i} survived without instance {inst} holding ({client}, {seq})"
                ));
            }
        }
    }

    // Exactly-once application: surviving nodes apply the same requests in the same order.
    let applied: Vec<Vec<(u32, u64)>> = logs
        .iter()
        .map(|log| {
            let mut a = Applier::new();
            let mut out = Vec::new();
            for l in log.values() {
                for (client, seq, _, _) in entries(l.count, &l.entries) {
                    if a.admit(client, seq) {
                        out.push((client, seq));
                    }
                }
            }
            out
        })
        .collect();
    for (i, log) in logs.iter().enumerate() {
        // Independently of the Applier: each distinct (client, seq) in the log applied exactly once.
        let distinct: HashSet<(u32, u64)> = log
            .values()
            .flat_map(|l| entries(l.count, &l.entries).into_iter().map(|e| (e.0, e.1)))
            .collect();
        let once: HashSet<&(u32, u64)> = applied[i].iter().collect();
        if once.len() != applied[i].len() || once.len() != distinct.len() {
            safety.push(format!(
                "application: node {i} applied {} entries for {} distinct requests",
                applied[i].len(),
                distinct.len()
            ));
        }
    }
    // Every survivor applies the same sequence (compared with the first; shorter = still behind).
    if let Some(&a) = survivors.first() {
        for &b in &survivors[1..] {
            let (x, y) = (&applied[a], &applied[b]);
            let k = x.len().min(y.len());
            if x[..k] != y[..k] {
                safety.push(format!(
                    "application: nodes {a} and {b} applied different request sequences"
                ));
            }
        }
    }

    if liveness_claimed {
        liveness(h, t, n, &logs, &survivors, &mut live);
    }
    // Faults are survived: after network faults that healed, a majority of the configured nodes
    // must have brought the cluster back (no person restarts anything in the simulator).
    let recovery_claimed = safety_claimed
        && !liveness_claimed
        && !h.paused
        && h.network_healed
        && h.capable_at_end > n as usize / 2;
    if recovery_claimed {
        if h.stuck {
            live.push(
                "recovery: no node was active for a long time although a majority could recover"
                    .into(),
            );
        }
        if h.hit_cap {
            live.push(format!(
                "recovery: the run was still busy at the time cap (t={})",
                h.end
            ));
        }
        if h.unanswered > 0 {
            live.push(format!(
                "recovery: {} client request(s) never answered OK after the network healed",
                h.unanswered
            ));
        }
        for i in 0..nn {
            if h.crashed_at[i].is_none()
                && h.enabled_at[i].is_some()
                && matches!(h.final_state[i].0, State::Recovering | State::Faulted)
            {
                live.push(format!(
                    "recovery: node {i} ended {:?} after the network healed",
                    h.final_state[i].0
                ));
            }
        }
    }

    let mut v = Verdict {
        safety_claimed,
        liveness_claimed,
        recovery_claimed,
        ..Verdict::default()
    };
    if safety_claimed {
        v.violations.extend(safety);
    } else {
        v.unclaimed.extend(safety);
    }
    v.violations.extend(live);
    v
}

/// The membership span of node `i` that contains time `t`.
fn span(h: &History, i: usize, t: u64) -> Option<(u64, Option<u64>)> {
    h.member[i]
        .iter()
        .copied()
        .find(|&(from, end)| from <= t && end.is_none_or(|e| t < e))
}

fn liveness(
    h: &History,
    t: &Timing,
    n: u8,
    logs: &[Log],
    survivors: &[usize],
    out: &mut Vec<String>,
) {
    let p = t.cfg.loop_period as u64;
    let delta = t.cfg.delta as u64;
    let nn = n as usize;
    for (i, f) in h.net_faults.iter().enumerate() {
        if *f > 0 {
            out.push(format!(
                "liveness: node {i} made {f} safe exit(s) in a run without network faults"
            ));
        }
    }
    // Requests a live leader accepted are decided by it within the FIFO drain bound.
    let per_send = t.cfg.batch_max as u64;
    let bound = (t.cfg.fifo_depth as u64).div_ceil(per_send) * p + 2 * p;
    let mut decided_at: HashMap<(u8, u32, u64), u64> = HashMap::new();
    for d in &h.decisions {
        for (client, seq, _, _) in entries(d.count, &d.entries) {
            decided_at.entry((d.node, client, seq)).or_insert(d.time);
        }
    }
    for &(node, ta, client, seq) in &h.accepted {
        // Only while the leader stays a member (no crash before the bound).
        if span(h, node as usize, ta).is_none_or(|(_, end)| end.is_some_and(|e| e <= ta + bound)) {
            continue;
        }
        match decided_at.get(&(node, client, seq)) {
            Some(&td) if td <= ta + bound => {}
            other => out.push(format!(
                "liveness: node {node} accepted ({client}, {seq}) at t={ta} but decided it {} (bound {bound})",
                other.map_or("never".to_string(), |td| format!("at t={td}"))
            )),
        }
    }
    // Failover: the next live node leads within k·timeout + Δ_I, skipping only dead ones.
    let mut epochs: BTreeMap<u32, (u8, u64, u64)> = BTreeMap::new();
    for s in &h.sends {
        let e = epochs.entry(s.epoch).or_insert((s.node, s.time, s.time));
        if e.0 != s.node {
            out.push(format!(
                "failover: nodes {} and {} both sent as leader of epoch {}",
                e.0, s.node, s.epoch
            ));
        }
        e.2 = s.time;
    }
    let timeout = h.max_timeout;
    let ep: Vec<(u32, (u8, u64, u64))> = epochs.into_iter().collect();
    for w in ep.windows(2) {
        let (e1, (l1, _, last1)) = w[0];
        let (e2, (_, first2, _)) = w[1];
        let k = (e2 - e1) as u64;
        if first2 > last1 + k * timeout + delta {
            out.push(format!(
                "failover: epoch {e2} began sending at t={first2}, more than {k}·timeout + Δ_I after epoch {e1}'s last send at t={last1}"
            ));
        }
        if span(h, l1 as usize, last1).is_some_and(|(_, end)| end.is_none_or(|e| e > first2)) {
            out.push(format!(
                "failover: epoch {e1}'s leader {l1} was alive when epoch {e2} began (two leaders)"
            ));
        }
        for e in e1 + 1..e2 {
            let i = (e % n as u32) as usize;
            // Skipping is right for a node that was not an active member all along
            // (crashed, made a safe exit, or still joining).
            let member_throughout =
                span(h, i, last1).is_some_and(|(_, end)| end.is_none_or(|e| e > first2));
            if member_throughout {
                out.push(format!(
                    "failover: node {i} was alive but skipped as leader of epoch {e}"
                ));
            }
        }
    }
    // CONFIG instances change every node's timeout at the same instance.
    if let Some(&a) = survivors.first() {
        for &b in &survivors[1..] {
            if h.final_timeout[a] != h.final_timeout[b] {
                out.push(format!(
                    "config: nodes {a} and {b} ended with timeouts {} and {}",
                    h.final_timeout[a], h.final_timeout[b]
                ));
            }
        }
    }
    if h.hit_cap {
        out.push(format!(
            "liveness: the run was still busy at the time cap (t={})",
            h.end
        ));
    }
    if h.unanswered > 0 {
        out.push(format!(
            "liveness: {} client request(s) never answered OK",
            h.unanswered
        ));
    }
    for i in 0..nn {
        if h.crashed_at[i].is_none()
            && h.enabled_at[i].is_some()
            && h.final_state[i].0 != State::Active
        {
            out.push(format!(
                "liveness: node {i} ended {:?}, not active",
                h.final_state[i].0
            ));
        }
    }
    // All survivors end with the same complete log.
    if let Some(&a) = survivors.first() {
        for &b in &survivors[1..] {
            if h.final_state[a].1 != h.final_state[b].1 {
                out.push(format!(
                    "liveness: nodes {a} and {b} ended at different instances {:?} / {:?}",
                    h.final_state[a].1, h.final_state[b].1
                ));
            }
        }
        for &i in survivors {
            let l = h.final_state[i].1.unwrap_or(0);
            if logs[i].len() as u64 != l || logs[i].keys().next_back().is_some_and(|&k| k != l) {
                out.push(format!(
                    "liveness: node {i} ended at instance {l} with {} logged",
                    logs[i].len()
                ));
            }
        }
    }
}
