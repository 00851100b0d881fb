//! Waking the measured CPUs: whether this user may hold a CPU wake-up
//! latency limit (as `ipcmark run` does by default), what a wake-up across
//! CPUs costs when none is held, and the idle states a CPU may enter.

use super::{Definition, Inputs, Outcome};
use crate::machine::environment::cpu_idle_in;
use crate::machine::sysroot::SysRoot;
use std::io::Write;

/// The PM QoS file a latency limit is held through.
const DMA_LATENCY: &str = "/dev/cpu_dma_latency";

/// Whether this process may hold a CPU wake-up latency limit: opens the
/// file under `root` for writing and asks for 0 µs, then closes it, which
/// drops the request at once (as `run` would hold it for its whole run).
pub fn try_hold(root: &SysRoot) -> Result<(), String> {
    use std::io::ErrorKind;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(root.path(DMA_LATENCY))
        .map_err(|e| match e.kind() {
            ErrorKind::PermissionDenied => format!("permission denied opening {DMA_LATENCY}"),
            ErrorKind::NotFound => format!("no {DMA_LATENCY} (a kernel without PM QoS)"),
            _ => format!("cannot open {DMA_LATENCY}: {e}"),
        })?;
    f.write_all(&0i32.to_le_bytes())
        .map_err(|e| format!("cannot write {DMA_LATENCY}: {e}"))
}

/// The CPU wake-up latency request, and what a wake-up costs without it.
pub const WAKEUP_LATENCY: Definition = Definition {
    id: "cpu-wakeup-latency",
    title: "CPU wake-up latency held",
    needs_root: true,
    fix: "run ipcmark as root (it then holds /dev/cpu_dma_latency at 0 µs while measuring)",
    run: wakeup_latency,
};

/// A wake-up that costs less than this (µs) is within what a blocking
/// hand-off costs anyway.
const WAKEUP_WARN_US: f64 = 2.0;
/// Above this, every blocking figure across CPUs is mostly the wake-up.
const WAKEUP_FAIL_US: f64 = 20.0;

fn wakeup_latency(x: &Inputs) -> Outcome {
    let cost = |o: Outcome| {
        match &x.measured.wakeup {
        Ok(w) => o.cost(
            w.wakeup_ns() / 1000.0,
            "us",
            format!(
                "one wake-up from CPU {} to CPU {} with no limit held (half of {:.1} − {:.1} µs round trips, blocking − busy-waiting)",
                w.cpus[0],
                w.cpus[1],
                w.blocking_round_trip_ns / 1000.0,
                w.busy_round_trip_ns / 1000.0
            ),
        ),
        Err(_) => o,
    }
    };
    let measured = match &x.measured.wakeup {
        Ok(w) => format!(
            "a wake-up across CPUs costs {:.1} µs with none held",
            w.wakeup_ns() / 1000.0
        ),
        Err(e) => format!("the wake-up's cost was not measured ({e})"),
    };
    match &x.measured.latency_hold {
        Ok(()) => cost(Outcome::pass(format!(
            "held: ipcmark run holds 0 µs through {DMA_LATENCY} while measuring; {measured}"
        ))),
        Err(why) => {
            let found = format!("cannot be held ({why}); {measured}");
            let o = match &x.measured.wakeup {
                Ok(w) => Outcome::graded(
                    w.wakeup_ns() / 1000.0,
                    WAKEUP_WARN_US,
                    WAKEUP_FAIL_US,
                    found,
                ),
                // One CPU measured, or a probe that could not run: the
                // request's absence is said, its cost unknown.
                Err(_) => Outcome::info(found),
            };
            cost(o)
        }
    }
}

/// The idle states the measured CPUs may enter.
pub const IDLE_STATES: Definition = Definition {
    id: "idle-states",
    title: "CPU idle states",
    needs_root: false,
    fix: "run ipcmark as root (it holds /dev/cpu_dma_latency at 0), or: cpupower idle-set -D 10",
    run: idle_states,
};

/// An idle state whose exit takes longer than this (µs) is deep: a
/// blocking hand-off that finds the CPU there waits for it.
const DEEP_US: u64 = 10;
/// Exits longer than this (µs) dwarf every IPC figure.
const DEEPEST_US: u64 = 100;

