//! Tests of the oneway model.

use super::*;

fn plan(interval: Option<Duration>, messages: u64, window: u64) -> OneWayPlan {
    OneWayPlan {
        interval,
        messages,
        window,
        max_time: Duration::from_secs(5),
    }
}

#[test]
fn header_round_trips_and_wraps_the_sequence() {
    let h = header(0x1_0005, 123_456);
    assert_eq!(h >> STAMP_BITS, 5);
    assert_eq!(h & STAMP_MASK, 123_456);
    let mut buf = [0u8; 8];
    write_header(&mut buf, h);
    assert_eq!(read_header(&buf), h);
    // Never zero (an eventfd cannot carry 0): sequence 1 upwards and a stamp.
    assert_ne!(header(1, 0), 0);
}

#[test]
fn windows_cover_every_message_and_the_last_may_be_short() {
    let lat: Vec<f64> = (1..=25).map(|v| v as f64).collect();
    let (m, f) = summarise(&lat, 25, &plan(None, 25, 10), 0.0, 4, 0).unwrap();
    assert_eq!(f.windows.len(), 3);
    assert_eq!(f.windows[0].min_ns, 1.0);
    assert_eq!(f.windows[0].max_ns, 10.0);
    assert_eq!(f.windows[0].mean_ns, 5.5);
    assert_eq!(f.windows[2].messages, 5);
    assert_eq!(f.mean_ns, 13.0);
    assert_eq!(m.samples_ns.len(), 3);
    assert_eq!(m.latency.count, 25);
    assert_eq!(f.pacing, "saturated");
    let (m, f) = summarise(
        &lat,
        25,
        &plan(Some(Duration::from_millis(1)), 25, 10),
        0.0,
        4,
        0,
    )
    .unwrap();
    assert_eq!(m.samples_ns.len(), 25);
    assert_eq!(f.interval_ns, Some(1_000_000));
}

#[test]
fn latencies_at_or_below_zero_keep_their_value_and_are_counted() {
    let lat = [-2.0, 0.0, 5.0, 7.0];
    let (m, f) = summarise(&lat, 4, &plan(None, 4, 2), 0.0, 4, 0).unwrap();
    assert_eq!(f.windows[0].min_ns, -2.0);
    assert_eq!(f.windows[0].mean_ns, -1.0);
    assert_eq!(m.samples_ns, [-1.0, 6.0]);
    assert_eq!(m.latency.at_or_below_zero, 2);
}

use crate::engine::models::test_peer::{BROKEN, served};

/// A channel whose server end runs [`receive`] in a thread with a fresh
/// store, broken by `fault`; `wrap` may break the client's end further.
fn receiver(
    size: usize,
    fault: Option<Fault>,
) -> (
    Box<dyn Endpoint>,
    Receiver,
    std::thread::JoinHandle<Result<(), ChannelError>>,
) {
    let rx = Receiver {
        store: Store::new(capacity(&plan(None, 50, 10), &Budget::tiny())).unwrap(),
        base_ns: monotonic_ns(),
    };
    let served_rx = rx.clone();
    let (client, server) = served(size, fault, move |ep| {
        receive(ep, &mut Region::warm(size), &served_rx, None)
    });
    (client, rx, server)
}

/// One figure through [`receiver`]'s channel; a failure is the
/// receiver's own error when it ended first (the client then sees the
/// channel closed; a run appends the peer's error to the figure's).
fn figure_with(
    size: usize,
    fault: Option<Fault>,
    wrap: impl FnOnce(Box<dyn Endpoint>) -> Box<dyn Endpoint>,
) -> Result<(Measurement, OneWayFacts), ChannelError> {
    let (client, rx, server) = receiver(size, fault);
    let mut client = wrap(client);
    let m = measure(
        client.as_mut(),
        size,
        &plan(None, 50, 10),
        &Budget::tiny(),
        &rx,
    );
    drop(client);
    let served = server.join().expect("the receiver does not panic");
    match (m, served) {
        (Err(ChannelError::Closed), Err(e)) => Err(e),
        (m, _) => m,
    }
}

#[test]
fn the_figure_reports_what_the_receiver_counted() {
    for size in [8, 64] {
        let (m, f) = figure_with(size, None, |c| c).unwrap();
        assert_eq!((f.messages_sent, f.messages_received, f.gaps), (50, 50, 0));
        assert_eq!(m.latency.count, 50);
        assert_eq!(m.verified_round_trips, 8);
    }
}

#[test]
fn no_figure_through_a_broken_channel() {
    for (what, fault) in BROKEN {
        for size in [8, 9, 64] {
            let err = figure_with(size, Some(fault), |c| c).unwrap_err();
            assert!(
                matches!(
                    err,
                    ChannelError::NotReturned { seq: 1 } | ChannelError::NothingReceived { seq: 1 }
                ),
                "{what} at {size} B: {err}"
            );
        }
    }
}

/// Sends message `at` twice: a channel that repeats a message.
struct Repeat {
    inner: Box<dyn Endpoint>,
    sent: u64,
    at: u64,
}

impl Endpoint for Repeat {
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.sent += 1;
        if self.sent == self.at {
            self.inner.send(msg)?;
        }
        self.inner.send(msg)
    }
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        self.inner.recv(buf)
    }
}

#[test]
fn a_repeated_message_fails_the_figure() {
    let err = figure_with(64, None, |inner| {
        Box::new(Repeat {
            inner,
            sent: 0,
            at: 20,
        })
    })
    .unwrap_err();
    // The receiver took the repeat for message 21 and acknowledged it.
    assert!(
        matches!(
            err,
            ChannelError::Sequence {
                expected: 21,
                got: 20
            }
        ),
        "{err}"
    );
}

#[test]
fn the_receiver_counts_gaps_and_repeats_and_follows_the_sequence() {
    let (mut client, rx, server) = receiver(8, None);
    let base = rx.base_ns;
    let mut buf = [0u8; 8];
    // 1, 2, then 4 (3 lost), 4 again (a repeat), 5.
    for s in [1u64, 2, 4, 4, 5] {
        let h = header(s, monotonic_ns() - base);
        write_header(&mut buf, h);
        client.send(&buf).unwrap();
        client.recv(&mut buf).unwrap();
        assert_eq!(read_header(&buf), !h, "message {s}: the acknowledgement");
    }
    drop(client);
    assert!(matches!(server.join().unwrap(), Err(ChannelError::Closed)));
    assert_eq!((rx.store.received(), rx.store.gaps()), (5, 2));
    assert!(
        rx.store.latency(3).is_none(),
        "a lost message has no latency"
    );
    for s in [1, 2, 4, 5] {
        assert!(rx.store.latency(s).is_some(), "message {s}");
    }
    assert_eq!(resync(0x1_FFFF + 1, 0xFFFF), 0x1_FFFF);
    assert_eq!(resync(0x1_FFFF, 0x0001), 0x2_0001);
}
