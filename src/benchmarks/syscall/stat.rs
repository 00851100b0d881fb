//! `syscall-stat`: `stat` of a file on the disk file system, by its path
//! (the lookup of every component is part of the call).

use super::{DataFile, GROUP, Place, STAT, data_file};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::file;

/// Size of the file stat reports on.
const SIZE: usize = 4096;

/// `stat(path)`.
pub struct Stat;

impl Operation for Stat {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "syscall-stat",
            summary: "stat of a file on the disk file system by its path, inode and size checked",
            group: GROUP,
            bytes: 0,
            enters: &[STAT],
            avoids: &[],
        }
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let data = data_file(ctx, Place::Disk, SIZE)?;
        let note = Some(data.note.clone());
        Ok(Prepared {
            op: Box::new(StatOp { data }),
            note,
        })
    }
}

struct StatOp {
    data: DataFile,
}

impl Op for StatOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let st = file::stat(&self.data.path).map_err(ChannelError::io("stat"))?;
        if st.ino != self.data.ino || st.size != SIZE as i64 {
            return Err(ChannelError::Check(format!(
                "stat reported inode {} size {}, expected inode {} size {SIZE}",
                st.ino, st.size, self.data.ino
            )));
        }
        Ok(())
    }
}