fn idle_states(x: &Inputs) -> Outcome {
    let mut deepest: Option<(u64, String, usize)> = None;
    let mut names = Vec::new();
    for &cpu in x.cpus {
        let Some(idle) = cpu_idle_in(x.root, cpu) else {
            return Outcome::skip(
                "no cpuidle in sysfs: the CPUs idle the architecture's default way \
                 (HLT in most guests)",
            );
        };
        if names.is_empty() {
            names = idle
                .states
                .iter()
                .map(|s| {
                    format!(
                        "{} {}{}",
                        s.name,
                        s.exit_latency_us.map_or("?".into(), |l| format!("{l} µs")),
                        if s.disabled { " (disabled)" } else { "" }
                    )
                })
                .collect();
            names.insert(0, format!("{} driver:", idle.driver));
        }
        for s in idle.states.iter().filter(|s| !s.disabled) {
            let l = s.exit_latency_us.unwrap_or(0);
            if deepest.as_ref().is_none_or(|(d, _, _)| l > *d) {
                deepest = Some((l, s.name.clone(), cpu));
            }
        }
    }
    if names.len() == 1 {
        // A driver that lists no states (an Intel guest's "none").
        return Outcome::pass(format!(
            "{} no idle state listed: the CPUs idle the architecture's default way \
             (HLT in most guests); cpu-wakeup-latency measures what a wake-up costs",
            names[0]
        ));
    }
    let found = names.join(" ");
    let Some((latency, name, cpu)) = deepest.filter(|(l, _, _)| *l > DEEP_US) else {
        return Outcome::pass(format!(
            "{found}: no state deeper than {DEEP_US} µs enabled"
        ));
    };
    let deep = format!("{name} on CPU {cpu} declares a {latency} µs exit");
    let o = if x.measured.latency_hold.is_ok() {
        Outcome::pass(format!(
            "{found}: {deep}, which ipcmark run keeps the CPUs out of (it may hold {DMA_LATENCY})"
        ))
    } else if latency > DEEPEST_US {
        Outcome::fail(format!(
            "{found}: {deep}, and no latency limit can be held to keep the CPUs out of it"
        ))
    } else {
        Outcome::warn(format!(
            "{found}: {deep}, and no latency limit can be held to keep the CPUs out of it"
        ))
    };
    o.cost(
        latency as f64,
        "us",
        "the deepest enabled state's exit latency, as the driver declares it",
    )
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Tree, measured, outcome, outcome_with};
    use super::super::{Measured, Status};
    use crate::machine::wakeup::WakeupCost;

    fn wakeup(hold: bool, us: Option<f64>) -> super::Outcome {
        let t = Tree::new();
        let s = t.sample(0.0);
        let m = Measured {
            latency_hold: if hold {
                Ok(())
            } else {
                Err("permission denied".into())
            },
            wakeup: us.map_or(Err("one CPU measured".into()), |us| {
                Ok(WakeupCost {
                    cpus: [0, 1],
                    round_trips: 200,
                    blocking_round_trip_ns: 2000.0 + 2000.0 * us,
                    busy_round_trip_ns: 2000.0,
                    deep_idle_entries: None,
                })
            }),
            ..measured()
        };
        outcome_with("cpu-wakeup-latency", &t, &s, &s, &m)
    }

    #[test]
    fn a_limit_held_passes_and_an_unheld_one_is_graded_by_its_cost() {
        let o = wakeup(true, Some(30.0));
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert_eq!(o.cost.unwrap().value, 30.0);
        assert_eq!(wakeup(false, Some(1.0)).status, Status::Pass);
        let o = wakeup(false, Some(6.0));
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert!(o.found.contains("permission denied"), "{o:?}");
        assert_eq!(wakeup(false, Some(40.0)).status, Status::Fail);
        assert_eq!(wakeup(false, None).status, Status::Info);
    }

    #[test]
    fn holding_is_tried_through_the_root() {
        let t = Tree::new();
        assert!(
            super::try_hold(&t.root())
                .unwrap_err()
                .contains("no /dev/cpu_dma_latency")
        );
        t.file("/dev/cpu_dma_latency", "");
        super::try_hold(&t.root()).unwrap();
        assert_eq!(
            std::fs::read(t.root().path("/dev/cpu_dma_latency")).unwrap(),
            0i32.to_le_bytes()
        );
    }

    fn idle(t: &Tree, states: &[(&str, &str, &str)]) {
        t.file(
            "/sys/devices/system/cpu/cpuidle/current_driver",
            "intel_idle",
        );
        for cpu in 0..2 {
            for (i, (name, latency, disable)) in states.iter().enumerate() {
                let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{i}");
                t.file(&format!("{dir}/name"), name);
                t.file(&format!("{dir}/latency"), latency);
                t.file(&format!("{dir}/disable"), disable);
            }
        }
    }

    #[test]
    fn deep_idle_states_warn_or_fail_unless_a_limit_can_be_held() {
        let t = Tree::new();
        assert_eq!(outcome("idle-states", &t).status, Status::Skip);
        t.file("/sys/devices/system/cpu/cpuidle/current_driver", "none");
        let o = outcome("idle-states", &t);
        assert_eq!(o.status, Status::Pass, "{o:?}");
        assert!(
            o.found.starts_with("none driver: no idle state listed"),
            "{o:?}"
        );
        idle(&t, &[("POLL", "0", "0"), ("C1", "2", "0")]);
        assert_eq!(outcome("idle-states", &t).status, Status::Pass);
        idle(
            &t,
            &[("POLL", "0", "0"), ("C1", "2", "0"), ("C6", "170", "1")],
        );
        let o = outcome("idle-states", &t);
        assert_eq!(
            o.status,
            Status::Pass,
            "a disabled state is not entered: {o:?}"
        );
        idle(
            &t,
            &[("POLL", "0", "0"), ("C1", "2", "0"), ("C1E", "20", "0")],
        );
        let o = outcome("idle-states", &t);
        assert_eq!(o.status, Status::Warn, "{o:?}");
        assert_eq!(o.cost.unwrap().value, 20.0);
        idle(&t, &[("POLL", "0", "0"), ("C6", "170", "0")]);
        let o = outcome("idle-states", &t);
        assert_eq!(o.status, Status::Fail, "{o:?}");
        let s = t.sample(0.0);
        let held = Measured {
            latency_hold: Ok(()),
            ..measured()
        };
        let o = outcome_with("idle-states", &t, &s, &s, &held);
        assert_eq!(o.status, Status::Pass, "{o:?}");
    }
}
