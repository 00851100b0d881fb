//! The data plane: the connections a remote figure's messages travel on,
//! and the agent's side of every role (echo, sink, source, receiver).
//! The agent runs [`serve`] in a child process of its own; the client
//! measures through [`connect`]'s endpoint with the engine's models and
//! the loops of [`crate::remote::roles`].
//!
//! Every wait has a deadline: the sockets time out every [`TICK`], and an
//! end then looks at its stop pipe, its deadline and how long its peer has
//! been silent, so a peer that dies or hangs ends the figure within
//! [`QUIET`] instead of blocking it.

use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::models::pingpong;
use crate::engine::models::region::Region;
use crate::engine::os::interrupt;
use crate::remote::roles;
use crate::remote::task::{PortRange, Proto, Report, Role, Task};
use crate::sys::fd::wait_readable;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{OwnedFd, RawFd};
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

/// How long a blocked send or receive waits before its end looks at the
/// stop pipe, the deadline and the silence of its peer.
pub const TICK: Duration = Duration::from_millis(100);

/// The longest a peer may stay silent while an end waits for it: past it
/// the figure fails ("no data from … for 2 s").
pub const QUIET: Duration = Duration::from_secs(2);

/// How long the agent waits for the client's data connection.
const CONNECT_WAIT: Duration = Duration::from_secs(5);

/// The agent's data socket for one figure, bound before the client is told
/// its port.
pub struct DataListener {
    bound: Bound,
    port: u16,
}

enum Bound {
    Tcp(TcpListener),
    Udp(UdpSocket),
}

impl DataListener {
    /// The port the client connects (or sends) to.
    pub fn port(&self) -> u16 {
        self.port
    }
}

