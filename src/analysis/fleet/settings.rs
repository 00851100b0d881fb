//! The settings of a host that may make it measure unlike its class, read
//! from its run's record, and the ones in which an outlier differs from
//! the value most of its class holds, ranked by how well they line up with
//! the outliers.
//!
//! A setting is a name and a value. Most are text and differ when unequal
//! (the governor, SMT, a mitigation's state, a kernel command line key's
//! value, an idle state enabled or not, a doctor check's verdict, the
//! run's own placement and budget); two are numbers that differ beyond a
//! tolerance (the clock of CPU 0 by 10%, the CPU busy at the start by 10
//! points). A host that did not record a setting (an earlier report) is
//! left out of that setting; one that recorded its family (its command
//! line, its idle states, its mitigations, its checks) but not the key
//! holds `absent`.

use crate::record::RunRecord;
use crate::record::doctor::status_word;
use crate::record::fleet::SettingDiffRecord;
use std::collections::{BTreeMap, BTreeSet};

/// What a host holds in one setting.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Text, equal or not.
    Text(String),
    /// A number, alike within `tolerance` of the class's median: relative
    /// (a fraction of it) or absolute.
    Number {
        value: f64,
        tolerance: Tolerance,
        unit: &'static str,
    },
}

/// How far a number may be from the class's median and still be alike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// A fraction of the median.
    Relative(f64),
    /// In the value's unit.
    Absolute(f64),
}

/// The order in which settings of equal alignment are listed: the
/// machine's tuning first (the kernel's command line, frequency, idle
/// states, the CPU latency held), then what the kernel and the CPU are,
/// then the load at the start, the doctor's checks, the build and the run's
/// own settings; by name within each.
const ORDER: &[&str] = &[
    "kernel_cmdline:",
    "frequency_governor",
    "smt",
    "cpu_idle.",
    "cpu_dma_latency_us",
    "cpu_latency.",
    "cpu_mhz",
    "isolated_cpus",
    "nohz_full_cpus",
    "clocksource",
    "preemption",
    "mitigations.",
    "microcode",
    "cpu_signature",
    "numa_nodes",
    "kernel_version",
    "cpu_busy_percent_at_start",
    "check:",
    "build",
    "settings.",
];

/// Where `name` comes in [`ORDER`].
fn rank(name: &str) -> usize {
    ORDER
        .iter()
        .position(|p| name.starts_with(p))
        .unwrap_or(ORDER.len())
}

/// The families of settings named by key: a host that recorded the family
/// and lacks a key holds `absent`.
const FAMILIES: &[&str] = &[
    "kernel_cmdline:",
    "cpu_idle.state:",
    "mitigations.",
    "check:",
];

/// The value of a key a host's family lacks.
pub const ABSENT: &str = "absent";

/// A host's settings.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Setting → value, in order of first listing.
    pub values: Vec<(String, Value)>,
    /// The families ([`FAMILIES`]) it recorded.
    pub families: BTreeSet<&'static str>,
}

impl Settings {
    fn text(&mut self, name: &str, value: impl Into<String>) {
        self.values
            .push((name.to_string(), Value::Text(value.into())));
    }

    fn opt<T: ToString>(&mut self, name: &str, value: &Option<T>) {
        self.text(name, value.as_ref().map_or("none".into(), T::to_string));
    }

    /// What the host holds in `name`: its value, `absent` where it
    /// recorded the family, `None` where it recorded nothing of it.
    pub fn get(&self, name: &str) -> Option<Value> {
        if let Some((_, v)) = self.values.iter().find(|(n, _)| n == name) {
            return Some(v.clone());
        }
        FAMILIES
            .iter()
            .find(|f| name.starts_with(**f) && self.families.contains(**f))
            .map(|_| Value::Text(ABSENT.into()))
    }
}

