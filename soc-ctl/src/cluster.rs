//! `cluster.toml`: the cluster's nodes, trees, ports and timing, validated with errors that name
//! the key. It fills proto's [`Config`] (the registers) and the socket plumbing the registers do
//! not cover (interfaces and addresses).

use std::fmt;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::{Path, PathBuf};

use proto::auth::Keyring;
use proto::regs::{self, Config};
use serde::{Deserialize, Serialize};

/// How tree traffic travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// IP multicast: one send per tree to the tree's group, on the tree's interface.
    Multicast,
    /// 127.0.0.0/8: one unicast copy per peer and tree stands in for the multicast group
    /// (same protocol, same counters; for machines without root or namespaces).
    Loopback,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Multicast => "multicast",
            Transport::Loopback => "loopback",
        })
    }
}

/// The early-send gap `gen-config` writes: 20 µs (a request waits at most that for the leader's
/// next send instead of up to the 1 ms loop). (Δ + drift) / 20 µs = 225 messages in flight at
/// most, well inside the software receiver's 1024. 0 turns early sends off (every send on the
/// loop, the paper's Algorithm 3).
pub const DEFAULT_MIN_GAP_NS: u64 = 20_000;

/// The Δ `gen-config` writes: 4 ms, not microseconds, because a process can be descheduled
/// (README "Software defaults").
pub const DEFAULT_DELTA_NS: u64 = 4_000_000;

/// Timing, in nanoseconds (the software engine's time unit).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Loop period: time between two leader sends.
    pub loop_period_ns: u64,
    /// Follower timeout.
    pub timeout_ns: u64,
    /// Δ_I: bound on one-way latency between two nodes.
    pub delta_ns: u64,
    /// Δ_D: bound on clock drift.
    pub drift_ns: u64,
    /// A leader send later than this past its deadline counts as a late tick.
    pub late_tick_slack_ns: u64,
    /// Early sends: a leader with requests queued sends once this has passed since its last
    /// send instead of waiting for the loop (0 or absent = off; at most `loop_period_ns`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_gap_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Queue and packet limits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Egress FIFO capacity (requests beyond it are dropped and counted).
    pub fifo_depth: u64,
    /// Most requests per DECIDE.
    pub batch_max: u64,
    /// IP MTU of the tree interfaces.
    pub mtu: u64,
}

/// UDP ports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ports {
    /// Tree traffic (DECIDE).
    pub decide: u64,
    /// Client requests and replies (UDP), state transfer (TCP).
    pub client: u64,
    /// Host path: DECIDE frames to the host.
    pub host: u64,
}

/// Packet tags (`proto::auth`): what the registers `auth_mode` and `auth_key` start with, and
/// where the keys are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// Untagged packets (tagged ones are still checked).
    Off,
    /// Tag every packet; still accept untagged ones (for turning tags on in a running cluster).
    On,
    /// Tag every packet; refuse untagged ones.
    Required,
}

impl AuthMode {
    /// The `auth_mode` register value.
    pub fn register(self) -> u64 {
        match self {
            AuthMode::Off => 0,
            AuthMode::On => 1,
            AuthMode::Required => 2,
        }
    }
}

/// `[auth]` in cluster.toml.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Auth {
    /// `off`, `on` or `required`.
    pub mode: AuthMode,
    /// Id of the key every node tags with (1..=255; a key of `key_file`).
    pub key: u64,
    /// The key file: lines `ID HEX` (32 hex digits), readable by its owner only (mode 0600 or
    /// 0400). Every node and every client needs it.
    pub key_file: PathBuf,
}

/// What a client needs to tag its requests and check replies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientAuth {
    /// The keys (replies tagged with any of them are accepted).
    pub keys: Keyring,
    /// The key id requests are tagged with.
    pub key: u8,
    /// Refuse untagged replies (`auth_mode` 2).
    pub required: bool,
}

