//! Timer wake-ups cut at their bounds, and the culprits of each part.

use super::*;
use crate::machine::tracefs::decode::NO_PRIO;
use EventKind::*;

const TID: i32 = 42;
const OTHER: i32 = 7;

fn ev(ts_ns: u64, cpu: usize, pid: i32, kind: EventKind) -> TraceEvent {
    TraceEvent::new(ts_ns, cpu, pid, kind)
}

fn name(id: i64) -> String {
    crate::analysis::explain::syscall_name(id)
}

/// The task sleeps on CPU 1 (idle after it) and is woken by the
/// interrupt at `irq`: entry, waking 200 ns later, exit 300 ns after
/// that, the switch `switch` ns after the exit, the system call's exit
/// 400 ns after the switch.
fn sleep_and_wake(t0: u64, irq: u64, switch: u64) -> Vec<TraceEvent> {
    sleep_and_wake_over(t0, irq, switch, 0)
}

/// The same, the interrupt coming while `current` runs on CPU 1 (it is
/// each event's task until the switch).
fn sleep_and_wake_over(t0: u64, irq: u64, switch: u64, current: i32) -> Vec<TraceEvent> {
    vec![
        ev(t0, 1, TID, SysEnter { id: 230 }),
        ev(
            t0 + 10,
            1,
            TID,
            Switch {
                prev_pid: TID,
                prev_runnable: false,
                prev_stopped: false,
                next_pid: 0,
            },
        ),
        ev(irq, 1, current, IrqEntry),
        ev(
            irq + 200,
            1,
            current,
            Waking {
                pid: TID,
                target_cpu: 1,
            },
        ),
        ev(
            irq + 210,
            1,
            current,
            Wakeup {
                pid: TID,
                target_cpu: 1,
            },
        ),
        ev(irq + 500, 1, current, IrqExit),
        ev(
            irq + 500 + switch,
            1,
            current,
            Switch {
                prev_pid: current,
                prev_runnable: true,
                prev_stopped: false,
                next_pid: TID,
            },
        ),
        ev(irq + 900 + switch, 1, TID, SysExit { id: 230 }),
    ]
}

/// [`sleep_and_wake_over`] of OTHER from 5 µs, the interrupt at 13 µs:
/// OTHER switched in on CPU 1 at 8 µs at priority `prio`, the task's
/// switch in `switch` ns after the interrupt's exit.
fn behind_other(switch: u64, prio: i16) -> Vec<TraceEvent> {
    let mut events = sleep_and_wake_over(5_000, 13_000, switch, OTHER);
    let mut to_other = ev(
        8_000,
        1,
        0,
        Switch {
            prev_pid: 0,
            prev_runnable: true,
            prev_stopped: false,
            next_pid: OTHER,
        },
    );
    to_other.prio = prio;
    events.push(to_other);
    events.sort_by_key(|e| e.ts_ns);
    events
}

/// The ns of `part` that `t` spent behind `c`.
fn behind(t: &RoundTrip, part: &str, c: Culprit) -> Option<u64> {
    t.culprits.get(&(part.to_string(), c)).copied()
}

fn sum(t: &RoundTrip) -> u64 {
    t.parts.values().sum()
}

#[test]
fn an_idle_cpus_timer_wake_up_is_cut_at_each_bound_and_adds_up() {
    // Deadline 10_000; interrupt at 13_000; stamp 100 ns after the exit.
    let events = sleep_and_wake(5_000, 13_000, 600);
    let woke = 13_000 + 900 + 600 + 100;
    let trips = decompose(&events, &[(10_000, woke)], TID, &name).trips;
    let t = &trips[0];
    assert_eq!(t.total_ns, woke - 10_000);
    assert_eq!(sum(t), t.total_ns);
    assert_eq!(t.parts[IRQ_IDLE_EXIT], 3_000);
    assert_eq!(t.parts[IRQ_HANDLER], 200);
    assert_eq!(t.parts[IRQ_AFTER], 300);
    assert_eq!(t.parts[WAKE_REST], 600);
    assert_eq!(t.parts["return to user: clock_nanosleep"], 400);
    assert_eq!(t.parts[USER], 100);
    assert_eq!(t.parts[RESIDUAL], 0);
    assert!(!t.parts.contains_key(RUN_QUEUE));
}

#[test]
fn a_wake_up_behind_another_task_and_an_interrupt_is_split() {
    // Another task runs on CPU 1 from before the deadline until the
    // switch to the woken task at 14_500, which preempts it; an
    // interrupt runs there from 13_700 to 13_800 meanwhile.
    let mut events = behind_other(1_000, NO_PRIO);
    events.extend([
        ev(13_700, 1, OTHER, IrqEntry),
        ev(13_800, 1, OTHER, IrqExit),
    ]);
    events.sort_by_key(|e| e.ts_ns);
    let woke = 13_000 + 900 + 1_000 + 50;
    let cut = decompose(&events, &[(10_000, woke)], TID, &name);
    assert_eq!(cut.switches_unseen, 0);
    let t = &cut.trips[0];
    assert_eq!(sum(t), t.total_ns);
    // Not idle at the deadline: the delay is not an idle exit.
    assert_eq!(t.parts[IRQ_DELAY], 3_000);
    assert!(!t.parts.contains_key(IRQ_IDLE_EXIT));
    // Exit 13_500 → switch 14_500: behind the other task but for the
    // interrupt's 100 ns.
    assert_eq!(t.parts[RUN_QUEUE], 900);
    assert_eq!(t.parts[WAKE_IRQ], 100);
    assert!(!t.parts.contains_key(WAKE_REST));
    assert_eq!(t.parts[RESIDUAL], 0);
}

