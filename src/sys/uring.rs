//! A minimal io_uring: one ring, submitting only `IORING_OP_MSG_RING` (a
//! completion posted into another ring) and reaping completions. Raw system
//! calls on the kernel's ABI (`include/uapi/linux/io_uring.h`), no liburing:
//! the structures below are laid out as the kernel defines them.

use super::cvt_long;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct SqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    flags: u32,
    dropped: u32,
    array: u32,
    resv1: u32,
    user_addr: u64,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    overflow: u32,
    cqes: u32,
    flags: u32,
    resv1: u32,
    user_addr: u64,
}

#[repr(C)]
#[derive(Default)]
struct Params {
    sq_entries: u32,
    cq_entries: u32,
    flags: u32,
    sq_thread_cpu: u32,
    sq_thread_idle: u32,
    features: u32,
    wq_fd: u32,
    resv: [u32; 3],
    sq_off: SqOffsets,
    cq_off: CqOffsets,
}

#[repr(C)]
#[derive(Default)]
struct Sqe {
    opcode: u8,
    flags: u8,
    ioprio: u16,
    fd: i32,
    off: u64,
    addr: u64,
    len: u32,
    op_flags: u32,
    user_data: u64,
    buf_index: u16,
    personality: u16,
    splice_fd_in: i32,
    addr3: u64,
    pad: u64,
}

const _: () = assert!(std::mem::size_of::<Sqe>() == 64);
const _: () = assert!(std::mem::size_of::<Params>() == 120);

#[repr(C)]
struct RawCqe {
    user_data: u64,
    res: i32,
    flags: u32,
}

const OFF_SQ_RING: i64 = 0;
const OFF_CQ_RING: i64 = 0x800_0000;
const OFF_SQES: i64 = 0x1000_0000;
const FEAT_SINGLE_MMAP: u32 = 1;
const ENTER_GETEVENTS: u32 = 1;
const OP_MSG_RING: u8 = 40;
/// `IOSQE_CQE_SKIP_SUCCESS` (5.17): no completion of the sender's own for
/// a message that went through; a failed one still posts its error.
const SQE_CQE_SKIP_SUCCESS: u8 = 1 << 6;

/// One completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cqe {
    /// The 64-bit value the submitter (or the sending ring) chose.
    pub user_data: u64,
    /// The result: for a message, the 32-bit value the sender chose; for a
    /// failed submission, `-errno`.
    pub res: i32,
}

/// A mapping of the ring's memory, unmapped on drop.
struct RingMap {
    ptr: NonNull<u8>,
    len: usize,
}

impl RingMap {
    fn new(fd: &OwnedFd, len: usize, offset: i64) -> io::Result<RingMap> {
        // SAFETY: no address hint; the kernel checks the descriptor, the
        // offset (one of the ring's regions) and the length.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                offset,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(ptr.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(RingMap { ptr, len })
    }

    fn at(&self, offset: usize, len: usize) -> *mut u8 {
        assert!(
            offset.is_multiple_of(4) && offset + len <= self.len,
            "io_uring ring access out of bounds: {offset}+{len} of {}",
            self.len
        );
        // SAFETY: in bounds (checked).
        unsafe { self.ptr.as_ptr().add(offset) }
    }

    fn u32_at(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: in bounds and 4-byte aligned (checked; the kernel's
        // offsets are aligned); the memory lives as long as &self.
        unsafe { &*(self.at(offset, 4) as *const AtomicU32) }
    }
}

impl Drop for RingMap {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// One io_uring, used by one thread at a time: its owner submits and
/// reaps. Other rings post into it with [`Ring::msg_ring`] aimed at its
/// descriptor.
pub struct Ring {
    fd: OwnedFd,
    sq: RingMap,
    /// `None` when the kernel maps both rings at once (`IORING_FEAT_SINGLE_MMAP`).
    cq_own: Option<RingMap>,
    sqes: RingMap,
    p: Params,
}

// SAFETY: the ring's memory is reached only through atomics and the SQE
// slot the owner fills before publishing it; one thread at a time uses it
// (the endpoint that owns it), as the kernel requires of a submitter.
unsafe impl Send for Ring {}

impl Ring {
    /// Sets up a ring of `entries` submission entries (a power of two).
    pub fn new(entries: u32) -> io::Result<Ring> {
        let mut p = Params::default();
        // SAFETY: p is a valid, writable io_uring_params of the kernel's size.
        let fd = cvt_long(unsafe {
            libc::syscall(libc::SYS_io_uring_setup, entries, &mut p as *mut Params)
        })?;
        // SAFETY: fd is a fresh descriptor owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        let sq_len = p.sq_off.array as usize + p.sq_entries as usize * 4;
        let cq_len = p.cq_off.cqes as usize + p.cq_entries as usize * std::mem::size_of::<RawCqe>();
        let single = p.features & FEAT_SINGLE_MMAP != 0;
        let sq = RingMap::new(
            &fd,
            if single { sq_len.max(cq_len) } else { sq_len },
            OFF_SQ_RING,
        )?;
        let cq_own = if single {
            None
        } else {
            Some(RingMap::new(&fd, cq_len, OFF_CQ_RING)?)
        };
        let sqes = RingMap::new(&fd, p.sq_entries as usize * 64, OFF_SQES)?;
        Ok(Ring {
            fd,
            sq,
            cq_own,
            sqes,
            p,
        })
    }

