use super::*;
use crate::record::fleet::FleetReport;

/// A deterministic number in [-1, 1) for (host, figure): splitmix64.
fn noise(host: usize, figure: usize) -> f64 {
    let mut z = (host as u64) << 32 | figure as u64;
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

// ---- the test on plain numbers ----

/// `hosts` hosts of `figures` log ratios each, ±`jitter` around 0.
fn logs(hosts: usize, figures: usize, jitter: f64) -> Vec<Vec<f64>> {
    (0..hosts)
        .map(|h| (0..figures).map(|f| jitter * noise(h, f)).collect())
        .collect()
}

fn verdicts(tests: &[HostTest]) -> Vec<Verdict> {
    tests.iter().map(|t| t.verdict).collect()
}

#[test]
fn a_host_shifted_beyond_the_others_on_most_figures_is_an_outlier() {
    let mut l = logs(12, 10, 0.03);
    for v in &mut l[4] {
        *v += 0.25;
    }
    for v in &mut l[9] {
        *v -= 0.20;
    }
    let (tests, why) = test_hosts(&l);
    assert_eq!(why, None);
    for (i, t) in tests.iter().enumerate() {
        let want = match i {
            4 | 9 => Verdict::Outlier,
            _ => Verdict::Normal,
        };
        assert_eq!(t.verdict, want, "host {i}: {t:?}");
    }
    assert!(tests[4].z.unwrap() > Z_THRESHOLD && tests[4].slower == 10);
    assert!(tests[9].z.unwrap() < -Z_THRESHOLD && tests[9].faster == 10);
    assert!(tests[4].sign_p.unwrap() < 0.001, "{:?}", tests[4]);
}

#[test]
fn no_host_is_an_outlier_in_a_fleet_of_equals() {
    for jitter in [0.0, 0.01, 0.03, 0.06] {
        let (tests, why) = test_hosts(&logs(20, 12, jitter));
        assert_eq!(why, None);
        assert!(
            verdicts(&tests).iter().all(|v| *v == Verdict::Normal),
            "jitter {jitter}: {tests:?}"
        );
    }
}

#[test]
fn each_of_the_three_conditions_is_needed() {
    // Beyond the others' spread, consistent, but 6%: under the effect.
    let mut small = logs(10, 8, 0.002);
    for v in &mut small[0] {
        *v += 0.06;
    }
    let (t, _) = test_hosts(&small);
    assert!(t[0].z.unwrap() > Z_THRESHOLD);
    assert_eq!(t[0].verdict, Verdict::Normal, "{:?}", t[0]);
    // Shifted 40% by its median, yet faster on two of five figures: the
    // sign test (3 of 5, p = 0.5) does not call it consistent.
    let mut mixed = logs(10, 5, 0.01);
    mixed[0] = vec![0.4, 0.4, 0.4, -0.01, -0.01];
    let (t, _) = test_hosts(&mixed);
    assert!(t[0].z.unwrap() > Z_THRESHOLD && t[0].sign_p.unwrap() > 0.4);
    assert_eq!(t[0].verdict, Verdict::Normal, "{:?}", t[0]);
    // Half the class 30% slower: the others' spread is as wide as the
    // shift, so neither half is beyond it.
    let mut halves = logs(10, 8, 0.01);
    for h in halves.iter_mut().take(5) {
        for v in h {
            *v += 0.3;
        }
    }
    let (t, _) = test_hosts(&halves);
    assert!(t.iter().all(|t| t.verdict == Verdict::Normal), "{t:?}");
}

#[test]
fn too_few_hosts_or_figures_is_said_not_tested() {
    let mut two = logs(2, 10, 0.01);
    for v in &mut two[1] {
        *v += 0.5;
    }
    let (t, why) = test_hosts(&two);
    assert!(why.unwrap().contains("3 or more hosts"));
    assert!(
        t.iter()
            .all(|t| t.verdict == Verdict::Untested && t.z.is_none())
    );
    // Shifts are still given.
    assert!(t[1].shift.unwrap() > 0.45);
    let (t, why) = test_hosts(&logs(10, 4, 0.01));
    assert!(why.unwrap().contains("5 or more"), "four figures");
    assert!(t.iter().all(|t| t.verdict == Verdict::Untested));
    // One host with too few figures is untested; the others are tested.
    let mut l = logs(6, 8, 0.01);
    l[2].truncate(3);
    let (t, why) = test_hosts(&l);
    assert_eq!(why, None);
    assert_eq!(t[2].verdict, Verdict::Untested);
    assert_eq!(t[3].verdict, Verdict::Normal);
}

#[test]
fn the_newest_run_of_each_host_is_taken() {
    let runs = [
        ("a", "2026-01-02T00:00:00Z"),
        ("b", "2026-01-01T00:00:00Z"),
        ("a", "2026-01-01T00:00:00Z"),
        ("a", "2026-01-03T01:00:00+02:00"),
        ("b", "not a time"),
    ];
    let (kept, left) = newest_per_host(&runs);
    // a: the third of its runs (23:00 UTC on the 2nd, after the 2nd at 0:00).
    assert_eq!(kept, vec![1, 3]);
    assert_eq!(left, vec![(0, 3), (2, 3), (4, 1)]);
    // The same time twice: the later in the list.
    let (kept, left) = newest_per_host(&[("a", "x"), ("a", "x")]);
    assert_eq!((kept, left), (vec![1], vec![(0, 1)]));
}

// ---- fleets of reports, from a real one ----

/// The run report every synthetic host starts from: ipc-quick's, its four
/// figures each repeated at two more sizes (twelve figures).
fn base() -> RunRecord {
    let mut r = RunRecord::parse(include_str!("../../../tests/reports/ipc-quick.json")).unwrap();
    let mut more = Vec::new();
    for d in 1..=2 {
        for f in &r.results {
            let mut g = f.clone();
            g.size_bytes += d;
            more.push(g);
        }
    }
    r.results.extend(more);
    assert_eq!(r.results.len(), 12);
    assert!(r.results.iter().all(|f| centre(f).is_some()));
    r
}

/// Multiplies a figure's centre (and what it is read from) by `factor`.
fn scale(f: &mut crate::record::FigureRecord, factor: f64) {
    if let Some(l) = &mut f.latency_ns {
        l.median *= factor;
    }
    if let Some(m) = f
        .sweep
        .as_mut()
        .and_then(|s| s.drift_corrected_median_ns.as_mut())
    {
        *m *= factor;
    }
}

/// `n` hosts `node00`…, each figure ±3% by host and figure; host `slow`
/// (if any) with its governor at `powersave` and its figures 20–40% slower.
pub(crate) fn fleet_of(n: usize, slow: Option<usize>) -> Vec<Input> {
    let base = base();
    (0..n)
        .map(|h| {
            let mut r = base.clone();
            r.header.environment.hostname = format!("node{h:02}");
            r.header.started_at = format!("2026-03-01T10:{h:02}:00Z");
            for (i, f) in r.results.iter_mut().enumerate() {
                let mut factor = 1.0 + 0.03 * noise(h, i);
                if slow == Some(h) {
                    factor *= 1.3 + 0.1 * noise(h + 100, i);
                }
                scale(f, factor);
            }
            if slow == Some(h) {
                r.header.environment.frequency_governor = Some("powersave".into());
            }
            Input {
                source: format!("r-node{h:02}.json"),
                run_id: None,
                record: r,
            }
        })
        .collect()
}

pub(crate) fn build() -> BuildRecord {
    BuildRecord {
        version: "test".into(),
        commit: "unknown".into(),
        dirty: None,
        features: vec![],
    }
}

fn outliers(report: &FleetReport) -> Vec<&str> {
    report
        .classes
        .iter()
        .flat_map(|c| &c.hosts)
        .filter(|h| h.verdict == Verdict::Outlier)
        .map(|h| h.host.as_str())
        .collect()
}

#[test]
fn a_fleet_of_twenty_flags_the_one_mis_set_host_and_names_its_governor_first() {
    let mut hosts = fleet_of(20, Some(7));
    // Noise in another setting: the outlier shares a microcode with two
    // normal hosts, so it differs there too, but not alone.
    for (h, input) in hosts.iter_mut().enumerate() {
        let m = if [3, 7, 11].contains(&h) {
            "0xb"
        } else {
            "0xa"
        };
        input.record.header.environment.microcode = Some(m.into());
    }
    let report = fleet(hosts, None, build());
    assert_eq!(report.classes.len(), 1);
    let class = &report.classes[0];
    assert!(class.tested, "{:?}", class.not_tested);
    assert_eq!(class.hosts.len(), 20);
    assert_eq!(class.figures.len(), 12);
    assert_eq!(outliers(&report), vec!["node07"]);
    let host = &class.hosts[7];
    assert_eq!(host.direction.as_deref(), Some("slower"));
    assert!(
        host.shift.unwrap() > 1.2 && host.shift.unwrap() < 1.4,
        "{host:?}"
    );
    assert_eq!((host.slower, host.faster), (12, 0));
    let first = &host.differs[0];
    assert_eq!(first.setting, "frequency_governor");
    assert_eq!(
        (first.value.as_str(), first.class_value.as_str()),
        ("powersave", "none")
    );
    assert_eq!((first.outliers_differing, first.normal_differing), (1, 0));
    assert_eq!(first.hosts_with_class_value, 19);
    let micro = host
        .differs
        .iter()
        .find(|d| d.setting == "microcode")
        .unwrap();
    assert_eq!((micro.value.as_str(), micro.normal_differing), ("0xb", 2));
    assert_eq!(host.differs.len(), 2, "{:#?}", host.differs);
    // The normal hosts carry no list; every host has a ratio per figure.
    assert!(
        class
            .hosts
            .iter()
            .filter(|h| h.host != "node07")
            .all(|h| h.differs.is_empty())
    );
    assert!(
        class
            .hosts
            .iter()
            .all(|h| h.ratios.len() == 12 && h.figures == 12)
    );
    // The spread is the jitter's, not the outlier's.
    assert!(class.spread.unwrap() < 0.04, "{:?}", class.spread);
}

#[test]
fn a_kernel_command_line_token_on_the_outlier_alone_is_named_first() {
    let mut hosts = fleet_of(20, Some(12));
    for (h, input) in hosts.iter_mut().enumerate() {
        let env = &mut input.record.header.environment;
        env.frequency_governor = None;
        env.kernel_cmdline = Some(match h {
            12 => "ro quiet intel_idle.max_cstate=0 mitigations=auto".into(),
            // Two normal hosts are booted with another console.
            5 | 6 => "ro quiet console=ttyS0 mitigations=auto".into(),
            _ => "ro quiet mitigations=auto".into(),
        });
    }
    let report = fleet(hosts, None, build());
    assert_eq!(outliers(&report), vec!["node12"]);
    let differs = &report.classes[0].hosts[12].differs;
    assert_eq!(differs.len(), 1, "{differs:#?}");
    assert_eq!(differs[0].setting, "kernel_cmdline:intel_idle.max_cstate");
    assert_eq!(
        (differs[0].value.as_str(), differs[0].class_value.as_str()),
        ("0", "absent")
    );
}

#[test]
fn a_fleet_of_twenty_none_mis_set_flags_no_host() {
    let report = fleet(fleet_of(20, None), None, build());
    let class = &report.classes[0];
    assert!(class.tested);
    assert!(outliers(&report).is_empty(), "{:#?}", class.hosts);
    assert!(class.hosts.iter().all(|h| h.verdict == Verdict::Normal));
}

#[test]
fn two_cpu_models_are_two_classes_and_neither_half_is_an_outlier() {
    let mut hosts = fleet_of(20, None);
    for (h, input) in hosts.iter_mut().enumerate() {
        if h % 2 == 1 {
            input.record.header.environment.cpu_model = "Intel(R) Xeon(R) Gold 6338".into();
            for f in &mut input.record.results {
                scale(f, 1.5);
            }
        }
    }
    let report = fleet(hosts, None, build());
    assert_eq!(report.classes.len(), 2);
    let models: Vec<&str> = report
        .classes
        .iter()
        .map(|c| c.class.cpu_model.as_str())
        .collect();
    assert_eq!(models, ["AMD EPYC", "Intel(R) Xeon(R) Gold 6338"]);
    for c in &report.classes {
        assert_eq!(c.hosts.len(), 10);
        assert!(c.tested);
        assert_eq!(c.id, c.class.id());
    }
    assert!(outliers(&report).is_empty());
}

#[test]
fn older_runs_of_a_host_are_left_out_and_a_small_class_is_not_tested() {
    let mut hosts = fleet_of(2, None);
    let mut older = hosts[0].clone();
    older.source = "old.json".into();
    older.record.header.started_at = "2026-02-01T00:00:00Z".into();
    hosts.insert(0, older);
    let report = fleet(hosts.clone(), None, build());
    assert_eq!(report.runs_read, 3);
    assert_eq!(report.superseded.len(), 1);
    assert_eq!(report.superseded[0].source, "old.json");
    assert_eq!(report.superseded[0].by, "r-node00.json");
    let class = &report.classes[0];
    assert!(!class.tested);
    assert!(class.not_tested.as_deref().unwrap().contains("2 host(s)"));
    // --since leaves the older run out before anything else.
    let since = "2026-03-01T00:00:00Z".parse().ok();
    let report = fleet(hosts, since, build());
    assert!(report.superseded.is_empty());
}

#[test]
fn the_report_writes_back_as_it_reads() {
    let report = fleet(fleet_of(5, Some(1)), None, build());
    let text = serde_json::to_string_pretty(&report).unwrap() + "\n";
    let again: FleetReport = serde_json::from_str(&text).unwrap();
    crate::record::assert_writes_back("fleet", &again, &text);
    assert_eq!(again.schema, FLEET_SCHEMA);
}
