//! `egress_fifo`: the leader's queue of client requests (rate limiting, §5.2).
//!
//! Three pointers over a RAM of `2^A` entries: `rd` (next entry to read out), `res` (entries
//! before it were taken by a send: decided, their OKs still to be sent) and `wr`. The logical
//! length `len = wr - res` is what the loop and the `fifo_depth` limit see; `reserve` moves `res`
//! forward by a send's batch; `clear` drops every entry not yet taken (a new epoch, a fault or a
//! reset). Taken entries stream out one per cycle on `out_*` (for the OK replies and the DECIDE
//! body), two cycles after the send that took them. The FIFO never stalls anything: whether a
//! request may be queued is decided by `lowi_core` against `fifo_depth` (drops are counted
//! there). `2^A` must be at least twice the largest `fifo_depth` used, so that taken entries
//! still being read out never collide with new ones.

use rust_hdl::prelude::*;

/// One queued request (the fields of a DECIDE entry the RTL keeps; payloads of up to
/// `lowi_core::MAX_PAYLOAD` bytes, left-aligned big-endian in `payload`).
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct ReqEntry {
    /// Payload bytes, first byte in bits 63..56.
    pub payload: Bits<64>,
    /// `payload_len` (0..=8).
    pub len: Bits<8>,
    /// `seq`.
    pub seq: Bits<64>,
    /// `client_id`.
    pub client: Bits<32>,
}

impl ReqEntry {
    /// An entry for a request.
    pub fn new(client_id: u32, seq: u64, payload: &[u8]) -> Self {
        let n = payload.len().min(8);
        let mut p = [0u8; 8];
        p[..n].copy_from_slice(&payload[..n]);
        ReqEntry {
            payload: u64::from_be_bytes(p).into(),
            len: (payload.len() as u64).into(),
            seq: seq.into(),
            client: (client_id as u64).into(),
        }
    }
    /// (client_id, seq, payload).
    pub fn fields(&self) -> (u32, u64, Vec<u8>) {
        let len = (self.len.index() as usize).min(8);
        let word = (self.payload.index() as u64).to_be_bytes();
        (
            self.client.index() as u32,
            self.seq.index() as u64,
            word[..len].to_vec(),
        )
    }
}

/// The FIFO (`A`: address bits of the RAM).
#[derive(LogicBlock)]
pub struct EgressFifo<const A: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Queue `push_data`.
    pub push: Signal<In, Bit>,
    /// The request.
    pub push_data: Signal<In, ReqEntry>,
    /// Requests taken by this cycle's send.
    pub reserve: Signal<In, Bits<13>>,
    /// Drop every request not taken (after this cycle's `reserve`, before its `push`).
    pub clear: Signal<In, Bit>,
    /// Logical length.
    pub len: Signal<Out, Bits<13>>,
    /// A taken request streams out this cycle.
    pub out_valid: Signal<Out, Bit>,
    /// It.
    pub out_data: Signal<Out, ReqEntry>,
    ram: RAM<ReqEntry, A>,
    wr: DFF<Bits<13>>,
    res: DFF<Bits<13>>,
    rd: DFF<Bits<13>>,
    count: DFF<Bits<13>>,
    valid: DFF<Bit>,
    res_next: Signal<Local, Bits<13>>,
    waddr: Signal<Local, Bits<13>>,
    k0_13: Constant<Bits<13>>,
    k1_13: Constant<Bits<13>>,
    k_mask: Constant<Bits<13>>,
}

impl<const A: usize> Default for EgressFifo<A> {
    fn default() -> Self {
        assert!(A <= 12, "egress_fifo: at most 2^12 entries");
        Self {
            clock: Default::default(),
            push: Default::default(),
            push_data: Default::default(),
            reserve: Default::default(),
            clear: Default::default(),
            len: Default::default(),
            out_valid: Default::default(),
            out_data: Default::default(),
            ram: Default::default(),
            wr: Default::default(),
            res: Default::default(),
            rd: Default::default(),
            count: Default::default(),
            valid: Default::default(),
            res_next: Default::default(),
            waddr: Default::default(),
            k0_13: Constant::new(0.into()),
            k1_13: Constant::new(1.into()),
            k_mask: Constant::new(((1u64 << A) - 1).into()),
        }
    }
}

impl<const A: usize> Logic for EgressFifo<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, wr, res, rd, count, valid);
        self.ram.write_clock.next = self.clock.val();
        self.ram.read_clock.next = self.clock.val();
        self.res_next.next = (self.res.q.val() + self.reserve.val()) & self.k_mask.val();
        if self.clear.val() {
            self.waddr.next = self.res_next.val();
        } else {
            self.waddr.next = self.wr.q.val();
        }
        self.ram.write_address.next = self.waddr.val().get_bits::<A>(0);
        self.ram.write_data.next = self.push_data.val();
        self.ram.write_enable.next = self.push.val();
        self.res.d.next = self.res_next.val();
        if self.push.val() {
            self.wr.d.next = (self.waddr.val() + self.k1_13.val()) & self.k_mask.val();
        } else {
            self.wr.d.next = self.waddr.val();
        }
        if self.clear.val() {
            if self.push.val() {
                self.count.d.next = self.k1_13.val();
            } else {
                self.count.d.next = self.k0_13.val();
            }
        } else if self.push.val() {
            self.count.d.next = self.count.q.val() - self.reserve.val() + self.k1_13.val();
        } else {
            self.count.d.next = self.count.q.val() - self.reserve.val();
        }
        self.len.next = self.count.q.val();
        // Read-out of taken entries: the RAM read is registered, so data follow one cycle later.
        self.ram.read_address.next = self.rd.q.val().get_bits::<A>(0);
        self.valid.d.next = self.rd.q.val() != self.res.q.val();
        if self.rd.q.val() != self.res.q.val() {
            self.rd.d.next = (self.rd.q.val() + self.k1_13.val()) & self.k_mask.val();
        }
        self.out_valid.next = self.valid.q.val();
        self.out_data.next = self.ram.read_data.val();
    }
}
