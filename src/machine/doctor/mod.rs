//! The checks of `ipcmark doctor`: whether this machine is fit to measure
//! on, each condition read from its `/proc` and `/sys` (through
//! [`SysRoot`], so that every outcome is tested against fixture trees),
//! with what it costs here where that is cheap to measure, and the one-line
//! fix (after pyperf's `system show`).
//!
//! A check is one [`Definition`] of [`CHECKS`]: its id, title, whether it
//! needs root and its fix are data; its `run` reads [`Inputs`] — the root,
//! the measured CPUs, two [`Sample`]s of the kernel's counters taken
//! [`WINDOW`] apart (so that a rate is a difference a test can give), and
//! what [`Measured`] found — and says what it found. The groups: `cpu.rs`
//! (frequency, SMT, isolation), `interrupts.rs` (device interrupts and
//! steal), `kernel.rs` (clock, scheduler and memory settings, the
//! hypervisor), `pressure.rs` (quotas, pressure, other load, swap) and
//! `latency.rs` (CPU wake-ups and idle states).
//!
//! No check warns, on an idle machine, of a condition its user cannot
//! change: a hypervisor, the preemption model or the mitigations are
//! [`Status::Info`], facts that say what the figures mean rather than
//! whether to trust them.

mod cpu;
#[cfg(test)]
mod fixture;
mod interrupts;
mod kernel;
mod latency;
mod placement;
mod pressure;

use super::sysroot::SysRoot;
use super::wakeup::{self, WakeupCost};
use std::time::Duration;

/// How long apart the two samples of the kernel's counters are taken: long
/// enough that a CPU's ticks (`USER_HZ`, 100 a second) give percentages to
/// about 1%, short enough for a command a user waits for.
pub const WINDOW: Duration = Duration::from_secs(1);

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Fit to measure on, as far as this check sees.
    Pass,
    /// A fact that decides what the figures mean (a hypervisor, the
    /// mitigations), which the user often cannot change: said, never a
    /// warning, so that the warnings of an idle machine are the ones that
    /// matter.
    Info,
    /// Figures may move by about their interval or more: fix it, or say it
    /// beside the figures.
    Warn,
    /// Figures measured now would not describe this machine.
    Fail,
    /// The machine does not expose what the check reads (or only to root):
    /// nothing found, and why.
    Skip,
}

/// What a condition costs here, as measured (or, for idle states, as the
/// kernel declares it).
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    /// The figure.
    pub value: f64,
    /// Its unit ("ns", "us", "%").
    pub unit: &'static str,
    /// What it is, in words.
    pub what: String,
}

/// What one check found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The verdict.
    pub status: Status,
    /// What was read (values and where), in words.
    pub found: String,
    /// What the condition costs here, where measured.
    pub cost: Option<Cost>,
    /// A fix fitting what was found, in place of the definition's.
    pub fix: Option<String>,
}

impl Outcome {
    fn new(status: Status, found: impl Into<String>) -> Outcome {
        Outcome {
            status,
            found: found.into(),
            cost: None,
            fix: None,
        }
    }
    fn pass(found: impl Into<String>) -> Outcome {
        Outcome::new(Status::Pass, found)
    }
    fn info(found: impl Into<String>) -> Outcome {
        Outcome::new(Status::Info, found)
    }
    fn warn(found: impl Into<String>) -> Outcome {
        Outcome::new(Status::Warn, found)
    }
    fn fail(found: impl Into<String>) -> Outcome {
        Outcome::new(Status::Fail, found)
    }
    fn skip(why: impl Into<String>) -> Outcome {
        Outcome::new(Status::Skip, why)
    }
    fn cost(mut self, value: f64, unit: &'static str, what: impl Into<String>) -> Outcome {
        self.cost = Some(Cost {
            value,
            unit,
            what: what.into(),
        });
        self
    }
    fn fix(mut self, fix: impl Into<String>) -> Outcome {
        self.fix = Some(fix.into());
        self
    }
    /// PASS below `warn`, WARN below `fail`, else FAIL.
    fn graded(value: f64, warn: f64, fail: f64, found: impl Into<String>) -> Outcome {
        let status = if value >= fail {
            Status::Fail
        } else if value >= warn {
            Status::Warn
        } else {
            Status::Pass
        };
        Outcome::new(status, found)
    }
}

