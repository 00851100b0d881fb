//! `ipcmark workload NAME --engine mpi`: without the cargo feature, one
//! line saying how to build it; with it, each workload at small scale under
//! `mpirun --oversubscribe`, its invariants and its JSON (every rank's node,
//! each process's rank and node), too few ranks refused, a corrupted answer
//! caught. No test asserts a time.

use crate::util::{Sandbox, stderr};
use std::time::Duration;

#[cfg(not(feature = "mpi"))]
#[test]
fn without_the_feature_engine_mpi_says_how_to_build_it() {
    let out = Sandbox::new().run(
        &["workload", "generator-calculator", "--engine", "mpi"],
        Duration::from_secs(20),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim(),
        "ipcmark: built without MPI: cargo build --release --features mpi"
    );
}

#[test]
fn engine_mpi_refuses_local_placement_and_handoff_needs_it() {
    let sb = Sandbox::new();
    for (args, says) in [
        (
            &["workload", "shared-counter", "--handoff", "5"][..],
            "--handoff needs --engine mpi",
        ),
        (
            &["workload", "philosophers", "--engine", "bogus"][..],
            "invalid value 'bogus'",
        ),
    ] {
        let out = sb.run(args, Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    #[cfg(feature = "mpi")]
    {
        let out = sb.run(
            &[
                "workload",
                "generator-calculator",
                "--engine",
                "mpi",
                "--place",
                "spread",
            ],
            Duration::from_secs(20),
        );
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains("--place does not apply to --engine mpi"),
            "{}",
            stderr(&out)
        );
    }
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use crate::util::{
        Sandbox, WORKLOAD_SCHEMA, mpirun, read_json, schema_errors, serial, stderr, stdout, uint,
    };
    use serde_json::Value;

    /// `mpirun -n RANKS ipcmark workload ARGS --runs 1 --json F --no-save`:
    /// the exit code, stderr, stdout and the report, checked against the
    /// schema when the run succeeded.
    fn workload(ranks: u32, args: &[&str]) -> (Option<i32>, String, String, Option<Value>) {
        let sb = Sandbox::new();
        let json = sb.path("w.json");
        let mut argv = vec!["workload"];
        argv.extend_from_slice(args);
        argv.extend_from_slice(&["--engine", "mpi", "--runs", "1", "--no-save", "--json"]);
        argv.push(json.to_str().unwrap());
        let out = mpirun(&sb, ranks, &argv);
        let (code, err, so) = (out.status.code(), stderr(&out), stdout(&out));
        assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
        let report = (code == Some(0)).then(|| {
            let r = read_json(&json);
            let errors = schema_errors(WORKLOAD_SCHEMA, &r);
            assert!(errors.is_empty(), "{args:?}: {errors:#?}");
            r
        });
        (code, err, so, report)
    }

    /// The one run of a report, which succeeded and names every rank's node.
    fn the_run(report: &Value, ranks: usize) -> &Value {
        assert_eq!(report["complete"], true);
        assert_eq!(report["settings"]["parameters"]["engine"], "mpi");
        let run = &report["configurations"][0]["runs"][0];
        assert_eq!(run["status"], "ok", "{run}");
        let places = run["ranks"].as_array().expect("ranks");
        assert_eq!(places.len(), ranks);
        for (i, p) in places.iter().enumerate() {
            assert_eq!(uint(&p["rank"]), i as u64);
            assert!(!p["host"].as_str().unwrap().is_empty(), "{p}");
        }
        for p in run["processes"].as_array().unwrap() {
            let rank = uint(&p["rank"]) as usize;
            assert_eq!(p["host"], places[rank]["host"], "{p}");
            assert_eq!(p["node"], places[rank]["node"], "{p}");
        }
        run
    }

    fn metric(run: &Value, name: &str) -> f64 {
        run["metrics"][name]
            .as_f64()
            .unwrap_or_else(|| panic!("{name}"))
    }

    #[test]
    fn philosophers_with_an_arbiter_rank_eat_in_pairs_and_every_meal_was_granted() {
        let _g = serial();
        let (code, err, out, report) = workload(
            6,
            &[
                "philosophers",
                "--duration",
                "1s",
                "--think",
                "2ms",
                "--eat",
                "1ms",
            ],
        );
        assert_eq!(code, Some(0), "{err}\n{out}");
        let run = the_run(report.as_ref().unwrap(), 6);
        let ps = run["processes"].as_array().unwrap();
        assert_eq!(ps.len(), 5);
        let meals: Vec<u64> = ps.iter().map(|p| uint(&p["ops"])).collect();
        assert!(meals.iter().all(|&m| m > 0), "{meals:?}");
        assert_eq!(metric(run, "total_meals"), meals.iter().sum::<u64>() as f64);
        // The arbiter checked its table after every grant and release.
        assert!(metric(run, "table_checks") >= 2.0 * meals.iter().sum::<u64>() as f64);
        let jain = metric(run, "jain_fairness");
        assert!(jain > 0.0 && jain <= 1.0, "{jain}");
        assert_eq!(run["ranks"][0]["role"], "arbiter");
        assert!(out.contains("where each rank ran"), "{out}");
        assert!(out.contains("arbiter"), "{out}");
    }

    #[test]
    fn generator_calculator_checks_every_element_and_hands_the_calculator_on() {
        let _g = serial();
        let (code, err, out, report) = workload(
            2,
            &["generator-calculator", "--vector", "3", "--ops", "2000"],
        );
        assert_eq!(code, Some(0), "{err}\n{out}");
        let run = the_run(report.as_ref().unwrap(), 2);
        assert_eq!(metric(run, "verified_elements"), 6000.0);
        assert!(run["metrics"].get("handoffs").is_none(), "{run}");
        assert!(!out.contains("hand-off"), "{out}");

        // Three ranks, a hand-off every 500 vectors: 3 of them, alternating
        // ranks 1 and 2, every vector still answered and checked.
        let (code, err, out, report) = workload(
            3,
            &["generator-calculator", "--ops", "2000", "--handoff", "500"],
        );
        assert_eq!(code, Some(0), "{err}\n{out}");
        let run = the_run(report.as_ref().unwrap(), 3);
        assert_eq!(metric(run, "handoffs"), 3.0);
        assert!(metric(run, "handoff_mean_ns") > 0.0);
        assert_eq!(metric(run, "verified_elements"), 2000.0);
        let ps = run["processes"].as_array().unwrap();
        let served: Vec<u64> = ps.iter().map(|p| uint(&p["ops"])).collect();
        assert_eq!(served, [2000, 1000, 1000]);
        assert!(out.contains("hand-off (application-level)"), "{out}");
        // A hand-off is never reported as a migration.
        assert!(!out.contains("migrated") && !out.contains("moved"), "{out}");
    }

    #[test]
    fn shared_counter_in_a_window_reaches_the_threshold_exactly() {
        let _g = serial();
        for ranks in [2, 3] {
            let (code, err, out, report) = workload(
                ranks,
                &["shared-counter", "--array", "400B", "--threshold", "20000"],
            );
            assert_eq!(code, Some(0), "{err}\n{out}");
            let run = the_run(report.as_ref().unwrap(), ranks as usize);
            assert_eq!(metric(run, "final_sum"), 20000.0);
            let passes: u64 = run["processes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| uint(&p["ops"]))
                .sum();
            assert_eq!(passes, 200);
            // With three ranks rank 0 only holds the array.
            let counters: Vec<u64> = run["processes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| uint(&p["rank"]))
                .collect();
            assert_eq!(counters, if ranks == 2 { [0, 1] } else { [1, 2] });
        }
    }

    #[test]
    fn too_few_ranks_is_refused_with_one_line() {
        let _g = serial();
        for (ranks, args, need) in [
            (
                2,
                &["philosophers", "--duration", "1s"][..],
                "needs 6 ranks",
            ),
            (
                2,
                &["generator-calculator", "--ops", "10", "--handoff", "5"][..],
                "needs 3 ranks",
            ),
            (1, &["shared-counter"][..], "needs 2 ranks"),
        ] {
            let (code, err, _, _) = workload(ranks, args);
            assert_ne!(code, Some(0), "{args:?}");
            let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("ipcmark:")).collect();
            assert_eq!(ours.len(), 1, "{args:?}: {err}");
            assert!(ours[0].contains(need), "{args:?}: {err}");
        }
    }

    #[test]
    fn a_corrupted_answer_or_increment_fails_the_run_with_one_line() {
        let _g = serial();
        for (ranks, args, says) in [
            (
                2,
                &["generator-calculator", "--ops", "100", "--fault", "corrupt"][..],
                "came back",
            ),
            (
                2,
                &["shared-counter", "--fault", "corrupt"][..],
                "check failed",
            ),
        ] {
            let (code, err, _, _) = workload(ranks, args);
            assert_eq!(code, Some(1), "{args:?}: {err}");
            let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("ipcmark:")).collect();
            assert_eq!(ours.len(), 1, "{args:?}: {err}");
            assert!(ours[0].contains(says), "{args:?}: {err}");
        }
    }
}
