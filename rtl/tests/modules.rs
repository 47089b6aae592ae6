//! Per-module simulation tests: rsbcast_rx (differential against proto::rsbcast::Receiver),
//! egress_fifo, csr. lowi_core needs rsbcast_rx beside it; its directed tests are in
//! tests/core.rs on nc_core.

use proto::regs::{self, Access, Counter};
use proto::rsbcast::{CopyOutcome, FaultKind, Receiver};
use rtl::csr::{COUNTER_FIELDS, Csr};
use rtl::egress_fifo::EgressFifo;
use rtl::lowi_core::state;
use rtl::rsbcast_rx::{IN_FLIGHT, RsbcastRx, outcome};
use rtl::sim::{Cycle, Rng, bits, val};

// ---------------------------------------------------------------- rsbcast_rx

fn rx(trees: u8, window: u64) -> Cycle<RsbcastRx> {
    rx_of::<{ rtl::rsbcast_rx::IN_FLIGHT_BITS }>(trees, window)
}

/// A receiver tracking `2^A` messages in flight.
fn rx_of<const A: usize>(trees: u8, window: u64) -> Cycle<RsbcastRx<A>> {
    let mut c = Cycle::new(RsbcastRx::<A>::default(), |r| &mut r.clock);
    c.uut.trees.next = bits(trees as u64);
    c.uut.window.next = bits(window);
    c.settle();
    c
}

/// Copies in consecutive cycles, as the core takes them: each comes (`in_*`, judged) in one
/// cycle and is acted on in the next (`copy_*`, applied if its `apply`), while the next one
/// comes. Returns each copy's (outcome, outcome_fresh) in the cycle it is acted on; ends after
/// the last copy's act cycle.
fn offer_run<const A: usize>(
    c: &mut Cycle<RsbcastRx<A>>,
    copies: &[(u8, u32, bool)],
) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut acted: Option<(u8, u32, bool)> = None;
    for i in 0..=copies.len() {
        if let Some((tree, _, apply)) = acted {
            c.uut.copy_tree.next = bits(tree as u64);
            c.uut.apply.next = apply;
        } else {
            c.uut.apply.next = false;
        }
        // The next copy comes (or junk: nothing is acted on from it).
        let (tree, seq, _) = copies.get(i).copied().unwrap_or((3, 0xDEAD_BEEF, false));
        c.uut.in_tree.next = bits(tree as u64);
        c.uut.in_seq.next = bits(seq as u64);
        c.settle();
        if acted.is_some() {
            out.push((val(c.uut.outcome.val()), val(c.uut.outcome_fresh.val())));
        }
        c.edge();
        acted = copies.get(i).copied();
    }
    c.uut.apply.next = false;
    c.settle();
    out
}

/// One copy: it comes in this cycle and is acted on in the next; returns (outcome,
/// outcome_fresh) and applies it if `apply`.
fn offer<const A: usize>(
    c: &mut Cycle<RsbcastRx<A>>,
    tree: u8,
    seq: u32,
    apply: bool,
) -> (u64, u64) {
    offer_run(c, &[(tree, seq, apply)])[0]
}

/// Messages in flight, and `busy` checked against it.
fn in_flight<const A: usize>(c: &Cycle<RsbcastRx<A>>) -> u64 {
    let n = val(c.uut.r_count.q.val());
    assert_eq!(c.uut.busy.val(), n != 0, "busy with {n} in flight");
    n
}

fn idle<const A: usize>(c: &mut Cycle<RsbcastRx<A>>, n: u64) {
    for _ in 0..n {
        c.edge();
    }
}

#[test]
fn rsbcast_rx_delivers_when_every_tree_arrived_within_the_window() {
    let mut c = rx(3, 10);
    assert_eq!(offer(&mut c, 0, 0, true).0, outcome::FIRST);
    assert_eq!(in_flight(&c), 1);
    assert_eq!(val(c.uut.missing.val()), 0b110);
    idle(&mut c, 4);
    assert_eq!(offer(&mut c, 2, 0, true).0, outcome::MORE);
    assert_eq!(offer(&mut c, 2, 0, true).0, outcome::DUPLICATE);
    assert_eq!(val(c.uut.missing.val()), 0b010);
    assert!(!c.uut.expired.val());
    assert_eq!(offer(&mut c, 1, 0, true).0, outcome::DELIVER);
    assert_eq!(in_flight(&c), 0);
    assert_eq!(offer(&mut c, 1, 2, true).0, outcome::GAP);
}

#[test]
fn rsbcast_rx_window_expiry_names_the_missing_tree() {
    let mut c = rx(2, 10);
    offer(&mut c, 1, 0, true); // first copy at cycle 0
    // The window closes when now > first + window: expired from cycle 11 on.
    for now in 1..=10 {
        assert!(!c.uut.expired.val(), "expired early at cycle {now}");
        c.edge();
    }
    assert!(c.uut.expired.val());
    assert_eq!(val(c.uut.missing.val()), 0b01);
}