/// Binds the data socket for `task` on `ip`, at the first free port of
/// `ports` (any port for [`PortRange::ANY`]).
pub fn listen(task: &Task, ip: IpAddr, ports: PortRange) -> Result<DataListener, String> {
    let mut last = None;
    for port in ports.first..=ports.last {
        let at = SocketAddr::new(ip, port);
        let bound = match task.proto {
            Proto::Tcp => TcpListener::bind(at).map(Bound::Tcp),
            Proto::Udp => UdpSocket::bind(at).map(Bound::Udp),
        };
        match bound {
            Ok(bound) => {
                let local = match &bound {
                    Bound::Tcp(l) => l.local_addr(),
                    Bound::Udp(s) => s.local_addr(),
                }
                .map_err(|e| format!("getsockname: {e}"))?;
                return Ok(DataListener {
                    bound,
                    port: local.port(),
                });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(format!(
        "no data port free on {ip} in {}-{}: {}",
        ports.first,
        ports.last,
        last.map_or_else(|| "empty range".into(), |e| e.to_string())
    ))
}

/// Runs the agent's side of `task` on `listener` (in the agent's child
/// process): accepts the client's connection, then echoes, sinks, sends or
/// receives until the client closes, `stop` becomes readable (a byte, or
/// the agent's end closed) or `deadline` passes; what it counted, with the
/// error that ended it early if one did.
pub fn serve(listener: DataListener, task: &Task, stop: OwnedFd, deadline: Instant) -> Report {
    let mut report = Report::default();
    let end = match accept(
        listener,
        task.size,
        deadline.min(Instant::now() + CONNECT_WAIT),
    ) {
        Ok(sock) => DataEnd::new(sock, Some(stop), deadline),
        Err(e) => {
            report.error = Some(e);
            return report;
        }
    };
    let mut end = end;
    let outcome = match &task.role {
        Role::Echo => {
            let echoed = AtomicU64::new(0);
            let r = pingpong::echo(&mut end, &mut Region::warm(task.size), None, &echoed);
            report.messages = echoed.into_inner();
            report.bytes = report.messages * task.size as u64;
            r
        }
        Role::Sink { window_ms, verify } => {
            let window = Duration::from_millis((*window_ms).max(1));
            roles::sink(&mut end, task.size, window, *verify, &mut report)
        }
        Role::Source { duration_ms } => roles::source(
            &mut end,
            task.size,
            Duration::from_millis(*duration_ms),
            &mut report,
        ),
        Role::Receiver { messages } => roles::receiver(&mut end, task.size, *messages, &mut report),
    };
    report.cpu = crate::sys::sched::current_cpu();
    match outcome {
        // The client closed its end or asked the agent to finish: the
        // normal end of every role.
        Ok(()) | Err(ChannelError::Closed) | Err(ChannelError::Stopped) => {}
        Err(e) => report.error = Some(e.to_string()),
    }
    report
}

/// Connects the client's end of `task`'s data connection to the agent's
/// port; the end fails a wait once the agent has been silent for
/// [`QUIET`], past `deadline`, or once `watch` (the agent's control
/// connection) turns readable: the agent went away, and a UDP message
/// lost with it would otherwise be waited for until the silence ends.
pub fn connect(
    task: &Task,
    agent: SocketAddr,
    deadline: Instant,
    watch: Option<RawFd>,
) -> Result<DataEnd, String> {
    let sock = match task.proto {
        Proto::Tcp => {
            let s = TcpStream::connect_timeout(&agent, CONNECT_WAIT)
                .map_err(|e| format!("data connection to {agent}: {e}"))?;
            Sock::Tcp(s)
        }
        Proto::Udp => {
            let any: SocketAddr = match agent {
                SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
                SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
            };
            let s = UdpSocket::bind(any).map_err(|e| format!("data socket: {e}"))?;
            s.connect(agent)
                .map_err(|e| format!("data socket to {agent}: {e}"))?;
            udp_hello(&s, agent)?;
            Sock::Udp(s)
        }
    };
    sock.tune()
        .map_err(|e| format!("data socket options: {e}"))?;
    let mut end = DataEnd::new(sock, None, deadline);
    end.watch = watch;
    Ok(end)
}

/// The UDP client's hello: an empty datagram, sent every [`TICK`] until the
/// agent answers with one, so the agent learns where to send (and a lost
/// hello costs a tick, not the figure).
fn udp_hello(s: &UdpSocket, agent: SocketAddr) -> Result<(), String> {
    s.set_read_timeout(Some(TICK))
        .map_err(|e| format!("data socket options: {e}"))?;
    let until = Instant::now() + CONNECT_WAIT;
    let mut buf = [0u8; 1];
    while Instant::now() < until {
        interrupt::check().map_err(|e| e.to_string())?;
        match s.send(&[]) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => {}
            Err(e) => return Err(format!("data hello to {agent}: {e}")),
        }
        match s.recv(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                        | io::ErrorKind::ConnectionRefused
                ) => {}
            Err(e) => return Err(format!("data hello from {agent}: {e}")),
        }
    }
    Err(format!(
        "no answer on the UDP data port of {agent} within {}s",
        CONNECT_WAIT.as_secs()
    ))
}

/// Waits for the client's connection (TCP) or hello (UDP) until `until`.
fn accept(listener: DataListener, _size: usize, until: Instant) -> Result<Sock, String> {
    let left = || until.saturating_duration_since(Instant::now());
    let sock = match listener.bound {
        Bound::Tcp(l) => {
            if !wait_readable(&l, left()).map_err(|e| format!("poll: {e}"))? {
                return Err("the client never opened the data connection".into());
            }
            let (s, _) = l.accept().map_err(|e| format!("accept: {e}"))?;
            Sock::Tcp(s)
        }
        Bound::Udp(s) => {
            let mut buf = [0u8; 1];
            loop {
                if !wait_readable(&s, left()).map_err(|e| format!("poll: {e}"))? {
                    return Err("the client never sent its data hello".into());
                }
                match s.recv_from(&mut buf) {
                    Ok((0, from)) => {
                        s.connect(from).map_err(|e| format!("connect: {e}"))?;
                        s.send(&[]).map_err(|e| format!("data hello: {e}"))?;
                        break;
                    }
                    Ok(_) => continue,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(format!("recv: {e}")),
                }
            }
            Sock::Udp(s)
        }
    };
    sock.tune()
        .map_err(|e| format!("data socket options: {e}"))?;
    Ok(sock)
}

/// A data socket.
enum Sock {
    Tcp(TcpStream),
    Udp(UdpSocket),
}

impl Sock {
    /// Timeouts of one [`TICK`] on both directions (so no call blocks for
    /// longer), and TCP_NODELAY: without it a small echo can wait for a
    /// delayed ACK.
    fn tune(&self) -> io::Result<()> {
        match self {
            Sock::Tcp(s) => {
                s.set_nodelay(true)?;
                s.set_read_timeout(Some(TICK))?;
                s.set_write_timeout(Some(TICK))
            }
            Sock::Udp(s) => {
                s.set_read_timeout(Some(TICK))?;
                s.set_write_timeout(Some(TICK))
            }
        }
    }
}

/// Why a wait ended without data: time to look around, or a real error.
enum Waited {
    Again,
    Failed(ChannelError),
}

fn classify(e: io::Error, op: &'static str) -> Waited {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted => {
            Waited::Again
        }
        _ => match e.raw_os_error() {
            Some(libc::EPIPE | libc::ECONNRESET | libc::ECONNREFUSED) => {
                Waited::Failed(ChannelError::Closed)
            }
            _ => Waited::Failed(ChannelError::Io { op, source: e }),
        },
    }
}

