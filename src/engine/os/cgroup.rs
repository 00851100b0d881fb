//! A fresh cgroup with the cpu controller, for a figure measured the way a
//! container runs: its processes in a cgroup of their own, with a CPU
//! quota where asked.
//!
//! Cgroup v2 where a v2 hierarchy offers the cpu controller (the cgroup is
//! made at that hierarchy's root, where the no-internal-process rule does
//! not apply, enabling +cpu for the root's children if needed), else the
//! cgroup v1 `cpu` hierarchy, at its root. A process cannot leave a cgroup,
//! only move to another: the process that makes a [`FreshCgroup`] never
//! enters it; the children it forks do, and it removes the cgroup once they
//! are gone ([`FreshCgroup::remove`] kills what is left first).
//!
//! A cgroup is named `ipcmark-<pid>-<pidns>-<start>-<random>-tax-<tag>-<n>`
//! by [`ObjectNamer`], like every object of ipcmark's, so that `ipcmark
//! clean` can judge whether the run that made it is gone ([`abandoned`]).

use super::objects::{ObjectNamer, note_left_behind};
#[cfg(test)]
use super::objects::{Verdict, judge_name};
use crate::sys::process::{getpid, kill};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The `<what>` of a tax cgroup's name starts with this.
const WHAT_PREFIX: &str = "tax-";

/// How long [`FreshCgroup::remove`] keeps killing what is in a cgroup
/// before it gives up.
const REMOVE_DEADLINE: Duration = Duration::from_secs(5);

/// The CPU bandwidth periods both cgroup versions accept (cpu.max's and
/// cpu.cfs_period_us's bounds), and the smallest quota.
const MIN_PERIOD: Duration = Duration::from_millis(1);
const MAX_PERIOD: Duration = Duration::from_secs(1);
const MIN_QUOTA: Duration = Duration::from_millis(1);

/// Which cgroup version a FreshCgroup lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    /// A v1 hierarchy with the `cpu` controller.
    V1,
    /// The unified (v2) hierarchy.
    V2,
}

/// Throttling counted by the cpu controller since the cgroup was made.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Throttling {
    /// Enforcement periods in which the cgroup had runnable tasks.
    pub periods: u64,
    /// Periods in which it used up its quota and was throttled.
    pub throttled_periods: u64,
    /// Total time its tasks were held throttled, in nanoseconds.
    pub throttled_ns: u64,
}

/// A cgroup ipcmark made for a figure.
#[derive(Debug)]
pub struct FreshCgroup {
    path: PathBuf,
    /// `path/cgroup.procs`, built once so that [`enter`](Self::enter) in a
    /// freshly forked child allocates nothing.
    procs: PathBuf,
    version: CgroupVersion,
    /// The process that made it: only it removes the cgroup on drop (a
    /// forked child inherits the value and must leave the cgroup alone).
    owner: libc::pid_t,
    removed: bool,
}

/// A mounted cgroup hierarchy whose root ipcmark may make cgroups in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hierarchy {
    root: PathBuf,
    version: CgroupVersion,
}

/// One line of /proc/self/mountinfo, as far as it matters here.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    point: PathBuf,
    fstype: String,
    /// The super block's options: a v1 hierarchy's controllers.
    superopts: Vec<String>,
    read_only: bool,
}

/// The mounts of a /proc/self/mountinfo text (`ID PARENT MAJ:MIN ROOT POINT
/// OPTS [OPTIONAL…] - FSTYPE SOURCE SUPEROPTS`); lines it cannot read are
/// left out.
fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            let (point, opts) = (left.get(4)?, left.get(5)?);
            let fstype = right.next()?.to_string();
            let superopts = right.nth(1).unwrap_or("");
            Some(Mount {
                point: PathBuf::from(unescape(point)),
                fstype,
                superopts: superopts.split(',').map(str::to_string).collect(),
                read_only: opts.split(',').any(|o| o == "ro"),
            })
        })
        .collect()
}

