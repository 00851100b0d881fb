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

/// How many keys to try when one is taken: the namer cycles through 4 slots,
/// so a stale set of a dead run with a reused pid cannot block them all.
const KEY_TRIES: usize = 4;

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
    let mut tries = 0;
    let id = loop {
        match sysv::sem_create(ctx.names.sysv_key(), 2) {
            Ok(id) => break id,
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) && tries + 1 < KEY_TRIES => {
                tries += 1;
            }
            Err(e) => return Err(ChannelError::io("semget")(e)),
        }
    };
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
