//! Behaviour of `ipcmark workload`: each workload in a shortened form, its own
//! checks (forks taken in pairs, results verified, the final sum), placement
//! and migration read back from the processes, clean-up on every path, the
//! JSON schema, and bad arguments. No test asserts a time.

use crate::util::*;
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::time::Duration;

/// Short philosopher runs: many meals in little time.
const QUICK_MEALS: &[&str] = &["--duration", "300ms", "--think", "1ms", "--eat", "1ms"];

/// Runs `ipcmark workload ARGS --json FILE` in a sandbox; returns the exit
/// code, stdout, stderr and the report, after checking that the run left
/// nothing behind and that the report fits the schema.
fn workload(args: &[&str]) -> (Option<i32>, String, String, Value) {
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["workload"])
        .args(args)
        .json()
        .schema()
        .run();
    assert!(
        !ran.stderr.contains("panicked"),
        "{args:?} panicked:\n{}",
        ran.stderr
    );
    ran.assert_released(&sb);
    (ran.code(), ran.stdout, ran.stderr, ran.report)
}

fn runs(report: &Value) -> Vec<&Value> {
    report["configurations"]
        .as_array()
        .expect("configurations")
        .iter()
        .flat_map(|c| c["runs"].as_array().expect("runs"))
        .collect()
}

fn processes(run: &Value) -> &Vec<Value> {
    run["processes"].as_array().expect("processes of an ok run")
}

#[test]
fn philosophers_eat_in_pairs_and_their_meals_add_up() {
    let _g = serial();
    for mech in ["sysv-sem", "posix-sem", "futex"] {
        let mut args = vec!["philosophers", "--mechanism", mech, "--runs", "2"];
        args.extend_from_slice(QUICK_MEALS);
        let (code, out, err, report) = workload(&args);
        assert_eq!(code, Some(0), "{mech}: {err}\n{out}");
        assert_eq!(report["complete"], true);
        let rs = runs(&report);
        assert_eq!(rs.len(), 2, "{mech}");
        for r in rs {
            assert_eq!(r["status"], "ok", "{mech}: {r}");
            let ps = processes(r);
            assert_eq!(ps.len(), 5, "five philosophers by default");
            let meals: u64 = ps.iter().map(|p| uint(&p["ops"])).sum();
            assert!(meals > 0, "{mech}: nobody ate");
            assert_eq!(meals as f64, r["figure"].as_f64().unwrap(), "{mech}");
            assert_eq!(meals as f64, r["metrics"]["total_meals"].as_f64().unwrap());
            for p in ps {
                let c = &p["counters"];
                assert_eq!(uint(&c["meals"]), uint(&p["ops"]), "{mech}: {p}");
                // Every meal was checked twice against an atomic snapshot of
                // the whole table: both forks taken, by this philosopher alone.
                assert_eq!(
                    uint(&c["table_checks"]),
                    2 * uint(&c["meals"]),
                    "{mech}: {p}"
                );
                // And twice against the forks' owner words, outside the
                // primitive: both held by this philosopher.
                assert_eq!(
                    uint(&c["owner_checks"]),
                    2 * uint(&c["meals"]),
                    "{mech}: {p}"
                );
            }
            assert!(r["stopped_after_ns"].as_u64().is_some(), "{r}");
        }
        assert!(out.contains("fairness"), "{out}");
    }
}

#[test]
fn a_philosopher_holding_one_fork_alone_is_caught() {
    let _g = serial();
    for mech in ["sysv-sem", "posix-sem", "futex"] {
        // One fork at a time, lower-numbered first: no deadlock, but hungry
        // philosophers wait with one fork in hand, which the snapshots see.
        let (code, _, err, report) = workload(&[
            "philosophers",
            "--mechanism",
            mech,
            "--fault",
            "split-take",
            "--runs",
            "1",
            "--duration",
            "3s",
            "--think",
            "0",
            "--eat",
            "2ms",
        ]);
        assert_eq!(code, Some(1), "{mech}: {err}");
        let r = runs(&report)[0];
        assert_eq!(r["status"], "failed", "{mech}: {r}");
        let e = r["error"].as_str().unwrap();
        assert!(e.contains("held alone"), "{mech}: {e}");
        assert!(
            r.get("figure").is_none(),
            "a broken table produced a figure"
        );
    }
}

