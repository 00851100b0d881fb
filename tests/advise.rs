//! `ipcmark advise` on a history made by importing real reports
//! (tests/reports/): the ranking and where each prediction came from, its
//! JSON, bad usage, and a history with nothing to rank.

use crate::util::*;
use std::path::Path;

/// A history holding tests/reports/`names`, imported in order.
fn history(sb: &Sandbox, names: &[&str]) -> std::path::PathBuf {
    let db = sb.path("h.sqlite");
    let mut args = vec!["import".to_string()];
    args.extend(names.iter().map(|n| format!("tests/reports/{n}.json")));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    Run::new(sb, &argv).db(&db).ok();
    db
}

/// The host the fixtures were measured on.
fn host() -> String {
    read_json(Path::new("tests/reports/cost-model.json"))["environment"]["hostname"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn advise_ranks_from_the_history_with_where_each_figure_came_from() {
    let sb = Sandbox::new();
    let db = history(&sb, &["cost-model", "ipc-quick", "stream"]);
    let host = host();
    let json = sb.path("advise.json");
    let ran = Run::new(
        &sb,
        &["advise", "--size", "2K", "--p99", "50us", "--host", &host],
    )
    .db(&db)
    .arg("--json")
    .arg(json.display().to_string())
    .ok();
    // pipe: the cost model of run 1 covers 2K; shm-futex (run 2, 64 and 1K
    // only) has nothing around it.
    assert!(ran.stdout.contains("cost model of pipe"), "{}", ran.stdout);
    assert!(
        ran.stdout.contains("unrankable: shm-futex"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("(run 1)"), "{}", ran.stdout);
    let report = read_json(&json);
    assert_eq!(report["schema"], "ipcmark.advise/1");
    assert_eq!(report["need"]["size_bytes"], 2048);
    assert_eq!(report["need"]["p99_ns"], 50000.0);
    let pipe = &report["ranking"][0];
    assert_eq!(pipe["benchmark"], "pipe");
    assert_eq!(pipe["rank"], 1);
    assert_eq!(pipe["p50"]["run_id"], 1);
    // Rate and CPU from the stream run (run 3).
    assert_eq!(pipe["rate"]["run_id"], 3);
    assert_eq!(report["unrankable"][0]["benchmark"], "shm-futex");
    assert!(report["verify"].is_null());
}

#[test]
fn advise_refuses_bad_usage_with_one_line_and_an_empty_history_with_exit_1() {
    let sb = Sandbox::new();
    let db = sb.path("empty.sqlite");
    for (args, says) in [
        (vec!["advise", "--size", "0"], "out of range"),
        (
            vec!["advise", "--size", "4K", "--rate", "fast"],
            "invalid rate",
        ),
        (
            vec!["advise", "--size", "4K", "--p99", "20"],
            "invalid duration",
        ),
        (vec!["advise"], "--size"),
    ] {
        let ran = Run::new(&sb, &args).db(&db).exits(2);
        assert_eq!(ran.stderr.lines().count(), 1, "{args:?}: {}", ran.stderr);
        assert!(ran.stderr.contains(says), "{args:?}: {}", ran.stderr);
    }
    let ran = Run::new(&sb, &["advise", "--size", "4K"]).db(&db).exits(1);
    assert_eq!(ran.stderr.lines().count(), 1, "{}", ran.stderr);
    assert!(ran.stderr.contains("ipcmark run"), "{}", ran.stderr);
    // A history whose sizes are far from the one asked has nothing to rank either.
    let db = history(&sb, &["ipc-quick"]);
    let ran = Run::new(&sb, &["advise", "--size", "16K", "--host", &host()])
        .db(&db)
        .exits(1);
    assert!(ran.stderr.contains("--sizes 16K"), "{}", ran.stderr);
}

#[test]
fn verify_measures_the_top_two_one_way_paced_at_the_rate() {
    let _g = serial();
    let sb = Sandbox::new();
    let db = history(&sb, &["cost-model", "ipc-quick"]);
    let json = sb.path("advise.json");
    // 2 000 messages a second: 4 000 messages each, two seconds.
    let ran = Run::new(
        &sb,
        &[
            "advise",
            "--size",
            "1K",
            "--rate",
            "2k/s",
            "--verify",
            "--host",
            &host(),
        ],
    )
    .db(&db)
    .arg("--json")
    .arg(json.display().to_string())
    .limit(std::time::Duration::from_secs(120))
    .ok();
    assert!(ran.stdout.contains("p99 ±25%"), "{}", ran.stdout);
    // Both shapes are named: what the prediction is of, and what was measured.
    assert!(
        ran.stdout
            .contains("predicted from pingpong, one way = round trip ÷ 2"),
        "{}",
        ran.stdout
    );
    let report = read_json(&json);
    let verify = report["verify"].as_array().unwrap();
    assert_eq!(
        verify.len(),
        2.min(report["ranking"].as_array().unwrap().len())
    );
    for v in verify {
        assert_eq!(v["measured_as"], "oneway, sporadic every 500000 ns", "{v}");
        assert_eq!(v["messages"], 4000, "{v}");
        assert_eq!(
            v["predicted_as"], "pingpong, one way = round trip ÷ 2, back to back",
            "{v}"
        );
        assert!(
            v["predicted_p99_ns"].as_f64().unwrap() >= v["predicted_p50_ns"].as_f64().unwrap(),
            "{v}"
        );
        assert!(v["measured_p50_ns"].as_f64().unwrap() > 0.0, "{v}");
        let within = v["p99_within_25_percent"].as_bool().unwrap();
        let ratio =
            v["measured_p99_ns"].as_f64().unwrap() / v["predicted_p99_ns"].as_f64().unwrap();
        assert_eq!(within, (ratio - 1.0).abs() <= 0.25, "{v}");
    }
    // The verify run is this machine's, one way, in the history.
    let id = verify[0]["run_id"].as_i64().unwrap().to_string();
    let shown = Run::new(&sb, &["export", &id, "--format", "json"])
        .db(&db)
        .ok();
    assert!(
        shown.stdout.contains("\"pacing\": \"sporadic\""),
        "{}",
        shown.stdout
    );
    // Asked again, the one-way figures that verify saved are the
    // prediction: of the shape measured, and named so.
    let again = Run::new(
        &sb,
        &[
            "advise",
            "--size",
            "1K",
            "--rate",
            "2k/s",
            "--verify",
            "--host",
            &host(),
        ],
    )
    .db(&db)
    .arg("--json")
    .arg(json.display().to_string())
    .limit(std::time::Duration::from_secs(120))
    .ok();
    assert!(
        again
            .stdout
            .contains("predicted from oneway, sporadic every 500000 ns"),
        "{}",
        again.stdout
    );
    let report = read_json(&json);
    for (v, before) in report["verify"].as_array().unwrap().iter().zip(verify) {
        assert_eq!(v["predicted_as"], "oneway, sporadic every 500000 ns", "{v}");
        // The prediction is the figures the first verify measured.
        assert_eq!(v["predicted_p50_ns"], before["measured_p50_ns"], "{v}");
        assert_eq!(v["predicted_p99_ns"], before["measured_p99_ns"], "{v}");
    }
}

#[test]
fn measure_refuses_another_host() {
    let sb = Sandbox::new();
    let db = history(&sb, &["ipc-quick"]);
    let ran = Run::new(
        &sb,
        &[
            "advise",
            "--size",
            "64",
            "--measure",
            "--host",
            "not-this-one",
        ],
    )
    .db(&db)
    .exits(2);
    assert!(
        ran.stderr.contains("--measure measures this host"),
        "{}",
        ran.stderr
    );
}

/// `--rate` with a rate curve in the history: the latency at that rate is
/// read from the curve (between the offered rates around it), named with
/// its run, and the rate is judged by what the curve kept up with; past
/// its highest rate no latency is predicted.
#[test]
fn advise_at_a_rate_reads_the_rate_curve_and_names_it() {
    let sb = Sandbox::new();
    let db = history(&sb, &["cost-model", "rate"]);
    let json = sb.path("advise.json");
    let ran = Run::new(
        &sb,
        &[
            "advise",
            "--size",
            "64",
            "--rate",
            "10k",
            "--p99",
            "1ms",
            "--host",
            &host(),
        ],
    )
    .db(&db)
    .arg("--json")
    .arg(json.display().to_string())
    .ok();
    assert!(ran.stdout.contains("at 10.0k/s: p99"), "{}", ran.stdout);
    assert!(
        ran.stdout.contains("between its 2k and 20k msg/s points"),
        "{}",
        ran.stdout
    );
    let report = read_json(&json);
    let pipe = &report["ranking"][0];
    assert_eq!(pipe["benchmark"], "pipe");
    assert_eq!(pipe["at_rate"]["p99"]["run_id"], 2);
    assert_eq!(pipe["at_rate"]["highest_kept_up"]["value"], 20000.0);
    assert_eq!(pipe["meets"]["rate"], true);

    let ran = Run::new(
        &sb,
        &[
            "advise",
            "--size",
            "64",
            "--rate",
            "100k",
            "--host",
            &host(),
        ],
    )
    .db(&db)
    .ok();
    assert!(
        ran.stdout.contains("beyond the highest rate"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("rate NO"), "{}", ran.stdout);
}
