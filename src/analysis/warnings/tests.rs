use super::*;
use crate::machine::cpu_latency::CpuLatencyState;
use crate::machine::environment;

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
    assert!(collect(&env, &[], &[]).is_empty());

    env.cpu_busy_percent_at_start = Some(60.0);
    env.frequency_governor = Some("powersave".into());
    env.cpu_latency = not_held(NotHeld::NotAsked("--cpu-latency off".into()));
    env.virtualization = "kvm".into();
    let kinds: Vec<&str> = collect(&env, &[], &[]).iter().map(Warning::kind).collect();
    assert_eq!(
        kinds,
        [
            "other-load",
            "frequency-scaling",
            "idle-states-allowed",
            "virtualized"
        ]
    );
    let text = collect(&env, &[], &[])[1].to_string();
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
    let w = collect(&env, &[], &[]);
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
        text.starts_with("the CPU wake-up latency was not held (--cpu-latency off), though no CPU")
            && text.contains("costs ≈ 5.0 µs here now")
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
    assert!(collect(&env, &[figure(None)], &[]).is_empty());
    let w = collect(
        &env,
        &[figure(Some(
            "SCHED_FIFO priority 20 refused (EPERM): ran under SCHED_OTHER, so no preemption",
        ))],
        &[],
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
            relative_ranges: Vec::new(),
        });
        f
    };
    // Pass 2 is a third faster for both figures: the machine, not them.
    let moved = [
        figure("pipe", &[3000.0, 2000.0, 3050.0]),
        figure("tcp", &[7000.0, 4700.0, 6950.0]),
    ];
    let w = collect(&env, &moved, &[]);
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
    assert!(collect(&env, &steady, &[]).is_empty());
    // One figure alone cannot tell the machine from itself.
    assert!(collect(&env, &moved[..1], &[]).is_empty());
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
            pass: 4,
            worst: 0.4723,
            typical: 0.094,
        },
        Warning::PrecisionMissed {
            figures: names.clone(),
            total: 101,
            target: 0.02,
            reached: 0.0412,
            worst: 1.398,
            passes: 5,
            took: Some(Duration::from_secs(129)),
            needs: Some((1000, Some(Duration::from_secs(36_000)))),
        },
        Warning::PrecisionMissed {
            figures: names.clone(),
            total: 101,
            target: 0.02,
            reached: 0.0412,
            worst: 1.398,
            passes: 1,
            took: None,
            needs: None,
        },
        Warning::PrecisionMissed {
            figures: names.clone(),
            total: 101,
            target: 0.005,
            reached: 0.1412,
            worst: 1.398,
            passes: 5,
            took: Some(Duration::from_secs(7200)),
            needs: None,
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
        all[8].line().contains("SCHED_FIFO was refused"),
        "{}",
        all[8].line()
    );
}

#[test]
fn the_passes_needed_follow_the_t_interval_of_their_medians() {
    // t(0.95, n − 1) · s / √n ≤ target at the least such n.
    for (spread, target) in [(0.05, 0.02), (0.10, 0.02), (0.03, 0.01), (0.2, 0.05)] {
        let n = passes_needed(spread, target).unwrap();
        let width = |n: usize| t_quantile(0.95, n - 1) * spread / (n as f64).sqrt();
        assert!(width(n) <= target, "{spread} {target}: {n}");
        assert!(n == 2 || width(n - 1) > target, "{spread} {target}: {n}");
        // Close to (1.96 · s / target)² once t is near its limit.
        let z = (1.96 * spread / target).powi(2);
        assert!(n as f64 >= z && (n as f64) < z + 6.0, "{n} against {z}");
    }
    // ±6.4% over 5 passes (the median figure) needs about 28 for ±2%.
    let a = Achieved {
        target: 0.02,
        achieved: 0.064,
        met: false,
        interval_ns: crate::stats::compare::Interval {
            low: 93.6,
            high: 106.4,
        },
        basis: Basis::Passes(5),
    };
    let s = pass_spread(&a).unwrap();
    assert!((s - 0.064 * 5f64.sqrt() / 2.776).abs() < 1e-3, "{s}");
    assert_eq!(passes_needed(s, 0.02), Some(28));
    // Twice the spread, about four times the passes.
    let twice = passes_needed(2.0 * s, 0.02).unwrap();
    assert!((100..=110).contains(&twice), "{twice}");
    // Steady medians need only the two an interval needs; out of reach says so.
    assert_eq!(passes_needed(0.0, 0.02), Some(2));
    assert_eq!(passes_needed(5.0, 0.01), None);
    assert_eq!(passes_needed(0.05, 0.0), None);
    // One pass's batches say nothing of the spread between passes.
    let batches = Achieved {
        basis: Basis::Batches(30),
        ..a
    };
    assert_eq!(pass_spread(&batches), None);
}

#[test]
fn more_passes_take_the_run_time_plus_the_repeated_passes_time() {
    let s = Duration::from_secs;
    // Pass 1 also holds the figures measured once (40 s); each later
    // pass repeats 20 s of figures.
    let took = [s(60), s(19), s(21), s(20), s(20)];
    assert_eq!(time_for(20, &took), Some(s(140) + s(20) * 15));
    assert_eq!(time_for(5, &took), None);
    assert_eq!(time_for(20, &took[..1]), None);
    assert_eq!(minutes(s(45)), "45 s");
    assert_eq!(minutes(s(126)), "2.1 min");
    assert_eq!(minutes(s(860)), "14 min");
}

