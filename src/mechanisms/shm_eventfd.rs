//! `shm-eventfd`: shared memory + memcpy, hand-offs signalled by an eventfd
//! per direction.

use super::shm_common::{self, Handoff};
use super::shm_ring::{self, Doorbell};
use crate::engine::channel::*;
use crate::sys::sync::eventfd;
use std::fs::File;
use std::io::{Read, Write};
use std::sync::Arc;

/// Shared memory with one eventfd per direction.
pub struct ShmEventfd;

/// Adds 1 to one eventfd, reads (and so resets) the other.
struct EventfdHandoff {
    post: Arc<File>,
    wait: Arc<File>,
}

impl Handoff for EventfdHandoff {
    #[inline]
    fn notify(&mut self) -> Result<(), ChannelError> {
        let n = retry("eventfd write", || (&*self.post).write(&1u64.to_ne_bytes()))?;
        expect_len(8, n)
    }

    #[inline]
    fn wait(&mut self) -> Result<(), ChannelError> {
        let mut count = [0u8; 8];
        let n = retry("eventfd read", || (&*self.wait).read(&mut count))?;
        expect_len(8, n)?;
        // Strict alternation: exactly one message is pending.
        match u64::from_ne_bytes(count) {
            1 => Ok(()),
            got => Err(ChannelError::Sequence { expected: 1, got }),
        }
    }
}

/// In a stream ring rings may coalesce: a read takes whatever count built up.
impl Doorbell for EventfdHandoff {
    #[inline]
    fn ring(&mut self) -> Result<(), ChannelError> {
        self.notify()
    }

    #[inline]
    fn sleep(&mut self, _armed: u32) -> Result<(), ChannelError> {
        let mut count = [0u8; 8];
        let n = retry("eventfd read", || (&*self.wait).read(&mut count))?;
        expect_len(8, n)
    }
}

/// The client's and the server's halves over two fresh eventfds.
fn eventfd_pair() -> Result<(EventfdHandoff, EventfdHandoff), ChannelError> {
    let to_server = Arc::new(eventfd().map_err(ChannelError::io("eventfd"))?);
    let to_client = Arc::new(eventfd().map_err(ChannelError::io("eventfd"))?);
    Ok((
        EventfdHandoff {
            post: Arc::clone(&to_server),
            wait: Arc::clone(&to_client),
        },
        EventfdHandoff {
            post: to_client,
            wait: to_server,
        },
    ))
}

impl Mechanism for ShmEventfd {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "shm-eventfd",
            summary: "shared memory + memcpy, signalled by an eventfd per direction",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_common::mapping(ctx.size)?;
        let (client, server) = eventfd_pair()?;
        Ok(shm_common::channel(ctx, map, client, server, Vec::new()))
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open_stream(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_ring::mapping(ctx.size)?;
        let (sender, receiver) = eventfd_pair()?;
        Ok(shm_ring::channel(ctx, map, sender, receiver, Vec::new()))
    }
}
