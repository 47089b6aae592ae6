//! Redis-NC's node process: the apply loop (decisions → the local redis-server, exactly once)
//! and the RESP front that stock clients talk to. Writes become Nano-consensus requests to the
//! leader and are answered with the local replica's reply once it has applied the decided
//! instance; reads go to the local replica after it has applied every write this front has
//! acknowledged (linearizable for the clients of one front; read-your-writes across fronts).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proto::wire::{self, Packet};
use soc_ctl::client::Client;

use crate::redis::{Conn, RedisApplier, RedisServer};
use crate::resp::{self, Value};

/// Where decisions come from.
pub enum Source {
    /// The XDP decision log pinned under bpffs (xdp-log attached to the host interface).
    Xdp(Box<xdp_log::DecisionLog>),
    /// A plain UDP socket bound to the host address and port (without root or XDP).
    Udp(UdpSocket),
}

/// Shared apply progress.
#[derive(Default)]
pub struct Progress {
    state: Mutex<ProgressState>,
    cv: Condvar,
}

#[derive(Default)]
struct ProgressState {
    applied: u64,
    replies: HashMap<(u32, u64), Value>,
    failed: Option<String>,
}

impl Progress {
    /// Wait until `instance` is applied; the reply of (client, seq) if it was executed there.
    fn wait(
        &self,
        instance: u64,
        key: Option<(u32, u64)>,
        limit: Duration,
    ) -> Result<Option<Value>, String> {
        let st = self.state.lock().expect("progress lock");
        let (mut st, t) = self
            .cv
            .wait_timeout_while(st, limit, |s| s.applied < instance && s.failed.is_none())
            .expect("progress lock");
        if let Some(f) = &st.failed {
            return Err(f.clone());
        }
        if t.timed_out() {
            return Err(format!("instance {instance} not applied within {limit:?}"));
        }
        Ok(key.and_then(|k| st.replies.remove(&k)))
    }

    /// The last applied instance.
    pub fn applied(&self) -> u64 {
        self.state.lock().expect("progress lock").applied
    }
}

/// Run the apply loop until an error; replies of entries are kept for the fronts.
pub fn apply_loop(
    mut source: Source,
    mut applier: RedisApplier,
    cluster: u32,
    node: u8,
    progress: Arc<Progress>,
) {
    let mut buf = vec![0u8; 65536];
    let fail = |msg: String| {
        eprintln!("redis-nc: apply stopped: {msg}");
        progress.state.lock().expect("progress lock").failed = Some(msg);
        progress.cv.notify_all();
    };
    loop {
        let packet = match &mut source {
            // Poll the mapped log every 20 µs: a decision waits at most that long to be applied
            // (next_blocking backs off to 1 ms when idle, which would add to every write).
            Source::Xdp(log) => loop {
                match log.try_next() {
                    Ok(Some(d)) => break d.packet,
                    Ok(None) => std::thread::sleep(Duration::from_micros(20)),
                    Err(e) => {
                        return fail(format!(
                            "decision log: {e} (resynchronise by state transfer)"
                        ));
                    }
                }
            },
            Source::Udp(s) => match s.recv(&mut buf) {
                Ok(n) => buf[..n].to_vec(),
                Err(e) => return fail(format!("host socket: {e}")),
            },
        };
        let Ok((_, Packet::Decide(d))) = wire::parse(&packet, cluster) else {
            continue;
        };
        if !d.meta.kind.is_value() || d.meta.instance <= applier.applied {
            continue; // heartbeats; a duplicate host copy
        }
        match applier.apply(d.meta.instance, &d) {
            Ok(done) => {
                let mut st = progress.state.lock().expect("progress lock");
                // Only this node's fronts wait for replies (their client ids carry the node id).
                for a in done {
                    if let Some(r) = a.reply
                        && a.client_id >> 24 == node as u32
                    {
                        st.replies.insert((a.client_id, a.seq), r);
                    }
                }
                st.applied = applier.applied;
                drop(st);
                progress.cv.notify_all();
            }
            Err(e) => return fail(e.to_string()),
        }
    }
}

/// Commands decided through consensus. EXPIRE is rewritten to an absolute PEXPIREAT so every
/// replica expires the key at the same instant.
const WRITES: &[&str] = &[
    "SET",
    "SETNX",
    "DEL",
    "INCR",
    "INCRBY",
    "DECR",
    "DECRBY",
    "APPEND",
    "HSET",
    "HDEL",
    "LPUSH",
    "RPUSH",
    "SADD",
    "SREM",
    "MSET",
    "EXPIRE",
    "PEXPIREAT",
];
/// Commands served by the local replica.
const READS: &[&str] = &[
    "GET",
    "MGET",
    "EXISTS",
    "STRLEN",
    "HGET",
    "HGETALL",
    "HLEN",
    "LRANGE",
    "LLEN",
    "SMEMBERS",
    "SCARD",
    "SISMEMBER",
    "TTL",
    "PTTL",
    "TYPE",
    "DBSIZE",
    "PING",
    "ECHO",
    "COMMAND",
    "INFO",
    "CONFIG",
    "CLIENT",
    "SELECT",
    "DEBUG",
];

/// The list of supported commands (for the README and errors).
pub fn supported() -> (Vec<&'static str>, Vec<&'static str>) {
    (WRITES.to_vec(), READS.to_vec())
}

