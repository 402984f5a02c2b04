//! The parallel parse equals the sequential parse (ARCHITECTURE.md, invariant 9): the
//! same tree, hence the same errors and far-reaching ops, wherever the second thread
//! starts. Checked with the speculation started at every line (or many lines) of real
//! files, crafted inputs and mutated inputs, where it lands inside strings, regions,
//! unclosed brackets, generic ops, nesting near the depth limit, ...
//!
//! `SDY_FUZZ_SECONDS=600 cargo test --release -p sdy-tests --test parallel_parse -- --nocapture`
//! runs the mutation part for that long.

use sdy_syntax::parser::{parse_top_level, parse_top_level_sequential, parse_top_level_split_at};
use sdy_tests::{mutate, mutation_seeds, read_text, shared, Rng};
use std::time::Instant;

/// Line starts of `text` (0 included).
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect()
}

/// Parses `text` with the speculation started at each of `ats` and compares with the
/// sequential parse; returns how many segments were adopted in all.
fn check_at(what: &str, text: &str, ats: impl IntoIterator<Item = usize>) -> u32 {
    let seq = parse_top_level_sequential(text);
    let mut adopted = 0;
    for at in ats {
        let (par, n) = parse_top_level_split_at(text, at);
        if par != seq {
            let (p, s) = (format!("{par:#?}"), format!("{seq:#?}"));
            let line = p.lines().zip(s.lines()).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "{what}: speculation at byte {at} differs from the sequential parse at dump \
                 line {line}:\n parallel:   {:?}\n sequential: {:?}\ntext:\n{text}",
                p.lines().nth(line),
                s.lines().nth(line),
            );
        }
        adopted += n;
    }
    adopted
}

/// Every line of small texts, `n` evenly spread lines of big ones.
fn some_lines(text: &str, n: usize) -> Vec<usize> {
    let all = line_starts(text);
    if all.len() <= n {
        return all;
    }
    (0..n).map(|i| all[i * all.len() / n]).collect()
}

fn real_inputs() -> Vec<(String, String)> {
    let mut out =
        vec![("examples/mlp.mlir".into(), include_str!("../../examples/mlp.mlir").into())];
    for dir in ["conformance/ir", "conformance/propagation", "conformance/debugging"] {
        let Ok(entries) = std::fs::read_dir(shared().join(dir)) else { continue };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if let Some(t) = read_text(&p) {
                out.push((p.display().to_string(), t));
            }
        }
    }
    for name in ["tfm_1k.mlir", "tfm_10k.mlir"] {
        if let Some(t) = read_text(&shared().join("corpus").join(name)) {
            out.push((name.into(), t));
        }
    }
    out
}

#[test]
fn real_files_at_many_lines() {
    let mut adopted = 0;
    for (name, text) in real_inputs() {
        let lines = if text.len() > 200_000 { 8 } else { 80 };
        adopted += check_at(&name, &text, some_lines(&text, lines));
        // Per `// -----` chunk too, as the document parses them.
        for span in sdy_syntax::split::split_chunks(&text) {
            let chunk = span.text(&text);
            adopted += check_at(&name, chunk, some_lines(chunk, 40));
        }
    }
    // The speculation must actually be taken, or this test compares the sequential parse
    // with itself.
    assert!(adopted > 1000, "only {adopted} segments adopted");
}

/// The big corpus files, parsed as the server and the CLI parse them (on two threads,
/// from the line `parse_top_level` picks); the speculation from the middle is taken.
#[test]
fn big_corpus_files() {
    let mut seen = 0;
    for name in ["tfm_100k.mlir.gz", "tfm_300k.mlir.gz"] {
        let Some(text) = read_text(&shared().join("corpus").join(name)) else { continue };
        seen += 1;
        let seq = parse_top_level_sequential(&text);
        assert!(parse_top_level(&text) == seq, "{name}: the parallel parse differs");
        let (par, adopted) = parse_top_level_split_at(&text, text.len() / 2);
        assert!(par == seq, "{name}: the parallel parse from the middle differs");
        assert!(adopted > 0, "{name}: the speculation from the middle was not taken");
    }
    if seen == 0 {
        eprintln!("skipping: ../shared/corpus not present");
    }
}

