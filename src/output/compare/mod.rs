//! `ipcmark compare` as output sees it: what it reads of a run report
//! ([`input`]: the file's strings made safe, then the typed `RunRecord`) and
//! its table ([`table`]). The comparison itself is `analysis::compare`, its
//! records `record::compare`.

pub mod input;
pub mod table;

pub use input::RunFile;
