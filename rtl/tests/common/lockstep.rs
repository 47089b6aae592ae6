//! Lockstep of `nc_core` against `proto::node::Node`: both are fed the same events, one per
//! cycle, with the model's `now` equal to the RTL's cycle; every cycle their actions must be the
//! same (in the same order), and after every cycle their state registers too. At the end every
//! register word is read over the CSR bus and compared with `Node::read_register`.
//!
//! `nc_core` takes parsed fields, not frames: here `proto::wire::parse` plays the packet parser
//! (the same function the model uses), and the DECIDE headers the RTL sends are compared field
//! by field with the packets the model emits. What the RTL covers, and so what [`Env`]
//! generates, is listed in `rtl/README.md` ("Lockstep").

use std::collections::{BTreeMap, VecDeque};

use proto::auth::Keyring;
use proto::frame::{self, UdpMeta};
use proto::node::{Action, Dropped, NetFault, Node, State, Violation};
use proto::regs::{self, Config, Counter, addr, ctrl};
use proto::rsbcast::FaultKind;
use proto::wire::{self, Decide, DecideKind, DecideMeta, Entry, Packet, ParseError};
use rust_hdl::prelude::*;

use rtl::layout::mac_bytes;
use rtl::lowi_core::{class, fault, state};
use rtl::nc_core::NcCore;
use rtl::nc_engine::NcEngine;
use rtl::sim::{Cycle, Rng, bits, val};

/// One input event.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A UDP payload on tree port `tree`.
    Tree { tree: u8, bytes: Vec<u8> },
    /// A UDP payload on the client port.
    Client { bytes: Vec<u8> },
    /// A CSR write.
    Write { addr: u16, value: u32 },
}

/// An action, in a form both sides produce.
#[derive(Clone, Debug, PartialEq)]
pub enum Rec {
    Send {
        tree: u8,
        kind: u8,
        count: u16,
        instance: u64,
        epoch: u32,
        seq: u32,
    },
    Deliver {
        instance: u64,
        epoch: u32,
        kind: u8,
    },
    /// `leader: None` (RTL, epoch adopted from a copy: the core has no strobe field for it); the
    /// LEADER register, compared with the model's after every edge, checks it.
    Leader {
        epoch: u32,
        leader: Option<u8>,
    },
    State(u64),
    Fault {
        code: u64,
        missing: Option<u8>,
    },
    Stale(u32),
    Deposed(u32),
    NotLeader {
        client: u32,
        seq: u64,
        leader: u8,
        epoch: u32,
    },
    /// A model action outside what the RTL produces.
    Unsupported(String),
}

fn same(a: &Rec, b: &Rec) -> bool {
    match (a, b) {
        (
            Rec::Leader {
                epoch: e1,
                leader: l1,
            },
            Rec::Leader {
                epoch: e2,
                leader: l2,
            },
        ) => e1 == e2 && (l1.is_none() || l2.is_none() || l1 == l2),
        _ => a == b,
    }
}

fn state_code(s: State) -> Option<u64> {
    Some(match s {
        State::Disabled => state::DISABLED,
        State::Armed => state::ARMED,
        State::Active => state::ACTIVE,
        State::Faulted => state::FAULTED,
        State::Joining => state::JOINING,
        // The software's recovery extension (off in the lockstep).
        State::Recovering => return None,
    })
}

fn fault_rec(f: NetFault) -> Rec {
    match f {
        NetFault::Rsbcast(FaultKind::MissingCopy { missing }) => Rec::Fault {
            code: fault::MISSING_COPY,
            missing: Some(missing),
        },
        NetFault::Rsbcast(FaultKind::SeqGap { .. }) => Rec::Fault {
            code: fault::SEQ_GAP,
            missing: None,
        },
        NetFault::Rsbcast(FaultKind::TooManyInFlight) => Rec::Fault {
            code: fault::TOO_MANY_IN_FLIGHT,
            missing: None,
        },
        NetFault::InstanceMismatch { .. } => Rec::Fault {
            code: fault::INSTANCE_MISMATCH,
            missing: None,
        },
        NetFault::EpochChangeInFlight => Rec::Fault {
            code: fault::EPOCH_CHANGE_IN_FLIGHT,
            missing: None,
        },
        NetFault::EpochExhausted => Rec::Fault {
            code: fault::EPOCH_EXHAUSTED,
            missing: None,
        },
        // Only a software driver reports failed sends (Node::copies_failed) and kernel drops
        // (Node::receive_overflow).
        NetFault::SendFailed => Rec::Unsupported("a failed copy send".into()),
        NetFault::InputOverflow { .. } => Rec::Unsupported("datagrams dropped by a kernel".into()),
    }
}

/// An OK reply the RTL owes: (cycle due, client, seq, payload, instance, index).
type Ok = (u64, u32, u64, Vec<u8>, u64, u16);

/// Payload bytes as `nc_core` takes them: the first byte in the top 8 bits of `P`, bytes past
/// `P / 8` left out (the core refuses such a request as oversize and stores nothing).
pub fn payload_bits<const P: usize>(p: &[u8]) -> Bits<P> {
    let mut b = Bits::<P>::default();
    for (j, w) in p.chunks(8).take(P / 64).enumerate() {
        let mut x = [0u8; 8];
        x[..w.len()].copy_from_slice(w);
        b.set_bits::<64>(P - 64 * (j + 1), Bits::<64>::from(u64::from_be_bytes(x)));
    }
    b
}

/// The `P / 8` bytes of a payload word, first byte from the top 8 bits.
pub fn payload_bytes<const P: usize>(b: Bits<P>) -> Vec<u8> {
    (0..P / 64)
        .flat_map(|j| val(b.get_bits::<64>(P - 64 * (j + 1))).to_be_bytes())
        .collect()
}

/// The RTL side: `nc_core` fed parsed fields, or `nc_engine` fed frames on its streams.
pub enum Rtl {
    /// `nc_core`; `proto::wire::parse` stands in for the packet parser.
    Core(Cycle<NcCore>),
    /// `nc_engine`: every payload is framed (`proto::frame::emit_udp`) and streamed on its port.
    Engine(Box<EngineSide>),
}

/// `nc_engine` with the frames still streaming into each port (trees 0..3, then the client).
pub struct EngineSide {
    /// The circuit.
    pub c: Cycle<NcEngine>,
    beats: [VecDeque<(u64, u64, bool)>; 5],
    payloads: [VecDeque<Vec<u8>>; 5],
    /// DECIDE frames the model's sends call for, per tree, not yet seen on the output.
    want_frames: [VecDeque<Vec<u8>>; 4],
    /// The frame being received on each output stream.
    got_frame: [Vec<u8>; 4],
    /// Frames compared so far.
    pub frames_compared: u64,
    /// The most requests one compared DECIDE frame carried.
    pub most_entries: u16,
    /// Host-path frames the model's decisions call for, not yet seen on `h_*`.
    want_host: VecDeque<Vec<u8>>,
    got_host: Vec<u8>,
    /// Host-path frames compared so far.
    pub host_compared: u64,
    /// Client reply frames the model's replies call for (OK, NOT_LEADER), not yet seen on `r_*`.
    want_ok: VecDeque<Vec<u8>>,
    want_nl: VecDeque<Vec<u8>>,
    got_reply: Vec<u8>,
    /// OK and NOT_LEADER frames compared so far.
    pub oks_compared: u64,
    /// NOT_LEADER frames compared so far.
    pub nls_compared: u64,
    /// Replies the generator dropped (its queue was full), and model replies skipped for them.
    pub replies_dropped: u64,
    replies_skipped: u64,
    /// Backpressure on the client stream (issue 17 item 2): `r_ready` high with this
    /// probability (%) each cycle, from this generator; None: always ready.
    pub reply_pause: Option<(Rng, u64)>,
    /// Cycles in which a reply beat was offered and not taken.
    pub reply_stalls: u64,
}

/// One beat of an output stream into the frame being received; the whole frame at its last beat.
fn beat(cur: &mut Vec<u8>, data: u64, keep: u64, last: bool) -> Option<Vec<u8>> {
    let n = keep.count_ones() as usize;
    cur.extend_from_slice(&data.to_le_bytes()[..n]);
    last.then(|| std::mem::take(cur))
}

/// The harness's address of client `id` (MAC, IPv4, UDP port): its requests come from it and
/// the replies must go to it.
fn client_addr(id: u32) -> ([u8; 6], [u8; 4], u16) {
    let b = id.to_be_bytes();
    (
        [2, 0xC1, b[0], b[1], b[2], b[3]],
        [10, 1, b[2], b[3]],
        40000 + (id % 1000) as u16,
    )
}

/// A frame as the generators send it: `emit_udp` of `packet` with UDP checksum 0 ("none").
pub fn generated_frame(meta: UdpMeta, packet: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; frame::PAYLOAD_OFFSET + packet.len()];
    let n = frame::emit_udp(&meta, packet, &mut f).expect("the frame fits");
    f.truncate(n);
    f[frame::ETH_LEN + frame::IPV4_LEN + 6] = 0;
    f[frame::ETH_LEN + frame::IPV4_LEN + 7] = 0;
    f
}

/// The host-path frame `host_gen` must send for a decision the model handed to the host.
fn host_frame(cfg: &Config, packet: &[u8]) -> Vec<u8> {
    generated_frame(
        UdpMeta {
            src_mac: mac_bytes(cfg.src_mac),
            dst_mac: mac_bytes(cfg.host_mac),
            src_ip: cfg.src_ip.to_be_bytes(),
            dst_ip: cfg.host_ip.to_be_bytes(),
            src_port: cfg.decide_port,
            dst_port: cfg.host_port,
            ttl: cfg.ttl,
        },
        packet,
    )
}

