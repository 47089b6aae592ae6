//! Packet authentication: a SipHash-2-4 tag over the whole packet with a cluster key.
//!
//! A packet whose header byte 11 (`key_id`) is 0 is untagged (the paper's format). A packet with
//! `key_id` = k ≠ 0 carries, after its body, an 8-byte tag: SipHash-2-4 with key k of every byte
//! before the tag (common header including `key_id`, and body), written little-endian (the byte
//! order of SipHash's reference output). [`crate::wire::parse`] checks the layout (the UDP
//! payload is `12 + body_len + 8` bytes); [`verify`] checks the tag against a [`Keyring`].
//!
//! Why SipHash-2-4 and not Poly1305 (proto/README, "Authenticated packets"): it is a PRF with a
//! 128-bit key built for short messages, needs no nonce (Poly1305 needs a fresh one-time key per
//! message, which a multicast leader and a stateless card cannot derive without a stream cipher),
//! and is four 64-bit additions, rotations and XORs per round — pipelinable one round per stage
//! in an FPGA, where Poly1305 needs 130-bit modular multiplications.
//!
//! Replays: the tag does not carry a counter; a replayed member packet is refused by the model's
//! own ordering (stale epoch, msg_seq already seen, instance already decided). See the threat
//! model in proto/README.

use core::fmt;

use crate::wire::{HEADER_LEN, TAG_LEN, header_offset};

/// Bytes of one cluster key.
pub const KEY_LEN: usize = 16;
/// Most keys one [`Keyring`] holds (the current one and the ones of a rotation in progress).
pub const MAX_KEYS: usize = 8;

fn sipround(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13);
    v[1] ^= v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16);
    v[3] ^= v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21);
    v[3] ^= v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17);
    v[1] ^= v[2];
    v[2] = v[2].rotate_left(32);
}

/// SipHash-2-4 of `data` with the 128-bit `key` (Aumasson and Bernstein, 2012).
pub fn siphash24(key: &[u8; KEY_LEN], data: &[u8]) -> u64 {
    let k0 = u64::from_le_bytes([
        key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
    ]);
    let k1 = u64::from_le_bytes([
        key[8], key[9], key[10], key[11], key[12], key[13], key[14], key[15],
    ]);
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        let m = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        v[3] ^= m;
        sipround(&mut v);
        sipround(&mut v);
        v[0] ^= m;
    }
    let mut last = [0u8; 8];
    let rest = words.remainder();
    last[..rest.len()].copy_from_slice(rest);
    last[7] = data.len() as u8;
    let m = u64::from_le_bytes(last);
    v[3] ^= m;
    sipround(&mut v);
    sipround(&mut v);
    v[0] ^= m;
    v[2] ^= 0xff;
    for _ in 0..4 {
        sipround(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// Why a keyring refused a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyringError {
    /// Key id 0 means "untagged" and cannot name a key.
    IdZero,
    /// The same id twice.
    Duplicate(u8),
    /// More than [`MAX_KEYS`] keys.
    Full,
}

impl fmt::Display for KeyringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyringError::IdZero => {
                write!(f, "key id 0 is reserved for untagged packets (use 1..=255)")
            }
            KeyringError::Duplicate(id) => write!(f, "key id {id} appears twice"),
            KeyringError::Full => write!(f, "more than {MAX_KEYS} keys"),
        }
    }
}

/// The cluster keys a node (or client) holds, by key id (1..=255). Its `Debug` shows the ids
/// only, never a key.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Keyring {
    ids: [u8; MAX_KEYS],
    keys: [[u8; KEY_LEN]; MAX_KEYS],
    len: u8,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyring")
            .field("ids", &&self.ids[..self.len as usize])
            .finish()
    }
}

impl Keyring {
    /// An empty ring: only untagged packets can be sent; tagged ones are refused.
    pub fn new() -> Keyring {
        Keyring::default()
    }

