//! Tests of the pingpong model.

use super::*;
use crate::engine::models::test_peer::{BROKEN, self_loop, served, served_by};
use crate::engine::os::peer::{Fault, faulty_end};
use std::sync::Arc;

/// One figure through a channel whose server end runs [`echo`] in a
/// thread, the ends broken by `fault`; `wrap` may break the client's
/// end further.
fn figure_with(
    size: usize,
    fault: Option<Fault>,
    cold: Option<usize>,
    wrap: impl FnOnce(Box<dyn Endpoint>) -> Box<dyn Endpoint>,
) -> Result<Measurement, ChannelError> {
    figure_by(false, size, fault, cold, wrap)
}

/// [`figure_with`] through ends that lend where `lending`; a fault of the
/// server's own (not one that breaks an end) is the echo's to apply.
fn figure_by(
    lending: bool,
    size: usize,
    fault: Option<Fault>,
    cold: Option<usize>,
    wrap: impl FnOnce(Box<dyn Endpoint>) -> Box<dyn Endpoint>,
) -> Result<Measurement, ChannelError> {
    let echoed = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&echoed);
    let by_echo = fault.filter(|f| !f.breaks_client());
    let (client, server) = served_by(lending, size, fault, move |ep| {
        echo(ep, &mut Region::warm(size), by_echo, &count)
    });
    let mut client = wrap(client);
    let m = measure(
        client.as_mut(),
        size,
        false,
        &Budget::tiny(),
        cold,
        Some(&echoed),
    );
    drop(client);
    // It ends when the client's end is gone, or on the fault it met
    // first: then the client saw the channel closed (a run appends the
    // peer's own error to the figure's).
    match (m, server.join().expect("the echo does not panic")) {
        (Err(ChannelError::Closed), Err(e)) => Err(e),
        (m, _) => m,
    }
}

fn figure(size: usize, fault: Option<Fault>) -> Result<Measurement, ChannelError> {
    figure_with(size, fault, None, |c| c)
}

#[test]
fn an_echoing_peer_gives_a_consistent_figure() {
    for cold in [None, Some(1 << 20)] {
        let m = figure_with(64, None, cold, |c| c).unwrap();
        assert_eq!(m.samples_ns.len(), 3);
        assert!(m.iterations >= 1);
        assert!(m.loop_overhead_ns >= 0.0 && m.clock_overhead_ns >= 0.0);
        let l = m.latency;
        assert!(l.min <= l.p50 && l.p50 <= l.p99 && l.p99 <= l.max);
        assert_eq!(m.verified_round_trips, 8);
    }
}

#[test]
fn the_echo_complements_the_number_and_counts_what_it_returns() {
    let echoed = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&echoed);
    let (mut client, server) = served(3, None, move |ep| {
        echo(ep, &mut Region::warm(3), None, &count)
    });
    let mut buf = [0u8; 3];
    stamp(&mut buf, 0x0A_0B0C, 3);
    client.send(&buf).unwrap();
    client.recv(&mut buf).unwrap();
    assert_eq!(buf, [!0x0C, !0x0B, !0x0A]);
    check_echo(&buf, 0x0A_0B0C, 3).unwrap();
    assert_eq!(echoed.load(Ordering::Acquire), 1);
    drop(client);
    assert!(matches!(server.join().unwrap(), Err(ChannelError::Closed)));
}

#[test]
fn no_figure_through_a_broken_channel_at_any_size() {
    for (what, fault) in BROKEN {
        for size in [1, 3, 8, 64, 4096] {
            let err = figure(size, Some(fault)).unwrap_err();
            assert!(
                matches!(
                    err,
                    ChannelError::NotReturned { seq: 1 } | ChannelError::NothingReceived { seq: 1 }
                ),
                "{what} at {size} B: {err}"
            );
            // The client's end alone broken: its own checks catch it.
            let err = figure_with(size, None, None, |c| faulty_end(fault, c, size)).unwrap_err();
            assert!(
                matches!(
                    err,
                    ChannelError::NotReturned { seq: 1 } | ChannelError::NothingReceived { seq: 1 }
                ),
                "{what} at {size} B: {err}"
            );
        }
    }
    // A notification carries nothing to check: the peer's count tells a
    // loopback (the silent and shared faults still wait for the reply).
    let err = figure_with(0, Some(Fault::Loopback), None, |c| c).unwrap_err();
    assert!(
        err.to_string().contains("the peer returned 0 messages"),
        "{err}"
    );
    for fault in [Fault::Silent, Fault::SharedBuffer] {
        figure(0, Some(fault)).unwrap();
    }
}

