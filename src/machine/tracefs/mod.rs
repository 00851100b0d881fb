//! A private tracefs instance (`instances/ipcmark-<pid>-<pidns>-<start>-<random>-trace-<n>`,
//! named as every object ipcmark makes: `engine::os::objects`) for `ipcmark
//! explain`: tracefs mounted where it is not (and unmounted again), the
//! instance made with CLOCK_MONOTONIC timestamps (`trace_clock` mono, the
//! clock the client stamps its round trips with), its CPUs limited to the
//! measured ones (`tracing_cpumask`: every task's events there, the idle
//! task's and interrupts' included), the events that bound a round trip's
//! parts enabled where this kernel has them, and its binary per-CPU buffers
//! read after the pass ([`decode`]). The instance goes on every path: when
//! dropped (normal end, error, a stop request), and after a kill -9 by
//! the next `explain` or `ipcmark clean` ([`clean_stale`]), which remove an
//! instance only once its owner is proven gone: tracefs is one for the
//! whole machine, seen alike from every PID namespace, so a pid alone
//! (two explains that are each PID 1 in their own namespace) names nobody.

pub mod decode;

use crate::engine::os::objects::{CleanReport, ObjectNamer, Verdict, judge_name};
use decode::{Formats, TraceEvent};
use std::fs;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Where tracefs is mounted.
pub const TRACEFS: &str = "/sys/kernel/tracing";
/// The prefix of ipcmark's instance names (the older form, by pid alone:
/// `ipcmark-<pid>`, is ipcmark's too, but proves no owner gone).
pub const PREFIX: &str = "ipcmark-";

/// The events an anatomy needs, by system and name, each enabled where the
/// kernel has it; the `irq_vectors` and `ipi` systems are added whole
/// where present (IPIs and x86's timer and reschedule vectors are not in `irq`).
pub const EVENTS: &[(&str, &str)] = &[
    ("sched", "sched_waking"),
    ("sched", "sched_wakeup"),
    ("sched", "sched_switch"),
    ("sched", "sched_process_fork"),
    ("raw_syscalls", "sys_enter"),
    ("raw_syscalls", "sys_exit"),
    ("irq", "irq_handler_entry"),
    ("irq", "irq_handler_exit"),
    ("irq", "softirq_entry"),
    ("irq", "softirq_exit"),
    ("power", "cpu_idle"),
];

/// Systems enabled whole where present.
pub const WHOLE_SYSTEMS: &[&str] = &["ipi", "irq_vectors"];

/// A live instance. Dropping it disables tracing and its events, removes
/// it, and unmounts tracefs if this process mounted it.
pub struct Instance {
    dir: PathBuf,
    mounted_here: bool,
    cpus: Vec<usize>,
    formats: Formats,
    /// The events enabled, as `system:name`.
    pub events: Vec<String>,
}

/// What a pass left in the instance.
pub struct Trace {
    /// Every event, ordered by time.
    pub events: Vec<TraceEvent>,
    /// Events the kernel lost (the CPUs' overruns and drops, and pages that
    /// say so).
    pub lost: u64,
    /// The words its events name (tasks switched in, interrupts).
    pub labels: decode::Labels,
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("cannot write {value:?} to {}: {e}", path.display()))
}

/// Whether tracefs is mounted at [`TRACEFS`] (its `instances` directory is there).
pub fn mounted() -> bool {
    Path::new(TRACEFS).join("instances").is_dir()
}

