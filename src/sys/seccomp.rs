//! A seccomp filter that makes chosen system calls fail with a chosen errno,
//! and the system-call numbers behind the C library's calls.
//!
//! This is how ipcmark proves, without strace or tracefs, that an operation
//! enters the kernel through a given call: in a child process made for the
//! purpose, the filter makes that call fail; if the operation then fails with
//! the filter's errno it made the call, and if it still succeeds it did not
//! (a vDSO read, a cached value). A filter cannot be removed, so it is only
//! ever installed in such a child.

use super::cvt;
use std::io;

/// The audit architecture of the system-call ABI the filter checks first, so
/// that a call of another ABI with the same number is left alone.
#[cfg(target_arch = "x86_64")]
pub(super) const AUDIT_ARCH: Option<u32> = Some(0xC000_003E); // EM_X86_64 | 64-bit | little-endian
#[cfg(target_arch = "aarch64")]
pub(super) const AUDIT_ARCH: Option<u32> = Some(0xC000_00B7); // EM_AARCH64 | 64-bit | little-endian
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(super) const AUDIT_ARCH: Option<u32> = None;

/// Offsets in `struct seccomp_data`: `int nr; __u32 arch; __u64
/// instruction_pointer; __u64 args[6];`.
pub(super) const OFF_NR: u32 = 0;
pub(super) const OFF_ARCH: u32 = 4;

/// A BPF program failing some system calls, built before the fork so that
/// installing it in the child allocates nothing.
pub struct FailFilter {
    prog: Vec<libc::sock_filter>,
}

/// A BPF statement (load, return) with its constant.
pub(super) fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

/// A BPF jump: `jt` instructions ahead if the accumulator equals `k`, else `jf`.
pub(super) fn jeq(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

impl FailFilter {
    /// A filter that fails every call in `nrs` with `errno` and allows all
    /// else. Unsupported on architectures whose audit id is not known here.
    pub fn new(nrs: &[libc::c_long], errno: i32) -> io::Result<FailFilter> {
        let Some(arch) = AUDIT_ARCH else {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "seccomp probe not built for this architecture",
            ));
        };
        let n = nrs.len();
        if n == 0 || n > 200 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "between 1 and 200 system calls",
            ));
        }
        let load = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
        let mut prog = Vec::with_capacity(n + 5);
        prog.push(stmt(load, OFF_ARCH));
        // Another ABI: jump over the number checks to "allow" (at index 3 + n).
        prog.push(jeq(arch, 0, (n + 1) as u8));
        prog.push(stmt(load, OFF_NR));
        for (i, &nr) in nrs.iter().enumerate() {
            // Match: jump to "fail" (at index 4 + n).
            prog.push(jeq(nr as u32, (n - i) as u8, 0));
        }
        prog.push(stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW));
        prog.push(stmt(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | (errno as u32 & libc::SECCOMP_RET_DATA),
        ));
        Ok(FailFilter { prog })
    }

    /// Installs the filter on the calling thread, for good (and on every
    /// process it creates). Sets `no_new_privs`, which the kernel requires of
    /// an unprivileged caller.
    pub fn install(&self) -> io::Result<()> {
        install(&self.prog)
    }
}

/// Installs the BPF program `prog` on the calling thread, for good: sets
/// `no_new_privs` (which the kernel requires of an unprivileged caller),
/// then the filter. Allocates nothing, so a forked child may call it.
pub(super) fn install(prog: &[libc::sock_filter]) -> io::Result<()> {
    let len = u16::try_from(prog.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "BPF program too long"))?;
    let fprog = libc::sock_fprog {
        len,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integer arguments.
    cvt(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })?;
    // SAFETY: fprog points to a valid BPF program that outlives the call
    // (the kernel copies it and never writes through the pointer).
    cvt(unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &fprog as *const libc::sock_fprog,
        )
    })
    .map(|_| ())
}

/// The system-call numbers the C library may use for each call, so that a
/// probe fails the call whichever variant this glibc picks.
pub mod calls {
    use libc::c_long;

