//! The study behind `ipcmark tax`: what isolation costs. The same figures
//! are measured bare and under each layer (`layers`), one pass at a time:
//! in each pass every name is measured under every variant back to back,
//! in an order rotated by pass and name, so a layer's figure is measured
//! seconds from bare's and the machine's drift falls on every variant
//! alike. Each (name, variant, pass) is one run (`run::run`, one pass) in
//! a child forked for it, which first applies the layer to itself: the
//! figures' processes are its children, so both sides of every figure run
//! under the layer, and a filter or a namespace never reaches the parent.
//! The runs of each variant are joined per pass, merged over the passes,
//! and each layer compared with bare pass by pass (`analysis::tax`).
//!
//! Every layer is undone on every path: the cgroups are removed by the
//! parent when the study ends, fails or is stopped (and by `ipcmark clean`
//! after a kill), while filters, namespaces and speculation controls end
//! with the children that hold them.

pub mod layers;

use crate::analysis::tax::{LayerRuns, merge_passes, rows};
use crate::engine::os::interrupt;
use crate::engine::run::session::RunObserver;
use crate::output::recorder::now_rfc3339;
use crate::record::RunRecord;
use crate::record::tax::{LayerRecord, TAX_SCHEMA, TaxExplainRecord, TaxReport, ThrottlingRecord};
use crate::run::{Failure, RunRequest};
use crate::sys::process::{self, ExitStatus, Fork};
use layers::{Layer, Prepared};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The figures by default: the mechanisms and two system calls.
pub const DEFAULT_NAMES: &[&str] = &[
    "pipe",
    "unix-stream",
    "tcp",
    "udp",
    "shm-futex",
    "posix-mq",
    "syscall-getpid",
    "syscall-read-tmpfs",
];

/// Passes by default (3 with `--quick`).
pub const DEFAULT_PASSES: usize = 5;

/// The longest one name of one pass of one variant may take before its child is
/// killed (the run's own deadlines end a stuck figure long before).
const PASS_DEADLINE: Duration = Duration::from_secs(900);

/// What `ipcmark tax` is asked.
pub struct TaxRequest {
    /// Mechanisms and benchmarks (default [`DEFAULT_NAMES`]).
    pub names: Vec<String>,
    /// Message sizes (default 64).
    pub sizes: Vec<usize>,
    /// The layers, in the ledger's order.
    pub layers: Vec<Layer>,
    /// Passes: each name runs under each variant once per pass.
    pub passes: usize,
    /// Each pass at `--quick`'s budget.
    pub quick: bool,
    /// The significance level of each cell's test.
    pub alpha: f64,
    /// `--explain`: in the last pass, each figure's anatomy from a traced
    /// pass of this many round trips (operations), bare and under each
    /// layer, so a cell says which part grew.
    pub explain: Option<usize>,
}

/// A run observer that draws nothing: a pass's child says nothing of its
/// own, the parent says which pass runs.
struct Silent;
impl RunObserver for Silent {}

/// One variant: bare (`None`) or a prepared layer.
struct Variant {
    /// Its place in the request's layers (0 for bare, which has none).
    layer: usize,
    prepared: Option<Prepared>,
    runs: Vec<RunRecord>,
    failed: Option<String>,
    /// Why a figure has no anatomy under this variant (`--explain`).
    unexplained: Vec<String>,
}

