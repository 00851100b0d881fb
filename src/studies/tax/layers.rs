//! The layers `ipcmark tax` measures under: what each is, how it is named
//! on the command line, what the parent prepares for it (a cgroup, a
//! filter) and what a pass's child applies to itself before it measures.
//! Every figure's processes are forked by that child afterwards, so they
//! inherit all of it: the cgroup, the namespaces, the filter and the
//! speculation controls.

use crate::engine::os::cgroup::{CgroupVersion, FreshCgroup};
use crate::sys::namespaces;
use crate::sys::process::geteuid;
use crate::sys::seccomp_allow::AllowFilter;
use crate::sys::speculation::{self, Speculation};
use std::time::Duration;

/// A namespace a layer puts both sides in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace {
    /// A user namespace, the caller mapped to root inside.
    User,
    /// A network namespace with its own `lo`, brought up.
    Net,
    /// A PID namespace (the pass's processes run in it from its init on).
    Pid,
    /// An IPC namespace (System V objects and POSIX message queues).
    Ipc,
}

impl Namespace {
    fn name(self) -> &'static str {
        match self {
            Namespace::User => "userns",
            Namespace::Net => "netns",
            Namespace::Pid => "pidns",
            Namespace::Ipc => "ipcns",
        }
    }
}

const ALL_NAMESPACES: [Namespace; 4] = [
    Namespace::User,
    Namespace::Net,
    Namespace::Pid,
    Namespace::Ipc,
];

/// One isolation layer.
#[derive(Debug, Clone, PartialEq)]
pub enum Layer {
    /// A fresh child cgroup with the cpu controller, no limit.
    Cgroup,
    /// The same with a CPU quota per period.
    CpuMax {
        /// CPU time allowed per period.
        quota: Duration,
        /// The enforcement period.
        period: Duration,
    },
    /// An allow-list filter of a container runtime's default shape.
    SeccompDefault,
    /// A filter of this many rules that read arguments (not cacheable).
    SeccompArgs(usize),
    /// One namespace.
    Namespace(Namespace),
    /// Every namespace at once.
    Namespaces,
    /// Speculative store bypass disabled for the task (SSBD).
    Ssbd,
    /// Indirect branch speculation disabled for the task (IBPB/STIBP).
    Ibpb,
    /// All that apply at once, as a runc container sets them up: a cgroup,
    /// every namespace, the default filter, both speculation controls.
    Container,
}

/// The layers by default: each kind once.
pub const DEFAULT_LAYERS: &str = "cgroup,cpu-max:20ms/100ms,seccomp:default,seccomp:args:100,\
                                  userns,netns,pidns,ipcns,namespaces,ssbd,ibpb,container";

/// The most rules `seccomp:args:N` takes (a BPF program holds 4096
/// instructions).
pub const MAX_ARG_RULES: usize = 1000;

impl Layer {
    /// The layer named `text`, or what names are allowed.
    pub fn parse(text: &str) -> Result<Layer, String> {
        let allowed = "cgroup, cpu-max:Q/P (e.g. 20ms/100ms), seccomp:default, seccomp:args:N, \
                       userns, netns, pidns, ipcns, namespaces, ssbd, ibpb, container";
        let t = text.trim();
        Ok(match t {
            "cgroup" => Layer::Cgroup,
            "seccomp:default" => Layer::SeccompDefault,
            "userns" => Layer::Namespace(Namespace::User),
            "netns" => Layer::Namespace(Namespace::Net),
            "pidns" => Layer::Namespace(Namespace::Pid),
            "ipcns" => Layer::Namespace(Namespace::Ipc),
            "namespaces" => Layer::Namespaces,
            "ssbd" => Layer::Ssbd,
            "ibpb" => Layer::Ibpb,
            "container" => Layer::Container,
            _ => {
                if let Some(n) = t.strip_prefix("seccomp:args:") {
                    let n: usize = n.parse().map_err(|_| {
                        format!("layer '{t}': N of seccomp:args:N must be a whole number")
                    })?;
                    if n == 0 || n > MAX_ARG_RULES {
                        return Err(format!(
                            "layer '{t}': seccomp:args:N takes 1 to {MAX_ARG_RULES} rules"
                        ));
                    }
                    Layer::SeccompArgs(n)
                } else if let Some(q) = t.strip_prefix("cpu-max:") {
                    let (quota, period) = q.split_once('/').ok_or_else(|| {
                        format!("layer '{t}': cpu-max takes QUOTA/PERIOD, e.g. cpu-max:20ms/100ms")
                    })?;
                    let (quota, period) = (duration(t, quota)?, duration(t, period)?);
                    if quota < Duration::from_millis(1)
                        || period < Duration::from_millis(1)
                        || period > Duration::from_secs(1)
                    {
                        return Err(format!(
                            "layer '{t}': a quota of 1 ms or more per period of 1 ms to 1 s"
                        ));
                    }
                    Layer::CpuMax { quota, period }
                } else {
                    return Err(format!("unknown layer '{t}'; layers: {allowed}"));
                }
            }
        })
    }

