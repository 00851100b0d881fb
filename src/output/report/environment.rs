//! The environment of every run, side by side: the machine, the settings
//! that applied to every figure, the build. A row whose value differs
//! between runs is marked, since a comparison across it compares more than
//! the software.

use super::figures::timestamp;
use super::{RunInput, esc, letter};
use crate::output::doctor::status_name;
use crate::output::machine;
use crate::record::RunRecord;
use crate::record::doctor::CheckRecord;
use crate::record::environment::MpiRecord;

/// A value of a report as a cell shows it: absent "—", a flag yes or no, a
/// fraction to two decimals, a list joined by commas ("none" when empty).
trait Cell {
    fn cell(&self) -> String;
}

impl Cell for str {
    fn cell(&self) -> String {
        self.to_string()
    }
}

impl Cell for String {
    fn cell(&self) -> String {
        self.clone()
    }
}

impl Cell for bool {
    fn cell(&self) -> String {
        if *self { "yes" } else { "no" }.into()
    }
}

impl Cell for f64 {
    fn cell(&self) -> String {
        format!("{}", (self * 100.0).round() / 100.0)
    }
}

macro_rules! whole_cells {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            fn cell(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
whole_cells!(i32, u64, usize);

impl<T: Cell> Cell for Option<T> {
    fn cell(&self) -> String {
        self.as_ref().map_or_else(|| "—".into(), Cell::cell)
    }
}

impl<T: Cell> Cell for [T] {
    fn cell(&self) -> String {
        if self.is_empty() {
            return "none".into();
        }
        self.iter().map(Cell::cell).collect::<Vec<_>>().join(", ")
    }
}

impl<T: Cell> Cell for Vec<T> {
    fn cell(&self) -> String {
        self.as_slice().cell()
    }
}

impl<T: Cell + ?Sized> Cell for &T {
    fn cell(&self) -> String {
        (**self).cell()
    }
}

impl<T: Cell, const N: usize> Cell for [T; N] {
    fn cell(&self) -> String {
        self.as_slice().cell()
    }
}

/// The rows: a label and its cell of a run report.
type Row = (&'static str, fn(&RunRecord) -> String);

const ROWS: &[Row] = &[
    ("host", |r| r.header.environment.hostname.cell()),
    ("kernel", |r| r.header.environment.kernel.cell()),
    ("kernel version", |r| {
        r.header.environment.kernel_version.cell()
    }),
    ("preemption", |r| r.header.environment.preemption.cell()),
    ("architecture", |r| r.header.environment.arch.cell()),
    ("CPU", |r| r.header.environment.cpu_model.cell()),
    ("CPUs online", |r| r.header.environment.logical_cpus.cell()),
    ("CPUs allowed", |r| r.header.environment.allowed_cpus.cell()),
    ("CPU MHz", |r| r.header.environment.cpu_mhz.cell()),
    ("frequency governor", |r| {
        r.header.environment.frequency_governor.cell()
    }),
    ("SMT", |r| r.header.environment.smt.cell()),
    ("virtualization", |r| {
        r.header.environment.virtualization.cell()
    }),
    ("clock source", |r| r.header.environment.clocksource.cell()),
    ("timer slack ns", |r| {
        r.header.environment.timer_slack_ns.cell()
    }),
    ("isolated CPUs", |r| {
        r.header.environment.isolated_cpus.cell()
    }),
    ("nohz_full CPUs", |r| {
        r.header.environment.nohz_full_cpus.cell()
    }),
    ("load average", |r| r.header.environment.load_average.cell()),
    ("CPUs busy at start %", |r| {
        r.header.environment.cpu_busy_percent_at_start.cell()
    }),
    ("cpuidle driver", |r| {
        r.header
            .environment
            .cpu_idle
            .as_ref()
            .map(|i| &i.driver)
            .cell()
    }),
    ("cpuidle governor", |r| {
        r.header
            .environment
            .cpu_idle
            .as_ref()
            .and_then(|i| i.governor.as_ref())
            .cell()
    }),
    ("CPU latency limit held", |r| {
        r.header.environment.cpu_latency.held.cell()
    }),
    ("… if not, why", |r| {
        r.header.environment.cpu_latency.not_held_reason.cell()
    }),
    ("wake-up cost ns", |r| {
        r.header.environment.cpu_latency.wakeup_cost_ns.cell()
    }),
    // The server CPU joins the client's row.
    ("client, server CPU", |r| {
        format!(
            "{}, {}",
            r.settings.client_cpu.cell(),
            r.settings.server_cpu.cell()
        )
    }),
    ("peer", |r| r.settings.peer.name().cell()),
    ("SCHED_FIFO priority", |r| r.settings.rt_priority.cell()),
    ("passes", |r| r.settings.passes.cell()),
    ("precision target", |r| {
        format!("±{}%", r.settings.budget.precision.target * 100.0)
    }),
    ("max time per figure ms", |r| {
        r.settings.budget.precision.max_time.cell()
    }),
    ("quick", |r| r.settings.quick.cell()),
    ("ipcmark", |r| r.header.build.version.cell()),
    ("commit", |r| r.header.build.commit.cell()),
    ("uncommitted changes", |r| r.header.build.dirty.cell()),
    ("started", |r| timestamp(&r.header.started_at)),
    ("finished", |r| {
        r.header
            .finished_at
            .as_deref()
            .map_or("—".into(), timestamp)
    }),
    ("complete", |r| r.header.complete.cell()),
];

/// The MPI job's rows (library, ranks, nodes, where each rank ran, as the
/// page's rank lines), when any run spans one; none otherwise, so that
/// local runs carry no empty rows.
fn mpi_rows(runs: &[RunInput]) -> Vec<(String, Vec<String>)> {
    fn job(r: &RunInput) -> Option<&MpiRecord> {
        r.report.header.environment.mpi.as_ref()
    }
    if runs.iter().all(|r| job(r).is_none()) {
        return Vec::new();
    }
    let places = |r: &RunInput| {
        let ranks = job(r).map_or(&[][..], |j| &j.ranks);
        if ranks.is_empty() {
            return "—".to_string();
        }
        ranks
            .iter()
            .map(|p| {
                format!(
                    "rank {}: node {} {}, bound to {}, on CPU {}",
                    p.rank.cell(),
                    p.node.cell(),
                    p.host.cell(),
                    p.allowed_cpus.cell(),
                    p.cpu.cell()
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let field = |cell: fn(&MpiRecord) -> String| move |r: &RunInput| job(r).map(cell).cell();
    [
        (
            "MPI library",
            runs.iter().map(field(|j| j.library.cell())).collect(),
        ),
        (
            "MPI standard",
            runs.iter().map(field(|j| j.standard.cell())).collect(),
        ),
        (
            "MPI ranks",
            runs.iter().map(field(|j| j.size.cell())).collect(),
        ),
        (
            "MPI nodes",
            runs.iter().map(field(|j| j.nodes.cell())).collect(),
        ),
        ("MPI rank places", runs.iter().map(places).collect()),
    ]
    .into_iter()
    .map(|(l, c)| (l.to_string(), c))
    .collect()
}

/// The environment section.
pub fn section(runs: &[RunInput]) -> String {
    let mut s = String::from(
        "<section class=\"environment\" id=\"environment\"><h2>Environment</h2>\
         <table class=\"data env\"><thead><tr><th></th>",
    );
    for i in 0..runs.len() {
        s.push_str(&format!("<th>run {}</th>", letter(i)));
    }
    s.push_str("</tr></thead><tbody>");
    let mut rows: Vec<(String, Vec<String>)> = ROWS
        .iter()
        .map(|(label, cell)| {
            (
                label.to_string(),
                runs.iter().map(|r| cell(&r.report)).collect(),
            )
        })
        .collect();
    let command = |r: &RunInput| r.report.header.command_line.join(" ");
    rows.extend(mpi_rows(runs));
    let or_none = |l: Option<String>| l.unwrap_or_else(|| "—".into());
    rows.push((
        "machine".into(),
        runs.iter()
            .map(|r| or_none(machine::checks_line(&r.report)))
            .collect(),
    ));
    rows.push((
        "machine level".into(),
        runs.iter()
            .map(|r| or_none(machine::level_line(&r.report)))
            .collect(),
    ));
    rows.push(("command".into(), runs.iter().map(command).collect()));
    for (label, cells) in rows {
        // When and how each run was started always differ: not worth a mark.
        let differs = cells.iter().any(|c| *c != cells[0])
            && !matches!(label.as_str(), "started" | "finished" | "command");
        s.push_str(&format!(
            "<tr{}><th>{}</th>",
            if differs && runs.len() > 1 {
                " class=\"differs\""
            } else {
                ""
            },
            esc(&label)
        ));
        for c in cells {
            s.push_str(&format!("<td>{}</td>", esc(&c)));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    // The CPU vulnerabilities: long, and rarely the point, so folded.
    let mut keys: Vec<&String> = runs
        .iter()
        .flat_map(|r| r.report.header.environment.mitigations.keys())
        .collect();
    keys.sort();
    keys.dedup();
    if !keys.is_empty() {
        s.push_str(
            "<details><summary>CPU vulnerabilities and their mitigations</summary>\
             <table class=\"data env\"><tbody>",
        );
        for k in keys {
            s.push_str(&format!("<tr><th>{}</th>", esc(k)));
            for r in runs {
                s.push_str(&format!(
                    "<td>{}</td>",
                    esc(&r.report.header.environment.mitigations.get(k).cell())
                ));
            }
            s.push_str("</tr>");
        }
        s.push_str("</tbody></table></details>");
    }
    s.push_str(&checks_tables(runs));
    if runs.len() > 1 {
        s.push_str("<p class=\"note\">Marked rows differ between the runs.</p>");
    }
    s.push_str("</section>\n");
    s
}

/// Every check of each run, a row per check (at the start, then each
/// pass's), its status and what it found; folded, as `ipcmark doctor`
/// prints them in full. Empty where no run has checks.
fn checks_tables<'a>(runs: &'a [RunInput]) -> String {
    // (row label, the check of each run) in the order first seen.
    let mut rows: Vec<(String, Vec<Option<&'a CheckRecord>>)> = Vec::new();
    let add = |rows: &mut Vec<(String, Vec<Option<&'a CheckRecord>>)>,
               label: String,
               run: usize,
               c: &'a CheckRecord| {
        match rows.iter_mut().find(|(l, _)| *l == label) {
            Some((_, cells)) => cells[run] = Some(c),
            None => {
                let mut cells = vec![None; runs.len()];
                cells[run] = Some(c);
                rows.push((label, cells));
            }
        }
    };
    for (i, r) in runs.iter().enumerate() {
        for c in r.report.checks.iter().flatten() {
            add(&mut rows, c.id.clone(), i, c);
        }
        for p in r.report.pass_checks.iter().flatten() {
            let pass = match p.level {
                Some(l) => format!("level {l} pass {}", p.pass),
                None => format!("pass {}", p.pass),
            };
            for c in &p.checks {
                add(&mut rows, format!("{} ({pass})", c.id), i, c);
            }
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<details class=\"checks\"><summary>The machine's checks (ipcmark doctor), at the start \
         and over each pass</summary><table class=\"data env\"><tbody>",
    );
    for (label, cells) in rows {
        s.push_str(&format!("<tr><th>{}</th>", esc(&label)));
        for c in cells {
            let text = c.map_or("—".to_string(), |c| {
                format!("{}: {}", status_name(c.status), c.found)
            });
            s.push_str(&format!("<td>{}</td>", esc(&text)));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></details>");
    s
}

#[cfg(test)]
mod tests {
    use super::Cell;

    /// As the page showed the report's JSON values: absent "—", a fraction
    /// to two decimals (a whole one without a point), lists joined.
    #[test]
    fn cells_read_as_the_page_always_showed_them() {
        assert_eq!(None::<u64>.cell(), "—");
        assert_eq!(2596.132.cell(), "2596.13");
        assert_eq!(0.0.cell(), "0");
        assert_eq!(5000.0.cell(), "5000");
        assert_eq!(50000u64.cell(), "50000");
        assert_eq!(Vec::<usize>::new().cell(), "none");
        assert_eq!(vec![0usize, 1].cell(), "0, 1");
        assert_eq!([1.75, 1.125, 0.48].cell(), "1.75, 1.13, 0.48");
        assert_eq!(Some(true).cell(), "yes");
    }
}
