//! Proof that an operation enters the kernel through the calls it names,
//! without strace or tracefs.
//!
//! For each call, a child is forked (the measuring process is single-threaded
//! here); it installs a seccomp filter that makes exactly that call fail with
//! [`PROBE_ERRNO`], runs the operation once and exits with what happened. If
//! the operation fails with that errno it made the call; if it succeeds it
//! did not (a cached value, a vDSO read). The parent is never filtered, and
//! the child leaves with `_exit`, so it releases nothing of the parent's.

use crate::engine::channel::{ChannelError, retry};
use crate::engine::op::{KernelCall, Op, OpInfo};
use crate::engine::os::interrupt::Watchdog;
use crate::sys::process::{self, ExitStatus, Fork};
use crate::sys::seccomp::FailFilter;
use std::time::Duration;

/// The errno the filter gives a blocked call: one no benchmarked call returns
/// on its own.
pub const PROBE_ERRNO: i32 = libc::ENOTRECOVERABLE;

// Exit codes of the probe child.
const OP_SUCCEEDED: i32 = 0;
const OP_FAILED_WITH_PROBE_ERRNO: i32 = 1;
const OP_FAILED_OTHERWISE: i32 = 2;
const FILTER_REFUSED: i32 = 3;

/// What the probe found for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelCheck {
    /// The call.
    pub call: &'static str,
    /// Whether the operation must make it (`false`: it is expected to do without).
    pub must_enter: bool,
    /// Whether it did; `None` if seccomp is unavailable here.
    pub entered: Option<bool>,
}

/// Probes every call `info` names, in order: first those the operation must
/// make, then those it should do without.
pub fn probe(
    op: &mut dyn Op,
    info: &OpInfo,
    timeout: Duration,
) -> Result<Vec<KernelCheck>, ChannelError> {
    let mut out = Vec::new();
    let named = info.enters.iter().map(|c| (c, true));
    for (call, must_enter) in named.chain(info.avoids.iter().map(|c| (c, false))) {
        out.push(KernelCheck {
            call: call.name,
            must_enter,
            entered: enters(op, call, timeout)?,
        });
    }
    Ok(out)
}

/// Whether one run of `op` makes `call`; `None` if the filter cannot be installed here.
fn enters(
    op: &mut dyn Op,
    call: &KernelCall,
    timeout: Duration,
) -> Result<Option<bool>, ChannelError> {
    let filter = match FailFilter::new(call.nrs, PROBE_ERRNO) {
        Ok(f) => f,
        Err(_) => return Ok(None),
    };
    let pid = match process::fork().map_err(ChannelError::io("fork (kernel-entry probe)"))? {
        Fork::Child => {
            let code = if filter.install().is_err() {
                FILTER_REFUSED
            } else {
                match op.run() {
                    Ok(()) => OP_SUCCEEDED,
                    Err(ChannelError::Io { source, .. })
                        if source.raw_os_error() == Some(PROBE_ERRNO) =>
                    {
                        OP_FAILED_WITH_PROBE_ERRNO
                    }
                    Err(_) => OP_FAILED_OTHERWISE,
                }
            };
            process::exit_now(code)
        }
        Fork::Parent(pid) => pid,
    };
    let status = {
        let _wd = Watchdog::arm(timeout);
        retry("waitpid (kernel-entry probe)", || {
            process::wait_blocking(pid)
        })
    };
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            // Timed out or stopped: the child must not outlive the figure.
            process::kill_and_reap(pid);
            return Err(e);
        }
    };
    match status {
        ExitStatus::Code(OP_SUCCEEDED) => Ok(Some(false)),
        ExitStatus::Code(OP_FAILED_WITH_PROBE_ERRNO) => Ok(Some(true)),
        ExitStatus::Code(FILTER_REFUSED) => Ok(None),
        ExitStatus::Code(_) => Err(ChannelError::Check(format!(
            "with {} failed by seccomp, the operation failed in another way",
            call.name
        ))),
        ExitStatus::Signal(sig) => Err(ChannelError::Check(format!(
            "with {} failed by seccomp, the operation was killed by signal {sig}",
            call.name
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::seccomp::calls;

    /// Makes the getpid system call and no gettid.
    struct CallsGetpid;
    impl Op for CallsGetpid {
        fn run(&mut self) -> Result<(), ChannelError> {
            crate::sys::process::getpid_syscall().map_err(ChannelError::io("getpid"))?;
            Ok(())
        }
    }

    const GETPID: KernelCall = KernelCall {
        name: "getpid",
        nrs: calls::GETPID,
    };
    const GETTID: KernelCall = KernelCall {
        name: "gettid",
        nrs: calls::GETTID,
    };

    #[test]
    fn tells_a_call_made_from_one_not_made() {
        let info = OpInfo {
            id: "t",
            summary: "t",
            group: "t",
            bytes: 0,
            enters: &[GETPID],
            avoids: &[GETTID],
        };
        let checks = probe(&mut CallsGetpid, &info, Duration::from_secs(5)).unwrap();
        assert_eq!(checks.len(), 2);
        assert_eq!(checks[0].call, "getpid");
        assert!(checks[0].must_enter);
        assert_eq!(checks[0].entered, Some(true));
        assert_eq!(checks[1].call, "gettid");
        assert!(!checks[1].must_enter);
        assert_eq!(checks[1].entered, Some(false));
    }
}
