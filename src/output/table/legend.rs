//! What the compact page says below a table instead of in a notes column:
//! footnote marks, one legend line per distinct note, the marks of cells
//! without a number, and the precision of the figures on one line.

use super::figure::{Outcome, outcome};
use crate::output::table::cells::percent;
use crate::record::FigureRecord;

/// Columns the legend's line of marks keeps within.
const WIDTH: usize = 120;

/// The short text of a cell that has no number, and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NoNumber {
    /// Not measured here (beyond a limit, not available).
    Skipped,
    /// Measured at or below zero once the overheads were subtracted.
    BelowResolution,
    /// The figure failed.
    Failed,
}

impl NoNumber {
    /// The cell's text.
    pub fn mark(self) -> &'static str {
        match self {
            NoNumber::Skipped => "n/a",
            NoNumber::BelowResolution => "<res",
            NoNumber::Failed => "FAIL",
        }
    }

    /// What the mark means, for the legend.
    fn meaning(self) -> &'static str {
        match self {
            NoNumber::Skipped => "not measured here (why: its footnote)",
            NoNumber::BelowResolution => "below the clock's resolution (≤ 0 less the overheads)",
            NoNumber::Failed => "the figure failed (why: its footnote)",
        }
    }

    /// The mark of `outcome`, and the note its footnote says (none for a
    /// figure below resolution: its reason names its own overheads, so the
    /// legend's meaning stands for all of them; `--long` has each).
    pub fn of(outcome: Outcome, size: usize) -> Option<(NoNumber, Option<String>)> {
        match outcome {
            Outcome::Ok(_) => None,
            // "16384 B exceeds …": the size is the column's, so the reason
            // without it is one note for every size it applies to.
            Outcome::Skipped(why) => {
                let why = why.strip_prefix(&format!("{size} B ")).unwrap_or(why);
                Some((NoNumber::Skipped, Some(format!("n/a: {why}"))))
            }
            Outcome::Failed(why) => Some((NoNumber::Failed, Some(format!("FAILED: {why}")))),
            Outcome::BelowResolution(_) => Some((NoNumber::BelowResolution, None)),
        }
    }
}

/// Footnotes of a table: each distinct note gets one mark (¹, ², …), however
/// many rows or cells carry it, and one legend line.
#[derive(Debug, Default)]
pub struct Legend {
    notes: Vec<String>,
    marks: Vec<(&'static str, String)>,
    no_numbers: Vec<NoNumber>,
}

impl Legend {
    /// The mark of `note`, given a new one if it was not seen before.
    pub fn note(&mut self, note: &str) -> String {
        let n = match self.notes.iter().position(|n| n == note) {
            Some(i) => i + 1,
            None => {
                self.notes.push(note.to_string());
                self.notes.len()
            }
        };
        superscript(n)
    }

    /// The marks of every note in `notes`, in order, without repeats.
    pub fn notes<'a>(&mut self, notes: impl IntoIterator<Item = &'a str>) -> String {
        let mut marks = Vec::new();
        for n in notes {
            let m = self.note(n);
            if !marks.contains(&m) {
                marks.push(m);
            }
        }
        marks.join(",")
    }

    /// The text of a cell without a number (with its footnote's mark), and
    /// records that the legend must say what it means.
    pub fn no_number(&mut self, kind: NoNumber, note: Option<&str>) -> String {
        if !self.no_numbers.contains(&kind) {
            self.no_numbers.push(kind);
        }
        match note {
            Some(n) => format!("{}{}", kind.mark(), self.note(n)),
            None => kind.mark().to_string(),
        }
    }

    /// Says what a mark set in cells (such as `*`) means.
    pub fn mark(&mut self, mark: &'static str, meaning: impl Into<String>) {
        if !self.marks.iter().any(|(m, _)| *m == mark) {
            self.marks.push((mark, meaning.into()));
        }
    }

    /// The legend: one line for the marks, then one line per note.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut no_numbers = self.no_numbers.clone();
        no_numbers.sort();
        let marks: Vec<String> = self
            .marks
            .iter()
            .map(|(m, meaning)| format!("{m} {meaning}"))
            .chain(
                no_numbers
                    .iter()
                    .map(|k| format!("{} {}", k.mark(), k.meaning())),
            )
            .collect();
        // As many marks on a line as fit in 120 columns.
        let mut line = String::new();
        for m in marks {
            if !line.is_empty() && line.chars().count() + 2 + m.chars().count() > WIDTH {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push_str("; ");
            }
            line.push_str(&m);
        }
        if !line.is_empty() {
            out.push_str(&line);
            out.push('\n');
        }
        for (i, n) in self.notes.iter().enumerate() {
            out.push_str(&format!("{} {n}\n", superscript(i + 1)));
        }
        out
    }
}

/// `n` in superscript digits: 1 → "¹", 12 → "¹²".
pub fn superscript(n: usize) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    n.to_string()
        .chars()
        .map(|c| DIGITS[c.to_digit(10).unwrap_or(0) as usize])
        .collect()
}

