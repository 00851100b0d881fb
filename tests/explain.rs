//! `ipcmark explain`: the anatomy of a figure from a traced pass, and the
//! tracefs instance it traces in gone on every path (normal end, SIGINT,
//! SIGTERM, kill -9 then `ipcmark clean`). Tracing needs root and tracefs:
//! without them each test says why it is skipped. No test asserts a time.

use crate::util::*;
use std::time::Duration;

const ARGS: &[&str] = EXPLAIN_PIPE;

#[test]
fn a_figure_is_explained_and_its_instance_removed() {
    let _g = serial();
    let Some(_tracing) = tracing_or_skip("a_figure_is_explained_and_its_instance_removed") else {
        return;
    };
    let sb = Sandbox::new();
    let json = sb.path("explain.json");
    let mut argv = ARGS.to_vec();
    argv.extend(["--round-trips", "300", "--json", json.to_str().unwrap()]);
    let out = sb.run(&argv, Duration::from_secs(120));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(text.contains("anatomy of a round trip"), "{text}");
    assert!(text.contains("residual"), "{text}");
    assert!(
        orphaned_instances().is_empty(),
        "left: {:?}",
        orphaned_instances()
    );
    let report = read_json(&json);
    let errors = schema_errors("docs/schema/run.schema.json", &report);
    assert!(errors.is_empty(), "{errors:#?}");
    let ex = &results(&report)[0]["explain"];
    let parts = ex["parts"].as_array().expect("explain.parts");
    assert!(parts.iter().any(|p| p["name"] == "residual"), "{ex}");
    // The parts' means add up to the traced mean round trip.
    let sum: f64 = parts.iter().map(|p| p["mean_ns"].as_f64().unwrap()).sum();
    let mean = ex["traced_round_trip_ns"]["mean"].as_f64().unwrap();
    assert!((sum - mean).abs() <= 1e-6 * mean, "{sum} vs {mean}");
    assert!(ex["untraced_round_trip_ns"]["median"].as_f64().unwrap() > 0.0);
    assert!(ex["lost_events"].is_u64(), "{ex}");
}

/// Starts a long traced pass of pipe, waits for its instance, sends `sig`;
/// returns the run's pid and how it ended (its report is `r.json` in `sb`).
fn signal_during_the_pass(sb: &Sandbox, sig: i32) -> (u32, std::process::Output) {
    signal_during_the_pass_of(sb, "pipe", sig)
}

/// [`signal_during_the_pass`] of `mechanism`.
fn signal_during_the_pass_of(
    sb: &Sandbox,
    mechanism: &str,
    sig: i32,
) -> (u32, std::process::Output) {
    let json = sb.path("r.json");
    let mut argv = ARGS.to_vec();
    argv[1] = mechanism;
    argv.extend(["--round-trips", "200000", "--json", json.to_str().unwrap()]);
    let child = sb.cmd(&argv).spawn().expect("spawn ipcmark");
    let pid = child.id();
    assert!(
        eventually(Duration::from_secs(90), || instance_of(pid).is_some()),
        "no instance of {pid} within 90 s"
    );
    signal(pid, sig);
    (pid, wait_with_deadline(child, Duration::from_secs(60)))
}

#[test]
fn sigint_and_sigterm_remove_the_instance() {
    let _g = serial();
    let Some(_tracing) = tracing_or_skip("sigint_and_sigterm_remove_the_instance") else {
        return;
    };
    for (mechanism, sig) in [
        ("pipe", libc::SIGINT),
        ("pipe", libc::SIGTERM),
        ("memfd-pass", libc::SIGINT),
        ("memfd-pass", libc::SIGTERM),
    ] {
        let sb = Sandbox::new();
        let (pid, out) = signal_during_the_pass_of(&sb, mechanism, sig);
        assert!(
            instance_of(pid).is_none(),
            "{mechanism} signal {sig}: left {:?}",
            instances()
        );
        assert_released(&sb, pid);
        // The command says it was stopped, by its exit code and its report.
        assert_eq!(out.status.code(), Some(128 + sig), "{}", stderr(&out));
        assert!(stderr(&out).contains("interrupted by"), "{}", stderr(&out));
        let report = read_json(&sb.path("r.json"));
        assert_eq!(
            report["complete"], false,
            "signal {sig}: stored as complete"
        );
    }
}

#[test]
fn after_kill_9_clean_removes_the_instance() {
    let _g = serial();
    let Some(_tracing) = tracing_or_skip("after_kill_9_clean_removes_the_instance") else {
        return;
    };
    let sb = Sandbox::new();
    let (pid, _) = signal_during_the_pass(&sb, libc::SIGKILL);
    let name = instance_of(pid).expect("kill -9 removed it?");
    // Its peer notices its parent gone and ends.
    assert!(eventually(Duration::from_secs(10), || ipcmark_processes().is_empty()));
    let out = sb.run(&["clean"], Duration::from_secs(30));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("tracefs instance {name}")),
        "{}",
        stdout(&out)
    );
    assert!(!instances().contains(&name), "left: {:?}", instances());
    assert!(
        orphaned_instances().is_empty(),
        "left: {:?}",
        orphaned_instances()
    );
}

