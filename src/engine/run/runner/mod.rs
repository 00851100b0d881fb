//! One figure from start to end: decide whether it can run, build the channel
//! (or prepare the operation), start the peer, place both sides, measure, and
//! release everything. The figures over a channel (ping-pong, one-way,
//! stream) are here, a rate curve's in [`rate`]; those timed in one process
//! (an operation, the periodic and score models) in [`in_process`].

use crate::engine::channel::{
    Channel, ChannelError, Endpoint, Mechanism, OpenContext, Payload, PeerIdentity, Relay,
    StreamSupport, Topology,
};
use crate::engine::measure::{Budget, Measurement};
use crate::engine::models::oneway::{self, OneWayPlan};
use crate::engine::models::pingpong;
use crate::engine::models::stream::{self, SinkPlan};
use crate::engine::os::objects::ObjectNamer;
use crate::engine::os::peer::{Fault, Peer, PeerKind, PeerRole, PeerSpec, faulty_end};
use crate::engine::os::placement::{HomeGuard, PlacementGuard, SidePlacement};
use crate::engine::run::figure::{Facts, FigureResult, Outcome};
use crate::sys::process;

/// Settings shared by every figure of a run.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// Where the measuring side runs.
    pub client: SidePlacement,
    /// Where the echo server runs.
    pub server: SidePlacement,
    /// Process or thread peer.
    pub peer: PeerKind,
    /// Phase durations.
    pub budget: Budget,
    /// CPUs the run may use.
    pub cpus_available: usize,
    /// Test-only fault injected in the server.
    pub fault: Option<Fault>,
    /// The NUMA node a channel's pages are preferred on while it is open
    /// (`ipcmark map --home`); `None`: wherever the kernel's first touch
    /// puts them.
    pub home: Option<usize>,
}

pub mod in_process;
pub mod rate;

pub use in_process::{
    run_op_figure, run_op_stamped_pass, run_periodic_figure, run_score_figure, run_stamped_wakeups,
};
pub use rate::run_rate_figure;

/// The sizes a mechanism runs at: the requested sizes, or its fixed size.
pub fn sizes_for(mech: &dyn Mechanism, requested: &[usize]) -> Vec<usize> {
    match mech.info().payload {
        Payload::Bytes => requested.to_vec(),
        Payload::Fixed(n) => vec![n],
    }
}

/// Why this figure cannot run in this configuration, if it cannot.
pub fn skip_reason(mech: &dyn Mechanism, size: usize, s: &RunSettings) -> Option<String> {
    if let Some(why) = mech.unavailable() {
        return Some(why);
    }
    let info = mech.info();
    if info.payload == Payload::Bytes
        && let Some(limit) = mech.size_limit()
        && size > limit.max_bytes
    {
        return Some(format!(
            "{size} B exceeds the largest message, {} B ({})",
            limit.max_bytes, limit.reason
        ));
    }
    if info.spins {
        let shared_cpu = s.client.cpu.is_some() && s.client.cpu == s.server.cpu;
        if s.cpus_available < 2 || shared_cpu {
            return Some(
                "busy-wait hand-off needs two CPUs: on one CPU spinning only burns time slices"
                    .into(),
            );
        }
        if s.client.rt_priority.is_some() && s.cpus_available <= 2 {
            return Some(format!(
                "busy-waiting under SCHED_FIFO on a {}-CPU machine would starve every other task",
                s.cpus_available
            ));
        }
    }
    None
}

/// Runs one figure. Never panics on a channel failure: it is reported in the result.
pub fn run_figure(
    mech: &dyn Mechanism,
    size: usize,
    cold: bool,
    s: &RunSettings,
    names: &ObjectNamer,
) -> FigureResult {
    let info = mech.info();
    let mut result = FigureResult::new(info.id, Facts::PingPong, size);
    result.cold_region = cold.then(crate::engine::models::region::cold_region_bytes);
    if let Some(reason) = skip_reason(mech, size, s) {
        result.outcome = Outcome::Skipped(reason);
        return result;
    }
    result.outcome = match measure_figure(mech, size, s, names, &mut result) {
        Ok(m) => Outcome::Ok(Box::new(m)),
        Err(e) => Outcome::Failed(e),
    };
    result
}

fn measure_figure(
    mech: &dyn Mechanism,
    size: usize,
    s: &RunSettings,
    names: &ObjectNamer,
    result: &mut FigureResult,
) -> Result<Measurement, String> {
    let self_loop = mech.info().topology == Topology::SelfLoop;
    let cold_region = result.cold_region;
    with_channel(
        || mech.open(&open_context(size, names, s)),
        mech.info().topology,
        pingpong::echo_role(),
        size,
        s,
        result,
        |client, peer| {
            let echoed = peer.map(|p| pingpong::echo_count(p.board()));
            pingpong::measure(client, size, self_loop, &s.budget, cold_region, echoed)
        },
    )
}

