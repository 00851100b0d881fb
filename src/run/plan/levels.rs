//! The load levels of a run: one (the `--load` stated, or none), or with
//! `--load-sweep` the base load then one level per interrupt frequency,
//! each adding an interrupt source; a load study's `once` benchmarks are
//! measured at its first level only.

use super::RunPlan;
use crate::engine::os::load::LoadSpec;
use crate::engine::run::session::Level;
use crate::presets::LoadStudy;
use crate::record::load::LoadSettingsRecord;
use crate::run::values as parse;

/// Makes `plan`'s levels a sweep's (`--load-sweep`, a load `study`): the
/// base load first, named "no load" (or "no irq" over an application
/// load), then "irq F Hz" for each frequency; the report's
/// `settings.load_sweep` lists them. Without a sweep the plan keeps its one level.
pub fn sweep(plan: &mut RunPlan, sweep: Option<&parse::LoadSweep>, study: Option<&LoadStudy>) {
    let Some(sweep) = sweep else {
        return;
    };
    let base = plan.session.levels[0]
        .load
        .clone()
        .expect("a sweep's plan has a base load (from_request)");
    let mut loads = vec![(
        if base.specs.is_empty() {
            "no load".to_string()
        } else {
            "no irq".to_string()
        },
        base.clone(),
    )];
    for &f in &sweep.0 {
        let mut level = base.clone();
        level.specs.push(LoadSpec::Irq {
            frequency_hz: f,
            work: parse::DEFAULT_IRQ_WORK,
        });
        loads.push((format!("irq {f} Hz"), level));
    }
    let items = &plan.session.items;
    plan.session.levels = loads
        .iter()
        .enumerate()
        .map(|(k, (label, load))| Level {
            label: label.clone(),
            load: Some(load.clone()),
            items: (0..items.len())
                .filter(|&i| k == 0 || study.is_none_or(|st| !st.once.contains(&items[i].0.id())))
                .collect(),
            placement: None,
        })
        .collect();
    plan.settings.load_sweep = Some(
        loads
            .iter()
            .map(|(label, load)| LoadSettingsRecord {
                label: Some(label.clone()),
                ..load.into()
            })
            .collect(),
    );
}
