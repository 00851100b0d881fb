use super::*;
use crate::analysis::watch::tests::fixture;
use crate::record::summary::Segment;

fn need(size: usize) -> Need {
    Need {
        size_bytes: size,
        rate_per_s: None,
        p50_ns: None,
        p99_ns: None,
        cpu_per_msg_ns: None,
        cpus: None,
    }
}

fn runs(names: &[&str]) -> Vec<(i64, RunRecord)> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| (i as i64 + 1, fixture(n)))
        .collect()
}

fn run(need: Need, runs: &[(i64, RunRecord)]) -> AdviseReport {
    let host = runs[0].1.header.environment.hostname.clone();
    advise(&host, need, runs, runs[0].1.header.build.clone())
}

fn of<'a>(r: &'a AdviseReport, name: &str) -> &'a Advice {
    r.ranking.iter().find(|a| a.benchmark == name).unwrap()
}

/// The messages' median of a figure, or its centre where it has none.
fn typical(f: &FigureRecord) -> f64 {
    let l = f.latency_ns.as_ref().unwrap();
    l.p50
        .filter(|v| *v > 0.0)
        .unwrap_or_else(|| crate::analysis::watch::centre(f).unwrap())
}

fn pipe_at(r: &RunRecord, size: usize) -> &FigureRecord {
    r.results
        .iter()
        .find(|f| f.benchmark == "pipe" && f.mode == Mode::PingPong && f.size_bytes == size)
        .unwrap()
}

#[test]
fn a_size_its_cost_model_covers_is_its_line_scaled_to_the_messages_median() {
    let h = runs(&["cost-model"]);
    let seg = &h[0].1.cost_models[0].segments[0];
    let r = run(need(2048), &h);
    let pipe = of(&r, "pipe");
    // The nearest measured size (1K and 4K lie as far) scales the line.
    let scaled: Vec<f64> = [1024, 4096]
        .iter()
        .map(|s| {
            let f = pipe_at(&h[0].1, *s);
            (seg.setup_ns + 2048.0 * seg.per_byte_ns) * typical(f)
                / crate::analysis::watch::centre(f).unwrap()
        })
        .collect();
    assert!(
        scaled.iter().any(|e| (pipe.p50.value - e).abs() < 1e-6),
        "{} not in {scaled:?}",
        pipe.p50.value
    );
    assert!(pipe.p50.from.contains("cost model"), "{}", pipe.p50.from);
    assert!(pipe.p50.from.contains("centre"), "{}", pipe.p50.from);
    assert_eq!(pipe.p50.run_id, 1);
    // p99 from the nearest measured size's ratio, which it names.
    let p99 = pipe.p99.as_ref().unwrap();
    assert!(
        p99.from.contains("1K") || p99.from.contains("4K"),
        "{}",
        p99.from
    );
    assert!(p99.value >= pipe.p50.value);
}

#[test]
fn a_size_measured_directly_is_its_messages_median_and_p99() {
    let h = runs(&["cost-model"]);
    let f = pipe_at(&h[0].1, 4096);
    let l = f.latency_ns.as_ref().unwrap();
    let r = run(need(4096), &h);
    let pipe = of(&r, "pipe");
    assert_eq!(pipe.p50.value, l.p50.unwrap());
    assert!(
        pipe.p50.from.contains("messages' median"),
        "{}",
        pipe.p50.from
    );
    // The figure's own p99, as measured with its p50.
    let p99 = pipe.p99.as_ref().unwrap();
    assert!((p99.value - l.p99.unwrap().max(l.p50.unwrap())).abs() < 1e-6);
    assert!(p99.from.contains("4K"));
}

