//! `vm-copy`: the closest Linux kin of QNX Send/Receive/Reply, which copies a
//! message straight from one address space into the other. The sender copies
//! into the peer's private receive buffer with `process_vm_writev`, then wakes
//! it through a shared futex word. The receiver reads the message where the
//! kernel put it ([`Endpoint::lend`]), and the echo answers from there: one
//! copy per transfer, the kernel's.

use super::shm_common::{self, Handoff};
use super::shm_futex::FutexHandoff;
use crate::engine::channel::*;
use crate::engine::os::interrupt;
use crate::sys::mem::SharedMapping;
use crate::sys::sync::process_vm_write;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{Ordering, fence};

/// process_vm_writev into the peer's landing buffer + a futex wake-up.
pub struct VmCopy;

/// One end: owns the buffer the peer copies into and knows where the peer's is.
struct VmCopyEnd {
    /// Private (not shared) memory that only the peer's process_vm_writev
    /// fills; read through raw copies, since the kernel writes it behind
    /// Rust's back.
    landing: Arc<SharedMapping>,
    /// The peer's landing buffer, held only to keep it mapped: in thread mode
    /// both ends share one address space, and a copy into a buffer unmapped by
    /// a server thread that has ended would fail or hit other memory.
    _peer_keepalive: Arc<SharedMapping>,
    /// Address of the peer's landing buffer in the peer's address space.
    peer_landing: usize,
    /// Process of the peer, known once attached.
    peer_pid: libc::pid_t,
    handoff: FutexHandoff,
    /// The channel's message size.
    size: usize,
    /// Whether the landing buffer is lent to the engine.
    lent: bool,
}

const DENIED: &str = "process_vm_writev into the peer was refused (EPERM): this system \
    restricts access to another process's memory (ptrace access checks, e.g. \
    kernel.yama.ptrace_scope or a security module)";

fn vm_error(e: io::Error) -> ChannelError {
    match e.raw_os_error() {
        Some(libc::EPERM) => ChannelError::Setup(DENIED.into()),
        // The target's memory is gone: it exited (a zombie has no mm). If it
        // exited because the run is being stopped, say that instead.
        Some(libc::ESRCH) => interrupt::check().err().unwrap_or(ChannelError::PeerDied),
        _ => ChannelError::Io {
            op: "process_vm_writev",
            source: e,
        },
    }
}

impl VmCopyEnd {
    fn new(
        landing: &Arc<SharedMapping>,
        peer: &Arc<SharedMapping>,
        handoff: FutexHandoff,
        size: usize,
    ) -> Self {
        VmCopyEnd {
            landing: Arc::clone(landing),
            _peer_keepalive: Arc::clone(peer),
            peer_landing: peer.addr(0, peer.len()),
            peer_pid: 0,
            handoff,
            size,
            lent: false,
        }
    }

    /// Copies `msg` into the peer's landing buffer, whole or not at all.
    #[inline]
    fn write_peer(&self, msg: &[u8]) -> Result<(), ChannelError> {
        let n = loop {
            match process_vm_write(self.peer_pid, msg, self.peer_landing) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => interrupt::check()?,
                Err(e) => return Err(vm_error(e)),
            }
        };
        if n != msg.len() {
            return Err(ChannelError::Length {
                expected: msg.len(),
                got: n,
            });
        }
        Ok(())
    }
}

impl Endpoint for VmCopyEnd {
    fn attach(&mut self, peer: PeerIdentity) -> Result<(), ChannelError> {
        self.peer_pid = peer.pid;
        // Find out now whether the kernel allows the copy at all, rather than
        // in the middle of a measurement. A zero-length copy is not checked by
        // the kernel, so copy one byte: the peer reads its landing buffer only
        // after a wake-up, and every real message overwrites it first.
        self.write_peer(&[0u8])
    }

    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.write_peer(msg)?;
        fence(Ordering::Release);
        self.handoff.notify()
    }

    /// Receives by copying out of the landing buffer: for a caller that
    /// wants a copy; the engine lends.
    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        self.handoff.wait()?;
        fence(Ordering::Acquire);
        self.landing.read_bytes(0, buf);
        Ok(())
    }

    fn lends(&self) -> bool {
        true
    }

    #[inline]
    fn lend(&mut self) -> Result<&mut [u8], ChannelError> {
        self.handoff.wait()?;
        fence(Ordering::Acquire);
        // The peer writes the landing buffer again only after this end's
        // next send: it is this end's until then.
        self.lent = true;
        Ok(self.landing.bytes_mut(0, self.size))
    }

    #[inline]
    fn send_lent(&mut self) -> Result<(), ChannelError> {
        if !std::mem::take(&mut self.lent) {
            return Err(nothing_lent());
        }
        self.write_peer(self.landing.bytes_mut(0, self.size))?;
        fence(Ordering::Release);
        self.handoff.notify()
    }

    #[inline]
    fn release(&mut self) -> Result<(), ChannelError> {
        if !std::mem::take(&mut self.lent) {
            return Err(nothing_lent());
        }
        Ok(())
    }
}

impl Mechanism for VmCopy {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "vm-copy",
            summary: "process_vm_writev straight into the peer's buffer + futex wake-up",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::No(
            "process_vm_writev writes into one buffer of the peer: no queue, so every write must wait until the last one is read",
        )
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let control = shm_common::control_mapping()?;
        let (client_handoff, server_handoff) = FutexHandoff::pair(&control);
        // Both buffers are mapped before the fork, privately, so each has the
        // same address in both processes but its own pages after the fork (and
        // in thread mode there is one address space anyway): each end can be
        // told the other's address now.
        let landing = || {
            SharedMapping::new_private(ctx.size.max(1))
                .map(Arc::new)
                .map_err(ChannelError::io("mmap landing buffer"))
        };
        let (client_landing, server_landing) = (landing()?, landing()?);
        let size = ctx.size;
        let client = VmCopyEnd::new(&client_landing, &server_landing, client_handoff, size);
        let server = VmCopyEnd::new(&server_landing, &client_landing, server_handoff, size);
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

    #[test]
    fn the_peer_reads_where_the_kernel_copied_and_answers_from_there() {
        crate::mechanisms::test_util::echo_lent(&VmCopy, &[1, 4096, 65536 + 3], 50);
    }

    #[test]
    fn a_refused_copy_names_the_cause() {
        let err = vm_error(io::Error::from_raw_os_error(libc::EPERM));
        assert!(
            matches!(&err, ChannelError::Setup(m) if m.contains("EPERM") && m.contains("ptrace")),
            "{err}"
        );
        let err = vm_error(io::Error::from_raw_os_error(libc::EFAULT));
        assert!(matches!(err, ChannelError::Io { .. }), "{err}");
    }
}
