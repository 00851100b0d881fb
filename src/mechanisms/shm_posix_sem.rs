//! `shm-posix-sem`: shared memory + memcpy, hand-offs signalled by two named
//! POSIX semaphores.

use super::shm_common::{self, Handoff};
use super::shm_ring;
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
    let (name, sem) = ctx
        .names
        .create_named("sem", |name| NamedSemaphore::create(&format!("/{name}")))
        .map_err(ChannelError::io("sem_open"))?;
    let name = format!("/{name}");
    sem_unlink(&name).map_err(ChannelError::io("sem_unlink"))?;
    Ok(Arc::new(sem))
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
        let (sender, receiver) = shm_ring::latched(&map, sender, receiver);
        Ok(shm_ring::channel(ctx, map, sender, receiver, Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::os::objects::ObjectNamer;
    use crate::mechanisms::shm_ring::Doorbell;

    fn values(a: &SemHandoff, b: &SemHandoff) -> [i32; 2] {
        [a.wait.value().unwrap(), b.wait.value().unwrap()]
    }

    /// The stream's bell rung far more often than the 32767 that broke the
    /// System V twin, with nobody sleeping: the latch keeps each semaphore at
    /// 0 or 1 (unlatched, the count would only stop at SEM_VALUE_MAX).
    #[test]
    fn a_stream_bell_rung_many_times_stays_binary() {
        let names = ObjectNamer::new();
        let ctx = OpenContext {
            timeout: std::time::Duration::from_secs(5),
            size: 8,
            names: &names,
        };
        let map = shm_ring::mapping(8).unwrap();
        let (sender, receiver) = semaphore_pair(&ctx).unwrap();
        let (to_sender, to_receiver) = (Arc::clone(&sender.wait), Arc::clone(&receiver.wait));
        let (mut sender, mut receiver) = shm_ring::latched(&map, sender, receiver);
        for i in 0..40_000 {
            sender.ring().unwrap_or_else(|e| panic!("ring {i}: {e}"));
            receiver.ring().unwrap_or_else(|e| panic!("ring {i}: {e}"));
        }
        let value = |s: &NamedSemaphore| s.value().unwrap();
        assert_eq!([value(&to_sender), value(&to_receiver)], [1, 1]);
        receiver.sleep(0).unwrap();
        sender.sleep(0).unwrap();
        assert_eq!([value(&to_sender), value(&to_receiver)], [0, 0]);
        sender.ring().unwrap();
        assert_eq!(value(&to_receiver), 1);
    }

    /// Ping-pong alternates: one post, one wait, so nothing accumulates.
    #[test]
    fn pingpong_hand_offs_leave_the_semaphores_at_zero() {
        let names = ObjectNamer::new();
        let ctx = OpenContext {
            timeout: std::time::Duration::from_secs(5),
            size: 8,
            names: &names,
        };
        let (mut client, mut server) = semaphore_pair(&ctx).unwrap();
        for _ in 0..40_000 {
            client.notify().unwrap();
            server.wait().unwrap();
            server.notify().unwrap();
            client.wait().unwrap();
        }
        assert_eq!(values(&client, &server), [0, 0]);
    }
}
