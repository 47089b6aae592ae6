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
    if let Err(e) = s.bind(&SockAddr::from(addr)) {
        if e.kind() != io::ErrorKind::AddrInUse {
            return Err(e);
        }
        let who = holder(addr).map_or(String::new(), |w| format!(" by {w}"));
        return Err(io::Error::new(
            e.kind(),
            format!(
                "{e}: the port is held{who} (another engine of this cluster still running? `nc-lab down`, or stop it)"
            ),
        ));
    }
    Ok(s)
}

/// The process holding UDP `addr` (or the wildcard address on its port) in this network
/// namespace, as "pid N (command line)": from `/proc/net/udp` (the socket's inode) and the
/// processes' descriptors. None when it cannot be told (another user's process, say).
fn holder(addr: SocketAddrV4) -> Option<String> {
    let table = std::fs::read_to_string("/proc/net/udp").ok()?;
    let inode = table.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (ip, port) = f.get(1)?.split_once(':')?;
        // The address as the kernel's native-endian u32 of the network-order bytes.
        let ip = Ipv4Addr::from(u32::from_str_radix(ip, 16).ok()?.swap_bytes());
        let port = u16::from_str_radix(port, 16).ok()?;
        let same = port == addr.port()
            && (ip == *addr.ip() || ip.is_unspecified() || addr.ip().is_unspecified());
        same.then(|| f.get(9).map(|i| i.to_string()))?
    })?;
    let target = format!("socket:[{inode}]");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|p| {
        let pid: u32 = p.file_name().to_str()?.parse().ok()?;
        let held = std::fs::read_dir(p.path().join("fd"))
            .ok()?
            .flatten()
            .any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == target.as_str())
            });
        held.then(|| {
            let cmd = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            format!("pid {pid} ({})", cmd.trim())
        })
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_in_use_names_the_process_holding_it() {
        let first = udp(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0), false).unwrap();
        let at = first.local_addr().unwrap().as_socket_ipv4().unwrap();
        let e = udp(at, false).expect_err("the port is taken");
        let msg = e.to_string();
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
        assert!(
            msg.contains(&format!("held by pid {}", std::process::id())),
            "{msg}"
        );
        assert!(msg.contains("nc-lab down"), "{msg}");
    }
}
