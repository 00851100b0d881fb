//! What a figure asks of the agent, and what the agent reports back: the
//! shared vocabulary of the control protocol (`protocol`) and the data
//! plane (`data`). Every type here travels as JSON inside a control frame.

use serde::{Deserialize, Serialize};

/// The transport a remote figure runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    /// A TCP connection, TCP_NODELAY on both ends.
    Tcp,
    /// Connected UDP sockets, one datagram per message.
    Udp,
}

impl Proto {
    /// The mechanism id the figure is reported under.
    pub fn id(self) -> &'static str {
        match self {
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
        }
    }

    /// The transport a local mechanism's id names (`tcp`, `udp`): the
    /// mechanisms whose figures a remote run measures against the agent;
    /// `None` for every other, which runs on one host only.
    pub fn of_mechanism(id: &str) -> Option<Proto> {
        match id {
            "tcp" => Some(Proto::Tcp),
            "udp" => Some(Proto::Udp),
            _ => None,
        }
    }
}

/// What the agent's side of one figure does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Role {
    /// Ping-pong: echo every message (its sequence number complemented)
    /// until the client closes the connection or finishes.
    Echo,
    /// A stream towards the agent: receive, check and count every message,
    /// and the bytes received in each window of `window_ms` of the agent's
    /// clock, until the client finishes.
    Sink {
        /// Length of one counting window, ms.
        window_ms: u64,
        /// Messages compared byte for byte (every message's sequence number
        /// is checked).
        verify: u64,
    },
    /// A stream from the agent: send back to back for `duration_ms`, then
    /// stop.
    Source {
        /// How long to send, ms.
        duration_ms: u64,
    },
    /// One-way: note the agent's clock at the receipt of each stamped
    /// message and acknowledge it, until the client finishes.
    Receiver {
        /// Most messages the client will send (the stamps kept).
        messages: u64,
    },
}

/// A range of ports for the data connections (`--data-ports`), so a
/// firewall can let them through; `0-0` lets the kernel choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortRange {
    /// First port of the range.
    pub first: u16,
    /// Last port of the range (inclusive).
    pub last: u16,
}

impl PortRange {
    /// Any port the kernel chooses.
    pub const ANY: PortRange = PortRange { first: 0, last: 0 };
}

/// One figure's request to the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// The transport.
    pub proto: Proto,
    /// Bytes per message.
    pub size: usize,
    /// What the agent does.
    pub role: Role,
    /// The CPU the agent's side runs on (`--remote-cpu`).
    pub cpu: Option<usize>,
    /// The longest the agent's side may take, ms: past it the agent ends
    /// the figure and reports an error.
    pub limit_ms: u64,
}

/// What the agent's side of a figure counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Messages echoed, received (sink, receiver) or sent (source).
    pub messages: u64,
    /// Payload bytes of those messages.
    pub bytes: u64,
    /// Messages missing from the sequence (UDP).
    pub lost: u64,
    /// Messages compared byte for byte.
    pub verified: u64,
    /// Sink: the length of a counting window, ns of the agent's clock.
    pub window_ns: u64,
    /// Sink: each whole window, in order: the messages received in it and
    /// the ns from its first receipt to the next window's first.
    pub windows: Vec<[u64; 2]>,
    /// Receiver: the agent's CLOCK_MONOTONIC at each message's receipt, ns,
    /// in sequence order.
    pub stamps: Vec<u64>,
    /// The side's CPU time while it served (thread), ns.
    pub cpu_ns: u64,
    /// Sink, source: from its first message to its last, ns of its clock.
    pub span_ns: u64,
    /// The CPU the agent's side ran on last.
    pub cpu: Option<usize>,
    /// Why the agent's side stopped early, if it did.
    pub error: Option<String>,
    /// The agent: data connections and datagrams dropped unanswered before
    /// the client's (from another address, or without the figure's key).
    pub rejected: u64,
}

/// Bytes of one stamp in a report's JSON at most: `u64::MAX`'s 20 digits
/// and a comma.
pub const STAMP_JSON_BYTES: usize = 21;

/// What a report may take besides its stamps (its other fields and the
/// error, which the agent cuts to [`MAX_ERROR`]), bytes.
const REPORT_RESERVE: usize = 64 << 10;

/// The longest error a report carries, characters.
pub const MAX_ERROR: usize = 1000;

/// The most messages a one-way figure may time on the agent: its report
/// carries one stamp per message and must fit in one control frame
/// ([`MAX_FRAME`](crate::remote::frame::MAX_FRAME)).
pub const MAX_ONEWAY_MESSAGES: u64 =
    ((crate::remote::frame::MAX_FRAME - REPORT_RESERVE) / STAMP_JSON_BYTES) as u64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_oneway_report_fits_in_a_frame_and_one_stamp_more_would_not_be_allowed() {
        let worst = Report {
            messages: u64::MAX,
            bytes: u64::MAX,
            lost: u64::MAX,
            verified: u64::MAX,
            window_ns: u64::MAX,
            // A receiver's report has no windows (a sink's has no stamps).
            windows: Vec::new(),
            stamps: vec![u64::MAX; MAX_ONEWAY_MESSAGES as usize],
            cpu_ns: u64::MAX,
            span_ns: u64::MAX,
            cpu: Some(usize::MAX),
            error: Some("\u{1b}".repeat(MAX_ERROR)),
            rejected: u64::MAX,
        };
        let msg = crate::remote::protocol::AgentMsg::Done { report: worst };
        let framed = crate::remote::frame::encode(&msg).expect("the largest report fits a frame");
        assert!(framed.len() <= crate::remote::frame::MAX_FRAME + 4);
        // The bound is not loose by more than the reserve: a stamp more per
        // 21 bytes of the frame would not fit.
        assert!(
            (MAX_ONEWAY_MESSAGES as usize + 1) * STAMP_JSON_BYTES
                > crate::remote::frame::MAX_FRAME - REPORT_RESERVE
        );
    }

    #[test]
    fn a_transport_is_named_by_its_own_mechanism_id_and_no_other() {
        for p in [Proto::Tcp, Proto::Udp] {
            assert_eq!(Proto::of_mechanism(p.id()), Some(p));
        }
        for id in ["pipe", "unix-stream", "TCP", ""] {
            assert_eq!(Proto::of_mechanism(id), None, "{id}");
        }
    }
}
