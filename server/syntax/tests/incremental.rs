//! Incremental re-parsing: after every edit, the incrementally updated `Document` must
//! equal a fresh parse of the same text, and should re-parse little.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sdy_syntax::document::{Document, EditStats};
use sdy_syntax::tree::{Child, Children, Chunk, TypeKind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

// ----- inputs -----

/// Always tested, so the property test never silently tests nothing.
const BUILTIN: &[&str] = &[
    r#"#loc1 = loc("x")
module @m attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {"y"}p1]>}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32> loc(#loc1)
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
    %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg2: tensor<4x8xf32>) {
      %3 = stablehlo.multiply %arg2, %arg2 : tensor<4x8xf32>
      // a comment with ünïcödé — and 日本語
      %4 = "stablehlo.all_reduce"(%3) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
      sdy.return %4 : tensor<4x8xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %5 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
    %6:2 = stablehlo.while(%iterArg = %2, %iterArg_0 = %c) : tensor<8x8xf32>, tensor<i64>
     cond {
      %7 = stablehlo.compare  LT, %iterArg_0, %c : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %7 : tensor<i1>
    } do {
      %8 = stablehlo.custom_call @foo(%iterArg) {has_side_effect = true} : (tensor<8x8xf32>) -> tensor<8x8xf32>
      stablehlo.return %8, %iterArg_0 : tensor<8x8xf32>, tensor<i64>
    }
    return %1 : tensor<8x8xf32>
  }
}
"#,
    r#"// RUN: sdy_opt %s -split-input-file -verify-diagnostics

sdy.mesh @mesh = <["a"=2, "b"=2]>

func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{some error: "ünï"}}
  %0 = sdy.reshard %arg0 <@mesh, [{"a":(1)2}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @g(%arg0: tensor<8xf32>) -> tensor<8xf32> { %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32> }
// -----
#map = affine_map<(d0) -> (d0)>
!t = tensor<8xf32>
func.func private @h(!t) -> !t
{-#
  dialect_resources: { builtin: { blob: "0x04000000" } }
#-}
"#,
];

/// Files from the shared test data (project root's `../shared`), when present.
fn shared_inputs() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let mut files = Vec::new();
    collect_mlir(&root.join("conformance"), &mut files);
    files.push(root.join("corpus/tfm_1k.mlir"));
    files
        .into_iter()
        .filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(&p).ok()?)))
        .collect()
}

fn collect_mlir(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_mlir(&p, out);
        } else if p.extension().is_some_and(|e| e == "mlir") {
            out.push(p);
        }
    }
}

fn inputs() -> &'static [(String, String)] {
    static INPUTS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    INPUTS.get_or_init(|| {
        let mut v: Vec<_> = BUILTIN
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("builtin {i}"), t.to_string()))
            .collect();
        v.extend(shared_inputs());
        if tuple_element_spans_are_shared() {
            // Known parser issue (see `tuple_element_spans_are_per_op`): a fresh parse
            // itself gives tuple elements the spans of the first identical spelling, so
            // no incremental result can match it. Leave tuples out until that is fixed.
            v.retain(|(_, t)| !t.contains("tuple<"));
        }
        v
    })
}

/// Whether the parser's type interning shares a tuple's element types (with their
/// op-relative spans) between ops that spell the same tuple type.
fn tuple_element_spans_are_shared() -> bool {
    let doc = Document::new(
        "%0 = a.b : tuple<f32>
%1 = a.b : i1, tuple<f32>
",
        false,
    );
    let element = |c: &Child| match &*c.op.sig.inputs.last().unwrap().kind {
        TypeKind::Tuple(e) => e[0].span,
        k => panic!("not a tuple: {k:?}"),
    };
    let top = &doc.chunks()[0].top;
    element(&top.at(0).to_child()) == element(&top.at(1).to_child())
}

// ----- edits -----

const SNIPPETS: &[&str] = &[
    "%",
    "{",
    "}",
    "\"",
    "\n",
    "// -----",
    "// -----\n",
    "stablehlo.add",
    " ",
    "(",
    ")",
    "<",
    ">",
    ",",
    "=",
    ":",
    "#",
    "-#",
    "#-",
    "{-#",
    "#-}",
    "^bb1:",
    "1.5e-",
    "3",
    "x",
    "loc(",
    "return",
    "%0 = ",
    "%a, %b",
    "\n}",
    "{\n",
    "é",
    "日本",
    "\u{2028}",
    "\r",
    "//",
    "@",
    "!",
    "sdy.return",
    "func.func @k() {\n",
    "\"foo.bar\"() ({\n",
    "-----",
];

