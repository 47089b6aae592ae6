//! `egress_fifo`: the leader's queue of client requests (rate limiting, §5.2).
//!
//! Three pointers over a RAM of `2^A` entries: `rd` (next entry to read out), `res` (entries
//! before it were taken by a send: decided, their OKs still to be sent) and `wr`. The logical
//! length `len = wr - res` is what the loop and the `fifo_depth` limit see; `reserve` moves `res`
//! forward by a send's batch; `clear` drops every entry not yet taken (a new epoch, a fault or a
//! reset). Taken entries stream out one per cycle on `out_*` (for the OK replies and the DECIDE
//! body), two cycles after the send that took them, with the client's MAC, IPv4 address and
//! UDP port as its request came (where the OK reply goes). The FIFO never stalls anything: whether a
//! request may be queued is decided by `lowi_core` against `fifo_depth` (drops are counted
//! there). `2^A` must be at least twice the largest `fifo_depth` used, so that taken entries
//! still being read out never collide with new ones.
//!
//! `P` is the payload width in bits (a multiple of 64): an entry holds up to `P / 8` payload
//! bytes, first byte in bits `P-1..P-8`, in a RAM of `2^A` words of `P` bits beside the other
//! fields (synchronous write, registered read: block RAM in a vendor flow). `nc_core` (exported)
//! stores 128 bytes (`P` = 1024), and so does `nc_engine`'s (issue 17).
//!
//! The RAMs are written in every cycle, at the slot a push would take (`wr`, or `res` with a
//! clear): that slot is free (nothing read out or queued lives there), so a cycle without a push
//! writes a slot the next push overwrites, and the write enable waits for no verdict (a
//! request's judgement in front of every RAM's write enable was `nc_core`'s longest path).

use rust_hdl::prelude::*;

use crate::prim::ZeroExtend;

