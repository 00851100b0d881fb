//! `shm-posix-sem`: shared memory + memcpy, hand-offs signalled by two named
//! POSIX semaphores.

use super::shm_common::{self, Handoff};
use super::shm_ring::{self, Doorbell};
use crate::engine::channel::*;
use crate::sys::posix_ipc::{NamedSemaphore, sem_unlink};
use std::sync::Arc;

/// Shared memory with one named POSIX semaphore per direction.
pub struct ShmPosixSem;

/// Posts one semaphore, waits on the other.
struct SemHandoff {
    post: Arc<NamedSemaphore>,
    wait: Arc<NamedSemaphore>,
}

impl Handoff for SemHandoff {
    #[inline]
    fn notify(&mut self) -> Result<(), ChannelError> {
        self.post.post().map_err(ChannelError::io("sem_post"))
    }

    #[inline]
    fn wait(&mut self) -> Result<(), ChannelError> {
        retry("sem_wait", || self.wait.wait())
    }
}

/// Creates a semaphore and removes its name at once: both ends already hold
/// it (the fork inherits the mapping), so nothing is left in /dev/shm even if
/// the run is killed.
fn anonymous_named_semaphore(ctx: &OpenContext) -> Result<Arc<NamedSemaphore>, ChannelError> {
    let name = format!("/{}", ctx.names.name("sem"));
    let sem = NamedSemaphore::create(&name).map_err(ChannelError::io("sem_open"))?;
    sem_unlink(&name).map_err(ChannelError::io("sem_unlink"))?;
    Ok(Arc::new(sem))
}

/// In a stream ring: one semaphore wakes the receiver, the other the sender.
impl Doorbell for SemHandoff {
    #[inline]
    fn ring(&mut self) -> Result<(), ChannelError> {
        self.notify()
    }

    #[inline]
    fn sleep(&mut self, _armed: u32) -> Result<(), ChannelError> {
        self.wait()
    }
}

/// The sender's and the receiver's halves over two fresh semaphores.
fn semaphore_pair(ctx: &OpenContext) -> Result<(SemHandoff, SemHandoff), ChannelError> {
    let to_server = anonymous_named_semaphore(ctx)?;
    let to_client = anonymous_named_semaphore(ctx)?;
    Ok((
        SemHandoff {
            post: Arc::clone(&to_server),
            wait: Arc::clone(&to_client),
        },
        SemHandoff {
            post: to_client,
            wait: to_server,
        },
    ))
}

impl Mechanism for ShmPosixSem {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "shm-posix-sem",
            summary: "shared memory + memcpy, signalled by two named POSIX semaphores",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_common::mapping(ctx.size)?;
        let (client, server) = semaphore_pair(ctx)?;
        Ok(shm_common::channel(ctx, map, client, server, Vec::new()))
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open_stream(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_ring::mapping(ctx.size)?;
        let (sender, receiver) = semaphore_pair(ctx)?;
        Ok(shm_ring::channel(ctx, map, sender, receiver, Vec::new()))
    }
}
