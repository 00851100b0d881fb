//! The run's JSON report as a [`RunObserver`]: rewritten after every step,
//! so a run that is stopped or fails late keeps every figure measured
//! before it; warnings read from the figures as measured; cost models and
//! completion once the run is over.
//!
//! A place the report cannot be written to (a full disk, a history that
//! fails) is said once on stderr and given up, and the run goes on: its
//! figures are still measured and shown, and the run says at the end that
//! not all was saved ([`Recorder::unsaved`]) instead of losing the table.

use crate::analysis::warnings::{self, Warning};
use crate::engine::run::figure::FigureResult;
use crate::engine::run::placement_probe::{ProbeAt, ProbeSample};
use crate::engine::run::session::RunObserver;
use crate::machine::doctor::{self, Sample};
use crate::machine::environment::Environment;
use crate::machine::sysroot::SysRoot;
use crate::output::json;
use crate::record::RunRecord;
use crate::record::doctor::PassChecksRecord;
use crate::record::placement::{PairProbeRecord, PlacementProbeRecord, ProbeSampleRecord};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Keeps the report of a run and writes it to `path` (if any) as it grows.
pub struct Recorder {
    /// The report so far.
    pub report: RunRecord,
    /// The machine the report's `environment` records, as the warnings read it.
    environment: Environment,
    /// The warnings the figures gave, once measured.
    pub warnings: Vec<Warning>,
    /// How long each pass took (summed over load levels), and when the
    /// pass under way started: the precision warning sizes more passes by it.
    pass_times: Vec<Duration>,
    pass_clock: Option<(usize, Instant)>,
    path: Option<PathBuf>,
    sink: Option<Box<dyn ReportSink>>,
    /// Why each place given up could not be written, in the order they failed.
    unsaved: Vec<String>,
    /// The checks taken over each pass, if asked for.
    passes: Option<PassChecker>,
}

/// Takes the checks of what can change over each pass: the counters at a
/// pass's start, then at its end (the next pass's start, or the level's
/// end), and the checks of [`doctor::PER_PASS`] over that window.
struct PassChecker {
    root: SysRoot,
    cpus: Vec<usize>,
    /// The level now running, with `--load-sweep`.
    level: Option<usize>,
    /// The pass now running: its level, number and counters at its start.
    open: Option<(Option<usize>, usize, Sample)>,
}

impl PassChecker {
    /// Ends the pass now running, if any, into `report`.
    fn close(&mut self, report: &mut RunRecord) {
        let Some((level, pass, before)) = self.open.take() else {
            return;
        };
        let after = Sample::read_now(&self.root);
        let checks = doctor::examine_pass(&self.root, &self.cpus, &before, &after);
        report
            .pass_checks
            .get_or_insert_with(Vec::new)
            .push(PassChecksRecord {
                level,
                pass,
                checks: checks.iter().map(Into::into).collect(),
            });
    }
}

/// Something else that keeps the report as it grows (the run history):
/// given the whole report each time the recorder saves it.
pub trait ReportSink {
    /// The report after a step (results so far), or once the run is over
    /// (`complete`, `finished_at`, warnings and cost models filled in).
    fn saved(&mut self, report: &RunRecord) -> Result<(), String>;
}

impl Recorder {
    /// A recorder of `report` (no results yet), whose machine is
    /// `environment`, saving to `path`.
    pub fn new(report: RunRecord, environment: Environment, path: Option<PathBuf>) -> Recorder {
        Recorder {
            report,
            environment,
            warnings: Vec::new(),
            pass_times: Vec::new(),
            pass_clock: None,
            path,
            sink: None,
            unsaved: Vec::new(),
            passes: None,
        }
    }

    /// The recorder that also checks the machine over each pass, reading
    /// it under `root` for a run on `cpus`.
    pub fn with_pass_checks(mut self, root: SysRoot, cpus: Vec<usize>) -> Recorder {
        self.passes = Some(PassChecker {
            root,
            cpus,
            level: None,
            open: None,
        });
        self
    }

    /// The recorder that also hands the report to `sink` at every save.
    pub fn with_sink(mut self, sink: Box<dyn ReportSink>) -> Recorder {
        self.sink = Some(sink);
        self
    }

