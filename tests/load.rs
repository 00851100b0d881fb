//! `--load`: a stated load held during every figure: bad specs refused in
//! one line, what each load process did recorded with each figure (its
//! achieved rate measured), and no load process left after a normal end,
//! SIGINT, SIGTERM or a load process killed under the run. No test asserts
//! a time or a rate.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

/// Live processes named as ipcmark names its load processes.
fn load_processes() -> Vec<u32> {
    ipcmark_processes()
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm"))
                .is_ok_and(|c| c.trim() == "ipcmark-load")
        })
        .collect()
}

/// Every source of every figure's `load`, after checking each figure has one.
fn sources(report: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for r in results(report) {
        let l = r
            .get("load")
            .unwrap_or_else(|| panic!("a figure without its load record: {r}"));
        out.extend(l["sources"].as_array().unwrap().iter().cloned());
    }
    out
}

#[test]
fn bad_load_specs_are_refused_in_one_line() {
    let sb = Sandbox::new();
    let json = sb.path("never.json");
    let j = json.to_str().unwrap();
    refused_all(
        &sb,
        &[
            (
                &["run", "syscall-getpid", "--load", "irq", "--json", j][..],
                "invalid load 'irq'",
            ),
            (&["run", "--load", "irq:50000", "--json", j], "at most"),
            (
                &["run", "--load", "irq:4000:work=1ms", "--json", j],
                "half a period",
            ),
            (&["run", "--load", "cpu:0", "--json", j], "1 to 32"),
            (
                &["run", "--load", "cpu:1:fft", "--json", j],
                "unknown kind 'fft'",
            ),
            (
                &["run", "--load", "net:0", "--json", j],
                "datagrams per second",
            ),
            (
                &["run", "--load", "disk:1", "--json", j],
                "invalid load 'disk:1'",
            ),
            (&["run", "--load-cpus", "0", "--json", j], "give --load too"),
            (
                &["run", "--load", "cpu:1", "--load-cpus", "4095", "--json", j],
                "CPU 4095",
            ),
            (
                &["workload", "shared-counter", "--load", "irq:x", "--json", j],
                "invalid frequency",
            ),
        ],
        Some(&json),
    );
}

#[test]
fn a_load_is_held_during_every_figure_and_its_achieved_rate_reported() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "syscall-getpid", "pipe"])
        .sizes("64")
        .args(&["--load", "irq:2000,cpu:1,net:2k"])
        .short()
        .json()
        .schema()
        .limit(Duration::from_secs(60))
        .ok();
    ran.assert_released(&sb);
    let s = &ran.report["settings"]["load"];
    assert_eq!(
        s["specs"],
        serde_json::json!(["irq:2000:work=2000ns", "cpu:1:mixed", "net:2000"])
    );
    let cpus = s["cpus"].as_array().unwrap().len();
    let all = sources(&ran.report);
    // An interrupt source per load CPU, one CPU process, one flood, per figure.
    assert_eq!(all.len(), results(&ran.report).len() * (cpus + 2));
    for src in &all {
        match src["kind"].as_str().unwrap() {
            "irq" => {
                assert_eq!(src["requested_per_s"], 2000.0, "{src}");
                // The window spans the figure's warm-up, calibration and
                // samples: a source that never fired in it is broken.
                assert!(u(src, "count") > 0, "{src}");
                let achieved = src["achieved_per_s"].as_f64().unwrap();
                assert!(achieved > 0.0, "{src}");
                let handler = u(src, "handler_ns");
                assert!(handler > 0, "the handler worked 2 µs a time: {src}");
                if let Some(cpu) = src["cpu_time_ns"].as_u64() {
                    assert!(cpu >= handler, "the kernel counts the handler: {src}");
                }
            }
            "net" => assert_eq!(src["requested_per_s"], 2000.0, "{src}"),
            "cpu" => assert!(src["requested_per_s"].is_null(), "{src}"),
            k => panic!("unknown kind {k}"),
        }
    }
    // The accounting: each figure's CPUs and the load's, the interrupt
    // sources' handlers counted on the CPU they are pinned to, and the
    // interrupt time at least what the sources took there.
    for r in results(&ran.report) {
        let l = &r["load"];
        let accounted: Vec<u64> = l["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| u(c, "cpu"))
            .collect();
        for c in r["cpus"].as_array().unwrap() {
            assert!(accounted.contains(&c.as_u64().unwrap()), "{r}");
        }
        for c in l["cpus"].as_array().unwrap() {
            let on_it: u64 = l["sources"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["kind"] == "irq" && s["cpu"] == c["cpu"])
                .map(|s| u(s, "count"))
                .sum();
            assert_eq!(u(c, "load_handlers"), on_it, "{c}");
            assert_eq!(
                u(c, "interrupt_ns"),
                u(c, "irq_ns") + u(c, "softirq_ns") + u(c, "load_cpu_ns"),
                "{c}"
            );
            assert!(u(c, "load_cpu_ns") >= u(c, "load_handler_ns"), "{c}");
        }
    }
    let out = &ran.stdout;
    assert!(out.contains("load: irq:2000:work=2000ns"), "{out}");
    assert!(out.contains("Under load"), "{out}");
}

