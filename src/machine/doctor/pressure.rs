//! What else competes for the machine: this process's cgroup CPU quota and
//! its throttled periods, CPU and memory pressure (PSI), the run queue and
//! the load average, how busy the CPUs were over the window, and swapping.

use super::{Definition, Inputs, Outcome, percent};
use crate::engine::os::load::account::parse_cpu_times;
use crate::machine::environment::parse_cpu_list;
use crate::machine::sysroot::SysRoot;

/// This process's cgroup, where its CPU controller's files are.
#[derive(Debug, Clone, PartialEq)]
pub struct Cgroup {
    /// Where the hierarchy is mounted (`/sys/fs/cgroup`, `…/cpu,cpuacct`).
    pub mount: String,
    /// The cgroup's path in it (`/` for the root).
    pub path: String,
    /// Cgroup v1's `cpu` controller (`cpu.cfs_quota_us`), else v2 (`cpu.max`).
    pub v1: bool,
    /// The cgroup's directory.
    pub dir: String,
}

fn join(mount: &str, path: &str) -> String {
    format!(
        "{}/{}",
        mount.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
    .trim_end_matches('/')
    .to_string()
}

/// Finds this process's cgroup from `/proc/self/cgroup`: cgroup v1's cpu
/// controller where it is mounted, else the unified (v2) hierarchy at
/// `/sys/fs/cgroup` or `/sys/fs/cgroup/unified`.
pub fn cgroup(root: &SysRoot) -> Option<Cgroup> {
    let text = root.read("/proc/self/cgroup")?;
    let mut v2 = None;
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if controllers.is_empty() {
            v2 = Some(path.to_string());
        } else if controllers.split(',').any(|c| c == "cpu") {
            for mount in [
                format!("/sys/fs/cgroup/{controllers}"),
                "/sys/fs/cgroup/cpu".into(),
                "/sys/fs/cgroup/cpu,cpuacct".into(),
            ] {
                let dir = join(&mount, path);
                if root.exists(&format!("{dir}/cpu.cfs_quota_us")) {
                    return Some(Cgroup {
                        mount,
                        path: path.into(),
                        v1: true,
                        dir,
                    });
                }
            }
        }
    }
    let path = v2?;
    ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .into_iter()
        .map(|mount| (mount, join(mount, &path)))
        .find(|(_, dir)| root.exists(&format!("{dir}/cpu.stat")))
        .map(|(mount, dir)| Cgroup {
            mount: mount.into(),
            path,
            v1: false,
            dir,
        })
}

/// The quota in CPUs set at `dir` (None: no limit, or not readable).
fn quota_at(root: &SysRoot, dir: &str, v1: bool) -> Option<f64> {
    let (quota, period) = if v1 {
        (
            root.read(&format!("{dir}/cpu.cfs_quota_us"))?,
            root.read(&format!("{dir}/cpu.cfs_period_us"))?,
        )
    } else {
        let max = root.read(&format!("{dir}/cpu.max"))?;
        let (q, p) = max.split_once(' ')?;
        (q.to_string(), p.to_string())
    };
    let quota: f64 = quota.parse().ok().filter(|q: &f64| *q > 0.0)?;
    let period: f64 = period.parse().ok().filter(|p: &f64| *p > 0.0)?;
    Some(quota / period)
}

/// A `key value` line's value from a `cpu.stat` or `vmstat`-like text.
fn field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// The cgroup's CPU quota, and whether it throttled this window.
pub const CGROUP_CPU_QUOTA: Definition = Definition {
    id: "cgroup-cpu-quota",
    title: "cgroup CPU quota and throttling",
    needs_root: false,
    fix: "raise the container's CPU limit (docker run --cpus N, systemd CPUQuota=) to at least the measured CPUs",
    run: cgroup_cpu_quota,
};

