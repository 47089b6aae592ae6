//! The Nano-consensus packet format: the UDP payload of every packet kind.
//!
//! All integers are big-endian. Every packet starts with the 12-byte common
//! header; the body layout depends on `kind`. `proto/README.md` has the same
//! layout as tables (that is the document hardware is built from; the
//! constants here are the ones it names).
//!
//! Parsing is zero-copy and allocation-free: [`parse`] validates every length
//! and reserved field up front, so the returned views (and the entry iterator
//! of a DECIDE) cannot fail afterwards. Emitting writes into a caller's buffer
//! ([`Packet::emit`]); with the `alloc` feature [`Packet::to_vec`] is a
//! convenience on top.

use core::fmt;

/// `"NC"`: the first two bytes of every Nano-consensus packet.
pub const MAGIC: u16 = 0x4E43;
/// The wire format version this crate speaks.
pub const VERSION: u8 = 1;
/// Size of the common header.
pub const HEADER_LEN: usize = 12;
/// Size of an entry header (client request inside a REQUEST or a DECIDE batch).
pub const ENTRY_HEADER_LEN: usize = 16;
/// Size of the DECIDE body header (before the entries).
pub const DECIDE_HEADER_LEN: usize = 24;
/// Size of a REPLY_OK / REPLY_NOT_LEADER body.
pub const REPLY_LEN: usize = 24;
/// Size of a JOIN_REQUEST body.
pub const JOIN_REQUEST_LEN: usize = 24;
/// Size of a RECOVER body.
pub const RECOVER_LEN: usize = 32;
/// RECOVER `vote` when the sender votes for nobody (yet).
pub const VOTE_NONE: u8 = 0xFF;
/// Size of the STATE_CHUNK body header (before the chunk data).
pub const STATE_CHUNK_HEADER_LEN: usize = 40;
/// Size of one register write inside a CONFIG entry's payload.
pub const CONFIG_ITEM_LEN: usize = 8;
/// `sender` value used by clients and by anything that is not a node.
pub const SENDER_NONE: u8 = 0xFF;
/// Size of the authentication tag after the body of a tagged packet (`key_id` ≠ 0).
pub const TAG_LEN: usize = 8;
/// Largest UDP payload a packet may have (a 9000-byte jumbo IP MTU minus IPv4 and UDP headers).
pub const MAX_PACKET_LEN: usize = 9000 - 20 - 8;

/// Byte offsets of the common header's fields, from the start of the packet (for code that
/// cannot call [`parse`], such as the XDP program; `parse` and `emit` use the same layout).
pub mod header_offset {
    /// `u16` [`MAGIC`](super::MAGIC).
    pub const MAGIC: usize = 0;
    /// `u8` [`VERSION`](super::VERSION).
    pub const VERSION: usize = 2;
    /// `u8` [`Kind`](super::Kind).
    pub const KIND: usize = 3;
    /// `u32` cluster id.
    pub const CLUSTER_ID: usize = 4;
    /// `u16` bytes after the common header.
    pub const BODY_LEN: usize = 8;
    /// `u8` sender node id.
    pub const SENDER: usize = 10;
    /// `u8` key id: 0 = untagged; k = an 8-byte tag with key k follows the body
    /// ([`crate::auth`]).
    pub const KEY_ID: usize = 11;
    /// The byte that was reserved before packets could be tagged: [`KEY_ID`], 0 on every
    /// untagged packet (host copies are never tagged).
    pub const RESERVED: usize = KEY_ID;
}

/// Byte offsets of the DECIDE body's fields, from the start of the body (packet offset
/// [`HEADER_LEN`]); the entries start at [`DECIDE_HEADER_LEN`](super::DECIDE_HEADER_LEN).
pub mod decide_offset {
    /// `u64` instance.
    pub const INSTANCE: usize = 0;
    /// `u32` epoch.
    pub const EPOCH: usize = 8;
    /// `u32` msg_seq.
    pub const MSG_SEQ: usize = 12;
    /// `u8` tree.
    pub const TREE: usize = 16;
    /// `u8` [`DecideKind`](super::DecideKind).
    pub const KIND: usize = 17;
    /// `u16` number of entries.
    pub const COUNT: usize = 18;
    /// `u32` reserved, 0.
    pub const RESERVED: usize = 20;
}

/// Byte offsets of an entry header's fields, from the start of the entry; the payload follows
/// at [`ENTRY_HEADER_LEN`](super::ENTRY_HEADER_LEN).
pub mod entry_offset {
    /// `u32` client id.
    pub const CLIENT_ID: usize = 0;
    /// `u16` payload length.
    pub const PAYLOAD_LEN: usize = 4;
    /// `u8` flags.
    pub const FLAGS: usize = 6;
    /// `u8` reserved, 0.
    pub const RESERVED: usize = 7;
    /// `u64` client sequence number (never 0).
    pub const SEQ: usize = 8;
}

