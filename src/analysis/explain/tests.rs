use super::*;

const C: i32 = 100;
const S: i32 = 200;
const READ: i64 = 1000;
const WRITE: i64 = 1001;
const RECV: i64 = 1002;
const SEND: i64 = 1003;
const WAIT: i64 = 1004;

fn name(id: i64) -> String {
    match id {
        READ => "read".into(),
        WRITE => "write".into(),
        RECV => "recvmsg".into(),
        SEND => "sendmsg".into(),
        WAIT => "epoll_wait".into(),
        n => format!("syscall {n}"),
    }
}

fn ev(ts_ns: u64, cpu: usize, pid: i32, kind: EventKind) -> TraceEvent {
    TraceEvent::new(ts_ns, cpu, pid, kind)
}

/// `by`, on `cpu`, wakes `pid` for `target_cpu` (`sched_waking`).
fn waking(ts: u64, cpu: usize, by: i32, pid: i32, target_cpu: i32) -> TraceEvent {
    ev(ts, cpu, by, EventKind::Waking { pid, target_cpu })
}

fn switch(ts: u64, cpu: usize, prev: i32, next: i32) -> TraceEvent {
    ev(
        ts,
        cpu,
        prev,
        EventKind::Switch {
            prev_pid: prev,
            prev_runnable: false,
            prev_stopped: false,
            next_pid: next,
        },
    )
}

/// One round trip of a blocking channel across CPUs 0 (client) and 1
/// (server), both asleep in their idle tasks between messages, starting
/// at `t`: every part 10 ns long but the idle exits (30 ns), with an
/// interrupt of 5 ns on CPU 1 during the server's idle exit.
fn round_trip(t: u64) -> Vec<TraceEvent> {
    use EventKind::*;
    vec![
        // client user [t, t+10); write [t+10, t+20) wakes the server.
        ev(t + 10, 0, C, SysEnter { id: WRITE }),
        waking(t + 20, 0, C, S, 1),
        // The client finishes its write and blocks in read, off the path.
        ev(t + 25, 0, C, SysExit { id: WRITE }),
        ev(t + 27, 0, C, SysEnter { id: READ }),
        switch(t + 29, 0, C, 0),
        // Server wake-up: idle exit 30 (5 of them an interrupt), rest 10.
        ev(t + 30, 1, 0, IrqEntry),
        ev(t + 35, 1, 0, IrqExit),
        ev(
            t + 50,
            1,
            0,
            Wakeup {
                pid: S,
                target_cpu: 1,
            },
        ),
        switch(t + 60, 1, 0, S),
        // Server read's rest 10, user 10, write 10 up to the waking.
        ev(t + 70, 1, S, SysExit { id: READ }),
        ev(t + 80, 1, S, SysEnter { id: WRITE }),
        waking(t + 90, 1, S, C, 0),
        ev(t + 95, 1, S, SysExit { id: WRITE }),
        ev(t + 96, 1, S, SysEnter { id: READ }),
        switch(t + 97, 1, S, 0),
        // Client wake-up: idle exit 30, rest 10.
        ev(
            t + 120,
            0,
            0,
            Wakeup {
                pid: C,
                target_cpu: 0,
            },
        ),
        switch(t + 130, 0, 0, C),
        // Client read's rest 10, then user to the next stamp.
        ev(t + 140, 0, C, SysExit { id: READ }),
    ]
}

fn trace(n: usize) -> (Vec<TraceEvent>, Vec<u64>) {
    // Before the first stamp: the client returns from a system call;
    // the server went to sleep in a read.
    let mut events = vec![
        ev(0, 0, C, EventKind::SysExit { id: 1 }),
        ev(0, 1, S, EventKind::SysEnter { id: READ }),
        switch(1, 1, S, 0),
    ];
    let mut stamps = vec![100];
    for i in 0..n {
        let t = 100 + 150 * i as u64;
        events.extend(round_trip(t));
        stamps.push(t + 150);
    }
    (events, stamps)
}

/// Without segments.
pub(super) fn decompose_all(
    events: &[TraceEvent],
    stamps: &[u64],
    tasks: Tasks,
    name: &dyn Fn(i64) -> String,
) -> Decomposed {
    decompose_into(events, stamps, tasks, name, None)
}

/// The round trips alone.
pub(super) fn decompose(
    events: &[TraceEvent],
    stamps: &[u64],
    tasks: Tasks,
    name: &dyn Fn(i64) -> String,
) -> Vec<RoundTrip> {
    decompose_all(events, stamps, tasks, name).trips
}

