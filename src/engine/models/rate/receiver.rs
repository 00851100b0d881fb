//! The receiver of a rate figure (the peer's [`PeerRole`], [`receiver_role`]):
//! it checks every message's number, compares the verify messages byte for
//! byte, and stores the clock at each timed message's arrival.
//!
//! Inside its loop: poisoning the number's bytes, the receive, one clock
//! read, checking the number and three stores into the shared mapping. No
//! allocation, formatting or locking.

use super::HEADER;
use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::message::{
    check_lent, check_seq, check_whole, fill_pattern, poison, poison_seq,
};
use crate::engine::models::region::Region;
use crate::engine::os::peer::{Fault, PeerRole, inject};
use crate::sys::clock::{monotonic_ns, thread_cpu_ns};
use crate::sys::mem::SharedMapping;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Marks an arrival slot the receiver wrote (a message never received
/// reads as missing, not as an arrival at 0).
const WRITTEN: u64 = 1 << 63;

// Words at the start of the shared mapping; the arrivals follow.
const W_LAST: usize = 0;
const W_TIMED: usize = 1;
const W_CPU0: usize = 2;
const W_CPU1: usize = 3;
const WORDS: usize = 4;

/// What the receiving peer shares with the sender: counts, its CPU time
/// and each timed message's arrival, in a shared mapping (a forked receiver
/// and the sender see the same memory), and the plan of numbers: `verify`
/// whole-content messages, `timed` timed ones, `verify` more.
#[derive(Clone)]
pub struct Receiver {
    map: Arc<SharedMapping>,
    /// Timed messages planned.
    pub timed: u64,
    /// Whole-content messages before the timed ones, and as many after.
    pub verify: u64,
    /// Numbers only grow, gaps are losses (datagrams), not failures.
    pub lossy: bool,
}

impl Receiver {
    /// Room for `timed` timed messages between `verify` whole-content
    /// messages before and after, every page touched now (before the peer
    /// forks) so that no page fault lands between two messages; `lossy`:
    /// count gaps as losses.
    pub fn new(timed: u64, verify: u64, lossy: bool) -> std::io::Result<Receiver> {
        let map = SharedMapping::new((WORDS + timed as usize) * 8)?;
        let mut off = 0;
        while off < map.len() {
            map.atomic_u64(off).store(0, Ordering::Relaxed);
            off += 4096;
        }
        Ok(Receiver {
            map: Arc::new(map),
            timed,
            verify,
            lossy,
        })
    }

    fn word(&self, w: usize) -> &AtomicU64 {
        self.map.atomic_u64(w * 8)
    }

    /// The number of the last message received (0: none yet). A channel
    /// that keeps order has delivered every message up to it that it will.
    pub fn last_received(&self) -> u64 {
        self.word(W_LAST).load(Ordering::Acquire)
    }

    /// Timed messages received.
    pub fn timed_received(&self) -> u64 {
        self.word(W_TIMED).load(Ordering::Acquire)
    }

    /// The receiver's CPU time from the end of the verify messages before
    /// to the first after, ns (0 until the first after has arrived).
    pub fn cpu_ns(&self) -> u64 {
        let (a, b) = (
            self.word(W_CPU0).load(Ordering::Acquire),
            self.word(W_CPU1).load(Ordering::Acquire),
        );
        b.saturating_sub(a)
    }

    /// Timed message `i`'s (from 0) arrival, `CLOCK_MONOTONIC` ns, if it arrived.
    pub fn arrival(&self, i: u64) -> Option<u64> {
        let v = self
            .map
            .atomic_u64((WORDS + i as usize) * 8)
            .load(Ordering::Relaxed);
        (v & WRITTEN != 0).then_some(v & !WRITTEN)
    }

    /// The number of timed message `i` (from 0).
    pub fn timed_seq(&self, i: u64) -> u64 {
        self.verify + 1 + i
    }

    /// The last number of the plan.
    pub fn last_seq(&self) -> u64 {
        2 * self.verify + self.timed
    }

    fn is_verify(&self, seq: u64) -> bool {
        seq <= self.verify || seq > self.verify + self.timed
    }
}

/// The peer's role in a rate figure: [`receive`] into `rx`.
pub fn receiver_role(rx: Receiver) -> PeerRole {
    PeerRole::new("rate receiver", move |ep, serving| {
        let mut region = Region::for_peer(serving);
        receive(ep, &mut region, &rx, serving.fault)
    })
}

fn cpu() -> Result<u64, ChannelError> {
    thread_cpu_ns().map_err(ChannelError::io("getrusage"))
}

/// The receiving loop, until stopped. The message expected next is the one
/// after the last (a lossy channel may skip numbers, never go back). Its
/// buffer is poisoned against it first: the number's bytes, or the whole
/// buffer when a verify message is due; an end that lends is read where the
/// message lies and the message given back once checked. The CPU clock is
/// read when the last verify message before is counted and when the first
/// after arrives, each before the count is published, so the sender's waits
/// cover them.
pub(super) fn receive(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    rx: &Receiver,
    fault: Option<Fault>,
) -> Result<(), ChannelError> {
    let mut expected = vec![0u8; region.next().len()];
    let mut last = 0u64;
    let mut timed = 0u64;
    let mut faults = 0u64;
    let first_after = rx.verify + rx.timed + 1;
    let lend = ep.lends();
    loop {
        let seq = last + 1;
        let whole = rx.is_verify(seq);
        if whole {
            fill_pattern(&mut expected, seq);
        }
        let buf: &mut [u8] = if lend {
            // Read where it lies and given back below: no copy the
            // mechanism does not make. Lent memory holds no poison; the
            // number and the content are checked all the same.
            ep.lend()?
        } else {
            let buf = region.next();
            if whole {
                poison(buf, &expected);
            } else {
                poison_seq(buf, seq, HEADER);
            }
            ep.recv(buf)?;
            buf
        };
        let now = monotonic_ns();
        if seq > rx.last_seq() {
            return Err(ChannelError::Check(format!(
                "a message after the last of the {} planned",
                rx.last_seq()
            )));
        }
        if let Some(f) = fault {
            faults += 1;
            inject(f, faults, buf)?;
        }
        let got = read_seq(buf);
        let got = if rx.lossy && got > seq && got <= rx.last_seq() {
            got
        } else {
            if lend {
                check_lent(buf, seq, None, seq, HEADER)?;
            } else {
                check_seq(buf, seq, HEADER)?;
            }
            seq
        };
        if rx.is_verify(got) {
            if got != seq {
                fill_pattern(&mut expected, got);
            }
            check_whole(buf, &expected, &expected, got)?;
            if lend {
                ep.release()?;
            }
            if got >= first_after && last < first_after {
                rx.word(W_CPU1).store(cpu()?, Ordering::Release);
            }
        } else {
            if lend {
                ep.release()?;
            }
            let i = got - rx.verify - 1;
            rx.map
                .atomic_u64((WORDS + i as usize) * 8)
                .store(WRITTEN | now, Ordering::Relaxed);
            timed += 1;
            rx.word(W_TIMED).store(timed, Ordering::Relaxed);
        }
        if got == rx.verify {
            rx.word(W_CPU0).store(cpu()?, Ordering::Release);
        }
        last = got;
        // Release: the arrival and the counts are visible once the number is.
        rx.word(W_LAST).store(last, Ordering::Release);
    }
}

#[inline(always)]
fn read_seq(buf: &[u8]) -> u64 {
    let mut b = [0u8; HEADER];
    b.copy_from_slice(&buf[..HEADER]);
    u64::from_le_bytes(b)
}
