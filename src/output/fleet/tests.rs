use super::*;
use crate::analysis::fleet::fleet;
use crate::analysis::fleet::tests::{build, fleet_of};

#[test]
fn the_page_has_a_table_per_class_and_each_outlier_with_its_settings() {
    let mut hosts = fleet_of(20, Some(7));
    hosts[3].record.header.environment.hostname = "evil\x1b[2J".into();
    let report = fleet(hosts, None, build());
    let page = render(&report);
    assert!(page.starts_with("fleet: 20 host(s) in 1 class(es) of machine, from 20 run(s)"));
    let id = &report.classes[0].id;
    assert!(
        page.contains(&format!("class {id}: AMD EPYC · 2 CPUs · ")),
        "{page}"
    );
    assert!(page.contains("20 host(s), 12 figure(s), host-to-host spread ±"));
    assert!(page.contains("OUTLIER (slower)"));
    assert_eq!(page.matches("OUTLIER").count(), 1);
    assert!(page.contains("node07 is 3"), "{page}");
    assert!(page.contains("on that side in 12 of 12 figures"));
    assert!(
        page.contains(
            "  frequency_governor: powersave (class: none, 19 host(s)) — this host alone\n"
        )
    );
    // A host's name from a report is made safe.
    assert!(!page.contains('\x1b'));
    assert!(!page.contains("no outlier test"));
}

#[test]
fn a_fleet_without_outliers_or_too_small_says_so() {
    let page = render(&fleet(fleet_of(6, None), None, build()));
    assert!(page.contains("no outlier: every host is within the class's spread"));
    let page = render(&fleet(fleet_of(2, Some(1)), None, build()));
    assert!(page.contains("no outlier test: 2 host(s): the outlier test needs 3 or more"));
    assert!(!page.contains("OUTLIER"));
}

#[test]
fn alignment_and_numbers_read_as_words() {
    assert_eq!(percent(1.31), "+31.0%");
    assert_eq!(percent(0.958), "−4.2%");
    assert_eq!(
        (percent(0.9999), signed(-0.04)),
        ("+0.0%".into(), "0.0".into())
    );
    assert_eq!(spread(0.0198), "±2.0%");
    assert_eq!(
        (signed(3.54), signed(-0.44)),
        ("3.5".to_string(), "−0.4".to_string())
    );
    let d = |o, n| SettingDiffRecord {
        setting: "x".into(),
        value: "a".into(),
        class_value: "b".into(),
        hosts_with_class_value: 3,
        outliers_differing: o,
        normal_differing: n,
    };
    assert_eq!(alignment(&d(1, 0)), "this host alone");
    assert_eq!(alignment(&d(2, 0)), "the 2 outliers alone");
    assert_eq!(alignment(&d(1, 1)), "also 1 normal host");
    assert_eq!(alignment(&d(2, 3)), "also 3 normal hosts");
}

#[test]
fn the_turns_page_says_per_rank_what_came_back_and_where_it_was_kept() {
    let turn = |rank, figures, stored| Turn {
        rank,
        host: format!("node{rank}"),
        stored,
        figures,
    };
    let turns = [
        turn(0, Some((1, 0)), Ok(7)),
        turn(1, Some((3, 1)), Err("not saved (--no-save)".into())),
        turn(2, None, Err("its report is not JSON".into())),
    ];
    let page = render_turns(&turns, 2, Some(std::path::Path::new("/h.db")));
    assert!(page.contains("fleet run: 3 ranks on 2 hosts, measured one after the other"));
    assert!(page.contains("rank 0   node0"), "{page}");
    assert!(page.contains("1 figure measured; run 7"), "{page}");
    assert!(page.contains("3 figures measured, 1 failed; not saved (--no-save)"));
    assert!(page.contains("no report; its report is not JSON"));
    assert!(page.ends_with("history: /h.db (ipcmark fleet --db /h.db)\n"));
    assert!(!render_turns(&turns[..1], 1, None).contains("history:"));
}
