//! Several UDP datagrams in one `sendmmsg(2)`, each with its own destination and, through an
//! `IP_PKTINFO` control message, its own source address and outgoing interface.
//!
//! The engine sends every copy of one RSBCAST message (every tree; in loopback transport every
//! peer of every tree) in one system call: a process is killed only when a system call returns,
//! so a crash cannot leave a message on some trees only.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;

use nix::libc;

/// One datagram of a batch.
#[derive(Clone, Copy, Debug)]
pub struct Datagram<'a> {
    /// The UDP payload.
    pub payload: &'a [u8],
    /// Where it goes.
    pub to: SocketAddrV4,
    /// Source address and outgoing interface index (0: let the routing table choose).
    pub from: Option<(Ipv4Addr, u32)>,
}

/// Control-message room for one `in_pktinfo`, 8-byte aligned as `cmsghdr` needs.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct CmsgBuf([u8; 64]);

#[allow(unsafe_code)]
fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain old data; all-zero is a valid value.
    let mut s: libc::sockaddr_in = unsafe { zeroed() };
    s.sin_family = libc::AF_INET as libc::sa_family_t;
    s.sin_port = a.port().to_be();
    s.sin_addr.s_addr = u32::from(*a.ip()).to_be();
    s
}

/// Send `msgs` with as few `sendmmsg` calls as the kernel allows (one, unless it stops early on
/// an error, in which case the rest is tried once more). Returns how many were sent, in order;
/// fewer than `msgs.len()` means the rest failed (the error of the failing call is returned only
/// when not even the first datagram went out).
#[allow(unsafe_code)]
pub fn send_all(sock: &UdpSocket, msgs: &[Datagram<'_>]) -> io::Result<usize> {
    let n = msgs.len();
    if n == 0 {
        return Ok(0);
    }
    let mut addrs: Vec<libc::sockaddr_in> = msgs.iter().map(|m| sockaddr(m.to)).collect();
    let mut iovs: Vec<libc::iovec> = msgs
        .iter()
        .map(|m| libc::iovec {
            iov_base: m.payload.as_ptr() as *mut libc::c_void,
            iov_len: m.payload.len(),
        })
        .collect();
    let mut cmsgs = vec![CmsgBuf([0; 64]); n];
    // SAFETY: mmsghdr is plain old data; all-zero is a valid value (null pointers, zero lengths).
    let mut hdrs: Vec<libc::mmsghdr> = (0..n).map(|_| unsafe { zeroed() }).collect();
    let cmsg_space = unsafe { libc::CMSG_SPACE(size_of::<libc::in_pktinfo>() as u32) } as usize;
    assert!(cmsg_space <= 64);
    for i in 0..n {
        let h = &mut hdrs[i].msg_hdr;
        h.msg_name = (&mut addrs[i]) as *mut libc::sockaddr_in as *mut libc::c_void;
        h.msg_namelen = size_of::<libc::sockaddr_in>() as libc::socklen_t;
        h.msg_iov = &mut iovs[i];
        h.msg_iovlen = 1;
        if let Some((src, ifindex)) = msgs[i].from {
            h.msg_control = cmsgs[i].0.as_mut_ptr() as *mut libc::c_void;
            h.msg_controllen = cmsg_space as _;
            // SAFETY: msg_control points at `cmsg_space` bytes (≤ 64) of an 8-aligned buffer
            // that lives until the call returns; CMSG_FIRSTHDR/CMSG_DATA stay inside it.
            unsafe {
                let c = libc::CMSG_FIRSTHDR(h);
                (*c).cmsg_level = libc::IPPROTO_IP;
                (*c).cmsg_type = libc::IP_PKTINFO;
                (*c).cmsg_len = libc::CMSG_LEN(size_of::<libc::in_pktinfo>() as u32) as _;
                let info = libc::in_pktinfo {
                    ipi_ifindex: ifindex as libc::c_int,
                    ipi_spec_dst: libc::in_addr {
                        s_addr: u32::from(src).to_be(),
                    },
                    ipi_addr: libc::in_addr { s_addr: 0 },
                };
                std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut libc::in_pktinfo, info);
            }
        }
    }
    let mut sent = 0usize;
    let mut tries = 0;
    while sent < n && tries < 2 {
        tries += 1;
        // SAFETY: hdrs[sent..] are initialised mmsghdrs whose pointers (addresses, iovecs,
        // control buffers, payloads) all outlive this call.
        let r = unsafe {
            libc::sendmmsg(
                sock.as_raw_fd(),
                hdrs[sent..].as_mut_ptr(),
                (n - sent) as libc::c_uint,
                0,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            if sent == 0 {
                return Err(e);
            }
            break;
        }
        sent += r as usize;
    }
    Ok(sent)
}

/// The largest datagram a batch receives (the trees' 9000-byte MTU with room to spare).
pub const RECV_MAX: usize = 9216;

/// Buffers for receiving up to `capacity` datagrams with one `recvmmsg(2)`, each with its
/// kernel receive time (`SO_TIMESTAMPNS`, CLOCK_REALTIME ns) if the socket has that option on.
pub struct RecvBatch {
    bufs: Vec<u8>,
    cmsgs: Vec<CmsgBuf>,
    lens: Vec<usize>,
    stamps: Vec<Option<u64>>,
    /// The socket's drop count (`SO_RXQ_OVFL`) when datagram i was queued, if reported.
    drops: Vec<Option<u32>>,
    names: Vec<libc::sockaddr_in>,
    got: usize,
}

impl RecvBatch {
    /// Room for `capacity` datagrams of up to [`RECV_MAX`] bytes.
    #[allow(unsafe_code)]
    pub fn new(capacity: usize) -> RecvBatch {
        let capacity = capacity.max(1);
        RecvBatch {
            bufs: vec![0; capacity * RECV_MAX],
            cmsgs: vec![CmsgBuf([0; 64]); capacity],
            lens: vec![0; capacity],
            stamps: vec![None; capacity],
            drops: vec![None; capacity],
            // SAFETY: sockaddr_in is plain old data; all-zero is a valid value.
            names: (0..capacity).map(|_| unsafe { zeroed() }).collect(),
            got: 0,
        }
    }

    /// How many datagrams the batch can hold.
    pub fn capacity(&self) -> usize {
        self.lens.len()
    }

    /// Receive what `sock` holds, without waiting: up to [`RecvBatch::capacity`] datagrams in
    /// one system call. Returns how many (0 when there was nothing to read).
    #[allow(unsafe_code)]
    pub fn recv(&mut self, sock: &impl AsRawFd) -> io::Result<usize> {
        let n = self.capacity();
        self.got = 0;
        let mut iovs: Vec<libc::iovec> = self
            .bufs
            .chunks_exact_mut(RECV_MAX)
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr() as *mut libc::c_void,
                iov_len: RECV_MAX,
            })
            .collect();
        // SAFETY: mmsghdr is plain old data; all-zero is a valid value (null pointers, zero lengths).
        let mut hdrs: Vec<libc::mmsghdr> = (0..n).map(|_| unsafe { zeroed() }).collect();
        for i in 0..n {
            let h = &mut hdrs[i].msg_hdr;
            h.msg_iov = &mut iovs[i];
            h.msg_iovlen = 1;
            h.msg_control = self.cmsgs[i].0.as_mut_ptr() as *mut libc::c_void;
            h.msg_controllen = 64;
            h.msg_name = (&mut self.names[i]) as *mut libc::sockaddr_in as *mut libc::c_void;
            h.msg_namelen = size_of::<libc::sockaddr_in>() as libc::socklen_t;
        }
        let r = loop {
            // SAFETY: every mmsghdr points at a RECV_MAX-byte buffer, a 64-byte, 8-aligned
            // control buffer and a sockaddr_in owned by `self`, alive and unaliased for the
            // whole call.
            let r = unsafe {
                libc::recvmmsg(
                    sock.as_raw_fd(),
                    hdrs.as_mut_ptr(),
                    n as libc::c_uint,
                    libc::MSG_DONTWAIT,
                    std::ptr::null_mut(),
                )
            };
            if r >= 0 {
                break r as usize;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return Ok(0),
                _ => return Err(e),
            }
        };
        for (i, m) in hdrs.iter().enumerate().take(r) {
            self.lens[i] = (m.msg_len as usize).min(RECV_MAX);
            let h = &m.msg_hdr;
            let mut stamp = None;
            let mut drops = None;
            // SAFETY: the kernel wrote `msg_controllen` bytes of control messages into our
            // buffer; CMSG_FIRSTHDR/CMSG_NXTHDR stay within it and CMSG_DATA of an
            // SCM_TIMESTAMPNS message holds a timespec (read unaligned).
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(h);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_SOCKET
                        && (*c).cmsg_type == libc::SCM_TIMESTAMPNS
                    {
                        let ts =
                            std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                        stamp = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                    }
                    if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_RXQ_OVFL {
                        drops = Some(std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const u32));
                    }
                    c = libc::CMSG_NXTHDR(h, c);
                }
            }
            self.stamps[i] = stamp;
            self.drops[i] = drops;
        }
        self.got = r;
        Ok(r)
    }

    /// How many datagrams the kernel had dropped on this socket (full receive buffer) when
    /// datagram `i` of the last [`RecvBatch::recv`] was queued (`SO_RXQ_OVFL`, cumulative;
    /// None when the socket does not report it).
    pub fn drops(&self, i: usize) -> Option<u32> {
        (i < self.got).then(|| self.drops[i]).flatten()
    }

    /// The IPv4 source address of datagram `i` of the last [`RecvBatch::recv`].
    pub fn source(&self, i: usize) -> Option<std::net::Ipv4Addr> {
        (i < self.got && self.names[i].sin_family == libc::AF_INET as libc::sa_family_t)
            .then(|| std::net::Ipv4Addr::from(u32::from_be(self.names[i].sin_addr.s_addr)))
    }

    /// The IPv4 source address and port of datagram `i` of the last [`RecvBatch::recv`].
    pub fn source_addr(&self, i: usize) -> Option<std::net::SocketAddrV4> {
        self.source(i)
            .map(|ip| std::net::SocketAddrV4::new(ip, u16::from_be(self.names[i].sin_port)))
    }

    /// Datagram `i` of the last [`RecvBatch::recv`]: its bytes and kernel receive time.
    pub fn get(&self, i: usize) -> Option<(&[u8], Option<u64>)> {
        (i < self.got).then(|| {
            (
                &self.bufs[i * RECV_MAX..i * RECV_MAX + self.lens[i]],
                self.stamps[i],
            )
        })
    }
}

