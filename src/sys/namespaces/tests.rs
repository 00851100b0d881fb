use super::*;
use crate::sys::process::geteuid;
use crate::sys::test_fork::in_child;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);

// Exit codes of the children below.
const OK: i32 = 0;
const NO_PRIVILEGE: i32 = 10;
const UNSHARE_FAILED: i32 = 1;
const LOOPBACK_FAILED: i32 = 2;
const TCP_FAILED: i32 = 3;
const MAP_FAILED: i32 = 4;
const NOT_ROOT_INSIDE: i32 = 5;
const STILL_VISIBLE: i32 = 6;
const DROP_FAILED: i32 = 7;

/// The child's verdict, or a printed skip where the privilege was missing.
fn check(test: &str, code: i32) {
    if code == NO_PRIVILEGE {
        println!("skipped {test}: this user may not make that namespace (EPERM)");
        return;
    }
    assert_eq!(code, OK, "{test}");
}

/// `unshare(flags)`, telling a missing privilege from another failure.
fn unshare_or(flags: libc::c_int) -> Result<(), i32> {
    match unshare(flags) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => Err(NO_PRIVILEGE),
        Err(_) => Err(UNSHARE_FAILED),
    }
}

#[test]
fn a_fresh_network_namespace_with_loopback_up_carries_tcp() {
    let code = in_child(LIMIT, || {
        if let Err(code) = unshare_or(libc::CLONE_NEWNET) {
            return code;
        }
        if loopback_up().is_err() {
            return LOOPBACK_FAILED;
        }
        let talk = || -> io::Result<bool> {
            let listener = TcpListener::bind("127.0.0.1:0")?;
            let mut client = TcpStream::connect(listener.local_addr()?)?;
            let (mut server, _) = listener.accept()?;
            client.write_all(b"x")?;
            let mut got = [0u8; 1];
            server.read_exact(&mut got)?;
            Ok(&got == b"x")
        };
        match talk() {
            Ok(true) => OK,
            _ => TCP_FAILED,
        }
    });
    check("network namespace", code);
}

/// Drops root for an unprivileged id in this (forked) process, and makes
/// it dumpable again so that /proc/self stays its own.
fn become_nobody() -> io::Result<(u32, u32)> {
    const NOBODY: u32 = 65534;
    // SAFETY: setresgid, setgroups and setresuid take integers (setgroups
    // a null list of length 0); prctl(PR_SET_DUMPABLE) an integer.
    unsafe {
        cvt(libc::setgroups(0, std::ptr::null()))?;
        cvt(libc::setresgid(NOBODY, NOBODY, NOBODY))?;
        cvt(libc::setresuid(NOBODY, NOBODY, NOBODY))?;
        cvt(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0))?;
    }
    Ok((NOBODY, NOBODY))
}

#[test]
fn a_user_namespace_maps_the_caller_to_root() {
    if geteuid() != 0
        && let Err(why) = unprivileged_userns()
    {
        println!("skipped: {why}");
        return;
    }
    let code = in_child(LIMIT, || {
        // As root, first become an unprivileged user, so that root inside
        // proves the mapping rather than the starting point.
        let ids = if geteuid() == 0 {
            become_nobody()
        } else {
            // SAFETY: getuid and getgid cannot fail.
            Ok(unsafe { (libc::getuid(), libc::getgid()) })
        };
        let Ok((uid, gid)) = ids else {
            return DROP_FAILED;
        };
        if let Err(code) = unshare_or(libc::CLONE_NEWUSER) {
            return code;
        }
        if map_self_as_root(uid, gid).is_err() {
            return MAP_FAILED;
        }
        // SAFETY: getegid cannot fail.
        if geteuid() != 0 || unsafe { libc::getegid() } != 0 {
            return NOT_ROOT_INSIDE;
        }
        OK
    });
    check("user namespace", code);
}

/// The ids of the message queues /proc/sysvipc/msg lists (of the reader's
/// IPC namespace).
fn queue_ids() -> Vec<i32> {
    let text = std::fs::read_to_string("/proc/sysvipc/msg").unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
        .collect()
}

#[test]
fn a_fresh_ipc_namespace_sees_no_queue_made_outside() {
    let id = crate::sys::sysv::msg_create(libc::IPC_PRIVATE).unwrap();
    // Removed on every path, the assertions' included.
    struct Queue(i32);
    impl Drop for Queue {
        fn drop(&mut self) {
            let _ = crate::sys::sysv::remove("msg", self.0);
        }
    }
    let _queue = Queue(id);
    assert!(queue_ids().contains(&id));
    let code = in_child(LIMIT, || {
        if let Err(code) = unshare_or(libc::CLONE_NEWIPC) {
            return code;
        }
        if queue_ids().contains(&id) {
            return STILL_VISIBLE;
        }
        OK
    });
    check("IPC namespace", code);
}

#[test]
fn unprivileged_user_namespaces_are_refused_for_each_reason() {
    let files = |pairs: &'static [(&'static str, &'static str)]| {
        move |f: &str| {
            pairs
                .iter()
                .find(|(n, _)| f.ends_with(n))
                .map(|(_, v)| v.to_string())
        }
    };
    assert_eq!(unprivileged_userns_in(files(&[])), Ok(()));
    let ok = &[("userns_clone", "1\n"), ("max_user_namespaces", "63000\n")];
    assert_eq!(unprivileged_userns_in(files(ok)), Ok(()));
    let err = unprivileged_userns_in(files(&[("userns_clone", "0\n")])).unwrap_err();
    assert!(err.contains("unprivileged_userns_clone is 0"), "{err}");
    let err = unprivileged_userns_in(files(&[("max_user_namespaces", "0")])).unwrap_err();
    assert!(err.contains("max_user_namespaces is 0"), "{err}");
    let err = unprivileged_userns_in(files(&[("restrict_unprivileged_userns", "1")])).unwrap_err();
    assert!(err.contains("AppArmor"), "{err}");
}
