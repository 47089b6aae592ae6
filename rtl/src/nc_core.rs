//! `nc_core`: `lowi_core`, `egress_fifo` and `csr` wired together, with the packet interfaces
//! at the level of parsed fields (what a packet parser extracts from a frame, what a packet
//! generator needs to build one). See `rtl/README.md` for what this covers.

use rust_hdl::prelude::*;

use crate::csr::{Cfg, Csr};
use crate::egress_fifo::EgressFifo;
use crate::lowi_core::{CLASS_BITS, LowiCore, STATE_BITS};
use crate::prim::ZeroExtend;
use crate::rsbcast_rx::RsbcastRx;

/// Address bits of the egress FIFO RAM (64 entries: `fifo_depth` up to 32 is covered).
pub const FIFO_ADDR_BITS: usize = 6;

// The caps `lowi_core` is built with are the FIFO's payload widths.
const _: () = assert!(PAYLOAD_BITS / 8 == crate::lowi_core::MAX_PAYLOAD as usize);
const _: () = assert!(ENGINE_PAYLOAD_BITS / 8 == crate::lowi_core::ENGINE_MAX_PAYLOAD as usize);

// `r_bmax` holds `min(batch_max, SLOTS)` in four bits.
const _: () = assert!(crate::pkt_gen::SLOTS < 16);

/// Payload width of the exported `nc_core` (bits): requests of up to 128 payload bytes
/// ([`crate::lowi_core::MAX_PAYLOAD`]).
pub const PAYLOAD_BITS: usize = 1024;

/// Payload width of `nc_engine`'s core (bits): its client port keeps and its DECIDE generator
/// streams 128 payload bytes per request ([`crate::lowi_core::ENGINE_MAX_PAYLOAD`]; 64 bits
/// before issue 17).
pub const ENGINE_PAYLOAD_BITS: usize = 1024;

