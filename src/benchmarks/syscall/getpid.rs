//! `syscall-getpid`: `getpid` as a real system call.
//!
//! glibc stopped caching the pid (2.25), but the call goes through
//! `syscall(SYS_getpid)` regardless, so that no C library can answer it from
//! user space: this is the cheapest round trip into the kernel and back.

use super::{GETPID, GROUP};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::process;

/// `getpid` through `syscall(2)`.
pub struct Getpid;

impl Operation for Getpid {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "syscall-getpid",
            summary: "getpid through syscall(SYS_getpid): a real system call, never a cached value",
            group: GROUP,
            bytes: 0,
            enters: &[GETPID],
            avoids: &[],
        }
    }

    fn prepare(&self, _ctx: &OpContext) -> Result<Prepared, ChannelError> {
        Ok(Prepared {
            op: Box::new(GetpidOp {
                pid: process::getpid(),
            }),
            note: None,
        })
    }
}

struct GetpidOp {
    /// The pid every call must return.
    pid: libc::pid_t,
}

impl Op for GetpidOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let got = process::getpid_syscall().map_err(ChannelError::io("getpid"))?;
        if got != self.pid {
            return Err(ChannelError::Check(format!(
                "getpid returned {got}, expected {}",
                self.pid
            )));
        }
        Ok(())
    }
}
