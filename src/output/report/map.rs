//! A map's section of the HTML report (`ipcmark map`): per mechanism and
//! size a heat map drawn as inline SVG, one square per pair in topology
//! order with the boundaries between groups (last-level cache, package,
//! node) drawn, the numbers beneath it, then the classes' table.

use super::esc;
use super::figures::sig3;
use crate::record::map::{MapSettingsRecord, MatrixRecord};
use crate::record::{RunRecord, Status};

/// The width the squares of a map share, px, and the bounds of one square.
const GRID: f64 = 480.0;
const CELL_MIN: f64 = 8.0;
const CELL_MAX: f64 = 48.0;
/// Room for the row and column labels, px.
const MARGIN: f64 = 40.0;

/// The map's section of run `letter`, or `None` when the run is no map.
pub fn section(letter: &str, r: &RunRecord) -> Option<String> {
    let (settings, map) = (r.settings.map.as_ref()?, r.map.as_ref()?);
    let mut s = format!(
        "<h3>Map <span class=\"sub\">run {letter} · one-way µs between every pair of CPUs \
         measured (row: client, column: server); {} pair(s) of {} CPU(s); pages: {}</span></h3>",
        settings.pairs.len(),
        settings.topology.cpus.len(),
        esc(&settings.home.requested),
    );
    for m in &map.matrices {
        s.push_str(&format!(
            "<h4>{} {}</h4>",
            esc(&m.benchmark),
            esc(&crate::output::map::size_words(m.size_bytes))
        ));
        s.push_str(&heat_map(m, settings));
        s.push_str(&numbers(m, settings));
    }
    s.push_str(&classes(&map.matrices));
    Some(s)
}

/// The smallest ratio the colour scale spans. Medians closer than this (a
/// quarter, well beyond the few percent two passes of one figure differ by
/// on a shared machine) are drawn in neighbouring colours around the
/// middle, never one green and one red: a colour says what the figures
/// support.
const MIN_SPAN: f64 = 1.25;

/// The range the colour scale spans for medians from `lo` to `hi`: theirs,
/// or [`MIN_SPAN`] around their geometric middle when they are closer.
fn span(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo > 0.0 && hi >= lo) || hi / lo >= MIN_SPAN {
        return (lo, hi);
    }
    let mid = (lo * hi).sqrt();
    let half = MIN_SPAN.sqrt();
    (mid / half, mid * half)
}

