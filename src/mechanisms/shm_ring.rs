//! How the shared-memory mechanisms stream (`--mode stream`): a one-way ring
//! of message slots in an anonymous shared mapping. The sender copies each
//! message into the next free slot and publishes a `head` count; the receiver
//! copies it out and publishes a `tail` count. Each mechanism supplies only a
//! [`Doorbell`]: its primitive (semaphore, futex, eventfd) wakes a side that
//! found the ring empty (receiver) or full (sender), and the spin variant
//! busy-waits instead.
//!
//! A side rings only when the other announced that it sleeps, so while both
//! keep up no system call is made at all: the classic producer/consumer ring
//! with sleeping on empty and full. (The ping-pong [`Handoff`] cannot serve:
//! it signals every message and insists that hand-offs alternate one for one,
//! which a queue by design does not.)
//!
//! [`Handoff`]: super::shm_common::Handoff
//!
//! Layout (every piece on its own [`SLOT`], two cache lines, so the two
//! sides never write the same line):
//!
//! ```text
//! 0        head: messages published by the sender (u64)
//! SLOT     tail: messages taken by the receiver (u64)
//! 2*SLOT   receiver-sleeps flag (u32)
//! 3*SLOT   sender-sleeps flag (u32)
//! 4*SLOT   data bell word, 5*SLOT space bell word (a futex doorbell's
//!          futex words; a semaphore doorbell's "posted" latches)
//! 6*SLOT   n slots of `size` bytes, each rounded up to SLOT
//! ```

use super::shm_common::{Handoff, SLOT};
use crate::engine::channel::{Channel, ChannelError, Endpoint, OpenContext};
use crate::engine::os::interrupt;
use crate::engine::os::objects::Cleanup;
use crate::sys::mem::SharedMapping;
use std::sync::Arc;
use std::sync::atomic::{Ordering, fence};

const HEAD: usize = 0;
const TAIL: usize = SLOT;
const RECEIVER_SLEEPS: usize = 2 * SLOT;
const SENDER_SLEEPS: usize = 3 * SLOT;
/// A word a futex doorbell can use to wake the receiver (data available).
pub const DATA_BELL: usize = 4 * SLOT;
/// A word a futex doorbell can use to wake the sender (space available).
pub const SPACE_BELL: usize = 5 * SLOT;
const SLOTS: usize = 6 * SLOT;

/// About this many bytes of slots; at least 2 and at most 256 slots.
const RING_BYTES: usize = 256 << 10;
const MAX_SLOTS: usize = 256;

fn stride(size: usize) -> usize {
    size.max(1).next_multiple_of(SLOT)
}

fn slots(size: usize) -> usize {
    (RING_BYTES / stride(size)).clamp(2, MAX_SLOTS)
}

/// Maps the ring for messages of `size` bytes (all counters zero).
pub fn mapping(size: usize) -> Result<Arc<SharedMapping>, ChannelError> {
    SharedMapping::new(SLOTS + slots(size) * stride(size))
        .map(Arc::new)
        .map_err(ChannelError::io("mmap ring"))
}

/// The wake-up primitive of one side: it rings the other side's bell and
/// sleeps on its own. A ring may come early or twice; a sleeper re-checks
/// the ring after every wake-up, so rings may coalesce but never be lost.
pub trait Doorbell: Send {
    /// Whether the side busy-waits instead (no flags, no rings, no sleeps).
    fn spins(&self) -> bool {
        false
    }
    /// Read before the sleeper announces itself: what [`Doorbell::sleep`]
    /// needs so that a ring after this point wakes it (a futex's value).
    fn arm(&self) -> u32 {
        0
    }
    /// Wakes the other side, which has announced that it sleeps.
    fn ring(&mut self) -> Result<(), ChannelError>;
    /// Sleeps until rung (or woken for nothing). Blocking calls go through
    /// `retry`, so a stop, the watchdog or a dead peer ends the wait.
    fn sleep(&mut self, armed: u32) -> Result<(), ChannelError>;
}

/// A counting semaphore made a doorbell that cannot overflow: a ring posts
/// only when the bell is not already posted, and the sleeper lowers the latch
/// after it wakes, so the semaphore's value is 0 or 1 whatever the pattern of
/// rings and sleeps.
///
/// Without the latch the count climbs: a side that raised its flag and then
/// found the ring ready on its re-check returns without sleeping, so the ring
/// that flag calls for is never taken back, and over a long stream the value
/// reaches the semaphore's maximum (System V's SEMVMX, 32767: `semop` fails
/// with ERANGE; POSIX's SEM_VALUE_MAX, `sem_post` fails with EOVERFLOW).
/// A ring skipped because the latch is up loses nothing: the sleeper has not
/// yet taken the post that raised it, or has taken it and re-checks the ring
/// after lowering the latch (both sides' accesses are sequentially consistent).
pub struct Latched<H: Handoff> {
    sem: H,
    map: Arc<SharedMapping>,
    /// The latch of the other side's semaphore, raised before posting it.
    ring_latch: usize,
    /// The latch of this side's semaphore, lowered after waking on it.
    sleep_latch: usize,
}

