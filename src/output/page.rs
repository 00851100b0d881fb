//! The results page of `ipcmark run`: the machine and placement header, one
//! table per timing model with its footnote, a preset's study-shaped table
//! and the cost models, in that order.

use crate::engine::models::score::{self, ScoreSettings};
use crate::engine::os::environment::Environment;
use crate::engine::os::peer::PeerKind;
use crate::engine::run::figure::{FigureResult, Mode};
use crate::output::json::{Report, Settings};
use crate::output::table;

/// One timing model's table on the page: which figures it shows, how it
/// renders them, and the footnote that says how they were obtained.
struct Section {
    mode: Mode,
    render: fn(&[FigureResult]) -> String,
    footnote: &'static str,
}

const PINGPONG_FOOTNOTE: &str = "one-way = round trip / 2, loop overhead subtracted; median of samples; p99 of single round trips; MB/s = size / one-way (10^6 B/s)";

/// The tables in page order (one-way has its windows too, below).
const SECTIONS: [Section; 5] = [
    Section {
        mode: Mode::PingPong,
        render: table::render,
        footnote: PINGPONG_FOOTNOTE,
    },
    Section {
        mode: Mode::Stream,
        render: table::render_stream,
        footnote: table::STREAM_FOOTNOTE,
    },
    Section {
        mode: Mode::Op,
        render: table::render_ops,
        footnote: table::OPS_FOOTNOTE,
    },
    Section {
        mode: Mode::Periodic,
        render: table::render_periodic,
        footnote: table::PERIODIC_FOOTNOTE,
    },
    Section {
        mode: Mode::Score,
        render: table::render_scores,
        footnote: table::SCORE_FOOTNOTE,
    },
];

/// The figures of `mode` (op includes event: one table for both).
fn of_mode(results: &[FigureResult], mode: Mode) -> Vec<FigureResult> {
    results
        .iter()
        .filter(|r| r.mode() == mode || (mode == Mode::Op && r.mode() == Mode::Event))
        .cloned()
        .collect()
}

/// The whole page for a run's `results` as `report` records them.
/// `scores`: the score model's settings and why SCHED_FIFO was refused, when
/// the run had score figures.
pub fn render(
    report: &Report,
    results: &[FigureResult],
    scores: Option<&(ScoreSettings, Option<String>)>,
    preset: Option<&crate::presets::Preset>,
) -> String {
    let has = |m: Mode| results.iter().any(|r| r.mode() == m);
    let mut out = header(
        &report.environment,
        &report.settings,
        has(Mode::PingPong) || has(Mode::OneWay) || has(Mode::Stream),
        has(Mode::Op) || has(Mode::Event) || has(Mode::Periodic),
    );
    if let Some((ss, refused)) = scores {
        out.push_str(&format!(
            "\nthread-metric: each test's threads and its reporter on CPU {}, {}; period {:?} in {} reports",
            ss.cpu.map_or("any".into(), |c| c.to_string()),
            match refused {
                None => format!(
                    "SCHED_FIFO 40 − priority, reporter {}",
                    score::REPORTER_FIFO
                ),
                Some(e) => format!("SCHED_OTHER (SCHED_FIFO refused: {e})"),
            },
            ss.period,
            ss.intervals
        ));
    }
    out.push('\n');
    let oneway = of_mode(results, Mode::OneWay);
    if !oneway.is_empty() {
        out.push_str(&format!(
            "{}\n{}\n{}",
            table::render_oneway(&oneway),
            table::ONEWAY_FOOTNOTE,
            table::render_windows(&oneway),
        ));
    }
    for section in &SECTIONS {
        let figures = of_mode(results, section.mode);
        if !figures.is_empty() {
            out.push_str(&format!(
                "{}\n{}\n",
                (section.render)(&figures),
                section.footnote
            ));
        }
    }
    if let Some(p) = preset {
        out.push_str(&table::render_preset(p, results));
    }
    if !report.cost_models.is_empty() {
        out.push_str(&crate::output::cost_model::render(&report.cost_models));
    }
    out
}

/// The machine on one line, then where each kind of figure ran.
fn header(env: &Environment, s: &Settings, pingpong: bool, ops: bool) -> String {
    let cpu = |c: Option<usize>| c.map_or("any".to_string(), |c| c.to_string());
    let rt = s
        .rt_priority
        .map_or(String::new(), |p| format!(", SCHED_FIFO {p}"));
    let mut h = format!(
        "ipcmark {} | Linux {} ({}) | {} | {} CPUs | virt: {} | clock: {} | governor: {}",
        env!("CARGO_PKG_VERSION"),
        env.kernel,
        env.preemption,
        env.cpu_model,
        env.logical_cpus,
        env.virtualization,
        env.clocksource,
        env.frequency_governor.as_deref().unwrap_or("none"),
    );
    if pingpong {
        h.push_str(&format!(
            "\nclient CPU {}, server CPU {}, peer {}{rt}",
            cpu(s.client_cpu),
            cpu(s.server_cpu),
            match s.peer {
                PeerKind::Process => "process",
                PeerKind::Thread => "thread",
            },
        ));
    }
    if ops {
        h.push_str(&format!(
            "\nsingle-process benchmarks on CPU {}{rt}",
            cpu(s.client_cpu)
        ));
    }
    if let Some(n) = &s.placement_note {
        h.push_str(&format!("\nnote: {n}"));
    }
    h
}
