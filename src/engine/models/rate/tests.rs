//! Tests of the rate model: what is counted and checked, never how fast.

use super::curve::{knee, saturation};
use super::receiver::receive;
use super::*;
use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::measure::Budget;
use crate::engine::models::region::Region;
use crate::engine::models::test_peer::{BROKEN, End, LendOnly, pair, served};
use std::thread::JoinHandle;

/// A point of `messages` at `rate` through `client`, whose server end a
/// thread receives with a receiver planned for it.
fn point_through(
    client: &mut dyn Endpoint,
    server: JoinHandle<Result<(), ChannelError>>,
    rx: &Receiver,
    rate: f64,
) -> Result<(RatePoint, Vec<f64>), ChannelError> {
    let got = send_point(client, 64, rate, rx.timed, rx, &budget(), 50_000, 1);
    drop(server);
    got
}

/// A small budget whose waits for a receiver that failed end in 1 s.
fn budget() -> Budget {
    Budget {
        timeout: std::time::Duration::from_secs(1),
        ..Budget::tiny()
    }
}

fn receiving(
    rx: &Receiver,
) -> impl FnOnce(&mut dyn Endpoint) -> Result<(), ChannelError> + Send + 'static + use<> {
    let rx = rx.clone();
    move |ep: &mut dyn Endpoint| receive(ep, &mut Region::warm(64), &rx, None)
}

#[test]
fn every_message_arrives_and_is_timed_from_its_intended_send() {
    let rx = Receiver::new(400, 2, false).unwrap();
    let (mut client, server) = served(64, None, receiving(&rx));
    let (p, lat) = point_through(client.as_mut(), server, &rx, 20_000.0).unwrap();
    assert_eq!((p.sent, p.received, p.lost), (400, 400, 0));
    assert_eq!(lat.len(), 400);
    assert_eq!(p.verified, 4);
    assert_eq!(p.offered_rate, 20_000.0);
    assert!(p.achieved_rate > 0.0);
    let q = p.latency_ns;
    assert!(q.p50 <= q.p90 && q.p90 <= q.p99 && q.p99 <= q.p999 && q.p999 <= q.max);
    // Every message was sent at or after its intended time, so each
    // percentile from the actual send is at most the same one from the
    // intended send.
    let s = p.service_ns;
    assert!(
        s.p50 <= q.p50 && s.p99 <= q.p99 && s.max <= q.max,
        "{s:?} {q:?}"
    );
    assert_eq!(rx.last_received(), 404);
}

/// An end that lends is read where the message lies, never copied from,
/// and every message is given back once checked; the content is checked
/// all the same.
#[test]
fn an_end_that_lends_is_read_in_place_and_every_loan_given_back() {
    let rx = Receiver::new(300, 2, false).unwrap();
    let (mut client, server) = pair();
    let mut server = LendOnly::new(server);
    let released = server.released.clone();
    let serve = receiving(&rx);
    let thread = std::thread::spawn(move || serve(&mut server));
    let (p, lat) = point_through(&mut client, thread, &rx, 20_000.0).unwrap();
    assert_eq!((p.sent, p.received, p.lost, p.verified), (300, 300, 0, 4));
    assert_eq!(lat.len(), 300);
    // The last verify message may still be on loan when the point ends.
    assert!(released.load(std::sync::atomic::Ordering::Relaxed) >= 303);

    // A message whose content was changed on the way fails the point.
    let rx = Receiver::new(50, 2, false).unwrap();
    let (mut client, server) = pair();
    let mut server = LendOnly::new(server);
    let serve = receiving(&rx);
    let thread = std::thread::spawn(move || serve(&mut server));
    let mut flipping = Flipping(&mut client);
    let got = send_point(&mut flipping, 64, 50_000.0, 50, &rx, &budget(), 50_000, 1);
    drop(thread);
    assert!(got.is_err(), "{got:?}");
}

/// Flips the last byte of every message it sends.
struct Flipping<'a>(&'a mut End);

