//! `syscall-write-tmpfs`, `syscall-write-disk`: `pwrite` of 64 KiB over the
//! cached pages of a file, on tmpfs or on the disk file system. Always the
//! same 64 KiB at offset 0: the copy from user space into the page cache and
//! the file's time stamps; write-back to the device happens later, outside
//! the call.

use super::{DataFile, GROUP, PWRITE, Place, RW_BYTES, data_file, proc_self_io};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Counter, Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::file;
use std::os::fd::OwnedFd;

/// 64 KiB `pwrite` into a cached file.
pub struct Write {
    place: Place,
}

impl Write {
    /// `syscall-write-tmpfs`: the file is on tmpfs.
    pub const TMPFS: Write = Write {
        place: Place::Tmpfs,
    };
    /// `syscall-write-disk`: the file is on the disk file system, in the page cache.
    pub const DISK: Write = Write { place: Place::Disk };
}

impl Operation for Write {
    fn info(&self) -> OpInfo {
        let (id, summary) = match self.place {
            Place::Tmpfs => (
                "syscall-write-tmpfs",
                "pwrite of 64 KiB over a file on tmpfs (/dev/shm)",
            ),
            Place::Disk => (
                "syscall-write-disk",
                "pwrite of 64 KiB over a cached file on the disk file system (no fsync)",
            ),
        };
        OpInfo {
            id,
            summary,
            group: GROUP,
            bytes: RW_BYTES,
            enters: &[PWRITE],
            avoids: &[],
        }
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let data = data_file(ctx, self.place, RW_BYTES)?;
        let fd = file::open(&data.path, libc::O_WRONLY, 0).map_err(ChannelError::io("open"))?;
        let note = Some(data.note.clone());
        Ok(Prepared {
            op: Box::new(WriteOp {
                fd,
                buf: (0..RW_BYTES).map(|i| (i % 241) as u8).collect(),
                counted: proc_self_io("wchar").is_some(),
                _data: data,
            }),
            note,
        })
    }
}

struct WriteOp {
    fd: OwnedFd,
    buf: Vec<u8>,
    /// Whether /proc/self/io exists to count the bytes.
    counted: bool,
    // Last: the directory goes after the descriptor is closed.
    _data: DataFile,
}

impl Op for WriteOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let n = file::pwrite(&self.fd, &self.buf, 0).map_err(ChannelError::io("pwrite"))?;
        if n != RW_BYTES {
            return Err(ChannelError::Check(format!(
                "pwrite wrote {n} bytes, expected {RW_BYTES}"
            )));
        }
        Ok(())
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        Ok(self.counted.then(|| Counter {
            source: "wchar in /proc/self/io (bytes written)",
            value: proc_self_io("wchar").unwrap_or(0),
            per_op: RW_BYTES as u64,
        }))
    }
}
