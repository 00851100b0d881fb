//! Signal dispositions, masks and the one-shot interval timer.
//!
//! Handlers are installed *without* `SA_RESTART`, so that every blocking call
//! returns `EINTR` when a stop, watchdog or child signal arrives: the engine
//! relies on that to never hang (see ENGINEERING.md, pitfall 3).

use super::cvt;
use std::io;

/// A plain signal handler.
pub type Handler = extern "C" fn(libc::c_int);

/// Installs `handler` for `sig`, without `SA_RESTART`. `extra_flags` is OR-ed in
/// (for example `SA_NOCLDSTOP`).
pub fn install_handler(sig: i32, handler: Handler, extra_flags: i32) -> io::Result<()> {
    // SAFETY: sigaction is plain data; the handler is an extern "C" fn that only
    // touches atomics, which is async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as usize;
        sa.sa_flags = extra_flags;
        libc::sigemptyset(&mut sa.sa_mask);
        cvt(libc::sigaction(sig, &sa, std::ptr::null_mut())).map(|_| ())
    }
}

/// Whether `sig` is currently ignored (SIG_IGN), e.g. SIGHUP under nohup or
/// SIGINT in a shell's background job.
pub fn is_ignored(sig: i32) -> io::Result<bool> {
    // SAFETY: querying with a null new action only reads the current one.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        cvt(libc::sigaction(sig, std::ptr::null(), &mut old))?;
        Ok(old.sa_sigaction == libc::SIG_IGN)
    }
}

/// Sets `sig` to be ignored (SIG_IGN): a load process leaves stopping to
/// the run that started it.
pub fn ignore(sig: i32) -> io::Result<()> {
    // SAFETY: sigaction is plain data; SIG_IGN installs no code.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = libc::SIG_IGN;
        libc::sigemptyset(&mut sa.sa_mask);
        cvt(libc::sigaction(sig, &sa, std::ptr::null_mut())).map(|_| ())
    }
}

/// A set of signals.
#[derive(Clone, Copy)]
pub struct SigSet(libc::sigset_t);

impl SigSet {
    /// The empty set.
    pub fn empty() -> Self {
        // SAFETY: sigemptyset initialises the zeroed set.
        unsafe {
            let mut s: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut s);
            SigSet(s)
        }
    }

    /// The set of these signals.
    pub fn of(sigs: &[i32]) -> Self {
        let mut s = Self::empty();
        for &sig in sigs {
            s.add(sig);
        }
        s
    }

    /// Adds `sig`.
    pub fn add(&mut self, sig: i32) {
        // SAFETY: the set is initialised; an invalid signal number only returns EINVAL.
        unsafe { libc::sigaddset(&mut self.0, sig) };
    }

    /// Removes `sig`.
    pub fn remove(&mut self, sig: i32) {
        // SAFETY: as in add.
        unsafe { libc::sigdelset(&mut self.0, sig) };
    }

    /// The raw set, for the system calls that take one.
    pub fn raw(&self) -> &libc::sigset_t {
        &self.0
    }
}

/// Changes the calling thread's signal mask; returns the previous mask.
pub fn thread_mask(how: i32, set: &SigSet) -> io::Result<SigSet> {
    let mut old = SigSet::empty();
    // SAFETY: both sets are valid and initialised.
    let ret = unsafe { libc::pthread_sigmask(how, &set.0, &mut old.0) };
    if ret != 0 {
        return Err(io::Error::from_raw_os_error(ret));
    }
    Ok(old)
}

/// Blocks these signals in the calling thread.
pub fn block(sigs: &[i32]) -> io::Result<SigSet> {
    thread_mask(libc::SIG_BLOCK, &SigSet::of(sigs))
}

/// Waits for any signal not in `mask` to be handled; always returns (EINTR is
/// its normal outcome, so it is not reported as an error).
pub fn suspend(mask: &SigSet) {
    // SAFETY: mask is a valid initialised set.
    unsafe { libc::sigsuspend(&mask.0) };
}

/// Arms (or, with zero, disarms) the process's `ITIMER_REAL` timer: `SIGALRM`
/// after `first_ns`, then every `every_ns` (0: once).
pub fn set_alarm_ns(first_ns: u64, every_ns: u64) -> io::Result<()> {
    let tv = |ns: u64| libc::timeval {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_usec: ((ns % 1_000_000_000) / 1000) as libc::suseconds_t,
    };
    let it = libc::itimerval {
        it_interval: tv(every_ns),
        it_value: tv(first_ns),
    };
    // SAFETY: it is a valid itimerval; the old value is not wanted.
    cvt(unsafe { libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut()) }).map(|_| ())
}

