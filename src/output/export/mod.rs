//! Results in the formats CI dashboards read, named as hyperfine names its
//! exports (`--export-json`, `--export-markdown`): Bencher Metric Format
//! ([`bmf`]), github-action-benchmark's `customSmallerIsBetter` ([`gab`]),
//! JUnit XML ([`junit`]), GitHub Actions workflow commands
//! ([`annotations`]) and an Apache Otava CSV with its config ([`otava`]).
//!
//! Each writer is a pure function from records to text: the command line
//! decides where the text goes. A figure is named by its identity
//! ([`FigureRecord::key`], the history's `figures.key`: `pipe/pingpong/64`),
//! so a dashboard's series and the history's are the same series.

pub mod annotations;
pub mod bmf;
pub mod gab;
pub mod junit;
pub mod otava;
mod words;

use crate::output::sanitise;
use crate::record::{FigureRecord, RunRecord};

/// One value of a figure, with its 95% interval where it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// The value.
    pub value: f64,
    /// The interval's low and high ends, where the figure has an interval
    /// and it holds the value.
    pub bounds: Option<(f64, f64)>,
    /// What the interval rests on, in words (`5 passes`, `6 batches`).
    pub over: Option<String>,
}

/// A figure as a dashboard plots it.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The figure's identity as text (`pipe/pingpong/64`), made safe.
    pub name: String,
    /// Its latency, ns: the centre `watch` plots (the drift-corrected median
    /// where it was sampled in rounds, else the median), with the interval
    /// of its median over the passes (or the batches of one pass).
    pub latency: Option<Metric>,
    /// A stream figure's throughput, messages a second.
    pub throughput: Option<Metric>,
}

/// What a dashboard plots of `f`: none unless it was measured and has a
/// latency or a throughput (a finite one).
pub fn measured(f: &FigureRecord) -> Option<Measured> {
    let latency = crate::analysis::watch::centre(f)
        .filter(|v| v.is_finite())
        .map(|value| {
            let precision = f.precision.as_ref();
            let bounds = precision
                .map(|p| (p.interval_ns.low, p.interval_ns.high))
                .filter(|(lo, hi)| {
                    lo.is_finite() && hi.is_finite() && *lo <= value && value <= *hi
                });
            Metric {
                value,
                bounds,
                over: precision
                    .filter(|_| bounds.is_some())
                    .map(|p| format!("{} {}", p.units, sanitise::text(&p.basis))),
            }
        });
    let throughput = f
        .stream
        .as_ref()
        .filter(|_| f.status == crate::record::run::Status::Ok)
        .and_then(|s| s.messages_per_s)
        .filter(|v| v.is_finite())
        .map(|value| Metric {
            value,
            bounds: None,
            over: None,
        });
    (latency.is_some() || throughput.is_some()).then(|| Measured {
        name: sanitise::text(&f.key().to_string()).into_owned(),
        latency,
        throughput,
    })
}

/// What a dashboard plots of `figures`, in their order; a figure measured
/// more than once (a load sweep's levels) is taken once, at its first.
pub fn of_figures<'a>(figures: impl IntoIterator<Item = &'a FigureRecord>) -> Vec<Measured> {
    let mut seen = std::collections::HashSet::new();
    figures
        .into_iter()
        .filter_map(measured)
        .filter(|m| seen.insert(m.name.clone()))
        .collect()
}

/// What a dashboard plots of a run.
pub fn of_run(run: &RunRecord) -> Vec<Measured> {
    of_figures(&run.results)
}

/// A figure of a comparison or a check as JUnit and the annotations name
/// it: its mode (with how it was timed) and its size, as the tables show them.
fn figure_name(mode: &str, size_bytes: usize) -> String {
    format!(
        "{} {}",
        sanitise::text(mode),
        crate::record::units::format_size(size_bytes)
    )
}

#[cfg(test)]
mod tests;
