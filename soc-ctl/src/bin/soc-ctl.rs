//! soc-ctl: configure, start, join and monitor a Nano-consensus node (card or software engine).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use proto::regs::{self, Access, ctrl, status};
use proto::wire;
use serde_json::{Value, json};
use soc_ctl::client::Client;
use soc_ctl::cluster::ClusterFile;
use soc_ctl::regfile::{EngineBus, MmioBus, RegisterBus, Registers};

/// Control a Nano-consensus node: the FPGA card through its PCIe BAR (--bar) or the software
/// engine through its control socket (--ctl / --node, the default).
#[derive(Parser)]
#[command(name = "soc-ctl", version)]
struct Args {
    /// The engine's control socket [default: $TMPDIR/nc-engine-<node>.sock].
    #[arg(long, env = "NC_CTL", global = true, conflicts_with = "bar")]
    ctl: Option<PathBuf>,
    /// Node id, to find its engine's default control socket.
    #[arg(long, short, global = true, default_value_t = 0)]
    node: u64,
    /// A memory-mapped PCIe BAR instead of an engine: /dev/uioN or .../resource0.
    #[arg(long, env = "NC_BAR", global = true)]
    bar: Option<PathBuf>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Read and write registers by name (names, ranges and docs from the register map).
    Regs {
        #[command(subcommand)]
        op: RegsOp,
    },
    /// Write a node's registers from cluster.toml and enable it (armed, waiting for START).
    Init {
        /// The cluster file.
        #[arg(long, short)]
        config: PathBuf,
    },
    /// START the cluster: the designated leader (node 0) sends the initial synchronisation.
    Start,
    /// Role, leader, instance and counters.
    Status {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Live counters, refreshed every --interval-ms (Ctrl-C to stop).
    Watch {
        #[arg(long, default_value_t = 1000)]
        interval_ms: u64,
        /// Stop after this many refreshes (0 = never).
        #[arg(long, default_value_t = 0)]
        count: u64,
        /// Read a (remote) engine's Prometheus endpoint instead of a control socket:
        /// `http://HOST:PORT[/metrics]` or `HOST:PORT` (`nc-engine --metrics ADDR`).
        #[arg(long, value_name = "URL")]
        metrics: Option<String>,
    },
    /// Join a running cluster (§5.2): enter joining, log live decisions, fetch a snapshot from
    /// a member, replay from its instance + 1, go active. The members never pause.
    Join {
        /// The member to fetch the state from.
        #[arg(long)]
        member: u64,
        /// Print the join's figures as one JSON object (and nothing else).
        #[arg(long)]
        json: bool,
    },
    /// Bring a node back after its safe exit by register writes alone (the CSR sequence of
    /// proto/README: disable, ENABLE|JOIN, wait for SYNCED, TIMEOUT, ACTIVATE), over the card's
    /// BAR or the engine's socket. For cards and engines run with --no-recovery (an engine with
    /// recovery comes back by itself).
    Rejoin {
        /// The members' timeout [default: the node's own TIMEOUT register].
        #[arg(long)]
        timeout: Option<u64>,
        /// How long to wait for SYNCED (and for ACTIVE), milliseconds.
        #[arg(long, default_value_t = 5000)]
        sync_wait_ms: u64,
    },
    /// Raise every node's timeout through a CONFIG consensus instance (only increases).
    SetTimeout {
        /// The cluster file (to reach the leader).
        #[arg(long, short)]
        config: PathBuf,
        /// New timeout in the engine's time unit (ns in software, cycles on the card).
        value: u32,
        /// Reach the nodes at the loopback addresses of a multicast file (engines run with
        /// `nc-engine --loopback`); a loopback file needs no flag.
        #[arg(long)]
        loopback: bool,
        /// Print the deciding instance as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Change the packet tags of a running cluster through a CONFIG instance (every node
    /// switches at the same instance): turn tags on (`--mode on`, then `--mode required`), or
    /// rotate keys (put the new key in every node's key file, `soc-ctl reload-keys` on each,
    /// then `--key NEW`; nodes accept every key of their file, so nothing is refused on the way).
    SetAuth {
        /// The cluster file (to reach the leader; its [auth] key tags this request).
        #[arg(long, short)]
        config: PathBuf,
        /// off | on | required.
        #[arg(long)]
        mode: AuthModeArg,
        /// Key id the nodes tag with from then on (1..=255; every node's key file must hold it).
        #[arg(long)]
        key: u8,
        /// Reach the nodes at the loopback addresses of a multicast file (engines run with
        /// `nc-engine --loopback`); a loopback file needs no flag.
        #[arg(long)]
        loopback: bool,
        /// Print the deciding instance as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Read the key file named by cluster.toml's [auth] again (engine only; nothing changes if
    /// it cannot be read or lacks the key the node tags with).
    ReloadKeys {
        /// Print the key ids held as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Write a new random key file (mode 0600) holding one key with id --id.
    GenKey {
        /// Where to write it (refuses to overwrite).
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 1)]
        id: u8,
    },
    /// The engine's decision log: instance, kind, entries, CRC-32 of the entries.
    Log {
        #[arg(long, default_value_t = 0)]
        from: u64,
        #[arg(long, default_value_t = u64::MAX)]
        to: u64,
        /// One JSON array: per instance {instance, kind, entries, crc32}.
        #[arg(long)]
        json: bool,
    },
    /// Print a cluster.toml: loopback (the default: `--nodes N` on 127.0.0.0/8, one machine), or
    /// multicast for real machines (`--transport multicast`, one `--member` per node). Software
    /// timing: 1 ms loop, early sends 20 µs after the last send, Δ 4 ms, drift 0.5 ms, timeout 50 ms.
    #[command(after_help = "\
Multicast (docs/deploy.md), three machines with two tree networks each:
  soc-ctl gen-config --transport multicast \\
      --member 0,10.71.3.1,127.0.0.1,10.71.1.1:eth1,10.71.2.1:eth2 \\
      --member 1,10.71.3.2,127.0.0.1,10.71.1.2:eth1,10.71.2.2:eth2 \\
      --member 2,10.71.3.3,127.0.0.1,10.71.1.3:eth1,10.71.2.3:eth2 \\
      --auth-key-file /etc/nano-consensus/cluster.key > cluster.toml
A --member is ID,CLIENT_ADDR,HOST_ADDR,TREE_ADDR:IFACE,TREE_ADDR:IFACE: the address clients
(and joiners) reach the node at, where its decisions go to its host application (127.0.0.1
when the replica runs on the same machine; the host's address on the card link otherwise),
and per tree its address on that tree's network and the interface it is on.")]
    GenConfig {
        /// `loopback` (every node on this machine, 127.0.0.0/8) or `multicast` (real machines;
        /// needs --member per node).
        #[arg(long, value_enum, default_value = "loopback")]
        transport: TransportArg,
        /// Loopback: the number of nodes [default: 3].
        #[arg(long)]
        nodes: Option<u8>,
        /// Loopback: the number of trees [default: 2].
        #[arg(long)]
        trees: Option<u8>,
        /// Loopback: second byte of the 127.x.y.z addresses, to run several clusters side by
        /// side [default: 0].
        #[arg(long)]
        net: Option<u8>,
        /// Multicast: one node, ID,CLIENT_ADDR,HOST_ADDR,TREE_ADDR:IFACE,TREE_ADDR:IFACE
        /// (repeat for every node, ids 0, 1, 2, … in order; one TREE_ADDR:IFACE per tree).
        #[arg(long = "member", value_name = "SPEC")]
        members: Vec<String>,
        /// Multicast: the group of each tree, in tree order (repeat) [default: 239.77.0.1,
        /// 239.77.0.2, …].
        #[arg(long = "group", value_name = "GROUP")]
        groups: Vec<std::net::Ipv4Addr>,
        /// Decide port; client and host ports follow it.
        #[arg(long, default_value_t = 7400)]
        port: u16,
        /// Cluster id carried in every packet (xdp-log attach --cluster-id takes the same).
        #[arg(long, default_value_t = 7)]
        cluster_id: u64,
        /// IP MTU of the tree links (9000: jumbo frames, a full DECIDE in one frame).
        #[arg(long, default_value_t = 9000)]
        mtu: u64,
        /// Tag every packet (an [auth] section, mode "required"): the cluster's key file, an
        /// absolute path (make it with `soc-ctl gen-key --out PATH`), on every node and client.
        #[arg(long, value_name = "PATH")]
        auth_key_file: Option<PathBuf>,
        /// The key id of --auth-key-file every node tags with.
        #[arg(long, default_value_t = 1, requires = "auth_key_file")]
        auth_key_id: u8,
        /// A multicast file without packet tags (a network no one else can reach). A multicast
        /// file needs --auth-key-file or this: tags are on unless refused explicitly.
        #[arg(long, conflicts_with = "auth_key_file")]
        no_auth: bool,
    },
    /// Engine test hook (loopback transport): drop everything received on a tree, or stop dropping.
    DropTree { tree: u8, state: OnOff },
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TransportArg {
    Loopback,
    Multicast,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum AuthModeArg {
    Off,
    On,
    Required,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum OnOff {
    On,
    Off,
}

#[derive(Subcommand)]
enum RegsOp {
    /// Every register and counter with its value.
    Dump {
        /// One JSON array: per register {name, addr, access, value, doc}.
        #[arg(long)]
        json: bool,
    },
    /// One register or counter.
    Get {
        name: String,
        /// One JSON object: {name, value}.
        #[arg(long)]
        json: bool,
    },
    /// Write a register (refused with the legal range if illegal).
    Set {
        name: String,
        /// Decimal, 0x hex, or a dotted IPv4 group for tree_groupN.
        value: String,
    },
}

enum Backend {
    Engine(Registers<EngineBus>),
    Bar(Registers<MmioBus>),
}

macro_rules! with_regs {
    ($b:expr, $r:ident => $body:expr) => {
        match $b {
            Backend::Engine($r) => $body,
            Backend::Bar($r) => $body,
        }
    };
}

fn fail(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("soc-ctl: {e}");
    ExitCode::FAILURE
}

/// An illegal flag value or configuration (a bad cluster file): exit code 2, like clap's usage
/// errors.
fn usage(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("soc-ctl: {e}");
    ExitCode::from(2)
}

/// What can be refused before any engine or card is reached: register names and values, and
/// functions a card's BAR does not have.
fn check_before_connecting(cmd: &Cmd, bar: bool) -> Result<(), String> {
    let refused = |e: soc_ctl::regfile::RegAccessError| match e {
        soc_ctl::regfile::RegAccessError::Refused(m) => m,
        other => other.to_string(),
    };
    match cmd {
        Cmd::Regs {
            op: RegsOp::Get { name, .. },
        } => {
            soc_ctl::regfile::lookup(name).map_err(refused)?;
        }
        Cmd::Regs {
            op: RegsOp::Set { name, value },
        } => {
            let r = soc_ctl::regfile::lookup(name).map_err(refused)?;
            if r.access == Access::ReadOnly {
                return Err(format!("{} is read-only", r.name));
            }
            regs::check_range(&r, parse_value(value)?).map_err(|e| e.to_string())?;
        }
        Cmd::Rejoin {
            timeout: Some(t), ..
        } => {
            let r = regs::by_name("timeout").expect("timeout register");
            regs::check_range(&r, *t).map_err(|e| format!("--timeout: {e}"))?;
        }
        Cmd::Join { .. } if bar => {
            return Err(
                "join over a card's BAR needs the host application's state transfer; \
                 soc-ctl drives joins of the software engine (--ctl)"
                    .into(),
            );
        }
        Cmd::Log { .. } | Cmd::DropTree { .. } | Cmd::ReloadKeys { .. } if bar => {
            return Err(
                "this command needs the software engine (--ctl); a card's BAR has no such function"
                    .into(),
            );
        }
        _ => {}
    }
    Ok(())
}

fn parse_value(s: &str) -> Result<u64, String> {
    if let Ok(ip) = s.parse::<std::net::Ipv4Addr>() {
        return Ok(u32::from(ip) as u64);
    }
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(&h.replace('_', ""), 16),
        None => s.replace('_', "").parse(),
    };
    r.map_err(|_| format!("'{s}' is not a number (decimal, 0x hex or a dotted IPv4 group)"))
}

/// Like other command-line tools, end quietly when the reader of our output goes away
/// (`soc-ctl status | head -1`): the default SIGPIPE action instead of Rust's "ignore", which
/// turns a closed pipe into a panic in `println!`.
#[allow(unsafe_code)]
fn die_quietly_on_closed_pipe() {
    // SAFETY: installing the default disposition for SIGPIPE, before any other thread exists;
    // no handler code runs.
    let _ = unsafe {
        nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGPIPE,
            nix::sys::signal::SigHandler::SigDfl,
        )
    };
}

fn main() -> ExitCode {
    die_quietly_on_closed_pipe();
    let a = Args::parse();
    match a.cmd {
        Cmd::GenConfig {
            transport,
            nodes,
            trees,
            net,
            members,
            groups,
            port,
            cluster_id,
            mtu,
            auth_key_file,
            auth_key_id,
            no_auth,
        } => {
            let opts = GenConfigOpts {
                transport,
                nodes,
                trees,
                net,
                members,
                groups,
                port,
                cluster_id,
                mtu,
                auth_key_file,
                auth_key_id,
                no_auth,
            };
            return match gen_config(&opts) {
                Ok(text) => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("soc-ctl gen-config: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Cmd::SetTimeout {
            config,
            value,
            loopback,
            json,
        } => return set_timeout(&config, value, loopback, json),
        Cmd::SetAuth {
            config,
            mode,
            key,
            loopback,
            json,
        } => return set_auth(&config, mode, key, loopback, json),
        Cmd::GenKey { out, id } => {
            if id == 0 {
                return usage("--id: 0 means untagged; legal are 1..=255");
            }
            return match soc_ctl::cluster::generate_key_file(&out, id) {
                Ok(()) => {
                    println!("wrote key {id} to {} (mode 0600)", out.display());
                    ExitCode::SUCCESS
                }
                Err(e) => fail(e),
            };
        }
        Cmd::Watch {
            interval_ms,
            count,
            metrics: Some(url),
        } => {
            return match watch_with(interval_ms, count, || status_from_metrics(&url)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(e),
            };
        }
        _ => {}
    }
    if let Err(e) = check_before_connecting(&a.cmd, a.bar.is_some()) {
        return usage(e);
    }
    // The cluster file first: a bad one is a configuration error (exit code 2), whether or not
    // the node is reachable.
    let init_setup = match &a.cmd {
        Cmd::Init { config } => match ClusterFile::load(config)
            .map_err(|e| format!("{}: {e}", config.display()))
            .and_then(|f| {
                f.node(a.node)
                    .map_err(|e| format!("{}: {e}", config.display()))
            }) {
            Ok(s) => Some(s),
            Err(e) => return usage(e),
        },
        _ => None,
    };
    let ctl = a
        .ctl
        .clone()
        .unwrap_or_else(|| soc_ctl::default_ctl_path(a.node));
    let backend = match &a.bar {
        Some(p) => MmioBus::open(p).map(|b| Backend::Bar(Registers::new(b))),
        None => EngineBus::connect(&ctl).map(|b| Backend::Engine(Registers::new(b))),
    };
    let mut b = match backend {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    let r = match a.cmd {
        Cmd::Regs { op } => with_regs!(&mut b, r => regs_cmd(r, op)),
        Cmd::Init { config } => {
            let setup = init_setup.expect("loaded above");
            with_regs!(&mut b, r => init(r, &config, &setup.config, a.node))
        }
        Cmd::Start => with_regs!(&mut b, r => start(r)),
        Cmd::Status { json } => status_cmd(&mut b, json),
        Cmd::Watch {
            interval_ms, count, ..
        } => watch_with(interval_ms, count, || status_value(&mut b)),
        Cmd::Join { member, json } => join(&mut b, member, json),
        Cmd::Rejoin {
            timeout,
            sync_wait_ms,
        } => with_regs!(&mut b, r => soc_ctl::regfile::rejoin_by_csr(
            r,
            timeout,
            Duration::from_millis(sync_wait_ms),
            |s| println!("{s}"),
        )),
        Cmd::Log { from, to, json } => engine_only(&mut b, &format!("log {from} {to}")).map(|v| {
            let lines = v
                .as_array()
                .into_iter()
                .flatten()
                .map(|l| l.as_str().unwrap_or_default());
            if json {
                println!("{}", Value::Array(lines.map(log_line_json).collect()));
            } else {
                for l in lines {
                    println!("{l}");
                }
            }
        }),
        Cmd::DropTree { tree, state } => {
            let s = match state {
                OnOff::On => "on",
                OnOff::Off => "off",
            };
            engine_only(&mut b, &format!("drop-tree {tree} {s}")).map(drop)
        }
        Cmd::ReloadKeys { json } => engine_only(&mut b, "reload-keys").map(|v| {
            if json {
                println!("{}", json!({"keys": v["keys"]}));
            } else {
                println!("keys held: {}", v["keys"]);
            }
        }),
        Cmd::GenConfig { .. }
        | Cmd::SetTimeout { .. }
        | Cmd::SetAuth { .. }
        | Cmd::GenKey { .. } => {
            unreachable!("handled above")
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

/// `gen-config`'s options.
struct GenConfigOpts {
    transport: TransportArg,
    nodes: Option<u8>,
    trees: Option<u8>,
    net: Option<u8>,
    members: Vec<String>,
    groups: Vec<std::net::Ipv4Addr>,
    port: u16,
    cluster_id: u64,
    mtu: u64,
    auth_key_file: Option<PathBuf>,
    auth_key_id: u8,
    no_auth: bool,
}

/// The cluster file `gen-config` prints, validated as every reader will; an error names the
/// option (and for a node, its `--member`) that caused it.
fn gen_config(o: &GenConfigOpts) -> Result<String, String> {
    use soc_ctl::cluster::{Auth, AuthMode, parse_member};
    let mut f = match o.transport {
        TransportArg::Loopback => {
            if !o.members.is_empty() || !o.groups.is_empty() {
                return Err(
                    "--member and --group describe a multicast cluster: add --transport multicast"
                        .into(),
                );
            }
            ClusterFile::loopback(
                o.nodes.unwrap_or(3),
                o.trees.unwrap_or(2),
                o.net.unwrap_or(0),
                o.port,
            )
        }
        TransportArg::Multicast => {
            for (name, given) in [
                ("--nodes", o.nodes.is_some()),
                ("--trees", o.trees.is_some()),
                ("--net", o.net.is_some()),
            ] {
                if given {
                    return Err(format!(
                        "{name} is for loopback clusters; a multicast cluster has one --member per node (and one TREE_ADDR:IFACE per tree in each)"
                    ));
                }
            }
            if o.members.is_empty() {
                return Err(
                    "--transport multicast needs one --member ID,CLIENT_ADDR,HOST_ADDR,TREE_ADDR:IFACE,TREE_ADDR:IFACE per node"
                        .into(),
                );
            }
            let mut nodes = Vec::new();
            for (i, spec) in o.members.iter().enumerate() {
                let n = parse_member(spec).map_err(|e| format!("--member '{spec}': {e}"))?;
                if n.id != i as u64 {
                    return Err(format!(
                        "--member '{spec}': node id {} given as --member number {}: list the members in id order 0, 1, 2, …",
                        n.id,
                        i + 1
                    ));
                }
                nodes.push(n);
            }
            let trees = nodes[0].tree_addrs.len();
            let groups: Vec<std::net::Ipv4Addr> = if o.groups.is_empty() {
                (0..trees)
                    .map(|t| std::net::Ipv4Addr::new(239, 77, 0, 1 + t as u8))
                    .collect()
            } else {
                o.groups.clone()
            };
            if groups.len() != trees {
                return Err(format!(
                    "--group: {} group(s) for {trees} tree(s) (member 0 names {trees} TREE_ADDR:IFACE): give one --group per tree",
                    groups.len()
                ));
            }
            ClusterFile::multicast(nodes, &groups, o.port)
        }
    };
    f.cluster_id = o.cluster_id;
    f.limits.mtu = o.mtu;
    if let Some(path) = &o.auth_key_file {
        if !path.is_absolute() {
            return Err(format!(
                "--auth-key-file {}: give an absolute path (every node and client reads it from cluster.toml)",
                path.display()
            ));
        }
        if o.auth_key_id == 0 {
            return Err("--auth-key-id: 0 means untagged; legal are 1..=255".into());
        }
        f.auth = Some(Auth {
            mode: AuthMode::Required,
            key: o.auth_key_id as u64,
            key_file: path.clone(),
        });
    }
    let named = |e: soc_ctl::cluster::ClusterError| -> String {
        let k = e.key.as_str();
        let option = if let Some(rest) = k.strip_prefix("nodes[") {
            let i: usize = rest
                .split(']')
                .next()
                .and_then(|d| d.parse().ok())
                .unwrap_or(0);
            match o.members.get(i) {
                Some(spec) => format!("--member '{spec}'"),
                None => "--nodes".to_string(),
            }
        } else if k.starts_with("trees") {
            if o.transport == TransportArg::Multicast {
                "--group".into()
            } else {
                "--trees".into()
            }
        } else if k.starts_with("ports") {
            "--port".into()
        } else if k == "cluster_id" {
            "--cluster-id".into()
        } else if k == "limits.mtu" {
            "--mtu".into()
        } else if k.starts_with("auth") {
            "--auth-key-id".into()
        } else if k == "nodes" {
            "--nodes / --member".into()
        } else {
            return format!("the generated file is refused: {e}");
        };
        format!("{option}: {e}")
    };
    f.validate().map_err(named)?;
    if f.transport == soc_ctl::cluster::Transport::Multicast {
        f.check_multicast_nodes().map_err(named)?;
    }
    if let (Some(a), Some(path)) = (&f.auth, &o.auth_key_file) {
        match soc_ctl::cluster::load_keys(path) {
            Ok(ring) if ring.get(a.key as u8).is_none() => {
                return Err(format!(
                    "--auth-key-id {}: {} holds keys {:?}, not this one",
                    a.key,
                    path.display(),
                    ring.ids()
                ));
            }
            Ok(_) => {}
            Err(_) if !path.exists() => eprintln!(
                "soc-ctl gen-config: note: {} does not exist yet; make it with `soc-ctl gen-key --out {} --id {}` and copy it to every node and client (mode 0600)",
                path.display(),
                path.display(),
                a.key
            ),
            Err(e) => return Err(format!("--auth-key-file: {e}")),
        }
    }
    if f.transport == soc_ctl::cluster::Transport::Multicast && f.auth.is_none() && !o.no_auth {
        return Err(
            "--transport multicast: packets are tagged by default: pass --auth-key-file PATH \
             (make the key with `soc-ctl gen-key --out PATH`), or --no-auth for a network no one \
             else can reach"
                .into(),
        );
    }
    if o.no_auth && f.transport != soc_ctl::cluster::Transport::Multicast {
        return Err("--no-auth is for multicast files (loopback files are untagged)".into());
    }
    Ok(f.to_toml())
}

fn engine_only(b: &mut Backend, req: &str) -> Result<Value, String> {
    match b {
        Backend::Engine(r) => r.bus.request(req).map_err(|e| e.to_string()),
        Backend::Bar(_) => Err(format!(
            "'{}' needs the software engine (--ctl); a card's BAR has no such function",
            req.split_whitespace().next().unwrap_or(req)
        )),
    }
}

fn regs_cmd<B: RegisterBus>(r: &mut Registers<B>, op: RegsOp) -> Result<(), String> {
    match op {
        RegsOp::Dump { json } => {
            let all = r.dump().map_err(|e| e.to_string())?;
            if json {
                let v: Vec<Value> = all
                    .iter()
                    .map(|(reg, v)| {
                        json!({"name": reg.name, "addr": reg.addr, "access": access_name(reg.access),
                               "value": v, "doc": reg.doc})
                    })
                    .collect();
                println!("{}", Value::Array(v));
                return Ok(());
            }
            println!(
                "{:<22} {:>6} {:>4} {:>20}  doc",
                "name", "addr", "acc", "value"
            );
            for (reg, v) in all {
                let acc = access_name(reg.access);
                println!(
                    "{:<22} {:#06x} {:>4} {:>20}  {}",
                    reg.name, reg.addr, acc, v, reg.doc
                );
            }
            Ok(())
        }
        RegsOp::Get { name, json } => {
            let v = r.get(&name).map_err(|e| e.to_string())?;
            if json {
                println!("{}", json!({"name": name, "value": v}));
            } else {
                println!("{v}");
            }
            Ok(())
        }
        RegsOp::Set { name, value } => {
            let v = parse_value(&value)?;
            r.set(&name, v).map_err(|e| e.to_string())
        }
    }
}

fn access_name(a: Access) -> &'static str {
    match a {
        Access::ReadOnly => "ro",
        Access::Config => "rw",
        Access::Control => "ctl",
    }
}

/// A line of the engine's log (`INSTANCE KIND ENTRIES CRC32`) as a JSON object; a line of
/// another shape as `{"line": ...}`.
fn log_line_json(l: &str) -> Value {
    let f: Vec<&str> = l.split_whitespace().collect();
    match (f.as_slice(), f.first().and_then(|i| i.parse::<u64>().ok())) {
        ([_, kind, entries, crc], Some(instance)) => match entries.parse::<u64>() {
            Ok(n) => json!({"instance": instance, "kind": kind, "entries": n, "crc32": crc}),
            Err(_) => json!({ "line": l }),
        },
        _ => json!({ "line": l }),
    }
}

/// Write every configuration register of `node` from the file, then ENABLE. The device checks
/// the rules between fields on every write, so writes that are illegal only because of an
/// older value of another field are retried after the others (a fixed point, at most one
/// pass per register); what is still refused at the end is reported with its field.
fn init<B: RegisterBus>(
    r: &mut Registers<B>,
    config: &Path,
    node_config: &regs::Config,
    node: u64,
) -> Result<(), String> {
    soc_ctl::regfile::configure(r, node_config)?;
    println!(
        "node {node}: configured from {} and enabled (armed){}",
        config.display(),
        if node == 0 {
            "; run `soc-ctl start` to start the cluster"
        } else {
            ""
        }
    );
    Ok(())
}

fn start<B: RegisterBus>(r: &mut Registers<B>) -> Result<(), String> {
    r.set("ctrl", (ctrl::ENABLE | ctrl::START) as u64)
        .map_err(|e| e.to_string())?;
    println!("START sent");
    Ok(())
}

fn role(bits: u64) -> &'static str {
    let b = bits as u32;
    if b & status::NET_FAULT != 0 {
        "faulted (NET-FAULT: safe exit)"
    } else if b & status::LEADER != 0 {
        "leader"
    } else if b & status::JOINING != 0 {
        "joining"
    } else if b & status::ACTIVE != 0 {
        "follower"
    } else if b & status::ARMED != 0 {
        "armed (waiting for START)"
    } else {
        "disabled"
    }
}

fn status_value(b: &mut Backend) -> Result<Value, String> {
    let mut v = with_regs!(b, r => {
        let mut m = serde_json::Map::new();
        for name in ["status", "node_id", "node_count", "epoch", "leader", "instance", "timeout", "loop_period"] {
            m.insert(name.into(), json!(r.get(name).map_err(|e| e.to_string())?));
        }
        let mut c = serde_json::Map::new();
        for k in regs::Counter::ALL {
            c.insert(k.name().into(), json!(r.get(k.name()).map_err(|e| e.to_string())?));
        }
        m.insert("counters".into(), Value::Object(c));
        Value::Object(m)
    });
    v["role"] = json!(role(v["status"].as_u64().unwrap_or(0)));
    if let Backend::Engine(r) = b {
        let e = r.bus.request("status").map_err(|e| e.to_string())?;
        v["engine"] = e["engine"].clone();
        v["log_len"] = e["log_len"].clone();
        v["recovery"] = e["recovery"].clone();
        v["state"] = e["state"].clone();
        // The register view cannot tell a node coming back by itself from a stopped one.
        if e["state"] == "Recovering" {
            v["role"] = json!("recovering (no leader left: electing one with the survivors)");
        } else if e["recovery"]["rejoining"] == true {
            v["role"] = json!("rejoining (after a NET-FAULT: joining the live stream again)");
        }
    }
    Ok(v)
}

fn status_cmd(b: &mut Backend, as_json: bool) -> Result<(), String> {
    let v = status_value(b)?;
    if as_json {
        println!("{v}");
        return Ok(());
    }
    println!(
        "node {} of {}: {}; leader {} (epoch {}); last instance {}",
        v["node_id"],
        v["node_count"],
        v["role"].as_str().unwrap_or(""),
        v["leader"],
        v["epoch"],
        v["instance"]
    );
    println!("timeout {} loop_period {}", v["timeout"], v["loop_period"]);
    for (k, c) in v["counters"].as_object().into_iter().flatten() {
        if c.as_u64() != Some(0) {
            println!("  {k:<20} {c}");
        }
    }
    if let Some(r) = v.get("recovery").filter(|r| r.is_object()) {
        println!(
            "recovery: {} rejoin(s) started, {} done, {} recovery round(s), {} recover(ies), longest outage {:.1} ms",
            r["rejoins_started"],
            r["rejoins_done"],
            r["rounds"],
            r["recoveries"],
            r["max_outage_ns"].as_f64().unwrap_or(0.0) / 1e6
        );
        if let Some(x) = r.get("round").filter(|x| x.is_object()) {
            println!(
                "  round {} (candidate node {}): heard from nodes {}, {} vote(s), a majority is {}{}",
                x["round"],
                x["candidate"],
                x["heard"],
                x["votes"],
                x["majority"],
                if x["waiting_for_majority"] == true {
                    " — waiting: too few nodes to recover (a minority stays out)"
                } else {
                    ""
                }
            );
            if let Some(g) = x["gap"].as_array() {
                println!(
                    "  this node lacks instances {}..={} (it holds decisions up to {}): \
                     filling them from a participant; no one can lead before they are covered",
                    g[0], g[1], x["longest"]
                );
            }
        }
    }
    if let Some(e) = v.get("engine") {
        println!("engine: {e}");
    }
    Ok(())
}

/// What `watch` shows, from an engine's metrics page (`nc-engine --metrics`): the same fields
/// as [`status_value`] reads from the registers.
fn status_from_metrics(url: &str) -> Result<Value, String> {
    use soc_ctl::metrics::{fetch, parse, value};
    let s = parse(&fetch(url)?)?;
    let get = |n: &str| {
        value(&s, n, &[])
            .map(|v| v as u64)
            .ok_or_else(|| format!("{url}: no {n} in the metrics"))
    };
    let mut c = serde_json::Map::new();
    for k in regs::Counter::ALL {
        c.insert(
            k.name().into(),
            json!(get(&format!("nc_{}_total", k.name()))?),
        );
    }
    let bits = get("nc_status_bits")?;
    let mut role = role(bits).to_string();
    let state = s
        .iter()
        .find(|x| x.name == "nc_state")
        .and_then(|x| x.label("state"))
        .unwrap_or("")
        .to_string();
    if state == "Recovering" {
        role = "recovering (no leader left: electing one with the survivors)".into();
    } else if get("nc_recovery_rejoining")? == 1 {
        role = "rejoining (after a NET-FAULT: joining the live stream again)".into();
    }
    Ok(json!({
        "role": role,
        "state": state,
        "status": bits,
        "epoch": get("nc_epoch")?,
        "leader": get("nc_leader")?,
        "instance": value(&s, "nc_last_decided_instance", &[]).map_or(0, |v| v as u64),
        "counters": c,
    }))
}

fn watch_with(
    interval_ms: u64,
    count: u64,
    mut status: impl FnMut() -> Result<Value, String>,
) -> Result<(), String> {
    let mut prev: Option<Value> = None;
    let mut i = 0;
    loop {
        let v = status()?;
        let rate = |k: &str| -> i64 {
            let now = v["counters"][k].as_i64().unwrap_or(0);
            prev.as_ref()
                .map_or(0, |p| now - p["counters"][k].as_i64().unwrap_or(0))
        };
        println!(
            "{} epoch {} leader {} instance {} | delivered +{} sent +{}/+{} hb | dropped +{} late ticks {} late copies {} net faults {}",
            v["role"].as_str().unwrap_or(""),
            v["epoch"],
            v["leader"],
            v["instance"],
            rate("delivered"),
            rate("sent_values"),
            rate("sent_heartbeats"),
            rate("requests_dropped"),
            v["counters"]["late_ticks"],
            v["counters"]["late_copies"],
            v["counters"]["net_faults"],
        );
        prev = Some(v);
        i += 1;
        if count != 0 && i >= count {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(interval_ms));
    }
}

fn join(b: &mut Backend, member: u64, as_json: bool) -> Result<(), String> {
    let Backend::Engine(r) = b else {
        return Err(
            "join over a card's BAR needs the host application's state transfer; \
             soc-ctl drives joins of the software engine (--ctl)"
                .into(),
        );
    };
    if !as_json {
        println!("joining: following the live stream, fetching state from node {member}");
    }
    let v = soc_ctl::regfile::join_engine(r, member)?;
    if as_json {
        println!("{v}");
        return Ok(());
    }
    println!(
        "joined: snapshot at instance {} ({} entries, {} bytes), {} attempt(s), {:.1} ms; now active",
        v["snapshot_instance"],
        v["snapshot_entries"],
        v["transfer_bytes"],
        v["attempts"],
        v["join_ms"].as_f64().unwrap_or(0.0)
    );
    Ok(())
}

fn set_timeout(config: &Path, value: u32, loopback: bool, as_json: bool) -> ExitCode {
    let reg = regs::by_name("timeout").expect("timeout register");
    if let Err(e) = regs::check_range(&reg, value as u64) {
        return usage(e);
    }
    let items = [wire::ConfigItem {
        addr: regs::addr::TIMEOUT,
        value,
    }];
    propose_config(
        config,
        loopback,
        &items,
        &format!("CONFIG timeout={value}"),
        "nodes refuse a decrease",
        as_json,
    )
}

fn set_auth(config: &Path, mode: AuthModeArg, key: u8, loopback: bool, as_json: bool) -> ExitCode {
    let mode = match mode {
        AuthModeArg::Off => 0,
        AuthModeArg::On => 1,
        AuthModeArg::Required => 2,
    };
    if mode != 0 && key == 0 {
        return usage("--key: tagged packets need a key id, 1..=255");
    }
    // The key first, so that a cluster turning tags on never holds mode != 0 with key 0.
    let items = [
        wire::ConfigItem {
            addr: regs::addr::AUTH_KEY,
            value: key as u32,
        },
        wire::ConfigItem {
            addr: regs::addr::AUTH_MODE,
            value: mode,
        },
    ];
    propose_config(
        config,
        loopback,
        &items,
        &format!("CONFIG auth_mode={mode} auth_key={key}"),
        "a node refuses it only if it is illegal; a node whose key file lacks the key cannot send after it",
        as_json,
    )
}

/// Decide `items` as one CONFIG instance through the cluster's leader (at the file's addresses,
/// or with `loopback` at the loopback addresses `nc-engine --loopback` runs a multicast file on).
fn propose_config(
    config: &Path,
    loopback: bool,
    items: &[wire::ConfigItem],
    what: &str,
    note: &str,
    as_json: bool,
) -> ExitCode {
    let file = match ClusterFile::load(config) {
        Ok(f) => f,
        Err(e) => return usage(format!("{}: {e}", config.display())),
    };
    let payload: Vec<u8> = items.iter().flat_map(|i| i.to_bytes()).collect();
    let file = if loopback { file.as_loopback() } else { file };
    let client_id = 0x5C00_0000 | std::process::id();
    // The [auth] key file is configuration too.
    let auth = match file.client_auth() {
        Ok(a) => a,
        Err(e) => return usage(format!("{}: {e}", config.display())),
    };
    let mut c = match Client::new(file.cluster_id as u32, client_id, file.client_addrs()) {
        Ok(c) => c.with_auth(auth),
        Err(e) => return fail(e),
    };
    match c.request(wire::ENTRY_FLAG_CONFIG, &payload, Duration::from_secs(10)) {
        Ok(ok) if as_json => {
            println!("{}", json!({"instance": ok.instance}));
            ExitCode::SUCCESS
        }
        Ok(ok) => {
            println!(
                "{what} decided at instance {} ({note}: check `soc-ctl status`, counter config_rejected)",
                ok.instance
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}
