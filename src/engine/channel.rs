//! The contract between the engine and a mechanism.
//!
//! A mechanism knows how to build a two-ended channel; the engine knows how to
//! put the ends in two processes (or threads), time round trips through it and
//! tear it down. Neither knows the other's details.

use crate::engine::os::objects::ObjectNamer;
use std::io;

pub use crate::engine::error::ChannelError;

/// What a mechanism's messages can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// Any size from 1 byte up to the mechanism's [`SizeLimit`]; swept by `--sizes`.
    Bytes,
    /// Exactly this many bytes (0 = pure notification). Measured once per run,
    /// whatever `--sizes` says.
    Fixed(usize),
}

/// Who is at the other end of the channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// A second process (or thread) echoes every message.
    Peer,
    /// One process sends to itself and reads it back: no peer, no switch.
    SelfLoop,
}

/// Whether and how a mechanism can carry a stream of messages in one
/// direction (`--mode stream`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamSupport {
    /// It cannot, and why (shown as the figure's skip reason).
    No(&'static str),
    /// `send` may be called back to back: the channel queues messages and
    /// blocks the sender when full; nothing is lost, so a gap is a failure.
    Queued,
    /// Like [`StreamSupport::Queued`], but a full receiver drops messages
    /// (datagrams): the receiver counts losses instead of failing on gaps.
    Lossy,
}

/// Static facts about a mechanism, shown by `ipcmark list` and recorded with results.
#[derive(Debug, Clone, Copy)]
pub struct MechanismInfo {
    /// Stable id used on the command line and in JSON.
    pub id: &'static str,
    /// One line: what is measured.
    pub summary: &'static str,
    /// What a message carries.
    pub payload: Payload,
    /// Peer or self-loop.
    pub topology: Topology,
    /// Hand-off by busy-waiting: needs two CPUs and cannot share one.
    pub spins: bool,
}

/// The largest message a mechanism can carry on this system, and why.
#[derive(Debug, Clone)]
pub struct SizeLimit {
    /// Largest payload in bytes.
    pub max_bytes: usize,
    /// Where the limit comes from, e.g. "fs.mqueue.msgsize_max = 8192".
    pub reason: String,
}

/// Everything a mechanism needs to build one channel.
pub struct OpenContext<'a> {
    /// Payload size of every message on this channel; for a
    /// [`Payload::Fixed`] mechanism always its fixed size (the engine runs it
    /// at no other).
    pub size: usize,
    /// Names and keys for OS objects, so that `ipcmark clean` can find them.
    pub names: &'a ObjectNamer,
    /// How long opening may wait on something outside the engine's peers
    /// (a bus daemon's answer) before it fails: the run's `--timeout`.
    pub timeout: std::time::Duration,
}

/// Identity of the other end, given to each end once both exist.
#[derive(Debug, Clone, Copy)]
pub struct PeerIdentity {
    /// Process id.
    pub pid: libc::pid_t,
    /// Kernel thread id of the thread running the other end.
    pub tid: libc::pid_t,
}

/// A channel as built by a mechanism.
pub struct Channel {
    /// The end the engine times (sends first, then waits for the echo).
    pub client: Box<dyn Endpoint>,
    /// The echo end; `None` for [`Topology::SelfLoop`].
    pub server: Option<Box<dyn Endpoint>>,
    /// A fact about this channel worth recording with the result
    /// (e.g. the file system the FIFOs live on).
    pub note: Option<String>,
}

/// A task other than the two ends that carries every message between them
/// (a message broker), as the client's end knows it: an anatomy traces it,
/// so that its time is a part of the round trip, not a gap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relay {
    /// What it is, for the anatomy's note ("a private dbus-daemon").
    pub what: String,
    /// Its process id; `None` where it cannot be known (`what` says why).
    pub pid: Option<libc::pid_t>,
}

/// One end of a channel.
///
/// `send` and `recv` each move one whole message. Blocking calls inside them
/// must go through [`retry`] (or call [`crate::engine::os::interrupt::check`] on `EINTR`),
/// so that a stop request, the watchdog or a dead peer ends the wait.
pub trait Endpoint: Send {
    /// Called once in the end's own process/thread after the peer exists.
    fn attach(&mut self, _peer: PeerIdentity) -> Result<(), ChannelError> {
        Ok(())
    }
    /// Sends `msg` (its length is the channel's size).
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError>;
    /// Receives one message into `buf` (its length is the channel's size).
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError>;
    /// Whether this end lends what it receives where it lies
    /// ([`Endpoint::lend`]) instead of copying it into the caller's buffer:
    /// a loaned ring's slot, a passed file's mapping. Where it does, the
    /// engine receives by lending, so that no figure contains a copy the
    /// mechanism does not make.
    fn lends(&self) -> bool {
        false
    }
    /// Receives one message and lends it where it lies (its length is the
    /// channel's size): the caller reads it in place, may change it (the
    /// echo complements its number) and then either sends it back as it is
    /// now ([`Endpoint::send_lent`]) or gives it back
    /// ([`Endpoint::release`]) before anything else on this end. Only where
    /// [`Endpoint::lends`].
    fn lend(&mut self) -> Result<&mut [u8], ChannelError> {
        Err(not_lending())
    }
    /// Sends the message [`Endpoint::lend`] lent back to the other end in
    /// place, as a design that hands a buffer back would (the loan returned,
    /// the file sent back): no copy.
    fn send_lent(&mut self) -> Result<(), ChannelError> {
        Err(not_lending())
    }
    /// Gives back the message [`Endpoint::lend`] lent, read.
    fn release(&mut self) -> Result<(), ChannelError> {
        Err(not_lending())
    }
    /// The task that carries every message between this end and the other,
    /// if one does (a broker; asked of the client's end, where
    /// [`Mechanism::relayed`] says so); `None` where the ends talk directly.
    fn relay(&self) -> Option<Relay> {
        None
    }
}

