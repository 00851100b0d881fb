//! The sections of the report: each run's charts with their tables, and the
//! comparison of two runs. A chart appears only when it has something to
//! draw (two sizes or more for a chart against size, a positive value for a
//! dot plot); otherwise its table alone says what was measured and why a
//! figure has no value.

use super::figures::{Figure, Series, figures, series, sig3, size_label, timestamp};
use super::page_charts::{Page, hsl_hex};
use super::svg::{Dot, dot_plot};
use super::{RunInput, esc};
use crate::record::run::Latency;
use crate::record::{Mode, RunRecord, Status};
// The charts' specifications are JSON the page's script reads: written
// here from the typed figures, never read back.
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The most legend entries (series and model lines) one chart draws.
const MAX_LEGEND: usize = 12;

/// What a chart against size says instead of drawing one point or none.
const NOT_DRAWN: &str =
    "<p class=\"empty\">Not drawn: fewer than two sizes have a value (see the table).</p>";

/// A series' positive values at the chart's sizes `xs`, None (null in the
/// chart's JSON) where it has none (no figure at that size, or one without
/// a value).
fn values_at(se: &Series, xs: &[u64], value: impl Fn(&Figure) -> Option<f64>) -> Vec<Option<f64>> {
    xs.iter()
        .map(|x| {
            se.figures
                .iter()
                .find(|f| f.size as u64 == *x)
                .and_then(|f| value(f))
                .filter(|v| *v > 0.0)
        })
        .collect()
}

/// The sizes at which any of `series` has a positive value.
fn sizes_with_value(series: &[Series], value: impl Fn(&Figure) -> Option<f64>) -> BTreeSet<u64> {
    series
        .iter()
        .flat_map(|s| &s.figures)
        .filter(|f| f.size > 0 && value(f).is_some_and(|v| v > 0.0))
        .map(|f| f.size as u64)
        .collect()
}

/// Modes timed as latency (a chart against size when swept, a dot plot
/// otherwise); stream, score and rate figures have their own sections.
fn latency_mode(mode: Mode) -> bool {
    !matches!(mode, Mode::Stream | Mode::Score | Mode::Rate)
}

// `Page` itself (its charts and colours) is in `page_charts.rs`, which the
// rate section adds to as well; its sections are drawn here.
impl Page {
    /// Every section of one run.
    pub fn run_sections(&mut self, letter: &str, run: &RunInput) -> String {
        let r = &run.report;
        let figs = figures(r);
        let mut s = format!(
            "<section class=\"run\" id=\"run-{letter}\"><h2><span class=\"runletter\">{letter}</span> \
             {}</h2><p class=\"meta\">{} · {} · Linux {} · {} figures</p>",
            esc(&run.label),
            esc(&timestamp(&r.header.started_at)),
            esc(&r.header.environment.hostname),
            esc(&r.header.environment.kernel),
            figs.len()
        );
        s.push_str(&warnings(r));
        if let Some(map) = super::map::section(letter, r) {
            // A map's figures are one mechanism at many pairs: its heat
            // maps stand for the charts against size.
            s.push_str(&map);
            s.push_str("</section>\n");
            return s;
        }
        if let Some(rate) = super::rate::section(self, letter, r) {
            s.push_str(&rate);
        }
        let latency: Vec<Mode> = figs
            .iter()
            .map(|f| f.mode)
            .filter(|m| latency_mode(*m))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let all = series(&figs, &latency);
        let (swept, single): (Vec<_>, Vec<_>) = all.into_iter().partition(|s| s.swept());
        if !swept.is_empty() {
            s.push_str(&self.latency_against_size(letter, r, &swept));
        }
        let streams = series(&figs, &[Mode::Stream]);
        if !streams.is_empty() {
            s.push_str(&self.throughput(letter, &streams));
        }
        if !single.is_empty() {
            s.push_str(&self.at_one_size(letter, &single));
        }
        let scores: Vec<&Figure> = figs.iter().filter(|f| f.mode == Mode::Score).collect();
        if !scores.is_empty() {
            s.push_str(&score_table(&scores));
        }
        s.push_str(&self.distribution(letter, &figs));
        s.push_str(&anatomies(letter, r));
        if figs.is_empty() {
            s.push_str("<p class=\"empty\">This run has no figure.</p>");
        }
        s.push_str("</section>\n");
        s
    }

