//! `ipcmark watch` and `ipcmark check` on histories made by importing
//! reports built from a real one (tests/reports/) by scaling its figures:
//! medians, means, drift-corrected medians, samples and pass medians alike,
//! so every reader (watch's centres, compare's tests) sees the same change.

use crate::util::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A report of tests/reports/.
pub(crate) fn fixture(name: &str) -> Value {
    read_json(Path::new(&format!("tests/reports/{name}.json")))
}

fn scale_all(v: &mut Value, k: f64) {
    if let Some(x) = v.as_f64() {
        *v = Value::from(x * k);
    } else if let Some(a) = v.as_array_mut() {
        a.iter_mut().for_each(|x| scale_all(x, k));
    }
}

/// Figure `i` of `report` with every time that locates it times `k`.
pub(crate) fn scale(report: &mut Value, i: usize, k: f64) {
    let f = &mut report["results"][i];
    for path in [
        &["latency_ns", "median"][..],
        &["latency_ns", "mean"],
        &["sweep", "drift_corrected_median_ns"],
        &["samples_ns"],
        &["passes", "medians_ns"],
        &["passes", "drift_corrected_medians_ns"],
        &["precision", "interval_ns", "low"],
        &["precision", "interval_ns", "high"],
    ] {
        // `get_mut`, not indexing: an index inserts a null where a field is absent.
        let mut at = Some(&mut *f);
        for p in path {
            at = at.and_then(|v| v.get_mut(*p));
        }
        if let Some(v) = at {
            scale_all(v, k);
        }
    }
}

pub(crate) fn write(sb: &Sandbox, name: &str, report: &Value) -> PathBuf {
    let path = sb.path(name);
    std::fs::write(&path, serde_json::to_string_pretty(report).unwrap()).unwrap();
    path
}