/// The sender's and the receiver's doorbells over two semaphores (each a
/// [`Handoff`] that posts the other side's semaphore and waits on its own),
/// latched by the bell words of `map` (from [`mapping`]).
pub fn latched<H: Handoff>(
    map: &Arc<SharedMapping>,
    sender: H,
    receiver: H,
) -> (Latched<H>, Latched<H>) {
    (
        Latched {
            sem: sender,
            map: Arc::clone(map),
            ring_latch: DATA_BELL,
            sleep_latch: SPACE_BELL,
        },
        Latched {
            sem: receiver,
            map: Arc::clone(map),
            ring_latch: SPACE_BELL,
            sleep_latch: DATA_BELL,
        },
    )
}

impl<H: Handoff> Doorbell for Latched<H> {
    #[inline]
    fn ring(&mut self) -> Result<(), ChannelError> {
        let latch = self.map.atomic_u32(self.ring_latch);
        if latch
            .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.sem.notify()?;
        }
        Ok(())
    }

    #[inline]
    fn sleep(&mut self, _armed: u32) -> Result<(), ChannelError> {
        self.sem.wait()?;
        self.map
            .atomic_u32(self.sleep_latch)
            .store(0, Ordering::SeqCst);
        Ok(())
    }
}

/// The shared part of both ends.
struct Ring<D: Doorbell> {
    map: Arc<SharedMapping>,
    n: u64,
    stride: usize,
    bell: D,
    spins: bool,
}

impl<D: Doorbell> Ring<D> {
    fn slot(&self, count: u64) -> usize {
        SLOTS + (count % self.n) as usize * self.stride
    }

    /// Waits until `ready(counter)` holds for the counter the other side
    /// publishes at `watch`, announcing itself in the flag at `flag` before
    /// sleeping. Returns the counter's value.
    #[inline]
    fn wait_for(
        &mut self,
        watch: usize,
        flag: usize,
        ready: impl Fn(u64) -> Result<bool, ChannelError>,
    ) -> Result<u64, ChannelError> {
        let counter = self.map.atomic_u64(watch);
        loop {
            let v = counter.load(Ordering::Acquire);
            if ready(v)? {
                return Ok(v);
            }
            if self.spins {
                // Nothing can interrupt a spin but this check.
                interrupt::check()?;
                std::hint::spin_loop();
                continue;
            }
            let armed = self.bell.arm();
            self.map.atomic_u32(flag).store(1, Ordering::Relaxed);
            // Pairs with the other side's fence between publishing its
            // counter and reading this flag: one of the two sees the other.
            fence(Ordering::SeqCst);
            let v = counter.load(Ordering::Acquire);
            if ready(v)? {
                return Ok(v);
            }
            self.bell.sleep(armed)?;
        }
    }

    /// Publishes `count` at `at`, then rings if the other side sleeps.
    #[inline]
    fn publish(&mut self, at: usize, count: u64, flag: usize) -> Result<(), ChannelError> {
        self.map.atomic_u64(at).store(count, Ordering::Release);
        if self.spins {
            return Ok(());
        }
        fence(Ordering::SeqCst);
        let f = self.map.atomic_u32(flag);
        if f.load(Ordering::Relaxed) != 0 && f.swap(0, Ordering::Relaxed) != 0 {
            self.bell.ring()?;
        }
        Ok(())
    }
}

fn out_of_step(expected: u64, got: u64) -> ChannelError {
    ChannelError::Sequence { expected, got }
}

/// The sending end (the client's).
struct RingSender<D: Doorbell> {
    ring: Ring<D>,
    head: u64,
    /// The receiver's tail as last read: space is known without reading it.
    tail_seen: u64,
    _cleanup: Vec<Cleanup>,
}

impl<D: Doorbell> Endpoint for RingSender<D> {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let (head, n) = (self.head, self.ring.n);
        if head - self.tail_seen == n {
            self.tail_seen = self.ring.wait_for(TAIL, SENDER_SLEEPS, |t| {
                if t > head {
                    return Err(out_of_step(head, t));
                }
                Ok(head - t < n)
            })?;
        }
        let at = self.ring.slot(head);
        self.ring.map.write_bytes(at, msg);
        self.head = head + 1;
        self.ring.publish(HEAD, self.head, RECEIVER_SLEEPS)
    }

    fn recv(&mut self, _buf: &mut [u8]) -> Result<(), ChannelError> {
        Err(ChannelError::Setup(
            "a stream ring carries messages one way: its sender cannot receive".into(),
        ))
    }
}

