//! Register access: one trait ([`RegisterBus`]) with two backends — a memory-mapped PCIe BAR
//! ([`MmioBus`]: a UIO device or a sysfs `resource` file) and the software engine's control
//! socket ([`EngineBus`]) — and the named, checked layer on top ([`Registers`]) that every
//! `soc-ctl` command uses. Names, addresses, widths and legal ranges come from proto's map.

use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use proto::regs::{self, Access, Register};
use serde_json::Value;

/// A failed register access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegAccessError {
    /// Refused by the register map or the device (names the field and the legal range).
    Refused(String),
    /// The backend is unreachable (socket, file).
    Io(String),
}

impl fmt::Display for RegAccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegAccessError::Refused(m) => write!(f, "refused: {m}"),
            RegAccessError::Io(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for RegAccessError {}

/// 32-bit register words at byte addresses: what both backends provide.
pub trait RegisterBus {
    /// Read the word at `addr`.
    fn read32(&mut self, addr: u16) -> Result<u32, RegAccessError>;
    /// Write the word at `addr`.
    fn write32(&mut self, addr: u16, value: u32) -> Result<(), RegAccessError>;
    /// Which backend this is, for messages.
    fn describe(&self) -> String;
    /// What the datapath behind this bus can do (the configuration check uses it).
    fn datapath(&self) -> regs::Datapath {
        regs::Datapath::SOFTWARE
    }
}

// ----- the software engine's control socket ------------------------------------

/// The software engine's register file, through its Unix control socket.
pub struct EngineBus {
    path: PathBuf,
    w: UnixStream,
    r: BufReader<UnixStream>,
}

/// One line (`v` and a newline) in one write. The control protocol (and zk-nc's writer front)
/// exchange JSON lines over sockets: `writeln!` straight onto a socket writes a JSON value token
/// by token, one system call (on TCP with no delay, one segment) each.
pub fn write_line(w: &mut impl Write, v: &impl fmt::Display) -> std::io::Result<()> {
    let mut line = v.to_string();
    line.push('\n');
    w.write_all(line.as_bytes())
}

impl EngineBus {
    /// Connect to an engine's control socket.
    pub fn connect(path: &Path) -> Result<EngineBus, RegAccessError> {
        let s = UnixStream::connect(path).map_err(|e| {
            RegAccessError::Io(format!(
                "cannot reach the engine at {}: {e} (is nc-engine running with --ctl {}?)",
                path.display(),
                path.display()
            ))
        })?;
        let r = BufReader::new(
            s.try_clone()
                .map_err(|e| RegAccessError::Io(e.to_string()))?,
        );
        Ok(EngineBus {
            path: path.to_path_buf(),
            w: s,
            r,
        })
    }

    /// Send one control request, get its JSON answer.
    pub fn request(&mut self, line: &str) -> Result<Value, RegAccessError> {
        let io = |e: std::io::Error| RegAccessError::Io(format!("{}: {e}", self.path.display()));
        write_line(&mut self.w, &line).map_err(io)?;
        let mut answer = String::new();
        self.r.read_line(&mut answer).map_err(io)?;
        if answer.is_empty() {
            return Err(RegAccessError::Io(format!(
                "{}: the engine closed the connection",
                self.path.display()
            )));
        }
        let v: Value = serde_json::from_str(&answer)
            .map_err(|e| RegAccessError::Io(format!("bad answer from the engine: {e}")))?;
        match (v.get("ok"), v.get("err")) {
            (Some(ok), _) => Ok(ok.clone()),
            (_, Some(e)) => Err(RegAccessError::Refused(
                e.as_str().unwrap_or("error").to_string(),
            )),
            _ => Err(RegAccessError::Io(format!(
                "bad answer from the engine: {answer}"
            ))),
        }
    }
}

/// What the engine's log answered to [`EngineBus::decisions`].
#[derive(Debug)]
pub struct Decisions {
    /// The decided instances of the range it returned (a prefix of the range asked).
    pub log: crate::log::DecisionLog,
    /// The oldest instance the engine's log holds now (`None`: empty).
    pub first: Option<u64>,
    /// The newest.
    pub last: Option<u64>,
}

impl EngineBus {
    /// The decided instances over `from..=to` from the engine's log (a prefix of the range:
    /// at most 10 000 instances or 4 MiB; ask again from the last one + 1).
    pub fn decisions(&mut self, from: u64, to: u64) -> Result<Decisions, RegAccessError> {
        let v = self.request(&format!("decisions {from} {to}"))?;
        let bad =
            |m: &str| RegAccessError::Io(format!("bad decisions answer from the engine: {m}"));
        let hex = v["hex"].as_str().ok_or_else(|| bad("no hex"))?;
        let bytes = crate::log::from_hex(hex).map_err(|e| bad(&e))?;
        let log = crate::log::DecisionLog::decode(&bytes).map_err(|e| bad(&e.to_string()))?;
        Ok(Decisions {
            log,
            first: v["first"].as_u64(),
            last: v["last"].as_u64(),
        })
    }
}

impl RegisterBus for EngineBus {
    fn read32(&mut self, addr: u16) -> Result<u32, RegAccessError> {
        let v = self.request(&format!("read {addr:#x}"))?;
        v.as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| RegAccessError::Io(format!("bad register value {v}")))
    }

    fn write32(&mut self, addr: u16, value: u32) -> Result<(), RegAccessError> {
        self.request(&format!("write {addr:#x} {value}")).map(drop)
    }

    fn describe(&self) -> String {
        format!("engine {}", self.path.display())
    }
}

