//! The Prometheus pages of `redis-nc --metrics` and `zk-nc --metrics` (served by
//! `soc_ctl::metrics::serve`): what both report, the applied instance, the engine's decided
//! instance and the lag between them, and the feed's counters.

use soc_ctl::metrics::Text;

use crate::feed::FeedStats;

/// The applied instance, the engine's last decided one and the lag (both absent when the engine
/// is not watched), and the feed counters. Every sample carries `labels`.
pub fn apply_and_feed(
    t: &mut Text,
    labels: &[(&str, &str)],
    applied: u64,
    decided: Option<u64>,
    f: &FeedStats,
) {
    t.one(
        "nc_applied_instance",
        "gauge",
        "Last instance applied to the local replica.",
        labels,
        applied,
    );
    t.family(
        "nc_engine_decided_instance",
        "gauge",
        "The local engine's last decided instance (absent without --engine-ctl or while unknown).",
    );
    if let Some(d) = decided {
        t.sample("nc_engine_decided_instance", labels, d);
    }
    t.family(
        "nc_apply_lag",
        "gauge",
        "Instances decided by the engine but not yet applied here (absent while unknown).",
    );
    if let Some(d) = decided {
        t.sample("nc_apply_lag", labels, d.saturating_sub(applied));
    }
    let feed: [(&str, &str, u64); 5] = [
        (
            "nc_feed_host_copies_total",
            "Host copies received.",
            f.received,
        ),
        (
            "nc_feed_gaps_total",
            "Gaps found in the host copies.",
            f.gaps,
        ),
        (
            "nc_feed_repairs_total",
            "Repairs: fetches from the engine's log that returned missing instances.",
            f.repairs,
        ),
        (
            "nc_feed_repaired_instances_total",
            "Instances obtained by repairs.",
            f.repaired,
        ),
        (
            "nc_feed_unrepairable_total",
            "Gaps the engine could not fill (a state transfer was needed).",
            f.unrepairable,
        ),
    ];
    for (name, help, v) in feed {
        t.one(name, "counter", help, labels, v);
    }
}