/// Byte offsets of a CONFIG item's fields, from the start of the item.
pub mod config_item_offset {
    /// `u16` register address.
    pub const ADDR: usize = 0;
    /// `u16` reserved, 0.
    pub const RESERVED: usize = 2;
    /// `u32` value.
    pub const VALUE: usize = 4;
}

/// Entry flag: the payload is a list of register writes decided by a CONFIG instance.
pub const ENTRY_FLAG_CONFIG: u8 = 0x01;
/// STATE_CHUNK flag: this is the last chunk of the snapshot.
pub const CHUNK_FLAG_LAST: u8 = 0x01;
/// STATE_CHUNK flag: the member refuses the transfer; the data is a UTF-8 reason.
pub const CHUNK_FLAG_ERROR: u8 = 0x02;

/// Packet kinds (header byte 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Client → leader: one request to order.
    Request = 1,
    /// Leader → all nodes, one copy per tree: a decision (or heartbeat, START).
    Decide = 2,
    /// Leader → client: the request was decided in `instance`.
    ReplyOk = 3,
    /// Any node that is not the leader → client: go to `leader`.
    ReplyNotLeader = 4,
    /// Joining node → member: send me a state snapshot.
    JoinRequest = 5,
    /// Member → joining node: one chunk of the snapshot.
    StateChunk = 6,
    /// Node → every node, on every tree: a FAULT notice (round 0) or a recovery report and vote.
    Recover = 7,
}

impl Kind {
    /// Decode the kind byte.
    pub fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Request,
            2 => Kind::Decide,
            3 => Kind::ReplyOk,
            4 => Kind::ReplyNotLeader,
            5 => Kind::JoinRequest,
            6 => Kind::StateChunk,
            7 => Kind::Recover,
            _ => return None,
        })
    }
}

/// What a DECIDE carries (DECIDE body byte 17).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DecideKind {
    /// ⊥: no value; the instance number repeats (Alg. 3 lines 14–16).
    Heartbeat = 0,
    /// A batch of one or more client requests, decided as one instance.
    Batch = 1,
    /// The initial synchronisation message of §5.2.
    Start = 2,
    /// One register-change entry, decided as one instance (e.g. a larger timeout).
    Config = 3,
}

impl DecideKind {
    /// Decode the decide-kind byte.
    pub fn from_u8(v: u8) -> Option<DecideKind> {
        Some(match v {
            0 => DecideKind::Heartbeat,
            1 => DecideKind::Batch,
            2 => DecideKind::Start,
            3 => DecideKind::Config,
            _ => return None,
        })
    }

    /// Whether deciding this kind consumes an instance number (batches and CONFIG do).
    pub fn is_value(self) -> bool {
        matches!(self, DecideKind::Batch | DecideKind::Config)
    }
}

/// Why a packet was refused. `Foreign` means "not ours" (other magic, version
/// or cluster); `Malformed` means "claims to be ours but breaks the format".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Not a packet of this cluster and version; `what` says which check failed.
    Foreign(&'static str),
    /// A packet of ours that breaks the layout; `what` names the field.
    Malformed(&'static str),
}

impl ParseError {
    /// The field or check that failed.
    pub fn what(&self) -> &'static str {
        match self {
            ParseError::Foreign(w) | ParseError::Malformed(w) => w,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Foreign(w) => write!(f, "foreign packet: {w}"),
            ParseError::Malformed(w) => write!(f, "malformed packet: {w}"),
        }
    }
}

/// Why a packet could not be emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitError {
    /// The destination buffer is shorter than `needed`.
    BufferTooSmall {
        /// Bytes the packet needs.
        needed: usize,
    },
    /// A field does not fit the format; names the field.
    Invalid(&'static str),
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmitError::BufferTooSmall { needed } => {
                write!(f, "buffer too small: need {needed} bytes")
            }
            EmitError::Invalid(w) => write!(f, "cannot emit: {w}"),
        }
    }
}

/// The common header, as parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Packet kind.
    pub kind: Kind,
    /// Cluster the packet belongs to.
    pub cluster_id: u32,
    /// Node id of the sender, or [`SENDER_NONE`].
    pub sender: u8,
    /// 0: untagged; k: tagged with key k (the tag is checked by [`crate::auth::verify`], not
    /// by [`parse`]).
    pub key_id: u8,
}

/// One client request: inside a REQUEST packet, or one entry of a DECIDE batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry<'a> {
    /// Client identity (unique per client process).
    pub client_id: u32,
    /// Per-client sequence number; (client_id, seq) identifies a request.
    pub seq: u64,
    /// Entry flags ([`ENTRY_FLAG_CONFIG`]).
    pub flags: u8,
    /// Opaque application payload (or config items when the CONFIG flag is set).
    pub payload: &'a [u8],
}

impl<'a> Entry<'a> {
    /// Bytes this entry takes on the wire.
    pub fn wire_len(&self) -> usize {
        ENTRY_HEADER_LEN + self.payload.len()
    }