#[test]
fn two_philosophers_sharing_a_fork_are_caught() {
    let _g = serial();
    // The philosophers bypass the primitive: its own state shows nothing
    // wrong (every fork on the table, nobody eating), but neighbours eat
    // with the same fork, and its owner word says so.
    let (code, _, err, report) = workload(&[
        "philosophers",
        "--fault",
        "skip-forks",
        "--runs",
        "1",
        "--duration",
        "3s",
        "--think",
        "0",
        "--eat",
        "2ms",
    ]);
    assert_eq!(code, Some(1), "{err}");
    let r = runs(&report)[0];
    assert_eq!(r["status"], "failed", "{r}");
    let e = r["error"].as_str().unwrap();
    assert!(e.contains("two philosophers share a fork"), "{e}");
    assert!(
        r.get("figure").is_none(),
        "a broken table produced a figure"
    );
}

#[test]
fn calculator_results_are_checked() {
    let _g = serial();
    for (vector, ops) in [("7", "300"), ("20000", "3")] {
        let (code, _, err, report) = workload(&[
            "generator-calculator",
            "--vector",
            vector,
            "--ops",
            ops,
            "--runs",
            "1",
        ]);
        assert_eq!(code, Some(0), "{err}");
        let r = runs(&report)[0];
        let (v, n): (u64, u64) = (vector.parse().unwrap(), ops.parse().unwrap());
        let ps = processes(r);
        assert_eq!(ps[0]["role"], "generator");
        assert_eq!(uint(&ps[0]["ops"]), n);
        assert_eq!(uint(&ps[1]["ops"]), n);
        assert_eq!(uint(&ps[0]["counters"]["verified_elements"]), v * n);
        assert_eq!(uint(&ps[1]["counters"]["computed_elements"]), v * n);
        assert_eq!(
            r["metrics"]["verified_elements"].as_f64().unwrap(),
            (v * n) as f64
        );
    }
    let (code, out, _, report) = workload(&[
        "generator-calculator",
        "--ops",
        "100",
        "--runs",
        "1",
        "--fault",
        "corrupt",
    ]);
    assert_eq!(code, Some(1));
    // The cause is reported, not its consequence: the calculator's end of file
    // when the failing generator closes its pipes may be recorded first.
    let e = runs(&report)[0]["error"].as_str().unwrap().to_string();
    assert!(e.contains("generator") && e.contains("came back"), "{e}");
    assert!(out.contains("FAILED"), "{out}");
}

#[test]
fn shared_counter_ends_exactly_at_the_threshold() {
    let _g = serial();
    for (mech, array, threshold, passes) in [
        ("sysv-sem", "4B", None, 1000),
        ("posix-sem", "40B", Some("500"), 50),
        ("futex", "40KB", None, 100),
    ] {
        let mut args = vec![
            "shared-counter",
            "--mechanism",
            mech,
            "--array",
            array,
            "--runs",
            "2",
        ];
        if let Some(t) = threshold {
            args.extend_from_slice(&["--threshold", t]);
        }
        let (code, _, err, report) = workload(&args);
        assert_eq!(code, Some(0), "{mech}: {err}");
        let params = &report["settings"]["parameters"];
        assert_eq!(uint(&params["passes"]), passes, "{mech}");
        for r in runs(&report) {
            let m = &r["metrics"];
            assert_eq!(m["final_sum"], m["threshold"], "{mech}: {r}");
            assert_eq!(
                m["threshold"].as_f64().unwrap(),
                uint(&params["threshold"]) as f64
            );
            let done: u64 = processes(r).iter().map(|p| uint(&p["ops"])).sum();
            assert_eq!(done, passes, "{mech}: passes of both processes");
        }
    }
    let (code, _, _, report) = workload(&[
        "shared-counter",
        "--array",
        "40B",
        "--runs",
        "1",
        "--fault",
        "corrupt",
    ]);
    assert_eq!(code, Some(1));
    let e = runs(&report)[0]["error"].as_str().unwrap().to_string();
    assert!(e.contains("lost or doubled"), "{e}");
}

