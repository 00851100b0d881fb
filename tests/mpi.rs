//! `ipcmark mpi`: without the cargo feature, one line saying how to build
//! it; with it (`cargo test --features mpi`, OpenMPI's mpirun on PATH),
//! ping-pong, bandwidth and message rate between ranks under `mpirun
//! --oversubscribe`, every rank's place in the report's environment, and
//! ping-pong across the testbed's two namespaces as two nodes (`testbed
//! mpirun`, as root).

#[cfg(not(feature = "mpi"))]
#[test]
fn without_the_feature_mpi_says_how_to_build_it() {
    use crate::util::{Sandbox, stderr};
    use std::time::Duration;
    let out = Sandbox::new().run(&["mpi", "pingpong"], Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim(),
        "ipcmark: built without MPI: cargo build --release --features mpi"
    );
}

#[cfg(not(feature = "mpi"))]
#[test]
fn without_the_feature_fleet_run_says_it_needs_mpi() {
    use crate::util::{Sandbox, stderr};
    use std::time::Duration;
    let out = Sandbox::new().run(&["fleet", "run", "--quick"], Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--features mpi") && err.contains("mpirun"),
        "{err}"
    );
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use crate::util::{
        RUN_SCHEMA, SHORT, Sandbox, TestBed, bin, mpirun, read_json, results, schema_errors,
        serial, stderr, stdout, wait_with_deadline,
    };
    use std::process::Command;
    use std::time::Duration;

    #[test]
    fn pingpong_between_two_ranks_gives_checked_figures_with_the_local_schema() {
        let _g = serial();
        // A third rank only waits at the barrier: the run still ends.
        for ranks in [2, 3] {
            let sb = Sandbox::new();
            let json = sb.path("mpi.json");
            let json_arg = json.to_str().unwrap();
            let mut args = vec!["mpi", "pingpong", "--sizes", "8,1K", "--json", json_arg];
            args.extend_from_slice(SHORT);
            let out = mpirun(&sb, ranks, &args);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            assert!(stdout(&out).contains("mpi"), "{}", stdout(&out));
            let report = checked_report(&json, ranks as u64);
            // The deadline rank 0's watch held (--timeout's default).
            assert_eq!(report["settings"]["budget"]["timeout"], 30000.0);
            let rs = results(&report);
            let sizes: Vec<u64> = rs
                .iter()
                .map(|r| r["size_bytes"].as_u64().unwrap())
                .collect();
            assert_eq!(sizes, [8, 1024]);
            for r in rs {
                assert_eq!(r["benchmark"], "mpi", "{r}");
                assert_eq!(r["mode"], "pingpong", "{r}");
                assert_eq!(r["status"], "ok", "{r}");
                assert!(r["verified_round_trips"].as_u64().unwrap() > 0, "{r}");
                assert!(r["timed_round_trips"].as_u64().unwrap() > 0, "{r}");
                let note = r["note"].as_str().unwrap();
                assert!(
                    note.contains("rank 0 on") && note.contains("rank 1 on"),
                    "{note}"
                );
            }
        }
    }

    /// Checks what every `ipcmark mpi` report holds: schema-valid, the MPI
    /// build, and one environment entry per rank, in rank order.
    fn checked_report(json: &std::path::Path, ranks: u64) -> serde_json::Value {
        let report = read_json(json);
        let errors = schema_errors(RUN_SCHEMA, &report);
        assert!(errors.is_empty(), "{errors:#?}");
        assert_eq!(report["build"]["features"], serde_json::json!(["mpi"]));
        let job = &report["environment"]["mpi"];
        assert_eq!(job["size"], ranks, "{job}");
        assert!(
            job["library"].as_str().is_some_and(|l| !l.is_empty()),
            "{job}"
        );
        let places = job["ranks"].as_array().expect("environment.mpi.ranks");
        assert_eq!(places.len() as u64, ranks, "{job}");
        for (i, p) in places.iter().enumerate() {
            assert_eq!(p["rank"], i as u64, "{p}");
            assert!(p["pid"].as_u64().unwrap() > 0, "{p}");
            assert!(!p["allowed_cpus"].as_array().unwrap().is_empty(), "{p}");
        }
        report
    }

    /// A stream figure of `ipcmark mpi` that was measured and whose every
    /// message arrived: counts equal and non-zero, some compared whole.
    fn assert_checked_stream(r: &serde_json::Value, pairs: u64) {
        assert_eq!(r["mode"], "stream", "{r}");
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["pairs"], pairs, "{r}");
        assert_eq!(r["messages_per_window"], 4, "{r}");
        let sent = r["sent"].as_u64().unwrap();
        assert!(sent > 0, "{r}");
        assert_eq!(r["received"].as_u64(), Some(sent), "{r}");
        assert_eq!(r["loss_ratio"], 0.0, "{r}");
        assert!(r["verified_messages"].as_u64().unwrap() > 0, "{r}");
        assert!(r["throughput_bytes_per_s"].as_f64().unwrap() > 0.0, "{r}");
    }

    #[test]
    fn bandwidth_from_rank_0_to_1_checks_every_message_and_records_both_ranks() {
        let _g = serial();
        let sb = Sandbox::new();
        let json = sb.path("bw.json");
        let mut args = vec![
            "mpi",
            "bandwidth",
            "--sizes",
            "8,4K",
            "--in-flight",
            "4",
            "--no-save",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(SHORT);
        let out = mpirun(&sb, 2, &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        // The ranks' table on the page.
        let page = stdout(&out);
        assert!(page.contains("2 ranks on 1 node"), "{page}");
        assert!(page.contains("rank 1 "), "{page}");
        let report = checked_report(&json, 2);
        let rs = results(&report);
        assert_eq!(rs.len(), 2);
        for r in rs {
            assert_eq!(r["benchmark"], "mpi", "{r}");
            assert_checked_stream(r, 1);
            assert_eq!(r["messages_per_window"], 4, "{r}");
            assert!(r["note"].as_str().unwrap().contains("rank 0→1"), "{r}");
        }
    }

    #[test]
    fn rate_over_two_and_four_ranks_counts_every_pair() {
        let _g = serial();
        for (ranks, pairs) in [(2, 1), (4, 2)] {
            let sb = Sandbox::new();
            let json = sb.path("rate.json");
            let mut args = vec![
                "mpi",
                "rate",
                "--sizes",
                "8",
                // The old name of --in-flight, still read.
                "--window",
                "4",
                "--no-save",
                "--json",
                json.to_str().unwrap(),
            ];
            args.extend_from_slice(SHORT);
            let out = mpirun(&sb, ranks, &args);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            let report = checked_report(&json, ranks as u64);
            let rs = results(&report);
            assert_eq!(rs.len(), 1);
            assert_eq!(rs[0]["benchmark"], "mpi-rate", "{}", rs[0]);
            assert_checked_stream(&rs[0], pairs);
            assert_eq!(rs[0]["messages_per_window"], 4, "{}", rs[0]);
            let note = rs[0]["note"].as_str().unwrap();
            let first = format!("0→{}", ranks / 2);
            assert!(
                note.contains(&first) && note.contains("between barriers"),
                "{note}"
            );
        }
    }

    #[test]
    fn rate_refuses_an_odd_number_of_ranks_in_one_line() {
        let _g = serial();
        let sb = Sandbox::new();
        let out = mpirun(&sb, 3, &["mpi", "rate", "--sizes", "8", "--no-save"]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("ipcmark")).collect();
        assert_eq!(
            ours,
            [
                "ipcmark: mpi rate needs an even number of ranks, 2 or more (it pairs rank i with \
              i + N/2); got 3: mpirun -n 4 ipcmark mpi rate"
            ],
            "{err}"
        );
    }

    #[test]
    fn one_rank_is_refused_with_the_command_that_works() {
        let _g = serial();
        let sb = Sandbox::new();
        let out = mpirun(&sb, 1, &["mpi", "pingpong", "--sizes", "8", "--no-save"]);
        assert_ne!(out.status.code(), Some(0));
        assert!(
            stderr(&out).contains("ipcmark: mpi pingpong needs two ranks: mpirun -n 2"),
            "{}",
            stderr(&out)
        );
    }

    /// The processes in a namespace (`ip netns pids`).
    fn pids_in(ns: &str) -> Vec<String> {
        let out = Command::new("ip")
            .args(["netns", "pids", ns])
            .output()
            .expect("ip netns pids");
        stdout(&out)
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn pingpong_across_the_testbed_runs_one_rank_on_each_node_and_leaves_nothing() {
        let _g = serial();
        let tb = match TestBed::try_new("none") {
            Ok(tb) => tb,
            Err(why) => {
                eprintln!("skipped: {why}");
                return;
            }
        };
        let sb = Sandbox::new();
        let json = sb.path("mpi.json");
        let mut args = vec!["testbed", "mpirun", "--name", &tb.name, "--", "-n", "2"];
        let exe = bin();
        let exe = exe.to_str().unwrap();
        let json_arg = json.to_str().unwrap();
        args.extend([exe, "mpi", "pingpong", "--sizes", "8", "--json", json_arg]);
        args.extend_from_slice(SHORT);
        // Without OpenMPI's root variables: `testbed mpirun` sets them.
        let child = sb
            .cmd(&args)
            .env_remove("OMPI_ALLOW_RUN_AS_ROOT")
            .env_remove("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")
            .spawn()
            .expect("spawn ipcmark testbed mpirun");
        let out = wait_with_deadline(child, Duration::from_secs(120));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let report = read_json(&json);
        let rs = results(&report);
        assert_eq!(rs.len(), 1, "{report}");
        let r = &rs[0];
        assert_eq!(r["status"], "ok", "{r}");
        assert!(r["verified_round_trips"].as_u64().unwrap() > 0, "{r}");
        // The two namespaces are two nodes, and each says its own name.
        let note = r["note"].as_str().unwrap();
        for want in [
            format!("rank 0 on {} (node 0)", tb.client_ns),
            format!("rank 1 on {} (node 1)", tb.agent_ns),
        ] {
            assert!(note.contains(&want), "{want:?} in {note}");
        }
        // Nothing left: no process on either node, no hostfile (nor
        // OpenMPI's session directory) in TMPDIR.
        for ns in [&tb.client_ns, &tb.agent_ns] {
            assert_eq!(pids_in(ns), Vec::<String>::new(), "left in {ns}");
        }
        let left: Vec<String> = std::fs::read_dir(sb.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "data" && n != "mpi.json")
            .collect();
        assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    }

    /// `mpi pingpong` on two ranks with `extra` and the short budget,
    /// writing the sandbox's `mpi.json`.
    fn pingpong(sb: &Sandbox, extra: &[&str]) -> std::process::Output {
        let json = sb.path("mpi.json");
        let mut args = vec!["mpi", "pingpong", "--json", json.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.extend_from_slice(SHORT);
        mpirun(sb, 2, &args)
    }

    /// The processes whose command line holds `marker` (a sandbox path).
    fn processes_with(marker: &str) -> Vec<String> {
        let out = Command::new("pgrep").args(["-f", marker]).output().unwrap();
        stdout(&out).lines().map(str::to_string).collect()
    }

    #[test]
    fn a_peer_that_stops_answering_ends_the_job_at_the_timeout_with_one_line_of_ours() {
        let _g = serial();
        let sb = Sandbox::new();
        let json = sb.path("mpi.json");
        let out = pingpong(&sb, &["--sizes", "8", "--timeout", "2s", "--fault", "hang"]);
        assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
        let err = stderr(&out);
        let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("ipcmark:")).collect();
        assert_eq!(
            ours,
            [
                "ipcmark: rank 0: no progress for 2 s while waiting in MPI (--timeout) for rank 1: ending the MPI job"
            ],
            "{err}"
        );
        assert_eq!(processes_with(json.to_str().unwrap()), Vec::<String>::new());
    }

    #[test]
    fn a_corrupting_echo_fails_every_figure_and_the_run_and_the_peer_serves_on() {
        let _g = serial();
        let sb = Sandbox::new();
        let json = sb.path("mpi.json");
        let out = pingpong(&sb, &["--sizes", "8,1K", "--fault", "corrupt"]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let report = checked_report(&json, 2);
        let rs = results(&report);
        // Both figures were asked of rank 1, which echoed the second one
        // after the first failed: each failed on its own check.
        assert_eq!(rs.len(), 2, "{report}");
        for r in rs {
            assert_eq!(r["status"], "failed", "{r}");
            let why = r["error"].as_str().unwrap();
            assert!(why.contains("came back corrupted"), "{why}");
        }
    }

    /// `fleet run` on two ranks with the short budget, storing into the
    /// sandbox's `fleet.sqlite`, with `extra`.
    fn fleet_run(sb: &Sandbox, extra: &[&str]) -> (std::process::Output, std::path::PathBuf) {
        let db = sb.path("fleet.sqlite");
        let mut args = vec!["fleet", "run", "pipe", "--sizes", "64"];
        args.extend_from_slice(&["--db", db.to_str().unwrap()]);
        args.extend_from_slice(extra);
        args.extend_from_slice(SHORT);
        (mpirun(sb, 2, &args), db)
    }

    /// Run `id` of the history `db` as `export` writes it, if it is there.
    fn stored(sb: &Sandbox, db: &std::path::Path, id: &str) -> Option<serde_json::Value> {
        let out = sb.run(
            &["export", id, "--db", db.to_str().unwrap()],
            Duration::from_secs(20),
        );
        out.status
            .success()
            .then(|| serde_json::from_slice(&out.stdout).expect("export writes JSON"))
    }

    fn this_host() -> String {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap()
            .trim()
            .to_string()
    }

    #[test]
    fn fleet_run_measures_the_ranks_one_after_the_other_into_one_history() {
        let _g = serial();
        let sb = Sandbox::new();
        let (out, db) = fleet_run(&sb, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let page = stdout(&out);
        assert!(
            page.contains("2 ranks on 1 host, measured one after the other, never at once"),
            "{page}"
        );
        for rank in ["rank 0", "rank 1"] {
            let line = page.lines().find(|l| l.trim_start().starts_with(rank));
            let line = line.unwrap_or_else(|| panic!("{rank} listed: {page}"));
            assert!(line.contains("1 figure measured; run "), "{line}");
        }
        for id in ["1", "2"] {
            let run = stored(&sb, &db, id).unwrap_or_else(|| panic!("run {id} stored"));
            assert_eq!(run["environment"]["hostname"], this_host().as_str());
            assert_eq!(run["complete"], true);
            assert_eq!(results(&run).len(), 1, "{run}");
        }
        assert!(stored(&sb, &db, "3").is_none(), "one run per rank");
    }

    #[test]
    fn a_rank_killed_on_its_turn_is_named_with_its_host_and_rank_0s_run_is_kept() {
        let _g = serial();
        let sb = Sandbox::new();
        let (out, db) = fleet_run(&sb, &["--rank-fault", "die-on-turn"]);
        assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
        let err = stderr(&out);
        let line = format!(
            "ipcmark: fleet run: rank 1 on {} stopped before it reported; \
             kept in the history: rank 0's run (id 1)",
            this_host()
        );
        assert!(err.lines().any(|l| l == line), "{err}");
        assert!(stored(&sb, &db, "1").is_some(), "rank 0's run kept");
        assert!(stored(&sb, &db, "2").is_none(), "{err}");
        assert_eq!(processes_with(db.to_str().unwrap()), Vec::<String>::new());
    }
}