/// One check: what it is, and how it reads the machine.
pub struct Definition {
    /// Kebab-case, unique.
    pub id: &'static str,
    /// What it checks, in a few words.
    pub title: &'static str,
    /// Whether some of what it reads or tries is open to root only (it
    /// then says, as another user, what it could not see).
    pub needs_root: bool,
    /// The one-line fix, when it does not pass.
    pub fix: &'static str,
    /// Reads the inputs.
    pub run: fn(&Inputs) -> Outcome,
}

/// Every check, in the order `ipcmark doctor` lists them.
pub const CHECKS: &[Definition] = &[
    cpu::GOVERNOR,
    cpu::BOOST,
    cpu::FREQUENCY_STABILITY,
    cpu::SMT_SIBLINGS,
    cpu::ISOLATION,
    interrupts::DEVICE_IRQS,
    interrupts::SOFTIRQS,
    interrupts::STEAL,
    kernel::CLOCKSOURCE,
    kernel::RT_THROTTLING,
    kernel::PREEMPTION,
    kernel::TIMER_SLACK,
    kernel::TRANSPARENT_HUGEPAGES,
    kernel::MITIGATIONS,
    kernel::VIRTUALIZATION,
    pressure::CGROUP_CPU_QUOTA,
    pressure::CPU_PRESSURE,
    pressure::MEMORY_PRESSURE,
    pressure::SWAP_ACTIVITY,
    pressure::RUN_QUEUE,
    pressure::BUSY_CPUS,
    latency::WAKEUP_LATENCY,
    latency::IDLE_STATES,
    placement::PLACEMENT,
];

/// A check's result: its definition's data with what it found.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// Its id.
    pub id: &'static str,
    /// Its title.
    pub title: &'static str,
    /// The verdict.
    pub status: Status,
    /// What it found.
    pub found: String,
    /// What the condition costs here, where measured.
    pub cost: Option<Cost>,
    /// Whether it needs root to see all it reads.
    pub needs_root: bool,
    /// The one-line fix.
    pub fix: String,
}

/// The kernel's counters at one moment: the files the checks that need a
/// rate read twice, [`WINDOW`] apart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    /// When it was read, ns on any one clock (only differences count).
    pub at_ns: u64,
    /// `/proc/stat`.
    pub stat: String,
    /// `/proc/interrupts`.
    pub interrupts: String,
    /// `/proc/softirqs`.
    pub softirqs: String,
    /// `/proc/vmstat`.
    pub vmstat: String,
    /// `cpu.stat` of this process's cgroup (its throttled periods), if found.
    pub cgroup_cpu_stat: Option<String>,
}

impl Sample {
    /// Reads the counters under `root`, stamped `at_ns`.
    pub fn read(root: &SysRoot, at_ns: u64) -> Sample {
        let read = |p: &str| root.read_raw(p).unwrap_or_default();
        Sample {
            at_ns,
            stat: read("/proc/stat"),
            interrupts: read("/proc/interrupts"),
            softirqs: read("/proc/softirqs"),
            vmstat: read("/proc/vmstat"),
            cgroup_cpu_stat: pressure::cgroup(root)
                .and_then(|g| root.read_raw(&format!("{}/cpu.stat", g.dir))),
        }
    }

    /// Reads the counters under `root`, stamped now (the monotonic clock).
    pub fn read_now(root: &SysRoot) -> Sample {
        Sample::read(root, crate::sys::clock::monotonic_ns())
    }

    /// Seconds from `before` to this sample (at least 1 ns).
    fn seconds_since(&self, before: &Sample) -> f64 {
        self.at_ns.saturating_sub(before.at_ns).max(1) as f64 / 1e9
    }
}

