//! The kernel's settings that decide a figure: the clock source and what a
//! read costs, RT throttling, the preemption model and HZ, timer slack,
//! transparent huge pages, the speculative-execution mitigations, and the
//! hypervisor underneath.

use super::{Definition, Inputs, Outcome};
use crate::machine::environment::{mitigations_in, preemption_in, virtualization_in};
use std::time::Instant;

/// The clock source, and what a `CLOCK_MONOTONIC` read costs.
pub const CLOCKSOURCE: Definition = Definition {
    id: "clocksource",
    title: "clock source",
    needs_root: false,
    fix: "echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource",
    run: clocksource,
};

/// Clock sources the vDSO reads without a system call.
const FAST_CLOCKS: &[&str] = &[
    "tsc",
    "kvm-clock",
    "arch_sys_counter",
    "hyperv_clocksource_tsc_page",
    "riscv_clocksource",
];
/// Clock sources every read of which is a system call and slow I/O.
const SLOW_CLOCKS: &[&str] = &["hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit"];

fn clocksource(x: &Inputs) -> Outcome {
    const DIR: &str = "/sys/devices/system/clocksource/clocksource0";
    let Some(current) = x.root.read(&format!("{DIR}/current_clocksource")) else {
        return Outcome::skip("no clocksource0 in sysfs");
    };
    let available = x
        .root
        .read(&format!("{DIR}/available_clocksource"))
        .unwrap_or_default();
    let found = format!("{current} (available: {available})");
    let mut o = if FAST_CLOCKS.contains(&current.as_str()) {
        Outcome::pass(found)
    } else if SLOW_CLOCKS.contains(&current.as_str()) {
        Outcome::fail(format!(
            "{found}: every clock read is a system call, and each sample's timing pays it"
        ))
    } else {
        Outcome::warn(format!("{found}: not a clock the vDSO is known to read"))
    };
    if !available.split_whitespace().any(|c| c == "tsc") {
        o = o.fix("boot with clocksource=tsc tsc=reliable where the TSC is stable");
    }
    match &x.measured.clock_read_ns {
        Ok(ns) => o.cost(*ns, "ns", "one CLOCK_MONOTONIC read"),
        Err(_) => o,
    }
}

/// Reads of the clock per round.
const CLOCK_READS: u32 = 20_000;

/// What one `CLOCK_MONOTONIC` read costs, ns: the fastest of 5 rounds of
/// [`CLOCK_READS`] (about 2 ms at vDSO speed).
pub fn clock_read_cost() -> Result<f64, String> {
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..CLOCK_READS {
            std::hint::black_box(crate::sys::clock::monotonic_ns());
        }
        best = best.min(start.elapsed().as_nanos() as f64 / CLOCK_READS as f64);
    }
    best.is_finite()
        .then_some(best)
        .ok_or_else(|| "no clock read timed".into())
}

/// RT throttling: the share of each period SCHED_FIFO tasks may use.
pub const RT_THROTTLING: Definition = Definition {
    id: "rt-throttling",
    title: "real-time throttling",
    needs_root: false,
    fix: "sysctl kernel.sched_rt_runtime_us=950000",
    run: rt_throttling,
};

fn rt_throttling(x: &Inputs) -> Outcome {
    let read = |f: &str| {
        x.root
            .read(&format!("/proc/sys/kernel/{f}"))
            .and_then(|v| v.parse::<i64>().ok())
    };
    let (Some(runtime), Some(period)) = (read("sched_rt_runtime_us"), read("sched_rt_period_us"))
    else {
        return Outcome::skip("no sched_rt_runtime_us / sched_rt_period_us in /proc/sys/kernel");
    };
    if runtime < 0 {
        return Outcome::pass(
            "off (sched_rt_runtime_us -1): SCHED_FIFO figures are never paused, \
             but a runaway SCHED_FIFO task can hold a CPU",
        );
    }
    let share = runtime as f64 / period.max(1) as f64 * 100.0;
    let paused = (100.0 - share).max(0.0);
    let found = format!(
        "SCHED_FIFO may run {} ms of each {} ms",
        runtime / 1000,
        period / 1000
    );
    let o = if runtime == 0 {
        Outcome::fail(format!("{found}: real-time tasks cannot run at all"))
    } else if share < 90.0 {
        Outcome::warn(format!(
            "{found}: a SCHED_FIFO figure that runs flat out is paused {paused:.0}% of the time"
        ))
    } else {
        Outcome::pass(format!(
            "{found} (the default keeps the machine responsive; only a figure that spins \
             under SCHED_FIFO for longer meets the pause)"
        ))
    };
    o.cost(
        paused,
        "%",
        "of each period a spinning SCHED_FIFO task is paused",
    )
}

