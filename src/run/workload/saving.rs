//! A workload's report as it goes: what it starts as ([`ReportStart`],
//! the command, the machine and the settings) and where it is saved after
//! every run ([`Sink`]: `--json` and the history, each given up with one
//! warning if it cannot be written). Shared by the local engine and
//! `--engine mpi`, so neither command module reaches into the other.

use crate::engine::run::repeated::Observer;
use crate::history::Report;
use crate::machine::environment;
use crate::output::json;
use crate::output::workload::{self as report, ConfigResult};
use crate::record::header::Header;
use crate::record::workload::{self as record, MigrationRecord, WorkloadRecord};
use crate::run::Failure;
use crate::workloads::{RunRecord as WorkloadRun, WorkloadInfo};
use std::path::PathBuf;
use std::time::Duration;

/// What a workload's report starts as, before any run: the command, the
/// machine and the settings (local and MPI runs alike).
pub(crate) struct ReportStart<'a> {
    pub info: &'a WorkloadInfo,
    pub runs: u32,
    pub duration: Option<Duration>,
    pub timeout: Duration,
    pub processes: Vec<String>,
    pub parameters: serde_json::Value,
    pub migrations: Vec<MigrationRecord>,
    pub environment: environment::Environment,
}

impl ReportStart<'_> {
    /// The report, with no configuration yet.
    pub(crate) fn report(self) -> WorkloadRecord {
        WorkloadRecord {
            header: Header {
                schema: record::SCHEMA.into(),
                ipcmark_version: env!("CARGO_PKG_VERSION").into(),
                build: json::build::current(),
                started_at: crate::output::recorder::now_rfc3339(),
                finished_at: None,
                complete: false,
                command_line: std::env::args().collect(),
                environment: (&self.environment).into(),
            },
            workload: self.info.id.into(),
            figure: report::figure_info(self.info),
            settings: record::WorkloadSettings {
                runs: self.runs,
                duration_ms: self.duration.map(|d| d.as_secs_f64() * 1e3),
                timeout_ms: self.timeout.as_secs_f64() * 1e3,
                processes: self.processes,
                parameters: self.parameters,
                migrations: self.migrations,
            },
            load: None,
            configurations: Vec::new(),
        }
    }
}

/// Where a workload's report goes after every run: `--json` and the history.
/// A place that cannot be written is warned about once and given up, and
/// the workload goes on (as `ipcmark run`'s recorder does); the command
/// then fails at the end ([`Sink::unsaved`]).
pub(crate) struct Sink {
    json: Option<PathBuf>,
    history: Option<crate::history::RunWriter>,
    unsaved: usize,
}

impl Sink {
    /// Opens the history (unless `--no-save`) with the report as it starts.
    pub(crate) fn open(
        json: Option<PathBuf>,
        db: Option<&std::path::Path>,
        no_save: bool,
        rep: &WorkloadRecord,
    ) -> Result<Sink, Failure> {
        let history = crate::run::save::writer(db, no_save, Report::Workload(rep))?;
        Ok(Sink {
            json,
            history,
            unsaved: 0,
        })
    }

    /// Writes the report as it stands to every place still kept.
    pub(crate) fn save(&mut self, rep: &WorkloadRecord) {
        if let Some(path) = &self.json
            && let Err(e) = json::write_atomic(path, rep)
        {
            let why = format!("cannot write {}: {e}", path.display());
            self.json = None;
            self.give_up(&why);
        }
        if let Some(w) = &mut self.history
            && let Err(e) = w.save(Report::Workload(rep))
        {
            self.history = None;
            self.give_up(&e.to_string());
        }
    }

    fn give_up(&mut self, why: &str) {
        eprintln!("warning: {why}; the report is no longer saved there, the workload goes on");
        self.unsaved += 1;
    }

    /// How many places the report could not be saved to (each was warned
    /// about); with any, the command fails.
    pub(crate) fn unsaved(&self) -> usize {
        self.unsaved
    }
}

/// The report saved after every run and once the command is over: the
/// configurations' runs so far in the report, the report in the sink.
/// A `repeated::Observer` of the workload's runs, local or across ranks.
pub(crate) struct Saver {
    pub rep: WorkloadRecord,
    pub sink: Sink,
    pub headline: crate::workloads::Headline,
    /// Each configuration, its runs filled in as they end.
    pub results: Vec<ConfigResult>,
}

impl Saver {
    fn record(&mut self) {
        self.rep.configurations = report::configurations(self.headline, &self.results);
        self.sink.save(&self.rep);
    }
}

impl Observer<WorkloadRun> for Saver {
    fn done(
        &mut self,
        config: usize,
        _: u32,
        result: &Result<WorkloadRun, String>,
    ) -> Result<(), String> {
        self.results[config].runs.push(result.clone());
        self.record();
        Ok(())
    }

    fn finished(
        &mut self,
        stopped: Option<i32>,
        load: Option<&crate::engine::run::load::FigureLoad>,
    ) -> Result<(), String> {
        // What the load did over the whole command, in the report's last save.
        self.rep.load = load.map(Into::into);
        self.rep.header.complete = stopped.is_none();
        self.rep.header.finished_at = Some(crate::output::recorder::now_rfc3339());
        self.record();
        Ok(())
    }
}
