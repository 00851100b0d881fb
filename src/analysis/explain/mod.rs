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

mod decompose;
mod syscalls;
pub mod tail;
pub use decompose::{Segment, decompose_into, decompose_slow};
pub use syscalls::syscall_name;

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
    /// Switched out stopped (`T`, `t`) on `cpu`: a stop signal or a tracer.
    Stopped(usize),
}

impl Sched {
    /// Asleep, or not yet known to be doing anything.
    fn asleep(self) -> bool {
        matches!(self, Sched::Blocked | Sched::Unknown)
    }

    /// On a CPU, woken or preempted: moving on.
    fn active(self) -> bool {
        matches!(
            self,
            Sched::Running(_) | Sched::Woken { .. } | Sched::Preempted(_)
        )
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
    /// Who each part's time was spent behind, ns by (part, culprit); a
    /// part's entries add up to it.
    pub culprits: BTreeMap<(String, Culprit), u64>,
}

impl RoundTrip {
    /// One empty round trip (or operation) per pair of successive stamps,
    /// as long as the time between them: what a sweep fills with parts.
    pub fn between(stamps: &[u64]) -> Vec<RoundTrip> {
        stamps
            .windows(2)
            .map(|w| RoundTrip {
                total_ns: w[1].saturating_sub(w[0]),
                parts: BTreeMap::new(),
                culprits: BTreeMap::new(),
            })
            .collect()
    }
}

/// Whether a task at priority `ours` should have run before one at
/// `theirs` (the kernel's numbers: lower runs first): only a real-time
/// task (0–99) is run ahead of a lower priority at once; a fair class's
/// weights share the CPU in no promised order.
pub fn outranks(ours: Option<&i16>, theirs: Option<&i16>) -> bool {
    matches!((ours, theirs), (Some(o), Some(t)) if *o < 100 && t > o)
}

/// What a part's time was spent behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Culprit {
    /// Another task running on the holder's CPU: its thread id and the
    /// label of its command (the trace's [`Labels`]).
    Task { pid: i32, comm: u32 },
    /// Another task running on the holder's CPU whose priority is lower
    /// than the holder's, a real-time one (the events' `prio`; a fair
    /// class's weights promise no order): the scheduler would have
    /// switched to the holder, so the kernel went on without a preemption
    /// point, or the host held the vCPU, while that task was current.
    Outranked { pid: i32, comm: u32 },
    /// An interrupt, softirq or x86 vector on the holder's CPU: its label
    /// (0: not named by the kernel).
    Interrupt(u32),
    /// The holder's CPU in its idle task: the idle state it last entered,
    /// where the kernel said (`power:cpu_idle`).
    Idle(Option<u32>),
    /// The holder's own work: no other task or interrupt ran on its CPU.
    Own,
    /// A side stopped (a stop signal such as SIGSTOP, or a tracer).
    Stopped,
    /// No event says: a stretch the kernel left no event for.
    NoEvent,
}

/// What the kernel left out of a side's wake-ups, and the wake-ups that
/// came before the message they wait for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WakeUps {
    /// "client", "server" or "broker".
    pub side: &'static str,
    /// Wake-ups seen: asleep, then running.
    pub seen: u64,
    /// Of them, running with no `sched_switch` to it seen.
    pub no_switch_in: u64,
    /// Of them, running with no `sched_waking` of it seen.
    pub no_waking: u64,
    /// Woken by the side before it on the path before it had sent the
    /// message (a socket's reader woken by its peer's read: write space).
    pub early: u64,
}

