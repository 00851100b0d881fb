//! Bencher Metric Format (<https://bencher.dev/docs/reference/bencher-metric-format/>),
//! what `bencher run --adapter json --file FILE` reads: one object per
//! benchmark, named by the figure's identity, holding one object per
//! measure, `{"value", "lower_value", "upper_value"}` (the bounds
//! optional). `latency` is Bencher's built-in measure in ns: the figure's
//! centre and the 95% interval of its median over the passes;
//! `throughput` its built-in measure in operations a second: a stream
//! figure's messages a second.

use super::{Measured, Metric};
use serde_json::{Map, Value, json};

/// Bencher's built-in latency measure (ns).
pub const LATENCY: &str = "latency";
/// Bencher's built-in throughput measure (operations a second).
pub const THROUGHPUT: &str = "throughput";

fn metric(m: &Metric) -> Value {
    let mut v = json!({ "value": m.value });
    if let Some((lo, hi)) = m.bounds {
        v["lower_value"] = lo.into();
        v["upper_value"] = hi.into();
    }
    v
}

/// The BMF JSON of `figures`, in their order, with a final line break.
pub fn render(figures: &[Measured]) -> String {
    let mut root = Map::new();
    for f in figures {
        let mut measures = Map::new();
        if let Some(l) = &f.latency {
            measures.insert(LATENCY.into(), metric(l));
        }
        if let Some(t) = &f.throughput {
            measures.insert(THROUGHPUT.into(), metric(t));
        }
        if !measures.is_empty() {
            root.insert(f.name.clone(), Value::Object(measures));
        }
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(root))
        .expect("a map of finite numbers serialises");
    text.push('\n');
    text
}
