//! nc-lab: the network-namespace testbed, the demo and the benchmarks.

pub mod app_lab;
pub mod bench;
pub mod demo;
pub mod netlab;
pub mod plot;
pub mod progress;
pub mod raft_node;
pub mod soak;