// ----- a memory-mapped PCIe BAR -------------------------------------------------

/// A memory-mapped PCIe BAR: a UIO device (`/dev/uioN`) or a sysfs `resource` file
/// (`/sys/bus/pci/devices/…/resource0`), or for tests any file of that layout.
/// Accesses are aligned 32-bit volatile loads and stores, as the card's CSR bus expects.
pub struct MmioBus {
    path: PathBuf,
    map: memmap2::MmapRaw,
}

/// Bytes the register map spans (counters included).
pub fn map_span() -> usize {
    let last = regs::REGISTERS
        .iter()
        .map(|r| r.addr as usize + r.width as usize / 8)
        .chain(regs::Counter::ALL.iter().map(|c| c.addr() as usize + 8))
        .max()
        .unwrap_or(0);
    last.next_multiple_of(4096)
}

impl MmioBus {
    /// Map `path` read-write.
    pub fn open(path: &Path) -> Result<MmioBus, RegAccessError> {
        let io = |e: std::io::Error| RegAccessError::Io(format!("{}: {e}", path.display()));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        let len = f.metadata().map_err(io)?.len() as usize;
        // Device files report 0 (UIO) or the BAR size (sysfs); regular files their length.
        let span = map_span();
        if len != 0 && len < span {
            return Err(RegAccessError::Io(format!(
                "{}: {len} bytes, the register map needs {span}",
                path.display()
            )));
        }
        let map = memmap2::MmapOptions::new()
            .len(span)
            .map_raw(&f)
            .map_err(io)?;
        Ok(MmioBus {
            path: path.to_path_buf(),
            map,
        })
    }

    fn check(&self, addr: u16) -> Result<usize, RegAccessError> {
        let a = addr as usize;
        if !a.is_multiple_of(4) || a + 4 > self.map.len() {
            return Err(RegAccessError::Refused(format!(
                "address {addr:#05x} is not an aligned word of the BAR"
            )));
        }
        Ok(a)
    }
}

impl RegisterBus for MmioBus {
    #[allow(unsafe_code)]
    fn read32(&mut self, addr: u16) -> Result<u32, RegAccessError> {
        let a = self.check(addr)?;
        // SAFETY: `a` is 4-aligned and a + 4 <= the mapping's length (checked above); the
        // mapping lives as long as `self`. A BAR needs volatile access (each load is a bus read).
        let v = unsafe { std::ptr::read_volatile(self.map.as_ptr().add(a) as *const u32) };
        Ok(u32::from_le(v))
    }

    #[allow(unsafe_code)]
    fn write32(&mut self, addr: u16, value: u32) -> Result<(), RegAccessError> {
        let a = self.check(addr)?;
        // SAFETY: as in read32; the mapping is writable (opened read-write, map_raw).
        unsafe {
            std::ptr::write_volatile(self.map.as_mut_ptr().add(a) as *mut u32, value.to_le())
        };
        Ok(())
    }

    fn describe(&self) -> String {
        format!("BAR {}", self.path.display())
    }

    /// A card: the RTL receiver's capacity, no packet tags.
    fn datapath(&self) -> regs::Datapath {
        regs::Datapath::CARD
    }
}

