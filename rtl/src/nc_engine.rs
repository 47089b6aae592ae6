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
//! The core takes at most one event per cycle, from one event register (`e_*`): a CSR write on
//! the bus first (the registered event then waits a cycle), else the register's event. The
//! register takes the next event when it is free: a verdict waiting in a port's one-deep holding
//! register (the client port, then trees 0..3), else a verdict a parser gives in this cycle (same
//! order); the verdicts not taken wait in their holding registers. So an event reaches the core
//! in the cycle after its parser's verdict, as when the core read the holding registers through
//! the arbitration, and the core's judge stage reads a register. A port's next verdict comes at
//! least eight cycles (a minimum Ethernet frame, 60 bytes) after the previous one, so with five
//! ports and CSR writes in bursts of fewer than eight a holding register is free again in time.
//! `rx_taken` / `cl_taken` say which event the core took this cycle.

use rust_hdl::prelude::*;

use crate::host_gen::HostGen;
use crate::lowi_core::{CLASS_BITS, STATE_BITS};
use crate::nc_core::{ENGINE_PAYLOAD_BITS, NcCore};
use crate::out_fifo::OutFifo;
use crate::pkt_gen::PktGen;
use crate::pkt_parser::{PktParser, SenderTable};
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
        /// The taken frame's record (as `pkt_parser` gave it).
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
        pub cfg_node_id: Signal<Out, Bits<32>>,
        pub cfg_node_count: Signal<Out, Bits<32>>,
        pub cfg_cluster_id: Signal<Out, Bits<32>>,
        pub cfg_trees: Signal<Out, Bits<32>>,
        pub cfg_loop_period: Signal<Out, Bits<32>>,
        pub cfg_timeout: Signal<Out, Bits<32>>,
        pub cfg_delta: Signal<Out, Bits<32>>,
        pub cfg_drift: Signal<Out, Bits<32>>,
        pub cfg_fifo_depth: Signal<Out, Bits<32>>,
        pub cfg_batch_max: Signal<Out, Bits<32>>,
        pub cfg_mtu: Signal<Out, Bits<32>>,
        pub cfg_decide_port: Signal<Out, Bits<32>>,
        pub cfg_client_port: Signal<Out, Bits<32>>,
        pub cfg_host_port: Signal<Out, Bits<32>>,
        pub cfg_late_tick_slack: Signal<Out, Bits<32>>,
        pub cfg_tree_group0: Signal<Out, Bits<32>>,
        pub cfg_tree_group1: Signal<Out, Bits<32>>,
        pub cfg_tree_group2: Signal<Out, Bits<32>>,
        pub cfg_tree_group3: Signal<Out, Bits<32>>,
        pub cfg_src_mac_hi: Signal<Out, Bits<32>>,
        pub cfg_src_mac_lo: Signal<Out, Bits<32>>,
        pub cfg_src_ip: Signal<Out, Bits<32>>,
        pub cfg_host_mac_hi: Signal<Out, Bits<32>>,
        pub cfg_host_mac_lo: Signal<Out, Bits<32>>,
        pub cfg_host_ip: Signal<Out, Bits<32>>,
        pub cfg_ttl: Signal<Out, Bits<32>>,
        pub cfg_auth_mode: Signal<Out, Bits<32>>,
        pub cfg_auth_key: Signal<Out, Bits<32>>,
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
        k_t1_8: Constant<Bits<8>> = Constant::new(1.into()),
        k_t2_8: Constant<Bits<8>> = Constant::new(2.into()),
        k_t3_8: Constant<Bits<8>> = Constant::new(3.into()),
        /// The client port's REQUEST payload, first 128 bytes (beside `pc`, which keeps 8).
        req_cap: ReqCapture,
        /// The held request's whole payload (`hc_req_payload` keeps the first 8 bytes for the
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
        h0_verdict: DFF<Bits<CLASS_BITS>>,
        h0_sender: DFF<Bits<8>>,
        h0_epoch: DFF<Bits<32>>,
        h0_seq: DFF<Bits<32>>,
        h0_tree: DFF<Bits<8>>,
        h0_decide_kind: DFF<Bits<2>>,
        h0_decide_instance: DFF<Bits<64>>,
        h0_client: DFF<Bits<32>>,
        h0_req_seq: DFF<Bits<64>>,
        h0_req_len: DFF<Bits<16>>,
        h0_req_payload: DFF<Bits<64>>,
        h0_frame_len: DFF<Bits<16>>,
        h0_eth_src: DFF<Bits<48>>,
        h0_eth_dst: DFF<Bits<48>>,
        h0_ip_src: DFF<Bits<32>>,
        h0_udp_src: DFF<Bits<16>>,
        take0: Signal<Local, Bit>,
        h1_valid: DFF<Bit>,
        h1_verdict: DFF<Bits<CLASS_BITS>>,
        h1_sender: DFF<Bits<8>>,
        h1_epoch: DFF<Bits<32>>,
        h1_seq: DFF<Bits<32>>,
        h1_tree: DFF<Bits<8>>,
        h1_decide_kind: DFF<Bits<2>>,
        h1_decide_instance: DFF<Bits<64>>,
        h1_client: DFF<Bits<32>>,
        h1_req_seq: DFF<Bits<64>>,
        h1_req_len: DFF<Bits<16>>,
        h1_req_payload: DFF<Bits<64>>,
        h1_frame_len: DFF<Bits<16>>,
        h1_eth_src: DFF<Bits<48>>,
        h1_eth_dst: DFF<Bits<48>>,
        h1_ip_src: DFF<Bits<32>>,
        h1_udp_src: DFF<Bits<16>>,
        take1: Signal<Local, Bit>,
        h2_valid: DFF<Bit>,
        h2_verdict: DFF<Bits<CLASS_BITS>>,
        h2_sender: DFF<Bits<8>>,
        h2_epoch: DFF<Bits<32>>,
        h2_seq: DFF<Bits<32>>,
        h2_tree: DFF<Bits<8>>,
        h2_decide_kind: DFF<Bits<2>>,
        h2_decide_instance: DFF<Bits<64>>,
        h2_client: DFF<Bits<32>>,
        h2_req_seq: DFF<Bits<64>>,
        h2_req_len: DFF<Bits<16>>,
        h2_req_payload: DFF<Bits<64>>,
        h2_frame_len: DFF<Bits<16>>,
        h2_eth_src: DFF<Bits<48>>,
        h2_eth_dst: DFF<Bits<48>>,
        h2_ip_src: DFF<Bits<32>>,
        h2_udp_src: DFF<Bits<16>>,
        take2: Signal<Local, Bit>,
        h3_valid: DFF<Bit>,
        h3_verdict: DFF<Bits<CLASS_BITS>>,
        h3_sender: DFF<Bits<8>>,
        h3_epoch: DFF<Bits<32>>,
        h3_seq: DFF<Bits<32>>,
        h3_tree: DFF<Bits<8>>,
        h3_decide_kind: DFF<Bits<2>>,
        h3_decide_instance: DFF<Bits<64>>,
        h3_client: DFF<Bits<32>>,
        h3_req_seq: DFF<Bits<64>>,
        h3_req_len: DFF<Bits<16>>,
        h3_req_payload: DFF<Bits<64>>,
        h3_frame_len: DFF<Bits<16>>,
        h3_eth_src: DFF<Bits<48>>,
        h3_eth_dst: DFF<Bits<48>>,
        h3_ip_src: DFF<Bits<32>>,
        h3_udp_src: DFF<Bits<16>>,
        take3: Signal<Local, Bit>,
        hc_valid: DFF<Bit>,
        hc_verdict: DFF<Bits<CLASS_BITS>>,
        hc_sender: DFF<Bits<8>>,
        hc_epoch: DFF<Bits<32>>,
        hc_seq: DFF<Bits<32>>,
        hc_tree: DFF<Bits<8>>,
        hc_decide_kind: DFF<Bits<2>>,
        hc_decide_instance: DFF<Bits<64>>,
        hc_client: DFF<Bits<32>>,
        hc_req_seq: DFF<Bits<64>>,
        hc_req_len: DFF<Bits<16>>,
        hc_req_payload: DFF<Bits<64>>,
        hc_frame_len: DFF<Bits<16>>,
        hc_eth_src: DFF<Bits<48>>,
        hc_eth_dst: DFF<Bits<48>>,
        hc_ip_src: DFF<Bits<32>>,
        hc_udp_src: DFF<Bits<16>>,
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
        e_verdict: DFF<Bits<CLASS_BITS>>,
        e_sender: DFF<Bits<8>>,
        e_epoch: DFF<Bits<32>>,
        e_seq: DFF<Bits<32>>,
        e_tree: DFF<Bits<8>>,
        e_decide_kind: DFF<Bits<2>>,
        e_decide_instance: DFF<Bits<64>>,
        e_client: DFF<Bits<32>>,
        e_req_seq: DFF<Bits<64>>,
        e_req_len: DFF<Bits<16>>,
        e_req_payload: DFF<Bits<64>>,
        e_frame_len: DFF<Bits<16>>,
        e_eth_src: DFF<Bits<48>>,
        e_eth_dst: DFF<Bits<48>>,
        e_ip_src: DFF<Bits<32>>,
        e_udp_src: DFF<Bits<16>>,
        /// The client event's whole payload.
        e_req_full: DFF<Bits<ENGINE_PAYLOAD_BITS>>,
        /// The core takes the event register this cycle (no CSR write on the bus).
        take: Signal<Local, Bit>,
        /// The event register is free for the next cycle's event.
        free: Signal<Local, Bit>,
        /// A verdict is held (it goes first).
        held: Signal<Local, Bit>,
        /// A live verdict goes straight into the event register (client, trees 0..3).
        goc: Signal<Local, Bit>,
        go0: Signal<Local, Bit>,
        go1: Signal<Local, Bit>,
        go2: Signal<Local, Bit>,
        go3: Signal<Local, Bit>,
        /// The held verdict picked (`s_*`) and the live one picked (`l_*`).
        s_port: Signal<Local, Bits<2>>,
        l_port: Signal<Local, Bits<2>>,
        s_verdict: Signal<Local, Bits<CLASS_BITS>>,
        l_verdict: Signal<Local, Bits<CLASS_BITS>>,
        s_sender: Signal<Local, Bits<8>>,
        l_sender: Signal<Local, Bits<8>>,
        s_epoch: Signal<Local, Bits<32>>,
        l_epoch: Signal<Local, Bits<32>>,
        s_seq: Signal<Local, Bits<32>>,
        l_seq: Signal<Local, Bits<32>>,
        s_tree: Signal<Local, Bits<8>>,
        l_tree: Signal<Local, Bits<8>>,
        s_decide_kind: Signal<Local, Bits<2>>,
        l_decide_kind: Signal<Local, Bits<2>>,
        s_decide_instance: Signal<Local, Bits<64>>,
        l_decide_instance: Signal<Local, Bits<64>>,
        s_client: Signal<Local, Bits<32>>,
        l_client: Signal<Local, Bits<32>>,
        s_req_seq: Signal<Local, Bits<64>>,
        l_req_seq: Signal<Local, Bits<64>>,
        s_req_len: Signal<Local, Bits<16>>,
        l_req_len: Signal<Local, Bits<16>>,
        s_req_payload: Signal<Local, Bits<64>>,
        l_req_payload: Signal<Local, Bits<64>>,
        s_frame_len: Signal<Local, Bits<16>>,
        l_frame_len: Signal<Local, Bits<16>>,
        s_eth_src: Signal<Local, Bits<48>>,
        l_eth_src: Signal<Local, Bits<48>>,
        s_eth_dst: Signal<Local, Bits<48>>,
        l_eth_dst: Signal<Local, Bits<48>>,
        s_ip_src: Signal<Local, Bits<32>>,
        l_ip_src: Signal<Local, Bits<32>>,
        s_udp_src: Signal<Local, Bits<16>>,
        l_udp_src: Signal<Local, Bits<16>>,
        k0_2: Constant<Bits<2>> = Constant::new(0.into()),
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
            h0_verdict,
            h0_sender,
            h0_epoch,
            h0_seq,
            h0_tree,
            h0_decide_kind,
            h0_decide_instance,
            h0_client,
            h0_req_seq,
            h0_req_len,
            h0_req_payload,
            h0_frame_len,
            h0_eth_src,
            h0_eth_dst,
            h0_ip_src,
            h0_udp_src,
            h1_verdict,
            h1_sender,
            h1_epoch,
            h1_seq,
            h1_tree,
            h1_decide_kind,
            h1_decide_instance,
            h1_client,
            h1_req_seq,
            h1_req_len,
            h1_req_payload,
            h1_frame_len,
            h1_eth_src,
            h1_eth_dst,
            h1_ip_src,
            h1_udp_src,
            h2_verdict,
            h2_sender,
            h2_epoch,
            h2_seq,
            h2_tree,
            h2_decide_kind,
            h2_decide_instance,
            h2_client,
            h2_req_seq,
            h2_req_len,
            h2_req_payload,
            h2_frame_len,
            h2_eth_src,
            h2_eth_dst,
            h2_ip_src,
            h2_udp_src,
            h3_verdict,
            h3_sender,
            h3_epoch,
            h3_seq,
            h3_tree,
            h3_decide_kind,
            h3_decide_instance,
            h3_client,
            h3_req_seq,
            h3_req_len,
            h3_req_payload,
            h3_frame_len,
            h3_eth_src,
            h3_eth_dst,
            h3_ip_src,
            h3_udp_src,
            hc_verdict,
            hc_sender,
            hc_epoch,
            hc_seq,
            hc_tree,
            hc_decide_kind,
            hc_decide_instance,
            hc_client,
            hc_req_seq,
            hc_req_len,
            hc_req_payload,
            hc_req_full,
            hc_frame_len,
            hc_eth_src,
            hc_eth_dst,
            hc_ip_src,
            hc_udp_src,
            e_valid,
            e_cl,
            e_port,
            e_verdict,
            e_sender,
            e_epoch,
            e_seq,
            e_tree,
            e_decide_kind,
            e_decide_instance,
            e_client,
            e_req_seq,
            e_req_len,
            e_req_payload,
            e_frame_len,
            e_eth_src,
            e_eth_dst,
            e_ip_src,
            e_udp_src,
            e_req_full
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
        self.p0.cluster_id.next = self.core.cfg_cluster_id.val();
        self.sender_tab.node_count.next = self.core.cfg_node_count.val().get_bits::<6>(0);
        self.p0.sender_tab.next = self.sender_tab.tab.val();
        self.p0.port.next = self.core.cfg_decide_port.val().get_bits::<16>(0);
        self.p0.client_mode.next = false;
        self.p1.s_data.next = self.t1_data.val();
        self.p1.s_keep.next = self.t1_keep.val();
        self.p1.s_valid.next = self.t1_valid.val();
        self.p1.s_last.next = self.t1_last.val();
        self.t1_ready.next = self.p1.s_ready.val();
        self.p1.cluster_id.next = self.core.cfg_cluster_id.val();
        self.p1.sender_tab.next = self.sender_tab.tab.val();
        self.p1.port.next = self.core.cfg_decide_port.val().get_bits::<16>(0);
        self.p1.client_mode.next = false;
        self.p2.s_data.next = self.t2_data.val();
        self.p2.s_keep.next = self.t2_keep.val();
        self.p2.s_valid.next = self.t2_valid.val();
        self.p2.s_last.next = self.t2_last.val();
        self.t2_ready.next = self.p2.s_ready.val();
        self.p2.cluster_id.next = self.core.cfg_cluster_id.val();
        self.p2.sender_tab.next = self.sender_tab.tab.val();
        self.p2.port.next = self.core.cfg_decide_port.val().get_bits::<16>(0);
        self.p2.client_mode.next = false;
        self.p3.s_data.next = self.t3_data.val();
        self.p3.s_keep.next = self.t3_keep.val();
        self.p3.s_valid.next = self.t3_valid.val();
        self.p3.s_last.next = self.t3_last.val();
        self.t3_ready.next = self.p3.s_ready.val();
        self.p3.cluster_id.next = self.core.cfg_cluster_id.val();
        self.p3.sender_tab.next = self.sender_tab.tab.val();
        self.p3.port.next = self.core.cfg_decide_port.val().get_bits::<16>(0);
        self.p3.client_mode.next = false;
        self.pc.s_data.next = self.c_data.val();
        self.req_cap.s_data.next = self.c_data.val();
        self.req_cap.s_valid.next = self.c_valid.val();
        self.req_cap.s_last.next = self.c_last.val();
        self.pc.s_keep.next = self.c_keep.val();
        self.pc.s_valid.next = self.c_valid.val();
        self.pc.s_last.next = self.c_last.val();
        self.c_ready.next = self.pc.s_ready.val();
        self.pc.cluster_id.next = self.core.cfg_cluster_id.val();
        self.pc.sender_tab.next = self.sender_tab.tab.val();
        self.pc.port.next = self.core.cfg_client_port.val().get_bits::<16>(0);
        self.pc.client_mode.next = true;
        // Arbitration into the event register (`e_*`). The core takes the register's event
        // unless a CSR write is on the bus; the register then takes the next event: a held
        // verdict if any (client, then trees 0..3), else a verdict a parser gives this cycle
        // (same order), which is then not held. The others wait in their holding registers.
        self.take.next = self.e_valid.q.val() && !self.csr_write.val();
        self.free.next = !self.e_valid.q.val() || !self.csr_write.val();
        self.held.next = self.hc_valid.q.val()
            || self.h0_valid.q.val()
            || self.h1_valid.q.val()
            || self.h2_valid.q.val()
            || self.h3_valid.q.val();
        self.takec.next = self.free.val() && self.hc_valid.q.val();
        self.take0.next = self.free.val() && !self.hc_valid.q.val() && self.h0_valid.q.val();
        self.take1.next = self.free.val()
            && !self.hc_valid.q.val()
            && !self.h0_valid.q.val()
            && self.h1_valid.q.val();
        self.take2.next = self.free.val()
            && !self.hc_valid.q.val()
            && !self.h0_valid.q.val()
            && !self.h1_valid.q.val()
            && self.h2_valid.q.val();
        self.take3.next = self.free.val()
            && !self.hc_valid.q.val()
            && !self.h0_valid.q.val()
            && !self.h1_valid.q.val()
            && !self.h2_valid.q.val()
            && self.h3_valid.q.val();
        self.goc.next = self.free.val() && !self.held.val() && self.pc.valid.val();
        self.go0.next =
            self.free.val() && !self.held.val() && !self.pc.valid.val() && self.p0.valid.val();
        self.go1.next = self.free.val()
            && !self.held.val()
            && !self.pc.valid.val()
            && !self.p0.valid.val()
            && self.p1.valid.val();
        self.go2.next = self.free.val()
            && !self.held.val()
            && !self.pc.valid.val()
            && !self.p0.valid.val()
            && !self.p1.valid.val()
            && self.p2.valid.val();
        self.go3.next = self.free.val()
            && !self.held.val()
            && !self.pc.valid.val()
            && !self.p0.valid.val()
            && !self.p1.valid.val()
            && !self.p2.valid.val()
            && self.p3.valid.val();
        if self.take0.val() {
            self.h0_valid.d.next = false;
        }
        if self.p0.valid.val() {
            self.h0_valid.d.next = !self.go0.val();
            self.h0_verdict.d.next = self.p0.verdict.val();
            self.h0_sender.d.next = self.p0.sender.val();
            self.h0_epoch.d.next = self.p0.epoch.val();
            self.h0_seq.d.next = self.p0.seq.val();
            self.h0_tree.d.next = self.p0.tree.val();
            self.h0_decide_kind.d.next = self.p0.decide_kind.val();
            self.h0_decide_instance.d.next = self.p0.decide_instance.val();
            self.h0_client.d.next = self.p0.client.val();
            self.h0_req_seq.d.next = self.p0.req_seq.val();
            self.h0_req_len.d.next = self.p0.req_len.val();
            self.h0_req_payload.d.next = self.p0.req_payload.val();
            self.h0_frame_len.d.next = self.p0.frame_len.val();
            self.h0_eth_src.d.next = self.p0.eth_src.val();
            self.h0_eth_dst.d.next = self.p0.eth_dst.val();
            self.h0_ip_src.d.next = self.p0.ip_src.val();
            self.h0_udp_src.d.next = self.p0.udp_src.val();
        }
        if self.take1.val() {
            self.h1_valid.d.next = false;
        }
        if self.p1.valid.val() {
            self.h1_valid.d.next = !self.go1.val();
            self.h1_verdict.d.next = self.p1.verdict.val();
            self.h1_sender.d.next = self.p1.sender.val();
            self.h1_epoch.d.next = self.p1.epoch.val();
            self.h1_seq.d.next = self.p1.seq.val();
            self.h1_tree.d.next = self.p1.tree.val();
            self.h1_decide_kind.d.next = self.p1.decide_kind.val();
            self.h1_decide_instance.d.next = self.p1.decide_instance.val();
            self.h1_client.d.next = self.p1.client.val();
            self.h1_req_seq.d.next = self.p1.req_seq.val();
            self.h1_req_len.d.next = self.p1.req_len.val();
            self.h1_req_payload.d.next = self.p1.req_payload.val();
            self.h1_frame_len.d.next = self.p1.frame_len.val();
            self.h1_eth_src.d.next = self.p1.eth_src.val();
            self.h1_eth_dst.d.next = self.p1.eth_dst.val();
            self.h1_ip_src.d.next = self.p1.ip_src.val();
            self.h1_udp_src.d.next = self.p1.udp_src.val();
        }
        if self.take2.val() {
            self.h2_valid.d.next = false;
        }
        if self.p2.valid.val() {
            self.h2_valid.d.next = !self.go2.val();
            self.h2_verdict.d.next = self.p2.verdict.val();
            self.h2_sender.d.next = self.p2.sender.val();
            self.h2_epoch.d.next = self.p2.epoch.val();
            self.h2_seq.d.next = self.p2.seq.val();
            self.h2_tree.d.next = self.p2.tree.val();
            self.h2_decide_kind.d.next = self.p2.decide_kind.val();
            self.h2_decide_instance.d.next = self.p2.decide_instance.val();
            self.h2_client.d.next = self.p2.client.val();
            self.h2_req_seq.d.next = self.p2.req_seq.val();
            self.h2_req_len.d.next = self.p2.req_len.val();
            self.h2_req_payload.d.next = self.p2.req_payload.val();
            self.h2_frame_len.d.next = self.p2.frame_len.val();
            self.h2_eth_src.d.next = self.p2.eth_src.val();
            self.h2_eth_dst.d.next = self.p2.eth_dst.val();
            self.h2_ip_src.d.next = self.p2.ip_src.val();
            self.h2_udp_src.d.next = self.p2.udp_src.val();
        }
        if self.take3.val() {
            self.h3_valid.d.next = false;
        }
        if self.p3.valid.val() {
            self.h3_valid.d.next = !self.go3.val();
            self.h3_verdict.d.next = self.p3.verdict.val();
            self.h3_sender.d.next = self.p3.sender.val();
            self.h3_epoch.d.next = self.p3.epoch.val();
            self.h3_seq.d.next = self.p3.seq.val();
            self.h3_tree.d.next = self.p3.tree.val();
            self.h3_decide_kind.d.next = self.p3.decide_kind.val();
            self.h3_decide_instance.d.next = self.p3.decide_instance.val();
            self.h3_client.d.next = self.p3.client.val();
            self.h3_req_seq.d.next = self.p3.req_seq.val();
            self.h3_req_len.d.next = self.p3.req_len.val();
            self.h3_req_payload.d.next = self.p3.req_payload.val();
            self.h3_frame_len.d.next = self.p3.frame_len.val();
            self.h3_eth_src.d.next = self.p3.eth_src.val();
            self.h3_eth_dst.d.next = self.p3.eth_dst.val();
            self.h3_ip_src.d.next = self.p3.ip_src.val();
            self.h3_udp_src.d.next = self.p3.udp_src.val();
        }
        if self.takec.val() {
            self.hc_valid.d.next = false;
        }
        if self.pc.valid.val() {
            self.hc_valid.d.next = !self.goc.val();
            self.hc_verdict.d.next = self.pc.verdict.val();
            self.hc_sender.d.next = self.pc.sender.val();
            self.hc_epoch.d.next = self.pc.epoch.val();
            self.hc_seq.d.next = self.pc.seq.val();
            self.hc_tree.d.next = self.pc.tree.val();
            self.hc_decide_kind.d.next = self.pc.decide_kind.val();
            self.hc_decide_instance.d.next = self.pc.decide_instance.val();
            self.hc_client.d.next = self.pc.client.val();
            self.hc_req_seq.d.next = self.pc.req_seq.val();
            self.hc_req_len.d.next = self.pc.req_len.val();
            self.hc_req_payload.d.next = self.pc.req_payload.val();
            self.hc_req_full.d.next = self.req_cap.payload.val();
            self.hc_frame_len.d.next = self.pc.frame_len.val();
            self.hc_eth_src.d.next = self.pc.eth_src.val();
            self.hc_eth_dst.d.next = self.pc.eth_dst.val();
            self.hc_ip_src.d.next = self.pc.ip_src.val();
            self.hc_udp_src.d.next = self.pc.udp_src.val();
        }
        if self.hc_valid.q.val() {
            self.s_port.next = self.k0_2.val();
            self.s_verdict.next = self.hc_verdict.q.val();
            self.s_sender.next = self.hc_sender.q.val();
            self.s_epoch.next = self.hc_epoch.q.val();
            self.s_seq.next = self.hc_seq.q.val();
            self.s_tree.next = self.hc_tree.q.val();
            self.s_decide_kind.next = self.hc_decide_kind.q.val();
            self.s_decide_instance.next = self.hc_decide_instance.q.val();
            self.s_client.next = self.hc_client.q.val();
            self.s_req_seq.next = self.hc_req_seq.q.val();
            self.s_req_len.next = self.hc_req_len.q.val();
            self.s_req_payload.next = self.hc_req_payload.q.val();
            self.s_frame_len.next = self.hc_frame_len.q.val();
            self.s_eth_src.next = self.hc_eth_src.q.val();
            self.s_eth_dst.next = self.hc_eth_dst.q.val();
            self.s_ip_src.next = self.hc_ip_src.q.val();
            self.s_udp_src.next = self.hc_udp_src.q.val();
        } else if self.h0_valid.q.val() {
            self.s_port.next = self.k0_2.val();
            self.s_verdict.next = self.h0_verdict.q.val();
            self.s_sender.next = self.h0_sender.q.val();
            self.s_epoch.next = self.h0_epoch.q.val();
            self.s_seq.next = self.h0_seq.q.val();
            self.s_tree.next = self.h0_tree.q.val();
            self.s_decide_kind.next = self.h0_decide_kind.q.val();
            self.s_decide_instance.next = self.h0_decide_instance.q.val();
            self.s_client.next = self.h0_client.q.val();
            self.s_req_seq.next = self.h0_req_seq.q.val();
            self.s_req_len.next = self.h0_req_len.q.val();
            self.s_req_payload.next = self.h0_req_payload.q.val();
            self.s_frame_len.next = self.h0_frame_len.q.val();
            self.s_eth_src.next = self.h0_eth_src.q.val();
            self.s_eth_dst.next = self.h0_eth_dst.q.val();
            self.s_ip_src.next = self.h0_ip_src.q.val();
            self.s_udp_src.next = self.h0_udp_src.q.val();
        } else if self.h1_valid.q.val() {
            self.s_port.next = self.k1_2.val();
            self.s_verdict.next = self.h1_verdict.q.val();
            self.s_sender.next = self.h1_sender.q.val();
            self.s_epoch.next = self.h1_epoch.q.val();
            self.s_seq.next = self.h1_seq.q.val();
            self.s_tree.next = self.h1_tree.q.val();
            self.s_decide_kind.next = self.h1_decide_kind.q.val();
            self.s_decide_instance.next = self.h1_decide_instance.q.val();
            self.s_client.next = self.h1_client.q.val();
            self.s_req_seq.next = self.h1_req_seq.q.val();
            self.s_req_len.next = self.h1_req_len.q.val();
            self.s_req_payload.next = self.h1_req_payload.q.val();
            self.s_frame_len.next = self.h1_frame_len.q.val();
            self.s_eth_src.next = self.h1_eth_src.q.val();
            self.s_eth_dst.next = self.h1_eth_dst.q.val();
            self.s_ip_src.next = self.h1_ip_src.q.val();
            self.s_udp_src.next = self.h1_udp_src.q.val();
        } else if self.h2_valid.q.val() {
            self.s_port.next = self.k2_2.val();
            self.s_verdict.next = self.h2_verdict.q.val();
            self.s_sender.next = self.h2_sender.q.val();
            self.s_epoch.next = self.h2_epoch.q.val();
            self.s_seq.next = self.h2_seq.q.val();
            self.s_tree.next = self.h2_tree.q.val();
            self.s_decide_kind.next = self.h2_decide_kind.q.val();
            self.s_decide_instance.next = self.h2_decide_instance.q.val();
            self.s_client.next = self.h2_client.q.val();
            self.s_req_seq.next = self.h2_req_seq.q.val();
            self.s_req_len.next = self.h2_req_len.q.val();
            self.s_req_payload.next = self.h2_req_payload.q.val();
            self.s_frame_len.next = self.h2_frame_len.q.val();
            self.s_eth_src.next = self.h2_eth_src.q.val();
            self.s_eth_dst.next = self.h2_eth_dst.q.val();
            self.s_ip_src.next = self.h2_ip_src.q.val();
            self.s_udp_src.next = self.h2_udp_src.q.val();
        } else {
            self.s_port.next = self.k3_2.val();
            self.s_verdict.next = self.h3_verdict.q.val();
            self.s_sender.next = self.h3_sender.q.val();
            self.s_epoch.next = self.h3_epoch.q.val();
            self.s_seq.next = self.h3_seq.q.val();
            self.s_tree.next = self.h3_tree.q.val();
            self.s_decide_kind.next = self.h3_decide_kind.q.val();
            self.s_decide_instance.next = self.h3_decide_instance.q.val();
            self.s_client.next = self.h3_client.q.val();
            self.s_req_seq.next = self.h3_req_seq.q.val();
            self.s_req_len.next = self.h3_req_len.q.val();
            self.s_req_payload.next = self.h3_req_payload.q.val();
            self.s_frame_len.next = self.h3_frame_len.q.val();
            self.s_eth_src.next = self.h3_eth_src.q.val();
            self.s_eth_dst.next = self.h3_eth_dst.q.val();
            self.s_ip_src.next = self.h3_ip_src.q.val();
            self.s_udp_src.next = self.h3_udp_src.q.val();
        }
        if self.pc.valid.val() {
            self.l_port.next = self.k0_2.val();
            self.l_verdict.next = self.pc.verdict.val();
            self.l_sender.next = self.pc.sender.val();
            self.l_epoch.next = self.pc.epoch.val();
            self.l_seq.next = self.pc.seq.val();
            self.l_tree.next = self.pc.tree.val();
            self.l_decide_kind.next = self.pc.decide_kind.val();
            self.l_decide_instance.next = self.pc.decide_instance.val();
            self.l_client.next = self.pc.client.val();
            self.l_req_seq.next = self.pc.req_seq.val();
            self.l_req_len.next = self.pc.req_len.val();
            self.l_req_payload.next = self.pc.req_payload.val();
            self.l_frame_len.next = self.pc.frame_len.val();
            self.l_eth_src.next = self.pc.eth_src.val();
            self.l_eth_dst.next = self.pc.eth_dst.val();
            self.l_ip_src.next = self.pc.ip_src.val();
            self.l_udp_src.next = self.pc.udp_src.val();
        } else if self.p0.valid.val() {
            self.l_port.next = self.k0_2.val();
            self.l_verdict.next = self.p0.verdict.val();
            self.l_sender.next = self.p0.sender.val();
            self.l_epoch.next = self.p0.epoch.val();
            self.l_seq.next = self.p0.seq.val();
            self.l_tree.next = self.p0.tree.val();
            self.l_decide_kind.next = self.p0.decide_kind.val();
            self.l_decide_instance.next = self.p0.decide_instance.val();
            self.l_client.next = self.p0.client.val();
            self.l_req_seq.next = self.p0.req_seq.val();
            self.l_req_len.next = self.p0.req_len.val();
            self.l_req_payload.next = self.p0.req_payload.val();
            self.l_frame_len.next = self.p0.frame_len.val();
            self.l_eth_src.next = self.p0.eth_src.val();
            self.l_eth_dst.next = self.p0.eth_dst.val();
            self.l_ip_src.next = self.p0.ip_src.val();
            self.l_udp_src.next = self.p0.udp_src.val();
        } else if self.p1.valid.val() {
            self.l_port.next = self.k1_2.val();
            self.l_verdict.next = self.p1.verdict.val();
            self.l_sender.next = self.p1.sender.val();
            self.l_epoch.next = self.p1.epoch.val();
            self.l_seq.next = self.p1.seq.val();
            self.l_tree.next = self.p1.tree.val();
            self.l_decide_kind.next = self.p1.decide_kind.val();
            self.l_decide_instance.next = self.p1.decide_instance.val();
            self.l_client.next = self.p1.client.val();
            self.l_req_seq.next = self.p1.req_seq.val();
            self.l_req_len.next = self.p1.req_len.val();
            self.l_req_payload.next = self.p1.req_payload.val();
            self.l_frame_len.next = self.p1.frame_len.val();
            self.l_eth_src.next = self.p1.eth_src.val();
            self.l_eth_dst.next = self.p1.eth_dst.val();
            self.l_ip_src.next = self.p1.ip_src.val();
            self.l_udp_src.next = self.p1.udp_src.val();
        } else if self.p2.valid.val() {
            self.l_port.next = self.k2_2.val();
            self.l_verdict.next = self.p2.verdict.val();
            self.l_sender.next = self.p2.sender.val();
            self.l_epoch.next = self.p2.epoch.val();
            self.l_seq.next = self.p2.seq.val();
            self.l_tree.next = self.p2.tree.val();
            self.l_decide_kind.next = self.p2.decide_kind.val();
            self.l_decide_instance.next = self.p2.decide_instance.val();
            self.l_client.next = self.p2.client.val();
            self.l_req_seq.next = self.p2.req_seq.val();
            self.l_req_len.next = self.p2.req_len.val();
            self.l_req_payload.next = self.p2.req_payload.val();
            self.l_frame_len.next = self.p2.frame_len.val();
            self.l_eth_src.next = self.p2.eth_src.val();
            self.l_eth_dst.next = self.p2.eth_dst.val();
            self.l_ip_src.next = self.p2.ip_src.val();
            self.l_udp_src.next = self.p2.udp_src.val();
        } else {
            self.l_port.next = self.k3_2.val();
            self.l_verdict.next = self.p3.verdict.val();
            self.l_sender.next = self.p3.sender.val();
            self.l_epoch.next = self.p3.epoch.val();
            self.l_seq.next = self.p3.seq.val();
            self.l_tree.next = self.p3.tree.val();
            self.l_decide_kind.next = self.p3.decide_kind.val();
            self.l_decide_instance.next = self.p3.decide_instance.val();
            self.l_client.next = self.p3.client.val();
            self.l_req_seq.next = self.p3.req_seq.val();
            self.l_req_len.next = self.p3.req_len.val();
            self.l_req_payload.next = self.p3.req_payload.val();
            self.l_frame_len.next = self.p3.frame_len.val();
            self.l_eth_src.next = self.p3.eth_src.val();
            self.l_eth_dst.next = self.p3.eth_dst.val();
            self.l_ip_src.next = self.p3.ip_src.val();
            self.l_udp_src.next = self.p3.udp_src.val();
        }
        if self.free.val() {
            self.e_valid.d.next = self.held.val()
                || self.pc.valid.val()
                || self.p0.valid.val()
                || self.p1.valid.val()
                || self.p2.valid.val()
                || self.p3.valid.val();
            if self.held.val() {
                self.e_cl.d.next = self.hc_valid.q.val();
                self.e_port.d.next = self.s_port.val();
                self.e_req_full.d.next = self.hc_req_full.q.val();
                self.e_verdict.d.next = self.s_verdict.val();
                self.e_sender.d.next = self.s_sender.val();
                self.e_epoch.d.next = self.s_epoch.val();
                self.e_seq.d.next = self.s_seq.val();
                self.e_tree.d.next = self.s_tree.val();
                self.e_decide_kind.d.next = self.s_decide_kind.val();
                self.e_decide_instance.d.next = self.s_decide_instance.val();
                self.e_client.d.next = self.s_client.val();
                self.e_req_seq.d.next = self.s_req_seq.val();
                self.e_req_len.d.next = self.s_req_len.val();
                self.e_req_payload.d.next = self.s_req_payload.val();
                self.e_frame_len.d.next = self.s_frame_len.val();
                self.e_eth_src.d.next = self.s_eth_src.val();
                self.e_eth_dst.d.next = self.s_eth_dst.val();
                self.e_ip_src.d.next = self.s_ip_src.val();
                self.e_udp_src.d.next = self.s_udp_src.val();
            } else {
                self.e_cl.d.next = self.pc.valid.val();
                self.e_port.d.next = self.l_port.val();
                self.e_req_full.d.next = self.req_cap.payload.val();
                self.e_verdict.d.next = self.l_verdict.val();
                self.e_sender.d.next = self.l_sender.val();
                self.e_epoch.d.next = self.l_epoch.val();
                self.e_seq.d.next = self.l_seq.val();
                self.e_tree.d.next = self.l_tree.val();
                self.e_decide_kind.d.next = self.l_decide_kind.val();
                self.e_decide_instance.d.next = self.l_decide_instance.val();
                self.e_client.d.next = self.l_client.val();
                self.e_req_seq.d.next = self.l_req_seq.val();
                self.e_req_len.d.next = self.l_req_len.val();
                self.e_req_payload.d.next = self.l_req_payload.val();
                self.e_frame_len.d.next = self.l_frame_len.val();
                self.e_eth_src.d.next = self.l_eth_src.val();
                self.e_eth_dst.d.next = self.l_eth_dst.val();
                self.e_ip_src.d.next = self.l_ip_src.val();
                self.e_udp_src.d.next = self.l_udp_src.val();
            }
        }
        // The core's event: the register's.
        self.cl_taken.next = self.take.val() && self.e_cl.q.val();
        self.rx_taken.next = self.take.val() && !self.e_cl.q.val();
        self.core.cl_valid.next = self.take.val() && self.e_cl.q.val();
        self.core.cl_class.next = self.e_verdict.q.val();
        self.core.cl_client.next = self.e_client.q.val();
        self.core.cl_seq.next = self.e_req_seq.q.val();
        self.core.cl_len.next = self.e_req_len.q.val();
        self.core.cl_payload.next = self.e_req_full.q.val();
        self.core.cl_mac.next = self.e_eth_src.q.val();
        self.core.cl_ip.next = self.e_ip_src.q.val();
        self.core.cl_port.next = self.e_udp_src.q.val();
        self.core.rx_valid.next = self.take.val() && !self.e_cl.q.val();
        self.rx_port.next = self.e_port.q.val();
        self.ev_verdict.next = self.e_verdict.q.val();
        self.ev_sender.next = self.e_sender.q.val();
        self.ev_epoch.next = self.e_epoch.q.val();
        self.ev_seq.next = self.e_seq.q.val();
        self.ev_tree.next = self.e_tree.q.val();
        self.ev_decide_kind.next = self.e_decide_kind.q.val();
        self.ev_decide_instance.next = self.e_decide_instance.q.val();
        self.ev_client.next = self.e_client.q.val();
        self.ev_req_seq.next = self.e_req_seq.q.val();
        self.ev_req_len.next = self.e_req_len.q.val();
        self.ev_req_payload.next = self.e_req_payload.q.val();
        self.ev_frame_len.next = self.e_frame_len.q.val();
        self.ev_eth_src.next = self.e_eth_src.q.val();
        self.ev_eth_dst.next = self.e_eth_dst.q.val();
        self.ev_ip_src.next = self.e_ip_src.q.val();
        self.ev_udp_src.next = self.e_udp_src.q.val();
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
        self.decide_gen.sender.next = self.core.cfg_node_id.val().get_bits::<8>(0);
        self.decide_gen.cluster.next = self.core.cfg_cluster_id.val();
        self.decide_gen.trees.next = self.core.cfg_trees.val().get_bits::<8>(0);
        self.decide_gen.port.next = self.core.cfg_decide_port.val().get_bits::<16>(0);
        self.decide_gen.group0.next = self.core.cfg_tree_group0.val();
        self.decide_gen.group1.next = self.core.cfg_tree_group1.val();
        self.decide_gen.group2.next = self.core.cfg_tree_group2.val();
        self.decide_gen.group3.next = self.core.cfg_tree_group3.val();
        self.src_mac.hi.next = self.core.cfg_src_mac_hi.val().get_bits::<16>(0);
        self.src_mac.lo.next = self.core.cfg_src_mac_lo.val();
        self.host_mac.hi.next = self.core.cfg_host_mac_hi.val().get_bits::<16>(0);
        self.host_mac.lo.next = self.core.cfg_host_mac_lo.val();
        self.decide_gen.src_mac.next = self.src_mac.out.val();
        self.decide_gen.src_ip.next = self.core.cfg_src_ip.val();
        self.decide_gen.ttl.next = self.core.cfg_ttl.val().get_bits::<8>(0);
        // Each tree's frames go through its output FIFO; a frame starts only when every tree
        // in use has room for the longest one (a tree not in use has no frames).
        self.tq0.clock.next = self.clock.val();
        self.tq0.in_data.next = self.decide_gen.m0_data.val();
        self.tq0.in_keep.next = self.decide_gen.m0_keep.val();
        self.tq0.in_valid.next = self.decide_gen.m0_valid.val();
        self.tq0.in_last.next = self.decide_gen.m0_last.val();
        self.tq0.out_ready.next = self.g0_ready.val();
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
        self.g3_data.next = self.tq3.out_data.val();
        self.g3_keep.next = self.tq3.out_keep.val();
        self.g3_valid.next = self.tq3.out_valid.val();
        self.g3_last.next = self.tq3.out_last.val();
        self.room0.next = self.tq0.free.val() >= self.k_tree_room.val();
        self.room1.next = (self.decide_gen.trees.val() <= self.k_t1_8.val())
            || (self.tq1.free.val() >= self.k_tree_room.val());
        self.room2.next = (self.decide_gen.trees.val() <= self.k_t2_8.val())
            || (self.tq2.free.val() >= self.k_tree_room.val());
        self.room3.next = (self.decide_gen.trees.val() <= self.k_t3_8.val())
            || (self.tq3.free.val() >= self.k_tree_room.val());
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
        self.host_gen.src_ip.next = self.core.cfg_src_ip.val();
        self.host_gen.src_port.next = self.core.cfg_decide_port.val().get_bits::<16>(0);
        self.host_gen.host_mac.next = self.host_mac.out.val();
        self.host_gen.host_ip.next = self.core.cfg_host_ip.val();
        self.host_gen.ttl.next = self.core.cfg_ttl.val().get_bits::<8>(0);
        self.host_gen.host_port.next = self.core.cfg_host_port.val().get_bits::<16>(0);
        self.hq.clock.next = self.clock.val();
        self.hq.in_data.next = self.host_gen.h_data.val();
        self.hq.in_keep.next = self.host_gen.h_keep.val();
        self.hq.in_valid.next = self.host_gen.h_valid.val();
        self.hq.in_last.next = self.host_gen.h_last.val();
        self.hq.out_ready.next = self.h_ready.val();
        self.host_gen.room.next = self.hq.free.val() >= self.k_host_room.val();
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
        self.reply_gen.src_ip.next = self.core.cfg_src_ip.val();
        self.reply_gen.ttl.next = self.core.cfg_ttl.val().get_bits::<8>(0);
        self.reply_gen.src_port.next = self.core.cfg_client_port.val().get_bits::<16>(0);
        self.reply_gen.cluster.next = self.core.cfg_cluster_id.val();
        self.reply_gen.sender.next = self.core.cfg_node_id.val().get_bits::<8>(0);
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
        self.cfg_node_id.next = self.core.cfg_node_id.val();
        self.cfg_node_count.next = self.core.cfg_node_count.val();
        self.cfg_cluster_id.next = self.core.cfg_cluster_id.val();
        self.cfg_trees.next = self.core.cfg_trees.val();
        self.cfg_loop_period.next = self.core.cfg_loop_period.val();
        self.cfg_timeout.next = self.core.cfg_timeout.val();
        self.cfg_delta.next = self.core.cfg_delta.val();
        self.cfg_drift.next = self.core.cfg_drift.val();
        self.cfg_fifo_depth.next = self.core.cfg_fifo_depth.val();
        self.cfg_batch_max.next = self.core.cfg_batch_max.val();
        self.cfg_mtu.next = self.core.cfg_mtu.val();
        self.cfg_decide_port.next = self.core.cfg_decide_port.val();
        self.cfg_client_port.next = self.core.cfg_client_port.val();
        self.cfg_host_port.next = self.core.cfg_host_port.val();
        self.cfg_late_tick_slack.next = self.core.cfg_late_tick_slack.val();
        self.cfg_tree_group0.next = self.core.cfg_tree_group0.val();
        self.cfg_tree_group1.next = self.core.cfg_tree_group1.val();
        self.cfg_tree_group2.next = self.core.cfg_tree_group2.val();
        self.cfg_tree_group3.next = self.core.cfg_tree_group3.val();
        self.cfg_src_mac_hi.next = self.core.cfg_src_mac_hi.val();
        self.cfg_src_mac_lo.next = self.core.cfg_src_mac_lo.val();
        self.cfg_src_ip.next = self.core.cfg_src_ip.val();
        self.cfg_host_mac_hi.next = self.core.cfg_host_mac_hi.val();
        self.cfg_host_mac_lo.next = self.core.cfg_host_mac_lo.val();
        self.cfg_host_ip.next = self.core.cfg_host_ip.val();
        self.cfg_ttl.next = self.core.cfg_ttl.val();
        self.cfg_auth_mode.next = self.core.cfg_auth_mode.val();
        self.cfg_auth_key.next = self.core.cfg_auth_key.val();
    }
}
