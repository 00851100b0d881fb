use super::*;
use crate::record::build::BuildRecord;
use crate::record::tax::TaxRow;

/// tests/reports/ipc-quick.json with each figure's samples set to `base`
/// × (1 + small spread) × `scale` for pipe, `base` for the others: one
/// pass of a variant.
fn pass(scale: f64, wobble: f64) -> RunRecord {
    let mut r = RunRecord::parse(include_str!("../../../tests/reports/ipc-quick.json")).unwrap();
    for f in &mut r.results {
        let s = if f.benchmark == "pipe" { scale } else { 1.0 };
        let samples: Vec<f64> = (0..20)
            .map(|i| 1000.0 * s * wobble * (1.0 + (i % 5) as f64 * 0.002))
            .collect();
        f.latency_ns.as_mut().unwrap().p99 = Some(1500.0 * s * wobble);
        f.latency_ns.as_mut().unwrap().max = Some(9000.0 * s * wobble);
        f.samples_ns = Some(samples);
        f.passes = None;
    }
    r
}

fn build() -> BuildRecord {
    crate::output::json::build::current()
}

#[test]
fn passes_merge_into_one_figure_with_each_pass_median() {
    let passes = [pass(1.0, 1.0), pass(1.0, 1.02), pass(1.0, 0.99)];
    let m = merge_passes(&passes).unwrap();
    let pipe = &m.results[0];
    assert_eq!(pipe.samples_ns.as_ref().unwrap().len(), 60);
    let p = pipe.passes.as_ref().unwrap();
    assert_eq!(p.count, 3);
    assert!((p.medians_ns[1] / p.medians_ns[0] - 1.02).abs() < 1e-9);
    let l = pipe.latency_ns.as_ref().unwrap();
    // p99: the median of the passes'; max: the largest.
    assert!((l.p99.unwrap() - 1500.0).abs() < 1e-6);
    assert!((l.max.unwrap() - 9000.0 * 1.02).abs() < 1e-6);
    assert!(merge_passes(&[]).is_none());
}

#[test]
fn a_figure_that_failed_in_one_pass_is_failed_in_the_merge() {
    let mut second = pass(1.0, 1.0);
    second.results[1].status = Status::Failed;
    second.results[1].error = Some("the peer died".into());
    second.results.remove(2);
    let m = merge_passes(&[pass(1.0, 1.0), second]).unwrap();
    assert_eq!(m.results[1].status, Status::Failed);
    assert_eq!(m.results[1].error.as_deref(), Some("the peer died"));
    assert_eq!(m.results[2].status, Status::Failed);
    assert_eq!(
        m.results[2].error.as_deref(),
        Some("measured in 1 of 2 passes")
    );
    assert_eq!(m.results[0].status, Status::Ok);
}

#[test]
fn a_layer_that_slows_one_figure_shows_there_and_nowhere_else() {
    let wobble = [1.0, 1.01, 0.99, 1.005, 0.995];
    let bare: Vec<RunRecord> = wobble.iter().map(|&w| pass(1.0, w)).collect();
    // Each pass of the layer beside bare's, a little off its level.
    let beside = [1.001, 0.999, 1.002, 0.998, 1.0];
    let slow: Vec<RunRecord> = wobble
        .iter()
        .zip(beside)
        .map(|(&w, b)| pass(1.3, w * b))
        .collect();
    let (bare, slow) = (merge_passes(&bare).unwrap(), merge_passes(&slow).unwrap());
    let layers = [
        LayerRuns {
            name: "seccomp:args:100",
            runs: Ok(&slow),
            per_rule: Some(100),
        },
        LayerRuns {
            name: "ssbd",
            runs: Err("failed: the pass under it failed".into()),
            per_rule: None,
        },
    ];
    let rows = rows(&bare, &layers, 0.05, &build());
    assert_eq!(rows.len(), bare.results.len());
    let pipe = &rows[0];
    assert_eq!((pipe.benchmark.as_str(), pipe.size_bytes), ("pipe", 64));
    let c = &pipe.cells[0];
    assert_eq!(c.status, "ok");
    assert!(c.significant, "{c:?}");
    let d = c.diff_ns.unwrap();
    assert!((d - 300.0).abs() < 10.0, "{d}");
    assert!((c.diff_percent.unwrap() - 30.0).abs() < 1.0);
    let i = c.diff_interval_ns.as_ref().unwrap();
    assert!(i.low < d && d < i.high, "{i:?}");
    assert!((c.per_rule_ns.unwrap() - d / 100.0).abs() < 1e-9);
    assert_eq!(c.test.as_deref(), Some("paired-passes"));
    assert_eq!(c.pass_medians_ns.len(), 5);
    assert_eq!(pipe.bare_pass_medians_ns.len(), 5);
    // shm-futex did not move under the layer.
    let futex = &rows[2];
    assert!(!futex.cells[0].significant, "{:?}", futex.cells[0]);
    // The failed layer's cells say why.
    assert_eq!(pipe.cells[1].status, "failed: the pass under it failed");
    assert!(pipe.cells[1].diff_ns.is_none());
}

