use super::*;
use crate::record::RunRecord;

/// ipc-quick's run, on `host`, started at `at`.
fn run(host: &str, at: &str) -> RunRecord {
    let mut r = RunRecord::parse(include_str!("../../../tests/reports/ipc-quick.json")).unwrap();
    r.header.environment.hostname = host.into();
    r.header.started_at = at.into();
    r
}

fn build() -> BuildRecord {
    crate::output::json::build::current()
}

#[test]
fn the_newest_run_of_each_host_is_read_from_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let ids = crate::studies::tests::store(
        &db,
        &[
            run("a", "2026-03-01T10:00:00Z"),
            run("b", "2026-03-01T10:00:00Z"),
            run("a", "2026-03-02T10:00:00Z"),
            run("c", "2026-02-01T10:00:00Z"),
        ],
    );
    let report = fleet(&db, &Request::default(), build()).unwrap();
    assert_eq!(report.runs_read, 4);
    let class = &report.classes[0];
    let taken: Vec<(&str, Option<i64>)> = class
        .hosts
        .iter()
        .map(|h| (h.host.as_str(), h.run_id))
        .collect();
    assert_eq!(
        taken,
        [
            ("a", Some(ids[2])),
            ("b", Some(ids[1])),
            ("c", Some(ids[3]))
        ]
    );
    assert_eq!(class.hosts[0].source, format!("run {}", ids[2]));
    assert_eq!(report.superseded.len(), 1);
    assert_eq!(report.superseded[0].source, format!("run {}", ids[0]));
    assert_eq!(report.superseded[0].by, format!("run {}", ids[2]));
    // ipc-quick has four figures: too few for the sign test.
    assert!(!class.tested);

    // --since: c's only run is older, and a's first.
    let since = Request {
        since: "2026-03-01T12:00:00Z".parse().ok(),
        ..Request::default()
    };
    let report = fleet(&db, &since, build()).unwrap();
    let hosts: Vec<&str> = report.classes[0]
        .hosts
        .iter()
        .map(|h| h.host.as_str())
        .collect();
    assert_eq!(hosts, ["a"]);
    assert!(report.superseded.is_empty());
    assert_eq!(report.runs_read, 1);
}

#[test]
fn an_empty_history_says_how_to_fill_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    crate::studies::tests::store(&db, &[run("a", "2026-03-01T10:00:00Z")]);
    let since = Request {
        since: "2027-01-01T00:00:00Z".parse().ok(),
        ..Request::default()
    };
    let e = fleet(&db, &since, build()).unwrap_err().to_string();
    assert!(
        e.contains("no run of ipcmark run since then") && e.contains("import"),
        "{e}"
    );
}
