//! System V message queues and semaphore sets (nix has neither).

use super::{cvt, cvt_long};
use std::io;

/// The permissions of every System V object ipcmark creates: the creating
/// user alone may use it. `ipcmark clean` also requires this exact mode of an
/// object before it removes one.
pub const MODE: u32 = 0o600;

/// Creates a message queue with `key` (fails if it exists).
pub fn msg_create(key: libc::key_t) -> io::Result<i32> {
    // SAFETY: plain system call.
    cvt(unsafe { libc::msgget(key, libc::IPC_CREAT | libc::IPC_EXCL | MODE as i32) })
}

/// A message buffer laid out as the kernel expects (`long mtype; char mtext[]`),
/// allocated once so that sending and receiving never allocate.
pub struct MsgBuf {
    words: Vec<libc::c_long>,
    text_len: usize,
}

impl MsgBuf {
    /// A buffer for messages of up to `text_len` bytes.
    pub fn new(text_len: usize) -> Self {
        let word = std::mem::size_of::<libc::c_long>();
        MsgBuf {
            words: vec![0; 1 + text_len.div_ceil(word)],
            text_len,
        }
    }

    fn text_ptr(&mut self) -> *mut u8 {
        // The text follows the mtype word.
        self.words[1..].as_mut_ptr().cast()
    }
}

/// Sends `text` as a message of type `mtype` (blocking).
#[inline]
pub fn msg_send(id: i32, mtype: libc::c_long, text: &[u8], buf: &mut MsgBuf) -> io::Result<()> {
    assert!(text.len() <= buf.text_len, "message larger than its buffer");
    buf.words[0] = mtype;
    // SAFETY: text fits in the buffer's text area (checked above); regions are distinct.
    unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), buf.text_ptr(), text.len()) };
    // SAFETY: words holds mtype followed by at least text.len() bytes.
    cvt(unsafe { libc::msgsnd(id, buf.words.as_ptr().cast(), text.len(), 0) }).map(|_| ())
}

/// Receives a message of type `mtype` into `out` (blocking); returns its length.
#[inline]
pub fn msg_recv(
    id: i32,
    mtype: libc::c_long,
    out: &mut [u8],
    buf: &mut MsgBuf,
) -> io::Result<usize> {
    let cap = buf.text_len;
    // SAFETY: the buffer has room for mtype plus `cap` bytes of text.
    let n = cvt_long(unsafe {
        libc::msgrcv(id, buf.words.as_mut_ptr().cast(), cap, mtype, 0) as libc::c_long
    })? as usize;
    let n_copy = n.min(out.len());
    // SAFETY: n_copy bytes are within both the received text and `out`.
    unsafe { std::ptr::copy_nonoverlapping(buf.text_ptr(), out.as_mut_ptr(), n_copy) };
    Ok(n)
}

/// Creates a set of `n` semaphores, all zero, with `key` (fails if it exists).
pub fn sem_create(key: libc::key_t, n: i32) -> io::Result<i32> {
    semget_new(key, n, MODE)
}

/// Creates a set of `n` semaphores with `key` and permissions `mode` (fails
/// if it exists): tests make objects that are not ipcmark's with it.
#[cfg(test)]
pub fn sem_create_with_mode(key: libc::key_t, n: i32, mode: u32) -> io::Result<i32> {
    semget_new(key, n, mode)
}

fn semget_new(key: libc::key_t, n: i32, mode: u32) -> io::Result<i32> {
    let flags = libc::IPC_CREAT | libc::IPC_EXCL | (mode & 0o777) as i32;
    // SAFETY: plain system call; new semaphores start at zero on Linux.
    cvt(unsafe { libc::semget(key, n, flags) })
}

/// Adds `delta` to semaphore `num` of set `id` (blocks while the result would be negative).
#[inline]
pub fn sem_op(id: i32, num: u16, delta: i16) -> io::Result<()> {
    let mut op = libc::sembuf {
        sem_num: num,
        sem_op: delta,
        sem_flg: 0,
    };
    // SAFETY: one valid sembuf.
    cvt(unsafe { libc::semop(id, &mut op, 1) }).map(|_| ())
}

/// One operation of an atomic [`sem_ops`] call: add `delta` to semaphore `num`.
pub fn sembuf(num: u16, delta: i16) -> libc::sembuf {
    libc::sembuf {
        sem_num: num,
        sem_op: delta,
        sem_flg: 0,
    }
}

/// Applies all of `ops` to set `id` as one atomic step: the call blocks until
/// every operation can proceed, and then performs them all together (or none).
#[inline]
pub fn sem_ops(id: i32, ops: &mut [libc::sembuf]) -> io::Result<()> {
    // SAFETY: ops is a valid array of ops.len() sembufs.
    cvt(unsafe { libc::semop(id, ops.as_mut_ptr(), ops.len()) }).map(|_| ())
}

/// Sets every semaphore of set `id` (values.len() must equal the set's size).
pub fn sem_set_all(id: i32, values: &[u16]) -> io::Result<()> {
    // SAFETY: SETALL reads nsems unsigned shorts from the array argument
    // (passed as the `array` member of union semun, a pointer); `values`
    // holds exactly that many.
    cvt(unsafe { libc::semctl(id, 0, libc::SETALL, values.as_ptr()) }).map(|_| ())
}

/// Reads every semaphore of set `id` in one atomic snapshot (the kernel holds
/// the set's lock while copying). `out.len()` must equal the set's size.
#[inline]
pub fn sem_get_all(id: i32, out: &mut [u16]) -> io::Result<()> {
    // SAFETY: GETALL writes nsems unsigned shorts through the array argument
    // (union semun's `array`, a pointer); `out` has room for exactly that many.
    cvt(unsafe { libc::semctl(id, 0, libc::GETALL, out.as_mut_ptr()) }).map(|_| ())
}

/// Removes a System V object by kind ("msg", "sem" or "shm") and id.
pub fn remove(kind: &str, id: i32) -> io::Result<()> {
    // SAFETY: IPC_RMID ignores the buffer argument, so null is allowed.
    let ret = unsafe {
        match kind {
            "msg" => libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()),
            "sem" => libc::semctl(id, 0, libc::IPC_RMID),
            "shm" => libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "unknown System V kind",
                ));
            }
        }
    };
    cvt(ret).map(|_| ())
}
