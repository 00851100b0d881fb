//! Mode rate's section of the HTML report (`ipcmark run --mode rate`): per
//! message size, latency from the intended send against the offered rate,
//! log–log, a line per mechanism (each point the median over rounds of that
//! rate's points, `output::rate::levels`, as the terminal page reads them),
//! its percentile chosen on the page (p50, p99, p99.9; p99 first), points
//! that fell short of their offer drawn hollow, and each mechanism's knee
//! (K) and saturation rate (S) marked along the rate axis. Beneath, the
//! mechanisms' knee and saturation and every rate's numbers.
//!
//! The section stands for the run's rate figures: they appear in no chart
//! against size, dot plot or distribution, whose one number per figure
//! (the lowest rate's latency) the curve already holds.

use super::esc;
use super::figures::{Figure, sig3, size_label};
use super::page_charts::Page;
use crate::engine::models::rate::rate_text;
use crate::output::rate::{RateLevel, knee_text, levels, saturation_is_bound, saturation_text};
use crate::record::rate::{QuantilesRecord, RateCurveRecord};
use crate::record::{FigureRecord, Mode, RunRecord, Status};
// The chart's specification is JSON the page's script reads.
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// A percentile the chart offers: its key in the chart's JSON, its name
/// on the page, and its value in a level.
type Percentile = (&'static str, &'static str, fn(&QuantilesRecord) -> f64);

/// The percentiles the chart offers, in the menu's order.
const PERCENTILES: [Percentile; 3] = [
    ("p50", "p50", |q| q.p50),
    ("p99", "p99", |q| q.p99),
    ("p999", "p99.9", |q| q.p999),
];

/// The percentile drawn first: the tail an open loop is run to see.
const DEFAULT_PERCENTILE: &str = "p99";

/// A measured figure's curve, reduced to its levels.
struct Curve<'a> {
    curve: &'a RateCurveRecord,
    /// The figure's series name (its mechanism), as every chart names it.
    name: String,
    levels: Vec<RateLevel>,
}

/// The rate section of run `letter`, or `None` when the run has no rate
/// figure.
pub fn section(page: &mut Page, letter: &str, r: &RunRecord) -> Option<String> {
    let mut by_size: BTreeMap<usize, Vec<&FigureRecord>> = BTreeMap::new();
    for f in r.results.iter().filter(|f| f.mode == Mode::Rate) {
        by_size.entry(f.size_bytes).or_default().push(f);
    }
    if by_size.is_empty() {
        return None;
    }
    let mut s = format!(
        "<h3>Latency against offered load <span class=\"sub\">run {letter} · mode rate: µs \
         from each message's intended send against the rate offered, log–log; each point the \
         median over rounds</span></h3>"
    );
    for (size, figs) in &by_size {
        s.push_str(&format!("<h4>messages of {}</h4>", esc(&size_label(*size))));
        let curves: Vec<Curve> = figs
            .iter()
            .filter(|f| f.status == Status::Ok)
            .filter_map(|f| {
                f.rate_curve.as_ref().map(|c| Curve {
                    curve: c,
                    name: Figure::read(f).series,
                    levels: levels(c),
                })
            })
            .collect();
        s.push_str(&chart(page, *size, &curves));
        s.push_str(&mechanisms(figs));
        s.push_str(&rates(&curves));
    }
    Some(s)
}

/// A level's value of percentile `p` in µs for the log axis: `None` where
/// nothing arrived or the value is not above zero.
fn plotted(l: &RateLevel, p: fn(&QuantilesRecord) -> f64) -> Option<f64> {
    l.latency_ns
        .as_ref()
        .map(p)
        .filter(|v| *v > 0.0)
        .map(|v| v / 1e3)
}

/// The chart of one size, or why it is not drawn.
fn chart(page: &mut Page, size: usize, curves: &[Curve]) -> String {
    let mut xs: Vec<f64> = curves
        .iter()
        .flat_map(|c| c.levels.iter().map(|l| l.offered_rate))
        .filter(|x| *x > 0.0)
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    // A line needs two rates with a value; one point alone is the table's.
    let drawable = curves.iter().any(|c| {
        c.levels
            .iter()
            .filter(|l| plotted(l, |q| q.p50).is_some())
            .count()
            >= 2
    });
    if !drawable {
        return "<p class=\"empty\">Not drawn: no mechanism has a latency at two offered rates \
                or more (see the tables).</p>"
            .into();
    }
    let series: Vec<Value> = curves
        .iter()
        .map(|c| {
            let at = |x: f64| c.levels.iter().find(|l| l.offered_rate == x);
            let mut values = serde_json::Map::new();
            for (key, _, p) in PERCENTILES {
                let v: Vec<Option<f64>> = xs
                    .iter()
                    .map(|&x| at(x).and_then(|l| plotted(l, p)))
                    .collect();
                values.insert(key.into(), json!(v));
            }
            // Points that fell short of their offer are drawn hollow: the
            // channel (or the sender) did not carry that load.
            let short: Vec<bool> = xs
                .iter()
                .map(|&x| at(x).is_some_and(|l| !l.kept_up()))
                .collect();
            json!({
                "label": c.name,
                "legend": format!("{} · knee {} · saturation {}", c.name,
                    knee_text(c.curve), saturation_text(c.curve)),
                "colour": page.colour(&c.name),
                "values": values,
                "short": short,
                "knee": c.curve.knee_rate.as_ref().map(|o| o.median),
                "saturation": c.curve.saturation_rate.as_ref().map(|o| o.median),
                "saturation_bound": saturation_is_bound(c.curve),
            })
        })
        .collect();
    let percentiles: Vec<Value> = PERCENTILES
        .iter()
        .map(|(key, name, _)| json!({"key": key, "name": name}))
        .collect();
    page.chart(
        json!({"kind": "rate", "size": size, "x": xs, "percentiles": percentiles,
               "default": DEFAULT_PERCENTILE, "series": series}),
        "Latency from each message's intended send (what a user offering that rate waits) \
         against the rate offered, each point the median over rounds; choose the percentile \
         above the chart. Hollow: the achieved rate fell more than 5% short of the offer. \
         Along the rate axis, each mechanism's K: knee (the p99 turns up for good), S: \
         saturation rate (≥: never saturated up to the highest rate offered). The tables \
         below hold every number.",
    )
}

