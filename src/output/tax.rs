//! The terminal rendering of `ipcmark tax`: a ledger per size (rows the
//! figures, columns the layers, each cell the layer's difference from bare
//! with its 95% interval, `=` where the test finds none), the tails where a
//! CPU quota was applied, the cost per rule of an argument filter, then
//! each layer: how it was applied, or why not.

use crate::output::sanitise;
use crate::output::table::{format_size, new_table};
use crate::record::tax::{TaxCell, TaxReport, TaxRow};
use std::collections::BTreeSet;

/// A difference in ns as the ledger prints it: `+12`, `−3.4`, `+1.2k`.
pub(crate) fn ns(v: f64) -> String {
    let sign = if v < 0.0 { "−" } else { "+" };
    let a = v.abs();
    if a >= 10_000.0 {
        format!("{sign}{:.0}k", a / 1e3)
    } else if a >= 1_000.0 {
        format!("{sign}{:.1}k", a / 1e3)
    } else if a >= 10.0 {
        format!("{sign}{a:.0}")
    } else {
        format!("{sign}{a:.1}")
    }
}

/// A plain time in ns as the ledger prints it.
fn plain(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{:.0}k", v / 1e3)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// One cell: `+120 ±30 (8%)` when significant, `=` when not (its
/// difference and interval are in the JSON), the status where there is no
/// difference.
fn cell_text(c: &TaxCell) -> String {
    let Some(d) = c.diff_ns else {
        return short_status(&c.status);
    };
    if !c.significant {
        return "=".into();
    }
    let half = c
        .diff_interval_ns
        .as_ref()
        .map(|i| format!(" ±{}", plain((i.high - i.low).abs() / 2.0)))
        .unwrap_or_default();
    format!("{}{half} ({:+.0}%)", ns(d), c.diff_percent.unwrap_or(0.0))
}

fn short_status(s: &str) -> String {
    let s = sanitise::text(s);
    let head: String = s.chars().take(24).collect();
    if head.len() < s.len() {
        format!("{head}…")
    } else {
        head
    }
}

/// The ledger as the terminal shows it.
pub fn render(r: &TaxReport) -> String {
    let mut out = format!(
        "isolation tax on {} ({}): {} of {} pass(es), each name under every variant back to back in each pass, in a rotated order; \
         cells: layer − bare, one-way ns (per operation for op figures) ±half its 95% interval (paired t \
         on each pass's ratio to bare) and % of bare; `=`: no difference at α = {} over the ledger's cells together (Benjamini–Hochberg; each cell's values: --json)\n",
        sanitise::text(&r.host),
        sanitise::text(&r.kernel),
        r.passes_done,
        r.passes,
        r.alpha
    );
    let layers: Vec<&str> = r
        .layers
        .iter()
        .filter(|l| l.status != "skipped")
        .map(|l| l.name.as_str())
        .collect();
    let sizes: BTreeSet<usize> = r.rows.iter().map(|row| row.size_bytes).collect();
    for size in sizes {
        // A column per figure and a row per layer: layers' names are long,
        // figures few, and a layer's cost reads along its row.
        let rows: Vec<&TaxRow> = r.rows.iter().filter(|row| row.size_bytes == size).collect();
        let mut header = vec!["layer".to_string()];
        header.extend(
            rows.iter()
                .map(|row| sanitise::text(&row.benchmark).into_owned()),
        );
        let mut t = new_table(header);
        let mut bare = vec!["bare, ns".to_string()];
        bare.extend(
            rows.iter()
                .map(|row| row.bare_median_ns.map_or("-".into(), plain)),
        );
        t.add_row(bare);
        for (i, layer) in layers.iter().enumerate() {
            let mut line = vec![sanitise::text(layer).into_owned()];
            line.extend(
                rows.iter()
                    .map(|row| row.cells.get(i).map_or("-".into(), cell_text)),
            );
            t.add_row(line);
        }
        let what = if size == 0 {
            "operations".to_string()
        } else {
            format!("messages of {}", format_size(size))
        };
        out.push_str(&format!("{what}\n{t}\n"));
    }
    out.push_str(&tails(r));
    out.push_str(&per_rule(r));
    out.push_str(&landings(r));
    out.push_str("layers:\n");
    for l in &r.layers {
        out.push_str(&format!(
            "  {} — {}",
            sanitise::text(&l.name),
            sanitise::text(&l.status)
        ));
        if let Some(v) = &l.cgroup_version {
            out.push_str(&format!(" (cgroup {})", sanitise::text(v)));
        }
        out.push('\n');
        for h in &l.how {
            out.push_str(&format!("      {}\n", sanitise::text(h)));
        }
        for why in &l.reasons {
            out.push_str(&format!("      not applied: {}\n", sanitise::text(why)));
        }
        if let Some(t) = l.throttling.filter(|t| t.periods > 0) {
            out.push_str(&format!(
                "      throttled in {} of {} periods, {:.1} ms in all\n",
                t.throttled_periods,
                t.periods,
                t.throttled_ns as f64 / 1e6
            ));
        }
    }
    if !r.mitigations.is_empty() {
        let on: Vec<String> = r
            .mitigations
            .iter()
            .filter(|(_, s)| s.starts_with("Mitigation"))
            .map(|(n, _)| sanitise::text(n).into_owned())
            .collect();
        out.push_str(&format!(
            "boot-time mitigations (no layer changes them): {} of {} reported in force ({}); --json: each one's state\n",
            on.len(),
            r.mitigations.len(),
            if on.is_empty() { "none".into() } else { on.join(", ") }
        ));
    }
    if let Some(sig) = r.stopped {
        out.push_str(&format!(
            "stopped by signal {sig} after {} pass(es): the cells are over those\n",
            r.passes_done
        ));
    }
    out
}

/// The tails of the layers with a CPU quota: p99 and max beside bare's,
/// where a throttled period shows and a median may not.
fn tails(r: &TaxReport) -> String {
    let quota: Vec<&str> = r
        .layers
        .iter()
        .filter(|l| l.throttling.is_some() && l.name.starts_with("cpu-max"))
        .map(|l| l.name.as_str())
        .collect();
    if quota.is_empty() {
        return String::new();
    }
    let mut t = new_table(vec![
        "figure", "size", "layer", "bare p99", "p99", "bare max", "max",
    ]);
    for row in &r.rows {
        for c in row
            .cells
            .iter()
            .filter(|c| quota.contains(&c.layer.as_str()))
        {
            let f = |v: Option<f64>| v.map_or("-".into(), plain);
            t.add_row(vec![
                sanitise::text(&row.benchmark).into_owned(),
                format_size(row.size_bytes),
                sanitise::text(&c.layer).into_owned(),
                f(row.bare_p99_ns),
                f(c.p99_ns),
                f(row.bare_max_ns),
                f(c.max_ns),
            ]);
        }
    }
    format!(
        "tails under a CPU quota, ns (a throttled period stalls a few messages: the median may not move)\n{t}\n"
    )
}

/// With `--explain`: where each difference lands, the parts of the
/// anatomy that grew most under the layer against bare; then each anatomy
/// that could not be made.
fn landings(r: &TaxReport) -> String {
    let Some(ex) = &r.explain else {
        return String::new();
    };
    let mut out = format!(
        "where the differences land (--explain: anatomies of {} round trips in pass {}, traced; \
         the two parts that changed most)\n",
        ex.round_trips, ex.pass
    );
    let mut any = false;
    for row in &r.rows {
        for c in row.cells.iter().filter(|c| c.significant) {
            let (Some(parts), Some(d)) = (&c.parts, c.diff_ns) else {
                continue;
            };
            any = true;
            let top: Vec<String> = parts
                .parts
                .iter()
                .take(2)
                .map(|p| format!("{} {} ns", sanitise::text(&p.name), ns(p.change_ns)))
                .collect();
            out.push_str(&format!(
                "  {} {} under {}: {} ns (traced {} ns): {}\n",
                sanitise::text(&row.benchmark),
                format_size(row.size_bytes),
                sanitise::text(&c.layer),
                ns(d),
                ns(parts.round_trip_b_ns - parts.round_trip_a_ns),
                top.join(", ")
            ));
        }
    }
    if !any {
        out.push_str("  no difference that was significant has an anatomy on both sides\n");
    }
    const SHOWN: usize = 8;
    for u in ex.unexplained.iter().take(SHOWN) {
        out.push_str(&format!("  no anatomy: {}\n", sanitise::text(u)));
    }
    if ex.unexplained.len() > SHOWN {
        out.push_str(&format!(
            "  … and {} more without an anatomy (--json: explain.unexplained)\n",
            ex.unexplained.len() - SHOWN
        ));
    }
    out
}

/// The cost per rule of the argument filters: the line through their
/// differences against N where two N or more were measured, else each
/// cell that differs ÷ its N (the filter's fixed cost included).
fn per_rule(r: &TaxReport) -> String {
    let mut lines = String::new();
    for row in &r.rows {
        if let Some(rc) = &row.rule_cost {
            let ns_list: Vec<String> = rc.rules.iter().map(|n| n.to_string()).collect();
            lines.push_str(&format!(
                "  {}: {} ns per rule and {} ns for having a filter (the line through N = {})\n",
                sanitise::text(&row.benchmark),
                ns(rc.per_rule_ns),
                ns(rc.fixed_ns),
                ns_list.join(", ")
            ));
            continue;
        }
        for c in &row.cells {
            if let (Some(per), true) = (c.per_rule_ns, c.significant) {
                lines.push_str(&format!(
                    "  {} {}: {} ns per rule ({} ns over the filter ÷ N, its fixed cost included)\n",
                    sanitise::text(&row.benchmark),
                    sanitise::text(&c.layer),
                    ns(per),
                    ns(c.diff_ns.unwrap_or(0.0))
                ));
            }
        }
    }
    if lines.is_empty() {
        lines
    } else {
        format!("argument filters, per rule:\n{lines}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tax::LayerRecord;

    fn cell(layer: &str, diff: Option<f64>, significant: bool) -> TaxCell {
        TaxCell {
            layer: layer.into(),
            status: if diff.is_some() {
                "ok".into()
            } else {
                "failed: the peer died".into()
            },
            median_ns: diff.map(|d| 1000.0 + d),
            pass_medians_ns: Vec::new(),
            diff_ns: diff,
            diff_percent: diff.map(|d| d / 10.0),
            diff_interval_ns: diff.map(|d| crate::record::facts::IntervalRecord {
                low: d - 10.0,
                high: d + 10.0,
            }),
            p: Some(if significant { 0.001 } else { 0.5 }),
            test: Some("paired-passes".into()),
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
            reasons: if status == "skipped" {
                vec!["ssbd: not affected".into()]
            } else {
                vec![]
            },
            seccomp_rules: None,
            cgroup_version: None,
            throttling: None,
        }
    }

    #[test]
    fn the_ledger_has_a_column_per_applied_layer_and_says_what_was_skipped() {
        let r = TaxReport {
            schema: crate::record::tax::TAX_SCHEMA.into(),
            build: crate::output::json::build::current(),
            host: "h\u{1b}[31m".into(),
            kernel: "6.1".into(),
            started_at: "-".into(),
            ended_at: "-".into(),
            passes: 5,
            passes_done: 5,
            alpha: 0.05,
            mitigations: vec![("spectre_v2".into(), "Mitigation: Retpolines".into())],
            layers: vec![
                layer("seccomp:args:100", "applied"),
                layer("cgroup", "applied"),
                layer("ssbd", "skipped"),
            ],
            rows: vec![TaxRow {
                benchmark: "syscall-getpid".into(),
                mode: "op".into(),
                size_bytes: 0,
                bare_median_ns: Some(1000.0),
                bare_p99_ns: None,
                bare_max_ns: None,
                bare_pass_medians_ns: Vec::new(),
                cells: vec![
                    cell("seccomp:args:100", Some(250.0), true),
                    cell("cgroup", Some(3.0), false),
                ],
                rule_cost: None,
            }],
            stopped: None,
            explain: None,
        };
        let page = render(&r);
        assert!(
            page.contains("seccomp:args:100") && page.contains("cgroup"),
            "{page}"
        );
        assert!(page.contains("+250 ±10.0 (+25%)"), "{page}");
        assert!(
            page.lines()
                .any(|l| l.starts_with("│ cgroup") && l.contains(" = ")),
            "{page}"
        );
        assert!(page.contains("+2.5 ns per rule"), "{page}");
        assert!(
            page.contains("ssbd — skipped") && page.contains("not applied: ssbd: not affected")
        );
        assert!(!page.contains('\u{1b}'), "escapes sanitised");
        // The skipped layer has no row.
        assert!(
            !page
                .lines()
                .any(|l| l.starts_with('│') && l.contains("ssbd")),
            "{page}"
        );
        assert!(
            page.contains("1 of 1 reported in force (spectre_v2)"),
            "{page}"
        );
    }
}
