//! `syscall-create-unlink`: create a file on the disk file system, write
//! 1 KiB into it, close it and unlink it: the MINIX study's "create + write
//! 1 KB + delete", with the close made explicit.

use super::{CLOSE, DataFile, GROUP, OPEN, Place, UNLINK, WRITE, data_file, proc_self_io};
use crate::engine::channel::ChannelError;
use crate::engine::op::{Counter, Op, OpContext, OpInfo, Operation, Prepared};
use crate::sys::file;
use std::ffi::CString;

/// Bytes written into each new file.
const BYTES: usize = 1024;

/// `open(O_CREAT)` + `write` 1 KiB + `close` + `unlink`.
pub struct CreateUnlink;

impl Operation for CreateUnlink {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "syscall-create-unlink",
            summary: "create a file on the disk file system, write 1 KiB, close it, unlink it",
            group: GROUP,
            bytes: BYTES,
            enters: &[OPEN, WRITE, CLOSE, UNLINK],
            avoids: &[],
        }
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        // The data file only provides the directory (and its clean-up); the
        // created file sits beside it.
        let dir = data_file(ctx, Place::Disk, 0)?;
        let path = crate::sys::file::c_path(&dir.dir.join("new"))
            .map_err(ChannelError::io("file path"))?;
        let note = Some(dir.note.clone());
        Ok(Prepared {
            op: Box::new(CreateOp {
                path,
                buf: vec![0x5a; BYTES],
                counted: proc_self_io("wchar").is_some(),
                _dir: dir,
            }),
            note,
        })
    }
}

struct CreateOp {
    path: CString,
    buf: Vec<u8>,
    /// Whether /proc/self/io exists to count the bytes.
    counted: bool,
    _dir: DataFile,
}

impl Op for CreateOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        // No O_EXCL: a file left by an operation that failed half-way (the
        // kernel-entry probe fails each call in turn) is simply truncated.
        let fd = file::open(
            &self.path,
            libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            0o600,
        )
        .map_err(ChannelError::io("open (create)"))?;
        let n = file::write(&fd, &self.buf).map_err(ChannelError::io("write"))?;
        file::close(fd).map_err(ChannelError::io("close"))?;
        file::unlink(&self.path).map_err(ChannelError::io("unlink"))?;
        if n != BYTES {
            return Err(ChannelError::Check(format!(
                "write wrote {n} bytes, expected {BYTES}"
            )));
        }
        Ok(())
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        Ok(self.counted.then(|| Counter {
            source: "wchar in /proc/self/io (bytes written)",
            value: proc_self_io("wchar").unwrap_or(0),
            per_op: BYTES as u64,
        }))
    }
}
