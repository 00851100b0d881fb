//! Progress on stderr while a run goes on: how many figures are done, the
//! time left (from the pace so far), the pass and what is being measured.
//! Updated only between figures, never from a timed loop, and without a
//! ticker thread (which would make the next fork unsafe). Nothing is drawn
//! when stderr is not a terminal.

use crate::engine::run::repeated;
use crate::engine::run::session::{RunObserver, Started};
use crate::output::table::cells::size_cell;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over the figures of a run; invisible when stderr is not a terminal.
pub struct Progress(ProgressBar);

impl Progress {
    /// A bar for `total` figures (every pass's).
    pub fn new(total: usize) -> Self {
        let target = if super::terminal::is_users_terminal(&std::io::stderr()) {
            ProgressDrawTarget::stderr_with_hz(10)
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total as u64), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:24} {pos}/{len} figures, {elapsed} elapsed, ETA {eta} · {prefix}{msg}",
            )
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

    /// Whether the bar draws anything (stderr is a terminal).
    #[cfg(test)]
    pub fn visible(&self) -> bool {
        !self.0.is_hidden()
    }
}

/// The bar over a repeated command's runs (`ipcmark workload`): what runs
/// next, named `WHAT CONFIGURATION run K/N`.
pub struct RunsProgress {
    bar: Progress,
    what: &'static str,
}

impl RunsProgress {
    /// A bar over `total` runs of `what` (a workload's id).
    pub fn new(what: &'static str, total: usize) -> Self {
        RunsProgress {
            bar: Progress::new(total),
            what,
        }
    }
}

impl<R> repeated::Observer<R> for RunsProgress {
    fn started(&mut self, _: usize, name: &str, run: u32, runs: u32) {
        self.bar
            .start(&format!("{} {name} run {run}/{runs}", self.what));
    }

    fn done(&mut self, _: usize, _: u32, _: &Result<R, String>) -> Result<(), String> {
        self.bar.done_one();
        Ok(())
    }

    fn finished(
        &mut self,
        _: Option<i32>,
        _: Option<&crate::engine::run::load::FigureLoad>,
    ) -> Result<(), String> {
        self.bar.finish();
        Ok(())
    }
}

/// What the bar says is being measured.
fn describe(what: Started) -> String {
    match what {
        Started::Sweep {
            figures: 1, first, ..
        } => first.to_string(),
        Started::Sweep {
            figures,
            first,
            last,
        } if first == last => format!("{first}: {figures} sizes interleaved"),
        Started::Sweep {
            figures,
            first,
            last,
        } => format!("{first} … {last}: {figures} figures interleaved"),
        Started::Figure {
            id,
            size: Some(size),
            oneway,
        } => format!(
            "{id} {}{}",
            size_cell(size),
            if oneway { " one-way" } else { "" }
        ),
        Started::Figure { id, .. } => id.to_string(),
    }
}

impl RunObserver for Progress {
    fn planned(&mut self, figures: usize) {
        self.0.set_length(figures as u64);
    }

    /// Said on stderr whether or not it is a terminal: which level the
    /// figures that follow (and any warning they give) belong to.
    fn level_started(&mut self, level: usize, levels: usize, label: &str) {
        self.0
            .suspend(|| eprintln!("level {level}/{levels}: {label}"));
    }

    fn pass_started(&mut self, pass: usize, passes: usize) {
        if passes > 1 {
            self.0.set_prefix(format!("pass {pass}/{passes} · "));
        }
    }

    fn started(&mut self, what: Started) {
        self.start(&describe(what));
    }

    fn done(&mut self, n: usize) {
        self.0.inc(n as u64);
    }

    fn measured(&mut self, _results: &[crate::engine::run::figure::FigureResult]) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_names_what_is_measured() {
        let sweep = Started::Sweep {
            figures: 24,
            first: "pipe",
            last: "unix-dgram",
        };
        assert_eq!(describe(sweep), "pipe … unix-dgram: 24 figures interleaved");
        let one = Started::Sweep {
            figures: 6,
            first: "tcp",
            last: "tcp",
        };
        assert_eq!(describe(one), "tcp: 6 sizes interleaved");
        let figure = Started::Figure {
            id: "pipe",
            size: Some(4096),
            oneway: true,
        };
        assert_eq!(describe(figure), "pipe 4K one-way");
        let signal = Started::Figure {
            id: "signal-handler",
            size: Some(0),
            oneway: false,
        };
        assert_eq!(describe(signal), "signal-handler notify");
    }

    #[test]
    fn nothing_is_drawn_when_stderr_is_not_a_terminal() {
        // Whatever runs the tests, the bar follows stderr.
        assert_eq!(
            Progress::new(3).visible(),
            crate::output::terminal::is_users_terminal(&std::io::stderr())
        );
    }
}
