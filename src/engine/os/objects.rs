//! Names of the OS objects ipcmark creates, their release, and `ipcmark clean`.
//!
//! Every named object carries the prefix `ipcmark-<pid>-`, and every System V
//! key encodes the creating pid, so that objects left by a killed run can be
//! told apart from those of a run still going.

use crate::sys::process::{geteuid, getpid, process_exists};
use crate::sys::sysv;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
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

/// Hands out unique names for the objects of one run.
pub struct ObjectNamer {
    pid: libc::pid_t,
}

impl Default for ObjectNamer {
    fn default() -> Self {
        Self::new()
    }
}

impl ObjectNamer {
    /// A namer for the calling process.
    pub fn new() -> Self {
        ObjectNamer { pid: getpid() }
    }

    /// A unique name `ipcmark-<pid>-<what>-<n>` (no leading slash).
    pub fn name(&self, what: &str) -> String {
        // Process-wide, not per namer: two namers in one process (tests run
        // in parallel threads) must never hand out the same name.
        static NEXT_NAME: AtomicU32 = AtomicU32::new(0);
        let n = NEXT_NAME.fetch_add(1, Ordering::Relaxed);
        format!("{PREFIX}{}-{what}-{n}", self.pid)
    }

    /// Creates a System V object with a key of this process: `create` gets
    /// keys in turn until one is free. The slots cycle, and a key stays taken
    /// while its object lives (`create` is to fail with EEXIST, as
    /// `IPC_CREAT | IPC_EXCL` does): such a key, ours or left by a killed run
    /// with the same pid, is skipped. Fails once every key has been tried.
    pub fn create_sysv<T>(
        &self,
        mut create: impl FnMut(libc::key_t) -> io::Result<T>,
    ) -> io::Result<T> {
        for _ in 0..SYSV_KEYS {
            let slot = NEXT_SLOT.fetch_add(1, Ordering::Relaxed);
            match create(sysv_key(self.pid, slot)) {
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                done => return done,
            }
        }
        Err(io::Error::other(format!(
            "all {SYSV_KEYS} System V keys of process {} are taken (a run holds at most {SYSV_KEYS} System V objects at once; `ipcmark clean` removes those a killed run with the same pid left)",
            self.pid
        )))
    }

    /// The next `n` keys [`create_sysv`](Self::create_sysv) will try, in order.
    #[cfg(test)]
    pub fn upcoming_sysv_keys(&self, n: u32) -> Vec<libc::key_t> {
        let next = NEXT_SLOT.load(Ordering::Relaxed);
        (0..n)
            .map(|i| sysv_key(self.pid, next.wrapping_add(i)))
            .collect()
    }