#[derive(Clone, Debug)]
enum EditSpec {
    Insert {
        at: u32,
        text: String,
    },
    Delete {
        at: u32,
        len: u8,
    },
    Replace {
        at: u32,
        len: u8,
        text: String,
    },
    /// Copies line `from` before line `to` (both taken modulo the line count).
    CopyLine {
        from: u32,
        to: u32,
    },
}

fn snippet() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(SNIPPETS).prop_map(str::to_string),
        1 => "\\PC{1,3}",
        1 => "[ -~]{1,8}",
    ]
}

fn edit_spec() -> impl Strategy<Value = EditSpec> {
    prop_oneof![
        3 => (any::<u32>(), snippet()).prop_map(|(at, text)| EditSpec::Insert { at, text }),
        2 => (any::<u32>(), 1u8..24).prop_map(|(at, len)| EditSpec::Delete { at, len }),
        2 => (any::<u32>(), 1u8..12, snippet())
            .prop_map(|(at, len, text)| EditSpec::Replace { at, len, text }),
        1 => (any::<u32>(), any::<u32>()).prop_map(|(from, to)| EditSpec::CopyLine { from, to }),
    ]
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Turns a spec into a byte range and replacement text for `text`.
fn resolve(text: &str, spec: &EditSpec) -> (std::ops::Range<usize>, String) {
    let pos = |at: u32| floor_char(text, at as usize % (text.len() + 1));
    match spec {
        EditSpec::Insert { at, text: t } => (pos(*at)..pos(*at), t.clone()),
        EditSpec::Delete { at, len } => {
            let s = pos(*at);
            (s..floor_char(text, s + *len as usize).max(s), String::new())
        }
        EditSpec::Replace { at, len, text: t } => {
            let s = pos(*at);
            (s..floor_char(text, s + *len as usize).max(s), t.clone())
        }
        EditSpec::CopyLine { from, to } => {
            let starts: Vec<usize> = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .filter(|&i| i <= text.len())
                .collect();
            let a = starts[*from as usize % starts.len()];
            let line_end = text[a..].find('\n').map_or(text.len(), |i| a + i + 1);
            let mut line = text[a..line_end].to_string();
            if !line.ends_with('\n') {
                line.push('\n');
            }
            let b = starts[*to as usize % starts.len()];
            (b..b, line)
        }
    }
}

/// A window of the input: whole if small, else `lines` lines from a chosen line. With
/// `aligned`, the window starts at a line in column 0 and runs to a `}` in column 0 (when
/// one comes within 300 lines), so that functions are whole and edits land deep inside.
fn window(text: &str, start: u32, lines: usize, aligned: bool) -> String {
    let all: Vec<&str> = text.split_inclusive('\n').collect();
    if all.len() <= 150 {
        return text.to_string();
    }
    let mut first = start as usize % (all.len() - lines);
    let mut last = first + lines;
    if aligned {
        while first > 0 && all[first].starts_with([' ', '\t', '}']) {
            first -= 1;
        }
        last = (first + 1..all.len().min(first + 300))
            .find(|&i| all[i].starts_with('}'))
            .map_or(last, |i| i + 1);
    }
    all[first..last].concat()
}

// ----- comparison -----

/// Where two chunk lists first differ, described for a failure message.
fn first_difference(got: &[Chunk], want: &[Chunk]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} chunks, expected {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.span != w.span {
            return Some(format!("chunk {i}: span {:?}, expected {:?}", g.span, w.span));
        }
        if let Some(d) = kids_difference(&g.top, &w.top, g.span.start) {
            return Some(format!("chunk {i}: {d}"));
        }
    }
    None
}

