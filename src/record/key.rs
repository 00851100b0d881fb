//! What makes two figures *the same figure*, in one run or across runs:
//! what was measured and how, never the conditions it was measured under
//! (the machine, a stated load, the passes). The history keys its figures
//! by it, `compare` pairs figures by it, and the HTML report draws one
//! series per key less its size.

use std::fmt;

/// A figure's identity. Field order is sort order: a mechanism's figures
/// sort by how they were timed, then by size.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FigureKey {
    /// Mechanism or benchmark id.
    pub benchmark: String,
    /// `pingpong`, `oneway`, `stream`, `op`, `event`, `periodic`, `score`.
    pub mode: String,
    /// Each message in a fresh, uncached buffer (`--cold`): another
    /// measurement from a warm one of the same size.
    pub cold: bool,
    /// A one-way figure's pacing: `saturated` or `sporadic`.
    pub pacing: Option<String>,
    /// A sporadic one-way figure's interval between sends, ns.
    pub interval_ns: Option<u64>,
    /// A periodic figure's frequency (timer-failures makes one per
    /// frequency), as its shortest text.
    pub frequency_hz: Option<String>,
    /// A rate figure's lowest offered rate, msg/s, as its shortest text: its
    /// headline is the latency at that rate, so curves that start at
    /// another rate are other figures.
    pub rate_from: Option<String>,
    /// Payload bytes (an operation: the bytes it moves).
    pub size_bytes: usize,
    /// A map's figure: the pair of CPUs (client, server) it measures, which
    /// is what it is a figure of.
    pub pair: Option<[usize; 2]>,
}

impl super::FigureRecord {
    /// This figure's identity: the one definition the history, `compare`
    /// and the HTML report pair and group figures by.
    pub fn key(&self) -> FigureKey {
        FigureKey {
            benchmark: self.benchmark.clone(),
            mode: self.mode.name().to_string(),
            cold: self.cold_region_bytes.is_some(),
            pacing: self.oneway.as_ref().map(|o| o.pacing.clone()),
            interval_ns: self.oneway.as_ref().and_then(|o| o.interval_ns),
            // Rust's shortest text of the number: 1000, 12.5.
            frequency_hz: self.periodic.as_ref().map(|p| p.frequency_hz.to_string()),
            rate_from: self.rate_curve.as_ref().and_then(|c| {
                c.points
                    .iter()
                    .map(|p| p.offered_rate)
                    .min_by(f64::total_cmp)
                    .map(|r| r.to_string())
            }),
            size_bytes: self.size_bytes,
            pair: self.pair,
        }
    }
}

impl FigureKey {
    /// The mode with how it was timed, as `compare` labels a figure:
    /// `pingpong`, `pingpong (cold)`, `oneway (every 1000000 ns)`,
    /// `oneway (saturated)`, `periodic (1000 Hz)`.
    pub fn mode_label(&self) -> String {
        let mut how = Vec::new();
        if self.cold {
            how.push("cold".to_string());
        }
        match (&self.pacing, self.interval_ns) {
            (Some(_), Some(ns)) => how.push(format!("every {ns} ns")),
            (Some(p), None) => how.push(p.clone()),
            (None, _) => {}
        }
        if let Some(hz) = &self.frequency_hz {
            how.push(format!("{hz} Hz"));
        }
        if let Some(r) = &self.rate_from {
            how.push(format!("from {r} msg/s"));
        }
        match how.is_empty() {
            true => self.mode.clone(),
            false => format!("{} ({})", self.mode, how.join(", ")),
        }
    }

    /// The key without its size: one series of the report's charts.
    pub fn series(&self) -> FigureKey {
        FigureKey {
            size_bytes: 0,
            ..self.clone()
        }
    }
}

