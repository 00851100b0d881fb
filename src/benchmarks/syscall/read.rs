//! `syscall-read-tmpfs`, `syscall-read-disk`: `pread` of 64 KiB from a file
//! whose pages are in the page cache, on tmpfs or on the disk file system.
//! Always the same 64 KiB at offset 0: the copy to user space from cached
//! pages, with no device I/O.

use super::{DataFile, GROUP, PREAD, Place, RW_BYTES, data_file, proc_self_io};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Counter, Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::file;
use std::os::fd::OwnedFd;

/// 64 KiB `pread` from a cached file.
pub struct Read {
    place: Place,
}

impl Read {
    /// `syscall-read-tmpfs`: the file is on tmpfs.
    pub const TMPFS: Read = Read {
        place: Place::Tmpfs,
    };
    /// `syscall-read-disk`: the file is on the disk file system, in the page cache.
    pub const DISK: Read = Read { place: Place::Disk };
}

impl Operation for Read {
    fn info(&self) -> OpInfo {
        let (id, summary) = match self.place {
            Place::Tmpfs => (
                "syscall-read-tmpfs",
                "pread of 64 KiB from a file on tmpfs (/dev/shm)",
            ),
            Place::Disk => (
                "syscall-read-disk",
                "pread of 64 KiB from a file on the disk file system, in the page cache",
            ),
        };
        OpInfo {
            id,
            summary,
            group: GROUP,
            bytes: RW_BYTES,
            enters: &[PREAD],
            avoids: &[],
        }
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let data = data_file(ctx, self.place, RW_BYTES)?;
        let fd = file::open(&data.path, libc::O_RDONLY, 0).map_err(ChannelError::io("open"))?;
        let note = Some(data.note.clone());
        Ok(Prepared {
            op: Box::new(ReadOp {
                fd,
                buf: vec![0u8; RW_BYTES],
                counted: proc_self_io("rchar").is_some(),
                _data: data,
            }),
            note,
        })
    }
}

struct ReadOp {
    fd: OwnedFd,
    buf: Vec<u8>,
    /// Whether /proc/self/io exists to count the bytes.
    counted: bool,
    // Last: the directory goes after the descriptor is closed.
    _data: DataFile,
}

impl Op for ReadOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let n = file::pread(&self.fd, &mut self.buf, 0).map_err(ChannelError::io("pread"))?;
        if n != RW_BYTES {
            return Err(ChannelError::Check(format!(
                "pread returned {n} bytes, expected {RW_BYTES}"
            )));
        }
        Ok(())
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        Ok(self.counted.then(|| Counter {
            source: "rchar in /proc/self/io (bytes read)",
            value: proc_self_io("rchar").unwrap_or(0),
            per_op: RW_BYTES as u64,
        }))
    }
}