/// The preemption model and the tick rate.
pub const PREEMPTION: Definition = Definition {
    id: "preemption",
    title: "preemption model and HZ",
    needs_root: true,
    fix: "boot with preempt=full (a PREEMPT_DYNAMIC kernel) or use a PREEMPT_RT kernel",
    run: preemption,
};

fn preemption(x: &Inputs) -> Outcome {
    let Some(version) = x.root.read("/proc/sys/kernel/version") else {
        return Outcome::skip("no /proc/sys/kernel/version");
    };
    let model = preemption_in(x.root, &version);
    let release = x
        .root
        .read("/proc/sys/kernel/osrelease")
        .unwrap_or_default();
    let hz = x
        .root
        .read_raw(&format!("/boot/config-{release}"))
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("CONFIG_HZ=").map(str::to_string))
        })
        .map_or_else(
            || format!("HZ not readable (no /boot/config-{release})"),
            |hz| format!("HZ {hz}"),
        );
    let found = format!("{model}, {hz}");
    if model == "PREEMPT_RT" || model == "PREEMPT" || model.contains("(full)") {
        Outcome::pass(found)
    } else if model == "PREEMPT_DYNAMIC" {
        // The current mode is in debugfs, which only root reads (and which
        // may not be mounted).
        Outcome::info(format!(
            "{found}: its current mode is shown only to root, in debugfs \
             (/sys/kernel/debug/sched/preempt)"
        ))
    } else {
        // Medians are not changed by it; latency tails are.
        Outcome::info(format!(
            "{found}: a waking task may wait for the kernel to reach a preemption point, \
             so p99 and max are longer than under full preemption"
        ))
    }
}

/// Timer slack of this process, which a child inherits.
pub const TIMER_SLACK: Definition = Definition {
    id: "timer-slack",
    title: "timer slack",
    needs_root: false,
    fix: "start ipcmark from a shell or service without raised slack (systemd: TimerSlackNSec=)",
    run: timer_slack,
};

/// The kernel's default slack, ns.
const DEFAULT_SLACK_NS: u64 = 50_000;

fn timer_slack(x: &Inputs) -> Outcome {
    let Some(ns) = x
        .root
        .read("/proc/self/timerslack_ns")
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return Outcome::skip("no /proc/self/timerslack_ns");
    };
    let found = format!("{} µs", ns as f64 / 1000.0);
    if ns <= DEFAULT_SLACK_NS {
        Outcome::pass(format!(
            "{found} (ipcmark's timer figures set 1 ns for themselves; a wake-up by a message \
             is not delayed by slack)"
        ))
    } else {
        // ipcmark's timer figures set their own; other tools run from this
        // shell inherit it.
        Outcome::info(format!(
            "{found}, above the default 50 µs: inherited by every program started from here; \
             ipcmark's timer figures set 1 ns for themselves"
        ))
    }
}

/// Transparent huge pages.
pub const TRANSPARENT_HUGEPAGES: Definition = Definition {
    id: "transparent-hugepages",
    title: "transparent huge pages",
    needs_root: false,
    fix: "echo madvise > /sys/kernel/mm/transparent_hugepage/defrag",
    run: transparent_hugepages,
};

/// The bracketed choice of a sysfs selector ("always [madvise] never").
fn selected(text: &str) -> Option<&str> {
    let open = text.find('[')?;
    let close = text[open..].find(']')? + open;
    Some(&text[open + 1..close])
}

fn transparent_hugepages(x: &Inputs) -> Outcome {
    const DIR: &str = "/sys/kernel/mm/transparent_hugepage";
    let Some(enabled) = x.root.read(&format!("{DIR}/enabled")) else {
        return Outcome::skip("no transparent_hugepage in sysfs (a kernel without THP)");
    };
    let enabled = selected(&enabled).unwrap_or(&enabled).to_string();
    let defrag = x
        .root
        .read(&format!("{DIR}/defrag"))
        .map(|d| selected(&d).unwrap_or(&d).to_string());
    let found = format!(
        "enabled {enabled}, defrag {}",
        defrag.as_deref().unwrap_or("not readable")
    );
    match (enabled.as_str(), defrag.as_deref()) {
        ("always", Some("always")) => Outcome::warn(format!(
            "{found}: a page fault may stall to compact memory, in the middle of a sample"
        )),
        ("always", _) => Outcome::info(format!(
            "{found}: a large buffer may be in huge pages in one run and not the next"
        ))
        .fix(format!("echo madvise > {DIR}/enabled")),
        _ => Outcome::pass(found),
    }
}