impl Endpoint for Flipping<'_> {
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let mut m = msg.to_vec();
        *m.last_mut().unwrap() ^= 0xff;
        self.0.send(&m)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        self.0.recv(buf)
    }
}

/// A loopback or a silent receive breaks a channel; one buffer for two
/// directions breaks only replies, and a rate figure has none.
#[test]
fn a_broken_channel_never_gives_a_point() {
    for (what, fault) in &BROKEN[..2] {
        let fault = *fault;
        let rx = Receiver::new(50, 2, false).unwrap();
        let (mut client, server) = served(64, Some(fault), receiving(&rx));
        let got = send_point(client.as_mut(), 64, 50_000.0, 50, &rx, &budget(), 50_000, 1);
        drop(client);
        let _ = server.join();
        assert!(got.is_err(), "{what}: {got:?}");
    }
}

/// Drops the timed messages whose number is a multiple of 7 (a full
/// datagram socket), or stalls once before message `stall_at`.
struct Flaky {
    end: Box<dyn Endpoint>,
    first_timed: u64,
    last_timed: u64,
    drop_sevens: bool,
    stall_at: Option<u64>,
}

impl Endpoint for Flaky {
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let seq = u64::from_le_bytes(msg[..8].try_into().unwrap());
        let timed = (self.first_timed..=self.last_timed).contains(&seq);
        if self.stall_at == Some(seq) {
            std::thread::sleep(std::time::Duration::from_millis(3));
        }
        if timed && self.drop_sevens && seq % 7 == 0 {
            return Ok(());
        }
        self.end.send(msg)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        self.end.recv(buf)
    }
}

fn flaky(
    rx: &Receiver,
    drop_sevens: bool,
    stall_at: Option<u64>,
) -> (Flaky, JoinHandle<Result<(), ChannelError>>) {
    let (client, server): (End, End) = pair();
    let mut server: Box<dyn Endpoint> = Box::new(server);
    let serve = receiving(rx);
    let thread = std::thread::spawn(move || serve(server.as_mut()));
    (
        Flaky {
            end: Box::new(client),
            first_timed: rx.timed_seq(0),
            last_timed: rx.timed_seq(rx.timed - 1),
            drop_sevens,
            stall_at,
        },
        thread,
    )
}

#[test]
fn a_lossy_channel_counts_what_it_dropped_and_any_other_fails() {
    let rx = Receiver::new(140, 2, true).unwrap();
    let (mut client, server) = flaky(&rx, true, None);
    let (p, lat) = point_through(&mut client, server, &rx, 50_000.0).unwrap();
    // Numbers 3..=142 are timed: 20 of them are multiples of 7.
    assert_eq!((p.sent, p.received, p.lost), (140, 120, 20));
    assert_eq!(lat.len(), 120);

    let rx = Receiver::new(140, 2, false).unwrap();
    let (mut client, server) = flaky(&rx, true, None);
    let got = point_through(&mut client, server, &rx, 50_000.0);
    assert!(
        got.is_err(),
        "a gap on a channel that must not lose: {got:?}"
    );
}

#[test]
fn a_stall_delays_every_message_due_during_it_and_the_sender_says_it_fell_behind() {
    let rx = Receiver::new(600, 2, false).unwrap();
    // Message 100 (timed, the 98th) waits 3 ms before it is sent: at 100k
    // msg/s, the ~300 messages due meanwhile go late.
    let (mut client, server) = flaky(&rx, false, Some(100));
    let (p, _) = point_through(&mut client, server, &rx, 100_000.0).unwrap();
    assert_eq!(p.received, 600);
    assert!(p.behind_max_ns >= 3_000_000, "{}", p.behind_max_ns);
    assert!(p.late >= 1);
    // The intended send of message 100 was 3 ms or more before it arrived.
    assert!(p.latency_ns.max >= 3_000_000.0, "{:?}", p.latency_ns);
}