#[test]
fn placement_and_migration_are_read_back_from_the_processes() {
    let _g = serial();
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("SKIPPED: placement needs two CPUs, this test may use {cpus:?}");
        return;
    }
    let (a, b) = (cpus[0], cpus[1]);
    let place = format!("{a},{b},{b},{a},{b}");
    let every = format!("2:every=2:cpus={a},{b}");
    let at = format!("4:at=1:cpu={b}");
    let mut args = vec![
        "philosophers",
        "--runs",
        "1",
        "--place",
        &place,
        "--migrate",
        &every,
        "--migrate",
        &at,
    ];
    args.extend_from_slice(QUICK_MEALS);
    let (code, out, err, report) = workload(&args);
    assert_eq!(code, Some(0), "{err}");
    let r = runs(&report)[0];
    let ps = processes(r);
    let placed = [a, b, b, a, b];
    for (p, cpu) in ps.iter().zip(placed) {
        assert_eq!(uint(&p["cpu_placed"]), cpu as u64, "{p}");
        assert_eq!(
            uint(&p["cpu_start"]),
            cpu as u64,
            "placement not honoured: {p}"
        );
    }
    // Philosopher 2 moves every 2 meals, alternating: it is seen on both CPUs.
    let p2 = &ps[1];
    assert_eq!(uint(&p2["migrations"]), uint(&p2["ops"]) / 2, "{p2}");
    assert_eq!(uint(&p2["migration_misses"]), 0, "{p2}");
    if uint(&p2["migrations"]) > 0 {
        assert_eq!(p2["cpus_seen"], serde_json::json!([a, b]), "{p2}");
    }
    // Philosopher 4 moves once, before its first meal, and stays.
    let p4 = &ps[3];
    assert_eq!(uint(&p4["migrations"]), 1, "{p4}");
    assert_eq!(uint(&p4["cpu_end"]), b as u64, "{p4}");
    assert_eq!(p4["cpus_seen"], serde_json::json!([a, b]), "{p4}");
    // Unmigrated philosophers never left their CPU.
    assert_eq!(ps[0]["cpus_seen"], serde_json::json!([a]));
    assert_eq!(uint(&ps[0]["migrations"]), 0);
    assert!(out.contains("every move read back on its target"), "{out}");
    assert_eq!(
        report["settings"]["migrations"].as_array().unwrap().len(),
        2
    );

    // The pipe test's case: the calculator moves once, halfway through.
    let mig = format!("calculator:at=101:cpu={b}");
    let (code, _, err, report) = workload(&[
        "generator-calculator",
        "--ops",
        "200",
        "--runs",
        "1",
        "--place",
        &format!("{a},{a}"),
        "--migrate",
        &mig,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let ps = processes(runs(&report)[0]);
    assert_eq!(uint(&ps[1]["migrations"]), 1);
    assert_eq!(uint(&ps[1]["cpu_start"]), a as u64);
    assert_eq!(uint(&ps[1]["cpu_end"]), b as u64);
    assert_eq!(ps[0]["cpus_seen"], serde_json::json!([a]));

    // Unpinned processes report where they ran, and no placement.
    let (code, _, _, report) = workload(&["shared-counter", "--runs", "1", "--place", "free"]);
    assert_eq!(code, Some(0));
    for p in processes(runs(&report)[0]) {
        assert!(p["cpu_placed"].is_null(), "{p}");
        assert!(p["cpu_start"].is_u64(), "{p}");
    }
}

#[test]
fn packed_and_spread_print_both_tables_and_the_factor() {
    let _g = serial();
    let mut args = vec!["philosophers", "--runs", "1", "--place", "packed,spread"];
    args.extend_from_slice(QUICK_MEALS);
    let (code, out, err, report) = workload(&args);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("configuration packed"), "{out}");
    assert!(out.contains("configuration spread"), "{out}");
    assert!(out.contains("factor"), "{out}");
    let configs = report["configurations"].as_array().unwrap();
    assert_eq!(configs.len(), 2);
    let factors: Vec<f64> = configs
        .iter()
        .map(|c| c["summary"]["factor"].as_f64().expect("factor"))
        .collect();
    assert!(
        factors.contains(&1.0) && factors.iter().all(|&f| f >= 1.0),
        "{factors:?}"
    );
    // The schema is not vacuous: an ok run without its processes, or a
    // process without its CPU read back, is refused.
    let mut broken = report.clone();
    broken["configurations"][0]["runs"][0]
        .as_object_mut()
        .unwrap()
        .remove("processes");
    assert!(!schema_errors(WORKLOAD_SCHEMA, &broken).is_empty());
    let mut broken = report.clone();
    broken["configurations"][1]["runs"][0]["processes"][0]
        .as_object_mut()
        .unwrap()
        .remove("cpu_start");
    assert!(!schema_errors(WORKLOAD_SCHEMA, &broken).is_empty());

    let (code, out, _, report) = workload(&[
        "shared-counter",
        "--array",
        "40B",
        "--runs",
        "2",
        "--place",
        "packed,spread",
    ]);
    assert_eq!(code, Some(0));
    assert!(out.contains("mean") && out.contains("factor"), "{out}");
    assert_eq!(report["configurations"].as_array().unwrap().len(), 2);
}

