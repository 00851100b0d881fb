//! The HTML page of a tax report (`ipcmark tax`, `ipcmark.tax/1`): what the
//! terminal ledger (`output::tax`) says, drawn. Its header (host, kernel,
//! passes, α, build); per table of the ledger (operations, then messages of
//! each size) a grouped bar chart (`chart`: a group per figure, a bar per
//! layer, the difference in % of bare with its 95% interval, hollow where
//! the test finds none) and the table beneath, rows the figures, so the
//! numbers can be copied; with `--explain`, where each difference lands
//! (the anatomy's parts bare and under the layer); then the tails under a
//! CPU quota, the cost per rule of the argument filters, the layers (how
//! each was applied, or why not) and the boot-time mitigations. Every string from the report is
//! escaped ([`esc`]); the page is the run report's skeleton, without uPlot.

mod chart;

use super::figures::sig3;
use super::{Rendered, esc};
use crate::output::table::format_size;
use crate::record::tax::{TaxCell, TaxReport, TaxRow};
use std::collections::BTreeSet;

/// The page of `tax`, read from `label` (a file, or the study just run).
pub fn render_tax(label: &str, tax: &TaxReport) -> Rendered {
    // A column per layer that was not skipped, in the layers' order: the
    // cells of a row, as the ledger reads them.
    let columns: Vec<&str> = tax
        .layers
        .iter()
        .filter(|l| l.status != "skipped")
        .map(|l| l.name.as_str())
        .collect();
    let sizes: BTreeSet<usize> = tax.rows.iter().map(|r| r.size_bytes).collect();
    let mut body = header(label, tax, &sizes);
    let mut charts = 0;
    for size in sizes {
        let rows: Vec<&TaxRow> = tax.rows.iter().filter(|r| r.size_bytes == size).collect();
        let (section, drawn) = table_section(size, &rows, &columns, tax.alpha);
        body.push_str(&section);
        charts += usize::from(drawn);
    }
    body.push_str(&landings(tax));
    body.push_str(&tails(tax));
    body.push_str(&per_rule(tax));
    body.push_str(&layers(tax, &columns));
    body.push_str(&mitigations(tax));
    Rendered {
        html: super::skeleton(
            "ipcmark tax report",
            &body,
            &serde_json::json!({ "charts": [] }),
            false,
        ),
        charts,
    }
}

/// The heading of a ledger table and its anchor.
fn table_name(size: usize) -> (String, String) {
    if size == 0 {
        ("Operations".into(), "tax-ops".into())
    } else {
        (
            format!("Messages of {} bytes", format_size(size)),
            format!("tax-{size}"),
        )
    }
}

