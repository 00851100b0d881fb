//! Fixture machines for the checks' tests: a temporary tree laid out as
//! `/proc` and `/sys` are, written file by file, and a way to run one check
//! on it.

use super::{CHECKS, Inputs, Measured, Outcome, Sample};
use crate::machine::sysroot::SysRoot;

/// A fixture machine's root, removed when dropped.
pub struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    pub fn new() -> Tree {
        Tree {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// Writes `text` (a newline added) at the machine path `abs`.
    pub fn file(&self, abs: &str, text: &str) -> &Tree {
        let path = self.root().path(abs);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("{text}\n")).unwrap();
        self
    }

    pub fn root(&self) -> SysRoot {
        SysRoot::at(self.dir.path())
    }

    /// The counters as they are now, stamped `at_s` seconds.
    pub fn sample(&self, at_s: f64) -> Sample {
        Sample::read(&self.root(), (at_s * 1e9) as u64)
    }
}

/// What a test machine "measured": a steady loop, a cheap clock, no
/// wake-up measured, no latency limit held.
pub fn measured() -> Measured {
    Measured {
        loop_rate: [Ok(1000.0), Ok(1000.0)],
        clock_read_ns: Ok(20.0),
        wakeup: Err("not measured in a test".into()),
        latency_hold: Err("permission denied opening /dev/cpu_dma_latency".into()),
        placement: Err("not measured in a test".into()),
    }
}

/// Check `id` on `tree` for CPUs 0 and 1, its counters sampled now twice,
/// one second apart (for checks that read them once or not at all).
pub fn outcome(id: &str, tree: &Tree) -> Outcome {
    let s = tree.sample(0.0);
    let after = Sample {
        at_ns: 1_000_000_000,
        ..s.clone()
    };
    outcome_with(id, tree, &s, &after, &measured())
}

/// Check `id` on `tree` for CPUs 0 and 1 with the given samples and measures.
pub fn outcome_with(
    id: &str,
    tree: &Tree,
    before: &Sample,
    after: &Sample,
    measured: &Measured,
) -> Outcome {
    let def = CHECKS.iter().find(|d| d.id == id).expect("a check's id");
    (def.run)(&Inputs {
        root: &tree.root(),
        cpus: &[0, 1],
        before,
        after,
        measured,
    })
}
