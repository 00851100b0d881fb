//! The table of a run against an agent on another host: every remote
//! figure beside the link's theoretical best for it and the fraction it
//! reached (docs/remote.md says how the best is computed).

use super::cells::{align_right, new_table, num, percent, size_cell, us};
use super::figure::{Outcome, outcome};
use crate::record::remote::RemoteRecord;
use crate::record::{FigureRecord, Mode};

/// Whether `r`'s link is a rate shaper's and its figure has a floor: a
/// floor a shaper does not impose, so no efficiency is given.
fn floor_on_shaper(r: &RemoteRecord) -> bool {
    r.link.as_ref().is_some_and(|l| l.shaper)
        && r.limit.as_ref().is_some_and(|l| l.floor_ns.is_some())
}

/// What a row's figure and best are, by mode: a stream's MB/s against the
/// link's most; a time per message (one way) against the floor of its
/// serialisation.
fn figure_and_best(f: &FigureRecord) -> (String, String) {
    let limit = f.remote.as_ref().and_then(|r| r.limit.as_ref());
    let median = match outcome(f) {
        Outcome::Ok(m) if m.summary.median > 0.0 => Some(m.summary.median),
        _ => None,
    };
    match f.mode {
        Mode::Stream => (
            median.map_or("-".into(), |ns| {
                format!("{} MB/s", num(f.size_bytes as f64 * 1e3 / ns))
            }),
            limit
                .and_then(|l| l.max_bytes_per_s)
                .map_or("-".into(), |b| format!("{} MB/s", num(b / 1e6))),
        ),
        _ => (
            median.map_or("-".into(), |ns| format!("{} µs", us(ns))),
            limit
                .and_then(|l| l.floor_ns)
                .map_or("-".into(), |ns| format!("{} µs", us(ns))),
        ),
    }
}

/// The table, or nothing when no figure ran against an agent.
pub fn render(results: &[FigureRecord]) -> String {
    let remote: Vec<&FigureRecord> = results.iter().filter(|r| r.remote.is_some()).collect();
    let Some(first) = remote.first().and_then(|r| r.remote.as_ref()) else {
        return String::new();
    };
    let link = match &first.link {
        Some(l) => format!(
            "{} Mbit/s ({}), MTU {}, TCP timestamps {}",
            num(l.bits_per_s as f64 / 1e6),
            l.source,
            l.mtu,
            if l.tcp_timestamps { "on" } else { "off" }
        ),
        None => {
            return format!(
                "\nagainst the link to the agent at {}: its speed is unknown: give --link-speed \
                 for each figure's efficiency\n",
                first.agent
            );
        }
    };
    let mut t = new_table(vec![
        "mechanism",
        "mode",
        "size",
        "figure",
        "frames",
        "wire B",
        "link's best",
        "efficiency",
    ]);
    for f in &remote {
        let r = f.remote.as_ref().expect("filtered");
        let mode = match &r.direction {
            Some(d) => format!("{} {d}", f.mode.name()),
            None => f.mode.name().to_string(),
        };
        let (figure, best) = figure_and_best(f);
        let figure = match outcome(f) {
            Outcome::Ok(_) => figure,
            Outcome::Skipped(_) => "skipped".into(),
            Outcome::Failed(_) => "failed".into(),
            Outcome::BelowResolution(_) => "below resolution".into(),
        };
        let limit = r.limit.as_ref();
        t.add_row(vec![
            f.benchmark.to_string(),
            mode,
            size_cell(f.size_bytes),
            figure,
            limit.map_or("-".into(), |l| num(l.frames_per_message)),
            limit.map_or("-".into(), |l| format!("{:.0}", l.wire_bytes_per_message)),
            best,
            match r.efficiency {
                Some(e) => format!("{}%", percent(e)),
                None if floor_on_shaper(r) => "shaper".into(),
                None => "-".into(),
            },
        ]);
    }
    align_right(&mut t, 2..8);
    let clocks: Vec<String> = remote
        .iter()
        .filter_map(|f| {
            let c = f.remote.as_ref()?.clock.as_ref()?;
            (!c.trusted).then(|| format!("{} {}", f.benchmark, size_cell(f.size_bytes)))
        })
        .collect();
    let mut out = format!(
        "\nagainst the link to the agent at {}: {link}\n{t}\n",
        first.agent
    );
    out.push_str(
        "efficiency: a stream's MB/s ÷ the link's most for its messages; a time one way: the \
         serialisation floor ÷ the figure. wire B: the message's bytes on the wire with every \
         header, preamble, padding and gap.\n",
    );
    if remote
        .iter()
        .any(|f| f.remote.as_ref().is_some_and(floor_on_shaper))
    {
        out.push_str(
            "shaper: the link's speed is a rate shaper's (tc), which holds a frame back only when \
             its bucket is empty: it limits a stream but imposes no serialisation time on a message \
             sent alone, so a time one way has no floor to compare with.\n",
        );
    }
    if !clocks.is_empty() {
        out.push_str(&format!(
            "one-way figures that cannot be trusted (the clock offset's uncertainty is over 10% of \
             the figure): {}\n",
            clocks.join(", ")
        ));
    }
    out
}
