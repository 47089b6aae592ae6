//! xdp-log, kernel side: recognise the DECIDE frames of one cluster on one UDP port and write
//! each decision into the log (array indexed by instance mod capacity) and the ring buffer.
//! A DECIDE not heard (members only: its IPv4 source is not on the allow-list, or its sender is
//! not the leader of its epoch) is counted and dropped. Everything else passes. The layout of the maps is `xdp-log/common`; the packet format is
//! `proto` (only its constants are used here: the checks mirror `proto::wire::parse`).
//!
//! Unsafe is needed for every packet and map access in eBPF (raw pointers checked by the
//! verifier, and the kernel helpers); this crate is outside the root workspace, whose
//! `unsafe_code = "forbid"` therefore does not apply, and every pointer use below is preceded by
//! the bounds check the verifier needs.
#![no_std]
#![no_main]

use aya_ebpf::{
    bindings::{BPF_F_MMAPABLE, xdp_action},
    helpers::generated::{bpf_csum_diff, bpf_get_smp_processor_id, bpf_xdp_load_bytes},
    macros::{map, xdp},
    maps::{Array, HashMap, PerCpuArray, RingBuf},
    programs::XdpContext,
};
use common::{
    BELL_BYTES, LOG_CAPACITY, LogSlot, MAX_SOURCES, RING_BYTES, SLOT_DATA_LEN, SLOT_HEADER_LEN,
    config, counter, source_key, state,
};
use core::ptr::{addr_of_mut, read_volatile, write_volatile};
use proto::frame::{ETH_LEN, IPV4_LEN, PAYLOAD_OFFSET, UDP_LEN};
use proto::wire::{
    CONFIG_ITEM_LEN, DECIDE_HEADER_LEN, DecideKind, ENTRY_FLAG_CONFIG, ENTRY_HEADER_LEN,
    HEADER_LEN, Kind, MAGIC, MAX_PACKET_LEN, VERSION, config_item_offset, decide_offset,
    entry_offset, header_offset,
};

#[map]
static NCXDP_LOG: Array<LogSlot> = Array::with_max_entries(LOG_CAPACITY, BPF_F_MMAPABLE);
#[map]
static NCXDP_RING: RingBuf = RingBuf::with_byte_size(RING_BYTES, 0);
#[map]
static NCXDP_BELL: RingBuf = RingBuf::with_byte_size(BELL_BYTES, 0);
#[map]
static NCXDP_STATS: PerCpuArray<u64> = PerCpuArray::with_max_entries(counter::COUNT, 0);
#[map]
static NCXDP_CONFIG: Array<u32> = Array::with_max_entries(config::COUNT, 0);
#[map]
static NCXDP_STATE: Array<u64> = Array::with_max_entries(state::COUNT, 0);
#[map]
static NCXDP_SOURCES: HashMap<u32, u8> = HashMap::with_max_entries(MAX_SOURCES, 0);

/// Per-CPU scratch copy of the UDP payload: validated here before the log slot is touched,
/// so a malformed frame never damages a slot a reader has not read yet.
#[repr(C)]
struct Scratch {
    buf: [u8; SCRATCH_LEN + SCRATCH_SLACK],
}
/// Power of two > `MAX_PACKET_LEN`: offsets are masked with `SCRATCH_LEN - 1` for the verifier.
const SCRATCH_LEN: usize = 16384;
/// Room after the masked offset for the widest read (a 512-byte checksum chunk).
const SCRATCH_SLACK: usize = 1024;
const MASK: usize = SCRATCH_LEN - 1;
const _: () = assert!(SCRATCH_LEN > MAX_PACKET_LEN + 8 && SLOT_DATA_LEN >= MAX_PACKET_LEN);

#[map]
static NCXDP_SCRATCH: PerCpuArray<Scratch> = PerCpuArray::with_max_entries(1, 0);

/// Most entries a DECIDE of `MAX_PACKET_LEN` bytes can hold.
const MAX_ENTRIES: u32 =
    ((MAX_PACKET_LEN - HEADER_LEN - DECIDE_HEADER_LEN) / ENTRY_HEADER_LEN) as u32;