/// How precisely the measured `figures` are known, on one line: the range
/// of their intervals' half-widths, what those rest on, the target, and how
/// many are wider than it; `None` when no figure has an interval. Where
/// every figure has its own interval (the run's level divided out,
/// `analysis::level`), the range is of those, said to be the figures' own:
/// the machine's level has its own line.
pub fn precision_line(figures: &[FigureRecord]) -> Option<String> {
    // (achieved, basis, units, target, met, own) of each figure with an interval.
    let achieved: Vec<_> = figures
        .iter()
        .filter_map(|r| match outcome(r) {
            Outcome::Ok(m) => m.precision.and_then(|p| {
                let own = r
                    .passes
                    .as_ref()
                    .and_then(|p| p.own_interval.as_ref())
                    .map(crate::analysis::level::half_width);
                Some((p.achieved?, p.basis.as_str(), p.units, p.target, p.met, own))
            }),
            _ => None,
        })
        .collect();
    let first = achieved.first()?;
    let own = achieved.iter().all(|p| p.5.is_some());
    let (lo, hi) = achieved
        .iter()
        .map(|p| if own { p.5.unwrap_or(p.0) } else { p.0 })
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), p| {
            (lo.min(p), hi.max(p))
        });
    let over = match first.1 {
        "passes" if achieved.iter().all(|p| (p.1, p.2) == (first.1, first.2)) => {
            format!("over {} passes", first.2)
        }
        "batches" if achieved.iter().all(|p| p.1 == "batches") => {
            "over each figure's samples".to_string()
        }
        _ => "over passes or samples".to_string(),
    };
    let range = if percent(lo) == percent(hi) {
        format!("±{}%", percent(hi))
    } else {
        format!("±{}–{}%", percent(lo), percent(hi))
    };
    let targets: Vec<f64> = achieved.iter().map(|p| p.3).collect();
    let target = if targets.iter().all(|&t| t == targets[0]) {
        format!("target {}%", percent(targets[0]))
    } else {
        "targets vary".to_string()
    };
    let missed = achieved.iter().filter(|p| !p.4).count();
    // The target is met or missed by the whole interval, the machine's
    // level in it.
    let whole = if own { " (whole interval)" } else { "" };
    let verdict = match missed {
        0 => format!("every figure within it{whole}"),
        1 => format!("1 figure wider than the target{whole}: see --long or the JSON"),
        n => format!("{n} figures wider than the target{whole}: see --long or the JSON"),
    };
    let which = if own { "95%, own" } else { "95%" };
    let line = format!("intervals ({which}): {range} {over} ({target}); {verdict}");
    // The whole intervals' line is as it always was; the own line, longer,
    // keeps within the page.
    Some(if own {
        crate::output::table::cells::wrap(&line, WIDTH)
    } else {
        line
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_precision_line_shows_own_intervals_where_every_figure_has_one() {
        let run =
            crate::record::RunRecord::parse(include_str!("../../../tests/reports/passes.json"))
                .unwrap();
        let mut figures = run.results.clone();
        let whole = precision_line(&figures).unwrap();
        assert!(whole.starts_with("intervals (95%): ±"), "{whole}");
        for r in &mut figures {
            r.passes.as_mut().unwrap().own_interval = Some(crate::record::facts::IntervalRecord {
                low: 0.97,
                high: 1.03,
            });
        }
        let own = precision_line(&figures[..1]).unwrap();
        assert!(
            own.starts_with("intervals (95%, own): ±3% over 2 passes (target 2%)"),
            "{own}"
        );
        assert!(
            own.contains("wider than the target (whole interval)"),
            "{own}"
        );
        // One figure without its own interval: the whole intervals, as before.
        figures[0].passes.as_mut().unwrap().own_interval = None;
        assert_eq!(precision_line(&figures[..1]).unwrap(), {
            let mut f = run.results.clone();
            f.truncate(1);
            precision_line(&f).unwrap()
        });
    }

    #[test]
    fn marks_count_in_superscript() {
        assert_eq!(superscript(1), "¹");
        assert_eq!(superscript(10), "¹⁰");
    }

    #[test]
    fn a_note_has_one_mark_and_one_line_however_often_it_is_given() {
        let mut l = Legend::default();
        assert_eq!(l.note("FIFOs in /var/tmp (ext4)"), "¹");
        assert_eq!(l.note("FIFOs in /dev/shm (tmpfs)"), "²");
        assert_eq!(l.note("FIFOs in /var/tmp (ext4)"), "¹");
        assert_eq!(l.notes(["b", "FIFOs in /dev/shm (tmpfs)", "b"]), "³,²");
        let text = l.render();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.starts_with("¹ FIFOs in /var/tmp (ext4)\n"), "{text}");
    }

    #[test]
    fn a_skipped_cell_shares_its_note_across_sizes() {
        let mut l = Legend::default();
        let cells: Vec<String> = [16384, 65536]
            .iter()
            .map(|&size| {
                let why =
                    format!("{size} B exceeds the largest message, 8192 B (kernel.msgmax = 8192)");
                let (kind, note) = NoNumber::of(Outcome::Skipped(&why), size).unwrap();
                l.no_number(kind, note.as_deref())
            })
            .collect();
        assert_eq!(cells, ["n/a¹", "n/a¹"]);
        let text = l.render();
        assert!(text.starts_with("n/a not measured here"), "{text}");
        assert!(
            text.contains("¹ n/a: exceeds the largest message, 8192 B (kernel.msgmax = 8192)"),
            "{text}"
        );
        // Below resolution: the mark alone, the legend says what it means.
        let (kind, note) = NoNumber::of(Outcome::BelowResolution("x"), 1).unwrap();
        assert_eq!(l.no_number(kind, note.as_deref()), "<res");
        assert!(l.render().contains("<res below the clock's resolution"));
        // Every mark on as few lines as fit in 120 columns.
        let (kind, note) = NoNumber::of(Outcome::Failed("broke"), 1).unwrap();
        l.no_number(kind, note.as_deref());
        l.mark("*", "lowest in its column");
        let text = l.render();
        let marks: Vec<&str> = text.lines().take_while(|l| !l.starts_with('¹')).collect();
        assert_eq!(marks.len(), 2, "{text}");
        assert!(marks.iter().all(|l| l.chars().count() <= WIDTH), "{text}");
        assert!(
            marks[0].starts_with("* lowest in its column; n/a"),
            "{text}"
        );
    }
}