/// The title, the study's facts and the contents.
fn header(label: &str, tax: &TaxReport, sizes: &BTreeSet<usize>) -> String {
    let b = &tax.build;
    let commit: String = b.commit.chars().take(12).collect();
    let dirty = match b.dirty {
        Some(true) => ", with uncommitted changes",
        _ => "",
    };
    let mut facts = vec![
        ("from", esc(label)),
        ("host", esc(&tax.host)),
        ("kernel", esc(&tax.kernel)),
        (
            "when",
            format!(
                "{} to {}",
                esc(&super::figures::timestamp(&tax.started_at)),
                esc(&super::figures::timestamp(&tax.ended_at))
            ),
        ),
        (
            "passes",
            format!(
                "{} of {} done: in each pass every name under each variant (bare and every \
                 layer) back to back, in an order rotated by pass and name",
                tax.passes_done, tax.passes
            ),
        ),
        (
            "α",
            format!(
                "{}: a cell differs from bare when its test's p is below it",
                tax.alpha
            ),
        ),
        (
            "build",
            format!(
                "ipcmark {} (commit {}{dirty})",
                esc(&b.version),
                esc(&commit)
            ),
        ),
    ];
    if let Some(sig) = tax.stopped {
        facts.push((
            "stopped",
            format!(
                "<span class=\"badge warn\">by signal {sig}</span> after {} pass(es): \
                 the cells are over those",
                tax.passes_done
            ),
        ));
    }
    let mut s = String::from(
        "<header><h1>ipcmark tax report</h1><p class=\"lead\">The same figures measured bare \
         and under each isolation layer, the variants interleaved pass by pass. A bar is a \
         layer's difference from bare in % of bare's median (one-way time; per operation \
         for operations), its whisker the 95% interval of that difference; a bar is filled \
         where the test over the passes (each paired with bare's) finds a difference at α (the page's cells judged together, Benjamini–Hochberg), hollow where it finds none, \
         and a × marks a cell with no difference to give. Each chart's table, beneath it, \
         gives the differences in ns.</p><table class=\"env\"><tbody>",
    );
    for (k, v) in facts {
        s.push_str(&format!("<tr><th>{k}</th><td>{v}</td></tr>"));
    }
    s.push_str("</tbody></table><nav>Contents: ");
    let mut links: Vec<String> = sizes
        .iter()
        .map(|size| {
            let (name, id) = table_name(*size);
            format!("<a href=\"#{id}\">{}</a>", esc(&name))
        })
        .collect();
    if tax.explain.is_some() {
        links.push("<a href=\"#tax-explain\">where the differences land</a>".into());
    }
    links.push("<a href=\"#tax-layers\">layers</a>".into());
    s.push_str(&links.join(" · "));
    s.push_str("</nav></header>\n");
    s
}

/// A row's name in its table: the benchmark, with its mode where two rows
/// of the table share the benchmark.
fn figure_name(row: &TaxRow, rows: &[&TaxRow]) -> String {
    if rows.iter().filter(|r| r.benchmark == row.benchmark).count() > 1 {
        format!("{} ({})", row.benchmark, row.mode)
    } else {
        row.benchmark.clone()
    }
}

/// A difference in ns: `+41.3`, `-3.20`, with an ASCII minus so that a
/// copied number reads as one.
fn signed(v: f64) -> String {
    if v < 0.0 {
        format!("-{}", sig3(-v))
    } else {
        format!("+{}", sig3(v))
    }
}

/// A difference in %: `+28%`, `+2.5%`.
fn percent(v: f64) -> String {
    if v.abs() < 10.0 {
        format!("{v:+.1}%")
    } else {
        format!("{v:+.0}%")
    }
}

/// `+41 ±12 (+28%)`: a cell's difference, half its interval, its share.
fn difference(c: &TaxCell, d: f64) -> String {
    let half = c
        .diff_interval_ns
        .as_ref()
        .map(|i| format!(" ±{}", sig3((i.high - i.low).abs() / 2.0)))
        .unwrap_or_default();
    let pct = c.diff_percent.map(|p| format!(" ({})", percent(p)));
    format!("{}{half}{}", signed(d), pct.unwrap_or_default())
}

/// The tooltip of a cell in the chart.
fn cell_title(figure: &str, c: &TaxCell) -> String {
    let Some(d) = c.diff_ns else {
        return format!("{figure} · {}: {}", c.layer, c.status);
    };
    let p =
        c.p.map(|p| format!(", p = {}", sig3(p)))
            .unwrap_or_default();
    let test = c
        .test
        .as_ref()
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    let verdict = if c.significant {
        ""
    } else {
        ": no difference at α"
    };
    format!(
        "{figure} · {}: {} ns{p}{test}{verdict}",
        c.layer,
        difference(c, d)
    )
}

