//! `--preset`: a study's experiment as it was done, each printing the
//! study's table, and `list presets`. No test asserts a time.

use crate::oneway::{LIMIT, assert_oneway_ok};
use crate::util::*;
use serde_json::Value;
use std::time::Duration;

#[test]
fn a_preset_runs_its_columns_warm_and_cold_and_prints_the_studys_table() {
    let _g = serial();
    let sb = Sandbox::new();
    // The study's columns at two of its sizes, shortened.
    let ran = Run::new(&sb, &["run", "--preset", "qnx-table4"])
        .sizes("1,4K")
        .json()
        .short()
        .ok();
    let text = &ran.stdout;
    for label in [
        "pipe",
        "FIFO",
        "message",
        "message (socket)",
        "no cache",
        "proxy",
        "shm + sem + memcpy",
    ] {
        assert!(text.contains(label), "column {label} missing:\n{text}");
    }
    assert!(text.contains("Table 4"), "{text}");
    // QNX proxies carried at most 100 B: signal-sigqueue's one 8-byte
    // figure stands for the rows up to that, never for the rows past it.
    let row = |bytes: &str| {
        text.lines()
            .find(|l| {
                l.trim_start_matches(['│', ' '])
                    .starts_with(&format!("{bytes} ┆"))
            })
            .unwrap_or_else(|| panic!("no row {bytes}:\n{text}"))
    };
    assert!(!row("1").contains("> 100 B"), "{text}");
    assert!(!row("100").contains("> 100 B"), "{text}");
    assert!(row("4096").contains("> 100 B"), "{text}");
    assert!(text.contains("proxy: the study's mechanism carried at most 100 B"));
    let report = &ran.report;
    let vm: Vec<&Value> = results(report)
        .iter()
        .filter(|r| r["benchmark"] == "vm-copy")
        .collect();
    assert_eq!(vm.len(), 4, "vm-copy warm and cold at two sizes: {vm:?}");
    let cold: Vec<&&Value> = vm
        .iter()
        .filter(|r| r.get("cold_region_bytes").is_some())
        .collect();
    assert_eq!(cold.len(), 2);
    assert!(cold[0]["cold_region_bytes"].as_u64().unwrap() >= 8 << 20);
    for r in &vm {
        assert_eq!(r["status"], "ok", "{r}");
    }
    let errors = schema_errors(RUN_SCHEMA, report);
    assert!(errors.is_empty(), "{errors:#?}");

    let listed = sb.run(&["list", "presets"], Duration::from_secs(10));
    assert!(
        stdout(&listed).contains("qnx-table4"),
        "{}",
        stdout(&listed)
    );
    refused_all(
        &sb,
        &[
            (&["run", "--preset", "nope"][..], "unknown preset 'nope'"),
            (
                &["run", "--preset", "qnx-table4", "pipe"][..],
                "chooses its own mechanisms",
            ),
        ],
        None,
    );
}

#[test]
fn mq_article_preset_in_short_form_prints_every_column() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["run", "--preset", "mq-article"])
        .quick()
        .sizes("8,64,16384")
        .args(&["--messages", "6", "--window", "3"])
        .json()
        .schema()
        .limit(LIMIT)
        .ok();
    let report = &ran.report;
    let rs = results(report);
    // Two columns (sporadic, saturated) × three sizes.
    assert_eq!(rs.len(), 6, "{rs:#?}");
    // Like the article's desktop, with the CPUs' idle states: no request held.
    assert!(
        report["settings"]["cpu_latency_us"].is_null(),
        "{}",
        report["settings"]
    );
    let ok: Vec<&Value> = rs.iter().filter(|r| r["status"] == "ok").collect();
    assert_eq!(ok.iter().filter(|r| r["pacing"] == "sporadic").count(), 2);
    assert_eq!(ok.iter().filter(|r| r["pacing"] == "saturated").count(), 2);
    for r in &ok {
        assert_oneway_ok(r, r["pacing"].as_str().unwrap(), 6, 3);
    }
    // 16384 B is beyond fs.mqueue.msgsize_max here (8192): skipped, not failed.
    let msgsize_max: usize = std::fs::read_to_string("/proc/sys/fs/mqueue/msgsize_max")
        .map_or(8192, |s| s.trim().parse().unwrap());
    if msgsize_max < 16384 {
        assert_eq!(
            rs.iter().filter(|r| r["status"] == "skipped").count(),
            2,
            "{rs:#?}"
        );
    }
    let text = &ran.stdout;
    for needle in [
        "Blaess, 2011",
        "sporadic",
        "saturated",
        "posix-mq --mode oneway --interval 100ms",
        "differences from the study",
    ] {
        assert!(text.contains(needle), "output lacks {needle}:\n{text}");
    }
    // The study's table: one row per size, min / mean / max in each column.
    let row8 = text
        .lines()
        .find(|l| l.trim_start_matches(['│', ' ']).starts_with("8 ┆"))
        .unwrap_or_else(|| panic!("no 8-byte row:\n{text}"));
    assert_eq!(row8.matches(" / ").count(), 4, "{row8}");
    // SCHED_FIFO 40 when permitted, otherwise a warning and SCHED_OTHER.
    let policy = ok[0]["sender_sched_policy"].as_str().unwrap();
    if report["settings"]["rt_priority"].as_i64() == Some(40) {
        assert_eq!(policy, "SCHED_FIFO");
    } else {
        assert!(ran.stderr.contains("SCHED_FIFO 40"), "{}", ran.stderr);
    }
    ran.assert_released(&sb);
}

#[test]
fn presets_are_listed_with_their_study() {
    let sb = Sandbox::new();
    let out = sb.run(&["list", "presets"], LIMIT);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains("mq-article") && text.contains("Blaess"),
        "{text}"
    );
    assert!(text.contains("qnx-table4"));
}