/// The reply frame `reply_gen` must send for a reply the model sent to `client_id`.
fn reply_frame(cfg: &Config, client_id: u32, packet: &[u8]) -> Vec<u8> {
    let (m, ip, port) = client_addr(client_id);
    generated_frame(
        UdpMeta {
            src_mac: mac_bytes(cfg.src_mac),
            dst_mac: m,
            src_ip: cfg.src_ip.to_be_bytes(),
            dst_ip: ip,
            src_port: cfg.client_port,
            dst_port: port,
            ttl: cfg.ttl,
        },
        packet,
    )
}

/// The DECIDE frame `pkt_gen` must send on `tree` for a packet the model sent.
fn decide_frame(cfg: &Config, tree: u8, packet: &[u8]) -> Vec<u8> {
    let g = cfg.tree_groups[tree as usize].to_be_bytes();
    generated_frame(
        UdpMeta {
            src_mac: mac_bytes(cfg.src_mac),
            dst_mac: frame::multicast_mac(g),
            src_ip: cfg.src_ip.to_be_bytes(),
            dst_ip: g,
            src_port: cfg.decide_port,
            dst_port: cfg.decide_port,
            ttl: cfg.ttl,
        },
        packet,
    )
}

impl EngineSide {
    /// Queue the event's frame on its port (or put a CSR write on the bus) and drive one beat
    /// per port.
    fn drive(&mut self, ev: &Option<Event>, cfg: &Config) {
        let mut frame_on = |port: usize, bytes: &[u8], dst_port: u16, group: u32| {
            // A request comes from its client's address (where the replies must go). Parsed
            // with the cluster id it carries: a frame may start streaming before the CSR
            // write of the cluster id that the parser judges it with at its last beat.
            let cluster = bytes.get(4..8).map_or(cfg.cluster_id, |b| {
                u32::from_be_bytes([b[0], b[1], b[2], b[3]])
            });
            let (src_mac, src_ip, src_port) = match wire::parse(bytes, cluster) {
                Ok((_, Packet::Request(e))) if port == 4 => client_addr(e.client_id),
                _ => ([2, 0, 0, 0, 0, 9], [10, 0, 0, 9], 40000),
            };
            let meta = UdpMeta {
                src_mac,
                dst_mac: frame::multicast_mac(group.to_be_bytes()),
                src_ip,
                dst_ip: group.to_be_bytes(),
                src_port,
                dst_port,
                ttl: 8,
            };
            // Frames shorter than Ethernet's minimum (60 bytes before the FCS) are padded, as
            // a MAC does; the UDP length, not the frame, delimits the packet.
            let mut f = vec![0u8; (frame::PAYLOAD_OFFSET + bytes.len()).max(60)];
            frame::emit_udp(&meta, bytes, &mut f).expect("the frame fits");
            let chunks: Vec<&[u8]> = f.chunks(8).collect();
            for (i, c) in chunks.iter().enumerate() {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                self.beats[port].push_back((
                    u64::from_le_bytes(w),
                    (1u64 << c.len()) - 1,
                    i + 1 == chunks.len(),
                ));
            }
            self.payloads[port].push_back(bytes.to_vec());
        };
        let u = self.c.uut.as_mut();
        u.csr_write.next = false;
        match ev {
            Some(Event::Tree { tree, bytes }) => frame_on(
                *tree as usize,
                bytes,
                cfg.decide_port,
                cfg.tree_groups[*tree as usize],
            ),
            Some(Event::Client { bytes }) => frame_on(4, bytes, cfg.client_port, 0x0A00_0001),
            Some(Event::Write { addr, value }) => {
                u.csr_write.next = true;
                u.csr_addr.next = bits(*addr as u64);
                u.csr_wdata.next = bits(*value as u64);
            }
            None => {}
        }
        macro_rules! port {
            ($i:expr, $d:ident, $k:ident, $v:ident, $l:ident) => {
                match self.beats[$i].pop_front() {
                    Some((d, k, l)) => {
                        u.$d.next = bits(d);
                        u.$k.next = bits(k);
                        u.$v.next = true;
                        u.$l.next = l;
                    }
                    None => {
                        u.$v.next = false;
                        u.$l.next = false;
                    }
                }
            };
        }
        port!(0, t0_data, t0_keep, t0_valid, t0_last);
        port!(1, t1_data, t1_keep, t1_valid, t1_last);
        port!(2, t2_data, t2_keep, t2_valid, t2_last);
        port!(3, t3_data, t3_keep, t3_valid, t3_last);
        port!(4, c_data, c_keep, c_valid, c_last);
    }
}

/// The fields of the event the core acts on, from the RTL's event inputs.
#[derive(Clone, Copy, Debug, Default)]
struct EvFields {
    client: u64,
    seq: u64,
    epoch: u64,
    instance: u64,
    kind: u64,
}

/// The RTL outputs one cycle's comparison reads (the same names on both tops).
#[derive(Clone, Debug, Default)]
struct Snap {
    send: bool,
    send_kind: u64,
    send_count: u64,
    send_instance: u64,
    send_epoch: u64,
    send_seq: u64,
    lead_deliver: bool,
    rx_deliver: bool,
    tick_leader_changed: bool,
    tick_epoch: u64,
    tick_leader: u64,
    rx_leader_changed: bool,
    tick_fault: bool,
    tick_fault_code: u64,
    tick_fault_missing: u64,
    rx_fault: bool,
    rx_fault_code: u64,
    state_mode: bool,
    mode_state: u64,
    state_start: bool,
    state_rx_active: bool,
    viol_stale: bool,
    viol_deposed: bool,
    nl_reply: bool,
    nl_leader: u64,
    nl_epoch: u64,
    /// The fields of the event the core acts on (a request's, a copy's), as its inputs
    /// carried them in the cycle it was taken.
    ev: EvFields,
    ok_valid: bool,
    ok_client: u64,
    ok_seq: u64,
    ok_instance: u64,
    ok_index: u64,
    /// The whole payload word, first byte first.
    ok_payload: Vec<u8>,
    ok_len: u64,
    status: u64,
    state: u64,
    epoch: u64,
    last_instance: u64,
    leader: u64,
}

macro_rules! snap {
    ($u:expr, $cc:ident, $cs:ident, $re:ident, $ri:ident, $rk:ident) => {
        Snap {
            send: $u.send.val(),
            send_kind: val($u.send_kind.val()),
            send_count: val($u.send_count.val()),
            send_instance: val($u.send_instance.val()),
            send_epoch: val($u.send_epoch.val()),
            send_seq: val($u.send_seq.val()),
            lead_deliver: $u.lead_deliver.val(),
            rx_deliver: $u.rx_deliver.val(),
            tick_leader_changed: $u.tick_leader_changed.val(),
            tick_epoch: val($u.tick_epoch.val()),
            tick_leader: val($u.tick_leader.val()),
            rx_leader_changed: $u.rx_leader_changed.val(),
            tick_fault: $u.tick_fault.val(),
            tick_fault_code: val($u.tick_fault_code.val()),
            tick_fault_missing: val($u.tick_fault_missing.val()),
            rx_fault: $u.rx_fault.val(),
            rx_fault_code: val($u.rx_fault_code.val()),
            state_mode: $u.state_mode.val(),
            mode_state: val($u.mode_state.val()),
            state_start: $u.state_start.val(),
            state_rx_active: $u.state_rx_active.val(),
            viol_stale: $u.viol_stale.val(),
            viol_deposed: $u.viol_deposed.val(),
            nl_reply: $u.nl_reply.val(),
            nl_leader: val($u.nl_leader.val()),
            nl_epoch: val($u.nl_epoch.val()),
            ev: EvFields {
                client: val($u.$cc.val()),
                seq: val($u.$cs.val()),
                epoch: val($u.$re.val()),
                instance: val($u.$ri.val()),
                kind: val($u.$rk.val()),
            },
            ok_valid: $u.ok_valid.val(),
            ok_client: val($u.ok_client.val()),
            ok_seq: val($u.ok_seq.val()),
            ok_instance: val($u.ok_instance.val()),
            ok_index: val($u.ok_index.val()),
            ok_payload: payload_bytes($u.ok_payload.val()),
            ok_len: val($u.ok_len.val()),
            status: val($u.status.val()),
            state: val($u.state.val()),
            epoch: val($u.epoch.val()),
            last_instance: val($u.last_instance.val()),
            leader: val($u.leader.val()),
        }
    };
}

impl Rtl {
    fn snap(&self) -> Snap {
        match self {
            Rtl::Core(c) => snap!(c.uut, cl_client, cl_seq, rx_epoch, rx_instance, rx_kind),
            Rtl::Engine(e) => snap!(
                e.c.uut,
                ev_client,
                ev_req_seq,
                ev_epoch,
                ev_decide_instance,
                ev_decide_kind
            ),
        }
    }
    fn cycle(&self) -> u64 {
        match self {
            Rtl::Core(c) => c.cycle,
            Rtl::Engine(e) => e.c.cycle,
        }
    }
    fn edge(&mut self) {
        match self {
            Rtl::Core(c) => c.edge(),
            Rtl::Engine(e) => e.c.edge(),
        }
    }
    /// Read a CSR word (no write this cycle).
    fn read(&mut self, a: u16) -> u32 {
        macro_rules! rd {
            ($c:expr) => {{
                $c.uut.csr_write.next = false;
                $c.uut.csr_addr.next = bits(a as u64);
                $c.settle();
                val($c.uut.csr_rdata.val()) as u32
            }};
        }
        match self {
            Rtl::Core(c) => {
                c.uut.rx_valid.next = false;
                c.uut.cl_valid.next = false;
                rd!(c)
            }
            Rtl::Engine(e) => rd!(e.c),
        }
    }
}

