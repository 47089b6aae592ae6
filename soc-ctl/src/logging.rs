//! Diagnostics of the long-running programs (`nc-engine`, `redis-nc`, `zk-nc node`,
//! `xdp-log attach`, `nc-raft`): `tracing` events, written to stderr by [`init`].
//!
//! - Which events: `RUST_LOG` when it is set (`tracing_subscriber`'s `EnvFilter` syntax, e.g.
//!   `RUST_LOG=soc_ctl=debug`), otherwise the `-v` count: none shows this workspace's info
//!   events and other crates' warnings, `-v` adds this workspace's debug events (nc-engine: state
//!   changes and synchrony violations), `-vv` its trace events and other crates' info, `-vvv`
//!   everything.
//! - How: `--log-format text` (default; `NC_LOG_FORMAT`) writes one line per event, time, level
//!   and message: the message of every event of this workspace names the values of its fields,
//!   so the line carries only the message (other crates' events add their fields as `k=v`).
//!   `--log-format json` writes one JSON object per line: `timestamp`, `level`, `message`, the
//!   event's fields by name (`node`, `epoch`, `instance`, ...) and `target`.
//!
//! Usage and configuration errors before the program starts (exit code 2), its final error
//! line, command output on stdout and progress bars are not events: they stay plain text.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::FmtContext;
use tracing_subscriber::fmt::format::{FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::registry::LookupSpan;

/// How events are written to stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line per event: time, level, message.
    #[default]
    Text,
    /// One JSON object per line: timestamp, level, message, the fields, target.
    Json,
}

/// The logging flags of every long-running program (`#[command(flatten)]`).
#[derive(Clone, Debug, clap::Args)]
pub struct LogArgs {
    /// More diagnostics on stderr: -v debug, -vv trace (RUST_LOG, when set, decides instead).
    #[arg(long, short, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Diagnostics on stderr as `text` lines or as `json` (one object per line: timestamp,
    /// level, message, fields).
    #[arg(long, value_enum, value_name = "FORMAT", env = "NC_LOG_FORMAT",
          default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

impl LogArgs {
    /// [`init`] with these flags.
    pub fn init(&self) {
        init(self.verbose, self.log_format)
    }
}

/// The crates of this workspace (event targets start with their names; prefixes match).
const OURS: &[&str] = &[
    "nc_engine",
    "soc_ctl",
    "nc_client",
    "proto",
    "host_app",
    "redis_nc",
    "zk_nc",
    "xdp_log",
    "nc_tools",
    "nc_raft",
    "nc_lab",
];

fn ours(target: &str) -> bool {
    OURS.iter().any(|c| {
        target
            .strip_prefix(c)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
}

/// The filter without `RUST_LOG`, from the `-v` count.
pub fn directives(verbosity: u8) -> String {
    let (ours, others) = match verbosity {
        0 => ("info", "warn"),
        1 => ("debug", "warn"),
        2 => ("trace", "info"),
        _ => return "trace".into(),
    };
    let mut d = others.to_string();
    for c in OURS {
        d.push_str(&format!(",{c}={ours}"));
    }
    d
}

/// Write this process's `tracing` events to stderr: filtered by `RUST_LOG` when it is set and
/// not empty (invalid directives are named on stderr and ignored), otherwise by
/// [`directives`]`(verbosity)`; formatted as `format` says. Call once, first thing after the
/// flags are parsed; a second call changes nothing.
pub fn init(verbosity: u8, format: LogFormat) {
    use tracing_subscriber::layer::SubscriberExt;
    let filter = match std::env::var("RUST_LOG") {
        Ok(v) if !v.trim().is_empty() => EnvFilter::builder().parse_lossy(v),
        _ => EnvFilter::builder().parse_lossy(directives(verbosity)),
    };
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let r = match format {
        LogFormat::Text => tracing::subscriber::set_global_default(
            tracing_subscriber::registry()
                .with(filter)
                .with(layer.event_format(Text)),
        ),
        LogFormat::Json => tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(filter).with(
                layer
                    .json()
                    .flatten_event(true)
                    .with_current_span(false)
                    .with_span_list(false),
            ),
        ),
    };
    // Already set (a second call): the first one stays.
    drop(r);
}

/// `--log-format text`: `TIME LEVEL message`, plus `k=v` for the fields of other crates' events.
struct Text;

impl<S, N> FormatEvent<S, N> for Text
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        SystemTime.format_time(&mut w)?;
        write!(w, " {:>5} ", meta.level())?;
        let mut v = Fields {
            message: String::new(),
            rest: String::new(),
            all: !ours(meta.target()),
        };
        event.record(&mut v);
        writeln!(w, "{}{}", v.message, v.rest)
    }
}

/// The message, and the other fields as ` k=v` when `all`.
struct Fields {
    message: String,
    rest: String,
    all: bool,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else if self.all {
            self.rest.push_str(&format!(" {}={value}", field.name()));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.message.push_str(&format!("{value:?}"));
        } else if self.all {
            self.rest.push_str(&format!(" {}={value:?}", field.name()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_raises_this_workspace_first() {
        assert!(directives(0).starts_with("warn,"));
        assert!(directives(0).contains(",soc_ctl=info"));
        assert!(directives(1).contains(",host_app=debug") && directives(1).starts_with("warn,"));
        assert!(directives(2).contains(",nc_engine=trace") && directives(2).starts_with("info,"));
        assert_eq!(directives(3), "trace");
        for v in 0..4 {
            let f = EnvFilter::builder().parse(directives(v));
            assert!(f.is_ok(), "{v}: {f:?}");
        }
    }

    #[test]
    fn ours_are_crate_names_not_prefixes() {
        assert!(ours("soc_ctl::engine") && ours("nc_engine") && ours("zk_nc"));
        assert!(!ours("protobuf") && !ours("zookeeper_client::session"));
    }
}