    /// Its name as given: `cpu-max:20ms/100ms`, `seccomp:args:100`.
    pub fn name(&self) -> String {
        match self {
            Layer::Cgroup => "cgroup".into(),
            Layer::CpuMax { quota, period } => {
                format!("cpu-max:{}/{}", ms(*quota), ms(*period))
            }
            Layer::SeccompDefault => "seccomp:default".into(),
            Layer::SeccompArgs(n) => format!("seccomp:args:{n}"),
            Layer::Namespace(ns) => ns.name().into(),
            Layer::Namespaces => "namespaces".into(),
            Layer::Ssbd => "ssbd".into(),
            Layer::Ibpb => "ibpb".into(),
            Layer::Container => "container".into(),
        }
    }

    /// A `seccomp:args:N` layer's N.
    pub fn argument_rules(&self) -> Option<usize> {
        match self {
            Layer::SeccompArgs(n) => Some(*n),
            _ => None,
        }
    }
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms.fract() == 0.0 {
        format!("{ms:.0}ms")
    } else {
        format!("{}us", d.as_micros())
    }
}

fn duration(layer: &str, text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        return Err(format!(
            "layer '{layer}': '{t}' needs a unit: us, ms or s (e.g. 20ms)"
        ));
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("layer '{layer}': '{t}' is not a duration"))?;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("layer '{layer}': '{t}' must be above zero"));
    }
    Ok(Duration::from_secs_f64(v * scale))
}

/// What a layer's passes need, made by the parent before any pass (a
/// cgroup, a filter built so that installing it allocates nothing), and
/// what was left out of it and why.
pub struct Prepared {
    /// The layer's name.
    pub name: String,
    /// The cgroup each pass's child enters (removed when dropped).
    pub cgroup: Option<FreshCgroup>,
    /// The filter each pass's child installs last.
    pub filter: Option<AllowFilter>,
    /// Namespaces each pass's child makes.
    pub namespaces: Vec<Namespace>,
    /// Speculation each pass's child disables.
    pub speculation: Vec<Speculation>,
    /// How each part is applied, in words.
    pub how: Vec<String>,
    /// Why a part was left out.
    pub reasons: Vec<String>,
}

impl Prepared {
    /// Whether any part of it applies.
    pub fn applies(&self) -> bool {
        self.cgroup.is_some()
            || self.filter.is_some()
            || !self.namespaces.is_empty()
            || !self.speculation.is_empty()
    }

    /// Whether every part asked for applies.
    pub fn whole(&self) -> bool {
        self.reasons.is_empty()
    }

    /// The cgroup version, where it has a cgroup.
    pub fn cgroup_version(&self) -> Option<&'static str> {
        self.cgroup.as_ref().map(|c| match c.version() {
            CgroupVersion::V1 => "v1",
            CgroupVersion::V2 => "v2",
        })
    }
}

