//! `unix-stream`: a connected pair of Unix stream sockets.

use super::common::StreamEnd;
use crate::engine::channel::*;
use std::os::unix::net::UnixStream;

/// socketpair(AF_UNIX, SOCK_STREAM).
pub struct UnixStreamPair;

impl Mechanism for UnixStreamPair {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "unix-stream",
            summary: "Unix-domain stream socket pair (socketpair, SOCK_STREAM)",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open(&self, _ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (a, b) = UnixStream::pair().map_err(ChannelError::io("socketpair"))?;
        let a2 = a.try_clone().map_err(ChannelError::io("dup"))?;
        let b2 = b.try_clone().map_err(ChannelError::io("dup"))?;
        Ok(Channel {
            client: Box::new(StreamEnd::new(a, a2)),
            server: Some(Box::new(StreamEnd::new(b, b2))),
            note: None,
        })
    }
}