    /// Add key `id`.
    pub fn insert(&mut self, id: u8, key: [u8; KEY_LEN]) -> Result<(), KeyringError> {
        if id == 0 {
            return Err(KeyringError::IdZero);
        }
        if self.get(id).is_some() {
            return Err(KeyringError::Duplicate(id));
        }
        let i = self.len as usize;
        if i == MAX_KEYS {
            return Err(KeyringError::Full);
        }
        self.ids[i] = id;
        self.keys[i] = key;
        self.len += 1;
        Ok(())
    }

    /// Key `id`, if held.
    pub fn get(&self, id: u8) -> Option<&[u8; KEY_LEN]> {
        (0..self.len as usize)
            .find(|&i| self.ids[i] == id)
            .map(|i| &self.keys[i])
    }

    /// The ids held, in insertion order.
    pub fn ids(&self) -> &[u8] {
        &self.ids[..self.len as usize]
    }

    /// The largest id held (the usual send key of a client), if any.
    pub fn newest(&self) -> Option<u8> {
        self.ids().iter().copied().max()
    }

    /// No key at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Why a packet's authentication failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthError {
    /// Untagged (`key_id` 0) while tags are required.
    Untagged,
    /// Tagged with a key id this ring does not hold.
    UnknownKey(u8),
    /// The tag does not match (wrong key, or the packet was changed).
    BadTag,
    /// Too short to hold a header and a tag.
    Truncated,
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::Untagged => write!(f, "untagged packet while tags are required"),
            AuthError::UnknownKey(id) => write!(f, "tagged with key {id}, which is not held"),
            AuthError::BadTag => write!(f, "tag does not match"),
            AuthError::Truncated => write!(f, "too short for a header and a tag"),
        }
    }
}

/// The tag of `signed` (a packet's bytes before its tag, with its `key_id` set).
pub fn tag(key: &[u8; KEY_LEN], signed: &[u8]) -> [u8; TAG_LEN] {
    siphash24(key, signed).to_le_bytes()
}

/// Check `bytes` (a whole UDP payload that [`crate::wire::parse`] accepted or will accept):
/// untagged packets pass unless `required`; a tagged one must carry the right tag for a key of
/// `ring`. Returns the length of the packet without its tag.
pub fn verify(bytes: &[u8], ring: &Keyring, required: bool) -> Result<usize, AuthError> {
    if bytes.len() < HEADER_LEN {
        return Err(AuthError::Truncated);
    }
    let id = bytes[header_offset::KEY_ID];
    if id == 0 {
        return if required {
            Err(AuthError::Untagged)
        } else {
            Ok(bytes.len())
        };
    }
    let key = ring.get(id).ok_or(AuthError::UnknownKey(id))?;
    let Some(n) = bytes
        .len()
        .checked_sub(TAG_LEN)
        .filter(|&n| n >= HEADER_LEN)
    else {
        return Err(AuthError::Truncated);
    };
    let want = tag(key, &bytes[..n]);
    // Constant time: no early exit on the first differing byte.
    let diff = want
        .iter()
        .zip(&bytes[n..])
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    if diff == 0 {
        Ok(n)
    } else {
        Err(AuthError::BadTag)
    }
}

/// Tag the untagged packet in `buf[..len]` with key `id` of `ring`, in place: sets `key_id` and
/// writes the tag after it. Returns the new length (`len + TAG_LEN`).
pub fn seal(buf: &mut [u8], len: usize, ring: &Keyring, id: u8) -> Result<usize, SealError> {
    let key = ring.get(id).ok_or(SealError::NoKey(id))?;
    if len < HEADER_LEN || buf[header_offset::KEY_ID] != 0 {
        return Err(SealError::NotAPacket);
    }
    if buf.len() < len + TAG_LEN {
        return Err(SealError::BufferTooSmall {
            needed: len + TAG_LEN,
        });
    }
    buf[header_offset::KEY_ID] = id;
    let t = tag(key, &buf[..len]);
    buf[len..len + TAG_LEN].copy_from_slice(&t);
    Ok(len + TAG_LEN)
}