/// A write command ready to propose (EXPIRE rewritten), or an error reply.
fn prepare_write(args: &[&[u8]]) -> Result<Vec<u8>, Value> {
    let name = String::from_utf8_lossy(args[0]).to_ascii_uppercase();
    if name == "SET" && args.len() > 3 {
        let opts: Vec<String> = args[3..]
            .iter()
            .map(|a| String::from_utf8_lossy(a).to_ascii_uppercase())
            .collect();
        if opts.iter().any(|o| o != "NX" && o != "XX") {
            return Err(Value::Error(
                "ERR Redis-NC: SET options other than NX/XX are not deterministic; use SET then PEXPIREAT".into(),
            ));
        }
    }
    if name == "EXPIRE" {
        if args.len() != 3 {
            return Err(Value::Error(
                "ERR wrong number of arguments for 'expire' command".into(),
            ));
        }
        let secs: i64 = std::str::from_utf8(args[2])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| Value::Error("ERR value is not an integer or out of range".into()))?;
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let at = (now_ms + secs.saturating_mul(1000)).to_string();
        return Ok(Value::command(&[b"PEXPIREAT", args[1], at.as_bytes()]).to_bytes());
    }
    Ok(Value::command(args).to_bytes())
}

static NEXT_CLIENT: AtomicU32 = AtomicU32::new(1);

/// Serve RESP clients on `listener` until the process ends.
pub fn serve(
    listener: TcpListener,
    server: Arc<RedisServer>,
    progress: Arc<Progress>,
    cluster: u32,
    node: u8,
    nodes: Vec<SocketAddrV4>,
) {
    let acked = Arc::new(Mutex::new(0u64));
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let (server, progress, nodes, acked) = (
            server.clone(),
            progress.clone(),
            nodes.clone(),
            acked.clone(),
        );
        std::thread::spawn(move || {
            let id = (node as u32) << 24 | NEXT_CLIENT.fetch_add(1, Ordering::Relaxed) & 0xFF_FFFF;
            if let Err(e) = session(stream, &server, &progress, cluster, id, nodes, &acked)
                && e.kind() != io::ErrorKind::UnexpectedEof
            {
                eprintln!("redis-nc: client {id:#x}: {e}");
            }
        });
    }
}

fn session(
    mut stream: TcpStream,
    server: &RedisServer,
    progress: &Progress,
    cluster: u32,
    client_id: u32,
    nodes: Vec<SocketAddrV4>,
    acked: &Mutex<u64>,
) -> io::Result<()> {
    let _ = stream.set_nodelay(true);
    let mut local: Conn = server.connect()?;
    let mut client = Client::new(cluster, client_id, nodes)?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let (cmd, used) = loop {
            match resp::parse(&buf) {
                Ok(Some(x)) => break x,
                Ok(None) => {}
                Err(e) => {
                    stream.write_all(&Value::Error(format!("ERR {e}")).to_bytes())?;
                    return Ok(());
                }
            }
            let n = stream.read(&mut chunk)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        buf.drain(..used);
        let reply = match cmd.as_command() {
            None => Value::Error("ERR Redis-NC expects commands as arrays of bulk strings".into()),
            Some(args) => {
                let name = String::from_utf8_lossy(args[0]).to_ascii_uppercase();
                if WRITES.contains(&name.as_str()) {
                    match prepare_write(&args) {
                        Err(e) => e,
                        Ok(payload) => write(&mut client, progress, acked, &payload),
                    }
                } else if name == "DEBUG"
                    && args.get(1).map(|a| a.to_ascii_uppercase()) != Some(b"DIGEST".to_vec())
                {
                    Value::Error("ERR Redis-NC allows only DEBUG DIGEST".into())
                } else if READS.contains(&name.as_str()) {
                    let upto = *acked.lock().expect("acked lock");
                    match progress.wait(upto, None, Duration::from_secs(10)) {
                        Ok(_) => local.call(&cmd)?,
                        Err(e) => Value::Error(format!("ERR Redis-NC replica unavailable: {e}")),
                    }
                } else {
                    Value::Error(format!(
                        "ERR unknown or unsupported command '{name}' in Redis-NC (see host-app/README.md)"
                    ))
                }
            }
        };
        stream.write_all(&reply.to_bytes())?;
    }
}

fn write(client: &mut Client, progress: &Progress, acked: &Mutex<u64>, payload: &[u8]) -> Value {
    let seq_key = |client: &Client, ok_seq: u64| (client.client_id, ok_seq);
    match client.request(0, payload, Duration::from_secs(10)) {
        Err(e) => Value::Error(format!("ERR Redis-NC: not decided: {e}")),
        Ok(ok) => {
            let seq = client.last_seq();
            match progress.wait(
                ok.instance,
                Some(seq_key(client, seq)),
                Duration::from_secs(10),
            ) {
                Ok(Some(r)) => {
                    let mut a = acked.lock().expect("acked lock");
                    *a = (*a).max(ok.instance);
                    r
                }
                // Decided, but applied before under an earlier instance (a retransmission):
                // its reply went to that request; the effect is there exactly once.
                Ok(None) => Value::Simple("OK".into()),
                Err(e) => Value::Error(format!("ERR Redis-NC: decided at {} but {e}", ok.instance)),
            }
        }
    }
}
