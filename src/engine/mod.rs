//! The measuring engine: processes, pinning, clocks, calibration, clean-up.
//!
//! It drives mechanisms only through the [`channel::Mechanism`] and
//! [`channel::Endpoint`] traits, and one-process benchmarks through the
//! [`op::Operation`] and [`op::Op`] traits, and never names one.

pub mod channel;
pub mod environment;
pub mod interrupt;
pub mod objects;
pub mod op;
pub mod oploop;
pub mod peer;
pub mod pingpong;
pub mod placement;
pub mod probe;
pub mod runner;
