//! The handshakes: accepting control connections, holding those whose
//! `Hello`/`Auth` runs (at most [`MAX_HANDSHAKES`], [`MAX_HANDSHAKES_PER_HOST`]
//! from one address, [`MAX_HANDSHAKE_BYTES`] each), and giving the session
//! to the first that authenticates — or telling it `Busy`. Apart from the
//! loop because none of it may hold the agent: a stranger without the
//! token keeps nobody out.

use super::{
    ACCEPT_PAUSE, Agent, End, HANDSHAKE_WRITE, Live, MAX_HANDSHAKE_BYTES, MAX_HANDSHAKES,
    MAX_HANDSHAKES_PER_HOST, Session, Step, log, refused, send, send_within,
};
use crate::machine::cpu_latency::{CpuLatencyState, NotHeld};
use crate::machine::environment;
use crate::record::environment::EnvironmentRecord;
use crate::remote::auth;
use crate::remote::frame::FrameBuffer;
use crate::remote::protocol::AgentMsg;
use std::io::ErrorKind;
use std::time::Instant;

impl Agent {
    pub(super) fn accept(&mut self) {
        loop {
            let (stream, peer) = match self.listener.accept() {
                Ok(c) => c,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // A connection that failed before it was accepted, or too
                // many open files: the agent goes on with what it has. The
                // listener stays readable while the cause lasts, so the loop
                // pauses rather than spinning (and logging) on it.
                Err(e) => {
                    log(&format!("accept: {e}"));
                    std::thread::sleep(ACCEPT_PAUSE);
                    return;
                }
            };
            let nonce = match auth::nonce() {
                Ok(n) => n,
                Err(e) => {
                    log(&e);
                    continue;
                }
            };
            if let Err(e) = stream.set_nonblocking(true) {
                log(&format!("{peer}: {e}"));
                continue;
            }
            let _ = stream.set_nodelay(true);
            // Room for the newcomer: the oldest handshake of its address, or
            // else the oldest of all, gives way (the newest is the one most
            // likely still to be answered; a flood only displaces itself).
            let same_host = |p: &&Live| p.session.peer.ip() == peer.ip();
            let oldest = if self.pending.iter().filter(same_host).count() >= MAX_HANDSHAKES_PER_HOST
            {
                self.pending.iter().position(|p| same_host(&p))
            } else if self.pending.len() >= MAX_HANDSHAKES {
                Some(0)
            } else {
                None
            };
            if let Some(i) = oldest {
                let mut old = self.pending.remove(i);
                let reason = "too many connections in their handshake at once";
                let _ = send_within(&mut old, &refused(reason), HANDSHAKE_WRITE);
                log(&format!(
                    "dropped the handshake of {}: {reason}",
                    old.session.peer
                ));
            }
            log(&format!("connection from {peer}: handshake"));
            self.pending.push(Live {
                stream,
                frames: FrameBuffer::default(),
                session: Session::new(peer, self.config.token.clone(), nonce),
                last_frame: Instant::now(),
                figure: None,
            });
        }
    }

    /// Reads what each ready handshake sent and acts on it.
    pub(super) fn read_handshakes(&mut self, ready: &[bool]) {
        let all = std::mem::take(&mut self.pending);
        for (i, mut conn) in all.into_iter().enumerate() {
            if !ready.get(i).copied().unwrap_or(false) {
                self.pending.push(conn);
                continue;
            }
            let closed = self.receive(&mut conn, MAX_HANDSHAKE_BYTES);
            self.handshake(conn, closed);
        }
    }

    /// Takes a connection through its handshake: answers `Hello`, checks
    /// `Auth`, and on success opens the session — or, when another client
    /// holds it, tells this authenticated one `Busy`. Nothing about the
    /// session is sent before the client has authenticated.
    fn handshake(&mut self, mut conn: Live, closed: Option<End>) {
        loop {
            let payload = match conn.frames.next_payload() {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(e) => {
                    let reason = format!("bad frame: {e}");
                    let _ = send_within(&mut conn, &refused(&reason), HANDSHAKE_WRITE);
                    log(&format!(
                        "closed the connection of {}: {reason}",
                        conn.session.peer
                    ));
                    return;
                }
            };
            conn.last_frame = Instant::now();
            let now_ns = crate::sys::clock::monotonic_ns();
            match conn.session.on_payload(&payload, now_ns) {
                Step::Reply(msg) => {
                    if let Err(End::Line(line)) = send_within(&mut conn, &msg, HANDSHAKE_WRITE) {
                        log(&line);
                        return;
                    }
                }
                Step::Refuse(msg, line) => {
                    let _ = send_within(&mut conn, &msg, HANDSHAKE_WRITE);
                    log(&line);
                    return;
                }
                Step::Welcome(mac) => return self.open(conn, mac, closed),
                // The handshake's phases give no other step.
                _ => {
                    log(&format!(
                        "closed the connection of {}: internal error (a session step during the handshake)",
                        conn.session.peer
                    ));
                    return;
                }
            }
        }
        if conn.frames.buffered() > MAX_HANDSHAKE_BYTES {
            let reason =
                format!("more than {MAX_HANDSHAKE_BYTES} bytes sent before authentication");
            let _ = send_within(&mut conn, &refused(&reason), HANDSHAKE_WRITE);
            log(&format!(
                "closed the connection of {}: {reason}",
                conn.session.peer
            ));
            return;
        }
        match closed {
            Some(End::Line(line)) => log(&line),
            Some(End::Quiet) => {}
            None => self.pending.push(conn),
        }
    }

    /// An authenticated client: the session is its unless another holds it.
    fn open(&mut self, mut conn: Live, mac: Option<String>, closed: Option<End>) {
        if let Some(live) = &self.live {
            let busy = AgentMsg::Busy {
                since_s: live.session.since.elapsed().as_secs_f64(),
                client: live.session.peer.to_string(),
            };
            let _ = send_within(&mut conn, &busy, HANDSHAKE_WRITE);
            log(&format!(
                "told {} that the agent is busy with {}",
                conn.session.peer, live.session.peer
            ));
            return;
        }
        let msg = AgentMsg::Welcome {
            mac,
            environment: environment_record(),
        };
        if let Err(e) = send(&mut conn, &msg) {
            if let End::Line(line) = e {
                log(&line);
            }
            return;
        }
        log(&format!("session of {} is open", conn.session.peer));
        conn.session.since = Instant::now();
        conn.last_frame = Instant::now();
        // Frames the client sent after `Auth` (and before it closed) are
        // the session's.
        match self.act(&mut conn).or(closed) {
            Some(e) => self.close(conn, e),
            None => self.live = Some(conn),
        }
    }
}

/// The agent host's environment record, as a run's JSON writes it. The
/// agent holds no CPU latency request and measures no wake-up.
fn environment_record() -> serde_json::Value {
    let env = environment::collect(
        CpuLatencyState {
            requested_us: None,
            not_held: Some(NotHeld::NotAsked("the agent makes no request".into())),
            wakeup: Err("not measured by the agent".into()),
        },
        None,
    );
    serde_json::to_value(EnvironmentRecord::from(&env)).unwrap_or(serde_json::Value::Null)
}
