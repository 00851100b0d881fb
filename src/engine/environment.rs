//! Facts about the machine that decide the figures, recorded with every run.

use std::fs;

/// What the machine is.
#[derive(Debug, Clone, serde::Serialize)]
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

fn cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn virtualization(cpuinfo: &str) -> String {
    let flagged = cpuinfo
        .lines()
        .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"));
    let vendor = read_trim("/sys/hypervisor/type")
        .or_else(|| read_trim("/sys/class/dmi/id/sys_vendor"))
        .filter(|v| !v.is_empty());
    match (flagged, vendor) {
        (true, Some(v)) => v,
        (true, None) => {
            // KVM guests expose kvm-clock or a KVM signature through paravirt features.
            if read_trim("/sys/devices/system/clocksource/clocksource0/available_clocksource")
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

/// Collects the environment of this run.
pub fn collect() -> Environment {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let (hostname, kernel, kernel_version, arch) = uname();
    Environment {
        hostname,
        kernel,
        kernel_version,
        arch,
        cpu_model: cpu_model(&cpuinfo),
        logical_cpus: std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .max(online_cpus()),
        allowed_cpus: crate::sys::sched::allowed_cpus().unwrap_or_default(),
        virtualization: virtualization(&cpuinfo),
        clocksource: read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_else(|| "unknown".into()),
        timer_slack_ns: crate::sys::sched::timer_slack().ok(),
    }
}

/// Number of CPUs online, from /sys ("0-1,4" style lists).
pub fn online_cpus() -> usize {
    read_trim("/sys/devices/system/cpu/online")
        .map(|s| parse_cpu_list(&s).len())
        .filter(|&n| n > 0)
        .unwrap_or_else(crate::sys::sched::configured_cpus)
}

/// Parses a kernel CPU list such as "0-3,6".
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<usize>().ok()),
        }
    }
    out
}

/// Reads a numeric kernel limit such as `/proc/sys/fs/mqueue/msgsize_max`.
pub fn kernel_limit(path: &str) -> Option<usize> {
    read_trim(path)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-1"), vec![0, 1]);
        assert_eq!(parse_cpu_list("0-2,5,7-8\n"), vec![0, 1, 2, 5, 7, 8]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
    }

    #[test]
    fn environment_names_the_kernel() {
        let env = collect();
        assert!(!env.kernel.is_empty() && env.kernel != "unknown");
        assert!(env.logical_cpus >= 1);
    }
}
