//! `shm-condvar`: shared memory + memcpy, each hand-off signalled the way
//! much industrial code does it between processes: a count guarded by a
//! process-shared pthread mutex, and a process-shared condition variable
//! the receiver waits on (`PTHREAD_PROCESS_SHARED`).
//!
//! A condition wait does not end on a handled signal (glibc takes the
//! interruption for a spurious wake-up and waits again), so every wait is
//! timed: it wakes at least every [`TICK`] to look at the stop flags and the
//! peer's death ([`interrupt::check`]). A real hand-off signals the
//! condition variable and never waits for the tick. The mutex is robust: a
//! peer that dies holding it makes the next lock fail the figure instead of
//! hanging it.

use super::shm_common::{self, Handoff, SLOT, TO_CLIENT_WORD, TO_SERVER_WORD};
use super::shm_futex::check_ahead;
use super::shm_ring::{self, DATA_BELL, Doorbell, SPACE_BELL};
use crate::engine::channel::*;
use crate::engine::os::interrupt;
use crate::sys::mem::SharedMapping;
use crate::sys::sync::{Locked, SharedCondvar};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Shared memory with a mutex, a condition variable and a count per direction.
pub struct ShmCondvar;

/// Longest a lock or a condition wait lasts before the stop flags are
/// looked at again: how late a stop, the watchdog or a dead peer can be
/// seen, never part of a hand-off.
const TICK: Duration = Duration::from_millis(10);

/// Where the mutex and the condition variable sit after the count word
/// they guard, in the count's own slot.
const CONDVAR_AFTER: usize = 8;
const _: () = assert!(CONDVAR_AFTER + SharedCondvar::LEN <= SLOT);

/// A count word and the mutex and condition variable that guard it, at
/// `at` of the mapping (one [`SLOT`]).
#[derive(Clone)]
struct Guarded {
    map: Arc<SharedMapping>,
    count: usize,
    cv: SharedCondvar,
}

impl Guarded {
    fn init(map: &Arc<SharedMapping>, at: usize) -> Result<Self, ChannelError> {
        Ok(Guarded {
            map: Arc::clone(map),
            count: at,
            cv: SharedCondvar::init(map, at + CONDVAR_AFTER)
                .map_err(ChannelError::io("pthread mutex/cond init"))?,
        })
    }

    /// The count, read and written only with the mutex held (an atomic only
    /// because the memory is shared).
    fn count(&self) -> &AtomicU32 {
        self.map.atomic_u32(self.count)
    }

    /// Locks, looking at the stop flags first and every tick.
    fn lock(&self) -> Result<(), ChannelError> {
        // A signal does not end a pthread wait, so a stop that lands while
        // hand-offs keep flowing would go unseen: look before every wait, as
        // `retry` does for the system-call mechanisms.
        interrupt::check()?;
        loop {
            match self
                .cv
                .lock_for(TICK)
                .map_err(ChannelError::io("pthread_mutex_timedlock"))?
            {
                Locked::Yes => return Ok(()),
                Locked::TimedOut => interrupt::check()?,
                Locked::OwnerDied => {
                    let _ = self.cv.unlock();
                    return Err(ChannelError::PeerDied);
                }
            }
        }
    }

    fn unlock(&self) -> Result<(), ChannelError> {
        self.cv
            .unlock()
            .map_err(ChannelError::io("pthread_mutex_unlock"))
    }

