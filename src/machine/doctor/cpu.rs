//! The measured CPUs themselves: their frequency governor and boost, the
//! speed they reach at two moments, their SMT siblings' load, and whether
//! they are isolated from the scheduler, the tick and RCU callbacks.

use super::{Definition, Inputs, Outcome, cpu_names, percent};
use crate::engine::os::load::account::parse_cpu_times;
use crate::machine::environment::parse_cpu_list;
use std::time::Instant;

/// Per-CPU frequency governor.
pub const GOVERNOR: Definition = Definition {
    id: "cpu-governor",
    title: "CPU frequency governor",
    needs_root: false,
    fix: "cpupower frequency-set -g performance",
    run: governor,
};

fn governor(x: &Inputs) -> Outcome {
    let mut found = Vec::new();
    let mut slow = Vec::new();
    for &cpu in x.cpus {
        let Some(g) = x.root.read(&format!(
            "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
        )) else {
            return Outcome::skip(format!(
                "no cpufreq for CPU {cpu}: the kernel does not scale its frequency \
                 (typical of a VM; the host's governor is not visible)"
            ));
        };
        if g != "performance" {
            slow.push(cpu);
        }
        found.push(format!("CPU {cpu} {g}"));
    }
    let found = found.join(", ");
    if slow.is_empty() {
        Outcome::pass(found)
    } else {
        // Any other governor lowers the clock of a CPU that blocks between
        // messages, so a blocking mechanism is timed at a lower clock than
        // a spinning one.
        Outcome::warn(format!(
            "{found}: the clock follows the load, so idle-heavy figures run slower"
        ))
    }
}

/// Turbo / boost.
pub const BOOST: Definition = Definition {
    id: "cpu-boost",
    title: "CPU boost (turbo)",
    needs_root: false,
    fix: "echo 0 > /sys/devices/system/cpu/cpufreq/boost",
    run: boost,
};

fn boost(x: &Inputs) -> Outcome {
    const BOOST: &str = "/sys/devices/system/cpu/cpufreq/boost";
    const NO_TURBO: &str = "/sys/devices/system/cpu/intel_pstate/no_turbo";
    let (on, file) = match (x.root.read(BOOST), x.root.read(NO_TURBO)) {
        (Some(b), _) => (b != "0", BOOST),
        (None, Some(n)) => (n == "0", NO_TURBO),
        (None, None) => {
            return Outcome::skip(
                "neither cpufreq/boost nor intel_pstate/no_turbo: boost is not \
                 controlled by this kernel (typical of a VM)",
            );
        }
    };
    let fix = if file == NO_TURBO {
        format!("echo 1 > {NO_TURBO}")
    } else {
        format!("echo 0 > {BOOST}")
    };
    if on {
        Outcome::warn(format!(
            "on ({file}): the clock depends on temperature and on how many cores are busy"
        ))
        .fix(fix)
    } else {
        Outcome::pass(format!("off ({file})")).fix(fix)
    }
}

/// The speed a calibrated loop reaches at the window's start and end.
pub const FREQUENCY_STABILITY: Definition = Definition {
    id: "frequency-stability",
    title: "achieved frequency stability",
    needs_root: false,
    fix: "cpupower frequency-set -g performance; keep the machine otherwise idle",
    run: frequency_stability,
};

/// A change in speed up to this (%) passes: the best of several short
/// rounds still moves by about 1% on a quiet machine.
const STABLE_PERCENT: f64 = 3.0;
/// Beyond this (%) the figures of one run describe two machines.
const UNSTABLE_PERCENT: f64 = 10.0;

fn frequency_stability(x: &Inputs) -> Outcome {
    let cpu = x.cpus.first().copied().unwrap_or(0);
    let [a, b] = &x.measured.loop_rate;
    let (a, b) = match (a, b) {
        (Ok(a), Ok(b)) if *a > 0.0 && *b > 0.0 => (*a, *b),
        (Err(e), _) | (_, Err(e)) => return Outcome::skip(format!("not measured: {e}")),
        _ => return Outcome::skip("not measured: the loop did not run"),
    };
    let change = (b - a).abs() / a.max(b) * 100.0;
    Outcome::graded(
        change,
        STABLE_PERCENT,
        UNSTABLE_PERCENT,
        format!(
            "CPU {cpu}: {a:.0} then {b:.0} loop iterations per µs, {} apart: {} change",
            humantime(super::WINDOW),
            percent(change)
        ),
    )
    .cost(change, "%", "change in speed between the two moments")
}

