//! `xdp-log`: attach / detach the decision-logging XDP program, print its counters, tail the
//! decisions it logs.

use anyhow::{Context, Result};
use aya::maps::{MapData, RingBuf};
use clap::{Parser, Subcommand};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use xdp_log::loader::{self, AttachOptions, DEFAULT_PIN_DIR, Mode};

#[derive(Parser)]
#[command(
    name = "xdp-log",
    version,
    about = "Nano-consensus: hand decisions to host applications via XDP"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Load and attach the program, pin its maps; stays in the foreground until Ctrl-C / SIGTERM
    /// or `detach` (then detaches cleanly), unless --keep.
    Attach {
        /// Interface (the host end of the veth).
        #[arg(long)]
        iface: String,
        /// Attach mode.
        #[arg(long, value_enum, default_value = "native")]
        mode: Mode,
        /// bpffs folder for the pins.
        #[arg(long, default_value = DEFAULT_PIN_DIR)]
        pin: PathBuf,
        /// Cluster id whose DECIDEs are logged (register cluster_id).
        #[arg(long, default_value_t = 1)]
        cluster_id: u32,
        /// UDP port of the host copies (register host_port).
        #[arg(long, default_value_t = 7402)]
        port: u16,
        /// Drop valid DECIDE frames after logging (the host stack never sees them).
        #[arg(long)]
        consume: bool,
        /// Hear DECIDEs only from this IPv4 source address (repeatable, at most 64): the
        /// engine's address on its link to this host (in the namespace lab: 10.82.I.1, nic-I's
        /// end of the PCIe veth). DECIDEs from any other source are counted `unauthorized` and
        /// dropped. One of --allow-source or --any-source is required.
        #[arg(
            long = "allow-source",
            value_name = "IP",
            required_unless_present = "any_source"
        )]
        allow_source: Vec<Ipv4Addr>,
        /// No source allow-list: DECIDEs from any source address are heard.
        #[arg(long, conflicts_with = "allow_source")]
        any_source: bool,
        /// The cluster's node count n (register node_count): a DECIDE is heard only when its
        /// sender is the leader of its epoch (epoch mod n); others are counted `unauthorized`
        /// and dropped. 0: no sender check.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=64))]
        nodes: u8,
        /// Exit right after attaching; the program stays attached until `detach`.
        #[arg(long)]
        keep: bool,
        /// Serve Prometheus metrics (text format 0.0.4) at http://ADDR/metrics while attached
        /// in the foreground: the program's counters (`stats`), read from the pinned map at
        /// each scrape. Absent: no endpoint.
        #[arg(long, value_name = "ADDR", conflicts_with = "keep")]
        metrics: Option<std::net::SocketAddr>,
        #[command(flatten)]
        log: soc_ctl::logging::LogArgs,
    },
    /// Detach the program pinned under --pin and remove the pins.
    Detach {
        #[arg(long, default_value = DEFAULT_PIN_DIR)]
        pin: PathBuf,
    },
    /// Print the counters (summed over CPUs).
    Stats {
        #[arg(long, default_value = DEFAULT_PIN_DIR)]
        pin: PathBuf,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Print decisions as they are logged (from the ring buffer).
    Tail {
        #[arg(long, default_value = DEFAULT_PIN_DIR)]
        pin: PathBuf,
        /// Stop after this many decisions.
        #[arg(long)]
        count: Option<u64>,
    },
}

