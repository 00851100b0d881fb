//! Remote figures: TCP and UDP between this host and an agent, in the
//! three modes of local figures — ping-pong (the engine's own model, with
//! the agent as echo server), stream (either direction) and one-way (the
//! agent's receipts, corrected by the estimated offset of its clock). Each
//! is an [`External`] item of the engine's session, so remote runs are
//! repeated, merged, saved and compared like local ones.

use crate::engine::channel::ChannelError;
use crate::engine::measure::{Budget, Measurement};
use crate::engine::models::oneway::{self, OneWayPlan};
use crate::engine::models::pingpong;
use crate::engine::models::stream::{
    Refused, Rules, SideTally, StreamCounts, StreamFacts, Window, assemble,
};
use crate::engine::os::placement::PlacementGuard;
use crate::engine::run::figure::{Facts, FigureResult, Mode, Outcome};
use crate::engine::run::remote::{ClockFacts, LinkFacts, RemoteFacts, WireLimit};
use crate::engine::run::runner::RunSettings;
use crate::engine::run::session::External;
use crate::remote::clock::{self, Estimate};
use crate::remote::data::{self, DataEnd, DataKey};
use crate::remote::roles;
use crate::remote::task::{Proto, Report, Role, Task};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The control session with the agent, as the figures use it (the client
/// of `remote::client` in a run; a test's own agent in unit tests).
pub trait Control: Send {
    /// The agent's control address; its data ports are on the same host.
    fn agent(&self) -> SocketAddr;
    /// Asks the agent to serve `task`; the data port it listens on and the
    /// key the data connection must carry.
    fn start(&mut self, task: &Task) -> Result<(u16, DataKey), String>;
    /// Tells the agent the figure is over; what its side counted.
    fn finish(&mut self, wait: Duration) -> Result<Report, String>;
    /// One clock exchange: t1 and t4 on this host, t2 and t3 on the agent's.
    fn clock(&mut self) -> Result<[u64; 4], String>;
    /// Whether the agent is still there (never waits): its error once the
    /// control connection has closed, so later figures fail at once.
    fn alive(&self) -> Result<(), String>;
    /// A descriptor that turns readable when the agent goes away during a
    /// figure (its control connection), for the data plane's waits.
    fn watch(&self) -> Option<std::os::fd::RawFd> {
        None
    }
}

/// One control session shared by every remote item of a run.
pub type SharedControl = Arc<Mutex<Box<dyn Control>>>;

/// Which way a stream flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From this host to the agent.
    Send,
    /// From the agent to this host.
    Receive,
}

impl Direction {
    /// The word the reports use.
    pub fn word(self) -> &'static str {
        match self {
            Direction::Send => "send",
            Direction::Receive => "receive",
        }
    }
}

/// The timing model of a remote item.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Round trips, the agent echoing.
    PingPong,
    /// A stream one way.
    Stream(Direction),
    /// Stamped messages to the agent, one in flight.
    OneWay(OneWayPlan),
}

/// The link's theoretical best for a figure of `proto`, `size` bytes and
/// this model over `link` (see [`crate::remote::wire`]).
pub type LimitFn = fn(Proto, usize, &Kind, &LinkFacts) -> WireLimit;

/// One remote item: a transport in one model, against the run's agent.
pub struct RemoteFigures {
    /// The transport.
    pub proto: Proto,
    /// The model.
    pub kind: Kind,
    /// The session with the agent.
    pub control: SharedControl,
    /// The link to the agent, when its speed is known.
    pub link: Option<LinkFacts>,
    /// The wire model that gives each figure's best.
    pub limit: LimitFn,
    /// The CPU the agent's side runs on (`--remote-cpu`).
    pub agent_cpu: Option<usize>,
    /// The CPU this side measured the last figure from, once placed
    /// ([`NO_CPU`]: none yet).
    pub client_cpu: AtomicUsize,
}

/// [`RemoteFigures::client_cpu`] before a figure has placed its client.
pub const NO_CPU: usize = usize::MAX;

/// Largest UDP payload over IPv4: 65535 − 20 (IP) − 8 (UDP).
const UDP_MAX: usize = 65_507;

