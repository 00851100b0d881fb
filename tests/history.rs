//! The run history (docs/history.md): runs saved as they go, read back as
//! the same report, compared by `last` and `last~1`, a killed run kept with
//! its figures so far, two writers at once, a newer database refused and
//! left as it was, import, CSV export to full precision, prune, and bad
//! specs exiting with one line; a full disk that loses no table, a history
//! read by a user who may not write it, another program's database refused
//! unchanged, a history made before the mark adopted. Every test writes to
//! a sandbox's history.

use crate::util::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// `ipcmark ARGS --db DB`, which must succeed; its stdout.
fn ok(sb: &Sandbox, db: &Path, args: &[&str]) -> String {
    Run::new(sb, args).db(db).ok().stdout
}

/// The stored report of `spec`, as `export` writes it.
fn exported(sb: &Sandbox, db: &Path, spec: &str) -> Value {
    serde_json::from_str(&ok(sb, db, &["export", spec, "--format", "json"])).unwrap()
}

/// `(runs, figures, complete runs)` counted in the database itself.
fn counts(db: &Path) -> (i64, i64, i64) {
    let c = rusqlite::Connection::open(db).unwrap();
    let n = |sql: &str| c.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    (
        n("SELECT count(*) FROM runs"),
        n("SELECT count(*) FROM figures"),
        n("SELECT count(*) FROM runs WHERE complete = 1"),
    )
}

fn integrity(db: &Path) -> String {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn runs_go_to_the_sandboxs_history_and_compare_last_with_last_1() {
    let _g = serial();
    let sb = Sandbox::new();
    // No --db: the default place, which the sandbox's XDG_DATA_HOME moves.
    for _ in 0..2 {
        Run::new(&sb, &["run", "pipe"]).short().ok();
    }
    let db = sb.history();
    assert_eq!(counts(&db), (2, 2, 2));
    let text = Run::new(&sb, &["compare", "last", "last~1"]).ok().stdout;
    assert!(
        text.contains("A: run 2") && text.contains("B: run 1") && text.contains("pipe"),
        "{text}"
    );
    let list = ok(&sb, &db, &["history"]);
    assert_eq!(list.matches("complete").count(), 2, "{list}");
    // The page of a stored run names its figures.
    assert!(ok(&sb, &db, &["show", "last"]).contains("pipe"));
    // `report` with no RUN is about the last run of the history.
    let html = sb.path("r.html");
    Run::new(&sb, &["report", "--html", html.to_str().unwrap()]).ok();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("run 2") && !page.contains("run 1"),
        "report names run 2 only"
    );
    // --no-save leaves the history as it was.
    Run::new(&sb, &["run", "pipe"]).no_save().short().ok();
    assert_eq!(counts(&db).0, 2);
}

#[test]
fn a_stored_run_exports_as_the_report_run_json_wrote() {
    let _g = serial();
    let sb = Sandbox::new();
    let (db, json) = (sb.path("h.sqlite"), sb.path("run.json"));
    Run::new(&sb, &["run", "pipe", "fifo"])
        .json_at(&json)
        .short()
        .db(&db)
        .ok();
    let out = ok(&sb, &db, &["export", "last"]);
    assert_eq!(out, std::fs::read_to_string(&json).unwrap());
}

