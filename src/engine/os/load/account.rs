//! What the kernel counted of interrupts, per CPU: `/proc/interrupts`
//! (LOC, RES, CAL, TLB and every device line), `/proc/softirqs` (TIMER,
//! HRTIMER, NET_RX, …) and `/proc/stat`'s irq and softirq time, read before
//! and after a figure (never inside a timed region), and their differences.

use std::collections::BTreeMap;

/// The kernel's interrupt counts and times at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelCounters {
    /// `/proc/interrupts`: each line's name with its count per CPU.
    pub interrupts: BTreeMap<String, BTreeMap<usize, u64>>,
    /// `/proc/softirqs`: each kind with its count per CPU.
    pub softirqs: BTreeMap<String, BTreeMap<usize, u64>>,
    /// `/proc/stat`: hard-interrupt time per CPU, ticks.
    pub irq_ticks: BTreeMap<usize, u64>,
    /// `/proc/stat`: soft-interrupt time per CPU, ticks.
    pub softirq_ticks: BTreeMap<usize, u64>,
}

impl KernelCounters {
    /// Reads the three files; a file that cannot be read leaves its part empty.
    pub fn read() -> KernelCounters {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let (irq_ticks, softirq_ticks) = parse_stat(&read("/proc/stat"));
        KernelCounters {
            interrupts: parse_per_cpu_table(&read("/proc/interrupts")),
            softirqs: parse_per_cpu_table(&read("/proc/softirqs")),
            irq_ticks,
            softirq_ticks,
        }
    }
}

/// A table whose header names the CPUs (`CPU0 CPU1 …`) and whose lines are
/// `NAME: count count … [description]` (`/proc/interrupts`, `/proc/softirqs`).
/// Lines with fewer counts than CPUs (ERR, MIS) keep the ones they have.
pub fn parse_per_cpu_table(text: &str) -> BTreeMap<String, BTreeMap<usize, u64>> {
    let mut lines = text.lines();
    let cpus: Vec<usize> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
        .collect();
    let mut out = BTreeMap::new();
    for line in lines {
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let counts: BTreeMap<usize, u64> = cpus
            .iter()
            .zip(rest.split_whitespace().map_while(|w| w.parse::<u64>().ok()))
            .map(|(&c, n)| (c, n))
            .collect();
        if !counts.is_empty() {
            out.insert(name.trim().to_string(), counts);
        }
    }
    out
}

/// `/proc/stat`'s per-CPU irq and softirq times (ticks): fields 6 and 7 of
/// each `cpuN` line.
pub fn parse_stat(text: &str) -> (BTreeMap<usize, u64>, BTreeMap<usize, u64>) {
    let per_cpu = parse_cpu_times(text).1;
    (
        per_cpu.iter().map(|(&c, t)| (c, t.irq)).collect(),
        per_cpu.iter().map(|(&c, t)| (c, t.softirq)).collect(),
    )
}

/// The times one CPU (or all of them, summed) has spent in each state so
/// far, from a `/proc/stat` line, in clock ticks (`USER_HZ`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// Running user code (`nice` included).
    pub user: u64,
    /// Running the kernel for processes.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle with I/O outstanding.
    pub iowait: u64,
    /// Serving hard interrupts.
    pub irq: u64,
    /// Serving soft interrupts.
    pub softirq: u64,
    /// Wanting to run while the hypervisor ran something else.
    pub steal: u64,
}

impl CpuTimes {
    /// Every state's time together.
    pub fn total(&self) -> u64 {
        self.user + self.system + self.idle + self.iowait + self.irq + self.softirq + self.steal
    }

    /// The time the CPU ran anything (steal not counted: it did not run then).
    pub fn ran(&self) -> u64 {
        self.user + self.system + self.irq + self.softirq
    }

    /// `self − before`, state by state (a count that went back counts 0).
    pub fn since(&self, before: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(before.user),
            system: self.system.saturating_sub(before.system),
            idle: self.idle.saturating_sub(before.idle),
            iowait: self.iowait.saturating_sub(before.iowait),
            irq: self.irq.saturating_sub(before.irq),
            softirq: self.softirq.saturating_sub(before.softirq),
            steal: self.steal.saturating_sub(before.steal),
        }
    }
}

/// `/proc/stat`'s `cpu` line (all CPUs summed), if present, and its `cpuN`
/// lines by CPU. Fields: user nice system idle iowait irq softirq steal
/// (guest time is already inside user and nice); a line with fewer than 7
/// is left out, and steal is 0 where a kernel does not give it.
pub fn parse_cpu_times(text: &str) -> (Option<CpuTimes>, BTreeMap<usize, CpuTimes>) {
    let (mut all, mut per_cpu) = (None, BTreeMap::new());
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(name) = f.next().and_then(|n| n.strip_prefix("cpu")) else {
            continue;
        };
        let v: Vec<u64> = f.map_while(|x| x.parse().ok()).collect();
        if v.len() < 7 {
            continue;
        }
        let times = CpuTimes {
            user: v[0] + v[1],
            system: v[2],
            idle: v[3],
            iowait: v[4],
            irq: v[5],
            softirq: v[6],
            steal: v.get(7).copied().unwrap_or(0),
        };
        if name.is_empty() {
            all = Some(times);
        } else if let Ok(cpu) = name.parse::<usize>() {
            per_cpu.insert(cpu, times);
        }
    }
    (all, per_cpu)
}

