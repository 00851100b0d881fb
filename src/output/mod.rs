//! Output: the JSON reports, the terminal tables and progress. Reads results,
//! never measures.

pub mod advise;
pub mod check;
pub mod compare;
pub mod cost_model;
pub mod csv;
pub mod doctor;
pub mod explain;
pub mod hlog;
pub mod json;
pub mod list;
pub mod machine;
pub mod map;
pub mod page;
pub mod progress;
pub mod rate;
pub mod recorder;
pub mod report;
pub mod sanitise;
pub mod selftest;
pub mod stored;
pub mod table;
pub mod terminal;
pub mod warnings;
pub mod watch;
pub mod workload;
