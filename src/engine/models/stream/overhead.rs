//! Each side's loop overhead per message, timed against an endpoint that
//! does nothing but what the loop needs: each is subtracted from its side's
//! CPU per message, and the one of the side that bounds the stream from the
//! time per message.

use super::board::{BOARD_LEN, Board};
use super::sender::send_until;
use super::sink::{Faults, lossy_loop, queued_loop};
use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::message::{seq_len, stamp};
use crate::engine::models::region::Region;
use crate::engine::os::peer::BoardArea;
use crate::sys::clock::monotonic_ns;
use crate::sys::mem::SharedMapping;
use std::sync::atomic::{AtomicU64, Ordering};

/// An endpoint whose `recv` only stamps the next sequence number: the
/// receiver's loop overhead is timed against it.
struct Stamper {
    next: u64,
    k: usize,
}

impl Endpoint for Stamper {
    fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
        Ok(())
    }
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        stamp(buf, self.next, self.k);
        self.next += 1;
        Ok(())
    }
}

/// A [`Stamper`] that lends: its loan is its own buffer with the next
/// number stamped in it, and giving it back does nothing; the loop overhead
/// of a receiver whose end lends is timed against it.
struct LendingStamper {
    stamper: Stamper,
    buf: Vec<u8>,
}

impl Endpoint for LendingStamper {
    fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
        Ok(())
    }
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        self.stamper.recv(buf)
    }
    fn lends(&self) -> bool {
        true
    }
    fn lend(&mut self) -> Result<&mut [u8], ChannelError> {
        self.stamper.recv(&mut self.buf)?;
        Ok(&mut self.buf)
    }
    fn release(&mut self) -> Result<(), ChannelError> {
        Ok(())
    }
}

/// The receiver's loop overhead per message: its loop over `N` messages
/// against a [`Stamper`] (a [`LendingStamper`] where `lends`: the loop then
/// reads in place), the minimum of several runs.
pub(super) fn receiver_loop_ns(
    lossy: bool,
    lends: bool,
    region: &mut Region,
) -> Result<f64, ChannelError> {
    const N: u64 = 100_000;
    let size = region.next().len();
    let k = if lossy { 8 } else { seq_len(region.next()) };
    let map = SharedMapping::new_private(BOARD_LEN).map_err(ChannelError::io("mmap"))?;
    let board = Board::new(BoardArea {
        map: &map,
        offset: 0,
        len: BOARD_LEN,
    });
    board.boundary(0).store(1, Ordering::Relaxed);
    board.boundary(1).store(N + 1, Ordering::Relaxed);
    let mut expected = vec![0u8; size];
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let mut stamper = Stamper { next: 1, k };
        let mut lending = LendingStamper {
            stamper: Stamper { next: 1, k },
            buf: vec![0u8; size],
        };
        let mut faults = Faults {
            fault: None,
            count: 0,
        };
        let mut stamps = [0u64; 2];
        let mut counts = [0u64; 1];
        let ep: &mut dyn Endpoint = if lends && !lossy {
            std::hint::black_box(&mut lending)
        } else {
            std::hint::black_box(&mut stamper)
        };
        if lossy {
            lossy_loop(
                ep,
                region,
                &mut faults,
                &board,
                0,
                &mut expected,
                &mut stamps,
                &mut counts,
            )?;
        } else {
            queued_loop(ep, region, &mut faults, &board, 1, &mut stamps)?;
        }
        best = best.min((stamps[1] - stamps[0]) as f64 / N as f64);
    }
    Ok(best)
}

/// The sender's loop overhead per message: its loop against an endpoint
/// that does nothing for about 2 ms, the minimum of several runs.
pub(super) fn sender_loop_ns(region: &mut Region) -> Result<f64, ChannelError> {
    struct Null;
    impl Endpoint for Null {
        fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
            Ok(())
        }
        fn recv(&mut self, _buf: &mut [u8]) -> Result<(), ChannelError> {
            Ok(())
        }
    }
    let k = seq_len(region.next());
    let mark = AtomicU64::new(0);
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let mut null = Null;
        let ep: &mut dyn Endpoint = std::hint::black_box(&mut null);
        let mut seq = 1;
        let start = monotonic_ns();
        send_until(ep, region, k, &mut seq, start + 2_000_000, &mark)?;
        best = best.min((monotonic_ns() - start) as f64 / (seq - 1) as f64);
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_overheads_are_measured() {
        for lossy in [false, true] {
            for lends in [false, true] {
                let ns = receiver_loop_ns(lossy, lends, &mut Region::warm(64)).unwrap();
                assert!(ns.is_finite() && ns >= 0.0);
            }
        }
        let ns = sender_loop_ns(&mut Region::warm(64)).unwrap();
        assert!(ns.is_finite() && ns >= 0.0);
    }
}
