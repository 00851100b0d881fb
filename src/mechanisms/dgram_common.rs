//! An endpoint for message-preserving sockets (Unix datagram and seqpacket, UDP):
//! one send and one receive per message, no framing.

use crate::engine::channel::{ChannelError, Endpoint, expect_len, retry};
use crate::sys::socket;
use std::os::fd::{AsFd, OwnedFd};

/// One end of a connected datagram-style socket: each message is one datagram.
pub struct DatagramEnd {
    sock: OwnedFd,
}

impl DatagramEnd {
    /// An end sending and receiving on the connected socket `sock`.
    pub fn new(sock: OwnedFd) -> Self {
        DatagramEnd { sock }
    }
}

/// A connected datagram socket whose peer has gone reports `ECONNREFUSED`
/// (Unix: the peer socket is dead; UDP: the loopback port is closed).
#[cold]
fn peer_gone(e: ChannelError) -> ChannelError {
    match &e {
        ChannelError::Io { source, .. } if source.raw_os_error() == Some(libc::ECONNREFUSED) => {
            ChannelError::Closed
        }
        _ => e,
    }
}

impl Endpoint for DatagramEnd {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let n = retry("send", || socket::send(self.sock.as_fd(), msg, 0)).map_err(peer_gone)?;
        expect_len(msg.len(), n)
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let n = retry("recv", || socket::recv(self.sock.as_fd(), buf, 0)).map_err(peer_gone)?;
        // recv reports the datagram's real length, so a longer one is caught too.
        expect_len(buf.len(), n)
    }
}