fn cgroup_cpu_quota(x: &Inputs) -> Outcome {
    let Some(g) = cgroup(x.root) else {
        return Outcome::skip("no CPU controller found for this process's cgroup");
    };
    // A parent's quota limits its children too: the tightest on the way up.
    let mut dir = g.dir.clone();
    let mut quota: Option<(f64, String)> = None;
    loop {
        if let Some(q) = quota_at(x.root, &dir, g.v1)
            && quota.as_ref().is_none_or(|(best, _)| q < *best)
        {
            quota = Some((q, dir.clone()));
        }
        if dir.len() <= g.mount.len() {
            break;
        }
        dir = dir
            .rsplit_once('/')
            .map_or(g.mount.clone(), |(up, _)| up.to_string());
    }
    let version = if g.v1 { "v1" } else { "v2" };
    let throttled_key = if g.v1 {
        "throttled_time"
    } else {
        "throttled_usec"
    };
    let stat =
        |s: &super::Sample, key: &str| s.cgroup_cpu_stat.as_deref().and_then(|t| field(t, key));
    let periods = stat(x.after, "nr_throttled");
    let during = periods
        .zip(stat(x.before, "nr_throttled"))
        .map(|(a, b)| a.saturating_sub(b));
    let throttled_ms = stat(x.after, throttled_key)
        .zip(stat(x.before, throttled_key))
        .map(|(a, b)| {
            let d = a.saturating_sub(b) as f64;
            if g.v1 { d / 1e6 } else { d / 1e3 }
        });
    let limit = match &quota {
        Some((q, at)) => format!("quota {q:.2} CPUs (cgroup {version} {at})"),
        None => format!("no CPU quota (cgroup {version} {})", g.dir),
    };
    let history = periods.map_or(String::new(), |p| {
        format!("; throttled in {p} periods so far")
    });
    let found = format!("{limit}{history}");
    let seconds = x.after.seconds_since(x.before);
    if let Some(n) = during.filter(|&n| n > 0) {
        let ms = throttled_ms.unwrap_or(0.0);
        return Outcome::fail(format!(
            "{found}: throttled in {n} periods during {seconds:.1} s, {ms:.0} ms in all"
        ))
        .cost(
            ms / seconds / 10.0,
            "%",
            "of the window this cgroup was throttled",
        );
    }
    match quota {
        Some((q, _)) if q < x.cpus.len() as f64 => Outcome::warn(format!(
            "{found}: less than the {} measured CPUs, so a figure whose two sides both run \
             (a spinning mechanism, a stream) is throttled",
            x.cpus.len()
        )),
        _ => Outcome::pass(found),
    }
}

/// PSI's `some avg10` of `text` (the share of the last 10 s in which some
/// task waited), %.
fn psi_avg10(text: &str, line: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(line))?
        .split_whitespace()
        .find_map(|w| w.strip_prefix("avg10="))?
        .parse()
        .ok()
}

/// CPU pressure.
pub const CPU_PRESSURE: Definition = Definition {
    id: "cpu-pressure",
    title: "CPU pressure (PSI)",
    needs_root: false,
    fix: "stop other work on this machine (or its container's neighbours) while measuring",
    run: cpu_pressure,
};

/// Some task waited for a CPU this share of the last 10 s (%): below it,
/// the machine is quiet.
const CPU_PSI_WARN: f64 = 5.0;
/// Above it, a figure's samples are often delayed by another task.
const CPU_PSI_FAIL: f64 = 20.0;

fn cpu_pressure(x: &Inputs) -> Outcome {
    let Some(some) = x
        .root
        .read("/proc/pressure/cpu")
        .and_then(|t| psi_avg10(&t, "some"))
    else {
        return Outcome::skip("no /proc/pressure/cpu (a kernel without PSI, or booted psi=0)");
    };
    Outcome::graded(
        some,
        CPU_PSI_WARN,
        CPU_PSI_FAIL,
        format!(
            "some task waited for a CPU {} of the last 10 s",
            percent(some)
        ),
    )
}

/// Memory pressure.
pub const MEMORY_PRESSURE: Definition = Definition {
    id: "memory-pressure",
    title: "memory pressure (PSI)",
    needs_root: false,
    fix: "free memory (stop other work, drop caches: sync; echo 1 > /proc/sys/vm/drop_caches)",
    run: memory_pressure,
};

fn memory_pressure(x: &Inputs) -> Outcome {
    let Some(text) = x.root.read("/proc/pressure/memory") else {
        return Outcome::skip("no /proc/pressure/memory (a kernel without PSI, or booted psi=0)");
    };
    let (Some(some), full) = (psi_avg10(&text, "some"), psi_avg10(&text, "full")) else {
        return Outcome::skip("/proc/pressure/memory has no `some` line");
    };
    let full = full.unwrap_or(0.0);
    let found = format!(
        "some task stalled on memory {} of the last 10 s, all tasks {}",
        percent(some),
        percent(full)
    );
    // Any stall on memory is reclaim or swapping in the middle of samples.
    if full >= 5.0 || some >= 10.0 {
        Outcome::fail(found)
    } else if some >= 1.0 {
        Outcome::warn(found)
    } else {
        Outcome::pass(found)
    }
}

