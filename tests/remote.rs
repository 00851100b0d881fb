//! Remote figures end to end: `run --remote` against `ipcmark serve` on
//! loopback (any machine, any user) and across the two-host testbed (root):
//! the fields of a local figure, `compare`, the efficiency against the
//! link, an agent or a client that dies mid-run, and the qnx-network
//! preset. Every test holds `serial()`: agents and runs are ipcmark
//! processes, and a testbed must not be cleaned while in use.

use crate::serve::{Served, answers_hello_by, check};
use crate::util::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `--passes 2` and a short budget: enough for `compare` to test passes.
fn budget() -> Vec<&'static str> {
    let mut b = short_budget().to_vec();
    b.extend(["--passes", "2", "--no-save"]);
    b
}

/// The keys of `result`, without `remote` and `sweep` (a local ping-pong
/// figure sampled in rounds with others records its sweep; a remote one is
/// measured alone).
fn keys(result: &Value) -> BTreeSet<String> {
    result
        .as_object()
        .expect("a result object")
        .keys()
        .filter(|k| *k != "remote" && *k != "sweep")
        .cloned()
        .collect()
}

/// A command for ipcmark in the testbed's namespace `exec` made, with the
/// sandbox's TMPDIR and history.
fn in_sandbox(sb: &Sandbox, mut c: Command) -> Command {
    c.env("TMPDIR", sb.dir.path())
        .env("XDG_DATA_HOME", sb.path("data"));
    c
}

/// The two-host testbed at `rate` with an agent in its second namespace,
/// or why this machine cannot have one.
fn testbed_with_agent(rate: &str) -> Result<(TestBed, Served), String> {
    let tb = TestBed::try_new(rate)?;
    let token = tb.token.to_str().unwrap().to_string();
    let mut c = tb.exec_b(&["serve", "--listen", &tb.agent_ip, "--token-file", &token]);
    c.stderr(Stdio::piped());
    let served = Served::spawn(c);
    Ok((tb, served))
}

#[test]
fn remote_pingpong_has_the_fields_of_a_local_figure_and_two_runs_compare() {
    let _g = serial();
    let sb = Sandbox::new();
    // Across the unshaped testbed where namespaces can be made, else over
    // loopback: the same figures either way.
    let (bed, served) = match testbed_with_agent("none") {
        Ok((tb, s)) => (Some(tb), s),
        Err(why) => {
            eprintln!("no testbed ({why}): over loopback");
            (None, Served::start(&sb, &[]))
        }
    };
    let place = bed
        .as_ref()
        .map_or("loopback".into(), |tb| format!("testbed {}", tb.name));
    let token = bed
        .as_ref()
        .map(|tb| tb.token.to_str().unwrap().to_string());
    let spec = served.spec();
    let local = Run::new(&sb, &["run", "tcp"])
        .sizes("64,1K")
        .args(&budget())
        .json()
        .schema()
        .ok();
    let mut reports = Vec::new();
    for name in ["a.json", "b.json"] {
        let json = sb.path(name);
        let mut run = Run::new(&sb, &["run", "tcp", "udp", "--remote", &spec])
            .sizes("64,1K")
            .args(&budget())
            .json_at(&json)
            .schema();
        if let Some(t) = &token {
            run = run.args(&["--token-file", t]);
        }
        if let Some(tb) = &bed {
            run = run.by(|a| in_sandbox(&sb, tb.exec_a(a)));
        }
        let ran = run.run();
        assert!(
            ran.status.success(),
            "{place}: {}\n{}",
            ran.stdout,
            ran.stderr
        );
        let report = &ran.report;
        assert_eq!(report["remote"]["agent"], spec.as_str(), "{place}");
        assert!(report["remote"]["agent_environment"]["kernel"].is_string());
        for r in results(report) {
            assert_eq!(r["status"], "ok", "{place}: {r}");
            assert_eq!(r["mode"], "pingpong");
            assert_eq!(r["remote"]["agent"], spec.as_str());
            let twin = results(&local.report)
                .iter()
                .find(|l| l["size_bytes"] == r["size_bytes"])
                .expect("the local figure of the same size");
            assert_eq!(
                keys(r),
                keys(twin),
                "{place}: a remote figure has the local fields"
            );
            assert!(uint(&r["verified_round_trips"]) > 0);
        }
        reports.push(json);
    }
    let (a, b) = (reports[0].to_str().unwrap(), reports[1].to_str().unwrap());
    let page = Run::new(&sb, &["compare", a, b])
        .limit(Duration::from_secs(30))
        .ok()
        .stdout;
    assert!(page.contains("tcp") && page.contains("udp"), "{page}");
}

