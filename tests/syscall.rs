//! The `syscall` group and the `op` mode: every call runs in a shortened form
//! with consistent statistics, proves the call was made, reports in the
//! documented schema and leaves nothing behind; group names select and bad
//! names are refused. No test asserts a time.

use crate::util::*;
use serde_json::Value;
use std::collections::HashSet;
use std::time::Duration;

/// Every system call the issue names, by benchmark id.
const ISSUE_CALLS: &[&str] = &[
    "syscall-getpid",
    "syscall-gettid",
    "syscall-clock-gettime",
    "syscall-lseek",
    "syscall-stat",
    "syscall-open-close",
    "syscall-read-tmpfs",
    "syscall-read-disk",
    "syscall-write-tmpfs",
    "syscall-write-disk",
    "syscall-create-unlink",
    "syscall-mmap",
    "syscall-fork",
    "syscall-spawn",
];

/// `ipcmark run NAMES… SHORT… --json FILE` in a sandbox, which must
/// succeed; the report, the pid and the table.
fn run_short(sb: &Sandbox, names: &[&str], limit: Duration) -> (Value, u32, String) {
    let ran = Run::new(sb, &["run"])
        .args(names)
        .short()
        .json()
        .schema()
        .limit(limit)
        .ok();
    (ran.report, ran.pid, ran.stdout)
}

/// Checks one "ok" op result: statistics consistent with each other, and
/// evidence that every operation was performed.
fn assert_op_consistent(r: &Value, clocksource: &str) {
    let id = r["benchmark"].as_str().unwrap();
    assert_eq!(r["mode"], "op", "{id}");
    let l = &r["latency_ns"];
    let f = |k: &str| {
        l[k].as_f64()
            .unwrap_or_else(|| panic!("{id}: latency_ns.{k}"))
    };
    assert_latency_in_order(id, l);
    assert_populations(id, l, "batch_means", "single_operations");
    assert!(f("median") >= 0.0 && f("stddev") >= 0.0, "{id}");
    assert_median_among_samples(id, r, 2);
    assert!(r["loop_overhead_ns"].as_f64().unwrap() >= 0.0, "{id}");
    assert!(r["clock_overhead_ns"].as_f64().unwrap() >= 0.0, "{id}");
    assert!(r["iterations"].as_u64().unwrap() >= 1, "{id}");
    assert!(r["timed_ops"].as_u64().unwrap() >= 1, "{id}");
    assert!(
        r.get("timed_round_trips").is_none(),
        "{id}: round trips in op mode"
    );
    assert_eq!(
        r["cpus"].as_array().unwrap().len(),
        1,
        "{id}: one process, one CPU"
    );

    // The seccomp probe: every call the benchmark names was made.
    let calls = r["kernel_calls"].as_array().expect("kernel_calls");
    for c in calls {
        if c["must_enter"] == true {
            assert_eq!(c["entered"], true, "{id}: {c} was not proven");
        } else if clocksource == "tsc" {
            // The vDSO reads the TSC without entering the kernel.
            assert_eq!(c["entered"], false, "{id}: {c} entered the kernel");
        }
    }

    // The kernel's own counter grew by at least the work of every operation.
    let counted_per_op = match id {
        "syscall-read-tmpfs"
        | "syscall-read-disk"
        | "syscall-write-tmpfs"
        | "syscall-write-disk" => Some(65536),
        "syscall-create-unlink" => Some(1024),
        "syscall-fork" | "syscall-spawn" => Some(1),
        _ => None,
    };
    if let Some(per_op) = counted_per_op {
        let k = &r["kernel_counter"];
        assert_eq!(k["per_op"], per_op, "{id}: {k}");
        let ops = k["ops"].as_u64().unwrap();
        assert!(
            ops >= r["timed_ops"].as_u64().unwrap() + 2 * r["iterations"].as_u64().unwrap(),
            "{id}: the counter spans the samples and the histogram: {k}"
        );
        assert!(
            k["observed"].as_u64().unwrap() >= per_op * ops,
            "{id}: counter short of the operations: {k}"
        );
        assert_eq!(
            r["size_bytes"].as_u64().unwrap(),
            if per_op > 1 { per_op } else { 0 }
        );
    }
}

#[test]
fn syscall_group_runs_every_call_proves_it_and_leaves_nothing() {
    let _g = serial();
    let sb = Sandbox::new();
    let (report, pid, table) = run_short(&sb, &["syscall"], Duration::from_secs(120));
    assert_eq!(report["complete"], true);
    let clocksource = report["environment"]["clocksource"]
        .as_str()
        .unwrap()
        .to_string();
    let ids: Vec<String> = group("syscall")
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    let rs = results(&report);
    assert_eq!(rs.len(), ids.len(), "one figure per benchmark");
    for id in &ids {
        let r = rs
            .iter()
            .find(|r| r["benchmark"] == id.as_str())
            .unwrap_or_else(|| panic!("{id} produced no result"));
        match r["status"].as_str().unwrap() {
            "ok" => assert_op_consistent(r, &clocksource),
            "skipped" => {
                eprintln!("SKIPPED {id}: {}", r["reason"]);
                assert!(!r["reason"].as_str().unwrap().is_empty());
            }
            other => panic!("{id}: status {other}: {}", r["error"]),
        }
        assert!(table.contains(id.as_str()), "the table shows {id}");
    }
    assert!(sb.leftover_tmp().is_empty(), "{:?}", sb.leftover_tmp());
    assert!(objects_of(pid).is_empty(), "{:?}", objects_of(pid));
    assert!(ipcmark_processes().is_empty(), "{:?}", ipcmark_processes());
}

