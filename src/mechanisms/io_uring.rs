//! `io-uring-msg` and `shm-io-uring`: one io_uring per end, messages posted
//! from one ring into the other with `IORING_OP_MSG_RING` (Linux 5.18). The
//! sender queues one submission aimed at the peer's ring descriptor and
//! submits it (`io_uring_enter`); the kernel posts a completion straight
//! into the peer's completion queue, carrying a 64-bit value, and wakes the
//! peer waiting in `io_uring_enter(GETEVENTS)`. No file, socket or futex
//! lies between them.
//!
//! - `io-uring-msg`: the 8-byte message is the completion's value itself.
//! - `shm-io-uring`: the payload goes through shared memory as in
//!   `shm-futex`; the completion is the hand-off, carrying the hand-off count.
//!
//! A message that fails (the peer's ring gone, its completion queue full)
//! posts its error to the sender's own ring instead
//! (`IOSQE_CQE_SKIP_SUCCESS`: a message that goes through posts nothing
//! there), where the sender's next wait finds it.

use super::shm_common::{self, Handoff};
use super::shm_futex::check_ahead;
use super::shm_ring::{self, Doorbell};
use crate::engine::channel::*;
use crate::sys::uring::{Cqe, Ring};
use std::cell::Cell;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::OnceLock;

/// Pure notification: the 8-byte value rides in a MSG_RING completion.
pub struct IoUringMsg;

/// Shared memory + memcpy, hand-off by a MSG_RING completion.
pub struct ShmIoUring;

/// Bytes of an `io-uring-msg` message: the completion's `user_data`.
const WORD: usize = 8;

/// The `res` every message's completion carries (the message's 32-bit
/// field): tells a message from the error of a failed one (negative).
const MSG_RES: u32 = 0x4950_4d52;

/// The `user_data` of the sender's own completion when a message fails.
const FAILED_TAG: u64 = 0xFA11_ED00_0000_0000;

/// Submission entries per ring: one message is in flight per direction,
/// and the completion queue (twice as long) holds a stream bell's few.
const ENTRIES: u32 = 8;

/// One end's rings: its own, and a descriptor of the peer's to post into.
struct Port {
    ring: Ring,
    peer: OwnedFd,
    /// A failed message's error found while draining (see [`Port::drain`]),
    /// reported by the next operation.
    failed: Cell<Option<i32>>,
}

fn rings() -> Result<(Port, Port), ChannelError> {
    let client = Ring::new(ENTRIES).map_err(setup_error)?;
    let server = Ring::new(ENTRIES).map_err(setup_error)?;
    // Each end holds its own descriptor of the other's ring, so a thread
    // peer that ends (closing its ring) leaves the client's target valid.
    let dup = |r: &Ring| {
        r.fd()
            .try_clone_to_owned()
            .map_err(ChannelError::io("dup ring"))
    };
    let (to_server, to_client) = (dup(&server)?, dup(&client)?);
    Ok((
        Port {
            ring: client,
            peer: to_server,
            failed: Cell::new(None),
        },
        Port {
            ring: server,
            peer: to_client,
            failed: Cell::new(None),
        },
    ))
}

fn setup_error(e: io::Error) -> ChannelError {
    match unavailable_because(&e) {
        Some(why) => ChannelError::Setup(why),
        None => ChannelError::Io {
            op: "io_uring_setup",
            source: e,
        },
    }
}

/// Why an `io_uring_setup` error means io_uring cannot be used here.
fn unavailable_because(e: &io::Error) -> Option<String> {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => Some("this kernel has no io_uring (io_uring_setup: ENOSYS)".into()),
        Some(libc::EPERM) => Some(
            "io_uring is disabled for this user (io_uring_setup: EPERM; sysctl kernel.io_uring_disabled)"
                .into(),
        ),
        _ => None,
    }
}

impl Port {
    /// Posts `data` into the peer's ring.
    #[inline]
    fn post(&self, data: u64) -> Result<(), ChannelError> {
        self.report_failed()?;
        self.ring
            .queue_msg(self.peer.as_fd(), MSG_RES, data, FAILED_TAG)
            .map_err(ChannelError::io("io_uring queue"))?;
        retry("io_uring_enter (submit)", || self.ring.submit())
    }

    /// Waits for the next message and returns its value.
    #[inline]
    fn take(&self) -> Result<u64, ChannelError> {
        self.report_failed()?;
        let c = retry("io_uring_enter (wait)", || self.ring.wait())?;
        message_value(c)
    }

