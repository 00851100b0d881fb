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
//! an application would build there), and nothing more: the reader lends
//! the chunk to the engine where it lies ([`Endpoint::lend`]), and the echo
//! answers in the chunk and publishes the same chunk back (the loan
//! returned with the reply in it), which the client then releases into its
//! own pool. Indices are global across the mapping, so a queue can carry a
//! chunk of either pool; a chunk returned to the end that loaned it goes on
//! that end's own list of spare chunks, so every shared queue keeps one
//! producer.
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

/// Where each piece of a port starting at `base` lies; its chunks are
/// `first..first + n` of the mapping's.
#[derive(Clone, Copy)]
struct Port {
    base: usize,
    n: u32,
    stride: usize,
    first: u32,
}

impl Port {
    fn queue_len(n: u32) -> usize {
        (n as usize * 4).next_multiple_of(SLOT)
    }

    fn len(size: usize) -> usize {
        let n = chunks(size) as u32;
        QUEUES + 2 * Self::queue_len(n) + n as usize * stride(size)
    }

    /// Port `i` of a mapping for messages of `size` bytes.
    fn new(i: usize, size: usize) -> Port {
        let n = chunks(size) as u32;
        Port {
            base: i * Self::len(size),
            n,
            stride: stride(size),
            first: i as u32 * n,
        }
    }

    /// Whether chunk `id` (of the mapping's) is one of this port's.
    fn holds(&self, id: u32) -> bool {
        id.wrapping_sub(self.first) < self.n
    }

    fn published_queue(&self) -> usize {
        self.base + QUEUES
    }

    fn free_queue(&self) -> usize {
        self.published_queue() + Self::queue_len(self.n)
    }

    /// Where chunk `id` (one this port [`Port::holds`]) lies.
    fn chunk(&self, id: u32) -> usize {
        self.free_queue() + Self::queue_len(self.n) + (id - self.first) as usize * self.stride
    }

