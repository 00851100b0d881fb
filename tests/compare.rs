//! `ipcmark compare` on synthetic reports: a known difference is found and
//! none where there is none, a shift of every result is told apart from one
//! beyond it, pass medians are tested when both runs have passes, and bad
//! input exits 2.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

/// A run report with one ok result per (benchmark, samples) pair: a real
/// report's other fields (tests/reports/ipc-quick.json), since compare reads
/// whole reports, with its own start, host and kernel.
fn synthetic_report(results: &[(&str, Vec<f64>)], extra: &[Value]) -> Value {
    let mut rs: Vec<Value> = results
        .iter()
        .map(|(name, samples)| {
            serde_json::json!({
                "benchmark": name, "mode": "pingpong", "size_bytes": 64, "status": "ok",
                "cpus": [0, 1], "samples_ns": samples,
            })
        })
        .collect();
    rs.extend_from_slice(extra);
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string("tests/reports/ipc-quick.json").unwrap())
            .unwrap();
    report["started_at"] = "2026-11-21T10:00:00Z".into();
    report["environment"]["hostname"] = "test".into();
    report["environment"]["kernel"] = "6.0".into();
    report["results"] = Value::Array(rs);
    report
}

/// The comparison of benchmark `name` in a comparison JSON.
fn compared(report: &Value, name: &str) -> Value {
    report["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["benchmark"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} not compared"))
}

/// Writes two run reports, compares them with `--json`; the command's
/// run (it must succeed), whose report is the comparison.
fn compare_reports(sb: &Sandbox, a: &Value, b: &Value) -> Ran {
    let (pa, pb) = (sb.path("a.json"), sb.path("b.json"));
    std::fs::write(&pa, a.to_string()).unwrap();
    std::fs::write(&pb, b.to_string()).unwrap();
    Run::new(sb, &["compare", pa.to_str().unwrap(), pb.to_str().unwrap()])
        .json_at(sb.path("cmp.json"))
        .limit(Duration::from_secs(20))
        .ok()
}

