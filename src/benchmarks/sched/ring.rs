//! `sched-ctx-*`: lmbench's lat_ctx. A token (a sequence number) goes around
//! a ring of N members, processes or threads, all pinned to the measuring
//! thread's CPU and linked by pipes; member `i` reads from pipe `i − 1`,
//! sums its private working set, adds one to the token and writes it to pipe
//! `i`. The measuring thread is member 0, and one operation is one lap: N
//! switches, the token checked when it comes back.
//!
//! The baseline is the same passing within one process, with no switch: N
//! pipes each written and read back by the measuring thread, each followed by
//! the sum of one of N working sets. The engine subtracts it per lap and
//! divides by N.
//!
//! Processes are forked in `prepare`, while the measuring process is still
//! single-threaded; threads are only started for the thread ring, and hold no
//! lock the engine's probe child could inherit (they only read, sum and
//! write).

use super::{GROUP, READ, SWITCH_SOURCE, WRITE, place_helper, shared_cpu, switches};
use crate::engine::channel::{ChannelError, read_full, write_full};
use crate::engine::op::{Counter, Events, Op, OpContext, OpInfo, Operation, Prepared};
use crate::engine::os::interrupt;
use crate::sys::process::{self, Fork};
use crate::sys::signal;
use std::hint::black_box;
use std::io::{PipeReader, PipeWriter, pipe};
use std::thread::JoinHandle;

/// What the members of a ring are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Members {
    /// Processes forked from the measuring process.
    Processes,
    /// Threads of the measuring process.
    Threads,
}

/// A token ring of `size` members touching `working_set` bytes each per switch.
pub struct Ring {
    id: &'static str,
    summary: &'static str,
    size: usize,
    working_set: usize,
    members: Members,
}

const KB: usize = 1024;

impl Ring {
    const fn new(
        id: &'static str,
        summary: &'static str,
        size: usize,
        working_set: usize,
        members: Members,
    ) -> Ring {
        Ring {
            id,
            summary,
            size,
            working_set,
            members,
        }
    }

    /// 2 processes, no working set.
    pub const PROC_2: Ring = Ring::new(
        "sched-ctx-2",
        "token ring of 2 processes on one CPU over pipes (per switch, passing cost subtracted)",
        2,
        0,
        Members::Processes,
    );
    /// 2 processes, 16 KB each.
    pub const PROC_2_16K: Ring = Ring::new(
        "sched-ctx-2-16k",
        "token ring of 2 processes on one CPU, each summing 16 KB per switch",
        2,
        16 * KB,
        Members::Processes,
    );
    /// 2 processes, 64 KB each.
    pub const PROC_2_64K: Ring = Ring::new(
        "sched-ctx-2-64k",
        "token ring of 2 processes on one CPU, each summing 64 KB per switch",
        2,
        64 * KB,
        Members::Processes,
    );
    /// 8 processes, no working set.
    pub const PROC_8: Ring = Ring::new(
        "sched-ctx-8",
        "token ring of 8 processes on one CPU over pipes (per switch, passing cost subtracted)",
        8,
        0,
        Members::Processes,
    );
    /// 8 processes, 16 KB each.
    pub const PROC_8_16K: Ring = Ring::new(
        "sched-ctx-8-16k",
        "token ring of 8 processes on one CPU, each summing 16 KB per switch",
        8,
        16 * KB,
        Members::Processes,
    );
    /// 8 processes, 64 KB each.
    pub const PROC_8_64K: Ring = Ring::new(
        "sched-ctx-8-64k",
        "token ring of 8 processes on one CPU, each summing 64 KB per switch",
        8,
        64 * KB,
        Members::Processes,
    );
    /// 2 threads, no working set: a thread switch, to set beside `sched-ctx-2`.
    pub const THREADS_2: Ring = Ring::new(
        "sched-ctx-threads-2",
        "token ring of 2 threads of one process on one CPU over pipes (per switch)",
        2,
        0,
        Members::Threads,
    );
    /// 8 threads, no working set, to set beside `sched-ctx-8`.
    pub const THREADS_8: Ring = Ring::new(
        "sched-ctx-threads-8",
        "token ring of 8 threads of one process on one CPU over pipes (per switch)",
        8,
        0,
        Members::Threads,
    );
}

/// A working set of `bytes`, as words.
fn working_set(bytes: usize, fill: u64) -> Vec<u64> {
    vec![fill; bytes / 8]
}

/// Reads every word of the working set: what a member does with the token.
#[inline]
fn touch(ws: &[u64]) -> u64 {
    black_box(ws.iter().fold(0u64, |a, &w| a.wrapping_add(w)))
}

