//! nc-lab: the network-namespace testbed, the demo and the benchmarks.

pub mod bench;
pub mod demo;
pub mod netlab;
pub mod raft_node;
pub mod soak;
