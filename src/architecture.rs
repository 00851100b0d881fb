//! The architecture ARCHITECTURE.md states, checked against the source:
//! each layer of the crate uses only the layers its allowed list names (and
//! the lists make no circle), and inside the engine there is
//! no import cycle and the rooms depend one way (`run → models → os`);
//! ARCHITECTURE.md names every layer with its invariant and draws the
//! allowed lists as they are here; no source file is over
//! [`MAX_LINES`] lines, and the command line over [`CLI_MAX_LINES`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The most lines a source file may have, its tests included: past it, a
/// file is split (its tests into a sibling `tests.rs`, or its parts by
/// responsibility).
const MAX_LINES: usize = 800;

/// The crate's `src/`.
fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file below `dir`, test modules included.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// Every `.rs` file below `dir` that is code, not a test module: a file a
/// parent declares under `#[cfg(test)]` (`tests.rs`, `fixture.rs`, this
/// one), and every file below such a module, is test code, which may reach
/// anywhere.
fn code_files(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    walk(&src(), &mut all);
    let tests: Vec<PathBuf> = all
        .iter()
        .flat_map(|p| test_modules(p, &std::fs::read_to_string(p).unwrap()))
        .collect();
    all.into_iter()
        .filter(|p| p.starts_with(dir) && !tests.iter().any(|t| p.starts_with(t)))
        .collect()
}

/// The files and folders of the modules `text`, the source of the file
/// `parent`, declares under `#[cfg(test)]` (`#[cfg(test)]` on the line
/// right before `mod NAME;`): `NAME.rs` and `NAME/` beside a `mod.rs` or
/// `main.rs`, below the file's own folder for any other file.
fn test_modules(parent: &Path, text: &str) -> Vec<PathBuf> {
    let here = match parent.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs" | "main.rs" | "lib.rs") => parent.parent().unwrap().to_path_buf(),
        _ => parent.with_extension(""),
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for pair in lines.windows(2) {
        if pair[0] != "#[cfg(test)]" {
            continue;
        }
        if let Some(name) = declared_module(pair[1]) {
            out.push(here.join(format!("{name}.rs")));
            out.push(here.join(name));
        }
    }
    out
}

/// `NAME` of a line `mod NAME;` (or `pub mod NAME;`, `pub(crate) mod
/// NAME;`): a module whose code is in a file of its own.
fn declared_module(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("pub").map_or(line, |r| {
        let r = r.trim_start();
        match r.strip_prefix('(') {
            Some(r) => r.split_once(')').map_or(r, |(_, r)| r),
            None => r,
        }
    });
    let name = rest
        .trim_start()
        .strip_prefix("mod ")?
        .strip_suffix(';')?
        .trim();
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(name)
}

/// A file's code: an inline test module (last in the file, by convention)
/// may reach anywhere, and a comment naming a module is no dependency, so
/// both are left out, as is the declaration of a test module in a file of
/// its own (that file is left out by [`code_files`]).
fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut code = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let next = lines.get(i + 1).map(|l| l.trim_start());
        if lines[i].trim() == "#[cfg(test)]" && next.is_some_and(|l| l.starts_with("mod ")) {
            if next.is_some_and(|l| declared_module(l).is_some()) {
                i += 2;
                continue;
            }
            break;
        }
        if !lines[i].trim_start().starts_with("//") {
            code.push(lines[i]);
        }
        i += 1;
    }
    code.join("\n")
}

/// Every engine module (`models::pingpong`, `measure`, …) with the engine
/// modules its non-test code names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    graph_of("engine")
}

