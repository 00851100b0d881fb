//! `timer-irq-overhead`: the QNX study's interrupt-handler overhead. The same
//! busy loop of fixed work runs without and with a POSIX timer signalling
//! this thread at `--irq-frequency`; the handler only counts, and the cost
//! per interrupt is the extra time ÷ the interrupts received.

use crate::engine::models::periodic::{Model, Periodic, PeriodicInfo, PeriodicSettings};
use std::time::Duration;

/// The interrupt-handler overhead benchmark.
pub struct IrqOverhead;

impl Periodic for IrqOverhead {
    fn info(&self) -> PeriodicInfo {
        PeriodicInfo {
            id: "timer-irq-overhead",
            summary: "extra busy-loop time per timer signal handled at --irq-frequency (QNX handler overhead)",
            group: super::GROUP,
        }
    }

    fn plan(&self, s: &PeriodicSettings) -> Vec<Model> {
        // Several alternating pairs, compared by their median: the machine's
        // speed drifts by more than the effect between separate runs.
        let (duration, rounds) = match (s.duration, s.quick) {
            (Some(d), _) => (d, 5),
            (None, true) => (Duration::from_secs(1), 5),
            (None, false) => (Duration::from_secs(3), 9),
        };
        vec![Model::IrqOverhead {
            frequency_hz: s.irq_frequency,
            duration,
            rounds,
        }]
    }
}
