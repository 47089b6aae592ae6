//! reply_gen against proto: every frame must be the frame `proto::frame::emit_udp` makes of the
//! reply packet `proto::node::Node` emits (`Packet::ReplyOk` / `Packet::ReplyNotLeader`,
//! `to_vec(cluster_id, node_id)`), with the UDP checksum 0, and must parse back with
//! `frame::parse_udp` + `wire::parse`. A model of the queue (depth, one beat per cycle, a
//! frame's entry freed at its last beat, OK before NOT_LEADER) predicts every beat and every
//! drop cycle by cycle.

mod common;

use std::collections::VecDeque;

use common::lockstep::generated_frame;
use proto::frame::{self, UdpMeta};
use proto::wire::{self, Packet, ReplyNotLeader, ReplyOk};
use rtl::layout::mac_bytes;
use rtl::reply_gen::ReplyGen;
use rtl::sim::{Cycle, Rng, bits, val};

#[derive(Clone, Copy, Debug)]
struct Cfg {
    src_mac: u64,
    src_ip: u32,
    src_port: u16,
    cluster: u32,
    sender: u8,
    ttl: u8,
}

#[derive(Clone, Copy, Debug)]
enum Body {
    Ok(ReplyOk),
    Nl(ReplyNotLeader),
}

/// A command with the client's address.
#[derive(Clone, Copy, Debug)]
struct Cmd {
    body: Body,
    mac: u64,
    ip: u32,
    port: u16,
}

fn packet(cfg: &Cfg, b: &Body) -> Vec<u8> {
    // What proto::node::Node::reply emits: to_vec(cfg.cluster_id, cfg.node_id).
    match *b {
        Body::Ok(r) => Packet::ReplyOk(r).to_vec(cfg.cluster, cfg.sender),
        Body::Nl(r) => Packet::ReplyNotLeader(r).to_vec(cfg.cluster, cfg.sender),
    }
    .unwrap()
}

fn udp_meta(cfg: &Cfg, c: &Cmd) -> UdpMeta {
    UdpMeta {
        src_mac: mac_bytes(cfg.src_mac),
        dst_mac: mac_bytes(c.mac),
        src_ip: cfg.src_ip.to_be_bytes(),
        dst_ip: c.ip.to_be_bytes(),
        src_port: cfg.src_port,
        dst_port: c.port,
        ttl: cfg.ttl,
    }
}

/// The expected frame: proto's, UDP checksum 0 ("none").
fn expected(cfg: &Cfg, c: &Cmd) -> Vec<u8> {
    let p = packet(cfg, &c.body);
    let f = generated_frame(udp_meta(cfg, c), &p);
    assert_eq!(
        f.len(),
        frame::PAYLOAD_OFFSET + p.len(),
        "emit_udp does not pad"
    );
    f
}

/// The frame parses back to the command.
fn check_parse(seed: u64, cfg: &Cfg, c: &Cmd, f: &[u8]) {
    let (m, payload) =
        frame::parse_udp(f).unwrap_or_else(|e| panic!("seed {seed}: parse_udp: {e:?}"));
    assert_eq!(m, udp_meta(cfg, c), "seed {seed}: UDP meta");
    let (h, p) = wire::parse(payload, cfg.cluster)
        .unwrap_or_else(|e| panic!("seed {seed}: wire::parse: {e:?}"));
    assert_eq!(h.sender, cfg.sender, "seed {seed}: sender");
    match (c.body, p) {
        (Body::Ok(want), Packet::ReplyOk(got)) => assert_eq!(got, want, "seed {seed}"),
        (Body::Nl(want), Packet::ReplyNotLeader(got)) => assert_eq!(got, want, "seed {seed}"),
        (want, got) => panic!("seed {seed}: {want:?} came back as {got:?}"),
    }
}

/// The generator, the queue model and what came out.
struct Tb<const A: usize> {
    seed: u64,
    cfg: Cfg,
    c: Cycle<ReplyGen<A>>,
    /// Model: expected frames in the queue (head streaming) and the head's next beat.
    queue: VecDeque<(Cmd, Vec<u8>)>,
    beat: usize,
    /// Frames as they came out, with their commands (from the model).
    frames: Vec<(Cmd, Vec<u8>)>,
    cur: Vec<u8>,
    first_beats: Vec<u64>,
    last_beats: Vec<u64>,
    drops_ok: usize,
    drops_nl: usize,
    both: usize,
    log: Vec<String>,
}

