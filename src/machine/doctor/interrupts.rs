//! What interrupts the measured CPUs: device interrupts and the soft
//! interrupts devices raise, counted over the window, with the IRQs whose
//! affinity allows them there; and the time the hypervisor took away
//! (steal).

use super::{Definition, Inputs, Outcome, Sample, cpu_names, percent};
use crate::engine::os::load::account::{parse_cpu_times, parse_per_cpu_table};
use crate::machine::environment::parse_cpu_list;
use std::collections::BTreeMap;

/// Interrupts a second on one measured CPU below which a figure's samples
/// rarely meet one.
const IRQ_WARN_PER_S: f64 = 100.0;
/// Above this, most samples of a fast figure hold one.
const IRQ_FAIL_PER_S: f64 = 1000.0;

/// Device interrupts on the measured CPUs.
pub const DEVICE_IRQS: Definition = Definition {
    id: "device-irqs",
    title: "device interrupts on the measured CPUs",
    needs_root: false,
    fix: "move them: echo OTHER_CPUS > /proc/irq/N/smp_affinity_list (and ban the measured CPUs in irqbalance: IRQBALANCE_BANNED_CPULIST)",
    run: device_irqs,
};

/// Per measured CPU: the busiest lines' counts over the window, and the
/// rate of all of them together.
struct Landing {
    cpu: usize,
    per_s: f64,
    lines: Vec<(String, u64)>,
}

fn landing(
    x: &Inputs,
    text: fn(&Sample) -> &str,
    counts: impl Fn(&str) -> bool,
) -> Option<Vec<Landing>> {
    let before = parse_per_cpu_table(text(x.before));
    let after = parse_per_cpu_table(text(x.after));
    if after.is_empty() {
        return None;
    }
    let seconds = x.after.seconds_since(x.before);
    let out = x
        .cpus
        .iter()
        .map(|&cpu| {
            let mut lines: Vec<(String, u64)> = after
                .iter()
                .filter(|(name, _)| counts(name))
                .filter_map(|(name, per_cpu)| {
                    let was = before.get(name).and_then(|b| b.get(&cpu)).unwrap_or(&0);
                    let d = per_cpu.get(&cpu)?.saturating_sub(*was);
                    (d > 0).then(|| (name.clone(), d))
                })
                .collect();
            lines.sort_by_key(|l| std::cmp::Reverse(l.1));
            let total: u64 = lines.iter().map(|l| l.1).sum();
            Landing {
                cpu,
                per_s: total as f64 / seconds,
                lines,
            }
        })
        .collect();
    Some(out)
}

