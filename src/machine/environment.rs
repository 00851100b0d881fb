//! Facts about the machine that decide the figures, recorded with every run.

use super::cpu_latency::CpuLatencyState;
pub use super::cpu_list::{format_cpu_list, parse_cpu_list};
use super::sysroot::SysRoot;
use std::collections::BTreeMap;
use std::fs;
use std::time::Duration;

/// What the machine is.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Host name.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// Kernel version string (`uname -v`), which names the preemption model.
    pub kernel_version: String,
    /// Machine architecture.
    pub arch: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs online.
    pub logical_cpus: usize,
    /// CPUs this process may run on.
    pub allowed_cpus: Vec<usize>,
    /// Hypervisor, if the CPU reports one ("none" on bare metal).
    pub virtualization: String,
    /// Current clock source.
    pub clocksource: String,
    /// Timer slack of the measuring thread, ns.
    pub timer_slack_ns: Option<u64>,
    /// Preemption model, from the kernel version string (and debugfs when mounted).
    pub preemption: String,
    /// CPU clock in MHz as the kernel reports it for CPU 0.
    pub cpu_mhz: Option<f64>,
    /// cpufreq governor of CPU 0; null when the kernel exposes no cpufreq (typical in VMs).
    pub frequency_governor: Option<String>,
    /// SMT state: "on", "off", "notsupported", … (null if not reported).
    pub smt: Option<String>,
    /// CPUs isolated from the scheduler (`isolcpus`).
    pub isolated_cpus: Vec<usize>,
    /// CPUs in adaptive-tick mode (`nohz_full`).
    pub nohz_full_cpus: Vec<usize>,
    /// Speculative-execution mitigations: vulnerability → kernel status.
    pub mitigations: BTreeMap<String, String>,
    /// 1, 5 and 15 minute load averages at start.
    pub load_average: [f64; 3],
    /// Share of all CPUs busy during 100 ms just before the run, in
    /// percent, less what the run's own MPI ranks on this machine used
    /// there (they wait for rank 0 by polling): other load only.
    pub cpu_busy_percent_at_start: Option<f64>,
    /// Current PM QoS CPU latency limit from /dev/cpu_dma_latency, µs
    /// (2000000000 means no limit: deep C-states allowed). Null if unreadable
    /// (only root may read it).
    pub cpu_dma_latency_us: Option<i64>,
    /// The kernel's CPU idle driver and states, which anyone may read; null
    /// without cpuidle (the CPU then idles the architecture's default way).
    pub cpu_idle: Option<CpuIdle>,
    /// Whether this run held its CPU wake-up latency request, and if not,
    /// why, and what a wake-up costs instead.
    pub cpu_latency: CpuLatencyState,
    /// The CPU's family, model number and stepping, where cpuinfo has them.
    pub cpu_signature: Option<super::fingerprint::CpuSignature>,
    /// The CPU's microcode revision, where cpuinfo has it.
    pub microcode: Option<String>,
    /// The NUMA nodes online; `None` without NUMA.
    pub numa_nodes: Option<Vec<usize>>,
    /// The kernel's command line, sanitised
    /// ([`super::fingerprint::sanitise_cmdline`]).
    pub kernel_cmdline: Option<String>,
    /// The MPI job the run's figures were measured across (`ipcmark mpi`);
    /// `None` for every other run.
    pub mpi: Option<MpiJob>,
}

/// The MPI job a run spans: its library and where each rank ran. Plain
/// data: `mpi` gathers it, output writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct MpiJob {
    /// `MPI_Get_library_version`: the library's own description.
    pub library: String,
    /// `MPI_Get_version`: the MPI standard it implements, e.g. (3, 1).
    pub standard: (i32, i32),
    /// Every rank's place, in rank order.
    pub ranks: Vec<RankPlace>,
}

/// Where one rank of an MPI job ran, as that rank saw it: what `mpirun
/// --report-bindings` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankPlace {
    /// The rank in `MPI_COMM_WORLD`.
    pub rank: i32,
    /// `MPI_Get_processor_name`: the node's name.
    pub host: String,
    /// The rank's process id on its node.
    pub pid: u32,
    /// The CPUs the process may run on (`sched_getaffinity`): the
    /// launcher's binding, or every CPU when it bound nothing.
    pub allowed_cpus: Vec<usize>,
    /// The CPU the process was running on (`sched_getcpu`), if known.
    pub cpu: Option<usize>,
}