/// A decomposed pass: its round trips and what its wake-ups lacked.
#[derive(Debug, Clone, Default)]
pub struct Decomposed {
    /// Each round trip's parts.
    pub trips: Vec<RoundTrip>,
    /// Per side, in path order.
    pub wake_ups: Vec<WakeUps>,
    /// Round trips with a stretch named for two things because a switch
    /// was not seen (a side's own, or another task's into the CPU it
    /// waited for).
    pub merged_round_trips: u64,
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
    /// The task running on each CPU (0: idle), as last switched, and the
    /// label of its command.
    curr: HashMap<usize, (i32, u32)>,
    /// The interrupts under way on each CPU, innermost last (their labels).
    irq: HashMap<usize, Vec<u32>>,
    /// The idle state each CPU last entered.
    idle: HashMap<usize, u32>,
    /// The holder is still in the system call it had the message in
    /// (its receive): a wake-up of the next side now is early.
    receiving: bool,
    /// The next side, woken early: it takes the message when the holder
    /// ends the system call that sends it.
    early: Option<usize>,
    /// Per task (as `ids`): its wake-ups and what they lacked.
    wake_ups: Vec<WakeUps>,
    /// Set when a task runs with its switch in not seen: its index and the
    /// system call it was in.
    unswitched: Option<(usize, Option<i64>)>,
    /// Set when a task other than the traced ones is switched out of a CPU
    /// it was not seen switched into (the kernel leaves out some switches
    /// from the idle task): the CPU and its id.
    unseen_run: Option<(usize, i32)>,
    /// Each task's command as its wake-up or switch in named it (a label).
    comm_of: HashMap<i32, u32>,
    /// Each task's priority as its wake-up or switch in gave it.
    prio_of: HashMap<i32, i16>,
    /// When each task was last woken.
    woken_at: HashMap<i32, u64>,
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
            wake_ups: ids
                .iter()
                .map(|(_, r)| WakeUps {
                    side: r.word(),
                    ..WakeUps::default()
                })
                .collect(),
            ids,
            path,
            hop: 0,
            holder: 0,
            tasks,
            curr: HashMap::new(),
            irq: HashMap::new(),
            idle: HashMap::new(),
            receiving: false,
            early: None,
            unswitched: None,
            unseen_run: None,
            comm_of: HashMap::new(),
            prio_of: HashMap::new(),
            woken_at: HashMap::new(),
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

    /// The client has the message (at every stamp: it has its reply, out
    /// of its receive). A server woken early stays so: the client's send
    /// is still to come.
    fn back_to_client(&mut self) {
        self.hop = 0;
        self.holder = 0;
        self.receiving = false;
        if self
            .early
            .is_some_and(|i| self.ids[i].1 != self.path[self.ahead(1)])
        {
            self.early = None;
        }
    }

    /// Task `i` takes the message at hop `hop`.
    fn pass_to(&mut self, hop: usize, i: usize) {
        self.hop = hop;
        self.holder = i;
        self.early = None;
        // Unless it is already back in user space, it has the message in
        // the system call it waits in.
        let t = self.state[i];
        self.receiving = !(matches!(t.sched, Sched::Running(_)) && t.syscall == Some(None));
    }