/// [`seal`] on a vector (grows it by the tag).
#[cfg(feature = "alloc")]
pub fn seal_vec(p: &mut alloc::vec::Vec<u8>, ring: &Keyring, id: u8) -> Result<(), SealError> {
    let len = p.len();
    p.resize(len + TAG_LEN, 0);
    match seal(p, len, ring, id) {
        Ok(_) => Ok(()),
        Err(e) => {
            p.truncate(len);
            Err(e)
        }
    }
}

/// The packet of `bytes` without its tag and with `key_id` 0 (what logs and host copies keep),
/// or `bytes` itself when untagged. Call after [`verify`].
#[cfg(feature = "alloc")]
pub fn strip(bytes: &[u8]) -> alloc::borrow::Cow<'_, [u8]> {
    if bytes.len() < HEADER_LEN + TAG_LEN || bytes[header_offset::KEY_ID] == 0 {
        return alloc::borrow::Cow::Borrowed(bytes);
    }
    let mut v = bytes[..bytes.len() - TAG_LEN].to_vec();
    v[header_offset::KEY_ID] = 0;
    alloc::borrow::Cow::Owned(v)
}

/// Why a packet could not be tagged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SealError {
    /// The send key is not in the ring.
    NoKey(u8),
    /// Not an untagged packet (too short, or already tagged).
    NotAPacket,
    /// The buffer has no room for the tag.
    BufferTooSmall {
        /// Bytes the tagged packet needs.
        needed: usize,
    },
}

impl fmt::Display for SealError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SealError::NoKey(id) => write!(f, "send key {id} is not in the key ring"),
            SealError::NotAPacket => write!(f, "not an untagged packet"),
            SealError::BufferTooSmall { needed } => {
                write!(f, "buffer too small: need {needed} bytes")
            }
        }
    }
}

/// Parse a key file: one key per line, `ID HEX` (ID 1..=255, HEX 32 hex digits); blank lines and
/// lines starting with `#` are ignored. Errors name the line.
pub fn parse_keyfile(text: &str) -> Result<Keyring, KeyfileError> {
    let mut ring = Keyring::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(id), Some(hex), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(KeyfileError {
                line: line_no,
                what: "expected `ID HEX` (key id 1..=255, 32 hex digits)",
            });
        };
        let id: u8 = id.parse().map_err(|_| KeyfileError {
            line: line_no,
            what: "key id must be a number 1..=255",
        })?;
        let hex = hex.as_bytes();
        if hex.len() != 2 * KEY_LEN {
            return Err(KeyfileError {
                line: line_no,
                what: "a key is 32 hex digits (16 bytes)",
            });
        }
        let mut key = [0u8; KEY_LEN];
        for (j, pair) in hex.chunks_exact(2).enumerate() {
            let d = |c: u8| (c as char).to_digit(16);
            let (Some(h), Some(l)) = (d(pair[0]), d(pair[1])) else {
                return Err(KeyfileError {
                    line: line_no,
                    what: "a key is 32 hex digits (0-9, a-f)",
                });
            };
            key[j] = (h * 16 + l) as u8;
        }
        ring.insert(id, key).map_err(|e| KeyfileError {
            line: line_no,
            what: match e {
                KeyringError::IdZero => "key id 0 is reserved (use 1..=255)",
                KeyringError::Duplicate(_) => "this key id appears twice",
                KeyringError::Full => "more than 8 keys",
            },
        })?;
    }
    Ok(ring)
}

/// A key file line that could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyfileError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub what: &'static str,
}