/// Runs the study. `say` is told each (pass, name, variant) as it starts. Bad
/// names or sizes fail before anything is made (exit 2); a layer that
/// cannot be applied here is skipped with its reason, and one whose pass
/// fails to start is reported failed, the others going on.
pub fn tax(req: TaxRequest, say: &mut dyn FnMut(&str)) -> Result<TaxReport, Failure> {
    if req.passes == 0 {
        return Err(Failure::usage("--passes: at least 1"));
    }
    crate::run::plan::names::resolve(&req.names, false)?;
    interrupt::install_stop()
        .map_err(|e| Failure::run(format!("cannot install signal handlers: {e}")))?;
    let started_at = now_rfc3339();
    let dir = Scratch::new()?;
    // A child under a filter or in a user namespace cannot mount tracefs:
    // the study holds it mounted for them.
    let _tracefs = match req.explain {
        Some(_) => crate::machine::tracefs::hold_mounted().ok(),
        None => None,
    };
    let mut variants = vec![Variant {
        layer: 0,
        prepared: None,
        runs: Vec::new(),
        failed: None,
        unexplained: Vec::new(),
    }];
    let mut skipped: Vec<(usize, Prepared)> = Vec::new();
    for (i, layer) in req.layers.iter().enumerate() {
        let p = layers::prepare(layer, &format!("{}", i + 1));
        if p.applies() {
            variants.push(Variant {
                layer: i,
                prepared: Some(p),
                runs: Vec::new(),
                failed: None,
                unexplained: Vec::new(),
            });
        } else {
            skipped.push((i, p));
        }
    }
    let mut passes_done = 0;
    'passes: for pass in 0..req.passes {
        let n = variants.len();
        // This pass's run of each name, per variant, joined when it ends.
        let mut this_pass: Vec<Vec<RunRecord>> = vec![Vec::new(); n];
        for (f, name) in req.names.iter().enumerate() {
            // One name at a time under every variant, back to back: a
            // layer's figure is measured seconds from bare's, not a pass
            // apart, so the host's placement of the two CPUs, which flips
            // for minutes at a time and moves a ping-pong by a third, is
            // mostly the same for both. The order rotates by pass and name.
            for k in 0..n {
                let v = (k + pass + f) % n;
                if variants[v].failed.is_some() {
                    continue;
                }
                let label = variants[v]
                    .prepared
                    .as_ref()
                    .map_or("bare".to_string(), |p| p.name.clone());
                say(&format!(
                    "pass {} of {}: {name}: {label}",
                    pass + 1,
                    req.passes
                ));
                let out = dir.path.join(format!("v{v}-p{pass}-f{f}.json"));
                let piece = Piece {
                    name,
                    layer: variants[v].prepared.as_ref(),
                    out: &out,
                    explain: req.explain.filter(|_| pass + 1 == req.passes),
                };
                match one_pass(&req, &piece) {
                    Ok((run, unexplained)) => {
                        this_pass[v].push(run);
                        variants[v].unexplained.extend(unexplained);
                    }
                    Err(PassError::Layer(e)) => variants[v].failed = Some(e),
                    Err(PassError::Run(e)) => {
                        if v == 0 {
                            return Err(Failure::run(format!(
                                "the bare pass {} of {name}: {e}",
                                pass + 1
                            )));
                        }
                        variants[v].failed = Some(e);
                    }
                }
                // A pass cut short is left out whole: every variant keeps
                // the same passes, so they pair.
                if interrupt::stop_requested().is_some() {
                    break 'passes;
                }
            }
        }
        for (v, runs) in this_pass.into_iter().enumerate() {
            if variants[v].failed.is_none()
                && let Some(run) = joined(runs)
            {
                variants[v].runs.push(run);
            }
        }
        passes_done += 1;
    }
    let report = ledger(&req, started_at, passes_done, variants, skipped);
    drop(dir);
    report
}