fn humantime(d: std::time::Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// Iterations of the calibrated loop per round: about 250 µs at 100
/// iterations per µs, shorter than the scheduler's slice, so that on a
/// busy CPU some rounds still run whole.
const LOOP_ROUND: u64 = 25_000;
/// Rounds at most per moment (about 10 ms).
const LOOP_ROUNDS: usize = 40;
/// Rounds that ran whole that a moment needs.
const WHOLE_ROUNDS: usize = 3;

/// The speed of a dependent multiply-add chain on `cpu`, iterations per
/// µs against `CLOCK_MONOTONIC`: the fastest round of those the thread ran
/// whole (its own CPU time within 2% of the wall time: a round in which
/// another task ran is the load's, which `busy-cpus` reports, not the
/// CPU's speed). Runs on a thread of its own pinned to `cpu`, so the
/// caller's placement is untouched; fails when fewer than [`WHOLE_ROUNDS`]
/// of [`LOOP_ROUNDS`] ran whole.
pub fn loop_rate(cpu: usize) -> Result<f64, String> {
    use crate::sys::clock::thread_cputime_ns;
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("ipcmark-loop".into())
            .spawn_scoped(s, || {
                crate::sys::sched::pin_to_cpu(cpu)
                    .map_err(|e| format!("cannot pin to CPU {cpu}: {e}"))?;
                let cpu_ns = || thread_cputime_ns().map_err(|e| format!("thread CPU clock: {e}"));
                let mut rates = Vec::new();
                let mut x = 1u64;
                for _ in 0..LOOP_ROUNDS {
                    let (start, ran0) = (Instant::now(), cpu_ns()?);
                    for _ in 0..LOOP_ROUND {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                    let wall = start.elapsed().as_nanos().max(1) as f64;
                    let ran = cpu_ns()?.saturating_sub(ran0) as f64;
                    if ran >= 0.98 * wall {
                        rates.push(LOOP_ROUND as f64 / wall * 1000.0);
                    }
                }
                if rates.len() < WHOLE_ROUNDS {
                    return Err(format!(
                        "CPU {cpu} was taken by other tasks in {} of {LOOP_ROUNDS} rounds",
                        LOOP_ROUNDS - rates.len()
                    ));
                }
                Ok(rates.into_iter().fold(0.0, f64::max))
            })
            .map_err(|e| format!("cannot start a thread: {e}"))?
            .join()
            .map_err(|_| "the loop's thread panicked".to_string())?
    })
}

/// The SMT siblings of the measured CPUs, and their load.
pub const SMT_SIBLINGS: Definition = Definition {
    id: "smt-siblings",
    title: "SMT siblings of the measured CPUs",
    needs_root: false,
    fix: "measure on cores whose sibling is idle, or: echo off > /sys/devices/system/cpu/smt/control",
    run: smt_siblings,
};

/// A sibling busier than this (%) shares the core's pipeline noticeably.
const SIBLING_WARN: f64 = 10.0;
/// Busier than this (%), the core is as much the sibling's as the figure's.
const SIBLING_FAIL: f64 = 50.0;

fn smt_siblings(x: &Inputs) -> Outcome {
    let mut siblings = Vec::new();
    let mut paired = Vec::new();
    for &cpu in x.cpus {
        let Some(list) = x.root.read(&format!(
            "/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
        )) else {
            return Outcome::skip(format!("no topology for CPU {cpu}"));
        };
        for s in parse_cpu_list(&list) {
            if s == cpu {
                continue;
            }
            if x.cpus.contains(&s) {
                paired.push((cpu, s));
            } else if !siblings.contains(&s) {
                siblings.push(s);
            }
        }
    }
    let pairs = match paired.as_slice() {
        [] => String::new(),
        [(a, b), ..] => format!(" (CPUs {a} and {b}, both measured, share one core)"),
    };
    if siblings.is_empty() {
        let smt = x
            .root
            .read("/sys/devices/system/cpu/smt/control")
            .unwrap_or_else(|| "not reported".into());
        return Outcome::pass(format!(
            "no sibling outside the measured CPUs (SMT {smt}){pairs}"
        ));
    }
    let (_, before) = parse_cpu_times(&x.before.stat);
    let (_, after) = parse_cpu_times(&x.after.stat);
    let mut busiest = 0.0f64;
    let mut found = Vec::new();
    for s in &siblings {
        let (Some(b), Some(a)) = (before.get(s), after.get(s)) else {
            return Outcome::skip(format!("no /proc/stat line for sibling CPU {s}"));
        };
        let d = a.since(b);
        let busy = d.ran() as f64 / d.total().max(1) as f64 * 100.0;
        busiest = busiest.max(busy);
        found.push(format!("CPU {s} {} busy", percent(busy)));
    }
    Outcome::graded(
        busiest,
        SIBLING_WARN,
        SIBLING_FAIL,
        format!("siblings {}{pairs}", found.join(", ")),
    )
}

