//! Where the host placed the measured CPUs: a cache line's round trip
//! between them (the placement probe every run takes, docs/trust.md), the
//! class it suggests, and, where the guest's topology says something, whether
//! the two agree.

use super::{Definition, Inputs, Outcome};
use crate::engine::run::placement_probe::class;
use crate::machine::sysroot::SysRoot;

/// The cache-line round trip between the measured CPUs.
pub const PLACEMENT: Definition = Definition {
    id: "cpu-placement",
    title: "Cache-line round trip between the measured CPUs",
    needs_root: false,
    fix: "on a VM, pin the vCPUs to host cores (or ask for a dedicated host); else compare only \
          runs of one placement (their placement probes agree)",
    run: placement,
};

/// What the guest's own topology says of CPUs `a` and `b`: siblings of one
/// core, sharing a last-level cache, or neither; `None` where sysfs does
/// not say.
fn topology_class(root: &SysRoot, a: usize, b: usize) -> Option<&'static str> {
    let holds = |file: String| -> Option<bool> {
        let text = root.read_raw(&file)?;
        Some(crate::machine::environment::parse_cpu_list(text.trim()).contains(&b))
    };
    let cpu = format!("/sys/devices/system/cpu/cpu{a}");
    if holds(format!("{cpu}/topology/thread_siblings_list"))? {
        return Some("SMT siblings");
    }
    // The highest cache index is the last level.
    let last = (0..8)
        .rev()
        .find_map(|i| holds(format!("{cpu}/cache/index{i}/shared_cpu_list")))?;
    Some(if last {
        "shared last-level cache"
    } else {
        "across caches"
    })
}

fn placement(x: &Inputs) -> Outcome {
    let p = match &x.measured.placement {
        Ok(p) => p,
        Err(why) => return Outcome::skip(why.clone()),
    };
    let [a, b] = p.cpus;
    let probed = class(p.median_ns);
    let cpuinfo = x.root.read_raw("/proc/cpuinfo").unwrap_or_default();
    let virtual_machine =
        crate::machine::environment::virtualization_in(x.root, &cpuinfo) != "none";
    let mut found = format!(
        "{:.0} ns a round trip between CPUs {a} and {b} (10–90%: {:.0}–{:.0} ns): suggests {probed}",
        p.median_ns, p.p10_ns, p.p90_ns
    );
    match topology_class(x.root, a, b) {
        Some(t) if t != probed => found.push_str(&format!(
            "; the guest's topology says {t}{}",
            if virtual_machine {
                " (a VM's topology is the guest's, not where the host runs it)"
            } else {
                ": the two disagree"
            }
        )),
        Some(_) => found.push_str("; the guest's topology agrees"),
        None => {}
    }
    let o = if virtual_machine {
        found.push_str(
            "; under a hypervisor the host may move the vCPUs between caches for minutes at a \
             time, and every figure that moves data between them follows",
        );
        Outcome::warn(found)
    } else {
        Outcome::info(found)
    };
    o.cost(
        p.median_ns,
        "ns",
        format!(
            "a cache line's round trip between CPUs {a} and {b}: the least that any hand-off \
             between them pays"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{Tree, measured, outcome_with};
    use super::super::{Measured, PlacementFound, Status};

    fn probed(median_ns: f64) -> Measured {
        Measured {
            placement: Ok(PlacementFound {
                cpus: [0, 1],
                median_ns,
                p10_ns: median_ns * 0.97,
                p90_ns: median_ns * 1.03,
            }),
            ..measured()
        }
    }

    #[test]
    fn the_probe_is_said_with_its_class_and_the_topology_beside_it() {
        let t = Tree::new();
        t.file("/proc/cpuinfo", "model name : test")
            .file(
                "/sys/devices/system/cpu/cpu0/topology/thread_siblings_list",
                "0",
            )
            .file(
                "/sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list",
                "0-1",
            );
        let s = t.sample(0.0);
        let o = outcome_with("cpu-placement", &t, &s, &s, &probed(330.0));
        assert!(
            o.found.contains("330 ns a round trip between CPUs 0 and 1"),
            "{o:?}"
        );
        assert!(o.found.contains("suggests across caches"), "{o:?}");
        assert!(
            o.found.contains("topology says shared last-level cache"),
            "{o:?}"
        );
        assert_eq!(o.cost.as_ref().unwrap().value, 330.0);
        let o = outcome_with("cpu-placement", &t, &s, &s, &probed(62.0));
        assert!(o.found.contains("the guest's topology agrees"), "{o:?}");
        let o = outcome_with("cpu-placement", &t, &s, &s, &measured());
        assert_eq!(o.status, Status::Skip, "{o:?}");
    }
}
