//! Output: the JSON reports, the terminal tables and progress. Reads results,
//! never measures.

pub mod compare;
pub mod cost_model;
pub mod json;
pub mod list;
pub mod page;
pub mod progress;
pub mod recorder;
pub mod report;
pub mod table;
pub mod warnings;
pub mod workload;
