//! The `timer` group: wake-up latency of a periodic task, the RTOS study's
//! failure count under periodic events, and the QNX study's cost of an
//! interrupt handler. Timed by the engine's periodic model
//! (`crate::engine::models::periodic`); each file here only plans its figures.

pub mod failures;
pub mod irq_overhead;
pub mod latency;

/// Name of the group.
pub const GROUP: &str = "timer";
