//! The outline and the folds of `testdata/outline.mlir` (valid for the real Shardy): an
//! explicit module with multi-line attributes, nested computations, a resource section.

use super::*;
use crate::parse_chunks;
use expect_test::expect;

const SRC: &str = include_str!("testdata/outline.mlir");

/// 1-based `line:col` of an offset.
fn pos(src: &str, offset: u32) -> String {
    let before = &src[..offset as usize];
    let line = before.matches('\n').count() + 1;
    let col = offset as usize - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("{line}:{col}")
}

fn render(src: &str, symbols: &[DocSymbol], depth: usize, out: &mut String) {
    for s in symbols {
        assert!(!s.name.is_empty());
        assert!(s.span.start <= s.selection.start && s.selection.end <= s.span.end, "{s:?}");
        out.push_str(&format!(
            "{}{:?} {} [{}] {}-{} selects {:?}\n",
            "  ".repeat(depth),
            s.kind,
            s.name,
            s.detail.as_deref().unwrap_or(""),
            pos(src, s.span.start),
            pos(src, s.span.end),
            s.selection.text(src),
        ));
        render(src, &s.children, depth + 1, out);
    }
}

fn outline(src: &str) -> String {
    let chunk = &parse_chunks(src, false)[0];
    let model = Model::build(chunk);
    let mut out = String::new();
    render(src, &document_symbols(&model, &chunk.top, src), 0, &mut out);
    out
}

#[test]
fn outline_of_a_module() {
    expect![[r#"
        Module @jit_f [builtin.module] 2:1-21:2 selects "@jit_f"
          Mesh @mesh [<["data"=2, "model"=4]>] 4:3-4:43 selects "@mesh"
            MeshAxis "data" [size 2] 4:22-4:30 selects "\"data\""
            MeshAxis "model" [size 4] 4:32-4:41 selects "\"model\""
          Function @main [public 1 argument, 1 result] 5:3-17:4 selects "@main"
            NamedComputation "layer" [%0 = sdy.named_computation] 6:5-11:47 selects "\"layer\""
              ManualComputation %1 = sdy.manual_computation [manual_axes={"data"}] 7:7-9:49 selects "sdy.manual_computation"
          Function @empty [private 0 arguments, 0 results] 18:3-20:4 selects "@empty"
    "#]]
    .assert_eq(&outline(SRC));
}

/// Without an explicit module the body is the outline; an unreadable statement and an
/// unfinished function do not hide what can be read.
#[test]
fn outline_of_an_implicit_module_with_errors() {
    let src = "sdy.mesh @m = <[\"x\"=2]>\n%%% garbage\nfunc.func @f(%a: tensor<2xf32>) {\n  %0 = sdy.named_computation<\"\">(%a) (%b: tensor<2xf32>) {\n";
    expect![[r#"
        Mesh @m [<["x"=2]>] 1:1-1:24 selects "@m"
          MeshAxis "x" [size 2] 1:17-1:22 selects "\"x\""
        Function @f [1 argument, 0 results] 3:1-4:59 selects "@f"
          NamedComputation sdy.named_computation [%0 = sdy.named_computation] 4:3-4:59 selects "sdy.named_computation"
    "#]]
    .assert_eq(&outline(src));
}

fn folds(src: &str) -> String {
    let chunk = &parse_chunks(src, false)[0];
    let model = Model::build(chunk);
    let mut out = String::new();
    for f in folding_ranges(&model, &chunk.top, src) {
        let first = src[f.start as usize..].lines().next().unwrap_or("");
        out.push_str(&format!(
            "{:?} {}-{} {:?}\n",
            f.kind,
            pos(src, f.start),
            pos(src, f.end),
            first.trim()
        ));
    }
    out
}

#[test]
fn folding_ranges_of_a_module() {
    expect![[r##"
        Attribute 2:26-3:57 "{mhlo.num_partitions = 8 : i32,"
        Region 3:56-20:4 "{"
        Region 5:125-16:33 "{"
        Region 6:71-10:39 "{"
        Region 7:162-8:41 "{"
        Attribute 12:29-13:65 "dense<[[1.0, 2.0],"
        Attribute 14:31-15:45 "{sdy.sharding = #sdy.sharding_per_value<[<@mesh, ["
        Attribute 14:47-15:45 "#sdy.sharding_per_value<[<@mesh, ["
        Region 18:30-19:11 "{"
        Resource 23:1-28:4 "{-#"
    "##]]
    .assert_eq(&folds(SRC));
}

/// Nothing on one line folds; a closing bracket that does not start its line folds with
/// the rest.
#[test]
fn folds_need_two_lines() {
    let src = "func.func @f() {\n  return }\nfunc.func @g() { return }\n";
    expect![[r#"
        Region 1:16-2:11 "{"
    "#]]
    .assert_eq(&folds(src));
}

/// Every prefix of the fixture (an edit in progress): an outline and folds, no panic,
/// and the LSP's invariants hold (a selection inside its symbol, folds in the text).
#[test]
fn no_panic_on_any_prefix() {
    for cut in (0..SRC.len()).filter(|&i| SRC.is_char_boundary(i)) {
        let src = &SRC[..cut];
        let _ = outline(src);
        let chunk = &parse_chunks(src, false)[0];
        let model = Model::build(chunk);
        for f in folding_ranges(&model, &chunk.top, src) {
            assert!(f.start <= f.end && f.end as usize <= src.len(), "{f:?} in {src:?}");
        }
    }
}

/// 20,000 meshes, each outlined under its own name (each top-level op finds its mesh
/// through a map by op; a search of all meshes per op took 3.2 s here).
#[test]
fn many_meshes_are_all_outlined() {
    let src: String = (0..20_000).map(|i| format!("sdy.mesh @m{i} = <[\"x\"=2]>\n")).collect();
    let chunk = &parse_chunks(&src, false)[0];
    let model = Model::build(chunk);
    let symbols = document_symbols(&model, &chunk.top, &src);
    assert_eq!(symbols.len(), 20_000);
    assert!(symbols.iter().enumerate().all(|(i, s)| s.name == format!("@m{i}")));
}