/// Fill a file with the register map's reset values (a freshly reset card): a stand-in for a
/// card's BAR in tests.
pub fn write_reset_image(path: &Path) -> std::io::Result<()> {
    let mut img = vec![0u8; map_span()];
    for r in regs::REGISTERS {
        let a = r.addr as usize;
        img[a..a + 4].copy_from_slice(&(r.reset as u32).to_le_bytes());
        if r.width == 64 {
            img[a + 4..a + 8].copy_from_slice(&((r.reset >> 32) as u32).to_le_bytes());
        }
    }
    std::fs::write(path, img)
}

// ----- the named, checked layer --------------------------------------------------

/// Registers by name over any backend. Writes are checked against proto's map first (name,
/// access, legal range), so an illegal value is refused with the field and its range and never
/// reaches the device; the device (or engine) applies the cross-field rules on top.
pub struct Registers<B: RegisterBus> {
    /// The backend.
    pub bus: B,
}

/// Find a register (or counter) by name, with a helpful error.
pub fn lookup(name: &str) -> Result<Register, RegAccessError> {
    regs::by_name(name).ok_or_else(|| {
        let names: Vec<&str> = regs::REGISTERS.iter().map(|r| r.name).collect();
        RegAccessError::Refused(format!(
            "no register named '{name}' (registers: {}; counters: see `soc-ctl regs dump`)",
            names.join(", ")
        ))
    })
}

impl<B: RegisterBus> Registers<B> {
    /// Wrap a backend.
    pub fn new(bus: B) -> Self {
        Registers { bus }
    }

    /// Read a register (64-bit ones as low word then high word).
    pub fn read(&mut self, reg: &Register) -> Result<u64, RegAccessError> {
        let lo = self.bus.read32(reg.addr)? as u64;
        if reg.width == 64 {
            let hi = self.bus.read32(reg.addr + 4)? as u64;
            Ok(hi << 32 | lo)
        } else {
            Ok(lo)
        }
    }

    /// Read by name.
    pub fn get(&mut self, name: &str) -> Result<u64, RegAccessError> {
        let r = lookup(name)?;
        self.read(&r)
    }

    /// Write by name: refused unless writable and within the legal range, and, for a
    /// configuration register, unless the configuration it makes passes the cross-field rules
    /// of the datapath behind the bus (`Config::validate_for`: the timeout bound of §5.2,
    /// node_id < node_count, and on a card its own limits, such as the MTU a fixed batch of 4
    /// needs). The model (the software engine) checks its rules itself; a card's CSR block
    /// checks each register's own range only and leaves them to the control software
    /// (rtl/README), so without this a TIMEOUT written by hand while a card joins could break
    /// the timeout bound.
    pub fn set(&mut self, name: &str, value: u64) -> Result<(), RegAccessError> {
        let r = lookup(name)?;
        if r.access == Access::ReadOnly {
            return Err(RegAccessError::Refused(format!("{} is read-only", r.name)));
        }
        regs::check_range(&r, value).map_err(|e| RegAccessError::Refused(e.to_string()))?;
        if r.access == Access::Config {
            self.check_config_write(r.addr, value)?;
        }
        self.bus.write32(r.addr, value as u32)
    }

    /// Whether writing `value` to the configuration register at `addr` leaves the device's
    /// configuration (read first) legal under `Config::validate_for` the bus's datapath;
    /// `Refused` names the field and the legal range. Nothing is written.
    pub fn check_config_write(&mut self, addr: u16, value: u64) -> Result<(), RegAccessError> {
        let mut c = self.config()?;
        c.set(addr, value)
            .map_err(|e| RegAccessError::Refused(e.to_string()))?;
        c.validate_for(self.bus.datapath())
            .map_err(|e| RegAccessError::Refused(e.to_string()))
    }

    /// The device's configuration, read register by register.
    pub fn config(&mut self) -> Result<proto::regs::Config, RegAccessError> {
        let mut c = proto::regs::Config::default();
        for reg in regs::REGISTERS
            .iter()
            .filter(|g| g.access == Access::Config)
        {
            let v = self.read(reg)?;
            c.set(reg.addr, v).map_err(|e| {
                RegAccessError::Refused(format!("the device holds an illegal {}: {e}", reg.name))
            })?;
        }
        Ok(c)
    }

