//! The system calls of Docker's default seccomp profile (moby/profiles,
//! `seccomp/default.json`, as of its commit 02e898b1), as a default
//! container on x86_64 or aarch64 gets them, and their numbers here.
//!
//! A default container has Docker's default capabilities (no
//! CAP_SYS_ADMIN, CAP_SYS_PTRACE, …; CAP_SYS_CHROOT yes) on a kernel newer
//! than 4.8: it gets the profile's unconditional list, then `ptrace` and
//! `process_vm_readv`/`writev`, `socket` and `personality`, the amd64 and
//! arm blocks, `clone`, `clone3` (failed with ENOSYS, so that the C library
//! falls back to `clone`) and `chroot`, in the profile's order. Docker
//! allows `socket`, `personality` and `clone` only for some argument values;
//! here they are allowed whatever their arguments, so that no action
//! depends on an argument (the kernel then caches every allowed call).

use libc::c_long;

/// The profile's calls in its order (those of every architecture: the ones
/// this one lacks resolve to no number and are left out of the filter).
#[rustfmt::skip]
pub(super) const NAMES: &[&str] = &[
    // The unconditional allow-list.
    "accept", "accept4", "access", "adjtimex", "alarm", "bind", "brk", "cachestat",
    "capget", "capset", "chdir", "chmod", "chown", "chown32", "clock_adjtime",
    "clock_adjtime64", "clock_getres", "clock_getres_time64", "clock_gettime",
    "clock_gettime64", "clock_nanosleep", "clock_nanosleep_time64", "close", "close_range",
    "connect", "copy_file_range", "creat", "dup", "dup2", "dup3", "epoll_create",
    "epoll_create1", "epoll_ctl", "epoll_ctl_old", "epoll_pwait", "epoll_pwait2",
    "epoll_wait", "epoll_wait_old", "eventfd", "eventfd2", "execve", "execveat", "exit",
    "exit_group", "faccessat", "faccessat2", "fadvise64", "fadvise64_64", "fallocate",
    "fanotify_mark", "fchdir", "fchmod", "fchmodat", "fchmodat2", "fchown", "fchown32",
    "fchownat", "fcntl", "fcntl64", "fdatasync", "fgetxattr", "flistxattr", "flock",
    "fork", "fremovexattr", "fsetxattr", "fstat", "fstat64", "fstatat64", "fstatfs",
    "fstatfs64", "fsync", "ftruncate", "ftruncate64", "futex", "futex_requeue",
    "futex_time64", "futex_wait", "futex_waitv", "futex_wake", "futimesat", "getcpu",
    "getcwd", "getdents", "getdents64", "getegid", "getegid32", "geteuid", "geteuid32",
    "getgid", "getgid32", "getgroups", "getgroups32", "getitimer", "getpeername",
    "getpgid", "getpgrp", "getpid", "getppid", "getpriority", "getrandom", "getresgid",
    "getresgid32", "getresuid", "getresuid32", "getrlimit", "get_robust_list", "getrusage",
    "getsid", "getsockname", "getsockopt", "get_thread_area", "gettid", "gettimeofday",
    "getuid", "getuid32", "getxattr", "getxattrat", "inotify_add_watch", "inotify_init",
    "inotify_init1", "inotify_rm_watch", "io_cancel", "ioctl", "io_destroy",
    "io_getevents", "io_pgetevents", "io_pgetevents_time64", "ioprio_get", "ioprio_set",
    "io_setup", "io_submit", "ipc", "kill", "landlock_add_rule", "landlock_create_ruleset",
    "landlock_restrict_self", "lchown", "lchown32", "lgetxattr", "link", "linkat",
    "listen", "listmount", "listxattr", "listxattrat", "llistxattr", "_llseek",
    "lremovexattr", "lseek", "lsetxattr", "lstat", "lstat64", "madvise",
    "map_shadow_stack", "membarrier", "memfd_create", "memfd_secret", "mincore", "mkdir",
    "mkdirat", "mknod", "mknodat", "mlock", "mlock2", "mlockall", "mmap", "mmap2",
    "mprotect", "mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive",
    "mq_timedreceive_time64", "mq_timedsend", "mq_timedsend_time64", "mq_unlink", "mremap",
    "mseal", "msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock", "munlockall",
    "munmap", "name_to_handle_at", "nanosleep", "newfstatat", "_newselect", "open",
    "openat", "openat2", "pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2",
    "pkey_alloc", "pkey_free", "pkey_mprotect", "poll", "ppoll", "ppoll_time64", "prctl",
    "pread64", "preadv", "preadv2", "prlimit64", "process_mrelease", "pselect6",
    "pselect6_time64", "pwrite64", "pwritev", "pwritev2", "read", "readahead", "readlink",
    "readlinkat", "readv", "recv", "recvfrom", "recvmmsg", "recvmmsg_time64", "recvmsg",
    "remap_file_pages", "removexattr", "removexattrat", "rename", "renameat", "renameat2",
    "restart_syscall", "riscv_hwprobe", "rmdir", "rseq", "rt_sigaction", "rt_sigpending",
    "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend",
    "rt_sigtimedwait", "rt_sigtimedwait_time64", "rt_tgsigqueueinfo", "sched_getaffinity",
    "sched_getattr", "sched_getparam", "sched_get_priority_max", "sched_get_priority_min",
    "sched_getscheduler", "sched_rr_get_interval", "sched_rr_get_interval_time64",
    "sched_setaffinity", "sched_setattr", "sched_setparam", "sched_setscheduler",
    "sched_yield", "seccomp", "select", "semctl", "semget", "semop", "semtimedop",
    "semtimedop_time64", "send", "sendfile", "sendfile64", "sendmmsg", "sendmsg", "sendto",
    "setfsgid", "setfsgid32", "setfsuid", "setfsuid32", "setgid", "setgid32", "setgroups",
    "setgroups32", "setitimer", "setpgid", "setpriority", "setregid", "setregid32",
    "setresgid", "setresgid32", "setresuid", "setresuid32", "setreuid", "setreuid32",
    "setrlimit", "set_robust_list", "setsid", "setsockopt", "set_thread_area",
    "set_tid_address", "setuid", "setuid32", "setxattr", "setxattrat", "shmat", "shmctl",
    "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4", "sigprocmask",
    "sigreturn", "socketcall", "socketpair", "splice", "stat", "stat64", "statfs",
    "statfs64", "statmount", "statx", "symlink", "symlinkat", "sync", "sync_file_range",
    "syncfs", "sysinfo", "tee", "tgkill", "time", "timer_create", "timer_delete",
    "timer_getoverrun", "timer_gettime", "timer_gettime64", "timer_settime",
    "timer_settime64", "timerfd_create", "timerfd_gettime", "timerfd_gettime64",
    "timerfd_settime", "timerfd_settime64", "times", "tkill", "truncate", "truncate64",
    "ugetrlimit", "umask", "uname", "unlink", "unlinkat", "uretprobe", "utime",
    "utimensat", "utimensat_time64", "utimes", "vfork", "vmsplice", "wait4", "waitid",
    "waitpid", "write", "writev",
    // The conditional entries a default container gets.
    "process_vm_readv", "process_vm_writev", "ptrace", "socket", "personality",
    "arm_fadvise64_64", "arm_sync_file_range", "sync_file_range2", "breakpoint",
    "cacheflush", "set_tls", "arch_prctl", "modify_ldt", "clone", "clone3", "chroot",
];

