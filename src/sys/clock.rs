//! The monotonic clock every timing in ipcmark is read from.

/// Nanoseconds of `CLOCK_MONOTONIC`, the clock shared by all processes on the
/// machine (so a timestamp taken in one process can be compared in another).
#[inline(always)]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `clock_gettime(CLOCK_MONOTONIC)` in ns, with its error reported: where the
/// vDSO cannot read the clock source, glibc falls back to the system call,
/// which can fail (and a seccomp filter can make it fail).
#[inline]
pub fn monotonic_checked() -> std::io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}