/// The report from each variant's runs; removes the cgroups.
fn ledger(
    req: &TaxRequest,
    started_at: String,
    passes_done: usize,
    variants: Vec<Variant>,
    skipped: Vec<(usize, Prepared)>,
) -> Result<TaxReport, Failure> {
    let build = crate::output::json::build::current();
    let mut variants = variants.into_iter();
    let bare = variants.next().expect("bare is the first variant");
    let mut unexplained: Vec<String> = bare
        .unexplained
        .iter()
        .map(|u| format!("bare: {u}"))
        .collect();
    let stopped = interrupt::stop_requested();
    let bare_merged = match (merge_passes(&bare.runs), stopped) {
        (Some(m), _) => Some(m),
        // Stopped before bare's first pass ended: the layers are said, and
        // there is no row.
        (None, Some(_)) => None,
        (None, None) => return Err(Failure::run("no bare pass ended")),
    };
    let mut records: Vec<(usize, LayerRecord, Result<RunRecord, String>)> = Vec::new();
    for v in variants {
        let p = v.prepared.expect("a layer variant is prepared");
        let index = v.layer;
        let merged = match (&v.failed, merge_passes(&v.runs)) {
            (Some(e), _) => Err(format!("failed: {e}")),
            (None, Some(m)) => Ok(m),
            (None, None) => Err("no pass ended".into()),
        };
        let mut record = layer_record(&p, v.failed.as_deref());
        finish_layer(p, &mut record);
        unexplained.extend(
            v.unexplained
                .iter()
                .map(|u| format!("{}: {u}", record.name)),
        );
        records.push((index, record, merged));
    }
    for (i, p) in skipped {
        let mut record = layer_record(&p, None);
        record.status = "skipped".into();
        records.push((i, record, Err("not applied here".into())));
    }
    records.sort_by_key(|r| r.0);
    let runs: Vec<LayerRuns<'_>> = records
        .iter()
        .filter(|(_, l, _)| l.status != "skipped")
        .map(|(i, l, m)| LayerRuns {
            name: &l.name,
            runs: m.as_ref().map_err(Clone::clone),
            per_rule: req.layers.get(*i).and_then(Layer::argument_rules),
        })
        .collect();
    let rows = bare_merged
        .as_ref()
        .map_or_else(Vec::new, |b| rows(b, &runs, req.alpha, &build));
    let (host, kernel) = match &bare_merged {
        Some(b) => (
            b.header.environment.hostname.clone(),
            b.header.environment.kernel.clone(),
        ),
        None => (proc_text("hostname"), proc_text("osrelease")),
    };
    Ok(TaxReport {
        schema: TAX_SCHEMA.into(),
        build,
        host,
        kernel,
        started_at,
        ended_at: now_rfc3339(),
        passes: req.passes,
        passes_done,
        alpha: req.alpha,
        mitigations: layers::mitigations(),
        layers: records.into_iter().map(|(_, l, _)| l).collect(),
        rows,
        stopped,
        explain: req.explain.map(|round_trips| TaxExplainRecord {
            round_trips,
            pass: req.passes,
            unexplained,
        }),
    })
}

/// /proc/sys/kernel/NAME, trimmed ("" where unreadable).
fn proc_text(name: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// A layer's record before its cgroup is read and removed.
fn layer_record(p: &Prepared, failed: Option<&str>) -> LayerRecord {
    let mut reasons = p.reasons.clone();
    let status = match failed {
        Some(e) => {
            reasons.push(e.to_string());
            "failed"
        }
        None if p.whole() => "applied",
        None => "partial",
    };
    LayerRecord {
        name: p.name.clone(),
        status: status.into(),
        how: p.how.clone(),
        reasons,
        seccomp_rules: p.filter.as_ref().map(|f| f.rules()),
        cgroup_version: p.cgroup_version().map(str::to_string),
        throttling: None,
    }
}

/// Reads a layer's throttling and removes its cgroup (a failure to remove
/// it is said in its reasons, and `ipcmark clean` removes it later).
fn finish_layer(mut p: Prepared, record: &mut LayerRecord) {
    if let Some(c) = p.cgroup.take() {
        if let Ok(t) = c.throttling() {
            record.throttling = Some(ThrottlingRecord {
                periods: t.periods,
                throttled_periods: t.throttled_periods,
                throttled_ns: t.throttled_ns,
            });
        }
        if let Err(e) = c.remove() {
            record.reasons.push(format!(
                "its cgroup could not be removed ({e}): ipcmark clean"
            ));
        }
    }
}

/// One pass's runs of each name under one variant as one run: the first's
/// header with every run's figures.
fn joined(runs: Vec<RunRecord>) -> Option<RunRecord> {
    let mut runs = runs.into_iter();
    let mut all = runs.next()?;
    for r in runs {
        all.results.extend(r.results);
    }
    Some(all)
}

/// One child's share of a pass: one name under one variant.
struct Piece<'a> {
    /// The mechanism, benchmark or group it measures.
    name: &'a str,
    /// The layer it applies first (none for bare).
    layer: Option<&'a Prepared>,
    /// Where its run's report goes (`.why` and `.unexplained` beside it).
    out: &'a Path,
    /// `--explain`'s round trips, in the last pass.
    explain: Option<usize>,
}