/// `2^A` messages in flight and no more, each delivered with its own window (the RAM of
/// first-copy times wraps around several times), and copies judged against a fresh receiver.
fn tracks_capacity_in_flight<const A: usize>() {
    let cap = 1u32 << A;
    let window = 4 * cap as u64 + 100;
    let mut c = rx_of::<A>(2, window);
    let mut base = 0u32;
    for round in 0..3 {
        for s in base..base + cap {
            assert_eq!(offer(&mut c, 0, s, true).0, outcome::FIRST, "round {round}");
            assert_eq!(in_flight(&c), (s - base + 1) as u64);
        }
        assert_eq!(
            offer(&mut c, 0, base + cap, false).0,
            outcome::TOO_MANY,
            "round {round}: one more than {cap} in flight"
        );
        // The same copies complete in order on the other tree, one per cycle; the head's
        // window is that of the message at the head (its first copy was 1 cycle later
        // than the one before), so none expires.
        for s in base..base + cap {
            assert!(!c.uut.expired.val(), "round {round} seq {s}");
            assert_eq!(
                offer(&mut c, 1, s, true).0,
                outcome::DELIVER,
                "round {round}"
            );
        }
        assert_eq!(in_flight(&c), 0);
        base += cap;
    }
    // Against a fresh receiver: seq 0 is a first copy, others a gap or a duplicate.
    assert_eq!(offer(&mut c, 0, 0, false).1, outcome::FIRST);
    assert_eq!(offer(&mut c, 0, 7, false).1, outcome::GAP);
    assert_eq!(offer(&mut c, 0, u32::MAX, false).1, outcome::DUPLICATE);
    // restart + apply: seq 0 starts the new epoch's receiver.
    c.uut.restart.next = true;
    offer(&mut c, 1, 0, true);
    c.uut.restart.next = false;
    c.settle();
    assert_eq!(in_flight(&c), 1);
    assert_eq!(val(c.uut.missing.val()), 0b01);
}

#[test]
fn rsbcast_rx_tracks_as_many_in_flight_as_the_model_and_judges_fresh_copies() {
    assert_eq!(
        IN_FLIGHT,
        regs::MAX_IN_FLIGHT as u64,
        "the card tracks what the model does"
    );
    tracks_capacity_in_flight::<{ rtl::rsbcast_rx::IN_FLIGHT_BITS }>();
}

#[test]
fn rsbcast_rx_of_four_tracks_four_in_flight() {
    tracks_capacity_in_flight::<2>();
}

/// Not expired before cycle `due`, expired at it.
fn expires_exactly_at<const A: usize>(c: &mut Cycle<RsbcastRx<A>>, due: u64, what: &str) {
    while c.cycle < due {
        assert!(!c.uut.expired.val(), "{what}: expired at {}", c.cycle);
        c.edge();
    }
    assert!(c.uut.expired.val(), "{what}: not expired at {due}");
}

/// Each message's window is its own: with messages whose first copies came at different
/// times, the head expires exactly `window + 1` cycles after its own first copy, also after
/// deliveries moved the head through the RAM (one per cycle, and after a pause).
#[test]
fn rsbcast_rx_expires_each_head_at_its_own_first_copy_time() {
    for (spacing, deliver_at_once) in [(1u64, true), (3, false), (5, true)] {
        let window = 40;
        let mut c = rx(2, window);
        let mut first = vec![];
        for s in 0..8u32 {
            first.push(c.cycle + 1); // the cycle it is acted on
            assert_eq!(offer(&mut c, 0, s, true).0, outcome::FIRST);
            idle(&mut c, spacing);
        }
        // Deliver the first five in consecutive cycles (or with a pause after each).
        if deliver_at_once {
            let run: Vec<(u8, u32, bool)> = (0..5u32).map(|s| (1, s, true)).collect();
            for (s, o) in offer_run(&mut c, &run).into_iter().enumerate() {
                assert_eq!(o.0, outcome::DELIVER, "seq {s}");
            }
        } else {
            for s in 0..5u32 {
                assert_eq!(offer(&mut c, 1, s, true).0, outcome::DELIVER);
                idle(&mut c, 1);
            }
        }
        // The head is now message 5: expired from first[5] + window + 1 on, not before.
        let due = first[5] + window + 1;
        assert!(c.cycle < due, "spacing {spacing}");
        expires_exactly_at(&mut c, due, &format!("spacing {spacing}"));
        assert_eq!(val(c.uut.missing.val()), 0b10);
    }
    // Pushes in consecutive cycles, then deliveries from the very next cycle: the first
    // delivery needs the time of the message pushed in the cycle before it (the RAM's read
    // of that address gave the old word; it is forwarded).
    for pushed in 4..=6u32 {
        let window = 40;
        let mut c = rx_of::<3>(2, window);
        // The RAM's words hold old times from an earlier round.
        for s in 0..8u32 {
            offer(&mut c, 0, s, true);
            offer(&mut c, 1, s, true);
        }
        idle(&mut c, 5);
        // The pushes acted on in consecutive cycles from the next one on, then the deliveries
        // from the very next cycle.
        let first: Vec<u64> = (0..pushed as u64).map(|i| c.cycle + 1 + i).collect();
        let mut run: Vec<(u8, u32, bool)> = (8..8 + pushed).map(|s| (0, s, true)).collect();
        run.extend((8..8 + pushed - 1).map(|s| (1, s, true)));
        for (i, o) in offer_run(&mut c, &run).into_iter().enumerate() {
            let want = if i < pushed as usize {
                outcome::FIRST
            } else {
                outcome::DELIVER
            };
            assert_eq!(o.0, want, "{pushed} pushed, copy {i}");
        }
        let due = first[pushed as usize - 1] + window + 1;
        expires_exactly_at(&mut c, due, &format!("{pushed} pushed"));
    }
}

