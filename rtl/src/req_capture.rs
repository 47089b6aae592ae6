//! `req_capture`: the first 128 payload bytes of the REQUEST on a client-port stream (issue 17:
//! a Redis SET with a 64-byte value is a ~100-byte payload), beside `pkt_parser`, which keeps
//! only the first 78 frame bytes (8 payload bytes).
//!
//! It watches the same 64-bit stream (`s_data`, `s_valid`, `s_last`; frame byte `x` in beat
//! `x / 8`, lane `x % 8`) and keeps frame bytes 70..198 as they pass: the payload starts at
//! frame byte 70 (`Layout::probe().e_payload`: beat 8, lane 6), so beat 8 brings payload bytes
//! 0..2, beats 9..23 bytes 2..122 (one 64-bit lane each) and beat 24 bytes 122..128. A frame's
//! first beat clears them, so the bytes past a shorter frame are 0. `payload` (byte 0 in bits
//! 1023..1016, as `nc_core`'s `cl_payload`) holds the last frame's bytes from the cycle after
//! its last beat — the cycle `pkt_parser` gives its verdict — until the next frame's first beat
//! has passed (through its cycle, so a frame right behind does not disturb it). It judges
//! nothing: which bytes are the payload (`req_len`), and whether the frame was a valid REQUEST
//! at all, is `pkt_parser`'s verdict.
//!
//! `nc_engine` feeds it its client stream and gives the captured bytes to its core's `cl_payload`
//! (issue 17; before, the engine's core stored the parser's 8 bytes).

use rust_hdl::prelude::*;

use crate::layout::Layout;
use crate::prim::{LaneWrite, ReqPayload};

/// Payload bytes kept.
pub const KEPT: usize = 128;
/// Beat that brings payload bytes 0 and 1 (lanes 6 and 7).
const FIRST_BEAT: u64 = 8;

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(Bits::<N>::from(v))
}

block! {
    /// The block.
    pub struct ReqCapture() {
        pub clock: Signal<In, Clock>,
        pub s_data: Signal<In, Bits<64>>,
        pub s_valid: Signal<In, Bit>,
        pub s_last: Signal<In, Bit>,
        /// The last frame's payload bytes 0..128 (frame bytes 70..198), byte 0 in bits 1023..1016.
        pub payload: Signal<Out, Bits<1024>>,
        beat: DFF<Bits<16>>,
        /// This beat is a frame's first / beat 8 / one of beats 9..23 / beat 24.
        at_0: DFFWithInit<Bit> = DFFWithInit::new(true),
        at_a: DFF<Bit>,
        at_b: DFF<Bit>,
        at_c: DFF<Bit>,
        /// Beats 9..23: the lane of `b` this beat goes into (beat − 9; registered from the
        /// beat before, so no comparison of the counter precedes the 960 write enables).
        lane: DFF<Bits<5>>,
        a: DFF<Bits<16>>,
        b: DFF<Bits<960>>,
        c: DFF<Bits<48>>,
        b_w: LaneWrite<960>,
        order: ReqPayload,
        k0_16: Constant<Bits<16>> = k(0),
        k1_16: Constant<Bits<16>> = k(1),
        k_beat_a: Constant<Bits<16>> = k(FIRST_BEAT),
        k_beat_c: Constant<Bits<16>> = k(FIRST_BEAT + 16),
        /// Beat x − 1's lane number + 1 = beat x − 9 (a lane is registered a beat ahead).
        k_lane1: Constant<Bits<5>> = k(FIRST_BEAT),
        k0_960: Constant<Bits<960>> = Constant::new(Bits::<960>::default()),
        k0_48: Constant<Bits<48>> = k(0),
    }
}

impl Default for ReqCapture {
    fn default() -> Self {
        let l = Layout::probe();
        assert_eq!(
            l.e_payload.off,
            8 * FIRST_BEAT as usize + 6,
            "req_capture: the REQUEST payload moved"
        );
        Self::build()
    }
}

impl Logic for ReqCapture {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, beat, at_0, at_a, at_b, at_c, lane, a, b, c);
        // Beat counter (0 = a frame's first beat) and the flags for its next value, compared
        // on the counter itself (beat x follows beat x − 1) so that no adder precedes them.
        if self.s_valid.val() {
            if self.s_last.val() {
                self.beat.d.next = self.k0_16.val();
                self.at_0.d.next = true;
                self.at_a.d.next = false;
                self.at_b.d.next = false;
                self.at_c.d.next = false;
            } else {
                self.beat.d.next = self.beat.q.val() + self.k1_16.val();
                self.at_0.d.next = false;
                self.at_a.d.next = self.beat.q.val() == self.k_beat_a.val() - self.k1_16.val();
                self.at_b.d.next = (self.beat.q.val() >= self.k_beat_a.val())
                    && (self.beat.q.val() < self.k_beat_c.val() - self.k1_16.val());
                self.at_c.d.next = self.beat.q.val() == self.k_beat_c.val() - self.k1_16.val();
                self.lane.d.next = self.beat.q.val().get_bits::<5>(0) - self.k_lane1.val();
            }
        }
        // Beats 9..23 into their lanes of `b`.
        self.b_w.inp.next = self.b.q.val();
        self.b_w.lane.next = self.lane.q.val();
        self.b_w.data.next = self.s_data.val();
        if self.s_valid.val() {
            if self.at_0.q.val() {
                self.a.d.next = self.k0_16.val();
                self.b.d.next = self.k0_960.val();
                self.c.d.next = self.k0_48.val();
            }
            if self.at_a.q.val() {
                self.a.d.next = self.s_data.val().get_bits::<16>(48);
            }
            if self.at_b.q.val() {
                self.b.d.next = self.b_w.out.val();
            }
            if self.at_c.q.val() {
                self.c.d.next = self.s_data.val().get_bits::<48>(0);
            }
        }
        self.order.a.next = self.a.q.val();
        self.order.b.next = self.b.q.val();
        self.order.c.next = self.c.q.val();
        self.payload.next = self.order.out.val();
    }
}