    /// Latency against message size, log–log, with the cost model's lines
    /// (one chart per dozen legend entries), and the matrix of mechanisms ×
    /// sizes beneath.
    fn latency_against_size(&mut self, letter: &str, r: &RunRecord, swept: &[Series]) -> String {
        let mut s = format!(
            "<h3>Latency against message size <span class=\"sub\">run {letter} · one-way µs, \
             log–log; dashed: the cost model's fitted lines</span></h3>"
        );
        let models = cost_models(r, swept);
        // Sizes the chart is drawn at: every measured size, and enough points
        // inside each model segment to draw its curve on log axes.
        let mut xs: BTreeSet<u64> = BTreeSet::new();
        for f in swept.iter().flat_map(|s| &s.figures) {
            if f.size > 0 {
                xs.insert(f.size as u64);
            }
        }
        for (_, seg) in &models {
            for x in log_points(seg.from, seg.to, 16) {
                xs.insert(x);
            }
        }
        let xs: Vec<u64> = xs.into_iter().collect();
        let latency_us = |f: &Figure| f.median_ns().map(|v| v / 1e3);
        // Each series with its models' lines, as legend entries.
        let mut entries: Vec<Vec<Value>> = Vec::new();
        let mut measured_points = 0;
        for se in swept {
            let values = values_at(se, &xs, latency_us);
            measured_points += values.iter().flatten().count();
            let mut mine =
                vec![json!({"label": se.name, "colour": self.colour(&se.name), "values": values})];
            for (name, seg) in models.iter().filter(|(name, _)| *name == se.name) {
                let colour = self.colour(name);
                let values: Vec<Option<f64>> = xs
                    .iter()
                    .map(|&x| {
                        let v = seg.setup + seg.per_byte * x as f64;
                        (x >= seg.from && x <= seg.to && v > 0.0).then_some(v / 1e3)
                    })
                    .collect();
                mine.push(json!({"label": format!("{name} (model {}–{})",
                    size_label(seg.from as usize), size_label(seg.to as usize)),
                    "colour": colour, "values": values, "model": true}));
            }
            entries.push(mine);
        }
        if sizes_with_value(swept, latency_us).len() >= 2 && measured_points >= 2 {
            // No legend past a dozen entries: the series, in the run's
            // order (a family's mechanisms side by side), one chart a dozen.
            let mut charts: Vec<Vec<Value>> = vec![Vec::new()];
            for mine in entries {
                let last = charts.last_mut().expect("one chart at least");
                if !last.is_empty() && last.len() + mine.len() > MAX_LEGEND {
                    charts.push(mine);
                } else {
                    last.extend(mine);
                }
            }
            let n = charts.len();
            for (k, plotted) in charts.into_iter().enumerate() {
                let part = match n {
                    1 => String::new(),
                    _ => format!(" Part {} of {n}.", k + 1),
                };
                s.push_str(&self.chart(
                    json!({"kind": "xy", "x": xs, "xunit": "bytes", "ylabel": "one-way latency, µs",
                           "series": plotted}),
                    &format!(
                        "One-way latency against message size (as the QNX study's Figure 6).{part} \
                         Hover for values; the table below holds every figure."
                    ),
                ));
            }
        } else {
            s.push_str(NOT_DRAWN);
        }
        s.push_str(&matrix(swept, latency_us, "µs", true));
        s.push_str(&model_table(r, swept));
        s
    }

    /// Throughput against message size for stream figures, and its table.
    fn throughput(&mut self, letter: &str, streams: &[Series]) -> String {
        let mut s = format!(
            "<h3>Throughput against message size <span class=\"sub\">run {letter} · stream, \
             MB/s received, log–log</span></h3>"
        );
        let mb_per_s = |f: &Figure| f.throughput().map(|v| v / 1e6);
        let xs: Vec<u64> = streams
            .iter()
            .flat_map(|s| &s.figures)
            .filter(|f| f.size > 0)
            .map(|f| f.size as u64)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if sizes_with_value(streams, mb_per_s).len() >= 2 {
            let plotted: Vec<Value> = streams
                .iter()
                .map(|se| {
                    json!({"label": se.name, "colour": self.colour(&se.name),
                           "values": values_at(se, &xs, mb_per_s)})
                })
                .collect();
            s.push_str(&self.chart(
                json!({"kind": "xy", "x": xs, "xunit": "bytes", "ylabel": "throughput, MB/s",
                       "series": plotted}),
                "Throughput one way against message size (as the QNX study's Figure 5).",
            ));
        } else {
            s.push_str(NOT_DRAWN);
        }
        s.push_str(&matrix(streams, mb_per_s, "MB/s", false));
        s
    }