/// The two sides and the trace so far.
pub struct Lockstep {
    /// The RTL.
    pub rtl: Rtl,
    /// The reference model.
    pub model: Node,
    oks: VecDeque<Ok>,
    /// Every event with its cycle (printed on a mismatch).
    pub trace: Vec<(u64, Event)>,
    /// How often each kind of model action was compared (coverage of the traces).
    pub seen: BTreeMap<String, u64>,
    /// The RTL's actions in the last cycle stepped.
    pub last: Vec<Rec>,
    /// The model's STATUS.SYNCED after the last cycle.
    synced: bool,
    /// The event the RTL took in the last cycle: the core acts on it in this one (rtl/README,
    /// "The event pipeline"), so the model gets it now.
    pending: Option<Event>,
    /// Its fields as the RTL's inputs carried them (client, seq, epoch, instance, kind), for
    /// the records of the actions it causes.
    pending_fields: EvFields,
}

impl Default for Lockstep {
    fn default() -> Self {
        Self::new()
    }
}

impl Lockstep {
    /// Both sides at reset (the model with the register map's reset values), `nc_core`.
    pub fn new() -> Self {
        Self::with(Rtl::Core(Cycle::new(<NcCore>::default(), |c| &mut c.clock)))
    }

    /// The same against `nc_engine` (frames on streams).
    pub fn engine() -> Self {
        let mut c = Cycle::new(NcEngine::default(), |c| &mut c.clock);
        streams_ready(&mut c.uut, [true; 4], true, true);
        c.settle();
        Self::with(Rtl::Engine(Box::new(EngineSide {
            c,
            beats: Default::default(),
            payloads: Default::default(),
            want_frames: Default::default(),
            got_frame: Default::default(),
            frames_compared: 0,
            most_entries: 0,
            want_host: Default::default(),
            got_host: Default::default(),
            host_compared: 0,
            want_ok: Default::default(),
            want_nl: Default::default(),
            got_reply: Default::default(),
            oks_compared: 0,
            nls_compared: 0,
            replies_dropped: 0,
            replies_skipped: 0,
            reply_pause: None,
            reply_stalls: 0,
        })))
    }

    fn with(rtl: Rtl) -> Self {
        Lockstep {
            rtl,
            model: Node::new(Config::default()).expect("reset values are a legal configuration"),
            oks: VecDeque::new(),
            trace: Vec::new(),
            seen: BTreeMap::new(),
            last: Vec::new(),
            synced: false,
            pending: None,
            pending_fields: EvFields::default(),
        }
    }

    /// The current cycle (the model's `now`).
    pub fn now(&self) -> u64 {
        self.rtl.cycle()
    }

    fn fail(&self, what: String) -> String {
        let cluster = self.model.config().cluster_id;
        let mut s = format!(
            "lockstep mismatch at cycle {}: {what}\ntrace:\n",
            self.now()
        );
        for (t, e) in &self.trace {
            s += &format!("  {t:6}: {}\n", describe(e, cluster));
        }
        s
    }

    /// One cycle with at most one event. Err: the first difference, with the whole trace.
    pub fn step(&mut self, ev: Option<Event>) -> Result<(), String> {
        let t = self.now();
        // ---- RTL inputs; the event the RTL takes this cycle (for nc_engine: the frame the core
        // takes this cycle, which may have arrived earlier). The core acts on it in the next
        // cycle, when the model gets it.
        let taken = match &mut self.rtl {
            Rtl::Core(c) => {
                drive_core(c, &ev, self.model.config());
                c.settle();
                ev.clone()
            }
            Rtl::Engine(e) => {
                let cfg = *self.model.config();
                if let Some((rng, pct)) = &mut e.reply_pause {
                    e.c.uut.r_ready.next = rng.pct(*pct);
                }
                e.drive(&ev, &cfg);
                e.c.settle();
                let u = &e.c.uut;
                if u.cl_taken.val() {
                    e.payloads[4]
                        .pop_front()
                        .map(|bytes| Event::Client { bytes })
                } else if u.rx_taken.val() {
                    let tree = val(u.rx_port.val()) as u8;
                    e.payloads[tree as usize]
                        .pop_front()
                        .map(|bytes| Event::Tree { tree, bytes })
                } else {
                    ev.clone().filter(|e| matches!(e, Event::Write { .. }))
                }
            }
        };
        let model_ev = std::mem::replace(&mut self.pending, taken);
        if let Some(e) = &model_ev {
            self.trace.push((t, e.clone()));
        }
        // ---- model
        let mut out = Vec::new();
        self.model.tick(t, &mut out);
        let unauthorized = self.model.counter(Counter::Unauthorized);
        let before = self.model.state();
        match &model_ev {
            Some(Event::Tree { tree, bytes }) => {
                self.model.receive_tree(t, *tree, bytes, &mut out);
                let k = self.model.counter(Counter::Unauthorized) - unauthorized;
                *self.seen.entry("unauthorized (tree)".into()).or_default() += k;
            }
            Some(Event::Client { bytes }) => {
                let oversize = self.model.counter(Counter::RequestsOversize);
                self.model.receive_client(t, bytes, &mut out);
                let k = self.model.counter(Counter::Unauthorized) - unauthorized;
                *self.seen.entry("unauthorized (client)".into()).or_default() += k;
                let k = self.model.counter(Counter::RequestsOversize) - oversize;
                *self.seen.entry("request oversize".into()).or_default() += k;
            }
            Some(Event::Write { addr, value }) => {
                let was = self.model.state();
                let r = self.model.write_register(t, *addr, *value, &mut out);
                if *addr == addr::CTRL && value & ctrl::ACTIVATE != 0 {
                    let key = match (r, self.model.state()) {
                        (Err(_), _) => "ACTIVATE refused",
                        (Ok(()), State::Active) => "ACTIVATE: active at once",
                        (Ok(()), _) => "ACTIVATE: active at the next copy",
                    };
                    *self.seen.entry(key.into()).or_default() += 1;
                }
                if *addr == addr::TIMEOUT && was == State::Joining {
                    *self
                        .seen
                        .entry("TIMEOUT written while joining".into())
                        .or_default() += 1;
                }
            }
            None => {}
        }
        // Joining: the lock-on, and a joining node made active by a copy.
        let status = self.model.status_bits();
        if status & regs::status::SYNCED != 0 && !self.synced {
            *self.seen.entry("joining: locked on".into()).or_default() += 1;
        }
        self.synced = status & regs::status::SYNCED != 0;
        if before == State::Joining
            && out.contains(&Action::StateChanged(State::Active))
            && matches!(model_ev, Some(Event::Tree { .. }))
        {
            *self
                .seen
                .entry("joining: active at a copy".into())
                .or_default() += 1;
        }
        // The receiver's RAM of first-copy times is read beyond its three head registers.
        if self.model.rx_in_flight() >= 4 {
            *self.seen.entry("4 or more in flight".into()).or_default() += 1;
        }
        // ---- compare this cycle's actions
        let want = self.model_recs(t, &out)?;
        let mut snap = self.rtl.snap();
        // The inputs of this cycle are the next cycle's event; this cycle's actions belong to
        // the event taken in the cycle before.
        let fields = snap.ev;
        snap.ev = std::mem::replace(&mut self.pending_fields, fields);
        let got = rtl_recs(&snap, self.model.config().trees);
        let me = self.model.config().node_id;
        for r in &want {
            let key = match r {
                Rec::Send { kind, .. } => format!("send {:?}", DecideKind::from_u8(*kind)),
                Rec::Leader { leader, .. } if *leader == Some(me) => "leader: this node".into(),
                Rec::Fault { code, .. } => format!("net fault {code}"),
                other => format!("{other:?}")
                    .split([' ', '('])
                    .next()
                    .unwrap_or("")
                    .to_string(),
            };
            *self.seen.entry(key).or_default() += 1;
        }
        if !self.oks.is_empty() {
            *self.seen.entry("ok reply".into()).or_default() += 1;
        }
        if want.len() != got.len() || want.iter().zip(&got).any(|(a, b)| !same(a, b)) {
            return Err(self.fail(format!(
                "actions differ\n  model: {want:?}\n  rtl:   {got:?}"
            )));
        }
        self.last = got;
        // nc_engine: the DECIDE frames on the output streams must be the model's sends, framed.
        if let Rtl::Engine(e) = &mut self.rtl {
            let cfg = *self.model.config();
            for a in &out {
                match a {
                    Action::Send { tree, packet, .. } => {
                        e.want_frames[*tree as usize].push_back(decide_frame(&cfg, *tree, packet))
                    }
                    Action::Deliver(d) => e.want_host.push_back(host_frame(&cfg, &d.packet)),
                    Action::Reply { client_id, packet } => {
                        let f = reply_frame(&cfg, *client_id, packet);
                        match wire::parse(packet, cfg.cluster_id) {
                            Ok((_, Packet::ReplyNotLeader(_))) => e.want_nl.push_back(f),
                            _ => e.want_ok.push_back(f),
                        }
                    }
                    _ => {}
                }
            }
            let u = &e.c.uut;
            if u.host_drop.val() {
                return Err(self.fail("host_gen dropped a decision (both slots busy)".into()));
            }
            // The host path: one frame per decision, in order.
            if u.h_valid.val() {
                let (d, k) = (val(u.h_data.val()), val(u.h_keep.val()));
                if let Some(got) = beat(&mut e.got_host, d, k, u.h_last.val()) {
                    let want = e.want_host.pop_front();
                    e.host_compared += 1;
                    if want.as_ref() != Some(&got) {
                        return Err(self.fail(format!(
                            "host-path frame\n  model: {want:02x?}\n  rtl:   {got:02x?}"
                        )));
                    }
                }
            }
            let mut reply_bad = None;
            // Client replies: OK and NOT_LEADER frames each in the model's order; a reply the
            // generator's full queue dropped (flagged) is skipped, and only those.
            let u = &e.c.uut;
            let drops = u.reply_drop_ok.val() as u64 + u.reply_drop_nl.val() as u64;
            e.replies_dropped += drops;
            // The model counts what its driver could not send (`replies_dropped`).
            for _ in 0..drops {
                self.model.output_dropped(Dropped::Reply);
            }
            e.reply_stalls += (u.r_valid.val() && !u.r_ready.val()) as u64;
            if u.r_valid.val() && u.r_ready.val() {
                let (d, k) = (val(u.r_data.val()), val(u.r_keep.val()));
                if let Some(got) = beat(&mut e.got_reply, d, k, u.r_last.val()) {
                    let is_nl = matches!(
                        frame::parse_udp(&got).map(|(_, p)| wire::parse(p, cfg.cluster_id)),
                        Ok(Ok((_, Packet::ReplyNotLeader(_))))
                    );
                    let want = if is_nl {
                        &mut e.want_nl
                    } else {
                        &mut e.want_ok
                    };
                    let mut skipped = 0;
                    while want.front().is_some_and(|w| w != &got) {
                        want.pop_front();
                        skipped += 1;
                    }
                    let found = want.pop_front().is_some();
                    e.replies_skipped += skipped;
                    if is_nl {
                        e.nls_compared += 1;
                    } else {
                        e.oks_compared += 1;
                    }
                    if !found || e.replies_skipped > e.replies_dropped {
                        reply_bad = Some(format!(
                            "client reply frame not the model's next (after {} drops): {got:02x?}",
                            e.replies_dropped
                        ));
                    }
                }
            }
            if let Some(b) = reply_bad {
                return Err(self.fail(b));
            }
            if u.gen_overrun.val() {
                return Err(self.fail("pkt_gen overrun (a send while a frame waited)".into()));
            }
            let outs = [
                (
                    u.g0_valid.val(),
                    val(u.g0_data.val()),
                    val(u.g0_keep.val()),
                    u.g0_last.val(),
                ),
                (
                    u.g1_valid.val(),
                    val(u.g1_data.val()),
                    val(u.g1_keep.val()),
                    u.g1_last.val(),
                ),
                (
                    u.g2_valid.val(),
                    val(u.g2_data.val()),
                    val(u.g2_keep.val()),
                    u.g2_last.val(),
                ),
                (
                    u.g3_valid.val(),
                    val(u.g3_data.val()),
                    val(u.g3_keep.val()),
                    u.g3_last.val(),
                ),
            ];
            let mut bad = None;
            for (t, (v, d, k, l)) in outs.into_iter().enumerate() {
                if !v {
                    continue;
                }
                if let Some(got) = beat(&mut e.got_frame[t], d, k, l) {
                    let want = e.want_frames[t].pop_front();
                    if want.as_ref() != Some(&got) {
                        bad = Some(format!(
                            "DECIDE frame on tree {t}\n  model: {want:02x?}\n  rtl:   {got:02x?}"
                        ));
                    }
                    e.frames_compared += 1;
                    let cluster = self.model.config().cluster_id;
                    if let Ok(Ok((_, Packet::Decide(d)))) =
                        frame::parse_udp(&got).map(|(_, p)| wire::parse(p, cluster))
                    {
                        e.most_entries = e.most_entries.max(d.count);
                    }
                }
            }
            if let Some(b) = bad {
                return Err(self.fail(b));
            }
        }
        // OK replies stream out of the egress FIFO two cycles after the send, one per cycle.
        let u = &snap;
        let rtl_ok = u.ok_valid.then(|| {
            let len = (u.ok_len as usize).min(u.ok_payload.len());
            (
                t,
                u.ok_client as u32,
                u.ok_seq,
                u.ok_payload[..len].to_vec(),
                u.ok_instance,
                u.ok_index as u16,
            )
        });
        let due = self.oks.front().filter(|o| o.0 <= t).cloned();
        if rtl_ok != due {
            return Err(self.fail(format!(
                "OK reply differs\n  model: {due:?}\n  rtl:   {rtl_ok:?}"
            )));
        }
        if let Some(o) = &due {
            // Coverage: OKs of requests longer than the former 8-byte entries, and of the
            // longest `nc_core` stores.
            let n = o.3.len();
            if n > 8 {
                *self.seen.entry("ok payload > 8 B".into()).or_default() += 1;
            }
            if n == rtl::lowi_core::MAX_PAYLOAD as usize {
                *self
                    .seen
                    .entry("ok payload of MAX_PAYLOAD".into())
                    .or_default() += 1;
            }
            self.oks.pop_front();
        }
        // ---- clock edge, then the state registers
        self.rtl.edge();
        let u = self.rtl.snap();
        let m = &self.model;
        if u.status as u32 != m.status_bits() {
            return Err(self.fail(format!(
                "STATUS model {:#x} rtl {:#x}",
                m.status_bits(),
                u.status
            )));
        }
        if Some(u.state) != state_code(m.state()) {
            return Err(self.fail(format!("state model {:?} rtl {}", m.state(), u.state)));
        }
        if u.epoch != m.epoch() as u64 {
            return Err(self.fail(format!("epoch model {} rtl {}", m.epoch(), u.epoch)));
        }
        if u.last_instance != m.last_decided().unwrap_or(0) {
            return Err(self.fail(format!(
                "last decided model {:?} rtl {}",
                m.last_decided(),
                u.last_instance
            )));
        }
        if u.leader != m.leader() as u64 {
            return Err(self.fail(format!("leader model {} rtl {}", m.leader(), u.leader)));
        }
        Ok(())
    }

