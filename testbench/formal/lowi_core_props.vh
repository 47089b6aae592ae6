// Formal properties of lowi_core, included at the end of the module (formal/run.sh inserts
// `include "lowi_core_props.vh" before `endmodule // lowi_core` in a copy of the exported file,
// so these can name the internal registers: r_state$q, r_leader$q, r_loop$q, ...).
// Proved with yosys 0.23: sat -tempinduct -prove-asserts -set-assumes (see formal/run.sh).

// ---- assumptions: the configuration is constant while the core runs (csr.v takes config
// writes only while Disabled) and inside its legal range.
reg [7:0]  f_n;
reg [7:0]  f_id;
reg [31:0] f_period;
reg [31:0] f_gap;
always @(posedge clock) begin
    f_n <= f_n;
    f_id <= f_id;
    f_period <= f_period;
    f_gap <= f_gap;
end
always @(*) begin
    assume(node_count == f_n);
    assume(node_id == f_id);
    assume(loop_period == f_period);
    assume(min_gap == f_gap);
    assume(node_count >= 8'd1 && node_count <= 8'd64);
    assume(node_id < node_count);
    assume(loop_period >= 32'd1);
    assume(min_gap <= loop_period);
    // egress_fifo's nz is its length's `!= 0`, registered beside it
    assume(fifo_nz == (fifo_len != 13'd0));
    // and its room / room_b are the length's comparisons with fifo_depth (+ batch_max)
    assume(fifo_room == (fifo_len < fifo_depth));
    assume(fifo_room_b == ({1'b0, fifo_len} < {1'b0, fifo_depth} + {1'b0, batch_max}));
    // csr passes a CTRL write on only with a value the core can take: no undefined bit, JOIN
    // only with ENABLE (lowi_core's `ctrl_write` contract).
    assume(!ctrl_write || (ctrl_value[31:5] == 27'd0 && (!ctrl_value[1] || ctrl_value[0])));
    // The input contract of a DECIDE copy (pkt_parser, as proto's Node, refuses as UNAUTHORIZED
    // every DECIDE whose sender is not its epoch's leader, epoch mod n): an EXPECTED copy's
    // sender is that leader, so below n. The core takes an adopted epoch's leader from it,
    // one cycle later from its event register (i_rx_sender; rtl/README "The event pipeline").
    if (rx_valid && rx_class == c_expected)
        assume(rx_sender < node_count);
end
// The smallest gap between two sends: min_gap with early sends on, else the loop period.
wire [31:0] f_send_gap = (min_gap != 32'd0) ? min_gap : loop_period;

// ---- observer state
reg        f_past = 1'b0;       // not the first cycle
reg        f_had_send = 1'b0;   // some send happened
reg [31:0] f_since = 32'd0;     // cycles since the last send (saturating, as r_loop)
reg [31:0] f_last_epoch = 32'd0; // epoch of the last send
reg        f_was_faulted = 1'b0; // last cycle: state was FAULTED
reg        f_disable_write = 1'b0; // last cycle: a CTRL write with ENABLE = 0, or with JOIN
                                   // (a rejoin: ENABLE|JOIN restarts a faulted node joining)
reg        f_ctrl = 1'b0;       // a CTRL write since the last send (a disable/enable resets
                                // the protocol state: a new loop, not a continuation)
always @(posedge clock) begin
    f_past <= 1'b1;
    f_ctrl <= ctrl_write || (f_ctrl && !send);
    if (send) begin
        f_had_send <= 1'b1;
        f_since <= 32'd1;
        f_last_epoch <= send_epoch;
    end else if (f_since != 32'hffffffff) begin
        f_since <= f_since + 32'd1;
    end
    f_was_faulted <= (r_state$q == s_faulted);
    f_disable_write <= ctrl_write && (!ctrl_value[0] || ctrl_value[1]);
end

always @(*) begin
    // csr passes a CTRL write on a cycle after its bus cycle, with node_id as it was then
    // (r_id0 keeps node_id == 0 beside it): never in the first cycle.
    assume(!ctrl_write || f_past);
end

// Each property group is proved separately (run.sh defines one of P1, P2, P3 per proof).
always @(*) begin
`ifdef P1
    // P1: the leader id is always < n.
    assert(r_leader$q < node_count);
    // auxiliary invariant: the next leader kept beside r_leader (set by the ENABLE write that
    // leaves DISABLED, then kept with every leader change)
    if (r_state$q != s_disabled) begin
        assert(r_nl$q == ((r_leader$q + 8'd1 == node_count) ? 8'd0 : r_leader$q + 8'd1));
        assert(r_nl_me$q == (r_nl$q == node_id));
    end
`endif
`ifdef P2
    // P2: no DELIVER (nor any send) while faulted, and FAULTED is left only by a CTRL write
    // that clears ENABLE (re-enable to come back) or sets JOIN (rejoin, as the model does).
    if (r_state$q == s_faulted) begin
        assert(!rx_deliver);
        assert(!lead_deliver);
        assert(!send);
    end
    if (f_was_faulted && r_state$q != s_faulted)
        assert(f_disable_write);
`endif
`ifdef P3
    // P3: never two sends of one epoch within the send gap (min_gap with early sends on, else
    // the loop period; a START or a new epoch's first send may follow sooner: those are new
    // loops), unless CTRL was written since the last send.
    if (send && f_had_send && send_epoch == f_last_epoch && !ctrl_write && !f_ctrl)
        assert(f_since >= f_send_gap);
    // auxiliary invariants
    if (f_had_send)
        assert(r_loop$q == f_since);
    // r_loop + 1 kept beside it (wrapping)
    assert(r_loop1$q == r_loop$q + 32'd1);
    // the loop comparisons kept beside r_loop (recomputed every cycle)
    if (f_past) begin
        assert(r_lp$q == (r_loop$q >= loop_period));
        assert(r_mg$q == (min_gap != 32'd0 && r_loop$q >= min_gap));
    end
    if (f_had_send && !f_ctrl)
        assert(r_epoch$q >= f_last_epoch);
    // a joining node got there by a CTRL write and sends nothing (its lock-on may take an
    // epoch below the last one it sent in)
    if (r_state$q == s_joining && f_had_send)
        assert(f_ctrl);
`endif
    // every group: the state is one of the five codes (and its decodes are its own), and the successors kept beside the
    // epoch and the instance are theirs, as is the epoch's last-value flag (r_emax, kept from
    // the candidates of r_epoch's next value since 2026-11-28; r_lins3, kept beside the
    // instance registers that are applied a cycle late since 2026-11-28: the candidates w_*
    // are set from the cycle before, so an induction of length 2 or more needs no invariant
    // of theirs)
    assert(r_state$q <= s_joining);
    // the state's decodes the tick reads, kept beside r_state / r_synced / r_lead (since
    // 2026-11-28, from their next values)
    assert(r_on$q == ((r_state$q == s_armed) || (r_state$q == s_active)
                      || (r_state$q == s_joining && r_synced$q)));
    assert(r_fol$q == (r_state$q == s_active && !r_lead$q));
    assert(r_led$q == (r_state$q == s_active && r_lead$q));
    assert(r_arm$q == (r_state$q == s_armed));
    assert(r_jn$q == (r_state$q == s_joining));
    assert(r_dis$q == (r_state$q == s_disabled));
    if (f_past)
        assert(r_id0$q == (node_id == 8'd0));
    // a joining node's tick cannot fault before its lock-on (no window, no timeout):
    // lowi_core's lock-on judgement (`j_syncing`) leaves the tick's fault out on this
    // (since 2026-12-07)
    if (r_jn$q && !r_synced$q)
        assert(!t_fault);
    assert(r_epoch1$q == r_epoch$q + 32'd1);
    assert(r_emax$q == (r_epoch$q == 32'hffffffff));
    assert(r_lins2$q == r_lins1$q + 64'd1);
    assert(r_lins3$q == r_lins2$q + 64'd1);
    // w_l4's pick after a placement takes w_p3 for w_p2 + 1 (both loaded every cycle)
    if (f_past)
        assert(w_p3$q == w_p2$q + 64'd1);
end