    /// Figures measured at one size only: a dot plot and a table.
    fn at_one_size(&mut self, letter: &str, single: &[Series]) -> String {
        let mut s = format!(
            "<h3>Figures at one size <span class=\"sub\">run {letter} · median µs, log scale; \
             bar: its 95% interval</span></h3>"
        );
        let figs: Vec<&Figure> = single.iter().flat_map(|s| s.figures.clone()).collect();
        let rows: Vec<Dot> = figs
            .iter()
            .map(|f| Dot {
                label: f.name(),
                colour: self.colour(&f.series),
                value: f
                    .median_ns()
                    .filter(|v| *v > 0.0)
                    .map(|v| (v / 1e3, f.interval_ns().map(|(l, h)| (l / 1e3, h / 1e3)))),
                note: status_text(f),
            })
            .collect();
        if let Some(svg) = dot_plot(&rows, "µs") {
            s.push_str(&format!(
                "<figure class=\"chart static\">{svg}<figcaption>Median of each figure with \
                 its 95% interval; a figure without a value shows its status.</figcaption></figure>"
            ));
        } else {
            s.push_str("<p class=\"empty\">Not drawn: no figure has a value (see the table).</p>");
        }
        s.push_str(
            "<table class=\"data\"><thead><tr><th>figure</th><th>mode</th><th>status</th>\
             <th>median µs</th><th>95% interval µs</th><th>p99 µs</th><th>note</th></tr></thead><tbody>",
        );
        for f in figs {
            let interval = f
                .interval_ns()
                .filter(|_| f.ok())
                .map_or(String::new(), |(l, h)| {
                    format!("{}–{}", sig3(l / 1e3), sig3(h / 1e3))
                });
            s.push_str(&format!(
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{interval}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                row_class(f),
                esc(&f.name()),
                esc(f.mode.name()),
                esc(f.status_name()),
                f.median_ns().map_or(String::new(), |v| sig3(v / 1e3)),
                f.latency()
                    .and_then(|l| l.p99)
                    .map_or(String::new(), |v| sig3(v / 1e3)),
                esc(f.why()),
            ));
        }
        s.push_str("</tbody></table>");
        s
    }

