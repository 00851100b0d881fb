//! The terminal rendering of `ipcmark watch`: one row per group of changes
//! (the runs around it, the figures that moved, their median magnitude, the
//! verdict and what changed on the machine), then each group's figures.

use crate::output::sanitise;
use crate::output::table::{align_right, new_table};
use crate::record::watch::{ChangeGroup, WatchReport};

fn what_changed(g: &ChangeGroup) -> String {
    if g.changed.is_empty() {
        return "nothing recorded".into();
    }
    g.changed
        .iter()
        .map(|c| sanitise::text(&format!("{} {} → {}", c.field, c.before, c.after)).into_owned())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The watch report as the terminal shows it.
pub fn render(r: &WatchReport) -> String {
    let series = r.series.len();
    let moved = r.series.iter().filter(|s| !s.changes.is_empty()).count();
    let mut out = String::new();
    if r.groups.is_empty() {
        out.push_str(&format!(
            "no change point in {series} series over {} runs (p < {}, windows of {})\n",
            r.runs, r.settings.max_p, r.settings.window
        ));
        return out;
    }
    let mut t = new_table(vec![
        "group",
        "host",
        "runs",
        "figures moved",
        "median Δ %",
        "verdict",
        "what changed",
    ]);
    for (i, g) in r.groups.iter().enumerate() {
        t.add_row(vec![
            (i + 1).to_string(),
            sanitise::text(&g.host).into_owned(),
            format!("{} → {}", g.run_before.id, g.run_after.id),
            g.figures.len().to_string(),
            format!("{:+.1}", g.median_magnitude * 100.0),
            g.verdict.name().to_string(),
            what_changed(g),
        ]);
    }
    align_right(&mut t, 3..5);
    out.push_str(&format!("{t}\n"));
    for i in 0..r.groups.len() {
        out.push_str(&format!("group {}:\n", i + 1));
        for s in &r.series {
            for c in s.changes.iter().filter(|c| c.group == i) {
                out.push_str(&format!(
                    "  {} {} → {}: {:+.1}% ({:+.1}…{:+.1}%), {:.2} → {:.2} µs, p {:.1e}, {}\n",
                    sanitise::text(&s.key),
                    c.run_before.id,
                    c.run_after.id,
                    c.magnitude * 100.0,
                    c.interval.low * 100.0,
                    c.interval.high * 100.0,
                    c.mean_before_ns / 1e3,
                    c.mean_after_ns / 1e3,
                    c.p,
                    c.verdict.name(),
                ));
            }
        }
    }
    out.push_str(&format!(
        "{moved} of {series} series changed over {} runs (p < {}, windows of {}; \
         unstable: below {:.0}% or within the series' own noise)\n",
        r.runs,
        r.settings.max_p,
        r.settings.window,
        r.settings.min_magnitude * 100.0
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::watch::tests::{fixture, scaled};
    use crate::analysis::watch::{HistoryRun, Options, watch};

    #[test]
    fn a_group_row_names_its_runs_figures_and_what_changed() {
        let base = fixture("ipc-quick");
        // A clean step: every figure 20% slower from run 11 of 20, on a new kernel.
        let runs: Vec<HistoryRun> = (1..=20)
            .map(|run| {
                let wobble = 1.0 + 0.01 * ((run * 7 % 5) as f64 - 2.0);
                let mut record = scaled(&base, |_| wobble * if run > 10 { 1.2 } else { 1.0 });
                if run > 10 {
                    record.header.environment.kernel = "6.6.0".into();
                }
                HistoryRun { id: run, record }
            })
            .collect();
        let text = render(&watch(
            &runs,
            &Options::default(),
            base.header.build.clone(),
        ));
        assert!(text.contains("10 → 11"), "{text}");
        assert!(text.contains("regression"), "{text}");
        // The table wraps its last column: the words, not the lines.
        let words: Vec<&str> = (text.split_whitespace())
            .filter(|w| !matches!(*w, "│" | "┆"))
            .collect();
        let want = format!("kernel {} → 6.6.0", base.header.environment.kernel);
        assert!(words.join(" ").contains(&want), "{text}");
        assert!(
            text.contains("4 of 4 series changed over 20 runs"),
            "{text}"
        );
        let quiet: Vec<HistoryRun> = (1..=20)
            .map(|run| HistoryRun {
                id: run,
                record: base.clone(),
            })
            .collect();
        let text = render(&watch(&quiet, &Options::default(), base.header.build));
        assert!(
            text.starts_with("no change point in 4 series over 20 runs"),
            "{text}"
        );
    }
}
