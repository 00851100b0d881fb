//! A stated load held while figures are measured (`--load`): periodic
//! interrupt sources, CPU load processes and a loopback UDP flood, each a
//! forked process pinned where the plan says, reporting what it did through
//! a shared page. Started before the first figure, checked alive at every
//! figure, killed and reaped on every path (drop).
//!
//! A load process never measures anything the run reports as a figure; it
//! only counts what it did (interrupts handled and their handler time,
//! rounds computed and checked, datagrams sent and received), so that the
//! achieved load is measured rather than assumed.

pub mod account;
pub mod kernels;
mod sources;

use crate::sys::mem::SharedMapping;
use crate::sys::process::{self, ExitStatus, Fork};
pub use kernels::CpuKind;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// One part of a load, as the user stated it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LoadSpec {
    /// A periodic interrupt source on each load CPU: a timer at this
    /// frequency whose expiry runs a handler that works for `work`.
    Irq {
        /// Expiries per second on each load CPU.
        frequency_hz: f64,
        /// Time the handler spends working at each expiry.
        work: Duration,
    },
    /// `processes` processes running the application kernels, spread over the load CPUs.
    Cpu {
        /// How many.
        processes: usize,
        /// Which kernel.
        kind: CpuKind,
    },
    /// A bounded UDP flood over loopback: datagrams per second.
    Net {
        /// Datagrams sent per second.
        packets_per_s: u64,
    },
}

/// Most frequent interrupt source accepted, Hz: above it a handler per
/// expiry would be most of a CPU.
pub const MAX_IRQ_HZ: f64 = 20_000.0;
/// Most datagrams per second of a `net` load: bounded so it loads the
/// softirqs without taking a whole CPU.
pub const MAX_NET_PPS: u64 = 200_000;
/// Most load processes in all (slots of the shared page).
pub const MAX_PROCESSES: usize = 64;
/// SCHED_FIFO priority of an interrupt source when permitted: above every
/// task a benchmark runs, as an interrupt is.
pub const IRQ_PRIORITY: i32 = 99;

impl LoadSpec {
    /// The spec as it is written on the command line.
    pub fn label(&self) -> String {
        match self {
            LoadSpec::Irq { frequency_hz, work } => {
                format!("irq:{}:work={}ns", fmt_hz(*frequency_hz), work.as_nanos())
            }
            LoadSpec::Cpu { processes, kind } => format!("cpu:{processes}:{}", kind.name()),
            LoadSpec::Net { packets_per_s } => format!("net:{packets_per_s}"),
        }
    }

    /// Which kind of load: `irq`, `cpu` or `net`.
    pub fn kind(&self) -> &'static str {
        match self {
            LoadSpec::Irq { .. } => "irq",
            LoadSpec::Cpu { .. } => "cpu",
            LoadSpec::Net { .. } => "net",
        }
    }
}

fn fmt_hz(hz: f64) -> String {
    if hz.fract() == 0.0 {
        format!("{}", hz as u64)
    } else {
        format!("{hz}")
    }
}

/// The load of a run: its parts and the CPUs it is held on.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPlan {
    /// Its parts; empty for `--load none` (accounting without a load).
    pub specs: Vec<LoadSpec>,
    /// CPUs the load runs on (`--load-cpus`, by default the measured ones).
    pub cpus: Vec<usize>,
}

impl LoadPlan {
    /// The processes this plan starts: each part's spec index, what it
    /// runs and where (an interrupt source per CPU, CPU load round-robin,
    /// the flood on all the load CPUs).
    fn processes(&self) -> Vec<(usize, Where)> {
        let mut out = Vec::new();
        for (i, spec) in self.specs.iter().enumerate() {
            match *spec {
                LoadSpec::Irq { .. } => out.extend(self.cpus.iter().map(|&c| (i, Where::Cpu(c)))),
                LoadSpec::Cpu { processes, .. } => out.extend(
                    (0..processes).map(|k| (i, Where::Cpu(self.cpus[k % self.cpus.len()]))),
                ),
                LoadSpec::Net { .. } => out.push((i, Where::Cpus)),
            }
        }
        out
    }

    /// How many load processes it starts.
    pub fn process_count(&self) -> usize {
        self.processes().len()
    }
}

