//! Network namespaces: moving the calling thread into one.

use super::cvt;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// Moves the calling thread into the network namespace `fd` refers to (a
/// file such as /run/netns/NAME). Only this thread moves; sockets it opens
/// afterwards belong to that namespace.
pub fn enter_net(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: setns only reads its two integer arguments; the fd is
    // borrowed, so it stays open for the call.
    cvt(unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) }).map(drop)
}