#[test]
fn streams_across_a_10_mbit_testbed_reach_the_links_maximum_and_say_so() {
    let _g = serial();
    let (tb, served) = match testbed_with_agent("10M") {
        Ok(x) => x,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let sb = Sandbox::new();
    let token = tb.token.to_str().unwrap();
    let spec = served.spec();
    let ran = Run::new(&sb, &["run", "tcp", "udp", "--remote", &spec])
        .args(&["--token-file", token, "--mode", "stream"])
        .sizes("16K")
        .no_save()
        .json()
        .schema()
        .by(|a| in_sandbox(&sb, tb.exec_a(a)))
        .ok();
    let page = &ran.stdout;
    for r in results(&ran.report) {
        let name = r["benchmark"].as_str().unwrap();
        assert_eq!(r["status"], "ok", "{r}");
        let remote = &r["remote"];
        assert_eq!(remote["direction"], "send");
        assert_eq!(remote["link"]["bits_per_s"], 10_000_000, "{remote}");
        assert_eq!(remote["link"]["shaper"], true);
        let eff = remote["efficiency"].as_f64().expect("an efficiency");
        let max = remote["limit"]["max_bytes_per_s"].as_f64().unwrap();
        let mbs = r["throughput_bytes_per_s"].as_f64().unwrap();
        // The printed efficiency is the MB/s over the maximum, exactly.
        assert!((eff - mbs / max).abs() < 1e-9, "{eff} vs {mbs} / {max}");
        // tbf's rate arithmetic may pass the nominal rate by a hair.
        assert!((0.85..=1.005).contains(&eff), "{name}: efficiency {eff}");
        let v = eff * 100.0;
        let shown = format!("{v:.1}");
        let shown = shown.trim_end_matches('0').trim_end_matches('.');
        let row = page
            .lines()
            .find(|l| l.contains(&format!(" {name} ")) && l.contains("stream send"))
            .unwrap_or_else(|| panic!("no row for {name}:\n{page}"));
        assert!(
            row.contains(&format!("{shown}%")),
            "{row} should print {shown}%"
        );
    }
    drop(served);
}

/// Starts a remote run of tcp, then udp, against `served` writing `json`,
/// in one pass (a failure in a later pass would fail the figure); waits
/// until tcp's figures are saved, while udp's are being measured.
fn long_remote_run(sb: &Sandbox, served: &Served, json: &Path) -> std::process::Child {
    let spec = served.spec();
    let mut argv = vec![
        "run",
        "tcp",
        "udp",
        "--remote",
        &spec,
        "--sizes",
        "64,1K,4K,16K,64K",
    ];
    argv.extend([
        "--passes",
        "1",
        "--no-save",
        "--json",
        json.to_str().unwrap(),
    ]);
    let child = sb.cmd(&argv).spawn().expect("spawn ipcmark run");
    assert!(
        eventually(Duration::from_secs(60), || std::fs::read_to_string(json)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|r| !results(&r).is_empty())),
        "the run saved no figure"
    );
    child
}

