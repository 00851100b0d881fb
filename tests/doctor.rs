//! `ipcmark doctor`: every check with its status and fix, as JSON and as a
//! table; as root and as `nobody`, who is told which checks need root.
//! No test asserts a check's status: that is this machine's.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);
const SCHEMA: &str = "docs/schema/doctor.schema.json";

/// The report of `doctor --json` run by `out`, checked: exit 0, its schema,
/// at least 15 checks with unique ids, each with a status, what it found
/// and a fix.
fn checked(out: &std::process::Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    let report: Value = serde_json::from_str(&stdout(out)).expect("doctor --json prints JSON");
    let errors = schema_errors(SCHEMA, &report);
    assert!(errors.is_empty(), "{errors:#?}");
    let checks = report["checks"].as_array().unwrap();
    assert!(checks.len() >= 15, "{} checks", checks.len());
    let mut ids: Vec<&str> = checks.iter().map(|c| c["id"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), checks.len(), "an id twice");
    for c in checks {
        assert!(!c["fix"].as_str().unwrap().is_empty(), "{c}");
        assert!(!c["found"].as_str().unwrap().is_empty(), "{c}");
    }
    report
}

#[test]
fn doctor_json_lists_every_check_with_its_status_and_fix() {
    let _g = serial();
    let sb = Sandbox::new();
    let report = checked(&sb.run(&["doctor", "--json"], LIMIT));
    let cpus = report["cpus"].as_array().unwrap();
    assert!(!cpus.is_empty() && cpus.len() <= 2, "{cpus:?}");
    let ids: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for id in [
        "cpu-governor",
        "steal-time",
        "cgroup-cpu-quota",
        "cpu-wakeup-latency",
        "virtualization",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    // One CPU chosen: the checks are about it alone.
    let cpu = cpus[0].as_u64().unwrap().to_string();
    let one = checked(&sb.run(&["doctor", "--json", "--cpus", &cpu], LIMIT));
    assert_eq!(one["cpus"], serde_json::json!([cpus[0]]));
}

#[test]
fn doctor_prints_a_table_and_a_count() {
    let _g = serial();
    let sb = Sandbox::new();
    let out = sb.run(&["doctor"], LIMIT);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(page.starts_with("ipcmark doctor: "), "{page}");
    assert!(page.contains("cpu-wakeup-latency"), "{page}");
    let last = page
        .lines()
        .rev()
        .find(|l| l.contains(" checks: "))
        .unwrap_or_else(|| panic!("{page}"));
    assert!(
        last.contains(" pass, ") && last.contains(" skipped"),
        "{last}"
    );
    assert!(!page.contains('\u{1b}'), "no colour into a pipe");
}

#[test]
fn doctor_refuses_cpus_it_may_not_use() {
    let sb = Sandbox::new();
    refused(&sb, &["doctor", "--cpus", "4000"], &["--cpus", "CPU 4000"]);
    refused(&sb, &["doctor", "--cpus", "x"], &["--cpus"]);
    // `--json` into a directory that does not exist: refused before any work.
    refused(
        &sb,
        &["doctor", "--json", "no/such/dir/out.json"],
        &["--json"],
    );
}

/// `--json PATH` writes the file, as every command's `--json` does; `-`
/// (or no value) is standard output; `list` takes its path after `=`.
#[test]
fn doctor_and_list_json_take_a_path() {
    let _g = serial();
    let sb = Sandbox::new();
    let path = sb.path("doctor.json");
    let out = sb.run(&["doctor", "--json", path.to_str().unwrap()], LIMIT);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let written = std::fs::read_to_string(&path).unwrap();
    let from_file: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert_eq!(from_file["schema"], "ipcmark.doctor/1");
    let dash = sb.run(&["doctor", "--json", "-"], LIMIT);
    let on_stdout: serde_json::Value = serde_json::from_str(&stdout(&dash)).unwrap();
    assert_eq!(on_stdout["schema"], "ipcmark.doctor/1");

    let list = sb.path("list.json");
    let arg = format!("--json={}", list.display());
    let out = sb.run(&["list", &arg], LIMIT);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let entries: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&list).unwrap()).unwrap();
    assert!(
        entries.as_array().is_some_and(|a| !a.is_empty()),
        "{entries}"
    );
    // `list --json presets`: the presets as JSON on stdout, as before.
    let presets = sb.run(&["list", "--json", "presets"], LIMIT);
    assert!(presets.status.success(), "{}", stderr(&presets));
    let p: serde_json::Value = serde_json::from_str(&stdout(&presets)).unwrap();
    assert!(p.as_array().is_some_and(|a| !a.is_empty()), "{p}");
}

#[test]
fn as_nobody_doctor_runs_and_says_which_checks_need_root() {
    let _g = serial();
    let Some(nobody) = Nobody::or_skip("as_nobody_doctor_…") else {
        return;
    };
    let sb = Sandbox::new();
    let out = wait_with_deadline(
        nobody.cmd(&sb, &["doctor", "--json"]).spawn().unwrap(),
        LIMIT,
    );
    let report = checked(&out);
    assert_eq!(report["root"], false);
    let checks = report["checks"].as_array().unwrap();
    let rooted: Vec<&Value> = checks.iter().filter(|c| c["needs_root"] == true).collect();
    assert!(!rooted.is_empty(), "no check needs root");
    let wakeup = checks
        .iter()
        .find(|c| c["id"] == "cpu-wakeup-latency")
        .unwrap();
    assert_eq!(wakeup["needs_root"], true);
    assert!(
        wakeup["found"].as_str().unwrap().contains("cannot be held"),
        "{wakeup}"
    );
    // The table names them.
    let out = wait_with_deadline(nobody.cmd(&sb, &["doctor"]).spawn().unwrap(), LIMIT);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(
        page.lines().next().unwrap().ends_with("(not root)"),
        "{page}"
    );
    let line = page
        .lines()
        .find(|l| l.starts_with("not root: "))
        .unwrap_or_else(|| panic!("no line naming the checks that need root:\n{page}"));
    for c in rooted {
        assert!(line.contains(c["id"].as_str().unwrap()), "{line}");
    }
}

#[test]
fn a_runs_report_carries_the_checks_that_need_no_window() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "syscall-getpid"])
        .short()
        .json()
        .schema()
        .limit(Duration::from_secs(60))
        .ok();
    let checks = ran.report["checks"]
        .as_array()
        .expect("checks in the run's report");
    assert!(checks.len() >= 10, "{} checks", checks.len());
    let ids: Vec<&str> = checks.iter().map(|c| c["id"].as_str().unwrap()).collect();
    for id in ["clocksource", "cgroup-cpu-quota", "cpu-wakeup-latency"] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    // Rates over a window are the doctor's alone.
    assert!(!ids.contains(&"busy-cpus"), "{ids:?}");
}