block! {
    /// The core. `P`: the request payload width in bits; requests with more than `P / 8` payload
    /// bytes count as oversize (`lowi_core`), the others are stored whole in the egress FIFO.
    pub struct NcCore<const P: usize = PAYLOAD_BITS>() {
        pub clock: Signal<In, Clock>,
        /// CSR bus: byte address.
        pub csr_addr: Signal<In, Bits<16>>,
        /// CSR bus: write data.
        pub csr_wdata: Signal<In, Bits<32>>,
        /// CSR bus: write strobe.
        pub csr_write: Signal<In, Bit>,
        /// CSR bus: read data.
        pub csr_rdata: Signal<Out, Bits<32>>,
        pub rx_valid: Signal<In, Bit>,
        pub rx_port: Signal<In, Bits<2>>,
        /// `lowi_core::class`.
        pub rx_class: Signal<In, Bits<CLASS_BITS>>,
        pub rx_sender: Signal<In, Bits<8>>,
        pub rx_epoch: Signal<In, Bits<32>>,
        pub rx_seq: Signal<In, Bits<32>>,
        pub rx_tree: Signal<In, Bits<8>>,
        pub rx_kind: Signal<In, Bits<2>>,
        pub rx_instance: Signal<In, Bits<64>>,
        pub cl_valid: Signal<In, Bit>,
        /// `lowi_core::class`.
        pub cl_class: Signal<In, Bits<CLASS_BITS>>,
        pub cl_len: Signal<In, Bits<16>>,
        pub cl_client: Signal<In, Bits<32>>,
        pub cl_seq: Signal<In, Bits<64>>,
        /// The request's payload bytes, first byte in bits P-1..P-8 (bytes past `cl_len` are
        /// stored but never used).
        pub cl_payload: Signal<In, Bits<P>>,
        /// Output drops of the frame generators (counted in `replies_dropped` / `host_dropped`).
        pub drop_reply_ok: Signal<In, Bit>,
        pub drop_reply_nl: Signal<In, Bit>,
        pub drop_host: Signal<In, Bit>,
        /// The DECIDE generator cannot take a send this cycle (the loop waits).
        pub tx_hold: Signal<In, Bit>,
        /// Request: the client's MAC address (source of its request frame).
        pub cl_mac: Signal<In, Bits<48>>,
        /// Request: its IPv4 address.
        pub cl_ip: Signal<In, Bits<32>>,
        /// Request: its UDP port.
        pub cl_port: Signal<In, Bits<16>>,
        pub send: Signal<Out, Bit>,
        pub send_kind: Signal<Out, Bits<2>>,
        pub send_count: Signal<Out, Bits<8>>,
        pub send_instance: Signal<Out, Bits<64>>,
        pub send_epoch: Signal<Out, Bits<32>>,
        pub send_seq: Signal<Out, Bits<32>>,
        pub lead_deliver: Signal<Out, Bit>,
        pub rx_deliver: Signal<Out, Bit>,
        /// The tree port of the copy the core acts on this cycle (the one that came on `rx_*` in
        /// the cycle before): with `rx_deliver`, the copy that completed the message.
        pub rx_deliver_port: Signal<Out, Bits<2>>,
        pub tick_leader_changed: Signal<Out, Bit>,
        pub tick_epoch: Signal<Out, Bits<32>>,
        pub tick_leader: Signal<Out, Bits<8>>,
        pub rx_leader_changed: Signal<Out, Bit>,
        pub tick_fault: Signal<Out, Bit>,
        pub tick_fault_code: Signal<Out, Bits<3>>,
        pub tick_fault_missing: Signal<Out, Bits<4>>,
        pub rx_fault: Signal<Out, Bit>,
        pub rx_fault_code: Signal<Out, Bits<3>>,
        pub state_mode: Signal<Out, Bit>,
        pub mode_state: Signal<Out, Bits<STATE_BITS>>,
        pub state_start: Signal<Out, Bit>,
        pub state_rx_active: Signal<Out, Bit>,
        pub viol_stale: Signal<Out, Bit>,
        pub viol_deposed: Signal<Out, Bit>,
        pub nl_reply: Signal<Out, Bit>,
        pub nl_leader: Signal<Out, Bits<8>>,
        pub nl_epoch: Signal<Out, Bits<32>>,
        /// The request `nl_reply` answers (the one that came on `cl_*` in the cycle before):
        /// its client, seq and where it came from.
        pub nl_client: Signal<Out, Bits<32>>,
        pub nl_seq: Signal<Out, Bits<64>>,
        pub nl_mac: Signal<Out, Bits<48>>,
        pub nl_ip: Signal<Out, Bits<32>>,
        pub nl_port: Signal<Out, Bits<16>>,
        pub state: Signal<Out, Bits<STATE_BITS>>,
        pub status: Signal<Out, Bits<32>>,
        pub epoch: Signal<Out, Bits<32>>,
        pub leader: Signal<Out, Bits<8>>,
        pub last_instance: Signal<Out, Bits<64>>,
        pub ok_valid: Signal<Out, Bit>,
        pub ok_client: Signal<Out, Bits<32>>,
        pub ok_seq: Signal<Out, Bits<64>>,
        pub ok_instance: Signal<Out, Bits<64>>,
        pub ok_index: Signal<Out, Bits<8>>,
        /// The entry's payload bytes (`ok_len` of them), first byte in bits P-1..P-8.
        pub ok_payload: Signal<Out, Bits<P>>,
        pub ok_len: Signal<Out, Bits<8>>,
        /// OK reply: the client's MAC address (source of its request frame).
        pub ok_mac: Signal<Out, Bits<48>>,
        /// OK reply: its IPv4 address.
        pub ok_ip: Signal<Out, Bits<32>>,
        /// OK reply: its UDP port.
        pub ok_port: Signal<Out, Bits<16>>,
        /// The configuration registers (for the packet parser and generator).
        /// The configuration registers' values.
        pub cfg: Signal<Out, Cfg>,
        core: LowiCore = LowiCore::new((P / 8) as u64),
        rx: RsbcastRx,
        fifo: EgressFifo<FIFO_ADDR_BITS, P>,
        k_slots: Constant<Bits<13>> = Constant::new(Bits::<13>::from(crate::pkt_gen::SLOTS as u64)),
        /// `min(batch_max, SLOTS)`, registered: `batch_max` changes only while Disabled, and the
        /// core reads it only while leading (see `update`). Four bits hold SLOTS (8).
        r_bmax: DFF<Bits<4>>,
        bmax13: ZeroExtend<4, 13>,
        regs: Csr,
        // OK replies: the batches whose entries are still streaming out of the FIFO (their counts
        // oldest first, their instances in a ring), and the index within the oldest.
        rec_n: DFF<Bits<3>>,
        /// The records' instances in a ring of four (`rec_rp` the oldest, `rec_wp` the next free
        /// one): a batch's instance is written once, into its own entry, and a pop moves only
        /// the read pointer. Shifted on every pop as the counts are, the 4 × 64 flip-flops each
        /// had the pop and the staged batch's slot in front of them (`880373a` routed: 11.07 ns
        /// from `r_last`).
        rec_wp: DFF<Bits<2>>,
        rec_rp: DFF<Bits<2>>,
        rec_inst0: DFF<Bits<64>>,
        rec_inst1: DFF<Bits<64>>,
        rec_inst2: DFF<Bits<64>>,
        rec_inst3: DFF<Bits<64>>,
        rec_cnt0: DFF<Bits<8>>,
        rec_cnt1: DFF<Bits<8>>,
        rec_cnt2: DFF<Bits<8>>,
        rec_cnt3: DFF<Bits<8>>,
        ok_idx: DFF<Bits<8>>,
        /// The batch the leader sent (`lead_deliver`, its instance and count), registered: it
        /// joins the records a cycle later, which is still before its first entry leaves the
        /// FIFO (two cycles after the send's `reserve`), and the send decision drives one
        /// flip-flop's enable instead of every record's.
        st_v: DFF<Bit>,
        st_inst: DFF<Bits<64>>,
        st_cnt: DFF<Bits<8>>,
        /// `ok_idx + 1 == rec_cnt0`, kept beside them (from their next values): the entry the
        /// FIFO hands out now is the last of the oldest batch. Its next value is compared for
        /// every pair of next index and next count beside the registers (`e_*`), and the pop,
        /// the FIFO's valid and the staged batch only pick.
        r_last: DFF<Bit>,
        i1: Signal<Local, Bits<8>>,
        i2: Signal<Local, Bits<8>>,
        e_a0: Signal<Local, Bit>,
        e_as: Signal<Local, Bit>,
        e_b0: Signal<Local, Bit>,
        e_bs: Signal<Local, Bit>,
        e_c1: Signal<Local, Bit>,
        e_cs: Signal<Local, Bit>,
        st_first: Signal<Local, Bit>,
        st_second: Signal<Local, Bit>,
        n_idx: Signal<Local, Bits<8>>,
        n_cnt0: Signal<Local, Bits<8>>,
        pop: Signal<Local, Bit>,
        slot: Signal<Local, Bits<3>>,
        k0_3: Constant<Bits<3>> = Constant::new(0.into()),
        k1_3: Constant<Bits<3>> = Constant::new(1.into()),
        k2_3: Constant<Bits<3>> = Constant::new(2.into()),
        k1_2: Constant<Bits<2>> = Constant::new(1.into()),
        k0_8: Constant<Bits<8>> = Constant::new(0.into()),
        k1_8: Constant<Bits<8>> = Constant::new(1.into()),
        k2_8: Constant<Bits<8>> = Constant::new(2.into()),
    }
}

