//! sdy and GSPMD text inside string attributes through the server: diagnostics at exact
//! in-string ranges, hover and go to definition, in UTF-16 positions with non-ASCII text
//! before the strings on the same lines.
mod lsp_common;

use expect_test::expect;
use lsp_common::{fixture, pos16, range, render_diagnostics, render_hover, TestServer};

/// (needle, occurrence, bytes into it) for each probe.
const PROBES: &[(&str, usize, usize)] = &[
    ("mesh = #sdy.mesh", 0, 1),    // a mesh name in xla.sdy.meshes
    ("\\22y\\22=4", 0, 4),         // an axis of that mesh
    ("@mesh, [{\\22x", 0, 2),      // the mesh of an argument's sharding
    ("{\\22x\\22}, {\\22z", 0, 4), // axis "x" in it (inside the `\22` escape)
    ("{devices=[2,4]", 0, 3),      // GSPMD beside it
    ("T(1,0)", 0, 0),              // GSPMD with a transposed iota
    ("<@mesh, [{}, {\\22y", 0, 3), // a per-value entry
];

#[tokio::test]
async fn diagnostics_hover_and_definition_in_strings() {
    let mut s = TestServer::start().await;
    let text = fixture("strings.mlir");
    let d = s.open_and_wait(&text).await;
    // The unknown axis "z": its range covers `\22z\22` in the string, in UTF-16.
    expect![[r#"
        2:136-2:143 error [sdy] arg 0 - unknown axis name: "z"
    "#]]
    .assert_eq(&render_diagnostics(&d));
    let mut out = String::new();
    for &(needle, nth, delta) in PROBES {
        let (line, col) = pos16(&text, needle, nth, delta);
        let h = s.hover(line, col).await.expect("hover failed");
        let def = s.definition(line, col).await.expect("definition failed");
        let def = if def.is_null() { "null".to_string() } else { range(&def["range"]) };
        let hover = render_hover(&h);
        let first = hover.lines().take(4).collect::<Vec<_>>().join("\n");
        out.push_str(&format!("== {needle} @{line}:{col} definition: {def}\n{first}\n"));
    }
    expect![[r#"
        == mesh = #sdy.mesh @1:85 definition: null
        1:84-1:88 "markdown"
        **mesh `@mesh`** = `<["x"=2, "y"=4]>`

        | axis | size | stride |
        == \22y\22=4 @1:117 definition: null
        1:113-1:122 "markdown"
        **axis `"y"`** · size 4 · mesh `@mesh` · the 2nd of 2 axes

        - stride 1: a device's index along `"y"` is mesh position mod 4.
        == @mesh, [{\22x @2:118 definition: 1:84-1:88
        2:116-2:121 "markdown"
        **mesh `@mesh`** = `<["x"=2, "y"=4]>`

        | axis | size | stride |
        == {\22x\22}, {\22z @2:128 definition: 1:102-1:111
        2:125-2:132 "markdown"
        **axis `"x"`** · size 2 · mesh `@mesh`

        In the sharding of `%arg0` (argument 0 of `@main`):
        == {devices=[2,4] @2:170 definition: null
        2:167-2:187 "markdown"
        **GSPMD sharding** of `%arg0` (argument 0 of `@main`) · `tensor<8x16xf32>`

        `{devices=[2,4]<=[8]}`
        == T(1,0) @2:278 definition: null
        2:255-2:309 "markdown"
        **GSPMD sharding** of result 0 of `@main` · `tensor<8x16xf32>`

        `{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}`
        == <@mesh, [{}, {\22y @3:154 definition: 1:84-1:88
        3:152-3:157 "markdown"
        **mesh `@mesh`** = `<["x"=2, "y"=4]>`

        | axis | size | stride |
    "#]]
    .assert_eq(&out);
}

/// An edit inside a string (through the escapes) updates its diagnostics.
#[tokio::test]
async fn edits_inside_strings() {
    let mut s = TestServer::start().await;
    let text = fixture("strings.mlir");
    s.open_and_wait(&text).await;
    let (change, text) = lsp_common::replace(&text, "{\\22z\\22}", 0, "{\\22y\\22}");
    s.change(lsp_common::URI, 2, serde_json::json!([change])).await;
    let (d, _) = s.diagnostics_for(lsp_common::URI, 2).await;
    assert_eq!(render_diagnostics(&d), "");
    let (change, _) = lsp_common::replace(&text, "{devices=[2,4]<=[8]}", 0, "{devices=[2,4]<=[4]}");
    s.change(lsp_common::URI, 3, serde_json::json!([change])).await;
    let (d, _) = s.diagnostics_for(lsp_common::URI, 3).await;
    expect![[r#"
        2:181-2:186 error [sdy] the iota device order has 4 devices but the tile dimensions hold 8
    "#]]
    .assert_eq(&render_diagnostics(&d));
}
