//! The plan is a pure function of the arguments and the machine, so every
//! rule it applies is tested here without measuring anything.

use super::*;
use std::time::Duration;

/// A two-CPU machine where SCHED_FIFO is permitted up to `fifo`, or refused.
fn machine(fifo: Result<i32, &str>) -> Machine {
    Machine {
        allowed_cpus: vec![0, 1],
        fifo: fifo.map_err(String::from),
    }
}

fn plan_on(m: &Machine, line: &[&str]) -> Result<RunPlan, Failure> {
    let request =
        crate::cli::test_support::run_request(line).expect("the test's command line parses");
    RunPlan::from_request(&request, m)
}

fn plan(line: &[&str]) -> RunPlan {
    plan_on(&machine(Ok(99)), line).unwrap_or_else(|f| panic!("refused: {}", f.message))
}

fn refused(m: &Machine, line: &[&str]) -> String {
    match plan_on(m, line) {
        Ok(_) => panic!("{line:?} was not refused"),
        Err(f) => {
            assert_eq!(f.code, 2, "{}", f.message);
            f.message
        }
    }
}

#[test]
fn no_name_plans_every_mechanism_by_ping_pong_at_the_default_sizes_in_five_passes() {
    let p = plan(&[]);
    assert_eq!(p.session.items.len(), mechanisms::REGISTRY.len());
    for (item, sizes) in &p.session.items {
        assert!(matches!(item, Item::PingPong(_, false)), "{}", item.id());
        assert!(sizes == &DEFAULT_SIZES || sizes.len() == 1, "{}", item.id());
    }
    assert_eq!(p.session.passes, 5);
    let figures: usize = p.session.items.iter().map(|(_, s)| s.len()).sum();
    assert_eq!(p.session.figure_count(), 5 * figures);
    assert_eq!(p.cpu_latency, LatencyRequest::Wanted(0));
    assert_eq!(p.settings.sizes, DEFAULT_SIZES);
    assert_eq!(p.settings.cpu_latency_us, None, "filled in only once held");
}

#[test]
fn a_name_given_twice_or_inside_a_group_is_measured_once() {
    let p = plan(&["pipe", "pipe", "ipc", "syscall-getpid", "syscall"]);
    let ids: Vec<&str> = p.session.items.iter().map(|(i, _)| i.id()).collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(ids.len(), unique.len(), "{ids:?}");
    assert_eq!(ids[0], "pipe");
    assert_eq!(
        ids[1], "pipe-self",
        "the ipc group follows in registry order"
    );
}

#[test]
fn the_mode_decides_the_kind_of_item_and_only_ping_pong_and_ops_repeat() {
    let stream = plan(&["--mode", "stream", "pipe", "udp"]);
    assert!(
        stream
            .session
            .items
            .iter()
            .all(|(i, _)| matches!(i, Item::Stream(..)) && !i.repeats())
    );
    let oneway = plan(&["--mode", "oneway", "pipe", "--interval", "10ms"]);
    match &oneway.session.items[..] {
        [(Item::OneWay(_, p), sizes)] => {
            assert_eq!(p.interval, Some(Duration::from_millis(10)));
            assert_eq!(sizes[0], 8, "a one-way stamp needs 8 B: 1 B becomes 8 B");
        }
        _ => panic!("one one-way item"),
    }
    assert_eq!(oneway.session.figure_count(), DEFAULT_SIZES.len());
    let ops = plan(&["syscall-getpid", "--passes", "3"]);
    assert!(ops.session.items[0].0.repeats());
    assert_eq!(ops.session.figure_count(), 3);
}

#[test]
fn sched_fifo_is_judged_against_the_machine_never_tried_by_the_plan() {
    let refused_here = machine(Err("Operation not permitted (os error 1)"));
    let why = refused(&refused_here, &["pipe", "--rt", "80"]);
    assert!(
        why.contains("--rt 80") && why.contains("os error 1"),
        "{why}"
    );
    let limited = machine(Ok(50));
    let why = refused(&limited, &["pipe", "--rt", "80"]);
    assert!(why.contains("limit of 50"), "{why}");
    let p = plan_on(&limited, &["pipe", "--rt", "50"]).ok().unwrap();
    assert_eq!(p.session.settings.client.rt_priority, Some(50));
    // A preset's priority that is refused: the run goes on under
    // SCHED_OTHER and its note says so.
    let p = plan_on(&refused_here, &["--preset", "mq-article"])
        .ok()
        .unwrap();
    assert_eq!(p.session.settings.client.rt_priority, None);
    assert!(p.settings.placement_note.unwrap().contains("SCHED_OTHER"));
    let scores = plan_on(&refused_here, &["thread-metric-basic"])
        .ok()
        .unwrap()
        .session
        .scores
        .unwrap();
    assert!(!scores.0.fifo && scores.1.is_some());
}

#[test]
fn cpus_come_from_the_machine_and_one_cpu_is_shared_with_a_note() {
    let why = refused(&machine(Ok(99)), &["pipe", "--cpus", "5"]);
    assert!(why.contains("CPU 5") && why.contains("0,1"), "{why}");
    let one = Machine {
        allowed_cpus: vec![3],
        fifo: Ok(99),
    };
    let p = plan_on(&one, &["pipe"]).ok().unwrap();
    assert_eq!(p.session.settings.client.cpu, Some(3));
    assert_eq!(p.session.settings.server.cpu, Some(3));
    assert!(p.settings.placement_note.unwrap().contains("only CPU 3"));
    let same = plan(&["pipe", "--same-cpu", "--cpus", "1,0"]);
    assert_eq!(same.session.settings.server.cpu, Some(1));
}

