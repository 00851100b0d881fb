//! `ipcmark report RUN… --html FILE`: the page of two real runs (and of a
//! map, explained runs, a rate run, the history, a tax report, a fleet) opens offline in headless
//! Chromium with every chart drawn, no error and no request (the page's own
//! self-check, read from the dumped DOM), and its screenshot is kept under
//! target/test-artefacts/; bad usage exits 2.

use crate::util::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Where the test keeps what a person may want to look at: target/test-artefacts/.
fn artefacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("test-artefacts");
    std::fs::create_dir_all(&dir).expect("create target/test-artefacts");
    dir
}

/// A line on the test's stderr that `cargo test` shows even for a passing
/// test: written to the handle, which the test harness does not capture
/// (it captures only `eprintln!`).
fn shout(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n{line}");
}

/// The Chromium binary on PATH, if any (Debian's package names it `chromium`).
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// Headless Chromium on `page` with `extra` arguments: no sandbox (root),
/// no GPU, nothing fetched in the background, a private profile.
fn headless(browser: &Path, profile: &Path, page: &Path, extra: &[String]) -> std::process::Output {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--virtual-time-budget=5000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    wait_with_deadline(c.spawn().expect("start chromium"), Duration::from_secs(90))
}

/// The JSON the page's script wrote into `<pre id="selfcheck">`.
fn selfcheck(dom: &str) -> Value {
    let start = dom
        .find("<pre id=\"selfcheck\"")
        .unwrap_or_else(|| panic!("no self-check in the page:\n{dom}"));
    let body = &dom[start..];
    let body = &body[body.find('>').unwrap() + 1..body.find("</pre>").unwrap()];
    let text = body
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("self-check is not JSON ({e}): {text}"))
}

