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
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
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

/// Bytes of a figure's data key.
pub const KEY_BYTES: usize = 32;

/// What starts every data hello, before the key: as a little-endian
/// sequence number (the first 8 bytes of every stream and one-way message)
/// it is about 5.7 × 10¹⁸, which no figure reaches, so a repeated hello is
/// never taken for a message of the same length.
const HELLO_MAGIC: &[u8; 8] = b"IPCMHELO";

/// Bytes of a data hello: [`HELLO_MAGIC`], then the figure's key.
pub const HELLO_LEN: usize = HELLO_MAGIC.len() + KEY_BYTES;

/// The most TCP data connections the agent holds while it waits for their
/// hello: past it the oldest is dropped, so silent connections can delay
/// the client's by nothing but their own number.
const MAX_PENDING: usize = 8;

/// A figure's data key: drawn by the agent for each figure and given to
/// its client in `Ready` over the control connection (authenticated when
/// the agent has a token). The client's data connection or first datagram
/// must carry it, from the control connection's address, before the agent
/// sends a byte on the data plane: a datagram with another source address
/// cannot turn the agent on a third party, and a stranger that cannot read
/// the control connection cannot take the figure's place.
#[derive(Clone, PartialEq, Eq)]
pub struct DataKey([u8; KEY_BYTES]);

impl std::fmt::Debug for DataKey {
    /// The key is a secret of the figure: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DataKey(…)")
    }
}

impl DataKey {
    /// A fresh key from the OS's CSPRNG.
    pub fn fresh() -> Result<DataKey, String> {
        let mut k = [0u8; KEY_BYTES];
        getrandom::fill(&mut k).map_err(|e| format!("no random numbers from the system: {e}"))?;
        Ok(DataKey(k))
    }

    /// The key as hex, for `Ready`.
    pub fn hex(&self) -> String {
        crate::remote::auth::hex(&self.0)
    }

    /// The key `Ready` carried; `None` unless it is hex of [`KEY_BYTES`] bytes.
    pub fn from_hex(s: &str) -> Option<DataKey> {
        let bytes = crate::remote::auth::unhex(s)?;
        Some(DataKey(bytes.try_into().ok()?))
    }

    /// The hello the client sends first on the data plane.
    pub fn hello(&self) -> [u8; HELLO_LEN] {
        let mut h = [0u8; HELLO_LEN];
        h[..HELLO_MAGIC.len()].copy_from_slice(HELLO_MAGIC);
        h[HELLO_MAGIC.len()..].copy_from_slice(&self.0);
        h
    }

    /// Whether `got` is this key's hello, compared in constant time (a
    /// stranger learns nothing from how fast a guess is dropped).
    pub fn is_hello(&self, got: &[u8]) -> bool {
        let want = self.hello();
        got.len() == want.len() && got.iter().zip(&want).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
    }
}