#[test]
fn sigint_and_sigterm_leave_no_load_process() {
    let _g = serial();
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let sb = Sandbox::new();
        let json = sb.path("s.json");
        let (pid, out) = signal_after_first_save(
            &sb,
            &[
                "run",
                "syscall-getpid",
                "syscall-clock-gettime",
                "syscall-gettid",
                "--sample-time",
                "200ms",
                "--load",
                "irq:500,cpu:1",
                "--json",
                json.to_str().unwrap(),
            ],
            &json,
            Duration::from_secs(20),
            sig,
        );
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        assert_released(&sb, pid);
        assert!(load_processes().is_empty(), "{:?}", load_processes());
    }
}

#[test]
fn a_killed_load_process_fails_the_run_in_one_line_and_the_rest_are_reaped() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("k.json");
    let child = sb
        .cmd(&[
            "run",
            "syscall-getpid",
            "syscall-clock-gettime",
            "syscall-gettid",
            "--sample-time",
            "200ms",
            "--load",
            "irq:500,cpu:2",
            "--json",
            json.to_str().unwrap(),
        ])
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(
        eventually(Duration::from_secs(20), || json.exists()),
        "no report saved after the first figure"
    );
    let victims: Vec<u32> = children_of(pid)
        .into_iter()
        .filter(|c| load_processes().contains(c))
        .collect();
    assert_eq!(
        victims.len(),
        4,
        "2 interrupt sources and 2 CPU processes: {victims:?}"
    );
    signal(victims[0], libc::SIGKILL);
    let out = wait_with_deadline(child, Duration::from_secs(30));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("load process"))
        .unwrap_or_else(|| panic!("no line names the load process: {err}"));
    assert!(line.starts_with("ipcmark: "), "{line}");
    assert!(
        line.contains(&format!("pid {}", victims[0])) && line.contains("killed by signal 9"),
        "{line}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_released(&sb, pid);
    assert!(load_processes().is_empty(), "{:?}", load_processes());
}

#[test]
fn a_workload_holds_a_load_too() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["workload", "shared-counter", "--runs", "1"])
        .args(&["--load", "irq:1000"])
        .json()
        .schema()
        .ok();
    ran.assert_released(&sb);
    assert!(ran.stdout.contains("load held over"), "{}", ran.stdout);
    assert!(
        ran.stdout.contains("irq:1000:work=2000ns"),
        "{}",
        ran.stdout
    );
    // The report keeps what the load did (the schema check above ran on it).
    let load = &ran.report["load"];
    assert_eq!(load["specs"][0], "irq:1000:work=2000ns", "{load}");
    let source = &load["sources"][0];
    assert_eq!(source["kind"], "irq", "{load}");
    assert!(source["count"].as_u64().unwrap() > 0, "{load}");
}

