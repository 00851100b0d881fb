//! A broker relays every message: client → broker → server → broker →
//! client, the broker's time its own parts.

use super::*;

/// The broker's thread.
const B: i32 = 300;

fn wakeup(ts: u64, cpu: usize, pid: i32) -> TraceEvent {
    ev(
        ts,
        cpu,
        0,
        EventKind::Wakeup {
            pid,
            target_cpu: cpu as i32,
        },
    )
}

fn relayed() -> Tasks {
    Tasks {
        relays: vec![B],
        ..tasks()
    }
}

/// Before the first stamp: the client runs (CPU 0), the server (CPU 1)
/// and the broker (CPU 2) sleep.
fn asleep() -> Vec<TraceEvent> {
    use EventKind::*;
    vec![
        ev(0, 0, C, SysExit { id: 1 }),
        ev(0, 1, S, SysEnter { id: READ }),
        switch(1, 1, S, 0),
        ev(0, 2, B, SysEnter { id: WAIT }),
        switch(1, 2, B, 0),
    ]
}

/// One round trip from `t` (300 ns) through a broker on CPU 2, each of the
/// three asleep in its idle task between messages: every stretch 10 ns but
/// the idle exits (20 ns).
fn round_trip(t: u64) -> Vec<TraceEvent> {
    use EventKind::*;
    let mut events = vec![
        // Client user 10, sendmsg 10 up to the broker's waking.
        ev(t + 10, 0, C, SysEnter { id: SEND }),
        waking(t + 20, 0, C, B, 2),
        ev(t + 25, 0, C, SysExit { id: SEND }),
        ev(t + 27, 0, C, SysEnter { id: RECV }),
        switch(t + 29, 0, C, 0),
    ];
    // Broker: wake-up (idle exit 20, rest 10), epoll_wait, user, recvmsg,
    // user, sendmsg up to the server's waking: 10 each.
    events.extend(relays(t + 40, S, 1));
    events.extend([
        // Server: wake-up (20 + 10), read, user, write up to the
        // broker's waking.
        wakeup(t + 120, 1, S),
        switch(t + 130, 1, 0, S),
        ev(t + 140, 1, S, SysExit { id: READ }),
        ev(t + 150, 1, S, SysEnter { id: WRITE }),
        waking(t + 160, 1, S, B, 2),
        ev(t + 165, 1, S, SysExit { id: WRITE }),
        ev(t + 167, 1, S, SysEnter { id: READ }),
        switch(t + 169, 1, S, 0),
    ]);
    // Broker again, up to the client's waking.
    events.extend(relays(t + 180, C, 0));
    events.extend([
        // Client: wake-up (20 + 10), recvmsg, then user to the stamp.
        wakeup(t + 260, 0, C),
        switch(t + 270, 0, 0, C),
        ev(t + 280, 0, C, SysExit { id: RECV }),
    ]);
    events
}

/// The broker's leg from `t`: woken, it reads the message and relays it to
/// `to` on CPU `cpu` (every stretch 10 ns but the idle exit, 20), then
/// sleeps again.
fn relays(t: u64, to: i32, cpu: i32) -> Vec<TraceEvent> {
    use EventKind::*;
    vec![
        wakeup(t, 2, B),
        switch(t + 10, 2, 0, B),
        ev(t + 20, 2, B, SysExit { id: WAIT }),
        ev(t + 30, 2, B, SysEnter { id: RECV }),
        ev(t + 40, 2, B, SysExit { id: RECV }),
        ev(t + 50, 2, B, SysEnter { id: SEND }),
        waking(t + 60, 2, B, to, cpu),
        ev(t + 65, 2, B, SysExit { id: SEND }),
        ev(t + 67, 2, B, SysEnter { id: WAIT }),
        switch(t + 69, 2, B, 0),
    ]
}

fn trace(n: usize) -> (Vec<TraceEvent>, Vec<u64>) {
    let mut events = asleep();
    let mut stamps = vec![100];
    for i in 0..n {
        let t = 100 + 300 * i as u64;
        events.extend(round_trip(t));
        stamps.push(t + 300);
    }
    (events, stamps)
}

