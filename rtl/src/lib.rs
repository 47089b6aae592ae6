//! The Nano-consensus FPGA core in rust-hdl (see `rtl/README.md`).
#![allow(missing_docs)]

pub mod csr;
pub mod egress_fifo;
pub mod export;
pub mod host_gen;
pub mod layout;
pub mod lowi_core;
pub mod nc_core;
pub mod nc_engine;
pub mod pkt_gen;
pub mod pkt_parser;
pub mod pkt_stream;
pub mod prim;
pub mod reply_gen;
pub mod req_capture;
pub mod rsbcast_rx;
pub mod sim;