#[test]
fn the_p50_is_the_messages_median_not_the_batch_means_centre() {
    // Under load batch means rise above the messages' median: a centre
    // far above the p99 must not become the p50.
    let mut h = runs(&["cost-model"]);
    let f = h[0]
        .1
        .results
        .iter_mut()
        .find(|f| f.benchmark == "pipe" && f.size_bytes == 4096)
        .unwrap();
    f.sweep = None;
    let l = f.latency_ns.as_mut().unwrap();
    (l.p50, l.p99) = (Some(2650.0), Some(5980.0));
    l.median = 20_000.0;
    let r = run(need(4096), &h);
    let pipe = of(&r, "pipe");
    assert_eq!(pipe.p50.value, 2650.0);
    assert_eq!(pipe.p99.as_ref().unwrap().value, 5980.0);
}

#[test]
fn the_p99_is_never_below_the_p50() {
    // A figure without a per-message p50 stands in its centre, which
    // under load can exceed its p99: the ratio is held at 1.
    let mut h = runs(&["cost-model"]);
    for f in h[0].1.results.iter_mut() {
        f.sweep = None;
        if let Some(l) = f.latency_ns.as_mut() {
            l.p50 = None;
            l.median = 20_000.0;
            l.p99 = Some(5_000.0);
        }
    }
    for size in [1024, 2048, 4096] {
        let r = run(need(size), &h);
        for a in &r.ranking {
            let p99 = a.p99.as_ref().unwrap();
            assert!(
                p99.value >= a.p50.value,
                "{size}: {} {}",
                a.benchmark,
                p99.value
            );
            assert!(a.p50.from.contains("centre"), "{}", a.p50.from);
        }
    }
}

#[test]
fn every_prediction_names_its_shape() {
    let h = runs(&["ipc-quick"]);
    let r = run(need(544), &h);
    assert!(!r.ranking.is_empty());
    for a in &r.ranking {
        assert!(a.p50.from.contains("pingpong"), "{}", a.p50.from);
        assert!(a.p99.as_ref().unwrap().from.contains("pingpong"));
    }
    assert!(PREDICTED_AS.contains("round trip ÷ 2"));
}

#[test]
fn without_a_model_a_size_between_two_measured_is_interpolated_and_says_so() {
    let h = runs(&["ipc-quick"]);
    let r = run(need(544), &h);
    let pipe = of(&r, "pipe");
    let m: Vec<f64> = h[0]
        .1
        .results
        .iter()
        .filter(|f| f.benchmark == "pipe")
        .map(typical)
        .collect();
    let expected = m[0] + (544.0 - 64.0) / (1024.0 - 64.0) * (m[1] - m[0]);
    assert!((pipe.p50.value - expected).abs() < 1e-6);
    assert!(pipe.p50.from.contains("interpolated"), "{}", pipe.p50.from);
}

#[test]
fn nothing_measured_around_the_size_is_unrankable_with_its_reason() {
    let h = runs(&["ipc-quick"]);
    let r = run(need(16384), &h);
    assert!(r.ranking.is_empty());
    let names: Vec<&str> = r.unrankable.iter().map(|u| u.benchmark.as_str()).collect();
    assert_eq!(names, ["pipe", "shm-futex"]);
    assert!(
        r.unrankable[0].reason.contains("64, 1K"),
        "{}",
        r.unrankable[0].reason
    );
    assert!(r.unrankable[0].reason.contains("--sizes 16K"));
}

#[test]
fn the_latest_run_that_can_predict_is_read() {
    // Run 2 (ipc-quick) is later but did not measure 4K; run 1 did.
    let h = runs(&["cost-model", "ipc-quick"]);
    assert_eq!(of(&run(need(4096), &h), "pipe").p50.run_id, 1);
    assert_eq!(of(&run(need(1024), &h), "pipe").p50.run_id, 2);
}

