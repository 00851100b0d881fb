//! What a packaged ipcmark ships beside the binary, and how a build is
//! identified: `--version` and every JSON report's `build` object name the
//! git commit.

use crate::util::*;
use serde_json::Value;
use std::time::Duration;

/// The commit `ipcmark --version` names: its word after "commit".
fn version_commit() -> (String, String) {
    let sb = Sandbox::new();
    let out = sb.run(&["--version"], Duration::from_secs(20));
    assert!(out.status.success(), "{}", stderr(&out));
    let line = stdout(&out);
    assert_eq!(line.lines().count(), 1, "{line:?}");
    let commit = line
        .split_once("(commit ")
        .and_then(|(_, rest)| rest.split([',', ';', ')']).next())
        .unwrap_or_else(|| panic!("no commit in {line:?}"))
        .to_string();
    (line.trim_end().to_string(), commit)
}

fn is_commit(c: &str) -> bool {
    c == "unknown" || (matches!(c.len(), 40 | 64) && c.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The commit of the checkout the tests run in, if git can say.
fn checkout_commit() -> Option<String> {
    if !std::path::Path::new(".git").exists() {
        return None;
    }
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn version_names_the_commit_and_the_features() {
    let (line, commit) = version_commit();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        line.starts_with(&format!("ipcmark {version} (commit ")),
        "{line}"
    );
    assert!(is_commit(&commit), "{line}: {commit:?} is not a commit");
    let features = if cfg!(feature = "mpi") { "mpi" } else { "none" };
    assert!(
        line.ends_with(&format!("; features: {features})")),
        "{line}"
    );
    // Built from this checkout (cargo re-runs the build script when HEAD moves).
    if let Some(head) = checkout_commit() {
        assert_eq!(commit, head, "{line}");
        assert!(
            line.contains(", clean tree;") || line.contains(", dirty tree;"),
            "{line}"
        );
    }
    // Every subcommand says the same.
    let sb = Sandbox::new();
    let out = sb.run(&["run", "--version"], Duration::from_secs(20));
    assert!(stdout(&out).contains(&commit), "{}", stdout(&out));
}

/// The `build` object of a report, checked against `--version`.
fn assert_build(report: &Value, commit: &str, what: &str) {
    let b = &report["build"];
    assert!(b.is_object(), "{what}: no build object");
    assert_eq!(b["version"], env!("CARGO_PKG_VERSION"), "{what}");
    assert_eq!(b["commit"], commit, "{what}");
    let features: &[&str] = if cfg!(feature = "mpi") { &["mpi"] } else { &[] };
    assert_eq!(b["features"], serde_json::json!(features), "{what}");
    if commit == "unknown" {
        assert!(b["dirty"].is_null(), "{what}: {b}");
    } else {
        assert!(b["dirty"].is_boolean(), "{what}: {b}");
    }
}

#[test]
fn every_json_report_carries_the_build() {
    let _g = serial();
    let (_, commit) = version_commit();
    let sb = Sandbox::new();
    // Each report is checked against its schema.
    let run = sb.path("r.json");
    let ran = Run::new(&sb, &["run", "syscall-getpid"])
        .short()
        .json_at(&run)
        .schema()
        .limit(Duration::from_secs(60))
        .ok();
    assert_build(&ran.report, &commit, "run report");
    assert_eq!(
        ran.report["build"]["version"],
        ran.report["ipcmark_version"]
    );

    let run = run.to_str().unwrap();
    let ran = Run::new(&sb, &["compare", run, run])
        .json_at(sb.path("c.json"))
        .limit(Duration::from_secs(20))
        .ok();
    assert_build(&ran.report, &commit, "compare report");

    let wsb = Sandbox::new();
    let ran = Run::new(&wsb, &["workload", "generator-calculator", "--ops", "10"])
        .args(&["--runs", "1"])
        .json()
        .schema()
        .limit(Duration::from_secs(60))
        .ok();
    assert_build(&ran.report, &commit, "workload report");
}

/// `ipcmark SUBCOMMAND...` run to completion: its stdout (it must succeed).
fn output_of(argv: &[&str]) -> String {
    let sb = Sandbox::new();
    let out = sb.run(argv, Duration::from_secs(20));
    assert!(
        out.status.success(),
        "{argv:?}: exit {:?}\n{}",
        out.status,
        stderr(&out)
    );
    stdout(&out)
}

/// The groups `ipcmark list` shows under "groups (ipcmark run GROUP):",
/// `all` included.
fn listed_groups() -> Vec<String> {
    let text = output_of(&["list"]);
    let groups: Vec<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("groups ("))
        .skip(1)
        .map_while(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(groups.len() >= 5, "no groups in `ipcmark list`:\n{text}");
    groups
}

/// Every name the registries give: mechanism and benchmark ids, groups,
/// presets, workloads.
fn registry_names() -> Vec<String> {
    let mut names: Vec<String> = list()
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_string())
        .collect();
    names.extend(listed_groups());
    let presets: Value =
        serde_json::from_str(&output_of(&["list", "presets", "--json"])).expect("JSON");
    names.extend(
        presets
            .as_array()
            .expect("array")
            .iter()
            .map(|p| p["name"].as_str().expect("name").to_string()),
    );
    // The workloads `ipcmark workload --help` lists (two-space indented ids).
    let help = output_of(&["workload", "--help"]);
    let workloads: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Workloads:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .map_while(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert_eq!(workloads.len(), 3, "{help}");
    names.extend(workloads);
    names
}

#[test]
fn bash_completions_hold_every_registry_name() {
    let script = output_of(&["completions", "bash"]);
    let words: std::collections::HashSet<&str> = script
        .split(|c: char| c.is_whitespace() || c == '"')
        .collect();
    for name in registry_names() {
        assert!(
            words.contains(name.as_str()),
            "bash completion lacks {name}"
        );
    }
    for flag in ["--same-cpu", "--json", "--preset", "--place", "--alpha"] {
        assert!(words.contains(flag), "bash completion lacks {flag}");
    }
    assert!(!script.contains("--fault"), "the hidden --fault is offered");
}

/// Sources `ipcmark completions bash` in a bash and completes the command
/// line `words` (the last one being completed), as bash does on Tab: the
/// completion function gets the command, the current word and the previous
/// one. The candidates, one per line.
fn bash_complete(words: &[&str]) -> Vec<String> {
    let sb = Sandbox::new();
    let script = sb.path("ipcmark.bash");
    std::fs::write(&script, output_of(&["completions", "bash"])).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}' || exit 3\n\
         COMP_WORDS=({})\n\
         COMP_CWORD={}\n\
         COMP_LINE=\"${{COMP_WORDS[*]}}\"\n\
         COMP_POINT=${{#COMP_LINE}}\n\
         _ipcmark ipcmark \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words.len() - 1
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .current_dir(sb.dir.path())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{words:?}: bash exit {:?}\n{}",
        out.status,
        stderr(&out)
    );
    stdout(&out)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_names_flags_and_commands() {
    assert_eq!(
        bash_complete(&["ipcmark", "run", "pi"]),
        ["pipe", "pipe-self"]
    );
    assert_eq!(
        bash_complete(&["ipcmark", "run", "pipe", "shm-fu"]),
        ["shm-futex"]
    );
    assert_eq!(bash_complete(&["ipcmark", "ru"]), ["run"]);
    assert_eq!(bash_complete(&["ipcmark", "run", "--same"]), ["--same-cpu"]);
    assert_eq!(
        bash_complete(&["ipcmark", "run", "--mode", "o"]),
        ["oneway"]
    );
    assert_eq!(
        bash_complete(&["ipcmark", "run", "--preset", "qnx-t"]),
        ["qnx-table4"]
    );
    assert_eq!(
        bash_complete(&["ipcmark", "workload", "phil"]),
        ["philosophers"]
    );
    assert_eq!(bash_complete(&["ipcmark", "completions", "z"]), ["zsh"]);
    // A value that is neither a name nor a path completes to what was typed,
    // not to file names.
    assert_eq!(bash_complete(&["ipcmark", "run", "--sizes", "4K"]), ["4K"]);
}

#[test]
fn an_unknown_shell_is_bad_usage() {
    let sb = Sandbox::new();
    refused(
        &sb,
        &["completions", "nosuchshell"],
        &["nosuchshell", "bash"],
    );
    refused(&sb, &["completions"], &["SHELL"]);
}

/// The page `ipcmark man` prints (roff).
fn man_page() -> String {
    output_of(&["man"])
}

/// The commands `ipcmark --help` lists (but `help`).
fn commands() -> Vec<String> {
    let help = output_of(&["--help"]);
    let commands: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 7, "{help}");
    commands
}