/// Sends `sig` to one thread of this process.
pub fn pthread_kill(thread: libc::pthread_t, sig: i32) -> io::Result<()> {
    // SAFETY: the caller passes the handle of a thread it has not yet joined.
    let ret = unsafe { libc::pthread_kill(thread, sig) };
    if ret != 0 {
        return Err(io::Error::from_raw_os_error(ret));
    }
    Ok(())
}

/// The calling thread's pthread handle.
pub fn pthread_self() -> libc::pthread_t {
    // SAFETY: cannot fail.
    unsafe { libc::pthread_self() }
}

/// The first real-time signal usable by applications.
fn sigrtmin() -> i32 {
    libc::SIGRTMIN()
}

/// The last real-time signal.
fn sigrtmax() -> i32 {
    libc::SIGRTMAX()
}

/// Every real-time signal ipcmark uses, with its number in one place so that
/// no two users pick the same one. Each user names its variant here (and takes
/// [`RtSignal::number`]); a new user adds a variant with a number of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtSignal {
    /// `signal-sigqueue`'s messages towards the server (SIGRTMIN+1).
    /// sigqueue is process-directed: with `--peer thread` both ends are one
    /// process, so each direction has its own signal and each end waits only
    /// for its own.
    SigqueueToServer,
    /// `signal-sigqueue`'s replies towards the client (SIGRTMIN+2).
    SigqueueToClient,
    /// The periodic model's interrupt timer (SIGRTMIN+3): a POSIX timer sends
    /// it to the measuring thread, whose handler only counts it.
    PeriodicTimer,
    /// The score model's software interrupt (SIGRTMIN+4), raised by a test
    /// thread on itself; its handler is the test's interrupt routine.
    ScoreInterrupt,
    /// The engine's wake signal (SIGRTMAX), sent to a server thread to
    /// interrupt its blocking wait when it must stop.
    Wake,
}

impl RtSignal {
    /// The signal number.
    pub fn number(self) -> i32 {
        match self {
            RtSignal::SigqueueToServer => sigrtmin() + 1,
            RtSignal::SigqueueToClient => sigrtmin() + 2,
            RtSignal::PeriodicTimer => sigrtmin() + 3,
            RtSignal::ScoreInterrupt => sigrtmin() + 4,
            RtSignal::Wake => sigrtmax(),
        }
    }
}

/// Takes one pending signal of `set` (which the caller blocks) without
/// waiting: `Ok(None)` if none is pending. Used to discard signals left over
/// from an earlier channel before a new one starts counting.
pub fn take_pending(set: &SigSet) -> io::Result<Option<i32>> {
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: set is initialised, the timeout is a valid timespec, and a null
    // siginfo pointer is allowed.
    let ret = unsafe { libc::sigtimedwait(&set.0, std::ptr::null_mut(), &zero) };
    if ret == -1 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EAGAIN) {
            return Ok(None);
        }
        return Err(e);
    }
    Ok(Some(ret))
}

/// Sends `sig` to thread `tid` of process `pid` from inside a signal handler:
/// tgkill is async-signal-safe, and errno is put back so that the interrupted
/// code never sees the handler's error. Returns whether the signal was sent.
#[inline]
pub fn tgkill_from_handler(pid: libc::pid_t, tid: libc::pid_t, sig: i32) -> bool {
    // SAFETY: __errno_location returns the calling thread's errno slot, valid
    // for the thread's lifetime; tgkill is a plain system call with integers.
    unsafe {
        let errno = libc::__errno_location();
        let saved = *errno;
        let ret = libc::syscall(libc::SYS_tgkill, pid, tid, sig);
        *errno = saved;
        ret == 0
    }
}

impl SigSet {
    /// Every signal (`sigfillset`; glibc leaves out its own internal ones).
    pub fn full() -> Self {
        // SAFETY: sigfillset initialises the zeroed set.
        unsafe {
            let mut s: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut s);
            SigSet(s)
        }
    }
}

/// Sends `sig` to the calling thread. An unblocked signal sent to oneself is
/// handled before the call returns, like a software trap.
#[inline]
pub fn raise_here(sig: i32) -> io::Result<()> {
    pthread_kill(pthread_self(), sig)
}

