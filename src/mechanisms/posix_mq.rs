//! `posix-mq`: two POSIX message queues, one per direction.

use crate::engine::channel::*;
use crate::engine::os::limits::kernel_limit;
use crate::sys::posix_ipc::{MessageQueue, mq_unlink};
use std::sync::Arc;

/// Linux's default fs.mqueue.msgsize_max.
const DEFAULT_MSGSIZE_MAX: usize = 8192;

/// Ping-pong never has more than one message in a queue.
const MAX_MSGS: usize = 1;

/// Linux's default fs.mqueue.msg_max: the deepest queue an unprivileged
/// process may create.
const DEFAULT_MSG_MAX: usize = 10;

/// mq_send / mq_receive on two queues.
pub struct PosixMq;

impl Mechanism for PosixMq {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "posix-mq",
            summary: "two POSIX message queues, one per direction (mq_send/mq_receive)",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn size_limit(&self) -> Option<SizeLimit> {
        // Root may exceed it (CAP_SYS_RESOURCE), but figures should not depend
        // on who runs them.
        let max = kernel_limit("/proc/sys/fs/mqueue/msgsize_max").unwrap_or(DEFAULT_MSGSIZE_MAX);
        Some(SizeLimit {
            max_bytes: max,
            reason: format!("fs.mqueue.msgsize_max = {max}"),
        })
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        channel(ctx, MAX_MSGS, None)
    }

    /// A stream needs a queue that can hold several messages: the one to the
    /// server is as deep as fs.mqueue.msg_max allows (without privilege).
    fn open_stream(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let depth = kernel_limit("/proc/sys/fs/mqueue/msg_max")
            .unwrap_or(DEFAULT_MSG_MAX)
            .max(1);
        channel(
            ctx,
            depth,
            Some(format!("queue of {depth} messages (fs.mqueue.msg_max)")),
        )
    }
}

/// Two queues of `size` bytes; the one towards the server holds `depth` messages.
fn channel(ctx: &OpenContext, depth: usize, note: Option<String>) -> Result<Channel, ChannelError> {
    let to_server = Arc::new(open_unlinked(ctx, depth, ctx.size)?);
    let to_client = Arc::new(open_unlinked(ctx, MAX_MSGS, ctx.size)?);
    Ok(Channel {
        client: Box::new(MqEnd {
            rx: to_client.clone(),
            tx: to_server.clone(),
        }),
        server: Some(Box::new(MqEnd {
            rx: to_server,
            tx: to_client,
        })),
        note,
    })
}

/// Creates a queue and removes its name at once: both ends hold the
/// descriptor (a forked peer inherits it), so nothing is left even after
/// kill -9, whether or not /dev/mqueue is mounted.
fn open_unlinked(
    ctx: &OpenContext,
    depth: usize,
    size: usize,
) -> Result<MessageQueue, ChannelError> {
    let made = ctx.names.create_named("mq", |name| {
        MessageQueue::create(&format!("/{name}"), depth, size)
    });
    let (name, q) = made.map_err(|e| match e.raw_os_error() {
        Some(libc::EMFILE) | Some(libc::ENOMEM) => ChannelError::Setup(format!(
            "mq_open: {e}: two queues of {size} B exceed RLIMIT_MSGQUEUE (ulimit -q) \
                 or the descriptor limit (ulimit -n)"
        )),
        Some(libc::ENOSPC) => ChannelError::Setup(format!(
            "mq_open: {e}: too many queues (fs.mqueue.queues_max)"
        )),
        _ => ChannelError::Io {
            op: "mq_open",
            source: e,
        },
    })?;
    mq_unlink(&format!("/{name}")).map_err(ChannelError::io("mq_unlink"))?;
    Ok(q)
}

/// One end: sends on one queue, receives on the other. The queues are shared
/// with the other end when it is a thread.
struct MqEnd {
    rx: Arc<MessageQueue>,
    tx: Arc<MessageQueue>,
}

impl Endpoint for MqEnd {
    #[inline]
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        retry("mq_send", || self.tx.send(msg))
    }

    #[inline]
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let n = retry("mq_receive", || self.rx.receive(buf))?;
        expect_len(buf.len(), n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::test_util::echo_sizes;

    #[test]
    fn echoes_up_to_the_limit() {
        let limit = PosixMq.size_limit().unwrap().max_bytes;
        echo_sizes(&PosixMq, &[1, 64, limit]);
    }
}
