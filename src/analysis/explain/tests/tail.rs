//! Culprits, early wake-ups and the tail of the slowest round trips.

use super::super::tail::{Naming, TailSelect, tail};
use super::*;

#[test]
fn each_part_names_what_it_was_spent_behind() {
    use EventKind::*;
    let (mut events, stamps) = trace(1);
    let t = 100;
    // CPU 1 entered idle state 2; its timer interrupt is label 7; a hog
    // (label 5) runs there from t+40 until the wake-up is queued from the
    // idle task's context at t+50.
    events.push(ev(t + 1, 1, 0, Idle { state: 2 }));
    for e in events.iter_mut() {
        if e.ts_ns == t + 30 {
            e.label = 7;
        }
    }
    let mut hog = switch(t + 40, 1, 0, 300);
    hog.label = 5;
    events.push(hog);
    events.sort_by_key(|e| e.ts_ns);
    let d = decompose_all(&events, &stamps, tasks(), &name);
    let c = &d.trips[0].culprits;
    let get = |part: &str, culprit: Culprit| c.get(&(part.to_string(), culprit)).copied();
    assert_eq!(
        get(
            "server wake-up: run-queue wait",
            Culprit::Task { pid: 300, comm: 5 }
        ),
        Some(10),
        "{c:?}"
    );
    assert_eq!(
        get("server wake-up: irq+softirq", Culprit::Interrupt(7)),
        Some(5)
    );
    assert_eq!(
        get("server wake-up: idle exit", Culprit::Idle(Some(2))),
        Some(15)
    );
    assert_eq!(get("server read", Culprit::Own), Some(10));
    // A part's culprits add up to it.
    for (part, ns) in &d.trips[0].parts {
        let sum: u64 = c
            .iter()
            .filter(|((p, _), _)| p == part)
            .map(|(_, v)| v)
            .sum();
        assert_eq!(sum, *ns, "{part}");
    }
}

/// A unix-stream echo's round trip from `t`, 70 ns: each side's receive
/// wakes its peer (write space) before the peer's message is sent, and
/// the sends wake no one (the peer is already awake).
fn early_round_trip(t: u64) -> Vec<TraceEvent> {
    use EventKind::*;
    vec![
        ev(t + 5, 0, C, SysEnter { id: SEND }),
        ev(t + 15, 0, C, SysExit { id: SEND }),
        switch(t + 20, 1, 0, S),
        ev(t + 22, 0, C, SysEnter { id: RECV }),
        switch(t + 23, 0, C, 0),
        waking(t + 25, 1, S, C, 0),
        ev(t + 30, 1, S, SysExit { id: RECV }),
        ev(t + 40, 1, S, SysEnter { id: SEND }),
        ev(t + 50, 1, S, SysExit { id: SEND }),
        switch(t + 55, 0, 0, C),
        ev(t + 57, 1, S, SysEnter { id: RECV }),
        switch(t + 58, 1, S, 0),
        waking(t + 60, 0, C, S, 1),
        ev(t + 65, 0, C, SysExit { id: RECV }),
    ]
}

#[test]
fn the_path_follows_the_message_not_a_wake_up_before_it_was_sent() {
    let mut events = vec![
        ev(0, 0, C, EventKind::SysExit { id: RECV }),
        ev(1, 1, S, EventKind::SysEnter { id: RECV }),
        switch(2, 1, S, 0),
    ];
    let mut stamps = vec![100];
    for i in 0..3 {
        let t = 100 + 70 * i;
        events.extend(early_round_trip(t));
        stamps.push(t + 70);
    }
    let d = decompose_all(&events, &stamps, tasks(), &name);
    // The first round trip sets the state; from the second the echo is
    // symmetric: each side's receive, user time and send are its own.
    for trip in &d.trips[1..] {
        let p = &trip.parts;
        for side in ["client", "server"] {
            assert_eq!(p[&format!("{side} recvmsg")], 10, "{side}: {p:?}");
            assert_eq!(p[&format!("{side} sendmsg")], 10, "{side}: {p:?}");
            assert_eq!(p[&format!("{side} user")], 10, "{side}: {p:?}");
            assert_eq!(p[&format!("{side} wake-up: idle exit")], 5, "{side}: {p:?}");
        }
        assert_eq!(p.values().sum::<u64>(), 70);
    }
    // Every wake-up came early (the server's first had no waking seen: it
    // slept before the pass).
    let side = |s: &str| d.wake_ups.iter().find(|w| w.side == s).unwrap().clone();
    assert_eq!((side("client").early, side("client").seen), (3, 3));
    assert_eq!((side("server").early, side("server").seen), (3, 3));
    assert_eq!(side("server").no_waking, 1);
}

