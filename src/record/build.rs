//! Which build of ipcmark wrote a report: the `build` object of every JSON
//! report (`{"version", "commit", "dirty", "features"}`, documented in
//! docs/json-schema.md).

use serde::{Deserialize, Serialize};

/// The `build` object of a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildRecord {
    /// The package version, as `ipcmark_version`.
    pub version: String,
    /// 40 (or 64) hex digits, or "unknown".
    pub commit: String,
    /// Whether `git status --porcelain` listed changes (tracked or untracked
    /// files) when the binary was built; null when the commit is unknown.
    pub dirty: Option<bool>,
    /// The enabled cargo features: `[]` by default, `["mpi"]` in a build
    /// with MPI (`ipcmark mpi`).
    pub features: Vec<String>,
}
