//! The `sched` group: what the scheduler costs, timed in one process (mode
//! `op`) against helpers pinned to the measuring thread's CPU.
//!
//! - `sched-yield`: the QNX study's Yield switch: the loop with `sched_yield`
//!   minus the loop without (the engine's null loop), while a helper thread on
//!   the same CPU yields back; one yield is two switches.
//! - `sched-ctx-*`: lmbench's lat_ctx: a token passed around a ring of N
//!   processes (or threads) on one CPU over pipes, each member touching its
//!   own working set when it holds the token. One operation is one lap (N
//!   switches); the same pipe passing and touching done in one process, with
//!   no switch, is the baseline the engine subtracts (and reports).
//!
//! Every figure is per context switch. The kernel counts the switches
//! (`voluntary_ctxt_switches` + `nonvoluntary_ctxt_switches` of every member
//! in /proc): on one CPU each member must be switched out at least once per
//! lap, so the count must grow by at least N per lap; for `sched-yield`, the
//! two threads' sum by at least one per yield.

pub mod ring;
pub mod yield_switch;

use crate::engine::channel::ChannelError;
use crate::engine::op::{Events, KernelCall, OpContext};
use crate::sys::sched;
use crate::sys::seccomp::calls;

/// The group these benchmarks belong to.
pub const GROUP: &str = "sched";

pub(crate) const SCHED_YIELD: KernelCall = KernelCall {
    name: "sched_yield",
    nrs: calls::SCHED_YIELD,
};
pub(crate) const READ: KernelCall = KernelCall {
    name: "read",
    nrs: calls::READ,
};
pub(crate) const WRITE: KernelCall = KernelCall {
    name: "write",
    nrs: calls::WRITE,
};

/// `n` context switches per operation.
pub(crate) const fn switches(n: u32) -> Events {
    Events {
        name: "context switch",
        per_op: n,
    }
}

/// The CPU every member must share with the measuring thread. Without one
/// the members could run side by side and nothing would force a switch.
pub(crate) fn shared_cpu(ctx: &OpContext) -> Result<usize, ChannelError> {
    ctx.cpu.ok_or_else(|| {
        ChannelError::Setup(
            "scheduling benchmarks need the measuring thread pinned to a CPU (--cpus)".into(),
        )
    })
}

/// Puts the calling helper (thread or forked process) where the measuring
/// thread will be: the same CPU, and its SCHED_FIFO priority under `--rt`
/// (a SCHED_OTHER helper would never run beside a FIFO measuring thread).
pub(crate) fn place_helper(cpu: usize, rt_priority: Option<i32>) -> std::io::Result<()> {
    sched::pin_to_cpu(cpu)?;
    if let Some(p) = rt_priority {
        sched::set_fifo(p)?;
    }
    Ok(())
}

/// Context switches (voluntary + involuntary) of one task, from a status file
/// in /proc (`/proc/<pid>/status`, `/proc/self/task/<tid>/status`).
pub(crate) fn switches_in(status_path: &str) -> Result<u64, ChannelError> {
    let text = std::fs::read_to_string(status_path)
        .map_err(ChannelError::io("read a status file in /proc"))?;
    let field = |name: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
    };
    match (
        field("voluntary_ctxt_switches:"),
        field("nonvoluntary_ctxt_switches:"),
    ) {
        (Some(v), Some(n)) => Ok(v + n),
        _ => Err(ChannelError::Setup(format!(
            "{status_path} shows no context-switch counts"
        ))),
    }
}

/// Where the kernel counts the switches, for the result.
pub(crate) const SWITCH_SOURCE: &str =
    "voluntary + nonvoluntary_ctxt_switches of every member in /proc";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_counts_are_readable_and_grow() {
        let before = switches_in("/proc/thread-self/status").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(switches_in("/proc/thread-self/status").unwrap() > before);
    }
}
