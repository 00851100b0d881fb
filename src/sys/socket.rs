//! Socket calls std does not offer: pairs of any socket type, sends that never
//! raise SIGPIPE, receives that report a datagram's true length, buffer sizes.

use super::{cvt, cvt_long};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// A connected pair of Unix-domain sockets of type `ty` (`SOCK_DGRAM`,
/// `SOCK_SEQPACKET`, …), close-on-exec.
pub fn socketpair(ty: libc::c_int) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1 as libc::c_int; 2];
    // SAFETY: fds is a valid array of two ints for the kernel to fill.
    cvt(unsafe { libc::socketpair(libc::AF_UNIX, ty | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) })?;
    // SAFETY: both descriptors are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Sends `buf` as one message on a connected socket; `flags` is OR-ed with
/// `MSG_NOSIGNAL`, so a closed peer gives `EPIPE` instead of a signal.
#[inline]
pub fn send(fd: BorrowedFd<'_>, buf: &[u8], flags: libc::c_int) -> io::Result<usize> {
    // SAFETY: buf is valid for reads of its length.
    let n = unsafe {
        libc::send(
            fd.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            flags | libc::MSG_NOSIGNAL,
        )
    };
    cvt_long(n as libc::c_long).map(|n| n as usize)
}

/// Receives one message into `buf`; `flags` is OR-ed with `MSG_TRUNC`, so for
/// datagram and packet sockets the result is the message's real length even
/// when it did not fit (the caller compares it with the expected size).
#[inline]
pub fn recv(fd: BorrowedFd<'_>, buf: &mut [u8], flags: libc::c_int) -> io::Result<usize> {
    // SAFETY: buf is valid for writes of its length.
    let n = unsafe {
        libc::recv(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            flags | libc::MSG_TRUNC,
        )
    };
    cvt_long(n as libc::c_long).map(|n| n as usize)
}

/// Reads an integer socket option.
pub fn sockopt_int(fd: BorrowedFd<'_>, level: libc::c_int, name: libc::c_int) -> io::Result<i32> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: value and len are valid out-pointers sized for an int option.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    })?;
    Ok(value)
}

/// Sets an integer socket option.
pub fn set_sockopt_int(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: i32,
) -> io::Result<()> {
    // SAFETY: value is a valid int for the duration of the call.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}
