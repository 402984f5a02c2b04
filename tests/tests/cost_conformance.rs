//! The communication view lists exactly the collectives `opt` prints for the same
//! passes: for every chunk of Shardy's lit tests (`../shared/conformance*/`) that `opt`
//! runs without failure, as written (`-sdy-insert-explicit-reshards=enable-full-version=true
//! -sdy-reshard-to-collectives`) and after `-sdy-propagation-pipeline` (the same two
//! passes after it), the collectives of `opt`'s printed output (read back from the
//! text) equal those of `sdy_analysis::cost` (kind, axes, bytes per device).
//! Chunks with errors, or where `opt` fails, do not apply and are skipped.

use sdy_analysis::collectives::{describe_ir, describe_stablehlo, Kind};
use sdy_analysis::cost;
use sdy_analysis::ir::build_module;
use sdy_analysis::passes::{parse_pass_flag, Pipeline, Session};
use sdy_analysis::propagation::editor::{propagate, Strategy};
use sdy_analysis::propagation::graph::Graph;
use std::path::{Path, PathBuf};

type Listed = Vec<(String, String, Option<i64>)>;

const EXPORT: [&str; 2] =
    ["-sdy-insert-explicit-reshards=enable-full-version=true", "-sdy-reshard-to-collectives"];

fn corpus() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    let mut files = Vec::new();
    for top in ["conformance", "conformance-passes"] {
        let Ok(dirs) = std::fs::read_dir(root.join(top)) else { continue };
        for d in dirs.flatten() {
            if let Ok(entries) = std::fs::read_dir(d.path()) {
                files.extend(entries.flatten().map(|e| e.path()));
            }
        }
    }
    files.retain(|p| p.extension().is_some_and(|e| e == "mlir"));
    files.sort();
    files
}

/// The collectives of a printed module.
fn of_text(text: &str) -> Listed {
    let chunk = sdy_analysis::parse_chunks(text, false).remove(0);
    let m = build_module(text, &chunk);
    let g = Graph::build(&m);
    let mut out = Listed::new();
    for i in g.pre_order() {
        if Kind::of_op(&g.node(i).name).is_none() {
            continue;
        }
        let c = describe_ir(&m, &g, i).or_else(|| describe_stablehlo(&m, &g, i));
        if let Some(c) = c {
            out.push((c.kind.name().into(), format!("{:?}", c.axes), c.bytes_sent));
        }
    }
    out.sort();
    out
}

fn of_cost(c: &cost::Cost) -> Listed {
    let mut out: Listed = c
        .functions
        .iter()
        .flat_map(|f| &f.collectives)
        .map(|c| {
            (
                c.collective.kind.name().into(),
                format!("{:?}", c.collective.axes),
                c.collective.bytes_sent,
            )
        })
        .collect();
    out.sort();
    out
}

/// `opt`'s output for these passes, unless a pass fails.
fn opt(
    text: &str,
    chunk: &sdy_syntax::tree::Chunk,
    model: &sdy_analysis::model::Model,
    flags: &[&str],
) -> Option<String> {
    let mut p = Pipeline::new();
    for f in flags {
        p.add(&parse_pass_flag(f).ok()?).ok()?;
    }
    let run = p.run(text, chunk, model, &mut Session::new(false));
    run.printed.filter(|_| !run.failed)
}

#[test]
fn the_communication_view_lists_opts_collectives() {
    let (mut cases, mut with_collectives, mut mismatches) = (0, 0, Vec::new());
    for path in corpus() {
        let text = std::fs::read_to_string(&path).unwrap();
        for chunk in sdy_analysis::parse_chunks(&text, true) {
            let a = sdy_analysis::analyze_chunk(&text, &chunk);
            let errors = sdy_analysis::verify::mlir_view(&a.diagnostics, &a.model);
            if errors.iter().any(|d| d.severity == sdy_analysis::diag::Severity::Error) {
                continue;
            }
            // As written.
            if let Some(printed) = opt(&text, &chunk, &a.model, &EXPORT) {
                let c = cost::analyze(&text, &a.model, &build_module(&text, &chunk), &[]);
                let (want, got) = (of_text(&printed), of_cost(&c));
                cases += 1;
                with_collectives += !want.is_empty() as usize;
                if want != got || c.failure.is_some() {
                    mismatches.push(format!(
                        "{} @{} (as written): opt {want:?}, cost {got:?}",
                        path.display(),
                        chunk.span.start
                    ));
                }
            }
            // After the propagation pipeline.
            let flags = ["-sdy-propagation-pipeline", EXPORT[0], EXPORT[1]];
            if let Some(printed) = opt(&text, &chunk, &a.model, &flags) {
                let p = propagate(&text, &chunk, &a.model, &a.diagnostics, Strategy::Pipeline);
                let Some(c) = cost::of_propagation(&text, &a.model, &p) else {
                    mismatches.push(format!(
                        "{} @{}: propagation failed",
                        path.display(),
                        chunk.span.start
                    ));
                    continue;
                };
                let (want, got) = (of_text(&printed), of_cost(&c));
                cases += 1;
                with_collectives += !want.is_empty() as usize;
                if want != got || c.failure.is_some() {
                    mismatches.push(format!(
                        "{} @{} (propagated): opt {want:?}, cost {got:?}",
                        path.display(),
                        chunk.span.start
                    ));
                }
            }
        }
    }
    eprintln!(
        "cost conformance: {cases} cases, {with_collectives} with collectives, {} mismatches",
        mismatches.len()
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    if cases > 0 {
        assert!(with_collectives > 50, "only {with_collectives} cases with collectives");
    }
}
