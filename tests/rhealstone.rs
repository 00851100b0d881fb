//! The `rhealstone` group: every metric runs in a shortened form with
//! consistent statistics and its baseline reported, under SCHED_FIFO where
//! permitted (else the result and a warning say so), in the documented
//! schema, leaving no thread or object behind; the deadlock break shows the
//! inversion without priority inheritance and not with it; bad values exit
//! 2. No test asserts a time.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

/// The metrics the issue asks for, by id, with their timing model.
const ISSUE_IDS: &[(&str, &str)] = &[
    ("rhealstone-task-switch", "op"),
    ("rhealstone-preemption", "op"),
    ("rhealstone-interrupt-latency", "event"),
    ("rhealstone-semaphore-shuffle", "op"),
    ("rhealstone-message-latency", "op"),
    ("rhealstone-deadlock-break", "event"),
    ("rhealstone-deadlock-break-no-pi", "event"),
];

#[test]
fn list_shows_every_metric_in_its_mode_and_the_readme_documents_it() {
    let entries: Vec<Value> = list()
        .into_iter()
        .filter(|e| e["group"] == "rhealstone")
        .collect();
    let got: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| (e["id"].as_str().unwrap(), e["mode"].as_str().unwrap()))
        .collect();
    assert_eq!(got, ISSUE_IDS);
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    for (id, _) in ISSUE_IDS {
        assert!(
            readme.contains(&format!("| `{id}` |")),
            "README.md has no row for {id}"
        );
    }
    assert!(readme.contains("ipcmark run rhealstone"));
    let method = std::fs::read_to_string("docs/method.md").expect("docs/method.md");
    assert!(
        method.contains("## Rhealstone"),
        "method.md defines the metrics"
    );
    for (id, _) in ISSUE_IDS {
        assert!(method.contains(&format!("`{id}`")), "method.md lacks {id}");
    }
}