/// A mountinfo path with its octal escapes (`\040` for a space) decoded.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push(d.iter().fold(0u8, |v, c| v.wrapping_mul(8) + (c - b'0')));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The hierarchies of `mounts` with the cpu controller that can be written:
/// v2 ones whose root offers cpu (`controllers` reads a root's
/// cgroup.controllers) first, then v1 ones. Err says what was found instead.
fn cpu_hierarchies(
    mounts: &[Mount],
    controllers: impl Fn(&Path) -> Option<String>,
) -> Result<Vec<Hierarchy>, String> {
    let mut v2 = Vec::new();
    let mut v1 = Vec::new();
    let mut seen = Vec::new();
    for m in mounts.iter().filter(|m| !m.read_only) {
        match m.fstype.as_str() {
            "cgroup2" => {
                let offered = controllers(&m.point).unwrap_or_default();
                if offered.split_whitespace().any(|c| c == "cpu") {
                    v2.push(m);
                } else {
                    seen.push(format!(
                        "cgroup2 at {} offers [{}]",
                        m.point.display(),
                        offered.trim()
                    ));
                }
            }
            "cgroup" if m.superopts.iter().any(|o| o == "cpu") => v1.push(m),
            _ => {}
        }
    }
    let found: Vec<Hierarchy> = v2
        .iter()
        .map(|m| (m, CgroupVersion::V2))
        .chain(v1.iter().map(|m| (m, CgroupVersion::V1)))
        .map(|(m, version)| Hierarchy {
            root: m.point.clone(),
            version,
        })
        .collect();
    if found.is_empty() {
        seen.push("no cgroup v1 hierarchy has cpu".into());
        return Err(format!(
            "no writable cgroup hierarchy with the cpu controller is mounted ({})",
            seen.join("; ")
        ));
    }
    Ok(found)
}

/// This machine's hierarchies with the cpu controller, v2 first.
fn this_machines_cpu_hierarchies() -> Result<Vec<Hierarchy>, String> {
    let text = fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    cpu_hierarchies(&parse_mountinfo(&text), |root| {
        fs::read_to_string(root.join("cgroup.controllers")).ok()
    })
}

