//! `ipcmark fleet`: twenty synthetic run reports written to a directory and
//! named by a shell's glob (`ipcmark fleet DIR/*.json --json out.json`),
//! the record read back and checked against its schema: the one mis-set
//! host flagged, its governor named first; a fleet with none mis-set flags
//! none; the history's runs read the same way; bad usage exits 2. No host
//! is measured and no time asserted.

use crate::util::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const SCHEMA: &str = "docs/schema/fleet.schema.json";
const LIMIT: Duration = Duration::from_secs(60);

/// `sh -c "ipcmark fleet DIR/*.json ARGS"` in the sandbox; its output.
fn fleet_glob(sb: &Sandbox, dir: &Path, args: &str) -> std::process::Output {
    let line = format!("\"$0\" fleet '{}'/*.json {args}", dir.display());
    let child = sb.wrapped("sh", &["-c", &line], &[]).spawn().unwrap();
    wait_with_deadline(child, LIMIT)
}

/// The hosts the record flags, each with its first differing setting.
fn outliers(r: &Value) -> Vec<(String, String)> {
    r["classes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["hosts"].as_array().unwrap())
        .filter(|h| h["verdict"] == "outlier")
        .map(|h| {
            (
                h["host"].as_str().unwrap().to_string(),
                h["differs"][0]["setting"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

#[test]
fn twenty_reports_by_glob_flag_the_mis_set_host_and_name_its_governor_first() {
    let sb = Sandbox::new();
    let dir = sb.path("reports");
    std::fs::create_dir(&dir).unwrap();
    write_fleet(&dir, 20, Some(7));
    let json = sb.path("out.json");
    let html = sb.path("out.html");
    let out = fleet_glob(
        &sb,
        &dir,
        &format!("--json '{}' --html '{}'", json.display(), html.display()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    assert!(page.contains("fleet: 20 host(s) in 1 class(es)"), "{page}");
    assert!(page.contains("node07 is "), "{page}");
    assert!(page.contains("frequency_governor: powersave (class: none, 19 host(s))"));

    let r = read_json(&json);
    let errors = schema_errors(SCHEMA, &r);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    assert_eq!(r["schema"], "ipcmark.fleet/1");
    assert_eq!(r["runs_read"], 20);
    assert_eq!(
        outliers(&r),
        [("node07".to_string(), "frequency_governor".to_string())]
    );
    let class = &r["classes"][0];
    assert_eq!(class["tested"], true);
    assert_eq!(class["figures"].as_array().unwrap().len(), 12);
    let host = &class["hosts"][7];
    assert_eq!(host["direction"], "slower");
    assert_eq!(host["slower"], 12);
    assert!(host["z"].as_f64().unwrap() > 3.5);
    let shift = host["shift"].as_f64().unwrap();
    assert!(shift > 1.2 && shift < 1.4, "{shift}");
    assert_eq!(host["ratios"].as_array().unwrap().len(), 12);

    let html = std::fs::read_to_string(&html).unwrap();
    assert_eq!(html.matches("<rect class=\"cell\"").count(), 20 * 12);
    assert!(html.contains("▲ node07</text>"));
}

#[test]
fn twenty_reports_none_mis_set_flag_no_host() {
    let sb = Sandbox::new();
    let dir = sb.path("reports");
    std::fs::create_dir(&dir).unwrap();
    write_fleet(&dir, 20, None);
    let json = sb.path("out.json");
    let out = fleet_glob(&sb, &dir, &format!("--json '{}'", json.display()));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("no outlier: every host is within the class's spread"));
    let r = read_json(&json);
    assert!(schema_errors(SCHEMA, &r).is_empty());
    assert!(outliers(&r).is_empty(), "{r:#}");
}

#[test]
fn the_historys_runs_make_the_same_fleet_and_history_lists_by_host_and_class() {
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    let db_arg = db.to_str().unwrap();
    let dir = sb.path("reports");
    std::fs::create_dir(&dir).unwrap();
    let mut files = write_fleet(&dir, 12, Some(3));
    // A thirteenth host of another CPU: a class of its own.
    let mut other = fleet_report(12, false);
    other["environment"]["cpu_model"] = "Intel(R) Xeon(R) Gold 6338".into();
    let other_path = dir.join("r-node12.json");
    std::fs::write(&other_path, other.to_string()).unwrap();
    files.push(other_path);
    let names: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let mut import = vec!["import", "--db", db_arg];
    import.extend(&names);
    let out = sb.run(&import, LIMIT);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let json = sb.path("h.json");
    let out = sb.run(
        &["fleet", "--db", db_arg, "--json", json.to_str().unwrap()],
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = read_json(&json);
    assert!(schema_errors(SCHEMA, &r).is_empty());
    assert_eq!(
        outliers(&r),
        [("node03".into(), "frequency_governor".into())]
    );
    let classes = r["classes"].as_array().unwrap();
    assert_eq!(classes.len(), 2);
    assert_eq!(classes[1]["hosts"].as_array().unwrap().len(), 1);
    assert_eq!(classes[1]["tested"], false);
    assert_eq!(classes[0]["hosts"][3]["source"], "run 4");

    // history --host: one host's run; --class: by id, and by a run.
    let listed = |args: &[&str]| {
        let mut argv = vec!["history", "--db", db_arg];
        argv.extend(args);
        let out = sb.run(&argv, LIMIT);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        (0..13)
            .map(|h| format!("node{h:02}"))
            .filter(|n| text.contains(n.as_str()))
            .count()
    };
    assert_eq!(listed(&[]), 13);
    assert_eq!(listed(&["--host", "node05"]), 1);
    let id = classes[1]["id"].as_str().unwrap();
    assert_eq!(listed(&["--class", id]), 1);
    assert_eq!(listed(&["--class", classes[0]["id"].as_str().unwrap()]), 12);
    assert_eq!(listed(&["--class", "1"]), 12, "the class of run 1");
    refused(
        &sb,
        &["history", "--db", db_arg, "--class", "nope"],
        &["names no class"],
    );
}

#[test]
fn fleet_refuses_bad_usage() {
    let sb = Sandbox::new();
    let dir = sb.path("reports");
    std::fs::create_dir(&dir).unwrap();
    let files = write_fleet(&dir, 3, None);
    let one = files[0].to_str().unwrap();
    let none = sb.path("none.sqlite");
    // A history holding a workload alone: no run to make a fleet of.
    let workloads = sb.path("w.sqlite");
    let w = workloads.to_str().unwrap();
    let out = sb.run(&["import", "--db", w, "tests/reports/workload.json"], LIMIT);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let cases: &[(&[&str], &str)] = &[
        (&["fleet", "missing.json"], "cannot read missing.json"),
        (
            &["fleet", "tests/reports/workload.json"],
            "fleet reads 'ipcmark.run/1'",
        ),
        (&["fleet", one, "--db", "x.sqlite"], "not both"),
        (&["fleet", "--db", none.to_str().unwrap()], "no history at"),
        (&["fleet", "--db", w], "holds no run of ipcmark run"),
        (
            &["fleet", one, "--json", "/no/such/dir/f.json"],
            "does not exist",
        ),
    ];
    refused_all(&sb, cases, None);
}