fn trip(parts: &[(&str, u64, Culprit)]) -> RoundTrip {
    let mut t = RoundTrip {
        total_ns: parts.iter().map(|p| p.1).sum(),
        parts: BTreeMap::new(),
        culprits: BTreeMap::new(),
    };
    for &(name, ns, c) in parts {
        *t.parts.entry(name.to_string()).or_default() += ns;
        *t.culprits.entry((name.to_string(), c)).or_default() += ns;
    }
    t
}

fn naming_test(f: impl FnOnce(&Naming)) {
    let word = |l: u32| match l {
        5 => "hog".to_string(),
        7 => "softirq TIMER".to_string(),
        _ => String::new(),
    };
    let kind = |pid: i32| {
        if pid == 400 {
            ", kernel thread".into()
        } else {
            String::new()
        }
    };
    let idle = |s: u32| format!("C{s}");
    f(&Naming {
        word: &word,
        task_kind: &kind,
        idle_state: &idle,
        process: &|_| None,
    })
}

#[test]
fn the_slowest_round_trips_are_split_by_excess_and_grouped_by_signature() {
    let own = Culprit::Own;
    let hog = |pid| Culprit::Task { pid, comm: 5 };
    let typical = |extra: u64| {
        trip(&[
            ("client user", 10 + extra, own),
            ("server read", 20, own),
            ("server wake-up: idle exit", 30, Culprit::Idle(Some(1))),
        ])
    };
    let mut trips: Vec<RoundTrip> = (0..40).map(|i| typical(i % 3)).collect();
    // Three slow ones behind the hog (two of its processes), one behind
    // the timer's softirq, one behind a kernel thread.
    for (at, pid) in [(5, 300), (17, 301), (29, 300)] {
        trips[at] = trip(&[
            ("client user", 10, own),
            ("server read", 20, own),
            ("server wake-up: idle exit", 30, Culprit::Idle(Some(1))),
            ("server wake-up: run-queue wait", 900 + at as u64, hog(pid)),
        ]);
    }
    trips[33] = trip(&[
        ("client user", 10, own),
        ("server read", 20, own),
        ("server wake-up: idle exit", 10, Culprit::Idle(Some(1))),
        ("server wake-up: irq+softirq", 500, Culprit::Interrupt(7)),
    ]);
    trips[34] = trip(&[
        ("client user", 10, own),
        ("server read", 20, own),
        ("server preempted", 400, Culprit::Task { pid: 400, comm: 0 }),
        ("server wake-up: idle exit", 30, Culprit::Idle(Some(1))),
    ]);
    naming_test(|naming| {
        let t = tail(&trips, TailSelect::Count(5), naming);
        assert_eq!(t.round_trips_seen, 40);
        assert_eq!(t.slowest.len(), 5);
        assert_eq!(t.typical_ns, 61.0);
        assert_eq!(t.slowest[0].index, 29);
        assert_eq!(t.threshold_ns, t.slowest[4].round_trip_ns);
        for s in &t.slowest {
            // Its parts add up to it, their excesses to its excess.
            let sum: f64 = s.parts.iter().map(|p| p.ns).sum();
            assert_eq!(sum, s.round_trip_ns, "{s:?}");
            let excess: f64 = s.parts.iter().map(|p| p.excess_ns).sum();
            assert_eq!(excess, s.excess_ns, "{s:?}");
        }
        let first = &t.slowest[0];
        assert_eq!(first.parts[0].name, "server wake-up: run-queue wait");
        assert_eq!(first.parts[0].culprit, "hog [pid 300]");
        assert_eq!(
            first.signature,
            "server wake-up: run-queue wait behind hog [pid 300]"
        );
        // The idle exit shorter than typical is a negative excess.
        let irq = t.slowest.iter().find(|s| s.index == 33).unwrap();
        let idle = irq
            .parts
            .iter()
            .find(|p| p.name.ends_with("idle exit"))
            .unwrap();
        assert_eq!(
            (idle.excess_ns, idle.culprit.as_str()),
            (-20.0, "idle state C1")
        );
        assert_eq!(
            irq.signature,
            "server wake-up: irq+softirq in softirq TIMER"
        );
        assert_eq!(
            signature_counts(&t),
            [
                ("server wake-up: run-queue wait behind hog [2 pids]", 3),
                ("server wake-up: irq+softirq in softirq TIMER", 1),
                ("server preempted behind pid 400, kernel thread", 1),
            ]
        );
        assert!((t.signatures[0].share - 0.6).abs() < 1e-12);
        // A share keeps at least ten.
        assert_eq!(
            tail(&trips, TailSelect::Share(0.001), naming).slowest.len(),
            10
        );
        assert_eq!(TailSelect::Share(0.001).words(), "0.1%");
        assert_eq!(TailSelect::Count(0).count(3), 0);
    });
}

