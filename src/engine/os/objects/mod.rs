//! Names of the OS objects ipcmark creates, their release, and `ipcmark clean`.
//!
//! A named object is called `ipcmark-<pid>-<pidns>-<start>-<random>-<what>-<n>`:
//! the creating process's pid, the inode of its PID namespace and its start
//! time (clock ticks after boot, field 22 of /proc/PID/stat) say who made it,
//! so that `clean` removes it only once that process is provably gone (a pid
//! alone names another process in another PID namespace, or after reuse); the
//! random part (from the kernel's generator) makes the name unguessable, so
//! that nobody can make a run fail by creating its names first, and a name
//! found taken all the same is replaced by a fresh one. A System V key has
//! room for the pid alone: the process's namespace and start time go in an
//! owner record, an empty file `ipcmark-…-sysv-<n>` in /dev/shm that exists
//! while the process holds System V objects.

use crate::sys::process::{geteuid, getpid, process_exists};
use crate::sys::sysv;
use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// Prefix of every named object.
pub const PREFIX: &str = "ipcmark-";

// A System V key is 32 bits: a tag (4), the creating pid (22: Linux's
// PID_MAX_LIMIT is 2^22) and a slot (6). A 4-bit tag alone would claim one
// key in 16, so `ipcmark clean` also requires the owner and the mode ipcmark
// creates with before it removes an object (see `creator_of`).
/// Top four bits of every System V key ipcmark uses. The high bit is set:
/// `ftok` keys carry their project id (nearly always ASCII, below 0x80) in
/// the top byte, and keys picked by hand are mostly small positive numbers.
const SYSV_KEY_TAG: u32 = 0xA;
const SYSV_TAG_SHIFT: u32 = 28;
const SYSV_PID_BITS: u32 = 22;
const SYSV_SLOT_BITS: u32 = 6;
const SYSV_PID_MASK: u32 = (1 << SYSV_PID_BITS) - 1;

/// How many System V objects one process can hold at once: its keys.
pub const SYSV_KEYS: u32 = 1 << SYSV_SLOT_BITS;

/// The key of slot `slot` (taken modulo [`SYSV_KEYS`]) of process `pid`.
fn sysv_key(pid: libc::pid_t, slot: u32) -> libc::key_t {
    let key = (SYSV_KEY_TAG << SYSV_TAG_SHIFT)
        | ((pid as u32 & SYSV_PID_MASK) << SYSV_SLOT_BITS)
        | (slot % SYSV_KEYS);
    key as libc::key_t
}

/// The next slot to try, process-wide: two namers in one process (tests run
/// in parallel threads) share the process's keys.
static NEXT_SLOT: AtomicU32 = AtomicU32::new(0);

/// How many fresh names are tried for one object before giving up: a taken
/// random name is already a sign that somebody is squatting on the names.
const NAME_TRIES: u32 = 8;

/// Hex digits of a name's random part (48 bits).
const TAG_DIGITS: usize = 12;

/// The process that made an object, as its name records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    /// Its pid, in its own PID namespace.
    pub pid: libc::pid_t,
    /// The inode of its PID namespace (0: unknown).
    pub pid_ns: u64,
    /// Its start time, clock ticks after boot (0: unknown).
    pub start: u64,
}

impl Owner {
    /// The calling process.
    pub fn current() -> Owner {
        Owner {
            pid: getpid(),
            pid_ns: pid_namespace("self").unwrap_or(0),
            start: start_time("self").unwrap_or(0),
        }
    }
}

/// The inode of the PID namespace of process `pid` ("self" or a number, as
/// /proc names it).
fn pid_namespace(pid: &str) -> Option<u64> {
    fs::metadata(format!("/proc/{pid}/ns/pid"))
        .ok()
        .map(|m| m.ino())
}

