use super::*;
use crate::sys::process::{self, ExitStatus, Fork, geteuid};
use std::io::{Read, Write};

/// /proc/self/mountinfo of a machine like this one: v1 controllers under a
/// tmpfs, a v2 `unified` mount beside them.
const V1_MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

/// A pure v2 machine (systemd's layout).
const V2_MOUNTINFO: &str = "\
26 1 0:23 / / rw,relatime shared:1 - ext4 /dev/vda1 rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
";

#[test]
fn a_v2_hierarchy_offering_cpu_comes_first_else_v1_cpu() {
    let v1 = parse_mountinfo(V1_MOUNTINFO);
    assert_eq!(v1.len(), 5);
    // The unified mount holds no controllers here: v1 cpu it is.
    let none = |_: &Path| Some(String::new());
    let found = cpu_hierarchies(&v1, none).unwrap();
    assert_eq!(
        found,
        [Hierarchy {
            root: "/sys/fs/cgroup/cpu".into(),
            version: CgroupVersion::V1
        }]
    );
    // Were cpu moved to v2, v2 would come first.
    let cpu = |_: &Path| Some("cpuset cpu io memory pids\n".to_string());
    let found = cpu_hierarchies(&v1, cpu).unwrap();
    assert_eq!(found[0].root, Path::new("/sys/fs/cgroup/unified"));
    assert_eq!(found[0].version, CgroupVersion::V2);
    let v2 = parse_mountinfo(V2_MOUNTINFO);
    let found = cpu_hierarchies(&v2, cpu).unwrap();
    assert_eq!(found[0].root, Path::new("/sys/fs/cgroup"));
    // cpuset is not cpu; a read-only mount is no use.
    let cpuset = |_: &Path| Some("cpuset io".to_string());
    let err = cpu_hierarchies(&v2, cpuset).unwrap_err();
    assert!(err.contains("offers [cpuset io]"), "{err}");
    let ro = V1_MOUNTINFO.replace("cgroup/cpu rw,", "cgroup/cpu ro,");
    assert!(cpu_hierarchies(&parse_mountinfo(&ro), none).is_err());
}

#[test]
fn mountinfo_paths_are_unescaped() {
    assert_eq!(unescape(r"/mnt/a\040b"), "/mnt/a b");
    assert_eq!(unescape(r"/x\\y\9"), r"/x\\y\9");
    let line = "40 31 0:37 / /sys/fs/cgroup/cpu\\054cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
    let m = parse_mountinfo(line);
    assert_eq!(m[0].point, Path::new("/sys/fs/cgroup/cpu,cpuacct"));
    assert!(m[0].superopts.iter().any(|o| o == "cpu"));
    assert!(parse_mountinfo("garbage\n\n").is_empty());
}

#[test]
fn cpu_stat_reads_in_each_version_s_units() {
    let v2 = "usage_usec 100\nnr_periods 7\nnr_throttled 3\nthrottled_usec 250\n";
    let t = parse_cpu_stat(v2, CgroupVersion::V2).unwrap();
    assert_eq!(
        t,
        Throttling {
            periods: 7,
            throttled_periods: 3,
            throttled_ns: 250_000
        }
    );
    let v1 = "nr_periods 7\nnr_throttled 3\nthrottled_time 250\n";
    assert_eq!(
        parse_cpu_stat(v1, CgroupVersion::V1).unwrap().throttled_ns,
        250
    );
    assert_eq!(parse_cpu_stat("usage_usec 1\n", CgroupVersion::V2), None);
}

#[test]
fn bad_tags_and_quotas_are_refused_before_anything_is_made() {
    for tag in ["", "a/b", "..x/", "sp ace", &"x".repeat(49)] {
        let err = FreshCgroup::create(tag, None).unwrap_err();
        assert!(err.contains("tag"), "{err}");
    }
    let ms = Duration::from_millis;
    let err = FreshCgroup::create("q", Some((ms(10), ms(0)))).unwrap_err();
    assert!(err.contains("period"), "{err}");
    let err = FreshCgroup::create("q", Some((ms(0), ms(100)))).unwrap_err();
    assert!(err.contains("quota"), "{err}");
    assert!(FreshCgroup::create("q", Some((ms(10), ms(2000)))).is_err());
}

/// A fresh cgroup, or None with the reason printed where this user or
/// machine cannot make one.
fn fresh(tag: &str, quota: Option<(Duration, Duration)>) -> Option<FreshCgroup> {
    if geteuid() != 0 {
        println!("skipped: making a cgroup needs root");
        return None;
    }
    if let Err(why) = this_machines_cpu_hierarchies() {
        println!("skipped: {why}");
        return None;
    }
    Some(FreshCgroup::create(tag, quota).unwrap())
}

/// A forked child that waits for a byte before it goes on, killed and
/// reaped on drop if still there (a failed assertion).
struct Child {
    pid: libc::pid_t,
    go: Option<std::io::PipeWriter>,
    ready: std::io::PipeReader,
}