#[test]
fn a_side_stopped_by_a_signal_is_a_part_named_for_it() {
    use EventKind::*;
    let stopped = |ts, cpu, prev| {
        ev(
            ts,
            cpu,
            prev,
            Switch {
                prev_pid: prev,
                prev_runnable: false,
                prev_stopped: true,
                next_pid: 0,
            },
        )
    };
    let t = 100;
    let events = vec![
        ev(0, 0, C, SysExit { id: 1 }),
        ev(0, 1, S, SysEnter { id: READ }),
        switch(1, 1, S, 0),
        // SIGSTOP from pid 999 wakes the server to stop it.
        waking(t + 5, 1, 999, S, 1),
        switch(t + 6, 1, 999, S),
        stopped(t + 8, 1, S),
        ev(t + 10, 0, C, SysEnter { id: WRITE }),
        ev(t + 20, 0, C, SysExit { id: WRITE }),
        ev(t + 22, 0, C, SysEnter { id: READ }),
        switch(t + 25, 0, C, 0),
        // SIGCONT 2 µs later.
        waking(t + 2025, 1, 999, S, 1),
        switch(t + 2030, 1, 999, S),
        ev(t + 2040, 1, S, SysExit { id: READ }),
        ev(t + 2050, 1, S, SysEnter { id: WRITE }),
        waking(t + 2055, 1, S, C, 0),
        ev(t + 2060, 1, S, SysExit { id: WRITE }),
        switch(t + 2070, 0, 0, C),
        ev(t + 2080, 0, C, SysExit { id: READ }),
    ];
    let d = decompose_all(&events, &[t, t + 2090], tasks(), &name);
    let p = &d.trips[0].parts;
    assert_eq!(p.values().sum::<u64>(), 2090);
    assert!(p["server stopped"] >= 2000, "{p:?}");
    assert!(!p.contains_key(RESIDUAL), "{p:?}");
    let c = &d.trips[0].culprits;
    assert_eq!(
        c[&("server stopped".to_string(), Culprit::Stopped)],
        p["server stopped"]
    );
    let (normal, stamps) = trace(3);
    let mut trips = decompose(&normal, &stamps, tasks(), &name);
    trips.push(d.trips[0].clone());
    naming_test(|naming| {
        let t = tail(&trips, TailSelect::Count(1), naming);
        assert_eq!(t.slowest[0].signature, "server stopped");
        assert_eq!(
            t.slowest[0].parts[0].culprit,
            "stopped (a stop signal or a tracer)"
        );
    });
}

#[test]
fn a_task_run_with_its_switch_in_left_out_is_named_in_the_wake_up_it_delayed() {
    use EventKind::*;
    let t = 100;
    let mut handler_woken = waking(t + 15, 1, 0, 500, 1);
    handler_woken.label = 9;
    let events = vec![
        ev(0, 0, C, SysExit { id: 1 }),
        ev(0, 1, S, SysEnter { id: READ }),
        switch(1, 1, S, 0),
        ev(t + 10, 0, C, SysEnter { id: WRITE }),
        // The load's handler is woken on CPU 1 and runs there, its switch
        // in (from the idle task) left out by the kernel.
        handler_woken,
        waking(t + 20, 0, C, S, 1),
        ev(t + 25, 0, C, SysExit { id: WRITE }),
        ev(t + 27, 0, C, SysEnter { id: READ }),
        switch(t + 29, 0, C, 0),
        // Its switch out to the server is there.
        switch(t + 50, 1, 500, S),
        ev(t + 60, 1, S, SysExit { id: READ }),
        ev(t + 70, 1, S, SysEnter { id: WRITE }),
        waking(t + 80, 1, S, C, 0),
        ev(t + 85, 1, S, SysExit { id: WRITE }),
        switch(t + 90, 0, 0, C),
        ev(t + 95, 0, C, SysExit { id: READ }),
    ];
    let mut with = tasks();
    with.load = vec![500];
    with.handlers = vec![500];
    let d = decompose_all(&events, &[t, t + 100], with, &name);
    let p = &d.trips[0].parts;
    let named = "server wake-up + irq handler (load) (no switch seen)";
    assert_eq!(p[named], 30, "{p:?}");
    assert!(!p.contains_key("server wake-up: idle exit"), "{p:?}");
    assert_eq!(p.values().sum::<u64>(), 100);
    assert_eq!(
        d.trips[0].culprits[&(named.to_string(), Culprit::Task { pid: 500, comm: 9 })],
        30
    );
    assert_eq!(d.merged_round_trips, 1);
}