/// What runs around a stamped pass: given the thread ids of the tasks that
/// carry its messages as it begins (the client's, the server's, then a
/// relay's: [`StampedPass::relay_tids`]), `None` as it ends.
pub type PassHook<'a> = dyn FnMut(Option<&[i32]>) -> Result<(), String> + 'a;

/// What a stamped pass gave ([`run_stamped_pass`]).
#[derive(Debug, Clone)]
pub struct StampedPass {
    /// CLOCK_MONOTONIC at the start of each round trip, and after the last.
    pub stamps: Vec<u64>,
    /// The measuring thread's id.
    pub client_tid: i32,
    /// The echo's thread id (`None`: a self-loop).
    pub server_tid: Option<i32>,
    /// The task that relays every message, as the client's end named it
    /// ([`Endpoint::relay`]); `None` where the two sides talk directly.
    pub relay: Option<Relay>,
    /// That task's threads as the pass began (empty where its pid is unknown).
    pub relay_tids: Vec<i32>,
    /// The CPUs the two sides were seen on.
    pub cpus: Vec<usize>,
}

/// A ping-pong figure's channel, peer and placement as [`run_figure`] makes
/// them, warmed up and calibrated as it is, then one pass of `round_trips`
/// stamped round trips between `around(true)` and `around(false)` (a
/// traced pass: the caller's tracing is on only during it) instead of the
/// figure's samples. `around` is given the thread ids of the two sides and
/// of a task relaying their messages as the pass begins, `None` as it ends.
pub fn run_stamped_pass(
    mech: &dyn Mechanism,
    size: usize,
    s: &RunSettings,
    names: &ObjectNamer,
    round_trips: usize,
    around: &mut PassHook,
) -> Result<StampedPass, String> {
    run_stamped_segments(mech, size, s, names, round_trips, around, &mut |_| {
        Ok(false)
    })
}

/// What a segment of [`run_stamped_segments`] gave, for the caller to take
/// what it keeps; `Ok(true)` asks for another segment.
pub type AfterSegment<'a> = dyn FnMut(&StampedPass) -> Result<bool, String> + 'a;

/// [`run_stamped_pass`] in segments on one channel and peer (a soak): each
/// segment `round_trips` stamped round trips between `around(Some(…))` and
/// `around(None)`, then its content checked and `after` given it; another
/// follows while `after` says so and no stop was asked for. Between
/// segments no round trip runs (the loop is closed: the client sends
/// nothing while `after` works). Returns the last segment.
pub fn run_stamped_segments(
    mech: &dyn Mechanism,
    size: usize,
    s: &RunSettings,
    names: &ObjectNamer,
    round_trips: usize,
    around: &mut PassHook,
    after: &mut AfterSegment,
) -> Result<StampedPass, String> {
    let info = mech.info();
    if let Some(reason) = skip_reason(mech, size, s) {
        return Err(reason);
    }
    let self_loop = info.topology == Topology::SelfLoop;
    let mut result = FigureResult::new(info.id, Facts::PingPong, size);
    let mut tasks = (0, None);
    let mut relay = None;
    let mut relay_tids = Vec::new();
    let stamps = with_channel(
        || mech.open(&open_context(size, names, s)),
        info.topology,
        pingpong::echo_role(),
        size,
        s,
        &mut result,
        |client, peer| {
            tasks = (process::gettid(), peer.map(|p| p.identity().tid));
            let echoed = peer.map(|p| pingpong::echo_count(p.board()));
            let mut prepared = pingpong::Prepared::new(client, size, self_loop, &s.budget, None)?;
            relay = client.relay();
            relay_tids = relay
                .as_ref()
                .and_then(|r| r.pid)
                .map(process::threads)
                .unwrap_or_default();
            let tids: Vec<i32> = [Some(tasks.0), tasks.1]
                .into_iter()
                .flatten()
                .chain(relay_tids.iter().copied())
                .collect();
            loop {
                let stamps = prepared.stamped_pass(client, round_trips, echoed, &mut |on| {
                    around(on.then_some(tids.as_slice()))
                })?;
                let segment = StampedPass {
                    stamps,
                    client_tid: tasks.0,
                    server_tid: tasks.1,
                    relay: relay.clone(),
                    relay_tids: relay_tids.clone(),
                    // Known once the channel is closed: the last's only.
                    cpus: Vec::new(),
                };
                let more = after(&segment).map_err(ChannelError::Setup)?;
                if !more || crate::engine::os::interrupt::stop_requested().is_some() {
                    return Ok(segment.stamps);
                }
            }
        },
    )?;
    Ok(StampedPass {
        stamps,
        client_tid: tasks.0,
        server_tid: tasks.1,
        relay,
        relay_tids,
        cpus: result.cpus,
    })
}

