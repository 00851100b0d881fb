//! The cells every table shares: sizes, times in µs and ns, percentages, a
//! table in ipcmark's style fitted to the terminal, right-aligned columns,
//! the row of a figure that has none, and mechanism names once per group.

use super::figure::{Measured, Outcome};
// Shared with the warnings' words (`analysis`), which output may not be.
use crate::record::FigureRecord;
use crate::record::run::Latency;
pub use crate::record::units::{format_size, percent};
use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table, presets};
use std::ops::Range;

/// The columns a page's header lines keep within (the default page fits 120).
pub const PAGE_WIDTH: usize = 120;

/// A CPU's model name without the marks and words that say nothing of it:
/// "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz" → "Intel Xeon Gold 6248 @ 2.50GHz".
pub fn short_cpu_name(model: &str) -> String {
    let mut s = model.to_string();
    for mark in ["(R)", "(r)", "(TM)", "(tm)"] {
        s = s.replace(mark, "");
    }
    s.split_whitespace()
        .filter(|w| !matches!(*w, "CPU" | "Processor" | "processor"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` in lines of at most `width` columns, broken at spaces, each line
/// after the first indented by two.
pub fn wrap(text: &str, width: usize) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let indent = if lines.is_empty() { 0 } else { 2 };
        let used = line.chars().count();
        if used > indent && used + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
            line.push_str("  ");
        } else if used > indent {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines.join("\n")
}

/// `fields` joined by " | " on lines of at most `width` columns: a field
/// that would pass the edge starts the next line (indented by two), and a
/// field wider than a whole line is cut with "…", so no machine's names
/// (a long CPU model, a distribution's kernel release) widen the page.
pub fn fit_fields(fields: &[String], width: usize) -> String {
    let cut = |f: &str, room: usize| -> String {
        if f.chars().count() <= room {
            f.to_string()
        } else {
            let mut c: String = f.chars().take(room.saturating_sub(1)).collect();
            c.push('…');
            c
        }
    };
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for f in fields {
        if line.is_empty() {
            let indent = if lines.is_empty() { "" } else { "  " };
            line = format!("{indent}{}", cut(f, width - indent.len()));
        } else if line.chars().count() + 3 + f.chars().count() <= width {
            line.push_str(" | ");
            line.push_str(f);
        } else {
            lines.push(std::mem::take(&mut line));
            line = format!("  {}", cut(f, width - 2));
        }
    }
    lines.push(line);
    lines.join("\n")
}

/// A figure's size cell: its bytes, or "notify" for a notification that
/// carries no payload.
pub fn size_cell(bytes: usize) -> String {
    match bytes {
        0 => "notify".into(),
        n => format_size(n),
    }
}

/// A number with as many decimals as a reader needs: 0.85, 42.7, 1234
/// (nanoseconds, rates, and µs through [`us`]).
pub fn num(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// Nanoseconds shown in µs, as [`num`] writes them: 0.85, 42.7, 1234.
pub fn us(ns: f64) -> String {
    num(ns / 1000.0)
}

/// Nanoseconds with the unit that reads best, for prose: "656 ns",
/// "12.1 µs", "8.07 ms".
pub fn duration(ns: f64) -> String {
    if ns.abs() >= 1e6 {
        format!("{} ms", num(ns / 1e6))
    } else if ns.abs() >= 1e4 {
        format!("{} µs", num(ns / 1e3))
    } else {
        format!("{} ns", num(ns))
    }
}

/// Wraps a table to the terminal's width, or to 100 columns when stdout is not
/// the user's terminal (comfy-table would otherwise never wrap).
pub fn fit_width(t: &mut Table) {
    let own = crate::output::terminal::is_users_terminal(&std::io::stdout());
    let w = t.width().filter(|_| own).unwrap_or(100);
    t.set_width(w.max(72));
}

/// A table in ipcmark's style with this header, fitted to the terminal.
pub fn new_table<T: Into<comfy_table::Cell>>(header: Vec<T>) -> Table {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header);
    fit_width(&mut t);
    t
}

/// Right-aligns the columns `cols` (numbers) of `t`.
pub fn align_right(t: &mut Table, cols: Range<usize>) {
    for col in cols {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// Keeps column `col` as wide as its content (ids stay whole; other
/// columns, such as the notes, wrap instead).
pub fn whole_column(t: &mut Table, col: usize) {
    if let Some(c) = t.column_mut(col) {
        c.set_constraint(ColumnConstraint::ContentWidth);
    }
}

/// The cells of a row without a figure: a dash in each of `n` columns, then
/// why (skipped, failed, or measured but without its mode's `kind` record).
pub fn no_figure(n: usize, outcome: Outcome, kind: &str) -> Vec<String> {
    let why = match outcome {
        Outcome::Ok(_) => format!("FAILED: no {kind} record"),
        other => unmeasured(other),
    };
    let mut cells = vec!["-".to_string(); n];
    cells.push(why);
    cells
}

/// The p99 of `l` written by `fmt`, or "< res" where it fell among single
/// times at or below zero once the clock read was subtracted.
pub fn p99_cell(l: Option<&Latency>, fmt: impl Fn(f64) -> String) -> String {
    l.and_then(|l| l.p99)
        .map_or_else(|| "< res".to_string(), fmt)
}

/// Why a row's centre (`centre`: the mean it shows, of its samples or of
/// its messages) is above the p99 of its `count` single times `l`, which are
/// `single` ("operations", "round trips"); `None`
/// when it is not. A row never shows a centre above its own p99 without
/// saying why, and the why is read from the figures: the single times'
/// own mean above their p99 too is a heavy tail (the slowest 1% hold
/// enough time to lift a mean past p99); their mean at or below it means
/// the samples held slow stretches that the single times missed.
pub fn centre_above_p99(
    centre: f64,
    l: Option<&Latency>,
    count: u64,
    single: &str,
) -> Option<String> {
    let l = l?;
    let Some(p99) = l.p99 else {
        // 99% of the single times at or below zero, yet a positive centre.
        return (centre > 0.0).then(|| {
            format!(
                "mean above p99: {} of {count} single {single} were at or below zero once the clock read was subtracted",
                l.at_or_below_zero.unwrap_or(0)
            )
        });
    };
    if centre <= p99 {
        return None;
    }
    Some(if l.single_mean > p99 {
        format!(
            "mean above p99: a heavy tail, the mean of the single {single} ({}) is above their p99 too (max {})",
            duration(l.single_mean),
            // Resolved wherever p99 is.
            duration(l.max.unwrap_or(p99))
        )
    } else {
        format!(
            "mean above p99: the samples held slow stretches that the single {single} missed (their mean {})",
            duration(l.single_mean)
        )
    })
}

/// Why a figure has no number, as its notes cell says it: skipped, failed,
/// or below the clock's resolution (empty for a measured figure).
pub fn unmeasured(outcome: Outcome) -> String {
    match outcome {
        Outcome::Ok(_) => String::new(),
        Outcome::Skipped(why) => format!("skipped: {why}"),
        Outcome::Failed(why) => format!("FAILED: {why}"),
        Outcome::BelowResolution(why) => format!("below the clock's resolution: {why}"),
    }
}

/// Each result's mechanism id, or "" where it repeats the row above: the
/// name once per group of sizes, so the eye finds each mechanism's block.
pub fn group_names(results: &[FigureRecord]) -> impl Iterator<Item = &str> + '_ {
    let mut previous: Option<&str> = None;
    results.iter().map(move |r| {
        let id = r.benchmark.as_str();
        let name = if previous == Some(id) { "" } else { id };
        previous = Some(id);
        name
    })
}

/// What makes a figure less certain: samples spread widely, or a median not
/// known to the precision asked for.
pub fn quality_notes(m: &Measured) -> Vec<String> {
    let mut notes = Vec::new();
    if m.summary.relative_range() > 0.25 {
        notes.push(format!("spread {:.0}%", m.summary.relative_range() * 100.0));
    }
    if let Some(p) = m.precision.filter(|p| !p.met)
        && let Some(achieved) = p.achieved
    {
        let over = match p.basis.as_str() {
            "passes" => format!("over {} passes", p.units),
            _ => format!("over {} samples", p.units),
        };
        notes.push(format!(
            "±{}% {over} (target {}%)",
            percent(achieved),
            percent(p.target)
        ));
    }
    notes
}

/// The notes of the row of a rendered table whose first cell is `first`,
/// its wrapped lines joined by spaces (for tests of what a row says).
#[cfg(test)]
pub fn notes_of(table: &str, first: &str) -> String {
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('│')
            .split('┆')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let mut lines = table.lines().filter(|l| l.starts_with('│'));
    let mut notes = Vec::new();
    for l in lines.by_ref() {
        let c = cells(l);
        if c[0] == first {
            notes.push(c[c.len() - 1].clone());
            break;
        }
    }
    for l in lines {
        let c = cells(l);
        if !c[0].is_empty() {
            break;
        }
        notes.push(c[c.len() - 1].clone());
    }
    notes.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_names_lose_their_marks() {
        assert_eq!(short_cpu_name("Intel(R) Xeon(R) Processor"), "Intel Xeon");
        assert_eq!(
            short_cpu_name("Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"),
            "Intel Xeon Gold 6248 @ 2.50GHz"
        );
        assert_eq!(short_cpu_name("AMD EPYC"), "AMD EPYC");
        assert_eq!(
            short_cpu_name("AMD Ryzen 9 7950X 16-Core Processor"),
            "AMD Ryzen 9 7950X 16-Core"
        );
    }

    #[test]
    fn header_fields_wrap_within_the_width_and_keep_every_field() {
        let fields: Vec<String> = ["ipcmark 0.1.0", "Linux 6.1.0-28-cloud-amd64 (PREEMPT)"]
            .into_iter()
            .map(String::from)
            .chain(std::iter::once("x".repeat(200)))
            .chain(["2 CPUs", "virt: kvm"].map(String::from))
            .collect();
        let out = fit_fields(&fields, 60);
        assert!(out.lines().all(|l| l.chars().count() <= 60), "{out}");
        assert!(out.lines().count() >= 3, "{out}");
        assert!(out.starts_with("ipcmark 0.1.0 | Linux 6.1.0-28-cloud-amd64 (PREEMPT)\n"));
        assert!(out.contains('…'), "the over-long field is cut: {out}");
        assert!(out.ends_with("  2 CPUs | virt: kvm"), "{out}");
        // Fields that fit stay on one line.
        assert_eq!(fit_fields(&["a".into(), "b".into()], 60), "a | b");
    }

    #[test]
    fn sizes_read_back() {
        assert_eq!(format_size(1), "1");
        assert_eq!(format_size(64), "64");
        assert_eq!(format_size(4096), "4K");
        assert_eq!(format_size(65536), "64K");
        assert_eq!(format_size(1 << 20), "1M");
        assert_eq!(format_size(1500), "1500");
        assert_eq!(size_cell(0), "notify");
    }

    #[test]
    fn percentages_use_the_digits_they_need() {
        assert_eq!(percent(0.02), "2");
        assert_eq!(percent(0.075), "7.5");
        assert_eq!(percent(0.00001), "0.001");
        assert_eq!(percent(0.279), "27.9");
    }

    #[test]
    fn a_centre_above_an_unresolved_p99_says_so() {
        let mut h = crate::stats::LatencyHistogram::new();
        (0..100).for_each(|_| h.record_ns(-1.0));
        h.record_ns(50.0);
        let p = h.percentiles().unwrap();
        let l = Latency {
            median: 5.0,
            mean: 5.0,
            stddev: 0.0,
            median_of: "batch_means".into(),
            percentiles_of: "single_operations".into(),
            single_mean: p.mean,
            min: p.resolved(p.min).map(|v| v as f64),
            max: p.resolved(p.max).map(|v| v as f64),
            p50: p.resolved(p.p50).map(|v| v as f64),
            p90: p.resolved(p.p90).map(|v| v as f64),
            p99: p.resolved(p.p99).map(|v| v as f64),
            p999: p.resolved(p.p999).map(|v| v as f64),
            at_or_below_zero: Some(p.at_or_below_zero),
        };
        let why = centre_above_p99(5.0, Some(&l), p.count, "operations").unwrap();
        assert!(
            why.contains("100 of 101 single operations were at or below zero"),
            "{why}"
        );
        assert_eq!(
            centre_above_p99(-1.0, Some(&l), p.count, "operations"),
            None
        );
    }

    #[test]
    fn numbers_read_back() {
        assert_eq!(num(0.854), "0.85");
        assert_eq!(num(42.74), "42.7");
        assert_eq!(num(1234.4), "1234");
        assert_eq!(us(854.0), "0.85");
        assert_eq!(us(42_740.0), "42.7");
        assert_eq!(us(1_234_400.0), "1234");
        assert_eq!(duration(656.4), "656 ns");
        assert_eq!(duration(12_066.0), "12.1 µs");
        assert_eq!(duration(8_065_023.0), "8.07 ms");
    }
}
