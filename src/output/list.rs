//! The records of `ipcmark list --json` (one entry per mechanism and
//! benchmark, in registry order) and `ipcmark list presets --json`, each
//! built from the engine's description of a mechanism or benchmark (or from
//! a preset) field for field. The command line walks the registries and
//! calls these.

use crate::engine::channel::{Mechanism, Payload, StreamSupport, Topology};
use crate::engine::models::periodic::Periodic;
use crate::engine::models::score::Scored;
use crate::engine::op::Operation;
use crate::presets::{LoadStudy, Preset};
use serde::Serialize;

/// One mechanism as `ipcmark list --json` prints it.
#[derive(Serialize)]
pub struct MechanismEntry {
    pub id: &'static str,
    pub summary: &'static str,
    /// Always "ipc".
    pub group: &'static str,
    /// Always "pingpong" (the default mode).
    pub mode: &'static str,
    /// `--mode stream`: "queued", "lossy", or null with `no_stream` saying why not.
    pub stream: Option<&'static str>,
    /// Why the mechanism cannot stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_stream: Option<&'static str>,
    /// "bytes" (swept by --sizes) or "fixed".
    pub payload: &'static str,
    /// Fixed payload size, or the largest message on this system (null: no limit).
    pub max_bytes: Option<usize>,
    /// Where the limit comes from.
    pub limit_reason: Option<String>,
    /// Whether the mechanism runs without a peer (sends to itself).
    pub self_loop: bool,
    /// Whether the hand-off busy-waits (needs two CPUs).
    pub spins: bool,
    /// What it needs beyond any Linux (a kernel version, a package), or null.
    pub requires: Option<&'static str>,
    /// Why it cannot run on this system, or null.
    pub unavailable: Option<String>,
}

/// One operation benchmark as `ipcmark list --json` prints it.
#[derive(Serialize)]
pub struct OpEntry {
    pub id: &'static str,
    pub summary: &'static str,
    pub group: &'static str,
    /// "op", or "event" for a benchmark that times its events itself.
    pub mode: &'static str,
    /// Bytes one operation moves (0 if none); sizes do not apply.
    pub bytes_per_op: usize,
    /// System calls every operation makes (proven at run time).
    pub syscalls: Vec<&'static str>,
    /// System calls it is expected to do without (vDSO).
    pub avoids: Vec<&'static str>,
    /// Why it cannot run here, if it cannot.
    pub unavailable: Option<String>,
}

/// One periodic benchmark as `ipcmark list --json` prints it.
#[derive(Serialize)]
pub struct PeriodicEntry {
    pub id: &'static str,
    pub summary: &'static str,
    pub group: &'static str,
    /// Always "periodic".
    pub mode: &'static str,
}

/// One score benchmark as `ipcmark list --json` prints it.
#[derive(Serialize)]
pub struct ScoreEntry {
    pub id: &'static str,
    pub summary: &'static str,
    pub group: &'static str,
    /// Always "score".
    pub mode: &'static str,
    /// What one operation of the score is.
    pub operation: &'static str,
    /// Whether the group's other scores are normalised by this one.
    pub baseline: bool,
    /// Whether it needs SCHED_FIFO (skipped without).
    pub needs_fifo: bool,
}

#[derive(Serialize)]
#[serde(untagged)]
pub enum Entry {
    Mechanism(MechanismEntry),
    Op(OpEntry),
    Periodic(PeriodicEntry),
    Score(ScoreEntry),
}

impl Entry {
    /// A mechanism of the group `group` (always "ipc").
    pub fn mechanism(m: &dyn Mechanism, group: &'static str) -> Entry {
        let info = m.info();
        let limit = m.size_limit();
        let (payload, max_bytes, limit_reason) = match info.payload {
            Payload::Fixed(n) => ("fixed", Some(n), None),
            Payload::Bytes => (
                "bytes",
                limit.as_ref().map(|l| l.max_bytes),
                limit.map(|l| l.reason),
            ),
        };
        Entry::Mechanism(MechanismEntry {
            id: info.id,
            summary: info.summary,
            group,
            mode: "pingpong",
            stream: match m.stream() {
                StreamSupport::Queued => Some("queued"),
                StreamSupport::Lossy => Some("lossy"),
                StreamSupport::No(_) => None,
            },
            no_stream: match m.stream() {
                StreamSupport::No(why) => Some(why),
                _ => None,
            },
            payload,
            max_bytes,
            limit_reason,
            self_loop: info.topology == Topology::SelfLoop,
            spins: info.spins,
            requires: m.requires(),
            unavailable: m.unavailable(),
        })
    }

    /// An operation benchmark (mode `op` or `event`).
    pub fn op(b: &dyn Operation) -> Entry {
        let info = b.info();
        Entry::Op(OpEntry {
            id: info.id,
            summary: info.summary,
            group: info.group,
            mode: if b.self_timed() { "event" } else { "op" },
            bytes_per_op: info.bytes,
            syscalls: info.enters.iter().map(|c| c.name).collect(),
            avoids: info.avoids.iter().map(|c| c.name).collect(),
            unavailable: b.unavailable(),
        })
    }

    /// A periodic benchmark.
    pub fn periodic(b: &dyn Periodic) -> Entry {
        let info = b.info();
        Entry::Periodic(PeriodicEntry {
            id: info.id,
            summary: info.summary,
            group: info.group,
            mode: "periodic",
        })
    }

    /// A score benchmark.
    pub fn score(b: &dyn Scored) -> Entry {
        let info = b.info();
        Entry::Score(ScoreEntry {
            id: info.id,
            summary: info.summary,
            group: info.group,
            mode: "score",
            operation: info.operation,
            baseline: info.is_baseline,
            needs_fifo: info.needs_fifo,
        })
    }
}

/// A preset as `ipcmark list presets --json` prints it.
#[derive(Serialize)]
pub struct PresetEntry {
    pub name: &'static str,
    pub study: &'static str,
    /// Column labels with the mechanism and flags (`--cold`, `--mode oneway`, …) behind each.
    pub columns: Vec<String>,
    pub sizes: &'static [usize],
    /// A load study's application load (`--load`), held at every level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<&'static str>,
    /// A load study's interrupt frequencies (Hz), one level each after the
    /// first, which holds the application load alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub levels_hz: Option<&'static [f64]>,
}

impl From<&Preset> for PresetEntry {
    fn from(p: &Preset) -> Self {
        PresetEntry {
            name: p.name,
            study: p.study,
            columns: p
                .columns
                .iter()
                .map(|c| format!("{}: {}", c.label, c.command()))
                .collect(),
            sizes: p.sizes,
            load: None,
            levels_hz: None,
        }
    }
}

impl From<&LoadStudy> for PresetEntry {
    /// A load study's columns are its benchmarks (those measured at the
    /// first level only say so); it has no sizes.
    fn from(st: &LoadStudy) -> Self {
        PresetEntry {
            name: st.name,
            study: st.study,
            columns: st
                .benchmarks
                .iter()
                .map(|b| b.to_string())
                .chain(st.once.iter().map(|b| format!("{b} (first level only)")))
                .collect(),
            sizes: &[],
            load: Some(st.load),
            levels_hz: Some(st.frequencies),
        }
    }
}
