//! A small harness for running the ipcmark binary in tests, shared by every
//! module of the one test binary (tests/tests.rs).
//!
//! Every test that runs a benchmark holds one global lock ([`serial`]): the
//! tests count processes and system-wide IPC objects, and the machine has two
//! CPUs, so runs never overlap. Every child has a deadline, so a hang fails the
//! test instead of stalling it.
//!
//! Here: the sandbox, deadlines, signals and what a run leaves behind.
//! [`run`]: [`Run`], a command line run to its end (its `--sizes`, short
//! budget, `--json`, `--db`, deadline) and [`Ran`], its status, output and
//! report; [`report`]: JSON reports ([`results`], the schemas and the
//! consistency checks several modes share); [`registry`]: `ipcmark list`;
//! [`usage`]: the bad-usage checker; [`nobody`]: runs as an unprivileged user;
//! [`fleet`]: synthetic fleets of run reports;
//! [`mount`]: a small tmpfs or a read-only view, unmounted on every path;
//! [`testbed`]: two hosts on this machine, in network namespaces.

mod fleet;
mod mount;
#[cfg(feature = "mpi")]
mod mpi;
mod nobody;
mod registry;
mod report;
mod run;
mod testbed;
mod tracefs;
mod usage;

pub use fleet::*;
pub use mount::*;
#[cfg(feature = "mpi")]
pub use mpi::*;
pub use nobody::*;
pub use registry::*;
pub use report::*;
pub use run::*;
pub use testbed::*;
pub use tracefs::*;
pub use usage::*;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

/// Short per-figure budget for tests: quick warm-up, one pass of two tiny
/// samples and no more (--max-time 0): tests check counts, and stay short.
pub const SHORT: &[&str] = &[
    "--samples",
    "2",
    "--max-time",
    "0",
    "--sample-time",
    "2ms",
    "--quick",
    "--passes",
    "1",
];

/// [`SHORT`] without its `--passes 1`, for a test that sets the passes.
pub fn short_budget() -> &'static [&'static str] {
    &SHORT[..SHORT.len() - 2]
}

/// Whether this machine has `dbus-daemon` (Debian's dbus package; `.ci/run`
/// installs it). Without it the tests that need a bus say so and pass.
pub fn have_dbus_daemon() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("dbus-daemon").is_file()));
    if !found {
        eprintln!("skipped: no dbus-daemon in PATH (Debian package dbus)");
    }
    found
}

/// Takes the global lock (a poisoned lock from a failed test is still usable).
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Path of the binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ipcmark"))
}

/// A test's private world: a temporary directory used as TMPDIR, for JSON
/// files, and as XDG_DATA_HOME, so the runs' history goes to
/// `data/ipcmark/history.sqlite` in it and never to the user's.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        stop_signals_as_in_a_terminal();
        Sandbox {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The history runs in this sandbox write (XDG_DATA_HOME is `data`).
    pub fn history(&self) -> PathBuf {
        self.path("data/ipcmark/history.sqlite")
    }

    /// A command for ipcmark with TMPDIR and XDG_DATA_HOME pointing into the sandbox.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args);
        self.environ(c)
    }

    /// `PROGRAM BEFORE… ipcmark ARGS…` with the sandbox's environment, as
    /// [`cmd`](Self::cmd) makes it: ipcmark run by a wrapper (a shell, or
    /// `unshare`), which finds it as the first word after `BEFORE`.
    pub fn wrapped(&self, program: &str, before: &[&str], args: &[&str]) -> Command {
        let mut c = Command::new(program);
        c.args(before).arg(bin()).args(args);
        self.environ(c)
    }

    fn environ(&self, mut c: Command) -> Command {
        c.env("TMPDIR", self.dir.path())
            .env("XDG_DATA_HOME", self.path("data"))
            .env_remove("RUST_BACKTRACE")
            // check annotates its failures under GitHub Actions: a test
            // that wants it sets it.
            .env_remove("GITHUB_ACTIONS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs ipcmark to completion (at most `limit`), returning its output.
    pub fn run(&self, args: &[&str], limit: Duration) -> Output {
        let child = self.cmd(args).spawn().expect("spawn ipcmark");
        wait_with_deadline(child, limit)
    }

    /// A command for ipcmark as [`cmd`](Self::cmd) makes it, with at most
    /// `files` open descriptors (`ulimit -n`, set by bash before it becomes
    /// ipcmark): bash execs ipcmark, so the child's pid is ipcmark's.
    pub fn cmd_with_open_files(&self, files: u32, args: &[&str]) -> Command {
        let line = format!("ulimit -n {files} && exec \"$0\" \"$@\"");
        self.wrapped("bash", &["-c", &line], args)
    }

    /// Entries named ipcmark-* left in the sandbox's TMPDIR.
    pub fn leftover_tmp(&self) -> Vec<String> {
        std::fs::read_dir(self.dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("ipcmark-"))
            .collect()
    }
}

/// Reads all of a child's pipe in a thread of its own, so that a child that
/// writes more than a pipe holds (64 KiB) is not stalled waiting for it.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Waits for `child` at most `limit`; kills it and panics past that.
pub fn wait_with_deadline(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "ipcmark did not finish within {limit:?}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&stdout.join().expect("stdout")),
                String::from_utf8_lossy(&stderr.join().expect("stderr"))
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    }
}

