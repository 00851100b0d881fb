//! `fifo` and `fifo-tmpfs`: two named FIFOs, one per direction, in a fresh
//! directory on disk or on tmpfs (the QNX study's RAM disk).
//!
//! The data path is the kernel's pipe buffer either way; what the file system
//! adds is the inode: every write updates the FIFO's mtime/ctime and every
//! read its atime, through that file system.

use super::common::StreamEnd;
use crate::engine::channel::*;
use crate::engine::os::objects::{Cleanup, disk_temp_base, tmpfs_base};
use crate::sys::fd::{fs_type, mkfifo, set_nonblocking};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Where the FIFOs' directory goes.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// `$TMPDIR`, else `/var/tmp`.
    Disk,
    /// `/dev/shm`.
    Tmpfs,
}

/// Two named FIFOs between the client and the echo server.
pub struct Fifo {
    place: Place,
}

impl Fifo {
    /// `fifo`: on the disk file system.
    pub const DISK: Fifo = Fifo { place: Place::Disk };
    /// `fifo-tmpfs`: on tmpfs.
    pub const TMPFS: Fifo = Fifo {
        place: Place::Tmpfs,
    };

    fn base(&self) -> PathBuf {
        match self.place {
            Place::Disk => disk_temp_base(),
            Place::Tmpfs => tmpfs_base(),
        }
    }
}

impl Mechanism for Fifo {
    fn info(&self) -> MechanismInfo {
        let (id, summary) = match self.place {
            Place::Disk => (
                "fifo",
                "two named FIFOs on the disk file system ($TMPDIR or /var/tmp), one per direction",
            ),
            Place::Tmpfs => (
                "fifo-tmpfs",
                "two named FIFOs on tmpfs (/dev/shm, a RAM disk), one per direction",
            ),
        };
        MechanismInfo {
            id,
            summary,
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::Queued
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let base = self.base();
        let dir = ctx
            .names
            .temp_dir(&base, "fifo")
            .map_err(ChannelError::io("create FIFO directory"))?;
        // Armed at once so that any failure below still removes the directory.
        // The FIFOs stay in it until the figure ends: they are measured as
        // named FIFOs on that file system.
        let cleanup = Cleanup::remove_tree(dir.clone(), &["to-server", "to-client"]);
        let (to_server_rx, to_server_tx) = fifo_pair(&dir.join("to-server"))?;
        let (to_client_rx, to_client_tx) = fifo_pair(&dir.join("to-client"))?;
        let note = match fs_type(&base) {
            Ok(fs) => format!("FIFOs in {} ({fs})", base.display()),
            Err(_) => format!("FIFOs in {}", base.display()),
        };
        Ok(Channel {
            client: Box::new(StreamEnd::with_cleanup(
                to_client_rx,
                to_server_tx,
                vec![cleanup],
            )),
            server: Some(Box::new(StreamEnd::new(to_server_rx, to_client_tx))),
            note: Some(note),
        })
    }
}

/// Creates a FIFO at `path` and opens its read and write ends, in one process.
///
/// A blocking open of either end waits for the other, so the read end is
/// opened non-blocking first (it succeeds with no writer), then the write end
/// (it succeeds because a reader exists), then the read end is made blocking.
/// Each end is one-directional, so a dead peer gives end-of-file or EPIPE.
fn fifo_pair(path: &Path) -> Result<(File, File), ChannelError> {
    mkfifo(path).map_err(ChannelError::io("mkfifo"))?;
    let rx = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(ChannelError::io("open FIFO for reading"))?;
    let tx = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(ChannelError::io("open FIFO for writing"))?;
    set_nonblocking(&rx, false).map_err(ChannelError::io("fcntl O_NONBLOCK"))?;
    Ok((rx, tx))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::os::objects::{NameOwner, Owner, owner_of_name};
    use crate::mechanisms::test_util::{echo_once, open};

    #[test]
    fn echoes_and_removes_its_directory() {
        for mech in [&Fifo::DISK, &Fifo::TMPFS] {
            let base = mech.base();
            let mut ch = open(mech, 4096);
            echo_once(&mut ch, 4096);
            let note = ch.note.take().unwrap();
            assert!(note.starts_with("FIFOs in "), "{note}");
            let me = NameOwner::Recorded(Owner::current());
            let ours = || {
                std::fs::read_dir(&base)
                    .unwrap()
                    .flatten()
                    .filter(|e| {
                        owner_of_name(&e.file_name().to_string_lossy())
                            .is_some_and(|(o, what)| o == me && what.starts_with("fifo-"))
                    })
                    .count()
            };
            assert!(ours() >= 1);
            drop(ch);
            assert_eq!(ours(), 0, "FIFO directory left in {}", base.display());
        }
    }
}
