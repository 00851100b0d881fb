//! The anatomy of a timer's wake-up latency (`ipcmark explain
//! timer-latency`), after `rtla timerlat`'s auto-analysis: from each
//! deadline to the task's clock read after `clock_nanosleep` returned, cut
//! into exclusive parts at the events that bound them, so the parts of
//! every wake-up add up to its latency exactly:
//!
//! ```text
//! deadline ─ timer irq: delay ─► irq entry ─ timer irq: handler to wake-up ─► sched_waking(task)
//!   ─ timer irq: after wake-up ─► irq exit ─ wake-up: … ─► sched_switch(next = task)
//!   ─ return to user: <syscall> ─► sys_exit ─ user ─► the task's stamp
//! ```
//!
//! The interrupt is the one open on the waking CPU when the task's
//! `sched_waking` fires (the innermost: on x86 the local timer's vector).
//! `timer irq: delay` is `timer irq: idle exit` when the task's CPU ran the
//! idle task at the deadline: the CPU's wake from idle (and a hypervisor's
//! delivery of the interrupt to a halted vCPU) is inside it. The wake-up is
//! split as a ping-pong wake-up is: `run-queue wait` while another task runs
//! on the task's CPU, `irq+softirq` while an interrupt or softirq runs
//! there, `rest` for the switch itself. A task whose deadline passed before
//! the wake-up before it ended (`previous wake-up late` up to that one's
//! stamp) may be woken still on its CPU, with no switch back. A bound the
//! events do not give (an interrupt not seen, an event lost) turns the time
//! up to the next bound seen into the `residual`.
//!
//! Every part keeps what it was spent behind (`RoundTrip::culprits`, the
//! tail's culprits): the idle state for an idle exit, the task or interrupt
//! current at the deadline for a delay, the interrupt by name for the
//! handler's parts, what ran on the task's CPU for the wake-up's, and for a
//! carried lateness what the wake-up before was spent behind most.

use crate::analysis::explain::{Culprit, RESIDUAL, RoundTrip, outranks};
use crate::machine::tracefs::decode::{EventKind, IDLE_EXIT, NO_PRIO, TraceEvent};
use std::collections::{BTreeMap, HashMap};

/// The deadline to the interrupt's entry.
pub const IRQ_DELAY: &str = "timer irq: delay";
/// The same, when the task's CPU was idle at the deadline.
pub const IRQ_IDLE_EXIT: &str = "timer irq: idle exit";
/// The interrupt's entry to the task's `sched_waking`.
pub const IRQ_HANDLER: &str = "timer irq: handler to wake-up";
/// `sched_waking` to the interrupt's exit.
pub const IRQ_AFTER: &str = "timer irq: after wake-up";
/// The wake-up, while another task runs on the task's CPU.
pub const RUN_QUEUE: &str = "wake-up: run-queue wait";
/// The wake-up, while an interrupt or softirq runs on the task's CPU.
pub const WAKE_IRQ: &str = "wake-up: irq+softirq";
/// The rest of the wake-up: the switch itself.
pub const WAKE_REST: &str = "wake-up: rest";
/// The interrupt's exit to the system call's exit, where the kernel
/// recorded no switch to the task: the wake-up and the return to user
/// space, which only that switch would divide.
pub const WAKE_UNRECORDED: &str = "wake-up: to its call's exit (switch not recorded)";
/// The prefix of the part from the switch to the system call's exit.
pub const RETURN: &str = "return to user";
/// The system call's exit to the task's stamp.
pub const USER: &str = "user";
/// A deadline to the stamp of the wake-up before it, when that came after
/// it: the task was late before it slept (an earlier wake-up's lateness
/// carried over by absolute deadlines).
pub const LATE: &str = "previous wake-up late";

/// Whether a part is the timer interrupt's (delay, handler, after).
pub fn is_timer_irq(name: &str) -> bool {
    name.starts_with("timer irq: ")
}

/// Whether a part is the wake-up after the interrupt.
pub fn is_wake_up(name: &str) -> bool {
    name.starts_with("wake-up: ")
}

/// A CPU as the events leave it.
#[derive(Debug, Default, Clone)]
struct Cpu {
    /// The task running (0: idle); `None` before a switch is seen.
    curr: Option<i32>,
    /// The interrupts open (entry time, the trace's label of its name),
    /// innermost last.
    irqs: Vec<(u64, u32)>,
    /// The idle state it last entered (`power:cpu_idle`), if one was seen.
    idle_state: Option<u32>,
}