/// Clock exchanges before and after a one-way figure.
const CLOCK_EXCHANGES: usize = 16;

/// How long a figure's agent side may run: the whole budget of a figure,
/// twice, and ten seconds more for a slow link's set-up and drain.
fn figure_limit(b: &Budget) -> Duration {
    let sampled = b.sample_time * b.samples as u32 + b.precision.max_time;
    (b.warmup + sampled + b.histogram_time + b.timeout) * 2 + Duration::from_secs(10)
}

/// How long a stream runs, and the window its samples are timed in: the
/// budget's warm-up and samples (at least a second, at most 20 s), one
/// window per sample and one for the start (TCP's slow start, the queues
/// filling), which is left out.
fn stream_plan(b: &Budget) -> (Duration, Duration) {
    let samples = b.samples.clamp(5, 50) as u32;
    let total =
        (b.warmup + b.sample_time * samples).clamp(Duration::from_secs(1), Duration::from_secs(20));
    (total, total / (samples + 1))
}

impl RemoteFigures {
    fn skip_reason(&self, size: usize) -> Option<String> {
        if self.proto == Proto::Udp && size > UDP_MAX {
            return Some(format!(
                "{size} B exceeds the largest UDP message, {UDP_MAX} B (65535 − 20 (IP) − 8 (UDP))"
            ));
        }
        match self.kind {
            Kind::Stream(_) if size < roles::STREAM_MIN_SIZE => Some(format!(
                "{size} B cannot carry the stream's {}-byte sequence number",
                roles::STREAM_MIN_SIZE
            )),
            Kind::OneWay(_) if size < roles::ACK => Some(format!(
                "{size} B cannot carry the one-way message's {}-byte sequence number",
                roles::ACK
            )),
            _ => None,
        }
    }

    /// Runs `task` on the agent and `body` on this side's end of its data
    /// connection (placed as the run says); then ends the figure on both
    /// sides, on every path, and returns what `body` gave and the agent's
    /// report. The agent's error, or its count disagreeing, fails the
    /// figure.
    fn with_task<T>(
        &self,
        ctl: &mut dyn Control,
        task: &Task,
        s: &RunSettings,
        body: impl FnOnce(&mut DataEnd) -> Result<T, ChannelError>,
    ) -> Result<(T, Report), String> {
        let limit = Duration::from_millis(task.limit_ms);
        let (port, key) = ctl.start(task)?;
        let at = SocketAddr::new(ctl.agent().ip(), port);
        let watch = ctl.watch();
        let measured = (|| {
            let mut end = data::connect(task, at, &key, Instant::now() + limit, watch)?;
            let _placed = PlacementGuard::apply(&s.client)
                .map_err(|e| format!("set-up: placing the client: {e}"))?;
            // Where this side measures from, once placed.
            let cpu = crate::sys::sched::current_cpu().unwrap_or(NO_CPU);
            self.client_cpu.store(cpu, Ordering::Relaxed);
            body(&mut end).map_err(|e| e.to_string())
            // `end` closes here: end of file for a TCP peer.
        })();
        let report = ctl.finish(data::QUIET * 2);
        match (measured, report) {
            (Ok(t), Ok(r)) => match &r.error {
                Some(e) => Err(format!("the agent's side failed: {e}")),
                None => Ok((t, r)),
            },
            (Err(e), Ok(r)) => Err(match r.error {
                Some(agent) => format!("{e} (agent: {agent})"),
                None => e,
            }),
            (Ok(_), Err(e)) => Err(e),
            (Err(e), Err(lost)) => Err(format!("{e}; {lost}")),
        }
    }

    fn task(&self, size: usize, role: Role, s: &RunSettings) -> Task {
        Task {
            proto: self.proto,
            size,
            role,
            cpu: self.agent_cpu,
            limit_ms: figure_limit(&s.budget).as_millis() as u64,
        }
    }