fn kids_difference(got: &Children, want: &Children, base: u32) -> Option<String> {
    for (j, (g, w)) in got.iter().zip(want).enumerate() {
        if g.offset != w.offset {
            return Some(format!(
                "statement {j} at {}, expected at {}",
                base + g.offset,
                base + w.offset
            ));
        }
        if g.op != w.op {
            let at = base + g.offset;
            let (gr, wr) = (&g.op.regions, &w.op.regions);
            if gr.len() == wr.len() {
                for (gr, wr) in gr.iter().zip(wr) {
                    if gr.blocks.len() == wr.blocks.len() {
                        for (gb, wb) in gr.blocks.iter().zip(&wr.blocks) {
                            if let Some(d) = kids_difference(&gb.ops, &wb.ops, at) {
                                return Some(format!("in op at {at}: {d}"));
                            }
                        }
                    }
                }
            }
            return Some(format!("op at {at} differs:\n got {:?}\nwant {:?}", g.op, w.op));
        }
    }
    (got.len() != want.len()).then(|| format!("{} statements, expected {}", got.len(), want.len()))
}

/// Applies `range`/`new` to both the document and a plain string, then checks the
/// document against a fresh parse.
fn edit_and_check(
    doc: &mut Document,
    text: &mut String,
    range: std::ops::Range<usize>,
    new: &str,
) -> Result<EditStats, String> {
    let before = text.clone();
    text.replace_range(range.clone(), new);
    let stats = doc.apply_edit(range.clone(), new);
    let context = || format!("edit {range:?} -> {new:?} ({stats:?}) on text:\n{before}");
    if doc.text() != text.as_str() {
        return Err(format!("rope text differs after {}", context()));
    }
    let fresh = Document::new(text, doc.is_split());
    if let Some(d) = first_difference(doc.chunks(), fresh.chunks()) {
        return Err(format!("{d}\nafter {}", context()));
    }
    // Belt and braces: the derived equality must agree.
    if doc.chunks() != fresh.chunks() {
        return Err(format!("trees differ after {}", context()));
    }
    if doc.far_reaching_ops() != fresh.far_reaching_ops() {
        return Err(format!("far-reaching op tables differ after {}", context()));
    }
    Ok(stats)
}

