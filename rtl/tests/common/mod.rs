//! Test harness shared by the integration tests (each test file is its own crate and uses a
//! part of it, hence `dead_code` allowed): the lockstep against `proto`'s model and the packet
//! builders the tests share. Test code only: nothing in the `rtl` library depends on it.
#![allow(dead_code)]

pub mod lockstep;
