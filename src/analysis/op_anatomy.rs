//! The anatomy of one operation of an op-mode benchmark (`ipcmark explain
//! syscall-getpid`, `sched-yield`, Rhealstone's task switch, …): a traced pass's
//! events and the measuring thread's stamps, one before each operation and
//! one after the last, cut each operation into exclusive parts of the
//! measuring thread's time, so the parts of every operation add up to it
//! exactly.
//!
//! There is one thread to follow, not a message between two: each
//! nanosecond goes to what the measuring thread is doing then. On a CPU:
//! `user` time, a system call by name, `irq+softirq` on its CPU meanwhile.
//! Off it, `switched out: …` says what its CPU runs instead: the
//! benchmark's other thread or process (`other thread: user`, `other
//! thread: sched_yield`, … — for a task switch this is the operation), a
//! process or thread it made during the pass (`child`: a fork's child, a
//! spawned program, known by `sched_process_fork`; their system calls are
//! not traced), a held load's process (`load`), another task, the idle task before any
//! wake-up (`idle`); once woken, the wake-up as the ping-pong anatomy cuts
//! it (`wake-up: idle exit`, `run-queue wait`, `irq+softirq`, `rest`). What
//! the events cannot say (a state not yet known) is the `residual`.
//!
//! `analysis::explain::decompose` is not used: with no server, a blocked
//! client's time is residual there, which for an operation that blocks
//! (a ring's read, a fork's wait4) would be most of it.

use crate::analysis::explain::{RESIDUAL, RoundTrip};
use crate::machine::tracefs::decode::{EventKind, TraceEvent};
use std::collections::{HashMap, HashSet};

/// The tasks of an op-mode pass, by thread id.
#[derive(Debug, Clone, Default)]
pub struct OpTasks {
    /// The measuring thread: the one that stamps the operations.
    pub thread: i32,
    /// The benchmark's other threads and processes, as they were when the
    /// pass began (a ring's members, Rhealstone's tasks).
    pub others: Vec<i32>,
    /// The processes of a load held during the pass (`--load`).
    pub load: Vec<i32>,
}

/// What the scheduler has the measuring thread doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sched {
    Unknown,
    Running(usize),
    /// Switched out asleep on `cpu`, not yet woken.
    Blocked(usize),
    /// Switched out still runnable on `cpu`.
    Preempted(usize),
    /// Woken for `cpu`; `queued` once `sched_wakeup` put it on that queue.
    Woken {
        cpu: usize,
        queued: bool,
    },
}

struct Sweep<'a> {
    tasks: OpTasks,
    others: HashSet<i32>,
    sched: Sched,
    /// `None`: not yet known; `Some(None)`: user space; `Some(Some(id))`:
    /// in system call `id`. Per thread, the measuring one's and the others'.
    syscall: HashMap<i32, Option<i64>>,
    /// The task running on each CPU (0: idle), as last switched.
    curr: HashMap<usize, i32>,
    /// Interrupt nesting per CPU.
    irq: HashMap<usize, u32>,
    /// Processes and threads the measuring thread or its others made
    /// during the pass (`sched_process_fork`: a fork's child, a spawned
    /// program), and theirs.
    children: HashSet<i32>,
    name: &'a dyn Fn(i64) -> String,
}

