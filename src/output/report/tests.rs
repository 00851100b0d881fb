//! The page without a browser: offline (no URL but the vendored banner),
//! every report string escaped, the sections that apply and only those.
//! `tests/report.rs` renders it in headless Chromium.

use super::*;
use crate::record::environment::{MpiRecord, RankRecord};
use crate::record::summary::{CostModel, Segment, WarningRecord};
use crate::record::{FigureRecord, RunRecord};
use serde::Deserialize;
use serde_json::{Value, json};

pub(super) const HOSTILE: &str = "<script>alert(1)</script>&\"'";

/// A real report (every field a run writes), whose parts a test replaces.
const BASE: &str = include_str!("../../../tests/reports/ipc-quick.json");

/// A result record from the fields a test names, with the one every result
/// has that these tests do not care about (its CPUs).
pub(super) fn result(fields: Value) -> FigureRecord {
    let mut v = json!({"cpus": []});
    if let (Value::Object(v), Value::Object(fields)) = (&mut v, fields) {
        v.extend(fields);
    }
    serde_json::from_value(v).expect("a result record")
}

/// `latency_ns` of a result: its median, and the percentiles named.
pub(super) fn latency(median: f64, percentiles: Value) -> Value {
    let mut v = json!({"median": median, "mean": median, "stddev": 0.0,
                       "median_of": "batch_means", "percentiles_of": "single_round_trips",
                       "single_mean": median});
    if let (Value::Object(v), Value::Object(p)) = (&mut v, percentiles) {
        v.extend(p);
    }
    v
}

/// A figure of a swept ping-pong series, ok, with samples for compare.
fn pingpong(bench: &str, size: u64, median: f64) -> FigureRecord {
    result(json!({
        "benchmark": bench, "mode": "pingpong", "size_bytes": size, "status": "ok",
        "samples_ns": [median * 0.98, median, median * 1.02, median * 1.01, median * 0.99],
        "precision": {"target": 0.02, "achieved": 0.03, "met": false, "basis": "batches",
                      "units": 5, "interval_ns": {"low": median * 0.97, "high": median * 1.03}},
        "latency_ns": latency(median, json!({"min": median * 0.8, "p50": median,
                       "p90": median * 1.2, "p99": median * 2.0, "p999": median * 3.0,
                       "max": median * 9.0})),
        "timed_round_trips": 5000
    }))
}

/// A run report: two mechanisms swept over three sizes, one figure below
/// resolution and one failed, a hostile benchmark name and strings.
pub(super) fn run(scale: f64) -> RunRecord {
    let mut results = Vec::new();
    for (bench, base) in [("pipe", 4000.0), (HOSTILE, 6000.0)] {
        for (size, extra) in [(8u64, 0.0), (1024, 500.0), (65536, 30000.0)] {
            results.push(pingpong(bench, size, (base + extra) * scale));
        }
    }
    results.push(result(
        json!({"benchmark": "syscall-getpid", "mode": "op", "size_bytes": 0,
        "status": "ok", "samples_ns": [80.0, 81.0, 79.0],
        "latency_ns": latency(80.0 * scale, json!({"p50": 78.0, "p90": 90.0, "p99": 120.0,
                       "min": 60.0, "max": 900.0, "p999": 300.0}))}),
    ));
    results.push(result(
        json!({"benchmark": "syscall-clock-gettime", "mode": "op", "size_bytes": 0,
        "status": "below_resolution", "reason": "median at or below zero <b>"}),
    ));
    results.push(result(
        json!({"benchmark": "fifo", "mode": "pingpong", "size_bytes": 64,
        "status": "failed", "error": "peer died"}),
    ));
    let mut r = RunRecord::parse(BASE).expect("tests/reports/ipc-quick.json");
    r.header.started_at = "2026-11-24T04:00:00Z".into();
    r.header.complete = true;
    r.header.command_line = vec!["ipcmark".into(), "run".into(), HOSTILE.into()];
    r.header.environment.hostname = HOSTILE.into();
    r.header.environment.kernel = "6.1".into();
    r.header.environment.mitigations = [("x".to_string(), HOSTILE.to_string())].into();
    r.settings.passes = 1;
    r.warnings = vec![WarningRecord {
        kind: "other-load".into(),
        message: HOSTILE.into(),
    }];
    r.cost_models = vec![CostModel {
        benchmark: "pipe".into(),
        cold: false,
        segments: vec![Segment {
            from_bytes: 8,
            to_bytes: 65536,
            setup_ns: 4000.0 * scale,
            per_byte_ns: 0.45,
            r2: 0.99,
            setup_ci_ns: [3900.0 * scale, 4100.0 * scale],
            per_byte_ci_ns: [0.44, 0.46],
            sizes: 3,
        }],
    }];
    r.results = results;
    r
}

pub(super) fn input(label: &str, report: RunRecord) -> RunInput {
    RunInput {
        label: label.into(),
        report,
    }
}

