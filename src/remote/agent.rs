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

use crate::engine::os::environment::{self, CpuLatencyState, NotHeld};
use crate::output::json::context::EnvironmentRecord;
use crate::remote::auth::{self, Side};
use crate::remote::data::{self, DataKey};
use crate::remote::frame::{self, FrameBuffer, FrameError};
use crate::remote::protocol::{
    AgentMsg, ClientMsg, PROTOCOL_VERSION, announced_protocol, ipcmark_version, printable,
};
use crate::remote::task::{MAX_ERROR, MAX_ONEWAY_MESSAGES, PortRange, Report, Role, Task};
use crate::sys::process::{self, ExitStatus, Fork};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

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

fn refused(reason: &str) -> AgentMsg {
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

/// The agent host's environment record, as a run's JSON writes it. The
/// agent holds no CPU latency request and measures no wake-up.
pub fn environment_record() -> serde_json::Value {
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

/// One figure's child process and its pipes.
struct Figure {
    pid: libc::pid_t,
    /// A byte here (or its closing) tells the child to stop.
    stop: Option<io::PipeWriter>,
    /// The child writes its report here, then exits.
    report: Option<io::PipeReader>,
    bytes: Vec<u8>,
    /// The report ran past [`frame::MAX_FRAME`].
    oversized: bool,
    /// Past this the child is killed.
    kill_at: Instant,
    /// `Finish` received: the report is sent once known, by this deadline.
    finish_by: Option<Instant>,
    /// The report, once the child ended.
    result: Option<Report>,
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

    fn accept(&mut self) {
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
    fn read_handshakes(&mut self, ready: &[bool]) {
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

    /// Starts a figure: binds its data socket, draws its data key, forks
    /// the child that serves it, answers `Ready` with the port and the key.
    fn start(&mut self, live: &mut Live, task: Task) -> Option<End> {
        match self.spawn(live, &task) {
            Ok((port, key, figure)) => {
                live.figure = Some(figure);
                send(live, &AgentMsg::Ready { port, key }).err()
            }
            Err(reason) => {
                live.session.figure_ended();
                log(&format!(
                    "figure of {} refused: {reason}",
                    live.session.peer
                ));
                send(live, &refused(&reason)).err()
            }
        }
    }

    fn spawn(&self, live: &Live, task: &Task) -> Result<(u16, String, Figure), String> {
        let ip = self.ip;
        let ports = self.config.data_ports;
        // A bug of the data plane must not end the agent: a panic while
        // binding refuses the figure.
        let listener =
            std::panic::catch_unwind(|| data::listen(task, ip, ports)).map_err(|_| {
                "the agent failed to bind the data socket (internal error)".to_string()
            })??;
        let port = listener.port();
        let key = DataKey::fresh()?;
        let peer = live.session.peer.ip();
        let (stop_r, stop_w) = io::pipe().map_err(|e| format!("pipe: {e}"))?;
        let (report_r, report_w) = io::pipe().map_err(|e| format!("pipe: {e}"))?;
        crate::sys::fd::set_nonblocking(&report_r, true).map_err(|e| format!("pipe: {e}"))?;
        let limit = Duration::from_millis(task.limit_ms);
        match process::fork().map_err(|e| format!("fork: {e}"))? {
            Fork::Child => {
                for fd in [
                    self.listener.as_raw_fd(),
                    live.stream.as_raw_fd(),
                    stop_w.as_raw_fd(),
                    report_r.as_raw_fd(),
                ] {
                    crate::sys::fd::close_inherited(fd);
                }
                let code = figure_child(
                    listener,
                    task,
                    (peer, &key),
                    OwnedFd::from(stop_r),
                    report_w,
                    limit,
                );
                process::exit_now(code)
            }
            Fork::Parent(pid) => {
                // The parent's copy of the data socket closes as `listener`
                // goes out of scope on return; the pipes' child ends now.
                drop(stop_r);
                drop(report_w);
                log(&format!(
                    "figure of {}: {} {} bytes, data port {port}",
                    live.session.peer,
                    task.proto.id(),
                    task.size
                ));
                Ok((
                    port,
                    key.hex(),
                    Figure {
                        pid,
                        stop: Some(stop_w),
                        report: Some(report_r),
                        bytes: Vec::new(),
                        oversized: false,
                        kill_at: Instant::now() + limit + FIGURE_GRACE,
                        finish_by: None,
                        result: None,
                    },
                ))
            }
        }
    }

    /// `Finish`: tells the child to stop; the report is sent when it comes.
    fn finish(&mut self, live: &mut Live) -> Option<End> {
        let Some(f) = live.figure.as_mut() else {
            return Some(End::Line("internal error: Finish without a figure".into()));
        };
        if let Some(mut w) = f.stop.take() {
            let _ = w.write(&[1]);
        }
        f.finish_by = Some(Instant::now() + FINISH_WAIT);
        send_done_if_ready(live)
    }

    /// Reads the child's report as it comes; at its end, reaps the child.
    fn read_report(&mut self) {
        let Some(mut live) = self.live.take() else {
            return;
        };
        if let Some(f) = live.figure.as_mut()
            && let Some(r) = f.report.as_mut()
        {
            let mut chunk = [0u8; 64 << 10];
            loop {
                match r.read(&mut chunk) {
                    Ok(0) => {
                        f.report = None;
                        let status = reap(f.pid);
                        f.result = Some(if f.oversized {
                            Report {
                                error: Some(format!(
                                    "the agent's report is larger than a control frame ({} bytes)",
                                    frame::MAX_FRAME
                                )),
                                ..Report::default()
                            }
                        } else {
                            parse_report(&f.bytes, status)
                        });
                        if let Some(r) = f.result.as_ref().filter(|r| r.rejected > 0) {
                            log(&format!(
                                "figure of {}: dropped {} data connections or datagrams \
                                 from another address or without the figure's key",
                                live.session.peer, r.rejected
                            ));
                        }
                        break;
                    }
                    Ok(n) => {
                        // A report larger than a frame cannot be sent: it
                        // is drained, not kept, and replaced by an error.
                        if f.bytes.len() + n <= frame::MAX_FRAME {
                            f.bytes.extend_from_slice(&chunk[..n]);
                        } else {
                            f.oversized = true;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
        }
        match send_done_if_ready(&mut live) {
            Some(end) => self.close(live, end),
            None => self.live = Some(live),
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

/// Sends `Done` once `Finish` came and the report is known.
fn send_done_if_ready(live: &mut Live) -> Option<End> {
    let f = live.figure.as_ref()?;
    if f.finish_by.is_none() || f.result.is_none() {
        return None;
    }
    let report = live.figure.take()?.result?;
    live.session.figure_ended();
    live.last_frame = Instant::now();
    send(live, &AgentMsg::Done { report }).err()
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

/// Reaps a child whose report pipe closed (it is exiting).
fn reap(pid: libc::pid_t) -> Option<ExitStatus> {
    loop {
        match process::wait_blocking(pid) {
            Ok(s) => return Some(s),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return None,
        }
    }
}

/// The child's report, or one that says how the child ended without one.
fn parse_report(bytes: &[u8], status: Option<ExitStatus>) -> Report {
    if let Ok(r) = serde_json::from_slice::<Report>(bytes) {
        return r;
    }
    let how = match status {
        Some(ExitStatus::Code(c)) => format!("exit code {c}"),
        Some(ExitStatus::Signal(s)) => format!("signal {s}"),
        None => "status unknown".into(),
    };
    Report {
        error: Some(format!("the agent's data process ended: {how}")),
        ..Report::default()
    }
}

/// The figure's child: pins itself, serves the data plane, writes the
/// report; returns its exit code (the caller `_exit`s with it).
fn figure_child(
    listener: data::DataListener,
    task: &Task,
    (peer, key): (IpAddr, &DataKey),
    stop: OwnedFd,
    mut report_w: io::PipeWriter,
    limit: Duration,
) -> i32 {
    // The child must not outlive an agent killed with SIGKILL.
    let _ = process::set_parent_death_signal(libc::SIGKILL);
    // The agent's own children set its flags (SIGCHLD): the data plane's
    // waits must start from a clean state.
    crate::engine::os::interrupt::reset_for_figure();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if let Some(cpu) = task.cpu
            && let Err(e) = crate::sys::sched::pin_to_cpu(cpu)
        {
            return Report {
                error: Some(format!("cannot run on CPU {cpu}: {e}")),
                ..Report::default()
            };
        }
        data::serve(listener, task, peer, key, stop, Instant::now() + limit)
    }));
    let Ok(mut report) = result else {
        return 101;
    };
    // The report must fit a frame whatever the error says.
    if let Some(e) = &mut report.error
        && e.chars().count() > MAX_ERROR
    {
        *e = e.chars().take(MAX_ERROR).collect();
    }
    match serde_json::to_vec(&report) {
        Ok(bytes) if report_w.write_all(&bytes).is_ok() => 0,
        _ => 1,
    }
}

#[cfg(test)]
mod tests;
