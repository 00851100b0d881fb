//! Small views of the run report's records that the HTML report shows as
//! text: a peer's name as the report writes it (beside
//! [`Mode::name`](super::Mode::name) and [`Status::name`](super::Status::name)),
//! each checked against serde's own names.

use super::Peer;

impl Peer {
    /// The name the report writes: `process` or `thread`.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Process => "process",
            Peer::Thread => "thread",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Mode, Status};
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn names_are_the_ones_the_report_writes() {
        let statuses = [
            Status::Ok,
            Status::Skipped,
            Status::Failed,
            Status::BelowResolution,
        ];
        for s in statuses {
            assert_eq!(json!(s), Value::from(s.name()));
        }
        for p in [Peer::Process, Peer::Thread] {
            assert_eq!(json!(p), Value::from(p.name()));
        }
        let modes = [
            Mode::PingPong,
            Mode::Op,
            Mode::Event,
            Mode::Periodic,
            Mode::OneWay,
            Mode::Score,
            Mode::Stream,
            Mode::Rate,
        ];
        for m in modes {
            assert_eq!(json!(m), Value::from(m.name()));
        }
    }
}
