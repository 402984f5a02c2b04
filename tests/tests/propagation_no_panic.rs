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
use sdy_analysis::propagation::{Level, StrategyOption};
use sdy_tests::Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const PASSES: &[&str] = &[
    "-sdy-basic-propagate",
    "-sdy-aggressive-propagate",
    "-sdy-op-priority-propagate",
    "-sdy-user-priority-propagate=debug-sharding-origins=true debug-propagation-edge-sharding=true",
    "-sdy-propagation-pipeline",
];

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
            (Level::Basic, StrategyOption::Basic),
            (Level::UserPriority, StrategyOption::Aggressive),
        ] {
            let opts = InferOptions { level, strategy, conservative: false };
            let _ = infer(text, &chunk, &a.model, &opts);
        }
    }
}

/// Programs to start from: the generator's (when python3 runs), Shardy's propagation
/// inputs (when `../shared` is there) and the bundled example.
fn seeds() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![include_str!("../../examples/mlp.mlir").to_string()];
    let gen = Command::new("python3")
        .arg(root.join("differential/propagation/gen.py"))
        .args(["--seed", "5", "--count", "200"])
        .output();
    match gen {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            out.extend(text.split("// -----\n").map(str::to_string));
        }
        _ => eprintln!("propagation_no_panic: gen.py did not run; using the other seeds"),
    }
    for dir in ["propagation", "debugging"] {
        if let Ok(entries) = std::fs::read_dir(root.join("../../shared/conformance").join(dir)) {
            let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            out.extend(paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
        }
    }
    out
}

/// Replacements that keep a program mostly well formed but change what propagation
/// sees: shapes, axes, sub-axes, open/closed dimensions, priorities, meshes, ops.
const SNIPPETS: &[&str] = &[
    "?",
    "{}",
    "{?}",
    "{\"a\"}",
    "{\"b\", ?}",
    "\"a\":(1)2",
    "\"c\":(2)2",
    "p0",
    "p1",
    "p3",
    "replicated={\"b\"}",
    "unreduced={\"a\"}",
    "x",
    "1",
    "2",
    "3",
    "4",
    "6",
    "8",
    "16",
    "0",
    "tensor<4x6xf32>",
    "tensor<i32>",
    "@mesh",
    "@other",
    "#sdy.sharding<@mesh, [{}]>",
    "stablehlo.add",
    "stablehlo.reshape",
    "stablehlo.transpose",
    "stablehlo.dot_general",
    "\"a\"=1",
    "\"b\"=3",
    "<[]>",
    "maximal_device=0",
    ", ",
    "]",
    "[",
    "}",
    "{",
    ")",
    "(",
];

/// Dimension shardings over the axes the generator's meshes use.
const DIMS: &[&str] = &[
    "{}",
    "{?}",
    "{\"a\"}",
    "{\"b\"}",
    "{\"c\"}",
    "{\"a\", ?}",
    "{\"b\", \"a\"}",
    "{\"c\"}p1",
    "{\"a\"}p0",
    "{}p2",
    "{\"a\":(1)2}",
    "{\"a\":(2)2, ?}",
    "{\"b\", \"c\", ?}p0",
];

/// One random mutation of `text`, on char boundaries: a dimension sharding replaced by
/// another (most such programs stay valid), a token replaced by a snippet, a digit
/// changed, a piece deleted or duplicated.
fn mutate(rng: &mut Rng, text: &str) -> String {
    let boundary = |rng: &mut Rng, s: &str| {
        let mut i = rng.below(s.len() + 1);
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let mut s = text.to_string();
    for _ in 0..1 + rng.below(3) {
        if rng.below(2) == 0 {
            // A dimension sharding: `{` after `[` or `, `, up to its `}`.
            let starts: Vec<usize> = s
                .match_indices('{')
                .map(|(i, _)| i)
                .filter(|&i| s[..i].ends_with('[') || s[..i].ends_with(", "))
                .collect();
            if !starts.is_empty() {
                let a = starts[rng.below(starts.len())];
                if let Some(len) = s[a..].find('}') {
                    s.replace_range(a..a + len + 1, DIMS[rng.below(DIMS.len())]);
                    continue;
                }
            }
        }
        let a = boundary(rng, &s);
        let b = (a + 1 + rng.below(12)).min(s.len());
        let b = (a..=b).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(a);
        match rng.below(4) {
            0 => s.replace_range(a..b, SNIPPETS[rng.below(SNIPPETS.len())]),
            1 => {
                // Change a number: shapes, axis sizes, dimensions, priorities.
                if let Some(d) = s[a..].find(|c: char| c.is_ascii_digit()) {
                    let at = a + d;
                    let digit = char::from(b'0' + rng.below(10) as u8).to_string();
                    s.replace_range(at..at + 1, &digit);
                }
            }
            2 => s.replace_range(a..b, ""),
            _ => {
                let piece = s[a..b].to_string();
                let c = boundary(rng, &s);
                s.insert_str(c, &piece);
            }
        }
    }
    s
}

/// Whether every chunk of `text` verifies (so that every pass ran on all of it).
fn is_valid(text: &str) -> bool {
    sdy_analysis::parse_chunks(text, true).iter().all(|c| {
        let a = sdy_analysis::analyze_chunk(text, c);
        !a.diagnostics.iter().any(|d| d.severity == Severity::Error)
    })
}

fn check(text: &str) {
    // The input being checked, for a hang (no panic to report it).
    if let Some(path) = std::env::var_os("SDY_FUZZ_CURRENT") {
        let _ = std::fs::write(path, text);
    }
    if catch_unwind(AssertUnwindSafe(|| propagate_everything(text))).is_err() {
        let path = std::env::temp_dir().join("propagation_panic.mlir");
        let _ = std::fs::write(&path, text);
        panic!("propagation panicked; the input is in {}", path.display());
    }
}

#[test]
fn seeds_propagate_without_panic() {
    let seeds = seeds();
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
    let seeds = seeds();
    let budget = std::env::var("SDY_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(3));
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
