//! Tracing in tests: whether tracefs can be used here, and the tracefs
//! instances ipcmark left behind.

use std::path::Path;

/// Where tracefs is mounted (and mounted by ipcmark where it is not).
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// Whether tracing can be tested here; prints why not when it cannot.
pub fn tracing_or_skip(test: &str) -> bool {
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
pub fn instances() -> Vec<String> {
    std::fs::read_dir(Path::new(TRACEFS).join("instances"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with("ipcmark-"))
                .collect()
        })
        .unwrap_or_default()
}

/// The tracefs instance of the run whose pid (in its own PID namespace) is
/// `pid`, if it has one now: `ipcmark-<pid>-<pidns>-<start>-<random>-trace-<n>`.
pub fn instance_of(pid: u32) -> Option<String> {
    let mark = format!("ipcmark-{pid}-");
    instances().into_iter().find(|n| n.starts_with(&mark))
}

/// ipcmark's tracefs instances whose run has ended: what a run left
/// behind. A live run's instance (another ipcmark tracing meanwhile, as
/// when two test suites share the machine) is its own business.
pub fn orphaned_instances() -> Vec<String> {
    instances()
        .into_iter()
        .filter(|n| {
            n.strip_prefix("ipcmark-")
                .and_then(|p| p.split('-').next()?.parse::<u32>().ok())
                .is_none_or(|pid| !Path::new(&format!("/proc/{pid}")).exists())
        })
        .collect()
}

/// Runs `ipcmark explain` with `argv` (after `explain`, without `--json`)
/// in `sb`, and checks what every traced run must give: success, a page
/// that says `says`, no instance left behind, a report valid against the
/// schema. Returns the page and the report.
pub fn explained(sb: &super::Sandbox, argv: &[&str], says: &str) -> (String, serde_json::Value) {
    let json = sb.path("explain.json");
    let mut args = vec!["explain"];
    args.extend(argv);
    args.extend(["--json", json.to_str().unwrap()]);
    let out = sb.run(&args, std::time::Duration::from_secs(120));
    let text = super::stdout(&out);
    assert!(out.status.success(), "{text}\n{}", super::stderr(&out));
    assert!(text.contains(says), "{text}");
    assert!(
        orphaned_instances().is_empty(),
        "left: {:?}",
        orphaned_instances()
    );
    let report = super::read_json(&json);
    let errors = super::schema_errors("docs/schema/run.schema.json", &report);
    assert!(errors.is_empty(), "{errors:#?}");
    (text, report)
}

/// A short `explain` of pipe at 64 B, one pass, saved nowhere; the tests
/// add `--round-trips N` and what else they need.
pub const EXPLAIN_PIPE: &[&str] = &[
    "explain",
    "pipe",
    "--sizes",
    "64",
    "--quick",
    "--passes",
    "1",
    "--no-save",
];
