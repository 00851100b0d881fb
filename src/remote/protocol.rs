//! The control protocol's messages, one per [`frame`](super::frame): what
//! the client sends ([`ClientMsg`]) and what the agent answers
//! ([`AgentMsg`]). docs/remote.md describes the exchange and its states.
//!
//! Every message is a JSON object whose `type` names it; an unknown type or
//! field is a decode error. The `protocol` number of the first message each
//! side sends stays readable by every version, so that a mismatch is named
//! rather than misread.

use crate::remote::task::{Report, Task};
use serde::{Deserialize, Serialize};

/// The protocol's version: both sides must speak the same one. 2: `Ready`
/// carries the figure's data key, the data plane's first bytes are the
/// client's hello with it, `Busy` comes only after authentication, and the
/// report counts what the data port dropped (`rejected`).
pub const PROTOCOL_VERSION: u32 = 2;

/// The TCP port the agent listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 7878;

/// What the client sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum ClientMsg {
    /// Opens the session: the client's versions and its challenge.
    Hello {
        /// [`PROTOCOL_VERSION`] of the client.
        protocol: u32,
        /// The client's ipcmark version.
        ipcmark: String,
        /// A fresh nonce, hex.
        client_nonce: String,
    },
    /// Follows the agent's `Hello`: the client's proof that it holds the
    /// token, or none when the agent asked for none.
    Auth {
        /// HMAC-SHA256 of the nonces under the token, hex
        /// ([`auth::mac`](super::auth::mac), client side).
        mac: Option<String>,
    },
    /// One exchange of the clock-offset estimate: the client's clock at
    /// sending, ns.
    Clock {
        /// Client's CLOCK_MONOTONIC when it sent this.
        t1: u64,
    },
    /// Starts one figure.
    Start {
        /// What the agent's side does.
        task: Task,
    },
    /// Ends the figure that runs and asks for its report.
    Finish,
    /// Ends the session; the agent returns to waiting for a client.
    Bye,
}

/// What the agent answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum AgentMsg {
    /// The answer to the client's `Hello`: the agent's versions and its
    /// challenge.
    Hello {
        /// [`PROTOCOL_VERSION`] of the agent.
        protocol: u32,
        /// The agent's ipcmark version.
        ipcmark: String,
        /// A fresh nonce, hex.
        server_nonce: String,
        /// Whether the client must send `Auth`.
        auth_required: bool,
    },
    /// Another client's session runs: this connection is closed at once.
    /// Sent only to a client that has authenticated (a stranger learns
    /// nothing of who holds the agent).
    Busy {
        /// How long that session has run, s.
        since_s: f64,
        /// That client's address.
        client: String,
    },
    /// The request is refused; the reason is one line. After a refused
    /// `Hello` or `Auth` the agent closes the connection.
    Refused {
        /// Why.
        reason: String,
        /// The agent's protocol version, on a version mismatch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        protocol: Option<u32>,
        /// The agent's ipcmark version, on a version mismatch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ipcmark: Option<String>,
    },
    /// The session is open: the agent's proof that it holds the token (none
    /// without a token) and its host's environment record.
    Welcome {
        /// HMAC-SHA256 of the nonces under the token, hex (agent side).
        mac: Option<String>,
        /// The agent host's `environment`, as a run's JSON writes it.
        environment: serde_json::Value,
    },
    /// The answer to `Clock`: the client's stamp, the agent's clock at
    /// receipt and at reply (CLOCK_MONOTONIC, ns).
    Clock {
        /// The client's stamp, returned.
        t1: u64,
        /// Agent's clock when the request was read.
        t2: u64,
        /// Agent's clock when the answer was written.
        t3: u64,
    },
    /// The figure's data socket is listening on this port.
    Ready {
        /// The port (TCP or UDP, as the task's transport).
        port: u16,
        /// The figure's data key, hex: the client's data connection or
        /// first datagram must carry it ([`DataKey`](super::data::DataKey)).
        key: String,
    },
    /// The figure ended: what the agent's side counted.
    Done {
        /// The agent's report.
        report: Report,
    },
}

/// The protocol version a first message announces, read without decoding
/// the rest, so that any version's `Hello` can be answered with a mismatch.
pub fn announced_protocol(payload: &[u8]) -> Option<u64> {
    // Most frames that are not a first message lack the key: no parse.
    if !payload.windows(10).any(|w| w == b"\"protocol\"") {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(payload).ok()?;
    v.get("protocol")?.as_u64()
}

/// `s` made safe to print on one line of a log or an error, by the rule
/// every reader of another's text uses (`output::sanitise::text`: control
/// characters and bidi overrides become `?`), and at most `max` characters
/// kept (a peer's strings, and decode errors that quote them, are not
/// trusted).
pub fn printable(s: &str, max: usize) -> String {
    let clean = crate::output::sanitise::text(s);
    let mut out: String = clean.chars().take(max).collect();
    if clean.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// This build's ipcmark version.
pub fn ipcmark_version() -> &'static str {
    crate::output::json::build::VERSION
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::frame;
    use crate::remote::task::{Proto, Role};

    fn every_client_msg() -> Vec<ClientMsg> {
        vec![
            ClientMsg::Hello {
                protocol: 1,
                ipcmark: "0.1.0".into(),
                client_nonce: "ab".into(),
            },
            ClientMsg::Auth {
                mac: Some("cd".into()),
            },
            ClientMsg::Clock { t1: 5 },
            ClientMsg::Start {
                task: Task {
                    proto: Proto::Udp,
                    size: 64,
                    role: Role::Sink {
                        window_ms: 10,
                        verify: 3,
                    },
                    cpu: Some(1),
                    limit_ms: 1000,
                },
            },
            ClientMsg::Finish,
            ClientMsg::Bye,
        ]
    }

    #[test]
    fn every_message_round_trips_through_a_frame() {
        for m in every_client_msg() {
            assert_eq!(
                frame::decode::<ClientMsg>(&frame::encode(&m).unwrap()).unwrap(),
                m
            );
        }
        let agent = [
            AgentMsg::Busy {
                since_s: 1.5,
                client: "127.0.0.1:1".into(),
            },
            AgentMsg::Refused {
                reason: "no".into(),
                protocol: Some(1),
                ipcmark: None,
            },
            AgentMsg::Welcome {
                mac: None,
                environment: serde_json::json!({"hostname": "h"}),
            },
            AgentMsg::Clock {
                t1: 1,
                t2: 2,
                t3: 3,
            },
            AgentMsg::Ready {
                port: 9,
                key: "ab".repeat(32),
            },
            AgentMsg::Done {
                report: Report::default(),
            },
        ];
        for m in agent {
            assert_eq!(
                frame::decode::<AgentMsg>(&frame::encode(&m).unwrap()).unwrap(),
                m
            );
        }
    }

    #[test]
    fn the_announced_version_is_read_from_any_first_message() {
        assert_eq!(
            announced_protocol(br#"{"type":"Hello","protocol":999,"x":[]}"#),
            Some(999)
        );
        assert_eq!(announced_protocol(br#"{"type":"Hello"}"#), None);
        assert_eq!(announced_protocol(b"\xff"), None);
    }

    #[test]
    fn a_peers_strings_are_printed_on_one_line() {
        assert_eq!(printable("a\nb\u{1b}[2J", 80), "a?b?[2J");
        assert_eq!(printable("abcdef", 3), "abc…");
        assert_eq!(printable("abc", 3), "abc");
    }
}
