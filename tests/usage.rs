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
