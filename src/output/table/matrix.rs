//! The compact page's table of a mode measured at several sizes: one row per
//! mechanism, one column per size, the best figure of each column marked,
//! and any columns a row adds (the cost model). Notes and cells without a
//! number are footnote marks, explained by the [`Legend`]. When no row has
//! more than one size (`--quick`), a list instead: a row per mechanism with
//! its size, its figure (the best at each size marked) and its own columns.

use super::cells::{fit_width, size_cell};
use super::figure::outcome;
use super::legend::{Legend, NoNumber};
pub use crate::analysis::ranking::Better;
use crate::analysis::ranking::{Evidence, Rank, rank};
use crate::record::FigureRecord;
use comfy_table::{
    Attribute, Cell, CellAlignment, Color, ColumnConstraint, ContentArrangement, Table, presets,
};

/// A cell of the matrix.
#[derive(Debug, Clone)]
pub enum Value {
    /// A figure: what its place in the column rests on (its value, its
    /// interval and passes) and its text.
    Number(Evidence, String),
    /// No number: why, and the note its footnote says.
    None(NoNumber, Option<String>),
}

impl Value {
    /// The cell of figure `r`: `number` of it when it was measured (`None`
    /// when its mode's record lacks the number: below resolution), else the
    /// mark of its outcome.
    pub fn of(r: &FigureRecord, number: impl Fn(&FigureRecord) -> Option<(f64, String)>) -> Value {
        match NoNumber::of(outcome(r), r.size_bytes) {
            Some((kind, note)) => Value::None(kind, note),
            None => match number(r) {
                Some((v, text)) => Value::Number(Evidence::of(r, v), text),
                None => Value::None(NoNumber::BelowResolution, None),
            },
        }
    }
}

/// One row: a label, its notes (footnote marks after the label), a cell per
/// size it was measured at, and the row's own columns; `more` lines of its
/// own columns follow it with their labels (a cost model's further ranges).
#[derive(Debug, Default)]
pub struct Row {
    /// What the row is (a mechanism).
    pub label: String,
    /// Notes that apply to the whole row.
    pub notes: Vec<String>,
    /// (size, cell), any order.
    pub cells: Vec<(usize, Value)>,
    /// The row's own columns (as many as the matrix's `extra` header).
    pub extra: Vec<String>,
    /// Lines under the row holding only a label and its own columns.
    pub more: Vec<(String, Vec<String>)>,
}

/// Rows in a matrix whose columns are every size any row has (size 0, a
/// notification, first), then the columns named by `extra`.
pub struct Matrix<'a> {
    /// What the figures are ("one-way µs"): the matrix's corner, the list's
    /// column of figures.
    pub label: &'a str,
    /// Which figure of a column is marked.
    pub better: Better,
    /// Headers of the rows' own columns.
    pub extra: Vec<&'a str>,
    /// Style the cells (a terminal that accepts colour).
    pub colour: bool,
}

/// The mark of a column's best figure, where it is best beyond its
/// uncertainty.
pub const BEST: &str = "*";

/// The mark of the best figures of a column that are not told apart.
pub const TIED: &str = "=";

/// Whether `rows` are drawn as a list: none has more than one size.
pub fn is_list<'a>(rows: impl IntoIterator<Item = &'a Row>) -> bool {
    rows.into_iter().all(|r| r.cells.len() <= 1)
}

