//! The calling thread's memory policy (`set_mempolicy(2)`): which NUMA node
//! the pages it faults in come from, so `ipcmark map --home` can say where a
//! channel's shared pages live.

use std::io;

/// Bits in the node mask passed to the kernel: enough for any node number
/// the kernel accepts (`MAX_NUMNODES` is at most 1024).
const MASK_BITS: usize = 1024;
const WORD_BITS: usize = u64::BITS as usize;

/// Prefers `node` for the calling thread's new pages (`MPOL_PREFERRED`), or
/// with `None` restores the default policy (pages from the node of the CPU
/// that faults them in). A thread or process started afterwards inherits it.
pub fn set_preferred_node(node: Option<usize>) -> io::Result<()> {
    let mut mask = [0u64; MASK_BITS / WORD_BITS];
    let mode = match node {
        Some(n) if n < MASK_BITS => {
            mask[n / WORD_BITS] |= 1 << (n % WORD_BITS);
            libc::MPOL_PREFERRED
        }
        Some(n) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("NUMA node {n} is beyond the kernel's limit of {MASK_BITS}"),
            ));
        }
        None => libc::MPOL_DEFAULT,
    };
    let (ptr, maxnode) = match node {
        Some(_) => (mask.as_ptr(), MASK_BITS as libc::c_ulong + 1),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: `ptr` is null or points to `mask`, which holds `maxnode - 1`
    // bits and lives across the call; the kernel only reads it.
    let ret = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) };
    super::cvt_long(ret).map(drop)
}

/// The calling thread's policy: `Some(node)` when it prefers one node,
/// `None` for the default policy (any other policy reads as `None` too).
#[cfg(test)]
pub fn preferred_node() -> io::Result<Option<usize>> {
    let mut mode: libc::c_int = 0;
    let mut mask = [0u64; MASK_BITS / WORD_BITS];
    // SAFETY: `mode` and `mask` are writable and outlive the call; `maxnode`
    // is the mask's size in bits, so the kernel writes within it.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut libc::c_int,
            mask.as_mut_ptr(),
            MASK_BITS as libc::c_ulong,
            std::ptr::null_mut::<libc::c_void>(),
            0 as libc::c_ulong,
        )
    };
    super::cvt_long(ret)?;
    if mode != libc::MPOL_PREFERRED {
        return Ok(None);
    }
    Ok((0..MASK_BITS).find(|&b| mask[b / WORD_BITS] & (1 << (b % WORD_BITS)) != 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_zero_is_preferred_then_the_default_is_restored() {
        // Node 0 exists on every Linux machine, NUMA or not; the test runs
        // in a thread of its own so the policy cannot leak into others.
        std::thread::spawn(|| {
            set_preferred_node(Some(0)).unwrap();
            assert_eq!(preferred_node().unwrap(), Some(0));
            set_preferred_node(None).unwrap();
            assert_eq!(preferred_node().unwrap(), None);
            assert!(set_preferred_node(Some(MASK_BITS)).is_err());
        })
        .join()
        .unwrap();
    }
}