#[test]
fn killing_the_agent_mid_run_ends_the_client_with_what_it_measured() {
    let _g = serial();
    let sb = Sandbox::new();
    let served = Served::start(&sb, &[]);
    let json = sb.path("k.json");
    let client = long_remote_run(&sb, &served, &json);
    let out = served.stop(libc::SIGKILL);
    assert!(!out.status.success());
    let killed = Instant::now();
    let out = wait_with_deadline(client, Duration::from_secs(30));
    let took = killed.elapsed();
    eprintln!("the client ended {took:?} after the agent was killed");
    // The deadline: a dead agent is seen at the next look around
    // (every 100 ms) of whatever wait the client is in.
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let report = read_json(&json);
    let errors = schema_errors(RUN_SCHEMA, &report);
    assert!(errors.is_empty(), "{errors:#?}");
    let all = results(&report);
    assert!(
        all.iter().any(|r| r["status"] == "ok"),
        "what was measured is kept"
    );
    let failed: Vec<&Value> = all.iter().filter(|r| r["status"] == "failed").collect();
    assert!(!failed.is_empty());
    assert!(
        failed.iter().all(
            |r| r["error"].as_str().unwrap().contains(&served_addr(&report))
                || r["error"].as_str().unwrap().contains("closed")
        ),
        "{failed:#?}"
    );
}

/// The agent's address as the report records it.
fn served_addr(report: &Value) -> String {
    report["remote"]["agent"].as_str().unwrap().to_string()
}