#[test]
fn a_wake_up_whose_interrupt_was_not_seen_is_residual_up_to_the_next_bound() {
    // The waking fires outside any interrupt seen (its entry was lost).
    let events: Vec<TraceEvent> = sleep_and_wake(5_000, 13_000, 600)
        .into_iter()
        .filter(|e| !matches!(e.kind, IrqEntry | IrqExit))
        .collect();
    let woke = 13_000 + 900 + 600 + 100;
    let t = &decompose(&events, &[(10_000, woke)], TID, &name).trips[0];
    assert_eq!(sum(t), t.total_ns);
    // Deadline → switch: no interrupt bounds it.
    assert_eq!(t.parts[RESIDUAL], 13_000 + 500 + 600 - 10_000);
    assert_eq!(t.parts["return to user: clock_nanosleep"], 400);
    assert_eq!(t.parts[USER], 100);
    assert!(!t.parts.contains_key(IRQ_IDLE_EXIT));
}

#[test]
fn successive_wake_ups_each_add_up_and_a_wake_up_without_events_is_all_residual() {
    let mut events = sleep_and_wake(5_000, 13_000, 600);
    events.extend(sleep_and_wake(15_000, 21_000, 300));
    let trips = decompose(
        &events,
        &[(10_000, 14_600), (20_500, 22_300), (30_000, 30_800)],
        TID,
        &name,
    )
    .trips;
    assert_eq!(trips.len(), 3);
    for t in &trips {
        assert_eq!(sum(t), t.total_ns);
    }
    assert_eq!(trips[1].parts[IRQ_IDLE_EXIT], 500);
    assert_eq!(trips[1].parts[WAKE_REST], 300);
    assert_eq!(trips[2].parts[RESIDUAL], 800);
    assert_eq!(trips[2].parts.len(), 1);
}

#[test]
fn a_late_task_woken_on_its_cpu_has_no_wake_up_and_its_carried_lateness_is_a_part() {
    // The wake-up before ends at 12_000, after this deadline (10_000):
    // the task enters the call at 12_100, the interrupt comes at 12_300
    // while it is still on CPU 1, and it returns without a switch.
    let events = vec![
        ev(
            11_000,
            1,
            0,
            Switch {
                prev_pid: 0,
                prev_runnable: true,
                prev_stopped: false,
                next_pid: TID,
            },
        ),
        ev(12_100, 1, TID, SysEnter { id: 230 }),
        ev(12_300, 1, TID, IrqEntry),
        ev(
            12_400,
            1,
            TID,
            Waking {
                pid: TID,
                target_cpu: 1,
            },
        ),
        ev(12_600, 1, TID, IrqExit),
        ev(12_900, 1, TID, SysExit { id: 230 }),
    ];
    let trips = decompose(&events, &[(5_000, 12_000), (10_000, 13_000)], TID, &name).trips;
    let t = &trips[1];
    assert_eq!(sum(t), t.total_ns);
    assert_eq!(t.total_ns, 3_000);
    assert_eq!(t.parts[LATE], 2_000);
    assert_eq!(t.parts[IRQ_DELAY], 300);
    assert_eq!(t.parts[IRQ_HANDLER], 100);
    assert_eq!(t.parts[IRQ_AFTER], 200);
    assert_eq!(t.parts["return to user: clock_nanosleep"], 300);
    assert_eq!(t.parts[USER], 100);
    assert_eq!(t.parts[RESIDUAL], 0);
    assert!(!t.parts.keys().any(|k| is_wake_up(k)));
}

#[test]
fn a_task_running_with_no_switch_to_it_seen_is_counted_and_its_wake_up_one_part() {
    // The switch from OTHER to the task is missing from the trace (as
    // this project's guests lose some): the task's own system-call exit
    // is the next event.
    let events: Vec<TraceEvent> = sleep_and_wake_over(5_000, 13_000, 600, OTHER)
        .into_iter()
        .filter(|e| !matches!(e.kind, Switch { next_pid, .. } if next_pid == TID))
        .collect();
    let woke = 13_000 + 900 + 600 + 100;
    let cut = decompose(&events, &[(10_000, woke)], TID, &name);
    assert_eq!(cut.switches_unseen, 1);
    let t = &cut.trips[0];
    assert_eq!(sum(t), t.total_ns);
    assert_eq!(t.parts[IRQ_HANDLER], 200);
    // The interrupt's exit → the task's own next event, its sys_exit,
    // is one part (only the missing switch would divide it); then its
    // user time.
    assert_eq!(t.parts[WAKE_UNRECORDED], 600 + 400);
    assert_eq!(t.parts[RESIDUAL], 0);
    assert_eq!(t.parts[USER], 100);
    assert!(is_wake_up(WAKE_UNRECORDED));
}