    /// The ring's descriptor, the target other rings post messages to.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    fn cq(&self) -> &RingMap {
        self.cq_own.as_ref().unwrap_or(&self.sq)
    }

    fn enter(&self, to_submit: u32, min_complete: u32, flags: u32) -> io::Result<usize> {
        // SAFETY: plain system call on the ring's descriptor; no signal mask
        // (null, size 0).
        let n = cvt_long(unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                self.fd.as_raw_fd(),
                to_submit,
                min_complete,
                flags,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        })?;
        Ok(n as usize)
    }

    /// Queues a message for the ring `target`: a completion there whose
    /// `user_data` is `data` and whose `res` is `value`
    /// (`IORING_OP_MSG_RING`, Linux 5.18). This ring gets a completion of
    /// its own only if the message fails (`user_data` `tag`, `res` the
    /// error). Nothing is sent before [`Ring::submit`].
    pub fn queue_msg(
        &self,
        target: BorrowedFd<'_>,
        value: u32,
        data: u64,
        tag: u64,
    ) -> io::Result<()> {
        let mask = self
            .sq
            .u32_at(self.p.sq_off.ring_mask as usize)
            .load(Ordering::Relaxed);
        let head = self
            .sq
            .u32_at(self.p.sq_off.head as usize)
            .load(Ordering::Acquire);
        let tail_word = self.sq.u32_at(self.p.sq_off.tail as usize);
        let tail = tail_word.load(Ordering::Relaxed);
        if tail.wrapping_sub(head) >= self.p.sq_entries {
            return Err(io::Error::other(
                "io_uring submission queue full: earlier messages were never submitted",
            ));
        }
        let index = tail & mask;
        let sqe = Sqe {
            opcode: OP_MSG_RING,
            flags: SQE_CQE_SKIP_SUCCESS,
            fd: target.as_raw_fd(),
            off: data,
            len: value,
            user_data: tag,
            // addr 0: IORING_MSG_DATA, a plain completion.
            ..Sqe::default()
        };
        // SAFETY: the slot is in the SQE array (index < sq_entries, the
        // array's length), owned by this submitter until the tail is
        // published below; Sqe is the kernel's layout.
        unsafe {
            std::ptr::write_volatile(self.sqes.at(index as usize * 64, 64).cast::<Sqe>(), sqe);
        }
        self.sq
            .u32_at(self.p.sq_off.array as usize + index as usize * 4)
            .store(index, Ordering::Relaxed);
        tail_word.store(tail.wrapping_add(1), Ordering::Release);
        Ok(())
    }

    /// Submits what is queued and not yet taken by the kernel. `EINTR` if
    /// a signal came first: call again, nothing is submitted twice.
    pub fn submit(&self) -> io::Result<()> {
        let head = self
            .sq
            .u32_at(self.p.sq_off.head as usize)
            .load(Ordering::Acquire);
        let tail = self
            .sq
            .u32_at(self.p.sq_off.tail as usize)
            .load(Ordering::Relaxed);
        let pending = tail.wrapping_sub(head);
        if pending == 0 {
            return Ok(());
        }
        let n = self.enter(pending, 0, 0)?;
        if n != pending as usize {
            return Err(io::Error::other(format!(
                "io_uring_enter took {n} of {pending} submissions"
            )));
        }
        Ok(())
    }

    /// The next completion, if one is there (no system call).
    #[inline]
    pub fn peek(&self) -> Option<Cqe> {
        let cq = self.cq();
        let head_word = cq.u32_at(self.p.cq_off.head as usize);
        let head = head_word.load(Ordering::Relaxed);
        let tail = cq
            .u32_at(self.p.cq_off.tail as usize)
            .load(Ordering::Acquire);
        if head == tail {
            return None;
        }
        let mask = cq
            .u32_at(self.p.cq_off.ring_mask as usize)
            .load(Ordering::Relaxed);
        let at = self.p.cq_off.cqes as usize + (head & mask) as usize * 16;
        // SAFETY: in the CQE array (checked by at), published by the kernel
        // before the tail we read with Acquire; RawCqe is its layout.
        let raw = unsafe { std::ptr::read_volatile(cq.at(at, 16).cast::<RawCqe>()) };
        head_word.store(head.wrapping_add(1), Ordering::Release);
        Some(Cqe {
            user_data: raw.user_data,
            res: raw.res,
        })
    }

    /// Waits until a completion is there and takes it. `EINTR` on a
    /// handled signal.
    #[inline]
    pub fn wait(&self) -> io::Result<Cqe> {
        loop {
            if let Some(c) = self.peek() {
                return Ok(c);
            }
            self.enter(0, 1, ENTER_GETEVENTS)?;
        }
    }
}
