//! What every message carries and how it is checked: the sequence number
//! at its start, what the peer does to a message it returns, the poison a
//! receive buffer holds until a message overwrites it, the fill pattern of
//! the verify phases, and the cost of the clock read that stamps it.
//!
//! Why a returned message is transformed: a peer that echoed bytes
//! unchanged could not be told from no peer at all. A receive that writes
//! nothing leaves the client's own message in its buffer, and a channel
//! wired back to its sender (swapped descriptors, one shared region for
//! both directions) hands the client its own message: both would pass a
//! check of "what came back is what was sent". So the peer complements the
//! sequence number's bytes before returning a message ([`echo_transform`]),
//! and the client expects the complement ([`check_echo`]). A byte never
//! equals its complement, so the client's own message, wherever it comes
//! from, fails on every byte checked; the stamp the client writes before
//! sending is itself the poison of its receive buffer.

use crate::engine::error::ChannelError;
use crate::sys::clock::monotonic_ns;

/// Bytes of the sequence number carried at the start of each message: 8,
/// or the whole message when it is shorter.
#[inline(always)]
pub fn seq_len(buf: &[u8]) -> usize {
    buf.len().min(8)
}

/// Writes the low `k` bytes of `seq` (little-endian) at the start of `buf`.
#[inline(always)]
pub fn stamp(buf: &mut [u8], seq: u64, k: usize) {
    buf[..k].copy_from_slice(&seq.to_le_bytes()[..k]);
}

/// Poisons the first `k` bytes of a receive buffer against message `seq`:
/// the complement of its number, which a receive that writes nothing
/// leaves for [`check_seq`] to report.
#[inline(always)]
pub fn poison_seq(buf: &mut [u8], seq: u64, k: usize) {
    stamp(buf, !seq, k);
}

/// Whether the first `k` bytes still hold the poison of [`poison_seq`] for
/// message `seq` (never true of an empty message).
#[inline(always)]
pub fn still_poisoned(buf: &[u8], seq: u64, k: usize) -> bool {
    k > 0 && buf[..k] == (!seq).to_le_bytes()[..k]
}

/// Checks that `buf` starts with the low `k` bytes of `seq`; the poison of
/// [`poison_seq`] still there is reported as nothing received.
#[inline(always)]
pub fn check_seq(buf: &[u8], seq: u64, k: usize) -> Result<(), ChannelError> {
    let want = seq.to_le_bytes();
    if buf[..k] != want[..k] {
        return Err(not_received(buf, seq, k));
    }
    Ok(())
}

#[cold]
fn not_received(buf: &[u8], seq: u64, k: usize) -> ChannelError {
    if still_poisoned(buf, seq, k) {
        ChannelError::NothingReceived { seq }
    } else {
        corrupt(buf, &seq.to_le_bytes(), seq, k)
    }
}

/// What the peer does to a message before it returns it: complements its
/// first `k` bytes, where the sequence number (or the one-way header) is.
/// One 8-byte load and store for every message of 8 bytes or more.
#[inline(always)]
pub fn echo_transform(buf: &mut [u8], k: usize) {
    if k == 8 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&buf[..8]);
        buf[..8].copy_from_slice(&(!u64::from_ne_bytes(w)).to_ne_bytes());
    } else {
        for b in &mut buf[..k] {
            *b = !*b;
        }
    }
}

/// Checks that `buf` is what the peer returns for message `seq` stamped in
/// its first `k` bytes: the complement of the stamp. The client's own
/// stamp coming back is reported as such ([`ChannelError::NotReturned`]).
#[inline(always)]
pub fn check_echo(buf: &[u8], seq: u64, k: usize) -> Result<(), ChannelError> {
    let want = (!seq).to_le_bytes();
    if buf[..k] != want[..k] {
        return Err(not_echoed(buf, seq, k));
    }
    Ok(())
}

#[cold]
fn not_echoed(buf: &[u8], seq: u64, k: usize) -> ChannelError {
    if k > 0 && buf[..k] == seq.to_le_bytes()[..k] {
        ChannelError::NotReturned { seq }
    } else {
        corrupt(buf, &(!seq).to_le_bytes(), seq, k)
    }
}

/// Checks the number of a message lent in place ([`crate::engine::channel::Endpoint::lend`]):
/// its first `k` bytes must be `want` (the low bytes, little-endian); `own`
/// is the number the receiver itself sent, whose coming back is reported as
/// such. Anything else is memory the message never reached.
#[inline(always)]
pub fn check_lent(
    buf: &[u8],
    want: u64,
    own: Option<u64>,
    seq: u64,
    k: usize,
) -> Result<(), ChannelError> {
    if buf[..k] != want.to_le_bytes()[..k] {
        return Err(not_lent(buf, own, seq, k));
    }
    Ok(())
}

