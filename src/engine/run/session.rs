//! The run: a plan's figures measured in order, in passes, with the stages
//! that must follow one another, in one place.
//!
//! ```text
//! for each pass 1..=N:
//!     for each step (one item alone, or a sweep of consecutive ping-pong items):
//!         measure its figures            observers: started, done
//!         pass 1: record them; a score figure normalises every score (R = S / H)
//!         later passes: merge into the first pass's figures
//!         observers: recorded(all figures so far)       (partial results saved)
//! observers: measured(figures as measured)              (warnings read them here)
//! correct the drift between passes (run::passes)
//! correct the figures measured under a load for its interrupt time (run::under_load)
//! observers: finished(final figures)                    (cost models, report)
//! ```
//!
//! A new stage of a run (say, holding a load during each figure) is one
//! more step of this loop, or one more observer: nothing outside this file
//! orders the stages.

use crate::engine::channel::Mechanism;
use crate::engine::models::oneway::OneWayPlan;
use crate::engine::models::periodic::{Model, Periodic, PeriodicSettings};
use crate::engine::models::rate::RatePlan;
use crate::engine::models::score::{ScoreSettings, Scored};
use crate::engine::op::Operation;
use crate::engine::os::interrupt;
use crate::engine::os::load::LoadPlan;
use crate::engine::os::objects::ObjectNamer;
use crate::engine::os::placement::SidePlacement;
use crate::engine::run::figure::{FigureResult, Mode, Outcome};
use crate::engine::run::load::Held;
use crate::engine::run::passes;
use crate::engine::run::placement_probe::{self, ProbeAt, ProbeSample};
use crate::engine::run::runner::{self, RunSettings};
use crate::engine::run::sweep;
use crate::engine::run::under_load;

