//! `udp`: two UDP sockets over the loopback interface, connected to each other.

use super::dgram_common::DatagramEnd;
use crate::engine::channel::*;
use std::net::{Ipv4Addr, UdpSocket};
use std::os::fd::OwnedFd;

/// Largest UDP payload over IPv4: 65535 − 20 (IP header) − 8 (UDP header).
const MAX_PAYLOAD: usize = 65_507;

/// UDP over 127.0.0.1, one datagram per message.
pub struct Udp;

impl Mechanism for Udp {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "udp",
            summary: "UDP over loopback 127.0.0.1, one datagram per message",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn size_limit(&self) -> Option<SizeLimit> {
        Some(SizeLimit {
            max_bytes: MAX_PAYLOAD,
            reason: "an IPv4 datagram is at most 65535 B: 65535 − 20 (IP) − 8 (UDP)".into(),
        })
    }

    fn stream(&self) -> StreamSupport {
        // A full receive buffer drops datagrams: the stream counts them.
        StreamSupport::Lossy
    }

    fn open(&self, _ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let bind = || UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(ChannelError::io("bind"));
        let (a, b) = (bind()?, bind()?);
        let addr = |s: &UdpSocket| s.local_addr().map_err(ChannelError::io("getsockname"));
        // Connected sockets need no address per call and drop strangers' datagrams.
        a.connect(addr(&b)?).map_err(ChannelError::io("connect"))?;
        b.connect(addr(&a)?).map_err(ChannelError::io("connect"))?;
        // Loss on loopback only happens when the receive buffer is full; ping-pong
        // keeps at most one datagram queued, which the default buffer holds.
        Ok(Channel {
            client: Box::new(DatagramEnd::new(OwnedFd::from(a))),
            server: Some(Box::new(DatagramEnd::new(OwnedFd::from(b)))),
            note: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::test_util::echo_sizes;

    #[test]
    fn echoes_up_to_the_ipv4_limit() {
        echo_sizes(&Udp, &[1, 64, MAX_PAYLOAD]);
    }
}