/// A ledger table: its chart (when it has a layer) and the table beneath;
/// whether a chart was drawn.
fn table_section(size: usize, rows: &[&TaxRow], columns: &[&str], alpha: f64) -> (String, bool) {
    let (name, id) = table_name(size);
    let mut s = format!("<section class=\"tax\" id=\"{id}\"><h2>{}</h2>", esc(&name));
    let groups: Vec<chart::Group> = rows
        .iter()
        .map(|row| {
            let figure = figure_name(row, rows);
            let bars = row
                .cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let of_bare = |ns: f64| {
                        row.bare_median_ns
                            .filter(|b| *b > 0.0)
                            .map(|b| ns / b * 100.0)
                    };
                    let value = c
                        .diff_ns
                        .and(c.diff_percent.or_else(|| c.diff_ns.and_then(of_bare)))
                        .filter(|v| v.is_finite());
                    let interval = c.diff_interval_ns.as_ref().and_then(|i| {
                        Some((of_bare(i.low)?, of_bare(i.high)?))
                            .filter(|(l, h)| l.is_finite() && h.is_finite())
                    });
                    chart::Bar {
                        colour: chart::colour(i),
                        value,
                        interval,
                        significant: c.significant,
                        title: cell_title(&figure, c),
                    }
                })
                .collect();
            chart::Group {
                label: figure,
                bars,
            }
        })
        .collect();
    let keys: Vec<chart::Key> = columns
        .iter()
        .enumerate()
        .map(|(i, l)| chart::Key {
            name: l.to_string(),
            colour: chart::colour(i),
        })
        .collect();
    let drawn = chart::grouped_bars(
        &groups,
        &keys,
        alpha,
        &format!("{name}: each layer's difference from bare, % of bare"),
    );
    match &drawn {
        Some(svg) => s.push_str(&format!(
            "<figure class=\"chart\">{svg}<figcaption>{}: each layer's difference from bare \
             in % of bare's median, its 95% interval as a whisker; hollow where the test finds \
             no difference at α = {alpha}. Hover for the values.</figcaption></figure>",
            esc(&name)
        )),
        None => s.push_str("<p class=\"empty\">No layer was applied: nothing to draw.</p>"),
    }
    s.push_str(&ledger(rows, columns));
    s.push_str("</section>\n");
    (s, drawn.is_some())
}