/// Pages swapped during the window.
pub const SWAP_ACTIVITY: Definition = Definition {
    id: "swap-activity",
    title: "swap activity",
    needs_root: false,
    fix: "free memory so nothing swaps (or swapoff -a while measuring)",
    run: swap_activity,
};

fn swap_activity(x: &Inputs) -> Outcome {
    let pages =
        |s: &super::Sample| Some(field(&s.vmstat, "pswpin")? + field(&s.vmstat, "pswpout")?);
    let (Some(before), Some(after)) = (pages(x.before), pages(x.after)) else {
        return Outcome::skip("no pswpin / pswpout in /proc/vmstat");
    };
    let seconds = x.after.seconds_since(x.before);
    let per_s = after.saturating_sub(before) as f64 / seconds;
    let found = format!("{per_s:.0} pages/s swapped in or out during {seconds:.1} s");
    if per_s == 0.0 {
        Outcome::pass(found)
    } else if per_s < 1000.0 {
        Outcome::warn(found)
    } else {
        Outcome::fail(found)
    }
}

/// The number of CPUs online.
fn online(x: &Inputs) -> usize {
    x.root
        .read("/sys/devices/system/cpu/online")
        .map(|l| parse_cpu_list(&l).len())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| parse_cpu_times(&x.after.stat).1.len().max(1))
}

/// Other runnable tasks and the load average.
pub const RUN_QUEUE: Definition = Definition {
    id: "run-queue",
    title: "other load (run queue, load average)",
    needs_root: false,
    fix: "stop other work on this machine while measuring (top, or ps -eo pid,stat,pcpu,comm --sort=-pcpu)",
    run: run_queue,
};

fn run_queue(x: &Inputs) -> Outcome {
    let Some(loadavg) = x.root.read("/proc/loadavg") else {
        return Outcome::skip("no /proc/loadavg");
    };
    let Some(load1) = loadavg
        .split_whitespace()
        .next()
        .and_then(|v| v.parse::<f64>().ok())
    else {
        return Outcome::skip("/proc/loadavg unreadable");
    };
    let cpus = online(x);
    // Runnable at each sample, less the one reading (this process): the
    // fewer of the two, so a task that ran at one moment only counts not.
    let running = |s: &super::Sample| field(&s.stat, "procs_running");
    let others = running(x.before)
        .zip(running(x.after))
        .map(|(a, b)| a.min(b).saturating_sub(1));
    let found = format!(
        "load average {load1:.2} (1 min) on {cpus} CPUs{}",
        others.map_or(String::new(), |n| format!(
            "; {n} other task(s) runnable at both samples"
        ))
    );
    let others = others.unwrap_or(0) as f64;
    let cpus = cpus as f64;
    if load1 >= cpus || others >= cpus {
        Outcome::fail(found)
    } else if load1 >= 0.5 * cpus || others >= 1.0 {
        Outcome::warn(found)
    } else {
        Outcome::pass(found)
    }
}

/// How busy the CPUs were over the window.
pub const BUSY_CPUS: Definition = Definition {
    id: "busy-cpus",
    title: "busy CPUs",
    needs_root: false,
    fix: "stop other work on the measured CPUs (or measure on idle ones: --cpus LIST)",
    run: busy_cpus,
};

/// A measured CPU busier than this (%) with other work shares it.
const BUSY_WARN: f64 = 5.0;
/// Busier than this, a figure is measured on a CPU it gets part of the time.
const BUSY_FAIL: f64 = 25.0;

fn busy_cpus(x: &Inputs) -> Outcome {
    let (all_before, before) = parse_cpu_times(&x.before.stat);
    let (all_after, after) = parse_cpu_times(&x.after.stat);
    let share = |a: &crate::engine::os::load::account::CpuTimes,
                 b: &crate::engine::os::load::account::CpuTimes| {
        let d = a.since(b);
        d.ran() as f64 / d.total().max(1) as f64 * 100.0
    };
    let mut found = Vec::new();
    let mut worst = 0.0f64;
    for &cpu in x.cpus {
        let (Some(b), Some(a)) = (before.get(&cpu), after.get(&cpu)) else {
            return Outcome::skip(format!("no /proc/stat line for CPU {cpu}"));
        };
        let busy = share(a, b);
        worst = worst.max(busy);
        found.push(format!("CPU {cpu} {}", percent(busy)));
    }
    let all = all_after.zip(all_before).map_or(String::new(), |(a, b)| {
        format!(" (all CPUs {})", percent(share(&a, &b)))
    });
    Outcome::graded(
        worst,
        BUSY_WARN,
        BUSY_FAIL,
        format!(
            "{} busy during {:.1} s{all}, while ipcmark slept",
            found.join(", "),
            x.after.seconds_since(x.before)
        ),
    )
    .cost(worst, "%", "of a measured CPU's time taken by other work")
}

