//! ZooKeeper-NC: a real standalone ZooKeeper per node (Debian's `zookeeper`, started by our
//! tooling), driven by the decision log through the ZooKeeper client protocol
//! (`zookeeper-client`): create, setData and delete (with versions) are decided through
//! Nano-consensus and applied in instance order, exactly once per (client id, seq); reads go to
//! the local server (zkCli works against it). Only the apply loop writes the local server: it
//! authenticates with a per-process digest secret and guards every znode with [`guarded_acls`],
//! so a write straight at a replica's ZooKeeper fails with NoAuth instead of making it diverge.

use std::io;
use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use proto::apply::Applier;
use proto::log::Logged;
use proto::wire::{self, Decide};
use zookeeper_client as zkc;

/// One write operation, as decided (the entry payload).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkOp {
    /// create PATH DATA (persistent; writable by the apply loop only, readable by anyone:
    /// [`guarded_acls`]).
    Create {
        /// Node path.
        path: String,
        /// Data.
        data: Vec<u8>,
    },
    /// setData PATH DATA [VERSION].
    Set {
        /// Node path.
        path: String,
        /// Data.
        data: Vec<u8>,
        /// Expected version (`None`: any).
        version: Option<i32>,
    },
    /// delete PATH [VERSION].
    Delete {
        /// Node path.
        path: String,
        /// Expected version (`None`: any).
        version: Option<i32>,
    },
}

/// Largest path accepted.
pub const MAX_PATH: usize = 4096;

impl ZkOp {
    /// The payload: tag u8 (1 create, 2 set, 3 delete), version i32 BE (-1: any), path length
    /// u16 BE, path (UTF-8), then the data (the rest).
    pub fn encode(&self) -> Vec<u8> {
        let (tag, path, data, version): (u8, &str, &[u8], Option<i32>) = match self {
            ZkOp::Create { path, data } => (1, path, data, None),
            ZkOp::Set {
                path,
                data,
                version,
            } => (2, path, data, *version),
            ZkOp::Delete { path, version } => (3, path, &[], *version),
        };
        let mut v = vec![tag];
        v.extend_from_slice(&version.unwrap_or(-1).to_be_bytes());
        v.extend_from_slice(&(path.len() as u16).to_be_bytes());
        v.extend_from_slice(path.as_bytes());
        v.extend_from_slice(data);
        v
    }

    /// Parse a payload (every length checked; the path must be an absolute ZooKeeper path).
    pub fn decode(b: &[u8]) -> Result<ZkOp, String> {
        if b.len() < 7 {
            return Err(format!(
                "{} bytes: shorter than the 7-byte op header",
                b.len()
            ));
        }
        let version = i32::from_be_bytes(b[1..5].try_into().expect("4 bytes"));
        let version = match version {
            -1 => None,
            v if v >= 0 => Some(v),
            v => return Err(format!("version {v}: legal are -1 (any) and 0.. ")),
        };
        let plen = u16::from_be_bytes([b[5], b[6]]) as usize;
        if plen == 0 || plen > MAX_PATH || b.len() < 7 + plen {
            return Err(format!("path length {plen} does not fit"));
        }
        let path = std::str::from_utf8(&b[7..7 + plen])
            .map_err(|_| "path is not UTF-8".to_string())?
            .to_string();
        if !path.starts_with('/') || (path.len() > 1 && path.ends_with('/')) || path.contains("//")
        {
            return Err(format!("'{path}' is not an absolute ZooKeeper path"));
        }
        let data = b[7 + plen..].to_vec();
        match b[0] {
            1 if version.is_none() => Ok(ZkOp::Create { path, data }),
            2 => Ok(ZkOp::Set {
                path,
                data,
                version,
            }),
            3 if data.is_empty() => Ok(ZkOp::Delete { path, version }),
            t => Err(format!(
                "tag {t} with version {version:?} and {} data bytes",
                data.len()
            )),
        }
    }
}

/// A standalone ZooKeeper we started (killed on drop).
pub struct ZkServer {
    child: std::sync::Mutex<Child>,
    /// Where clients connect.
    pub addr: SocketAddrV4,
    dir: PathBuf,
    fsync: bool,
}