fn tasks() -> Tasks {
    Tasks {
        client: C,
        server: Some(S),
        relays: Vec::new(),
        load: Vec::new(),
        handlers: Vec::new(),
    }
}

#[test]
fn a_round_trip_is_cut_into_its_parts_along_the_message() {
    let (events, stamps) = trace(3);
    let trips = decompose(&events, &stamps, tasks(), &name);
    assert_eq!(trips.len(), 3);
    for t in &trips {
        let want: BTreeMap<String, u64> = [
            ("client user", 10 + 10),
            ("client write", 10),
            ("server wake-up: idle exit", 25),
            ("server wake-up: irq+softirq", 5),
            ("server wake-up: rest", 10),
            ("server read", 10),
            ("server user", 10),
            ("server write", 10),
            ("client wake-up: idle exit", 30),
            ("client wake-up: rest", 10),
            ("client read", 10),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(t.parts, want);
        assert_eq!(t.total_ns, 150);
        assert_eq!(t.parts.values().sum::<u64>(), t.total_ns);
    }
}

#[test]
fn the_parts_means_add_up_to_the_mean_round_trip_and_the_residual_is_shown() {
    let (mut events, stamps) = trace(4);
    // The second round trip's wake-up of the client was lost: the
    // client sleeps with the message, time nobody can account for.
    events.retain(|e| !(e.ts_ns == 250 + 90 && matches!(e.kind, EventKind::Waking { .. })));
    let trips = decompose(&events, &stamps, tasks(), &name);
    for t in &trips {
        assert_eq!(t.parts.values().sum::<u64>(), t.total_ns);
    }
    assert!(trips[1].parts.get(RESIDUAL).copied().unwrap_or(0) > 0);
    let (centre, parts) = summarise(&trips);
    assert_eq!(centre.mean, 150.0);
    let sum: f64 = parts.iter().map(|p| p.mean_ns).sum();
    assert!((sum - centre.mean).abs() < 1e-9, "{sum}");
    let shares: f64 = parts.iter().map(|p| p.share).sum();
    assert!((shares - 1.0).abs() < 1e-9);
    assert_eq!(parts.last().unwrap().name, RESIDUAL);
    // Without a lost event there is still a residual row, at zero.
    let (events, stamps) = trace(2);
    let (_, parts) = summarise(&decompose(&events, &stamps, tasks(), &name));
    let r = parts.iter().find(|p| p.name == RESIDUAL).unwrap();
    assert_eq!(r.mean_ns, 0.0);
}

#[test]
fn a_wake_up_during_the_holders_receive_is_early_and_leaves_it_the_message() {
    let (mut events, stamps) = trace(1);
    // During the server's read (t+60..t+70) the client is woken (a
    // socket's write space), runs 2 ns and sleeps again: the server still
    // has the message, all of its read is on the path, and the wake-up is
    // counted as early.
    let t = 100;
    events.extend([
        waking(t + 62, 1, S, C, 0),
        switch(t + 63, 0, 0, C),
        switch(t + 65, 0, C, 0),
    ]);
    events.sort_by_key(|e| e.ts_ns);
    let d = decompose_all(&events, &stamps, tasks(), &name);
    let p = &d.trips[0].parts;
    assert_eq!(p.values().sum::<u64>(), 150);
    assert!(!p.contains_key(RESIDUAL), "{p:?}");
    assert_eq!(p["server read"], 10, "{p:?}");
    let client = d.wake_ups.iter().find(|w| w.side == "client").unwrap();
    assert_eq!((client.early, client.seen), (1, 2), "{client:?}");
    assert_eq!(p["server user"], 10);
    assert_eq!(p["server write"], 10);
}

#[test]
fn a_wake_up_before_its_task_left_the_cpu_is_a_wake_up_not_a_sleep() {
    use EventKind::*;
    // The server (CPU 1) replies while the client (CPU 0) is still on
    // its CPU going to sleep in read; the kernel queues the wake-up
    // only once it is off (sched_wakeup at 40), behind task O.
    const O: i32 = 55;
    let t = 100;
    let events = vec![
        ev(0, 0, C, SysExit { id: 1 }),
        ev(0, 1, S, SysEnter { id: READ }),
        ev(t + 5, 0, C, SysEnter { id: WRITE }),
        ev(t + 10, 0, C, SysExit { id: WRITE }),
        ev(t + 12, 0, C, SysEnter { id: READ }),
        // The server, still running, replies at once.
        ev(t + 15, 1, S, SysExit { id: READ }),
        ev(t + 16, 1, S, SysEnter { id: WRITE }),
        waking(t + 18, 1, S, C, 0),
        switch(t + 20, 0, C, O),
        ev(
            t + 40,
            1,
            S,
            Wakeup {
                pid: C,
                target_cpu: 0,
            },
        ),
        ev(t + 42, 1, S, SysExit { id: WRITE }),
        ev(t + 43, 1, S, SysEnter { id: READ }),
        switch(t + 50, 1, S, 0),
        switch(t + 70, 0, O, C),
        ev(t + 75, 0, C, SysExit { id: READ }),
    ];
    let p = &decompose(&events, &[t, t + 80], tasks(), &name)[0].parts;
    assert_eq!(p.values().sum::<u64>(), 80);
    assert!(!p.contains_key(RESIDUAL), "{p:?}");
    // The reply woke the client before it was off its CPU: from its
    // switch out it waits for its CPU, which runs O, and what the
    // server does after its reply is off the path.
    assert_eq!(p["client wake-up: run-queue wait"], 50, "{p:?}");
    assert!(!p.keys().any(|k| k.starts_with("server")), "{p:?}");
}

#[test]
fn a_side_runs_from_its_first_event_where_its_switch_in_was_not_recorded() {
    use EventKind::*;
    // The server's switch in (idle → it, CPU 1) is missing, as this
    // kernel sometimes leaves it out: its read's return is its first
    // event, and its wake-up ends there.
    let t = 100;
    let events = vec![
        ev(0, 0, C, SysExit { id: 1 }),
        ev(0, 1, S, SysEnter { id: READ }),
        switch(1, 1, S, 0),
        ev(t + 10, 0, C, SysEnter { id: WRITE }),
        waking(t + 20, 0, C, S, 1),
        ev(t + 30, 1, S, SysExit { id: READ }),
        ev(t + 40, 1, S, SysEnter { id: WRITE }),
        waking(t + 50, 1, S, C, 0),
        ev(t + 55, 0, C, SysExit { id: WRITE }),
    ];
    let d = decompose_all(&events, &[t, t + 60], tasks(), &name);
    let p = &d.trips[0].parts;
    // Its idle exit, the switch and its read's return: one stretch, named
    // for all of them, and counted.
    assert_eq!(
        p["server wake-up + read return (no switch seen)"], 10,
        "{p:?}"
    );
    assert!(!p.contains_key("server wake-up: idle exit"), "{p:?}");
    let server = d.wake_ups.iter().find(|w| w.side == "server").unwrap();
    assert_eq!((server.seen, server.no_switch_in), (1, 1), "{server:?}");
    assert_eq!(d.merged_round_trips, 1);
    let c = &d.trips[0].culprits;
    assert_eq!(
        c[&(
            "server wake-up + read return (no switch seen)".to_string(),
            Culprit::NoEvent
        )],
        10
    );
    assert_eq!(p["server user"], 10, "{p:?}");
    assert_eq!(p["server write"], 10, "{p:?}");
    assert_eq!(p.values().sum::<u64>(), 60);
    assert!(!p.contains_key(RESIDUAL), "{p:?}");
}

#[test]
fn on_one_cpu_the_wake_up_waits_behind_the_waker() {
    use EventKind::*;
    // Client and server on CPU 0: the server is woken at 20 but runs
    // only when the client blocks at 40.
    let t = 100;
    let events = vec![
        ev(0, 0, S, SysEnter { id: READ }),
        ev(0, 0, C, SysExit { id: 1 }),
        switch(1, 0, S, C),
        ev(t + 10, 0, C, SysEnter { id: WRITE }),
        waking(t + 20, 0, C, S, 0),
        ev(
            t + 21,
            0,
            C,
            Wakeup {
                pid: S,
                target_cpu: 0,
            },
        ),
        ev(t + 30, 0, C, SysExit { id: WRITE }),
        ev(t + 35, 0, C, SysEnter { id: READ }),
        switch(t + 40, 0, C, S),
        ev(t + 50, 0, S, SysExit { id: READ }),
        ev(t + 55, 0, S, SysEnter { id: WRITE }),
        waking(t + 60, 0, S, C, 0),
        ev(t + 65, 0, S, SysExit { id: WRITE }),
        ev(t + 66, 0, S, SysEnter { id: READ }),
        switch(t + 70, 0, S, C),
        ev(t + 80, 0, C, SysExit { id: READ }),
    ];
    let trips = decompose(&events, &[t, t + 90], tasks(), &name);
    let p = &trips[0].parts;
    assert_eq!(p["server wake-up: run-queue wait"], 20);
    assert_eq!(p["client wake-up: run-queue wait"], 10);
    assert_eq!(p["client user"], 20);
    assert_eq!(p.values().sum::<u64>(), 90);
    assert!(!p.contains_key(RESIDUAL));
}

#[test]
fn time_behind_a_held_loads_process_is_the_loads() {
    use EventKind::*;
    // The server (CPU 1) is woken at 20 while a load process (L) runs
    // there; L runs to 50, then the server; it is preempted by L again
    // at 60 until 70, and the message is back at the client by 90.
    const L: i32 = 77;
    let t = 100;
    let events = vec![
        ev(0, 1, S, SysEnter { id: READ }),
        switch(1, 1, S, L),
        ev(0, 0, C, SysExit { id: 1 }),
        ev(t + 10, 0, C, SysEnter { id: WRITE }),
        waking(t + 20, 0, C, S, 1),
        ev(
            t + 25,
            1,
            L,
            Wakeup {
                pid: S,
                target_cpu: 1,
            },
        ),
        switch(t + 50, 1, L, S),
        ev(
            t + 60,
            1,
            S,
            Switch {
                prev_pid: S,
                prev_runnable: true,
                prev_stopped: false,
                next_pid: L,
            },
        ),
        switch(t + 70, 1, L, S),
        ev(t + 75, 1, S, SysExit { id: READ }),
        ev(t + 80, 1, S, SysEnter { id: WRITE }),
        waking(t + 85, 1, S, C, 0),
        switch(t + 86, 0, 0, C),
    ];
    let with = Tasks {
        load: vec![L],
        ..tasks()
    };
    let p = &decompose(&events, &[t, t + 90], with.clone(), &name)[0].parts;
    assert_eq!(p["server load"], 30 + 10, "{p:?}");
    assert!(!p.contains_key("server wake-up: run-queue wait"), "{p:?}");
    assert!(!p.contains_key("server preempted"), "{p:?}");
    assert_eq!(p.values().sum::<u64>(), 90);
    // Without the load's pids the same time is another task's.
    let p = &decompose(&events, &[t, t + 90], tasks(), &name)[0].parts;
    assert_eq!(p["server wake-up: run-queue wait"], 30, "{p:?}");
    assert_eq!(p["server preempted"], 10, "{p:?}");
    assert!(is_load("server load") && !is_load("server read"));
    // An interrupt source's process is the handler of its interrupt:
    // the same time is interrupt time.
    let handler = Tasks {
        handlers: vec![L],
        ..with
    };
    let p = &decompose(&events, &[t, t + 90], handler, &name)[0].parts;
    assert_eq!(p["server irq handler (load)"], 30 + 10, "{p:?}");
    assert!(!p.contains_key("server load"), "{p:?}");
    assert!(is_interrupt("server irq handler (load)") && !is_load("server irq handler (load)"));
}

#[test]
fn a_mechanism_without_system_calls_is_user_time_and_interference() {
    use EventKind::*;
    let events = vec![
        ev(0, 0, C, SysExit { id: 1 }),
        ev(120, 0, 0, IrqEntry),
        ev(130, 0, 0, IrqExit),
    ];
    let trips = decompose(
        &events,
        &[100, 150, 200],
        Tasks {
            client: C,
            server: Some(S),
            relays: Vec::new(),
            load: Vec::new(),
            handlers: Vec::new(),
        },
        &name,
    );
    assert_eq!(trips[0].parts["client user"], 40);
    assert_eq!(trips[0].parts["client irq+softirq"], 10);
    assert_eq!(trips[1].parts["client user"], 50);
    assert!(is_interrupt("client irq+softirq") && is_wake_up("server wake-up: rest"));
}

#[test]
fn system_calls_are_named_from_the_architecture_table() {
    #[cfg(target_arch = "x86_64")]
    {
        assert_eq!(syscall_name(0), "read");
        assert_eq!(syscall_name(202), "futex");
    }
    assert_eq!(syscall_name(-5), "syscall -5");
}

mod broker;
mod tail;
