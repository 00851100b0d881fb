use super::*;
use crate::analysis::watch::tests::{fixture, scaled};
use crate::record::build::BuildRecord;
use crate::record::check::{CheckFigure, CheckReport, LostFigure};
use crate::record::compare::{Side, Unmatched};

fn side(path: &str, host: &str) -> Side {
    Side {
        path: path.into(),
        started_at: "2026-11-01T10:00:00Z".into(),
        hostname: host.into(),
        kernel: "6.1".into(),
    }
}

fn figure(benchmark: &str, size_bytes: usize, run_ns: f64, regressed: bool) -> CheckFigure {
    CheckFigure {
        benchmark: benchmark.into(),
        mode: "pingpong".into(),
        size_bytes,
        baseline_ns: 1000.0,
        run_ns,
        change: run_ns / 1000.0 - 1.0,
        beyond_shift: None,
        p: if regressed { 0.0004 } else { 0.4 },
        significant: regressed,
        regressed,
        min_detectable_change: None,
    }
}

fn lost(
    benchmark: &str,
    size_bytes: usize,
    in_run: &str,
    reason: &str,
    allowed: bool,
) -> LostFigure {
    LostFigure {
        benchmark: benchmark.into(),
        mode: "pingpong".into(),
        size_bytes,
        in_run: in_run.into(),
        reason: Some(reason.into()),
        allowed,
    }
}

/// A small check: one figure passed, one regressed, one lost (failed),
/// one allowed (skipped), one only in the run.
fn small_check() -> CheckReport {
    CheckReport {
        schema: crate::record::check::CHECK_SCHEMA.into(),
        build: BuildRecord {
            version: "0.1.0".into(),
            commit: "unknown".into(),
            dirty: None,
            features: vec![],
        },
        baseline: side("run 1", "h"),
        run: side("run 2", "h"),
        max_regression: 0.05,
        alpha: 0.05,
        common_shift: None,
        figures: vec![
            figure("pipe", 64, 1010.0, false),
            figure("shm-futex", 1024, 1200.0, true),
        ],
        unmatched: vec![Unmatched {
            benchmark: "udp".into(),
            mode: "pingpong".into(),
            size_bytes: 64,
            why: "only in B".into(),
        }],
        lost: vec![
            lost("eventfd", 8, "failed", "the peer died", false),
            lost("posix-mq", 64, "skipped", "no queue", true),
        ],
        shift_bound: None,
        placement: None,
        placement_allowed: false,
        regressions: 1,
        passed: false,
    }
}

#[test]
fn a_check_is_one_junit_testcase_per_figure_with_its_failures_and_skips() {
    let expected = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="ipcmark check" tests="5" failures="2" errors="0" skipped="2">
  <testsuite name="ipcmark check" tests="5" failures="2" errors="0" skipped="2">
    <properties>
      <property name="baseline" value="run 1"/>
      <property name="run" value="run 2"/>
      <property name="max_regression" value="0.05"/>
      <property name="alpha" value="0.05"/>
      <property name="passed" value="false"/>
    </properties>
    <testcase classname="pipe" name="pingpong 64"/>
    <testcase classname="shm-futex" name="pingpong 1K">
      <failure message="20.0% slower than the baseline (p &lt; 0.001; over --max-regression 5%): 1.00 µs → 1.20 µs" type="ipcmark">baseline 1000.0 ns, run 1200.0 ns, change +20.00%</failure>
    </testcase>
    <testcase classname="eventfd" name="pingpong 8">
      <failure message="measured in the baseline, failed in the run: the peer died" type="ipcmark"/>
    </testcase>
    <testcase classname="posix-mq" name="pingpong 64">
      <skipped message="measured in the baseline, skipped in the run (allowed by --allow-skipped): no queue"/>
    </testcase>
    <testcase classname="udp" name="pingpong 64">
      <skipped message="not checked: only in B"/>
    </testcase>
  </testsuite>
</testsuites>
"#;
    assert_eq!(junit::check(&small_check()), expected);
}

#[test]
fn a_check_under_github_actions_is_an_error_per_figure_it_fails() {
    // `%` is escaped in a message too (`%25`), as GitHub's toolkit does.
    let expected = "::error title=ipcmark check%3A shm-futex pingpong 1K::20.0%25 slower than the \
        baseline (p < 0.001; over --max-regression 5%25): 1.00 µs → 1.20 µs\n\
        ::error title=ipcmark check%3A eventfd pingpong 8::measured in the baseline, failed in the \
        run: the peer died\n";
    assert_eq!(annotations::check(&small_check()), expected);
    assert!(annotations::wanted(Some("true")));
    assert!(!annotations::wanted(Some("false")) && !annotations::wanted(None));
    // A passing check between runs of one host says nothing.
    let mut ok = small_check();
    ok.figures.retain(|f| !f.regressed);
    ok.lost.retain(|l| l.allowed);
    assert_eq!(annotations::check(&ok), "");
}

