//! Prometheus metrics: a writer for the text exposition format 0.0.4, a latency histogram that
//! costs one atomic add per bucket touched, and a tiny HTTP endpoint (`GET /metrics`) on a plain
//! std `TcpListener` thread. `nc-engine`, `redis-nc`, `zk-nc` and `xdp-log` serve one with
//! `--metrics ADDR`; `soc-ctl watch --metrics ADDR` reads an engine's ([`fetch`], [`parse`]).

use std::fmt::{Display, Write as _};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use proto::regs::Counter;
use serde_json::Value;

/// The Content-Type of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A metrics page being written: `# HELP`, `# TYPE`, then the samples of each family.
#[derive(Default)]
pub struct Text(String);

fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

fn escape_label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Text {
    /// An empty page.
    pub fn new() -> Text {
        Text::default()
    }

    /// Start a family: `kind` is `counter`, `gauge` or `histogram`.
    pub fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.0, "# TYPE {name} {kind}");
    }

    /// One sample of the current family.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Display) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{k}=\"{}\"", escape_label(v));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {value}");
    }

    /// A family of one sample.
    pub fn one(
        &mut self,
        name: &str,
        kind: &str,
        help: &str,
        labels: &[(&str, &str)],
        value: impl Display,
    ) {
        self.family(name, kind, help);
        self.sample(name, labels, value);
    }

    /// A histogram family (in seconds) from `h`.
    pub fn histogram(&mut self, name: &str, help: &str, labels: &[(&str, &str)], h: &Histogram) {
        self.family(name, "histogram", help);
        let mut cum = 0u64;
        let bucket = format!("{name}_bucket");
        for (i, b) in h.bounds_ns.iter().enumerate() {
            cum += h.buckets[i].load(Ordering::Relaxed);
            let le = (*b as f64 / 1e9).to_string();
            let mut l = labels.to_vec();
            l.push(("le", &le));
            self.sample(&bucket, &l, cum);
        }
        // Read the overflow bucket and the count after the buckets: a concurrent observation
        // can only make +Inf larger, never smaller than a finite bucket.
        cum += h.buckets[h.bounds_ns.len()].load(Ordering::Relaxed);
        let mut l = labels.to_vec();
        l.push(("le", "+Inf"));
        self.sample(&bucket, &l, cum);
        self.sample(
            &format!("{name}_sum"),
            labels,
            h.sum_ns.load(Ordering::Relaxed) as f64 / 1e9,
        );
        self.sample(&format!("{name}_count"), labels, cum);
    }

    /// The page.
    pub fn finish(self) -> String {
        self.0
    }
}

/// A latency histogram: fixed bucket bounds, one atomic counter per bucket and a sum. Observing
/// is two relaxed atomic adds, no lock.
pub struct Histogram {
    bounds_ns: Vec<u64>,
    /// One per bound, then the overflow (+Inf) bucket; not cumulative.
    buckets: Vec<AtomicU64>,
    sum_ns: AtomicU64,
}

/// Bucket bounds for request latencies: 50 µs to 10 s.
pub const LATENCY_BOUNDS_NS: &[u64] = &[
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    10_000_000_000,
];

/// Bucket bounds for a request's time in the engine (arrival → decided): 5 µs to 1 s.
pub const DECIDE_BOUNDS_NS: &[u64] = &[
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram::new(LATENCY_BOUNDS_NS)
    }
}

