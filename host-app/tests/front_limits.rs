//! A RESP front, then a ZooKeeper-NC writer front, out of file descriptors (its own test binary: it lowers the process's
//! RLIMIT_NOFILE). A connection the front cannot take is accepted anyway with the one descriptor
//! the front keeps spare, told `-ERR max number of clients reached` and closed at once, as Redis
//! does at `maxclients`, instead of waiting unanswered in the backlog while the event loop spins
//! on a listener that stays readable. The connections it serves keep being served, and once
//! descriptors are free again new connections are served too.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::time::Duration;

mod common;

use host_app::resp::{self, Value};

/// Everything the front sends until it closes the connection.
fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut all = vec![];
    s.read_to_end(&mut all)
        .expect("the front answers and closes within 20 s");
    all
}

fn ping(s: &mut TcpStream) -> Value {
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(&Value::command(&[b"PING"]).to_bytes()).unwrap();
    let mut buf = vec![];
    let mut chunk = [0u8; 256];
    loop {
        if let Some((v, _)) = resp::parse(&buf).unwrap() {
            return v;
        }
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "the front closed a connection it serves");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// `/proc/self/fd`, opened once, before the test first lowers the limit: listing it again needs
/// no new descriptor, so a count taken while the front holds every descriptor the limit allows
/// cannot itself fail with EMFILE (as a fresh `read_dir` did in CI).
fn fd_dir() -> std::sync::MutexGuard<'static, nix::dir::Dir> {
    use nix::{fcntl::OFlag, sys::stat::Mode};
    static DIR: std::sync::OnceLock<std::sync::Mutex<nix::dir::Dir>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        std::sync::Mutex::new(nix::dir::Dir::open("/proc/self/fd", flags, Mode::empty()).unwrap())
    })
    .lock()
    .unwrap()
}

/// The numbers of this process's open descriptors, not counting the one that lists them.
fn fd_numbers() -> Vec<i32> {
    let mut dir = fd_dir();
    let own = std::os::fd::AsRawFd::as_raw_fd(&*dir);
    dir.iter()
        .map(|e| e.expect("listing /proc/self/fd"))
        .filter_map(|e| e.file_name().to_str().ok()?.parse().ok())
        .filter(|&n| n != own)
        .collect()
}

/// Descriptors open in this process (not counting the one that lists them).
fn open_fds() -> u64 {
    fd_numbers().len() as u64
}