/// Receives the reply to message `seq` lent in place through `ep` and
/// checks it whole: first its number (its first `k` bytes must be the
/// complement of `number`, the one sent: lent memory holds no poison),
/// then every byte against `want` ([`check_whole`], `sent` being what was
/// sent), then gives it back. The verify rounds' receive of an end that
/// lends.
pub fn receive_lent_whole(
    ep: &mut dyn crate::engine::channel::Endpoint,
    number: u64,
    k: usize,
    want: &[u8],
    sent: &[u8],
    seq: u64,
) -> Result<(), ChannelError> {
    let got = ep.lend()?;
    check_lent(got, !number, Some(number), seq, k)?;
    check_whole(got, want, sent, seq)?;
    ep.release()
}

#[cold]
fn not_lent(buf: &[u8], own: Option<u64>, seq: u64, k: usize) -> ChannelError {
    if own.is_some_and(|own| k > 0 && buf[..k] == own.to_le_bytes()[..k]) {
        return ChannelError::NotReturned { seq };
    }
    let mut got = [0u8; 8];
    got[..k].copy_from_slice(&buf[..k]);
    ChannelError::NotLent {
        seq,
        got: u64::from_le_bytes(got),
    }
}

#[cold]
fn corrupt(buf: &[u8], want: &[u8], seq: u64, k: usize) -> ChannelError {
    let offset = (0..k).find(|&i| buf[i] != want[i]).unwrap_or(0);
    ChannelError::Corrupt { seq, offset }
}

/// Poisons a receive buffer before a whole-content check: every byte the
/// complement of what the receive must bring (`want`), so that any byte the
/// receive does not write fails the comparison.
pub fn poison(buf: &mut [u8], want: &[u8]) {
    for (b, w) in buf.iter_mut().zip(want) {
        *b = !*w;
    }
}

/// Compares a whole received message with `want`. `sent` is what the
/// client sent (its own message coming back is reported as such); the
/// buffer was poisoned against `want` before the receive ([`poison`]).
pub fn check_whole(buf: &[u8], want: &[u8], sent: &[u8], seq: u64) -> Result<(), ChannelError> {
    // One memcmp for a message that is whole; the byte loop only finds
    // where one that is not goes wrong.
    if buf == want {
        return Ok(());
    }
    let Some(offset) = buf.iter().zip(want).position(|(a, b)| a != b) else {
        return Ok(());
    };
    if buf == sent {
        return Err(ChannelError::NotReturned { seq });
    }
    if buf.iter().zip(want).all(|(a, b)| *a == !*b) {
        return Err(ChannelError::NothingReceived { seq });
    }
    Err(ChannelError::Corrupt { seq, offset })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_echo_transform_is_caught_missing_at_every_size() {
        for size in [1usize, 3, 4, 7, 8, 64] {
            let k = seq_len(&vec![0u8; size]);
            let mut buf = vec![0u8; size];
            stamp(&mut buf, 0x1234_5678_9ABC_DEF0, k);
            // The client's own message (a loopback, or a receive that wrote nothing).
            let err = check_echo(&buf, 0x1234_5678_9ABC_DEF0, k).unwrap_err();
            assert!(
                matches!(err, ChannelError::NotReturned { .. }),
                "{size}: {err}"
            );
            echo_transform(&mut buf, k);
            check_echo(&buf, 0x1234_5678_9ABC_DEF0, k).unwrap();
            // Another message's reply.
            let err = check_echo(&buf, 0x1234_5678_9ABC_DEF1, k).unwrap_err();
            assert!(matches!(err, ChannelError::Corrupt { .. }), "{size}: {err}");
        }
    }

    #[test]
    fn a_whole_check_tells_nothing_received_from_own_message_and_damage() {
        let mut sent = vec![0u8; 40];
        fill_pattern(&mut sent, 9);
        let mut want = sent.clone();
        echo_transform(&mut want, 8);
        let mut buf = sent.clone();
        poison(&mut buf, &want);
        assert!(matches!(
            check_whole(&buf, &want, &sent, 9),
            Err(ChannelError::NothingReceived { seq: 9 })
        ));
        assert!(matches!(
            check_whole(&sent, &want, &sent, 9),
            Err(ChannelError::NotReturned { seq: 9 })
        ));
        let mut damaged = want.clone();
        damaged[30] ^= 1;
        assert!(matches!(
            check_whole(&damaged, &want, &sent, 9),
            Err(ChannelError::Corrupt { seq: 9, offset: 30 })
        ));
        check_whole(&want, &want, &sent, 9).unwrap();
    }
}
