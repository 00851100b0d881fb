//! What every message carries and how it is checked: the sequence number
//! at its start, the fill pattern of the verify phases, and the cost of the
//! clock read that stamps it.

use crate::engine::error::ChannelError;
use crate::sys::clock::monotonic_ns;

/// Bytes of the sequence number carried at the start of each message.
#[inline(always)]
pub fn seq_len(buf: &[u8]) -> usize {
    buf.len().min(8)
}

#[inline(always)]
pub fn stamp(buf: &mut [u8], seq: u64, k: usize) {
    buf[..k].copy_from_slice(&seq.to_le_bytes()[..k]);
}

#[inline(always)]
pub fn check_seq(buf: &[u8], seq: u64, k: usize) -> Result<(), ChannelError> {
    let want = seq.to_le_bytes();
    if buf[..k] != want[..k] {
        let offset = (0..k).find(|&i| buf[i] != want[i]).unwrap_or(0);
        return Err(ChannelError::Corrupt { seq, offset });
    }
    Ok(())
}

/// Fills a message with a pattern unique to `seq`, sequence number first.
pub fn fill_pattern(buf: &mut [u8], seq: u64) {
    let k = seq_len(buf);
    let salt = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes();
    for (i, b) in buf.iter_mut().enumerate().skip(k) {
        *b = salt[i % 8] ^ (i as u8).wrapping_mul(31) ^ ((i >> 8) as u8);
    }
    stamp(buf, seq, k);
}

/// Cost of one clock read: median of back-to-back reads.
pub fn clock_overhead_ns() -> f64 {
    let mut deltas: Vec<f64> = (0..2001)
        .map(|_| {
            let a = monotonic_ns();
            let b = monotonic_ns();
            (b - a) as f64
        })
        .collect();
    deltas.sort_by(f64::total_cmp);
    deltas[deltas.len() / 2]
}
