//! `ipcmark tax`: the ledger's record (schema, a row per figure, a cell per
//! applied layer, each layer applied or skipped with its reason), bad
//! usage, a run as `nobody`, and no cgroup or process left after a normal
//! end, a Ctrl-C, and a kill -9 followed by `ipcmark clean`. Never a time.

use crate::util::*;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::time::Duration;

const SCHEMA: &str = "docs/schema/tax.schema.json";

/// Cgroups a tax made (named `ipcmark-PID-…-tax-…`) in either hierarchy,
/// whoever made them when `pid` is `None`.
fn tax_cgroups(pid: Option<u32>) -> Vec<PathBuf> {
    let prefix = pid.map_or("ipcmark-".to_string(), |p| format!("ipcmark-{p}-"));
    let mut found = Vec::new();
    let mut dirs = vec![PathBuf::from("/sys/fs/cgroup")];
    if let Ok(rd) = std::fs::read_dir("/sys/fs/cgroup") {
        dirs.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    for d in dirs {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(&prefix) && name.contains("-tax-") {
                found.push(e.path());
            }
        }
    }
    found
}

fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn a_tax_has_a_cell_per_figure_and_applied_layer_and_leaves_nothing() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("tax.json");
    let child = sb
        .cmd(&[
            "tax",
            "pipe",
            "syscall-getpid",
            "--layers",
            "cgroup,seccomp:args:10,netns",
            "--quick",
            "--passes",
            "2",
            "--json",
            json.to_str().unwrap(),
        ])
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = wait_with_deadline(child, Duration::from_secs(240));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = stdout(&out);
    let r = read_json(&json);
    let errors = schema_errors(SCHEMA, &r);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    assert_eq!(r["passes_done"], 2);
    let layers = r["layers"].as_array().unwrap();
    let names: Vec<&str> = layers.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["cgroup", "seccomp:args:10", "netns"]);
    // A seccomp filter needs no privilege: it is applied wherever tax runs.
    assert_eq!(layers[1]["status"], "applied", "{:#}", layers[1]);
    assert_eq!(layers[1]["seccomp_rules"], 10);
    if is_root() {
        for l in layers {
            assert_eq!(l["status"], "applied", "{l:#}");
        }
        assert!(matches!(
            layers[0]["cgroup_version"].as_str(),
            Some("v1" | "v2")
        ));
    }
    let applied = layers.iter().filter(|l| l["status"] != "skipped").count();
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:#?}");
    for row in rows {
        assert!(row["bare_median_ns"].as_f64().unwrap() > 0.0, "{row:#}");
        let cells = row["cells"].as_array().unwrap();
        assert_eq!(cells.len(), applied, "{row:#}");
        for c in cells {
            assert_eq!(c["status"], "ok", "{c:#}");
            let (d, b) = (
                c["diff_ns"].as_f64().unwrap(),
                row["bare_median_ns"].as_f64().unwrap(),
            );
            // Pass i of the layer pairs with pass i of bare: the difference
            // is bare's median times the geometric mean of their ratios,
            // less bare's median.
            let medians = |v: &serde_json::Value| -> Vec<f64> {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect()
            };
            let (bare, under) = (
                medians(&row["bare_pass_medians_ns"]),
                medians(&c["pass_medians_ns"]),
            );
            assert_eq!((bare.len(), under.len()), (2, 2), "{c:#} {row:#}");
            let mean_log = (under[0] / bare[0]).ln() / 2.0 + (under[1] / bare[1]).ln() / 2.0;
            let want = b * (mean_log.exp() - 1.0);
            assert!((d - want).abs() <= 1e-6 * b.max(1.0), "{c:#} {row:#}");
            assert_eq!(c["test"], "paired-passes");
        }
    }
    let getpid = rows
        .iter()
        .find(|r| r["benchmark"] == "syscall-getpid")
        .unwrap();
    let args = &getpid["cells"][1];
    assert_eq!(args["layer"], "seccomp:args:10");
    assert!(
        (args["per_rule_ns"].as_f64().unwrap() - args["diff_ns"].as_f64().unwrap() / 10.0).abs()
            < 1e-9
    );
    for l in ["cgroup", "seccomp:args:10", "netns", "bare, ns", "layers:"] {
        assert!(page.contains(l), "{l}: {page}");
    }
    assert!(
        tax_cgroups(Some(pid)).is_empty(),
        "{:?}",
        tax_cgroups(Some(pid))
    );
    assert!(sb.leftover_tmp().is_empty(), "{:?}", sb.leftover_tmp());
    assert!(
        eventually(Duration::from_secs(3), || ipcmark_processes().is_empty()),
        "{:?}",
        ipcmark_processes()
    );
    the_tax_compared_with_itself_changes_nowhere(&sb, &json, applied * rows.len());
}