/// Every module of the folder `layer` of `src/` with the modules of that
/// layer its non-test code names (through `crate::LAYER::` or `super::`).
fn graph_of(layer: &str) -> BTreeMap<String, BTreeSet<String>> {
    let root = src().join(layer);
    let crate_prefix = format!("crate::{layer}::");
    let files = code_files(&root);
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
        let code = code_of(file);
        let room = me.rsplit_once("::").map_or("", |(r, _)| r);
        let mut deps = BTreeSet::new();
        for (prefix, base) in [
            (crate_prefix.as_str(), String::new()),
            ("super::", room.into()),
        ] {
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

/// Panics naming the cycle if the modules of `g` import each other round.
fn assert_no_cycle(g: &BTreeMap<String, BTreeSet<String>>, layer: &str) {
    // Depth-first search; a grey node met again closes a cycle.
    fn visit<'a>(
        g: &'a BTreeMap<String, BTreeSet<String>>,
        m: &'a str,
        state: &mut BTreeMap<&'a str, bool>,
        stack: &mut Vec<&'a str>,
    ) -> Option<String> {
        match state.get(m) {
            Some(true) => return None,
            Some(false) => return Some(format!("{} -> {m}", stack.join(" -> "))),
            None => {}
        }
        state.insert(m, false);
        stack.push(m);
        for d in g.get(m).into_iter().flatten() {
            if let Some(cycle) = visit(g, d, state, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        state.insert(m, true);
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if let Some(cycle) = visit(g, m, &mut state, &mut Vec::new()) {
            panic!("import cycle in {layer}: {cycle}");
        }
    }
}

#[test]
fn no_import_cycle_among_engine_modules() {
    let g = graph();
    assert!(g.contains_key("run::session") && g.contains_key("models::pingpong"));
    assert!(g["run::runner"].contains("models::pingpong"), "{g:?}");
    assert_no_cycle(&g, "engine");
}

/// No module of any layer imports another that leads back to it (with the
/// allowed lists, which make no circle between layers: no import circle
/// anywhere in `src/`).
#[test]
fn no_import_cycle_inside_any_layer() {
    let src = src();
    let mut cycles = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let layer = path.file_name().unwrap().to_string_lossy().to_string();
        let g = graph_of(&layer);
        if let Err(e) = std::panic::catch_unwind(|| assert_no_cycle(&g, &layer)) {
            cycles.push(
                e.downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| layer.clone()),
            );
        }
    }
    assert!(cycles.is_empty(), "{cycles:#?}");
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

/// Every `crate::LAYER` a layer's non-test code names, for the top-level
/// folders and files of `src/`.
fn layers() -> BTreeMap<String, BTreeSet<String>> {
    let src = src();
    let files = code_files(&src);
    let names: BTreeSet<String> = files
        .iter()
        .map(|p| layer_of(&src, p))
        .filter(|l| l != "main")
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let me = layer_of(&src, file);
        let code = code_of(file);
        let deps = graph.entry(me.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if name != me && names.contains(&name) {
                deps.insert(name);
            }
        }
    }
    graph
}

/// The layer a file of `src/` belongs to: its top folder, or its name.
fn layer_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.iter().next().unwrap().to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// What each layer may use (ARCHITECTURE.md's table): an allowed list, not
/// only a rank, so that a layer cannot quietly reach a lower one it has no
/// business with (remote into the mechanisms, output into the history).
const ALLOWED: &[(&str, &[&str])] = &[
    ("sys", &[]),
    ("stats", &[]),
    ("presets", &[]),
    ("record", &[]),
    ("engine", &["stats", "sys"]),
    ("machine", &["engine", "stats", "sys"]),
    ("mechanisms", &["engine", "sys"]),
    ("benchmarks", &["engine", "sys"]),
    ("workloads", &["engine", "stats", "sys"]),
    ("analysis", &["record", "machine", "engine", "stats"]),
    (
        "output",
        &[
            "analysis",
            "record",
            "machine",
            "workloads",
            "benchmarks",
            "engine",
            "presets",
            "stats",
        ],
    ),
    ("history", &["record", "output"]),
    (
        "remote",
        &["output", "record", "machine", "engine", "stats", "sys"],
    ),
    ("mpi", &["workloads", "machine", "engine", "stats", "sys"]),
    ("testbed", &["engine", "sys"]),
    (
        "run",
        &[
            "benchmarks",
            "workloads",
            "mpi",
            "history",
            "remote",
            "testbed",
            "output",
            "analysis",
            "record",
            "machine",
            "mechanisms",
            "engine",
            "presets",
            "sys",
        ],
    ),
    (
        "studies",
        &[
            "run",
            "mpi",
            "history",
            "output",
            "analysis",
            "record",
            "machine",
            "mechanisms",
            "benchmarks",
            "engine",
            "stats",
            "sys",
        ],
    ),
    (
        "cli",
        &[
            "studies",
            "run",
            "history",
            "analysis",
            "remote",
            "mpi",
            "testbed",
            "output",
            "record",
            "machine",
            "mechanisms",
            "benchmarks",
            "workloads",
            "engine",
            "presets",
            "stats",
            "sys",
        ],
    ),
];

#[test]
fn layers_use_only_what_architecture_md_allows_them() {
    let allowed: BTreeMap<&str, BTreeSet<&str>> = ALLOWED
        .iter()
        .map(|(l, deps)| (*l, deps.iter().copied().collect()))
        .collect();
    let g = layers();
    assert!(
        g["cli"].contains("engine") && g["engine"].contains("sys"),
        "{g:?}"
    );
    for (layer, deps) in &g {
        // The entry point may name any layer (this file, a test module, is
        // not among the layers).
        if layer == "main" {
            continue;
        }
        let ok = allowed.get(layer.as_str()).unwrap_or_else(|| {
            panic!("layer '{layer}' has no allowed list in ARCHITECTURE.md's table")
        });
        for d in deps {
            assert!(
                ok.contains(d.as_str()),
                "{layer} depends on {d}: ARCHITECTURE.md allows it {ok:?} only"
            );
        }
    }
}

/// The allowed lists make no circle: each layer's list names only layers
/// whose own lists do not lead back to it (so the graph of `src/` has none).
#[test]
fn the_allowed_lists_make_no_circle() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    fn reaches<'a>(
        g: &BTreeMap<&'a str, &'a [&'a str]>,
        from: &'a str,
        to: &str,
        seen: &mut BTreeSet<&'a str>,
    ) -> bool {
        g[from]
            .iter()
            .any(|&d| d == to || (seen.insert(d) && reaches(g, d, to, seen)))
    }
    for &layer in allowed.keys() {
        for &d in allowed[layer] {
            assert!(
                allowed.contains_key(d),
                "{layer} lists {d}, which has no list"
            );
            assert!(
                !reaches(&allowed, d, layer, &mut BTreeSet::new()),
                "{layer} -> {d} closes a circle"
            );
        }
    }
}