#[test]
fn rhealstone_runs_all_six_metrics_consistently_and_leaves_nothing() {
    let _g = serial();
    let sb = Sandbox::new();
    // The report is checked against the schema as it is read.
    let ran = Run::new(&sb, &["run", "rhealstone"])
        .short()
        .json()
        .schema()
        .ok();
    let report = &ran.report;
    assert_eq!(report["complete"], true);

    let rs = report["results"].as_array().unwrap();
    let got: Vec<(&str, &str)> = rs
        .iter()
        .map(|r| {
            (
                r["benchmark"].as_str().unwrap(),
                r["mode"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got, ISSUE_IDS,
        "run rhealstone selects exactly the group, in order"
    );

    // Root here normally; without SCHED_FIFO the figures still run, and say so.
    let fifo = rs[0]["scheduling"]["policy"] == "SCHED_FIFO";
    if !fifo {
        eprintln!("SCHED_FIFO refused here: checking the SCHED_OTHER path instead");
        assert!(
            ran.stderr.contains("SCHED_FIFO was refused"),
            "{}",
            ran.stderr
        );
    }
    for r in rs {
        let id = r["benchmark"].as_str().unwrap();
        // Each metric is its events less the RTEMS baseline, which a loaded
        // machine can take to zero.
        if below_resolution_by_baseline(r) {
            continue;
        }
        assert_eq!(r["status"], "ok", "{id}: {}", r["error"]);
        assert_latency_in_order(id, &r["latency_ns"]);
        assert_median_among_samples(id, r, 2);
        assert!(r["timed_ops"].as_u64().unwrap() >= 1, "{id}");

        // The RTEMS baseline, subtracted and reported; per event.
        assert!(r["baseline_ns"].as_f64().is_some(), "{id}: no baseline");
        // Two populations, each named: op rows time their single
        // operations apart from the batches; event rows sample their events.
        let (median_of, percentiles_of) = match r["mode"].as_str().unwrap() {
            "op" => ("batch_means", "single_operations"),
            _ => ("event_means", "sampled_events"),
        };
        assert_populations(id, &r["latency_ns"], median_of, percentiles_of);
        assert!(r["events"]["per_op"].as_u64().unwrap() >= 1, "{id}");

        // Explicit priorities where permitted, on one CPU.
        let sch = &r["scheduling"];
        if fifo {
            assert_eq!(sch["policy"], "SCHED_FIFO", "{id}");
            assert_eq!(sch["base_priority"], 20, "{id}");
            assert!(sch["fifo_refused"].is_null(), "{id}");
            // The kernel counted a switch for every operation.
            let k = &r["kernel_counter"];
            assert!(
                k["observed"].as_u64().unwrap()
                    >= k["per_op"].as_u64().unwrap() * k["ops"].as_u64().unwrap(),
                "{id}: {k}"
            );
        } else {
            assert_eq!(sch["policy"], "SCHED_OTHER", "{id}");
            assert!(!sch["fifo_refused"].as_str().unwrap().is_empty(), "{id}");
        }
        for c in r["kernel_calls"].as_array().unwrap() {
            assert_eq!(c["entered"], true, "{id}: {c}");
        }
        assert_eq!(r["cpus"].as_array().unwrap().len(), 1, "{id}");
    }

    // The deadlock break: the inversion without inheritance, none with it.
    let obs = |id: &str| {
        let r = rs.iter().find(|r| r["benchmark"] == id).unwrap();
        let o = &r["observations"];
        (
            o["rounds"].as_u64().unwrap(),
            o["inverted_rounds"].as_u64().unwrap(),
            o["inversion_observed"].as_u64().unwrap(),
        )
    };
    let (n, k, seen) = obs("rhealstone-deadlock-break-no-pi");
    assert!(n > 0 && k <= n);
    let (pn, pk, pseen) = obs("rhealstone-deadlock-break");
    assert!(pn > 0 && pk <= pn);
    if fifo {
        assert_eq!(seen, 1, "no inversion without inheritance: {k} of {n}");
        assert!(k * 2 > n, "{k} of {n}");
        assert_eq!(pseen, 0, "an inversion with inheritance: {pk} of {pn}");
        assert!(
            pk * 100 <= pn,
            "{pk} of {pn} rounds inverted with inheritance"
        );
    }
    let table = &ran.stdout;
    for (id, _) in ISSUE_IDS {
        assert!(table.contains(&id[..20]), "table lacks {id}");
    }
    if fifo {
        assert!(
            notes_column(table).contains("priority inversion"),
            "{table}"
        );
    }

    assert!(objects_of(ran.pid).is_empty(), "{:?}", objects_of(ran.pid));
    assert!(
        eventually(Duration::from_secs(3), || ipcmark_processes().is_empty()),
        "{:?}",
        ipcmark_processes()
    );
}

#[test]
fn sigterm_during_the_deadlock_break_ends_the_run_and_keeps_what_was_measured() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("t.json");
    // The first figure's result is saved once it is measured.
    let (_, out) = signal_once_saved(
        &sb,
        &[
            "run",
            "rhealstone-preemption",
            "rhealstone-deadlock-break-no-pi",
            "--samples",
            "8",
            "--sample-time",
            "300ms",
            "--json",
            json.to_str().unwrap(),
        ],
        &json,
        "rhealstone-preemption",
        Duration::from_secs(30),
        libc::SIGTERM,
    );
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    let report = read_json(&json);
    assert_eq!(report["complete"], false);
    assert_eq!(report["results"][0]["status"], "ok");
    assert!(eventually(Duration::from_secs(3), || ipcmark_processes().is_empty()));
}

#[test]
fn bad_values_exit_2() {
    let sb = Sandbox::new();
    // An empty needle: the form of the refusal only.
    refused_all(
        &sb,
        &[
            (&["run", "rhealstone", "--samples", "0"][..], ""),
            (&["run", "rhealstone-task-swich"][..], ""),
            (&["run", "rhealstone", "--rt", "100"][..], ""),
            (&["run", "rhealstone", "--sample-time", "soon"][..], ""),
        ],
        None,
    );
}

/// The table's last column, its wrapped lines joined: the notes as one text,
/// whatever width the terminal table wrapped them at.
fn notes_column(table: &str) -> String {
    table
        .lines()
        .filter_map(|l| {
            l.rsplit_once('┆')
                .map(|(_, last)| last.trim_end_matches('│').trim())
        })
        .collect::<Vec<_>>()
        .join(" ")
}