impl<const P: usize> Default for NcCore<P> {
    fn default() -> Self {
        Self::build()
    }
}

impl<const P: usize> Logic for NcCore<P> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, core, rx, fifo, regs);
        dff_setup!(
            self, clock, r_bmax, rec_n, rec_wp, rec_rp, rec_inst0, rec_inst1, rec_inst2, rec_inst3,
            rec_cnt0, rec_cnt1, rec_cnt2, rec_cnt3, ok_idx, st_v, st_inst, st_cnt, r_last
        );
        // CSR bus and configuration.
        self.regs.bus_addr.next = self.csr_addr.val();
        self.regs.bus_wdata.next = self.csr_wdata.val();
        self.regs.bus_write.next = self.csr_write.val();
        self.csr_rdata.next = self.regs.bus_rdata.val();
        self.core.node_id.next = self.regs.cfg.val().node_id.get_bits::<8>(0);
        self.core.node_count.next = self.regs.cfg.val().node_count.get_bits::<8>(0);
        self.core.trees.next = self.regs.cfg.val().trees.get_bits::<8>(0);
        self.core.loop_period.next = self.regs.cfg.val().loop_period;
        self.core.min_gap.next = self.regs.cfg.val().min_gap;
        self.core.timeout.next = self.regs.cfg.val().timeout;
        self.rx.trees.next = self.regs.cfg.val().trees.get_bits::<3>(0);
        self.rx.window.next = self.regs.window.val();
        // The receiver judges the copy the core acts on (the one that came in the cycle before).
        self.rx.copy_tree.next = self.core.ev_port.val();
        // ... and judges the copy that comes now against every state it can meet then.
        self.rx.lock_take.next = self.core.lock_take.val();
        self.rx.lock_kept.next = self.core.lock_kept.val();
        self.rx.in_tree.next = self.rx_port.val();
        self.rx.in_seq.next = self.rx_seq.val();
        self.rx.apply.next = self.core.rx_apply.val();
        self.rx.restart.next = self.core.rx_restart.val();
        self.rx.restart_base.next = self.core.rx_restart_base.val();
        self.core.rx_seq.next = self.rx_seq.val();
        self.core.timeout_written.next = self.regs.timeout_written.val();
        self.core.rx_expired.next = self.rx.expired.val();
        self.core.rx_missing.next = self.rx.missing.val();
        self.core.rx_busy.next = self.rx.busy.val();
        self.core.rx_outcome.next = self.rx.outcome.val();
        self.core.rx_outcome_fresh.next = self.rx.outcome_fresh.val();
        // A batch is at most what pkt_gen's frame holds (`pkt_gen::SLOTS`): with a larger
        // `batch_max` the leader decides smaller batches rather than a frame it cannot build.
        // The capped value is a register (no comparison in front of the batch size): a
        // `batch_max` write (only while Disabled) reaches it two edges later, and the core uses
        // it only while it leads (sends, and the room a send leaves), which is at least two
        // edges after the write: the CTRL write that leaves Disabled comes in a later cycle.
        if self.regs.cfg.val().batch_max.get_bits::<13>(0) > self.k_slots.val() {
            self.r_bmax.d.next = self.k_slots.val().get_bits::<4>(0);
        } else {
            self.r_bmax.d.next = self.regs.cfg.val().batch_max.get_bits::<4>(0);
        }
        self.bmax13.narrow.next = self.r_bmax.q.val();
        self.core.batch_max.next = self.bmax13.wide.val();
        self.core.fifo_depth.next = self.regs.cfg.val().fifo_depth.get_bits::<13>(0);
        self.core.mtu.next = self.regs.cfg.val().mtu.get_bits::<16>(0);
        self.core.ctrl_write.next = self.regs.ctrl_write.val();
        self.core.ctrl_value.next = self.regs.ctrl_value.val();
        self.cfg.next = self.regs.cfg.val();
        self.regs.state.next = self.core.state.val();
        self.regs.status.next = self.core.status.val();
        self.regs.epoch.next = self.core.epoch.val();
        self.regs.leader.next = self.core.leader.val();
        self.regs.last_instance.next = self.core.last_instance.val();
        self.regs.clear_counters.next = self.core.clear_counters.val();
        self.regs.tick_net_fault.next = self.core.tick_net_fault.val();
        self.regs.tick_timeout.next = self.core.tick_timeout.val();
        self.regs.tick_sent_value.next = self.core.tick_sent_value.val();
        self.regs.tick_sent_hb.next = self.core.tick_sent_hb.val();
        self.regs.ev_foreign.next = self.core.ev_foreign.val();
        self.regs.ev_malformed.next = self.core.ev_malformed.val();
        self.regs.ev_unauthorized.next = self.core.ev_unauthorized.val();
        self.regs.ev_ignored.next = self.core.ev_ignored.val();
        self.regs.drop_reply_ok.next = self.drop_reply_ok.val();
        self.regs.drop_reply_nl.next = self.drop_reply_nl.val();
        self.regs.drop_host.next = self.drop_host.val();
        self.regs.ev_stale.next = self.core.ev_stale.val();
        self.regs.ev_duplicate.next = self.core.ev_duplicate.val();
        self.regs.ev_net_fault.next = self.core.ev_net_fault.val();
        self.regs.ev_delivered.next = self.core.ev_delivered.val();
        self.regs.ev_accepted.next = self.core.ev_accepted.val();
        self.regs.ev_not_leader.next = self.core.ev_not_leader.val();
        self.regs.ev_sent_hb.next = self.core.ev_sent_hb.val();
        self.regs.ev_oversize.next = self.core.ev_oversize.val();
        self.regs.tick_dropped.next = self.core.tick_dropped.val();
        self.regs.ev_dropped.next = self.core.ev_dropped.val();
        self.core.rx_valid.next = self.rx_valid.val();
        self.core.rx_port.next = self.rx_port.val();
        self.core.rx_class.next = self.rx_class.val();
        self.core.rx_sender.next = self.rx_sender.val();
        self.core.rx_epoch.next = self.rx_epoch.val();
        self.core.rx_tree.next = self.rx_tree.val();
        self.core.rx_kind.next = self.rx_kind.val();
        self.core.rx_instance.next = self.rx_instance.val();
        self.core.cl_valid.next = self.cl_valid.val();
        self.core.cl_class.next = self.cl_class.val();
        self.core.cl_len.next = self.cl_len.val();
        self.send.next = self.core.send.val();
        self.send_kind.next = self.core.send_kind.val();
        self.send_count.next = self.core.send_count.val();
        self.send_instance.next = self.core.send_instance.val();
        self.send_epoch.next = self.core.send_epoch.val();
        self.send_seq.next = self.core.send_seq.val();
        self.lead_deliver.next = self.core.lead_deliver.val();
        self.rx_deliver.next = self.core.rx_deliver.val();
        self.rx_deliver_port.next = self.core.ev_port.val();
        self.tick_leader_changed.next = self.core.tick_leader_changed.val();
        self.tick_epoch.next = self.core.tick_epoch.val();
        self.tick_leader.next = self.core.tick_leader.val();
        self.rx_leader_changed.next = self.core.rx_leader_changed.val();
        self.tick_fault.next = self.core.tick_fault.val();
        self.tick_fault_code.next = self.core.tick_fault_code.val();
        self.tick_fault_missing.next = self.core.tick_fault_missing.val();
        self.rx_fault.next = self.core.rx_fault.val();
        self.rx_fault_code.next = self.core.rx_fault_code.val();
        self.state_mode.next = self.core.state_mode.val();
        self.mode_state.next = self.core.mode_state.val();
        self.state_start.next = self.core.state_start.val();
        self.state_rx_active.next = self.core.state_rx_active.val();
        self.viol_stale.next = self.core.viol_stale.val();
        self.viol_deposed.next = self.core.viol_deposed.val();
        self.nl_reply.next = self.core.nl_reply.val();
        self.nl_leader.next = self.core.nl_leader.val();
        self.nl_epoch.next = self.core.nl_epoch.val();
        self.nl_client.next = self.fifo.last_client.val();
        self.nl_seq.next = self.fifo.last_seq.val();
        self.nl_mac.next = self.fifo.last_mac.val();
        self.nl_ip.next = self.fifo.last_ip.val();
        self.nl_port.next = self.fifo.last_port.val();
        self.state.next = self.core.state.val();
        self.status.next = self.core.status.val();
        self.epoch.next = self.core.epoch.val();
        self.leader.next = self.core.leader.val();
        self.last_instance.next = self.core.last_instance.val();
        // Egress FIFO.
        self.core.fifo_len.next = self.fifo.len.val();
        self.core.fifo_nz.next = self.fifo.nz.val();
        self.core.fifo_room.next = self.fifo.room.val();
        self.core.fifo_room_b.next = self.fifo.room_b.val();
        // The FIFO's `room` / `room_b` are judged against the core's `fifo_depth` and
        // `batch_max` (a register, above): `room_b` follows a `batch_max` write three edges
        // later, and is read only for a value send, which needs a request pushed, at least a
        // cycle after the core led (rtl/README "Step 6").
        self.fifo.depth.next = self.regs.cfg.val().fifo_depth.get_bits::<13>(0);
        self.fifo.bmax.next = self.bmax13.wide.val();
        self.core.tx_hold.next = self.tx_hold.val();
        self.fifo.push.next = self.core.fifo_push.val();
        self.fifo.clear.next = self.core.fifo_clear.val();
        self.fifo.reserve.next = self.core.fifo_take_now.val();
        // The request's fields as it comes; the core pushes it (or not) in the next cycle.
        self.fifo.push_payload.next = self.cl_payload.val();
        self.fifo.push_len.next = self.cl_len.val().get_bits::<8>(0);
        self.fifo.push_seq.next = self.cl_seq.val();
        self.fifo.push_client.next = self.cl_client.val();
        self.fifo.push_mac.next = self.cl_mac.val();
        self.fifo.push_ip.next = self.cl_ip.val();
        self.fifo.push_port.next = self.cl_port.val();
        // OK replies: the taken entries stream out of the FIFO in order; each belongs to the
        // oldest batch record, whose count says when to move on to the next.
        self.pop.next = self.fifo.out_valid.val() && self.r_last.q.val();
        self.i1.next = self.ok_idx.q.val() + self.k1_8.val();
        self.i2.next = self.ok_idx.q.val() + self.k2_8.val();
        self.n_idx.next = self.ok_idx.q.val();
        if self.fifo.out_valid.val() {
            if self.pop.val() {
                self.n_idx.next = self.k0_8.val();
            } else {
                self.n_idx.next = self.i1.val();
            }
        }
        self.ok_idx.d.next = self.n_idx.val();
        self.n_cnt0.next = self.rec_cnt0.q.val();
        if self.pop.val() {
            self.rec_rp.d.next = self.rec_rp.q.val() + self.k1_2.val();
            self.n_cnt0.next = self.rec_cnt1.q.val();
            self.rec_cnt1.d.next = self.rec_cnt2.q.val();
            self.rec_cnt2.d.next = self.rec_cnt3.q.val();
            self.slot.next = self.rec_n.q.val() - self.k1_3.val();
        } else {
            self.slot.next = self.rec_n.q.val();
        }
        self.st_v.d.next = self.core.lead_deliver.val();
        self.st_inst.d.next = self.core.send_instance.val();
        self.st_cnt.d.next = self.core.send_count.val();
        if self.st_v.q.val() {
            if self.slot.val() == self.k0_3.val() {
                self.n_cnt0.next = self.st_cnt.q.val();
            } else if self.slot.val() == self.k1_3.val() {
                self.rec_cnt1.d.next = self.st_cnt.q.val();
            } else if self.slot.val() == self.k2_3.val() {
                self.rec_cnt2.d.next = self.st_cnt.q.val();
            } else {
                self.rec_cnt3.d.next = self.st_cnt.q.val();
            }
            // The instance into the ring's next free entry (registers only in front of it).
            match self.rec_wp.q.val().index() {
                0 => self.rec_inst0.d.next = self.st_inst.q.val(),
                1 => self.rec_inst1.d.next = self.st_inst.q.val(),
                2 => self.rec_inst2.d.next = self.st_inst.q.val(),
                _ => self.rec_inst3.d.next = self.st_inst.q.val(),
            }
            self.rec_wp.d.next = self.rec_wp.q.val() + self.k1_2.val();
            self.rec_n.d.next = self.slot.val() + self.k1_3.val();
        } else {
            self.rec_n.d.next = self.slot.val();
        }
        self.rec_cnt0.d.next = self.n_cnt0.val();
        // `n_idx + 1 == n_cnt0`: the index after a pop is 0, after another entry `ok_idx + 1`,
        // else `ok_idx`; the count is the staged batch's when it lands in slot 0 (`rec_n` 1
        // with a pop, 0 without), else `rec_cnt1` after a pop, else `rec_cnt0`.
        self.e_a0.next = self.i1.val() == self.rec_cnt0.q.val();
        self.e_as.next = self.i1.val() == self.st_cnt.q.val();
        self.e_b0.next = self.i2.val() == self.rec_cnt0.q.val();
        self.e_bs.next = self.i2.val() == self.st_cnt.q.val();
        self.e_c1.next = self.rec_cnt1.q.val() == self.k1_8.val();
        self.e_cs.next = self.st_cnt.q.val() == self.k1_8.val();
        self.st_first.next = self.st_v.q.val() && (self.rec_n.q.val() == self.k0_3.val());
        self.st_second.next = self.st_v.q.val() && (self.rec_n.q.val() == self.k1_3.val());
        if self.pop.val() {
            if self.st_second.val() {
                self.r_last.d.next = self.e_cs.val();
            } else {
                self.r_last.d.next = self.e_c1.val();
            }
        } else if self.fifo.out_valid.val() {
            if self.st_first.val() {
                self.r_last.d.next = self.e_bs.val();
            } else {
                self.r_last.d.next = self.e_b0.val();
            }
        } else if self.st_first.val() {
            self.r_last.d.next = self.e_as.val();
        } else {
            self.r_last.d.next = self.e_a0.val();
        }
        self.ok_valid.next = self.fifo.out_valid.val();
        self.ok_client.next = self.fifo.out_client.val();
        self.ok_seq.next = self.fifo.out_seq.val();
        self.ok_payload.next = self.fifo.out_payload.val();
        self.ok_len.next = self.fifo.out_len.val();
        self.ok_mac.next = self.fifo.out_mac.val();
        self.ok_ip.next = self.fifo.out_ip.val();
        self.ok_port.next = self.fifo.out_port.val();
        match self.rec_rp.q.val().index() {
            0 => self.ok_instance.next = self.rec_inst0.q.val(),
            1 => self.ok_instance.next = self.rec_inst1.q.val(),
            2 => self.ok_instance.next = self.rec_inst2.q.val(),
            _ => self.ok_instance.next = self.rec_inst3.q.val(),
        }
        self.ok_index.next = self.ok_idx.q.val();
    }
}