/// The nodes of a job's `ranks` in order of first appearance, so that a
/// table can number them (node 0 is the first rank's).
pub fn nodes(ranks: &[RankPlace]) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for p in ranks {
        if !seen.contains(&p.host.as_str()) {
            seen.push(&p.host);
        }
    }
    seen
}

/// The kernel's CPU idle driver and the idle states it may enter.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuIdle {
    /// cpuidle driver (`intel_idle`, `acpi_idle`, `haltpoll`, …; "none").
    pub driver: String,
    /// cpuidle governor (`menu`, `teo`, `haltpoll`, …).
    pub governor: Option<String>,
    /// The states of the first allowed CPU, shallowest first.
    pub states: Vec<IdleState>,
}

/// One CPU idle state.
#[derive(Debug, Clone, PartialEq)]
pub struct IdleState {
    /// Its name (`POLL`, `C1`, `C6`, `haltpoll idle`, …).
    pub name: String,
    /// The exit latency the driver declares, µs.
    pub exit_latency_us: Option<u64>,
    /// Whether it is disabled for this CPU.
    pub disabled: bool,
}

fn read_trim(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn uname() -> (String, String, String, String) {
    // Read from /proc to avoid another unsafe wrapper; these are the same fields.
    let get =
        |f: &str| read_trim(&format!("/proc/sys/kernel/{f}")).unwrap_or_else(|| "unknown".into());
    (
        get("hostname"),
        get("osrelease"),
        get("version"),
        std::env::consts::ARCH.to_string(),
    )
}

pub(crate) fn cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn virtualization(cpuinfo: &str) -> String {
    virtualization_in(&SysRoot::host(), cpuinfo)
}

/// The hypervisor this machine runs under, read under `root` ("none" on
/// bare metal): the CPU's `hypervisor` flag in `cpuinfo`, named by Xen's or
/// the firmware's vendor file, or a KVM guest by its paravirtual clock.
pub(crate) fn virtualization_in(root: &SysRoot, cpuinfo: &str) -> String {
    let flagged = cpuinfo
        .lines()
        .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"));
    let vendor = root
        .read("/sys/hypervisor/type")
        .or_else(|| root.read("/sys/class/dmi/id/sys_vendor"));
    match (flagged, vendor) {
        (true, Some(v)) => v,
        (true, None) => {
            // KVM guests expose kvm-clock or a KVM signature through paravirt features.
            if root
                .read("/sys/devices/system/clocksource/clocksource0/available_clocksource")
                .is_some_and(|c| c.contains("kvm-clock"))
            {
                "kvm".into()
            } else {
                "unknown hypervisor".into()
            }
        }
        (false, _) => "none".into(),
    }
}

/// This host's name, as a run's environment records it (`hostname`).
pub fn hostname() -> String {
    uname().0
}

/// Collects the environment of this run, with what became of its CPU
/// wake-up latency request and, for a rank of an MPI job, the `job`.
pub fn collect(cpu_latency: CpuLatencyState, job: Option<&MpiJob>) -> Environment {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let (hostname, kernel, kernel_version, arch) = uname();
    let allowed_cpus = crate::sys::sched::allowed_cpus().unwrap_or_default();
    let own = job.map_or_else(Vec::new, |j| job_processes_here(j, &hostname));
    Environment {
        hostname,
        kernel,
        kernel_version,
        arch,
        cpu_model: cpu_model(&cpuinfo),
        logical_cpus: std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .max(online_cpus()),
        cpu_idle: cpu_idle(allowed_cpus.first().copied().unwrap_or(0)),
        allowed_cpus,
        virtualization: virtualization(&cpuinfo),
        clocksource: read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_else(|| "unknown".into()),
        timer_slack_ns: crate::sys::sched::timer_slack().ok(),
        preemption: preemption(&kernel_version_string()),
        cpu_mhz: cpu_mhz(&cpuinfo),
        frequency_governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        smt: read_trim("/sys/devices/system/cpu/smt/control"),
        isolated_cpus: read_trim("/sys/devices/system/cpu/isolated")
            .map(|s| parse_cpu_list(&s))
            .unwrap_or_default(),
        nohz_full_cpus: read_trim("/sys/devices/system/cpu/nohz_full")
            .map(|s| parse_cpu_list(&s))
            .unwrap_or_default(),
        mitigations: mitigations(),
        load_average: load_average(),
        cpu_busy_percent_at_start: busy_percent(Duration::from_millis(100), &own),
        cpu_dma_latency_us: fs::read("/dev/cpu_dma_latency").ok().and_then(|b| {
            b.get(..4)
                .map(|w| i32::from_le_bytes([w[0], w[1], w[2], w[3]]) as i64)
        }),
        cpu_latency,
        cpu_signature: super::fingerprint::cpu_signature(&cpuinfo),
        microcode: super::fingerprint::microcode(&cpuinfo),
        numa_nodes: super::fingerprint::numa_nodes_in(&SysRoot::host()),
        kernel_cmdline: super::fingerprint::kernel_cmdline_in(&SysRoot::host()),
        mpi: job.cloned(),
    }
}

/// The cpuidle driver, governor and the idle states of `cpu`, from sysfs.
fn cpu_idle(cpu: usize) -> Option<CpuIdle> {
    cpu_idle_in(&SysRoot::host(), cpu)
}

/// [`cpu_idle`] read under `root`, so that a test can read a fixture tree
/// (a guest without a cpuidle driver lists no states, and the fields of one
/// must still be proven on any host), and `ipcmark doctor` reads the same.
pub(crate) fn cpu_idle_in(root: &SysRoot, cpu: usize) -> Option<CpuIdle> {
    let at = |rel: String| root.read(&format!("/sys/devices/system/cpu/{rel}"));
    let driver = at("cpuidle/current_driver".into())?;
    let governor =
        at("cpuidle/current_governor".into()).or_else(|| at("cpuidle/current_governor_ro".into()));
    let states = (0..)
        .map(|i| format!("cpu{cpu}/cpuidle/state{i}"))
        .map_while(|dir| {
            Some(IdleState {
                name: at(format!("{dir}/name"))?,
                exit_latency_us: at(format!("{dir}/latency")).and_then(|v| v.parse().ok()),
                disabled: at(format!("{dir}/disable")).is_some_and(|v| v != "0"),
            })
        })
        .collect();
    Some(CpuIdle {
        driver,
        governor,
        states,
    })
}

fn kernel_version_string() -> String {
    read_trim("/proc/sys/kernel/version").unwrap_or_default()
}

/// The preemption model: PREEMPT_RT, full PREEMPT, PREEMPT_DYNAMIC (whose
/// current mode debugfs shows in parentheses, when mounted), or neither.
fn preemption(version: &str) -> String {
    preemption_in(&SysRoot::host(), version)
}

/// [`preemption`], debugfs read under `root`.
pub(crate) fn preemption_in(root: &SysRoot, version: &str) -> String {
    let dynamic_mode = || {
        root.read("/sys/kernel/debug/sched/preempt").and_then(|s| {
            let open = s.find('(')?;
            let close = s[open..].find(')')? + open;
            Some(s[open + 1..close].to_string())
        })
    };
    if version.contains("PREEMPT_RT") {
        "PREEMPT_RT".into()
    } else if version.contains("PREEMPT_DYNAMIC") {
        match dynamic_mode() {
            Some(mode) => format!("PREEMPT_DYNAMIC ({mode})"),
            // The current mode is only visible through debugfs.
            None => "PREEMPT_DYNAMIC".into(),
        }
    } else if version.contains("PREEMPT") {
        "PREEMPT".into()
    } else {
        "none or voluntary".into()
    }
}

fn cpu_mhz(cpuinfo: &str) -> Option<f64> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "cpu MHz")
            .then(|| v.trim().parse().ok())
            .flatten()
    })
}