#[test]
fn sigkill_mid_run_leaves_the_figures_so_far_marked_incomplete() {
    let _g = serial();
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    // signal-sigqueue runs alone and is saved first; the kill then lands
    // in the long sweep of the other four (200 ms samples), as in
    // robustness.rs.
    let argv = [
        "run",
        "signal-sigqueue",
        "pipe",
        "fifo",
        "unix-stream",
        "unix-dgram",
        "--sizes",
        "64",
        "--passes",
        "1",
        "--sample-time",
        "200ms",
        "--db",
        db.to_str().unwrap(),
    ];
    let child = sb.cmd(&argv).spawn().unwrap();
    let pid = child.id();
    assert!(
        eventually(Duration::from_secs(60), || {
            db.exists()
                && rusqlite::Connection::open(&db)
                    .and_then(|c| c.query_row("SELECT count(*) FROM figures", [], |r| r.get(0)))
                    .is_ok_and(|n: i64| n > 0)
        }),
        "no figure saved within 60 s"
    );
    signal(pid, libc::SIGKILL);
    let out = wait_with_deadline(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), None, "killed, not exited");
    // What the killed run held is removed, as a user would after kill -9.
    assert!(sb.run(&["clean"], LIMIT).status.success());
    assert_released(&sb, pid);
    assert_eq!(integrity(&db), "ok");
    let (runs, figures, complete) = counts(&db);
    assert_eq!((runs, complete), (1, 0));
    assert!((1..5).contains(&figures), "{figures} figures");
    let list = ok(&sb, &db, &["history"]);
    assert!(list.contains("incomplete"), "{list}");
    let report = exported(&sb, &db, "last");
    assert_eq!(report["complete"], false);
    assert!(report["finished_at"].is_null());
    assert_eq!(results(&report).len() as i64, figures);
    assert!(results(&report).iter().all(|r| r["status"].is_string()));
}

#[test]
fn two_runs_writing_at_once_both_land_whole() {
    let _g = serial();
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    let mut argv = vec!["run", "pipe", "fifo", "--sizes", "64,1K", "--db"];
    argv.push(db.to_str().unwrap());
    argv.extend_from_slice(SHORT);
    let a = sb.cmd(&argv).spawn().unwrap();
    let b = sb.cmd(&argv).spawn().unwrap();
    for child in [a, b] {
        let out = wait_with_deadline(child, LIMIT);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(integrity(&db), "ok");
    assert_eq!(counts(&db), (2, 8, 2));
    for spec in ["1", "2"] {
        assert_eq!(results(&exported(&sb, &db, spec)).len(), 4);
    }
}

/// Processes that open a history that does not exist yet all at once
/// (the moment SQLite answers "locked" without waiting: the switch to WAL
/// and the first migration) each wait their turn; every import lands.
#[test]
fn processes_creating_one_history_at_once_all_land() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = report_file(&sb, "old.json", &[]);
    for round in 0..20 {
        let db = sb.path(&format!("h{round}.sqlite"));
        let children: Vec<_> = (0..4)
            .map(|_| {
                sb.cmd(&[
                    "import",
                    json.to_str().unwrap(),
                    "--db",
                    db.to_str().unwrap(),
                ])
                .spawn()
                .unwrap()
            })
            .collect();
        for child in children {
            let out = wait_with_deadline(child, LIMIT);
            assert!(out.status.success(), "round {round}: {}", stderr(&out));
        }
        assert_eq!(integrity(&db), "ok");
        assert_eq!(counts(&db).0, 4, "round {round}");
    }
}

#[test]
fn a_history_from_a_newer_ipcmark_is_refused_and_left_unchanged() {
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        // A newer ipcmark marks its databases as this one does.
        c.execute_batch(
            "CREATE TABLE runs (x); PRAGMA user_version = 99; PRAGMA application_id = 1229996877;",
        )
        .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    for args in [
        vec!["history"],
        vec!["show", "last"],
        vec!["import", "nothing.json"],
        vec![
            "run",
            "pipe",
            "--quick",
            "--samples",
            "2",
            "--max-time",
            "0",
        ],
    ] {
        let ran = Run::new(&sb, &args).db(&db).run();
        let err = &ran.stderr;
        if args[0] == "import" {
            // The file is checked first.
            assert_eq!(ran.code(), Some(2), "{err}");
            continue;
        }
        assert_eq!(ran.code(), Some(1), "{:?}: {err}", ran.argv);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("newer ipcmark"), "{err}");
        assert!(ran.stdout.is_empty());
    }
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

