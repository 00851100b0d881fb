//! [`Run`]: one ipcmark command line run to its end, the way most tests
//! open — the subcommand and its names, `--sizes`, the short budget,
//! `--json FILE`, `--db FILE` or `--no-save`, a deadline — and [`Ran`],
//! what came of it: exit status, stdout, stderr, pid and the JSON report.
//!
//! ```ignore
//! let ran = Run::new(&sb, &["run", "pipe"]).sizes("64,1K").json().short().ok();
//! assert_eq!(results(&ran.report).len(), 2, "{}", ran.stdout);
//! ```
//!
//! Arguments go on the command line in the order the builder is given
//! them. Every panic names the command line, its exit status, stdout and
//! stderr.

use super::{Nobody, SHORT, Sandbox, read_json, released, schema_errors, wait_with_deadline};
use super::{RUN_SCHEMA, WORKLOAD_SCHEMA};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

/// The deadline of a [`Run`] not given one: ample for a short run.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

/// Makes the command from the arguments (the sandbox's by default).
type MakeCommand<'a> = Box<dyn FnOnce(&[&str]) -> Command + 'a>;

/// An ipcmark command line to run in a sandbox (see the module's doc).
pub struct Run<'a> {
    sb: &'a Sandbox,
    argv: Vec<String>,
    json: Option<PathBuf>,
    schema: bool,
    limit: Duration,
    make: Option<MakeCommand<'a>>,
}

impl<'a> Run<'a> {
    /// `ipcmark ARGV…` (a whole command line: `run pipe`, `workload …`,
    /// `compare A B`) in `sb`, with a deadline of [`RUN_LIMIT`].
    pub fn new(sb: &'a Sandbox, argv: &[&str]) -> Self {
        Run {
            sb,
            argv: argv.iter().map(|a| a.to_string()).collect(),
            json: None,
            schema: false,
            limit: RUN_LIMIT,
            make: None,
        }
    }

    /// One more argument.
    pub fn arg(mut self, a: impl AsRef<str>) -> Self {
        self.argv.push(a.as_ref().to_string());
        self
    }

    /// More arguments.
    pub fn args(mut self, a: &[&str]) -> Self {
        self.argv.extend(a.iter().map(|a| a.to_string()));
        self
    }

    /// `--sizes LIST`.
    pub fn sizes(self, list: &str) -> Self {
        self.args(&["--sizes", list])
    }

    /// `--quick`.
    pub fn quick(self) -> Self {
        self.arg("--quick")
    }

    /// The short per-figure budget, [`SHORT`].
    pub fn short(self) -> Self {
        self.args(SHORT)
    }

    /// `--json FILE`, FILE being `r.json` in the sandbox: the report is read
    /// once the run ends, and must have been written.
    pub fn json(self) -> Self {
        let path = self.sb.path("r.json");
        self.json_at(path)
    }

    /// `--json PATH`, read as [`json`](Self::json) reads its file. A file
    /// already at PATH is removed first, so the report read is this run's.
    pub fn json_at(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref().to_path_buf();
        self = self.arg("--json").arg(path.to_str().expect("a UTF-8 path"));
        self.json = Some(path);
        self
    }

    /// Asserts that the report fits its documented schema (the workload
    /// schema for `workload …`, else the run schema).
    pub fn schema(mut self) -> Self {
        self.schema = true;
        self
    }

    /// `--db PATH`.
    pub fn db(self, path: impl AsRef<Path>) -> Self {
        let p = path.as_ref().to_str().expect("a UTF-8 path").to_string();
        self.args(&["--db", &p])
    }

    /// `--no-save`.
    pub fn no_save(self) -> Self {
        self.arg("--no-save")
    }

    /// The most the run may take; past it, it is killed and the test fails.
    pub fn limit(mut self, limit: Duration) -> Self {
        self.limit = limit;
        self
    }

    /// Runs as `nobody` ([`Nobody::cmd`]).
    pub fn nobody(self, nobody: &'a Nobody) -> Self {
        let sb = self.sb;
        self.by(move |a| nobody.cmd(sb, a))
    }

    /// With at most `files` open descriptors ([`Sandbox::cmd_with_open_files`]).
    pub fn open_files(self, files: u32) -> Self {
        let sb = self.sb;
        self.by(move |a| sb.cmd_with_open_files(files, a))
    }

    /// Runs the command `make` makes of the arguments instead of the
    /// sandbox's own (stdout and stderr must be piped).
    pub fn by(mut self, make: impl FnOnce(&[&str]) -> Command + 'a) -> Self {
        self.make = Some(Box::new(make));
        self
    }

    /// Runs it to its end, whatever its exit status.
    pub fn run(self) -> Ran {
        let argv: Vec<&str> = self.argv.iter().map(String::as_str).collect();
        if let Some(json) = &self.json {
            let _ = std::fs::remove_file(json);
        }
        let mut cmd = match self.make {
            Some(make) => make(&argv),
            None => self.sb.cmd(&argv),
        };
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{argv:?}: cannot start: {e}"));
        let pid = child.id();
        let out = wait_with_deadline(child, self.limit);
        let mut ran = Ran {
            argv: self.argv.clone(),
            pid,
            status: out.status,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            report: Value::Null,
        };
        if let Some(json) = &self.json {
            assert!(
                json.exists(),
                "{} wrote no report to {}",
                ran.what(),
                json.display()
            );
            ran.report = read_json(json);
        }
        if self.schema {
            assert!(self.json.is_some(), "{argv:?}: a schema, but no --json");
            let schema = if argv.first() == Some(&"workload") {
                WORKLOAD_SCHEMA
            } else {
                RUN_SCHEMA
            };
            let errors = schema_errors(schema, &ran.report);
            assert!(
                errors.is_empty(),
                "{argv:?}: schema violations: {errors:#?}"
            );
        }
        ran
    }

    /// Runs it to its end and asserts that it exited 0.
    pub fn ok(self) -> Ran {
        let ran = self.run();
        assert!(ran.status.success(), "{}", ran.what());
        ran
    }

    /// Runs it to its end and asserts that it exited with `code`.
    pub fn exits(self, code: i32) -> Ran {
        let ran = self.run();
        assert_eq!(ran.code(), Some(code), "{}", ran.what());
        ran
    }
}

/// A finished [`Run`].
pub struct Ran {
    /// The command line, for messages.
    pub argv: Vec<String>,
    pub pid: u32,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// The report read from `--json` (null without [`Run::json`]).
    pub report: Value,
}

impl Ran {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// The command line, its exit status, stdout and stderr, for a message.
    pub fn what(&self) -> String {
        format!(
            "{:?}: exit {:?}\nstdout:\n{}\nstderr:\n{}",
            self.argv, self.status, self.stdout, self.stderr
        )
    }

    /// Asserts that the run left nothing behind in `sb` (see
    /// [`assert_released`](super::assert_released)).
    pub fn assert_released(&self, sb: &Sandbox) {
        released(sb, self.pid, &format!("{:?}", self.argv));
    }
}
