//! The measuring engine: processes, pinning, clocks, calibration, clean-up.
//!
//! It drives mechanisms only through the [`channel::Mechanism`] and
//! [`channel::Endpoint`] traits, one-process benchmarks through the
//! [`op::Operation`] and [`op::Op`] traits, and never names one; whole
//! workloads run as a [`os::group::Group`] of processes whose work it does not know.
//!
//! Three rooms, with one-way dependencies `run → models → os`:
//! - [`models`]: the timing models (ping-pong, one-way, stream, operation
//!   loop, event loop, periodic, score) and what they share (calibration,
//!   sampling rules, message buffers);
//! - [`run`]: the run itself: one figure of each model ([`run::runner`]),
//!   figures sampled together ([`run::sweep`]), passes ([`run::passes`]), the
//!   record every figure produces ([`run::figure`]) and the session that
//!   puts them in order ([`run::session`]);
//! - [`os`]: processes and OS objects: peers, groups of processes, placement,
//!   stop requests and watchdogs, named objects and their release, the
//!   environment record, the seccomp probe.
//!
//! Beside them, the contracts mechanisms and benchmarks implement
//! ([`channel`], [`op`]) and the vocabulary every model shares ([`error`],
//! [`measure`], [`message`]); and what the verify rounds' whole-content
//! check costs per byte on this machine ([`verify_cost`]).

pub mod channel;
pub mod error;
pub mod measure;
pub mod message;
pub mod models;
pub mod op;
pub mod os;
pub mod run;
pub mod verify_cost;
