//! Seccomp filters of the shapes container runtimes install, to measure
//! what such a filter adds to each system call.
//!
//! Two shapes: Docker's default profile (an allow-list of some 350 calls,
//! checked one after another as libseccomp emits it without optimisation,
//! no rule reading an argument, so that kernels from 5.11 on cache every
//! allowed call and skip the filter), and a filter of `n` rules that each
//! compare the first argument with a constant (no call's result can be
//! cached, so every call runs all `n` comparisons). A filter is built
//! before the fork and installed in a child made for the purpose: it can
//! never be removed.

mod docker_profile;

use super::seccomp::{AUDIT_ARCH, OFF_ARCH, OFF_NR, install, jeq, stmt};
use std::io;

/// The most instructions the kernel accepts in one BPF program
/// (`BPF_MAXINSNS`).
const MAX_INSTRUCTIONS: usize = 4096;

/// Offset of the low 32 bits of `args[0]` in `struct seccomp_data` (after
/// `nr`, `arch` and the 64-bit instruction pointer).
#[cfg(target_endian = "little")]
const OFF_ARG0_LOW: u32 = 16;
#[cfg(target_endian = "big")]
const OFF_ARG0_LOW: u32 = 20;

/// x86_64's x32 ABI marks its system-call numbers with this bit and shares
/// the audit architecture: libseccomp checks it right after loading the
/// number, and so does [`AllowFilter::default_profile`].
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Instructions of an [`AllowFilter::argument_rules`] filter besides its
/// rules: the architecture check (3) and the final "allow" (1).
const ARGUMENT_FRAME: usize = 4;
/// Instructions per argument rule: load, compare, "allow" on a match.
const PER_ARGUMENT_RULE: usize = 3;

/// The constants the argument rules compare with: no descriptor, small flag
/// word or signal number, so that in practice no call matches one and each
/// runs every comparison (a match would only allow it sooner).
const ARGUMENT_BASE: u32 = 0x5EC0_0000;

/// A seccomp filter of the shapes container runtimes install, built before
/// the fork (installing allocates nothing).
pub struct AllowFilter {
    prog: Vec<libc::sock_filter>,
    rules: usize,
}

fn load(offset: u32) -> libc::sock_filter {
    stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset)
}

fn ret(action: u32) -> libc::sock_filter {
    stmt(libc::BPF_RET | libc::BPF_K, action)
}

fn errno(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA)
}

impl AllowFilter {
    /// Docker's default profile shape: an allow-list of the system calls of
    /// moby's `profiles/seccomp/default.json` (see `docker_profile.rs` for
    /// which of its entries a default container gets), resolved to this
    /// architecture's numbers (names it lacks are left out), checked
    /// linearly, one `JEQ nr` per call in the profile's order as libseccomp
    /// emits without optimisation, after the architecture check; anything
    /// else returns ERRNO(EPERM) (`clone3` ERRNO(ENOSYS), as Docker's
    /// profile has it). Actions never depend on arguments, so kernels from
    /// 5.11 on cache them. On an architecture whose audit id is not known
    /// here the program is empty and [`install`](Self::install) fails.
    pub fn default_profile() -> AllowFilter {
        let Some(arch) = AUDIT_ARCH else {
            return AllowFilter {
                prog: Vec::new(),
                rules: 0,
            };
        };
        let deny = errno(libc::EPERM);
        let mut prog = vec![
            load(OFF_ARCH),
            // Another ABI (32-bit x86 on x86_64, arm on aarch64): denied.
            jeq(arch, 1, 0),
            ret(deny),
            load(OFF_NR),
        ];
        #[cfg(target_arch = "x86_64")]
        {
            let jge = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
            prog.push(libc::sock_filter {
                code: jge,
                jt: 0,
                jf: 1,
                k: X32_SYSCALL_BIT,
            });
            prog.push(ret(deny));
        }
        let mut seen = Vec::new();
        for name in docker_profile::NAMES {
            let Some(nr) = docker_profile::number(name) else {
                continue;
            };
            if seen.contains(&nr) {
                continue;
            }
            seen.push(nr);
            let action = if docker_profile::ENOSYS.contains(name) {
                errno(libc::ENOSYS)
            } else {
                libc::SECCOMP_RET_ALLOW
            };
            // Each call its own compare and return: a jump to one shared
            // "allow" would be longer than the 255 instructions a BPF
            // conditional jump can reach.
            prog.push(jeq(nr as u32, 0, 1));
            prog.push(ret(action));
        }
        prog.push(ret(deny));
        AllowFilter {
            prog,
            rules: seen.len(),
        }
    }

    /// `n` rules that each read the first argument (low 32 bits) and compare
    /// it with a constant; a match and the end both ALLOW, so the filter
    /// never changes what a call does, but every call (getpid included) runs
    /// all `n` comparisons, and because it reads arguments the kernel cannot
    /// cache its result. Refused past what fits in the kernel's limit of
    /// 4096 BPF instructions.
    pub fn argument_rules(n: usize) -> Result<AllowFilter, String> {
        let max = Self::max_argument_rules();
        if n > max {
            return Err(format!(
                "{n} argument rules do not fit in one seccomp filter: at most {max} \
                 (the kernel's limit is {MAX_INSTRUCTIONS} BPF instructions, \
                 {PER_ARGUMENT_RULE} per rule)"
            ));
        }
        let Some(arch) = AUDIT_ARCH else {
            return Err("seccomp filters are not built for this architecture".into());
        };
        let allow = libc::SECCOMP_RET_ALLOW;
        let mut prog = Vec::with_capacity(ARGUMENT_FRAME + PER_ARGUMENT_RULE * n);
        // Another ABI: allowed, untouched, as every call is.
        prog.extend([load(OFF_ARCH), jeq(arch, 1, 0), ret(allow)]);
        for i in 0..n {
            prog.push(load(OFF_ARG0_LOW));
            prog.push(jeq(ARGUMENT_BASE.wrapping_add(i as u32), 0, 1));
            prog.push(ret(allow));
        }
        prog.push(ret(allow));
        Ok(AllowFilter { prog, rules: n })
    }

    /// The most rules [`argument_rules`](Self::argument_rules) accepts.
    pub fn max_argument_rules() -> usize {
        (MAX_INSTRUCTIONS - ARGUMENT_FRAME) / PER_ARGUMENT_RULE
    }

    /// BPF instructions in the program.
    pub fn instructions(&self) -> usize {
        self.prog.len()
    }

    /// Rules (allowed calls, or argument comparisons).
    pub fn rules(&self) -> usize {
        self.rules
    }

    /// Installs it on the calling thread (PR_SET_NO_NEW_PRIVS, then the
    /// filter; threads made afterwards inherit it, threads already running
    /// do not); fails with the errno. Irreversible: only for a child made
    /// for the purpose.
    pub fn install(&self) -> io::Result<()> {
        if self.prog.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "seccomp filters are not built for this architecture",
            ));
        }
        install(&self.prog)
    }
}

#[cfg(test)]
mod tests;
