//! `shm-posix-sem`: shared memory + memcpy, hand-offs signalled by two named
//! POSIX semaphores.

use super::shm_common::{self, Handoff};
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
        let to_server = anonymous_named_semaphore(ctx)?;
        let to_client = anonymous_named_semaphore(ctx)?;
        let client = SemHandoff {
            post: Arc::clone(&to_server),
            wait: Arc::clone(&to_client),
        };
        let server = SemHandoff {
            post: to_client,
            wait: to_server,
        };
        Ok(shm_common::channel(ctx, map, client, server, Vec::new()))
    }
}