/// Whether `tag` may go into a cgroup's name: letters, digits, `_`, `.`
/// and `-`, at most 48 of them.
fn valid_tag(tag: &str) -> bool {
    !tag.is_empty()
        && tag.len() <= 48
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// `quota` per `period`, checked against the bounds both versions accept.
fn check_quota(quota: Duration, period: Duration) -> Result<(), String> {
    if !(MIN_PERIOD..=MAX_PERIOD).contains(&period) {
        return Err(format!(
            "a CPU quota period of {period:?} is outside the kernel's {MIN_PERIOD:?} to {MAX_PERIOD:?}"
        ));
    }
    if quota < MIN_QUOTA {
        return Err(format!(
            "a CPU quota of {quota:?} is below the kernel's least, {MIN_QUOTA:?}"
        ));
    }
    Ok(())
}

/// One-line reason for a failed write to a cgroup file.
fn write_error(file: &Path, e: &io::Error) -> String {
    format!("cannot write {}: {e}", file.display())
}

impl FreshCgroup {
    /// Makes a fresh cgroup with the cpu controller, and with a CPU quota
    /// `quota` per `period` where given (v2 cpu.max "Q P", v1
    /// cpu.cfs_quota_us / cpu.cfs_period_us); Err says why not (no root, no
    /// cpu controller, …) in one line. `tag` (letters, digits, `_.-`) goes
    /// into its name. With cgroup v2 this may enable the cpu controller
    /// for the children of the hierarchy's root, for good.
    pub fn create(tag: &str, quota: Option<(Duration, Duration)>) -> Result<FreshCgroup, String> {
        if !valid_tag(tag) {
            return Err(format!(
                "cgroup tag {tag:?} is not 1 to 48 letters, digits, '_', '.' or '-'"
            ));
        }
        if let Some((q, p)) = quota {
            check_quota(q, p)?;
        }
        let h = this_machines_cpu_hierarchies()?.remove(0);
        if h.version == CgroupVersion::V2 {
            enable_cpu_for_children(&h.root)?;
        }
        let path = ObjectNamer::new()
            .temp_dir(&h.root, &format!("{WHAT_PREFIX}{tag}"))
            .map_err(|e| {
                let hint = match e.raw_os_error() {
                    Some(libc::EACCES | libc::EPERM | libc::EROFS) => {
                        " (making a cgroup needs root, or a cgroup delegated to this user)"
                    }
                    _ => "",
                };
                format!("cannot make a cgroup in {}: {e}{hint}", h.root.display())
            })?;
        // From here on, dropping `cg` removes the cgroup.
        let cg = FreshCgroup {
            procs: path.join("cgroup.procs"),
            path,
            version: h.version,
            owner: getpid(),
            removed: false,
        };
        if let Some((q, p)) = quota {
            cg.set_quota(q, p)?;
        }
        Ok(cg)
    }

    /// Writes the CPU bandwidth limit.
    fn set_quota(&self, quota: Duration, period: Duration) -> Result<(), String> {
        let (q, p) = (quota.as_micros(), period.as_micros());
        let writes: Vec<(&str, String)> = match self.version {
            CgroupVersion::V2 => vec![("cpu.max", format!("{q} {p}"))],
            // The period first: a quota is checked against it.
            CgroupVersion::V1 => vec![
                ("cpu.cfs_period_us", p.to_string()),
                ("cpu.cfs_quota_us", q.to_string()),
            ],
        };
        for (file, value) in writes {
            let file = self.path.join(file);
            fs::write(&file, value).map_err(|e| write_error(&file, &e))?;
        }
        Ok(())
    }

    /// Which cgroup version it lives in.
    pub fn version(&self) -> CgroupVersion {
        self.version
    }

    /// Its directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the calling process (all its threads: cgroup.procs) into it.
    /// Allocates nothing, for a child just forked. For the children only:
    /// a process cannot leave a cgroup, so the one that made it must not.
    pub fn enter(&self) -> io::Result<()> {
        // "0" is the writer itself, in either version.
        write_existing(&self.procs, b"0")
    }

    /// Moves process `pid` into it.
    #[cfg(test)]
    pub fn add(&self, pid: i32) -> io::Result<()> {
        let mut buf = [0u8; 12];
        let mut cursor = io::Cursor::new(&mut buf[..]);
        write!(cursor, "{pid}")?;
        let n = cursor.position() as usize;
        write_existing(&self.procs, &buf[..n])
    }

    /// The processes in it now (its cgroup.procs).
    #[cfg(test)]
    pub fn procs(&self) -> io::Result<Vec<i32>> {
        read_procs(&self.procs)
    }

    /// From its cpu.stat (v2: nr_periods, nr_throttled, throttled_usec; v1:
    /// nr_periods, nr_throttled, throttled_time in ns).
    pub fn throttling(&self) -> io::Result<Throttling> {
        let text = fs::read_to_string(self.path.join("cpu.stat"))?;
        parse_cpu_stat(&text, self.version)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "cpu.stat has no nr_periods"))
    }

    /// Kills whatever is still in it (v2 cgroup.kill where present, else
    /// SIGKILL to each pid of cgroup.procs, repeated until empty, for a few
    /// seconds at most), then removes the directory; Err says what was left.
    /// The killed processes stay the zombies of their parents until reaped.
    pub fn remove(mut self) -> Result<(), String> {
        self.removed = true;
        remove_cgroup(&self.path)
    }
}

impl Drop for FreshCgroup {
    /// Best-effort [`remove`](FreshCgroup::remove), in the process that made
    /// it only; what it could not remove is noted for the run's report.
    fn drop(&mut self) {
        if self.removed || getpid() != self.owner {
            return;
        }
        if let Err(e) = remove_cgroup(&self.path) {
            note_left_behind(format!("cgroup {e}"));
        }
    }
}

/// Writes `what` in one write to a file that exists (a cgroup's control
/// file: cgroup.procs, cgroup.kill).
fn write_existing(file: &Path, what: &[u8]) -> io::Result<()> {
    fs::OpenOptions::new()
        .write(true)
        .open(file)?
        .write_all(what)
}

/// The pids a cgroup.procs file lists.
fn read_procs(procs: &Path) -> io::Result<Vec<i32>> {
    Ok(fs::read_to_string(procs)?
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect())
}

/// Throttling in a cpu.stat text; `None` without nr_periods (no cpu
/// controller there).
fn parse_cpu_stat(text: &str, version: CgroupVersion) -> Option<Throttling> {
    let field = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse::<u64>().ok()).flatten()
        })
    };
    let throttled_ns = match version {
        CgroupVersion::V2 => field("throttled_usec").unwrap_or(0).saturating_mul(1000),
        CgroupVersion::V1 => field("throttled_time").unwrap_or(0),
    };
    Some(Throttling {
        periods: field("nr_periods")?,
        throttled_periods: field("nr_throttled").unwrap_or(0),
        throttled_ns,
    })
}

