//! `pipe`: two anonymous pipes, one per direction.

use super::common::StreamEnd;
use crate::engine::channel::*;

/// Two anonymous pipes between the client and a forked echo server.
pub struct Pipe;

impl Mechanism for Pipe {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "pipe",
            summary: "two anonymous pipes, one per direction (write/read)",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open(&self, _ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (to_server_rx, to_server_tx) = std::io::pipe().map_err(ChannelError::io("pipe"))?;
        let (to_client_rx, to_client_tx) = std::io::pipe().map_err(ChannelError::io("pipe"))?;
        Ok(Channel {
            client: Box::new(StreamEnd::new(to_client_rx, to_server_tx)),
            server: Some(Box::new(StreamEnd::new(to_server_rx, to_client_tx))),
            note: None,
        })
    }
}