pub(crate) fn import(sb: &Sandbox, db: &Path, files: &[PathBuf]) {
    let mut args = vec!["import".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    Run::new(sb, &argv).db(db).ok();
}

/// The index of `benchmark`'s figure in `report`.
pub(crate) fn figure(report: &Value, benchmark: &str) -> usize {
    results(report)
        .iter()
        .position(|f| f["benchmark"] == benchmark)
        .unwrap()
}

#[test]
fn check_fails_a_ten_percent_regression_and_passes_an_a_a_pair() {
    let sb = Sandbox::new();
    let a = fixture("op");
    // syscall-read-tmpfs: its samples lie within ±3% of their median.
    let mut b = a.clone();
    scale(&mut b, figure(&a, "syscall-read-tmpfs"), 1.10);
    let (fa, fb) = (write(&sb, "a.json", &a), write(&sb, "b.json", &b));
    let db = sb.path("h.sqlite");
    import(&sb, &db, &[fa.clone(), fb.clone()]);
    let json = sb.path("check.json");
    let ran = Run::new(&sb, &["check", "last~1", "last", "--max-regression", "5%"])
        .db(&db)
        .json_at(&json)
        .exits(1);
    assert!(
        ran.stdout.contains("check FAILED: 1 of 3"),
        "{}",
        ran.stdout
    );
    let line = ran
        .stdout
        .lines()
        .find(|l| l.contains("REGRESSED"))
        .unwrap_or_else(|| panic!("{}", ran.stdout));
    assert!(
        line.contains("syscall-read-tmpfs") && line.contains("+10.0"),
        "{line}"
    );
    let r = &ran.report;
    assert_eq!(r["schema"], "ipcmark.check/1");
    assert_eq!(
        (r["regressions"].as_u64(), r["passed"].as_bool()),
        (Some(1), Some(false))
    );
    assert_eq!(r["max_regression"].as_f64(), Some(0.05));
    // Allowed 15%, the same pair passes.
    Run::new(&sb, &["check", "last~1", "last", "--max-regression", "15%"])
        .db(&db)
        .exits(0);
    // A baseline named once, and files, name the same runs.
    Run::new(&sb, &["history", "--tag", "baseline", "last~1"])
        .db(&db)
        .ok();
    Run::new(&sb, &["check", "baseline"]).db(&db).exits(1);
    let (pa, pb) = (fa.to_str().unwrap(), fb.to_str().unwrap());
    Run::new(&sb, &["check", pa, pb]).exits(1);
    assert!(
        Run::new(&sb, &["history"])
            .db(&db)
            .ok()
            .stdout
            .contains("baseline")
    );
    // A/A: the same report twice.
    let aa = sb.path("aa.sqlite");
    import(&sb, &aa, &[fa.clone(), fa]);
    let ran = Run::new(&sb, &["check", "last~1", "last", "--max-regression", "5%"])
        .db(&aa)
        .exits(0);
    assert!(ran.stdout.contains("check passed"), "{}", ran.stdout);
}

/// The ipc-quick report with the op report's figures added: seven, and a
/// common shift needs five; with how many.
fn seven_figures() -> (serde_json::Value, usize) {
    let mut a = fixture("ipc-quick");
    let op = fixture("op");
    a["results"]
        .as_array_mut()
        .unwrap()
        .extend(results(&op).iter().cloned());
    let n = results(&a).len();
    assert!(n >= 5, "{n} figures");
    (a, n)
}

/// The gate fails what a CI gate is for: a figure the baseline measured
/// that the run failed, skipped or lacks, and a whole run slower beyond
/// the machine's range; an A/A pair passes.
#[test]
fn check_fails_a_lost_figure_and_a_whole_run_slowdown() {
    let sb = Sandbox::new();
    let (a, n) = seven_figures();
    let fa = write(&sb, "a.json", &a);
    let path = |p: &PathBuf| p.to_str().unwrap().to_string();

    // The first figure failed in the run: named, exit 1.
    let mut failed = a.clone();
    failed["results"][0]["status"] = "failed".into();
    failed["results"][0]["error"] = "the peer died".into();
    let fb = write(&sb, "failed.json", &failed);
    let ran = Run::new(&sb, &["check", &path(&fa), &path(&fb)]).exits(1);
    let name = results(&a)[0]["benchmark"].as_str().unwrap().to_string();
    let line = ran
        .stdout
        .lines()
        .find(|l| l.starts_with("LOST: "))
        .unwrap_or_else(|| panic!("{}", ran.stdout));
    assert!(
        line.contains(&name) && line.contains("the peer died"),
        "{line}"
    );
    assert!(ran.stdout.contains("lost in the run"), "{}", ran.stdout);

    // Absent from the run: fails, unless --allow-missing.
    let mut smaller = a.clone();
    smaller["results"].as_array_mut().unwrap().remove(0);
    let fs = write(&sb, "smaller.json", &smaller);
    Run::new(&sb, &["check", &path(&fa), &path(&fs)]).exits(1);
    Run::new(&sb, &["check", &path(&fa), &path(&fs), "--allow-missing"]).exits(0);

    // Every figure 30% slower: beyond the default range, the whole run
    // moved; a stated range of 40% takes it out.
    let mut slower = a.clone();
    for i in 0..n {
        scale(&mut slower, i, 1.30);
    }
    let fw = write(&sb, "slower.json", &slower);
    let json = sb.path("check.json");
    let ran = Run::new(&sb, &["check", &path(&fa), &path(&fw)])
        .json_at(&json)
        .exits(1);
    assert!(ran.stdout.contains("the whole run moved"), "{}", ran.stdout);
    let bound = &ran.report["shift_bound"];
    assert_eq!(
        (bound["exceeded"].as_bool(), bound["from"].as_str()),
        (Some(true), Some("default"))
    );
    Run::new(
        &sb,
        &["check", &path(&fa), &path(&fw), "--max-common-shift", "40%"],
    )
    .exits(0);

    // A/A.
    Run::new(&sb, &["check", &path(&fa), &path(&fa)]).exits(0);
}

/// A placement probe as a run records it: every probe at `ns`.
fn probe(ns: f64) -> serde_json::Value {
    let s = serde_json::json!({"median_ns": ns, "p10_ns": ns * 0.97, "p90_ns": ns * 1.03});
    serde_json::json!({"cpus": [0, 1], "start": s, "passes": [s, s], "end": s, "clock_ns": 0.1})
}

#[test]
fn check_fails_on_a_placement_change_and_names_it_not_the_code() {
    let sb = Sandbox::new();
    let (mut a, n) = seven_figures();
    a["placement_probe"] = probe(63.0);
    // The host moved the CPUs across caches: the probe and every figure
    // moved together.
    let mut b = a.clone();
    for i in 0..n {
        scale(&mut b, i, 1.45);
    }
    b["placement_probe"] = probe(327.0);
    let (fa, fb) = (write(&sb, "a.json", &a), write(&sb, "b.json", &b));
    let (pa, pb) = (fa.to_str().unwrap(), fb.to_str().unwrap());
    let json = sb.path("check.json");
    let ran = Run::new(&sb, &["check", pa, pb]).json_at(&json).exits(1);
    assert!(
        ran.stdout.contains(
            "placement: the host placed CPUs 0 and 1 differently: cache-line round trip 63 → 327 ns"
        ),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout
            .contains("check FAILED: the host placed the measured CPUs differently"),
        "{}",
        ran.stdout
    );
    assert!(!ran.stdout.contains("REGRESSED"), "{}", ran.stdout);
    assert_eq!(ran.report["placement"]["differ"], true);
    assert_eq!(ran.report["regressions"], 0);
    // Allowed, the figures are judged as they moved: the whole run did.
    let ran = Run::new(&sb, &["check", pa, pb, "--allow-placement-change"]).exits(1);
    assert!(ran.stdout.contains("the whole run moved"), "{}", ran.stdout);
    // compare names it too.
    let ran = Run::new(&sb, &["compare", pa, pb]).run();
    assert!(
        ran.stdout.contains("placement 63 → 327 ns"),
        "{}",
        ran.stdout
    );
    // One placement on both sides: an A/A pair passes.
    let mut same = a.clone();
    same["placement_probe"] = probe(65.0);
    let fs = write(&sb, "same.json", &same);
    Run::new(&sb, &["check", pa, fs.to_str().unwrap()]).exits(0);
}

#[test]
fn check_and_watch_refuse_bad_arguments_with_one_line() {
    let sb = Sandbox::new();
    let a = write(&sb, "a.json", &fixture("op"));
    let db = sb.path("h.sqlite");
    import(&sb, &db, std::slice::from_ref(&a));
    let a = a.to_str().unwrap();
    for (args, says) in [
        (
            vec!["check", a, a, "--max-regression", "150%"],
            "out of range",
        ),
        (
            vec!["check", a, a, "--max-regression", "x"],
            "invalid change",
        ),
        (vec!["check", a, a, "--alpha", "0.7"], "--alpha 0.7"),
        (vec!["check", "nosuchname", "last"], "names no run"),
        (vec!["watch", "--since", "yesterday"], "not a date"),
        (vec!["history", "--tag", "12", "last"], "cannot name a run"),
        (vec!["history", "--tag", "base"], "--tag"),
    ] {
        let ran = Run::new(&sb, &args).db(&db).exits(2);
        assert_eq!(ran.stderr.lines().count(), 1, "{args:?}: {}", ran.stderr);
        assert!(ran.stderr.contains(says), "{args:?}: {}", ran.stderr);
    }
}

/// 40 reports of ipc-quick, each figure with its own noise (3%, the spread
/// of one run's figure between runs here: see `measured_noise` in
/// src/analysis/watch.rs), every figure `step` times slower and the kernel
/// named `kernel` from run 21 on.
pub(crate) fn history(sb: &Sandbox, seed: u64, step: f64, kernel: &str) -> PathBuf {
    let base = fixture("ipc-quick");
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut normal = || {
        let u = 1.0 - rng.f64();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos()
    };
    let files: Vec<PathBuf> = (1..=40)
        .map(|run| {
            let mut r = base.clone();
            for i in 0..results(&base).len() {
                let k = (0.03 * normal()).exp() * if run >= 21 { step } else { 1.0 };
                scale(&mut r, i, k);
            }
            r["started_at"] = format!("2026-10-{:02}T12:00:00Z", run % 28 + 1).into();
            if run >= 21 {
                r["environment"]["kernel"] = kernel.into();
            }
            write(sb, &format!("run{run:02}.json"), &r)
        })
        .collect();
    let db = sb.path(&format!("watch-{seed}.sqlite"));
    import(sb, &db, &files);
    db
}

#[test]
fn watch_groups_a_step_of_every_figure_at_a_kernel_change() {
    let sb = Sandbox::new();
    let kernel = fixture("ipc-quick")["environment"]["kernel"]
        .as_str()
        .unwrap()
        .to_string();
    let db = history(&sb, 7, 1.10, "6.6.0-test");
    let json = sb.path("watch.json");
    let ran = Run::new(&sb, &["watch"]).db(&db).json_at(&json).ok();
    let r = &ran.report;
    assert_eq!(r["schema"], "ipcmark.watch/1");
    assert_eq!(r["runs"], 40);
    let groups = r["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{}", ran.stdout);
    let g = &groups[0];
    assert_eq!(
        (
            g["run_before"]["id"].as_i64(),
            g["run_after"]["id"].as_i64()
        ),
        (Some(20), Some(21))
    );
    assert_eq!(g["figures"].as_array().unwrap().len(), 4);
    assert_eq!(g["verdict"], "regression");
    let m = g["median_magnitude"].as_f64().unwrap();
    assert!((m - 0.10).abs() < 0.03, "{m}");
    assert_eq!(
        g["changed"],
        serde_json::json!([{"field": "kernel", "before": kernel, "after": "6.6.0-test"}])
    );
    assert!(
        ran.stdout.contains("20 → 21") && ran.stdout.contains("regression"),
        "{}",
        ran.stdout
    );
    // One mechanism's series only.
    let ran = Run::new(&sb, &["watch", "shm-futex"])
        .db(&db)
        .json_at(&json)
        .ok();
    let series = ran.report["series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    assert!(series.iter().all(|s| s["benchmark"] == "shm-futex"));
    // Another host's runs are not these.
    let ran = Run::new(&sb, &["watch", "--host", "elsewhere"])
        .db(&db)
        .ok();
    assert!(ran.stdout.starts_with("no change point"), "{}", ran.stdout);
}

#[test]
fn watch_finds_no_change_in_forty_a_a_runs() {
    let sb = Sandbox::new();
    let kernel = fixture("ipc-quick")["environment"]["kernel"]
        .as_str()
        .unwrap()
        .to_string();
    let db = history(&sb, 8, 1.0, &kernel);
    let ran = Run::new(&sb, &["watch"]).db(&db).ok();
    assert!(
        ran.stdout
            .starts_with("no change point in 4 series over 40 runs"),
        "{}",
        ran.stdout
    );
}

/// The `noise` kept in the history for `key`'s series, and every key kept.
fn kept(db: &Path) -> Vec<(String, Option<f64>)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut stmt = c
        .prepare("SELECT key, series FROM watch_series ORDER BY key")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|row| {
            let (key, series) = row.unwrap();
            let v: Value = serde_json::from_str(&series).unwrap();
            (key, v["noise"].as_f64())
        })
        .collect()
}

