//! What a figure records when its peer ran on another host (`run --remote`):
//! where, over which link, the link's theoretical maximum for the figure,
//! and, for a one-way figure, the estimate of the two clocks' offset. The
//! engine only keeps this record; the remote figures fill it.

/// A figure whose peer ran on another host.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteFacts {
    /// The agent's address, `host:port`.
    pub agent: String,
    /// A stream's direction: `send` (to the agent) or `receive`; `None`
    /// for ping-pong and one-way figures.
    pub direction: Option<&'static str>,
    /// The link, when its speed is known (`None`: no efficiency).
    pub link: Option<LinkFacts>,
    /// The link's theoretical best for this figure, when the link is known.
    pub limit: Option<WireLimit>,
    /// One-way figures: the offset of the agent's clock.
    pub clock: Option<ClockFacts>,
}

/// The link a remote figure crossed.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkFacts {
    /// Bits per second.
    pub bits_per_s: u64,
    /// Where the speed comes from (`/sys/class/net/eth0/speed`, `tc tbf on
    /// veth…`, `--link-speed`).
    pub source: String,
    /// The route's interface, when known.
    pub interface: Option<String>,
    /// Its MTU, bytes.
    pub mtu: usize,
    /// Whether TCP segments carry the 12-byte timestamp option.
    pub tcp_timestamps: bool,
    /// Whether the speed is a rate shaper's (tc tbf or htb), which limits a
    /// stream's rate but holds a frame sent alone back only when its bucket
    /// is empty: no serialisation floor holds on it.
    pub shaper: bool,
}

/// The link's theoretical best for one figure (see docs/remote.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WireLimit {
    /// Ethernet frames one message takes.
    pub frames_per_message: f64,
    /// Bytes on the wire per message: payload and every header, preamble,
    /// FCS, padding and inter-frame gap.
    pub wire_bytes_per_message: f64,
    /// Streams: payload bytes per second at full use of the link.
    pub max_bytes_per_s: Option<f64>,
    /// Ping-pong and one-way: the figure's floor, ns — the serialisation
    /// time of the message (ping-pong: half the round trip's, the figure
    /// being one way).
    pub floor_ns: Option<f64>,
}

impl RemoteFacts {
    /// The fraction of the link's best the figure reached: a stream's
    /// bytes per second ÷ the maximum, or the floor ÷ a time per message;
    /// `None` without a link, a positive figure, or (a floor on a rate
    /// shaper) a floor that holds.
    pub fn efficiency(&self, median_ns: f64, size: usize) -> Option<f64> {
        let (link, limit) = (self.link.as_ref()?, self.limit.as_ref()?);
        if median_ns <= 0.0 {
            return None;
        }
        match (limit.max_bytes_per_s, limit.floor_ns) {
            (Some(max), _) => Some(size as f64 * 1e9 / median_ns / max),
            (None, Some(floor)) if !link.shaper => Some(floor / median_ns),
            _ => None,
        }
    }
}

/// The estimate of the agent's clock against the client's, from the
/// four-timestamp exchange NTP uses, before and after the figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockFacts {
    /// Agent's clock minus the client's, ns (mean of before and after).
    pub offset_ns: f64,
    /// Half the shortest exchange's round trip, ns: the offset lies within
    /// ± this whatever the paths' asymmetry.
    pub uncertainty_ns: f64,
    /// After minus before, ns: how far the clocks moved apart during the figure.
    pub drift_ns: f64,
    /// Exchanges made (before and after together).
    pub exchanges: usize,
    /// Whether the uncertainty is small beside the figure (at most 10% of
    /// its median): when not, the one-way figure cannot be trusted.
    pub trusted: bool,
}