/// Most items a CONFIG entry can hold.
const MAX_ITEMS: u32 = (MAX_PACKET_LEN / CONFIG_ITEM_LEN) as u32;
/// bpf_csum_diff takes at most 512 bytes per call.
const CSUM_CHUNK: usize = 512;
const MAX_CSUM_CHUNKS: u32 = SCRATCH_LEN.div_ceil(CSUM_CHUNK) as u32;

const ETHERTYPE_IPV4: u16 = 0x0800;
const IPPROTO_UDP: u8 = 17;

/// What to do with a frame.
enum Verdict {
    /// Not ours, or ours but not valid: the host stack sees it.
    Pass,
    /// A valid DECIDE of ours: pass it, or drop it if the consume flag is set.
    Decide,
    /// A valid DECIDE of our cluster that is not heard (members only): dropped, so no host
    /// socket behind this interface gets a forged decision either.
    Drop,
}

#[xdp]
pub fn nc_xdp_log(ctx: XdpContext) -> u32 {
    count(counter::FRAMES);
    match classify(&ctx) {
        Verdict::Pass => xdp_action::XDP_PASS,
        Verdict::Drop => xdp_action::XDP_DROP,
        Verdict::Decide => {
            if cfg(config::FLAGS) & config::FLAG_CONSUME != 0 {
                count(counter::CONSUMED);
                xdp_action::XDP_DROP
            } else {
                xdp_action::XDP_PASS
            }
        }
    }
}

#[inline(always)]
fn count(idx: u32) {
    if let Some(p) = NCXDP_STATS.get_ptr_mut(idx) {
        // SAFETY: a per-CPU map value of this CPU; nothing else writes it concurrently.
        unsafe { *p += 1 };
    }
}

#[inline(always)]
fn cfg(idx: u32) -> u32 {
    NCXDP_CONFIG.get(idx).copied().unwrap_or(0)
}

/// The Ethernet, IPv4 (without options) and UDP headers of the frame, checked for the verifier
/// with one bound so every constant offset below is inside the packet.
#[inline(always)]
fn headers(data: usize, end: usize) -> Option<&'static [u8; PAYLOAD_OFFSET]> {
    if data + PAYLOAD_OFFSET > end {
        return None;
    }
    // SAFETY: checked above that PAYLOAD_OFFSET bytes lie inside the packet.
    Some(unsafe { &*(data as *const [u8; PAYLOAD_OFFSET]) })
}

#[inline(always)]
fn be16_at(h: &[u8; PAYLOAD_OFFSET], off: usize) -> u16 {
    u16::from_be_bytes([h[off], h[off + 1]])
}

/// Big-endian reads from the scratch buffer; `off` is masked so the verifier sees the bound.
#[inline(always)]
fn s_u8(s: *const u8, off: usize) -> u8 {
    // SAFETY: (off & MASK) + 8 < SCRATCH_LEN + SCRATCH_SLACK, the size of the scratch value.
    unsafe { *s.add(off & MASK) }
}

#[inline(always)]
fn s_be16(s: *const u8, off: usize) -> u16 {
    let o = off & MASK;
    // SAFETY: as s_u8; o + 1 is inside the slack.
    unsafe { u16::from_be_bytes([*s.add(o), *s.add(o + 1)]) }
}

#[inline(always)]
fn s_be32(s: *const u8, off: usize) -> u32 {
    let o = off & MASK;
    // SAFETY: as s_u8; o + 3 is inside the slack.
    unsafe { u32::from_be_bytes([*s.add(o), *s.add(o + 1), *s.add(o + 2), *s.add(o + 3)]) }
}

#[inline(always)]
fn s_be64(s: *const u8, off: usize) -> u64 {
    (u64::from(s_be32(s, off)) << 32) | u64::from(s_be32(s, off + 4))
}

