//! Stream figures between ranks: `mpi bandwidth` (OSU `osu_bw`: rank 0
//! sends windows to rank 1, timed by rank 0 alone) and `mpi rate` (OSU
//! `osu_mbw_mr`: N/2 pairs at once, timed between barriers), both over the
//! windows of [`super::window`], reported as stream figures (bytes and
//! messages per second, time per message).
//!
//! One figure, from rank 0 (which sends in both):
//!
//! 1. **verify**: ⌈verify rounds ÷ window⌉ windows of messages each with its
//!    own fill pattern, compared byte for byte by the receivers;
//! 2. **warm-up and calibration**: phases of 1, 2, 4 … windows until the
//!    warm-up time is spent, which gives the windows per sample;
//! 3. **samples**: one phase each, sampled to the precision asked for, as a
//!    ping-pong figure is ([`sampling::take`]);
//! 4. **verify** again; then every rank's tally, checked.
//!
//! ```text
//! time per message (sample) = (phase time − one clock read) ÷ (windows × window × pairs)
//! bytes/s = size ÷ median time per message;  messages/s = 1 ÷ median time per message
//! ```
//!
//! The phase time is rank 0's clock from its first send to its last
//! acknowledgement (bandwidth), or from the end of the barrier before the
//! phase to the end of the barrier after it (rate), so it spans every
//! pair's windows.

use super::window::{self, Ends, Kind, MAX_WINDOW_BYTES, Pairs, Phase, Side, Timing};
use crate::engine::measure::Measurement;
use crate::engine::message::clock_overhead_ns;
use crate::engine::models::calibrate::{iterations_for, warm_up};
use crate::engine::models::sampling;
use crate::engine::models::stream::{
    Refused, Rules, SideTally, StreamCounts, StreamFacts, Window, assemble,
};
use crate::engine::os::interrupt;
use crate::engine::run::figure::{Facts, FigureResult, Mode, Outcome};
use crate::engine::run::runner::RunSettings;
use crate::engine::run::session::External;
use crate::machine::environment::{RankPlace, nodes};

/// The id of `mpi bandwidth` figures: the stream mode of the channel whose
/// ping-pong figures are `mpi`, as `tcp`'s stream figures are `tcp`'s.
pub const BANDWIDTH_ID: &str = "mpi";
/// The id of `mpi rate` figures.
pub const RATE_ID: &str = "mpi-rate";

/// Rank 0's side of `mpi bandwidth` or `mpi rate`: an [`External`] item of
/// the engine's session whose figures are streams of windows.
pub struct WindowFigures {
    id: &'static str,
    pairs: Pairs,
    timing: Timing,
    window: usize,
    /// Which ranks send to which, on which nodes, recorded with each figure.
    note: String,
}

impl WindowFigures {
    /// `mpi bandwidth`: rank 0 → rank 1 in windows of `window`.
    pub fn bandwidth(window: usize, places: &[RankPlace]) -> WindowFigures {
        WindowFigures::new(BANDWIDTH_ID, Pairs::one(), Timing::Leader, window, places)
    }

    /// `mpi rate`: rank i → rank i + ranks/2 for every i < ranks/2, in
    /// windows of `window`, between barriers.
    pub fn rate(ranks: i32, window: usize, places: &[RankPlace]) -> WindowFigures {
        WindowFigures::new(
            RATE_ID,
            Pairs::halves(ranks),
            Timing::Barriers,
            window,
            places,
        )
    }

    fn new(
        id: &'static str,
        pairs: Pairs,
        timing: Timing,
        window: usize,
        places: &[RankPlace],
    ) -> WindowFigures {
        let note = note(&pairs, timing, window, places);
        WindowFigures {
            id,
            pairs,
            timing,
            window,
            note,
        }
    }

    /// The pairs, for the other ranks' [`window::serve`].
    pub fn pairs(&self) -> &Pairs {
        &self.pairs
    }

    /// How the phases are timed, for the other ranks' [`window::serve`].
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// Tells every rank taking part that no figure follows (every path of
    /// rank 0 must, or they wait for ever).
    pub fn done(&self) {
        window::done(&self.pairs);
    }

    fn skip_reason(&self, size: usize) -> Option<String> {
        if size == 0 {
            return Some("0 B cannot carry the message's sequence number".into());
        }
        (size.saturating_mul(self.window) > MAX_WINDOW_BYTES).then(|| {
            format!(
                "a window of {} messages of {size} B exceeds {} MiB on each side (each message \
                 has its own buffer): a smaller --window",
                self.window,
                MAX_WINDOW_BYTES >> 20
            )
        })
    }

    /// Announces `kind` of `windows` windows to the other ranks and runs it
    /// here; returns rank 0's time for it, ns.
    fn phase(&self, ends: &mut Ends, size: usize, kind: Kind, windows: u64) -> u64 {
        let phase = Phase {
            kind,
            size,
            window: self.window,
            windows,
        };
        window::announce(&self.pairs, &phase);
        ends.run(&phase, self.timing)
    }

