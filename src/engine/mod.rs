//! The measuring engine: processes, pinning, clocks, calibration, clean-up.
//!
//! It drives mechanisms only through the [`channel::Mechanism`] and
//! [`channel::Endpoint`] traits and never names one.

pub mod channel;
pub mod environment;
pub mod interrupt;
pub mod objects;
pub mod peer;
pub mod pingpong;
pub mod placement;
pub mod runner;
