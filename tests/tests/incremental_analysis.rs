//! Incremental analysis equals a fresh one: random edits (characters, whitespace,
//! tokens, lines, renamed values, changed meshes; some breaking the syntax and later
//! restoring it) go through the syntax layer's incremental re-parse, then
//! `ChunkAnalysis::update`; after each, the model and the diagnostics must equal those
//! of a fresh analysis of the new tree, and the diagnostics those of `analyze_chunk`.
//!
//! Some updates cover several edits at once, as in the server when edits arrive while
//! it is busy.
//!
//! `SDY_INCREMENTAL_EDITS=<n>` sets the edits per input (default 150).

use sdy_analysis::{analyze_chunk, analyze_chunk_incremental, ChunkAnalysis};
use sdy_syntax::document::Document;
use sdy_syntax::tree::Chunk;
use sdy_syntax::Span;
use std::path::Path;

/// Small deterministic PRNG (xorshift64*), so failures are reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const BUILTIN: &str = r#"sdy.mesh @mesh = <["x"=2, "y"=4]>
sdy.mesh @other = <["a"=8]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {"y"}p1]>}) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg2: tensor<4x8xf32>) {
    %3 = stablehlo.multiply %arg2, %arg2 : tensor<4x8xf32>
    %4 = sdy.all_reduce {"y"} %3 out_sharding=<@mesh, [{}, {}]> : tensor<4x8xf32>
    %out = stablehlo.negate %1 : tensor<8x8xf32>
    sdy.return %4 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %5 = sdy.propagation_barrier %2 allowed_direction=BACKWARD : tensor<8x8xf32>
  %6 = sdy.reshard %5 <@mesh, [{"y"}, {"x"}]> : tensor<8x8xf32>
  %7:2 = stablehlo.while(%iterArg = %6, %iterArg_0 = %c) : tensor<8x8xf32>, tensor<i64>
   cond {
    %8 = stablehlo.compare  LT, %iterArg_0, %c : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %8 : tensor<i1>
  } do {
    %9 = stablehlo.custom_call @foo(%iterArg) {has_side_effect = true} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    stablehlo.return %9, %iterArg_0 : tensor<8x8xf32>, tensor<i64>
  }
  %c = stablehlo.constant dense<1> : tensor<i64>
  %10 = sdy.data_flow_edge %7#0 sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %11 = stablehlo.add %10, %undefined : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
func.func @helper(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@other, [{"a"}]>]>} : tensor<8xf32>
  %late = stablehlo.add %later, %0 : tensor<8xf32>
  %later = stablehlo.negate %0 : tensor<8xf32>
  %1 = sdy.named_computation<"n">(%0) (%arg1: tensor<8xf32>) {
    sdy.return %arg1 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
"#;

/// The inputs: the module above, the examples, a sample of the conformance cases and
/// the 1k-line corpus file when `../shared` is there.
fn inputs() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = vec![("builtin".to_string(), BUILTIN.to_string())];
    // Symbols defined twice (a function, a mesh named like a function: the symbol table
    // reports them while edits go on inside functions) and ops for several blocks of
    // the incremental state's facts.
    let helper = &BUILTIN[BUILTIN.find("func.func @helper").expect("helper")..];
    let mut clashing = BUILTIN.to_string();
    for k in 0..8 {
        clashing.push_str(&helper.replace("@helper", &format!("@helper{k}")));
    }
    clashing.push_str(helper);
    clashing.push_str("sdy.mesh @helper3 = <[\"z\"=2]>\n");
    out.push(("builtin, symbols twice".to_string(), clashing));
    let mut add_dir = |dir: &Path, every: usize| {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.retain(|p| p.extension().is_some_and(|e| e == "mlir"));
        paths.sort();
        for p in paths.iter().step_by(every) {
            if let Ok(t) = std::fs::read_to_string(p) {
                out.push((p.display().to_string(), t));
            }
        }
    };
    add_dir(&root.join("examples"), 1);
    let shared = root.join("../shared");
    for (dir, every) in
        [("conformance/ir", 6), ("conformance/propagation", 12), ("conformance/debugging", 6)]
    {
        add_dir(&shared.join(dir), every);
    }
    if let Ok(t) = std::fs::read_to_string(shared.join("corpus/tfm_1k.mlir")) {
        out.push(("tfm_1k.mlir".into(), t));
    }
    out
}

const SNIPPETS: &[&str] = &[
    " ",
    "\n",
    "  ",
    "{",
    "}",
    "(",
    ")",
    "<",
    ">",
    "[",
    "]",
    ",",
    "=",
    ":",
    "\"",
    "%",
    "@",
    "#",
    "x",
    "0",
    "7",
    "%0",
    "%c",
    "%arg0",
    "@mesh",
    "@other",
    "?",
    "p1",
    "\"x\"",
    "\"y\"",
    "\"a\"",
    "tensor<8xf32>",
    "stablehlo.add",
    "sdy.reshard",
    "return",
    "loc(",
    "// c\n",
    "^bb1:",
    "%99 = stablehlo.add %0, %0 : tensor<8x8xf32>\n",
    "{\"x\"}",
    "replicated={\"y\"}",
    "sdy.mesh @new = <[\"x\"=4]>\n",
    "%z = stablehlo.negate %arg0 : tensor<8x8xf32>\n",
    "é",
];