/// Makes what `layer`'s passes need, named for `tag`; a part that cannot be
/// applied here is left out with its reason (the layer is skipped when no
/// part applies).
pub fn prepare(layer: &Layer, tag: &str) -> Prepared {
    let mut p = Prepared {
        name: layer.name(),
        cgroup: None,
        filter: None,
        namespaces: Vec::new(),
        speculation: Vec::new(),
        how: Vec::new(),
        reasons: Vec::new(),
    };
    match layer {
        Layer::Cgroup => cgroup(&mut p, tag, None),
        Layer::CpuMax { quota, period } => cgroup(&mut p, tag, Some((*quota, *period))),
        Layer::SeccompDefault => filter(&mut p, Ok(AllowFilter::default_profile())),
        Layer::SeccompArgs(n) => filter(&mut p, AllowFilter::argument_rules(*n)),
        Layer::Namespace(ns) => namespace(&mut p, &[*ns]),
        Layer::Namespaces => namespace(&mut p, &ALL_NAMESPACES),
        Layer::Ssbd => spec(&mut p, Speculation::StoreBypass),
        Layer::Ibpb => spec(&mut p, Speculation::IndirectBranch),
        Layer::Container => {
            cgroup(&mut p, tag, None);
            namespace(&mut p, &ALL_NAMESPACES);
            filter(&mut p, Ok(AllowFilter::default_profile()));
            spec(&mut p, Speculation::StoreBypass);
            spec(&mut p, Speculation::IndirectBranch);
        }
    }
    p
}

fn cgroup(p: &mut Prepared, tag: &str, quota: Option<(Duration, Duration)>) {
    match FreshCgroup::create(tag, quota) {
        Ok(c) => {
            let version = match c.version() {
                CgroupVersion::V1 => "v1",
                CgroupVersion::V2 => "v2",
            };
            p.how.push(match quota {
                Some((q, per)) => format!(
                    "cgroup {version} {} with a CPU quota of {} per {}",
                    c.path().display(),
                    ms(q),
                    ms(per)
                ),
                None => format!(
                    "cgroup {version} {} (cpu controller, no limit)",
                    c.path().display()
                ),
            });
            p.cgroup = Some(c);
        }
        Err(e) => p.reasons.push(format!("cgroup: {e}")),
    }
}

fn filter(p: &mut Prepared, f: Result<AllowFilter, String>) {
    match f {
        Ok(f) => {
            p.how.push(format!(
                "seccomp filter of {} rules ({} BPF instructions), installed last",
                f.rules(),
                f.instructions()
            ));
            p.filter = Some(f);
        }
        Err(e) => p.reasons.push(format!("seccomp: {e}")),
    }
}

fn namespace(p: &mut Prepared, which: &[Namespace]) {
    let root = geteuid() == 0;
    let userns_ok = root || namespaces::unprivileged_userns().is_ok();
    for &ns in which {
        // Without root the other namespaces need a user namespace first
        // (the kernel grants namespace creation inside one).
        let ok = match ns {
            Namespace::User => {
                namespaces::unprivileged_userns().or_else(|e| if root { Ok(()) } else { Err(e) })
            }
            _ if root => Ok(()),
            _ if userns_ok => Ok(()),
            _ => Err(format!(
                "needs root, or an unprivileged user namespace ({})",
                namespaces::unprivileged_userns().err().unwrap_or_default()
            )),
        };
        match ok {
            Ok(()) => {
                p.namespaces.push(ns);
                p.how.push(format!(
                    "a new {} namespace",
                    &ns.name()[..ns.name().len() - 2]
                ));
            }
            Err(e) => p.reasons.push(format!("{}: {e}", ns.name())),
        }
    }
    // Without root, a user namespace is made first even where only another
    // was asked for: the kernel then lets the caller make the others.
    if !root && !p.namespaces.is_empty() && !p.namespaces.contains(&Namespace::User) {
        p.namespaces.insert(0, Namespace::User);
        p.how
            .push("a new user namespace first (no root: it grants the others)".into());
    }
}

fn spec(p: &mut Prepared, which: Speculation) {
    let name = match which {
        Speculation::StoreBypass => "ssbd",
        Speculation::IndirectBranch => "ibpb",
    };
    match speculation::offered(which) {
        Ok(()) => {
            p.speculation.push(which);
            p.how.push(format!(
                "{name}: PR_SET_SPECULATION_CTRL, PR_SPEC_DISABLE for both sides"
            ));
        }
        Err(e) => p.reasons.push(format!("{name}: {e}")),
    }
}