    /// Creates a fresh directory `ipcmark-<pid>-<what>-<n>` under `base`.
    pub fn temp_dir(&self, base: &Path, what: &str) -> std::io::Result<PathBuf> {
        let dir = base.join(self.name(what));
        fs::create_dir(&dir)?;
        Ok(dir)
    }
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

/// The pid in a name `ipcmark-<pid>-…` (also `sem.ipcmark-<pid>-…`).
pub fn pid_of_name(name: &str) -> Option<libc::pid_t> {
    let rest = name
        .strip_prefix("sem.")
        .unwrap_or(name)
        .strip_prefix(PREFIX)?;
    rest.split('-').next()?.parse().ok()
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

    /// Removes `dir` and everything in it on drop.
    pub fn remove_dir(dir: PathBuf) -> Self {
        Cleanup::new(move || {
            let _ = fs::remove_dir_all(&dir);
        })
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
    /// Objects that could not be removed, with the reason.
    pub failed: Vec<String>,
}

/// Removes every ipcmark object whose creating process no longer exists.
pub fn clean_stale() -> CleanReport {
    let mut report = CleanReport::default();
    let mut dirs = vec![tmpfs_base(), disk_temp_base(), std::env::temp_dir()];
    dirs.push(PathBuf::from("/dev/mqueue"));
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        clean_dir(&dir, &mut report);
    }
    for (kind, file) in [
        ("msg", "/proc/sysvipc/msg"),
        ("sem", "/proc/sysvipc/sem"),
        ("shm", "/proc/sysvipc/shm"),
    ] {
        clean_sysv(kind, file, &mut report);
    }
    report
}

fn clean_dir(dir: &Path, report: &mut CleanReport) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = pid_of_name(&name) else {
            continue;
        };
        let path = entry.path();
        let label = path.display().to_string();
        if process_exists(pid) {
            report.live.push(label);
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

fn clean_sysv(kind: &str, file: &str, report: &mut CleanReport) {
    if let Ok(text) = fs::read_to_string(file) {
        clean_sysv_objects(kind, parse_sysvipc(&text), report);
    }
}

/// Removes those of `objects` (of one kind) that ipcmark created in a run
/// that is gone.
fn clean_sysv_objects(
    kind: &str,
    objects: impl IntoIterator<Item = SysvObject>,
    report: &mut CleanReport,
) {
    let euid = geteuid();
    for obj in objects {
        let Some(pid) = creator_of(&obj, euid) else {
            continue;
        };
        let label = format!("sysv-{kind} id {} (key {:#x})", obj.id, obj.key as u32);
        if process_exists(pid) {
            report.live.push(label);
            continue;
        }
        match sysv::remove(kind, obj.id) {
            Ok(()) => report.removed.push(label),
            Err(e) => report.failed.push(format!("{label}: {e}")),
        }
    }
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
                match namer.create_sysv(create) {
                    Ok(id) => made.push((kind, id)),
                    Err(e) => result = Err(format!("object {} ({kind}): {e}", made.len() + 1)),
                }
            }
        }
        let present: Vec<_> = made.iter().map(|&(kind, id)| listed_id(kind, id)).collect();
        for &(kind, id) in &made {
            sysv::remove(kind, id).unwrap();
        }
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
            match namer.create_sysv(|k| sysv::sem_create(k, 1)) {
                Ok(id) => ids.push(id),
                Err(e) => break e,
            }
            if ids.len() > SYSV_KEYS as usize {
                break io::Error::other("more objects than keys");
            }
        };
        // Free one: the next object gets exactly its key.
        let freed = ids.pop().map(|id| {
            let key = listed_id("sem", id).map(|o| o.key);
            sysv::remove("sem", id).unwrap();
            key
        });
        let again = namer.create_sysv(|k| sysv::sem_create(k, 1));
        let again_key = again
            .as_ref()
            .ok()
            .and_then(|&id| listed_id("sem", id))
            .map(|o| o.key);
        for id in ids.iter().chain(again.as_ref().ok()) {
            sysv::remove("sem", *id).unwrap();
        }
        assert!(
            last.to_string()
                .contains(&format!("all {SYSV_KEYS} System V keys")),
            "{last}"
        );
        assert!(
            !ids.is_empty() && ids.len() < SYSV_KEYS as usize,
            "{}",
            ids.len()
        );
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
        clean_sysv_objects("sem", objs, &mut report);
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
        assert!(
            report.failed.is_empty() && report.live.is_empty(),
            "{report:?}"
        );
    }

    #[test]
    fn clean_keeps_the_objects_of_a_live_run() {
        let _keys = sysv_test_lock();
        let namer = ObjectNamer::new();
        let id = namer.create_sysv(|k| sysv::sem_create(k, 1)).unwrap();
        let mut report = CleanReport::default();
        clean_sysv_objects("sem", listed_id("sem", id), &mut report);
        let still = listed_id("sem", id).is_some();
        sysv::remove("sem", id).unwrap();
        assert!(still);
        assert_eq!(report.live.len(), 1, "{report:?}");
    }

    #[test]
    fn names_carry_pid_and_are_unique() {
        let namer = ObjectNamer::new();
        let a = namer.name("fifo");
        let b = namer.name("fifo");
        assert_ne!(a, b);
        assert_eq!(pid_of_name(&a), Some(getpid()));
        assert_eq!(pid_of_name(&format!("sem.{a}")), Some(getpid()));
        assert_eq!(pid_of_name("other-123"), None);
    }
}
