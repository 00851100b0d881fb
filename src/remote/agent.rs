//! The agent (`ipcmark serve`): one session at a time over the control
//! protocol, one forked child per figure on the data plane.
//!
//! The agent is a single thread (its children are forked, and a fork after
//! a thread is unsound) running one `poll` loop over the listener, the
//! connections whose handshake runs, the session's control socket and the
//! running figure's report pipe. Nothing in it blocks on a client: control
//! frames are gathered on non-blocking sockets ([`FrameBuffer`]), every
//! write has a deadline, and every phase has one (handshake, idle session,
//! figure). A handshake never holds the session: several run at once (at
//! most [`MAX_HANDSHAKES`]), and the session goes to the first client that
//! authenticates, so a stranger without the token keeps nobody out. What a
//! client sends is decoded by [`Session::on_payload`], a pure state machine
//! the fuzz tests drive.
//!
//! The agent is three files beside this one, along its seams: the
//! session's state machine (`agent/session.rs`: phases, `Hello`/`Auth`,
//! what a client may ask for), the handshakes (`agent/handshake.rs`:
//! accepting, the pending connections, authentication, `Busy`) and the
//! figure's child (`agent/figure.rs`: fork, report pipe, reaping). Here:
//! the deadlines and limits of all of them, and the `poll` loop that
//! drives them (the open session's control frames, the deadlines, closing
//! a session).

use crate::remote::frame::{self, FrameBuffer, FrameError};
use crate::remote::protocol::AgentMsg;
use crate::remote::task::{PortRange, Report};
use crate::sys::process;
use std::io::{ErrorKind, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

mod figure;
mod handshake;
mod session;

use figure::{Figure, send_done_if_ready};
use session::refused;
pub use session::{Phase, Session, Step};

/// From the connection to the open session (`Welcome` sent).
pub const HANDSHAKE: Duration = Duration::from_secs(5);
/// The longest an open session may stay silent while no figure runs.
pub const IDLE: Duration = Duration::from_secs(60);
/// The longest one frame may take to write to the client.
pub const WRITE: Duration = Duration::from_secs(5);
/// The longest a frame to a client in its handshake may take to write: the
/// few it is sent fit in any socket buffer, and a stranger that reads
/// nothing must not hold the loop.
const HANDSHAKE_WRITE: Duration = Duration::from_millis(100);
/// How long past its `limit_ms` a figure's child may run before it is killed.
pub const FIGURE_GRACE: Duration = Duration::from_secs(2);
/// How long the child has to report once told to stop (`Finish`).
pub const FINISH_WAIT: Duration = Duration::from_secs(5);
/// The longest figure a client may ask for (`Task::limit_ms`).
pub const MAX_LIMIT_MS: u64 = 3_600_000;
/// The largest message a client may ask for, bytes.
pub const MAX_SIZE: usize = 64 << 20;
/// The most connections whose handshake may run at once: past it the
/// oldest is dropped, so that a newcomer is always heard.
pub const MAX_HANDSHAKES: usize = 16;
/// The most of them from one address: past it that address's oldest is
/// dropped, so one host's silent connections cannot crowd out the others.
pub const MAX_HANDSHAKES_PER_HOST: usize = 4;
/// The most a connection may send before it has authenticated, bytes: its
/// `Hello` and `Auth` take a few hundred, and strangers must not make the
/// agent hold a frame's 16 MiB for each of [`MAX_HANDSHAKES`].
const MAX_HANDSHAKE_BYTES: usize = 16 << 10;
/// How long the agent pauses after a failed `accept` (too many open
/// files), so that a cause that lasts does not spin its loop.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);
/// The longest one poll waits: a stop signal that lands just before `poll`
/// starts is seen within this.
const TICK: Duration = Duration::from_millis(200);

/// How the agent runs (`ipcmark serve`'s options).
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the control connections are accepted (port 0: any free port).
    pub listen: SocketAddr,
    /// The shared secret clients must prove they hold; none on loopback.
    pub token: Option<Vec<u8>>,
    /// The ports the figures' data sockets may use.
    pub data_ports: PortRange,
    /// Serve one session, then exit.
    pub once: bool,
}

/// A client's connection: one whose handshake runs, or the session.
struct Live {
    stream: TcpStream,
    frames: FrameBuffer,
    session: Session,
    last_frame: Instant,
    figure: Option<Figure>,
}

/// Why a session ended, for the agent's log.
enum End {
    /// Printed as is.
    Line(String),
    /// Nothing to print (the client said `Bye`).
    Quiet,
}

/// Runs the agent until SIGINT or SIGTERM (or the end of the first session
/// with `once`). `bound` is told the listening address once the socket is
/// bound (port 0 chooses one). Errors only for what the agent itself cannot
/// do (bind, signals); nothing a client sends ends it.
pub fn serve(config: &Config, bound: impl FnOnce(SocketAddr)) -> Result<(), String> {
    crate::engine::os::interrupt::install().map_err(|e| format!("signal handlers: {e}"))?;
    let listener = TcpListener::bind(config.listen)
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    bound(local);
    let mut agent = Agent {
        listener,
        config: config.clone(),
        ip: local.ip(),
        live: None,
        sessions: 0,
        pending: Vec::new(),
    };
    let outcome = agent.run();
    if let Some(live) = agent.live.take() {
        agent.close(live, End::Line("the agent stopped".into()));
    }
    outcome
}

