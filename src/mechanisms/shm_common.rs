//! The shape shared by the shared-memory mechanisms: the payload is copied into
//! an anonymous shared mapping by the sender and out of it by the receiver (the
//! QNX study's "shared memory + semaphores + memcpy"); only the primitive that
//! signals each hand-off differs, and each mechanism supplies it as a [`Handoff`].
//!
//! Layout of the mapping (each piece starts on a [`SLOT`] boundary, so that no
//! two of them share a cache line, nor an adjacent-line prefetch pair):
//!
//! ```text
//! 0          control word, client -> server (futex/spin mechanisms)
//! SLOT       control word, server -> client
//! 2*SLOT     region A: client -> server, `size` bytes
//! ...        region B: server -> client, `size` bytes
//! ```

use crate::engine::channel::{Channel, ChannelError, Endpoint, OpenContext};
use crate::engine::os::objects::Cleanup;
use crate::sys::mem::SharedMapping;
use std::sync::Arc;
use std::sync::atomic::{Ordering, fence};

/// Alignment of every control word and data region: two cache lines, because
/// adjacent-line prefetchers move lines in pairs.
pub const SLOT: usize = 128;

/// Offset of the control word signalled by the client (read by the server).
pub const TO_SERVER_WORD: usize = 0;

/// Offset of the control word signalled by the server (read by the client).
pub const TO_CLIENT_WORD: usize = SLOT;

/// Bytes of the control part: every word in its own slot.
const CONTROL_LEN: usize = 2 * SLOT;

const REGION_A: usize = CONTROL_LEN;

fn region_stride(size: usize) -> usize {
    size.max(1).next_multiple_of(SLOT)
}

fn region_b(size: usize) -> usize {
    REGION_A + region_stride(size)
}

/// Maps the shared area for messages of `size` bytes: both control words and
/// both data regions. Anonymous, so it disappears with the last process mapping it.
pub fn mapping(size: usize) -> Result<Arc<SharedMapping>, ChannelError> {
    let len = REGION_A + 2 * region_stride(size);
    SharedMapping::new(len)
        .map(Arc::new)
        .map_err(ChannelError::io("mmap shared area"))
}

/// Maps the control part alone (the control words, no data regions), for
/// mechanisms that move the payload some other way.
pub fn control_mapping() -> Result<Arc<SharedMapping>, ChannelError> {
    SharedMapping::new(CONTROL_LEN)
        .map(Arc::new)
        .map_err(ChannelError::io("mmap control words"))
}

/// The signal that hands a message over: `notify` after the sender has copied
/// it in, `wait` before the receiver copies it out. Each end holds its own.
pub trait Handoff: Send {
    /// Tells the other end that a message is ready for it.
    fn notify(&mut self) -> Result<(), ChannelError>;
    /// Waits until the other end says a message is ready. Blocking calls go
    /// through `retry`; busy-waits call `interrupt::check` on every turn.
    fn wait(&mut self) -> Result<(), ChannelError>;
}

/// One end of a shared-memory channel: writes its messages into one region,
/// reads the peer's from the other.
pub struct ShmEnd<H: Handoff> {
    map: Arc<SharedMapping>,
    tx: usize,
    rx: usize,
    handoff: H,
    /// Objects to release when this end is dropped in the creating process.
    _cleanup: Vec<Cleanup>,
}

impl<H: Handoff> Endpoint for ShmEnd<H> {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.map.write_bytes(self.tx, msg);
        // The copy is plain memory; the fence orders it before the hand-off even
        // when the primitive is a system call the compiler knows nothing about.
        fence(Ordering::Release);
        self.handoff.notify()
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        self.handoff.wait()?;
        fence(Ordering::Acquire);
        self.map.read_bytes(self.rx, buf);
        Ok(())
    }
}