/// Why a pass gave no run.
enum PassError {
    /// The layer could not be applied in the pass's child.
    Layer(String),
    /// The run failed or its child died.
    Run(String),
}

/// One name of one pass under one variant: a child applies the layer (if
/// any), runs the name for one pass and writes its report to `out`.
fn one_pass(req: &TaxRequest, piece: &Piece<'_>) -> Result<(RunRecord, Vec<String>), PassError> {
    let out = piece.out;
    let why = out.with_extension("why");
    let unexplained = out.with_extension("unexplained");
    let _ = std::fs::remove_file(out);
    let _ = std::fs::remove_file(&why);
    let _ = std::fs::remove_file(&unexplained);
    let pid = match process::fork().map_err(|e| PassError::Run(format!("fork: {e}")))? {
        Fork::Child => process::exit_now(child(req, piece)),
        Fork::Parent(pid) => pid,
    };
    let status = wait(pid)?;
    let said = std::fs::read_to_string(&why).unwrap_or_default();
    match status {
        ExitStatus::Code(0) => {}
        ExitStatus::Code(LAYER_FAILED) => return Err(PassError::Layer(said.trim().to_string())),
        ExitStatus::Code(c) => {
            return Err(PassError::Run(if said.trim().is_empty() {
                format!("its run ended with exit code {c}")
            } else {
                said.trim().to_string()
            }));
        }
        ExitStatus::Signal(s) => {
            return Err(PassError::Run(format!(
                "its run was killed by {}",
                interrupt::signal_name(s)
            )));
        }
    }
    let text = std::fs::read_to_string(out)
        .map_err(|e| PassError::Run(format!("its report {}: {e}", out.display())))?;
    let run = serde_json::from_str(&text)
        .map_err(|e| e.to_string())
        .and_then(|v| RunRecord::from_value(v).map_err(|e| e.to_string()))
        .map_err(|e| PassError::Run(format!("its report: {e}")))?;
    let unexplained = std::fs::read_to_string(&unexplained)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    Ok((run, unexplained))
}

/// The exit code of a pass's child that could not apply its layer.
const LAYER_FAILED: i32 = 3;

