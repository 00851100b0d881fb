//! The records of a run against an agent on another host (`run --remote`):
//! `remote` of the report (the agent, its version and its host's
//! environment) and `remote` of each result (its link, the link's best for
//! the figure, the fraction reached, and a one-way figure's clock offset).

use serde::{Deserialize, Serialize};

/// `remote` of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteRecord {
    /// The agent's control address.
    pub agent: String,
    /// A stream's direction: "send" (to the agent) or "receive".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

impl RemoteRunRecord {
    /// The agent host's name, as its environment gives it.
    pub fn agent_hostname(&self) -> Option<&str> {
        self.agent_environment.get("hostname")?.as_str()
    }
}
