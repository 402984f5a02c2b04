//! No panic and no hang on any input: arbitrary bytes, random mutations of real files,
//! pathological nesting and very long lines go through the whole analysis.
//!
//! `SDY_FUZZ_SECONDS=600 cargo test --release -p sdy-tests --test no_panic -- --nocapture`
//! runs the mutation fuzzer for that long instead of the short CI budget.

use proptest::prelude::*;
use sdy_tests::{mutate, mutation_seeds, Rng, SNIPPETS};
use std::time::{Duration, Instant};

/// Runs everything we have over `text`, split and unsplit.
fn analyze_everything(text: &str) {
    for split in [false, true] {
        for chunk in sdy_analysis::parse_chunks(text, split) {
            let a = sdy_analysis::analyze_chunk(text, &chunk);
            let _ = sdy_analysis::syntax_diags::first_parse_failure(&a.diagnostics);
        }
    }
}

#[test]
fn mutated_real_files() {
    let seeds = mutation_seeds();
    let budget = sdy_tests::fuzz_budget();
    let start = Instant::now();
    let mut rng = Rng(0x9E3779B97F4A7C15);
    let mut runs = 0u64;
    while start.elapsed() < budget {
        let seed = &seeds[rng.below(seeds.len())];
        let text = mutate(&mut rng, seed);
        analyze_everything(&text);
        runs += 1;
    }
    eprintln!("no_panic: {runs} mutated inputs analysed in {:?}", start.elapsed());
    assert!(runs > 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        analyze_everything(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn arbitrary_token_soup(parts in proptest::collection::vec(0..SNIPPETS.len(), 0..200)) {
        let text: String = parts.iter().map(|&i| SNIPPETS[i]).collect::<Vec<_>>().join(" ");
        analyze_everything(&text);
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    for open in ["{", "(", "[", "<", "#sdy.sharding<", "tensor<"] {
        let text = format!("%0 = \"d.op\"() {{a = {}}} : () -> ()\n", open.repeat(10_000));
        analyze_everything(&text);
        let text = format!("func.func @f() {{\n{}\n}}", open.repeat(10_000));
        analyze_everything(&text);
    }
    // 10k nested regions.
    let text = format!("{}{}", "\"d.op\"() ({\n".repeat(10_000), "}) : () -> ()\n".repeat(10_000));
    analyze_everything(&text);
}

#[test]
fn one_megabyte_line() {
    let args: Vec<String> = (0..20_000)
        .map(|i| {
            format!("%arg{i}: tensor<8xf32> {{sdy.sharding = #sdy.sharding<@m, [{{\"x\"}}]>}}")
        })
        .collect();
    let text = format!(
        "sdy.mesh @m = <[\"x\"=2]>\nfunc.func @main({}) {{\n  return\n}}\n",
        args.join(", ")
    );
    assert!(text.len() > 1_000_000);
    let start = Instant::now();
    analyze_everything(&text);
    assert!(start.elapsed() < Duration::from_secs(30), "a long line must stay linear");
}