/// Where one load process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    /// Pinned to this CPU.
    Cpu(usize),
    /// Free on every load CPU.
    Cpus,
}

/// The shared page: one slot per process.
const SLOT: usize = 256;
const OFF_STATE: usize = 0;
const OFF_FIFO: usize = 4;
const OFF_COUNT: usize = 8;
const OFF_OTHER: usize = 16;
const OFF_HANDLER_NS: usize = 24;
const OFF_STARTED_NS: usize = 32;
const OFF_ERROR_LEN: usize = 40;
const OFF_ERROR: usize = 64;
const ERROR_CAP: usize = SLOT - OFF_ERROR;

const STATE_RUNNING: u32 = 1;
const STATE_FAILED: u32 = 2;

/// A load process's slot of the shared page, as both sides see it.
#[derive(Clone, Copy)]
struct Slot<'a> {
    map: &'a SharedMapping,
    base: usize,
}

impl Slot<'_> {
    fn running(&self, fifo: bool) {
        self.map
            .atomic_u32(self.base + OFF_FIFO)
            .store(fifo as u32, Ordering::Relaxed);
        self.map
            .atomic_u64(self.base + OFF_STARTED_NS)
            .store(crate::sys::clock::monotonic_ns(), Ordering::Relaxed);
        self.map
            .atomic_u32(self.base + OFF_STATE)
            .store(STATE_RUNNING, Ordering::Release);
    }

    fn fail(&self, msg: &str) {
        let n = msg.len().min(ERROR_CAP);
        self.map
            .write_bytes(self.base + OFF_ERROR, &msg.as_bytes()[..n]);
        self.map
            .atomic_u32(self.base + OFF_ERROR_LEN)
            .store(n as u32, Ordering::Release);
        self.map
            .atomic_u32(self.base + OFF_STATE)
            .store(STATE_FAILED, Ordering::Release);
    }

    /// Adds to the main count (interrupts handled, rounds, datagrams sent),
    /// the other count (deadlines missed, datagrams received) and the handler time.
    fn add(&self, count: u64, other: u64, handler_ns: u64) {
        let at = |o| self.map.atomic_u64(self.base + o);
        at(OFF_HANDLER_NS).fetch_add(handler_ns, Ordering::Relaxed);
        at(OFF_OTHER).fetch_add(other, Ordering::Relaxed);
        // Last: a reader that sees the count sees the time that came with it.
        at(OFF_COUNT).fetch_add(count, Ordering::Release);
    }

    fn state(&self) -> u32 {
        self.map
            .atomic_u32(self.base + OFF_STATE)
            .load(Ordering::Acquire)
    }

    fn error(&self) -> Option<String> {
        let n = self
            .map
            .atomic_u32(self.base + OFF_ERROR_LEN)
            .load(Ordering::Acquire) as usize;
        (n > 0).then(|| {
            let mut buf = vec![0u8; n.min(ERROR_CAP)];
            self.map.read_bytes(self.base + OFF_ERROR, &mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    }

    fn counters(&self) -> (u64, u64, u64) {
        let at = |o| self.map.atomic_u64(self.base + o);
        let count = at(OFF_COUNT).load(Ordering::Acquire);
        (
            count,
            at(OFF_OTHER).load(Ordering::Relaxed),
            at(OFF_HANDLER_NS).load(Ordering::Relaxed),
        )
    }
}

/// One running load process.
struct Process {
    spec: usize,
    at: Where,
    pid: libc::pid_t,
    reaped: bool,
}

/// A load being held: its processes, killed and reaped on drop.
pub struct Load {
    plan: LoadPlan,
    page: SharedMapping,
    processes: Vec<Process>,
}

/// What `ps` shows of a load process.
pub const PROCESS_NAME: &std::ffi::CStr = c"ipcmark-load";

/// How long a load process may take to report that it runs.
const START_TIMEOUT: Duration = Duration::from_secs(5);

impl Load {
    /// Starts every process of `plan` and waits until each runs. Call from
    /// the single-threaded measuring process (the processes are forked).
    /// On an error, those already started are stopped.
    pub fn start(plan: &LoadPlan) -> Result<Load, String> {
        let wanted = plan.processes();
        if wanted.len() > MAX_PROCESSES {
            return Err(format!(
                "the load needs {} processes; at most {MAX_PROCESSES}",
                wanted.len()
            ));
        }
        let page = SharedMapping::new(SLOT * MAX_PROCESSES.max(1))
            .map_err(|e| format!("load: cannot map its shared page: {e}"))?;
        let mut load = Load {
            plan: plan.clone(),
            page,
            processes: Vec::with_capacity(wanted.len()),
        };
        let parent = process::getpid();
        for (k, &(spec, at)) in wanted.iter().enumerate() {
            match process::fork() {
                Err(e) => return Err(format!("load: fork: {e}")),
                Ok(Fork::Child) => {
                    // Only this runs in the child, and it never returns: the
                    // child never releases the parent's objects.
                    let _ = process::set_parent_death_signal(libc::SIGKILL);
                    if process::getppid() != parent {
                        process::exit_now(1);
                    }
                    let _ = process::set_name(PROCESS_NAME);
                    let slot = load.slot(k);
                    let code = sources::run(&plan.specs[spec], at, &plan.cpus, k, slot);
                    process::exit_now(code)
                }
                Ok(Fork::Parent(pid)) => load.processes.push(Process {
                    spec,
                    at,
                    pid,
                    reaped: false,
                }),
            }
        }
        let start = Instant::now();
        for k in 0..load.processes.len() {
            loop {
                match load.slot(k).state() {
                    STATE_RUNNING => break,
                    STATE_FAILED => {
                        return Err(format!(
                            "load process {} could not start: {}",
                            load.name(k),
                            load.slot(k).error().unwrap_or_default()
                        ));
                    }
                    _ => {}
                }
                if let Ok(Some(status)) = process::try_wait(load.processes[k].pid) {
                    load.processes[k].reaped = true;
                    return Err(format!(
                        "load process {} ended before it started ({})",
                        load.name(k),
                        describe(status)
                    ));
                }
                if start.elapsed() > START_TIMEOUT {
                    return Err(format!(
                        "load process {} did not start within {START_TIMEOUT:?}",
                        load.name(k)
                    ));
                }
                if let Some(s) = super::interrupt::stop_requested() {
                    return Err(format!(
                        "interrupted by {} while the load started",
                        super::interrupt::signal_name(s)
                    ));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Ok(load)
    }

    fn slot(&self, k: usize) -> Slot<'_> {
        Slot {
            map: &self.page,
            base: k * SLOT,
        }
    }

    /// The load's processes (each one thread: its pid is its task's id),
    /// so a trace can tell time spent behind them.
    pub fn pids(&self) -> Vec<i32> {
        self.processes.iter().map(|p| p.pid).collect()
    }

    /// The ids of its interrupt sources' processes: each is the handler
    /// of its periodic interrupt (`irq:` parts), as opposed to a CPU or
    /// network load's process.
    pub fn handler_pids(&self) -> Vec<i32> {
        self.processes
            .iter()
            .filter(|p| matches!(self.plan.specs[p.spec], LoadSpec::Irq { .. }))
            .map(|p| p.pid)
            .collect()
    }

    /// The plan it holds.
    pub fn plan(&self) -> &LoadPlan {
        &self.plan
    }

    /// Process `k` for messages: its spec, where it runs, its pid.
    fn name(&self, k: usize) -> String {
        let p = &self.processes[k];
        let at = match p.at {
            Where::Cpu(c) => format!("on CPU {c}"),
            Where::Cpus => "on the load CPUs".into(),
        };
        format!("{} {at} (pid {})", self.plan.specs[p.spec].label(), p.pid)
    }

    /// Ok while every load process runs; otherwise one line saying which
    /// ended, how, and what it reported.
    pub fn check(&mut self) -> Result<(), String> {
        for k in 0..self.processes.len() {
            let ended = if self.processes[k].reaped {
                Some("reaped".to_string())
            } else {
                match process::try_wait(self.processes[k].pid) {
                    Ok(Some(status)) => {
                        self.processes[k].reaped = true;
                        Some(describe(status))
                    }
                    Ok(None) => None,
                    Err(e) => Some(format!("cannot be waited for: {e}")),
                }
            };
            if let Some(how) = ended {
                let said = self
                    .slot(k)
                    .error()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default();
                return Err(format!(
                    "load process {} ended during the run ({how}){said}",
                    self.name(k)
                ));
            }
        }
        Ok(())
    }

    /// What every load process has done so far, with the CPU time each
    /// interrupt source has had (`/proc/PID/schedstat`). Reads /proc: never
    /// call it in a timed region.
    pub fn snapshot(&self) -> LoadSnapshot {
        let processes = (0..self.processes.len())
            .map(|k| {
                let p = &self.processes[k];
                let (count, other, handler_ns) = self.slot(k).counters();
                let spec = self.plan.specs[p.spec];
                ProcessCounters {
                    spec: p.spec,
                    cpu: match p.at {
                        Where::Cpu(c) => Some(c),
                        Where::Cpus => None,
                    },
                    fifo: self
                        .page
                        .atomic_u32(k * SLOT + OFF_FIFO)
                        .load(Ordering::Relaxed)
                        == 1,
                    count,
                    other,
                    handler_ns,
                    cpu_time_ns: matches!(spec, LoadSpec::Irq { .. })
                        .then(|| process_cpu_ns(p.pid))
                        .flatten(),
                }
            })
            .collect();
        LoadSnapshot {
            at_ns: crate::sys::clock::monotonic_ns(),
            processes,
        }
    }

    fn stop_all(&mut self) {
        for p in self.processes.iter().filter(|p| !p.reaped) {
            let _ = process::kill(p.pid, libc::SIGKILL);
        }
        for p in self.processes.iter_mut().filter(|p| !p.reaped) {
            // SIGKILL cannot be ignored; the deadline only guards against a
            // child stuck in uninterruptible sleep.
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                match process::try_wait(p.pid) {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_micros(200))
                    }
                    Ok(None) => break,
                }
            }
            p.reaped = true;
        }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// A process's time on a CPU as the scheduler counts it, ns
/// (`/proc/PID/schedstat`, first field); `None` if it cannot be read.
pub fn process_cpu_ns(pid: libc::pid_t) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn describe(status: ExitStatus) -> String {
    match status {
        ExitStatus::Code(c) => format!("exit code {c}"),
        ExitStatus::Signal(s) => format!("killed by signal {s}"),
    }
}

/// What one load process had done at a snapshot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcessCounters {
    /// Index of its spec in the plan.
    pub spec: usize,
    /// The CPU it is pinned to (`None`: free on the load CPUs).
    pub cpu: Option<usize>,
    /// Whether it runs under SCHED_FIFO (an interrupt source when permitted).
    pub fifo: bool,
    /// Interrupts handled, rounds computed and checked, or datagrams sent.
    pub count: u64,
    /// Deadlines an interrupt source missed, or datagrams received.
    pub other: u64,
    /// Time an interrupt source's handler spent, ns (stamped in the handler).
    pub handler_ns: u64,
    /// An interrupt source's CPU time as the kernel counts it, ns.
    pub cpu_time_ns: Option<u64>,
}

/// Every load process's counters at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSnapshot {
    /// When, `CLOCK_MONOTONIC` ns.
    pub at_ns: u64,
    /// One per process, in start order.
    pub processes: Vec<ProcessCounters>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_follow_the_plan() {
        let plan = LoadPlan {
            specs: vec![
                LoadSpec::Irq {
                    frequency_hz: 1000.0,
                    work: Duration::from_micros(2),
                },
                LoadSpec::Cpu {
                    processes: 3,
                    kind: CpuKind::Mixed,
                },
                LoadSpec::Net {
                    packets_per_s: 1000,
                },
            ],
            cpus: vec![0, 1],
        };
        assert_eq!(
            plan.processes(),
            vec![
                (0, Where::Cpu(0)),
                (0, Where::Cpu(1)),
                (1, Where::Cpu(0)),
                (1, Where::Cpu(1)),
                (1, Where::Cpu(0)),
                (2, Where::Cpus),
            ]
        );
        assert_eq!(plan.specs[0].label(), "irq:1000:work=2000ns");
        assert_eq!(plan.specs[1].label(), "cpu:3:mixed");
    }
}
