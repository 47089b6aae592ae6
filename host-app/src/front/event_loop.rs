//! The RESP front's event loop: one thread reads every client connection (epoll) and runs the
//! commands that make up a write-heavy load itself: plain `SET` and `MSET`, whose reply is
//! fixed ([`fixed_reply`]). It queues them with the node's [`Proposer`](crate::propose::Proposer)
//! and proposes the queue itself while a proposal is free, without waiting for it: its request
//! is one more source of the loop ([`Client::submit`]), so a lone write costs no hand-over to
//! another thread and a leader that does not answer stalls no connection (the loop goes on
//! reading, handing other commands to their threads, and answering what the lanes decide).
//! When its proposal is decided, what queued meanwhile goes in the same slot; lanes take queued
//! writes only when another proposal is free (`--proposals` > 1). Every other command
//! (reads, writes answered with their own result, `AUTH`, `INFO`, …) hands the connection to
//! its session thread (started on the first such command), which runs [`run_commands`] as a
//! thread per connection did before and gives the connection back once it has been idle for
//! [`LINGER`].
//!
//! Why: with a thread per connection, each write woke its connection's thread (a context
//! switch and a read per write); 50 connections of `SET`s cost the front more CPU in the
//! scheduler than in the commands. Here one wake-up reads every connection that has
//! something.
//!
//! Order within a connection is kept as before: a command runs only once the connection's
//! previous write is answered (the loop holds the connection until then and is rung by
//! [`ConnOut::answer`]), and only one of the loop and the session thread runs a connection's
//! commands at a time.

use std::collections::HashMap;
use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use nix::errno::Errno;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::eventfd::{EfdFlags, EventFd};
use nix::sys::socket::{MsgFlags, recv};
use soc_ctl::client::{Client, InFlight};

use super::{
    Answer, ConnOut, Flow, GIVE_UP, Node, OutBuf, Pending, fixed_reply, prepare_write, run_commands,
};
use crate::fd_limit::{Spare, out_of_descriptors, tell_and_close};
use crate::propose::{Decided, Proposer, proposal};
use crate::resp;

/// What a connection the front has no descriptor for is told before it is closed (Redis's own
/// words at `maxclients`).
const TOO_MANY: &[u8] = b"-ERR max number of clients reached\r\n";
/// How long the listener rests when even the spare descriptor cannot be had back.
const LISTENER_REST: std::time::Duration = std::time::Duration::from_millis(100);

const LISTENER: u64 = 0;
const BELL: u64 = 1;
const CLIENT: u64 = 2;

/// How the loop is told that a connection can go on: a write of it was answered while the
/// loop held further commands of it, or its session thread gives it back.
pub(super) struct Bell {
    fd: EventFd,
    ready: Mutex<Vec<u64>>,
    back: Mutex<Vec<Back>>,
}

impl Bell {
    /// Connection `token` can go on.
    pub(super) fn ring(&self, token: u64) {
        self.ready
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(token);
        let _ = self.fd.write(1);
    }

    fn give_back(&self, b: Back) {
        self.back.lock().unwrap_or_else(|p| p.into_inner()).push(b);
        let _ = self.fd.write(1);
    }
}

/// A connection handed to its session thread: what was received of commands not yet run.
struct Handover {
    buf: Vec<u8>,
    authed: bool,
}

/// A session thread gives its connection back.
enum Back {
    /// Idle: the loop runs it again, with what was received of a command not yet complete.
    Idle(u64, Vec<u8>, bool),
    /// Closed (by the client, QUIT, or an error).
    Closed(u64),
}

struct Connection {
    stream: TcpStream,
    conn: Arc<ConnOut>,
    /// Received, not yet run.
    buf: Vec<u8>,
    authed: bool,
    client_id: u32,
    session: Option<mpsc::Sender<Handover>>,
    /// Its session thread runs it (the loop does not read it meanwhile).
    away: bool,
}

/// What the loop does with a connection after running what it could.
enum Next {
    /// Wait for more bytes (or for its outstanding write to be answered).
    Stay,
    /// A command the loop does not run: to the session thread.
    Handover,
}

/// Tell a connection why its commands cannot run (out of descriptors: Redis's words at
/// `maxclients`), before it is closed.
fn cannot_serve(mut stream: &TcpStream, e: &io::Error) {
    let msg = if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
        TOO_MANY.to_vec()
    } else {
        format!("-ERR redis-nc cannot serve this connection: {e}\r\n").into_bytes()
    };
    let _ = io::Write::write(&mut stream, &msg);
}