/// Builds the channel: the client writes region A and reads region B, the
/// server the other way round. `cleanup` is held by the client end.
pub fn channel<H: Handoff + 'static>(
    ctx: &OpenContext,
    map: Arc<SharedMapping>,
    client: H,
    server: H,
    cleanup: Vec<Cleanup>,
) -> Channel {
    let server = ShmEnd {
        map: Arc::clone(&map),
        tx: region_b(ctx.size),
        rx: REGION_A,
        handoff: server,
        _cleanup: Vec::new(),
    };
    let client = ShmEnd {
        map,
        tx: REGION_A,
        rx: region_b(ctx.size),
        handoff: client,
        _cleanup: cleanup,
    };
    Channel {
        client: Box::new(client),
        server: Some(Box::new(server)),
        note: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::channel::{Mechanism, PeerIdentity};
    use crate::engine::message::fill_pattern;
    use crate::engine::os::objects::ObjectNamer;
    use crate::mechanisms::{
        shm_condvar::ShmCondvar, shm_eventfd::ShmEventfd, shm_futex::ShmFutex,
        shm_posix_sem::ShmPosixSem, shm_spin::ShmSpin, shm_sysv_sem::ShmSysvSem, vm_copy::VmCopy,
        vm_read::VmRead,
    };
    use crate::sys::process::{getpid, gettid};

    const ROUNDS: u64 = 200;

    fn me() -> PeerIdentity {
        PeerIdentity {
            pid: getpid(),
            tid: gettid(),
        }
    }

    /// Echoes `ROUNDS` messages through a thread peer, checking every byte.
    fn echo_through_thread(mech: &dyn Mechanism, size: usize) {
        let names = ObjectNamer::new();
        let ctx = OpenContext {
            timeout: std::time::Duration::from_secs(5),
            size,
            names: &names,
        };
        let channel = mech.open(&ctx).unwrap();
        let mut client = channel.client;
        let mut server = channel.server.unwrap();
        let client_id = me();
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            server.attach(client_id).unwrap();
            tx.send(me()).unwrap();
            let mut buf = vec![0u8; size];
            for _ in 0..ROUNDS {
                server.recv(&mut buf).unwrap();
                server.send(&buf).unwrap();
            }
        });
        client.attach(rx.recv().unwrap()).unwrap();
        let (mut msg, mut back) = (vec![0u8; size], vec![0u8; size]);
        for seq in 0..ROUNDS {
            fill_pattern(&mut msg, seq);
            client.send(&msg).unwrap();
            client.recv(&mut back).unwrap();
            assert_eq!(msg, back, "{} size {size} message {seq}", mech.info().id);
        }
        handle.join().unwrap();
    }

    #[test]
    fn every_mechanism_echoes_through_a_thread() {
        let _keys = crate::engine::os::objects::sysv_test_lock();
        let mechs: [&dyn Mechanism; 8] = [
            &ShmPosixSem,
            &ShmSysvSem,
            &ShmFutex,
            &ShmEventfd,
            &ShmSpin,
            &VmCopy,
            &VmRead,
            &ShmCondvar,
        ];
        for mech in mechs {
            for size in [1, 8, 64, 4096, 65536 + 3] {
                echo_through_thread(mech, size);
            }
        }
    }

    #[test]
    fn sysv_sem_skips_a_taken_key() {
        let _keys = crate::engine::os::objects::sysv_test_lock();
        let names = ObjectNamer::new();
        // Squat on the next two keys, as stale sets of a dead run with this
        // pid would, so the mechanism must skip both to open.
        let [k1, k2] = names.upcoming_sysv_keys(2)[..] else {
            unreachable!()
        };
        let squatters = [k1, k2].map(|k| crate::sys::sysv::sem_create(k, 1).unwrap());
        let ctx = OpenContext {
            timeout: std::time::Duration::from_secs(5),
            size: 16,
            names: &names,
        };
        let opened = ShmSysvSem.open(&ctx);
        for id in squatters {
            crate::sys::sysv::remove("sem", id).unwrap();
        }
        drop(opened.unwrap());
    }

    #[test]
    fn pieces_do_not_overlap_and_are_aligned() {
        for size in [1, 64, 127, 128, 129, 4096, 65536] {
            let map = mapping(size).unwrap();
            assert_eq!(REGION_A % SLOT, 0);
            assert_eq!(region_b(size) % SLOT, 0);
            assert!(REGION_A + size <= region_b(size));
            assert!(region_b(size) + size <= map.len());
        }
    }
}