/// Random copies (in order, duplicated, skipping) at random times against the model receiver:
/// the exported receiver, and one of 4 entries, whose RAM of first-copy times wraps around
/// often and which meets "too many in flight" where the model (1,024) does not.
#[test]
fn rsbcast_rx_matches_the_model_receiver_on_random_copies() {
    random_copies_against_the_model::<{ rtl::rsbcast_rx::IN_FLIGHT_BITS }>();
    random_copies_against_the_model::<2>();
}

fn random_copies_against_the_model<const A: usize>() {
    let cap = 1u64 << A;
    let code = |o: CopyOutcome| match o {
        CopyOutcome::First => outcome::FIRST,
        CopyOutcome::More => outcome::MORE,
        CopyOutcome::Deliver => outcome::DELIVER,
        CopyOutcome::Duplicate => outcome::DUPLICATE,
        CopyOutcome::Fault(FaultKind::SeqGap { .. }) => outcome::GAP,
        CopyOutcome::Fault(FaultKind::TooManyInFlight) => outcome::TOO_MANY,
        CopyOutcome::Fault(FaultKind::MissingCopy { .. }) => 99,
    };
    let mut copies = 0;
    for seed in 0..120 {
        let mut rng = Rng::new(seed);
        let trees = rng.range(1, 4) as u8;
        let window = rng.range(3, 30);
        let mut c = rx_of::<A>(trees, window);
        // Odd seeds restart the receiver at another seq first (a joining node's lock-on
        // point; near the wrap now and then), drawn apart from the trace's generator.
        let mut b = Rng::new(seed ^ 0xBA5E);
        let base = match seed % 4 {
            1 => b.next_u64() as u32,
            3 => u32::MAX - b.range(0, 6) as u32,
            _ => 0,
        };
        // The first copy comes in the restart's cycle (judged against the restarted receiver);
        // seeds 2 mod 4 restart at 0 (a new epoch's start, whose first copy is seq 0), those 6
        // mod 8 in the cycle that copy is acted on (taken by the restart), with seq 1 of its
        // tree coming then (judged against a restart that took the copy before).
        let mut acted: Option<(u8, u32, bool)> = None;
        let mut restart_in_act = seed % 8 == 6;
        if restart_in_act {
            c.uut.in_tree.next = bits(0);
            c.uut.in_seq.next = bits(0);
            acted = Some((0, 0, true));
            c.edge();
        } else if base != 0 || seed % 4 == 2 {
            c.uut.restart.next = true;
            c.uut.restart_base.next = bits(base as u64);
            // A lock-on at `base` (the newest seq kept, plus one, as `lowi_core` gives it).
            c.uut.lock_take.next = false;
            c.uut.lock_kept.next = bits(base as u64);
            c.uut.in_tree.next = bits(0);
            c.uut.in_seq.next = bits(base as u64);
            acted = Some((0, base, true));
            c.edge();
            c.uut.restart.next = false;
            c.uut.restart_base.next = bits(0);
            c.settle();
        }
        let mut m = Receiver::new(trees, window, base);
        let mut next = [base; 4];
        // One cycle per step: the copy that came in the step before is acted on (and given to
        // the model, in that cycle), and the next one comes (in 40 % of the cycles, so that
        // copies often come in consecutive cycles and meet a state the act stage is changing).
        for _ in 0..300 {
            let now = c.cycle;
            // Window first, as the node does before it takes a copy.
            let exp = m.expire(now);
            assert_eq!(
                c.uut.expired.val(),
                exp.is_some(),
                "seed {seed} cycle {now}"
            );
            // `busy` against the count in every cycle.
            in_flight(&c);
            if let Some(FaultKind::MissingCopy { missing }) = exp {
                assert_eq!(val(c.uut.missing.val()), missing as u64, "seed {seed}");
                break;
            }
            let mut want = None;
            if let Some((t, seq, apply)) = acted {
                c.uut.copy_tree.next = bits(t as u64);
                c.uut.apply.next = apply;
                if apply {
                    let w = m.copy(now, t, seq);
                    if matches!(
                        w,
                        CopyOutcome::First | CopyOutcome::More | CopyOutcome::Deliver
                    ) {
                        next[t as usize] = seq.wrapping_add(1);
                    }
                    want = Some(code(w));
                } else {
                    want = Some(outcome::TOO_MANY);
                }
            } else {
                c.uut.apply.next = false;
            }
            // The next copy: mostly the tree furthest behind, so that messages complete.
            let mut come = None;
            if want.is_none_or(|w| !matches!(w, outcome::GAP | outcome::TOO_MANY)) && rng.pct(40) {
                let behind = (0..trees)
                    .min_by_key(|&t| next[t as usize].wrapping_sub(base))
                    .unwrap_or(0);
                let t = if rng.pct(60) {
                    behind
                } else {
                    rng.range(0, trees as u64 - 1) as u8
                };
                let seq = match rng.range(0, 39) {
                    0 => next[t as usize].wrapping_sub(1),
                    1 => next[t as usize].wrapping_add(1),
                    _ => next[t as usize],
                };
                // One more than this receiver tracks: "too many", where the model goes on (not
                // applied, not given to the model).
                let too_many =
                    m.in_flight() as u64 == cap && seq.wrapping_sub(m.base()) as u64 == cap;
                come = Some((t, seq, !too_many));
            }
            if restart_in_act {
                c.uut.restart.next = true;
                c.uut.restart_base.next = bits(0);
                c.uut.lock_take.next = false;
                c.uut.lock_kept.next = bits(0);
                come = Some((0, 1, true));
            }
            let (t, seq, _) = come.unwrap_or((3, 0xDEAD_BEEF, false));
            c.uut.in_tree.next = bits(t as u64);
            c.uut.in_seq.next = bits(seq as u64);
            c.settle();
            if let Some(w) = want {
                let (t, seq, _) = acted.unwrap_or_default();
                copies += 1;
                assert_eq!(
                    val(c.uut.outcome.val()),
                    w,
                    "seed {seed} cycle {now} tree {t} seq {seq}"
                );
                if matches!(w, outcome::GAP | outcome::TOO_MANY) {
                    break;
                }
            }
            c.edge();
            if restart_in_act {
                c.uut.restart.next = false;
                restart_in_act = false;
            }
            acted = come;
            if acted.is_none() && want.is_some() {
                assert_eq!(in_flight(&c), m.in_flight() as u64, "seed {seed}");
            }
        }
    }
    assert!(copies > 1000, "only {copies} copies compared");
}