    /// Takes every completion already there without waiting (messages
    /// are dropped; a failure is kept for the next operation).
    fn drain(&self) {
        while let Some(c) = self.ring.peek() {
            if let Err(e) = message_value(c)
                && self.failed.get().is_none()
            {
                self.failed.set(Some(match e {
                    ChannelError::Io { source, .. } => source.raw_os_error().unwrap_or(0),
                    _ => 0,
                }));
            }
        }
    }

    fn report_failed(&self) -> Result<(), ChannelError> {
        match self.failed.take() {
            None => Ok(()),
            Some(errno) => Err(failed(errno)),
        }
    }
}

fn failed(errno: i32) -> ChannelError {
    if errno == 0 {
        return ChannelError::Check("a completion that is no message arrived".into());
    }
    ChannelError::Io {
        op: "IORING_OP_MSG_RING",
        source: io::Error::from_raw_os_error(errno),
    }
}

/// A message's value, or the error of one of ours that failed.
fn message_value(c: Cqe) -> Result<u64, ChannelError> {
    if c.res == MSG_RES as i32 {
        return Ok(c.user_data);
    }
    if c.user_data == FAILED_TAG && c.res < 0 {
        return Err(failed(-c.res));
    }
    Err(ChannelError::Check(format!(
        "a completion that is no message arrived (user_data {:#x}, res {})",
        c.user_data, c.res
    )))
}

/// Whether this system can post MSG_RING completions, probed once by
/// sending one to a ring of our own.
fn probe() -> Option<String> {
    static PROBED: OnceLock<Option<String>> = OnceLock::new();
    PROBED
        .get_or_init(|| {
            let ring = match Ring::new(ENTRIES) {
                Ok(r) => r,
                Err(e) => {
                    return Some(unavailable_because(&e).unwrap_or_else(|| {
                        format!("io_uring_setup failed: {e}")
                    }));
                }
            };
            let sent = ring
                .queue_msg(ring.fd(), MSG_RES, 7, FAILED_TAG)
                .and_then(|()| ring.submit());
            if let Err(e) = sent {
                return Some(format!("io_uring_enter failed: {e}"));
            }
            match ring.peek() {
                Some(Cqe { user_data: 7, res }) if res == MSG_RES as i32 => None,
                Some(Cqe { res, .. }) if res == -libc::EINVAL => Some(
                    "this kernel lacks IORING_OP_MSG_RING or IOSQE_CQE_SKIP_SUCCESS (Linux 5.18 has both): EINVAL"
                        .into(),
                ),
                Some(c) => Some(format!(
                    "a MSG_RING to our own ring completed with {} (user_data {:#x})",
                    c.res, c.user_data
                )),
                None => Some("a MSG_RING to our own ring posted no completion".into()),
            }
        })
        .clone()
}

const REQUIRES: &str =
    "Linux 5.18 (io_uring, IORING_OP_MSG_RING); io_uring not disabled (kernel.io_uring_disabled)";

/// An `io-uring-msg` end: the message is the value.
struct MsgEnd(Port);

impl Endpoint for MsgEnd {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let v = u64::from_le_bytes(msg.try_into().map_err(|_| ChannelError::Length {
            expected: WORD,
            got: msg.len(),
        })?);
        self.0.post(v)
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        expect_len(WORD, buf.len())?;
        let v = self.0.take()?;
        buf.copy_from_slice(&v.to_le_bytes());
        Ok(())
    }
}

impl Mechanism for IoUringMsg {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "io-uring-msg",
            summary: "an io_uring per end: the 8-byte message posted into the peer's ring (IORING_OP_MSG_RING)",
            payload: Payload::Fixed(WORD),
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn requires(&self) -> Option<&'static str> {
        Some(REQUIRES)
    }

    fn unavailable(&self) -> Option<String> {
        probe()
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::No(
            "a completion queue has no flow control towards another ring: a sender running ahead overflows it (MSG_RING fails)",
        )
    }

    fn open(&self, _ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (client, server) = rings()?;
        Ok(Channel {
            client: Box::new(MsgEnd(client)),
            server: Some(Box::new(MsgEnd(server))),
            note: None,
        })
    }
}

/// The ping-pong hand-off: the count of hand-offs rides in the completion.
struct UringHandoff {
    port: Port,
    sent: u32,
    seen: u32,
}

impl Handoff for UringHandoff {
    #[inline]
    fn notify(&mut self) -> Result<(), ChannelError> {
        self.sent = self.sent.wrapping_add(1);
        self.port.post(self.sent.into())
    }

    #[inline]
    fn wait(&mut self) -> Result<(), ChannelError> {
        let v = self.port.take()?;
        check_ahead(self.seen, v as u32, u32::MAX)?;
        self.seen = self.seen.wrapping_add(1);
        Ok(())
    }
}