fn mitigations() -> BTreeMap<String, String> {
    mitigations_in(&SysRoot::host())
}

/// Speculative-execution vulnerabilities and the kernel's status of each,
/// read under `root`.
pub(crate) fn mitigations_in(root: &SysRoot) -> BTreeMap<String, String> {
    const DIR: &str = "/sys/devices/system/cpu/vulnerabilities";
    root.list(DIR)
        .into_iter()
        .filter_map(|name| {
            let status = root.read(&format!("{DIR}/{name}"))?;
            Some((name, status))
        })
        .collect()
}

fn load_average() -> [f64; 3] {
    let text = read_trim("/proc/loadavg").unwrap_or_default();
    let mut v = text.split_whitespace().map(|x| x.parse().unwrap_or(0.0));
    [
        v.next().unwrap_or(0.0),
        v.next().unwrap_or(0.0),
        v.next().unwrap_or(0.0),
    ]
}

/// (busy, total) jiffies summed over all CPUs, from /proc/stat.
fn cpu_jiffies() -> Option<(u64, u64)> {
    let text = fs::read_to_string("/proc/stat").ok()?;
    let all = crate::engine::os::load::account::parse_cpu_times(&text).0?;
    // Idle and iowait are not busy; steal is (the CPU was wanted).
    Some((all.total() - all.idle - all.iowait, all.total()))
}

