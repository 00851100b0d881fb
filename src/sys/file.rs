//! File calls on prepared C paths, each one system call and nothing else.
//!
//! `std::fs` would build a C string from the path on every call and hides the
//! error of `close`; the system-call benchmarks need one call per operation,
//! no allocation, and every error seen.

use super::{cvt, cvt_long};
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::path::Path;

/// A path as the C string the kernel takes, built once.
pub fn c_path(path: &Path) -> io::Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))
}

/// `open(path, flags, mode)` with `O_CLOEXEC` added.
#[inline]
pub fn open(path: &CStr, flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
    // SAFETY: path is a valid C string; the mode argument is read only with O_CREAT.
    let fd = cvt(unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC, mode) })?;
    // SAFETY: fd is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Closes `fd` and reports the error `close` returns (dropping an `OwnedFd`
/// ignores it).
#[inline]
pub fn close(fd: OwnedFd) -> io::Result<()> {
    let raw = fd.into_raw_fd();
    // SAFETY: raw came out of an OwnedFd, so it is open and owned by nobody else;
    // it is closed once (Linux releases the descriptor even when close fails).
    cvt(unsafe { libc::close(raw) }).map(|_| ())
}

/// `pread(fd, buf, offset)`: bytes read.
#[inline]
pub fn pread(fd: &impl AsRawFd, buf: &mut [u8], offset: i64) -> io::Result<usize> {
    // SAFETY: buf is valid for writes of its length.
    let n = unsafe { libc::pread(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), offset) };
    cvt_long(n as libc::c_long).map(|n| n as usize)
}

/// `pwrite(fd, buf, offset)`: bytes written.
#[inline]
pub fn pwrite(fd: &impl AsRawFd, buf: &[u8], offset: i64) -> io::Result<usize> {
    // SAFETY: buf is valid for reads of its length.
    let n = unsafe { libc::pwrite(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len(), offset) };
    cvt_long(n as libc::c_long).map(|n| n as usize)
}

/// `write(fd, buf)` at the file position: bytes written.
#[inline]
pub fn write(fd: &impl AsRawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: buf is valid for reads of its length.
    let n = unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
    cvt_long(n as libc::c_long).map(|n| n as usize)
}

/// `lseek(fd, offset, whence)`: the new offset.
#[inline]
pub fn lseek(fd: &impl AsRawFd, offset: i64, whence: libc::c_int) -> io::Result<i64> {
    // SAFETY: plain system call with integer arguments.
    let r = unsafe { libc::lseek(fd.as_raw_fd(), offset, whence) };
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// What `stat` reports that the benchmarks check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatInfo {
    /// Inode number.
    pub ino: u64,
    /// Size in bytes.
    pub size: i64,
}

/// `stat(path)`.
#[inline]
pub fn stat(path: &CStr) -> io::Result<StatInfo> {
    // SAFETY: struct stat is plain data the kernel fills.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid C string and out-pointer.
    cvt(unsafe { libc::stat(path.as_ptr(), &mut st) })?;
    Ok(StatInfo {
        ino: st.st_ino as u64,
        size: st.st_size as i64,
    })
}

/// `unlink(path)`.
#[inline]
pub fn unlink(path: &CStr) -> io::Result<()> {
    // SAFETY: valid C string.
    cvt(unsafe { libc::unlink(path.as_ptr()) }).map(|_| ())
}

/// A new anonymous memory file (`memfd_create`) that accepts seals
/// (`MFD_ALLOW_SEALING`), close-on-exec. It has no name in any file system
/// (`name` shows only in /proc/PID/fd), so it goes with its last descriptor
/// and mapping.
pub fn memfd_sealable(name: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: name is a valid C string; the call returns a fresh descriptor.
    let fd = cvt(unsafe {
        libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING)
    })?;
    // SAFETY: fd is fresh and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Adds `seals` (`F_SEAL_*`) to a memory file.
pub fn add_seals(fd: &impl AsRawFd, seals: libc::c_int) -> io::Result<()> {
    // SAFETY: plain fcntl with an integer argument.
    cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) }).map(|_| ())
}

/// The seals (`F_SEAL_*`) a memory file carries.
pub fn seals(fd: &impl AsRawFd) -> io::Result<libc::c_int> {
    // SAFETY: plain fcntl without argument.
    cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) })
}

/// The size in bytes of an open file.
pub fn fd_size(fd: &impl AsRawFd) -> io::Result<u64> {
    // SAFETY: stat is plain data for fstat to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid descriptor number and out-pointer.
    cvt(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok(st.st_size as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_write_read_stat_unlink() {
        let dir = tempfile::tempdir().unwrap();
        let path = c_path(&dir.path().join("f")).unwrap();
        let fd = open(&path, libc::O_CREAT | libc::O_RDWR, 0o600).unwrap();
        assert_eq!(write(&fd, b"hello").unwrap(), 5);
        assert_eq!(pwrite(&fd, b"J", 0).unwrap(), 1);
        let mut buf = [0u8; 5];
        assert_eq!(pread(&fd, &mut buf, 0).unwrap(), 5);
        assert_eq!(&buf, b"Jello");
        assert_eq!(lseek(&fd, 2, libc::SEEK_SET).unwrap(), 2);
        assert_eq!(stat(&path).unwrap().size, 5);
        close(fd).unwrap();
        unlink(&path).unwrap();
        assert_eq!(stat(&path).unwrap_err().raw_os_error(), Some(libc::ENOENT));
    }
}