/// A stream ring's bell: a message wakes the sleeper. Rings may come early
/// or twice; what a sleeper did not wait for is drained before it next
/// announces itself, so stale completions cannot pile up.
struct UringBell(Port);

impl Doorbell for UringBell {
    fn arm(&self) -> u32 {
        self.0.drain();
        0
    }

    fn ring(&mut self) -> Result<(), ChannelError> {
        self.0.post(0)
    }

    fn sleep(&mut self, _armed: u32) -> Result<(), ChannelError> {
        self.0.take()?;
        self.0.drain();
        self.0.report_failed()
    }
}

impl Mechanism for ShmIoUring {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "shm-io-uring",
            summary: "shared memory + memcpy, hand-off by a completion posted into the peer's io_uring (IORING_OP_MSG_RING)",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn requires(&self) -> Option<&'static str> {
        Some(REQUIRES)
    }

    fn unavailable(&self) -> Option<String> {
        probe()
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_common::mapping(ctx.size)?;
        let (client, server) = rings()?;
        let handoff = |port| UringHandoff {
            port,
            sent: 0,
            seen: 0,
        };
        Ok(shm_common::channel(
            ctx,
            map,
            handoff(client),
            handoff(server),
            Vec::new(),
        ))
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open_stream(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let map = shm_ring::mapping(ctx.size)?;
        let (sender, receiver) = rings()?;
        Ok(shm_ring::channel(
            ctx,
            map,
            UringBell(sender),
            UringBell(receiver),
            Vec::new(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::message::fill_pattern;
    use crate::mechanisms::test_util;

    /// Skips (loudly) where this system has no MSG_RING.
    fn available() -> bool {
        match probe() {
            None => true,
            Some(why) => {
                eprintln!("skipped: {why}");
                false
            }
        }
    }

    #[test]
    fn echoes_at_every_size() {
        if !available() {
            return;
        }
        test_util::echo_sizes(&IoUringMsg, &[WORD]);
        test_util::echo_sizes(&ShmIoUring, &[1, 8, 4096, 65536 + 3]);
    }

    #[test]
    fn streams_through_a_thread() {
        if !available() {
            return;
        }
        let size = 64;
        let ch = test_util::open_stream(&ShmIoUring, size);
        let (mut tx, mut rx) = (ch.client, ch.server.unwrap());
        let reader = std::thread::spawn(move || {
            let (mut buf, mut want) = (vec![0u8; size], vec![0u8; size]);
            for seq in 0..3000 {
                rx.recv(&mut buf).unwrap();
                fill_pattern(&mut want, seq);
                assert_eq!(buf, want, "message {seq}");
                if seq % 97 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            }
        });
        let mut msg = vec![0u8; size];
        for seq in 0..3000 {
            fill_pattern(&mut msg, seq);
            tx.send(&msg).unwrap();
        }
        reader.join().unwrap();
    }

    #[test]
    fn a_message_to_what_is_no_ring_fails_at_the_sender() {
        if !available() {
            return;
        }
        let (client, server) = rings().unwrap();
        // Aim the client at a descriptor that is no ring: the kernel posts
        // the failure (EBADFD) to the client's own ring.
        let not_a_ring = std::fs::File::open("/dev/null").unwrap();
        let client = Port {
            peer: OwnedFd::from(not_a_ring),
            ..client
        };
        drop(server);
        client.post(1).unwrap();
        let err = client.take().unwrap_err();
        assert!(
            matches!(
                &err,
                ChannelError::Io {
                    op: "IORING_OP_MSG_RING",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_refused_setup_names_the_cause() {
        for (errno, says) in [
            (libc::EPERM, "io_uring_disabled"),
            (libc::ENOSYS, "no io_uring"),
        ] {
            let why = unavailable_because(&io::Error::from_raw_os_error(errno)).unwrap();
            assert!(why.contains(says), "{why}");
            assert!(matches!(
                setup_error(io::Error::from_raw_os_error(errno)),
                ChannelError::Setup(_)
            ));
        }
        assert!(unavailable_because(&io::Error::from_raw_os_error(libc::ENOMEM)).is_none());
    }

    #[test]
    fn what_is_no_message_is_refused() {
        let err = message_value(Cqe {
            user_data: 3,
            res: 0,
        })
        .unwrap_err();
        assert!(matches!(err, ChannelError::Check(_)), "{err}");
        assert_eq!(
            message_value(Cqe {
                user_data: 9,
                res: MSG_RES as i32
            })
            .unwrap(),
            9
        );
    }
}
