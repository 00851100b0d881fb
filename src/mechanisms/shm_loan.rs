//! `shm-loan`, `shm-loan-spin`: a loaned-chunk ring in shared memory, the
//! shape of iceoryx's publish/subscribe. Per direction a pool of chunks and
//! two queues of chunk indices: the writer loans a free chunk (takes an
//! index from the free queue), writes the message into it in place and
//! publishes the index; the reader takes the index, reads the message in
//! place and releases the chunk (puts the index back on the free queue).
//! Only indices move through the queues, never the payload; the reader is
//! woken by a futex on the published count (`shm-loan`) or busy-polls it
//! (`shm-loan-spin`), and a writer finding no free chunk waits the same way.
//!
//! What is measured against the engine's buffers: the writer's one write of
//! the payload into the loaned chunk (the engine's message stands for what
//! an application would build there) and the reader's one read of it out of
//! the chunk into the buffer where the engine checks it. A zero-copy
//! transport touches its payload exactly this much; the receiver's read is
//! what shows that the bytes were there.
//!
//! Layout of one direction (a port), every counter in its own [`SLOT`]:
//!
//! ```text
//! 0        published: chunks published by the writer (u32, futex word)
//! SLOT     free: chunks released by the reader (u32, futex word)
//! 2*SLOT   reader-sleeps flag, 3*SLOT writer-sleeps flag
//! 4*SLOT   published queue: n chunk indices (u32)
//! ...      free queue: n chunk indices (u32)
//! ...      n chunks of `size` bytes, each rounded up to SLOT
//! ```

use super::shm_common::SLOT;
use crate::engine::channel::*;
use crate::engine::os::interrupt;
use crate::sys::mem::SharedMapping;
use crate::sys::sync::{futex_wait, futex_wake};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering, fence};

/// A loaned-chunk ring per direction, woken by a futex or by busy-polling.
pub struct ShmLoan {
    spins: bool,
}

impl ShmLoan {
    /// Woken by a futex word per queue.
    pub const FUTEX: ShmLoan = ShmLoan { spins: false };
    /// Busy-polling the queues (no system call).
    pub const SPIN: ShmLoan = ShmLoan { spins: true };
}

const PUBLISHED: usize = 0;
const FREED: usize = SLOT;
const READER_SLEEPS: usize = 2 * SLOT;
const WRITER_SLEEPS: usize = 3 * SLOT;
const QUEUES: usize = 4 * SLOT;

/// About this many bytes of chunks per direction; at least 2 and at most
/// 256 chunks.
const POOL_BYTES: usize = 256 << 10;
const MAX_CHUNKS: usize = 256;

fn stride(size: usize) -> usize {
    size.max(1).next_multiple_of(SLOT)
}

fn chunks(size: usize) -> usize {
    (POOL_BYTES / stride(size)).clamp(2, MAX_CHUNKS)
}

/// Where each piece of a port starting at `base` lies.
#[derive(Clone, Copy)]
struct Port {
    base: usize,
    n: u32,
    stride: usize,
}

impl Port {
    fn queue_len(n: u32) -> usize {
        (n as usize * 4).next_multiple_of(SLOT)
    }

    fn len(size: usize) -> usize {
        let n = chunks(size) as u32;
        QUEUES + 2 * Self::queue_len(n) + n as usize * stride(size)
    }

    fn new(base: usize, size: usize) -> Port {
        Port {
            base,
            n: chunks(size) as u32,
            stride: stride(size),
        }
    }

    fn published_queue(&self) -> usize {
        self.base + QUEUES
    }

    fn free_queue(&self) -> usize {
        self.published_queue() + Self::queue_len(self.n)
    }

    fn chunk(&self, index: u32) -> usize {
        self.free_queue() + Self::queue_len(self.n) + index as usize * self.stride
    }

    /// Every chunk free: the free queue holds every index once.
    fn fill_free(&self, map: &SharedMapping) {
        let q = map.atomic_u32_slice(self.free_queue(), self.n as usize);
        for (i, slot) in q.iter().enumerate() {
            slot.store(i as u32, Ordering::Relaxed);
        }
        map.atomic_u32(self.base + FREED)
            .store(self.n, Ordering::Release);
    }
}

/// One side's view of one queue of indices: a count the other side
/// advances, the count this side has consumed, and how to wait for more.
struct Queue {
    map: Arc<SharedMapping>,
    /// The count the producing side publishes (a futex word).
    count: usize,
    /// The ring of indices.
    ring: usize,
    /// The flag this side raises before sleeping on `count`.
    sleeps: usize,
    n: u32,
    spins: bool,
}

impl Queue {
    fn count(&self) -> &AtomicU32 {
        self.map.atomic_u32(self.count)
    }

