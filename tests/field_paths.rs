//! The JSON report of every mode keeps its fields: `ipcmark run --quick
//! --json` and one small run of each other mode (oneway, stream, rate, op,
//! event, periodic, score, a cost model, passes) must give every field path listed
//! in tests/fields/NAME.txt. Those lists were made by
//! tests/fields/regenerate.sh from the code before the run became one engine
//! pipeline: the paths present in every one of many runs, as root and as
//! nobody. New fields are allowed (the schema may only gain); a missing one
//! fails, naming it.
//!
//! A path is an object's keys joined by '.', an array's elements as '[]'
//! (`results[].latency_ns.p99`), one per node, containers included; the keys
//! of `environment.mitigations` are the kernel's names (data), not fields.

use crate::util::*;
use serde_json::Value;
use std::collections::BTreeSet;

/// Every field path of `v` (see the module's doc).
fn field_paths(v: &Value) -> BTreeSet<String> {
    fn walk(v: &Value, path: &str, out: &mut BTreeSet<String>) {
        if !path.is_empty() {
            out.insert(path.to_string());
        }
        match v {
            // Names the machine gives (its vulnerabilities, its interrupt
            // lines and softirqs) are data, not fields.
            Value::Object(map)
                if path != "environment.mitigations"
                    && !path.ends_with(".interrupts")
                    && !path.ends_with(".softirqs") =>
            {
                for (k, x) in map {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(x, &p, out);
                }
            }
            Value::Array(items) => {
                for x in items {
                    walk(x, &format!("{path}[]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    walk(v, "", &mut out);
    out
}

/// A checked-in list: the command's arguments (its `# args:` line) and its
/// paths.
fn read_list(name: &str) -> (Vec<String>, Vec<String>) {
    let file = format!("tests/fields/{name}.txt");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let args = text
        .lines()
        .find_map(|l| l.strip_prefix("# args: "))
        .unwrap_or_else(|| panic!("{file} has no '# args:' line"))
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let paths: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    assert!(paths.len() > 50, "{file}: only {} paths", paths.len());
    (args, paths)
}

/// Runs the command of list `name` and asserts its report has every path
/// of the list.
fn assert_keeps_fields(name: &str) {
    let _g = serial();
    let (args, listed) = read_list(name);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &argv).json().schema().run();
    let got = field_paths(&ran.report);
    // Warnings depend on the machine (the lists were made under a
    // hypervisor, which always warns): with none, their fields cannot show.
    let no_warnings = ran.report["warnings"]
        .as_array()
        .is_some_and(|w| w.is_empty());
    // Idle states are the machine's too: a guest without a cpuidle driver
    // (an Intel host's) lists none, so their fields cannot show there; the
    // unit test `an_idle_state_keeps_its_fields` proves them on any host.
    let idle = &ran.report["environment"]["cpu_idle"];
    let no_idle_states = idle["states"].as_array().is_none_or(|s| s.is_empty());
    // Without cpuidle in sysfs at all the record is null.
    let no_cpuidle = idle.is_null();
    if no_idle_states && listed.iter().any(|p| p.contains("cpu_idle.states[]")) {
        eprintln!(
            "{name}: this machine lists no CPU idle states; their fields are checked by \
             the unit test output::json::context::tests::an_idle_state_keeps_its_fields"
        );
    }
    let missing: Vec<&String> = listed
        .iter()
        .filter(|p| !got.contains(*p))
        .filter(|p| !(no_warnings && p.starts_with("warnings[]")))
        .filter(|p| !(no_idle_states && p.starts_with("environment.cpu_idle.states[]")))
        .filter(|p| !(no_cpuidle && p.starts_with("environment.cpu_idle.")))
        .collect();
    assert!(
        missing.is_empty(),
        "{argv:?} lost {} field(s) of tests/fields/{name}.txt: {missing:#?}\n\
         exit {:?}\nstderr:\n{}",
        missing.len(),
        ran.status,
        ran.stderr
    );
}

#[test]
fn run_quick_json_keeps_every_field_of_the_ipc_group() {
    assert_keeps_fields("ipc-quick");
}

#[test]
fn oneway_json_keeps_every_field() {
    assert_keeps_fields("oneway");
}

#[test]
fn stream_json_keeps_every_field() {
    assert_keeps_fields("stream");
}

#[test]
fn rate_json_keeps_every_field() {
    assert_keeps_fields("rate");
}

#[test]
fn op_json_keeps_every_field() {
    assert_keeps_fields("op");
}

#[test]
fn event_json_keeps_every_field() {
    assert_keeps_fields("event");
}

#[test]
fn periodic_json_keeps_every_field() {
    assert_keeps_fields("periodic");
}

#[test]
fn score_json_keeps_every_field() {
    assert_keeps_fields("score");
}

#[test]
fn cost_model_json_keeps_every_field() {
    assert_keeps_fields("cost-model");
}

#[test]
fn passes_json_keeps_every_field() {
    assert_keeps_fields("passes");
}

/// Every checked-in list has its test above, and the paths are computed as
/// regenerate.sh computes them.
#[test]
fn every_list_is_checked_and_paths_are_spelled_as_the_script_spells_them() {
    let mut lists: Vec<String> = std::fs::read_dir("tests/fields")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".txt")
                .map(str::to_string)
        })
        .collect();
    lists.sort();
    let tested = [
        "cost-model",
        "event",
        "ipc-quick",
        "load",
        "oneway",
        "op",
        "passes",
        "periodic",
        "rate",
        "score",
        "stream",
    ];
    assert_eq!(
        lists, tested,
        "a list without its test, or a test without its list"
    );
    let v = serde_json::json!({
        "a": {"b": [{"c": 1}, {"d": [2]}], "e": []},
        "environment": {"mitigations": {"l1tf": "Not affected"}, "arch": "x86_64"},
        "results": [{"load": {"cpus": [{"interrupts": {"LOC": 1}, "softirqs": {"TIMER": 2}}]}}],
    });
    let got: Vec<String> = field_paths(&v).into_iter().collect();
    assert_eq!(
        got,
        [
            "a",
            "a.b",
            "a.b[]",
            "a.b[].c",
            "a.b[].d",
            "a.b[].d[]",
            "a.e",
            "environment",
            "environment.arch",
            "environment.mitigations",
            "results",
            "results[]",
            "results[].load",
            "results[].load.cpus",
            "results[].load.cpus[]",
            "results[].load.cpus[].interrupts",
            "results[].load.cpus[].softirqs",
        ]
    );
}

#[test]
fn load_json_keeps_every_field() {
    assert_keeps_fields("load");
}
