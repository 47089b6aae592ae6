//! zk-nc-bench: write throughput of ZooKeeper-NC (3 nodes, each a standalone ZooKeeper fed by
//! Nano-consensus) against a 3-node ZooKeeper ensemble (ZAB) on the same namespace lab, with
//! the same number of concurrent writers creating 64-byte znodes. Needs root.

use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use hdrhistogram::Histogram;
use host_app::zk::{ZK_SERVER, ZkOp};
use nc_tools::app_lab::{RedisNcLab, zk_nc_node_args};
use nc_tools::demo::{Bins, in_netns};
use nc_tools::netlab::host_client_addr;
use serde_json::{Value, json};
use soc_ctl::client::Client;

/// ZooKeeper-NC against a ZooKeeper ensemble: concurrent creates.
#[derive(Parser)]
#[command(name = "zk-nc-bench", version)]
struct Args {
    /// Creates per run.
    #[arg(
        long = "requests",
        alias = "ops",
        value_name = "N",
        default_value_t = 6000
    )]
    ops: u64,
    /// Concurrent clients, each one write at a time (formerly --writers).
    #[arg(
        long = "clients",
        alias = "writers",
        value_name = "N",
        default_value_t = 16
    )]
    writers: u64,
    /// ZooKeeper-NC cluster sizes.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    nodes: Vec<u8>,
    /// Write a bar chart of creates/s (SVG) here.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Print the runs as one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

fn hist() -> Histogram<u64> {
    Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("bounds")
}

/// A row of the table, the rate, and the row as JSON.
fn report(name: &str, ops: u64, secs: f64, h: &Histogram<u64>) -> (String, f64, Value) {
    let rate = ops as f64 / secs;
    let us = |ns: u64| ns as f64 / 1000.0;
    let (p50, p99, max) = (
        us(h.value_at_quantile(0.5)),
        us(h.value_at_quantile(0.99)),
        us(h.max()),
    );
    (
        format!("| {name} | {rate:.0} | {p50:.1} | {p99:.1} | {max:.1} |"),
        rate,
        json!({"system": name, "per_second": rate, "p50_us": p50, "p99_us": p99, "max_us": max}),
    )
}

