//! `shm-sysv-sem`: shared memory + memcpy, hand-offs signalled by a System V
//! semaphore set of two.

use super::shm_common::{self, Handoff};
use super::shm_ring::{self, Doorbell};
use crate::engine::channel::*;
use crate::engine::os::objects::Cleanup;
use crate::sys::sysv;

/// Shared memory with a System V semaphore per direction (one set of 2).
pub struct ShmSysvSem;

/// Semaphore of the set counting messages for the server.
const TO_SERVER: u16 = 0;
/// Semaphore of the set counting messages for the client.
const TO_CLIENT: u16 = 1;

/// Raises one semaphore of the set, lowers the other.
struct SysvHandoff {
    id: i32,
    post: u16,
    wait: u16,
}

impl Handoff for SysvHandoff {
    #[inline]
    fn notify(&mut self) -> Result<(), ChannelError> {
        sysv::sem_op(self.id, self.post, 1).map_err(ChannelError::io("semop +1"))
    }

    #[inline]
    fn wait(&mut self) -> Result<(), ChannelError> {
        retry("semop -1", || sysv::sem_op(self.id, self.wait, -1))
    }
}

/// In a stream ring: one semaphore of the set wakes the receiver, the other the sender.
impl Doorbell for SysvHandoff {
    #[inline]
    fn ring(&mut self) -> Result<(), ChannelError> {
        self.notify()
    }

    #[inline]
    fn sleep(&mut self, _armed: u32) -> Result<(), ChannelError> {
        self.wait()
    }
}

/// A fresh set of two semaphores (a taken key is skipped), its removal, and
/// the client's and the server's halves.
fn semaphore_set(ctx: &OpenContext) -> Result<(SysvHandoff, SysvHandoff, Cleanup), ChannelError> {
    let id = ctx
        .names
        .create_sysv(|key| sysv::sem_create(key, 2))
        .map_err(ChannelError::io("semget"))?;
    let cleanup = Cleanup::new(move || {
        let _ = sysv::remove("sem", id);
    });
    let client = SysvHandoff {
        id,
        post: TO_SERVER,
        wait: TO_CLIENT,
    };
    let server = SysvHandoff {
        id,
        post: TO_CLIENT,
        wait: TO_SERVER,
    };
    Ok((client, server, cleanup))
}

impl Mechanism for ShmSysvSem {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "shm-sysv-sem",
            summary: "shared memory + memcpy, signalled by a System V semaphore set (semop)",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_common::mapping(ctx.size)?;
        let (client, server, cleanup) = semaphore_set(ctx)?;
        Ok(shm_common::channel(ctx, map, client, server, vec![cleanup]))
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open_stream(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_ring::mapping(ctx.size)?;
        let (sender, receiver, cleanup) = semaphore_set(ctx)?;
        Ok(shm_ring::channel(ctx, map, sender, receiver, vec![cleanup]))
    }
}
