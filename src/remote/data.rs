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
//!
//! Its parts, beside this file in `data/`: the figure's key and the hello
//! that carries it (`key.rs`), the agent's accept path — its data socket,
//! the TCP connections held until their hello, the UDP hello
//! (`listener.rs`) — and the ends the figure's messages go through, with
//! their waits (`end.rs`). Here: the two entry points, the agent's
//! [`serve`] and the client's [`connect`] (with its UDP hello).

use crate::engine::channel::ChannelError;
use crate::engine::models::pingpong;
use crate::engine::models::region::Region;
use crate::engine::os::interrupt;
use crate::remote::roles;
use crate::remote::task::{Proto, Report, Role, Task};
use crate::sys::fd::wait_readable;
use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::os::fd::{OwnedFd, RawFd};
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

pub(super) mod end;
mod key;
mod listener;

use end::Sock;
pub use end::{DataEnd, QUIET, TICK};
pub use key::{DataKey, HELLO_LEN, KEY_BYTES};
use listener::accept;
pub use listener::{DataListener, listen};

/// How long the agent waits for the client's data connection.
const CONNECT_WAIT: Duration = Duration::from_secs(5);

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
            udp_hello(&s, agent, key, watch)?;
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
/// send (and a lost hello costs a tick, not the figure). An agent that
/// went away (`watch`, its control connection, turns readable) ends it at
/// the next tick, not at the end of the wait: nothing will answer.
fn udp_hello(
    s: &UdpSocket,
    agent: SocketAddr,
    key: &DataKey,
    watch: Option<RawFd>,
) -> Result<(), String> {
    s.set_read_timeout(Some(TICK))
        .map_err(|e| format!("data socket options: {e}"))?;
    let until = Instant::now() + CONNECT_WAIT;
    let mut buf = [0u8; 1];
    while Instant::now() < until {
        interrupt::check().map_err(|e| e.to_string())?;
        if let Some(fd) = watch
            && wait_readable(&fd, Duration::ZERO).unwrap_or(false)
        {
            return Err("the agent closed its control connection: it is gone".into());
        }
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