/// Serve `listener` until an error of the loop itself (a connection's error closes only it).
pub(super) fn run(listener: TcpListener, node: Arc<Node>) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
    let bell = Arc::new(Bell {
        fd: EventFd::from_value_and_flags(0, EfdFlags::EFD_CLOEXEC | EfdFlags::EFD_NONBLOCK)?,
        ready: Mutex::new(Vec::new()),
        back: Mutex::new(Vec::new()),
    });
    epoll.add(&listener, EpollEvent::new(EpollFlags::EPOLLIN, LISTENER))?;
    epoll.add(&bell.fd, EpollEvent::new(EpollFlags::EPOLLIN, BELL))?;
    let mut conns: HashMap<u64, Connection> = HashMap::new();
    let mut next_token = CLIENT + 1;
    // The loop's own proposals: a client id of its own, one proposal at a time.
    let mut client = node.client(node.fresh_client_id())?;
    epoll.add(
        client.socket(),
        EpollEvent::new(EpollFlags::EPOLLIN, CLIENT),
    )?;
    let mut own: Option<Own> = None;
    // Out of descriptors (EMFILE), the listener stays readable and accept keeps failing: a
    // level-triggered loop would spin. One descriptor is kept spare: closed to accept the
    // connection, which is told why and closed, then opened again.
    let mut spare = Spare::new("redis-nc: accept");
    let mut resting: Option<Instant> = None;
    let mut events = vec![EpollEvent::empty(); 256];
    let mut chunk = vec![0u8; 64 * 1024];
    let mut touched: Vec<u64> = Vec::new();
    loop {
        spare.keep();
        if resting.is_some_and(|t| Instant::now() >= t) {
            resting = None;
            epoll.add(&listener, EpollEvent::new(EpollFlags::EPOLLIN, LISTENER))?;
        }
        // The earlier of the proposal's next step and the listener's rest.
        let deadline = own
            .as_ref()
            .map(|o| client.due(&o.f, GIVE_UP))
            .into_iter()
            .chain(resting)
            .min();
        let timeout = match deadline {
            None => EpollTimeout::NONE,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                // Rounded up to the next millisecond (epoll's unit).
                EpollTimeout::try_from(left + std::time::Duration::from_micros(999))
                    .unwrap_or(EpollTimeout::NONE)
            }
        };
        let n = match epoll.wait(&mut events, timeout) {
            Ok(n) => n,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        };
        touched.clear();
        let mut replied = false;
        for ev in &events[..n] {
            match ev.data() {
                CLIENT => replied = true,
                LISTENER => loop {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let token = next_token;
                            next_token += 1;
                            // A connection needs a second descriptor (the reply side).
                            let out = match stream.try_clone() {
                                Ok(o) => o,
                                Err(e) => {
                                    spare.refused(&e);
                                    tell_and_close(stream, TOO_MANY);
                                    continue;
                                }
                            };
                            let c = connection(&node, &bell, stream, out, token).and_then(|c| {
                                epoll
                                    .add(&c.stream, EpollEvent::new(EpollFlags::EPOLLIN, token))?;
                                Ok(c)
                            });
                            match c {
                                Ok(c) => {
                                    conns.insert(token, c);
                                }
                                // The connection closes (dropped).
                                Err(e) => tracing::warn!("redis-nc: a new connection: {e}"),
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) if out_of_descriptors(&e) => {
                            // At the limit accept fails even with no connection waiting:
                            // only one taken and told counts as refused.
                            let (took, held) = spare.accept_one(&listener);
                            let told = took.is_some();
                            if let Some(stream) = took {
                                spare.refused(&e);
                                tell_and_close(stream, TOO_MANY);
                            }
                            if !(told && held) {
                                // Not even the spare: rest the listener (no spinning on it).
                                epoll.delete(&listener)?;
                                resting = Some(Instant::now() + LISTENER_REST);
                                break;
                            }
                        }
                        // A connection reset before accept, …: the listener stays; try
                        // again at its next readiness.
                        Err(e) => {
                            spare.other_error(&e);
                            break;
                        }
                    }
                },
                BELL => {
                    let _ = bell.fd.read();
                    touched.extend(
                        bell.ready
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .drain(..),
                    );
                    let back: Vec<Back> = bell
                        .back
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .drain(..)
                        .collect();
                    for b in back {
                        match b {
                            Back::Idle(token, buf, authed) => {
                                if let Some(c) = conns.get_mut(&token) {
                                    c.away = false;
                                    c.buf = buf;
                                    c.authed = authed;
                                    let ev = EpollEvent::new(EpollFlags::EPOLLIN, token);
                                    if let Err(e) = epoll.add(&c.stream, ev) {
                                        tracing::warn!("redis-nc: client {:#x}: {e}", c.client_id);
                                        close(&epoll, &mut conns, token);
                                        continue;
                                    }
                                    touched.push(token);
                                }
                            }
                            Back::Closed(token) => {
                                if let Some(c) = conns.remove(&token) {
                                    let _ = c.stream.shutdown(Shutdown::Both);
                                }
                            }
                        }
                    }
                }
                token => {
                    let Some(c) = conns.get_mut(&token) else {
                        continue;
                    };
                    if c.away {
                        continue;
                    }
                    if read_available(c, &mut chunk) {
                        touched.push(token);
                    } else {
                        close(&epoll, &mut conns, token);
                    }
                }
            }
        }
        touched.sort_unstable();
        touched.dedup();
        for &token in &touched {
            let Some(c) = conns.get_mut(&token) else {
                continue;
            };
            if let Next::Handover = run_fast(&node, c)
                && let Err(e) = handover(&node, &bell, &epoll, c, token)
            {
                tracing::warn!("redis-nc: client {:#x}: {e}", c.client_id);
                cannot_serve(&c.stream, &e);
                close(&epoll, &mut conns, token);
            }
        }
        drive(&node, &mut client, &mut own, replied);
    }
}