/// `ipcmark compare` of a tax report with itself: every cell compared,
/// none changed; a tax beside a run is refused.
fn the_tax_compared_with_itself_changes_nowhere(
    sb: &Sandbox,
    json: &std::path::Path,
    cells: usize,
) {
    let cmp = sb.path("cmp.json");
    let (j, c) = (json.to_str().unwrap(), cmp.to_str().unwrap());
    let out = sb.run(&["compare", j, j, "--json", c], Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("isolation tax compared"),
        "{}",
        stdout(&out)
    );
    let r = read_json(&cmp);
    assert_eq!(r["schema"], "ipcmark.tax-compare/1");
    let changes = r["changes"].as_array().unwrap();
    assert_eq!(changes.len(), cells, "{r:#}");
    for ch in changes {
        assert_eq!(ch["verdict"], "no significant change", "{ch:#}");
        assert_eq!(ch["change_percent"], 0.0, "{ch:#}");
    }
    assert!(r["unmatched"].as_array().unwrap().is_empty(), "{r:#}");
    let run = sb.path("run.json");
    std::fs::copy("tests/reports/ipc-quick.json", &run).unwrap();
    let out = sb.run(
        &["compare", j, run.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("compare a tax with a tax"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_layers_names_and_sizes_are_usage_errors() {
    let sb = Sandbox::new();
    for (args, says) in [
        (vec!["tax", "--layers", "docker"], "unknown layer 'docker'"),
        (vec!["tax", "--layers", "cpu-max:20"], "QUOTA/PERIOD"),
        (vec!["tax", "--layers", "seccomp:args:5000"], "1 to 1000"),
        (vec!["tax", "no-such-mechanism"], "no-such-mechanism"),
        (vec!["tax", "--sizes", "sweep"], "not a sweep"),
        (vec!["tax", "--passes", "1"], "--passes"),
        (
            vec!["tax", "--html", "/nonexistent/t.html"],
            "does not exist",
        ),
    ] {
        let out = sb.run(&args, Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
}

#[test]
fn as_nobody_the_layers_that_need_root_are_skipped_with_their_reason() {
    let _g = serial();
    let Some(nobody) = Nobody::or_skip("tax as nobody") else {
        return;
    };
    let sb = Sandbox::new();
    let ran = Run::new(
        &sb,
        &[
            "tax",
            "pipe",
            "--layers",
            "cgroup,seccomp:args:5",
            "--quick",
            "--passes",
            "2",
        ],
    )
    .nobody(&nobody)
    .limit(Duration::from_secs(120))
    .ok();
    assert!(ran.stdout.contains("cgroup — skipped"), "{}", ran.stdout);
    assert!(
        ran.stdout.contains("not applied: cgroup:"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("seccomp:args:5 — applied"),
        "{}",
        ran.stdout
    );
}

#[test]
fn a_stopped_or_killed_tax_leaves_no_cgroup_once_cleaned() {
    let _g = serial();
    if !is_root() {
        eprintln!(
            "SKIPPED a_stopped_or_killed_tax_leaves_no_cgroup_once_cleaned: cgroups need root"
        );
        return;
    }
    let sb = Sandbox::new();
    let argv = [
        "tax",
        "pipe",
        "--layers",
        "cgroup,cpu-max:20ms/100ms",
        "--passes",
        "5",
    ];
    for sig in [libc::SIGINT, libc::SIGKILL] {
        let child = sb.cmd(&argv).process_group(0).spawn().unwrap();
        let pid = child.id();
        // Its cgroups are made before the first pass.
        assert!(
            eventually(Duration::from_secs(30), || tax_cgroups(Some(pid)).len()
                == 2),
            "no cgroup made: {:?}",
            tax_cgroups(None)
        );
        std::thread::sleep(Duration::from_millis(1500));
        if sig == libc::SIGINT {
            signal_group(pid, sig);
        } else {
            signal(pid, sig);
        }
        let out = wait_with_deadline(child, Duration::from_secs(60));
        if sig == libc::SIGINT {
            assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
        } else {
            // The passes' children end their runs once their parent is
            // gone; clean removes what the killed study made.
            assert!(eventually(Duration::from_secs(20), || ipcmark_processes().is_empty()));
            let cleaned = sb.run(&["clean"], Duration::from_secs(30));
            assert_eq!(cleaned.status.code(), Some(0), "{}", stderr(&cleaned));
        }
        assert!(
            tax_cgroups(Some(pid)).is_empty(),
            "{sig}: {:?}",
            tax_cgroups(Some(pid))
        );
        assert!(
            eventually(Duration::from_secs(5), || ipcmark_processes().is_empty()),
            "{sig}: {:?}",
            ipcmark_processes()
        );
    }
}

#[test]
fn with_explain_a_cell_says_which_part_grew_and_no_trace_is_left() {
    let _g = serial();
    let Some(_tracing) =
        tracing_or_skip("with_explain_a_cell_says_which_part_grew_and_no_trace_is_left")
    else {
        return;
    };
    let sb = Sandbox::new();
    let json = sb.path("tax.json");
    let out = sb.run(
        &[
            "tax",
            "syscall-getpid",
            "--layers",
            "seccomp:args:10,pidns",
            "--quick",
            "--passes",
            "2",
            "--explain",
            "--round-trips",
            "300",
            "--json",
            json.to_str().unwrap(),
        ],
        Duration::from_secs(240),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("where the differences land"),
        "{}",
        stdout(&out)
    );
    let r = read_json(&json);
    let errors = schema_errors(SCHEMA, &r);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    assert_eq!(r["explain"]["round_trips"], 300);
    let cells = r["rows"][0]["cells"].as_array().unwrap();
    // Under the filter: bare's anatomy against the layer's, part by part,
    // with the sums of the parts on each side.
    let parts = &cells[0]["parts"];
    let moved = parts["parts"].as_array().expect("parts under the filter");
    assert!(!moved.is_empty(), "{parts:#}");
    let change: f64 = moved.iter().map(|p| p["change_ns"].as_f64().unwrap()).sum();
    let whole =
        parts["round_trip_b_ns"].as_f64().unwrap() - parts["round_trip_a_ns"].as_f64().unwrap();
    assert!(
        (change - whole).abs() < 1e-6 * whole.abs().max(1.0),
        "{parts:#}"
    );
    // In a PID namespace no anatomy is made, and the record says why.
    assert!(cells[1]["parts"].is_null(), "{:#}", cells[1]);
    let unexplained = r["explain"]["unexplained"].as_array().unwrap();
    assert!(
        unexplained
            .iter()
            .any(|u| u.as_str().unwrap().starts_with("pidns: ")),
        "{unexplained:?}"
    );
    assert!(
        orphaned_instances().is_empty(),
        "{:?}",
        orphaned_instances()
    );
}