impl<const A: usize> Tb<A> {
    fn new(seed: u64, cfg: Cfg) -> Self {
        let mut c = Cycle::new(ReplyGen::<A>::default(), |g| &mut g.clock);
        let u = c.uut.as_mut();
        u.r_ready.next = true;
        u.src_mac.next = bits(cfg.src_mac);
        u.src_ip.next = bits(cfg.src_ip as u64);
        u.src_port.next = bits(cfg.src_port as u64);
        u.cluster.next = bits(cfg.cluster as u64);
        u.sender.next = bits(cfg.sender as u64);
        u.ttl.next = bits(cfg.ttl as u64);
        Tb {
            seed,
            cfg,
            c,
            queue: VecDeque::new(),
            beat: 0,
            frames: vec![],
            cur: vec![],
            first_beats: vec![],
            last_beats: vec![],
            drops_ok: 0,
            drops_nl: 0,
            both: 0,
            log: vec![],
        }
    }

    fn fail(&self, what: String) -> ! {
        let tail: Vec<&String> = self.log.iter().rev().take(30).rev().collect();
        panic!(
            "seed {} cycle {}: {what}\nconfig {:?}\nlast cycles:\n{}",
            self.seed,
            self.c.cycle,
            self.cfg,
            tail.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        )
    }

    /// One cycle with these commands (at most one of each kind).
    fn step(&mut self, ok: Option<Cmd>, nl: Option<Cmd>) {
        let u = self.c.uut.as_mut();
        u.ok_valid.next = false;
        u.nl_valid.next = false;
        if let Some(Cmd {
            body: Body::Ok(r),
            mac,
            ip,
            port,
        }) = ok
        {
            u.ok_valid.next = true;
            u.ok_client.next = bits(r.client_id as u64);
            u.ok_seq.next = bits(r.seq);
            u.ok_instance.next = bits(r.instance);
            u.ok_index.next = bits(r.index as u64);
            u.ok_mac.next = bits(mac);
            u.ok_ip.next = bits(ip as u64);
            u.ok_port.next = bits(port as u64);
        }
        if let Some(Cmd {
            body: Body::Nl(r),
            mac,
            ip,
            port,
        }) = nl
        {
            u.nl_valid.next = true;
            u.nl_client.next = bits(r.client_id as u64);
            u.nl_seq.next = bits(r.seq);
            u.nl_leader.next = bits(r.leader as u64);
            u.nl_epoch.next = bits(r.epoch as u64);
            u.nl_mac.next = bits(mac);
            u.nl_ip.next = bits(ip as u64);
            u.nl_port.next = bits(port as u64);
        }
        self.c.settle();
        let u = &self.c.uut;
        let (valid, data, keep, last) = (
            u.r_valid.val(),
            val(u.r_data.val()),
            val(u.r_keep.val()),
            u.r_last.val(),
        );
        let (drop_ok, drop_nl, busy) = (u.drop_ok.val(), u.drop_nl.val(), u.busy.val());
        self.log.push(format!(
            "cycle {}: ok {} nl {} | valid {valid} data {data:016x} keep {keep:02x} last {last} \
             drop_ok {drop_ok} drop_nl {drop_nl} busy {busy} | model queue {} beat {}",
            self.c.cycle,
            ok.is_some(),
            nl.is_some(),
            self.queue.len(),
            self.beat
        ));
        // What came out.
        if valid {
            if self.cur.is_empty() {
                self.first_beats.push(self.c.cycle);
            }
            let n = keep.count_ones() as usize;
            if keep != (1u64 << n) - 1 {
                self.fail(format!("keep {keep:02x} not contiguous"));
            }
            self.cur.extend_from_slice(&data.to_le_bytes()[..n]);
            if last {
                self.last_beats.push(self.c.cycle);
                let f = std::mem::take(&mut self.cur);
                match self.queue.front() {
                    Some((cmd, _)) => self.frames.push((*cmd, f)),
                    None => self.fail("a frame the model did not queue".into()),
                }
            }
        }
        // The model: the head streams one beat per cycle.
        if busy == self.queue.is_empty() {
            self.fail(format!("busy {busy}, model queue {}", self.queue.len()));
        }
        let mut pop = false;
        match self.queue.front() {
            None => {
                if valid {
                    self.fail("valid while the queue is empty".into());
                }
            }
            Some((_, f)) => {
                let lo = 8 * self.beat;
                let hi = (lo + 8).min(f.len());
                let want_last = hi == f.len();
                let want_keep = (1u64 << (hi - lo)) - 1;
                let got = &data.to_le_bytes()[..hi - lo];
                if !valid || last != want_last || keep != want_keep || got != &f[lo..hi] {
                    self.fail(format!(
                        "beat {}: want bytes {:02x?} keep {want_keep:02x} last {want_last}, got {got:02x?}",
                        self.beat,
                        &f[lo..hi]
                    ));
                }
                if want_last {
                    pop = true;
                } else {
                    self.beat += 1;
                }
            }
        }
        if pop {
            self.queue.pop_front();
            self.beat = 0;
        }
        let depth = 1usize << A;
        let mut space = depth - self.queue.len();
        let want_drop_ok = ok.is_some() && space == 0;
        if let Some(c) = ok.filter(|_| space > 0) {
            self.queue.push_back((c, expected(&self.cfg, &c)));
            space -= 1;
        }
        let want_drop_nl = nl.is_some() && space == 0;
        if let Some(c) = nl.filter(|_| space > 0) {
            self.queue.push_back((c, expected(&self.cfg, &c)));
        }
        if (drop_ok, drop_nl) != (want_drop_ok, want_drop_nl) {
            self.fail(format!(
                "drop_ok {drop_ok} drop_nl {drop_nl}, want {want_drop_ok} {want_drop_nl}"
            ));
        }
        self.drops_ok += drop_ok as usize;
        self.drops_nl += drop_nl as usize;
        self.both += (ok.is_some() && nl.is_some()) as usize;
        self.c.edge();
    }

