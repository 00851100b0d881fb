//! `eventfd`: pure notification through two eventfds, one per direction. The
//! 8-byte message is the counter value itself: the engine's stamp one way,
//! the echo's complement of it the other (never 0, never `u64::MAX`).

use crate::engine::channel::*;
use crate::sys::sync::eventfd;
use std::fs::File;
use std::io::{Read, Write};

/// Bytes an eventfd read or write moves: one u64.
const WORD: usize = 8;

/// Two eventfds between the client and the echo server.
pub struct EventFd;

impl Mechanism for EventFd {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "eventfd",
            summary: "two eventfds, one per direction: the 8-byte counter value is the message",
            payload: Payload::Fixed(WORD),
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::No(
            "an eventfd is one counter: back-to-back writes add up into a single read",
        )
    }

    fn open(&self, _ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let to_server = eventfd().map_err(ChannelError::io("eventfd"))?;
        let to_client = eventfd().map_err(ChannelError::io("eventfd"))?;
        // Each end owns its descriptors, so a thread peer closing its end
        // cannot pull one out from under the client.
        let server_rx = to_server.try_clone().map_err(ChannelError::io("dup"))?;
        let server_tx = to_client.try_clone().map_err(ChannelError::io("dup"))?;
        Ok(Channel {
            client: Box::new(End {
                rx: to_client,
                tx: to_server,
            }),
            server: Some(Box::new(End {
                rx: server_rx,
                tx: server_tx,
            })),
            note: None,
        })
    }
}

/// Reads one counter value into `buf` (exactly 8 bytes).
#[inline]
fn read_word(rx: &mut File, buf: &mut [u8]) -> Result<(), ChannelError> {
    // An eventfd has no end-of-file: a peer that is gone is reported by the
    // engine, through `retry`.
    let n = retry("read eventfd", || rx.read(buf))?;
    expect_len(WORD, n)
}

/// Adds the counter value in `msg` to the eventfd.
#[inline]
fn write_word(tx: &mut File, msg: &[u8]) -> Result<(), ChannelError> {
    let value = u64::from_ne_bytes(msg.try_into().map_err(|_| ChannelError::Length {
        expected: WORD,
        got: msg.len(),
    })?);
    if value == 0 {
        // Adding 0 wakes nobody: the reader would wait forever.
        return Err(ChannelError::Sequence {
            expected: 1,
            got: 0,
        });
    }
    let n = retry("write eventfd", || tx.write(msg))?;
    expect_len(WORD, n)
}

/// One end: writes its values into one eventfd, reads the other's. What a
/// value must be (the echo's reply to the one sent; not a sum of two writes
/// met in one counter) is the engine's check.
struct End {
    rx: File,
    tx: File,
}

impl Endpoint for End {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        write_word(&mut self.tx, msg)
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        read_word(&mut self.rx, buf)
    }
}