/// What the checks measure rather than read: each a result or why it was
/// not measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// A calibrated loop's speed on the first measured CPU, iterations per
    /// µs, at the start and the end of the window.
    pub loop_rate: [Result<f64, String>; 2],
    /// What reading `CLOCK_MONOTONIC` costs, ns.
    pub clock_read_ns: Result<f64, String>,
    /// What a wake-up between the first two measured CPUs costs when no
    /// CPU wake-up latency limit is held.
    pub wakeup: Result<WakeupCost, String>,
    /// Whether this process may hold a CPU wake-up latency limit (as `run`
    /// does), or why not.
    pub latency_hold: Result<(), String>,
    /// A cache line's round trip between the first two measured CPUs (the
    /// placement probe), or why it was not measured.
    pub placement: Result<PlacementFound, String>,
}

/// The placement probe's figures, as the check reads them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlacementFound {
    /// The two CPUs.
    pub cpus: [usize; 2],
    /// The median block's round trip, ns.
    pub median_ns: f64,
    /// The 10th percentile of the blocks, ns.
    pub p10_ns: f64,
    /// The 90th percentile of the blocks, ns.
    pub p90_ns: f64,
}

/// What every check reads.
pub struct Inputs<'a> {
    /// Where the machine's files are.
    pub root: &'a SysRoot,
    /// The CPUs a run would measure on (client, server).
    pub cpus: &'a [usize],
    /// The counters at the start of the window.
    pub before: &'a Sample,
    /// The counters at its end.
    pub after: &'a Sample,
    /// What was measured.
    pub measured: &'a Measured,
}

/// Runs every check on `inputs`.
pub fn run_checks(inputs: &Inputs) -> Vec<Check> {
    CHECKS.iter().map(|d| run_one(d, inputs)).collect()
}

/// Check `d` on `inputs`: its data with what it found.
fn run_one(d: &Definition, inputs: &Inputs) -> Check {
    let o = (d.run)(inputs);
    Check {
        id: d.id,
        title: d.title,
        status: o.status,
        found: o.found,
        cost: o.cost,
        needs_root: d.needs_root,
        fix: o.fix.unwrap_or_else(|| d.fix.to_string()),
    }
}

/// Examines this machine for a run on `cpus` (at least one): the first
/// loop speed and the counters, [`WINDOW`] of sleep, the counters and the
/// loop speed again, then a wake-up, the clock's cost and the latency
/// request. Takes about [`WINDOW`] plus a few tens of ms (at most a second
/// more, the wake-up probe's deadline, on a starved machine).
pub fn examine(root: &SysRoot, cpus: &[usize]) -> Vec<Check> {
    let first = cpus.first().copied().unwrap_or(0);
    let now = crate::sys::clock::monotonic_ns;
    let rate_before = cpu::loop_rate(first);
    let before = Sample::read(root, now());
    std::thread::sleep(WINDOW);
    let after = Sample::read(root, now());
    let rate_after = cpu::loop_rate(first);
    let measured = Measured {
        loop_rate: [rate_before, rate_after],
        clock_read_ns: kernel::clock_read_cost(),
        wakeup: match cpus {
            [a, b, ..] => wakeup::measure([*a, *b]),
            _ => Err("one CPU measured: no wake-up crosses CPUs".into()),
        },
        latency_hold: latency::try_hold(root),
        placement: match cpus {
            [a, b, ..] if a != b => {
                crate::engine::run::placement_probe::probe(*a, *b).map(|p| PlacementFound {
                    cpus: [*a, *b],
                    median_ns: p.median_ns,
                    p10_ns: p.p10_ns,
                    p90_ns: p.p90_ns,
                })
            }
            _ => Err("one CPU measured: no cache line moves between CPUs".into()),
        },
    };
    run_checks(&Inputs {
        root,
        cpus,
        before: &before,
        after: &after,
        measured: &measured,
    })
}

