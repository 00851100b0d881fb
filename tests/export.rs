//! The exports for CI dashboards on the fixture reports of tests/reports/:
//! `check --export-junit` and `--export-bmf`, GitHub annotations under
//! `GITHUB_ACTIONS=true`, `compare --export-bmf`, `watch --export-otava`,
//! and one short `run --export-bmf`; each file parsed back (serde_json, and
//! the XML's elements counted), none a time asserted.

use crate::util::*;
use crate::watch::{figure, fixture, import, scale, write};
use serde_json::Value;
use std::path::Path;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// A BMF file's benchmarks, each checked: a latency of value > 0 whose
/// bounds, where given, hold it (or a throughput), nothing else.
fn bmf(path: &Path) -> serde_json::Map<String, Value> {
    let v: Value = serde_json::from_str(&read(path)).expect("BMF is JSON");
    let map = v.as_object().expect("BMF is an object").clone();
    for (name, measures) in &map {
        let measures = measures.as_object().unwrap();
        assert!(!measures.is_empty(), "{name}");
        for (measure, m) in measures {
            assert!(
                ["latency", "throughput"].contains(&measure.as_str()),
                "{name}: {measure}"
            );
            let value = m["value"].as_f64().unwrap();
            assert!(value > 0.0, "{name}: {m}");
            if let (Some(lo), Some(hi)) = (m["lower_value"].as_f64(), m["upper_value"].as_f64()) {
                assert!(lo <= value && value <= hi, "{name}: {m}");
            }
        }
    }
    map
}

/// The `<testcase` and `<failure` elements of a JUnit file, and its
/// declared counts.
fn junit(path: &Path) -> (usize, usize, String) {
    let x = read(path);
    assert!(x.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
    assert!(x.ends_with("</testsuite>\n</testsuites>\n"), "{x}");
    (
        x.matches("<testcase ").count(),
        x.matches("<failure ").count(),
        x,
    )
}

/// The `check` of a report against itself with one figure 10% slower
/// (syscall-read-tmpfs, whose samples lie within ±3% of their median):
/// the two files.
fn regressed(sb: &Sandbox) -> (String, String) {
    let a = fixture("op");
    let mut b = a.clone();
    scale(&mut b, figure(&a, "syscall-read-tmpfs"), 1.10);
    let (fa, fb) = (write(sb, "a.json", &a), write(sb, "b.json", &b));
    (fa.display().to_string(), fb.display().to_string())
}

#[test]
fn check_writes_its_verdicts_as_junit_and_the_runs_figures_for_dashboards() {
    let sb = Sandbox::new();
    let (a, b) = regressed(&sb);
    let (x, j, g) = (
        sb.path("bmf.json"),
        sb.path("junit.xml"),
        sb.path("gab.json"),
    );
    let ran = Run::new(&sb, &["check", &a, &b, "--max-regression", "5%"])
        .args(&["--export-junit", j.to_str().unwrap()])
        .args(&["--export-bmf", x.to_str().unwrap()])
        .args(&["--export-gab", g.to_str().unwrap()])
        .exits(1);
    // Not under GitHub Actions: no workflow command.
    assert!(!ran.stdout.contains("::error"), "{}", ran.stdout);
    let (cases, failures, xml) = junit(&j);
    assert_eq!((cases, failures), (3, 1), "{xml}");
    assert!(
        xml.contains("<testcase classname=\"syscall-read-tmpfs\" name=\"op 64K\">\n      <failure message=\"10.0% slower"),
        "{xml}"
    );
    assert!(xml.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"0\""));
    // The run's figures, named as the history keys them.
    let figures = bmf(&x);
    let names: Vec<&str> = figures.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "syscall-getpid/op/0",
            "syscall-read-tmpfs/op/65536",
            "sched-ctx-2/op/0"
        ]
    );
    let b_report = read_json(Path::new(&b));
    let median = results(&b_report)[1]["latency_ns"]["median"].as_f64();
    assert_eq!(
        figures["syscall-read-tmpfs/op/65536"]["latency"]["value"].as_f64(),
        median
    );
    let gab: Value = serde_json::from_str(&read(&g)).unwrap();
    let gab = gab.as_array().unwrap();
    assert_eq!(gab.len(), 3);
    assert!(
        gab.iter()
            .all(|e| e["unit"] == "ns" && e["value"].as_f64() > Some(0.0))
    );
    assert_eq!(gab[1]["name"], "syscall-read-tmpfs/op/65536");

    // A/A: every case passes, and the files are written all the same.
    Run::new(&sb, &["check", &a, &a])
        .args(&["--export-junit", j.to_str().unwrap()])
        .exits(0);
    let (cases, failures, xml) = junit(&j);
    assert_eq!((cases, failures), (3, 0), "{xml}");
}