/// Whether `a` and `b` are one host's address (an IPv4 client seen through
/// an IPv6 socket is the same client).
fn same_host(a: IpAddr, b: IpAddr) -> bool {
    a.to_canonical() == b.to_canonical()
}

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
/// process): accepts the client's connection — the first from `peer` (the
/// control connection's address) whose hello carries `key` — then echoes,
/// sinks, sends or receives until the client closes, `stop` becomes
/// readable (a byte, or the agent's end closed) or `deadline` passes; what
/// it counted (with the connections and datagrams it dropped unanswered),
/// and the error that ended it early if one did.
pub fn serve(
    listener: DataListener,
    task: &Task,
    peer: IpAddr,
    key: &DataKey,
    stop: OwnedFd,
    deadline: Instant,
) -> Report {
    let mut report = Report::default();
    let end = match accept(
        listener,
        peer,
        key,
        deadline.min(Instant::now() + CONNECT_WAIT),
        &mut report.rejected,
    ) {
        Ok(sock) => {
            let mut end = DataEnd::new(sock, Some(stop), deadline);
            end.hello = Some(key.hello());
            end
        }
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
/// port and sends the hello that carries `key` (the figure's, from
/// `Ready`); the end fails a wait once the agent has been silent for
/// [`QUIET`], past `deadline`, or once `watch` (the agent's control
/// connection) turns readable: the agent went away, and a UDP message
/// lost with it would otherwise be waited for until the silence ends.
pub fn connect(
    task: &Task,
    agent: SocketAddr,
    key: &DataKey,
    deadline: Instant,
    watch: Option<RawFd>,
) -> Result<DataEnd, String> {
    let sock = match task.proto {
        Proto::Tcp => {
            let mut s = TcpStream::connect_timeout(&agent, CONNECT_WAIT)
                .map_err(|e| format!("data connection to {agent}: {e}"))?;
            s.set_write_timeout(Some(CONNECT_WAIT))
                .map_err(|e| format!("data socket options: {e}"))?;
            s.write_all(&key.hello())
                .map_err(|e| format!("data hello to {agent}: {e}"))?;
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
            udp_hello(&s, agent, key)?;
            Sock::Udp(s)
        }
    };
    sock.tune()
        .map_err(|e| format!("data socket options: {e}"))?;
    let mut end = DataEnd::new(sock, None, deadline);
    end.watch = watch;
    Ok(end)
}

/// The UDP client's hello: the key's hello datagram, sent every [`TICK`]
/// until the agent answers with an empty one, so the agent learns where to
/// send (and a lost hello costs a tick, not the figure).
fn udp_hello(s: &UdpSocket, agent: SocketAddr, key: &DataKey) -> Result<(), String> {
    s.set_read_timeout(Some(TICK))
        .map_err(|e| format!("data socket options: {e}"))?;
    let until = Instant::now() + CONNECT_WAIT;
    let mut buf = [0u8; 1];
    while Instant::now() < until {
        interrupt::check().map_err(|e| e.to_string())?;
        match s.send(&key.hello()) {
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

/// Waits until `until` for the client's connection (TCP) or hello (UDP):
/// the first from `peer` that carries `key`'s hello. Whatever else comes
/// is dropped unanswered and counted in `rejected`.
fn accept(
    listener: DataListener,
    peer: IpAddr,
    key: &DataKey,
    until: Instant,
    rejected: &mut u64,
) -> Result<Sock, String> {
    let sock = match listener.bound {
        Bound::Tcp(l) => Sock::Tcp(accept_tcp(l, peer, key, until, rejected)?),
        Bound::Udp(s) => {
            accept_udp(&s, peer, key, until, rejected)?;
            Sock::Udp(s)
        }
    };
    sock.tune()
        .map_err(|e| format!("data socket options: {e}"))?;
    Ok(sock)
}

/// The UDP hello: datagrams from another address or without the key are
/// dropped; the first good one connects the socket to its sender (the
/// kernel then drops every datagram from anywhere else) and is answered
/// with an empty datagram — the agent's first byte on the data plane.
fn accept_udp(
    s: &UdpSocket,
    peer: IpAddr,
    key: &DataKey,
    until: Instant,
    rejected: &mut u64,
) -> Result<(), String> {
    // One byte more than a hello, so that a longer datagram is not taken
    // for one truncated to the buffer.
    let mut buf = [0u8; HELLO_LEN + 1];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if !wait_readable(s, left).map_err(|e| format!("poll: {e}"))? {
            return Err(never("sent its data hello", *rejected));
        }
        match s.recv_from(&mut buf) {
            Ok((n, from)) if same_host(from.ip(), peer) && key.is_hello(&buf[..n]) => {
                s.connect(from).map_err(|e| format!("connect: {e}"))?;
                s.send(&[]).map_err(|e| format!("data hello: {e}"))?;
                return Ok(());
            }
            Ok(_) => *rejected += 1,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("recv: {e}")),
        }
    }
}

/// A TCP connection waiting for its hello.
struct Pending {
    stream: TcpStream,
    got: [u8; HELLO_LEN],
    len: usize,
}

/// The TCP hello: connections from another address are closed at once;
/// the others are held (at most [`MAX_PENDING`], non-blocking, all watched
/// at once, so a silent one holds up nobody) until their first
/// [`HELLO_LEN`] bytes show whether they carry the key. The agent writes
/// nothing to any of them; the first with the key is the figure's.
fn accept_tcp(
    l: TcpListener,
    peer: IpAddr,
    key: &DataKey,
    until: Instant,
    rejected: &mut u64,
) -> Result<TcpStream, String> {
    l.set_nonblocking(true)
        .map_err(|e| format!("data socket options: {e}"))?;
    let mut pending: Vec<Pending> = Vec::new();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            *rejected += pending.len() as u64;
            return Err(never("opened the data connection", *rejected));
        }
        let mut fds: Vec<libc::pollfd> = std::iter::once(l.as_raw_fd())
            .chain(pending.iter().map(|p| p.stream.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        match crate::sys::fd::poll(&mut fds, left) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("poll: {e}")),
        }
        // The held connections first (in reverse, so that removing one
        // leaves the indices still to visit in place).
        for i in (0..pending.len()).rev() {
            if fds[i + 1].revents == 0 {
                continue;
            }
            let p = &mut pending[i];
            match p.stream.read(&mut p.got[p.len..]) {
                Ok(0) => {}
                Ok(n) => {
                    p.len += n;
                    if p.len < HELLO_LEN {
                        continue;
                    }
                    if key.is_hello(&p.got) {
                        let p = pending.swap_remove(i);
                        *rejected += pending.len() as u64;
                        p.stream
                            .set_nonblocking(false)
                            .map_err(|e| format!("data socket options: {e}"))?;
                        return Ok(p.stream);
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) =>
                {
                    continue;
                }
                Err(_) => {}
            }
            // Closed, failed or a wrong hello: dropped.
            pending.swap_remove(i);
            *rejected += 1;
        }
        if fds[0].revents == 0 {
            continue;
        }
        loop {
            match l.accept() {
                Ok((stream, from)) => {
                    if !same_host(from.ip(), peer) || stream.set_nonblocking(true).is_err() {
                        *rejected += 1;
                        continue;
                    }
                    if pending.len() >= MAX_PENDING {
                        pending.remove(0);
                        *rejected += 1;
                    }
                    pending.push(Pending {
                        stream,
                        got: [0; HELLO_LEN],
                        len: 0,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A connection reset before it was accepted, or no
                // descriptor left: the others go on (after a pause, as the
                // listener stays readable while the cause lasts).
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(10));
                    break;
                }
            }
        }
    }
}

/// The error of a figure whose client never came, with what was dropped.
fn never(what: &str, rejected: u64) -> String {
    let mut e = format!("the client never {what}");
    if rejected > 0 {
        e.push_str(&format!(
            " ({rejected} connections or datagrams from another address or without the figure's key were dropped)"
        ));
    }
    e
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
    /// The agent's UDP end: the client's hello, which may come again (the
    /// client sends it until answered) and is answered again, not taken
    /// for a message.
    hello: Option<[u8; HELLO_LEN]>,
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
            hello: None,
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
    /// length (UDP; on the agent, the client's hello again is answered and
    /// skipped; on the client, an empty datagram, the agent's answer to a
    /// repeated hello, is skipped). `Ok(false)`: the peer closed the
    /// connection before any byte of it.
    pub fn recv_exact(&mut self, buf: &mut [u8]) -> Result<bool, ChannelError> {
        let mut done = 0;
        // A message shorter than a hello is received into this, so that a
        // hello is seen whole rather than cut to the message's length.
        let mut short = [0u8; HELLO_LEN];
        loop {
            let small = self.hello.is_some() && buf.len() < HELLO_LEN;
            let got = match &mut self.sock {
                Sock::Tcp(s) => s.read(&mut buf[done..]),
                Sock::Udp(s) if small => s.recv(&mut short),
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
                        let got = if small { &short[..n] } else { &buf[..n] };
                        if let Some(hello) = &self.hello
                            && got == hello
                        {
                            // The client's hello again: our answer was lost.
                            let _ = s.send(&[]);
                            continue;
                        }
                        if n == 0 && !buf.is_empty() {
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
                        if small {
                            buf.copy_from_slice(&short[..n]);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hello_carries_its_key_and_no_other_is_taken_for_it() {
        let key = DataKey::fresh().unwrap();
        let other = DataKey::fresh().unwrap();
        assert_ne!(key, other);
        assert_eq!(DataKey::from_hex(&key.hex()), Some(key.clone()));
        assert_eq!(DataKey::from_hex("abc"), None);
        assert_eq!(DataKey::from_hex(&"ab".repeat(KEY_BYTES + 1)), None);
        let hello = key.hello();
        assert!(key.is_hello(&hello));
        assert!(!other.is_hello(&hello));
        assert!(!key.is_hello(&hello[..HELLO_LEN - 1]));
        assert!(!key.is_hello(&[]));
        let mut longer = hello.to_vec();
        longer.push(0);
        assert!(!key.is_hello(&longer));
        // Never printed.
        assert!(!format!("{key:?}").contains(&key.hex()[..8]));
        // The magic, read as a message's sequence number, is none a figure reaches.
        assert!(u64::from_le_bytes(*HELLO_MAGIC) > 1 << 60);
    }

    #[test]
    fn an_ipv4_client_seen_through_an_ipv6_socket_is_the_same_host() {
        let v4: IpAddr = "127.0.0.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(same_host(v4, mapped));
        assert!(!same_host(v4, "127.0.0.2".parse().unwrap()));
    }

    fn serve_in_thread(
        task: &Task,
        peer: IpAddr,
        wait: Duration,
    ) -> (
        u16,
        DataKey,
        io::PipeWriter,
        std::thread::JoinHandle<Report>,
    ) {
        let l = listen(task, "127.0.0.1".parse().unwrap(), PortRange::ANY).unwrap();
        let port = l.port();
        let key = DataKey::fresh().unwrap();
        let (r, w) = io::pipe().unwrap();
        let (task, theirs) = (task.clone(), key.clone());
        let h = std::thread::spawn(move || {
            serve(
                l,
                &task,
                peer,
                &theirs,
                OwnedFd::from(r),
                Instant::now() + wait,
            )
        });
        (port, key, w, h)
    }

    fn echo_task(proto: Proto) -> Task {
        Task {
            proto,
            size: 16,
            role: Role::Echo,
            cpu: None,
            limit_ms: 20_000,
        }
    }

    #[test]
    fn silent_and_wrong_tcp_connections_get_no_byte_and_do_not_hold_up_the_client() {
        let (port, key, mut stop, h) = serve_in_thread(
            &echo_task(Proto::Tcp),
            "127.0.0.1".parse().unwrap(),
            Duration::from_secs(20),
        );
        let at: SocketAddr = ([127, 0, 0, 1], port).into();
        // Silent ones, more than the agent holds, then one with a wrong key.
        let silent: Vec<TcpStream> = (0..MAX_PENDING + 2)
            .map(|_| TcpStream::connect(at).unwrap())
            .collect();
        let mut wrong = TcpStream::connect(at).unwrap();
        wrong.write_all(&DataKey::fresh().unwrap().hello()).unwrap();
        let mut end = connect(
            &echo_task(Proto::Tcp),
            at,
            &key,
            Instant::now() + Duration::from_secs(20),
            None,
        )
        .unwrap();
        let mut msg = [7u8; 16];
        end.send_all(&msg).unwrap();
        assert!(end.recv_exact(&mut msg).unwrap(), "no echo");
        drop(end);
        // The echo ends as the client closes: the pipe may be gone already.
        let _ = stop.write_all(&[1]);
        let report = h.join().unwrap();
        assert_eq!(report.error, None);
        assert_eq!(report.messages, 1);
        assert!(report.rejected >= 1, "{report:?}");
        // Not one byte came back on a stranger's connection.
        wrong
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut got = Vec::new();
        let _ = wrong.read_to_end(&mut got);
        assert!(got.is_empty(), "{got:?}");
        for mut s in silent {
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut got = Vec::new();
            let _ = s.read_to_end(&mut got);
            assert!(got.is_empty(), "{got:?}");
        }
    }

    #[test]
    fn a_connection_from_another_address_gets_nothing_even_with_the_key() {
        // The control connection came from 127.0.0.2; this test connects
        // from 127.0.0.1.
        let (port, key, _stop, h) = serve_in_thread(
            &echo_task(Proto::Tcp),
            "127.0.0.2".parse().unwrap(),
            Duration::from_millis(500),
        );
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(&key.hello()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        assert!(got.is_empty(), "{got:?}");
        let report = h.join().unwrap();
        assert_eq!(report.rejected, 1, "{report:?}");
        let e = report.error.unwrap();
        assert!(e.contains("never opened the data connection (1 "), "{e}");
    }
}
