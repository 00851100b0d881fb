//! Shared anonymous memory: visible to a forked child and to threads alike.

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// An anonymous mapping (shared by default), unmapped on drop.
///
/// Because it has no name it can never outlive the processes that map it, so a
/// killed run leaves nothing behind. Access is through bounds-checked atomics
/// and byte copies; the two sides order their copies with those atomics.
pub struct SharedMapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory reached only through atomics and
// explicit copies, exactly as two processes sharing it would reach it.
unsafe impl Send for SharedMapping {}
// SAFETY: as above.
unsafe impl Sync for SharedMapping {}

impl SharedMapping {
    /// Maps `len` zeroed bytes (rounded up to whole pages by the kernel).
    pub fn new(len: usize) -> io::Result<Self> {
        Self::map(len, libc::MAP_SHARED)
    }

    /// Maps `len` zeroed bytes *private* to each process: after a fork parent
    /// and child each have their own copy at the same address. For buffers
    /// that only the kernel writes on another process's behalf
    /// (process_vm_writev), read through [`Self::read_bytes`].
    pub fn new_private(len: usize) -> io::Result<Self> {
        Self::map(len, libc::MAP_PRIVATE)
    }

    fn map(len: usize, kind: libc::c_int) -> io::Result<Self> {
        let len = len.max(1);
        // SAFETY: anonymous mapping with no address hint and no file descriptor.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                kind | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(ptr.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(SharedMapping { ptr, len })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    fn check(&self, offset: usize, len: usize, align: usize) {
        assert!(
            offset.is_multiple_of(align)
                && offset.checked_add(len).is_some_and(|end| end <= self.len),
            "shared mapping access out of bounds or misaligned: offset {offset}, len {len}, size {}",
            self.len
        );
    }

    /// The 32-bit atomic at `offset` (4-byte aligned). Its address is stable
    /// for the mapping's life, so it can also serve as a futex word.
    pub fn atomic_u32(&self, offset: usize) -> &AtomicU32 {
        self.check(offset, 4, 4);
        // SAFETY: in bounds and aligned (checked); mmap memory is page-aligned;
        // any bit pattern is a valid AtomicU32; lives as long as &self.
        unsafe { &*(self.ptr.as_ptr().add(offset) as *const AtomicU32) }
    }

    /// The 64-bit atomic at `offset` (8-byte aligned).
    pub fn atomic_u64(&self, offset: usize) -> &AtomicU64 {
        self.check(offset, 8, 8);
        // SAFETY: in bounds and aligned (checked); any bit pattern is a valid
        // AtomicU64; lives as long as &self.
        unsafe { &*(self.ptr.as_ptr().add(offset) as *const AtomicU64) }
    }

    /// `count` consecutive 32-bit atomics from `offset` (4-byte aligned), one
    /// bounds check for the whole run: for arrays walked element by element.
    pub fn atomic_u32_slice(&self, offset: usize, count: usize) -> &[AtomicU32] {
        let len = count
            .checked_mul(4)
            .expect("shared mapping slice length overflows");
        self.check(offset, len, 4);
        // SAFETY: the whole range is in bounds and aligned (checked); AtomicU32
        // has the layout of u32 and any bit pattern is valid; lives as long as &self.
        unsafe {
            std::slice::from_raw_parts(self.ptr.as_ptr().add(offset) as *const AtomicU32, count)
        }
    }