/// One thing a run measures, with how it is timed.
#[derive(Clone)]
pub enum Item {
    /// An IPC mechanism by ping-pong at every size it runs at; `true`: cold buffers.
    PingPong(&'static dyn Mechanism, bool),
    /// An IPC mechanism streamed one way; `true`: cold buffers.
    Stream(&'static dyn Mechanism, bool),
    /// An IPC mechanism timed one way from a stamp in each message.
    OneWay(&'static dyn Mechanism, OneWayPlan),
    /// An IPC mechanism offered messages on a schedule at each rate of a
    /// curve, timed from their intended send.
    Rate(&'static dyn Mechanism, RatePlan),
    /// A benchmark timed in one process.
    Op(&'static dyn Operation),
    /// A benchmark of the periodic model, one figure per planned model.
    Periodic(&'static dyn Periodic),
    /// A benchmark of the score model: operations counted in a period.
    Scored(&'static dyn Scored),
    /// Figures whose peer the engine does not start (an agent on another
    /// host): the source measures each one and hands back its record. Held
    /// by the plan (and shared by its clones) for the run's length, so its
    /// state (a control connection) lives exactly as long as the run.
    External(std::sync::Arc<dyn External>),
}

/// Figures measured by something other than the engine's runner, whose
/// peer is out of the engine's reach (`remote`'s agent): the session still
/// orders, repeats, merges and reports them like its own.
pub trait External: Send + Sync {
    /// The id its figures are reported under.
    fn id(&self) -> &'static str;
    /// The timing model of its figures (ping-pong figures repeat in every pass).
    fn mode(&self) -> Mode;
    /// The sizes it runs at, from the requested ones.
    fn sizes(&self, requested: &[usize]) -> Vec<usize>;
    /// Measures one figure; never panics on a failure (it is in the result).
    fn measure(&self, size: usize, s: &RunSettings) -> FigureResult;
}

impl Item {
    /// The mechanism or benchmark id.
    pub fn id(&self) -> &'static str {
        match self {
            Item::PingPong(m, _) | Item::Stream(m, _) | Item::OneWay(m, _) | Item::Rate(m, _) => {
                m.info().id
            }
            Item::Op(b) => b.info().id,
            Item::Periodic(b) => b.info().id,
            Item::Scored(b) => b.info().id,
            Item::External(x) => x.id(),
        }
    }

    /// Whether it is measured in every pass: ping-pong figures and
    /// operations (their samples and histograms pool), and rate curves (a
    /// round per pass, so that a curve's rounds are spread over the run and
    /// the machine's slow spells fall on every curve alike). Periodic,
    /// one-way, stream and score figures are measured once: each already
    /// spans its own long window of time.
    pub fn repeats(&self) -> bool {
        match self {
            Item::PingPong(..) | Item::Op(_) | Item::Rate(..) => true,
            Item::External(x) => x.mode() == Mode::PingPong,
            _ => false,
        }
    }

    /// The figures it makes: the sizes of a mechanism (its fixed size, or
    /// `sizes`), one for an operation or a score, one per planned model of a
    /// periodic benchmark (by index).
    pub fn figures(&self, sizes: &[usize], periodic: &PeriodicSettings) -> Vec<usize> {
        match self {
            Item::PingPong(m, _) | Item::Stream(m, _) | Item::OneWay(m, _) | Item::Rate(m, _) => {
                runner::sizes_for(*m, sizes)
            }
            Item::Op(b) => vec![b.info().bytes],
            Item::Periodic(b) => (0..b.plan(periodic).len()).collect(),
            Item::Scored(_) => vec![0],
            Item::External(x) => x.sizes(sizes),
        }
    }
}

/// Everything a session runs: the items with their figures, and the
/// settings every figure shares.
pub struct Plan {
    /// Each item with its figures (sizes; a periodic benchmark's model indices).
    pub items: Vec<(Item, Vec<usize>)>,
    /// Placement, peer and budget of every figure (the whole budget: a pass
    /// takes its share, [`passes::pass_budget`]).
    pub settings: RunSettings,
    /// Passes of the repeated figures (at least 1).
    pub passes: usize,
    /// Settings of the periodic benchmarks.
    pub periodic: PeriodicSettings,
    /// Settings of the score benchmarks, and why SCHED_FIFO was refused;
    /// `None` when the plan has none.
    pub scores: Option<(ScoreSettings, Option<String>)>,
    /// The loads the figures are measured under, in order (`--load`: one;
    /// `--load-sweep`: one per level); each level measures its items with
    /// its load held.
    pub levels: Vec<Level>,
}

/// One load level of a run: its name, the load held during its figures
/// (none: no load stated), and the items it measures (indices of the
/// plan's: a load study measures some at its first level only).
#[derive(Debug, Clone)]
pub struct Level {
    /// The level's name (`no load`, `irq 4000 Hz`); empty for a run of one level.
    pub label: String,
    /// The load held during every figure of the level.
    pub load: Option<LoadPlan>,
    /// The plan's items this level measures, in plan order.
    pub items: Vec<usize>,
    /// Where this level's figures run, in place of the plan's placement
    /// (`ipcmark map`: one level per pair of CPUs); `None`: the plan's.
    pub placement: Option<PairPlacement>,
}

/// A level's own placement: each side's CPU and policy, and the NUMA node
/// its channels' pages are preferred on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairPlacement {
    /// Where the measuring side runs.
    pub client: SidePlacement,
    /// Where the peer runs.
    pub server: SidePlacement,
    /// The node the pages are preferred on (`None`: the kernel's first touch).
    pub home: Option<usize>,
}

impl Level {
    /// The one level of a run without a sweep: every item of `items`, under `load`.
    pub fn only(load: Option<LoadPlan>, items: usize) -> Level {
        Level {
            label: String::new(),
            load,
            items: (0..items).collect(),
            placement: None,
        }
    }
}

impl Plan {
    /// Figures the session measures in all, every pass and level counted.
    pub fn figure_count(&self) -> usize {
        self.levels
            .iter()
            .flat_map(|l| &l.items)
            .map(|&k| {
                let (item, f) = &self.items[k];
                f.len() * if item.repeats() { self.passes } else { 1 }
            })
            .sum()
    }
}

/// What is about to be measured, for a progress display.
#[derive(Debug, Clone, Copy)]
pub enum Started {
    /// One figure: its id, its size (a mechanism's), and whether it is one-way.
    Figure {
        /// Mechanism or benchmark id.
        id: &'static str,
        /// Message size of a mechanism's figure.
        size: Option<usize>,
        /// A one-way figure.
        oneway: bool,
    },
    /// A sweep of figures sampled together.
    Sweep {
        /// How many.
        figures: usize,
        /// The ids of its first and last mechanisms.
        first: &'static str,
        /// See `first`.
        last: &'static str,
    },
}

/// Something that follows a session: progress, the report saved after every
/// step, warnings. Every hook defaults to nothing. A hook that returns an
/// error ends the run (the error is the run's).
pub trait RunObserver {
    /// The session is about to measure `figures` figures (every pass's).
    fn planned(&mut self, _figures: usize) {}
    /// Level `level` (from 1) of `levels`, named `label`, starts (a run of
    /// several load levels, `--load-sweep`).
    fn level_started(&mut self, _level: usize, _levels: usize, _label: &str) {}
    /// Pass `pass` of `passes` starts.
    fn pass_started(&mut self, _pass: usize, _passes: usize) {}
    /// A figure or a sweep starts.
    fn started(&mut self, _what: Started) {}
    /// `n` figures were measured.
    fn done(&mut self, _n: usize) {}
    /// A step's figures were recorded or merged: `results` holds every
    /// figure so far, in plan order. A run stopped now keeps these.
    fn recorded(&mut self, _results: &[FigureResult]) -> Result<(), String> {
        Ok(())
    }
    /// Every pass has run (or the run was stopped): the figures as measured,
    /// before any correction across figures.
    fn measured(&mut self, _results: &[FigureResult]) {}
    /// The placement probe between `cpus` was taken `at` this point of
    /// the run (`placement_probe`).
    fn placement_probed(
        &mut self,
        _cpus: (usize, usize),
        _at: ProbeAt,
        _probe: &Result<ProbeSample, String>,
    ) {
    }
    /// The run is over: the final figures, and the signal that stopped it.
    fn finished(&mut self, _results: &[FigureResult], _stopped: Option<i32>) -> Result<(), String> {
        Ok(())
    }
}

/// What a session produced.
pub struct Session {
    /// Every figure, in plan order.
    pub results: Vec<FigureResult>,
    /// The signal that stopped the run early, if one did.
    pub stopped: Option<i32>,
}

/// Most figures one sweep interleaves. Results are saved after each sweep,
/// so this bounds what a stopped run loses (a sweep's figures are finished
/// together), while a sweep still spans several seconds of the machine's
/// drift.
const SWEEP_MAX_FIGURES: usize = 24;

/// What the run loop does next: plan items (by index) measured alone, or a
/// sweep of consecutive ones.
enum Step {
    Alone(usize),
    Sweep(Vec<usize>),
}

impl Step {
    fn first(&self) -> usize {
        match self {
            Step::Alone(k) => *k,
            Step::Sweep(ks) => ks[0],
        }
    }
}

/// Groups consecutive ping-pong mechanisms that may join a sweep into
/// sweeps of at most [`SWEEP_MAX_FIGURES`] figures (a mechanism's sizes stay
/// in one sweep, which may then hold more); the rest run alone, in order.
fn steps(items: &[(Item, Vec<usize>)], chosen: &[usize]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut group: Vec<usize> = Vec::new();
    let mut count = 0;
    for &k in chosen {
        let (item, sizes) = &items[k];
        let joins = matches!(*item, Item::PingPong(m, cold) if sweep::joins(m, cold));
        if !group.is_empty() && (!joins || count + sizes.len() > SWEEP_MAX_FIGURES) {
            steps.push(Step::Sweep(std::mem::take(&mut group)));
            count = 0;
        }
        if joins {
            group.push(k);
            count += sizes.len();
        } else {
            steps.push(Step::Alone(k));
        }
    }
    if !group.is_empty() {
        steps.push(Step::Sweep(group));
    }
    steps
}

/// Takes the placement probe before each pass and at the end, and hands
/// each to the observers.
struct Prober {
    /// The CPUs the line moves between; `None`: no probe (one CPU).
    cpus: Option<(usize, usize)>,
    /// Passes begun so far, across levels.
    passes: usize,
}

impl Prober {
    /// Before a pass; `loaded`: a load is held on the CPUs, and the probe
    /// would measure its work, not the placement.
    fn before_pass(&mut self, observers: &mut [&mut dyn RunObserver], loaded: bool) {
        self.passes += 1;
        // The first pass's probe is the run's start, taken before any load.
        let at = match self.passes {
            1 => return,
            n => ProbeAt::BeforePass(n),
        };
        if loaded {
            if let Some(cpus) = self.cpus {
                let not = Err("not taken while a load is held: the load's work would be \
                               measured, not the placement"
                    .to_string());
                observers
                    .iter_mut()
                    .for_each(|o| o.placement_probed(cpus, at, &not));
            }
            return;
        }
        self.probe(at, observers);
    }

    fn probe(&self, at: ProbeAt, observers: &mut [&mut dyn RunObserver]) {
        if let Some(cpus) = self.cpus {
            Self::probe_pair(cpus, at, observers);
        }
    }

    /// Probes `cpus` (the run's pair, or a level's own: a map's).
    fn probe_pair(cpus: (usize, usize), at: ProbeAt, observers: &mut [&mut dyn RunObserver]) {
        // A run being stopped ends now, with no probe between it and its end.
        if interrupt::stop_requested().is_some() {
            return;
        }
        let got = placement_probe::probe(cpus.0, cpus.1);
        observers
            .iter_mut()
            .for_each(|o| o.placement_probed(cpus, at, &got));
    }
}

/// Calls `f` on every observer, stopping at the first error.
fn each(
    observers: &mut [&mut dyn RunObserver],
    mut f: impl FnMut(&mut dyn RunObserver) -> Result<(), String>,
) -> Result<(), String> {
    observers.iter_mut().try_for_each(|o| f(&mut **o))
}

/// Runs `plan`: level by level, every pass, step by step, then the stages
/// after measuring. Observers see the figures of every level so far. An
/// observer's error ends the run with that error.
pub fn run(
    plan: &Plan,
    names: &ObjectNamer,
    observers: &mut [&mut dyn RunObserver],
) -> Result<Session, String> {
    let mut results: Vec<FigureResult> = Vec::new();
    let mut stopped = None;
    let figures = plan.figure_count();
    observers.iter_mut().for_each(|o| o.planned(figures));
    // The run's pair; a map (levels on pairs of their own, the run's
    // settings on one CPU) probes its first pair of two CPUs throughout.
    let first_pair = || {
        plan.levels.iter().find_map(|l| {
            let p = l.placement?;
            Some((p.client.cpu?, p.server.cpu?)).filter(|(c, s)| c != s)
        })
    };
    let mut prober = Prober {
        cpus: placement_probe::pair(plan.settings.client.cpu, plan.settings.server.cpu)
            .or_else(first_pair),
        passes: 0,
    };
    prober.probe(ProbeAt::Start, observers);
    for (k, level) in plan.levels.iter().enumerate() {
        if plan.levels.len() > 1 {
            observers
                .iter_mut()
                .for_each(|o| o.level_started(k + 1, plan.levels.len(), &level.label));
        }
        stopped = run_level(plan, level, names, observers, &mut results, &mut prober)?;
        if stopped.is_some() {
            break;
        }
    }
    if stopped.is_none() {
        prober.probe(ProbeAt::End, observers);
    }
    each(observers, |o| o.finished(&results, stopped))?;
    Ok(Session { results, stopped })
}

/// Measures `level`'s items with its load held, appending their figures to
/// `results` (the levels before it already there), and corrects them; the
/// signal that stopped the run, if one did. The corrections and the score
/// normalisation (R = S / H) are the level's own: each level has its
/// baseline, its passes and its load.
fn run_level(
    plan: &Plan,
    level: &Level,
    names: &ObjectNamer,
    observers: &mut [&mut dyn RunObserver],
    results: &mut Vec<FigureResult>,
    prober: &mut Prober,
) -> Result<Option<i32>, String> {
    let level_settings = match &level.placement {
        Some(p) => RunSettings {
            client: p.client,
            server: p.server,
            home: p.home,
            ..plan.settings.clone()
        },
        None => plan.settings.clone(),
    };
    let pass_settings = RunSettings {
        budget: passes::pass_budget(&plan.settings.budget, plan.passes),
        ..level_settings.clone()
    };
    let target = plan.settings.budget.precision.target;
    let steps = steps(&plan.items, &level.items);
    // The level's figures begin here in `results`.
    let base = results.len();
    // Where each step's figures sit in `results`, from the first pass.
    let mut first_slot: Vec<usize> = Vec::with_capacity(steps.len());
    // A level placed on a pair of its own (a map's) has that pair probed
    // once, before its load: the map's cache-line round trip beside its
    // figures.
    if let Some(pair) = level
        .placement
        .and_then(|p| Some((p.client.cpu?, p.server.cpu?)))
        .filter(|(c, s)| c != s)
    {
        Prober::probe_pair(pair, ProbeAt::Pair, observers);
    }
    // Started before the level's first figure; dropped (killed and reaped)
    // on every way out of this function.
    let mut load = match &level.load {
        Some(p) => Some(Held::start(p)?),
        None => None,
    };

    'passes: for pass in 1..=plan.passes {
        prober.before_pass(observers, load.is_some());
        observers
            .iter_mut()
            .for_each(|o| o.pass_started(pass, plan.passes));
        for (n, step) in steps.iter().enumerate() {
            if interrupt::stop_requested().is_some() {
                break 'passes;
            }
            let repeat = plan.items[step.first()].0.repeats();
            if pass == 1 {
                first_slot.push(results.len());
            } else if !repeat {
                continue;
            }
            let s = if repeat && plan.passes > 1 {
                &pass_settings
            } else {
                &level_settings
            };
            // A later pass measures again only the figures measured so far: one
            // skipped here stays skipped, one that failed is reported failed.
            let figures = run_step(plan, &steps[n], s, names, observers, load.as_mut(), |i| {
                pass == 1 || matches!(results[first_slot[n] + i].outcome, Outcome::Ok(_))
            })?;
            if pass > 1 && interrupt::stop_requested().is_some() {
                // A pass cut short says nothing more about its figures.
                break 'passes;
            }
            let pair = level
                .placement
                .and_then(|p| Some((p.client.cpu?, p.server.cpu?)));
            for (i, mut r) in figures {
                r.judge_resolution();
                r.pair = pair;
                if pass == 1 {
                    let scored = r.mode() == Mode::Score;
                    results.push(r);
                    if scored {
                        // R = S / H for every score once the baseline has run, in
                        // whatever order the tests were named.
                        normalise(&mut results[base..]);
                    }
                } else {
                    passes::merge(&mut results[first_slot[n] + i], r, pass, target);
                }
            }
            each(observers, |o| o.recorded(results))?;
        }
    }
    let stopped = interrupt::stop_requested();
    observers.iter_mut().for_each(|o| o.measured(results));
    passes::correct_between_passes(&mut results[base..]);
    under_load::correct_all(&mut results[base..]);
    Ok(stopped)
}

/// Runs with settings `s` the figures of `step` that `keep` (given each
/// one's index in the step) selects: each with its index, in order, fewer
/// if the run was asked to stop.
fn run_step(
    plan: &Plan,
    step: &Step,
    s: &RunSettings,
    names: &ObjectNamer,
    observers: &mut [&mut dyn RunObserver],
    mut load: Option<&mut Held>,
    keep: impl Fn(usize) -> bool,
) -> Result<Vec<(usize, FigureResult)>, String> {
    let k = match step {
        Step::Alone(k) => *k,
        Step::Sweep(ks) => {
            let (index, figures): (Vec<usize>, Vec<(&dyn Mechanism, usize)>) = ks
                .iter()
                .flat_map(|&k| match plan.items[k].0 {
                    Item::PingPong(m, _) => plan.items[k].1.iter().map(move |&z| (m, z)),
                    _ => unreachable!("steps() puts only ping-pong mechanisms in a sweep"),
                })
                .enumerate()
                .filter(|(i, _)| keep(*i))
                .unzip();
            if figures.is_empty() {
                return Ok(Vec::new());
            }
            let sweep = Started::Sweep {
                figures: figures.len(),
                first: figures[0].0.info().id,
                last: figures[figures.len() - 1].0.info().id,
            };
            observers.iter_mut().for_each(|o| o.started(sweep));
            let mark = load.as_deref_mut().map(Held::before).transpose()?;
            let mut out = sweep::run(&figures, s, names);
            if let (Some(h), Some(mark)) = (load.as_deref_mut(), &mark) {
                // The sweep's figures are sampled together: each gets the
                // sweep's record.
                let mut cpus: Vec<usize> = out.iter().flat_map(|f| f.cpus.clone()).collect();
                cpus.sort_unstable();
                cpus.dedup();
                let record = h.after(mark, &cpus)?;
                out.iter_mut().for_each(|f| f.load = Some(record.clone()));
            }
            observers.iter_mut().for_each(|o| o.done(out.len()));
            return Ok(index.into_iter().zip(out).collect());
        }
    };
    let (item, figure_sizes) = (&plan.items[k].0, &plan.items[k].1);
    // A periodic benchmark's figures, by index (`figure_sizes` holds 0..n).
    let models: Vec<Model> = match *item {
        Item::Periodic(b) => b.plan(&plan.periodic),
        _ => Vec::new(),
    };
    let mut out = Vec::with_capacity(figure_sizes.len());
    for (i, &size) in figure_sizes.iter().enumerate() {
        if interrupt::stop_requested().is_some() {
            break;
        }
        if !keep(i) {
            continue;
        }
        let started = Started::Figure {
            id: item.id(),
            size: matches!(
                item,
                Item::PingPong(..)
                    | Item::Stream(..)
                    | Item::OneWay(..)
                    | Item::Rate(..)
                    | Item::External(_)
            )
            .then_some(size),
            oneway: match item {
                Item::OneWay(..) => true,
                Item::External(x) => x.mode() == Mode::OneWay,
                _ => false,
            },
        };
        observers.iter_mut().for_each(|o| o.started(started));
        let mark = load.as_deref_mut().map(Held::before).transpose()?;
        let mut r = match *item {
            Item::PingPong(m, cold) => runner::run_figure(m, size, cold, s, names),
            Item::Stream(m, cold) => runner::run_stream_figure(m, size, cold, s, names),
            Item::OneWay(m, plan) => runner::run_oneway_figure(m, size, &plan, s, names),
            Item::Rate(m, ref plan) => runner::run_rate_figure(m, size, plan, s, names),
            Item::Op(b) => runner::run_op_figure(b, s, names),
            Item::Periodic(b) => runner::run_periodic_figure(b.info().id, &models[size], s),
            Item::Scored(b) => {
                let (ss, refused) = plan.scores.as_ref().expect("settings made for score tests");
                runner::run_score_figure(b, ss, refused.as_deref(), names)
            }
            Item::External(ref x) => x.measure(size, s),
        };
        if let (Some(h), Some(mark)) = (load.as_deref_mut(), &mark) {
            r.load = Some(h.after(mark, &r.cpus)?);
        }
        observers.iter_mut().for_each(|o| o.done(1));
        out.push((i, r));
    }
    Ok(out)
}

/// Fills R = S / H in every measured score figure from the baseline figure
/// of the same run (the first one measured), as rates so that a period a
/// little longer than planned does not count. Without a baseline, R stays null.
pub fn normalise(results: &mut [FigureResult]) {
    let baseline = results.iter().find_map(|r| match (&r.outcome, r.score()) {
        (Outcome::Ok(_), Some(f)) if f.is_baseline => Some((r.id, f.ops_per_s)),
        _ => None,
    });
    for r in results.iter_mut() {
        let ok = matches!(r.outcome, Outcome::Ok(_));
        if let Some(f) = r.score_mut() {
            match baseline {
                Some((id, h)) if ok && h > 0.0 => {
                    f.baseline = Some(id);
                    f.relative_to_baseline = Some(f.ops_per_s / h);
                }
                _ => {
                    f.baseline = None;
                    f.relative_to_baseline = None;
                }
            }
        }
    }
}
