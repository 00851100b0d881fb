//! The terminal rendering of two tax reports compared: per figure and
//! layer, the layer's cost in A and in B and whether it changed beyond the
//! passes' spread; then what was not compared, the layers applied
//! differently and the mitigations that differ.

use crate::output::sanitise;
use crate::output::table::{format_size, new_table};
use crate::output::tax::ns;
use crate::record::tax::{Differs, TaxChange, TaxCompareReport};

/// A side's cost as a cell: `+41 (+28%)`, `=` where its own test found none.
fn cost(d: f64, percent: f64, significant: bool) -> String {
    if significant {
        format!("{} ({percent:+.0}%)", ns(d))
    } else {
        format!("= ({percent:+.1}%)")
    }
}

fn change(c: &TaxChange) -> String {
    let i = &c.change_interval_percent;
    format!(
        "{:+.1}% [{:+.1}, {:+.1}] p={:.3} (adjusted {:.3})",
        c.change_percent, i.low, i.high, c.p, c.p_adjusted
    )
}

fn differs(title: &str, d: &[Differs]) -> String {
    if d.is_empty() {
        return String::new();
    }
    let or_absent = |v: &Option<String>| {
        v.as_deref()
            .map_or_else(|| "absent".to_string(), |s| sanitise::text(s).into_owned())
    };
    let mut out = format!("{title}:\n");
    for x in d {
        out.push_str(&format!(
            "  {}: A {}, B {}\n",
            sanitise::text(&x.name),
            or_absent(&x.a),
            or_absent(&x.b)
        ));
    }
    out
}

/// Two tax reports compared, as the terminal shows them.
pub fn render(r: &TaxCompareReport) -> String {
    let mut out = format!(
        "isolation tax compared: A {} ({}, {}, {} passes), B {} ({}, {}, {} passes); each \
         layer's cost is its ratio to bare pass by pass, A's against B's by Welch's t on their \
         logs at α = {}, the changes judged together (Benjamini–Hochberg); change: B's cost relative to A's, % of the figure, [interval]\n",
        sanitise::text(&r.a.path),
        sanitise::text(&r.a.host),
        sanitise::text(&r.a.kernel),
        r.a.passes_done,
        sanitise::text(&r.b.path),
        sanitise::text(&r.b.host),
        sanitise::text(&r.b.kernel),
        r.b.passes_done,
        r.alpha
    );
    // A cell that cost nothing on either side and did not change is only
    // counted: the table is what differs, or what a layer costs.
    let (shown, quiet): (Vec<&TaxChange>, Vec<&TaxChange>) = r
        .changes
        .iter()
        .partition(|c| c.significant || c.significant_a || c.significant_b);
    if !shown.is_empty() {
        let mut t = new_table(vec![
            "figure", "size", "layer", "A", "B", "change", "verdict",
        ]);
        for c in &shown {
            t.add_row([
                sanitise::text(&c.benchmark).into_owned(),
                format_size(c.size_bytes),
                sanitise::text(&c.layer).into_owned(),
                cost(c.diff_a_ns, c.diff_a_percent, c.significant_a),
                cost(c.diff_b_ns, c.diff_b_percent, c.significant_b),
                change(c),
                c.verdict.clone(),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    if !quiet.is_empty() {
        out.push_str(&format!(
            "{} other cell(s): no cost on either side and no change (each one: --json)\n",
            quiet.len()
        ));
    }
    if !r.unmatched.is_empty() {
        out.push_str("not compared:\n");
        for u in &r.unmatched {
            out.push_str(&format!(
                "  {} {} {}: {}\n",
                sanitise::text(&u.benchmark),
                format_size(u.size_bytes),
                sanitise::text(&u.layer),
                sanitise::text(&u.why)
            ));
        }
    }
    out.push_str(&differs("layers applied differently", &r.layers_differ));
    out.push_str(&differs(
        "boot-time mitigations that differ",
        &r.mitigations_differ,
    ));
    out
}
