//! Tracing in tests: whether tracefs can be used here, and the tracefs
//! instances ipcmark left behind.

use std::path::Path;

/// Where tracefs is mounted (and mounted by ipcmark where it is not).
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// tracefs held mounted at [`TRACEFS`] while a tracing test lives. Without
/// it the test could not see what a run leaves there: a run that mounts
/// tracefs itself unmounts it as it ends, and a run in a mount namespace of
/// its own mounts it where the test cannot look, so every check of the
/// instances would pass on an empty list.
pub struct Tracing(());

/// How many [`Tracing`]s live, and whether the first of them mounted tracefs
/// (the last one then unmounts it, leaving the machine as it was found).
static HELD: std::sync::Mutex<(usize, bool)> = std::sync::Mutex::new((0, false));

/// Whether tracing can be tested here (`Some`, holding tracefs mounted
/// until the guard drops); prints why not when it cannot.
pub fn tracing_or_skip(test: &str) -> Option<Tracing> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped {test}: tracing needs root");
        return None;
    }
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    if held.0 == 0 && !Path::new(TRACEFS).join("instances").is_dir() {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tracefs", "nodev", TRACEFS])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped {test}: tracefs cannot be mounted at {TRACEFS}");
            return None;
        }
        held.1 = true;
    }
    held.0 += 1;
    Some(Tracing(()))
}

impl Drop for Tracing {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
        held.0 -= 1;
        if held.0 == 0 && held.1 {
            let _ = std::process::Command::new("umount").arg(TRACEFS).status();
            held.1 = false;
        }
    }
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
