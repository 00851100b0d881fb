//! The figures measured under a stated load (`--load`): for each, what the
//! load achieved in its window (requested and achieved rate, handler time).

use super::cells::{align_right, duration, new_table, num, percent, size_cell, us, whole_column};
use super::figure::{Outcome, outcome};
use crate::presets::LoadStudy;
use crate::record::load::{CorrectionRecord, LoadRecord};
use crate::record::{FigureRecord, Mode};

/// A correction's figures: a time per operation, or a score.
enum Corrected {
    /// T and T' (none where it passes zero), ns.
    Time(f64, Option<f64>),
    /// S, S' and R' (none where they pass zero or without a baseline).
    Score(u64, Option<f64>, Option<f64>),
}

/// What `c` corrected, by its method; `None` for a record without the
/// method's figures.
fn corrected(c: &CorrectionRecord) -> Option<Corrected> {
    match c.method.as_str() {
        "time" => Some(Corrected::Time(c.measured_ns?, c.corrected_ns.flatten())),
        "score" => Some(Corrected::Score(
            c.operations?,
            c.corrected_operations.flatten(),
            c.corrected_relative_to_baseline.flatten(),
        )),
        _ => None,
    }
}

/// The raw figure and the corrected one, as cells: a time per operation,
/// or a score S with R.
fn figure_cells(r: &FigureRecord, c: Option<&CorrectionRecord>) -> [String; 3] {
    let dash = || "-".to_string();
    let Some((c, kind)) = c.and_then(|c| Some((c, corrected(c)?))) else {
        let raw = match outcome(r) {
            Outcome::Ok(_) => "not corrected".into(),
            Outcome::Skipped(_) => "skipped".into(),
            Outcome::Failed(_) => "FAILED".into(),
            Outcome::BelowResolution(_) => "below resolution".into(),
        };
        return [raw, dash(), dash()];
    };
    let share = percent(c.interrupt_fraction);
    let zero = c.status == "passes_zero";
    match kind {
        Corrected::Time(measured_ns, corrected_ns) => [
            duration(measured_ns),
            share,
            match corrected_ns {
                Some(t) if !zero => duration(t),
                _ => "passes zero".into(),
            },
        ],
        Corrected::Score(operations, corrected_operations, corrected_relative_to_baseline) => {
            let raw_r = r.score.as_ref().and_then(|f| f.relative_to_baseline);
            let with_r = |s: String, r: Option<f64>| match r {
                Some(r) => format!("{s} · R {}", num(r)),
                None => s,
            };
            [
                with_r(format!("S {operations}"), raw_r),
                share,
                match corrected_operations {
                    Some(s) if !zero => {
                        with_r(format!("S' {s:.0}"), corrected_relative_to_baseline)
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
fn sources_cell(l: &LoadRecord) -> String {
    // The window as the engine counted it, whole ns (written in ms).
    let window_ns = (l.window_ms * 1e6).round().max(1.0);
    let mut lines = Vec::new();
    for s in &l.sources {
        let at = s.cpu.map_or("CPUs".into(), |c| format!("CPU{c}"));
        let rate = s.achieved_per_s.map_or("-".into(), |r| format!("{r:.0}/s"));
        let line = match s.kind.as_str() {
            "irq" => format!(
                "{at} irq {rate} of {:.0}, handler {} µs{}{}",
                s.requested_per_s.unwrap_or(0.0),
                if s.count > 0 {
                    us(s.handler_ns.unwrap_or(0) as f64 / s.count as f64)
                } else {
                    "-".into()
                },
                if s.policy == "SCHED_FIFO" {
                    ""
                } else {
                    ", SCHED_OTHER"
                },
                if s.other > 0 {
                    format!(", {} missed", s.other)
                } else {
                    String::new()
                }
            ),
            "net" => format!(
                "{at} net {rate} of {:.0} sent, {:.0}/s received",
                s.requested_per_s.unwrap_or(0.0),
                s.other as f64 * 1e9 / window_ns
            ),
            _ => format!("{at} cpu {rate} rounds"),
        };
        lines.push(line);
    }
    lines.join("\n")
}

/// The table, or nothing when no figure ran under a load.
pub fn render(results: &[FigureRecord]) -> String {
    let loaded: Vec<&FigureRecord> = results.iter().filter(|r| r.load.is_some()).collect();
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
        let size = match r.mode {
            Mode::PingPong | Mode::OneWay | Mode::Stream => size_cell(r.size_bytes),
            _ => "-".into(),
        };
        let [raw, share, corrected] = figure_cells(r, r.correction.as_ref());
        t.add_row(vec![
            r.benchmark.to_string(),
            size.clone(),
            raw,
            share,
            corrected,
        ]);
        if !l.sources.is_empty() {
            a.add_row(vec![
                r.benchmark.to_string(),
                size,
                format!("{:.0}", l.window_ms),
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
         measured = the figure as in its table (time per operation, or score S with R = S/H)\n\
         irq time % = f: the interrupt time on the figure's CPUs (/proc/stat irq + softirq, sources' CPU time) ÷ its window\n\
         corrected: T' = T − f·T (the samples' interrupt time per operation); S' = S + Ω·S_int, Ω = t_int/t_op; R' = S'/H\n\
         passes zero: the correction would reach or pass zero (it is not clamped)\n{achieved}"
    )
}

/// What a load did over a whole command, on one line per source (`ipcmark
/// workload --load`).
pub fn summary_line(l: &LoadRecord) -> String {
    let mut specs: Vec<String> = l.sources.iter().map(|s| s.spec.clone()).collect();
    specs.dedup();
    format!(
        "load held over {:.1} s ({}):\n  {}\n",
        l.window_ms / 1e3,
        specs.join(", "),
        sources_cell(l).replace('\n', "\n  ")
    )
}

/// What identifies one figure across the levels of a sweep: its id, its
/// size, and a periodic figure's frequency.
fn key(r: &FigureRecord) -> (&str, usize, Option<u64>) {
    (
        r.benchmark.as_str(),
        r.size_bytes,
        r.periodic
            .as_ref()
            .map(|p| (p.frequency_hz * 1000.0) as u64),
    )
}

/// One level's cells of a figure: rows by the figure's kind.
fn level_rows(r: Option<&FigureRecord>) -> Vec<(&'static str, String)> {
    let dash = || "-".to_string();
    let Some(r) = r else {
        return vec![("measured", dash())];
    };
    let irq_rate = r.load.as_ref().map_or(dash(), |l| {
        let cpu = r.cpus.first().copied();
        let rates: Vec<f64> = l
            .sources
            .iter()
            .filter(|s| s.kind == "irq" && s.cpu == cpu)
            .filter_map(|s| s.achieved_per_s)
            .collect();
        if rates.is_empty() {
            dash()
        } else {
            format!("{:.0}", rates.iter().sum::<f64>())
        }
    });
    if let (Some(p), Outcome::Ok(_)) = (r.periodic.as_ref(), outcome(r)) {
        return vec![
            (
                "Fail_sys %",
                p.fail_ratio
                    .map_or_else(dash, |f| format!("{:.2}", f * 100.0)),
            ),
            ("failures", p.failures.map_or_else(dash, |f| f.to_string())),
            ("irq/s achieved", irq_rate),
        ];
    }
    let [raw, share, corrected] = figure_cells(r, r.correction.as_ref());
    vec![
        ("measured", raw),
        ("corrected", corrected),
        ("irq time %", share),
        ("irq/s achieved", irq_rate),
    ]
}

/// The raw and corrected value of a figure, for the chart: a time per
/// operation (ns) or a score S.
fn chart_values(r: &FigureRecord) -> Option<(f64, Option<f64>, bool)> {
    match corrected(r.correction.as_ref()?)? {
        Corrected::Time(measured_ns, corrected_ns) => Some((measured_ns, corrected_ns, true)),
        Corrected::Score(operations, corrected_operations, _) => {
            Some((operations as f64, corrected_operations, false))
        }
    }
}

/// A small text chart of raw (█) and corrected (▒) across the levels.
fn chart(levels: &[(String, Option<&FigureRecord>)], width: usize) -> String {
    let values: Vec<(&str, f64, Option<f64>, bool)> = levels
        .iter()
        .filter_map(|(l, r)| {
            r.and_then(chart_values)
                .map(|(a, b, t)| (l.as_str(), a, b, t))
        })
        .collect();
    let max = values
        .iter()
        .flat_map(|(_, a, b, _)| [Some(*a), *b])
        .flatten()
        .fold(0.0f64, f64::max);
    if values.is_empty() || max <= 0.0 {
        return String::new();
    }
    let label_w = values
        .iter()
        .map(|(l, ..)| l.chars().count())
        .max()
        .unwrap_or(0);
    let bar = |v: f64, c: char| {
        c.to_string()
            .repeat(((v / max) * width as f64).round() as usize)
    };
    let mut out = String::new();
    let show = |v: f64, time: bool| {
        if time {
            duration(v)
        } else {
            format!("S {v:.0}")
        }
    };
    for (l, a, b, time) in values {
        out.push_str(&format!(
            "  {l:>label_w$} raw  {} {}\n",
            bar(a, '█'),
            show(a, time)
        ));
        if let Some(b) = b {
            out.push_str(&format!(
                "  {:>label_w$} corr {} {}\n",
                "",
                bar(b, '▒'),
                show(b, time)
            ));
        }
    }
    out
}

/// With `--load-sweep`: one table per figure with the levels as columns
/// (measured, corrected, interrupt time and achieved interrupt rate on the
/// figure's CPU; Fail_sys for a periodic figure), each followed by a small
/// text chart of raw and corrected when the terminal is wide enough.
pub fn render_sweep(levels: &[(String, Vec<FigureRecord>)], width: usize) -> String {
    let mut keys = Vec::new();
    for (_, rs) in levels {
        for r in rs {
            if !keys.contains(&key(r)) {
                keys.push(key(r));
            }
        }
    }
    let mut out = String::new();
    for k in keys {
        let at: Vec<(String, Option<&FigureRecord>)> = levels
            .iter()
            .map(|(l, rs)| (l.clone(), rs.iter().find(|r| key(r) == k)))
            .collect();
        let mut header = vec![match k {
            (id, _, Some(mhz)) => format!("{id} @ {} Hz", mhz as f64 / 1000.0),
            (id, size, None) if size > 0 && !id.starts_with("rhealstone") => {
                format!("{id} {}", size_cell(size))
            }
            (id, ..) => id.to_string(),
        }];
        header.extend(
            at.iter()
                .filter(|(_, r)| r.is_some())
                .map(|(l, _)| l.clone()),
        );
        let cells: Vec<Vec<(&str, String)>> = at
            .iter()
            .filter(|(_, r)| r.is_some())
            .map(|(_, r)| level_rows(*r))
            .collect();
        let mut t = new_table(header);
        let rows = cells.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..rows {
            let name = cells
                .iter()
                .find_map(|c| c.get(i).map(|x| x.0))
                .unwrap_or("");
            let mut row = vec![name.to_string()];
            row.extend(
                cells
                    .iter()
                    .map(|c| c.get(i).map_or("-".into(), |x| x.1.clone())),
            );
            t.add_row(row);
        }
        align_right(&mut t, 1..at.len() + 1);
        whole_column(&mut t, 0);
        out.push_str(&format!("\n{t}\n"));
        if width >= 60 {
            out.push_str(&chart(&at, (width - 40).min(40)));
        }
    }
    if !out.is_empty() {
        out.push_str(
            "measured / corrected as in \"Under load\": T' = T − f·T, S' = S + Ω·S_int, R' = S'/H; \
             irq time % = f on the figure's CPUs; irq/s achieved = the interrupt source on the \
             figure's first CPU; chart: █ raw, ▒ corrected\n",
        );
    }
    out
}

/// A load study's three tables (`--preset rtos-load`): Fail_sys per
/// frequency; raw and corrected task switch and preemption per level; raw
/// and corrected scores per level.
pub fn render_study(st: &LoadStudy, levels: &[(String, Vec<FigureRecord>)]) -> String {
    let find = |rs: &[FigureRecord], id: &str| rs.iter().find(|r| r.benchmark == id).cloned();
    let mut out = format!("\n{}\n", st.study);
    // 1. Fail_sys per frequency, under the application load alone.
    if let Some((label, rs)) = levels.first() {
        let mut t = new_table(vec!["Hz", "wake-ups", "failures", "Fail_sys %"]);
        for r in rs
            .iter()
            .filter(|r| st.once.contains(&r.benchmark.as_str()))
        {
            let Some(p) = r.periodic.as_ref() else {
                continue;
            };
            let ok = matches!(outcome(r), Outcome::Ok(_));
            t.add_row(vec![
                format!("{}", p.frequency_hz),
                p.wakeups
                    .filter(|_| ok)
                    .map_or("-".into(), |w| w.to_string()),
                p.failures
                    .filter(|_| ok)
                    .map_or("-".into(), |f| f.to_string()),
                p.fail_ratio
                    .filter(|_| ok)
                    .map_or("-".into(), |f| format!("{:.2}", f * 100.0)),
            ]);
        }
        align_right(&mut t, 0..4);
        out.push_str(&format!(
            "\n1. Fail_sys per interrupt frequency (timer-failures, {label}: wake-ups later than tolerance × period)\n{t}\n"
        ));
    }
    // 2. Task switch (and preemption), raw and corrected, per level.
    let times = |r: Option<FigureRecord>| -> [String; 3] {
        match r {
            Some(r) => figure_cells(&r, r.correction.as_ref()),
            None => ["-".into(), "-".into(), "-".into()],
        }
    };
    let mut t = new_table(vec![
        "level",
        "task switch",
        "corrected",
        "irq time %",
        "preemption",
        "corrected",
    ]);
    for (label, rs) in levels {
        let [ts, share, tsc] = times(find(rs, "rhealstone-task-switch"));
        let [pr, _, prc] = times(find(rs, "rhealstone-preemption"));
        t.add_row(vec![label.clone(), ts, tsc, share, pr, prc]);
    }
    align_right(&mut t, 1..6);
    out.push_str(&format!(
        "\n2. Rhealstone task switch and preemption per level, raw and corrected (T' = T − f·T)\n{t}\n"
    ));
    // 3. Thread-Metric scores, raw and corrected, per level.
    let scores = |r: Option<FigureRecord>| -> [String; 2] {
        match r {
            Some(r) => {
                let [raw, _, corrected] = figure_cells(&r, r.correction.as_ref());
                [raw, corrected]
            }
            None => ["-".into(), "-".into()],
        }
    };
    let mut t = new_table(vec![
        "level",
        "cooperative",
        "corrected",
        "preemptive",
        "corrected",
    ]);
    for (label, rs) in levels {
        let [c, cc] = scores(find(rs, "thread-metric-cooperative"));
        let [p, pc] = scores(find(rs, "thread-metric-preemptive"));
        t.add_row(vec![label.clone(), c, cc, p, pc]);
    }
    align_right(&mut t, 1..5);
    out.push_str(&format!(
        "\n3. Thread-Metric scores per level, raw (S, R = S/H) and corrected (S' = S + Ω·S_int, R' = S'/H)\n{t}\n{}\n",
        st.differences
    ));
    out
}