fn list(v: &[usize]) -> String {
    match v.is_empty() {
        true => "none".into(),
        false => v
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// The settings of the host and run of `r`.
pub fn of(r: &RunRecord) -> Settings {
    let e = &r.header.environment;
    let mut s = Settings::default();
    if let Some(line) = &e.kernel_cmdline {
        s.families.insert("kernel_cmdline:");
        for token in line.split_whitespace() {
            let (key, value) = token.split_once('=').unwrap_or((token, "present"));
            let name = format!("kernel_cmdline:{key}");
            // A key given twice: the kernel takes the last.
            s.values.retain(|(n, _)| *n != name);
            s.text(&name, value);
        }
    }
    s.opt("frequency_governor", &e.frequency_governor);
    s.opt("smt", &e.smt);
    if let Some(idle) = &e.cpu_idle {
        s.text("cpu_idle.driver", idle.driver.clone());
        s.opt("cpu_idle.governor", &idle.governor);
        s.families.insert("cpu_idle.state:");
        for st in &idle.states {
            let state = if st.disabled { "disabled" } else { "enabled" };
            s.text(&format!("cpu_idle.state:{}", st.name), state);
        }
    }
    s.opt("cpu_dma_latency_us", &e.cpu_dma_latency_us);
    s.text("cpu_latency.held", e.cpu_latency.held.to_string());
    s.opt("cpu_latency.requested_us", &e.cpu_latency.requested_us);
    if let Some(mhz) = e.cpu_mhz {
        s.values.push((
            "cpu_mhz".into(),
            Value::Number {
                value: mhz,
                tolerance: Tolerance::Relative(0.10),
                unit: "MHz",
            },
        ));
    }
    s.text("isolated_cpus", list(&e.isolated_cpus));
    s.text("nohz_full_cpus", list(&e.nohz_full_cpus));
    s.text("clocksource", e.clocksource.clone());
    s.text("preemption", e.preemption.clone());
    if !e.mitigations.is_empty() {
        s.families.insert("mitigations.");
    }
    for (name, state) in &e.mitigations {
        s.text(&format!("mitigations.{name}"), state.clone());
    }
    if let Some(m) = &e.microcode {
        s.text("microcode", m.clone());
    }
    if let Some(c) = &e.cpu_signature {
        let stepping = c.stepping.map_or("none".into(), |v| v.to_string());
        s.text(
            "cpu_signature",
            format!("family {} model {} stepping {stepping}", c.family, c.model),
        );
    }
    if let Some(n) = &e.numa_nodes {
        s.text("numa_nodes", list(n));
    }
    s.text("kernel_version", e.kernel_version.clone());
    if let Some(busy) = e.cpu_busy_percent_at_start {
        s.values.push((
            "cpu_busy_percent_at_start".into(),
            Value::Number {
                value: busy,
                tolerance: Tolerance::Absolute(10.0),
                unit: "%",
            },
        ));
    }
    if let Some(checks) = &r.checks {
        s.families.insert("check:");
        for c in checks {
            s.text(&format!("check:{}", c.id), status_word(c.status));
        }
    }
    let b = &r.header.build;
    let commit: String = b.commit.chars().take(12).collect();
    s.text("build", format!("{} {commit}", b.version));
    let st = &r.settings;
    s.opt("settings.client_cpu", &st.client_cpu);
    s.opt("settings.server_cpu", &st.server_cpu);
    s.opt("settings.rt_priority", &st.rt_priority);
    s.text("settings.peer", format!("{:?}", st.peer).to_lowercase());
    s.text("settings.quick", st.quick.to_string());
    s.text("settings.passes", st.passes.to_string());
    s.opt("settings.cpu_latency_us", &st.cpu_latency_us);
    let load = st
        .load
        .as_ref()
        .map_or("none".into(), |l| l.specs.join(" "));
    s.text("settings.load", load);
    s
}

/// The class's value of one setting and which hosts differ from it.
struct Reference {
    /// The value as the report writes it.
    text: String,
    /// Hosts that hold it.
    holders: usize,
    /// For each host (in the class's order): whether it differs; `None`
    /// where it recorded nothing of the setting.
    differs: Vec<Option<bool>>,
    /// Each host's value, written as the report writes it.
    values: Vec<Option<String>>,
}

fn number_text(v: f64, unit: &str) -> String {
    match unit {
        "%" => format!("{v:.0}%"),
        u => format!("{v:.0} {u}"),
    }
}

/// The class's value of setting `name` among `hosts`: the text most of
/// the hosts that recorded it hold (more than half of them; `None` where no
/// value has such a majority, which then singles no host out), or for a
/// number their median, a host differing beyond the tolerance.
fn reference(name: &str, hosts: &[&Settings]) -> Option<Reference> {
    let values: Vec<Option<Value>> = hosts.iter().map(|h| h.get(name)).collect();
    let known = values.iter().flatten().count();
    if known < 2 {
        return None;
    }
    let numbers: Vec<f64> = values
        .iter()
        .flatten()
        .filter_map(|v| match v {
            Value::Number { value, .. } => Some(*value),
            Value::Text(_) => None,
        })
        .collect();
    if numbers.len() == known {
        let median = crate::stats::median(&numbers);
        let mut unit = "";
        let differs: Vec<Option<bool>> = values
            .iter()
            .map(|v| match v {
                Some(Value::Number {
                    value,
                    tolerance,
                    unit: u,
                }) => {
                    unit = *u;
                    let allowed = match tolerance {
                        Tolerance::Relative(f) => f * median.abs(),
                        Tolerance::Absolute(a) => *a,
                    };
                    Some((value - median).abs() > allowed)
                }
                _ => None,
            })
            .collect();
        let holders = differs.iter().filter(|d| **d == Some(false)).count();
        let texts = values
            .iter()
            .map(|v| match v {
                Some(Value::Number { value, unit, .. }) => Some(number_text(*value, unit)),
                _ => None,
            })
            .collect();
        return Some(Reference {
            text: format!("{} (median)", number_text(median, unit)),
            holders,
            differs,
            values: texts,
        });
    }
    let texts: Vec<Option<String>> = values
        .iter()
        .map(|v| match v {
            Some(Value::Text(t)) => Some(t.clone()),
            Some(Value::Number { value, unit, .. }) => Some(number_text(*value, unit)),
            None => None,
        })
        .collect();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for t in texts.iter().flatten() {
        *counts.entry(t.as_str()).or_default() += 1;
    }
    let (top, holders) = counts
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(t, n)| (t.to_string(), *n))?;
    if holders * 2 <= known {
        return None;
    }
    let differs = texts
        .iter()
        .map(|t| t.as_ref().map(|t| *t != top))
        .collect();
    Some(Reference {
        text: top,
        holders,
        differs,
        values: texts,
    })
}

/// For each host of a class (`hosts`, with `outlier[i]` whether host `i`
/// is an outlier), the settings in which it differs from its class, for
/// the outliers only (empty for the others), ranked: first those in which
/// no host that is not an outlier differs, then by fewer such hosts, then
/// by more outliers differing alike, then in [`ORDER`].
pub fn differences(hosts: &[Settings], outlier: &[bool]) -> Vec<Vec<SettingDiffRecord>> {
    let mut out = vec![Vec::new(); hosts.len()];
    if !outlier.iter().any(|o| *o) {
        return out;
    }
    // Every setting any host lists, in [`ORDER`], by name within it.
    let mut names: Vec<&str> = hosts
        .iter()
        .flat_map(|h| h.values.iter().map(|(n, _)| n.as_str()))
        .collect();
    names.sort_by_key(|n| (rank(n), *n));
    names.dedup();
    let refs: Vec<&Settings> = hosts.iter().collect();
    let mut ranked: Vec<Vec<(usize, SettingDiffRecord)>> = vec![Vec::new(); hosts.len()];
    for (order, name) in names.iter().enumerate() {
        let Some(r) = reference(name, &refs) else {
            continue;
        };
        let count = |want: bool| {
            r.differs
                .iter()
                .zip(outlier)
                .filter(|(d, o)| **d == Some(true) && **o == want)
                .count()
        };
        let (outliers_differing, normal_differing) = (count(true), count(false));
        for (i, d) in r.differs.iter().enumerate() {
            if outlier[i] && *d == Some(true) {
                ranked[i].push((
                    order,
                    SettingDiffRecord {
                        setting: name.to_string(),
                        value: r.values[i].clone().unwrap_or_default(),
                        class_value: r.text.clone(),
                        hosts_with_class_value: r.holders,
                        outliers_differing,
                        normal_differing,
                    },
                ));
            }
        }
    }
    for (i, mut list) in ranked.into_iter().enumerate() {
        list.sort_by_key(|(order, d)| {
            (
                d.normal_differing,
                std::cmp::Reverse(d.outliers_differing),
                *order,
            )
        });
        out[i] = list.into_iter().map(|(_, d)| d).collect();
    }
    out
}
