//! A stated load held during a run's figures (`os::load`): started before
//! the first figure, checked alive before and after each, and what it did
//! during each figure recorded with the figure.

use crate::engine::os::load::account::{self, CpuDelta, KernelCounters};
use crate::engine::os::load::{Load, LoadPlan, LoadSnapshot, LoadSpec};

/// The load of a running session.
pub struct Held {
    load: Load,
}

/// What was read before a figure, to take differences after it. Read
/// outside every timed region.
pub struct Mark {
    load: LoadSnapshot,
    kernel: KernelCounters,
}

impl Held {
    /// Starts the load of `plan`.
    pub fn start(plan: &LoadPlan) -> Result<Held, String> {
        Ok(Held {
            load: Load::start(plan)?,
        })
    }

    /// The load's processes' ids.
    pub fn pids(&self) -> Vec<i32> {
        self.load.pids()
    }

    /// The ids of the load's interrupt sources' handler processes.
    pub fn handler_pids(&self) -> Vec<i32> {
        self.load.handler_pids()
    }

    /// Checks that every load process still runs, then reads the counters a
    /// figure's record is the difference of.
    pub fn before(&mut self) -> Result<Mark, String> {
        self.load.check()?;
        Ok(Mark {
            kernel: KernelCounters::read(),
            load: self.load.snapshot(),
        })
    }

    /// Checks that every load process ran through the figure, and returns
    /// what the load did since `mark` and what the kernel counted of
    /// interrupts on the load CPUs and the figure's `cpus`, for the
    /// figure's record.
    pub fn after(&mut self, mark: &Mark, cpus: &[usize]) -> Result<FigureLoad, String> {
        let now = self.load.snapshot();
        let kernel = KernelCounters::read();
        self.load.check()?;
        let mut record = FigureLoad::between(self.load.plan(), &mark.load, &now);
        let mut on: Vec<usize> = self.load.plan().cpus.clone();
        on.extend(cpus.iter().filter(|c| !self.load.plan().cpus.contains(c)));
        on.sort_unstable();
        record.cpus = account::delta(&mark.kernel, &kernel, &on);
        Ok(record)
    }
}

/// What one load process did during a figure.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceDelta {
    /// Its part of the load.
    pub spec: LoadSpec,
    /// The CPU it is pinned to (`None`: free on the load CPUs).
    pub cpu: Option<usize>,
    /// Whether it ran under SCHED_FIFO.
    pub fifo: bool,
    /// Interrupts handled, rounds computed and checked, or datagrams sent.
    pub count: u64,
    /// Deadlines an interrupt source missed, or datagrams received.
    pub other: u64,
    /// Handler time stamped in an interrupt source's handler, ns.
    pub handler_ns: u64,
    /// An interrupt source's CPU time as the scheduler counts it, ns.
    pub cpu_time_ns: Option<u64>,
}

impl SourceDelta {
    /// What was asked of it per second: the interrupt frequency, the
    /// datagram rate; `None` for a CPU load (as fast as it goes).
    pub fn requested_per_s(&self) -> Option<f64> {
        match self.spec {
            LoadSpec::Irq { frequency_hz, .. } => Some(frequency_hz),
            LoadSpec::Net { packets_per_s } => Some(packets_per_s as f64),
            LoadSpec::Cpu { .. } => None,
        }
    }
}

/// What the load did during one figure (or the sweep it was sampled in).
#[derive(Debug, Clone, PartialEq)]
pub struct FigureLoad {
    /// The load held: its parts (empty for `--load none`).
    pub specs: Vec<LoadSpec>,
    /// Length of the window the counts cover, ns.
    pub window_ns: u64,
    /// Each load process, in start order.
    pub sources: Vec<SourceDelta>,
    /// What the kernel counted on each load CPU and each CPU of the figure.
    pub cpus: Vec<CpuDelta>,
}

impl FigureLoad {
    /// The differences between two snapshots of `plan`'s processes.
    pub fn between(plan: &LoadPlan, before: &LoadSnapshot, after: &LoadSnapshot) -> FigureLoad {
        let sources = before
            .processes
            .iter()
            .zip(&after.processes)
            .map(|(b, a)| SourceDelta {
                spec: plan.specs[a.spec],
                cpu: a.cpu,
                fifo: a.fifo,
                count: a.count.saturating_sub(b.count),
                other: a.other.saturating_sub(b.other),
                handler_ns: a.handler_ns.saturating_sub(b.handler_ns),
                cpu_time_ns: match (b.cpu_time_ns, a.cpu_time_ns) {
                    (Some(b), Some(a)) => Some(a.saturating_sub(b)),
                    _ => None,
                },
            })
            .collect();
        FigureLoad {
            specs: plan.specs.clone(),
            window_ns: after.at_ns.saturating_sub(before.at_ns),
            sources,
            cpus: Vec::new(),
        }
    }

