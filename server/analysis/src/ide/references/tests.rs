//! References, definitions and renames on `testdata/refs.mlir` (checked against the real
//! Shardy: it verifies without errors), rendered as `line:col "text"` lists.

use super::*;
use crate::{analyze_chunk, parse_chunks, print};
use expect_test::{expect, Expect};

const SRC: &str = include_str!("testdata/refs.mlir");

struct Fixture {
    src: String,
    top: sdy_syntax::tree::Children,
    model: Model,
    index: Index,
}

impl Fixture {
    fn new(src: &str) -> Fixture {
        let chunk = parse_chunks(src, false).remove(0);
        let model = Model::build(&chunk);
        let index = Index::new(&model);
        Fixture { src: src.to_string(), top: chunk.top, model, index }
    }
    fn cx(&self) -> Ctx<'_> {
        Ctx { model: &self.model, index: &self.index, top: &self.top, src: &self.src }
    }
    /// `line:col "text"`, 1-based, columns in bytes.
    fn show(&self, span: Span) -> String {
        let before = &self.src[..span.start as usize];
        let line = before.matches('\n').count() + 1;
        let col = span.start as usize - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        format!("{line}:{col} {}", span.text(&self.src))
    }
}

/// The offset `delta` bytes into the `nth` occurrence of `needle`.
fn at(src: &str, needle: &str, nth: usize, delta: u32) -> u32 {
    let (i, _) = src.match_indices(needle).nth(nth).unwrap_or_else(|| panic!("no {needle}"));
    i as u32 + delta
}

fn describe(f: &Fixture, needle: &str, nth: usize, delta: u32) -> String {
    let cx = f.cx();
    let offset = at(&f.src, needle, nth, delta);
    let Some(found) = entity_at(&cx, offset) else { return format!("{needle}: nothing\n") };
    let what = match &found.entity {
        Entity::Values(v) => {
            let names: Vec<&str> = v.iter().map(|&v| f.model.value(v).name.as_str()).collect();
            format!("values {names:?}")
        }
        Entity::Symbol(name) => format!("symbol @{name}"),
        Entity::Axis { of: AxisOf::Mesh(m), name } => format!("axis \"{name}\" of @{m}"),
        Entity::Axis { of: AxisOf::Inline(s), name } => {
            format!("axis \"{name}\" of inline mesh at {}", f.show(*s))
        }
        Entity::Axis { of: AxisOf::List(op), name } => {
            format!("axis \"{name}\" of the lists of {}", f.model.op(*op).name())
        }
    };
    let defs: Vec<String> = definition(&cx, offset).into_iter().map(|s| f.show(s)).collect();
    let mut out =
        format!("{needle} ({}): {what}\n  definition: {}\n", f.show(found.span), defs.join(", "));
    for r in references(&cx, &found.entity, true) {
        out.push_str(&format!("  {}{}\n", if r.is_def { "def " } else { "" }, f.show(r.span)));
    }
    let without_decl = references(&cx, &found.entity, false);
    assert!(without_decl.iter().all(|r| !r.is_def));
    out
}

fn check_describe(probes: &[(&str, usize, u32)], expect: Expect) {
    let f = Fixture::new(SRC);
    let out: String = probes.iter().map(|&(n, k, d)| describe(&f, n, k, d)).collect();
    expect.assert_eq(&out);
}

