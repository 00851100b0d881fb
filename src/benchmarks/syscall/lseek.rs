//! `syscall-lseek`: `lseek` on an open file of the disk file system.

use super::{GROUP, LSEEK, Place, data_file};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::file;
use std::os::fd::OwnedFd;

/// The offset every call sets (inside the file, so any file system accepts it).
const OFFSET: i64 = 1024;

/// `lseek(fd, 1024, SEEK_SET)`.
pub struct Lseek;

impl Operation for Lseek {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "syscall-lseek",
            summary: "lseek(fd, 1024, SEEK_SET) on a 4 KiB file of the disk file system",
            group: GROUP,
            bytes: 0,
            enters: &[LSEEK],
            avoids: &[],
        }
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let data = data_file(ctx, Place::Disk, 4096)?;
        let fd = file::open(&data.path, libc::O_RDONLY, 0).map_err(ChannelError::io("open"))?;
        let note = Some(data.note.clone());
        Ok(Prepared {
            op: Box::new(LseekOp { fd, _data: data }),
            note,
        })
    }
}

struct LseekOp {
    fd: OwnedFd,
    // Last: the directory goes after the descriptor is closed.
    _data: super::DataFile,
}

impl Op for LseekOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let at =
            file::lseek(&self.fd, OFFSET, libc::SEEK_SET).map_err(ChannelError::io("lseek"))?;
        if at != OFFSET {
            return Err(ChannelError::Check(format!(
                "lseek returned offset {at}, expected {OFFSET}"
            )));
        }
        Ok(())
    }
}
