//! `nc_engine`: the node on streams: one 64-bit stream in per tree (up to four) and one for
//! the client port, each through its own `pkt_parser`, into `nc_core`; one 64-bit stream out
//! per tree from `pkt_gen` (the DECIDE copies), the host port from `host_gen`, the client
//! replies from `reply_gen`; the CSR bus; and `nc_core`'s action outputs with the record of the
//! frame the core took this cycle (`ev_*`: its fields and the sender's addresses; see
//! rtl/README.md). Requests carry up to 128 payload bytes (issue 17): `req_capture` keeps them
//! beside the client port's parser, the core's FIFO stores them, `pkt_gen` streams them into the
//! DECIDE frames and `host_gen` forwards the decided frames from its capture RAMs.
//!
//! Every output stream has a `ready` input (AXI-Stream; issue 17 item 2): the MAC may pause it.
//! The tree and host streams go through an output FIFO each (`out_fifo`: 256 and 512 beats;
//! an empty FIFO passes a beat through in the cycle it comes), and `pkt_gen` / `host_gen` start a frame only when their FIFOs have
//! room for the longest one, so a frame never stalls once started and leaves without a gap
//! unless the MAC pauses it. A paused tree holds the loop (`pkt_gen` not ready: the send
//! waits, as at a loop period shorter than a frame); a paused host stream makes decisions wait
//! in `host_gen`'s pending slot, then counts them in `host_dropped`; a paused client stream
//! fills `reply_gen`'s queue, then counts replies in `replies_dropped`. Tie every `ready` high
//! where the receivers take a beat every cycle.
//!
//! The core takes at most one event per cycle, from one event register (`e`): a CSR write on
//! the bus first (the registered event then waits a cycle), else the register's event. The
//! register takes the next event when it is free: a verdict waiting in a port's one-deep holding
//! register (the client port, then trees 0..3), else a verdict a parser gives in this cycle (same
//! order); the verdicts not taken wait in their holding registers. Which of them it takes is
//! decided a cycle early into `e_sel` (from the holding registers' next values and the
//! parsers' `ends`), so in its cycle the pick is one registered select gated by whether the
//! register is free (rtl/README "Step 16"). So an event reaches the core
//! in the cycle after its parser's verdict, as when the core read the holding registers through
//! the arbitration, and the core's judge stage reads a register. A client event's 128 payload
//! bytes never go from `req_capture` into the event register in one cycle: they are always
//! taken from the client's holding register (`hc_req_full`, which takes every client verdict's
//! payload), a live event's in the cycle after, when the core reads `hc_req_full` itself
//! (`e_fresh`; rtl/README "Step 15"). A port's next verdict comes at
//! least eight cycles (a minimum Ethernet frame, 60 bytes) after the previous one, so with five
//! ports and CSR writes in bursts of fewer than eight a holding register is free again in time.
//! `rx_taken` / `cl_taken` say which event the core took this cycle. A verdict and its fields
//! are one `pkt_parser::Record` everywhere on this path (the parser's `rec`, the holding
//! registers `h0`–`h3`/`hc`, the event register `e`).

use rust_hdl::prelude::*;

use crate::csr::Cfg;
use crate::host_gen::HostGen;
use crate::lowi_core::{CLASS_BITS, STATE_BITS};
use crate::nc_core::{ENGINE_PAYLOAD_BITS, NcCore};
use crate::out_fifo::OutFifo;
use crate::pkt_gen::PktGen;
use crate::pkt_parser::{PktParser, Record, SenderTable};
use crate::prim::JoinMac;
use crate::reply_gen::ReplyGen;
use crate::req_capture::ReqCapture;

/// Address bits of each tree stream's output FIFO (256 beats: a longest DECIDE frame, 154 beats,
/// and the last beat of the one before it).
pub const TREE_FIFO_BITS: usize = 8;
/// Address bits of the host stream's output FIFO (512 beats: a longest host frame, 256 beats,
/// and the last beat of the one before it).
pub const HOST_FIFO_BITS: usize = 9;
/// A DECIDE frame may start when its tree FIFOs have this many beats free.
const TREE_ROOM: u64 = crate::pkt_stream::MAX_FRAME.div_ceil(8) as u64 + 1;
/// A host frame may start when the host FIFO has this many beats free.
const HOST_ROOM: u64 = crate::host_gen::BUF_BEATS as u64 + 1;
const _: () = assert!(TREE_ROOM <= 1 << TREE_FIFO_BITS && HOST_ROOM <= 1 << HOST_FIFO_BITS);
// `host_gen` forwards every DECIDE frame `pkt_gen` builds.
const _: () = assert!(crate::pkt_stream::MAX_FRAME <= crate::host_gen::MAX_FRAME_BYTES);