// ---------------------------------------------------------------- egress_fifo

#[test]
fn egress_fifo_streams_taken_requests_in_order_and_clear_drops_the_rest() {
    let mut c = Cycle::new(EgressFifo::<3>::default(), |f| &mut f.clock);
    // A send takes `min(len, bmax)`: 2.
    c.uut.bmax.next = bits(2);
    // The request's fields in one cycle, the push in the next (the core decides on a request
    // one cycle after it comes).
    let push = |c: &mut Cycle<EgressFifo<3>>, id: u64| {
        c.uut.push_client.next = bits(id);
        c.uut.push_seq.next = bits(id * 100);
        c.uut.push_len.next = bits(2);
        c.uut.push_payload.next = bits(id << 56);
        c.edge();
        c.uut.push.next = true;
        c.uut.push_client.next = bits(0);
        c.uut.push_seq.next = bits(0);
        c.edge();
        c.uut.push.next = false;
    };
    let mut next_id = 1;
    let mut outs = Vec::new();
    // Many rounds so that the 8-entry RAM wraps around.
    for round in 0..6 {
        for _ in 0..3 {
            push(&mut c, next_id);
            next_id += 1;
        }
        c.settle();
        assert_eq!(val(c.uut.len.val()), 3, "round {round}");
        // Take 2 of the 3; the third is dropped by a clear one cycle later.
        c.uut.reserve.next = true;
        c.settle();
        let t_send = c.cycle;
        c.edge();
        c.uut.reserve.next = false;
        c.uut.clear.next = true;
        c.settle();
        assert_eq!(val(c.uut.len.val()), 1);
        c.edge();
        c.uut.clear.next = false;
        for _ in 0..4 {
            c.settle();
            if c.uut.out_valid.val() {
                outs.push((
                    c.cycle - t_send,
                    val(c.uut.out_client.val()),
                    val(c.uut.out_seq.val()),
                    val(c.uut.out_payload.val()) >> 56,
                ));
            }
            c.edge();
        }
        c.settle();
        assert_eq!(val(c.uut.len.val()), 0);
    }
    let expect: Vec<_> = (0..6u64)
        .flat_map(|r| {
            let a = r * 3 + 1;
            [(2, a, a * 100, a), (3, a + 1, (a + 1) * 100, a + 1)]
        })
        .collect();
    assert_eq!(
        outs, expect,
        "(cycles after the send, client, seq, first payload byte)"
    );
}

