//! `memfd-pass`: the payload travels as a file, not through the socket. For
//! every message the sender creates a memory file (`memfd_create`), writes
//! the payload into it, seals it against changing size
//! (`F_SEAL_SHRINK | F_SEAL_GROW`) and passes its descriptor over a Unix
//! socket (`SCM_RIGHTS`), closing its own. The receiver checks the seals and
//! the size (a receiver that maps a file it does not trust must: a file that
//! could shrink under the mapping would fault the reader with SIGBUS), maps
//! it and reads the payload where it lies ([`Endpoint::lend`]). The echo
//! answers in the file itself and passes the same file back, as a design
//! that hands a buffer back would; the client reads the answer in place,
//! unmaps the file and closes it.
//!
//! No `F_SEAL_WRITE`: a file sealed against writing cannot be mapped
//! writable, so the receiver could not answer in it, and a reply would be a
//! second file and a second copy of the payload. What the write seal would
//! give a receiver (content that cannot change under it) the engine does
//! not need: it verifies what it reads.
//!
//! What it costs against copying the payload through the socket is the
//! trade the size sweep shows: a fixed cost per message (a file created,
//! sealed, passed, mapped and unmapped, twice: there and back) against a
//! per-byte one of the sender's one write into the file (pages allocated
//! and filled); the receivers touch only what they read.

use crate::engine::channel::*;
use crate::sys::file::{add_seals, fd_size, memfd_sealable, pwrite, seals};
use crate::sys::mem::FileMapping;
use crate::sys::socket::{Received, recv_fd, send_fd, set_sockopt_int, socketpair};
use std::os::fd::{AsFd, OwnedFd};

/// A sealed memfd per message, its descriptor passed over a Unix socket.
pub struct MemfdPass;

/// The seals every passed file must carry: its size is fixed while mapped.
const SEALS: libc::c_int = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW;

/// The byte each descriptor rides on.
const TAG: u8 = b'M';

/// One end: a Unix sequenced-packet socket, one message (one byte and one
/// descriptor) per payload.
struct MemfdEnd {
    sock: OwnedFd,
    /// The channel's message size.
    size: usize,
    /// The file lent to the engine and its mapping, until sent back or
    /// released.
    lent: Option<(FileMapping, OwnedFd)>,
}

impl MemfdEnd {
    fn new(sock: OwnedFd, size: usize) -> MemfdEnd {
        MemfdEnd {
            sock,
            size,
            lent: None,
        }
    }

    /// Receives the next file, checked: sealed, and of `len` bytes.
    fn take(&mut self, len: usize) -> Result<OwnedFd, ChannelError> {
        let file = match retry("recvmsg SCM_RIGHTS", || recv_fd(self.sock.as_fd()))? {
            Received::Closed => return Err(ChannelError::Closed),
            Received::Message(TAG, Some(file)) => file,
            Received::Message(tag, None) => {
                return Err(ChannelError::Check(format!(
                    "a message (byte {tag:#04x}) arrived without its memfd"
                )));
            }
            Received::Message(tag, Some(_)) => {
                return Err(ChannelError::Check(format!(
                    "a memfd arrived on byte {tag:#04x}, not {TAG:#04x}"
                )));
            }
        };
        let sealed = seals(&file).map_err(ChannelError::io("F_GET_SEALS"))?;
        if sealed & SEALS != SEALS {
            return Err(ChannelError::Check(format!(
                "a memfd arrived without its seals (F_GET_SEALS = {sealed:#x}, needs {SEALS:#x})"
            )));
        }
        let got = fd_size(&file).map_err(ChannelError::io("fstat memfd"))?;
        if got != len as u64 {
            return Err(ChannelError::Length {
                expected: len,
                got: got as usize,
            });
        }
        Ok(file)
    }

    fn pass(&self, file: &OwnedFd) -> Result<(), ChannelError> {
        retry("sendmsg SCM_RIGHTS", || {
            send_fd(self.sock.as_fd(), file.as_fd(), TAG)
        })
    }
}