    /// The latency distribution of each figure, from its percentiles: one
    /// chart with a choice of group (figures of one size, operations, …),
    /// and the percentiles' table.
    fn distribution(&mut self, letter: &str, figs: &[Figure]) -> String {
        let with: Vec<&Figure> = figs
            .iter()
            // A rate figure's percentiles are its lowest rate's, which its
            // curve already draws.
            .filter(|f| f.mode != Mode::Rate)
            .filter(|f| f.latency().and_then(|l| l.p50).is_some_and(|v| v > 0.0))
            .collect();
        if with.is_empty() {
            return String::new();
        }
        let mut s = format!(
            "<h3>Latency distribution <span class=\"sub\">run {letter} · cumulative share of \
             single times at or below each latency, from the percentiles</span></h3>"
        );
        let mut groups: Vec<(String, Vec<&Figure>)> = Vec::new();
        for f in &with {
            let name = match f.mode {
                Mode::PingPong | Mode::OneWay => format!("messages of {}", size_label(f.size)),
                Mode::Op | Mode::Event => "operations".into(),
                Mode::Periodic => "timer wake-ups".into(),
                m => m.name().to_string(),
            };
            match groups.iter_mut().find(|g| g.0 == name) {
                Some(g) => g.1.push(f),
                None => groups.push((name, vec![f])),
            }
        }
        let mut specs = Vec::new();
        for (name, members) in &groups {
            let points: Vec<CdfLine> = members
                .iter()
                .map(|f| {
                    let label = if name.starts_with("messages") {
                        f.series.clone()
                    } else {
                        f.name()
                    };
                    (label, self.colour(&f.series), cdf_points(f))
                })
                .collect();
            let xs: Vec<f64> = {
                let mut v: Vec<f64> = points
                    .iter()
                    .flat_map(|p| p.2.iter().map(|q| q.0))
                    .collect();
                v.sort_by(f64::total_cmp);
                v.dedup();
                v
            };
            let series: Vec<Value> = points
                .iter()
                .map(|(label, colour, pts)| {
                    let values: Vec<Option<f64>> = xs
                        .iter()
                        .map(|x| pts.iter().rev().find(|p| p.0 == *x).map(|p| p.1))
                        .collect();
                    json!({"label": label, "colour": colour, "values": values})
                })
                .collect();
            specs.push(json!({"name": name, "x": xs, "series": series}));
        }
        s.push_str(&self.chart(
            json!({"kind": "cdf", "groups": specs}),
            "Share of single round trips (or operations, wake-ups, messages) at or below each \
             latency: a point at each percentile the run kept (min, p50, p90, p99, p99.9, max), \
             the vertical axis in nines. Choose the figures above the chart.",
        ));
        s.push_str(
            "<table class=\"data\"><thead><tr><th>figure</th><th>over</th><th>min µs</th>\
             <th>p50 µs</th><th>p90 µs</th><th>p99 µs</th><th>p99.9 µs</th><th>max µs</th>\
             <th>count</th></tr></thead><tbody>",
        );
        for f in &with {
            let cell = |p: fn(&Latency) -> Option<f64>| {
                f.latency()
                    .and_then(p)
                    .map_or(String::new(), |v| sig3(v / 1e3))
            };
            s.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(&f.name()),
                esc(&f.percentiles_of()),
                cell(|l| l.min),
                cell(|l| l.p50),
                cell(|l| l.p90),
                cell(|l| l.p99),
                cell(|l| l.p999),
                cell(|l| l.max),
                f.population().map_or(String::new(), |n| format!("{n:.0}")),
            ));
        }
        s.push_str("</tbody></table>");
        s
    }
}

/// One figure's line on the distribution chart: label, colour, points.
type CdfLine = (String, String, Vec<(f64, f64)>);

/// A figure's points on the distribution chart: (latency µs, nines), nines
/// being −log10(1 − share): 0 at the minimum, 1 at p90, 2 at p99. The maximum
/// of n times stands at share 1 − 1/n, drawn only beyond p99.9 (n > 1000).
fn cdf_points(f: &Figure) -> Vec<(f64, f64)> {
    let Some(l) = f.latency() else {
        return Vec::new();
    };
    let mut pts = Vec::new();
    for (v, share) in [
        (l.min, 0.0),
        (l.p50, 0.5),
        (l.p90, 0.9),
        (l.p99, 0.99),
        (l.p999, 0.999),
    ] {
        if let Some(v) = v.filter(|v| *v > 0.0) {
            pts.push((v / 1e3, -(1.0f64 - share).log10()));
        }
    }
    if let (Some(max), Some(n)) = (l.max, f.population())
        && n > 1000.0
        && max > 0.0
    {
        pts.push((max / 1e3, n.log10()));
    }
    pts
}

/// One segment of a cost model: sizes it covers and its line.
struct Segment {
    from: u64,
    to: u64,
    setup: f64,
    per_byte: f64,
    r2: f64,
    setup_ci: (f64, f64),
    per_byte_ci: (f64, f64),
}

/// The cost models of the swept series, by series name.
fn cost_models(r: &RunRecord, swept: &[Series]) -> Vec<(String, Segment)> {
    let mut out = Vec::new();
    for m in &r.cost_models {
        // The model is fitted on ping-pong figures (warm and cold apart).
        let Some(se) = swept.iter().find(|s| {
            s.figures.first().is_some_and(|f| {
                f.benchmark == m.benchmark && f.mode == Mode::PingPong && f.cold() == m.cold
            })
        }) else {
            continue;
        };
        for seg in &m.segments {
            let [setup_low, setup_high] = seg.setup_ci_ns;
            let [per_byte_low, per_byte_high] = seg.per_byte_ci_ns;
            out.push((
                se.name.clone(),
                Segment {
                    from: (seg.from_bytes as u64).max(1),
                    to: seg.to_bytes as u64,
                    setup: seg.setup_ns,
                    per_byte: seg.per_byte_ns,
                    r2: seg.r2,
                    setup_ci: (setup_low, setup_high),
                    per_byte_ci: (per_byte_low, per_byte_high),
                },
            ));
        }
    }
    out
}