#[cfg(test)]
mod tests {
    use super::super::Status;
    use super::super::fixture::{Tree, measured, outcome, outcome_with};
    use super::*;

    #[test]
    fn the_cgroup_is_found_under_v1_and_v2() {
        let t = Tree::new();
        assert_eq!(cgroup(&t.root()), None);
        t.file("/proc/self/cgroup", "1:cpu,cpuacct:/box\n0::/");
        t.file("/sys/fs/cgroup/cpu,cpuacct/box/cpu.cfs_quota_us", "-1");
        let g = cgroup(&t.root()).unwrap();
        assert!(g.v1 && g.dir == "/sys/fs/cgroup/cpu,cpuacct/box", "{g:?}");
        let t = Tree::new();
        t.file("/proc/self/cgroup", "0::/user.slice/run-1.scope");
        t.file(
            "/sys/fs/cgroup/user.slice/run-1.scope/cpu.stat",
            "nr_throttled 0",
        );
        let g = cgroup(&t.root()).unwrap();
        assert!(
            !g.v1 && g.dir == "/sys/fs/cgroup/user.slice/run-1.scope",
            "{g:?}"
        );
    }

    /// A v2 cgroup `/box` with `cpu.max` and throttled periods before and after.
    fn quota(max: &str, throttled: [u64; 2]) -> super::Outcome {
        let t = Tree::new();
        t.file("/proc/self/cgroup", "0::/box");
        t.file("/sys/fs/cgroup/box/cpu.max", max);
        let stat = |n: u64| {
            format!(
                "nr_periods 100\nnr_throttled {n}\nthrottled_usec {}",
                n * 1000
            )
        };
        t.file("/sys/fs/cgroup/box/cpu.stat", &stat(throttled[0]));
        let before = t.sample(0.0);
        t.file("/sys/fs/cgroup/box/cpu.stat", &stat(throttled[1]));
        let after = t.sample(1.0);
        outcome_with("cgroup-cpu-quota", &t, &before, &after, &measured())
    }

    #[test]
    fn a_quota_that_throttles_fails_one_below_the_cpus_warns() {
        let o = quota("max 100000", [0, 0]);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!(o.found.starts_with("no CPU quota"), "{o:?}");
        assert_eq!(quota("200000 100000", [3, 3]).status, Status::Pass);
        let o = quota("150000 100000", [0, 0]);
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert!(o.found.contains("quota 1.50 CPUs"), "{o:?}");
        let o = quota("50000 100000", [3, 13]);
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert!(o.found.contains("throttled in 10 periods"), "{o:?}");
        assert!((o.cost.unwrap().value - 1.0).abs() < 1e-9, "10 ms of 1 s");
        assert_eq!(
            outcome("cgroup-cpu-quota", &Tree::new()).status,
            Status::Skip
        );
    }

    #[test]
    fn a_parents_quota_limits_a_v1_child() {
        let t = Tree::new();
        t.file("/proc/self/cgroup", "4:cpu:/a/b");
        let dir = "/sys/fs/cgroup/cpu";
        t.file(&format!("{dir}/a/b/cpu.cfs_quota_us"), "-1");
        t.file(&format!("{dir}/a/b/cpu.cfs_period_us"), "100000");
        t.file(&format!("{dir}/a/cpu.cfs_quota_us"), "100000");
        t.file(&format!("{dir}/a/cpu.cfs_period_us"), "100000");
        let o = outcome("cgroup-cpu-quota", &t);
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert!(
            o.found
                .contains("quota 1.00 CPUs (cgroup v1 /sys/fs/cgroup/cpu/a)"),
            "{o:?}"
        );
    }

