//! `signal-sigqueue`: a real-time signal carrying the 8-byte message as its
//! value (sigqueue), taken with sigwaitinfo — the closest Linux kin of QNX
//! proxies.
//!
//! sigqueue is process-directed. With `--peer thread` both ends are one
//! process, so each direction has its own signal (SIGRTMIN+1 towards the
//! server, SIGRTMIN+2 towards the client) and each end waits only for its own;
//! both ends block both signals so that no thread takes one by handler.

use crate::engine::channel::*;
use crate::sys::signal::{self as sig, RtSignal, SigSet};
use crate::sys::sync::{sig_queue, sig_wait_info};

/// Bytes of the value a queued signal carries.
const WORD: usize = 8;

fn to_server() -> i32 {
    RtSignal::SigqueueToServer.number()
}

fn to_client() -> i32 {
    RtSignal::SigqueueToClient.number()
}

/// A signal that reaches a thread not blocking it is consumed here instead of
/// killing the process (the default action of a real-time signal); the wait
/// that missed it then ends by the watchdog.
extern "C" fn ignore_stray(_: libc::c_int) {}

/// sigqueue + sigwaitinfo in both directions.
pub struct SignalSigqueue;

impl Mechanism for SignalSigqueue {
    /// Signals are delivered to the process: another channel's signals
    /// would reach this one's handler.
    fn process_wide(&self) -> bool {
        true
    }

    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "signal-sigqueue",
            summary: "real-time signal carrying the 8-byte value (sigqueue), taken with sigwaitinfo",
            payload: Payload::Fixed(WORD),
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::No(
            "a signal carries one 8-byte value, not a message of the requested size, from a per-user pending-signal quota",
        )
    }

    fn open(&self, _ctx: &OpenContext) -> Result<Channel, ChannelError> {
        for s in [to_server(), to_client()] {
            sig::install_handler(s, ignore_stray, 0).map_err(ChannelError::io("sigaction"))?;
        }
        Ok(Channel {
            client: Box::new(QueueEnd::new(to_server(), to_client(), Role::Client)),
            server: Some(Box::new(QueueEnd::new(
                to_client(),
                to_server(),
                Role::Server,
            ))),
            note: None,
        })
    }
}

/// Which end a [`QueueEnd`] is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The measuring end.
    Client,
    /// The echo end.
    Server,
}

/// One end: queues its messages with `out`, waits for `inbound`.
struct QueueEnd {
    out: i32,
    inbound: i32,
    wait_set: SigSet,
    peer: Option<PeerIdentity>,
    role: Role,
    /// Mask to restore on drop, once attached.
    previous: Option<SigSet>,
}

impl QueueEnd {
    fn new(out: i32, inbound: i32, role: Role) -> Self {
        QueueEnd {
            out,
            inbound,
            wait_set: SigSet::of(&[inbound]),
            peer: None,
            role,
            previous: None,
        }
    }
}

impl Endpoint for QueueEnd {
    fn attach(&mut self, peer: PeerIdentity) -> Result<(), ChannelError> {
        let both = SigSet::of(&[self.out, self.inbound]);
        self.previous = Some(
            sig::thread_mask(libc::SIG_BLOCK, &both).map_err(ChannelError::io("sigprocmask"))?,
        );
        // Signals queued for an earlier channel must not be taken as replies.
        while sig::take_pending(&both)
            .map_err(ChannelError::io("sigtimedwait"))?
            .is_some()
        {}
        self.peer = Some(peer);
        Ok(())
    }

    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let peer = self
            .peer
            .as_ref()
            .ok_or_else(|| ChannelError::Setup("endpoint used before attach".into()))?;
        let mut word = [0u8; WORD];
        word.copy_from_slice(msg);
        let value = u64::from_ne_bytes(word);
        sig_queue(peer.pid, self.out, value).map_err(|e| match e.raw_os_error() {
            Some(libc::ESRCH) => ChannelError::PeerDied,
            _ => ChannelError::Io {
                op: "sigqueue",
                source: e,
            },
        })?;
        Ok(())
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let (signo, value) = retry("sigwaitinfo", || sig_wait_info(&self.wait_set))?;
        if signo != self.inbound {
            return Err(ChannelError::Setup(format!(
                "sigwaitinfo returned signal {signo}, expected {}",
                self.inbound
            )));
        }
        buf.copy_from_slice(&value.to_ne_bytes());
        Ok(())
    }
}

impl Drop for QueueEnd {
    fn drop(&mut self) {
        // Only the client's thread lives on. A server's keeps its mask: it
        // would otherwise take, by handler, a reply still queued (process-wide)
        // for a client thread of the same process.
        if let (Role::Client, Some(previous)) = (self.role, &self.previous) {
            // Whatever is still queued is handled by `ignore_stray`.
            let _ = sig::thread_mask(libc::SIG_SETMASK, previous);
        }
    }
}