#[test]
fn those_meeting_every_bound_come_first_then_the_rest_by_their_miss() {
    let h = runs(&["ipc-quick"]);
    // Unbounded, the lower p99 leads.
    let free = run(need(1024), &h);
    let lead = &free.ranking[0];
    let other = &free.ranking[1];
    assert!(lead.p99.as_ref().unwrap().value <= other.p99.as_ref().unwrap().value);
    assert!(
        free.ranking
            .iter()
            .all(|a| a.standing == Standing::MeetsAll)
    );
    // A p50 bound between the two medians puts the faster median first.
    let (fast, slow) = match lead.p50.value < other.p50.value {
        true => (lead, other),
        false => (other, lead),
    };
    let mut n = need(1024);
    n.p50_ns = Some((fast.p50.value + slow.p50.value) / 2.0);
    let bound = run(n, &h);
    assert_eq!(bound.ranking[0].benchmark, fast.benchmark);
    assert_eq!(bound.ranking[0].meets.p50, Some(true));
    assert_eq!(bound.ranking[0].standing, Standing::MeetsAll);
    assert_eq!(bound.ranking[1].meets.p50, Some(false));
    assert_eq!(bound.ranking[1].standing, Standing::Misses);
    assert!(bound.ranking[1].miss > 0.0);
    assert_eq!(bound.ranking[1].rank, 2);
}

#[test]
fn rate_and_cpu_come_from_a_stream_figure_or_are_not_measured() {
    let h = runs(&["cost-model", "stream"]);
    let s = h[1].1.results[0].stream.clone().unwrap();
    let mut n = need(4096);
    n.rate_per_s = Some(s.messages_per_s.unwrap() / 2.0);
    let r = run(n.clone(), &h);
    let pipe = of(&r, "pipe");
    assert_eq!(pipe.rate.as_ref().unwrap().value, s.messages_per_s.unwrap());
    assert_eq!(pipe.rate.as_ref().unwrap().run_id, 2);
    let cpu = s.cpu_ns_per_message.sender.unwrap() + s.cpu_ns_per_message.receiver.unwrap();
    assert!((pipe.cpu_per_msg.as_ref().unwrap().value - cpu).abs() < 1e-6);
    assert_eq!(pipe.meets.rate, Some(true));
    // Without a stream figure, a rate bound cannot be judged.
    let r = run(n, &h[..1]);
    assert!(of(&r, "pipe").rate.is_none());
    assert_eq!(of(&r, "pipe").standing, Standing::Unknown);
}

fn model(name: &str, setup: f64, per_byte: f64, to: usize) -> CostModel {
    CostModel {
        benchmark: name.into(),
        cold: false,
        segments: vec![Segment {
            from_bytes: 64,
            to_bytes: to,
            setup_ns: setup,
            per_byte_ns: per_byte,
            r2: 1.0,
            setup_ci_ns: [setup, setup],
            per_byte_ci_ns: [per_byte, per_byte],
            sizes: 3,
        }],
    }
}

#[test]
fn two_lines_cross_where_they_are_equal_within_the_shared_sizes() {
    let a = model("a", 1000.0, 1.0, 16384);
    let b = model("b", 3000.0, 0.5, 16384);
    let c = crossover("a", &a, "b", &b, [1, 2]).unwrap();
    assert!((c.size_bytes.unwrap() - 4000.0).abs() < 1e-9);
    assert_eq!(c.faster_below, "a");
    // Beyond the sizes measured there is no crossover.
    let short = model("b", 3000.0, 0.5, 2048);
    let c = crossover("a", &a, "b", &short, [1, 2]).unwrap();
    assert_eq!(c.size_bytes, None);
    assert_eq!(c.faster_below, "a");
}

#[test]
fn another_hosts_runs_are_not_read() {
    let h = runs(&["cost-model"]);
    let r = advise("elsewhere", need(4096), &h, h[0].1.header.build.clone());
    assert!(r.ranking.is_empty() && r.unrankable.is_empty());
    assert_eq!(r.runs_read, 0);
}