    /// Whether this entry is a register change.
    pub fn is_config(&self) -> bool {
        self.flags & ENTRY_FLAG_CONFIG != 0
    }

    /// The config items of a CONFIG entry (empty iterator for others).
    pub fn config_items(&self) -> ConfigItems<'a> {
        ConfigItems {
            rest: if self.is_config() { self.payload } else { &[] },
        }
    }

    fn parse(b: &'a [u8]) -> Result<(Entry<'a>, usize), ParseError> {
        if b.len() < ENTRY_HEADER_LEN {
            return Err(ParseError::Malformed("entry header truncated"));
        }
        let client_id = be32(b, 0);
        let len = be16(b, 4) as usize;
        let flags = b[6];
        if flags & !ENTRY_FLAG_CONFIG != 0 {
            return Err(ParseError::Malformed("entry flags: unknown bit set"));
        }
        if b[7] != 0 {
            return Err(ParseError::Malformed("entry reserved byte not zero"));
        }
        let seq = be64(b, 8);
        if seq == 0 {
            return Err(ParseError::Malformed(
                "entry seq 0 is reserved (client sequence numbers start at 1)",
            ));
        }
        let end = ENTRY_HEADER_LEN + len;
        if b.len() < end {
            return Err(ParseError::Malformed("entry payload_len exceeds packet"));
        }
        let payload = &b[ENTRY_HEADER_LEN..end];
        if flags & ENTRY_FLAG_CONFIG != 0 {
            check_config_payload(payload)?;
        }

        Ok((
            Entry {
                client_id,
                seq,
                flags,
                payload,
            },
            end,
        ))
    }

    fn emit_into(&self, b: &mut [u8]) -> Result<usize, EmitError> {
        let len = u16::try_from(self.payload.len())
            .map_err(|_| EmitError::Invalid("entry payload longer than 65535"))?;
        if self.flags & !ENTRY_FLAG_CONFIG != 0 {
            return Err(EmitError::Invalid("entry flags: unknown bit set"));
        }
        if self.seq == 0 {
            return Err(EmitError::Invalid("entry seq 0 is reserved"));
        }
        if self.is_config() {
            check_config_payload(self.payload).map_err(|e| EmitError::Invalid(e.what()))?;
        }
        let n = self.wire_len();
        need(b, n)?;
        put32(b, 0, self.client_id);
        put16(b, 4, len);
        b[6] = self.flags;
        b[7] = 0;
        put64(b, 8, self.seq);
        b[ENTRY_HEADER_LEN..n].copy_from_slice(self.payload);
        Ok(n)
    }
}

/// One register write carried by a CONFIG entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigItem {
    /// Register address (see [`crate::regs`]).
    pub addr: u16,
    /// New value.
    pub value: u32,
}

impl ConfigItem {
    /// The 8 wire bytes of this item.
    pub fn to_bytes(self) -> [u8; CONFIG_ITEM_LEN] {
        let mut b = [0u8; CONFIG_ITEM_LEN];
        put16(&mut b, 0, self.addr);
        put32(&mut b, 4, self.value);
        b
    }
}

/// Iterator over the items of a CONFIG entry (already validated).
#[derive(Clone, Debug)]
pub struct ConfigItems<'a> {
    rest: &'a [u8],
}

impl Iterator for ConfigItems<'_> {
    type Item = ConfigItem;
    fn next(&mut self) -> Option<ConfigItem> {
        if self.rest.len() < CONFIG_ITEM_LEN {
            return None;
        }
        let (item, rest) = self.rest.split_at(CONFIG_ITEM_LEN);
        self.rest = rest;
        Some(ConfigItem {
            addr: be16(item, 0),
            value: be32(item, 4),
        })
    }
}

/// The fixed fields of a DECIDE (everything but the entries).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DecideMeta {
    /// Consensus instance. Values decide it; heartbeats and START carry the
    /// next instance to be decided (it repeats until a value is decided).
    pub instance: u64,
    /// Leader counter: incremented at every timeout; leader = epoch mod n.
    pub epoch: u32,
    /// The leader's send counter within this epoch (0 for its first message).
    pub msg_seq: u32,
    /// Which redundant tree this copy travels on (0..|G|).
    pub tree: u8,
    /// What the message carries.
    pub kind: DecideKind,
}

/// A parsed DECIDE: the fixed fields and a view of the validated entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decide<'a> {
    /// Fixed fields.
    pub meta: DecideMeta,
    /// Number of entries.
    pub count: u16,
    /// The raw entries (validated by [`parse`]).
    pub entries_raw: &'a [u8],
}

impl<'a> Decide<'a> {
    /// Iterate the entries in order.
    pub fn entries(&self) -> Entries<'a> {
        Entries {
            rest: self.entries_raw,
            left: self.count,
        }
    }
}

/// Iterator over the entries of a parsed DECIDE.
#[derive(Clone, Debug)]
pub struct Entries<'a> {
    rest: &'a [u8],
    left: u16,
}

