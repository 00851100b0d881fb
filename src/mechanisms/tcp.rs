//! `tcp`: a TCP connection over the loopback interface.

use super::common::StreamEnd;
use crate::engine::channel::*;
use std::net::{Ipv4Addr, TcpListener, TcpStream};

/// TCP over 127.0.0.1, Nagle's algorithm off on both ends.
pub struct Tcp;

impl Mechanism for Tcp {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "tcp",
            summary: "TCP connection over loopback 127.0.0.1, TCP_NODELAY on both ends",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open(&self, _ctx: &OpenContext) -> Result<Channel, ChannelError> {
        // The listener only lives for the handshake; the connection outlives it.
        let listener =
            TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(ChannelError::io("bind"))?;
        let addr = listener
            .local_addr()
            .map_err(ChannelError::io("getsockname"))?;
        // The kernel completes the handshake from the backlog, so connecting
        // before accepting cannot block.
        let client = TcpStream::connect(addr).map_err(ChannelError::io("connect"))?;
        let (server, _) = listener.accept().map_err(ChannelError::io("accept"))?;
        // Without TCP_NODELAY a small echo can wait for a delayed ACK.
        for s in [&client, &server] {
            s.set_nodelay(true)
                .map_err(ChannelError::io("setsockopt TCP_NODELAY"))?;
        }
        let client2 = client.try_clone().map_err(ChannelError::io("dup"))?;
        let server2 = server.try_clone().map_err(ChannelError::io("dup"))?;
        Ok(Channel {
            client: Box::new(StreamEnd::new(client, client2)),
            server: Some(Box::new(StreamEnd::new(server, server2))),
            note: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::test_util::echo_sizes;

    #[test]
    fn echoes() {
        echo_sizes(&Tcp, &[1, 64, 4096]);
    }
}
