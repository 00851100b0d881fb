//! `ipcmark man`: the manual page, in roff, on standard output
//! (`ipcmark man | man -l -`). One page, `ipcmark(1)`: its synopsis, options
//! and a section per command are rendered by clap_mangen from the same clap
//! definitions as `--help` (with the registries' names, see
//! [`super::generated`]), so they cannot drift from it; EXIT STATUS,
//! ENVIRONMENT and FILES say what `src/cli` and the engine do; EXAMPLES are
//! the command lines of README.md's Usage, Whole workloads and History sections, with
//! their comments.

use super::{Failure, generated, print_stdout};
use crate::output::json::build;
use clap::{ArgAction, Command};
use clap_mangen::Man;
use clap_mangen::roff::{Inline, Roff, bold, italic, roman};
use std::process::ExitCode;

/// The README, whose examples become the page's EXAMPLES.
const README: &str = include_str!("../../README.md");

pub fn man() -> Result<ExitCode, Failure> {
    print_stdout(&page())?;
    Ok(ExitCode::SUCCESS)
}

/// The whole page.
pub fn page() -> String {
    let mut cmd = generated::command();
    cmd.build();
    let top = Man::new(cmd.clone());
    let mut out = String::new();
    // .TH by hand: clap_mangen writes an empty date as nothing, which
    // shifts the footer's fields (`.TH IPCMARK 1  "ipcmark 0.1.0"`).
    out.push_str(&format!(
        ".TH IPCMARK 1 \"\" \"ipcmark {}\" \"User Commands\"\n",
        build::VERSION
    ));
    section(&mut out, |w| top.render_name_section(w));
    out.push_str(&synopsis(&cmd));
    out.push_str(&description());
    section(&mut out, |w| top.render_options_section(w));
    for sub in commands(&cmd) {
        out.push_str(&command_section(sub));
    }
    let mut r = Roff::new();
    exit_status(&mut r);
    environment(&mut r);
    files(&mut r);
    examples(&mut r);
    see_also(&mut r);
    out.push_str(&r.render());
    ascii(&dedup_preamble(&out))
}

/// The commands with a section of their own: all but `help`.
fn commands(cmd: &Command) -> impl Iterator<Item = &Command> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
}

/// Appends what `render` writes.
fn section(out: &mut String, render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) {
    let mut buf = Vec::new();
    render(&mut buf).expect("writing to a Vec cannot fail");
    out.push_str(&String::from_utf8(buf).expect("roff of UTF-8 text is UTF-8"));
}

