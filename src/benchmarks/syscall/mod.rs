//! The `syscall` group: single system calls timed in one process, as the
//! MINIX study timed them (loop overhead measured apart and subtracted,
//! iteration counts calibrated per call).
//!
//! Each benchmark names the system calls one operation makes; the engine
//! proves them with a seccomp probe. Those that move bytes or create
//! processes also give the kernel's own count of that work (`/proc/self/io`,
//! `/proc/stat`), which the engine checks against the number of operations.

pub mod clock_gettime;
pub mod create_unlink;
pub mod fork;
pub mod getpid;
pub mod gettid;
pub mod lseek;
pub mod mmap;
pub mod open_close;
pub mod read;
pub mod spawn;
pub mod stat;
pub mod write;

use crate::engine::channel::ChannelError;
use crate::engine::op::{KernelCall, OpContext};
use crate::engine::os::objects::{Cleanup, disk_temp_base, tmpfs_base};
use crate::sys::fd::fs_type;
use crate::sys::file::c_path;
use crate::sys::seccomp::calls;
use std::ffi::CString;
use std::io::Write;
use std::path::PathBuf;

/// The group these benchmarks belong to.
pub const GROUP: &str = "syscall";

/// Bytes each read and write benchmark moves per call (the MINIX study's 64 KB).
pub const RW_BYTES: usize = 64 * 1024;

// The system calls the benchmarks name in their `OpInfo`, each with every
// number glibc may use for it; the engine's probe proves them.

const fn call(name: &'static str, nrs: &'static [libc::c_long]) -> KernelCall {
    KernelCall { name, nrs }
}

pub(crate) const GETPID: KernelCall = call("getpid", calls::GETPID);
pub(crate) const GETTID: KernelCall = call("gettid", calls::GETTID);
pub(crate) const CLOCK_GETTIME: KernelCall = call("clock_gettime", calls::CLOCK_GETTIME);
pub(crate) const LSEEK: KernelCall = call("lseek", calls::LSEEK);
pub(crate) const STAT: KernelCall = call("stat", calls::STAT);
pub(crate) const OPEN: KernelCall = call("open", calls::OPEN);
pub(crate) const CLOSE: KernelCall = call("close", calls::CLOSE);
pub(crate) const PREAD: KernelCall = call("pread64", calls::PREAD);
pub(crate) const PWRITE: KernelCall = call("pwrite64", calls::PWRITE);
pub(crate) const WRITE: KernelCall = call("write", calls::WRITE);
pub(crate) const UNLINK: KernelCall = call("unlink", calls::UNLINK);
pub(crate) const MMAP: KernelCall = call("mmap", calls::MMAP);
pub(crate) const MUNMAP: KernelCall = call("munmap", calls::MUNMAP);
pub(crate) const CLONE: KernelCall = call("clone", calls::CLONE);
pub(crate) const EXECVE: KernelCall = call("execve", calls::EXEC);
pub(crate) const WAIT4: KernelCall = call("wait4", calls::WAIT);

/// Where a benchmark's file lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The disk file system: `$TMPDIR`, else `/var/tmp`.
    Disk,
    /// tmpfs: `/dev/shm`.
    Tmpfs,
}

impl Place {
    fn base(self) -> PathBuf {
        match self {
            Place::Disk => disk_temp_base(),
            Place::Tmpfs => tmpfs_base(),
        }
    }
}

/// A fresh directory `ipcmark-<pid>-syscall-<n>` holding a file `data`,
/// removed (with whatever else is in it) when dropped.
pub struct DataFile {
    /// The directory.
    pub dir: PathBuf,
    /// `dir/data` as a C string, for the calls that take a path.
    pub path: CString,
    /// Its inode number.
    pub ino: u64,
    /// Where it lives and on which file system, for the result's note.
    pub note: String,
    _cleanup: Cleanup,
}

/// Creates a [`DataFile`] of `len` bytes under `place`. The file is written,
/// synced and read back, so that its pages are in the page cache and clean:
/// no write-back of the set-up runs while the calls are timed.
pub fn data_file(ctx: &OpContext, place: Place, len: usize) -> Result<DataFile, ChannelError> {
    let base = place.base();
    let dir = ctx
        .names
        .temp_dir(&base, "syscall")
        .map_err(ChannelError::io("create the benchmark's directory"))?;
    // Armed at once, so that any failure below still removes the directory.
    let cleanup = Cleanup::remove_tree(dir.clone(), &["data"]);
    let file_path = dir.join("data");
    let content: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    let mut f = std::fs::File::create(&file_path).map_err(ChannelError::io("create data file"))?;
    f.write_all(&content)
        .map_err(ChannelError::io("write data file"))?;
    f.sync_all().map_err(ChannelError::io("fsync data file"))?;
    drop(f);
    let back = std::fs::read(&file_path).map_err(ChannelError::io("read data file"))?;
    if back != content {
        return Err(ChannelError::Setup(
            "the data file did not read back as written".into(),
        ));
    }
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(&file_path)
        .map_err(ChannelError::io("stat data file"))?
        .ino();
    let note = match fs_type(&base) {
        Ok(fs) => format!("file in {} ({fs})", base.display()),
        Err(_) => format!("file in {}", base.display()),
    };
    Ok(DataFile {
        path: c_path(&file_path).map_err(ChannelError::io("file path"))?,
        dir,
        ino,
        note,
        _cleanup: cleanup,
    })
}

/// A field of `/proc/self/io` (`rchar`, `wchar`, …): the kernel's count of
/// bytes this process passed to read and write calls. `None` without task I/O
/// accounting.
pub fn proc_self_io(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/io").ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == field).then(|| v.trim().parse().ok())?
    })
}

/// Processes and threads created on the machine since boot (`processes` in
/// `/proc/stat`): every fork adds one, whoever makes it.
pub fn processes_created() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("processes ")?.trim().parse().ok())
}

/// The calling process's resident set in KiB (`VmRSS`), for notes.
pub fn resident_kib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    text.lines().find_map(|l| {
        l.strip_prefix("VmRSS:")?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::os::objects::ObjectNamer;

    #[test]
    fn data_file_is_made_and_removed() {
        let names = ObjectNamer::new();
        for place in [Place::Disk, Place::Tmpfs] {
            let f = data_file(
                &OpContext {
                    names: &names,
                    cpu: None,
                    rt_priority: None,
                },
                place,
                4096,
            )
            .unwrap();
            let dir = f.dir.clone();
            assert_eq!(std::fs::metadata(dir.join("data")).unwrap().len(), 4096);
            assert!(f.note.starts_with("file in "), "{}", f.note);
            drop(f);
            assert!(!dir.exists(), "{} left behind", dir.display());
        }
    }

    #[test]
    fn kernel_counters_are_readable() {
        let before = proc_self_io("rchar").expect("task I/O accounting");
        let _ = std::fs::read("/proc/self/status").unwrap();
        assert!(proc_self_io("rchar").unwrap() > before);
        assert!(processes_created().unwrap() > 0);
        assert!(resident_kib().unwrap() > 0);
    }
}
