//! Typed warnings about conditions that make figures less trustworthy, each
//! telling the user what to do about it. Derived from the environment and the
//! results; printed after the table and saved in the JSON.

use crate::engine::os::environment::{Environment, NotHeld};
use crate::engine::os::wakeup::WakeupCost;
use crate::engine::run::figure::{FigureResult, Mode, Outcome};
use std::fmt;

/// Busy share of all CPUs at start above which other load is reported, percent.
const BUSY_LIMIT_PERCENT: f64 = 10.0;
/// Relative range of samples ((max − min) / median) above which a figure is flagged.
const SPREAD_LIMIT: f64 = 0.25;

/// Largest move of the whole machine from one pass to another (the largest
/// pass factor over the smallest, minus 1) before it is reported.
const PASS_SHIFT_LIMIT: f64 = 0.10;

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
    /// Samples of these figures varied widely.
    HighSpread {
        /// "mechanism size" of each such figure.
        figures: Vec<String>,
        /// The largest relative range among them.
        worst: f64,
    },
    /// The median of these figures is not known as precisely as asked
    /// (`--precision`) within the time allowed (`--max-time`).
    PrecisionMissed {
        /// "mechanism size" of each such figure.
        figures: Vec<String>,
        /// The target, a fraction of the median.
        target: f64,
        /// The widest half-interval among them, a fraction of the median.
        worst: f64,
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
        }
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
            Warning::HighSpread { figures, worst } => format!(
                "{} figure(s) had samples spread over {:.0}% of the median (worst {:.0}%: {}): \
                 rerun when idle",
                figures.len(),
                SPREAD_LIMIT * 100.0,
                worst * 100.0,
                first_few(figures, 1)
            ),
            Warning::PrecisionMissed {
                figures,
                target,
                worst,
            } => format!(
                "{} figure(s) not within ±{}% (worst ±{}%: {}): more --passes, or a quieter machine",
                figures.len(),
                crate::record::units::percent(*target),
                crate::record::units::percent(*worst),
                first_few(figures, 1)
            ),
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
            Warning::HighSpread { figures, worst } => write!(
                f,
                "{} figure(s) had samples spread over more than {:.0}% of their median (worst {:.0}%: {}); \
                 rerun them, on an idle machine or with more --samples",
                figures.len(),
                SPREAD_LIMIT * 100.0,
                worst * 100.0,
                first_few(figures, 4)
            ),
            Warning::PrecisionMissed {
                figures,
                target,
                worst,
            } => write!(
                f,
                "{} figure(s) did not reach the precision target: their 95% interval (over their pass medians; \
                 with one pass, over its samples) is wider than ±{}% (worst ±{}%: {}); where the passes \
                 disagree, more --passes narrow it and more time per pass (--max-time) does not; or run on a \
                 quieter machine",
                figures.len(),
                crate::record::units::percent(*target),
                crate::record::units::percent(*worst),
                first_few(figures, 4)
            ),
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
        }
    }
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

/// The warnings that apply to this run.
pub fn collect(env: &Environment, results: &[FigureResult]) -> Vec<Warning> {
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
    let mut spread: Vec<(String, f64)> = results
        .iter()
        .filter_map(|r| match &r.outcome {
            // Periodic and score figures are one run each: their slices
            // differ by what happened during the run, which more --samples
            // cannot fix (the score table shows its spread); one-way samples
            // are single messages or windows, whose spread is the figure
            // itself (min / max), not a sign of noise.
            Outcome::Ok(m)
                if matches!(r.mode(), Mode::PingPong | Mode::Op | Mode::Event)
                    && m.summary.relative_range() > SPREAD_LIMIT =>
            {
                Some((figure_name(r), m.summary.relative_range()))
            }
            _ => None,
        })
        .collect();
    if !spread.is_empty() {
        spread.sort_by(|a, b| b.1.total_cmp(&a.1));
        w.push(Warning::HighSpread {
            worst: spread[0].1,
            figures: spread.into_iter().map(|(n, _)| n).collect(),
        });
    }
    let mut missed: Vec<(String, f64, f64)> = results
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Ok(m) => m
                .precision
                .filter(|p| !p.met && p.achieved.is_finite())
                .map(|p| (figure_name(r), p.achieved, p.target)),
            _ => None,
        })
        .collect();
    if !missed.is_empty() {
        missed.sort_by(|a, b| b.1.total_cmp(&a.1));
        w.push(Warning::PrecisionMissed {
            worst: missed[0].1,
            target: missed[0].2,
            figures: missed.into_iter().map(|(n, ..)| n).collect(),
        });
    }
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
mod tests {
    use super::*;
    use crate::engine::os::environment::{self, CpuLatencyState};