#[test]
fn a_new_run_recomputes_only_the_series_it_touched() {
    let sb = Sandbox::new();
    let kernel = fixture("ipc-quick")["environment"]["kernel"]
        .as_str()
        .unwrap()
        .to_string();
    let db = history(&sb, 9, 1.0, &kernel);
    Run::new(&sb, &["watch"]).db(&db).ok();
    let first = kept(&db);
    assert_eq!(first.len(), 4, "{first:?}");
    // Mark every series kept: a series taken as kept reports the mark.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE watch_series SET series = json_set(series, '$.noise', 0.123)",
        [],
    )
    .unwrap();
    drop(c);
    // A new run of pipe alone: only pipe's two series are computed again.
    let mut pipe = fixture("ipc-quick");
    let only_pipe: Vec<Value> = results(&pipe)
        .iter()
        .filter(|f| f["benchmark"] == "pipe")
        .cloned()
        .collect();
    pipe["results"] = Value::Array(only_pipe);
    import(&sb, &db, &[write(&sb, "pipe.json", &pipe)]);
    let json = sb.path("w.json");
    let ran = Run::new(&sb, &["watch"]).db(&db).json_at(&json).ok();
    for s in ran.report["series"].as_array().unwrap() {
        let (key, noise) = (s["key"].as_str().unwrap(), s["noise"].as_f64());
        if key.starts_with("pipe/") {
            assert_eq!(s["runs"], 41, "{key}");
            assert_ne!(noise, Some(0.123), "{key} was not computed again");
        } else {
            assert_eq!(s["runs"], 40, "{key}");
            assert_eq!(noise, Some(0.123), "{key} was computed again");
        }
    }
    assert_eq!(ran.report["runs"], 41);
    // --since computes a part of each series and keeps none of it.
    let before = kept(&db);
    Run::new(&sb, &["watch", "--since", "2026-10-15"])
        .db(&db)
        .ok();
    assert_eq!(kept(&db), before);
}