    fn figure(&self, size: usize, s: &RunSettings) -> Result<(Measurement, StreamFacts), String> {
        let others: Vec<String> = self.pairs.others().map(|r| r.to_string()).collect();
        let s_ = if others.len() == 1 { "" } else { "s" };
        let _armed = super::deadline::arm(&format!("rank{s_} {}", others.join(", ")));
        // Rank 0 sends in both commands; its buffers go with the figure.
        let side = self.pairs.side(0).unwrap_or(Side::Sender(1));
        let mut ends = Ends::new(side, size, self.window);
        let ends = &mut ends;
        let b = &s.budget;
        let messages_per_window = (self.window * self.pairs.len()) as u64;
        let clock_ns = clock_overhead_ns();
        let mut samples = Vec::new();
        let measured = (|| {
            let verify_windows = b.verify_rounds.div_ceil(self.window as u64).max(1);
            self.phase(ends, size, Kind::Verify, verify_windows);
            let (per_window, _) = warm_up(b.warmup.as_nanos() as u64, interrupt::check, |n| {
                Ok(self.phase(ends, size, Kind::Warm, n))
            })?;
            let windows = iterations_for(b.sample_time.as_nanos() as u64, per_window);
            let (_, precision) = sampling::take(b.samples, &b.precision, || {
                interrupt::check()?;
                let w = Window {
                    ns: self.phase(ends, size, Kind::Sample, windows),
                    messages: windows * messages_per_window,
                };
                samples.push(w);
                // The assembly times each sample the same way again: no
                // loop is timed apart from MPI's calls.
                Ok(w.per_message_ns(clock_ns, 0.0))
            })?;
            self.phase(ends, size, Kind::Verify, verify_windows);
            Ok::<_, crate::engine::channel::ChannelError>(precision)
        })();
        // Every path: the other ranks wait for the end of the figure.
        let tallies = window::end(&self.pairs, size, self.window, ends.tally);
        let precision = measured.map_err(|e| e.to_string())?;
        window::check(&self.pairs, &tallies)?;
        let sum = |f: &dyn Fn(&window::Tally) -> u64, senders: bool| -> u64 {
            tallies
                .iter()
                .filter(|(r, _)| self.pairs.senders.contains(r) == senders)
                .map(|(_, t)| f(t))
                .sum()
        };
        let sender = SideTally {
            messages: sum(&|t| t.sample_sent, true),
            cpu_ns: sum(&|t| t.cpu_ns, true),
            span_ns: sum(&|t| t.span_ns, true),
            loop_ns: 0.0,
        };
        let receiver = SideTally {
            messages: sum(&|t| t.sample_received, false),
            cpu_ns: sum(&|t| t.cpu_ns, false),
            span_ns: sum(&|t| t.span_ns, false),
            loop_ns: 0.0,
        };
        let counts = StreamCounts {
            size,
            lossy: false,
            samples: &samples,
            sender,
            receiver,
            verified: sum(&|t| t.verified, false),
            clock_overhead_ns: clock_ns,
            precision,
            window: Some(self.window as u64),
            pairs: Some(self.pairs.len() as u64),
            rules: MPI_RULES,
        };
        assemble(&counts).map_err(|refused| match refused {
            Refused::NoSample { .. } => "no sample was taken".into(),
            // window::check has compared every pair's counts already.
            other => other.to_string(),
        })
    }
}

/// How MPI's stream figures differ from local ones: a phase times all of
/// its messages, so one is enough to time a sample; and its receivers fail
/// the figure themselves on any message that is not whole (the verify
/// phases), so no count of compared messages is required.
const MPI_RULES: Rules = Rules {
    fewest: 1,
    verify_lossless: false,
};

/// "MPI: rank 0→1 (node 0→0), window 64, timed by rank 0; nodes: 0 vm":
/// who sends to whom, on which nodes, and whose clock times it.
fn note(pairs: &Pairs, timing: Timing, window: usize, places: &[RankPlace]) -> String {
    let hosts = nodes(places);
    let node = |r: i32| {
        places
            .get(r as usize)
            .and_then(|p| hosts.iter().position(|&h| h == p.host))
            .map_or("?".to_string(), |n| n.to_string())
    };
    let arrows: Vec<String> = pairs
        .senders
        .iter()
        .zip(&pairs.receivers)
        .map(|(&s, &r)| format!("{s}→{r} (node {}→{})", node(s), node(r)))
        .collect();
    format!(
        "MPI: {} {}, window {window}, timed {}; nodes: {}",
        if pairs.len() == 1 { "rank" } else { "ranks" },
        arrows.join(", "),
        match timing {
            Timing::Leader => "by rank 0",
            Timing::Barriers => "between barriers",
        },
        hosts
            .iter()
            .enumerate()
            .map(|(i, h)| format!("{i} {h}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

impl External for WindowFigures {
    fn id(&self) -> &'static str {
        self.id
    }

    fn mode(&self) -> Mode {
        Mode::Stream
    }

    fn sizes(&self, requested: &[usize]) -> Vec<usize> {
        requested.to_vec()
    }

    fn measure(&self, size: usize, s: &RunSettings) -> FigureResult {
        let mut r = FigureResult::new(self.id, Facts::Stream(None), size);
        r.cpus.extend(crate::sys::sched::current_cpu());
        r.note = Some(self.note.clone());
        if let Some(why) = self.skip_reason(size) {
            r.outcome = Outcome::Skipped(why);
            return r;
        }
        match self.figure(size, s) {
            Ok((m, facts)) => {
                r.facts = Facts::Stream(Some(facts));
                r.outcome = Outcome::Ok(Box::new(m));
            }
            Err(e) => r.outcome = Outcome::Failed(e),
        }
        r
    }
}