#[test]
fn mesh_axes_everywhere_they_are_named() {
    check_describe(
        &[
            ("\"x\"=4", 0, 1),             // the definition
            ("\"x\":(1)2", 0, 2),          // a sub-axis
            ("manual_axes={\"x\"", 0, 14), // a manual axis
            ("[{\"y\"}, {}] %1", 0, 3),    // an all_gather axis
            ("\"z\"}, {}]> :", 0, 0),      // another mesh
            ("{\"w\"}", 0, 2),             // an inline mesh's axis
        ],
        expect![[r#"
            "x"=4 (2:20 "x"): axis "x" of @mesh
              definition: 2:20 "x"
              1:29 "x"
              def 2:20 "x"
              4:79 "x"
              4:205 "x"
              5:69 "x"
              5:128 "x"
              5:153 "x"
              8:68 "x"
              12:61 "x"
            "x":(1)2 (4:79 "x"): axis "x" of @mesh
              definition: 2:20 "x"
              1:29 "x"
              def 2:20 "x"
              4:79 "x"
              4:205 "x"
              5:69 "x"
              5:128 "x"
              5:153 "x"
              8:68 "x"
              12:61 "x"
            manual_axes={"x" (5:153 "x"): axis "x" of @mesh
              definition: 2:20 "x"
              1:29 "x"
              def 2:20 "x"
              4:79 "x"
              4:205 "x"
              5:69 "x"
              5:128 "x"
              5:153 "x"
              8:68 "x"
              12:61 "x"
            [{"y"}, {}] %1 (12:25 "y"): axis "y" of @mesh
              definition: 2:27 "y"
              def 2:27 "y"
              4:89 "y"
              5:95 "y"
              5:158 "y"
              8:73 "y"
              12:25 "y"
            "z"}, {}]> : (15:46 "z"): axis "z" of @other
              definition: 3:21 "z"
              def 3:21 "z"
              15:46 "z"
            {"w"} (14:92 "w"): axis "w" of inline mesh at 14:79 <["w"=2]>
              definition: 14:81 "w"
              def 14:81 "w"
              14:92 "w"
        "#]],
    );
}

#[test]
fn values_symbols_and_computation_arguments() {
    check_describe(
        &[
            ("%4:2", 0, 1),                    // a result group
            ("%4#1", 0, 1),                    // one of its values
            ("%a:", 0, 1),                     // a manual computation's block argument: its operand
            ("%c:", 0, 1),                     // a named computation's block argument
            ("%c, %c", 0, 5),                  // a use of it
            ("@mesh =", 0, 2),                 // a mesh definition
            ("@other,", 0, 1),                 // a mesh use in op syntax
            ("@helper(", 0, 1),                // a callee
            ("#s =", 0, 0),                    // the alias name: nothing
            ("@mesh, [{\"x\"}, {}]>\n", 0, 1), // in the alias
        ],
        expect![[r#"
            %4:2 (13:3 %4): values ["%4#0", "%4#1"]
              definition: 13:3 %4
              def 13:3 %4
              14:22 %4#0
              14:28 %4#1
            %4#1 (14:28 %4#1): values ["%4#1"]
              definition: 13:3 %4
              def 13:3 %4
              14:28 %4#1
            %a: (5:164 %a): values ["%a"]
              definition: 5:31 %arg0
              def 5:164 %a
              6:16 %a
            %c: (8:86 %c): values ["%c"]
              definition: 8:39 %0
              def 8:86 %c
              9:24 %c
              9:28 %c
            %c, %c (9:28 %c): values ["%c"]
              definition: 8:86 %c
              def 8:86 %c
              9:24 %c
              9:28 %c
            @mesh = (2:10 @mesh): symbol @mesh
              definition: 2:10 @mesh
              1:20 @mesh
              def 2:10 @mesh
              4:70 @mesh
              4:196 @mesh
              5:60 @mesh
              5:82 @mesh
              5:119 @mesh
              8:59 @mesh
              12:52 @mesh
            @other, (15:36 @other): symbol @other
              definition: 3:10 @other
              def 3:10 @other
              15:36 @other
            @helper( (13:15 @helper): symbol @helper
              definition: 18:19 @helper
              13:15 @helper
              def 18:19 @helper
            #s =: nothing
            @mesh, [{"x"}, {}]>
             (1:20 @mesh): symbol @mesh
              definition: 2:10 @mesh
              1:20 @mesh
              def 2:10 @mesh
              4:70 @mesh
              4:196 @mesh
              5:60 @mesh
              5:82 @mesh
              5:119 @mesh
              8:59 @mesh
              12:52 @mesh
        "#]],
    );
}

/// Applies edits (non-overlapping) to `src`.
fn apply(src: &str, edits: &[Edit]) -> String {
    let mut out = src.to_string();
    let mut sorted = edits.to_vec();
    sorted.sort();
    for w in sorted.windows(2) {
        assert!(w[0].span.end <= w[1].span.start, "overlapping edits {w:?}");
    }
    for e in sorted.iter().rev() {
        out.replace_range(e.span.start as usize..e.span.end as usize, &e.text);
    }
    out
}

/// Renames at a probe; the new text must verify like the old one (no diagnostics) and
/// print like it once the rename is undone on the printed form (`printed_from`/`to`).
fn rename_probe(needle: &str, nth: usize, delta: u32, new: &str) -> String {
    let f = Fixture::new(SRC);
    let offset = at(&f.src, needle, nth, delta);
    let prepared = match prepare_rename(&f.cx(), offset) {
        Ok(Some(t)) => format!("{} {:?}", f.show(t.span), t.placeholder),
        Ok(None) => "nothing".to_string(),
        Err(e) => return format!("{needle} -> {new}: refused at prepare: {e}\n"),
    };
    let edits = match rename(&f.cx(), offset, new) {
        Ok(Some(e)) => e,
        Ok(None) => return format!("{needle} -> {new}: nothing\n"),
        Err(e) => return format!("{needle} -> {new}: prepared {prepared}, refused: {e}\n"),
    };
    let renamed = apply(SRC, &edits);
    let chunk = &parse_chunks(&renamed, false)[0];
    let diags = analyze_chunk(&renamed, chunk).diagnostics;
    assert!(diags.is_empty(), "{needle} -> {new}: {diags:?}\n{renamed}");
    let before = print::print_chunk(SRC, &parse_chunks(SRC, false)[0]);
    let after = print::print_chunk(&renamed, chunk);
    let old = prepared.split('"').nth(1).unwrap_or("").to_string();
    let expected = match needle.chars().next() {
        Some('%') => before,
        Some('@') => {
            before.replace(&format!("@{old}"), &format!("@{}", new.trim_start_matches('@')))
        }
        _ => before.replace(&format!("\"{old}\""), &format!("\"{new}\"")),
    };
    assert_eq!(after, expected, "{needle} -> {new}: printed forms differ");
    format!("{needle} -> {new}: prepared {prepared}, {} edits\n", edits.len())
}

#[test]
fn renames_that_keep_the_module_verifying() {
    let probes = [
        ("\"x\"=4", 0, 1, "data"),
        ("{\"y\"}, {}] %1", 0, 2, "model"),
        ("@mesh =", 0, 1, "grid"),
        ("@other,", 0, 1, "@o2"),
        ("%4#1", 0, 1, "%pair"),
        ("%a:", 0, 1, "lhs"),
        ("%c, %c", 0, 1, "%in"),
        ("@helper(", 0, 1, "callee"),
        ("{\"w\"}", 0, 2, "v"),
    ];
    let out: String = probes.iter().map(|&(n, k, d, new)| rename_probe(n, k, d, new)).collect();
    expect![[r#"
        "x"=4 -> data: prepared 2:21 x "x", 9 edits
        {"y"}, {}] %1 -> model: prepared 12:26 y "y", 6 edits
        @mesh = -> grid: prepared 2:11 mesh "mesh", 9 edits
        @other, -> @o2: prepared 15:37 other "other", 2 edits
        %4#1 -> %pair: prepared 14:28 %4 "%4", 3 edits
        %a: -> lhs: prepared 5:164 %a "%a", 2 edits
        %c, %c -> %in: prepared 9:24 %c "%c", 3 edits
        @helper( -> callee: prepared 13:16 helper "helper", 2 edits
        {"w"} -> v: prepared 14:93 w "w", 2 edits
    "#]]
    .assert_eq(&out);
}

#[test]
fn renames_refused() {
    let probes = [
        ("\"x\"=4", 0, 1, "y"),          // taken in the mesh
        ("\"x\"=4", 0, 1, "a\"b"),       // not writable as an axis name
        ("@mesh =", 0, 1, "other"),      // taken by another mesh
        ("@mesh =", 0, 1, "1st"),        // not a symbol name
        ("%4#1", 0, 1, "%3"),            // defined in the same region
        ("%c, %c", 0, 1, "%0"),          // defined in an enclosing region
        ("%a:", 0, 1, "%b"),             // a sibling argument
        ("%4#1", 0, 1, "%x#1"),          // not a value name
        ("%x:", 0, 1, "%arg0"),          // another function: fine
        ("stablehlo.add %c", 0, 2, "x"), // nothing there
    ];
    let out: String = probes.iter().map(|&(n, k, d, new)| rename_probe(n, k, d, new)).collect();
    expect![[r#"
        "x"=4 -> y: prepared 2:21 x "x", refused: the mesh already has an axis "y"
        "x"=4 -> a"b: prepared 2:21 x "x", refused: `a"b` cannot be an axis name here (it must be non-empty, without quotes, backslashes or control characters)
        @mesh = -> other: prepared 2:11 mesh "mesh", refused: `@other` is already defined in this module
        @mesh = -> 1st: prepared 2:11 mesh "mesh", refused: `1st` is not a symbol name (a letter or `_`, then letters, digits and `_$.`)
        %4#1 -> %3: prepared 14:28 %4 "%4", refused: `%3` already names a value in scope here
        %c, %c -> %0: prepared 9:24 %c "%c", refused: `%0` already names a value in scope here
        %a: -> %b: prepared 5:164 %a "%a", refused: `%b` already names a value in scope here
        %4#1 -> %x#1: prepared 14:28 %4 "%4", refused: `%x#1` is not an SSA value name (`%` then digits, or a letter or one of `$._-` followed by letters, digits and `$._-`)
        %x: -> %arg0: prepared 18:27 %x "%x", 3 edits
        stablehlo.add %c -> x: nothing
    "#]].assert_eq(&out);
}

/// Every feature at every offset of the fixture and of broken versions of it (cut
/// short, a bracket or quote removed): answers or nothing, never a panic, and every
/// rename that is accepted gives edits inside the text that do not overlap.
#[test]
fn no_panic_anywhere() {
    let mut texts = vec![SRC.to_string()];
    for cut in [SRC.len() / 3, SRC.len() / 2, SRC.len() - 40] {
        let cut = (0..=cut).rev().find(|&i| SRC.is_char_boundary(i)).unwrap_or(0);
        texts.push(SRC[..cut].to_string());
    }
    for needle in ["]", "\"", "}", ">", "%4:2 ="] {
        let i = SRC.find(needle).unwrap();
        texts.push(format!("{}{}", &SRC[..i], &SRC[i + needle.len()..]));
    }
    for text in &texts {
        let f = Fixture::new(text);
        let cx = f.cx();
        for offset in 0..=text.len() as u32 {
            let _ = definition(&cx, offset);
            if let Some(found) = entity_at(&cx, offset) {
                let _ = references(&cx, &found.entity, offset % 2 == 0);
            }
            let _ = prepare_rename(&cx, offset);
            if let Ok(Some(edits)) = rename(&cx, offset, "n") {
                let mut sorted = edits.clone();
                sorted.sort();
                assert!(sorted.windows(2).all(|w| w[0].span.end <= w[1].span.start));
                assert!(sorted.iter().all(|e| e.span.end as usize <= text.len()));
            }
        }
    }
}

/// Debug attributes of propagation keep axis names in text: renaming such an axis is
/// refused rather than leaving them stale; other axes rename.
#[test]
fn debug_attributes_block_axis_renames() {
    let src = "sdy.mesh @m = <[\"x\"=2, \"y\"=2]>\nfunc.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}]>}) -> tensor<4xf32> {\n  %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"x\"}]>]>, sdy.sharding_origins = [{x = \"input: 0\"}]} : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n";
    let f = Fixture::new(src);
    let x = at(src, "\"x\"=2", 0, 1);
    let y = at(src, "\"y\"=2", 0, 1);
    expect![[r#"
        x: Err("a propagation debug attribute of `stablehlo.negate` names \"x\" (edit it by hand)")
        y: Ok(Some(1))"#]]
    .assert_eq(&format!(
        "x: {:?}\ny: {:?}",
        rename(&f.cx(), x, "z").map(|e| e.map(|e| e.len())),
        rename(&f.cx(), y, "z").map(|e| e.map(|e| e.len()))
    ));
}

/// Round-trip exports keep shardings in strings, which renames do not rewrite: renaming
/// a mesh they name (or one of its axes) is refused; another mesh renames.
#[test]
fn string_shardings_block_mesh_renames() {
    let src = "sdy.mesh @m = <[\"x\"=2]>\nsdy.mesh @n = <[\"x\"=4]>\nfunc.func @f(%a: tensor<4xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = \"#sdy.sharding<@m, [{\\22x\\22}]>\"}, sdy.sharding = #sdy.sharding<@n, [{\"x\"}]>}) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n";
    let f = Fixture::new(src);
    let cx = f.cx();
    let len = |r: Result<Option<Vec<Edit>>, String>| r.map(|e| e.map(|e| e.len()));
    expect![[r#"
        @m: Err("a string attribute of `func.func` names `@m` (a round-trip export): rename it there by hand")
        "x" of @m: Err("a string attribute of `func.func` names `@m` (a round-trip export): rename the axis there by hand")
        @n: Ok(Some(2))"#]].assert_eq(&format!(
        "@m: {:?}\n\"x\" of @m: {:?}\n@n: {:?}",
        len(rename(&cx, at(src, "@m =", 0, 1), "k")),
        len(rename(&cx, at(src, "\"x\"=2", 0, 1), "z")),
        len(rename(&cx, at(src, "@n =", 0, 1), "k")),
    ));
}

/// An axis list on an op whose shardings name two meshes with the axis: its definition
/// is in both, and it cannot be renamed.
#[test]
fn axis_list_over_two_meshes() {
    let src = "sdy.mesh @a = <[\"x\"=2]>\nsdy.mesh @b = <[\"x\"=2, \"y\"=1]>\nfunc.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = sdy.manual_computation(%arg0) in_shardings=[<@a, [{\"x\"}]>] out_shardings=[<@b, [{\"x\"}]>] manual_axes={\"x\"} (%l: tensor<2xf32>) {\n    sdy.return %l : tensor<2xf32>\n  } : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n";
    let f = Fixture::new(src);
    let out = describe(&f, "{\"x\"} (", 0, 1);
    let refused = prepare_rename(&f.cx(), at(src, "{\"x\"} (", 0, 1));
    expect![[r#"
        {"x"} ( (4:110 "x"): axis "x" of the lists of sdy.manual_computation
          definition: 1:17 "x", 2:17 "x"
          4:110 "x"
        Err("the shardings of `sdy.manual_computation` are on several meshes (`@a`, `@b`): the axis list belongs to none of them alone")"#]].assert_eq(&format!("{out}{refused:?}"));
}

#[test]
fn mesh_named_in_statements_with_syntax_errors() {
    // Lines being edited: the parser stops at the error, but the mesh named after it is
    // still found and renamed.
    let src = r#"sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.abs , %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>
  %1 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {]>]>} : tensor<8xf32>
  %2 = stablehlo.abs %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>
  ) @mesh
  return %2 : tensor<8xf32>
}
"#;
    let f = Fixture::new(src);
    expect![[r#"
        @mesh (1:10 @mesh): symbol @mesh
          definition: 1:10 @mesh
          def 1:10 @mesh
          3:69 @mesh
          4:67 @mesh
          5:67 @mesh
          6:5 @mesh
    "#]]
    .assert_eq(&describe(&f, "@mesh", 0, 1));
    let edits = rename(&f.cx(), at(src, "@mesh", 0, 1), "grid").unwrap().unwrap();
    let renamed = apply(src, &edits);
    assert_eq!(renamed.matches("@grid").count(), 5, "{renamed}");
    assert!(!renamed.contains("@mesh"), "{renamed}");
}
