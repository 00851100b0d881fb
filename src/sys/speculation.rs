//! Per-task speculation controls (prctl PR_SET_SPECULATION_CTRL): what a
//! sandbox such as a browser's or a seccomp-filtered container turns on
//! for its tasks, and what it costs each context switch and system call.

use super::cvt;
use std::io;

// The prctl interface of include/uapi/linux/prctl.h. libc defines these
// for x86_64 glibc only; the values are the same on every architecture.
/// Reads a task's speculation state.
const PR_GET_SPECULATION_CTRL: libc::c_int = 52;
/// Sets a task's speculation state.
const PR_SET_SPECULATION_CTRL: libc::c_int = 53;
/// Speculative store bypass (Spectre v4): `ssbd`.
const PR_SPEC_STORE_BYPASS: libc::c_ulong = 0;
/// Indirect branch speculation (Spectre v2 user-to-user): `ibpb`/`stibp`.
const PR_SPEC_INDIRECT_BRANCH: libc::c_ulong = 1;
/// State bit: the task may change the control with prctl.
const PR_SPEC_PRCTL: i32 = 1 << 0;
/// State bit: speculation is enabled (mitigation off).
const PR_SPEC_ENABLE: i32 = 1 << 1;
/// State bit: speculation is disabled (mitigation on).
pub const PR_SPEC_DISABLE: i32 = 1 << 2;
/// State bit: disabled, and no later prctl may enable it again.
const PR_SPEC_FORCE_DISABLE: i32 = 1 << 3;
/// State bit: disabled until the next exec.
const PR_SPEC_DISABLE_NOEXEC: i32 = 1 << 4;

/// A per-task speculation control of prctl(PR_SET_SPECULATION_CTRL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speculation {
    /// Speculative store bypass (`ssbd`: PR_SPEC_STORE_BYPASS).
    StoreBypass,
    /// Indirect branch speculation (`ibpb`/`stibp`: PR_SPEC_INDIRECT_BRANCH).
    IndirectBranch,
}

impl Speculation {
    fn which(self) -> libc::c_ulong {
        match self {
            Speculation::StoreBypass => PR_SPEC_STORE_BYPASS,
            Speculation::IndirectBranch => PR_SPEC_INDIRECT_BRANCH,
        }
    }

    /// The boot option that makes the kernel offer the per-task control.
    fn boot_option(self) -> &'static str {
        match self {
            Speculation::StoreBypass => "spec_store_bypass_disable=prctl",
            Speculation::IndirectBranch => "spectre_v2_user=prctl",
        }
    }

    /// Its name in the kernel's documentation.
    fn name(self) -> &'static str {
        match self {
            Speculation::StoreBypass => "speculative store bypass",
            Speculation::IndirectBranch => "indirect branch speculation",
        }
    }
}

/// Whether this CPU and kernel let a task set it (PR_GET_SPECULATION_CTRL
/// has PR_SPEC_PRCTL), else why not (the state the kernel reported: not
/// affected, forced on, disabled by boot option…), in words.
pub fn offered(which: Speculation) -> Result<(), String> {
    match state(which) {
        Ok(s) => explain(which, s),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Err(format!(
            "this kernel has no per-task control of {} (PR_GET_SPECULATION_CTRL: {e})",
            which.name()
        )),
        Err(e) => Err(format!(
            "PR_GET_SPECULATION_CTRL for {} failed: {e}",
            which.name()
        )),
    }
}

/// [`offered`] for the state word `s` the kernel returned.
fn explain(which: Speculation, s: i32) -> Result<(), String> {
    let name = which.name();
    if s & PR_SPEC_PRCTL != 0 {
        return Ok(());
    }
    Err(if s == 0 {
        format!("this CPU is not affected by {name}, so the kernel offers no control of it")
    } else if s & (PR_SPEC_DISABLE | PR_SPEC_FORCE_DISABLE | PR_SPEC_DISABLE_NOEXEC) != 0 {
        format!(
            "the kernel already keeps {name} disabled for every task \
             (a boot option such as spec_store_bypass_disable=on or spectre_v2_user=on), \
             so no task can set it (state {s:#x})"
        )
    } else if s & PR_SPEC_ENABLE != 0 {
        format!(
            "the kernel leaves {name} enabled for every task and offers no control of it: \
             the CPU (or the hypervisor) lacks the feature that disables it, or the kernel \
             was booted without {} (state {s:#x})",
            which.boot_option()
        )
    } else {
        format!("the kernel reports state {s:#x} for {name}, without per-task control")
    })
}

/// Disables that speculation for the calling task and its future children
/// (PR_SPEC_DISABLE). Fails with ENXIO where the control is not offered
/// ([`offered`] says why), EPERM where it was force-disabled.
pub fn disable(which: Speculation) -> io::Result<()> {
    // SAFETY: PR_SET_SPECULATION_CTRL takes integer arguments.
    cvt(unsafe {
        libc::prctl(
            PR_SET_SPECULATION_CTRL,
            which.which(),
            PR_SPEC_DISABLE as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    })
    .map(drop)
}

/// The state word PR_GET_SPECULATION_CTRL returns.
pub fn state(which: Speculation) -> io::Result<i32> {
    // SAFETY: PR_GET_SPECULATION_CTRL takes integer arguments.
    cvt(unsafe {
        libc::prctl(
            PR_GET_SPECULATION_CTRL,
            which.which(),
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::test_fork::in_child;
    use std::time::Duration;

    #[test]
    fn every_state_without_prctl_has_a_reason() {
        let s = Speculation::StoreBypass;
        assert_eq!(explain(s, PR_SPEC_PRCTL | PR_SPEC_ENABLE), Ok(()));
        assert!(explain(s, 0).unwrap_err().contains("not affected"));
        assert!(
            explain(s, PR_SPEC_DISABLE)
                .unwrap_err()
                .contains("disabled")
        );
        assert!(explain(s, PR_SPEC_ENABLE).unwrap_err().contains("enabled"));
        assert!(explain(s, 1 << 6).unwrap_err().contains("0x40"));
    }

    #[test]
    fn where_offered_a_child_disables_it_for_itself() {
        for which in [Speculation::StoreBypass, Speculation::IndirectBranch] {
            if let Err(why) = offered(which) {
                println!("skipped {which:?}: {why}");
                continue;
            }
            let code = in_child(Duration::from_secs(20), || {
                if disable(which).is_err() {
                    return 1;
                }
                match state(which) {
                    Ok(s) if s & PR_SPEC_DISABLE != 0 => 0,
                    _ => 2,
                }
            });
            assert_eq!(code, 0, "{which:?}");
        }
    }
}