/// Starts a long workload in its own process group, waits for its first
/// finished run, then signals it; checks the exit code, the partial JSON and
/// that nothing is left.
fn interrupt(args: &[&str], sig: i32, whole_group: bool, code: i32) {
    let sb = Sandbox::new();
    let json = sb.path("i.json");
    let mut argv = vec!["workload"];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["--json", json.to_str().unwrap()]);
    let child = sb.cmd(&argv).process_group(0).spawn().unwrap();
    let pid = child.id();
    assert!(
        eventually(Duration::from_secs(20), || json.exists()),
        "{args:?}: no JSON after the first run"
    );
    if whole_group {
        signal_group(pid, sig);
    } else {
        signal(pid, sig);
    }
    let out = wait_with_deadline(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
    let report = read_json(&json);
    assert_eq!(report["complete"], false);
    assert!(!runs(&report).is_empty(), "finished runs were kept");
    assert!(
        runs(&report).iter().all(|r| r["status"] == "ok"),
        "the interrupted run is not recorded"
    );
    assert!(schema_errors(WORKLOAD_SCHEMA, &report).is_empty());
    assert!(
        objects_of(pid).is_empty(),
        "{args:?}: left behind: {:?}",
        objects_of(pid)
    );
    assert!(
        eventually(Duration::from_secs(3), || ipcmark_processes().is_empty()),
        "{args:?}: processes left: {:?}",
        ipcmark_processes()
    );
}

#[test]
fn sigint_and_sigterm_release_every_semaphore_and_process() {
    let _g = serial();
    let long_philosophers = ["philosophers", "--runs", "20", "--duration", "500ms"];
    // Ctrl-C reaches every process of the group: the philosophers too.
    interrupt(&long_philosophers, libc::SIGINT, true, 130);
    // SIGTERM to the parent alone: it must end its children itself.
    interrupt(&long_philosophers, libc::SIGTERM, false, 143);
    let mut posix = long_philosophers.to_vec();
    posix.extend_from_slice(&["--mechanism", "posix-sem"]);
    interrupt(&posix, libc::SIGINT, false, 130);
    interrupt(
        &["shared-counter", "--array", "4MB", "--runs", "500"],
        libc::SIGINT,
        true,
        130,
    );
    interrupt(
        &["generator-calculator", "--ops", "20000", "--runs", "500"],
        libc::SIGTERM,
        true,
        143,
    );
}

#[test]
fn kill_9_leaves_a_semaphore_set_that_clean_removes() {
    let _g = serial();
    let sb = Sandbox::new();
    let child = sb
        .cmd(&[
            "workload",
            "philosophers",
            "--duration",
            "10s",
            "--runs",
            "1",
        ])
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(
        eventually(Duration::from_secs(10), || objects_of(pid)
            .iter()
            .any(|o| o.starts_with("sysv sem"))),
        "no semaphore set appeared"
    );
    signal(pid, libc::SIGKILL);
    let _ = wait_with_deadline(child, Duration::from_secs(10));
    // The philosophers die with their parent (PR_SET_PDEATHSIG).
    assert!(
        eventually(Duration::from_secs(3), || ipcmark_processes().is_empty()),
        "orphaned philosophers: {:?}",
        ipcmark_processes()
    );
    let out = sb.run(&["clean"], Duration::from_secs(10));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(objects_of(pid).is_empty(), "{:?}", objects_of(pid));
}