/// Why a mechanism cannot run in mode `oneway` at `size`, if it cannot: the
/// message must carry the stamp, and a second process must receive it.
pub fn oneway_skip_reason(mech: &dyn Mechanism, size: usize) -> Option<String> {
    let info = mech.info();
    if info.topology == Topology::SelfLoop {
        return Some("one process sends to itself: there is no receiver to time one way".into());
    }
    match info.payload {
        Payload::Fixed(n) if n < oneway::HEADER => Some(format!(
            "its message carries {n} B; the one-way stamp needs {} B",
            oneway::HEADER
        )),
        Payload::Bytes if size < oneway::HEADER => Some(format!(
            "{size} B cannot carry the {}-byte one-way stamp",
            oneway::HEADER
        )),
        _ => None,
    }
}

/// Runs one figure of mode `oneway` (`models/oneway/`): the client sends, the
/// peer receives and times. Never panics on a channel failure.
pub fn run_oneway_figure(
    mech: &dyn Mechanism,
    size: usize,
    plan: &OneWayPlan,
    s: &RunSettings,
    names: &ObjectNamer,
) -> FigureResult {
    let info = mech.info();
    let mut result = FigureResult::new(info.id, Facts::OneWay(None), size);
    if let Some(reason) = oneway_skip_reason(mech, size).or_else(|| skip_reason(mech, size, s)) {
        result.outcome = Outcome::Skipped(reason);
        return result;
    }
    // The receiver's store exists (pages touched) before the peer forks,
    // and the stamps count from a base taken now.
    let receiver = match oneway::Store::new(oneway::capacity(plan, &s.budget)) {
        Ok(store) => oneway::Receiver {
            store,
            base_ns: crate::sys::clock::monotonic_ns(),
        },
        Err(e) => {
            result.outcome = Outcome::Failed(format!("set-up: mmap latency store: {e}"));
            return result;
        }
    };
    let measured = with_channel(
        || mech.open(&open_context(size, names, s)),
        info.topology,
        oneway::receiver_role(receiver.clone()),
        size,
        s,
        &mut result,
        |client, _| oneway::measure(client, size, plan, &s.budget, &receiver),
    );
    result.outcome = match measured {
        Ok((m, facts)) => {
            result.facts = Facts::OneWay(Some(facts));
            Outcome::Ok(Box::new(m))
        }
        Err(e) => Outcome::Failed(e),
    };
    result
}

/// What a mechanism's `open` is given for a figure of `size` in a run
/// with settings `s`.
pub(super) fn open_context<'a>(
    size: usize,
    names: &'a ObjectNamer,
    s: &RunSettings,
) -> OpenContext<'a> {
    OpenContext {
        size,
        names,
        timeout: s.budget.timeout,
    }
}

/// A channel's client end, its peer (none for a self-loop) and the fact the
/// mechanism noted about it.
pub(super) type Opened = (Box<dyn Endpoint>, Option<Peer>, Option<String>);

/// Opens a channel with `open` and starts its server end as a peer in
/// `role`, placed and budgeted as the run says. Errors read `set-up: …`.
pub(super) fn open_with_peer(
    open: impl FnOnce() -> Result<Channel, ChannelError>,
    topology: Topology,
    role: PeerRole,
    size: usize,
    s: &RunSettings,
    cold_region: Option<usize>,
) -> Result<Opened, String> {
    let channel = open().map_err(|e| format!("set-up: {e}"))?;
    let peer = match (topology, channel.server) {
        (Topology::Peer, Some(server)) => {
            let spec = PeerSpec {
                kind: s.peer,
                placement: s.server,
                size,
                client: PeerIdentity {
                    pid: process::getpid(),
                    tid: process::gettid(),
                },
                timeout: s.budget.timeout,
                fault: s.fault,
                cold_region,
                role,
            };
            Some(Peer::spawn(server, &spec).map_err(|e| e.to_string())?)
        }
        (Topology::Peer, None) => return Err("the mechanism built no server end".into()),
        (Topology::SelfLoop, _) => None,
    };
    let client = match s.fault {
        Some(f) if f.breaks_client() => faulty_end(f, channel.client, size),
        _ => channel.client,
    };
    Ok((client, peer, channel.note))
}