    fn pingpong(
        &self,
        ctl: &mut dyn Control,
        size: usize,
        s: &RunSettings,
    ) -> Result<Measurement, String> {
        let task = self.task(size, Role::Echo, s);
        let ((m, sent), report) = self.with_task(ctl, &task, s, |end| {
            let m = pingpong::measure(end, size, false, &s.budget, None, None)?;
            Ok((m, end.sent))
        })?;
        if report.messages != sent {
            return Err(format!(
                "the agent echoed {} messages of the {sent} sent",
                report.messages
            ));
        }
        Ok(m)
    }

    fn stream(
        &self,
        ctl: &mut dyn Control,
        size: usize,
        direction: Direction,
        s: &RunSettings,
    ) -> Result<(Measurement, StreamFacts), String> {
        let (duration, window) = stream_plan(&s.budget);
        let window_ms = window.as_millis().max(1) as u64;
        let verify = s.budget.verify_rounds;
        let drain = self.drain();
        let (sender, receiver) = match direction {
            Direction::Send => {
                let task = self.task(size, Role::Sink { window_ms, verify }, s);
                let (mine, theirs) = self.with_task(ctl, &task, s, |end| {
                    let mut mine = Report::default();
                    roles::source(end, size, duration, &mut mine)?;
                    if end.lossy() {
                        // What the link still queues arrives before the agent stops counting.
                        std::thread::sleep(drain);
                    }
                    Ok(mine)
                })?;
                (mine, theirs)
            }
            Direction::Receive => {
                let role = Role::Source {
                    duration_ms: duration.as_millis() as u64,
                };
                let task = self.task(size, role, s);
                let (mine, theirs) = self.with_task(ctl, &task, s, |end| {
                    let mut mine = Report::default();
                    if end.lossy() {
                        end.end_at(Instant::now() + duration + drain + data::TICK);
                    }
                    roles::sink(
                        end,
                        size,
                        Duration::from_millis(window_ms),
                        verify,
                        &mut mine,
                    )?;
                    Ok(mine)
                })?;
                (theirs, mine)
            }
        };
        stream_figure(size, &sender, &receiver, self.proto == Proto::Udp)
    }

    /// How long a UDP stream's tail may still be in the link's queues when
    /// the sender stops: two socket buffers' worth at the link's speed
    /// (a tenth of a second on an unknown link), at most 1.5 s.
    fn drain(&self) -> Duration {
        const SOCKET_BUFFER_BITS: f64 = 212_992.0 * 8.0;
        let secs = self.link.as_ref().map_or(0.1, |l| {
            0.1 + 2.0 * SOCKET_BUFFER_BITS / l.bits_per_s.max(1) as f64
        });
        Duration::from_secs_f64(secs.min(1.5))
    }

    fn oneway(
        &self,
        ctl: &mut dyn Control,
        size: usize,
        plan: &OneWayPlan,
        s: &RunSettings,
    ) -> Result<(Measurement, oneway::OneWayFacts, ClockFacts), String> {
        let before = exchanges(ctl)?;
        let role = Role::Receiver {
            messages: plan.messages,
        };
        let task = self.task(size, role, s);
        let ((sends, time_bounded, slack, policy), report) =
            self.with_task(ctl, &task, s, |end| {
                // What the local one-way figure records of its sender, read
                // where the sending runs (placed as the run says).
                let slack = crate::sys::sched::timer_slack()
                    .map_err(ChannelError::io("PR_GET_TIMERSLACK"))?;
                let mut buf = vec![0u8; size];
                let mut sends = Vec::with_capacity(plan.messages as usize);
                let start = Instant::now();
                let mut time_bounded = false;
                for seq in 1..=plan.messages {
                    if let Some(every) = plan.interval {
                        let at = start + every * seq as u32;
                        std::thread::sleep(at.saturating_duration_since(Instant::now()));
                    } else if start.elapsed() > plan.max_time {
                        time_bounded = true;
                        break;
                    }
                    sends.push(roles::send_one(end, &mut buf, seq)?);
                }
                Ok((sends, time_bounded, slack, crate::sys::sched::policy_name()))
            })?;
        let after = exchanges(ctl)?;
        if report.stamps.len() != sends.len() {
            return Err(format!(
                "the agent timed {} messages of the {} sent",
                report.stamps.len(),
                sends.len()
            ));
        }
        let latencies: Vec<f64> = sends
            .iter()
            .zip(&report.stamps)
            .map(|(&sent, &got)| got as f64 - clock::offset_at(&before, &after, sent) - sent as f64)
            .collect();
        let clock_ns = crate::engine::message::clock_overhead_ns();
        let (m, mut facts) = oneway::summarise(
            &latencies,
            sends.len() as u64,
            plan,
            clock_ns,
            report.verified,
            0,
        )
        .map_err(|e| e.to_string())?;
        facts.time_bounded = time_bounded;
        facts.sender_timer_slack_ns = slack;
        facts.sender_sched_policy = policy;
        let uncertainty = before.uncertainty_ns.max(after.uncertainty_ns);
        let clock = ClockFacts {
            offset_ns: (before.offset_ns + after.offset_ns) / 2.0,
            uncertainty_ns: uncertainty,
            drift_ns: after.offset_ns - before.offset_ns,
            exchanges: 2 * CLOCK_EXCHANGES,
            trusted: m.summary.median > 0.0 && uncertainty <= 0.1 * m.summary.median,
        };
        Ok((m, facts, clock))
    }
}

