//! What the verify rounds' whole-content check costs per byte on this
//! machine: [`message::check_whole`] timed as the engine runs it, on a
//! received buffer of S bytes compared against the expected reply.
//!
//! Why it is measured: the ping-pong and one-way models compare every byte
//! of a message only in their verify rounds, before and after the timed
//! samples; inside a timed loop only the 8-byte sequence number is checked.
//! A reader of the per-byte cost model can then tell what a mechanism's
//! per-byte cost is from what the check would have added, had it been timed.
//!
//! How: the buffers are filled as a verify round fills them ([`fill_pattern`],
//! the reply [`echo_transform`]ed, the received buffer equal to the reply, so
//! the comparison runs to the end), once, before any timing; each is checked
//! once at each size to warm it into the caches. Then, [`REPETITIONS`] times,
//! [`CALLS`] back-to-back checks of the first [`SMALL`] bytes and [`CALLS`] of
//! the first [`LARGE`] bytes are each timed as one block (the order of the two
//! alternating between repetitions). A repetition's cost per byte is the slope
//! between its two blocks, (T_large − T_small) / (CALLS × (LARGE − SMALL)): both
//! blocks hold the same number of calls and the same two clock reads, so the
//! clock reads, the loop and each call's fixed cost (entering the function,
//! its return) cancel, and only the cost of the bytes remains. The figure is
//! the median of the repetitions' slopes (interference only adds time, to
//! one block or the other), never below 0.
//!
//! Inside the timed blocks: the calls alone, their arguments and result
//! passed through [`black_box`] so that none is hoisted or removed. No
//! allocation, no formatting. The whole measurement takes a few ms.

use crate::engine::message::{check_whole, echo_transform, fill_pattern, seq_len};
use crate::sys::clock::monotonic_ns;
use std::hint::black_box;

/// The smaller message compared, bytes.
pub const SMALL: usize = 4 << 10;
/// The larger message compared, bytes.
pub const LARGE: usize = 256 << 10;
// The slope divides by their difference.
const _: () = assert!(SMALL < LARGE);

/// Checks timed back to back in one block.
pub const CALLS: usize = 4;
/// Pairs of blocks timed; the figure is the median of their slopes.
pub const REPETITIONS: usize = 11;

/// The cost of the whole-content check, as measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VerifyCost {
    /// Cost of comparing one byte, ns: the median slope between the sizes.
    pub ns_per_byte: f64,
    /// The two message sizes compared, bytes ([`SMALL`], [`LARGE`]).
    pub sizes_bytes: [usize; 2],
    /// Checks timed in each block ([`CALLS`]).
    pub calls: usize,
    /// Pairs of blocks timed ([`REPETITIONS`]).
    pub repetitions: usize,
    /// What the measurement took in all, buffers and warming included, ns.
    pub took_ns: u64,
}

/// Measures the cost per byte of [`check_whole`] on this machine (module
/// documentation). Runs on the calling thread, wherever it is placed.
pub fn measure() -> VerifyCost {
    let start = monotonic_ns();
    let seq = 0x5EED_u64;
    let mut sent = vec![0u8; LARGE];
    fill_pattern(&mut sent, seq);
    let mut want = sent.clone();
    let k = seq_len(&want);
    echo_transform(&mut want, k);
    // What a correct receive leaves: the reply expected, every byte of it.
    let received = want.clone();
    let check = |size: usize| {
        check_whole(
            black_box(&received[..size]),
            black_box(&want[..size]),
            black_box(&sent[..size]),
            black_box(seq),
        )
    };
    // Warm: every byte of the three buffers read once at each size.
    for size in [SMALL, LARGE] {
        let ok = black_box(check(size).is_ok());
        debug_assert!(ok, "the buffers are built to match");
    }
    let block = |size: usize| -> u64 {
        let t0 = monotonic_ns();
        for _ in 0..CALLS {
            black_box(check(size).is_ok());
        }
        monotonic_ns() - t0
    };
    let mut slopes = [0.0f64; REPETITIONS];
    for (r, slope) in slopes.iter_mut().enumerate() {
        let (small, large) = if r % 2 == 0 {
            let s = block(SMALL);
            (s, block(LARGE))
        } else {
            let l = block(LARGE);
            (block(SMALL), l)
        };
        *slope = slope_of(small, large);
    }
    VerifyCost {
        ns_per_byte: median(&mut slopes).max(0.0),
        sizes_bytes: [SMALL, LARGE],
        calls: CALLS,
        repetitions: REPETITIONS,
        took_ns: monotonic_ns() - start,
    }
}

/// A repetition's cost per byte from its two blocks' times, ns: the fixed
/// costs, the same in both blocks, cancel in the difference.
fn slope_of(small_ns: u64, large_ns: u64) -> f64 {
    (large_ns as f64 - small_ns as f64) / (CALLS * (LARGE - SMALL)) as f64
}

/// The median of `values` (sorted in place).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_is_a_finite_figure_with_its_sizes_and_counts() {
        let c = measure();
        assert!(c.ns_per_byte.is_finite(), "{c:?}");
        assert!(c.ns_per_byte >= 0.0, "{c:?}");
        assert_eq!(c.sizes_bytes, [SMALL, LARGE]);
        assert_eq!((c.calls, c.repetitions), (CALLS, REPETITIONS));
    }

    #[test]
    fn the_slope_cancels_what_both_blocks_share() {
        // 1 ns per byte plus 500 ns fixed in each block.
        let small = 500 + (CALLS * SMALL) as u64;
        let large = 500 + (CALLS * LARGE) as u64;
        assert_eq!(slope_of(small, large), 1.0);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