/// The calls of [`NAMES`] the profile fails with ENOSYS rather than allowing.
pub(super) const ENOSYS: &[&str] = &["clone3"];

/// `libc::SYS_NAME` as the pair ("SYS_NAME", number).
macro_rules! libc_numbers {
    ($($sys:ident)*) => { &[$((stringify!($sys), libc::$sys)),*] };
}

/// The numbers libc has (in both its glibc and musl tables) of the calls of
/// [`NAMES`] this architecture has.
#[cfg(target_arch = "x86_64")]
#[rustfmt::skip]
const LIBC: &[(&str, c_long)] = libc_numbers!(
    SYS_accept SYS_accept4 SYS_access SYS_adjtimex SYS_alarm SYS_bind SYS_brk SYS_capget
    SYS_capset SYS_chdir SYS_chmod SYS_chown SYS_clock_adjtime SYS_clock_getres
    SYS_clock_gettime SYS_clock_nanosleep SYS_close SYS_close_range SYS_connect
    SYS_copy_file_range SYS_creat SYS_dup SYS_dup2 SYS_dup3 SYS_epoll_create
    SYS_epoll_create1 SYS_epoll_ctl SYS_epoll_ctl_old SYS_epoll_pwait SYS_epoll_pwait2
    SYS_epoll_wait SYS_epoll_wait_old SYS_eventfd SYS_eventfd2 SYS_execve SYS_execveat
    SYS_exit SYS_exit_group SYS_faccessat SYS_faccessat2 SYS_fadvise64 SYS_fallocate
    SYS_fanotify_mark SYS_fchdir SYS_fchmod SYS_fchmodat SYS_fchmodat2 SYS_fchown
    SYS_fchownat SYS_fcntl SYS_fdatasync SYS_fgetxattr SYS_flistxattr SYS_flock SYS_fork
    SYS_fremovexattr SYS_fsetxattr SYS_fstat SYS_fstatfs SYS_fsync SYS_ftruncate SYS_futex
    SYS_futex_waitv SYS_futimesat SYS_getcpu SYS_getcwd SYS_getdents SYS_getdents64
    SYS_getegid SYS_geteuid SYS_getgid SYS_getgroups SYS_getitimer SYS_getpeername
    SYS_getpgid SYS_getpgrp SYS_getpid SYS_getppid SYS_getpriority SYS_getrandom
    SYS_getresgid SYS_getresuid SYS_getrlimit SYS_get_robust_list SYS_getrusage SYS_getsid
    SYS_getsockname SYS_getsockopt SYS_get_thread_area SYS_gettid SYS_gettimeofday
    SYS_getuid SYS_getxattr SYS_inotify_add_watch SYS_inotify_init SYS_inotify_init1
    SYS_inotify_rm_watch SYS_io_cancel SYS_ioctl SYS_io_destroy SYS_io_getevents
    SYS_ioprio_get SYS_ioprio_set SYS_io_setup SYS_io_submit SYS_kill SYS_landlock_add_rule
    SYS_landlock_create_ruleset SYS_landlock_restrict_self SYS_lchown SYS_lgetxattr
    SYS_link SYS_linkat SYS_listen SYS_listxattr SYS_llistxattr SYS_lremovexattr SYS_lseek
    SYS_lsetxattr SYS_lstat SYS_madvise SYS_membarrier SYS_memfd_create SYS_memfd_secret
    SYS_mincore SYS_mkdir SYS_mkdirat SYS_mknod SYS_mknodat SYS_mlock SYS_mlock2
    SYS_mlockall SYS_mmap SYS_mprotect SYS_mq_getsetattr SYS_mq_notify SYS_mq_open
    SYS_mq_timedreceive SYS_mq_timedsend SYS_mq_unlink SYS_mremap SYS_mseal SYS_msgctl
    SYS_msgget SYS_msgrcv SYS_msgsnd SYS_msync SYS_munlock SYS_munlockall SYS_munmap
    SYS_name_to_handle_at SYS_nanosleep SYS_newfstatat SYS_open SYS_openat SYS_openat2
    SYS_pause SYS_pidfd_open SYS_pidfd_send_signal SYS_pipe SYS_pipe2 SYS_pkey_alloc
    SYS_pkey_free SYS_pkey_mprotect SYS_poll SYS_ppoll SYS_prctl SYS_pread64 SYS_preadv
    SYS_preadv2 SYS_prlimit64 SYS_process_mrelease SYS_pselect6 SYS_pwrite64 SYS_pwritev
    SYS_pwritev2 SYS_read SYS_readahead SYS_readlink SYS_readlinkat SYS_readv SYS_recvfrom
    SYS_recvmmsg SYS_recvmsg SYS_remap_file_pages SYS_removexattr SYS_rename SYS_renameat
    SYS_renameat2 SYS_restart_syscall SYS_rmdir SYS_rseq SYS_rt_sigaction SYS_rt_sigpending
    SYS_rt_sigprocmask SYS_rt_sigqueueinfo SYS_rt_sigreturn SYS_rt_sigsuspend
    SYS_rt_sigtimedwait SYS_rt_tgsigqueueinfo SYS_sched_getaffinity SYS_sched_getattr
    SYS_sched_getparam SYS_sched_get_priority_max SYS_sched_get_priority_min
    SYS_sched_getscheduler SYS_sched_rr_get_interval SYS_sched_setaffinity
    SYS_sched_setattr SYS_sched_setparam SYS_sched_setscheduler SYS_sched_yield SYS_seccomp
    SYS_select SYS_semctl SYS_semget SYS_semop SYS_semtimedop SYS_sendfile SYS_sendmmsg
    SYS_sendmsg SYS_sendto SYS_setfsgid SYS_setfsuid SYS_setgid SYS_setgroups SYS_setitimer
    SYS_setpgid SYS_setpriority SYS_setregid SYS_setresgid SYS_setresuid SYS_setreuid
    SYS_setrlimit SYS_set_robust_list SYS_setsid SYS_setsockopt SYS_set_thread_area
    SYS_set_tid_address SYS_setuid SYS_setxattr SYS_shmat SYS_shmctl SYS_shmdt SYS_shmget
    SYS_shutdown SYS_sigaltstack SYS_signalfd SYS_signalfd4 SYS_socketpair SYS_splice
    SYS_stat SYS_statfs SYS_statx SYS_symlink SYS_symlinkat SYS_sync SYS_sync_file_range
    SYS_syncfs SYS_sysinfo SYS_tee SYS_tgkill SYS_time SYS_timer_create SYS_timer_delete
    SYS_timer_getoverrun SYS_timer_gettime SYS_timer_settime SYS_timerfd_create
    SYS_timerfd_gettime SYS_timerfd_settime SYS_times SYS_tkill SYS_truncate SYS_umask
    SYS_uname SYS_unlink SYS_unlinkat SYS_utime SYS_utimensat SYS_utimes SYS_vfork
    SYS_vmsplice SYS_wait4 SYS_waitid SYS_write SYS_writev SYS_process_vm_readv
    SYS_process_vm_writev SYS_ptrace SYS_socket SYS_personality SYS_arch_prctl
    SYS_modify_ldt SYS_clone SYS_clone3 SYS_chroot
);

