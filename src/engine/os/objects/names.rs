//! The names of the OS objects ipcmark creates: `ipcmark-…` names that record
//! their owner ([`Owner`], read back by [`owner_of_name`]), handed out by
//! [`ObjectNamer`]; System V keys, and the owner record in /dev/shm that
//! holds what a key has no room for; where temporary objects go. Apart from
//! `clean`, which reads these names and judges their owners: this file uses
//! nothing of it. It uses `release.rs`, as a System V object is made and
//! guarded in one step.

use super::release::{Cleanup, left_behind};
use crate::sys::process::getpid;
use crate::sys::sysv;
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
pub(super) const SYSV_PID_MASK: u32 = (1 << SYSV_PID_BITS) - 1;

/// How many System V objects one process can hold at once: its keys.
pub const SYSV_KEYS: u32 = 1 << SYSV_SLOT_BITS;

/// The key of slot `slot` (taken modulo [`SYSV_KEYS`]) of process `pid`.
pub(super) fn sysv_key(pid: libc::pid_t, slot: u32) -> libc::key_t {
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
pub(super) fn pid_namespace(pid: &str) -> Option<u64> {
    fs::metadata(format!("/proc/{pid}/ns/pid"))
        .ok()
        .map(|m| m.ino())
}

/// The start time of process `pid` (as in [`pid_namespace`]).
pub(super) fn start_time(pid: &str) -> Option<u64> {
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
    pub(super) owner: Owner,
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

/// The file in a named directory that holds the pid of a helper program
/// running for it (`engine::os::daemon`), whose command line names the
/// directory: `clean` ends the helper before it removes the directory.
pub const HELPER_PID_FILE: &str = "daemon.pid";

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

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
}
