//! `eventfd`: pure notification through two eventfds, one per direction. The
//! 8-byte message is the counter value itself (the sequence number, never 0).

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
            client: Box::new(Client {
                rx: to_client,
                tx: to_server,
                sent: 0,
            }),
            server: Some(Box::new(Server {
                rx: server_rx,
                tx: server_tx,
            })),
            note: None,
        })
    }
}

/// Reads one counter value into `buf` (exactly 8 bytes).
#[inline]
fn read_word(rx: &mut File, buf: &mut [u8]) -> Result<u64, ChannelError> {
    // An eventfd has no end-of-file: a peer that is gone is reported by the
    // engine, through `retry`.
    let n = retry("read eventfd", || rx.read(buf))?;
    expect_len(WORD, n)?;
    let mut word = [0u8; WORD];
    word.copy_from_slice(&buf[..WORD]);
    Ok(u64::from_ne_bytes(word))
}

/// Adds the counter value in `msg` to the eventfd.
#[inline]
fn write_word(tx: &mut File, msg: &[u8]) -> Result<u64, ChannelError> {
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
    expect_len(WORD, n)?;
    Ok(value)
}

/// The measuring end: checks that what comes back is exactly what it sent (a
/// sum would mean two writes met in one counter).
struct Client {
    rx: File,
    tx: File,
    sent: u64,
}

impl Endpoint for Client {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.sent = write_word(&mut self.tx, msg)?;
        Ok(())
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let got = read_word(&mut self.rx, buf)?;
        if got != self.sent {
            return Err(ChannelError::Sequence {
                expected: self.sent,
                got,
            });
        }
        Ok(())
    }
}

/// The echo end: reads the value and writes the same value back.
struct Server {
    rx: File,
    tx: File,
}

impl Endpoint for Server {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        write_word(&mut self.tx, msg).map(|_| ())
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        read_word(&mut self.rx, buf).map(|_| ())
    }
}
