//! `shm-eventfd`: shared memory + memcpy, hand-offs signalled by an eventfd
//! per direction.

use super::shm_common::{self, Handoff};
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
        let to_server = Arc::new(eventfd().map_err(ChannelError::io("eventfd"))?);
        let to_client = Arc::new(eventfd().map_err(ChannelError::io("eventfd"))?);
        let client = EventfdHandoff {
            post: Arc::clone(&to_server),
            wait: Arc::clone(&to_client),
        };
        let server = EventfdHandoff {
            post: to_client,
            wait: to_server,
        };
        Ok(shm_common::channel(ctx, map, client, server, Vec::new()))
    }
}