/// One token as it travels.
#[inline]
fn encode(t: u64) -> [u8; 8] {
    t.to_le_bytes()
}

/// What a ring member does until its input closes or the run stops: read
/// the token, sum the working set, pass the token on, one higher.
fn member_loop(mut input: PipeReader, mut output: PipeWriter, ws: &[u64]) {
    let mut buf = [0u8; 8];
    loop {
        if read_full(&mut input, &mut buf).is_err() {
            return;
        }
        touch(ws);
        let t = u64::from_le_bytes(buf).wrapping_add(1);
        if write_full(&mut output, &encode(t)).is_err() {
            return;
        }
    }
}

/// Marks a resynchronising token (see [`RingOp::resync`]); laps count from 1.
const SYNC: u64 = 1 << 63;

impl Operation for Ring {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: self.id,
            summary: self.summary,
            group: GROUP,
            bytes: 0,
            enters: &[WRITE, READ],
            avoids: &[],
        }
    }

    fn events(&self) -> Option<Events> {
        Some(switches(self.size as u32))
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let cpu = shared_cpu(ctx)?;
        let rt = ctx.rt_priority;
        let n = self.size;
        // Declared before the pipes, so dropped after them on an early
        // return: thread members end on end of file, and only then are joined.
        let mut ring = RingMembers {
            children: Vec::new(),
            threads: Vec::new(),
            tasks: vec!["/proc/thread-self/status".to_string()],
        };
        // pipe i carries the token from member i to member i + 1 (mod n).
        let mut readers = Vec::with_capacity(n);
        let mut writers = Vec::with_capacity(n);
        for _ in 0..n {
            let (r, w) = pipe().map_err(ChannelError::io("pipe"))?;
            readers.push(Some(r));
            writers.push(Some(w));
        }
        // The working sets exist before the fork; each member writes its own
        // at start, so that a forked member gets private pages (copy on
        // write), not the parent's.
        let mut sets: Vec<Vec<u64>> = (0..n)
            .map(|i| working_set(self.working_set, i as u64))
            .collect();
        for i in 1..n {
            let input = readers[i - 1].take().expect("each reader once");
            let output = writers[i].take().expect("each writer once");
            let mut ws = std::mem::take(&mut sets[i]);
            match self.members {
                Members::Processes => {
                    match process::fork().map_err(ChannelError::io("fork a ring member"))? {
                        Fork::Child => {
                            // Only this member's two ends stay open, so that the
                            // ring ends (EOF) when the parent closes its ends.
                            drop(readers);
                            drop(writers);
                            let placed = process::set_parent_death_signal(libc::SIGKILL)
                                .and_then(|_| place_helper(cpu, rt));
                            // The parent may have died before the death signal was set.
                            if placed.is_ok() && process::getppid() != 1 {
                                ws.fill(i as u64 + 1);
                                member_loop(input, output, &ws);
                            }
                            process::exit_now(0)
                        }
                        Fork::Parent(pid) => {
                            ring.children.push(pid);
                            ring.tasks.push(format!("/proc/{pid}/status"));
                        }
                    }
                }
                Members::Threads => {
                    let (tx, rx) = std::sync::mpsc::channel();
                    let handle = std::thread::Builder::new()
                        .name("ipcmark-ring".into())
                        .spawn(move || {
                            let placed = signal::block(&interrupt::signals_for_measuring_thread())
                                .and_then(|_| place_helper(cpu, rt))
                                .map(|_| process::gettid());
                            let ok = placed.is_ok();
                            let _ = tx.send(placed.map_err(|e| e.to_string()));
                            if ok {
                                ws.fill(i as u64 + 1);
                                member_loop(input, output, &ws);
                            }
                        })
                        .map_err(ChannelError::io("start a ring thread"))?;
                    ring.threads.push(handle);
                    let tid = rx
                        .recv()
                        .map_err(|_| ChannelError::Setup("a ring thread never started".into()))?
                        .map_err(|e| {
                            ChannelError::Setup(format!("place a ring thread on CPU {cpu}: {e}"))
                        })?;
                    ring.tasks.push(format!("/proc/self/task/{tid}/status"));
                }
            }
        }
        let mut own = std::mem::take(&mut sets[0]);
        own.fill(1);
        let to_next = writers[0].take().expect("member 0 writes pipe 0");
        let from_last = readers[n - 1].take().expect("member 0 reads pipe n-1");
        // The ends of the members are theirs now: closing the parent's copies
        // lets a member's death reach member 0 as end of file.
        drop(readers);
        drop(writers);

        let mut base_pipes = Vec::with_capacity(n);
        for _ in 0..n {
            base_pipes.push(pipe().map_err(ChannelError::io("pipe (baseline)"))?);
        }
        let base_sets = (0..n)
            .map(|i| working_set(self.working_set, i as u64 + 1))
            .collect();
        let what = match self.members {
            Members::Processes => "processes",
            Members::Threads => "threads",
        };
        Ok(Prepared {
            op: Box::new(RingOp {
                lap: 0,
                n: n as u64,
                ws: own,
                to_next: Some(to_next),
                from_last,
                ring,
                syncs: 0,
                baseline: Baseline {
                    pipes: base_pipes,
                    sets: base_sets,
                    token: 0,
                },
            }),
            note: Some(format!(
                "{n} {what} on CPU {cpu}, {} KB working set each",
                self.working_set / KB
            )),
        })
    }
}

