//! `placement_probe`: the round trip of a cache line between the two
//! measured CPUs, before the first pass, before each later pass and after
//! the last (`engine::run::placement_probe`), and what it suggests of the
//! host's placement of those CPUs (docs/trust.md).

use serde::{Deserialize, Serialize};

/// One probe's blocks: their median and spread, ns per round trip.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProbeSampleRecord {
    /// The median block's round trip.
    pub median_ns: f64,
    /// The 10th percentile of the blocks.
    pub p10_ns: f64,
    /// The 90th percentile of the blocks.
    pub p90_ns: f64,
}

/// The run's placement probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementProbeRecord {
    /// The two CPUs the line moved between.
    pub cpus: [usize; 2],
    /// Before the first pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<ProbeSampleRecord>,
    /// Before each later pass, in the order the passes ran (across load
    /// levels): `passes[0]` was taken before the second; `null` where none
    /// could be taken (see `failed`).
    #[serde(default)]
    pub passes: Vec<Option<ProbeSampleRecord>>,
    /// After the last pass (absent from a stopped run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<ProbeSampleRecord>,
    /// The cost of the two clock reads subtracted from each block, per
    /// round trip, ns (the largest of the probes').
    pub clock_ns: f64,
    /// With `ipcmark map`: each pair mapped, probed once before its
    /// figures (the run's own probes above are of `cpus`); absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<PairProbeRecord>,
    /// The time the probes took in all, ns (threads' start and end
    /// included): what they added to the run; absent from earlier reports.
    #[serde(default)]
    pub took_ns: u64,
    /// The class of placement the first probe's round trip suggests ("SMT
    /// siblings", "shared last-level cache", "across caches"), by the
    /// thresholds docs/trust.md states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Why a probe could not be taken, where one could not (the first
    /// reason; the others were alike).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

impl PlacementProbeRecord {
    /// Every probe taken, in time order, with where it was taken ("start",
    /// "before pass N", "end").
    pub fn in_order(&self) -> Vec<(String, ProbeSampleRecord)> {
        let mut all = Vec::new();
        if let Some(s) = self.start {
            all.push(("start".to_string(), s));
        }
        for (i, s) in self.passes.iter().enumerate() {
            if let Some(s) = s {
                all.push((format!("before pass {}", i + 2), *s));
            }
        }
        if let Some(s) = self.end {
            all.push(("end".to_string(), s));
        }
        all
    }
}

/// One pair's probe, where the run measured pairs of their own (a map).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairProbeRecord {
    /// The client's and the server's CPU.
    pub cpus: [usize; 2],
    /// The probe's blocks.
    #[serde(flatten)]
    pub probe: ProbeSampleRecord,
}
