//! The engine's datapath sockets: one receive socket per tree (multicast group, or the node's
//! loopback address), one send socket for every tree copy, the client and host-path sockets.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use super::{NodeSetup, Transport, mmsg};

pub(super) struct Sockets {
    /// Per tree: the receive socket.
    pub rx: Vec<UdpSocket>,
    /// Every tree copy leaves through this one socket, all copies of a message in one
    /// sendmmsg, each with its tree's source address and interface (IP_PKTINFO).
    pub tx: UdpSocket,
    /// Per tree: (this node's address on the tree, interface index or 0).
    pub tree_src: Vec<(Ipv4Addr, u32)>,
    pub client: UdpSocket,
    pub host: UdpSocket,
}

fn udp(addr: SocketAddrV4, reuse: bool) -> io::Result<Socket> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_address(reuse)?;
    // Bursts of copies and requests: a large buffer keeps the kernel from dropping them.
    let _ = s.set_recv_buffer_size(4 << 20);
    s.bind(&SockAddr::from(addr))?;
    Ok(s)
}

pub(super) fn ctx<T>(r: io::Result<T>, what: impl FnOnce() -> String) -> io::Result<T> {
    r.map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", what())))
}

pub(super) fn open_sockets(s: &NodeSetup) -> io::Result<Sockets> {
    let c = &s.config;
    let me = s.me();
    let mut rx = Vec::new();
    let mut tree_src = Vec::new();
    for t in 0..c.trees as usize {
        let local = me.tree_addrs[t];
        match s.transport {
            Transport::Loopback => {
                let a = SocketAddrV4::new(local, c.decide_port);
                rx.push(ctx(udp(a, false), || format!("tree {t}: bind {a}"))?.into());
                tree_src.push((local, 0));
            }
            Transport::Multicast => {
                let group = Ipv4Addr::from(c.tree_groups[t]);
                let iface = &me.tree_ifaces[t];
                let a = SocketAddrV4::new(group, c.decide_port);
                let r = ctx(udp(a, true), || format!("tree {t}: bind {a}"))?;
                ctx(r.bind_device(Some(iface.as_bytes())), || {
                    format!(
                        "tree {t}: SO_BINDTODEVICE {iface} (needs CAP_NET_RAW on Linux before 5.7)"
                    )
                })?;
                ctx(r.join_multicast_v4(&group, &local), || {
                    format!("tree {t}: join {group} on {local}")
                })?;
                r.set_multicast_all_v4(false)?;
                rx.push(r.into());
                let idx = mmsg::ifindex(iface);
                if idx == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("tree {t}: no interface named {iface}"),
                    ));
                }
                tree_src.push((local, idx));
            }
        }
    }
    let tx = ctx(
        udp(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0), false),
        || "tree send socket".into(),
    )?;
    tx.set_multicast_ttl_v4(c.ttl as u32)?;
    tx.set_multicast_loop_v4(false)?;
    // A whole message must fit: a full send buffer would split it.
    let _ = tx.set_send_buffer_size(4 << 20);
    let tx: UdpSocket = tx.into();
    let ca = SocketAddrV4::new(me.client_addr, c.client_port);
    let client: UdpSocket = ctx(udp(ca, false), || format!("client port: bind {ca}"))?.into();
    let host: UdpSocket = ctx(
        udp(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0), false),
        || "host path socket".into(),
    )?
    .into();
    for sock in rx.iter().chain([&client]) {
        sock.set_nonblocking(true)?;
    }
    for sock in &rx {
        // Kernel arrival times (read with recvmmsg): a stall of this process is not mistaken
        // for a silent leader.
        nix::sys::socket::setsockopt(sock, nix::sys::socket::sockopt::ReceiveTimestampns, &true)
            .map_err(io::Error::from)?;
        // The kernel's drop count with every datagram: copies lost to a full receive buffer
        // must make this node fault, not time out (Node::receive_overflow).
        nix::sys::socket::setsockopt(sock, nix::sys::socket::sockopt::RxqOvfl, &1)
            .map_err(io::Error::from)?;
    }
    // Register `ttl`: unicast sends (replies, host copies, loopback tree copies); the
    // multicast tree sockets took it as IP_MULTICAST_TTL above.
    for sock in rx.iter().chain([&tx, &client, &host]) {
        sock.set_ttl(c.ttl as u32)?;
    }
    Ok(Sockets {
        rx,
        tx,
        tree_src,
        client,
        host,
    })
}