/// Every `--flag` in `text`.
fn long_flags(text: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("--") {
        let tail = &rest[i + 2..];
        let name: String = tail
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.starts_with(|c: char| c.is_ascii_lowercase()) {
            out.insert(format!("--{name}"));
        }
        rest = tail;
    }
    out
}

#[test]
fn the_man_page_documents_every_flag_of_every_command() {
    // roff escapes '-' as "\-".
    let page = man_page().replace("\\-", "-");
    let mut checked = 0;
    for command in commands() {
        let help = output_of(&[&command, "--help"]);
        let flags = long_flags(&help);
        assert!(flags.contains("--help"), "{command} --help: {help}");
        for flag in flags {
            assert!(
                page.contains(&flag),
                "the man page lacks {flag} (from ipcmark {command} --help)"
            );
            checked += 1;
        }
        assert!(
            page.contains(&format!(".SH \"IPCMARK {}\"", command.to_uppercase())),
            "no section for {command}"
        );
    }
    assert!(checked > 50, "only {checked} flags");
    for section in ["EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"] {
        assert!(
            page.contains(&format!(".SH \"{section}\""))
                || page.contains(&format!(".SH {section}\n")),
            "no {section}"
        );
    }
    for needle in [
        "TMPDIR",
        "NO_COLOR",
        "/dev/cpu_dma_latency",
        "/dev/shm",
        "/dev/mqueue",
        "ipcmark-<pid>-",
    ] {
        assert!(page.contains(needle), "the man page lacks {needle}");
    }
}

#[test]
fn the_man_page_renders_without_warnings() {
    let sb = Sandbox::new();
    let page = sb.path("ipcmark.1");
    std::fs::write(&page, man_page()).unwrap();
    let out = match std::process::Command::new("groff")
        .args(["-ww", "-man", "-Tutf8"])
        .arg(&page)
        .output()
    {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "groff is not installed: this test renders the man page with it; \
             install Debian's groff-base (apt-get install groff-base)"
        ),
        Err(e) => panic!("cannot run groff: {e}"),
    };
    assert!(
        out.status.success(),
        "groff exit {:?}: {}",
        out.status,
        stderr(&out)
    );
    assert_eq!(stderr(&out), "", "groff -ww warned");
    // grotty marks bold and underline by overstriking: "X\bX", "_\bX".
    let raw: Vec<char> = stdout(&out).chars().collect();
    let mut text = String::new();
    let mut i = 0;
    while i < raw.len() {
        if raw.get(i + 1) == Some(&'\u{8}') {
            i += 2;
        } else {
            text.push(raw[i]);
            i += 1;
        }
    }
    assert!(text.contains("EXIT STATUS"), "{text}");
    assert!(text.contains("ipcmark run --quick"), "{text}");
}
