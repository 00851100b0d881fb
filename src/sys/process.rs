//! Process and thread identity, fork, signals to a peer, and reaping.

use super::cvt;
use std::io;

/// Result of [`fork`].
pub enum Fork {
    /// In the parent: the child's pid.
    Parent(libc::pid_t),
    /// In the child.
    Child,
}

/// Forks the calling process.
///
/// Only call this while the process has a single thread: the engine forks its
/// peers before any helper thread exists.
pub fn fork() -> io::Result<Fork> {
    // SAFETY: fork has no memory-safety preconditions; the caller keeps the
    // single-threaded rule above so the child's heap and locks are consistent.
    let pid = cvt(unsafe { libc::fork() })?;
    Ok(if pid == 0 {
        Fork::Child
    } else {
        Fork::Parent(pid)
    })
}

/// Ends the process at once, without running destructors or flushing stdio:
/// what a forked child must do so it never touches the parent's objects.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and has no preconditions.
    unsafe { libc::_exit(code) }
}

/// Asks the kernel to send `sig` to this process when its parent dies.
pub fn set_parent_death_signal(sig: i32) -> io::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number by value.
    cvt(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) }).map(|_| ())
}

/// The kernel thread id of the calling thread.
pub fn gettid() -> libc::pid_t {
    // SAFETY: gettid cannot fail.
    unsafe { libc::gettid() }
}

/// The process id.
pub fn getpid() -> libc::pid_t {
    std::process::id() as libc::pid_t
}

/// The parent's process id.
pub fn getppid() -> libc::pid_t {
    // SAFETY: getppid cannot fail.
    unsafe { libc::getppid() }
}

/// Sends `sig` to thread `tid` of process `pid`.
#[inline]
pub fn tgkill(pid: libc::pid_t, tid: libc::pid_t, sig: i32) -> io::Result<()> {
    // SAFETY: plain system call with integer arguments.
    let ret = unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, sig) };
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Sends `sig` to process `pid` (signal 0 only checks that it exists).
pub fn kill(pid: libc::pid_t, sig: i32) -> io::Result<()> {
    // SAFETY: plain system call with integer arguments.
    cvt(unsafe { libc::kill(pid, sig) }).map(|_| ())
}

/// Whether a process with this pid exists (EPERM means it exists but is not ours).
pub fn process_exists(pid: libc::pid_t) -> bool {
    match kill(pid, 0) {
        Ok(()) => true,
        Err(e) => e.raw_os_error() == Some(libc::EPERM),
    }
}

/// How a reaped child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// Reaps `pid` if it has ended; `Ok(None)` if it still runs.
pub fn try_wait(pid: libc::pid_t) -> io::Result<Option<ExitStatus>> {
    let mut status = 0;
    // SAFETY: status is a valid out-pointer.
    let ret = loop {
        match cvt(unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) }) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => break other?,
        }
    };
    if ret == 0 {
        return Ok(None);
    }
    Ok(Some(if libc::WIFSIGNALED(status) {
        ExitStatus::Signal(libc::WTERMSIG(status))
    } else {
        ExitStatus::Code(libc::WEXITSTATUS(status))
    }))
}
