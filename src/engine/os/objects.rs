//! Names of the OS objects ipcmark creates, their release, and `ipcmark clean`.
//!
//! Every named object carries the prefix `ipcmark-<pid>-`, and every System V
//! key encodes the creating pid, so that objects left by a killed run can be
//! told apart from those of a run still going.

use crate::sys::process::{getpid, process_exists};
use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Prefix of every named object.
pub const PREFIX: &str = "ipcmark-";

/// Top byte of every System V key ipcmark uses ('i').
const SYSV_KEY_TAG: i32 = 0x69;

/// Hands out unique names for the objects of one run.
pub struct ObjectNamer {
    pid: libc::pid_t,
    counter: Cell<u32>,
}

impl Default for ObjectNamer {
    fn default() -> Self {
        Self::new()
    }
}

impl ObjectNamer {
    /// A namer for the calling process.
    pub fn new() -> Self {
        ObjectNamer {
            pid: getpid(),
            counter: Cell::new(0),
        }
    }

    fn next(&self) -> u32 {
        let n = self.counter.get();
        self.counter.set(n.wrapping_add(1));
        n
    }

    /// A unique name `ipcmark-<pid>-<what>-<n>` (no leading slash).
    pub fn name(&self, what: &str) -> String {
        // Process-wide, not per namer: two namers in one process (tests run
        // in parallel threads) must never hand out the same name.
        static NEXT_NAME: AtomicU32 = AtomicU32::new(0);
        let n = NEXT_NAME.fetch_add(1, Ordering::Relaxed);
        format!("{PREFIX}{}-{what}-{n}", self.pid)
    }

    /// A unique System V key that encodes this pid: tag (8 bits), pid (22 bits),
    /// slot (2 bits). Slots cycle, so at most 4 keyed objects may live at once.
    pub fn sysv_key(&self) -> libc::key_t {
        let slot = (self.next() & 3) as i32;
        (SYSV_KEY_TAG << 24) | ((self.pid & 0x3F_FFFF) << 2) | slot
    }

    /// Creates a fresh directory `ipcmark-<pid>-<what>-<n>` under `base`.
    pub fn temp_dir(&self, base: &Path, what: &str) -> std::io::Result<PathBuf> {
        let dir = base.join(self.name(what));
        fs::create_dir(&dir)?;
        Ok(dir)
    }
}

/// Held by unit tests that create System V objects: a process has four
/// System V keys (two bits of the key beside the pid), and tests run as
/// threads of one process, so more than four at once would exhaust them.
#[cfg(test)]
pub fn sysv_test_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The pid encoded in an ipcmark System V key, if the key is one of ours.
pub fn pid_of_sysv_key(key: i64) -> Option<libc::pid_t> {
    let key = key as i32;
    ((key >> 24) == SYSV_KEY_TAG).then_some((key >> 2) & 0x3F_FFFF)
}

/// The pid in a name `ipcmark-<pid>-…` (also `sem.ipcmark-<pid>-…`).
pub fn pid_of_name(name: &str) -> Option<libc::pid_t> {
    let rest = name
        .strip_prefix("sem.")
        .unwrap_or(name)
        .strip_prefix(PREFIX)?;
    rest.split('-').next()?.parse().ok()
}

/// Where disk-backed temporary objects go: `$TMPDIR`, else `/var/tmp`
/// (which, unlike `/tmp`, is on disk on the usual distributions).
pub fn disk_temp_base() -> PathBuf {
    std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(|| PathBuf::from("/var/tmp"))
}

/// Where memory-backed temporary objects go.
pub fn tmpfs_base() -> PathBuf {
    PathBuf::from("/dev/shm")
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

    /// Removes `dir` and everything in it on drop.
    pub fn remove_dir(dir: PathBuf) -> Self {
        Cleanup::new(move || {
            let _ = fs::remove_dir_all(&dir);
        })
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

/// What `ipcmark clean` found and did.
#[derive(Debug, Default)]
pub struct CleanReport {
    /// Objects removed, as "kind name".
    pub removed: Vec<String>,
    /// Objects left alone because their run is still alive.
    pub live: Vec<String>,
    /// Objects that could not be removed, with the reason.
    pub failed: Vec<String>,
}

/// Removes every ipcmark object whose creating process no longer exists.
pub fn clean_stale() -> CleanReport {
    let mut report = CleanReport::default();
    let mut dirs = vec![tmpfs_base(), disk_temp_base(), std::env::temp_dir()];
    dirs.push(PathBuf::from("/dev/mqueue"));
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        clean_dir(&dir, &mut report);
    }
    for (kind, file) in [
        ("msg", "/proc/sysvipc/msg"),
        ("sem", "/proc/sysvipc/sem"),
        ("shm", "/proc/sysvipc/shm"),
    ] {
        clean_sysv(kind, file, &mut report);
    }
    report
}

fn clean_dir(dir: &Path, report: &mut CleanReport) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = pid_of_name(&name) else {
            continue;
        };
        let path = entry.path();
        let label = path.display().to_string();
        if process_exists(pid) {
            report.live.push(label);
            continue;
        }
        let res = if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        match res {
            Ok(()) => report.removed.push(label),
            Err(e) => report.failed.push(format!("{label}: {e}")),
        }
    }
}

fn clean_sysv(kind: &str, file: &str, report: &mut CleanReport) {
    let Ok(text) = fs::read_to_string(file) else {
        return;
    };
    for line in text.lines().skip(1) {
        let mut cols = line.split_whitespace();
        let (Some(key), Some(id)) = (cols.next(), cols.next()) else {
            continue;
        };
        let (Ok(key), Ok(id)) = (key.parse::<i64>(), id.parse::<i32>()) else {
            continue;
        };
        let Some(pid) = pid_of_sysv_key(key) else {
            continue;
        };
        let label = format!("sysv-{kind} id {id} (key {key:#x})");
        if process_exists(pid) {
            report.live.push(label);
            continue;
        }
        match crate::sys::sysv::remove(kind, id) {
            Ok(()) => report.removed.push(label),
            Err(e) => report.failed.push(format!("{label}: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysv_key_round_trips_pid() {
        let namer = ObjectNamer::new();
        let key = namer.sysv_key();
        assert_eq!(pid_of_sysv_key(key as i64), Some(getpid()));
        assert_eq!(pid_of_sysv_key(0x1234), None);
    }

    #[test]
    fn names_carry_pid_and_are_unique() {
        let namer = ObjectNamer::new();
        let a = namer.name("fifo");
        let b = namer.name("fifo");
        assert_ne!(a, b);
        assert_eq!(pid_of_name(&a), Some(getpid()));
        assert_eq!(pid_of_name(&format!("sem.{a}")), Some(getpid()));
        assert_eq!(pid_of_name("other-123"), None);
    }
}