fn classify(ctx: &XdpContext) -> Verdict {
    if cfg(config::FLAGS) & config::FLAG_ENABLED == 0 {
        return Verdict::Pass;
    }
    let data = ctx.data();
    let end = ctx.data_end();
    // Ethernet II, IPv4 without options, UDP to our port: anything else is not a candidate and
    // passes uncounted (the engine never sends IPv4 options).
    let Some(h) = headers(data, end) else {
        return Verdict::Pass;
    };
    if be16_at(h, 12) != ETHERTYPE_IPV4
        || h[ETH_LEN] != 0x45
        || h[ETH_LEN + 9] != IPPROTO_UDP
        || u32::from(be16_at(h, ETH_LEN + IPV4_LEN + 2)) != cfg(config::UDP_PORT)
    {
        return Verdict::Pass;
    }
    count(counter::SEEN);
    match check_decide(ctx, h, data, end) {
        Ok(v) => v,
        Err(Bad::Malformed) => {
            count(counter::MALFORMED);
            Verdict::Pass
        }
        Err(Bad::Foreign) => {
            count(counter::FOREIGN);
            Verdict::Pass
        }
        Err(Bad::Unauthorized) => {
            count(counter::UNAUTHORIZED);
            Verdict::Drop
        }
    }
}

enum Bad {
    Malformed,
    Foreign,
    Unauthorized,
}
use Bad::{Foreign, Malformed, Unauthorized};

/// Members only (issue 18), for a DECIDE that passed every format check (as `proto`'s model:
/// malformed and foreign packets are counted as such whoever sent them): its IPv4 source must
/// be on the allow-list (when the loader set one), and its `sender` must be the leader of its
/// epoch, `epoch mod n` (when the loader set the node count n).
#[inline(always)]
fn authorized(h: &[u8; PAYLOAD_OFFSET], s: *const u8) -> bool {
    if cfg(config::FLAGS) & config::FLAG_CHECK_SOURCE != 0 {
        let src = ETH_LEN + 12;
        let key = source_key([h[src], h[src + 1], h[src + 2], h[src + 3]]);
        if NCXDP_SOURCES.get_ptr(key).is_none() {
            return false;
        }
    }
    let n = cfg(config::NODES);
    if n == 0 {
        return true;
    }
    if n > config::MAX_NODES {
        // The loader never writes this; refuse rather than divide by an unchecked value.
        return false;
    }
    let epoch = s_be32(s, HEADER_LEN + decide_offset::EPOCH);
    // 32-bit modulo by 1..=255 (n != 0 checked above: no division by zero).
    u32::from(s_u8(s, header_offset::SENDER)) == epoch % n
}

