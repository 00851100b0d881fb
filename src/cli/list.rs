//! `ipcmark list`: the registry as a table.

use super::{Failure, print_stdout};
use crate::engine::channel::{Payload, Topology};
use crate::mechanisms::REGISTRY;
use crate::output::table::{fit_width, format_size};
use comfy_table::{ContentArrangement, Table, presets};
use std::process::ExitCode;

pub fn list() -> Result<ExitCode, Failure> {
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