/// Start ZooKeeper in `dir` (absolute) with an empty data folder.
fn spawn_zk(dir: &Path, addr: SocketAddrV4, fsync: bool) -> io::Result<Child> {
    match std::fs::remove_dir_all(dir.join("data")) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::fs::create_dir_all(dir.join("data"))?;
    let cfg = dir.join("zoo.cfg");
    std::fs::write(
        &cfg,
        format!(
            "tickTime=2000\ndataDir={}\nclientPort={}\nclientPortAddress={}\nadmin.enableServer=false\nmaxClientCnxns=0\n4lw.commands.whitelist=ruok\nforceSync={}\n",
            dir.join("data").display(),
            addr.port(),
            addr.ip(),
            if fsync { "yes" } else { "no" }
        ),
    )?;
    use std::os::unix::process::CommandExt;
    // Its own process group: stopping reaches the launcher and the JVM. setpriv sets the
    // parent-death signal, which survives zkServer.sh's `exec java`: the JVM dies with zk-nc
    // even when zk-nc is SIGKILLed.
    Command::new("setpriv")
        .process_group(0)
        .args(["--pdeathsig", "KILL", "--", ZK_SERVER])
        .arg("start-foreground")
        .arg(&cfg)
        .env("ZOO_LOG_DIR", dir)
        .envs(zk_logging())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("zk.log"))?)
        .spawn()
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{ZK_SERVER}: {e} (tools/setup.sh installs Debian's zookeeper)"),
            )
        })
}

/// Debian's ZooKeeper has no SLF4J binding on its class path, so a server that fails to start
/// (a port in use, a bad folder) exits 1 without a word. When `slf4j-simple` is there (Debian's
/// libslf4j-java, a dependency of zookeeper), put it on the class path (the launcher's later `-cp`
/// wins) and let warnings and errors through to stderr, which [`spawn_zk`] keeps in `zk.log`.
fn zk_logging() -> Vec<(&'static str, String)> {
    const SIMPLE: &str = "/usr/share/java/slf4j-simple.jar";
    if !Path::new(SIMPLE).exists() {
        return Vec::new();
    }
    vec![(
        "SERVER_JVMFLAGS",
        format!(
            "-cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar:{SIMPLE} \
             -Dorg.slf4j.simpleLogger.defaultLogLevel=warn"
        ),
    )]
}

/// Debian's launcher.
pub const ZK_SERVER: &str = "/usr/share/zookeeper/bin/zkServer.sh";

impl ZkServer {
    /// Start a standalone ZooKeeper listening on `addr`, its data and log under `dir`; wait until
    /// it serves (ZooKeeper takes a few seconds to start).
    pub fn start(dir: &Path, addr: SocketAddrV4) -> io::Result<ZkServer> {
        Self::start_with(dir, addr, true)
    }

    /// [`ZkServer::start`], choosing whether ZooKeeper fsyncs its transaction log per write
    /// (`forceSync`). In ZooKeeper-NC the replicated decision log, not the local server, is what
    /// survives a crash (a restarted node rejoins by state transfer).
    ///
    /// It starts empty: a data folder left by an earlier run is removed (the replicated log is
    /// the state; the apply loop replays it from instance 1).
    pub fn start_with(dir: &Path, addr: SocketAddrV4, fsync: bool) -> io::Result<ZkServer> {
        std::fs::create_dir_all(dir)?;
        let dir = dir.canonicalize()?;
        let child = spawn_zk(&dir, addr, fsync)?;
        let s = ZkServer {
            child: std::sync::Mutex::new(child),
            addr,
            dir,
            fsync,
        };
        s.wait_ready()?;
        Ok(s)
    }