/// Read a key file: refused when group or others may read it, or when a line is not `ID HEX`.
pub fn load_keys(path: &Path) -> Result<Keyring, ClusterError> {
    use std::os::unix::fs::PermissionsExt;
    let key = "auth.key_file";
    let meta = std::fs::metadata(path)
        .map_err(|e| err(key, format!("{}: cannot read: {e}", path.display())))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(err(
            key,
            format!(
                "{}: readable by group or others (mode {mode:04o}): keys must be private to their owner (chmod 600)",
                path.display()
            ),
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| err(key, format!("{}: cannot read: {e}", path.display())))?;
    proto::auth::parse_keyfile(&text).map_err(|e| err(key, format!("{}: {e}", path.display())))
}

/// Write a new random key file with key `id` (mode 0600; refuses to overwrite).
pub fn generate_key_file(path: &Path, id: u8) -> Result<(), ClusterError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut key = [0u8; proto::auth::KEY_LEN];
    let mut urandom = std::fs::File::open("/dev/urandom")
        .map_err(|e| err("auth.key_file", format!("/dev/urandom: {e}")))?;
    std::io::Read::read_exact(&mut urandom, &mut key)
        .map_err(|e| err("auth.key_file", format!("/dev/urandom: {e}")))?;
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| err("auth.key_file", format!("{}: {e}", path.display())))?;
    writeln!(
        f,
        "# Nano-consensus cluster keys: ID HEX (keep private: mode 0600)\n{id} {hex}"
    )
    .map_err(|e| err("auth.key_file", format!("{}: {e}", path.display())))
}

/// One multicast tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tree {
    /// IPv4 multicast group (224.0.0.0/4).
    pub group: Ipv4Addr,
}

/// One node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeEntry {
    /// Node id, 0..n.
    pub id: u64,
    /// Address clients send requests to (UDP) and joiners fetch state from (TCP).
    pub client_addr: Ipv4Addr,
    /// Where the host path sends DECIDE frames (the host end of the PCIe stand-in).
    pub host_addr: Ipv4Addr,
    /// This node's address on each tree, in tree order.
    pub tree_addrs: Vec<Ipv4Addr>,
    /// This node's interface on each tree, in tree order (multicast transport only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tree_ifaces: Vec<String>,
}

/// The whole file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterFile {
    /// Cluster id carried in every packet.
    pub cluster_id: u64,
    /// `multicast` or `loopback`.
    pub transport: Transport,
    /// IPv4 TTL of every frame a node sends (register `ttl`; optional, default its reset
    /// value).
    #[serde(default = "default_ttl")]
    pub ttl: u64,
    /// Timing in ns.
    pub timing: Timing,
    /// Queue and packet limits.
    pub limits: Limits,
    /// UDP ports.
    pub ports: Ports,
    /// The trees (|G| = their number).
    pub trees: Vec<Tree>,
    /// The nodes (n = their number), ids 0..n.
    pub nodes: Vec<NodeEntry>,
    /// Packet tags (absent: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<Auth>,
}

fn default_ttl() -> u64 {
    regs::by_name("ttl").expect("a register of the map").reset
}

/// An error in `cluster.toml`, naming the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterError {
    /// The key, e.g. `timing.timeout_ns` or `nodes[1].tree_addrs`.
    pub key: String,
    /// What is wrong and what would be legal.
    pub message: String,
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for ClusterError {}

fn err(key: impl Into<String>, message: impl Into<String>) -> ClusterError {
    ClusterError {
        key: key.into(),
        message: message.into(),
    }
}

/// The `cluster.toml` key of a configuration register.
pub fn key_of_register(name: &str) -> String {
    match name {
        "node_id" => "nodes[].id".into(),
        "node_count" => "nodes (their number)".into(),
        "cluster_id" => "cluster_id".into(),
        "trees" => "trees (their number)".into(),
        "loop_period" => "timing.loop_period_ns".into(),
        "timeout" => "timing.timeout_ns".into(),
        "delta" => "timing.delta_ns".into(),
        "drift" => "timing.drift_ns".into(),
        "late_tick_slack" => "timing.late_tick_slack_ns".into(),
        "min_gap" => "timing.min_gap_ns".into(),
        "auth_mode" => "auth.mode".into(),
        "auth_key" => "auth.key".into(),
        "fifo_depth" | "batch_max" | "mtu" => format!("limits.{name}"),
        "decide_port" => "ports.decide".into(),
        "src_ip" => "nodes[].client_addr".into(),
        "host_ip" => "nodes[].host_addr".into(),
        "client_port" => "ports.client".into(),
        "host_port" => "ports.host".into(),
        g if g.starts_with("tree_group") => format!("trees[{}].group", &g[10..]),
        other => other.into(),
    }
}