impl Histogram {
    /// A histogram with these upper bounds (ns, increasing).
    pub fn new(bounds_ns: &[u64]) -> Histogram {
        Histogram {
            bounds_ns: bounds_ns.to_vec(),
            buckets: (0..=bounds_ns.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_ns: AtomicU64::new(0),
        }
    }

    /// Count one observation of `ns` nanoseconds.
    pub fn observe_ns(&self, ns: u64) {
        let i = self.bounds_ns.partition_point(|b| *b < ns);
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Count one observation of `d`.
    pub fn observe(&self, d: Duration) {
        self.observe_ns(d.as_nanos().min(u64::MAX as u128) as u64);
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).sum()
    }
}

/// Serve `GET /metrics` on `addr` from a thread: 200 with `render()`'s page (500 with its error),
/// 404 for any other path, 405 for any other method. One connection at a time, each closed after
/// its answer. Returns the bound address (port 0 picks one).
pub fn serve<F>(addr: SocketAddr, render: F) -> io::Result<SocketAddr>
where
    F: Fn() -> Result<String, String> + Send + 'static,
{
    let listener = TcpListener::bind(addr)?;
    let bound = listener.local_addr()?;
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let _ = answer(conn, &render);
            }
        })?;
    Ok(bound)
}

fn answer<F>(conn: TcpStream, render: &F) -> io::Result<()>
where
    F: Fn() -> Result<String, String>,
{
    conn.set_read_timeout(Some(Duration::from_secs(2)))?;
    conn.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut r = BufReader::new(conn.try_clone()?.take(16 * 1024));
    let mut line = String::new();
    r.read_line(&mut line)?;
    // The headers: read up to the blank line (their content does not matter).
    let mut h = String::new();
    loop {
        h.clear();
        if r.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
    }
    let mut words = line.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, ctype, body) = if method != "GET" && method != "HEAD" {
        (
            "405 Method Not Allowed",
            "text/plain",
            "GET only\n".to_string(),
        )
    } else if path != "/metrics" {
        (
            "404 Not Found",
            "text/plain",
            "not found: try /metrics\n".to_string(),
        )
    } else {
        match render() {
            Ok(b) => ("200 OK", CONTENT_TYPE, b),
            Err(e) => ("500 Internal Server Error", "text/plain", format!("{e}\n")),
        }
    };
    let mut w = conn;
    write!(
        w,
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method != "HEAD" {
        w.write_all(body.as_bytes())?;
    }
    w.flush()
}

/// `GET /metrics` from `target`: `http://HOST:PORT[/PATH]` or `HOST:PORT` (path `/metrics`).
/// The body of a 200 answer; any other status is an error naming it.
pub fn fetch(target: &str) -> Result<String, String> {
    let rest = target.strip_prefix("http://").unwrap_or(target);
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/metrics"),
    };
    let err = |e: io::Error| format!("{target}: {e}");
    let addr = host
        .to_socket_addrs()
        .map_err(err)?
        .next()
        .ok_or_else(|| format!("{target}: no address"))?;
    let mut c = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(err)?;
    c.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(err)?;
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/plain\r\nConnection: close\r\n\r\n"
    )
    .map_err(err)?;
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).map_err(err)?;
    let raw = String::from_utf8(raw).map_err(|e| format!("{target}: {e}"))?;
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{target}: not an HTTP answer"))?;
    let status = head.lines().next().unwrap_or("");
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(format!("{target}: {status}"));
    }
    Ok(body.to_string())
}

/// One sample of a metrics page.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Metric name.
    pub name: String,
    /// Labels in page order.
    pub labels: Vec<(String, String)>,
    /// Value.
    pub value: f64,
}

impl Sample {
    /// The value of label `k`.
    pub fn label(&self, k: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    }
}