/// `len` follows every push, send (of `min(len, bmax)`) and clear, and `nz` is `len != 0` in
/// every cycle, whatever the FIFO is told: random pushes, sends that take a part or every
/// entry (a send that takes all is the case the FIFO judges from `count <= bmax`), `bmax`
/// from 1 to 5 picked anew in every cycle, clears with and without a push.
#[test]
fn egress_fifo_nz_is_len_not_zero_in_every_cycle() {
    for seed in 1..=20u64 {
        let mut c = Cycle::new(EgressFifo::<4>::default(), |f| &mut f.clock);
        let mut r = Rng::new(seed);
        let (mut empties, mut all_taken, mut part_taken) = (0, 0, 0);
        let mut want = 0;
        for cycle in 0..400 {
            c.settle();
            let len = val(c.uut.len.val());
            assert_eq!(len, want, "seed {seed} cycle {cycle}: len");
            assert_eq!(
                c.uut.nz.val(),
                len != 0,
                "seed {seed} cycle {cycle}: nz with len {len}"
            );
            empties += (len == 0) as u32;
            // At most 8 entries in the 16-entry RAM (the core's depth rule).
            let push = len < 8 && r.pct(50);
            let reserve = len > 0 && r.pct(30);
            let bmax = r.range(1, 5);
            let take = if reserve { len.min(bmax) } else { 0 };
            all_taken += (reserve && take == len && !push) as u32;
            part_taken += (reserve && take < len) as u32;
            // A clear never comes with a send that takes requests (the core's contract).
            let clear = !reserve && r.one_in(8);
            c.uut.push.next = push;
            c.uut.bmax.next = bits(bmax);
            c.uut.reserve.next = reserve;
            c.uut.clear.next = clear;
            want = if clear { 0 } else { len - take } + push as u64;
            c.edge();
        }
        assert!(
            empties > 10 && all_taken > 3 && part_taken > 3,
            "seed {seed}: the run reached an empty FIFO {empties} times, a send of every entry {all_taken} times, of a part {part_taken} times"
        );
    }
}

/// `room` is `len < depth` and `room_b` is `len < depth + bmax` in every cycle (from the second
/// cycle after a change of `depth` or `bmax`, which are configuration), when every send takes
/// `min(len, bmax)` as the core asks: random pushes (up to `depth`, the core's rule), sends of a
/// full batch and of every entry, clears with and without a push, `depth` and `bmax` changed
/// now and then (1..=8 and 1..=5, the registers' legal range starts at 1).
#[test]
fn egress_fifo_room_is_len_below_depth_in_every_cycle() {
    for seed in 1..=20u64 {
        let mut c = Cycle::new(EgressFifo::<4>::default(), |f| &mut f.clock);
        let mut r = Rng::new(seed);
        let (mut depth, mut bmax) = (r.range(1, 8), r.range(1, 5));
        let mut changed = 2;
        let (mut full, mut batch_full, mut checked) = (0, 0, 0);
        for cycle in 0..600 {
            c.uut.depth.next = bits(depth);
            c.uut.bmax.next = bits(bmax);
            c.settle();
            let len = val(c.uut.len.val());
            if changed == 0 {
                checked += 1;
                assert_eq!(
                    c.uut.room.val(),
                    len < depth,
                    "seed {seed} cycle {cycle}: room with len {len}, depth {depth}"
                );
                assert_eq!(
                    c.uut.room_b.val(),
                    len < depth + bmax,
                    "seed {seed} cycle {cycle}: room_b with len {len}, depth {depth}, bmax {bmax}"
                );
                full += (len >= depth) as u32;
                batch_full += (len >= depth && len < depth + bmax) as u32;
            } else {
                changed -= 1;
            }
            let reserve = len > 0 && r.pct(25);
            let take = len.min(bmax);
            let push = len - if reserve { take } else { 0 } < depth && r.pct(60);
            let clear = !reserve && r.one_in(12);
            c.uut.push.next = push;
            c.uut.reserve.next = reserve;
            c.uut.clear.next = clear;
            c.edge();
            if r.one_in(100) {
                // Configuration changes while nothing is queued (Disabled): empty the FIFO.
                c.uut.push.next = false;
                c.uut.reserve.next = false;
                c.uut.clear.next = true;
                c.edge();
                c.uut.clear.next = false;
                depth = r.range(1, 8);
                bmax = r.range(1, 5);
                changed = 1;
            }
        }
        assert!(
            checked > 400 && full > 10 && batch_full > 5,
            "seed {seed}: {checked} cycles checked, {full} with a full FIFO, {batch_full} with a full FIFO a batch would free"
        );
    }
}

// ---------------------------------------------------------------- csr

fn csr() -> Cycle<Csr> {
    Cycle::new(Csr::default(), |c| &mut c.clock)
}

fn read(c: &mut Cycle<Csr>, a: u16) -> u32 {
    c.uut.bus_write.next = false;
    c.uut.bus_addr.next = bits(a as u64);
    c.settle();
    val(c.uut.bus_rdata.val()) as u32
}

/// One bus write, then the cycle in which `csr` applies it (the write is registered).
fn write(c: &mut Cycle<Csr>, a: u16, v: u32) {
    c.uut.bus_addr.next = bits(a as u64);
    c.uut.bus_wdata.next = bits(v as u64);
    c.uut.bus_write.next = true;
    c.edge();
    c.uut.bus_write.next = false;
    c.edge();
    c.settle();
}

#[test]
fn csr_counter_fields_follow_the_register_map() {
    assert_eq!(&COUNTER_FIELDS[..], Counter::ALL);
}

