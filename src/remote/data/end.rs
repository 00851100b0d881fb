//! The ends of a data connection: [`DataEnd`], whole messages of the
//! figure's size over TCP or UDP, and the waits that make every send and
//! receive look, each [`TICK`], at the stop pipe, the deadline and the
//! peer's silence. Apart because it is what both sides time through (the
//! engine's `Endpoint`), once the accept path or `connect` has made it.

use super::key::HELLO_LEN;
use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::os::interrupt;
use crate::sys::fd::wait_readable;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream, UdpSocket};
use std::os::fd::{OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// How long a blocked send or receive waits before its end looks at the
/// stop pipe, the deadline and the silence of its peer.
pub const TICK: Duration = Duration::from_millis(100);

/// The longest a peer may stay silent while an end waits for it: past it
/// the figure fails ("no data from … for 2 s").
pub const QUIET: Duration = Duration::from_secs(2);

/// A data socket.
pub(super) enum Sock {
    Tcp(TcpStream),
    Udp(UdpSocket),
}

impl Sock {
    /// Timeouts of one [`TICK`] on both directions (so no call blocks for
    /// longer), and TCP_NODELAY: without it a small echo can wait for a
    /// delayed ACK.
    pub(super) fn tune(&self) -> io::Result<()> {
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
    pub(super) watch: Option<RawFd>,
    /// The agent's UDP end: the client's hello, which may come again (the
    /// client sends it until answered) and is answered again, not taken
    /// for a message.
    pub(super) hello: Option<[u8; HELLO_LEN]>,
}

impl DataEnd {
    pub(super) fn new(sock: Sock, stop: Option<OwnedFd>, deadline: Instant) -> DataEnd {
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