/// The ledger's table: a row per figure, bare's median then each layer's
/// difference (ns ±half its interval, % of bare), `=` where the test finds
/// none (its values in the tooltip), the status where there is none.
fn ledger(rows: &[&TaxRow], columns: &[&str]) -> String {
    let mut s = String::from(
        "<div class=\"scroll\"><table class=\"data tax\"><caption>layer − bare, ns ±half the 95% \
         interval (% of bare); = no difference at α</caption><thead><tr><th>figure</th>\
         <th class=\"num\">bare, ns</th>",
    );
    for c in columns {
        s.push_str(&format!("<th class=\"num\">{}</th>", esc(c)));
    }
    s.push_str("</tr></thead><tbody>");
    for row in rows {
        let figure = figure_name(row, rows);
        s.push_str(&format!(
            "<tr><td class=\"fig\">{}</td><td class=\"num\">{}</td>",
            esc(&figure),
            row.bare_median_ns.map_or("-".into(), sig3)
        ));
        for i in 0..columns.len() {
            let Some(c) = row.cells.get(i) else {
                s.push_str("<td class=\"num\">-</td>");
                continue;
            };
            let title = esc(&cell_title(&figure, c));
            s.push_str(&match c.diff_ns {
                None => format!(
                    "<td class=\"status failed\" title=\"{title}\">{}</td>",
                    esc(&short(&c.status))
                ),
                Some(_) if !c.significant => {
                    format!("<td class=\"num same\" title=\"{title}\">=</td>")
                }
                Some(d) => format!(
                    "<td class=\"num\" title=\"{title}\">{}</td>",
                    esc(&difference(c, d))
                ),
            });
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div>");
    s
}

/// A status cut to fit a column (its whole in the tooltip).
fn short(status: &str) -> String {
    let head: String = status.chars().take(24).collect();
    if head.len() < status.len() {
        format!("{head}…")
    } else {
        head
    }
}

/// With `--explain`: where each difference that the test finds lands, a
/// table per cell of the anatomy's parts bare and under the layer (both cut
/// by one method, from one traced pass), the largest change first; then
/// each anatomy that could not be made.
fn landings(tax: &TaxReport) -> String {
    let Some(ex) = &tax.explain else {
        return String::new();
    };
    let mut s = format!(
        "<section id=\"tax-explain\"><h2>Where the differences land</h2><p class=\"note\">\
         From --explain: the anatomies of {} round trips (operations) in pass {}, traced, bare \
         and under each layer, cut into parts by one method; for each difference the test \
         finds, each part's mean bare and under the layer. The traced means are of one pass, \
         under tracing: where the parts went, not a second measure of the difference.</p>",
        ex.round_trips, ex.pass
    );
    let mut any = false;
    for row in &tax.rows {
        let whole = if row.size_bytes == 0 {
            "operation"
        } else {
            "round trip"
        };
        for c in row.cells.iter().filter(|c| c.significant) {
            let (Some(parts), Some(d)) = (&c.parts, c.diff_ns) else {
                continue;
            };
            any = true;
            let figure = if row.size_bytes == 0 {
                row.benchmark.clone()
            } else {
                format!("{} {}", row.benchmark, format_size(row.size_bytes))
            };
            s.push_str(&super::comparison::parts_table(
                &format!(
                    "{figure} under {}: {} ns, where it lands",
                    c.layer,
                    signed(d)
                ),
                whole,
                parts,
                "bare",
                &c.layer,
            ));
        }
    }
    if !any {
        s.push_str("<p>No difference the test finds has an anatomy on both sides.</p>");
    }
    if !ex.unexplained.is_empty() {
        s.push_str(&format!(
            "<details><summary>{} without an anatomy</summary><ul>",
            ex.unexplained.len()
        ));
        for u in &ex.unexplained {
            s.push_str(&format!("<li>{}</li>", esc(u)));
        }
        s.push_str("</ul></details>");
    }
    s.push_str("</section>\n");
    s
}

/// The tails of the layers with a CPU quota (named `cpu-max:…`): bare's
/// p99 and max beside the layer's, where a throttled period shows and the
/// median may not.
fn tails(tax: &TaxReport) -> String {
    let f = |v: Option<f64>| v.map_or("-".into(), sig3);
    let mut lines = String::new();
    for row in &tax.rows {
        for c in row.cells.iter().filter(|c| c.layer.starts_with("cpu-max:")) {
            lines.push_str(&format!(
                "<tr><td class=\"fig\">{}</td><td class=\"num\">{}</td><td>{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td></tr>",
                esc(&row.benchmark),
                if row.size_bytes == 0 {
                    "op".into()
                } else {
                    esc(&format_size(row.size_bytes))
                },
                esc(&c.layer),
                f(row.bare_p99_ns),
                f(c.p99_ns),
                f(row.bare_max_ns),
                f(c.max_ns)
            ));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "<section id=\"tax-tails\"><h2>Tails under a CPU quota</h2><p class=\"note\">A \
         throttled period stalls the few messages in flight when the quota runs out: the \
         median may not move, the p99 (median of the passes' p99) and the largest time do.\
         </p><table class=\"data\"><thead><tr><th>figure</th><th class=\"num\">size</th>\
         <th>layer</th><th class=\"num\">bare p99, ns</th><th class=\"num\">p99, ns</th>\
         <th class=\"num\">bare max, ns</th><th class=\"num\">max, ns</th></tr></thead>\
         <tbody>{lines}</tbody></table></section>\n"
    )
}

/// The cost per rule of the argument filters: the line through each
/// figure's differences against N where two N or more were measured, else
/// each cell that differs ÷ its N (the filter's fixed cost included).
fn per_rule(tax: &TaxReport) -> String {
    let mut lines = String::new();
    for row in &tax.rows {
        if let Some(rc) = &row.rule_cost {
            let ns: Vec<String> = rc.rules.iter().map(|n| n.to_string()).collect();
            lines.push_str(&format!(
                "<li>{}: {} ns per rule and {} ns for having a filter (the line through N = \
                 {})</li>",
                esc(&row.benchmark),
                signed(rc.per_rule_ns),
                signed(rc.fixed_ns),
                ns.join(", ")
            ));
            continue;
        }
        for c in &row.cells {
            if let (Some(per), true) = (c.per_rule_ns, c.significant) {
                lines.push_str(&format!(
                    "<li>{} {}: {} ns per rule ({} ns over the filter ÷ N, its fixed cost \
                     included)</li>",
                    esc(&row.benchmark),
                    esc(&c.layer),
                    signed(per),
                    signed(c.diff_ns.unwrap_or(0.0))
                ));
            }
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "<section id=\"tax-rules\"><h2>Argument filters, per rule</h2><ul>{lines}</ul></section>\n"
    )
}

/// Each layer: its status, how it was applied, why (a part of) it was not,
/// and what the cpu controller counted; its colour where it has a column.
fn layers(tax: &TaxReport, columns: &[&str]) -> String {
    let mut s = String::from(
        "<section id=\"tax-layers\"><h2>Layers</h2><table class=\"data\"><thead><tr>\
         <th>layer</th><th>status</th><th>how</th><th>not applied</th><th>notes</th>\
         </tr></thead><tbody>",
    );
    let list = |items: &[String]| {
        items
            .iter()
            .map(|i| esc(i))
            .collect::<Vec<_>>()
            .join("<br>")
    };
    let mut column = 0;
    for l in &tax.layers {
        let swatch = if l.status == "skipped" || column >= columns.len() {
            String::new()
        } else {
            column += 1;
            format!(
                "<span class=\"swatch\" style=\"background:{}\"></span> ",
                esc(&chart::colour(column - 1))
            )
        };
        let mut notes = Vec::new();
        if let Some(v) = &l.cgroup_version {
            notes.push(format!("cgroup {}", esc(v)));
        }
        if let Some(n) = l.seccomp_rules {
            notes.push(format!("{n} seccomp rule(s)"));
        }
        if let Some(t) = l.throttling.filter(|t| t.periods > 0) {
            notes.push(format!(
                "throttled in {} of {} periods, {:.1} ms in all",
                t.throttled_periods,
                t.periods,
                t.throttled_ns as f64 / 1e6
            ));
        }
        s.push_str(&format!(
            "<tr class=\"{}\"><td class=\"fig\">{swatch}{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td></tr>",
            if l.status == "skipped" { "skipped" } else { "" },
            esc(&l.name),
            esc(&l.status),
            list(&l.how),
            list(&l.reasons),
            notes.join("<br>")
        ));
    }
    s.push_str("</tbody></table></section>\n");
    s
}

/// The boot-time mitigations, which no layer changes: how many are in
/// force, then each one's state.
fn mitigations(tax: &TaxReport) -> String {
    if tax.mitigations.is_empty() {
        return String::new();
    }
    let on: Vec<String> = tax
        .mitigations
        .iter()
        .filter(|(_, state)| state.starts_with("Mitigation"))
        .map(|(n, _)| esc(n))
        .collect();
    let mut s = format!(
        "<section id=\"tax-mitigations\"><h2>Boot-time mitigations</h2><p class=\"note\">No \
         layer changes them at run time: {} of {} reported in force ({}).</p><details>\
         <summary>Each one's state</summary><table class=\"data\"><tbody>",
        on.len(),
        tax.mitigations.len(),
        if on.is_empty() {
            "none".into()
        } else {
            on.join(", ")
        }
    );
    for (name, state) in &tax.mitigations {
        s.push_str(&format!(
            "<tr><td class=\"fig\">{}</td><td>{}</td></tr>",
            esc(name),
            esc(state)
        ));
    }
    s.push_str("</tbody></table></details></section>\n");
    s
}

#[cfg(test)]
mod tests;
