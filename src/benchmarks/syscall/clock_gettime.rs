//! `syscall-clock-gettime`: `clock_gettime(CLOCK_MONOTONIC)`, which the vDSO
//! answers in user space: the reference for "no kernel entry". The engine's
//! probe checks (and reports) that it indeed made no system call; where the
//! clock source cannot be read from user space glibc falls back to the
//! system call, and the result says so.

use super::{CLOCK_GETTIME, GROUP};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::clock::monotonic_checked;

/// `clock_gettime(CLOCK_MONOTONIC)` through glibc (the vDSO).
pub struct ClockGettime;

impl Operation for ClockGettime {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "syscall-clock-gettime",
            summary: "clock_gettime(CLOCK_MONOTONIC) through the vDSO: the reference for no kernel entry",
            group: GROUP,
            bytes: 0,
            enters: &[],
            avoids: &[CLOCK_GETTIME],
        }
    }

    fn prepare(&self, _ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let clocksource = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .map(|s| format!("clock source {}", s.trim()))
        .ok();
        Ok(Prepared {
            op: Box::new(ClockOp { last: 0 }),
            note: clocksource,
        })
    }
}

struct ClockOp {
    /// The previous reading: a monotonic clock never goes back.
    last: u64,
}

impl Op for ClockOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let now = monotonic_checked().map_err(ChannelError::io("clock_gettime"))?;
        if now < self.last {
            return Err(ChannelError::Check(format!(
                "CLOCK_MONOTONIC went back from {} to {now}",
                self.last
            )));
        }
        self.last = now;
        Ok(())
    }
}
