//! Unit tests of the string features (the features on realistic text:
//! `tests/fixtures/ide/strings`).

use super::*;

fn analyse(src: &str) -> (crate::ChunkAnalysis, Chunk) {
    let chunk = crate::parse_chunks(src, false).remove(0);
    (crate::analyze_chunk(src, &chunk), chunk)
}

#[test]
fn in_string_diagnostics_cover_the_escapes() {
    // Both escape forms: `\22` and the lit tests' `\\\22`.
    for q in ["\\22", "\\\\\\22"] {
        let src = format!(
            "sdy.mesh @mesh = <[\"x\"=2]>\nfunc.func @f(%a: tensor<8xf32> {{mhlo.frontend_attributes = {{xla.sdy.sharding = \"#sdy.sharding<@mesh, [{{{q}w{q}}}]>\"}}}}) -> tensor<8xf32> {{\n  return %a : tensor<8xf32>\n}}\n"
        );
        let (a, chunk) = analyse(&src);
        let d = diagnostics(&a.model, &src, &chunk);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].message, "arg 0 - unknown axis name: \"w\"");
        assert_eq!(d[0].focus.text(&src), format!("{q}w{q}"));
        assert!(a.diagnostics.contains(&d[0]));
        assert_eq!(d[0].origin, crate::diag::Origin::Lint);
    }
}

#[test]
fn no_strings_no_work() {
    let src = "sdy.mesh @mesh = <[\"x\"=2]>\n";
    let (a, chunk) = analyse(src);
    assert!(diagnostics(&a.model, src, &chunk).is_empty());
    assert!(sites::all(&a.model, src, None).is_empty());
}

#[test]
fn meshes_of_the_module() {
    let src = "module attributes {mhlo.frontend_attributes = {xla.sdy.meshes = \"{m = #sdy.mesh<[\\22a\\22=4]>, n = #sdy.mesh<[]>}\"}} {\n}\n";
    let (a, chunk) = analyse(src);
    let scope = Scope::new(&a.model, src, 0, &chunk.top);
    let meshes = scope.meshes();
    assert_eq!(meshes.len(), 2);
    assert_eq!(meshes[0].name_span.text(src), "m");
    assert_eq!(meshes[0].mesh.axis_spans[0].text(src), "\\22a\\22=4");
    assert_eq!(meshes[0].mesh.device_count(), Some(4));
}