    fn records(&mut self, results: &[FigureResult]) {
        self.report.results = results.iter().map(json::run::figure).collect();
    }

    /// Writes the report to every place still kept. A place that fails is
    /// warned about once, on stderr, and not written again: the run goes on.
    fn save(&mut self) {
        if let Some(path) = &self.path
            && let Err(e) = json::write_atomic(path, &self.report)
        {
            let why = format!("cannot write {}: {e}", path.display());
            self.path = None;
            self.give_up(why);
        }
        if let Some(sink) = &mut self.sink
            && let Err(why) = sink.saved(&self.report)
        {
            self.sink = None;
            self.give_up(why);
        }
    }

    /// Adds the time of the pass under way, if any, to its pass's total.
    fn end_pass(&mut self) {
        if let Some((pass, start)) = self.pass_clock.take() {
            if self.pass_times.len() < pass {
                self.pass_times.resize(pass, Duration::ZERO);
            }
            self.pass_times[pass - 1] += start.elapsed();
        }
    }

    /// Replaces the report with `report`, a command's additions to the
    /// finished run, and saves it everywhere still kept.
    pub fn amend(&mut self, report: RunRecord) {
        self.report = report;
        self.save();
    }

    fn give_up(&mut self, why: String) {
        eprintln!("warning: {why}; the report is no longer saved there, the run goes on");
        self.unsaved.push(why);
    }

    /// Why the report could not be saved everywhere it was to go: empty
    /// when every save succeeded. A run with any is a failed run.
    pub fn unsaved(&self) -> &[String] {
        &self.unsaved
    }
}

impl RunObserver for Recorder {
    fn level_started(&mut self, level: usize, _levels: usize, _label: &str) {
        if let Some(p) = &mut self.passes {
            p.level = Some(level);
        }
    }

    fn pass_started(&mut self, pass: usize, _passes: usize) {
        self.end_pass();
        if let Some(p) = &mut self.passes {
            p.close(&mut self.report);
            let at = Sample::read_now(&p.root);
            p.open = Some((p.level, pass, at));
        }
        // Started after the checks' reading, which is not the pass's time.
        self.pass_clock = Some((pass.max(1), Instant::now()));
    }

    fn recorded(&mut self, results: &[FigureResult]) -> Result<(), String> {
        self.records(results);
        self.save();
        Ok(())
    }

    fn measured(&mut self, results: &[FigureResult]) {
        self.end_pass();
        // A level's passes are over.
        if let Some(p) = &mut self.passes {
            p.close(&mut self.report);
        }
        self.warnings = warnings::collect(&self.environment, results, &self.pass_times);
        self.report.warnings = self.warnings.iter().map(Into::into).collect();
    }

    fn placement_probed(
        &mut self,
        cpus: (usize, usize),
        at: ProbeAt,
        probe: &Result<ProbeSample, String>,
    ) {
        let rec = self
            .report
            .placement_probe
            .get_or_insert_with(|| PlacementProbeRecord {
                // The run's own pair comes first (its start); a map's
                // pairs only after it.
                cpus: [cpus.0, cpus.1],
                start: None,
                passes: Vec::new(),
                end: None,
                pairs: Vec::new(),
                clock_ns: 0.0,
                took_ns: 0,
                class: None,
                failed: None,
            });
        let sample = match probe {
            Ok(s) => {
                rec.clock_ns = rec.clock_ns.max(s.clock_ns);
                rec.took_ns += s.took_ns;
                Some(ProbeSampleRecord {
                    median_ns: s.median_ns,
                    p10_ns: s.p10_ns,
                    p90_ns: s.p90_ns,
                })
            }
            Err(why) => {
                rec.failed.get_or_insert_with(|| why.clone());
                None
            }
        };
        match at {
            ProbeAt::Start => rec.start = sample,
            ProbeAt::BeforePass(_) => rec.passes.push(sample),
            ProbeAt::End => rec.end = sample,
            ProbeAt::Pair => rec.pairs.extend(sample.map(|probe| PairProbeRecord {
                cpus: [cpus.0, cpus.1],
                probe,
            })),
        }
    }

