//! A two-namespace testbed like one node of netlab: `nic` (where the engine would run) and
//! `host` joined by a veth pair; the XDP program sits on the host end. Used by the tests and
//! the benchmark (root only). Everything it creates is named `ncxdp-…` and removed on drop.

use anyhow::{Context, Result, bail};
use proto::frame::{UdpMeta, emit_udp};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Whether this process may create namespaces and attach XDP.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A `nic` and a `host` namespace joined by a veth pair.
pub struct Testbed {
    /// Namespace of the sender (the engine side).
    pub nic_ns: String,
    /// Namespace where the XDP program is attached.
    pub host_ns: String,
    /// Veth end in `nic_ns`.
    pub nic_if: String,
    /// Veth end in `host_ns` (the XDP program's interface).
    pub host_if: String,
    /// MAC of `nic_if`.
    pub nic_mac: [u8; 6],
    /// MAC of `host_if`.
    pub host_mac: [u8; 6],
    /// IPv4 of `nic_if`.
    pub nic_ip: [u8; 4],
    /// IPv4 of `host_if`.
    pub host_ip: [u8; 4],
    /// A bpffs pin folder for this testbed.
    pub pin_dir: std::path::PathBuf,
}

fn ip(args: &[&str]) -> Result<()> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .context("run `ip` (iproute2)")?;
    if !out.status.success() {
        bail!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn mac_str(m: [u8; 6]) -> String {
    m.map(|b| format!("{b:02x}")).join(":")
}

impl Testbed {
    /// Create the namespaces and the veth pair (addresses 10.77.k.1 nic, 10.77.k.2 host).
    pub fn new() -> Result<Testbed> {
        let pid = std::process::id();
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        let tag = format!("{:x}{k}", pid & 0xfffff);
        let sub = ((pid as u8) ^ (k as u8).wrapping_mul(37)) as u32;
        let tb = Testbed {
            nic_ns: format!("ncxdp-{tag}-nic"),
            host_ns: format!("ncxdp-{tag}-host"),
            nic_if: format!("nxn{tag}"),
            host_if: format!("nxh{tag}"),
            nic_mac: [0x02, 0x4e, 0x43, 0x01, (k & 0xff) as u8, 0x01],
            host_mac: [0x02, 0x4e, 0x43, 0x01, (k & 0xff) as u8, 0x02],
            nic_ip: [10, 77, sub as u8, 1],
            host_ip: [10, 77, sub as u8, 2],
            pin_dir: format!("/sys/fs/bpf/ncxdp-{tag}").into(),
        };
        ip(&["netns", "add", &tb.nic_ns])?;
        // From here on, drop cleans up whatever was created.
        ip(&["netns", "add", &tb.host_ns])?;
        ip(&[
            "link",
            "add",
            &tb.nic_if,
            "netns",
            &tb.nic_ns,
            "address",
            &mac_str(tb.nic_mac),
            "type",
            "veth",
            "peer",
            "name",
            &tb.host_if,
            "netns",
            &tb.host_ns,
            "address",
            &mac_str(tb.host_mac),
        ])?;
        let a = |x: [u8; 4]| format!("{}.{}.{}.{}/24", x[0], x[1], x[2], x[3]);
        for (ns, dev, addr) in [
            (&tb.nic_ns, &tb.nic_if, a(tb.nic_ip)),
            (&tb.host_ns, &tb.host_if, a(tb.host_ip)),
        ] {
            ip(&["-n", ns, "addr", "add", &addr, "dev", dev])?;
            ip(&["-n", ns, "link", "set", dev, "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        Ok(tb)
    }

    /// Run `f` on a thread that has entered namespace `ns`.
    pub fn run_in<T: Send>(&self, ns: &str, f: impl FnOnce() -> T + Send) -> Result<T> {
        let path = format!("/run/netns/{ns}");
        std::thread::scope(|s| {
            s.spawn(|| -> Result<T> {
                let file = std::fs::File::open(&path).with_context(|| format!("open {path}"))?;
                // SAFETY: setns on this thread only, with a namespace file we opened.
                if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    bail!("setns {ns}: {}", std::io::Error::last_os_error());
                }
                Ok(f())
            })
            .join()
            .map_err(|_| anyhow::anyhow!("thread in {ns} panicked"))?
        })
    }

    /// Enter namespace `ns` on the calling thread (for threads the caller spawns itself).
    pub fn enter(ns: &str) -> Result<()> {
        let path = format!("/run/netns/{ns}");
        let file = std::fs::File::open(&path).with_context(|| format!("open {path}"))?;
        // SAFETY: as in run_in.
        if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            bail!("setns {ns}: {}", std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// UDP metadata for a frame from the nic end to the host end on `port`.
    pub fn meta(&self, port: u16) -> UdpMeta {
        UdpMeta {
            src_mac: self.nic_mac,
            dst_mac: self.host_mac,
            src_ip: self.nic_ip,
            dst_ip: self.host_ip,
            src_port: 40000,
            dst_port: port,
            ttl: 64,
        }
    }

    /// A whole Ethernet frame carrying `payload` to the host end on `port` (via `proto::frame`).
    pub fn frame(&self, port: u16, payload: &[u8]) -> Vec<u8> {
        self.frame_from(self.nic_ip, port, payload)
    }

    /// As [`Testbed::frame`], with IPv4 source address `src_ip` (a forged one, say); the
    /// checksums are right for it.
    pub fn frame_from(&self, src_ip: [u8; 4], port: u16, payload: &[u8]) -> Vec<u8> {
        let meta = UdpMeta {
            src_ip,
            ..self.meta(port)
        };
        let mut buf = vec![0u8; proto::frame::PAYLOAD_OFFSET + payload.len()];
        let n = emit_udp(&meta, payload, &mut buf).expect("emit_udp");
        buf.truncate(n);
        buf
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        // Deleting the namespaces deletes the veth pair (and detaches any XDP on it).
        let _ = ip(&["netns", "del", &self.nic_ns]);
        let _ = ip(&["netns", "del", &self.host_ns]);
        let _ = crate::loader::detach_pinned(&self.pin_dir);
        let _ = std::fs::remove_dir(&self.pin_dir);
    }
}

/// An AF_PACKET socket that sends whole Ethernet frames out of one interface (any bytes: the
/// tests send malformed frames too). Create it on a thread inside the interface's namespace.
pub struct RawSender {
    fd: OwnedFd,
    ifindex: i32,
}

impl RawSender {
    /// Open a raw socket on `iface` (in the calling thread's namespace).
    pub fn new(iface: &str) -> Result<RawSender> {
        let name = std::ffi::CString::new(iface)?;
        // SAFETY: plain libc calls; the fd is owned right away.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) } as i32;
        if ifindex == 0 {
            bail!("no interface {iface}");
        }
        // SAFETY: as above.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
        if fd < 0 {
            bail!("socket(AF_PACKET): {}", std::io::Error::last_os_error());
        }
        // SAFETY: fd was just returned by socket().
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(RawSender { fd, ifindex })
    }

    /// Send one frame; returns once the kernel took it (retries while the queue is full).
    pub fn send(&self, frame: &[u8]) -> Result<()> {
        // SAFETY: sockaddr_ll is plain data; zero is a valid start.
        let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sa.sll_family = libc::AF_PACKET as u16;
        sa.sll_ifindex = self.ifindex;
        sa.sll_halen = 6;
        // Destination MAC (the frame's first 6 bytes; frames shorter than that keep zeros).
        for (d, b) in sa.sll_addr.iter_mut().zip(frame.iter().take(6)) {
            *d = *b;
        }
        loop {
            // SAFETY: frame and sa are valid for the call.
            let r = unsafe {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    frame.as_ptr().cast(),
                    frame.len(),
                    0,
                    (&sa as *const libc::sockaddr_ll).cast(),
                    std::mem::size_of::<libc::sockaddr_ll>() as u32,
                )
            };
            if r >= 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOBUFS) || e.raw_os_error() == Some(libc::EAGAIN) {
                std::thread::yield_now();
                continue;
            }
            bail!("sendto: {e}");
        }
    }
}