    /// Whether the message goes straight from side to side (no broker):
    /// there a wake-up of the next side during the holder's receive is
    /// one before the message was sent.
    fn direct(&self) -> bool {
        self.tasks.relays.is_empty() && self.tasks.server.is_some()
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
                if self.direct() && self.receiving {
                    // Woken by the holder's receive (write space), before
                    // the message was sent: the message is still the
                    // holder's until its send ends.
                    self.early = Some(i);
                    self.wake_ups[i].early += 1;
                } else {
                    self.pass_to(self.ahead(k), i);
                }
                return;
            }
        }
    }

    fn task(&mut self, i: usize) -> &mut Task {
        &mut self.state[i]
    }

    /// Whether the holder is woken for `cpu`, or just switched in there.
    fn waits_on(&self, cpu: usize) -> bool {
        match self.state[self.holder].sched {
            Sched::Woken { cpu: c, .. } | Sched::Running(c) => c == cpu,
            _ => false,
        }
    }

    /// The task running on `cpu` (0: idle) and its command's label.
    fn running(&self, cpu: usize) -> (i32, u32) {
        self.curr.get(&cpu).copied().unwrap_or((-1, 0))
    }

    /// Whether a process of the held load runs on `cpu`.
    fn load_runs(&self, cpu: usize) -> bool {
        let (p, _) = self.running(cpu);
        p > 0 && self.tasks.load.contains(&p)
    }

    /// Whether the held load's interrupt handler runs on `cpu`.
    fn handler_runs(&self, cpu: usize) -> bool {
        let (p, _) = self.running(cpu);
        p > 0 && self.tasks.handlers.contains(&p)
    }

    /// The innermost interrupt under way on `cpu`, if one is.
    fn in_irq(&self, cpu: usize) -> Option<u32> {
        self.irq.get(&cpu).and_then(|s| s.last().copied())
    }

    /// The task running on `cpu`, as a culprit of the holder's wait:
    /// [`Culprit::Outranked`] where the events gave both priorities and
    /// the holder, a real-time task, has the higher ([`outranks`]).
    fn behind(&self, cpu: usize) -> Culprit {
        let (pid, comm) = self.running(cpu);
        let holder = self.ids[self.holder].0;
        if pid > 0 && outranks(self.prio_of.get(&holder), self.prio_of.get(&pid)) {
            Culprit::Outranked { pid, comm }
        } else {
            Culprit::Task { pid, comm }
        }
    }

    /// The part the time from now until the next event goes to, and what
    /// it is spent behind.
    fn part(&self) -> (String, Culprit) {
        let w = self.ids[self.holder].1.word();
        let task = self.state[self.holder];
        match task.sched {
            Sched::Running(cpu) => match (self.in_irq(cpu), task.syscall) {
                (Some(irq), _) => (format!("{w} irq+softirq"), Culprit::Interrupt(irq)),
                (None, Some(None)) => (format!("{w} user"), Culprit::Own),
                (None, Some(Some(id))) => (format!("{w} {}", (self.name)(id)), Culprit::Own),
                (None, None) => (RESIDUAL.into(), Culprit::NoEvent),
            },
            Sched::Woken { cpu, queued } => {
                if let Some(irq) = self.in_irq(cpu) {
                    return (format!("{w} wake-up: irq+softirq"), Culprit::Interrupt(irq));
                }
                if self.handler_runs(cpu) {
                    return (format!("{w} {HANDLER}"), self.behind(cpu));
                }
                if self.load_runs(cpu) {
                    return (format!("{w} load"), self.behind(cpu));
                }
                match self.running(cpu).0 {
                    0 if !queued => (
                        format!("{w} wake-up: idle exit"),
                        Culprit::Idle(self.idle.get(&cpu).copied()),
                    ),
                    p if p > 0 => (format!("{w} wake-up: run-queue wait"), self.behind(cpu)),
                    _ => (format!("{w} wake-up: rest"), Culprit::Own),
                }
            }
            Sched::Preempted(cpu) => {
                let part = match self.in_irq(cpu) {
                    Some(irq) => return (format!("{w} irq+softirq"), Culprit::Interrupt(irq)),
                    None if self.handler_runs(cpu) => format!("{w} {HANDLER}"),
                    None if self.load_runs(cpu) => format!("{w} load"),
                    None => format!("{w} preempted"),
                };
                (part, self.behind(cpu))
            }
            Sched::Stopped(_) => (format!("{w} stopped"), Culprit::Stopped),
            Sched::Blocked | Sched::Unknown => {
                // Asleep with the message sent: the next side may be
                // stopped, unable to take it until it is continued.
                let next = self.path[self.ahead(1)];
                match (0..self.ids.len()).find(|&i| {
                    self.ids[i].1 == next
                        && i != self.holder
                        && matches!(self.state[i].sched, Sched::Stopped(_))
                }) {
                    Some(_) => (format!("{} stopped", next.word()), Culprit::Stopped),
                    None => (RESIDUAL.into(), Culprit::NoEvent),
                }
            }
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
            .find(|&i| self.ids[i].1 == role && i != self.holder && self.state[i].sched.active())
        {
            self.pass_to(next, i);
        }
    }

    /// Task `i` runs on `cpu`: a wake-up ends if it was asleep; `switched`
    /// when a `sched_switch` to it says so, not an event of its own.
    fn runs(&mut self, i: usize, cpu: usize, switched: bool) {
        let was = self.state[i].sched;
        if matches!(was, Sched::Running(_)) {
            return;
        }
        if matches!(was, Sched::Woken { .. } | Sched::Blocked) {
            let w = &mut self.wake_ups[i];
            w.seen += 1;
            if !switched {
                w.no_switch_in += 1;
                self.unswitched = Some((i, self.state[i].syscall.flatten()));
            }
            if was == Sched::Blocked {
                w.no_waking += 1;
            }
        }
        self.state[i].sched = Sched::Running(cpu);
    }

    fn apply(&mut self, e: &TraceEvent) {
        // An event's task is the one current on its CPU: a switch the
        // kernel did not record (some are not, on these guests) leaves
        // nothing stale past the next event there.
        if !matches!(e.kind, EventKind::Switch { .. }) {
            // Its command is the one last switched in, where that was it.
            let comm = match self.curr.get(&e.cpu) {
                Some(&(p, c)) if p == e.pid && c != 0 => c,
                _ => self.comm_of.get(&e.pid).copied().unwrap_or(0),
            };
            self.curr.insert(e.cpu, (e.pid, comm));
            if let Some(i) = self.index_of(e.pid) {
                self.runs(i, e.cpu, false);
            }
        }
        match e.kind {
            EventKind::SysEnter { id } | EventKind::SysExit { id } => {
                if let Some(i) = self.index_of(e.pid) {
                    let exit = matches!(e.kind, EventKind::SysExit { .. });
                    let t = self.task(i);
                    t.syscall = Some((!exit).then_some(id));
                    t.sched = Sched::Running(e.cpu);
                    // It went on without sleeping.
                    t.pending = None;
                    if exit && i == self.holder {
                        match self.early {
                            // The send has ended: the side woken early
                            // has the message.
                            Some(next) if !self.receiving => {
                                self.pass_to(self.ahead(1), next);
                            }
                            _ => self.receiving = false,
                        }
                    }
                }
            }
            EventKind::Waking { pid, target_cpu } => {
                self.woken_at.insert(pid, e.ts_ns);
                if e.label != 0 {
                    self.comm_of.insert(pid, e.label);
                }
                if e.prio != crate::machine::tracefs::decode::NO_PRIO {
                    self.prio_of.insert(pid, e.prio);
                }
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
                prev_stopped,
                next_pid,
            } => {
                if prev_pid > 0
                    && self.index_of(prev_pid).is_none()
                    && self.curr.get(&e.cpu).is_none_or(|c| c.0 != prev_pid)
                {
                    self.unseen_run = Some((e.cpu, prev_pid));
                }
                let comm = match e.label {
                    0 => self.comm_of.get(&next_pid).copied().unwrap_or(0),
                    l => {
                        self.comm_of.insert(next_pid, l);
                        l
                    }
                };
                if e.prio != crate::machine::tracefs::decode::NO_PRIO {
                    self.prio_of.insert(next_pid, e.prio);
                }
                self.curr.insert(e.cpu, (next_pid, comm));
                if let Some(i) = self.index_of(prev_pid) {
                    let t = self.task(i);
                    t.sched = match (prev_runnable, t.pending.take(), t.sched) {
                        // Stopped (a stop signal, a tracer) until a
                        // SIGCONT wakes it: neither asleep nor waiting.
                        _ if prev_stopped => Sched::Stopped(e.cpu),
                        (true, _, _) => Sched::Preempted(e.cpu),
                        // Woken before it was off: the kernel queues the
                        // wake-up once it is (sched_wakeup).
                        (false, Some(cpu), _) => Sched::Woken { cpu, queued: false },
                        (false, None, woken @ Sched::Woken { .. }) => woken,
                        (false, None, _) => Sched::Blocked,
                    };
                }
                if let Some(i) = self.index_of(next_pid) {
                    self.runs(i, e.cpu, true);
                }
            }
            EventKind::IrqEntry => self.irq.entry(e.cpu).or_default().push(e.label),
            EventKind::IrqExit => {
                self.irq.entry(e.cpu).or_default().pop();
            }
            EventKind::Idle { state } => {
                if state != crate::machine::tracefs::decode::IDLE_EXIT {
                    self.idle.insert(e.cpu, state);
                }
            }
            EventKind::Fork { .. } | EventKind::Other => {}
        }
    }
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

#[cfg(test)]
mod tests;
