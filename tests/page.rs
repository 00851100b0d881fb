//! The page `ipcmark run` prints: by default one row per mechanism and one
//! column per size, the cost model beside it, notes as footnotes and the
//! precision on one line, all of it (warnings too) in 60 lines of 120
//! columns; `--long`: every figure's own row, as before. Plain text when
//! stdout is not a terminal, and no progress bar when stderr is not one.

use crate::util::*;
use std::time::Duration;

/// Lines `text` takes on a terminal `width` columns wide (a longer line wraps).
fn screen_lines(text: &str, width: usize) -> usize {
    text.lines()
        .map(|l| l.chars().count().div_ceil(width).max(1))
        .sum()
}

/// The page's name for a size, as its column header: 64, 1K, notify.
fn size_label(bytes: u64) -> String {
    match bytes {
        0 => "notify".into(),
        b if b >= 1024 && b % 1024 == 0 => format!("{}K", b / 1024),
        b => b.to_string(),
    }
}

/// A cell holding a figure: a number, `*` after the column's lowest (beyond
/// its interval), `=` after the lowest figures not told apart.
fn number(cell: &str) -> Option<f64> {
    cell.trim_end_matches(['*', '=']).parse().ok()
}

#[test]
fn the_default_page_is_a_matrix_that_fits_in_60_lines_of_120_columns() {
    let _g = serial();
    let sb = Sandbox::new();
    // The default run's mechanisms and sizes, on a short budget: 2 passes,
    // so each figure has an interval.
    let ran = Run::new(&sb, &["run", "--samples", "2", "--max-time", "0"])
        .args(&["--sample-time", "2ms", "--passes", "2"])
        .json()
        .schema()
        .limit(Duration::from_secs(400))
        .ok();
    let (page, err) = (&ran.stdout, &ran.stderr);
    let whole = format!("{page}{err}");
    let lines = screen_lines(&whole, 120);
    assert!(lines <= 60, "{lines} lines at 120 columns:\n{whole}");
    assert!(
        page.lines().all(|l| l.chars().count() <= 120),
        "a line wider than 120 columns:\n{page}"
    );
    // Not a terminal: no colour, and no progress bar on stderr.
    assert!(!whole.contains('\u{1b}'), "{whole:?}");
    assert!(
        !err.contains("ETA") && !err.contains('\r'),
        "progress drawn on a pipe:\n{err}"
    );
    assert!(err.lines().all(|l| l.starts_with("warning: ")), "{err}");

    let (header, rows) = matrix(page, "one-way µs");
    for size in ["1", "64", "1K", "4K", "16K", "64K"] {
        assert!(header.contains(&size.to_string()), "{size}: {header:?}");
    }
    let ids = group_ids("ipc");
    let labels: Vec<&str> = rows.iter().map(|(l, _)| l.as_str()).collect();
    for id in &ids {
        assert_eq!(
            labels.iter().filter(|l| **l == id.as_str()).count(),
            1,
            "{id}: one row each:\n{page}"
        );
    }
    // Each figure in its row, under its size: a number when measured, a
    // mark otherwise, never a number for a figure without one.
    let report = &ran.report;
    for r in results(report) {
        let id = r["benchmark"].as_str().unwrap();
        let col = header
            .iter()
            .position(|h| *h == size_label(uint(&r["size_bytes"])))
            .unwrap_or_else(|| panic!("no column for {r}"));
        let (_, cells) = rows.iter().find(|(l, _)| l == id).unwrap();
        let cell = &cells[col - 1];
        match r["status"].as_str().unwrap() {
            "ok" => {
                let shown = number(cell).unwrap_or_else(|| panic!("{id}: {cell:?}\n{page}"));
                let median = r["latency_ns"]["median"].as_f64().unwrap() / 1e3;
                assert!(
                    (shown - median).abs() <= 0.01 * median + 0.005,
                    "{id}: {cell} for {median}"
                );
            }
            "skipped" => assert!(cell.starts_with("n/a"), "{id}: {cell:?}"),
            "below_resolution" => assert_eq!(cell, "<res", "{id}"),
            other => panic!("{id}: {other}"),
        }
    }
    // A column marks its lowest figure `*` (beyond its interval) or its
    // tied lowest figures `=` (two or more), never both, and only the lowest;
    // the legend says what each mark used means.
    let (mut best, mut tied) = (false, false);
    for col in 1..header.len() - 2 {
        let cells: Vec<&str> = rows.iter().map(|(_, c)| c[col - 1].as_str()).collect();
        let lowest = cells
            .iter()
            .filter_map(|c| number(c))
            .fold(f64::INFINITY, f64::min);
        let stars: Vec<&&str> = cells.iter().filter(|c| c.ends_with('*')).collect();
        let ties = cells.iter().filter(|c| c.ends_with('=')).count();
        assert!(
            stars.len() <= 1 && (ties == 0 || ties >= 2),
            "column {}:\n{page}",
            header[col]
        );
        assert!(
            stars.is_empty() || ties == 0,
            "column {}:\n{page}",
            header[col]
        );
        if let Some(star) = stars.first() {
            assert_eq!(
                number(star),
                Some(lowest),
                "column {}:\n{page}",
                header[col]
            );
        }
        best |= !stars.is_empty();
        tied |= ties > 0;
    }
    assert_eq!(page.contains("* lowest in its column"), best, "{page}");
    assert_eq!(
        page.contains("= tied lowest in its column: within each other's interval"),
        tied,
        "{page}"
    );
    // The cost model beside the figures it was fitted on.
    assert_eq!(header[header.len() - 2..], ["setup µs", "per-B ns"]);
    for m in report["cost_models"].as_array().unwrap() {
        let id = m["benchmark"].as_str().unwrap();
        let (_, cells) = rows.iter().find(|(l, _)| l == id).unwrap();
        let setup = m["segments"][0]["setup_ns"].as_f64().unwrap() / 1e3;
        let shown: f64 = cells[cells.len() - 2].parse().unwrap();
        assert!((shown - setup).abs() <= 0.01 * setup.abs() + 0.005, "{id}");
    }
    // Footnotes, once each: a note such as where fifo's FIFOs live.
    let fifo = results(report)
        .iter()
        .find_map(|r| (r["benchmark"] == "fifo").then(|| r["note"].as_str()))
        .flatten()
        .expect("fifo says where its FIFOs are");
    assert_eq!(page.matches(fifo).count(), 1, "{page}");
    // The precision once, not per row: each figure's own interval, the
    // machine's level apart on a line of its own (docs/trust.md).
    let precision: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("intervals (95%, own): ±"))
        .collect();
    assert_eq!(precision.len(), 1, "{page}");
    assert!(precision[0].contains("over 2 passes"), "{}", precision[0]);
    let level: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("machine level: ±"))
        .collect();
    assert_eq!(level.len(), 1, "{page}");
    assert!(
        report["level"]["factors"].as_array().unwrap().len() == 2,
        "{report}"
    );
    // The machine's checks on one line, under the header.
    assert_eq!(
        page.lines().filter(|l| l.starts_with("machine: ")).count(),
        1,
        "{page}"
    );
    assert!(
        report["pass_checks"].as_array().unwrap().len() == 2,
        "{report}"
    );
    assert!(!page.contains("spread"), "{page}");
}