#[test]
fn a_wait_behind_a_task_of_lower_priority_than_the_side_says_so() {
    use EventKind::*;
    let (mut events, stamps) = trace(1);
    let t = 100;
    // The server is woken at priority 49 (SCHED_FIFO 50); a task at 120
    // (normal) runs on its CPU from t+40 until the server's switch in.
    for e in events.iter_mut() {
        if matches!(e.kind, Waking { pid: S, .. }) {
            e.prio = 49;
        }
    }
    let mut hog = switch(t + 40, 1, 0, 300);
    hog.label = 5;
    hog.prio = 120;
    events.push(hog);
    events.sort_by_key(|e| e.ts_ns);
    let d = decompose_all(&events, &stamps, tasks(), &name);
    let c = &d.trips[0].culprits;
    assert_eq!(
        c.get(&(
            "server wake-up: run-queue wait".to_string(),
            Culprit::Outranked { pid: 300, comm: 5 }
        ))
        .copied(),
        Some(10),
        "{c:?}"
    );
    // Named for what it is: the scheduler would have run the server.
    let word = |l: u32| {
        if l == 5 {
            "kdamond.0".into()
        } else {
            String::new()
        }
    };
    let naming = Naming {
        word: &word,
        task_kind: &|_| String::new(),
        idle_state: &|s| s.to_string(),
        process: &|_| None,
    };
    let named = naming.culprit(&Culprit::Outranked { pid: 300, comm: 5 });
    assert!(
        named.starts_with("kdamond.0 [pid 300, lower priority"),
        "{named}"
    );
    // A fair-class side behind a task of a lower weight is an ordinary
    // culprit: no order is promised between them.
    assert!(!outranks(Some(&120), Some(&125)));
    assert!(outranks(Some(&49), Some(&60)));
    assert!(!outranks(Some(&49), None));
    // A task of the same priority is an ordinary culprit.
    for e in events.iter_mut() {
        if e.ts_ns == t + 40 {
            e.prio = 49;
        }
    }
    let d = decompose_all(&events, &stamps, tasks(), &name);
    assert!(
        d.trips[0].culprits.contains_key(&(
            "server wake-up: run-queue wait".to_string(),
            Culprit::Task { pid: 300, comm: 5 }
        )),
        "{:?}",
        d.trips[0].culprits
    );
}

#[test]
fn threads_of_one_process_with_names_of_their_own_are_one_culprit() {
    let own = Culprit::Own;
    let typical = trip(&[("client user", 10, own), ("server read", 20, own)]);
    let mut trips: Vec<RoundTrip> = (0..20).map(|_| typical.clone()).collect();
    // A compiler's threads, each named for its work (labels 5 and 6),
    // and a task of a process of its own (label 7).
    for (at, pid, comm) in [(3, 300, 5), (8, 301, 6), (12, 302, 7)] {
        trips[at] = trip(&[
            ("client user", 10, own),
            ("server read", 20, own),
            (
                "server wake-up: run-queue wait",
                900 + at as u64,
                Culprit::Task { pid, comm },
            ),
        ]);
    }
    let word = |l: u32| format!("thread{l}");
    let process = |pid: i32| (pid == 300 || pid == 301).then(|| "rustc".to_string());
    let naming = Naming {
        word: &word,
        task_kind: &|_| String::new(),
        idle_state: &|s| s.to_string(),
        process: &process,
    };
    let t = tail(&trips, TailSelect::Count(3), &naming);
    assert_eq!(
        signature_counts(&t),
        [
            ("server wake-up: run-queue wait behind rustc [2 threads]", 2),
            ("server wake-up: run-queue wait behind thread7 [pid 302]", 1),
        ]
    );
    // One slow round trip names the thread and its process.
    let one = t.slowest.iter().find(|s| s.index == 8).unwrap();
    assert_eq!(one.parts[0].culprit, "thread6 [pid 301, a thread of rustc]");
}

/// Each signature of a tail with its count, in the tail's order.
fn signature_counts(t: &crate::record::explain::TailRecord) -> Vec<(&str, u64)> {
    t.signatures
        .iter()
        .map(|s| (s.signature.as_str(), s.count))
        .collect()
}