#[test]
fn the_messages_say_what_came_back() {
    let err = figure(64, Some(Fault::Loopback)).unwrap_err().to_string();
    assert!(err.contains("came back exactly as it was sent"), "{err}");
    assert!(err.contains("loopback"), "{err}");
    let err = figure(64, Some(Fault::Silent)).unwrap_err().to_string();
    assert!(err.contains("nothing was received"), "{err}");
}

/// Returns, from the second receive on, the reply before the latest:
/// a channel that lost a message and echoes a stale one.
struct Stale {
    inner: Box<dyn Endpoint>,
    held: Option<Vec<u8>>,
}

impl Endpoint for Stale {
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.inner.send(msg)
    }
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let mut now = vec![0u8; buf.len()];
        self.inner.recv(&mut now)?;
        buf.copy_from_slice(self.held.as_deref().unwrap_or(&now));
        self.held = Some(now);
        Ok(())
    }
}

#[test]
fn a_stale_echo_is_caught() {
    for (size, cold) in [(64, None), (1, None), (64, Some(1 << 20))] {
        let err = figure_with(size, None, cold, |inner| {
            Box::new(Stale { inner, held: None })
        })
        .unwrap_err();
        assert!(
            matches!(err, ChannelError::Corrupt { seq: 2, .. }),
            "{size} B: {err}"
        );
    }
}

#[test]
fn a_self_loop_is_measured_and_its_silent_receive_caught() {
    for size in [1, 64] {
        let mut ep = self_loop();
        let m = measure(&mut ep, size, true, &Budget::tiny(), None, None).unwrap();
        assert_eq!(m.verified_round_trips, 8);
        let mut silent = faulty_end(Fault::Silent, Box::new(self_loop()), size);
        let err = measure(silent.as_mut(), size, true, &Budget::tiny(), None, None).unwrap_err();
        assert!(
            matches!(
                err,
                ChannelError::NotReturned { seq: 1 } | ChannelError::NothingReceived { seq: 1 }
            ),
            "{size} B: {err}"
        );
    }
}

/// Records the number each message sent carries.
struct Numbers {
    inner: Box<dyn Endpoint>,
    sent: Arc<std::sync::Mutex<Vec<u64>>>,
}

impl Endpoint for Numbers {
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let n = u64::from_le_bytes(msg[..8].try_into().unwrap());
        self.sent.lock().unwrap().push(n);
        self.inner.send(msg)
    }
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        self.inner.recv(buf)
    }
}

#[test]
fn every_round_trip_of_every_phase_carries_the_next_number() {
    let sent = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = Arc::clone(&sent);
    figure_with(64, None, None, |inner| {
        Box::new(Numbers {
            inner,
            sent: record,
        })
    })
    .unwrap();
    let sent = sent.lock().unwrap();
    let want: Vec<u64> = (1..=sent.len() as u64).collect();
    assert!(*sent == want, "numbers skipped or repeated");
}

#[test]
fn pattern_differs_between_messages() {
    let (mut a, mut b) = (vec![0u8; 300], vec![0u8; 300]);
    fill_pattern(&mut a, 7);
    fill_pattern(&mut b, 8);
    assert_ne!(a[..8], b[..8]);
    assert_ne!(a[8..], b[8..]);
}

/// Through ends that lend: a figure whose every reply was read in place,
/// and none through an end broken in any of the three ways.
#[test]
fn a_lending_channel_is_measured_in_place_and_its_faults_caught() {
    let lent_figure = |size, fault| figure_by(true, size, fault, None, |c| c);
    for size in [1, 8, 64, 4096] {
        let m = lent_figure(size, None).unwrap();
        assert_eq!(m.verified_round_trips, 8);
        for (what, fault) in BROKEN {
            let err = lent_figure(size, Some(fault)).unwrap_err();
            assert!(
                matches!(
                    err,
                    ChannelError::NotReturned { seq: 1 } | ChannelError::NotLent { seq: 1, .. }
                ),
                "{what} at {size} B: {err}"
            );
        }
    }
    // A damaged body is caught by the verify rounds' comparison in place.
    let err = lent_figure(64, Some(Fault::Corrupt)).unwrap_err();
    assert!(matches!(err, ChannelError::Corrupt { seq: 1, .. }), "{err}");
}
