//! `ipcmark clean` ([`clean_stale`]): the directories where named objects
//! live, the System V owner records in /dev/shm, and the order of the whole
//! (System V objects first, judged by the records that the directories'
//! clean-up then removes). Apart from the names it reads and the verdicts
//! it applies; the top of this folder: nothing here uses it.

use super::names::{HELPER_PID_FILE, NameOwner, Owner, disk_temp_base, owner_of_name, tmpfs_base};
use super::sysvipc::{clean_sysv_objects, parse_sysvipc};
use super::verdict::{CleanReport, Here, Processes, System, Verdict, judge};
use crate::engine::os::cgroup;
use crate::sys::process::geteuid;
use std::collections::HashSet;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Removes every ipcmark object whose creating process is provably gone.
pub fn clean_stale() -> CleanReport {
    let mut report = CleanReport::default();
    let here = Here::now();
    let mut dirs = vec![tmpfs_base(), disk_temp_base(), std::env::temp_dir()];
    dirs.push(PathBuf::from("/dev/mqueue"));
    dirs.sort();
    dirs.dedup();
    // System V objects first: they are judged by the owner records, which
    // the directories' clean-up then removes with the rest.
    let records = sysv_records(&tmpfs_base());
    let mut sysv_left = HashSet::new();
    for (kind, file) in [
        ("msg", "/proc/sysvipc/msg"),
        ("sem", "/proc/sysvipc/sem"),
        ("shm", "/proc/sysvipc/shm"),
    ] {
        if let Ok(text) = fs::read_to_string(file) {
            let objs = parse_sysvipc(&text);
            sysv_left.extend(clean_sysv_objects(
                kind,
                objs,
                &records,
                &here,
                &System,
                &mut report,
            ));
        }
    }
    for dir in dirs {
        clean_dir(&dir, &here, &System, &sysv_left, &mut report);
    }
    clean_cgroups(cgroup::tax_cgroups(), &here, &System, &mut report);
    report
}

/// Removes the cgroups of `ipcmark tax` among `paths` whose run is gone
/// (killing what a killed run left in them); reports the others as live or
/// kept.
fn clean_cgroups(
    paths: Vec<PathBuf>,
    here: &Here,
    procs: &dyn Processes,
    report: &mut CleanReport,
) {
    for path in paths {
        let label = format!("cgroup {}", path.display());
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some((owner, _)) = owner_of_name(&name) else {
            continue;
        };
        match judge(owner, here, procs) {
            Verdict::Live => report.live.push(label),
            Verdict::Unproven(why) => report.kept.push(format!("{label} ({why})")),
            Verdict::Gone => match cgroup::remove_dir(&path) {
                Ok(()) => {
                    report.removed.push(label);
                    report.cgroups_removed += 1;
                }
                Err(e) => report.failed.push(format!("cgroup {e}")),
            },
        }
    }
}

/// Whether a name's `<what>-<n>` part is an owner record's.
fn is_sysv_record(what: &str) -> bool {
    what.strip_prefix("sysv-")
        .is_some_and(|n| n.parse::<u32>().is_ok())
}

/// The owners that the System V owner records in `dir` name: only regular
/// files that the user cleaning owns (anybody may create a file in
/// /dev/shm, and a forged record must not vouch for a death).
fn sysv_records(dir: &Path) -> Vec<Owner> {
    let euid = geteuid();
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let (NameOwner::Recorded(owner), what) = owner_of_name(&name)? else {
                return None;
            };
            let meta = entry.metadata().ok()?;
            (is_sysv_record(what) && meta.is_file() && meta.uid() == euid).then_some(owner)
        })
        .collect()
}

/// Removes the entries of `dir` named by a run that is gone; keeps owner
/// records of the pids in `sysv_left` (their objects are still there).
fn clean_dir(
    dir: &Path,
    here: &Here,
    procs: &dyn Processes,
    sysv_left: &HashSet<libc::pid_t>,
    report: &mut CleanReport,
) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((owner, what)) = owner_of_name(&name) else {
            continue;
        };
        let path = entry.path();
        let label = path.display().to_string();
        match judge(owner, here, procs) {
            Verdict::Live => {
                report.live.push(label);
                continue;
            }
            Verdict::Unproven(why) => {
                report.kept.push(format!("{label} ({why})"));
                continue;
            }
            Verdict::Gone => {}
        }
        if let NameOwner::Recorded(o) = owner
            && is_sysv_record(what)
            && sysv_left.contains(&o.pid)
        {
            report.kept.push(format!(
                "{label} (the owner record of System V objects that could not be removed)"
            ));
            continue;
        }
        let res = if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            if let Some(pid) = end_helper(&path) {
                report
                    .removed
                    .push(format!("{label}'s helper process {pid}"));
            }
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        match res {
            Ok(()) => report.removed.push(label),
            Err(e) => report.failed.push(format!("{label}: {e}")),
        }
    }
}