/// A report file as `run --json` writes it, made by a short run not saved.
fn report_file(sb: &Sandbox, name: &str, extra: &[&str]) -> std::path::PathBuf {
    let json = sb.path(name);
    Run::new(sb, &["run", "pipe"])
        .no_save()
        .json_at(&json)
        .args(extra)
        .short()
        .ok();
    json
}

#[test]
fn an_imported_report_reads_back_as_it_was() {
    let _g = serial();
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    let json = report_file(&sb, "old.json", &[]);
    let out = ok(&sb, &db, &["import", json.to_str().unwrap()]);
    assert!(out.contains("run 1"), "{out}");
    assert_eq!(
        ok(&sb, &db, &["export", "1"]),
        std::fs::read_to_string(&json).unwrap()
    );
    assert!(ok(&sb, &db, &["history"]).contains("imported"));
    // A file that is no report is refused, and nothing is stored.
    let bad = sb.path("bad.json");
    std::fs::write(&bad, r#"{"schema": "other/1"}"#).unwrap();
    Run::new(&sb, &["import", bad.to_str().unwrap()])
        .db(&db)
        .exits(2);
    assert_eq!(counts(&db).0, 1);
}

#[test]
fn csv_export_round_trips_every_median_and_interval() {
    let _g = serial();
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    let csv_path = sb.path("run.csv");
    // Three passes: each figure's interval rests on their medians.
    let mut argv = vec![
        "run",
        "pipe",
        "fifo",
        "syscall-getpid",
        "--csv",
        csv_path.to_str().unwrap(),
    ];
    argv.extend_from_slice(short_budget());
    argv.extend(["--passes", "3"]);
    ok(&sb, &db, &argv);
    let report = exported(&sb, &db, "last");
    let exported_csv = ok(&sb, &db, &["export", "last", "--format", "csv"]);
    assert_eq!(exported_csv, std::fs::read_to_string(&csv_path).unwrap());
    let mut reader = csv::Reader::from_reader(exported_csv.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let col = |row: &csv::StringRecord, name: &str| -> Option<f64> {
        let i = headers.iter().position(|h| h == name).unwrap();
        (!row[i].is_empty()).then(|| row[i].parse().unwrap())
    };
    let figures = results(&report);
    assert_eq!(rows.len(), figures.len());
    let mut intervals = 0;
    for (row, f) in rows.iter().zip(figures) {
        assert_eq!(&row[0], f["benchmark"].as_str().unwrap());
        assert_eq!(col(row, "median_ns"), f["latency_ns"]["median"].as_f64());
        let interval = &f["precision"]["interval_ns"];
        assert_eq!(col(row, "interval_low_ns"), interval["low"].as_f64());
        assert_eq!(col(row, "interval_high_ns"), interval["high"].as_f64());
        intervals += usize::from(interval["low"].is_f64());
    }
    assert!(intervals > 0, "no figure had an interval: {exported_csv}");
}

#[test]
fn prune_deletes_what_its_selectors_pick() {
    let _g = serial();
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    let done = report_file(&sb, "done.json", &[]);
    let mut partial: Value = read_json(&done);
    partial["complete"] = Value::Bool(false);
    let partial_path = sb.path("partial.json");
    std::fs::write(&partial_path, partial.to_string()).unwrap();
    let (d, p) = (done.to_str().unwrap(), partial_path.to_str().unwrap());
    ok(&sb, &db, &["import", d, p, d, d]);
    Run::new(&sb, &["history", "--prune"]).db(&db).exits(2);
    assert!(
        ok(&sb, &db, &["history", "--prune", "--before", "2000-01-01"]).contains("no run deleted")
    );
    assert!(ok(&sb, &db, &["history", "--prune", "--incomplete"]).contains("deleted 1 run(s): 2"));
    assert!(
        ok(&sb, &db, &["history", "--prune", "--keep", "1"]).contains("deleted 2 run(s): 1, 3")
    );
    assert_eq!(counts(&db), (1, 1, 1));
    assert_eq!(
        ok(&sb, &db, &["export", "last"]),
        std::fs::read_to_string(&done).unwrap()
    );
}

#[test]
fn specs_that_name_no_run_exit_2_with_one_line() {
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    let missing = sb.path("missing.sqlite");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["show", "last", "--db", missing.to_str().unwrap()],
            "no history",
        ),
        (
            vec!["import", "absent.json", "--db", db.to_str().unwrap()],
            "cannot read",
        ),
    ];
    for (argv, needle) in &cases {
        let out = sb.run(argv, LIMIT);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{argv:?}: {err}");
    }
    // An empty history, then one of a single run.
    rusqlite::Connection::open(&db).unwrap();
    let json = sb.path("r.json");
    std::fs::copy("tests/reports/ipc-quick.json", &json).unwrap();
    let d = db.to_str().unwrap();
    for (argv, needle) in [
        (vec!["compare", "last", "last~1", "--db", d], "empty"),
        (vec!["export", "1", "--db", d], "no run 1"),
    ] {
        let out = sb.run(&argv, LIMIT);
        assert_eq!(out.status.code(), Some(2), "{argv:?}");
        assert!(stderr(&out).contains(needle), "{}", stderr(&out));
    }
    ok(&sb, &db, &["import", json.to_str().unwrap()]);
    for (argv, needle) in [
        (vec!["compare", "last", "last~1", "--db", d], "only 1 run"),
        (vec!["show", "yesterday", "--db", d], "names no run"),
        (vec!["show", "last~x", "--db", d], "names no run"),
    ] {
        let out = sb.run(&argv, LIMIT);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{argv:?}: {err}");
    }
}