/// The start time of process `pid` (as in [`pid_namespace`]).
fn start_time(pid: &str) -> Option<u64> {
    start_time_in(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Field 22 (`starttime`) of the text of a /proc/PID/stat. The command name
/// (field 2, in parentheses) may hold spaces and parentheses itself, so the
/// fields are counted from the last `)`.
fn start_time_in(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// Who made an object, as far as its name tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameOwner {
    /// A name of the current form: pid, PID namespace and start time.
    Recorded(Owner),
    /// A name of the older form `ipcmark-<pid>-<what>-<n>`: the pid alone.
    PidOnly(libc::pid_t),
}

/// The owner recorded in a name `ipcmark-<pid>-…` (also `sem.ipcmark-…`,
/// as a POSIX semaphore appears in /dev/shm), and what follows it (the
/// `<what>-<n>` part); `None` for a name that is not ipcmark's.
pub fn owner_of_name(name: &str) -> Option<(NameOwner, &str)> {
    let rest = name
        .strip_prefix("sem.")
        .unwrap_or(name)
        .strip_prefix(PREFIX)?;
    let (pid, rest) = rest.split_once('-')?;
    let pid: libc::pid_t = pid.parse().ok().filter(|&p| p > 0)?;
    let mut parts = rest.splitn(4, '-');
    let (ns, start, tag, what) = (parts.next(), parts.next(), parts.next(), parts.next());
    if let (Some(ns), Some(start), Some(tag), Some(what)) = (ns, start, tag, what)
        && let (Ok(pid_ns), Ok(start)) = (ns.parse(), start.parse())
        && tag.len() == TAG_DIGITS
        && tag.bytes().all(|b| b.is_ascii_hexdigit())
    {
        let owner = Owner { pid, pid_ns, start };
        return Some((NameOwner::Recorded(owner), what));
    }
    Some((NameOwner::PidOnly(pid), rest))
}

/// 48 random bits from the kernel's generator. Should it fail (it does not
/// on Linux since 3.17), fastrand's own seed still varies by process and time,
/// and a taken name is replaced anyway.
fn random_tag() -> u64 {
    getrandom::u64().unwrap_or_else(|_| fastrand::u64(..)) & ((1 << (4 * TAG_DIGITS)) - 1)
}

/// Hands out unique names for the objects of one run.
pub struct ObjectNamer {
    owner: Owner,
}

impl Default for ObjectNamer {
    fn default() -> Self {
        Self::new()
    }
}

impl ObjectNamer {
    /// A namer for the calling process.
    pub fn new() -> Self {
        ObjectNamer {
            owner: Owner::current(),
        }
    }

    /// A fresh name `ipcmark-<pid>-<pidns>-<start>-<random>-<what>-<n>` (no
    /// leading slash). Create objects with [`create_named`](Self::create_named),
    /// which replaces a name somebody took first.
    pub fn name(&self, what: &str) -> String {
        // Process-wide, not per namer: two namers in one process (tests run
        // in parallel threads) must never hand out the same name.
        static NEXT_NAME: AtomicU32 = AtomicU32::new(0);
        let n = NEXT_NAME.fetch_add(1, Ordering::Relaxed);
        let o = &self.owner;
        format!(
            "{PREFIX}{}-{}-{}-{:0w$x}-{what}-{n}",
            o.pid,
            o.pid_ns,
            o.start,
            random_tag(),
            w = TAG_DIGITS
        )
    }

    /// Creates an object with a fresh [`name`](Self::name): `create` is
    /// given names in turn until it does not fail with EEXIST (creation must
    /// be exclusive: `O_EXCL`, `mkdir`), at most a few times. Returns the
    /// name it took and what `create` made.
    pub fn create_named<T>(
        &self,
        what: &str,
        mut create: impl FnMut(&str) -> io::Result<T>,
    ) -> io::Result<(String, T)> {
        let mut taken = String::new();
        for _ in 0..NAME_TRIES {
            let name = self.name(what);
            match create(&name) {
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => taken = name,
                done => return done.map(|made| (name, made)),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{NAME_TRIES} fresh random names for a {what} were all taken (the last: {taken}): \
                 another process is creating names of ipcmark's form"
            ),
        ))
    }

    /// Creates a System V object with a key of this process and returns its
    /// id and the guard that removes it. `create` gets keys in turn until one
    /// is free. The slots cycle, and a key stays taken while its object lives
    /// (`create` is to fail with EEXIST, as `IPC_CREAT | IPC_EXCL` does):
    /// such a key, ours or left by a killed run with the same pid, is
    /// skipped. Fails once every key has been tried. The process's owner
    /// record is made before the first object and removed after the last.
    pub fn create_sysv(
        &self,
        kind: &'static str,
        mut create: impl FnMut(libc::key_t) -> io::Result<i32>,
    ) -> io::Result<(i32, Cleanup)> {
        hold_sysv_record(self);
        for _ in 0..SYSV_KEYS {
            let slot = NEXT_SLOT.fetch_add(1, Ordering::Relaxed);
            match create(sysv_key(self.owner.pid, slot)) {
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                Ok(id) => {
                    let cleanup = Cleanup::new(move || {
                        match sysv::remove(kind, id) {
                            // Removed, or already gone.
                            Ok(()) => {}
                            Err(e)
                                if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::EIDRM)) => {
                            }
                            Err(e) => left_behind(format!("System V {kind} id {id}: {e}")),
                        }
                        release_sysv_record();
                    });
                    return Ok((id, cleanup));
                }
                Err(e) => {
                    release_sysv_record();
                    return Err(e);
                }
            }
        }
        release_sysv_record();
        Err(io::Error::other(format!(
            "all {SYSV_KEYS} System V keys of process {} are taken (a run holds at most {SYSV_KEYS} System V objects at once; `ipcmark clean` removes those a killed run with the same pid left)",
            self.owner.pid
        )))
    }

    /// The next `n` keys [`create_sysv`](Self::create_sysv) will try, in order.
    #[cfg(test)]
    pub fn upcoming_sysv_keys(&self, n: u32) -> Vec<libc::key_t> {
        let next = NEXT_SLOT.load(Ordering::Relaxed);
        (0..n)
            .map(|i| sysv_key(self.owner.pid, next.wrapping_add(i)))
            .collect()
    }

    /// Creates a fresh directory `ipcmark-…-<what>-<n>` under `base`.
    pub fn temp_dir(&self, base: &Path, what: &str) -> std::io::Result<PathBuf> {
        self.create_named(what, |name| {
            let dir = base.join(name);
            fs::create_dir(&dir).map(|()| dir)
        })
        .map(|(_, dir)| dir)
    }
}

