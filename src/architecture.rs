//! The architecture ARCHITECTURE.md states, checked against the source:
//! each layer of the crate uses only the layers its allowed list names (and
//! the lists make no circle), and inside the engine there is
//! no import cycle and the rooms depend one way (`run → models → os`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file below `dir`.
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

/// A file's code: its test module (last in the file, by convention) may
/// reach anywhere, and a comment naming a module is no dependency, so both
/// are left out.
fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let tests = (0..lines.len())
        .find(|&i| {
            lines[i].trim() == "#[cfg(test)]"
                && lines
                    .get(i + 1)
                    .is_some_and(|l| l.trim_start().starts_with("mod "))
        })
        .unwrap_or(lines.len());
    lines[..tests]
        .iter()
        .copied()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every engine module (`models::pingpong`, `measure`, …) with the engine
/// modules its non-test code names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    graph_of("engine")
}

/// Every module of the folder `layer` of `src/` with the modules of that
/// layer its non-test code names (through `crate::LAYER::` or `super::`).
fn graph_of(layer: &str) -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(layer);
    let crate_prefix = format!("crate::{layer}::");
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
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
    ("studies", &["history", "analysis", "record"]),
    (
        "remote",
        &["output", "record", "machine", "engine", "stats", "sys"],
    ),
    ("mpi", &["workloads", "machine", "engine", "stats", "sys"]),
    ("testbed", &["engine", "sys"]),
    (
        "cli",
        &[
            "studies",
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
        // The entry point and this test may name any layer.
        if matches!(layer.as_str(), "main" | "architecture") {
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
