//! Typed warnings about conditions that make figures less trustworthy, each
//! telling the user what to do about it. Derived from the environment and the
//! results; printed after the table and saved in the JSON.
//!
//! A warning is printed only where the user can do something about it: a
//! condition of the machine the user cannot change (a hypervisor, its
//! changes of speed between passes) is kept in the record ([`Warning::printed`]
//! is false) and left to the machine's checks, and a spread of samples is a
//! warning only where one pass scattered far more than the others (a
//! disturbance), not where every pass shows it (the figure's own tails).

use crate::engine::measure::{Achieved, Basis};
use crate::engine::run::figure::{FigureResult, Mode, Outcome};
use crate::machine::cpu_latency::NotHeld;
use crate::machine::environment::Environment;
use crate::machine::wakeup::WakeupCost;
use crate::stats::interval::t_quantile;
use crate::stats::median;
use std::fmt;
use std::time::Duration;

/// Busy share of all CPUs at start above which other load is reported, percent.
const BUSY_LIMIT_PERCENT: f64 = 10.0;
/// Relative range of one pass's samples ((max − min) / median) above which
/// that pass may be called scattered.
const SPREAD_LIMIT: f64 = 0.25;
/// How many times the typical spread of a figure's other passes one pass's
/// spread must reach to be called disturbed.
const DISTURBED_RATIO: f64 = 3.0;

/// Largest move of the whole machine from one pass to another (the largest
/// pass factor over the smallest, minus 1) before it is reported.
const PASS_SHIFT_LIMIT: f64 = 0.10;

/// Share of the figures the precision target is sized for: the run says
/// what it reached when more than the rest missed, and how many passes
/// would bring this share within the target.
const PRECISION_SHARE: f64 = 0.9;

/// Most passes an estimate names; past it the target is out of reach here.
const MAX_PASSES_ESTIMATE: usize = 1000;

/// Something about this run the reader should know.
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// Other work kept the CPUs busy when the run started.
    OtherLoad {
        /// Busy share of all CPUs, percent.
        busy_percent: f64,
    },
    /// A cpufreq governor other than `performance` changes the clock under load.
    FrequencyScaling {
        /// The governor.
        governor: String,
    },
    /// No CPU wake-up latency limit was held, so deep idle states are
    /// allowed: a CPU waking from one adds latency to every blocking hand-off.
    IdleStatesAllowed {
        /// Why no limit was held.
        not_held: NotHeld,
        /// A cross-CPU wake-up's cost here, or why it was not measured.
        wakeup: Result<WakeupCost, String>,
    },
    /// One pass of each of these figures scattered its samples far more
    /// than the figure's other passes: something else ran during it.
    HighSpread {
        /// "mechanism size" of each such figure, the worst first.
        figures: Vec<String>,
        /// The worst figure's disturbed pass (from 1).
        pass: usize,
        /// That pass's relative range of samples.
        worst: f64,
        /// The median relative range of the worst figure's other passes.
        typical: f64,
    },
    /// More than a tenth of the figures are not known as precisely as
    /// asked (`--precision`): what the run reached, and the passes that
    /// would reach the target.
    PrecisionMissed {
        /// "mechanism size" of each figure that missed, the widest first.
        figures: Vec<String>,
        /// Figures with an interval, met or not.
        total: usize,
        /// The target, a fraction of the centre.
        target: f64,
        /// The median half-interval over all `total` figures, a fraction.
        reached: f64,
        /// The widest half-interval, a fraction.
        worst: f64,
        /// Passes the intervals rest on (1: batches of one pass).
        passes: usize,
        /// How long the passes took, where timed.
        took: Option<Duration>,
        /// Passes that would bring [`PRECISION_SHARE`] of the figures within
        /// the target ([`passes_needed`]), and how long a run of them would
        /// take ([`time_for`]); `None` with one pass (no pass-to-pass
        /// spread to size from) or past [`MAX_PASSES_ESTIMATE`].
        needs: Option<(usize, Option<Duration>)>,
    },
    /// The figures of some passes moved together: the machine's speed
    /// changed during the run.
    SpeedChanged {
        /// Each pass's factor (its figures over their typical value,
        /// geometric mean), in the order the passes ran.
        factors: Vec<f64>,
        /// Figures the factors are read from.
        figures: usize,
    },
    /// Running in a virtual machine.
    Virtualized {
        /// The hypervisor.
        hypervisor: String,
    },
    /// Benchmarks that need SCHED_FIFO ran under SCHED_OTHER: it was refused.
    NoRealtime {
        /// Each such figure, with what it loses.
        figures: Vec<String>,
    },
    /// The placement probe moved beyond its own spread during the run: the
    /// host placed the two CPUs differently for some passes
    /// ([`crate::analysis::placement::moved`]).
    PlacementMoved {
        /// The CPUs the probe bounced its line between.
        cpus: [usize; 2],
        /// Where the probe before the move was taken, and its round trip (ns).
        from: (String, f64),
        /// Where the probe after it was taken, and its round trip (ns).
        to: (String, f64),
    },
}