impl Sweep<'_> {
    fn in_irq(&self, cpu: usize) -> bool {
        self.irq.get(&cpu).is_some_and(|&d| d > 0)
    }

    fn doing(&self, tid: i32) -> Option<String> {
        match self.syscall.get(&tid)? {
            None => Some("user".into()),
            Some(id) => Some((self.name)(*id)),
        }
    }

    /// What `cpu` runs while the measuring thread is off it and not woken.
    fn instead(&self, cpu: usize) -> String {
        if self.in_irq(cpu) {
            return "switched out: irq+softirq".into();
        }
        match self.curr.get(&cpu) {
            None => RESIDUAL.into(),
            Some(0) => "switched out: idle".into(),
            Some(p) if self.others.contains(p) => match self.doing(*p) {
                Some(what) => format!("switched out: other thread: {what}"),
                None => "switched out: other thread".into(),
            },
            Some(p) if self.children.contains(p) => "switched out: child".into(),
            Some(p) if self.tasks.load.contains(p) => "switched out: load".into(),
            Some(_) => "switched out: another task".into(),
        }
    }

    /// The part the time from now until the next event goes to.
    fn part(&self) -> String {
        match self.sched {
            Sched::Running(cpu) if self.in_irq(cpu) => "irq+softirq".into(),
            Sched::Running(_) => self
                .doing(self.tasks.thread)
                .unwrap_or_else(|| RESIDUAL.into()),
            Sched::Blocked(cpu) | Sched::Preempted(cpu) => self.instead(cpu),
            Sched::Woken { cpu, .. } if self.in_irq(cpu) => {
                "switched out: wake-up: irq+softirq".into()
            }
            Sched::Woken { cpu, .. }
                if self
                    .curr
                    .get(&cpu)
                    .is_some_and(|p| *p != 0 && self.tasks.load.contains(p)) =>
            {
                "switched out: load".into()
            }
            Sched::Woken { cpu, queued } => match self.curr.get(&cpu) {
                Some(0) if !queued => "switched out: wake-up: idle exit".into(),
                Some(&other) if other != 0 => "switched out: wake-up: run-queue wait".into(),
                _ => "switched out: wake-up: rest".into(),
            },
            Sched::Unknown => RESIDUAL.into(),
        }
    }

    fn apply(&mut self, e: &TraceEvent) {
        let me = self.tasks.thread;
        match e.kind {
            EventKind::SysEnter { id } | EventKind::SysExit { id } => {
                let entering = matches!(e.kind, EventKind::SysEnter { .. });
                if e.pid == me || self.others.contains(&e.pid) {
                    self.syscall.insert(e.pid, entering.then_some(id));
                }
                if e.pid == me {
                    self.sched = Sched::Running(e.cpu);
                }
            }
            // A running thread's waking is a wake-up it no longer needs.
            EventKind::Waking { pid, target_cpu }
                if pid == me && !matches!(self.sched, Sched::Running(_)) =>
            {
                self.sched = Sched::Woken {
                    cpu: target_cpu.max(0) as usize,
                    queued: false,
                };
            }
            EventKind::Wakeup { pid, target_cpu } if pid == me => {
                if let Sched::Woken { .. } = self.sched {
                    self.sched = Sched::Woken {
                        cpu: target_cpu.max(0) as usize,
                        queued: true,
                    };
                }
            }
            EventKind::Switch {
                prev_pid,
                prev_runnable,
                next_pid,
                ..
            } => {
                self.curr.insert(e.cpu, next_pid);
                if prev_pid == me {
                    self.sched = if prev_runnable {
                        Sched::Preempted(e.cpu)
                    } else {
                        Sched::Blocked(e.cpu)
                    };
                }
                if next_pid == me {
                    self.sched = Sched::Running(e.cpu);
                }
            }
            EventKind::Fork { parent, child }
                if parent == me
                    || self.others.contains(&parent)
                    || self.children.contains(&parent) =>
            {
                self.children.insert(child);
            }
            EventKind::IrqEntry => *self.irq.entry(e.cpu).or_default() += 1,
            EventKind::IrqExit => {
                let d = self.irq.entry(e.cpu).or_default();
                *d = d.saturating_sub(1);
            }
            _ => {}
        }
    }
}