    fn wait_ready(&self) -> io::Result<()> {
        let t0 = Instant::now();
        loop {
            if ruok(self.addr) {
                return Ok(());
            }
            if let Some(st) = self.child.lock().expect("child lock").try_wait()? {
                return Err(io::Error::other(format!(
                    "ZooKeeper exited ({st}): {}",
                    std::fs::read_to_string(self.dir.join("zk.log")).unwrap_or_default()
                )));
            }
            if t0.elapsed() > Duration::from_secs(60) {
                return Err(io::Error::other(
                    "ZooKeeper did not answer 'ruok' within 60 s",
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stop it and start it again empty (before installing a snapshot). Call it from a thread
    /// that lives as long as the process (the JVM dies with the thread that started it).
    pub fn restart_empty(&self) -> io::Result<()> {
        {
            let mut c = self.child.lock().unwrap_or_else(|p| p.into_inner());
            let pgid = nix::unistd::Pid::from_raw(c.id() as i32);
            let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
            let _ = c.wait();
            *c = spawn_zk(&self.dir, self.addr, self.fsync)?;
        }
        self.wait_ready()
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stop it (the launcher and the JVM: the whole process group).
    pub fn stop(&self) {
        let mut c = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let pgid = nix::unistd::Pid::from_raw(c.id() as i32);
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
        let _ = c.wait();
    }
}

impl Drop for ZkServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// ZooKeeper's four-letter health check.
fn ruok(addr: SocketAddrV4) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr.into(), Duration::from_millis(500))
    else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let mut b = [0u8; 4];
    s.write_all(b"ruok").is_ok() && s.read_exact(&mut b).is_ok() && &b == b"imok"
}

/// The outcome of one applied operation, as ZooKeeper reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkOutcome {
    /// Done: what ZooKeeper answered.
    Done(ZkDone),
    /// ZooKeeper refused it (node exists, no node, bad version, not empty, ...): the same on
    /// every replica, since they all apply the same operations in the same order.
    Refused(String),
    /// A retransmission already applied: not executed again.
    Duplicate,
    /// A read barrier (an empty request): nothing executed.
    Barrier,
}

/// A ZooKeeper-NC replica's state after one instance (a tree copy).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZkSnapshot {
    /// The last instance applied.
    pub instance: u64,
    /// The exactly-once record ([`Applier::encode`]).
    pub dedupe: Vec<u8>,
    /// Every znode but `/zookeeper`: (path, data, data version), parents first.
    pub nodes: Vec<(String, Vec<u8>, i32)>,
}

/// What a successful operation returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZkDone {
    /// `create`: the path created.
    Created(String),
    /// `setData`: the node's new data version.
    Set {
        /// `Stat.version` after the write.
        version: i32,
    },
    /// `delete`.
    Deleted,
}

/// The digest user of the apply loop's ZooKeeper session (the write guard).
pub const APPLY_USER: &str = "zk-nc";

/// The apply loop's digest credential (`zk-nc:SECRET`), the secret drawn from the kernel's
/// random source once per process: never on a command line, in a file or in the environment.
/// The node's ZooKeeper starts empty with each process (and on each snapshot install, within
/// the same process), so nothing outlives the secret.
fn apply_credential() -> io::Result<&'static [u8]> {
    static CRED: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    if let Some(c) = CRED.get() {
        return Ok(c);
    }
    use std::io::Read;
    let mut raw = [0u8; 24];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut raw)?;
    let secret: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    Ok(CRED.get_or_init(|| format!("{APPLY_USER}:{secret}").into_bytes()))
}

/// The ACL of every znode the apply loop creates, and of `/`: all permissions for the apply
/// loop's digest identity (`auth:` is the creating session's authenticated ids), READ for
/// anyone. A client other than the apply loop (zkCli.sh straight at a replica) can read but
/// its create, setData, delete and setAcl fail with NoAuth: nothing but the decided log
/// writes a replica's tree.
pub fn guarded_acls() -> &'static [zkc::Acl] {
    static ACLS: std::sync::OnceLock<Vec<zkc::Acl>> = std::sync::OnceLock::new();
    ACLS.get_or_init(|| {
        vec![
            zkc::Acl::new(zkc::Permission::ALL, zkc::AuthId::authed()),
            zkc::Acl::new(zkc::Permission::READ, zkc::AuthId::anyone()),
        ]
    })
}

/// The apply side of ZooKeeper-NC on one node.
pub struct ZkApplier {
    client: zkc::Client,
    dedupe: Applier,
    /// The last instance applied.
    pub applied: u64,
}

