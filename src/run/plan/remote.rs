//! `ipcmark run --remote HOST[:PORT]`: the run's tcp and udp figures
//! against an `ipcmark serve` agent on another host — or, for a network
//! preset without `--remote`, against an agent in a two-host testbed this
//! run builds and removes.
//!
//! Only the flags and the order of the steps are here; what each step does
//! is the `remote` layer's (`items`, `link`, `own_agent`, `client`) and the
//! testbed's. Refusals of the plan are usage errors (exit 2), failures to
//! reach the agent run errors (exit 1).

use super::RunPlan;
use crate::record::remote::RemoteRunRecord;
use crate::remote::auth::read_token_file;
use crate::remote::client::{Agent, CONNECT_TIMEOUT};
use crate::remote::figures::{Direction, SharedControl};
use crate::remote::items;
use crate::remote::link;
use crate::remote::own_agent::OwnAgent;
use crate::run::Failure;
use crate::run::request::{RunMode, RunRequest, StreamDirection};
use crate::testbed::{Options, Testbed};
use std::sync::{Arc, Mutex};

/// What a remote run holds until it ends: the agent's record for the
/// report, and the testbed (removed when dropped) if the run built one.
pub struct RemoteRun {
    /// `remote` of the report.
    pub record: RemoteRunRecord,
    /// The testbed this run built, with its agent.
    _testbed: Option<OwnTestbed>,
}

/// Checks the remote flags against the rest (exit 2), before anything is
/// connected or measured.
pub fn check(req: &RunRequest, network_preset: bool) -> Result<(), Failure> {
    if req.remote.is_none() && !network_preset {
        return Ok(());
    }
    if req.mode == Some(RunMode::Rate) {
        return Err(Failure::usage(
            "--mode rate runs on one host: the agent has no receiver for a rate yet; drop --remote",
        ));
    }
    if req.direction.is_some() && req.mode != Some(RunMode::Stream) {
        return Err(Failure::usage(
            "--direction says which way a stream flows: give --mode stream too",
        ));
    }
    if req.cold {
        return Err(Failure::usage(
            "--cold: the agent's side of a remote figure always uses one warm buffer; drop --cold",
        ));
    }
    if req.load.spec.is_some() || req.load_sweep.is_some() {
        return Err(Failure::usage(
            "--load holds a load on this host only; a remote run takes no --load",
        ));
    }
    if req.cpus.as_ref().is_some_and(|c| c.0.len() > 1) || req.same_cpu {
        return Err(Failure::usage(
            "with --remote, --cpus names this host's CPU only (one); the agent's is --remote-cpu",
        ));
    }
    Ok(())
}

/// Connects to the agent (`--remote`, or a testbed's for a network preset
/// without it) and turns the plan's tcp and udp items into remote ones.
/// Names other than tcp and udp are refused (exit 2); with no names, the
/// plan's other mechanisms are left out.
pub fn attach(req: &RunRequest, plan: &mut RunPlan) -> Result<Option<RemoteRun>, Failure> {
    let network_preset = plan.preset.is_some_and(|p| p.network);
    if req.remote.is_none() && !network_preset {
        return Ok(None);
    }
    let direction = match req.direction {
        Some(StreamDirection::Receive) => Direction::Receive,
        _ => Direction::Send,
    };
    let explicit = !req.names.is_empty();
    // Every refusal of the plan comes before a testbed is built or an
    // agent reached.
    let chosen = items::choose(std::mem::take(&mut plan.session.items), direction, explicit)
        .map_err(Failure::usage)?;
    let testbed = match &req.remote {
        Some(_) => None,
        None => Some(testbed_for_preset()?),
    };
    let token = match (&req.token_file, &testbed) {
        (Some(path), _) => Some(read_token_file(path).map_err(Failure::usage)?),
        (None, Some(t)) => Some(read_token_file(t.bed.token_path()).map_err(Failure::run)?),
        (None, None) => None,
    };
    let authenticated = token.is_some();
    let agent = match (&req.remote, &testbed) {
        (Some(spec), _) => Agent::connect(spec, token, CONNECT_TIMEOUT),
        (None, Some(t)) => t.agent.connect(token),
        (None, None) => unreachable!("a testbed is built without --remote"),
    }
    .map_err(Failure::run)?;
    let addr = agent.addr();
    let record = RemoteRunRecord {
        agent: addr.to_string(),
        agent_version: agent.agent_version().to_string(),
        agent_environment: agent.environment().clone(),
        authenticated,
        agent_cpu: req.remote_cpu,
    };
    // Without a speed the figures have no efficiency; the run goes on.
    let link = link::link_to(addr, req.link_speed)
        .map_err(|w| eprintln!("warning: {w}"))
        .ok();
    let control: SharedControl = Arc::new(Mutex::new(Box::new(agent)));
    plan.session.items =
        items::external(chosen, control, link, req.remote_cpu).map_err(Failure::usage)?;
    Ok(Some(RemoteRun {
        record,
        _testbed: testbed,
    }))
}

/// A testbed this run built, with the agent it started in it. Dropped:
/// the agent is killed and reaped (the first field drops first), then the
/// testbed removed.
struct OwnTestbed {
    agent: OwnAgent,
    bed: Testbed,
}

/// The testbed a network preset runs in when no `--remote` is given: two
/// namespaces joined by a veth pair shaped to 10 Mbit/s, its agent started
/// in one and this thread's network moved into the other (every socket of
/// the run is opened by this thread). Refused, with what to do instead,
/// where namespaces cannot be made.
fn testbed_for_preset() -> Result<OwnTestbed, Failure> {
    let options = Options {
        name: format!("run{}", std::process::id()),
        ..Options::default()
    };
    let bed = Testbed::up(&options).map_err(|e| {
        Failure::run(format!(
            "this preset runs between two hosts: give --remote HOST, or run as root so that it \
             can build its two-host testbed ({e})"
        ))
    })?;
    let agent = OwnAgent::start(bed.agent_ip().into(), bed.token_path(), |args| {
        bed.command_in_agent_ns(args)
    })
    .map_err(Failure::run)?;
    let own = OwnTestbed { agent, bed };
    own.bed.enter_client_side().map_err(Failure::run)?;
    Ok(own)
}
