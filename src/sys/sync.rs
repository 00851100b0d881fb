//! Futexes, eventfd and cross-process copies.

use super::cvt;
use std::fs::File;
use std::io;
use std::os::fd::FromRawFd;
use std::sync::atomic::AtomicU32;

/// Sleeps while `*word == expected` (shared futex: works across processes on
/// a shared mapping). Returns Ok on wake-up or if the value already differed.
#[inline]
pub fn futex_wait(word: &AtomicU32, expected: u32) -> io::Result<()> {
    // SAFETY: word points to a live, aligned u32; no timeout.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    };
    if ret == -1 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EAGAIN) {
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

/// Wakes up to `n` waiters on `word`.
#[inline]
pub fn futex_wake(word: &AtomicU32, n: i32) -> io::Result<()> {
    // SAFETY: word points to a live, aligned u32.
    let ret = unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, n) };
    if ret == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sleeps while `*word == expected`, for waiters of this process only
/// (`FUTEX_PRIVATE_FLAG`: no shared-mapping key to compute). Returns Ok on
/// wake-up or if the value already differed; EINTR on a handled signal.
#[inline]
pub fn futex_wait_private(word: &AtomicU32, expected: u32) -> io::Result<()> {
    // SAFETY: word points to a live, aligned u32; no timeout.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    };
    if ret == -1 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EAGAIN) {
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

/// Wakes up to `n` waiters of this process on `word` (async-signal-safe).
#[inline]
pub fn futex_wake_private(word: &AtomicU32, n: i32) -> io::Result<()> {
    // SAFETY: word points to a live, aligned u32.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            n,
        )
    };
    if ret == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sleeps while `*word == expected`, as a waiter interested in `bitset`:
/// only a [`futex_wake_bitset`] whose bitset shares a bit with it wakes it.
/// Returns Ok on wake-up or if the value already differed.
#[inline]
pub fn futex_wait_bitset(word: &AtomicU32, expected: u32, bitset: u32) -> io::Result<()> {
    // SAFETY: word points to a live, aligned u32; no timeout (null); the
    // second address is unused by FUTEX_WAIT_BITSET.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT_BITSET,
            expected,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            bitset,
        )
    };
    if ret == -1 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EAGAIN) {
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

/// Wakes every waiter on `word` whose bitset shares a bit with `bitset`.
#[inline]
pub fn futex_wake_bitset(word: &AtomicU32, bitset: u32) -> io::Result<()> {
    // SAFETY: word points to a live, aligned u32; the timeout and second
    // address arguments are unused by FUTEX_WAKE_BITSET.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE_BITSET,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            bitset,
        )
    };
    if ret == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A new eventfd (counter semantics, blocking), as a `File` for read/write of 8 bytes.
pub fn eventfd() -> io::Result<File> {
    // SAFETY: plain system call.
    let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) })?;
    // SAFETY: fd is a fresh descriptor owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Copies `src` into process `pid`'s memory at `remote_addr`.
#[inline]
pub fn process_vm_write(pid: libc::pid_t, src: &[u8], remote_addr: usize) -> io::Result<usize> {
    let local = libc::iovec {
        iov_base: src.as_ptr() as *mut libc::c_void,
        iov_len: src.len(),
    };
    let remote = libc::iovec {
        iov_base: remote_addr as *mut libc::c_void,
        iov_len: src.len(),
    };
    // SAFETY: the local iovec covers a valid slice; the kernel checks the remote range.
    let n = unsafe { libc::process_vm_writev(pid, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

unsafe extern "C" {
    // glibc exports sigqueue, but the libc crate does not bind it.
    fn sigqueue(pid: libc::pid_t, sig: libc::c_int, value: libc::sigval) -> libc::c_int;
}

/// Queues real-time signal `sig` carrying `value` to process `pid`.
#[inline]
pub fn sig_queue(pid: libc::pid_t, sig: i32, value: u64) -> io::Result<()> {
    let v = libc::sigval {
        sival_ptr: value as usize as *mut libc::c_void,
    };
    // SAFETY: plain call with integer arguments and a by-value union.
    cvt(unsafe { sigqueue(pid, sig, v) }).map(|_| ())
}

/// Waits for a signal in `set` (which the caller blocks) and returns its number
/// and the value it carries. EINTR if another handled signal arrives.
#[inline]
pub fn sig_wait_info(set: &super::signal::SigSet) -> io::Result<(i32, u64)> {
    // SAFETY: siginfo_t is plain data filled by the kernel.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is initialised; info is a valid out-pointer.
    let sig = cvt(unsafe { libc::sigwaitinfo(set.raw(), &mut info) })?;
    // SAFETY: for a queued signal the value field is the one sigqueue set.
    let value = unsafe { info.si_value().sival_ptr } as usize as u64;
    Ok((sig, value))
}
