//! `ipcmark explain --tail` and the anatomy checked against the kernel's
//! own text trace of the same pass (`--save-trace`). Tracing needs root
//! and tracefs: without them each test says why it is skipped. No test
//! asserts a time.

use crate::util::*;
use std::collections::HashMap;
use std::time::Duration;

/// One line of the kernel's text trace: its time in µs (the text prints
/// no finer), task, event and fields.
struct Line {
    us: u64,
    pid: i32,
    event: String,
    fields: String,
}

/// The text trace's event lines (`comm-pid [cpu] flags secs.usecs: event: fields`).
fn parse_text(text: &str) -> Vec<Line> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let open = l.find(" [")?;
            let close = open + l[open..].find(']')?;
            let pid = l[..open].trim().rsplit('-').next()?.parse().ok()?;
            l[open + 2..close].parse::<usize>().ok()?;
            let rest = &l[close + 1..];
            let (head, tail) = rest.split_once(": ")?;
            let ts = head.split_whitespace().last()?;
            let (secs, micros) = ts.split_once('.')?;
            let us = secs.parse::<u64>().ok()? * 1_000_000 + micros.parse::<u64>().ok()?;
            let (event, fields) = tail.split_once(": ").unwrap_or((tail, ""));
            Some(Line {
                us,
                pid,
                event: event.to_string(),
                fields: fields.to_string(),
            })
        })
        .collect()
}

/// A field's value in a line's fields (`name=value`).
fn field<'a>(fields: &'a str, name: &str) -> Option<&'a str> {
    fields
        .split_whitespace()
        .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
}

#[test]
fn the_anatomy_of_a_pass_falls_on_the_events_of_its_text_trace() {
    let _g = serial();
    let Some(_tracing) =
        tracing_or_skip("the_anatomy_of_a_pass_falls_on_the_events_of_its_text_trace")
    else {
        return;
    };
    let sb = Sandbox::new();
    let dir = sb.path("trace");
    std::fs::create_dir(&dir).unwrap();
    let mut argv = EXPLAIN_PIPE[1..].to_vec();
    argv.extend([
        "--round-trips",
        "300",
        "--save-trace",
        dir.to_str().unwrap(),
    ]);
    let (_, report) = explained(&sb, &argv, "anatomy of a round trip");
    let ex = &results(&report)[0]["explain"];
    let text = std::fs::read_to_string(dir.join("pipe-64.trace")).expect("the text trace");
    let tsv = std::fs::read_to_string(dir.join("pipe-64.parts.tsv")).expect("the stretches");
    let lines = parse_text(&text);
    assert!(lines.len() > 300, "{} lines", lines.len());
    let header: Vec<&str> = tsv.lines().next().unwrap().split_whitespace().collect();
    let server: i32 = header[4].parse().expect("the server's tid");
    // Every stretch's start but a round trip's first (a stamp, in user
    // space, where no event is) falls on an event the text shows, to its
    // microsecond.
    let at: std::collections::HashSet<u64> = lines.iter().map(|l| l.us).collect();
    let mut segments = 0;
    let mut first_of: HashMap<&str, u64> = HashMap::new();
    let mut merged_trips = std::collections::BTreeSet::new();
    for row in tsv.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = row.split('\t').collect();
        let (trip, start) = (cols[0], cols[1].parse::<u64>().unwrap());
        segments += 1;
        if first_of.insert(trip, start).is_some() {
            let us = start / 1000;
            assert!(
                at.contains(&us) || at.contains(&(us.saturating_sub(1))) || at.contains(&(us + 1)),
                "a stretch of {} begins at {start} ns, where the text trace shows no event",
                cols[3]
            );
        }
        // A stretch named for a wake-up with no switch seen has none in
        // the text trace either.
        if cols[3].starts_with("server wake-up + ") {
            merged_trips.insert(trip.to_string());
            let end = cols[2].parse::<u64>().unwrap() / 1000;
            let switched_in = lines.iter().any(|l| {
                l.event == "sched_switch"
                    && (start / 1000..end).contains(&l.us)
                    && field(&l.fields, "next_pid") == Some(&server.to_string())
            });
            assert!(!switched_in, "{row}: the text trace shows the switch");
        }
    }
    assert!(segments >= 300 * 4, "{segments} stretches");
    assert_eq!(
        merged_trips.len() as u64,
        ex["merged_round_trips"].as_u64().unwrap(),
        "{ex}"
    );
    // The server's wake-ups with no switch to it, counted from the text:
    // woken, then its next event on a CPU with no sched_switch to it before.
    let mut woken = false;
    let mut unswitched = 0u64;
    for l in &lines {
        if l.event == "sched_waking" && field(&l.fields, "pid") == Some(&server.to_string()) {
            woken = true;
        } else if woken
            && l.event == "sched_switch"
            && field(&l.fields, "next_pid") == Some(&server.to_string())
        {
            woken = false;
        } else if woken && l.pid == server {
            woken = false;
            unswitched += 1;
        }
    }
    let wake_ups = ex["wake_ups"].as_array().expect("wake_ups");
    let side = wake_ups.iter().find(|w| w["side"] == "server").unwrap();
    let counted = side["no_switch_in"].as_u64().unwrap();
    // The pass's edges (tracing on before the first stamp) may differ by one.
    assert!(
        unswitched.abs_diff(counted) <= 1,
        "the text shows {unswitched} wake-ups of the server with no switch in; the record {counted}"
    );
    let _ = ex["wake_ups"][0]["early"].as_u64().expect("early");
}

