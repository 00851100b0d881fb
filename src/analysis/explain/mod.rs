//! The anatomy of a round trip (`ipcmark explain`): a traced pass's events
//! and the client's stamps, one per round trip, cut each round trip into
//! exclusive parts along its critical path, so the parts of every round trip
//! add up to it exactly.
//!
//! The critical path is the task that holds the message (the *token*),
//! along the message's path: client, server, client; or, where a third
//! task relays every message (a broker: [`Tasks::relays`]), client,
//! broker, server, broker, client. The client holds it at each stamp; the
//! next task on the path takes it when the holder's side wakes it
//! (`sched_waking` of its task), or, where the holder sleeps while the next
//! task is already running (a broker busy when the message came needs no
//! wake-up), then. A broker seen to wake the hop after it takes the message
//! even where its own wake-up was not seen. Each nanosecond goes to what the
//! holder is doing then, as the events say: user time, a system call by
//! name, a wake-up (`sched_waking` → `sched_switch` to it: *idle exit*
//! while its CPU runs the idle task before the wake-up is queued there
//! (`sched_wakeup`), *run-queue wait* while another task runs there, *rest*
//! for the switch itself), *preempted* (switched out still runnable), and
//! interrupt or softirq time on the holder's CPU meanwhile; each part is
//! named after the holder's role ("client", "server", "broker"). What the
//! events cannot say (a holder asleep without a wake-up seen, a task whose
//! state is not yet known) is the *residual*. Nothing here names a
//! mechanism: system calls are named from the kernel's table of numbers
//! ([`syscall_name`]).

use crate::machine::tracefs::decode::{EventKind, TraceEvent};
use crate::record::explain::{PartRecord, RoundTripRecord};
use crate::stats::quantile_sorted;
use std::collections::{BTreeMap, HashMap};

/// The name of the part that no event accounts for.
pub const RESIDUAL: &str = "residual";

/// What a side's part behind a held load's interrupt handler ends with.
const HANDLER: &str = "irq handler (load)";

/// The word that begins a relaying task's parts.
pub const BROKER: &str = "broker";

/// A task's role on the message's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Client,
    Server,
    Broker,
}

impl Role {
    fn word(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
            Role::Broker => BROKER,
        }
    }
}

/// What the scheduler has a task doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sched {
    Unknown,
    Running(usize),
    Blocked,
    /// Woken for `cpu`; `queued` once `sched_wakeup` put it on that CPU's queue.
    Woken {
        cpu: usize,
        queued: bool,
    },
    Preempted(usize),
}

impl Sched {
    /// Asleep, or not yet known to be doing anything.
    fn asleep(self) -> bool {
        matches!(self, Sched::Blocked | Sched::Unknown)
    }
}

/// One traced task.
#[derive(Debug, Clone, Copy)]
struct Task {
    sched: Sched,
    /// `None`: not yet known; `Some(None)`: in user space; `Some(Some(id))`:
    /// in system call `id`.
    syscall: Option<Option<i64>>,
    /// Woken (`sched_waking`, for this CPU) while still on its CPU going to
    /// sleep: its switch out is then a wake-up under way, not a sleep.
    pending: Option<usize>,
}

/// The parts of one round trip, ns, the residual included.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundTrip {
    /// From its stamp to the next, ns.
    pub total_ns: u64,
    /// Each part's time, ns; they add up to `total_ns`.
    pub parts: BTreeMap<String, u64>,
}

/// The tasks of a figure, by thread id; a self-loop has no server.
#[derive(Debug, Clone)]
pub struct Tasks {
    /// The measuring thread.
    pub client: i32,
    /// The echo's thread.
    pub server: Option<i32>,
    /// The threads of a task that carries every message between the two
    /// (a message broker: the call goes client → broker → server, the
    /// reply server → broker → client); empty where the two talk directly.
    pub relays: Vec<i32>,
    /// The processes of a load held during the pass (`--load`): time a
    /// side waits behind one of them is the load's, not another task's.
    pub load: Vec<i32>,
    /// Those of them that are a periodic interrupt's handler (`--load
    /// irq:`): time behind one is interrupt time, as the load accounts it.
    pub handlers: Vec<i32>,
}

