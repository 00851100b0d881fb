//! `syscall-open-close`: `open` of a file on the disk file system for
//! reading, then `close`.

use super::{CLOSE, DataFile, GROUP, OPEN, Place, data_file};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::file;

/// `open(path, O_RDONLY)` + `close`.
pub struct OpenClose;

impl Operation for OpenClose {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "syscall-open-close",
            summary: "open of a file on the disk file system for reading, then close",
            group: GROUP,
            bytes: 0,
            enters: &[OPEN, CLOSE],
            avoids: &[],
        }
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let data = data_file(ctx, Place::Disk, 4096)?;
        let note = Some(data.note.clone());
        Ok(Prepared {
            op: Box::new(OpenCloseOp { data }),
            note,
        })
    }
}

struct OpenCloseOp {
    data: DataFile,
}

impl Op for OpenCloseOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let fd =
            file::open(&self.data.path, libc::O_RDONLY, 0).map_err(ChannelError::io("open"))?;
        // close's error is reported, not dropped: it is half the operation.
        file::close(fd).map_err(ChannelError::io("close"))
    }
}