/// What the command line may not name: the engine's measuring (its timing
/// models, the run — runner, session, a workload's repeated runs — what a
/// figure is measured with, the processes of a workload or a load), the
/// kernel's tracing and scheduler counters, the wake-up probe and the CPU
/// latency hold, statistics and the clocks. cli parses flags, asks the
/// run layer or a study for runs, and prints what they give.
const CLI_MAY_NOT_NAME: &[&str] = &[
    "crate::engine::models",
    "crate::engine::measure",
    "crate::engine::run",
    "crate::engine::os::group",
    "crate::engine::os::load",
    "crate::engine::os::peer::Peer",
    "crate::machine::tracefs",
    "crate::machine::schedstat",
    "crate::machine::wakeup",
    "crate::machine::cpu_latency",
    "crate::stats",
    "crate::sys::clock",
];

/// What of those the command line may name all the same: `ipcmark clean`
/// removes the tracefs instance a killed `explain` left (clean-up, not
/// tracing).
const CLI_MAY_NAME_STILL: &[&str] = &["crate::machine::tracefs::clean_stale"];

#[test]
fn the_command_line_neither_measures_nor_traces_nor_computes_statistics() {
    let src = src();
    let files = code_files(&src.join("cli"));
    let mut found = Vec::new();
    for file in &files {
        let mut code = code_of(file);
        for allowed in CLI_MAY_NAME_STILL {
            code = code.replace(allowed, "");
        }
        for path in CLI_MAY_NOT_NAME {
            if code.contains(path) {
                found.push(format!("{} names {path}", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
    // The list names paths that exist and are used: the studies trace.
    let studies = code_files(&src.join("studies"));
    assert!(
        studies
            .iter()
            .any(|f| code_of(f).contains("crate::machine::tracefs")),
        "no study names crate::machine::tracefs: is the list stale?"
    );
}

/// A run is asked for through `run::RunRequest`: no code makes one up from
/// a command line (a clap parse of made-up arguments, `RunArgs::defaults`).
#[test]
fn no_run_is_asked_for_through_a_made_up_command_line() {
    let files = code_files(&src());
    let needles = [
        ["RunArgs", "::defaults"].concat(),
        ["try_parse", "_from("].concat(),
        ["try_get_matches", "_from("].concat(),
    ];
    for file in &files {
        let code = code_of(file);
        for needle in &needles {
            assert!(
                !code.contains(needle.as_str()),
                "{} asks for a run through a made-up command line ({needle})",
                file.display()
            );
        }
    }
}

/// The rule that leaves test modules out: a module declared under
/// `#[cfg(test)]` is test code, in `NAME.rs` or `NAME/` beside a `mod.rs`
/// (or `main.rs`) and below a plain file's own folder; a module declared
/// without it, or an inline test module, names no file to leave out.
#[test]
fn a_file_declared_under_cfg_test_is_a_test_module() {
    let text = "mod kept;\n#[cfg(test)]\nmod tests;\n\n#[cfg(test)]\npub mod test_peer;\n\
                #[cfg(test)]\npub(crate) mod fixture;\n#[cfg(feature = \"mpi\")]\nmod mpi;\n\
                #[cfg(test)]\nmod inline {\n}\n";
    let names = |parent: &str| -> Vec<String> {
        test_modules(Path::new(parent), text)
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(
        names("src/engine/models/mod.rs"),
        [
            "src/engine/models/tests.rs",
            "src/engine/models/tests",
            "src/engine/models/test_peer.rs",
            "src/engine/models/test_peer",
            "src/engine/models/fixture.rs",
            "src/engine/models/fixture",
        ]
    );
    assert_eq!(names("src/main.rs")[0], "src/tests.rs");
    assert_eq!(
        names("src/remote/agent/session.rs")[..2],
        [
            "src/remote/agent/session/tests.rs",
            "src/remote/agent/session/tests"
        ]
    );
    // On this tree: the moved-out tests and fixtures are left out, their
    // parents and every code file kept.
    let code = code_files(&src());
    let has = |rel: &str| code.contains(&src().join(rel));
    for test in [
        "architecture.rs",
        "analysis/warnings/tests.rs",
        "remote/agent/session/tests.rs",
        "machine/doctor/fixture.rs",
        "engine/models/test_peer.rs",
    ] {
        assert!(!has(test), "{test} is a test module, yet counted as code");
    }
    for kept in [
        "main.rs",
        "analysis/warnings/mod.rs",
        "remote/agent/session.rs",
        "machine/doctor/mod.rs",
        "engine/models/mod.rs",
    ] {
        assert!(has(kept), "{kept} is code, yet left out");
    }
    // A test module's declaration is left out of its parent's code, and
    // what follows it is kept.
    let doctor = code_of(&src().join("machine/doctor/mod.rs"));
    assert!(!doctor.contains("mod fixture;") && doctor.contains("mod interrupts;"));
}

/// No source file is over [`MAX_LINES`] lines, test modules included.
#[test]
fn no_source_file_is_over_800_lines() {
    let mut files = Vec::new();
    walk(&src(), &mut files);
    let src = src();
    let mut over: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).unwrap().lines().count();
            let rel = p.strip_prefix(&src).unwrap().display();
            (n > MAX_LINES).then(|| format!("src/{rel}: {n} lines"))
        })
        .collect();
    over.sort();
    assert!(
        over.is_empty(),
        "over {MAX_LINES} lines (move the tests to a sibling tests.rs, or split \
         the file by responsibility): {over:#?}"
    );
}

/// The most lines `src/cli/` may have, its tests included: flags, help and
/// printing fit; what grows it past this (a study's orchestration, an
/// analysis, a page) belongs to `studies/`, `analysis/` or `output/`.
const CLI_MAX_LINES: usize = 5500;

#[test]
fn the_command_line_stays_within_its_budget() {
    let mut files = Vec::new();
    walk(&src().join("cli"), &mut files);
    let n: usize = files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap().lines().count())
        .sum();
    assert!(
        n <= CLI_MAX_LINES,
        "src/cli/ has {n} lines, over {CLI_MAX_LINES}: move what is not flags, help or \
         printing to studies/, analysis/ or output/"
    );
}

/// The layers of `src/`: its folders and its files (`presets.rs`), less
/// the entry point and test modules (this file).
fn src_layers() -> BTreeSet<String> {
    let src = src();
    let tests = test_modules(
        &src.join("main.rs"),
        &std::fs::read_to_string(src.join("main.rs")).unwrap(),
    );
    std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| !tests.contains(p) && !p.ends_with("main.rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// The layer diagram of a document: the first fenced block after
/// `## Layers`, each line `name ───► a, b, c` (a note in parentheses after
/// the list is no layer), `name ──► every layer below` (every layer the
/// lines below it name), or `a  b  c  (nothing)`. Each layer with the set
/// it may use.
fn diagram(doc: &str) -> BTreeMap<String, BTreeSet<String>> {
    let lines: Vec<&str> = doc
        .lines()
        .skip_while(|l| l.trim() != "## Layers")
        .skip_while(|l| !l.starts_with("```"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .collect();
    assert!(!lines.is_empty(), "no layer diagram under '## Layers'");
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut below_all = Vec::new();
    for line in &lines {
        let line = line.trim();
        if let Some((left, right)) = line.split_once('►') {
            let name = left.trim_end_matches(['─', ' ']).trim().to_string();
            assert!(!name.is_empty(), "no layer before the arrow: {line}");
            let right = right.trim();
            let used = if right == "every layer below" {
                below_all.push(name.clone());
                BTreeSet::new()
            } else {
                let list = right.split_once('(').map_or(right, |(l, _)| l);
                list.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            };
            assert!(out.insert(name, used).is_none(), "drawn twice: {line}");
        } else if let Some(names) = line.strip_suffix("(nothing)") {
            for name in names.split_whitespace() {
                assert!(
                    out.insert(name.to_string(), BTreeSet::new()).is_none(),
                    "drawn twice: {name}"
                );
            }
        } else if !line.is_empty() {
            panic!(
                "a line of the layer diagram that is not 'name ──► a, b' nor '… (nothing)': {line}"
            );
        }
    }
    // `every layer below`: the layers drawn on the lines after its own.
    for name in below_all {
        let at = lines
            .iter()
            .position(|l| l.trim().starts_with(&format!("{name} ")))
            .unwrap();
        let below: BTreeSet<String> = lines[at + 1..]
            .iter()
            .flat_map(|l| {
                let l = l.trim();
                match l.split_once('►') {
                    Some((left, _)) => vec![left.trim_end_matches(['─', ' ']).trim().to_string()],
                    None => l
                        .trim_end_matches("(nothing)")
                        .split_whitespace()
                        .map(String::from)
                        .collect(),
                }
            })
            .collect();
        out.insert(name, below);
    }
    out
}

#[test]
fn the_diagram_is_read_as_drawn() {
    let doc = "# x\n## Layers\ntext\n```\ncli ─────► every layer below\n\
               mpi ──► engine, sys   (cargo feature `mpi` only)\n\
               engine ──► sys\nsys     stats      (nothing)\n```\n\
               ```\nother ──► block\n```\n";
    let d = diagram(doc);
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(d.len(), 5, "{d:?}");
    assert_eq!(d["cli"], set(&["mpi", "engine", "sys", "stats"]));
    assert_eq!(d["mpi"], set(&["engine", "sys"]));
    assert_eq!(d["engine"], set(&["sys"]));
    assert!(d["sys"].is_empty() && d["stats"].is_empty());
}

/// ARCHITECTURE.md names every layer of `src/` in a section of its own
/// (`### NAME (`src/NAME/`` or `(`src/NAME.rs``) that states its
/// `**Invariant:**`, and its layer diagram draws every layer of
/// [`ALLOWED`] with the same list.
#[test]
fn architecture_md_names_every_layer_with_its_invariant_and_allowed_list() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = doc.lines().collect();
    let layers = src_layers();
    assert!(
        layers.contains("engine") && layers.contains("presets"),
        "{layers:?}"
    );
    let mut problems = Vec::new();
    for layer in &layers {
        let heads = [
            format!("### {layer} (`src/{layer}/`"),
            format!("### {layer} (`src/{layer}.rs`"),
        ];
        let Some(at) = lines
            .iter()
            .position(|l| heads.iter().any(|h| l.starts_with(h.as_str())))
        else {
            problems.push(format!("no section '{}' or '{}'", heads[0], heads[1]));
            continue;
        };
        let section = lines[at + 1..].iter().take_while(|l| !l.starts_with('#'));
        if !section.clone().any(|l| l.starts_with("**Invariant:**")) {
            problems.push(format!("section '{}' states no **Invariant:**", lines[at]));
        }
    }
    let allowed: BTreeMap<String, BTreeSet<String>> = ALLOWED
        .iter()
        .map(|(l, d)| (l.to_string(), d.iter().map(|s| s.to_string()).collect()))
        .collect();
    let allowed_layers: BTreeSet<String> = allowed.keys().cloned().collect();
    if allowed_layers != layers {
        problems.push(format!(
            "ALLOWED lists {allowed_layers:?}, src/ holds the layers {layers:?}"
        ));
    }
    let drawn = diagram(&doc);
    for (layer, may) in &allowed {
        match drawn.get(layer) {
            None => problems.push(format!("the layer diagram does not draw {layer}")),
            Some(d) if d != may => problems.push(format!(
                "the layer diagram draws {layer} ──► {d:?}, ALLOWED says {may:?}"
            )),
            Some(_) => {}
        }
    }
    for layer in drawn.keys().filter(|l| !allowed.contains_key(*l)) {
        problems.push(format!(
            "the layer diagram draws {layer}, which ALLOWED has not"
        ));
    }
    assert!(problems.is_empty(), "ARCHITECTURE.md: {problems:#?}");
}
