//! Nano-consensus protocol: the one definition.
//!
//! - [`wire`]: every packet kind, zero-copy parse with validation, and emit.
//! - [`auth`]: packet tags (SipHash-2-4 with a cluster key) and key rings.
//! - [`frame`]: Ethernet/IPv4/UDP framing around those packets.
//! - [`regs`]: the register map (addresses, widths, reset values, legal ranges) and config validation.
//! - [`node`] (feature `alloc`): the sans-IO LOWI reference model (RSBCAST, OWI, LOWI; §4 and §5.2).
//! - [`apply`] (feature `alloc`): exactly-once application of decided entries per (client, seq).
//! - [`transfer`] (feature `alloc`): snapshot chunking and reassembly (STATE_CHUNK).
//! - [`log`] (feature `alloc`): the decision log every driver keeps, and its snapshot codec.
//! - [`join`] (feature `alloc`): the join and the other state transfers, sans-IO.
#![no_std]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;

pub mod auth;
pub mod frame;
pub mod regs;
#[cfg(feature = "alloc")]
pub mod rsbcast;
pub mod wire;

#[cfg(feature = "alloc")]
pub mod apply;
#[cfg(feature = "alloc")]
pub mod join;
#[cfg(feature = "alloc")]
pub mod log;
#[cfg(feature = "alloc")]
pub mod node;
#[cfg(feature = "alloc")]
pub mod transfer;
