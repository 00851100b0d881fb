//! `signal-handler`: the QNX study's echo from the signal-handler level. The
//! server's SIGUSR1 handler itself sends SIGUSR2 back, so the reply does not
//! wait for the server's loop to resume after `sigsuspend`.

use super::sig_common::{self as common, ServerCore, SignalClient};
use crate::engine::channel::*;
use crate::sys::signal::tgkill_from_handler;
use std::sync::atomic::{AtomicI32, Ordering};

/// Where the server's handler sends its reply (set in the server's `attach`;
/// a handler can only reach statics).
static REPLY_PID: AtomicI32 = AtomicI32::new(0);
static REPLY_TID: AtomicI32 = AtomicI32::new(0);

/// Replies with SIGUSR2 to the client, then counts the SIGUSR1.
extern "C" fn echo_to_client(signo: libc::c_int) {
    let tid = REPLY_TID.load(Ordering::SeqCst);
    if tid != 0 {
        tgkill_from_handler(REPLY_PID.load(Ordering::SeqCst), tid, common::TO_CLIENT);
    }
    common::count_to_server(signo);
}

/// tgkill + sigsuspend, with the server's reply sent by its signal handler.
pub struct SignalHandler;

impl Mechanism for SignalHandler {
    /// Signals are delivered to the process: another channel's signals
    /// would reach this one's handler.
    fn process_wide(&self) -> bool {
        true
    }

    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "signal-handler",
            summary: "SIGUSR1 there, SIGUSR2 sent back by the server's signal handler (tgkill)",
            payload: Payload::Fixed(0),
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::No(
            "standard signals do not queue: back-to-back sends merge into one delivery",
        )
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        common::expect_no_payload(ctx.size)?;
        common::install_handlers(echo_to_client)?;
        Ok(Channel {
            client: Box::new(SignalClient::default()),
            server: Some(Box::new(HandlerServer(ServerCore::default()))),
            note: None,
        })
    }
}

/// Waits until its handler has run (and so replied) once more.
struct HandlerServer(ServerCore);

impl Endpoint for HandlerServer {
    fn attach(&mut self, peer: PeerIdentity) -> Result<(), ChannelError> {
        // Stored before SIGUSR1 can arrive: the client sends nothing until
        // this end reports ready, after attach.
        REPLY_PID.store(peer.pid, Ordering::SeqCst);
        REPLY_TID.store(peer.tid, Ordering::SeqCst);
        self.0.attach(peer)
    }

    #[inline]
    fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
        // The handler has already replied.
        Ok(())
    }

    #[inline]
    fn recv(&mut self, _buf: &mut [u8]) -> Result<(), ChannelError> {
        self.0.wait()
    }
}

impl Drop for HandlerServer {
    fn drop(&mut self) {
        if self.0.client.is_some() {
            // A stray SIGUSR1 must not reach a thread id that may be reused.
            REPLY_TID.store(0, Ordering::SeqCst);
        }
    }
}
