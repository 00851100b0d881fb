use super::*;
use crate::record::RunRecord;

fn environment() -> EnvironmentRecord {
    let text = include_str!("../../../tests/reports/ipc-quick.json");
    RunRecord::parse(text).unwrap().header.environment
}

#[test]
fn a_class_is_its_four_fields_and_nothing_else() {
    let env = environment();
    let class = MachineClass::of(&env);
    let mut other = env.clone();
    other.hostname = "another".into();
    other.frequency_governor = Some("powersave".into());
    other.cpu_mhz = Some(1.0);
    other.cpu_model = format!("  {}  ", env.cpu_model.replace(' ', "   "));
    assert_eq!(MachineClass::of(&other), class, "host, governor, spaces");
    assert_eq!(MachineClass::of(&other).id(), class.id());
    for change in [
        |e: &mut EnvironmentRecord| e.cpu_model.push_str(" v2"),
        |e: &mut EnvironmentRecord| e.logical_cpus += 2,
        |e: &mut EnvironmentRecord| e.kernel.push_str("-rt"),
        |e: &mut EnvironmentRecord| e.virtualization = "none".into(),
    ] {
        let mut e = env.clone();
        change(&mut e);
        assert_ne!(MachineClass::of(&e), class);
        assert_ne!(MachineClass::of(&e).id(), class.id());
    }
}

#[test]
fn the_id_is_stable_and_the_label_reads() {
    let class = MachineClass {
        cpu_model: "AMD EPYC".into(),
        logical_cpus: 2,
        kernel: "6.1.0-18-amd64".into(),
        virtualization: "kvm".into(),
    };
    // The id is part of the interface (`history --class ID`): it never
    // changes for the same fields.
    assert_eq!(class.id(), "61d63ae2");
    assert_eq!(class.id().len(), 8);
    assert_eq!(class.label(), "AMD EPYC · 2 CPUs · 6.1.0-18-amd64 · kvm");
    let bare = MachineClass {
        logical_cpus: 1,
        virtualization: "none".into(),
        ..class
    };
    assert_eq!(
        bare.to_string(),
        "AMD EPYC · 1 CPU · 6.1.0-18-amd64 · bare metal"
    );
}
