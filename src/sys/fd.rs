//! File-descriptor controls std does not expose.

use super::cvt;
use std::io;
use std::os::fd::AsRawFd;

/// Sets a pipe's capacity (rounded up by the kernel to a power-of-two pages);
/// returns the capacity granted.
pub fn set_pipe_capacity(fd: &impl AsRawFd, bytes: usize) -> io::Result<usize> {
    // SAFETY: fcntl on a descriptor we own, integer argument.
    cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, bytes as libc::c_int) })
        .map(|n| n as usize)
}

/// Creates a FIFO at `path` with mode 0600.
pub fn mkfifo(path: &std::path::Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    // SAFETY: valid C string.
    cvt(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }).map(|_| ())
}

/// Name of the file system type holding `path` (ext4, tmpfs, …), from statfs.
pub fn fs_type(path: &std::path::Path) -> io::Result<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    // SAFETY: statfs is plain data filled by the kernel.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid C string and out-pointer.
    cvt(unsafe { libc::statfs(c.as_ptr(), &mut st) })?;
    Ok(match st.f_type as i64 {
        0xEF53 => "ext4",
        0x0102_1994 => "tmpfs",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x794C_7630 => "overlayfs",
        0x6969 => "nfs",
        0x0102_1997 => "9p",
        _ => "other",
    })
}

/// Turns `O_NONBLOCK` on or off for `fd`.
pub fn set_nonblocking(fd: &impl AsRawFd, on: bool) -> io::Result<()> {
    // SAFETY: fcntl F_GETFL on a descriptor we own, no argument.
    let flags = cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) })?;
    let wanted = if on {
        flags | libc::O_NONBLOCK
    } else {
        flags & !libc::O_NONBLOCK
    };
    if wanted != flags {
        // SAFETY: fcntl F_SETFL on a descriptor we own, integer argument.
        cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, wanted) })?;
    }
    Ok(())
}

/// Waits at most `timeout` (rounded up to whole ms) for `fd` to become
/// readable or hung up; `Ok(false)` when the time ran out. EINTR is returned
/// as an error for the caller to retry or stop.
pub fn wait_readable(fd: &impl AsRawFd, timeout: std::time::Duration) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as libc::c_int;
    // SAFETY: one pollfd on the stack, count 1.
    cvt(unsafe { libc::poll(&mut p, 1, ms) }).map(|n| n > 0)
}

/// Waits at most `timeout` (rounded up to whole ms) for `fd` to be ready for
/// `events` (`POLLIN`, `POLLOUT`) or hung up; `Ok(false)` when the time ran
/// out. EINTR is returned as an error for the caller to retry or stop.
pub fn wait_ready(
    fd: &impl AsRawFd,
    events: libc::c_short,
    timeout: std::time::Duration,
) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    };
    let ms = timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as libc::c_int;
    // SAFETY: one pollfd on the stack, count 1.
    cvt(unsafe { libc::poll(&mut p, 1, ms) }).map(|n| n > 0)
}

/// `poll` over several descriptors for at most `timeout` (rounded up to whole
/// ms); each entry's `revents` is filled in. EINTR is returned as an error.
pub fn poll(fds: &mut [libc::pollfd], timeout: std::time::Duration) -> io::Result<usize> {
    let ms = timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as libc::c_int;
    // SAFETY: the slice is a valid array of pollfd of the length given.
    cvt(unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) }).map(|n| n as usize)
}

/// Closes descriptor `fd` in a forked child whose owning object lives in
/// the parent's copy of memory and is never dropped here (the child ends
/// with `_exit`): the child must not keep the parent's sockets open.
pub fn close_inherited(fd: std::os::fd::RawFd) {
    // SAFETY: the child owns its copy of the descriptor table; the object
    // that owns `fd` is never used or dropped in this process again.
    unsafe { libc::close(fd) };
}

/// Splices `len` bytes of `map` from `offset` into the pipe `fd`
/// (`vmsplice`): the pipe holds references to those pages, not a copy, so
/// they must not be written until the reader has taken the bytes (once
/// unmapped, the pipe's references keep the pages and what they hold).
/// Blocks while the pipe is full; returns how many bytes went in (maybe
/// fewer than asked).
#[inline]
pub fn vmsplice(
    fd: &impl AsRawFd,
    map: &super::mem::SharedMapping,
    offset: usize,
    len: usize,
) -> io::Result<usize> {
    let iov = libc::iovec {
        iov_base: map.addr(offset, len) as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: the iovec covers mapped memory (bounds-checked by addr); for a
    // pipe opened for writing the kernel only reads the pages.
    let n = unsafe { libc::vmsplice(fd.as_raw_fd(), &iov, 1, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}
