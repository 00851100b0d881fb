//! `memfd-pass`: the payload travels as a file, not through the socket. For
//! every message the sender creates a memory file (`memfd_create`), writes
//! the payload into it, seals it against any further change
//! (`F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW`) and passes its descriptor
//! over a Unix socket (`SCM_RIGHTS`), closing its own. The receiver checks
//! the seals and the size (a receiver that maps a file it does not trust
//! must: unsealed, the sender could change or truncate it under the
//! reader), maps it read-only, reads the payload out of the mapping, unmaps
//! it and closes the descriptor. The reply comes back the same way.
//!
//! What it costs against copying the payload through the socket is the
//! trade the size sweep shows: a fixed cost per message (a file created,
//! sealed, passed, mapped and unmapped) against a per-byte one no larger
//! than a copy (the sender's write into the file; the receiver's read out of
//! the mapping, page faults included).

use crate::engine::channel::*;
use crate::sys::file::{add_seals, fd_size, memfd_sealable, pwrite, seals};
use crate::sys::mem::FileMapping;
use crate::sys::socket::{Received, recv_fd, send_fd, set_sockopt_int, socketpair};
use std::os::fd::{AsFd, OwnedFd};

/// A sealed memfd per message, its descriptor passed over a Unix socket.
pub struct MemfdPass;

/// The seals every passed file must carry.
const SEALS: libc::c_int = libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW;

/// The byte each descriptor rides on.
const TAG: u8 = b'M';

/// One end: a Unix sequenced-packet socket, one message (one byte and one
/// descriptor) per payload.
struct MemfdEnd {
    sock: OwnedFd,
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
        retry("sendmsg SCM_RIGHTS", || {
            send_fd(self.sock.as_fd(), file.as_fd(), TAG)
        })?;
        // The receiver holds its own descriptor now; this one closes here.
        Ok(())
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
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
        if got != buf.len() as u64 {
            return Err(ChannelError::Length {
                expected: buf.len(),
                got: got as usize,
            });
        }
        let map =
            FileMapping::read_only(&file, buf.len()).map_err(ChannelError::io("mmap memfd"))?;
        map.read_bytes(0, buf);
        // Unmapped, then closed, here: nothing received outlives the message.
        drop(map);
        drop(file);
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
            summary: "payload in a sealed memfd per message, its descriptor passed over a Unix socket (SCM_RIGHTS), mapped and read by the receiver",
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

    fn open(&self, _ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (a, b) = pair()?;
        Ok(Channel {
            client: Box::new(MemfdEnd { sock: a }),
            server: Some(Box::new(MemfdEnd { sock: b })),
            note: None,
        })
    }

    fn open_stream(&self, _ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (a, b) = pair()?;
        // Every message in flight holds a file of the message's size and a
        // descriptor counted against the sender's open-file limit: the
        // smallest send buffer keeps a handful in flight, not hundreds.
        set_sockopt_int(a.as_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, 0)
            .map_err(ChannelError::io("SO_SNDBUF"))?;
        Ok(Channel {
            client: Box::new(MemfdEnd { sock: a }),
            server: Some(Box::new(MemfdEnd { sock: b })),
            note: Some("send buffer at its minimum: a few memfds in flight".into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::test_util;

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
        let mut end = MemfdEnd { sock: b };
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
