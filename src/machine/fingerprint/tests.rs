use super::*;

/// An Intel server's first CPU, as `/proc/cpuinfo` lists it.
const INTEL: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\
model\t\t: 106\nmodel name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\nstepping\t: 6\n\
microcode\t: 0xd0003a5\ncpu MHz\t\t: 2000.000\n\nprocessor\t: 1\ncpu family\t: 6\n";

/// An arm64 host's: no family, model number or microcode.
const ARM: &str = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n\
CPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";

#[test]
fn the_signature_and_microcode_are_read_where_cpuinfo_has_them() {
    assert_eq!(
        cpu_signature(INTEL),
        Some(CpuSignature {
            family: 6,
            model: 106,
            stepping: Some(6)
        })
    );
    assert_eq!(microcode(INTEL).as_deref(), Some("0xd0003a5"));
    assert_eq!(cpu_signature(ARM), None);
    assert_eq!(microcode(ARM), None);
    // `model name` is not `model`.
    assert_eq!(
        cpu_signature("cpu family : 23\nmodel name : AMD EPYC\nmodel : 49\n")
            .map(|s| (s.model, s.stepping)),
        Some((49, None))
    );
}

#[test]
fn numa_nodes_and_the_command_line_are_read_under_the_root() {
    let tree = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let p = tree.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    let root = SysRoot::at(tree.path());
    assert_eq!(numa_nodes_in(&root), None);
    assert_eq!(kernel_cmdline_in(&root), None);
    w("sys/devices/system/node/online", "0-1\n");
    w(
        "proc/cmdline",
        "BOOT_IMAGE=/vmlinuz-6.1.0 root=UUID=1b2c ro quiet intel_idle.max_cstate=1\n",
    );
    assert_eq!(numa_nodes_in(&root), Some(vec![0, 1]));
    assert_eq!(
        kernel_cmdline_in(&root).as_deref(),
        Some("ro quiet intel_idle.max_cstate=1")
    );
}

#[test]
fn the_command_line_keeps_settings_and_drops_what_is_private_or_per_host() {
    let raw = "BOOT_IMAGE=(hd0,gpt2)/vmlinuz root=/dev/mapper/vg-root ro \
               resume=PARTUUID=ab-cd rd.luks.uuid=luks-1234 cryptdevice=/dev/sda2:c \
               ip=10.0.0.5::10.0.0.1:255.255.255.0:node07:eth0:none \
               rootpassword=hunter2 api_token=abc mitigations=off nosmt \
               isolcpus=2-3 nohz_full=2-3 console=ttyS0,115200 \
               acpi_osi=\"Windows 2020\" swap=LABEL=swap \x1b[31m";
    assert_eq!(
        sanitise_cmdline(raw),
        "ro mitigations=off nosmt isolcpus=2-3 nohz_full=2-3 console=ttyS0,115200 \
         acpi_osi=\"Windows 2020\" [31m"
    );
    // Init's arguments, after a bare `--`, are not the kernel's settings.
    assert_eq!(
        sanitise_cmdline("quiet rdinit=/init -- --addr 0.0.0.0:2024 --auth-required"),
        "quiet rdinit=/init"
    );
    assert_eq!(sanitise_cmdline(""), "");
    assert_eq!(sanitise_cmdline("  quiet   splash \n"), "quiet splash");
}