impl Warning {
    /// Short stable name, for the JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Warning::OtherLoad { .. } => "other-load",
            Warning::FrequencyScaling { .. } => "frequency-scaling",
            Warning::IdleStatesAllowed { .. } => "idle-states-allowed",
            Warning::HighSpread { .. } => "high-spread",
            Warning::PrecisionMissed { .. } => "precision-missed",
            Warning::SpeedChanged { .. } => "speed-changed",
            Warning::Virtualized { .. } => "virtualized",
            Warning::NoRealtime { .. } => "no-realtime",
            Warning::PlacementMoved { .. } => "placement-moved",
        }
    }

    /// Whether it is printed after the page: false for a condition of the
    /// machine the user cannot change (a hypervisor, the speed it moves
    /// the machine at between passes), which the record keeps for the
    /// machine's checks and for `--long`.
    pub fn printed(&self) -> bool {
        printed_kind(self.kind())
    }

    /// The warning on one line of the compact page, with what to do: the
    /// JSON and `--long` keep the whole message (its [`Display`](fmt::Display)).
    /// Where the whole message is short already, it is the same.
    pub fn line(&self) -> String {
        match self {
            Warning::OtherLoad { busy_percent } => format!(
                "the CPUs were {busy_percent:.0}% busy before the run: other load scatters the figures; \
                 stop it, or --cpus to free CPUs"
            ),
            Warning::FrequencyScaling { governor } => format!(
                "CPU frequency governor '{governor}' moves the clock with load: set 'performance' for \
                 stable figures"
            ),
            // Short enough, and it says why no limit was held.
            Warning::IdleStatesAllowed { .. } => self.to_string(),
            Warning::HighSpread {
                figures,
                pass,
                worst,
                typical,
            } => format!(
                "{} figure(s) had one pass scattered ({}: pass {pass} {:.0}% vs {:.0}%): other work \
                 ran then; rerun idle",
                figures.len(),
                first_few(figures, 1),
                worst * 100.0,
                typical * 100.0,
            ),
            Warning::PrecisionMissed {
                figures,
                total,
                target,
                reached,
                passes,
                took,
                needs,
                ..
            } => {
                let target = crate::record::units::percent(*target);
                let head = format!(
                    "median figure ±{}%{} ({} of {total} within ±{target}%)",
                    crate::record::units::percent(*reached),
                    took.map(|t| format!(" in {}", minutes(t)))
                        .unwrap_or_default(),
                    total - figures.len(),
                );
                match needs {
                    Some((n, time)) => format!(
                        "{head}; ±{target}% for 9 in 10 needs about {n} passes{}",
                        time.map(|t| format!(", {}", minutes(t)))
                            .unwrap_or_default()
                    ),
                    None if *passes > 1 => format!(
                        "{head}; ±{target}% is out of reach here (over {MAX_PASSES_ESTIMATE} passes)"
                    ),
                    None => format!("{head}: more --passes narrow it"),
                }
            }
            Warning::SpeedChanged { factors, .. } => {
                let (lo, hi) = min_max(factors);
                format!(
                    "the machine's speed moved by up to {:.0}% over {} passes (factors {lo:.2} to \
                     {hi:.2}): the intervals include it",
                    (hi / lo - 1.0) * 100.0,
                    factors.len()
                )
            }
            Warning::Virtualized { hypervisor } => format!(
                "under a hypervisor ({hypervisor}): other guests move the speed between runs; \
                 compare within a run or back to back"
            ),
            Warning::NoRealtime { figures } => format!(
                "SCHED_FIFO was refused: {} figure(s) ran SCHED_OTHER ({}); root or \
                 CAP_SYS_NICE allows it",
                figures.len(),
                first_few(
                    &figures
                        .iter()
                        .map(|f| f.split(" (").next().unwrap_or(f).to_string())
                        .collect::<Vec<_>>(),
                    1
                )
            ),
            Warning::PlacementMoved { cpus, from, to } => format!(
                "the host moved CPUs {} and {}: cache-line round trip {:.0} ns ({}) → {:.0} ns ({}); \
                 the figures pool both placements",
                cpus[0], cpus[1], from.1, from.0, to.1, to.0
            ),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::OtherLoad { busy_percent } => write!(
                f,
                "the CPUs were {busy_percent:.0}% busy before the run started: other load inflates and scatters \
                 the figures; stop it, or pin ipcmark with --cpus to CPUs it does not use"
            ),
            Warning::FrequencyScaling { governor } => write!(
                f,
                "CPU frequency governor is '{governor}': the clock changes with load; for stable figures set \
                 'performance' (cpupower frequency-set -g performance)"
            ),
            Warning::IdleStatesAllowed { not_held, wakeup } => {
                let reason = not_held.reason();
                match wakeup {
                    // The kernel's counters say the CPUs stayed out of them:
                    // another process holds a limit, which may not last.
                    Ok(w) if w.deep_idle_entries == Some(0) => write!(
                        f,
                        "the CPU wake-up latency was not held ({reason}), though no CPU entered a deep \
                         idle state while ipcmark measured a wake-up (another process may be holding \
                         them off): a cross-CPU wake-up costs ≈ {:.1} µs here now, and more if they \
                         are allowed again",
                        w.wakeup_ns() / 1e3
                    )?,
                    Ok(w) => write!(
                        f,
                        "deep idle states allowed ({reason}): a cross-CPU wake-up costs ≈ {:.1} µs \
                         here, which every blocking hand-off between CPUs pays",
                        w.wakeup_ns() / 1e3
                    )?,
                    Err(why) => write!(
                        f,
                        "deep idle states allowed ({reason}): a CPU waking from one takes \
                         microseconds, which every blocking hand-off between CPUs pays (not \
                         measured: {why})"
                    )?,
                }
                match not_held {
                    NotHeld::Refused(_) => write!(
                        f,
                        "; run as root or give access to /dev/cpu_dma_latency to keep the CPUs out of them"
                    ),
                    NotHeld::NotAsked(_) => Ok(()),
                }
            }
            Warning::HighSpread {
                figures,
                pass,
                worst,
                typical,
            } => write!(
                f,
                "{} figure(s) had one pass whose samples spread far more than in their other passes \
                 (worst {}: pass {pass} spread over {:.0}% of its median, the other passes {:.0}%): \
                 something else ran during that pass; rerun them on an idle machine ({})",
                figures.len(),
                first_few(figures, 1),
                worst * 100.0,
                typical * 100.0,
                first_few(figures, 4)
            ),
            Warning::PrecisionMissed {
                figures,
                total,
                target,
                reached,
                worst,
                passes,
                took,
                needs,
            } => {
                let target = crate::record::units::percent(*target);
                write!(
                    f,
                    "{} of {total} figure(s) did not reach the precision target ±{target}%: the median \
                     figure's 95% interval is ±{}% (worst ±{}%: {}){}, over {} ",
                    figures.len(),
                    crate::record::units::percent(*reached),
                    crate::record::units::percent(*worst),
                    first_few(figures, 4),
                    took.map(|t| format!(" in {}", minutes(t)))
                        .unwrap_or_default(),
                    if *passes > 1 {
                        format!("{passes} pass medians")
                    } else {
                        "one pass's samples".into()
                    }
                )?;
                match needs {
                    Some((n, time)) => write!(
                        f,
                        "; from the spread of the pass medians, ±{target}% for 9 figures in 10 needs \
                         about {n} passes (--passes {n}){}; more time per pass (--max-time) does not \
                         narrow what moves between passes",
                        time.map(|t| format!(", a run of about {}", minutes(t)))
                            .unwrap_or_default()
                    ),
                    None if *passes > 1 => write!(
                        f,
                        "; from the spread of the pass medians, ±{target}% for 9 figures in 10 \
                         needs over {MAX_PASSES_ESTIMATE} passes: out of reach on this machine"
                    ),
                    None => write!(
                        f,
                        "; with one pass nothing says how much another would differ: more --passes \
                         narrow it, and a run of several says how many would reach the target"
                    ),
                }
            }
            Warning::SpeedChanged { factors, figures } => {
                let (lo, hi) = min_max(factors);
                write!(
                    f,
                    "the machine's speed changed during the run: from one pass to another, {figures} figures \
                     moved together by up to {:.0}% (pass factors {}); each figure's interval rests on its \
                     pass medians, so it includes this, and `ipcmark compare` tests between passes; for \
                     steadier figures run on a quieter machine",
                    (hi / lo - 1.0) * 100.0,
                    factors
                        .iter()
                        .map(|x| format!("{x:.2}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
            Warning::Virtualized { hypervisor } => write!(
                f,
                "running under a hypervisor ({hypervisor}): other guests change the machine's speed between \
                 runs; compare figures within one run, or runs taken back to back"
            ),
            Warning::NoRealtime { figures } => write!(
                f,
                "SCHED_FIFO was refused, so {} figure(s) ran under SCHED_OTHER and lose their meaning: {}; \
                 run as root or grant CAP_SYS_NICE",
                figures.len(),
                figures.join("; ")
            ),
            Warning::PlacementMoved { cpus, from, to } => write!(
                f,
                "the host moved CPUs {} and {} during the run: the round trip of a cache line between \
                 them went from {:.0} ns ({}) to {:.0} ns ({}), beyond the probe's own spread; the \
                 figures' passes were taken in both placements and are pooled, so their intervals \
                 include the move; compare runs of one placement (docs/trust.md, the placement probe)",
                cpus[0], cpus[1], from.1, from.0, to.1, to.0
            ),
        }
    }
}

/// Whether a warning of `kind` (its JSON name) is printed after the page
/// (and by `ipcmark show`): not `virtualized` nor `speed-changed`,
/// conditions of the machine the user cannot change, which the record
/// keeps.
pub fn printed_kind(kind: &str) -> bool {
    !matches!(kind, "virtualized" | "speed-changed")
}

/// A duration as a run's length reads: "45 s", "2.1 min", "14 min".
fn minutes(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.0} s")
    } else if s < 600.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.0} min", s / 60.0)
    }
}