/// Everything one node needs: its registers and its sockets' addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSetup {
    /// The register values (validated by proto).
    pub config: Config,
    /// Transport of tree traffic.
    pub transport: Transport,
    /// Every node's addresses, by id (this node is `nodes[config.node_id]`).
    pub nodes: Vec<NodeEntry>,
    /// The key file (`auth.key_file`), read again on `soc-ctl reload-keys`.
    pub key_file: Option<PathBuf>,
    /// The keys read from it when the setup was made (empty without `[auth]`).
    pub keys: Keyring,
}

impl NodeSetup {
    /// The member (node id) whose address `ip` is (a tree address or its client address), if
    /// any: tree traffic is heard only from members.
    pub fn member_at(&self, ip: Ipv4Addr) -> Option<u8> {
        self.nodes
            .iter()
            .position(|n| n.client_addr == ip || n.tree_addrs.contains(&ip))
            .map(|j| j as u8)
    }

    /// This node's entry.
    pub fn me(&self) -> &NodeEntry {
        &self.nodes[self.config.node_id as usize]
    }

    /// A node's client socket address (UDP requests, TCP state transfer).
    pub fn client_sock(&self, id: u8) -> SocketAddrV4 {
        SocketAddrV4::new(self.nodes[id as usize].client_addr, self.config.client_port)
    }

    /// Where this node's host path sends DECIDE frames.
    pub fn host_sock(&self) -> SocketAddrV4 {
        SocketAddrV4::new(self.me().host_addr, self.config.host_port)
    }
}

