//! Nano-consensus testbench: the deterministic cluster simulator and its property checker.
//!
//! - [`sim`]: n nodes of proto's reference model, an in-memory network with |G| trees, clients,
//!   and the host side of joins; everything drawn from one seed.
//! - [`faults`]: the fault classes and how a seed draws them.
//! - [`check`]: the properties every run is judged by.
//! - [`campaign`]: many seeds in parallel, with a replay command for each failure.
#![warn(missing_docs)]

pub mod campaign;
pub mod check;
pub mod faults;
pub mod rng;
pub mod sim;
