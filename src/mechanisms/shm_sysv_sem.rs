//! `shm-sysv-sem`: shared memory + memcpy, hand-offs signalled by a System V
//! semaphore set of two.

use super::shm_common::{self, Handoff};
use super::shm_ring;
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

/// A fresh set of two semaphores (a taken key is skipped), its removal, and
/// the client's and the server's halves.
fn semaphore_set(ctx: &OpenContext) -> Result<(SysvHandoff, SysvHandoff, Cleanup), ChannelError> {
    let (id, cleanup) = ctx
        .names
        .create_sysv("sem", |key| sysv::sem_create(key, 2))
        .map_err(ChannelError::io("semget"))?;
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
        let (sender, receiver) = shm_ring::latched(&map, sender, receiver);
        Ok(shm_ring::channel(ctx, map, sender, receiver, vec![cleanup]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::os::objects::{ObjectNamer, sysv_test_lock};
    use crate::mechanisms::shm_ring::Doorbell;

    fn values(id: i32) -> [u16; 2] {
        let mut v = [0u16; 2];
        sysv::sem_get_all(id, &mut v).unwrap();
        v
    }

    /// The stream's bell is rung far more often than SEMVMX (32767) while
    /// nobody sleeps, the pattern that made `semop +1` fail with ERANGE: the
    /// latch keeps each semaphore at 0 or 1.
    #[test]
    fn a_stream_bell_rung_past_semvmx_stays_binary() {
        let _keys = sysv_test_lock();
        let names = ObjectNamer::new();
        let ctx = OpenContext {
            timeout: std::time::Duration::from_secs(5),
            size: 8,
            names: &names,
        };
        let map = shm_ring::mapping(8).unwrap();
        let (sender, receiver, _cleanup) = semaphore_set(&ctx).unwrap();
        let id = sender.id;
        let (mut sender, mut receiver) = shm_ring::latched(&map, sender, receiver);
        for i in 0..40_000 {
            sender.ring().unwrap_or_else(|e| panic!("ring {i}: {e}"));
            receiver.ring().unwrap_or_else(|e| panic!("ring {i}: {e}"));
        }
        assert_eq!(values(id), [1, 1]);
        // Each side takes its one post and lowers its latch: the next ring posts again.
        receiver.sleep(0).unwrap();
        sender.sleep(0).unwrap();
        assert_eq!(values(id), [0, 0]);
        sender.ring().unwrap();
        assert_eq!(values(id)[TO_SERVER as usize], 1);
    }

    /// Ping-pong posts once per message and the other side waits once per
    /// message before the next is sent: the value never passes 1, and none is
    /// left over after many round trips.
    #[test]
    fn pingpong_hand_offs_leave_the_semaphores_at_zero() {
        let _keys = sysv_test_lock();
        let names = ObjectNamer::new();
        let ctx = OpenContext {
            timeout: std::time::Duration::from_secs(5),
            size: 8,
            names: &names,
        };
        let (mut client, mut server, _cleanup) = semaphore_set(&ctx).unwrap();
        for _ in 0..40_000 {
            client.notify().unwrap();
            server.wait().unwrap();
            server.notify().unwrap();
            client.wait().unwrap();
        }
        assert_eq!(values(client.id), [0, 0]);
    }
}
