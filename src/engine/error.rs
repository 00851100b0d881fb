//! How a channel, an operation or a peer fails: one error type for every
//! timing model. Its own module so that the stop-request machinery
//! (`os::interrupt`) and the channel contract (`channel`) both use it without
//! depending on each other.

use std::io;

/// Why a channel operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// A system call failed.
    #[error("{op}: {source}")]
    Io {
        /// The call or step.
        op: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// The peer closed its end (end of file, reset, removed object).
    #[error("the peer closed the channel")]
    Closed,
    /// A message did not come back as sent.
    #[error("message {seq} came back corrupted (first wrong byte at offset {offset})")]
    Corrupt {
        /// Sequence number of the message.
        seq: u64,
        /// First differing byte.
        offset: usize,
    },
    /// A reply was the client's own message, not what the peer returns: the
    /// receive wrote nothing into the buffer (which held the message as
    /// sent), or the channel handed the sender its own message back (a
    /// loopback: swapped descriptors, one region for both directions).
    #[error(
        "message {seq} came back exactly as it was sent, not as the peer returns it: \
         the receive wrote nothing or returned the sender's own message (a loopback)"
    )]
    NotReturned {
        /// Sequence number of the message.
        seq: u64,
    },
    /// A receive left the buffer as poisoned before it: nothing was
    /// received into it.
    #[error(
        "message {seq}: the receive left the buffer as it was before (poisoned): \
         nothing was received into it"
    )]
    NothingReceived {
        /// Sequence number of the message.
        seq: u64,
    },
    /// A receive that lends the message where it lies lent memory that
    /// holds another number than the one expected: the message never
    /// reached it (or its number was damaged). A lent message has no
    /// poison to find untouched: its number is the evidence.
    #[error(
        "message {seq}: what the receive lent holds number {got:#x}, not this message's: \
         nothing was received there for it"
    )]
    NotLent {
        /// Sequence number of the message.
        seq: u64,
        /// The number (its first bytes, little-endian) found instead.
        got: u64,
    },
    /// A message of the wrong length arrived.
    #[error("expected a {expected}-byte message, got {got} bytes")]
    Length {
        /// Bytes expected.
        expected: usize,
        /// Bytes received.
        got: usize,
    },
    /// A notification arrived out of order (signals, counters).
    #[error("notification out of sequence: expected {expected}, got {got}")]
    Sequence {
        /// Expected count or value.
        expected: u64,
        /// What arrived.
        got: u64,
    },
    /// The watchdog fired: the peer stopped answering.
    #[error("the peer did not answer in time")]
    Timeout,
    /// The peer ended (a child died or a server thread returned).
    #[error("the peer ended unexpectedly")]
    PeerDied,
    /// SIGINT or SIGTERM arrived.
    #[error("interrupted by {0}")]
    Interrupted(&'static str),
    /// The engine asked the server to stop (thread peers); not a failure.
    #[error("stopped")]
    Stopped,
    /// A check of results or invariants failed: an operation returned a wrong
    /// result or its evidence is missing (mode `op`), a workload found a wrong
    /// result or a fork held alone. There can be no figure.
    #[error("check failed: {0}")]
    Check(String),
    /// The channel could not be set up in this configuration.
    #[error("{0}")]
    Setup(String),
}

impl ChannelError {
    /// A closure that wraps an `io::Error` from step `op`.
    pub fn io(op: &'static str) -> impl FnOnce(io::Error) -> ChannelError {
        move |source| ChannelError::Io { op, source }
    }
}