/// User and system jiffies that `pids` have used so far, from
/// /proc/<pid>/stat (the same clock ticks as /proc/stat); a process that is
/// gone counts nothing.
fn process_jiffies(pids: &[u32]) -> u64 {
    pids.iter()
        .filter_map(|pid| {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // The command name may hold spaces and parentheses: fields
            // count from the last ')'; utime and stime are fields 14, 15.
            let rest = &stat[stat.rfind(')')? + 1..];
            let mut f = rest.split_whitespace().skip(11);
            Some(f.next()?.parse::<u64>().ok()? + f.next()?.parse::<u64>().ok()?)
        })
        .sum()
}

/// How busy the machine is right now with other work than this run, by
/// sampling /proc/stat over `window` (the load average lags by a minute and
/// counts this process's own past), less what `own` (this run's other
/// processes) used in the window.
fn busy_percent(window: Duration, own: &[u32]) -> Option<f64> {
    let (b0, t0) = cpu_jiffies()?;
    let o0 = process_jiffies(own);
    std::thread::sleep(window);
    let (b1, t1) = cpu_jiffies()?;
    let o1 = process_jiffies(own);
    // Both are counted in whole ticks at different moments: never below 0.
    let other = (b1 - b0).saturating_sub(o1.saturating_sub(o0));
    (t1 > t0).then(|| other as f64 / (t1 - t0) as f64 * 100.0)
}

/// The processes of `job` on this machine other than the caller: the ranks
/// on this host and, on a testbed whose nodes are namespaces of this
/// machine, the ranks here that belong to the same launch (the same
/// `PMIX_NAMESPACE` in their environment).
fn job_processes_here(job: &MpiJob, host: &str) -> Vec<u32> {
    let me = std::process::id();
    let launch = std::env::var("PMIX_NAMESPACE").ok();
    job.ranks
        .iter()
        .filter(|r| r.pid != me)
        .filter(|r| r.host == host || launch.as_deref().is_some_and(|l| same_launch(r.pid, l)))
        .map(|r| r.pid)
        .collect()
}

/// Whether process `pid` here was started by the launch `namespace`.
fn same_launch(pid: u32, namespace: &str) -> bool {
    let want = format!("PMIX_NAMESPACE={namespace}");
    fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == want.as_bytes()))
}

