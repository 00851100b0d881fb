//! What a stream figure measured beyond its time per message, and which
//! side bounds the stream: the facts every stream figure reports, local,
//! remote or across MPI ranks.

/// CPU time per message of each side, ns, that side's loop overhead
/// subtracted; `None` where what is left is at or below zero (below what
/// the CPU clock and the loop's timing resolve).
#[derive(Debug, Clone, Copy)]
pub struct CpuPerMessage {
    /// The sender's CPU time ÷ messages it sent in the timed part.
    pub sender: Option<f64>,
    /// The receiver's CPU time ÷ messages it received in the timed part.
    pub receiver: Option<f64>,
}

/// Share of the timed part each side spent on a CPU (user + system time ÷
/// its own span of the timed part).
#[derive(Debug, Clone, Copy)]
pub struct Busy {
    /// The sender's.
    pub sender: f64,
    /// The receiver's.
    pub receiver: f64,
}

/// Which side's pace bounds the stream, so whose loop overhead is in the
/// time per message (see [`bound`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The sender's: the receiver waited for messages.
    Sender,
    /// The receiver's: the sender waited for room, or (lossy) its messages
    /// were dropped.
    Receiver,
    /// Both sides were on a CPU about all the time (e.g. one of them
    /// busy-waits): the CPU times cannot tell.
    Both,
}

impl Bound {
    /// As the JSON and the docs name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Sender => "sender",
            Bound::Receiver => "receiver",
            Bound::Both => "both",
        }
    }
}

/// Busy shares within this ratio of each other cannot tell which side
/// bounds the stream.
const SAME_BUSY: f64 = 0.9;

/// Which side bounds the stream. A queued channel blocks the faster side
/// (an empty queue stops the receiver, a full one the sender), so the side
/// that bounds the pace is the one that never waits: the busier. A lossy
/// channel that lost messages never slowed its sender: the receiver could
/// not keep up, so it bounds.
pub fn bound(busy: Busy, lossy_and_lost: bool) -> Bound {
    if lossy_and_lost {
        return Bound::Receiver;
    }
    let (low, high) = if busy.sender < busy.receiver {
        (busy.sender, busy.receiver)
    } else {
        (busy.receiver, busy.sender)
    };
    if high <= 0.0 || low / high >= SAME_BUSY {
        Bound::Both
    } else if busy.sender > busy.receiver {
        Bound::Sender
    } else {
        Bound::Receiver
    }
}

/// What a stream figure measured beyond its time per message.
#[derive(Debug, Clone)]
pub struct StreamFacts {
    /// Bytes received per second at the median time per message (also the
    /// result's `throughput_bytes_per_s`); `None` when that median is at or
    /// below zero (the figure is then below the clock's resolution).
    pub bytes_per_s: Option<f64>,
    /// Messages received per second at the median time per message.
    pub messages_per_s: Option<f64>,
    /// CPU time per message of each side.
    pub cpu_ns_per_message: CpuPerMessage,
    /// Share of the timed part each side spent on a CPU.
    pub busy: Busy,
    /// Which side bounds the stream: whose loop overhead was subtracted
    /// from the time per message (the smaller of the two for
    /// [`Bound::Both`]).
    pub bounded_by: Bound,
    /// Messages sent in the timed part.
    pub sent: u64,
    /// Messages received in the timed part.
    pub received: u64,
    /// 1 − received / sent (0 for a channel that cannot lose a message).
    pub loss_ratio: f64,
    /// Bytes received per second in each sample; `None` for a sample whose
    /// time per message is at or below zero.
    pub samples_bytes_per_s: Vec<Option<f64>>,
    /// Messages compared byte for byte by the receiver.
    pub verified_messages: u64,
    /// The sender's loop per message (stamping, the clock every 32
    /// messages), subtracted from its CPU per message.
    pub sender_loop_overhead_ns: f64,
    /// The receiver's loop per message (poisoning and checking the number,
    /// the boundary), subtracted from its CPU per message.
    pub receiver_loop_overhead_ns: f64,
    /// A remark for the result's note (lossy samples left untimed).
    pub note: Option<String>,
    /// Whether the channel may lose messages (its loss is then a figure).
    pub lossy: bool,
    /// Messages in flight per window, for a stream sent in acknowledged
    /// windows (MPI's); `None` for a continuous stream.
    pub window: Option<u64>,
    /// Sender–receiver pairs whose messages the figure counts together
    /// (MPI's message rate); `None` for one pair.
    pub pairs: Option<u64>,
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busier_side_bounds_the_stream() {
        let busy = |sender, receiver| Busy { sender, receiver };
        assert_eq!(bound(busy(0.5, 1.0), false), Bound::Receiver);
        assert_eq!(bound(busy(0.99, 0.3), false), Bound::Sender);
        // Both on a CPU all the time (spinning): the CPU times cannot tell.
        assert_eq!(bound(busy(0.97, 1.0), false), Bound::Both);
        assert_eq!(bound(busy(0.0, 0.0), false), Bound::Both);
        // A lossy channel that lost messages: its receiver could not keep up.
        assert_eq!(bound(busy(1.0, 0.5), true), Bound::Receiver);
    }
}
