//! The records of a run against an agent on another host (`run --remote`):
//! `remote` of the report (the agent, its version and its host's
//! environment) and `remote` of each result (its link, the link's best for
//! the figure, the fraction reached, and a one-way figure's clock offset).

use crate::engine::run::figure::{FigureResult, Outcome};
use crate::engine::run::remote::{ClockFacts, LinkFacts, WireLimit};
use crate::record::remote::{ClockRecord, LimitRecord, LinkRecord, RemoteRecord};

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

/// `remote` of `f`, if its peer ran on another host.
pub fn of(f: &FigureResult) -> Option<RemoteRecord> {
    {
        let r = f.remote.as_ref()?;
        Some(RemoteRecord {
            agent: r.agent.clone(),
            direction: r.direction.map(Into::into),
            link: r.link.as_ref().map(Into::into),
            limit: r.limit.as_ref().map(Into::into),
            efficiency: efficiency(f),
            clock: r.clock.as_ref().map(Into::into),
        })
    }
}