    fn model_recs(&mut self, t: u64, out: &[Action]) -> Result<Vec<Rec>, String> {
        let cluster = self.model.config().cluster_id;
        let mut recs = Vec::new();
        let mut batch: Vec<(u32, u64, Vec<u8>)> = Vec::new();
        let mut oks = Vec::new();
        for a in out {
            match a {
                Action::Send { tree, packet, .. } => match wire::parse(packet, cluster) {
                    Ok((_, Packet::Decide(d))) => {
                        if *tree == 0 {
                            batch = d
                                .entries()
                                .map(|e| (e.client_id, e.seq, e.payload.to_vec()))
                                .collect();
                        }
                        recs.push(Rec::Send {
                            tree: *tree,
                            kind: d.meta.kind as u8,
                            count: d.count,
                            instance: d.meta.instance,
                            epoch: d.meta.epoch,
                            seq: d.meta.msg_seq,
                        });
                    }
                    _ => recs.push(Rec::Unsupported(format!("unparsable send {packet:?}"))),
                },
                Action::Reply { packet, .. } => match wire::parse(packet, cluster) {
                    Ok((_, Packet::ReplyOk(r))) => oks.push(r),
                    Ok((_, Packet::ReplyNotLeader(r))) => recs.push(Rec::NotLeader {
                        client: r.client_id,
                        seq: r.seq,
                        leader: r.leader,
                        epoch: r.epoch,
                    }),
                    _ => recs.push(Rec::Unsupported(format!("reply {packet:?}"))),
                },
                Action::Deliver(d) => recs.push(Rec::Deliver {
                    instance: d.instance,
                    epoch: d.epoch,
                    kind: d.kind as u8,
                }),
                Action::LeaderChanged { epoch, leader } => recs.push(Rec::Leader {
                    epoch: *epoch,
                    leader: Some(*leader),
                }),
                Action::StateChanged(s) => recs.push(match state_code(*s) {
                    Some(c) => Rec::State(c),
                    None => Rec::Unsupported(format!("{s:?}")),
                }),
                Action::NetFault(f) => recs.push(fault_rec(*f)),
                Action::Violation(Violation::StaleEpoch { epoch }) => recs.push(Rec::Stale(*epoch)),
                Action::Violation(Violation::Deposed { epoch }) => recs.push(Rec::Deposed(*epoch)),
                Action::Violation(v) => recs.push(Rec::Unsupported(format!("{v:?}"))),
                Action::Rejoin
                | Action::Recovered { .. }
                | Action::FillGap { .. }
                | Action::FilledFromKept(_) => recs.push(Rec::Unsupported(format!("{a:?}"))),
            }
        }
        // The model's OKs must be exactly the batch it sent, in order (a check of the harness).
        if !oks.is_empty() && oks.len() != batch.len() {
            return Err(self.fail(format!(
                "model OKs {oks:?} do not match its batch {batch:?}"
            )));
        }
        for (i, (r, (client, seq, payload))) in oks.iter().zip(batch).enumerate() {
            if r.client_id != client || r.seq != seq || r.index as usize != i {
                return Err(self.fail(format!("model OK {r:?} is not entry {i} of its batch")));
            }
            self.oks
                .push_back((t + 2 + i as u64, client, seq, payload, r.instance, r.index));
        }
        Ok(recs)
    }