block! {
    /// The engine.
    pub struct NcEngine() {
        pub clock: Signal<In, Clock>,
        pub csr_addr: Signal<In, Bits<16>>,
        pub csr_wdata: Signal<In, Bits<32>>,
        pub csr_write: Signal<In, Bit>,
        pub csr_rdata: Signal<Out, Bits<32>>,
        /// Tree 0 stream in.
        pub t0_data: Signal<In, Bits<64>>,
        pub t0_keep: Signal<In, Bits<8>>,
        pub t0_valid: Signal<In, Bit>,
        pub t0_last: Signal<In, Bit>,
        pub t0_ready: Signal<Out, Bit>,
        /// Tree 1 stream in.
        pub t1_data: Signal<In, Bits<64>>,
        pub t1_keep: Signal<In, Bits<8>>,
        pub t1_valid: Signal<In, Bit>,
        pub t1_last: Signal<In, Bit>,
        pub t1_ready: Signal<Out, Bit>,
        /// Tree 2 stream in.
        pub t2_data: Signal<In, Bits<64>>,
        pub t2_keep: Signal<In, Bits<8>>,
        pub t2_valid: Signal<In, Bit>,
        pub t2_last: Signal<In, Bit>,
        pub t2_ready: Signal<Out, Bit>,
        /// Tree 3 stream in.
        pub t3_data: Signal<In, Bits<64>>,
        pub t3_keep: Signal<In, Bits<8>>,
        pub t3_valid: Signal<In, Bit>,
        pub t3_last: Signal<In, Bit>,
        pub t3_ready: Signal<Out, Bit>,
        /// Client port stream in.
        pub c_data: Signal<In, Bits<64>>,
        pub c_keep: Signal<In, Bits<8>>,
        pub c_valid: Signal<In, Bit>,
        pub c_last: Signal<In, Bit>,
        pub c_ready: Signal<Out, Bit>,
        /// A tree frame was taken by the core this cycle (from tree `rx_port`).
        pub rx_taken: Signal<Out, Bit>,
        pub rx_port: Signal<Out, Bits<2>>,
        /// A client frame was taken by the core this cycle.
        pub cl_taken: Signal<Out, Bit>,
        /// The taken frame's record (as `pkt_parser` gave it): the verdict, `frame_len` and
        /// `eth_dst` of every frame; the tree fields (`sender` .. `decide_instance`) of a tree
        /// frame and the client fields (`client` .. `req_payload`, `eth_src`, `ip_src`,
        /// `udp_src`) of a client frame, each group keeping the last such frame's values in
        /// the other class's events.
        pub ev_verdict: Signal<Out, Bits<CLASS_BITS>>,
        pub ev_sender: Signal<Out, Bits<8>>,
        pub ev_epoch: Signal<Out, Bits<32>>,
        pub ev_seq: Signal<Out, Bits<32>>,
        pub ev_tree: Signal<Out, Bits<8>>,
        pub ev_decide_kind: Signal<Out, Bits<2>>,
        pub ev_decide_instance: Signal<Out, Bits<64>>,
        pub ev_client: Signal<Out, Bits<32>>,
        pub ev_req_seq: Signal<Out, Bits<64>>,
        pub ev_req_len: Signal<Out, Bits<16>>,
        pub ev_req_payload: Signal<Out, Bits<64>>,
        pub ev_frame_len: Signal<Out, Bits<16>>,
        pub ev_eth_src: Signal<Out, Bits<48>>,
        pub ev_eth_dst: Signal<Out, Bits<48>>,
        pub ev_ip_src: Signal<Out, Bits<32>>,
        pub ev_udp_src: Signal<Out, Bits<16>>,
        pub send: Signal<Out, Bit>,
        pub send_kind: Signal<Out, Bits<2>>,
        pub send_count: Signal<Out, Bits<8>>,
        pub send_instance: Signal<Out, Bits<64>>,
        pub send_epoch: Signal<Out, Bits<32>>,
        pub send_seq: Signal<Out, Bits<32>>,
        pub lead_deliver: Signal<Out, Bit>,
        pub rx_deliver: Signal<Out, Bit>,
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
        pub ok_payload: Signal<Out, Bits<ENGINE_PAYLOAD_BITS>>,
        pub ok_len: Signal<Out, Bits<8>>,
        /// The configuration registers' values.
        pub cfg: Signal<Out, Cfg>,
        /// DECIDE frames out, one stream per tree.
        pub g0_data: Signal<Out, Bits<64>>,
        pub g0_keep: Signal<Out, Bits<8>>,
        pub g0_valid: Signal<Out, Bit>,
        pub g0_last: Signal<Out, Bit>,
        pub g0_ready: Signal<In, Bit>,
        pub g1_data: Signal<Out, Bits<64>>,
        pub g1_keep: Signal<Out, Bits<8>>,
        pub g1_valid: Signal<Out, Bit>,
        pub g1_last: Signal<Out, Bit>,
        pub g1_ready: Signal<In, Bit>,
        pub g2_data: Signal<Out, Bits<64>>,
        pub g2_keep: Signal<Out, Bits<8>>,
        pub g2_valid: Signal<Out, Bit>,
        pub g2_last: Signal<Out, Bit>,
        pub g2_ready: Signal<In, Bit>,
        pub g3_data: Signal<Out, Bits<64>>,
        pub g3_keep: Signal<Out, Bits<8>>,
        pub g3_valid: Signal<Out, Bit>,
        pub g3_last: Signal<Out, Bit>,
        pub g3_ready: Signal<In, Bit>,
        /// A send came while the previous one still waited for its frame (dropped: the loop
        /// period is shorter than a frame).
        pub gen_overrun: Signal<Out, Bit>,
        /// The generator has a frame waiting or streaming.
        pub gen_busy: Signal<Out, Bit>,
        /// The host port (`host_gen`): one frame per decision, the decided DECIDE readdressed to
        /// the host.
        pub h_data: Signal<Out, Bits<64>>,
        pub h_keep: Signal<Out, Bits<8>>,
        pub h_valid: Signal<Out, Bit>,
        pub h_last: Signal<Out, Bit>,
        pub h_ready: Signal<In, Bit>,
        /// A decision whose host frame could not be sent (both of host_gen's slots busy, or too
        /// long).
        pub host_drop: Signal<Out, Bit>,
        pub host_busy: Signal<Out, Bit>,
        /// The client port out (`reply_gen`): REPLY_OK for every decided request, REPLY_NOT_LEADER.
        pub r_data: Signal<Out, Bits<64>>,
        pub r_keep: Signal<Out, Bits<8>>,
        pub r_valid: Signal<Out, Bit>,
        pub r_last: Signal<Out, Bit>,
        pub r_ready: Signal<In, Bit>,
        /// An OK / NOT_LEADER reply dropped because reply_gen's queue was full.
        pub reply_drop_ok: Signal<Out, Bit>,
        pub reply_drop_nl: Signal<Out, Bit>,
        pub reply_busy: Signal<Out, Bit>,
        core: NcCore<ENGINE_PAYLOAD_BITS>,
        decide_gen: PktGen,
        /// The tree streams' and the host stream's output FIFOs (the MAC may pause them).
        tq0: OutFifo<TREE_FIFO_BITS>,
        tq1: OutFifo<TREE_FIFO_BITS>,
        tq2: OutFifo<TREE_FIFO_BITS>,
        tq3: OutFifo<TREE_FIFO_BITS>,
        hq: OutFifo<HOST_FIFO_BITS>,
        room0: Signal<Local, Bit>,
        room1: Signal<Local, Bit>,
        room2: Signal<Local, Bit>,
        room3: Signal<Local, Bit>,
        k_tree_room: Constant<Bits<16>> = Constant::new(TREE_ROOM.into()),
        k_host_room: Constant<Bits<16>> = Constant::new(HOST_ROOM.into()),
        /// The client port's REQUEST payload, first 128 bytes (beside `pc`, which keeps 8).
        req_cap: ReqCapture,
        /// The held request's whole payload (`hc.req_payload` keeps the first 8 bytes for the
        /// `ev_*` record).
        hc_req_full: DFF<Bits<ENGINE_PAYLOAD_BITS>>,
        host_gen: HostGen,
        reply_gen: ReplyGen,
        src_mac: JoinMac,
        host_mac: JoinMac,
        /// `pkt_parser::sender_table(node_count)` for the four tree ports' sender checks (the
        /// client port's parser gets it too and does not use it).
        sender_tab: SenderTable,
        p0: PktParser,
        p1: PktParser,
        p2: PktParser,
        p3: PktParser,
        pc: PktParser,
        h0_valid: DFF<Bit>,
        h0: DFF<Record>,
        take0: Signal<Local, Bit>,
        h1_valid: DFF<Bit>,
        h1: DFF<Record>,
        take1: Signal<Local, Bit>,
        h2_valid: DFF<Bit>,
        h2: DFF<Record>,
        take2: Signal<Local, Bit>,
        h3_valid: DFF<Bit>,
        h3: DFF<Record>,
        take3: Signal<Local, Bit>,
        hc_valid: DFF<Bit>,
        hc: DFF<Record>,
        takec: Signal<Local, Bit>,
        /// The event register (issue 17 item 3): the event the core takes in the next cycle,
        /// picked from the held verdicts (a CSR write, then the client, then trees 0..3) or,
        /// when none is held, from the verdicts the parsers give this cycle (same order). The
        /// core reads only this register, so no arbitration sits in front of its judge stage.
        /// A CSR write on the bus comes first: the event waits in the register for that cycle.
        e_valid: DFF<Bit>,
        /// The event is the client port's (else a tree's, `e_port`).
        e_cl: DFF<Bit>,
        e_port: DFF<Bits<2>>,
        e: DFF<Record>,
        /// The client event's whole payload, always from `hc_req_full` (no path from
        /// `req_capture` to it): a held client event's when it is taken into the register, a
        /// live one's in the cycle after (`e_fresh`), when `hc_req_full` holds it.
        e_req_full: DFF<Bits<ENGINE_PAYLOAD_BITS>>,
        /// The register took a live client event in the cycle before: its payload is
        /// `hc_req_full`'s this cycle (`e_req_full` has it from the next).
        e_fresh: DFF<Bit>,
        /// The core takes the event register this cycle (no CSR write on the bus).
        take: Signal<Local, Bit>,
        /// The event register is free for the next cycle's event.
        free: Signal<Local, Bit>,
        /// A live verdict goes straight into the event register (client, trees 0..3).
        goc: Signal<Local, Bit>,
        go0: Signal<Local, Bit>,
        go1: Signal<Local, Bit>,
        go2: Signal<Local, Bit>,
        go3: Signal<Local, Bit>,
        /// The holding registers' next `valid`s.
        hc_vn: Signal<Local, Bit>,
        h0_vn: Signal<Local, Bit>,
        h1_vn: Signal<Local, Bit>,
        h2_vn: Signal<Local, Bit>,
        h3_vn: Signal<Local, Bit>,
        /// What the event register takes when it is free, decided in the cycle before: a held
        /// verdict (`ks_hc`, `ks_h0`..`ks_h3`), else a live one (`ks_lc`, `ks_l0`..`ks_l3`), else
        /// nothing (`ks_none`, the power-on value); `e_any`: any of them.
        e_sel: DFF<Bits<4>>,
        e_any: DFF<Bit>,
        /// `e_sel`'s next value.
        n_sel: Signal<Local, Bits<4>>,
        /// The same pick per group of the record's fields, so that each group's multiplexer
        /// has only the sources that can fill it and a select of its own (one `e_sel` drove
        /// ten sources into all 726 bits of `e`: 592 of them arrived late on `880373a`, routed,
        /// 10.0 ns from `e_sel` alone). `e_lt` / `e_st`: the next event is a tree's, from held
        /// verdict 0..3 or live verdict 4..7 (h0..h3, p0..p3); its tree fields (sender, epoch,
        /// seq, tree, kind, instance) come from there. `e_lc` / `e_sc`: it is the client's,
        /// from `hc` (0) or `pc` (1); its client fields (client, seq, length, payload word and
        /// the reply address) come from there. A group another class's event would fill keeps
        /// the last event's values: nothing reads it for that class (`lowi_core` reads a copy's
        /// fields on `rx_valid`, a request's on `cl_valid`). The verdict and the two fields only
        /// the `ev_*` outputs show (`frame_len`, `eth_dst`) keep the ten-way pick.
        e_lt: DFF<Bit>,
        e_st: DFF<Bits<3>>,
        e_lc: DFF<Bit>,
        e_sc: DFF<Bit>,
        ks_hc: Constant<Bits<4>> = Constant::new(1.into()),
        ks_h0: Constant<Bits<4>> = Constant::new(2.into()),
        ks_h1: Constant<Bits<4>> = Constant::new(3.into()),
        ks_h2: Constant<Bits<4>> = Constant::new(4.into()),
        ks_h3: Constant<Bits<4>> = Constant::new(5.into()),
        ks_lc: Constant<Bits<4>> = Constant::new(6.into()),
        ks_l0: Constant<Bits<4>> = Constant::new(7.into()),
        ks_l1: Constant<Bits<4>> = Constant::new(8.into()),
        ks_l2: Constant<Bits<4>> = Constant::new(9.into()),
        ks_l3: Constant<Bits<4>> = Constant::new(10.into()),
        ks_none: Constant<Bits<4>> = Constant::new(0.into()),
        k0_2: Constant<Bits<2>> = Constant::new(0.into()),
        k0_3: Constant<Bits<3>> = Constant::new(0.into()),
        k1_3: Constant<Bits<3>> = Constant::new(1.into()),
        k2_3: Constant<Bits<3>> = Constant::new(2.into()),
        k3_3: Constant<Bits<3>> = Constant::new(3.into()),
        k4_3: Constant<Bits<3>> = Constant::new(4.into()),
        k5_3: Constant<Bits<3>> = Constant::new(5.into()),
        k6_3: Constant<Bits<3>> = Constant::new(6.into()),
        k7_3: Constant<Bits<3>> = Constant::new(7.into()),
        k1_2: Constant<Bits<2>> = Constant::new(1.into()),
        k2_2: Constant<Bits<2>> = Constant::new(2.into()),
        k3_2: Constant<Bits<2>> = Constant::new(3.into()),
    }
}