/// Texts where the second thread starts inside constructs that do not end at a line.
const CRAFTED: &[&str] = &[
    // A generic op with a region spanning lines, block arguments, a label.
    "func.func @f(%a: tensor<4xf32>) -> tensor<f32> {\n  %0 = \"stablehlo.reduce\"(%a, %c) ({\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n    %1 = stablehlo.add %x, %y : tensor<f32>\n    stablehlo.return %1 : tensor<f32>\n  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n  %2 = stablehlo.add %0, %0 : tensor<f32>\n  return %2 : tensor<f32>\n}\n",
    // A string holding what looks like statements, a multi-line attribute dictionary.
    "%0 = foo.op {\n  \"a\" = \"\n%1 = foo.bar\",\n  b = 2,\n  c.d = 3\n} : () -> ()\n%1 = foo.baz\n  %2 = foo.qux\n",
    // Unclosed brackets, then statements that end error recovery.
    "func.func @g() {\n  %0 = foo.bar(%a,\n  %1 = foo.baz [1, 2,\n  %2 = \"x.y\"(%1 {\n  sdy.mesh @m = <[\"x\"=2\n  %3 = stablehlo.add %2, %2 : tensor<f32>\n}\n%4 = foo.top\n",
    // A `{` ending a line after an error: recovery parses it as a region.
    "%0 = foo.bar ) {\n  %1 = foo.baz\n  %2 = foo.qux\n}\n%3 = foo.end\n",
    // Stray closers and labels at the top level and in blocks.
    "}\n%0 = foo.a\n^bb1:\n%1 = foo.b\n}\nfunc.func @h() {\n^bb0:\n  %2 = foo.c\n^bb1(%z: f32):\n  %3 = foo.d\n}\n}\n",
    // Regions nested in custom ops and sdy ops, results lists, aliases, a resource.
    "#loc1 = loc(\"x\")\n!t = tensor<4xf32>\nsdy.mesh @mesh = <[\"a\"=2]>\nfunc.func @k(%arg0: !t) -> !t {\n  %0:2, %1 = stablehlo.while(%it = %arg0) : !t\n  cond {\n    %c = stablehlo.constant dense<true> : tensor<i1>\n    stablehlo.return %c : tensor<i1>\n  } do {\n    %5 = sdy.manual_computation(%it) in_shardings=[<@mesh, [{\"a\"}]>] out_shardings=[<@mesh, [{\"a\"}]>] manual_axes={\"a\"} (%q: tensor<2xf32>) {\n      sdy.return %q : tensor<2xf32>\n    } : (!t) -> !t\n    stablehlo.return %5 : !t\n  }\n  return %0#0 : !t\n}\n{-#\n  dialect_resources: {\n    builtin: {\n      x: \"0x1234\"\n    }\n  }\n#-}\n",
    // Comments and blank lines where the speculation starts, no final newline.
    "// c\n\n  // d\n%0 = foo.a // e\n\n\n%1 = foo.b\n  // f\n}",
];

#[test]
fn crafted_inputs_at_every_line() {
    let mut adopted = 0;
    for (i, text) in CRAFTED.iter().enumerate() {
        adopted += check_at(&format!("crafted {i}"), text, line_starts(text));
    }
    assert!(adopted > 10, "only {adopted} segments adopted");
}

/// Nesting near the depth limit: a statement that reads fine at depth 0 (where the
/// second thread parses it) reports "nesting is too deep" where it really is.
#[test]
fn nesting_near_the_depth_limit() {
    for outer in [100, 240, 250, 254, 255, 256, 300] {
        let mut text = String::new();
        for _ in 0..outer {
            text.push_str("\"d.op\"() ({\n");
        }
        text.push_str("%x = \"d.leaf\"() {a = [[[[[[1]]]]]]} : () -> ()\n");
        text.push_str("%y = \"d.leaf\"() ({\n\"d.in\"() : () -> ()\n}) : () -> ()\n");
        for _ in 0..outer {
            text.push_str("}) : () -> ()\n");
        }
        check_at(&format!("depth {outer}"), &text, line_starts(&text));
    }
}

#[test]
fn mutated_inputs() {
    let seeds = mutation_seeds();
    let budget = sdy_tests::fuzz_budget();
    let start = Instant::now();
    let mut rng = Rng(0x2545F4914F6CDD1D);
    let (mut runs, mut adopted) = (0u64, 0);
    while start.elapsed() < budget || runs < 20 {
        let seed = &seeds[rng.below(seeds.len())];
        let text = mutate(&mut rng, seed);
        let lines = line_starts(&text);
        let ats: Vec<usize> = (0..4).map(|_| lines[rng.below(lines.len())]).collect();
        adopted += check_at("mutated input", &text, ats);
        runs += 1;
    }
    eprintln!("parallel_parse: {runs} mutated inputs, {adopted} segments adopted");
    assert!(adopted > 0);
}