#[test]
fn compare_reports_a_known_ten_percent_difference_and_no_difference_for_equal_runs() {
    let sb = Sandbox::new();
    // Samples with noise of a few percent; B's "pipe" is A's shifted by 10%.
    let base: Vec<f64> = (0..11)
        .map(|i| 5000.0 + ((i * 37) % 11) as f64 * 25.0)
        .collect();
    let shifted: Vec<f64> = base.iter().map(|x| x * 1.10).collect();
    let reordered: Vec<f64> = base.iter().rev().copied().collect();
    let skipped = serde_json::json!({"benchmark": "posix-mq", "mode": "pingpong", "size_bytes": 65536,
        "status": "skipped", "reason": "limit", "cpus": []});
    let a = synthetic_report(
        &[
            ("pipe", base.clone()),
            ("tcp", base.clone()),
            ("udp", base.clone()),
        ],
        std::slice::from_ref(&skipped),
    );
    let b = synthetic_report(
        &[("pipe", shifted), ("tcp", reordered), ("fifo", base)],
        &[skipped],
    );
    let Ran {
        stdout: text,
        report,
        ..
    } = compare_reports(&sb, &a, &b);
    assert_eq!(report["schema"], "ipcmark.compare/1");
    let by_name = |n: &str| compared(&report, n);
    let pipe = by_name("pipe");
    assert_eq!(pipe["significant"], true, "{pipe}");
    assert_eq!(pipe["verdict"], "slower");
    assert!(
        (pipe["diff_percent"].as_f64().unwrap() - 10.0).abs() < 0.5,
        "{pipe}"
    );
    assert_eq!(pipe["interval_excludes_one"], true, "{pipe}");
    let tcp = by_name("tcp");
    assert_eq!(tcp["significant"], false, "{tcp}");
    assert_eq!(tcp["verdict"], "no significant difference");
    // Nothing dropped silently: one-sided and unmeasured results are listed.
    let unmatched: Vec<String> = report["unmatched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            format!(
                "{} {}",
                u["benchmark"].as_str().unwrap(),
                u["why"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        unmatched.iter().any(|u| u.starts_with("udp only in A")),
        "{unmatched:?}"
    );
    assert!(
        unmatched.iter().any(|u| u.starts_with("fifo only in B")),
        "{unmatched:?}"
    );
    assert!(
        unmatched
            .iter()
            .any(|u| u.starts_with("posix-mq not measured")),
        "{unmatched:?}"
    );
    assert!(text.contains("not compared: udp"), "{text}");
    assert!(
        text.contains("1 of 2 results differ significantly"),
        "{text}"
    );
}

#[test]
fn compare_separates_a_shift_of_every_result_from_one_beyond_it() {
    let sb = Sandbox::new();
    // Six results; B is A 8% slower throughout (the machine's speed), and
    // "tcp" 30% slower: only tcp differs beyond what all moved together.
    let names = ["pipe", "fifo", "tcp", "udp", "posix-mq", "eventfd"];
    let sample = |i: usize, k: usize| 3000.0 + 200.0 * k as f64 + ((i * 37 + k) % 11) as f64 * 15.0;
    let a: Vec<(&str, Vec<f64>)> = names
        .iter()
        .enumerate()
        .map(|(k, n)| (*n, (0..11).map(|i| sample(i, k)).collect()))
        .collect();
    let b: Vec<(&str, Vec<f64>)> = a
        .iter()
        .map(|(n, v)| {
            let f = if *n == "tcp" { 1.30 } else { 1.08 };
            (*n, v.iter().rev().map(|x| x * f).collect())
        })
        .collect();
    let Ran {
        stdout: text,
        report,
        ..
    } = compare_reports(&sb, &synthetic_report(&a, &[]), &synthetic_report(&b, &[]));
    let shift = &report["common_shift"];
    assert!(
        (shift["factor"].as_f64().unwrap() - 1.08).abs() < 0.01,
        "{shift}"
    );
    assert_eq!(shift["significant"], true, "{shift}");
    assert_eq!(shift["results"], 6);
    for c in report["comparisons"].as_array().unwrap() {
        assert_eq!(c["significant"], true, "every result moved: {c}");
        let beyond = &c["beyond_shift"];
        if c["benchmark"] == "tcp" {
            assert_eq!(beyond["verdict"], "slower", "{c}");
        } else {
            assert_eq!(beyond["significant"], false, "{c}");
        }
    }
    assert!(
        text.contains("6 of 6 results differ significantly")
            && text.contains("with no change at all about 0 would, by chance"),
        "{text}"
    );
    assert!(text.contains("1 of 6 differ beyond it"), "{text}");
}

#[test]
fn compare_tests_pass_medians_when_both_runs_have_passes() {
    let sb = Sandbox::new();
    // Each run's samples sit tightly around its own level (±0.5%), but its
    // passes spread ±8%: B's level 4% above A's is within that spread, while
    // a test on the samples alone calls it a difference. "tcp" is 40% slower
    // in every pass: a real change.
    let tight = |level: f64| -> Vec<f64> {
        (0..11)
            .map(|i| level * (1.0 + ((i * 7) % 11) as f64 * 0.001))
            .collect()
    };
    let with_passes = |name: &str, level: f64, passes: &[f64]| {
        serde_json::json!({
            "benchmark": name, "mode": "pingpong", "size_bytes": 64, "status": "ok",
            "cpus": [0, 1], "samples_ns": tight(level),
            "passes": { "count": passes.len(), "medians_ns": passes },
        })
    };
    let a = synthetic_report(
        &[],
        &[
            with_passes("pipe", 1000.0, &[1000.0, 1080.0, 940.0, 1030.0, 990.0]),
            with_passes("tcp", 5000.0, &[5000.0, 5400.0, 4700.0, 5150.0, 4950.0]),
        ],
    );
    let b = synthetic_report(
        &[],
        &[
            with_passes("pipe", 1040.0, &[1040.0, 960.0, 1100.0, 1000.0, 1020.0]),
            with_passes("tcp", 7000.0, &[7000.0, 7560.0, 6580.0, 7210.0, 6930.0]),
        ],
    );
    let Ran {
        stdout: text,
        report,
        ..
    } = compare_reports(&sb, &a, &b);
    let by_name = |n: &str| compared(&report, n);
    let pipe = by_name("pipe");
    assert_eq!(pipe["test"], "welch-passes", "{pipe}");
    assert!(pipe["mann_whitney"]["p"].as_f64().unwrap() < 0.05, "{pipe}");
    assert_eq!(pipe["significant"], false, "{pipe}");
    assert_eq!(pipe["verdict"], "no significant difference");
    assert!(pipe["welch"]["p"].as_f64().unwrap() > 0.3, "{pipe}");
    assert_eq!(pipe["p"], pipe["welch"]["p"]);
    let tcp = by_name("tcp");
    assert_eq!(tcp["significant"], true, "{tcp}");
    assert_eq!(tcp["verdict"], "slower");
    assert_eq!(tcp["interval_excludes_one"], true, "{tcp}");
    assert!(
        text.contains("1 of 2 results differ significantly (Welch's t on the pass medians"),
        "{text}"
    );
    assert!(!text.contains("without passes"), "{text}");
    // What it could not see: pipe's passes spread ±8%, so a change under
    // about 10% passes unseen (its 4% did); the table says so per figure.
    let mdc = |c: &Value| c["min_detectable_change"].as_f64().unwrap();
    assert!(mdc(&pipe) > 0.04 && mdc(&pipe) < 0.3, "{pipe}");
    assert!(mdc(&tcp) > 0.0, "{tcp}");
    assert!(text.contains("MDC %"), "{text}");
    let pipe_row = text.lines().find(|l| l.contains("│ pipe ")).unwrap();
    assert!(
        pipe_row.contains(&format!("{:.1}", mdc(&pipe) * 100.0)),
        "{text}"
    );
    assert!(
        text.contains("MDC % = the smallest change each test would have found 4 times in 5"),
        "{text}"
    );

    // One side without passes: the samples decide, and the output says what
    // that cannot see.
    let single = synthetic_report(&[("pipe", tight(1040.0)), ("tcp", tight(7000.0))], &[]);
    let ran = compare_reports(&sb, &a, &single);
    for c in ran.report["comparisons"].as_array().unwrap() {
        assert_eq!(c["test"], "mann-whitney-samples", "{c}");
        assert!(c["welch"].is_null(), "{c}");
        // The samples alone spread ±0.5%: they would see a far smaller
        // change, blind to the level's move between runs.
        assert!(mdc(c) < mdc(&pipe) / 4.0, "{c}");
    }
    assert!(
        ran.stdout.contains("without passes on both sides"),
        "{}",
        ran.stdout
    );
}

#[test]
fn compare_rejects_bad_input_with_exit_2() {
    let sb = Sandbox::new();
    let good = sb.path("good.json");
    std::fs::write(
        &good,
        synthetic_report(&[("pipe", vec![1.0, 2.0])], &[]).to_string(),
    )
    .unwrap();
    let wrong = sb.path("wrong.json");
    std::fs::write(&wrong, r#"{"schema": "something/9", "started_at": "x", "environment": {"hostname": "h", "kernel": "k"}, "results": []}"#).unwrap();
    let junk = sb.path("junk.json");
    std::fs::write(&junk, "not json").unwrap();
    let g = good.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["compare", g, "/no/such/file.json"],
            "cannot read /no/such/file.json",
        ),
        (
            &["compare", g, wrong.to_str().unwrap()],
            "schema 'something/9'",
        ),
        (
            &["compare", junk.to_str().unwrap(), g],
            "is not an ipcmark run report",
        ),
        (&["compare", g, g, "--alpha", "0.7"], "--alpha 0.7"),
        (&["compare", g], "<B>"),
    ];
    refused_all(&sb, cases, None);
}