/// What clap_mangen renders for one section, without its `.SH` heading.
fn body(render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut text = String::new();
    section(&mut text, render);
    text.lines()
        .filter(|l| !l.starts_with(".SH "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// SYNOPSIS: the program's, then one short line per command (its section
/// has clap_mangen's synopsis with every option).
fn synopsis(cmd: &Command) -> String {
    let mut out = String::from(".SH SYNOPSIS\n");
    out.push_str(&body(|w| Man::new(cmd.clone()).render_synopsis_section(w)));
    let mut r = Roff::new();
    for sub in commands(cmd) {
        r.control("br", []);
        let mut line = vec![bold(sub.get_bin_name().unwrap_or_else(|| sub.get_name()))];
        let visible = |a: &&clap::Arg| !a.is_hide_set();
        let help_or_version = |a: &clap::Arg| {
            matches!(
                a.get_action(),
                ArgAction::Help | ArgAction::HelpLong | ArgAction::HelpShort | ArgAction::Version
            )
        };
        if sub
            .get_arguments()
            .filter(visible)
            .any(|a| !a.is_positional() && !help_or_version(a))
        {
            line.extend([roman(" ["), italic("options"), roman("]")]);
        }
        for p in sub.get_positionals().filter(visible) {
            let name = p
                .get_value_names()
                .and_then(|v| v.first())
                .map_or_else(|| p.get_id().to_string(), |v| v.to_string());
            let many = p.get_num_args().is_some_and(|n| n.max_values() > 1);
            let (open, close) = if p.is_required_set() {
                ("<", ">")
            } else {
                ("[", "]")
            };
            line.extend([
                roman(format!(" {open}")),
                italic(name),
                roman(format!("{close}{}", if many { "..." } else { "" })),
            ]);
        }
        r.text(line);
    }
    out.push_str(&r.render());
    out
}

fn description() -> String {
    let mut r = Roff::new();
    r.control("SH", ["DESCRIPTION"]);
    r.text([roman(
        "ipcmark measures what it costs two processes on this Linux machine to talk, \
         every local IPC mechanism the same way: a client sends a message, an echo server \
         returns it, and one transfer is (time \u{2212} 2 \u{d7} loop overhead) / \
         (2 \u{d7} iterations). Every transfer is checked and nothing is left behind.",
    )]);
    r.control("PP", []);
    r.text([
        roman(
            "The same mechanisms can be timed one way from a timestamp in each message \
         (--mode oneway) and streamed for bandwidth (--mode stream). Beside them, groups of \
         benchmarks time single system calls (syscall), context switches (sched), timers \
         (timer) and the Rhealstone and Thread-Metric RTOS suites, and ",
        ),
        bold("ipcmark workload"),
        roman(" runs whole programs of several processes over placements of their processes."),
    ]);
    r.control("PP", []);
    r.text([
        roman(
            "Results go to standard output, progress and warnings to standard error; --json \
         writes every figure to a file, saved after every step. Each figure is sampled until \
         its median is known to \u{b1}2% or its time is up, in passes whose medians \
         ",
        ),
        bold("ipcmark compare"),
        roman(" tests against another run's."),
    ]);
    r.render()
}

/// `.SH "IPCMARK RUN"`: the command's synopsis, description, options and
/// the text under its `--help`.
fn command_section(sub: &Command) -> String {
    let man = Man::new(sub.clone());
    let title = sub
        .get_bin_name()
        .unwrap_or_else(|| sub.get_name())
        .to_uppercase();
    let mut out = Roff::new().control("SH", [title.as_str()]).render();
    out.push_str(&body(|w| man.render_synopsis_section(w)));
    out.push_str(".PP\n");
    out.push_str(&body(|w| man.render_description_section(w)));
    let has_options = sub.get_arguments().any(|a| !a.is_hide_set());
    if has_options {
        out.push_str(&grouped_options(sub, &man));
    }
    if let Some(after) = sub.get_after_long_help().or_else(|| sub.get_after_help()) {
        // Its lines as they are, each on its own (a long one wraps, neither
        // hyphenated nor stretched: they hold command lines).
        let mut r = Roff::new();
        r.control("PP", []);
        r.control("nh", []);
        r.control("ad", ["l"]);
        for line in after.to_string().lines() {
            if line.trim().is_empty() {
                r.control("sp", []);
            } else {
                r.text([roman(line), Inline::LineBreak]);
            }
        }
        r.control("ad", ["b"]);
        r.control("hy", []);
        out.push_str(&r.render());
    }
    out
}

/// A command's options under the headings `--help` lists them under
/// (`cli::flags::heading`): clap_mangen gives each heading a `.SH` of its
/// own, upper-cased, which inside a command's section becomes a `.SS`
/// spelled as in `--help`; the options without one come first, as Options.
fn grouped_options(sub: &Command, man: &Man) -> String {
    let headings: Vec<&str> = sub
        .get_arguments()
        .filter_map(|a| a.get_help_heading())
        .collect();
    let mut text = String::new();
    section(&mut text, |w| man.render_options_section(w));
    text.lines()
        .map(|l| match l.strip_prefix(".SH ") {
            Some(title) => {
                let title = title.trim_matches('"');
                let name = headings
                    .iter()
                    .find(|h| h.to_uppercase() == title)
                    .copied()
                    .unwrap_or("Options");
                format!(".SS \"{name}\"\n")
            }
            None => format!("{l}\n"),
        })
        .collect()
}

/// An item of a tagged list: `.TP`, the tag, the text.
fn item(r: &mut Roff, tag: impl Into<Vec<Inline>>, text: &str) {
    r.control("TP", []);
    r.text(tag);
    r.text([roman(text)]);
}

/// EXIT STATUS, as `cli::main`, `run` and `workload` return it.
fn exit_status(r: &mut Roff) {
    r.control("SH", ["EXIT STATUS"]);
    item(
        r,
        [bold("0")],
        "Success: every figure was measured or skipped with its reason (a skipped figure, \
         one that cannot run on this machine, is not a failure).",
    );
    item(
        r,
        [bold("1")],
        "Some figure failed (the table says what broke), a workload run failed, ipcmark \
         check found a figure significantly slower than the baseline by more than \
         --max-regression, ipcmark selftest found compare's false-positive rate over \
         alpha + 2 points, or the command could not be carried out (a report could not be written, ipcmark clean \
         could not remove an object).",
    );
    item(
        r,
        [bold("2")],
        "Bad usage: an unknown name, an invalid or inapplicable option, an unreadable \
         report for compare, a --cpu-latency that cannot be held. One line on standard \
         error says why; nothing was measured.",
    );
    item(
        r,
        [
            bold("130"),
            roman(", "),
            bold("143"),
            roman(", "),
            bold("129"),
        ],
        "Interrupted by SIGINT (Ctrl-C), SIGTERM or SIGHUP (128 + the signal's number): \
         every object and process was released, and the --json report keeps the figures \
         measured so far, marked incomplete.",
    );
}

fn environment(r: &mut Roff) {
    r.control("SH", ["ENVIRONMENT"]);
    item(
        r,
        [bold("TMPDIR")],
        "The directory on the disk file system for the fifo mechanism's FIFOs and the \
         syscall group's files (/var/tmp when unset or not a directory); ipcmark clean \
         looks there too.",
    );
    item(
        r,
        [bold("NO_COLOR")],
        "ipcmark's tables and progress bar have no colours; set to a non-empty value, it \
         also turns off the colours of --help and of usage messages.",
    );
    item(
        r,
        [bold("GITHUB_ACTIONS")],
        "Set to true (as GitHub's runners set it), ipcmark check also prints each failure as a \
         workflow command (::error title=...::message, ::warning for what does not fail it) \
         after its table, which GitHub shows as annotations.",
    );
    item(
        r,
        [bold("XDG_DATA_HOME")],
        "Where the run history lives: $XDG_DATA_HOME/ipcmark/history.sqlite (with HOME's \
         ~/.local/share when unset); --db PATH names another, --no-save keeps a run out of it.",
    );
}

fn files(r: &mut Roff) {
    r.control("SH", ["FILES"]);
    item(
        r,
        [bold("~/.local/share/ipcmark/history.sqlite")],
        "The run history (SQLite, see XDG_DATA_HOME): every run and workload as it is \
         measured, read by ipcmark history, show, compare, export, watch and check; \
         names given with history --tag; ipcmark selftest's records and the runs it made.",
    );
    item(
        r,
        [bold("/dev/cpu_dma_latency")],
        "Held open with a request of 0 \u{b5}s (--cpu-latency) while a run or a workload \
         measures, when it is writable (as root): the CPUs stay out of deep idle states. The \
         kernel drops the request when ipcmark exits. Without it, ipcmark measures what a \
         cross-CPU wake-up costs and says so in a warning.",
    );
    item(
        r,
        [bold("/dev/shm")],
        "POSIX shared memory and named semaphores (sem.ipcmark-\u{2026}), the fifo-tmpfs \
         mechanism's FIFOs and the syscall group's tmpfs files.",
    );
    item(
        r,
        [bold("/dev/mqueue")],
        "POSIX message queues, when it is mounted (queues work without it, but cannot be \
         listed by ipcmark clean).",
    );
    item(
        r,
        [bold("$TMPDIR"), roman(", "), bold("/var/tmp")],
        "The fifo mechanism's FIFOs and the syscall group's files, in directories \
         ipcmark-<pid>-\u{2026} removed at the end of each figure.",
    );
    item(
        r,
        [bold("ipcmark-<pid>-<pidns>-<start>-<random>-<what>-<n>")],
        "Every named object a run creates carries the pid, PID namespace and start time of \
         the process that made it and a random part (a name found taken is replaced); every \
         System V key (message queues, semaphore sets, shared memory) encodes the pid, and an \
         owner record in /dev/shm the rest. Each object is released by its creator on \
         success, failure, Ctrl-C and SIGTERM; after kill -9, ipcmark clean removes those \
         whose process is provably gone, and keeps, saying why, those of another PID \
         namespace or of an older ipcmark.",
    );
    item(
        r,
        [
            bold("/proc/sys/fs/mqueue"),
            roman(", "),
            bold("/proc/sys/kernel/msgmax"),
        ],
        "With msgmnb, msg_max, /proc/sys/fs/pipe-max-size and \
         /proc/sys/net/core/wmem_max: the kernel's limits, read to skip a size a mechanism \
         cannot carry here, with the reason.",
    );
}

/// The README sections whose examples the page shows.
const EXAMPLE_SECTIONS: &[&str] = &["## Usage", "## Whole workloads", "## History"];

/// The command lines of README.md's examples (the ```sh blocks of
/// [`EXAMPLE_SECTIONS`]), each with its comment; a comment continued on the
/// next line is joined to it.
pub fn readme_examples() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut section = "";
    let mut in_sh = false;
    for line in README.lines() {
        if let Some(fence) = line.strip_prefix("```") {
            in_sh = !in_sh && fence == "sh";
            continue;
        }
        if !in_sh && line.starts_with("## ") {
            section = line;
        }
        if !in_sh || !EXAMPLE_SECTIONS.contains(&section) {
            continue;
        }
        let (command, comment) = match line.split_once(" #") {
            Some((c, m)) => (c.trim(), m.trim()),
            None => (line.trim(), ""),
        };
        if command.starts_with("ipcmark ") {
            out.push((command.to_string(), comment.to_string()));
        } else if command.is_empty()
            && !comment.is_empty()
            && let Some(last) = out.last_mut()
        {
            last.1.push(' ');
            last.1.push_str(comment);
        }
    }
    out
}

fn examples(r: &mut Roff) {
    r.control("SH", ["EXAMPLES"]);
    // Command lines neither hyphenated nor stretched when they wrap.
    r.control("nh", []);
    r.control("ad", ["l"]);
    for (command, comment) in readme_examples() {
        r.control("TP", []);
        r.text([bold(command)]);
        if comment.is_empty() {
            r.control("br", []);
        } else {
            r.text([roman(comment)]);
        }
    }
    r.control("ad", ["b"]);
    r.control("hy", []);
}

fn see_also(r: &mut Roff) {
    r.control("SH", ["REPORTING BUGS"]);
    r.text([
        roman("Give the output of "),
        bold("ipcmark --version"),
        roman(
            " (the version, the git commit and whether the tree had changes, the cargo \
             features), which every JSON report also holds as its build object.",
        ),
    ]);
    r.control("SH", ["SEE ALSO"]);
    r.text([roman(
        "README.md (in the Debian package, /usr/share/doc/ipcmark/README.md), and in the \
         source tree docs/method.md (how each figure is obtained), docs/json-schema.md and \
         docs/workloads.md (the reports).",
    )]);
    r.control("PP", []);
    r.text([roman(
        "pipe(7), fifo(7), unix(7), mq_overview(7), sysvipc(7), shm_overview(7), \
         sem_overview(7), futex(2), eventfd(2), signal(7), process_vm_writev(2), \
         sched(7), time(7).",
    )]);
}

/// Keeps the first of roff's apostrophe preambles (each rendered part
/// starts with one).
fn dedup_preamble(text: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    text.lines()
        .filter(|l| {
            !(l.starts_with(".ie \\n(.g .ds Aq") || l.starts_with(".el .ds Aq")) || seen.insert(*l)
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Every character outside ASCII as groff's `\[uXXXX]`, so that the page
/// reads the same whatever encoding groff assumes for its input.
fn ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", c as u32));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Cli, Command as Sub};
    use super::*;
    use crate::run::plan;
    use clap::Parser;

    /// Every example of the README parses, and names what run accepts.
    #[test]
    fn readme_examples_are_valid_command_lines() {
        let examples = readme_examples();
        assert!(examples.len() >= 30, "{examples:#?}");
        for (command, _) in &examples {
            let cli = Cli::try_parse_from(command.split_whitespace())
                .unwrap_or_else(|e| panic!("{command}: {e}"));
            if let Sub::Run(args) = cli.command {
                plan::resolve(&args.names, false)
                    .unwrap_or_else(|e| panic!("{command}: {}", e.message));
                if let Some(p) = &args.preset {
                    assert!(
                        crate::presets::find(p).is_some()
                            || crate::presets::find_load_study(p).is_some(),
                        "{command}"
                    );
                }
            }
        }
        // A comment continued on the next line is joined.
        let compare = examples
            .iter()
            .find(|(c, _)| c.starts_with("ipcmark compare"))
            .expect("compare example");
        assert!(compare.1.contains("which differ beyond it"), "{compare:?}");
    }

    #[test]
    fn the_page_is_ascii_with_one_preamble_and_every_section() {
        let page = page();
        assert!(page.is_ascii());
        assert_eq!(page.matches(".ds Aq \\(aq").count(), 1);
        for s in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "\"IPCMARK RUN\"",
            "\"IPCMARK LIST\"",
            "\"IPCMARK CLEAN\"",
            "\"IPCMARK COMPARE\"",
            "\"IPCMARK WORKLOAD\"",
            "\"IPCMARK COMPLETIONS\"",
            "\"IPCMARK MAN\"",
            "\"EXIT STATUS\"",
            "ENVIRONMENT",
            "FILES",
            "EXAMPLES",
        ] {
            assert!(page.contains(&format!("\n.SH {s}\n")), "no section {s}");
        }
        assert!(
            !page.contains("\\-\\-fault"),
            "a hidden option is documented"
        );
    }

    /// A command's options sit under the headings of its `--help`, in its
    /// own section: `run`'s all nine, and `--db` under Output and history.
    #[test]
    fn a_commands_options_are_grouped_as_in_its_help() {
        let page = page();
        let run = page
            .split("\n.SH \"IPCMARK RUN\"\n")
            .nth(1)
            .and_then(|rest| rest.split("\n.SH ").next())
            .expect("the run section");
        let mut at = 0;
        for h in [
            "Options",
            "Selection",
            "Sizes",
            "Placement",
            "Budget",
            "Output and history",
            "Load",
            "Remote",
            "Timer group",
            "One-way",
        ] {
            let line = format!("\n.SS \"{h}\"\n");
            let found = run[at..]
                .find(&line)
                .unwrap_or_else(|| panic!("no heading {h} after byte {at} of run's section"));
            at += found + line.len();
        }
        let output = run
            .split("\n.SS \"Output and history\"\n")
            .nth(1)
            .and_then(|rest| rest.split("\n.SS ").next())
            .expect("Output and history");
        assert!(output.contains("\\-\\-db"), "{output}");
        assert!(
            !page.contains("\n.SH SELECTION"),
            "a heading left as a page section"
        );
    }
}