/// The cpumask file's form of `cpus` (hex words of 32 bits, comma-separated).
fn cpumask(cpus: &[usize]) -> String {
    let top = cpus.iter().max().copied().unwrap_or(0);
    let words = top / 32 + 1;
    let mut mask = vec![0u32; words];
    for &c in cpus {
        mask[c / 32] |= 1 << (c % 32);
    }
    mask.iter()
        .rev()
        .map(|w| format!("{w:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

impl Instance {
    /// Makes the instance for tracing `cpus` with `buffer_kb` of buffer per
    /// CPU, mounting tracefs first where it is not; enables the events but
    /// leaves tracing off until [`Instance::start`].
    pub fn create(cpus: &[usize], buffer_kb: usize) -> Result<Instance, String> {
        let mounted_here = mount_if_needed()?;
        // A killed explain's buffers (tens of MB, tracing on) go now, not
        // when somebody thinks of `ipcmark clean`; what cannot be proven
        // abandoned stays, and a failure to remove one is no reason not to trace.
        clean_stale(&mut CleanReport::default());
        let instances = Path::new(TRACEFS).join("instances");
        let made =
            ObjectNamer::new().create_named("trace", |name| fs::create_dir(instances.join(name)));
        let dir = match made {
            Ok((name, ())) => instances.join(name),
            Err(e) => {
                if mounted_here {
                    unmount();
                }
                return Err(format!(
                    "cannot make a tracefs instance in {}: {e}",
                    instances.display()
                ));
            }
        };
        // From here on, dropping removes it.
        let mut inst = Instance {
            dir,
            mounted_here,
            cpus: cpus.to_vec(),
            formats: Formats::default(),
            events: Vec::new(),
        };
        inst.set_up(buffer_kb)?;
        Ok(inst)
    }

    /// The instance's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn set_up(&mut self, buffer_kb: usize) -> Result<(), String> {
        write(&self.dir.join("tracing_on"), "0")?;
        write(&self.dir.join("trace_clock"), "mono")?;
        write(&self.dir.join("buffer_size_kb"), &buffer_kb.to_string())?;
        write(&self.dir.join("tracing_cpumask"), &cpumask(&self.cpus))?;
        let events = self.dir.join("events");
        let mut wanted: Vec<(String, String)> = EVENTS
            .iter()
            .map(|(s, n)| (s.to_string(), n.to_string()))
            .collect();
        for system in WHOLE_SYSTEMS {
            let mut names: Vec<String> = fs::read_dir(events.join(system))
                .map(|d| {
                    d.flatten()
                        .filter(|e| e.path().is_dir())
                        .filter_map(|e| e.file_name().into_string().ok())
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            // Interrupt vectors are timed by their entry/exit pairs; the
            // rest of irq_vectors is vector bookkeeping, not interference.
            names.retain(|n| {
                *system != "irq_vectors" || n.ends_with("_entry") || n.ends_with("_exit")
            });
            wanted.extend(names.into_iter().map(|n| (system.to_string(), n)));
        }
        for (system, name) in wanted {
            let dir = events.join(&system).join(&name);
            let Ok(format) = fs::read_to_string(dir.join("format")) else {
                continue;
            };
            self.formats.add(&system, &name, &format)?;
            write(&dir.join("enable"), "1")?;
            self.events.push(format!("{system}:{name}"));
        }
        for must in ["sched:sched_waking", "sched:sched_switch"] {
            if !self.events.iter().any(|e| e == must) {
                return Err(format!("this kernel has no {must} tracepoint"));
            }
        }
        Ok(())
    }

    /// Empties the buffers and turns tracing on, the system calls of
    /// `tasks` (thread ids) only: the traced CPUs' other tasks' calls are no
    /// part of a round trip and would fill the buffers (their switches and
    /// the interrupts are kept: they are).
    pub fn start(&self, tasks: &[i32]) -> Result<(), String> {
        let filter = tasks
            .iter()
            .map(|t| format!("common_pid == {t}"))
            .collect::<Vec<_>>()
            .join(" || ");
        for e in ["sys_enter", "sys_exit"] {
            let path = self.dir.join("events/raw_syscalls").join(e).join("filter");
            if !filter.is_empty() && path.exists() {
                write(&path, &filter)?;
            }
        }
        write(&self.dir.join("trace"), "")?;
        write(&self.dir.join("tracing_on"), "1")
    }

    /// Turns tracing off.
    pub fn stop(&self) -> Result<(), String> {
        write(&self.dir.join("tracing_on"), "0")
    }

    /// Copies what the buffers hold as the kernel prints it (the
    /// instance's `trace` file, which reading leaves in place) to `to`.
    pub fn save_text(&self, to: &Path) -> Result<(), String> {
        let from = self.dir.join("trace");
        let mut src =
            fs::File::open(&from).map_err(|e| format!("cannot open {}: {e}", from.display()))?;
        let mut dst =
            fs::File::create(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
        std::io::copy(&mut src, &mut dst)
            .map(|_| ())
            .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
    }

    /// Reads and decodes what the traced CPUs' buffers hold, and counts what
    /// was lost.
    pub fn read(&mut self) -> Result<Trace, String> {
        let mut events = Vec::new();
        let mut lost = 0;
        for &cpu in &self.cpus {
            let per = self.dir.join("per_cpu").join(format!("cpu{cpu}"));
            if let Ok(stats) = fs::read_to_string(per.join("stats")) {
                lost += decode::lost_in_stats(&stats);
            }
            let path = per.join("trace_pipe_raw");
            let mut file = fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&path)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            let mut page = vec![0u8; self.page_size()];
            loop {
                match file.read(&mut page) {
                    Ok(0) => break,
                    Ok(n) => {
                        let o =
                            decode::decode_page(&page[..n], cpu, &mut self.formats, &mut events);
                        lost += o.missed;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
                }
            }
        }
        events.sort_by_key(|e| e.ts_ns);
        Ok(Trace {
            events,
            lost,
            labels: self.formats.labels.clone(),
        })
    }
}

impl Instance {
    /// The ring buffer's page: the data field's end in `events/header_page`
    /// (a read of `trace_pipe_raw` gives one page at most).
    fn page_size(&self) -> usize {
        fs::read_to_string(self.dir.join("events/header_page"))
            .ok()
            .and_then(|t| {
                let line = t.lines().find(|l| l.contains(" data;"))?;
                let num = |key: &str| -> Option<usize> {
                    line.split(';')
                        .find_map(|p| p.trim().strip_prefix(key)?.parse().ok())
                };
                Some(num("offset:")? + num("size:")?)
            })
            .unwrap_or(4096)
    }
}

/// tracefs held mounted for a while: unmounted again when dropped if it
/// was mounted by [`hold_mounted`].
pub struct HeldMount {
    mounted_here: bool,
}

/// Mounts tracefs at [`TRACEFS`] where it is not, for work whose tracing
/// runs in processes that cannot mount it themselves (a child in a user
/// namespace, or under a seccomp filter); the guard unmounts it again.
pub fn hold_mounted() -> Result<HeldMount, String> {
    Ok(HeldMount {
        mounted_here: mount_if_needed()?,
    })
}

/// Mounts tracefs at [`TRACEFS`] where it is not; whether it mounted it.
fn mount_if_needed() -> Result<bool, String> {
    if mounted() {
        return Ok(false);
    }
    let status = std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev", TRACEFS])
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run mount for tracefs: {e}"))?;
    if !status.success() || !mounted() {
        return Err(format!(
            "tracefs is not mounted at {TRACEFS} and mounting it failed (root needed)"
        ));
    }
    Ok(true)
}

impl Drop for HeldMount {
    fn drop(&mut self) {
        if self.mounted_here {
            unmount();
        }
    }
}

fn unmount() {
    let _ = std::process::Command::new("umount")
        .arg(TRACEFS)
        .stderr(std::process::Stdio::null())
        .status();
}

/// Turns `dir`'s tracing and events off and removes it.
fn remove(dir: &Path) -> Result<(), String> {
    let _ = fs::write(dir.join("tracing_on"), "0");
    let _ = fs::write(dir.join("events/enable"), "0");
    fs::remove_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Err(e) = remove(&self.dir) {
            crate::engine::os::objects::note_left_behind(format!("tracefs instance {e}"));
        } else if self.mounted_here {
            unmount();
        }
    }
}

/// Removes every ipcmark instance whose owner is proven gone (a run
/// killed with -9), into `report`: removed, live (its run is going), kept
/// (why its owner cannot be proven gone: another PID namespace, a name of
/// the older pid-only form) or failed. Writes nothing into an instance it
/// has not judged abandoned. Mounts nothing: with tracefs not mounted there
/// is no instance.
pub fn clean_stale(report: &mut CleanReport) {
    let Ok(entries) = fs::read_dir(Path::new(TRACEFS).join("instances")) else {
        return;
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(PREFIX))
        .collect();
    names.sort();
    for name in names {
        let label = format!("tracefs instance {name}");
        match judge_name(&name) {
            None => continue,
            Some(Verdict::Live) => report.live.push(label),
            Some(Verdict::Unproven(why)) => report.kept.push(format!("{label} ({why})")),
            Some(Verdict::Gone) => {
                match remove(&Path::new(TRACEFS).join("instances").join(&name)) {
                    Ok(()) => report.removed.push(label),
                    Err(e) => report.failed.push(format!("tracefs instance {e}")),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpumask_names_each_cpu_in_32_bit_words() {
        assert_eq!(cpumask(&[0, 1]), "00000003");
        assert_eq!(cpumask(&[1]), "00000002");
        assert_eq!(cpumask(&[0, 33]), "00000002,00000001");
    }
}