/// The receiving end (the peer's).
struct RingReceiver<D: Doorbell> {
    ring: Ring<D>,
    tail: u64,
    /// The sender's head as last read: messages known to be there.
    head_seen: u64,
}

impl<D: Doorbell> Endpoint for RingReceiver<D> {
    #[inline]
    fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
        Err(ChannelError::Setup(
            "a stream ring carries messages one way: its receiver cannot send".into(),
        ))
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let (tail, n) = (self.tail, self.ring.n);
        if tail == self.head_seen {
            self.head_seen = self.ring.wait_for(HEAD, RECEIVER_SLEEPS, |h| {
                // The head can only be ahead of the tail, by at most a ring.
                if h < tail || h - tail > n {
                    return Err(out_of_step(tail + 1, h));
                }
                Ok(h != tail)
            })?;
        }
        let at = self.ring.slot(tail);
        self.ring.map.read_bytes(at, buf);
        self.tail = tail + 1;
        self.ring.publish(TAIL, self.tail, SENDER_SLEEPS)
    }
}

/// Builds a stream channel over `map` (from [`mapping`]): the client end
/// sends, the server end receives. `sender` rings the data bell and sleeps on
/// the space bell; `receiver` the other way round. `cleanup` is held by the
/// client end.
pub fn channel<D: Doorbell + 'static>(
    ctx: &OpenContext,
    map: Arc<SharedMapping>,
    sender: D,
    receiver: D,
    cleanup: Vec<Cleanup>,
) -> Channel {
    let n = slots(ctx.size);
    let ring = |bell: D| Ring {
        map: Arc::clone(&map),
        n: n as u64,
        stride: stride(ctx.size),
        spins: bell.spins(),
        bell,
    };
    Channel {
        client: Box::new(RingSender {
            ring: ring(sender),
            head: 0,
            tail_seen: 0,
            _cleanup: cleanup,
        }),
        server: Some(Box::new(RingReceiver {
            ring: ring(receiver),
            tail: 0,
            head_seen: 0,
        })),
        note: Some(format!("ring of {n} slots")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::channel::{Mechanism, PeerIdentity, StreamSupport};
    use crate::engine::message::fill_pattern;
    use crate::engine::os::objects::ObjectNamer;
    use crate::mechanisms::{
        shm_condvar::ShmCondvar, shm_eventfd::ShmEventfd, shm_futex::ShmFutex,
        shm_posix_sem::ShmPosixSem, shm_spin::ShmSpin, shm_sysv_sem::ShmSysvSem,
    };
    use crate::sys::process::{getpid, gettid};

    /// Streams `count` messages to a thread that checks every byte; the
    /// sender runs far ahead, so the ring fills and empties many times.
    fn stream_through_thread(mech: &dyn Mechanism, size: usize, count: u64) {
        assert_eq!(mech.stream(), StreamSupport::Queued);
        let names = ObjectNamer::new();
        let ctx = OpenContext {
            timeout: std::time::Duration::from_secs(5),
            size,
            names: &names,
        };
        let channel = mech.open_stream(&ctx).unwrap();
        let (mut client, mut server) = (channel.client, channel.server.unwrap());
        let me = PeerIdentity {
            pid: getpid(),
            tid: gettid(),
        };
        let handle = std::thread::spawn(move || {
            server.attach(me).unwrap();
            let (mut buf, mut want) = (vec![0u8; size], vec![0u8; size]);
            for seq in 0..count {
                server.recv(&mut buf).unwrap();
                fill_pattern(&mut want, seq);
                assert_eq!(buf, want, "message {seq}");
                if seq % 97 == 0 {
                    // A slow receiver: the sender finds the ring full.
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            }
        });
        client.attach(me).unwrap();
        let mut msg = vec![0u8; size];
        for seq in 0..count {
            fill_pattern(&mut msg, seq);
            client.send(&msg).unwrap();
        }
        handle.join().unwrap();
        assert!(
            client.recv(&mut msg).is_err(),
            "the sender end cannot receive"
        );
    }

    #[test]
    fn every_shared_memory_mechanism_streams_through_its_ring() {
        let _keys = crate::engine::os::objects::sysv_test_lock();
        let mechs: [&dyn Mechanism; 6] = [
            &ShmPosixSem,
            &ShmSysvSem,
            &ShmFutex,
            &ShmEventfd,
            &ShmSpin,
            &ShmCondvar,
        ];
        for mech in mechs {
            for size in [1, 64, 4096 + 3] {
                stream_through_thread(mech, size, 3000);
            }
        }
    }

    #[test]
    fn slots_are_aligned_and_bounded() {
        for size in [1, 64, 4096, 65536, 1 << 20] {
            let n = slots(size);
            assert!((2..=MAX_SLOTS).contains(&n));
            assert_eq!(stride(size) % SLOT, 0);
            assert!(stride(size) >= size);
            assert!(mapping(size).unwrap().len() >= SLOTS + n * size);
        }
    }
}