#[test]
fn the_whole_run_moving_and_the_placement_are_cases_and_annotations_of_their_own() {
    use crate::record::check::ShiftBound;
    use crate::record::compare::{CommonShift, IntervalRecord, PlacementDifference};
    let mut r = small_check();
    r.common_shift = Some(CommonShift {
        factor: 1.3,
        interval: IntervalRecord {
            low: 1.25,
            high: 1.35,
        },
        significant: true,
        results: 7,
        explained_by: vec![],
    });
    r.shift_bound = Some(ShiftBound {
        bound: 0.1,
        from: "default".into(),
        exceeded: true,
    });
    r.placement = Some(PlacementDifference {
        cpus_a: [0, 1],
        cpus_b: [0, 1],
        round_trip_a_ns: 60.0,
        round_trip_b_ns: 190.0,
        class_a: "same LLC".into(),
        class_b: "other LLC".into(),
        differ: true,
    });
    r.run.hostname = "other".into();
    let x = junit::check(&r);
    assert!(x.contains("tests=\"7\" failures=\"4\""), "{x}");
    assert!(
        x.contains("<testcase classname=\"ipcmark\" name=\"common shift\">"),
        "{x}"
    );
    assert!(
        x.contains("<testcase classname=\"ipcmark\" name=\"placement\">"),
        "{x}"
    );
    let a = annotations::check(&r);
    assert!(
        a.contains("::error title=ipcmark check%3A the whole run moved::every figure moved together by ×1.300"),
        "{a}"
    );
    assert!(
        a.contains("::error title=ipcmark check%3A placement::"),
        "{a}"
    );
    assert!(
        a.contains("::warning title=ipcmark check%3A hosts::"),
        "{a}"
    );
    // Allowed, the placement is a warning and a passing case; a shift
    // within the range is a warning and a passing case.
    r.placement_allowed = true;
    r.shift_bound.as_mut().unwrap().exceeded = false;
    r.shift_bound.as_mut().unwrap().bound = 0.4;
    let a = annotations::check(&r);
    assert!(
        a.contains("::warning title=ipcmark check%3A placement::"),
        "{a}"
    );
    assert!(
        a.contains("::warning title=ipcmark check%3A common shift::"),
        "{a}"
    );
    assert!(!a.contains("whole run"), "{a}");
    let x = junit::check(&r);
    assert!(x.contains("tests=\"7\" failures=\"2\""), "{x}");
}

/// Names and reasons come from reports, another's text: none breaks the
/// XML, drives a terminal, or forges a workflow command.
#[test]
fn hostile_names_and_reasons_are_escaped_in_xml_and_workflow_commands() {
    let mut r = small_check();
    let hostile = "a<b>&\"'\u{1b}]0;x\u{7}\u{202e}\u{fffe}";
    r.figures[1].benchmark = hostile.into();
    r.figures[1].mode = "pingpong\n::error::forged".into();
    r.lost[0].reason = Some("died\r\n::error title=x::forged 100%, done".into());
    let x = junit::check(&r);
    assert!(
        x.contains("classname=\"a&lt;b&gt;&amp;&quot;&apos;?]0;x???\""),
        "{x}"
    );
    assert!(!x.contains('\u{1b}') && !x.contains('\u{7}') && !x.contains('\u{fffe}'));
    assert_eq!(x.matches("<testcase").count(), 5, "{x}");
    assert_eq!(x.matches("</testcase>").count(), 4, "{x}");
    assert_eq!(
        x.lines()
            .filter(|l| l.trim_start().starts_with("<testcase"))
            .count(),
        5
    );
    let a = annotations::check(&r);
    assert_eq!(a.lines().count(), 2, "{a}");
    assert!(a.lines().all(|l| l.starts_with("::error title=")), "{a}");
    assert!(a.contains("pingpong?%3A%3Aerror%3A%3Aforged"), "{a}");
    assert!(
        a.contains("died??::error title=x::forged 100%25, done"),
        "{a}"
    );
    // The escapes themselves, as GitHub's toolkit escapes.
    assert_eq!(annotations::escape_data("50%\r\nx"), "50%25%0D%0Ax");
    assert_eq!(annotations::escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    assert_eq!(junit::escape("<&>\"'"), "&lt;&amp;&gt;&quot;&apos;");
}

#[test]
fn a_comparison_fails_the_figures_compare_calls_slower() {
    let a = fixture("op");
    // syscall-read-tmpfs 10% slower: beyond doubt.
    let b = scaled(&a, |i| if i == 1 { 1.10 } else { 1.0 });
    let mut b_less = b.clone();
    b_less.results.pop();
    let c = crate::analysis::compare::compare("a", &a, "b", &b_less, 0.05, a.header.build.clone());
    let x = junit::compare(&c);
    assert!(
        x.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ipcmark compare\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\">"),
        "{x}"
    );
    assert!(
        x.contains("<testcase classname=\"syscall-read-tmpfs\" name=\"op 64K\">\n      <failure message=\"+10.0%"),
        "{x}"
    );
    assert!(
        x.contains("<skipped message=\"not compared: only in A\"/>"),
        "{x}"
    );
    let same = crate::analysis::compare::compare("a", &a, "b", &a, 0.05, a.header.build.clone());
    assert!(junit::compare(&same).contains("failures=\"0\""));
}

