//! The tax page without a browser: a bar per cell with a difference, hollow
//! where the test finds none, a mark and no bar for a cell without one, a
//! chart and a table per ledger table, every report string escaped, no
//! request. `tests/report.rs` renders it in headless Chromium.

use super::*;
use crate::output::report::tests::HOSTILE;
use crate::record::facts::IntervalRecord;
use crate::record::tax::{LayerRecord, RuleCostRecord, TAX_SCHEMA, ThrottlingRecord};

fn cell(layer: &str, diff: Option<f64>, significant: bool) -> TaxCell {
    TaxCell {
        layer: layer.into(),
        status: if diff.is_some() {
            "ok".into()
        } else {
            format!("failed: {HOSTILE}")
        },
        median_ns: diff.map(|d| 1000.0 + d),
        pass_medians_ns: Vec::new(),
        diff_ns: diff,
        diff_percent: diff.map(|d| d / 10.0),
        diff_interval_ns: diff.map(|d| IntervalRecord {
            low: d - 10.0,
            high: d + 10.0,
        }),
        p: Some(if significant { 0.001 } else { 0.5 }),
        test: Some("welch-passes".into()),
        p_adjusted: None,
        significant,
        p99_ns: Some(2000.0),
        max_ns: Some(30_000_000.0),
        per_rule_ns: diff
            .filter(|_| layer.starts_with("seccomp:args"))
            .map(|d| d / 100.0),
        parts: None,
    }
}

fn layer(name: &str, status: &str) -> LayerRecord {
    LayerRecord {
        name: name.into(),
        status: status.into(),
        how: vec![format!("how {name}")],
        reasons: if status == "applied" {
            vec![]
        } else {
            vec![HOSTILE.into()]
        },
        seccomp_rules: None,
        cgroup_version: None,
        throttling: name.starts_with("cpu-max:").then_some(ThrottlingRecord {
            periods: 50,
            throttled_periods: 7,
            throttled_ns: 12_000_000,
        }),
    }
}

/// Two figures of operations and one of 64 B messages under three applied
/// layers (one of them failed) and a skipped one; hostile strings in the
/// host, a benchmark, a reason and a status.
fn report() -> TaxReport {
    let layers = ["seccomp:args:100", "cpu-max:20ms/100ms", "netns"];
    let row = |bench: &str, size: usize, cells: Vec<TaxCell>| TaxRow {
        benchmark: bench.into(),
        mode: if size == 0 { "op" } else { "pingpong" }.into(),
        size_bytes: size,
        bare_median_ns: Some(1000.0),
        bare_p99_ns: Some(1500.0),
        bare_max_ns: Some(9000.0),
        bare_pass_medians_ns: Vec::new(),
        cells,
        rule_cost: None,
    };
    let mut rows = vec![
        row(
            "syscall-getpid",
            0,
            vec![
                cell(layers[0], Some(250.0), true),
                cell(layers[1], Some(3.0), false),
                cell(layers[2], None, false),
            ],
        ),
        row(
            HOSTILE,
            0,
            vec![
                cell(layers[0], Some(-40.0), true),
                cell(layers[1], Some(-2.0), false),
                cell(layers[2], None, false),
            ],
        ),
        row(
            "pipe",
            64,
            vec![
                cell(layers[0], Some(120.0), true),
                cell(layers[1], Some(900.0), true),
                cell(layers[2], None, false),
            ],
        ),
    ];
    rows[2].rule_cost = Some(RuleCostRecord {
        per_rule_ns: 1.25,
        fixed_ns: 20.0,
        rules: vec![10, 100],
    });
    TaxReport {
        schema: TAX_SCHEMA.into(),
        build: crate::output::json::build::current(),
        host: HOSTILE.into(),
        kernel: "6.1".into(),
        started_at: "2026-01-02T03:04:05Z".into(),
        ended_at: "2026-01-02T03:14:05Z".into(),
        passes: 5,
        passes_done: 4,
        alpha: 0.05,
        mitigations: vec![
            ("spectre_v2".into(), "Mitigation: Retpolines".into()),
            ("mds".into(), "Not affected".into()),
        ],
        layers: vec![
            layer(layers[0], "applied"),
            layer(layers[1], "applied"),
            layer(layers[2], "failed"),
            layer("ssbd", "skipped"),
        ],
        rows,
        stopped: Some(2),
        explain: None,
    }
}

/// The page's charts, in order.
fn charts(html: &str) -> Vec<&str> {
    html.split("<svg class=\"tax-chart\"")
        .skip(1)
        .map(|s| &s[..s.find("</svg>").unwrap()])
        .collect()
}

