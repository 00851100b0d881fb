//! The ledger of `ipcmark tax`: each variant's passes (one run record per
//! pass, each run made under that variant) merged into one record whose
//! figures keep every pass's median, then each layer compared with bare
//! pass by pass: a paired t test on the logs of each pass's ratio layer /
//! bare, the two measured minutes apart at most within one pass, so the
//! machine's level, which moves between passes by more than a layer's
//! small cost, cancels. Where the passes do not pair (a side with one
//! pass), `compare`'s own test decides.

pub mod compare;

use super::compare as run_compare;
use crate::record::build::BuildRecord;
use crate::record::compare::{Comparison, Test};
use crate::record::facts::{IntervalRecord, PassesRecord};
use crate::record::tax::{RuleCostRecord, TaxCell, TaxRow};
use crate::record::{FigureRecord, RunRecord, Status};
use crate::stats::compare::{benjamini_hochberg, paired_log};
use crate::stats::median;

/// One variant's passes merged: each figure of the first pass with every
/// pass's samples pooled and each pass's median kept (`passes`), its p99
/// the median of the passes' p99 and its max the largest; a figure that
/// failed or was skipped in any pass takes that pass's status. `None`
/// without a pass.
pub fn merge_passes(passes: &[RunRecord]) -> Option<RunRecord> {
    let mut merged = passes.first()?.clone();
    for figure in &mut merged.results {
        let key = figure.key();
        let same: Vec<&FigureRecord> = passes
            .iter()
            .filter_map(|p| p.results.iter().find(|r| r.key() == key))
            .collect();
        if same.len() < passes.len() {
            figure.status = Status::Failed;
            figure.error = Some(format!(
                "measured in {} of {} passes",
                same.len(),
                passes.len()
            ));
            continue;
        }
        if let Some(bad) = same.iter().find(|r| r.status != Status::Ok) {
            figure.status = bad.status;
            figure.error = bad.error.clone();
            figure.reason = bad.reason.clone();
            continue;
        }
        let samples: Vec<&Vec<f64>> = same.iter().filter_map(|r| r.samples_ns.as_ref()).collect();
        if samples.len() < same.len() || samples.iter().any(|s| s.is_empty()) {
            continue;
        }
        figure.passes = Some(PassesRecord {
            count: samples.len(),
            medians_ns: samples.iter().map(|s| median(s)).collect(),
            drift_corrected_medians_ns: Vec::new(),
            own_interval: None,
        });
        figure.samples_ns = Some(samples.iter().flat_map(|s| s.iter().copied()).collect());
        // An anatomy is made in one pass (`--explain`: the last).
        figure.explain = same.iter().find_map(|r| r.explain.clone());
        let p99s: Vec<f64> = same
            .iter()
            .filter_map(|r| r.latency_ns.as_ref()?.p99)
            .collect();
        let max = same
            .iter()
            .filter_map(|r| r.latency_ns.as_ref()?.max)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        if let Some(l) = figure.latency_ns.as_mut() {
            l.median = median(figure.samples_ns.as_deref().unwrap_or_default());
            l.p99 = (p99s.len() == same.len()).then(|| median(&p99s));
            l.max = max;
        }
    }
    Some(merged)
}

/// A layer's merged passes (or why it has none) for [`rows`].
pub struct LayerRuns<'a> {
    /// The layer's name.
    pub name: &'a str,
    /// Its passes merged, or why it has no figures.
    pub runs: Result<&'a RunRecord, String>,
    /// A `seccomp:args:N` layer's N: its cells give the difference per rule.
    pub per_rule: Option<usize>,
}