#[test]
fn a_name_that_is_no_mechanism_is_bad_usage() {
    let sb = Sandbox::new();
    let out = sb.run(&["explain", "no-such-thing"], Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not one"), "{}", stderr(&out));
}

/// Of the one figure of an `explain` run's report: the mean of each
/// wake-up part whose name ends in `kind` (`idle exit`, `rest`,
/// `run-queue wait`), summed over both sides.
fn wake_up_ns(report: &serde_json::Value, kind: &str) -> f64 {
    results(report)[0]["explain"]["parts"]
        .as_array()
        .expect("explain.parts")
        .iter()
        .filter(|p| {
            p["name"]
                .as_str()
                .is_some_and(|n| n.contains(" wake-up: ") && n.ends_with(kind))
        })
        .map(|p| p["mean_ns"].as_f64().unwrap())
        .sum()
}

/// Across two CPUs a side sleeping on its own CPU is woken there (its
/// wake-up is an idle exit and the rest of the wake-up on an idle CPU); on
/// one CPU it can only wait behind the side that woke it (a run-queue
/// wait). The test asserts that classification, not how much of the
/// difference between the two round trips the wake-ups carry: that share
/// is a figure of this machine, and `bench/explain_wakeups.sh` measures it
/// (a loaded or preempted vCPU moves it; a test must not depend on it).
#[test]
fn a_wake_up_across_cpus_is_on_an_idle_cpu_and_on_one_cpu_behind_the_waker() {
    let _g = serial();
    let test = "a_wake_up_across_cpus_is_on_an_idle_cpu_and_on_one_cpu_behind_the_waker";
    let Some(_tracing) = tracing_or_skip(test) else {
        return;
    };
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("skipped {test}: one CPU allowed");
        return;
    }
    let pair = format!("{},{}", cpus[0], cpus[1]);
    let sb = Sandbox::new();
    let mut reports = Vec::new();
    for (placement, file) in [("--cpus", "cross.json"), ("--same-cpu", "same.json")] {
        let json = sb.path(file);
        let mut argv = ARGS.to_vec();
        argv.extend([
            "--round-trips",
            "2000",
            "--cpu-latency",
            "off",
            "--cpus",
            &pair,
        ]);
        if placement == "--same-cpu" {
            argv.push("--same-cpu");
        }
        argv.extend(["--json", json.to_str().unwrap()]);
        let out = sb.run(&argv, Duration::from_secs(120));
        assert!(out.status.success(), "{}", stderr(&out));
        reports.push(read_json(&json));
    }
    let on_idle = |r| wake_up_ns(r, "idle exit") + wake_up_ns(r, "rest");
    let behind = |r| wake_up_ns(r, "run-queue wait");
    let (cross, same) = (&reports[0], &reports[1]);
    eprintln!(
        "{test}: across CPUs {:.0} ns on an idle CPU, {:.0} behind a task; on one CPU {:.0} \
         and {:.0} (means)",
        on_idle(cross),
        behind(cross),
        on_idle(same),
        behind(same)
    );
    assert!(on_idle(cross) > 0.0, "no wake-up on an idle CPU: {cross:?}");
    assert!(
        behind(same) > 0.0 && behind(same) > on_idle(same),
        "on one CPU the wake-ups are not behind the waker: {same:?}"
    );
}

/// Under an interrupt load the anatomy sets its interrupt parts beside the
/// load's own account of its interrupt time (`explain.load`).
#[test]
fn under_an_interrupt_load_the_anatomy_is_set_beside_the_loads_account() {
    let _g = serial();
    let Some(_tracing) =
        tracing_or_skip("under_an_interrupt_load_the_anatomy_is_set_beside_the_loads_account")
    else {
        return;
    };
    let sb = Sandbox::new();
    let json = sb.path("load.json");
    let mut argv = ARGS.to_vec();
    argv.extend([
        "--round-trips",
        "300",
        "--load",
        "irq:2000",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = sb.run(&argv, Duration::from_secs(120));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(text.contains("as it accounts it"), "{text}");
    let report = read_json(&json);
    let errors = schema_errors("docs/schema/run.schema.json", &report);
    assert!(errors.is_empty(), "{errors:#?}");
    let ex = &results(&report)[0]["explain"];
    let load = &ex["load"];
    assert!(load["fraction"].as_f64().unwrap() > 0.0, "{load}");
    // The interrupt parts it names are the anatomy's, summed.
    let parts = ex["parts"].as_array().unwrap();
    let interrupt: f64 = parts
        .iter()
        .filter(|p| {
            let n = p["name"].as_str().unwrap();
            n.ends_with("irq+softirq") || n.ends_with("irq handler (load)")
        })
        .map(|p| p["mean_ns"].as_f64().unwrap())
        .sum();
    let named = load["parts_ns"].as_f64().unwrap();
    assert!((interrupt - named).abs() <= 1e-6 * named.max(1.0), "{load}");
    assert!(
        orphaned_instances().is_empty(),
        "left: {:?}",
        orphaned_instances()
    );
    assert!(ipcmark_processes().is_empty(), "load processes left");
}

#[test]
fn where_tracefs_is_not_mounted_explain_mounts_it_and_unmounts_it_after() {
    let _g = serial();
    let Some(_tracing) =
        tracing_or_skip("where_tracefs_is_not_mounted_explain_mounts_it_and_unmounts_it_after")
    else {
        return;
    };
    if !unshare_works() {
        return;
    }
    let sb = Sandbox::new();
    // In a mount namespace of its own, tracefs unmounted there only: the
    // test's own mount still sees every instance the run makes.
    let script = format!(
        "umount {TRACEFS} && \"$0\" \"$@\"; rc=$?; \
         if [ -d {TRACEFS}/instances ]; then echo left-mounted; fi; exit $rc"
    );
    let mut argv = ARGS.to_vec();
    argv.extend(["--round-trips", "300"]);
    let before = ["--mount", "--propagation", "private", "sh", "-c", &script];
    let child = sb
        .wrapped("unshare", &before, &argv)
        .spawn()
        .expect("spawn unshare");
    let out = wait_with_deadline(child, Duration::from_secs(120));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("anatomy of a round trip"), "{text}");
    assert!(!text.contains("left-mounted"), "{text}");
    assert!(
        orphaned_instances().is_empty(),
        "left: {:?}",
        orphaned_instances()
    );
}
