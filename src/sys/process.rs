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

/// Makes the process `cmd` starts receive `sig` when the thread that
/// starts it ends (the signal survives the exec; a `kill -9` of this
/// process then still ends a helper it started, such as a testbed's agent).
pub fn parent_death_signal_for(cmd: &mut std::process::Command, sig: i32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and calls only
    // prctl, which is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(move || set_parent_death_signal(sig));
    }
}

/// Names the calling thread (`PR_SET_NAME`, at most 15 bytes kept): what
/// `ps` and `/proc/PID/comm` show.
pub fn set_name(name: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of which it keeps 16 bytes.
    cvt(unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr(), 0, 0, 0) }).map(|_| ())
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

/// The effective user id.
pub fn geteuid() -> libc::uid_t {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// The effective group id.
pub fn getegid() -> libc::gid_t {
    // SAFETY: getegid cannot fail.
    unsafe { libc::getegid() }
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

/// The thread ids of process `pid` (`/proc/<pid>/task`), ascending;
/// just `pid` where the list cannot be read.
pub fn threads(pid: libc::pid_t) -> Vec<libc::pid_t> {
    let mut tids: Vec<libc::pid_t> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    if tids.is_empty() {
        tids.push(pid);
    }
    tids.sort_unstable();
    tids
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

/// `getpid` as a real system call, never a value cached in user space.
#[inline]
pub fn getpid_syscall() -> io::Result<libc::pid_t> {
    // SAFETY: SYS_getpid takes no arguments.
    let r = unsafe { libc::syscall(libc::SYS_getpid) };
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as libc::pid_t)
    }
}

/// `gettid` as a real system call.
#[inline]
pub fn gettid_syscall() -> io::Result<libc::pid_t> {
    // SAFETY: SYS_gettid takes no arguments.
    let r = unsafe { libc::syscall(libc::SYS_gettid) };
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as libc::pid_t)
    }
}

/// Waits (blocking) for child `pid` to end and reaps it. A handled signal ends
/// the wait with `EINTR`, returned to the caller so that it can decide whether
/// to wait again.
#[inline]
pub fn wait_blocking(pid: libc::pid_t) -> io::Result<ExitStatus> {
    let mut status = 0;
    // SAFETY: status is a valid out-pointer.
    cvt(unsafe { libc::waitpid(pid, &mut status, 0) })?;
    Ok(if libc::WIFSIGNALED(status) {
        ExitStatus::Signal(libc::WTERMSIG(status))
    } else {
        ExitStatus::Code(libc::WEXITSTATUS(status))
    })
}

/// Kills child `pid` and reaps it, for a path where waiting for it was cut
/// short (a stop request, a time-out): no zombie is left behind.
pub fn kill_and_reap(pid: libc::pid_t) {
    let _ = kill(pid, libc::SIGKILL);
    while let Err(e) = wait_blocking(pid) {
        if e.kind() != io::ErrorKind::Interrupted {
            break;
        }
    }
}

/// A program and its arguments, prepared once so that each `posix_spawn`
/// allocates nothing in this process.
pub struct Spawner {
    // The pointer arrays point into these strings; they live as long as self.
    _strings: Vec<std::ffi::CString>,
    path: *const libc::c_char,
    argv: Vec<*mut libc::c_char>,
    envp: Vec<*mut libc::c_char>,
}

impl Spawner {
    /// Prepares `path` run with `args` (argv[0] first) and an empty environment.
    pub fn new(path: &std::path::Path, args: &[&str]) -> io::Result<Spawner> {
        let path = super::file::c_path(path)?;
        let mut strings = vec![path];
        for a in args {
            strings.push(std::ffi::CString::new(*a).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "argument contains NUL")
            })?);
        }
        let path = strings[0].as_ptr();
        let mut argv: Vec<*mut libc::c_char> = strings[1..]
            .iter()
            .map(|s| s.as_ptr() as *mut libc::c_char)
            .collect();
        argv.push(std::ptr::null_mut());
        Ok(Spawner {
            _strings: strings,
            path,
            argv,
            envp: vec![std::ptr::null_mut()],
        })
    }

    /// Starts the program (`posix_spawn`, no file actions, default
    /// attributes); returns the child's pid. The child inherits the signal
    /// mask; handlers are reset by exec.
    #[inline]
    pub fn spawn(&self) -> io::Result<libc::pid_t> {
        let mut pid: libc::pid_t = 0;
        // SAFETY: path, argv and envp are NUL-terminated arrays of valid C
        // strings owned by self; null file actions and attributes are allowed.
        let ret = unsafe {
            libc::posix_spawn(
                &mut pid,
                self.path,
                std::ptr::null(),
                std::ptr::null(),
                self.argv.as_ptr(),
                self.envp.as_ptr(),
            )
        };
        if ret != 0 {
            return Err(io::Error::from_raw_os_error(ret));
        }
        Ok(pid)
    }
}