    fn finished(&mut self, results: &[FigureResult], stopped: Option<i32>) -> Result<(), String> {
        if let Some(p) = &mut self.passes {
            p.close(&mut self.report);
        }
        // Said once the last probe is in: a move before the end is one too.
        self.warnings.retain(|w| w.kind() != "placement-moved");
        if let Some(probe) = &mut self.report.placement_probe {
            use crate::analysis::placement;
            let first = probe.in_order().first().map(|(_, s)| s.median_ns);
            probe.class = first.map(|ns| placement::class(ns).to_string());
            self.warnings.extend(placement::moved(probe));
        }
        self.report.warnings = self.warnings.iter().map(Into::into).collect();
        self.records(results);
        // A map's figures are one mechanism at many pairs: its matrices, not
        // a cost model across them.
        self.report.map = crate::analysis::map::summarise(&self.report);
        if self.report.map.is_none() {
            self.report.cost_models = crate::analysis::cost_model::fit(&self.report.results);
        }
        crate::analysis::level::apply(&mut self.report);
        self.report.header.complete = stopped.is_none();
        self.report.header.finished_at = Some(now_rfc3339());
        self.save();
        Ok(())
    }
}

/// The time now, as the reports write it.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::measure::Budget;
    use crate::machine::cpu_latency::CpuLatencyState;
    use crate::machine::environment;
    use std::cell::Cell;
    use std::rc::Rc;

    fn machine() -> Environment {
        environment::collect(
            CpuLatencyState {
                requested_us: None,
                not_held: None,
                wakeup: Err("not measured".into()),
            },
            None,
        )
    }

    fn report() -> RunRecord {
        RunRecord {
            header: crate::record::header::Header {
                schema: crate::record::SCHEMA.into(),
                ipcmark_version: "test".into(),
                build: json::build::current(),
                started_at: now_rfc3339(),
                finished_at: None,
                complete: false,
                command_line: vec!["ipcmark".into(), "run".into()],
                environment: (&machine()).into(),
            },
            checks: None,
            pass_checks: None,
            placement_probe: None,
            verification: None,
            level: None,
            remote: None,
            settings: crate::record::Settings {
                sizes: vec![64],
                client_cpu: None,
                server_cpu: None,
                rt_priority: None,
                peer: crate::record::Peer::Process,
                quick: true,
                passes: 1,
                budget: (&Budget::tiny()).into(),
                placement_note: None,
                cpu_latency_us: None,
                load: None,
                load_sweep: None,
                preset: None,
                scores: None,
                map: None,
            },
            results: Vec::new(),
            warnings: Vec::new(),
            cost_models: Vec::new(),
            map: None,
        }
    }

    /// A sink that counts its saves and fails from save number `fail_at` on.
    struct Counting {
        calls: Rc<Cell<usize>>,
        fail_at: usize,
    }

    impl ReportSink for Counting {
        fn saved(&mut self, _: &RunRecord) -> Result<(), String> {
            self.calls.set(self.calls.get() + 1);
            if self.calls.get() >= self.fail_at {
                Err("history h.sqlite: database or disk is full".into())
            } else {
                Ok(())
            }
        }
    }

    fn recorder_with(json: Option<PathBuf>, fail_at: usize) -> (Recorder, Rc<Cell<usize>>) {
        let calls = Rc::new(Cell::new(0));
        let sink = Counting {
            calls: calls.clone(),
            fail_at,
        };
        (
            Recorder::new(report(), machine(), json).with_sink(Box::new(sink)),
            calls,
        )
    }

    #[test]
    fn a_sink_that_fails_is_given_up_once_and_the_run_goes_on() {
        let (mut r, calls) = recorder_with(None, 2);
        for _ in 0..3 {
            assert_eq!(r.recorded(&[]), Ok(()));
        }
        assert_eq!(r.finished(&[], None), Ok(()));
        // Saved once, failed once, never asked again.
        assert_eq!(calls.get(), 2);
        assert_eq!(r.unsaved(), ["history h.sqlite: database or disk is full"]);
        assert!(r.report.header.complete, "the report still finished");
    }

    #[test]
    fn a_json_file_that_cannot_be_written_is_given_up_and_the_sink_kept() {
        let dir = tempfile::tempdir().unwrap();
        // A directory that does not exist: every write fails.
        let path = dir.path().join("gone").join("r.json");
        let (mut r, calls) = recorder_with(Some(path.clone()), usize::MAX);
        for _ in 0..3 {
            assert_eq!(r.recorded(&[]), Ok(()));
        }
        assert_eq!(r.finished(&[], None), Ok(()));
        assert_eq!(calls.get(), 4, "the history is saved at every step");
        assert_eq!(r.unsaved().len(), 1, "{:?}", r.unsaved());
        assert!(
            r.unsaved()[0].starts_with(&format!("cannot write {}", path.display())),
            "{:?}",
            r.unsaved()
        );
    }

    #[test]
    fn each_pass_is_checked_from_its_start_to_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::at(dir.path());
        let stat = |steal: u64| {
            let p = dir.path().join("proc");
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(
                p.join("stat"),
                format!(
                    "cpu  0 0 0 0 0 0 0 0\ncpu0 0 0 0 {} 0 0 0 {steal}\n",
                    100 + steal
                ),
            )
            .unwrap();
        };
        let mut r = Recorder::new(report(), machine(), None).with_pass_checks(root, vec![0]);
        stat(0);
        r.pass_started(1, 2);
        r.pass_started(2, 2);
        stat(50);
        r.measured(&[]);
        assert_eq!(r.finished(&[], None), Ok(()));
        let passes = r.report.pass_checks.as_ref().unwrap();
        assert_eq!(passes.len(), 2, "{passes:?}");
        assert_eq!((passes[0].pass, passes[1].pass), (1, 2));
        let steal = |i: usize| {
            passes[i]
                .checks
                .iter()
                .find(|c| c.id == "steal-time")
                .unwrap()
                .status
        };
        use crate::record::doctor::CheckStatus;
        assert_eq!(steal(0), CheckStatus::Pass);
        assert_eq!(steal(1), CheckStatus::Fail, "{passes:?}");
    }

    #[test]
    fn a_run_saved_everywhere_has_nothing_unsaved() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let (mut r, calls) = recorder_with(Some(path.clone()), usize::MAX);
        assert_eq!(r.recorded(&[]), Ok(()));
        assert_eq!(r.finished(&[], None), Ok(()));
        assert!(r.unsaved().is_empty());
        assert_eq!(calls.get(), 2);
        let back: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back["complete"], true);
    }

    /// The probe source faked: a run whose probe moves between passes says
    /// so once, in its report, with the class of the first probe.
    #[test]
    fn a_probe_that_moves_between_passes_is_said_once() {
        let sample = |ns: f64| {
            Ok(ProbeSample {
                median_ns: ns,
                p10_ns: ns * 0.97,
                p90_ns: ns * 1.03,
                clock_ns: 0.1,
                took_ns: 2_000_000,
            })
        };
        let mut r = Recorder::new(report(), machine(), None);
        r.placement_probed((0, 1), ProbeAt::Start, &sample(62.0));
        r.placement_probed((0, 1), ProbeAt::BeforePass(2), &sample(64.0));
        r.placement_probed((0, 1), ProbeAt::BeforePass(3), &Err("a load".into()));
        r.placement_probed((0, 1), ProbeAt::BeforePass(4), &sample(380.0));
        r.placement_probed((0, 1), ProbeAt::End, &sample(385.0));
        r.measured(&[]);
        assert_eq!(r.finished(&[], None), Ok(()));
        let probe = r.report.placement_probe.as_ref().unwrap();
        assert_eq!(probe.passes.len(), 3);
        assert!(probe.passes[1].is_none());
        assert_eq!(probe.failed.as_deref(), Some("a load"));
        assert_eq!(probe.class.as_deref(), Some("shared last-level cache"));
        let moved: Vec<_> = r
            .report
            .warnings
            .iter()
            .filter(|w| w.kind == "placement-moved")
            .collect();
        assert_eq!(moved.len(), 1, "{:?}", r.report.warnings);
        assert!(
            moved[0]
                .message
                .contains("64 ns (before pass 2) to 380 ns (before pass 4)"),
            "{}",
            moved[0].message
        );
    }
}