#[test]
fn csr_reset_values_and_ranges_come_from_the_register_map() {
    let mut c = csr();
    for r in regs::REGISTERS
        .iter()
        .filter(|r| r.access == Access::Config)
    {
        assert_eq!(read(&mut c, r.addr) as u64, r.reset, "{} reset", r.name);
        // Out of range below and above: refused; the bounds themselves: taken.
        if r.min > 0 {
            write(&mut c, r.addr, (r.min - 1) as u32);
            assert_eq!(read(&mut c, r.addr) as u64, r.reset, "{} below min", r.name);
        }
        if r.max < u32::MAX as u64 {
            write(&mut c, r.addr, (r.max + 1) as u32);
            assert_eq!(read(&mut c, r.addr) as u64, r.reset, "{} above max", r.name);
        }
        for v in [r.min, r.max] {
            write(&mut c, r.addr, v as u32);
            assert_eq!(read(&mut c, r.addr) as u64, v, "{} = {v}", r.name);
        }
    }
    assert_eq!(read(&mut c, regs::addr::MAGIC), regs::MAGIC_VALUE);
    // Configuration is locked while the core is enabled.
    c.uut.state.next = bits(state::ACTIVE);
    let before = read(&mut c, regs::addr::TIMEOUT);
    write(&mut c, regs::addr::TIMEOUT, before - 1);
    assert_eq!(read(&mut c, regs::addr::TIMEOUT), before);
    assert_eq!(read(&mut c, regs::addr::CTRL), regs::ctrl::ENABLE);
    // Joining: TIMEOUT (the members' timeout, from the state transfer) is the one register
    // written while enabled, and not in the cycle a NET-FAULT ends the join.
    c.uut.state.next = bits(state::JOINING);
    assert_eq!(
        read(&mut c, regs::addr::CTRL),
        regs::ctrl::ENABLE | regs::ctrl::JOIN
    );
    write(&mut c, regs::addr::DELTA, 7);
    assert!(
        !c.uut.timeout_written.val(),
        "a write to another register (with a value TIMEOUT would take) is not TIMEOUT's"
    );
    assert_ne!(
        read(&mut c, regs::addr::DELTA),
        7,
        "DELTA refused while joining"
    );
    c.uut.tick_net_fault.next = true;
    write(&mut c, regs::addr::TIMEOUT, before - 2);
    assert_eq!(
        read(&mut c, regs::addr::TIMEOUT),
        before,
        "refused in a fault's cycle"
    );
    c.uut.tick_net_fault.next = false;
    c.uut.bus_addr.next = bits(regs::addr::TIMEOUT as u64);
    c.uut.bus_wdata.next = bits((before - 2) as u64);
    c.uut.bus_write.next = true;
    c.settle();
    assert!(!c.uut.timeout_written.val());
    c.edge();
    c.uut.bus_write.next = false;
    c.settle();
    assert!(!c.uut.timeout_written.val(), "the write is applied now");
    assert_eq!(
        read(&mut c, regs::addr::TIMEOUT),
        before,
        "the old value until then"
    );
    c.edge();
    c.settle();
    assert!(
        c.uut.timeout_written.val(),
        "the core is told in the cycle after the write is applied"
    );
    assert_eq!(read(&mut c, regs::addr::TIMEOUT), before - 2);
    // Out of range (below its minimum) while joining: refused, and the core is not told.
    let t = regs::REGISTERS
        .iter()
        .find(|r| r.addr == regs::addr::TIMEOUT)
        .unwrap();
    assert!(t.min > 0);
    c.uut.bus_addr.next = bits(regs::addr::TIMEOUT as u64);
    c.uut.bus_wdata.next = bits(t.min - 1);
    c.uut.bus_write.next = true;
    c.edge();
    c.uut.bus_write.next = false;
    c.edge();
    c.settle();
    assert!(
        !c.uut.timeout_written.val(),
        "an out-of-range TIMEOUT is not told"
    );
    assert_eq!(read(&mut c, regs::addr::TIMEOUT), before - 2);
    // Read-only registers ignore writes.
    write(&mut c, regs::addr::MAGIC, 0);
    assert_eq!(read(&mut c, regs::addr::MAGIC), regs::MAGIC_VALUE);
}

#[test]
fn csr_counters_count_tick_then_clear_then_event() {
    let mut c = csr();
    let a = Counter::RequestsDropped.addr();
    c.uut.tick_dropped.next = bits(5);
    c.edge();
    c.edge();
    c.uut.tick_dropped.next = bits(0);
    // A count shows one cycle after the cycle it counts (the increments are registered first).
    assert_eq!(read(&mut c, a), 5);
    c.edge();
    assert_eq!(read(&mut c, a), 10);
    // One cycle with a tick increment, CLEAR_COUNTERS and an event increment: only the event stays.
    c.uut.tick_dropped.next = bits(3);
    c.uut.clear_counters.next = true;
    c.uut.ev_dropped.next = bits(2);
    c.edge();
    c.uut.tick_dropped.next = bits(0);
    c.uut.clear_counters.next = false;
    c.uut.ev_dropped.next = bits(0);
    assert_eq!(read(&mut c, a), 10, "the clear shows one cycle later too");
    c.edge();
    assert_eq!(read(&mut c, a), 2);
    assert_eq!(read(&mut c, a + 4), 0);
    // Every counter answers at its own address.
    c.uut.ev_ignored.next = true;
    // An OK and a NOT_LEADER dropped in one cycle count 2; a host copy dropped counts 1.
    c.uut.drop_reply_ok.next = true;
    c.uut.drop_reply_nl.next = true;
    c.uut.drop_host.next = true;
    c.edge();
    c.uut.ev_ignored.next = false;
    c.uut.drop_reply_ok.next = false;
    c.uut.drop_reply_nl.next = false;
    c.uut.drop_host.next = false;
    c.edge();
    for k in Counter::ALL {
        let want = match k {
            Counter::RequestsDropped => 2,
            Counter::Ignored => 1,
            Counter::RepliesDropped => 2,
            Counter::HostDropped => 1,
            _ => 0,
        };
        assert_eq!(read(&mut c, k.addr()), want, "{}", k.name());
    }
}

