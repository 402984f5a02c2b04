//! Unit tests of the fix plumbing (the fixes themselves: `tests/fixtures/ide/fixes`).

use super::*;

fn analyse(src: &str) -> crate::ChunkAnalysis {
    crate::analyze_chunk(src, &crate::parse_chunks(src, false)[0])
}

#[test]
fn apply_edits_in_any_order() {
    let e = |a, b, t: &str| Edit { span: Span::new(a, b), text: t.into() };
    assert_eq!(apply("abcdef", &[e(4, 5, "E"), e(0, 1, "A"), e(2, 2, "+")]), "Ab+cdEf");
    // Overlapping or out-of-range edits are dropped, never a panic.
    assert_eq!(apply("abc", &[e(0, 2, "x"), e(1, 3, "y"), e(2, 9, "z")]), "xc");
}

#[test]
fn only_diagnostics_in_the_range() {
    let src = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n\
               func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], replicated={\"y\", \"x\"}>}) -> tensor<8xf32> {\n  return %a : tensor<8xf32>\n}\n";
    let a = analyse(src);
    let at = src.find("\"y\", \"x\"").unwrap() as u32;
    let found = fixes(&a.model, src, &a.diagnostics, Span::empty(at + 1));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].preferred && found[0].kind == FixKind::QuickFix);
    assert_eq!(apply(src, &found[0].edits).matches("{\"x\", \"y\"}").count(), 1);
    assert_eq!(found[1].kind, FixKind::Annotation);
    assert!(fixes(&a.model, src, &a.diagnostics, Span::empty(0)).is_empty());
}