    /// Waits until the count moves past `consumed`; returns the index at
    /// position `consumed` of the ring.
    #[inline]
    fn pop(&self, consumed: u32) -> Result<u32, ChannelError> {
        let count = self.count();
        loop {
            let c = count.load(Ordering::Acquire);
            if c != consumed {
                return self.index_at(consumed, c);
            }
            if self.spins {
                // Nothing can interrupt a spin but this check.
                interrupt::check()?;
                std::hint::spin_loop();
                continue;
            }
            self.map.atomic_u32(self.sleeps).store(1, Ordering::Relaxed);
            // Pairs with the producer's fence between publishing its count
            // and reading this flag: one of the two sees the other.
            fence(Ordering::SeqCst);
            if count.load(Ordering::Acquire) != consumed {
                continue;
            }
            retry("futex wait", || futex_wait(count, consumed))?;
        }
    }

    /// The index at position `at`, with the count at `now`: more than a
    /// ring ahead, or an index outside the pool, is a broken queue.
    fn index_at(&self, at: u32, now: u32) -> Result<u32, ChannelError> {
        if now.wrapping_sub(at) > self.n {
            return Err(ChannelError::Sequence {
                expected: at.wrapping_add(1).into(),
                got: now.into(),
            });
        }
        let slot = self.map.atomic_u32(self.ring + (at % self.n) as usize * 4);
        let index = slot.load(Ordering::Relaxed);
        if index >= self.n {
            return Err(ChannelError::Check(format!(
                "chunk index {index} out of a pool of {}",
                self.n
            )));
        }
        Ok(index)
    }

    /// Puts `index` at position `at` and publishes the count `at + 1`,
    /// waking the consumer if it sleeps.
    #[inline]
    fn push(&self, at: u32, index: u32) -> Result<(), ChannelError> {
        self.map
            .atomic_u32(self.ring + (at % self.n) as usize * 4)
            .store(index, Ordering::Relaxed);
        let count = self.count();
        count.store(at.wrapping_add(1), Ordering::Release);
        if self.spins {
            return Ok(());
        }
        fence(Ordering::SeqCst);
        let f = self.map.atomic_u32(self.sleeps);
        if f.load(Ordering::Relaxed) != 0 && f.swap(0, Ordering::Relaxed) != 0 {
            futex_wake(count, 1).map_err(ChannelError::io("futex wake"))?;
        }
        Ok(())
    }
}

/// The writing side of a port: loans free chunks, publishes them.
struct Writer {
    map: Arc<SharedMapping>,
    port: Port,
    /// Indices the reader released, and how many of them were loaned.
    free: Queue,
    loaned: u32,
    /// Indices this side published, and how many.
    published: Queue,
    sent: u32,
}

impl Writer {
    fn new(map: &Arc<SharedMapping>, port: Port, spins: bool) -> Writer {
        let q = |count, ring, sleeps| Queue {
            map: Arc::clone(map),
            count: port.base + count,
            ring,
            sleeps: port.base + sleeps,
            n: port.n,
            spins,
        };
        Writer {
            map: Arc::clone(map),
            free: q(FREED, port.free_queue(), WRITER_SLEEPS),
            loaned: 0,
            published: q(PUBLISHED, port.published_queue(), READER_SLEEPS),
            sent: 0,
            port,
        }
    }

    /// Loans a chunk, writes `msg` into it in place, publishes it.
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let index = self.free.pop(self.loaned)?;
        self.loaned = self.loaned.wrapping_add(1);
        self.map.write_bytes(self.port.chunk(index), msg);
        self.published.push(self.sent, index)?;
        self.sent = self.sent.wrapping_add(1);
        Ok(())
    }
}

/// The reading side of a port: takes published chunks, releases them.
struct Reader {
    map: Arc<SharedMapping>,
    port: Port,
    published: Queue,
    taken: u32,
    free: Queue,
    released: u32,
}

impl Reader {
    fn new(map: &Arc<SharedMapping>, port: Port, spins: bool) -> Reader {
        let q = |count, ring, sleeps| Queue {
            map: Arc::clone(map),
            count: port.base + count,
            ring,
            sleeps: port.base + sleeps,
            n: port.n,
            spins,
        };
        Reader {
            map: Arc::clone(map),
            published: q(PUBLISHED, port.published_queue(), READER_SLEEPS),
            taken: 0,
            // The pool starts with every chunk released once.
            free: q(FREED, port.free_queue(), WRITER_SLEEPS),
            released: port.n,
            port,
        }
    }

    /// Takes the next published chunk, reads it in place into `buf`,
    /// releases it to the writer.
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let index = self.published.pop(self.taken)?;
        self.taken = self.taken.wrapping_add(1);
        self.map.read_bytes(self.port.chunk(index), buf);
        self.free.push(self.released, index)?;
        self.released = self.released.wrapping_add(1);
        Ok(())
    }
}

/// A ping-pong end: writes one port, reads the other.
struct LoanEnd {
    writer: Writer,
    reader: Reader,
}

impl Endpoint for LoanEnd {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.writer.send(msg)
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        self.reader.recv(buf)
    }
}

/// A stream's sending end.
struct StreamWriter(Writer);