/// Applies `p` to the calling process, a pass's child made for it: enters
/// the cgroup, makes the namespaces (a user namespace first), disables the
/// speculation, and installs the filter last (so that nothing of the set-up
/// runs under it). A new PID namespace holds the children made afterwards,
/// not the caller: the caller forks once more and measures in that child
/// ([`needs_fork`]). Fails with the first step that failed.
pub fn apply(p: &Prepared) -> Result<(), String> {
    if let Some(c) = &p.cgroup {
        c.enter()
            .map_err(|e| format!("cannot enter {}: {e}", c.path().display()))?;
    }
    let (uid, gid) = (geteuid(), crate::sys::process::getegid());
    if p.namespaces.contains(&Namespace::User) {
        namespaces::unshare(libc::CLONE_NEWUSER)
            .map_err(|e| format!("unshare(CLONE_NEWUSER): {e}"))?;
        namespaces::map_self_as_root(uid, gid)
            .map_err(|e| format!("mapping the user to root in the new user namespace: {e}"))?;
    }
    let mut flags = 0;
    for ns in &p.namespaces {
        flags |= match ns {
            Namespace::User => 0,
            Namespace::Net => libc::CLONE_NEWNET,
            Namespace::Pid => libc::CLONE_NEWPID,
            Namespace::Ipc => libc::CLONE_NEWIPC,
        };
    }
    if flags != 0 {
        namespaces::unshare(flags).map_err(|e| format!("unshare: {e}"))?;
    }
    if p.namespaces.contains(&Namespace::Net) {
        namespaces::loopback_up().map_err(|e| format!("bringing lo up: {e}"))?;
    }
    for &s in &p.speculation {
        speculation::disable(s).map_err(|e| format!("PR_SET_SPECULATION_CTRL: {e}"))?;
    }
    if let Some(f) = &p.filter {
        f.install()
            .map_err(|e| format!("installing the seccomp filter: {e}"))?;
    }
    Ok(())
}

/// Whether the child must fork once more to be inside what it made (a new
/// PID namespace holds only the caller's children).
pub fn needs_fork(p: &Prepared) -> bool {
    p.namespaces.contains(&Namespace::Pid)
}

/// The boot-time speculation mitigations the kernel reports (name, state).
pub fn mitigations() -> Vec<(String, String)> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/vulnerabilities");
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let state = std::fs::read_to_string(e.path()).ok()?;
            Some((name, state.trim().to_string()))
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_read_as_they_print_and_bad_ones_say_what_is_allowed() {
        for name in DEFAULT_LAYERS.split(',') {
            assert_eq!(Layer::parse(name).unwrap().name(), name);
        }
        assert_eq!(
            Layer::parse("cpu-max:20ms/100ms").unwrap(),
            Layer::CpuMax {
                quota: Duration::from_millis(20),
                period: Duration::from_millis(100)
            }
        );
        assert_eq!(
            Layer::parse("seccomp:args:300").unwrap().argument_rules(),
            Some(300)
        );
        assert!(
            Layer::parse("seccomp:args:0")
                .unwrap_err()
                .contains("1 to 1000")
        );
        assert!(
            Layer::parse("seccomp:args:x")
                .unwrap_err()
                .contains("whole number")
        );
        assert!(
            Layer::parse("cpu-max:20")
                .unwrap_err()
                .contains("QUOTA/PERIOD")
        );
        assert!(
            Layer::parse("cpu-max:20/100ms")
                .unwrap_err()
                .contains("unit")
        );
        assert!(
            Layer::parse("cpu-max:20ms/5s")
                .unwrap_err()
                .contains("1 ms to 1 s")
        );
        let e = Layer::parse("docker").unwrap_err();
        assert!(
            e.contains("unknown layer 'docker'") && e.contains("seccomp:args:N"),
            "{e}"
        );
    }
}
