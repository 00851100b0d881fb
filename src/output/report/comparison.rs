//! The comparison of two runs in the report: per figure both medians, B/A
//! with its interval and the verdict, the shift common to every figure, and
//! what could not be compared (`output::compare` does the arithmetic).

use super::figures::{sig3, size_label};
use super::svg::Forest;
use super::{RunInput, esc};
use crate::output::compare::RunFile;

/// The comparison of run `b` with run `a` (`output::compare`): per figure
/// both medians, B/A with its interval, the verdict; significant rows marked.
pub fn comparison(a: &RunInput, b: &RunInput, la: &str, lb: &str, alpha: f64) -> String {
    let mut s = format!(
        "<section class=\"compare\" id=\"compare-{la}-{lb}\"><h2>Run {lb} against run {la}</h2>"
    );
    // `compare` reads a run through its own input type: hand it each
    // record as the report it was read from (a record writes back byte for
    // byte what it read).
    let file = |run: &RunInput| {
        serde_json::to_value(&run.report)
            .ok()
            .and_then(|v| RunFile::from_value(v).ok())
    };
    let (fa, fb) = match (file(a), file(b)) {
        (Some(fa), Some(fb)) => (fa, fb),
        _ => {
            s.push_str("<p class=\"empty\">These reports cannot be compared.</p></section>");
            return s;
        }
    };
    let c = crate::analysis::compare::compare(
        &a.label,
        &fa,
        &b.label,
        &fb,
        alpha,
        crate::output::json::build::current(),
    );
    let confidence = format!("{:.0}%", (1.0 - alpha) * 100.0);
    let significant = c.comparisons.iter().filter(|x| x.significant).count();
    s.push_str(&format!(
        "<p>{significant} of {} figures differ significantly (α = {alpha}; n.s.: not \
         significant); B/A below 1 is faster in {lb}. With no change at all, about {:.1} would \
         by chance.</p>",
        c.comparisons.len(),
        alpha * c.comparisons.len() as f64
    ));
    if let Some(sh) = &c.common_shift {
        s.push_str(&format!(
            "<p class=\"shift\">All {} figures together: B/A {} ({confidence} interval {}–{}, {}). \
             A change of the machine's speed between runs moves every figure so; the last column \
             says whether a figure moved beyond it.</p>",
            sh.results,
            format_ratio(sh.factor),
            format_ratio(sh.interval.low),
            format_ratio(sh.interval.high),
            if sh.significant {
                "significant"
            } else {
                "not significant"
            }
        ));
    }
    if let Some(line) = crate::output::compare::table::machine_line(&c) {
        s.push_str(&format!("<p class=\"machine\">{}</p>", esc(&line)));
    }
    if c.comparisons.is_empty() {
        s.push_str("<p class=\"empty\">No figure was measured in both runs.</p>");
    } else {
        let forest = Forest::over(c.comparisons.iter().flat_map(|x| {
            let ratio = (x.median_a_ns > 0.0).then(|| x.median_b_ns / x.median_a_ns);
            [
                ratio,
                x.ratio_interval.map(|i| i.low),
                x.ratio_interval.map(|i| i.high),
            ]
            .into_iter()
            .flatten()
        }));
        let (lo, hi) = forest.range();
        s.push_str(&format!(
            "<table class=\"data compare\"><thead><tr><th>figure</th><th>mode</th>\
             <th>{la} µs</th><th>{lb} µs</th><th>Δ %</th><th>B/A and its {confidence} interval \
             <span class=\"axis\">{}…{}, log</span></th><th>interval</th><th>p</th><th>test</th>\
             <th>verdict</th>{}</tr></thead><tbody>",
            format_ratio(lo),
            format_ratio(hi),
            if c.common_shift.is_some() {
                "<th>beyond the shift</th>"
            } else {
                ""
            }
        ));
        for x in &c.comparisons {
            let ratio = if x.median_a_ns > 0.0 {
                x.median_b_ns / x.median_a_ns
            } else {
                0.0
            };
            let class = match (x.significant, x.verdict.as_str()) {
                (true, "slower") => "sig slower",
                (true, _) => "sig faster",
                _ => "ns",
            };
            let interval = x.ratio_interval.map(|i| (i.low, i.high));
            s.push_str(&format!(
                "<tr class=\"{class}\"><td class=\"fig\">{} {}</td><td>{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{:+.1}</td><td>{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{:.3}</td><td>{}</td><td>{}</td>{}</tr>",
                esc(&x.benchmark),
                size_label(x.size_bytes),
                esc(&x.mode),
                sig3(x.median_a_ns / 1e3),
                sig3(x.median_b_ns / 1e3),
                x.diff_percent,
                forest.cell(ratio, interval, class),
                interval.map_or(String::new(), |(l, h)| format!(
                    "{}–{}",
                    format_ratio(l),
                    format_ratio(h)
                )),
                x.p,
                match x.test {
                    crate::record::compare::Test::WelchPasses =>
                        "<abbr title=\"Welch's t on the logs of the pass medians\">Welch</abbr>",
                    crate::record::compare::Test::MannWhitneySamples =>
                        "<abbr title=\"Mann–Whitney U on the samples\">M–W</abbr>",
                },
                short_verdict(&x.verdict),
                if c.common_shift.is_some() {
                    format!(
                        "<td>{}</td>",
                        x.beyond_shift.as_ref().map_or("", |b| short_verdict(&b.verdict))
                    )
                } else {
                    String::new()
                }
            ));
        }
        s.push_str("</tbody></table>");
        if c.comparisons
            .iter()
            .any(|x| x.test == crate::record::compare::Test::MannWhitneySamples)
        {
            s.push_str(
                "<p class=\"note\">A figure without passes on both sides is tested on its \
                 samples alone, which do not show how much a run's level moves between runs: \
                 measure both with --passes 2 or more (the default is 5).</p>",
            );
        }
    }
    for x in &c.comparisons {
        if let Some(m) = &x.parts {
            s.push_str(&parts_moved(&x.benchmark, x.size_bytes, &x.mode, m, la, lb));
        }
    }
    if !c.unmatched.is_empty() {
        s.push_str(&format!(
            "<details><summary>{} figures not compared</summary><ul>",
            c.unmatched.len()
        ));
        for u in &c.unmatched {
            s.push_str(&format!(
                "<li>{} {} {}: {}</li>",
                esc(&u.benchmark),
                esc(&u.mode),
                size_label(u.size_bytes),
                esc(&u.why)
            ));
        }
        s.push_str("</ul></details>");
    }
    s.push_str("</section>\n");
    s
}

