//! `syscall-mmap`: map 4 KiB of anonymous private memory and unmap it. The
//! page is never touched, so no page fault is part of the figure: only the
//! creation and removal of the mapping.

use super::{GROUP, MMAP, MUNMAP};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::mem::SharedMapping;

/// Bytes mapped.
const LEN: usize = 4096;

/// `mmap` 4 KiB + `munmap`.
pub struct Mmap;

impl Operation for Mmap {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "syscall-mmap",
            summary: "mmap of 4 KiB anonymous private memory, then munmap (the page is never touched)",
            group: GROUP,
            bytes: 0,
            enters: &[MMAP, MUNMAP],
            avoids: &[],
        }
    }

    fn prepare(&self, _ctx: &OpContext) -> Result<Prepared, ChannelError> {
        Ok(Prepared {
            op: Box::new(MmapOp),
            note: None,
        })
    }
}

struct MmapOp;

impl Op for MmapOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let m = SharedMapping::new_private(LEN).map_err(ChannelError::io("mmap"))?;
        if m.len() != LEN {
            return Err(ChannelError::Check(format!(
                "mapped {} bytes, expected {LEN}",
                m.len()
            )));
        }
        m.unmap().map_err(ChannelError::io("munmap"))
    }
}