/// One end of a remote figure's data connection: whole messages of the
/// figure's size (TCP framed by that size, UDP one datagram each), with
/// the deadlines of [`TICK`], [`QUIET`] and the figure's own.
pub struct DataEnd {
    sock: Sock,
    /// The agent's stop pipe: readable once the client has finished.
    stop: Option<OwnedFd>,
    deadline: Instant,
    /// Whether reaching `deadline` is the normal end (a sink that knows
    /// when its source stops) rather than a failure.
    soft: bool,
    /// When the peer last delivered or accepted anything.
    heard: Instant,
    /// Whole messages sent (ping-pong: the round trips, checked against
    /// the agent's count of echoes).
    pub sent: u64,
    /// The client's: the agent's control connection, readable once the
    /// agent has gone.
    watch: Option<RawFd>,
}

impl DataEnd {
    fn new(sock: Sock, stop: Option<OwnedFd>, deadline: Instant) -> DataEnd {
        DataEnd {
            sock,
            stop,
            deadline,
            soft: false,
            heard: Instant::now(),
            sent: 0,
            watch: None,
        }
    }

    /// Ends waits at `at` as a normal end ([`ChannelError::Stopped`]): for
    /// a UDP sink, whose source has no way to say it has stopped.
    pub fn end_at(&mut self, at: Instant) {
        self.deadline = at;
        self.soft = true;
    }

    /// Whether this is a UDP connection (messages may be lost).
    pub fn lossy(&self) -> bool {
        matches!(self.sock, Sock::Udp(_))
    }

    /// After a tick without data: a stop request (the agent's pipe, or
    /// Ctrl-C on the client), the figure's deadline or a silent peer end
    /// the wait; otherwise it goes on.
    fn look_around(&mut self) -> Result<(), ChannelError> {
        interrupt::check()?;
        if let Some(stop) = &self.stop
            && wait_readable(stop, Duration::ZERO).unwrap_or(true)
        {
            return Err(ChannelError::Stopped);
        }
        if let Some(fd) = self.watch
            && wait_readable(&fd, Duration::ZERO).unwrap_or(false)
        {
            return Err(ChannelError::Check(
                "the agent closed its control connection: it is gone".into(),
            ));
        }
        let now = Instant::now();
        if now >= self.deadline {
            if self.soft {
                return Err(ChannelError::Stopped);
            }
            return Err(ChannelError::Check(
                "the figure ran past its time limit".into(),
            ));
        }
        if now.duration_since(self.heard) >= QUIET && self.stop.is_none() {
            return Err(ChannelError::Check(format!(
                "no data from the agent for {} s: it stopped answering",
                QUIET.as_secs()
            )));
        }
        Ok(())
    }

