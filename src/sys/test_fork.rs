//! For tests: run a closure in a forked child and get its exit code, for
//! what must never touch the test process (a seccomp filter, namespaces,
//! speculation controls, a cgroup).
//!
//! The test harness runs tests on several threads, so the child holds only
//! the forking thread; glibc's malloc stays usable in it (fork takes its
//! locks), which is all these closures need.

use super::process::{self, ExitStatus, Fork};
use std::time::{Duration, Instant};

/// Exit code of a child whose closure panicked.
pub(crate) const PANICKED: i32 = 101;
/// What [`in_child`] returns for a child that had to be killed.
pub(crate) const TIMED_OUT: i32 = -1;

/// Runs `f` in a forked child and returns its result as the child's exit
/// code (`128 + n` if signal n ended it, [`PANICKED`] if `f` panicked,
/// [`TIMED_OUT`] if it ran past `limit` and was killed: a guard against a
/// hang, not a measurement).
pub(crate) fn in_child(limit: Duration, f: impl FnOnce() -> i32) -> i32 {
    let pid = match process::fork().expect("fork") {
        Fork::Child => {
            let code =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(PANICKED);
            process::exit_now(code)
        }
        Fork::Parent(pid) => pid,
    };
    let deadline = Instant::now() + limit;
    loop {
        match process::try_wait(pid) {
            Ok(Some(ExitStatus::Code(c))) => return c,
            Ok(Some(ExitStatus::Signal(s))) => return 128 + s,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) | Err(_) => {
                process::kill_and_reap(pid);
                return TIMED_OUT;
            }
        }
    }
}