/// `n` sizes spread evenly on a log scale over `[from, to]`, ends included.
fn log_points(from: u64, to: u64, n: usize) -> Vec<u64> {
    if to <= from {
        return vec![from];
    }
    let (a, b) = ((from as f64).ln(), (to as f64).ln());
    (0..n)
        .map(|i| (a + (b - a) * i as f64 / (n - 1) as f64).exp().round() as u64)
        .collect()
}

/// The cost models' table.
fn model_table(r: &RunRecord, swept: &[Series]) -> String {
    let models = cost_models(r, swept);
    if models.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<p class=\"note\">Cost model: one-way time ≈ setup + per byte × size, fitted on each \
         range of sizes (95% intervals in parentheses).</p><table class=\"data\"><thead><tr><th>mechanism</th>\
         <th>sizes</th><th>setup µs</th><th>per byte ns</th><th>r²</th></tr></thead><tbody>",
    );
    let ci = |(l, h): (f64, f64), scale: f64| {
        format!(
            " <span class=\"ci\">({} to {})</span>",
            sig3(l / scale),
            sig3(h / scale)
        )
    };
    for (name, m) in models {
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}–{}</td><td class=\"num\">{}{}</td><td class=\"num\">{}{}</td>\
             <td class=\"num\">{:.3}</td></tr>",
            esc(&name),
            size_label(m.from as usize),
            size_label(m.to as usize),
            sig3(m.setup / 1e3),
            ci(m.setup_ci, 1e3),
            sig3(m.per_byte),
            ci(m.per_byte_ci, 1.0),
            m.r2,
        ));
    }
    s.push_str("</tbody></table>");
    s
}

/// A series × sizes table of `value` (in `unit`), a figure without one
/// showing its status; the best of each column in bold (`lower_is_better`).
fn matrix(
    series: &[Series],
    value: impl Fn(&Figure) -> Option<f64>,
    unit: &str,
    lower_is_better: bool,
) -> String {
    let sizes: Vec<usize> = series
        .iter()
        .flat_map(|s| s.figures.iter().map(|f| f.size))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let best: Vec<Option<f64>> = sizes
        .iter()
        .map(|size| {
            let vals = series
                .iter()
                .flat_map(|s| &s.figures)
                .filter(|f| f.size == *size)
                .filter_map(|f| value(f))
                .filter(|v| *v > 0.0);
            if lower_is_better {
                vals.reduce(f64::min)
            } else {
                vals.reduce(f64::max)
            }
        })
        .collect();
    let mut s = format!(
        "<table class=\"data matrix\"><thead><tr><th>mechanism ({})</th>",
        esc(unit)
    );
    for size in &sizes {
        s.push_str(&format!("<th class=\"num\">{}</th>", size_label(*size)));
    }
    s.push_str("</tr></thead><tbody>");
    for se in series {
        s.push_str(&format!("<tr><td>{}</td>", esc(&se.name)));
        for (size, best) in sizes.iter().zip(&best) {
            let cell = match se.figures.iter().find(|f| f.size == *size) {
                None => "<td></td>".to_string(),
                Some(f) => match value(f) {
                    Some(v) => {
                        let text = sig3(v);
                        let title = f.interval_ns().map_or(String::new(), |(l, h)| {
                            format!(
                                " title=\"95% interval {}–{} µs\"",
                                sig3(l / 1e3),
                                sig3(h / 1e3)
                            )
                        });
                        if Some(v) == *best {
                            format!("<td class=\"num best\"{title}><strong>{text}</strong></td>")
                        } else {
                            format!("<td class=\"num\"{title}>{text}</td>")
                        }
                    }
                    None => format!(
                        "<td class=\"status {}\" title=\"{}\">{}</td>",
                        row_class(f),
                        esc(f.why()),
                        esc(&f.status_name().replace('_', " "))
                    ),
                },
            };
            s.push_str(&cell);
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

/// The class of a figure's row: its status, for the colour.
fn row_class(f: &Figure) -> &'static str {
    match f.status {
        Status::Ok => "ok",
        Status::Failed => "failed",
        Status::Skipped => "skipped",
        Status::BelowResolution => "below",
    }
}

/// A figure's status as a dot plot writes it in place of a dot.
fn status_text(f: &Figure) -> String {
    let status = f.status_name().replace('_', " ");
    match f.why() {
        "" => status,
        w => {
            let short: String = w.chars().take(90).collect();
            let ellipsis = if w.chars().count() > 90 { "…" } else { "" };
            format!("{status}: {short}{ellipsis}")
        }
    }
}

/// Score figures (Thread-Metric): operations per second and R.
fn score_table(scores: &[&Figure]) -> String {
    let mut s = String::from(
        "<h3>Scores</h3><table class=\"data\"><thead><tr><th>test</th><th>status</th>\
         <th>operations/s</th><th>relative to baseline</th><th>note</th></tr></thead><tbody>",
    );
    for f in scores {
        s.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td>{}</td></tr>",
            row_class(f),
            esc(f.benchmark),
            esc(f.status_name()),
            f.score_ops_per_s().map_or(String::new(), sig3),
            f.score_relative()
                .map_or(String::new(), |v| format!("{v:.3}")),
            esc(f.why())
        ));
    }
    s.push_str("</tbody></table>");
    s
}

