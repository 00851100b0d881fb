//! Identifies the build for `ipcmark --version` and every JSON report's
//! `build` object: the git commit, whether the tree had changes, and the
//! cargo features enabled. No dependency: it runs `git` if both git and the
//! checkout's `.git` exist, and says "unknown" otherwise (a crate unpacked
//! from a tarball, a machine without git).
//!
//! Sets, for `src/output/json/build.rs`:
//! - `IPCMARK_COMMIT`: 40 hex digits (64 in a SHA-256 repository), or "unknown";
//! - `IPCMARK_DIRTY`: "true" (tracked changes or untracked files, as
//!   `git status --porcelain` lists them), "false", or "unknown";
//! - `IPCMARK_FEATURES`: enabled features, comma-separated ("" for none);
//! - `IPCMARK_VERSION_LINE`: what `--version` prints after "ipcmark", e.g.
//!   `0.1.0 (commit 0123…cdef, clean tree; features: none)`.
//!
//! The script re-runs when git's HEAD, the branch it names or the index move
//! (a commit, a checkout, `git add`) and when the binary's own sources change
//! (src/, build.rs, Cargo.toml, Cargo.lock); `dirty` is what git said then.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    // What the binary is made of: a change re-runs this script, so the
    // dirty flag follows an edit even when git's own files do not move.
    for path in ["build.rs", "Cargo.toml", "Cargo.lock", "src"] {
        println!("cargo:rerun-if-changed={path}");
    }
    let (commit, dirty) = if root.join(".git").exists() {
        git_state(&root)
    } else {
        (None, None)
    };
    println!(
        "cargo:rustc-env=IPCMARK_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    println!(
        "cargo:rustc-env=IPCMARK_DIRTY={}",
        match dirty {
            Some(true) => "true",
            Some(false) => "false",
            None => "unknown",
        }
    );
    let features = features();
    println!("cargo:rustc-env=IPCMARK_FEATURES={}", features.join(","));
    let tree = match dirty {
        Some(true) => ", dirty tree",
        Some(false) => ", clean tree",
        None => "",
    };
    let features = if features.is_empty() {
        "none".to_string()
    } else {
        features.join(",")
    };
    println!(
        "cargo:rustc-env=IPCMARK_VERSION_LINE={} (commit {}{tree}; features: {features})",
        std::env::var("CARGO_PKG_VERSION").expect("set by cargo"),
        commit.as_deref().unwrap_or("unknown"),
    );
}

/// The commit HEAD names and whether the tree differs from it; each `None`
/// when git cannot say. Also asks cargo to re-run when HEAD moves (a commit,
/// a checkout) or the index changes (`git add`).
fn git_state(root: &Path) -> (Option<String>, Option<bool>) {
    // `--git-path` finds git's files in a worktree too, where HEAD and the
    // index are per worktree and the refs are shared.
    let mut watched = vec![
        "HEAD".to_string(),
        "index".into(),
        "logs/HEAD".into(),
        "packed-refs".into(),
    ];
    if let Some(r) = git(root, &["rev-parse", "--symbolic-full-name", "HEAD"])
        && r.starts_with("refs/")
    {
        watched.push(r);
    }
    for file in watched {
        if let Some(p) = git(root, &["rev-parse", "--git-path", &file]) {
            let p = root.join(p);
            // A file that does not exist would re-run this script on every build.
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    let commit = git(root, &["rev-parse", "HEAD"])
        .filter(|c| matches!(c.len(), 40 | 64) && c.bytes().all(|b| b.is_ascii_hexdigit()));
    // --no-optional-locks: `status` must not rewrite the index, which would
    // re-run this script on the next build, and the next.
    let dirty = commit.as_ref().and_then(|_| {
        Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["--no-optional-locks", "status", "--porcelain"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| !o.stdout.is_empty())
    });
    (commit, dirty)
}

/// `git -C root ARGS`'s first line of output, if it succeeded.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let line = text.lines().next()?.trim().to_string();
    (!line.is_empty()).then_some(line)
}

/// The enabled cargo features, as cargo tells a build script
/// (`CARGO_FEATURE_<NAME>`: upper case, '-' as '_'), in lower case with '-'.
fn features() -> Vec<String> {
    let mut out: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| {
            k.strip_prefix("CARGO_FEATURE_")
                .map(|f| f.to_ascii_lowercase().replace('_', "-"))
        })
        .collect();
    out.sort();
    out
}