// ---------------------------------------------------------------- out_fifo

/// The beat `out_fifo` offers this cycle: (data, keep, last).
fn fifo_offer<const A: usize>(c: &Cycle<rtl::out_fifo::OutFifo<A>>) -> (u64, u64, bool) {
    (
        val(c.uut.out_data.val()),
        val(c.uut.out_keep.val()),
        c.uut.out_last.val(),
    )
}

/// `out_fifo` against a queue: random bursts in (never more than `free` allows, as the
/// generators' room rule does, plus a few beats into a full FIFO, which must be dropped),
/// random `out_ready`. Every beat leaves once, in order, unchanged; an offered beat
/// stays offered until taken (AXI-Stream); `empty` and `room` follow the beats held.
#[test]
fn out_fifo_keeps_order_and_holds_an_offered_beat_under_random_backpressure() {
    use rtl::out_fifo::OutFifo;
    use std::collections::VecDeque;
    for seed in 0..12u64 {
        let mut rng = Rng::new(0x0F1F_0000 + seed);
        let mut c = Cycle::new(OutFifo::<4>::default(), |u| &mut u.clock);
        let depth = 16u64;
        let ready_pct = [0, 10, 50, 90, 100][(seed % 5) as usize];
        // What a writer's longest frame needs free (a constant per run): `room` says whether.
        let room_min = 1 + (seed * 5) % depth;
        c.uut.room_min.next = bits(room_min);
        let mut model: VecDeque<(u64, u64, bool)> = VecDeque::new();
        let mut in_flight = 0u64; // written, not yet taken
        let mut offered: Option<(u64, u64, bool)> = None;
        let (mut sent, mut got, mut overflows) = (0u64, 0u64, 0u64);
        for cyc in 0..3000u64 {
            let free = depth - in_flight;
            assert_eq!(
                c.uut.room.val(),
                free >= room_min,
                "seed {seed} cycle {cyc}: room (room_min {room_min})"
            );
            assert_eq!(
                c.uut.empty.val(),
                in_flight == 0,
                "seed {seed} cycle {cyc}: empty"
            );
            // A beat in now and then; into a full FIFO only on purpose (1 in 50 cycles).
            let full = free == 0;
            let push = if full { rng.one_in(50) } else { rng.pct(60) };
            let beat = (rng.next_u64(), rng.range(1, 255), rng.one_in(5));
            c.uut.in_valid.next = push;
            c.uut.in_data.next = bits(beat.0);
            c.uut.in_keep.next = bits(beat.1);
            c.uut.in_last.next = beat.2;
            let ready = rng.pct(ready_pct) || (cyc > 2600 && ready_pct == 0);
            c.uut.out_ready.next = ready;
            c.settle();
            // A beat into an empty FIFO is offered in the cycle it comes.
            if push && !full {
                model.push_back(beat);
                in_flight += 1;
                sent += 1;
            }
            if c.uut.out_valid.val() {
                let o = fifo_offer(&c);
                if let Some(prev) = offered {
                    assert_eq!(o, prev, "seed {seed} cycle {cyc}: an offered beat changed");
                }
                if ready {
                    assert_eq!(Some(o), model.pop_front(), "seed {seed} cycle {cyc}: order");
                    got += 1;
                    in_flight -= 1;
                    offered = None;
                } else {
                    offered = Some(o);
                }
            } else {
                assert!(
                    offered.is_none(),
                    "seed {seed} cycle {cyc}: an offer withdrawn"
                );
            }
            overflows += (push && full) as u64;
            c.edge();
        }
        // Drain.
        c.uut.in_valid.next = false;
        c.uut.out_ready.next = true;
        for _ in 0..(depth + 4) {
            c.settle();
            if c.uut.out_valid.val() {
                let o = fifo_offer(&c);
                assert_eq!(
                    Some(o),
                    model.pop_front(),
                    "seed {seed}: order while draining"
                );
                got += 1;
            }
            c.edge();
        }
        c.settle();
        assert!(
            model.is_empty() && c.uut.empty.val(),
            "seed {seed}: beats left"
        );
        assert_eq!(sent, got, "seed {seed}");
        let least = if ready_pct <= 10 { 100 } else { 500 };
        assert!(sent > least, "seed {seed}: only {sent} beats");
        if ready_pct < 50 {
            assert!(
                overflows > 0,
                "seed {seed}: the full FIFO was never offered a beat"
            );
        }
    }
}

