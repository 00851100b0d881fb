//! File systems a test mounts (as root) and unmounts on every path, a
//! panicking test included: a small tmpfs to fill, a read-only view of a
//! directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A mount point, unmounted when dropped.
pub struct Mount {
    at: PathBuf,
}

fn mount(args: &[&str]) -> Result<(), String> {
    let out = Command::new("mount")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("mount: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "mount {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn check_root() -> Result<(), String> {
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root: cannot mount".into());
    }
    Ok(())
}

impl Mount {
    /// A tmpfs of `size` (as mount's `size=`, e.g. `64k`) at `at` (made if
    /// missing), or why not (the caller prints it as SKIPPED).
    pub fn tmpfs(at: &Path, size: &str) -> Result<Mount, String> {
        check_root()?;
        std::fs::create_dir_all(at).map_err(|e| format!("mkdir {}: {e}", at.display()))?;
        let at_s = at.to_str().unwrap();
        mount(&["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs", at_s])?;
        Ok(Mount { at: at.into() })
    }

    /// `dir` seen read-only at `at` (a bind mount made read-only).
    pub fn read_only_view(dir: &Path, at: &Path) -> Result<Mount, String> {
        check_root()?;
        std::fs::create_dir_all(at).map_err(|e| format!("mkdir {}: {e}", at.display()))?;
        let at_s = at.to_str().unwrap();
        mount(&["--bind", dir.to_str().unwrap(), at_s])?;
        let view = Mount { at: at.into() };
        mount(&["-o", "remount,ro,bind", at_s])?;
        Ok(view)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.at)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            // Busy (a child still inside): detach it, so it never outlives the test.
            let _ = Command::new("umount").arg("-l").arg(&self.at).status();
        }
    }
}
