//! The CPU wake-up latency request of `ipcmark run` and `ipcmark workload`:
//! held as root; as a user who may not hold it (`nobody`), the command goes
//! on, says so once with what a cross-CPU wake-up costs here, and its JSON
//! records that it was not held and why. No test asserts a time: the cost's
//! presence, shape and agreement between the page and the JSON only.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

/// The warning's stderr line, if printed (exactly once).
fn idle_warning(stderr: &str) -> Option<&str> {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            l.starts_with("warning: deep idle states allowed")
                || l.starts_with("warning: the CPU wake-up latency was not held")
        })
        .collect();
    assert!(lines.len() <= 1, "printed more than once:\n{stderr}");
    lines.first().copied()
}

/// The `idle-states-allowed` warnings of a run report.
fn idle_records(report: &Value) -> Vec<&Value> {
    report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter(|w| w["kind"] == "idle-states-allowed")
        .collect()
}

/// Asserts that `environment.cpu_latency` says the request was not held,
/// for `reason`, with a measured wake-up when two CPUs were allowed (else
/// why not), and that `line`, the warning, gives that same figure.
fn assert_not_held(report: &Value, line: &str, reason: &str) {
    let l = &report["environment"]["cpu_latency"];
    assert_eq!(l["held"], false, "{l}");
    let why = l["not_held_reason"].as_str().expect("not_held_reason");
    assert!(why.contains(reason), "{why}");
    assert!(line.contains(&format!("({why})")), "{line}");
    if report["environment"]["allowed_cpus"]
        .as_array()
        .unwrap()
        .len()
        >= 2
    {
        let ns = l["wakeup_cost_ns"]
            .as_f64()
            .unwrap_or_else(|| panic!("no wake-up cost measured: {l}"));
        assert!(ns >= 0.0 && l["wakeup_cost_unmeasured"].is_null(), "{l}");
        let probe = &l["wakeup_probe"];
        assert!(uint(&probe["round_trips"]) > 0, "{probe}");
        let cpus = probe["cpus"].as_array().unwrap();
        assert!(cpus.len() == 2 && cpus[0] != cpus[1], "{probe}");
        // The page says what the JSON records.
        let shown = format!("a cross-CPU wake-up costs ≈ {:.1} µs here", ns / 1e3);
        assert!(line.contains(&shown), "{line}\nJSON: {l}");
        // It says deep idle states were allowed unless the kernel's counters
        // show that none was entered.
        let entries = &probe["deep_idle_entries"];
        assert!(entries.is_null() || entries.is_u64(), "{probe}");
        assert_eq!(
            line.starts_with("warning: deep idle states allowed"),
            entries != 0,
            "{line}\nJSON: {l}"
        );
    } else {
        let why = l["wakeup_cost_unmeasured"]
            .as_str()
            .expect("why not measured");
        assert!(line.contains(why), "{line}");
    }
}

/// Asserts that `environment.cpu_latency` says a limit of 0 µs was held and
/// no wake-up was measured, and that no idle-state warning was given.
fn assert_held(report: &Value, stderr: &str) {
    let l = &report["environment"]["cpu_latency"];
    assert_eq!(l["held"], true, "{l}");
    assert_eq!(l["requested_us"], 0, "{l}");
    assert!(l["not_held_reason"].is_null(), "{l}");
    assert!(
        l["wakeup_cost_ns"].is_null() && l["wakeup_probe"].is_null(),
        "{l}"
    );
    assert!(
        l["wakeup_cost_unmeasured"]
            .as_str()
            .is_some_and(|w| w.contains("held")),
        "{l}"
    );
    assert_eq!(idle_warning(stderr), None, "{stderr}");
}

/// The binary as nobody runs it, or `None` after saying why not.
fn nobody(test: &str) -> Option<Nobody> {
    match Nobody::new() {
        Ok(n) => {
            if std::process::Command::new("runuser")
                .args(["-u", "nobody", "--", "test", "-w", "/dev/cpu_dma_latency"])
                .status()
                .is_ok_and(|s| s.success())
            {
                eprintln!("SKIPPED {test}: nobody may write /dev/cpu_dma_latency here");
                return None;
            }
            Some(n)
        }
        Err(why) => {
            eprintln!("SKIPPED {test}: {why}");
            None
        }
    }
}

/// Whether this user may hold a limit, or `false` after saying so.
fn may_hold(test: &str) -> bool {
    let ok = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .is_ok();
    if !ok {
        eprintln!("SKIPPED {test}: this user may not write /dev/cpu_dma_latency");
    }
    ok
}