struct Sweep<'a> {
    tasks: Tasks,
    /// Each traced task's thread id and role: the client first, then the
    /// server, then the relays.
    ids: Vec<(i32, Role)>,
    /// Each one's state, in the order of `ids`.
    state: Vec<Task>,
    /// The roles a message passes, in order, from the client's send to
    /// the hop before the client has its reply (the path is a cycle).
    path: Vec<Role>,
    /// Where on `path` the message is.
    hop: usize,
    /// The task (index of `ids`) that holds it.
    holder: usize,
    /// The task running on each CPU (0: idle), as last switched.
    curr: HashMap<usize, i32>,
    /// Interrupt nesting per CPU.
    irq: HashMap<usize, u32>,
    name: &'a dyn Fn(i64) -> String,
}

impl Sweep<'_> {
    fn new<'a>(tasks: Tasks, name: &'a dyn Fn(i64) -> String) -> Sweep<'a> {
        let unknown = Task {
            sched: Sched::Unknown,
            syscall: None,
            pending: None,
        };
        let mut ids = vec![(tasks.client, Role::Client)];
        let mut path = vec![Role::Client];
        if let Some(server) = tasks.server {
            ids.push((server, Role::Server));
            if tasks.relays.is_empty() {
                path.push(Role::Server);
            } else {
                path.extend([Role::Broker, Role::Server, Role::Broker]);
                ids.extend(tasks.relays.iter().map(|&t| (t, Role::Broker)));
            }
        }
        Sweep {
            state: vec![unknown; ids.len()],
            ids,
            path,
            hop: 0,
            holder: 0,
            tasks,
            curr: HashMap::new(),
            irq: HashMap::new(),
            name,
        }
    }

    /// The index of the task `pid`, if it is traced.
    fn index_of(&self, pid: i32) -> Option<usize> {
        if pid == 0 {
            return None;
        }
        self.ids.iter().position(|&(t, _)| t == pid)
    }

    /// The client has the message (at every stamp: it has its reply).
    fn back_to_client(&mut self) {
        self.hop = 0;
        self.holder = 0;
    }

    /// The hop `k` steps after the message's.
    fn ahead(&self, k: usize) -> usize {
        (self.hop + k) % self.path.len()
    }

    /// Task `i` was woken: it takes the message if it is the next hop's,
    /// or the one after a broker's hop (the broker took the message
    /// without a wake-up seen, already running, and passed it on).
    fn woken(&mut self, i: usize) {
        let role = self.ids[i].1;
        // A broker's hop may be passed without its wake-up seen.
        let reach = if self.path[self.ahead(1)] == Role::Broker {
            2
        } else {
            1
        };
        for k in 1..=reach {
            if self.path[self.ahead(k)] == role && i != self.holder {
                self.hop = self.ahead(k);
                self.holder = i;
                return;
            }
        }
    }

    fn task(&mut self, i: usize) -> &mut Task {
        &mut self.state[i]
    }

    /// Whether a process of the held load runs on `cpu`.
    fn load_runs(&self, cpu: usize) -> bool {
        self.curr
            .get(&cpu)
            .is_some_and(|p| *p != 0 && self.tasks.load.contains(p))
    }

    /// Whether the held load's interrupt handler runs on `cpu`.
    fn handler_runs(&self, cpu: usize) -> bool {
        self.curr
            .get(&cpu)
            .is_some_and(|p| *p != 0 && self.tasks.handlers.contains(p))
    }

    fn in_irq(&self, cpu: usize) -> bool {
        self.irq.get(&cpu).is_some_and(|&d| d > 0)
    }

    /// The part the time from now until the next event goes to.
    fn part(&self) -> String {
        let w = self.ids[self.holder].1.word();
        let task = self.state[self.holder];
        match task.sched {
            Sched::Running(cpu) if self.in_irq(cpu) => format!("{w} irq+softirq"),
            Sched::Running(_) => match task.syscall {
                Some(None) => format!("{w} user"),
                Some(Some(id)) => format!("{w} {}", (self.name)(id)),
                None => RESIDUAL.into(),
            },
            Sched::Woken { cpu, .. } if self.in_irq(cpu) => format!("{w} wake-up: irq+softirq"),
            Sched::Woken { cpu, .. } if self.handler_runs(cpu) => format!("{w} {HANDLER}"),
            Sched::Woken { cpu, .. } if self.load_runs(cpu) => format!("{w} load"),
            Sched::Woken { cpu, queued } => match self.curr.get(&cpu) {
                Some(0) if !queued => format!("{w} wake-up: idle exit"),
                Some(&other) if other != 0 => format!("{w} wake-up: run-queue wait"),
                _ => format!("{w} wake-up: rest"),
            },
            Sched::Preempted(cpu) if self.in_irq(cpu) => format!("{w} irq+softirq"),
            Sched::Preempted(cpu) if self.handler_runs(cpu) => format!("{w} {HANDLER}"),
            Sched::Preempted(cpu) if self.load_runs(cpu) => format!("{w} load"),
            Sched::Preempted(_) => format!("{w} preempted"),
            Sched::Blocked | Sched::Unknown => RESIDUAL.into(),
        }
    }

    /// A holder asleep while the next hop's task is active has passed the
    /// message on without a wake-up seen (a broker busy when the message
    /// came), or was woken for something else (a socket's reader woken by
    /// its peer's read, which shares its wait queue): the message is with
    /// the task that runs.
    fn settle(&mut self) {
        if !self.state[self.holder].sched.asleep() || self.tasks.server.is_none() {
            return;
        }
        let next = self.ahead(1);
        let role = self.path[next];
        if let Some(i) = (0..self.ids.len())
            .find(|&i| self.ids[i].1 == role && i != self.holder && !self.state[i].sched.asleep())
        {
            self.hop = next;
            self.holder = i;
        }
    }

    fn apply(&mut self, e: &TraceEvent) {
        // An event's task is the one current on its CPU: a switch the
        // kernel did not record (some are not, on these guests) leaves
        // nothing stale past the next event there.
        if !matches!(e.kind, EventKind::Switch { .. }) {
            self.curr.insert(e.cpu, e.pid);
            if let Some(i) = self.index_of(e.pid)
                && !matches!(self.task(i).sched, Sched::Running(_))
            {
                self.task(i).sched = Sched::Running(e.cpu);
            }
        }
        match e.kind {
            EventKind::SysEnter { id } | EventKind::SysExit { id } => {
                if let Some(i) = self.index_of(e.pid) {
                    let t = self.task(i);
                    t.syscall = Some(matches!(e.kind, EventKind::SysEnter { .. }).then_some(id));
                    t.sched = Sched::Running(e.cpu);
                    // It went on without sleeping.
                    t.pending = None;
                }
            }
            EventKind::Waking { pid, target_cpu } => {
                if let Some(i) = self.index_of(pid) {
                    let t = self.task(i);
                    let cpu = target_cpu.max(0) as usize;
                    if matches!(t.sched, Sched::Running(_)) {
                        t.pending = Some(cpu);
                    } else {
                        t.sched = Sched::Woken { cpu, queued: false };
                    }
                    // The message reached the next task on its path.
                    self.woken(i);
                }
            }
            EventKind::Wakeup { pid, target_cpu } => {
                // The task is on a run queue now. One seen asleep was woken
                // while it was still on its CPU going to sleep (its
                // `sched_waking` came before its switch out), and the
                // wake-up was queued only once it was off.
                if let Some(i) = self.index_of(pid)
                    && matches!(self.task(i).sched, Sched::Woken { .. } | Sched::Blocked)
                {
                    self.task(i).sched = Sched::Woken {
                        cpu: target_cpu.max(0) as usize,
                        queued: true,
                    };
                }
            }
            EventKind::Switch {
                prev_pid,
                prev_runnable,
                next_pid,
            } => {
                self.curr.insert(e.cpu, next_pid);
                if let Some(i) = self.index_of(prev_pid) {
                    let t = self.task(i);
                    t.sched = match (prev_runnable, t.pending.take(), t.sched) {
                        (true, _, _) => Sched::Preempted(e.cpu),
                        // Woken before it was off: the kernel queues the
                        // wake-up once it is (sched_wakeup).
                        (false, Some(cpu), _) => Sched::Woken { cpu, queued: false },
                        (false, None, woken @ Sched::Woken { .. }) => woken,
                        (false, None, _) => Sched::Blocked,
                    };
                }
                if let Some(i) = self.index_of(next_pid) {
                    self.task(i).sched = Sched::Running(e.cpu);
                }
            }
            EventKind::IrqEntry => *self.irq.entry(e.cpu).or_default() += 1,
            EventKind::IrqExit => {
                let d = self.irq.entry(e.cpu).or_default();
                *d = d.saturating_sub(1);
            }
            EventKind::Fork { .. } | EventKind::Other => {}
        }
    }
}