/// Calls this architecture has whose numbers libc 0.2.191 lacks, from the
/// kernel's arch/x86/entry/syscalls/syscall_64.tbl.
#[cfg(target_arch = "x86_64")]
const KERNEL: &[(&str, c_long)] = &[
    ("io_pgetevents", 333),
    ("uretprobe", 335),
    ("cachestat", 451),
    ("map_shadow_stack", 453),
    ("futex_wake", 454),
    ("futex_wait", 455),
    ("futex_requeue", 456),
    ("statmount", 457),
    ("listmount", 458),
    ("setxattrat", 463),
    ("getxattrat", 464),
    ("listxattrat", 465),
    ("removexattrat", 466),
];

/// The numbers libc has (in both its glibc and musl tables) of the calls of
/// [`NAMES`] this architecture has.
#[cfg(target_arch = "aarch64")]
#[rustfmt::skip]
const LIBC: &[(&str, c_long)] = libc_numbers!(
    SYS_accept SYS_accept4 SYS_adjtimex SYS_bind SYS_brk SYS_capget SYS_capset SYS_chdir
    SYS_clock_adjtime SYS_clock_getres SYS_clock_gettime SYS_clock_nanosleep SYS_close
    SYS_close_range SYS_connect SYS_copy_file_range SYS_dup SYS_dup3 SYS_epoll_create1
    SYS_epoll_ctl SYS_epoll_pwait SYS_epoll_pwait2 SYS_eventfd2 SYS_execve SYS_execveat
    SYS_exit SYS_exit_group SYS_faccessat SYS_faccessat2 SYS_fadvise64 SYS_fallocate
    SYS_fanotify_mark SYS_fchdir SYS_fchmod SYS_fchmodat SYS_fchown SYS_fchownat SYS_fcntl
    SYS_fdatasync SYS_fgetxattr SYS_flistxattr SYS_flock SYS_fremovexattr SYS_fsetxattr
    SYS_fstat SYS_fstatfs SYS_fsync SYS_ftruncate SYS_futex SYS_futex_waitv SYS_getcpu
    SYS_getcwd SYS_getdents64 SYS_getegid SYS_geteuid SYS_getgid SYS_getgroups
    SYS_getitimer SYS_getpeername SYS_getpgid SYS_getpid SYS_getppid SYS_getpriority
    SYS_getrandom SYS_getresgid SYS_getresuid SYS_get_robust_list SYS_getrusage SYS_getsid
    SYS_getsockname SYS_getsockopt SYS_gettid SYS_gettimeofday SYS_getuid SYS_getxattr
    SYS_inotify_add_watch SYS_inotify_init1 SYS_inotify_rm_watch SYS_io_cancel SYS_ioctl
    SYS_io_destroy SYS_io_getevents SYS_ioprio_get SYS_ioprio_set SYS_io_setup
    SYS_io_submit SYS_kill SYS_landlock_add_rule SYS_landlock_create_ruleset
    SYS_landlock_restrict_self SYS_lgetxattr SYS_linkat SYS_listen SYS_listxattr
    SYS_llistxattr SYS_lremovexattr SYS_lseek SYS_lsetxattr SYS_madvise SYS_membarrier
    SYS_memfd_create SYS_memfd_secret SYS_mincore SYS_mkdirat SYS_mknodat SYS_mlock
    SYS_mlock2 SYS_mlockall SYS_mmap SYS_mprotect SYS_mq_getsetattr SYS_mq_notify
    SYS_mq_open SYS_mq_timedreceive SYS_mq_timedsend SYS_mq_unlink SYS_mremap SYS_mseal
    SYS_msgctl SYS_msgget SYS_msgrcv SYS_msgsnd SYS_msync SYS_munlock SYS_munlockall
    SYS_munmap SYS_name_to_handle_at SYS_nanosleep SYS_newfstatat SYS_openat SYS_openat2
    SYS_pidfd_open SYS_pidfd_send_signal SYS_pipe2 SYS_pkey_alloc SYS_pkey_free
    SYS_pkey_mprotect SYS_ppoll SYS_prctl SYS_pread64 SYS_preadv SYS_preadv2 SYS_prlimit64
    SYS_process_mrelease SYS_pselect6 SYS_pwrite64 SYS_pwritev SYS_pwritev2 SYS_read
    SYS_readahead SYS_readlinkat SYS_readv SYS_recvfrom SYS_recvmmsg SYS_recvmsg
    SYS_remap_file_pages SYS_removexattr SYS_renameat2 SYS_restart_syscall SYS_rseq
    SYS_rt_sigaction SYS_rt_sigpending SYS_rt_sigprocmask SYS_rt_sigqueueinfo
    SYS_rt_sigreturn SYS_rt_sigsuspend SYS_rt_sigtimedwait SYS_rt_tgsigqueueinfo
    SYS_sched_getaffinity SYS_sched_getattr SYS_sched_getparam SYS_sched_get_priority_max
    SYS_sched_get_priority_min SYS_sched_getscheduler SYS_sched_rr_get_interval
    SYS_sched_setaffinity SYS_sched_setattr SYS_sched_setparam SYS_sched_setscheduler
    SYS_sched_yield SYS_seccomp SYS_semctl SYS_semget SYS_semop SYS_semtimedop SYS_sendfile
    SYS_sendmmsg SYS_sendmsg SYS_sendto SYS_setfsgid SYS_setfsuid SYS_setgid SYS_setgroups
    SYS_setitimer SYS_setpgid SYS_setpriority SYS_setregid SYS_setresgid SYS_setresuid
    SYS_setreuid SYS_set_robust_list SYS_setsid SYS_setsockopt SYS_set_tid_address
    SYS_setuid SYS_setxattr SYS_shmat SYS_shmctl SYS_shmdt SYS_shmget SYS_shutdown
    SYS_sigaltstack SYS_signalfd4 SYS_socketpair SYS_splice SYS_statfs SYS_statx
    SYS_symlinkat SYS_sync SYS_syncfs SYS_sysinfo SYS_tee SYS_tgkill SYS_timer_create
    SYS_timer_delete SYS_timer_getoverrun SYS_timer_gettime SYS_timer_settime
    SYS_timerfd_create SYS_timerfd_gettime SYS_timerfd_settime SYS_times SYS_tkill
    SYS_truncate SYS_umask SYS_uname SYS_unlinkat SYS_utimensat SYS_vmsplice SYS_wait4
    SYS_waitid SYS_write SYS_writev SYS_process_vm_readv SYS_process_vm_writev SYS_ptrace
    SYS_socket SYS_personality SYS_clone SYS_clone3 SYS_chroot
);