/// The spread of a figure's pass medians (their standard deviation over
/// their mean) behind its interval `a`: `achieved · √n / t(0.95, n − 1)`,
/// the t interval read backwards; `None` for an interval of one pass's
/// samples, or one without a finite width.
pub fn pass_spread(a: &Achieved) -> Option<f64> {
    match a.basis {
        Basis::Passes(n) if n >= 2 && a.achieved.is_finite() => {
            Some(a.achieved * (n as f64).sqrt() / t_quantile(0.95, n - 1))
        }
        _ => None,
    }
}

/// The fewest passes whose 95% t interval would be within ±`target` for a
/// figure whose pass medians spread by `spread` (standard deviation over
/// mean): the least n ≥ 2 with `t(0.95, n − 1) · spread / √n ≤ target`, the
/// estimate n ≈ (t·s / target)² with t taken at n itself. `None` past
/// [`MAX_PASSES_ESTIMATE`] or for a target or spread that is not positive
/// and finite (a spread of 0 needs the 2 passes an interval needs).
pub fn passes_needed(spread: f64, target: f64) -> Option<usize> {
    if !(target > 0.0 && target.is_finite() && spread >= 0.0 && spread.is_finite()) {
        return None;
    }
    (2..=MAX_PASSES_ESTIMATE)
        .find(|&n| t_quantile(0.95, n - 1) * spread / (n as f64).sqrt() <= target)
}

