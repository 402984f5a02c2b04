//! Every diagnostic code is given somewhere in the fixtures: the analysis of every
//! fixture (`tests/fixtures/**/*.mlir`, split on `// -----`) and the passes of the pass
//! fixtures (`// PASSES:` and `// ARGS:` lines) give each code of
//! `DiagnosticCode::ALL` but those the LSP layer gives (tested in
//! `server/sdy-lsp/tests/lsp_diagnostics.rs`), the verifier's fallback and a module
//! that does not verify after a pass (a pass bug; `sdy_analysis::passes` tests it), and
//! some pass's code.

use sdy_analysis::diag::{DiagnosticCode, Severity};
use sdy_analysis::passes::{parse_pass_flag, Pipeline, Session};
use sdy_tests::{fixtures, read_text};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn mlir_files_below(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            mlir_files_below(&path, out);
        } else if path.extension().is_some_and(|e| e == "mlir") {
            out.push(path);
        }
    }
}

/// The flags of a `// PASSES:` (or `opt`'s `// ARGS:`) first line (an option list may
/// hold spaces in quotes).
fn pass_flags(text: &str) -> Vec<String> {
    let first = text.lines().next().unwrap_or("");
    let Some(line) = first.strip_prefix("// PASSES:").or(first.strip_prefix("// ARGS:")) else {
        return Vec::new();
    };
    let mut flags: Vec<String> = Vec::new();
    let mut quoted = false;
    for word in line.split_whitespace() {
        match flags.last_mut() {
            Some(last) if quoted => {
                last.push(' ');
                last.push_str(word);
            }
            _ => flags.push(word.to_string()),
        }
        quoted ^= word.matches('"').count() % 2 == 1;
    }
    flags
}

fn codes_in_fixtures() -> HashSet<DiagnosticCode> {
    let mut files = Vec::new();
    mlir_files_below(&fixtures(""), &mut files);
    assert!(files.len() > 50, "fixtures not found");
    let mut codes = HashSet::new();
    let mut session = Session::new(true);
    for file in files {
        let Some(text) = read_text(&file) else { continue };
        let mut pipeline = Pipeline::new();
        for flag in pass_flags(&text) {
            if let Ok(spec) = parse_pass_flag(&flag) {
                let _ = pipeline.add(&spec);
            }
        }
        for chunk in sdy_analysis::parse_chunks(&text, true) {
            let analysis = sdy_analysis::analyze_chunk(&text, &chunk);
            codes.extend(analysis.diagnostics.iter().map(|d| d.code));
            let failed = analysis.diagnostics.iter().any(|d| d.severity == Severity::Error);
            if !pipeline.is_empty() && !failed {
                let run = pipeline.run(&text, &chunk, &analysis.model, &mut session);
                codes.extend(run.diagnostics.iter().map(|d| d.code));
            }
        }
    }
    codes
}

#[test]
fn every_code_appears_in_a_fixture() {
    let codes = codes_in_fixtures();
    let elsewhere = [
        DiagnosticCode::Reshard,
        DiagnosticCode::PropagationFailed,
        DiagnosticCode::Replicated,
        DiagnosticCode::CostExportFailed,
        DiagnosticCode::Verifier,
        DiagnosticCode::VerifyAfterPass,
    ];
    let missing: Vec<&str> = DiagnosticCode::ALL
        .iter()
        .filter(|c| !elsewhere.contains(c) && !codes.contains(c))
        .map(|c| c.as_str())
        .collect();
    assert!(missing.is_empty(), "no fixture gives {missing:?}");
    assert!(codes.iter().any(|c| matches!(c, DiagnosticCode::Pass(_))), "no pass diagnostic");
}
