//! The matrices of `ipcmark map` from a run's records: each figure of
//! `settings.map.figures` over every pair of `settings.map.pairs` (each
//! result names its pair), and each class's pairs summarised: the median of
//! their medians and how far apart they lie.

use crate::record::map::{CellRecord, ClassRecord, MapRecord, MapSettingsRecord, MatrixRecord};
use crate::record::{FigureRecord, RunRecord, Status};
use crate::stats::Summary;

/// The map of `report`, or `None` when it is not a map's report. Pairs a
/// stopped run never reached have no cell.
pub fn summarise(report: &RunRecord) -> Option<MapRecord> {
    let map = report.settings.map.as_ref()?;
    // Each figure by what it is: its pair, mechanism and size.
    let index: std::collections::HashMap<([usize; 2], &str, usize), usize> = report
        .results
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some(((r.pair?, r.benchmark.as_str(), r.size_bytes), i)))
        .collect();
    let matrices = map
        .figures
        .iter()
        .map(|fig| {
            let cells: Vec<CellRecord> = map
                .pairs
                .iter()
                .filter_map(|pair| {
                    let at = [pair.client, pair.server];
                    let i = *index.get(&(at, fig.benchmark.as_str(), fig.size_bytes))?;
                    Some(cell(&report.results[i], pair.client, pair.server, i))
                })
                .collect();
            MatrixRecord {
                benchmark: fig.benchmark.clone(),
                size_bytes: fig.size_bytes,
                classes: classes(map, &cells),
                cells,
            }
        })
        .collect();
    Some(MapRecord { matrices })
}

/// One pair's cell from its figure.
fn cell(r: &FigureRecord, client: usize, server: usize, figure: usize) -> CellRecord {
    let median = match r.status {
        Status::Ok => r
            .samples_ns
            .as_deref()
            .and_then(Summary::of)
            .map(|s| s.median),
        _ => None,
    };
    CellRecord {
        client,
        server,
        // A record that says ok without samples is no measurement.
        status: match (r.status, median) {
            (Status::Ok, None) => Status::Failed,
            (s, _) => s,
        },
        median_ns: median,
        interval: median.and(r.precision.as_ref()).and_then(|p| p.achieved),
        reason: r.reason.clone().or_else(|| r.error.clone()),
        figure,
    }
}

/// The classes of `map`'s pairs in the order they first appear among the
/// pairs (the map plans them nearest first), each summarised over the
/// cells measured.
fn classes(map: &MapSettingsRecord, cells: &[CellRecord]) -> Vec<ClassRecord> {
    let mut order: Vec<&str> = Vec::new();
    for p in &map.pairs {
        if !order.contains(&p.class.as_str()) {
            order.push(&p.class);
        }
    }
    order
        .into_iter()
        .map(|class| {
            let in_class = |c: &&CellRecord| {
                map.pairs
                    .iter()
                    .any(|p| p.class == class && p.client == c.client && p.server == c.server)
            };
            let medians: Vec<f64> = cells
                .iter()
                .filter(in_class)
                .filter_map(|c| c.median_ns)
                .collect();
            let s = Summary::of(&medians);
            ClassRecord {
                class: class.to_string(),
                measured: medians.len(),
                pairs: map.pairs.iter().filter(|p| p.class == class).count(),
                median_ns: s.map(|s| s.median),
                min_ns: s.map(|s| s.min),
                max_ns: s.map(|s| s.max),
                spread: s
                    .filter(|s| s.median > 0.0)
                    .map(|s| (s.max - s.min) / s.median),
            }
        })
        .collect()
}

/// Compares map `b` with map `a` class by class: each matrix both measured,
/// each class both have, its median of pair medians, and Welch's t on the
/// logs of the class's pass medians (every pair's passes pooled: a class's
/// pairs differ among themselves too, so the test is conservative).
pub fn compare(
    (path_a, a): (&str, &RunRecord),
    (path_b, b): (&str, &RunRecord),
    alpha: f64,
    build: crate::record::build::BuildRecord,
) -> crate::record::map::MapCompareRecord {
    use crate::record::compare::IntervalRecord;
    use crate::record::map::{ClassChangeRecord, MAP_COMPARE_SCHEMA, MapCompareRecord};
    let (ma, mb) = (summarise(a), summarise(b));
    let empty = Vec::new();
    let (xa, xb) = (
        ma.as_ref().map_or(&empty, |m| &m.matrices),
        mb.as_ref().map_or(&empty, |m| &m.matrices),
    );
    let mut classes = Vec::new();
    let mut unmatched = Vec::new();
    let name = |m: &MatrixRecord| format!("{} {} B", m.benchmark, m.size_bytes);
    for m in xa {
        let Some(n) = xb
            .iter()
            .find(|n| n.benchmark == m.benchmark && n.size_bytes == m.size_bytes)
        else {
            unmatched.push(format!("{}: only in A", name(m)));
            continue;
        };
        for ca in &m.classes {
            let Some(cb) = n.classes.iter().find(|c| c.class == ca.class) else {
                unmatched.push(format!("{} {}: only in A", name(m), ca.class));
                continue;
            };
            let (Some(va), Some(vb)) = (ca.median_ns, cb.median_ns) else {
                unmatched.push(format!(
                    "{} {}: not measured on both sides",
                    name(m),
                    ca.class
                ));
                continue;
            };
            let (pa, pb) = (pass_medians(a, m, &ca.class), pass_medians(b, n, &cb.class));
            let welch = crate::stats::compare::welch_log(&pa, &pb, 1.0 - alpha);
            let verdict = match welch {
                None => "too few passes to test".to_string(),
                Some(w) if w.p < alpha => (if vb > va { "slower" } else { "faster" }).into(),
                Some(_) => "no significant difference".into(),
            };
            classes.push(ClassChangeRecord {
                benchmark: m.benchmark.clone(),
                size_bytes: m.size_bytes,
                class: ca.class.clone(),
                pairs_a: ca.measured,
                pairs_b: cb.measured,
                median_a_ns: va,
                median_b_ns: vb,
                change_percent: (vb / va - 1.0) * 100.0,
                p: welch.map(|w| w.p),
                ratio_interval: welch.map(|w| IntervalRecord {
                    low: w.ratio_interval.low,
                    high: w.ratio_interval.high,
                }),
                verdict,
            });
        }
        for cb in n
            .classes
            .iter()
            .filter(|cb| !m.classes.iter().any(|c| c.class == cb.class))
        {
            unmatched.push(format!("{} {}: only in B", name(n), cb.class));
        }
    }
    for n in xb.iter().filter(|n| {
        !xa.iter()
            .any(|m| m.benchmark == n.benchmark && m.size_bytes == n.size_bytes)
    }) {
        unmatched.push(format!("{}: only in B", name(n)));
    }
    MapCompareRecord {
        schema: MAP_COMPARE_SCHEMA.into(),
        build,
        alpha,
        a: crate::analysis::compare::side(path_a, a),
        b: crate::analysis::compare::side(path_b, b),
        classes,
        unmatched,
    }
}

