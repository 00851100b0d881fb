//! Progress on stderr while a run goes on. Updated only between figures, never
//! from a timed loop, and without a ticker thread (which would make the next
//! fork unsafe).

use crate::engine::run::session::{RunObserver, Started};
use crate::output::table::format_size;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over the figures of a run; invisible when stderr is not a terminal.
pub struct Progress(ProgressBar);

impl Progress {
    /// A bar for `total` figures.
    pub fn new(total: usize) -> Self {
        let bar = ProgressBar::with_draw_target(
            Some(total as u64),
            ProgressDrawTarget::stderr_with_hz(10),
        );
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                .expect("static template is valid")
                .progress_chars("=> "),
        );
        Progress(bar)
    }

    /// Shows what runs next.
    pub fn start(&self, what: &str) {
        self.0.set_message(what.to_string());
    }

    /// Marks one figure done.
    pub fn done_one(&self) {
        self.0.inc(1);
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl RunObserver for Progress {
    fn started(&mut self, what: Started) {
        self.start(&match what {
            Started::Sweep(n) => format!("{n} figures, interleaved"),
            Started::Figure {
                id,
                size: Some(size),
                oneway,
            } => format!(
                "{id} {}{}",
                format_size(size),
                if oneway { " one-way" } else { "" }
            ),
            Started::Figure { id, .. } => id.to_string(),
        });
    }

    fn done(&mut self, n: usize) {
        self.0.inc(n as u64);
    }

    fn measured(&mut self, _results: &[crate::engine::run::figure::FigureResult]) {
        self.finish();
    }
}