impl<'a> Entries<'a> {
    /// The entries of a DECIDE kept as raw bytes (a decision log stores `entries_raw` and
    /// `count`). Stops at the first entry that does not parse.
    pub fn of(entries_raw: &'a [u8], count: u16) -> Entries<'a> {
        Entries {
            rest: entries_raw,
            left: count,
        }
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Entry<'a>;
    fn next(&mut self) -> Option<Entry<'a>> {
        if self.left == 0 {
            return None;
        }
        // Validated at parse time; a failure here would be a bug in `parse`.
        let (e, used) = Entry::parse(self.rest).ok()?;
        self.rest = &self.rest[used..];
        self.left -= 1;
        Some(e)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for Entries<'_> {}

/// Leader → client: request (client_id, seq) was decided in `instance` at position `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplyOk {
    /// Client the reply is for.
    pub client_id: u32,
    /// The request's sequence number.
    pub seq: u64,
    /// Instance that decided it.
    pub instance: u64,
    /// Position of the request inside the decided batch.
    pub index: u16,
}

/// Not-leader → client: send requests to `leader` (known at `epoch`), or [`SENDER_NONE`] if unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplyNotLeader {
    /// Client the reply is for.
    pub client_id: u32,
    /// The request's sequence number.
    pub seq: u64,
    /// The node this node believes is leader.
    pub leader: u8,
    /// The epoch of that belief.
    pub epoch: u32,
}

/// Joining node → member: ask for a state snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JoinRequest {
    /// Identifies the transfer; echoed in every chunk.
    pub transfer_id: u32,
    /// Largest chunk data the joiner accepts.
    pub max_chunk: u32,
    /// The snapshot must include at least every instance up to this one.
    pub min_instance: u64,
    /// The joiner already holds every instance up to this one (0: none): the member sends
    /// only the later ones (a node coming back after a safe exit fetches its gap, not the log).
    pub have: u64,
}

/// Member → joining node: one chunk of a snapshot taken after `instance`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateChunk<'a> {
    /// Echo of the join request's transfer id.
    pub transfer_id: u32,
    /// [`CHUNK_FLAG_LAST`], [`CHUNK_FLAG_ERROR`].
    pub flags: u8,
    /// The snapshot includes every decision up to and including this instance.
    pub instance: u64,
    /// Byte offset of `data` in the snapshot.
    pub offset: u64,
    /// Total snapshot length.
    pub total_len: u64,
    /// CRC-32 (ISO-HDLC, as zlib) of the whole snapshot.
    pub crc32: u32,
    /// The member's `timeout` register when it took the snapshot: the joining node raises its own
    /// to at least this before it activates (CONFIG instances up to `instance` are in the snapshot,
    /// not in the joiner's log).
    pub timeout: u32,
    /// This chunk's bytes.
    pub data: &'a [u8],
}

/// A FAULT notice or a recovery report (beyond the paper; see the recovery section of
/// proto's README). Sent on every tree; receivers take it from whichever tree brings it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recover {
    /// 0: a FAULT notice ("I made the safe exit"); ≥ 1: the recovery round, which is also the
    /// epoch the cluster restarts in if this round elects its candidate (`round mod n`).
    pub round: u32,
    /// The sender's epoch when it made the safe exit.
    pub epoch: u32,
    /// The sender's last decided instance with no gap before it.
    pub lins: u64,
    /// The highest instance the sender decided (≥ `lins`; above it when the sender rejoined
    /// a stream after a gap in its log and delivered beyond the gap).
    pub top: u64,
    /// The node the sender votes for in `round`, or [`VOTE_NONE`].
    pub vote: u8,
    /// The sender's timeout register. A node that made the safe exit before a CONFIG raised
    /// the timeout still runs the old one; a leader that hears this bounds its lease by it.
    pub timeout: u32,
}