impl ClusterFile {
    /// Read and validate a file.
    pub fn load(path: &Path) -> Result<ClusterFile, ClusterError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| err(path.display().to_string(), format!("cannot read: {e}")))?;
        Self::parse(&text)
    }

    /// Parse and validate TOML text.
    pub fn parse(text: &str) -> Result<ClusterFile, ClusterError> {
        let f: ClusterFile = toml::from_str(text).map_err(|e| {
            let key = e
                .span()
                .map(|s| {
                    let line = text[..s.start].lines().count().max(1);
                    format!("line {line}")
                })
                .unwrap_or_else(|| "cluster.toml".into());
            err(key, e.message().to_string())
        })?;
        f.validate()?;
        Ok(f)
    }

    /// Serialize (for `soc-ctl gen-config`).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("a ClusterFile always serializes")
    }

    /// A loopback cluster of `n` nodes with `trees` trees: node i's tree t address is
    /// 127.(base).(1+t).(1+i), its client address 127.(base).10.(1+i), its host 127.(base).20.(1+i).
    /// Software-friendly timing: 1 ms loop (heartbeats; early sends 20 µs after the last send),
    /// Δ 4 ms, drift 0.5 ms, timeout 50 ms (proto/README "The software loop period").
    pub fn loopback(n: u8, trees: u8, base: u8, port_base: u16) -> ClusterFile {
        ClusterFile {
            cluster_id: 7,
            transport: Transport::Loopback,
            ttl: default_ttl(),
            timing: Timing {
                loop_period_ns: 1_000_000,
                timeout_ns: 50_000_000,
                delta_ns: DEFAULT_DELTA_NS,
                drift_ns: 500_000,
                late_tick_slack_ns: 1_000_000,
                min_gap_ns: DEFAULT_MIN_GAP_NS,
            },
            limits: Limits {
                fifo_depth: 4096,
                batch_max: 64,
                mtu: 9000,
            },
            ports: Ports {
                decide: port_base as u64,
                client: port_base as u64 + 1,
                host: port_base as u64 + 2,
            },
            trees: (0..trees)
                .map(|t| Tree {
                    group: Ipv4Addr::new(239, 77, base, 1 + t),
                })
                .collect(),
            nodes: (0..n)
                .map(|i| NodeEntry {
                    id: i as u64,
                    client_addr: Ipv4Addr::new(127, base, 10, 1 + i),
                    host_addr: Ipv4Addr::new(127, base, 20, 1 + i),
                    tree_addrs: (0..trees)
                        .map(|t| Ipv4Addr::new(127, base, 1 + t, 1 + i))
                        .collect(),
                    tree_ifaces: vec![],
                })
                .collect(),
            auth: None,
        }
    }

    /// The same cluster on 127.0.0.0/8 (what `--transport loopback` runs): node i's tree t
    /// address becomes 127.0.(1+t).(1+i), its client address 127.0.10.(1+i), its host 127.0.20.(1+i).
    pub fn as_loopback(&self) -> ClusterFile {
        let mut f = self.clone();
        if f.transport == Transport::Loopback {
            return f;
        }
        f.transport = Transport::Loopback;
        for (i, n) in f.nodes.iter_mut().enumerate() {
            let i = i as u8;
            n.client_addr = Ipv4Addr::new(127, 0, 10, 1 + i);
            n.host_addr = Ipv4Addr::new(127, 0, 20, 1 + i);
            n.tree_addrs = (0..self.trees.len() as u8)
                .map(|t| Ipv4Addr::new(127, 0, 1 + t, 1 + i))
                .collect();
            n.tree_ifaces.clear();
        }
        f
    }

    /// A multicast cluster of the given nodes (what `soc-ctl gen-config --transport multicast`
    /// writes): the software timing and limits of [`ClusterFile::loopback`], the tree groups
    /// `groups` (tree t is `groups[t]`), the decide port `port_base` (client and host ports
    /// follow it). Not validated: call [`ClusterFile::validate`] and
    /// [`ClusterFile::check_multicast_nodes`].
    pub fn multicast(nodes: Vec<NodeEntry>, groups: &[Ipv4Addr], port_base: u16) -> ClusterFile {
        let mut f = ClusterFile::loopback(1, 1, 0, port_base);
        f.transport = Transport::Multicast;
        f.trees = groups.iter().map(|&group| Tree { group }).collect();
        f.nodes = nodes;
        f
    }

    /// The checks `gen-config` adds for a cluster of real machines (beyond [`validate`], which
    /// every file passes): each node's client and tree addresses are unicast addresses other
    /// than loopback (127.0.0.0/8 is `transport = "loopback"`), its host address is not a
    /// group, its interface names are names Linux accepts, and its trees use distinct
    /// interfaces (two trees on one link are not redundant).
    ///
    /// [`validate`]: ClusterFile::validate
    pub fn check_multicast_nodes(&self) -> Result<(), ClusterError> {
        let plain = |a: &Ipv4Addr| {
            !(a.is_loopback() || a.is_unspecified() || a.is_multicast() || a.is_broadcast())
        };
        for (i, n) in self.nodes.iter().enumerate() {
            if !plain(&n.client_addr) {
                return Err(err(
                    format!("nodes[{i}].client_addr"),
                    format!(
                        "{} is not a unicast address other nodes and clients can reach",
                        n.client_addr
                    ),
                ));
            }
            if n.host_addr.is_unspecified()
                || n.host_addr.is_multicast()
                || n.host_addr.is_broadcast()
            {
                return Err(err(
                    format!("nodes[{i}].host_addr"),
                    format!(
                        "{} is not a unicast address (the host path sends to it: 127.0.0.1 for a replica on the same machine)",
                        n.host_addr
                    ),
                ));
            }
            for (t, a) in n.tree_addrs.iter().enumerate() {
                if !plain(a) {
                    return Err(err(
                        format!("nodes[{i}].tree_addrs[{t}]"),
                        format!("{a} is not the unicast address of an interface on tree {t}"),
                    ));
                }
            }
            for (t, name) in n.tree_ifaces.iter().enumerate() {
                if let Err(why) = check_iface_name(name) {
                    return Err(err(format!("nodes[{i}].tree_ifaces[{t}]"), why));
                }
                if let Some(u) = n.tree_ifaces[..t].iter().position(|o| o == name) {
                    return Err(err(
                        format!("nodes[{i}].tree_ifaces[{t}]"),
                        format!(
                            "{name} is also tree {u}'s interface: every tree needs its own link (two trees on one link are not redundant)"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every node's client address (UDP requests).
    pub fn client_addrs(&self) -> Vec<SocketAddrV4> {
        self.nodes
            .iter()
            .map(|n| SocketAddrV4::new(n.client_addr, self.ports.client as u16))
            .collect()
    }

    /// The registers of node `id` (node_id, src_ip and host_ip are per node; the rest is the
    /// same on every node). src_ip is the node's client address (replies come from it) and
    /// host_ip its host address; the MAC registers keep their reset values (the software
    /// datapath's sockets take every address from the OS; the FPGA frame generators use them).
    fn config(&self, id: u8) -> Result<Config, ClusterError> {
        let mut c = Config::default();
        let mut set = |name: &str, v: u64| -> Result<(), ClusterError> {
            let reg = regs::by_name(name).expect("a register of the map");
            c.set(reg.addr, v).map_err(|e| match e {
                regs::RegError::OutOfRange { min, max, .. } => err(
                    key_of_register(name),
                    format!("{v} is out of range: legal values are {min}..={max}"),
                ),
                other => err(key_of_register(name), other.to_string()),
            })
        };
        set("node_count", self.nodes.len() as u64)?;
        set("node_id", id as u64)?;
        set("cluster_id", self.cluster_id)?;
        set("trees", self.trees.len() as u64)?;
        set("loop_period", self.timing.loop_period_ns)?;
        set("timeout", self.timing.timeout_ns)?;
        set("delta", self.timing.delta_ns)?;
        set("drift", self.timing.drift_ns)?;
        set("late_tick_slack", self.timing.late_tick_slack_ns)?;
        set("min_gap", self.timing.min_gap_ns)?;
        set("fifo_depth", self.limits.fifo_depth)?;
        set("batch_max", self.limits.batch_max)?;
        set("mtu", self.limits.mtu)?;
        set("decide_port", self.ports.decide)?;
        set("client_port", self.ports.client)?;
        set("host_port", self.ports.host)?;
        set("ttl", self.ttl)?;
        if let Some(a) = &self.auth {
            set("auth_key", a.key)?;
            set("auth_mode", a.mode.register())?;
        }
        if let Some(me) = self.nodes.get(id as usize) {
            set("src_ip", u32::from(me.client_addr) as u64)?;
            set("host_ip", u32::from(me.host_addr) as u64)?;
        }
        for (t, tree) in self.trees.iter().enumerate() {
            set(&format!("tree_group{t}"), u32::from(tree.group) as u64)?;
        }
        c.validate().map_err(|e| {
            err(
                key_of_register(e.field),
                format!(
                    "{} is illegal: {} (legal here: {}..={})",
                    e.value, e.rule, e.min, e.max
                ),
            )
        })?;
        Ok(c)
    }

    /// Check everything (registers through proto, then addresses and interfaces).
    pub fn validate(&self) -> Result<(), ClusterError> {
        if self.nodes.is_empty() || self.nodes.len() > regs::MAX_NODES as usize {
            return Err(err(
                "nodes",
                format!(
                    "{} nodes: legal are 1..={}",
                    self.nodes.len(),
                    regs::MAX_NODES
                ),
            ));
        }
        if self.trees.is_empty() || self.trees.len() > regs::MAX_TREES as usize {
            return Err(err(
                "trees",
                format!(
                    "{} trees: legal are 1..={}",
                    self.trees.len(),
                    regs::MAX_TREES
                ),
            ));
        }
        for (t, tree) in self.trees.iter().enumerate() {
            if !tree.group.is_multicast() {
                return Err(err(
                    format!("trees[{t}].group"),
                    format!(
                        "{} is not an IPv4 multicast group (224.0.0.0/4)",
                        tree.group
                    ),
                ));
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            if node.id != i as u64 {
                return Err(err(
                    format!("nodes[{i}].id"),
                    format!(
                        "is {}: nodes must be listed in id order 0..{}",
                        node.id,
                        self.nodes.len()
                    ),
                ));
            }
            if node.tree_addrs.len() != self.trees.len() {
                return Err(err(
                    format!("nodes[{i}].tree_addrs"),
                    format!(
                        "{} addresses for {} trees: give one per tree",
                        node.tree_addrs.len(),
                        self.trees.len()
                    ),
                ));
            }
            match self.transport {
                Transport::Multicast if node.tree_ifaces.len() != self.trees.len() => {
                    return Err(err(
                        format!("nodes[{i}].tree_ifaces"),
                        format!(
                            "{} interfaces for {} trees: the multicast transport needs one per tree",
                            node.tree_ifaces.len(),
                            self.trees.len()
                        ),
                    ));
                }
                Transport::Loopback => {
                    for (t, a) in node.tree_addrs.iter().enumerate() {
                        if !a.is_loopback() {
                            return Err(err(
                                format!("nodes[{i}].tree_addrs[{t}]"),
                                format!("{a} is not in 127.0.0.0/8 (transport = \"loopback\")"),
                            ));
                        }
                    }
                }
                _ => {}
            }
            for (j, other) in self.nodes[..i].iter().enumerate() {
                if other.client_addr == node.client_addr {
                    return Err(err(
                        format!("nodes[{i}].client_addr"),
                        format!("{} is also nodes[{j}]'s", node.client_addr),
                    ));
                }
                for (t, a) in node.tree_addrs.iter().enumerate() {
                    if other.tree_addrs.get(t) == Some(a) {
                        return Err(err(
                            format!("nodes[{i}].tree_addrs[{t}]"),
                            format!("{a} is also nodes[{j}]'s"),
                        ));
                    }
                }
            }
        }
        for id in 0..self.nodes.len() {
            self.config(id as u8)?;
        }
        Ok(())
    }

    /// Node `id`'s setup.
    pub fn node(&self, id: u64) -> Result<NodeSetup, ClusterError> {
        if id >= self.nodes.len() as u64 {
            return Err(err(
                "--node",
                format!(
                    "{id} is not a node of this cluster: legal are 0..={}",
                    self.nodes.len() - 1
                ),
            ));
        }
        Ok(NodeSetup {
            config: self.config(id as u8)?,
            transport: self.transport,
            nodes: self.nodes.clone(),
            key_file: self.auth.as_ref().map(|a| a.key_file.clone()),
            keys: self.keys()?,
        })
    }

    /// The keys of `[auth]` (empty without it), checked to hold the send key `auth.key`.
    pub fn keys(&self) -> Result<Keyring, ClusterError> {
        let Some(a) = &self.auth else {
            return Ok(Keyring::new());
        };
        let ring = load_keys(&a.key_file)?;
        if ring.get(a.key as u8).is_none() {
            return Err(err(
                "auth.key",
                format!(
                    "key {} is not in {} (it holds {:?})",
                    a.key,
                    a.key_file.display(),
                    ring.ids()
                ),
            ));
        }
        Ok(ring)
    }

    /// What a client of this cluster needs: None without `[auth]`, or with `mode = "off"`.
    pub fn client_auth(&self) -> Result<Option<ClientAuth>, ClusterError> {
        match &self.auth {
            Some(a) if a.mode != AuthMode::Off => Ok(Some(ClientAuth {
                keys: self.keys()?,
                key: a.key as u8,
                required: a.mode == AuthMode::Required,
            })),
            _ => Ok(None),
        }
    }
}

/// An interface name Linux accepts (`dev_valid_name`): 1..=15 bytes, not `.` or `..`, no `/`,
/// `:` or white space.
fn check_iface_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 15 {
        return Err(format!(
            "'{name}' is not an interface name: Linux names are 1..=15 bytes"
        ));
    }
    if name == "."
        || name == ".."
        || name.contains(['/', ':'])
        || name.contains(char::is_whitespace)
    {
        return Err(format!(
            "'{name}' is not an interface name (no '/', ':' or spaces; not '.' or '..')"
        ));
    }
    Ok(())
}

/// One `--member` of `soc-ctl gen-config --transport multicast`:
/// `ID,CLIENT_ADDR,HOST_ADDR,TREE_ADDR:IFACE[,TREE_ADDR:IFACE…]`, one `TREE_ADDR:IFACE` per tree
/// in tree order (the node's address on that tree's network and the interface it is on). The
/// error says which field is wrong and what it should be.
pub fn parse_member(spec: &str) -> Result<NodeEntry, String> {
    const FORM: &str = "ID,CLIENT_ADDR,HOST_ADDR,TREE_ADDR:IFACE,TREE_ADDR:IFACE";
    let fields: Vec<&str> = spec.split(',').map(str::trim).collect();
    if fields.len() < 4 {
        return Err(format!(
            "{} field(s); the form is {FORM} (one TREE_ADDR:IFACE per tree)",
            fields.len()
        ));
    }
    let id: u64 = fields[0]
        .parse()
        .map_err(|_| format!("ID '{}' is not a node id (0, 1, 2, …)", fields[0]))?;
    let addr = |what: &str, s: &str| -> Result<Ipv4Addr, String> {
        s.parse()
            .map_err(|_| format!("{what} '{s}' is not an IPv4 address (the form is {FORM})"))
    };
    let client_addr = addr("CLIENT_ADDR", fields[1])?;
    let host_addr = addr("HOST_ADDR", fields[2])?;
    let mut tree_addrs = Vec::new();
    let mut tree_ifaces = Vec::new();
    for (t, f) in fields[3..].iter().enumerate() {
        let Some((a, iface)) = f.split_once(':') else {
            return Err(format!(
                "tree {t}: '{f}' is not TREE_ADDR:IFACE (e.g. 10.71.1.1:eth1)"
            ));
        };
        tree_addrs.push(addr(&format!("tree {t}'s TREE_ADDR"), a.trim())?);
        check_iface_name(iface.trim()).map_err(|e| format!("tree {t}: {e}"))?;
        tree_ifaces.push(iface.trim().to_string());
    }
    Ok(NodeEntry {
        id,
        client_addr,
        host_addr,
        tree_addrs,
        tree_ifaces,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(i: u8) -> NodeEntry {
        parse_member(&format!(
            "{i},10.71.3.{n},127.0.0.1,10.71.1.{n}:eth1,10.71.2.{n}:eth2",
            n = i + 1
        ))
        .unwrap()
    }

    #[test]
    fn a_multicast_cluster_from_members_validates_and_round_trips() {
        let groups = [Ipv4Addr::new(239, 77, 0, 1), Ipv4Addr::new(239, 77, 0, 2)];
        let f = ClusterFile::multicast((0..3).map(member).collect(), &groups, 7400);
        f.validate().unwrap();
        f.check_multicast_nodes().unwrap();
        let back = ClusterFile::parse(&f.to_toml()).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.transport, Transport::Multicast);
        assert_eq!(back.nodes[2].tree_ifaces, ["eth1", "eth2"]);
        assert_eq!(back.nodes[2].tree_addrs[1], Ipv4Addr::new(10, 71, 2, 3));
        assert_eq!(back.timing, ClusterFile::loopback(3, 2, 0, 7400).timing);
    }

    #[test]
    fn member_specs_are_refused_naming_the_field() {
        for (spec, needle) in [
            ("0,10.0.0.1,127.0.0.1", "3 field(s)"),
            ("x,10.0.0.1,127.0.0.1,10.1.0.1:eth1", "ID 'x'"),
            (
                "0,10.0.0.300,127.0.0.1,10.1.0.1:eth1",
                "CLIENT_ADDR '10.0.0.300'",
            ),
            ("0,10.0.0.1,host,10.1.0.1:eth1", "HOST_ADDR 'host'"),
            (
                "0,10.0.0.1,127.0.0.1,10.1.0.1",
                "tree 0: '10.1.0.1' is not TREE_ADDR:IFACE",
            ),
            (
                "0,10.0.0.1,127.0.0.1,10.1.0.1:eth1,eth2:10.2.0.1",
                "tree 1's TREE_ADDR 'eth2'",
            ),
            (
                "0,10.0.0.1,127.0.0.1,10.1.0.1:averyveryverylongname",
                "1..=15 bytes",
            ),
            ("0,10.0.0.1,127.0.0.1,10.1.0.1:", "1..=15 bytes"),
        ] {
            let e = parse_member(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
        }
        let groups = [Ipv4Addr::new(239, 77, 0, 1), Ipv4Addr::new(239, 77, 0, 2)];
        let mut nodes: Vec<NodeEntry> = (0..3).map(member).collect();
        nodes[1].tree_ifaces[1] = "eth1".into();
        let e = ClusterFile::multicast(nodes, &groups, 7400)
            .check_multicast_nodes()
            .unwrap_err();
        assert_eq!(e.key, "nodes[1].tree_ifaces[1]");
        let mut nodes: Vec<NodeEntry> = (0..3).map(member).collect();
        nodes[2].tree_addrs[0] = Ipv4Addr::new(127, 0, 1, 3);
        let e = ClusterFile::multicast(nodes, &groups, 7400)
            .check_multicast_nodes()
            .unwrap_err();
        assert_eq!(e.key, "nodes[2].tree_addrs[0]");
        let mut nodes: Vec<NodeEntry> = (0..3).map(member).collect();
        nodes[0].client_addr = Ipv4Addr::new(239, 1, 1, 1);
        let e = ClusterFile::multicast(nodes, &groups, 7400)
            .check_multicast_nodes()
            .unwrap_err();
        assert_eq!(e.key, "nodes[0].client_addr");
    }

    #[test]
    fn loopback_file_round_trips_and_validates() {
        let f = ClusterFile::loopback(3, 2, 0, 7400);
        let back = ClusterFile::parse(&f.to_toml()).unwrap();
        assert_eq!(back, f);
        let s = back.node(2).unwrap();
        assert_eq!(s.config.node_id, 2);
        assert_eq!(s.config.node_count, 3);
        assert_eq!(s.config.timeout, 50_000_000);
    }

    #[test]
    fn ttl_is_optional_and_checked() {
        let f = ClusterFile::loopback(3, 2, 0, 7400);
        let text = f.to_toml();
        assert!(text.contains("ttl = 16"), "{text}");
        let without: String = text
            .lines()
            .filter(|l| !l.starts_with("ttl"))
            .map(|l| format!("{l}\n"))
            .collect();
        let back = ClusterFile::parse(&without).unwrap();
        assert_eq!(back.ttl, 16, "the register's reset value");
        assert_eq!(back.node(0).unwrap().config.ttl, 16);
        let one = ClusterFile::parse(&text.replace("ttl = 16", "ttl = 1")).unwrap();
        assert_eq!(one.node(1).unwrap().config.ttl, 1);
        for bad in [0, 256] {
            let e =
                ClusterFile::parse(&text.replace("ttl = 16", &format!("ttl = {bad}"))).unwrap_err();
            assert_eq!(e.key, "ttl");
            assert!(e.message.contains("legal values are 1..=255"), "{e}");
        }
    }

    #[test]
    fn errors_name_the_key() {
        let mut f = ClusterFile::loopback(3, 2, 0, 7400);
        f.timing.timeout_ns = 1000;
        let e = ClusterFile::parse(&f.to_toml()).unwrap_err();
        assert_eq!(e.key, "timing.timeout_ns");
        assert!(e.message.contains("legal here"), "{e}");

        let mut f = ClusterFile::loopback(3, 2, 0, 7400);
        f.timing.delta_ns = 1 << 40;
        let e = ClusterFile::parse(&f.to_toml()).unwrap_err();
        assert_eq!(e.key, "timing.delta_ns");
        assert!(e.message.contains("legal values are 1..=4294967295"), "{e}");

        let mut f = ClusterFile::loopback(3, 2, 0, 7400);
        f.nodes[1].tree_addrs.pop();
        assert_eq!(f.validate().unwrap_err().key, "nodes[1].tree_addrs");

        let mut f = ClusterFile::loopback(3, 2, 0, 7400);
        f.trees[1].group = Ipv4Addr::new(10, 0, 0, 1);
        assert_eq!(f.validate().unwrap_err().key, "trees[1].group");

        let mut f = ClusterFile::loopback(3, 2, 0, 7400);
        f.trees[1].group = f.trees[0].group;
        assert_eq!(f.validate().unwrap_err().key, "trees[1].group");

        let mut f = ClusterFile::loopback(3, 2, 0, 7400);
        f.ports.host = f.ports.client;
        assert_eq!(f.validate().unwrap_err().key, "ports.host");

        let mut f = ClusterFile::loopback(3, 2, 0, 7400);
        f.transport = Transport::Multicast;
        assert_eq!(f.validate().unwrap_err().key, "nodes[0].tree_ifaces");

        let e = ClusterFile::parse("cluster_id = 1\nbogus = 2\n").unwrap_err();
        assert!(
            e.message.contains("bogus") || e.message.contains("unknown"),
            "{e}"
        );
        assert!(ClusterFile::loopback(3, 2, 0, 7400).node(3).is_err());
    }
}