/// The run's warnings, as a list.
fn warnings(r: &RunRecord) -> String {
    let list: Vec<String> = r
        .warnings
        .iter()
        .map(|w| {
            format!(
                "<li><span class=\"kind\">{}</span> {}</li>",
                esc(&w.kind),
                esc(&w.message)
            )
        })
        .collect();
    if list.is_empty() {
        return String::new();
    }
    format!("<ul class=\"warnings\">{}</ul>", list.concat())
}

/// Each explained figure's anatomy (`ipcmark explain`): one stacked bar
/// of its parts' means per traced round trip, the residual in grey.
fn anatomies(letter: &str, r: &RunRecord) -> String {
    let explained: Vec<_> = r
        .results
        .iter()
        .filter_map(|f| f.explain.as_ref().map(|ex| (f, ex)))
        .collect();
    if explained.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "<h3>Anatomy of a round trip <span class=\"sub\">run {letter} · ipcmark explain: each \
         part's mean per traced round trip (an operation for an op-mode benchmark, a wake-up latency for a timer), ns; the \
         parts add up to the traced mean</span></h3>"
    );
    for (f, ex) in explained {
        let segments: Vec<super::svg::Segment> = ex
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| super::svg::Segment {
                label: p.name.clone(),
                value: p.mean_ns,
                colour: if p.name == "residual" {
                    "#9aa0a6".to_string()
                } else {
                    // The golden angle: neighbouring parts far apart in hue.
                    hsl_hex((i as f64 * 137.5) % 360.0, 0.6, 0.5)
                },
            })
            .collect();
        // An op-mode benchmark's anatomy is of one operation, a timer's of a
        // wake-up latency (no size).
        let name = if ex.wake_up_latency() {
            f.benchmark.clone()
        } else {
            format!("{} {}", f.benchmark, size_label(f.size_bytes))
        };
        let (one, many) = ex.interval_words();
        let article = if ex.per_operation() { "an" } else { "a" };
        s.push_str(&format!(
            "<h4>{} <span class=\"sub\">{} traced {many}, {}; traced mean {} ns{}</span></h4>",
            esc(&name),
            ex.round_trips,
            esc(&ex.method),
            sig3(ex.traced_round_trip_ns.mean),
            if ex.lost_events > 0 {
                format!("; {} events lost", ex.lost_events)
            } else {
                String::new()
            }
        ));
        match super::svg::stacked_bar(
            &segments,
            ex.traced_round_trip_ns.mean,
            "ns",
            &format!("{name}: the parts of {article} {one}"),
        ) {
            Some(svg) => s.push_str(&svg),
            None => s.push_str("<p class=\"empty\">No part took any time.</p>"),
        }
    }
    s
}
