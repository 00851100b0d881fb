//! The OS objects a run names and releases: nothing left behind when
//! descriptors run out, names another user cannot take first, and `clean`
//! that keeps what it cannot prove abandoned. No test asserts a time.

use crate::util::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// At `ulimit -n 8` the FIFO channels cannot all be held open (a thread peer
/// keeps both ends in the one process): each directory made before an open
/// failed is still removed, with no descriptor to spare (they were left
/// behind, silently, when removal needed one).
#[test]
fn fifos_at_ulimit_n_8_leave_nothing_behind() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "fifo", "fifo-tmpfs", "--peer", "thread"])
        .sizes("1,64,1K,4K")
        .no_save()
        .short()
        .open_files(8)
        .run();
    let err = &ran.stderr;
    // The premise: descriptors did run out.
    assert!(
        ran.stdout.contains("Too many open files"),
        "{}\n{err}",
        ran.stdout
    );
    assert!(!err.contains("could not remove"), "{err}");
    ran.assert_released(&sb);
}

/// The names the older, predictable scheme would give the next pids' FIFO
/// directories and POSIX semaphores and queues, squatted on the way another
/// local user could: the run still succeeds.
#[test]
fn names_squatted_in_advance_do_not_fail_a_run() {
    let _g = serial();
    let sb = Sandbox::new();
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut squats: Vec<PathBuf> = Vec::new();
    let mut squat = |path: PathBuf, dir: bool| {
        let made = if dir {
            std::fs::create_dir(&path)
        } else {
            std::fs::write(&path, b"")
        };
        if made.is_ok() {
            squats.push(path);
        }
    };
    for pid in last + 1..last + 60 {
        for n in 0..6 {
            squat(sb.path(&format!("ipcmark-{pid}-fifo-{n}")), true);
            squat(format!("/dev/shm/ipcmark-{pid}-fifo-{n}").into(), true);
            squat(format!("/dev/shm/sem.ipcmark-{pid}-sem-{n}").into(), false);
        }
    }
    let ran = Run::new(
        &sb,
        &["run", "fifo", "fifo-tmpfs", "shm-posix-sem", "posix-mq"],
    )
    .sizes("64")
    .no_save()
    .short()
    .run();
    let pid = ran.pid;
    for path in &squats {
        let _ = std::fs::remove_dir(path).or_else(|_| std::fs::remove_file(path));
    }
    assert!(
        (last + 1..last + 60).contains(&pid),
        "the run got pid {pid}, beyond the squatted ones: the test proves nothing"
    );
    assert_eq!(ran.code(), Some(0), "{}", ran.what());
    assert!(!ran.stdout.contains("FAIL"), "{}", ran.stdout);
    ran.assert_released(&sb);
}

/// Entries of `dir` named ipcmark-*.
fn ipcmark_entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("ipcmark-"))
                .collect()
        })
        .unwrap_or_default()
}

/// A run in a PID namespace of its own (its pid there means nothing out
/// here) holds a FIFO directory and a System V queue while `clean` runs
/// outside: both are kept, `clean` says why, and the run is unharmed.
#[test]
fn clean_from_another_pid_namespace_keeps_a_live_runs_objects() {
    let _g = serial();
    if !unshare_works() {
        eprintln!("SKIPPED: unshare --pid --fork --mount-proc does not work here (needs root)");
        return;
    }
    let sb = Sandbox::new();
    let mut run = Command::new("unshare");
    run.args(["--pid", "--fork", "--kill-child", "--mount-proc"])
        .arg(bin())
        .args([
            "run",
            "fifo",
            "sysv-msg",
            "--sizes",
            "64",
            "--samples",
            "4",
            "--sample-time",
            "400ms",
            "--max-time",
            "0",
            "--passes",
            "1",
            "--no-save",
        ])
        .env("TMPDIR", sb.dir.path())
        .env_remove("RUST_BACKTRACE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = run.spawn().unwrap();
    // Both channels are held open together (the sweep opens every figure's).
    let records = || {
        ipcmark_entries(Path::new("/dev/shm"))
            .into_iter()
            .filter(|n| n.contains("-sysv-"))
            .count()
    };
    let before = records();
    let present = eventually(Duration::from_secs(20), || {
        !sb.leftover_tmp().is_empty() && records() > before
    });
    let held = sb.leftover_tmp();
    let clean = sb.run(&["clean"], Duration::from_secs(20));
    let still = sb.leftover_tmp();
    let out = wait_with_deadline(child, Duration::from_secs(120));
    assert!(present, "the run's objects did not appear: {held:?}");
    assert!(clean.status.success(), "{}", stderr(&clean));
    let said = stdout(&clean);
    assert_eq!(still, held, "clean removed a live run's directory:\n{said}");
    for name in &held {
        assert!(
            said.lines()
                .any(|l| l.contains(name.as_str()) && l.contains("another PID namespace")),
            "{name}:\n{said}"
        );
    }
    assert!(
        said.lines()
            .any(|l| l.starts_with("kept sysv-msg") && l.contains("another PID namespace")),
        "{said}"
    );
    // Had the queue been removed, the run's sysv-msg figure would have failed.
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(sb.leftover_tmp().is_empty(), "{:?}", sb.leftover_tmp());
}