/// The checks a run carries in its record: those that read the machine
/// once, with no window to wait for and nothing measured but a clock read
/// (a few ms in all); the rest need `ipcmark doctor`'s second of sampling.
pub const AT_RUN_START: &[&str] = &[
    "cpu-governor",
    "cpu-boost",
    "cpu-isolation",
    "clocksource",
    "rt-throttling",
    "preemption",
    "timer-slack",
    "transparent-hugepages",
    "mitigations",
    "virtualization",
    "cgroup-cpu-quota",
    "cpu-pressure",
    "memory-pressure",
    "cpu-wakeup-latency",
    "idle-states",
];

/// The checks of [`AT_RUN_START`] for a run on `cpus` whose CPU wake-up
/// latency request came to `latency` (held, or not and why, with the
/// wake-up the run measured then): no second sample, no loop, no probe of
/// its own.
pub fn examine_at_run_start(
    root: &SysRoot,
    cpus: &[usize],
    latency: &super::cpu_latency::CpuLatencyState,
) -> Vec<Check> {
    let sample = Sample::read_now(root);
    let not_measured = || Err("not measured at a run's start".to_string());
    let measured = Measured {
        loop_rate: [not_measured(), not_measured()],
        clock_read_ns: kernel::clock_read_cost(),
        wakeup: latency.wakeup.clone(),
        latency_hold: match (&latency.held_us(), &latency.not_held) {
            (Some(_), _) => Ok(()),
            (None, Some(why)) => Err(why.reason().to_string()),
            (None, None) => Err("not asked".into()),
        },
        placement: Err("not measured at a run's start (the run's placement_probe is)".into()),
    };
    run_checks(&Inputs {
        root,
        cpus,
        before: &sample,
        after: &sample,
        measured: &measured,
    })
    .into_iter()
    .filter(|c| AT_RUN_START.contains(&c.id))
    .collect()
}

/// The checks of what can change while a run measures, taken over each
/// pass: time stolen by the hypervisor, a quota's throttled periods, CPU
/// and memory pressure, swapping. Not the run queue nor busy CPUs: during
/// a pass the run itself is the load they would see.
pub const PER_PASS: &[&str] = &[
    "steal-time",
    "cgroup-cpu-quota",
    "cpu-pressure",
    "memory-pressure",
    "swap-activity",
];

/// The checks of [`PER_PASS`] over a pass on `cpus`, from the counters at
/// its start (`before`) to those at its end (`after`): nothing measured,
/// nothing waited for.
pub fn examine_pass(root: &SysRoot, cpus: &[usize], before: &Sample, after: &Sample) -> Vec<Check> {
    let why = "not measured over a pass";
    let measured = Measured {
        loop_rate: [Err(why.into()), Err(why.into())],
        clock_read_ns: Err(why.into()),
        wakeup: Err(why.into()),
        latency_hold: Err(why.into()),
        placement: Err(why.into()),
    };
    let inputs = Inputs {
        root,
        cpus,
        before,
        after,
        measured: &measured,
    };
    CHECKS
        .iter()
        .filter(|d| PER_PASS.contains(&d.id))
        .map(|d| run_one(d, &inputs))
        .collect()
}

