use super::*;
use crate::record::tax::{LayerRecord, TAX_SCHEMA};

/// A cell whose passes cost `ratios` × bare.
fn cell(layer: &str, bare: &[f64], ratios: &[f64], significant: bool) -> TaxCell {
    let pass_medians_ns: Vec<f64> = bare.iter().zip(ratios).map(|(b, r)| b * r).collect();
    let r = ratios.iter().sum::<f64>() / ratios.len() as f64;
    TaxCell {
        layer: layer.into(),
        status: "ok".into(),
        median_ns: Some(bare[0] * r),
        pass_medians_ns,
        diff_ns: Some(bare[0] * (r - 1.0)),
        diff_percent: Some((r - 1.0) * 100.0),
        diff_interval_ns: None,
        p: Some(if significant { 0.001 } else { 0.5 }),
        test: Some("paired-passes".into()),
        p_adjusted: None,
        significant,
        p99_ns: None,
        max_ns: None,
        per_rule_ns: None,
        parts: None,
    }
}

fn report(bare: &[f64], seccomp: &[f64], netns: Option<&[f64]>, spectre: &str) -> TaxReport {
    let mut cells = vec![cell("seccomp:default", bare, seccomp, true)];
    let mut layers = vec![layer("seccomp:default", "applied")];
    match netns {
        Some(r) => {
            cells.push(cell("netns", bare, r, false));
            layers.push(layer("netns", "applied"));
        }
        None => layers.push(layer("netns", "skipped")),
    }
    TaxReport {
        schema: TAX_SCHEMA.into(),
        build: crate::output::json::build::current(),
        host: "h".into(),
        kernel: "k".into(),
        started_at: "-".into(),
        ended_at: "-".into(),
        passes: bare.len(),
        passes_done: bare.len(),
        alpha: 0.05,
        mitigations: vec![("spectre_v2".into(), spectre.into())],
        layers,
        rows: vec![TaxRow {
            benchmark: "syscall-getpid".into(),
            mode: "op".into(),
            size_bytes: 0,
            bare_median_ns: Some(bare[0]),
            bare_p99_ns: None,
            bare_max_ns: None,
            bare_pass_medians_ns: bare.to_vec(),
            cells,
            rule_cost: None,
        }],
        stopped: None,
        explain: None,
    }
}

fn layer(name: &str, status: &str) -> LayerRecord {
    LayerRecord {
        name: name.into(),
        status: status.into(),
        how: Vec::new(),
        reasons: Vec::new(),
        seccomp_rules: None,
        cgroup_version: None,
        throttling: None,
    }
}

#[test]
fn a_filter_that_costs_more_on_b_is_found_whatever_each_side_s_level() {
    // A: 145 ns bare, the filter +28% (±0.5%); B: a machine twice as slow
    // whose level moves ±10% between passes, the filter +40%.
    let a = report(
        &[145.0, 146.0, 144.0, 145.5, 145.0],
        &[1.28, 1.285, 1.275, 1.28, 1.282],
        Some(&[1.0, 1.001, 0.999, 1.0, 1.0]),
        "Mitigation: Retpolines",
    );
    let b = report(
        &[290.0, 320.0, 260.0, 300.0, 280.0],
        &[1.40, 1.405, 1.395, 1.40, 1.398],
        None,
        "Mitigation: IBRS",
    );
    let r = compare(
        "a.json",
        &a,
        "b.json",
        &b,
        0.05,
        crate::output::json::build::current(),
    );
    assert_eq!(r.schema, TAX_COMPARE_SCHEMA);
    assert_eq!(r.changes.len(), 1);
    let c = &r.changes[0];
    assert_eq!(
        (c.benchmark.as_str(), c.layer.as_str()),
        ("syscall-getpid", "seccomp:default")
    );
    assert!(c.significant, "{c:?}");
    assert_eq!(c.verdict, "costs more");
    // 1.40 / 1.28 − 1 = 9.4%.
    assert!((c.change_percent - 9.4).abs() < 0.2, "{c:?}");
    let i = &c.change_interval_percent;
    assert!(
        i.low < c.change_percent && c.change_percent < i.high,
        "{i:?}"
    );
    assert!((c.diff_b_ns - 290.0 * 0.3996).abs() < 1.0, "{c:?}");
    // netns: measured in A, skipped in B.
    assert_eq!(r.unmatched.len(), 1);
    assert_eq!(r.unmatched[0].layer, "netns");
    assert_eq!(r.unmatched[0].why, "only in A");
    assert_eq!(r.layers_differ.len(), 1);
    assert_eq!(r.layers_differ[0].name, "netns");
    assert_eq!(r.layers_differ[0].b.as_deref(), Some("skipped"));
    assert_eq!(
        r.mitigations_differ[0].a.as_deref(),
        Some("Mitigation: Retpolines")
    );
}

#[test]
fn the_same_cost_is_no_change_and_a_report_without_pass_medians_is_not_compared() {
    let bare = [145.0, 146.0, 144.0];
    let a = report(&bare, &[1.28, 1.29, 1.27], None, "x");
    let b = report(&bare, &[1.285, 1.275, 1.28], None, "x");
    let r = compare(
        "a",
        &a,
        "b",
        &b,
        0.05,
        crate::output::json::build::current(),
    );
    assert_eq!(r.changes[0].verdict, "no significant change");
    assert!(r.layers_differ.is_empty() && r.mitigations_differ.is_empty());
    // A report from before cells kept their pass medians.
    let mut old = a.clone();
    old.rows[0].bare_pass_medians_ns.clear();
    old.rows[0].cells[0].pass_medians_ns.clear();
    let r = compare(
        "a",
        &old,
        "b",
        &b,
        0.05,
        crate::output::json::build::current(),
    );
    assert!(r.changes.is_empty());
    assert!(
        r.unmatched[0].why.contains("pass medians"),
        "{:?}",
        r.unmatched
    );
    // A failed cell says so.
    let mut failed = b.clone();
    failed.rows[0].cells[0].status = "failed: the peer died".into();
    let r = compare(
        "a",
        &a,
        "b",
        &failed,
        0.05,
        crate::output::json::build::current(),
    );
    assert_eq!(r.unmatched[0].why, "B: failed: the peer died");
}
