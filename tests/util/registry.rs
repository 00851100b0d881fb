//! What `ipcmark list --json` says the registry holds.

use super::{Sandbox, stderr};
use serde_json::Value;
use std::time::Duration;

/// `ipcmark list --json`: every mechanism and benchmark, in the list's order.
pub fn list() -> Vec<Value> {
    let sb = Sandbox::new();
    let out = sb.run(&["list", "--json"], Duration::from_secs(10));
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("list --json is JSON");
    v.as_array().expect("an array").clone()
}

/// The entries of one group ("ipc": the IPC mechanisms, the default run).
pub fn group(name: &str) -> Vec<Value> {
    list().into_iter().filter(|e| e["group"] == name).collect()
}

/// The ids of one group's entries, in order.
pub fn group_ids(name: &str) -> Vec<String> {
    group(name)
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_string())
        .collect()
}
