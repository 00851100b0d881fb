//! The cost models of a run (fitted in `analysis::cost_model`) as the
//! `--long` page's table.

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
         changes significantly\n{t}\n"
    )
}
