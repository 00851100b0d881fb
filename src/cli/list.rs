//! `ipcmark list`: the registries as tables (or JSON, of the records in
//! `output/list.rs`), and the groups.

use super::{Failure, ListArgs, print_stdout};
use crate::benchmarks::{self, Benchmark, GROUPS, IPC};
use crate::engine::channel::{Payload, StreamSupport, Topology};
use crate::mechanisms::REGISTRY;
use crate::output::list::{Entry, PresetEntry};
use crate::output::table::{fit_width, format_size};
use comfy_table::{ContentArrangement, Table, presets};
use std::process::ExitCode;

fn entries() -> Vec<Entry> {
    let mechanisms = REGISTRY.iter().map(|&m| Entry::mechanism(m, IPC));
    let benchmarks = benchmarks::REGISTRY.iter().map(|&b| match b {
        Benchmark::Op(b) => Entry::op(b),
        Benchmark::Periodic(b) => Entry::periodic(b),
        Benchmark::Scored(b) => Entry::score(b),
    });
    mechanisms.chain(benchmarks).collect()
}

fn score_table() -> Table {
    let mut t = Table::new();
    t.load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec![
            "benchmark",
            "what it measures (mode score)",
            "one operation",
        ]);
    for &b in benchmarks::REGISTRY {
        let Benchmark::Scored(b) = b else { continue };
        let info = b.info();
        let mut op = info.operation.to_string();
        if info.is_baseline {
            op.push_str(" (baseline: R = S / H)");
        }
        if info.needs_fifo {
            op.push_str("; needs SCHED_FIFO");
        }
        t.add_row(vec![info.id.to_string(), info.summary.to_string(), op]);
    }
    fit_width(&mut t);
    if let Some(c) = t.column_mut(0) {
        c.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
    }
    t
}

fn periodic_table() -> Table {
    let mut t = Table::new();
    t.load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec!["benchmark", "what it measures (mode periodic)"]);
    for &b in benchmarks::REGISTRY {
        let Benchmark::Periodic(b) = b else { continue };
        let info = b.info();
        t.add_row(vec![info.id, info.summary]);
    }
    fit_width(&mut t);
    t
}

fn mechanism_table() -> Table {
    let mut t = Table::new();
    t.load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec![
            "mechanism",
            "what it measures",
            "largest message",
            "modes",
            "needs",
        ]);
    for m in REGISTRY {
        let info = m.info();
        let largest = match (info.payload, m.size_limit()) {
            (Payload::Fixed(0), _) => "no payload (notification)".to_string(),
            (Payload::Fixed(n), _) => format!("fixed {n} B value"),
            (Payload::Bytes, Some(l)) => format!("{} ({})", format_size(l.max_bytes), l.reason),
            (Payload::Bytes, None) => "any size".to_string(),
        };
        let mut modes = vec![match info.topology {
            Topology::Peer => "pingpong",
            Topology::SelfLoop => "pingpong (self)",
        }];
        match m.stream() {
            StreamSupport::Queued => modes.push("stream"),
            StreamSupport::Lossy => modes.push("stream (lossy)"),
            StreamSupport::No(_) => {}
        }
        // An offered rate needs a queue and a peer to receive it.
        if !matches!(m.stream(), StreamSupport::No(_)) && info.topology == Topology::Peer {
            modes.push("rate");
        }
        if info.spins {
            modes.push("needs 2 CPUs");
        }
        let needs: Vec<String> = m
            .requires()
            .map(str::to_string)
            .into_iter()
            .chain(
                m.unavailable()
                    .map(|why| format!("unavailable here: {why}")),
            )
            .collect();
        t.add_row(vec![
            info.id.to_string(),
            info.summary.to_string(),
            largest,
            modes.join(", "),
            needs.join("; "),
        ]);
    }
    fit_width(&mut t);
    t
}

fn op_table() -> Table {
    let mut t = Table::new();
    t.load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec!["benchmark", "what one operation is", "system calls"]);
    for &b in benchmarks::REGISTRY {
        let Benchmark::Op(b) = b else { continue };
        let info = b.info();
        let mut calls = if info.enters.is_empty() {
            "none".to_string()
        } else {
            info.enters
                .iter()
                .map(|c| c.name)
                .collect::<Vec<_>>()
                .join(" + ")
        };
        for a in info.avoids {
            calls.push_str(&format!(" (not {}: vDSO)", a.name));
        }
        if let Some(why) = b.unavailable() {
            calls.push_str(&format!("; unavailable: {why}"));
        }
        t.add_row(vec![info.id.to_string(), info.summary.to_string(), calls]);
    }
    fit_width(&mut t);
    t
}

fn list_presets(json: &super::flags::JsonStdout) -> Result<ExitCode, Failure> {
    let entries: Vec<PresetEntry> = crate::presets::PRESETS
        .iter()
        .map(PresetEntry::from)
        .chain(crate::presets::LOAD_STUDIES.iter().map(PresetEntry::from))
        .collect();
    if json.on() {
        let text =
            serde_json::to_string_pretty(&entries).map_err(|e| Failure::run(e.to_string()))?;
        json.emit(&format!("{text}\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = Table::new();
    t.load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec!["preset", "reproduces", "columns", "sizes"]);
    fit_width(&mut t);
    for e in &entries {
        let (columns, sizes) = match (e.load, e.levels_hz) {
            (Some(load), Some(levels)) => {
                let freqs: Vec<String> = levels.iter().map(|f| f.to_string()).collect();
                (
                    format!(
                        "{}; load {load} plus irq at each level",
                        e.columns.join(", ")
                    ),
                    format!("levels: none, {} Hz", freqs.join(", ")),
                )
            }
            _ => (
                e.columns.join("; "),
                format!(
                    "{} ({}–{} B)",
                    e.sizes.len(),
                    e.sizes[0],
                    e.sizes[e.sizes.len() - 1]
                ),
            ),
        };
        t.add_row(vec![
            e.name.to_string(),
            e.study.to_string(),
            columns,
            sizes,
        ]);
    }
    print_stdout(&format!("{t}\nrun one with: ipcmark run --preset NAME\n"))?;
    Ok(ExitCode::SUCCESS)
}

pub fn list(args: ListArgs) -> Result<ExitCode, Failure> {
    args.json.check()?;
    if args.what == Some(super::ListWhat::Presets) {
        return list_presets(&args.json);
    }
    if args.json.on() {
        let text =
            serde_json::to_string_pretty(&entries()).map_err(|e| Failure::run(e.to_string()))?;
        args.json.emit(&format!("{text}\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = format!(
        "{}\n\n{}\n\n{}\n\n{}\n\ngroups (ipcmark run GROUP):\n",
        mechanism_table(),
        op_table(),
        periodic_table(),
        score_table()
    );
    let available = benchmarks::available_groups();
    for g in GROUPS {
        let count = if g.name == IPC {
            format!("{} mechanisms", REGISTRY.len())
        } else {
            format!("{} benchmarks", benchmarks::members(g.name).len())
        };
        let state = if available.contains(&g.name) {
            count
        } else {
            "reserved".to_string()
        };
        out.push_str(&format!("  {:<13} {} ({state})\n", g.name, g.summary));
    }
    out.push_str(&format!("  {:<13} every group\n", benchmarks::ALL));
    print_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}
