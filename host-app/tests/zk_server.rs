//! The real ZooKeeper that ZooKeeper-NC starts: when it cannot start, the error says why.

use host_app::zk::ZkServer;
use std::net::TcpListener;

#[test]
fn a_zookeeper_that_cannot_bind_its_port_says_so() {
    if !std::path::Path::new(host_app::zk::ZK_SERVER).exists() {
        panic!(
            "{} is missing: tools/setup.sh installs Debian's zookeeper",
            host_app::zk::ZK_SERVER
        );
    }
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = match busy.local_addr().unwrap() {
        std::net::SocketAddr::V4(a) => a,
        a => panic!("{a}"),
    };
    let tmp = tempfile::tempdir().unwrap();
    let err = ZkServer::start_with(tmp.path(), addr, false)
        .err()
        .expect("ZooKeeper started on a port that is in use");
    let msg = err.to_string();
    assert!(msg.contains("ZooKeeper exited"), "{msg}");
    assert!(msg.contains("Address already in use"), "{msg}");
    drop(busy);
}
