//! The real thing: the XDP program attached to the host end of a veth pair in network
//! namespaces this test creates; a raw socket in the nic namespace sends DECIDE frames (valid,
//! batched, duplicated, out of order, missing, malformed, truncated, foreign, other port), and
//! the test checks the consumer library, the counters, the ring buffer and that other traffic
//! still reaches a UDP socket; members only: forged DECIDEs (a source address not allowed, a
//! sender that does not lead its epoch) are counted, dropped and never logged. Needs root (CI
//! runs as root); otherwise prints SKIPPED.

use aya::maps::{Map, MapData, RingBuf};
use proto::wire::{
    ConfigItem, Decide, DecideKind, DecideMeta, ENTRY_FLAG_CONFIG, Entry, Packet, emit_entries,
};
use std::collections::HashMap;
use std::net::UdpSocket;
use std::sync::mpsc;
use std::time::Duration;
use xdp_log::loader::{self, AttachOptions, Mode};
use xdp_log::testbed::{RawSender, Testbed, is_root};
use xdp_log::{DecisionLog, LogError};

const CLUSTER: u32 = 0x4e43_0007;
const PORT: u16 = 7402;
const OTHER_PORT: u16 = 7403;
const END: &[u8] = b"END";
/// The node count the program is told (members only): the leader of epoch e is e mod 3.
const NODES: u8 = 3;
/// The epoch of the test's DECIDEs, and its leader (5 mod 3), their sender.
const EPOCH: u32 = 5;
const LEADER: u8 = 2;
const _: () = assert!(EPOCH % NODES as u32 == LEADER as u32);

fn skipped() -> bool {
    if !is_root() {
        eprintln!("SKIPPED: the xdp-log namespace tests need root (CI runs them as root)");
        return true;
    }
    false
}

fn batch(instance: u64, entries: &[(u32, u64, Vec<u8>)]) -> Vec<u8> {
    let es: Vec<Entry<'_>> = entries
        .iter()
        .map(|(c, s, p)| Entry {
            client_id: *c,
            seq: *s,
            flags: 0,
            payload: p,
        })
        .collect();
    decide(instance, DecideKind::Batch, &es)
}

