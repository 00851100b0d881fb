//! Strings read from a report are another's text: a report file shared by
//! someone else, a run imported into the history. Its hostname, kernel,
//! command line, errors and warnings reach a terminal through `show`,
//! `history`, `compare`, `export` and `report`, and a spreadsheet through
//! CSV. Each reader passes them through here once, as it reads them, so a
//! string can neither drive the terminal (an escape sequence that retitles
//! the window, clears the screen or forges a `warning:` line) nor start a
//! spreadsheet formula.

use serde_json::Value;
use std::borrow::Cow;

/// What a character that could drive a terminal becomes.
pub const REPLACEMENT: char = '?';

/// Whether `c` may act on a terminal or reorder the text around it: the C0
/// and C1 controls (ESC, BEL, CR, LF, CSI U+009B …), DEL, and Unicode's
/// bidirectional overrides and isolates, which make a line read other
/// than it is.
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every character that could drive a terminal replaced by
/// [`REPLACEMENT`] (a tab or a line break too: one field stays one line).
pub fn text(s: &str) -> Cow<'_, str> {
    if s.chars().any(unsafe_char) {
        Cow::Owned(
            s.chars()
                .map(|c| if unsafe_char(c) { REPLACEMENT } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(s)
    }
}

/// Every string of a report read from elsewhere, and every key, made safe
/// by [`text`] in place.
pub fn report(v: &mut Value) {
    match v {
        Value::String(s) => {
            if let Cow::Owned(clean) = text(s) {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(report),
        Value::Object(map) => {
            if map.keys().any(|k| k.chars().any(unsafe_char)) {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (text(&k).into_owned(), v))
                    .collect();
            }
            map.values_mut().for_each(report);
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// A text cell of a CSV file: [`text`], and one that a spreadsheet would
/// read as a formula (beginning with `=`, `+`, `-`, `@`, or a tab or
/// carriage return before one) gets a leading `'`, as OWASP's CSV-injection
/// advice says, so that it is shown as text and never evaluated.
pub fn csv_cell(s: &str) -> String {
    let clean = text(s);
    if clean.starts_with(['=', '+', '-', '@']) {
        format!("'{clean}")
    } else {
        clean.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_line_breaks_become_visible_and_plain_text_is_untouched() {
        assert!(matches!(text("AMD EPYC 7763 µs"), Cow::Borrowed(_)));
        assert_eq!(text("\u{1b}]0;owned\u{7}"), "?]0;owned?");
        assert_eq!(text("ok\nwarning: forged"), "ok?warning: forged");
        assert_eq!(text("\u{9b}2J"), "?2J", "the 8-bit CSI");
        assert_eq!(text("a\u{202e}cba"), "a?cba", "a right-to-left override");
        assert_eq!(text("\r\t\u{7f}"), "???");
    }

    #[test]
    fn a_report_is_cleaned_at_every_depth_and_in_its_keys() {
        let mut v = serde_json::json!({
            "environment": {"hostname": "h\u{1b}[2J", "mitigations": {"x\u{1b}": "y"}},
            "results": [{"error": "e\u{7}", "latency_ns": {"median": 5.0}}],
            "complete": true
        });
        report(&mut v);
        assert_eq!(v["environment"]["hostname"], "h?[2J");
        assert_eq!(v["environment"]["mitigations"]["x?"], "y");
        assert_eq!(v["results"][0]["error"], "e?");
        assert_eq!(v["results"][0]["latency_ns"]["median"], 5.0);
        assert_eq!(v["complete"], true);
        assert!(!v.to_string().contains("\\u001b"), "{v}");
    }

    #[test]
    fn a_cell_that_would_be_a_formula_is_text() {
        assert_eq!(
            csv_cell("=HYPERLINK(\"http://x\",\"y\")"),
            "'=HYPERLINK(\"http://x\",\"y\")"
        );
        for s in ["+1", "-cmd", "@SUM(A1)"] {
            assert_eq!(csv_cell(s), format!("'{s}"));
        }
        assert_eq!(csv_cell("pipe"), "pipe");
        assert_eq!(csv_cell("a\u{1b}b"), "a?b");
    }
}
