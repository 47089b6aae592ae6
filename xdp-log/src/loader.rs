//! Attach, detach and read the counters of the XDP program; pins live under a bpffs folder.
//!
//! Pin folder layout (default `/sys/fs/bpf/nc-xdp-log`): one file per map, named as in
//! [`common::map_name`], plus `link` (the XDP bpf_link; removing it detaches the program).

use crate::EBPF_OBJECT;
use anyhow::{Context, Result, anyhow, bail};
use aya::{
    Ebpf,
    maps::{Array, HashMap, Map, MapData, PerCpuArray},
    programs::{Xdp, XdpMode, links::FdLink},
};
use common::{
    LOG_CAPACITY, MAX_SOURCES, PROGRAM_NAME, SLOT_LEN, config, counter, map_name, source_key,
};
use std::{
    ffi::CString,
    net::Ipv4Addr,
    os::fd::{AsRawFd, FromRawFd, OwnedFd},
    path::{Path, PathBuf},
};

/// The default pin folder.
pub const DEFAULT_PIN_DIR: &str = "/sys/fs/bpf/nc-xdp-log";
/// File name of the pinned link inside the pin folder.
pub const LINK_PIN: &str = "link";

/// XDP attach mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// In the driver (veth supports it).
    Native,
    /// Generic XDP in the kernel stack (any device).
    Skb,
}

/// What to attach and how.
#[derive(Clone, Debug)]
pub struct AttachOptions {
    /// Interface name (the host end of the veth).
    pub iface: String,
    /// Attach mode.
    pub mode: Mode,
    /// bpffs folder for the pins (created; must not hold a `link` already).
    pub pin_dir: PathBuf,
    /// The cluster whose DECIDEs are logged.
    pub cluster_id: u32,
    /// UDP destination port of the host copies (register `host_port`).
    pub port: u16,
    /// Drop valid DECIDE frames after logging them (the host stack never sees them).
    pub consume: bool,
    /// Members only: the IPv4 source addresses a DECIDE is heard from (at most
    /// [`common::MAX_SOURCES`]); any other source is counted `unauthorized`, dropped, never
    /// logged. The engine's host copies come from the NIC's own address on the link to the
    /// host (in the namespace lab, `nic-I`'s end of the PCIe veth; [`source_toward`] finds
    /// it). Empty: no allow-list, any source is heard (as before the check existed).
    pub allow_sources: Vec<Ipv4Addr>,
    /// The cluster's node count n (register `node_count`, 1..=64): a DECIDE is heard only when
    /// its `sender` is the leader of its epoch, `epoch mod n`; others are counted
    /// `unauthorized`, dropped, never logged. 0: no sender check.
    pub nodes: u8,
}

/// The usual bpffs mount point.
pub const BPFFS: &str = "/sys/fs/bpf";