impl ZkApplier {
    /// Connect to the local server, authenticated as the apply loop ([`APPLY_USER`] with this
    /// process's secret), and guard it: `/` (and `/zookeeper`, `/zookeeper/quota`) get
    /// [`guarded_acls`], so only this session writes the tree; everyone reads.
    pub async fn connect(addr: SocketAddrV4, applied: u64) -> io::Result<ZkApplier> {
        let client = zkc::Client::connector()
            .with_auth("digest", apply_credential()?)
            .connect(&addr.to_string())
            .await
            .map_err(|e| io::Error::other(format!("ZooKeeper at {addr}: {e}")))?;
        for p in ["/", "/zookeeper", "/zookeeper/quota"] {
            match client.set_acl(p, guarded_acls(), None).await {
                Ok(_) => {}
                // ZooKeeper's own nodes differ between versions: guard those that exist.
                Err(zkc::Error::NoNode) if p != "/" => {}
                Err(e) => {
                    return Err(io::Error::other(format!(
                        "ZooKeeper at {addr}: guarding {p} (setAcl): {e}"
                    )));
                }
            }
        }
        Ok(ZkApplier {
            client,
            dedupe: Applier::new(),
            applied,
        })
    }

    /// A snapshot of this moment (between two applied instances): every znode's path, data
    /// and data version, read through this applier's session, with the exactly-once record.
    pub async fn snapshot(&self) -> io::Result<ZkSnapshot> {
        let zk = |e: zkc::Error| io::Error::other(format!("ZooKeeper: {e}"));
        let mut nodes = Vec::new();
        let mut level = vec!["/".to_string()];
        while !level.is_empty() {
            // One level at a time, every request of a level sent before any answer is awaited.
            let lists: Vec<_> = level.iter().map(|p| self.client.list_children(p)).collect();
            let mut next = Vec::new();
            for (p, l) in level.iter().zip(lists) {
                for c in l.await.map_err(zk)? {
                    let child = if p == "/" {
                        format!("/{c}")
                    } else {
                        format!("{p}/{c}")
                    };
                    if child != "/zookeeper" {
                        next.push(child);
                    }
                }
            }
            let gets: Vec<_> = next.iter().map(|p| self.client.get_data(p)).collect();
            for (p, g) in next.iter().zip(gets) {
                let (data, st) = g.await.map_err(zk)?;
                nodes.push((p.clone(), data, st.version));
            }
            level = next;
        }
        Ok(ZkSnapshot {
            instance: self.applied,
            dedupe: self.dedupe.encode(),
            nodes,
        })
    }

    /// Install `snap` into the empty ZooKeeper at `addr` and go on after its instance. Data
    /// versions are restored by writing the data again (a versioned setData must behave as on
    /// the members); other Stat fields (zxids, times, cversion) are not carried.
    pub async fn install(addr: SocketAddrV4, snap: &ZkSnapshot) -> io::Result<ZkApplier> {
        let dedupe = Applier::decode(&snap.dedupe)
            .map_err(|e| io::Error::other(format!("snapshot: {e}")))?;
        let mut a = ZkApplier::connect(addr, snap.instance).await?;
        a.dedupe = dedupe;
        let zk = |e: zkc::Error| io::Error::other(format!("ZooKeeper: {e}"));
        let opts = zkc::CreateMode::Persistent.with_acls(zkc::Acls::new(guarded_acls()));
        // Parents come before their children in the snapshot (it is read level by level).
        let creates: Vec<_> = snap
            .nodes
            .iter()
            .map(|(p, d, _)| a.client.create(p, d, &opts))
            .collect();
        for c in creates {
            c.await.map_err(zk)?;
        }
        for (p, d, v) in &snap.nodes {
            let sets: Vec<_> = (0..*v).map(|_| a.client.set_data(p, d, None)).collect();
            for s in sets {
                s.await.map_err(zk)?;
            }
        }
        Ok(a)
    }

    /// Read one znode (data and data version) through this applier's session: the state after
    /// [`ZkApplier::applied`].
    pub async fn get(&self, path: &str) -> Result<(Vec<u8>, i32), ZkOutcome> {
        match self.client.get_data(path).await {
            Ok((d, st)) => Ok((d, st.version)),
            Err(e) => Err(ZkOutcome::Refused(e.to_string())),
        }
    }

