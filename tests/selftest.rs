//! `ipcmark selftest`: A/A pairs of a tiny suite, its record (schema and
//! counts, never a rate: the rate is the machine's), the runs it marks in
//! the history and leaves out of `watch`, and a stop that keeps the pairs
//! done.

use crate::util::*;
use std::time::Duration;

const SCHEMA: &str = "docs/schema/selftest.schema.json";

/// A marked run: its id, its pair and its side.
type Mark = (i64, i64, String);

/// The runs the selftest marked, and its records, as the history holds them.
fn marked(db: &std::path::Path) -> (Vec<Mark>, Vec<Option<String>>) {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT run_id, pair, side FROM selftest_runs ORDER BY run_id")
        .unwrap();
    let runs = s
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut s = c
        .prepare("SELECT record FROM selftests ORDER BY id")
        .unwrap();
    let records = s
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (runs, records)
}

/// How many runs the selftest has marked so far (0 before the history
/// has its tables).
fn marked_so_far(db: &std::path::Path) -> i64 {
    rusqlite::Connection::open(db)
        .and_then(|c| c.query_row("SELECT count(*) FROM selftest_runs", [], |r| r.get(0)))
        .unwrap_or(0)
}

#[test]
fn two_pairs_give_a_record_with_their_counts_and_mark_their_runs() {
    let _g = serial();
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    let json = sb.path("selftest.json");
    let ran = Run::new(
        &sb,
        &[
            "selftest",
            "--pairs",
            "2",
            "--suite",
            "pipe,eventfd",
            "--sizes",
            "64",
        ],
    )
    .db(&db)
    .arg("--json")
    .arg(json.display().to_string())
    .limit(Duration::from_secs(120))
    .run();
    // 0 or 1 by the rate, which is this machine's: not asserted.
    assert!(matches!(ran.code(), Some(0 | 1)), "{}", ran.what());
    let r = read_json(&json);
    let errors = schema_errors(SCHEMA, &r);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    assert_eq!(r["pairs_asked"], 2);
    assert_eq!(r["pairs_done"], 2);
    assert!(r["stopped"].is_null());
    let pairs = r["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 2);
    // pipe 64 and eventfd 8 (eventfd's only size), in both runs of each pair.
    for p in pairs {
        assert_eq!(p["compared"], 2, "{p}");
        assert!(u(p, "flagged") <= 2 && u(p, "flagged_beyond_shift") <= 2);
        assert!(p["common_shift"].is_null(), "two figures: no shift");
    }
    assert_eq!(r["false_positives"]["compared"], 4);
    let flagged: u64 = pairs.iter().map(|p| u(p, "flagged")).sum();
    assert_eq!(u(&r["false_positives"], "flagged"), flagged);
    assert_eq!(r["figures"].as_array().unwrap().len(), 2);
    assert!(
        r["figures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["compared"] == 2)
    );
    assert_eq!(r["passed"], ran.code() == Some(0));
    assert!(ran.stdout.contains("false-positive rate"), "{}", ran.stdout);
    // Each pair judged as check judges it at --max-regression's default:
    // counts, never the rate, which is the machine's.
    let c = &r["check_false_failures"];
    assert_eq!(c["max_regression"].as_f64(), Some(0.05), "{c}");
    assert_eq!(c["max_common_shift_from"], "default", "{c}");
    assert_eq!(u(c, "pairs"), 2, "{c}");
    let failed = pairs
        .iter()
        .filter(|p| p["check_failed"].as_bool().unwrap())
        .count() as u64;
    assert_eq!(u(c, "failed"), failed, "{c}");
    assert!(
        ran.stdout
            .contains("false failures of `check --max-regression 5%`"),
        "{}",
        ran.stdout
    );
    // Its four runs are in the history, marked pair by pair, with its record.
    let ids: Vec<i64> = pairs
        .iter()
        .flat_map(|p| [p["run_a"].as_i64().unwrap(), p["run_b"].as_i64().unwrap()])
        .collect();
    let (runs, records) = marked(&db);
    assert_eq!(
        runs,
        vec![
            (ids[0], 1, "a".into()),
            (ids[1], 1, "b".into()),
            (ids[2], 2, "a".into()),
            (ids[3], 2, "b".into())
        ]
    );
    assert_eq!(records.len(), 1);
    let kept: serde_json::Value = serde_json::from_str(records[0].as_deref().unwrap()).unwrap();
    assert_eq!(kept, r);
    // watch leaves them out unless asked.
    let w = Run::new(&sb, &["watch"]).db(&db).ok();
    assert!(w.stdout.contains("in 0 series over 0 runs"), "{}", w.stdout);
    let w = Run::new(&sb, &["watch", "--selftest-runs"]).db(&db).ok();
    assert!(w.stdout.contains("in 2 series over 4 runs"), "{}", w.stdout);
}

#[test]
fn a_stop_ends_it_with_the_pairs_done() {
    let _g = serial();
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    let json = sb.path("selftest.json");
    let (db_s, json_s) = (db.display().to_string(), json.display().to_string());
    let argv = [
        "selftest", "--pairs", "50", "--suite", "eventfd", "--db", &db_s, "--json", &json_s,
    ];
    let child = sb.cmd(&argv).spawn().unwrap();
    let pid = child.id();
    // Once the first pair is marked, stop it during a later run.
    assert!(
        eventually(Duration::from_secs(60), || db.exists()
            && marked_so_far(&db) >= 2),
        "no pair within 60 s"
    );
    signal(pid, libc::SIGINT);
    let out = wait_with_deadline(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(128 + libc::SIGINT), "{out:?}");
    let r = read_json(&json);
    assert!(schema_errors(SCHEMA, &r).is_empty());
    let done = u(&r, "pairs_done");
    assert!((1..50).contains(&done), "{r}");
    assert_eq!(r["pairs"].as_array().unwrap().len() as u64, done);
    assert_eq!(r["stopped"], "interrupted by SIGINT");
    assert!(stdout(&out).contains(&format!("stopped after {done} of 50 pairs")));
    assert_released(&sb, pid);
}
