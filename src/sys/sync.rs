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

/// Copies `dst.len()` bytes from process `pid`'s memory at `remote_addr` into `dst`.
#[inline]
pub fn process_vm_read(pid: libc::pid_t, dst: &mut [u8], remote_addr: usize) -> io::Result<usize> {
    let local = libc::iovec {
        iov_base: dst.as_mut_ptr().cast(),
        iov_len: dst.len(),
    };
    let remote = libc::iovec {
        iov_base: remote_addr as *mut libc::c_void,
        iov_len: dst.len(),
    };
    // SAFETY: the local iovec covers a valid, exclusively borrowed slice; the
    // kernel checks the remote range.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
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

/// An absolute `CLOCK_REALTIME` deadline `timeout` from now, as the timed
/// POSIX waits (`sem_timedwait`, `pthread_mutex_timedlock`) take it.
fn realtime_deadline(timeout: std::time::Duration) -> libc::timespec {
    // SAFETY: timespec is plain data; clock_gettime writes it.
    let mut now: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: valid clock id and out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
    let ns = now.tv_nsec as u64 + u64::from(timeout.subsec_nanos());
    libc::timespec {
        tv_sec: now.tv_sec
            + timeout.as_secs() as libc::time_t
            + (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// An unnamed POSIX semaphore shared by the threads of one process
/// (`sem_init` with `pshared` 0): no name, so nothing to clean up after a
/// crash. Destroyed on drop.
pub struct Semaphore(Box<std::cell::UnsafeCell<libc::sem_t>>);

// SAFETY: a sem_t is made to be used from several threads at once through
// the sem_* calls; its address never moves (boxed).
unsafe impl Send for Semaphore {}
// SAFETY: as above.
unsafe impl Sync for Semaphore {}

impl Semaphore {
    /// A semaphore with the given initial value.
    pub fn new(value: u32) -> io::Result<Semaphore> {
        // SAFETY: zeroed sem_t is valid storage for sem_init to initialise.
        let sem = Semaphore(Box::new(std::cell::UnsafeCell::new(unsafe {
            std::mem::zeroed()
        })));
        // SAFETY: the storage is live, aligned and not yet shared.
        cvt(unsafe { libc::sem_init(sem.0.get(), 0, value) })?;
        Ok(sem)
    }

    /// Raises the value by one, waking one waiter (async-signal-safe: usable
    /// from a signal handler).
    #[inline]
    pub fn post(&self) -> io::Result<()> {
        // SAFETY: initialised in new, destroyed only on drop.
        cvt(unsafe { libc::sem_post(self.0.get()) }).map(|_| ())
    }

    /// Waits until the value is above zero and lowers it. A handled signal
    /// ends the wait with `EINTR` (the engine's handlers have no SA_RESTART).
    #[inline]
    pub fn wait(&self) -> io::Result<()> {
        // SAFETY: as in post.
        cvt(unsafe { libc::sem_wait(self.0.get()) }).map(|_| ())
    }

    /// Lowers the value if it is above zero; `Ok(false)` if it is zero.
    #[inline]
    pub fn try_wait(&self) -> io::Result<bool> {
        // SAFETY: as in post.
        match cvt(unsafe { libc::sem_trywait(self.0.get()) }) {
            Ok(_) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Like [`Semaphore::wait`] for at most `timeout`; `Ok(false)` if it
    /// timed out.
    pub fn wait_for(&self, timeout: std::time::Duration) -> io::Result<bool> {
        let deadline = realtime_deadline(timeout);
        // SAFETY: as in post; deadline is a valid timespec.
        match cvt(unsafe { libc::sem_timedwait(self.0.get(), &deadline) }) {
            Ok(_) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::ETIMEDOUT) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        // SAFETY: initialised in new; no thread waits on it any more (its
        // owner joins its threads first).
        unsafe { libc::sem_destroy(self.0.get()) };
    }
}

unsafe extern "C" {
    // glibc exports these; the libc crate does not bind them for Linux.
    fn pthread_mutexattr_setprotocol(
        attr: *mut libc::pthread_mutexattr_t,
        protocol: libc::c_int,
    ) -> libc::c_int;
    fn pthread_mutex_timedlock(
        mutex: *mut libc::pthread_mutex_t,
        abstime: *const libc::timespec,
    ) -> libc::c_int;
}

/// A pthread mutex of the threads of one process, with or without priority
/// inheritance (`PTHREAD_PRIO_INHERIT`: the holder runs at the priority of
/// its highest waiter until it unlocks). Destroyed on drop.
pub struct PthreadMutex {
    inner: Box<std::cell::UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: a pthread mutex is made to be used from several threads at once;
// its address never moves (boxed).
unsafe impl Send for PthreadMutex {}
// SAFETY: as above.
unsafe impl Sync for PthreadMutex {}

impl PthreadMutex {
    /// A new unlocked mutex; `inherit` selects `PTHREAD_PRIO_INHERIT`, else
    /// `PTHREAD_PRIO_NONE`.
    pub fn new(inherit: bool) -> io::Result<PthreadMutex> {
        let protocol = if inherit {
            libc::PTHREAD_PRIO_INHERIT
        } else {
            libc::PTHREAD_PRIO_NONE
        };
        // SAFETY: zeroed storage is what the init calls expect to fill; the
        // attribute object is initialised before use and destroyed after;
        // pthread calls return the error number instead of setting errno.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            let e = libc::pthread_mutexattr_init(&mut attr);
            if e != 0 {
                return Err(io::Error::from_raw_os_error(e));
            }
            let e = pthread_mutexattr_setprotocol(&mut attr, protocol);
            if e != 0 {
                libc::pthread_mutexattr_destroy(&mut attr);
                return Err(io::Error::from_raw_os_error(e));
            }
            let m = PthreadMutex {
                inner: Box::new(std::cell::UnsafeCell::new(std::mem::zeroed())),
            };
            let e = libc::pthread_mutex_init(m.inner.get(), &attr);
            libc::pthread_mutexattr_destroy(&mut attr);
            if e != 0 {
                // Not initialised: must not be destroyed.
                std::mem::forget(m);
                return Err(io::Error::from_raw_os_error(e));
            }
            Ok(m)
        }
    }

    /// Locks, waiting at most `timeout`; `ErrorKind::TimedOut` if it did not get it.
    #[inline]
    pub fn lock_for(&self, timeout: std::time::Duration) -> io::Result<()> {
        let deadline = realtime_deadline(timeout);
        // SAFETY: initialised in new; deadline is a valid timespec.
        match unsafe { pthread_mutex_timedlock(self.inner.get(), &deadline) } {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    /// Unlocks a mutex the calling thread holds.
    #[inline]
    pub fn unlock(&self) -> io::Result<()> {
        // SAFETY: initialised in new; glibc checks the owner of a PI mutex.
        match unsafe { libc::pthread_mutex_unlock(self.inner.get()) } {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: initialised in new; its users are joined before it drops.
        unsafe { libc::pthread_mutex_destroy(self.inner.get()) };
    }
}

/// A process-shared pthread mutex and condition variable placed in shared
/// memory (`PTHREAD_PROCESS_SHARED`), the hand-off much industrial code
/// uses between processes. The mutex is robust (`PTHREAD_MUTEX_ROBUST`): if
/// its holder dies, the next locker learns it (`EOWNERDEAD`) instead of
/// waiting for ever. The condition variable waits on `CLOCK_MONOTONIC`.
///
/// Neither object is destroyed: glibc holds nothing for them outside the
/// memory itself, which goes with the mapping, and destroying a shared
/// condition variable waits for the other process's waiters to leave it.
/// A clone is another view of the same two objects.
#[derive(Clone)]
pub struct SharedCondvar {
    map: std::sync::Arc<super::mem::SharedMapping>,
    mutex: usize,
    cond: usize,
}

/// What a timed lock of a [`SharedCondvar`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locked {
    /// The lock is held.
    Yes,
    /// The deadline passed first.
    TimedOut,
    /// The lock is held, but its last holder died holding it: the data it
    /// guards may be half-written (the mutex is marked consistent again).
    OwnerDied,
}

impl SharedCondvar {
    /// Bytes it takes in the mapping (a multiple of 8).
    pub const LEN: usize = (std::mem::size_of::<libc::pthread_mutex_t>()
        + std::mem::size_of::<libc::pthread_cond_t>())
    .next_multiple_of(8);

    /// Initialises a mutex and a condition variable at `offset` (8-byte
    /// aligned, [`Self::LEN`] bytes) of `map`, before any other process
    /// maps it (call before fork).
    pub fn init(
        map: &std::sync::Arc<super::mem::SharedMapping>,
        offset: usize,
    ) -> io::Result<Self> {
        let mutex = map.addr(offset, Self::LEN);
        assert!(mutex.is_multiple_of(8), "misaligned SharedCondvar");
        let cond = mutex + std::mem::size_of::<libc::pthread_mutex_t>();
        let pthread = |e: libc::c_int| {
            if e == 0 {
                Ok(())
            } else {
                Err(io::Error::from_raw_os_error(e))
            }
        };
        // SAFETY: the two objects lie inside the mapping (bounds-checked by
        // addr), aligned (mmap is page-aligned, offset and the mutex size are
        // multiples of 8), not yet used by anyone; the attribute objects are
        // initialised before use and destroyed after; pthread calls return
        // an error number.
        unsafe {
            let mut ma: libc::pthread_mutexattr_t = std::mem::zeroed();
            pthread(libc::pthread_mutexattr_init(&mut ma))?;
            let r = pthread(libc::pthread_mutexattr_setpshared(
                &mut ma,
                libc::PTHREAD_PROCESS_SHARED,
            ))
            .and_then(|()| {
                pthread(libc::pthread_mutexattr_setrobust(
                    &mut ma,
                    libc::PTHREAD_MUTEX_ROBUST,
                ))
            })
            .and_then(|()| pthread(libc::pthread_mutex_init(mutex as *mut _, &ma)));
            libc::pthread_mutexattr_destroy(&mut ma);
            r?;
            let mut ca: libc::pthread_condattr_t = std::mem::zeroed();
            pthread(libc::pthread_condattr_init(&mut ca))?;
            let r = pthread(libc::pthread_condattr_setpshared(
                &mut ca,
                libc::PTHREAD_PROCESS_SHARED,
            ))
            .and_then(|()| {
                pthread(libc::pthread_condattr_setclock(
                    &mut ca,
                    libc::CLOCK_MONOTONIC,
                ))
            })
            .and_then(|()| pthread(libc::pthread_cond_init(cond as *mut _, &ca)));
            libc::pthread_condattr_destroy(&mut ca);
            r?;
        }
        Ok(SharedCondvar {
            map: std::sync::Arc::clone(map),
            mutex,
            cond,
        })
    }

    fn mutex(&self) -> *mut libc::pthread_mutex_t {
        // Holding the Arc keeps the mapping, hence the address, alive.
        let _ = &self.map;
        self.mutex as *mut _
    }

    fn cond(&self) -> *mut libc::pthread_cond_t {
        self.cond as *mut _
    }

    /// Locks the mutex, waiting at most `timeout`.
    #[inline]
    pub fn lock_for(&self, timeout: std::time::Duration) -> io::Result<Locked> {
        let deadline = realtime_deadline(timeout);
        // SAFETY: initialised in init, inside a live mapping; deadline is valid.
        match unsafe { pthread_mutex_timedlock(self.mutex(), &deadline) } {
            0 => Ok(Locked::Yes),
            libc::ETIMEDOUT => Ok(Locked::TimedOut),
            libc::EOWNERDEAD => {
                // SAFETY: this thread now holds the robust mutex.
                unsafe { libc::pthread_mutex_consistent(self.mutex()) };
                Ok(Locked::OwnerDied)
            }
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    /// Unlocks the mutex, which the calling thread holds.
    #[inline]
    pub fn unlock(&self) -> io::Result<()> {
        // SAFETY: initialised in init; glibc checks the owner of a robust mutex.
        match unsafe { libc::pthread_mutex_unlock(self.mutex()) } {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    /// Waits on the condition variable for at most `timeout`, with the mutex
    /// held (released while waiting, held again on return, whatever the
    /// outcome). `Locked::TimedOut` if the deadline passed without a signal
    /// (the caller re-checks its predicate either way: wake-ups may be
    /// spurious).
    #[inline]
    pub fn wait_for(&self, timeout: std::time::Duration) -> io::Result<Locked> {
        let now = super::clock::monotonic_ns() + timeout.as_nanos() as u64;
        let deadline = libc::timespec {
            tv_sec: (now / 1_000_000_000) as libc::time_t,
            tv_nsec: (now % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: both objects initialised in init; the caller holds the
        // mutex; the deadline is on the condition variable's clock
        // (CLOCK_MONOTONIC, as monotonic_ns reads).
        match unsafe { libc::pthread_cond_timedwait(self.cond(), self.mutex(), &deadline) } {
            0 => Ok(Locked::Yes),
            libc::ETIMEDOUT => Ok(Locked::TimedOut),
            libc::EOWNERDEAD => {
                // SAFETY: this thread holds the robust mutex again.
                unsafe { libc::pthread_mutex_consistent(self.mutex()) };
                Ok(Locked::OwnerDied)
            }
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    /// Wakes one waiter of the condition variable.
    #[inline]
    pub fn signal(&self) -> io::Result<()> {
        // SAFETY: initialised in init.
        match unsafe { libc::pthread_cond_signal(self.cond()) } {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }
}
