//! GitHub Actions workflow commands (`::error title=…::message`), which a
//! job's log turns into annotations on the run and the pull request:
//! `check` prints them on standard output when `GITHUB_ACTIONS=true` (the
//! runner sets it), one `::error` per figure and per whole-run reason the
//! check fails for, one `::warning` per condition worth a look that does
//! not fail it (a significant common shift within the machine's range, an
//! allowed placement change, runs from different hosts).
//!
//! Escaping, as GitHub's toolkit does (`toCommandValue`, `escapeData`,
//! `escapeProperty`): in the message `%` → `%25`, CR → `%0D`, LF → `%0A`;
//! in a property (the title) also `:` → `%3A` and `,` → `%2C`. Every string
//! from a report is first made safe ([`sanitise::text`]), so none forges a
//! command of its own.

use super::{figure_name, words};
use crate::output::sanitise;
use crate::record::check::CheckReport;

/// The environment variable GitHub's runner sets to `true`.
pub const GITHUB_ACTIONS: &str = "GITHUB_ACTIONS";

/// Whether `value` (of [`GITHUB_ACTIONS`]) asks for annotations.
pub fn wanted(value: Option<&str>) -> bool {
    value == Some("true")
}

/// A command's message, escaped.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A command's property value (its title), escaped.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One workflow command line: `::KIND title=TITLE::MESSAGE`.
fn command(kind: &str, title: &str, message: &str) -> String {
    format!(
        "::{kind} title={}::{}\n",
        escape_property(&sanitise::text(title)),
        escape_data(&sanitise::text(message))
    )
}

/// The annotations of a check: what fails it as errors, what is worth a
/// look as warnings; empty when there is nothing to say.
pub fn check(r: &CheckReport) -> String {
    let mut out = String::new();
    let title = |benchmark: &str, mode: &str, size: usize| {
        format!("ipcmark check: {} {}", benchmark, figure_name(mode, size))
    };
    for f in r.figures.iter().filter(|f| f.regressed) {
        out.push_str(&command(
            "error",
            &title(&f.benchmark, &f.mode, f.size_bytes),
            &words::regressed(f, r),
        ));
    }
    for l in r.lost.iter().filter(|l| !l.allowed) {
        out.push_str(&command(
            "error",
            &title(&l.benchmark, &l.mode, l.size_bytes),
            &words::lost(l),
        ));
    }
    if let Some(why) = words::run_moved(r) {
        out.push_str(&command(
            "error",
            "ipcmark check: the whole run moved",
            &why,
        ));
    }
    if let Some(why) = words::shift_within(r) {
        out.push_str(&command("warning", "ipcmark check: common shift", &why));
    }
    if let Some((why, fails)) = words::placement(r) {
        let kind = if fails { "error" } else { "warning" };
        out.push_str(&command(kind, "ipcmark check: placement", &why));
    }
    if let Some(why) = words::other_host(r) {
        out.push_str(&command("warning", "ipcmark check: hosts", &why));
    }
    out
}
