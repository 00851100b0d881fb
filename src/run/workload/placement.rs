//! Where a workload's processes run: the `--place` placements (explicit
//! CPU lists or the named ones, one configuration each) and the `--migrate`
//! plans, parsed and checked against the CPUs ipcmark may use before
//! anything is forked. Apart from the command so that `--engine mpi`'s rank
//! placements share the splitting and the number lists.

use crate::engine::os::group::Migration;

/// One placement of every process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Placement {
    /// Its name in the tables: `packed`, `spread`, or the CPU list.
    pub(crate) name: String,
    /// Each process's CPU, in role order (`None`: free).
    pub(crate) cpus: Vec<Option<usize>>,
}

fn show_cpus(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn check_cpu(cpu: usize, allowed: &[usize], what: &str) -> Result<usize, String> {
    if allowed.contains(&cpu) {
        Ok(cpu)
    } else {
        Err(format!(
            "{what}: CPU {cpu} does not exist or is not available to ipcmark; available CPUs: {}",
            show_cpus(allowed)
        ))
    }
}

/// The placements of every `--place` value, trimmed: ';' separates
/// placements within one value, and `--place` may be repeated. Shared by
/// the local placements (CPUs) and `--engine mpi`'s (ranks).
pub(crate) fn place_parts(values: &[String]) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    for value in values {
        for part in value.split(';').map(str::trim) {
            if part.is_empty() {
                return Err(format!(
                    "--place '{value}': empty placement; give one before and after every ';'"
                ));
            }
            out.push(part);
        }
    }
    Ok(out)
}

/// The numbers of a placement whose comma-separated items are all numbers
/// (`item` names what they number in the error: "CPU", "rank"); `None` if
/// any item is not a number.
pub(crate) fn number_list(part: &str, item: &str) -> Option<Result<Vec<usize>, String>> {
    let items: Vec<&str> = part.split(',').map(str::trim).collect();
    let numeric = |i: &&str| !i.is_empty() && i.chars().all(|c| c.is_ascii_digit());
    if !items.iter().all(numeric) {
        return None;
    }
    Some(
        items
            .iter()
            .map(|i| {
                i.parse::<usize>()
                    .map_err(|_| format!("--place '{part}': invalid {item} '{i}'"))
            })
            .collect(),
    )
}

/// Parses every `--place` value. A value whose items are all numbers is one
/// explicit placement (one CPU per process); otherwise its comma-separated
/// items are named placements, each a configuration. ';' separates placements
/// within one value.
pub(crate) fn placements(
    values: &[String],
    processes: usize,
    allowed: &[usize],
) -> Result<Vec<Placement>, String> {
    let default = ["packed".to_string()];
    let values = if values.is_empty() {
        &default[..]
    } else {
        values
    };
    let mut out = Vec::new();
    for part in place_parts(values)? {
        let what = format!("--place '{part}'");
        if let Some(cpus) = number_list(part, "CPU") {
            let cpus = cpus?;
            if cpus.len() != processes {
                return Err(format!(
                    "{what}: gives {} CPU(s) for {processes} processes; an explicit placement names one CPU per process",
                    cpus.len()
                ));
            }
            let cpus = cpus
                .into_iter()
                .map(|cpu| check_cpu(cpu, allowed, &what).map(Some))
                .collect::<Result<_, _>>()?;
            out.push(Placement {
                name: part.to_string(),
                cpus,
            });
            continue;
        }
        let items: Vec<&str> = part.split(',').map(str::trim).collect();
        if items
            .iter()
            .any(|i| !i.is_empty() && i.chars().all(|c| c.is_ascii_digit()))
        {
            return Err(format!(
                "{what}: mixes CPU numbers and named placements; give an explicit placement (one CPU per process) or names separated by commas"
            ));
        }
        for item in items {
            let cpus = match item {
                "packed" => vec![Some(allowed[0]); processes],
                "spread" => (0..processes)
                    .map(|i| Some(allowed[i % allowed.len()]))
                    .collect(),
                "free" => vec![None; processes],
                _ => {
                    return Err(format!(
                        "{what}: unknown placement '{item}'; use packed, spread, free or one CPU per process such as 0,0,1"
                    ));
                }
            };
            out.push(Placement {
                name: item.to_string(),
                cpus,
            });
        }
    }
    Ok(out)
}

/// Parses every `--migrate` value into one plan per process.
pub(crate) fn migrations(
    values: &[String],
    roles: &[String],
    allowed: &[usize],
) -> Result<Vec<Option<Migration>>, String> {
    let mut plans = vec![None; roles.len()];
    for value in values {
        let (p, plan) = migration(value, roles, allowed)?;
        if plans[p].is_some() {
            return Err(format!(
                "--migrate '{value}': {} already has a migration",
                roles[p]
            ));
        }
        plans[p] = Some(plan);
    }
    Ok(plans)
}