    /// Read every register word over the CSR bus and compare with the model. This ends the
    /// trace: `csr` registers each cycle's counter increments before adding them, so a count
    /// shows one cycle after the cycle it counts, and the RTL is clocked once more (no CSR
    /// write, no `nc_core` event) between the other registers and the counters. Whatever the
    /// RTL does in that cycle is only registered, not yet counted.
    pub fn compare_registers(&mut self) -> Result<(), String> {
        // The last event taken: let the core act on it (and the model take it) first.
        if self.pending.is_some() {
            self.step(None)?;
        }
        let mut words: Vec<u16> = Vec::new();
        for r in regs::REGISTERS {
            words.push(r.addr);
            if r.width == 64 {
                words.push(r.addr + 4);
            }
        }
        let counters = words.len();
        for c in Counter::ALL {
            words.push(c.addr());
            words.push(c.addr() + 4);
        }
        for (i, a) in words.into_iter().enumerate() {
            if i == counters {
                self.rtl.edge();
            }
            let want = self
                .model
                .read_register(a)
                .map_err(|e| format!("model read {a:#x}: {e:?}"))?;
            let got = self.rtl.read(a);
            if got != want {
                let name = regs::word(a).map(|(r, _)| r.name).unwrap_or("?");
                return Err(self.fail(format!(
                    "register {name} ({a:#x}): model {want:#x} rtl {got:#x}"
                )));
            }
        }
        Ok(())
    }
}

fn rtl_recs(u: &Snap, trees: u8) -> Vec<Rec> {
    let mut r = Vec::new();
    let sends = |r: &mut Vec<Rec>| {
        for tree in 0..trees {
            r.push(Rec::Send {
                tree,
                kind: u.send_kind as u8,
                count: u.send_count as u16,
                instance: u.send_instance,
                epoch: u.send_epoch as u32,
                seq: u.send_seq as u32,
            });
        }
    };
    // Tick phase.
    if u.tick_fault {
        r.push(Rec::State(state::FAULTED));
        let code = u.tick_fault_code;
        r.push(Rec::Fault {
            code,
            missing: (code == fault::MISSING_COPY).then_some(u.tick_fault_missing as u8),
        });
    }
    if u.tick_leader_changed {
        r.push(Rec::Leader {
            epoch: u.tick_epoch as u32,
            leader: Some(u.tick_leader as u8),
        });
    }
    if u.send && !u.state_start {
        sends(&mut r);
        if u.lead_deliver {
            r.push(Rec::Deliver {
                instance: u.send_instance,
                epoch: u.send_epoch as u32,
                kind: DecideKind::Batch as u8,
            });
        }
    }
    // Event phase: CTRL.
    if u.state_mode {
        r.push(Rec::State(u.mode_state));
    }
    if u.state_start {
        r.push(Rec::State(state::ACTIVE));
        sends(&mut r);
    }
    // Event phase: DECIDE copy.
    let rx_epoch = u.ev.epoch as u32;
    if u.viol_stale {
        r.push(Rec::Stale(rx_epoch));
    }
    if u.viol_deposed {
        r.push(Rec::Deposed(rx_epoch));
    }
    let rx_fault = u.rx_fault.then_some(u.rx_fault_code);
    if rx_fault == Some(fault::EPOCH_CHANGE_IN_FLIGHT) {
        r.push(Rec::State(state::FAULTED));
        r.push(Rec::Fault {
            code: fault::EPOCH_CHANGE_IN_FLIGHT,
            missing: None,
        });
    }
    if u.rx_leader_changed {
        r.push(Rec::Leader {
            epoch: rx_epoch,
            leader: None,
        });
    }
    // Before a fault of the same copy: a joining node made active by a copy that then does
    // not continue its log (the model resets the timer, which activates, then delivers).
    if u.state_rx_active {
        r.push(Rec::State(state::ACTIVE));
    }
    if let Some(code) = rx_fault.filter(|&c| c != fault::EPOCH_CHANGE_IN_FLIGHT) {
        r.push(Rec::State(state::FAULTED));
        r.push(Rec::Fault {
            code,
            missing: None,
        });
    }
    if u.rx_deliver {
        r.push(Rec::Deliver {
            instance: u.ev.instance,
            epoch: rx_epoch,
            kind: u.ev.kind as u8,
        });
    }
    // Event phase: client request.
    if u.nl_reply {
        r.push(Rec::NotLeader {
            client: u.ev.client as u32,
            seq: u.ev.seq,
            leader: u.nl_leader as u8,
            epoch: u.nl_epoch as u32,
        });
    }
    r
}

/// What `pkt_parser` makes of a UDP payload on a tree port (`tree`) or the client port, as far
/// as `nc_core` sees it: the class, the packet and the sender. After `wire::parse` (foreign /
/// malformed), as proto does: a tagged packet is unauthorized (the card holds no keys), and so
/// is a DECIDE on a tree port whose sender is not the leader of its epoch.
fn parsed<'a>(bytes: &'a [u8], cfg: &Config, tree: bool) -> (u64, Option<Packet<'a>>, u8) {
    let n = cfg.node_count as u32;
    match wire::parse(bytes, cfg.cluster_id) {
        Ok((h, _)) if h.key_id != 0 => (class::UNAUTHORIZED, None, h.sender),
        Ok((h, Packet::Decide(d))) if tree && h.sender as u32 != d.meta.epoch % n => {
            (class::UNAUTHORIZED, None, h.sender)
        }
        Ok((h, p)) => (class::EXPECTED, Some(p), h.sender),
        Err(ParseError::Foreign(_)) => (class::FOREIGN, None, 0),
        Err(ParseError::Malformed(_)) => (class::MALFORMED, None, 0),
    }
}

fn drive_core(c: &mut Cycle<NcCore>, ev: &Option<Event>, cfg: &Config) {
    let u = c.uut.as_mut();
    u.rx_valid.next = false;
    u.cl_valid.next = false;
    u.csr_write.next = false;
    match ev {
        Some(Event::Tree { tree, bytes }) => {
            u.rx_valid.next = true;
            u.rx_port.next = bits(*tree as u64);
            let (c, d, sender) = match parsed(bytes, cfg, true) {
                (class::EXPECTED, Some(Packet::Decide(d)), s) => (class::EXPECTED, Some(d.meta), s),
                (class::EXPECTED, _, s) => (class::OTHER, None, s),
                (c, _, s) => (c, None, s),
            };
            u.rx_class.next = bits(c);
            u.rx_sender.next = bits(sender as u64);
            let m = d.unwrap_or(DecideMeta {
                instance: 0,
                epoch: 0,
                msg_seq: 0,
                tree: 0,
                kind: DecideKind::Heartbeat,
            });
            u.rx_epoch.next = bits(m.epoch as u64);
            u.rx_seq.next = bits(m.msg_seq as u64);
            u.rx_tree.next = bits(m.tree as u64);
            u.rx_kind.next = bits(m.kind as u64);
            u.rx_instance.next = bits(m.instance);
        }
        Some(Event::Client { bytes }) => {
            u.cl_valid.next = true;
            let (c, e) = match parsed(bytes, cfg, false) {
                (class::EXPECTED, Some(Packet::Request(e)), _) => (class::EXPECTED, Some(e)),
                (class::EXPECTED, _, _) => (class::OTHER, None),
                (c, _, _) => (c, None),
            };
            u.cl_class.next = bits(c);
            let e = e.unwrap_or(Entry {
                client_id: 0,
                seq: 0,
                flags: 0,
                payload: &[],
            });
            u.cl_client.next = bits(e.client_id as u64);
            u.cl_seq.next = bits(e.seq);
            u.cl_len.next = bits(e.payload.len() as u64);
            u.cl_payload.next = payload_bits(e.payload);
        }
        Some(Event::Write { addr, value }) => {
            u.csr_write.next = true;
            u.csr_addr.next = bits(*addr as u64);
            u.csr_wdata.next = bits(*value as u64);
        }
        None => {}
    }
}

/// An event in words (the packet parsed, if it parses).
pub fn describe(e: &Event, cluster: u32) -> String {
    let p = |b: &[u8]| match wire::parse(b, cluster) {
        Ok((h, _)) if h.key_id != 0 => format!("tagged (key {}) {}", h.key_id, {
            let plain = proto::auth::strip(b);
            describe_plain(&plain, cluster)
        }),
        _ => describe_plain(b, cluster),
    };
    match e {
        Event::Tree { tree, bytes } => format!("tree {tree}: {}", p(bytes)),
        Event::Client { bytes } => format!("client: {}", p(bytes)),
        Event::Write { addr, value } => {
            let name = regs::word(*addr).map(|(r, _)| r.name).unwrap_or("?");
            format!("write {name} ({addr:#x}) = {value:#x}")
        }
    }
}

fn describe_plain(b: &[u8], cluster: u32) -> String {
    match wire::parse(b, cluster) {
        Ok((h, Packet::Decide(d))) => format!(
            "DECIDE {:?} from {} epoch {} seq {} tree {} instance {} count {}",
            d.meta.kind,
            h.sender,
            d.meta.epoch,
            d.meta.msg_seq,
            d.meta.tree,
            d.meta.instance,
            d.count
        ),
        Ok((_, Packet::Request(e))) => {
            format!(
                "REQUEST client {} seq {} payload {} B",
                e.client_id,
                e.seq,
                e.payload.len()
            )
        }
        Ok((_, other)) => format!("{:?}", other.kind()),
        Err(e) => format!("{e:?} ({} B)", b.len()),
    }
}