    /// Apply decided instance `instance` (must be the next one).
    pub async fn apply(
        &mut self,
        instance: u64,
        d: &Decide<'_>,
    ) -> io::Result<Vec<(u32, u64, ZkOutcome)>> {
        let l = Logged {
            kind: d.meta.kind,
            count: d.count,
            entries: d.entries_raw.to_vec(),
        };
        self.apply_many(&[(instance, &l)]).await
    }

    /// Apply consecutive decided instances in one pipelined batch (the first must be the next
    /// instance; each following one the next after it).
    pub async fn apply_many(
        &mut self,
        batch: &[(u64, &Logged)],
    ) -> io::Result<Vec<(u32, u64, ZkOutcome)>> {
        for (k, (instance, _)) in batch.iter().enumerate() {
            if *instance != self.applied + 1 + k as u64 {
                return Err(io::Error::other(format!(
                    "instance {instance} is not the next one ({}): a gap must be filled first",
                    self.applied + 1 + k as u64
                )));
            }
        }
        // Pipelined: every operation of the batch is sent before any reply is awaited. One
        // session executes its requests in order (ZooKeeper's FIFO client order), so the result
        // is the one of sequential execution, without one fsync wait per operation.
        type Pending<'c> = std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<ZkDone, zkc::Error>> + Send + 'c>,
        >;
        enum Step<'c> {
            Done(ZkOutcome),
            Wait(Pending<'c>),
        }
        let mut plan: Vec<(u32, u64, Result<ZkOp, ZkOutcome>)> = Vec::new();
        for e in batch
            .iter()
            .flat_map(|(_, l)| wire::Entries::of(&l.entries, l.count))
        {
            if e.is_config() {
                continue;
            }
            let op = if !self.dedupe.admit(e.client_id, e.seq) {
                Err(ZkOutcome::Duplicate)
            } else if e.payload.is_empty() {
                Err(ZkOutcome::Barrier) // a read barrier: nothing to execute
            } else {
                ZkOp::decode(e.payload).map_err(|why| {
                    ZkOutcome::Refused(format!("not a ZooKeeper-NC operation: {why}"))
                })
            };
            plan.push((e.client_id, e.seq, op));
        }
        let client = &self.client;
        let opts = zkc::CreateMode::Persistent.with_acls(zkc::Acls::new(guarded_acls()));
        let steps: Vec<(u32, u64, Step<'_>)> = plan
            .iter()
            .map(|(c, q, op)| {
                let step = match op {
                    Err(o) => Step::Done(o.clone()),
                    Ok(ZkOp::Create { path, data }) => {
                        let f = client.create(path, data, &opts);
                        let p = path.clone();
                        Step::Wait(Box::pin(async move { f.await.map(|_| ZkDone::Created(p)) }))
                    }
                    Ok(ZkOp::Set {
                        path,
                        data,
                        version,
                    }) => {
                        let f = client.set_data(path, data, *version);
                        Step::Wait(Box::pin(async move {
                            f.await.map(|st| ZkDone::Set {
                                version: st.version,
                            })
                        }))
                    }
                    Ok(ZkOp::Delete { path, version }) => {
                        let f = client.delete(path, *version);
                        Step::Wait(Box::pin(async move { f.await.map(|()| ZkDone::Deleted) }))
                    }
                };
                (*c, *q, step)
            })
            .collect();
        let mut out = Vec::new();
        for (c, q, step) in steps {
            let outcome = match step {
                Step::Done(o) => o,
                Step::Wait(f) => match f.await {
                    Ok(done) => ZkOutcome::Done(done),
                    // Refusals that follow from the tree and the operation alone: every
                    // replica gives the same one.
                    Err(
                        e @ (zkc::Error::NoNode
                        | zkc::Error::NodeExists
                        | zkc::Error::BadVersion
                        | zkc::Error::NotEmpty
                        | zkc::Error::NoChildrenForEphemerals
                        | zkc::Error::BadArguments(_)
                        | zkc::Error::InvalidAcl),
                    ) => ZkOutcome::Refused(e.to_string()),
                    // Anything else (connection trouble, a server fault) is not an outcome of
                    // the operation and could differ between replicas: stop this replica.
                    Err(e) => return Err(io::Error::other(format!("ZooKeeper: {e}"))),
                },
            };
            out.push((c, q, outcome));
        }
        self.applied += batch.len() as u64;
        Ok(out)
    }
}