    fn psi(file: &str, some: f64, full: f64) -> super::Outcome {
        let t = Tree::new();
        t.file(
            &format!("/proc/pressure/{file}"),
            &format!(
                "some avg10={some:.2} avg60=0.00 avg300=0.00 total=1\nfull avg10={full:.2} avg60=0.00 avg300=0.00 total=0"
            ),
        );
        outcome(&format!("{file}-pressure"), &t)
    }

    #[test]
    fn pressure_is_graded_by_its_ten_second_average() {
        assert_eq!(psi("cpu", 1.0, 0.0).status, Status::Pass);
        assert_eq!(psi("cpu", 10.0, 0.0).status, Status::Warn);
        assert_eq!(psi("cpu", 48.0, 0.0).status, Status::Fail);
        assert_eq!(psi("memory", 0.0, 0.0).status, Status::Pass);
        assert_eq!(psi("memory", 2.0, 0.0).status, Status::Warn);
        assert_eq!(psi("memory", 2.0, 6.0).status, Status::Fail);
        assert_eq!(outcome("cpu-pressure", &Tree::new()).status, Status::Skip);
        assert_eq!(
            outcome("memory-pressure", &Tree::new()).status,
            Status::Skip
        );
    }

    fn swap(pages: u64) -> super::Outcome {
        let t = Tree::new();
        t.file("/proc/vmstat", "nr_free_pages 1\npswpin 10\npswpout 20");
        let before = t.sample(0.0);
        t.file(
            "/proc/vmstat",
            &format!("nr_free_pages 1\npswpin 10\npswpout {}", 20 + pages),
        );
        let after = t.sample(1.0);
        outcome_with("swap-activity", &t, &before, &after, &measured())
    }

    #[test]
    fn any_swapping_warns_much_fails() {
        assert_eq!(swap(0).status, Status::Pass);
        assert_eq!(swap(10).status, Status::Warn);
        assert_eq!(swap(5000).status, Status::Fail);
        assert_eq!(outcome("swap-activity", &Tree::new()).status, Status::Skip);
    }

    fn queue(load1: f64, running: [u64; 2]) -> super::Outcome {
        let t = Tree::new();
        t.file("/sys/devices/system/cpu/online", "0-1");
        t.file("/proc/loadavg", &format!("{load1:.2} 0.50 0.40 2/104 1778"));
        t.file(
            "/proc/stat",
            &format!("cpu  0 0 0 0 0 0 0 0\nprocs_running {}", running[0]),
        );
        let before = t.sample(0.0);
        t.file(
            "/proc/stat",
            &format!("cpu  0 0 0 0 0 0 0 0\nprocs_running {}", running[1]),
        );
        let after = t.sample(1.0);
        outcome_with("run-queue", &t, &before, &after, &measured())
    }

    #[test]
    fn the_run_queue_counts_others_at_both_samples() {
        let o = queue(0.1, [1, 3]);
        assert_eq!(o.status, Status::Pass, "one busy moment is not load: {o:?}");
        assert_eq!(queue(0.1, [2, 2]).status, Status::Warn);
        assert_eq!(queue(1.2, [1, 1]).status, Status::Warn);
        let o = queue(2.5, [1, 1]);
        assert_eq!(o.status, Status::Fail, "{o:?}");
        assert!(
            o.found.starts_with("load average 2.50 (1 min) on 2 CPUs"),
            "{o:?}"
        );
        assert_eq!(outcome("run-queue", &Tree::new()).status, Status::Skip);
    }

    fn busy(cpu1: u64) -> super::Outcome {
        let t = Tree::new();
        let stat = |b: u64, i: u64| {
            format!(
                "cpu  {b} 0 0 {} 0 0 0 0\ncpu0 0 0 0 {i} 0 0 0 0\ncpu1 {b} 0 0 {} 0 0 0 0\n",
                i * 2 - b,
                i - b
            )
        };
        t.file("/proc/stat", &stat(0, 100));
        let before = t.sample(0.0);
        t.file("/proc/stat", &stat(cpu1, 200));
        let after = t.sample(1.0);
        outcome_with("busy-cpus", &t, &before, &after, &measured())
    }

    #[test]
    fn busy_cpus_are_graded_by_the_busiest_measured_one() {
        let o = busy(1);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        let o = busy(10);
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert!(o.found.starts_with("CPU 0 0.0%, CPU 1 10% busy"), "{o:?}");
        assert_eq!(busy(60).status, Status::Fail);
    }
}