/// Ends the helper program an abandoned directory's [`HELPER_PID_FILE`]
/// names, if its command line still names the directory (a pid alone may
/// be another process's by now); its pid if it was sent SIGKILL.
fn end_helper(dir: &Path) -> Option<libc::pid_t> {
    let pid: libc::pid_t = fs::read_to_string(dir.join(HELPER_PID_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let dir_text = dir.display().to_string();
    let names_dir = cmdline
        .split(|&b| b == 0)
        .any(|arg| String::from_utf8_lossy(arg).contains(&dir_text));
    (names_dir && crate::sys::process::kill(pid, libc::SIGKILL).is_ok()).then_some(pid)
}

#[cfg(test)]
mod tests {
    use super::super::verdict::{Fake, here};
    use super::*;

    /// `clean` on a directory: a dead run's entry of our namespace goes; one
    /// of another namespace, one of the older name form and one of a live
    /// run stay, each said; another program's entry is not looked at.
    #[test]
    fn clean_dir_removes_only_what_is_provably_abandoned() {
        let dir = tempfile::tempdir().unwrap();
        let here = here();
        let procs = Fake {
            alive: vec![(100, 5000)],
        };
        let ns = here.pid_ns;
        let names = [
            format!("ipcmark-200-{ns}-5000-0123456789ab-fifo-1"),
            format!("ipcmark-201-{}-5000-0123456789ab-fifo-2", ns + 1),
            "ipcmark-202-fifo-3".to_string(),
            format!("ipcmark-100-{ns}-5000-0123456789ab-fifo-4"),
            "other-200-fifo".to_string(),
        ];
        for n in &names {
            fs::create_dir(dir.path().join(n)).unwrap();
            fs::write(dir.path().join(n).join("to-server"), b"").unwrap();
        }
        let mut report = CleanReport::default();
        clean_dir(dir.path(), &here, &procs, &HashSet::new(), &mut report);
        let present: Vec<bool> = names.iter().map(|n| dir.path().join(n).exists()).collect();
        assert_eq!(present, [false, true, true, true, true], "{report:?}");
        assert_eq!(report.removed.len(), 1, "{report:?}");
        assert_eq!(report.live.len(), 1, "{report:?}");
        assert_eq!(report.kept.len(), 2, "{report:?}");
        assert!(
            report
                .kept
                .iter()
                .any(|k| k.contains("another PID namespace"))
        );
        assert!(report.kept.iter().any(|k| k.contains("older ipcmark")));
    }

    /// A helper still running for an abandoned directory (its parent-death
    /// signal lost: it ignored SIGTERM, or was started elsewhere) is killed
    /// when its command line names the directory, and only then: a pid file
    /// naming any other process kills nothing.
    #[test]
    fn an_abandoned_directory_s_helper_is_killed_only_if_it_names_the_directory() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("ipcmark-1-2-3-abc-dbus-0");
        fs::create_dir(&dir).unwrap();
        // `sh -c CMD NAME FIFO`: NAME is $0, on the command line, unused.
        // The shell blocks opening a FIFO no one writes to, in a builtin
        // redirection, so it stays the process (a last external command such
        // as `sleep` may be exec'd in its place, and its command line would
        // not name the directory) and holds no descriptor of this process
        // that another test could close under it.
        let fifo = base.path().join("never-written");
        crate::sys::fd::mkfifo(&fifo).unwrap();
        let mut helper = std::process::Command::new("sh")
            .args(["-c", "trap '' TERM; read _ < \"$1\""])
            .arg(&dir)
            .arg(&fifo)
            .spawn()
            .unwrap();
        let pid = helper.id() as libc::pid_t;
        let mut other = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        fs::write(dir.join(HELPER_PID_FILE), format!("{}\n", other.id())).unwrap();
        assert_eq!(end_helper(&dir), None, "a process not naming the directory");
        assert!(other.try_wait().unwrap().is_none());
        fs::write(dir.join(HELPER_PID_FILE), format!("{pid}\n")).unwrap();
        let ended = end_helper(&dir);
        if ended.is_none() {
            // Only something outside this test ends the helper early (another
            // test's kill of a pid it had already reaped, reused here): say how.
            panic!(
                "helper {pid} not killed; it had ended: {:?}",
                helper.try_wait()
            );
        }
        assert_eq!(ended, Some(pid));
        let status = helper.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        // Gone: nothing to kill, nothing to say.
        assert_eq!(end_helper(&dir), None);
        let _ = other.kill();
        let _ = other.wait();
    }

    /// `clean` on cgroups (as root, with a cpu hierarchy): one named for a
    /// dead run is removed and counted, a live run's is kept.
    #[test]
    fn clean_removes_a_dead_runs_cgroup_and_keeps_a_live_ones() {
        if geteuid() != 0 {
            println!("skipped: making a cgroup needs root");
            return;
        }
        let live = match cgroup::FreshCgroup::create("clean", None) {
            Ok(cg) => cg,
            Err(why) => {
                println!("skipped: {why}");
                return;
            }
        };
        // The same name for a pid above pid_max, which never runs.
        let pid_max: u64 = fs::read_to_string("/proc/sys/kernel/pid_max")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let name = live
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let (_, rest) = name
            .strip_prefix("ipcmark-")
            .unwrap()
            .split_once('-')
            .unwrap();
        let dead = live
            .path()
            .with_file_name(format!("ipcmark-{}-{rest}", pid_max + 1));
        fs::create_dir(&dead).unwrap();
        let mut report = CleanReport::default();
        let paths = vec![dead.clone(), live.path().to_path_buf()];
        clean_cgroups(paths, &here(), &System, &mut report);
        let gone = !dead.exists();
        // Removed on every path, before the assertions.
        let _ = cgroup::remove_dir(&dead);
        let live_path = live.path().to_path_buf();
        live.remove().unwrap();
        assert!(gone, "{report:?}");
        assert_eq!(report.cgroups_removed, 1, "{report:?}");
        assert!(report.removed[0].starts_with("cgroup "), "{report:?}");
        assert_eq!(report.live, [format!("cgroup {}", live_path.display())]);
        assert!(report.failed.is_empty(), "{report:?}");
    }
}