/// What this process's descriptors are, for a failure message.
fn fd_list() -> String {
    let mut all: Vec<i32> = fd_numbers();
    all.sort();
    all.iter()
        .map(|n| {
            let to = std::fs::read_link(format!("/proc/self/fd/{n}"))
                .map_or("?".into(), |t| t.display().to_string());
            format!("{n}→{to}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The count of open descriptors once it has read the same several times in a row (within
/// 20 s): a front that has just answered may still be taking back its spare descriptor or
/// giving back a connection's, and a count read in that moment would be one off.
fn settled_fds() -> u64 {
    let t0 = std::time::Instant::now();
    let (mut last, mut same) = (open_fds(), 0);
    while same < 5 && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
        let now = open_fds();
        same = if now == last { same + 1 } else { 0 };
        last = now;
    }
    last
}

fn set_soft_nofile(n: u64) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    INITIAL_SOFT.get_or_init(|| soft);
    setrlimit(Resource::RLIMIT_NOFILE, n.min(hard), hard).unwrap();
}

/// The soft open-files limit the test started with.
static INITIAL_SOFT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// The soft open-files limit back to what the test started with.
fn restore_nofile() {
    let initial = *INITIAL_SOFT.get().expect("set_soft_nofile ran first");
    set_soft_nofile(initial);
}

/// The soft open-files limit that leaves exactly `room` descriptor numbers free below it. The
/// limit caps descriptor *numbers* (a new descriptor takes the lowest free number, which must be
/// below the limit), not how many are open: a descriptor numbered above it (an inherited pipe, as
/// under `cargo test`'s jobserver) leaves a number free below it that a limit of `open + room`
/// would hand out, and a hole in the table leaves one more. So the limit is found from the
/// numbers in use, `fd_dir`'s own included.
fn limit_with_room(room: u64) -> u64 {
    let mut used: Vec<u64> = fd_numbers().into_iter().map(|n| n as u64).collect();
    used.push(std::os::fd::AsRawFd::as_raw_fd(&*fd_dir()) as u64);
    used.sort_unstable();
    used.dedup();
    // Free numbers below `limit`: `limit` minus the used ones below it.
    let mut limit = room;
    while limit - used.iter().filter(|&&n| n < limit).count() as u64 != room {
        limit += 1;
    }
    limit
}

/// The test's side of a connection to `addr`, with room for `room` descriptors in all, counting
/// this one: its socket is made with the limit raised, then the limit is lowered to leave
/// `room - 1` free for the front, so what runs out of descriptors is the front, never the test.
/// The front must hold what it holds at rest (see [`settles_at`]) when this is called.
fn connect_with_room(addr: SocketAddr, room: u64) -> TcpStream {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, SockaddrIn, connect, socket};
    restore_nofile();
    let limit = limit_with_room(room);
    let fd = socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .unwrap_or_else(|e| panic!("the test's socket: {e}; descriptors: {}", fd_list()));
    set_soft_nofile(limit);
    let SocketAddr::V4(v4) = addr else {
        panic!("{addr}: IPv4 only")
    };
    connect(std::os::fd::AsRawFd::as_raw_fd(&fd), &SockaddrIn::from(v4))
        .unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    TcpStream::from(fd)
}

/// With the front holding `before` descriptors (as counted by [`open_fds`]) and room for `room`
/// more: connect to `addr` (sending `first` if given), read what the front says until it closes,
/// and wait until the front's descriptors for the connection are free again.
fn refused(addr: SocketAddr, before: u64, room: u64, first: Option<&[u8]>) -> String {
    assert!(
        settles_at(before),
        "room for {room}: the front holds what it held before (open now: {}, before: {before}: {})",
        open_fds(),
        fd_list()
    );
    let mut s = connect_with_room(addr, room);
    if let Some(b) = first {
        s.write_all(b).unwrap();
    }
    let got = String::from_utf8_lossy(&read_to_close(&mut s)).into_owned();
    drop(s);
    assert!(
        settles_at(before),
        "room for {room}: descriptors given back (open now: {}, before: {before}: {})",
        open_fds(),
        fd_list()
    );
    got
}

/// Whether this process's open descriptors come to `n` and stay there for a few reads, within
/// 20 s. A front at its limit briefly gives back its spare descriptor whenever `accept` fails
/// (it does even with no connection waiting), so one read can see one fewer: the count is
/// taken as settled only when it reads `n` several times in a row.
fn settles_at(n: u64) -> bool {
    let t0 = std::time::Instant::now();
    let mut same = 0;
    while t0.elapsed() < Duration::from_secs(20) {
        same = if open_fds() == n { same + 1 } else { 0 };
        if same == 5 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

#[test]
fn fronts_out_of_descriptors_refuse_new_connections_at_once_and_keep_serving() {
    // The count must work with no room left: that is when the front holds everything.
    let now = open_fds();
    set_soft_nofile(limit_with_room(0));
    assert_eq!(open_fds(), now, "counting takes no descriptor");
    restore_nofile();
    let tmp = tempfile::tempdir().unwrap();
    let addr = common::front(tmp.path(), None);
    let pong = Value::Simple("PONG".into());
    let mut a = TcpStream::connect(addr).unwrap();
    assert_eq!(ping(&mut a), pong);

    // Room for the test's own side of one more connection, none for the front's side.
    let before = settled_fds();
    let ping_cmd = Value::command(&[b"PING"]).to_bytes();
    for _ in 0..3 {
        assert_eq!(
            refused(addr, before, 1, Some(&ping_cmd)),
            "-ERR max number of clients reached\r\n",
            "a connection the front cannot take is told why, then closed"
        );
    }
    assert_eq!(
        ping(&mut a),
        pong,
        "the connection served before is still served"
    );

    // Room for a connection's first descriptor, then its second, then the session thread its
    // first PING needs (a connection to redis-server, a socket for proposals): at each stage the
    // command is answered with the reason, and the front's descriptors for it are given back.
    for room in 2..=4 {
        assert_eq!(
            refused(addr, before, room, Some(&ping_cmd)),
            "-ERR max number of clients reached\r\n",
            "room for {room} descriptors: the connection is told why, then closed"
        );
    }
    assert_eq!(ping(&mut a), pong);

    // Descriptors free again: new connections are served.
    restore_nofile();
    let mut b = TcpStream::connect(addr).unwrap();
    assert_eq!(ping(&mut b), pong);
    assert_eq!(ping(&mut a), pong);

    // The ZooKeeper-NC writer front (no engine, no ZooKeeper: `info` is answered locally).
    use host_app::zk_front::{ZkNode, call, connect, serve};
    use serde_json::json;
    let node = ZkNode::new(
        0,
        1,
        vec![SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9)],
        None,
        None,
    );
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let zaddr = l.local_addr().unwrap();
    std::thread::spawn(move || serve(l, node));
    let mut w = connect(zaddr).unwrap();
    assert_eq!(call(&mut w, &json!({"op": "info"})).unwrap()["node"], 0);
    let before = settled_fds();
    for room in 1..=3 {
        let got = refused(zaddr, before, room, None);
        assert!(
            got.starts_with(r#"{"err":"zk-nc cannot serve this connection: "#),
            "room for {room} descriptors: the writer is told why, then closed: {got:?}"
        );
    }
    assert_eq!(call(&mut w, &json!({"op": "info"})).unwrap()["node"], 0);
    restore_nofile();
    let mut w2 = connect(zaddr).unwrap();
    assert_eq!(call(&mut w2, &json!({"op": "info"})).unwrap()["node"], 0);
}