    fn idle(&mut self, n: usize) {
        for _ in 0..n {
            self.step(None, None);
        }
    }

    /// Run until the queue is empty; then every frame must be exact and parse back.
    fn drain(&mut self) {
        let mut n = 0;
        while !self.queue.is_empty() {
            self.step(None, None);
            n += 1;
            assert!(n < 100_000, "seed {}: never drains", self.seed);
        }
        self.idle(2);
        assert!(self.cur.is_empty(), "seed {}: partial frame", self.seed);
        for (cmd, f) in &self.frames {
            if f != &expected(&self.cfg, cmd) {
                self.fail(format!("frame for {cmd:?} differs"));
            }
            check_parse(self.seed, &self.cfg, cmd, f);
        }
    }
}

fn random_cfg(rng: &mut Rng) -> Cfg {
    Cfg {
        src_mac: rng.next_u64() >> 16,
        src_ip: rng.next_u64() as u32,
        src_port: rng.next_u64() as u16,
        cluster: rng.next_u64() as u32,
        sender: rng.next_u64() as u8,
        ttl: rng.range(1, 255) as u8,
    }
}

/// A client address: some fixed clients, some random.
fn addr(rng: &mut Rng) -> (u64, u32, u16) {
    const CLIENTS: [(u64, u32, u16); 3] = [
        (0x0200_0000_0001, 0x0A4E_4364, 40000),
        (0xFFFF_FFFF_FFFF, 0xFFFF_FFFF, 0xFFFF),
        (0, 0, 0),
    ];
    if rng.one_in(3) {
        CLIENTS[rng.range(0, 2) as usize]
    } else {
        (
            rng.next_u64() >> 16,
            rng.next_u64() as u32,
            rng.next_u64() as u16,
        )
    }
}

fn ok_cmd(rng: &mut Rng, instance: u64, index: u8) -> Cmd {
    let (mac, ip, port) = addr(rng);
    Cmd {
        body: Body::Ok(ReplyOk {
            client_id: rng.next_u64() as u32,
            seq: rng.next_u64(),
            instance,
            index: index as u16,
        }),
        mac,
        ip,
        port,
    }
}

fn nl_cmd(rng: &mut Rng) -> Cmd {
    let (mac, ip, port) = addr(rng);
    let leader = if rng.one_in(4) {
        wire::SENDER_NONE
    } else {
        rng.next_u64() as u8
    };
    Cmd {
        body: Body::Nl(ReplyNotLeader {
            client_id: rng.next_u64() as u32,
            seq: rng.next_u64(),
            leader,
            epoch: rng.next_u64() as u32,
        }),
        mac,
        ip,
        port,
    }
}

/// Random traffic: OK bursts of 1–4 consecutive cycles (a sent batch's entries), NOT_LEADERs
/// at random (sometimes in the same cycle as an OK), idle gaps; the load differs per seed so
/// that some runs idle and some overflow the queue.
fn random_run<const A: usize>(seed: u64, cycles: usize) -> Tb<A> {
    let mut rng = Rng::new(seed);
    let cfg = random_cfg(&mut rng);
    let mut tb = Tb::<A>::new(seed, cfg);
    let p_batch = rng.range(1, 5); // percent per idle cycle
    let p_nl = rng.range(1, 6);
    let mut burst: Option<(u64, u8, u8)> = None; // instance, next index, count
    let mut instance = rng.next_u64() >> 1;
    for _ in 0..cycles {
        if burst.is_none() && rng.pct(p_batch) {
            instance += 1;
            burst = Some((instance, 0, rng.range(1, 4) as u8));
        }
        let ok = burst.map(|(inst, i, _)| ok_cmd(&mut rng, inst, i));
        burst = match burst {
            Some((inst, i, n)) if i + 1 < n => Some((inst, i + 1, n)),
            _ => None,
        };
        let nl = rng.pct(p_nl).then(|| nl_cmd(&mut rng));
        tb.step(ok, nl);
    }
    tb.drain();
    tb
}