/// A UDP frame to our port: check it the way `proto::frame::parse_udp` and `proto::wire::parse`
/// do, and log it if it is a valid decision.
#[inline(always)]
fn check_decide(
    ctx: &XdpContext,
    h: &[u8; PAYLOAD_OFFSET],
    data: usize,
    end: usize,
) -> Result<Verdict, Bad> {
    let ip = ETH_LEN;
    // Fragments (MF set or a fragment offset) cannot be checked whole: never logged.
    if be16_at(h, ip + 6) & 0x3fff != 0 {
        return Err(Malformed);
    }
    let total_len = usize::from(be16_at(h, ip + 2));
    if total_len < IPV4_LEN + UDP_LEN || data + ETH_LEN + total_len > end {
        return Err(Malformed);
    }
    // IPv4 header checksum: the ones' complement sum of the 10 words must be 0xffff.
    let mut sum: u32 = 0;
    for w in 0..IPV4_LEN / 2 {
        sum += u32::from(be16_at(h, ip + 2 * w));
    }
    if fold(sum) != 0xffff {
        return Err(Malformed);
    }
    let udp = ETH_LEN + IPV4_LEN;
    let udp_len = usize::from(be16_at(h, udp + 4));
    if udp_len != total_len - IPV4_LEN {
        return Err(Malformed);
    }
    let len = udp_len - UDP_LEN;
    if len > MAX_PACKET_LEN {
        return Err(Malformed);
    }

    // Copy the UDP payload into this CPU's scratch buffer, zero-padded to a multiple of 4.
    let scratch = NCXDP_SCRATCH.get_ptr_mut(0).ok_or(Malformed)?;
    // SAFETY: a per-CPU map value of this CPU.
    let s: *mut u8 = unsafe { addr_of_mut!((*scratch).buf) }.cast();
    // SAFETY: (len & MASK) + 4 lies inside the scratch value.
    unsafe { write_volatile(s.add(len & MASK).cast::<[u8; 4]>(), [0; 4]) };
    if len > 0 {
        let n = (len & MASK) as u32;
        if n == 0 || n as usize > MAX_PACKET_LEN {
            return Err(Malformed);
        }
        // SAFETY: n bytes fit the scratch value; the helper checks the packet bounds.
        let r = unsafe { bpf_xdp_load_bytes(ctx.ctx, PAYLOAD_OFFSET as u32, s.cast(), n) };
        if r != 0 {
            return Err(Malformed);
        }
    }

    // UDP checksum (0: none, as IPv4 allows).
    if be16_at(h, udp + 6) != 0 && !udp_checksum_ok(h, s, len)? {
        return Err(Malformed);
    }

    // The Nano-consensus packet, in proto::wire::parse's order of checks.
    if len < 4 {
        return Err(Foreign);
    }
    if s_be16(s, header_offset::MAGIC) != MAGIC || s_u8(s, header_offset::VERSION) != VERSION {
        return Err(Foreign);
    }
    if len < HEADER_LEN {
        return Err(Malformed);
    }
    if s_be32(s, header_offset::CLUSTER_ID) != cfg(config::CLUSTER_ID) {
        return Err(Foreign);
    }
    let kind = s_u8(s, header_offset::KIND);
    if !(Kind::Request as u8..=Kind::StateChunk as u8).contains(&kind) {
        return Err(Malformed);
    }
    if usize::from(s_be16(s, header_offset::BODY_LEN)) + HEADER_LEN != len
        || s_u8(s, header_offset::RESERVED) != 0
    {
        return Err(Malformed);
    }
    if kind != Kind::Decide as u8 {
        // Another packet kind of our cluster: not for this program.
        return Err(Foreign);
    }
    let b = HEADER_LEN;
    if len < b + DECIDE_HEADER_LEN || s_be32(s, b + decide_offset::RESERVED) != 0 {
        return Err(Malformed);
    }
    let dkind = s_u8(s, b + decide_offset::KIND);
    let entries = u32::from(s_be16(s, b + decide_offset::COUNT));
    let first = b + DECIDE_HEADER_LEN;
    if dkind == DecideKind::Heartbeat as u8 || dkind == DecideKind::Start as u8 {
        if entries != 0 || len != first {
            return Err(Malformed);
        }
        if !authorized(h, s) {
            return Err(Unauthorized);
        }
        // No value: the instance repeats. Counted, never logged.
        count(counter::HEARTBEATS);
        return Ok(Verdict::Decide);
    }
    let is_config = if dkind == DecideKind::Batch as u8 {
        if entries == 0 {
            return Err(Malformed);
        }
        false
    } else if dkind == DecideKind::Config as u8 {
        if entries != 1 {
            return Err(Malformed);
        }
        true
    } else {
        return Err(Malformed);
    };

    // Walk the entries.
    let mut off = first;
    let mut i: u32 = 0;
    while i < MAX_ENTRIES {
        if i == entries {
            break;
        }
        if off + ENTRY_HEADER_LEN > len {
            return Err(Malformed);
        }
        let flags = s_u8(s, off + entry_offset::FLAGS);
        if flags & !ENTRY_FLAG_CONFIG != 0
            || s_u8(s, off + entry_offset::RESERVED) != 0
            || s_be64(s, off + entry_offset::SEQ) == 0
            || (flags & ENTRY_FLAG_CONFIG != 0) != is_config
        {
            return Err(Malformed);
        }
        off += ENTRY_HEADER_LEN + usize::from(s_be16(s, off + entry_offset::PAYLOAD_LEN));
        if off > len {
            return Err(Malformed);
        }
        i += 1;
    }
    if i != entries || off != len {
        return Err(Malformed);
    }
    if is_config {
        // The one entry's payload: a non-empty list of 8-byte items, reserved fields zero.
        let items = first + ENTRY_HEADER_LEN;
        let plen = usize::from(s_be16(s, first + entry_offset::PAYLOAD_LEN));
        if plen == 0 || plen % CONFIG_ITEM_LEN != 0 {
            return Err(Malformed);
        }
        let mut j: u32 = 0;
        while j < MAX_ITEMS {
            let at = j as usize * CONFIG_ITEM_LEN;
            if at >= plen {
                break;
            }
            if s_be16(s, items + at + config_item_offset::RESERVED) != 0 {
                return Err(Malformed);
            }
            j += 1;
        }
    }
    if !authorized(h, s) {
        return Err(Unauthorized);
    }
    let instance = s_be64(s, b + decide_offset::INSTANCE);
    if instance == u64::MAX {
        // `commit` stores instance + 1; this one instance cannot be represented.
        return Err(Malformed);
    }
    // For the verifier: the loops above compared `len` with per-iteration offsets, which
    // narrows its range differently on every exit path and defeats state pruning. Re-read the
    // length from the packet (volatile: the compiler must not reuse the old value) so the code
    // below depends on one fresh value whatever path led here.
    // SAFETY: udp + 4 + 2 <= PAYLOAD_OFFSET, inside the checked headers.
    let udp_len2 = u16::from_be(unsafe {
        read_volatile(h.as_ptr().add(ETH_LEN + IPV4_LEN + 4).cast::<u16>())
    });
    let len = usize::from(udp_len2).wrapping_sub(UDP_LEN);
    if len > MAX_PACKET_LEN {
        return Err(Malformed);
    }
    log(ctx, s, len, instance);
    Ok(Verdict::Decide)
}