    /// Adds a later pass's record of the same figure: windows and counts add up.
    pub fn merge(&mut self, next: &FigureLoad) {
        self.window_ns += next.window_ns;
        for (s, n) in self.sources.iter_mut().zip(&next.sources) {
            s.count += n.count;
            s.other += n.other;
            s.handler_ns += n.handler_ns;
            s.cpu_time_ns = s.cpu_time_ns.zip(n.cpu_time_ns).map(|(a, b)| a + b);
        }
        for n in &next.cpus {
            match self.cpus.iter_mut().find(|c| c.cpu == n.cpu) {
                Some(c) => {
                    for (k, v) in &n.interrupts {
                        *c.interrupts.entry(k.clone()).or_default() += v;
                    }
                    for (k, v) in &n.softirqs {
                        *c.softirqs.entry(k.clone()).or_default() += v;
                    }
                    c.irq_ns += n.irq_ns;
                    c.softirq_ns += n.softirq_ns;
                }
                None => self.cpus.push(n.clone()),
            }
        }
    }

    /// The interrupt sources pinned to `cpu`: interrupts handled, handler
    /// time (stamped), and their CPU time as the scheduler counts it (the
    /// handler time where that could not be read).
    pub fn sources_on(&self, cpu: usize) -> (u64, u64, u64) {
        self.sources
            .iter()
            .filter(|s| s.cpu == Some(cpu) && matches!(s.spec, LoadSpec::Irq { .. }))
            .fold((0, 0, 0), |(n, h, c), s| {
                (
                    n + s.count,
                    h + s.handler_ns,
                    c + s.cpu_time_ns.unwrap_or(s.handler_ns),
                )
            })
    }

    /// The interrupt time accounted on `cpu` in the window, ns: the kernel's
    /// hard and soft interrupt time there plus the CPU time of the interrupt
    /// sources pinned there.
    pub fn interrupt_ns_on(&self, cpu: usize) -> u64 {
        let kernel = self
            .cpus
            .iter()
            .find(|c| c.cpu == cpu)
            .map_or(0, |c| c.irq_ns + c.softirq_ns);
        kernel + self.sources_on(cpu).2
    }

    /// Source `i`'s count per second of the window (the achieved rate).
    pub fn achieved_per_s(&self, i: usize) -> Option<f64> {
        (self.window_ns > 0).then(|| self.sources[i].count as f64 * 1e9 / self.window_ns as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::os::load::ProcessCounters;
    use std::time::Duration;

    fn snap(at_ns: u64, count: u64, handler_ns: u64) -> LoadSnapshot {
        LoadSnapshot {
            at_ns,
            processes: vec![ProcessCounters {
                spec: 0,
                cpu: Some(0),
                fifo: true,
                count,
                other: 0,
                handler_ns,
                cpu_time_ns: Some(handler_ns * 2),
            }],
        }
    }

    #[test]
    fn a_figure_records_the_differences_and_the_achieved_rate() {
        let plan = LoadPlan {
            specs: vec![LoadSpec::Irq {
                frequency_hz: 1000.0,
                work: Duration::from_micros(2),
            }],
            cpus: vec![0],
        };
        let mut f =
            FigureLoad::between(&plan, &snap(1_000, 10, 100), &snap(500_001_000, 510, 1100));
        assert_eq!(f.window_ns, 500_000_000);
        assert_eq!(f.sources[0].count, 500);
        assert_eq!(f.sources[0].handler_ns, 1000);
        assert_eq!(f.sources[0].cpu_time_ns, Some(2000));
        assert_eq!(f.achieved_per_s(0), Some(1000.0));
        assert_eq!(f.sources[0].requested_per_s(), Some(1000.0));
        let again = f.clone();
        f.merge(&again);
        assert_eq!(f.window_ns, 1_000_000_000);
        assert_eq!(f.achieved_per_s(0), Some(1000.0));
    }
}
