//! Mode `oneway`: short saturated and sporadic runs over several mechanisms
//! give positive latencies, as many messages received as sent, no gaps and a
//! report that validates; a payload under 8 bytes is skipped; bad flags exit
//! 2; nothing is left behind (the `mq-article` preset is in presets.rs). No
//! test asserts a time.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

pub(crate) const LIMIT: Duration = Duration::from_secs(120);

/// Every count of a measured one-way figure agrees, and every latency is positive.
pub(crate) fn assert_oneway_ok(r: &Value, pacing: &str, messages: u64, window: u64) {
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["mode"], "oneway");
    assert_eq!(r["pacing"], pacing, "{r}");
    assert_eq!(u(r, "messages_sent"), messages, "{r}");
    assert_eq!(u(r, "messages_received"), messages, "{r}");
    assert_eq!(u(r, "iterations"), messages);
    assert_eq!(u(r, "gaps"), 0);
    assert_eq!(u(r, "window"), window);
    assert!(u(r, "verified_round_trips") > 0);
    let l = &r["latency_ns"];
    let min = l["min"].as_f64().unwrap();
    assert!(min > 0.0, "a one-way latency must be positive: {l}");
    assert!(
        min <= l["p50"].as_f64().unwrap()
            && l["p99"].as_f64().unwrap() <= l["max"].as_f64().unwrap()
    );
    let ws = r["windows"].as_array().unwrap();
    assert_eq!(ws.len() as u64, messages.div_ceil(window), "{r}");
    let counted: u64 = ws.iter().map(|w| u(w, "messages")).sum();
    assert_eq!(counted, messages, "windows cover every message once");
    for w in ws {
        let ns = |k: &str| w[k].as_f64().unwrap_or_else(|| panic!("{k} in {w}"));
        assert!(ns("min_ns") > 0.0 && ns("min_ns") <= ns("max_ns"), "{w}");
        let mean = ns("mean_ns");
        assert!(mean >= ns("min_ns") && mean <= ns("max_ns"), "{w}");
    }
    // 1 ns as ipcmark sets it; the kernel reports 0 for a SCHED_FIFO task.
    assert!(u(r, "sender_timer_slack_ns") <= 1, "{r}");
}

#[test]
fn saturated_run_over_several_mechanisms_counts_every_message() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(
        &sb,
        &["run", "--mode", "oneway", "pipe", "posix-mq", "shm-futex"],
    )
    .args(&["eventfd", "signal-sigsuspend"])
    .sizes("8,256")
    .args(&["--messages", "500", "--window", "200"])
    .quick()
    // Each figure's row and its windows.
    .arg("--long")
    .json()
    .schema()
    .limit(LIMIT)
    .ok();
    let rs = results(&ran.report);
    // pipe, posix-mq, shm-futex at two sizes; eventfd (8 B fixed) once;
    // signal-sigsuspend (no payload) skipped once.
    assert_eq!(rs.len(), 8, "{rs:#?}");
    for r in rs {
        if r["benchmark"] == "signal-sigsuspend" {
            assert_eq!(r["status"], "skipped");
            assert!(r["reason"].as_str().unwrap().contains("stamp"), "{r}");
        } else {
            assert_oneway_ok(r, "saturated", 500, 200);
            assert!(r["interval_ns"].is_null());
        }
    }
    let eventfd: Vec<&Value> = rs.iter().filter(|r| r["benchmark"] == "eventfd").collect();
    assert_eq!(eventfd.len(), 1);
    assert_eq!(u(eventfd[0], "size_bytes"), 8);
    let text = &ran.stdout;
    for needle in ["saturated", "min =", "max =", "mean =", "skipped"] {
        assert!(text.contains(needle), "output lacks {needle}:\n{text}");
    }
    ran.assert_released(&sb);
}

