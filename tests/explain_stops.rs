//! `ipcmark explain` stopped in each of its phases (set-up, the untraced
//! figure, the traced pass, the analysis): 128+signal, the run stored as
//! stopped, nothing left; and its tracefs instances across PID namespaces:
//! named by owner, so two explains that are each PID 1 both trace, `clean`
//! from elsewhere leaves a live one alone, and the next explain removes a
//! dead one's. Tracing needs root and tracefs; the namespaces `unshare`.
//! No test asserts a time: the phases are told by what the run has made.

use crate::util::*;
use std::process::Command;
use std::time::{Duration, Instant};

/// Where an explain is stopped.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Its signal handlers are in, nothing is measured yet.
    SetUp,
    /// The figure is being measured as `run` measures it, no instance yet.
    Untraced,
    /// Its instance exists.
    Traced,
    /// Its instance is gone and it is still cutting the round trips.
    Analysis,
}

const PHASES: [Phase; 4] = [
    Phase::SetUp,
    Phase::Untraced,
    Phase::Traced,
    Phase::Analysis,
];

/// The arguments after `explain NAME` that make each phase long enough to
/// be caught (seconds, in a debug build).
fn phase_args(mechanism: &str) -> Vec<&'static str> {
    let mut a = vec!["--no-save", "--passes", "1"];
    if mechanism == "timer-latency" {
        a.extend(["--period", "100us", "--round-trips", "30000"]);
    } else {
        a.extend(["--sizes", "64", "--samples", "10", "--sample-time", "300ms"]);
        a.extend(["--max-time", "0"]);
        let trips = if mechanism == "memfd-pass" {
            "10000"
        } else {
            "30000"
        };
        a.extend(["--round-trips", trips]);
    }
    a
}

/// Whether process `pid` catches SIGINT (its `SigCgt` mask): ipcmark's
/// handlers are in.
fn catches_sigint(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            let mask = s
                .lines()
                .find_map(|l| l.strip_prefix("SigCgt:"))?
                .trim()
                .to_string();
            u64::from_str_radix(&mask, 16).ok()
        })
        .is_some_and(|m| m & (1 << (libc::SIGINT - 1)) != 0)
}

/// Waits (polling, at most `limit`) for `cond`, checking it as often as the
/// CPU allows: a phase can be short.
fn soon(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

/// Runs `explain mechanism` and sends `sig` in `phase`; checks the command
/// said it was stopped (128+sig), stored the run as stopped, and left
/// nothing behind.
fn stop_in(mechanism: &str, phase: Phase, sig: i32) {
    let sb = Sandbox::new();
    let json = sb.path("r.json");
    let mut argv = vec!["explain", mechanism];
    argv.extend(phase_args(mechanism));
    argv.extend(["--json", json.to_str().unwrap()]);
    let child = sb.cmd(&argv).spawn().expect("spawn ipcmark");
    let pid = child.id();
    let what = format!("{mechanism} {phase:?} signal {sig}");
    let limit = Duration::from_secs(90);
    let caught = match phase {
        Phase::SetUp => soon(limit, || catches_sigint(pid)),
        Phase::Untraced => {
            // A mechanism's peer is a process of its own; a timer's
            // figure is 5 s of wake-ups, well begun a second after set-up.
            let started = if mechanism == "timer-latency" {
                let set_up = soon(limit, || catches_sigint(pid));
                std::thread::sleep(Duration::from_millis(1500));
                set_up
            } else {
                soon(limit, || {
                    catches_sigint(pid) && !children_of(pid).is_empty()
                })
            };
            started && instance_of(pid).is_none()
        }
        Phase::Traced => soon(limit, || instance_of(pid).is_some()),
        Phase::Analysis => {
            soon(limit, || instance_of(pid).is_some())
                && soon(limit, || instance_of(pid).is_none())
                && std::path::Path::new(&format!("/proc/{pid}")).exists()
        }
    };
    assert!(caught, "{what}: the phase was not reached");
    signal(pid, sig);
    let out = wait_with_deadline(child, Duration::from_secs(60));
    assert_eq!(
        out.status.code(),
        Some(128 + sig),
        "{what}: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("interrupted by"),
        "{what}: {}",
        stderr(&out)
    );
    assert!(instance_of(pid).is_none(), "{what}: left {:?}", instances());
    assert_released(&sb, pid);
    let report = read_json(&json);
    assert_eq!(report["complete"], false, "{what}: stored as complete");
}

/// Each phase, SIGINT and SIGTERM alternating so that every phase and every
/// mechanism meets both.
fn stop_in_every_phase(mechanism: &str, first: usize) {
    let _g = serial();
    let Some(_tracing) = tracing_or_skip(&format!("stop_in_every_phase {mechanism}")) else {
        return;
    };
    for (i, phase) in PHASES.into_iter().enumerate() {
        let sig = [libc::SIGINT, libc::SIGTERM][(first + i) % 2];
        stop_in(mechanism, phase, sig);
    }
}

#[test]
fn pipe_is_stopped_in_every_phase() {
    stop_in_every_phase("pipe", 0);
}

#[test]
fn memfd_pass_is_stopped_in_every_phase() {
    stop_in_every_phase("memfd-pass", 1);
}

#[test]
fn timer_latency_is_stopped_in_every_phase() {
    stop_in_every_phase("timer-latency", 0);
}

/// `ipcmark ARGS` as PID 1 of a PID namespace of its own, in `sb`.
fn in_own_pid_namespace(sb: &Sandbox, args: &[&str]) -> Command {
    let before = ["--pid", "--fork", "--kill-child", "--mount-proc"];
    sb.wrapped("unshare", &before, args)
}

#[test]
fn two_explains_that_are_each_pid_1_both_trace() {
    let _g = serial();
    let Some(_tracing) = tracing_or_skip("two_explains_that_are_each_pid_1_both_trace") else {
        return;
    };
    if !unshare_works() {
        return;
    }
    let sb = Sandbox::new();
    let argv: Vec<&str> = EXPLAIN_PIPE
        .iter()
        .copied()
        .chain(["--round-trips", "50000"])
        .collect();
    let a = in_own_pid_namespace(&sb, &argv).spawn().unwrap();
    let b = in_own_pid_namespace(&sb, &argv).spawn().unwrap();
    // Their instances lived at once: the names that once collided.
    let both = eventually(Duration::from_secs(90), || {
        instances()
            .iter()
            .filter(|n| n.starts_with("ipcmark-1-"))
            .count()
            == 2
    });
    for child in [a, b] {
        let out = wait_with_deadline(child, Duration::from_secs(120));
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).contains("anatomy of a round trip"),
            "{}",
            stdout(&out)
        );
    }
    assert!(both, "the two traced passes never overlapped");
    assert!(
        orphaned_instances().is_empty(),
        "left {:?}",
        orphaned_instances()
    );
}

