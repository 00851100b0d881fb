//! The cost models of a run (fitted in `analysis::cost_model`) as the
//! `--long` page's table, and beside them the cost of the verify rounds'
//! whole-content check (`verification`), which no figure contains.

use crate::record::run::VerificationRecord;
use crate::record::summary::CostModel;

/// The models as a table shaped like the study's Table 2.
pub fn render(models: &[CostModel]) -> String {
    let mut t = crate::output::table::cells::new_table(vec![
        "mechanism",
        "sizes",
        "setup µs",
        "per-byte ns",
        "R²",
    ]);
    for m in models {
        for (i, s) in m.segments.iter().enumerate() {
            t.add_row(vec![
                match (i, m.cold) {
                    (0, false) => m.benchmark.to_string(),
                    (0, true) => format!("{} (cold)", m.benchmark),
                    _ => String::new(),
                },
                format!(
                    "{}–{}",
                    crate::output::table::cells::format_size(s.from_bytes),
                    crate::output::table::cells::format_size(s.to_bytes)
                ),
                format!("{:.2}", s.setup_ns / 1e3),
                format!("{:.4}", s.per_byte_ns),
                format!("{:.3}", s.r2),
            ]);
        }
    }
    crate::output::table::cells::align_right(&mut t, 2..5);
    format!(
        "cost model: one-way time = setup + bytes × per-byte, least squares weighted by 1/time² over each \
         size's median (drift common to interleaved sizes removed), a new range where the per-byte cost \
         changes significantly\n{t}\n{}",
        crossovers(models)
    )
}

/// The cost per byte of comparing a whole message, as measured at the
/// run's start, in one line: the figures' per-byte costs do not contain it.
pub fn verification(v: &VerificationRecord) -> String {
    use crate::output::table::cells::format_size;
    let sizes: Vec<String> = v.sizes_bytes.iter().map(|&s| format_size(s)).collect();
    format!(
        "verification (untimed): comparing every byte costs {:.3} ns/B on this machine (the check \
         timed at {}, the slope between the sizes); the timed loops check the 8-byte number only, \
         so no figure contains it\n",
        v.ns_per_byte,
        sizes.join(" and ")
    )
}

/// Where the models' lines cross, in words: every pair that crosses, with
/// the faster below and above, or that they do not and which is faster.
fn crossovers(models: &[CostModel]) -> String {
    use crate::output::table::cells::format_size;
    let all = crate::analysis::cost_model::crossovers(models);
    let mut lines = Vec::new();
    for c in &all {
        let other = if c.faster_first == c.a { &c.b } else { &c.a };
        if c.at_bytes.is_empty() {
            // Said of every pair: "no crossover from 1 B to 64 KiB" is as
            // much an answer as where one is.
            lines.push(format!(
                "  {} / {}: none from {} to {}: {} is faster at every size both measured",
                c.a,
                c.b,
                format_size(c.from_bytes),
                format_size(c.to_bytes),
                c.faster_first
            ));
            continue;
        }
        let at: Vec<String> = c
            .at_bytes
            .iter()
            .map(|x| {
                let n = x.round() as usize;
                let s = format_size(n);
                if n < 1024 { format!("{s} B") } else { s }
            })
            .collect();
        lines.push(format!(
            "  {} / {}: cross at {}: {} faster below, {} above",
            c.a,
            c.b,
            at.join(" and "),
            c.faster_first,
            if c.at_bytes.len() % 2 == 1 {
                other
            } else {
                &c.faster_first
            }
        ));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "crossovers (where two models' lines meet, within the sizes both measured):\n{}\n",
        lines.join("\n")
    )
}
