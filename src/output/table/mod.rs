//! The terminal tables of a run: one file per kind of table behind
//! [`ResultTable`], listed in page order in [`RESULT_TABLES`]; the cells they
//! share (sizes, µs and ns, percentages, the table style) in [`cells`]; a
//! preset's study-shaped table in [`preset`]. Each table has a long form
//! (every figure's row with its interval and notes: `--long`) and may have a
//! compact one for the default page ([`ResultTable::short`]): a [`matrix`]
//! of mechanisms × sizes, notes as footnotes ([`legend`]).

pub mod cells;
pub mod figure;
pub mod legend;
pub mod load;
pub mod matrix;
mod oneway;
mod ops;
mod periodic;
mod pingpong;
pub mod preset;
mod rate;
pub mod remote;
mod scores;
mod stream;

use crate::record::summary::CostModel;
use crate::record::{FigureRecord, Mode};

pub use cells::{align_right, fit_width, format_size, new_table, us, whole_column};
pub use preset::render_preset;

/// One timing model's table on the results page: which figures it shows,
/// how it renders them, and the footnote that says how they were obtained.
pub trait ResultTable: Sync {
    /// The modes whose figures it shows, in run order.
    fn modes(&self) -> &[Mode];
    /// The table of `figures` (all of one of [`Self::modes`]).
    fn render(&self, figures: &[FigureRecord]) -> String;
    /// What the columns mean, printed under the table.
    fn footnote(&self) -> &'static str;
    /// What follows the footnote (the one-way windows); nothing by default.
    fn after(&self, _figures: &[FigureRecord]) -> String {
        String::new()
    }
    /// The compact form for the default page, everything under the table
    /// included (what the columns mean, the legend of its marks and notes,
    /// the precision of its figures on one line); `None`: the long form is
    /// already compact.
    fn short(&self, _figures: &[FigureRecord], _look: &Look) -> Option<String> {
        None
    }
}

/// What a compact table may show beside its figures, and how.
#[derive(Debug, Clone, Copy)]
pub struct Look<'a> {
    /// The run's cost models, shown beside the figures they were fitted on.
    pub cost_models: &'a [CostModel],
    /// Style the cells (stdout is a terminal that accepts colour).
    pub colour: bool,
}

/// Every results table, in page order.
pub static RESULT_TABLES: &[&dyn ResultTable] = &[
    &oneway::OneWayTable,
    &pingpong::PingPongTable,
    &stream::StreamTable,
    &rate::RateTable,
    &ops::OpsTable,
    &periodic::PeriodicTable,
    &scores::ScoreTable,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_has_one_table_with_a_footnote() {
        let all = [
            Mode::PingPong,
            Mode::Op,
            Mode::Event,
            Mode::Periodic,
            Mode::OneWay,
            Mode::Score,
            Mode::Stream,
            Mode::Rate,
        ];
        for mode in all {
            let tables = RESULT_TABLES
                .iter()
                .filter(|t| t.modes().contains(&mode))
                .count();
            assert_eq!(tables, 1, "{mode:?}");
        }
        for t in RESULT_TABLES {
            assert!(!t.footnote().is_empty());
            assert!(t.modes().iter().all(|m| all.contains(m)));
        }
    }

    #[test]
    fn an_empty_table_has_its_header() {
        for t in RESULT_TABLES {
            assert!(t.render(&[]).contains('│'));
            assert!(t.after(&[]).is_empty());
        }
    }
}