/// Makes the cpu controller available to the children of the v2 cgroup
/// `root` (its cgroup.subtree_control), if it is not already.
fn enable_cpu_for_children(root: &Path) -> Result<(), String> {
    let file = root.join("cgroup.subtree_control");
    let now =
        fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if now.split_whitespace().any(|c| c == "cpu") {
        return Ok(());
    }
    fs::write(&file, "+cpu").map_err(|e| {
        format!(
            "cannot enable the cpu controller for the cgroups below {} ({})",
            root.display(),
            write_error(&file, &e)
        )
    })
}

/// Kills what is in the cgroup at `path` and removes it (see
/// [`FreshCgroup::remove`]). Err: "PATH: what was left".
fn remove_cgroup(path: &Path) -> Result<(), String> {
    let label = path.display();
    let procs = path.join("cgroup.procs");
    let kill_file = path.join("cgroup.kill");
    let deadline = Instant::now() + REMOVE_DEADLINE;
    // v2 (5.14 on) kills the whole cgroup, forks in flight included; v1
    // has no such file (and none can be created in a cgroup).
    let _ = write_existing(&kill_file, b"1");
    loop {
        let left = match read_procs(&procs) {
            Ok(left) => left,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(format!("{label}: cannot read cgroup.procs: {e}")),
        };
        if left.is_empty() {
            match fs::remove_dir(path) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                // EBUSY: a task is still on its way out; wait for it.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < deadline => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    return Err(format!(
                        "{label}: still busy after {REMOVE_DEADLINE:?} with no process \
                         listed (a cgroup inside it, or a task that does not finish exiting)"
                    ));
                }
                Err(e) => return Err(format!("{label}: {e}")),
            }
        } else {
            if Instant::now() >= deadline {
                return Err(format!(
                    "{label}: processes {left:?} still in it after {REMOVE_DEADLINE:?} of SIGKILL"
                ));
            }
            for pid in left {
                // ESRCH: gone meanwhile.
                let _ = kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The directories of ipcmark's tax cgroups at the roots of this machine's
/// hierarchies with the cpu controller, whoever made them.
pub fn tax_cgroups() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = this_machines_cpu_hierarchies()
        .unwrap_or_default()
        .into_iter()
        // A v1 hierarchy mounted twice (cpu and cpu,cpuacct) is one.
        .filter_map(|h| fs::canonicalize(&h.root).ok())
        .collect();
    roots.sort();
    roots.dedup();
    let mut found = Vec::new();
    for root in roots {
        let Ok(entries) = fs::read_dir(&root) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_tax_name(&name) && entry.file_type().is_ok_and(|t| t.is_dir()) {
                found.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

/// Whether `name` is a tax cgroup's name of ipcmark's.
fn is_tax_name(name: &str) -> bool {
    super::objects::owner_of_name(name).is_some_and(|(_, what)| what.starts_with(WHAT_PREFIX))
}

/// The directories of cgroups named ipcmark-PID-…-tax-* in either
/// hierarchy whose run is provably gone (left by a killed run): its PID no
/// longer runs, or runs a process started later.
#[cfg(test)]
pub fn abandoned() -> Vec<PathBuf> {
    tax_cgroups()
        .into_iter()
        .filter(|p| {
            p.file_name().and_then(|n| judge_name(&n.to_string_lossy())) == Some(Verdict::Gone)
        })
        .collect()
}

/// Removes one such cgroup (killing anything left in it first). Refuses a
/// directory that is not a tax cgroup of ipcmark's.
pub fn remove_dir(path: &Path) -> Result<(), String> {
    let ours = path
        .file_name()
        .is_some_and(|n| is_tax_name(&n.to_string_lossy()));
    if !ours || !path.join("cgroup.procs").exists() {
        return Err(format!(
            "{}: not a cgroup ipcmark made for `tax`",
            path.display()
        ));
    }
    remove_cgroup(path)
}

#[cfg(test)]
mod tests;
