//! Thin wrappers around the system calls ipcmark needs that `std` does not offer.
//!
//! This is the only module with `unsafe` code. Each wrapper does one call, turns
//! its errno into an `io::Error`, and states why the call is sound. Nothing here
//! knows about benchmarks, mechanisms or output.

pub mod clock;
pub mod fd;
pub mod file;
pub mod mem;
#[cfg(feature = "mpi")]
pub mod mpi_p2p;
#[cfg(feature = "mpi")]
pub mod mpi_window;
pub mod namespaces;
pub mod netns;
pub mod numa;
pub mod posix_ipc;
pub mod process;
pub mod sched;
pub mod seccomp;
pub mod seccomp_allow;
pub mod signal;
pub mod socket;
pub mod speculation;
pub mod sync;
pub mod sysv;
#[cfg(test)]
pub(crate) mod test_fork;
pub mod timer;
pub mod uring;

use std::io;

/// Turns a `-1`-on-error return into an `io::Result`.
pub(crate) fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Same as [`cvt`] for calls that return `ssize_t` / `c_long`.
pub(crate) fn cvt_long(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}
