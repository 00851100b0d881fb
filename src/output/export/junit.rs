//! JUnit XML, what CI systems show as test results (GitHub's test
//! reporters, GitLab's `artifacts:reports:junit`, Jenkins): one
//! `<testcase>` per figure (`classname` the benchmark, `name` the figure:
//! its mode and size), a `<failure>` where it fails, `<skipped>` where it
//! was not judged, and, for `check`, a case for the whole run's common
//! shift and one for the placement where they apply. Written by hand: five
//! entities and the characters XML 1.0 forbids are the whole of escaping,
//! and a crate would add nothing a test here does not check.

use super::{figure_name, words};
use crate::output::sanitise;
use crate::record::check::CheckReport;
use crate::record::compare::CompareReport;
use std::fmt::Write;

/// `s` as XML 1.0 text or attribute value: what could drive a terminal or
/// reorder the text ([`sanitise::text`]: XML 1.0 forbids most control
/// characters anyway), and the noncharacters U+FFFE and U+FFFF, become
/// `?`; `&`, `<`, `>`, `"` and `'` become entities.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in sanitise::text(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\u{fffe}' | '\u{ffff}' => out.push(sanitise::REPLACEMENT),
            c => out.push(c),
        }
    }
    out
}

/// How one case ended.
enum Outcome {
    Passed,
    /// Its message and the text inside the element.
    Failed(String, String),
    Skipped(String),
}

struct Case {
    classname: String,
    name: String,
    outcome: Outcome,
}

impl Case {
    fn new(classname: &str, name: String, outcome: Outcome) -> Case {
        Case {
            classname: classname.to_string(),
            name,
            outcome,
        }
    }
}

/// The document: one suite named `suite` holding `cases`, with `properties`.
fn document(suite: &str, properties: &[(&str, String)], cases: &[Case]) -> String {
    let failures = cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Failed(..)))
        .count();
    let skipped = cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Skipped(_)))
        .count();
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\"",
        cases.len()
    );
    let suite = escape(suite);
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(x, "<testsuites name=\"{suite}\" {counts}>");
    let _ = writeln!(x, "  <testsuite name=\"{suite}\" {counts}>");
    if !properties.is_empty() {
        x.push_str("    <properties>\n");
        for (name, value) in properties {
            let _ = writeln!(
                x,
                "      <property name=\"{}\" value=\"{}\"/>",
                escape(name),
                escape(value)
            );
        }
        x.push_str("    </properties>\n");
    }
    for c in cases {
        let open = format!(
            "    <testcase classname=\"{}\" name=\"{}\"",
            escape(&c.classname),
            escape(&c.name)
        );
        match &c.outcome {
            Outcome::Passed => {
                let _ = writeln!(x, "{open}/>");
            }
            Outcome::Failed(message, text) => {
                let _ = writeln!(x, "{open}>");
                let failure = format!(
                    "      <failure message=\"{}\" type=\"ipcmark\"",
                    escape(message)
                );
                let _ = match text.is_empty() {
                    true => writeln!(x, "{failure}/>"),
                    false => writeln!(x, "{failure}>{}</failure>", escape(text)),
                };
                x.push_str("    </testcase>\n");
            }
            Outcome::Skipped(message) => {
                let _ = writeln!(x, "{open}>");
                let _ = writeln!(x, "      <skipped message=\"{}\"/>", escape(message));
                x.push_str("    </testcase>\n");
            }
        }
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

/// `ipcmark check`'s verdicts: a case per figure both runs measured (a
/// failure where it regressed), per figure the baseline measured and the
/// run lost (a failure, or skipped where a flag allowed it), per figure
/// only one side has (skipped), and, where they apply, the whole run's
/// common shift (a failure beyond the machine's range) and the placement
/// (a failure where it differs and that was not allowed).
pub fn check(r: &CheckReport) -> String {
    let mut cases = Vec::new();
    for f in &r.figures {
        let outcome = match f.regressed {
            true => Outcome::Failed(
                words::regressed(f, r),
                format!(
                    "baseline {:.1} ns, run {:.1} ns, change {:+.2}%{}",
                    f.baseline_ns,
                    f.run_ns,
                    f.change * 100.0,
                    f.beyond_shift.map_or(String::new(), |b| format!(
                        ", beyond the common shift {:+.2}%",
                        b * 100.0
                    ))
                ),
            ),
            false => Outcome::Passed,
        };
        cases.push(Case::new(
            &f.benchmark,
            figure_name(&f.mode, f.size_bytes),
            outcome,
        ));
    }
    for l in &r.lost {
        let outcome = match l.allowed {
            true => Outcome::Skipped(words::lost(l)),
            false => Outcome::Failed(words::lost(l), String::new()),
        };
        cases.push(Case::new(
            &l.benchmark,
            figure_name(&l.mode, l.size_bytes),
            outcome,
        ));
    }
    for u in r.unmatched.iter().filter(|u| !words::is_lost(u, r)) {
        cases.push(Case::new(
            &u.benchmark,
            figure_name(&u.mode, u.size_bytes),
            Outcome::Skipped(format!("not checked: {}", sanitise::text(&u.why))),
        ));
    }
    if r.common_shift.is_some() && r.shift_bound.is_some() {
        let outcome = match words::run_moved(r) {
            Some(why) => Outcome::Failed(why, String::new()),
            None => Outcome::Passed,
        };
        cases.push(Case::new("ipcmark", "common shift".into(), outcome));
    }
    if let Some((why, fails)) = words::placement(r) {
        let outcome = match fails {
            true => Outcome::Failed(why, String::new()),
            false => Outcome::Passed,
        };
        cases.push(Case::new("ipcmark", "placement".into(), outcome));
    }
    let properties = [
        ("baseline", r.baseline.path.clone()),
        ("run", r.run.path.clone()),
        ("max_regression", r.max_regression.to_string()),
        ("alpha", r.alpha.to_string()),
        ("passed", r.passed.to_string()),
    ];
    document("ipcmark check", &properties, &cases)
}

/// `ipcmark compare`'s verdicts: a case per figure both runs measured, a
/// failure where compare calls it significantly slower (beyond the common
/// shift where there is one: compare has no threshold, `check` is the
/// gate), and a skipped case per figure only one side measured.
pub fn compare(r: &CompareReport) -> String {
    let mut cases = Vec::new();
    for c in &r.comparisons {
        let outcome = match words::compare_slower(c) {
            true => Outcome::Failed(words::compare_slower_text(c), String::new()),
            false => Outcome::Passed,
        };
        cases.push(Case::new(
            &c.benchmark,
            figure_name(&c.mode, c.size_bytes),
            outcome,
        ));
    }
    for u in &r.unmatched {
        cases.push(Case::new(
            &u.benchmark,
            figure_name(&u.mode, u.size_bytes),
            Outcome::Skipped(format!("not compared: {}", sanitise::text(&u.why))),
        ));
    }
    let properties = [
        ("a", r.a.path.clone()),
        ("b", r.b.path.clone()),
        ("alpha", r.alpha.to_string()),
    ];
    document("ipcmark compare", &properties, &cases)
}