#[test]
fn check_under_github_actions_annotates_each_failure() {
    let sb = Sandbox::new();
    let (a, b) = regressed(&sb);
    let ran = Run::new(&sb, &["check", &a, &b])
        .by(|argv| {
            let mut c = sb.cmd(argv);
            c.env("GITHUB_ACTIONS", "true");
            c
        })
        .exits(1);
    let commands: Vec<&str> = ran.stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(commands.len(), 1, "{}", ran.stdout);
    assert!(
        commands[0].starts_with(
            "::error title=ipcmark check%3A syscall-read-tmpfs op 64K::10.0%25 slower"
        ),
        "{}",
        commands[0]
    );
    // The table is printed as ever, before them.
    assert!(
        ran.stdout.contains("check FAILED: 1 of 3"),
        "{}",
        ran.stdout
    );
    let passed = Run::new(&sb, &["check", &a, &a])
        .by(|argv| {
            let mut c = sb.cmd(argv);
            c.env("GITHUB_ACTIONS", "true");
            c
        })
        .exits(0);
    assert!(!passed.stdout.contains("::"), "{}", passed.stdout);
}

#[test]
fn compare_writes_bs_figures_for_bencher_and_its_verdicts_as_junit() {
    let sb = Sandbox::new();
    let (x, j) = (sb.path("bmf.json"), sb.path("compare.xml"));
    Run::new(
        &sb,
        &[
            "compare",
            "tests/reports/passes.json",
            "tests/reports/ipc-quick.json",
        ],
    )
    .args(&["--export-bmf", x.to_str().unwrap()])
    .args(&["--export-junit", j.to_str().unwrap()])
    .ok();
    let figures = bmf(&x);
    let quick = fixture("ipc-quick");
    assert_eq!(figures.len(), results(&quick).len());
    for f in results(&quick) {
        let name = format!(
            "{}/pingpong/{}",
            f["benchmark"].as_str().unwrap(),
            f["size_bytes"]
        );
        // Sampled in rounds: the drift-corrected median, as watch plots it.
        assert_eq!(
            figures[&name]["latency"]["value"].as_f64(),
            f["sweep"]["drift_corrected_median_ns"].as_f64(),
            "{name}"
        );
    }
    // pipe 64 in both; passes' getpid only in A, ipc-quick's three others only in B.
    let (cases, _, xml) = junit(&j);
    assert_eq!(cases, 5, "{xml}");
    assert_eq!(xml.matches("<skipped ").count(), 4, "{xml}");
    // Maps and taxes are not runs: the flags are refused before any work.
    let ran = Run::new(
        &sb,
        &[
            "compare",
            "tests/reports/map.json",
            "tests/reports/map.json",
            "--export-bmf",
            x.to_str().unwrap(),
        ],
    )
    .exits(2);
    assert!(
        ran.stderr.contains("--export-bmf: A and B are maps"),
        "{}",
        ran.stderr
    );
}

#[test]
fn an_export_that_cannot_be_written_is_one_line_and_a_failure() {
    let sb = Sandbox::new();
    let (a, _) = regressed(&sb);
    // Not writable: the check is done, the file cannot be made.
    let ran = Run::new(
        &sb,
        &["check", &a, &a, "--export-junit", "/proc/ipcmark.xml"],
    )
    .exits(1);
    assert_eq!(ran.stderr.lines().count(), 1, "{}", ran.stderr);
    assert!(
        ran.stderr
            .starts_with("ipcmark: cannot write /proc/ipcmark.xml: "),
        "{}",
        ran.stderr
    );
    // No such directory: bad usage, said before any work.
    let missing = sb.path("no/such/dir/b.json");
    let ran = Run::new(&sb, &["check", &a, &a])
        .args(&["--export-bmf", missing.to_str().unwrap()])
        .exits(2);
    assert_eq!(ran.stderr.lines().count(), 1, "{}", ran.stderr);
    assert!(ran.stderr.contains("does not exist"), "{}", ran.stderr);
    assert!(ran.stdout.is_empty(), "{}", ran.stdout);
}

