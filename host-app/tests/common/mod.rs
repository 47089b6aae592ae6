//! What the front tests share: a RESP front on a socket without an engine.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener};
use std::sync::Arc;

use host_app::auth::Password;
use host_app::feed::{Feed, Source};
use host_app::front::{self, Node, Reads};
use host_app::redis::{RedisApplier, RedisServer};

/// A front of node 0 (no engine) with `password`; its address. The redis-server lives in `dir`.
pub fn front(dir: &std::path::Path, password: Option<&str>) -> SocketAddr {
    let server = Arc::new(RedisServer::start(dir).expect("redis-server"));
    let conn = server.connect().unwrap();
    let node = Node::new(
        0,
        1,
        // Nothing listens there: this front proposes nothing in these tests.
        vec![SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9)],
        Reads::Local,
        server,
        None,
        password.and_then(Password::new),
    );
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let feed = Feed::new(Source::Udp(udp), 1, None);
    {
        let node = node.clone();
        std::thread::spawn(move || {
            front::apply_loop(node, feed, RedisApplier::new(conn, 0), vec![])
        });
    }
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || front::serve(l, node));
    addr
}