/// The process's owner record of its System V objects: where, for which
/// process (a forked child starts without one), and how many objects it covers.
struct SysvRecord {
    pid: libc::pid_t,
    path: Option<PathBuf>,
    held: usize,
}

static SYSV_RECORD: Mutex<SysvRecord> = Mutex::new(SysvRecord {
    pid: 0,
    path: None,
    held: 0,
});

fn sysv_record() -> std::sync::MutexGuard<'static, SysvRecord> {
    let mut rec = SYSV_RECORD.lock().unwrap_or_else(|e| e.into_inner());
    if rec.pid != getpid() {
        // A forked child: the parent's record is the parent's.
        *rec = SysvRecord {
            pid: getpid(),
            path: None,
            held: 0,
        };
    }
    rec
}

/// Counts one more System V object, making the owner record for the first.
/// If the record cannot be made the object is still released by its
/// creator; only `clean`, after a `kill -9`, then keeps it (no proof its run
/// is gone).
fn hold_sysv_record(namer: &ObjectNamer) {
    let mut rec = sysv_record();
    if rec.held == 0 {
        let made = namer.create_named("sysv", |name| {
            let path = tmpfs_base().join(name);
            fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .map(|_| path)
        });
        rec.path = made.ok().map(|(_, path)| path);
    }
    rec.held += 1;
}

/// Counts one System V object fewer, removing the owner record after the last.
fn release_sysv_record() {
    let mut rec = sysv_record();
    rec.held = rec.held.saturating_sub(1);
    if rec.held == 0
        && let Some(path) = rec.path.take()
        && let Err(e) = fs::remove_file(&path)
        && e.kind() != io::ErrorKind::NotFound
    {
        left_behind(format!("{}: {e}", path.display()));
    }
}

/// What the process's clean-up could not remove, for [`take_left_behind`].
static LEFT_BEHIND: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Notes an object that a release action could not remove: "what: why".
fn left_behind(what: String) {
    LEFT_BEHIND
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(what);
}

/// The objects this process's release actions could not remove so far, as
/// "what: why" (the command line says so before it exits); empties the list.
pub fn take_left_behind() -> Vec<String> {
    std::mem::take(&mut *LEFT_BEHIND.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Held by unit tests that create System V objects. Tests run as threads of
/// one process, which has [`SYSV_KEYS`] keys; some tests hold many objects at
/// once or squat on the keys to come, so they take turns.
#[cfg(test)]
pub fn sysv_test_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The pid encoded in a System V key, if the key carries ipcmark's tag. The
/// tag alone does not make an object ours: `clean` also checks its mode and owner.
pub fn pid_of_sysv_key(key: i64) -> Option<libc::pid_t> {
    let key = key as u32;
    ((key >> SYSV_TAG_SHIFT) == SYSV_KEY_TAG)
        .then_some(((key >> SYSV_SLOT_BITS) & SYSV_PID_MASK) as libc::pid_t)
}

/// Where disk-backed temporary objects go: `$TMPDIR`, else `/var/tmp`
/// (which, unlike `/tmp`, is on disk on the usual distributions).
pub fn disk_temp_base() -> PathBuf {
    std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(|| PathBuf::from("/var/tmp"))
}

/// Where memory-backed temporary objects go.
pub fn tmpfs_base() -> PathBuf {
    PathBuf::from("/dev/shm")
}

/// Runs a release action when dropped, but only in the process that created it:
/// a forked peer inherits the value and must never release the parent's objects.
pub struct Cleanup {
    owner: libc::pid_t,
    action: Option<Box<dyn FnOnce() + Send>>,
}

impl Cleanup {
    /// Registers `action` to run on drop in the calling process.
    pub fn new(action: impl FnOnce() + Send + 'static) -> Self {
        Cleanup {
            owner: getpid(),
            action: Some(Box::new(action)),
        }
    }

    /// Removes `dir` and everything in it on drop; what it cannot remove is
    /// noted for [`take_left_behind`].
    pub fn remove_dir(dir: PathBuf) -> Self {
        Cleanup::remove_tree(dir, &[])
    }

    /// Removes the `entries` (file names) that `dir` may hold, then `dir`, on
    /// drop. By path, with no descriptor: a release that runs because the
    /// process ran out of descriptors (EMFILE) must not need one, as
    /// `remove_dir_all` does to list a directory. Anything else in `dir`
    /// is then removed by `remove_dir_all`; what cannot be removed is noted
    /// for [`take_left_behind`].
    pub fn remove_tree(dir: PathBuf, entries: &'static [&'static str]) -> Self {
        Cleanup::new(move || {
            if let Err(e) = remove_tree(&dir, entries) {
                left_behind(format!("{}: {e}", dir.display()));
            }
        })
    }
}

/// See [`Cleanup::remove_tree`].
fn remove_tree(dir: &Path, entries: &[&str]) -> io::Result<()> {
    let gone = |r: io::Result<()>| match r {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    };
    for entry in entries {
        gone(fs::remove_file(dir.join(entry)))?;
    }
    match fs::remove_dir(dir) {
        Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => gone(fs::remove_dir_all(dir)),
        other => gone(other),
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if getpid() == self.owner
            && let Some(action) = self.action.take()
        {
            action();
        }
    }
}

/// What `ipcmark clean` found and did.
#[derive(Debug, Default)]
pub struct CleanReport {
    /// Objects removed, as "kind name".
    pub removed: Vec<String>,
    /// Objects left alone because their run is still alive.
    pub live: Vec<String>,
    /// Objects left alone because their run cannot be proven gone, as
    /// "object (why)".
    pub kept: Vec<String>,
    /// Objects that could not be removed, with the reason.
    pub failed: Vec<String>,
}

/// What `clean` needs to know of the process it runs in.
#[derive(Debug, Clone, Copy)]
struct Here {
    /// Our PID namespace's inode (0: unknown).
    pid_ns: u64,
    /// Whether /proc shows the processes of our PID namespace (it shows
    /// another's when mounted there: then no start time can be checked).
    proc_ours: bool,
}

impl Here {
    fn now() -> Here {
        let me = Owner::current();
        let pid = me.pid.to_string();
        let proc_ours = me.pid_ns != 0
            && me.start != 0
            && pid_namespace(&pid) == Some(me.pid_ns)
            && start_time(&pid) == Some(me.start);
        Here {
            pid_ns: me.pid_ns,
            proc_ours,
        }
    }
}

/// Whether an object's run is gone, and if it is not known to be, why.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    /// Its process is gone: the object may go.
    Gone,
    /// Its process is alive.
    Live,
    /// Whether its process lives cannot be told from here.
    Unproven(String),
}

