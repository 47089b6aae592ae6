//! The checker must be able to fail: a deliberately broken model (proto's
//! `mutations` feature) must be caught, and the same campaign with the real
//! model must pass.

use proto::node::Node;
use testbench::campaign::{Summary, campaign};
use testbench::faults::Faults;
use testbench::sim::SimConfig;

fn cfg(faults: &str, hook: Option<fn(&mut Node)>) -> SimConfig {
    SimConfig {
        nodes: 3,
        trees: 2,
        faults: Faults::parse(faults).unwrap(),
        trace: false,
        node_hook: hook,
        early: Default::default(),
        auth: Default::default(),
    }
}

fn failures_mentioning(s: &Summary, what: &str) -> usize {
    s.failed
        .iter()
        .filter(|r| r.verdict.violations.iter().any(|v| v.contains(what)))
        .count()
}

#[test]
fn delivering_on_the_first_copy_breaks_agreement_and_is_caught() {
    fn broken(n: &mut Node) {
        n.mutations.deliver_on_first_copy = true;
    }
    let bad = campaign(&cfg("partition,crash", Some(broken)), 0, 600, 2);
    assert!(
        failures_mentioning(&bad, "uniform agreement") > 0,
        "the checker missed a disagreement caused by delivering on the first RSBCAST copy"
    );
    let good = campaign(&cfg("partition,crash", None), 0, 600, 2);
    assert!(
        good.failed.is_empty(),
        "real model failed seed {:?}",
        good.failed.first().map(|r| r.seed)
    );
}

#[test]
fn not_resetting_the_timeout_on_receive_deposes_live_leaders_and_is_caught() {
    fn broken(n: &mut Node) {
        n.mutations.skip_timeout_reset = true;
    }
    let bad = campaign(&cfg("none", Some(broken)), 0, 100, 2);
    assert!(
        failures_mentioning(&bad, "two leaders") > 0,
        "{:?}",
        bad.failed.first().map(|r| &r.verdict)
    );
    let good = campaign(&cfg("none", None), 0, 100, 2);
    assert!(good.failed.is_empty());
}

#[test]
fn a_leader_without_its_lease_loses_writes_after_a_pause_and_is_caught() {
    // A leader frozen about a timeout long resumes when its followers may already have timed
    // out on it: without the lease it decides (and acknowledges) at once, and the successor
    // decides the same instance differently.
    fn broken(n: &mut Node) {
        n.mutations.skip_lease = true;
    }
    let bad = campaign(&cfg("pause", Some(broken)), 0, 400, 2);
    assert!(
        failures_mentioning(&bad, "uniform agreement") > 0,
        "the checker missed a leader that decided past its lease"
    );
    let good = campaign(&cfg("pause", None), 0, 400, 2);
    assert!(
        good.failed.is_empty(),
        "real model failed seed {:?}",
        good.failed.first().map(|r| r.seed)
    );
}
