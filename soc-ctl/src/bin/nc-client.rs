//! nc-client: submit requests to a Nano-consensus cluster and measure request → OK latency.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use soc_ctl::client::{Client, load_with};
use soc_ctl::cluster::ClusterFile;

/// A Nano-consensus client (UDP): follows NOT_LEADER redirects and retransmits on silence.
#[derive(Parser)]
#[command(name = "nc-client", version)]
struct Args {
    /// The cluster file (client addresses of the nodes).
    #[arg(long, short)]
    config: PathBuf,
    /// Reach the nodes at the loopback addresses of a multicast file (engines run with
    /// `nc-engine --loopback`); a loopback file needs no flag.
    #[arg(long)]
    loopback: bool,
    /// Client id [default: derived from the process id].
    #[arg(long)]
    client_id: Option<u32>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Submit one request and print the instance that decided it.
    Send {
        /// The request's payload (bytes of this string).
        payload: String,
        /// Print the result as JSON: {instance, index}.
        #[arg(long)]
        json: bool,
    },
    /// Pipelined load: `--requests` requests, `--window` outstanding; prints rate and latency
    /// percentiles.
    Load {
        /// Requests to decide (formerly --total).
        #[arg(
            long = "requests",
            alias = "total",
            value_name = "N",
            default_value_t = 10_000
        )]
        total: u64,
        #[arg(long, default_value_t = 16)]
        window: usize,
        #[arg(long, default_value_t = 64)]
        payload: usize,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 120)]
        timeout_s: u64,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let a = Args::parse();
    let file = match ClusterFile::load(&a.config) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("nc-client: {}: {e}", a.config.display());
            return ExitCode::from(2);
        }
    };
    let file = if a.loopback { file.as_loopback() } else { file };
    let id = a.client_id.unwrap_or(std::process::id());
    let cluster = file.cluster_id as u32;
    // Said when nothing was decided: where the requests went (no transport is switched
    // behind the user's back, so a wrong one shows here).
    let tried = {
        let addrs: Vec<String> = file.client_addrs().iter().map(|a| a.to_string()).collect();
        format!(
            "requests went to {} ({} transport{})",
            addrs.join(", "),
            file.transport,
            if a.loopback {
                ", --loopback"
            } else {
                "; engines run with --loopback need nc-client --loopback"
            }
        )
    };
    // [auth]: tag requests with the cluster's key and check the replies' tags.
    let auth = match file.client_auth() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("nc-client: {e}");
            return ExitCode::from(2);
        }
    };
    match a.cmd {
        Cmd::Send { payload, json } => {
            let mut c = match Client::new(cluster, id, file.client_addrs()) {
                Ok(c) => c.with_auth(auth),
                Err(e) => {
                    eprintln!("nc-client: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match c.request(0, payload.as_bytes(), Duration::from_secs(10)) {
                Ok(ok) => {
                    if json {
                        println!(
                            "{}",
                            serde_json::json!({"instance": ok.instance, "index": ok.index})
                        );
                    } else {
                        println!("decided at instance {} (index {})", ok.instance, ok.index);
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("nc-client: {e}; {tried}");
                    ExitCode::FAILURE
                }
            }
        }
        Cmd::Load {
            total,
            window,
            payload,
            timeout_s,
            json,
        } => match load_with(
            cluster,
            id,
            file.client_addrs(),
            total,
            window.max(1),
            payload,
            Duration::from_secs(timeout_s),
            auth,
            &mut |_| {},
        ) {
            Ok(r) => {
                if json {
                    let q = |x: f64| r.latency.value_at_quantile(x);
                    println!(
                        "{}",
                        serde_json::json!({
                            "decided": r.decided, "seconds": r.elapsed.as_secs_f64(),
                            "per_second": r.rate(), "retransmits": r.retransmits,
                            "p50_ns": q(0.5), "p99_ns": q(0.99), "p999_ns": q(0.999), "max_ns": r.latency.max(),
                        })
                    );
                } else {
                    println!("{}", r.summary());
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("nc-client: {e}; {tried}");
                ExitCode::FAILURE
            }
        },
    }
}
