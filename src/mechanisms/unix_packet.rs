//! `unix-dgram` and `unix-seqpacket`: a connected pair of Unix-domain sockets
//! that keep message boundaries, one datagram per message.

use super::dgram_common::DatagramEnd;
use crate::engine::channel::*;
use crate::engine::os::limits::kernel_limit;
use crate::sys::socket;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;

/// Bytes of SO_SNDBUF the kernel keeps back from every Unix datagram
/// (`len > sk_sndbuf - 32` is EMSGSIZE in unix_dgram_sendmsg).
const SNDBUF_RESERVE: usize = 32;

/// Which socket type the pair is.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Dgram,
    Seqpacket,
}

/// socketpair(AF_UNIX, SOCK_DGRAM or SOCK_SEQPACKET).
pub struct UnixPacket {
    kind: Kind,
}

/// The largest message, found once per kind by trying it (see [`probe`]).
static LIMITS: [OnceLock<Option<SizeLimit>>; 2] = [OnceLock::new(), OnceLock::new()];

impl UnixPacket {
    /// `unix-dgram`.
    pub const DGRAM: UnixPacket = UnixPacket { kind: Kind::Dgram };
    /// `unix-seqpacket`.
    pub const SEQPACKET: UnixPacket = UnixPacket {
        kind: Kind::Seqpacket,
    };

    fn sock_type(&self) -> libc::c_int {
        match self.kind {
            Kind::Dgram => libc::SOCK_DGRAM,
            Kind::Seqpacket => libc::SOCK_SEQPACKET,
        }
    }
}

impl Mechanism for UnixPacket {
    fn info(&self) -> MechanismInfo {
        let (id, summary) = match self.kind {
            Kind::Dgram => (
                "unix-dgram",
                "Unix-domain datagram socket pair (socketpair, SOCK_DGRAM)",
            ),
            Kind::Seqpacket => (
                "unix-seqpacket",
                "Unix-domain sequenced-packet socket pair (socketpair, SOCK_SEQPACKET)",
            ),
        };
        MechanismInfo {
            id,
            summary,
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn size_limit(&self) -> Option<SizeLimit> {
        LIMITS[self.kind as usize]
            .get_or_init(|| probe(self.sock_type()))
            .clone()
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (a, b) = sized_pair(self.sock_type(), ctx.size)?;
        Ok(Channel {
            client: Box::new(DatagramEnd::new(a)),
            server: Some(Box::new(DatagramEnd::new(b))),
            note: None,
        })
    }
}

/// A socket pair whose send buffers hold one message of `size` bytes.
fn sized_pair(ty: libc::c_int, size: usize) -> Result<(OwnedFd, OwnedFd), ChannelError> {
    let (a, b) = socket::socketpair(ty).map_err(ChannelError::io("socketpair"))?;
    fit_send_buffer(a.as_fd(), size)?;
    fit_send_buffer(b.as_fd(), size)?;
    Ok((a, b))
}

/// Raises SO_SNDBUF if a `size`-byte datagram would not fit. Only the sender's
/// buffer limits a Unix datagram (the receiver's queue is bounded by count,
/// net.unix.max_dgram_qlen), so SO_RCVBUF is left alone.
fn fit_send_buffer(fd: BorrowedFd<'_>, size: usize) -> Result<(), ChannelError> {
    let get = || {
        socket::sockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF)
            .map(|v| v.max(0) as usize)
            .map_err(ChannelError::io("getsockopt SO_SNDBUF"))
    };
    let need = size + SNDBUF_RESERVE;
    if get()? >= need {
        return Ok(());
    }
    // The kernel doubles the value asked for and caps it at net.core.wmem_max.
    let ask = need.div_ceil(2).min(i32::MAX as usize) as i32;
    socket::set_sockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, ask)
        .map_err(ChannelError::io("setsockopt SO_SNDBUF"))?;
    let have = get()?;
    if have < need {
        return Err(ChannelError::Setup(format!(
            "SO_SNDBUF is {have} B, too small for a {size}-byte datagram (net.core.wmem_max)"
        )));
    }
    Ok(())
}

/// Finds the largest message this kernel passes through a pair of type `ty`.
///
/// Two limits apply: the send buffer (at most 2 × net.core.wmem_max, less
/// 32 B), and the socket buffer holding the whole datagram, whose linear part
/// is one kmalloc (4 MiB at most) plus a few page fragments. The second is no
/// sysctl and depends on the kernel build, so it is measured: a trial send
/// fails at once (EMSGSIZE/ENOBUFS) and never blocks.
fn probe(ty: libc::c_int) -> Option<SizeLimit> {
    let wmem_max = kernel_limit("/proc/sys/net/core/wmem_max")?;
    let ceiling = (2 * wmem_max).saturating_sub(SNDBUF_RESERVE);
    let mut buf = vec![0u8; ceiling];
    let mut passes = |n: usize| -> bool {
        let Ok((a, b)) = sized_pair(ty, n) else {
            return false;
        };
        let flags = libc::MSG_DONTWAIT;
        matches!(socket::send(a.as_fd(), &buf[..n], flags), Ok(s) if s == n)
            && matches!(socket::recv(b.as_fd(), &mut buf[..n], flags), Ok(r) if r == n)
    };
    let sysctl = format!("net.core.wmem_max = {wmem_max}");
    if passes(ceiling) {
        return Some(SizeLimit {
            max_bytes: ceiling,
            reason: format!("{sysctl}: SO_SNDBUF at most twice that, less {SNDBUF_RESERVE} B"),
        });
    }
    // Invariant: `lo` passes, `hi` fails.
    let (mut lo, mut hi) = (1usize, ceiling);
    if !passes(lo) {
        return None;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if passes(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(SizeLimit {
        max_bytes: lo,
        // The cap is the kernel's per-skb allocation limit, not a sysctl, hence the trial.
        reason: format!("largest datagram accepted in a trial send; {sysctl} would allow more"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::test_util::{echo_sizes, open};

    #[test]
    fn carries_messages_up_to_the_limit() {
        for mech in [&UnixPacket::DGRAM, &UnixPacket::SEQPACKET] {
            let limit = mech.size_limit().expect("a limit").max_bytes;
            assert!(limit >= 65536, "{limit}");
            echo_sizes(mech, &[1, 65536, limit]);
        }
    }

    #[test]
    fn a_longer_message_is_a_length_error() {
        let mut ch = open(&UnixPacket::DGRAM, 8);
        let mut server = ch.server.take().unwrap();
        let mut buf = [0u8; 4];
        ch.client.send(&[7u8; 8]).unwrap();
        let err = server.recv(&mut buf).unwrap_err();
        assert!(
            matches!(
                err,
                ChannelError::Length {
                    expected: 4,
                    got: 8
                }
            ),
            "{err}"
        );
    }
}
