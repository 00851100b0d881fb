//! The measuring engine: processes, pinning, clocks, calibration, clean-up.
//!
//! It drives mechanisms only through the [`channel::Mechanism`] and
//! [`channel::Endpoint`] traits, one-process benchmarks through the
//! [`op::Operation`] and [`op::Op`] traits, and never names one; whole
//! workloads run as a [`os::group::Group`] of processes whose work it does not know.
//!
//! Three rooms, with one-way dependencies `run → models → os`:
//! - [`models`]: the timing models (ping-pong, one-way, stream, operation
//!   loop, event loop, periodic, score) and what they share (calibration,
//!   sampling rules, message buffers);
//! - [`run`]: the run itself: one figure of each model ([`run::runner`]),
//!   figures sampled together ([`run::sweep`]), passes ([`run::passes`]), the
//!   record every figure produces ([`run::figure`]) and the session that
//!   puts them in order ([`run::session`]);
//! - [`os`]: processes and OS objects: peers, groups of processes, placement,
//!   stop requests and watchdogs, named objects and their release, the
//!   environment record, the seccomp probe.
//!
//! Beside them, the contracts mechanisms and benchmarks implement
//! ([`channel`], [`op`]) and the vocabulary every model shares ([`error`],
//! [`measure`], [`message`]).

pub mod channel;
pub mod error;
pub mod measure;
pub mod message;
pub mod models;
pub mod op;
pub mod os;
pub mod run;

/// The engine's module graph, read from its source: no import cycle among
/// its modules, and the rooms depend one way (`run → models → os`).
#[cfg(test)]
mod architecture {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// Every engine module (`models::pingpong`, `measure`, …) with the engine
    /// modules its non-test code names.
    fn graph() -> BTreeMap<String, BTreeSet<String>> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
        fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, files);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        let mut files = Vec::new();
        walk(&root, &mut files);
        // `models/score/mod.rs` is `models::score`; `engine/mod.rs` is "".
        let name = |p: &Path| {
            let rel = p.strip_prefix(&root).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into()).collect();
            if parts.last().is_some_and(|m| m == "mod") {
                parts.pop();
            }
            parts.join("::")
        };
        let modules: BTreeSet<String> = files.iter().map(|p| name(p)).collect();
        let mut graph = BTreeMap::new();
        for file in &files {
            let me = name(file);
            let text = std::fs::read_to_string(file).unwrap();
            // Test modules may reach anywhere, and a comment naming a module
            // is no dependency: the rule is for the code.
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let room = me.rsplit_once("::").map_or("", |(r, _)| r);
            let mut deps = BTreeSet::new();
            for (prefix, base) in [("crate::engine::", String::new()), ("super::", room.into())] {
                for (i, _) in code.match_indices(prefix) {
                    let rest = &code[i + prefix.len()..];
                    let path: Vec<&str> = rest
                        .split(|c: char| !(c.is_ascii_lowercase() || c == '_' || c == ':'))
                        .next()
                        .unwrap()
                        .split("::")
                        .filter(|s| !s.is_empty())
                        .collect();
                    // The longest prefix of the path that is a module.
                    let found = (1..=path.len()).rev().find_map(|n| {
                        let m = path[..n].join("::");
                        let m = if base.is_empty() {
                            m
                        } else {
                            format!("{base}::{m}")
                        };
                        modules.contains(&m).then_some(m)
                    });
                    if let Some(m) = found
                        && m != me
                    {
                        deps.insert(m);
                    }
                }
            }
            deps.remove("");
            graph.insert(me, deps);
        }
        graph
    }

    #[test]
    fn no_import_cycle_among_engine_modules() {
        let g = graph();
        assert!(g.contains_key("run::session") && g.contains_key("models::pingpong"));
        assert!(g["run::runner"].contains("models::pingpong"), "{g:?}");
        // Depth-first search; a grey node met again closes a cycle.
        fn visit<'a>(
            g: &'a BTreeMap<String, BTreeSet<String>>,
            m: &'a str,
            state: &mut BTreeMap<&'a str, bool>,
            stack: &mut Vec<&'a str>,
        ) {
            match state.get(m) {
                Some(true) => return,
                Some(false) => panic!("import cycle: {} -> {m}", stack.join(" -> ")),
                None => {}
            }
            state.insert(m, false);
            stack.push(m);
            for d in g.get(m).into_iter().flatten() {
                visit(g, d, state, stack);
            }
            stack.pop();
            state.insert(m, true);
        }
        let mut state = BTreeMap::new();
        for m in g.keys() {
            visit(&g, m, &mut state, &mut Vec::new());
        }
    }

    #[test]
    fn rooms_depend_one_way_run_models_os() {
        let rank = |m: &str| match m.split("::").next().unwrap() {
            "run" => 3,
            "models" => 2,
            "os" => 1,
            _ => 0,
        };
        for (m, deps) in graph() {
            for d in deps {
                // The shared vocabulary (rank 0) may use any room but `run`.
                let ok = match (rank(&m), rank(&d)) {
                    (0, r) => r < 3,
                    (a, b) => b == 0 || b <= a,
                };
                assert!(ok, "{m} depends on {d}, against run -> models -> os");
            }
        }
    }
}
