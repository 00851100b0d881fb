//! `vm-read`: the pull beside `vm-copy`'s push. The sender leaves the message
//! in a private buffer of its own and wakes the peer through a shared futex
//! word; the receiver copies it straight out of the sender's address space
//! with `process_vm_readv`. One copy per transfer, made by the receiver's
//! kernel entry, where `vm-copy`'s is made by the sender's.

use super::shm_common::{self, Handoff};
use super::shm_futex::FutexHandoff;
use crate::engine::channel::*;
use crate::engine::os::interrupt;
use crate::sys::mem::SharedMapping;
use crate::sys::sync::process_vm_read;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{Ordering, fence};

/// A futex wake-up, then process_vm_readv out of the sender's buffer.
pub struct VmRead;

/// One end: owns the buffer its messages wait in and knows where the peer's is.
struct VmReadEnd {
    /// Private (not shared) memory holding this end's last message until
    /// the peer has pulled it: the peer reads it only through the kernel.
    outbox: Arc<SharedMapping>,
    /// The peer's outbox, held only to keep it mapped: in thread mode both
    /// ends share one address space, and a read from a buffer unmapped by a
    /// server thread that has ended would fail or read other memory.
    _peer_keepalive: Arc<SharedMapping>,
    /// Address of the peer's outbox in the peer's address space.
    peer_outbox: usize,
    /// Process of the peer, known once attached.
    peer_pid: libc::pid_t,
    handoff: FutexHandoff,
}

const DENIED: &str = "process_vm_readv from the peer was refused (EPERM): this system \
    restricts access to another process's memory (ptrace access checks, e.g. \
    kernel.yama.ptrace_scope or a security module)";

fn vm_error(e: io::Error) -> ChannelError {
    match e.raw_os_error() {
        Some(libc::EPERM) => ChannelError::Setup(DENIED.into()),
        // The peer's memory is gone: it exited (a zombie has no mm). If it
        // exited because the run is being stopped, say that instead.
        Some(libc::ESRCH) => interrupt::check().err().unwrap_or(ChannelError::PeerDied),
        _ => ChannelError::Io {
            op: "process_vm_readv",
            source: e,
        },
    }
}

impl VmReadEnd {
    fn new(outbox: &Arc<SharedMapping>, peer: &Arc<SharedMapping>, handoff: FutexHandoff) -> Self {
        VmReadEnd {
            outbox: Arc::clone(outbox),
            _peer_keepalive: Arc::clone(peer),
            peer_outbox: peer.addr(0, peer.len()),
            peer_pid: 0,
            handoff,
        }
    }

    /// Copies the peer's outbox into `buf`, whole or not at all.
    #[inline]
    fn read_peer(&self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let n = loop {
            match process_vm_read(self.peer_pid, buf, self.peer_outbox) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => interrupt::check()?,
                Err(e) => return Err(vm_error(e)),
            }
        };
        if n != buf.len() {
            return Err(ChannelError::Length {
                expected: buf.len(),
                got: n,
            });
        }
        Ok(())
    }
}

impl Endpoint for VmReadEnd {
    fn attach(&mut self, peer: PeerIdentity) -> Result<(), ChannelError> {
        self.peer_pid = peer.pid;
        // Find out now whether the kernel allows the read at all, rather than
        // in the middle of a measurement (a zero-length read is not checked).
        self.read_peer(&mut [0u8])
    }

    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        // The peer pulls this only after the wake-up below, and this end
        // writes the outbox again only after the peer's reply, which the peer
        // sends after its pull: one message in the outbox at a time.
        self.outbox.write_bytes(0, msg);
        fence(Ordering::Release);
        self.handoff.notify()
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        self.handoff.wait()?;
        fence(Ordering::Acquire);
        self.read_peer(buf)
    }
}

impl Mechanism for VmRead {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "vm-read",
            summary: "process_vm_readv straight out of the peer's buffer after a futex wake-up",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn requires(&self) -> Option<&'static str> {
        Some("Linux 3.2 (process_vm_readv); ptrace access to the peer")
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::No(
            "the receiver reads one buffer of the sender: no queue, so every message must wait until the last one is read",
        )
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let control = shm_common::control_mapping()?;
        let (client_handoff, server_handoff) = FutexHandoff::pair(&control);
        // Mapped before the fork, privately: each buffer has the same address
        // in both processes but its own pages after the fork, so each end can
        // be told the other's address now.
        let outbox = || {
            SharedMapping::new_private(ctx.size.max(1))
                .map(Arc::new)
                .map_err(ChannelError::io("mmap outbox"))
        };
        let (client_outbox, server_outbox) = (outbox()?, outbox()?);
        let client = VmReadEnd::new(&client_outbox, &server_outbox, client_handoff);
        let server = VmReadEnd::new(&server_outbox, &client_outbox, server_handoff);
        Ok(Channel {
            client: Box::new(client),
            server: Some(Box::new(server)),
            note: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::test_util;

    #[test]
    fn a_refused_read_names_the_cause() {
        let err = vm_error(io::Error::from_raw_os_error(libc::EPERM));
        assert!(
            matches!(&err, ChannelError::Setup(m) if m.contains("EPERM") && m.contains("process_vm_readv")),
            "{err}"
        );
        let err = vm_error(io::Error::from_raw_os_error(libc::EFAULT));
        assert!(matches!(err, ChannelError::Io { .. }), "{err}");
    }

    #[test]
    fn pulls_whole_messages_from_the_peer() {
        let me = PeerIdentity {
            pid: crate::sys::process::getpid(),
            tid: crate::sys::process::gettid(),
        };
        for size in [1, 8, 4096, 65536 + 3] {
            let mut ch = test_util::open(&VmRead, size);
            ch.client.attach(me).unwrap();
            ch.server.as_mut().unwrap().attach(me).unwrap();
            test_util::echo_once(&mut ch, size);
        }
    }
}
