//! Network and UTS namespaces: moving the calling thread into a network
//! namespace, and making a node of one (its network plus a host name of
//! its own) for a process about to exec.

use super::cvt;
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

/// Moves the calling thread into the network namespace `fd` refers to (a
/// file such as /run/netns/NAME). Only this thread moves; sockets it opens
/// afterwards belong to that namespace.
pub fn enter_net(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: setns only reads its two integer arguments; the fd is
    // borrowed, so it stays open for the call.
    cvt(unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) }).map(drop)
}

/// Makes the calling thread a node of its own: it enters the network
/// namespace `net`, then a new UTS namespace whose host name is `hostname`
/// (what `gethostname` and `MPI_Get_processor_name` give there). A program
/// it execs afterwards runs on that node; the machine's own host name is
/// untouched.
pub fn enter_node(net: BorrowedFd<'_>, hostname: &CStr) -> io::Result<()> {
    enter_net(net)?;
    // SAFETY: unshare takes a flag word by value.
    cvt(unsafe { libc::unshare(libc::CLONE_NEWUTS) })?;
    let name = hostname.to_bytes();
    // SAFETY: the pointer and length describe `hostname`'s bytes, which
    // sethostname only reads.
    cvt(unsafe { libc::sethostname(name.as_ptr().cast(), name.len()) }).map(drop)
}

/// Makes the process `cmd` starts a node of its own ([`enter_node`]),
/// between its fork and its exec; `net` stays open until `cmd` is dropped.
pub fn spawn_in_node(cmd: &mut std::process::Command, net: OwnedFd, hostname: CString) {
    use std::os::fd::AsFd;
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and makes
    // only the system calls setns, unshare and sethostname (async-signal-
    // safe) on a descriptor and a string prepared before the fork; it
    // allocates nothing.
    unsafe {
        cmd.pre_exec(move || enter_node(net.as_fd(), &hostname));
    }
}