#[test]
fn as_nobody_a_run_says_once_what_a_wake_up_costs_and_records_it_was_not_held() {
    let _g = serial();
    let Some(nobody) = nobody("as_nobody_a_run_…") else {
        return;
    };
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "pipe"])
        .short()
        .json()
        .schema()
        .nobody(&nobody)
        .limit(Duration::from_secs(60))
        .ok();
    let err = &ran.stderr;
    let line = idle_warning(err).unwrap_or_else(|| panic!("no idle-state warning:\n{err}"));
    assert!(
        line.contains("run as root or give access to /dev/cpu_dma_latency"),
        "{line}"
    );
    let report = &ran.report;
    assert_not_held(
        report,
        line,
        "permission denied opening /dev/cpu_dma_latency",
    );
    assert_eq!(report["environment"]["cpu_latency"]["requested_us"], 0);
    assert!(report["settings"]["cpu_latency_us"].is_null());
    // The JSON's warning is the printed one.
    let records = idle_records(report);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(
        Some(format!("warning: {}", records[0]["message"].as_str().unwrap()).as_str()),
        Some(line)
    );
}

#[test]
fn as_nobody_a_required_limit_refuses_the_run_in_one_line() {
    let _g = serial();
    let Some(nobody) = nobody("as_nobody_a_required_limit_…") else {
        return;
    };
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "pipe"])
        .quick()
        .args(&["--cpu-latency", "0"])
        .nobody(&nobody)
        .limit(Duration::from_secs(30))
        .exits(2);
    assert_eq!(
        ran.stderr,
        "ipcmark: --cpu-latency 0: permission denied opening /dev/cpu_dma_latency; run as root, \
         or give --cpu-latency off\n"
    );
    assert!(ran.stdout.is_empty());
}

#[test]
fn as_nobody_a_workload_says_so_too_and_records_it() {
    let _g = serial();
    let Some(nobody) = nobody("as_nobody_a_workload_…") else {
        return;
    };
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["workload", "generator-calculator", "--ops", "200"])
        .args(&["--runs", "1"])
        .json()
        .schema()
        .nobody(&nobody)
        .limit(Duration::from_secs(60))
        .ok();
    let err = &ran.stderr;
    let line = idle_warning(err).unwrap_or_else(|| panic!("no idle-state warning:\n{err}"));
    assert_not_held(&ran.report, line, "permission denied");
}

#[test]
fn as_root_run_and_workload_hold_the_limit_and_say_it_was_held() {
    let _g = serial();
    if !may_hold("as_root_run_and_workload_…") {
        return;
    }
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "pipe"])
        .short()
        .json()
        .schema()
        .limit(Duration::from_secs(60))
        .ok();
    assert_held(&ran.report, &ran.stderr);
    assert_eq!(ran.report["settings"]["cpu_latency_us"], 0);
    assert!(idle_records(&ran.report).is_empty());

    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["workload", "generator-calculator", "--ops", "200"])
        .args(&["--runs", "1"])
        .json()
        .schema()
        .limit(Duration::from_secs(60))
        .ok();
    assert_held(&ran.report, &ran.stderr);
    ran.assert_released(&sb);
}

#[test]
fn a_limit_turned_off_is_said_without_advice_and_one_cpu_says_why_nothing_was_measured() {
    let _g = serial();
    let off = |sb| {
        Run::new(sb, &["run", "pipe", "--cpu-latency", "off"])
            .short()
            .json()
            .schema()
            .limit(Duration::from_secs(60))
    };
    let sb = Sandbox::new();
    let ran = off(&sb).ok();
    let err = &ran.stderr;
    let line = idle_warning(err).unwrap_or_else(|| panic!("no idle-state warning:\n{err}"));
    assert_not_held(&ran.report, line, "--cpu-latency off");
    assert!(!line.contains("run as root"), "{line}");
    assert!(ran.report["environment"]["cpu_latency"]["requested_us"].is_null());

    // Confined to one CPU: no cross-CPU wake-up to measure, and it says so.
    let cpu = allowed_cpus()[0];
    let sb = Sandbox::new();
    let ran = off(&sb)
        .by(|a| {
            let mut c = sb.cmd(a);
            confine_to(&mut c, cpu);
            c
        })
        .ok();
    let err = &ran.stderr;
    let line = idle_warning(err).unwrap_or_else(|| panic!("no idle-state warning:\n{err}"));
    let l = &ran.report["environment"]["cpu_latency"];
    assert_eq!(
        ran.report["environment"]["allowed_cpus"],
        serde_json::json!([cpu])
    );
    assert!(
        l["wakeup_cost_ns"].is_null() && l["wakeup_probe"].is_null(),
        "{l}"
    );
    assert!(
        l["wakeup_cost_unmeasured"]
            .as_str()
            .is_some_and(|w| w.contains("one CPU")),
        "{l}"
    );
    assert_not_held(&ran.report, line, "--cpu-latency off");
}

/// Makes `c` start on `cpu` alone (its affinity, as `taskset -c CPU`).
fn confine_to(c: &mut std::process::Command, cpu: usize) {
    use std::os::unix::process::CommandExt;
    // SAFETY: cpu_set_t is plain data, and CPU_SET writes inside it.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        set
    };
    // SAFETY: between fork and exec the closure makes one async-signal-safe
    // call, sched_setaffinity, on a set built before the fork.
    unsafe {
        c.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}
