//! POSIX message queues and named semaphores.

use super::{cvt, cvt_long};
use std::ffi::CString;
use std::io;

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name contains NUL"))
}

/// An open POSIX message queue descriptor, closed on drop.
pub struct MessageQueue(libc::mqd_t);

impl MessageQueue {
    /// Creates queue `name` ("/…") holding `max_msgs` messages of `msg_size` bytes.
    pub fn create(name: &str, max_msgs: usize, msg_size: usize) -> io::Result<Self> {
        let cname = c_name(name)?;
        // SAFETY: mq_attr is plain data.
        let mut attr: libc::mq_attr = unsafe { std::mem::zeroed() };
        attr.mq_maxmsg = max_msgs as _;
        attr.mq_msgsize = msg_size as _;
        // SAFETY: valid C string; variadic mode and attr pointer as mq_open expects.
        let mqd = unsafe {
            libc::mq_open(
                cname.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
                0o600 as libc::mode_t,
                &attr as *const libc::mq_attr,
            )
        };
        cvt(mqd).map(MessageQueue)
    }

    /// Sends one message (blocking).
    #[inline]
    pub fn send(&self, msg: &[u8]) -> io::Result<()> {
        // SAFETY: msg is a valid slice for its length.
        cvt(unsafe { libc::mq_send(self.0, msg.as_ptr().cast(), msg.len(), 0) }).map(|_| ())
    }

    /// Sends one message unless the queue stays full for `timeout`
    /// (`ErrorKind::TimedOut` then).
    pub fn send_timeout(&self, msg: &[u8], timeout: std::time::Duration) -> io::Result<()> {
        // SAFETY: timespec is plain data; clock_gettime writes it.
        let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: valid clock id and out-pointer.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        let ns = ts.tv_nsec as u64 + u64::from(timeout.subsec_nanos());
        ts.tv_sec += timeout.as_secs() as libc::time_t + (ns / 1_000_000_000) as libc::time_t;
        ts.tv_nsec = (ns % 1_000_000_000) as libc::c_long;
        // SAFETY: msg is a valid slice for its length; ts is a valid deadline.
        cvt(unsafe { libc::mq_timedsend(self.0, msg.as_ptr().cast(), msg.len(), 0, &ts) })
            .map(|_| ())
    }

    /// Receives one message into `buf` (which must hold the queue's message size);
    /// returns its length.
    #[inline]
    pub fn receive(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: buf is valid for writes of its length; priority is not wanted.
        let n = unsafe {
            libc::mq_receive(
                self.0,
                buf.as_mut_ptr().cast(),
                buf.len(),
                std::ptr::null_mut(),
            )
        };
        cvt_long(n as libc::c_long).map(|n| n as usize)
    }
}

impl MessageQueue {
    /// Makes send and receive fail with `EAGAIN` instead of blocking on a
    /// full or empty queue.
    pub fn set_nonblocking(&self) -> io::Result<()> {
        // SAFETY: mq_attr is plain data; mq_setattr reads only mq_flags.
        let mut attr: libc::mq_attr = unsafe { std::mem::zeroed() };
        attr.mq_flags = libc::O_NONBLOCK as _;
        // SAFETY: the descriptor is open; attr is valid; the old value is not wanted.
        cvt(unsafe { libc::mq_setattr(self.0, &attr, std::ptr::null_mut()) }).map(|_| ())
    }
}

impl Drop for MessageQueue {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours and closed once.
        unsafe { libc::mq_close(self.0) };
    }
}

/// Removes queue `name`.
pub fn mq_unlink(name: &str) -> io::Result<()> {
    let cname = c_name(name)?;
    // SAFETY: valid C string.
    cvt(unsafe { libc::mq_unlink(cname.as_ptr()) }).map(|_| ())
}

/// A named POSIX semaphore, closed on drop.
pub struct NamedSemaphore(*mut libc::sem_t);

// SAFETY: sem_t operations are thread-safe; the pointer is a process-wide mapping.
unsafe impl Send for NamedSemaphore {}
// SAFETY: as above.
unsafe impl Sync for NamedSemaphore {}

impl NamedSemaphore {
    /// Creates semaphore `name` ("/…") with value 0.
    pub fn create(name: &str) -> io::Result<Self> {
        let cname = c_name(name)?;
        // SAFETY: valid C string; sem_open is variadic, mode and value go as c_uint.
        let sem = unsafe {
            libc::sem_open(
                cname.as_ptr(),
                libc::O_CREAT | libc::O_EXCL,
                0o600 as libc::c_uint,
                0 as libc::c_uint,
            )
        };
        if sem == libc::SEM_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(NamedSemaphore(sem))
    }

    /// Increments the semaphore.
    #[inline]
    pub fn post(&self) -> io::Result<()> {
        // SAFETY: the semaphore is open.
        cvt(unsafe { libc::sem_post(self.0) }).map(|_| ())
    }

    /// The current value (tests check that a count stays bounded).
    #[cfg(test)]
    pub fn value(&self) -> io::Result<i32> {
        let mut v: libc::c_int = 0;
        // SAFETY: the semaphore is open; `v` is a valid out-pointer.
        cvt(unsafe { libc::sem_getvalue(self.0, &mut v) })?;
        Ok(v)
    }

    /// Decrements, blocking while zero (EINTR on a handled signal).
    #[inline]
    pub fn wait(&self) -> io::Result<()> {
        // SAFETY: the semaphore is open.
        cvt(unsafe { libc::sem_wait(self.0) }).map(|_| ())
    }
}

impl Drop for NamedSemaphore {
    fn drop(&mut self) {
        // SAFETY: opened by sem_open and closed once.
        unsafe { libc::sem_close(self.0) };
    }
}

/// Removes semaphore `name`.
pub fn sem_unlink(name: &str) -> io::Result<()> {
    let cname = c_name(name)?;
    // SAFETY: valid C string.
    cvt(unsafe { libc::sem_unlink(cname.as_ptr()) }).map(|_| ())
}