#[test]
fn the_brokers_time_relaying_each_message_is_its_own_parts() {
    let (events, stamps) = trace(3);
    let trips = decompose(&events, &stamps, relayed(), &name);
    assert_eq!(trips.len(), 3);
    let want: BTreeMap<String, u64> = [
        ("client user", 10 + 20),
        ("client sendmsg", 10),
        ("broker wake-up: idle exit", 20 + 20),
        ("broker wake-up: rest", 10 + 10),
        ("broker epoll_wait", 10 + 10),
        ("broker user", 20 + 20),
        ("broker recvmsg", 10 + 10),
        ("broker sendmsg", 10 + 10),
        ("server wake-up: idle exit", 20),
        ("server wake-up: rest", 10),
        ("server read", 10),
        ("server user", 10),
        ("server write", 10),
        ("client wake-up: idle exit", 20),
        ("client wake-up: rest", 10),
        ("client recvmsg", 10),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for t in &trips {
        assert_eq!(t.parts, want);
        assert_eq!(t.parts.values().sum::<u64>(), t.total_ns);
    }
    let (centre, parts) = summarise(&trips);
    assert_eq!(centre.mean, 300.0);
    let sum: f64 = parts.iter().map(|p| p.mean_ns).sum();
    assert!((sum - centre.mean).abs() < 1e-9, "{sum}");
    assert_eq!(parts.last().unwrap().name, RESIDUAL);
    assert_eq!(parts.last().unwrap().mean_ns, 0.0);
    assert!(is_wake_up("broker wake-up: idle exit"));
}

#[test]
fn a_broker_not_traced_leaves_its_time_in_the_residual() {
    // The same events, the broker not named: from the client's send to
    // the server's wake-up, and from the server's send to the client's,
    // the message is with a task the anatomy does not know.
    let (events, stamps) = trace(2);
    for t in decompose(&events, &stamps, tasks(), &name) {
        assert_eq!(t.parts.values().sum::<u64>(), t.total_ns);
        assert!(!t.parts.keys().any(|k| k.starts_with(BROKER)), "{t:?}");
        assert!(t.parts[RESIDUAL] >= 100, "{t:?}");
    }
}

#[test]
fn a_client_woken_by_the_brokers_read_does_not_take_the_message() {
    let (mut events, stamps) = trace(1);
    // The broker's read of the call wakes the client (it waits on the
    // socket's queue), which runs 2 ns and sleeps again.
    events.extend([
        waking(100 + 75, 2, B, C, 0),
        switch(100 + 76, 0, 0, C),
        switch(100 + 78, 0, C, 0),
    ]);
    events.sort_by_key(|e| e.ts_ns);
    let p = &decompose(&events, &stamps, relayed(), &name)[0].parts;
    assert_eq!(p.values().sum::<u64>(), 300);
    assert_eq!(p["broker recvmsg"], 10 + 10, "{p:?}");
    assert_eq!(p["broker sendmsg"], 10 + 10, "{p:?}");
    assert!(!p.contains_key(RESIDUAL), "{p:?}");
}

#[test]
fn a_broker_busy_when_the_message_comes_takes_it_without_a_wake_up() {
    use EventKind::*;
    let t = 100;
    // The broker (CPU 2) is still running from before: the client's send
    // wakes nobody. Once the client sleeps, the message is the broker's.
    let mut events = asleep();
    events.retain(|e| e.pid != B);
    events.extend([
        ev(t - 5, 2, B, SysExit { id: WAIT }),
        ev(t + 10, 0, C, SysEnter { id: SEND }),
        ev(t + 15, 2, B, SysEnter { id: RECV }),
        ev(t + 20, 0, C, SysExit { id: SEND }),
        ev(t + 22, 0, C, SysEnter { id: RECV }),
        switch(t + 25, 0, C, 0),
        ev(t + 30, 2, B, SysExit { id: RECV }),
        ev(t + 40, 2, B, SysEnter { id: SEND }),
        waking(t + 50, 2, B, S, 1),
    ]);
    let p = &decompose(&events, &[t, t + 60], relayed(), &name)[0].parts;
    assert_eq!(p["client recvmsg"], 3, "{p:?}");
    assert_eq!(p["broker recvmsg"], 5, "{p:?}");
    assert_eq!(p["broker user"], 10, "{p:?}");
    assert_eq!(p["broker sendmsg"], 10, "{p:?}");
    assert_eq!(p["server wake-up: idle exit"], 10, "{p:?}");
    assert!(!p.contains_key(RESIDUAL), "{p:?}");
    assert_eq!(p.values().sum::<u64>(), 60);
}

#[test]
fn a_server_woken_before_the_broker_was_seen_takes_the_message() {
    use EventKind::*;
    let t = 100;
    // The busy broker relays the call while the client is still in its
    // send: the server's waking is the first the anatomy sees of it.
    let mut events = asleep();
    events.retain(|e| e.pid != B);
    events.extend([
        ev(t - 5, 2, B, SysExit { id: WAIT }),
        ev(t + 10, 0, C, SysEnter { id: SEND }),
        ev(t + 14, 2, B, SysEnter { id: RECV }),
        ev(t + 16, 2, B, SysExit { id: RECV }),
        ev(t + 17, 2, B, SysEnter { id: SEND }),
        waking(t + 18, 2, B, S, 1),
        ev(t + 20, 0, C, SysExit { id: SEND }),
    ]);
    let p = &decompose(&events, &[t, t + 40], relayed(), &name)[0].parts;
    assert_eq!(p["client sendmsg"], 8, "{p:?}");
    assert_eq!(p["server wake-up: idle exit"], 22, "{p:?}");
    assert!(!p.contains_key(RESIDUAL), "{p:?}");
    assert_eq!(p.values().sum::<u64>(), 40);
}
