//! The CPU wake-up latency a command holds while it measures (as
//! cyclictest does, through `/dev/cpu_dma_latency`), and what became of the
//! request: held, refused or not asked, with what a cross-CPU wake-up costs
//! when none is held.

use super::wakeup::{self, WakeupCost};
use std::fs;

/// How a run asks the kernel to keep CPUs out of deep idle states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LatencyRequest {
    /// Hold this many µs, or refuse the run.
    Required(i32),
    /// Hold this many µs when permitted, else go on and say so.
    Wanted(i32),
    /// Ask for nothing, for this reason (e.g. "--cpu-latency off").
    None(String),
}

/// Why no CPU wake-up latency limit was held.
#[derive(Debug, Clone, PartialEq)]
pub enum NotHeld {
    /// None was asked for, for this reason.
    NotAsked(String),
    /// The kernel refused it: what failed.
    Refused(String),
}

impl NotHeld {
    /// The reason, as a phrase.
    pub fn reason(&self) -> &str {
        match self {
            NotHeld::NotAsked(why) | NotHeld::Refused(why) => why,
        }
    }
}

/// What became of a run's CPU wake-up latency request.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuLatencyState {
    /// The limit asked for, µs; None when none was.
    pub requested_us: Option<i32>,
    /// Why no limit is held; None when the requested one is.
    pub not_held: Option<NotHeld>,
    /// What a cross-CPU wake-up costs here, measured only when no limit is
    /// held (holding one is what removes the cost); otherwise why it was
    /// not measured.
    pub wakeup: Result<WakeupCost, String>,
}

impl CpuLatencyState {
    /// The limit held, µs, if one is.
    pub fn held_us(&self) -> Option<i32> {
        self.requested_us.filter(|_| self.not_held.is_none())
    }
}

/// A run's CPU wake-up latency request, held while this value lives (the
/// kernel drops it when the file is closed), and its state.
pub struct HeldLatency {
    _file: Option<fs::File>,
    /// What became of the request.
    pub state: CpuLatencyState,
}

/// Carries out `request`: holds the limit, or finds out why it is not held
/// and measures what a wake-up between `cpus` (the first two) costs then.
/// Fails only when a `Required` limit cannot be held, saying why.
pub fn request_cpu_latency(
    request: &LatencyRequest,
    cpus: &[usize],
) -> Result<HeldLatency, String> {
    let (requested, not_held) = match request {
        LatencyRequest::Required(us) => return hold(*us),
        LatencyRequest::Wanted(us) => match hold(*us) {
            Ok(held) => return Ok(held),
            Err(e) => (Some(*us), NotHeld::Refused(e)),
        },
        LatencyRequest::None(why) => (None, NotHeld::NotAsked(why.clone())),
    };
    let wakeup = match cpus {
        [a, b, ..] => wakeup::measure([*a, *b]),
        _ => Err("one CPU allowed: no cross-CPU wake-up to measure".into()),
    };
    Ok(HeldLatency {
        _file: None,
        state: CpuLatencyState {
            requested_us: requested,
            not_held: Some(not_held),
            wakeup,
        },
    })
}

/// Asks the kernel to keep every CPU's wake-up latency at most `us` µs
/// (0 keeps CPUs out of deep idle states), as cyclictest does; or says what
/// failed.
fn hold(us: i32) -> Result<HeldLatency, String> {
    use std::io::{ErrorKind, Write};
    const PATH: &str = "/dev/cpu_dma_latency";
    let mut f = fs::OpenOptions::new()
        .write(true)
        .open(PATH)
        .map_err(|e| match e.kind() {
            ErrorKind::PermissionDenied => format!("permission denied opening {PATH}"),
            ErrorKind::NotFound => format!("no {PATH} (a kernel without PM QoS)"),
            _ => format!("cannot open {PATH}: {e}"),
        })?;
    f.write_all(&us.to_le_bytes())
        .map_err(|e| format!("cannot write {PATH}: {e}"))?;
    Ok(HeldLatency {
        _file: Some(f),
        state: CpuLatencyState {
            requested_us: Some(us),
            not_held: None,
            wakeup: Err("not measured: the CPU wake-up latency was held".into()),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_not_asked_for_is_not_held_and_its_cost_is_measured() {
        let cpus = crate::sys::sched::allowed_cpus().unwrap();
        let held = request_cpu_latency(&LatencyRequest::None("a test".into()), &cpus[..1]).unwrap();
        assert_eq!(held.state.held_us(), None);
        assert_eq!(
            held.state.not_held,
            Some(NotHeld::NotAsked("a test".into()))
        );
        assert!(held.state.wakeup.unwrap_err().contains("one CPU"));
        if cpus.len() >= 2 {
            let held = request_cpu_latency(&LatencyRequest::None("a test".into()), &cpus).unwrap();
            assert!(held.state.wakeup.is_ok(), "{:?}", held.state.wakeup);
        }
    }

    #[test]
    fn a_held_request_is_not_measured_and_a_refused_one_says_why() {
        let cpus = crate::sys::sched::allowed_cpus().unwrap();
        match request_cpu_latency(&LatencyRequest::Required(0), &cpus) {
            Ok(held) => {
                assert_eq!(held.state.held_us(), Some(0));
                assert!(held.state.wakeup.unwrap_err().contains("held"));
            }
            // Not root: a required limit fails, a wanted one goes on.
            Err(e) => {
                assert!(e.contains("/dev/cpu_dma_latency"), "{e}");
                let held = request_cpu_latency(&LatencyRequest::Wanted(0), &cpus).unwrap();
                assert_eq!(held.state.held_us(), None);
                assert!(matches!(held.state.not_held, Some(NotHeld::Refused(_))));
            }
        }
    }
}
