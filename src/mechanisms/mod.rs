//! The mechanisms: one file each, one line each in [`REGISTRY`].
//!
//! Everything user-facing about mechanisms (`ipcmark list`, argument
//! validation, docs tables, conformance tests) is derived from the registry.

mod common;
mod dbus;
mod dbus_wire;
mod dgram_common;
mod eventfd;
mod fifo;
mod io_uring;
mod memfd_pass;
mod pipe;
mod pipe_self;
mod posix_mq;
mod shm_common;
mod shm_condvar;
mod shm_eventfd;
mod shm_futex;
mod shm_loan;
mod shm_posix_sem;
mod shm_ring;
mod shm_spin;
mod shm_sysv_sem;
mod sig_common;
mod signal_handler;
mod signal_sigqueue;
mod signal_sigsuspend;
mod sysv_msg;
mod tcp;
#[cfg(test)]
mod test_util;
mod udp;
mod unix_packet;
mod unix_stream;
mod vm_copy;
mod vm_read;
mod vmsplice;

use crate::engine::channel::Mechanism;

pub use dbus::set_bus_address;

/// Every mechanism, in the order runs and tables show them.
pub static REGISTRY: &[&dyn Mechanism] = &[
    &pipe::Pipe,
    &pipe_self::PipeSelf,
    &vmsplice::Vmsplice,
    &fifo::Fifo::DISK,
    &fifo::Fifo::TMPFS,
    &unix_stream::UnixStreamPair,
    &unix_packet::UnixPacket::DGRAM,
    &unix_packet::UnixPacket::SEQPACKET,
    &memfd_pass::MemfdPass,
    &tcp::Tcp,
    &udp::Udp,
    &posix_mq::PosixMq,
    &sysv_msg::SysvMsg,
    &shm_posix_sem::ShmPosixSem,
    &shm_sysv_sem::ShmSysvSem,
    &shm_futex::ShmFutex,
    &shm_eventfd::ShmEventfd,
    &shm_spin::ShmSpin,
    &shm_condvar::ShmCondvar,
    &shm_loan::ShmLoan::FUTEX,
    &shm_loan::ShmLoan::SPIN,
    &io_uring::ShmIoUring,
    &eventfd::EventFd,
    &io_uring::IoUringMsg,
    &signal_sigsuspend::SignalSigsuspend,
    &signal_handler::SignalHandler,
    &signal_sigqueue::SignalSigqueue,
    &vm_copy::VmCopy,
    &vm_read::VmRead,
    &dbus::Dbus,
    &dbus::DbusP2p,
];

/// Finds a mechanism by id.
pub fn find(id: &str) -> Option<&'static dyn Mechanism> {
    REGISTRY.iter().copied().find(|m| m.info().id == id)
}

/// All ids, in registry order.
pub fn ids() -> Vec<&'static str> {
    REGISTRY.iter().map(|m| m.info().id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut seen = HashSet::new();
        for m in REGISTRY {
            let info = m.info();
            assert!(seen.insert(info.id), "duplicate id {}", info.id);
            assert!(
                !info.id.is_empty()
                    && info
                        .id
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "bad id {:?}",
                info.id
            );
            assert!(
                !info.summary.is_empty() && !info.summary.ends_with('.'),
                "summary of {}",
                info.id
            );
        }
    }

    #[test]
    fn find_matches_registry() {
        for id in ids() {
            assert_eq!(find(id).map(|m| m.info().id), Some(id));
        }
        assert!(find("no-such-mechanism").is_none());
    }
}