/// How `clean` sees a pid of its own PID namespace.
trait Processes {
    fn exists(&self, pid: libc::pid_t) -> bool;
    fn start_time(&self, pid: libc::pid_t) -> Option<u64>;
}

/// This machine's processes.
struct System;

impl Processes for System {
    fn exists(&self, pid: libc::pid_t) -> bool {
        process_exists(pid)
    }
    fn start_time(&self, pid: libc::pid_t) -> Option<u64> {
        start_time(&pid.to_string())
    }
}

/// Judges an object's run. Only a process of our own PID namespace can be
/// looked up: there it is gone if its pid is, or if the pid now belongs to a
/// process started at another time. An owner in another namespace, or one
/// whose name records none, is kept: its pid means nothing here.
fn judge(owner: NameOwner, here: &Here, procs: &dyn Processes) -> Verdict {
    let o = match owner {
        NameOwner::Recorded(o) => o,
        NameOwner::PidOnly(_) => {
            return Verdict::Unproven(
                "its name records no PID namespace or start time (an older ipcmark made it), \
                 so its pid cannot prove its run gone; remove it by hand if no run is going"
                    .into(),
            );
        }
    };
    if o.pid_ns == 0 || here.pid_ns == 0 {
        return Verdict::Unproven(
            "the PID namespace of its run or of this clean is unknown (/proc/PID/ns/pid unreadable)"
                .into(),
        );
    }
    if o.pid_ns != here.pid_ns {
        return Verdict::Unproven(format!(
            "its run is in another PID namespace (pid:[{}]; this clean runs in pid:[{}]), \
             where pid {} cannot be looked up from here",
            o.pid_ns, here.pid_ns, o.pid
        ));
    }
    if !procs.exists(o.pid) {
        return Verdict::Gone;
    }
    // A live pid with another start time is a later process that reused it.
    match (here.proc_ours && o.start != 0)
        .then(|| procs.start_time(o.pid))
        .flatten()
    {
        Some(start) if start != o.start => Verdict::Gone,
        _ => Verdict::Live,
    }
}

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
    report
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

/// One object of /proc/sysvipc/{msg,sem,shm}.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SysvObject {
    key: i64,
    id: i32,
    /// Permission bits.
    mode: u32,
    /// Owner.
    uid: u32,
    /// Creator.
    cuid: u32,
}

/// The objects listed in the text of a /proc/sysvipc file. Columns are found
/// by their heading (the files differ in the others); `perms` is octal.
fn parse_sysvipc(text: &str) -> Vec<SysvObject> {
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let heads: Vec<&str> = header.split_whitespace().collect();
    let col = |name: &str| heads.iter().position(|&h| h == name);
    let (Some(k), Some(p), Some(u), Some(c)) = (col("key"), col("perms"), col("uid"), col("cuid"))
    else {
        return Vec::new();
    };
    lines
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            Some(SysvObject {
                key: cols.get(k)?.parse().ok()?,
                id: cols.get(1)?.parse().ok()?,
                mode: u32::from_str_radix(cols.get(p)?, 8).ok()? & 0o777,
                uid: cols.get(u)?.parse().ok()?,
                cuid: cols.get(c)?.parse().ok()?,
            })
        })
        .collect()
}