/// Every pass median of the figures of `class` in matrix `m` of `report`
/// (drift-corrected where the run corrected them).
fn pass_medians(report: &RunRecord, m: &MatrixRecord, class: &str) -> Vec<f64> {
    let Some(map) = &report.settings.map else {
        return Vec::new();
    };
    m.cells
        .iter()
        .filter(|c| {
            map.pairs
                .iter()
                .any(|p| p.class == class && p.client == c.client && p.server == c.server)
        })
        .filter(|c| c.status == Status::Ok)
        .filter_map(|c| report.results.get(c.figure)?.passes.as_ref())
        .flat_map(|p| {
            if p.drift_corrected_medians_ns.is_empty() {
                p.medians_ns.clone()
            } else {
                p.drift_corrected_medians_ns.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RunRecord;

    fn fixture() -> RunRecord {
        RunRecord::parse(include_str!("../../tests/reports/map.json")).unwrap()
    }

    fn build() -> crate::record::build::BuildRecord {
        crate::output::json::build::current()
    }

    #[test]
    fn the_matrices_are_the_ones_the_map_recorded() {
        let r = fixture();
        assert_eq!(summarise(&r), r.map);
        let m = &r.map.unwrap().matrices;
        let pairs = r.settings.map.unwrap().pairs.len();
        assert!(m.iter().all(|m| m.cells.len() == pairs));
    }

    /// `r` with every measured figure's pass medians set to `medians`
    /// times `scale` where `slowed` says so (and its samples scaled alike),
    /// so the test's outcome does not rest on the fixture's own noise.
    fn with_passes(
        r: &RunRecord,
        medians: &[f64],
        scale: f64,
        slowed: impl Fn(&crate::record::FigureRecord) -> bool,
    ) -> RunRecord {
        let mut r = r.clone();
        for f in &mut r.results {
            if f.status != Status::Ok {
                continue;
            }
            let k = if slowed(f) { scale } else { 1.0 };
            for v in f.samples_ns.iter_mut().flatten() {
                *v *= k;
            }
            if let Some(p) = &mut f.passes {
                p.medians_ns = medians.iter().map(|v| v * k).collect();
                p.drift_corrected_medians_ns.clear();
            }
        }
        r
    }

    #[test]
    fn a_map_against_itself_moves_no_class_and_a_slowed_class_reads_slower() {
        let a = with_passes(&fixture(), &[1000.0, 1030.0], 1.0, |_| false);
        let same = compare(("a", &a), ("a", &a), 0.05, build());
        assert!(!same.classes.is_empty());
        for c in &same.classes {
            assert_eq!(c.change_percent, 0.0, "{c:?}");
            assert_eq!(c.verdict, "no significant difference", "{c:?}");
        }
        // pipe's cross-CPU pairs 1.5 times slower in B, every pass: beyond
        // the 3% the passes scatter.
        let slowed = |f: &crate::record::FigureRecord| {
            f.benchmark == "pipe" && f.pair.is_some_and(|[c, s]| c != s)
        };
        let b = with_passes(&fixture(), &[1000.0, 1030.0], 1.5, slowed);
        let moved = compare(("a", &a), ("b", &b), 0.05, build());
        for c in &moved.classes {
            if c.benchmark == "pipe" && c.class != "same-cpu" {
                assert!((c.change_percent - 50.0).abs() < 1e-9, "{c:?}");
                assert_eq!(c.verdict, "slower", "{c:?}");
            } else {
                assert_eq!(c.change_percent, 0.0, "{c:?}");
                assert_eq!(c.verdict, "no significant difference", "{c:?}");
            }
        }
    }

    #[test]
    fn a_pair_not_measured_has_no_cell_and_its_class_counts_what_was() {
        let mut r = fixture();
        // The run stopped before its last pair.
        let last = r
            .settings
            .map
            .as_ref()
            .unwrap()
            .pairs
            .last()
            .unwrap()
            .clone();
        r.results
            .retain(|f| f.pair != Some([last.client, last.server]));
        let m = summarise(&r).unwrap();
        for x in &m.matrices {
            let pairs = r.settings.map.as_ref().unwrap().pairs.len();
            assert_eq!(x.cells.len(), pairs - 1);
            let class = x.classes.iter().find(|c| c.class == last.class).unwrap();
            assert!(class.measured < class.pairs, "{class:?}");
        }
    }
}
