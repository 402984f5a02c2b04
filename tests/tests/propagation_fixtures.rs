//! Propagation passes on data-driven fixtures: every `tests/fixtures/propagation/NAME.mlir`
//! starts with `// PASSES: FLAG...`; each `// -----` chunk goes through those passes (in
//! the analysis core, like `sdy-lsp opt -split-input-file FLAG...`) and the printed
//! modules are compared with `NAME.out`. The expectations were checked against real
//! Shardy (`../shared/oracle/oracle_opt.py`); `UPDATE_EXPECT=1 cargo test -p sdy-tests
//! --test propagation_fixtures` rewrites them.

use sdy_analysis::diag::Severity;
use sdy_analysis::passes::{parse_pass_flag, Pipeline, Session};
use sdy_analysis::print::print_module;
use sdy_tests::{fixtures, mlir_files};

/// Runs `flags` on every chunk of `text` and prints the results like `sdy_opt`
/// (diagnostics as `LEVEL: MESSAGE` lines after the chunk's output).
pub fn run_passes(text: &str, flags: &[&str]) -> String {
    let mut session = Session::new(false);
    let mut pipeline = Pipeline::new();
    for f in flags {
        let spec = parse_pass_flag(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        pipeline.add(&spec).unwrap();
    }
    let mut outs = Vec::new();
    for chunk in sdy_analysis::parse_chunks(text, true) {
        let analysis = sdy_analysis::analyze_chunk(text, &chunk);
        let diags = sdy_analysis::verify::mlir_view(&analysis.diagnostics, &analysis.model);
        let mut out = String::new();
        if !diags.iter().any(|d| d.severity == Severity::Error) {
            let run = pipeline.run(text, &chunk, &analysis.model, &mut session);
            if !run.failed {
                out = print_module(&run.module);
            }
            for d in run.diagnostics {
                out.push_str(&format!("{}: {}\n", d.severity.as_str(), d.message));
            }
        }
        outs.push(out);
    }
    outs.join("// -----\n")
}

#[test]
fn propagation_fixtures() {
    for input in mlir_files(&fixtures("propagation")) {
        let text = std::fs::read_to_string(&input).unwrap();
        let first = text.lines().next().unwrap_or("");
        let flags: Vec<&str> = first
            .strip_prefix("// PASSES:")
            .unwrap_or_else(|| panic!("{}: no `// PASSES:` line", input.display()))
            .split_whitespace()
            .collect();
        expect_test::expect_file![input.with_extension("out")]
            .assert_eq(&run_passes(&text, &flags));
    }
}

/// Every propagation pass flag parses with its options, and the individual import and
/// export passes of the pipeline are available.
#[test]
fn pass_flags() {
    for f in [
        "-sdy-basic-propagate=keep-sharding-rules=true",
        "-sdy-aggressive-propagate=propagation-strategy=basic-then-aggressive",
        "-sdy-op-priority-propagate=run-op-priority-propagation=false",
        "-sdy-user-priority-propagate=conservative-propagation=true",
        "-sdy-propagation-pipeline=dedup-functions-fully=true",
        "-sdy-add-data-flow-edges",
        "-sdy-apply-sharding-constraints=debug-sharding-origins=true",
        "-sdy-sink-data-flow-edges=sink-debug-propagation-edge-sharding=true",
        "-sdy-lift-inlined-meshes",
        "-sdy-constant-or-scalar-splitter",
        "-sdy-close-shardings",
        "-sdy-insert-explicit-reshards",
        "-symbol-dce",
    ] {
        assert!(parse_pass_flag(f).is_ok(), "{f}");
    }
}
