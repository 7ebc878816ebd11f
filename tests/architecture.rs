//! The dependency rules of docs/architecture.md, checked on the source text:
//! the model and the passes know no file format, no writer and no command
//! line, and the top-level modules import each other without cycles.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The non-test code of a file without its comments (doc links may name any
/// module; unit tests may use any module to build their inputs).
fn code_of(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    let mut lines: Vec<&str> = Vec::new();
    let mut iter = text.lines().peekable();
    while let Some(l) = iter.next() {
        if l.trim() == "#[cfg(test)]"
            && iter
                .peek()
                .is_some_and(|n| n.trim_start().starts_with("mod "))
        {
            break;
        }
        lines.push(match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        });
    }
    lines.join("\n")
}

/// The top-level module a source file belongs to (`src/analysis/ops.rs` ->
/// `analysis`, `src/names.rs` -> `names`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The top-level modules of the crate that `code` names as `crate::<module>`.
fn crate_imports(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::X, b, c::{..}}`: the first name of each item.
            let mut depth = 0;
            let mut start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    _ if start && !c.is_whitespace() => {
                        names.push(ident(&group[j..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            names.push(ident(rest));
        }
    }
    names.into_iter().filter(|n| modules.contains(n)).collect()
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Which top-level modules each top-level module imports.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = src_dir();
    let files = rust_files(&src);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(&src, f))
        .filter(|m| !["lib", "main", "test_support"].contains(&m.as_str()))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let m = module_of(&src, f);
        if ["lib", "main", "test_support"].contains(&m.as_str()) {
            continue;
        }
        let mut deps = crate_imports(&code_of(f), &modules);
        deps.remove(&m);
        graph.entry(m).or_default().extend(deps);
    }
    graph
}

#[test]
fn model_and_passes_know_no_format_writer_or_cli() {
    let src = src_dir();
    let mut offenders = Vec::new();
    for dir in ["analysis", "trace"] {
        for f in rust_files(&src.join(dir)) {
            let code = code_of(&f);
            for forbidden in ["crate::load", "crate::report", "crate::cli", "crate::api"] {
                if code.contains(forbidden) {
                    offenders.push(format!("{} uses {forbidden}", f.display()));
                }
            }
            if dir == "analysis" && code.contains("serde_json") {
                offenders.push(format!("{} uses serde_json", f.display()));
            }
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
}

/// The leaf utilities the model may use: they import nothing of the crate.
const LEAVES: [&str; 2] = ["numeric", "timings"];

#[test]
fn trace_imports_only_leaf_utilities() {
    let graph = module_graph();
    let deps = graph.get("trace").cloned().unwrap_or_default();
    let extra: Vec<_> = deps
        .iter()
        .filter(|d| !LEAVES.contains(&d.as_str()))
        .collect();
    assert!(extra.is_empty(), "trace imports {extra:?}");
    for leaf in LEAVES {
        let deps = graph.get(leaf).cloned().unwrap_or_default();
        assert!(deps.is_empty(), "{leaf} imports {deps:?}");
    }
}

#[test]
fn top_level_modules_have_no_import_cycle() {
    let graph = module_graph();
    // Depth-first search with colours: a grey module met again closes a cycle.
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let start = path.iter().position(|p| p == m).unwrap();
                let mut cycle = path[start..].to_vec();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for d in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, graph, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in graph.keys() {
        let mut path = Vec::new();
        if let Some(cycle) = visit(m, &graph, &mut state, &mut path) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_checker_sees_imports() {
    // Guards the checks above against passing vacuously.
    let graph = module_graph();
    assert!(graph.get("analysis").is_some_and(|d| d.contains("trace")));
    assert!(graph.get("load").is_some_and(|d| d.contains("trace")));
}

/// The report families under `src/analysis/`: each folder is one report.
const FAMILIES: [&str; 3] = ["pytorch", "jax", "rocprof"];

#[test]
fn report_families_share_only_through_common() {
    let analysis = src_dir().join("analysis");
    let mut offenders = Vec::new();
    for family in FAMILIES {
        for f in rust_files(&analysis.join(family)) {
            let code = code_of(&f);
            for other in FAMILIES.iter().filter(|&&o| o != family) {
                if code.contains(&format!("analysis::{other}")) {
                    offenders.push(format!("{} uses analysis::{other}", f.display()));
                }
            }
        }
    }
    for f in rust_files(&analysis.join("common")) {
        let code = code_of(&f);
        for part in FAMILIES.iter().chain(&["commands"]) {
            if code.contains(&format!("analysis::{part}")) {
                offenders.push(format!("{} uses analysis::{part}", f.display()));
            }
        }
    }
    assert!(offenders.is_empty(), "{}", offenders.join("\n"));
    // Guards the check against passing vacuously: the families are there
    // and read the shared folder.
    let jax = code_of(&analysis.join("jax/launchers.rs"));
    assert!(jax.contains("analysis::common::"));
}
