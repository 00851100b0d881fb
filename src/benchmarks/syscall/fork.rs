//! `syscall-fork`: `fork`, the child `_exit(0)` at once, the parent waits for
//! it: creating and reaping a process that runs nothing.
//!
//! The measuring process forks itself, so the figure depends on its size (the
//! page tables fork copies): the note records its resident set. It is
//! single-threaded whenever the engine runs an operation, as fork requires.

use super::{CLONE, GROUP, WAIT4, processes_created, resident_kib};
use crate::engine::channel::{ChannelError, retry};
use crate::engine::op::{Counter, Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::process::{self, ExitStatus, Fork};

/// `fork` + child `_exit(0)` + `waitpid`.
pub struct ForkExitWait;

impl Operation for ForkExitWait {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "syscall-fork",
            summary: "fork, the child calls _exit(0) at once, the parent waits for it",
            group: GROUP,
            bytes: 0,
            enters: &[CLONE, WAIT4],
            avoids: &[],
        }
    }

    fn prepare(&self, _ctx: &OpContext) -> Result<Prepared, ChannelError> {
        Ok(Prepared {
            op: Box::new(ForkOp {
                counted: processes_created().is_some(),
            }),
            note: resident_kib().map(|k| format!("parent resident set {} MiB", k.div_ceil(1024))),
        })
    }
}

struct ForkOp {
    /// Whether /proc/stat exists to count the processes.
    counted: bool,
}

impl Op for ForkOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let pid = match process::fork().map_err(ChannelError::io("fork"))? {
            // Nothing but _exit in the child: no destructor, no flush, no
            // release of the parent's objects.
            Fork::Child => process::exit_now(0),
            Fork::Parent(pid) => pid,
        };
        let status = retry("waitpid", || process::wait_blocking(pid)).inspect_err(|_| {
            // Stopped or timed out before the child was reaped.
            process::kill_and_reap(pid)
        })?;
        match status {
            ExitStatus::Code(0) => Ok(()),
            other => Err(ChannelError::Check(format!(
                "the forked child ended with {other:?}, expected exit code 0"
            ))),
        }
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        Ok(self.counted.then(|| Counter {
            source: "processes in /proc/stat (forks since boot, machine-wide)",
            value: processes_created().unwrap_or(0),
            per_op: 1,
        }))
    }
}