/// What the kernel counted on one CPU between two readings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuDelta {
    /// The CPU.
    pub cpu: usize,
    /// `/proc/interrupts` lines that counted on it, with how many.
    pub interrupts: BTreeMap<String, u64>,
    /// `/proc/softirqs` kinds that counted on it, with how many.
    pub softirqs: BTreeMap<String, u64>,
    /// Hard-interrupt time, ns (`/proc/stat` ticks × 10⁹ / USER_HZ).
    pub irq_ns: u64,
    /// Soft-interrupt time, ns (as `irq_ns`).
    pub softirq_ns: u64,
}

/// The difference `after − before` on each of `cpus` (counts that went back,
/// as on a CPU brought on line again, count as 0).
pub fn delta(before: &KernelCounters, after: &KernelCounters, cpus: &[usize]) -> Vec<CpuDelta> {
    let tick_ns = 1_000_000_000 / crate::sys::clock::ticks_per_second();
    let per = |b: &BTreeMap<usize, u64>, a: &BTreeMap<usize, u64>, c: usize| {
        a.get(&c)
            .unwrap_or(&0)
            .saturating_sub(*b.get(&c).unwrap_or(&0))
    };
    let lines = |b: &BTreeMap<String, BTreeMap<usize, u64>>,
                 a: &BTreeMap<String, BTreeMap<usize, u64>>,
                 c: usize| {
        a.iter()
            .filter_map(|(name, counts)| {
                let empty = BTreeMap::new();
                let d = per(b.get(name).unwrap_or(&empty), counts, c);
                (d > 0).then(|| (name.clone(), d))
            })
            .collect()
    };
    cpus.iter()
        .map(|&c| CpuDelta {
            cpu: c,
            interrupts: lines(&before.interrupts, &after.interrupts, c),
            softirqs: lines(&before.softirqs, &after.softirqs, c),
            irq_ns: per(&before.irq_ticks, &after.irq_ticks, c) * tick_ns,
            softirq_ns: per(&before.softirq_ticks, &after.softirq_ticks, c) * tick_ns,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTERRUPTS: &str = "           CPU0       CPU1
  1:          9          0   IO-APIC   1-edge      i8042
 24:       1000         20   PCI-MSI 49152-edge      virtio0-input.0
NMI:          0          0   Non-maskable interrupts
LOC:     500000     400000   Local timer interrupts
RES:        300        200   Rescheduling interrupts
ERR:          0
";

    #[test]
    fn per_cpu_tables_are_read_by_their_header() {
        let t = parse_per_cpu_table(INTERRUPTS);
        assert_eq!(t["LOC"][&0], 500_000);
        assert_eq!(t["LOC"][&1], 400_000);
        assert_eq!(t["24"][&1], 20);
        assert_eq!(t["ERR"].len(), 1, "a line with one count keeps it");
        let soft = parse_per_cpu_table(
            "                    CPU0       CPU1\n          HI:          1          2\n       TIMER:       10         20\n",
        );
        assert_eq!(soft["TIMER"][&1], 20);
    }

    #[test]
    fn stat_gives_irq_and_softirq_ticks_per_cpu() {
        let (irq, soft) = parse_stat(
            "cpu  10 0 5 100 1 7 9 0 0 0\ncpu0 5 0 2 50 1 3 4 0 0 0\ncpu1 5 0 3 50 0 4 5 0 0 0\nintr 1 2\n",
        );
        assert_eq!(irq, BTreeMap::from([(0, 3), (1, 4)]));
        assert_eq!(soft, BTreeMap::from([(0, 4), (1, 5)]));
    }

    #[test]
    fn stat_gives_every_cpus_times_and_their_sum() {
        let (all, per_cpu) = parse_cpu_times(
            "cpu  10 1 5 100 2 7 9 3 0 0\ncpu0 5 1 2 50 1 3 4 2 0 0\ncpu1 5 0 3 50 1 4 5 1\nintr 1 2\n",
        );
        let all = all.unwrap();
        assert_eq!((all.user, all.steal, all.total()), (11, 3, 137));
        assert_eq!(all.ran(), 11 + 5 + 7 + 9);
        assert_eq!(per_cpu[&1].steal, 1);
        assert_eq!(per_cpu[&0].since(&per_cpu[&1]).user, 1);
        assert_eq!(per_cpu[&1].since(&per_cpu[&0]).user, 0, "never below 0");
        // An old kernel without steal.
        assert_eq!(parse_cpu_times("cpu0 1 0 1 9 0 0 0\n").1[&0].steal, 0);
    }

    #[test]
    fn deltas_keep_what_counted_on_each_cpu() {
        let before = KernelCounters {
            interrupts: parse_per_cpu_table(INTERRUPTS),
            irq_ticks: BTreeMap::from([(0, 3), (1, 4)]),
            ..Default::default()
        };
        let mut after = before.clone();
        after.interrupts.get_mut("LOC").unwrap().insert(0, 500_400);
        after.irq_ticks.insert(0, 5);
        let d = delta(&before, &after, &[0, 1]);
        assert_eq!(d[0].interrupts, BTreeMap::from([("LOC".to_string(), 400)]));
        assert!(d[1].interrupts.is_empty());
        let tick = 1_000_000_000 / crate::sys::clock::ticks_per_second();
        assert_eq!(d[0].irq_ns, 2 * tick);
        assert_eq!(d[1].irq_ns, 0);
    }
}
