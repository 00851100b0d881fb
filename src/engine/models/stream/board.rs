//! What the two sides of a stream share: the plan the receiver gets before
//! the stream starts, and the board (a few shared words) through which the
//! sender marks phase ends and the receiver reports its counts, clock
//! windows and CPU time.

use crate::engine::channel::ChannelError;
use crate::engine::os::peer::BoardArea;
use crate::sys::clock::thread_cpu_ns;
use crate::sys::mem::SharedMapping;
use std::sync::atomic::AtomicU64;

/// Most samples a stream figure can take (the board's size).
pub const MAX_SAMPLES: usize = 100;

/// Smallest message a lossy channel can stream: the whole 8-byte sequence
/// number is needed to tell how many messages a gap lost.
pub const LOSSY_MIN_SIZE: usize = 8;

/// What the receiver needs to know before the stream starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkPlan {
    /// Gaps are losses to count, not failures (datagrams).
    pub lossy: bool,
    /// Messages compared byte for byte before (and, unless lossy, after) the timed part.
    pub verify: u64,
    /// Samples (at most [`MAX_SAMPLES`]).
    pub samples: usize,
}

// Board layout, in bytes from its start. The sender writes the boundaries;
// the receiver writes the rest, once, at the end.
const DONE: usize = 0;
const RECEIVED: usize = 8;
const CPU: usize = 16;
const VERIFIED: usize = 24;
const PHASES: usize = 32;
const LENT: usize = 40;
const BOUNDARIES: usize = 128;
const WINDOWS: usize = 1024;
const COUNTS: usize = 1920;
/// Bytes the board takes.
pub(super) const BOARD_LEN: usize = COUNTS + 8 * MAX_SAMPLES;

/// The shared words through which the sender marks phase ends and the
/// receiver reports its counts, clock windows and CPU time.
pub struct Board<'a> {
    map: &'a SharedMapping,
    base: usize,
}

impl<'a> Board<'a> {
    /// The board laid over `area` (at least the layout's size).
    pub fn new(area: BoardArea<'a>) -> Board<'a> {
        assert!(
            area.len >= BOARD_LEN,
            "stream board needs {BOARD_LEN} bytes"
        );
        Board {
            map: area.map,
            base: area.offset,
        }
    }

    fn word(&self, off: usize) -> &AtomicU64 {
        self.map.atomic_u64(self.base + off)
    }

    /// Sequence number of the last message of phase `b` (0: warm-up, j:
    /// sample j); 0 while not yet decided (numbers start at 1).
    pub(super) fn boundary(&self, b: usize) -> &AtomicU64 {
        self.word(BOUNDARIES + 8 * b)
    }

    /// The receiver's clock window of sample `j` (from 1), ns.
    pub(super) fn window(&self, j: usize) -> &AtomicU64 {
        self.word(WINDOWS + 8 * (j - 1))
    }

    /// Messages the receiver counted in sample `j` (from 1).
    pub(super) fn count(&self, j: usize) -> &AtomicU64 {
        self.word(COUNTS + 8 * (j - 1))
    }

    /// Set (Release) by the receiver once everything else is written.
    pub(super) fn done(&self) -> &AtomicU64 {
        self.word(DONE)
    }

    /// Messages the receiver counted in the timed part.
    pub(super) fn received(&self) -> &AtomicU64 {
        self.word(RECEIVED)
    }

    /// The receiver's CPU time over the timed part, ns.
    pub(super) fn cpu_ns(&self) -> &AtomicU64 {
        self.word(CPU)
    }

    /// Messages the receiver compared byte for byte (as it goes, then the
    /// total).
    pub(super) fn verified(&self) -> &AtomicU64 {
        self.word(VERIFIED)
    }

    /// 1 when the receiver read the messages where they lie (its end
    /// lends), 0 when it copied them: which null end its loop overhead is
    /// timed against.
    pub(super) fn lent(&self) -> &AtomicU64 {
        self.word(LENT)
    }

    /// Phase ends (boundaries) the receiver has passed so far: its progress,
    /// for a sender that waits in vain for its report.
    pub(super) fn phases(&self) -> &AtomicU64 {
        self.word(PHASES)
    }
}

/// The calling thread's CPU time (user + system), ns: how each side reads
/// the CPU time it reports.
pub(super) fn cpu_now() -> Result<u64, ChannelError> {
    thread_cpu_ns().map_err(ChannelError::io("getrusage"))
}