fn cases(default: u32) -> u32 {
    std::env::var("SDY_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

// ----- the property test -----

#[test]
fn incremental_equals_fresh_parse() {
    let inputs = inputs();
    let mut runner = TestRunner::new(Config { cases: cases(256), ..Config::default() });
    let strategy = (
        any::<prop::sample::Index>(),
        any::<u32>(),
        20usize..120,
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(edit_spec(), 1..16),
    );
    runner
        .run(&strategy, |(input, start, lines, aligned, split, edits)| {
            let (name, full) = &inputs[input.index(inputs.len())];
            let mut text = window(full, start, lines, aligned);
            let mut doc = Document::new(&text, split);
            for spec in &edits {
                let (range, new) = resolve(&text, spec);
                if let Err(e) = edit_and_check(&mut doc, &mut text, range, &new) {
                    return Err(TestCaseError::fail(format!("{name} (split: {split}): {e}")));
                }
            }
            Ok(())
        })
        .unwrap();
}

// ----- targeted tests -----

/// A module with one function of `n` statements.
fn big_function(n: usize) -> String {
    let mut s = String::from(
        "module {\n  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n    %0 = stablehlo.negate %arg0 : tensor<8xf32>\n",
    );
    for i in 1..n {
        s.push_str(&format!(
            "    %{i} = stablehlo.add %{}, %arg0 : tensor<8xf32> loc(\"l{i}\")\n",
            i - 1
        ));
    }
    s.push_str(&format!("    return %{} : tensor<8xf32>\n  }}\n}}\n", n - 1));
    s
}

fn check(
    doc: &mut Document,
    text: &mut String,
    range: std::ops::Range<usize>,
    new: &str,
) -> EditStats {
    edit_and_check(doc, text, range, new).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn edit_inside_one_op_reparses_few_statements() {
    let mut text = big_function(2000);
    let mut doc = Document::new(&text, false);
    let line = text.find("%1000 = stablehlo.add").unwrap();
    // Replace a digit of a type, insert and delete a space, rename a value.
    let digit = line + text[line..].find("<8x").unwrap() + 1;
    for (range, new) in [
        (digit..digit + 1, "4"),
        (line + 5..line + 5, " "),
        (line + 5..line + 6, ""),
        (line..line + 5, "%x"),
    ] {
        let stats = check(&mut doc, &mut text, range, new);
        assert!(stats.statements_reparsed <= 3, "{stats:?}");
        assert_eq!(
            (stats.depth, stats.widenings, stats.chunk_reparsed),
            (2, 0, false),
            "{stats:?}"
        );
        assert!(stats.bytes_reparsed < 400, "{stats:?}");
    }
}

#[test]
fn edit_after_a_very_long_line() {
    // The run re-parsed for the body's first statement is lexed from the start of the
    // function's header line, which here holds thousands of tokens.
    let args: Vec<String> = (0..800).map(|i| format!("%arg{i}: tensor<8xf32>")).collect();
    let mut text = format!(
        "func.func @f({}) -> tensor<8xf32> {{\n  %0 = stablehlo.negate %arg0 : tensor<8xf32>\n  return %0 : tensor<8xf32>\n}}\n",
        args.join(", ")
    );
    let mut doc = Document::new(&text, false);
    let at = text.find("%0 = ").unwrap();
    let stats = check(&mut doc, &mut text, at + 1..at + 2, "1");
    assert_eq!((stats.depth, stats.widenings), (1, 0), "{stats:?}");
    let at = text.find("return").unwrap();
    check(&mut doc, &mut text, at..at, "%2 = stablehlo.abs %1 : tensor<8xf32>\n  ");
}

#[test]
fn unchanged_ops_stay_shared() {
    let mut text = big_function(50);
    let mut doc = Document::new(&text, false);
    let before = doc.clone();
    let at = text.find("%20 = ").unwrap();
    check(&mut doc, &mut text, at + 1..at + 3, "y");
    let body = |d: &Document| {
        let module = d.chunks()[0].top.at(0).op;
        let func = module.regions[0].blocks[0].ops.at(0).op;
        func.regions[0].blocks[0].ops.clone()
    };
    let (old, new) = (body(&before), body(&doc));
    assert_eq!(old.len(), new.len());
    let shared = old.iter().zip(&new).filter(|(a, b)| Arc::ptr_eq(a.op, b.op)).count();
    assert!(shared >= old.len() - 3, "only {shared} of {} ops shared", old.len());
    // The old snapshot is untouched.
    assert_eq!(before.chunks(), Document::new(&before.text().to_string(), false).chunks());
}

#[test]
fn unbalanced_braces() {
    let mut text = big_function(40);
    let mut doc = Document::new(&text, false);
    let at = text.find("%10 = ").unwrap();
    // Open a region in the middle of a statement, then at a line start, then close it.
    check(&mut doc, &mut text, at + 8..at + 8, "{");
    check(&mut doc, &mut text, at..at, "\"foo.bar\"() ({\n");
    let at = text.find("%20 = ").unwrap();
    check(&mut doc, &mut text, at..at, "}) : () -> ()\n");
    // A stray `}` closing the function early, then removed again.
    let at = text.find("%30 = ").unwrap();
    check(&mut doc, &mut text, at..at, "}\n");
    check(&mut doc, &mut text, at..at + 2, "");
    // Braces in an attribute dictionary and at the very end.
    let end = text.len();
    check(&mut doc, &mut text, end..end, "{");
    check(&mut doc, &mut text, 0..0, "}");
}

#[test]
fn chunk_boundaries_and_markers() {
    let mut text = String::from(
        "func.func @a() {\n  return\n}\n// -----\nfunc.func @b() {\n  return\n}\n// -----\nfunc.func @c() {\n  return\n}\n",
    );
    let mut doc = Document::new(&text, true);
    assert_eq!(doc.chunks().len(), 3);
    // Just before and just after a marker.
    let m = text.find("// -----").unwrap();
    check(&mut doc, &mut text, m..m, "%x = foo.bar\n");
    let m = text.find("// -----").unwrap() + 8;
    let stats = check(&mut doc, &mut text, m..m, " ");
    assert!(stats.resplit);
    // Break a marker, restore it, remove it, create one.
    let m = text.find("// -----").unwrap();
    check(&mut doc, &mut text, m + 4..m + 4, "x");
    assert_eq!(doc.chunks().len(), 2);
    check(&mut doc, &mut text, m + 4..m + 5, "");
    assert_eq!(doc.chunks().len(), 3);
    let m = text.rfind("// -----").unwrap();
    check(&mut doc, &mut text, m..m + 8, "");
    assert_eq!(doc.chunks().len(), 2);
    let r = text.find("return").unwrap();
    let stats = check(&mut doc, &mut text, r..r, "// -----\n");
    assert!(stats.resplit);
    assert_eq!(doc.chunks().len(), 3);
    // `// ----------` leaves `-----` in the next chunk.
    let m = text.find("// -----").unwrap() + 8;
    check(&mut doc, &mut text, m..m, "-----");
    // An edit far from markers re-parses inside its chunk only.
    let r = text.rfind("return").unwrap();
    let stats = check(&mut doc, &mut text, r..r + 6, "sdy.return");
    assert!(!stats.resplit && !stats.chunk_reparsed, "{stats:?}");
    // The same text unsplit is a single chunk.
    let mut plain = Document::new(&text, false);
    let mut t2 = text.clone();
    check(&mut plain, &mut t2, 0..0, "// -----\n");
    assert_eq!(plain.chunks().len(), 1);
}

#[test]
fn multibyte_text() {
    let mut text = String::from(
        "func.func @f() {\n  // ünïcödé 日本語 comment\n  %0 = stablehlo.constant dense<1.0> : tensor<f32> loc(\"ëh 😀\")\n  return %0 : tensor<f32>\n}\n",
    );
    let mut doc = Document::new(&text, false);
    let c = text.find("日本").unwrap();
    check(&mut doc, &mut text, c..c + "日".len(), "月");
    check(&mut doc, &mut text, c..c, "😀\n");
    let q = text.find("😀\")").unwrap();
    check(&mut doc, &mut text, q..q + "😀".len(), "\"é");
    let l = text.find("loc(").unwrap();
    check(&mut doc, &mut text, l..l, "ß ");
    let all = text.len();
    check(&mut doc, &mut text, 0..all, "ü");
}

#[test]
#[should_panic(expected = "char boundaries")]
fn edits_must_be_on_char_boundaries() {
    let mut doc = Document::new("// é\n", false);
    doc.apply_edit(4..4, "x");
}

#[test]
fn deep_nesting_near_the_parser_limit() {
    // Generic ops nested deeper than the parser's limit of 256 brackets.
    let n = 300;
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!("\"d.op{i}\"() ({{\n"));
    }
    text.push_str("%x = \"d.leaf\"() : () -> ()\n");
    for _ in 0..n {
        text.push_str("}) : () -> ()\n");
    }
    let mut doc = Document::new(&text, false);
    for depth in [10usize, 200, 250, 254, 255, 256, 257, 290] {
        let at = text.find(&format!("\"d.op{depth}\"")).unwrap();
        check(&mut doc, &mut text, at + 5..at + 5, "z");
    }
    let at = text.find("%x").unwrap();
    check(&mut doc, &mut text, at..at + 2, "%y");
}

#[test]
fn op_at_finds_the_innermost_op() {
    let text = BUILTIN[0];
    let doc = Document::new(text, false);
    let at = text.find("%s = stablehlo.add").unwrap() as u32 + 6;
    let path = doc.op_at(at);
    let names: Vec<&str> = path.iter().map(|(_, op)| &*op.name.text).collect();
    assert_eq!(
        names,
        ["module", "func.func", "sdy.manual_computation", "stablehlo.all_reduce", "stablehlo.add"]
    );
    let (start, op) = path.last().unwrap();
    assert_eq!(&text[*start as usize..(*start + op.len) as usize].split(' ').next(), &Some("%s"));
    assert!(doc.op_at(text.len() as u32 + 5).is_empty());
}

/// Tuple element spans are relative to their op like every span, so the same tuple
/// spelling in two ops has different element spans. Fails while the parser interns tuple
/// kinds (with their element spans) by spelling across ops.
#[test]
fn tuple_element_spans_are_per_op() {
    assert!(!tuple_element_spans_are_shared());
}

#[test]
fn whole_corpus_file_edits() {
    // A few edits on a whole realistic file (skipped when the shared data is absent).
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/tfm_1k.mlir");
    let Ok(mut text) = std::fs::read_to_string(path) else { return };
    let mut doc = Document::new(&text, false);
    let mut seed = 12345u64;
    for _ in 0..40 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let at = floor_char(&text, (seed >> 33) as usize % text.len());
        let new = SNIPPETS[(seed >> 20) as usize % SNIPPETS.len()];
        let end = floor_char(&text, at + (seed >> 60) as usize % 3).max(at);
        check(&mut doc, &mut text, at..end, new);
    }
}
