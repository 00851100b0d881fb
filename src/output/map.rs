//! The page of `ipcmark map` (drawn from its report alone, so `show` prints
//! it again): per mechanism and size a heat map, one character per pair in
//! topology order with the class boundaries drawn (numbers with `--long`),
//! then the classes' table; and each matrix as CSV.

use crate::machine::topology::{CpuPlace, Distance, Level, Topology};
use crate::output::sanitise;
use crate::output::table::cells::{align_right, new_table, us};
use crate::record::map::{CellRecord, MapSettingsRecord, MatrixRecord, TopologyRecord};
use crate::record::{RunRecord, Status};

/// The ramp a cell's level is drawn with, lowest first.
const RAMP: [char; 9] = ['.', ':', '-', '=', '+', '*', '#', '%', '@'];
/// ANSI 256-colour foregrounds for the ramp's levels, green to red.
const COLOURS: [u8; 9] = [46, 82, 118, 190, 226, 220, 214, 208, 196];

/// The map's part of the page: what was mapped, each matrix, the classes.
/// `long`: the numbers instead of the heat maps; `colour`: styled for a terminal.
pub fn render(report: &RunRecord, long: bool, colour: bool) -> String {
    let (Some(settings), Some(map)) = (&report.settings.map, &report.map) else {
        return String::new();
    };
    let mut out = summary_line(report, settings);
    for m in &map.matrices {
        out.push('\n');
        out.push_str(&if long {
            numbers(m, &settings.topology)
        } else {
            heat_map(m, settings, colour)
        });
    }
    out.push('\n');
    out.push_str(&class_table(&map.matrices));
    out.push_str(&probe_line(report));
    out
}

/// The pairs' cache-line round trips by class (the placement probe), and
/// where they say another placement than the topology does.
fn probe_line(report: &RunRecord) -> String {
    let classes = crate::analysis::placement::map_classes(report);
    if classes.is_empty() {
        return String::new();
    }
    let each: Vec<String> = classes
        .iter()
        .map(|c| format!("{} {:.0} ns", sanitise::text(&c.class), c.median_ns))
        .collect();
    let mut line = format!(
        "cache-line round trip by class (placement probe, median of the pairs): {}",
        each.join(", ")
    );
    let odd: Vec<String> = classes
        .iter()
        .filter(|c| c.agrees == Some(false))
        .map(|c| format!("{} pairs suggest {}", sanitise::text(&c.class), c.suggests))
        .collect();
    if odd.is_empty() {
        line.push_str(": as the topology says\n");
    } else {
        line.push_str(&format!(
            "; not as the topology says: {} (on a VM the topology is the guest's, not where the \
             host runs it)\n",
            odd.join(", ")
        ));
    }
    line
}

/// What the map covered, in one or two lines.
fn summary_line(report: &RunRecord, s: &MapSettingsRecord) -> String {
    let topo = topology_of(&s.topology);
    let cpus = topo.cpus.len();
    let mut line = format!(
        "\nmap: {} pair(s) of {cpus} CPU(s) on {} package(s), {} node(s){}, {} pass(es) each; pages: {} ({})\n",
        s.pairs.len(),
        topo.packages(),
        topo.nodes(),
        match s.sample {
            Some(k) => format!(", {k} per class (--sample)"),
            None => String::new(),
        },
        report.settings.passes,
        s.home.requested,
        s.home.note,
    );
    if topo.nodes() > 1 {
        // Which rows and columns each node holds, in the map's order.
        let ids = topo.cpu_ids();
        let nodes: Vec<String> = topo
            .groups(Level::Node)
            .iter()
            .map(|g| {
                let cpus: Vec<String> = ids[g.start..g.start + g.len]
                    .iter()
                    .map(|c| c.to_string())
                    .collect();
                format!("{}: CPUs {}", g.name, cpus.join(","))
            })
            .collect();
        line.push_str(&format!("nodes: {}\n", nodes.join("; ")));
    }
    for n in &s.topology.notes {
        line.push_str(&format!("topology: {n}\n"));
    }
    line
}

