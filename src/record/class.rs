//! A machine's class: the fields that should make two hosts alike (the CPU
//! model, the logical CPU count, the kernel release, the hypervisor), read
//! from a report's `environment`. Hosts of one class are expected to give
//! the same figures; `ipcmark fleet` compares hosts within a class, and
//! `ipcmark history --class` lists one class's runs. One definition, so
//! every reader groups hosts the same way.

use super::environment::EnvironmentRecord;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The fields of the machine that should make hosts alike.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MachineClass {
    /// The CPU model name, its runs of white space made one space.
    pub cpu_model: String,
    /// Logical CPUs online.
    pub logical_cpus: usize,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// Hypervisor ("none" on bare metal).
    pub virtualization: String,
}

impl MachineClass {
    /// The class of the machine `env` describes.
    pub fn of(env: &EnvironmentRecord) -> MachineClass {
        MachineClass {
            cpu_model: env
                .cpu_model
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            logical_cpus: env.logical_cpus,
            kernel: env.kernel.trim().to_string(),
            virtualization: env.virtualization.trim().to_string(),
        }
    }

    /// A short name for the class: 8 hex digits of a hash (64-bit FNV-1a,
    /// folded) of its fields, the same in every build and on every host, so
    /// that `fleet` can print it and `history --class` take it.
    pub fn id(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let text = format!(
            "{}\0{}\0{}\0{}",
            self.cpu_model, self.logical_cpus, self.kernel, self.virtualization
        );
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{:08x}", (h >> 32) ^ (h & 0xffff_ffff))
    }

    /// The class in words: `AMD EPYC · 2 CPUs · 6.1.0-18-amd64 · kvm`
    /// (`bare metal` where there is no hypervisor).
    pub fn label(&self) -> String {
        let virt = match self.virtualization.as_str() {
            "none" => "bare metal",
            v => v,
        };
        let cpus = match self.logical_cpus {
            1 => "1 CPU".to_string(),
            n => format!("{n} CPUs"),
        };
        format!("{} · {cpus} · {} · {virt}", self.cpu_model, self.kernel)
    }
}

impl fmt::Display for MachineClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
mod tests;