#[test]
fn clean_from_another_pid_namespace_leaves_a_live_instance_alone() {
    let _g = serial();
    let Some(_tracing) =
        tracing_or_skip("clean_from_another_pid_namespace_leaves_a_live_instance_alone")
    else {
        return;
    };
    if !unshare_works() {
        return;
    }
    let sb = Sandbox::new();
    let argv: Vec<&str> = EXPLAIN_PIPE
        .iter()
        .copied()
        .chain(["--round-trips", "200000"])
        .collect();
    let child = sb.cmd(&argv).spawn().unwrap();
    let pid = child.id();
    assert!(eventually(Duration::from_secs(90), || instance_of(pid).is_some()));
    let name = instance_of(pid).unwrap();
    let clean = in_own_pid_namespace(&sb, &["clean"]).output().unwrap();
    let still = instance_of(pid);
    signal(pid, libc::SIGINT);
    let out = wait_with_deadline(child, Duration::from_secs(60));
    assert!(clean.status.success(), "{}", stderr(&clean));
    let said = stdout(&clean);
    assert_eq!(
        still.as_deref(),
        Some(name.as_str()),
        "clean removed it:\n{said}"
    );
    assert!(
        said.lines().any(|l| l.contains(&name)
            && l.starts_with("kept")
            && l.contains("another PID namespace")),
        "{said}"
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(instance_of(pid).is_none(), "left {:?}", instances());
}

/// An instance as a run of `pid` in the PID namespace `pid_ns` would name it.
fn planted_instance(pid: u32, pid_ns: u64) -> String {
    let name = format!("ipcmark-{pid}-{pid_ns}-1-0123456789ab-trace-0");
    std::fs::create_dir(std::path::Path::new(TRACEFS).join("instances").join(&name))
        .expect("make an instance");
    name
}

#[test]
fn explain_removes_a_dead_runs_instance_and_keeps_one_it_cannot_judge() {
    use std::os::unix::fs::MetadataExt;
    let _g = serial();
    let Some(_tracing) =
        tracing_or_skip("explain_removes_a_dead_runs_instance_and_keeps_one_it_cannot_judge")
    else {
        return;
    };
    let ns = std::fs::metadata("/proc/self/ns/pid").unwrap().ino();
    // A pid that was and is no more: a finished child's.
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let dead_runs = planted_instance(dead, ns);
    let elsewhere = planted_instance(dead, ns + 1);
    let sb = Sandbox::new();
    let argv: Vec<&str> = EXPLAIN_PIPE
        .iter()
        .copied()
        .chain(["--round-trips", "300"])
        .collect();
    let out = sb.run(&argv, Duration::from_secs(120));
    let left = instances();
    let _ = std::fs::remove_dir(
        std::path::Path::new(TRACEFS)
            .join("instances")
            .join(&elsewhere),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !left.contains(&dead_runs),
        "a dead run's instance stayed: {left:?}"
    );
    assert!(
        left.contains(&elsewhere),
        "one of another namespace went: {left:?}"
    );
}