/// The topology a map's record holds, as the engine's reader gives one:
/// its order, its groups and its classes.
pub fn topology_of(t: &TopologyRecord) -> Topology {
    Topology::new(
        t.cpus
            .iter()
            .map(|c| CpuPlace {
                cpu: c.cpu,
                package: c.package,
                core: c.core,
                node: c.node,
                llc: c.llc,
                llc_level: c.llc_level,
                smt_siblings: c.smt_siblings.clone(),
                core_type: c.core_type.clone(),
                capacity: c.capacity,
            })
            .collect(),
        t.notes.clone(),
    )
}

/// Where a heat map draws a line: before each CPU (by its index in the
/// topology's order) that starts another last-level cache, package or node.
pub fn boundaries(t: &Topology) -> Vec<bool> {
    let mut cuts = vec![false; t.cpus.len()];
    for g in t.groups(Level::Llc).iter().skip(1) {
        cuts[g.start] = true;
    }
    cuts
}

/// The cell of `m` for the pair, if it was planned.
fn cell_at(m: &MatrixRecord, client: usize, server: usize) -> Option<&CellRecord> {
    m.cells
        .iter()
        .find(|c| c.client == client && c.server == server)
}

/// The levels' lower bounds between the lowest and highest median, on a log
/// scale when they are more than twice apart (latencies span orders of
/// magnitude across classes), else linear.
fn levels(m: &MatrixRecord) -> Option<Vec<f64>> {
    let medians: Vec<f64> = m.cells.iter().filter_map(|c| c.median_ns).collect();
    let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() || lo <= 0.0 {
        return None;
    }
    let n = RAMP.len() as f64;
    Some(
        (0..RAMP.len())
            .map(|k| {
                let f = k as f64 / n;
                if hi / lo > 2.0 {
                    lo * (hi / lo).powf(f)
                } else {
                    lo + (hi - lo) * f
                }
            })
            .collect(),
    )
}

/// The ramp level of `v` among `bounds`.
fn level(v: f64, bounds: &[f64]) -> usize {
    bounds.iter().rposition(|&b| v >= b).unwrap_or(0)
}

/// One matrix as a heat map: a row per client CPU, a column per server
/// CPU, in topology order, `│` and `─` where the group changes.
fn heat_map(m: &MatrixRecord, s: &MapSettingsRecord, colour: bool) -> String {
    let t = topology_of(&s.topology);
    let cpus = t.cpu_ids();
    let cuts = boundaries(&t);
    let width = cpus.iter().max().map_or(1, |c| c.to_string().len());
    let bounds = levels(m);
    let mut out = format!(
        "{} {} — one-way µs, row: client CPU, column: server CPU\n",
        m.benchmark,
        size_words(m.size_bytes)
    );
    // Column headings: one character per CPU, its digits stacked.
    for d in 0..width {
        out.push_str(&" ".repeat(width + 1));
        for (i, c) in cpus.iter().enumerate() {
            if cuts[i] {
                out.push(' ');
            }
            let digits = format!("{c:>width$}");
            out.push(digits.as_bytes()[d] as char);
        }
        out.push('\n');
    }
    for (r, &client) in cpus.iter().enumerate() {
        if cuts[r] {
            out.push_str(&" ".repeat(width + 1));
            for (i, _) in cpus.iter().enumerate() {
                out.push_str(if cuts[i] { "┼─" } else { "─" });
            }
            out.push('\n');
        }
        out.push_str(&format!("{client:>width$} "));
        for (i, &server) in cpus.iter().enumerate() {
            if cuts[i] {
                out.push('│');
            }
            let (ch, lvl) = match cell_at(m, client, server) {
                None => (' ', None),
                Some(c) => match (c.status, c.median_ns, &bounds) {
                    (Status::Ok, Some(v), Some(b)) => {
                        let l = level(v, b);
                        (RAMP[l], Some(l))
                    }
                    (Status::Skipped, ..) => ('-', None),
                    _ => ('x', None),
                },
            };
            match (colour, lvl) {
                (true, Some(l)) => out.push_str(&format!("\x1b[38;5;{}m{ch}\x1b[0m", COLOURS[l])),
                _ => out.push(ch),
            }
        }
        out.push('\n');
    }
    out.push_str(&legend(m, bounds.as_deref()));
    out
}