/// Cuts the round trips between consecutive `stamps` (the client's clock,
/// on the trace's clock) into parts from `events` (ordered by time).
/// `name` names a system call by its number.
pub fn decompose(
    events: &[TraceEvent],
    stamps: &[u64],
    tasks: Tasks,
    name: &dyn Fn(i64) -> String,
) -> Vec<RoundTrip> {
    let Some((&first, _)) = stamps.split_first() else {
        return Vec::new();
    };
    let mut sweep = Sweep::new(tasks, name);
    let mut trips: Vec<RoundTrip> = stamps
        .windows(2)
        .map(|w| RoundTrip {
            total_ns: w[1].saturating_sub(w[0]),
            parts: BTreeMap::new(),
        })
        .collect();
    let last = *stamps.last().expect("stamps");
    // The round trip `now` falls in (the next stamp after it is `stamps[k + 1]`).
    let mut k = 0usize;
    let mut now = first;
    let mut next_event = events.iter().peekable();
    // Events before the first stamp only set the state.
    while let Some(e) = next_event.next_if(|e| e.ts_ns <= first) {
        sweep.apply(e);
    }
    sweep.back_to_client();
    while k < trips.len() {
        let end = stamps[k + 1];
        let until = next_event.peek().map_or(end, |e| e.ts_ns.min(end));
        if until > now {
            *trips[k].parts.entry(sweep.part()).or_default() += until - now;
            now = until;
        }
        if now >= end {
            k += 1;
            // The client holds the message at every stamp: it has its reply.
            sweep.back_to_client();
            continue;
        }
        if let Some(e) = next_event.next() {
            sweep.apply(e);
            sweep.settle();
        }
    }
    debug_assert!(now == last || trips.is_empty());
    trips
}

