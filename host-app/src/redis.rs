//! A real `redis-server` per node, started by our tooling on a private Unix socket, and the apply
//! side of Redis-NC: decided entries (RESP commands) executed on it in instance order, exactly
//! once per (client id, seq).

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use proto::apply::Applier;
use proto::log::Logged;
use proto::wire::{self, Decide, Entry};

use crate::resp::{self, Value};

/// A redis-server we started (killed on drop). Persistence is off: the replicated log is the
/// durable state, and a restarted node rejoins by state transfer.
pub struct RedisServer {
    child: std::sync::Mutex<Child>,
    /// Its Unix socket.
    pub socket: PathBuf,
    dir: PathBuf,
}

impl RedisServer {
    /// Start `redis-server` with its socket, log and working directory in `dir` (created;
    /// relative paths are fine), with an empty dataset.
    pub fn start(dir: &Path) -> io::Result<RedisServer> {
        Self::start_with(dir, None)
    }

    /// Start it with the dataset of `rdb` (an RDB file's bytes), or empty.
    pub fn start_with(dir: &Path, rdb: Option<&[u8]>) -> io::Result<RedisServer> {
        std::fs::create_dir_all(dir)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
        // redis-server changes into --dir before it opens its socket and log: absolute paths.
        let dir = dir.canonicalize()?;
        let child = spawn(&dir, rdb)?;
        let s = RedisServer {
            child: std::sync::Mutex::new(child),
            socket: dir.join("redis.sock"),
            dir,
        };
        s.wait_ready()?;
        Ok(s)
    }

