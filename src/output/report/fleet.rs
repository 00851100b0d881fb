//! The HTML page of a fleet report (`ipcmark fleet --html`, `ipcmark.fleet/1`):
//! what the terminal page (`output::fleet`) says, drawn. Its header (what
//! was read, the test); per class of machine its fields and spread, a heat
//! map (a row per host, a column per figure, each square coloured by the
//! host's ratio to the class's median on a log scale: red slower, blue
//! faster, white alike; an outlier's row marked), the hosts' table and each
//! outlier's settings that differ from its class; then the runs left out.
//! Static SVG and HTML in the run report's skeleton, no script library;
//! every string from the report escaped ([`esc`]).

use super::figures::sig3;
use super::{Rendered, esc};
use crate::output::fleet::{alignment, percent, signed, spread};
use crate::output::table::format_size;
use crate::record::fleet::{ClassFigureRecord, ClassRecord, FleetReport, HostRecord, Verdict};

/// The ratio at which a square's colour is full: 30% slower or faster.
/// Fixed, so that a colour means the same on every class and page.
const FULL: f64 = 1.3;

/// Bounds of a square, px, and room for the labels.
const CELL_MIN: f64 = 8.0;
const CELL_MAX: f64 = 28.0;
const GRID: f64 = 900.0;
const LEFT: f64 = 150.0;
const TOP: f64 = 110.0;

/// The colour of a ratio: white at 1, red above (slower), blue below,
/// full at [`FULL`] or its inverse.
pub fn colour(ratio: f64) -> String {
    let f = (ratio.ln() / FULL.ln()).clamp(-1.0, 1.0);
    let hue = if f >= 0.0 { 4 } else { 214 };
    format!("hsl({hue}, 75%, {:.0}%)", 97.0 - 47.0 * f.abs())
}

/// A figure's column label: the benchmark, its size, and its mode where
/// it is not ping-pong.
fn figure_label(f: &ClassFigureRecord) -> String {
    let mut s = f.benchmark.clone();
    if f.size_bytes > 0 {
        s.push_str(&format!(" {}", format_size(f.size_bytes)));
    }
    if f.mode != "pingpong" {
        s.push_str(&format!(" {}", f.mode));
    }
    s
}

/// The page of `fleet`, read from `label` (files, or the history).
pub fn render_fleet(label: &str, r: &FleetReport) -> Rendered {
    let mut body = header(label, r);
    for (i, c) in r.classes.iter().enumerate() {
        body.push_str(&class_section(i, c));
    }
    if !r.superseded.is_empty() {
        body.push_str(
            "<section id=\"superseded\"><h2>Runs left out</h2><p>A newer run of the same host \
             was read.</p><table class=\"data\"><thead><tr><th>host</th><th>run</th>\
             <th>started</th><th>taken instead</th></tr></thead><tbody>",
        );
        for s in &r.superseded {
            body.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td class=\"when\">{}</td><td>{}</td></tr>",
                esc(&s.host),
                esc(&s.source),
                esc(&super::figures::timestamp(&s.started_at)),
                esc(&s.by)
            ));
        }
        body.push_str("</tbody></table></section>\n");
    }
    Rendered {
        html: super::skeleton(
            "ipcmark fleet report",
            &body,
            &serde_json::json!({ "charts": [] }),
            false,
        ),
        charts: r.classes.iter().filter(|c| !c.figures.is_empty()).count(),
    }
}

