//! Absolute sleeps on the monotonic clock and POSIX per-thread timers.
//!
//! `ITIMER_REAL` and `SIGALRM` belong to the engine's watchdog
//! (`engine::interrupt`); the timers here are POSIX timers (`timer_create`)
//! that signal one thread with a real-time signal, so the two never mix.

use super::cvt;
use std::io;

fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Sleeps until `CLOCK_MONOTONIC` reaches `deadline_ns` (`TIMER_ABSTIME`).
/// A signal handler ends the sleep early with `EINTR` (handlers have no
/// `SA_RESTART`): the caller decides whether to sleep again to the same deadline.
pub fn sleep_until_ns(deadline_ns: u64) -> io::Result<()> {
    let ts = timespec(deadline_ns);
    // SAFETY: ts is a valid timespec; the remaining-time pointer may be null
    // with TIMER_ABSTIME.
    let ret = unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
    // clock_nanosleep returns the error number instead of setting errno.
    if ret != 0 {
        return Err(io::Error::from_raw_os_error(ret));
    }
    Ok(())
}

/// A POSIX timer on `CLOCK_MONOTONIC` that sends a signal to one thread
/// (`SIGEV_THREAD_ID`). Deleted on drop.
pub struct ThreadTimer(libc::timer_t);

impl ThreadTimer {
    /// Creates a disarmed timer that will send `sig` to thread `tid`.
    pub fn new(sig: i32, tid: libc::pid_t) -> io::Result<ThreadTimer> {
        // SAFETY: sigevent is plain data (zeroed is a valid value); timer_create
        // writes the new timer's id into `id` on success.
        unsafe {
            let mut sev: libc::sigevent = std::mem::zeroed();
            sev.sigev_notify = libc::SIGEV_THREAD_ID;
            sev.sigev_signo = sig;
            sev.sigev_notify_thread_id = tid;
            let mut id: libc::timer_t = std::mem::zeroed();
            cvt(libc::timer_create(libc::CLOCK_MONOTONIC, &mut sev, &mut id))?;
            Ok(ThreadTimer(id))
        }
    }

    /// Arms the timer to fire every `period_ns`, first after one period;
    /// 0 disarms it.
    pub fn set_period_ns(&self, period_ns: u64) -> io::Result<()> {
        let it = libc::itimerspec {
            it_interval: timespec(period_ns),
            it_value: timespec(period_ns),
        };
        // SAFETY: self.0 is a live timer id; `it` is valid; the old value is not wanted.
        cvt(unsafe { libc::timer_settime(self.0, 0, &it, std::ptr::null_mut()) }).map(|_| ())
    }

    /// Expirations lost because the previous signal was still pending.
    pub fn overruns(&self) -> io::Result<u64> {
        // SAFETY: self.0 is a live timer id.
        cvt(unsafe { libc::timer_getoverrun(self.0) }).map(|v| v as u64)
    }
}

impl Drop for ThreadTimer {
    fn drop(&mut self) {
        // SAFETY: self.0 is a live timer id, deleted exactly once here.
        unsafe { libc::timer_delete(self.0) };
    }
}

/// A `timerfd` on `CLOCK_MONOTONIC`: a timer whose expiry a thread waits for
/// by reading it. Closed on drop.
pub struct TimerFd(std::os::fd::OwnedFd);

impl TimerFd {
    /// A disarmed timer.
    pub fn new() -> io::Result<TimerFd> {
        use std::os::fd::FromRawFd;
        // SAFETY: plain call with flags.
        let fd = cvt(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) })?;
        // SAFETY: fd is a fresh descriptor owned by nobody else.
        Ok(TimerFd(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }))
    }

    /// Arms the timer to expire once when `CLOCK_MONOTONIC` reaches
    /// `deadline_ns` (at once if it is past; 0 would disarm it, so it is
    /// raised to 1).
    #[inline]
    pub fn expire_at(&self, deadline_ns: u64) -> io::Result<()> {
        self.arm(deadline_ns, 0)
    }

    /// Arms it to expire at `first_ns` (CLOCK_MONOTONIC) and every
    /// `period_ns` after, on the kernel's schedule: the interrupt that
    /// expires it re-arms it, as a periodic hardware timer does.
    pub fn expire_every(&self, first_ns: u64, period_ns: u64) -> io::Result<()> {
        self.arm(first_ns, period_ns.max(1))
    }

    /// `timerfd_settime` to absolute `first_ns`, then every `interval_ns`
    /// (0: once).
    #[inline]
    fn arm(&self, first_ns: u64, interval_ns: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let it = libc::itimerspec {
            it_interval: timespec(interval_ns),
            it_value: timespec(first_ns.max(1)),
        };
        // SAFETY: live descriptor; `it` is valid; the old value is not wanted.
        cvt(unsafe {
            libc::timerfd_settime(
                self.0.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &it,
                std::ptr::null_mut(),
            )
        })
        .map(|_| ())
    }

    /// Waits for an expiry and returns how many expirations it covers.
    #[inline]
    pub fn wait(&self) -> io::Result<u64> {
        use std::os::fd::AsRawFd;
        let mut n = 0u64;
        // SAFETY: n is valid for 8 bytes of writes.
        let r = unsafe {
            libc::read(
                self.0.as_raw_fd(),
                (&mut n as *mut u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
        super::cvt_long(r as libc::c_long)?;
        Ok(n)
    }
}