#[test]
fn report_draws_each_changed_series_with_its_change_point_and_advise_s_ranking() {
    let sb = Sandbox::new();
    let db = history(&sb, 7, 1.10, "6.6.0-test");
    let host = fixture("ipc-quick")["environment"]["hostname"]
        .as_str()
        .unwrap()
        .to_string();
    let advise = sb.path("advise.json");
    Run::new(&sb, &["advise", "--size", "64", "--host", &host])
        .db(&db)
        .json_at(&advise)
        .ok();
    let page = sb.path("report.html");
    let (page_s, advise_s) = (page.display().to_string(), advise.display().to_string());
    Run::new(
        &sb,
        &[
            "report", "last", "--html", &page_s, "--watch", "--advise", &advise_s,
        ],
    )
    .db(&db)
    .ok();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("id=\"watch\""), "no watch section");
    // Four series stepped at run 21: each drawn, its change marked a regression.
    assert_eq!(html.matches("<svg class=\"series\"").count(), 4);
    assert_eq!(html.matches("<line class=\"change regression\"").count(), 4);
    assert!(html.contains("<td>20 → 21</td>"));
    assert!(html.contains("id=\"advise\"") && html.contains("advise-ranking"));
    let ranked = read_json(&advise)["ranking"].as_array().unwrap().len();
    let table = html.split("advise-ranking").nth(1).unwrap();
    let table = table.split("</table>").next().unwrap();
    assert_eq!(table.matches("<tr><td>").count(), ranked);
    // Another record is refused as advise's, naming what it reads.
    let wrong = write(&sb, "run.json", &fixture("ipc-quick"));
    let ran = Run::new(
        &sb,
        &[
            "report",
            "last",
            "--html",
            &page_s,
            "--advise",
            &wrong.display().to_string(),
        ],
    )
    .db(&db)
    .exits(2);
    assert!(ran.stderr.contains("ipcmark.advise/1"), "{}", ran.stderr);
}