block! {
    /// The FIFO (`A`: address bits of the RAM).
    pub struct EgressFifo<const A: usize, const P: usize = 64>() {
        /// Clock.
        pub clock: Signal<In, Clock>,
        /// Queue the request whose fields (`push_*`) came in the cycle before.
        pub push: Signal<In, Bit>,
        /// The request: client_id.
        pub push_client: Signal<In, Bits<32>>,
        /// seq.
        pub push_seq: Signal<In, Bits<64>>,
        /// payload_len (0..=P/8).
        pub push_len: Signal<In, Bits<8>>,
        /// Payload bytes, first byte in bits P-1..P-8.
        pub push_payload: Signal<In, Bits<P>>,
        pub push_mac: Signal<In, Bits<48>>,
        pub push_ip: Signal<In, Bits<32>>,
        pub push_port: Signal<In, Bits<16>>,
        /// A send takes `min(len, bmax)` requests this cycle, as the core's batch does (late:
        /// the core's tick; it only selects). The FIFO computes what it takes from its own
        /// `count` and `bmax`: every sum is made beside the comparison `count >= bmax`, not
        /// behind a `min` (the core's `take` input until 2026-12-07: its comparison and the
        /// difference in series were `nc_core`'s longest path, `count` → `count`).
        pub reserve: Signal<In, Bit>,
        /// Drop every request not taken (before this cycle's `push`). Never with `reserve`
        /// (the core's clears come from its tick, whose send then takes nothing, or from a
        /// register, when it does not lead), so a request pushed with it goes to `res` itself:
        /// no adder in front of the RAM's write address (`res + reserve` there was `nc_core`'s
        /// longest path, from the tick's send decision).
        pub clear: Signal<In, Bit>,
        /// `fifo_depth` and `batch_max` (configuration: they change only while nothing is pushed
        /// or taken, and `room` / `room_b` follow a change one cycle later).
        pub depth: Signal<In, Bits<13>>,
        pub bmax: Signal<In, Bits<13>>,
        /// Logical length.
        pub len: Signal<Out, Bits<13>>,
        /// `len != 0`, registered beside it from its candidates (no 13-input OR in front of the
        /// core's send decision).
        pub nz: Signal<Out, Bit>,
        /// `len < depth` (a push has room) and `len < depth + bmax` (what a batch leaves has
        /// room, if `depth` is not 0: `len - min(len, bmax) < depth`), registered like `nz` from
        /// the candidates of the next count, judged against this cycle's `depth` and `bmax`.
        /// A send takes `min(len, bmax)` (`reserve`).
        pub room: Signal<Out, Bit>,
        pub room_b: Signal<Out, Bit>,
        /// A taken request streams out this cycle.
        pub out_valid: Signal<Out, Bit>,
        /// Its client_id, seq, payload_len and payload.
        pub out_client: Signal<Out, Bits<32>>,
        pub out_seq: Signal<Out, Bits<64>>,
        pub out_len: Signal<Out, Bits<8>>,
        pub out_payload: Signal<Out, Bits<P>>,
        pub out_mac: Signal<Out, Bits<48>>,
        pub out_ip: Signal<Out, Bits<32>>,
        pub out_port: Signal<Out, Bits<16>>,
        /// The request fields of the cycle before (what a push in this cycle stores): the
        /// request the core acts on now, for its NOT_LEADER reply.
        pub last_client: Signal<Out, Bits<32>>,
        pub last_seq: Signal<Out, Bits<64>>,
        pub last_mac: Signal<Out, Bits<48>>,
        pub last_ip: Signal<Out, Bits<32>>,
        pub last_port: Signal<Out, Bits<16>>,
        ram_client: RAM<Bits<32>, A>,
        ram_seq: RAM<Bits<64>, A>,
        ram_len: RAM<Bits<8>, A>,
        ram_payload: RAM<Bits<P>, A>,
        ram_mac: RAM<Bits<48>, A>,
        ram_ip: RAM<Bits<32>, A>,
        ram_port: RAM<Bits<16>, A>,
        wr: DFF<Bits<13>>,
        res: DFF<Bits<13>>,
        rd: DFF<Bits<13>>,
        count: DFF<Bits<13>>,
        r_nz: DFF<Bit>,
        r_room: DFF<Bit>,
        r_room_b: DFF<Bit>,
        valid: DFF<Bit>,
        /// The request fields, registered every cycle: a push writes the ones of the cycle before
        /// (the core decides on a request one cycle after it comes). A pushed entry can be read
        /// out no sooner than two edges after its push: reserved by a send in the next cycle at
        /// the earliest, then read from the cycle after that.
        w_client: DFF<Bits<32>>,
        w_seq: DFF<Bits<64>>,
        w_len: DFF<Bits<8>>,
        w_payload: DFF<Bits<P>>,
        w_mac: DFF<Bits<48>>,
        w_ip: DFF<Bits<32>>,
        w_port: DFF<Bits<16>>,
        res_next: Signal<Local, Bits<13>>,
        res_next1: Signal<Local, Bits<13>>,
        res_t: Signal<Local, Bits<13>>,
        res_t1: Signal<Local, Bits<13>>,
        res_b: Signal<Local, Bits<13>>,
        res_b1: Signal<Local, Bits<13>>,
        res_c: Signal<Local, Bits<13>>,
        res_c1: Signal<Local, Bits<13>>,
        res1: Signal<Local, Bits<13>>,
        cnt_t: Signal<Local, Bits<13>>,
        cnt_t1: Signal<Local, Bits<13>>,
        cnt_b: Signal<Local, Bits<13>>,
        cnt_b1: Signal<Local, Bits<13>>,
        cnt1: Signal<Local, Bits<13>>,
        wr1: Signal<Local, Bits<13>>,
        // `room` / `room_b`'s candidates: `count` and `count + 1` against `depth`, `depth +
        // bmax` (bd) and `depth + 2 bmax` (bbd) in 15 bits, and `count >= bmax` (a send takes
        // `bmax`, else every entry).
        zx_c: ZeroExtend<13, 15>,
        c1w: Signal<Local, Bits<15>>,
        zx_d: ZeroExtend<13, 15>,
        zx_b: ZeroExtend<13, 15>,
        s_bd: Signal<Local, Bits<15>>,
        s_bbd: Signal<Local, Bits<15>>,
        c_ge_b: Signal<Local, Bit>,
        l_c: Signal<Local, Bit>,
        l_c1: Signal<Local, Bit>,
        l_t: Signal<Local, Bit>,
        l_t1: Signal<Local, Bit>,
        b_c: Signal<Local, Bit>,
        b_c1: Signal<Local, Bit>,
        b_t: Signal<Local, Bit>,
        b_t1: Signal<Local, Bit>,
        d_nz: Signal<Local, Bit>,
        d_gt1: Signal<Local, Bit>,
        bd_nz: Signal<Local, Bit>,
        bd_gt1: Signal<Local, Bit>,
        waddr: Signal<Local, Bits<A>>,
        k0_13: Constant<Bits<13>> = Constant::new(0.into()),
        k1_13: Constant<Bits<13>> = Constant::new(1.into()),
        k1_15: Constant<Bits<15>> = Constant::new(1.into()),
        k_mask: Constant<Bits<13>> = Constant::new(((1u64 << A) - 1).into()),
    }
}