/// Helpers to build packets.
pub fn decide(
    cluster: u32,
    sender: u8,
    meta: DecideMeta,
    entries: &[(u32, u64, Vec<u8>)],
) -> Vec<u8> {
    let list: Vec<Entry<'_>> = entries
        .iter()
        .map(|(c, s, p)| Entry {
            client_id: *c,
            seq: *s,
            flags: 0,
            payload: p,
        })
        .collect();
    let len: usize = list.iter().map(|e| e.wire_len()).sum();
    let mut raw = vec![0u8; len];
    let _ = wire::emit_entries(list.iter(), &mut raw);
    Packet::Decide(Decide {
        meta,
        count: list.len() as u16,
        entries_raw: &raw,
    })
    .to_vec(cluster, sender)
    .expect("a DECIDE the harness builds is valid")
}

/// `packet` tagged (`proto::auth::seal`) with a random key under a random key id: a well formed
/// tagged packet, which a node without that key (every card) refuses as unauthorized.
pub fn tagged(rng: &mut Rng, packet: &[u8]) -> Vec<u8> {
    let mut ring = Keyring::new();
    let id = rng.range(1, 255) as u8;
    let mut key = [0u8; proto::auth::KEY_LEN];
    for b in key.iter_mut() {
        *b = rng.next_u64() as u8;
    }
    ring.insert(id, key).expect("one key");
    let mut p = packet.to_vec();
    proto::auth::seal_vec(&mut p, &ring, id).expect("an untagged packet and its key");
    p
}

/// A client REQUEST.
pub fn request(cluster: u32, client_id: u32, seq: u64, payload: &[u8]) -> Vec<u8> {
    Packet::Request(Entry {
        client_id,
        seq,
        flags: 0,
        payload,
    })
    .to_vec(cluster, wire::SENDER_NONE)
    .expect("a REQUEST the harness builds is valid")
}

/// The register writes that bring the reset configuration to `target`, in an order in which
/// every intermediate configuration is legal (writes that stay illegal are left out).
pub fn config_writes(target: &Config) -> Vec<(u16, u32)> {
    let mut cur = Config::default();
    let mut todo: Vec<u16> = regs::REGISTERS
        .iter()
        .filter(|r| r.access == regs::Access::Config)
        .map(|r| r.addr)
        .filter(|&a| cur.get(a) != target.get(a))
        .collect();
    let mut out = Vec::new();
    for _ in 0..4 {
        todo.retain(|&a| {
            let v = target.get(a).unwrap_or(0);
            let mut c = cur;
            if c.set(a, v).is_ok() && c.validate().is_ok() {
                cur = c;
                out.push((a, v as u32));
                false
            } else {
                true
            }
        });
    }
    out
}

/// The random environment around the node under test: a configuration, other nodes that lead
/// (START, heartbeats, batches, with copies delayed within the window, sometimes lost,
/// duplicated, late, stale or from a later epoch), clients, junk frames, forged and tagged
/// packets (issue 18: refused as unauthorized) and CSR writes.
pub struct Env {
    rng: Rng,
    /// The configuration the trace runs with.
    pub cfg: Config,
    queue: BTreeMap<u64, VecDeque<Event>>,
    leader: Option<(u32, u32, u64)>, // (epoch, next msg_seq, next send cycle)
    client_seq: [u64; 4],
    started: bool,
    reenable_at: Option<u64>,
    /// The cycle of the last configuration (not CTRL) write: the RTL applies a write one cycle
    /// after its bus cycle, and judges a frame by the configuration in force when it comes (a
    /// cycle before the core acts on it, when the model gets it), so no frame comes in the
    /// cycle after a configuration write (rtl/README, "The event pipeline").
    config_write_at: Option<u64>,
    /// Largest request payload the RTL under test stores (`lowi_core::MAX_PAYLOAD` for
    /// `nc_core`, `ENGINE_MAX_PAYLOAD` for `nc_engine`): requests carry 0 to this many bytes,
    /// or more than one DECIDE at the MTU can carry (refused as oversize by both sides).
    max_payload: usize,
    /// Copies on a tree never overtake one another (the trees are FIFO), so a tree whose
    /// copies come late holds many messages in flight at a short loop; otherwise a copy's
    /// delay is drawn alone and a later copy may overtake (a gap on that tree).
    fifo_trees: bool,
    /// The latest cycle a copy is due on each tree (with `fifo_trees`).
    tree_due: [u64; 4],
    /// A join run: the node is enabled with JOIN into a stream that is already running (the
    /// card's recovery CSR sequence, proto/README), then takes the members' timeout and is
    /// activated; after a safe exit it is disabled and joins again.
    join: bool,
    /// Join runs: the stream's last instance (the leaders' log; the node's may lag or be none).
    stream_lins: u64,
    /// Join runs: TIMEOUT and ACTIVATE are scheduled for this join.
    activating: bool,
    /// A client request comes in this percentage of the cycles.
    client_pct: u64,
}

impl Env {
    /// A random configuration in the covered subset and its setup writes (scheduled from cycle 0).
    pub fn new(seed: u64) -> Self {
        Self::with_min_loop(seed, |_| 0)
    }

    /// The same with `loop_period` at least `min_loop` (nc_engine: a frame must leave
    /// before the next send, see `pkt_gen`).
    pub fn with_min_loop(seed: u64, min_loop: impl Fn(&Config) -> u64) -> Self {
        Self::drawn(seed, min_loop, false)
    }

    /// The same; with `full`, runs that fill whole DECIDE frames: node 0 (it leads the first
    /// epoch), `batch_max` = `pkt_gen::SLOTS`, a FIFO deeper than two batches, no join, and a
    /// request in twice as many cycles (every other draw as in the other runs).
    fn drawn(seed: u64, min_loop: impl Fn(&Config) -> u64, full: bool) -> Self {
        let mut rng = Rng::new(seed);
        let mut cfg = Config::default();
        cfg.node_count = rng.range(1, 5) as u8;
        cfg.node_id = rng.range(0, cfg.node_count as u64 - 1) as u8;
        if rng.pct(20) {
            cfg.node_id = 0;
        }
        cfg.cluster_id = rng.next_u64() as u32;
        cfg.trees = rng.range(1, 4) as u8;
        cfg.delta = rng.range(12, 30) as u32;
        cfg.drift = rng.range(0, 4) as u32;
        // Batches drained before the next send; in half the runs at most 4 messages in flight
        // (the RTL's bound before 2026-11-27), in the others as many as the loop allows.
        // (Drawn apart from the trace's generator, so that adding it left the other draws as
        // they were.)
        let few = Rng::new(seed ^ 0x1F11_6470).pct(50);
        // Batches of up to `SLOTS` (8); in the runs with many messages in flight at most 6 (as
        // before 8 slots), whose shorter loop floor (`batch_max` + 3) keeps 4 or more in flight
        // within reach of the window.
        cfg.batch_max = rng.range(1, if few { rtl::pkt_gen::SLOTS as u64 } else { 6 }) as u8;
        cfg.fifo_depth = rng.range(1, 8) as u16;
        if full {
            cfg.node_id = 0;
            cfg.batch_max = rtl::pkt_gen::SLOTS as u8;
            cfg.fifo_depth = 2 * rtl::pkt_gen::SLOTS as u16 + 1;
        }
        let w = cfg.window();
        // A quarter of the runs join a running cluster (drawn apart too; never alone).
        let mut jr = Rng::new(seed ^ 0x0A01_5EED);
        let join = jr.pct(25) && cfg.node_count > 1 && !full;
        let lo =
            (cfg.batch_max as u64 + 3)
                .max(min_loop(&cfg))
                .max(if few { w.div_ceil(3) } else { 0 });
        cfg.loop_period = rng.range(lo, lo + if few { w } else { w / 4 }) as u32;
        cfg.timeout = (cfg.min_timeout() + rng.range(0, 40)) as u32;
        // Frame addresses (unicast MACs: bit 40 clear) and TTL.
        cfg.src_mac = rng.next_u64() & 0xFEFF_FFFF_FFFF;
        cfg.src_ip = rng.next_u64() as u32;
        cfg.host_mac = rng.next_u64() & 0xFEFF_FFFF_FFFF;
        cfg.host_ip = rng.next_u64() as u32;
        cfg.ttl = rng.range(1, 255) as u8;
        // Early sends in half the runs, with a gap that keeps the in-flight bound.
        if rng.pct(50) {
            cfg.min_gap = rng.range(lo, cfg.loop_period as u64) as u32;
        }
        assert!(
            cfg.validate_for(proto::regs::Datapath::CARD).is_ok(),
            "{cfg:?}"
        );
        let mut e = Env {
            rng,
            cfg,
            queue: BTreeMap::new(),
            leader: None,
            client_seq: [0; 4],
            started: false,
            reenable_at: None,
            config_write_at: None,
            max_payload: rtl::lowi_core::MAX_PAYLOAD as usize,
            fifo_trees: !few,
            tree_due: [0; 4],
            join,
            stream_lins: 0,
            activating: false,
            client_pct: if full { 12 } else { 6 },
        };
        let mut t = 0;
        for (a, v) in config_writes(&cfg) {
            e.at(t, Event::Write { addr: a, value: v });
            t += 1;
        }
        e.at(
            t + 1,
            Event::Write {
                addr: addr::CTRL,
                value: e.enable_ctrl(),
            },
        );
        if join {
            // The cluster runs already: an epoch led by another member, any msg_seq (near the
            // wrap now and then) and any instance.
            e.started = true;
            let n = cfg.node_count as u32;
            let mut epoch = jr.range(0, 6) as u32;
            if epoch % n == cfg.node_id as u32 {
                epoch += 1;
            }
            let seq = if jr.pct(20) {
                u32::MAX - jr.range(0, 8) as u32
            } else {
                jr.range(0, 5000) as u32
            };
            e.stream_lins = jr.range(0, 100_000);
            e.leader = Some((epoch, seq, t + jr.range(0, 20)));
        }
        e
    }