#[test]
fn a_chart_per_ledger_table_with_a_bar_per_cell_that_has_a_difference() {
    let page = render_tax("tax.json", &report());
    assert_eq!(page.charts, 2, "operations and 64 B");
    let charts = charts(&page.html);
    assert_eq!(charts.len(), 2);
    let (ops, msgs) = (charts[0], charts[1]);
    // Operations: two figures, each two bars (one filled, one hollow) and a
    // mark for the failed layer, whose reason is its tooltip.
    assert_eq!(ops.matches("<rect class=\"bar\"").count(), 2, "{ops}");
    assert_eq!(
        ops.matches("<rect class=\"bar hollow\"").count(),
        2,
        "{ops}"
    );
    assert_eq!(ops.matches("<text class=\"na\"").count(), 2, "{ops}");
    assert!(ops.contains("<title>syscall-getpid · netns: failed: &lt;script&gt;"));
    assert!(ops.contains(
        "<title>syscall-getpid · seccomp:args:100: +250 ±10.0 (+25%) ns, p = 0.001 (welch-passes)</title>"
    ));
    assert!(ops.contains("no difference at α</title>"));
    // A negative difference: a tick below zero.
    assert!(ops.contains(">-"), "{ops}");
    assert!(ops.contains("<line class=\"zero\""));
    // Messages: both bars filled, the failed one marked.
    assert_eq!(msgs.matches("<rect class=\"bar\"").count(), 2, "{msgs}");
    assert_eq!(msgs.matches("class=\"bar hollow\"").count(), 0);
    assert_eq!(msgs.matches("<text class=\"na\"").count(), 1);
    // The legend: each applied layer once, the skipped one not at all.
    for l in ["seccomp:args:100", "cpu-max:20ms/100ms", "netns"] {
        assert_eq!(msgs.matches(&format!(">{l}</text>")).count(), 1, "{l}");
    }
    assert!(!msgs.contains("ssbd"));
    assert!(msgs.contains("hollow: no difference at α"));
}

#[test]
fn each_chart_has_its_table_and_the_page_says_what_the_ledger_says() {
    let html = render_tax("tax.json", &report()).html;
    assert!(html.contains("<h2>Operations</h2>") && html.contains("<h2>Messages of 64 bytes</h2>"));
    // The ledger's cells: differences, = and the status.
    assert!(html.contains(">+250 ±10.0 (+25%)</td>"), "{html}");
    assert!(html.contains(">=</td>"));
    assert!(html.contains(">-40.0 ±10.0 (-4.0%)</td>"));
    assert!(html.contains("<td class=\"status failed\""));
    // The tails under the quota, a row per figure.
    assert_eq!(html.matches("<td>cpu-max:20ms/100ms</td>").count(), 3);
    assert!(html.contains("throttled in 7 of 50 periods, 12.0 ms in all"));
    // The rule cost, from the line and from a cell.
    assert!(html.contains("pipe: +1.25 ns per rule and +20.0 ns for having a filter"));
    assert!(html.contains("syscall-getpid seccomp:args:100: +2.50 ns per rule"));
    // The skipped layer is listed with its reason; the mitigations counted.
    assert!(html.contains("<tr class=\"skipped\"><td class=\"fig\">ssbd</td><td>skipped</td>"));
    assert!(html.contains("1 of 2 reported in force (spectre_v2)"));
    assert!(html.contains("4 of 5 done") && html.contains("by signal 2"));
}

#[test]
fn every_string_is_escaped_and_the_page_makes_no_request() {
    let html = render_tax(HOSTILE, &report()).html;
    assert!(!html.contains(HOSTILE));
    assert!(!html.contains("<script>alert"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"));
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(!html.contains("uPlot.min") && !html.contains("leeoniya"));
    assert!(html.contains("<pre id=\"selfcheck\">pending</pre>"));
    assert!(html.contains("id=\"report-data\">{\"charts\":[]}</script>"));
}

#[test]
fn no_applied_layer_no_chart() {
    let mut r = report();
    for row in &mut r.rows {
        row.cells.clear();
    }
    r.layers.retain(|l| l.status == "skipped");
    let page = render_tax("t", &r);
    assert_eq!(page.charts, 0);
    assert!(page.html.contains("No layer was applied"));
}

#[test]
fn with_explain_each_difference_found_has_its_parts_bare_and_under_the_layer() {
    use crate::record::compare::{PartMove, PartsMoved};
    use crate::record::tax::TaxExplainRecord;
    let mut r = report();
    let part = |name: &str, a: f64, b: f64| PartMove {
        name: name.into(),
        mean_a_ns: a,
        mean_b_ns: b,
        change_ns: b - a,
        share_of_change: Some((b - a) / 130.0),
    };
    r.rows[2].cells[0].parts = Some(PartsMoved {
        round_trip_a_ns: 2000.0,
        round_trip_b_ns: 2130.0,
        parts: vec![
            part("write: syscall", 300.0, 420.0),
            part(HOSTILE, 50.0, 60.0),
        ],
        moved_most: Some("write: syscall".into()),
    });
    // A difference the test does not find gets no table, parts or not.
    r.rows[0].cells[1].parts = r.rows[2].cells[0].parts.clone();
    r.explain = Some(TaxExplainRecord {
        round_trips: 400,
        pass: 4,
        unexplained: vec![format!("netns: pipe 64: {HOSTILE}")],
    });
    let html = render_tax("tax.json", &r).html;
    assert!(html.contains("<a href=\"#tax-explain\">where the differences land</a>"));
    assert!(html.contains("anatomies of 400 round trips (operations) in pass 4"));
    assert_eq!(
        html.matches("<table class=\"data parts-moved\">").count(),
        1
    );
    assert!(html.contains("<h3>pipe 64 under seccomp:args:100: +120 ns, where it lands</h3>"));
    assert!(html.contains("<th>bare ns</th><th>seccomp:args:100 ns</th>"));
    assert!(html.contains("<tr class=\"moved-most\"><td>write: syscall</td>"));
    assert!(html.contains("<td>round trip</td><td class=\"num\">2000</td>"));
    assert!(html.contains("<summary>1 without an anatomy</summary>"));
    assert!(!html.contains(HOSTILE));
    // Without --explain, no such section.
    let plain = render_tax("tax.json", &report()).html;
    assert!(!plain.contains("tax-explain") && !plain.contains("parts-moved"));
}