#[test]
fn each_part_of_a_wake_up_names_what_it_was_spent_behind() {
    // CPU 1 entered idle state 3 after the task slept: the delay is its
    // idle exit. The interrupt is label 9 (the local timer); another task
    // (label 4) runs from the interrupt's exit until the switch.
    let mut events = sleep_and_wake_over(5_000, 13_000, 1_000, OTHER);
    events.push(ev(5_020, 1, 0, Idle { state: 3 }));
    for e in events.iter_mut() {
        if matches!(e.kind, IrqEntry) {
            e.label = 9;
        }
    }
    let mut to_other = ev(
        13_600,
        1,
        0,
        Switch {
            prev_pid: 0,
            prev_runnable: true,
            prev_stopped: false,
            next_pid: OTHER,
        },
    );
    to_other.label = 4;
    events.push(to_other);
    // The events before the interrupt's are the idle task's.
    for e in events.iter_mut() {
        if e.ts_ns > 5_010 && e.ts_ns < 13_600 {
            e.pid = 0;
        }
    }
    events.sort_by_key(|e| e.ts_ns);
    let woke = 13_000 + 900 + 1_000 + 50;
    let t = &decompose(&events, &[(10_000, woke)], TID, &name).trips[0];
    assert_eq!(sum(t), t.total_ns);
    let get = |part: &str, c: Culprit| behind(t, part, c);
    assert_eq!(get(IRQ_IDLE_EXIT, Culprit::Idle(Some(3))), Some(3_000));
    assert_eq!(get(IRQ_HANDLER, Culprit::Interrupt(9)), Some(200));
    assert_eq!(get(IRQ_AFTER, Culprit::Interrupt(9)), Some(300));
    // Exit 13_500 → 13_600 idle, then behind the other task to 14_500.
    assert_eq!(
        get(
            RUN_QUEUE,
            Culprit::Task {
                pid: OTHER,
                comm: 4
            }
        ),
        Some(900),
        "{:?}",
        t.culprits
    );
    assert_eq!(get(WAKE_REST, Culprit::Idle(Some(3))), Some(100));
    assert_eq!(get(USER, Culprit::Own), Some(50));
    // A part's culprits add up to it.
    for (part, ns) in &t.parts {
        let of: u64 = t
            .culprits
            .iter()
            .filter(|((p, _), _)| p == part)
            .map(|(_, v)| v)
            .sum();
        assert_eq!(of, *ns, "{part}");
    }
}

#[test]
fn a_delay_behind_a_running_task_and_a_missing_bound_name_the_task_and_no_event() {
    let events = behind_other(1_000, NO_PRIO);
    let woke = 13_000 + 900 + 1_000 + 50;
    let t = &decompose(&events, &[(10_000, woke), (30_000, 30_400)], TID, &name).trips;
    let other = Culprit::Task {
        pid: OTHER,
        comm: 0,
    };
    assert_eq!(
        behind(&t[0], IRQ_DELAY, other),
        Some(3_000),
        "{:?}",
        t[0].culprits
    );
    // A wake-up with no events is all residual, spent behind no event.
    assert_eq!(behind(&t[1], RESIDUAL, Culprit::NoEvent), Some(400));
}

#[test]
fn a_carried_lateness_is_spent_behind_what_made_the_wake_up_before_late() {
    // The first wake-up waits 5 µs behind the other task; the next
    // deadline passes 2 µs before its stamp.
    let events = behind_other(5_000, NO_PRIO);
    let woke = 13_000 + 900 + 5_000 + 50;
    let t = decompose(
        &events,
        &[(10_000, woke), (woke - 2_000, woke + 500)],
        TID,
        &name,
    )
    .trips;
    assert_eq!(
        behind(
            &t[0],
            RUN_QUEUE,
            Culprit::Task {
                pid: OTHER,
                comm: 0
            }
        ),
        Some(5_000)
    );
    assert_eq!(t[1].parts[LATE], 2_000);
    assert_eq!(
        behind(
            &t[1],
            LATE,
            Culprit::Task {
                pid: OTHER,
                comm: 0
            }
        ),
        Some(2_000),
        "{:?}",
        t[1].culprits
    );
}

#[test]
fn a_timer_task_of_higher_priority_waiting_behind_another_is_told_outranked() {
    let mut events = behind_other(1_000, 120);
    for e in events.iter_mut() {
        if matches!(e.kind, Waking { pid: TID, .. }) {
            e.prio = 49;
        }
    }
    let woke = 13_000 + 900 + 1_000 + 50;
    let t = &decompose(&events, &[(10_000, woke)], TID, &name).trips[0];
    assert_eq!(
        behind(
            t,
            RUN_QUEUE,
            Culprit::Outranked {
                pid: OTHER,
                comm: 0
            }
        ),
        Some(1_000),
        "{:?}",
        t.culprits
    );
}