#[test]
fn the_tail_splits_the_slowest_round_trips_and_names_their_culprits() {
    let _g = serial();
    let Some(_tracing) =
        tracing_or_skip("the_tail_splits_the_slowest_round_trips_and_names_their_culprits")
    else {
        return;
    };
    let sb = Sandbox::new();
    let mut argv = EXPLAIN_PIPE[1..].to_vec();
    argv.extend(["--round-trips", "1000", "--tail", "12"]);
    let (text, report) = explained(&sb, &argv, "tail: the slowest 12 of 1000 round trips");
    assert!(text.contains("signature"), "{text}");
    let tail = &results(&report)[0]["explain"]["tail"];
    let slowest = tail["slowest"].as_array().expect("slowest");
    assert_eq!(slowest.len(), 12);
    let mut count = 0;
    for s in slowest {
        // Every part of it, the residual included, adds up to it.
        let parts = s["parts"].as_array().unwrap();
        let sum: f64 = parts.iter().map(|p| p["ns"].as_f64().unwrap()).sum();
        let rt = s["round_trip_ns"].as_f64().unwrap();
        assert!((sum - rt).abs() <= 1e-6 * rt, "{sum} vs {rt}");
        assert!(!parts[0]["culprit"].as_str().unwrap().is_empty(), "{s}");
        assert!(!s["signature"].as_str().unwrap().is_empty(), "{s}");
    }
    for g in tail["signatures"].as_array().unwrap() {
        count += g["count"].as_u64().unwrap();
    }
    assert_eq!(count, 12, "{tail}");
}

#[test]
fn a_tail_or_trace_directory_out_of_range_is_bad_usage() {
    let sb = Sandbox::new();
    for (flag, value, says) in [
        ("--tail", "0", "at least one"),
        ("--tail", "150%", "at most 100%"),
        ("--tail", "many", "not a count"),
        ("--save-trace", "/no/such/dir", "not a directory"),
    ] {
        let mut argv = EXPLAIN_PIPE.to_vec();
        argv.extend([flag, value]);
        let out = sb.run(&argv, Duration::from_secs(30));
        assert_eq!(
            out.status.code(),
            Some(2),
            "{flag} {value}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(says),
            "{flag} {value}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_soak_keeps_the_slowest_in_its_stated_memory_and_leaves_no_instance() {
    let _g = serial();
    let Some(_tracing) =
        tracing_or_skip("a_soak_keeps_the_slowest_in_its_stated_memory_and_leaves_no_instance")
    else {
        return;
    };
    let sb = Sandbox::new();
    let mut argv = EXPLAIN_PIPE[1..].to_vec();
    argv.extend(["--round-trips", "1000", "--tail", "5", "--duration", "3s"]);
    let (_, report) = explained(&sb, &argv, "soak: ");
    let ex = &results(&report)[0]["explain"];
    let soak = &ex["soak"];
    let segments = soak["segments"].as_u64().unwrap();
    assert!(segments >= 2, "{soak}");
    assert_eq!(soak["segment_round_trips"], 1000);
    assert!(soak["segments_decoded"].as_u64().unwrap() >= 1, "{soak}");
    assert!(
        soak["peak_rss_kb"].as_u64().unwrap() <= soak["bound_kb"].as_u64().unwrap(),
        "{soak}"
    );
    let tail = &ex["tail"];
    assert_eq!(tail["round_trips_seen"].as_u64().unwrap(), segments * 1000);
    assert_eq!(tail["slowest"].as_array().unwrap().len(), 5);
}

#[test]
fn sigint_during_a_soak_removes_the_instance() {
    let _g = serial();
    let Some(_tracing) = tracing_or_skip("sigint_during_a_soak_removes_the_instance") else {
        return;
    };
    let sb = Sandbox::new();
    let mut argv = EXPLAIN_PIPE.to_vec();
    argv.extend(["--round-trips", "1000", "--tail", "5", "--duration", "10m"]);
    let child = sb.cmd(&argv).spawn().expect("spawn ipcmark");
    let pid = child.id();
    assert!(
        eventually(Duration::from_secs(90), || instance_of(pid).is_some()),
        "no instance of {pid} within 90 s"
    );
    std::thread::sleep(Duration::from_millis(500));
    signal(pid, libc::SIGINT);
    let out = wait_with_deadline(child, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(instance_of(pid).is_none(), "{:?}", instance_of(pid));
    assert!(
        orphaned_instances().is_empty(),
        "left: {:?}",
        orphaned_instances()
    );
}

#[test]
fn without_root_a_tail_asked_for_is_said_to_be_impossible_not_dropped() {
    let Some(nobody) = Nobody::or_skip("without_root_a_tail_asked_for_is_said_to_be_impossible")
    else {
        return;
    };
    let sb = Sandbox::new();
    let json = sb.path("coarse.json");
    let mut argv = EXPLAIN_PIPE.to_vec();
    argv.extend([
        "--round-trips",
        "200",
        "--tail",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = nobody
        .cmd(&sb, &argv)
        .output()
        .expect("run ipcmark as nobody");
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(text.contains("--tail: without the trace"), "{text}");
    let report = read_json(&json);
    let ex = &results(&report)[0]["explain"];
    assert_eq!(ex["method"], "coarse", "{ex}");
    assert!(ex.get("tail").is_none(), "{ex}");
}
