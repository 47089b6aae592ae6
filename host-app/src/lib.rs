//! Host applications on Nano-consensus (Redis-NC, ZooKeeper-NC): the building blocks landed so
//! far. See README.md for what exists and what does not yet.

pub mod auth;
pub mod engine_watch;
pub mod fd_limit;
pub mod feed;
pub mod front;
pub mod lincheck;
pub mod metrics;
pub mod propose;
pub mod redis;
pub mod resp;
pub mod zk;
pub mod zk_front;