#[test]
fn missing_names_what_the_size_lacks_by_mode_and_skipped_counts_as_known() {
    let runs = runs(&["ipc-quick", "stream"]);
    let host = runs[0].1.header.environment.hostname.clone();
    let pp: Vec<&FigureRecord> = runs[0]
        .1
        .results
        .iter()
        .filter(|f| f.mode == Mode::PingPong && f.status == Status::Ok)
        .collect();
    let (have, size) = (pp[0].benchmark.clone(), pp[0].size_bytes);
    let candidates = [have.as_str(), "no-such-mechanism"];
    let m = missing(&host, &need(size), &runs, &candidates);
    assert_eq!(m.pingpong, vec!["no-such-mechanism".to_string()]);
    assert!(
        m.stream.is_empty(),
        "no rate or CPU stated: no stream needed"
    );
    let mut with_rate = need(size);
    with_rate.rate_per_s = Some(50_000.0);
    let m = missing(&host, &with_rate, &runs, &candidates);
    assert!(m.stream.contains(&"no-such-mechanism".to_string()));
    // Another host's figures are not this host's.
    let m = missing("elsewhere", &need(size), &runs, &candidates);
    assert_eq!(m.pingpong.len(), 2);
    // A figure skipped at the size is known: not measured again.
    let mut skipped = runs.clone();
    let f = skipped[0]
        .1
        .results
        .iter_mut()
        .find(|f| f.benchmark == have && f.size_bytes == size && f.mode == Mode::PingPong)
        .unwrap();
    f.status = Status::Skipped;
    assert!(
        missing(&host, &need(size), &skipped, &candidates).pingpong
            == vec!["no-such-mechanism".to_string()]
    );
}

/// A run holding one one-way figure of pipe at `size`, paced every
/// `interval` ns (none: saturated), its messages' p50 and p99 given.
fn oneway_run(size: usize, interval: Option<u64>, p50: f64, p99: f64) -> RunRecord {
    let mut r = fixture("cost-model");
    let mut f = pipe_at(&r, 4096).clone();
    (f.mode, f.size_bytes, f.sweep) = (Mode::OneWay, size, None);
    let l = f.latency_ns.as_mut().unwrap();
    (l.p50, l.p99) = (Some(p50), Some(p99));
    f.oneway = Some(crate::record::facts::OneWayRecord {
        pacing: if interval.is_some() {
            "sporadic"
        } else {
            "saturated"
        }
        .into(),
        interval_ns: interval,
        messages_sent: 20_000,
        messages_received: 20_000,
        gaps: 0,
        window: 20_000,
        windows: Vec::new(),
        mean_ns: p50,
        time_bounded: false,
        sender_timer_slack_ns: 50_000,
        sender_sched_policy: "SCHED_OTHER".into(),
    });
    r.results = vec![f];
    r.cost_models.clear();
    r
}

#[test]
fn a_oneway_figure_at_the_size_is_the_oneway_prediction_and_names_its_shape() {
    let mut h = runs(&["cost-model"]);
    let pingpong = of(&run(need(4096), &h), "pipe").clone();
    assert!(
        pingpong.oneway.is_none(),
        "no one-way figure: ping-pong only"
    );
    h.push((2, oneway_run(4096, None, 900.0, 1600.0)));
    let r = run(need(4096), &h);
    let pipe = of(&r, "pipe");
    let o = pipe.oneway.as_ref().unwrap();
    assert_eq!((o.p50.value, o.p99.value), (900.0, 1600.0));
    assert_eq!((o.p50.run_id, o.p99.run_id), (2, 2));
    assert_eq!(o.predicted_as, "oneway, saturated");
    assert!(o.p99.from.contains("oneway"), "{}", o.p99.from);
    assert!(o.p99.from.contains("(run 2)"), "{}", o.p99.from);
    // The ranking's figures stay the ping-pong ones.
    assert_eq!(pipe.p50, pingpong.p50);
    assert_eq!(pipe.p99, pingpong.p99);
}

#[test]
fn a_oneway_figure_at_another_size_is_not_a_prediction_at_this_one() {
    let mut h = runs(&["cost-model"]);
    h.push((2, oneway_run(1024, None, 900.0, 1600.0)));
    assert!(of(&run(need(4096), &h), "pipe").oneway.is_none());
    assert!(of(&run(need(1024), &h), "pipe").oneway.is_some());
}