    /// Adds one to the count and signals a waiter.
    fn post(&self) -> Result<(), ChannelError> {
        self.lock()?;
        let c = self.count();
        c.store(c.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
        let signalled = self
            .cv
            .signal()
            .map_err(ChannelError::io("pthread_cond_signal"));
        self.unlock()?;
        signalled
    }

    /// Waits, with the mutex held, until `moved(count)` holds; returns the
    /// count and releases the mutex.
    fn wait_until(&self, moved: impl Fn(u32) -> bool) -> Result<u32, ChannelError> {
        self.lock()?;
        let outcome = loop {
            let c = self.count().load(Ordering::Relaxed);
            if moved(c) {
                break Ok(c);
            }
            match self.cv.wait_for(TICK) {
                // Woken or timed out: either way the stop flags are looked
                // at, since a signal ends neither kind of wait.
                Ok(Locked::Yes | Locked::TimedOut) => {
                    if let Err(e) = interrupt::check() {
                        break Err(e);
                    }
                }
                Ok(Locked::OwnerDied) => break Err(ChannelError::PeerDied),
                Err(e) => {
                    // A failed wait may not hold the mutex: do not unlock.
                    return Err(ChannelError::Io {
                        op: "pthread_cond_timedwait",
                        source: e,
                    });
                }
            }
        };
        self.unlock()?;
        outcome
    }
}

/// The ping-pong hand-off: posts the count of one direction, waits on the
/// other's; one hand-off per wait.
struct CondvarHandoff {
    post: Guarded,
    wait: Guarded,
    seen: u32,
}

impl Handoff for CondvarHandoff {
    #[inline]
    fn notify(&mut self) -> Result<(), ChannelError> {
        self.post.post()
    }

    #[inline]
    fn wait(&mut self) -> Result<(), ChannelError> {
        let seen = self.seen;
        let now = self.wait.wait_until(|c| c != seen)?;
        check_ahead(seen, now, u32::MAX)?;
        self.seen = seen.wrapping_add(1);
        Ok(())
    }
}

/// A stream ring's bell: the guarded count moves with every ring, so a
/// sleeper that read it before the ring does not sleep.
struct CondvarBell {
    ring: Arc<Guarded>,
    sleep: Arc<Guarded>,
}

impl Doorbell for CondvarBell {
    fn arm(&self) -> u32 {
        self.sleep.count().load(Ordering::Relaxed)
    }

    fn ring(&mut self) -> Result<(), ChannelError> {
        self.ring.post()
    }

    fn sleep(&mut self, armed: u32) -> Result<(), ChannelError> {
        self.sleep.wait_until(|c| c != armed).map(|_| ())
    }
}

impl Mechanism for ShmCondvar {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "shm-condvar",
            summary: "shared memory + memcpy, signalled by a process-shared pthread mutex + condition variable per direction",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn requires(&self) -> Option<&'static str> {
        Some("glibc 2.12 (robust process-shared mutexes, condition variables on CLOCK_MONOTONIC)")
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_common::mapping(ctx.size)?;
        let to_server = Guarded::init(&map, TO_SERVER_WORD)?;
        let to_client = Guarded::init(&map, TO_CLIENT_WORD)?;
        // Each side holds its own view of both directions (as each process
        // does after the fork); both views name the same objects.
        let server = CondvarHandoff {
            post: to_client.clone(),
            wait: to_server.clone(),
            seen: 0,
        };
        let client = CondvarHandoff {
            post: to_server,
            wait: to_client,
            seen: 0,
        };
        Ok(shm_common::channel(ctx, map, client, server, Vec::new()))
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open_stream(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_ring::mapping(ctx.size)?;
        let data = Arc::new(Guarded::init(&map, DATA_BELL)?);
        let space = Arc::new(Guarded::init(&map, SPACE_BELL)?);
        let sender = CondvarBell {
            ring: Arc::clone(&data),
            sleep: Arc::clone(&space),
        };
        let receiver = CondvarBell {
            ring: space,
            sleep: data,
        };
        Ok(shm_ring::channel(ctx, map, sender, receiver, Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::test_util;

    #[test]
    fn echoes_at_several_sizes() {
        test_util::echo_sizes(&ShmCondvar, &[1, 8, 4096, 65536 + 3]);
    }

    #[test]
    fn a_dead_holder_fails_the_wait_instead_of_hanging_it() {
        let map = shm_common::mapping(8).unwrap();
        let g = Arc::new(Guarded::init(&map, TO_SERVER_WORD).unwrap());
        // A thread that ends holding the robust mutex, as a peer killed
        // mid-hand-off would.
        let held = Arc::clone(&g);
        std::thread::spawn(move || held.lock().unwrap())
            .join()
            .unwrap();
        assert!(matches!(g.lock(), Err(ChannelError::PeerDied)));
        // Marked consistent: usable again.
        g.post().unwrap();
        assert_eq!(g.wait_until(|c| c == 1).unwrap(), 1);
    }
}
