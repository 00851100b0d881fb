//! Namespaces of the calling process, as a container runtime makes them:
//! leaving the current ones (`unshare`), mapping the caller to root in a
//! user namespace it has just made, bringing up the loopback device of a
//! fresh network namespace, and whether an unprivileged user may make user
//! namespaces at all.

use super::cvt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// unshare(2) of the calling process with these CLONE_NEW* flags. With
/// CLONE_NEWUSER the caller must be single-threaded (EINVAL otherwise): a
/// forked child made for the purpose is.
pub fn unshare(flags: libc::c_int) -> io::Result<()> {
    // SAFETY: unshare takes a flag word by value.
    cvt(unsafe { libc::unshare(flags) }).map(drop)
}

/// In a user namespace the caller has just made: maps `outer_uid` /
/// `outer_gid` (the ids before the unshare) to 0 inside (writes "deny" to
/// /proc/self/setgroups, which the kernel requires of an unprivileged
/// writer of gid_map, then uid_map and gid_map). Each map can be written
/// once; a process whose credentials changed since it started (a setuid)
/// must be dumpable again first, or /proc/self is not its own to write.
pub fn map_self_as_root(outer_uid: u32, outer_gid: u32) -> io::Result<()> {
    match std::fs::write("/proc/self/setgroups", b"deny") {
        // Kernels before 3.19 have no such file and no such rule.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        other => other.map_err(|e| context(e, "/proc/self/setgroups"))?,
    }
    // Each map in a single write, as the kernel requires.
    std::fs::write("/proc/self/uid_map", format!("0 {outer_uid} 1\n"))
        .map_err(|e| context(e, "/proc/self/uid_map"))?;
    std::fs::write("/proc/self/gid_map", format!("0 {outer_gid} 1\n"))
        .map_err(|e| context(e, "/proc/self/gid_map"))
}

/// `e` with the file it concerns, keeping its kind and errno readable.
fn context(e: io::Error, file: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{file}: {e}"))
}

/// Brings `lo` up in the calling thread's network namespace (SIOCGIFFLAGS,
/// then SIOCSIFFLAGS with IFF_UP, on an AF_INET datagram socket). A fresh
/// network namespace has `lo` down: 127.0.0.1 is unreachable until then.
pub fn loopback_up() -> io::Result<()> {
    // SAFETY: socket takes integer arguments; a non-negative result is a
    // descriptor nobody else owns.
    let sock =
        cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `sock` was just returned by socket and is owned only here.
    let sock = unsafe { OwnedFd::from_raw_fd(sock) };
    // SAFETY: ifreq is plain data (a name and a union of integers and
    // addresses), for which all zeroes is valid.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS reads the name of `req` and writes its flags;
    // `req` is a valid ifreq that outlives the call.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut req) })?;
    // SAFETY: SIOCGIFFLAGS has just written the flags member of the union.
    let flags = unsafe { req.ifr_ifru.ifru_flags };
    req.ifr_ifru.ifru_flags = flags | libc::IFF_UP as libc::c_short;
    // SAFETY: SIOCSIFFLAGS reads the name and flags of `req`.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS as _, &req) }).map(drop)
}

/// Whether this kernel lets an unprivileged user make user namespaces, and
/// why not: reads /proc/sys/kernel/unprivileged_userns_clone (Debian's and
/// Ubuntu's switch) where it exists, /proc/sys/user/max_user_namespaces,
/// and Ubuntu's AppArmor restriction. Ok(()) or the reason, in one line.
pub fn unprivileged_userns() -> Result<(), String> {
    unprivileged_userns_in(|file| std::fs::read_to_string(file).ok())
}

/// [`unprivileged_userns`] over files read by `read` (None: no such file).
fn unprivileged_userns_in(read: impl Fn(&str) -> Option<String>) -> Result<(), String> {
    let number = |file: &str| read(file).and_then(|t| t.trim().parse::<i64>().ok());
    const CLONE: &str = "/proc/sys/kernel/unprivileged_userns_clone";
    const MAX: &str = "/proc/sys/user/max_user_namespaces";
    const APPARMOR: &str = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns";
    if number(CLONE) == Some(0) {
        return Err(format!(
            "{CLONE} is 0: this kernel lets only root make user namespaces \
             (sysctl kernel.unprivileged_userns_clone=1 allows it)"
        ));
    }
    if number(MAX) == Some(0) {
        return Err(format!(
            "{MAX} is 0: no user namespace may be made (sysctl user.max_user_namespaces raises it)"
        ));
    }
    if number(APPARMOR) == Some(1) {
        return Err(format!(
            "{APPARMOR} is 1: AppArmor lets only profiled programs make user namespaces \
             with capabilities inside"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