/// The page's chart data (the JSON block its script reads), as far as
/// these tests look.
#[derive(Deserialize)]
struct Data {
    charts: Vec<Chart>,
}

#[derive(Deserialize)]
struct Chart {
    id: String,
    kind: String,
    #[serde(default)]
    series: Vec<ChartSeries>,
}

#[derive(Deserialize)]
struct ChartSeries {
    label: String,
}

/// The chart data of a page.
fn data(html: &str) -> Data {
    let data = html.split("id=\"report-data\">").nth(1).unwrap();
    serde_json::from_str(&data[..data.find("</script>").unwrap()]).unwrap()
}

/// The page with the vendored uPlot (its banner and licence) left out.
pub(super) fn own_text(html: &str) -> String {
    html.replace(VENDOR_BANNER, "").replace(UPLOT_JS, "")
}

#[test]
fn the_page_names_no_url_outside_the_vendored_banner() {
    let page = render(
        &[input("a.json", run(1.0)), input("b.json", run(1.3))],
        0.05,
    );
    let html = page.html.replace(VENDOR_BANNER, "");
    assert!(!html.contains("http://"), "the page names an http URL");
    assert!(!html.contains("https://"), "the page names an https URL");
    // The vendored script itself holds no other.
    assert_eq!(UPLOT_JS.matches("https://").count(), 1);
    assert!(UPLOT_JS.starts_with(VENDOR_BANNER));
    assert!(
        page.html
            .contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';")
    );
}

