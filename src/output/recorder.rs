//! The run's JSON report as a [`RunObserver`]: rewritten after every step,
//! so a run that is stopped or fails late keeps every figure measured
//! before it; warnings read from the figures as measured; cost models and
//! completion once the run is over.

use crate::engine::run::figure::FigureResult;
use crate::engine::run::session::RunObserver;
use crate::output::json::{self, Report, ResultRecord};
use crate::output::warnings::{self, Warning};
use std::path::PathBuf;

/// Keeps the report of a run and writes it to `path` (if any) as it grows.
pub struct Recorder {
    /// The report so far.
    pub report: Report,
    /// The warnings the figures gave, once measured.
    pub warnings: Vec<Warning>,
    path: Option<PathBuf>,
    sink: Option<Box<dyn ReportSink>>,
}

/// Something else that keeps the report as it grows (the run history):
/// given the whole report each time the recorder saves it.
pub trait ReportSink {
    /// The report after a step (results so far), or once the run is over
    /// (`complete`, `finished_at`, warnings and cost models filled in).
    fn saved(&mut self, report: &Report) -> Result<(), String>;
}

impl Recorder {
    /// A recorder of `report` (no results yet) saving to `path`.
    pub fn new(report: Report, path: Option<PathBuf>) -> Recorder {
        Recorder {
            report,
            warnings: Vec::new(),
            path,
            sink: None,
        }
    }

    /// The recorder that also hands the report to `sink` at every save.
    pub fn with_sink(mut self, sink: Box<dyn ReportSink>) -> Recorder {
        self.sink = Some(sink);
        self
    }

    fn records(&mut self, results: &[FigureResult]) {
        self.report.results = results.iter().map(ResultRecord::from_figure).collect();
    }

    fn save(&mut self) -> Result<(), String> {
        if let Some(path) = &self.path {
            json::write_atomic(path, &self.report)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        match &mut self.sink {
            Some(sink) => sink.saved(&self.report),
            None => Ok(()),
        }
    }
}

impl RunObserver for Recorder {
    fn recorded(&mut self, results: &[FigureResult]) -> Result<(), String> {
        self.records(results);
        self.save()
    }

    fn measured(&mut self, results: &[FigureResult]) {
        self.warnings = warnings::collect(&self.report.environment, results);
        self.report.warnings = self.warnings.iter().map(Into::into).collect();
    }

    fn finished(&mut self, results: &[FigureResult], stopped: Option<i32>) -> Result<(), String> {
        self.records(results);
        self.report.cost_models = crate::output::cost_model::fit(results);
        self.report.complete = stopped.is_none();
        self.report.finished_at = Some(now_rfc3339());
        self.save()
    }
}

/// The time now, as the reports write it.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}