/// Ones' complement fold of a 32-bit sum to 16 bits.
#[inline(always)]
fn fold(mut sum: u32) -> u32 {
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    sum
}

/// The UDP checksum over the pseudo header, the UDP header (from the packet) and the payload
/// (from scratch, zero-padded to 4 bytes).
#[inline(always)]
fn udp_checksum_ok(h: &[u8; PAYLOAD_OFFSET], s: *const u8, len: usize) -> Result<bool, Bad> {
    // Pseudo header (src, dst, 0, proto, udp length) followed by the 8-byte UDP header.
    let mut hdr = [0u8; 20];
    let ip = ETH_LEN;
    let udp = ETH_LEN + IPV4_LEN;
    hdr[..8].copy_from_slice(&h[ip + 12..ip + 20]);
    hdr[9] = IPPROTO_UDP;
    let ulen = (len + UDP_LEN) as u16;
    hdr[10] = (ulen >> 8) as u8;
    hdr[11] = ulen as u8;
    hdr[12..20].copy_from_slice(&h[udp..udp + 8]);
    // SAFETY: hdr is 20 initialised stack bytes; a null `from` with size 0 is allowed.
    let mut acc =
        unsafe { bpf_csum_diff(core::ptr::null_mut(), 0, hdr.as_mut_ptr().cast(), 20, 0) };
    if acc < 0 {
        return Err(Malformed);
    }
    let padded = (len + 3) & !3;
    let mut off = 0usize;
    let mut c: u32 = 0;
    while c < MAX_CSUM_CHUNKS {
        if off >= padded {
            break;
        }
        let mut n = padded - off;
        if n > CSUM_CHUNK {
            n = CSUM_CHUNK;
        }
        let n = (n & (CSUM_CHUNK * 2 - 1)) as u32;
        // SAFETY: (off & MASK) + 512 lies inside the scratch value (SCRATCH_SLACK).
        acc = unsafe {
            bpf_csum_diff(
                core::ptr::null_mut(),
                0,
                s.add(off & MASK).cast_mut().cast(),
                n,
                acc as u32,
            )
        };
        if acc < 0 {
            return Err(Malformed);
        }
        off += CSUM_CHUNK;
        c += 1;
    }
    // bpf_csum_diff returns the 32-bit partial sum of 32-bit words in host order; a correct
    // checksum folds to 0xffff in either byte order.
    Ok(fold(acc as u32) == 0xffff)
}

