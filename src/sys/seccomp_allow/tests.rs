use super::*;
use crate::sys::test_fork::in_child;
use std::io::{Read, Write};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);

/// Every jump of `prog` lands inside it, and it ends with a return.
fn well_formed(prog: &[libc::sock_filter]) {
    let ret = (libc::BPF_RET | libc::BPF_K) as u16;
    assert_eq!(prog.last().map(|i| i.code), Some(ret));
    for (i, insn) in prog.iter().enumerate() {
        if insn.code & 0x07 == libc::BPF_JMP as u16 {
            assert!(i + 1 + (insn.jt.max(insn.jf) as usize) < prog.len(), "{i}");
        }
    }
}

/// The raw result of a system call: the errno where it failed.
fn errno_of(ret: libc::c_long) -> Option<i32> {
    (ret == -1).then(|| io::Error::last_os_error().raw_os_error().unwrap_or(0))
}

#[test]
fn the_profile_names_no_call_twice_and_denies_what_docker_denies() {
    let names = docker_profile::NAMES;
    for (i, n) in names.iter().enumerate() {
        assert!(!names[..i].contains(n), "{n} twice");
    }
    // Docker refuses the keyring, kexec and module calls to a default
    // container; the tests below rely on add_key being absent.
    for denied in [
        "add_key",
        "keyctl",
        "request_key",
        "kexec_load",
        "init_module",
    ] {
        assert!(!names.contains(&denied), "{denied}");
    }
    assert!(names.len() > 350, "{}", names.len());
}

#[test]
fn the_default_profile_checks_each_call_once_in_order() {
    let f = AllowFilter::default_profile();
    if AUDIT_ARCH.is_none() {
        assert_eq!(f.instructions(), 0);
        return;
    }
    well_formed(&f.prog);
    // Each rule is a compare and a return, around a fixed frame.
    let frame = if cfg!(target_arch = "x86_64") { 7 } else { 5 };
    assert_eq!(f.instructions(), frame + 2 * f.rules());
    assert!(f.rules() > 250, "{}", f.rules());
    // No instruction reads an argument: only the number and the arch.
    let ld = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    for insn in f.prog.iter().filter(|i| i.code == ld) {
        assert!(insn.k == OFF_NR || insn.k == OFF_ARCH, "{}", insn.k);
    }
    // getpid is checked before write: the profile's order.
    let pos = |nr: libc::c_long| f.prog.iter().position(|i| i.k == nr as u32 && i.jf == 1);
    assert!(pos(libc::SYS_getpid).unwrap() < pos(libc::SYS_write).unwrap());
}

#[test]
fn argument_rules_fit_the_kernels_limit_or_are_refused() {
    let max = AllowFilter::max_argument_rules();
    let f = AllowFilter::argument_rules(max).unwrap();
    assert!(f.instructions() <= MAX_INSTRUCTIONS);
    assert_eq!(f.rules(), max);
    well_formed(&f.prog);
    let err = AllowFilter::argument_rules(max + 1).err().unwrap();
    assert!(err.contains(&format!("at most {max}")), "{err}");
    assert!(AllowFilter::argument_rules(usize::MAX).is_err());
    let f = AllowFilter::argument_rules(0).unwrap();
    assert_eq!((f.rules(), f.instructions()), (0, 4));
}

// Exit codes of the children below.
const OK: i32 = 0;
const NOT_INSTALLED: i32 = 1;
const GETPID_FAILED: i32 = 2;
const DENIED_CALL_NOT_EPERM: i32 = 3;
const CLONE3_NOT_ENOSYS: i32 = 4;
const FORK_FAILED: i32 = 5;
const PIPE_FAILED: i32 = 6;

#[test]
fn under_the_default_profile_allowed_calls_work_and_others_fail_with_eperm() {
    let filter = AllowFilter::default_profile();
    if AUDIT_ARCH.is_none() {
        println!("skipped: seccomp filters are not built for this architecture");
        return;
    }
    let code = in_child(LIMIT, || {
        if filter.install().is_err() {
            return NOT_INSTALLED;
        }
        if crate::sys::process::getpid_syscall().is_err() {
            return GETPID_FAILED;
        }
        // SAFETY: add_key with null type and description fails (EFAULT)
        // without doing anything when it is allowed; the filter should
        // fail it first.
        let r = unsafe { libc::syscall(libc::SYS_add_key, 0usize, 0usize, 0usize, 0usize, 0) };
        if errno_of(r) != Some(libc::EPERM) {
            return DENIED_CALL_NOT_EPERM;
        }
        // SAFETY: clone3 with a null argument of size 0 fails (EINVAL)
        // without creating anything when it is allowed.
        let r = unsafe { libc::syscall(libc::SYS_clone3, 0usize, 0usize) };
        if errno_of(r) != Some(libc::ENOSYS) {
            return CLONE3_NOT_ENOSYS;
        }
        // The peers of a figure are forked under the filter.
        match in_child(LIMIT, || 7) {
            7 => OK,
            _ => FORK_FAILED,
        }
    });
    assert_eq!(code, OK);
}

#[test]
fn argument_rules_change_no_call() {
    let filter = AllowFilter::argument_rules(300).unwrap();
    if AUDIT_ARCH.is_none() {
        println!("skipped: seccomp filters are not built for this architecture");
        return;
    }
    let code = in_child(LIMIT, || {
        if filter.install().is_err() {
            return NOT_INSTALLED;
        }
        if crate::sys::process::getpid_syscall().is_err() {
            return GETPID_FAILED;
        }
        let Ok((mut r, mut w)) = std::io::pipe() else {
            return PIPE_FAILED;
        };
        let mut got = [0u8; 5];
        if w.write_all(b"hello").is_err() || r.read_exact(&mut got).is_err() || &got != b"hello" {
            return PIPE_FAILED;
        }
        OK
    });
    assert_eq!(code, OK);
}