impl Endpoint for MemfdEnd {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let file =
            memfd_sealable(c"ipcmark-memfd-pass").map_err(ChannelError::io("memfd_create"))?;
        let mut done = 0;
        while done < msg.len() {
            let n = retry("write memfd", || pwrite(&file, &msg[done..], done as i64))?;
            if n == 0 {
                return Err(ChannelError::Length {
                    expected: msg.len(),
                    got: done,
                });
            }
            done += n;
        }
        add_seals(&file, SEALS).map_err(ChannelError::io("seal memfd"))?;
        self.pass(&file)
        // The receiver holds its own descriptor now; this one closes here.
    }

    /// Receives by reading the mapped file out: for a caller that wants a
    /// copy; the engine lends.
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let file = self.take(buf.len())?;
        let map =
            FileMapping::read_only(&file, buf.len()).map_err(ChannelError::io("mmap memfd"))?;
        map.read_bytes(0, buf);
        // Unmapped, then closed, here: nothing received outlives the message.
        drop(map);
        drop(file);
        Ok(())
    }

    fn lends(&self) -> bool {
        true
    }

    #[inline]
    fn lend(&mut self) -> Result<&mut [u8], ChannelError> {
        // Whatever an earlier lend left is given back first.
        self.lent = None;
        let file = self.take(self.size)?;
        let map =
            FileMapping::read_write(&file, self.size).map_err(ChannelError::io("mmap memfd"))?;
        let (map, _) = self.lent.insert((map, file));
        Ok(map.bytes_mut(self.size))
    }

    #[inline]
    fn send_lent(&mut self) -> Result<(), ChannelError> {
        let (map, file) = self.lent.take().ok_or_else(nothing_lent)?;
        // Unmapped before it goes: this end is done with it.
        drop(map);
        self.pass(&file)
    }

    #[inline]
    fn release(&mut self) -> Result<(), ChannelError> {
        self.lent.take().ok_or_else(nothing_lent)?;
        Ok(())
    }
}

fn pair() -> Result<(OwnedFd, OwnedFd), ChannelError> {
    socketpair(libc::SOCK_SEQPACKET).map_err(ChannelError::io("socketpair"))
}

impl Mechanism for MemfdPass {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "memfd-pass",
            summary: "payload in a sealed memfd per message, its descriptor passed over a Unix socket (SCM_RIGHTS), mapped and read in place by the receiver, the same file passed back",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn requires(&self) -> Option<&'static str> {
        Some("Linux 3.17 (memfd_create, file seals)")
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (a, b) = pair()?;
        Ok(Channel {
            client: Box::new(MemfdEnd::new(a, ctx.size)),
            server: Some(Box::new(MemfdEnd::new(b, ctx.size))),
            note: None,
        })
    }

    fn open_stream(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (a, b) = pair()?;
        // Every message in flight holds a file of the message's size and a
        // descriptor counted against the sender's open-file limit: the
        // smallest send buffer keeps a handful in flight, not hundreds.
        set_sockopt_int(a.as_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, 0)
            .map_err(ChannelError::io("SO_SNDBUF"))?;
        Ok(Channel {
            client: Box::new(MemfdEnd::new(a, ctx.size)),
            server: Some(Box::new(MemfdEnd::new(b, ctx.size))),
            note: Some("send buffer at its minimum: a few memfds in flight".into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::test_util;

    #[test]
    fn lends_the_mapped_file_and_answers_in_it() {
        test_util::echo_lent(&MemfdPass, &[1, 4096, 65536 + 3], 20);
    }

    #[test]
    fn echoes_at_several_sizes() {
        test_util::echo_sizes(&MemfdPass, &[1, 8, 4096, 65536 + 3]);
    }

    #[test]
    fn an_unsealed_file_is_refused() {
        let (a, b) = pair().unwrap();
        let file = memfd_sealable(c"ipcmark-test").unwrap();
        pwrite(&file, &[1, 2, 3, 4], 0).unwrap();
        send_fd(a.as_fd(), file.as_fd(), TAG).unwrap();
        let mut end = MemfdEnd::new(b, 4);
        let err = end.recv(&mut [0u8; 4]).unwrap_err();
        assert!(
            matches!(&err, ChannelError::Check(m) if m.contains("seals")),
            "{err}"
        );
    }

    #[test]
    fn a_file_of_another_size_is_refused() {
        let mut ch = test_util::open(&MemfdPass, 16);
        ch.client.send(&[7u8; 16]).unwrap();
        let err = ch
            .server
            .as_mut()
            .unwrap()
            .recv(&mut [0u8; 32])
            .unwrap_err();
        assert!(
            matches!(
                err,
                ChannelError::Length {
                    expected: 32,
                    got: 16
                }
            ),
            "{err}"
        );
    }
}