/// Speculative-execution mitigations.
pub const MITIGATIONS: Definition = Definition {
    id: "mitigations",
    title: "speculative-execution mitigations",
    needs_root: false,
    fix: "compare runs only under the same mitigations (mitigations=off, on a test machine only, for figures without them)",
    run: mitigations,
};

fn mitigations(x: &Inputs) -> Outcome {
    let all = mitigations_in(x.root);
    if all.is_empty() {
        return Outcome::skip("no /sys/devices/system/cpu/vulnerabilities");
    }
    let mitigated: Vec<&str> = all
        .iter()
        .filter(|(_, s)| s.starts_with("Mitigation"))
        .map(|(n, _)| n.as_str())
        .collect();
    let vulnerable = all.values().filter(|s| s.starts_with("Vulnerable")).count();
    let unaffected = all
        .values()
        .filter(|s| s.starts_with("Not affected"))
        .count();
    let found = format!(
        "{} mitigated{}, {vulnerable} vulnerable, {unaffected} not affected",
        mitigated.len(),
        if mitigated.is_empty() {
            String::new()
        } else {
            format!(" ({})", mitigated.join(", "))
        }
    );
    if mitigated.is_empty() {
        Outcome::pass(found)
    } else {
        // They add to every system call and context switch: part of what
        // the figures measure on this machine, not an error in them.
        Outcome::info(format!(
            "{found}: system calls and context switches include them"
        ))
    }
}

/// The hypervisor, if any.
pub const VIRTUALIZATION: Definition = Definition {
    id: "virtualization",
    title: "virtualization",
    needs_root: false,
    fix: "measure on bare metal for figures without a hypervisor",
    run: virtualization,
};

