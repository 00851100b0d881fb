//! `ipcmark explain`: the anatomy of a figure from a traced pass, and the
//! tracefs instance it traces in gone on every path (normal end, SIGINT,
//! SIGTERM, kill -9 then `ipcmark clean`). Tracing needs root and tracefs:
//! without them each test says why it is skipped. No test asserts a time.

use crate::util::*;
use std::path::Path;
use std::time::Duration;

const TRACEFS: &str = "/sys/kernel/tracing";

/// Whether tracing can be tested here; prints why not when it cannot.
fn tracing_or_skip(test: &str) -> bool {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped {test}: tracing needs root");
        return false;
    }
    let mounted = Path::new(TRACEFS).join("instances").is_dir();
    if !mounted {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tracefs", "nodev", TRACEFS])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped {test}: tracefs cannot be mounted at {TRACEFS}");
            return false;
        }
        let _ = std::process::Command::new("umount").arg(TRACEFS).status();
    }
    true
}

/// ipcmark's tracefs instances now (none when tracefs is not mounted).
fn instances() -> Vec<String> {
    std::fs::read_dir(Path::new(TRACEFS).join("instances"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with("ipcmark-"))
                .collect()
        })
        .unwrap_or_default()
}

const ARGS: &[&str] = &[
    "explain",
    "pipe",
    "--sizes",
    "64",
    "--quick",
    "--passes",
    "1",
    "--no-save",
];

#[test]
fn a_figure_is_explained_and_its_instance_removed() {
    let _g = serial();
    if !tracing_or_skip("a_figure_is_explained_and_its_instance_removed") {
        return;
    }
    let sb = Sandbox::new();
    let json = sb.path("explain.json");
    let mut argv = ARGS.to_vec();
    argv.extend(["--round-trips", "300", "--json", json.to_str().unwrap()]);
    let out = sb.run(&argv, Duration::from_secs(120));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(text.contains("anatomy of a round trip"), "{text}");
    assert!(text.contains("residual"), "{text}");
    assert!(instances().is_empty(), "left: {:?}", instances());
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

/// Starts a long traced pass, waits for its instance, sends `sig`; returns
/// the run's pid once it has ended (or been killed).
fn signal_during_the_pass(sb: &Sandbox, sig: i32) -> u32 {
    let mut argv = ARGS.to_vec();
    argv.extend(["--round-trips", "200000"]);
    let child = sb.cmd(&argv).spawn().expect("spawn ipcmark");
    let pid = child.id();
    let name = format!("ipcmark-{pid}");
    assert!(
        eventually(Duration::from_secs(90), || instances().contains(&name)),
        "no instance {name} within 90 s"
    );
    signal(pid, sig);
    let _ = wait_with_deadline(child, Duration::from_secs(60));
    pid
}

#[test]
fn sigint_and_sigterm_remove_the_instance() {
    let _g = serial();
    if !tracing_or_skip("sigint_and_sigterm_remove_the_instance") {
        return;
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let sb = Sandbox::new();
        let pid = signal_during_the_pass(&sb, sig);
        assert!(
            instances().is_empty(),
            "signal {sig}: left {:?}",
            instances()
        );
        assert_released(&sb, pid);
    }
}

#[test]
fn after_kill_9_clean_removes_the_instance() {
    let _g = serial();
    if !tracing_or_skip("after_kill_9_clean_removes_the_instance") {
        return;
    }
    let was_mounted = Path::new(TRACEFS).join("instances").is_dir();
    let sb = Sandbox::new();
    let pid = signal_during_the_pass(&sb, libc::SIGKILL);
    let name = format!("ipcmark-{pid}");
    assert!(instances().contains(&name), "kill -9 removed it?");
    // Its peer notices its parent gone and ends.
    assert!(eventually(Duration::from_secs(10), || ipcmark_processes().is_empty()));
    let out = sb.run(&["clean"], Duration::from_secs(30));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("tracefs instance {name}")),
        "{}",
        stdout(&out)
    );
    assert!(instances().is_empty(), "left: {:?}", instances());
    // The killed run could not unmount what it mounted.
    if !was_mounted {
        let _ = std::process::Command::new("umount").arg(TRACEFS).status();
    }
}

#[test]
fn a_name_that_is_no_mechanism_is_bad_usage() {
    let sb = Sandbox::new();
    let out = sb.run(&["explain", "getpid"], Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not one"), "{}", stderr(&out));
}