/// How long a run of `passes` passes would take, from the time each pass
/// of this one took (`took`, in order): this run's time, and each further
/// pass as long as its repeated passes (the second on) took on average,
/// the first pass also holding the figures measured once. `None` without
/// two timed passes or for no more passes than were run.
pub fn time_for(passes: usize, took: &[Duration]) -> Option<Duration> {
    let run = took.len();
    if run < 2 || passes <= run {
        return None;
    }
    let repeated = took[1..].iter().sum::<Duration>() / (run - 1) as u32;
    Some(took.iter().sum::<Duration>() + repeated * (passes - run) as u32)
}

/// The pass of `ranges` (each pass's relative range of samples) that
/// scattered far more than the others: its number (from 1), its range and
/// the median of the others'; `None` under two passes or where no pass
/// stands out (over [`SPREAD_LIMIT`] and [`DISTURBED_RATIO`] times the others).
fn disturbed_pass(ranges: &[f64]) -> Option<(usize, f64, f64)> {
    if ranges.len() < 2 {
        return None;
    }
    let (k, worst) = ranges
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let others: Vec<f64> = ranges
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != k)
        .map(|(_, &v)| v)
        .collect();
    let typical = median(&others);
    (worst > SPREAD_LIMIT && worst > DISTURBED_RATIO * typical).then_some((k + 1, worst, typical))
}