/// The samples of a text-format page (comments skipped; no timestamps expected).
pub fn parse(text: &str) -> Result<Vec<Sample>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || format!("line {}: {line:?}", n + 1);
        let (name, labels, rest) = match line.find('{') {
            Some(i) => {
                let mut labels = Vec::new();
                let mut s = &line[i + 1..];
                loop {
                    s = s.trim_start_matches(',');
                    if let Some(r) = s.strip_prefix('}') {
                        s = r;
                        break;
                    }
                    let eq = s.find("=\"").ok_or_else(bad)?;
                    let k = s[..eq].to_string();
                    let mut v = String::new();
                    let mut chars = s[eq + 2..].char_indices();
                    let end = loop {
                        match chars.next().ok_or_else(bad)? {
                            (j, '"') => break j,
                            (_, '\\') => match chars.next().ok_or_else(bad)?.1 {
                                'n' => v.push('\n'),
                                c => v.push(c),
                            },
                            (_, c) => v.push(c),
                        }
                    };
                    labels.push((k, v));
                    s = &s[eq + 2 + end + 1..];
                }
                (&line[..i], labels, s)
            }
            None => {
                let sp = line.find(' ').ok_or_else(bad)?;
                (&line[..sp], Vec::new(), &line[sp..])
            }
        };
        let v = rest.split_whitespace().next().ok_or_else(bad)?;
        let value = match v {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            v => v.parse().map_err(|_| bad())?,
        };
        out.push(Sample {
            name: name.to_string(),
            labels,
            value,
        });
    }
    Ok(out)
}

/// The value of the first sample named `name` whose labels include every pair of `labels`.
pub fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|s| s.name == name && labels.iter().all(|(k, v)| s.label(k) == Some(v)))
        .map(|s| s.value)
}

