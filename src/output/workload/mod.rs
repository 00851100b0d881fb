//! The report of `ipcmark workload`: the runs of each configuration as they
//! ended ([`ConfigResult`]), their records (`record::workload`, schema
//! `ipcmark.workload/1`, built by [`records`]) and their tables in the shape of the study's ([`tables`]: a
//! row per run, a mean row, and a factor against the best configuration).

mod page;
pub mod records;
pub mod tables;

use crate::stats::Summary;
use crate::workloads::{CastRole, Headline, RunRecord};

pub use page::page;
pub use records::{configurations, figure_info, migration_plan};

/// The runs of one configuration (one placement), as they ended.
#[derive(Debug, Clone)]
pub struct ConfigResult {
    /// "packed", "spread", "free" or the explicit CPU list.
    pub name: String,
    /// The CPU each process was placed on.
    pub cpus: Vec<Option<usize>>,
    /// Every run in order: its record or why it failed.
    pub runs: Vec<Result<RunRecord, String>>,
    /// Across MPI ranks: the rank playing each role, in `--place` order;
    /// empty for a local configuration.
    pub roles: Vec<CastRole>,
}

pub(super) fn ok_runs(c: &ConfigResult) -> Vec<&RunRecord> {
    c.runs.iter().filter_map(|r| r.as_ref().ok()).collect()
}

fn mean_figure(c: &ConfigResult) -> Option<f64> {
    let figures: Vec<f64> = ok_runs(c).iter().map(|r| r.figure).collect();
    Summary::of(&figures).map(|s| s.mean)
}

/// Each configuration's factor against the best: best/mean for counts,
/// mean/best for times, so 1 is the best and larger is worse.
pub fn factors(headline: Headline, configs: &[ConfigResult]) -> Vec<Option<f64>> {
    let means: Vec<Option<f64>> = configs.iter().map(mean_figure).collect();
    let valid = means.iter().flatten().copied().filter(|m| *m > 0.0);
    let best = match headline {
        Headline::Count => valid.fold(None, |b: Option<f64>, m| Some(b.map_or(m, |b| b.max(m)))),
        Headline::Time => valid.fold(None, |b: Option<f64>, m| Some(b.map_or(m, |b| b.min(m)))),
    };
    means
        .iter()
        .map(|m| match (m, best) {
            (Some(m), Some(b)) if *m > 0.0 => Some(match headline {
                Headline::Count => b / m,
                Headline::Time => m / b,
            }),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::os::group::MemberReport;
    use crate::workloads::ProcessRecord;

    pub(super) fn record(figure: f64, ops: &[u64]) -> RunRecord {
        RunRecord {
            elapsed_ns: 1,
            stopped_after_ns: None,
            figure,
            processes: ops
                .iter()
                .map(|&o| ProcessRecord {
                    role: "p".into(),
                    rank: None,
                    report: MemberReport {
                        cpu_placed: Some(0),
                        cpu_start: Some(0),
                        cpu_end: Some(0),
                        cpus_seen: vec![0],
                        migrations: 0,
                        migration_misses: 0,
                        ops: o,
                        time_ns: 1,
                        counters: vec![0; 8],
                    },
                    counters: vec![],
                })
                .collect(),
            metrics: vec![("per_op_ns", 10.0)],
            places: Vec::new(),
        }
    }

    pub(super) fn config(name: &str, figures: &[f64]) -> ConfigResult {
        ConfigResult {
            name: name.into(),
            cpus: vec![Some(0), Some(0)],
            runs: figures.iter().map(|&f| Ok(record(f, &[1, 2]))).collect(),
            roles: Vec::new(),
        }
    }

    #[test]
    fn factors_are_one_for_the_best_and_larger_for_the_rest() {
        let cs = [config("a", &[100.0, 100.0]), config("b", &[200.0])];
        assert_eq!(factors(Headline::Time, &cs), vec![Some(1.0), Some(2.0)]);
        assert_eq!(factors(Headline::Count, &cs), vec![Some(2.0), Some(1.0)]);
        let failed = ConfigResult {
            runs: vec![Err("x".into())],
            ..config("c", &[])
        };
        assert_eq!(factors(Headline::Time, &[failed]), vec![None]);
    }
}