    /// Copies `src` into the mapping at `offset`.
    #[inline]
    pub fn write_bytes(&self, offset: usize, src: &[u8]) {
        self.check(offset, src.len(), 1);
        // SAFETY: destination in bounds (checked); source is a distinct Rust slice.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.as_ptr().add(offset), src.len())
        };
    }

    /// Copies from the mapping at `offset` into `dst`.
    #[inline]
    pub fn read_bytes(&self, offset: usize, dst: &mut [u8]) {
        self.check(offset, dst.len(), 1);
        // SAFETY: source in bounds (checked); destination is a distinct Rust slice.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.ptr.as_ptr().add(offset),
                dst.as_mut_ptr(),
                dst.len(),
            )
        };
    }

    /// The `len` bytes at `offset`, in place, for a receiver that reads
    /// (and may change) a message where it lies instead of copying it out.
    /// The same contract as every access to this memory, which other
    /// processes map too: the channel's protocol hands the range to one side
    /// at a time (with acquire and release on the counts that hand it over),
    /// and the side holding it takes one slice of it at a time.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub fn bytes_mut(&self, offset: usize, len: usize) -> &mut [u8] {
        self.check(offset, len, 1);
        // SAFETY: in bounds (checked); one holder at a time is the channel
        // protocol's, as for write_bytes and read_bytes.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(offset), len) }
    }

    /// Unmaps now and reports the error of `munmap` (dropping ignores it).
    pub fn unmap(self) -> io::Result<()> {
        let (ptr, len) = (self.ptr, self.len);
        std::mem::forget(self);
        // SAFETY: ptr/len are exactly what mmap returned; self is forgotten, so
        // Drop will not unmap them a second time.
        super::cvt(unsafe { libc::munmap(ptr.as_ptr().cast(), len) }).map(|_| ())
    }

    /// Raw address of `offset`, for system calls that take one (e.g.
    /// process_vm_writev). Bounds-checked for `len` bytes.
    pub fn addr(&self, offset: usize, len: usize) -> usize {
        self.check(offset, len, 1);
        self.ptr.as_ptr() as usize + offset
    }
}

impl Drop for SharedMapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned and were never unmapped.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// A shared mapping of a whole file (`MAP_SHARED`), read-only or writable,
/// unmapped on drop: for reading a file another process wrote and sealed
/// without copying it through a system call (and, writable, answering in
/// it).
pub struct FileMapping {
    ptr: NonNull<u8>,
    len: usize,
    writable: bool,
}

// SAFETY: the mapping is owned by one value and unmapped once, on drop;
// moving it to another thread moves that ownership.
unsafe impl Send for FileMapping {}

impl FileMapping {
    /// Maps the first `len` bytes (at least 1) of the file open as `fd`.
    /// The caller makes sure the file cannot shrink while it is mapped (a
    /// memory file sealed with `F_SEAL_SHRINK`): a read past a truncated end
    /// would raise SIGBUS.
    pub fn read_only(fd: &impl std::os::fd::AsRawFd, len: usize) -> io::Result<Self> {
        Self::map(fd, len, libc::PROT_READ)
    }

    /// Like [`FileMapping::read_only`], but writable: changes land in the
    /// file (`MAP_SHARED`), for a receiver that answers in the file itself.
    pub fn read_write(fd: &impl std::os::fd::AsRawFd, len: usize) -> io::Result<Self> {
        Self::map(fd, len, libc::PROT_READ | libc::PROT_WRITE)
    }

    fn map(fd: &impl std::os::fd::AsRawFd, len: usize, prot: libc::c_int) -> io::Result<Self> {
        let len = len.max(1);
        // SAFETY: no address hint; the kernel checks the descriptor.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(ptr.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(FileMapping {
            ptr,
            len,
            writable: prot & libc::PROT_WRITE != 0,
        })
    }

    /// The first `len` bytes in place, of a mapping made by
    /// [`FileMapping::read_write`] (a read-only one panics: a write through
    /// it would fault); the file's other holders write it only under the
    /// channel's protocol.
    #[inline]
    pub fn bytes_mut(&mut self, len: usize) -> &mut [u8] {
        assert!(self.writable, "a read-only file mapping lent for writing");
        assert!(
            len <= self.len,
            "file mapping of {} bytes lent as {len}",
            self.len
        );
        // SAFETY: in bounds (checked); &mut self: no other slice of this
        // mapping exists in this process while this one lives.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), len) }
    }

    /// Copies from the mapping at `offset` into `dst`.
    #[inline]
    pub fn read_bytes(&self, offset: usize, dst: &mut [u8]) {
        assert!(
            offset
                .checked_add(dst.len())
                .is_some_and(|end| end <= self.len),
            "file mapping read out of bounds: offset {offset}, len {}, size {}",
            dst.len(),
            self.len
        );
        // SAFETY: source in bounds (checked) and readable; destination is a
        // distinct Rust slice.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.ptr.as_ptr().add(offset),
                dst.as_mut_ptr(),
                dst.len(),
            )
        };
    }
}

impl Drop for FileMapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned and were never unmapped.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
