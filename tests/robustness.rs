//! Robustness of a run: a corrupting, dead or silent peer fails its figure
//! and the run goes on; SIGINT and SIGTERM keep what was measured; after a
//! success, a failure, a signal or `kill -9` and `clean`, nothing is left
//! behind. No test asserts a time.

use crate::util::*;
use std::time::Duration;

#[test]
fn corrupting_channel_is_caught_in_timed_loop_and_in_content_check() {
    let _g = serial();
    let sb = Sandbox::new();
    // At 1 byte the flipped byte is the sequence number; at 4K it is payload
    // only the content check sees.
    let ran = Run::new(&sb, &["run", "pipe", "unix-stream"])
        .sizes("1,4K")
        .args(&["--fault", "corrupt"])
        .json()
        .short()
        .limit(Duration::from_secs(60))
        .exits(1);
    for r in results(&ran.report) {
        assert_eq!(r["status"], "failed", "{r}");
        assert!(r["error"].as_str().unwrap().contains("corrupted"), "{r}");
        assert!(
            r.get("latency_ns").is_none(),
            "a corrupt channel produced a figure: {r}"
        );
    }
    assert!(ran.stdout.contains("FAILED"), "table shows the failure");
}

#[test]
fn dead_peer_fails_the_figure_and_the_run_goes_on() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "pipe", "unix-stream"])
        .sizes("64")
        .args(&["--fault", "die", "--timeout", "2s"])
        .json()
        .short()
        .limit(Duration::from_secs(30))
        .exits(1);
    let rs = results(&ran.report);
    assert_eq!(rs.len(), 2, "the run went on after the first failure");
    for r in rs {
        assert_eq!(r["status"], "failed", "{r}");
    }
    assert!(ran.stderr.contains("failed"), "{}", ran.stderr);
    assert!(ipcmark_processes().is_empty());
}

/// A server thread that returns leaves no end-of-file on shared memory or
/// message queues; the engine must still report it as ended, not time out.
#[test]
fn dead_thread_peer_is_reported_as_ended_for_every_mechanism() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run"])
        .sizes("64")
        .args(&["--peer", "thread", "--fault", "die", "--timeout", "20s"])
        .json()
        .short()
        .exits(1);
    for r in results(&ran.report) {
        if r["benchmark"] == "pipe-self" {
            // No peer to kill: it must simply work after thread-peer figures.
            assert_eq!(r["status"], "ok", "{r}");
            continue;
        }
        let err = r["error"]
            .as_str()
            .unwrap_or_else(|| panic!("not failed: {r}"));
        assert!(
            err.contains("ended unexpectedly") || err.contains("closed the channel"),
            "{}: {err}",
            r["benchmark"]
        );
    }
}

#[test]
fn silent_peer_times_out() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "pipe"])
        .sizes("64")
        .args(&["--fault", "hang", "--timeout", "500ms"])
        .json()
        .short()
        .limit(Duration::from_secs(30))
        .exits(1);
    let r = &results(&ran.report)[0];
    assert!(
        r["error"].as_str().unwrap().contains("did not answer"),
        "{r}"
    );
    assert!(ipcmark_processes().is_empty());
}

#[test]
fn nothing_is_left_after_runs_that_succeed_or_fail() {
    let _g = serial();
    let sb = Sandbox::new();
    for extra in [&[][..], &["--fault", "die", "--timeout", "2s"][..]] {
        let ran = Run::new(&sb, &["run"])
            .sizes("64")
            .short()
            .args(extra)
            .run();
        let pid = ran.pid;
        assert!(ran.code().is_some(), "{}", ran.stderr);
        assert!(
            objects_of(pid).is_empty(),
            "left behind by {extra:?}: {:?}",
            objects_of(pid)
        );
        assert!(sb.leftover_tmp().is_empty(), "{:?}", sb.leftover_tmp());
        assert!(
            ipcmark_processes().is_empty(),
            "processes left: {:?}",
            ipcmark_processes()
        );
    }
}

#[test]
fn sigint_and_sigterm_release_everything_and_keep_partial_results() {
    let _g = serial();
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let sb = Sandbox::new();
        let json = sb.path("i.json");
        // Long samples so the signal lands mid-measurement. signal-sigqueue
        // runs alone (signals are process-wide) and is saved first; the
        // signal then lands in the sweep of the other four.
        let (pid, out) = signal_after_first_save(
            &sb,
            &[
                "run",
                "signal-sigqueue",
                "pipe",
                "sysv-msg",
                "fifo",
                "shm-sysv-sem",
                "--sizes",
                "64",
                "--sample-time",
                "200ms",
                "--json",
                json.to_str().unwrap(),
            ],
            &json,
            Duration::from_secs(10),
            sig,
        );
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
        let report = read_json(&json);
        assert_eq!(report["complete"], false);
        let rs = results(&report);
        assert!(
            rs.iter().any(|r| r["status"] == "ok"),
            "partial results were kept: {rs:?}"
        );
        assert_released(&sb, pid);
    }
}

