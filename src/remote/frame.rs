//! Control frames: a 4-byte big-endian length, then that many bytes of JSON
//! (one message of [`protocol`](super::protocol)).
//!
//! A length of 0 or above [`MAX_FRAME`] is an error as soon as the 4 bytes
//! are read: the payload buffer grows only with the bytes that actually
//! arrive, so a forged length never allocates. Every read and write has a
//! deadline, kept with `poll` (never a blocking call that `SA_RESTART`
//! could hide from a stop request).

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Instant;

/// The largest payload accepted, bytes. A figure's report can carry one
/// stamp per message (one-way receiver): 16 MiB holds some 800,000 of them,
/// which the 1 MiB first planned did not (about 55,000).
pub const MAX_FRAME: usize = 16 << 20;

/// Why a frame could not be read, written or decoded.
#[derive(Debug)]
pub enum FrameError {
    /// The peer closed the connection cleanly between frames.
    Closed,
    /// The peer closed the connection in the middle of a frame.
    Truncated,
    /// The deadline passed.
    Timeout,
    /// The length prefix was 0 or above [`MAX_FRAME`].
    Length(usize),
    /// The payload is not a message of the protocol.
    Decode(String),
    /// The connection failed.
    Io(io::Error),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Closed => write!(f, "closed the connection"),
            FrameError::Truncated => write!(f, "closed the connection in the middle of a message"),
            FrameError::Timeout => write!(f, "did not answer in time"),
            FrameError::Length(n) => write!(
                f,
                "sent a frame of {n} bytes (a control frame has 1 to {MAX_FRAME} bytes)"
            ),
            FrameError::Decode(e) => write!(f, "sent a message this ipcmark cannot read ({e})"),
            FrameError::Io(e) => write!(f, "connection failed: {e}"),
        }
    }
}

/// Checks a length prefix.
pub fn check_length(prefix: [u8; 4]) -> Result<usize, FrameError> {
    let n = u32::from_be_bytes(prefix) as usize;
    if n == 0 || n > MAX_FRAME {
        return Err(FrameError::Length(n));
    }
    Ok(n)
}

/// Decodes one payload (without its length prefix) as a message of type `M`:
/// unknown types and fields, missing fields and bad JSON are errors.
pub fn decode_payload<M: DeserializeOwned>(payload: &[u8]) -> Result<M, FrameError> {
    serde_json::from_slice(payload).map_err(|e| FrameError::Decode(e.to_string()))
}

/// Decodes one whole frame (length prefix and payload): the pure decoder the
/// agent's buffer and the fuzz tests use. Bytes past the frame's end are an
/// error, as are too few.
#[cfg(test)]
pub fn decode<M: DeserializeOwned>(bytes: &[u8]) -> Result<M, FrameError> {
    let Some(prefix) = bytes.first_chunk::<4>() else {
        return Err(FrameError::Truncated);
    };
    let n = check_length(*prefix)?;
    let payload = &bytes[4..];
    if payload.len() < n {
        return Err(FrameError::Truncated);
    }
    if payload.len() > n {
        return Err(FrameError::Decode(format!(
            "{} bytes after the frame's end",
            payload.len() - n
        )));
    }
    decode_payload(payload)
}

/// Encodes `msg` as a frame.
pub fn encode<M: Serialize>(msg: &M) -> Result<Vec<u8>, FrameError> {
    let json = serde_json::to_vec(msg).map_err(|e| FrameError::Decode(e.to_string()))?;
    if json.is_empty() || json.len() > MAX_FRAME {
        return Err(FrameError::Length(json.len()));
    }
    let mut out = Vec::with_capacity(4 + json.len());
    out.extend_from_slice(&(json.len() as u32).to_be_bytes());
    out.extend_from_slice(&json);
    Ok(out)
}

/// Waits until `stream` is ready for `events` or `deadline` passes.
fn wait(stream: &TcpStream, events: libc::c_short, deadline: Instant) -> Result<(), FrameError> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(FrameError::Timeout);
        }
        match crate::sys::fd::wait_ready(&stream.as_raw_fd(), events, left) {
            Ok(true) => return Ok(()),
            Ok(false) => return Err(FrameError::Timeout),
            // A handled signal: the deadline still holds; the caller's own
            // stop checks run between frames.
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                if crate::engine::os::interrupt::stop_requested().is_some() {
                    return Err(FrameError::Io(e));
                }
            }
            Err(e) => return Err(FrameError::Io(e)),
        }
    }
}

/// Reads exactly `buf.len()` bytes by `deadline`; `Ok(false)` if the peer
/// closed before the first byte.
fn read_exact(
    stream: &mut TcpStream,
    buf: &mut [u8],
    deadline: Instant,
) -> Result<bool, FrameError> {
    let mut got = 0;
    while got < buf.len() {
        wait(stream, libc::POLLIN, deadline)?;
        match stream.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(FrameError::Truncated),
            Ok(n) => got += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                ) => {}
            Err(e) => return Err(FrameError::Io(e)),
        }
    }
    Ok(true)
}