/// Starts ipcmark with `argv`, which writes `json`; once the report has been
/// saved a first time (within `first`), sends `sig` and waits (20 s at
/// most) for the run to end. Its pid and output.
pub fn signal_after_first_save(
    sb: &Sandbox,
    argv: &[&str],
    json: &Path,
    first: Duration,
    sig: i32,
) -> (u32, Output) {
    signal_once_saved(sb, argv, json, "", first, sig)
}

/// Starts ipcmark with `argv`, which writes `json`; once a saved report
/// contains `needle` (within `limit`), sends `sig` and waits (20 s at most)
/// for the run to end. Its pid and output.
pub fn signal_once_saved(
    sb: &Sandbox,
    argv: &[&str],
    json: &Path,
    needle: &str,
    limit: Duration,
    sig: i32,
) -> (u32, Output) {
    let child = sb.cmd(argv).spawn().unwrap();
    let pid = child.id();
    assert!(
        eventually(limit, || {
            std::fs::read_to_string(json).is_ok_and(|t| t.contains(needle))
        }),
        "no saved report with {needle:?} within {limit:?}"
    );
    signal(pid, sig);
    (pid, wait_with_deadline(child, Duration::from_secs(20)))
}

/// Asserts that run `pid`, in sandbox `sb`, left nothing behind: no IPC
/// object named after it, no temporary file, no ipcmark process (its
/// children get 3 s to be reaped).
pub fn assert_released(sb: &Sandbox, pid: u32) {
    released(sb, pid, &format!("pid {pid}"));
}

/// [`assert_released`], naming the run as `what` in its messages.
pub(crate) fn released(sb: &Sandbox, pid: u32, what: &str) {
    let objects = objects_of(pid);
    assert!(objects.is_empty(), "{what}: left behind: {objects:?}");
    assert!(
        sb.leftover_tmp().is_empty(),
        "{what}: left in TMPDIR: {:?}",
        sb.leftover_tmp()
    );
    assert!(
        eventually(Duration::from_secs(3), || ipcmark_processes().is_empty()),
        "{what}: processes left: {:?}",
        ipcmark_processes()
            .iter()
            .map(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default())
            .collect::<Vec<_>>()
    );
}

