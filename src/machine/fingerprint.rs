//! What tells one host from another of the same kind, beyond what
//! `environment` always recorded: the CPU's signature (family, model
//! number, stepping) and microcode revision from `/proc/cpuinfo`, the NUMA
//! nodes online and the kernel's command line, sanitised. `ipcmark fleet`
//! compares these across hosts; every reader goes through [`SysRoot`], so
//! each is tested on fixture trees.

use super::cpu_list::parse_cpu_list;
use super::sysroot::SysRoot;

/// The CPU's family, model number and stepping (x86's signature).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuSignature {
    /// `cpu family`.
    pub family: u32,
    /// `model` (the number; the name is `model name`).
    pub model: u32,
    /// `stepping`, where reported.
    pub stepping: Option<u32>,
}

/// The value of the first line of `cpuinfo` whose key is `key` (the
/// first CPU's: every CPU of a machine reports the same).
fn field<'a>(cpuinfo: &'a str, key: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// The signature `cpuinfo` reports; `None` without a family and model
/// number (arm64 reports its implementer and part instead).
pub fn cpu_signature(cpuinfo: &str) -> Option<CpuSignature> {
    let number = |key| field(cpuinfo, key).and_then(|v| v.parse::<u32>().ok());
    Some(CpuSignature {
        family: number("cpu family")?,
        model: number("model")?,
        stepping: number("stepping"),
    })
}

/// The microcode revision `cpuinfo` reports (`0xd0003a5`), where it does.
pub fn microcode(cpuinfo: &str) -> Option<String> {
    field(cpuinfo, "microcode")
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// The NUMA nodes online, read under `root`; `None` where the kernel lists
/// none (built without NUMA).
pub fn numa_nodes_in(root: &SysRoot) -> Option<Vec<usize>> {
    let nodes = parse_cpu_list(&root.read("/sys/devices/system/node/online")?);
    (!nodes.is_empty()).then_some(nodes)
}

/// The kernel's command line read under `root`, sanitised
/// ([`sanitise_cmdline`]).
pub fn kernel_cmdline_in(root: &SysRoot) -> Option<String> {
    root.read_raw("/proc/cmdline")
        .map(|raw| sanitise_cmdline(&raw))
}

/// Keys whose value names this host's disks, image, address or name:
/// they differ from host to host by design, say nothing about how the
/// host measures, and may be private.
const HOST_KEYS: &[&str] = &[
    "BOOT_IMAGE",
    "initrd",
    "root",
    "rootflags",
    "resume",
    "resume_offset",
    "cryptdevice",
    "cryptkey",
    "ip",
    "nfsroot",
    "netroot",
    "hostname",
    "systemd.hostname",
    "systemd.machine_id",
    "rd.lvm.lv",
    "rd.lvm.vg",
    "rd.md.uuid",
    "rd.dm.uuid",
    "ifname",
    "bootif",
    "BOOTIF",
];

/// Parts of a key that mark a secret (a password, a token, a key).
const SECRET_PARTS: &[&str] = &["pass", "secret", "token", "key", "cred", "luks"];

/// The kernel's command line with what is private or host-specific left
/// out, tokens in their order, one space between: a token whose key is one
/// of [`HOST_KEYS`] or holds a part of [`SECRET_PARTS`], or whose value
/// names a disk by identity (`UUID=`, `PARTUUID=`, `LABEL=`, `/dev/disk/by-`),
/// is dropped; so is everything after a bare `--` (the arguments the kernel
/// hands to init, not its own settings: they may name addresses and
/// ports); characters outside printable ASCII are dropped.
pub fn sanitise_cmdline(raw: &str) -> String {
    split_tokens(raw)
        .into_iter()
        .take_while(|t| t != "--")
        .map(|t| {
            t.chars()
                .filter(|c| c.is_ascii_graphic() || *c == ' ')
                .collect::<String>()
        })
        .filter(|t| !t.is_empty() && keep(t))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `token` may be kept ([`sanitise_cmdline`]).
fn keep(token: &str) -> bool {
    let (key, value) = token.split_once('=').unwrap_or((token, ""));
    let lower = key.to_ascii_lowercase();
    let host = HOST_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key));
    let secret = SECRET_PARTS.iter().any(|p| lower.contains(p));
    let value = value.to_ascii_uppercase();
    let disk = [
        "UUID=",
        "PARTUUID=",
        "LABEL=",
        "PARTLABEL=",
        "/DEV/DISK/BY-",
    ]
    .iter()
    .any(|p| value.contains(p));
    !(host || secret || disk)
}

/// The command line's tokens: split at white space outside double quotes
/// (`acpi_osi="Windows 2020"` is one token), the quotes kept.
fn split_tokens(raw: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in raw.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            c if c.is_whitespace() && !quoted => {
                if !current.is_empty() {
                    tokens.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

#[cfg(test)]
mod tests;