/// `out_fifo`'s latency: into an empty FIFO a beat is offered in the cycle it comes, and a
/// back-to-back run of beats leaves back to back, whether the receiver takes them at once or
/// after a pause (then the first beat stays offered, unchanged).
#[test]
fn out_fifo_offers_a_beat_in_the_cycle_it_came_and_runs_stay_back_to_back() {
    use rtl::out_fifo::OutFifo;
    for pause in [0u64, 3] {
        let mut c = Cycle::new(OutFifo::<4>::default(), |u| &mut u.clock);
        let mut offered = Vec::new();
        let mut firsts = 0;
        for cyc in 0..20u64 {
            c.uut.in_valid.next = cyc < 6;
            c.uut.in_data.next = bits(100 + cyc);
            c.uut.in_keep.next = bits(0xFF);
            c.uut.in_last.next = cyc == 5;
            c.uut.out_ready.next = !(0..pause).contains(&cyc);
            c.settle();
            if c.uut.out_valid.val() && val(c.uut.out_data.val()) == 100 {
                firsts += 1;
            }
            if c.uut.out_valid.val() && c.uut.out_ready.val() {
                offered.push((cyc, val(c.uut.out_data.val())));
            }
            c.edge();
        }
        let want: Vec<(u64, u64)> = (0..6).map(|i| (pause + i, 100 + i)).collect();
        assert_eq!(offered, want, "pause {pause}");
        assert_eq!(
            firsts,
            1 + pause,
            "pause {pause}: the first beat offered until taken"
        );
    }
}

// ---------------------------------------------------------------- lowi_core's SumEq

/// `SumEq` (`x == i + k` without an adder) against the wrapping sum: `x` equal to the sum, one
/// bit away from it (each bit, so every carry position is tested), and random, with `i` at the
/// carry chain's edges (runs of ones of every length, all ones, the top bit) and random.
#[test]
fn sum_eq_is_x_equal_to_i_plus_k_on_every_carry_length() {
    use rtl::lowi_core::SumEq;
    use rust_hdl::prelude::Block;
    for k in [1u64, 2, 3, 0xFFFF_FFFF_FFFF_FFFF] {
        let mut b = SumEq::new(k);
        b.connect_all();
        let mut r = Rng::new(k);
        let mut is = vec![0u64, u64::MAX, 1 << 63, u64::MAX >> 1];
        is.extend((0..64).map(|n| (1u64 << n) - 1));
        is.extend((0..64).map(|n| u64::MAX << n));
        is.extend((0..64).map(|_| r.next_u64()));
        let (mut yes, mut no) = (0, 0);
        for &i in &is {
            let sum = i.wrapping_add(k);
            let mut xs = vec![sum, r.next_u64(), i];
            xs.extend((0..64).map(|n| sum ^ (1 << n)));
            for x in xs {
                b.x.next = bits(x);
                b.i.next = bits(i);
                rtl::sim::settle(&mut b);
                assert_eq!(b.eq.val(), x == sum, "k {k:#x}: i {i:#x}, x {x:#x}");
                if x == sum { yes += 1 } else { no += 1 }
            }
        }
        assert!(
            yes >= is.len() && no > 60 * is.len(),
            "k {k:#x}: {yes} equal, {no} not"
        );
    }
}

/// `SubNeg` (the receiver's judge: the sign of `a - b` from the top bits and a 31-bit
/// comparison) against bit 31 of the wrapping subtraction: `a` and `b` equal, one apart each
/// way, at the 2^31 and 2^32 wraps, each bit of the low 31 flipped, and random.
#[test]
fn sub_neg_is_the_sign_of_the_wrapping_difference() {
    use rtl::rsbcast_rx::SubNeg;
    use rust_hdl::prelude::Block;
    let mut b = SubNeg::default();
    b.connect_all();
    let mut r = Rng::new(31);
    let mut pairs = Vec::new();
    for a in [0u32, 1, u32::MAX, 1 << 31, (1 << 31) - 1, (1 << 31) + 1] {
        for d in [0u32, 1, u32::MAX, 1 << 31, (1 << 31) - 1, (1 << 31) + 1] {
            pairs.push((a, a.wrapping_add(d)));
        }
    }
    for _ in 0..2000 {
        let a = r.next_u64() as u32;
        pairs.push((a, r.next_u64() as u32));
        pairs.push((a, a ^ (1 << r.range(0, 31))));
    }
    let (mut neg, mut pos) = (0, 0);
    for (a, c) in pairs {
        b.a.next = bits(a as u64);
        b.b.next = bits(c as u64);
        rtl::sim::settle(&mut b);
        let want = a.wrapping_sub(c) >> 31 == 1;
        assert_eq!(b.neg.val(), want, "a {a:#x}, b {c:#x}");
        if want { neg += 1 } else { pos += 1 }
    }
    assert!(neg > 1000 && pos > 1000, "{neg} negative, {pos} not");
}