/// Every packet kind, parsed (borrowing from the input) or ready to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packet<'a> {
    /// A client request.
    Request(Entry<'a>),
    /// A decision / heartbeat / START copy.
    Decide(Decide<'a>),
    /// OK reply.
    ReplyOk(ReplyOk),
    /// NOT_LEADER reply.
    ReplyNotLeader(ReplyNotLeader),
    /// Join request.
    JoinRequest(JoinRequest),
    /// Snapshot chunk.
    StateChunk(StateChunk<'a>),
    /// FAULT notice / recovery report.
    Recover(Recover),
}

impl<'a> Packet<'a> {
    /// The kind byte of this packet.
    pub fn kind(&self) -> Kind {
        match self {
            Packet::Request(_) => Kind::Request,
            Packet::Decide(_) => Kind::Decide,
            Packet::ReplyOk(_) => Kind::ReplyOk,
            Packet::ReplyNotLeader(_) => Kind::ReplyNotLeader,
            Packet::JoinRequest(_) => Kind::JoinRequest,
            Packet::StateChunk(_) => Kind::StateChunk,
            Packet::Recover(_) => Kind::Recover,
        }
    }

    /// Bytes of the body (after the common header).
    pub fn body_len(&self) -> usize {
        match self {
            Packet::Request(e) => e.wire_len(),
            Packet::Decide(d) => DECIDE_HEADER_LEN + d.entries_raw.len(),
            Packet::ReplyOk(_) | Packet::ReplyNotLeader(_) => REPLY_LEN,
            Packet::JoinRequest(_) => JOIN_REQUEST_LEN,
            Packet::StateChunk(c) => STATE_CHUNK_HEADER_LEN + c.data.len(),
            Packet::Recover(_) => RECOVER_LEN,
        }
    }

    /// Total bytes on the wire (header + body).
    pub fn wire_len(&self) -> usize {
        HEADER_LEN + self.body_len()
    }

    /// Write header and body into `buf`; returns the bytes written.
    ///
    /// The packet is validated the same way [`parse`] validates, so anything
    /// this writes parses back to the same value.
    pub fn emit(&self, cluster_id: u32, sender: u8, buf: &mut [u8]) -> Result<usize, EmitError> {
        let n = self.wire_len();
        if n > MAX_PACKET_LEN {
            return Err(EmitError::Invalid("packet longer than MAX_PACKET_LEN"));
        }
        need(buf, n)?;
        put16(buf, 0, MAGIC);
        buf[2] = VERSION;
        buf[3] = self.kind() as u8;
        put32(buf, 4, cluster_id);
        put16(buf, 8, (n - HEADER_LEN) as u16);
        buf[10] = sender;
        buf[11] = 0;
        let b = &mut buf[HEADER_LEN..n];
        match self {
            Packet::Request(e) => {
                e.emit_into(b)?;
            }
            Packet::Decide(d) => {
                check_decide(&d.meta, d.count, d.entries_raw)
                    .map_err(|e| EmitError::Invalid(e.what()))?;
                put64(b, 0, d.meta.instance);
                put32(b, 8, d.meta.epoch);
                put32(b, 12, d.meta.msg_seq);
                b[16] = d.meta.tree;
                b[17] = d.meta.kind as u8;
                put16(b, 18, d.count);
                put32(b, 20, 0);
                b[DECIDE_HEADER_LEN..].copy_from_slice(d.entries_raw);
            }
            Packet::ReplyOk(r) => {
                put32(b, 0, r.client_id);
                put16(b, 4, r.index);
                put16(b, 6, 0);
                put64(b, 8, r.seq);
                put64(b, 16, r.instance);
            }
            Packet::ReplyNotLeader(r) => {
                put32(b, 0, r.client_id);
                b[4] = r.leader;
                b[5] = 0;
                put16(b, 6, 0);
                put64(b, 8, r.seq);
                put32(b, 16, r.epoch);
                put32(b, 20, 0);
            }
            Packet::JoinRequest(j) => {
                put32(b, 0, j.transfer_id);
                put32(b, 4, j.max_chunk);
                put64(b, 8, j.min_instance);
                put64(b, 16, j.have);
            }
            Packet::StateChunk(c) => {
                check_chunk(c).map_err(|e| EmitError::Invalid(e.what()))?;
                put32(b, 0, c.transfer_id);
                put16(b, 4, c.data.len() as u16);
                b[6] = c.flags;
                b[7] = 0;
                put64(b, 8, c.instance);
                put64(b, 16, c.offset);
                put64(b, 24, c.total_len);
                put32(b, 32, c.crc32);
                put32(b, 36, c.timeout);
                b[STATE_CHUNK_HEADER_LEN..].copy_from_slice(c.data);
            }
            Packet::Recover(r) => {
                put32(b, 0, r.round);
                put32(b, 4, r.epoch);
                put64(b, 8, r.lins);
                put64(b, 16, r.top);
                b[24] = r.vote;
                b[25..28].fill(0);
                put32(b, 28, r.timeout);
            }
        }
        Ok(n)
    }

    /// [`Packet::emit`] into a new vector.
    #[cfg(feature = "alloc")]
    pub fn to_vec(&self, cluster_id: u32, sender: u8) -> Result<alloc::vec::Vec<u8>, EmitError> {
        let mut v = alloc::vec![0u8; self.wire_len()];
        self.emit(cluster_id, sender, &mut v)?;
        Ok(v)
    }
}

/// Validate and view `bytes` (a UDP payload) as a Nano-consensus packet.
///
/// `cluster_id`: the cluster this receiver belongs to; packets of any other
/// cluster are `Foreign`. The whole input must be the packet: trailing bytes
/// are malformed (the UDP length, not the Ethernet frame, delimits it).
pub fn parse(bytes: &[u8], cluster_id: u32) -> Result<(Header, Packet<'_>), ParseError> {
    if bytes.len() < 4 {
        return Err(ParseError::Foreign("shorter than magic and version"));
    }
    if bytes.len() > MAX_PACKET_LEN {
        return Err(ParseError::Malformed("packet longer than MAX_PACKET_LEN"));
    }
    if be16(bytes, 0) != MAGIC {
        return Err(ParseError::Foreign("magic"));
    }
    if bytes[2] != VERSION {
        return Err(ParseError::Foreign("version"));
    }
    if bytes.len() < HEADER_LEN {
        return Err(ParseError::Malformed("header truncated"));
    }
    if be32(bytes, 4) != cluster_id {
        return Err(ParseError::Foreign("cluster_id"));
    }
    let kind = Kind::from_u8(bytes[3]).ok_or(ParseError::Malformed("kind"))?;
    let body_len = be16(bytes, 8) as usize;
    let key_id = bytes[header_offset::KEY_ID];
    let tag = if key_id == 0 { 0 } else { TAG_LEN };
    if bytes.len() != HEADER_LEN + body_len + tag {
        return Err(ParseError::Malformed(if tag == 0 {
            "body_len does not match the packet length"
        } else {
            "body_len + tag does not match the packet length"
        }));
    }
    let header = Header {
        kind,
        cluster_id,
        sender: bytes[10],
        key_id,
    };
    let b = &bytes[HEADER_LEN..HEADER_LEN + body_len];
    let packet = match kind {
        Kind::Request => {
            let (e, used) = Entry::parse(b)?;
            if used != b.len() {
                return Err(ParseError::Malformed("request has bytes after its entry"));
            }
            Packet::Request(e)
        }
        Kind::Decide => {
            if b.len() < DECIDE_HEADER_LEN {
                return Err(ParseError::Malformed("decide header truncated"));
            }
            if be32(b, 20) != 0 {
                return Err(ParseError::Malformed("decide reserved field not zero"));
            }
            let meta = DecideMeta {
                instance: be64(b, 0),
                epoch: be32(b, 8),
                msg_seq: be32(b, 12),
                tree: b[16],
                kind: DecideKind::from_u8(b[17]).ok_or(ParseError::Malformed("decide kind"))?,
            };
            let count = be16(b, 18);
            let entries_raw = &b[DECIDE_HEADER_LEN..];
            check_decide(&meta, count, entries_raw)?;
            Packet::Decide(Decide {
                meta,
                count,
                entries_raw,
            })
        }
        Kind::ReplyOk => {
            fixed_len(b, REPLY_LEN, "reply_ok length")?;
            if be16(b, 6) != 0 {
                return Err(ParseError::Malformed("reply_ok reserved field not zero"));
            }
            Packet::ReplyOk(ReplyOk {
                client_id: be32(b, 0),
                index: be16(b, 4),
                seq: be64(b, 8),
                instance: be64(b, 16),
            })
        }
        Kind::ReplyNotLeader => {
            fixed_len(b, REPLY_LEN, "reply_not_leader length")?;
            if b[5] != 0 || be16(b, 6) != 0 || be32(b, 20) != 0 {
                return Err(ParseError::Malformed(
                    "reply_not_leader reserved field not zero",
                ));
            }
            Packet::ReplyNotLeader(ReplyNotLeader {
                client_id: be32(b, 0),
                leader: b[4],
                seq: be64(b, 8),
                epoch: be32(b, 16),
            })
        }
        Kind::JoinRequest => {
            fixed_len(b, JOIN_REQUEST_LEN, "join_request length")?;
            Packet::JoinRequest(JoinRequest {
                transfer_id: be32(b, 0),
                max_chunk: be32(b, 4),
                min_instance: be64(b, 8),
                have: be64(b, 16),
            })
        }
        Kind::StateChunk => {
            if b.len() < STATE_CHUNK_HEADER_LEN {
                return Err(ParseError::Malformed("state_chunk header truncated"));
            }
            let len = be16(b, 4) as usize;
            if b.len() != STATE_CHUNK_HEADER_LEN + len {
                return Err(ParseError::Malformed(
                    "state_chunk data_len does not match body_len",
                ));
            }
            if b[7] != 0 {
                return Err(ParseError::Malformed("state_chunk reserved field not zero"));
            }
            let c = StateChunk {
                transfer_id: be32(b, 0),
                flags: b[6],
                instance: be64(b, 8),
                offset: be64(b, 16),
                total_len: be64(b, 24),
                crc32: be32(b, 32),
                timeout: be32(b, 36),
                data: &b[STATE_CHUNK_HEADER_LEN..],
            };
            check_chunk(&c)?;
            Packet::StateChunk(c)
        }
        Kind::Recover => {
            fixed_len(b, RECOVER_LEN, "recover length")?;
            if b[25..28].iter().any(|&x| x != 0) {
                return Err(ParseError::Malformed("recover reserved field not zero"));
            }
            let (lins, top) = (be64(b, 8), be64(b, 16));
            if top < lins {
                return Err(ParseError::Malformed("recover top below lins"));
            }
            Packet::Recover(Recover {
                round: be32(b, 0),
                epoch: be32(b, 4),
                lins,
                top,
                vote: b[24],
                timeout: be32(b, 28),
            })
        }
    };
    Ok((header, packet))
}

/// The rules a DECIDE must follow (shared by parse and emit).
fn check_decide(meta: &DecideMeta, count: u16, raw: &[u8]) -> Result<(), ParseError> {
    match meta.kind {
        DecideKind::Heartbeat | DecideKind::Start => {
            if count != 0 || !raw.is_empty() {
                return Err(ParseError::Malformed(
                    "heartbeat/start must carry no entries",
                ));
            }
        }
        DecideKind::Batch => {
            if count == 0 {
                return Err(ParseError::Malformed("batch must carry at least one entry"));
            }
        }
        DecideKind::Config => {
            if count != 1 {
                return Err(ParseError::Malformed("config must carry exactly one entry"));
            }
        }
    }
    let mut rest = raw;
    for _ in 0..count {
        let (e, used) = Entry::parse(rest)?;
        match (meta.kind, e.is_config()) {
            (DecideKind::Batch, true) => {
                return Err(ParseError::Malformed("batch entry has the config flag"));
            }
            (DecideKind::Config, false) => {
                return Err(ParseError::Malformed("config entry lacks the config flag"));
            }
            _ => {}
        }
        rest = &rest[used..];
    }
    if !rest.is_empty() {
        return Err(ParseError::Malformed(
            "decide has bytes after its last entry",
        ));
    }
    Ok(())
}

/// A CONFIG entry's payload: a non-empty list of 8-byte items with zero reserved fields.
fn check_config_payload(payload: &[u8]) -> Result<(), ParseError> {
    if payload.is_empty() || !payload.len().is_multiple_of(CONFIG_ITEM_LEN) {
        return Err(ParseError::Malformed(
            "config entry payload_len must be a non-zero multiple of 8",
        ));
    }
    if payload
        .chunks_exact(CONFIG_ITEM_LEN)
        .any(|item| be16(item, 2) != 0)
    {
        return Err(ParseError::Malformed("config item reserved field not zero"));
    }
    Ok(())
}

fn check_chunk(c: &StateChunk<'_>) -> Result<(), ParseError> {
    if c.flags & !(CHUNK_FLAG_LAST | CHUNK_FLAG_ERROR) != 0 {
        return Err(ParseError::Malformed("state_chunk flags: unknown bit set"));
    }
    if c.data.len() > u16::MAX as usize {
        return Err(ParseError::Malformed("state_chunk data longer than 65535"));
    }
    if c.flags & CHUNK_FLAG_ERROR == 0 {
        let end = c.offset.checked_add(c.data.len() as u64);
        match end {
            Some(end) if end <= c.total_len => {
                if c.flags & CHUNK_FLAG_LAST != 0 && end != c.total_len {
                    return Err(ParseError::Malformed(
                        "state_chunk: last chunk does not end at total_len",
                    ));
                }
            }
            _ => {
                return Err(ParseError::Malformed(
                    "state_chunk: offset + data_len exceeds total_len",
                ));
            }
        }
    }
    Ok(())
}

fn fixed_len(b: &[u8], n: usize, what: &'static str) -> Result<(), ParseError> {
    if b.len() == n {
        Ok(())
    } else {
        Err(ParseError::Malformed(what))
    }
}

/// Writes the entries of a batch into `buf` (the bytes a [`Decide`]'s `entries_raw` holds).
/// Returns the bytes written.
pub fn emit_entries<'e>(
    entries: impl IntoIterator<Item = &'e Entry<'e>>,
    buf: &mut [u8],
) -> Result<usize, EmitError> {
    let mut at = 0;
    for e in entries {
        at += e.emit_into(&mut buf[at..])?;
    }
    Ok(at)
}

fn need(b: &[u8], n: usize) -> Result<(), EmitError> {
    if b.len() < n {
        Err(EmitError::BufferTooSmall { needed: n })
    } else {
        Ok(())
    }
}

pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
pub(crate) fn be64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(x)
}
fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}
fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}
fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeat_round_trip_and_layout() {
        let p = Packet::Decide(Decide {
            meta: DecideMeta {
                instance: 7,
                epoch: 2,
                msg_seq: 9,
                tree: 1,
                kind: DecideKind::Heartbeat,
            },
            count: 0,
            entries_raw: &[],
        });
        let mut buf = [0u8; 64];
        let n = p.emit(0xAABBCCDD, 3, &mut buf).unwrap();
        assert_eq!(n, HEADER_LEN + DECIDE_HEADER_LEN);
        assert_eq!(
            &buf[..12],
            &[0x4E, 0x43, 1, 2, 0xAA, 0xBB, 0xCC, 0xDD, 0, 24, 3, 0]
        );
        let (h, q) = parse(&buf[..n], 0xAABBCCDD).unwrap();
        assert_eq!(h.sender, 3);
        assert_eq!(q, p);
        assert_eq!(parse(&buf[..n], 1), Err(ParseError::Foreign("cluster_id")));
        assert!(matches!(
            parse(&buf[..n - 1], 0xAABBCCDD),
            Err(ParseError::Malformed(_))
        ));
    }

    #[test]
    fn batch_entries_iterate_in_order() {
        let es = [
            Entry {
                client_id: 1,
                seq: 10,
                flags: 0,
                payload: b"a",
            },
            Entry {
                client_id: 2,
                seq: 11,
                flags: 0,
                payload: b"bcd",
            },
        ];
        let mut raw = [0u8; 64];
        let rn = emit_entries(es.iter(), &mut raw).unwrap();
        let p = Packet::Decide(Decide {
            meta: DecideMeta {
                instance: 1,
                epoch: 0,
                msg_seq: 0,
                tree: 0,
                kind: DecideKind::Batch,
            },
            count: 2,
            entries_raw: &raw[..rn],
        });
        let mut buf = [0u8; 128];
        let n = p.emit(5, 0, &mut buf).unwrap();
        let (_, Packet::Decide(d)) = parse(&buf[..n], 5).unwrap() else {
            panic!()
        };
        let got: [Entry<'_>; 2] = {
            let mut it = d.entries();
            [it.next().unwrap(), it.next().unwrap()]
        };
        assert_eq!(got, es);
    }

    #[test]
    fn published_offsets_match_emit() {
        let e = Entry {
            client_id: 0x0102_0304,
            seq: 0x1112_1314_1516_1718,
            flags: ENTRY_FLAG_CONFIG,
            payload: &ConfigItem {
                addr: 0x2122,
                value: 0x3132_3334,
            }
            .to_bytes(),
        };
        let mut raw = [0u8; 64];
        let rn = emit_entries([&e], &mut raw).unwrap();
        let p = Packet::Decide(Decide {
            meta: DecideMeta {
                instance: 0x4142_4344_4546_4748,
                epoch: 0x5152_5354,
                msg_seq: 0x6162_6364,
                tree: 0x71,
                kind: DecideKind::Config,
            },
            count: 1,
            entries_raw: &raw[..rn],
        });
        let mut buf = [0u8; 128];
        let n = p.emit(0xA1A2_A3A4, 0x7E, &mut buf).unwrap();
        let b = &buf[..n];
        assert_eq!(be16(b, header_offset::MAGIC), MAGIC);
        assert_eq!(b[header_offset::VERSION], VERSION);
        assert_eq!(b[header_offset::KIND], Kind::Decide as u8);
        assert_eq!(be32(b, header_offset::CLUSTER_ID), 0xA1A2_A3A4);
        assert_eq!(be16(b, header_offset::BODY_LEN) as usize, n - HEADER_LEN);
        assert_eq!(b[header_offset::SENDER], 0x7E);
        assert_eq!(b[header_offset::RESERVED], 0);
        let d = &b[HEADER_LEN..];
        assert_eq!(be64(d, decide_offset::INSTANCE), 0x4142_4344_4546_4748);
        assert_eq!(be32(d, decide_offset::EPOCH), 0x5152_5354);
        assert_eq!(be32(d, decide_offset::MSG_SEQ), 0x6162_6364);
        assert_eq!(d[decide_offset::TREE], 0x71);
        assert_eq!(d[decide_offset::KIND], DecideKind::Config as u8);
        assert_eq!(be16(d, decide_offset::COUNT), 1);
        assert_eq!(be32(d, decide_offset::RESERVED), 0);
        let en = &d[DECIDE_HEADER_LEN..];
        assert_eq!(be32(en, entry_offset::CLIENT_ID), 0x0102_0304);
        assert_eq!(be16(en, entry_offset::PAYLOAD_LEN), 8);
        assert_eq!(en[entry_offset::FLAGS], ENTRY_FLAG_CONFIG);
        assert_eq!(en[entry_offset::RESERVED], 0);
        assert_eq!(be64(en, entry_offset::SEQ), 0x1112_1314_1516_1718);
        let item = &en[ENTRY_HEADER_LEN..];
        assert_eq!(be16(item, config_item_offset::ADDR), 0x2122);
        assert_eq!(be16(item, config_item_offset::RESERVED), 0);
        assert_eq!(be32(item, config_item_offset::VALUE), 0x3132_3334);
    }

    #[test]
    fn batch_with_wrong_count_is_malformed() {
        let e = Entry {
            client_id: 1,
            seq: 1,
            flags: 0,
            payload: b"x",
        };
        let mut raw = [0u8; 32];
        let rn = emit_entries([&e], &mut raw).unwrap();
        let p = Packet::Decide(Decide {
            meta: DecideMeta {
                instance: 1,
                epoch: 0,
                msg_seq: 0,
                tree: 0,
                kind: DecideKind::Batch,
            },
            count: 2,
            entries_raw: &raw[..rn],
        });
        let mut buf = [0u8; 128];
        assert!(matches!(p.emit(5, 0, &mut buf), Err(EmitError::Invalid(_))));
    }
}