/// What each character stands for, and the notes of cells not measured.
fn legend(m: &MatrixRecord, bounds: Option<&[f64]>) -> String {
    let mut out = String::new();
    if let Some(b) = bounds {
        let hi = m
            .cells
            .iter()
            .filter_map(|c| c.median_ns)
            .fold(f64::NEG_INFINITY, f64::max);
        let used: Vec<usize> = (0..RAMP.len())
            .filter(|&l| {
                m.cells
                    .iter()
                    .filter_map(|c| c.median_ns)
                    .any(|v| level(v, b) == l)
            })
            .collect();
        let parts: Vec<String> = used
            .iter()
            .map(|&l| {
                let top = b.get(l + 1).copied().unwrap_or(hi).min(hi);
                format!("{} {}–{}", RAMP[l], us(b[l]), us(top))
            })
            .collect();
        out.push_str(&format!("  {} µs\n", parts.join("  ")));
    }
    let mut marks = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    for c in &m.cells {
        let why = c.reason.clone().unwrap_or_default();
        match c.status {
            Status::Ok => {}
            Status::Skipped => {
                if !reasons.contains(&why) {
                    reasons.push(why.clone());
                    marks.push(format!("- skipped: {why}"));
                }
            }
            _ => marks.push(format!(
                "x CPU {} → CPU {} failed: {why}",
                c.client, c.server
            )),
        }
    }
    if m.cells.len() < cells_possible(m) {
        marks.push("blank: not measured (--sample, or the run was stopped)".into());
    }
    for line in marks {
        out.push_str(&format!("  {line}\n"));
    }
    out
}

/// Pairs of the CPUs the matrix spans.
fn cells_possible(m: &MatrixRecord) -> usize {
    let mut cpus: Vec<usize> = m.cells.iter().flat_map(|c| [c.client, c.server]).collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus.len() * cpus.len()
}

/// One matrix as numbers (`--long`): µs, with the interval's half-width.
fn numbers(m: &MatrixRecord, t: &TopologyRecord) -> String {
    let cpus = topology_of(t).cpu_ids();
    let mut header = vec!["client \\ server".to_string()];
    header.extend(cpus.iter().map(|c| c.to_string()));
    let mut table = new_table(header);
    for &client in &cpus {
        let mut row = vec![client.to_string()];
        for &server in &cpus {
            row.push(match cell_at(m, client, server) {
                None => String::new(),
                Some(c) => match (c.status, c.median_ns) {
                    (Status::Ok, Some(v)) => match c.interval {
                        Some(i) => format!("{} ±{:.0}%", us(v), i * 100.0),
                        None => us(v),
                    },
                    (Status::Skipped, _) => "skipped".into(),
                    _ => "failed".into(),
                },
            });
        }
        table.add_row(row);
    }
    align_right(&mut table, 1..cpus.len() + 1);
    format!(
        "{} {} — one-way µs ±95% interval, row: client CPU, column: server CPU\n{table}\n",
        m.benchmark,
        size_words(m.size_bytes)
    )
}

/// The classes: for each, its pairs, then each matrix's median of the
/// class's pair medians and how far apart its pairs lie.
fn class_table(matrices: &[MatrixRecord]) -> String {
    let Some(first) = matrices.first() else {
        return String::new();
    };
    // A row per mechanism, a column per class: a machine has a handful of
    // classes, a map often more mechanisms.
    let mut header = vec!["mechanism".to_string()];
    header.extend(
        first
            .classes
            .iter()
            .map(|c| format!("{} ({} pairs)", c.class, c.pairs)),
    );
    let mut table = new_table(header);
    for m in matrices {
        let mut row = vec![format!("{} {}", m.benchmark, size_words(m.size_bytes))];
        for k in 0..first.classes.len() {
            row.push(match m.classes.get(k) {
                Some(c) => match c.median_ns {
                    Some(v) if c.measured > 1 => format!(
                        "{} ({}–{})",
                        us(v),
                        us(c.min_ns.unwrap_or(v)),
                        us(c.max_ns.unwrap_or(v))
                    ),
                    Some(v) => us(v),
                    None => "–".into(),
                },
                None => "–".into(),
            });
        }
        table.add_row(row);
    }
    align_right(&mut table, 1..first.classes.len() + 1);
    let mut out = format!(
        "classes — median one-way µs of the class's pairs (lowest–highest pair)\n{table}\n"
    );
    for c in &first.classes {
        // The class's distance is the first word of its label ("same-llc P→E").
        if let Some(d) = c.class.split(' ').next().and_then(Distance::from_name) {
            out.push_str(&format!("  {}: {}\n", d.name(), d.description()));
        }
    }
    out
}

