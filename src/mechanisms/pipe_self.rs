//! `pipe-self`: one process writes a message into its own pipe and reads it
//! back — the QNX study's "pipes without switching".

use super::common::StreamEnd;
use crate::engine::channel::*;
use crate::engine::os::limits::kernel_limit;
use crate::sys::fd::set_pipe_capacity;

/// Default pipe capacity on Linux (16 pages).
const DEFAULT_CAPACITY: usize = 65536;

/// One pipe, written and read by the same process: no peer, no context switch.
pub struct PipeSelf;

impl Mechanism for PipeSelf {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "pipe-self",
            summary: "one process writes its own pipe, then reads it back (no switch)",
            payload: Payload::Bytes,
            topology: Topology::SelfLoop,
            spins: false,
        }
    }

    fn size_limit(&self) -> Option<SizeLimit> {
        // The whole message must fit in the pipe, since nobody else drains it.
        let max = kernel_limit("/proc/sys/fs/pipe-max-size").unwrap_or(DEFAULT_CAPACITY);
        Some(SizeLimit {
            max_bytes: max,
            reason: format!("the message must fit in the pipe: fs.pipe-max-size = {max}"),
        })
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::No(
            "a self-loop: one process writes to itself, so there is no receiving side",
        )
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (rx, tx) = std::io::pipe().map_err(ChannelError::io("pipe"))?;
        if ctx.size > DEFAULT_CAPACITY {
            set_pipe_capacity(&tx, ctx.size).map_err(ChannelError::io("F_SETPIPE_SZ"))?;
        }
        Ok(Channel {
            client: Box::new(StreamEnd::new(rx, tx)),
            server: None,
            note: None,
        })
    }
}