    /// A run that held a limit of 0 µs.
    fn held() -> CpuLatencyState {
        CpuLatencyState {
            requested_us: Some(0),
            not_held: None,
            wakeup: Err("not measured: held".into()),
        }
    }

    /// A run that held none, and measured a wake-up of 5 µs.
    fn not_held(why: NotHeld) -> CpuLatencyState {
        CpuLatencyState {
            requested_us: Some(0),
            not_held: Some(why),
            wakeup: Ok(WakeupCost {
                cpus: [0, 1],
                round_trips: 200,
                blocking_round_trip_ns: 12_000.0,
                busy_round_trip_ns: 2_000.0,
                deep_idle_entries: Some(180),
            }),
        }
    }

    /// This machine's environment with nothing to warn about.
    fn quiet_machine() -> Environment {
        let mut env = environment::collect(held(), None);
        env.cpu_busy_percent_at_start = Some(0.0);
        env.frequency_governor = None;
        env.virtualization = "none".into();
        env
    }

    #[test]
    fn each_condition_gives_its_warning_and_a_clean_machine_none() {
        let mut env = environment::collect(held(), None);
        env.cpu_busy_percent_at_start = Some(2.0);
        env.frequency_governor = Some("performance".into());
        env.virtualization = "none".into();
        assert!(collect(&env, &[]).is_empty());

        env.cpu_busy_percent_at_start = Some(60.0);
        env.frequency_governor = Some("powersave".into());
        env.cpu_latency = not_held(NotHeld::NotAsked("--cpu-latency off".into()));
        env.virtualization = "kvm".into();
        let kinds: Vec<&str> = collect(&env, &[]).iter().map(Warning::kind).collect();
        assert_eq!(
            kinds,
            [
                "other-load",
                "frequency-scaling",
                "idle-states-allowed",
                "virtualized"
            ]
        );
        let text = collect(&env, &[])[1].to_string();
        assert!(
            text.contains("powersave") && text.contains("performance"),
            "{text}"
        );
    }

    #[test]
    fn idle_states_say_why_no_limit_was_held_what_a_wake_up_costs_and_what_to_do() {
        let mut env = quiet_machine();
        assert_eq!(idle_states(&env), None);
        env.cpu_latency = not_held(NotHeld::Refused(
            "permission denied opening /dev/cpu_dma_latency".into(),
        ));
        let w = collect(&env, &[]);
        assert_eq!(w.len(), 1, "{w:?}");
        let text = w[0].to_string();
        assert!(
            text.starts_with(
                "deep idle states allowed (permission denied opening /dev/cpu_dma_latency): \
                 a cross-CPU wake-up costs ≈ 5.0 µs here"
            ) && text.contains("run as root or give access to /dev/cpu_dma_latency"),
            "{text}"
        );
        // Asked for none: no advice to ask.
        env.cpu_latency = not_held(NotHeld::NotAsked("--cpu-latency off".into()));
        let text = idle_states(&env).unwrap().to_string();
        assert!(
            text.contains("(--cpu-latency off)") && !text.contains("run as root"),
            "{text}"
        );
        // No deep idle state entered while measuring: it does not say they were.
        if let Ok(w) = &mut env.cpu_latency.wakeup {
            w.deep_idle_entries = Some(0);
        }
        let text = idle_states(&env).unwrap().to_string();
        assert!(
            text.starts_with(
                "the CPU wake-up latency was not held (--cpu-latency off), though no CPU"
            ) && text.contains("costs ≈ 5.0 µs here now")
                && !text.contains("deep idle states allowed"),
            "{text}"
        );
        // Not measured: says why instead of a figure.
        env.cpu_latency.wakeup = Err("one CPU allowed: no cross-CPU wake-up to measure".into());
        let text = idle_states(&env).unwrap().to_string();
        assert!(
            text.contains("not measured: one CPU allowed") && !text.contains('≈'),
            "{text}"
        );
    }

