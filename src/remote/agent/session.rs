//! The session's state machine: where a client's session is ([`Phase`]),
//! and what the agent does with each message it sends ([`Step`]), from
//! `Hello` and `Auth` to the figures and `Bye`, with the checks of what a
//! client may ask for. Apart from the loop because it is pure: it touches
//! no socket and no clock of its own, so the fuzz tests feed it every
//! sequence of frames.

use super::{MAX_LIMIT_MS, MAX_SIZE};
use crate::remote::auth::{self, Side};
use crate::remote::frame;
use crate::remote::protocol::{
    AgentMsg, ClientMsg, PROTOCOL_VERSION, announced_protocol, ipcmark_version, printable,
};
use crate::remote::task::{MAX_ONEWAY_MESSAGES, Role, Task};
use std::net::SocketAddr;
use std::time::Instant;

/// Where a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the client's `Hello`.
    Hello,
    /// `Hello` answered; waiting for `Auth`.
    Auth,
    /// Open: `Clock`, `Start` or `Bye`.
    Open,
    /// A figure runs: `Finish`, `Clock` or `Bye`.
    Figure,
    /// `Finish` received; the report is on its way: only `Bye`.
    Finishing,
}

/// What the agent does with one message of the client.
#[derive(Debug, PartialEq)]
pub enum Step {
    /// Send this and go on.
    Reply(AgentMsg),
    /// Send this, print the line, close the session.
    Refuse(AgentMsg, String),
    /// Open the session: send `Welcome` with this MAC and the environment.
    Welcome(Option<String>),
    /// Answer a clock exchange: the client's stamp and the receipt time.
    Clock(u64, u64),
    /// Start this figure (the phase is now [`Phase::Figure`]).
    Start(Task),
    /// Stop the figure and send its report (the phase is now
    /// [`Phase::Finishing`]).
    Finish,
    /// Close the session.
    Bye,
}

/// One client's session: its phase and the handshake's nonces. Pure: it
/// touches no socket, so every sequence of frames can be fed to it.
pub struct Session {
    /// The client's address.
    pub peer: SocketAddr,
    /// When the connection was accepted.
    pub since: Instant,
    phase: Phase,
    token: Option<Vec<u8>>,
    server_nonce: String,
    client_nonce: String,
}

impl Session {
    /// A session with `peer`, whose challenge will be `server_nonce`.
    pub fn new(peer: SocketAddr, token: Option<Vec<u8>>, server_nonce: String) -> Session {
        Session {
            peer,
            since: Instant::now(),
            phase: Phase::Hello,
            token,
            server_nonce,
            client_nonce: String::new(),
        }
    }

    /// Where the session is.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The figure ended (its report sent, or it could not start): the
    /// session is open again.
    pub fn figure_ended(&mut self) {
        if matches!(self.phase, Phase::Figure | Phase::Finishing) {
            self.phase = Phase::Open;
        }
    }

    /// Decides what to do with one payload the client sent, received at
    /// `now_ns` (CLOCK_MONOTONIC).
    pub fn on_payload(&mut self, payload: &[u8], now_ns: u64) -> Step {
        if self.phase == Phase::Hello
            && let Some(theirs) = announced_protocol(payload)
            && theirs != u64::from(PROTOCOL_VERSION)
        {
            return self.mismatch(theirs, payload);
        }
        let msg = match frame::decode_payload::<ClientMsg>(payload) {
            Ok(m) => m,
            Err(e) => return self.refuse(format!("bad message: {e}")),
        };
        match (self.phase, msg) {
            (
                Phase::Hello,
                ClientMsg::Hello {
                    protocol: _,
                    ipcmark: _,
                    client_nonce,
                },
            ) => {
                if !auth::is_nonce(&client_nonce) {
                    return self.refuse(format!(
                        "bad message: the client nonce is not {} hex digits",
                        2 * auth::NONCE_BYTES
                    ));
                }
                self.client_nonce = client_nonce;
                self.phase = Phase::Auth;
                Step::Reply(AgentMsg::Hello {
                    protocol: PROTOCOL_VERSION,
                    ipcmark: ipcmark_version().into(),
                    server_nonce: self.server_nonce.clone(),
                    auth_required: self.token.is_some(),
                })
            }
            (Phase::Auth, ClientMsg::Auth { mac }) => match (&self.token, mac) {
                (None, _) => {
                    self.phase = Phase::Open;
                    Step::Welcome(None)
                }
                (Some(token), Some(mac))
                    if auth::verify(
                        token,
                        Side::Client,
                        &self.server_nonce,
                        &self.client_nonce,
                        &mac,
                    ) =>
                {
                    self.phase = Phase::Open;
                    Step::Welcome(Some(auth::mac(
                        token,
                        Side::Agent,
                        &self.server_nonce,
                        &self.client_nonce,
                    )))
                }
                (Some(_), mac) => {
                    let reason = if mac.is_some() {
                        "authentication failed: the token does not match the agent's"
                    } else {
                        "authentication failed: this agent requires a token (--token-file)"
                    };
                    Step::Refuse(refused(reason), format!("refused {}: {reason}", self.peer))
                }
            },
            (Phase::Open | Phase::Figure, ClientMsg::Clock { t1 }) => Step::Clock(t1, now_ns),
            (Phase::Open, ClientMsg::Start { task }) => match check_task(&task) {
                Ok(()) => {
                    self.phase = Phase::Figure;
                    Step::Start(task)
                }
                Err(reason) => Step::Reply(refused(&reason)),
            },
            (Phase::Figure, ClientMsg::Finish) => {
                self.phase = Phase::Finishing;
                Step::Finish
            }
            (Phase::Open | Phase::Figure | Phase::Finishing, ClientMsg::Bye) => Step::Bye,
            (phase, msg) => self.refuse(format!(
                "unexpected {} while the session is in phase {phase:?}",
                name(&msg)
            )),
        }
    }

