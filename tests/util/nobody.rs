//! Running the binary as the unprivileged user `nobody` (`runuser -u nobody
//! --`), as a user without root would: possible only when the tests run as
//! root, `runuser` exists and `nobody` may execute the binary (copied to a
//! world-readable directory when the build's own is out of its reach).

use super::{Sandbox, bin};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The binary under test, as `nobody` runs it.
pub struct Nobody {
    bin: PathBuf,
    /// The directory of a copy of the binary, removed with this value.
    _copy: Option<tempfile::TempDir>,
}

/// Whether `nobody` succeeds at `args` (a command run with `runuser`).
fn nobody_can(args: &[&str]) -> bool {
    Command::new("runuser")
        .args(["-u", "nobody", "--"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Nobody {
    /// [`Nobody::new`], or `None` after printing why `test` is skipped.
    pub fn or_skip(test: &str) -> Option<Nobody> {
        Nobody::new()
            .map_err(|why| eprintln!("SKIPPED {test}: {why}"))
            .ok()
    }

    /// The binary as `nobody` runs it, or why this machine cannot (the
    /// caller prints it as SKIPPED: a test never passes silently).
    pub fn new() -> Result<Nobody, String> {
        // SAFETY: geteuid has no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root: cannot switch to the user nobody".into());
        }
        if !nobody_can(&["true"]) {
            return Err("`runuser -u nobody -- true` fails (no runuser, or no user nobody)".into());
        }
        let own = bin();
        if nobody_can(&[own.to_str().unwrap(), "--version"]) {
            return Ok(Nobody {
                bin: own,
                _copy: None,
            });
        }
        // The build directory is out of nobody's reach: a copy in a 0755
        // directory of its own.
        let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
        let copy = dir.path().join("ipcmark");
        std::fs::copy(&own, &copy).map_err(|e| format!("copy the binary: {e}"))?;
        for (path, mode) in [(dir.path(), 0o755), (copy.as_path(), 0o755)] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
                .map_err(|e| format!("chmod {}: {e}", path.display()))?;
        }
        if !nobody_can(&[copy.to_str().unwrap(), "--version"]) {
            return Err(format!("nobody cannot run {} either", copy.display()));
        }
        Ok(Nobody {
            bin: copy,
            _copy: Some(dir),
        })
    }

    /// A command running ipcmark as `nobody` in sandbox `sb`, whose directory
    /// becomes nobody's to write: the working directory and TMPDIR.
    pub fn cmd(&self, sb: &Sandbox, args: &[&str]) -> Command {
        std::fs::set_permissions(sb.dir.path(), std::fs::Permissions::from_mode(0o777))
            .expect("chmod the sandbox");
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--", "env"])
            .arg(format!("TMPDIR={}", sb.dir.path().display()))
            // nobody's own history, in the sandbox, never the real one.
            .arg(format!(
                "XDG_DATA_HOME={}",
                sb.dir.path().join("nobody-data").display()
            ))
            .arg(&self.bin)
            .args(args)
            .current_dir(sb.dir.path())
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }
}