#[test]
fn a_workload_is_kept_in_the_same_history() {
    let _g = serial();
    let sb = Sandbox::new();
    let (db, json) = (sb.path("h.sqlite"), sb.path("w.json"));
    ok(
        &sb,
        &db,
        &[
            "workload",
            "shared-counter",
            "--runs",
            "1",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(counts(&db), (1, 1, 1));
    assert_eq!(
        ok(&sb, &db, &["export", "last"]),
        std::fs::read_to_string(&json).unwrap()
    );
    assert!(ok(&sb, &db, &["show", "last"]).contains("shared-counter"));
    // A workload has no figures of a run to write as CSV.
    Run::new(&sb, &["export", "last", "--format", "csv"])
        .db(&db)
        .exits(2);
}

/// ipcmark's `PRAGMA application_id` ("IPCM").
const APPLICATION_ID: i32 = 0x4950_434D;

fn application_id(db: &Path) -> i32 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap()
}

/// The lines of `text` that warn about a place the report is no longer saved to.
fn unsaved_warnings(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("warning:") && l.contains("no longer saved"))
        .collect()
}

#[test]
fn a_full_disk_warns_once_per_place_prints_the_whole_page_and_exits_1() {
    let _g = serial();
    let sb = Sandbox::new();
    // The default history (XDG_DATA_HOME is `data`) and --json, both on a
    // 96 KiB tmpfs: the history is made (64 KiB no longer holds its
    // creation, write-ahead log and index included, since the tags table),
    // then every figure outgrows it.
    let data = sb.path("data");
    let _full = match Mount::tmpfs(&data, "96k") {
        Ok(m) => m,
        Err(why) => {
            eprintln!("SKIPPED a_full_disk_warns_once_per_place: {why}");
            return;
        }
    };
    let json = data.join("r.json");
    // Not read back: the disk is full.
    let ran = Run::new(&sb, &["run", "pipe", "fifo"])
        .sizes("sweep")
        .args(&["--json", json.to_str().unwrap()])
        .short()
        .exits(1);
    let (text, err) = (&ran.stdout, &ran.stderr);
    // The whole page: both mechanisms, the last size, the cost model that
    // is fitted once the run is over.
    for needle in ["pipe", "fifo", "64K", "setup µs"] {
        assert!(text.contains(needle), "{needle} missing:\n{text}\n{err}");
    }
    let warned = unsaved_warnings(err);
    assert_eq!(warned.len(), 2, "one warning per place:\n{err}");
    assert!(
        warned
            .iter()
            .any(|l| l.contains(json.to_str().unwrap()) && l.contains("No space left")),
        "{err}"
    );
    assert!(
        warned
            .iter()
            .any(|l| l.contains("history.sqlite") && l.contains("full")),
        "{err}"
    );
    assert!(
        err.lines().last().unwrap().contains("could not be saved"),
        "{err}"
    );
    // No temporary file left, and the history is whole, its run not complete.
    let names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    assert_eq!(integrity(&sb.history()), "ok");
    let (runs, _, complete) = counts(&sb.history());
    assert_eq!((runs, complete), (1, 0));
}

