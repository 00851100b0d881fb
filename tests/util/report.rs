//! JSON reports: reading a report, checking it against its documented
//! schema, and the checks that several modes' results share (a run that
//! writes one: [`Run::json`](super::Run::json)).

use serde_json::Value;
use std::path::Path;

/// The schema of `ipcmark run --json` (relative to the crate root).
pub const RUN_SCHEMA: &str = "docs/schema/run.schema.json";
/// The schema of `ipcmark workload --json`.
pub const WORKLOAD_SCHEMA: &str = "docs/schema/workload.schema.json";

/// Reads a JSON report.
pub fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

/// The results of a run report.
pub fn results(report: &Value) -> &Vec<Value> {
    report["results"].as_array().expect("results array")
}

/// A compiled validator for the JSON Schema at `schema_path` (relative to
/// the crate root).
pub fn validator(schema_path: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(schema_path).unwrap_or_else(|e| panic!("read {schema_path}: {e}")),
    )
    .expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

/// Errors of `report` against the JSON Schema at `schema_path`, one line each.
pub fn schema_errors(schema_path: &str, report: &Value) -> Vec<String> {
    validator(schema_path)
        .iter_errors(report)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// `v` as an unsigned integer.
pub fn uint(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not an unsigned integer: {v}"))
}

/// `v[key]` as an unsigned integer.
pub fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// Asserts that a `latency_ns` record (of the result `name`) is in order:
/// min ≤ p50 ≤ p90 ≤ p99 ≤ p999 ≤ max.
pub fn assert_latency_in_order(name: &str, l: &Value) {
    // null: the percentile fell among single times at or below zero once
    // the overheads were subtracted; those rank lowest, so nulls come first.
    let f = |k: &str| match &l[k] {
        Value::Null => None,
        v => Some(
            v.as_f64()
                .unwrap_or_else(|| panic!("{name}: latency_ns.{k} in {l}")),
        ),
    };
    let keys = ["min", "p50", "p90", "p99", "p999", "max"];
    if f("min").is_none() {
        assert!(l["at_or_below_zero"].as_u64() >= Some(1), "{name}: {l}");
    }
    for w in keys.windows(2) {
        match (f(w[0]), f(w[1])) {
            (Some(a), Some(b)) => assert!(
                a <= b,
                "{name}: {} > {}: percentiles out of order in {l}",
                w[0],
                w[1]
            ),
            (Some(_), None) => panic!("{name}: {} null after {} in {l}", w[1], w[0]),
            (None, _) => {}
        }
    }
}

/// Asserts that `latency_ns` `l` (of `name`) names what its median is the
/// median of and what its percentiles are of, and that the mean of the
/// percentiles' population lies within them (a rank's 0.1% and the
/// rounding of a single time aside).
pub fn assert_populations(name: &str, l: &Value, median_of: &str, percentiles_of: &str) {
    assert_eq!(l["median_of"], median_of, "{name}: {l}");
    assert_eq!(l["percentiles_of"], percentiles_of, "{name}: {l}");
    let mean = l["single_mean"]
        .as_f64()
        .unwrap_or_else(|| panic!("{name}: no single_mean in {l}"));
    if let (Some(min), Some(max)) = (l["min"].as_f64(), l["max"].as_f64()) {
        assert!(
            mean >= min * 0.999 - 1.0 && mean <= max * 1.001 + 1.0,
            "{name}: single_mean {mean} outside [{min}, {max}]"
        );
    }
}

/// Asserts that result `r` (named `name`) holds `count` samples and that the
/// median of its `latency_ns` lies among them.
pub fn assert_median_among_samples(name: &str, r: &Value, count: usize) {
    let samples: Vec<f64> = r["samples_ns"]
        .as_array()
        .unwrap_or_else(|| panic!("{name}: no samples_ns"))
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    assert_eq!(samples.len(), count, "{name}: sample count");
    let median = r["latency_ns"]["median"].as_f64().unwrap();
    let (lo, hi) = samples
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &s| (a.min(s), b.max(s)));
    assert!(
        lo <= median && median <= hi,
        "{name}: median {median} outside its samples {samples:?}"
    );
}

/// Whether `r` is an op result whose time less its baseline reached zero
/// on a loaded machine, reported as it must be: status `below_resolution`,
/// a reason naming the baseline, and no figure. Tests of baseline-subtracted
/// benchmarks accept it instead of "ok" (nothing is floored to make it one).
pub fn below_resolution_by_baseline(r: &Value) -> bool {
    if r["status"] != "below_resolution" {
        return false;
    }
    assert!(r["reason"].as_str().unwrap().contains("baseline"), "{r}");
    assert!(r["latency_ns"].is_null(), "{r}");
    true
}