fn metric(value: f64, bounds: Option<(f64, f64)>, over: Option<&str>) -> Metric {
    Metric {
        value,
        bounds,
        over: over.map(String::from),
    }
}

fn two_figures() -> Vec<Measured> {
    vec![
        Measured {
            name: "pipe/pingpong/64".into(),
            latency: Some(metric(100.5, Some((90.0, 110.0)), Some("5 passes"))),
            throughput: None,
        },
        Measured {
            name: "pipe/stream/64".into(),
            latency: None,
            throughput: Some(metric(2.5e6, None, None)),
        },
    ]
}

#[test]
fn bmf_names_each_figure_and_gives_latency_with_its_interval_and_throughput() {
    let expected = r#"{
  "pipe/pingpong/64": {
    "latency": {
      "value": 100.5,
      "lower_value": 90.0,
      "upper_value": 110.0
    }
  },
  "pipe/stream/64": {
    "throughput": {
      "value": 2500000.0
    }
  }
}
"#;
    assert_eq!(bmf::render(&two_figures()), expected);
    assert_eq!(bmf::render(&[]), "{}\n");
}

#[test]
fn gab_lists_the_latencies_smaller_is_better_with_their_range() {
    let expected = r#"[
  {
    "name": "pipe/pingpong/64",
    "unit": "ns",
    "value": 100.5,
    "range": "± 10.5",
    "extra": "95% interval 90.0–110.0 ns over 5 passes"
  }
]
"#;
    assert_eq!(gab::render(&two_figures()), expected);
    let mut bare = two_figures();
    bare[0].latency = Some(metric(7.0, None, None));
    assert_eq!(
        gab::render(&bare),
        "[\n  {\n    \"name\": \"pipe/pingpong/64\",\n    \"unit\": \"ns\",\n    \"value\": 7.0\n  }\n]\n"
    );
}

#[test]
fn a_run_gives_its_measured_figures_by_key_once_each() {
    let passes = of_run(&fixture("passes"));
    let pipe = &passes[0];
    assert_eq!(pipe.name, "pipe/pingpong/64");
    let l = pipe.latency.as_ref().unwrap();
    let f = &fixture("passes").results[0];
    assert_eq!(l.value, f.latency_ns.as_ref().unwrap().median);
    let i = &f.precision.as_ref().unwrap().interval_ns;
    assert_eq!(l.bounds, Some((i.low, i.high)));
    assert_eq!(l.over.as_deref(), Some("2 passes"));
    // Sampled in rounds: the drift-corrected median, as watch plots it.
    let quick = fixture("ipc-quick");
    let m = measured(&quick.results[0]).unwrap();
    assert_eq!(
        Some(m.latency.unwrap().value),
        quick.results[0]
            .sweep
            .as_ref()
            .unwrap()
            .drift_corrected_median_ns
    );
    // A stream figure is a throughput, messages a second.
    let stream = fixture("stream");
    let s = measured(&stream.results[0]).unwrap();
    assert!(s.latency.is_none());
    assert_eq!(
        s.throughput.unwrap().value,
        stream.results[0]
            .stream
            .as_ref()
            .unwrap()
            .messages_per_s
            .unwrap()
    );
    // Skipped figures give nothing; a load sweep's figures are taken once.
    let rate = fixture("rate");
    assert_eq!(of_run(&rate).len(), 2, "{:?}", of_run(&rate));
    for (name, text) in crate::record::run::tests::FIXTURES {
        let run = crate::record::RunRecord::parse(text).unwrap();
        let names: Vec<String> = of_run(&run).into_iter().map(|m| m.name).collect();
        let unique: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(unique.len(), names.len(), "{name}: {names:?}");
    }
    // An interval that does not hold the centre gives no bounds.
    let mut odd = fixture("passes").results[0].clone();
    odd.precision.as_mut().unwrap().interval_ns.low = 1e9;
    let m = measured(&odd).unwrap();
    assert_eq!(m.latency.unwrap().bounds, None);
}