fn pt(round: usize, offered: f64, achieved: f64, p99: f64) -> RatePoint {
    RatePoint {
        round,
        offered_rate: offered,
        achieved_rate: achieved,
        sent: 1000,
        received: 1000,
        lost: 0,
        late: 0,
        behind_max_ns: 0,
        latency_ns: Quantiles {
            p99,
            ..Quantiles::default()
        },
        service_ns: Quantiles::default(),
        sender_cpu_ns: 0.0,
        receiver_cpu_ns: 0.0,
        verified: 4,
        clock_overhead_ns: 20.0,
        logged: Logged::default(),
    }
}

#[test]
fn the_knee_is_where_p99_doubles_and_saturation_the_highest_rate_kept_up_with() {
    let ps = [
        pt(1, 1e3, 1e3, 10_000.0),
        pt(1, 1e4, 9.9e3, 15_000.0),
        pt(1, 1e5, 9.6e4, 20_000.0),
        pt(1, 1e6, 3e5, 900_000.0),
    ];
    // Low-rate p99: 12.5 µs (1k and 10k, up to a quarter of 96k): 20 µs at
    // 100k is under twice that, 900 µs at 1M is not; the crossing of 25 µs,
    // interpolated in log rate and log p99 between 100k and 1M, is 114k.
    assert_eq!(knee(&ps), Some(114_451.0));
    assert_eq!(saturation(&ps), Some(9.6e4));
    assert_eq!(knee(&ps[..2]), None);
    // The low-rate p99 is the median of the rates up to a quarter of the
    // saturation rate (1M: 1k, 10k, 100k here), not the lowest rate's alone.
    let low_lucky = [
        pt(1, 1e3, 1e3, 3_000.0),
        pt(1, 1e4, 1e4, 12_000.0),
        pt(1, 1e5, 1e5, 10_000.0),
        pt(1, 1e6, 1e6, 15_000.0),
        pt(1, 2e6, 1e6, 60_000.0),
    ];
    assert_eq!(super::curve::low_rate_p99(&low_lucky), Some(10_000.0));
    // 20 µs is crossed between 1M (15 µs) and 2M (60 µs).
    assert_eq!(knee(&low_lucky), Some(1_154_701.0));
    // A p99 that jumps at 10k and falls back is no knee; the one from 1M
    // on is, crossed between 100k and 1M.
    let spiky = [
        pt(1, 1e3, 1e3, 10_000.0),
        pt(1, 1e4, 1e4, 25_000.0),
        pt(1, 1e5, 1e5, 12_000.0),
        pt(1, 1e6, 1e6, 50_000.0),
        pt(1, 2e6, 1e6, 60_000.0),
    ];
    assert_eq!(knee(&spiky), Some(305_983.0));
    assert_eq!(saturation(&ps[3..]), None);
}

/// A channel that carries 50k msg/s at most, its p99 10 µs below 20k
/// msg/s and 100 µs from there.
fn fake(rate: f64, messages: u64, round: usize) -> Result<Measured, String> {
    let p99 = if rate < 20_000.0 { 10_000.0 } else { 100_000.0 };
    let mut p = pt(round, rate, rate.min(50_000.0), p99);
    p.sent = messages;
    Ok((p, vec![p99; 10]))
}

