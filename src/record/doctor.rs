//! The record of `ipcmark doctor --json` (schema `ipcmark.doctor/1`): the
//! machine examined, when, for which CPUs, and every check with what it
//! found, what that costs here, whether it needs root and the fix.

use super::build::BuildRecord;
use serde::{Deserialize, Serialize};

/// Schema of the doctor's JSON.
pub const DOCTOR_SCHEMA: &str = "ipcmark.doctor/1";

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// Fit to measure on, as far as the check sees.
    Pass,
    /// A fact that decides what the figures mean, not a fault.
    Info,
    /// Figures may move by about their interval or more.
    Warn,
    /// Figures measured now would not describe this machine.
    Fail,
    /// Not exposed here (or only to root): `found` says why.
    Skip,
}

/// A verdict as the reports write it ("pass", "warn", …).
pub fn status_word(s: CheckStatus) -> &'static str {
    match s {
        CheckStatus::Pass => "pass",
        CheckStatus::Info => "info",
        CheckStatus::Warn => "warn",
        CheckStatus::Fail => "fail",
        CheckStatus::Skip => "skip",
    }
}

/// What a condition costs here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostRecord {
    /// The figure.
    pub value: f64,
    /// Its unit: "ns", "us" or "%".
    pub unit: String,
    /// What it is.
    pub what: String,
}

/// One check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckRecord {
    /// Kebab-case id, stable across versions.
    pub id: String,
    /// What it checks.
    pub title: String,
    /// Its verdict.
    pub status: CheckStatus,
    /// What it read (or, skipped, why it could not).
    pub found: String,
    /// What the condition costs here, where measured; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostRecord>,
    /// Whether part of what it reads or tries is open to root only.
    pub needs_root: bool,
    /// The one-line fix, for when it does not pass.
    pub fix: String,
}

/// The checks that can change during a run, taken over one pass (from its
/// start to its end, so that a rate is the pass's): `pass_checks` of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassChecksRecord {
    /// With `--load-sweep`: the level (from 1) the pass belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<usize>,
    /// The pass, from 1.
    pub pass: usize,
    /// The checks over the pass.
    pub checks: Vec<CheckRecord>,
}

/// `ipcmark doctor --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoctorRecord {
    /// Always [`DOCTOR_SCHEMA`].
    pub schema: String,
    /// The build of ipcmark that examined the machine.
    pub build: BuildRecord,
    /// The machine's host name.
    pub host: String,
    /// When, RFC 3339.
    pub time: String,
    /// Whether the examining process ran as root (the checks that need
    /// root saw less otherwise).
    pub root: bool,
    /// The CPUs examined as a run's measured CPUs.
    pub cpus: Vec<usize>,
    /// Every check, in the doctor's order.
    pub checks: Vec<CheckRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> DoctorRecord {
        DoctorRecord {
            schema: DOCTOR_SCHEMA.into(),
            build: BuildRecord {
                version: "0.1.0".into(),
                commit: "unknown".into(),
                dirty: None,
                features: vec![],
            },
            host: "box".into(),
            time: "2026-11-27T05:00:00Z".into(),
            root: false,
            cpus: vec![0, 1],
            checks: vec![
                CheckRecord {
                    id: "steal-time".into(),
                    title: "steal time".into(),
                    status: CheckStatus::Warn,
                    found: "CPU 0 5.0%".into(),
                    cost: Some(CostRecord {
                        value: 5.0,
                        unit: "%".into(),
                        what: "stolen".into(),
                    }),
                    needs_root: false,
                    fix: "measure later".into(),
                },
                CheckRecord {
                    id: "preemption".into(),
                    title: "preemption model and HZ".into(),
                    status: CheckStatus::Info,
                    found: "PREEMPT_DYNAMIC".into(),
                    cost: None,
                    needs_root: true,
                    fix: "boot with preempt=full".into(),
                },
            ],
        }
    }

    #[test]
    fn a_doctor_report_reads_back_as_written() {
        let r = record();
        let text = serde_json::to_string_pretty(&r).unwrap() + "\n";
        assert!(text.contains("\"status\": \"warn\""), "{text}");
        assert!(
            !text.contains("\"cost\": null"),
            "an absent cost is left out: {text}"
        );
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(super::super::schema_of(&value), Some(DOCTOR_SCHEMA));
        let back: DoctorRecord = serde_json::from_value(value).unwrap();
        assert_eq!(back, r);
        super::super::assert_writes_back("doctor", &back, &text);
    }
}
