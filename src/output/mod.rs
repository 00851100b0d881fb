//! Output: the JSON report, the terminal table and progress. Reads results,
//! never measures.

pub mod json;
pub mod progress;
pub mod table;
pub mod warnings;