/// What a figure's error says, with the peer's own account when it left one.
pub(super) fn describe_failure(e: &ChannelError, peer_error: Option<String>) -> String {
    match (e, peer_error) {
        (ChannelError::Interrupted(_), _) => e.to_string(),
        (_, Some(pe)) => format!("{e} (peer: {pe})"),
        (_, None) => e.to_string(),
    }
}

/// Opens a channel with `open`, starts its server end as a peer in `role`
/// (if the topology has one), attaches and places the client, runs `timed`,
/// then stops the peer and releases the channel, on every path.
fn with_channel<T>(
    open: impl FnOnce() -> Result<Channel, ChannelError>,
    topology: Topology,
    role: PeerRole,
    size: usize,
    s: &RunSettings,
    result: &mut FigureResult,
    timed: impl FnOnce(&mut dyn Endpoint, Option<&Peer>) -> Result<T, ChannelError>,
) -> Result<T, String> {
    // Flags of the previous figure's peer (stop request, exit) must not leak
    // into this one, peer or not.
    crate::engine::os::interrupt::reset_for_figure();
    // Held until the channel is released: its pages are faulted in while it
    // is opened and measured, and its peer inherits the policy.
    let _home = HomeGuard::apply(s.home).map_err(|e| format!("set-up: {e}"))?;
    // Order matters on the way out: the peer is stopped (below) before
    // `client` is dropped, which releases the OS objects.
    let (mut client, peer, note) =
        open_with_peer(open, topology, role, size, s, result.cold_region)?;
    result.note = note;
    let measured = (|| {
        if let Some(p) = &peer {
            client.attach(p.identity())?;
        }
        let _placed =
            PlacementGuard::apply(&s.client).map_err(|e| ChannelError::Setup(e.to_string()))?;
        result.cpus.extend(crate::sys::sched::current_cpu());
        timed(client.as_mut(), peer.as_ref())
    })();
    if let Some(p) = &peer {
        result.cpus.extend(p.server_cpu);
    }
    let peer_error = peer.as_ref().and_then(|p| p.reported_error());
    if let Some(p) = peer {
        p.stop();
    }
    drop(client);
    measured.map_err(|e| describe_failure(&e, peer_error))
}

/// Why a stream figure cannot run, if it cannot: the mechanism cannot
/// stream, its messages are too small to count losses, or any reason a
/// ping-pong figure has.
pub fn stream_skip_reason(mech: &dyn Mechanism, size: usize, s: &RunSettings) -> Option<String> {
    match mech.stream() {
        StreamSupport::No(why) => return Some(format!("cannot stream: {why}")),
        StreamSupport::Lossy if size < stream::LOSSY_MIN_SIZE => {
            return Some(format!(
                "{size} B is too small to count losses: a lossy stream needs the whole \
                 {}-byte sequence number",
                stream::LOSSY_MIN_SIZE
            ));
        }
        _ => {}
    }
    skip_reason(mech, size, s)
}

/// Runs one figure of the stream model (`models::stream`): the client sends, the
/// peer receives. Never panics on a channel failure: it is reported in the
/// result.
pub fn run_stream_figure(
    mech: &dyn Mechanism,
    size: usize,
    cold: bool,
    s: &RunSettings,
    names: &ObjectNamer,
) -> FigureResult {
    let info = mech.info();
    let mut result = FigureResult::new(info.id, Facts::Stream(None), size);
    result.cold_region = cold.then(crate::engine::models::region::cold_region_bytes);
    if let Some(reason) = stream_skip_reason(mech, size, s) {
        result.outcome = Outcome::Skipped(reason);
        return result;
    }
    let plan = SinkPlan {
        lossy: mech.stream() == StreamSupport::Lossy,
        verify: s.budget.verify_rounds,
        samples: s.budget.samples.min(stream::MAX_SAMPLES),
    };
    let cold_region = result.cold_region;
    let measured = with_channel(
        || mech.open_stream(&open_context(size, names, s)),
        info.topology,
        stream::sink_role(plan),
        size,
        s,
        &mut result,
        |client, peer| {
            let peer = peer.ok_or_else(|| ChannelError::Setup("a stream needs a peer".into()))?;
            stream::measure(
                client,
                size,
                &plan,
                &s.budget,
                cold_region,
                &stream::Board::new(peer.board()),
            )
        },
    );
    result.outcome = match measured {
        Ok((m, facts)) => {
            if let Some(n) = &facts.note {
                result.add_note(n);
            }
            result.facts = Facts::Stream(Some(facts));
            Outcome::Ok(Box::new(m))
        }
        Err(e) => Outcome::Failed(e),
    };
    result
}
