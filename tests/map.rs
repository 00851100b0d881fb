//! `ipcmark map`: every pair of the CPUs measured and recorded, the diagonal
//! of a busy-polling mechanism skipped with its reason, the classes, the
//! CSV of each matrix reading back every cell's median, `--sample`, `show`,
//! `compare` of two maps, and its usage errors. Nothing asserts a time, or
//! how many CPUs the machine has.

use crate::util::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Duration;

/// The map's matrix of `benchmark`.
fn matrix<'a>(report: &'a Value, benchmark: &str) -> &'a Value {
    report["map"]["matrices"]
        .as_array()
        .expect("map.matrices")
        .iter()
        .find(|m| m["benchmark"] == benchmark)
        .unwrap_or_else(|| panic!("no matrix of {benchmark}: {:#}", report["map"]))
}

/// The CPUs of the map's topology, in its order.
fn cpus(report: &Value) -> Vec<u64> {
    report["settings"]["map"]["topology"]["cpus"]
        .as_array()
        .expect("topology.cpus")
        .iter()
        .map(|c| uint(&c["cpu"]))
        .collect()
}

#[test]
fn a_map_measures_every_pair_skips_shm_spins_diagonal_and_its_csv_reads_back() {
    let _g = serial();
    let sb = Sandbox::new();
    let csv = sb.path("csv");
    std::fs::create_dir(&csv).unwrap();
    let ran = Run::new(&sb, &["map", "pipe", "shm-spin"])
        .args(short_budget())
        .args(&["--passes", "2", "--csv", csv.to_str().unwrap()])
        .json()
        .schema()
        .ok();
    let report = &ran.report;
    let page = &ran.stdout;
    assert!(page.contains("pipe 64 B — one-way µs"), "{page}");
    assert!(page.contains("shm-spin 64 B — one-way µs"), "{page}");
    assert!(page.contains("classes — median one-way µs"), "{page}");
    assert!(
        page.contains("skipped: busy-wait hand-off needs two CPUs"),
        "shm-spin's diagonal is skipped with its reason: {page}"
    );

    let cpus = cpus(report);
    let n = cpus.len();
    assert_eq!(
        cpus.len(),
        allowed_cpus().len(),
        "every allowed CPU is mapped"
    );
    let pairs = report["settings"]["map"]["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), n * n, "every ordered pair, the diagonal too");
    // Each pair's figures in turn: two per pair.
    assert_eq!(results(report).len(), 2 * n * n);
    for (k, pair) in pairs.iter().enumerate() {
        for (f, r) in results(report)[2 * k..2 * k + 2].iter().enumerate() {
            assert_eq!(r["benchmark"], ["pipe", "shm-spin"][f]);
            if r["status"] == "ok" {
                let ran_on: Vec<u64> = r["cpus"].as_array().unwrap().iter().map(uint).collect();
                assert_eq!(
                    ran_on,
                    [uint(&pair["client"]), uint(&pair["server"])],
                    "figure {} ran on its pair",
                    2 * k + f
                );
            }
        }
    }
    for m in ["pipe", "shm-spin"] {
        let cells = matrix(report, m)["cells"].as_array().unwrap();
        assert_eq!(cells.len(), n * n);
        for c in cells {
            let diagonal = c["client"] == c["server"];
            match (m, diagonal) {
                ("shm-spin", true) => {
                    assert_eq!(c["status"], "skipped", "{c}");
                    assert!(c["median_ns"].is_null());
                    assert!(c["reason"].as_str().unwrap().contains("two CPUs"));
                }
                // A busy-wait hand-off across CPUs can come out under the
                // clock's resolution on a fast host: measured, and said so.
                ("shm-spin", false) if c["status"] == "below_resolution" => {
                    assert!(c["median_ns"].is_null(), "no median is printed for it: {c}");
                }
                _ => {
                    assert_eq!(c["status"], "ok", "{c}");
                    assert!(c["median_ns"].as_f64().unwrap() > 0.0);
                }
            }
        }
        let classes = matrix(report, m)["classes"].as_array().unwrap();
        let names: BTreeSet<&str> = classes
            .iter()
            .map(|c| c["class"].as_str().unwrap())
            .collect();
        assert!(names.contains("same-cpu"), "{names:?}");
        let planned: u64 = classes.iter().map(|c| uint(&c["pairs"])).sum();
        assert_eq!(planned as usize, n * n, "each pair in one class");

        // The CSV holds each measured cell's median exactly as the report.
        let text = std::fs::read_to_string(csv.join(format!("map-{m}-64.csv"))).unwrap();
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(head.len(), n + 1, "{text}");
        let mut read = 0;
        for line in lines {
            let fields: Vec<&str> = line.split(',').collect();
            let client: u64 = fields[0].parse().unwrap();
            for (k, v) in fields[1..].iter().enumerate() {
                let server: u64 = head[k + 1].parse().unwrap();
                let cell = cells
                    .iter()
                    .find(|c| uint(&c["client"]) == client && uint(&c["server"]) == server)
                    .unwrap();
                match cell["median_ns"].as_f64() {
                    Some(median) => {
                        assert_eq!(v.parse::<f64>().unwrap(), median, "{m} {client}→{server}");
                        read += 1;
                    }
                    None => assert!(v.is_empty(), "{m} {client}→{server}: {v}"),
                }
            }
        }
        let measured = cells.iter().filter(|c| c["median_ns"].is_f64()).count();
        assert_eq!(read, measured, "{m}: every measured cell is in the CSV");
    }

    // `show last` prints the page the map printed.
    let shown = sb.run(&["show", "last"], Duration::from_secs(30));
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert_eq!(stdout(&shown), *page);
}

#[test]
fn a_sampled_map_measures_k_pairs_per_class_covering_every_cpu() {
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["map", "pipe", "--sample", "1"])
        .args(SHORT)
        .json()
        .schema()
        .ok();
    let report = &ran.report;
    let map = &report["settings"]["map"];
    assert_eq!(map["sample"], 1);
    let pairs = map["pairs"].as_array().unwrap();
    let mut covered = BTreeSet::new();
    let mut classes = BTreeSet::new();
    for p in pairs {
        covered.insert(uint(&p["client"]));
        covered.insert(uint(&p["server"]));
        classes.insert(p["class"].as_str().unwrap().to_string());
    }
    let cpus: BTreeSet<u64> = cpus(report).into_iter().collect();
    assert_eq!(covered, cpus, "every CPU takes part in a pair");
    assert!(
        pairs.len() >= classes.len(),
        "a pair of each class at least"
    );
    // A cell per pair measured; the others are blank on the page.
    let cells = matrix(report, "pipe")["cells"].as_array().unwrap();
    assert_eq!(cells.len(), pairs.len());
    if pairs.len() < cpus.len() * cpus.len() {
        assert!(ran.stdout.contains("blank: not measured"), "{}", ran.stdout);
    }
}