#[test]
fn paced_the_same_pacing_is_preferred_else_saturated_which_says_what_it_leaves_out() {
    let mut h = runs(&["cost-model"]);
    h.push((2, oneway_run(4096, None, 900.0, 1600.0)));
    let mut paced = need(4096);
    paced.rate_per_s = Some(1000.0);
    let o = of(&run(paced.clone(), &h), "pipe").oneway.clone().unwrap();
    assert_eq!(o.p99.value, 1600.0);
    assert!(o.predicted_as.starts_with("oneway, saturated"));
    assert!(o.predicted_as.contains("wake-up"), "{}", o.predicted_as);
    // Another pacing is not this one.
    h.push((3, oneway_run(4096, Some(10_000), 7000.0, 9000.0)));
    let o = of(&run(paced.clone(), &h), "pipe").oneway.clone().unwrap();
    assert_eq!(o.p99.value, 1600.0);
    h.push((4, oneway_run(4096, Some(1_000_000), 30_000.0, 80_000.0)));
    let o = of(&run(paced, &h), "pipe").oneway.clone().unwrap();
    assert_eq!((o.p50.value, o.p99.value), (30_000.0, 80_000.0));
    assert_eq!(o.predicted_as, "oneway, sporadic every 1000000 ns");
    // Saturated, a paced figure is not read.
    let o = of(&run(need(4096), &h), "pipe").oneway.clone().unwrap();
    assert_eq!(o.p50.value, 900.0);
}

#[test]
fn the_oneway_prediction_is_the_median_of_the_latest_runs_so_one_loaded_run_does_not_carry() {
    let mut h = runs(&["cost-model"]);
    for (id, p99) in [
        (2, 5000.0),
        (3, 700.0),
        (4, 800.0),
        (5, 2100.0),
        (6, 650.0),
        (7, 690.0),
    ] {
        h.push((id, oneway_run(4096, None, 500.0, p99)));
    }
    let o = of(&run(need(4096), &h), "pipe").oneway.clone().unwrap();
    // Runs 3–7: the oldest (5 000 ns) is past the five latest.
    assert_eq!(o.p99.value, 700.0);
    assert_eq!(o.p50.value, 500.0);
    assert_eq!(o.p99.run_id, 7);
    assert!(
        o.p99.from.contains("5 runs: 7, 6, 5, 4, 3"),
        "{}",
        o.p99.from
    );
}

#[test]
fn the_oneway_p99_is_never_below_its_p50() {
    let mut h = runs(&["cost-model"]);
    h.push((2, oneway_run(4096, None, 900.0, 700.0)));
    let o = of(&run(need(4096), &h), "pipe").oneway.clone().unwrap();
    assert_eq!((o.p50.value, o.p99.value), (900.0, 900.0));
}

/// Under a stated rate, a mechanism with a rate curve is judged by the
/// curve's p99 there and by whether it kept up with the rate, each named;
/// one without a curve keeps its closed-loop figures.
#[test]
fn a_rate_curve_judges_the_p99_and_the_rate_it_kept_up_with() {
    let mut h = runs(&["cost-model", "rate"]);
    let host = h[0].1.header.environment.hostname.clone();
    h[1].1.header.environment.hostname = host;
    let mut n = need(64);
    n.rate_per_s = Some(20_000.0);
    n.p99_ns = Some(50_000.0);
    let r = run(n.clone(), &h);
    let pipe = of(&r, "pipe");
    let at = pipe
        .at_rate
        .as_ref()
        .expect("pipe has a rate curve at 64 B");
    assert_eq!(at.p99.as_ref().unwrap().value, 41_119.0);
    assert_eq!(at.p99.as_ref().unwrap().run_id, 2);
    assert_eq!(pipe.meets.p99, Some(true));
    assert_eq!(pipe.meets.rate, Some(true));
    // Past the rates it kept up with: the rate is missed, no p99 predicted.
    n.rate_per_s = Some(100_000.0);
    let r = run(n, &h);
    let pipe = of(&r, "pipe");
    assert_eq!(pipe.meets.rate, Some(false));
    assert_eq!(pipe.standing, Standing::Misses);
    assert!(pipe.at_rate.as_ref().unwrap().note.is_some());
}
