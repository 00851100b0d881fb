//! The rate section without a browser: a chart per size with a line per
//! mechanism, the medians over rounds in the data block, points that fell
//! short told apart, nothing unmeasured printed as a value, every string
//! escaped, and no section for a run without rate figures.

use super::super::tests::{HOSTILE, input, own_text, result, run};
use crate::output::report::render;
use crate::record::rate::RateCurveRecord;
use crate::record::rate::tests::curve;
use crate::record::{FigureRecord, RunRecord};
use serde_json::{Value, json};

/// A rate figure of `bench` at `size` bytes, measured with curve `c`.
fn rate(bench: &str, size: u64, c: RateCurveRecord) -> FigureRecord {
    let mut f = result(
        json!({"benchmark": bench, "mode": "rate", "size_bytes": size,
                              "status": "ok"}),
    );
    f.rate_curve = Some(c);
    f
}

/// A rate figure that was skipped, with its reason.
fn skipped(bench: &str, size: u64, reason: &str) -> FigureRecord {
    result(
        json!({"benchmark": bench, "mode": "rate", "size_bytes": size,
                  "status": "skipped", "reason": reason}),
    )
}

/// A run of the given rate figures alone.
fn rate_run(results: Vec<FigureRecord>) -> RunRecord {
    let mut r = run(1.0);
    r.cost_models = vec![];
    r.results = results;
    r
}

/// The chart specifications of a page's data block.
fn charts(html: &str) -> Vec<Value> {
    let data = html.split("id=\"report-data\">").nth(1).unwrap();
    let data: Value = serde_json::from_str(&data[..data.find("</script>").unwrap()]).unwrap();
    data["charts"].as_array().unwrap().clone()
}

