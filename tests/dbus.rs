//! `dbus` and `dbus-p2p`: skipped with the reason without `dbus-daemon`;
//! the private bus daemon and its directory released after a normal end,
//! SIGINT and SIGTERM, and after `kill -9` ended by the kernel
//! (`PR_SET_PDEATHSIG`) with its directory removed by `clean`; a bad
//! `--dbus-address` is bad usage. No test asserts a time.

use crate::util::*;
use std::path::Path;
use std::time::Duration;

/// The live `dbus-daemon` processes run `pid` started (their configuration
/// lies in a directory named after it).
fn daemons_of(pid: u32) -> Vec<u32> {
    let mark = format!("/ipcmark-{pid}-");
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|p| {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd);
            let zombie = std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .map(|(_, a)| a.trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            !zombie && cmd.contains("dbus-daemon") && cmd.contains(&mark)
        })
        .collect()
}

fn status_of<'a>(report: &'a serde_json::Value, id: &str) -> Vec<&'a serde_json::Value> {
    results(report)
        .iter()
        .filter(|r| r["benchmark"] == id)
        .collect()
}

#[test]
fn without_dbus_daemon_dbus_is_skipped_with_the_reason_and_p2p_still_runs() {
    let _g = serial();
    let sb = Sandbox::new();
    let empty = sb.path("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let ran = Run::new(&sb, &["run", "dbus", "dbus-p2p"])
        .sizes("64")
        .short()
        .json()
        .schema()
        .by(|a| {
            let mut c = sb.cmd(a);
            c.env("PATH", &empty);
            c
        })
        .ok();
    let dbus = status_of(&ran.report, "dbus");
    assert_eq!(dbus.len(), 1, "{}", ran.what());
    assert_eq!(dbus[0]["status"], "skipped", "{}", dbus[0]);
    let why = dbus[0]["reason"].as_str().unwrap_or_default();
    assert!(
        why.contains("dbus-daemon not found in PATH") && why.contains("dbus package"),
        "{}",
        dbus[0]
    );
    let p2p = status_of(&ran.report, "dbus-p2p");
    assert_eq!(p2p[0]["status"], "ok", "{}", p2p[0]);
    assert_released(&sb, ran.pid);
}

#[test]
fn dbus_is_measured_and_leaves_no_daemon_after_a_normal_end() {
    if !have_dbus_daemon() {
        return;
    }
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "dbus", "dbus-p2p"])
        .sizes("1,64K")
        .short()
        .json()
        .schema()
        .ok();
    for id in ["dbus", "dbus-p2p"] {
        let rs = status_of(&ran.report, id);
        assert_eq!(rs.len(), 2, "{id}: {}", ran.what());
        for r in rs {
            assert_eq!(r["status"], "ok", "{r}");
        }
    }
    assert!(daemons_of(ran.pid).is_empty(), "{:?}", daemons_of(ran.pid));
    assert_released(&sb, ran.pid);
}

/// Starts a long dbus run and waits until its private bus is up.
fn dbus_run_with_its_daemon(sb: &Sandbox) -> (std::process::Child, u32) {
    let child = sb
        .cmd(&["run", "dbus", "--sizes", "64", "--sample-time", "500ms"])
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(
        eventually(Duration::from_secs(20), || !daemons_of(pid).is_empty()),
        "no dbus-daemon of run {pid} appeared"
    );
    (child, pid)
}

#[test]
fn sigint_and_sigterm_end_the_private_bus() {
    if !have_dbus_daemon() {
        return;
    }
    let _g = serial();
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let sb = Sandbox::new();
        let (child, pid) = dbus_run_with_its_daemon(&sb);
        signal(pid, sig);
        let out = wait_with_deadline(child, Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        assert!(daemons_of(pid).is_empty(), "{:?}", daemons_of(pid));
        assert_released(&sb, pid);
    }
}