/// Each matrix as a CSV file: its name (`map-pipe-64.csv`) and text. A row
/// per client CPU, a column per server CPU, in topology order; a cell is
/// the pair's one-way median in ns, as written in the report (so it reads
/// back exactly), empty where the pair was not measured.
pub fn csv_files(report: &RunRecord) -> Vec<(String, String)> {
    let (Some(s), Some(map)) = (&report.settings.map, &report.map) else {
        return Vec::new();
    };
    let cpus = topology_of(&s.topology).cpu_ids();
    map.matrices
        .iter()
        .map(|m| {
            let mut text = String::from("client\\server");
            for c in &cpus {
                text.push_str(&format!(",{c}"));
            }
            text.push('\n');
            for &client in &cpus {
                text.push_str(&client.to_string());
                for &server in &cpus {
                    text.push(',');
                    if let Some(v) = cell_at(m, client, server).and_then(|c| c.median_ns) {
                        text.push_str(&v.to_string());
                    }
                }
                text.push('\n');
            }
            (
                format!("map-{}-{}.csv", safe_name(&m.benchmark), m.size_bytes),
                text,
            )
        })
        .collect()
}

/// A message size as a heading reads it: "64 B", "4K", "1M".
pub fn size_words(bytes: usize) -> String {
    let s = crate::record::units::format_size(bytes);
    if bytes < 1024 { format!("{s} B") } else { s }
}

/// A report's mechanism name made safe for a file name.
fn safe_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Reads a matrix CSV back: each (client, server, median ns) written.
#[cfg(test)]
pub fn parse_csv(text: &str) -> Result<Vec<(usize, usize, f64)>, String> {
    let mut lines = text.lines();
    let head = lines.next().ok_or("empty matrix CSV")?;
    let servers: Vec<usize> = head
        .split(',')
        .skip(1)
        .map(|c| c.parse().map_err(|_| format!("bad server CPU '{c}'")))
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for line in lines {
        let mut fields = line.split(',');
        let client: usize = fields
            .next()
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| format!("bad row '{line}'"))?;
        for (k, v) in fields.enumerate() {
            if v.is_empty() {
                continue;
            }
            let server = *servers
                .get(k)
                .ok_or_else(|| format!("row '{line}' is too long"))?;
            let v: f64 = v.parse().map_err(|_| format!("bad median '{v}'"))?;
            out.push((client, server, v));
        }
    }
    Ok(out)
}

