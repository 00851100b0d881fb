//! The measuring engine: processes, pinning, clocks, calibration, clean-up.
//!
//! It drives mechanisms only through the [`channel::Mechanism`] and
//! [`channel::Endpoint`] traits, one-process benchmarks through the
//! [`op::Operation`] and [`op::Op`] traits, and never names one; whole
//! workloads run as a [`group::Group`] of processes whose work it does not know.

pub mod calibrate;
pub mod channel;
pub mod environment;
pub mod eventloop;
pub mod group;
pub mod interrupt;
pub mod objects;
pub mod oneway;
pub mod op;
pub mod oploop;
pub mod passes;
pub mod peer;
pub mod periodic;
pub mod pingpong;
pub mod placement;
pub mod probe;
pub mod region;
pub mod runner;
pub mod sampling;
pub mod score;
pub mod stream;
pub mod sweep;