/// A mechanism: one way for two processes to exchange messages.
pub trait Mechanism: Sync {
    /// Static description.
    fn info(&self) -> MechanismInfo;
    /// The largest payload on this system; `None` if only the engine's cap applies.
    fn size_limit(&self) -> Option<SizeLimit> {
        None
    }
    /// What it needs beyond any Linux ipcmark runs on (a kernel version with
    /// the feature that brought it, a package), as `ipcmark list` and the
    /// docs name it; `None` if nothing.
    fn requires(&self) -> Option<&'static str> {
        None
    }
    /// Why it cannot run on this system, if it cannot (probed: a system call
    /// this kernel lacks, a feature switched off). Every figure of it is then
    /// skipped with this reason.
    fn unavailable(&self) -> Option<String> {
        None
    }
    /// Builds a channel for messages of `ctx.size` bytes. Any OS object it
    /// creates must be released when the returned endpoints are dropped in the
    /// creating process (see [`crate::engine::os::objects::Cleanup`]).
    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError>;
    /// Whether it can stream (`--mode stream`); most mechanisms cannot.
    fn stream(&self) -> StreamSupport {
        StreamSupport::No("one message at a time: no queue of messages")
    }
    /// Builds a channel for streaming from the client end to the server end
    /// (called only when [`Mechanism::stream`] allows it). The default is the
    /// ordinary channel; a mechanism whose ping-pong layout holds one message
    /// per direction (shared memory) builds a queue instead.
    fn open_stream(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        self.open(ctx)
    }
    /// Whether its channel relies on state of the whole process (a signal's
    /// disposition and what its handler records), so that no other channel
    /// may be open beside it in the measuring process (no interleaving).
    fn process_wide(&self) -> bool {
        false
    }
    /// Whether a third task carries every message between the two ends (a
    /// message broker, which its client end names: [`Endpoint::relay`]),
    /// known before a channel is open: a traced pass then traces every CPU
    /// that task may run on, not only the two ends'.
    fn relayed(&self) -> bool {
        false
    }
}

#[cold]
fn not_lending() -> ChannelError {
    ChannelError::Setup("this end copies what it receives: it lends nothing".into())
}

/// What an end that lends asked to give back or send back: nothing lent
/// is a broken call sequence, reported, never a panic.
#[cold]
pub fn nothing_lent() -> ChannelError {
    ChannelError::Setup("nothing is lent: lend a message before sending or releasing it".into())
}

/// Runs `f` until it succeeds, retrying after `EINTR` unless the engine says
/// to stop. Other errors are wrapped with `op`.
#[inline]
pub fn retry<T>(op: &'static str, mut f: impl FnMut() -> io::Result<T>) -> Result<T, ChannelError> {
    // A stop, time-out or dead peer signalled while no call was blocked left no
    // EINTR behind; look before blocking (a few relaxed loads).
    crate::engine::os::interrupt::check()?;
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                crate::engine::os::interrupt::check()?
            }
            Err(e) => return Err(map_peer_gone(op, e)),
        }
    }
}

/// Errors that mean "the other end is gone" become [`ChannelError::Closed`].
fn map_peer_gone(op: &'static str, e: io::Error) -> ChannelError {
    match e.raw_os_error() {
        Some(libc::EPIPE) | Some(libc::ECONNRESET) | Some(libc::EIDRM) => ChannelError::Closed,
        _ => ChannelError::Io { op, source: e },
    }
}

/// Reads exactly `buf.len()` bytes from a stream, however the kernel splits them.
#[inline]
pub fn read_full(r: &mut impl io::Read, buf: &mut [u8]) -> Result<(), ChannelError> {
    let mut done = 0;
    while done < buf.len() {
        let n = retry("read", || r.read(&mut buf[done..]))?;
        if n == 0 {
            return Err(ChannelError::Closed);
        }
        done += n;
    }
    Ok(())
}

/// Writes all of `buf` to a stream.
#[inline]
pub fn write_full(w: &mut impl io::Write, buf: &[u8]) -> Result<(), ChannelError> {
    let mut done = 0;
    while done < buf.len() {
        let n = retry("write", || w.write(&buf[done..]))?;
        if n == 0 {
            return Err(ChannelError::Closed);
        }
        done += n;
    }
    Ok(())
}

/// Checks that a datagram-style receive returned a whole message.
#[inline]
pub fn expect_len(expected: usize, got: usize) -> Result<(), ChannelError> {
    if got == expected {
        Ok(())
    } else if got == 0 && expected != 0 {
        Err(ChannelError::Closed)
    } else {
        Err(ChannelError::Length { expected, got })
    }
}