/// The best of [`CLOCK_EXCHANGES`] clock exchanges with the agent.
fn exchanges(ctl: &mut dyn Control) -> Result<Estimate, String> {
    let mut all = Vec::with_capacity(CLOCK_EXCHANGES);
    for _ in 0..CLOCK_EXCHANGES {
        all.push(ctl.clock()?);
    }
    clock::best(&all).ok_or_else(|| {
        "the agent's clock answers were impossible (a reply stamped before its request)".into()
    })
}

/// How remote stream figures differ from local ones: a window is timed
/// from its first receipt to the next window's first, so one message is
/// enough to time it; and the receiver compares only the first messages
/// and one in [`roles::SPOT_CHECK`] whole, so a figure that compared none
/// proves nothing, lossless or not.
const REMOTE_RULES: Rules = Rules {
    fewest: 1,
    verify_lossless: true,
};

/// A stream figure from the two sides' reports: each whole window after
/// the first gives one sample, its span ÷ the messages that arrived in it.
fn stream_figure(
    size: usize,
    sender: &Report,
    receiver: &Report,
    lossy: bool,
) -> Result<(Measurement, StreamFacts), String> {
    // The first window is the start (TCP's slow start, the queues filling).
    // The agent keeps no empty window (a stall lengthens the one before
    // it); one in another's report is left out, not counted as untimed.
    let samples: Vec<Window> = receiver
        .windows
        .iter()
        .skip(1)
        .filter(|[n, _]| *n >= 1)
        .map(|&[messages, ns]| Window { ns, messages })
        .collect();
    // No loop is timed apart from the data plane's.
    let side = |r: &Report| SideTally {
        messages: r.messages,
        cpu_ns: r.cpu_ns,
        span_ns: r.span_ns,
        loop_ns: 0.0,
    };
    let counts = StreamCounts {
        size,
        lossy,
        samples: &samples,
        sender: side(sender),
        receiver: side(receiver),
        verified: receiver.verified,
        // The receiver may be the agent, whose clock read costs what it
        // costs there: nothing is subtracted, in either direction alike.
        clock_overhead_ns: 0.0,
        // The windows are fixed by the stream's duration, not sampled to a precision.
        precision: None,
        window: None,
        pairs: None,
        rules: REMOTE_RULES,
    };
    assemble(&counts).map_err(|refused| match refused {
        Refused::Counts { sent, received } => {
            format!("the receiver counted {received} messages of the {sent} sent")
        }
        Refused::NoSample { sent, received, .. } => format!(
            "no whole window after the first to time ({received} of {sent} messages arrived)"
        ),
        Refused::Unverified => "no message arrived whole to be compared byte for byte".into(),
        other => other.to_string(),
    })
}

