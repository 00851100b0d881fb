//! `shm-spin`: shared memory + memcpy, hand-offs by busy-waiting on a sequence
//! counter: no system call at all, the hardware floor of cross-CPU messaging.

use super::shm_common::{self, Handoff, TO_CLIENT_WORD, TO_SERVER_WORD};
use super::shm_futex::check_ahead;
use super::shm_ring::{self, Doorbell};
use crate::engine::channel::*;
use crate::engine::os::interrupt;
use crate::sys::mem::SharedMapping;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Shared memory with a spun-on sequence counter per direction.
pub struct ShmSpin;

/// Stores the next count in one word; spins until the other one moves.
struct SpinHandoff {
    map: Arc<SharedMapping>,
    post: usize,
    wait: usize,
    sent: u32,
    seen: u32,
}

impl SpinHandoff {
    fn new(map: &Arc<SharedMapping>, post: usize, wait: usize) -> Self {
        SpinHandoff {
            map: Arc::clone(map),
            post,
            wait,
            sent: 0,
            seen: 0,
        }
    }
}

impl Handoff for SpinHandoff {
    #[inline]
    fn notify(&mut self) -> Result<(), ChannelError> {
        self.sent = self.sent.wrapping_add(1);
        self.map
            .atomic_u32(self.post)
            .store(self.sent, Ordering::Release);
        Ok(())
    }

    #[inline]
    fn wait(&mut self) -> Result<(), ChannelError> {
        let word = self.map.atomic_u32(self.wait);
        loop {
            let v = word.load(Ordering::Acquire);
            if v != self.seen {
                check_ahead(self.seen, v, u32::MAX)?;
                self.seen = self.seen.wrapping_add(1);
                return Ok(());
            }
            // Nothing can interrupt a spin but this check: stop requests, the
            // watchdog and a dead peer all end the wait here.
            interrupt::check()?;
            std::hint::spin_loop();
        }
    }
}

/// A stream ring's sides busy-wait on each other's counters: no bell.
struct SpinBell;

impl Doorbell for SpinBell {
    fn spins(&self) -> bool {
        true
    }

    fn ring(&mut self) -> Result<(), ChannelError> {
        Ok(())
    }

    fn sleep(&mut self, _armed: u32) -> Result<(), ChannelError> {
        interrupt::check()
    }
}

impl Mechanism for ShmSpin {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "shm-spin",
            summary: "shared memory + memcpy, hand-off by busy-waiting on a flag (no system call)",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: true,
        }
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_common::mapping(ctx.size)?;
        let client = SpinHandoff::new(&map, TO_SERVER_WORD, TO_CLIENT_WORD);
        let server = SpinHandoff::new(&map, TO_CLIENT_WORD, TO_SERVER_WORD);
        Ok(shm_common::channel(ctx, map, client, server, Vec::new()))
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open_stream(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_ring::mapping(ctx.size)?;
        Ok(shm_ring::channel(ctx, map, SpinBell, SpinBell, Vec::new()))
    }
}
