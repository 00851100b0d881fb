//! `clean` for System V objects: reading /proc/sysvipc, telling ipcmark's
//! objects from other programs' (key tag, mode, owner and creator) and
//! removing those whose run the owner records prove gone. Apart from
//! `clean.rs` as its own half, with tests that create real objects; the
//! tests of `ObjectNamer::create_sysv` are here too, as they read what it
//! made back through /proc/sysvipc.

use super::names::{NameOwner, Owner, SYSV_PID_MASK, pid_of_sysv_key, tmpfs_base};
use super::verdict::{CleanReport, Here, Processes, Verdict, judge};
use crate::sys::process::geteuid;
use crate::sys::sysv;
use std::collections::HashSet;

/// One object of /proc/sysvipc/{msg,sem,shm}.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SysvObject {
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
pub(super) fn parse_sysvipc(text: &str) -> Vec<SysvObject> {
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
pub(super) fn clean_sysv_objects(
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
    use super::super::names::{ObjectNamer, SYSV_KEYS, sysv_key, sysv_test_lock};
    use super::super::verdict::{System, here};
    use super::*;
    use crate::sys::process::{getpid, process_exists};
    use std::fs;
    use std::io;

    /// The System V objects of one kind, as /proc lists them now.
    fn listed(kind: &str) -> Vec<SysvObject> {
        parse_sysvipc(&fs::read_to_string(format!("/proc/sysvipc/{kind}")).unwrap())
    }

    fn listed_id(kind: &str, id: i32) -> Option<SysvObject> {
        listed(kind).into_iter().find(|o| o.id == id)
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
}
