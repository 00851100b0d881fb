//! The loops of a remote figure that the engine's models do not have,
//! run by the agent (its side of a stream or of a one-way figure) or by the
//! client (the receiving side of a stream from the agent): a sink, a
//! source, a one-way receiver and its sender. Every message carries its
//! sequence number and the fill pattern of that number
//! ([`fill_pattern`]); what a side checks is counted in the [`Report`].

use crate::engine::channel::ChannelError;
use crate::engine::message::{check_whole, fill_pattern, poison};
use crate::remote::data::end::DataEnd;
use crate::remote::task::Report;
use crate::sys::clock::monotonic_ns;
use std::time::Duration;

/// Bytes of a stream message's sequence number: the smallest stream
/// message.
pub const STREAM_MIN_SIZE: usize = 8;

/// After the first `verify` messages, one message in this many is
/// compared byte for byte (every message's sequence number is checked).
pub const SPOT_CHECK: u64 = 16;

/// Bytes of a one-way acknowledgement: the sequence number complemented.
pub const ACK: usize = 8;

/// Refuses a stream of messages too small for its sequence number.
fn stream_size(size: usize) -> Result<(), ChannelError> {
    if size < STREAM_MIN_SIZE {
        return Err(ChannelError::Check(format!(
            "a {size}-byte message cannot carry the stream's {STREAM_MIN_SIZE}-byte sequence number"
        )));
    }
    Ok(())
}

/// This thread's CPU time, ns (0 where the clock cannot be read: the
/// figure then has no CPU share, never a wrong one).
fn thread_cpu() -> u64 {
    crate::sys::clock::thread_cpu_ns().unwrap_or(0)
}

fn seq_of(buf: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&buf[..8]);
    u64::from_le_bytes(w)
}