/// What the events have told of the tasks: each one's command, as the
/// trace's label of it, and its priority (from the switches to it and its
/// wake-ups).
#[derive(Debug, Default)]
struct Comms {
    label: HashMap<i32, u32>,
    prio: HashMap<i32, i16>,
}

impl Comms {
    /// What `e` says of the task it names.
    fn learn(&mut self, e: &TraceEvent) {
        let pid = match e.kind {
            EventKind::Switch { next_pid, .. } => next_pid,
            EventKind::Waking { pid, .. } => pid,
            _ => return,
        };
        if e.label != 0 {
            self.label.insert(pid, e.label);
        }
        if e.prio != NO_PRIO {
            self.prio.insert(pid, e.prio);
        }
    }

    /// What `cpu`'s time was spent behind, seen from task `tid` waiting on
    /// it: the innermost interrupt open there, the idle task's state, or
    /// the task running (`tid` itself: its own work).
    fn behind(&self, cpu: Option<&Cpu>, tid: i32) -> Culprit {
        match cpu {
            Some(c) if !c.irqs.is_empty() => Culprit::Interrupt(c.irqs.last().map_or(0, |i| i.1)),
            Some(c) if c.curr == Some(0) => Culprit::Idle(c.idle_state),
            Some(c) if c.curr == Some(tid) => Culprit::Own,
            Some(Cpu {
                curr: Some(pid), ..
            }) => {
                let comm = self.label.get(pid).copied().unwrap_or(0);
                if outranks(self.prio.get(&tid), self.prio.get(pid)) {
                    Culprit::Outranked { pid: *pid, comm }
                } else {
                    Culprit::Task { pid: *pid, comm }
                }
            }
            _ => Culprit::NoEvent,
        }
    }
}

/// The bounds of one wake-up found so far.
#[derive(Debug, Default)]
struct Bounds {
    /// Whether the task's CPU ran the idle task at the deadline.
    idle: bool,
    /// What the task's CPU was spent behind at the deadline: the delay's
    /// culprit.
    at_deadline: Option<Culprit>,
    /// The task's `sched_waking`: time, CPU, interrupts open there.
    waking: Option<(u64, usize, usize)>,
    /// The entry of the interrupt it fired in, and its name's label.
    entry: Option<u64>,
    irq: u32,
    /// That interrupt's exit.
    exit: Option<u64>,
    /// The wake-up's parts from the exit with what each was spent behind,
    /// and the time they run to.
    split: BTreeMap<(&'static str, Culprit), u64>,
    split_to: u64,
    /// Whether the task was still on its CPU when it was woken: it had not
    /// yet switched out (a deadline already passed as it went to sleep), so
    /// no switch back follows.
    on_cpu: bool,
    /// `sched_switch` to the task.
    switch: Option<u64>,
    /// The system call's exit after it, and its number.
    sys_exit: Option<(u64, i64)>,
    /// Whether the task ran again after its wake-up with no switch to it
    /// in the trace.
    switch_unseen: bool,
}

/// The wake-ups cut into parts ([`decompose`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// Each wake-up's parts; its `total_ns` is its latency.
    pub trips: Vec<RoundTrip>,
    /// Wake-ups after which the task ran with no `sched_switch` to it in
    /// the trace: their wake-up, up to the task's next event, is residual.
    pub switches_unseen: usize,
}

