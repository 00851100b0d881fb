//! `syscall-spawn`: `posix_spawn` of `/bin/true` and `waitpid` for it:
//! creating a process that loads and runs a trivial (dynamically linked)
//! program, with an empty environment.

use super::{CLONE, EXECVE, GROUP, WAIT4, processes_created};
use crate::engine::channel::{ChannelError, retry};
use crate::engine::op::{Counter, Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::process::{self, ExitStatus, Spawner};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The trivial program.
const PROGRAM: &str = "/bin/true";

/// `posix_spawn("/bin/true")` + `waitpid`.
pub struct Spawn;

impl Operation for Spawn {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "syscall-spawn",
            summary: "posix_spawn of /bin/true with an empty environment, then waitpid",
            group: GROUP,
            bytes: 0,
            enters: &[CLONE, EXECVE, WAIT4],
            avoids: &[],
        }
    }

    fn unavailable(&self) -> Option<String> {
        match std::fs::metadata(PROGRAM) {
            Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => None,
            Ok(_) => Some(format!("{PROGRAM} is not an executable file")),
            Err(e) => Some(format!("no {PROGRAM} on this system ({e})")),
        }
    }

    fn prepare(&self, _ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let spawner =
            Spawner::new(Path::new(PROGRAM), &["true"]).map_err(ChannelError::io("prepare"))?;
        let target = std::fs::canonicalize(PROGRAM)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| PROGRAM.into());
        Ok(Prepared {
            op: Box::new(SpawnOp {
                spawner,
                counted: processes_created().is_some(),
            }),
            note: Some(format!("runs {target}")),
        })
    }
}

struct SpawnOp {
    spawner: Spawner,
    /// Whether /proc/stat exists to count the processes.
    counted: bool,
}

impl Op for SpawnOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let pid = self
            .spawner
            .spawn()
            .map_err(ChannelError::io("posix_spawn"))?;
        let status = retry("waitpid", || process::wait_blocking(pid)).inspect_err(|_| {
            // Stopped or timed out before the child was reaped.
            process::kill_and_reap(pid)
        })?;
        match status {
            ExitStatus::Code(0) => Ok(()),
            other => Err(ChannelError::Check(format!(
                "{PROGRAM} ended with {other:?}, expected exit code 0"
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