#[test]
fn argument_filters_of_several_sizes_give_a_cost_per_rule_and_a_fixed_cost() {
    let wobble = [1.0, 1.01, 0.99];
    let bare = merge_passes(&wobble.map(|w| pass(1.0, w))).unwrap();
    // pipe: 1000 ns bare; +50 ns under 1 rule, +250 ns under 201 rules: a
    // line of 1 ns per rule over 49 ns fixed.
    let one = merge_passes(&wobble.map(|w| pass(1.05, w))).unwrap();
    let many = merge_passes(&wobble.map(|w| pass(1.25, w))).unwrap();
    let layers = [
        LayerRuns {
            name: "seccomp:args:1",
            runs: Ok(&one),
            per_rule: Some(1),
        },
        LayerRuns {
            name: "seccomp:args:201",
            runs: Ok(&many),
            per_rule: Some(201),
        },
    ];
    let rows = rows(&bare, &layers, 0.05, &build());
    let rc = rows[0].rule_cost.as_ref().unwrap();
    assert_eq!(rc.rules, [1, 201]);
    let (d1, d201) = (
        rows[0].cells[0].diff_ns.unwrap(),
        rows[0].cells[1].diff_ns.unwrap(),
    );
    assert!(
        (rc.per_rule_ns - (d201 - d1) / 200.0).abs() < 1e-9,
        "{rc:?}"
    );
    assert!((rc.fixed_ns - (d1 - rc.per_rule_ns)).abs() < 1e-6, "{rc:?}");
    assert!((rc.per_rule_ns - 1.0).abs() < 0.1, "{rc:?}");
    // One N alone gives no line.
    let rows = rows_of_one(&bare, &one);
    assert!(rows[0].rule_cost.is_none());
}

fn rows_of_one(bare: &RunRecord, one: &RunRecord) -> Vec<TaxRow> {
    let layers = [LayerRuns {
        name: "seccomp:args:1",
        runs: Ok(one),
        per_rule: Some(1),
    }];
    rows(bare, &layers, 0.05, &build())
}

#[test]
fn a_small_cost_hidden_by_the_passes_drift_shows_pass_by_pass() {
    // The machine's level moves by ±15% between passes; the layer costs 2%
    // within each (±0.2%). Between passes nothing shows; within them it does.
    let level = [1.0, 1.15, 0.85, 1.1, 0.9];
    let cost = [1.02, 1.022, 1.018, 1.021, 1.019];
    let bare = merge_passes(&level.map(|w| pass(1.0, w))).unwrap();
    let layer: Vec<RunRecord> = level.iter().zip(cost).map(|(&w, c)| pass(c, w)).collect();
    let layer = merge_passes(&layer).unwrap();
    let pipe = &rows_of_one(&bare, &layer)[0];
    let c = &pipe.cells[0];
    assert_eq!(c.test.as_deref(), Some("paired-passes"));
    assert!(c.significant, "{c:?}");
    assert!((c.diff_percent.unwrap() - 2.0).abs() < 0.1, "{c:?}");
    let i = c.diff_interval_ns.as_ref().unwrap();
    assert!(i.low > 0.0 && i.low < c.diff_ns.unwrap() && c.diff_ns.unwrap() < i.high);
    // Compare's test between the passes' medians does not see it.
    let cmp = crate::analysis::compare::compare("a", &bare, "b", &layer, 0.05, build());
    assert!(!cmp.comparisons[0].significant);
    // A figure the layer left alone: every ratio 1, no difference.
    assert!(!rows_of_one(&bare, &layer)[2].cells[0].significant);
}

#[test]
fn passes_that_do_not_pair_fall_back_on_compare_s_test() {
    // A study stopped mid-pass: bare ran a third pass, the layer two. The
    // two finished pair.
    let bare = merge_passes(&[1.0, 1.1, 0.9].map(|w| pass(1.0, w))).unwrap();
    let layer = merge_passes(&[1.0, 1.1].map(|w| pass(1.2, w))).unwrap();
    let c = &rows_of_one(&bare, &layer)[0].cells[0];
    assert_eq!(c.test.as_deref(), Some("paired-passes"));
    assert!((c.diff_percent.unwrap() - 20.0).abs() < 1e-6, "{c:?}");
    // One pass a side: nothing to pair, Mann–Whitney on the samples.
    let bare = merge_passes(&[pass(1.0, 1.0)]).unwrap();
    let layer = merge_passes(&[pass(1.2, 1.0)]).unwrap();
    let c = &rows_of_one(&bare, &layer)[0].cells[0];
    assert_eq!(c.test.as_deref(), Some("mann-whitney-samples"));
}

#[test]
fn significance_is_judged_over_the_whole_ledger() {
    // Twenty cells: one clear (p = 0.0001), one borderline (p = 0.03) and
    // eighteen that nothing moved. At 0.05 each, the borderline one would
    // be marked; over the ledger (Benjamini–Hochberg) only the clear one is.
    let bare = merge_passes(&[1.0, 1.01, 0.99].map(|w| pass(1.0, w))).unwrap();
    let layer = merge_passes(&[1.0, 1.01, 0.99].map(|w| pass(1.3, w))).unwrap();
    let mut rows = rows_of_one(&bare, &layer);
    let template = rows[0].clone();
    rows.clear();
    for i in 0..20 {
        let mut row = template.clone();
        row.cells[0].p = Some(match i {
            0 => 0.0001,
            1 => 0.03,
            _ => 0.2 + 0.04 * i as f64,
        });
        rows.push(row);
    }
    adjust(&mut rows, 0.05);
    assert!(rows[0].cells[0].significant);
    assert!((rows[0].cells[0].p_adjusted.unwrap() - 0.002).abs() < 1e-12);
    assert!(!rows[1].cells[0].significant, "{:?}", rows[1].cells[0]);
    assert!((rows[1].cells[0].p_adjusted.unwrap() - 0.3).abs() < 1e-12);
    assert!(rows[2..].iter().all(|r| !r.cells[0].significant));
}