#[test]
fn list_shows_every_call_of_the_issue_in_its_group() {
    let entries = list();
    let syscall: HashSet<&str> = entries
        .iter()
        .filter(|e| e["group"] == "syscall")
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    for id in ISSUE_CALLS {
        assert!(syscall.contains(id), "{id} missing from list --json");
    }
    for e in entries.iter().filter(|e| e["group"] == "syscall") {
        assert_eq!(e["mode"], "op", "{e}");
        assert!(e.get("max_bytes").is_none(), "sizes do not apply: {e}");
        let calls = e["syscalls"].as_array().unwrap().len() + e["avoids"].as_array().unwrap().len();
        assert!(calls >= 1, "{e}: names no system call to prove");
    }
    assert!(
        entries
            .iter()
            .any(|e| e["group"] == "ipc" && e["mode"] == "pingpong"),
        "the mechanisms are still listed"
    );
    let sb = Sandbox::new();
    let out = sb.run(&["list"], Duration::from_secs(10));
    assert!(out.status.success());
    let text = stdout(&out);
    for id in ISSUE_CALLS {
        assert!(text.contains(id), "list table lacks {id}");
    }
    for g in ["ipc", "syscall", "sched", "rtos", "timer"] {
        assert!(text.contains(&format!("  {g} ")), "list names group {g}");
    }
}

#[test]
fn op_results_validate_against_the_schema_beside_pingpong_ones() {
    let _g = serial();
    let sb = Sandbox::new();
    let (report, _, _) = run_short(
        &sb,
        &[
            "pipe",
            "syscall-getpid",
            "syscall-read-tmpfs",
            "--sizes",
            "64",
        ],
        Duration::from_secs(60),
    );
    let validator = validator(RUN_SCHEMA);
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    let modes: Vec<(&str, &str)> = results(&report)
        .iter()
        .map(|r| {
            (
                r["benchmark"].as_str().unwrap(),
                r["mode"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        modes,
        vec![
            ("pipe", "pingpong"),
            ("syscall-getpid", "op"),
            ("syscall-read-tmpfs", "op")
        ]
    );
    // An op result that claims round trips, or a pingpong one that claims
    // kernel calls, is refused by the schema.
    let mut bad = report.clone();
    bad["results"][1]["timed_round_trips"] = 5.into();
    bad["results"][0]["kernel_calls"] = Value::Array(vec![]);
    // Both records are refused (each may break more than one rule).
    let refused: std::collections::BTreeSet<String> = validator
        .iter_errors(&bad)
        .map(|e| e.instance_path().to_string())
        .collect();
    assert_eq!(
        refused.into_iter().collect::<Vec<_>>(),
        vec!["/results/0".to_string(), "/results/1".to_string()]
    );
}

#[test]
fn names_and_groups_select_once_each_in_order() {
    let _g = serial();
    let sb = Sandbox::new();
    let (report, _, _) = run_short(
        &sb,
        &["syscall-mmap", "syscall-getpid", "syscall-mmap"],
        Duration::from_secs(60),
    );
    let ids: Vec<&str> = results(&report)
        .iter()
        .map(|r| r["benchmark"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["syscall-mmap", "syscall-getpid"]);
}

#[test]
fn unknown_and_reserved_names_exit_2_saying_what_is_allowed() {
    let sb = Sandbox::new();
    let json = sb.path("never.json");
    let j = json.to_str().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["run", "nosuch", "--json", j],
            &[
                "unknown benchmark or group 'nosuch'",
                "groups: ipc, syscall, sched, timer",
                "thread-metric-basic",
                "syscall-getpid",
                "pipe",
            ],
        ),
        (
            &["run", "rtos-nosuch", "--json", j],
            &["unknown benchmark or group 'rtos-nosuch'", "thread-metric"],
        ),
        (
            &["run", "syscall", "bogus-call", "--json", j],
            &["'bogus-call'"],
        ),
    ];
    refused_all(&sb, cases, Some(&json));
}

#[test]
fn sigterm_during_fork_and_file_benchmarks_releases_everything() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("i.json");
    // Long samples, so that the signal lands while processes and files exist.
    let (pid, out) = signal_after_first_save(
        &sb,
        &[
            "run",
            "syscall-fork",
            "syscall-create-unlink",
            "syscall-write-tmpfs",
            "--sample-time",
            "300ms",
            "--json",
            json.to_str().unwrap(),
        ],
        &json,
        Duration::from_secs(20),
        libc::SIGTERM,
    );
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    let report = read_json(&json);
    assert_eq!(report["complete"], false);
    assert!(!results(&report).is_empty(), "partial results were kept");
    assert_released(&sb, pid);
}

#[test]
fn kill_9_then_clean_removes_a_benchmarks_files() {
    let _g = serial();
    let sb = Sandbox::new();
    // The disk file lives in the sandbox's TMPDIR for the whole figure.
    let child = sb
        .cmd(&["run", "syscall-read-disk", "--sample-time", "500ms"])
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(
        eventually(Duration::from_secs(10), || !sb.leftover_tmp().is_empty()),
        "no benchmark directory appeared"
    );
    signal(pid, libc::SIGKILL);
    let _ = wait_with_deadline(child, Duration::from_secs(10));
    let out = sb.run(&["clean"], Duration::from_secs(10));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("removed"), "{}", stdout(&out));
    assert!(sb.leftover_tmp().is_empty(), "{:?}", sb.leftover_tmp());
    assert!(objects_of(pid).is_empty(), "{:?}", objects_of(pid));
}

#[test]
fn readme_documents_every_benchmark() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    for e in list().iter().filter(|e| e["mode"] == "op") {
        let id = e["id"].as_str().unwrap();
        assert!(
            readme.contains(&format!("| `{id}` |")),
            "README.md has no row for {id}"
        );
    }
    assert!(
        readme.contains("ipcmark run syscall"),
        "README shows the group's usage"
    );
}
