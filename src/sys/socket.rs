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

/// The pid of the process at the other end of a connected Unix socket
/// (`SO_PEERCRED`: the one that connected, or that listened, when it did);
/// `None` where the kernel gives none (0: not in this PID namespace).
pub fn peer_pid(fd: BorrowedFd<'_>) -> io::Result<Option<libc::pid_t>> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: cred and len are valid out-pointers sized for a ucred.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    })?;
    Ok((cred.pid > 0).then_some(cred.pid))
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

/// Sends the one byte `tag` with descriptor `passed` attached
/// (`SCM_RIGHTS`), never raising SIGPIPE. The receiver gets its own
/// descriptor of the same open file; the caller may close its own at once.
pub fn send_fd(fd: BorrowedFd<'_>, passed: BorrowedFd<'_>, tag: u8) -> io::Result<()> {
    let mut byte = [tag];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // u64s: the control buffer must be aligned for cmsghdr.
    let mut control = [0u64; 4];
    // SAFETY: CMSG_SPACE is a pure size computation.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) } as usize;
    assert!(space <= std::mem::size_of_val(&control));
    // SAFETY: msghdr is plain data; every pointer set below is valid for the
    // call; CMSG_FIRSTHDR of a control buffer of `space` bytes is the start
    // of that buffer, with room for one int (asserted above).
    let n = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
        std::ptr::write_unaligned(
            libc::CMSG_DATA(cmsg).cast::<libc::c_int>(),
            passed.as_raw_fd(),
        );
        libc::sendmsg(fd.as_raw_fd(), &msg, libc::MSG_NOSIGNAL)
    };
    match cvt_long(n as libc::c_long)? {
        1 => Ok(()),
        n => Err(io::Error::other(format!("sendmsg sent {n} bytes of 1"))),
    }
}

/// What [`recv_fd`] received.
#[derive(Debug)]
pub enum Received {
    /// The peer closed its end: nothing more will come.
    Closed,
    /// The byte sent, and the descriptor attached to it, if any
    /// (close-on-exec; descriptors beyond the first are closed at once).
    Message(u8, Option<OwnedFd>),
}

/// Receives one byte and the descriptor passed with it (see [`send_fd`]).
pub fn recv_fd(fd: BorrowedFd<'_>) -> io::Result<Received> {
    let mut byte = [0u8];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // Room for a few descriptors, so that a sender passing more cannot make
    // the kernel drop (and leak into nothing) what does not fit.
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data; its pointers are valid for the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg describes valid buffers.
    let n = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    let n = cvt_long(n as libc::c_long)?;
    let mut first: Option<OwnedFd> = None;
    // SAFETY: walking the control messages the kernel wrote, within
    // msg_controllen, with the CMSG_* macros; each SCM_RIGHTS descriptor is
    // fresh and owned by nobody else, so it is taken into an OwnedFd (the
    // first kept, the rest closed on drop).
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg).cast::<libc::c_int>();
                let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize)
                    / std::mem::size_of::<libc::c_int>();
                for i in 0..count {
                    let fd = OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i)));
                    if first.is_none() {
                        first = Some(fd);
                    }
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    if n == 0 && first.is_none() {
        return Ok(Received::Closed);
    }
    if msg.msg_flags & libc::MSG_CTRUNC != 0 {
        return Err(io::Error::other(
            "a passed descriptor was dropped: the control buffer was too small (MSG_CTRUNC)",
        ));
    }
    Ok(Received::Message(byte[0], first))
}