#[test]
fn random_commands_give_proto_frames_and_predicted_drops() {
    let t0 = std::time::Instant::now();
    let (mut frames, mut drops_ok, mut drops_nl, mut both, mut b2b, mut idle_starts) =
        (0, 0, 0, 0, 0, 0);
    for seed in 0..24 {
        let tb = random_run::<3>(seed, 300);
        frames += tb.frames.len();
        drops_ok += tb.drops_ok;
        drops_nl += tb.drops_nl;
        both += tb.both;
        for (i, f) in tb.first_beats.iter().enumerate() {
            if i > 0 && tb.last_beats[i - 1] + 1 == *f {
                b2b += 1;
            } else {
                idle_starts += 1;
            }
        }
    }
    // A smaller queue (4 entries) overflows more often.
    for seed in 100..106 {
        let tb = random_run::<2>(seed, 300);
        frames += tb.frames.len();
        drops_ok += tb.drops_ok;
        drops_nl += tb.drops_nl;
        both += tb.both;
    }
    eprintln!(
        "{frames} frames exact, {drops_ok} OK and {drops_nl} NOT_LEADER drops, {both} cycles \
         with both commands, {b2b} frames back to back, {idle_starts} from idle ({:.1} s)",
        t0.elapsed().as_secs_f64()
    );
    assert!(frames > 300 && drops_ok > 0 && drops_nl > 0 && both > 10);
    assert!(b2b > 50 && idle_starts > 50);
}

fn cfg0() -> Cfg {
    Cfg {
        src_mac: 0x024E_4300_0001,
        src_ip: 0x0A4E_4301,
        src_port: 7500,
        cluster: 0xAABB_CCDD,
        sender: 2,
        ttl: 16,
    }
}

/// A command at an idle generator: its first beat is valid in the next cycle; an OK and a
/// NOT_LEADER of one cycle leave OK first, back to back (next first beat right after the last).
#[test]
fn first_beat_next_cycle_and_back_to_back() {
    let mut rng = Rng::new(7);
    let mut tb = Tb::<3>::new(7, cfg0());
    tb.idle(3);
    let t = tb.c.cycle;
    tb.step(Some(ok_cmd(&mut rng, 9, 0)), None);
    tb.drain();
    assert_eq!(tb.first_beats, vec![t + 1], "OK: first beat the next cycle");
    let beats = tb.frames[0].1.len().div_ceil(8) as u64;
    assert_eq!(tb.last_beats, vec![t + beats]);

    let t = tb.c.cycle;
    tb.step(None, Some(nl_cmd(&mut rng)));
    tb.drain();
    assert_eq!(
        tb.first_beats[1],
        t + 1,
        "NOT_LEADER: first beat the next cycle"
    );

    let t = tb.c.cycle;
    tb.step(Some(ok_cmd(&mut rng, 10, 0)), Some(nl_cmd(&mut rng)));
    tb.drain();
    assert!(matches!(tb.frames[2].0.body, Body::Ok(_)), "OK first");
    assert!(matches!(tb.frames[3].0.body, Body::Nl(_)));
    assert_eq!(tb.first_beats[2], t + 1);
    assert_eq!(tb.first_beats[3], tb.last_beats[2] + 1, "no idle beat");
    eprintln!(
        "frame {} B = {beats} beats; command at idle → first beat +1 cycle; OK+NOT_LEADER in \
         one cycle: frames at +1 and +{}",
        tb.frames[0].1.len(),
        tb.first_beats[3] - t
    );
}