    /// Every chunk free: the free queue holds every index once.
    fn fill_free(&self, map: &SharedMapping) {
        let q = map.atomic_u32_slice(self.free_queue(), self.n as usize);
        for (i, slot) in (self.first..).zip(q) {
            slot.store(i, Ordering::Relaxed);
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
    /// The ports whose chunks this queue may carry (the second, where
    /// there is one: a loan coming back to the end that made it).
    carries: [Option<Port>; 2],
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
            let flag = self.map.atomic_u32(self.sleeps);
            flag.store(1, Ordering::Relaxed);
            // Pairs with the producer's fence between publishing its count
            // and reading this flag: one of the two sees the other.
            fence(Ordering::SeqCst);
            if count.load(Ordering::Acquire) == consumed {
                retry("futex wait", || futex_wait(count, consumed))?;
            }
            // Only this side lowers its flag, once awake. A producer that
            // lowered it instead (after the wake of an earlier push) could
            // erase the flag this side raised since for its next sleep, and
            // the next push would wake no one: a stream of 64 B messages
            // hung so within a second.
            flag.store(0, Ordering::Relaxed);
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
        if !self.carries.iter().flatten().any(|p| p.holds(index)) {
            return Err(ChannelError::Check(format!(
                "chunk index {index} is none of the pools this queue carries"
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
        if self.map.atomic_u32(self.sleeps).load(Ordering::Relaxed) != 0 {
            futex_wake(count, 1).map_err(ChannelError::io("futex wake"))?;
        }
        Ok(())
    }
}

/// One side's view of the two queues of `port`: (published, free). The
/// published queue may also carry chunks of `also` (loans sent back); the
/// free queue only the port's own.
fn queues(map: &Arc<SharedMapping>, port: Port, spins: bool, also: Option<Port>) -> (Queue, Queue) {
    let queue = |count, ring, sleeps, carries| Queue {
        map: Arc::clone(map),
        count: port.base + count,
        ring,
        sleeps: port.base + sleeps,
        n: port.n,
        spins,
        carries,
    };
    (
        queue(
            PUBLISHED,
            port.published_queue(),
            READER_SLEEPS,
            [Some(port), also],
        ),
        queue(FREED, port.free_queue(), WRITER_SLEEPS, [Some(port), None]),
    )
}

/// The writing side of a port: loans free chunks, publishes them (its own,
/// or, for a ping-pong end, a loan of the other side's sent back).
struct Writer {
    map: Arc<SharedMapping>,
    port: Port,
    /// Indices the reader released, and how many of them were loaned.
    free: Queue,
    loaned: u32,
    /// Indices this side published, and how many.
    published: Queue,
    sent: u32,
    /// Chunks of this port that came back to this side with a reply in
    /// them and were read: loaned again before the free queue is asked.
    spare: Vec<u32>,
}

impl Writer {
    /// `returns`: the port whose loans this side may send back (the one it
    /// reads), which its published queue then also carries.
    fn new(map: &Arc<SharedMapping>, port: Port, spins: bool, returns: Option<Port>) -> Writer {
        let (published, free) = queues(map, port, spins, returns);
        Writer {
            map: Arc::clone(map),
            free,
            loaned: 0,
            published,
            sent: 0,
            spare: Vec::with_capacity(port.n as usize),
            port,
        }
    }

    /// Loans a chunk, writes `msg` into it in place, publishes it.
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let index = match self.spare.pop() {
            Some(index) => index,
            None => {
                let index = self.free.pop(self.loaned)?;
                self.loaned = self.loaned.wrapping_add(1);
                index
            }
        };
        self.map.write_bytes(self.port.chunk(index), msg);
        self.publish(index)
    }

    /// Publishes chunk `index` as it is.
    #[inline]
    fn publish(&mut self, index: u32) -> Result<(), ChannelError> {
        self.published.push(self.sent, index)?;
        self.sent = self.sent.wrapping_add(1);
        Ok(())
    }

    /// Takes back a chunk of this port that the other side returned.
    #[inline]
    fn take_back(&mut self, index: u32) -> Result<(), ChannelError> {
        if self.spare.len() == self.spare.capacity() {
            // Each chunk can come back once per loan: more than the pool
            // is a chunk returned twice (and would allocate here).
            return Err(ChannelError::Check(format!(
                "chunk {index} came back with all {} of the pool already back",
                self.port.n
            )));
        }
        self.spare.push(index);
        Ok(())
    }
}

/// The reading side of a port: takes published chunks, releases them.
struct Reader {
    map: Arc<SharedMapping>,
    published: Queue,
    taken: u32,
    free: Queue,
    released: u32,
    /// The chunk lent to the engine, until it is sent back or released.
    lent: Option<u32>,
}

impl Reader {
    /// `own`: the port of this side's writer, whose chunks may come back
    /// to it with a reply (a ping-pong end's).
    fn new(map: &Arc<SharedMapping>, port: Port, spins: bool, own: Option<Port>) -> Reader {
        let (published, free) = queues(map, port, spins, own);
        Reader {
            map: Arc::clone(map),
            published,
            taken: 0,
            free,
            // The pool starts with every chunk released once.
            released: port.n,
            lent: None,
        }
    }

    /// Takes the next published chunk: its index and where it lies.
    #[inline]
    fn take(&mut self) -> Result<(u32, usize), ChannelError> {
        let index = self.published.pop(self.taken)?;
        self.taken = self.taken.wrapping_add(1);
        let at = self.published.carries.iter().flatten();
        let port = at.clone().find(|p| p.holds(index)).expect("checked by pop");
        Ok((index, port.chunk(index)))
    }

    /// Releases chunk `index` of this reader's port to its writer.
    #[inline]
    fn release(&mut self, index: u32) -> Result<(), ChannelError> {
        self.free.push(self.released, index)?;
        self.released = self.released.wrapping_add(1);
        Ok(())
    }

    /// Takes the next published chunk and lends it in place.
    #[inline]
    fn lend(&mut self, len: usize) -> Result<&mut [u8], ChannelError> {
        let (index, at) = self.take()?;
        self.lent = Some(index);
        // The chunk is this side's from its publication until it is released
        // or sent back, which ends the slice's borrow of self first.
        Ok(self.map.bytes_mut(at, len))
    }
}

/// A ping-pong end: writes one port, reads the other, and can send back
/// what it reads.
struct LoanEnd {
    writer: Writer,
    reader: Reader,
    size: usize,
}

impl LoanEnd {
    /// Gives chunk `index`, read, back to the pool it came from.
    #[inline]
    fn give_back(&mut self, index: u32) -> Result<(), ChannelError> {
        if self.writer.port.holds(index) {
            self.writer.take_back(index)
        } else {
            self.reader.release(index)
        }
    }
}

impl Endpoint for LoanEnd {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.writer.send(msg)
    }

    /// Receives by reading the chunk out: for a caller that wants a copy;
    /// the engine lends.
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let (index, at) = self.reader.take()?;
        self.reader.map.read_bytes(at, buf);
        self.give_back(index)
    }

    fn lends(&self) -> bool {
        true
    }

    #[inline]
    fn lend(&mut self) -> Result<&mut [u8], ChannelError> {
        if let Some(index) = self.reader.lent.take() {
            self.give_back(index)?;
        }
        self.reader.lend(self.size)
    }

    #[inline]
    fn send_lent(&mut self) -> Result<(), ChannelError> {
        let index = self.reader.lent.take().ok_or_else(nothing_lent)?;
        self.writer.publish(index)
    }

    #[inline]
    fn release(&mut self) -> Result<(), ChannelError> {
        let index = self.reader.lent.take().ok_or_else(nothing_lent)?;
        self.give_back(index)
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
struct StreamReader {
    reader: Reader,
    size: usize,
}

impl Endpoint for StreamReader {
    fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
        Err(ChannelError::Setup(
            "a stream carries messages one way: its receiver cannot send".into(),
        ))
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let (index, at) = self.reader.take()?;
        self.reader.map.read_bytes(at, buf);
        self.reader.release(index)
    }

    fn lends(&self) -> bool {
        true
    }

    #[inline]
    fn lend(&mut self) -> Result<&mut [u8], ChannelError> {
        if let Some(index) = self.reader.lent.take() {
            self.reader.release(index)?;
        }
        self.reader.lend(self.size)
    }

    fn send_lent(&mut self) -> Result<(), ChannelError> {
        Err(ChannelError::Setup(
            "a stream carries messages one way: its receiver cannot send".into(),
        ))
    }

    #[inline]
    fn release(&mut self) -> Result<(), ChannelError> {
        let index = self.reader.lent.take().ok_or_else(nothing_lent)?;
        self.reader.release(index)
    }
}

/// Maps `ports` ports for messages of `size` bytes, every chunk free.
fn mapping(size: usize, ports: usize) -> Result<(Arc<SharedMapping>, Vec<Port>), ChannelError> {
    let len = Port::len(size);
    let map = SharedMapping::new(ports * len)
        .map(Arc::new)
        .map_err(ChannelError::io("mmap chunk pool"))?;
    let ports: Vec<Port> = (0..ports).map(|i| Port::new(i, size)).collect();
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
        let s = self.spins;
        let client = LoanEnd {
            writer: Writer::new(&map, to_server, s, Some(to_client)),
            reader: Reader::new(&map, to_client, s, Some(to_server)),
            size: ctx.size,
        };
        let server = LoanEnd {
            writer: Writer::new(&map, to_client, s, Some(to_server)),
            reader: Reader::new(&map, to_server, s, Some(to_client)),
            size: ctx.size,
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
            client: Box::new(StreamWriter(Writer::new(&map, port, self.spins, None))),
            server: Some(Box::new(StreamReader {
                reader: Reader::new(&map, port, self.spins, None),
                size: ctx.size,
            })),
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
    fn lends_and_returns_every_loan() {
        for m in [&ShmLoan::FUTEX, &ShmLoan::SPIN] {
            // 3 chunks a pool at 64 KiB + 3: each loan comes back many times.
            test_util::echo_lent(m, &[1, 64, 65536 + 3], 200);
        }
    }

    #[test]
    fn echoes_at_several_sizes() {
        for m in [&ShmLoan::FUTEX, &ShmLoan::SPIN] {
            test_util::echo_sizes(m, &[1, 8, 4096, 65536 + 3]);
        }
    }

    #[test]
    fn pieces_do_not_overlap() {
        for size in [1, 64, 129, 4096, 1 << 20] {
            let p = Port::new(1, size);
            assert!(p.published_queue() + p.n as usize * 4 <= p.free_queue());
            assert!(p.free_queue() + p.n as usize * 4 <= p.chunk(p.first));
            assert!(p.chunk(p.first + p.n - 1) + size <= p.base + Port::len(size));
            assert_eq!(p.chunk(p.first + 1) % SLOT, 0);
            assert!(p.holds(p.first) && !p.holds(p.first - 1) && !p.holds(p.first + p.n));
        }
    }

    /// A stream far ahead of a slow reader: the writer runs out of free
    /// chunks and waits for releases, many times over.
    #[test]
    fn streams_through_a_thread_with_every_chunk_loaned() {
        for (m, size) in [
            (ShmLoan::FUTEX, 100),
            (ShmLoan::SPIN, 100),
            (ShmLoan::FUTEX, 64),
            (ShmLoan::FUTEX, 1),
        ] {
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

    /// Only the sleeping side lowers its flag: a push that lowered it could
    /// erase a flag raised for the next sleep (the wake of that push having
    /// come before the sleep), and the next push would wake no one.
    #[test]
    fn a_push_leaves_the_sleepers_flag_to_the_sleeper() {
        let (map, ports) = mapping(64, 1).unwrap();
        let port = ports[0];
        let mut w = Writer::new(&map, port, false, None);
        let flag = map.atomic_u32(port.base + READER_SLEEPS);
        flag.store(1, Ordering::Relaxed);
        w.send(&[1u8; 64]).unwrap();
        w.send(&[2u8; 64]).unwrap();
        assert_eq!(flag.load(Ordering::Relaxed), 1, "a push lowered the flag");
    }

    #[test]
    fn a_broken_index_is_caught() {
        let (map, ports) = mapping(64, 1).unwrap();
        let port = ports[0];
        let mut w = Writer::new(&map, port, false, None);
        let mut r = Reader::new(&map, port, false, None);
        w.send(&[1u8; 64]).unwrap();
        // Another process scribbles over the published queue.
        map.atomic_u32(port.published_queue())
            .store(port.n, Ordering::Relaxed);
        assert!(matches!(r.take(), Err(ChannelError::Check(_))));
    }
}
