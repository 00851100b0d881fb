//! The figures measured under a stated load (`--load`): for each, what the
//! load achieved in its window (requested and achieved rate, handler time).

use super::cells::{align_right, duration, new_table, num, percent, size_cell, us, whole_column};
use crate::engine::run::correct::{Corrected, Correction, Status};
use crate::engine::run::figure::{FigureResult, Mode, Outcome};
use crate::engine::run::load::FigureLoad;

/// The raw figure and the corrected one, as cells: a time per operation,
/// or a score S with R.
fn figure_cells(r: &FigureResult, c: Option<&Correction>) -> [String; 3] {
    let dash = || "-".to_string();
    let Some(c) = c else {
        let raw = match &r.outcome {
            Outcome::Ok(_) => "not corrected".into(),
            Outcome::Skipped(_) => "skipped".into(),
            Outcome::Failed(_) => "FAILED".into(),
            Outcome::BelowResolution(_) => "below resolution".into(),
        };
        return [raw, dash(), dash()];
    };
    let share = percent(c.fraction);
    let zero = c.status == Status::PassesZero;
    match &c.kind {
        Corrected::Time {
            measured_ns,
            corrected_ns,
            ..
        } => [
            duration(*measured_ns),
            share,
            match corrected_ns {
                Some(t) if !zero => duration(*t),
                _ => "passes zero".into(),
            },
        ],
        Corrected::Score {
            operations,
            corrected_operations,
            corrected_relative_to_baseline,
            ..
        } => {
            let raw_r = r.score().and_then(|f| f.relative_to_baseline);
            let with_r = |s: String, r: Option<f64>| match r {
                Some(r) => format!("{s} · R {}", num(r)),
                None => s,
            };
            [
                with_r(format!("S {operations}"), raw_r),
                share,
                match corrected_operations {
                    Some(s) if !zero => {
                        with_r(format!("S' {s:.0}"), *corrected_relative_to_baseline)
                            .replace("· R ", "· R' ")
                    }
                    _ => "passes zero".into(),
                },
            ]
        }
    }
}

/// Each source of a figure's load on one line: where, what, achieved of
/// requested, handler mean (the specs are in the page's header).
fn sources_cell(l: &FigureLoad) -> String {
    let mut lines = Vec::new();
    for (i, s) in l.sources.iter().enumerate() {
        let at = s.cpu.map_or("CPUs".into(), |c| format!("CPU{c}"));
        let rate = l
            .achieved_per_s(i)
            .map_or("-".into(), |r| format!("{r:.0}/s"));
        let line = match s.spec.kind() {
            "irq" => format!(
                "{at} irq {rate} of {:.0}, handler {} µs{}{}",
                s.requested_per_s().unwrap_or(0.0),
                if s.count > 0 {
                    us(s.handler_ns as f64 / s.count as f64)
                } else {
                    "-".into()
                },
                if s.fifo { "" } else { ", SCHED_OTHER" },
                if s.other > 0 {
                    format!(", {} missed", s.other)
                } else {
                    String::new()
                }
            ),
            "net" => format!(
                "{at} net {rate} of {:.0}, {} received",
                s.requested_per_s().unwrap_or(0.0),
                s.other
            ),
            _ => format!("{at} cpu {rate} rounds"),
        };
        lines.push(line);
    }
    lines.join("\n")
}

/// The table, or nothing when no figure ran under a load.
pub fn render(results: &[FigureResult]) -> String {
    let loaded: Vec<&FigureResult> = results.iter().filter(|r| r.load.is_some()).collect();
    if loaded.is_empty() {
        return String::new();
    }
    let mut t = new_table(vec![
        "benchmark",
        "size",
        "measured",
        "irq time %",
        "corrected",
    ]);
    let mut a = new_table(vec!["benchmark", "size", "window ms", "load achieved"]);
    for r in &loaded {
        let l = r.load.as_ref().expect("filtered");
        let size = match r.mode() {
            Mode::PingPong | Mode::OneWay | Mode::Stream => size_cell(r.size),
            _ => "-".into(),
        };
        let [raw, share, corrected] = figure_cells(r, r.correction.as_ref());
        t.add_row(vec![r.id.to_string(), size.clone(), raw, share, corrected]);
        if !l.sources.is_empty() {
            a.add_row(vec![
                r.id.to_string(),
                size,
                format!("{:.0}", l.window_ns as f64 / 1e6),
                sources_cell(l),
            ]);
        }
    }
    align_right(&mut t, 1..5);
    align_right(&mut a, 1..3);
    whole_column(&mut t, 0);
    whole_column(&mut a, 0);
    let achieved = if a.row_count() > 0 {
        format!(
            "{a}\nachieved = count ÷ the figure's window; handler = time stamped in the interrupt source's handler\n"
        )
    } else {
        String::new()
    };
    format!(
        "\nUnder load: raw and corrected figures, then what each load process did while the figure was measured\n{t}\n\
         measured = the figure as in its table (time per operation, or score S with R = S/H); irq time % = f, the interrupt time \
         accounted on the figure's CPUs (/proc/stat irq + softirq, plus the interrupt sources' CPU time) per unit of its window; \
         corrected: T' = T − f·T (the interrupt time of the samples per operation), S' = S + Ω·S_int with Ω = t_int/t_op \
         from this figure, R' = S'/H; \"passes zero\": the correction would reach or pass zero (not clamped)\n{achieved}"
    )
}

/// What a load did over a whole command, on one line per source (`ipcmark
/// workload --load`).
pub fn summary_line(l: &FigureLoad) -> String {
    let mut specs: Vec<String> = l.sources.iter().map(|s| s.spec.label()).collect();
    specs.dedup();
    format!(
        "load held over {:.1} s ({}):\n  {}\n",
        l.window_ns as f64 / 1e9,
        specs.join(", "),
        sources_cell(l).replace('\n', "\n  ")
    )
}