/// Cuts the operations between consecutive `stamps` (the measuring
/// thread's clock, on the trace's clock) into parts from `events` (ordered
/// by time). At each stamp the thread has just read the clock in user
/// space on a CPU: on `cpu` (where it was placed) until an event says
/// which. `name` names a system call by its number.
pub fn decompose_ops(
    events: &[TraceEvent],
    stamps: &[u64],
    tasks: OpTasks,
    cpu: Option<usize>,
    name: &dyn Fn(i64) -> String,
) -> Vec<RoundTrip> {
    let Some((&first, _)) = stamps.split_first() else {
        return Vec::new();
    };
    let mut sweep = Sweep {
        others: tasks.others.iter().copied().collect(),
        tasks,
        sched: Sched::Unknown,
        syscall: HashMap::new(),
        curr: HashMap::new(),
        irq: HashMap::new(),
        children: HashSet::new(),
        name,
    };
    let mut ops: Vec<RoundTrip> = RoundTrip::between(stamps);
    let mut last_cpu = cpu;
    // At a stamp the thread runs in user space (it reads the clock there).
    let at_stamp = |sweep: &mut Sweep, last_cpu: Option<usize>| {
        let cpu = match sweep.sched {
            Sched::Running(c) | Sched::Blocked(c) | Sched::Preempted(c) => Some(c),
            Sched::Woken { cpu, .. } => Some(cpu),
            Sched::Unknown => last_cpu,
        };
        if let Some(c) = cpu {
            sweep.sched = Sched::Running(c);
        }
        sweep.syscall.insert(sweep.tasks.thread, None);
    };
    let mut next_event = events.iter().peekable();
    while let Some(e) = next_event.next_if(|e| e.ts_ns <= first) {
        sweep.apply(e);
    }
    at_stamp(&mut sweep, last_cpu);
    let mut k = 0usize;
    let mut now = first;
    while k < ops.len() {
        let end = stamps[k + 1];
        let until = next_event.peek().map_or(end, |e| e.ts_ns.min(end));
        if until > now {
            *ops[k].parts.entry(sweep.part()).or_default() += until - now;
            now = until;
        }
        if now >= end {
            k += 1;
            at_stamp(&mut sweep, last_cpu);
            continue;
        }
        if let Some(e) = next_event.next() {
            sweep.apply(e);
            if let Sched::Running(c) = sweep.sched {
                last_cpu = Some(c);
            }
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::explain::summarise;

    const M: i32 = 100;
    const H: i32 = 200;
    const GETPID: i64 = 39;
    const YIELD: i64 = 24;

    fn name(id: i64) -> String {
        match id {
            GETPID => "getpid".into(),
            YIELD => "sched_yield".into(),
            n => format!("syscall {n}"),
        }
    }

    fn ev(ts_ns: u64, cpu: usize, pid: i32, kind: EventKind) -> TraceEvent {
        TraceEvent::new(ts_ns, cpu, pid, kind)
    }

    fn tasks(others: &[i32]) -> OpTasks {
        OpTasks {
            thread: M,
            others: others.to_vec(),
            load: Vec::new(),
        }
    }

    fn sum(op: &RoundTrip) -> u64 {
        op.parts.values().sum()
    }

    /// `n` getpids of 100 ns from 1000: user 20, the call 70, user 10;
    /// an interrupt of 15 ns inside the second call.
    fn getpids(n: u64) -> (Vec<TraceEvent>, Vec<u64>) {
        use EventKind::*;
        let mut events = Vec::new();
        let mut stamps = vec![1000];
        for i in 0..n {
            let t = 1000 + 100 * i;
            events.push(ev(t + 20, 0, M, SysEnter { id: GETPID }));
            if i == 1 {
                events.push(ev(t + 40, 0, M, IrqEntry));
                events.push(ev(t + 55, 0, M, IrqExit));
            }
            events.push(ev(t + 90, 0, M, SysExit { id: GETPID }));
            stamps.push(t + 100);
        }
        (events, stamps)
    }

    #[test]
    fn a_system_call_is_named_and_the_parts_add_up_exactly() {
        let (events, stamps) = getpids(3);
        let ops = decompose_ops(&events, &stamps, tasks(&[]), Some(0), &name);
        assert_eq!(ops.len(), 3);
        for op in &ops {
            assert_eq!(op.total_ns, 100);
            assert_eq!(sum(op), op.total_ns);
            assert_eq!(op.parts["user"], 30, "{:?}", op.parts);
            assert!(!op.parts.contains_key(RESIDUAL), "{:?}", op.parts);
        }
        assert_eq!(ops[0].parts["getpid"], 70);
        // The interrupt inside the second call is its own part.
        assert_eq!(ops[1].parts["getpid"], 55);
        assert_eq!(ops[1].parts["irq+softirq"], 15);
        let (centre, parts) = summarise(&ops);
        assert_eq!(centre.mean, 100.0);
        let total: f64 = parts.iter().map(|p| p.mean_ns).sum();
        assert!((total - 100.0).abs() < 1e-9);
        assert_eq!(parts.last().unwrap().name, RESIDUAL);
    }

    #[test]
    fn a_yield_to_the_other_thread_is_that_threads_time() {
        use EventKind::*;
        // M yields at 10, the helper H runs from 20 (returns from its own
        // sched_yield at 30, user to 40, yields again at 40), M back at 60.
        let switch = |ts, prev, next| {
            ev(
                ts,
                0,
                prev,
                Switch {
                    prev_pid: prev,
                    prev_runnable: true,
                    prev_stopped: false,
                    next_pid: next,
                },
            )
        };
        let events = vec![
            ev(0, 0, H, SysEnter { id: YIELD }),
            switch(1, H, M),
            ev(110, 0, M, SysEnter { id: YIELD }),
            switch(120, M, H),
            ev(130, 0, H, SysExit { id: YIELD }),
            ev(140, 0, H, SysEnter { id: YIELD }),
            switch(160, H, M),
            ev(170, 0, M, SysExit { id: YIELD }),
        ];
        let ops = decompose_ops(&events, &[100, 180], tasks(&[H]), Some(0), &name);
        let p = &ops[0].parts;
        assert_eq!(sum(&ops[0]), 80);
        assert_eq!(p["user"], 10 + 10);
        assert_eq!(p["sched_yield"], 10 + 10);
        assert_eq!(
            p["switched out: other thread: sched_yield"],
            10 + 20,
            "{p:?}"
        );
        assert_eq!(p["switched out: other thread: user"], 10, "{p:?}");
        // Not one of the benchmark's: another task.
        let ops = decompose_ops(&events, &[100, 180], tasks(&[]), Some(0), &name);
        assert_eq!(ops[0].parts["switched out: another task"], 40);
    }

    #[test]
    fn a_blocked_thread_waits_idle_then_is_woken() {
        use EventKind::*;
        // M blocks in a read at 20 on CPU 0 (idle from then); the helper on
        // CPU 1 wakes it at 50; an interrupt on CPU 0 50..55; queued at 60;
        // switched in at 70; the read returns at 80.
        const READ: i64 = 0;
        let events = vec![
            ev(110, 0, M, SysEnter { id: READ }),
            ev(
                120,
                0,
                M,
                Switch {
                    prev_pid: M,
                    prev_runnable: false,
                    prev_stopped: false,
                    next_pid: 0,
                },
            ),
            ev(
                150,
                1,
                H,
                Waking {
                    pid: M,
                    target_cpu: 0,
                },
            ),
            ev(150, 0, 0, IrqEntry),
            ev(155, 0, 0, IrqExit),
            ev(
                160,
                0,
                0,
                Wakeup {
                    pid: M,
                    target_cpu: 0,
                },
            ),
            ev(
                170,
                0,
                0,
                Switch {
                    prev_pid: 0,
                    prev_runnable: false,
                    prev_stopped: false,
                    next_pid: M,
                },
            ),
            ev(180, 0, M, SysExit { id: READ }),
        ];
        let ops = decompose_ops(&events, &[100, 200], tasks(&[H]), Some(0), &name);
        let p = &ops[0].parts;
        assert_eq!(sum(&ops[0]), 100);
        assert_eq!(p["user"], 10 + 20);
        assert_eq!(p["syscall 0"], 10 + 10);
        assert_eq!(p["switched out: idle"], 30);
        assert_eq!(p["switched out: wake-up: irq+softirq"], 5);
        assert_eq!(p["switched out: wake-up: idle exit"], 5);
        assert_eq!(p["switched out: wake-up: rest"], 10);
        assert!(crate::analysis::explain::is_wake_up(
            "switched out: wake-up: idle exit"
        ));
    }

    #[test]
    fn a_forked_child_running_while_the_thread_waits_is_the_childs() {
        use EventKind::*;
        const CHILD: i32 = 300;
        const STRANGER: i32 = 400;
        const CLONE: i64 = 56;
        const WAIT4: i64 = 61;
        let switch = |ts, prev, runnable, next| {
            ev(
                ts,
                0,
                prev,
                Switch {
                    prev_pid: prev,
                    prev_runnable: runnable,
                    prev_stopped: false,
                    next_pid: next,
                },
            )
        };
        let events = vec![
            ev(110, 0, M, SysEnter { id: CLONE }),
            ev(
                120,
                0,
                M,
                Fork {
                    parent: M,
                    child: CHILD,
                },
            ),
            ev(130, 0, M, SysExit { id: CLONE }),
            ev(140, 0, M, SysEnter { id: WAIT4 }),
            switch(150, M, false, CHILD),
            // The child exits; another process runs before the parent.
            switch(180, CHILD, false, STRANGER),
            ev(
                185,
                0,
                STRANGER,
                Waking {
                    pid: M,
                    target_cpu: 0,
                },
            ),
            switch(190, STRANGER, true, M),
            ev(195, 0, M, SysExit { id: WAIT4 }),
        ];
        let ops = decompose_ops(&events, &[100, 200], tasks(&[]), Some(0), &name);
        let p = &ops[0].parts;
        assert_eq!(sum(&ops[0]), 100);
        assert_eq!(p["switched out: child"], 30, "{p:?}");
        assert_eq!(p["switched out: another task"], 5, "{p:?}");
        assert_eq!(p["switched out: wake-up: run-queue wait"], 5, "{p:?}");
        assert_eq!(p["syscall 56"], 20);
        assert_eq!(p["syscall 61"], 10 + 5);
    }

    #[test]
    fn without_any_event_the_operation_is_user_time_and_without_a_cpu_residual() {
        let ops = decompose_ops(&[], &[0, 50, 100], tasks(&[]), Some(1), &name);
        assert_eq!(ops[0].parts["user"], 50);
        assert_eq!(ops[1].parts["user"], 50);
        let ops = decompose_ops(&[], &[0, 50], tasks(&[]), None, &name);
        assert_eq!(ops[0].parts[RESIDUAL], 50);
    }

    #[test]
    fn the_calls_of_the_op_benchmarks_are_named_by_this_architectures_numbers() {
        use crate::analysis::explain::syscall_name;
        let calls = [
            (libc::SYS_getpid, "getpid"),
            (libc::SYS_gettid, "gettid"),
            (libc::SYS_lseek, "lseek"),
            (libc::SYS_newfstatat, "newfstatat"),
            (libc::SYS_statx, "statx"),
            (libc::SYS_openat, "openat"),
            (libc::SYS_close, "close"),
            (libc::SYS_unlinkat, "unlinkat"),
            (libc::SYS_mmap, "mmap"),
            (libc::SYS_munmap, "munmap"),
            (libc::SYS_clone, "clone"),
            (libc::SYS_clone3, "clone3"),
            (libc::SYS_execve, "execve"),
            (libc::SYS_wait4, "wait4"),
            (libc::SYS_sched_yield, "sched_yield"),
            (libc::SYS_futex, "futex"),
            (libc::SYS_semop, "semop"),
            (libc::SYS_pread64, "pread64"),
            (libc::SYS_pwrite64, "pwrite64"),
            (libc::SYS_mq_timedsend, "mq_timedsend"),
            (libc::SYS_timerfd_settime, "timerfd_settime"),
            (libc::SYS_exit_group, "exit_group"),
        ];
        for (nr, want) in calls {
            assert_eq!(syscall_name(nr), want, "{nr}");
        }
    }
}