/// The title, what was read, the test and the contents.
fn header(label: &str, r: &FleetReport) -> String {
    let hosts: usize = r.classes.iter().map(|c| c.hosts.len()).sum();
    let outliers: usize = r
        .classes
        .iter()
        .flat_map(|c| &c.hosts)
        .filter(|h| h.verdict == Verdict::Outlier)
        .count();
    let b = &r.build;
    let commit: String = b.commit.chars().take(12).collect();
    let facts = [
        ("from", esc(label)),
        (
            "read",
            format!(
                "{} run(s); the newest of each host taken: {hosts} host(s) in {} class(es)",
                r.runs_read,
                r.classes.len()
            ),
        ),
        ("outliers", outliers.to_string()),
        ("the test", esc(&r.test.method)),
        (
            "build",
            format!("ipcmark {} (commit {})", esc(&b.version), esc(&commit)),
        ),
    ];
    let mut s = String::from(
        "<header><h1>ipcmark fleet report</h1><p class=\"lead\">Hosts of one class of \
         machine (the same CPU model, CPU count, kernel release and hypervisor) should give \
         the same figures. Each square is a host's figure divided by the median of the \
         class's hosts: white alike, red slower, blue faster, full colour at 30% or more. \
         A host whose figures are shifted beyond the class's spread is an outlier, listed \
         with the settings in which it differs from its class.</p>\
         <table class=\"env\"><tbody>",
    );
    for (k, v) in facts {
        s.push_str(&format!("<tr><th>{k}</th><td>{v}</td></tr>"));
    }
    s.push_str("</tbody></table><nav>Contents: ");
    let links: Vec<String> = r
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| format!("<a href=\"#class-{i}\">class {}</a>", esc(&c.id)))
        .collect();
    s.push_str(&links.join(" · "));
    s.push_str("</nav></header>\n");
    s
}

/// One class: its facts, heat map, hosts and outliers.
fn class_section(i: usize, c: &ClassRecord) -> String {
    let mut s = format!(
        "<section id=\"class-{i}\"><h2>Class {} <span class=\"sub\">{}</span></h2><p>{} \
         host(s), {} figure(s) measured by 3 hosts or more{}.{}</p>",
        esc(&c.id),
        esc(&c.label),
        c.hosts.len(),
        c.figures.len(),
        c.spread
            .map(|v| format!("; host-to-host spread {}", spread(v)))
            .unwrap_or_default(),
        c.not_tested
            .as_ref()
            .map(|w| format!(" No outlier test: {}.", esc(w)))
            .unwrap_or_default(),
    );
    if !c.figures.is_empty() {
        s.push_str("<div class=\"scroll\">");
        s.push_str(&heat_map(c));
        s.push_str("</div>");
        s.push_str(&legend());
    }
    s.push_str(&hosts_table(c));
    for h in c.hosts.iter().filter(|h| h.verdict == Verdict::Outlier) {
        s.push_str(&outlier(h));
    }
    s.push_str("</section>\n");
    s
}

/// Hosts × figures, a square each.
fn heat_map(c: &ClassRecord) -> String {
    let (rows, cols) = (c.hosts.len() as f64, c.figures.len() as f64);
    let side = (GRID / cols).clamp(CELL_MIN, CELL_MAX);
    // Room on the right for the last column's slanted label.
    let (w, h) = (LEFT + cols * side + 90.0, TOP + rows * side + 4.0);
    let mut svg = format!(
        "<svg class=\"heatmap fleet\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" \
         role=\"img\" aria-label=\"heat map of class {}\">",
        esc(&c.id)
    );
    for (k, f) in c.figures.iter().enumerate() {
        let x = LEFT + (k as f64 + 0.5) * side;
        svg.push_str(&format!(
            "<text class=\"tick\" transform=\"translate({x},{}) rotate(-60)\">{}<title>{}: \
             median {} µs over {} host(s), spread {}</title></text>",
            TOP - 6.0,
            esc(&figure_label(f)),
            esc(&f.key),
            sig3(f.median_ns / 1e3),
            f.hosts,
            spread(f.spread),
        ));
    }
    for (r, host) in c.hosts.iter().enumerate() {
        let y = TOP + r as f64 * side;
        let outlier = host.verdict == Verdict::Outlier;
        svg.push_str(&format!(
            "<text class=\"tick{}\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}{}</text>",
            if outlier { " outlier" } else { "" },
            LEFT - 6.0,
            y + side / 2.0 + 4.0,
            if outlier { "▲ " } else { "" },
            esc(&host.host),
        ));
        for (k, f) in c.figures.iter().enumerate() {
            let x = LEFT + k as f64 * side;
            let (fill, title) = match host.ratios.get(k).copied().flatten() {
                Some(v) => (
                    colour(v),
                    format!(
                        "{} · {}: {} ({}× the class's median of {} µs)",
                        host.host,
                        f.key,
                        percent(v),
                        sig3(v),
                        sig3(f.median_ns / 1e3)
                    ),
                ),
                None => (
                    "#d8dbe0".to_string(),
                    format!("{} · {}: not measured", host.host, f.key),
                ),
            };
            svg.push_str(&format!(
                "<rect class=\"cell\" x=\"{x}\" y=\"{y}\" width=\"{d}\" height=\"{d}\" \
                 fill=\"{fill}\"><title>{}</title></rect>",
                esc(&title),
                d = side - 1.0
            ));
        }
        if outlier {
            svg.push_str(&format!(
                "<rect class=\"outlier\" x=\"{LEFT}\" y=\"{y}\" width=\"{}\" height=\"{}\" \
                 fill=\"none\" stroke=\"#b00020\" stroke-width=\"2\"/>",
                cols * side - 1.0,
                side - 1.0
            ));
        }
    }
    svg.push_str("</svg>");
    svg
}

