//! Synthetic fleets: run reports of many hosts made from one real report
//! (tests/reports/ipc-quick.json, its four figures each repeated at two
//! more sizes: twelve), each host its own name and a deterministic ±3% on
//! every figure, one host mis-set if asked. No host is measured.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// A deterministic number in [-1, 1) for (host, figure): splitmix64.
fn noise(host: usize, figure: usize) -> f64 {
    let mut z = ((host as u64) << 32) | figure as u64;
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// Multiplies the number at `v[key]` by `factor`, where there is one.
fn scale(v: &mut Value, key: &str, factor: f64) {
    if let Some(x) = v.get(key).and_then(Value::as_f64) {
        v[key] = serde_json::json!(x * factor);
    }
}

/// The report of host `h` of the fleet: `node{h:02}`, its figures ±3%;
/// `slow`: its governor `powersave` and its figures 20–40% slower.
pub fn fleet_report(h: usize, slow: bool) -> Value {
    let text = std::fs::read_to_string("tests/reports/ipc-quick.json").unwrap();
    let mut r: Value = serde_json::from_str(&text).unwrap();
    let base = r["results"].as_array().unwrap().clone();
    let mut results = base.clone();
    for d in 1..=2u64 {
        for f in &base {
            let mut g = f.clone();
            g["size_bytes"] = serde_json::json!(f["size_bytes"].as_u64().unwrap() + d);
            results.push(g);
        }
    }
    for (i, f) in results.iter_mut().enumerate() {
        let mut factor = 1.0 + 0.03 * noise(h, i);
        if slow {
            factor *= 1.3 + 0.1 * noise(h + 100, i);
        }
        scale(&mut f["latency_ns"], "median", factor);
        if let Some(s) = f.get_mut("sweep").filter(|s| s.is_object()) {
            scale(s, "drift_corrected_median_ns", factor);
        }
    }
    r["results"] = Value::Array(results);
    r["environment"]["hostname"] = format!("node{h:02}").into();
    r["started_at"] = format!("2026-03-01T10:{h:02}:00Z").into();
    if slow {
        r["environment"]["frequency_governor"] = "powersave".into();
    }
    r
}

/// Writes a fleet of `n` hosts into `dir` as `r-node00.json`…, host
/// `slow` mis-set; their paths.
pub fn write_fleet(dir: &Path, n: usize, slow: Option<usize>) -> Vec<PathBuf> {
    (0..n)
        .map(|h| {
            let path = dir.join(format!("r-node{h:02}.json"));
            let text = serde_json::to_string_pretty(&fleet_report(h, slow == Some(h))).unwrap();
            std::fs::write(&path, text + "\n").unwrap();
            path
        })
        .collect()
}