/// A history made by root in a directory only root may write, the file
/// 0644: `nobody` reads it with every reading command, and nothing changes.
#[test]
fn a_history_the_user_may_only_read_is_read_and_left_unchanged() {
    let _g = serial();
    let Some(nobody) = Nobody::or_skip("a_history_the_user_may_only_read") else {
        return;
    };
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let json = report_file(&sb, "r.json", &[]);
    let dir = sb.path("root-only");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.join("h.sqlite");
    let j = json.to_str().unwrap();
    ok(&sb, &db, &["import", j, j]);
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out_dir = sb.path("out");
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::set_permissions(&out_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let html = out_dir.join("r.html");
    let listing = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let before = (std::fs::read(&db).unwrap(), listing(&dir));
    let as_nobody = |args: &[&str]| Run::new(&sb, args).db(&db).nobody(&nobody).ok().stdout;
    let list = as_nobody(&["history"]);
    assert_eq!(list.matches("imported").count(), 2, "{list}");
    assert!(as_nobody(&["show", "last"]).contains("pipe"));
    assert_eq!(
        as_nobody(&["export", "1"]),
        std::fs::read_to_string(&json).unwrap()
    );
    assert!(as_nobody(&["compare", "last~1", "last"]).contains("pipe"));
    as_nobody(&["report", "last", "--html", html.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&html).unwrap().contains("run 2"));
    assert_eq!((std::fs::read(&db).unwrap(), listing(&dir)), before);

    // A writer holding the history open (a run going on): its write-ahead
    // log is read too, through the shared memory root's writer made.
    {
        let w = rusqlite::Connection::open(&db).unwrap();
        w.execute("UPDATE runs SET host = 'host-in-the-log' WHERE id = 2", [])
            .unwrap();
        assert!(dir.join("h.sqlite-wal").exists());
        assert!(as_nobody(&["history"]).contains("host-in-the-log"));
    }

    // The same history on a read-only mount, read by root.
    let view = sb.path("ro-view");
    let _ro = Mount::read_only_view(&dir, &view).expect("read-only bind mount");
    let on_ro = view.join("h.sqlite");
    let list = ok(&sb, &on_ro, &["history"]);
    assert!(list.contains("host-in-the-log"), "{list}");
    assert!(ok(&sb, &on_ro, &["show", "last"]).contains("pipe"));
}

/// Another program's SQLite file, named with --db, is refused by readers
/// and writers with one line, and its bytes are what they were.
#[test]
fn another_programs_database_is_refused_and_left_unchanged() {
    let sb = Sandbox::new();
    let db = sb.path("notes.sqlite");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let report = sb.path("r.json");
    std::fs::copy("tests/reports/ipc-quick.json", &report).unwrap();
    let mut cases = vec![
        vec!["history"],
        vec!["show", "last"],
        vec!["export", "last"],
        vec!["compare", "last~1", "last"],
        vec!["history", "--prune", "--keep", "1"],
        vec!["import", report.to_str().unwrap()],
    ];
    let mut run = vec!["run", "pipe"];
    run.extend_from_slice(SHORT);
    cases.push(run);
    for args in cases {
        let ran = Run::new(&sb, &args).db(&db).run();
        let (argv, err) = (&ran.argv, &ran.stderr);
        assert_eq!(ran.code(), Some(1), "{argv:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{argv:?}: {err}");
        assert!(err.contains("not an ipcmark history"), "{argv:?}: {err}");
        assert!(ran.stdout.is_empty(), "{argv:?}");
        assert_eq!(std::fs::read(&db).unwrap(), before, "{argv:?} changed it");
    }
    for sidecar in ["notes.sqlite-wal", "notes.sqlite-shm"] {
        assert!(!sb.path(sidecar).exists(), "{sidecar} made");
    }
}

/// A history made before ipcmark marked its databases (its tables, no
/// application_id) is read as it is, and marked by the next command that
/// writes it.
#[test]
fn a_history_made_before_the_mark_is_read_then_adopted() {
    let _g = serial();
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    let json = report_file(&sb, "r.json", &[]);
    let j = json.to_str().unwrap();
    ok(&sb, &db, &["import", j]);
    assert_eq!(application_id(&db), APPLICATION_ID);
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("PRAGMA application_id = 0")
        .unwrap();
    assert!(ok(&sb, &db, &["history"]).contains("imported"));
    assert_eq!(application_id(&db), 0, "a reader writes nothing");
    ok(&sb, &db, &["import", j]);
    assert_eq!(application_id(&db), APPLICATION_ID);
    assert_eq!(counts(&db).0, 2);
}

/// A 64 KiB tmpfs in `sb`, filled to the last block, and where it is; none
/// (the test says SKIPPED) where it cannot be mounted.
fn full_disk(sb: &Sandbox, test: &str) -> Option<(Mount, std::path::PathBuf)> {
    use std::io::Write;
    let full = sb.path("full");
    let m = match Mount::tmpfs(&full, "64k") {
        Ok(m) => m,
        Err(why) => {
            eprintln!("SKIPPED {test}: {why}");
            return None;
        }
    };
    let mut filler = std::fs::File::create(full.join("filler")).unwrap();
    while filler.write_all(&[0; 4096]).is_ok() {}
    Some((m, full))
}

/// `ipcmark workload` saves as `run` does: its --json on a disk already
/// full is warned about once, the workload runs and prints its table, and
/// the command exits 1.
#[test]
fn a_workload_on_a_full_disk_warns_once_prints_its_table_and_exits_1() {
    let _g = serial();
    let sb = Sandbox::new();
    let Some((_m, full)) = full_disk(&sb, "a_workload_on_a_full_disk") else {
        return;
    };
    let json = full.join("w.json");
    // Not read back: the disk is full.
    let ran = Run::new(&sb, &["workload", "shared-counter", "--runs", "2"])
        .no_save()
        .args(&["--json", json.to_str().unwrap()])
        .exits(1);
    let err = &ran.stderr;
    assert!(ran.stdout.contains("shared-counter"), "{}", ran.stdout);
    let warned = unsaved_warnings(err);
    assert_eq!(warned.len(), 1, "{err}");
    assert!(
        warned[0].contains("w.json") && warned[0].contains("No space left"),
        "{err}"
    );
    assert!(err.contains("could not be saved"), "{err}");
    assert!(!json.exists());
}

/// A history that cannot be created because the disk is full says so in
/// ipcmark's words, not the migration library's.
#[test]
fn a_history_that_cannot_be_created_on_a_full_disk_says_the_disk_is_full() {
    let _g = serial();
    let sb = Sandbox::new();
    let Some((_m, full)) = full_disk(&sb, "a_history_that_cannot_be_created_on_a_full_disk") else {
        return;
    };
    let db = full.join("h.sqlite");
    let out = sb.run(
        &[
            "import",
            "tests/reports/op.json",
            "--db",
            db.to_str().unwrap(),
        ],
        Duration::from_secs(30),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the disk is full"), "{err}");
    assert!(!err.contains("rusqlite_migration"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}