#[test]
fn sporadic_run_sends_one_message_per_interval_with_a_thread_peer_too() {
    let _g = serial();
    let sb = Sandbox::new();
    for peer in ["process", "thread"] {
        let ran = Run::new(&sb, &["run", "--mode", "oneway", "--interval", "2ms"])
            .args(&["pipe", "posix-mq"])
            .sizes("64")
            .args(&["--messages", "12", "--window", "5", "--peer", peer])
            .json()
            .schema()
            .limit(LIMIT)
            .ok();
        let rs = results(&ran.report);
        assert_eq!(rs.len(), 2);
        for r in rs {
            assert_oneway_ok(r, "sporadic", 12, 5);
            assert_eq!(u(r, "interval_ns"), 2_000_000);
            // Sporadic samples are the messages themselves.
            assert_eq!(r["samples_ns"].as_array().unwrap().len(), 12);
        }
        assert!(ran.stdout.contains("every 2ms"), "{}", ran.stdout);
        ran.assert_released(&sb);
    }
}

#[test]
fn a_broken_channel_fails_the_figure() {
    let _g = serial();
    let sb = Sandbox::new();
    for fault in ["die", "corrupt", "hang"] {
        let ran = Run::new(&sb, &["run", "--mode", "oneway", "pipe"])
            .sizes("64")
            .args(&["--messages", "300", "--window", "100"])
            .args(&["--fault", fault, "--timeout", "2s"])
            .json()
            .schema()
            .limit(LIMIT)
            .exits(1);
        assert_eq!(results(&ran.report)[0]["status"], "failed", "{fault}");
        ran.assert_released(&sb);
    }
}

#[test]
fn bad_oneway_flags_exit_2_with_a_clear_message() {
    let sb = Sandbox::new();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "pipe", "--interval", "1ms"], "--interval"),
        (
            &["run", "pipe", "--mode", "pingpong", "--window", "10"],
            "--window",
        ),
        (&["run", "pipe", "--messages", "10"], "--messages"),
        (
            &["run", "--mode", "oneway", "--interval", "0s", "pipe"],
            "out of range",
        ),
        (
            &["run", "--mode", "oneway", "--interval", "-1ms", "pipe"],
            "--interval",
        ),
        (
            &["run", "--mode", "oneway", "--interval", "2m", "pipe"],
            "at most 60s",
        ),
        (
            &["run", "--mode", "oneway", "--interval", "soon", "pipe"],
            "invalid duration",
        ),
        (
            &["run", "--mode", "oneway", "--window", "0", "pipe"],
            "--window",
        ),
        (
            &["run", "--mode", "oneway", "--messages", "x", "pipe"],
            "--messages",
        ),
        (&["run", "--mode", "sideways", "pipe"], "sideways"),
        (
            &["run", "--mode", "oneway", "syscall-getpid"],
            "single-process",
        ),
        (&["run", "--mode", "oneway", "--cold", "pipe"], "--cold"),
        (
            &["run", "--preset", "mq-article", "--mode", "oneway"],
            "--mode",
        ),
        (
            &["run", "--preset", "mq-article", "--interval", "1s"],
            "--interval",
        ),
        (
            &["run", "--preset", "qnx-table4", "--window", "5"],
            "no one-way column",
        ),
    ];
    refused_all(&sb, cases, None);
}

#[test]
fn sigint_during_a_sporadic_sleep_releases_everything() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("i.json");
    // pipe finishes quickly; posix-mq is then asleep between 500 ms sends.
    let child = sb
        .cmd(&[
            "run",
            "--mode",
            "oneway",
            "--interval",
            "500ms",
            "--messages",
            "2",
            "pipe",
            "posix-mq",
            "--sizes",
            "64,128",
            "--json",
            json.to_str().unwrap(),
        ])
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(
        eventually(Duration::from_secs(20), || json.exists()),
        "no partial JSON after the first mechanism"
    );
    std::thread::sleep(Duration::from_millis(300));
    signal(pid, libc::SIGINT);
    let out = wait_with_deadline(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let report = read_json(&json);
    assert_eq!(report["complete"], false);
    assert_released(&sb, pid);
}