#[test]
fn every_string_of_a_report_is_escaped() {
    let page = render(&[input(HOSTILE, run(1.0)), input("b", run(1.1))], 0.05);
    let own = own_text(&page.html);
    assert!(
        !own.contains(HOSTILE),
        "a report string reached the page unescaped"
    );
    assert!(!own.contains("<script>alert"));
    assert!(!own.contains("<b>"));
    assert!(own.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"));
    // In the JSON block the script reads, no string can close the block.
    let data = own.split("id=\"report-data\">").nth(1).unwrap();
    let data = &data[..data.find("</script>").unwrap()];
    assert!(!data.contains('<'), "the chart data holds a raw '<'");
    assert!(data.contains("\\u003cscript\\u003e"));
}

#[test]
fn two_runs_have_the_comparison_one_run_has_none() {
    let two = render(
        &[input("a.json", run(1.0)), input("b.json", run(1.5))],
        0.05,
    )
    .html;
    assert!(two.contains("id=\"compare-A-B\""));
    assert!(two.contains("Run B against run A"));
    // Every figure is 50% slower in B: the rows are significant, marked slower.
    assert!(two.contains("class=\"sig slower\""));
    assert!(two.contains("<svg class=\"forest sig slower\""));
    let one = render(&[input("a.json", run(1.0))], 0.05).html;
    assert!(!one.contains("class=\"compare\""));
}

#[test]
fn a_sweep_draws_latency_against_size_and_its_model() {
    let page = render(&[input("a.json", run(1.0))], 0.05);
    let charts = data(&page.html).charts;
    let kinds: Vec<&str> = charts.iter().map(|c| c.kind.as_str()).collect();
    assert_eq!(kinds, ["xy", "cdf"]);
    assert_eq!(page.charts, 2);
    let labels: Vec<&str> = charts[0].series.iter().map(|s| s.label.as_str()).collect();
    assert!(labels.contains(&"pipe"));
    assert!(labels.iter().any(|l| l.starts_with("pipe (model")));
    // Each chart has a placeholder.
    for c in &charts {
        assert!(page.html.contains(&format!("id=\"{}\"", c.id)));
    }
}

/// Many swept mechanisms are drawn a dozen legend entries a chart at most,
/// every series once.
#[test]
fn no_chart_against_size_has_a_legend_past_a_dozen() {
    let mut r = run(1.0);
    r.cost_models = vec![];
    r.results = (0..31)
        .flat_map(|m| {
            [64, 1024, 4096].map(|size| pingpong(&format!("mech-{m}"), size, 3000.0 + size as f64))
        })
        .collect();
    let page = render(&[input("many.json", r)], 0.05);
    let charts = data(&page.html).charts;
    let xy: Vec<_> = charts.iter().filter(|c| c.kind == "xy").collect();
    assert_eq!(xy.len(), 3, "31 series, 12 a chart");
    assert!(xy.iter().all(|c| c.series.len() <= 12));
    let drawn: usize = xy.iter().map(|c| c.series.len()).sum();
    assert_eq!(drawn, 31);
}

#[test]
fn figures_without_a_value_are_listed_with_their_status_not_drawn() {
    let html = render(&[input("a.json", run(1.0))], 0.05).html;
    // In the dot plot's table and as the dot plot's note, never as a dot.
    assert!(html.contains("below_resolution"));
    assert!(html.contains("below resolution: median at or below zero &lt;b&gt;"));
    assert!(html.contains("peer died"));
    let svg = html.split("<svg class=\"dotplot\"").nth(1).unwrap();
    let svg = &svg[..svg.find("</svg>").unwrap()];
    // getpid is the one op figure with a value; fifo failed, clock-gettime below resolution.
    assert_eq!(svg.matches("<circle").count(), 1);
}

#[test]
fn a_run_of_one_size_draws_no_chart_against_size() {
    let mut r = run(1.0);
    r.results = vec![pingpong("pipe", 64, 3000.0), pingpong("fifo", 64, 5000.0)];
    r.cost_models = vec![];
    let page = render(&[input("q.json", r)], 0.05);
    assert!(!page.html.contains("Latency against message size"));
    assert!(page.html.contains("Figures at one size"));
    assert_eq!(page.charts, 1, "only the distribution chart");
}

#[test]
fn a_run_without_figures_renders_without_charts() {
    let mut r = run(1.0);
    r.results = vec![];
    let page = render(&[input("empty.json", r)], 0.05);
    assert_eq!(page.charts, 0);
    assert!(page.html.contains("This run has no figure."));
}

#[test]
fn the_environment_marks_what_differs_between_runs() {
    let mut b = run(1.0);
    b.header.environment.kernel = "6.2".into();
    b.header.started_at = "2026-11-25T04:00:00Z".into();
    let html = render(&[input("a.json", run(1.0)), input("b.json", b)], 0.05).html;
    let env = html.split("id=\"environment\"").nth(1).unwrap();
    assert!(env.contains("<tr class=\"differs\"><th>kernel</th><td>6.1</td><td>6.2</td>"));
    // Runs always start at different times: no mark.
    assert!(env.contains("<tr><th>started</th><td>2026-11-24 04:00:00 UTC</td>"));
}

#[test]
fn an_mpi_run_names_its_job_and_every_rank_and_a_local_run_has_no_such_rows() {
    let mut m = run(1.0);
    let rank = |rank: i32, host: &str, allowed_cpus: Vec<usize>| RankRecord {
        rank,
        host: host.into(),
        node: rank as usize,
        pid: rank as u32 + 1,
        allowed_cpus,
        cpu: Some(rank as usize),
    };
    m.header.environment.mpi = Some(MpiRecord {
        library: "Open MPI v4.1.4".into(),
        standard: "3.1".into(),
        size: 2,
        nodes: vec!["a".into(), "b".into()],
        ranks: vec![rank(0, "a", vec![0]), rank(1, "b", vec![0, 1])],
    });
    let html = render(&[input("m.json", m), input("l.json", run(1.0))], 0.05).html;
    let env = html.split("id=\"environment\"").nth(1).unwrap();
    assert!(env.contains("<th>MPI library</th><td>Open MPI v4.1.4</td><td>—</td>"));
    assert!(env.contains(
        "<td>rank 0: node 0 a, bound to 0, on CPU 0; rank 1: node 1 b, bound to 0, 1, on CPU 1</td>"
    ));
    let local = render(&[input("l.json", run(1.0))], 0.05).html;
    assert!(!local.contains("MPI"));
}

/// Every mode's report (tests/reports/) renders: each figure counted in the
/// runs' table, and a run compared with itself compares, finding nothing.
#[test]
fn every_modes_report_renders_and_compares_with_itself() {
    for (name, text) in crate::record::run::tests::FIXTURES {
        let report = RunRecord::parse(text).unwrap();
        let figures = report.results.len();
        let html = render(&[input("a", report.clone()), input("b", report)], 0.05).html;
        assert!(
            html.contains(&format!(" of {figures} measured")),
            "{name}: figures not counted"
        );
        assert!(html.contains("id=\"compare-A-B\""), "{name}");
        assert!(!html.contains("cannot be compared"), "{name}");
        assert!(
            !html.contains("class=\"sig "),
            "{name}: a run differs from itself"
        );
        data(&html);
    }
}

#[test]
fn the_environment_has_each_runs_machine_line_and_every_check() {
    let map: RunRecord = RunRecord::parse(include_str!("../../../tests/reports/map.json")).unwrap();
    let mut b = map.clone();
    b.pass_checks = Some(vec![crate::record::doctor::PassChecksRecord {
        level: None,
        pass: 2,
        checks: vec![b.checks.as_ref().unwrap()[0].clone()],
    }]);
    let html = render(&[input("a.json", map.clone()), input("b.json", b)], 0.05).html;
    let env = html.split("id=\"environment\"").nth(1).unwrap();
    let line = crate::output::machine::checks_line(&map).unwrap();
    assert!(
        env.contains(&format!("<td>{}</td>", super::esc(&line))),
        "{env}"
    );
    let first = &map.checks.as_ref().unwrap()[0];
    assert!(env.contains(&format!("<th>{}</th>", first.id)), "{env}");
    assert!(
        env.contains(&format!("<th>{} (pass 2)</th><td>—</td>", first.id)),
        "a pass only run b had: {env}"
    );
    // A run without checks has none to show.
    let html = render(&[input("a.json", run(1.0))], 0.05).html;
    assert!(!html.contains("class=\"checks\""));
}
