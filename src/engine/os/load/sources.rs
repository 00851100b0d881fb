//! What each load process runs, in the forked child: an interrupt source,
//! a CPU kernel loop or a loopback flood. Each reports through its slot
//! and runs until the run kills it.

use super::kernels::{self, CpuKind};
use super::{IRQ_PRIORITY, LoadSpec, Slot, Where};
use crate::sys::clock::monotonic_ns;
use crate::sys::{sched, signal, timer};
use std::convert::Infallible;
use std::io;

/// Runs process `k`'s part of `spec` where `at` says; returns its exit code
/// (it only returns on failure, which it has written to its slot).
pub(super) fn run(spec: &LoadSpec, at: Where, cpus: &[usize], k: usize, slot: Slot<'_>) -> i32 {
    // The run stops its load itself (and a terminal's Ctrl-C reaches the
    // whole process group): a load process that left on its own would read
    // as a load that died.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let _ = signal::ignore(sig);
    }
    let placed = match at {
        Where::Cpu(c) => sched::pin_to_cpu(c).map_err(|e| format!("pin to CPU {c}: {e}")),
        Where::Cpus => sched::set_allowed_cpus(cpus).map_err(|e| format!("CPUs {cpus:?}: {e}")),
    };
    if let Err(e) = placed {
        slot.fail(&e);
        return 2;
    }
    let ended = match *spec {
        LoadSpec::Irq { frequency_hz, work } => {
            irq_source(frequency_hz, work.as_nanos() as u64, slot)
        }
        LoadSpec::Cpu { kind, .. } => cpu_kernels(kind, k as u64, slot),
        LoadSpec::Net { packets_per_s } => loopback_flood(packets_per_s, slot),
    };
    let Err(e) = ended;
    slot.fail(&e);
    3
}

/// Retries `f` while it fails with `EINTR`.
fn again<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// A periodic interrupt source: a timerfd (an hrtimer in the kernel) that
/// expires every `1/frequency` on the kernel's schedule, re-armed by the
/// interrupt itself as a periodic hardware timer is (re-arming it from the
/// handler cost a system call per expiry, ten times the handler's work on
/// a KVM guest); at each expiry the handler works for `work_ns`, stamped
/// at its start and end. Expirations that passed while the handler was
/// late are counted as missed (they coalesce, as a pending interrupt
/// does), never run.
fn irq_source(frequency_hz: f64, work_ns: u64, slot: Slot<'_>) -> Result<Infallible, String> {
    let period_ns = (1e9 / frequency_hz).round() as u64;
    // Above every benchmark's threads, as an interrupt is; without the
    // permission, under SCHED_OTHER (the figure's note says so).
    let fifo = sched::set_fifo(IRQ_PRIORITY).is_ok();
    let _ = sched::set_timer_slack(1);
    let tfd = timer::TimerFd::new().map_err(|e| format!("timerfd_create: {e}"))?;
    slot.running(fifo);
    tfd.expire_every(monotonic_ns() + period_ns, period_ns)
        .map_err(|e| format!("timerfd_settime: {e}"))?;
    loop {
        let expirations = again(|| tfd.wait()).map_err(|e| format!("read timerfd: {e}"))?;
        let t0 = monotonic_ns();
        // The handler's work: busy, as an interrupt handler is.
        let end = t0 + work_ns;
        let mut t1 = t0;
        while t1 < end {
            std::hint::spin_loop();
            t1 = monotonic_ns();
        }
        slot.add(1, expirations.saturating_sub(1), t1 - t0);
    }
}

/// Rounds of the application kernels, each checked, until killed.
fn cpu_kernels(kind: CpuKind, k: u64, slot: Slot<'_>) -> Result<Infallible, String> {
    slot.running(false);
    let mut buf = Vec::with_capacity(kernels::ROUND_WORDS);
    let mut round = 0u64;
    loop {
        round += 1;
        let seed = (k << 40) ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let bits = matches!(kind, CpuKind::Bitcount)
            || (kind == CpuKind::Mixed && round.is_multiple_of(2));
        if bits {
            kernels::bitcount_round(seed)?;
        } else {
            kernels::qsort_round(seed, &mut buf)?;
        }
        slot.add(1, 0, 0);
    }
}

/// Datagrams of 64 bytes from one loopback socket to another, paced in
/// 1 ms batches to `packets_per_s`, the receiver drained after each batch.
/// A send the kernel refuses (full buffers) is not retried: the flood is
/// bounded by its rate, never by how fast loopback goes.
fn loopback_flood(packets_per_s: u64, slot: Slot<'_>) -> Result<Infallible, String> {
    use std::net::UdpSocket;
    let rx = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    rx.set_nonblocking(true)
        .map_err(|e| format!("receiver non-blocking: {e}"))?;
    let tx = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
    tx.set_nonblocking(true)
        .map_err(|e| format!("sender non-blocking: {e}"))?;
    tx.connect(rx.local_addr().map_err(|e| e.to_string())?)
        .map_err(|e| format!("connect: {e}"))?;
    slot.running(false);
    let mut buf = [0u8; 64];
    let mut next = monotonic_ns();
    let mut owed = 0u64; // thousandths of a datagram carried to the next batch
    let mut seq = 0u64;
    loop {
        next += 1_000_000;
        let _ = again(|| timer::sleep_until_ns(next));
        owed += packets_per_s;
        let batch = owed / 1000;
        owed %= 1000;
        let mut sent = 0;
        for _ in 0..batch {
            buf[..8].copy_from_slice(&seq.to_le_bytes());
            seq += 1;
            if tx.send(&buf).is_ok() {
                sent += 1;
            }
        }
        let mut received = 0;
        while rx.recv(&mut buf).is_ok() {
            received += 1;
        }
        slot.add(sent, received, 0);
        // A batch that fell behind by more than a second starts afresh
        // rather than bursting to catch up.
        let now = monotonic_ns();
        if now > next + 1_000_000_000 {
            next = now;
        }
    }
}
