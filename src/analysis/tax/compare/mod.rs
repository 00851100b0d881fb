//! Two tax reports compared (`ipcmark compare A.json B.json`): does a
//! layer cost a figure more on one machine, kernel or configuration than
//! on the other? Each side's cost is its passes' ratios layer / bare (pass
//! `i` of the layer beside pass `i` of bare), so each side's own level
//! cancels before the sides meet; the two sets of log ratios are then
//! compared by Welch's t, the passes again the unit that varies.

use crate::record::build::BuildRecord;
use crate::record::facts::IntervalRecord;
use crate::record::tax::{
    Differs, TAX_COMPARE_SCHEMA, TaxCell, TaxChange, TaxCompareReport, TaxReport, TaxRow, TaxSide,
    TaxUnmatched,
};
use crate::stats::compare::{benjamini_hochberg, welch_log};
use std::collections::BTreeMap;

/// Compares tax report `b` (read from `path_b`) with `a` at `alpha`.
pub fn compare(
    path_a: &str,
    a: &TaxReport,
    path_b: &str,
    b: &TaxReport,
    alpha: f64,
    build: BuildRecord,
) -> TaxCompareReport {
    let mut changes = Vec::new();
    let mut unmatched = Vec::new();
    let (ca, cb) = (cells(a), cells(b));
    for (key, &(row_a, cell_a)) in &ca {
        let miss = |why: String| TaxUnmatched {
            benchmark: key.0.clone(),
            mode: key.1.clone(),
            size_bytes: key.2,
            layer: key.3.clone(),
            why,
        };
        let Some(&(row_b, cell_b)) = cb.get(key) else {
            unmatched.push(miss("only in A".into()));
            continue;
        };
        match change(key, (row_a, cell_a), (row_b, cell_b), alpha) {
            Ok(c) => changes.push(c),
            Err(why) => unmatched.push(miss(why)),
        }
    }
    for key in cb.keys().filter(|k| !ca.contains_key(*k)) {
        unmatched.push(TaxUnmatched {
            benchmark: key.0.clone(),
            mode: key.1.clone(),
            size_bytes: key.2,
            layer: key.3.clone(),
            why: "only in B".into(),
        });
    }
    // Eighty changes tested at alpha each would show about four that
    // nothing moved: they are judged together, as the ledger's cells are.
    let p: Vec<f64> = changes.iter().map(|c: &TaxChange| c.p).collect();
    for (c, adjusted) in changes.iter_mut().zip(benjamini_hochberg(&p)) {
        c.p_adjusted = adjusted;
        c.significant = adjusted < alpha;
        c.verdict = verdict(c.significant, c.change_percent > 0.0).into();
    }
    let layers = |r: &TaxReport| -> BTreeMap<String, String> {
        r.layers
            .iter()
            .map(|l| (l.name.clone(), l.status.clone()))
            .collect()
    };
    let mitigations =
        |r: &TaxReport| -> BTreeMap<String, String> { r.mitigations.iter().cloned().collect() };
    TaxCompareReport {
        schema: TAX_COMPARE_SCHEMA.into(),
        build,
        alpha,
        a: side(path_a, a),
        b: side(path_b, b),
        changes,
        unmatched,
        layers_differ: differ(&layers(a), &layers(b)),
        mitigations_differ: differ(&mitigations(a), &mitigations(b)),
    }
}

/// A cell's identity: benchmark, mode, size, layer.
type Key = (String, String, usize, String);

/// Every cell of a report by its identity, with its row.
fn cells(r: &TaxReport) -> BTreeMap<Key, (&TaxRow, &TaxCell)> {
    r.rows
        .iter()
        .flat_map(|row| {
            row.cells.iter().map(move |c| {
                let key = (
                    row.benchmark.clone(),
                    row.mode.clone(),
                    row.size_bytes,
                    c.layer.clone(),
                );
                (key, (row, c))
            })
        })
        .collect()
}

fn side(path: &str, r: &TaxReport) -> TaxSide {
    TaxSide {
        path: path.into(),
        host: r.host.clone(),
        kernel: r.kernel.clone(),
        started_at: r.started_at.clone(),
        passes_done: r.passes_done,
    }
}

/// Every name whose value differs, or that only one side has.
fn differ(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<Differs> {
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| a.get(*n) != b.get(*n))
        .map(|n| Differs {
            name: n.clone(),
            a: a.get(n).cloned(),
            b: b.get(n).cloned(),
        })
        .collect()
}

/// A side's ratio layer / bare in each pass both ran.
fn ratios(row: &TaxRow, cell: &TaxCell) -> Vec<f64> {
    row.bare_pass_medians_ns
        .iter()
        .zip(&cell.pass_medians_ns)
        .map(|(bare, layer)| layer / bare)
        .collect()
}

fn change(
    key: &Key,
    (row_a, a): (&TaxRow, &TaxCell),
    (row_b, b): (&TaxRow, &TaxCell),
    alpha: f64,
) -> Result<TaxChange, String> {
    for (side, c) in [("A", a), ("B", b)] {
        if c.status != "ok" {
            return Err(format!("{side}: {}", c.status));
        }
    }
    let (ra, rb) = (ratios(row_a, a), ratios(row_b, b));
    let (Some(da), Some(db)) = (a.diff_ns, b.diff_ns) else {
        return Err("a side has no difference".into());
    };
    let Some(w) = welch_log(&ra, &rb, 1.0 - alpha) else {
        return Err(format!(
            "each side needs two passes or more with pass medians (A {}, B {}): a report \
             written before tax kept them cannot be compared",
            ra.len(),
            rb.len()
        ));
    };
    let geo = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
    let change = geo(&rb) / geo(&ra);
    let significant = w.p < alpha;
    Ok(TaxChange {
        benchmark: key.0.clone(),
        mode: key.1.clone(),
        size_bytes: key.2,
        layer: key.3.clone(),
        diff_a_ns: da,
        diff_a_percent: a.diff_percent.unwrap_or(0.0),
        significant_a: a.significant,
        diff_b_ns: db,
        diff_b_percent: b.diff_percent.unwrap_or(0.0),
        significant_b: b.significant,
        change_percent: (change - 1.0) * 100.0,
        change_interval_percent: IntervalRecord {
            low: (w.ratio_interval.low - 1.0) * 100.0,
            high: (w.ratio_interval.high - 1.0) * 100.0,
        },
        p: w.p,
        p_adjusted: w.p,
        significant,
        verdict: verdict(significant, change > 1.0).into(),
    })
}

fn verdict(significant: bool, more: bool) -> &'static str {
    match (significant, more) {
        (false, _) => "no significant change",
        (true, true) => "costs more",
        (true, false) => "costs less",
    }
}

#[cfg(test)]
mod tests;