/// The page `nc-engine --metrics` serves, from the control socket's `status` answer: every
/// register counter as `nc_<name>_total`, the role, epoch, leader, last decided instance, state,
/// log length, the engine's own statistics, and `decided`: how long the requests this node
/// decided as leader waited, arrival → the send that decided them. Every sample carries `node`.
pub fn engine_text(st: &Value, decided: &Histogram) -> String {
    let node = st["node_id"].as_u64().unwrap_or(0).to_string();
    let l: &[(&str, &str)] = &[("node", &node)];
    let mut t = Text::new();
    let u = |v: &Value| v.as_u64().unwrap_or(0);
    for c in Counter::ALL {
        t.one(
            &format!("nc_{}_total", c.name()),
            "counter",
            c.doc(),
            l,
            u(&st["counters"][c.name()]),
        );
    }
    let gauges: [(&str, &str, &Value); 10] = [
        ("nc_epoch", "Current epoch.", &st["epoch"]),
        (
            "nc_leader",
            "Leader of the current epoch (epoch mod n).",
            &st["leader"],
        ),
        (
            "nc_status_bits",
            "The STATUS register (ACTIVE, LEADER, NET_FAULT, ... bits).",
            &st["status_bits"],
        ),
        (
            "nc_fifo_len",
            "Client requests queued in the egress FIFO.",
            &st["fifo_len"],
        ),
        (
            "nc_log_len",
            "Instances held in the engine's decision log.",
            &st["log_len"],
        ),
        (
            "nc_log_keep",
            "Instances the decision log keeps at most (--log-keep).",
            &st["log_keep"],
        ),
        ("nc_timeout", "The TIMEOUT register (ns).", &st["timeout"]),
        (
            "nc_loop_period",
            "The LOOP_PERIOD register (ns).",
            &st["loop_period"],
        ),
        (
            "nc_auth_mode",
            "Packet tags: 0 off, 1 on, 2 required.",
            &st["auth"]["mode"],
        ),
        (
            "nc_recovery_rejoining",
            "1 while the node comes back after a NET-FAULT.",
            &Value::from(u64::from(st["recovery"]["rejoining"] == true)),
        ),
    ];
    for (name, help, v) in gauges {
        t.one(name, "gauge", help, l, u(v));
    }
    t.one(
        "nc_is_leader",
        "gauge",
        "1 while this node leads the current epoch.",
        l,
        u64::from(st["is_leader"] == true),
    );
    t.family(
        "nc_last_decided_instance",
        "gauge",
        "Last decided instance (absent while a joining node is not locked on).",
    );
    if let Some(i) = st["last_decided"].as_u64() {
        t.sample("nc_last_decided_instance", l, i);
    }
    let state = st["state"].as_str().unwrap_or("Unknown");
    t.one(
        "nc_state",
        "gauge",
        "The node's state (the label; the value is always 1).",
        &[("node", &node), ("state", state)],
        1,
    );
    let e = &st["engine"];
    let r = &st["recovery"];
    let counters: [(&str, &str, &Value); 12] = [
        (
            "nc_engine_deposed_total",
            "Times this leader saw a higher epoch and stepped down.",
            &e["deposed"],
        ),
        (
            "nc_engine_fault_drops_total",
            "Datagrams dropped by the drop-tree test hook.",
            &e["fault_drops"],
        ),
        (
            "nc_engine_send_errors_total",
            "Sends that failed at the socket.",
            &e["send_errors"],
        ),
        (
            "nc_engine_publish_deferred_total",
            "Log publishes deferred because a reader held the log.",
            &e["publish_deferred"],
        ),
        (
            "nc_engine_log_truncated_total",
            "Instances dropped from the bounded decision log.",
            &e["log_truncated"],
        ),
        (
            "nc_engine_unauthorized_transfers_total",
            "State-transfer connections refused.",
            &e["unauthorized_transfers"],
        ),
        (
            "nc_recovery_rejoins_started_total",
            "Rejoins started after a NET-FAULT.",
            &r["rejoins_started"],
        ),
        (
            "nc_recovery_rejoins_done_total",
            "Rejoins completed.",
            &r["rejoins_done"],
        ),
        (
            "nc_recovery_rounds_total",
            "Recovery rounds (no leader left).",
            &r["rounds"],
        ),
        (
            "nc_recoveries_total",
            "Recoveries completed.",
            &r["recoveries"],
        ),
        (
            "nc_recovery_partial_sends_total",
            "DECIDEs whose copies did not all leave (safe exit).",
            &r["partial_sends"],
        ),
        (
            "nc_recovery_lease_late_sends_total",
            "DECIDEs that left after the leader's lease (safe exit).",
            &r["lease_late_sends"],
        ),
    ];
    for (name, help, v) in counters {
        t.one(name, "counter", help, l, u(v));
    }
    let seconds: [(&str, &str, &Value); 4] = [
        (
            "nc_engine_takeover_seconds",
            "Last takeover: last tree receive to the first own send (absent before one).",
            &e["takeover_ns"],
        ),
        (
            "nc_engine_max_send_gap_seconds",
            "Leader: longest time between two messages since the last reset.",
            &e["max_send_gap_ns"],
        ),
        (
            "nc_engine_late_tick_max_seconds",
            "The latest leader tick past its deadline.",
            &e["late_tick_max_ns"],
        ),
        (
            "nc_recovery_max_outage_seconds",
            "Longest safe exit to back-in-service time.",
            &r["max_outage_ns"],
        ),
    ];
    for (name, help, v) in seconds {
        t.family(name, "gauge", help);
        if let Some(ns) = v.as_u64() {
            t.sample(name, l, ns as f64 / 1e9);
        }
    }
    t.histogram(
        "nc_request_decided_seconds",
        "Requests this node decided as leader: arrival to the send that decided them.",
        l,
        decided,
    );
    t.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative_and_parse_back() {
        let h = Histogram::new(&[1_000, 1_000_000]);
        for ns in [10, 1_000, 5_000, 2_000_000] {
            h.observe_ns(ns);
        }
        let mut t = Text::new();
        t.histogram("x_seconds", "a \"help\"\nline", &[("a", "q\"\\\n")], &h);
        let page = t.finish();
        let s = parse(&page).unwrap();
        let b = |le| value(&s, "x_seconds_bucket", &[("le", le)]).unwrap();
        assert_eq!(
            (b("0.000001"), b("0.001"), b("+Inf")),
            (2.0, 3.0, 4.0),
            "{page}"
        );
        assert_eq!(value(&s, "x_seconds_count", &[]), Some(4.0));
        assert_eq!(s[0].label("a"), Some("q\"\\\n"));
        assert!((value(&s, "x_seconds_sum", &[]).unwrap() - 0.002006010).abs() < 1e-12);
    }
}