#[test]
fn as_nobody_a_load_runs_and_leaves_nothing() {
    let _g = serial();
    let Some(nobody) = Nobody::or_skip("as_nobody_a_load_runs_and_leaves_nothing") else {
        return;
    };
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "syscall-getpid", "--load", "irq:1000,cpu:1"])
        .short()
        .json()
        .schema()
        .nobody(&nobody)
        .limit(Duration::from_secs(60))
        .ok();
    ran.assert_released(&sb);
    for src in sources(&ran.report) {
        if src["kind"] == "irq" {
            assert!(u(&src, "count") > 0, "{src}");
            // Whatever nobody may (RLIMIT_RTPRIO), the report says which.
            assert!(
                src["policy"] == "SCHED_FIFO" || src["policy"] == "SCHED_OTHER",
                "{src}"
            );
        }
    }
}

/// Checks every figure's correction against its own inputs: the interrupt
/// time is the load record's on the figure's CPUs; T' = T − f·T with T the
/// median; S' ≥ S; no corrected figure at or below zero, and none at all
/// when the status says the correction passes zero. Returns how many
/// figures had a correction and how many of them had no interrupt time.
fn check_corrections(report: &Value) -> (usize, usize) {
    let (mut corrected, mut identity) = (0, 0);
    for r in results(report) {
        let Some(c) = r.get("correction") else {
            assert!(
                r["status"] != "ok" || r["mode"] == "periodic",
                "a measured figure without its correction: {r}"
            );
            continue;
        };
        corrected += 1;
        let cpus: Vec<&Value> = c["cpus"].as_array().unwrap().iter().collect();
        let accounted: u64 = r["load"]["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| cpus.contains(&&x["cpu"]))
            .map(|x| u(x, "interrupt_ns"))
            .sum();
        assert_eq!(u(c, "interrupt_ns"), accounted, "{r}");
        let zero = c["status"] == "passes_zero";
        match c["method"].as_str().unwrap() {
            "time" => {
                let t = c["measured_ns"].as_f64().unwrap();
                assert_eq!(t, r["latency_ns"]["median"].as_f64().unwrap(), "{r}");
                if zero {
                    assert!(c["corrected_ns"].is_null() && c["note"].is_string(), "{c}");
                    continue;
                }
                let t2 = c["corrected_ns"].as_f64().unwrap();
                let per_op = c["interrupt_ns_per_op"].as_f64().unwrap();
                assert!(t2 > 0.0 && t2 <= t, "{c}");
                assert!((t2 - (t - per_op)).abs() <= 1e-9 * t, "{c}");
                if u(c, "interrupt_ns") == 0 {
                    identity += 1;
                    assert_eq!(t2, t, "no interrupt time, yet a correction: {c}");
                }
            }
            "score" => {
                assert_eq!(c["operations"], r["score"]["operations"], "{r}");
                if zero {
                    assert!(c["corrected_operations"].is_null(), "{c}");
                    continue;
                }
                let s = u(c, "operations") as f64;
                let s2 = c["corrected_operations"].as_f64().unwrap();
                assert!(s2 >= s, "{c}");
                if u(c, "interrupt_ns") == 0 {
                    identity += 1;
                    assert_eq!(s2, s, "no interrupt time, yet a correction: {c}");
                }
            }
            m => panic!("unknown method {m}"),
        }
    }
    (corrected, identity)
}

#[test]
fn figures_under_a_load_are_corrected_beside_the_raw_ones() {
    let _g = serial();
    for load in ["irq:2000", "none"] {
        let sb = Sandbox::new();
        let ran = Run::new(
            &sb,
            &["run", "rhealstone-task-switch", "sched-yield", "pipe"],
        )
        .args(&["thread-metric-basic", "thread-metric-cooperative"])
        .sizes("64")
        .args(&["--period", "100ms", "--load", load])
        .short()
        .json()
        .schema()
        .ok();
        ran.assert_released(&sb);
        let (corrected, _) = check_corrections(&ran.report);
        let measured = results(&ran.report)
            .iter()
            .filter(|r| r["status"] == "ok")
            .count();
        assert_eq!(
            corrected, measured,
            "{load}: every measured figure is corrected"
        );
        let out = &ran.stdout;
        assert!(out.contains("corrected"), "{out}");
        if load == "none" {
            assert!(out.contains("load: none"), "{out}");
        }
    }
}

#[test]
fn a_load_sweep_measures_each_figure_once_per_level() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(
        &sb,
        &["run", "rhealstone-task-switch", "thread-metric-basic"],
    )
    .args(&["--period", "100ms", "--load", "cpu:1"])
    .args(&["--load-sweep", "irq:250,2000"])
    .short()
    .json()
    .schema()
    .ok();
    ran.assert_released(&sb);
    let levels: Vec<Value> = ran.report["settings"]["load_sweep"]
        .as_array()
        .unwrap()
        .clone();
    let specs: Vec<&Value> = levels.iter().map(|l| &l["specs"]).collect();
    assert_eq!(
        specs,
        vec![
            &serde_json::json!(["cpu:1:mixed"]),
            &serde_json::json!(["cpu:1:mixed", "irq:250:work=2000ns"]),
            &serde_json::json!(["cpu:1:mixed", "irq:2000:work=2000ns"]),
        ]
    );
    let rs = results(&ran.report);
    assert_eq!(rs.len(), 2 * levels.len(), "each figure once per level");
    for (i, r) in rs.iter().enumerate() {
        assert_eq!(
            &r["load"]["specs"],
            specs[i / 2],
            "levels run in order: {r}"
        );
    }
    check_corrections(&ran.report);
    let out = &ran.stdout;
    for label in ["no irq", "irq 250 Hz", "irq 2000 Hz"] {
        assert!(out.contains(label), "{label}: {out}");
    }
    // One table per figure, the levels as its columns.
    assert!(
        out.lines().any(|l| l.contains("rhealstone-task-switch")
            && l.contains("no irq")
            && l.contains("irq 2000 Hz")),
        "{out}"
    );
}

