//! The cost model of each mechanism measured at several sizes:
//! time = setup + bytes × per-byte, per range of sizes (the QNX study's
//! Table 2), fitted on every sample of every size.

use crate::engine::runner::{FigureResult, Outcome};
use crate::stats::regression::{LineFit, segmented_fit};
use comfy_table::{CellAlignment, ContentArrangement, Table, presets};

/// Fewest distinct sizes a range must hold to be fitted on its own.
const MIN_SIZES_PER_RANGE: usize = 3;
/// Most breakpoints looked for (three ranges).
const MAX_BREAKS: usize = 2;
/// Confidence level of the intervals.
const LEVEL: f64 = 0.95;

/// One range of sizes and its line.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Segment {
    /// Smallest size in the range, bytes.
    pub from_bytes: usize,
    /// Largest size in the range, bytes.
    pub to_bytes: usize,
    /// Fixed cost of a transfer, ns (the intercept).
    pub setup_ns: f64,
    /// Cost per byte, ns (the slope).
    pub per_byte_ns: f64,
    /// Coefficient of determination over the range's samples.
    pub r2: f64,
    /// 95% confidence interval of `setup_ns`.
    pub setup_ci_ns: [f64; 2],
    /// 95% confidence interval of `per_byte_ns`.
    pub per_byte_ci_ns: [f64; 2],
    /// Samples fitted.
    pub samples: usize,
}

/// The model of one mechanism.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CostModel {
    /// Mechanism id.
    pub benchmark: &'static str,
    /// Whether its messages used cold buffers (`--cold`): a separate model.
    pub cold: bool,
    /// Ranges of sizes in increasing order; more than one where the per-byte
    /// cost changes (a breakpoint: cache sizes, buffer limits).
    pub segments: Vec<Segment>,
}

fn segment(f: &LineFit) -> Segment {
    Segment {
        from_bytes: f.x_min as usize,
        to_bytes: f.x_max as usize,
        setup_ns: f.intercept,
        per_byte_ns: f.slope,
        r2: f.r2,
        setup_ci_ns: [f.intercept_ci.low, f.intercept_ci.high],
        per_byte_ci_ns: [f.slope_ci.low, f.slope_ci.high],
        samples: f.n,
    }
}

/// Models of every pingpong mechanism measured at [`MIN_SIZES_PER_RANGE`]
/// or more sizes, in run order.
pub fn fit(results: &[FigureResult]) -> Vec<CostModel> {
    // Warm and cold figures of one mechanism are different models.
    let mut order: Vec<(&'static str, bool)> = Vec::new();
    for r in results {
        let key = (r.mechanism, r.cold_region.is_some());
        if !order.contains(&key) {
            order.push(key);
        }
    }
    order
        .into_iter()
        .filter_map(|(id, cold)| {
            let mut points = Vec::new();
            let mut sizes = 0;
            for r in results
                .iter()
                .filter(|r| r.mechanism == id && r.cold_region.is_some() == cold && r.size > 0)
            {
                if let (crate::engine::runner::Mode::PingPong, Outcome::Ok(m)) =
                    (r.mode, &r.outcome)
                {
                    sizes += 1;
                    points.extend(m.samples_ns.iter().map(|&y| (r.size as f64, y)));
                }
            }
            if sizes < MIN_SIZES_PER_RANGE {
                return None;
            }
            let segs = segmented_fit(&points, MAX_BREAKS, MIN_SIZES_PER_RANGE, LEVEL);
            (!segs.is_empty()).then(|| CostModel {
                benchmark: id,
                cold,
                segments: segs.iter().map(segment).collect(),
            })
        })
        .collect()
}

/// The models as a table shaped like the study's Table 2.
pub fn render(models: &[CostModel]) -> String {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec!["mechanism", "sizes", "setup µs", "per-byte ns", "R²"]);
    super::table::fit_width(&mut t);
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
                    super::table::format_size(s.from_bytes),
                    super::table::format_size(s.to_bytes)
                ),
                format!("{:.2}", s.setup_ns / 1e3),
                format!("{:.4}", s.per_byte_ns),
                format!("{:.3}", s.r2),
            ]);
        }
    }
    for col in 2..5 {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    format!(
        "cost model: one-way time = setup + bytes × per-byte, least squares over every sample, \
         a new range where the per-byte cost changes\n{t}\n"
    )
}