/// Reads one frame from `stream` by `deadline` and decodes it as `M`. The
/// payload is read in pieces of at most 64 KiB, so memory follows the bytes
/// received, not the length announced.
#[cfg(test)]
pub fn read_frame<M: DeserializeOwned>(
    stream: &mut TcpStream,
    deadline: Instant,
) -> Result<M, FrameError> {
    decode_payload(&read_payload(stream, deadline)?)
}

/// Reads one frame's payload (undecoded) from `stream` by `deadline`.
pub fn read_payload(stream: &mut TcpStream, deadline: Instant) -> Result<Vec<u8>, FrameError> {
    let mut prefix = [0u8; 4];
    if !read_exact(stream, &mut prefix, deadline)? {
        return Err(FrameError::Closed);
    }
    let n = check_length(prefix)?;
    let mut payload = Vec::new();
    while payload.len() < n {
        let start = payload.len();
        let piece = (n - start).min(64 << 10);
        payload.resize(start + piece, 0);
        if !read_exact(stream, &mut payload[start..], deadline)? {
            return Err(FrameError::Truncated);
        }
    }
    Ok(payload)
}

/// Writes `msg` as one frame to `stream` by `deadline`.
pub fn write_frame<M: Serialize>(
    stream: &mut TcpStream,
    msg: &M,
    deadline: Instant,
) -> Result<(), FrameError> {
    write_bytes(stream, &encode(msg)?, deadline)
}

/// Writes `bytes` to `stream` by `deadline` (the socket may be blocking or
/// not: each write follows a `poll` that found room).
pub fn write_bytes(
    stream: &mut TcpStream,
    bytes: &[u8],
    deadline: Instant,
) -> Result<(), FrameError> {
    let mut sent = 0;
    while sent < bytes.len() {
        wait(stream, libc::POLLOUT, deadline)?;
        match stream.write(&bytes[sent..]) {
            Ok(0) => return Err(FrameError::Closed),
            Ok(n) => sent += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                ) => {}
            Err(e) => return Err(FrameError::Io(e)),
        }
    }
    Ok(())
}

/// Frames arriving in pieces on a non-blocking socket: the agent feeds what
/// each read returned and takes whole payloads out, so a slow or silent
/// client never holds up its poll loop.
#[derive(Default)]
pub struct FrameBuffer {
    buf: Vec<u8>,
}

impl FrameBuffer {
    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received and not yet taken as a whole frame.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Takes the next whole payload out, if one has arrived; an error for a
    /// bad length prefix (after which the connection cannot be resynchronised).
    pub fn next_payload(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        let Some(prefix) = self.buf.first_chunk::<4>() else {
            return Ok(None);
        };
        let n = check_length(*prefix)?;
        if self.buf.len() < 4 + n {
            return Ok(None);
        }
        let payload = self.buf[4..4 + n].to_vec();
        self.buf.drain(..4 + n);
        Ok(Some(payload))
    }

    /// Whether part of a frame is waiting for the rest.
    #[cfg(test)]
    pub fn partial(&self) -> bool {
        !self.buf.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "type", deny_unknown_fields)]
    enum T {
        A { x: u32 },
    }

    #[test]
    fn a_frame_round_trips_and_bad_lengths_are_refused() {
        let f = encode(&T::A { x: 7 }).unwrap();
        assert_eq!(decode::<T>(&f).unwrap(), T::A { x: 7 });
        assert!(matches!(
            decode::<T>(&f[..f.len() - 1]),
            Err(FrameError::Truncated)
        ));
        assert!(matches!(
            decode::<T>(&[0, 0, 0, 0]),
            Err(FrameError::Length(0))
        ));
        assert!(matches!(
            decode::<T>(&[0xff, 0xff, 0xff, 0xff, b'{']),
            Err(FrameError::Length(n)) if n == u32::MAX as usize
        ));
        let mut long = f.clone();
        long.push(b' ');
        assert!(matches!(decode::<T>(&long), Err(FrameError::Decode(_))));
        let bad = encode(&serde_json::json!({"type": "A", "x": 1, "y": 2})).unwrap();
        assert!(matches!(decode::<T>(&bad), Err(FrameError::Decode(_))));
        let unknown = encode(&serde_json::json!({"type": "B"})).unwrap();
        assert!(matches!(decode::<T>(&unknown), Err(FrameError::Decode(_))));
    }

    #[test]
    fn the_buffer_yields_frames_whatever_the_pieces() {
        let mut all = encode(&T::A { x: 1 }).unwrap();
        all.extend(encode(&T::A { x: 2 }).unwrap());
        for cut in 0..all.len() {
            let mut b = FrameBuffer::default();
            let mut got = Vec::new();
            for piece in [&all[..cut], &all[cut..]] {
                b.push(piece);
                while let Some(p) = b.next_payload().unwrap() {
                    got.push(decode_payload::<T>(&p).unwrap());
                }
            }
            assert_eq!(got, vec![T::A { x: 1 }, T::A { x: 2 }], "cut at {cut}");
            assert!(!b.partial());
        }
    }
}
