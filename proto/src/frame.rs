//! Ethernet II / IPv4 / UDP framing around a Nano-consensus packet, via `etherparse`.
//!
//! This is what the RTL parser and generator, the XDP program and the host
//! path see: a whole Ethernet frame (without FCS). [`parse_udp`] finds the UDP
//! payload with every length checked (Ethernet padding after the IPv4
//! `total_len` is ignored, as it must be); [`emit_udp`] writes a frame with
//! correct IPv4 header and UDP checksums. Neither allocates.

use core::fmt;
use etherparse::{
    EtherType, Ethernet2Header, Ethernet2Slice, IpNumber, Ipv4Header, Ipv4Slice, UdpHeader,
    UdpSlice,
};

/// Ethernet II header length.
pub const ETH_LEN: usize = 14;
/// IPv4 header length without options (what we emit).
pub const IPV4_LEN: usize = 20;
/// UDP header length.
pub const UDP_LEN: usize = 8;
/// Offset of the UDP payload in a frame we emit (and in any option-less IPv4 frame).
pub const PAYLOAD_OFFSET: usize = ETH_LEN + IPV4_LEN + UDP_LEN;

/// Addresses and ports of a UDP frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UdpMeta {
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// Source UDP port.
    pub src_port: u16,
    /// Destination UDP port.
    pub dst_port: u16,
    /// IPv4 TTL (1 for multicast trees: never routed beyond the first hop).
    pub ttl: u8,
}

/// Why a frame is not a UDP/IPv4 frame we can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Not Ethernet II + IPv4 + UDP (other traffic: pass it on); names what differs.
    NotUdp(&'static str),
    /// Claims to be IPv4/UDP but a length or checksum is wrong; names it.
    Malformed(&'static str),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::NotUdp(w) => write!(f, "not an IPv4/UDP frame: {w}"),
            FrameError::Malformed(w) => write!(f, "malformed IPv4/UDP frame: {w}"),
        }
    }
}

/// Split an Ethernet frame into its UDP metadata and payload.
pub fn parse_udp(frame: &[u8]) -> Result<(UdpMeta, &[u8]), FrameError> {
    let eth = Ethernet2Slice::from_slice_without_fcs(frame)
        .map_err(|_| FrameError::NotUdp("shorter than an Ethernet header"))?;
    if eth.ether_type() != EtherType::IPV4 {
        return Err(FrameError::NotUdp("ether_type is not IPv4"));
    }
    let ip = Ipv4Slice::from_slice(eth.payload_slice())
        .map_err(|_| FrameError::Malformed("IPv4 header or total_len"))?;
    let h = ip.header();
    // Verify over the raw header bytes (every bit counts, the reserved flag bit included).
    if ones_complement_sum(h.slice()) != 0xFFFF {
        return Err(FrameError::Malformed("IPv4 header checksum"));
    }
    if ip.is_payload_fragmented() {
        return Err(FrameError::NotUdp("IPv4 fragment"));
    }
    if ip.payload_ip_number() != IpNumber::UDP {
        return Err(FrameError::NotUdp("IP protocol is not UDP"));
    }
    let udp = UdpSlice::from_slice(ip.payload().payload)
        .map_err(|_| FrameError::Malformed("UDP length"))?;
    if udp.length() as usize != ip.payload().payload.len() {
        return Err(FrameError::Malformed(
            "UDP length differs from the IPv4 payload length",
        ));
    }
    let payload = udp.payload();
    if udp.checksum() != 0 {
        let want = udp
            .to_header()
            .calc_checksum_ipv4_raw(h.source(), h.destination(), payload)
            .map_err(|_| FrameError::Malformed("UDP length"))?;
        if want != udp.checksum() {
            return Err(FrameError::Malformed("UDP checksum"));
        }
    }
    Ok((
        UdpMeta {
            src_mac: eth.source(),
            dst_mac: eth.destination(),
            src_ip: h.source(),
            dst_ip: h.destination(),
            src_port: udp.source_port(),
            dst_port: udp.destination_port(),
            ttl: h.ttl(),
        },
        payload,
    ))
}