#[test]
fn bad_workload_arguments_exit_2_with_one_line_and_write_nothing() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("never.json");
    let j = json.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["workload", "banquet", "--json", j],
            "unknown workload 'banquet'",
        ),
        (&["workload", "--json", j], "name a workload"),
        (
            &["workload", "philosophers", "--place", "0,0,1", "--json", j],
            "3 CPU(s) for 5 processes",
        ),
        (
            &[
                "workload",
                "philosophers",
                "--place",
                "0,0,0,0,999",
                "--json",
                j,
            ],
            "CPU 999 does not exist",
        ),
        (
            &[
                "workload",
                "philosophers",
                "--place",
                "packed,0",
                "--json",
                j,
            ],
            "mixes",
        ),
        (
            &["workload", "philosophers", "--place", "tight", "--json", j],
            "unknown placement 'tight'",
        ),
        (
            &["workload", "philosophers", "--place", ";", "--json", j],
            "empty placement",
        ),
        (
            &[
                "workload",
                "generator-calculator",
                "--place",
                "0",
                "--json",
                j,
            ],
            "1 CPU(s) for 2 processes",
        ),
        (
            &[
                "workload",
                "philosophers",
                "--migrate",
                "2:every=10",
                "--json",
                j,
            ],
            "expected P:every=K:cpus=A,B",
        ),
        (
            &[
                "workload",
                "philosophers",
                "--migrate",
                "9:at=1:cpu=0",
                "--json",
                j,
            ],
            "no process 9",
        ),
        (
            &[
                "workload",
                "philosophers",
                "--migrate",
                "2:every=0:cpus=0,1",
                "--json",
                j,
            ],
            "at least 1",
        ),
        (
            &[
                "workload",
                "philosophers",
                "--migrate",
                "2:at=1:cpu=999",
                "--json",
                j,
            ],
            "CPU 999 does not exist",
        ),
        (
            &[
                "workload",
                "generator-calculator",
                "--migrate",
                "printer:at=1:cpu=0",
                "--json",
                j,
            ],
            "no process 'printer'",
        ),
        (
            &["workload", "philosophers", "--duration", "0s", "--json", j],
            "out of range",
        ),
        (
            &["workload", "philosophers", "--duration", "10", "--json", j],
            "invalid duration '10'",
        ),
        (
            &[
                "workload",
                "philosophers",
                "--philosophers",
                "1",
                "--json",
                j,
            ],
            "1",
        ),
        (
            &[
                "workload",
                "philosophers",
                "--philosophers",
                "20",
                "--mechanism",
                "futex",
                "--json",
                j,
            ],
            "at most 16",
        ),
        (
            &[
                "workload",
                "philosophers",
                "--mechanism",
                "carrier-pigeon",
                "--json",
                j,
            ],
            "carrier-pigeon",
        ),
        (
            &["workload", "philosophers", "--vector", "5", "--json", j],
            "--vector does not apply to philosophers",
        ),
        (
            &[
                "workload",
                "generator-calculator",
                "--duration",
                "1s",
                "--json",
                j,
            ],
            "--duration does not apply",
        ),
        (
            &[
                "workload",
                "generator-calculator",
                "--vector",
                "0",
                "--json",
                j,
            ],
            "0",
        ),
        (
            &["workload", "shared-counter", "--array", "6B", "--json", j],
            "4-byte elements",
        ),
        (
            &["workload", "shared-counter", "--array", "4XB", "--json", j],
            "invalid size '4XB'",
        ),
        (
            &[
                "workload",
                "shared-counter",
                "--array",
                "40B",
                "--threshold",
                "15",
                "--json",
                j,
            ],
            "multiple of the 10 element(s)",
        ),
        (
            &[
                "workload",
                "shared-counter",
                "--fault",
                "split-take",
                "--json",
                j,
            ],
            "does not apply",
        ),
        (
            &["workload", "philosophers", "--runs", "0", "--json", j],
            "0",
        ),
        (
            &["workload", "philosophers", "--json", "/no/such/dir/w.json"],
            "does not exist",
        ),
    ];
    refused_all(&sb, cases, Some(&json));
    assert!(ipcmark_processes().is_empty());
}

#[test]
fn help_lists_every_workload() {
    // Holds the lock: other tests count this binary's processes.
    let _g = serial();
    let sb = Sandbox::new();
    let out = sb.run(&["workload", "--help"], Duration::from_secs(10));
    assert!(out.status.success());
    for id in ["philosophers", "generator-calculator", "shared-counter"] {
        assert!(stdout(&out).contains(id), "{id} missing from help");
    }
}

/// Both reports embed the same environment record: their schemas must
/// describe it identically, or one of them has fallen behind the code.
#[test]
fn workload_and_run_schemas_describe_the_same_environment() {
    let read = |p: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let run = read("docs/schema/run.schema.json");
    let workload = read(WORKLOAD_SCHEMA);
    assert_eq!(
        run["properties"]["environment"], workload["properties"]["environment"],
        "docs/schema/workload.schema.json's environment differs from run.schema.json's"
    );
    // And the same record of what a --load did.
    for def in ["load", "load_source", "load_cpu"] {
        assert_eq!(
            run["$defs"][def], workload["$defs"][def],
            "docs/schema/workload.schema.json's $defs.{def} differs from run.schema.json's"
        );
    }
}