#[test]
fn long_keeps_every_figures_own_row_and_the_cost_model_table() {
    let _g = serial();
    let sb = Sandbox::new();
    let run = |extra: &[&str]| {
        Run::new(&sb, &["run", "pipe"])
            .sizes("1,64,1K")
            .args(&["--samples", "2", "--max-time", "0"])
            .args(&["--sample-time", "2ms", "--passes", "1"])
            .args(extra)
            .json()
            .schema()
            .limit(Duration::from_secs(60))
            .ok()
    };
    let long = run(&["--long"]).stdout;
    for column in [
        "mean one-way µs",
        "p99 single µs",
        "MB/s",
        "notes",
        "per-byte ns",
        "R²",
    ] {
        assert!(long.contains(column), "{column}:\n{long}");
    }
    // pipe's three figures, a row each, its name on the first.
    let sizes: Vec<String> = long
        .lines()
        .filter_map(|l| {
            let c: Vec<&str> = l.trim_matches('│').split('┆').map(str::trim).collect();
            (c.len() == 6 && (c[0] == "pipe" || c[0].is_empty()) && !c[1].is_empty())
                .then(|| c[1].to_string())
        })
        .collect();
    assert_eq!(sizes, ["1", "64", "1K"], "{long}");
    let short = run(&[]).stdout;
    assert!(!short.contains("mean one-way µs"), "{short}");
    let (header, rows) = matrix(&short, "one-way µs");
    assert_eq!(
        header,
        ["one-way µs", "1", "64", "1K", "setup µs", "per-B ns"]
    );
    assert_eq!(rows.len(), 1, "{short}");
    assert!(
        rows[0].1[..3].iter().all(|c| number(c).is_some()),
        "{short}"
    );
}