/// "CPU 1 40/s (virtio1-req.0 38)": each CPU's rate and its busiest lines,
/// named by `name`.
fn describe(landed: &[Landing], name: impl Fn(&str) -> String) -> String {
    landed
        .iter()
        .map(|l| {
            let top: Vec<String> = l
                .lines
                .iter()
                .take(3)
                .map(|(n, c)| format!("{} {c}", name(n)))
                .collect();
            if top.is_empty() {
                format!("CPU {} 0/s", l.cpu)
            } else {
                format!("CPU {} {:.0}/s ({})", l.cpu, l.per_s, top.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The share of the window `cpu` spent in what `field` counts, %; None
/// where the kernel has never counted any (it then does not account that
/// time, and 0 would read as a measured cost).
fn time_share(
    x: &Inputs,
    cpu: usize,
    field: fn(&crate::engine::os::load::account::CpuTimes) -> u64,
) -> Option<f64> {
    let (_, before) = parse_cpu_times(&x.before.stat);
    let (_, after) = parse_cpu_times(&x.after.stat);
    let now = after.get(&cpu)?;
    let d = now.since(before.get(&cpu)?);
    (d.total() > 0 && field(now) > 0).then(|| field(&d) as f64 / d.total() as f64 * 100.0)
}

fn device_irqs(x: &Inputs) -> Outcome {
    // Device lines are numbered; the named ones (LOC, RES, CAL, TLB, …) are
    // the kernel's own, on every CPU.
    let device = |n: &str| n.chars().all(|c| c.is_ascii_digit());
    let Some(landed) = landing(x, |s| &s.interrupts, device) else {
        return Outcome::skip("no /proc/interrupts");
    };
    let name_of = |irq: &str| {
        let line = x
            .after
            .interrupts
            .lines()
            .find(|l| l.split_once(':').is_some_and(|(n, _)| n.trim() == irq));
        // The last word of the line is the device's name.
        match line.and_then(|l| l.split_whitespace().last()) {
            Some(dev) if dev != irq => format!("{irq} {dev}"),
            _ => irq.to_string(),
        }
    };
    // Which device IRQs may be sent to the measured CPUs at all.
    let irqs: Vec<String> = x
        .root
        .list("/proc/irq")
        .into_iter()
        .filter(|n| device(n))
        .collect();
    let allowed_here = irqs
        .iter()
        .filter(|n| {
            x.root
                .read(&format!("/proc/irq/{n}/smp_affinity_list"))
                .is_some_and(|l| parse_cpu_list(&l).iter().any(|c| x.cpus.contains(c)))
        })
        .count();
    let affinity = if irqs.is_empty() {
        String::new()
    } else {
        format!(
            "; {allowed_here} of {} device IRQs may be sent to CPUs {}",
            irqs.len(),
            cpu_names(x.cpus)
        )
    };
    let worst = landed.iter().map(|l| l.per_s).fold(0.0, f64::max);
    let mut o = Outcome::graded(
        worst,
        IRQ_WARN_PER_S,
        IRQ_FAIL_PER_S,
        format!("{}{affinity}", describe(&landed, name_of)),
    );
    if let Some(share) = landed
        .iter()
        .filter_map(|l| time_share(x, l.cpu, |t| t.irq))
        .reduce(f64::max)
    {
        o = o.cost(
            share,
            "%",
            "of a measured CPU's time in hard interrupts (ticks)",
        );
    }
    o
}

/// Soft interrupts devices raise on the measured CPUs.
pub const SOFTIRQS: Definition = Definition {
    id: "device-softirqs",
    title: "device soft interrupts on the measured CPUs",
    needs_root: false,
    fix: "move the device's IRQ (and RPS: /sys/class/net/DEV/queues/rx-N/rps_cpus) off the measured CPUs",
    run: softirqs,
};

/// The kernel's own soft interrupts, raised on every CPU by its tick, its
/// timers, the scheduler's balancing and RCU: not a device's.
const HOUSEKEEPING: &[&str] = &["TIMER", "HRTIMER", "SCHED", "RCU"];

fn softirqs(x: &Inputs) -> Outcome {
    let Some(landed) = landing(x, |s| &s.softirqs, |n| !HOUSEKEEPING.contains(&n)) else {
        return Outcome::skip("no /proc/softirqs");
    };
    let worst = landed.iter().map(|l| l.per_s).fold(0.0, f64::max);
    let mut o = Outcome::graded(
        worst,
        IRQ_WARN_PER_S,
        IRQ_FAIL_PER_S,
        format!(
            "{} (TIMER, HRTIMER, SCHED and RCU not counted: every CPU has them)",
            describe(&landed, str::to_string)
        ),
    );
    if let Some(share) = landed
        .iter()
        .filter_map(|l| time_share(x, l.cpu, |t| t.softirq))
        .reduce(f64::max)
    {
        o = o.cost(
            share,
            "%",
            "of a measured CPU's time in soft interrupts (ticks)",
        );
    }
    o
}

/// Time the hypervisor ran something else while a measured CPU wanted to run.
pub const STEAL: Definition = Definition {
    id: "steal-time",
    title: "steal time",
    needs_root: false,
    fix: "measure when the host is quieter, or on dedicated (pinned) vCPUs",
    run: steal,
};

/// Steal below this (%) is within a tick's resolution over the window.
const STEAL_WARN: f64 = 2.0;
/// Above this, a tenth of the CPU is gone: figures move with the host.
const STEAL_FAIL: f64 = 10.0;

fn steal(x: &Inputs) -> Outcome {
    let (_, before) = parse_cpu_times(&x.before.stat);
    let (_, after) = parse_cpu_times(&x.after.stat);
    if after.is_empty() {
        return Outcome::skip("no per-CPU lines in /proc/stat");
    }
    let mut shares = BTreeMap::new();
    for &cpu in x.cpus {
        let (Some(b), Some(a)) = (before.get(&cpu), after.get(&cpu)) else {
            return Outcome::skip(format!("no /proc/stat line for CPU {cpu}"));
        };
        let d = a.since(b);
        shares.insert(cpu, d.steal as f64 / d.total().max(1) as f64 * 100.0);
    }
    let worst = shares.values().copied().fold(0.0, f64::max);
    let found = shares
        .iter()
        .map(|(c, s)| format!("CPU {c} {}", percent(*s)))
        .collect::<Vec<_>>()
        .join(", ");
    Outcome::graded(
        worst,
        STEAL_WARN,
        STEAL_FAIL,
        format!(
            "{found} of {:.1} s stolen by the hypervisor",
            x.after.seconds_since(x.before)
        ),
    )
    .cost(worst, "%", "of a measured CPU's time stolen")
}

#[cfg(test)]
mod tests {
    use super::super::Status;
    use super::super::fixture::{Tree, measured, outcome_with};

    /// `/proc/interrupts` with `on1` interrupts of a disk on CPU 1.
    fn interrupts(on1: u64) -> String {
        format!(
            "           CPU0       CPU1\n 36:          0   {on1}   PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n\
             LOC:   {on1}   {on1}   Local timer interrupts\n"
        )
    }

    fn irqs(per_s: u64) -> super::Outcome {
        let t = Tree::new();
        t.file("/proc/interrupts", &interrupts(1000));
        t.file("/proc/irq/36/smp_affinity_list", "0-1");
        t.file("/proc/irq/default_smp_affinity", "3");
        let before = t.sample(0.0);
        t.file("/proc/interrupts", &interrupts(1000 + 2 * per_s));
        let after = t.sample(2.0);
        outcome_with("device-irqs", &t, &before, &after, &measured())
    }

    #[test]
    fn interrupt_time_is_a_cost_only_where_the_kernel_accounts_it() {
        let t = Tree::new();
        t.file("/proc/interrupts", &interrupts(10));
        // irq ticks (the sixth field) 0 since boot: not accounted.
        t.file(
            "/proc/stat",
            "cpu0 0 0 0 100 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0",
        );
        let before = t.sample(0.0);
        t.file(
            "/proc/stat",
            "cpu0 0 0 0 200 0 0 0 0\ncpu1 0 0 0 200 0 0 0 0",
        );
        let after = t.sample(1.0);
        let o = outcome_with("device-irqs", &t, &before, &after, &measured());
        assert_eq!(o.cost, None, "{o:?}");
        t.file(
            "/proc/stat",
            "cpu0 0 0 0 190 0 10 0 0\ncpu1 0 0 0 200 0 0 0 0",
        );
        let after = t.sample(1.0);
        let o = outcome_with("device-irqs", &t, &before, &after, &measured());
        assert_eq!(o.cost.unwrap().value, 10.0);
    }

    #[test]
    fn device_irqs_are_graded_by_their_rate_on_the_measured_cpus() {
        let o = irqs(5);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!(o.found.contains("CPU 1 5/s (36 virtio1-req.0 10)"), "{o:?}");
        assert!(o.found.contains("1 of 1 device IRQs"), "{o:?}");
        assert_eq!(o.cost, None, "no /proc/stat: no cost");
        assert_eq!(irqs(500).status, Status::Warn);
        assert_eq!(irqs(5000).status, Status::Fail);
        let none = Tree::new();
        let s = none.sample(0.0);
        assert_eq!(
            outcome_with("device-irqs", &none, &s, &s, &measured()).status,
            Status::Skip
        );
    }

    fn softirqs(net_rx: u64) -> super::Outcome {
        let t = Tree::new();
        let table = |n: u64| {
            format!(
                "                    CPU0       CPU1\n       TIMER:   {n}   {n}\n      NET_RX:   0   {n}\n"
            )
        };
        t.file("/proc/softirqs", &table(100));
        let before = t.sample(0.0);
        t.file("/proc/softirqs", &table(100 + net_rx));
        let after = t.sample(1.0);
        outcome_with("device-softirqs", &t, &before, &after, &measured())
    }

    #[test]
    fn device_softirqs_count_and_housekeeping_does_not() {
        let o = softirqs(20);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!(
            o.found.contains("NET_RX 20") && !o.found.contains("TIMER 20"),
            "{o:?}"
        );
        assert_eq!(softirqs(300).status, Status::Warn);
        assert_eq!(softirqs(3000).status, Status::Fail);
    }

    fn steal(stolen: u64) -> super::Outcome {
        let t = Tree::new();
        let stat = |s: u64| {
            format!(
                "cpu  0 0 0 0 0 0 0 0\ncpu0 0 0 0 {} 0 0 0 {s}\ncpu1 0 0 0 100 0 0 0 0\n",
                100 - s
            )
        };
        t.file("/proc/stat", &stat(0));
        let before = t.sample(0.0);
        // 100 ticks later, `stolen` of CPU 0's were the hypervisor's.
        t.file(
            "/proc/stat",
            &format!(
                "cpu  0 0 0 0 0 0 0 0\ncpu0 0 0 0 {} 0 0 0 {stolen}\ncpu1 0 0 0 200 0 0 0 0\n",
                200 - stolen
            ),
        );
        let after = t.sample(1.0);
        outcome_with("steal-time", &t, &before, &after, &measured())
    }

    #[test]
    fn steal_is_graded_by_the_share_of_the_window() {
        let o = steal(0);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        let o = steal(5);
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert_eq!(o.cost.unwrap().value, 5.0);
        assert_eq!(steal(30).status, Status::Fail);
    }
}