#[test]
fn a_stop_in_a_later_pass_keeps_the_passes_before_it_whole() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("p.json");
    // signal-sigqueue runs alone, then pipe and fifo sweep together; the
    // signal lands once a second pass has been merged and saved.
    let (pid, out) = signal_once_saved(
        &sb,
        &[
            "run",
            "signal-sigqueue",
            "pipe",
            "fifo",
            "--quick",
            "--passes",
            "3",
            "--sample-time",
            "50ms",
            "--json",
            json.to_str().unwrap(),
        ],
        &json,
        "medians_ns",
        Duration::from_secs(20),
        libc::SIGINT,
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let report = read_json(&json);
    assert_eq!(report["complete"], false);
    for r in results(&report) {
        // A pass cut short is dropped: no figure is failed by the stop, and
        // each holds only passes that completed.
        assert_eq!(r["status"], "ok", "{r}");
        let passes = r["passes"]["count"].as_u64().unwrap_or(1);
        assert!((1..=3).contains(&passes), "{r}");
        assert_eq!(
            r["passes"]["medians_ns"].as_array().map_or(1, Vec::len) as u64,
            passes,
            "{r}"
        );
    }
    assert_released(&sb, pid);
}

#[test]
fn kill_9_then_clean_removes_what_was_left() {
    let _g = serial();
    let sb = Sandbox::new();
    // sysv-msg keeps its queue for the whole figure, fifo its directory.
    for mech in ["sysv-msg", "fifo"] {
        let child = sb
            .cmd(&["run", mech, "--sizes", "64", "--sample-time", "500ms"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let present = eventually(Duration::from_secs(10), || {
            !objects_of(pid).iter().all(|o| o.starts_with("child")) || !sb.leftover_tmp().is_empty()
        });
        assert!(present, "{mech}: no object appeared");
        signal(pid, libc::SIGKILL);
        let _ = wait_with_deadline(child, Duration::from_secs(10));
        // The echo server dies with its parent (PR_SET_PDEATHSIG).
        assert!(
            eventually(Duration::from_secs(3), || ipcmark_processes().is_empty()),
            "orphaned server"
        );
        let out = sb.run(&["clean"], Duration::from_secs(10));
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("removed"), "{}", stdout(&out));
        assert!(
            objects_of(pid).is_empty(),
            "{mech}: still there after clean: {:?}",
            objects_of(pid)
        );
        assert!(
            sb.leftover_tmp().is_empty(),
            "{mech}: {:?}",
            sb.leftover_tmp()
        );
    }
}

/// Replies a channel fakes, by the hidden faults that break its ends (a
/// receive that writes nothing; a client wired back to itself; one buffer
/// for both directions, read before the reply lands): every mechanism's
/// figure fails in every mode, saying what came back, except where nothing
/// is faked — a notification's silent or shared receive still waits for the
/// real reply, and a self-loop is a loopback by design. A stream and a
/// rate have one direction: no buffer for two directions to share.
#[test]
fn a_faked_reply_fails_every_mechanism_in_every_mode() {
    let _g = serial();
    let sb = Sandbox::new();
    let mechs = group("ipc");
    let said = [
        "came back exactly as it was sent",
        "nothing was received",
        "the peer returned 0 messages",
        "no sign that any message reached it",
        // Mode rate: the receiver never saw the first message.
        "the receiver has not received message 1 ",
    ];
    let all = ["loopback", "silent", "shared-buffer"];
    for (mode, sizes, faults) in [
        ("pingpong", "1,64", &all[..]),
        ("oneway", "8,64", &all[..]),
        ("stream", "64", &all[..2]),
        ("rate", "64", &all[..2]),
    ] {
        for &fault in faults {
            let json = sb.path(&format!("{mode}-{fault}.json"));
            let mut options = SHORT;
            if mode == "oneway" {
                // Its own budget: a message count, not samples.
                options = &["--quick", "--messages", "100", "--window", "50"];
            }
            if mode == "rate" {
                // One round of one rate: the first point fails.
                options = &["--quick", "--rates", "2k", "--passes", "1"];
            }
            let what = format!("{mode} --fault {fault}");
            let ran = Run::new(&sb, &["run", "--mode", mode])
                .sizes(sizes)
                .args(&["--fault", fault, "--timeout", "1s"])
                .json_at(&json)
                .args(options)
                .schema()
                .limit(Duration::from_secs(300))
                .exits(1);
            let mut failed = 0;
            for r in results(&ran.report) {
                let m = mechs
                    .iter()
                    .find(|m| m["id"] == r["benchmark"])
                    .expect("an ipc mechanism");
                // Nothing is faked: a notification that still waits for its
                // reply, or a self-loop's own message coming back.
                let genuine = (r["size_bytes"] == 0 && fault != "loopback")
                    || (m["self_loop"] == true && fault != "silent");
                let faked = !genuine;
                match r["status"].as_str().unwrap() {
                    "skipped" => {}
                    "failed" => {
                        failed += 1;
                        let e = r["error"].as_str().unwrap();
                        assert!(faked, "{what}: nothing faked, yet {r}");
                        assert!(said.iter().any(|s| e.contains(s)), "{what}: {r}");
                    }
                    s => assert!(!faked, "{what}: a faked reply got a figure ({s}): {r}"),
                }
            }
            assert!(failed > 0, "{what}: nothing failed");
            assert!(ran.stdout.contains("FAILED: "), "{what}: {}", ran.stdout);
        }
    }
}