/// The precision warning: where more than `1 − PRECISION_SHARE` of the
/// figures with an interval missed the target, what the run reached (the
/// median figure's half-interval) and the passes, with their time, that
/// would bring [`PRECISION_SHARE`] of them within it, sized from each
/// figure's pass-to-pass spread.
fn precision_missed(results: &[FigureResult], took: &[Duration]) -> Option<Warning> {
    let assessed: Vec<(String, Achieved)> = results
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Ok(m) => m
                .precision
                .filter(|p| p.achieved.is_finite())
                .map(|p| (figure_name(r), p)),
            _ => None,
        })
        .collect();
    let total = assessed.len();
    let mut missed: Vec<(String, f64)> = assessed
        .iter()
        .filter(|(_, p)| !p.met)
        .map(|(n, p)| (n.clone(), p.achieved))
        .collect();
    // The share is met when at most this many missed.
    let allowed = total - ((PRECISION_SHARE * total as f64).ceil() as usize).min(total);
    if missed.len() <= allowed {
        return None;
    }
    missed.sort_by(|a, b| b.1.total_cmp(&a.1));
    let target = assessed[0].1.target;
    let reached = median(&assessed.iter().map(|(_, p)| p.achieved).collect::<Vec<_>>());
    let passes = assessed
        .iter()
        .map(|(_, p)| match p.basis {
            Basis::Passes(n) => n,
            Basis::Batches(_) => 1,
        })
        .max()
        .unwrap_or(1);
    let mut spreads: Vec<f64> = assessed
        .iter()
        .filter_map(|(_, p)| pass_spread(p))
        .collect();
    spreads.sort_by(f64::total_cmp);
    let needs = (!spreads.is_empty())
        .then(|| {
            let k =
                ((PRECISION_SHARE * spreads.len() as f64).ceil() as usize).clamp(1, spreads.len());
            passes_needed(spreads[k - 1], target)
        })
        .flatten()
        .map(|n| (n, time_for(n, took)));
    Some(Warning::PrecisionMissed {
        worst: missed[0].1,
        figures: missed.into_iter().map(|(n, _)| n).collect(),
        total,
        target,
        reached,
        passes,
        took: (!took.is_empty()).then(|| took.iter().sum()),
        needs,
    })
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// The factor of each pass common to the figures measured in all of them
/// (`stats::drift` with passes as rounds), if the machine moved by more
/// than [`PASS_SHIFT_LIMIT`] between two of them.
fn speed_changed(results: &[FigureResult]) -> Option<Warning> {
    let (factors, members) = crate::engine::run::passes::pass_factors(results, |r| {
        r.passes.as_ref().map(|p| p.medians_ns.as_slice())
    })?;
    let (lo, hi) = min_max(&factors);
    (hi / lo - 1.0 > PASS_SHIFT_LIMIT).then_some(Warning::SpeedChanged {
        factors,
        figures: members.len(),
    })
}