impl Matrix<'_> {
    /// The table, with its marks and notes recorded in `legend`.
    pub fn render(&self, rows: &[Row], legend: &mut Legend) -> String {
        let list = is_list(rows);
        let mut sizes: Vec<usize> = rows
            .iter()
            .flat_map(|r| r.cells.iter().map(|(s, _)| *s))
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        // Each column's marks, in the rows' order (the analysis decides).
        let marks: Vec<Vec<Rank>> = sizes
            .iter()
            .map(|&size| {
                let column: Vec<Option<Evidence>> = rows
                    .iter()
                    .map(|r| {
                        r.cells.iter().find_map(|(s, v)| match v {
                            Value::Number(e, _) if *s == size => Some(e.clone()),
                            _ => None,
                        })
                    })
                    .collect();
                rank(&column, self.better)
            })
            .collect();
        let mut t = Table::new();
        t.load_style(presets::UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic);
        let mut header = if list {
            vec!["mechanism".to_string(), "size".into(), self.label.into()]
        } else {
            let mut h = vec![self.label.to_string()];
            h.extend(sizes.iter().map(|&s| size_cell(s)));
            h
        };
        header.extend(self.extra.iter().map(|h| h.to_string()));
        t.set_header(header);
        let (mut marked, mut tied) = (false, false);
        for (i, row) in rows.iter().enumerate() {
            let mut label = row.label.clone();
            label.push_str(&legend.notes(row.notes.iter().map(String::as_str)));
            let mut cells = vec![Cell::new(label)];
            for (&size, marks) in sizes.iter().zip(&marks) {
                let here = row.cells.iter().find(|(s, _)| *s == size);
                if list {
                    // The list's one figure: its size, then it.
                    if here.is_none() {
                        continue;
                    }
                    cells.push(Cell::new(size_cell(size)));
                }
                let cell = match here {
                    None => Cell::new(""),
                    Some((_, Value::Number(_, text))) if marks[i] == Rank::Best => {
                        marked = true;
                        self.style(
                            Cell::new(format!("{text}{BEST}")),
                            &[Attribute::Bold],
                            Some(Color::Green),
                        )
                    }
                    Some((_, Value::Number(_, text))) if marks[i] == Rank::Tied => {
                        tied = true;
                        self.style(Cell::new(format!("{text}{TIED}")), &[], Some(Color::Green))
                    }
                    // A trailing space keeps the digits under the marked one's.
                    Some((_, Value::Number(_, text))) => Cell::new(format!("{text} ")),
                    Some((_, Value::None(kind, note))) => {
                        let text = legend.no_number(*kind, note.as_deref());
                        match kind {
                            NoNumber::Failed => {
                                self.style(Cell::new(text), &[Attribute::Bold], Some(Color::Red))
                            }
                            _ => self.style(Cell::new(text), &[Attribute::Dim], None),
                        }
                    }
                };
                cells.push(cell);
            }
            cells.extend(row.extra.iter().map(Cell::new));
            if list && row.cells.is_empty() {
                cells.extend([Cell::new(""), Cell::new("")]);
            }
            t.add_row(cells);
            for (label, extra) in &row.more {
                let mut cells = vec![Cell::new(label)];
                cells.extend(sizes.iter().map(|_| Cell::new("")));
                cells.extend(extra.iter().map(Cell::new));
                t.add_row(cells);
            }
        }
        if marked {
            legend.mark(
                BEST,
                match self.better {
                    Better::Lower if list => "lowest at its size",
                    Better::Higher if list => "highest at its size",
                    Better::Lower => "lowest in its column",
                    Better::Higher => "highest in its column",
                },
            );
        }
        if tied {
            let (most, place) = match (self.better, list) {
                (Better::Lower, true) => ("lowest", "at its size"),
                (Better::Higher, true) => ("highest", "at its size"),
                (Better::Lower, false) => ("lowest", "in its column"),
                (Better::Higher, false) => ("highest", "in its column"),
            };
            legend.mark(
                TIED,
                format!("tied {most} {place}: within each other's interval"),
            );
        }
        for i in 0..t.column_count() {
            if let Some(c) = t.column_mut(i) {
                c.set_constraint(ColumnConstraint::ContentWidth);
                if i > 0 {
                    c.set_cell_alignment(CellAlignment::Right);
                }
            }
        }
        if self.colour {
            t.enforce_styling();
        }
        fit_width(&mut t);
        t.to_string()
    }

    /// `cell` with these attributes and colour when the page is in colour.
    fn style(&self, cell: Cell, attributes: &[Attribute], colour: Option<Color>) -> Cell {
        if !self.colour {
            return cell;
        }
        let cell = cell.add_attributes(attributes.to_vec());
        match colour {
            Some(c) => cell.fg(c),
            None => cell,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, cells: &[(usize, f64)]) -> Row {
        Row {
            label: label.into(),
            cells: cells
                .iter()
                .map(|&(s, v)| {
                    let known = Evidence {
                        value: v,
                        relative: Some((0.99, 1.01)),
                        passes: vec![],
                    };
                    (s, Value::Number(known, format!("{v:.1}")))
                })
                .collect(),
            ..Row::default()
        }
    }

    #[test]
    fn one_row_per_mechanism_one_column_per_size_and_the_best_marked() {
        let mut rows = vec![
            row("pipe", &[(64, 5.0), (1024, 6.0)]),
            row("shm-spin", &[(64, 0.5), (1024, 7.0)]),
            row("eventfd", &[(8, 4.0)]),
        ];
        rows[0].notes.push("a note".into());
        rows[1].cells.push((
            65536,
            Value::None(NoNumber::Skipped, Some("n/a: too big".into())),
        ));
        let m = Matrix {
            label: "mechanism",
            better: Better::Lower,
            extra: vec![],
            colour: false,
        };
        let mut legend = Legend::default();
        let text = m.render(&rows, &mut legend);
        let lines: Vec<&str> = text.lines().collect();
        // Top border, header, rule, three rows, bottom border.
        assert_eq!(lines.len(), 7, "{text}");
        assert!(
            lines[1].contains("8") && lines[1].contains("64") && lines[1].contains("64K"),
            "{text}"
        );
        assert!(
            lines[3].contains("pipe¹") && lines[3].contains("6.0*"),
            "{text}"
        );
        assert!(
            lines[4].contains("0.5*") && lines[4].contains("n/a²"),
            "{text}"
        );
        // Alone in its column: nothing to rank it against.
        assert!(
            lines[5].contains("4.0 ") && !lines[5].contains('*'),
            "{text}"
        );
        assert!(!text.contains('\u{1b}'), "no colour asked: {text:?}");
        let legend = legend.render();
        assert!(
            legend.starts_with("* lowest in its column; n/a"),
            "{legend}"
        );
        assert!(legend.contains("¹ a note\n² n/a: too big\n"), "{legend}");
    }

    #[test]
    fn colour_marks_the_best_in_bold_when_asked() {
        let m = Matrix {
            label: "mechanism",
            better: Better::Higher,
            extra: vec!["setup µs"],
            colour: true,
        };
        let mut r = row("pipe", &[(64, 5.0)]);
        r.extra.push("1.2".into());
        r.more.push(("└ from 4K".into(), vec!["3.4".into()]));
        let text = m.render(&[r, row("shm", &[(64, 9.0)])], &mut Legend::default());
        assert!(text.contains('\u{1b}'), "{text:?}");
        assert!(text.contains("└ from 4K") && text.contains("3.4"), "{text}");
    }

    #[test]
    fn rows_of_one_size_each_are_a_list_with_the_best_at_each_size_marked() {
        let rows = vec![
            row("pipe", &[(64, 5.0)]),
            row("shm-spin", &[(64, 0.5)]),
            row("eventfd", &[(8, 4.0)]),
        ];
        assert!(is_list(&rows));
        let m = Matrix {
            label: "one-way µs",
            better: Better::Lower,
            extra: vec![],
            colour: false,
        };
        let mut legend = Legend::default();
        let text = m.render(&rows, &mut legend);
        let cells = |l: &str| -> Vec<String> {
            l.trim_matches('│')
                .split('┆')
                .map(|c| c.trim().to_string())
                .collect()
        };
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            cells(lines[1]),
            ["mechanism", "size", "one-way µs"],
            "{text}"
        );
        assert_eq!(cells(lines[3]), ["pipe", "64", "5.0"], "{text}");
        assert_eq!(cells(lines[4]), ["shm-spin", "64", "0.5*"], "{text}");
        assert_eq!(cells(lines[5]), ["eventfd", "8", "4.0"], "{text}");
        assert!(legend.render().starts_with("* lowest at its size"));
    }

    #[test]
    fn figures_within_each_others_interval_are_marked_tied() {
        let near = |label: &str, v: f64| Row {
            label: label.into(),
            cells: vec![(
                64,
                Value::Number(
                    Evidence {
                        value: v,
                        relative: Some((0.92, 1.08)),
                        passes: vec![],
                    },
                    format!("{v:.2}"),
                ),
            )],
            ..Row::default()
        };
        let rows = vec![
            near("pipe", 6.39),
            near("shm-futex", 6.41),
            near("uds", 9.5),
        ];
        let m = Matrix {
            label: "one-way µs",
            better: Better::Lower,
            extra: vec![],
            colour: false,
        };
        let mut legend = Legend::default();
        let text = m.render(&rows, &mut legend);
        assert!(text.contains("6.39=") && text.contains("6.41="), "{text}");
        assert!(text.contains("9.50 ") && !text.contains('*'), "{text}");
        assert!(
            legend
                .render()
                .starts_with("= tied lowest at its size: within each other's interval"),
            "{}",
            legend.render()
        );
    }
}