/// The history's text form (its `figures.key` column):
/// `benchmark/mode/size`, then `/cold`, `/PACING` (with `@INTERVAL_NS`),
/// `/FREQUENCYHz`, a rate curve's `/fromRATE` and a map's `/cpuC-S` where they
/// apply: `pipe/pingpong/64`, `vm-copy/pingpong/64/cold`,
/// `posix-mq/oneway/64/sporadic@100000000`, `pipe/rate/64/from1000`,
/// `pipe/pingpong/64/cpu0-1`.
impl fmt::Display for FigureKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.benchmark, self.mode, self.size_bytes)?;
        if self.cold {
            f.write_str("/cold")?;
        }
        if let Some(p) = &self.pacing {
            write!(f, "/{p}")?;
            if let Some(ns) = self.interval_ns {
                write!(f, "@{ns}")?;
            }
        }
        if let Some(hz) = &self.frequency_hz {
            write!(f, "/{hz}Hz")?;
        }
        if let Some(r) = &self.rate_from {
            write!(f, "/from{r}")?;
        }
        if let Some([c, s]) = self.pair {
            write!(f, "/cpu{c}-{s}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::FigureRecord;
    use serde_json::{Value, json};

    /// The key of a figure whose report holds `fields` (a skipped figure,
    /// with what a one-way or periodic figure's facts need besides).
    fn key(fields: Value) -> FigureKey {
        let mut r = json!({"status": "skipped", "reason": "-", "cpus": []});
        let fields = fields.as_object().unwrap();
        if fields.contains_key("pacing") {
            r.as_object_mut().unwrap().extend(
                json!({"messages_sent": 1, "messages_received": 1, "gaps": 0, "window": 1,
                       "windows": [], "mean_ns": 1.0, "time_bounded": false,
                       "sender_timer_slack_ns": 1, "sender_sched_policy": "SCHED_OTHER"})
                .as_object()
                .unwrap()
                .clone(),
            );
        }
        if fields.contains_key("frequency_hz") {
            r.as_object_mut().unwrap().extend(
                json!({"period_ns": 1, "duration_ms": 1.0, "timer_slack_ns": 1,
                       "sched_policy": "SCHED_OTHER"})
                .as_object()
                .unwrap()
                .clone(),
            );
        }
        r.as_object_mut().unwrap().extend(fields.clone());
        serde_json::from_value::<FigureRecord>(r).unwrap().key()
    }

    #[test]
    fn warm_and_cold_figures_of_one_size_are_two_figures() {
        let warm = key(json!(
            {"benchmark": "vm-copy", "mode": "pingpong", "size_bytes": 64}
        ));
        let cold = key(json!(
            {"benchmark": "vm-copy", "mode": "pingpong", "size_bytes": 64,
             "cold_region_bytes": 8388608}
        ));
        assert_ne!(warm, cold);
        assert_eq!(warm.to_string(), "vm-copy/pingpong/64");
        assert_eq!(cold.to_string(), "vm-copy/pingpong/64/cold");
        assert_eq!(warm.mode_label(), "pingpong");
        assert_eq!(cold.mode_label(), "pingpong (cold)");
        assert!(warm < cold, "warm sorts first");
    }

    #[test]
    fn pacing_interval_and_frequency_tell_figures_apart() {
        let oneway = |pacing: &str, interval: Option<u64>| {
            key(json!({"benchmark": "posix-mq", "mode": "oneway",
                "size_bytes": 64, "pacing": pacing, "interval_ns": interval}))
        };
        let (sat, every_ms, every_10ms) = (
            oneway("saturated", None),
            oneway("sporadic", Some(1_000_000)),
            oneway("sporadic", Some(10_000_000)),
        );
        assert_ne!(sat, every_ms);
        assert_ne!(every_ms, every_10ms);
        assert_eq!(sat.to_string(), "posix-mq/oneway/64/saturated");
        assert_eq!(every_ms.to_string(), "posix-mq/oneway/64/sporadic@1000000");
        assert_eq!(every_ms.mode_label(), "oneway (every 1000000 ns)");
        assert_eq!(sat.mode_label(), "oneway (saturated)");

        let periodic = |hz: f64| {
            key(json!({"benchmark": "timer-failures",
                "mode": "periodic", "size_bytes": 0, "frequency_hz": hz}))
        };
        assert_ne!(periodic(1000.0), periodic(2000.0));
        assert_eq!(periodic(1000.0).mode_label(), "periodic (1000 Hz)");
        assert_eq!(
            periodic(1000.0).to_string(),
            "timer-failures/periodic/0/1000Hz"
        );
    }

    /// A rate figure's headline is its lowest rate's latency: curves from
    /// different rates are different figures, and compare never pairs them.
    #[test]
    fn rate_curves_from_different_rates_are_different_figures() {
        for (name, text) in crate::record::run::tests::FIXTURES {
            let record = crate::record::RunRecord::parse(text).unwrap();
            let Some(r) = record.results.iter().find(|r| r.rate_curve.is_some()) else {
                continue;
            };
            let from = r.key();
            let lowest = from
                .rate_from
                .clone()
                .expect("a rate curve has a lowest rate");
            assert_eq!(
                from.to_string(),
                format!("{}/rate/{}/from{lowest}", r.benchmark, r.size_bytes),
                "{name}"
            );
            assert_eq!(from.mode_label(), format!("rate (from {lowest} msg/s)"));
            let mut other = r.clone();
            for p in other.rate_curve.as_mut().unwrap().points.iter_mut() {
                p.offered_rate *= 2.0;
            }
            assert_ne!(other.key(), from, "{name}");
            return;
        }
        panic!("no fixture has a rate figure");
    }

    #[test]
    fn a_series_is_the_key_without_its_size() {
        let at =
            |size: u64| key(json!({"benchmark": "pipe", "mode": "pingpong", "size_bytes": size}));
        assert_ne!(at(64), at(1024));
        assert_eq!(at(64).series(), at(1024).series());
    }

    /// Every figure of every mode's report has a key, and no two figures of
    /// one run share one.
    #[test]
    fn no_two_figures_of_a_run_share_a_key() {
        for (name, text) in crate::record::run::tests::FIXTURES {
            let record = crate::record::RunRecord::parse(text).unwrap();
            let mut keys: Vec<String> =
                record.results.iter().map(|r| r.key().to_string()).collect();
            let n = keys.len();
            keys.sort();
            keys.dedup();
            // A load sweep measures each figure once per level.
            if *name != "load-sweep" {
                assert_eq!(keys.len(), n, "{name}: {keys:?}");
            }
        }
    }
}