/// Cuts each wake-up of `wakeups` ((deadline, stamp) on the trace's clock)
/// of task `tid` into parts from `events` (ordered by time); `name` names a
/// system call by its number. A wake-up's `total_ns` is its latency.
pub fn decompose(
    events: &[TraceEvent],
    wakeups: &[(u64, u64)],
    tid: i32,
    name: &dyn Fn(i64) -> String,
) -> Cut {
    let mut switches_unseen = 0;
    let mut cpus: HashMap<usize, Cpu> = HashMap::new();
    let mut comms = Comms::default();
    // The task's CPU, as its last event there says.
    let mut task_cpu: Option<usize> = None;
    let mut next = events.iter().peekable();
    let mut out = Vec::with_capacity(wakeups.len());
    let mut from = 0u64;
    let mut late_behind = Culprit::NoEvent;
    for &(deadline, woke) in wakeups {
        let apply = |e: &TraceEvent,
                     cpus: &mut HashMap<usize, Cpu>,
                     task_cpu: &mut _,
                     comms: &mut Comms| {
            let c = cpus.entry(e.cpu).or_default();
            // Every event's task is the one current on its CPU (in an
            // interrupt, the one interrupted): this mends what a switch
            // missing from the trace left stale.
            c.curr = Some(e.pid);
            comms.learn(e);
            match e.kind {
                EventKind::Switch { next_pid, .. } => {
                    c.curr = Some(next_pid);
                    if next_pid == tid {
                        *task_cpu = Some(e.cpu);
                    }
                }
                EventKind::Idle { state } if state != IDLE_EXIT => c.idle_state = Some(state),
                EventKind::IrqEntry => c.irqs.push((e.ts_ns, e.label)),
                EventKind::IrqExit => {
                    c.irqs.pop();
                }
                EventKind::SysEnter { .. } | EventKind::SysExit { .. } if e.pid == tid => {
                    *task_cpu = Some(e.cpu);
                }
                _ => {}
            }
        };
        while let Some(e) = next.next_if(|e| e.ts_ns <= deadline) {
            apply(e, &mut cpus, &mut task_cpu, &mut comms);
        }
        let at = task_cpu.and_then(|c| cpus.get(&c));
        let mut b = Bounds {
            idle: at.is_some_and(|c| c.curr == Some(0)),
            at_deadline: Some(comms.behind(at, tid)),
            ..Bounds::default()
        };
        // A late task's window begins where the last one ended.
        let start = deadline.max(from);
        while let Some(e) = next.next_if(|e| e.ts_ns <= woke) {
            observe(&mut b, e, tid, &cpus, task_cpu, &comms);
            apply(e, &mut cpus, &mut task_cpu, &mut comms);
        }
        switches_unseen += usize::from(b.switch_unseen);
        let trip = cut(&b, deadline, start, woke, late_behind, name);
        // What made this wake-up late is what a late next one waits behind.
        late_behind = trip
            .culprits
            .iter()
            .max_by_key(|(_, ns)| **ns)
            .map_or(Culprit::NoEvent, |((_, c), _)| *c);
        out.push(trip);
        from = woke;
    }
    Cut {
        trips: out,
        switches_unseen,
    }
}

/// Notes what `e` bounds of wake-up `b`, the CPUs as they were before it.
fn observe(
    b: &mut Bounds,
    e: &TraceEvent,
    tid: i32,
    cpus: &HashMap<usize, Cpu>,
    task_cpu: Option<usize>,
    comms: &Comms,
) {
    let here = cpus.get(&e.cpu);
    // The wake-up's time between the interrupt's exit and the switch goes
    // to what the task's CPU was doing up to this event.
    if let (Some(_), None) = (b.exit, b.switch)
        && Some(e.cpu) == task_cpu.or(b.waking.map(|w| w.1))
    {
        let what = match here {
            Some(c) if !c.irqs.is_empty() => WAKE_IRQ,
            Some(c) if c.curr.is_some_and(|p| p != 0 && p != tid) => RUN_QUEUE,
            _ => WAKE_REST,
        };
        let behind = comms.behind(here, tid);
        *b.split.entry((what, behind)).or_default() += e.ts_ns.saturating_sub(b.split_to);
        b.split_to = e.ts_ns.max(b.split_to);
    }
    if e.pid == tid && b.waking.is_some() && b.switch.is_none() && !b.on_cpu {
        b.switch_unseen = true;
    }
    match e.kind {
        EventKind::Waking { pid, .. } if pid == tid && b.waking.is_none() => {
            let open = here.map_or(0, |c| c.irqs.len());
            b.waking = Some((e.ts_ns, e.cpu, open));
            let irq = here.and_then(|c| c.irqs.last().copied());
            b.entry = irq.map(|i| i.0);
            b.irq = irq.map_or(0, |i| i.1);
            b.on_cpu = task_cpu
                .and_then(|t| cpus.get(&t))
                .is_some_and(|c| c.curr == Some(tid));
        }
        EventKind::IrqExit if b.exit.is_none() && b.entry.is_some() => {
            if let Some((_, cpu, open)) = b.waking
                && cpu == e.cpu
                && here.is_some_and(|c| c.irqs.len() == open)
            {
                b.exit = Some(e.ts_ns);
                b.split_to = e.ts_ns;
            }
        }
        EventKind::Switch { next_pid, .. }
            if next_pid == tid && b.waking.is_some() && b.switch.is_none() =>
        {
            b.switch = Some(e.ts_ns);
        }
        // Its exit after the switch back, or without one where none was
        // due or none was recorded.
        EventKind::SysExit { id }
            if e.pid == tid
                && b.sys_exit.is_none()
                && (b.switch.is_some() || b.waking.is_none() || b.on_cpu || b.switch_unseen) =>
        {
            b.sys_exit = Some((e.ts_ns, id));
        }
        _ => {}
    }
}