/// The routine an installed [`Isr`] runs on each signal.
pub type IsrFn = dyn Fn() + Send + Sync;

/// The routine [`on_isr`] calls; null when none is installed. A thin pointer
/// to a leaked `Box<Box<IsrFn>>`, owned by the live [`Isr`] guard.
static ISR: std::sync::atomic::AtomicPtr<Box<IsrFn>> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// Handlers running [`ISR`] now, so that [`Isr::drop`] frees it only when
/// none still uses it.
static ISR_RUNNING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

extern "C" fn on_isr(_: libc::c_int) {
    use std::sync::atomic::Ordering::SeqCst;
    ISR_RUNNING.fetch_add(1, SeqCst);
    let p = ISR.load(SeqCst);
    if !p.is_null() {
        // SAFETY: a non-null pointer is the live Box installed by Isr::install;
        // Isr::drop nulls it before waiting for ISR_RUNNING to fall to zero, and
        // frees it only then, so it is valid for the whole call.
        unsafe { (*p)() };
    }
    ISR_RUNNING.fetch_sub(1, SeqCst);
}

/// A signal handler that runs a closure: an interrupt service routine for
/// signals a thread raises (or a timer sends). One at a time per process; the
/// previous disposition of the signal is restored on drop.
pub struct Isr {
    sig: i32,
    previous: libc::sigaction,
}

impl Isr {
    /// Installs `routine` as the handler of `sig` (without `SA_RESTART`). The
    /// routine runs in signal context: it may only use atomics and
    /// async-signal-safe calls (sem_post, futex, …).
    pub fn install(sig: i32, routine: Box<IsrFn>) -> io::Result<Isr> {
        use std::sync::atomic::Ordering::SeqCst;
        let p = Box::into_raw(Box::new(routine));
        if ISR
            .compare_exchange(std::ptr::null_mut(), p, SeqCst, SeqCst)
            .is_err()
        {
            // SAFETY: p came from Box::into_raw above and was never shared.
            drop(unsafe { Box::from_raw(p) });
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "another interrupt routine is installed",
            ));
        }
        // SAFETY: sigaction is plain data; on_isr only touches atomics and
        // calls the routine, whose contract is async-signal safety.
        let installed = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_isr as Handler as usize;
            sa.sa_flags = 0;
            libc::sigemptyset(&mut sa.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            cvt(libc::sigaction(sig, &sa, &mut old)).map(|_| old)
        };
        match installed {
            Ok(previous) => Ok(Isr { sig, previous }),
            Err(e) => {
                let p = ISR.swap(std::ptr::null_mut(), SeqCst);
                // SAFETY: the handler was never installed, so nothing else saw p.
                drop(unsafe { Box::from_raw(p) });
                Err(e)
            }
        }
    }
}

impl Drop for Isr {
    fn drop(&mut self) {
        use std::sync::atomic::Ordering::SeqCst;
        // SAFETY: previous is the action sigaction returned at install.
        unsafe { libc::sigaction(self.sig, &self.previous, std::ptr::null_mut()) };
        let p = ISR.swap(std::ptr::null_mut(), SeqCst);
        // A handler that loaded p before the swap has counted itself in
        // ISR_RUNNING first: wait for it to leave.
        while ISR_RUNNING.load(SeqCst) != 0 {
            std::hint::spin_loop();
        }
        if !p.is_null() {
            // SAFETY: p came from Box::into_raw in install; no handler uses it now.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_signals_are_distinct_real_time_signals() {
        use RtSignal::*;
        let all = [
            SigqueueToServer,
            SigqueueToClient,
            PeriodicTimer,
            ScoreInterrupt,
            Wake,
        ];
        // A new variant fails to compile here: add it to the list above too.
        for s in all {
            match s {
                SigqueueToServer | SigqueueToClient | PeriodicTimer | ScoreInterrupt | Wake => {}
            }
        }
        let mut numbers: Vec<i32> = all.iter().map(|s| s.number()).collect();
        for (s, &n) in all.iter().zip(&numbers) {
            assert!(
                (sigrtmin()..=sigrtmax()).contains(&n),
                "{s:?}: {n} is outside SIGRTMIN..=SIGRTMAX"
            );
        }
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), all.len(), "two users share a signal");
    }
}
