//! The records of a run against an agent on another host (`run --remote`):
//! `remote` of the report (the agent, its version and its host's
//! environment) and `remote` of each result (its link, the link's best for
//! the figure, the fraction reached, and a one-way figure's clock offset).

use crate::engine::run::figure::{FigureResult, Outcome};
use crate::engine::run::remote::{ClockFacts, LinkFacts, WireLimit};
use serde::Serialize;

/// `remote` of the report.
#[derive(Debug, Clone, Serialize)]
pub struct RemoteRunRecord {
    /// The agent's control address, `host:port`.
    pub agent: String,
    /// The ipcmark version the agent runs.
    pub agent_version: String,
    /// The agent host's environment, in the form of the report's own
    /// `environment`.
    pub agent_environment: serde_json::Value,
    /// Whether the session was authenticated with a shared token.
    pub authenticated: bool,
    /// The CPU the agent's side of each figure ran on (`--remote-cpu`);
    /// null: wherever the agent host's scheduler put it.
    pub agent_cpu: Option<usize>,
}

/// `remote` of a result.
#[derive(Debug, Serialize)]
pub struct RemoteRecord {
    /// The agent's control address.
    pub agent: String,
    /// A stream's direction: "send" (to the agent) or "receive".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<&'static str>,
    /// The link; null when its speed is unknown (no efficiency then).
    pub link: Option<LinkRecord>,
    /// The link's theoretical best for this figure; null without a link.
    pub limit: Option<LimitRecord>,
    /// The fraction of the best reached: a stream's bytes per second ÷
    /// `limit.max_bytes_per_s`, or `limit.floor_ns` ÷ the median; null
    /// without a link, a measured median above zero, or (a floor on a
    /// rate shaper, `link.shaper`) a floor that holds.
    pub efficiency: Option<f64>,
    /// Mode oneway: the agent clock's offset, as estimated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockRecord>,
}

/// `remote.link` of a result.
#[derive(Debug, Serialize)]
pub struct LinkRecord {
    /// Bits per second.
    pub bits_per_s: u64,
    /// Where the speed comes from.
    pub source: String,
    /// The route's interface, when known.
    pub interface: Option<String>,
    /// Its MTU, bytes.
    pub mtu: usize,
    /// Whether TCP segments carry the 12-byte timestamp option.
    pub tcp_timestamps: bool,
    /// Whether the speed is a rate shaper's (tc): ping-pong and one-way
    /// figures then have no efficiency, as no serialisation floor holds.
    pub shaper: bool,
}

/// `remote.limit` of a result.
#[derive(Debug, Serialize)]
pub struct LimitRecord {
    /// Ethernet frames per message.
    pub frames_per_message: f64,
    /// Bytes on the wire per message, every overhead counted.
    pub wire_bytes_per_message: f64,
    /// Streams: payload bytes per second at full use of the link.
    pub max_bytes_per_s: Option<f64>,
    /// Ping-pong and one-way: the serialisation floor of the figure, ns.
    pub floor_ns: Option<f64>,
}

/// `remote.clock` of a one-way result.
#[derive(Debug, Serialize)]
pub struct ClockRecord {
    /// The agent's clock minus this host's, ns.
    pub offset_ns: f64,
    /// The offset lies within ± this, ns.
    pub uncertainty_ns: f64,
    /// How far the offset moved during the figure, ns.
    pub drift_ns: f64,
    /// Clock exchanges made.
    pub exchanges: usize,
    /// Whether the uncertainty is at most 10% of the median: when false,
    /// the one-way figure cannot be trusted.
    pub trusted: bool,
}

impl From<&LinkFacts> for LinkRecord {
    fn from(l: &LinkFacts) -> Self {
        LinkRecord {
            bits_per_s: l.bits_per_s,
            source: l.source.clone(),
            interface: l.interface.clone(),
            mtu: l.mtu,
            tcp_timestamps: l.tcp_timestamps,
            shaper: l.shaper,
        }
    }
}

impl From<&WireLimit> for LimitRecord {
    fn from(w: &WireLimit) -> Self {
        LimitRecord {
            frames_per_message: w.frames_per_message,
            wire_bytes_per_message: w.wire_bytes_per_message,
            max_bytes_per_s: w.max_bytes_per_s,
            floor_ns: w.floor_ns,
        }
    }
}

impl From<&ClockFacts> for ClockRecord {
    fn from(c: &ClockFacts) -> Self {
        ClockRecord {
            offset_ns: c.offset_ns,
            uncertainty_ns: c.uncertainty_ns,
            drift_ns: c.drift_ns,
            exchanges: c.exchanges,
            trusted: c.trusted,
        }
    }
}

/// The fraction of the link's best that `f` reached, from its final
/// median (after any merging of passes): what the table prints too.
pub fn efficiency(f: &FigureResult) -> Option<f64> {
    match &f.outcome {
        Outcome::Ok(m) => f.remote.as_ref()?.efficiency(m.summary.median, f.size),
        _ => None,
    }
}

impl RemoteRecord {
    /// `remote` of `f`, if its peer ran on another host.
    pub fn of(f: &FigureResult) -> Option<RemoteRecord> {
        let r = f.remote.as_ref()?;
        Some(RemoteRecord {
            agent: r.agent.clone(),
            direction: r.direction,
            link: r.link.as_ref().map(Into::into),
            limit: r.limit.as_ref().map(Into::into),
            efficiency: efficiency(f),
            clock: r.clock.as_ref().map(Into::into),
        })
    }
}
