//! `shm-futex`: shared memory + memcpy, hand-offs signalled by a shared futex
//! word per direction.

use super::shm_common::{self, Handoff, TO_CLIENT_WORD, TO_SERVER_WORD};
use super::shm_ring::{self, DATA_BELL, Doorbell, SPACE_BELL};
use crate::engine::channel::*;
use crate::sys::mem::SharedMapping;
use crate::sys::sync::{futex_wait, futex_wake};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Shared memory with one futex word per direction.
pub struct ShmFutex;

/// Set in a futex word by a receiver about to sleep, so that the sender makes
/// the wake-up system call only when somebody sleeps.
const WAITING: u32 = 1 << 31;
/// The rest of the word: how many messages were handed over (wrapping).
const SEQ_MASK: u32 = !WAITING;

/// A sequence counter per direction in a shared futex word (not a private
/// futex: the peer may be another process). The sender stores the next count
/// and wakes the receiver if it has marked itself asleep; the receiver sleeps
/// while the word still holds the count it last saw, and takes one hand-off
/// per wait.
pub struct FutexHandoff {
    map: Arc<SharedMapping>,
    post: usize,
    wait: usize,
    sent: u32,
    seen: u32,
}

impl FutexHandoff {
    /// A hand-off that signals the word at offset `post` of `map` and waits on
    /// the one at `wait`. Both words must start at zero.
    pub fn new(map: Arc<SharedMapping>, post: usize, wait: usize) -> Self {
        FutexHandoff {
            map,
            post,
            wait,
            sent: 0,
            seen: 0,
        }
    }

    /// The client's and the server's hand-offs over the two standard words.
    pub fn pair(map: &Arc<SharedMapping>) -> (Self, Self) {
        (
            FutexHandoff::new(Arc::clone(map), TO_SERVER_WORD, TO_CLIENT_WORD),
            FutexHandoff::new(Arc::clone(map), TO_CLIENT_WORD, TO_SERVER_WORD),
        )
    }
}

impl Handoff for FutexHandoff {
    #[inline]
    fn notify(&mut self) -> Result<(), ChannelError> {
        self.sent = self.sent.wrapping_add(1) & SEQ_MASK;
        let word = self.map.atomic_u32(self.post);
        // The swap both publishes the count and clears the receiver's mark; as
        // a read-modify-write it cannot miss a mark set just before it, and a
        // mark attempted just after it fails (the value changed).
        let old = word.swap(self.sent, Ordering::Release);
        if old & WAITING != 0 {
            futex_wake(word, 1).map_err(ChannelError::io("futex wake"))?;
        }
        Ok(())
    }

    #[inline]
    fn wait(&mut self) -> Result<(), ChannelError> {
        let word = self.map.atomic_u32(self.wait);
        let seen = self.seen;
        loop {
            let v = word.load(Ordering::Acquire);
            let seq = v & SEQ_MASK;
            if seq != seen {
                let next = seen.wrapping_add(1) & SEQ_MASK;
                check_ahead(seen, seq, SEQ_MASK)?;
                self.seen = next;
                return Ok(());
            }
            if v & WAITING == 0
                && word
                    .compare_exchange(v, v | WAITING, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            // Returns at once if the sender has stored a new count since.
            retry("futex wait", || futex_wait(word, seen | WAITING))?;
        }
    }
}

/// Checks that a counter moved exactly one hand-off past the count last seen:
/// in a ping-pong anything else is lost sync.
#[inline]
pub fn check_ahead(seen: u32, now: u32, mask: u32) -> Result<(), ChannelError> {
    match now.wrapping_sub(seen) & mask {
        1 => Ok(()),
        _ => Err(ChannelError::Sequence {
            expected: (seen.wrapping_add(1) & mask).into(),
            got: now.into(),
        }),
    }
}

/// A stream ring's bell: a shared futex word per direction whose value
/// changes with every ring, so a sleeper armed before the ring does not sleep.
struct FutexBell {
    map: Arc<SharedMapping>,
    post: usize,
    wait: usize,
}

impl Doorbell for FutexBell {
    #[inline]
    fn arm(&self) -> u32 {
        self.map.atomic_u32(self.wait).load(Ordering::Acquire)
    }

    #[inline]
    fn ring(&mut self) -> Result<(), ChannelError> {
        let word = self.map.atomic_u32(self.post);
        word.fetch_add(1, Ordering::Release);
        futex_wake(word, 1).map_err(ChannelError::io("futex wake"))
    }

    #[inline]
    fn sleep(&mut self, armed: u32) -> Result<(), ChannelError> {
        retry("futex wait", || {
            futex_wait(self.map.atomic_u32(self.wait), armed)
        })
    }
}

impl Mechanism for ShmFutex {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "shm-futex",
            summary: "shared memory + memcpy, signalled by a shared futex word per direction",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_common::mapping(ctx.size)?;
        let (client, server) = FutexHandoff::pair(&map);
        Ok(shm_common::channel(ctx, map, client, server, Vec::new()))
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open_stream(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_ring::mapping(ctx.size)?;
        let bell = |post, wait| FutexBell {
            map: Arc::clone(&map),
            post,
            wait,
        };
        let (sender, receiver) = (bell(DATA_BELL, SPACE_BELL), bell(SPACE_BELL, DATA_BELL));
        Ok(shm_ring::channel(ctx, map, sender, receiver, Vec::new()))
    }
}
