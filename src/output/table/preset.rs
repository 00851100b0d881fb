//! A preset's results in the shape of the study's table: one row per size,
//! one column per mechanism, one-way median in µs.

use super::cells::{align_right, new_table, us};
use super::figure::{Outcome, outcome};
use crate::presets::{Column, ColumnMode, Preset};
use crate::record::{FigureRecord, Mode};

/// The study's table for `preset` from the run's `results`, with the unit,
/// the columns' commands and how the run differs from the study.
pub fn render_preset(preset: &Preset, results: &[FigureRecord]) -> String {
    let mut header = vec!["bytes".to_string()];
    header.extend(preset.columns.iter().map(|c| c.label.to_string()));
    let mut t = new_table(header);
    let figure = |col: &Column, size: usize| {
        // Past what the study's mechanism could carry there is no study
        // figure to stand beside; a fixed-payload stand-in's one figure
        // must not look like one.
        if let Some(most) = col.max_bytes
            && size > most
        {
            return format!("> {most} B");
        }
        let of_column: Vec<&FigureRecord> = results
            .iter()
            .filter(|r| {
                r.benchmark == col.mechanism
                    && r.cold_region_bytes.is_some() == col.cold
                    && column_mode_matches(col.mode, r)
            })
            .collect();
        // A fixed-payload mechanism ran once: its figure stands for every row.
        let r = match of_column.as_slice() {
            [only] if only.size_bytes != size => Some(*only),
            all => all.iter().find(|r| r.size_bytes == size).copied(),
        };
        // A network study's cells say what share of the link's best they reached.
        let share = r
            .filter(|_| preset.network)
            .and_then(|r| r.remote.as_ref()?.efficiency)
            .map_or(String::new(), |e| {
                format!(" ({}%)", super::cells::percent(e))
            });
        match r.map(|r| (outcome(r), r.oneway.as_ref())) {
            // One-way columns in the study's terms: min / mean / max (at
            // or below zero: 0, as the single times were).
            Some((Outcome::Ok(m), Some(f))) => format!(
                "{} / {} / {}",
                us(m.latency.and_then(|l| l.min).unwrap_or(0.0)),
                us(f.mean_ns),
                us(m.latency.and_then(|l| l.max).unwrap_or(0.0))
            ),
            Some((Outcome::Ok(m), None)) if col.mode == ColumnMode::Stream => {
                format!(
                    "{}{share}",
                    super::cells::num(size as f64 * 1e3 / m.summary.median)
                )
            }
            Some((Outcome::Ok(m), None)) => format!("{:.2}{share}", m.summary.median / 1e3),
            Some((Outcome::Skipped(_), _)) => "n/a".to_string(),
            Some((Outcome::Failed(_), _)) => "failed".to_string(),
            Some((Outcome::BelowResolution(_), _)) => "< resolution".to_string(),
            None => "-".to_string(),
        }
    };
    for &size in preset.sizes {
        let mut row = vec![size.to_string()];
        row.extend(preset.columns.iter().map(|c| figure(c, size)));
        t.add_row(row);
    }
    align_right(&mut t, 0..preset.columns.len() + 1);
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
    let any_stream = preset.columns.iter().any(|c| c.mode == ColumnMode::Stream);
    let unit = match (any_pingpong, any_oneway) {
        _ if any_stream => {
            "one-way µs (ping-pong columns: median); MB/s columns: 10^6 B/s streamed one way"
        }
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
    for c in preset.columns {
        if let Some(most) = c.max_bytes {
            out.push_str(&format!(
                "{}: the study's mechanism carried at most {most} B; rows past that \
                 are not measured (> {most} B)\n",
                c.label
            ));
        }
    }
    if let Some(d) = preset.differences {
        out.push_str(d);
        out.push('\n');
    }
    out
}

/// Whether result `r` belongs to a preset column timed as `mode`.
fn column_mode_matches(mode: ColumnMode, r: &FigureRecord) -> bool {
    match (mode, &r.oneway.as_ref()) {
        (ColumnMode::PingPong, _) => r.mode == Mode::PingPong,
        (ColumnMode::Stream, _) => r.mode == Mode::Stream,
        (ColumnMode::OneWay { interval, .. }, Some(f)) => {
            f.interval_ns == interval.map(|d| d.as_nanos() as u64)
        }
        // A skipped or failed one-way figure has no facts: its mode and
        // size still place it, whichever pacing (both rows say n/a alike).
        (ColumnMode::OneWay { .. }, None) => r.mode == Mode::OneWay,
    }
}
