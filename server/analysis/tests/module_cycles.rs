//! The top-level modules of sdy-analysis depend on each other without cycles, except
//! through the edges of [`KNOWN`] (which may only shrink: an edge listed that is gone
//! fails too). A module's dependencies are the `crate::<module>` paths in its code,
//! comments and test code left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Edges that still close a cycle, each with why; they go when propagation's shared IR
/// helpers (`propagation::{graph, irutil, edges}`) move to a typed IR of their own.
const KNOWN: &[(&str, &str, &str)] = &[
    ("propagation", "export", "the pipeline's last stage inserts explicit reshards"),
    ("propagation", "explain", "editor hints read value shardings and local shapes"),
    ("export", "passes", "the export pipeline and per-instruction partitioning run passes by flag"),
];

type Graph = BTreeMap<String, BTreeSet<String>>;

fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn rust_files(path: &Path, out: &mut Vec<std::path::PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            rust_files(&entry.unwrap().path(), out);
        }
    } else if path.is_file()
        && path.extension().is_some_and(|e| e == "rs")
        && path.file_name().is_some_and(|n| n != "tests.rs")
        && !path.components().any(|c| c.as_os_str() == "tests")
    {
        out.push(path.to_path_buf());
    }
}

/// The words `crate::` is followed by, also inside `crate::{a, b::c}`.
fn crate_paths(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(group.split(',').map(|p| p.trim().split("::").next().unwrap_or("")));
        } else {
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
            out.push(&rest[..end]);
        }
    }
    out
}

fn module_graph(src: &Path) -> Graph {
    let modules: Vec<String> = std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|m| m != "lib")
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut graph = Graph::new();
    for m in &modules {
        let mut files = Vec::new();
        rust_files(&src.join(m), &mut files);
        rust_files(&src.join(format!("{m}.rs")), &mut files);
        let deps = graph.entry(m.clone()).or_default();
        for f in files {
            let code = code_of(&std::fs::read_to_string(f).unwrap());
            for d in crate_paths(&code) {
                if d != m && modules.iter().any(|x| x == d) {
                    deps.insert(d.to_string());
                }
            }
        }
    }
    graph
}

/// A cycle of `graph`, if it has one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(g: &Graph, m: &str, stack: &mut Vec<String>, done: &mut BTreeSet<String>) -> bool {
        if let Some(i) = stack.iter().position(|s| s == m) {
            stack.drain(..i);
            return true;
        }
        if done.contains(m) {
            return false;
        }
        stack.push(m.to_string());
        for d in g.get(m).into_iter().flatten() {
            if visit(g, d, stack, done) {
                return true;
            }
        }
        stack.pop();
        done.insert(m.to_string());
        false
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        let mut stack = Vec::new();
        if visit(graph, m, &mut stack, &mut done) {
            return Some(stack);
        }
    }
    None
}

#[test]
fn no_cycles_between_top_level_modules() {
    let mut graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    for (from, to, why) in KNOWN {
        let present = graph.get_mut(*from).is_some_and(|d| d.remove(*to));
        assert!(present, "{from} -> {to} ({why}) is gone: take it off KNOWN");
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("a cycle between top-level modules: {} -> {}", cycle.join(" -> "), cycle[0]);
    }
}

#[test]
fn finds_a_cycle() {
    let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")];
    let mut graph = Graph::new();
    for (from, to) in edges {
        graph.entry(from.into()).or_default().insert(to.into());
    }
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c"]);
    graph.get_mut("c").unwrap().remove("a");
    assert_eq!(find_cycle(&graph), None);
    assert_eq!(crate_paths("use crate::{a::B, c};\ncrate::d::e()"), ["a", "c", "d"]);
}
