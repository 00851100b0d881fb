//! The charts the page's script (`page.js`) draws, as the JSON block it
//! reads, and the colour of each series: one [`Page`] per report, which
//! every section that draws a chart adds to (`charts.rs`, `rate.rs`).

use super::esc;
// The charts' specifications are JSON the page's script reads: written by
// the sections from the typed figures, never read back.
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Saturated colours, distinct on a white page; more series take hues at
/// the golden angle.
const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf", "#e377c2", "#8c564b",
    "#a6a600", "#0b3d91",
];

/// The charts the page's script draws, and the colour of each series (the
/// same in every chart and every run).
#[derive(Default)]
pub struct Page {
    charts: Vec<Value>,
    colours: BTreeMap<String, String>,
}

impl Page {
    /// The colour of series `name`.
    pub(super) fn colour(&mut self, name: &str) -> String {
        let n = self.colours.len();
        self.colours
            .entry(name.to_string())
            .or_insert_with(|| match PALETTE.get(n) {
                Some(c) => c.to_string(),
                None => hsl_hex((n as f64 * 137.508) % 360.0, 0.65, 0.42),
            })
            .clone()
    }

    /// The chart specifications, for the page's JSON block.
    pub fn data(&self) -> Value {
        json!({ "charts": self.charts })
    }

    /// Charts the script draws.
    pub fn chart_count(&self) -> usize {
        self.charts.len()
    }

    /// Adds a chart for the script and returns its placeholder.
    pub(super) fn chart(&mut self, mut spec: Value, caption: &str) -> String {
        let id = format!("chart-{}", self.charts.len() + 1);
        if let Value::Object(spec) = &mut spec {
            spec.insert("id".into(), json!(id));
        }
        self.charts.push(spec);
        format!(
            "<figure class=\"chart\"><div class=\"plot\" id=\"{id}\"></div>\
             <figcaption>{}</figcaption></figure>",
            esc(caption)
        )
    }
}

/// `#rrggbb` of a hue (degrees), saturation and lightness (0–1).
pub(super) fn hsl_hex(h: f64, s: f64, l: f64) -> String {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = h / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    format!("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b))
}