/// The colour scale.
fn legend() -> String {
    let stops = [
        (1.0 / FULL, "1.3× faster"),
        (1.0 / 1.1, "1.1× faster"),
        (1.0, "alike"),
        (1.1, "1.1× slower"),
        (FULL, "1.3× slower"),
    ];
    let parts: Vec<String> = stops
        .iter()
        .map(|&(r, words)| {
            format!(
                "<span class=\"swatch\" style=\"background:{}\"></span> {words}",
                colour(r),
            )
        })
        .collect();
    format!(
        "<p class=\"scale\">{} (and beyond); grey: not measured; ▲ and a red frame: an \
         outlier</p>",
        parts.join(" ")
    )
}

/// The hosts' table, as the terminal prints it.
fn hosts_table(c: &ClassRecord) -> String {
    let mut t = String::from(
        "<table class=\"data\"><thead><tr><th>host</th><th>run</th><th class=\"num\">figures\
         </th><th class=\"num\">shift</th><th class=\"num\">z</th><th class=\"num\">slower</th>\
         <th class=\"num\">faster</th><th class=\"num\">sign test p</th><th>verdict</th></tr>\
         </thead><tbody>",
    );
    for h in &c.hosts {
        let verdict = match (h.verdict, h.direction.as_deref()) {
            (Verdict::Outlier, Some(d)) => {
                format!("<span class=\"badge warn\">outlier ({})</span>", esc(d))
            }
            (v, _) => v.name().to_string(),
        };
        t.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td>{verdict}</td></tr>",
            esc(&h.host),
            esc(&h.source),
            h.figures,
            h.shift.map_or("—".into(), percent),
            h.z.map_or("—".into(), signed),
            h.slower,
            h.faster,
            h.sign_p.map_or("—".into(), |p| format!("{p:.2e}")),
        ));
    }
    t.push_str("</tbody></table>");
    t
}

/// An outlier's settings that differ from its class.
fn outlier(h: &HostRecord) -> String {
    let mut s = format!(
        "<h3>{} <span class=\"sub\">{} ({})</span></h3>",
        esc(&h.host),
        h.shift.map_or("—".into(), percent),
        esc(h.direction.as_deref().unwrap_or("")),
    );
    if h.differs.is_empty() {
        s.push_str("<p>It differs from its class in no setting recorded.</p>");
        return s;
    }
    s.push_str(
        "<p>The settings in which it differs from the value most of its class holds, best \
         aligned with the outliers first.</p><table class=\"data\"><thead><tr><th>setting</th>\
         <th>this host</th><th>the class</th><th class=\"num\">hosts with the class's</th>\
         <th>who else differs</th></tr></thead><tbody>",
    );
    for d in &h.differs {
        s.push_str(&format!(
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td>{}</td></tr>",
            esc(&d.setting),
            esc(&d.value),
            esc(&d.class_value),
            d.hosts_with_class_value,
            esc(&alignment(d)),
        ));
    }
    s.push_str("</tbody></table>");
    s
}

#[cfg(test)]
mod tests;