/// isolcpus, nohz_full and rcu_nocbs.
pub const ISOLATION: Definition = Definition {
    id: "cpu-isolation",
    title: "isolated CPUs (isolcpus, nohz_full, rcu_nocbs)",
    needs_root: false,
    fix: "boot with isolcpus=LIST nohz_full=LIST rcu_nocbs=LIST and measure there (--cpus LIST)",
    run: isolation,
};

fn isolation(x: &Inputs) -> Outcome {
    let Some(cmdline) = x.root.read("/proc/cmdline") else {
        return Outcome::skip("no /proc/cmdline");
    };
    let list = |p: &str| {
        x.root
            .read(p)
            .filter(|s| s != "(null)")
            .map(|s| parse_cpu_list(&s))
            .unwrap_or_default()
    };
    let isolated = list("/sys/devices/system/cpu/isolated");
    let nohz = list("/sys/devices/system/cpu/nohz_full");
    let rcu: Vec<usize> = cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix("rcu_nocbs="))
        .map(parse_cpu_list)
        .unwrap_or_default();
    let covered = |set: &[usize]| x.cpus.iter().all(|c| set.contains(c));
    let name = |set: &[usize]| {
        if set.is_empty() {
            "none".to_string()
        } else {
            cpu_names(set)
        }
    };
    let found = format!(
        "isolcpus {}, nohz_full {}, rcu_nocbs {}; measured CPUs {}",
        name(&isolated),
        name(&nohz),
        name(&rcu),
        cpu_names(x.cpus)
    );
    if isolated.is_empty() && nohz.is_empty() && rcu.is_empty() {
        // The usual machine: other tasks and the tick may run on the
        // measured CPUs, which the load checks see when they do.
        Outcome::info(format!("{found}: no CPU is isolated"))
    } else if covered(&isolated) {
        Outcome::pass(found)
    } else {
        let fix = if isolated.len() >= x.cpus.len() {
            format!(
                "measure on the isolated CPUs: --cpus {}",
                cpu_names(&isolated[..x.cpus.len().min(isolated.len())])
            )
        } else {
            ISOLATION.fix.to_string()
        };
        Outcome::warn(format!(
            "{found}: CPUs were isolated for measuring, but not the measured ones"
        ))
        .fix(fix)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Tree, measured, outcome, outcome_with};
    use super::super::{Measured, Status};

    fn cpufreq(t: &Tree, governors: [&str; 2]) {
        for (cpu, g) in governors.iter().enumerate() {
            t.file(
                &format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"),
                g,
            );
        }
    }

    #[test]
    fn governor_performance_passes_others_warn_none_skips() {
        let t = Tree::new();
        assert_eq!(outcome("cpu-governor", &t).status, Status::Skip);
        cpufreq(&t, ["performance", "performance"]);
        assert_eq!(outcome("cpu-governor", &t).status, Status::Pass);
        cpufreq(&t, ["performance", "powersave"]);
        let o = outcome("cpu-governor", &t);
        assert_eq!(o.status, Status::Warn);
        assert!(o.found.contains("CPU 1 powersave"), "{o:?}");
    }

    #[test]
    fn boost_on_warns_off_passes_from_either_file() {
        let t = Tree::new();
        assert_eq!(outcome("cpu-boost", &t).status, Status::Skip);
        t.file("/sys/devices/system/cpu/intel_pstate/no_turbo", "0");
        let o = outcome("cpu-boost", &t);
        assert_eq!(o.status, Status::Warn);
        assert!(o.fix.unwrap().contains("no_turbo"));
        t.file("/sys/devices/system/cpu/intel_pstate/no_turbo", "1");
        assert_eq!(outcome("cpu-boost", &t).status, Status::Pass);
        t.file("/sys/devices/system/cpu/cpufreq/boost", "1");
        assert_eq!(outcome("cpu-boost", &t).status, Status::Warn);
        t.file("/sys/devices/system/cpu/cpufreq/boost", "0");
        assert_eq!(outcome("cpu-boost", &t).status, Status::Pass);
    }

    #[test]
    fn frequency_stability_grades_the_change_between_two_moments() {
        let t = Tree::new();
        let s = t.sample(0.0);
        let with = |a: f64, b: f64| Measured {
            loop_rate: [Ok(a), Ok(b)],
            ..measured()
        };
        let o = outcome_with("frequency-stability", &t, &s, &s, &with(1000.0, 990.0));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.cost.unwrap().value, 1.0);
        let o = outcome_with("frequency-stability", &t, &s, &s, &with(1000.0, 950.0));
        assert_eq!(o.status, Status::Warn, "{o:?}");
        let o = outcome_with("frequency-stability", &t, &s, &s, &with(600.0, 1000.0));
        assert_eq!(o.status, Status::Fail, "{o:?}");
        let failed = Measured {
            loop_rate: [Ok(1.0), Err("cannot pin".into())],
            ..measured()
        };
        let o = outcome_with("frequency-stability", &t, &s, &s, &failed);
        assert_eq!(o.status, Status::Skip, "{o:?}");
        assert!(o.found.contains("cannot pin"));
    }

    #[test]
    fn a_real_loop_has_a_speed_or_says_why_not() {
        let cpu = crate::sys::sched::allowed_cpus().unwrap()[0];
        match super::loop_rate(cpu) {
            Ok(rate) => assert!(rate > 0.0 && rate.is_finite()),
            // A machine too busy for whole rounds (not asserted either way).
            Err(e) => assert!(e.contains("taken by other tasks"), "{e}"),
        }
    }

    /// CPUs 0-3, with 0/2 and 1/3 siblings; `busy2` ticks of 100 busy on CPU 2
    /// in the second sample.
    fn smt_tree(t: &Tree, busy2: u64) {
        for (cpu, sib) in [(0, "0,2"), (1, "1,3"), (2, "0,2"), (3, "1,3")] {
            t.file(
                &format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"),
                sib,
            );
        }
        t.file(
            "/proc/stat",
            &format!(
                "cpu  0 0 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0\n\
                 cpu2 {busy2} 0 0 {} 0 0 0 0\ncpu3 0 0 0 100 0 0 0 0\n",
                100 - busy2
            ),
        );
    }

    fn smt(busy2: u64) -> super::Outcome {
        let t = Tree::new();
        smt_tree(&t, 0);
        t.file(
            "/proc/stat",
            "cpu  0 0 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0\ncpu2 0 0 0 0 0 0 0 0\ncpu3 0 0 0 0 0 0 0 0\n",
        );
        let before = t.sample(0.0);
        smt_tree(&t, busy2);
        let after = t.sample(1.0);
        outcome_with("smt-siblings", &t, &before, &after, &measured())
    }

    #[test]
    fn smt_siblings_are_graded_by_their_load() {
        assert_eq!(smt(2).status, Status::Pass);
        let o = smt(30);
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert!(o.found.contains("CPU 2 30% busy"), "{o:?}");
        assert_eq!(smt(80).status, Status::Fail);
        // No siblings outside the measured CPUs.
        let t = Tree::new();
        t.file(
            "/sys/devices/system/cpu/cpu0/topology/thread_siblings_list",
            "0-1",
        );
        t.file(
            "/sys/devices/system/cpu/cpu1/topology/thread_siblings_list",
            "0-1",
        );
        let o = outcome("smt-siblings", &t);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!(o.found.contains("share one core"), "{o:?}");
        assert_eq!(outcome("smt-siblings", &Tree::new()).status, Status::Skip);
    }

    #[test]
    fn isolation_passes_when_measured_cpus_are_isolated_and_warns_when_others_are() {
        let t = Tree::new();
        assert_eq!(outcome("cpu-isolation", &t).status, Status::Skip);
        t.file("/proc/cmdline", "quiet");
        t.file("/sys/devices/system/cpu/isolated", "");
        let o = outcome("cpu-isolation", &t);
        assert_eq!(
            o.status,
            Status::Info,
            "none isolated is the usual machine: {o:?}"
        );
        t.file("/proc/cmdline", "isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3");
        t.file("/sys/devices/system/cpu/isolated", "2-3");
        t.file("/sys/devices/system/cpu/nohz_full", "2-3");
        let o = outcome("cpu-isolation", &t);
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert_eq!(
            o.fix.as_deref(),
            Some("measure on the isolated CPUs: --cpus 2,3")
        );
        t.file("/sys/devices/system/cpu/isolated", "0-1");
        t.file("/sys/devices/system/cpu/nohz_full", "(null)");
        let o = outcome("cpu-isolation", &t);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!(o.found.contains("nohz_full none"), "{o:?}");
    }
}