/// Whether this machine can run a command in a PID namespace of its own
/// (`unshare` needs root).
pub fn unshare_works() -> bool {
    Command::new("unshare")
        .args(["--pid", "--fork", "--kill-child", "--mount-proc", "true"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Polls `cond` every 20 ms for at most `limit`.
pub fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Pid encoded in an ipcmark name (`ipcmark-<pid>-…`, `sem.ipcmark-<pid>-…`).
fn pid_in_name(name: &str) -> Option<u32> {
    let rest = name
        .strip_prefix("sem.")
        .unwrap_or(name)
        .strip_prefix("ipcmark-")?;
    rest.split('-').next()?.parse().ok()
}

/// Every OS object a run with this pid still owns: /dev/shm entries, System V
/// objects whose key encodes the pid, and live processes that are its children.
pub fn objects_of(pid: u32) -> Vec<String> {
    let mut found = Vec::new();
    for dir in ["/dev/shm", "/dev/mqueue", "/var/tmp"] {
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if pid_in_name(&n) == Some(pid) {
                    found.push(format!("{dir}/{n}"));
                }
            }
        }
    }
    for kind in ["msg", "sem", "shm"] {
        let text = std::fs::read_to_string(format!("/proc/sysvipc/{kind}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let Some(key) = line
                .split_whitespace()
                .next()
                .and_then(|k| k.parse::<i64>().ok())
            else {
                continue;
            };
            // ipcmark's keys: tag 0xA (4 bits), pid (22), slot (6).
            let key = key as u32;
            if (key >> 28) == 0xA && ((key >> 6) & 0x3F_FFFF) == pid {
                found.push(format!("sysv {kind} key {key:#x}"));
            }
        }
    }
    found.extend(
        children_of(pid)
            .into_iter()
            .map(|c| format!("child process {c}")),
    );
    found
}

/// Live processes whose parent is `pid`, or that are orphans still running
/// our binary (a child whose parent was killed).
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // Fields after the command name in parentheses: state, ppid, …
        let Some(after) = stat.rsplit_once(')').map(|(_, a)| a) else {
            continue;
        };
        let mut f = after.split_whitespace();
        let state = f.next().unwrap_or("");
        let ppid: u32 = f.next().and_then(|x| x.parse().ok()).unwrap_or(0);
        if state == "Z" {
            continue;
        }
        if ppid == pid {
            out.push(p);
        }
    }
    out
}

/// Live processes running the ipcmark binary (after a test's runs end, none should).
pub fn ipcmark_processes() -> Vec<u32> {
    let me = bin().canonicalize().unwrap_or_else(|_| bin());
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if std::fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|exe| exe == me) {
            let zombie = std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .map(|(_, a)| a.trim_start().starts_with('Z'))
                })
                .unwrap_or(false);
            if !zombie {
                out.push(p);
            }
        }
    }
    out
}

/// Sends a signal to a process.
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: plain kill(2) on a pid this test spawned.
    unsafe { libc::kill(pid as i32, sig) };
}

/// Sends a signal to every process of the process group led by `pid` (a child
/// spawned with `process_group(0)`), as a terminal's Ctrl-C does.
pub fn signal_group(pid: u32, sig: i32) {
    // SAFETY: plain kill(2) on the process group of a child this test spawned.
    unsafe { libc::kill(-(pid as i32), sig) };
}

/// CPUs this test process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap_or("0")
        .trim()
        .to_string();
    let mut out = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap()),
            None => out.push(part.parse().unwrap()),
        }
    }
    out
}

/// A table's cells on one line of the page (`│ a ┆ b │`), trimmed; `None`
/// for a border or any other line.
fn cells(line: &str) -> Option<Vec<String>> {
    let inner = line.strip_prefix('│')?.strip_suffix('│')?;
    Some(inner.split('┆').map(|c| c.trim().to_string()).collect())
}

/// The matrix of the compact page whose corner (first header cell) is
/// `corner` ("one-way µs"): its header, then each row's label without its
/// footnote marks, and its cells.
pub fn matrix(page: &str, corner: &str) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let mut lines = page
        .lines()
        .skip_while(|l| cells(l).is_none_or(|c| c[0] != corner));
    let header = lines
        .next()
        .and_then(cells)
        .unwrap_or_else(|| panic!("no table headed {corner}:\n{page}"));
    let marks: &[char] = &['¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹', '⁰', ','];
    let rows = lines
        .skip(1)
        .map_while(cells)
        .map(|mut c| {
            let label = c.remove(0).trim_end_matches(marks).to_string();
            (label, c)
        })
        .collect();
    (header, rows)
}

/// Gives SIGINT and SIGQUIT back their default action in this test process,
/// so every ipcmark it starts inherits them as from a terminal. A shell
/// starts a background job (`cargo test &` in a script) with both ignored,
/// and ipcmark keeps a stop signal its caller ignores (as nohup asks): the
/// tests that send SIGINT would then see a run go on to its end.
fn stop_signals_as_in_a_terminal() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGQUIT] {
            // SAFETY: sets a plain disposition (SIG_DFL), no handler code runs.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
    });
}