/// A verdict as the table shows it (n.s.: not significant).
fn short_verdict(v: &str) -> &str {
    match v {
        "no significant difference" => "n.s.",
        v => v,
    }
}

/// A ratio with three decimals.
fn format_ratio(v: f64) -> String {
    format!("{v:.3}")
}

/// Where an explained figure's round trip moved between the two runs: each
/// part's mean per round trip in both, the change and its share of the
/// round trip's change, the part that moved most marked.
fn parts_moved(
    benchmark: &str,
    size: usize,
    mode: &str,
    m: &crate::record::compare::PartsMoved,
    la: &str,
    lb: &str,
) -> String {
    // A timer's anatomy divides a wake-up latency, and has no size.
    let (whole, figure) = if mode == "periodic" {
        ("wake-up latency", benchmark.to_string())
    } else {
        ("round trip", format!("{benchmark} {}", size_label(size)))
    };
    parts_table(
        &format!("{figure}: where the {whole} moved"),
        whole,
        m,
        la,
        lb,
    )
}

/// A table of the parts that moved between `la` and `lb` under the heading
/// `title` (escaped here), `whole` naming what the parts add up to.
pub(super) fn parts_table(
    title: &str,
    whole: &str,
    m: &crate::record::compare::PartsMoved,
    la: &str,
    lb: &str,
) -> String {
    let mut s = format!(
        "<h3>{}</h3><table class=\"data parts-moved\"><thead><tr>\
         <th>part</th><th>{} ns</th><th>{} ns</th><th>Δ ns</th><th>share of Δ</th></tr>\
         </thead><tbody>",
        esc(title),
        esc(la),
        esc(lb)
    );
    for p in &m.parts {
        let most = m.moved_most.as_deref() == Some(p.name.as_str());
        s.push_str(&format!(
            "<tr{}><td>{}</td><td class=\"num\">{:.0}</td><td class=\"num\">{:.0}</td>\
             <td class=\"num\">{:+.0}</td><td class=\"num\">{}</td></tr>",
            if most { " class=\"moved-most\"" } else { "" },
            esc(&p.name),
            p.mean_a_ns,
            p.mean_b_ns,
            p.change_ns,
            p.share_of_change
                .map_or(String::new(), |v| format!("{:+.1}%", 100.0 * v))
        ));
    }
    s.push_str(&format!(
        "<tr class=\"total\"><td>{whole}</td><td class=\"num\">{:.0}</td>\
         <td class=\"num\">{:.0}</td><td class=\"num\">{:+.0}</td><td></td></tr></tbody></table>",
        m.round_trip_a_ns,
        m.round_trip_b_ns,
        m.round_trip_b_ns - m.round_trip_a_ns
    ));
    if let Some(n) = &m.moved_most {
        s.push_str(&format!("<p class=\"note\">Moved most: {}.</p>", esc(n)));
    }
    s
}
