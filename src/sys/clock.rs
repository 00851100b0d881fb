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

/// CPU time the calling thread has used, ns, from
/// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`: the scheduler's run time
/// brought up to date at the call, so a stretch of a few hundred µs is
/// timed to the ns (`getrusage` leaves out what ran since the last tick).
pub fn thread_cputime_ns() -> std::io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// CPU time (user + system) the calling thread has used, in ns, from
/// `getrusage(RUSAGE_THREAD)`. The kernel splits the scheduler's exact
/// run time into user and system by tick samples, so the sum is exact to
/// the microsecond the `timeval`s carry, whatever the split.
pub fn thread_cpu_ns() -> std::io::Result<u64> {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage; RUSAGE_THREAD exists on Linux ≥ 2.6.26.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    Ok(tv(ru.ru_utime) + tv(ru.ru_stime))
}

/// Clock ticks per second of `/proc/stat`'s times (`USER_HZ`).
pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf with a valid name.
    let n = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if n > 0 { n as u64 } else { 100 }
}
