//! The sender's timed loop: messages stamped with their sequence number,
//! sent back to back until a deadline, the last one's number marked on the
//! board before it is sent.

use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::message::stamp;
use crate::engine::models::region::Region;
use crate::sys::clock::monotonic_ns;
use std::sync::atomic::{AtomicU64, Ordering};

/// The sender reads the clock once per this many messages.
const CLOCK_EVERY: u64 = 32;

/// Sends stamped messages back to back until `deadline` has passed (looked
/// at every [`CLOCK_EVERY`] messages); the last one's number is written to
/// `mark` before it is sent. `seq` is the next number to send.
#[inline(never)]
pub(super) fn send_until(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    k: usize,
    seq: &mut u64,
    deadline: u64,
    mark: &AtomicU64,
) -> Result<(), ChannelError> {
    loop {
        let s = *seq;
        *seq += 1;
        let buf = region.next();
        stamp(buf, s, k);
        if s.is_multiple_of(CLOCK_EVERY) && monotonic_ns() >= deadline {
            mark.store(s, Ordering::Release);
            return ep.send(buf);
        }
        ep.send(buf)?;
    }
}