    /// Requests carry at most `n` payload bytes (besides the truly oversize ones).
    pub fn with_max_payload(mut self, n: usize) -> Self {
        self.max_payload = n;
        self
    }

    /// A request payload: mostly 0..=`max_payload` bytes (a quarter of them exactly
    /// `max_payload`), 1 in 50 longer than one DECIDE at the configured MTU can carry. The
    /// bytes differ per request (`tag`) and per position, drawn without the trace's generator.
    fn request_payload(&mut self, tag: u64) -> Vec<u8> {
        let len = if self.rng.one_in(50) {
            self.cfg.max_entry_payload() - wire::TAG_LEN + 1 + self.rng.range(0, 16) as usize
        } else if self.rng.pct(25) {
            self.max_payload
        } else {
            self.rng.range(0, self.max_payload as u64) as usize
        };
        (0..len as u64)
            .map(|k| {
                let x = (tag ^ k.rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                (x >> 56) as u8 ^ k as u8
            })
            .collect()
    }

    fn at(&mut self, t: u64, ev: Event) {
        self.queue.entry(t).or_default().push_back(ev);
    }

    /// Join runs: the rest of the CSR sequence (proto/README, "Recovery on a card"). Once the
    /// node has locked on and decided, the members' timeout (TIMEOUT, not always) and ACTIVATE,
    /// sometimes after a silence of more than a timeout; ACTIVATE at random moments too (refused
    /// unless the node may activate), JOIN without ENABLE (refused); ENABLE|JOIN again while
    /// Active (joining again); after a safe exit, CTRL <- 0 and ENABLE|JOIN again.
    fn join_steps(&mut self, t: u64, m: &Node) {
        if m.state() != State::Joining {
            self.activating = false;
        }
        let join = ctrl::ENABLE | ctrl::JOIN;
        if m.state() == State::Joining
            && !self.activating
            && m.status_bits() & regs::status::SYNCED != 0
            && m.last_decided().is_some()
        {
            self.activating = true;
            let t1 = t + self.rng.range(1, 20);
            if self.rng.pct(85) {
                let timeout = self.cfg.timeout + self.rng.range(0, 40) as u32;
                self.at(
                    t1,
                    Event::Write {
                        addr: addr::TIMEOUT,
                        value: timeout,
                    },
                );
            }
            let wait = if self.rng.pct(25) {
                // After a silence of more than a timeout (the stream pauses until after the
                // ACTIVATE): active at the next copy.
                let w = self.cfg.timeout as u64 + self.rng.range(1, self.cfg.timeout as u64);
                let resume = t1 + w + self.rng.range(1, 20);
                if let Some((_, _, next)) = self.leader.as_mut() {
                    *next = (*next).max(resume);
                }
                w
            } else {
                self.rng.range(1, 30)
            };
            self.at(
                t1 + wait,
                Event::Write {
                    addr: addr::CTRL,
                    value: join | ctrl::ACTIVATE,
                },
            );
        }
        if self.rng.pct(1) {
            let value = match self.rng.range(0, 2) {
                0 => join | ctrl::ACTIVATE,
                1 => ctrl::JOIN,
                _ => ctrl::ENABLE | ctrl::ACTIVATE,
            };
            self.at(
                t,
                Event::Write {
                    addr: addr::CTRL,
                    value,
                },
            );
        }
        if m.state() == State::Active && self.rng.one_in(300) {
            // Joining again from Active: a mode change while the stream goes on (the epoch and
            // the receiver start over, and the next copies meet them in the cycle after).
            self.at(
                t,
                Event::Write {
                    addr: addr::CTRL,
                    value: join,
                },
            );
        }
        if m.state() == State::Faulted && self.reenable_at.is_none() && self.rng.one_in(30) {
            self.disable_then_enable(t, 2, 20);
        }
    }

    /// CTRL <- 0 now, and the enable (`enable_ctrl`) `lo..=hi` cycles later.
    fn disable_then_enable(&mut self, t: u64, lo: u64, hi: u64) {
        self.at(
            t,
            Event::Write {
                addr: addr::CTRL,
                value: 0,
            },
        );
        self.reenable_at = Some(t + self.rng.range(lo, hi));
    }

    /// The CTRL value that enables this run's node: ENABLE, or ENABLE|JOIN in a join run.
    fn enable_ctrl(&self) -> u32 {
        if self.join {
            ctrl::ENABLE | ctrl::JOIN
        } else {
            ctrl::ENABLE
        }
    }

    /// The sender of the environment's copies of `epoch`: its leader, except when that is the
    /// node under test; then another member claims it (a forged copy since issue 18: the model
    /// and the card refuse it as unauthorized, and the node may time out on the silent epoch).
    fn sender(&self, epoch: u32) -> u8 {
        let n = self.cfg.node_count as u32;
        let s = (epoch % n) as u8;
        if s == self.cfg.node_id {
            ((s as u32 + 1) % n) as u8
        } else {
            s
        }
    }

    /// Schedule one message's copies (with faults now and then).
    fn message(&mut self, t: u64, meta: DecideMeta, entries: &[(u32, u64, Vec<u8>)]) {
        let w = self.cfg.window();
        let trees = self.cfg.trees;
        let lose = if self.rng.pct(1) {
            Some(self.rng.range(0, trees as u64 - 1) as u8)
        } else {
            None
        };
        for tree in 0..trees {
            if lose == Some(tree) {
                continue;
            }
            let mut m = meta;
            m.tree = tree;
            let bytes = decide(self.cfg.cluster_id, self.sender(meta.epoch), m, entries);
            let mut d = self.rng.range(0, w);
            if self.rng.one_in(200) {
                d = w + self.rng.range(1, 8);
            }
            if self.rng.pct(2) {
                // The same copy tagged (issue 18): refused as unauthorized, the card has no
                // keys; the untagged copy still counts.
                let at = t + d + self.rng.range(0, 5);
                let bytes = tagged(&mut self.rng, &bytes);
                self.at(at, Event::Tree { tree, bytes });
            }
            if self.rng.pct(2) {
                let dup = t + d + self.rng.range(0, 5);
                self.at(
                    dup,
                    Event::Tree {
                        tree,
                        bytes: bytes.clone(),
                    },
                );
            }
            let mut due = t + d;
            if self.fifo_trees {
                due = due.max(self.tree_due[tree as usize]);
                self.tree_due[tree as usize] = due;
            }
            self.at(due, Event::Tree { tree, bytes });
        }
    }

    /// The event for cycle `t` (at most one; the rest wait).
    pub fn next(&mut self, t: u64, ls: &Lockstep) -> Option<Event> {
        let m = &ls.model;
        let cluster = self.cfg.cluster_id;
        let enabled = m.state() != State::Disabled;
        let mode = match m.state() {
            State::Disabled => 0,
            State::Joining => ctrl::ENABLE | ctrl::JOIN,
            _ => ctrl::ENABLE,
        };
        // START: node 0 starts itself; otherwise node 0 (simulated here) sends START.
        if m.state() == State::Armed && !self.started && t > 0 {
            self.started = true;
            if self.cfg.node_id == 0 {
                let at = t + self.rng.range(1, 10);
                self.at(
                    at,
                    Event::Write {
                        addr: addr::CTRL,
                        value: ctrl::ENABLE | ctrl::START,
                    },
                );
            } else {
                let meta = DecideMeta {
                    instance: 1,
                    epoch: 0,
                    msg_seq: 0,
                    tree: 0,
                    kind: DecideKind::Start,
                };
                let at = t + self.rng.range(1, 10);
                self.message(at, meta, &[]);
                self.leader = Some((0, 1, at + self.cfg.loop_period as u64));
            }
        }
        if m.is_leader() {
            if self.leader.is_some_and(|(e, _, _)| e <= m.epoch()) {
                self.leader = None;
            }
            if self.leader.is_none() && self.rng.one_in(400) {
                // A node that timed out on us (we are alive but were late, or it was cut off):
                // its later epoch deposes this leader.
                let e = m.epoch() + self.rng.range(1, 3) as u32;
                self.leader = Some((e, 0, t + 1));
            }
        } else if self.join
            && self.leader.is_none()
            && m.state() == State::Joining
            && self.rng.one_in(100)
        {
            // Join runs: after a silence another member leads (the same epoch or a later one).
            let e = m.epoch() + self.rng.range(0, 3) as u32;
            if (e % self.cfg.node_count as u32) as u8 != self.cfg.node_id {
                let s = self.rng.range(0, 50) as u32;
                self.leader = Some((e, s, t + 1));
            }
        } else if self.leader.is_none() && m.state() == State::Active && self.rng.one_in(300) {
            // Another node leads now (after a timeout it ran too, or a later epoch).
            let e = m.epoch()
                + if self.rng.pct(40) {
                    self.rng.range(1, 3) as u32
                } else {
                    0
                };
            if (e % self.cfg.node_count as u32) as u8 != self.cfg.node_id || self.rng.pct(20) {
                self.leader = Some((e, 0, t + 1));
            }
        }
        if let Some((e, s, next)) = self.leader
            && t >= next
        {
            // Join runs follow the stream's own log (the node's may be none or lag behind).
            let lins = if self.join {
                self.stream_lins.max(if m.state() == State::Active {
                    m.last_decided().unwrap_or(0)
                } else {
                    0
                })
            } else {
                m.last_decided().unwrap_or(0)
            };
            let instance = if self.rng.one_in(200) {
                lins + 2
            } else {
                lins + 1
            };
            let mut entries = Vec::new();
            let kind = if self.rng.pct(40) {
                for _ in 0..self.rng.range(1, 3) {
                    // 0 to 8 bytes, or 32, 64, 96 or 128 (issue 17: copies as long as the
                    // requests the card now carries; the same draws as before).
                    let len = match self.rng.range(0, 12) as usize {
                        n @ 0..=8 => n,
                        n => 32 * (n - 8),
                    };
                    entries.push((
                        self.rng.range(1, 9) as u32,
                        self.rng.range(1, 1000),
                        (0..len).map(|i| 0xA5 ^ i as u8).collect(),
                    ));
                }
                DecideKind::Batch
            } else {
                DecideKind::Heartbeat
            };
            let meta = DecideMeta {
                instance,
                epoch: e,
                msg_seq: s,
                tree: 0,
                kind,
            };
            if self.join && kind == DecideKind::Batch {
                self.stream_lins = instance;
            }
            self.message(t, meta, &entries);
            self.leader = if self.rng.pct(6) {
                None // crashed: the node under test will time out
            } else {
                Some((e, s.wrapping_add(1), t + self.cfg.loop_period as u64))
            };
            if self.rng.pct(1) && e > 0 {
                let stale = DecideMeta {
                    epoch: e - 1,
                    kind: DecideKind::Heartbeat,
                    ..meta
                };
                self.message(t + 1, stale, &[]);
            }
        }
        // Clients and junk.
        if self.rng.pct(self.client_pct) {
            let c = self.rng.range(0, 3) as usize;
            self.client_seq[c] += 1;
            let payload = self.request_payload(t << 8 | c as u64);
            let bytes = request(cluster, c as u32 + 1, self.client_seq[c], &payload);
            self.at(t, Event::Client { bytes });
        }
        if self.rng.pct(1) {
            let good = request(cluster, 7, 1, b"x");
            let bytes = match self.rng.range(0, 3) {
                0 => request(cluster ^ 1, 7, 1, b"x"), // another cluster: foreign
                1 => good[..self.rng.range(4, 11) as usize].to_vec(), // truncated: malformed
                2 => decide(
                    cluster,
                    1,
                    DecideMeta {
                        instance: 1,
                        epoch: 0,
                        msg_seq: 0,
                        tree: 0,
                        kind: DecideKind::Heartbeat,
                    },
                    &[],
                ),
                _ => {
                    let mut b = good.clone();
                    b[11] = 1; // reserved byte: malformed
                    b
                }
            };
            if self.rng.pct(50) {
                self.at(t, Event::Client { bytes });
            } else {
                let tree = self.rng.range(0, 3) as u8;
                self.at(t, Event::Tree { tree, bytes });
            }
        }
        // Members only (issue 18): forged DECIDE copies (a sender that is not the leader of the
        // copy's epoch: another member, an id outside the cluster, a client's 0xFF) for the
        // current epoch, a takeover, a stale or any epoch; tagged packets (the card holds no
        // keys). Each must be dropped and counted as unauthorized, changing nothing else.
        if self.rng.pct(1) {
            let n = self.cfg.node_count as u32;
            let epoch = match self.rng.range(0, 3) {
                0 => m.epoch(),
                1 => m.epoch().saturating_add(self.rng.range(1, 3) as u32),
                2 => m.epoch().saturating_sub(1),
                _ => self.rng.next_u64() as u32,
            };
            let lead = epoch % n;
            let sender = match self.rng.range(0, 2) {
                0 if n > 1 => ((lead + self.rng.range(1, n as u64 - 1) as u32) % n) as u8,
                0 | 1 => self.rng.range(n as u64, 63) as u8,
                _ => wire::SENDER_NONE,
            };
            let tree = self.rng.range(0, self.cfg.trees as u64 - 1) as u8;
            let meta = DecideMeta {
                instance: m.last_decided().unwrap_or(0) + 1,
                epoch,
                msg_seq: self.rng.range(0, 3) as u32,
                tree,
                kind: if self.rng.pct(50) {
                    DecideKind::Batch
                } else {
                    DecideKind::Heartbeat
                },
            };
            let entries = match meta.kind {
                DecideKind::Batch => vec![(9, self.rng.range(1, 1000), b"forged".to_vec())],
                _ => Vec::new(),
            };
            let mut bytes = decide(cluster, sender, meta, &entries);
            if self.rng.pct(30) {
                // From the right leader, but tagged.
                bytes = tagged(&mut self.rng, &decide(cluster, lead as u8, meta, &entries));
            }
            self.at(t, Event::Tree { tree, bytes });
        }
        if self.rng.pct(1) {
            // A tagged request, on the client port or a tree port.
            let bytes = tagged(&mut self.rng, &request(cluster, 8, 1, b"t"));
            if self.rng.pct(50) {
                self.at(t, Event::Client { bytes });
            } else {
                let tree = self.rng.range(0, self.cfg.trees as u64 - 1) as u8;
                self.at(t, Event::Tree { tree, bytes });
            }
        }
        // CSR writes.
        if self.rng.pct(1) {
            let w = match self.rng.range(0, 6) {
                0 => (addr::CTRL, mode | ctrl::CLEAR_COUNTERS),
                1 => (addr::TIMEOUT, self.cfg.timeout + 1), // refused while enabled
                2 => (addr::CTRL, mode | ctrl::START),      // refused unless node 0 armed
                3 => (addr::MTU, 100),                      // out of range: refused
                // An undefined CTRL bit: refused (the model's range check; csr's bus cycle).
                4 => (addr::CTRL, mode | ctrl::CLEAR_COUNTERS | 0x20),
                5 => (addr::CTRL, mode | 0x8000_0000),
                _ => (addr::EPOCH, 5), // read-only: refused
            };
            self.at(
                t,
                Event::Write {
                    addr: w.0,
                    value: w.1,
                },
            );
        }
        if self.join {
            self.join_steps(t, m);
        }
        if enabled && self.reenable_at.is_none() && self.rng.one_in(600) {
            self.disable_then_enable(t, 5, 40);
        }
        if let Some(r) = self.reenable_at
            && t >= r
        {
            self.reenable_at = None;
            self.started = self.join;
            if !self.join {
                self.leader = None;
            }
            self.at(
                t,
                Event::Write {
                    addr: addr::CTRL,
                    value: self.enable_ctrl(),
                },
            );
        }
        // One event this cycle: the earliest due.
        let (&k, _) = self.queue.first_key_value()?;
        if k > t {
            return None;
        }
        let q = self.queue.get_mut(&k)?;
        let frame = !matches!(q.front(), Some(Event::Write { .. }));
        if frame && t > 0 && self.config_write_at == Some(t - 1) {
            return None;
        }
        let ev = q.pop_front()?;
        if q.is_empty() {
            self.queue.remove(&k);
        }
        if let Event::Write { addr, .. } = ev
            && addr != addr::CTRL
        {
            self.config_write_at = Some(t);
        }
        Some(ev)
    }
}

/// Run one random trace of `cycles` cycles against `nc_core`; Err describes the first mismatch
/// with the trace.
pub fn run(seed: u64, cycles: u64, setup: impl FnOnce(&mut Lockstep)) -> Result<Lockstep, String> {
    let mut ls = Lockstep::new();
    setup(&mut ls);
    drive_env(ls, Env::new(seed), seed, cycles)
}

/// The same against `nc_engine`: every packet travels as a frame on its stream.
pub fn run_engine(
    seed: u64,
    cycles: u64,
    setup: impl FnOnce(&mut Lockstep),
) -> Result<Lockstep, String> {
    run_engine_with(seed, cycles, false, setup)
}

/// [`run_engine`]; with `full`, a leader that fills whole DECIDE frames (`Env::drawn`).
#[allow(dead_code)]
pub fn run_engine_with(
    seed: u64,
    cycles: u64,
    full: bool,
    setup: impl FnOnce(&mut Lockstep),
) -> Result<Lockstep, String> {
    let mut ls = Lockstep::engine();
    setup(&mut ls);
    // A DECIDE frame of `batch_max` entries of up to 128 bytes is (78 + 144 · batch_max) / 8
    // beats (82 for 4, 118 for 6, 154 for 8); its entries leave the FIFO within 2 + `batch_max` cycles (at
    // least 6 are kept): a loop period that long never waits for the generator (the model does
    // not).
    let min_loop = |c: &Config| {
        (78 + (16 + rtl::lowi_core::ENGINE_MAX_PAYLOAD) * c.batch_max as u64).div_ceil(8)
            + 6.max(2 + c.batch_max as u64)
    };
    drive_env(
        ls,
        Env::drawn(seed, min_loop, full)
            .with_max_payload(rtl::lowi_core::ENGINE_MAX_PAYLOAD as usize),
        seed,
        cycles,
    )
}

fn drive_env(mut ls: Lockstep, mut env: Env, seed: u64, cycles: u64) -> Result<Lockstep, String> {
    for t in 0..cycles {
        let ev = env.next(t, &ls);
        ls.step(ev)
            .map_err(|e| format!("seed {seed} config {:?}\n{e}", env.cfg))?;
    }
    ls.compare_registers()
        .map_err(|e| format!("seed {seed} config {:?}\n{e}", env.cfg))?;
    Ok(ls)
}

/// The `ready` inputs of `nc_engine`'s six output streams (four trees, host, client replies):
/// high where the receivers take a beat every cycle.
#[allow(dead_code)]
pub fn streams_ready(u: &mut NcEngine, g: [bool; 4], h: bool, r: bool) {
    u.g0_ready.next = g[0];
    u.g1_ready.next = g[1];
    u.g2_ready.next = g[2];
    u.g3_ready.next = g[3];
    u.h_ready.next = h;
    u.r_ready.next = r;
}
