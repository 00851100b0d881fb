//! `ipcmark show` prints the page the run printed: the same bytes on
//! stdout, compact or `--long`, for a ping-pong, an operation, a one-way
//! and a rate run, since both pages are drawn from the report's records
//! alone.

use crate::util::*;
use std::time::Duration;

/// Runs `run_args` (saved in the sandbox's history), then `show last`
/// (with `--long` when the run had it), and says where the two stdouts part.
fn run_then_show(sb: &Sandbox, run_args: &[&str]) {
    let ran = sb.run(run_args, Duration::from_secs(300));
    assert!(ran.status.success(), "{}", stderr(&ran));
    let mut show = vec!["show", "last"];
    if run_args.contains(&"--long") {
        show.push("--long");
    }
    let shown = sb.run(&show, Duration::from_secs(30));
    assert!(shown.status.success(), "{}", stderr(&shown));
    let (page, again) = (stdout(&ran), stdout(&shown));
    if page != again {
        let line = page
            .lines()
            .zip(again.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(page.lines().count().min(again.lines().count()));
        panic!(
            "{run_args:?}: show differs at line {}:\nrun:\n{page}\nshow:\n{again}",
            line + 1
        );
    }
    // Which run it is goes to stderr, where the run's own lines went.
    assert!(stderr(&shown).contains("run "), "{}", stderr(&shown));
}

#[test]
fn show_last_prints_the_page_the_run_printed_for_pingpong_op_oneway_and_rate() {
    let _g = serial();
    let sb = Sandbox::new();
    let budget = ["--samples", "2", "--max-time", "0", "--sample-time", "2ms"];
    let mut pingpong = vec!["run", "pipe", "shm-futex", "--sizes", "64,1K"];
    pingpong.extend(budget);
    run_then_show(&sb, &pingpong);
    pingpong.push("--long");
    run_then_show(&sb, &pingpong);

    let mut op = vec!["run", "syscall-getpid", "syscall-read-tmpfs"];
    op.extend(budget);
    run_then_show(&sb, &op);
    op.push("--long");
    run_then_show(&sb, &op);

    let oneway = [
        "run",
        "--mode",
        "oneway",
        "pipe",
        "--sizes",
        "64",
        "--messages",
        "20",
        "--window",
        "10",
        "--quick",
    ];
    run_then_show(&sb, &oneway);
    let mut long = oneway.to_vec();
    long.push("--long");
    run_then_show(&sb, &long);

    // A curve of one rate, one round.
    let rate = [
        "run", "--mode", "rate", "pipe", "--rates", "2k", "--quick", "--passes", "1",
    ];
    run_then_show(&sb, &rate);
}

#[test]
fn a_report_file_shows_as_its_run_and_a_damaged_one_is_refused() {
    let sb = Sandbox::new();
    // A report of every mode shows without measuring anything.
    for name in [
        "ipc-quick",
        "op",
        "oneway",
        "periodic",
        "score",
        "stream",
        "rate",
        "load-sweep",
    ] {
        let file = format!("{}/tests/reports/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let shown = sb.run(&["show", &file], Duration::from_secs(30));
        assert!(shown.status.success(), "{name}: {}", stderr(&shown));
        let page = stdout(&shown);
        assert!(page.starts_with("ipcmark "), "{name}: {page}");
    }
    // A run report whose figure lacks its mode is refused with one line, exit 2.
    let bad = sb.path("bad.json");
    std::fs::write(
        &bad,
        r#"{"schema": "ipcmark.run/1", "results": [{"benchmark": "pipe"}]}"#,
    )
    .unwrap();
    let shown = sb.run(&["show", bad.to_str().unwrap()], Duration::from_secs(30));
    assert_eq!(shown.status.code(), Some(2), "{}", stderr(&shown));
    assert_eq!(stderr(&shown).lines().count(), 1, "{}", stderr(&shown));
    assert!(stdout(&shown).is_empty());
}

/// `ipcmark workload` then `show last` print one page: the page the
/// workload printed at its end is drawn from its report, as `show` draws
/// it from the stored one.
#[test]
fn show_last_prints_the_page_the_workload_printed() {
    let _g = serial();
    let sb = Sandbox::new();
    let db = sb.path("h.sqlite");
    let db = db.to_str().unwrap();
    let ran = sb.run(
        &[
            "workload",
            "philosophers",
            "--runs",
            "1",
            "--duration",
            "300ms",
            "--think",
            "1ms",
            "--eat",
            "1ms",
            "--db",
            db,
        ],
        Duration::from_secs(120),
    );
    assert!(ran.status.success(), "{}", stderr(&ran));
    let shown = sb.run(&["show", "last", "--db", db], Duration::from_secs(30));
    assert!(shown.status.success(), "{}", stderr(&shown));
    let (page, again) = (stdout(&ran), stdout(&shown));
    assert!(page.contains("philosophers: 5 philosophers"), "{page}");
    assert_eq!(page, again, "workload:\n{page}\nshow:\n{again}");
    assert!(
        stderr(&shown).starts_with("run 1: started "),
        "{}",
        stderr(&shown)
    );
}