/// Where the cutting of one wake-up is.
struct Cursor {
    parts: BTreeMap<String, u64>,
    culprits: BTreeMap<(String, Culprit), u64>,
    /// The last bound seen.
    at: u64,
    /// Whether a bound is missing since it.
    gap: bool,
    woke: u64,
}

impl Cursor {
    /// `ns` of `part`, spent behind `culprit`.
    fn put(&mut self, part: &str, culprit: Culprit, ns: u64) {
        *self.parts.entry(part.to_string()).or_default() += ns;
        *self
            .culprits
            .entry((part.to_string(), culprit))
            .or_default() += ns;
    }

    /// The time from the last bound to `to` goes to `part`, spent behind
    /// `culprit`, or to the residual (no event) when a bound is missing
    /// between; a missing or out-of-order `to` leaves a gap.
    fn add(&mut self, part: &str, culprit: Culprit, to: Option<u64>) {
        match to {
            Some(t) if t >= self.at && t <= self.woke => {
                let (p, c) = if self.gap {
                    (RESIDUAL, Culprit::NoEvent)
                } else {
                    (part, culprit)
                };
                self.put(p, c, t - self.at);
                self.at = t;
                self.gap = false;
            }
            _ => self.gap = true,
        }
    }
}

/// The parts of one wake-up from its bounds: each part runs from the last
/// bound seen to its own; a part whose bound is missing leaves its time,
/// up to the next bound seen, to the residual. `late_behind` is what the
/// wake-up before was spent behind most: a late start's culprit.
fn cut(
    b: &Bounds,
    deadline: u64,
    start: u64,
    woke: u64,
    late_behind: Culprit,
    name: &dyn Fn(i64) -> String,
) -> RoundTrip {
    let mut c = Cursor {
        parts: BTreeMap::new(),
        culprits: BTreeMap::new(),
        at: start,
        gap: false,
        woke,
    };
    let delay = if b.idle { IRQ_IDLE_EXIT } else { IRQ_DELAY };
    // An interrupt that began before the deadline (its handler found the
    // timer expired on its way) has no delay.
    c.add(
        delay,
        b.at_deadline.unwrap_or(Culprit::NoEvent),
        b.entry.map(|t| t.max(start)),
    );
    let irq = Culprit::Interrupt(b.irq);
    c.add(IRQ_HANDLER, irq, b.waking.map(|w| w.0));
    c.add(IRQ_AFTER, irq, b.exit);
    match (b.exit, b.switch) {
        (Some(x), Some(s)) if !c.gap && x == c.at && s >= x && s <= woke => {
            // The split ran to the last event before the switch, and that
            // event's time to the switch is in it too; keep the sum exact
            // whatever the split holds.
            let covered: u64 = b.split.values().sum();
            if covered == s - x {
                for (&(part, culprit), &v) in &b.split {
                    c.put(part, culprit, v);
                }
            } else {
                c.put(WAKE_REST, Culprit::Own, s - x);
            }
            c.at = s;
        }
        // Woken on its CPU: nothing to switch back to.
        (Some(x), None) if b.on_cpu && !c.gap && x == c.at => {}
        // The task ran with no switch to it recorded: its wake-up and its
        // return are one part, up to its system call's exit.
        (Some(x), None) if b.switch_unseen && !c.gap && x == c.at => {
            c.add(WAKE_UNRECORDED, Culprit::NoEvent, b.sys_exit.map(|s| s.0));
        }
        _ => c.add(WAKE_REST, Culprit::Own, b.switch),
    }
    let ret = b.sys_exit.map_or_else(
        || RETURN.to_string(),
        |(_, id)| format!("{RETURN}: {}", name(id)),
    );
    c.add(&ret, Culprit::Own, b.sys_exit.map(|s| s.0));
    let (last, by) = if c.gap {
        (RESIDUAL, Culprit::NoEvent)
    } else {
        (USER, Culprit::Own)
    };
    c.put(last, by, woke.saturating_sub(c.at));
    // A late task's deadline passed before the wake-up before it ended:
    // that one's lateness carried over, behind what it was spent behind.
    if start > deadline {
        c.put(LATE, late_behind, start - deadline);
    }
    // The residual is always there, 0 where every bound was seen.
    let (mut parts, mut culprits) = (c.parts, c.culprits);
    parts.entry(RESIDUAL.to_string()).or_default();
    parts.retain(|k, v| *v > 0 || k == RESIDUAL);
    culprits.retain(|_, v| *v > 0);
    RoundTrip {
        total_ns: woke.saturating_sub(deadline),
        parts,
        culprits,
    }
}

#[cfg(test)]
mod tests;
