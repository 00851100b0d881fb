//! Names of the OS objects ipcmark creates, their release, and `ipcmark clean`.
//!
//! A named object is called `ipcmark-<pid>-<pidns>-<start>-<random>-<what>-<n>`:
//! the creating process's pid, the inode of its PID namespace and its start
//! time (clock ticks after boot, field 22 of /proc/PID/stat) say who made it,
//! so that `clean` removes it only once that process is provably gone (a pid
//! alone names another process in another PID namespace, or after reuse); the
//! random part (from the kernel's generator) makes the name unguessable, so
//! that nobody can make a run fail by creating its names first, and a name
//! found taken all the same is replaced by a fresh one. A System V key has
//! room for the pid alone: the process's namespace and start time go in an
//! owner record, an empty file `ipcmark-…-sysv-<n>` in /dev/shm that exists
//! while the process holds System V objects.
//!
//! By concern, each file using only those listed above it (no cycle, as
//! `src/architecture.rs` checks):
//! - `release.rs`: the guards that release a run's objects, and what they left;
//! - `names.rs`: names and their owners, System V keys and owner records,
//!   where temporary objects go;
//! - `verdict.rs`: whether an object's run is gone, and the report of `clean`;
//! - `sysvipc.rs`: `clean` for the System V objects of /proc/sysvipc;
//! - `clean.rs`: `ipcmark clean` itself, over directories and System V objects.

mod clean;
mod names;
mod release;
mod sysvipc;
mod verdict;

// The paths the rest of the crate uses, as before the split.
pub use clean::clean_stale;
pub use names::{HELPER_PID_FILE, ObjectNamer, disk_temp_base, owner_of_name, tmpfs_base};
pub use release::{Cleanup, left_behind as note_left_behind, take_left_behind};
pub use verdict::{CleanReport, Verdict, judge_name};
// Used only by tests elsewhere in the crate.
#[cfg(test)]
pub use names::{NameOwner, Owner, pid_of_sysv_key, sysv_test_lock};
