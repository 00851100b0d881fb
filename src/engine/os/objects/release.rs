//! The release of what a run made: [`Cleanup`] guards, which fire only in
//! the process that created them, and the list of what they could not
//! remove ([`take_left_behind`]). Apart because every creator of objects
//! needs it and it needs nothing of names or of `clean`: the bottom of this
//! folder.

use crate::sys::process::getpid;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the process's clean-up could not remove, for [`take_left_behind`].
static LEFT_BEHIND: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Notes an object that a release action could not remove: "what: why".
pub fn left_behind(what: String) {
    LEFT_BEHIND
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(what);
}

/// The objects this process's release actions could not remove so far, as
/// "what: why" (the command line says so before it exits); empties the list.
pub fn take_left_behind() -> Vec<String> {
    std::mem::take(&mut *LEFT_BEHIND.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Runs a release action when dropped, but only in the process that created it:
/// a forked peer inherits the value and must never release the parent's objects.
pub struct Cleanup {
    owner: libc::pid_t,
    action: Option<Box<dyn FnOnce() + Send>>,
}

impl Cleanup {
    /// Registers `action` to run on drop in the calling process.
    pub fn new(action: impl FnOnce() + Send + 'static) -> Self {
        Cleanup {
            owner: getpid(),
            action: Some(Box::new(action)),
        }
    }

    /// Removes `dir` and everything in it on drop; what it cannot remove is
    /// noted for [`take_left_behind`].
    pub fn remove_dir(dir: PathBuf) -> Self {
        Cleanup::remove_tree(dir, &[])
    }

    /// Removes the `entries` (file names) that `dir` may hold, then `dir`, on
    /// drop. By path, with no descriptor: a release that runs because the
    /// process ran out of descriptors (EMFILE) must not need one, as
    /// `remove_dir_all` does to list a directory. Anything else in `dir`
    /// is then removed by `remove_dir_all`; what cannot be removed is noted
    /// for [`take_left_behind`].
    pub fn remove_tree(dir: PathBuf, entries: &'static [&'static str]) -> Self {
        Cleanup::new(move || {
            if let Err(e) = remove_tree(&dir, entries) {
                left_behind(format!("{}: {e}", dir.display()));
            }
        })
    }
}

/// See [`Cleanup::remove_tree`].
fn remove_tree(dir: &Path, entries: &[&str]) -> io::Result<()> {
    let gone = |r: io::Result<()>| match r {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    };
    for entry in entries {
        gone(fs::remove_file(dir.join(entry)))?;
    }
    match fs::remove_dir(dir) {
        Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => gone(fs::remove_dir_all(dir)),
        other => gone(other),
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if getpid() == self.owner
            && let Some(action) = self.action.take()
        {
            action();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_removed_by_its_entries_then_whole() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("t");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("to-server"), b"").unwrap();
        assert!(remove_tree(&dir, &["to-server", "to-client"]).is_ok());
        assert!(!dir.exists());
        // Something unexpected in it: removed all the same.
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("stray"), b"").unwrap();
        assert!(remove_tree(&dir, &["to-server"]).is_ok());
        assert!(!dir.exists());
        // Already gone: nothing to say.
        assert!(remove_tree(&dir, &["to-server"]).is_ok());
    }
}