    /// Every register and counter with its value, in map order.
    pub fn dump(&mut self) -> Result<Vec<(Register, u64)>, RegAccessError> {
        let mut out = Vec::new();
        for r in regs::REGISTERS {
            out.push((*r, self.read(r)?));
        }
        for c in regs::Counter::ALL {
            let r = regs::counter_register(*c);
            out.push((r, self.read(&r)?));
        }
        Ok(out)
    }
}

/// Configure a node from its setup: disable it, write every config register that differs (in
/// an order the cross-field rules accept), and enable it (armed). Refusals name the register.
pub fn configure<B: RegisterBus>(
    r: &mut Registers<B>,
    config: &proto::regs::Config,
) -> Result<(), String> {
    let dp = r.bus.datapath();
    let cap = dp.in_flight;
    config.validate_for(dp).map_err(|e| {
        format!(
            "{}: {} is illegal on {} (it tracks {cap} messages in flight): {} (legal here: {}..={})",
            e.field,
            e.value,
            r.bus.describe(),
            e.rule,
            e.min,
            e.max
        )
    })?;
    r.set("ctrl", 0).map_err(|e| e.to_string())?;
    let mut todo: Vec<(&'static str, u64)> = regs::REGISTERS
        .iter()
        .filter(|reg| reg.access == Access::Config)
        .map(|reg| (reg.name, config.get(reg.addr).expect("a config register")))
        .collect();
    let mut last_err = None;
    let mut parked: Vec<&'static str> = Vec::new();
    while !todo.is_empty() {
        let before = todo.len();
        let mut left = Vec::new();
        for (name, v) in todo {
            if r.get(name).map_err(|e| e.to_string())? == v {
                continue;
            }
            if let Err(e) = r.set(name, v) {
                last_err = Some(e);
                left.push((name, v));
            }
        }
        todo = left;
        // No write went through: a cycle such as two tree groups (or ports) swapped, where
        // each write alone makes two registers equal. Park one of them at a value no register
        // holds now or is to hold (the node is disabled, so it is never used) and go on; each
        // register is parked at most once, so this ends.
        if todo.len() == before && park_one(r, &todo, &mut parked)? {
            continue;
        }
        if todo.len() == before {
            return Err(format!(
                "{} (while writing {})",
                last_err.map(|e| e.to_string()).unwrap_or_default(),
                todo.iter()
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    r.set("ctrl", regs::ctrl::ENABLE as u64)
        .map_err(|e| e.to_string())
}

/// For [`configure`]: write one of the `todo` registers not parked yet to a value that no
/// configuration register holds now or in `todo`, and that the cross-field rules take. Whether
/// one was parked.
fn park_one<B: RegisterBus>(
    r: &mut Registers<B>,
    todo: &[(&'static str, u64)],
    parked: &mut Vec<&'static str>,
) -> Result<bool, String> {
    let mut taken: Vec<u64> = todo.iter().map(|(_, v)| *v).collect();
    for reg in regs::REGISTERS
        .iter()
        .filter(|g| g.access == Access::Config)
    {
        taken.push(r.read(reg).map_err(|e| e.to_string())?);
    }
    for &(name, _) in todo {
        if parked.contains(&name) {
            continue;
        }
        let reg = lookup(name).map_err(|e| e.to_string())?;
        let free = (reg.min..=reg.max).take(64).find(|x| !taken.contains(x));
        if let Some(x) = free
            && r.set(name, x).is_ok()
        {
            parked.push(name);
            return Ok(true);
        }
    }
    Ok(false)
}

/// Join a running cluster through `member` (§5.2): the engine is set to ENABLE|JOIN, follows the
/// live stream, fetches the member's state and goes active. The engine's answer (snapshot
/// instance, entries, bytes, attempts, time).
pub fn join_engine(r: &mut Registers<EngineBus>, member: u64) -> Result<Value, String> {
    r.set("ctrl", (regs::ctrl::ENABLE | regs::ctrl::JOIN) as u64)
        .map_err(|e| e.to_string())?;
    r.bus
        .request(&format!("join {member}"))
        .map_err(|e| e.to_string())
}

/// Bring a node back after its safe exit by register writes alone: the CSR sequence of
/// proto/README ("Recovery on a card"), over either backend.
///
/// 1. `STATUS.NET_FAULT` = 1 (else there is nothing to do; a node left joining by an earlier
///    attempt resumes at step 3);
/// 2. `CTRL` ← 0;
/// 3. `CTRL` ← `ENABLE|JOIN`, then wait for `STATUS.SYNCED` (a leader's stream on every tree);
/// 4. the host application fetches its snapshot now (`host_step` is told so);
/// 5. `TIMEOUT` ← the members' timeout (`timeout`, or the node's own value);
/// 6. `CTRL` ← `ENABLE|JOIN|ACTIVATE` until `STATUS.ACTIVE` (the node accepts it once it holds
///    its place in the stream, one message after SYNCED).
///
/// Every step is reported through `say`. A node that does not enter JOINING (a card whose
/// bitstream has no join) or never synchronises gets an error that says which step and why;
/// nothing is retried behind the caller's back.
pub fn rejoin_by_csr<B: RegisterBus>(
    r: &mut Registers<B>,
    timeout: Option<u64>,
    sync_wait: std::time::Duration,
    mut say: impl FnMut(&str),
) -> Result<(), String> {
    use regs::{ctrl, status};
    let e = |e: RegAccessError| e.to_string();
    let st = r.get("status").map_err(e)? as u32;
    let t = match timeout {
        Some(t) => t,
        None => r.get("timeout").map_err(e)?,
    };
    // Step 5's TIMEOUT against the node's configuration before step 1 writes anything: a card
    // takes any value in range (its CSR block leaves the cross-field rules to soc-ctl).
    r.check_config_write(regs::addr::TIMEOUT, t)
        .map_err(|x| match x {
            RegAccessError::Refused(m) => format!("--timeout: {m}"),
            other => other.to_string(),
        })?;
    if st & status::NET_FAULT != 0 {
        say("1. STATUS.NET_FAULT = 1: the node made the safe exit");
        r.set("ctrl", 0).map_err(e)?;
        say("2. CTRL <- 0: disabled (counters kept)");
        r.set("ctrl", (ctrl::ENABLE | ctrl::JOIN) as u64)
            .map_err(|x| format!("3. CTRL <- ENABLE|JOIN refused: {x}"))?;
    } else if st & status::JOINING != 0 && st & status::ACTIVE == 0 {
        say("joining already (an earlier rejoin waited in vain): resuming at step 3");
    } else {
        return Err(format!(
            "STATUS.NET_FAULT = 0 (status {st:#x}): the node made no safe exit, nothing to recover"
        ));
    }
    let st = r.get("status").map_err(e)? as u32;
    if st & status::JOINING == 0 {
        return Err(format!(
            "3. CTRL <- ENABLE|JOIN did not take (status {st:#x}, JOINING = 0): this node has no \
             join (a card's bitstream from before issue 17's join, 2026-11-27: rtl/README); \
             restart it with the cluster instead (soc-ctl init, then the host application's join)"
        ));
    }
    say("3. CTRL <- ENABLE|JOIN: joining, waiting for a leader's stream on every tree (SYNCED)");
    let t0 = std::time::Instant::now();
    loop {
        let st = r.get("status").map_err(e)? as u32;
        if st & status::SYNCED != 0 {
            break;
        }
        if t0.elapsed() > sync_wait {
            return Err(format!(
                "3. no STATUS.SYNCED within {sync_wait:?}: no leader is streaming to this node \
                 (every tree down for it, or no leader left); it stays joining: run rejoin again \
                 when a leader runs"
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    say(
        "4. SYNCED: the host application takes its snapshot now and applies from the first \
         host-path frame after the join",
    );
    r.set("timeout", t).map_err(e)?;
    say(&format!("5. TIMEOUT <- {t}"));
    // ACTIVATE is accepted once the node holds its place in the stream (the first message after
    // SYNCED, one loop period): until then a refusal is retried, up to `sync_wait`.
    let t0 = std::time::Instant::now();
    loop {
        let last = match r.set("ctrl", (ctrl::ENABLE | ctrl::JOIN | ctrl::ACTIVATE) as u64) {
            Ok(()) => {
                let st = r.get("status").map_err(e)? as u32;
                if st & status::ACTIVE != 0 {
                    say("6. CTRL <- ENABLE|JOIN|ACTIVATE: active again, in step with the members");
                    return Ok(());
                }
                format!("status {st:#x} after ACTIVATE")
            }
            Err(x) => x.to_string(),
        };
        if t0.elapsed() > sync_wait {
            return Err(format!(
                "6. not ACTIVE within {sync_wait:?} of ACTIVATE attempts ({last})"
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