#[test]
fn the_cpu_latency_request_follows_the_flag_and_the_preset() {
    assert_eq!(
        plan(&["pipe", "--cpu-latency", "off"]).cpu_latency,
        LatencyRequest::None("--cpu-latency off".into())
    );
    assert_eq!(
        plan(&["pipe", "--cpu-latency", "10"]).cpu_latency,
        LatencyRequest::Required(10)
    );
    // The article measured with the CPUs' idle states, and so does its preset.
    let LatencyRequest::None(why) = plan(&["--preset", "mq-article"]).cpu_latency else {
        panic!("the preset holds a limit")
    };
    assert!(
        why.contains("mq-article") && why.contains("idle states"),
        "{why}"
    );
    // --cpu-latency overrides the preset.
    assert_eq!(
        plan(&["--preset", "mq-article", "--cpu-latency", "0"]).cpu_latency,
        LatencyRequest::Required(0)
    );
}

#[test]
fn a_pass_takes_its_share_of_the_budget() {
    let p = plan(&["pipe", "--samples", "10", "--passes", "5"]);
    let run = p.session.settings.budget;
    assert_eq!(run.samples, 10);
    let pass = crate::engine::run::passes::pass_budget(&run, p.session.passes);
    assert_eq!(
        pass.samples, 3,
        "ceil(10 / 5) = 2, but a pass takes at least 3"
    );
    assert_eq!(pass.warmup, run.warmup / 5);
}

#[test]
fn a_preset_samples_for_its_own_time_unless_max_time_says_otherwise() {
    let max_time = |line: &[&str]| plan(line).session.settings.budget.precision.max_time;
    assert_eq!(
        max_time(&["--preset", "qnx-table4"]),
        Duration::from_millis(300)
    );
    assert_eq!(max_time(&["pipe"]), Duration::from_secs(1));
    // Never longer than --quick's, and --max-time overrides it; the
    // passes stay.
    assert_eq!(
        max_time(&["--preset", "qnx-table4", "--quick"]),
        Duration::from_millis(250)
    );
    assert_eq!(
        max_time(&["--preset", "qnx-table4", "--max-time", "2s"]),
        Duration::from_secs(2)
    );
    assert_eq!(plan(&["--preset", "qnx-table4"]).session.passes, 5);
    // A preset without one samples as a run without a preset does.
    assert_eq!(
        max_time(&["--preset", "mq-article"]),
        Duration::from_secs(1)
    );
}

#[test]
fn mode_rate_offers_the_rates_to_each_mechanism_once_per_size() {
    use crate::engine::models::rate::Rates;
    let p = plan(&["--mode", "rate", "pipe", "udp", "--rates", "20k,2k"]);
    assert_eq!(p.session.items.len(), 2);
    for (item, sizes) in &p.session.items {
        let Item::Rate(_, rp) = item else {
            panic!("{} is not a rate item", item.id())
        };
        assert_eq!(rp.rates, Rates::List(vec![2e3, 2e4]));
        assert_eq!(rp.rounds, 1, "one round in each pass");
        assert_eq!(rp.point_time, Duration::from_millis(200));
        assert_eq!(rp.min_messages, 1000);
        assert_eq!(sizes, &[64], "a curve is long: one size by default");
        assert!(item.repeats(), "a round per pass, spread over the run");
    }
    assert_eq!(p.session.passes, 5);
    assert_eq!(p.session.figure_count(), 10, "2 figures × 5 passes");
    // --quick: shorter points, fewer rounds (passes), unless --passes says.
    let quick = plan(&["--mode", "rate", "pipe", "--quick"]);
    let [(Item::Rate(_, q), _)] = &quick.session.items[..] else {
        panic!("not one rate item")
    };
    assert_eq!(q.rates, Rates::Sweep);
    assert_eq!((q.rounds, q.min_messages), (1, 500));
    assert_eq!(quick.session.passes, 3);
    assert_eq!(q.point_time, Duration::from_millis(100));
    let passes = plan(&["--mode", "rate", "pipe", "--quick", "--passes", "2"]);
    assert_eq!(passes.session.passes, 2);
}

#[test]
fn mode_rate_by_default_offers_rates_to_the_mechanisms_that_queue() {
    let p = plan(&["--mode", "rate"]);
    let ids: Vec<&str> = p.session.items.iter().map(|(i, _)| i.id()).collect();
    let queuing: Vec<&str> = mechanisms::REGISTRY
        .iter()
        .filter(|m| !matches!(m.stream(), crate::engine::channel::StreamSupport::No(_)))
        .map(|m| m.info().id)
        .collect();
    assert_eq!(ids, queuing);
    assert!(
        ids.contains(&"pipe") && !ids.contains(&"pipe-self"),
        "{ids:?}"
    );
}

#[test]
fn mode_rate_refuses_what_it_cannot_offer_a_rate_to() {
    let m = machine(Ok(99));
    for (line, says) in [
        (
            &["--rates", "1k", "pipe"][..],
            "--rates applies to --mode rate only (mode is pingpong by default)",
        ),
        (
            &["--mode", "stream", "--rates", "1k"][..],
            "(mode is stream)",
        ),
        (
            &["--mode", "rate", "syscall-getpid"][..],
            "'syscall-getpid' is a single-process benchmark",
        ),
        (
            &["--mode", "rate", "--cold", "pipe"][..],
            "--cold applies to --mode pingpong only",
        ),
        (
            &["--mode", "rate", "--interval", "1ms"][..],
            "(mode is rate)",
        ),
    ] {
        let e = refused(&m, line);
        assert!(e.contains(says), "{line:?}: {e}");
    }
}