#[test]
fn kill_9_ends_the_private_bus_and_clean_removes_its_directory() {
    if !have_dbus_daemon() {
        return;
    }
    let _g = serial();
    let sb = Sandbox::new();
    let (child, pid) = dbus_run_with_its_daemon(&sb);
    signal(pid, libc::SIGKILL);
    let _ = wait_with_deadline(child, Duration::from_secs(10));
    // The kernel ends the daemon with its parent (PR_SET_PDEATHSIG).
    assert!(
        eventually(Duration::from_secs(5), || daemons_of(pid).is_empty()),
        "orphaned dbus-daemon: {:?}",
        daemons_of(pid)
    );
    let left: Vec<String> = objects_of(pid)
        .into_iter()
        .filter(|o| o.contains("-dbus-"))
        .collect();
    assert!(!left.is_empty(), "kill -9 left no bus directory to clean");
    let out = sb.run(&["clean"], Duration::from_secs(10));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        left.iter().all(|d| !Path::new(d).exists()),
        "still there after clean: {left:?}\n{}",
        stdout(&out)
    );
    assert!(objects_of(pid).is_empty(), "{:?}", objects_of(pid));
}

#[test]
fn a_dbus_address_other_than_a_unix_socket_is_bad_usage() {
    let sb = Sandbox::new();
    let out = sb.run(
        &["run", "dbus", "--dbus-address", "tcp:host=localhost,port=1"],
        Duration::from_secs(20),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("unix:path=") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn dbus_address_goes_through_the_bus_given_and_starts_none() {
    if !have_dbus_daemon() {
        return;
    }
    let _g = serial();
    let sb = Sandbox::new();
    // A bus of the test's own, standing for the user's session bus.
    let socket = sb.path("bus");
    let address = format!("unix:path={}", socket.display());
    let mut bus = std::process::Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--address", &address])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        eventually(Duration::from_secs(10), || socket.exists()),
        "the test's bus did not start"
    );
    let ran = Run::new(&sb, &["run", "dbus", "--dbus-address", &address])
        .sizes("64")
        .short()
        .json()
        .schema()
        .run();
    let _ = bus.kill();
    let _ = bus.wait();
    assert!(ran.status.success(), "{}", ran.what());
    let r = status_of(&ran.report, "dbus");
    assert_eq!(r[0]["status"], "ok", "{}", r[0]);
    assert_eq!(r[0]["note"], format!("bus at {address}"), "{}", r[0]);
    assert_released(&sb, ran.pid);
}

/// A bus that accepts and then never answers, or answers the
/// authentication and never `Hello`, cannot hold a run: the figure fails
/// within `--timeout`, saying the bus did not answer, and the run ends.
#[test]
fn a_bus_that_never_answers_fails_the_figure_and_the_run_ends() {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;
    let _g = serial();
    for answers_auth in [false, true] {
        let sb = Sandbox::new();
        let socket = sb.path("bus");
        let listener = UnixListener::bind(&socket).unwrap();
        // The hostile bus: each connection held open, read, and answered
        // at most `OK` to its authentication; never anything after it.
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                if answers_auth {
                    let mut buf = [0u8; 256];
                    let _ = conn.read(&mut buf);
                    let _ = conn.write_all(b"OK 0123456789abcdef0123456789abcdef\r\n");
                }
                held.push(conn);
            }
        });
        let address = format!("unix:path={}", socket.display());
        let ran = Run::new(
            &sb,
            &["run", "dbus", "--dbus-address", &address, "--timeout", "1s"],
        )
        .sizes("64")
        .short()
        .json()
        .limit(Duration::from_secs(60))
        .run();
        assert_eq!(ran.status.code(), Some(1), "{}", ran.what());
        let r = status_of(&ran.report, "dbus");
        assert_eq!(r[0]["status"], "failed", "{}", r[0]);
        let error = r[0]["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("did not finish authentication and Hello within 1 s"),
            "answers_auth {answers_auth}: {}",
            r[0]
        );
    }
}