/// Write a valid decision into its slot (unless already there or too old), ring the doorbell
/// and copy it into the ring buffer.
#[inline(always)]
fn log(ctx: &XdpContext, s: *const u8, len: usize, instance: u64) {
    let Some(head_p) = NCXDP_STATE.get_ptr_mut(state::HEAD) else {
        count(counter::INTERNAL);
        return;
    };
    // SAFETY: a map value; concurrent writers (other CPUs) only ever raise it.
    let head = unsafe { read_volatile(head_p) };
    if head > u64::from(LOG_CAPACITY) && instance < head - u64::from(LOG_CAPACITY) {
        count(counter::STALE);
        return;
    }
    let idx = (instance & u64::from(LOG_CAPACITY - 1)) as u32;
    let Some(slot) = NCXDP_LOG.get_ptr_mut(idx) else {
        count(counter::INTERNAL);
        return;
    };
    let commit = instance + 1;
    // SAFETY: slot is a map value of this array. The fields are written with volatile stores,
    // which the compiler keeps in program order, and the packet copy is an opaque helper call
    // between them: commit cleared, body, commit set. (No fence instruction: the BPF backend
    // cannot select one; x86 keeps stores in order. See README, "Torn reads".)
    unsafe {
        let old = read_volatile(addr_of_mut!((*slot).commit));
        if old == commit {
            count(counter::DUPLICATES);
            return;
        }
        if old > commit {
            count(counter::STALE);
            return;
        }
        write_volatile(addr_of_mut!((*slot).commit), 0);
        write_volatile(addr_of_mut!((*slot).instance), instance);
        write_volatile(
            addr_of_mut!((*slot).epoch),
            s_be32(s, HEADER_LEN + decide_offset::EPOCH),
        );
        write_volatile(addr_of_mut!((*slot).len), len as u16);
        write_volatile(
            addr_of_mut!((*slot).count),
            s_be16(s, HEADER_LEN + decide_offset::COUNT),
        );
        write_volatile(
            addr_of_mut!((*slot).kind),
            s_u8(s, HEADER_LEN + decide_offset::KIND),
        );
        write_volatile(addr_of_mut!((*slot).sender), s_u8(s, header_offset::SENDER));
        write_volatile(
            addr_of_mut!((*slot).tree),
            s_u8(s, HEADER_LEN + decide_offset::TREE),
        );
        write_volatile(addr_of_mut!((*slot).reserved), 0);
        write_volatile(addr_of_mut!((*slot).cpu), bpf_get_smp_processor_id());
        let n = (len & MASK) as u32;
        if n == 0 || n as usize > SLOT_DATA_LEN {
            // Cannot happen (checked before); the slot stays empty (commit 0) and is counted.
            count(counter::INTERNAL);
            return;
        }
        if bpf_xdp_load_bytes(
            ctx.ctx,
            PAYLOAD_OFFSET as u32,
            addr_of_mut!((*slot).data).cast(),
            n,
        ) != 0
        {
            count(counter::INTERNAL);
            return;
        }
        write_volatile(addr_of_mut!((*slot).commit), commit);
    }
    if instance > head && head != 0 {
        count(counter::GAPS);
    }
    if commit > head {
        // SAFETY: as above.
        unsafe { write_volatile(head_p, commit) };
    }
    count(counter::LOGGED);
    // The doorbell, after the slot and the head: a reader woken by it sees both. Flags 0: the
    // kernel wakes the reader only when it had emptied the bell (it is asleep or about to
    // poll); a full bell means the reader has not emptied it yet, so the failure is harmless.
    let _ = NCXDP_BELL.output::<u64>(&instance, 0);
    let rec = (SLOT_HEADER_LEN + len) as u64;
    if rec > (SLOT_HEADER_LEN + SLOT_DATA_LEN) as u64 {
        count(counter::INTERNAL);
        return;
    }
    // SAFETY: `rec` bytes of the slot value, bounded just above.
    let rec = unsafe { core::slice::from_raw_parts(slot.cast::<u8>().cast_const(), rec as usize) };
    if NCXDP_RING.output::<[u8]>(rec, 0).is_err() {
        count(counter::RING_FULL);
    }
}

#[cfg(not(test))]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    loop {}
}