/// `cpus` as the kernel writes a list ("0,1").
fn cpu_names(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// A percentage for the found text: one decimal below 10, none above.
fn percent(p: f64) -> String {
    if p < 10.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checks_have_unique_kebab_case_ids_and_a_fix_each() {
        assert!(CHECKS.len() >= 15, "{}", CHECKS.len());
        let mut ids: Vec<&str> = CHECKS.iter().map(|d| d.id).collect();
        for d in CHECKS {
            assert!(
                d.id.split('-')
                    .all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase())),
                "{}",
                d.id
            );
            assert!(!d.title.is_empty() && !d.fix.is_empty(), "{}", d.id);
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), CHECKS.len(), "an id is used twice");
    }

    #[test]
    fn every_check_gives_a_well_formed_result_on_this_machine() {
        let cpus = crate::sys::sched::allowed_cpus().unwrap();
        let cpus = &cpus[..cpus.len().min(2)];
        let checks = examine(&SysRoot::host(), cpus);
        assert_eq!(checks.len(), CHECKS.len());
        for c in &checks {
            assert!(!c.found.is_empty(), "{c:?}");
            assert!(!c.fix.is_empty(), "{c:?}");
            assert!(!c.found.contains('\n') && !c.fix.contains('\n'), "{c:?}");
            if let Some(cost) = &c.cost {
                assert!(cost.value.is_finite() && cost.value >= 0.0, "{c:?}");
                assert!(!cost.unit.is_empty() && !cost.what.is_empty(), "{c:?}");
            }
        }
    }

    #[test]
    fn a_runs_checks_are_doctor_checks_that_need_no_window() {
        for id in AT_RUN_START {
            assert!(CHECKS.iter().any(|d| d.id == *id), "{id}");
        }
        // Checks of rates over the window are not among them.
        for id in [
            "steal-time",
            "busy-cpus",
            "frequency-stability",
            "device-irqs",
        ] {
            assert!(!AT_RUN_START.contains(&id), "{id}");
        }
        use crate::machine::cpu_latency::{CpuLatencyState, NotHeld};
        let state = CpuLatencyState {
            requested_us: None,
            not_held: Some(NotHeld::NotAsked("--cpu-latency off".into())),
            wakeup: Err("not measured in a test".into()),
        };
        let cpus = crate::sys::sched::allowed_cpus().unwrap();
        let checks = examine_at_run_start(&SysRoot::host(), &cpus[..cpus.len().min(2)], &state);
        assert_eq!(checks.len(), AT_RUN_START.len());
        let wakeup = checks
            .iter()
            .find(|c| c.id == "cpu-wakeup-latency")
            .unwrap();
        assert!(wakeup.found.contains("--cpu-latency off"), "{wakeup:?}");
    }

    #[test]
    fn a_pass_is_checked_over_its_own_window() {
        let t = fixture::Tree::new();
        t.file(
            "/proc/stat",
            "cpu  0 0 0 0 0 0 0 0\ncpu0 0 0 0 100 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0",
        );
        let before = t.sample(0.0);
        // 3 s later, a quarter of CPU 0's time was stolen.
        t.file(
            "/proc/stat",
            "cpu  0 0 0 0 0 0 0 0\ncpu0 0 0 0 250 0 0 0 50\ncpu1 0 0 0 400 0 0 0 0",
        );
        let after = t.sample(3.0);
        let checks = examine_pass(&t.root(), &[0, 1], &before, &after);
        let ids: Vec<&str> = checks.iter().map(|c| c.id).collect();
        assert_eq!(ids.len(), PER_PASS.len());
        assert!(ids.iter().all(|id| PER_PASS.contains(id)), "{ids:?}");
        let steal = checks.iter().find(|c| c.id == "steal-time").unwrap();
        assert_eq!(steal.status, Status::Fail, "{steal:?}");
        assert!(steal.found.contains("of 3.0 s"), "{steal:?}");
        // The same counters with nothing stolen pass.
        let calm = examine_pass(&t.root(), &[0, 1], &after, &after);
        let steal = calm.iter().find(|c| c.id == "steal-time").unwrap();
        assert_eq!(steal.status, Status::Pass, "{steal:?}");
    }

    #[test]
    fn an_empty_machine_skips_rather_than_guesses() {
        // A root with nothing in it: every check that reads a file says it
        // could not, none passes or warns on what it did not see.
        let empty = tempfile::tempdir().unwrap();
        let root = SysRoot::at(empty.path());
        let sample = Sample::read(&root, 0);
        let measured = fixture::measured();
        let checks = run_checks(&Inputs {
            root: &root,
            cpus: &[0, 1],
            before: &sample,
            after: &sample,
            measured: &measured,
        });
        // What is measured rather than read still has its verdict.
        let measured_ids = ["frequency-stability", "cpu-wakeup-latency"];
        for c in checks.iter().filter(|c| !measured_ids.contains(&c.id)) {
            assert_eq!(c.status, Status::Skip, "{c:?}");
        }
    }
}