/// The loop's own proposal in flight.
struct Own {
    f: InFlight,
    tags: Vec<Pending>,
    alone: bool,
}

/// Drive the loop's own proposal (its decision read if `replied`, resends when due), propose
/// what is queued once it is done, and hand the rest to the lanes.
fn drive(node: &Arc<Node>, client: &mut Client, own: &mut Option<Own>, replied: bool) {
    let proposer = node.proposer().clone();
    let done = |tags: Vec<Pending>, r: Result<Decided, String>| node.decided(tags, r);
    if replied
        && own.is_none()
        && let Err(e) = client.discard()
    {
        tracing::warn!("redis-nc: the front's own client: {e}");
    }
    if let Some(o) = own.as_mut() {
        let r = match if replied {
            client.poll(&mut o.f)
        } else {
            Ok(None)
        } {
            Ok(Some(ok)) => Some(Ok(ok)),
            Ok(None) => client.on_time(&mut o.f, GIVE_UP).err().map(Err),
            Err(e) => Some(Err(e)),
        };
        if let Some(r) = r
            && let Some(o) = own.take()
        {
            let seq = o.f.seq();
            done(
                o.tags,
                r.map(|ok| Decided::of(ok.instance, client.client_id, seq, o.alone))
                    .map_err(|e| e.to_string()),
            );
            // The slot goes on with what queued meanwhile (no lane races for it).
            if let Some(batch) = proposer.renew() {
                submit(client, own, batch, &proposer, &done);
            }
        }
    }
    while own.is_none()
        && let Some(batch) = proposer.claim_now()
    {
        submit(client, own, batch, &proposer, &done);
    }
    if proposer.queued() {
        match node.start_lanes() {
            Ok(()) => proposer.kick(),
            Err(e) => {
                tracing::warn!("redis-nc: cannot start proposing: {e}");
                proposer.fail_queued(&done, format!("cannot start proposing: {e}"));
            }
        }
    }
}

/// A new client connection, run by the loop.
fn connection(
    node: &Arc<Node>,
    bell: &Arc<Bell>,
    stream: TcpStream,
    out: TcpStream,
    token: u64,
) -> io::Result<Connection> {
    // Accepted sockets do not inherit the listener's O_NONBLOCK: the session thread blocks on
    // it, the loop reads it with MSG_DONTWAIT.
    stream.set_nonblocking(false)?;
    let _ = stream.set_nodelay(true);
    let conn = Arc::new(ConnOut {
        out: Mutex::new(OutBuf {
            stream: out,
            outstanding: false,
            backlog: Vec::new(),
            resume: false,
        }),
        thread: std::sync::OnceLock::new(),
        bell: Some((bell.clone(), token)),
    });
    Ok(Connection {
        stream,
        conn,
        buf: Vec::new(),
        authed: false,
        client_id: node.fresh_client_id(),
        session: None,
        away: false,
    })
}

/// Read what the connection holds without waiting. False: the client closed it (or it broke).
fn read_available(c: &mut Connection, chunk: &mut [u8]) -> bool {
    let fd = c.stream.as_raw_fd();
    loop {
        match recv(fd, chunk, MsgFlags::MSG_DONTWAIT) {
            Ok(0) => return false,
            Ok(n) => {
                c.buf.extend_from_slice(&chunk[..n]);
                if n < chunk.len() {
                    return true;
                }
            }
            Err(Errno::EAGAIN) => return true,
            Err(Errno::EINTR) => {}
            Err(_) => return false,
        }
    }
}

fn close(epoll: &Epoll, conns: &mut HashMap<u64, Connection>, token: u64) {
    if let Some(c) = conns.remove(&token) {
        let _ = epoll.delete(&c.stream);
        // Its session thread (idle) ends when its channel closes with `c`.
        let _ = c.stream.shutdown(Shutdown::Both);
    }
}