impl Child {
    /// Forks a child that runs `first`, says so with the byte it returns,
    /// waits for the go, then runs `then` and exits with its result.
    fn fork(first: impl FnOnce() -> u8, then: impl FnOnce() -> i32) -> Child {
        let (go_r, go_w) = std::io::pipe().unwrap();
        let (ready_r, ready_w) = std::io::pipe().unwrap();
        match process::fork().unwrap() {
            Fork::Child => {
                drop((go_w, ready_r));
                let (mut go_r, mut ready_w) = (go_r, ready_w);
                // A panic must end the child here, never unwind into the
                // copy of the test harness.
                let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let _ = ready_w.write_all(&[first()]);
                    let mut b = [0u8];
                    match go_r.read_exact(&mut b) {
                        Ok(()) => then(),
                        Err(_) => 99,
                    }
                }));
                process::exit_now(code.unwrap_or(101))
            }
            Fork::Parent(pid) => {
                // Only the child's ends stay open there: a child that dies
                // early is an end of file here, not a hang.
                drop((go_r, ready_w));
                Child {
                    pid,
                    go: Some(go_w),
                    ready: ready_r,
                }
            }
        }
    }

    /// The byte the child said after its first step.
    fn ready(&mut self) -> u8 {
        let mut b = [0u8];
        self.ready.read_exact(&mut b).unwrap();
        b[0]
    }

    /// Lets the child go on and waits for it to end.
    fn finish(mut self) -> ExitStatus {
        self.go.take().unwrap().write_all(b"g").unwrap();
        let status = process::wait_blocking(self.pid).unwrap();
        self.pid = 0;
        status
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.pid > 0 {
            process::kill_and_reap(self.pid);
        }
    }
}

#[test]
fn a_child_enters_and_once_it_exits_the_cgroup_is_removed() {
    let Some(cg) = fresh("enter", None) else {
        return;
    };
    let path = cg.path().to_path_buf();
    assert!(path.is_dir());
    let first = &this_machines_cpu_hierarchies().unwrap()[0];
    assert_eq!(cg.version(), first.version);
    assert!(path.starts_with(&first.root), "{}", path.display());
    let mut child = Child::fork(|| cg.enter().is_ok() as u8, || 0);
    assert_eq!(
        child.ready(),
        1,
        "the child could not enter {}",
        path.display()
    );
    assert!(cg.procs().unwrap().contains(&child.pid));
    assert_eq!(child.finish(), ExitStatus::Code(0));
    cg.remove().unwrap();
    assert!(!path.exists());
}

#[test]
fn remove_kills_what_is_left_in_the_cgroup() {
    let Some(cg) = fresh("kill", None) else {
        return;
    };
    let path = cg.path().to_path_buf();
    let mut child = Child::fork(|| cg.enter().is_ok() as u8, || 0);
    assert_eq!(child.ready(), 1);
    // The child waits for a go that never comes.
    cg.remove().unwrap();
    assert!(!path.exists());
    let status = process::wait_blocking(child.pid).unwrap();
    child.pid = 0;
    assert_eq!(status, ExitStatus::Signal(libc::SIGKILL));
}

#[test]
fn a_child_spinning_past_its_quota_is_throttled() {
    let ms = Duration::from_millis;
    let Some(cg) = fresh("quota", Some((ms(20), ms(100)))) else {
        return;
    };
    let spin = || {
        let end = Instant::now() + ms(300);
        while Instant::now() < end {
            std::hint::spin_loop();
        }
        0
    };
    let mut child = Child::fork(|| 1, spin);
    assert_eq!(child.ready(), 1);
    cg.add(child.pid).unwrap();
    assert_eq!(child.finish(), ExitStatus::Code(0));
    // Throttled at least once: a count of events, not a time.
    let t = cg.throttling().unwrap();
    assert!(t.throttled_periods > 0, "{t:?}");
    assert!(t.periods >= t.throttled_periods, "{t:?}");
    cg.remove().unwrap();
}

#[test]
fn abandoned_finds_a_dead_runs_cgroup_and_not_a_live_ones() {
    let Some(cg) = fresh("live", None) else {
        return;
    };
    let root = cg.path().parent().unwrap().to_path_buf();
    // A pid above pid_max never runs; the rest of the name is ours.
    let pid_max: u64 = fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let live_name = cg
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let (_, rest) = live_name
        .strip_prefix("ipcmark-")
        .unwrap()
        .split_once('-')
        .unwrap();
    let dead = root.join(format!("ipcmark-{}-{rest}", pid_max + 1));
    fs::create_dir(&dead).unwrap();
    // Removed on every path, the assertions' included.
    struct Gone(PathBuf);
    impl Drop for Gone {
        fn drop(&mut self) {
            let _ = remove_cgroup(&self.0);
        }
    }
    let _dead = Gone(dead.clone());
    let found = abandoned();
    let canon = |p: &Path| fs::canonicalize(p).unwrap();
    let found: Vec<PathBuf> = found.iter().map(|p| canon(p)).collect();
    assert!(found.contains(&canon(&dead)), "{found:?}");
    assert!(!found.contains(&canon(cg.path())), "{found:?}");
    remove_dir(&dead).unwrap();
    assert!(!dead.exists());
    // Only a tax cgroup of ipcmark's is removed.
    let err = remove_dir(&root).unwrap_err();
    assert!(err.contains("not a cgroup ipcmark made"), "{err}");
    cg.remove().unwrap();
}
