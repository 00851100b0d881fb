//! `syscall-gettid`: `gettid` as a real system call.

use super::{GETTID, GROUP};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::process;

/// `gettid` through `syscall(2)`.
pub struct Gettid;

impl Operation for Gettid {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "syscall-gettid",
            summary: "gettid through syscall(SYS_gettid): the calling thread's id from the kernel",
            group: GROUP,
            bytes: 0,
            enters: &[GETTID],
            avoids: &[],
        }
    }

    fn prepare(&self, _ctx: &OpContext) -> Result<Prepared, ChannelError> {
        // The engine prepares and runs an operation on the same thread.
        Ok(Prepared {
            op: Box::new(GettidOp {
                tid: process::gettid(),
            }),
            note: None,
        })
    }
}

struct GettidOp {
    /// The tid every call must return.
    tid: libc::pid_t,
}

impl Op for GettidOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let got = process::gettid_syscall().map_err(ChannelError::io("gettid"))?;
        if got != self.tid {
            return Err(ChannelError::Check(format!(
                "gettid returned {got}, expected {}",
                self.tid
            )));
        }
        Ok(())
    }
}