    #[test]
    fn a_figure_run_without_the_fifo_it_needs_says_what_it_loses() {
        use crate::engine::run::figure::{Facts, OpProof, Scheduling};
        let env = quiet_machine();
        let figure = |refused: Option<&str>| {
            let mut f = FigureResult::new("rhealstone-preemption", Facts::Op(None), 0);
            f.outcome = Outcome::Skipped("not measured here".into());
            f.facts = Facts::Op(Some(OpProof {
                kernel_calls: vec![],
                counter: None,
                events: None,
                baseline_ns: None,
                scheduling: Some(Scheduling {
                    policy: if refused.is_some() {
                        "SCHED_OTHER"
                    } else {
                        "SCHED_FIFO"
                    },
                    base_priority: None,
                    fifo_refused: refused.map(String::from),
                }),
                findings: None,
            }));
            f
        };
        assert!(collect(&env, &[figure(None)]).is_empty());
        let w = collect(
            &env,
            &[figure(Some(
                "SCHED_FIFO priority 20 refused (EPERM): ran under SCHED_OTHER, so no preemption",
            ))],
        );
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].kind(), "no-realtime");
        let text = w[0].to_string();
        assert!(
            text.contains("rhealstone-preemption (no preemption)") && text.contains("CAP_SYS_NICE"),
            "{text}"
        );
    }

    #[test]
    fn passes_that_move_together_are_reported_as_a_change_of_speed() {
        use crate::engine::run::figure::PassFacts;
        let env = quiet_machine();
        let figure = |name: &'static str, medians: &[f64]| {
            let mut f = FigureResult::new(name, crate::engine::run::figure::Facts::PingPong, 64);
            f.passes = Some(PassFacts {
                count: medians.len(),
                medians_ns: medians.to_vec(),
                drift_corrected_medians_ns: Vec::new(),
            });
            f
        };
        // Pass 2 is a third faster for both figures: the machine, not them.
        let moved = [
            figure("pipe", &[3000.0, 2000.0, 3050.0]),
            figure("tcp", &[7000.0, 4700.0, 6950.0]),
        ];
        let w = collect(&env, &moved);
        assert_eq!(w.len(), 1, "{w:?}");
        let Warning::SpeedChanged { factors, figures } = &w[0] else {
            panic!("{w:?}")
        };
        assert_eq!(*figures, 2);
        assert!(
            factors[1] < 0.7 && factors[0] > 0.95 && factors[2] > 0.95,
            "{factors:?}"
        );
        assert!(w[0].to_string().contains("up to 5"), "{}", w[0]);
        // Passes within a few percent of each other: nothing to say.
        let steady = [
            figure("pipe", &[3000.0, 3050.0, 2980.0]),
            figure("tcp", &[7000.0, 7100.0, 6950.0]),
        ];
        assert!(collect(&env, &steady).is_empty());
        // One figure alone cannot tell the machine from itself.
        assert!(collect(&env, &moved[..1]).is_empty());
    }

    #[test]
    fn on_the_page_each_warning_is_one_line_that_fits_and_repeats_are_dropped() {
        let names: Vec<String> = (0..40).map(|i| format!("unix-seqpacket {i}K")).collect();
        let all = [
            Warning::OtherLoad {
                busy_percent: 100.0,
            },
            Warning::FrequencyScaling {
                governor: "schedutil".into(),
            },
            Warning::HighSpread {
                figures: names.clone(),
                worst: 47.23,
            },
            Warning::PrecisionMissed {
                figures: names.clone(),
                target: 0.02,
                worst: 1.398,
            },
            Warning::SpeedChanged {
                factors: vec![1.86, 0.68, 0.53, 2.76, 1.08],
                figures: 101,
            },
            Warning::Virtualized {
                hypervisor: "kvm".into(),
            },
            Warning::NoRealtime {
                figures: vec![
                    "rhealstone-preemption (no preemption)".into(),
                    "rhealstone-deadlock-break (no inversion)".into(),
                ],
            },
        ];
        for w in &all {
            let line = w.line();
            assert!(!line.contains('\n'), "{line}");
            // "warning: " and the line within 120 columns.
            assert!(
                line.chars().count() <= 111,
                "{} chars: {line}",
                line.chars().count()
            );
            // The JSON keeps the whole message.
            assert!(w.to_string().chars().count() >= line.chars().count(), "{w}");
        }
        assert!(
            all[6].line().contains("SCHED_FIFO was refused"),
            "{}",
            all[6].line()
        );
    }
}