/// Number of CPUs online, from /sys ("0-1,4" style lists).
pub fn online_cpus() -> usize {
    read_trim("/sys/devices/system/cpu/online")
        .map(|s| parse_cpu_list(&s).len())
        .filter(|&n| n > 0)
        .unwrap_or_else(crate::sys::sched::configured_cpus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::cpu_latency::NotHeld;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-1"), vec![0, 1]);
        assert_eq!(parse_cpu_list("0-2,5,7-8\n"), vec![0, 1, 2, 5, 7, 8]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
    }

    #[test]
    fn preemption_models_are_recognised() {
        assert_eq!(preemption("#1 SMP PREEMPT_RT Thu"), "PREEMPT_RT");
        assert_eq!(preemption("#1 SMP PREEMPT Thu"), "PREEMPT");
        assert!(preemption("#1 SMP PREEMPT_DYNAMIC @0").starts_with("PREEMPT_DYNAMIC"));
        assert_eq!(preemption("#1 SMP Thu"), "none or voluntary");
    }

    #[test]
    fn environment_names_the_kernel() {
        let env = collect(not_asked(), None);
        assert!(!env.kernel.is_empty() && env.kernel != "unknown");
        assert!(env.logical_cpus >= 1);
        assert_eq!(env.cpu_latency, not_asked());
        if let Some(idle) = &env.cpu_idle {
            assert!(!idle.driver.is_empty(), "{idle:?}");
            assert!(idle.states.iter().all(|s| !s.name.is_empty()), "{idle:?}");
        }
    }

    /// A fixture sysfs tree with `states` idle states for CPU 1 (and none
    /// for CPU 0), as an AMD guest's haltpoll driver lists them.
    fn idle_tree(states: &[(&str, &str, &str)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| {
            let p = root.path().join("sys/devices/system/cpu").join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, format!("{text}\n")).unwrap();
        };
        w("cpuidle/current_driver", "haltpoll");
        w("cpuidle/current_governor_ro", "haltpoll");
        for (i, (name, latency, disable)) in states.iter().enumerate() {
            w(&format!("cpu1/cpuidle/state{i}/name"), name);
            w(&format!("cpu1/cpuidle/state{i}/latency"), latency);
            w(&format!("cpu1/cpuidle/state{i}/disable"), disable);
        }
        root
    }

    #[test]
    fn idle_states_are_read_from_sysfs_whatever_the_host_lists() {
        let tree = idle_tree(&[("POLL", "0", "0"), ("haltpoll idle", "30", "1")]);
        let idle = cpu_idle_in(&SysRoot::at(tree.path()), 1).unwrap();
        assert_eq!(idle.driver, "haltpoll");
        assert_eq!(idle.governor.as_deref(), Some("haltpoll"), "the _ro file");
        assert_eq!(
            idle.states,
            vec![
                IdleState {
                    name: "POLL".into(),
                    exit_latency_us: Some(0),
                    disabled: false
                },
                IdleState {
                    name: "haltpoll idle".into(),
                    exit_latency_us: Some(30),
                    disabled: true
                },
            ]
        );
        // A CPU that lists none (an Intel guest without a cpuidle driver
        // has a driver file saying "none" and no states).
        assert!(
            cpu_idle_in(&SysRoot::at(tree.path()), 0)
                .unwrap()
                .states
                .is_empty()
        );
        // No cpuidle at all: no record.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(cpu_idle_in(&SysRoot::at(empty.path()), 0), None);
    }

    #[test]
    fn the_cpu_time_of_a_jobs_own_ranks_is_counted_and_only_theirs() {
        // CPU time, not wall time: the spin uses at least 50 ms of it.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(60) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let me = std::process::id();
        assert!(process_jiffies(&[me]) > 0);
        assert_eq!(process_jiffies(&[u32::MAX]), 0, "a process that is gone");

        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let place = |rank: i32, host: &str, pid: u32| RankPlace {
            rank,
            host: host.into(),
            pid,
            allowed_cpus: vec![0],
            cpu: None,
        };
        let here = uname().0;
        let job = MpiJob {
            library: "test".into(),
            standard: (3, 1),
            ranks: vec![
                place(0, &here, me),
                place(1, &here, child.id()),
                // Another node's pid, which may name an unrelated process here.
                place(2, "another-node", 1),
            ],
        };
        let own = job_processes_here(&job, &here);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(own, vec![child.id()]);
        assert_eq!(collect(not_asked(), Some(&job)).mpi, Some(job));
    }

    /// The state of a run that asked for no limit, without measuring.
    fn not_asked() -> CpuLatencyState {
        CpuLatencyState {
            requested_us: None,
            not_held: Some(NotHeld::NotAsked("a test".into())),
            wakeup: Err("not measured in a test".into()),
        }
    }
}
