//! `sysv-msg`: one System V message queue; the message type says the direction.

use crate::engine::channel::*;
use crate::engine::os::limits::kernel_limit;
use crate::engine::os::objects::Cleanup;
use crate::sys::sysv::{self, MsgBuf};

/// Linux's default kernel.msgmax and kernel.msgmnb.
const DEFAULT_MSGMAX: usize = 8192;
const DEFAULT_MSGMNB: usize = 16384;

/// Message type of messages to the server.
const TO_SERVER: libc::c_long = 1;
/// Message type of messages to the client.
const TO_CLIENT: libc::c_long = 2;

/// msgsnd / msgrcv on one queue.
pub struct SysvMsg;

impl Mechanism for SysvMsg {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "sysv-msg",
            summary: "one System V message queue, a message type per direction (msgsnd/msgrcv)",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn size_limit(&self) -> Option<SizeLimit> {
        let msgmax = kernel_limit("/proc/sys/kernel/msgmax").unwrap_or(DEFAULT_MSGMAX);
        let msgmnb = kernel_limit("/proc/sys/kernel/msgmnb").unwrap_or(DEFAULT_MSGMNB);
        // The queue's byte capacity must also hold one message.
        Some(if msgmax <= msgmnb {
            SizeLimit {
                max_bytes: msgmax,
                reason: format!("kernel.msgmax = {msgmax}"),
            }
        } else {
            SizeLimit {
                max_bytes: msgmnb,
                reason: format!("kernel.msgmnb = {msgmnb}: the queue must hold one message"),
            }
        })
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (id, cleanup) = ctx
            .names
            .create_sysv("msg", sysv::msg_create)
            .map_err(ChannelError::io("msgget"))?;
        Ok(Channel {
            client: Box::new(MsgEnd {
                id,
                tx_type: TO_SERVER,
                rx_type: TO_CLIENT,
                buf: MsgBuf::new(ctx.size),
                _cleanup: Some(cleanup),
            }),
            server: Some(Box::new(MsgEnd {
                id,
                tx_type: TO_CLIENT,
                rx_type: TO_SERVER,
                buf: MsgBuf::new(ctx.size),
                _cleanup: None,
            })),
            note: None,
        })
    }
}

/// One end: sends messages of one type and receives the other.
struct MsgEnd {
    id: i32,
    tx_type: libc::c_long,
    rx_type: libc::c_long,
    /// The kernel's `mtype + mtext` layout, preallocated.
    buf: MsgBuf,
    /// Removes the queue (client end only); a removed queue gives the other
    /// end EIDRM, which `retry` reports as a closed channel.
    _cleanup: Option<Cleanup>,
}

impl Endpoint for MsgEnd {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        retry("msgsnd", || {
            sysv::msg_send(self.id, self.tx_type, msg, &mut self.buf)
        })
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let n = retry("msgrcv", || {
            sysv::msg_recv(self.id, self.rx_type, buf, &mut self.buf)
        })?;
        expect_len(buf.len(), n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::test_util::{echo_once, open};

    fn queue_exists(id: i32) -> bool {
        let text = std::fs::read_to_string("/proc/sysvipc/msg").unwrap();
        text.lines()
            .skip(1)
            .any(|l| l.split_whitespace().nth(1) == Some(&id.to_string()))
    }

    #[test]
    fn echoes_and_removes_its_queue() {
        let _keys = crate::engine::os::objects::sysv_test_lock();
        let limit = SysvMsg.size_limit().unwrap().max_bytes;
        for size in [1, 64, limit] {
            let mut ch = open(&SysvMsg, size);
            echo_once(&mut ch, size);
            drop(ch.server.take());
            // The id is not exposed; find our queue by the key's pid.
            let pid = crate::sys::process::getpid();
            let ids: Vec<i32> = std::fs::read_to_string("/proc/sysvipc/msg")
                .unwrap()
                .lines()
                .skip(1)
                .filter_map(|l| {
                    let mut c = l.split_whitespace();
                    let key: i64 = c.next()?.parse().ok()?;
                    let id: i32 = c.next()?.parse().ok()?;
                    (crate::engine::os::objects::pid_of_sysv_key(key) == Some(pid)).then_some(id)
                })
                .collect();
            assert!(!ids.is_empty());
            drop(ch);
            for id in ids {
                assert!(!queue_exists(id), "queue {id} left behind");
            }
        }
    }
}
