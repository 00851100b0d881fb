//! A helper program a channel needs running beside it (a private message
//! bus daemon), started by ipcmark and released like any object it makes.
//!
//! It lives in a directory of ipcmark's naming (`ipcmark-…-<what>-<n>`,
//! see [`super::objects`]) that holds its files (a configuration, a
//! socket), the pid it runs as ([`PID_FILE`]) and what it printed on
//! stderr. It ends with its creator on every path: dropped, it is sent
//! SIGTERM (SIGKILL after [`GRACE`]), reaped and its directory removed;
//! started with `PR_SET_PDEATHSIG`, the kernel sends it SIGTERM if the
//! thread that started it dies (a `kill -9` of ipcmark); and `ipcmark
//! clean` kills a helper whose directory it finds abandoned, if its command
//! line still names that directory (a pid alone may have been reused).

use crate::engine::os::objects::{Cleanup, HELPER_PID_FILE as PID_FILE, ObjectNamer, tmpfs_base};
use crate::sys::fd::wait_readable;
use crate::sys::process::{kill, parent_death_signal_for, try_wait};
use std::fs;
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
#[cfg(test)]
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The file in a helper's directory that takes its stderr.
const ERR_FILE: &str = "daemon.err";
/// How long a helper has to end after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// What to start.
pub struct DaemonSpec<'a> {
    /// The program (a path, or a name looked up in PATH).
    pub program: &'a str,
    /// The `<what>` of its directory's name.
    pub what: &'a str,
    /// Files to write into its directory first: (name, contents).
    pub files: Vec<(&'static str, String)>,
    /// Its arguments, given its directory.
    pub args: Vec<String>,
    /// How long it has to print its first line on stdout (it is ready then).
    pub ready_within: Duration,
}

/// A running helper; dropping it ends it and removes its directory.
pub struct Daemon {
    /// The first line it printed (an address, for a bus).
    pub first_line: String,
    /// Its process id (it is our child: the id stays its own until the
    /// release reaps it).
    pub pid: libc::pid_t,
    _release: Cleanup,
}

impl Daemon {
    /// Makes its directory, writes its files, starts it (`{dir}` in an
    /// argument or a file stands for the directory) and waits for its first
    /// line on stdout. On any failure nothing is left running or on disk.
    pub fn start(names: &ObjectNamer, spec: &DaemonSpec<'_>) -> io::Result<Daemon> {
        let dir = names.temp_dir(&tmpfs_base(), spec.what)?;
        let dir_text = dir.display().to_string();
        let remove_dir = Cleanup::remove_dir(dir.clone());
        for (name, contents) in &spec.files {
            fs::write(dir.join(name), contents.replace("{dir}", &dir_text))?;
        }
        let err = fs::File::create(dir.join(ERR_FILE))?;
        let mut cmd = Command::new(spec.program);
        cmd.args(spec.args.iter().map(|a| a.replace("{dir}", &dir_text)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err))
            // Its own process group: a Ctrl-C at the terminal reaches
            // ipcmark, which ends it in order, not the helper first.
            .process_group(0);
        parent_death_signal_for(&mut cmd, libc::SIGTERM);
        let mut child = cmd
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot start {}: {e}", spec.program)))?;
        let pid = child.id() as libc::pid_t;
        // From here the release ends the helper, then removes the directory.
        let release = Cleanup::new(move || {
            end(pid);
            drop(remove_dir);
        });
        fs::write(dir.join(PID_FILE), format!("{pid}\n"))?;
        let mut stdout = child.stdout.take().expect("stdout was piped");
        // `child` is dropped without a wait: `end` reaps the pid itself.
        drop(child);
        let first_line = read_first_line(&mut stdout, spec.ready_within, || {
            fs::read_to_string(dir.join(ERR_FILE)).unwrap_or_default()
        })
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", spec.program)))?;
        Ok(Daemon {
            first_line,
            pid,
            _release: release,
        })
    }
}

/// Reads up to the first newline within `limit`; `stderr` says why not.
fn read_first_line(
    out: &mut std::process::ChildStdout,
    limit: Duration,
    stderr: impl Fn() -> String,
) -> io::Result<String> {
    let deadline = Instant::now() + limit;
    let mut line = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        if let Some(end) = line.iter().position(|&b| b == b'\n') {
            line.truncate(end);
            return Ok(String::from_utf8_lossy(&line).into_owned());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let said = || {
            let s = stderr();
            let s = s.trim();
            if s.is_empty() {
                String::new()
            } else {
                format!(": {}", s.lines().next().unwrap_or(s))
            }
        };
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("not ready within {limit:?}{}", said()),
            ));
        }
        match wait_readable(out, left) {
            Ok(true) => {}
            // Time is up: said at the top of the loop.
            Ok(false) => continue,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                crate::engine::os::interrupt::check().map_err(io::Error::other)?;
                continue;
            }
            Err(e) => return Err(e),
        }
        match out.read(&mut buf) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("ended before it was ready{}", said()),
                ));
            }
            Ok(n) => line.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// SIGTERM, then SIGKILL after [`GRACE`]; reaped either way.
fn end(pid: libc::pid_t) {
    let _ = kill(pid, libc::SIGTERM);
    let deadline = Instant::now() + GRACE;
    loop {
        match try_wait(pid) {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) if Instant::now() >= deadline => {
                crate::sys::process::kill_and_reap(pid);
                return;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> DaemonSpec<'static> {
        DaemonSpec {
            program: "sh",
            what: "daemon-test",
            files: vec![("script", script.to_string())],
            args: vec!["{dir}/script".into()],
            ready_within: Duration::from_secs(5),
        }
    }

    #[test]
    fn a_daemon_is_ended_and_its_directory_removed_when_dropped() {
        let names = ObjectNamer::new();
        // `{dir}` in the script is its directory: the first line names it.
        let d = Daemon::start(&names, &sh("echo {dir}; exec sleep 60")).unwrap();
        let dir = PathBuf::from(&d.first_line);
        assert!(dir.starts_with(tmpfs_base()), "{}", dir.display());
        let pid: libc::pid_t = fs::read_to_string(dir.join(PID_FILE))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(pid, d.pid);
        assert!(dir.join(PID_FILE).exists());
        assert!(crate::sys::process::process_exists(pid));
        drop(d);
        assert!(!dir.exists(), "{}", dir.display());
        assert!(!crate::sys::process::process_exists(pid));
    }

    #[test]
    fn a_daemon_that_ends_before_it_is_ready_says_what_it_printed() {
        let names = ObjectNamer::new();
        let err = Daemon::start(&names, &sh("echo no config >&2; exit 3"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("ended before it was ready: no config"),
            "{err}"
        );
    }

    #[test]
    fn a_daemon_that_never_gets_ready_is_ended_at_its_deadline() {
        let names = ObjectNamer::new();
        let mut spec = sh("exec sleep 60");
        spec.ready_within = Duration::from_millis(200);
        let err = Daemon::start(&names, &spec).err().unwrap().to_string();
        assert!(err.contains("not ready within"), "{err}");
    }

    #[test]
    fn a_missing_program_is_an_error_naming_it() {
        let names = ObjectNamer::new();
        let mut spec = sh("");
        spec.program = "/nonexistent/ipcmark-no-such-daemon";
        let err = Daemon::start(&names, &spec).err().unwrap().to_string();
        assert!(err.contains("cannot start /nonexistent"), "{err}");
    }
}