fn otava_run(
    id: i64,
    at: &str,
    commit: Option<&str>,
    tags: &[&str],
    values: &[(&str, f64)],
) -> otava::Run {
    otava::Run {
        id,
        started_at: at.into(),
        commit: commit.map(String::from),
        tags: tags.iter().map(|t| t.to_string()).collect(),
        values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    }
}

#[test]
fn otava_gets_a_row_per_run_with_every_column_the_newest_run_has() {
    let runs = vec![
        otava_run(
            1,
            "2026-11-01T10:00:00Z",
            Some("abc"),
            &[],
            &[
                ("pipe/pingpong/64", 100.0),
                ("eventfd/pingpong/8", 50.0),
                ("udp/pingpong/64", 7.0),
            ],
        ),
        // Lacks eventfd: left out.
        otava_run(
            2,
            "2026-11-02T10:00:00.5Z",
            None,
            &["baseline"],
            &[("pipe/pingpong/64", 101.5)],
        ),
        otava_run(
            3,
            "2026-11-03T10:00:00.25+00:00",
            Some("def"),
            &["a", "b"],
            &[("pipe/pingpong/64", 99.25), ("eventfd/pingpong/8", 51.0)],
        ),
    ];
    let t = otava::render(&runs);
    assert_eq!(
        t.csv,
        "time,run,commit,tag,pipe/pingpong/64,eventfd/pingpong/8\n\
         2026-11-01 10:00:00 +0000,1,abc,,100,50\n\
         2026-11-03 10:00:00 +0000,3,def,a b,99.25,51\n"
    );
    assert_eq!(t.metrics, ["pipe/pingpong/64", "eventfd/pingpong/8"]);
    assert_eq!((t.rows, t.runs_left_out, t.figures_left_out), (2, 1, 1));
    let config = otava::config("out/history.csv", &t.metrics[..1]);
    assert!(
        config.ends_with(
            "tests:\n  ipcmark:\n    type: csv\n    file: \"out/history.csv\"\n    time_column: time\n    \
             attributes: [\"run\", \"commit\", \"tag\"]\n    csv_options:\n      delimiter: \",\"\n      \
             quote_char: '\"'\n    metrics:\n      \"pipe/pingpong/64\":\n        column: \
             \"pipe/pingpong/64\"\n        direction: -1\n        scale: 1\n"
        ),
        "{config}"
    );
    assert_eq!(
        otava::config_path(std::path::Path::new("out/history.csv")),
        std::path::Path::new("out/history.otava.yaml")
    );
    assert_eq!(
        otava::config_path(std::path::Path::new("h.otava.yaml")),
        std::path::Path::new("h.otava.otava.yaml")
    );
    // Nothing to write: a header alone.
    assert_eq!(otava::render(&[]).csv, "time,run,commit,tag\n");
}

#[test]
fn otava_cells_and_config_from_hostile_names_stay_cells_and_strings() {
    let runs = vec![otava_run(
        1,
        "2026-11-01T10:00:00Z",
        Some("=HYPERLINK(\"x\")"),
        &["t\u{1b}[2J"],
        &[("=cmd,\"x\"\n", 1.0)],
    )];
    let t = otava::render(&runs);
    assert_eq!(
        t.csv,
        "time,run,commit,tag,\"'=cmd,\"\"x\"\"?\"\n\
         2026-11-01 10:00:00 +0000,1,\"'=HYPERLINK(\"\"x\"\")\",t?[2J,1\n"
    );
    let config = otava::config("a\"b\\c.csv", &t.metrics);
    assert!(config.contains("file: \"a\\\"b\\\\c.csv\"\n"), "{config}");
    assert!(config.contains("      \"'=cmd,\\\"x\\\"?\":\n"), "{config}");
    // A start that is no time leaves its run out.
    let bad = vec![otava_run(1, "yesterday", None, &[], &[("k", 1.0)])];
    assert_eq!(otava::render(&bad).runs_left_out, 1);
}