impl fmt::Display for KeyfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Entry, Packet};

    fn key() -> [u8; KEY_LEN] {
        core::array::from_fn(|i| i as u8)
    }

    /// The reference vectors of the SipHash paper (Appendix A): key 00..0f, message 00..(n-1).
    #[test]
    fn siphash24_matches_the_reference_vectors() {
        let msg: [u8; 64] = core::array::from_fn(|i| i as u8);
        assert_eq!(siphash24(&key(), &msg[..0]), 0x726f_db47_dd0e_0e31);
        assert_eq!(siphash24(&key(), &msg[..15]), 0xa129_ca61_49be_45e5);
    }

    #[test]
    #[allow(deprecated)]
    fn siphash24_matches_std_siphasher_at_every_length() {
        use core::hash::Hasher;
        let k = key();
        let data: [u8; 300] = core::array::from_fn(|i| (i * 7 + 3) as u8);
        for n in 0..data.len() {
            let mut h = core::hash::SipHasher::new_with_keys(
                u64::from_le_bytes(k[..8].try_into().unwrap()),
                u64::from_le_bytes(k[8..].try_into().unwrap()),
            );
            h.write(&data[..n]);
            assert_eq!(siphash24(&k, &data[..n]), h.finish(), "length {n}");
        }
    }

    fn request() -> ([u8; 128], usize) {
        let mut buf = [0u8; 128];
        let p = Packet::Request(Entry {
            client_id: 9,
            seq: 1,
            flags: 0,
            payload: b"set k v",
        });
        let n = p.emit(7, crate::wire::SENDER_NONE, &mut buf).unwrap();
        (buf, n)
    }

    #[test]
    fn seal_then_verify_and_every_tamper_is_caught() {
        let mut ring = Keyring::new();
        ring.insert(3, key()).unwrap();
        let (mut buf, n) = request();
        assert_eq!(verify(&buf[..n], &ring, false), Ok(n));
        assert_eq!(verify(&buf[..n], &ring, true), Err(AuthError::Untagged));
        let m = seal(&mut buf, n, &ring, 3).unwrap();
        assert_eq!(m, n + TAG_LEN);
        assert_eq!(verify(&buf[..m], &ring, true), Ok(n));
        assert!(crate::wire::parse(&buf[..m], 7).is_ok());
        for i in 0..m {
            for bit in [0x01u8, 0x80] {
                let mut t = buf;
                t[i] ^= bit;
                assert!(
                    verify(&t[..m], &ring, true).is_err(),
                    "byte {i} bit {bit:#x}"
                );
            }
        }
        // Another key under the same id, or a ring without that id.
        let mut other = Keyring::new();
        other.insert(3, [0xAA; KEY_LEN]).unwrap();
        assert_eq!(verify(&buf[..m], &other, true), Err(AuthError::BadTag));
        assert_eq!(
            verify(&buf[..m], &Keyring::new(), false),
            Err(AuthError::UnknownKey(3))
        );
        assert_eq!(seal(&mut buf, m, &ring, 3), Err(SealError::NotAPacket));
        assert_eq!(strip(&buf[..m]).as_ref(), &request().0[..n]);
    }

    #[test]
    fn key_files_are_read_and_bad_lines_named() {
        let ring = parse_keyfile(
            "# cluster keys\n1 000102030405060708090a0b0c0d0e0f\n\n  2 FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF\n",
        )
        .unwrap();
        assert_eq!(ring.ids(), &[1, 2]);
        assert_eq!(ring.get(1), Some(&key()));
        assert_eq!(ring.newest(), Some(2));
        assert!(
            !alloc::format!("{ring:?}").contains("ff"),
            "Debug shows no key"
        );
        for (text, line) in [
            ("1 00", 1),
            ("\n0 000102030405060708090a0b0c0d0e0f", 2),
            ("256 000102030405060708090a0b0c0d0e0f", 1),
            ("1 000102030405060708090a0b0c0d0e0g", 1),
            (
                "1 000102030405060708090a0b0c0d0e0f\n1 000102030405060708090a0b0c0d0e0f",
                2,
            ),
            ("1", 1),
        ] {
            assert_eq!(parse_keyfile(text).unwrap_err().line, line, "{text:?}");
        }
    }
}