fn migration(s: &str, roles: &[String], allowed: &[usize]) -> Result<(usize, Migration), String> {
    let what = format!("--migrate '{s}'");
    let shape = || format!("{what}: expected P:every=K:cpus=A,B or P:at=K:cpu=C");
    let parts: Vec<&str> = s.split(':').map(str::trim).collect();
    let [who, when, whereto] = parts[..] else {
        return Err(shape());
    };
    let process = match who.parse::<usize>() {
        Ok(n) if (1..=roles.len()).contains(&n) => n - 1,
        Ok(n) => {
            return Err(format!(
                "{what}: no process {n}; processes are numbered 1 to {}",
                roles.len()
            ));
        }
        Err(_) => roles
            .iter()
            .position(|r| r.eq_ignore_ascii_case(who))
            .ok_or_else(|| {
                format!(
                    "{what}: no process '{who}'; give a number from 1 to {} or a role ({})",
                    roles.len(),
                    roles.join(", ")
                )
            })?,
    };
    let (when_key, k) = when.split_once('=').ok_or_else(shape)?;
    let k: u64 = k.parse().ok().filter(|&k| k >= 1).ok_or_else(|| {
        format!("{what}: '{when}' needs a whole number of operations, at least 1")
    })?;
    let (where_key, cpus) = whereto.split_once('=').ok_or_else(shape)?;
    let cpus: Vec<usize> = cpus
        .split(',')
        .map(|c| {
            c.trim()
                .parse::<usize>()
                .map_err(|_| format!("{what}: invalid CPU '{}'", c.trim()))
                .and_then(|c| check_cpu(c, allowed, &what))
        })
        .collect::<Result<_, _>>()?;
    let plan = match (when_key, where_key, &cpus[..]) {
        ("every", "cpus", &[a, b]) if a != b => Migration::Every {
            ops: k,
            cpus: [a, b],
        },
        ("every", "cpus", [_, _]) => {
            return Err(format!("{what}: the two CPUs must differ"));
        }
        ("at", "cpu", &[c]) => Migration::At { op: k, cpu: c },
        _ => return Err(shape()),
    };
    Ok((process, plan))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("philosopher {i}")).collect()
    }

    #[test]
    fn explicit_placement_is_one_configuration_and_names_are_several() {
        let all = [0, 1];
        let p = placements(&["0,0,1,1,1".into()], 5, &all).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].cpus, vec![Some(0), Some(0), Some(1), Some(1), Some(1)]);
        let p = placements(&["packed,spread".into()], 5, &all).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].cpus, vec![Some(0); 5]);
        assert_eq!(p[1].cpus, vec![Some(0), Some(1), Some(0), Some(1), Some(0)]);
        let p = placements(&["0,1;1,0".into(), "free".into()], 2, &all).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[2].cpus, vec![None, None]);
        assert_eq!(placements(&[], 2, &all).unwrap()[0].name, "packed");
    }

    #[test]
    fn bad_placements_say_why() {
        let all = [0, 1];
        let err = |v: &str| placements(&[v.into()], 5, &all).unwrap_err();
        assert!(err("0,0,1").contains("3 CPU(s) for 5 processes"));
        assert!(err("0,0,0,0,7").contains("CPU 7 does not exist"));
        assert!(err("packed,0").contains("mixes"));
        assert!(err("bogus").contains("unknown placement 'bogus'"));
        assert!(err("packed,,spread").contains("unknown placement ''"));
        assert!(err(";").contains("empty placement"));
    }

    #[test]
    fn migrations_parse_both_forms_and_reject_malformed() {
        let all = [0, 1];
        let r = roles(5);
        let plans = migrations(
            &["2:every=10:cpus=0,1".into(), "4:at=1:cpu=1".into()],
            &r,
            &all,
        )
        .unwrap();
        assert_eq!(
            plans[1],
            Some(Migration::Every {
                ops: 10,
                cpus: [0, 1]
            })
        );
        assert_eq!(plans[3], Some(Migration::At { op: 1, cpu: 1 }));
        assert_eq!(plans.iter().flatten().count(), 2);
        let gc = vec!["generator".to_string(), "calculator".to_string()];
        let plans = migrations(&["Calculator:at=500:cpu=0".into()], &gc, &all).unwrap();
        assert_eq!(plans[1], Some(Migration::At { op: 500, cpu: 0 }));
        for bad in [
            "x",
            "2:every=10",
            "9:at=1:cpu=0",
            "0:at=1:cpu=0",
            "2:at=0:cpu=0",
            "2:every=0:cpus=0,1",
            "2:every=5:cpus=0,0",
            "2:every=5:cpus=0",
            "2:every=5:cpu=1",
            "2:at=5:cpus=0,1",
            "2:at=5:cpu=8",
            "2:sometimes=5:cpu=1",
            "2:at=5:cpu=1:extra",
        ] {
            assert!(migrations(&[bad.into()], &r, &all).is_err(), "{bad}");
        }
        assert!(
            migrations(&["2:at=1:cpu=0".into(), "2:at=3:cpu=1".into()], &r, &all)
                .unwrap_err()
                .contains("already")
        );
    }
}