#[test]
fn watch_writes_the_history_for_otava_with_its_config_and_the_newest_figures() {
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    let base = fixture("op");
    let mut files = Vec::new();
    for (i, k) in [1.0, 1.01, 0.99, 1.2].iter().enumerate() {
        let mut r = base.clone();
        r["started_at"] = format!("2026-11-0{}T10:00:00Z", i + 1).into();
        scale(&mut r, 0, *k);
        files.push(write(&sb, &format!("r{i}.json"), &r));
    }
    import(&sb, &db, &files);
    Run::new(&sb, &["history", "--tag", "baseline", "2"])
        .db(&db)
        .ok();
    let (csv, x) = (sb.path("history.csv"), sb.path("bmf.json"));
    Run::new(&sb, &["watch"])
        .db(&db)
        .args(&["--export-otava", csv.to_str().unwrap()])
        .args(&["--export-bmf", x.to_str().unwrap()])
        .ok();
    let text = read(&csv);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert_eq!(
        lines[0],
        "time,run,commit,tag,sched-ctx-2/op/0,syscall-getpid/op/0,syscall-read-tmpfs/op/65536"
    );
    assert!(
        lines[1].starts_with("2026-11-01 10:00:00 +0000,1,"),
        "{text}"
    );
    assert!(
        lines[2].starts_with("2026-11-02 10:00:00 +0000,2,"),
        "{text}"
    );
    assert!(lines[2].contains(",baseline,"), "{text}");
    // Each cell a number, getpid's scaled as its run was.
    let getpid = |line: &str| line.split(',').nth(5).unwrap().parse::<f64>().unwrap();
    let g0 = results(&base)[0]["latency_ns"]["median"].as_f64().unwrap();
    assert!((getpid(lines[4]) / g0 - 1.2).abs() < 1e-9, "{text}");
    // The configuration beside it names the file and every column.
    let config = read(&sb.path("history.otava.yaml"));
    assert!(config.contains("    type: csv\n"), "{config}");
    assert!(
        config.contains(&format!("    file: \"{}\"\n", csv.display())),
        "{config}"
    );
    assert!(config.contains("    time_column: time\n"), "{config}");
    for column in lines[0].split(',').skip(4) {
        assert!(config.contains(&format!(
            "      \"{column}\":\n        column: \"{column}\"\n"
        )));
    }
    // The newest run's figures for dashboards.
    let figures = bmf(&x);
    assert_eq!(figures.len(), 3);
    assert_eq!(
        figures["syscall-getpid/op/0"]["latency"]["value"].as_f64(),
        Some(g0 * 1.2)
    );

    // Another host's run: the exports are one host's, so --host is needed.
    let mut other = base.clone();
    other["environment"]["hostname"] = "elsewhere".into();
    import(&sb, &db, &[write(&sb, "other.json", &other)]);
    let ran = Run::new(&sb, &["watch", "--export-otava", csv.to_str().unwrap()])
        .db(&db)
        .exits(2);
    assert!(ran.stderr.contains("give --host"), "{}", ran.stderr);
    let host = base["environment"]["hostname"].as_str().unwrap();
    Run::new(&sb, &["watch", "--host", host])
        .db(&db)
        .args(&["--export-otava", csv.to_str().unwrap()])
        .ok();
    assert_eq!(read(&csv).lines().count(), 5);
}

#[test]
fn run_writes_its_figures_for_bencher_and_github_action_benchmark() {
    let _g = serial();
    let sb = Sandbox::new();
    let (x, g) = (sb.path("bmf.json"), sb.path("gab.json"));
    Run::new(&sb, &["run", "pipe"])
        .sizes("64")
        .short()
        .no_save()
        .args(&["--export-bmf", x.to_str().unwrap()])
        .args(&["--export-gab", g.to_str().unwrap()])
        .ok();
    let figures = bmf(&x);
    assert_eq!(figures.keys().collect::<Vec<_>>(), ["pipe/pingpong/64"]);
    let gab: Value = serde_json::from_str(&read(&g)).unwrap();
    assert_eq!(gab[0]["name"], "pipe/pingpong/64");
    assert_eq!(gab[0]["unit"], "ns");
    assert_eq!(
        gab[0]["value"],
        figures["pipe/pingpong/64"]["latency"]["value"]
    );
}
