//! github-action-benchmark's `customSmallerIsBetter` input
//! (<https://github.com/benchmark-action/github-action-benchmark>, `tool:
//! customSmallerIsBetter`): a JSON array of `{"name", "unit", "value",
//! "range", "extra"}`, `range` and `extra` optional. Only what is smaller
//! when better goes in: each figure's latency in ns, its range the larger
//! side of the 95% interval of its median (`± 12.3`), `extra` the interval
//! in words; a stream figure's throughput, bigger when better, is left out
//! (Bencher's file holds it).

use super::Measured;
use serde_json::{Value, json};

/// The `customSmallerIsBetter` JSON of `figures`, in their order, with a
/// final line break.
pub fn render(figures: &[Measured]) -> String {
    let entries: Vec<Value> = figures
        .iter()
        .filter_map(|f| {
            let l = f.latency.as_ref()?;
            let mut e = json!({ "name": f.name, "unit": "ns", "value": l.value });
            if let Some((lo, hi)) = l.bounds {
                e["range"] = format!("± {:.1}", (hi - l.value).max(l.value - lo)).into();
                e["extra"] = match &l.over {
                    Some(over) => format!("95% interval {lo:.1}–{hi:.1} ns over {over}"),
                    None => format!("95% interval {lo:.1}–{hi:.1} ns"),
                }
                .into();
            }
            Some(e)
        })
        .collect();
    let mut text =
        serde_json::to_string_pretty(&Value::Array(entries)).expect("finite numbers serialise");
    text.push('\n');
    text
}