/// Whole statements, inserted at the start of a line: new definitions and uses, among
/// them second uses of values whose single use matters (data-flow edges, barriers).
const STATEMENTS: &[&str] = &[
    "  %u = stablehlo.negate %7#0 : tensor<8x8xf32>\n",
    "  %w = stablehlo.negate %2 : tensor<8x8xf32>\n",
    "  %v = sdy.data_flow_edge %6 sharding=<@mesh, [{\"y\"}, {}]> : tensor<8x8xf32>\n",
    "  %q = sdy.propagation_barrier %11 allowed_direction=BOTH : tensor<8x8xf32>\n",
    "  %r = sdy.reshard %5 <@other, [{\"a\"}, {}]> : tensor<8x8xf32>\n",
    "  %s = stablehlo.add %c, %c : tensor<i64>\n",
    "sdy.mesh @mesh = <[\"x\"=4]>\n",
    "  return %0 : tensor<8x8xf32>\n",
    "    sdy.return %3 : tensor<4x8xf32>\n",
    "    sdy.return %arg1 : tensor<8xf32>\n",
];

/// One random edit of `text`: a byte range (on char boundaries) and its replacement.
fn random_edit(rng: &mut Rng, text: &str) -> (std::ops::Range<usize>, String) {
    let len = text.len();
    let boundary = |mut p: usize| {
        while p > 0 && !text.is_char_boundary(p) {
            p -= 1;
        }
        p
    };
    let at = boundary(rng.below(len + 1));
    match rng.below(10) {
        // A statement at the start of a line.
        9 => {
            let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            (start..start, STATEMENTS[rng.below(STATEMENTS.len())].to_string())
        }
        // Insert a snippet.
        0 | 1 => (at..at, SNIPPETS[rng.below(SNIPPETS.len())].to_string()),
        // Delete a few characters.
        2 => (at..boundary((at + 1 + rng.below(8)).min(len)), String::new()),
        // Whitespace.
        3 => (at..at, [" ", "\n", "\t", "  \n  "][rng.below(4)].to_string()),
        // A whole line: delete or duplicate it.
        4 => {
            let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let end = text[at..].find('\n').map_or(len, |i| at + i + 1);
            if rng.chance(50) {
                (start..end, String::new())
            } else {
                (start..start, text[start..end].to_string())
            }
        }
        // Rename a value: an occurrence of `%name` becomes another name.
        5 => match find_token(text, at, '%') {
            Some(r) => {
                let names =
                    ["%0", "%1", "%arg0", "%c", "%renamed", "%5", "%iterArg", "%7#0", "%6", "%2"];
                (r, names[rng.below(names.len())].to_string())
            }
            None => (at..at, " ".to_string()),
        },
        // A mesh: rename a reference or definition, or change an axis size.
        6 => match find_token(text, at, '@') {
            Some(r) if rng.chance(50) => (r, ["@mesh", "@other", "@m2"][rng.below(3)].to_string()),
            _ => match text[at..].find("\"=").map(|i| at + i + 2) {
                Some(p) if p < len && text.as_bytes()[p].is_ascii_digit() => {
                    (p..p + 1, ["1", "2", "3", "4", "8", "0"][rng.below(6)].to_string())
                }
                _ => (at..at, "\n".to_string()),
            },
        },
        // A digit.
        7 => match text[at..].find(|c: char| c.is_ascii_digit()) {
            Some(i) => (at + i..at + i + 1, rng.below(10).to_string()),
            None => (at..at, "1".to_string()),
        },
        // A token deleted.
        _ => {
            let end = text[at..]
                .find(|c: char| c.is_whitespace() || ",()<>{}[]".contains(c))
                .map_or(len, |i| at + i.max(1));
            (at..boundary(end.min(len)), String::new())
        }
    }
}

/// The range of the `sigil`-prefixed name at or after `at`.
fn find_token(text: &str, at: usize, sigil: char) -> Option<std::ops::Range<usize>> {
    let start = at + text[at..].find(sigil)?;
    let rest = &text[start + 1..];
    let n = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$'))
        .unwrap_or(rest.len());
    Some(start..start + 1 + n)
}

/// A chunk with positions relative to its start, and its text (as the server has them).
fn relative(doc: &Document, i: usize) -> (Chunk, String) {
    let c = &doc.chunks()[i];
    let text: String = doc.text().byte_slice(c.span.start as usize..c.span.end as usize).into();
    (Chunk { span: Span::new(0, c.span.len()), top: c.top.clone() }, text)
}

