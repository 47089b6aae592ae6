//! A real `redis-server` per node, started by our tooling on a private Unix socket, and the apply
//! side of Redis-NC: decided entries (RESP commands) executed on it in instance order, exactly
//! once per (client id, seq).

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use proto::apply::Applier;
use proto::wire::Decide;

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
    /// Start `redis-server` with its socket, log and working directory in `dir`.
    pub fn start(dir: &Path) -> io::Result<RedisServer> {
        std::fs::create_dir_all(dir)?;
        let socket = dir.join("redis.sock");
        let log = dir.join("redis.log");
        let child = Command::new("redis-server")
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
            // DEBUG DIGEST compares replicas. The server listens only on its private 0700 socket,
            // and Redis-NC's front lets DEBUG DIGEST through, nothing else of DEBUG.
            .args(["--enable-debug-command", "yes"])
            .args(["--daemonize", "no", "--dir"])
            .arg(dir)
            .arg("--logfile")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "redis-server: {e} (install Debian's redis-server: tools/setup.sh does)"
                    ),
                )
            })?;
        let s = RedisServer {
            child: std::sync::Mutex::new(child),
            socket,
            dir: dir.to_path_buf(),
        };
        let t0 = Instant::now();
        loop {
            if let Ok(mut c) = s.connect()
                && c.call(&Value::command(&[b"PING"]))? == Value::Simple("PONG".into())
            {
                return Ok(s);
            }
            if let Some(st) = s.child.lock().expect("child lock").try_wait()? {
                return Err(io::Error::other(format!(
                    "redis-server exited ({st}): {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )));
            }
            if t0.elapsed() > Duration::from_secs(10) {
                return Err(io::Error::other("redis-server did not answer within 10 s"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A new connection.
    pub fn connect(&self) -> io::Result<Conn> {
        Ok(Conn {
            stream: UnixStream::connect(&self.socket)?,
            buf: Vec::new(),
        })
    }

    /// Its working directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
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

/// One connection to a redis-server.
pub struct Conn {
    stream: UnixStream,
    buf: Vec<u8>,
}

impl Conn {
    /// Send one command, read its reply.
    pub fn call(&mut self, cmd: &Value) -> io::Result<Value> {
        self.stream.write_all(&cmd.to_bytes())?;
        self.read_reply()
    }

    fn read_reply(&mut self) -> io::Result<Value> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match resp::parse(&self.buf) {
                Ok(Some((v, used))) => {
                    self.buf.drain(..used);
                    return Ok(v);
                }
                Ok(None) => {}
                Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
            }
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "redis-server closed the connection",
                ));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
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
    pub reply: Option<Value>,
}

/// The apply side of Redis-NC on one node.
pub struct RedisApplier {
    conn: Conn,
    dedupe: Applier,
    /// The last instance applied.
    pub applied: u64,
}

impl RedisApplier {
    /// Apply decisions to the server behind `conn`, starting after `applied` (0: from the start,
    /// or a snapshot's instance).
    pub fn new(conn: Conn, applied: u64) -> RedisApplier {
        RedisApplier {
            conn,
            dedupe: Applier::new(),
            applied,
        }
    }

    /// Apply the entries of decided instance `instance`, which must be the next one. Entries
    /// whose (client id, seq) were applied before are skipped; a payload that is not a command
    /// is answered with an error reply, identically on every replica.
    pub fn apply(&mut self, instance: u64, d: &Decide<'_>) -> io::Result<Vec<Applied>> {
        if instance != self.applied + 1 {
            return Err(io::Error::other(format!(
                "instance {instance} is not the next one ({}): a gap must be filled by state transfer",
                self.applied + 1
            )));
        }
        let mut out = Vec::new();
        for e in d.entries() {
            if e.is_config() {
                continue; // engine configuration, not application state
            }
            if !self.dedupe.admit(e.client_id, e.seq) {
                out.push(Applied {
                    client_id: e.client_id,
                    seq: e.seq,
                    reply: None,
                });
                continue;
            }
            let reply = match resp::parse(e.payload) {
                Ok(Some((cmd, used))) if used == e.payload.len() && cmd.as_command().is_some() => {
                    self.conn.call(&cmd)?
                }
                _ => Value::Error("ERR the decided entry is not a RESP command".into()),
            };
            out.push(Applied {
                client_id: e.client_id,
                seq: e.seq,
                reply: Some(reply),
            });
        }
        self.applied = instance;
        Ok(out)
    }
}
