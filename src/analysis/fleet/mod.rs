//! Which hosts of a fleet are not like the others, and why (`ipcmark
//! fleet`, docs/fleet.md).
//!
//! The newest run of each host is taken ([`newest_per_host`]); hosts are
//! grouped by their machine's class ([`MachineClass`]: CPU model, logical
//! CPUs, kernel release, hypervisor), the fields that should make hosts
//! alike. Within a class, a figure (`FigureRecord::key`) measured by three
//! hosts or more has a median across hosts of its centre (the
//! drift-corrected median where it was swept, else the median:
//! `watch::centre`), and each host a ratio to it; the figure's
//! host-to-host spread is 1.4826 × the MAD of the hosts' log ratios, and
//! the class's spread the median of its figures'.
//!
//! **The outlier test.** A host's *shift* is the median over its figures of
//! its log ratios (one number, robust to a figure or two of its own gone
//! wrong). A host is an outlier when all three hold:
//! 1. its shift is beyond the class's hosts' shifts: the robust z, (shift −
//!    the hosts' median shift) / (1.4826 × their MAD), is beyond ±3.5
//!    (Iglewicz and Hoaglin's cut for the modified z-score), the scale taken
//!    as at least 0.01 (1%) so that hosts agreeing to a fraction of a
//!    percent do not make a 2% host an outlier. The median and MAD are
//!    over every host of the class, the host itself included, as the
//!    modified z-score is: they resist a few outliers, and a class split
//!    in two halves (which leaving the host out would make every host an
//!    outlier of the other half) flags no one;
//! 2. the shift is an effect worth a look: at least 10% slower or faster;
//! 3. it is consistent across figures: the host is on the side of its
//!    shift in more figures than chance allows, by the one-sided sign test
//!    at 0.05 over the figures where it is not exactly at the median.
//!
//! The test needs three hosts in the class (with two, which one is off?)
//! and five figures of a host (with fewer the sign test cannot reach
//! 0.05). Each outlier's settings that differ from its class are
//! [`settings::differences`].

pub mod settings;

use super::watch::centre;
use crate::record::RunRecord;
use crate::record::build::BuildRecord;
use crate::record::class::MachineClass;
use crate::record::fleet::{
    ClassFigureRecord, ClassRecord, FLEET_SCHEMA, FleetReport, HostRecord, OutlierTestRecord,
    SupersededRecord, Verdict,
};
use crate::record::key::FigureKey;
use crate::stats::median;
use crate::stats::robust::{MAD_SCALE, mad, robust_z, sign_test_p};
use std::collections::BTreeMap;

/// Fewest hosts of a class the test is made with.
pub const MIN_HOSTS: usize = 3;
/// Fewest figures of a host the test is made with (5 figures all on one
/// side: p = 1/32, under [`SIGN_ALPHA`]; 4 cannot get there).
pub const MIN_FIGURES: usize = 5;
/// |z| beyond which a host's shift is beyond the others'.
pub const Z_THRESHOLD: f64 = 3.5;
/// The smallest scale of the others' log shifts the z divides by.
pub const SCALE_FLOOR: f64 = 0.01;
/// The smallest shift an outlier has, as a fraction.
pub const MIN_EFFECT: f64 = 0.10;
/// The sign test's level.
pub const SIGN_ALPHA: f64 = 0.05;

/// One run read: where from, and its record.
#[derive(Debug, Clone)]
pub struct Input {
    /// A file's path, or `run N` of the history.
    pub source: String,
    /// Its id in the history; `None` for a file.
    pub run_id: Option<i64>,
    /// The run.
    pub record: RunRecord,
}

/// The test as the report states it.
pub fn test_record() -> OutlierTestRecord {
    OutlierTestRecord {
        method: format!(
            "a host's shift is the median over its figures of ln(its centre / the class's \
             median); it is an outlier when its robust z among the class's hosts' shifts \
             (their median, their MAD × {MAD_SCALE}, the scale at least {SCALE_FLOOR}) is beyond \
             ±{Z_THRESHOLD}, the shift is at least {:.0}%, and the one-sided sign test over \
             its figures in the shift's direction gives p ≤ {SIGN_ALPHA}",
            MIN_EFFECT * 100.0
        ),
        min_hosts: MIN_HOSTS,
        min_figures: MIN_FIGURES,
        z_threshold: Z_THRESHOLD,
        mad_scale: MAD_SCALE,
        scale_floor: SCALE_FLOOR,
        min_effect: MIN_EFFECT,
        sign_alpha: SIGN_ALPHA,
    }
}