/// Each mechanism at this size: rounds, knee, saturation, how the sender
/// waited, or why it has no curve.
fn mechanisms(figs: &[&FigureRecord]) -> String {
    let mut s = String::from(
        "<table class=\"data\"><thead><tr><th>mechanism</th><th>status</th><th>rounds</th>\
         <th>knee msg/s</th><th>saturation msg/s</th><th>note</th></tr></thead><tbody>",
    );
    for f in figs {
        let fig = Figure::read(f);
        let row = match f.rate_curve.as_ref().filter(|_| f.status == Status::Ok) {
            Some(c) => {
                // How the sender waited says whether its own wake-ups are
                // inside the latencies.
                let note: Vec<&str> = std::iter::once(c.waiting.as_str())
                    .chain(f.note.as_deref())
                    .collect();
                format!(
                    "<tr class=\"ok\"><td>{}</td><td>ok</td><td class=\"num\">{}</td>\
                     <td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                    esc(&fig.series),
                    c.rounds,
                    esc(&knee_text(c)),
                    esc(&saturation_text(c)),
                    esc(&note.join("; ")),
                )
            }
            None => format!(
                "<tr class=\"{status}\"><td>{}</td><td>{}</td><td></td><td></td><td></td>\
                 <td>{}</td></tr>",
                esc(&fig.series),
                esc(&fig.status_name().replace('_', " ")),
                esc(fig.why()),
                status = esc(fig.status_name()),
            ),
        };
        s.push_str(&row);
    }
    s.push_str("</tbody></table>");
    s
}

/// What a level's numbers do not say by themselves: it fell short of its
/// offer, its sender fell behind, messages were lost or none arrived.
fn level_note(l: &RateLevel) -> String {
    let mut notes = Vec::new();
    if !l.kept_up() {
        let share = if l.offered_rate > 0.0 {
            l.achieved_rate / l.offered_rate * 100.0
        } else {
            0.0
        };
        notes.push(format!("saturated: achieved {share:.0}% of the offer"));
    }
    if l.late > 0 {
        notes.push(format!(
            "sender behind: {} sent late, up to {} µs",
            l.late,
            sig3(l.behind_max_ns as f64 / 1e3)
        ));
    }
    if l.lost > 0 {
        notes.push(format!("lost {} of {}", l.lost, l.sent));
    }
    if l.rounds_without_arrival > 0 {
        notes.push(format!(
            "no message arrived in {} of {} rounds",
            l.rounds_without_arrival, l.rounds
        ));
    }
    notes.join("; ")
}

/// Every offered rate of every measured mechanism: the chart's numbers.
fn rates(curves: &[Curve]) -> String {
    if curves.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<table class=\"data rate\"><thead><tr><th>mechanism</th><th>offered msg/s</th>\
         <th>achieved msg/s</th><th>rounds</th><th>p50 µs</th><th>p99 µs</th>\
         <th>p99.9 µs</th><th>lost</th><th>late</th><th>note</th></tr></thead><tbody>",
    );
    for c in curves {
        for l in &c.levels {
            // A rate at which nothing arrived has no latency: its cells
            // stay empty, the note says why.
            let cell = |p: fn(&QuantilesRecord) -> f64| {
                l.latency_ns
                    .as_ref()
                    .map_or(String::new(), |q| sig3(p(q) / 1e3))
            };
            s.push_str(&format!(
                "<tr class=\"{}\"><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td>{}</td></tr>",
                if l.kept_up() { "ok" } else { "saturated" },
                esc(&c.name),
                esc(&rate_text(l.offered_rate)),
                esc(&rate_text(l.achieved_rate)),
                l.rounds,
                cell(|q| q.p50),
                cell(|q| q.p99),
                cell(|q| q.p999),
                l.lost,
                l.late,
                esc(&level_note(l)),
            ));
        }
    }
    s.push_str("</tbody></table>");
    s
}

#[cfg(test)]
mod tests;