/// A ping-pong figure of `passes.len()` passes whose medians are
/// `passes` and whose interval over them is `achieved` (target ±2%).
fn measured(name: &'static str, medians: &[f64], ranges: &[f64]) -> FigureResult {
    use crate::engine::run::figure::{Facts, PassFacts};
    use crate::stats::{LatencyHistogram, Summary};
    let mut f = FigureResult::new(name, Facts::PingPong, 64);
    let mut hist = LatencyHistogram::new();
    hist.record(100);
    f.outcome = Outcome::Ok(Box::new(crate::engine::measure::Measurement {
        iterations: 10,
        samples_ns: medians.to_vec(),
        summary: Summary::of(medians).unwrap(),
        precision: crate::engine::run::passes::pass_precision(medians, 0.02),
        loop_overhead_ns: 0.0,
        clock_overhead_ns: 0.0,
        latency: hist.percentiles().unwrap(),
        verified_round_trips: 0,
        histogram: None,
    }));
    f.passes = Some(PassFacts {
        count: medians.len(),
        medians_ns: medians.to_vec(),
        drift_corrected_medians_ns: Vec::new(),
        relative_ranges: ranges.to_vec(),
    });
    f
}

#[test]
fn a_spread_every_pass_shows_is_the_figure_a_pass_that_stands_out_is_a_disturbance() {
    let env = quiet_machine();
    let steady = [100.0, 100.5, 99.8, 100.2, 100.1];
    // Wide tails in every pass: the figure's distribution, nothing to say.
    let tails = measured("pipe", &steady, &[0.6, 0.5, 0.7, 0.55, 0.65]);
    assert!(collect(&env, &[tails], &[]).is_empty());
    // Pass 3 scattered five times as much as the others: disturbed.
    let hit = measured("pipe", &steady, &[0.08, 0.1, 0.5, 0.09, 0.1]);
    let calm = measured("tcp", &steady, &[0.08, 0.1, 0.12, 0.09, 0.1]);
    let w = collect(&env, &[calm, hit], &[]);
    assert_eq!(w.len(), 1, "{w:?}");
    let Warning::HighSpread {
        figures,
        pass,
        worst,
        typical,
    } = &w[0]
    else {
        panic!("{w:?}")
    };
    assert_eq!(
        (figures.as_slice(), *pass),
        (&["pipe 64".to_string()][..], 3)
    );
    assert_eq!((*worst, *typical), (0.5, 0.095));
    assert!(w[0].line().contains("pass 3 50% vs 10%"), "{}", w[0].line());
    // A small spread standing out is still small; one pass has no other.
    assert_eq!(disturbed_pass(&[0.01, 0.01, 0.2]), None);
    assert_eq!(disturbed_pass(&[0.9]), None);
    assert_eq!(disturbed_pass(&[0.05, 0.6]), Some((2, 0.6, 0.05)));
}

#[test]
fn a_missed_precision_says_once_what_it_reached_and_the_passes_that_reach_the_target() {
    let env = quiet_machine();
    let s = Duration::from_secs;
    let took = [s(40), s(20), s(20), s(20), s(20)];
    // Medians scattered ±5% (sd over mean) in every figure: none meets ±2%.
    let wide = [95.0, 105.0, 100.0, 94.0, 106.0];
    let figures: Vec<FigureResult> = (0..10).map(|_| measured("pipe", &wide, &[])).collect();
    // (They move together, so the machine's speed change is kept too.)
    let w: Vec<Warning> = collect(&env, &figures, &took)
        .into_iter()
        .filter(Warning::printed)
        .collect();
    assert_eq!(w.len(), 1, "{w:?}");
    let Warning::PrecisionMissed {
        figures: missed,
        total,
        reached,
        passes,
        took: spent,
        needs,
        ..
    } = &w[0]
    else {
        panic!("{w:?}")
    };
    assert_eq!((missed.len(), *total, *passes), (10, 10, 5));
    assert_eq!(*spent, Some(s(120)));
    let Outcome::Ok(m) = &figures[0].outcome else {
        panic!("{:?}", figures[0].outcome)
    };
    let a = pass_spread(&m.precision.unwrap()).unwrap();
    let n = passes_needed(a, 0.02).unwrap();
    assert!((*reached - 0.066).abs() < 0.01, "{reached}");
    assert_eq!(*needs, Some((n, Some(s(120) + s(20) * (n - 5) as u32))));
    let line = w[0].line();
    assert!(
        line.starts_with("median figure ±6.")
            && line.contains(" in 2.0 min (0 of 10 within ±2%)")
            && line.contains(&format!("±2% for 9 in 10 needs about {n} passes, ")),
        "{line}"
    );
    // Nine in ten met: the target is reached as sized, nothing to say.
    let steady = [100.0, 100.5, 99.8, 100.2, 100.1];
    let mut most: Vec<FigureResult> = (0..9).map(|_| measured("tcp", &steady, &[])).collect();
    most.push(measured("pipe", &wide, &[]));
    assert!(
        !collect(&env, &most, &took)
            .iter()
            .any(|w| w.kind() == "precision-missed")
    );
    // One pass: no spread between passes to size from.
    let mut one = measured("pipe", &wide, &[]);
    if let Outcome::Ok(m) = &mut one.outcome {
        m.precision =
            crate::engine::models::sampling::assess(&[1.0, 2.0, 3.0, 4.0, 5.0, 9.0], 0.02);
    }
    let w = collect(&env, &[one], &[]);
    assert!(
        w[0].line().ends_with(": more --passes narrow it"),
        "{}",
        w[0].line()
    );
}

#[test]
fn conditions_the_user_cannot_change_are_kept_not_printed() {
    let mut env = quiet_machine();
    env.virtualization = "kvm".into();
    let w = collect(&env, &[], &[]);
    assert_eq!(w.len(), 1);
    assert!(!w[0].printed());
    assert!(!printed_kind("speed-changed") && printed_kind("other-load"));
}
