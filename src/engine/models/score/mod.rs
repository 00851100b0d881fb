//! The score timing model: operations completed in a fixed period by a set
//! of threads on one CPU (Thread-Metric's "Time Period Total").
//!
//! ```text
//! score S            = operations the test's threads complete in the period
//! interval count     = operations completed between two reports (the period is cut into INTERVALS)
//! rate               = S / measured length of the period
//! R (normalised)     = rate of the test / rate of the baseline test run in the same run
//!                      (= S / H for equal periods: the RTOS study's R = S / H)
//! ```
//!
//! A benchmark describes its test and never times anything; the engine runs
//! it, reads the counters at each report and records what it found. By
//! concern, each depending only on those above it:
//! - [`board`]: what the test's threads share (counters, gates, the start
//!   barrier, the stop flag) and the calls their loops make;
//! - [`contract`]: what a benchmark implements ([`Scored`]) and the settings;
//! - [`reporter`]: the reporter's wake-ups, reads and checks;
//! - [`facts`]: the record of a figure (JSON `score`);
//! - [`measure`](mod@measure): one figure, threads started and joined on every path.
//!
//! The checks and the priority scale of a particular benchmark (Thread-Metric's)
//! are the benchmark's own: the engine keeps only what any score benchmark needs.

pub mod board;
pub mod contract;
pub mod facts;
pub mod measure;
pub mod reporter;

// The paths the rest of the crate uses; everything else by its module's path.
pub use contract::{
    Check, INTERVALS, REPORTER_FIFO, ScoreContext, ScoreInfo, ScoreSettings, ScoreTest, Scored,
    ThreadSpec, body, routine,
};
pub use facts::{CounterRecord, ScoreFacts, ThreadRecord};
pub use measure::measure;