/// Waits for a pass's child, with a deadline. A stop request (Ctrl-C
/// reaches the whole group; a SIGTERM may reach only this process) is
/// passed on to the child once, which then ends its run as a stopped one.
fn wait(pid: libc::pid_t) -> Result<ExitStatus, PassError> {
    let start = Instant::now();
    let mut passed_on = false;
    loop {
        if let (Some(sig), false) = (interrupt::stop_requested(), passed_on) {
            let _ = process::kill(pid, sig);
            passed_on = true;
        }
        match process::try_wait(pid) {
            Ok(Some(s)) => return Ok(s),
            Ok(None) => {}
            Err(e) => return Err(PassError::Run(format!("waiting for its child: {e}"))),
        }
        if start.elapsed() > PASS_DEADLINE {
            process::kill_and_reap(pid);
            return Err(PassError::Run(format!(
                "its run took more than {} s and was killed",
                PASS_DEADLINE.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A pass's child: applies the layer, then runs the pass (in a child of its
/// own where the layer made a PID namespace, so that the run is inside it).
/// Returns the exit code.
fn child(req: &TaxRequest, piece: &Piece<'_>) -> i32 {
    let (out, explain) = (piece.out, piece.explain);
    let note = |text: &str| {
        let _ = std::fs::write(out.with_extension("why"), text);
    };
    // Should the study die (kill -9), its pass ends as a stopped run, which
    // releases what it made.
    let _ = process::set_parent_death_signal(libc::SIGTERM);
    if let Some(p) = piece.layer {
        if let Err(e) = layers::apply(p) {
            note(&e);
            return LAYER_FAILED;
        }
        if layers::needs_fork(p) {
            // The tracepoints name a task by its pid outside the namespace,
            // the run knows it by its pid inside: no anatomy is made there
            // rather than one of the wrong tasks.
            if explain.is_some() {
                let _ = std::fs::write(
                    out.with_extension("unexplained"),
                    "every figure: not in a PID namespace (the tracepoints name tasks by their \
                     pid outside it)\n",
                );
            }
            return match process::fork() {
                Ok(Fork::Child) => {
                    let _ = process::set_parent_death_signal(libc::SIGTERM);
                    process::exit_now(measure(req, piece.name, out, &note, None))
                }
                Ok(Fork::Parent(pid)) => loop {
                    match process::wait_blocking(pid) {
                        Ok(ExitStatus::Code(c)) => break c,
                        Ok(ExitStatus::Signal(s)) => break 128 + s,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                            // The run inside is its namespace's init: only
                            // a signal it handles reaches it.
                            if let Some(sig) = interrupt::stop_requested() {
                                let _ = process::kill(pid, sig);
                            }
                            continue;
                        }
                        Err(e) => {
                            note(&format!("waiting in the PID namespace: {e}"));
                            break 1;
                        }
                    }
                },
                Err(e) => {
                    note(&format!("fork into the PID namespace: {e}"));
                    LAYER_FAILED
                }
            };
        }
    }
    measure(req, piece.name, out, &note, explain)
}

/// Runs `name` for one pass of the request and writes its report to `out`; with
/// `explain`, each figure's anatomy goes into the report, and why a figure
/// has none into `out`'s `.unexplained` beside it.
fn measure(
    req: &TaxRequest,
    name: &str,
    out: &Path,
    note: &dyn Fn(&str),
    explain: Option<usize>,
) -> i32 {
    let mut run = RunRequest::of(vec![name.to_string()], req.sizes.clone());
    run.budget.quick = req.quick;
    // One pass of a run of `passes`: its share of the time and precision.
    run.budget.passes = Some(1);
    let full = if req.quick { 0.25 } else { 1.0 };
    run.budget.max_time = Some(Duration::from_secs_f64(full / req.passes as f64));
    run.budget.precision = Some(0.02 * (req.passes as f64).sqrt());
    run.sinks.no_save = true;
    match crate::run::run(run, &mut Silent) {
        Ok(mut outcome) => match explained(&mut outcome, out, explain) {
            Ok(text) => match std::fs::write(out, text) {
                Ok(()) => 0,
                Err(e) => {
                    note(&format!("cannot write {}: {e}", out.display()));
                    1
                }
            },
            Err(e) => {
                note(&format!("cannot encode its report: {e}"));
                1
            }
        },
        Err(f) => {
            note(&f.message);
            1
        }
    }
}

/// The run's report, with each figure's anatomy when `explain` asks (why a
/// figure has none written beside `out`).
fn explained(
    outcome: &mut crate::run::Outcome,
    out: &Path,
    explain: Option<usize>,
) -> Result<String, serde_json::Error> {
    if let Some(round_trips) = explain {
        let done = crate::studies::explain::explain_run(
            outcome,
            &crate::studies::explain::ExplainOptions {
                round_trips,
                ..Default::default()
            },
        );
        if !done.failed.is_empty() {
            let _ = std::fs::write(
                out.with_extension("unexplained"),
                done.failed.join("\n") + "\n",
            );
        }
    }
    serde_json::to_string(outcome.report())
}

/// The study's own directory for the passes' reports, removed on every
/// path (named `ipcmark-PID-tax` so that `ipcmark clean` judges it after a
/// kill).
struct Scratch {
    path: PathBuf,
}

impl Scratch {
    fn new() -> Result<Scratch, Failure> {
        use std::os::unix::fs::DirBuilderExt;
        let path = std::env::temp_dir().join(format!("ipcmark-{}-tax", process::getpid()));
        // Its own, new and private: a directory someone made there first is
        // refused, so no one else can hand a pass a report.
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| Failure::run(format!("cannot make {}: {e}", path.display())))?;
        Ok(Scratch { path })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