impl External for RemoteFigures {
    fn id(&self) -> &'static str {
        self.proto.id()
    }

    fn mode(&self) -> Mode {
        match self.kind {
            Kind::PingPong => Mode::PingPong,
            Kind::Stream(_) => Mode::Stream,
            Kind::OneWay(_) => Mode::OneWay,
        }
    }

    fn sizes(&self, requested: &[usize]) -> Vec<usize> {
        requested.to_vec()
    }

    fn measure(&self, size: usize, s: &RunSettings) -> FigureResult {
        let facts = match self.kind {
            Kind::PingPong => Facts::PingPong,
            Kind::Stream(_) => Facts::Stream(None),
            Kind::OneWay(_) => Facts::OneWay(None),
        };
        let mut r = FigureResult::new(self.proto.id(), facts, size);
        let mut ctl = self.control.lock().unwrap_or_else(|p| p.into_inner());
        r.remote = Some(RemoteFacts {
            agent: ctl.agent().to_string(),
            direction: match self.kind {
                Kind::Stream(d) => Some(d.word()),
                _ => None,
            },
            link: self.link.clone(),
            limit: self
                .link
                .as_ref()
                .map(|l| (self.limit)(self.proto, size, &self.kind, l)),
            clock: None,
        });
        if let Some(why) = self.skip_reason(size) {
            r.outcome = Outcome::Skipped(why);
            return r;
        }
        if let Err(gone) = ctl.alive() {
            r.outcome = Outcome::Failed(gone);
            return r;
        }
        self.client_cpu.store(NO_CPU, Ordering::Relaxed);
        r.outcome = match self.kind {
            Kind::PingPong => self
                .pingpong(&mut **ctl, size, s)
                .map(|m| Outcome::Ok(Box::new(m))),
            Kind::Stream(d) => self.stream(&mut **ctl, size, d, s).map(|(m, f)| {
                r.facts = Facts::Stream(Some(f));
                Outcome::Ok(Box::new(m))
            }),
            Kind::OneWay(plan) => self.oneway(&mut **ctl, size, &plan, s).map(|(m, f, c)| {
                r.facts = Facts::OneWay(Some(f));
                if let Some(remote) = &mut r.remote {
                    remote.clock = Some(c);
                }
                Outcome::Ok(Box::new(m))
            }),
        }
        .unwrap_or_else(Outcome::Failed);
        let cpu = self.client_cpu.load(Ordering::Relaxed);
        if cpu != NO_CPU {
            r.cpus.push(cpu);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::measure::Budget;
    use crate::engine::os::peer::PeerKind;
    use crate::engine::os::placement::SidePlacement;
    use crate::remote::task::PortRange;
    use std::io::Write;
    use std::net::{IpAddr, Ipv4Addr};
    use std::os::fd::OwnedFd;
    use std::thread::JoinHandle;

    /// An agent in a thread of the test: the real data plane, its control
    /// by direct calls.
    struct ThreadAgent {
        running: Option<(std::io::PipeWriter, JoinHandle<Report>)>,
    }

    impl Control for ThreadAgent {
        fn agent(&self) -> SocketAddr {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 1)
        }
        fn start(&mut self, task: &Task) -> Result<(u16, DataKey), String> {
            let here = IpAddr::V4(Ipv4Addr::LOCALHOST);
            let l = data::listen(task, here, PortRange::ANY)?;
            let port = l.port();
            let (r, w) = std::io::pipe().map_err(|e| e.to_string())?;
            let task = task.clone();
            let deadline = Instant::now() + Duration::from_millis(task.limit_ms);
            let key = DataKey::fresh()?;
            let theirs = key.clone();
            let h = std::thread::spawn(move || {
                data::serve(l, &task, here, &theirs, OwnedFd::from(r), deadline)
            });
            self.running = Some((w, h));
            Ok((port, key))
        }
        fn finish(&mut self, _wait: Duration) -> Result<Report, String> {
            let (mut w, h) = self.running.take().ok_or("no figure")?;
            let _ = w.write_all(&[1]);
            h.join()
                .map_err(|_| "the agent thread panicked".to_string())
        }
        fn clock(&mut self) -> Result<[u64; 4], String> {
            let t1 = crate::sys::clock::monotonic_ns();
            let t2 = crate::sys::clock::monotonic_ns();
            Ok([t1, t2, t2, crate::sys::clock::monotonic_ns()])
        }
        fn alive(&self) -> Result<(), String> {
            Ok(())
        }
    }

    fn settings() -> RunSettings {
        RunSettings {
            client: SidePlacement::default(),
            server: SidePlacement::default(),
            peer: PeerKind::Process,
            budget: Budget::tiny(),
            cpus_available: 2,
            fault: None,
            home: None,
        }
    }

    fn figures(proto: Proto, kind: Kind) -> RemoteFigures {
        let ctl: Box<dyn Control> = Box::new(ThreadAgent { running: None });
        RemoteFigures {
            proto,
            kind,
            control: Arc::new(Mutex::new(ctl)),
            link: None,
            limit: |_, _, _, _| unreachable!("no link"),
            agent_cpu: None,
            client_cpu: AtomicUsize::new(NO_CPU),
        }
    }

    fn measured(r: &FigureResult) -> &Measurement {
        match &r.outcome {
            Outcome::Ok(m) => m,
            other => panic!("{} {} B: {other:?}", r.id, r.size),
        }
    }

    #[test]
    fn pingpong_through_the_data_plane_counts_every_echo() {
        for proto in [Proto::Tcp, Proto::Udp] {
            let f = figures(proto, Kind::PingPong);
            for size in [1, 1000, 20_000] {
                let r = f.measure(size, &settings());
                let m = measured(&r);
                assert!(m.verified_round_trips > 0 && m.summary.median.is_finite());
                assert_eq!(r.remote.as_ref().unwrap().direction, None);
            }
        }
    }

    #[test]
    fn streams_in_both_directions_deliver_every_tcp_message() {
        for direction in [Direction::Send, Direction::Receive] {
            let f = figures(Proto::Tcp, Kind::Stream(direction));
            let r = f.measure(4096, &settings());
            measured(&r);
            let Facts::Stream(Some(facts)) = &r.facts else {
                panic!("{:?}", r.facts)
            };
            assert_eq!(facts.sent, facts.received);
            assert!(facts.sent > 0 && facts.verified_messages > 0);
            assert_eq!(facts.loss_ratio, 0.0);
            assert_eq!(r.remote.as_ref().unwrap().direction, Some(direction.word()));
        }
    }

    #[test]
    fn a_udp_stream_counts_what_it_lost_and_never_more_than_sent() {
        let f = figures(Proto::Udp, Kind::Stream(Direction::Send));
        let r = f.measure(1024, &settings());
        measured(&r);
        let Facts::Stream(Some(facts)) = &r.facts else {
            panic!("{:?}", r.facts)
        };
        assert!(facts.received <= facts.sent && facts.received > 0);
    }

    #[test]
    fn oneway_figures_are_timed_by_the_agent_with_the_clock_offset() {
        let plan = OneWayPlan {
            interval: None,
            messages: 200,
            window: 50,
            max_time: Duration::from_secs(5),
        };
        for proto in [Proto::Tcp, Proto::Udp] {
            let r = figures(proto, Kind::OneWay(plan)).measure(64, &settings());
            measured(&r);
            let Facts::OneWay(Some(facts)) = &r.facts else {
                panic!("{:?}", r.facts)
            };
            assert_eq!(facts.messages_sent, 200);
            assert_eq!(facts.messages_received, 200);
            let clock = r.remote.as_ref().unwrap().clock.unwrap();
            assert_eq!(clock.exchanges, 2 * CLOCK_EXCHANGES);
            // One clock: the offset is within its stated uncertainty of 0.
            assert!(
                clock.offset_ns.abs() <= clock.uncertainty_ns + 1.0,
                "{clock:?}"
            );
        }
    }

    #[test]
    fn too_small_or_too_large_messages_are_skipped_with_the_reason() {
        let r = figures(Proto::Udp, Kind::PingPong).measure(70_000, &settings());
        assert!(matches!(&r.outcome, Outcome::Skipped(w) if w.contains("65507")));
        let r = figures(Proto::Tcp, Kind::Stream(Direction::Send)).measure(4, &settings());
        assert!(matches!(&r.outcome, Outcome::Skipped(w) if w.contains("sequence number")));
    }
}