fn main() -> ExitCode {
    let a = Args::parse();
    if let Err(e) = check(&a) {
        eprintln!("zk-nc-bench: {e}");
        return ExitCode::from(2);
    }
    match run(&a) {
        Ok((t, j)) => {
            if a.json {
                println!("{j}");
            } else {
                println!("{t}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("zk-nc-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Illegal flag values (exit code 2).
fn check(a: &Args) -> Result<(), String> {
    nc_tools::app_lab::check_node_counts(&a.nodes)?;
    if a.writers == 0 {
        return Err("--clients 0: legal values are 1 and more".into());
    }
    if a.ops < a.writers {
        return Err(format!(
            "--requests {}: at least one create per client (--clients {})",
            a.ops, a.writers
        ));
    }
    Ok(())
}

/// The table, and the runs as one JSON object.
fn run(a: &Args) -> Result<(String, Value), String> {
    if !nix::unistd::geteuid().is_root() {
        return Err("needs root (network namespaces, XDP)".into());
    }
    let dir = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .parent()
        .expect("folder")
        .to_path_buf();
    let bins = Bins {
        engine: dir.join("nc-engine"),
        soc_ctl: dir.join("soc-ctl"),
    };
    let zk_nc = dir.join("zk-nc");
    let scratch = nc_tools::app_lab::BenchScratch::new("zk-nc-bench", "nczb")?;
    let tmp = scratch.dir.clone();
    let zk = |i: u8, port: u16| SocketAddrV4::new(host_client_addr(i), port);
    let mut rows = Vec::new();
    let mut systems = Vec::new();

    // 1. ZooKeeper-NC at each size, its replicas' ZooKeeper fsyncing; at the largest size
    //    also without fsync.
    let mut nc_rate = 0.0;
    let mut bars = Vec::new();
    let largest = a.nodes.iter().copied().max().unwrap_or(3);
    for &n in &a.nodes {
        let settings: &[bool] = if n == largest {
            &[false, true]
        } else {
            &[false]
        };
        for &no_fsync in settings {
            let d = tmp.join(format!("nc-{n}-{no_fsync}"));
            let (r, rate, applied, j) = zk_nc_run(a, n, &bins, &zk_nc, &d, no_fsync)?;
            rows.extend(r);
            systems.extend(j);
            let sync = if no_fsync { ", forceSync=no" } else { "" };
            bars.push((format!("ZooKeeper-NC n={n}{sync}, decided"), rate));
            bars.push((format!("ZooKeeper-NC n={n}{sync}, applied"), applied));
            if n == largest && !no_fsync {
                nc_rate = rate;
            }
        }
    }

    // 2. A 3-node ZooKeeper ensemble on the same host namespaces.
    let (zab_row, zab_rate, zab_json) = {
        let mut lab = nc_tools::netlab::Lab::new("nczb", Some(tmp.join("zab").join("lab")));
        lab.netns = true;
        lab.up(3).map_err(|e| e.to_string())?;
        struct Down(nc_tools::netlab::Lab, Vec<Child>);
        impl Drop for Down {
            fn drop(&mut self) {
                for c in &mut self.1 {
                    let pg = nix::unistd::Pid::from_raw(c.id() as i32);
                    let _ = nix::sys::signal::killpg(pg, nix::sys::signal::Signal::SIGKILL);
                    let _ = c.wait();
                }
                let _ = self.0.down();
            }
        }
        let mut down = Down(lab.clone(), Vec::new());
        for i in 0..3u8 {
            let d = tmp.join("zab").join(format!("zk-{i}"));
            std::fs::create_dir_all(d.join("data")).map_err(|e| e.to_string())?;
            std::fs::write(d.join("data").join("myid"), format!("{}\n", i + 1))
                .map_err(|e| e.to_string())?;
            let mut cfg = format!(
                "tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir={}\nclientPort=2182\nclientPortAddress={}\nadmin.enableServer=false\nmaxClientCnxns=0\n4lw.commands.whitelist=ruok\n",
                d.join("data").display(),
                host_client_addr(i)
            );
            for j in 0..3u8 {
                cfg += &format!("server.{}={}:2888:3888\n", j + 1, host_client_addr(j));
            }
            std::fs::write(d.join("zoo.cfg"), cfg).map_err(|e| e.to_string())?;
            use std::os::unix::process::CommandExt;
            let c = Command::new("nsenter")
                .process_group(0)
                .arg(format!("--net=/run/netns/{}", lab.host(i)))
                .arg(ZK_SERVER)
                .arg("start-foreground")
                .arg(d.join("zoo.cfg"))
                .env("ZOO_LOG_DIR", &d)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(d.join("zk.log")).map_err(|e| e.to_string())?)
                .spawn()
                .map_err(|e| e.to_string())?;
            down.1.push(c);
        }
        let clients = lab.clients();
        for i in 0..3 {
            wait_zk(&clients, zk(i, 2182))?;
        }
        let addrs: Vec<String> = (0..3).map(|i| zk(i, 2182).to_string()).collect();
        let connect = addrs.join(",");
        let writers = a.writers;
        let n = a.ops / a.writers;
        let r = in_netns(
            Some(clients),
            move || -> Result<(f64, Histogram<u64>), String> {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?;
                rt.block_on(async move {
                    let mut clients = Vec::new();
                    for _ in 0..writers {
                        clients.push(
                            zookeeper_client::Client::connect(&connect)
                                .await
                                .map_err(|e| e.to_string())?,
                        );
                    }
                    let t0 = Instant::now();
                    let mut tasks = Vec::new();
                    for (w, c) in clients.into_iter().enumerate() {
                        tasks.push(tokio::spawn(async move {
                            let mut h = hist();
                            let opts = zookeeper_client::CreateMode::Persistent
                                .with_acls(zookeeper_client::Acls::anyone_all());
                            for i in 0..n {
                                let s = Instant::now();
                                c.create(&format!("/w{w}-{i}"), &[b'x'; 64], &opts)
                                    .await
                                    .map_err(|e| e.to_string())?;
                                h.saturating_record(s.elapsed().as_nanos() as u64);
                            }
                            Ok::<_, String>(h)
                        }));
                    }
                    let mut h = hist();
                    for t in tasks {
                        h.add(&t.await.map_err(|e| e.to_string())??)
                            .map_err(|e| e.to_string())?;
                    }
                    Ok((t0.elapsed().as_secs_f64(), h))
                })
            },
        )
        .join()
        .map_err(|_| "ensemble client panicked")??;
        report(
            "ZooKeeper ensemble (ZAB), 3 servers",
            n * writers,
            r.0,
            &r.1,
        )
    };
    rows.push(zab_row);
    systems.push(zab_json);
    bars.push(("ZooKeeper ensemble (ZAB), 3 servers".into(), zab_rate));
    if let Some(p) = &a.plot {
        nc_tools::plot::bars(
            p,
            "ZooKeeper writes: creates/s (same writers, same lab)",
            "creates/s",
            &bars,
        )?;
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let j = json!({
        "ops": a.ops,
        "writers": a.writers,
        "runs": systems,
        "nc_over_ensemble": nc_rate / zab_rate,
    });
    let t = format!(
        "{} creates of 64 B, {} concurrent writers, from the clients namespace\n\n| system | creates/s | p50 µs | p99 µs | max µs |\n| --- | ---: | ---: | ---: | ---: |\n{}\n\nZooKeeper-NC ÷ ensemble throughput: {:.2}×",
        a.ops,
        a.writers,
        rows.join("\n"),
        nc_rate / zab_rate
    );
    Ok((t, j))
}

/// One ZooKeeper-NC run: rows of the table and the decided rate.
fn zk_nc_run(
    a: &Args,
    n: u8,
    bins: &Bins,
    zk_nc: &std::path::Path,
    tmp: &std::path::Path,
    no_fsync: bool,
) -> Result<(Vec<String>, f64, f64, Vec<Value>), String> {
    let zk = |i: u8, port: u16| SocketAddrV4::new(host_client_addr(i), port);
    let mut rows = Vec::new();
    let mut systems = Vec::new();
    let rate = {
        let rl = RedisNcLab::start_app("nczb", tmp, n, bins, zk_nc, &|i, cfg, pin, d| {
            zk_nc_node_args(i, n, cfg, pin, d, no_fsync)
        })
        .map_err(|e| e.to_string())?;
        let clients = rl.lab.clients();
        for i in 0..n {
            wait_zk(&clients, zk(i, 2181))?;
        }
        let f = rl.lab.load().map_err(|e| e.to_string())?;
        let (cluster, addrs) = (f.cluster_id as u32, f.client_addrs());
        let t0 = Instant::now();
        let threads: Vec<_> = (0..a.writers)
            .map(|w| {
                let (ns, addrs) = (Some(clients.clone()), addrs.clone());
                let per_writer = a.ops / a.writers;
                in_netns(ns, move || -> Result<Histogram<u64>, String> {
                    let mut c = Client::new(cluster, 0x7B00_0000 | w as u32, addrs)
                        .map_err(|e| e.to_string())?;
                    let mut h = hist();
                    for i in 0..per_writer {
                        let op = ZkOp::Create {
                            path: format!("/w{w}-{i}"),
                            data: vec![b'x'; 64],
                        };
                        let s = Instant::now();
                        c.request(0, &op.encode(), Duration::from_secs(10))
                            .map_err(|e| e.to_string())?;
                        h.saturating_record(s.elapsed().as_nanos() as u64);
                    }
                    Ok(h)
                })
            })
            .collect();
        let mut h = hist();
        for t in threads {
            h.add(&t.join().map_err(|_| "writer panicked")??)
                .map_err(|e| e.to_string())?;
        }
        let secs = t0.elapsed().as_secs_f64();
        // The creates reached the last replica's ZooKeeper (poll its count).
        let want = (a.ops / a.writers) * a.writers;
        let last = n - 1;
        let t1 = Instant::now();
        loop {
            let have = count(&clients, zk(last, 2181))?;
            if have >= want {
                break;
            }
            if t1.elapsed() > Duration::from_secs(60) {
                return Err(format!(
                    "node {last}'s ZooKeeper holds {have} of {want} znodes"
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let applied_secs = t0.elapsed().as_secs_f64();
        let sync = if no_fsync {
            "forceSync=no"
        } else {
            "forceSync=yes"
        };
        let (r, rate, j) = report(
            &format!("ZooKeeper-NC, n = {n}, replicas {sync}: acknowledged when decided"),
            want,
            secs,
            &h,
        );
        rows.push(r);
        systems.push(j);
        let applied_rate = want as f64 / applied_secs;
        let applied = format!(
            "ZooKeeper-NC, n = {n}, replicas {sync}: until applied on node {last}'s ZooKeeper"
        );
        rows.push(format!("| {applied} | {applied_rate:.0} | – | – | – |"));
        systems.push(json!({"system": applied, "per_second": applied_rate}));
        (rate, applied_rate)
    };
    Ok((rows, rate.0, rate.1, systems))
}

fn wait_zk(clients: &str, addr: SocketAddrV4) -> Result<(), String> {
    let t0 = Instant::now();
    while count(clients, addr).is_err() {
        if t0.elapsed() > Duration::from_secs(60) {
            return Err(format!("ZooKeeper at {addr} not serving after 60 s"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}

/// Number of znodes under / (without /zookeeper), read with the ZooKeeper protocol.
fn count(clients: &str, addr: SocketAddrV4) -> Result<u64, String> {
    in_netns(Some(clients.to_string()), move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            let c = tokio::time::timeout(
                Duration::from_secs(2),
                zookeeper_client::Client::connect(&addr.to_string()),
            )
            .await
            .map_err(|_| "connect timeout".to_string())?
            .map_err(|e| e.to_string())?;
            let kids = c.list_children("/").await.map_err(|e| e.to_string())?;
            Ok(kids.iter().filter(|k| *k != "zookeeper").count() as u64)
        })
    })
    .join()
    .map_err(|_| "reader panicked".to_string())?
}