#[test]
fn two_maps_compare_class_by_class_and_a_map_is_not_compared_with_a_run() {
    let _g = serial();
    let sb = Sandbox::new();
    for _ in 0..2 {
        Run::new(&sb, &["map", "pipe", "--no-diagonal"])
            .args(short_budget())
            .args(&["--passes", "2"])
            .ok();
    }
    let out = sb.path("cmp.json");
    let ran = Run::new(&sb, &["compare", "last~1", "last"])
        .args(&["--json", out.to_str().unwrap()])
        .ok();
    assert!(ran.stdout.contains("class by class"), "{}", ran.stdout);
    let cmp = read_json(&out);
    assert_eq!(cmp["schema"], "ipcmark.map-compare/1");
    let classes = cmp["classes"].as_array().unwrap();
    assert!(!classes.is_empty(), "{cmp:#}");
    for c in classes {
        assert_eq!(c["benchmark"], "pipe");
        // Two passes of each pair on each side: the test ran.
        assert!(c["p"].is_f64(), "{c}");
        assert!(c["median_a_ns"].as_f64().unwrap() > 0.0);
    }

    Run::new(&sb, &["run", "pipe"]).args(SHORT).ok();
    let refused = Run::new(&sb, &["compare", "last~1", "last"]).exits(2);
    assert!(
        refused.stderr.contains("is a map (ipcmark map)"),
        "{}",
        refused.stderr
    );
}

#[test]
fn map_refuses_what_it_cannot_measure_with_one_line_and_exit_2() {
    let _g = serial();
    let sb = Sandbox::new();
    let cases: &[(&[&str], &str)] = &[
        (
            &["map", "syscall-getpid"],
            "map measures ping-pong mechanisms",
        ),
        (&["map", "pipe-self"], "runs in one process"),
        (
            &["map", "pipe", "--cpus", "0-4000"],
            "is not available to ipcmark",
        ),
        (&["map", "pipe", "--cpus", "1-0"], "invalid CPU list"),
        (&["map", "pipe", "--home", "node:999"], "no such NUMA node"),
        (&["map", "pipe", "--home", "elsewhere"], "invalid home"),
        (
            &["map", "pipe", "--csv", "/nonexistent/dir"],
            "not a directory",
        ),
        (&["map", "pipe", "--sample", "0"], "0"),
    ];
    for (args, want) in cases {
        let ran = Run::new(&sb, args).no_save().exits(2);
        assert!(ran.stderr.contains(want), "{args:?}: {}", ran.stderr);
        assert!(ran.stdout.is_empty(), "{args:?}: {}", ran.stdout);
    }
}

#[test]
fn an_unprivileged_user_maps_too() {
    let Some(nobody) = Nobody::or_skip("an_unprivileged_user_maps_too") else {
        return;
    };
    let _g = serial();
    let sb = Sandbox::new();
    let ran = Run::new(&sb, &["map", "eventfd", "--no-diagonal"])
        .args(SHORT)
        .nobody(&nobody)
        .json()
        .ok();
    let report = &ran.report;
    let cells = matrix(report, "eventfd")["cells"].as_array().unwrap();
    assert!(cells.iter().all(|c| c["status"] == "ok"), "{cells:#?}");
}