/// A batch of 4 OKs and a NOT_LEADER every cycle: the queue (8) fills, the overflowing
/// commands are flagged, every frame that leaves is exact, and the frames run back to back.
#[test]
fn a_full_queue_drops_and_flags_and_keeps_the_rest_exact() {
    let mut rng = Rng::new(11);
    let mut tb = Tb::<3>::new(11, cfg0());
    for i in 0..12u64 {
        let ok = (i < 4).then(|| ok_cmd(&mut rng, 77, i as u8));
        tb.step(ok, Some(nl_cmd(&mut rng)));
    }
    // 4 + 12 commands into 8 entries (full after cycle 3); the first frame (first beat in
    // cycle 1) frees its entry at its last beat, cycle 10, which takes that cycle's NOT_LEADER:
    // 9 queued, the NOT_LEADERs of cycles 4..=9 and 11 dropped.
    assert_eq!((tb.drops_ok, tb.drops_nl), (0, 7));
    tb.drain();
    assert_eq!(tb.frames.len(), 9);
    for w in tb.first_beats.windows(2).zip(tb.last_beats.iter()) {
        assert_eq!(w.0[1], w.1 + 1, "back to back");
    }
    // Order: the batch's OKs (index 0..3) interleaved with NOT_LEADERs as they arrived.
    let kinds: String = tb
        .frames
        .iter()
        .map(|(c, _)| match c.body {
            Body::Ok(_) => 'O',
            Body::Nl(_) => 'N',
        })
        .collect();
    assert_eq!(kinds, "ONONONONN");
    // A burst while the queue is full: OKs dropped too.
    for _ in 0..8 {
        tb.step(None, Some(nl_cmd(&mut rng)));
    }
    for i in 0..4u64 {
        tb.step(Some(ok_cmd(&mut rng, 78, i as u8)), None);
    }
    assert!(tb.drops_ok > 0, "OKs dropped when full");
    tb.drain();
}

/// The replies `proto::node::Node` itself emits (a 1-node leader's OKs for a batch, a follower's
/// NOT_LEADER), parsed and fed to the generator: the frames' UDP payloads must be the model's
/// packets byte for byte (this pins the `to_vec(cluster_id, node_id)` arguments).
#[test]
fn the_models_own_replies_come_out_byte_for_byte() {
    use proto::node::{Action, Control, Node};
    use proto::regs::Config;
    let request = |client_id: u32, seq: u64| {
        Packet::Request(wire::Entry {
            client_id,
            seq,
            flags: 0,
            payload: b"ab",
        })
        .to_vec(0x5EED_0001, wire::SENDER_NONE)
        .unwrap()
    };
    let base = Config {
        cluster_id: 0x5EED_0001,
        ..Config::default()
    };
    let mut replies: Vec<(u8, Vec<u8>)> = Vec::new();
    let mut collect = |id: u8, out: &[Action]| {
        for a in out {
            if let Action::Reply { packet, .. } = a {
                replies.push((id, packet.clone()));
            }
        }
    };
    // A leader of a 1-node cluster decides a batch of three.
    let mut l = Node::new(Config {
        node_id: 0,
        node_count: 1,
        ..base
    })
    .unwrap();
    let mut out = Vec::new();
    l.control(0, Control::Enable, &mut out).unwrap();
    l.control(0, Control::Start, &mut out).unwrap();
    for s in 1..=3 {
        l.receive_client(1, &request(40 + s as u32, s), &mut out);
    }
    for now in 2..=base.loop_period as u64 + 2 {
        l.tick(now, &mut out);
    }
    collect(0, &out);
    // A follower (not started) refuses a request.
    let mut f = Node::new(Config {
        node_id: 2,
        node_count: 3,
        ..base
    })
    .unwrap();
    let mut out = Vec::new();
    f.receive_client(5, &request(99, 7), &mut out);
    collect(2, &out);
    let oks = replies
        .iter()
        .filter(|(_, p)| matches!(wire::parse(p, base.cluster_id), Ok((_, Packet::ReplyOk(_)))))
        .count();
    assert_eq!((oks, replies.len()), (3, 4), "the model replied");
    for (id, model) in &replies {
        let cfg = Cfg {
            sender: *id,
            cluster: base.cluster_id,
            ..cfg0()
        };
        let mut tb = Tb::<3>::new(0, cfg);
        let (h, p) = wire::parse(model, base.cluster_id).unwrap();
        assert_eq!(h.sender, *id);
        let (mac, ip, port) = (0x0200_0000_0063, 0x0A4E_4363, 40001);
        let body = match p {
            Packet::ReplyOk(r) => Body::Ok(r),
            Packet::ReplyNotLeader(r) => Body::Nl(r),
            other => panic!("{other:?}"),
        };
        let cmd = Cmd {
            body,
            mac,
            ip,
            port,
        };
        match body {
            Body::Ok(_) => tb.step(Some(cmd), None),
            Body::Nl(_) => tb.step(None, Some(cmd)),
        }
        tb.drain();
        assert_eq!(&tb.frames[0].1[frame::PAYLOAD_OFFSET..], &model[..]);
    }
}