/// How many datagrams the kernel has dropped on `sock` so far (a full receive buffer), from
/// `SO_MEMINFO` (`SK_MEMINFO_DROPS`); None if the kernel does not say.
#[allow(unsafe_code)]
pub fn socket_drops(sock: &impl AsRawFd) -> Option<u32> {
    let mut info = [0u32; 9];
    let mut len = size_of_val(&info) as libc::socklen_t;
    // SAFETY: `info` has room for `len` bytes; the kernel writes at most that many and sets
    // `len` to what it wrote.
    let r = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MEMINFO,
            info.as_mut_ptr() as *mut libc::c_void,
            &mut len,
        )
    };
    let drops = libc::SK_MEMINFO_DROPS as usize;
    (r == 0 && len as usize >= (drops + 1) * size_of::<u32>()).then(|| info[drops])
}

/// The index of the interface named `name` (0 if there is none).
pub fn ifindex(name: &str) -> u32 {
    nix::net::if_::if_nametoindex(name).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_call_carries_every_datagram_with_its_source() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("0.0.0.0:0").unwrap();
        let to = |s: &UdpSocket| match s.local_addr().unwrap() {
            std::net::SocketAddr::V4(v) => v,
            _ => unreachable!(),
        };
        let src = Ipv4Addr::new(127, 0, 0, 9);
        let msgs = [
            Datagram {
                payload: b"one",
                to: to(&a),
                from: Some((src, 0)),
            },
            Datagram {
                payload: b"two",
                to: to(&b),
                from: None,
            },
        ];
        assert_eq!(send_all(&tx, &msgs).unwrap(), 2);
        let mut buf = [0u8; 16];
        let (n, from) = a.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"one");
        assert_eq!(
            from.ip(),
            std::net::IpAddr::V4(src),
            "IP_PKTINFO sets the source"
        );
        let (n, _) = b.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"two");
    }

    #[test]
    fn one_call_receives_every_queued_datagram_with_its_kernel_time() {
        use nix::sys::socket::{setsockopt, sockopt::ReceiveTimestampns};
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        setsockopt(&rx, ReceiveTimestampns, &true).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut batch = RecvBatch::new(4);
        assert_eq!(batch.recv(&rx).unwrap(), 0, "nothing queued: no wait");
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        for p in [&b"a"[..], b"bb", b"ccc", b"dddd", b"eeeee"] {
            tx.send_to(p, rx.local_addr().unwrap()).unwrap();
        }
        assert_eq!(
            batch.recv(&rx).unwrap(),
            4,
            "one call takes the batch's capacity"
        );
        for (i, want) in [&b"a"[..], b"bb", b"ccc", b"dddd"].iter().enumerate() {
            let (got, stamp) = batch.get(i).unwrap();
            assert_eq!(got, *want);
            assert!(
                stamp.is_some_and(|t| t >= before),
                "kernel time {stamp:?} < {before}"
            );
        }
        assert!(batch.get(4).is_none());
        assert_eq!(batch.recv(&rx).unwrap(), 1);
        assert_eq!(batch.get(0).unwrap().0, b"eeeee");
    }
}
