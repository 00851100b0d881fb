//! A report from elsewhere is another's text: its strings (hostname,
//! kernel, command line, warnings, errors) reach the terminal through
//! `show`, `history`, `compare` and `export`, and a spreadsheet through CSV.
//! None of them may carry a raw control character there (a title change, a
//! screen clear, a forged `warning:` line), and no CSV cell may start a
//! formula.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// Escape sequences a hostile report would carry: a window title, a screen
/// clear, the 8-bit CSI, a forged warning on a line of its own, a
/// right-to-left override.
const EVIL: &str = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}31m\nwarning: forged\r\u{202e}";

/// Characters that must never reach stdout from a report: every control
/// but the line breaks the page itself prints, and the bidi overrides.
fn raw_controls(out: &str) -> Vec<char> {
    out.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

fn poisoned(report: &mut Value) {
    for key in ["hostname", "kernel", "kernel_version", "cpu_model"] {
        report["environment"][key] = Value::String(format!("x{EVIL}"));
    }
    report["command_line"][2] = Value::String(format!("pipe{EVIL}"));
    report["warnings"] = serde_json::json!([
        {"kind": "other-load", "message": format!("busy{EVIL}")}
    ]);
    report["results"][0]["benchmark"] = Value::String("=HYPERLINK(\"http://x\",\"y\")".into());
}

#[test]
fn no_raw_control_character_from_a_report_reaches_stdout() {
    let _g = serial();
    let sb = Sandbox::new();
    let mut report = Run::new(&sb, &["run", "pipe"])
        .no_save()
        .json()
        .short()
        .ok()
        .report;
    poisoned(&mut report);
    let evil = sb.path("evil.json");
    std::fs::write(&evil, report.to_string()).unwrap();
    let (evil, db) = (evil.to_str().unwrap(), sb.path("h.sqlite"));
    let db = db.to_str().unwrap();

    Run::new(&sb, &["import", evil, "--db", db]).ok();
    for cmd in [
        vec!["history", "--db", db],
        vec!["show", "1", "--db", db],
        vec!["show", evil, "--db", db],
        vec!["compare", evil, "1", "--db", db],
        vec!["export", "1", "--format", "csv", "--db", db],
        vec!["export", "1", "--format", "json", "--db", db],
    ] {
        let out = sb.run(&cmd, LIMIT);
        let (o, e) = (stdout(&out), stderr(&out));
        assert!(out.status.code().is_some(), "{cmd:?} died: {e}");
        assert!(!o.is_empty(), "{cmd:?} printed nothing: {e}");
        assert_eq!(raw_controls(&o), Vec::<char>::new(), "{cmd:?}:\n{o}");
        assert_eq!(raw_controls(&e), Vec::<char>::new(), "{cmd:?} stderr:\n{e}");
        assert!(
            !o.lines().any(|l| l.starts_with("warning: forged")),
            "{cmd:?} forged a line:\n{o}"
        );
    }

    // The CSV's benchmark cell is text to a spreadsheet, never a formula.
    let out = sb.run(&["export", "1", "--format", "csv", "--db", db], LIMIT);
    let csv_text = stdout(&out);
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let first = reader.records().next().unwrap().unwrap();
    assert!(first[0].starts_with("'="), "{csv_text}");
    for row in reader.records() {
        for cell in row.unwrap().iter() {
            assert!(!cell.starts_with(['=', '+', '@']), "{cell}");
        }
    }
}
