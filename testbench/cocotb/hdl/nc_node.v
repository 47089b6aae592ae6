// Test scaffolding (not shipped RTL): one node = the exported nc_core plus one exported
// pkt_parser in front of it, so that the benches push real Ethernet frames.
// The parser serves both the tree ports and the client port: the bench holds `s_client`
// (0: a tree frame on tree port `s_tree`; 1: a client frame) and `s_tree` stable from the first
// beat of a frame to the cycle after its last beat (when the parser's verdict is valid), so
// nc_core sees at most one parsed frame per cycle, as lowi_core requires.
`timescale 1ns / 1ps
module nc_node(
    input  wire        clock,
    input  wire [15:0] csr_addr,
    input  wire [31:0] csr_wdata,
    input  wire        csr_write,
    output wire [31:0] csr_rdata,
    input  wire [63:0] s_data,
    input  wire [7:0]  s_keep,
    input  wire        s_valid,
    input  wire        s_last,
    input  wire        s_client,
    input  wire [1:0]  s_tree,
    output wire        p_valid,
    output wire [1:0]  p_verdict,
    output wire        send,
    output wire [1:0]  send_kind,
    output wire [7:0]  send_count,
    output wire [63:0] send_instance,
    output wire [31:0] send_epoch,
    output wire [31:0] send_seq,
    output wire        lead_deliver,
    output wire        rx_deliver,
    output wire        tick_leader_changed,
    output wire        rx_leader_changed,
    output wire        tick_fault,
    output wire [2:0]  tick_fault_code,
    output wire        rx_fault,
    output wire [2:0]  rx_fault_code,
    output wire        nl_reply,
    output wire [1:0]  state,
    output wire [31:0] status,
    output wire [31:0] epoch,
    output wire [7:0]  leader,
    output wire        leader_busy,
    output wire [63:0] last_instance,
    output wire        ok_valid,
    output wire [31:0] ok_client,
    output wire [63:0] ok_seq,
    output wire [63:0] ok_instance,
    output wire [15:0] ok_index,
    output wire [63:0] ok_payload,
    output wire [7:0]  ok_len,
    output wire [31:0] cfg_node_id,
    output wire [31:0] cfg_cluster_id
);
    wire [31:0] cfg_decide_port, cfg_client_port;
    wire [7:0]  p_sender, p_tree;
    wire [31:0] p_epoch, p_seq, p_client;
    wire [1:0]  p_kind;
    wire [63:0] p_instance, p_req_seq, p_req_payload;
    wire [15:0] p_req_len;
    wire        p_ready;

    pkt_parser parser(
        .clock(clock), .s_data(s_data), .s_keep(s_keep), .s_valid(s_valid), .s_last(s_last),
        .s_ready(p_ready), .client_mode(s_client),
        .port(s_client ? cfg_client_port[15:0] : cfg_decide_port[15:0]),
        .cluster_id(cfg_cluster_id), .valid(p_valid), .verdict(p_verdict), .sender(p_sender),
        .epoch(p_epoch), .seq(p_seq), .tree(p_tree), .decide_kind(p_kind),
        .decide_instance(p_instance), .client(p_client), .req_seq(p_req_seq),
        .req_len(p_req_len), .req_payload(p_req_payload),
        .eth_src(), .eth_dst(), .ip_src(), .udp_src(), .frame_len());

    nc_core core(
        .clock(clock), .csr_addr(csr_addr), .csr_wdata(csr_wdata), .csr_write(csr_write),
        .csr_rdata(csr_rdata),
        .rx_valid(p_valid & ~s_client), .rx_port(s_tree), .rx_class(p_verdict),
        .rx_sender(p_sender), .rx_epoch(p_epoch), .rx_seq(p_seq), .rx_tree(p_tree),
        .rx_kind(p_kind), .rx_instance(p_instance),
        .cl_valid(p_valid & s_client), .cl_class(p_verdict), .cl_len(p_req_len),
        .cl_client(p_client), .cl_seq(p_req_seq), .cl_payload(p_req_payload),
        .send(send), .send_kind(send_kind), .send_count(send_count),
        .send_instance(send_instance), .send_epoch(send_epoch), .send_seq(send_seq),
        .lead_deliver(lead_deliver), .rx_deliver(rx_deliver),
        .tick_leader_changed(tick_leader_changed), .tick_epoch(), .tick_leader(),
        .rx_leader_changed(rx_leader_changed), .tick_fault(tick_fault),
        .tick_fault_code(tick_fault_code), .tick_fault_missing(), .rx_fault(rx_fault),
        .rx_fault_code(rx_fault_code), .state_mode(), .mode_state(), .state_start(),
        .state_rx_active(), .viol_stale(), .viol_deposed(), .nl_reply(nl_reply),
        .nl_leader(), .nl_epoch(), .state(state), .status(status), .epoch(epoch),
        .leader(leader), .leader_busy(leader_busy), .last_instance(last_instance),
        .ok_valid(ok_valid), .ok_client(ok_client), .ok_seq(ok_seq),
        .ok_instance(ok_instance), .ok_index(ok_index), .ok_payload(ok_payload),
        .ok_len(ok_len), .cfg_node_id(cfg_node_id), .cfg_node_count(),
        .cfg_cluster_id(cfg_cluster_id), .cfg_trees(), .cfg_loop_period(), .cfg_timeout(),
        .cfg_delta(), .cfg_drift(), .cfg_fifo_depth(), .cfg_batch_max(), .cfg_mtu(),
        .cfg_decide_port(cfg_decide_port), .cfg_client_port(cfg_client_port),
        .cfg_host_port(), .cfg_late_tick_slack(), .cfg_tree_group0(), .cfg_tree_group1(),
        .cfg_tree_group2(), .cfg_tree_group3());
endmodule
