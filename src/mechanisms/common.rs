//! Endpoint shapes shared by several mechanisms.

use crate::engine::channel::{ChannelError, Endpoint, read_full, write_full};
use crate::engine::os::objects::Cleanup;
use std::io::{Read, Write};

/// An end that writes messages to one byte stream and reads them from another
/// (pipes, FIFOs, stream sockets). Messages are framed by their known size.
pub struct StreamEnd<R, W> {
    rx: R,
    tx: W,
    /// Objects to release when this end is dropped in the creating process.
    _cleanup: Vec<Cleanup>,
}

impl<R, W> StreamEnd<R, W> {
    /// An end reading from `rx` and writing to `tx`.
    pub fn new(rx: R, tx: W) -> Self {
        StreamEnd {
            rx,
            tx,
            _cleanup: Vec::new(),
        }
    }

    /// Same, releasing `cleanup` when dropped.
    pub fn with_cleanup(rx: R, tx: W, cleanup: Vec<Cleanup>) -> Self {
        StreamEnd {
            rx,
            tx,
            _cleanup: cleanup,
        }
    }
}

impl<R: Read + Send, W: Write + Send> Endpoint for StreamEnd<R, W> {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        write_full(&mut self.tx, msg)
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        read_full(&mut self.rx, buf)
    }
}
