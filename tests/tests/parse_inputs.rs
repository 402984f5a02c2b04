//! Every realistic input parses with zero syntax errors: all of `../shared/corpus/` and
//! every conformance chunk that is not expected to fail (no `expected-error`).

use sdy_tests::{read_text, shared};
use std::path::{Path, PathBuf};

/// Syntax errors of `text` as `line: message`.
fn syntax_errors(text: &str, split: bool) -> Vec<String> {
    let index = sdy_analysis::diag::LineIndex::new(text);
    let mut out = Vec::new();
    for chunk in sdy_analysis::parse_chunks(text, split) {
        let chunk_text = chunk.span.text(text);
        if chunk_text.contains("expected-error") {
            continue;
        }
        for d in sdy_analysis::syntax_diags::syntax_diagnostics(&chunk) {
            out.push(format!("{}: {}", index.line_col(d.span.start).0, d.message));
        }
    }
    out
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else if p.to_string_lossy().ends_with(".mlir")
            || p.to_string_lossy().ends_with(".mlir.gz")
        {
            out.push(p);
        }
    }
}

#[test]
fn conformance_inputs_parse() {
    let mut files = Vec::new();
    files_under(&shared().join("conformance"), &mut files);
    if files.is_empty() {
        eprintln!("skipping: ../shared/conformance not present");
        return;
    }
    let mut failures = Vec::new();
    for f in &files {
        let text = read_text(f).unwrap();
        let split = text.lines().next().is_some_and(|l| l.contains("split-input-file"));
        for e in syntax_errors(&text, split) {
            failures.push(format!("{}:{e}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{} syntax errors:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn corpus_parses() {
    let mut files = Vec::new();
    files_under(&shared().join("corpus"), &mut files);
    if files.is_empty() {
        eprintln!("skipping: ../shared/corpus not present");
        return;
    }
    // The 300k-line files are slow in debug builds; CI covers them in release runs.
    let big = std::env::var_os("SDY_BIG_CORPUS").is_some();
    let mut failures = Vec::new();
    for f in &files {
        let name = f.to_string_lossy();
        if !big && (name.contains("300k") || name.contains("100k")) {
            continue;
        }
        let text = read_text(f).unwrap();
        for e in syntax_errors(&text, false) {
            failures.push(format!("{name}:{e}"));
        }
    }
    assert!(failures.is_empty(), "{} syntax errors:\n{}", failures.len(), failures.join("\n"));
}