/// Receives a stream until its end (TCP: the sender closed; a stop request
/// or the end's soft deadline): checks every message's sequence number
/// (a UDP gap is counted as lost, any other disorder fails) and the whole
/// content of the first `verify` and then of one in [`SPOT_CHECK`]; in each
/// `window` of this side's clock (from the first message on), counts the
/// messages and times its first receipt to the next window's first: the
/// messages of a window all arrived in that span, so its time per message
/// is unbiased however many messages one TCP segment brings at once.
pub fn sink(
    end: &mut DataEnd,
    size: usize,
    window: Duration,
    verify: u64,
    report: &mut Report,
) -> Result<(), ChannelError> {
    stream_size(size)?;
    let lossy = end.lossy();
    let mut buf = vec![0u8; size];
    let mut want = vec![0u8; size];
    let window_ns = window.as_nanos() as u64;
    report.window_ns = window_ns;
    let mut last = 0u64;
    let mut boundary = 0u64;
    // Messages in the current window and its first receipt.
    let (mut in_window, mut window_first) = (0u64, 0u64);
    let (mut first_ns, mut last_ns) = (0u64, 0u64);
    let cpu0 = thread_cpu();
    let outcome = loop {
        match end.recv_exact(&mut buf) {
            Ok(true) => {}
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
        let now = monotonic_ns();
        let seq = seq_of(&buf);
        if seq <= last || (!lossy && seq != last + 1) {
            break Err(ChannelError::Sequence {
                expected: last + 1,
                got: seq,
            });
        }
        report.lost += seq - last - 1;
        last = seq;
        if report.messages < verify || seq.is_multiple_of(SPOT_CHECK) {
            fill_pattern(&mut want, seq);
            if let Err(e) = check_whole(&buf, &want, &want, seq) {
                break Err(e);
            }
            report.verified += 1;
        }
        if boundary == 0 {
            boundary = now + window_ns;
            first_ns = now;
        }
        if now >= boundary {
            // The window ends where the next one's first message arrives;
            // windows with no message are not kept (a stall lengthens the
            // window before it).
            report.windows.push([in_window, now - window_first]);
            in_window = 0;
            while now >= boundary {
                boundary += window_ns;
            }
        }
        if in_window == 0 {
            window_first = now;
        }
        last_ns = now;
        in_window += 1;
        report.messages += 1;
        report.bytes += size as u64;
        // Poisoned so that a receive writing nothing fails the next check.
        poison(&mut buf[..8], &(seq + 1).to_le_bytes());
    };
    report.span_ns = last_ns - first_ns;
    report.cpu_ns = thread_cpu() - cpu0;
    match outcome {
        Err(ChannelError::Stopped) | Err(ChannelError::Closed) => Ok(()),
        other => other,
    }
}

/// Sends a stream back to back for `duration` (or until stopped), every
/// message numbered and filled with its pattern; then ends the sending
/// side (TCP), so the receiver reads the end.
pub fn source(
    end: &mut DataEnd,
    size: usize,
    duration: Duration,
    report: &mut Report,
) -> Result<(), ChannelError> {
    stream_size(size)?;
    let mut buf = vec![0u8; size];
    let start = monotonic_ns();
    let until = start + duration.as_nanos() as u64;
    let cpu0 = thread_cpu();
    let mut seq = 0u64;
    let outcome = loop {
        seq += 1;
        fill_pattern(&mut buf, seq);
        if let Err(e) = end.send_all(&buf) {
            break Err(e);
        }
        report.messages += 1;
        report.bytes += size as u64;
        // The clock and the stop pipe every 16 messages: a stream of small
        // messages is not slowed by looking.
        if seq.is_multiple_of(16) {
            if monotonic_ns() >= until {
                break Ok(());
            }
            if let Err(e) = end.should_stop() {
                break Err(e);
            }
        }
    };
    end.finish_sending();
    report.span_ns = monotonic_ns() - start;
    report.cpu_ns = thread_cpu() - cpu0;
    match outcome {
        Err(ChannelError::Stopped) => Ok(()),
        other => other,
    }
}

/// The agent's side of a one-way figure: receives each message, notes this
/// side's clock at its receipt (in `report.stamps`, by sequence number),
/// checks it whole, and acknowledges it with its number complemented;
/// until the client closes or finishes. At most `messages` are kept.
pub fn receiver(
    end: &mut DataEnd,
    size: usize,
    messages: u64,
    report: &mut Report,
) -> Result<(), ChannelError> {
    if size < ACK {
        return Err(ChannelError::Check(format!(
            "a {size}-byte message cannot carry the {ACK}-byte sequence number"
        )));
    }
    let mut buf = vec![0u8; size];
    let mut want = vec![0u8; size];
    report.stamps.reserve(messages.min(1 << 20) as usize);
    let outcome = loop {
        let expected = report.messages + 1;
        poison(&mut buf[..8], &expected.to_le_bytes());
        match end.recv_exact(&mut buf) {
            Ok(true) => {}
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
        let at = monotonic_ns();
        let seq = seq_of(&buf);
        if seq != expected {
            break Err(ChannelError::Sequence { expected, got: seq });
        }
        fill_pattern(&mut want, seq);
        if let Err(e) = check_whole(&buf, &want, &want, seq) {
            break Err(e);
        }
        if report.messages >= messages {
            break Err(ChannelError::Check(format!(
                "the client sent more than the {messages} messages it planned"
            )));
        }
        report.stamps.push(at);
        report.messages += 1;
        report.bytes += size as u64;
        report.verified += 1;
        if let Err(e) = end.send_all(&(!seq).to_le_bytes()) {
            break Err(e);
        }
    };
    match outcome {
        Err(ChannelError::Stopped) | Err(ChannelError::Closed) => Ok(()),
        other => other,
    }
}

/// The client's side of a one-way figure: sends message `seq`, filled with
/// its pattern, and waits for its acknowledgement; the client's clock just
/// before the send.
pub fn send_one(end: &mut DataEnd, buf: &mut [u8], seq: u64) -> Result<u64, ChannelError> {
    fill_pattern(buf, seq);
    let at = monotonic_ns();
    end.send_all(buf)?;
    let mut ack = [0u8; ACK];
    if !end.recv_exact(&mut ack)? {
        return Err(ChannelError::Closed);
    }
    if u64::from_le_bytes(ack) != !seq {
        return Err(ChannelError::Check(format!(
            "message {seq}: the acknowledgement carried {:#x}, not the complement of {seq}",
            u64::from_le_bytes(ack)
        )));
    }
    Ok(at)
}
