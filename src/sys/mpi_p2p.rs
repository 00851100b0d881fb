//! Blocking point-to-point messages of bytes on `MPI_COMM_WORLD` (cargo
//! feature `mpi`) over MPI's raw bindings, for the timed loop of `mpi
//! pingpong`. rsmpi's safe calls check the peer's rank against
//! `MPI_Comm_size` on every message (`process_at_rank`'s assertion): a
//! library call per send and receive that `osu_latency`'s loop does not
//! make. These make only `MPI_Send` and `MPI_Recv`, as it does.
//!
//! Every call is made from the main thread of an initialised MPI process.
//! `MPI_COMM_WORLD` keeps MPI's default error handler
//! (`MPI_ERRORS_ARE_FATAL`), so a failing call ends the job; the return
//! codes are still checked.

use mpi::ffi;
use std::mem::MaybeUninit;
use std::os::raw::{c_int, c_void};

fn check(what: &str, rc: c_int) -> Result<(), String> {
    if rc == ffi::MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(format!("{what} failed (MPI error {rc})"))
    }
}

/// `MPI_Send` of `buf` to rank `dest` with `tag` (standard mode).
#[inline]
pub fn send(buf: &[u8], dest: c_int, tag: c_int) -> Result<(), String> {
    // SAFETY: `buf` is valid for reads of `buf.len()` bytes for the whole
    // (blocking) call; the datatype and communicator are the library's own
    // constants.
    let rc = unsafe {
        ffi::MPI_Send(
            buf.as_ptr().cast::<c_void>(),
            buf.len() as c_int,
            ffi::RSMPI_UINT8_T,
            dest,
            tag,
            ffi::RSMPI_COMM_WORLD,
        )
    };
    check("MPI_Send", rc)
}

/// `MPI_Recv` into `buf` from rank `source` with `tag` (or any tag when
/// `tag` is `None`); returns the tag of the message received. A message
/// longer than `buf` is MPI's truncation error.
#[inline]
pub fn recv(buf: &mut [u8], source: c_int, tag: Option<c_int>) -> Result<c_int, String> {
    let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
    // SAFETY: a constant of the MPI library, read only.
    let any = unsafe { ffi::RSMPI_ANY_TAG };
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the whole
    // (blocking) call, `status` for one MPI_Status; the datatype and
    // communicator are the library's own constants.
    let rc = unsafe {
        ffi::MPI_Recv(
            buf.as_mut_ptr().cast::<c_void>(),
            buf.len() as c_int,
            ffi::RSMPI_UINT8_T,
            source,
            tag.unwrap_or(any),
            ffi::RSMPI_COMM_WORLD,
            status.as_mut_ptr(),
        )
    };
    check("MPI_Recv", rc)?;
    // SAFETY: a successful MPI_Recv filled the status.
    Ok(unsafe { status.assume_init() }.MPI_TAG)
}
