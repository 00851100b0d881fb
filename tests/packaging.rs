//! What a packaged ipcmark ships beside the binary, and how a build is
//! identified: `--version` and every JSON report's `build` object name the
//! git commit.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

/// The commit `ipcmark --version` names: its word after "commit".
fn version_commit() -> (String, String) {
    let sb = Sandbox::new();
    let out = sb.run(&["--version"], Duration::from_secs(20));
    assert!(out.status.success(), "{}", stderr(&out));
    let line = stdout(&out);
    assert_eq!(line.lines().count(), 1, "{line:?}");
    let commit = line
        .split_once("(commit ")
        .and_then(|(_, rest)| rest.split([',', ';', ')']).next())
        .unwrap_or_else(|| panic!("no commit in {line:?}"))
        .to_string();
    (line.trim_end().to_string(), commit)
}

fn is_commit(c: &str) -> bool {
    c == "unknown" || (matches!(c.len(), 40 | 64) && c.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The commit of the checkout the tests run in, if git can say.
fn checkout_commit() -> Option<String> {
    if !std::path::Path::new(".git").exists() {
        return None;
    }
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn version_names_the_commit_and_the_features() {
    let (line, commit) = version_commit();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        line.starts_with(&format!("ipcmark {version} (commit ")),
        "{line}"
    );
    assert!(is_commit(&commit), "{line}: {commit:?} is not a commit");
    assert!(line.ends_with("; features: none)"), "{line}");
    // Built from this checkout (cargo re-runs the build script when HEAD moves).
    if let Some(head) = checkout_commit() {
        assert_eq!(commit, head, "{line}");
        assert!(
            line.contains(", clean tree;") || line.contains(", dirty tree;"),
            "{line}"
        );
    }
    // Every subcommand says the same.
    let sb = Sandbox::new();
    let out = sb.run(&["run", "--version"], Duration::from_secs(20));
    assert!(stdout(&out).contains(&commit), "{}", stdout(&out));
}

/// The `build` object of a report, checked against `--version`.
fn assert_build(report: &Value, commit: &str, what: &str) {
    let b = &report["build"];
    assert!(b.is_object(), "{what}: no build object");
    assert_eq!(b["version"], env!("CARGO_PKG_VERSION"), "{what}");
    assert_eq!(b["commit"], commit, "{what}");
    assert_eq!(b["features"], serde_json::json!([]), "{what}");
    if commit == "unknown" {
        assert!(b["dirty"].is_null(), "{what}: {b}");
    } else {
        assert!(b["dirty"].is_boolean(), "{what}: {b}");
    }
}

#[test]
fn every_json_report_carries_the_build() {
    let _g = serial();
    let (_, commit) = version_commit();
    let sb = Sandbox::new();
    // run_json checks each report against its schema.
    let ran = run_json(
        &sb,
        &args(SHORT, &["run", "syscall-getpid"]),
        Duration::from_secs(60),
    );
    ran.assert_success();
    assert_build(&ran.report, &commit, "run report");
    assert_eq!(
        ran.report["build"]["version"],
        ran.report["ipcmark_version"]
    );

    let run_json_path = sb.path("r.json");
    let run_json_path = run_json_path.to_str().unwrap();
    let cmp = sb.path("c.json");
    let out = sb.run(
        &[
            "compare",
            run_json_path,
            run_json_path,
            "--json",
            cmp.to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_build(&read_json(&cmp), &commit, "compare report");

    let wsb = Sandbox::new();
    let ran = run_json(
        &wsb,
        &[
            "workload",
            "generator-calculator",
            "--ops",
            "10",
            "--runs",
            "1",
        ],
        Duration::from_secs(60),
    );
    ran.assert_success();
    assert_build(&ran.report, &commit, "workload report");
}