/// Of runs given as (host, start time, RFC 3339), the newest of each host
/// (the later in the list where two started at the same time, or where a
/// time does not read) in the order given, and each one left out with the
/// index of the run that replaced it.
pub fn newest_per_host(runs: &[(&str, &str)]) -> (Vec<usize>, Vec<(usize, usize)>) {
    let time = |s: &str| s.parse::<jiff::Timestamp>().ok();
    let mut newest: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, (host, started)) in runs.iter().enumerate() {
        match newest.get(host) {
            Some(&j) if time(runs[j].1) > time(started) => {}
            _ => {
                newest.insert(host, i);
            }
        }
    }
    let mut kept: Vec<usize> = newest.values().copied().collect();
    kept.sort_unstable();
    let left = (0..runs.len())
        .filter(|i| !kept.contains(i))
        .map(|i| (i, newest[runs[i].0]))
        .collect();
    (kept, left)
}

/// What the test says of one host, from its log ratios alone.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTest {
    /// The median of its log ratios; `None` without any.
    pub shift: Option<f64>,
    /// Its robust z among the class's hosts' shifts, where tested.
    pub z: Option<f64>,
    /// Figures above and below the median.
    pub slower: usize,
    pub faster: usize,
    /// The sign test's p in the shift's direction, where tested.
    pub sign_p: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
}

/// The test over a class's hosts, each given as its log ratios (one per
/// figure it measured), on plain numbers; and why no host could be tested,
/// where none could.
pub fn test_hosts(logs: &[Vec<f64>]) -> (Vec<HostTest>, Option<String>) {
    let shifts: Vec<Option<f64>> = logs
        .iter()
        .map(|l| (!l.is_empty()).then(|| median(l)))
        .collect();
    let testable = |i: usize| logs[i].len() >= MIN_FIGURES;
    let why = if logs.len() < MIN_HOSTS {
        Some(format!(
            "{} host(s): the outlier test needs {MIN_HOSTS} or more hosts of one class",
            logs.len()
        ))
    } else if !(0..logs.len()).any(testable) {
        Some(format!(
            "no host has {MIN_FIGURES} or more of the class's figures: the sign test \
             cannot reach {SIGN_ALPHA} with fewer"
        ))
    } else {
        None
    };
    let tests = logs
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let slower = l.iter().filter(|v| **v > 0.0).count();
            let faster = l.iter().filter(|v| **v < 0.0).count();
            let shift = shifts[i];
            let mut t = HostTest {
                shift,
                z: None,
                slower,
                faster,
                sign_p: None,
                verdict: Verdict::Untested,
            };
            let Some(s) = shift.filter(|_| why.is_none() && testable(i)) else {
                return t;
            };
            let all: Vec<f64> = shifts.iter().flatten().copied().collect();
            if all.len() < MIN_HOSTS {
                return t;
            }
            t.z = robust_z(s, &all, SCALE_FLOOR);
            let agree = if s > 0.0 { slower } else { faster };
            t.sign_p = Some(sign_test_p(agree, slower + faster));
            let effect = (s.exp() - 1.0).abs();
            let outlier = t.z.is_some_and(|z| z.abs() > Z_THRESHOLD)
                && effect >= MIN_EFFECT
                && t.sign_p.is_some_and(|p| p <= SIGN_ALPHA);
            t.verdict = if outlier {
                Verdict::Outlier
            } else {
                Verdict::Normal
            };
            t
        })
        .collect();
    (tests, why)
}

/// Each figure of a run with a latency, by key (the first of a key: a
/// load sweep's first level).
fn centres(r: &RunRecord) -> BTreeMap<FigureKey, f64> {
    let mut out = BTreeMap::new();
    for f in &r.results {
        if let Some(c) = centre(f).filter(|c| *c > 0.0 && c.is_finite()) {
            out.entry(f.key()).or_insert(c);
        }
    }
    out
}