fn is_bpffs(p: &Path) -> bool {
    const BPF_FS_MAGIC: i64 = 0xcafe_4a11;
    let Ok(c) = CString::new(p.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: statfs fills the struct it is given; zero is a valid start.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid C string, st a valid out pointer.
    unsafe { libc::statfs(c.as_ptr(), &mut st) == 0 && st.f_type as i64 == BPF_FS_MAGIC }
}

/// Pins need a bpffs. If `pin_dir` is under /sys/fs/bpf and nothing is mounted there, mount
/// one (as `bpftool` does); anywhere else it must already be a bpffs.
fn ensure_bpffs(pin_dir: &Path) -> Result<()> {
    let root = Path::new(BPFFS);
    if pin_dir.starts_with(root) && !is_bpffs(root) {
        let src = CString::new("bpf")?;
        let dst = CString::new(BPFFS)?;
        // SAFETY: valid C strings; no mount data.
        let r = unsafe {
            libc::mount(
                src.as_ptr(),
                dst.as_ptr(),
                src.as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if r != 0 {
            bail!(
                "mount bpffs on {BPFFS}: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    Ok(())
}

/// An attached program; [`Attached::detach`] (or drop) detaches it and removes the pins.
pub struct Attached {
    pin_dir: PathBuf,
    /// Holds the program and map fds while attached.
    ebpf: Ebpf,
    done: bool,
}

fn map_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// Load the embedded object, configure it, pin its maps, attach it and pin the link.
pub fn attach(o: &AttachOptions) -> Result<Attached> {
    let link_path = o.pin_dir.join(LINK_PIN);
    if link_path.exists() {
        bail!(
            "{} exists: xdp-log is already attached with this pin folder (run `xdp-log detach --pin {}`)",
            link_path.display(),
            o.pin_dir.display()
        );
    }
    if o.allow_sources.len() > MAX_SOURCES as usize {
        bail!(
            "{} allowed sources; at most {MAX_SOURCES}",
            o.allow_sources.len()
        );
    }
    if u32::from(o.nodes) > proto::regs::MAX_NODES {
        bail!(
            "node count {}: a cluster has at most {} nodes",
            o.nodes,
            proto::regs::MAX_NODES
        );
    }
    ensure_bpffs(&o.pin_dir)?;
    std::fs::create_dir_all(&o.pin_dir)
        .with_context(|| format!("create pin folder {}", o.pin_dir.display()))?;
    let mut att = Attached {
        pin_dir: o.pin_dir.clone(),
        ebpf: Ebpf::load(EBPF_OBJECT).context("load the eBPF object")?,
        done: false,
    };
    let ebpf = &mut att.ebpf;
    {
        let mut cfgmap: Array<_, u32> = Array::try_from(
            ebpf.map_mut(map_name::CONFIG)
                .ok_or_else(|| anyhow!("no map {}", map_name::CONFIG))?,
        )?;
        cfgmap.set(config::CLUSTER_ID, o.cluster_id, 0)?;
        cfgmap.set(config::UDP_PORT, u32::from(o.port), 0)?;
        cfgmap.set(config::NODES, u32::from(o.nodes), 0)?;
    }
    if !o.allow_sources.is_empty() {
        let mut sources: HashMap<_, u32, u8> = HashMap::try_from(
            ebpf.map_mut(map_name::SOURCES)
                .ok_or_else(|| anyhow!("no map {}", map_name::SOURCES))?,
        )?;
        for a in &o.allow_sources {
            sources.insert(source_key(a.octets()), 1, 0)?;
        }
    }
    {
        // The flags last: with FLAG_ENABLED the program starts acting on frames, and every
        // other word (and the allow-list) must be in place by then.
        let mut cfgmap: Array<_, u32> = Array::try_from(
            ebpf.map_mut(map_name::CONFIG)
                .ok_or_else(|| anyhow!("no map {}", map_name::CONFIG))?,
        )?;
        let mut flags = config::FLAG_ENABLED;
        if o.consume {
            flags |= config::FLAG_CONSUME;
        }
        if !o.allow_sources.is_empty() {
            flags |= config::FLAG_CHECK_SOURCE;
        }
        cfgmap.set(config::FLAGS, flags, 0)?;
    }
    for name in map_name::ALL {
        let p = map_path(&o.pin_dir, name);
        // A stale pin from a run that died: replace it.
        let _ = std::fs::remove_file(&p);
        ebpf.map(name)
            .ok_or_else(|| anyhow!("no map {name}"))?
            .pin(&p)
            .with_context(|| format!("pin {name} at {} (is bpffs mounted?)", p.display()))?;
    }
    let prog: &mut Xdp = ebpf
        .program_mut(PROGRAM_NAME)
        .ok_or_else(|| anyhow!("no program {PROGRAM_NAME}"))?
        .try_into()?;
    prog.load().context("load the XDP program (verifier)")?;
    let mode = match o.mode {
        Mode::Native => XdpMode::Driver,
        Mode::Skb => XdpMode::Skb,
    };
    let id = prog
        .attach(&o.iface, mode)
        .with_context(|| format!("attach XDP ({:?}) to {}", o.mode, o.iface))?;
    let link = FdLink::try_from(prog.take_link(id)?)
        .map_err(|e| anyhow!("the kernel gave no bpf_link for XDP: {e}"))?;
    link.pin(&link_path)
        .with_context(|| format!("pin the link at {}", link_path.display()))?;
    Ok(att)
}

impl Attached {
    /// The pin folder.
    pub fn pin_dir(&self) -> &Path {
        &self.pin_dir
    }

    /// Whether the pinned link is still there (someone may have run `detach`).
    pub fn still_pinned(&self) -> bool {
        self.pin_dir.join(LINK_PIN).exists()
    }

    /// Detach the program and remove every pin.
    pub fn detach(mut self) -> Result<()> {
        self.done = true;
        detach_pinned(&self.pin_dir)
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        if !self.done {
            let _ = detach_pinned(&self.pin_dir);
        }
    }
}

/// `bpf(2)` through libc: BPF_OBJ_GET (open a pin) and BPF_LINK_DETACH, which aya 0.14 does
/// not expose for a pinned link. BPF_LINK_DETACH detaches even while other processes still
/// hold the link open (an `attach` running in the foreground).
fn bpf_obj_get(path: &Path) -> std::io::Result<OwnedFd> {
    #[repr(C)]
    struct ObjGet {
        pathname: u64,
        bpf_fd: u32,
        file_flags: u32,
        path_fd: i32,
        _pad: u32,
    }
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let attr = ObjGet {
        pathname: c.as_ptr() as u64,
        bpf_fd: 0,
        file_flags: 0,
        path_fd: 0,
        _pad: 0,
    };
    const BPF_OBJ_GET: libc::c_long = 7;
    // SAFETY: attr is a valid bpf_attr prefix for BPF_OBJ_GET and outlives the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_OBJ_GET,
            &attr as *const ObjGet,
            std::mem::size_of::<ObjGet>() as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

fn bpf_link_detach(link: &OwnedFd) -> std::io::Result<()> {
    #[repr(C)]
    struct LinkDetach {
        link_fd: u32,
    }
    let attr = LinkDetach {
        link_fd: link.as_raw_fd() as u32,
    };
    const BPF_LINK_DETACH: libc::c_long = 34;
    // SAFETY: attr is a valid bpf_attr prefix for BPF_LINK_DETACH.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_LINK_DETACH,
            &attr as *const LinkDetach,
            std::mem::size_of::<LinkDetach>() as libc::c_uint,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Detach the program pinned under `pin_dir` and remove its pins (from any process).
pub fn detach_pinned(pin_dir: &Path) -> Result<()> {
    let link_path = pin_dir.join(LINK_PIN);
    let mut found = false;
    if link_path.exists() {
        found = true;
        let fd = bpf_obj_get(&link_path)
            .with_context(|| format!("open the pinned link {}", link_path.display()))?;
        bpf_link_detach(&fd).context("BPF_LINK_DETACH")?;
        std::fs::remove_file(&link_path)?;
    }
    for name in map_name::ALL {
        let p = map_path(pin_dir, name);
        if p.exists() {
            found = true;
            std::fs::remove_file(&p).with_context(|| format!("unpin {}", p.display()))?;
        }
    }
    if !found {
        bail!("nothing pinned under {}", pin_dir.display());
    }
    let _ = std::fs::remove_dir(pin_dir);
    Ok(())
}

/// Open a pinned map.
pub(crate) fn open_map(pin_dir: &Path, name: &str) -> Result<Map> {
    let p = map_path(pin_dir, name);
    let data = MapData::from_pin(&p)
        .with_context(|| format!("open pinned map {} (is xdp-log attached?)", p.display()))?;
    Ok(Map::from_map_data(data)?)
}

/// The counters, summed over the CPUs, in [`common::counter`] order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Stats(pub [u64; counter::COUNT as usize]);

impl Stats {
    /// The value of counter `idx` ([`common::counter`]).
    pub fn get(&self, idx: u32) -> u64 {
        self.0[idx as usize]
    }

    /// `name value` pairs in index order.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        counter::NAMES.iter().copied().zip(self.0.iter().copied())
    }

    /// As a JSON object `{"frames": .., ...}`.
    pub fn to_json(&self) -> String {
        let m: serde_json::Map<String, serde_json::Value> = self
            .named()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(v)))
            .collect();
        serde_json::Value::Object(m).to_string()
    }
}

/// Read the counters of the program pinned under `pin_dir`.
pub fn read_stats(pin_dir: &Path) -> Result<Stats> {
    let map = open_map(pin_dir, map_name::STATS)?;
    let arr: PerCpuArray<_, u64> = PerCpuArray::try_from(map)?;
    let mut s = Stats::default();
    for i in 0..counter::COUNT {
        s.0[i as usize] = arr.get(&i, 0)?.iter().sum();
    }
    Ok(s)
}

/// Read the configuration words (cluster id, port, flags, node count).
pub fn read_config(pin_dir: &Path) -> Result<[u32; config::COUNT as usize]> {
    let arr: Array<_, u32> = Array::try_from(open_map(pin_dir, map_name::CONFIG)?)?;
    let mut c = [0u32; config::COUNT as usize];
    for i in 0..config::COUNT {
        c[i as usize] = arr.get(&i, 0)?;
    }
    Ok(c)
}

/// Read the source allow-list (empty: none configured, any source is heard).
pub fn read_sources(pin_dir: &Path) -> Result<Vec<Ipv4Addr>> {
    let flags = read_config(pin_dir)?[config::FLAGS as usize];
    if flags & config::FLAG_CHECK_SOURCE == 0 {
        return Ok(Vec::new());
    }
    let map: HashMap<_, u32, u8> = HashMap::try_from(open_map(pin_dir, map_name::SOURCES)?)?;
    let mut v = Vec::new();
    for k in map.keys() {
        v.push(Ipv4Addr::from(k?.to_ne_bytes()));
    }
    v.sort();
    Ok(v)
}

/// The IPv4 source address the kernel picks, in the calling thread's network namespace, for a
/// UDP datagram to `dest` from a socket bound to the wildcard address: what the engine's host
/// path socket (bound to `0.0.0.0:0`, sending to the node's `host_addr`) puts in its host
/// copies. Call it from a thread inside the NIC's namespace (nothing is sent: a UDP `connect`
/// only looks up the route).
pub fn source_toward(dest: Ipv4Addr, port: u16) -> Result<Ipv4Addr> {
    let s = std::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).context("bind a UDP socket")?;
    s.connect((dest, port))
        .with_context(|| format!("no route to {dest}"))?;
    match s.local_addr()? {
        std::net::SocketAddr::V4(a) => Ok(*a.ip()),
        a => bail!("unexpected local address {a}"),
    }
}

/// Check that a pinned log has the layout this build expects.
pub(crate) fn check_log_layout(map: &MapData) -> Result<()> {
    let info = map.info()?;
    if info.value_size() as usize != SLOT_LEN || info.max_entries() != LOG_CAPACITY {
        bail!(
            "pinned log has value size {} x {} entries; this build expects {} x {}",
            info.value_size(),
            info.max_entries(),
            SLOT_LEN,
            LOG_CAPACITY
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> AttachOptions {
        AttachOptions {
            iface: "nonexistent0".into(),
            mode: Mode::Skb,
            pin_dir: std::env::temp_dir().join("ncxdp-loader-test-never-created"),
            cluster_id: 1,
            port: 7402,
            consume: false,
            allow_sources: vec![],
            nodes: 0,
        }
    }

    #[test]
    fn refuses_a_node_count_or_allow_list_the_kernel_side_cannot_take() {
        let o = AttachOptions {
            nodes: 65,
            ..opts()
        };
        let e = attach(&o).err().expect("65 nodes refused");
        assert!(e.to_string().contains("at most 64 nodes"), "{e}");
        let o = AttachOptions {
            allow_sources: (0..=MAX_SOURCES).map(|k| Ipv4Addr::from(k + 1)).collect(),
            ..opts()
        };
        let e = attach(&o).err().expect("too many sources refused");
        assert!(e.to_string().contains("at most 64"), "{e}");
        assert!(!o.pin_dir.exists(), "refused before anything is created");
    }

    #[test]
    fn source_keys_round_trip_as_the_packet_bytes() {
        let a = Ipv4Addr::new(10, 82, 1, 1);
        let key = source_key(a.octets());
        // The kernel reads the four header bytes in memory order: the same key.
        assert_eq!(key.to_ne_bytes(), [10, 82, 1, 1]);
        assert_eq!(Ipv4Addr::from(key.to_ne_bytes()), a);
    }
}