/// A figure's identity is one definition (`FigureKey`): a warm and a cold
/// figure of one size are two figures in the history's keys, in `compare`
/// and in the HTML report's series, as are a one-way figure's pacings.
#[test]
fn warm_and_cold_figures_of_one_size_are_two_figures_everywhere() {
    let _g = serial();
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    // qnx-table4 measures vm-copy warm and cold at every size.
    Run::new(&sb, &["run", "--preset", "qnx-table4"])
        .sizes("64")
        .db(&db)
        .short()
        .ok();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let keys: Vec<String> = conn
        .prepare("SELECT key FROM figures WHERE key LIKE 'vm-copy/%' ORDER BY key")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(keys, ["vm-copy/pingpong/64", "vm-copy/pingpong/64/cold"]);

    let Ran {
        stdout: page,
        report: c,
        ..
    } = Run::new(&sb, &["compare", "last", "last"])
        .db(&db)
        .json()
        .limit(Duration::from_secs(60))
        .ok();
    assert!(page.contains("vm-copy (cold)"), "{page}");
    let modes: Vec<&str> = c["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["benchmark"] == "vm-copy")
        .map(|x| x["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["pingpong", "pingpong (cold)"], "{c}");
    assert!(c["unmatched"].as_array().unwrap().is_empty(), "{c}");

    let html = sb.path("r.html");
    Run::new(&sb, &["report", "last"])
        .db(&db)
        .args(&["--html", html.to_str().unwrap()])
        .limit(Duration::from_secs(60))
        .ok();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("vm-copy (cold)"),
        "no cold series in the report"
    );
}

/// Two explained runs of pipe 64 B (tests/reports/explain-a.json across
/// CPUs, explain-b.json on one CPU): compare names the part that moved
/// most, with every part of either run and the shares of the change; the
/// history keeps each anatomy (`show`), and the HTML report has the table.
#[test]
fn compare_of_two_explained_runs_names_the_part_that_moved_most() {
    let sb = Sandbox::new();
    let (a, b) = (
        "tests/reports/explain-a.json",
        "tests/reports/explain-b.json",
    );
    let read =
        |p: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let (ra, rb) = (read(a), read(b));
    let Ran {
        stdout: page,
        report: c,
        ..
    } = Run::new(&sb, &["compare", a, b])
        .json_at(sb.path("cmp.json"))
        .limit(Duration::from_secs(20))
        .ok();
    let pipe = compared(&c, "pipe");
    let moved = &pipe["parts"];
    let parts = moved["parts"].as_array().unwrap();
    // Every part of either anatomy, once.
    let names = |r: &Value| -> Vec<String> {
        r["results"][0]["explain"]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect()
    };
    let mut all = names(&ra);
    all.extend(names(&rb).into_iter().filter(|n| !names(&ra).contains(n)));
    assert_eq!(parts.len(), all.len(), "{moved}");
    let mean = |r: &Value, name: &str| -> f64 {
        r["results"][0]["explain"]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .map_or(0.0, |p| p["mean_ns"].as_f64().unwrap())
    };
    let (mut most, mut largest) = (String::new(), -1.0);
    for name in &all {
        let change = mean(&rb, name) - mean(&ra, name);
        let p = parts.iter().find(|p| p["name"] == name.as_str()).unwrap();
        assert!(
            (p["change_ns"].as_f64().unwrap() - change).abs() < 1e-6,
            "{p}"
        );
        if change.abs() > largest {
            (most, largest) = (name.clone(), change.abs());
        }
    }
    assert_eq!(moved["moved_most"], most.as_str(), "{moved}");
    let shares: f64 = parts
        .iter()
        .map(|p| p["share_of_change"].as_f64().unwrap())
        .sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
    assert!(
        page.contains("pipe 64 — where the round trip moved"),
        "{page}"
    );
    assert!(page.contains(&format!("moved most: {most}")), "{page}");

    // The history keeps the anatomy: `show` prints its waterfall.
    let db = sb.path("h.sqlite");
    Run::new(&sb, &["import", a, b])
        .db(&db)
        .limit(Duration::from_secs(20))
        .ok();
    let shown = Run::new(&sb, &["show", "last~1"])
        .db(&db)
        .limit(Duration::from_secs(20))
        .ok()
        .stdout;
    assert!(
        shown.contains("pipe 64 — anatomy of a round trip"),
        "{shown}"
    );
    let html = sb.path("r.html");
    Run::new(&sb, &["report", "last~1", "last"])
        .db(&db)
        .args(&["--html", html.to_str().unwrap()])
        .limit(Duration::from_secs(60))
        .ok();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("where the round trip moved"),
        "no parts table in the report"
    );
    assert!(
        page.contains("moved-most"),
        "the part that moved most is not marked"
    );
}