/// The statistics of each part across `trips`: mean (so the means add up
/// to the mean round trip), median and p99, share of the mean round trip;
/// largest mean first, the residual last (and always present).
pub fn summarise(trips: &[RoundTrip]) -> (RoundTripRecord, Vec<PartRecord>) {
    let totals: Vec<f64> = trips.iter().map(|t| t.total_ns as f64).collect();
    let mean_total = if totals.is_empty() {
        0.0
    } else {
        totals.iter().sum::<f64>() / totals.len() as f64
    };
    let centre = RoundTripRecord {
        mean: mean_total,
        median: quantile(&totals, 0.5),
    };
    let mut names: Vec<&str> = trips
        .iter()
        .flat_map(|t| t.parts.keys().map(String::as_str))
        .collect();
    names.push(RESIDUAL);
    names.sort();
    names.dedup();
    let mut parts: Vec<PartRecord> = names
        .into_iter()
        .map(|name| {
            let values: Vec<f64> = trips
                .iter()
                .map(|t| t.parts.get(name).copied().unwrap_or(0) as f64)
                .collect();
            let mean = if values.is_empty() {
                0.0
            } else {
                values.iter().sum::<f64>() / values.len() as f64
            };
            PartRecord {
                name: name.to_string(),
                mean_ns: mean,
                median_ns: Some(quantile(&values, 0.5)),
                p99_ns: Some(quantile(&values, 0.99)),
                share: if mean_total > 0.0 {
                    mean / mean_total
                } else {
                    0.0
                },
            }
        })
        .collect();
    parts.sort_by(|a, b| {
        (a.name == RESIDUAL)
            .cmp(&(b.name == RESIDUAL))
            .then(b.mean_ns.total_cmp(&a.mean_ns))
    });
    (centre, parts)
}

fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    quantile_sorted(&v, q)
}

/// Whether a part is the wake-up of either side (its parts: idle exit,
/// run-queue wait, interrupts meanwhile, rest).
pub fn is_wake_up(name: &str) -> bool {
    name.contains(" wake-up: ")
}

/// Whether a part is time a side waited behind a held load's interrupt
/// handler.
pub fn is_handler(name: &str) -> bool {
    name.ends_with(HANDLER)
}

/// Whether a part is time a side waited behind a held load's process
/// other than an interrupt handler (preempted by it, or woken while it
/// ran).
pub fn is_load(name: &str) -> bool {
    name.ends_with(" load")
}

/// Whether a part is interrupt time: the kernel's hard and soft
/// interrupts, or a held load's interrupt handler (its process stands for
/// the handler of the periodic interrupt it simulates, and the load
/// accounts its CPU time as interrupt time).
pub fn is_interrupt(name: &str) -> bool {
    name.ends_with("irq+softirq") || name.ends_with(HANDLER)
}

/// A system call's name from its number on this architecture, or
/// "syscall N" for one the table lacks.
pub fn syscall_name(id: i64) -> String {
    SYSCALLS
        .iter()
        .find(|(n, _)| *n == id)
        .map_or_else(|| format!("syscall {id}"), |(_, name)| name.to_string())
}

/// The system calls an IPC round trip and the op-mode benchmarks make, by number.
#[cfg(target_arch = "x86_64")]
const SYSCALLS: &[(i64, &str)] = &[
    (0, "read"),
    (1, "write"),
    (2, "open"),
    (3, "close"),
    (4, "stat"),
    (5, "fstat"),
    (6, "lstat"),
    (7, "poll"),
    (8, "lseek"),
    (9, "mmap"),
    (10, "mprotect"),
    (11, "munmap"),
    (12, "brk"),
    (13, "rt_sigaction"),
    (14, "rt_sigprocmask"),
    (15, "rt_sigreturn"),
    (17, "pread64"),
    (18, "pwrite64"),
    (19, "readv"),
    (20, "writev"),
    (21, "access"),
    (23, "select"),
    (24, "sched_yield"),
    (35, "nanosleep"),
    (39, "getpid"),
    (44, "sendto"),
    (45, "recvfrom"),
    (46, "sendmsg"),
    (47, "recvmsg"),
    (56, "clone"),
    (57, "fork"),
    (58, "vfork"),
    (59, "execve"),
    (60, "exit"),
    (61, "wait4"),
    (62, "kill"),
    (64, "semget"),
    (65, "semop"),
    (66, "semctl"),
    (69, "msgsnd"),
    (70, "msgrcv"),
    (87, "unlink"),
    (128, "rt_sigtimedwait"),
    (129, "rt_sigqueueinfo"),
    (130, "rt_sigsuspend"),
    (158, "arch_prctl"),
    (186, "gettid"),
    (202, "futex"),
    (218, "set_tid_address"),
    (220, "semtimedop"),
    (228, "clock_gettime"),
    (230, "clock_nanosleep"),
    (231, "exit_group"),
    (232, "epoll_wait"),
    (234, "tgkill"),
    (242, "mq_timedsend"),
    (243, "mq_timedreceive"),
    (257, "openat"),
    (262, "newfstatat"),
    (263, "unlinkat"),
    (270, "pselect6"),
    (271, "ppoll"),
    (273, "set_robust_list"),
    (275, "splice"),
    (278, "vmsplice"),
    (281, "epoll_pwait"),
    (283, "timerfd_create"),
    (286, "timerfd_settime"),
    (293, "pipe2"),
    (299, "recvmmsg"),
    (302, "prlimit64"),
    (307, "sendmmsg"),
    (310, "process_vm_readv"),
    (311, "process_vm_writev"),
    (318, "getrandom"),
    (332, "statx"),
    (334, "rseq"),
    (426, "io_uring_enter"),
    (435, "clone3"),
    (439, "faccessat2"),
    (449, "futex_waitv"),
];

