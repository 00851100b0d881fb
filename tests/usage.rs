//! Using the command line: bad input exits 2 with one clear line and writes
//! nothing; `list` names every mechanism and survives a closed pipe; the
//! README documents every mechanism.

use crate::util::*;
use std::time::Duration;

#[test]
fn bad_input_exits_2_with_one_clear_line_and_writes_nothing() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("never.json");
    let j = json.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "no-such-thing", "--json", j],
            "unknown benchmark or group 'no-such-thing'",
        ),
        (
            &["run", "--sizes", "12Q", "--json", j],
            "invalid size '12Q'",
        ),
        (
            &["run", "--sizes", "0", "--json", j],
            "size '0' is out of range",
        ),
        (
            &["run", "--sizes", "17M", "--json", j],
            "size '17M' is out of range",
        ),
        (&["run", "--sizes", "1,,2", "--json", j], "empty entry"),
        (
            &["run", "--cpus", "999", "--json", j],
            "CPU 999 does not exist",
        ),
        (&["run", "--cpus", "0,x", "--json", j], "invalid CPU 'x'"),
        (&["run", "--rt", "150", "--json", j], "150"),
        (&["run", "--rt", "0", "--json", j], "0"),
        (
            &["run", "--timeout", "5", "--json", j],
            "invalid duration '5'",
        ),
        (&["run", "--peer", "fiber", "--json", j], "fiber"),
        (
            &["run", "--precision", "0%", "--json", j],
            "precision '0%' is out of range",
        ),
        (
            &["run", "--precision", "2", "--json", j],
            "precision '2' is out of range",
        ),
        (
            &["run", "--precision", "fine", "--json", j],
            "invalid precision 'fine'",
        ),
        (
            &["run", "--max-time", "soon", "--json", j],
            "invalid duration 'soon'",
        ),
        (&["run", "--passes", "0", "--json", j], "0 is not in 1..=20"),
        (
            &["run", "--passes", "21", "--json", j],
            "21 is not in 1..=20",
        ),
        (&["run", "--passes", "x", "--json", j], "'x' for '--passes"),
        (
            &["run", "--cpu-latency", "low", "--json", j],
            "invalid CPU latency 'low'",
        ),
        (
            &["run", "--cpu-latency", "2000000", "--json", j],
            "invalid CPU latency '2000000'",
        ),
        (
            &["run", "--json", "/no/such/dir/out.json"],
            "does not exist",
        ),
        (&["run", "--bogus"], "--bogus"),
        (&["frobnicate"], "frobnicate"),
    ];
    refused_all(&sb, cases, Some(&json));
}

#[test]
fn list_names_every_mechanism_with_limits_and_survives_a_closed_pipe() {
    let ids = group_ids("ipc");
    for id in ["pipe", "pipe-self", "unix-stream"] {
        assert!(ids.iter().any(|i| i == id), "{id} missing from {ids:?}");
    }
    let sb = Sandbox::new();
    let out = sb.run(&["list"], Duration::from_secs(10));
    assert!(
        stdout(&out).contains("fs.pipe-max-size"),
        "limits shown: {}",
        stdout(&out)
    );
    // `ipcmark list | head -1`: stdout closed early must not be an error.
    let mut child = sb.cmd(&["list"]).spawn().unwrap();
    drop(child.stdout.take());
    let out = wait_with_deadline(child, Duration::from_secs(10));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn readme_documents_every_mechanism() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    for id in group_ids("ipc") {
        assert!(
            readme.contains(&format!("| `{id}` |")),
            "README.md has no row for {id}"
        );
    }
}

/// `ipcmark COMMAND --help`, split into its sections: each heading (a line
/// at the margin ending in ':') with the long flags defined under it, in
/// order. A definition is a line indented as clap indents an option
/// (`  -h, --help`, `      --sizes <LIST>`); the help text under it is
/// indented further, so a flag it mentions is not counted.
fn help_sections(command: &str) -> Vec<(String, Vec<String>)> {
    let sb = Sandbox::new();
    let out = sb.run(&[command, "--help"], Duration::from_secs(20));
    assert!(out.status.success(), "{command} --help: {}", stderr(&out));
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in stdout(&out).lines() {
        if let Some(heading) = line.strip_suffix(':').filter(|h| !h.starts_with(' ')) {
            sections.push((heading.to_string(), Vec::new()));
            continue;
        }
        let def = line.strip_prefix("      --").or_else(|| {
            line.strip_prefix("  -")
                .and_then(|l| l.split_once(", --"))
                .map(|(_, l)| l)
        });
        if let (Some(def), Some((_, flags))) = (def, sections.last_mut()) {
            let name: String = def
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            flags.push(format!("--{name}"));
        }
    }
    sections
}

/// The heading `flag` is listed under, asserting it is listed exactly once.
fn heading_of<'a>(sections: &'a [(String, Vec<String>)], flag: &str) -> &'a str {
    let under: Vec<&str> = sections
        .iter()
        .flat_map(|(h, flags)| flags.iter().filter(|f| *f == flag).map(move |_| h.as_str()))
        .collect();
    assert_eq!(
        under.len(),
        1,
        "{flag} listed under {under:?}: {sections:?}"
    );
    under[0]
}

#[test]
fn run_help_groups_its_flags_under_headings_and_lists_each_once() {
    let sections = help_sections("run");
    let headings: Vec<&str> = sections.iter().map(|(h, _)| h.as_str()).collect();
    let groups: Vec<&str> = headings
        .iter()
        .copied()
        .filter(|h| !["Usage", "Arguments", "Options"].contains(h))
        .collect();
    assert!(groups.len() >= 6, "too few headings: {headings:?}");
    let mut seen = std::collections::BTreeSet::new();
    for (heading, flags) in &sections {
        assert!(
            !flags.is_empty() || ["Usage", "Arguments"].contains(&heading.as_str()),
            "heading {heading} lists no flag"
        );
        for f in flags {
            assert!(seen.insert(f.clone()), "{f} listed twice: {sections:?}");
        }
    }
    assert!(seen.len() >= 38, "{} flags: {seen:?}", seen.len());
    for (flag, heading) in [
        ("--preset", "Selection"),
        ("--mode", "Selection"),
        ("--sizes", "Sizes"),
        ("--cold", "Sizes"),
        ("--cpus", "Placement"),
        ("--cpu-latency", "Placement"),
        ("--samples", "Budget"),
        ("--timeout", "Budget"),
        ("--json", "Output and history"),
        ("--db", "Output and history"),
        ("--no-save", "Output and history"),
        ("--load", "Load"),
        ("--load-cpus", "Load"),
        ("--remote", "Remote"),
        ("--period", "Timer group"),
        ("--window", "One-way"),
        ("--rates", "Rate"),
    ] {
        assert_eq!(heading_of(&sections, flag), heading, "{flag}");
    }
}

#[test]
fn workload_lists_the_flags_it_shares_with_run_under_runs_headings() {
    let sections = help_sections("workload");
    for (flag, heading) in [
        ("--cpu-latency", "Placement"),
        ("--timeout", "Budget"),
        ("--json", "Output and history"),
        ("--db", "Output and history"),
        ("--no-save", "Output and history"),
        ("--load", "Load"),
        ("--load-cpus", "Load"),
    ] {
        assert_eq!(heading_of(&sections, flag), heading, "{flag}");
    }
    // workload's own --timeout text and run's default survive the sharing.
    let out = Sandbox::new().run(&["workload", "--help"], Duration::from_secs(20));
    let help = stdout(&out);
    assert!(help.contains("may take to start"), "{help}");
    assert!(help.contains("[default: 5s]"), "{help}");
}