/// Run the connection's plain writes; stop at anything else, at an incomplete command, or
/// while a write of it is not answered yet.
fn run_fast(node: &Arc<Node>, c: &mut Connection) -> Next {
    let proposer = node.proposer();
    loop {
        if c.away {
            return Next::Stay;
        }
        {
            let mut o = c.conn.lock();
            if o.outstanding {
                // Rung when it is answered.
                o.resume = !c.buf.is_empty();
                return Next::Stay;
            }
            if !o.backlog.is_empty() {
                // A reply the client has not taken yet: the session thread waits for it.
                return Next::Handover;
            }
        }
        if c.buf.is_empty() {
            return Next::Stay;
        }
        if node.password.is_some() && !c.authed {
            return Next::Handover;
        }
        let (cmd, used) = match resp::parse(&c.buf) {
            Ok(Some(x)) => x,
            Ok(None) => return Next::Stay,
            // The session thread answers the protocol error and closes.
            Err(_) => return Next::Handover,
        };
        let Some(args) = cmd.as_command() else {
            return Next::Handover;
        };
        let Some(reply) = fixed_reply(&args) else {
            return Next::Handover;
        };
        let Ok(payload) = prepare_write(&args) else {
            return Next::Handover;
        };
        if !proposer.shares(payload.len()) || node.unavailable().is_some() {
            return Next::Handover;
        }
        c.buf.drain(..used);
        c.conn.lock().outstanding = true;
        proposer.push_quiet(
            payload,
            Pending {
                t0: Instant::now(),
                answer: Answer::Fixed {
                    reply,
                    conn: c.conn.clone(),
                },
            },
        );
    }
}

/// Give the connection to its session thread (started on the first hand-over).
fn handover(
    node: &Arc<Node>,
    bell: &Arc<Bell>,
    epoll: &Epoll,
    c: &mut Connection,
    token: u64,
) -> io::Result<()> {
    epoll.delete(&c.stream)?;
    c.away = true;
    if c.session.is_none() {
        let (tx, rx) = mpsc::channel();
        let (node, bell, conn, stream) = (
            node.clone(),
            bell.clone(),
            c.conn.clone(),
            c.stream.try_clone()?,
        );
        let client_id = c.client_id;
        std::thread::Builder::new()
            .name("session".into())
            .spawn(move || session(node, conn, stream, client_id, rx, bell, token))?;
        c.session = Some(tx);
    }
    let h = Handover {
        buf: std::mem::take(&mut c.buf),
        authed: c.authed,
    };
    if let Some(tx) = &c.session
        && tx.send(h).is_err()
    {
        // Its thread is gone (it could not start): the connection closes.
        bell.give_back(Back::Closed(token));
    }
    Ok(())
}

/// A connection's session thread: runs what the loop hands it, gives the connection back.
fn session(
    node: Arc<Node>,
    conn: Arc<ConnOut>,
    mut stream: TcpStream,
    client_id: u32,
    rx: mpsc::Receiver<Handover>,
    bell: Arc<Bell>,
    token: u64,
) {
    let _ = conn.thread.set(std::thread::current());
    let setup = || -> io::Result<_> {
        let local = node.server.connect()?;
        let client = node.client(client_id)?;
        Ok((local, client))
    };
    let (mut local, mut client) = match setup() {
        Ok(x) => x,
        Err(e) => {
            tracing::warn!("redis-nc: client {client_id:#x}: {e}");
            cannot_serve(&stream, &e);
            bell.give_back(Back::Closed(token));
            return;
        }
    };
    while let Ok(Handover {
        mut buf,
        mut authed,
    }) = rx.recv()
    {
        match run_commands(
            &mut stream,
            &node,
            &conn,
            &mut local,
            &mut client,
            &mut buf,
            &mut authed,
        ) {
            Ok(Flow::Idle) => bell.give_back(Back::Idle(token, buf, authed)),
            Ok(Flow::Closed) => {
                bell.give_back(Back::Closed(token));
                return;
            }
            Err(e) => {
                if e.kind() != io::ErrorKind::UnexpectedEof {
                    tracing::warn!("redis-nc: client {client_id:#x}: {e}");
                }
                bell.give_back(Back::Closed(token));
                return;
            }
        }
    }
}

/// Send a proposal of `batch` (its slot taken) as the loop's own.
fn submit(
    client: &mut Client,
    own: &mut Option<Own>,
    batch: Vec<(Vec<u8>, Pending)>,
    proposer: &Proposer<Pending>,
    done: &dyn Fn(Vec<Pending>, Result<Decided, String>),
) {
    let (payloads, tags): (Vec<Vec<u8>>, Vec<Pending>) = batch.into_iter().unzip();
    let (payload, alone) = proposal(payloads);
    match client.submit(0, payload) {
        Ok(f) => *own = Some(Own { f, tags, alone }),
        Err(e) => {
            done(tags, Err(e.to_string()));
            proposer.release();
        }
    }
}