/// The fleet: the newest run of each host of `inputs`, after `since`,
/// hosts grouped by class, tested, as the report `build` writes.
pub fn fleet(
    inputs: Vec<Input>,
    since: Option<jiff::Timestamp>,
    build: BuildRecord,
) -> FleetReport {
    let runs_read = inputs.len();
    let inputs: Vec<Input> = inputs
        .into_iter()
        .filter(|i| {
            since.is_none_or(|s| {
                i.record
                    .header
                    .started_at
                    .parse::<jiff::Timestamp>()
                    .is_ok_and(|t| t >= s)
            })
        })
        .collect();
    let pairs: Vec<(&str, &str)> = inputs
        .iter()
        .map(|i| {
            let h = &i.record.header;
            (h.environment.hostname.as_str(), h.started_at.as_str())
        })
        .collect();
    let (kept, left) = newest_per_host(&pairs);
    let superseded = left
        .iter()
        .map(|&(i, by)| SupersededRecord {
            host: pairs[i].0.to_string(),
            source: inputs[i].source.clone(),
            started_at: pairs[i].1.to_string(),
            by: inputs[by].source.clone(),
        })
        .collect();
    let mut classes: BTreeMap<MachineClass, Vec<&Input>> = BTreeMap::new();
    for &i in &kept {
        let class = MachineClass::of(&inputs[i].record.header.environment);
        classes.entry(class).or_default().push(&inputs[i]);
    }
    FleetReport {
        schema: FLEET_SCHEMA.into(),
        build,
        test: test_record(),
        runs_read,
        superseded,
        classes: classes
            .into_iter()
            .map(|(class, mut hosts)| {
                hosts.sort_by(|a, b| {
                    let name = |i: &Input| i.record.header.environment.hostname.clone();
                    name(a).cmp(&name(b))
                });
                class_record(class, &hosts)
            })
            .collect(),
    }
}

/// One class: its figures, its hosts' ratios, the test and the outliers'
/// settings.
fn class_record(class: MachineClass, hosts: &[&Input]) -> ClassRecord {
    let centres: Vec<BTreeMap<FigureKey, f64>> = hosts.iter().map(|h| centres(&h.record)).collect();
    let need = MIN_HOSTS.min(hosts.len());
    let mut count: BTreeMap<&FigureKey, usize> = BTreeMap::new();
    for c in &centres {
        for k in c.keys() {
            *count.entry(k).or_default() += 1;
        }
    }
    let keys: Vec<FigureKey> = count
        .into_iter()
        .filter(|(_, n)| *n >= need)
        .map(|(k, _)| k.clone())
        .collect();
    let mut figures = Vec::new();
    // ratios[host][figure]
    let mut ratios: Vec<Vec<Option<f64>>> = vec![Vec::new(); hosts.len()];
    for k in &keys {
        let values: Vec<f64> = centres.iter().filter_map(|c| c.get(k).copied()).collect();
        let m = median(&values);
        let logs: Vec<f64> = values.iter().map(|v| (v / m).ln()).collect();
        for (h, c) in centres.iter().enumerate() {
            ratios[h].push(c.get(k).map(|v| v / m));
        }
        figures.push(ClassFigureRecord {
            key: k.to_string(),
            benchmark: k.benchmark.clone(),
            mode: k.mode_label(),
            size_bytes: k.size_bytes,
            hosts: values.len(),
            median_ns: m,
            spread: MAD_SCALE * mad(&logs).unwrap_or(0.0),
        });
    }
    let logs: Vec<Vec<f64>> = ratios
        .iter()
        .map(|r| r.iter().flatten().map(|v| v.ln()).collect())
        .collect();
    let (tests, why) = test_hosts(&logs);
    let outlier: Vec<bool> = tests
        .iter()
        .map(|t| t.verdict == Verdict::Outlier)
        .collect();
    let settings: Vec<settings::Settings> = hosts.iter().map(|h| settings::of(&h.record)).collect();
    let mut differs = settings::differences(&settings, &outlier);
    let spreads: Vec<f64> = figures.iter().map(|f| f.spread).collect();
    ClassRecord {
        id: class.id(),
        label: class.label(),
        class,
        // One host has no host-to-host spread to give: none, not 0.
        spread: (!spreads.is_empty() && hosts.len() >= 2).then(|| median(&spreads)),
        tested: why.is_none(),
        not_tested: why,
        figures,
        hosts: hosts
            .iter()
            .zip(tests)
            .zip(ratios)
            .enumerate()
            .map(|(i, ((h, t), ratios))| HostRecord {
                host: h.record.header.environment.hostname.clone(),
                source: h.source.clone(),
                run_id: h.run_id,
                started_at: h.record.header.started_at.clone(),
                figures: logs[i].len(),
                ratios,
                shift: t.shift.map(f64::exp),
                z: t.z,
                slower: t.slower,
                faster: t.faster,
                sign_p: t.sign_p,
                verdict: t.verdict,
                direction: (t.verdict == Verdict::Outlier).then(|| {
                    match t.shift.unwrap_or(0.0) > 0.0 {
                        true => "slower".to_string(),
                        false => "faster".to_string(),
                    }
                }),
                differs: std::mem::take(&mut differs[i]),
            })
            .collect(),
    }
}

#[cfg(test)]
pub(crate) mod tests;