    /// Receives exactly `buf.len()` bytes (TCP) or one datagram of that
    /// length (UDP; an empty datagram, a repeated hello, is answered on the
    /// agent and skipped). `Ok(false)`: the peer closed the connection
    /// before any byte of it.
    pub fn recv_exact(&mut self, buf: &mut [u8]) -> Result<bool, ChannelError> {
        let mut done = 0;
        loop {
            let got = match &mut self.sock {
                Sock::Tcp(s) => s.read(&mut buf[done..]),
                Sock::Udp(s) => s.recv(buf),
            };
            match got {
                Ok(0) if matches!(self.sock, Sock::Tcp(_)) => {
                    return if done == 0 {
                        Ok(false)
                    } else {
                        Err(ChannelError::Closed)
                    };
                }
                Ok(n) => {
                    self.heard = Instant::now();
                    if let Sock::Udp(s) = &self.sock {
                        if n == 0 && !buf.is_empty() {
                            if self.stop.is_some() {
                                // The client's hello again: our answer was lost.
                                let _ = s.send(&[]);
                            }
                            continue;
                        }
                        // recv truncates a longer datagram to the buffer:
                        // a wrong length shows as a short one or in the
                        // content check.
                        if n != buf.len() {
                            return Err(ChannelError::Length {
                                expected: buf.len(),
                                got: n,
                            });
                        }
                        return Ok(true);
                    }
                    done += n;
                    if done == buf.len() {
                        return Ok(true);
                    }
                }
                Err(e) => match classify(e, "recv") {
                    Waited::Again => self.look_around()?,
                    Waited::Failed(e) => return Err(e),
                },
            }
        }
    }

    /// Sends all of `msg` (TCP) or one datagram (UDP).
    pub fn send_all(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let mut done = 0;
        loop {
            let sent = match &mut self.sock {
                Sock::Tcp(s) => s.write(&msg[done..]),
                Sock::Udp(s) => s.send(msg),
            };
            match sent {
                Ok(n) => {
                    if let Sock::Udp(_) = self.sock {
                        self.sent += 1;
                        return crate::engine::channel::expect_len(msg.len(), n);
                    }
                    if n == 0 {
                        return Err(ChannelError::Closed);
                    }
                    self.heard = Instant::now();
                    done += n;
                    if done == msg.len() {
                        self.sent += 1;
                        return Ok(());
                    }
                }
                Err(e) => match classify(e, "send") {
                    Waited::Again => self.look_around()?,
                    Waited::Failed(e) => return Err(e),
                },
            }
        }
    }

    /// Ends this side's sending (TCP: the peer reads end of file once it
    /// has everything; UDP has no such signal).
    pub fn finish_sending(&mut self) {
        if let Sock::Tcp(s) = &self.sock {
            let _ = s.shutdown(Shutdown::Write);
        }
    }

    /// Whether a look around would end the wait now (stop requested, past
    /// the deadline): for loops that send without waiting.
    pub fn should_stop(&mut self) -> Result<(), ChannelError> {
        interrupt::check()?;
        if let Some(stop) = &self.stop
            && wait_readable(stop, Duration::ZERO).unwrap_or(true)
        {
            return Err(ChannelError::Stopped);
        }
        Ok(())
    }
}

impl Endpoint for DataEnd {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.send_all(msg)
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        if self.recv_exact(buf)? {
            Ok(())
        } else {
            Err(ChannelError::Closed)
        }
    }
}
