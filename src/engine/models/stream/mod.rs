//! The streaming timing model (`--mode stream`): how fast one side can move
//! messages to the other, and what each side's CPU pays per message.
//!
//! The measuring process is the **sender**; the peer is the **receiver** (the
//! peer's [`PeerRole::Sink`](crate::engine::os::peer::PeerRole) role). Message `s` carries
//! its sequence number `s` (1, 2, …) in its first `min(size, 8)` bytes.
//!
//! 1. **Verify**: messages 1..=V carry a pattern unique to each; the receiver
//!    compares every byte.
//! 2. **Warm-up**: the sender sends back to back for the warm-up time. Before
//!    it sends the last message of a phase it writes that message's number
//!    to the shared board ("boundary" 0 for the warm-up, `j` for sample `j`).
//! 3. **Samples**: the same, one phase per sample, without a pause, so the
//!    samples are contiguous windows of one stream.
//! 4. **Verify** again (V more whole-content messages; a lossy channel instead
//!    gets paced tail messages until the receiver reports).
//!
//! The receiver poisons the number's bytes before each receive, checks every
//! message's sequence number (a gap, a repeat or a wrong number fails the
//! figure; a lossy channel counts gaps as loss instead) and reads
//! `CLOCK_MONOTONIC` right after receiving each boundary message. So
//!
//! ```text
//! time per message (sample j) = (t_j − t_(j−1) − one clock read) / messages received in (b_(j−1), b_j]
//!                               − loop overhead per message of the side that bounds the stream
//! throughput (sample j)      = size / time per message;  messages/s = 1 / time per message
//! ```
//!
//! with both clock reads taken by the receiver, never floored (at or below
//! zero is below the clock's resolution). The time per message is the pace of
//! the slower side, so the loop inside it is that side's: the busier one
//! ([`facts::bound`]). The figure is the median over samples, with their
//! spread.
//!
//! **CPU per message** of each side = the thread's user + system time
//! (`getrusage(RUSAGE_THREAD)`) from the start of sample 1 to the end of the
//! last sample, ÷ the messages that side handled in that time (sent, or
//! received), − that side's own loop overhead (each loop is timed here
//! against an endpoint that does nothing but what the loop needs). A side
//! that busy-waits shows the time it burnt waiting.
//!
//! Inside the timed loops: the send or receive, stamping or poisoning and
//! checking the number, one load of the current boundary (receiver) and one
//! clock read every 32 messages (sender).
//!
//! By concern, each depending only on those above it:
//! - [`board`]: the plan and the shared words both sides use;
//! - [`sender`]: the sender's timed loop;
//! - [`sink`]: the receiver, run by the peer;
//! - [`overhead`]: each side's loop timed against a null endpoint;
//! - [`facts`]: what a stream figure reports beyond its time per message;
//! - [`assemble`](mod@assemble): the figure from the samples and the two
//!   sides' tallies, the one computation of local, remote and MPI streams;
//! - [`measure`](mod@measure): one figure from the sender's side.

pub mod assemble;
pub mod board;
pub mod facts;
pub mod measure;
pub mod overhead;
pub mod sender;
pub mod sink;

// The paths the rest of the crate uses; everything else by its module's path.
pub use assemble::{Refused, Rules, SideTally, StreamCounts, Window, assemble};
pub use board::{Board, LOSSY_MIN_SIZE, MAX_SAMPLES, SinkPlan};
pub use facts::{Busy, CpuPerMessage, StreamFacts};
pub use measure::measure;
pub use sink::sink_role;
