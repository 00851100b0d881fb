//! `signal-sigsuspend`: the QNX study's `kill` + `sigsuspend` ping-pong.
//! SIGUSR1 to the server's thread, SIGUSR2 back to the client's; each side
//! sleeps in `sigsuspend` until its counting handler has run.

use super::sig_common::{self as common, ServerCore, SignalClient};
use crate::engine::channel::*;

/// tgkill + sigsuspend in both directions; the server replies from its loop.
pub struct SignalSigsuspend;

impl Mechanism for SignalSigsuspend {
    /// Signals are delivered to the process: another channel's signals
    /// would reach this one's handler.
    fn process_wide(&self) -> bool {
        true
    }

    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "signal-sigsuspend",
            summary: "SIGUSR1 there, SIGUSR2 back (tgkill), each side waiting in sigsuspend",
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
        common::install_handlers(common::count_to_server)?;
        Ok(Channel {
            client: Box::new(SignalClient::default()),
            server: Some(Box::new(SuspendServer(ServerCore::default()))),
            note: None,
        })
    }
}

/// Waits for SIGUSR1, then sends SIGUSR2 from the echo loop.
struct SuspendServer(ServerCore);

impl Endpoint for SuspendServer {
    fn attach(&mut self, peer: PeerIdentity) -> Result<(), ChannelError> {
        self.0.attach(peer)
    }

    #[inline]
    fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
        self.0.reply()
    }

    #[inline]
    fn recv(&mut self, _buf: &mut [u8]) -> Result<(), ChannelError> {
        self.0.wait()
    }
}
