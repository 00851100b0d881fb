//! One figure from start to end: decide whether it can run, build the channel,
//! start the peer, place both sides, measure, and release everything.

use super::channel::{ChannelError, Mechanism, OpenContext, Payload, PeerIdentity, Topology};
use super::objects::ObjectNamer;
use super::peer::{Fault, Peer, PeerKind, PeerSpec};
use super::pingpong::{self, Budget, Measurement};
use super::placement::{PlacementGuard, SidePlacement};
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
}

/// How a figure ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Measured.
    Ok(Box<Measurement>),
    /// Not run, and why.
    Skipped(String),
    /// Started but failed, and why.
    Failed(String),
}

/// One mechanism at one size.
#[derive(Debug, Clone)]
pub struct FigureResult {
    /// Mechanism id.
    pub mechanism: &'static str,
    /// Payload bytes per message.
    pub size: usize,
    /// Result.
    pub outcome: Outcome,
    /// CPU of the client and (if any) the server, as reported by each side.
    pub cpus: Vec<usize>,
    /// A fact the mechanism recorded about its channel.
    pub note: Option<String>,
}

/// The sizes a mechanism runs at: the requested sizes, or its fixed size.
pub fn sizes_for(mech: &dyn Mechanism, requested: &[usize]) -> Vec<usize> {
    match mech.info().payload {
        Payload::Bytes => requested.to_vec(),
        Payload::Fixed(n) => vec![n],
    }
}

/// Why this figure cannot run in this configuration, if it cannot.
pub fn skip_reason(mech: &dyn Mechanism, size: usize, s: &RunSettings) -> Option<String> {
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
    s: &RunSettings,
    names: &ObjectNamer,
) -> FigureResult {
    let info = mech.info();
    let mut result = FigureResult {
        mechanism: info.id,
        size,
        outcome: Outcome::Skipped(String::new()),
        cpus: Vec::new(),
        note: None,
    };
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
    let info = mech.info();
    // Flags of the previous figure's peer (stop request, exit) must not leak
    // into this one, peer or not.
    super::interrupt::reset_for_figure();
    let ctx = OpenContext { size, names };
    let channel = mech.open(&ctx).map_err(|e| format!("set-up: {e}"))?;
    result.note = channel.note;
    let mut client = channel.client;
    // Field order matters on the way out: the peer is stopped (below) before
    // `client` is dropped, which releases the OS objects.
    let peer = match (info.topology, channel.server) {
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
            };
            Some(Peer::spawn(server, &spec).map_err(|e| e.to_string())?)
        }
        (Topology::Peer, None) => return Err("the mechanism built no server end".into()),
        (Topology::SelfLoop, _) => None,
    };
    let measured = (|| {
        if let Some(p) = &peer {
            client.attach(p.identity())?;
        }
        let _placed =
            PlacementGuard::apply(&s.client).map_err(|e| ChannelError::Setup(e.to_string()))?;
        result.cpus.extend(crate::sys::sched::current_cpu());
        pingpong::measure(
            client.as_mut(),
            size,
            info.topology == Topology::SelfLoop,
            &s.budget,
        )
    })();
    if let Some(p) = &peer {
        result.cpus.extend(p.server_cpu);
    }
    let peer_error = peer.as_ref().and_then(|p| p.reported_error());
    if let Some(p) = peer {
        p.stop();
    }
    drop(client);
    measured.map_err(|e| match (&e, peer_error) {
        (ChannelError::Interrupted(_), _) => e.to_string(),
        (_, Some(pe)) => format!("{e} (peer: {pe})"),
        (_, None) => e.to_string(),
    })
}
