//! `vmsplice`: two pipes like `pipe`, but the sender splices its message's
//! pages into the pipe (`vmsplice`) instead of copying them in with
//! `write`: the pipe holds references to the sender's pages, and the
//! receiver's `read` copies straight out of them.
//!
//! The pages are the end's own: the message is copied into a buffer that
//! only this end writes, and that buffer is spliced. The engine's buffer
//! cannot be lent: `send` must be done with it when it returns (the echo
//! writes its next receive's poison there at once, while the reply may
//! still be in the pipe). So, like the shared-memory mechanisms, the
//! sender writes the payload once into memory the receiver reads from, and
//! the receiver makes the one copy out; what differs is the kernel's part
//! (page references handed through a pipe, against a futex or semaphore).
//! The buffer is its own mapping, not heap memory: when an end goes, its
//! pages are unmapped, and the references in the pipe keep them as they
//! were, where freed heap memory could be written again by the allocator.
//!
//! No `SPLICE_F_GIFT`. A gift hands the pages over for good, so that a later
//! `splice` may move them on without copying; the receiver here reads them
//! with `read`, which copies whether they were gifted or not, and the
//! sender keeps using its buffer, which a gift would forbid. What the
//! lending costs instead is a rule: the sender must not write its buffer
//! again until the receiver has read the message. A ping-pong (and a
//! one-way run, which waits for each message's acknowledgement) keeps it,
//! since the reply comes only after the read; a stream, whose sender
//! refills its buffer at once, would not, so this mechanism does not stream.

use crate::engine::channel::*;
use crate::sys::fd::vmsplice;
use crate::sys::mem::SharedMapping;
use std::io::{PipeReader, PipeWriter};

/// vmsplice into one pipe per direction, read by the peer.
pub struct Vmsplice;

/// One end: splices its own buffer into one pipe, reads the other.
struct VmspliceEnd {
    rx: PipeReader,
    tx: PipeWriter,
    /// Private memory the message is spliced from: written only by this
    /// end's `send`, and only after the peer's reply, which comes after the
    /// peer's read of the last message.
    lent: SharedMapping,
}

impl Endpoint for VmspliceEnd {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.lent.write_bytes(0, msg);
        let mut done = 0;
        while done < msg.len() {
            // Blocks while the pipe is full; a message larger than the pipe
            // goes in as the receiver drains it.
            let n = retry("vmsplice", || {
                vmsplice(&self.tx, &self.lent, done, msg.len() - done)
            })?;
            if n == 0 {
                return Err(ChannelError::Closed);
            }
            done += n;
        }
        Ok(())
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        read_full(&mut self.rx, buf)
    }
}

impl Mechanism for Vmsplice {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "vmsplice",
            summary: "the sender's pages spliced into a pipe (vmsplice), read out by the peer: one copy per transfer",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn requires(&self) -> Option<&'static str> {
        Some("Linux 2.6.17 (vmsplice)")
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::No(
            "the pipe holds the sender's own pages until they are read: a stream's sender would overwrite a message still in the pipe",
        )
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        // Mapped before the fork, privately: after it each process writes
        // pages of its own (copy on write), and the pipe keeps the pages
        // that were spliced.
        let lent =
            || SharedMapping::new_private(ctx.size.max(1)).map_err(ChannelError::io("mmap buffer"));
        let (to_server_rx, to_server_tx) = std::io::pipe().map_err(ChannelError::io("pipe"))?;
        let (to_client_rx, to_client_tx) = std::io::pipe().map_err(ChannelError::io("pipe"))?;
        Ok(Channel {
            client: Box::new(VmspliceEnd {
                rx: to_client_rx,
                tx: to_server_tx,
                lent: lent()?,
            }),
            server: Some(Box::new(VmspliceEnd {
                rx: to_server_rx,
                tx: to_client_tx,
                lent: lent()?,
            })),
            note: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::message::fill_pattern;

    /// Echoes through a thread peer: messages larger than the pipe need the
    /// reader draining while the sender splices.
    #[test]
    fn echoes_through_a_thread_at_sizes_beyond_the_pipe() {
        for size in [1usize, 8, 4096, 65536 + 3, 300_000] {
            let ch = crate::mechanisms::test_util::open(&Vmsplice, size);
            let (mut client, mut server) = (ch.client, ch.server.unwrap());
            let echo = std::thread::spawn(move || {
                let mut buf = vec![0u8; size];
                for _ in 0..20 {
                    server.recv(&mut buf).unwrap();
                    server.send(&buf).unwrap();
                }
            });
            let (mut msg, mut back) = (vec![0u8; size], vec![0u8; size]);
            for seq in 0..20 {
                fill_pattern(&mut msg, seq);
                client.send(&msg).unwrap();
                client.recv(&mut back).unwrap();
                assert_eq!(msg, back, "size {size} message {seq}");
            }
            echo.join().unwrap();
        }
    }

    #[test]
    fn a_closed_reader_ends_the_send() {
        let ch = crate::mechanisms::test_util::open(&Vmsplice, 8);
        let mut client = ch.client;
        drop(ch.server);
        assert!(matches!(client.send(&[1u8; 8]), Err(ChannelError::Closed)));
    }
}