#[derive(Default, Debug)]
struct Counts {
    edits: usize,
    /// Updates of changed chunks: done incrementally, or afresh (by reason).
    incremental: usize,
    fresh: std::collections::BTreeMap<&'static str, usize>,
}

/// Applies `edits` random edits to `text`; after each, checks every chunk's updated
/// analysis against a fresh one.
fn run(name: &str, text: &str, seed: u64, edits: usize, counts: &mut Counts) {
    let mut rng = Rng(seed);
    let split = text.contains("// -----");
    let mut doc = Document::new(text, split);
    let mut analyses: Vec<Option<ChunkAnalysis>> = (0..doc.chunks().len())
        .map(|i| {
            let (chunk, src) = relative(&doc, i);
            Some(analyze_chunk_incremental(&src, &chunk))
        })
        .collect();
    // An edit that broke something, to undo a few edits later.
    let mut undo: Option<(usize, std::ops::Range<usize>, String)> = None;
    for step in 0..edits {
        let current: String = doc.text().to_string();
        let (range, insert) = match undo.take() {
            Some((when, r, s))
                if when == step
                    && r.end <= current.len()
                    && current.is_char_boundary(r.start)
                    && current.is_char_boundary(r.end) =>
            {
                (r, s)
            }
            Some(u) if u.0 > step => {
                undo = Some(u);
                random_edit(&mut rng, &current)
            }
            _ => random_edit(&mut rng, &current),
        };
        if undo.is_none() && rng.chance(20) {
            // Undo this edit a few steps later (if nothing before it moved the text).
            let removed = current[range.clone()].to_string();
            undo =
                Some((step + 1 + rng.below(3), range.start..range.start + insert.len(), removed));
        }
        doc.apply_edit(range.clone(), &insert);
        counts.edits += 1;
        if step + 1 < edits && rng.chance(30) {
            // Several edits in one update, as the server sees them when they arrive
            // while it is busy (it analyses only the newest text).
            continue;
        }
        let old: Vec<Option<ChunkAnalysis>> = std::mem::take(&mut analyses);
        let mut old = old.into_iter();
        let same_chunks = doc.chunks().len();
        for i in 0..same_chunks {
            let (chunk, src) = relative(&doc, i);
            let previous = old.next().flatten();
            let analysis = match previous {
                Some(a) => {
                    let (a, stats) = a.update(&src, &chunk);
                    match stats.fresh {
                        Some(why) => *counts.fresh.entry(why).or_default() += 1,
                        None if stats == Default::default() => {} // the chunk did not change
                        None => counts.incremental += 1,
                    }
                    a
                }
                None => analyze_chunk_incremental(&src, &chunk),
            };
            let fresh = analyze_chunk_incremental(&src, &chunk);
            let context = || {
                format!(
                    "{name}, seed {seed}, edit {step} ({range:?} -> {insert:?}), chunk {i}:\n{}",
                    excerpt(&src, range.start)
                )
            };
            if let Some(d) = analysis.model.difference(&fresh.model) {
                panic!("model differs after {}\n{d}", context());
            }
            assert_eq!(
                analysis.diagnostics,
                fresh.diagnostics,
                "diagnostics differ after {}",
                context()
            );
            let plain = analyze_chunk(&src, &chunk);
            assert_eq!(
                plain.diagnostics,
                fresh.diagnostics,
                "analyze_chunk differs after {}",
                context()
            );
            analyses.push(Some(analysis));
        }
    }
}

fn excerpt(text: &str, at: usize) -> String {
    let lo = text[..at.min(text.len())].char_indices().rev().nth(120).map_or(0, |(i, _)| i);
    let hi = text[at.min(text.len())..].char_indices().nth(120).map_or(text.len(), |(i, _)| at + i);
    text.get(lo..hi).unwrap_or("").to_string()
}

#[test]
fn incremental_analysis_equals_fresh() {
    let edits: usize =
        std::env::var("SDY_INCREMENTAL_EDITS").ok().and_then(|v| v.parse().ok()).unwrap_or(150);
    let mut counts = Counts::default();
    for (k, (name, text)) in inputs().iter().enumerate() {
        // Big files get fewer edits (every check is a fresh analysis too), the module
        // written for this test more.
        let n = match text.len() {
            _ if k == 0 => edits * 10,
            l if l > 50_000 => edits / 5,
            _ => edits,
        };
        run(name, text, 0x9E37_79B9_7F4A_7C15 ^ k as u64, n, &mut counts);
    }
    eprintln!("incremental analysis: {counts:?}");
    // The test is about the incremental path: most updates must take it.
    let fresh: usize = counts.fresh.values().sum();
    assert!(counts.incremental > 3 * fresh, "too few incremental updates: {counts:?}");
}