/// The system calls an IPC round trip and the op-mode benchmarks make, by number.
#[cfg(target_arch = "aarch64")]
const SYSCALLS: &[(i64, &str)] = &[
    (17, "getcwd"),
    (22, "epoll_pwait"),
    (35, "unlinkat"),
    (56, "openat"),
    (57, "close"),
    (59, "pipe2"),
    (62, "lseek"),
    (63, "read"),
    (64, "write"),
    (65, "readv"),
    (66, "writev"),
    (67, "pread64"),
    (68, "pwrite64"),
    (72, "pselect6"),
    (73, "ppoll"),
    (75, "vmsplice"),
    (76, "splice"),
    (79, "newfstatat"),
    (80, "fstat"),
    (85, "timerfd_create"),
    (86, "timerfd_settime"),
    (93, "exit"),
    (94, "exit_group"),
    (96, "set_tid_address"),
    (98, "futex"),
    (99, "set_robust_list"),
    (101, "nanosleep"),
    (113, "clock_gettime"),
    (115, "clock_nanosleep"),
    (124, "sched_yield"),
    (129, "kill"),
    (131, "tgkill"),
    (133, "rt_sigsuspend"),
    (134, "rt_sigaction"),
    (135, "rt_sigprocmask"),
    (137, "rt_sigtimedwait"),
    (138, "rt_sigqueueinfo"),
    (139, "rt_sigreturn"),
    (172, "getpid"),
    (178, "gettid"),
    (182, "mq_timedsend"),
    (183, "mq_timedreceive"),
    (188, "msgrcv"),
    (189, "msgsnd"),
    (190, "semget"),
    (191, "semctl"),
    (192, "semtimedop"),
    (193, "semop"),
    (206, "sendto"),
    (207, "recvfrom"),
    (211, "sendmsg"),
    (212, "recvmsg"),
    (214, "brk"),
    (215, "munmap"),
    (220, "clone"),
    (221, "execve"),
    (222, "mmap"),
    (226, "mprotect"),
    (243, "recvmmsg"),
    (260, "wait4"),
    (261, "prlimit64"),
    (269, "sendmmsg"),
    (270, "process_vm_readv"),
    (271, "process_vm_writev"),
    (278, "getrandom"),
    (291, "statx"),
    (293, "rseq"),
    (426, "io_uring_enter"),
    (435, "clone3"),
    (439, "faccessat2"),
    (449, "futex_waitv"),
];

/// Other architectures: every call is named by its number.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SYSCALLS: &[(i64, &str)] = &[];

#[cfg(test)]
mod tests;