/// Calls this architecture has whose numbers libc 0.2.191 lacks (or has in
/// its musl table only), from the kernel's include/uapi/asm-generic/unistd.h.
#[cfg(target_arch = "aarch64")]
const KERNEL: &[(&str, c_long)] = &[
    ("renameat", 38),
    ("sync_file_range", 84),
    ("getrlimit", 163),
    ("setrlimit", 164),
    ("io_pgetevents", 292),
    ("cachestat", 451),
    ("fchmodat2", 452),
    ("map_shadow_stack", 453),
    ("futex_wake", 454),
    ("futex_wait", 455),
    ("futex_requeue", 456),
    ("statmount", 457),
    ("listmount", 458),
    ("setxattrat", 463),
    ("getxattrat", 464),
    ("listxattrat", 465),
    ("removexattrat", 466),
];

/// No table for other architectures: every name resolves to nothing.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const LIBC: &[(&str, c_long)] = &[];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const KERNEL: &[(&str, c_long)] = &[];

/// This architecture's number of the call `name`; `None` where it has no
/// such call.
pub(super) fn number(name: &str) -> Option<c_long> {
    LIBC.iter()
        .find(|(sys, _)| sys.strip_prefix("SYS_") == Some(name))
        .or_else(|| KERNEL.iter().find(|(n, _)| *n == name))
        .map(|&(_, nr)| nr)
}