/// The colour of a median between `lo` and `hi` (log scale): green to red.
fn colour(v: f64, lo: f64, hi: f64) -> String {
    let f = if hi > lo && lo > 0.0 {
        ((v / lo).ln() / (hi / lo).ln()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    // Hue 130 (green) down to 0 (red).
    format!("hsl({:.0}, 70%, 48%)", 130.0 * (1.0 - f))
}

/// One matrix as an SVG heat map.
fn heat_map(m: &MatrixRecord, s: &MapSettingsRecord) -> String {
    let topo = crate::output::map::topology_of(&s.topology);
    let cpus = topo.cpu_ids();
    let n = cpus.len() as f64;
    let medians: Vec<f64> = m.cells.iter().filter_map(|c| c.median_ns).collect();
    let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().copied().fold(0.0, f64::max);
    let (scale_lo, scale_hi) = span(lo, hi);
    let side = (GRID / n).clamp(CELL_MIN, CELL_MAX);
    let size = MARGIN + n * side + 4.0;
    let mut svg = format!(
        "<svg class=\"heatmap\" viewBox=\"0 0 {size} {size}\" width=\"{size}\" height=\"{size}\" \
         role=\"img\" aria-label=\"heat map of {}\">",
        esc(&m.benchmark)
    );
    for (i, c) in cpus.iter().enumerate() {
        let at = MARGIN + (i as f64 + 0.5) * side;
        svg.push_str(&format!(
            "<text class=\"tick\" x=\"{at}\" y=\"{}\" text-anchor=\"middle\">{c}</text>\
             <text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{c}</text>",
            MARGIN - 8.0,
            MARGIN - 6.0,
            at + 4.0
        ));
    }
    for cell in &m.cells {
        let (client, server) = (cell.client, cell.server);
        let (Some(r), Some(k)) = (topo.position(client), topo.position(server)) else {
            continue;
        };
        {
            let (x, y) = (MARGIN + k as f64 * side, MARGIN + r as f64 * side);
            let (class, fill, title) = match (cell.status, cell.median_ns) {
                (Status::Ok, Some(v)) => (
                    "cell",
                    colour(v, scale_lo, scale_hi),
                    format!("CPU {client} → CPU {server}: {} µs", sig3(v / 1e3)),
                ),
                (Status::Skipped, _) => (
                    "cell skipped",
                    "#d8dbe0".into(),
                    format!(
                        "CPU {client} → CPU {server}: skipped ({})",
                        cell.reason.as_deref().unwrap_or("")
                    ),
                ),
                _ => (
                    "cell failed",
                    "#222".into(),
                    format!("CPU {client} → CPU {server}: failed"),
                ),
            };
            svg.push_str(&format!(
                "<rect class=\"{class}\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{w}\" \
                 fill=\"{fill}\"><title>{}</title></rect>",
                esc(&title),
                w = side - 1.0
            ));
        }
    }
    // The boundaries between groups of CPUs (node, package, cache).
    let cuts = crate::output::map::boundaries(&topo);
    for (i, _) in cuts.iter().enumerate().filter(|(_, cut)| **cut) {
        {
            let at = MARGIN + i as f64 * side - 0.5;
            let end = MARGIN + n * side;
            svg.push_str(&format!(
                "<line class=\"boundary\" x1=\"{at}\" y1=\"{MARGIN}\" x2=\"{at}\" y2=\"{end}\"/>\
                 <line class=\"boundary\" x1=\"{MARGIN}\" y1=\"{at}\" x2=\"{end}\" y2=\"{at}\"/>"
            ));
        }
    }
    svg.push_str("</svg>");
    if lo.is_finite() && hi > 0.0 {
        // The scale: the colours of the lowest, the middle (log) and the highest median.
        let mid = (lo * hi).sqrt();
        svg.push_str(&format!(
            "<p class=\"scale\"><span class=\"swatch\" style=\"background:{}\"></span> {} µs \
             <span class=\"swatch\" style=\"background:{}\"></span> {} µs \
             <span class=\"swatch\" style=\"background:{}\"></span> {} µs; grey: skipped, \
             black: failed, blank: not measured</p>",
            colour(lo, scale_lo, scale_hi),
            sig3(lo / 1e3),
            colour(mid, scale_lo, scale_hi),
            sig3(mid / 1e3),
            colour(hi, scale_lo, scale_hi),
            sig3(hi / 1e3)
        ));
    }
    svg
}

/// The numbers of one matrix, beneath its heat map.
fn numbers(m: &MatrixRecord, s: &MapSettingsRecord) -> String {
    let cpus = crate::output::map::topology_of(&s.topology).cpu_ids();
    let mut t = String::from("<table class=\"matrix\"><thead><tr><th>client \\ server</th>");
    for c in &cpus {
        t.push_str(&format!("<th class=\"num\">{c}</th>"));
    }
    t.push_str("</tr></thead><tbody>");
    for &client in &cpus {
        t.push_str(&format!("<tr><th>{client}</th>"));
        for &server in &cpus {
            let text = match m
                .cells
                .iter()
                .find(|c| c.client == client && c.server == server)
            {
                None => String::new(),
                Some(c) => match (c.status, c.median_ns) {
                    (Status::Ok, Some(v)) => sig3(v / 1e3),
                    (Status::Skipped, _) => "skipped".into(),
                    _ => "failed".into(),
                },
            };
            t.push_str(&format!("<td class=\"num\">{}</td>", esc(&text)));
        }
        t.push_str("</tr>");
    }
    t.push_str("</tbody></table>");
    t
}

/// The classes of every matrix: median of the class's pair medians, and its
/// lowest and highest pair.
fn classes(matrices: &[MatrixRecord]) -> String {
    let Some(first) = matrices.first() else {
        return String::new();
    };
    let mut t = String::from(
        "<h4>Classes</h4><table class=\"classes\"><thead><tr><th>class</th><th class=\"num\">pairs</th>",
    );
    for m in matrices {
        t.push_str(&format!(
            "<th class=\"num\">{} {}</th>",
            esc(&m.benchmark),
            esc(&crate::output::map::size_words(m.size_bytes))
        ));
    }
    t.push_str("</tr></thead><tbody>");
    for (k, c) in first.classes.iter().enumerate() {
        t.push_str(&format!(
            "<tr><td>{}</td><td class=\"num\">{}</td>",
            esc(&c.class),
            c.pairs
        ));
        for m in matrices {
            let text = match m.classes.get(k).and_then(|c| c.median_ns.map(|v| (c, v))) {
                Some((c, v)) if c.measured > 1 => format!(
                    "{} ({}–{})",
                    sig3(v / 1e3),
                    sig3(c.min_ns.unwrap_or(v) / 1e3),
                    sig3(c.max_ns.unwrap_or(v) / 1e3)
                ),
                Some((_, v)) => sig3(v / 1e3),
                None => "–".into(),
            };
            t.push_str(&format!("<td class=\"num\">{}</td>", esc(&text)));
        }
        t.push_str("</tr>");
    }
    t.push_str("</tbody></table>");
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hue(fill: &str) -> f64 {
        fill.trim_start_matches("hsl(")
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    }

    /// Equal figures are one colour; figures a few percent apart are
    /// neighbouring colours, not green and red; a twofold spread spans the
    /// scale.
    #[test]
    fn the_colours_say_only_what_the_figures_support() {
        let cells = |medians: &[f64]| -> Vec<String> {
            let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = medians.iter().copied().fold(0.0, f64::max);
            let (a, b) = span(lo, hi);
            medians.iter().map(|&v| colour(v, a, b)).collect()
        };
        let equal = cells(&[33.0, 33.0, 33.0, 33.0]);
        assert!(equal.iter().all(|c| *c == equal[0]), "{equal:?}");
        let close = cells(&[2550.0, 2620.0]);
        assert!((hue(&close[0]) - hue(&close[1])).abs() <= 20.0, "{close:?}");
        let apart = cells(&[1000.0, 2000.0]);
        assert_eq!((hue(&apart[0]), hue(&apart[1])), (130.0, 0.0), "{apart:?}");
    }
}