/// The ledger's rows: every figure of the bare runs, with its bare centre
/// and, per layer, the difference from bare and its test.
pub fn rows(
    bare: &RunRecord,
    layers: &[LayerRuns<'_>],
    alpha: f64,
    build: &BuildRecord,
) -> Vec<TaxRow> {
    let compared: Vec<Result<Vec<Comparison>, String>> = layers
        .iter()
        .map(|l| {
            l.runs.clone().map(|runs| {
                run_compare::compare("bare", bare, l.name, runs, alpha, build.clone()).comparisons
            })
        })
        .collect();
    let mut rows: Vec<TaxRow> = bare
        .results
        .iter()
        .map(|figure| {
            let key = figure.key();
            let mode = key.mode_label();
            let ok = figure.status == Status::Ok;
            let latency = figure.latency_ns.as_ref().filter(|_| ok);
            let cells: Vec<TaxCell> = layers
                .iter()
                .zip(&compared)
                .map(|(layer, compared)| {
                    let under = layer
                        .runs
                        .as_ref()
                        .ok()
                        .and_then(|r| r.results.iter().find(|f| f.key() == key));
                    cell(layer, figure, under, compared, &mode, alpha)
                })
                .collect();
            let rule_cost = rule_cost(layers, &cells);
            TaxRow {
                benchmark: figure.benchmark.clone(),
                mode,
                size_bytes: figure.size_bytes,
                bare_median_ns: latency.map(|l| l.median),
                bare_p99_ns: latency.and_then(|l| l.p99),
                bare_max_ns: latency.and_then(|l| l.max),
                bare_pass_medians_ns: pass_medians(figure),
                cells,
                rule_cost,
            }
        })
        .collect();
    adjust(&mut rows, alpha);
    rows
}

/// Judges every cell's test over the whole ledger (Benjamini–Hochberg at
/// q = alpha): a cell is significant where its adjusted p is below alpha.
fn adjust(rows: &mut [TaxRow], alpha: f64) {
    let tested: Vec<(usize, usize, f64)> = rows
        .iter()
        .enumerate()
        .flat_map(|(r, row)| {
            row.cells
                .iter()
                .enumerate()
                .filter_map(move |(c, cell)| Some((r, c, cell.p?)))
        })
        .collect();
    let p: Vec<f64> = tested.iter().map(|t| t.2).collect();
    for ((r, c, _), adjusted) in tested.iter().zip(benjamini_hochberg(&p)) {
        let cell = &mut rows[*r].cells[*c];
        cell.p_adjusted = Some(adjusted);
        cell.significant = adjusted < alpha;
    }
}

/// The least-squares line through the differences of the `seccomp:args:N`
/// cells against N, where two N or more have one.
fn rule_cost(layers: &[LayerRuns<'_>], cells: &[TaxCell]) -> Option<RuleCostRecord> {
    let points: Vec<(f64, f64)> = layers
        .iter()
        .zip(cells)
        .filter_map(|(l, c)| Some((l.per_rule? as f64, c.diff_ns?)))
        .collect();
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if points.len() < 2 || sxx <= 0.0 {
        return None;
    }
    let slope = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx;
    let mut rules: Vec<usize> = points.iter().map(|p| p.0 as usize).collect();
    rules.sort_unstable();
    Some(RuleCostRecord {
        per_rule_ns: slope,
        fixed_ns: my - slope * mx,
        rules,
    })
}

/// One figure under one layer.
fn cell(
    layer: &LayerRuns<'_>,
    bare: &FigureRecord,
    under: Option<&FigureRecord>,
    compared: &Result<Vec<Comparison>, String>,
    mode: &str,
    alpha: f64,
) -> TaxCell {
    let mut c = TaxCell {
        layer: layer.name.to_string(),
        status: "ok".into(),
        median_ns: None,
        pass_medians_ns: Vec::new(),
        diff_ns: None,
        diff_percent: None,
        diff_interval_ns: None,
        p: None,
        test: None,
        p_adjusted: None,
        significant: false,
        p99_ns: None,
        max_ns: None,
        per_rule_ns: None,
        parts: None,
    };
    let comparisons = match compared {
        Ok(c) => c,
        Err(why) => {
            c.status = why.clone();
            return c;
        }
    };
    let Some(under) = under else {
        c.status = "failed: not measured under the layer".into();
        return c;
    };
    if under.status != Status::Ok {
        c.status = format!(
            "{}: {}",
            under.status.name(),
            under
                .error
                .as_deref()
                .or(under.reason.as_deref())
                .unwrap_or("-")
        );
        return c;
    }
    let latency = under.latency_ns.as_ref();
    c.p99_ns = latency.and_then(|l| l.p99);
    c.max_ns = latency.and_then(|l| l.max);
    c.median_ns = latency.map(|l| l.median);
    if bare.status != Status::Ok {
        c.status = "not measured bare".into();
        return c;
    }
    let Some(cmp) = comparisons.iter().find(|x| {
        x.benchmark == bare.benchmark && x.size_bytes == bare.size_bytes && x.mode == mode
    }) else {
        c.status = "no samples to compare".into();
        return c;
    };
    c.median_ns = Some(cmp.median_b_ns);
    c.pass_medians_ns = pass_medians(under);
    c.parts = cmp.parts.clone();
    let base = cmp.median_a_ns;
    let interval = |low: f64, high: f64| IntervalRecord {
        low: (low - 1.0) * base,
        high: (high - 1.0) * base,
    };
    // Pass i of the layer ran beside pass i of bare: their ratio cancels
    // the machine's level, which moves between passes.
    // A study stopped mid-pass leaves some variants a pass ahead: the
    // passes both finished pair.
    let bare_passes = pass_medians(bare);
    let n = bare_passes.len().min(c.pass_medians_ns.len());
    match paired_log(&bare_passes[..n], &c.pass_medians_ns[..n], 1.0 - alpha) {
        Some(t) => {
            c.diff_ns = Some((t.ratio - 1.0) * base);
            c.diff_percent = Some((t.ratio - 1.0) * 100.0);
            c.diff_interval_ns = Some(interval(t.ratio_interval.low, t.ratio_interval.high));
            c.p = Some(t.p);
            c.test = Some("paired-passes".into());
            c.significant = t.p < alpha;
        }
        None => {
            c.diff_ns = Some(cmp.diff_ns);
            c.diff_percent = Some(cmp.diff_percent);
            c.diff_interval_ns = cmp.ratio_interval.as_ref().map(|r| interval(r.low, r.high));
            c.p = Some(cmp.p);
            c.test = Some(
                match cmp.test {
                    Test::WelchPasses => "welch-passes",
                    Test::MannWhitneySamples => "mann-whitney-samples",
                }
                .into(),
            );
            c.significant = cmp.significant;
        }
    }
    c.per_rule_ns = layer
        .per_rule
        .filter(|&n| n > 0)
        .zip(c.diff_ns)
        .map(|(n, d)| d / n as f64);
    c
}

/// A merged figure's median in each pass (empty without passes).
fn pass_medians(f: &FigureRecord) -> Vec<f64> {
    f.passes
        .as_ref()
        .map_or_else(Vec::new, |p| p.medians_ns.clone())
}

#[cfg(test)]
mod tests;
