//! The figures measured under a stated load (`--load`): for each, what the
//! load achieved in its window (requested and achieved rate, handler time).

use super::cells::{align_right, new_table, size_cell, us, whole_column};
use crate::engine::run::figure::{FigureResult, Mode};
use crate::engine::run::load::FigureLoad;

/// Each source of a figure's load on one line: requested → achieved rate,
/// handler mean, policy.
fn sources_cell(l: &FigureLoad) -> String {
    let mut lines = Vec::new();
    for (i, s) in l.sources.iter().enumerate() {
        let at = s.cpu.map_or("CPUs".into(), |c| format!("CPU{c}"));
        let rate = l
            .achieved_per_s(i)
            .map_or("-".into(), |r| format!("{r:.0}/s"));
        let line = match s.spec.kind() {
            "irq" => format!(
                "{} {at}: {rate} of {:.0}, handler {} µs{}{}",
                s.spec.label(),
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
                "{}: {rate} sent of {:.0}, {} received",
                s.spec.label(),
                s.requested_per_s().unwrap_or(0.0),
                s.other
            ),
            _ => format!("{} {at}: {rate} rounds checked", s.spec.label()),
        };
        lines.push(line);
    }
    lines.join("\n")
}

/// The table, or nothing when no figure ran under a load.
pub fn render(results: &[FigureResult]) -> String {
    let loaded: Vec<&FigureResult> = results.iter().filter(|r| r.load.is_some()).collect();
    if loaded.is_empty()
        || loaded
            .iter()
            .all(|r| r.load.as_ref().unwrap().sources.is_empty())
    {
        return String::new();
    }
    let mut t = new_table(vec!["benchmark", "size", "window ms", "load achieved"]);
    for r in &loaded {
        let l = r.load.as_ref().expect("filtered");
        let size = match r.mode() {
            Mode::PingPong | Mode::OneWay | Mode::Stream => size_cell(r.size),
            _ => "-".into(),
        };
        t.add_row(vec![
            r.id.to_string(),
            size,
            format!("{:.0}", l.window_ns as f64 / 1e6),
            sources_cell(l),
        ]);
    }
    align_right(&mut t, 1..3);
    whole_column(&mut t, 0);
    format!(
        "\nUnder load (what each load process did while the figure was measured)\n{t}\n\
         achieved = count ÷ the figure's window; handler = time stamped in the interrupt source's handler\n"
    )
}

/// What a load did over a whole command, on one line per source (`ipcmark
/// workload --load`).
pub fn summary_line(l: &FigureLoad) -> String {
    format!(
        "load held over {:.1} s:\n  {}\n",
        l.window_ns as f64 / 1e9,
        sources_cell(l).replace('\n', "\n  ")
    )
}