#[test]
fn the_rtos_load_preset_prints_the_studys_three_tables() {
    let _g = serial();
    let sb = Sandbox::new();
    // The preset's own budget, shortened: one level of interrupts, short
    // periods and figures.
    let ran = Run::new(&sb, &["run", "--preset", "rtos-load"])
        .args(&["--load-sweep", "irq:1000"])
        .args(&["--period", "100ms", "--duration", "100ms"])
        .short()
        .json()
        .schema()
        .limit(Duration::from_secs(180))
        .ok();
    ran.assert_released(&sb);
    let out = &ran.stdout;
    for table in [
        "1. Fail_sys per interrupt frequency",
        "2. Rhealstone task switch and preemption per level",
        "3. Thread-Metric scores per level",
    ] {
        assert!(out.contains(table), "{table}: {out}");
    }
    // timer-failures runs once, under the application load alone, at the
    // study's five frequencies; the others at both levels.
    let rs = results(&ran.report);
    let timer: Vec<&Value> = rs
        .iter()
        .filter(|r| r["benchmark"] == "timer-failures")
        .collect();
    assert_eq!(timer.len(), 5);
    for id in ["rhealstone-task-switch", "thread-metric-preemptive"] {
        assert_eq!(
            rs.iter().filter(|r| r["benchmark"] == id).count(),
            2,
            "{id}"
        );
    }
    check_corrections(&ran.report);
}

#[test]
fn a_load_study_refuses_names() {
    let sb = Sandbox::new();
    refused(
        &sb,
        &["run", "--preset", "rtos-load", "pipe"],
        &["chooses its own benchmarks"],
    );
}