/// The first `n` names, and an ellipsis if there are more.
fn first_few(figures: &[String], n: usize) -> String {
    figures
        .iter()
        .take(n)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ")
        + if figures.len() > n { ", …" } else { "" }
}

/// "mechanism size", naming a figure in a warning; the id alone for a
/// figure that moves no payload (an operation, a notification); a map's
/// figure with its pair ("pipe 64 at 0→1").
fn figure_name(r: &FigureResult) -> String {
    let name = match r.size {
        0 => r.id.to_string(),
        n => format!("{} {}", r.id, crate::record::units::format_size(n)),
    };
    match r.pair {
        Some((c, s)) => format!("{name} at {c}→{s}"),
        None => name,
    }
}

/// The warning of a run that held no CPU wake-up latency limit, with what
/// a wake-up costs here (`ipcmark workload` prints it too).
pub fn idle_states(env: &Environment) -> Option<Warning> {
    let state = &env.cpu_latency;
    Some(Warning::IdleStatesAllowed {
        not_held: state.not_held.clone()?,
        wakeup: state.wakeup.clone(),
    })
}

/// The warnings that apply to this run; `took` is how long each pass took,
/// in order (empty where not timed), from which the precision warning says
/// how long more passes would take.
pub fn collect(env: &Environment, results: &[FigureResult], took: &[Duration]) -> Vec<Warning> {
    let mut w = Vec::new();
    if let Some(busy) = env.cpu_busy_percent_at_start
        && busy > BUSY_LIMIT_PERCENT
    {
        w.push(Warning::OtherLoad { busy_percent: busy });
    }
    if let Some(g) = &env.frequency_governor
        && g != "performance"
    {
        w.push(Warning::FrequencyScaling {
            governor: g.clone(),
        });
    }
    w.extend(idle_states(env));
    let refused: Vec<String> = results
        .iter()
        .filter_map(|r| {
            let why = r
                .proof()
                .as_ref()?
                .scheduling
                .as_ref()?
                .fifo_refused
                .as_ref()?;
            // The reason ends with what the figure loses ("…, so <what>").
            let loses = why.rsplit_once(", so ").map_or(why.as_str(), |(_, l)| l);
            Some(format!("{} ({loses})", r.id))
        })
        .collect();
    if !refused.is_empty() {
        w.push(Warning::NoRealtime { figures: refused });
    }
    // Periodic, one-way, stream and score figures are measured once: no
    // other pass to hold a scattered one against.
    let mut disturbed: Vec<(String, usize, f64, f64)> = results
        .iter()
        .filter(|r| {
            matches!(r.outcome, Outcome::Ok(_))
                && matches!(r.mode(), Mode::PingPong | Mode::Op | Mode::Event)
        })
        .filter_map(|r| {
            let (pass, worst, typical) = disturbed_pass(&r.passes.as_ref()?.relative_ranges)?;
            Some((figure_name(r), pass, worst, typical))
        })
        .collect();
    if !disturbed.is_empty() {
        disturbed.sort_by(|a, b| b.2.total_cmp(&a.2));
        let (_, pass, worst, typical) = disturbed[0];
        w.push(Warning::HighSpread {
            pass,
            worst,
            typical,
            figures: disturbed.into_iter().map(|(n, ..)| n).collect(),
        });
    }
    w.extend(precision_missed(results, took));
    w.extend(speed_changed(results));
    if env.virtualization != "none" {
        w.push(Warning::Virtualized {
            hypervisor: env.virtualization.clone(),
        });
    }
    w
}

impl From<&Warning> for crate::record::summary::WarningRecord {
    fn from(w: &Warning) -> Self {
        crate::record::summary::WarningRecord {
            kind: w.kind().into(),
            message: w.to_string(),
        }
    }
}

#[cfg(test)]
mod tests;