fn virtualization(x: &Inputs) -> Outcome {
    let Some(cpuinfo) = x.root.read("/proc/cpuinfo") else {
        return Outcome::skip("no /proc/cpuinfo");
    };
    match virtualization_in(x.root, &cpuinfo).as_str() {
        "none" => Outcome::pass("bare metal (no hypervisor flag)"),
        hv => Outcome::info(format!(
            "a {hv} guest: wake-ups, timers and interrupts pass through the hypervisor; \
             the figures hold for this guest"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Status;
    use super::super::fixture::{Tree, outcome};

    #[test]
    fn clocksource_tsc_passes_hpet_fails_unknown_warns() {
        let t = Tree::new();
        assert_eq!(outcome("clocksource", &t).status, Status::Skip);
        let cs = "/sys/devices/system/clocksource/clocksource0";
        t.file(&format!("{cs}/available_clocksource"), "tsc hpet acpi_pm");
        t.file(&format!("{cs}/current_clocksource"), "tsc");
        let o = outcome("clocksource", &t);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.cost.unwrap().value, 20.0, "the measured read's cost");
        t.file(&format!("{cs}/current_clocksource"), "hpet");
        let o = outcome("clocksource", &t);
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert_eq!(o.fix, None, "tsc is available: the default fix");
        t.file(&format!("{cs}/available_clocksource"), "xen");
        t.file(&format!("{cs}/current_clocksource"), "xen");
        let o = outcome("clocksource", &t);
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert!(o.fix.unwrap().contains("clocksource=tsc"));
    }

    #[test]
    fn a_clock_read_has_a_cost() {
        let ns = super::clock_read_cost().unwrap();
        assert!(ns > 0.0 && ns.is_finite());
    }

    fn rt(runtime: &str) -> super::Outcome {
        let t = Tree::new();
        t.file("/proc/sys/kernel/sched_rt_period_us", "1000000");
        t.file("/proc/sys/kernel/sched_rt_runtime_us", runtime);
        outcome("rt-throttling", &t)
    }

    #[test]
    fn rt_throttling_default_passes_tight_warns_zero_fails() {
        let o = rt("950000");
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!((o.cost.unwrap().value - 5.0).abs() < 1e-9);
        assert_eq!(rt("-1").status, Status::Pass);
        assert_eq!(rt("500000").status, Status::Warn);
        assert_eq!(rt("0").status, Status::Fail);
        assert_eq!(outcome("rt-throttling", &Tree::new()).status, Status::Skip);
    }

    #[test]
    fn preemption_full_passes_voluntary_is_information() {
        let t = Tree::new();
        assert_eq!(outcome("preemption", &t).status, Status::Skip);
        t.file("/proc/sys/kernel/osrelease", "6.1.0-test");
        t.file(
            "/boot/config-6.1.0-test",
            "CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_HZ=250",
        );
        t.file("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian");
        let o = outcome("preemption", &t);
        assert_eq!(o.status, Status::Info, "{o:?}");
        assert!(
            o.found.contains("HZ 250") && o.found.contains("root"),
            "{o:?}"
        );
        t.file(
            "/sys/kernel/debug/sched/preempt",
            "none voluntary (full) lazy",
        );
        let o = outcome("preemption", &t);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        t.file("/sys/kernel/debug/sched/preempt", "none (voluntary) full");
        assert_eq!(outcome("preemption", &t).status, Status::Info);
        t.file("/proc/sys/kernel/version", "#1 SMP PREEMPT_RT");
        assert_eq!(outcome("preemption", &t).status, Status::Pass);
        t.file("/proc/sys/kernel/version", "#1 SMP");
        let o = outcome("preemption", &t);
        assert_eq!(o.status, Status::Info, "{o:?}");
        assert!(o.found.contains("none or voluntary"), "{o:?}");
    }

    #[test]
    fn timer_slack_default_passes_raised_is_information() {
        let t = Tree::new();
        assert_eq!(outcome("timer-slack", &t).status, Status::Skip);
        t.file("/proc/self/timerslack_ns", "50000");
        assert_eq!(outcome("timer-slack", &t).status, Status::Pass);
        t.file("/proc/self/timerslack_ns", "1000000");
        let o = outcome("timer-slack", &t);
        assert_eq!(o.status, Status::Info, "{o:?}");
        assert!(o.found.starts_with("1000 µs"), "{o:?}");
    }

    #[test]
    fn huge_pages_that_stall_faults_warn() {
        let t = Tree::new();
        let dir = "/sys/kernel/mm/transparent_hugepage";
        assert_eq!(outcome("transparent-hugepages", &t).status, Status::Skip);
        t.file(&format!("{dir}/enabled"), "always [madvise] never");
        t.file(
            &format!("{dir}/defrag"),
            "always defer defer+madvise [madvise] never",
        );
        assert_eq!(outcome("transparent-hugepages", &t).status, Status::Pass);
        t.file(&format!("{dir}/enabled"), "[always] madvise never");
        assert_eq!(outcome("transparent-hugepages", &t).status, Status::Info);
        t.file(
            &format!("{dir}/defrag"),
            "[always] defer defer+madvise madvise never",
        );
        let o = outcome("transparent-hugepages", &t);
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert!(o.found.contains("enabled always, defrag always"), "{o:?}");
    }

    #[test]
    fn mitigations_are_information_never_a_warning() {
        let t = Tree::new();
        let dir = "/sys/devices/system/cpu/vulnerabilities";
        assert_eq!(outcome("mitigations", &t).status, Status::Skip);
        t.file(&format!("{dir}/meltdown"), "Not affected");
        assert_eq!(outcome("mitigations", &t).status, Status::Pass);
        t.file(&format!("{dir}/spectre_v2"), "Mitigation: Retpolines");
        t.file(&format!("{dir}/spec_store_bypass"), "Vulnerable");
        let o = outcome("mitigations", &t);
        assert_eq!(o.status, Status::Info, "{o:?}");
        assert!(
            o.found
                .starts_with("1 mitigated (spectre_v2), 1 vulnerable, 1 not affected"),
            "{o:?}"
        );
    }

    #[test]
    fn a_guest_is_information_bare_metal_passes() {
        let t = Tree::new();
        assert_eq!(outcome("virtualization", &t).status, Status::Skip);
        t.file("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu sse2");
        assert_eq!(outcome("virtualization", &t).status, Status::Pass);
        t.file(
            "/proc/cpuinfo",
            "processor\t: 0\nflags\t\t: fpu sse2 hypervisor",
        );
        t.file(
            "/sys/devices/system/clocksource/clocksource0/available_clocksource",
            "kvm-clock tsc",
        );
        let o = outcome("virtualization", &t);
        assert_eq!(o.status, Status::Info, "{o:?}");
        assert!(o.found.starts_with("a kvm guest"), "{o:?}");
    }
}