    /// `getpid`.
    pub const GETPID: &[c_long] = &[libc::SYS_getpid];
    /// `gettid`.
    pub const GETTID: &[c_long] = &[libc::SYS_gettid];
    /// `clock_gettime` (normally served by the vDSO without a system call).
    pub const CLOCK_GETTIME: &[c_long] = &[libc::SYS_clock_gettime];
    /// `lseek`.
    pub const LSEEK: &[c_long] = &[libc::SYS_lseek];
    /// `pread`.
    pub const PREAD: &[c_long] = &[libc::SYS_pread64];
    /// `pwrite`.
    pub const PWRITE: &[c_long] = &[libc::SYS_pwrite64];
    /// `write`.
    pub const WRITE: &[c_long] = &[libc::SYS_write];
    /// `read`.
    pub const READ: &[c_long] = &[libc::SYS_read];
    /// `sched_yield`.
    pub const SCHED_YIELD: &[c_long] = &[libc::SYS_sched_yield];
    /// `close`.
    pub const CLOSE: &[c_long] = &[libc::SYS_close];
    /// `mmap`.
    pub const MMAP: &[c_long] = &[libc::SYS_mmap];
    /// `munmap`.
    pub const MUNMAP: &[c_long] = &[libc::SYS_munmap];
    /// `execve` and its fd variant.
    pub const EXEC: &[c_long] = &[libc::SYS_execve, libc::SYS_execveat];
    /// `waitpid` (wait4) and `waitid`.
    pub const WAIT: &[c_long] = &[libc::SYS_wait4, libc::SYS_waitid];
    /// `stat`: newer glibc uses `newfstatat` or `statx`.
    #[cfg(target_arch = "x86_64")]
    pub const STAT: &[c_long] = &[libc::SYS_stat, libc::SYS_newfstatat, libc::SYS_statx];
    /// `stat`: newer glibc uses `newfstatat` or `statx`.
    #[cfg(not(target_arch = "x86_64"))]
    pub const STAT: &[c_long] = &[libc::SYS_newfstatat, libc::SYS_statx];
    /// `open`: glibc uses `openat`.
    #[cfg(target_arch = "x86_64")]
    pub const OPEN: &[c_long] = &[libc::SYS_open, libc::SYS_openat, libc::SYS_openat2];
    /// `open`: glibc uses `openat`.
    #[cfg(not(target_arch = "x86_64"))]
    pub const OPEN: &[c_long] = &[libc::SYS_openat, libc::SYS_openat2];
    /// `unlink`: glibc may use `unlinkat`.
    #[cfg(target_arch = "x86_64")]
    pub const UNLINK: &[c_long] = &[libc::SYS_unlink, libc::SYS_unlinkat];
    /// `unlink`: glibc may use `unlinkat`.
    #[cfg(not(target_arch = "x86_64"))]
    pub const UNLINK: &[c_long] = &[libc::SYS_unlinkat];
    /// Creating a process: `fork` is `clone` in glibc, `posix_spawn` is
    /// `clone3` (falling back to `clone`) with `CLONE_VFORK`.
    #[cfg(target_arch = "x86_64")]
    pub const CLONE: &[c_long] = &[
        libc::SYS_clone,
        libc::SYS_clone3,
        libc::SYS_fork,
        libc::SYS_vfork,
    ];
    /// Creating a process: `clone` or `clone3`.
    #[cfg(not(target_arch = "x86_64"))]
    pub const CLONE: &[c_long] = &[libc::SYS_clone, libc::SYS_clone3];
    /// `futex` (waking a thread blocked on a word).
    pub const FUTEX: &[c_long] = &[libc::SYS_futex];
    /// `timerfd_settime` (arming a timer descriptor).
    pub const TIMERFD_SETTIME: &[c_long] = &[libc::SYS_timerfd_settime];
    /// `mq_send`, which glibc makes as `mq_timedsend`.
    pub const MQ_TIMEDSEND: &[c_long] = &[libc::SYS_mq_timedsend];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_shape() {
        let f = FailFilter::new(&[1, 2, 3], libc::ENOTRECOVERABLE).unwrap();
        assert_eq!(f.prog.len(), 3 + 3 + 2);
        // Every match lands on the last instruction, the errno return.
        for i in 0..3 {
            let insn = &f.prog[3 + i];
            assert_eq!(3 + i + 1 + insn.jt as usize, f.prog.len() - 1);
        }
        // The ABI check's miss lands on "allow".
        assert_eq!(1 + 1 + f.prog[1].jf as usize, f.prog.len() - 2);
        assert!(FailFilter::new(&[], 1).is_err());
    }
}
