//! The bad-usage checker: every refusal is exit 2 and one clear line.

use super::{Sandbox, stderr, stdout};
use std::path::Path;
use std::time::Duration;

/// Runs `argv` and asserts ipcmark refused it as bad usage: exit 2, one
/// line on stderr that starts with "ipcmark: " and holds every needle, no
/// panic or backtrace, nothing on stdout. Returns the line.
pub fn refused(sb: &Sandbox, argv: &[&str], needles: &[&str]) -> String {
    let out = sb.run(argv, Duration::from_secs(20));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{argv:?}: not one line:\n{err}"
    );
    assert!(err.starts_with("ipcmark: "), "{argv:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{argv:?}: {err:?} lacks {n:?}");
    }
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{argv:?}: {err}"
    );
    assert!(stdout(&out).is_empty(), "{argv:?} printed to stdout");
    err
}

/// What a refusal's line must hold: one needle (an empty one checks only
/// the form of the line), or several.
pub trait Needles {
    fn needles(&self) -> &[&str];
}

impl Needles for &str {
    fn needles(&self) -> &[&str] {
        std::slice::from_ref(self)
    }
}

impl Needles for &[&str] {
    fn needles(&self) -> &[&str] {
        self
    }
}

/// Asserts that ipcmark refuses every case (a command line, and what its
/// line must hold) as [`refused`] does; with `json` (the file the cases
/// name with --json), that none of them wrote it.
pub fn refused_all<N: Needles>(sb: &Sandbox, cases: &[(&[&str], N)], json: Option<&Path>) {
    for (argv, needles) in cases {
        refused(sb, argv, needles.needles());
        if let Some(json) = json {
            assert!(!json.exists(), "{argv:?} wrote the JSON file");
        }
    }
}