/// The pid of the ipcmark run that created `obj`, if it looks like one of
/// ours in every way ipcmark can tell: the key carries our tag, the mode is
/// exactly the one ipcmark creates with, and `euid` (the user cleaning) both
/// created and owns it. Anything else is some other program's and is never
/// touched.
fn creator_of(obj: &SysvObject, euid: u32) -> Option<libc::pid_t> {
    let pid = pid_of_sysv_key(obj.key)?;
    (obj.mode == sysv::MODE && obj.uid == euid && obj.cuid == euid).then_some(pid)
}

/// Removes those of `objects` (of one kind) that ipcmark created in a run
/// that is provably gone: every owner record in `records` with the object's
/// pid must show its run gone, and without a record nothing proves it.
/// Returns the pids whose objects are still there (kept or failed).
fn clean_sysv_objects(
    kind: &str,
    objects: impl IntoIterator<Item = SysvObject>,
    records: &[Owner],
    here: &Here,
    procs: &dyn Processes,
    report: &mut CleanReport,
) -> HashSet<libc::pid_t> {
    let euid = geteuid();
    let mut left = HashSet::new();
    for obj in objects {
        let Some(pid) = creator_of(&obj, euid) else {
            continue;
        };
        let label = format!("sysv-{kind} id {} (key {:#x})", obj.id, obj.key as u32);
        // The pid in a key is 22 bits of it.
        let verdicts: Vec<Verdict> = records
            .iter()
            .filter(|o| (o.pid as u32 & SYSV_PID_MASK) as libc::pid_t == pid)
            .map(|&o| judge(NameOwner::Recorded(o), here, procs))
            .collect();
        let verdict = if verdicts.is_empty() {
            Verdict::Unproven(format!(
                "no owner record of pid {pid} in {} (an older ipcmark made it, or a run whose \
                 /dev/shm is not this one): its run cannot be proven gone; `ipcrm -{} {}` \
                 removes it if no run is going",
                tmpfs_base().display(),
                match kind {
                    "msg" => 'q',
                    "sem" => 's',
                    _ => 'm',
                },
                obj.id
            ))
        } else if let Some(v) = verdicts.iter().find(|v| **v != Verdict::Gone) {
            v.clone()
        } else {
            Verdict::Gone
        };
        match verdict {
            Verdict::Live => {
                report.live.push(label);
                left.insert(pid);
            }
            Verdict::Unproven(why) => {
                report.kept.push(format!("{label} ({why})"));
                left.insert(pid);
            }
            Verdict::Gone => match sysv::remove(kind, obj.id) {
                Ok(()) => report.removed.push(label),
                Err(e) => {
                    report.failed.push(format!("{label}: {e}"));
                    left.insert(pid);
                }
            },
        }
    }
    left
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The System V objects of one kind, as /proc lists them now.
    fn listed(kind: &str) -> Vec<SysvObject> {
        parse_sysvipc(&fs::read_to_string(format!("/proc/sysvipc/{kind}")).unwrap())
    }

    fn listed_id(kind: &str, id: i32) -> Option<SysvObject> {
        listed(kind).into_iter().find(|o| o.id == id)
    }

    #[test]
    fn sysv_keys_round_trip_the_pid_and_differ_by_slot() {
        for pid in [1, 2, 300, getpid(), (1 << 22) - 1] {
            let keys: std::collections::HashSet<_> =
                (0..SYSV_KEYS).map(|slot| sysv_key(pid, slot)).collect();
            assert_eq!(keys.len(), SYSV_KEYS as usize, "pid {pid}");
            for &key in &keys {
                // Never IPC_PRIVATE, which would make a new object each time.
                assert_ne!(key, libc::IPC_PRIVATE);
                assert_eq!(pid_of_sysv_key(key as i64), Some(pid), "{key:#x}");
                // /proc prints keys as signed ints.
                assert_eq!(pid_of_sysv_key(key as u32 as i64), Some(pid));
            }
            // The slot wraps.
            assert_eq!(sysv_key(pid, SYSV_KEYS + 3), sysv_key(pid, 3));
        }
        // Keys with another tag: a small key, an `ftok` key of project 'a',
        // the tag ipcmark used before.
        for key in [0x1234, 0x6100_0042, 0x6900_1234] {
            assert_eq!(pid_of_sysv_key(key), None, "{key:#x}");
        }
        let namer = ObjectNamer::new();
        for key in namer.upcoming_sysv_keys(SYSV_KEYS + 1) {
            assert_eq!(pid_of_sysv_key(key as i64), Some(getpid()));
        }
    }

    /// The interleaved sweep holds every figure's channel open at once.
    #[test]
    fn many_semaphore_sets_and_queues_are_open_at_once() {
        let _keys = sysv_test_lock();
        let namer = ObjectNamer::new();
        let mut made = Vec::new();
        let mut result = Ok(());
        for _ in 0..24 {
            for (kind, create) in [
                (
                    "sem",
                    &(|k| sysv::sem_create(k, 2)) as &dyn Fn(libc::key_t) -> io::Result<i32>,
                ),
                ("msg", &sysv::msg_create),
            ] {
                match namer.create_sysv(kind, create) {
                    Ok((id, cleanup)) => made.push((kind, id, cleanup)),
                    Err(e) => result = Err(format!("object {} ({kind}): {e}", made.len() + 1)),
                }
            }
        }
        let present: Vec<_> = made
            .iter()
            .map(|&(kind, id, _)| listed_id(kind, id))
            .collect();
        // The guards remove them.
        let made: Vec<(&str, i32)> = made.into_iter().map(|(kind, id, _)| (kind, id)).collect();
        result.unwrap();
        assert_eq!(made.len(), 48);
        let mut keys = std::collections::HashSet::new();
        for (obj, (kind, id)) in present.iter().zip(&made) {
            let obj = obj.unwrap_or_else(|| panic!("{kind} {id} not listed"));
            assert_eq!(pid_of_sysv_key(obj.key), Some(getpid()));
            assert_eq!(creator_of(&obj, geteuid()), Some(getpid()), "{obj:?}");
            assert!(keys.insert(obj.key), "key {:#x} used twice", obj.key);
        }
        for &(kind, id) in &made {
            assert_eq!(listed_id(kind, id), None, "{kind} {id} left behind");
        }
    }

    #[test]
    fn taken_keys_are_skipped_until_none_is_left() {
        let _keys = sysv_test_lock();
        let namer = ObjectNamer::new();
        // Take every key this process has (one may already be held by a set
        // a killed run with this pid left: it is skipped like ours).
        let mut ids = Vec::new();
        let last = loop {
            match namer.create_sysv("sem", |k| sysv::sem_create(k, 1)) {
                Ok(made) => ids.push(made),
                Err(e) => break e,
            }
            if ids.len() > SYSV_KEYS as usize {
                break io::Error::other("more objects than keys");
            }
        };
        // Free one: the next object gets exactly its key.
        let freed = ids.pop().map(|(id, cleanup)| {
            let key = listed_id("sem", id).map(|o| o.key);
            drop(cleanup);
            key
        });
        let again = namer.create_sysv("sem", |k| sysv::sem_create(k, 1));
        let again_key = again
            .as_ref()
            .ok()
            .and_then(|(id, _)| listed_id("sem", *id))
            .map(|o| o.key);
        let left = ids.len();
        drop(ids);
        drop(again);
        assert!(
            last.to_string()
                .contains(&format!("all {SYSV_KEYS} System V keys")),
            "{last}"
        );
        assert!(left > 0 && left < SYSV_KEYS as usize, "{left}");
        assert!(freed.flatten().is_some());
        assert_eq!(again_key, freed.flatten());
    }

    fn object(key: i64, mode: u32, uid: u32, cuid: u32) -> SysvObject {
        SysvObject {
            key,
            id: 7,
            mode,
            uid,
            cuid,
        }
    }

    #[test]
    fn only_objects_ours_in_every_way_are_claimed() {
        let key = sysv_key(4321, 5) as i64;
        let me = 1000;
        assert_eq!(creator_of(&object(key, 0o600, me, me), me), Some(4321));
        // Another program's: another tag, another mode, another owner or creator.
        assert_eq!(creator_of(&object(0x6100_0042, 0o600, me, me), me), None);
        assert_eq!(creator_of(&object(key, 0o640, me, me), me), None);
        assert_eq!(creator_of(&object(key, 0o666, me, me), me), None);
        assert_eq!(creator_of(&object(key, 0o600, 0, me), me), None);
        assert_eq!(creator_of(&object(key, 0o600, me, 0), me), None);
    }

    #[test]
    fn proc_sysvipc_is_read_by_its_headings() {
        let sem = "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n\
                   -1610612416          3   600          2     0     0  1000     0          0 1700000000\n";
        assert_eq!(
            parse_sysvipc(sem),
            vec![SysvObject {
                key: -1610612416,
                id: 3,
                mode: 0o600,
                uid: 0,
                cuid: 1000
            }]
        );
        let shm = "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n\
                            0         12  1600                  4096   100   100      0    33    33    33    33          0          0 1700000000                     0                     0\n";
        // SHM_DEST (01000) is not a permission bit.
        assert_eq!(parse_sysvipc(shm)[0].mode, 0o600);
        assert_eq!(parse_sysvipc(shm)[0].uid, 33);
        assert!(parse_sysvipc("").is_empty());
    }

    /// A pid no process has, for keys of a "killed run".
    fn dead_pid() -> libc::pid_t {
        (1..SYSV_PID_MASK as libc::pid_t)
            .rev()
            .find(|&p| !process_exists(p))
            .unwrap()
    }

    /// Our namespace, and /proc showing it.
    fn here() -> Here {
        let here = Here::now();
        assert!(here.pid_ns != 0 && here.proc_ours, "{here:?}");
        here
    }

    /// An owner record of a dead run of this namespace, for the keys of `pid`.
    fn dead_owner(pid: libc::pid_t) -> Owner {
        Owner {
            pid,
            pid_ns: here().pid_ns,
            start: 1,
        }
    }

    #[test]
    fn clean_removes_a_dead_runs_set_and_leaves_foreign_ones_alone() {
        let _keys = sysv_test_lock();
        let dead = dead_pid();
        // A set of the dead run, one with its key but a mode ipcmark never
        // uses, and one of the same shape with another program's key.
        let made = [
            sysv::sem_create(sysv_key(dead, 0), 1),
            sysv::sem_create_with_mode(sysv_key(dead, 1), 1, 0o640),
            sysv::sem_create(0x6100_0000 | (dead & 0xFFFF), 1),
        ];
        let ids: Vec<i32> = made
            .iter()
            .filter_map(|r| r.as_ref().ok().copied())
            .collect();
        // Only these objects: other stale ones on the machine are not this test's.
        let mut report = CleanReport::default();
        let objs: Vec<SysvObject> = ids.iter().filter_map(|&id| listed_id("sem", id)).collect();
        let left = clean_sysv_objects(
            "sem",
            objs,
            &[dead_owner(dead)],
            &here(),
            &System,
            &mut report,
        );
        let after: Vec<bool> = ids
            .iter()
            .map(|&id| listed_id("sem", id).is_some())
            .collect();
        for &id in &ids {
            let _ = sysv::remove("sem", id);
        }
        assert_eq!(ids.len(), 3, "{made:?}");
        assert_eq!(after, [false, true, true], "{report:?}");
        assert_eq!(report.removed.len(), 1, "{report:?}");
        assert!(left.is_empty(), "{left:?}");
        assert!(
            report.failed.is_empty() && report.live.is_empty() && report.kept.is_empty(),
            "{report:?}"
        );
    }

    /// A set whose owner record is of another PID namespace, or that has no
    /// record at all, is kept, and the report says why; one of a dead run of
    /// ours beside them goes.
    #[test]
    fn clean_keeps_a_set_it_cannot_prove_abandoned() {
        let _keys = sysv_test_lock();
        let [foreign, unrecorded, dead] = {
            let mut pids = (1..SYSV_PID_MASK as libc::pid_t)
                .rev()
                .filter(|&p| !process_exists(p));
            [(); 3].map(|()| pids.next().unwrap())
        };
        let here = here();
        let records = [
            Owner {
                pid: foreign,
                pid_ns: here.pid_ns + 1,
                start: 1,
            },
            dead_owner(dead),
        ];
        let ids: Vec<i32> = [foreign, unrecorded, dead]
            .iter()
            .map(|&p| sysv::sem_create(sysv_key(p, 0), 1).unwrap())
            .collect();
        let objs: Vec<SysvObject> = ids.iter().filter_map(|&id| listed_id("sem", id)).collect();
        let mut report = CleanReport::default();
        let left = clean_sysv_objects("sem", objs, &records, &here, &System, &mut report);
        let after: Vec<bool> = ids
            .iter()
            .map(|&id| listed_id("sem", id).is_some())
            .collect();
        for &id in &ids {
            let _ = sysv::remove("sem", id);
        }
        assert_eq!(after, [true, true, false], "{report:?}");
        assert_eq!(left, HashSet::from([foreign, unrecorded]));
        assert_eq!(report.kept.len(), 2, "{report:?}");
        assert!(
            report.kept[0].contains("another PID namespace"),
            "{report:?}"
        );
        assert!(report.kept[1].contains("no owner record"), "{report:?}");
        assert!(
            report.kept[1].contains(&format!("ipcrm -s {}", ids[1])),
            "{report:?}"
        );
        assert_eq!(report.removed.len(), 1, "{report:?}");
    }

    #[test]
    fn clean_keeps_the_objects_of_a_live_run() {
        let _keys = sysv_test_lock();
        let namer = ObjectNamer::new();
        let (id, _cleanup) = namer
            .create_sysv("sem", |k| sysv::sem_create(k, 1))
            .unwrap();
        let mut report = CleanReport::default();
        clean_sysv_objects(
            "sem",
            listed_id("sem", id),
            &[namer.owner],
            &here(),
            &System,
            &mut report,
        );
        assert!(listed_id("sem", id).is_some());
        assert_eq!(report.live.len(), 1, "{report:?}");
    }

    /// Processes as a test says they are.
    struct Fake {
        alive: Vec<(libc::pid_t, u64)>,
    }

    impl Processes for Fake {
        fn exists(&self, pid: libc::pid_t) -> bool {
            self.alive.iter().any(|&(p, _)| p == pid)
        }
        fn start_time(&self, pid: libc::pid_t) -> Option<u64> {
            self.alive.iter().find(|&&(p, _)| p == pid).map(|&(_, s)| s)
        }
    }

    #[test]
    fn only_a_pid_of_our_namespace_gone_or_reused_is_judged_gone() {
        let here = Here {
            pid_ns: 4026531836,
            proc_ours: true,
        };
        let procs = Fake {
            alive: vec![(100, 5000)],
        };
        let owner = |pid, pid_ns, start| NameOwner::Recorded(Owner { pid, pid_ns, start });
        let ours = here.pid_ns;
        assert_eq!(judge(owner(100, ours, 5000), &here, &procs), Verdict::Live);
        // Gone, or the pid taken by a process started later.
        assert_eq!(judge(owner(200, ours, 5000), &here, &procs), Verdict::Gone);
        assert_eq!(judge(owner(100, ours, 4000), &here, &procs), Verdict::Gone);
        // Another namespace: alive or not, its pid means nothing here.
        for pid in [100, 200] {
            let v = judge(owner(pid, ours + 1, 5000), &here, &procs);
            assert!(
                matches!(&v, Verdict::Unproven(why) if why.contains("another PID namespace")),
                "{v:?}"
            );
        }
        // A name of the older form: the pid alone proves nothing.
        assert!(matches!(
            judge(NameOwner::PidOnly(200), &here, &procs),
            Verdict::Unproven(_)
        ));
        // Unknown namespaces prove nothing either.
        assert!(matches!(
            judge(owner(200, 0, 5000), &here, &procs),
            Verdict::Unproven(_)
        ));
        // With /proc of another namespace, a live pid cannot be checked: kept.
        let blind = Here {
            proc_ours: false,
            ..here
        };
        assert_eq!(judge(owner(100, ours, 4000), &blind, &procs), Verdict::Live);
        assert_eq!(judge(owner(200, ours, 5000), &blind, &procs), Verdict::Gone);
    }

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

    #[test]
    fn names_record_their_owner_and_are_unguessable_and_unique() {
        let namer = ObjectNamer::new();
        let me = Owner::current();
        assert!(me.pid_ns != 0 && me.start != 0, "{me:?}");
        let a = namer.name("fifo");
        let b = namer.name("fifo");
        assert_ne!(a, b);
        for name in [a.clone(), format!("sem.{a}")] {
            assert_eq!(
                owner_of_name(&name).map(|(o, _)| o),
                Some(NameOwner::Recorded(me)),
                "{name}"
            );
        }
        assert!(owner_of_name(&a).unwrap().1.starts_with("fifo-"), "{a}");
        // The random parts differ, and the old predictable form is gone.
        let tag = |n: &str| n.split('-').nth(4).unwrap().to_string();
        assert_ne!(tag(&a), tag(&b));
        assert!(!a.starts_with(&format!("ipcmark-{}-fifo-", me.pid)), "{a}");
        // The older form still names its pid; other names are not ipcmark's.
        assert_eq!(
            owner_of_name("ipcmark-123-fifo-4"),
            Some((NameOwner::PidOnly(123), "fifo-4"))
        );
        assert_eq!(owner_of_name("other-123"), None);
        assert_eq!(owner_of_name("ipcmark-x-fifo-1"), None);
    }

    #[test]
    fn a_taken_name_is_replaced_and_a_squatted_kind_fails_clearly() {
        let namer = ObjectNamer::new();
        let mut tried = Vec::new();
        let (name, made) = namer
            .create_named("sem", |n| {
                tried.push(n.to_string());
                if tried.len() < 3 {
                    Err(io::Error::from_raw_os_error(libc::EEXIST))
                } else {
                    Ok(7)
                }
            })
            .unwrap();
        assert_eq!((made, tried.len()), (7, 3));
        assert_eq!(name, tried[2]);
        assert_eq!(tried.iter().collect::<HashSet<_>>().len(), 3, "{tried:?}");
        // Every name taken: a clear error after a few tries.
        let mut count = 0;
        let err = namer
            .create_named("mq", |_| -> io::Result<()> {
                count += 1;
                Err(io::Error::from_raw_os_error(libc::EEXIST))
            })
            .unwrap_err();
        assert_eq!(count, NAME_TRIES);
        assert!(err.to_string().contains("were all taken"), "{err}");
        // Any other error is returned at once.
        let mut count = 0;
        let err = namer
            .create_named("mq", |_| -> io::Result<()> {
                count += 1;
                Err(io::Error::from_raw_os_error(libc::EACCES))
            })
            .unwrap_err();
        assert_eq!((count, err.raw_os_error()), (1, Some(libc::EACCES)));
        // A real directory squatted on: a fresh name is taken.
        let dir = tempfile::tempdir().unwrap();
        let made = namer.temp_dir(dir.path(), "fifo").unwrap();
        assert!(made.is_dir());
    }

    #[test]
    fn the_start_time_is_field_22_whatever_the_command_name() {
        let fields: Vec<String> = (3..=30).map(|i| i.to_string()).collect();
        let stat = format!("42 (a) b) c) {}", fields.join(" "));
        assert_eq!(start_time_in(&stat), Some(22));
        assert_eq!(start_time_in("42 (x) S 1"), None);
        assert_eq!(start_time("self"), Some(Owner::current().start));
    }

    #[test]
    fn a_tree_is_removed_by_its_entries_then_whole() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("t");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("to-server"), b"").unwrap();
        assert!(remove_tree(&dir, &["to-server", "to-client"]).is_ok());
        assert!(!dir.exists());
        // Something unexpected in it: removed all the same.
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("stray"), b"").unwrap();
        assert!(remove_tree(&dir, &["to-server"]).is_ok());
        assert!(!dir.exists());
        // Already gone: nothing to say.
        assert!(remove_tree(&dir, &["to-server"]).is_ok());
    }
}