/// Write an Ethernet/IPv4/UDP frame carrying `payload` into `buf`; returns its length.
///
/// The IPv4 header has no options, DF set, and a correct header checksum; the
/// UDP checksum is computed. Frames shorter than the Ethernet minimum are not
/// padded here (the MAC does that).
pub fn emit_udp(meta: &UdpMeta, payload: &[u8], buf: &mut [u8]) -> Result<usize, FrameError> {
    let n = PAYLOAD_OFFSET + payload.len();
    if buf.len() < n {
        return Err(FrameError::Malformed("buffer shorter than the frame"));
    }
    let udp_len = u16::try_from(UDP_LEN + payload.len())
        .map_err(|_| FrameError::Malformed("payload longer than a UDP datagram"))?;
    let mut ip = Ipv4Header::new(udp_len, meta.ttl, IpNumber::UDP, meta.src_ip, meta.dst_ip)
        .map_err(|_| FrameError::Malformed("payload longer than an IPv4 packet"))?;
    ip.header_checksum = ip.calc_header_checksum();
    let udp = UdpHeader::with_ipv4_checksum(meta.src_port, meta.dst_port, &ip, payload)
        .map_err(|_| FrameError::Malformed("payload longer than a UDP datagram"))?;
    let eth = Ethernet2Header {
        source: meta.src_mac,
        destination: meta.dst_mac,
        ether_type: EtherType::IPV4,
    };
    buf[..ETH_LEN].copy_from_slice(&eth.to_bytes());
    buf[ETH_LEN..ETH_LEN + IPV4_LEN].copy_from_slice(&ip.to_bytes());
    buf[ETH_LEN + IPV4_LEN..PAYLOAD_OFFSET].copy_from_slice(&udp.to_bytes());
    buf[PAYLOAD_OFFSET..n].copy_from_slice(payload);
    Ok(n)
}

/// The 16-bit ones' complement sum of `b` (RFC 1071); a correct IPv4 header sums to 0xFFFF.
fn ones_complement_sum(b: &[u8]) -> u16 {
    let mut s: u32 = b
        .chunks(2)
        .map(|w| u32::from(w[0]) << 8 | u32::from(*w.get(1).unwrap_or(&0)))
        .sum();
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    s as u16
}

/// The Ethernet multicast MAC of an IPv4 multicast group (01:00:5e + low 23 bits).
pub fn multicast_mac(group: [u8; 4]) -> [u8; 6] {
    [0x01, 0x00, 0x5e, group[1] & 0x7f, group[2], group[3]]
}

/// Whether `ip` is an IPv4 multicast address (224.0.0.0/4).
pub fn is_multicast(ip: [u8; 4]) -> bool {
    ip[0] & 0xf0 == 0xe0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> UdpMeta {
        UdpMeta {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: multicast_mac([239, 1, 2, 3]),
            src_ip: [10, 0, 0, 1],
            dst_ip: [239, 1, 2, 3],
            src_port: 4000,
            dst_port: 4001,
            ttl: 1,
        }
    }

    #[test]
    fn round_trip_and_padding_ignored() {
        let mut buf = [0u8; 128];
        let n = emit_udp(&meta(), b"hello", &mut buf).unwrap();
        assert_eq!(n, PAYLOAD_OFFSET + 5);
        let (m, p) = parse_udp(&buf[..n]).unwrap();
        assert_eq!(m, meta());
        assert_eq!(p, b"hello");
        // Ethernet minimum-size padding after the IPv4 packet is not payload.
        let (_, p) = parse_udp(&buf[..64]).unwrap();
        assert_eq!(p, b"hello");
    }

    #[test]
    fn corruption_is_detected() {
        let mut buf = [0u8; 128];
        let n = emit_udp(&meta(), b"hello", &mut buf).unwrap();
        let mut bad = buf;
        bad[PAYLOAD_OFFSET] ^= 1;
        assert_eq!(
            parse_udp(&bad[..n]),
            Err(FrameError::Malformed("UDP checksum"))
        );
        let mut bad = buf;
        bad[ETH_LEN + 8] ^= 1; // TTL
        assert_eq!(
            parse_udp(&bad[..n]),
            Err(FrameError::Malformed("IPv4 header checksum"))
        );
        assert!(matches!(
            parse_udp(&buf[..n - 1]),
            Err(FrameError::Malformed(_))
        ));
        let mut evil = buf;
        evil[ETH_LEN + 6] ^= 0x80; // the reserved flag bit
        assert_eq!(
            parse_udp(&evil[..n]),
            Err(FrameError::Malformed("IPv4 header checksum"))
        );
        let mut arp = buf;
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(
            parse_udp(&arp[..n]),
            Err(FrameError::NotUdp("ether_type is not IPv4"))
        );
    }

    #[test]
    fn multicast_mac_mapping() {
        assert_eq!(multicast_mac([239, 129, 2, 3]), [1, 0, 0x5e, 1, 2, 3]);
        assert!(
            is_multicast([224, 0, 0, 1])
                && is_multicast([239, 255, 255, 255])
                && !is_multicast([10, 0, 0, 1])
        );
    }
}
