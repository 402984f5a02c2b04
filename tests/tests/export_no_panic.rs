//! The export passes never panic: explicit reshards (both modes), reshard-to-collectives,
//! pad-for-divisibility, convert-global-to-local, resolve-permutation-factors (both modes) and the
//! export pipeline, each after propagation (so they see what `opt` gives them in real
//! use) and on the program as written (Shardy's export tests carry their own shardings),
//! over the differential generator's programs, Shardy's propagation and export test
//! inputs, and random mutations of them. As in `opt`, passes run only on chunks the
//! verifier accepts.
//!
//! `SDY_FUZZ_SECONDS=600 cargo test --release -p sdy-tests --test export_no_panic -- --nocapture`
//! runs for that long instead of the short CI budget (a debug build also catches
//! arithmetic overflow). A panicking input is written to `$TMPDIR/export_panic.mlir`; with
//! `SDY_FUZZ_CURRENT=FILE` every input is written there before it runs (to find a hang).

use sdy_analysis::diag::Severity;
use sdy_analysis::passes::{parse_pass_flag, Pipeline, Session};
use sdy_tests::program_fuzz::{mutate, run_or_dump, seeds};
use sdy_tests::Rng;
use std::time::Instant;

/// Shardy's inputs for these passes (in `../shared`).
const SEED_DIRS: &[&str] = &["conformance/propagation", "conformance-passes/export"];

/// The pass sequences run on every chunk: the export path after propagation, and each
/// export pass on its own.
const SEQUENCES: &[&[&str]] = &[
    &[
        "-sdy-propagation-pipeline",
        "-sdy-insert-explicit-reshards",
        "-sdy-reshard-to-collectives",
        "-sdy-pad-for-divisibility",
        "-sdy-convert-global-to-local",
    ],
    &[
        "-sdy-propagation-pipeline",
        "-sdy-insert-explicit-reshards=enable-full-version=true",
        "-sdy-reshard-to-collectives=keep-redundant-reshards=true",
    ],
    &["-sdy-propagation-pipeline", "-sdy-resolve-permutation-factors"],
    &["-sdy-propagation-pipeline", "-sdy-export-pipeline=enable-insert-explicit-collectives=true"],
    &["-sdy-insert-explicit-reshards=enable-full-version=true"],
    &["-sdy-reshard-to-collectives"],
    &["-sdy-pad-for-divisibility"],
    &["-sdy-convert-global-to-local=partition-count=8"],
    &["-sdy-resolve-permutation-factors=enable-halo-exchange=false"],
    // Halo exchange (the default), with the partition and with the replica id.
    &["-sdy-resolve-permutation-factors"],
    &["-sdy-resolve-permutation-factors=replica-count=4"],
    &["-sdy-export-pipeline"],
];

/// Runs every sequence on every chunk of `text` the verifier accepts.
fn export_everything(text: &str) {
    for chunk in sdy_analysis::parse_chunks(text, true) {
        let a = sdy_analysis::analyze_chunk(text, &chunk);
        let view = sdy_analysis::verify::mlir_view(&a.diagnostics, &a.model);
        if view.iter().any(|d| d.severity == Severity::Error) {
            continue;
        }
        for flags in SEQUENCES {
            let mut p = Pipeline::new();
            for flag in *flags {
                p.add(&parse_pass_flag(flag).expect("a known pass")).expect("an implemented pass");
            }
            let run = p.run(text, &chunk, &a.model, &mut Session::new(true));
            if !run.failed {
                let _ = sdy_analysis::print::print_module(&run.module);
            }
        }
    }
}

fn check(text: &str) {
    run_or_dump(text, "export_panic.mlir", "an export pass", export_everything);
}

#[test]
fn seeds_export_without_panic() {
    let seeds = seeds(SEED_DIRS);
    assert!(seeds.len() > 1);
    for s in &seeds {
        check(s);
    }
}

#[test]
fn mutated_programs_export_without_panic() {
    let seeds = seeds(SEED_DIRS);
    let budget = sdy_tests::fuzz_budget();
    let start = Instant::now();
    let mut rng = Rng(0x9E3779B97F4A7C15);
    let mut runs = 0u64;
    while start.elapsed() < budget {
        let seed = &seeds[rng.below(seeds.len())];
        let text = mutate(&mut rng, seed);
        check(&text);
        runs += 1;
    }
    eprintln!("export_no_panic: {runs} mutated programs in {:?}", start.elapsed());
    assert!(runs > 0);
}