impl<const A: usize, const P: usize> Default for EgressFifo<A, P> {
    fn default() -> Self {
        assert!(A <= 12, "egress_fifo: at most 2^12 entries");
        assert!(
            P >= 64 && P.is_multiple_of(64) && P / 8 <= 255,
            "egress_fifo: payload width a multiple of 64 bits, at most 255 bytes"
        );
        Self::build()
    }
}

impl<const A: usize, const P: usize> Logic for EgressFifo<A, P> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, wr, res, rd, count, r_nz, r_room, r_room_b, valid, w_client, w_seq, w_len,
            w_payload, w_mac, w_ip, w_port
        );
        self.ram_client.write_clock.next = self.clock.val();
        self.ram_client.read_clock.next = self.clock.val();
        self.ram_seq.write_clock.next = self.clock.val();
        self.ram_seq.read_clock.next = self.clock.val();
        self.ram_len.write_clock.next = self.clock.val();
        self.ram_len.read_clock.next = self.clock.val();
        self.ram_payload.write_clock.next = self.clock.val();
        self.ram_payload.read_clock.next = self.clock.val();
        self.ram_mac.write_clock.next = self.clock.val();
        self.ram_mac.read_clock.next = self.clock.val();
        self.ram_ip.write_clock.next = self.clock.val();
        self.ram_ip.read_clock.next = self.clock.val();
        self.ram_port.write_clock.next = self.clock.val();
        self.ram_port.read_clock.next = self.clock.val();
        // What a send takes, `min(count, bmax)`: `bmax` if `count >= bmax`, else `count`. Every
        // sum with it is made for both beside the comparison, which selects, and `reserve`
        // selects last.
        self.c_ge_b.next = self.count.q.val() >= self.bmax.val();
        self.res_b.next = (self.res.q.val() + self.bmax.val()) & self.k_mask.val();
        self.res_b1.next =
            (self.res.q.val() + self.bmax.val() + self.k1_13.val()) & self.k_mask.val();
        self.res_c.next = (self.res.q.val() + self.count.q.val()) & self.k_mask.val();
        self.res_c1.next =
            (self.res.q.val() + self.count.q.val() + self.k1_13.val()) & self.k_mask.val();
        if self.c_ge_b.val() {
            self.res_t.next = self.res_b.val();
            self.res_t1.next = self.res_b1.val();
        } else {
            self.res_t.next = self.res_c.val();
            self.res_t1.next = self.res_c1.val();
        }
        self.res1.next = (self.res.q.val() + self.k1_13.val()) & self.k_mask.val();
        if self.reserve.val() {
            self.res_next.next = self.res_t.val();
            self.res_next1.next = self.res_t1.val();
        } else {
            self.res_next.next = self.res.q.val();
            self.res_next1.next = self.res1.val();
        }
        // Where this cycle's request goes if it is pushed (written whether or not it is).
        if self.clear.val() {
            self.waddr.next = self.res.q.val().get_bits::<A>(0);
        } else {
            self.waddr.next = self.wr.q.val().get_bits::<A>(0);
        }
        self.ram_client.write_address.next = self.waddr.val();
        self.ram_client.write_data.next = self.w_client.q.val();
        self.ram_client.write_enable.next = true;
        self.w_client.d.next = self.push_client.val();
        self.ram_seq.write_address.next = self.waddr.val();
        self.ram_seq.write_data.next = self.w_seq.q.val();
        self.ram_seq.write_enable.next = true;
        self.w_seq.d.next = self.push_seq.val();
        self.ram_len.write_address.next = self.waddr.val();
        self.ram_len.write_data.next = self.w_len.q.val();
        self.ram_len.write_enable.next = true;
        self.w_len.d.next = self.push_len.val();
        self.ram_payload.write_address.next = self.waddr.val();
        self.ram_payload.write_data.next = self.w_payload.q.val();
        self.ram_payload.write_enable.next = true;
        self.w_payload.d.next = self.push_payload.val();
        self.ram_mac.write_address.next = self.waddr.val();
        self.ram_mac.write_data.next = self.w_mac.q.val();
        self.ram_mac.write_enable.next = true;
        self.w_mac.d.next = self.push_mac.val();
        self.ram_ip.write_address.next = self.waddr.val();
        self.ram_ip.write_data.next = self.w_ip.q.val();
        self.ram_ip.write_enable.next = true;
        self.w_ip.d.next = self.push_ip.val();
        self.ram_port.write_address.next = self.waddr.val();
        self.ram_port.write_data.next = self.w_port.q.val();
        self.ram_port.write_enable.next = true;
        self.w_port.d.next = self.push_port.val();
        self.res.d.next = self.res_next.val();
        // `wr` moves to `waddr` (+ 1 with a push). Both candidates of `waddr + 1` are summed
        // beside `clear` and `push` (`push` comes late, from the core's event phase), so they
        // only select.
        self.wr1.next = (self.wr.q.val() + self.k1_13.val()) & self.k_mask.val();
        if self.clear.val() {
            if self.push.val() {
                self.wr.d.next = self.res_next1.val();
            } else {
                self.wr.d.next = self.res_next.val();
            }
        } else if self.push.val() {
            self.wr.d.next = self.wr1.val();
        } else {
            self.wr.d.next = self.wr.q.val();
        }
        // What a send leaves: `count - bmax`, or nothing when it takes every entry.
        self.cnt_b.next = self.count.q.val() - self.bmax.val();
        self.cnt_b1.next = self.count.q.val() - self.bmax.val() + self.k1_13.val();
        if self.c_ge_b.val() {
            self.cnt_t.next = self.cnt_b.val();
            self.cnt_t1.next = self.cnt_b1.val();
        } else {
            self.cnt_t.next = self.k0_13.val();
            self.cnt_t1.next = self.k1_13.val();
        }
        self.cnt1.next = self.count.q.val() + self.k1_13.val();
        if self.clear.val() {
            if self.push.val() {
                self.count.d.next = self.k1_13.val();
            } else {
                self.count.d.next = self.k0_13.val();
            }
        } else if self.push.val() {
            if self.reserve.val() {
                self.count.d.next = self.cnt_t1.val();
            } else {
                self.count.d.next = self.cnt1.val();
            }
        } else if self.reserve.val() {
            self.count.d.next = self.cnt_t.val();
        } else {
            self.count.d.next = self.count.q.val();
        }
        self.len.next = self.count.q.val();
        // `count`'s next value is not 0 after a push; after a send alone unless it took every
        // entry (`count <= bmax`); otherwise as before.
        if self.clear.val() {
            self.r_nz.d.next = self.push.val();
        } else if self.push.val() {
            self.r_nz.d.next = true;
        } else if self.reserve.val() {
            self.r_nz.d.next = self.count.q.val() > self.bmax.val();
        } else {
            self.r_nz.d.next = self.r_nz.q.val();
        }
        self.nz.next = self.r_nz.q.val();
        // `room` / `room_b` for each candidate of the next count, compared from registers only;
        // the cycle's clear, push and reserve pick, as they pick the count. After a send that
        // takes `bmax` (`count >= bmax`) the count is `count - bmax` (+ 1 with a push), below
        // `d` iff `count` (+ 1) is below `d + bmax`; after a send that takes every entry it is 0
        // (or 1).
        self.zx_c.narrow.next = self.count.q.val();
        self.zx_d.narrow.next = self.depth.val();
        self.c1w.next = self.zx_c.wide.val() + self.k1_15.val();
        self.zx_b.narrow.next = self.bmax.val();
        self.s_bd.next = self.zx_d.wide.val() + self.zx_b.wide.val();
        // `depth + 2 bmax` beside `depth + bmax`, not after it (two carry chains in series,
        // then the comparison, were `nc_core`'s longest path until 2026-12-07).
        self.s_bbd.next = self.zx_d.wide.val() + (self.zx_b.wide.val() << self.k1_15.val());
        self.d_nz.next = self.depth.val().any();
        self.d_gt1.next = self.depth.val() > self.k1_13.val();
        self.bd_nz.next = self.s_bd.val().any();
        self.bd_gt1.next = self.s_bd.val() > self.k1_15.val();
        self.l_c.next = self.zx_c.wide.val() < self.zx_d.wide.val();
        self.l_c1.next = self.c1w.val() < self.zx_d.wide.val();
        self.b_c.next = self.zx_c.wide.val() < self.s_bd.val();
        self.b_c1.next = self.c1w.val() < self.s_bd.val();
        if self.c_ge_b.val() {
            self.l_t.next = self.b_c.val();
            self.l_t1.next = self.b_c1.val();
            self.b_t.next = self.zx_c.wide.val() < self.s_bbd.val();
            self.b_t1.next = self.c1w.val() < self.s_bbd.val();
        } else {
            self.l_t.next = self.d_nz.val();
            self.l_t1.next = self.d_gt1.val();
            self.b_t.next = self.bd_nz.val();
            self.b_t1.next = self.bd_gt1.val();
        }
        if self.clear.val() {
            if self.push.val() {
                self.r_room.d.next = self.d_gt1.val();
                self.r_room_b.d.next = self.bd_gt1.val();
            } else {
                self.r_room.d.next = self.d_nz.val();
                self.r_room_b.d.next = self.bd_nz.val();
            }
        } else if self.push.val() {
            if self.reserve.val() {
                self.r_room.d.next = self.l_t1.val();
                self.r_room_b.d.next = self.b_t1.val();
            } else {
                self.r_room.d.next = self.l_c1.val();
                self.r_room_b.d.next = self.b_c1.val();
            }
        } else if self.reserve.val() {
            self.r_room.d.next = self.l_t.val();
            self.r_room_b.d.next = self.b_t.val();
        } else {
            self.r_room.d.next = self.l_c.val();
            self.r_room_b.d.next = self.b_c.val();
        }
        self.room.next = self.r_room.q.val();
        self.room_b.next = self.r_room_b.q.val();
        // Read-out of taken entries: the RAM read is registered, so data follow one cycle later.
        self.ram_client.read_address.next = self.rd.q.val().get_bits::<A>(0);
        self.ram_seq.read_address.next = self.rd.q.val().get_bits::<A>(0);
        self.ram_len.read_address.next = self.rd.q.val().get_bits::<A>(0);
        self.ram_payload.read_address.next = self.rd.q.val().get_bits::<A>(0);
        self.ram_mac.read_address.next = self.rd.q.val().get_bits::<A>(0);
        self.ram_ip.read_address.next = self.rd.q.val().get_bits::<A>(0);
        self.ram_port.read_address.next = self.rd.q.val().get_bits::<A>(0);
        self.valid.d.next = self.rd.q.val() != self.res.q.val();
        if self.rd.q.val() != self.res.q.val() {
            self.rd.d.next = (self.rd.q.val() + self.k1_13.val()) & self.k_mask.val();
        }
        self.out_valid.next = self.valid.q.val();
        self.out_client.next = self.ram_client.read_data.val();
        self.out_seq.next = self.ram_seq.read_data.val();
        self.out_len.next = self.ram_len.read_data.val();
        self.out_payload.next = self.ram_payload.read_data.val();
        self.out_mac.next = self.ram_mac.read_data.val();
        self.out_ip.next = self.ram_ip.read_data.val();
        self.out_port.next = self.ram_port.read_data.val();
        self.last_client.next = self.w_client.q.val();
        self.last_seq.next = self.w_seq.q.val();
        self.last_mac.next = self.w_mac.q.val();
        self.last_ip.next = self.w_ip.q.val();
        self.last_port.next = self.w_port.q.val();
    }
}