/// A series' values of percentile `key`, µs.
fn values(series: &Value, key: &str) -> Vec<Option<f64>> {
    series["values"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::as_f64)
        .collect()
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn a_rate_run_draws_one_chart_per_size_with_a_line_per_mechanism() {
    let r = rate_run(vec![
        rate("pipe", 64, curve()),
        rate("unix-stream", 64, curve()),
        skipped("vmsplice", 64, "cannot be offered a rate"),
        rate("pipe", 4096, curve()),
        rate("unix-stream", 4096, curve()),
    ]);
    let page = render(&[input("r.json", r)], 0.05);
    let charts = charts(&page.html);
    let sizes: Vec<u64> = charts.iter().map(|c| c["size"].as_u64().unwrap()).collect();
    assert_eq!(sizes, [64, 4096]);
    assert_eq!(page.charts, 2, "the rate charts alone");
    for c in &charts {
        assert_eq!(c["kind"], "rate");
        assert_eq!(c["default"], "p99");
        let labels: Vec<&str> = c["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["label"].as_str().unwrap())
            .collect();
        assert_eq!(
            labels,
            ["pipe", "unix-stream"],
            "the skipped one has no line"
        );
        assert!(
            page.html
                .contains(&format!("id=\"{}\"", c["id"].as_str().unwrap()))
        );
    }
    assert!(page.html.contains("Latency against offered load"));
    assert!(page.html.contains("<h4>messages of 64</h4>"));
    assert!(page.html.contains("<h4>messages of 4K</h4>"));
    // The skipped figure is in the mechanisms' table with its reason.
    assert!(page.html.contains("<td>skipped</td>"));
    assert!(page.html.contains("cannot be offered a rate"));
    // The section stands for the rate figures: no dot plot, no distribution.
    assert!(!page.html.contains("Figures at one size"));
    assert!(!page.html.contains("Latency distribution"));
}

#[test]
fn the_data_block_and_the_table_hold_the_medians_over_rounds() {
    let page = render(
        &[input("r.json", rate_run(vec![rate("pipe", 64, curve())]))],
        0.05,
    );
    let chart = &charts(&page.html)[0];
    assert_eq!(chart["x"], json!([1000.0, 10_000.0]));
    let s = &chart["series"][0];
    // 1k: the median of the two rounds (p50 5.0 and 5.1 µs, p99 twice,
    // p99.9 thrice); 10k: its one round.
    let p50 = values(s, "p50");
    assert!(close(p50[0], 5.05) && close(p50[1], 6.0), "{p50:?}");
    let p99 = values(s, "p99");
    assert!(close(p99[0], 10.1) && close(p99[1], 12.0), "{p99:?}");
    let p999 = values(s, "p999");
    assert!(close(p999[0], 15.15) && close(p999[1], 18.0), "{p999:?}");
    assert_eq!(s["short"], json!([false, false]));
    // No knee; the saturation a bound (every round's highest rate kept up).
    assert_eq!(s["knee"], Value::Null);
    assert_eq!(s["saturation"], 9900.0);
    assert_eq!(s["saturation_bound"], true);
    assert_eq!(
        s["legend"],
        "pipe · knee none ≤ 10k · saturation ≥ 9.9k, 1 of 2 rounds"
    );
    // The table beneath: the same medians, and the knee and saturation.
    assert!(page.html.contains(
        "<td>pipe</td><td class=\"num\">1k</td><td class=\"num\">990</td>\
         <td class=\"num\">2</td><td class=\"num\">5.05</td><td class=\"num\">10.1</td>\
         <td class=\"num\">15.2</td><td class=\"num\">0</td><td class=\"num\">0</td><td></td>"
    ));
    assert!(page.html.contains("none ≤ 10k"));
    assert!(page.html.contains("≥ 9.9k, 1 of 2 rounds"));
    assert!(page.html.contains("sleep, then spin"));
}

#[test]
fn points_that_fell_short_are_told_apart_and_no_missing_latency_is_a_value() {
    let mut c = curve();
    // Round 1 at 10k: half its offer, its sender behind.
    c.points[1].achieved_rate = 5000.0;
    c.points[1].late = 7;
    c.points[1].behind_max_ns = 250_000;
    // Round 2 at 1k: nothing arrived; round 1's latencies stand alone.
    c.points[2].received = 0;
    c.points[2].lost = 1000;
    let mut gone = curve();
    // Every round at 1k: nothing arrived, so 1k has no latency at all.
    for k in [0, 2] {
        gone.points[k].received = 0;
        gone.points[k].lost = 1000;
        gone.points[k].latency_ns.p50 = 0.0;
    }
    let page = render(
        &[input(
            "r.json",
            rate_run(vec![rate("pipe", 64, c), rate("udp", 64, gone)]),
        )],
        0.05,
    );
    let chart = &charts(&page.html)[0];
    let pipe = &chart["series"][0];
    assert_eq!(pipe["short"], json!([false, true]));
    assert!(close(values(pipe, "p50")[0], 5.0), "round 1's alone");
    assert!(
        page.html
            .contains("<tr class=\"saturated\"><td>pipe</td><td class=\"num\">10k</td>")
    );
    assert!(page.html.contains(
        "saturated: achieved 50% of the offer; sender behind: 7 sent late, up to 250 µs"
    ));
    assert!(
        page.html
            .contains("lost 1000 of 2000; no message arrived in 1 of 2 rounds")
    );
    // udp at 1k: no point in the chart, no number in the table.
    let udp = &chart["series"][1];
    assert_eq!(values(udp, "p99")[0], None);
    assert!(page.html.contains(
        "<td>udp</td><td class=\"num\">1k</td><td class=\"num\">990</td>\
         <td class=\"num\">2</td><td class=\"num\"></td><td class=\"num\"></td>\
         <td class=\"num\"></td>"
    ));
    assert!(page.html.contains("no message arrived in 2 of 2 rounds"));
}

#[test]
fn every_string_of_a_rate_run_is_escaped() {
    let mut c = curve();
    c.waiting = HOSTILE.into();
    let mut f = rate(HOSTILE, 64, c);
    f.note = Some(HOSTILE.into());
    let r = rate_run(vec![
        f,
        rate("pipe", 64, curve()),
        skipped("x", 64, HOSTILE),
    ]);
    let page = render(&[input(HOSTILE, r)], 0.05);
    let own = own_text(&page.html);
    assert!(
        !own.contains(HOSTILE),
        "a report string reached the page unescaped"
    );
    assert!(!own.contains("<script>alert"));
    let data = own.split("id=\"report-data\">").nth(1).unwrap();
    let data = &data[..data.find("</script>").unwrap()];
    assert!(!data.contains('<'), "the chart data holds a raw '<'");
    assert_eq!(charts(&page.html)[0]["series"][0]["label"], HOSTILE);
}

#[test]
fn a_run_without_rate_figures_has_no_rate_section() {
    let page = render(&[input("a.json", run(1.0))], 0.05);
    assert!(!page.html.contains("Latency against offered load"));
    assert!(charts(&page.html).iter().all(|c| c["kind"] != "rate"));
}

#[test]
fn a_rate_run_s_report_draws_its_measured_size_only() {
    // tests/reports/rate.json: pipe and udp measured at 64 B (2k and 20k),
    // every figure at 4 B skipped (no room for the sequence number).
    let r = RunRecord::parse(include_str!("../../../../tests/reports/rate.json")).unwrap();
    let page = render(&[input("rate.json", r)], 0.05);
    let charts = charts(&page.html);
    assert_eq!(charts.len(), 1, "64 B only");
    assert_eq!(charts[0]["x"], json!([2000.0, 20_000.0]));
    assert!(page.html.contains("Not drawn: no mechanism has a latency"));
    assert!(
        page.html
            .contains("a 4-byte message cannot carry the 8-byte sequence number")
    );
    // udp's knee at 20k, marked on the chart.
    assert_eq!(charts[0]["series"][1]["knee"], 20_000.0);
}