    fn wait_ready(&self) -> io::Result<()> {
        let t0 = Instant::now();
        loop {
            if let Ok(mut c) = self.connect()
                && let Ok(Value::Simple(p)) = c.call(&Value::command(&[b"PING"]))
                && p == "PONG"
            {
                return Ok(());
            }
            if let Some(st) = self.child.lock().expect("child lock").try_wait()? {
                return Err(io::Error::other(format!(
                    "redis-server exited ({st}): {}",
                    self.reason()
                )));
            }
            if t0.elapsed() > Duration::from_secs(30) {
                return Err(io::Error::other(format!(
                    "redis-server did not answer within 30 s: {}",
                    self.reason()
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// redis-server's own words: its stderr and the end of its log.
    fn reason(&self) -> String {
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
        let (err, log) = (read("redis.stderr"), read("redis.log"));
        let tail: Vec<&str> = log.lines().rev().take(5).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!("{}{}", err.trim(), tail.join(" | "))
            .trim()
            .to_string()
    }

    /// Replace the dataset: stop the server and start it again on `rdb` (a state transfer).
    /// Connections made before are closed; make new ones.
    pub fn restart_with(&self, rdb: &[u8]) -> io::Result<()> {
        {
            let mut c = self.child.lock().unwrap_or_else(|p| p.into_inner());
            let _ = c.kill();
            let _ = c.wait();
            *c = spawn(&self.dir, Some(rdb))?;
        }
        self.wait_ready()
    }

    /// A new connection.
    pub fn connect(&self) -> io::Result<Conn> {
        Ok(Conn::new(Box::new(UnixStream::connect(&self.socket)?)))
    }

    /// Its working directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The RDB file BGSAVE writes.
    pub fn rdb_path(&self) -> PathBuf {
        self.dir.join(RDB_FILE)
    }
}

/// The file name of redis-server's RDB in its folder.
const RDB_FILE: &str = "dump.rdb";

/// Start a redis-server in `dir` (absolute) on `rdb`, or empty: a stale RDB from an earlier run
/// is removed, never loaded (it belongs to no known instance).
fn spawn(dir: &Path, rdb: Option<&[u8]>) -> io::Result<Child> {
    let socket = dir.join("redis.sock");
    let rdb_path = dir.join(RDB_FILE);
    match rdb {
        Some(b) => std::fs::write(&rdb_path, b)?,
        None => match std::fs::remove_file(&rdb_path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        },
    }
    let _ = std::fs::remove_file(&socket);
    let stderr = std::fs::File::create(dir.join("redis.stderr"))?;
    // The server dies with the thread that started it (redis-nc's main or apply thread, both
    // live as long as the process), even when redis-nc is SIGKILLed: util-linux's setpriv sets
    // the parent-death signal and execs redis-server.
    let mut cmd = Command::new("setpriv");
    cmd.args(["--pdeathsig", "KILL", "--", "redis-server"])
        .args(["--port", "0", "--unixsocket"])
        .arg(&socket)
        .args([
            "--unixsocketperm",
            "700",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args(["--dbfilename", RDB_FILE])
        // DEBUG DIGEST compares replicas. The server listens only on its private 0700 socket,
        // and Redis-NC's front lets DEBUG DIGEST through, nothing else of DEBUG.
        .args(["--enable-debug-command", "yes"])
        .args(["--daemonize", "no", "--dir"])
        .arg(dir)
        .arg("--logfile")
        .arg(dir.join("redis.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    cmd.spawn().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "setpriv redis-server: {e} (install Debian's redis-server and util-linux: \
                 tools/setup.sh does)"
            ),
        )
    })
}

impl RedisServer {
    /// Kill the server and wait for it.
    pub fn stop(&self) {
        let mut c = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let _ = c.kill();
        let _ = c.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A byte stream a RESP connection runs over (a Unix socket to our redis-server, TCP to a peer).
pub trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// One RESP connection (to a redis-server, or to a peer's front).
pub struct Conn {
    stream: Box<dyn Stream>,
    buf: Vec<u8>,
    /// Where the next reply starts in `buf` (the replies of a pipeline are parsed in place,
    /// not shifted to the front one by one).
    at: usize,
}

impl Conn {
    /// A connection over `stream`.
    pub fn new(stream: Box<dyn Stream>) -> Conn {
        Conn {
            stream,
            buf: Vec::new(),
            at: 0,
        }
    }

    /// Send one command, read its reply.
    pub fn call(&mut self, cmd: &Value) -> io::Result<Value> {
        self.stream.write_all(&cmd.to_bytes())?;
        self.read_reply()
    }

    /// Send every command (each `cmds[i]` one command in wire form) in one write, then read
    /// every reply (one round trip for all).
    pub fn pipeline(&mut self, cmds: &[&[u8]]) -> io::Result<Vec<Value>> {
        let mut out = Vec::with_capacity(cmds.iter().map(|c| c.len()).sum());
        for c in cmds {
            out.extend_from_slice(c);
        }
        self.stream.write_all(&out)?;
        cmds.iter().map(|_| self.read_reply()).collect()
    }

    fn read_reply(&mut self) -> io::Result<Value> {
        loop {
            match resp::parse(&self.buf[self.at..]) {
                Ok(Some((v, used))) => {
                    self.at += used;
                    if self.at == self.buf.len() {
                        self.buf.clear();
                        self.at = 0;
                    }
                    return Ok(v);
                }
                Ok(None) => {}
                Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
            }
            self.fill()?;
        }
    }

    /// Read what redis-server sent into `buf`. Its own function: the 16 KiB read buffer is
    /// zeroed only when there is something to read, not for every reply of a pipeline that
    /// arrived in one read (the apply loop reads ~70 replies per write).
    #[inline(never)]
    fn fill(&mut self) -> io::Result<()> {
        if self.at > 0 {
            self.buf.drain(..self.at);
            self.at = 0;
        }
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "redis-server closed the connection",
            ));
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
}

/// What applying one entry did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The client.
    pub client_id: u32,
    /// Its sequence number.
    pub seq: u64,
    /// redis-server's reply (`None`: a retransmission already applied, not executed again).
    /// For a [batch](batch_payload) of commands: an array of their replies, in order.
    pub reply: Option<Value>,
    /// The entry ran as a batch of commands ([`batch_payload`]): `reply` is their array.
    pub batch: bool,
}

/// One entry's payload carrying several commands (each `cmds[i]` one encoded RESP command): a
/// RESP array of the commands. A front proposes the writes that wait together as one entry
/// (README "Writes proposed together"); the apply side runs them in order, each its own command,
/// and the entry's reply is the array of their replies. One command alone is proposed as it is,
/// never as a batch of one.
pub fn batch_payload<'a>(cmds: impl ExactSizeIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    crate::resp::header(&mut out, b'*', cmds.len() as i64);
    for c in cmds {
        out.extend_from_slice(c);
    }
    out
}

/// Bytes [`batch_payload`] adds to the commands it carries.
pub fn batch_overhead(n: usize) -> usize {
    // '*', the digits, CRLF.
    n.checked_ilog10().unwrap_or(0) as usize + 1 + 3
}

/// Where the replies of a pipeline go: for each entry that ran, its index in the outcomes and
/// the number of commands of its batch (`None`: one command).
type RunAt = Vec<(usize, Option<usize>)>;

/// The apply side of Redis-NC on one node.
pub struct RedisApplier {
    conn: Conn,
    dedupe: Applier,
    /// The last instance applied.
    pub applied: u64,
}

impl RedisApplier {
    /// Apply decisions to the server behind `conn`, starting after `applied` (0: from the start).
    pub fn new(conn: Conn, applied: u64) -> RedisApplier {
        RedisApplier {
            conn,
            dedupe: Applier::new(),
            applied,
        }
    }

    /// Go on from a snapshot: the server behind `conn` holds the state after `instance`, and
    /// `dedupe` is the exactly-once record of that moment.
    pub fn from_snapshot(conn: Conn, instance: u64, dedupe: Applier) -> RedisApplier {
        RedisApplier {
            conn,
            dedupe,
            applied: instance,
        }
    }

    /// Apply the entries of decided instance `instance`, which must be the next one.
    pub fn apply(&mut self, instance: u64, d: &Decide<'_>) -> io::Result<Vec<Applied>> {
        self.apply_entries(instance, d.entries())
    }

    /// [`RedisApplier::apply`] for a decision as the engine's log holds it.
    pub fn apply_logged(&mut self, instance: u64, l: &Logged) -> io::Result<Vec<Applied>> {
        self.apply_entries(instance, wire::Entries::of(&l.entries, l.count))
    }

    /// Apply consecutive decided instances (the first must be the next one) with all their
    /// commands in one pipelined write: under load, small instances cost one redis round trip
    /// together instead of one each.
    pub fn apply_many(&mut self, batch: &[(u64, Arc<Logged>)]) -> io::Result<Vec<Applied>> {
        let mut out = Vec::new();
        let mut cmds = Vec::new();
        let mut run_at = Vec::new();
        let mut next = self.applied + 1;
        for (instance, l) in batch {
            if *instance != next {
                return Err(io::Error::other(format!(
                    "instance {instance} is not the next one ({next}): a gap must be filled first"
                )));
            }
            self.collect(
                wire::Entries::of(&l.entries, l.count),
                &mut out,
                &mut cmds,
                &mut run_at,
            );
            next += 1;
        }
        self.run(&mut out, &cmds, run_at)?;
        self.applied = next - 1;
        Ok(out)
    }

    /// Entries whose (client id, seq) were applied before are skipped; an empty payload is a
    /// read barrier (nothing to execute); a payload that is not a command is answered with an
    /// error reply, identically on every replica. The commands of one instance go to
    /// redis-server in one pipelined write.
    fn apply_entries<'a>(
        &mut self,
        instance: u64,
        entries: impl Iterator<Item = Entry<'a>>,
    ) -> io::Result<Vec<Applied>> {
        if instance != self.applied + 1 {
            return Err(io::Error::other(format!(
                "instance {instance} is not the next one ({}): a gap must be filled first",
                self.applied + 1
            )));
        }
        let mut out = Vec::new();
        let mut cmds = Vec::new();
        let mut run_at = Vec::new(); // index in `out` of each entry's reply
        self.collect(entries, &mut out, &mut cmds, &mut run_at);
        self.run(&mut out, &cmds, run_at)?;
        self.applied = instance;
        Ok(out)
    }

    /// The entries' outcomes into `out`; the commands to run into `cmds`, with the index in
    /// `out` of each one's reply into `run_at`.
    fn collect<'a>(
        &mut self,
        entries: impl Iterator<Item = Entry<'a>>,
        out: &mut Vec<Applied>,
        cmds: &mut Vec<&'a [u8]>,
        run_at: &mut RunAt,
    ) {
        for e in entries {
            if e.is_config() {
                continue; // engine configuration, not application state
            }
            let mut a = Applied {
                client_id: e.client_id,
                seq: e.seq,
                reply: None,
                batch: false,
            };
            if self.dedupe.admit(e.client_id, e.seq) {
                if e.payload.is_empty() {
                    a.reply = Some(Value::Simple("OK".into())); // a read barrier
                } else {
                    match resp::commands(e.payload) {
                        Some(resp::Commands::One) => {
                            run_at.push((out.len(), None));
                            cmds.push(e.payload);
                        }
                        Some(resp::Commands::Batch(at)) => {
                            a.batch = true;
                            run_at.push((out.len(), Some(at.len())));
                            cmds.extend(at.into_iter().map(|r| &e.payload[r]));
                        }
                        None => {
                            a.reply = Some(Value::Error(
                                "ERR the decided entry is not a RESP command".into(),
                            ))
                        }
                    }
                }
            }
            out.push(a);
        }
    }

    /// Run `cmds` in one pipelined write and put each reply where `run_at` says.
    fn run(&mut self, out: &mut [Applied], cmds: &[&[u8]], run_at: RunAt) -> io::Result<()> {
        if !cmds.is_empty() {
            let mut replies = self.conn.pipeline(cmds)?.into_iter();
            for (at, n) in run_at {
                out[at].reply = match n {
                    None => replies.next(),
                    Some(n) => Some(Value::Array(Some(replies.by_ref().take(n).collect()))),
                };
            }
        }
        Ok(())
    }

    /// Start a snapshot of this moment: redis-server forks (BGSAVE) with the state after
    /// [`RedisApplier::applied`], and the exactly-once record is copied. The RDB is complete
    /// when `INFO persistence` says so ([`bgsave_done`]). Refused while another BGSAVE runs.
    pub fn bgsave(&mut self) -> io::Result<(u64, Vec<u8>)> {
        match self.conn.call(&Value::command(&[b"BGSAVE"]))? {
            Value::Simple(_) => Ok((self.applied, self.dedupe.encode())),
            other => Err(io::Error::other(format!("BGSAVE: {other:?}"))),
        }
    }
}

/// Whether the last BGSAVE finished: `Ok(true)` done, `Ok(false)` still running, an error if
/// it failed.
pub fn bgsave_done(conn: &mut Conn) -> io::Result<bool> {
    let info = match conn.call(&Value::command(&[b"INFO", b"persistence"]))? {
        Value::Bulk(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
        other => return Err(io::Error::other(format!("INFO persistence: {other:?}"))),
    };
    let field = |k: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(k).map(|v| v.trim().to_string()))
            .unwrap_or_default()
    };
    if field("rdb_bgsave_in_progress:") == "1" {
        return Ok(false);
    }
    match field("rdb_last_bgsave_status:").as_str() {
        "ok" => Ok(true),
        s => Err(io::Error::other(format!(
            "BGSAVE failed ({s}): see redis.log"
        ))),
    }
}
