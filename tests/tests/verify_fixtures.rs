//! The verifier on data-driven fixtures: every `tests/fixtures/verify/*.mlir` (split on
//! `// -----`) against its `.diags` snapshot (`UPDATE_EXPECT=1` to regenerate), Shardy's
//! verification lit tests through the MLIR view, and zero errors on valid inputs.

use expect_test::expect_file;
use sdy_analysis::diag::{Diagnostic, LineIndex, Severity};
use sdy_tests::{fixtures, mlir_files, read_text, shared};
use std::path::PathBuf;

/// Each chunk's diagnostics and the ones the MLIR view keeps.
fn analyze(text: &str, split: bool) -> Vec<(Vec<Diagnostic>, Vec<Diagnostic>)> {
    sdy_analysis::parse_chunks(text, split)
        .iter()
        .map(|chunk| {
            let a = sdy_analysis::analyze_chunk(text, chunk);
            let view = sdy_analysis::verify::mlir_view(&a.diagnostics, &a.model);
            (a.diagnostics, view)
        })
        .collect()
}

/// `LINE:COL severity: message`, `[mlir]` when `sdy_opt` prints it, notes indented.
fn render(text: &str) -> String {
    let index = LineIndex::new(text);
    let pos = |at: u32| {
        let (l, c) = index.line_col(at);
        format!("{l}:{c}")
    };
    let mut out = String::new();
    for (all, view) in analyze(text, true) {
        for d in &all {
            let mark = if view.contains(d) { " [mlir]" } else { "" };
            out.push_str(&format!(
                "{} {}: {}{mark}\n",
                pos(d.span.start),
                d.severity.as_str(),
                d.message
            ));
            if d.focus != d.span {
                out.push_str(&format!("  focus {}..{}\n", pos(d.focus.start), pos(d.focus.end)));
            }
            for n in &d.notes {
                out.push_str(&format!("  {} note: {}\n", pos(n.span.start), n.message));
            }
        }
    }
    out
}

#[test]
fn fixtures_match_snapshots() {
    for file in mlir_files(&fixtures("verify")) {
        let text = read_text(&file).unwrap();
        expect_file![file.with_extension("diags")].assert_eq(&render(&text));
    }
}

/// `expected-error` annotations of a chunk as (target line, text).
fn expected_errors(chunk: &str, first_line: u32) -> Vec<(u32, String)> {
    let lines: Vec<&str> = chunk.split('\n').collect();
    let is_annotation = |l: &str| l.contains("expected-error") || l.contains("expected-note");
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(at) = line.find("expected-error") else { continue };
        let rest = &line[at + "expected-error".len()..];
        let Some(open) = rest.find("{{") else { continue };
        let Some(close) = rest.rfind("}}") else { continue };
        let designator = rest[..open].trim().trim_start_matches('@');
        let target = match designator {
            "" => i,
            "below" => (i + 1..lines.len()).find(|&k| !is_annotation(lines[k])).unwrap_or(i),
            "above" => (0..i).rev().find(|&k| !is_annotation(lines[k])).unwrap_or(i),
            d => (i as i64 + d.trim_start_matches('+').parse::<i64>().unwrap()) as usize,
        };
        out.push((first_line + target as u32, rest[open + 2..close].to_string()));
    }
    out
}

/// Shardy's verification tests: the MLIR view reports exactly the expected errors.
#[test]
fn shardy_verification_tests() {
    let dir = shared().join("conformance/ir");
    if !dir.exists() {
        return;
    }
    let mut failures = Vec::new();
    let mut cases = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !(name.contains("verification") || name.contains("parsing_failure")) {
            continue;
        }
        let text = read_text(&path).unwrap();
        let index = LineIndex::new(&text);
        for chunk in sdy_analysis::parse_chunks(&text, true) {
            cases += 1;
            let a = sdy_analysis::analyze_chunk(&text, &chunk);
            let view = sdy_analysis::verify::mlir_view(&a.diagnostics, &a.model);
            let first_line = index.line_col(chunk.span.start).0;
            // MLIR's rules: an expectation may match several errors of its line.
            let expected = expected_errors(chunk.span.text(&text), first_line);
            let mut matched = vec![false; expected.len()];
            for d in view.iter().filter(|d| d.severity == Severity::Error) {
                let line = index.line_col(d.span.start).0;
                match expected
                    .iter()
                    .position(|(l, t)| *l == line && d.message.contains(t.as_str()))
                {
                    Some(k) => matched[k] = true,
                    None => {
                        failures.push(format!("{name}:{line}: unexpected error: {}", d.message))
                    }
                }
            }
            for ((line, t), _) in expected.iter().zip(&matched).filter(|(_, m)| !**m) {
                failures.push(format!("{name}:{line}: expected error not produced: {t}"));
            }
        }
    }
    assert!(cases > 200, "only {cases} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every valid input (the corpus, conformance chunks without expected errors) verifies
/// without errors.
#[test]
fn valid_inputs_have_no_errors() {
    let mut inputs: Vec<PathBuf> = Vec::new();
    for name in
        ["corpus/tfm_1k.mlir", "corpus/tfm_10k.mlir", "corpus/variants/tfm_1k.generic.mlir.gz"]
    {
        inputs.push(shared().join(name));
    }
    let mut stack = vec![shared().join("conformance")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "mlir") {
                inputs.push(p);
            }
        }
    }
    let mut failures = Vec::new();
    for path in inputs.iter().filter(|p| p.exists()) {
        let text = read_text(path).unwrap();
        let split = text.lines().next().is_some_and(|l| l.contains("-split-input-file"));
        for chunk in sdy_analysis::parse_chunks(&text, split) {
            if chunk.span.text(&text).contains("expected-error") {
                continue;
            }
            let a = sdy_analysis::analyze_chunk(&text, &chunk);
            for d in a.diagnostics.iter().filter(|d| d.severity == Severity::Error) {
                let (l, c) = LineIndex::new(&text).line_col(d.span.start);
                failures.push(format!("{}:{l}:{c}: {}", path.display(), d.message));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
