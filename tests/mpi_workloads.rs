//! `ipcmark workload NAME --engine mpi`: without the cargo feature, one
//! line saying how to build it; with it, each workload at small scale under
//! `mpirun --oversubscribe`, its invariants and its JSON (every rank's node,
//! each process's rank and node), `--place` giving one configuration per
//! cast on the ranks it names, too few ranks and bad placements refused, a
//! corrupted answer caught. No test asserts a time.

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
fn engine_mpi_refuses_migration_and_handoff_needs_it() {
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
                "--migrate",
                "generator:at=1:cpu=0",
            ],
            Duration::from_secs(20),
        );
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains("--migrate does not apply to --engine mpi"),
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

    /// Each configuration's cast: (rank, role) of every process of its
    /// one run, checked against the configuration's `roles`.
    fn cast(config: &Value) -> Vec<(u64, String)> {
        let run = &config["runs"][0];
        assert_eq!(run["status"], "ok", "{run}");
        let places = run["ranks"].as_array().expect("ranks");
        for r in config["roles"].as_array().expect("roles") {
            let rank = uint(&r["rank"]) as usize;
            assert_eq!(places[rank]["role"], r["role"], "{config}");
            assert_eq!(places[rank]["node"], r["node"], "{config}");
            assert_eq!(places[rank]["host"], r["host"], "{config}");
        }
        run["processes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (uint(&p["rank"]), p["role"].as_str().unwrap().to_string()))
            .collect()
    }

    #[test]
    fn generator_calculator_placements_are_configurations_on_the_named_ranks() {
        let _g = serial();
        let (code, err, out, report) = workload(
            3,
            &[
                "generator-calculator",
                "--vector",
                "3",
                "--ops",
                "500",
                "--place",
                "0,1;0,2",
            ],
        );
        assert_eq!(code, Some(0), "{err}\n{out}");
        let report = report.unwrap();
        let configs = report["configurations"].as_array().unwrap();
        assert_eq!(configs.len(), 2);
        for (c, calculator) in configs.iter().zip([1u64, 2]) {
            let name = c["name"].as_str().unwrap();
            assert!(
                name.starts_with(&format!("ranks 0,{calculator} (nodes ")),
                "{name}"
            );
            assert_eq!(
                cast(c),
                [(0, "generator".into()), (calculator, "calculator".into())]
            );
            let run = &c["runs"][0];
            // Every element of every vector checked, on the named ranks.
            assert_eq!(metric(run, "verified_elements"), 1500.0);
            assert_eq!(uint(&run["processes"][1]["ops"]), 500);
            let idle = 3 - calculator;
            assert_eq!(run["ranks"][idle as usize]["role"], "idle", "{run}");
            assert!(c["summary"]["factor"].as_f64().unwrap() >= 1.0);
            assert!(out.contains(name), "{out}");
        }
        assert!(
            out.contains("calculator / idle") && out.contains("idle / calculator"),
            "{out}"
        );
    }

    #[test]
    fn shared_counter_and_philosophers_take_their_roles_from_the_placement() {
        let _g = serial();
        // The array on rank 2, counted by ranks 0 and 1.
        let (code, err, out, report) = workload(
            3,
            &[
                "shared-counter",
                "--array",
                "400B",
                "--threshold",
                "20000",
                "--place",
                "2,0,1",
            ],
        );
        assert_eq!(code, Some(0), "{err}\n{out}");
        let c = &report.unwrap()["configurations"][0];
        assert_eq!(cast(c), [(0, "counter 1".into()), (1, "counter 2".into())]);
        assert_eq!(c["runs"][0]["ranks"][2]["role"], "holds the array");
        assert_eq!(metric(&c["runs"][0], "final_sum"), 20000.0);
        // The arbiter on rank 3, rank 0 idle: every meal still granted.
        let (code, err, out, report) = workload(
            4,
            &[
                "philosophers",
                "--philosophers",
                "2",
                "--duration",
                "1s",
                "--think",
                "2ms",
                "--eat",
                "1ms",
                "--place",
                "3,1,2",
            ],
        );
        assert_eq!(code, Some(0), "{err}\n{out}");
        let c = &report.unwrap()["configurations"][0];
        assert_eq!(
            cast(c),
            [(1, "philosopher 1".into()), (2, "philosopher 2".into())]
        );
        let run = &c["runs"][0];
        assert_eq!(run["ranks"][3]["role"], "arbiter");
        assert_eq!(run["ranks"][0]["role"], "idle");
        assert!(metric(run, "total_meals") > 0.0, "{run}");
    }

    #[test]
    fn bad_placements_are_refused_with_one_line_and_exit_2() {
        let _g = serial();
        for (place, says) in [
            ("0,3", "no rank 3 in a job of 3 ranks"),
            ("1,1", "rank 1 is named twice"),
            ("0,1,2", "a placement names 2, one per role"),
            ("0,1;packed", "a placement names the ranks"),
            ("0,1;;0,2", "empty placement"),
        ] {
            let (code, err, _, _) = workload(
                3,
                &["generator-calculator", "--ops", "10", "--place", place],
            );
            assert_eq!(code, Some(2), "{place}: {err}");
            let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("ipcmark:")).collect();
            assert_eq!(ours.len(), 1, "{place}: {err}");
            assert!(ours[0].contains(says), "{place}: {err}");
        }
    }

    /// Across ranks as locally: rank 0 prints the page that `show` prints
    /// of the report it saved, byte for byte.
    #[test]
    fn rank_0_prints_the_page_show_prints_of_its_report() {
        let _g = serial();
        let sb = Sandbox::new();
        let json = sb.path("w.json");
        let json = json.to_str().unwrap();
        let ran = mpirun(
            &sb,
            2,
            &[
                "workload",
                "shared-counter",
                "--array",
                "400B",
                "--threshold",
                "2000",
                "--engine",
                "mpi",
                "--runs",
                "1",
                "--no-save",
                "--json",
                json,
            ],
        );
        assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
        let shown = sb.run(&["show", json], std::time::Duration::from_secs(30));
        assert!(shown.status.success(), "{}", stderr(&shown));
        let (page, again) = (stdout(&ran), stdout(&shown));
        assert!(page.contains("shared-counter across MPI ranks"), "{page}");
        assert_eq!(page, again, "workload:\n{page}\nshow:\n{again}");
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
    fn shared_counter_hands_each_counter_to_its_spare_and_still_reaches_the_threshold() {
        let _g = serial();
        // Four ranks: rank 0 holds the array and plays counter 1 with rank
        // 2 as its spare; rank 1 plays counter 2 with rank 3. 200 passes in
        // all, a hand-off every 20 passes of a counter.
        let (code, err, out, report) = workload(
            4,
            &[
                "shared-counter",
                "--array",
                "400B",
                "--threshold",
                "20000",
                "--handoff",
                "20",
            ],
        );
        assert_eq!(code, Some(0), "{err}\n{out}");
        let report = report.unwrap();
        assert_eq!(report["settings"]["parameters"]["handoff_every"], 20);
        let run = the_run(&report, 4);
        assert_eq!(metric(run, "final_sum"), 20000.0);
        let ps = run["processes"].as_array().unwrap();
        let who: Vec<(u64, &str)> = ps
            .iter()
            .map(|p| (uint(&p["rank"]), p["role"].as_str().unwrap()))
            .collect();
        assert_eq!(
            who,
            [
                (0, "counter 1 (holds the array)"),
                (1, "counter 2"),
                (2, "counter 1 spare 1"),
                (3, "counter 2 spare 1")
            ]
        );
        let passes = |p: &Value| uint(&p["counters"]["passes"]);
        let handoffs = |p: &Value| uint(&p["counters"]["handoffs"]);
        assert_eq!(ps.iter().map(passes).sum::<u64>(), 200);
        // Each counter's passes, whichever rank made them, and one hand-off
        // after each 20 of them.
        let mut made = 0;
        for ring in [[0, 2], [1, 3]] {
            let role: u64 = ring.iter().map(|&i| passes(&ps[i])).sum();
            let n: u64 = ring.iter().map(|&i| handoffs(&ps[i])).sum();
            assert_eq!(n, role / 20, "{run}");
            made += n;
        }
        assert!(made >= 9, "{run}");
        assert_eq!(metric(run, "handoffs"), made as f64);
        assert!(metric(run, "handoff_mean_ns") > 0.0);
        assert!(metric(run, "handoff_max_ns") >= metric(run, "handoff_mean_ns"));
        assert!(out.contains("hand-off (application-level)"), "{out}");
        // A hand-off is never reported as a migration.
        assert!(!out.contains("migrated") && !out.contains("moved"), "{out}");

        // A placement: the holder on its own, spares named after the roles.
        let (code, err, out, report) = workload(
            5,
            &[
                "shared-counter",
                "--array",
                "400B",
                "--threshold",
                "10000",
                "--handoff",
                "10",
                "--place",
                "4,3,2,1,0",
            ],
        );
        assert_eq!(code, Some(0), "{err}\n{out}");
        let run = the_run(report.as_ref().unwrap(), 5);
        assert_eq!(metric(run, "final_sum"), 10000.0);
        assert_eq!(run["ranks"][4]["role"], "holds the array");
        assert_eq!(run["ranks"][1]["role"], "counter 1 spare 1");
        assert_eq!(run["ranks"][0]["role"], "counter 2 spare 1");
        assert!(metric(run, "handoffs") >= 8.0, "{run}");
    }

    #[test]
    fn philosophers_hand_each_role_to_its_spare_and_every_meal_was_still_granted() {
        let _g = serial();
        // Two philosophers, each with a spare: ranks 1 and 3 play
        // philosopher 1, ranks 2 and 4 philosopher 2, handed on every 3
        // meals. Rank 0 checks that each philosopher's meals, over both its
        // ranks, equal what the arbiter granted it.
        let (code, err, out, report) = workload(
            5,
            &[
                "philosophers",
                "--philosophers",
                "2",
                "--handoff",
                "3",
                "--duration",
                "1s",
                "--think",
                "2ms",
                "--eat",
                "1ms",
            ],
        );
        assert_eq!(code, Some(0), "{err}\n{out}");
        let report = report.unwrap();
        assert_eq!(report["settings"]["parameters"]["handoff_every"], 3);
        let run = the_run(&report, 5);
        let ps = run["processes"].as_array().unwrap();
        let roles: Vec<&str> = ps.iter().map(|p| p["role"].as_str().unwrap()).collect();
        assert_eq!(
            roles,
            [
                "philosopher 1",
                "philosopher 2",
                "philosopher 1 spare 1",
                "philosopher 2 spare 1"
            ]
        );
        let meals = |p: &Value| uint(&p["counters"]["meals"]);
        let handoffs = |p: &Value| uint(&p["counters"]["handoffs"]);
        let mut made = 0;
        for ring in [[0, 2], [1, 3]] {
            let role: u64 = ring.iter().map(|&i| meals(&ps[i])).sum();
            assert!(role >= 3, "{run}");
            let n: u64 = ring.iter().map(|&i| handoffs(&ps[i])).sum();
            assert_eq!(n, role / 3, "{run}");
            made += n;
        }
        assert!(made >= 2, "{run}");
        assert_eq!(metric(run, "handoffs"), made as f64);
        assert!(metric(run, "handoff_mean_ns") > 0.0);
        assert_eq!(
            metric(run, "total_meals"),
            ps.iter().map(meals).sum::<u64>() as f64
        );
        assert!(metric(run, "table_checks") >= 2.0 * metric(run, "total_meals"));
        assert!(out.contains("hand-off (application-level)"), "{out}");
        assert!(!out.contains("migrated") && !out.contains("moved"), "{out}");
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
            (
                3,
                &["shared-counter", "--handoff", "5"][..],
                "needs 4 ranks",
            ),
            (
                5,
                &["shared-counter", "--handoff", "5", "--place", "0,1,2,3"][..],
                "at least one spare for each counter",
            ),
            (
                4,
                &["philosophers", "--philosophers", "2", "--handoff", "5"][..],
                "needs 5 ranks",
            ),
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
            (
                4,
                &["shared-counter", "--fault", "corrupt", "--handoff", "7"][..],
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