/// An illegal flag value: exit code 2, like clap's usage errors (every other error: 1).
#[derive(Debug)]
struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run(Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xdp-log: {e:#}");
            if e.downcast_ref::<Usage>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

async fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Attach {
            iface,
            mode,
            pin,
            cluster_id,
            port,
            consume,
            allow_source,
            any_source: _,
            nodes,
            keep,
            metrics,
            log,
        } => {
            log.init();
            if allow_source.len() > common::MAX_SOURCES as usize {
                return Err(Usage(format!(
                    "--allow-source: {} given; at most {}",
                    allow_source.len(),
                    common::MAX_SOURCES
                ))
                .into());
            }
            let att = loader::attach(&AttachOptions {
                iface: iface.clone(),
                mode,
                pin_dir: pin.clone(),
                cluster_id,
                port,
                consume,
                allow_sources: allow_source.clone(),
                nodes,
            })?;
            let sources = if allow_source.is_empty() {
                "any source".to_string()
            } else {
                let v: Vec<String> = allow_source.iter().map(|a| a.to_string()).collect();
                format!("sources {}", v.join(","))
            };
            let senders = if nodes == 0 {
                "any sender".to_string()
            } else {
                format!("sender = epoch mod {nodes}")
            };
            println!(
                "attached to {iface} ({mode:?}), cluster {cluster_id}, port {port}, {sources}, {senders}, maps pinned under {}",
                pin.display()
            );
            if let Some(addr) = metrics {
                let (pin, iface) = (pin.clone(), iface.clone());
                let bound = soc_ctl::metrics::serve(addr, move || {
                    loader::read_stats(&pin)
                        .map(|s| metrics_text(&s, &iface))
                        .map_err(|e| format!("{e:#}"))
                })
                .with_context(|| format!("metrics: bind TCP {addr}"))?;
                tracing::info!("xdp-log: metrics on http://{bound}/metrics");
            }
            if keep {
                // The pinned link keeps the program attached after this process exits.
                std::mem::forget(att);
                return Ok(());
            }
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
            let mut tick = tokio::time::interval(Duration::from_millis(200));
            loop {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => break,
                    _ = term.recv() => break,
                    _ = tick.tick() => {
                        if !att.still_pinned() {
                            println!("detached by `xdp-log detach`");
                            return Ok(());
                        }
                    }
                }
            }
            att.detach()?;
            println!("detached from {iface}");
        }
        Cmd::Detach { pin } => {
            loader::detach_pinned(&pin)?;
            println!("detached; pins under {} removed", pin.display());
        }
        Cmd::Stats { pin, json } => {
            let s = loader::read_stats(&pin)?;
            if json {
                println!("{}", s.to_json());
            } else {
                for (k, v) in s.named() {
                    println!("{k:>12} {v}");
                }
            }
        }
        Cmd::Tail { pin, count } => tail(pin, count).await?,
    }
    Ok(())
}

/// The page of `attach --metrics`: every counter of the program as `nc_xdp_<name>_total`, with
/// the interface as a label.
fn metrics_text(s: &loader::Stats, iface: &str) -> String {
    const HELP: [&str; common::counter::COUNT as usize] = [
        "Every frame the program ran on.",
        "IPv4/UDP frames to the configured port (the candidates).",
        "Decisions written to the log (and offered to the ring).",
        "Candidates that break the format.",
        "Candidates that are not DECIDEs of this cluster.",
        "Logged instances more than one above the highest logged before.",
        "Valid decisions whose instance is already in its slot.",
        "Valid decisions older than the log window.",
        "Valid heartbeats and STARTs (never logged).",
        "Logged decisions the ring buffer had no room for.",
        "Valid DECIDE frames dropped because the consume flag is set.",
        "Map lookups or packet copies that cannot fail but did.",
        "Valid DECIDEs not heard: source not allowed or sender not the epoch's leader.",
    ];
    let l: &[(&str, &str)] = &[("iface", iface)];
    let mut t = soc_ctl::metrics::Text::new();
    for ((name, v), help) in s.named().zip(HELP) {
        t.one(&format!("nc_xdp_{name}_total"), "counter", help, l, v);
    }
    t.one(
        "nc_xdp_attached",
        "gauge",
        "1 while the program is attached by this process.",
        l,
        1,
    );
    t.finish()
}

async fn tail(pin: PathBuf, count: Option<u64>) -> Result<()> {
    let cluster = loader::read_config(&pin)?[common::config::CLUSTER_ID as usize];
    let data = MapData::from_pin(pin.join(common::map_name::RING))
        .with_context(|| format!("open the ring buffer under {}", pin.display()))?;
    let ring = RingBuf::try_from(aya::maps::Map::from_map_data(data)?)?;
    // SAFETY: the ring buffer owns its fd for as long as the AsyncFd holds it (it is never closed
    // or handed elsewhere while registered).
    let mut fd = unsafe { AsyncFd::register(ring) }
        .map_err(|e| anyhow::anyhow!("register the ring buffer fd: {e}"))?;
    let mut n = 0u64;
    loop {
        let mut guard = tokio::select! {
            g = fd.readable_mut() => g?,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let ring = guard.get_inner_mut();
        while let Some(item) = ring.next() {
            match xdp_log::record::parse_record(&item, cluster) {
                Ok(d) => {
                    let e: Vec<String> = d
                        .decide()
                        .entries()
                        .map(|e| format!("{}:{}({}B)", e.client_id, e.seq, e.payload.len()))
                        .collect();
                    println!(
                        "instance {} epoch {} {:?} sender {} entries {} [{}]",
                        d.instance,
                        d.epoch,
                        d.kind,
                        d.sender,
                        d.count,
                        e.join(" ")
                    );
                }
                Err(e) => println!("bad ring record: {e}"),
            }
            n += 1;
            if count.is_some_and(|c| n >= c) {
                return Ok(());
            }
        }
        guard.clear_ready();
    }
}
