//! An MPI one-sided window of 32-bit words (cargo feature `mpi`): the few
//! MPI-3 RMA calls `shared-counter --engine mpi` needs, which rsmpi 0.8 does
//! not wrap, over its raw bindings (`mpi::ffi`). Here because they are FFI
//! and need `unsafe`, which ipcmark keeps in `sys` alone.
//!
//! Every call is made from the main thread of an initialised MPI process.
//! Windows use MPI's default error handler (`MPI_ERRORS_ARE_FATAL`), so a
//! failing call ends the job; the return codes are still checked.

use mpi::ffi;
use std::os::raw::{c_int, c_void};

/// A window over `len` u32 words on its owner rank (none on the others),
/// across every rank of `MPI_COMM_WORLD`; freed (collectively) when dropped.
pub struct Window {
    win: ffi::MPI_Win,
    len: usize,
    owner: c_int,
}

fn check(what: &str, rc: c_int) -> Result<(), String> {
    if rc == ffi::MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(format!("{what} failed (MPI error {rc})"))
    }
}

impl Window {
    /// `MPI_Win_allocate` over `MPI_COMM_WORLD`: `len` zeroed words on rank
    /// `owner`, none elsewhere. Collective: every rank calls it with the
    /// same `len` and `owner`.
    pub fn allocate(len: usize, owner: i32, me: i32) -> Result<Window, String> {
        let bytes = if me == owner { 4 * len } else { 0 };
        let mut base: *mut u32 = std::ptr::null_mut();
        // SAFETY: FFI null handle (a link-time constant of the MPI library).
        let mut win = unsafe { ffi::RSMPI_WIN_NULL };
        // SAFETY: `base` and `win` are valid out-pointers for the call;
        // the communicator and info are the library's own constants.
        let rc = unsafe {
            ffi::MPI_Win_allocate(
                bytes as ffi::MPI_Aint,
                4,
                ffi::RSMPI_INFO_NULL,
                ffi::RSMPI_COMM_WORLD,
                (&mut base as *mut *mut u32).cast::<c_void>(),
                &mut win,
            )
        };
        check("MPI_Win_allocate", rc)?;
        if me == owner && len > 0 {
            // SAFETY: MPI allocated `bytes` bytes at `base` for this rank,
            // aligned for any type (MPI_Alloc_mem's guarantee); no other
            // rank can reach them before the first lock epoch below.
            unsafe { std::ptr::write_bytes(base, 0, len) };
        }
        Ok(Window { win, len, owner })
    }

    /// Words in the window.
    pub fn words(&self) -> usize {
        self.len
    }

    /// `MPI_Win_lock(MPI_LOCK_EXCLUSIVE)` on the owner: the study's
    /// semaphore. MPI may defer taking the lock until the first access
    /// is completed ([`Window::get`] flushes).
    pub fn lock_exclusive(&self) -> Result<(), String> {
        // SAFETY: a valid window; the owner's rank is in its group.
        let rc =
            unsafe { ffi::MPI_Win_lock(ffi::MPI_LOCK_EXCLUSIVE as c_int, self.owner, 0, self.win) };
        check("MPI_Win_lock", rc)
    }

    /// `MPI_Win_lock(MPI_LOCK_SHARED)` on the owner, to read the array.
    pub fn lock_shared(&self) -> Result<(), String> {
        // SAFETY: as in lock_exclusive.
        let rc =
            unsafe { ffi::MPI_Win_lock(ffi::MPI_LOCK_SHARED as c_int, self.owner, 0, self.win) };
        check("MPI_Win_lock", rc)
    }

    /// `MPI_Win_unlock`: completes every access of the epoch at both ends.
    pub fn unlock(&self) -> Result<(), String> {
        // SAFETY: called only after a lock of the same window and rank.
        let rc = unsafe { ffi::MPI_Win_unlock(self.owner, self.win) };
        check("MPI_Win_unlock", rc)
    }

    /// Reads the whole window into `into` (inside a lock epoch): `MPI_Get`
    /// then `MPI_Win_flush`, so `into` holds the values when this returns.
    pub fn get(&self, into: &mut [u32]) -> Result<(), String> {
        assert_eq!(into.len(), self.len, "a get reads the whole window");
        // SAFETY: `into` is `len` writable u32s, held borrowed until the
        // flush below completes the transfer into it; the target range is
        // the owner's whole window.
        let rc = unsafe {
            ffi::MPI_Get(
                into.as_mut_ptr().cast::<c_void>(),
                self.len as c_int,
                ffi::RSMPI_UINT32_T,
                self.owner,
                0,
                self.len as c_int,
                ffi::RSMPI_UINT32_T,
                self.win,
            )
        };
        check("MPI_Get", rc)?;
        // SAFETY: a valid window in a lock epoch on `owner`.
        check("MPI_Win_flush", unsafe {
            ffi::MPI_Win_flush(self.owner, self.win)
        })
    }

    /// Writes `from` over the whole window (inside a lock epoch), complete
    /// at the owner when this returns (`MPI_Put` then `MPI_Win_flush`).
    pub fn put(&self, from: &[u32]) -> Result<(), String> {
        assert_eq!(from.len(), self.len, "a put writes the whole window");
        // SAFETY: `from` is `len` readable u32s, borrowed until the flush
        // below completes the transfer out of it.
        let rc = unsafe {
            ffi::MPI_Put(
                from.as_ptr().cast::<c_void>(),
                self.len as c_int,
                ffi::RSMPI_UINT32_T,
                self.owner,
                0,
                self.len as c_int,
                ffi::RSMPI_UINT32_T,
                self.win,
            )
        };
        check("MPI_Put", rc)?;
        // SAFETY: a valid window in a lock epoch on `owner`.
        check("MPI_Win_flush", unsafe {
            ffi::MPI_Win_flush(self.owner, self.win)
        })
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        // SAFETY: the window is valid and no epoch is open (every lock is
        // paired with an unlock before its function returns); collective,
        // as every rank drops its window at the same point of the run.
        unsafe { ffi::MPI_Win_free(&mut self.win) };
    }
}