    fn refuse(&self, reason: String) -> Step {
        let reason = printable(&reason, 300);
        let line = format!("closed the session of {}: {reason}", self.peer);
        Step::Refuse(refused(&reason), line)
    }

    fn mismatch(&self, theirs: u64, payload: &[u8]) -> Step {
        let version = serde_json::from_slice::<serde_json::Value>(payload)
            .ok()
            .and_then(|v| v.get("ipcmark").and_then(|s| s.as_str()).map(str::to_owned))
            .unwrap_or_else(|| "unknown".into());
        let version = printable(&version, 40);
        let mine = ipcmark_version();
        let reason = format!(
            "this agent speaks protocol {PROTOCOL_VERSION} (ipcmark {mine}); the client speaks \
             {theirs} (ipcmark {version}): use the same ipcmark version on both hosts"
        );
        let line = format!(
            "client {} speaks protocol {theirs} (ipcmark {version}); this agent speaks \
             {PROTOCOL_VERSION} (ipcmark {mine}): refused; use the same ipcmark version on both hosts",
            self.peer
        );
        Step::Refuse(
            AgentMsg::Refused {
                reason,
                protocol: Some(PROTOCOL_VERSION),
                ipcmark: Some(mine.into()),
            },
            line,
        )
    }
}

pub(super) fn refused(reason: &str) -> AgentMsg {
    AgentMsg::Refused {
        reason: reason.into(),
        protocol: None,
        ipcmark: None,
    }
}

fn name(msg: &ClientMsg) -> &'static str {
    match msg {
        ClientMsg::Hello { .. } => "Hello",
        ClientMsg::Auth { .. } => "Auth",
        ClientMsg::Clock { .. } => "Clock",
        ClientMsg::Start { .. } => "Start",
        ClientMsg::Finish => "Finish",
        ClientMsg::Bye => "Bye",
    }
}

/// Refuses a task the agent cannot carry out safely, in one line.
fn check_task(task: &Task) -> Result<(), String> {
    if task.limit_ms == 0 || task.limit_ms > MAX_LIMIT_MS {
        return Err(format!(
            "a figure's limit must be 1 to {MAX_LIMIT_MS} ms, not {}",
            task.limit_ms
        ));
    }
    if task.size > MAX_SIZE {
        return Err(format!(
            "messages of {} bytes are above the agent's largest, {MAX_SIZE}",
            task.size
        ));
    }
    if let Role::Receiver { messages } = task.role
        && messages > MAX_ONEWAY_MESSAGES
    {
        return Err(format!(
            "a one-way figure times at most {MAX_ONEWAY_MESSAGES} messages (its report of one \
             stamp each must fit a control frame), not {messages}"
        ));
    }
    if let Some(cpu) = task.cpu {
        let allowed = crate::sys::sched::allowed_cpus().unwrap_or_default();
        if !allowed.contains(&cpu) {
            return Err(format!(
                "CPU {cpu} is not one the agent may run on (allowed: {allowed:?})"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
