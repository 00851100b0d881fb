//! The terminal tables: one row per mechanism × size, one per operation benchmark.

use crate::engine::measure::Measurement;
use crate::engine::models::oneway::OneWayFacts;
use crate::engine::run::figure::{FigureResult, Mode, Outcome};
use crate::presets::ColumnMode;
use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table, presets};

/// Human form of a byte count: 64, 4K, 1M.
pub fn format_size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}M", bytes >> 20)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{}K", bytes >> 10)
    } else {
        bytes.to_string()
    }
}

fn us(ns: f64) -> String {
    let v = ns / 1000.0;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Wraps a table to the terminal's width, or to 100 columns when stdout is not
/// a terminal (comfy-table would otherwise never wrap).
pub fn fit_width(t: &mut Table) {
    let w = t.width().unwrap_or(100);
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

/// The cells of a row without a figure: a dash in each of `n` columns, then
/// why (skipped, failed, or measured but without its mode's `kind` record).
fn no_figure(n: usize, outcome: &Outcome, kind: &str) -> Vec<String> {
    let why = match outcome {
        Outcome::Skipped(why) => format!("skipped: {why}"),
        Outcome::Failed(why) => format!("FAILED: {why}"),
        Outcome::Ok(_) => format!("FAILED: no {kind} record"),
    };
    let mut cells = vec!["-".to_string(); n];
    cells.push(why);
    cells
}

/// Each result's mechanism id, or "" where it repeats the row above: the
/// name once per group of sizes, so the eye finds each mechanism's block.
fn group_names(results: &[FigureResult]) -> impl Iterator<Item = &'static str> + '_ {
    let mut previous: Option<&str> = None;
    results.iter().map(move |r| {
        let name = if previous == Some(r.id) { "" } else { r.id };
        previous = Some(r.id);
        name
    })
}

/// Renders results as a table that fits an 80-column terminal.
pub fn render(results: &[FigureResult]) -> String {
    let mut t = new_table(vec![
        "mechanism",
        "size",
        "one-way µs",
        "p99 µs",
        "MB/s",
        "notes",
    ]);
    for (r, name) in results.iter().zip(group_names(results)) {
        let (median, p99, mbps, notes) = match &r.outcome {
            Outcome::Ok(m) => {
                let med = m.summary.median;
                let mbps = if r.size > 0 && med > 0.0 {
                    let v = r.size as f64 / med * 1e3;
                    if v < 10.0 {
                        format!("{v:.1}")
                    } else {
                        format!("{v:.0}")
                    }
                } else {
                    "-".into()
                };
                let mut notes = quality_notes(m);
                if let Some(bytes) = r.cold_region {
                    notes.push(format!("cold ({} region)", format_size(bytes)));
                }
                notes.extend(r.note.clone());
                (us(med), us(m.latency.p99 as f64), mbps, notes.join("; "))
            }
            Outcome::Skipped(why) => (
                "-".into(),
                "-".into(),
                "-".into(),
                format!("skipped: {why}"),
            ),
            Outcome::Failed(why) => ("-".into(), "-".into(), "-".into(), format!("FAILED: {why}")),
        };
        let size = match r.size {
            0 => "notify".into(),
            n => format_size(n),
        };
        t.add_row(vec![name.to_string(), size, median, p99, mbps, notes]);
    }
    for col in 1..5 {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}

/// What the columns of [`render_stream`] mean.
pub const STREAM_FOOTNOTE: &str = "stream: the client sends back to back, the peer receives and checks every sequence number; MB/s (10^6 B/s) and msg/s = received ÷ the receiver's clock window, its loop overhead subtracted, median of samples; CPU µs/msg = getrusage user + system time of each side over the timed part ÷ its messages (a busy-waiting side shows its spinning); loss = 1 − received ÷ sent (lossy channels only)";

/// A rate as short as it reads: 0.85, 42.7, 1234.
fn rate(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// Renders stream results (mode `stream`): one row per mechanism × size.
pub fn render_stream(results: &[FigureResult]) -> String {
    let mut t = new_table(vec![
        "mechanism",
        "size",
        "MB/s",
        "msg/s",
        "CPU µs/msg send",
        "CPU µs/msg recv",
        "loss",
        "notes",
    ]);
    for (r, name) in results.iter().zip(group_names(results)) {
        let dash = || "-".to_string();
        let mut cells = match (&r.outcome, &r.stream()) {
            (Outcome::Ok(m), Some(f)) => {
                let mut notes = Vec::new();
                if m.summary.relative_range() > 0.25 {
                    notes.push(format!("spread {:.0}%", m.summary.relative_range() * 100.0));
                }
                if let Some(bytes) = r.cold_region {
                    notes.push(format!("cold ({} region)", format_size(bytes)));
                }
                notes.extend(r.note.clone());
                let loss = if f.lossy {
                    format!("{:.1}%", f.loss_ratio * 100.0)
                } else {
                    dash()
                };
                vec![
                    rate(f.bytes_per_s / 1e6),
                    format!("{:.0}", f.messages_per_s),
                    us(f.cpu_ns_per_message.sender),
                    us(f.cpu_ns_per_message.receiver),
                    loss,
                    notes.join("; "),
                ]
            }
            (outcome, _) => no_figure(5, outcome, "stream"),
        };
        let size = match r.size {
            0 => "notify".into(),
            n => format_size(n),
        };
        cells.splice(0..0, [name.to_string(), size]);
        t.add_row(cells);
    }
    for col in 1..7 {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    if let Some(c) = t.column_mut(0) {
        c.set_constraint(ColumnConstraint::ContentWidth);
    }
    t.to_string()
}

/// What the columns of [`render_ops`] mean.
pub const OPS_FOOTNOTE: &str = "ns = batch time / operations (÷ events per op where the notes say so), loop overhead and any baseline subtracted; median of samples; p99 of single operations; system calls each operation was proven to make (seccomp probe; none = no kernel entry); MB/s = bytes / ns per op (10^6 B/s)";

/// Nanoseconds with as many decimals as a reader needs: 0.85, 42.7, 1234.
fn ns(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// The system calls a result proved, for the table: "open + close", "none".
fn proven_calls(r: &FigureResult) -> String {
    let Some(proof) = &r.proof() else {
        return "-".into();
    };
    let must: Vec<String> = proof
        .kernel_calls
        .iter()
        .filter(|k| k.must_enter)
        .map(|k| match k.entered {
            Some(true) => k.call.to_string(),
            Some(false) => format!("{} (not made)", k.call),
            None => format!("{} (unproven)", k.call),
        })
        .collect();
    if must.is_empty() {
        let any_entered = proof.kernel_calls.iter().any(|k| k.entered == Some(true));
        if any_entered { "-" } else { "none" }.to_string()
    } else {
        must.join(" + ")
    }
}

/// What makes a figure less certain: samples spread widely, or a median not
/// known to the precision asked for.
fn quality_notes(m: &Measurement) -> Vec<String> {
    let mut notes = Vec::new();
    if m.summary.relative_range() > 0.25 {
        notes.push(format!("spread {:.0}%", m.summary.relative_range() * 100.0));
    }
    if let Some(p) = m.precision.filter(|p| !p.met) {
        notes.push(format!(
            "±{}% (target {}%)",
            percent(p.achieved),
            percent(p.target)
        ));
    }
    notes
}

/// A fraction as a percentage with no more digits than it needs
/// (0.02 → "2", 0.075 → "7.5", 0.00001 → "0.001").
pub fn percent(fraction: f64) -> String {
    let v = fraction * 100.0;
    let s = if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    };
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Renders operation results (mode `op`) as a table that fits 100 columns.
pub fn render_ops(results: &[FigureResult]) -> String {
    let mut t = new_table(vec![
        "benchmark",
        "ns",
        "p99 ns",
        "MB/s",
        "system calls",
        "notes",
    ]);
    for r in results {
        let (median, p99, mbps, notes) = match &r.outcome {
            Outcome::Ok(m) => {
                let med = m.summary.median;
                let mbps = if r.size > 0 && med > 0.0 {
                    format!("{:.0}", r.size as f64 / med * 1e3)
                } else {
                    "-".into()
                };
                let mut notes = quality_notes(m);
                // Per what: an operation, or each of several events in it.
                match r.proof().as_ref().and_then(|p| p.events) {
                    Some(e) => notes.push(format!("per {} ({} per op)", e.name, e.per_op)),
                    None => notes.push("per op".into()),
                }
                if let Some(b) = r.proof().as_ref().and_then(|p| p.baseline_ns) {
                    notes.push(format!("{} subtracted per op", ns(b)));
                }
                notes.extend(r.note.clone());
                (ns(med), ns(m.latency.p99 as f64), mbps, notes.join("; "))
            }
            Outcome::Skipped(why) => (
                "-".into(),
                "-".into(),
                "-".into(),
                format!("skipped: {why}"),
            ),
            Outcome::Failed(why) => ("-".into(), "-".into(), "-".into(), format!("FAILED: {why}")),
        };
        t.add_row(vec![
            r.id.to_string(),
            median,
            p99,
            mbps,
            proven_calls(r),
            notes,
        ]);
    }
    for col in 1..4 {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}

/// A preset's results in the shape of the study's table: one row per size,
/// one column per mechanism, one-way median in µs.
pub fn render_preset(preset: &crate::presets::Preset, results: &[FigureResult]) -> String {
    let mut header = vec!["bytes".to_string()];
    header.extend(preset.columns.iter().map(|c| c.label.to_string()));
    let mut t = new_table(header);
    let figure = |col: &crate::presets::Column, size: usize| {
        let of_column: Vec<&FigureResult> = results
            .iter()
            .filter(|r| {
                r.id == col.mechanism
                    && r.cold_region.is_some() == col.cold
                    && column_mode_matches(col.mode, r)
            })
            .collect();
        // A fixed-payload mechanism ran once: its figure stands for every row.
        let r = match of_column.as_slice() {
            [only] if only.size != size => Some(*only),
            all => all.iter().find(|r| r.size == size).copied(),
        };
        match r.map(|r| (&r.outcome, r.oneway())) {
            // One-way columns in the study's terms: min / mean / max.
            Some((Outcome::Ok(m), Some(f))) => format!(
                "{} / {} / {}",
                us(m.latency.min as f64),
                us(f.mean_ns),
                us(m.latency.max as f64)
            ),
            Some((Outcome::Ok(m), None)) => format!("{:.2}", m.summary.median / 1e3),
            Some((Outcome::Skipped(_), _)) => "n/a".to_string(),
            Some((Outcome::Failed(_), _)) => "failed".to_string(),
            None => "-".to_string(),
        }
    };
    for &size in preset.sizes {
        let mut row = vec![size.to_string()];
        row.extend(preset.columns.iter().map(|c| figure(c, size)));
        t.add_row(row);
    }
    for col in 0..=preset.columns.len() {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let columns: Vec<String> = preset
        .columns
        .iter()
        .map(|c| format!("{} = {}", c.label, c.command()))
        .collect();
    let any_oneway = preset
        .columns
        .iter()
        .any(|c| matches!(c.mode, ColumnMode::OneWay { .. }));
    let any_pingpong = preset
        .columns
        .iter()
        .any(|c| c.mode == ColumnMode::PingPong);
    let unit = match (any_pingpong, any_oneway) {
        (true, true) => "one-way µs (ping-pong columns: median; one-way columns: min / mean / max)",
        (false, true) => "one-way µs, min / mean / max of the messages",
        _ => "one-way µs (median)",
    };
    let mut out = format!(
        "{}\n{t}\n{unit}; {}; n/a = beyond the mechanism's limit here (see above); \
         a fixed-payload mechanism has one figure for every row\n",
        preset.study,
        columns.join(", ")
    );
    if let Some(d) = preset.differences {
        out.push_str(d);
        out.push('\n');
    }
    out
}

/// Whether result `r` belongs to a preset column timed as `mode`.
fn column_mode_matches(mode: ColumnMode, r: &FigureResult) -> bool {
    match (mode, &r.oneway()) {
        (ColumnMode::PingPong, _) => r.mode() == Mode::PingPong,
        (ColumnMode::OneWay { interval, .. }, Some(f)) => {
            f.interval_ns == interval.map(|d| d.as_nanos() as u64)
        }
        // A skipped or failed one-way figure has no facts: its mode and
        // size still place it, whichever pacing (both rows say n/a alike).
        (ColumnMode::OneWay { .. }, None) => r.mode() == Mode::OneWay,
    }
}

/// What the columns of [`render_oneway`] mean.
pub const ONEWAY_FOOTNOTE: &str = "client = sender, server = receiver; one-way = receiver's clock after recv − sender's CLOCK_MONOTONIC stamp in the message, one clock read subtracted; one message in flight (the receiver acknowledges each); saturated = next message on the acknowledgement, otherwise one per interval; mean over every message, percentiles of every message";

/// Renders mode `oneway` results: one row per mechanism × size × pacing.
pub fn render_oneway(results: &[FigureResult]) -> String {
    let mut t = new_table(vec![
        "mechanism",
        "size",
        "pacing",
        "messages",
        "min µs",
        "p50 µs",
        "mean µs",
        "p99 µs",
        "max µs",
        "notes",
    ]);
    for r in results {
        let size = format_size(r.size);
        let mut row = vec![r.id.to_string(), size];
        match (&r.outcome, &r.oneway()) {
            (Outcome::Ok(m), Some(f)) => {
                let l = m.latency;
                row.push(pacing(f));
                row.push(f.messages_sent.to_string());
                for v in [
                    l.min as f64,
                    l.p50 as f64,
                    f.mean_ns,
                    l.p99 as f64,
                    l.max as f64,
                ] {
                    row.push(us(v));
                }
                let mut notes = Vec::new();
                if f.time_bounded {
                    notes.push("stopped at its time bound".to_string());
                }
                notes.extend(r.note.clone());
                row.push(notes.join("; "));
            }
            (outcome, _) => {
                row.extend(std::iter::repeat_n("-".to_string(), 7));
                row.push(match outcome {
                    Outcome::Skipped(why) => format!("skipped: {why}"),
                    Outcome::Failed(why) => format!("FAILED: {why}"),
                    Outcome::Ok(_) => String::new(),
                });
            }
        }
        t.add_row(row);
    }
    for col in 3..9 {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}

fn pacing(f: &OneWayFacts) -> String {
    match f.interval_ns {
        Some(ns) => format!(
            "every {}",
            crate::presets::format_duration(std::time::Duration::from_nanos(ns))
        ),
        None => "saturated".into(),
    }
}

/// The windows of each measured one-way figure, one line each, in the 2011
/// study's shape (`min = 1   max = 78 moy = 7.8`, µs).
pub fn render_windows(results: &[FigureResult]) -> String {
    let mut out = String::new();
    for r in results {
        let (Outcome::Ok(_), Some(f)) = (&r.outcome, &r.oneway()) else {
            continue;
        };
        out.push_str(&format!(
            "{} {} {}, windows of {} messages (µs):\n",
            r.id,
            format_size(r.size),
            pacing(f),
            f.window
        ));
        for w in &f.windows {
            let short = if w.messages < f.window {
                format!("   ({} messages)", w.messages)
            } else {
                String::new()
            };
            out.push_str(&format!(
                "  min = {:>7}   max = {:>7}   mean = {:>7}{short}\n",
                us(w.min_ns as f64),
                us(w.max_ns as f64),
                us(w.mean_ns)
            ));
        }
    }
    out
}

/// What the columns of [`render_periodic`] mean.
pub const PERIODIC_FOOTNOTE: &str = "latency = wake time − absolute deadline (clock_nanosleep TIMER_ABSTIME), nothing subtracted; failures = wake-ups later than tolerance × period; Fail_sys = failures / wake-ups; irq: cost per interrupt = (loop time with timer − without) / interrupts, median of alternating rounds";

/// Frequency in Hz, as short as it reads: 60, 1000, 62.5.
fn hz(f: f64) -> String {
    if f.fract() == 0.0 {
        format!("{f:.0}")
    } else {
        format!("{f:.1}")
    }
}

/// Renders periodic results (mode `periodic`): one row per figure, so
/// timer-failures' rows are the failure curve over its frequencies.
pub fn render_periodic(results: &[FigureResult]) -> String {
    let mut t = new_table(vec![
        "benchmark",
        "Hz",
        "wake-ups",
        "failures",
        "Fail_sys %",
        "p50 µs",
        "p99 µs",
        "max µs",
        "notes",
    ]);
    for (r, name) in results.iter().zip(group_names(results)) {
        let freq = r
            .periodic()
            .as_ref()
            .map_or("-".into(), |p| hz(p.frequency_hz));
        let dash = || "-".to_string();
        let row = match (&r.outcome, &r.periodic()) {
            (Outcome::Ok(m), Some(p)) => {
                // Slack and policy only when they are not the usual (1 ns
                // slack, SCHED_OTHER): the JSON records them always.
                let mut notes = Vec::new();
                if p.irq.is_none() && p.timer_slack_ns != 1 {
                    notes.push(format!("slack {} ns", p.timer_slack_ns));
                }
                if p.sched_policy != "SCHED_OTHER" {
                    notes.push(p.sched_policy.to_string());
                }
                notes.extend(r.note.clone());
                match &p.irq {
                    Some(irq) => {
                        notes.insert(
                            0,
                            format!(
                                "{} µs per interrupt (median of {} rounds)",
                                us(irq.cost_per_interrupt_ns),
                                irq.rounds
                            ),
                        );
                        vec![
                            irq.interrupts.to_string(),
                            dash(),
                            dash(),
                            dash(),
                            dash(),
                            dash(),
                        ]
                    }
                    None => vec![
                        p.wakeups.map_or_else(dash, |w| w.to_string()),
                        p.failures.map_or_else(dash, |f| f.to_string()),
                        p.fail_ratio
                            .map_or_else(dash, |f| format!("{:.2}", f * 100.0)),
                        us(m.latency.p50 as f64),
                        us(m.latency.p99 as f64),
                        us(m.latency.max as f64),
                    ],
                }
                .into_iter()
                .chain(std::iter::once(notes.join("; ")))
                .collect::<Vec<_>>()
            }
            (outcome, _) => no_figure(6, outcome, "periodic"),
        };
        let mut cells = vec![name.to_string(), freq];
        cells.extend(row);
        t.add_row(cells);
    }
    for col in 1..8 {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    // Ids whole; the notes wrap instead.
    if let Some(c) = t.column_mut(0) {
        c.set_constraint(ColumnConstraint::ContentWidth);
    }
    t.to_string()
}

/// What the columns of [`render_scores`] mean.
pub const SCORE_FOOTNOTE: &str = "score = operations completed in the period (Thread-Metric's Time Period Total; see the JSON's score.operation for what one is); R = rate / the basic test's rate in this run (S / H); spread = (max − min) / median of the reports' rates";

/// A count with thousands separated by a thin space: 12 345 678.
fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
}

/// A rate per second, to three significant digits with a k / M suffix.
fn per_second(r: f64) -> String {
    let (v, unit) = if r >= 1e6 {
        (r / 1e6, "M")
    } else if r >= 1e3 {
        (r / 1e3, "k")
    } else {
        (r, "")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{unit}")
}

/// Renders score results (mode `score`): one row per test.
pub fn render_scores(results: &[FigureResult]) -> String {
    let mut t = new_table(vec![
        "benchmark",
        "score",
        "per s",
        "R",
        "spread %",
        "notes",
    ]);
    let dash = || "-".to_string();
    for r in results {
        let mut cells = vec![r.id.to_string()];
        match (&r.outcome, &r.score()) {
            (Outcome::Ok(_), Some(f)) => {
                let mut notes = Vec::new();
                if f.is_baseline {
                    notes.push("baseline".to_string());
                }
                notes.extend(r.note.clone());
                cells.extend([
                    count(f.operations),
                    per_second(f.ops_per_s),
                    f.relative_to_baseline
                        .map_or_else(dash, |v| format!("{v:.3}")),
                    format!("{:.1}", f.interval_spread * 100.0),
                    notes.join("; "),
                ]);
            }
            (outcome, _) => cells.extend(no_figure(4, outcome, "score")),
        }
        t.add_row(cells);
    }
    for col in 1..5 {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    if let Some(c) = t.column_mut(0) {
        c.set_constraint(ColumnConstraint::ContentWidth);
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_back() {
        assert_eq!(format_size(1), "1");
        assert_eq!(format_size(64), "64");
        assert_eq!(format_size(4096), "4K");
        assert_eq!(format_size(65536), "64K");
        assert_eq!(format_size(1 << 20), "1M");
        assert_eq!(format_size(1500), "1500");
    }

    #[test]
    fn percentages_use_the_digits_they_need() {
        assert_eq!(percent(0.02), "2");
        assert_eq!(percent(0.075), "7.5");
        assert_eq!(percent(0.00001), "0.001");
        assert_eq!(percent(0.279), "27.9");
    }

    #[test]
    fn counts_and_rates_read_back() {
        assert_eq!(count(7), "7");
        assert_eq!(count(1234), "1\u{2009}234");
        assert_eq!(count(12_345_678), "12\u{2009}345\u{2009}678");
        assert_eq!(per_second(950.0), "950");
        assert_eq!(per_second(12_340.0), "12.3k");
        assert_eq!(per_second(4_560_000.0), "4.56M");
    }

    #[test]
    fn nanoseconds_read_back() {
        assert_eq!(ns(0.854), "0.85");
        assert_eq!(ns(42.74), "42.7");
        assert_eq!(ns(1234.4), "1234");
    }
}
