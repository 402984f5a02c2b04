//! The propagation engine never panics: random programs of the differential generator
//! (`differential/propagation/gen.py`), Shardy's propagation test inputs when `../shared`
//! is there, and random mutations of both go through every strategy pass, the pipeline
//! and the editor's `infer`. As in MLIR (and `sdy-lsp opt`), passes run only on chunks the
//! verifier accepts; most mutations are rejected by it, which is what that part of the
//! product sees, and the rest are new valid programs for the engine.
//!
//! `SDY_FUZZ_SECONDS=600 cargo test --release -p sdy-tests --test propagation_no_panic -- --nocapture`
//! runs for that long instead of the short CI budget. A panicking input is written to
//! `$TMPDIR/propagation_panic.mlir`; with `SDY_FUZZ_CURRENT=FILE` every input is written
//! there before it runs (to find one that hangs).

use sdy_analysis::diag::Severity;
use sdy_analysis::passes::{parse_pass_flag, Pipeline, Session};
use sdy_analysis::propagation::inference::{infer, InferOptions};
use sdy_analysis::propagation::{Strategy, StrategyOption};
use sdy_tests::program_fuzz::{mutate, run_or_dump, seeds};
use sdy_tests::Rng;
use std::time::Instant;

const PASSES: &[&str] = &[
    "-sdy-basic-propagate",
    "-sdy-aggressive-propagate",
    "-sdy-op-priority-propagate",
    "-sdy-user-priority-propagate=debug-sharding-origins=true debug-propagation-edge-sharding=true",
    "-sdy-propagation-pipeline",
];

/// Shardy's inputs for these passes (in `../shared`).
const SEED_DIRS: &[&str] = &["conformance/propagation", "conformance/debugging"];

/// Runs every pass and `infer` on every chunk of `text`.
fn propagate_everything(text: &str) {
    for chunk in sdy_analysis::parse_chunks(text, true) {
        let a = sdy_analysis::analyze_chunk(text, &chunk);
        let view = sdy_analysis::verify::mlir_view(&a.diagnostics, &a.model);
        if view.iter().any(|d| d.severity == Severity::Error) {
            continue;
        }
        for flag in PASSES {
            let mut p = Pipeline::new();
            p.add(&parse_pass_flag(flag).expect("a known pass")).expect("an implemented pass");
            let run = p.run(text, &chunk, &a.model, &mut Session::new(true));
            if !run.failed {
                let _ = sdy_analysis::print::print_module(&run.module);
            }
        }
        for (level, strategy) in [
            (Strategy::Basic, StrategyOption::Basic),
            (Strategy::UserPriority, StrategyOption::Aggressive),
        ] {
            let opts = InferOptions { level, strategy, conservative: false };
            let _ = infer(text, &chunk, &a.model, &opts);
        }
    }
}

/// Whether every chunk of `text` verifies (so that every pass ran on all of it).
fn is_valid(text: &str) -> bool {
    sdy_analysis::parse_chunks(text, true).iter().all(|c| {
        let a = sdy_analysis::analyze_chunk(text, c);
        !a.diagnostics.iter().any(|d| d.severity == Severity::Error)
    })
}

fn check(text: &str) {
    run_or_dump(text, "propagation_panic.mlir", "propagation", propagate_everything);
}

#[test]
fn seeds_propagate_without_panic() {
    let seeds = seeds(SEED_DIRS);
    assert!(seeds.len() > 1);
    for (i, s) in seeds.iter().enumerate() {
        if std::env::var_os("SDY_TRACE_SEEDS").is_some() {
            eprintln!("seed {i}: {}", s.lines().next().unwrap_or(""));
        }
        check(s);
    }
}

#[test]
fn mutated_programs_propagate_without_panic() {
    let seeds = seeds(SEED_DIRS);
    let budget = sdy_tests::fuzz_budget();
    let start = Instant::now();
    let mut rng = Rng(0x2545F4914F6CDD1D);
    let (mut runs, mut valid) = (0u64, 0u64);
    while start.elapsed() < budget {
        let seed = &seeds[rng.below(seeds.len())];
        let text = mutate(&mut rng, seed);
        check(&text);
        runs += 1;
        valid += u64::from(is_valid(&text));
    }
    eprintln!(
        "propagation_no_panic: {runs} mutated programs ({valid} valid) in {:?}",
        start.elapsed()
    );
    assert!(runs > 0);
}