/// Takes a screenshot of `page` (`size`: "W,H") as artefacts/`name`, a
/// PNG, and says where it is, so that it can be looked at.
fn screenshot(browser: &Path, profile: &Path, page: &Path, name: &str, size: &str) {
    let shot = artefacts().join(name);
    let _ = std::fs::remove_file(&shot);
    let out = headless(
        browser,
        profile,
        page,
        &[
            format!("--screenshot={}", shot.display()),
            format!("--window-size={size}"),
        ],
    );
    let png = std::fs::read(&shot).unwrap_or_else(|e| {
        panic!(
            "no screenshot at {} ({e}): {}",
            shot.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    shout(&format!(
        "screenshot: {} (page: {})",
        shot.display(),
        page.display()
    ));
}

#[test]
fn the_report_of_two_runs_draws_every_chart_offline_in_chromium() {
    let _g = serial();
    let sb = Sandbox::new();
    let runs = [sb.path("a.json"), sb.path("b.json")];
    for json in &runs {
        Run::new(&sb, &["run", "pipe", "unix-stream"])
            .sizes("8,1K,64K")
            .json_at(json)
            .short()
            .ok();
    }
    let page = artefacts().join("report.html");
    let ran = Run::new(&sb, &["report"])
        .args(&[runs[0].to_str().unwrap(), runs[1].to_str().unwrap()])
        .args(&["--html", page.to_str().unwrap()])
        .limit(Duration::from_secs(20))
        .ok();
    assert!(ran.stdout.contains("(2 runs, 4 charts)"), "{}", ran.stdout);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Run B against run A"));
    assert!(html.contains("Latency against message size"));

    let Some(browser) = chromium() else {
        shout(
            "*** SKIPPED: chromium is not installed, so the page was not rendered \
             (apt-get install chromium; .ci/run installs it) ***",
        );
        return;
    };
    let profile = sb.path("chromium-profile");
    let dom = headless(&browser, &profile, &page, &["--dump-dom".into()]);
    let check = selfcheck(&String::from_utf8_lossy(&dom.stdout));
    let charts = check["charts"].as_array().unwrap();
    // Each run: latency against size and the latency distribution.
    assert_eq!(charts.len(), 4, "{check:#}");
    assert_eq!(check["expected_charts"], 4, "{check:#}");
    for c in charts {
        assert_eq!(c["drawn"], true, "chart not drawn: {c}");
    }
    assert_eq!(check["errors"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["csp_violations"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["requests"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["ok"], true, "{check:#}");

    screenshot(&browser, &profile, &page, "report.png", "1200,2400");
}

#[test]
fn the_report_of_a_map_draws_a_heat_map_per_mechanism_in_chromium() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("map.json");
    let map = Run::new(&sb, &["map", "pipe", "shm-spin"])
        .args(SHORT)
        .json_at(&json)
        .ok();
    let pairs = map.report["settings"]["map"]["pairs"]
        .as_array()
        .unwrap()
        .len();
    let page = artefacts().join("map-report.html");
    Run::new(
        &sb,
        &[
            "report",
            json.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ],
    )
    .limit(Duration::from_secs(20))
    .ok();
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        html.matches("<svg class=\"heatmap\"").count(),
        2,
        "one per mechanism"
    );
    assert!(html.contains("<h4>Classes</h4>"));
    let Some(browser) = chromium() else {
        shout(
            "*** SKIPPED: chromium is not installed, so the map's page was not rendered \
             (apt-get install chromium; .ci/run installs it) ***",
        );
        return;
    };
    let profile = sb.path("chromium-profile");
    let dom = headless(&browser, &profile, &page, &["--dump-dom".into()]);
    let check = selfcheck(&String::from_utf8_lossy(&dom.stdout));
    let heat: Vec<&Value> = check["static_charts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "heatmap")
        .collect();
    assert_eq!(heat.len(), 2, "{check:#}");
    for h in heat {
        // A square for every pair measured or skipped.
        assert_eq!(h["marks"], pairs, "{check:#}");
    }
    assert_eq!(check["errors"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["requests"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["ok"], true, "{check:#}");
}

/// A short rate run of two mechanisms at two rates: its report has the
/// latency-against-load section with one chart (64 B), a line per
/// mechanism, drawn in Chromium with the page's self-check passing, and a
/// screenshot kept beside the page.
#[test]
fn the_report_of_a_rate_run_draws_latency_against_offered_load_in_chromium() {
    let _g = serial();
    let sb = Sandbox::new();
    let json = sb.path("rate.json");
    Run::new(
        &sb,
        &[
            "run",
            "pipe",
            "unix-stream",
            "--mode",
            "rate",
            "--rates",
            "1k,4k",
        ],
    )
    .sizes("64")
    .quick()
    .no_save()
    .json_at(&json)
    .limit(Duration::from_secs(180))
    .ok();
    let page = artefacts().join("rate-report.html");
    let ran = Run::new(
        &sb,
        &[
            "report",
            json.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ],
    )
    .limit(Duration::from_secs(20))
    .ok();
    assert!(ran.stdout.contains("(1 run, 1 chart)"), "{}", ran.stdout);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Latency against offered load"));
    // The data block: one rate chart at the two rates, a line per mechanism.
    let data = html.split("id=\"report-data\">").nth(1).unwrap();
    let data: Value = serde_json::from_str(&data[..data.find("</script>").unwrap()]).unwrap();
    let charts = data["charts"].as_array().unwrap();
    assert_eq!(charts.len(), 1, "{data:#}");
    assert_eq!(charts[0]["kind"], "rate");
    assert_eq!(charts[0]["x"], serde_json::json!([1000.0, 4000.0]));
    let labels: Vec<&str> = charts[0]["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["pipe", "unix-stream"]);
    // The table beneath: a row per mechanism and rate.
    for row in [
        "<td>pipe</td><td class=\"num\">1k</td>",
        "<td>unix-stream</td><td class=\"num\">4k</td>",
    ] {
        assert!(html.contains(row), "{row}");
    }
    let Some(browser) = chromium() else {
        shout(
            "*** SKIPPED: chromium is not installed, so the rate run's page was not rendered \
             (apt-get install chromium; .ci/run installs it) ***",
        );
        return;
    };
    let profile = sb.path("chromium-profile");
    let dom = headless(&browser, &profile, &page, &["--dump-dom".into()]);
    let check = selfcheck(&String::from_utf8_lossy(&dom.stdout));
    let rate: Vec<&Value> = check["charts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "rate")
        .collect();
    assert_eq!(rate.len(), 1, "{check:#}");
    assert_eq!(rate[0]["drawn"], true, "{check:#}");
    assert_eq!(rate[0]["percentile"], "p99", "{check:#}");
    assert_eq!(check["errors"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["csp_violations"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["requests"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["ok"], true, "{check:#}");

    screenshot(&browser, &profile, &page, "rate-report.png", "1200,1400");
}

/// Two explained runs (tests/reports/explain-a.json, explain-b.json): one
/// stacked bar per explained figure, a segment per part that took time,
/// drawn in Chromium with the page's selfcheck passing.
#[test]
fn the_report_of_explained_runs_stacks_each_figures_parts_in_chromium() {
    let _g = serial();
    let sb = Sandbox::new();
    let (a, b) = (
        "tests/reports/explain-a.json",
        "tests/reports/explain-b.json",
    );
    let page = artefacts().join("explain-report.html");
    Run::new(&sb, &["report", a, b, "--html", page.to_str().unwrap()])
        .limit(Duration::from_secs(20))
        .ok();
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        html.matches("<svg class=\"stacked\"").count(),
        2,
        "one per run's figure"
    );
    assert!(html.contains("Anatomy of a round trip"));
    assert!(html.contains("residual"));
    // The segments drawn: each run's parts with a positive mean.
    let positive = |p: &str| -> usize {
        let r: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        r["results"][0]["explain"]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["mean_ns"].as_f64().unwrap() > 0.0)
            .count()
    };
    let expected = [positive(a), positive(b)];
    let Some(browser) = chromium() else {
        shout(
            "*** SKIPPED: chromium is not installed, so the anatomy's page was not rendered \
             (apt-get install chromium; .ci/run installs it) ***",
        );
        return;
    };
    let profile = sb.path("chromium-profile");
    let dom = headless(&browser, &profile, &page, &["--dump-dom".into()]);
    let check = selfcheck(&String::from_utf8_lossy(&dom.stdout));
    let marks: Vec<usize> = check["static_charts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "stacked")
        .map(|c| c["marks"].as_u64().unwrap() as usize)
        .collect();
    assert_eq!(marks, expected, "{check:#}");
    assert_eq!(check["errors"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["csp_violations"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["ok"], true, "{check:#}");
}

/// A tax report (tests/reports/tax.json: pipe 64 B and syscall-getpid
/// under three layers): a page of its own, a grouped bar chart per ledger
/// table with a bar per cell that has a difference (hollow where the test
/// found none) and a mark per cell without, drawn in Chromium with the
/// page's self-check passing, and a screenshot kept beside the page.
#[test]
fn the_report_of_a_tax_draws_a_grouped_bar_chart_in_chromium() {
    let sb = Sandbox::new();
    let json = "tests/reports/tax.json";
    let page = artefacts().join("tax-report.html");
    let ran = Run::new(&sb, &["report", json, "--html", page.to_str().unwrap()])
        .limit(Duration::from_secs(20))
        .ok();
    // A table per size: the fixture's operations and its messages.
    let tax = read_json(Path::new(json));
    let rows = tax["rows"].as_array().unwrap();
    let mut sizes: Vec<u64> = rows
        .iter()
        .map(|r| r["size_bytes"].as_u64().unwrap())
        .collect();
    sizes.sort();
    sizes.dedup();
    assert!(
        ran.stdout
            .contains(&format!("(tax report, {} charts)", sizes.len())),
        "{}",
        ran.stdout
    );
    // Per chart, in order: (cells with a difference, of them not significant, without one).
    let expected: Vec<(usize, usize, usize)> = sizes
        .iter()
        .map(|size| {
            let cells: Vec<&Value> = rows
                .iter()
                .filter(|r| r["size_bytes"].as_u64() == Some(*size))
                .flat_map(|r| r["cells"].as_array().unwrap())
                .collect();
            let with: Vec<&&Value> = cells.iter().filter(|c| c["diff_ns"].is_number()).collect();
            let hollow = with.iter().filter(|c| c["significant"] == false).count();
            (with.len(), hollow, cells.len() - with.len())
        })
        .collect();
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        html.matches("<svg class=\"tax-chart\"").count(),
        sizes.len()
    );
    assert!(html.contains("ipcmark tax report") && !html.contains("uPlot.min"));
    let Some(browser) = chromium() else {
        shout(
            "*** SKIPPED: chromium is not installed, so the tax report's page was not rendered \
             (apt-get install chromium; .ci/run installs it) ***",
        );
        return;
    };
    let profile = sb.path("chromium-profile");
    let dom = headless(&browser, &profile, &page, &["--dump-dom".into()]);
    let check = selfcheck(&String::from_utf8_lossy(&dom.stdout));
    assert_eq!(check["tax_charts"], sizes.len(), "{check:#}");
    assert_eq!(check["expected_charts"], 0, "{check:#}");
    let drawn: Vec<(usize, usize, usize)> = check["static_charts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "tax")
        .map(|c| {
            let n = |k: &str| c[k].as_u64().unwrap() as usize;
            (n("bars"), n("hollow"), n("marks") - n("bars"))
        })
        .collect();
    assert_eq!(drawn, expected, "{check:#}");
    assert_eq!(check["errors"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["csp_violations"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["requests"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["ok"], true, "{check:#}");

    screenshot(&browser, &profile, &page, "tax-report.png", "1200,1800");
}

/// A fleet's page (`ipcmark fleet --html`, twenty synthetic hosts, one
/// mis-set): a heat map of hosts × figures drawn in Chromium with the
/// page's self-check passing, and a screenshot kept beside the page.
#[test]
fn the_page_of_a_fleet_draws_its_heat_map_in_chromium() {
    let sb = Sandbox::new();
    let dir = sb.path("reports");
    std::fs::create_dir(&dir).unwrap();
    let files = write_fleet(&dir, 20, Some(7));
    let page = artefacts().join("fleet-report.html");
    let mut argv = vec!["fleet"];
    argv.extend(files.iter().map(|f| f.to_str().unwrap()));
    argv.extend(["--html", page.to_str().unwrap()]);
    Run::new(&sb, &argv).limit(Duration::from_secs(20)).ok();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("ipcmark fleet report") && !html.contains("uPlot.min"));
    let Some(browser) = chromium() else {
        shout(
            "*** SKIPPED: chromium is not installed, so the fleet's page was not rendered \
             (apt-get install chromium; .ci/run installs it) ***",
        );
        return;
    };
    let profile = sb.path("chromium-profile");
    let dom = headless(&browser, &profile, &page, &["--dump-dom".into()]);
    let check = selfcheck(&String::from_utf8_lossy(&dom.stdout));
    assert_eq!(check["expected_charts"], 0, "{check:#}");
    let heat: Vec<u64> = check["static_charts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "heatmap")
        .map(|c| c["marks"].as_u64().unwrap())
        .collect();
    assert_eq!(heat, [20 * 12], "{check:#}");
    assert_eq!(check["errors"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["csp_violations"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["requests"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["ok"], true, "{check:#}");

    screenshot(&browser, &profile, &page, "fleet-report.png", "1200,1600");
}

#[test]
fn report_refuses_bad_usage() {
    let sb = Sandbox::new();
    let out = sb.path("r.html");
    let o = out.to_str().unwrap();
    let text = sb.path("not-a-report.json");
    std::fs::write(&text, "{\"hello\": 1}").unwrap();
    let other = sb.path("other-schema.json");
    std::fs::write(
        &other,
        r#"{"schema": "ipcmark.run/9", "started_at": "", "environment": {"hostname": "", "kernel": ""}, "results": []}"#,
    )
    .unwrap();
    let no_db = sb.path("none.sqlite");
    let cases: &[(&[&str], &str)] = &[
        (
            &["report", "--db", no_db.to_str().unwrap(), "--html", o],
            "none.sqlite",
        ),
        (
            &["report", "missing.json", "--html", o],
            "cannot read missing.json",
        ),
        (
            &["report", text.to_str().unwrap(), "--html", o],
            "is not an ipcmark run report",
        ),
        (
            &["report", other.to_str().unwrap(), "--html", o],
            "has schema 'ipcmark.run/9'",
        ),
        (
            &[
                "report",
                "tests/reports/tax.json",
                "tests/reports/op.json",
                "--html",
                o,
            ],
            "tests/reports/tax.json is a tax report (ipcmark.tax/1)",
        ),
        (&["report", text.to_str().unwrap()], "--html"),
        (
            &[
                "report",
                text.to_str().unwrap(),
                "--html",
                "/nonexistent/r.html",
            ],
            "does not exist",
        ),
    ];
    refused_all(&sb, cases, Some(&out));
}

#[test]
fn the_report_with_the_history_s_change_points_and_advise_renders_cleanly_in_chromium() {
    let sb = Sandbox::new();
    // Forty imported runs, every figure 10% slower from run 21 on.
    let db = crate::watch::history(&sb, 7, 1.10, "6.6.0-test");
    let advise = sb.path("advise.json");
    let host =
        read_json(std::path::Path::new("tests/reports/ipc-quick.json"))["environment"]["hostname"]
            .as_str()
            .unwrap()
            .to_string();
    Run::new(&sb, &["advise", "--size", "64", "--host", &host])
        .db(&db)
        .json_at(&advise)
        .ok();
    let page = artefacts().join("report-history.html");
    Run::new(&sb, &["report", "last", "--watch", "--advise"])
        .arg(advise.display().to_string())
        .args(&["--html", page.to_str().unwrap()])
        .db(&db)
        .ok();
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg class=\"series\"").count(), 4);
    let Some(browser) = chromium() else {
        shout(
            "*** SKIPPED: chromium is not installed, so the history's page was not rendered \
             (apt-get install chromium; .ci/run installs it) ***",
        );
        return;
    };
    let profile = sb.path("chromium-profile");
    let dom = headless(&browser, &profile, &page, &["--dump-dom".into()]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    let check = selfcheck(&dom);
    assert_eq!(check["errors"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["csp_violations"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["requests"], serde_json::json!([]), "{check:#}");
    assert_eq!(check["ok"], true, "{check:#}");
    // The static charts and the ranking reach the rendered page.
    assert_eq!(dom.matches("class=\"change regression\"").count(), 4);
    assert!(dom.contains("advise-ranking"));
}
