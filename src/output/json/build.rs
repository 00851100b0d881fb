//! Which build of ipcmark wrote a report: the `build` object of every JSON
//! report (`{"version", "commit", "dirty", "features"}`, documented in
//! docs/json-schema.md) and the line `ipcmark --version` prints. The facts
//! come from the build script (`build.rs`): the git commit, whether the tree
//! had changes, the enabled cargo features.

use crate::record::build::BuildRecord;

/// The package version (`Cargo.toml`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit the binary was built from: 40 hex digits (64 in a SHA-256
/// repository), or "unknown"
/// (no git, no `.git`: a crate unpacked from a tarball).
pub const COMMIT: &str = env!("IPCMARK_COMMIT");

/// "true", "false" or "unknown" (see [`BuildRecord::dirty`]).
const DIRTY: &str = env!("IPCMARK_DIRTY");

/// The enabled cargo features, comma-separated ("" for none).
const FEATURES: &str = env!("IPCMARK_FEATURES");

/// What `ipcmark --version` prints after the program's name, e.g.
/// `0.1.0 (commit 0123…cdef, clean tree; features: none)`, composed by the
/// build script from the same values (a test checks that they agree).
pub const VERSION_LINE: &str = env!("IPCMARK_VERSION_LINE");

/// This binary's build.
pub fn current() -> BuildRecord {
    {
        BuildRecord {
            version: VERSION.into(),
            commit: COMMIT.into(),
            dirty: match DIRTY {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            },
            features: FEATURES
                .split(',')
                .filter(|f| !f.is_empty())
                .map(Into::into)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_and_the_version_line_agree() {
        let b = current();
        assert_eq!(b.version, env!("CARGO_PKG_VERSION"));
        assert!(
            b.commit == "unknown"
                || (matches!(b.commit.len(), 40 | 64)
                    && b.commit.bytes().all(|c| c.is_ascii_hexdigit())),
            "{}",
            b.commit
        );
        assert_eq!(b.dirty.is_none(), b.commit == "unknown");
        assert!(
            VERSION_LINE.starts_with(b.version.as_str()),
            "{VERSION_LINE}"
        );
        assert!(VERSION_LINE.contains(b.commit.as_str()), "{VERSION_LINE}");
        let features = if b.features.is_empty() {
            "none".to_string()
        } else {
            b.features.join(",")
        };
        assert!(
            VERSION_LINE.ends_with(&format!("features: {features})")),
            "{VERSION_LINE}"
        );
        match b.dirty {
            Some(true) => assert!(VERSION_LINE.contains(", dirty tree;")),
            Some(false) => assert!(VERSION_LINE.contains(", clean tree;")),
            None => assert!(!VERSION_LINE.contains("tree")),
        }
    }
}
