//! `ipcmark list`: the registry as a table.

use super::{Failure, ListArgs, print_stdout};
use crate::engine::channel::{Payload, Topology};
use crate::mechanisms::REGISTRY;
use crate::output::table::{fit_width, format_size};
use comfy_table::{ContentArrangement, Table, presets};
use std::process::ExitCode;

/// One mechanism as `ipcmark list --json` prints it.
#[derive(serde::Serialize)]
struct Entry {
    id: &'static str,
    summary: &'static str,
    /// "bytes" (swept by --sizes) or "fixed".
    payload: &'static str,
    /// Fixed payload size, or the largest message on this system (null: no limit).
    max_bytes: Option<usize>,
    /// Where the limit comes from.
    limit_reason: Option<String>,
    /// Whether the mechanism runs without a peer (sends to itself).
    self_loop: bool,
    /// Whether the hand-off busy-waits (needs two CPUs).
    spins: bool,
}

fn entries() -> Vec<Entry> {
    REGISTRY
        .iter()
        .map(|m| {
            let info = m.info();
            let limit = m.size_limit();
            let (payload, max_bytes, limit_reason) = match info.payload {
                Payload::Fixed(n) => ("fixed", Some(n), None),
                Payload::Bytes => (
                    "bytes",
                    limit.as_ref().map(|l| l.max_bytes),
                    limit.map(|l| l.reason),
                ),
            };
            Entry {
                id: info.id,
                summary: info.summary,
                payload,
                max_bytes,
                limit_reason,
                self_loop: info.topology == Topology::SelfLoop,
                spins: info.spins,
            }
        })
        .collect()
}

pub fn list(args: ListArgs) -> Result<ExitCode, Failure> {
    if args.json {
        let text =
            serde_json::to_string_pretty(&entries()).map_err(|e| Failure::run(e.to_string()))?;
        print_stdout(&format!("{text}\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = Table::new();
    t.load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec![
            "mechanism",
            "what it measures",
            "largest message",
            "modes",
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
        if info.spins {
            modes.push("needs 2 CPUs");
        }
        t.add_row(vec![
            info.id.to_string(),
            info.summary.to_string(),
            largest,
            modes.join(", "),
        ]);
    }
    fit_width(&mut t);
    print_stdout(&format!("{t}\n"))?;
    Ok(ExitCode::SUCCESS)
}