#[test]
fn killing_the_client_mid_run_frees_the_agent_for_the_next_within_2_s() {
    let _g = serial();
    let sb = Sandbox::new();
    let mut served = Served::start(&sb, &[]);
    let json = sb.path("c.json");
    let client = long_remote_run(&sb, &served, &json);
    signal(client.id(), libc::SIGKILL);
    let killed = Instant::now();
    let _ = wait_with_deadline(client, Duration::from_secs(10));
    assert!(
        answers_hello_by(served.addr, killed + Duration::from_secs(2)),
        "the agent did not serve again within 2 s: {}",
        served.log()
    );
    let out = check(&sb, &served.spec(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    served.assert_alive();
}

#[test]
fn the_qnx_network_preset_prints_the_studys_table_from_its_own_testbed() {
    let _g = serial();
    if TestBed::try_new("none").is_err() {
        eprintln!("skipped: no network namespaces here");
        return;
    }
    let sb = Sandbox::new();
    // The preset's own testbed and agent, with the shortest budget.
    let ran = Run::new(&sb, &["run", "--preset", "qnx-network"])
        .sizes("1,1024,15369")
        .short()
        .no_save()
        .json()
        .schema()
        .limit(Duration::from_secs(600))
        .ok();
    let page = &ran.stdout;
    let table: Vec<&str> = page
        .lines()
        .skip_while(|l| !l.starts_with("QNX 4 IPC study (1998), Table 4 (network"))
        .collect();
    assert!(!table.is_empty(), "{page}");
    for column in [
        "message in network",
        "pipe in network",
        "messages, MB/s",
        "pipe, MB/s",
    ] {
        assert!(table[2].contains(column), "{}", table[2]);
    }
    let rows: Vec<&&str> = table
        .iter()
        .filter(|l| l.starts_with('│') && l.split('┆').count() == 5)
        .skip(1)
        .collect();
    // The study's 18 rows, those of the sizes run filled in.
    assert_eq!(rows.len(), 18, "{page}");
    let filled: Vec<&&&str> = rows.iter().filter(|r| !r.contains(" - ")).collect();
    assert_eq!(filled.len(), 3, "{page}");
    // Streams have an efficiency against the link (1 B cannot stream);
    // ping-pong over a shaper none.
    assert!(filled.iter().skip(1).all(|r| r.contains('%')), "{page}");
    for r in results(&ran.report) {
        let remote = &r["remote"];
        assert_eq!(remote["link"]["bits_per_s"], 10_000_000);
        match r["mode"].as_str().unwrap() {
            "pingpong" => assert!(remote["efficiency"].is_null()),
            "stream" if r["status"] == "ok" => assert!(remote["efficiency"].is_number()),
            _ => {}
        }
    }
    // The run's testbed is gone with it.
    let left = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let ours = format!("ipcmark-run{}-", ran.pid);
    assert!(!stdout(&left).contains(&ours), "{}", stdout(&left));
}

#[test]
fn an_unprivileged_user_runs_an_agent_and_remote_figures_in_every_mode() {
    let _g = serial();
    let Some(nobody) =
        Nobody::or_skip("an_unprivileged_user_runs_an_agent_and_remote_figures_in_every_mode")
    else {
        return;
    };
    let sb = Sandbox::new();
    let served = Served::spawn(nobody.cmd(&sb, &["serve", "--listen", "127.0.0.1:0"]));
    let spec = served.spec();
    for mode in ["pingpong", "stream", "oneway"] {
        let ran = Run::new(&sb, &["run", "tcp", "udp", "--remote", &spec])
            .sizes("64")
            .args(&["--mode", mode, "--link-speed", "1G"])
            .short()
            .no_save()
            .json()
            .schema()
            .nobody(&nobody)
            .ok();
        for r in results(&ran.report) {
            assert_eq!(r["status"], "ok", "{mode}: {r}");
            assert_eq!(r["remote"]["link"]["source"], "--link-speed");
            assert!(r["remote"]["efficiency"].is_number(), "{mode}: {r}");
            if mode == "oneway" {
                let clock = &r["remote"]["clock"];
                assert!(clock["uncertainty_ns"].as_f64().unwrap() >= 0.0, "{clock}");
                assert_eq!(uint(&r["messages_sent"]), uint(&r["messages_received"]));
            }
        }
    }
}

#[test]
fn a_network_preset_stopped_mid_run_removes_its_testbed_and_agent() {
    let _g = serial();
    if TestBed::try_new("none").is_err() {
        eprintln!("skipped: no network namespaces here");
        return;
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let sb = Sandbox::new();
        let mut argv = vec!["run", "--preset", "qnx-network", "--sizes", "1024,15369"];
        argv.extend(SHORT);
        argv.push("--no-save");
        let child = sb.cmd(&argv).spawn().expect("spawn ipcmark run");
        let pid = child.id();
        let ours = format!("ipcmark-run{pid}-a");
        let netns = || stdout(&Command::new("ip").args(["netns", "list"]).output().unwrap());
        assert!(
            eventually(Duration::from_secs(30), || netns().contains(&ours)),
            "the preset made no testbed"
        );
        // Mid-figure: the agent has forked a figure's child.
        std::thread::sleep(Duration::from_millis(1500));
        signal(pid, sig);
        let out = wait_with_deadline(child, Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(128 + sig), "{}", stderr(&out));
        assert!(
            !netns().contains(&format!("ipcmark-run{pid}-")),
            "{}",
            netns()
        );
        let token = format!("testbed-ipcmark-run{pid}.token");
        let agents: Vec<u32> = ipcmark_processes()
            .into_iter()
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| c.contains(&token))
            })
            .collect();
        assert!(agents.is_empty(), "agents left: {agents:?}");
        assert!(!Path::new(&format!("/run/ipcmark/{token}")).exists());
    }
}

#[test]
fn a_remote_oneway_figure_whose_report_cannot_fit_a_frame_is_refused_before_it_starts() {
    let _g = serial();
    let sb = Sandbox::new();
    // Nothing listens at port 1: the refusal comes before any connection.
    for extra in [
        &["--messages", "10000000"][..],
        &["--window", "1000000"][..],
    ] {
        let ran = Run::new(&sb, &["run", "udp", "--remote", "127.0.0.1:1"])
            .args(&["--mode", "oneway"])
            .no_save()
            .args(extra)
            .limit(Duration::from_secs(30))
            .exits(2);
        let err = &ran.stderr;
        assert_eq!(err.lines().count(), 1, "{err}");
        // (16 MiB − 64 KiB of the report's other fields) ÷ 21 bytes a stamp.
        assert!(
            err.contains("a one-way figure times at most 795794 messages"),
            "{err}"
        );
        assert!(ran.stdout.is_empty(), "{}", ran.stdout);
    }
}