impl Default for NcEngine {
    fn default() -> Self {
        Self::build()
    }
}

impl Logic for NcEngine {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, core, decide_gen, host_gen, reply_gen, sender_tab, p0, p1, p2, p3, pc,
            req_cap
        );
        dff_setup!(
            self,
            clock,
            h0_valid,
            h1_valid,
            h2_valid,
            h3_valid,
            hc_valid,
            h0,
            h1,
            h2,
            h3,
            hc,
            hc_req_full,
            e_valid,
            e_cl,
            e_port,
            e,
            e_req_full,
            e_fresh,
            e_sel,
            e_any,
            e_lt,
            e_st,
            e_lc,
            e_sc
        );
        self.core.csr_addr.next = self.csr_addr.val();
        self.core.csr_wdata.next = self.csr_wdata.val();
        self.core.csr_write.next = self.csr_write.val();
        self.csr_rdata.next = self.core.csr_rdata.val();
        self.p0.s_data.next = self.t0_data.val();
        self.p0.s_keep.next = self.t0_keep.val();
        self.p0.s_valid.next = self.t0_valid.val();
        self.p0.s_last.next = self.t0_last.val();
        self.t0_ready.next = self.p0.s_ready.val();
        self.p0.cluster_id.next = self.core.cfg.val().cluster_id;
        self.sender_tab.node_count.next = self.core.cfg.val().node_count.get_bits::<6>(0);
        self.p0.sender_tab.next = self.sender_tab.tab.val();
        self.p0.port.next = self.core.cfg.val().decide_port.get_bits::<16>(0);
        self.p0.client_mode.next = false;
        self.p1.s_data.next = self.t1_data.val();
        self.p1.s_keep.next = self.t1_keep.val();
        self.p1.s_valid.next = self.t1_valid.val();
        self.p1.s_last.next = self.t1_last.val();
        self.t1_ready.next = self.p1.s_ready.val();
        self.p1.cluster_id.next = self.core.cfg.val().cluster_id;
        self.p1.sender_tab.next = self.sender_tab.tab.val();
        self.p1.port.next = self.core.cfg.val().decide_port.get_bits::<16>(0);
        self.p1.client_mode.next = false;
        self.p2.s_data.next = self.t2_data.val();
        self.p2.s_keep.next = self.t2_keep.val();
        self.p2.s_valid.next = self.t2_valid.val();
        self.p2.s_last.next = self.t2_last.val();
        self.t2_ready.next = self.p2.s_ready.val();
        self.p2.cluster_id.next = self.core.cfg.val().cluster_id;
        self.p2.sender_tab.next = self.sender_tab.tab.val();
        self.p2.port.next = self.core.cfg.val().decide_port.get_bits::<16>(0);
        self.p2.client_mode.next = false;
        self.p3.s_data.next = self.t3_data.val();
        self.p3.s_keep.next = self.t3_keep.val();
        self.p3.s_valid.next = self.t3_valid.val();
        self.p3.s_last.next = self.t3_last.val();
        self.t3_ready.next = self.p3.s_ready.val();
        self.p3.cluster_id.next = self.core.cfg.val().cluster_id;
        self.p3.sender_tab.next = self.sender_tab.tab.val();
        self.p3.port.next = self.core.cfg.val().decide_port.get_bits::<16>(0);
        self.p3.client_mode.next = false;
        self.pc.s_data.next = self.c_data.val();
        self.req_cap.s_data.next = self.c_data.val();
        self.req_cap.s_valid.next = self.c_valid.val();
        self.req_cap.s_last.next = self.c_last.val();
        self.pc.s_keep.next = self.c_keep.val();
        self.pc.s_valid.next = self.c_valid.val();
        self.pc.s_last.next = self.c_last.val();
        self.c_ready.next = self.pc.s_ready.val();
        self.pc.cluster_id.next = self.core.cfg.val().cluster_id;
        self.pc.sender_tab.next = self.sender_tab.tab.val();
        self.pc.port.next = self.core.cfg.val().client_port.get_bits::<16>(0);
        self.pc.client_mode.next = true;
        // Arbitration into the event register (`e`, `e_cl`, `e_port`, `e_req_full`). The core
        // takes the register's event unless a CSR write is on the bus; the register then takes
        // the next event: a held verdict if any (client, then trees 0..3), else a verdict a
        // parser gives this cycle (same order), which is then not held. The others wait in
        // their holding registers. Which source that is was decided a cycle early, from the
        // holding registers' next values and the parsers' `ends` (`e_sel`, `e_any`), so this
        // cycle only gates the pick with `free` (rtl/README "Step 16").
        self.take.next = self.e_valid.q.val() && !self.csr_write.val();
        self.free.next = !self.e_valid.q.val() || !self.csr_write.val();
        self.takec.next = false;
        self.take0.next = false;
        self.take1.next = false;
        self.take2.next = false;
        self.take3.next = false;
        self.goc.next = false;
        self.go0.next = false;
        self.go1.next = false;
        self.go2.next = false;
        self.go3.next = false;
        if self.free.val() {
            self.e_valid.d.next = self.e_any.q.val();
            // The arms are the `ks_*` codes.
            match self.e_sel.q.val().index() {
                1 => {
                    self.takec.next = true;
                    self.e_cl.d.next = true;
                    self.e_port.d.next = self.k0_2.val();
                    self.e.d.next.verdict = self.hc.q.val().verdict;
                    self.e.d.next.frame_len = self.hc.q.val().frame_len;
                    self.e.d.next.eth_dst = self.hc.q.val().eth_dst;
                }
                2 => {
                    self.take0.next = true;
                    self.e_cl.d.next = false;
                    self.e_port.d.next = self.k0_2.val();
                    self.e.d.next.verdict = self.h0.q.val().verdict;
                    self.e.d.next.frame_len = self.h0.q.val().frame_len;
                    self.e.d.next.eth_dst = self.h0.q.val().eth_dst;
                }
                3 => {
                    self.take1.next = true;
                    self.e_cl.d.next = false;
                    self.e_port.d.next = self.k1_2.val();
                    self.e.d.next.verdict = self.h1.q.val().verdict;
                    self.e.d.next.frame_len = self.h1.q.val().frame_len;
                    self.e.d.next.eth_dst = self.h1.q.val().eth_dst;
                }
                4 => {
                    self.take2.next = true;
                    self.e_cl.d.next = false;
                    self.e_port.d.next = self.k2_2.val();
                    self.e.d.next.verdict = self.h2.q.val().verdict;
                    self.e.d.next.frame_len = self.h2.q.val().frame_len;
                    self.e.d.next.eth_dst = self.h2.q.val().eth_dst;
                }
                5 => {
                    self.take3.next = true;
                    self.e_cl.d.next = false;
                    self.e_port.d.next = self.k3_2.val();
                    self.e.d.next.verdict = self.h3.q.val().verdict;
                    self.e.d.next.frame_len = self.h3.q.val().frame_len;
                    self.e.d.next.eth_dst = self.h3.q.val().eth_dst;
                }
                6 => {
                    self.goc.next = true;
                    self.e_cl.d.next = true;
                    self.e_port.d.next = self.k0_2.val();
                    self.e.d.next.verdict = self.pc.rec.val().verdict;
                    self.e.d.next.frame_len = self.pc.rec.val().frame_len;
                    self.e.d.next.eth_dst = self.pc.rec.val().eth_dst;
                }
                7 => {
                    self.go0.next = true;
                    self.e_cl.d.next = false;
                    self.e_port.d.next = self.k0_2.val();
                    self.e.d.next.verdict = self.p0.rec.val().verdict;
                    self.e.d.next.frame_len = self.p0.rec.val().frame_len;
                    self.e.d.next.eth_dst = self.p0.rec.val().eth_dst;
                }
                8 => {
                    self.go1.next = true;
                    self.e_cl.d.next = false;
                    self.e_port.d.next = self.k1_2.val();
                    self.e.d.next.verdict = self.p1.rec.val().verdict;
                    self.e.d.next.frame_len = self.p1.rec.val().frame_len;
                    self.e.d.next.eth_dst = self.p1.rec.val().eth_dst;
                }
                9 => {
                    self.go2.next = true;
                    self.e_cl.d.next = false;
                    self.e_port.d.next = self.k2_2.val();
                    self.e.d.next.verdict = self.p2.rec.val().verdict;
                    self.e.d.next.frame_len = self.p2.rec.val().frame_len;
                    self.e.d.next.eth_dst = self.p2.rec.val().eth_dst;
                }
                10 => {
                    self.go3.next = true;
                    self.e_cl.d.next = false;
                    self.e_port.d.next = self.k3_2.val();
                    self.e.d.next.verdict = self.p3.rec.val().verdict;
                    self.e.d.next.frame_len = self.p3.rec.val().frame_len;
                    self.e.d.next.eth_dst = self.p3.rec.val().eth_dst;
                }
                _ => {}
            }
            if self.e_lt.q.val() {
                match self.e_st.q.val().index() {
                    0 => {
                        self.e.d.next.sender = self.h0.q.val().sender;
                        self.e.d.next.epoch = self.h0.q.val().epoch;
                        self.e.d.next.seq = self.h0.q.val().seq;
                        self.e.d.next.tree = self.h0.q.val().tree;
                        self.e.d.next.decide_kind = self.h0.q.val().decide_kind;
                        self.e.d.next.decide_instance = self.h0.q.val().decide_instance;
                    }
                    1 => {
                        self.e.d.next.sender = self.h1.q.val().sender;
                        self.e.d.next.epoch = self.h1.q.val().epoch;
                        self.e.d.next.seq = self.h1.q.val().seq;
                        self.e.d.next.tree = self.h1.q.val().tree;
                        self.e.d.next.decide_kind = self.h1.q.val().decide_kind;
                        self.e.d.next.decide_instance = self.h1.q.val().decide_instance;
                    }
                    2 => {
                        self.e.d.next.sender = self.h2.q.val().sender;
                        self.e.d.next.epoch = self.h2.q.val().epoch;
                        self.e.d.next.seq = self.h2.q.val().seq;
                        self.e.d.next.tree = self.h2.q.val().tree;
                        self.e.d.next.decide_kind = self.h2.q.val().decide_kind;
                        self.e.d.next.decide_instance = self.h2.q.val().decide_instance;
                    }
                    3 => {
                        self.e.d.next.sender = self.h3.q.val().sender;
                        self.e.d.next.epoch = self.h3.q.val().epoch;
                        self.e.d.next.seq = self.h3.q.val().seq;
                        self.e.d.next.tree = self.h3.q.val().tree;
                        self.e.d.next.decide_kind = self.h3.q.val().decide_kind;
                        self.e.d.next.decide_instance = self.h3.q.val().decide_instance;
                    }
                    4 => {
                        self.e.d.next.sender = self.p0.rec.val().sender;
                        self.e.d.next.epoch = self.p0.rec.val().epoch;
                        self.e.d.next.seq = self.p0.rec.val().seq;
                        self.e.d.next.tree = self.p0.rec.val().tree;
                        self.e.d.next.decide_kind = self.p0.rec.val().decide_kind;
                        self.e.d.next.decide_instance = self.p0.rec.val().decide_instance;
                    }
                    5 => {
                        self.e.d.next.sender = self.p1.rec.val().sender;
                        self.e.d.next.epoch = self.p1.rec.val().epoch;
                        self.e.d.next.seq = self.p1.rec.val().seq;
                        self.e.d.next.tree = self.p1.rec.val().tree;
                        self.e.d.next.decide_kind = self.p1.rec.val().decide_kind;
                        self.e.d.next.decide_instance = self.p1.rec.val().decide_instance;
                    }
                    6 => {
                        self.e.d.next.sender = self.p2.rec.val().sender;
                        self.e.d.next.epoch = self.p2.rec.val().epoch;
                        self.e.d.next.seq = self.p2.rec.val().seq;
                        self.e.d.next.tree = self.p2.rec.val().tree;
                        self.e.d.next.decide_kind = self.p2.rec.val().decide_kind;
                        self.e.d.next.decide_instance = self.p2.rec.val().decide_instance;
                    }
                    _ => {
                        self.e.d.next.sender = self.p3.rec.val().sender;
                        self.e.d.next.epoch = self.p3.rec.val().epoch;
                        self.e.d.next.seq = self.p3.rec.val().seq;
                        self.e.d.next.tree = self.p3.rec.val().tree;
                        self.e.d.next.decide_kind = self.p3.rec.val().decide_kind;
                        self.e.d.next.decide_instance = self.p3.rec.val().decide_instance;
                    }
                }
            }
            if self.e_lc.q.val() {
                if self.e_sc.q.val() {
                    self.e.d.next.client = self.pc.rec.val().client;
                    self.e.d.next.req_seq = self.pc.rec.val().req_seq;
                    self.e.d.next.req_len = self.pc.rec.val().req_len;
                    self.e.d.next.req_payload = self.pc.rec.val().req_payload;
                    self.e.d.next.eth_src = self.pc.rec.val().eth_src;
                    self.e.d.next.ip_src = self.pc.rec.val().ip_src;
                    self.e.d.next.udp_src = self.pc.rec.val().udp_src;
                } else {
                    self.e.d.next.client = self.hc.q.val().client;
                    self.e.d.next.req_seq = self.hc.q.val().req_seq;
                    self.e.d.next.req_len = self.hc.q.val().req_len;
                    self.e.d.next.req_payload = self.hc.q.val().req_payload;
                    self.e.d.next.eth_src = self.hc.q.val().eth_src;
                    self.e.d.next.ip_src = self.hc.q.val().ip_src;
                    self.e.d.next.udp_src = self.hc.q.val().udp_src;
                }
            }
        }
        // The holding registers: a verdict not taken live is held; a held one is kept until
        // taken.
        self.h0_vn.next = self.h0_valid.q.val() && !self.take0.val();
        if self.p0.valid.val() {
            self.h0_vn.next = !self.go0.val();
            self.h0.d.next = self.p0.rec.val();
        }
        self.h0_valid.d.next = self.h0_vn.val();
        self.h1_vn.next = self.h1_valid.q.val() && !self.take1.val();
        if self.p1.valid.val() {
            self.h1_vn.next = !self.go1.val();
            self.h1.d.next = self.p1.rec.val();
        }
        self.h1_valid.d.next = self.h1_vn.val();
        self.h2_vn.next = self.h2_valid.q.val() && !self.take2.val();
        if self.p2.valid.val() {
            self.h2_vn.next = !self.go2.val();
            self.h2.d.next = self.p2.rec.val();
        }
        self.h2_valid.d.next = self.h2_vn.val();
        self.h3_vn.next = self.h3_valid.q.val() && !self.take3.val();
        if self.p3.valid.val() {
            self.h3_vn.next = !self.go3.val();
            self.h3.d.next = self.p3.rec.val();
        }
        self.h3_valid.d.next = self.h3_vn.val();
        self.hc_vn.next = self.hc_valid.q.val() && !self.takec.val();
        if self.pc.valid.val() {
            self.hc_vn.next = !self.goc.val();
            self.hc.d.next = self.pc.rec.val();
            self.hc_req_full.d.next = self.req_cap.payload.val();
        }
        self.hc_valid.d.next = self.hc_vn.val();
        // The next cycle's pick: its held verdicts are these next values, its live ones those
        // of the frames that end now (a parser's `valid` follows its `ends` by a cycle).
        self.e_any.d.next = self.hc_vn.val()
            || self.h0_vn.val()
            || self.h1_vn.val()
            || self.h2_vn.val()
            || self.h3_vn.val()
            || self.pc.ends.val()
            || self.p0.ends.val()
            || self.p1.ends.val()
            || self.p2.ends.val()
            || self.p3.ends.val();
        self.n_sel.next = self.ks_none.val();
        if self.p3.ends.val() {
            self.n_sel.next = self.ks_l3.val();
        }
        if self.p2.ends.val() {
            self.n_sel.next = self.ks_l2.val();
        }
        if self.p1.ends.val() {
            self.n_sel.next = self.ks_l1.val();
        }
        if self.p0.ends.val() {
            self.n_sel.next = self.ks_l0.val();
        }
        if self.pc.ends.val() {
            self.n_sel.next = self.ks_lc.val();
        }
        if self.h3_vn.val() {
            self.n_sel.next = self.ks_h3.val();
        }
        if self.h2_vn.val() {
            self.n_sel.next = self.ks_h2.val();
        }
        if self.h1_vn.val() {
            self.n_sel.next = self.ks_h1.val();
        }
        if self.h0_vn.val() {
            self.n_sel.next = self.ks_h0.val();
        }
        if self.hc_vn.val() {
            self.n_sel.next = self.ks_hc.val();
        }
        self.e_sel.d.next = self.n_sel.val();
        self.e_lc.d.next = false;
        self.e_sc.d.next = false;
        self.e_lt.d.next = false;
        self.e_st.d.next = self.k0_3.val();
        match self.n_sel.val().index() {
            1 => self.e_lc.d.next = true,
            2 => self.e_lt.d.next = true,
            3 => {
                self.e_lt.d.next = true;
                self.e_st.d.next = self.k1_3.val();
            }
            4 => {
                self.e_lt.d.next = true;
                self.e_st.d.next = self.k2_3.val();
            }
            5 => {
                self.e_lt.d.next = true;
                self.e_st.d.next = self.k3_3.val();
            }
            6 => {
                self.e_lc.d.next = true;
                self.e_sc.d.next = true;
            }
            7 => {
                self.e_lt.d.next = true;
                self.e_st.d.next = self.k4_3.val();
            }
            8 => {
                self.e_lt.d.next = true;
                self.e_st.d.next = self.k5_3.val();
            }
            9 => {
                self.e_lt.d.next = true;
                self.e_st.d.next = self.k6_3.val();
            }
            10 => {
                self.e_lt.d.next = true;
                self.e_st.d.next = self.k7_3.val();
            }
            _ => {}
        }
        // A live client event's payload reaches `e_req_full` a cycle late, through
        // `hc_req_full` (which takes every client verdict's payload; the next comes eight
        // cycles later at the earliest), so `req_capture`'s 1,024 bits go into one register
        // only; the core reads `hc_req_full` in that cycle (`e_fresh`).
        self.e_fresh.d.next = self.goc.val();
        if self.takec.val() || self.e_fresh.q.val() {
            self.e_req_full.d.next = self.hc_req_full.q.val();
        }
        // The core's event: the register's.
        self.cl_taken.next = self.take.val() && self.e_cl.q.val();
        self.rx_taken.next = self.take.val() && !self.e_cl.q.val();
        self.core.cl_valid.next = self.take.val() && self.e_cl.q.val();
        self.core.cl_class.next = self.e.q.val().verdict;
        self.core.cl_client.next = self.e.q.val().client;
        self.core.cl_seq.next = self.e.q.val().req_seq;
        self.core.cl_len.next = self.e.q.val().req_len;
        self.core.cl_payload.next = self.e_req_full.q.val();
        if self.e_fresh.q.val() {
            self.core.cl_payload.next = self.hc_req_full.q.val();
        }
        self.core.cl_mac.next = self.e.q.val().eth_src;
        self.core.cl_ip.next = self.e.q.val().ip_src;
        self.core.cl_port.next = self.e.q.val().udp_src;
        self.core.rx_valid.next = self.take.val() && !self.e_cl.q.val();
        self.rx_port.next = self.e_port.q.val();
        self.ev_verdict.next = self.e.q.val().verdict;
        self.ev_sender.next = self.e.q.val().sender;
        self.ev_epoch.next = self.e.q.val().epoch;
        self.ev_seq.next = self.e.q.val().seq;
        self.ev_tree.next = self.e.q.val().tree;
        self.ev_decide_kind.next = self.e.q.val().decide_kind;
        self.ev_decide_instance.next = self.e.q.val().decide_instance;
        self.ev_client.next = self.e.q.val().client;
        self.ev_req_seq.next = self.e.q.val().req_seq;
        self.ev_req_len.next = self.e.q.val().req_len;
        self.ev_req_payload.next = self.e.q.val().req_payload;
        self.ev_frame_len.next = self.e.q.val().frame_len;
        self.ev_eth_src.next = self.e.q.val().eth_src;
        self.ev_eth_dst.next = self.e.q.val().eth_dst;
        self.ev_ip_src.next = self.e.q.val().ip_src;
        self.ev_udp_src.next = self.e.q.val().udp_src;
        // DECIDE frames: the send command, then the batch's entries as they leave the FIFO.
        self.decide_gen.send.next = self.core.send.val();
        self.decide_gen.send_kind.next = self.core.send_kind.val();
        self.decide_gen.send_count.next = self.core.send_count.val();
        self.decide_gen.send_instance.next = self.core.send_instance.val();
        self.decide_gen.send_epoch.next = self.core.send_epoch.val();
        self.decide_gen.send_seq.next = self.core.send_seq.val();
        self.decide_gen.e_valid.next = self.core.ok_valid.val();
        self.decide_gen.e_client.next = self.core.ok_client.val();
        self.decide_gen.e_seq.next = self.core.ok_seq.val();
        self.decide_gen.e_len.next = self.core.ok_len.val();
        self.decide_gen.e_payload.next = self.core.ok_payload.val();
        self.decide_gen.sender.next = self.core.cfg.val().node_id.get_bits::<8>(0);
        self.decide_gen.cluster.next = self.core.cfg.val().cluster_id;
        self.decide_gen.trees.next = self.core.cfg.val().trees.get_bits::<8>(0);
        self.decide_gen.port.next = self.core.cfg.val().decide_port.get_bits::<16>(0);
        self.decide_gen.group0.next = self.core.cfg.val().tree_group0;
        self.decide_gen.group1.next = self.core.cfg.val().tree_group1;
        self.decide_gen.group2.next = self.core.cfg.val().tree_group2;
        self.decide_gen.group3.next = self.core.cfg.val().tree_group3;
        self.src_mac.hi.next = self.core.cfg.val().src_mac_hi.get_bits::<16>(0);
        self.src_mac.lo.next = self.core.cfg.val().src_mac_lo;
        self.host_mac.hi.next = self.core.cfg.val().host_mac_hi.get_bits::<16>(0);
        self.host_mac.lo.next = self.core.cfg.val().host_mac_lo;
        self.decide_gen.src_mac.next = self.src_mac.out.val();
        self.decide_gen.src_ip.next = self.core.cfg.val().src_ip;
        self.decide_gen.ttl.next = self.core.cfg.val().ttl.get_bits::<8>(0);
        // Each tree's frames go through its output FIFO; a frame starts only when every tree
        // in use has room for the longest one (a tree not in use has no frames).
        self.tq0.clock.next = self.clock.val();
        self.tq0.in_data.next = self.decide_gen.m0_data.val();
        self.tq0.in_keep.next = self.decide_gen.m0_keep.val();
        self.tq0.in_valid.next = self.decide_gen.m0_valid.val();
        self.tq0.in_last.next = self.decide_gen.m0_last.val();
        self.tq0.out_ready.next = self.g0_ready.val();
        self.tq0.room_min.next = self.k_tree_room.val();
        self.g0_data.next = self.tq0.out_data.val();
        self.g0_keep.next = self.tq0.out_keep.val();
        self.g0_valid.next = self.tq0.out_valid.val();
        self.g0_last.next = self.tq0.out_last.val();
        self.tq1.clock.next = self.clock.val();
        self.tq1.in_data.next = self.decide_gen.m1_data.val();
        self.tq1.in_keep.next = self.decide_gen.m1_keep.val();
        self.tq1.in_valid.next = self.decide_gen.m1_valid.val();
        self.tq1.in_last.next = self.decide_gen.m1_last.val();
        self.tq1.out_ready.next = self.g1_ready.val();
        self.tq1.room_min.next = self.k_tree_room.val();
        self.g1_data.next = self.tq1.out_data.val();
        self.g1_keep.next = self.tq1.out_keep.val();
        self.g1_valid.next = self.tq1.out_valid.val();
        self.g1_last.next = self.tq1.out_last.val();
        self.tq2.clock.next = self.clock.val();
        self.tq2.in_data.next = self.decide_gen.m2_data.val();
        self.tq2.in_keep.next = self.decide_gen.m2_keep.val();
        self.tq2.in_valid.next = self.decide_gen.m2_valid.val();
        self.tq2.in_last.next = self.decide_gen.m2_last.val();
        self.tq2.out_ready.next = self.g2_ready.val();
        self.tq2.room_min.next = self.k_tree_room.val();
        self.g2_data.next = self.tq2.out_data.val();
        self.g2_keep.next = self.tq2.out_keep.val();
        self.g2_valid.next = self.tq2.out_valid.val();
        self.g2_last.next = self.tq2.out_last.val();
        self.tq3.clock.next = self.clock.val();
        self.tq3.in_data.next = self.decide_gen.m3_data.val();
        self.tq3.in_keep.next = self.decide_gen.m3_keep.val();
        self.tq3.in_valid.next = self.decide_gen.m3_valid.val();
        self.tq3.in_last.next = self.decide_gen.m3_last.val();
        self.tq3.out_ready.next = self.g3_ready.val();
        self.tq3.room_min.next = self.k_tree_room.val();
        self.g3_data.next = self.tq3.out_data.val();
        self.g3_keep.next = self.tq3.out_keep.val();
        self.g3_valid.next = self.tq3.out_valid.val();
        self.g3_last.next = self.tq3.out_last.val();
        self.room0.next = self.tq0.room.val();
        self.room1.next = !self.decide_gen.use1.val() || self.tq1.room.val();
        self.room2.next = !self.decide_gen.use2.val() || self.tq2.room.val();
        self.room3.next = !self.decide_gen.use3.val() || self.tq3.room.val();
        self.decide_gen.room.next =
            self.room0.val() && self.room1.val() && self.room2.val() && self.room3.val();
        self.gen_overrun.next = self.decide_gen.overrun.val();
        self.gen_busy.next = self.decide_gen.busy.val()
            || !self.tq0.empty.val()
            || !self.tq1.empty.val()
            || !self.tq2.empty.val()
            || !self.tq3.empty.val();
        // The host path: the copy that completed a follower's delivery (captured from its tree
        // stream by host_gen), or the leader's tree-0 frame, readdressed to the host.
        self.host_gen.t0_data.next = self.t0_data.val();
        self.host_gen.t0_keep.next = self.t0_keep.val();
        self.host_gen.t0_valid.next = self.t0_valid.val();
        self.host_gen.t0_last.next = self.t0_last.val();
        self.host_gen.t1_data.next = self.t1_data.val();
        self.host_gen.t1_keep.next = self.t1_keep.val();
        self.host_gen.t1_valid.next = self.t1_valid.val();
        self.host_gen.t1_last.next = self.t1_last.val();
        self.host_gen.t2_data.next = self.t2_data.val();
        self.host_gen.t2_keep.next = self.t2_keep.val();
        self.host_gen.t2_valid.next = self.t2_valid.val();
        self.host_gen.t2_last.next = self.t2_last.val();
        self.host_gen.t3_data.next = self.t3_data.val();
        self.host_gen.t3_keep.next = self.t3_keep.val();
        self.host_gen.t3_valid.next = self.t3_valid.val();
        self.host_gen.t3_last.next = self.t3_last.val();
        self.host_gen.rx_deliver.next = self.core.rx_deliver.val();
        self.host_gen.rx_port.next = self.core.rx_deliver_port.val();
        self.host_gen.lead_load.next = self.decide_gen.h_load.val();
        self.host_gen.lead_ulen.next = self.decide_gen.h_ulen.val();
        self.host_gen.l_data.next = self.decide_gen.m0_data.val();
        self.host_gen.l_keep.next = self.decide_gen.m0_keep.val();
        self.host_gen.l_valid.next = self.decide_gen.h_valid.val();
        self.host_gen.l_last.next = self.decide_gen.m0_last.val();
        self.host_gen.src_mac.next = self.src_mac.out.val();
        self.host_gen.src_ip.next = self.core.cfg.val().src_ip;
        self.host_gen.src_port.next = self.core.cfg.val().decide_port.get_bits::<16>(0);
        self.host_gen.host_mac.next = self.host_mac.out.val();
        self.host_gen.host_ip.next = self.core.cfg.val().host_ip;
        self.host_gen.ttl.next = self.core.cfg.val().ttl.get_bits::<8>(0);
        self.host_gen.host_port.next = self.core.cfg.val().host_port.get_bits::<16>(0);
        self.hq.clock.next = self.clock.val();
        self.hq.in_data.next = self.host_gen.h_data.val();
        self.hq.in_keep.next = self.host_gen.h_keep.val();
        self.hq.in_valid.next = self.host_gen.h_valid.val();
        self.hq.in_last.next = self.host_gen.h_last.val();
        self.hq.out_ready.next = self.h_ready.val();
        self.hq.room_min.next = self.k_host_room.val();
        self.host_gen.room.next = self.hq.room.val();
        self.h_data.next = self.hq.out_data.val();
        self.h_keep.next = self.hq.out_keep.val();
        self.h_valid.next = self.hq.out_valid.val();
        self.h_last.next = self.hq.out_last.val();
        self.host_drop.next = self.host_gen.drop.val();
        self.host_busy.next = self.host_gen.busy.val() || !self.hq.empty.val();
        // Client replies: OKs as the batch's entries leave the FIFO (with the address each
        // request came from), NOT_LEADER for the request taken in the cycle before.
        self.reply_gen.ok_valid.next = self.core.ok_valid.val();
        self.reply_gen.ok_client.next = self.core.ok_client.val();
        self.reply_gen.ok_seq.next = self.core.ok_seq.val();
        self.reply_gen.ok_instance.next = self.core.ok_instance.val();
        self.reply_gen.ok_index.next = self.core.ok_index.val();
        self.reply_gen.ok_mac.next = self.core.ok_mac.val();
        self.reply_gen.ok_ip.next = self.core.ok_ip.val();
        self.reply_gen.ok_port.next = self.core.ok_port.val();
        self.reply_gen.nl_valid.next = self.core.nl_reply.val();
        self.reply_gen.nl_client.next = self.core.nl_client.val();
        self.reply_gen.nl_seq.next = self.core.nl_seq.val();
        self.reply_gen.nl_leader.next = self.core.nl_leader.val();
        self.reply_gen.nl_epoch.next = self.core.nl_epoch.val();
        self.reply_gen.nl_mac.next = self.core.nl_mac.val();
        self.reply_gen.nl_ip.next = self.core.nl_ip.val();
        self.reply_gen.nl_port.next = self.core.nl_port.val();
        self.reply_gen.src_mac.next = self.src_mac.out.val();
        self.reply_gen.src_ip.next = self.core.cfg.val().src_ip;
        self.reply_gen.ttl.next = self.core.cfg.val().ttl.get_bits::<8>(0);
        self.reply_gen.src_port.next = self.core.cfg.val().client_port.get_bits::<16>(0);
        self.reply_gen.cluster.next = self.core.cfg.val().cluster_id;
        self.reply_gen.sender.next = self.core.cfg.val().node_id.get_bits::<8>(0);
        self.r_data.next = self.reply_gen.r_data.val();
        self.r_keep.next = self.reply_gen.r_keep.val();
        self.r_valid.next = self.reply_gen.r_valid.val();
        self.r_last.next = self.reply_gen.r_last.val();
        self.reply_gen.r_ready.next = self.r_ready.val();
        self.reply_drop_ok.next = self.reply_gen.drop_ok.val();
        self.reply_drop_nl.next = self.reply_gen.drop_nl.val();
        self.reply_busy.next = self.reply_gen.busy.val();
        self.core.drop_reply_ok.next = self.reply_gen.drop_ok.val();
        self.core.drop_reply_nl.next = self.reply_gen.drop_nl.val();
        self.core.drop_host.next = self.host_gen.drop.val();
        // The loop waits for the generator rather than have it drop a decided frame.
        self.core.tx_hold.next = !self.decide_gen.ready.val();
        self.core.rx_port.next = self.rx_port.val();
        self.core.rx_class.next = self.ev_verdict.val();
        self.core.rx_sender.next = self.ev_sender.val();
        self.core.rx_epoch.next = self.ev_epoch.val();
        self.core.rx_seq.next = self.ev_seq.val();
        self.core.rx_tree.next = self.ev_tree.val();
        self.core.rx_kind.next = self.ev_decide_kind.val();
        self.core.rx_instance.next = self.ev_decide_instance.val();
        self.send.next = self.core.send.val();
        self.send_kind.next = self.core.send_kind.val();
        self.send_count.next = self.core.send_count.val();
        self.send_instance.next = self.core.send_instance.val();
        self.send_epoch.next = self.core.send_epoch.val();
        self.send_seq.next = self.core.send_seq.val();
        self.lead_deliver.next = self.core.lead_deliver.val();
        self.rx_deliver.next = self.core.rx_deliver.val();
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
        self.state.next = self.core.state.val();
        self.status.next = self.core.status.val();
        self.epoch.next = self.core.epoch.val();
        self.leader.next = self.core.leader.val();
        self.last_instance.next = self.core.last_instance.val();
        self.ok_valid.next = self.core.ok_valid.val();
        self.ok_client.next = self.core.ok_client.val();
        self.ok_seq.next = self.core.ok_seq.val();
        self.ok_instance.next = self.core.ok_instance.val();
        self.ok_index.next = self.core.ok_index.val();
        self.ok_payload.next = self.core.ok_payload.val();
        self.ok_len.next = self.core.ok_len.val();
        self.cfg.next = self.core.cfg.val();
    }
}