/// The other members: killed and reaped (processes) or joined (threads) on drop.
struct RingMembers {
    children: Vec<libc::pid_t>,
    threads: Vec<JoinHandle<()>>,
    /// /proc status file of every member, member 0 first.
    tasks: Vec<String>,
}

impl Drop for RingMembers {
    fn drop(&mut self) {
        for &pid in &self.children {
            process::kill_and_reap(pid);
        }
        // The threads end on end of file, once member 0's write end is closed
        // (RingOp closes it before dropping this).
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

struct RingOp {
    lap: u64,
    n: u64,
    ws: Vec<u64>,
    /// Taken (closed) first on drop, so thread members see end of file.
    to_next: Option<PipeWriter>,
    from_last: PipeReader,
    ring: RingMembers,
    syncs: u64,
    baseline: Baseline,
}

impl Drop for RingOp {
    fn drop(&mut self) {
        drop(self.to_next.take());
    }
}

impl RingOp {
    /// Sends a marked token around and discards every token that arrives
    /// before it: a token the engine's probe child sent (it ran one lap and
    /// was stopped before reading the token back) must not be taken for a
    /// later lap's.
    fn resync(&mut self) -> Result<(), ChannelError> {
        self.syncs += 1;
        let mark = SYNC | self.syncs;
        let w = self.to_next.as_mut().ok_or(ChannelError::Closed)?;
        write_full(w, &encode(mark))?;
        let want = mark.wrapping_add(self.n - 1);
        let mut buf = [0u8; 8];
        let _wd = interrupt::Watchdog::arm(std::time::Duration::from_secs(10));
        loop {
            read_full(&mut self.from_last, &mut buf)?;
            let got = u64::from_le_bytes(buf);
            if got == want {
                return Ok(());
            }
            if got & SYNC != 0 {
                return Err(ChannelError::Sequence {
                    expected: want,
                    got,
                });
            }
        }
    }
}

impl Op for RingOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        self.lap += 1;
        let w = self.to_next.as_mut().ok_or(ChannelError::Closed)?;
        write_full(w, &encode(self.lap))?;
        let mut buf = [0u8; 8];
        read_full(&mut self.from_last, &mut buf)?;
        touch(&self.ws);
        let got = u64::from_le_bytes(buf);
        let expected = self.lap + self.n - 1;
        if got != expected {
            return Err(ChannelError::Sequence { expected, got });
        }
        Ok(())
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        // Called outside timed regions, before the first timed lap: the
        // place to drop a stray token.
        self.resync()?;
        let mut total = 0;
        for t in &self.ring.tasks {
            total += super::switches_in(t)?;
        }
        Ok(Some(Counter {
            source: SWITCH_SOURCE,
            value: total,
            per_op: self.n,
        }))
    }

    fn baseline(&mut self) -> Option<&mut dyn Op> {
        Some(&mut self.baseline)
    }
}

/// The token passing of a lap without the switches: each of N pipes written
/// and read back by the same thread, each followed by the sum of one of N
/// working sets.
struct Baseline {
    pipes: Vec<(PipeReader, PipeWriter)>,
    sets: Vec<Vec<u64>>,
    token: u64,
}

impl Op for Baseline {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        let mut buf = [0u8; 8];
        for ((r, w), ws) in self.pipes.iter_mut().zip(&self.sets) {
            self.token += 1;
            write_full(w, &encode(self.token))?;
            read_full(r, &mut buf)?;
            touch(ws);
            if u64::from_le_bytes(buf) != self.token {
                return Err(ChannelError::Sequence {
                    expected: self.token,
                    got: u64::from_le_bytes(buf),
                });
            }
        }
        Ok(())
    }
}