/// Two maps compared class by class: each matrix's classes, A's and B's
/// medians, the change and the verdict of its test.
pub fn compare_table(r: &crate::record::map::MapCompareRecord) -> String {
    let mut table = new_table(vec![
        "mechanism",
        "size",
        "class",
        "pairs A/B",
        "A µs",
        "B µs",
        "change",
        "p",
        "verdict",
    ]);
    for c in &r.classes {
        table.add_row(vec![
            c.benchmark.clone(),
            size_words(c.size_bytes),
            c.class.clone(),
            format!("{}/{}", c.pairs_a, c.pairs_b),
            us(c.median_a_ns),
            us(c.median_b_ns),
            format!("{:+.1}%", c.change_percent),
            c.p.map_or("–".into(), |p| format!("{p:.3}")),
            c.verdict.clone(),
        ]);
    }
    align_right(&mut table, 3..8);
    let mut out = format!(
        "map B ({}, {}) against map A ({}, {}), class by class; α = {}\n\
         the test: Welch's t on the logs of every pass median of the class's pairs\n{table}\n",
        r.b.path, r.b.started_at, r.a.path, r.a.started_at, r.alpha
    );
    for u in &r.unmatched {
        out.push_str(&format!("not compared: {u}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> RunRecord {
        RunRecord::parse(include_str!("../../tests/reports/map.json")).unwrap()
    }

    #[test]
    fn each_matrix_csv_reads_back_every_cells_median_exactly() {
        let r = fixture();
        let files = csv_files(&r);
        let map = r.map.as_ref().unwrap();
        assert_eq!(files.len(), map.matrices.len());
        for ((name, text), m) in files.iter().zip(&map.matrices) {
            assert_eq!(*name, format!("map-{}-{}.csv", m.benchmark, m.size_bytes));
            let read = parse_csv(text).unwrap();
            let measured: Vec<(usize, usize, f64)> = m
                .cells
                .iter()
                .filter_map(|c| Some((c.client, c.server, c.median_ns?)))
                .collect();
            assert_eq!(read.len(), measured.len(), "{name}");
            for cell in &measured {
                assert!(read.contains(cell), "{name}: {cell:?} not read back");
            }
        }
        assert!(parse_csv("").is_err());
        assert!(parse_csv("client\\server,0\n0,fast\n").is_err());
    }

    #[test]
    fn the_heat_map_marks_skipped_and_unmeasured_pairs_and_the_long_page_has_numbers() {
        let mut r = fixture();
        let page = render(&r, false, false);
        assert!(page.contains("- skipped: busy-wait hand-off"), "{page}");
        assert!(!page.contains("blank: not measured"), "{page}");
        let long = render(&r, true, false);
        assert!(long.contains("client \\ server"), "{long}");
        assert!(long.contains("skipped"), "{long}");
        // A pair the map did not reach is blank, and said so.
        let m = r.map.as_mut().unwrap();
        for x in &mut m.matrices {
            x.cells.pop();
        }
        let page = render(&r, false, false);
        assert!(page.contains("blank: not measured"), "{page}");
        // Colour only where asked.
        assert!(!page.contains('\x1b'));
        assert!(render(&r, false, true).contains("\x1b[38;5;"));
    }

    #[test]
    fn levels_rise_with_the_median_on_a_log_scale_when_it_spans_more_than_twice() {
        let r = fixture();
        for m in &r.map.as_ref().unwrap().matrices {
            let b = levels(m).unwrap();
            assert!(b.windows(2).all(|w| w[0] < w[1]), "{b:?}");
            let lo = m
                .cells
                .iter()
                .filter_map(|c| c.median_ns)
                .fold(f64::INFINITY, f64::min);
            let hi = m
                .cells
                .iter()
                .filter_map(|c| c.median_ns)
                .fold(0.0, f64::max);
            assert_eq!(level(lo, &b), 0);
            assert_eq!(level(hi, &b), RAMP.len() - 1);
        }
    }

    #[test]
    fn the_pairs_probes_are_given_by_class_and_said_where_the_topology_disagrees() {
        use crate::record::placement::{PairProbeRecord, PlacementProbeRecord, ProbeSampleRecord};
        let mut r = fixture();
        assert!(
            !render(&r, false, false).contains("cache-line"),
            "no probe, no line"
        );
        let pairs = &r.settings.map.as_ref().unwrap().pairs;
        let probed = |ns: f64| -> Vec<PairProbeRecord> {
            pairs
                .iter()
                .filter(|p| p.client != p.server)
                .map(|p| PairProbeRecord {
                    cpus: [p.client, p.server],
                    probe: ProbeSampleRecord {
                        median_ns: ns,
                        p10_ns: ns,
                        p90_ns: ns,
                    },
                })
                .collect()
        };
        let classes: Vec<String> = pairs
            .iter()
            .filter(|p| p.client != p.server)
            .map(|p| p.class.clone())
            .collect();
        assert!(!classes.is_empty());
        let record = |pairs| PlacementProbeRecord {
            cpus: [0, 1],
            start: None,
            passes: Vec::new(),
            end: None,
            pairs,
            clock_ns: 0.1,
            took_ns: 0,
            class: None,
            failed: None,
        };
        // Every pair 330 ns: across caches, whatever the topology says.
        r.placement_probe = Some(record(probed(330.0)));
        let page = render(&r, false, false);
        let line = page
            .lines()
            .find(|l| l.starts_with("cache-line round trip by class"))
            .unwrap_or_else(|| panic!("{page}"));
        assert!(line.contains(&format!("{} 330 ns", classes[0])), "{line}");
        let same_llc = classes
            .iter()
            .any(|c| c.starts_with("same-llc") || c.starts_with("smt"));
        assert_eq!(
            line.contains("not as the topology says"),
            same_llc,
            "{line}"
        );
    }
}