fn decide(instance: u64, kind: DecideKind, es: &[Entry<'_>]) -> Vec<u8> {
    decide_by(instance, kind, es, EPOCH, LEADER)
}

fn decide_by(instance: u64, kind: DecideKind, es: &[Entry<'_>], epoch: u32, sender: u8) -> Vec<u8> {
    let mut raw = vec![0u8; 9000];
    let n = emit_entries(es.iter(), &mut raw).unwrap();
    Packet::Decide(Decide {
        meta: DecideMeta {
            instance,
            epoch,
            msg_seq: instance as u32,
            tree: 0,
            kind,
        },
        count: es.len() as u16,
        entries_raw: &raw[..n],
    })
    .to_vec(CLUSTER, sender)
    .unwrap()
}

/// A one-entry batch deciding `instance` in `epoch`, sent by node `sender`; `tag` goes into the
/// payload (so a forged copy differs from the genuine one).
fn value_by(instance: u64, epoch: u32, sender: u8, tag: &str) -> Vec<u8> {
    let payload = format!("{tag} {instance}").into_bytes();
    decide_by(
        instance,
        DecideKind::Batch,
        &[Entry {
            client_id: 7,
            seq: instance,
            flags: 0,
            payload: &payload,
        }],
        epoch,
        sender,
    )
}

fn heartbeat(instance: u64) -> Vec<u8> {
    decide(instance, DecideKind::Heartbeat, &[])
}

fn config(instance: u64) -> Vec<u8> {
    let item = ConfigItem {
        addr: proto::regs::addr::HOST_PORT,
        value: 7402,
    }
    .to_bytes();
    decide(
        instance,
        DecideKind::Config,
        &[Entry {
            client_id: 0,
            seq: 1,
            flags: ENTRY_FLAG_CONFIG,
            payload: &item,
        }],
    )
}

fn simple(instance: u64) -> Vec<u8> {
    batch(
        instance,
        &[(
            7,
            instance,
            format!("set k{instance} v{instance}").into_bytes(),
        )],
    )
}

/// What the kernel should do with the valid decisions, in arrival order (the documented
/// semantics: one slot per instance mod capacity, a duplicate or older lap is not logged).
struct Model {
    slots: HashMap<u64, u64>,
    /// The packet each slot holds (by instance), for the differential test.
    held: HashMap<u64, Vec<u8>>,
    head: u64,
    logged: Vec<u64>,
    duplicates: u64,
    stale: u64,
    gaps: u64,
}

impl Model {
    fn new() -> Model {
        Model {
            slots: HashMap::new(),
            held: HashMap::new(),
            head: 0,
            logged: vec![],
            duplicates: 0,
            stale: 0,
            gaps: 0,
        }
    }
    fn offer_packet(&mut self, i: u64, packet: &[u8]) {
        let before = self.logged.len();
        self.offer(i);
        if self.logged.len() > before {
            let cap = u64::from(common::LOG_CAPACITY);
            self.held.retain(|&j, _| j % cap != i % cap);
            self.held.insert(i, packet.to_vec());
        }
    }
    fn offer(&mut self, i: u64) {
        let cap = u64::from(common::LOG_CAPACITY);
        if self.head > cap && i < self.head - cap {
            self.stale += 1;
            return;
        }
        let c = self.slots.get(&(i % cap)).copied().unwrap_or(0);
        if c == i + 1 {
            self.duplicates += 1;
            return;
        }
        if c > i + 1 {
            self.stale += 1;
            return;
        }
        self.slots.insert(i % cap, i + 1);
        if i > self.head && self.head != 0 {
            self.gaps += 1;
        }
        self.head = self.head.max(i + 1);
        self.logged.push(i);
    }
}

/// Frames sent, and what each should do.
#[derive(Default)]
struct Plan {
    frames: Vec<Vec<u8>>,
    /// Valid decisions by instance (the packet last sent for it).
    packets: HashMap<u64, Vec<u8>>,
    /// Instances of valid value decisions, in send order.
    offered: Vec<u64>,
    seen: u64,
    malformed: u64,
    foreign: u64,
    heartbeats: u64,
    /// Datagrams the host stack should deliver to a socket on PORT (consume off).
    to_port: u64,
    /// ... of which valid DECIDEs (dropped instead when consuming).
    to_port_decides: u64,
    to_other: u64,
}

impl Plan {
    fn value(&mut self, tb: &Testbed, instance: u64, packet: Vec<u8>) {
        self.frames.push(tb.frame(PORT, &packet));
        self.packets.entry(instance).or_insert(packet);
        self.offered.push(instance);
        self.seen += 1;
        self.to_port += 1;
        self.to_port_decides += 1;
    }
    fn heartbeat(&mut self, tb: &Testbed, instance: u64) {
        self.frames.push(tb.frame(PORT, &heartbeat(instance)));
        self.seen += 1;
        self.heartbeats += 1;
        self.to_port += 1;
        self.to_port_decides += 1;
    }
    /// A frame to PORT the program must refuse; `stack_accepts`: its IPv4/UDP are intact.
    fn bad(&mut self, frame: Vec<u8>, foreign: bool, stack_accepts: bool) {
        self.frames.push(frame);
        self.seen += 1;
        if foreign {
            self.foreign += 1;
        } else {
            self.malformed += 1;
        }
        if stack_accepts {
            self.to_port += 1;
        }
    }
    fn other_port(&mut self, tb: &Testbed, packet: &[u8]) {
        self.frames.push(tb.frame(OTHER_PORT, packet));
        self.to_other += 1;
    }
}

/// The first part: every kind of frame once, the valid ones 1..=17 with a reorder, duplicates
/// and heartbeats.
fn mixed_plan(tb: &Testbed) -> Plan {
    let mut p = Plan::default();
    for i in 1..=10u64 {
        let entries: Vec<(u32, u64, Vec<u8>)> = (0..(i % 3 + 1))
            .map(|k| {
                let len = if i == 7 && k == 0 {
                    1300
                } else {
                    (i * 13 + k) as usize % 97
                };
                (
                    100 + k as u32,
                    i * 10 + k,
                    (0..len).map(|b| (b as u8) ^ (i as u8)).collect(),
                )
            })
            .collect();
        p.value(tb, i, batch(i, &entries));
    }
    p.heartbeat(tb, 11);
    p.heartbeat(tb, 11);
    p.value(tb, 11, config(11));
    p.value(tb, 12, simple(12));
    p.value(tb, 12, simple(12)); // duplicate
    p.value(tb, 5, simple(5)); // duplicate of an instance logged with other contents: not logged again
    // out of order
    p.value(tb, 14, simple(14));
    p.value(tb, 13, simple(13));
    p.value(tb, 15, simple(15));
    // other port: passes untouched
    p.other_port(tb, &simple(100));
    p.other_port(tb, &simple(101));
    p.other_port(tb, b"plain udp");

    // foreign: other cluster, other magic, another kind of ours, too short for magic+version
    let other = Packet::Decide(Decide {
        meta: DecideMeta {
            instance: 16,
            epoch: 2,
            msg_seq: 0,
            tree: 0,
            kind: DecideKind::Heartbeat,
        },
        count: 0,
        entries_raw: &[],
    })
    .to_vec(CLUSTER + 1, 1)
    .unwrap();
    p.bad(tb.frame(PORT, &other), true, true);
    let mut magic = simple(16);
    magic[0] ^= 0xff;
    p.bad(tb.frame(PORT, &magic), true, true);
    let req = Packet::Request(Entry {
        client_id: 1,
        seq: 1,
        flags: 0,
        payload: b"req",
    })
    .to_vec(CLUSTER, proto::wire::SENDER_NONE)
    .unwrap();
    p.bad(tb.frame(PORT, &req), true, true);
    p.bad(tb.frame(PORT, b"NC"), true, true);

    // malformed at the NC level (IPv4/UDP intact: the host stack still delivers them)
    let good = simple(16);
    let mut body_len = good.clone();
    body_len[9] ^= 1;
    p.bad(tb.frame(PORT, &body_len), false, true);
    let mut trailing = good.clone();
    trailing.push(0);
    p.bad(tb.frame(PORT, &trailing), false, true);
    let mut seq0 = good.clone();
    let e = proto::wire::HEADER_LEN + proto::wire::DECIDE_HEADER_LEN;
    seq0[e + 8..e + 16].fill(0);
    p.bad(tb.frame(PORT, &seq0), false, true);
    let mut reserved = good.clone();
    reserved[11] = 1;
    p.bad(tb.frame(PORT, &reserved), false, true);
    let mut dkind = good.clone();
    dkind[proto::wire::HEADER_LEN + 17] = 9;
    p.bad(tb.frame(PORT, &dkind), false, true);
    let mut kind = good.clone();
    kind[3] = 9;
    p.bad(tb.frame(PORT, &kind), false, true);
    let mut count = good.clone();
    count[proto::wire::HEADER_LEN + 19] = 2;
    p.bad(tb.frame(PORT, &count), false, true);
    let mut entry_len = good.clone();
    entry_len[e + 5] = entry_len[e + 5].wrapping_add(1);
    p.bad(tb.frame(PORT, &entry_len), false, true);
    let hb_with_entries = {
        let mut h = good.clone();
        h[proto::wire::HEADER_LEN + 17] = DecideKind::Heartbeat as u8;
        h
    };
    p.bad(tb.frame(PORT, &hb_with_entries), false, true);
    let cfg_without_flag = {
        let mut c = good.clone();
        c[proto::wire::HEADER_LEN + 17] = DecideKind::Config as u8;
        c
    };
    p.bad(tb.frame(PORT, &cfg_without_flag), false, true);
    // malformed at the IPv4/UDP level (the host stack drops them too)
    let f = tb.frame(PORT, &good);
    let mut csum = f.clone();
    *csum.last_mut().unwrap() ^= 0x40;
    p.bad(csum, false, false);
    let mut ipsum = f.clone();
    ipsum[proto::frame::ETH_LEN + 8] ^= 1; // TTL changes, header checksum does not
    p.bad(ipsum, false, false);
    p.bad(f[..f.len() - 5].to_vec(), false, false); // truncated frame
    let mut frag = f.clone();
    frag[proto::frame::ETH_LEN + 6] |= 0x20; // MF set: a fragment
    p.bad(frag, false, false);

    p.value(tb, 16, good);
    p.value(tb, 17, simple(17));
    p
}

fn send_all(tb: &Testbed, frames: &[Vec<u8>]) {
    tb.run_in(&tb.nic_ns, || {
        let s = RawSender::new(&tb.nic_if).unwrap();
        for f in frames {
            s.send(f).unwrap();
        }
    })
    .unwrap();
}

/// A UDP socket in the host namespace counting datagrams until END arrives.
fn counter_socket(tb: &Testbed, port: u16) -> (std::thread::JoinHandle<u64>, mpsc::Receiver<()>) {
    let (ready_tx, ready_rx) = mpsc::channel();
    let ns = tb.host_ns.clone();
    let h = std::thread::spawn(move || {
        Testbed::enter(&ns).unwrap();
        let s = UdpSocket::bind(("0.0.0.0", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        ready_tx.send(()).unwrap();
        let mut buf = [0u8; 9000];
        let mut n = 0;
        loop {
            let len = s.recv(&mut buf).expect("datagram (or END) within 20 s");
            if &buf[..len] == END {
                return n;
            }
            n += 1;
        }
    });
    (h, ready_rx)
}

fn drain_ring(tb: &Testbed) -> Vec<u64> {
    let data = MapData::from_pin(tb.pin_dir.join(common::map_name::RING)).unwrap();
    let mut ring = RingBuf::try_from(Map::from_map_data(data).unwrap()).unwrap();
    let mut v = vec![];
    while let Some(item) = ring.next() {
        v.push(
            xdp_log::record::parse_record(&item, CLUSTER)
                .unwrap()
                .instance,
        );
    }
    v
}

/// Attach to the testbed's host end; `allow`: the allowed sources (empty: no allow-list).
fn attach(
    tb: &Testbed,
    mode: Mode,
    consume: bool,
    allow: &[[u8; 4]],
    nodes: u8,
) -> loader::Attached {
    tb.run_in(&tb.host_ns, || {
        loader::attach(&AttachOptions {
            iface: tb.host_if.clone(),
            mode,
            pin_dir: tb.pin_dir.clone(),
            cluster_id: CLUSTER,
            port: PORT,
            consume,
            allow_sources: allow.iter().map(|&a| a.into()).collect(),
            nodes,
        })
    })
    .unwrap()
    .expect("attach")
}

fn scenario(mode: Mode, consume: bool) {
    if skipped() {
        return;
    }
    let tb = Testbed::new().expect("create the namespaces");
    // Members only, as deployed: every genuine frame comes from the nic end and its leader.
    let att = attach(&tb, mode, consume, &[tb.nic_ip], NODES);
    let (port_rx, r1) = counter_socket(&tb, PORT);
    let (other_rx, r2) = counter_socket(&tb, OTHER_PORT);
    r1.recv().unwrap();
    r2.recv().unwrap();

    // Part 1: the mixed plan.
    let plan = mixed_plan(&tb);
    let mut frames = plan.frames.clone();
    frames.push(tb.frame(PORT, END)); // counts as seen + foreign
    frames.push(tb.frame(OTHER_PORT, END));
    send_all(&tb, &frames);
    let got_port = port_rx.join().unwrap();
    let got_other = other_rx.join().unwrap();

    let mut model = Model::new();
    for &i in &plan.offered {
        model.offer(i);
    }
    let mut log = DecisionLog::open_at(&tb.pin_dir, 1).unwrap();
    for want in 1..=17u64 {
        let d = log
            .next_timeout(Duration::from_secs(10))
            .unwrap()
            .unwrap_or_else(|| panic!("instance {want} not logged"));
        assert_eq!(d.instance, want);
        assert_eq!(d.packet, plan.packets[&want], "instance {want} contents");
        let kind = if want == 11 {
            DecideKind::Config
        } else {
            DecideKind::Batch
        };
        assert_eq!(d.kind, kind);
        assert_eq!(d.decide().entries().count(), usize::from(d.count));
    }
    assert_eq!(log.try_next().unwrap(), None, "nothing after 17");

    let s = loader::read_stats(&tb.pin_dir).unwrap();
    use common::counter as c;
    assert_eq!(s.get(c::SEEN), plan.seen + 1, "{s:?}");
    assert_eq!(s.get(c::LOGGED), model.logged.len() as u64);
    assert_eq!(s.get(c::LOGGED), 17);
    assert_eq!(s.get(c::MALFORMED), plan.malformed);
    assert_eq!(s.get(c::FOREIGN), plan.foreign + 1);
    assert_eq!(s.get(c::HEARTBEATS), plan.heartbeats);
    assert_eq!(s.get(c::DUPLICATES), model.duplicates);
    assert_eq!(s.get(c::DUPLICATES), 2);
    assert_eq!(s.get(c::GAPS), model.gaps);
    assert_eq!(s.get(c::GAPS), 1);
    assert_eq!(s.get(c::STALE), 0);
    assert_eq!(s.get(c::RING_FULL), 0);
    assert_eq!(s.get(c::INTERNAL), 0);
    assert_eq!(s.get(c::UNAUTHORIZED), 0, "genuine frames are heard: {s:?}");
    assert!(s.get(c::FRAMES) >= plan.frames.len() as u64 + 2);
    let decides = plan.to_port_decides;
    if consume {
        assert_eq!(s.get(c::CONSUMED), decides);
        assert_eq!(
            got_port,
            plan.to_port - decides,
            "consumed DECIDEs reach no socket"
        );
    } else {
        assert_eq!(s.get(c::CONSUMED), 0);
        assert_eq!(got_port, plan.to_port, "the host stack still sees DECIDEs");
    }
    assert_eq!(got_other, plan.to_other, "other traffic passes");
    assert_eq!(
        drain_ring(&tb),
        model.logged,
        "ring buffer: each logged decision once"
    );

    // Part 2: instance 18 never arrives; the log moves on by more than the reorder window.
    let mut frames = vec![];
    for i in 19..=40u64 {
        frames.push(tb.frame(PORT, &simple(i)));
        model.offer(i);
    }
    send_all(&tb, &frames);
    let err = match log.next_timeout(Duration::from_secs(10)) {
        Err(e) => e,
        Ok(d) => panic!("expected a gap at 18, got {d:?}"),
    };
    assert_eq!(
        err,
        LogError::Gap {
            expected: 18,
            oldest_available: Some(1)
        }
    );
    // Sticky until the application resynchronises.
    assert_eq!(log.try_next().unwrap_err(), err);
    log.seek(19);
    for want in 19..=40 {
        assert_eq!(log.try_next().unwrap().unwrap().instance, want);
    }

    // Part 3: the reader falls more than the capacity behind: its next instance is overwritten.
    let cap = u64::from(common::LOG_CAPACITY);
    let last = 40 + cap + 5;
    let frames: Vec<Vec<u8>> = (41..=last)
        .map(|i| {
            model.offer(i);
            tb.frame(PORT, &simple(i))
        })
        .collect();
    send_all(&tb, &frames);
    // wait until the last one is logged
    let mut probe = DecisionLog::open_at(&tb.pin_dir, last).unwrap();
    assert_eq!(
        probe
            .next_timeout(Duration::from_secs(20))
            .unwrap()
            .map(|d| d.instance),
        Some(last)
    );
    assert_eq!(
        log.try_next().unwrap_err(),
        LogError::Gap {
            expected: 41,
            oldest_available: Some(last + 1 - cap)
        }
    );
    log.seek(last + 1 - cap);
    assert_eq!(log.try_next().unwrap().unwrap().instance, last + 1 - cap);

    let s = loader::read_stats(&tb.pin_dir).unwrap();
    assert_eq!(s.get(c::LOGGED), model.logged.len() as u64);
    assert_eq!(s.get(c::GAPS), model.gaps);
    assert_eq!(s.get(c::GAPS), 2);

    // Clean detach: pins gone, the interface has no XDP program any more.
    let link_show = || {
        let out = std::process::Command::new("ip")
            .args(["-n", &tb.host_ns, "link", "show", &tb.host_if])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let before = link_show();
    assert!(before.contains("prog/xdp"), "attached: {before}");
    let want_mode = match mode {
        Mode::Native => "xdp ",
        Mode::Skb => "xdpgeneric",
    };
    assert!(before.contains(want_mode), "mode {mode:?}: {before}");
    att.detach().unwrap();
    assert!(!tb.pin_dir.exists());
    let after = link_show();
    assert!(!after.contains("prog/xdp"), "still attached: {after}");
}

#[test]
fn native_mode() {
    scenario(Mode::Native, false);
}

#[test]
fn skb_mode() {
    scenario(Mode::Skb, false);
}

#[test]
fn native_mode_consuming() {
    scenario(Mode::Native, true);
}

// ---------------------------------------------------------------------------------------------
// Differential test of the kernel-side parser: random valid and mutated frames through the real
// XDP program; the oracle is proto (frame::parse_udp + wire::parse) plus the documented rules
// (other packet kinds of our cluster are foreign without their body checked; instance u64::MAX
// is refused). Counters and log contents must match exactly.

use proptest::prelude::*;
use proto::frame::parse_udp;
use proto::wire::{ParseError, header_offset};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Class {
    NotCandidate,
    Malformed,
    Foreign,
    Unauthorized,
    Heartbeat,
    Value(u64, Vec<u8>),
}

/// `members`: the program checks senders against `epoch mod NODES` (every frame here comes from
/// the allowed nic address; a mutated source address breaks the IPv4 checksum first).
fn oracle(frame: &[u8], members: bool) -> Class {
    let candidate = frame.len() >= proto::frame::PAYLOAD_OFFSET
        && frame[12..14] == [0x08, 0x00]
        && frame[14] == 0x45
        && frame[23] == 17
        && u16::from_be_bytes([frame[36], frame[37]]) == PORT;
    if !candidate {
        return Class::NotCandidate;
    }
    let Ok((_, payload)) = parse_udp(frame) else {
        return Class::Malformed;
    };
    match proto::wire::parse(payload, CLUSTER) {
        // Members only, after every format check (as proto's Node::receive_tree_from).
        Ok((h, Packet::Decide(d)))
            if members && u32::from(h.sender) != d.meta.epoch % u32::from(NODES) =>
        {
            Class::Unauthorized
        }
        Ok((_, Packet::Decide(d))) if d.meta.kind.is_value() => {
            if d.meta.instance == u64::MAX {
                Class::Malformed
            } else {
                Class::Value(d.meta.instance, payload.to_vec())
            }
        }
        Ok((_, Packet::Decide(_))) => Class::Heartbeat,
        Ok(_) => Class::Foreign,
        Err(ParseError::Foreign(_)) => Class::Foreign,
        Err(ParseError::Malformed(_)) => {
            // A header of ours with a known kind other than DECIDE: foreign, body unchecked.
            let b = payload;
            let header_ok = b.len() >= proto::wire::HEADER_LEN
                && proto::wire::Kind::from_u8(b[header_offset::KIND]).is_some()
                && b[header_offset::KIND] != proto::wire::Kind::Decide as u8
                && usize::from(u16::from_be_bytes([
                    b[header_offset::BODY_LEN],
                    b[header_offset::BODY_LEN + 1],
                ])) + proto::wire::HEADER_LEN
                    == b.len()
                && b[header_offset::RESERVED] == 0;
            if header_ok {
                Class::Foreign
            } else {
                Class::Malformed
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Gen {
    kind: u8,
    instance: u64,
    entries: u8,
    plen: u8,
    op: u8,
    idx: u16,
    val: u8,
}

fn gen_strategy() -> impl Strategy<Value = Gen> {
    (
        0u8..5,
        1u64..40,
        1u8..4,
        0u8..40,
        0u8..8,
        any::<u16>(),
        any::<u8>(),
    )
        .prop_map(|(kind, instance, entries, plen, op, idx, val)| Gen {
            kind,
            instance,
            entries,
            plen,
            op,
            idx,
            val,
        })
}

fn build(tb: &Testbed, g: &Gen) -> Vec<u8> {
    let mut payload = match g.kind {
        0 | 1 => batch(
            g.instance,
            &(0..g.entries)
                .map(|k| {
                    (
                        u32::from(k),
                        g.instance * 4 + u64::from(k),
                        vec![g.val ^ k; usize::from(g.plen)],
                    )
                })
                .collect::<Vec<_>>(),
        ),
        2 => config(g.instance),
        3 => heartbeat(g.instance),
        _ => Packet::Request(Entry {
            client_id: 9,
            seq: g.instance,
            flags: 0,
            payload: &[1, 2, 3],
        })
        .to_vec(CLUSTER, proto::wire::SENDER_NONE)
        .unwrap(),
    };
    let n = payload.len();
    match g.op {
        2 => payload[usize::from(g.idx) % n] ^= g.val | 1,
        3 => payload.truncate(n - 1 - usize::from(g.idx) % 8.min(n - 1)),
        4 => payload.extend(std::iter::repeat_n(g.val, 1 + usize::from(g.val % 4))),
        _ => {}
    }
    let mut f = tb.frame(PORT, &payload);
    let fl = f.len();
    match g.op {
        5 => f[usize::from(g.idx) % fl] ^= g.val | 1,
        6 => f.truncate(fl - 1 - usize::from(g.idx) % 8),
        _ => {}
    }
    f
}

fn differential(gens: &[Gen], mode: Mode, members: bool) -> Result<(), TestCaseError> {
    let tb = Testbed::new().expect("namespaces");
    let _att = if members {
        attach(&tb, mode, false, &[tb.nic_ip], NODES)
    } else {
        attach(&tb, mode, false, &[], 0)
    };
    let frames: Vec<Vec<u8>> = gens.iter().map(|g| build(&tb, g)).collect();
    let mut model = Model::new();
    let (mut seen, mut malformed, mut foreign, mut heartbeats) = (0u64, 0u64, 0u64, 0u64);
    let mut unauthorized = 0u64;
    for f in &frames {
        match oracle(f, members) {
            Class::NotCandidate => continue,
            Class::Malformed => malformed += 1,
            Class::Foreign => foreign += 1,
            Class::Unauthorized => unauthorized += 1,
            Class::Heartbeat => heartbeats += 1,
            Class::Value(i, p) => model.offer_packet(i, &p),
        }
        seen += 1;
    }
    send_all(&tb, &frames);
    // Wait until the program has seen every candidate (it runs in the receive path).
    let mut s = loader::read_stats(&tb.pin_dir).unwrap();
    for _ in 0..2000 {
        if s.get(common::counter::SEEN) >= seen {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
        s = loader::read_stats(&tb.pin_dir).unwrap();
    }
    use common::counter as c;
    prop_assert_eq!(s.get(c::SEEN), seen, "{:?}", s);
    prop_assert_eq!(s.get(c::MALFORMED), malformed, "{:?}", s);
    prop_assert_eq!(s.get(c::FOREIGN), foreign, "{:?}", s);
    prop_assert_eq!(s.get(c::HEARTBEATS), heartbeats);
    prop_assert_eq!(s.get(c::UNAUTHORIZED), unauthorized, "{:?}", s);
    prop_assert_eq!(s.get(c::LOGGED), model.logged.len() as u64);
    prop_assert_eq!(s.get(c::DUPLICATES), model.duplicates);
    prop_assert_eq!(s.get(c::STALE), model.stale);
    prop_assert_eq!(s.get(c::GAPS), model.gaps);
    prop_assert_eq!(s.get(c::INTERNAL), 0);
    for (&i, p) in &model.held {
        let mut log = DecisionLog::open_at(&tb.pin_dir, i).unwrap();
        let d = log.try_next().unwrap();
        prop_assert_eq!(d.map(|d| d.packet), Some(p.clone()), "instance {}", i);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 4,
        max_shrink_iters: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]
    #[test]
    fn xdp_parser_agrees_with_proto(gens in prop::collection::vec(gen_strategy(), 150..300), native in any::<bool>(), members in any::<bool>()) {
        if skipped() {
            return Ok(());
        }
        differential(&gens, if native { Mode::Native } else { Mode::Skb }, members)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Members only (issue 18): a DECIDE is heard only from an allowed IPv4 source and only when its
// sender is the leader of its epoch. Refused ones are counted `unauthorized`, dropped (no
// socket behind the interface gets them) and never logged; malformed and foreign frames are
// counted as such whoever sent them.

/// An address on the testbed's subnet that is not the nic end's.
fn other_ip(tb: &Testbed, last: u8) -> [u8; 4] {
    let mut a = tb.nic_ip;
    a[3] = last;
    assert_ne!(a, tb.nic_ip);
    assert_ne!(a, tb.host_ip);
    a
}

fn wait_seen(tb: &Testbed, seen: u64) -> loader::Stats {
    let mut s = loader::read_stats(&tb.pin_dir).unwrap();
    for _ in 0..2000 {
        if s.get(common::counter::SEEN) >= seen {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
        s = loader::read_stats(&tb.pin_dir).unwrap();
    }
    s
}

fn members_only(mode: Mode) {
    if skipped() {
        return;
    }
    let tb = Testbed::new().expect("create the namespaces");
    // Two allowed sources: the nic end and a second address (the map holds more than one).
    let second = other_ip(&tb, 7);
    let forged = other_ip(&tb, 9);
    let att = attach(&tb, mode, false, &[second, tb.nic_ip], NODES);
    let mut want_sources: Vec<std::net::Ipv4Addr> =
        vec![second.into(), std::net::Ipv4Addr::from(tb.nic_ip)];
    want_sources.sort();
    assert_eq!(loader::read_sources(&tb.pin_dir).unwrap(), want_sources);
    let cfg = loader::read_config(&tb.pin_dir).unwrap();
    assert_eq!(cfg[common::config::NODES as usize], u32::from(NODES));
    let (port_rx, ready) = counter_socket(&tb, PORT);
    ready.recv().unwrap();

    let nic = tb.nic_ip;
    // Genuine decisions by instance: from an allowed source, sent by their epoch's leader.
    let genuine: Vec<(u64, [u8; 4], Vec<u8>)> = vec![
        (1, nic, value_by(1, EPOCH, LEADER, "genuine")),
        (2, nic, value_by(2, EPOCH, LEADER, "genuine")),
        // epoch 7: its leader is node 1 (7 mod 3), not the constant LEADER.
        (3, nic, value_by(3, 7, 1, "genuine")),
        (4, nic, value_by(4, EPOCH, LEADER, "genuine")),
        (5, second, value_by(5, 9, 0, "genuine")),
    ];
    // Refused: (source, packet).
    let forged_frames: Vec<([u8; 4], Vec<u8>)> = vec![
        // A stranger's DECIDE, otherwise perfect (right cluster, leader, next instance).
        (forged, value_by(3, EPOCH, LEADER, "forged")),
        (forged, value_by(4, 8, 2, "forged")),
        (forged, heartbeat(3)),
        // From an allowed address, but its sender does not lead its epoch.
        (nic, value_by(3, EPOCH, 1, "forged")),
        (nic, value_by(3, EPOCH, 0, "forged")),
        (nic, value_by(3, 6, LEADER, "forged")), // epoch 6: node 0 leads
        (nic, value_by(4, EPOCH, proto::wire::SENDER_NONE, "forged")),
        (second, decide_by(4, DecideKind::Heartbeat, &[], EPOCH, 1)),
    ];
    let mut frames = vec![];
    for (i, src, p) in &genuine[..2] {
        assert!(*i <= 2);
        frames.push(tb.frame_from(*src, PORT, p));
    }
    // The forged ones before the genuine 3 and 4: had one been logged, the genuine copy would be
    // a duplicate and the log would hold the forged bytes.
    for (src, p) in &forged_frames {
        frames.push(tb.frame_from(*src, PORT, p));
    }
    // From a stranger, but malformed or foreign: counted as such (format first), and passed.
    let mut bad_len = value_by(3, EPOCH, LEADER, "forged");
    bad_len[9] ^= 1;
    frames.push(tb.frame_from(forged, PORT, &bad_len));
    let other_cluster = Packet::Decide(Decide {
        meta: DecideMeta {
            instance: 3,
            epoch: EPOCH,
            msg_seq: 0,
            tree: 0,
            kind: DecideKind::Heartbeat,
        },
        count: 0,
        entries_raw: &[],
    })
    .to_vec(CLUSTER + 1, LEADER)
    .unwrap();
    frames.push(tb.frame_from(forged, PORT, &other_cluster));
    for (_, src, p) in &genuine[2..] {
        frames.push(tb.frame_from(*src, PORT, p));
    }
    let candidates = frames.len() as u64;
    frames.push(tb.frame(PORT, END)); // seen + foreign; ends the socket count
    send_all(&tb, &frames);
    let got_port = port_rx.join().unwrap();

    let mut log = DecisionLog::open_at(&tb.pin_dir, 1).unwrap();
    for (i, _, p) in &genuine {
        let d = log
            .next_timeout(Duration::from_secs(10))
            .unwrap()
            .unwrap_or_else(|| panic!("genuine instance {i} not logged"));
        assert_eq!(d.instance, *i);
        assert_eq!(&d.packet, p, "instance {i}: the genuine bytes");
    }
    assert_eq!(log.try_next().unwrap(), None, "nothing after 5");

    let s = wait_seen(&tb, candidates + 1);
    use common::counter as c;
    assert_eq!(s.get(c::SEEN), candidates + 1, "{s:?}");
    assert_eq!(
        s.get(c::UNAUTHORIZED),
        forged_frames.len() as u64,
        "every forged DECIDE counted: {s:?}"
    );
    assert_eq!(s.get(c::LOGGED), genuine.len() as u64, "{s:?}");
    assert_eq!(s.get(c::DUPLICATES), 0, "{s:?}");
    assert_eq!(s.get(c::STALE), 0, "{s:?}");
    assert_eq!(
        s.get(c::HEARTBEATS),
        0,
        "forged heartbeats are not heartbeats: {s:?}"
    );
    assert_eq!(s.get(c::MALFORMED), 1, "{s:?}");
    assert_eq!(s.get(c::FOREIGN), 2, "{s:?}");
    assert_eq!(s.get(c::CONSUMED), 0, "{s:?}");
    assert_eq!(s.get(c::INTERNAL), 0, "{s:?}");
    assert_eq!(
        s.get(c::SEEN),
        [
            c::MALFORMED,
            c::FOREIGN,
            c::UNAUTHORIZED,
            c::HEARTBEATS,
            c::LOGGED,
            c::DUPLICATES,
            c::STALE,
            c::INTERNAL
        ]
        .iter()
        .map(|&k| s.get(k))
        .sum::<u64>(),
        "every candidate in exactly one class: {s:?}"
    );
    // Dropped: the host's socket got the genuine DECIDEs and the malformed / foreign frames
    // from the stranger (the stack delivers those), not one forged DECIDE.
    assert_eq!(
        got_port,
        genuine.len() as u64 + 2,
        "unauthorized DECIDEs reach no socket"
    );
    assert_eq!(
        drain_ring(&tb),
        genuine.iter().map(|g| g.0).collect::<Vec<_>>(),
        "ring: the genuine decisions only"
    );
    att.detach().unwrap();
}

#[test]
fn members_only_native() {
    members_only(Mode::Native);
}

#[test]
fn members_only_skb() {
    members_only(Mode::Skb);
}

/// Without an allow-list and a node count the program hears every source and sender (as before
/// the check); with only the node count, every source but only epoch leaders.
#[test]
fn members_checks_are_off_until_configured() {
    if skipped() {
        return;
    }
    let tb = Testbed::new().expect("create the namespaces");
    let forged = other_ip(&tb, 9);
    let frames = [
        tb.frame_from(forged, PORT, &value_by(1, EPOCH, LEADER, "stranger")),
        tb.frame_from(tb.nic_ip, PORT, &value_by(2, EPOCH, 1, "not the leader")),
    ];
    use common::counter as c;

    let att = attach(&tb, Mode::Skb, false, &[], 0);
    assert!(loader::read_sources(&tb.pin_dir).unwrap().is_empty());
    send_all(&tb, &frames);
    let s = wait_seen(&tb, 2);
    assert_eq!(
        s.get(c::LOGGED),
        2,
        "no checks configured: both logged: {s:?}"
    );
    assert_eq!(s.get(c::UNAUTHORIZED), 0, "{s:?}");
    att.detach().unwrap();

    let att = attach(&tb, Mode::Skb, false, &[], NODES);
    send_all(&tb, &frames);
    let s = wait_seen(&tb, 2);
    assert_eq!(s.get(c::LOGGED), 1, "any source, leaders only: {s:?}");
    assert_eq!(s.get(c::UNAUTHORIZED), 1, "{s:?}");
    let mut log = DecisionLog::open_at(&tb.pin_dir, 1).unwrap();
    assert_eq!(
        log.next_timeout(Duration::from_secs(5))
            .unwrap()
            .map(|d| d.instance),
        Some(1)
    );
    att.detach().unwrap();
}

/// Whether the pinned doorbell holds rings nobody has taken (polled, never consumed here).
fn bell_rung(tb: &Testbed) -> bool {
    use std::os::fd::AsRawFd;
    let data = MapData::from_pin(tb.pin_dir.join(common::map_name::BELL)).unwrap();
    let bell = RingBuf::try_from(Map::from_map_data(data).unwrap()).unwrap();
    let mut pfd = libc::pollfd {
        fd: bell.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let r = unsafe { libc::poll(&mut pfd, 1, 0) };
    assert!(r >= 0, "poll: {}", std::io::Error::last_os_error());
    r == 1
}

/// This thread's voluntary context switches so far.
fn voluntary_switches() -> i64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) }, 0);
    u.ru_nvcsw
}

/// The doorbell: a logged decision rings it, a reader that finds nothing more empties it before
/// it sleeps (so its next sleep ends at the next decision), a reader waiting on a quiet log
/// sleeps on it instead of polling, and a reader asleep on it is woken by a decision.
#[test]
fn a_logged_decision_rings_the_bell() {
    if skipped() {
        return;
    }
    let tb = Testbed::new().expect("create the namespaces");
    let att = attach(&tb, Mode::Skb, false, &[tb.nic_ip], NODES);
    let mut log = DecisionLog::open_at(&tb.pin_dir, 1).unwrap();
    assert!(
        log.has_bell(),
        "the program this crate loads has a doorbell"
    );
    assert!(!bell_rung(&tb), "nothing logged yet");
    send_all(&tb, &[tb.frame(PORT, &simple(1))]);
    let s = wait_seen(&tb, 1);
    assert_eq!(s.get(common::counter::LOGGED), 1, "{s:?}");
    assert!(bell_rung(&tb), "instance 1 logged: the bell rang");
    assert_eq!(
        log.next_timeout(Duration::from_secs(5))
            .unwrap()
            .map(|d| d.instance),
        Some(1)
    );
    assert_eq!(log.next_timeout(Duration::from_millis(1)).unwrap(), None);

    // Quiet for longer than the busy window: the wait is spent asleep on the bell, woken at most
    // by its 10 ms backstop (about 30 times in 300 ms; polling naps of at most 1 ms would be
    // 300 or more).
    std::thread::sleep(Duration::from_millis(30));
    let before = voluntary_switches();
    assert_eq!(log.next_timeout(Duration::from_millis(300)).unwrap(), None);
    let switches = voluntary_switches() - before;
    assert!(
        switches < 100,
        "{switches} sleeps in 300 ms on a quiet log: polled, not asleep on the bell"
    );
    eprintln!("quiet log, 300 ms: {switches} voluntary context switches");
    assert!(
        !bell_rung(&tb),
        "a reader that slept on the bell emptied it"
    );

    // A reader asleep on the bell is woken by the next decision.
    let pin = tb.pin_dir.clone();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut log = DecisionLog::open_at(&pin, 2).unwrap();
        tx.send(()).unwrap();
        log.next_timeout(Duration::from_secs(20))
            .unwrap()
            .map(|d| d.instance)
    });
    rx.recv().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    send_all(&tb, &[tb.frame(PORT, &simple(2))]);
    assert_eq!(reader.join().unwrap(), Some(2));
    att.detach().unwrap();
}