impl Endpoint for StreamWriter {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.0.send(msg)
    }

    fn recv(&mut self, _buf: &mut [u8]) -> Result<(), ChannelError> {
        Err(ChannelError::Setup(
            "a stream carries messages one way: its sender cannot receive".into(),
        ))
    }
}

/// A stream's receiving end.
struct StreamReader(Reader);

impl Endpoint for StreamReader {
    fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
        Err(ChannelError::Setup(
            "a stream carries messages one way: its receiver cannot send".into(),
        ))
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        self.0.recv(buf)
    }
}

/// Maps `ports` ports for messages of `size` bytes, every chunk free.
fn mapping(size: usize, ports: usize) -> Result<(Arc<SharedMapping>, Vec<Port>), ChannelError> {
    let len = Port::len(size);
    let map = SharedMapping::new(ports * len)
        .map(Arc::new)
        .map_err(ChannelError::io("mmap chunk pool"))?;
    let ports: Vec<Port> = (0..ports).map(|i| Port::new(i * len, size)).collect();
    for p in &ports {
        p.fill_free(&map);
    }
    Ok((map, ports))
}

impl Mechanism for ShmLoan {
    fn info(&self) -> MechanismInfo {
        if self.spins {
            MechanismInfo {
                id: "shm-loan-spin",
                summary: "loaned-chunk ring in shared memory (iceoryx-style): written and read in place, only indices queued, hand-off by busy-polling",
                payload: Payload::Bytes,
                topology: Topology::Peer,
                spins: true,
            }
        } else {
            MechanismInfo {
                id: "shm-loan",
                summary: "loaned-chunk ring in shared memory (iceoryx-style): written and read in place, only indices queued, futex wake-up",
                payload: Payload::Bytes,
                topology: Topology::Peer,
                spins: false,
            }
        }
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (map, ports) = mapping(ctx.size, 2)?;
        let (to_server, to_client) = (ports[0], ports[1]);
        let client = LoanEnd {
            writer: Writer::new(&map, to_server, self.spins),
            reader: Reader::new(&map, to_client, self.spins),
        };
        let server = LoanEnd {
            writer: Writer::new(&map, to_client, self.spins),
            reader: Reader::new(&map, to_server, self.spins),
        };
        Ok(Channel {
            client: Box::new(client),
            server: Some(Box::new(server)),
            note: None,
        })
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open_stream(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (map, ports) = mapping(ctx.size, 1)?;
        let port = ports[0];
        Ok(Channel {
            client: Box::new(StreamWriter(Writer::new(&map, port, self.spins))),
            server: Some(Box::new(StreamReader(Reader::new(&map, port, self.spins)))),
            note: Some(format!("{} chunks", port.n)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::message::fill_pattern;
    use crate::mechanisms::test_util;

    #[test]
    fn echoes_at_several_sizes() {
        for m in [&ShmLoan::FUTEX, &ShmLoan::SPIN] {
            test_util::echo_sizes(m, &[1, 8, 4096, 65536 + 3]);
        }
    }

    #[test]
    fn pieces_do_not_overlap() {
        for size in [1, 64, 129, 4096, 1 << 20] {
            let p = Port::new(Port::len(size), size);
            assert!(p.published_queue() + p.n as usize * 4 <= p.free_queue());
            assert!(p.free_queue() + p.n as usize * 4 <= p.chunk(0));
            assert!(p.chunk(p.n - 1) + size <= p.base + Port::len(size));
            assert_eq!(p.chunk(1) % SLOT, 0);
        }
    }

    /// A stream far ahead of a slow reader: the writer runs out of free
    /// chunks and waits for releases, many times over.
    #[test]
    fn streams_through_a_thread_with_every_chunk_loaned() {
        for m in [ShmLoan::FUTEX, ShmLoan::SPIN] {
            let size = 100;
            let ch = test_util::open_stream(&m, size);
            let (mut tx, mut rx) = (ch.client, ch.server.unwrap());
            let reader = std::thread::spawn(move || {
                let (mut buf, mut want) = (vec![0u8; size], vec![0u8; size]);
                for seq in 0..5000 {
                    rx.recv(&mut buf).unwrap();
                    fill_pattern(&mut want, seq);
                    assert_eq!(buf, want, "message {seq}");
                    if seq % 701 == 0 {
                        std::thread::sleep(std::time::Duration::from_micros(300));
                    }
                }
            });
            let mut msg = vec![0u8; size];
            for seq in 0..5000 {
                fill_pattern(&mut msg, seq);
                tx.send(&msg).unwrap();
            }
            reader.join().unwrap();
        }
    }

    #[test]
    fn a_broken_index_is_caught() {
        let (map, ports) = mapping(64, 1).unwrap();
        let port = ports[0];
        let mut w = Writer::new(&map, port, false);
        let mut r = Reader::new(&map, port, false);
        w.send(&[1u8; 64]).unwrap();
        // Another process scribbles over the published queue.
        map.atomic_u32(port.published_queue())
            .store(port.n, Ordering::Relaxed);
        assert!(matches!(
            r.recv(&mut [0u8; 64]),
            Err(ChannelError::Check(_))
        ));
    }
}