#[test]
fn a_sweep_stops_past_saturation_and_refines_around_the_knee_and_saturation() {
    let plan = RatePlan {
        rates: Rates::Sweep,
        rounds: 2,
        point_time: std::time::Duration::from_millis(100),
        min_messages: 1000,
    };
    let mut asked = Vec::new();
    let (m, f) = run_curve(&plan, 20_000, false, |r, n, round| {
        asked.push((round, r, n));
        fake(r, n, round)
    })
    .unwrap();
    let round1: Vec<f64> = asked.iter().filter(|a| a.0 == 1).map(|a| a.1).collect();
    // 1k … 64k (saturated: 50k achieved), then ×2^¼ steps inside the
    // knee's step (16k–32k) and the saturation's (32k–64k).
    assert_eq!(
        round1,
        [
            1e3, 2e3, 4e3, 8e3, 16e3, 32e3, 64e3, 19_027.0, 22_627.0, 26_909.0, 38_055.0, 45_255.0,
            53_817.0
        ]
    );
    assert_eq!(asked[0].2, 1000);
    assert_eq!(asked[6].2, 6400);
    let r1: Vec<f64> = f
        .points
        .iter()
        .filter(|p| p.round == 1)
        .map(|p| p.offered_rate)
        .collect();
    assert!(
        r1.windows(2).all(|w| w[0] < w[1]),
        "in increasing rate: {r1:?}"
    );
    assert_eq!(f.points.len(), 26);
    // 20 µs crossed between 19 027 (10 µs) and 22 627 msg/s (100 µs).
    let knee = f.knee_rate.unwrap();
    assert_eq!(knee.per_round, [Some(20_046.0), Some(20_046.0)]);
    assert_eq!(knee.median, 20_046.0);
    // 53 817 achieved 50k (93%): the highest kept up with is 45 255.
    assert_eq!(f.saturation_rate.unwrap().median, 45_255.0);
    assert!(!f.unsaturated);
    assert_eq!(f.waiting, "spin and sleep (by rate)");
    // The headline is the lowest rate's latencies, every round's.
    assert_eq!(m.samples_ns.len(), 20);
    assert_eq!(m.latency.count, 20);
    // It reports the clock read its latencies had subtracted.
    assert_eq!(m.clock_overhead_ns, 20.0);
}

#[test]
fn a_failed_point_fails_the_figure_naming_its_rate() {
    let plan = RatePlan {
        rates: Rates::List(vec![1e3, 250e3]),
        rounds: 1,
        point_time: std::time::Duration::from_millis(100),
        min_messages: 1000,
    };
    let err = run_curve(&plan, 20_000, false, |r, n, round| {
        if r > 1e3 {
            Err("the peer died".into())
        } else {
            fake(r, n, round)
        }
    })
    .unwrap_err();
    assert_eq!(err, "at 250k msg/s (round 1): the peer died");
}

#[test]
fn rates_read_as_the_page_writes_them() {
    assert_eq!(rate_text(800.0), "800");
    assert_eq!(rate_text(250e3), "250k");
    assert_eq!(rate_text(1.5e6), "1.5M");
    assert_eq!(rate_text(22_627.0), "22.63k");
}

/// A run measures a rate figure once per pass: each pass's round merges
/// into the figure as the next round, its knee and saturation its own.
#[test]
fn rounds_from_later_passes_merge_as_further_rounds() {
    let plan = RatePlan {
        rates: Rates::List(vec![1e3, 16e3, 32e3, 64e3]),
        rounds: 1,
        point_time: std::time::Duration::from_millis(100),
        min_messages: 1000,
    };
    let (_, mut first) = run_curve(&plan, 20_000, false, fake).unwrap();
    // The second pass's channel is slower: its p99 turns up from 1k on.
    let (_, second) = run_curve(&plan, 50_000, false, |r, n, round| {
        let (mut p, lat) = fake(r, n, round)?;
        p.latency_ns.p99 = if r < 10_000.0 { 10_000.0 } else { 100_000.0 };
        Ok((p, lat))
    })
    .unwrap();
    super::curve::merge_round(&mut first, second, 2);
    assert_eq!(first.rounds, 2);
    let rounds: Vec<usize> = first.points.iter().map(|p| p.round).collect();
    assert_eq!(rounds, [1, 1, 1, 1, 2, 2, 2, 2]);
    let knee = first.knee_rate.unwrap();
    assert_eq!(knee.per_round.len(), 2);
    assert!(
        knee.per_round[1].unwrap() < knee.per_round[0].unwrap(),
        "{knee:?}"
    );
    assert_eq!(
        first.saturation_rate.unwrap().per_round,
        [Some(32e3), Some(32e3)]
    );
    assert_eq!(first.wake_margin_ns, 50_000, "the larger margin");
}