struct Agent {
    listener: TcpListener,
    config: Config,
    ip: IpAddr,
    /// The session (authenticated), if one is open.
    live: Option<Live>,
    /// Connections whose handshake runs (phase Hello or Auth), oldest
    /// first; none of them holds the agent.
    pending: Vec<Live>,
    /// Sessions ended so far.
    sessions: u64,
}

fn log(line: &str) {
    eprintln!("ipcmark serve: {line}");
}

impl Agent {
    fn run(&mut self) -> Result<(), String> {
        loop {
            if let Some(sig) = crate::engine::os::interrupt::stop_requested() {
                log(&format!(
                    "stopping ({})",
                    crate::engine::os::interrupt::signal_name(sig)
                ));
                return Ok(());
            }
            if self.config.once && self.sessions > 0 {
                return Ok(());
            }
            let now = Instant::now();
            let timeout = self
                .next_deadline()
                .map_or(TICK, |d| d.saturating_duration_since(now).min(TICK));
            let mut fds = vec![pollfd(self.listener.as_raw_fd())];
            let (mut control, mut report) = (None, None);
            if let Some(live) = &self.live {
                control = Some(fds.len());
                fds.push(pollfd(live.stream.as_raw_fd()));
                if let Some(r) = live.figure.as_ref().and_then(|f| f.report.as_ref()) {
                    report = Some(fds.len());
                    fds.push(pollfd(r.as_raw_fd()));
                }
            }
            let handshakes = fds.len();
            fds.extend(self.pending.iter().map(|p| pollfd(p.stream.as_raw_fd())));
            match crate::sys::fd::poll(&mut fds, timeout) {
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("poll: {e}")),
            }
            if report.is_some_and(|i| fds[i].revents != 0) {
                self.read_report();
            }
            if control.is_some_and(|i| fds[i].revents != 0) {
                self.read_control();
            }
            let ready: Vec<bool> = fds[handshakes..].iter().map(|f| f.revents != 0).collect();
            self.read_handshakes(&ready);
            if fds[0].revents != 0 {
                self.accept();
            }
            self.check_deadlines();
        }
    }

    /// The earliest deadline of the session and the handshakes, if any.
    fn next_deadline(&self) -> Option<Instant> {
        let handshake = self.pending.first().map(|p| p.session.since + HANDSHAKE);
        let Some(live) = self.live.as_ref() else {
            return handshake;
        };
        let mut d = match live.session.phase() {
            Phase::Hello | Phase::Auth => live.session.since + HANDSHAKE,
            Phase::Open => live.last_frame + IDLE,
            // A client has until IDLE past its figure's limit to finish it.
            Phase::Figure | Phase::Finishing => match &live.figure {
                Some(f) => f.kill_at + IDLE,
                None => live.last_frame + IDLE,
            },
        };
        if let Some(f) = &live.figure {
            if f.result.is_none() {
                d = d.min(f.kill_at);
            }
            if let Some(by) = f.finish_by {
                d = d.min(by);
            }
        }
        Some(handshake.map_or(d, |h| h.min(d)))
    }

    /// Reads what the session's client sent and acts on every whole frame.
    fn read_control(&mut self) {
        let Some(mut live) = self.live.take() else {
            return;
        };
        let end = self.receive(&mut live, frame::MAX_FRAME);
        // Frames that arrived before the connection closed are still acted on.
        let end = match self.act(&mut live) {
            Some(e) => Some(e),
            None => end,
        };
        match end {
            Some(e) => self.close(live, e),
            None => self.live = Some(live),
        }
    }

    /// Reads what a client sent into its frame buffer, `most` bytes per
    /// turn at most; why the connection ended, if it did.
    fn receive(&self, live: &mut Live, most: usize) -> Option<End> {
        let mut chunk = vec![0u8; 64 << 10];
        let mut got = 0usize;
        loop {
            match live.stream.read(&mut chunk) {
                Ok(0) => break Some(End::Line(self.gone(live, "closed the connection"))),
                Ok(n) => {
                    live.frames.push(&chunk[..n]);
                    got += n;
                    // One frame's worth at most per turn: the loop stays
                    // responsive to the other descriptors.
                    if got > most {
                        break None;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break None,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => break Some(End::Line(self.gone(live, &format!("failed: {e}")))),
            }
        }
    }

    fn gone(&self, live: &Live, what: &str) -> String {
        let during = match live.session.phase() {
            Phase::Figure | Phase::Finishing => " during a figure",
            Phase::Hello | Phase::Auth => " during the handshake",
            Phase::Open => "",
        };
        format!("client {} {what}{during}", live.session.peer)
    }

    /// Acts on every whole frame received; why the session must end, if it must.
    fn act(&mut self, live: &mut Live) -> Option<End> {
        loop {
            let payload = match live.frames.next_payload() {
                Ok(Some(p)) => p,
                Ok(None) => return None,
                Err(e) => {
                    let reason = format!("bad frame: {e}");
                    let _ = send(live, &refused(&reason));
                    return Some(End::Line(format!(
                        "closed the session of {}: {reason}",
                        live.session.peer
                    )));
                }
            };
            live.last_frame = Instant::now();
            let now_ns = crate::sys::clock::monotonic_ns();
            let end = match live.session.on_payload(&payload, now_ns) {
                Step::Reply(msg) => send(live, &msg).err(),
                Step::Refuse(msg, line) => {
                    let _ = send(live, &msg);
                    Some(End::Line(line))
                }
                // An open session is past its handshake.
                Step::Welcome(_) => Some(End::Line(format!(
                    "closed the session of {}: internal error (a second Welcome)",
                    live.session.peer
                ))),
                Step::Clock(t1, t2) => {
                    let msg = AgentMsg::Clock {
                        t1,
                        t2,
                        t3: crate::sys::clock::monotonic_ns(),
                    };
                    send(live, &msg).err()
                }
                Step::Start(task) => self.start(live, task),
                Step::Finish => self.finish(live),
                Step::Bye => Some(End::Quiet),
            };
            if end.is_some() {
                return end;
            }
        }
    }

    fn check_deadlines(&mut self) {
        let now = Instant::now();
        // Handshakes are oldest first: the expired ones lead.
        let expired = self
            .pending
            .iter()
            .take_while(|p| now >= p.session.since + HANDSHAKE)
            .count();
        for mut conn in self.pending.drain(..expired) {
            let reason = format!("no handshake within {} s", HANDSHAKE.as_secs());
            let _ = send_within(&mut conn, &refused(&reason), HANDSHAKE_WRITE);
            log(&format!(
                "closed the connection of {}: {reason}",
                conn.session.peer
            ));
        }
        let Some(mut live) = self.live.take() else {
            return;
        };
        let mut end = None;
        match live.session.phase() {
            Phase::Figure | Phase::Finishing
                if live
                    .figure
                    .as_ref()
                    .is_some_and(|f| now >= f.kill_at + IDLE) =>
            {
                end = Some(End::Line(format!(
                    "closed the session of {}: no Finish within {} s of its figure's limit",
                    live.session.peer,
                    IDLE.as_secs()
                )));
            }
            Phase::Open if now >= live.last_frame + IDLE => {
                end = Some(End::Line(format!(
                    "closed the session of {}: silent for {} s",
                    live.session.peer,
                    IDLE.as_secs()
                )));
            }
            _ => {}
        }
        if end.is_none()
            && let Some(f) = live.figure.as_mut()
        {
            let finish_late = f.finish_by.is_some_and(|by| now >= by);
            if f.result.is_none() && (now >= f.kill_at || finish_late) {
                process::kill_and_reap(f.pid);
                f.report = None;
                let why = if finish_late {
                    format!(
                        "the agent's data process did not report within {} s of Finish",
                        FINISH_WAIT.as_secs()
                    )
                } else {
                    "the agent's data process ran past the figure's limit and was killed".into()
                };
                log(&format!("figure of {}: {why}", live.session.peer));
                f.result = Some(Report {
                    error: Some(why),
                    ..Report::default()
                });
            }
            end = send_done_if_ready(&mut live);
        }
        match end {
            Some(e) => self.close(live, e),
            None => self.live = Some(live),
        }
    }

    /// Ends a session: kills and reaps its figure's child, closes the
    /// connection, logs why.
    fn close(&mut self, mut live: Live, end: End) {
        if let Some(f) = live.figure.take()
            && f.result.is_none()
        {
            process::kill_and_reap(f.pid);
        }
        let _ = live.stream.shutdown(std::net::Shutdown::Both);
        let peer = live.session.peer;
        drop(live);
        match end {
            End::Line(line) => log(&format!("{line}; waiting for the next client")),
            End::Quiet => log(&format!(
                "session of {peer} ended; waiting for the next client"
            )),
        }
        self.sessions += 1;
    }
}

fn send(live: &mut Live, msg: &AgentMsg) -> Result<(), End> {
    send_within(live, msg, WRITE)
}

fn send_within(live: &mut Live, msg: &AgentMsg, wait: Duration) -> Result<(), End> {
    frame::write_frame(&mut live.stream, msg, Instant::now() + wait).map_err(|e| {
        let what = match e {
            FrameError::Timeout => format!("did not read a reply for {} s", wait.as_secs_f64()),
            FrameError::Length(n) => {
                return End::Line(format!(
                    "a reply of {n} bytes to {} is larger than a frame: session closed",
                    live.session.peer
                ));
            }
            e => format!("cannot be written to: {e}"),
        };
        End::Line(format!("client {} {what}", live.session.peer))
    })
}

fn pollfd(fd: std::os::fd::RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}
