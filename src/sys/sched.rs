//! CPU affinity, real-time scheduling policy and timer slack.

use super::cvt;
use std::io;

/// Pins the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        cvt(libc::sched_setaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        ))
        .map(|_| ())
    }
}

/// The CPUs the calling thread may run on.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data and sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        cvt(libc::sched_getaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &mut set,
        ))?;
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// Restores the calling thread's affinity to the given CPUs.
pub fn set_allowed_cpus(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: as in pin_to_cpu.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        cvt(libc::sched_setaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        ))
        .map(|_| ())
    }
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no arguments.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

/// Number of CPUs configured on the machine (online or not).
pub fn configured_cpus() -> usize {
    // SAFETY: sysconf with a valid name.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    n.max(1) as usize
}

/// Puts the calling thread under SCHED_FIFO at `priority` (1..=99).
pub fn set_fifo(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: param is a valid sched_param; pid 0 is the calling thread.
    cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) }).map(|_| ())
}

/// Returns the calling thread to SCHED_OTHER.
pub fn set_normal() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: as in set_fifo.
    cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) }).map(|_| ())
}

/// The calling thread's timer slack in nanoseconds.
pub fn timer_slack() -> io::Result<u64> {
    // SAFETY: PR_GET_TIMERSLACK returns the value.
    cvt(unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) }).map(|v| v as u64)
}

/// Gives up the CPU (`sched_yield`), reporting the error the kernel returned
/// (normally none), so that a seccomp probe can see the call was made.
#[inline]
pub fn yield_cpu() -> io::Result<()> {
    // SAFETY: sched_yield has no arguments.
    cvt(unsafe { libc::sched_yield() }).map(|_| ())
}

/// Sets the calling thread's timer slack in nanoseconds (at least 1: 0 would
/// mean "the default" to the kernel).
pub fn set_timer_slack(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes the value as an unsigned long.
    cvt(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns.max(1) as libc::c_ulong, 0, 0, 0) })
        .map(|_| ())
}

/// The calling thread's scheduling policy: "SCHED_FIFO", "SCHED_OTHER", ….
pub fn policy_name() -> &'static str {
    // SAFETY: pid 0 is the calling thread; no pointers.
    match unsafe { libc::sched_getscheduler(0) } {
        libc::SCHED_OTHER => "SCHED_OTHER",
        libc::SCHED_FIFO => "SCHED_FIFO",
        libc::SCHED_RR => "SCHED_RR",
        libc::SCHED_BATCH => "SCHED_BATCH",
        libc::SCHED_IDLE => "SCHED_IDLE",
        _ => "unknown",
    }
}
