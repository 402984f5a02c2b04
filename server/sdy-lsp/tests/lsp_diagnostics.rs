//! didOpen / didChange → publishDiagnostics.
mod lsp_common;

use expect_test::expect;
use lsp_common::{fixture, pos16, render_diagnostics, replace, TestServer, URI};
use serde_json::{json, Value};

/// The diagnostics a fresh server publishes for `text`.
async fn fresh(text: &str) -> String {
    let mut s = TestServer::start().await;
    render_diagnostics(&s.open_and_wait(text).await)
}

#[tokio::test]
async fn open_publishes_every_diagnostic() {
    let mut s = TestServer::start().await;
    let d = s.open_and_wait(&fixture("errors.mlir")).await;
    assert_eq!(d["version"], 1);
    // Ranges are the precise parts (focus), in UTF-16 columns, in file coordinates for
    // the second `// -----` chunk; notes become related information.
    expect![[r#"
        2:9-2:14 error [sdy] redefinition of symbol named 'mesh'
            related file:///test/a.mlir 1:0-1:0: see existing symbol definition here
        3:9-3:16 hint [sdy] mesh @unused is never used
        4:103-4:106 error [sdy] 'func.func' op arg 0 - unknown axis name: "w"
        11:9-11:14 hint [sdy] mesh @mesh is never used
        13:25-13:27 error [sdy] use of undeclared SSA value name
    "#]]
    .assert_eq(&render_diagnostics(&d));
}

/// Each diagnostic carries its code, with a link to Shardy's documentation for the
/// dialect's rules.
#[tokio::test]
async fn diagnostics_carry_their_code() {
    let mut s = TestServer::start().await;
    let d = s.open_and_wait(&fixture("errors.mlir")).await;
    let codes: Vec<String> = d["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{} {}", d["code"], d["codeDescription"]["href"]))
        .collect();
    expect![[r#"
        "structure" null
        "unused-mesh" null
        "sharding" "https://openxla.org/shardy/sdy_dialect"
        "unused-mesh" null
        "ssa-value" null"#]]
    .assert_eq(&codes.join("\n"));
}

#[tokio::test]
async fn notes_go_into_the_message_without_related_information() {
    let mut s = TestServer::new();
    s.initialize(json!({})).await;
    let d = s.open_and_wait(&fixture("errors.mlir")).await;
    let first = &d["diagnostics"][0];
    assert!(first.get("relatedInformation").is_none());
    expect![[r#"
        redefinition of symbol named 'mesh'
        note (2:1): see existing symbol definition here"#]]
    .assert_eq(first["message"].as_str().unwrap());
}

#[tokio::test]
async fn incremental_changes_update_diagnostics() {
    let mut s = TestServer::start().await;
    let text = fixture("errors.mlir");
    s.open_and_wait(&text).await;

    // Fix the unknown axis (after non-ASCII text on the same line: UTF-16 range).
    let (change, text) = replace(&text, "{\"w\"}", 0, "{\"y\"}");
    s.change(URI, 2, json!([change])).await;
    let (d, _) = s.diagnostics_for(URI, 2).await;
    expect![[r#"
        2:9-2:14 error [sdy] redefinition of symbol named 'mesh'
            related file:///test/a.mlir 1:0-1:0: see existing symbol definition here
        3:9-3:16 hint [sdy] mesh @unused is never used
        11:9-11:14 hint [sdy] mesh @mesh is never used
        13:25-13:27 error [sdy] use of undeclared SSA value name
    "#]]
    .assert_eq(&render_diagnostics(&d));
    assert_eq!(render_diagnostics(&d), fresh(&text).await);

    // Two changes in one notification, the second in the coordinates after the first:
    // remove the duplicate mesh, then define %b.
    let (c1, text) = replace(&text, "sdy.mesh @mesh = <[\"x\"=2]>\n", 0, "");
    let new = "  %b = stablehlo.abs %a : tensor<4xf32>\n  %0 = stablehlo.add %a, %b";
    let (c2, text) = replace(&text, "  %0 = stablehlo.add %a, %b", 0, new);
    s.change(URI, 3, json!([c1, c2])).await;
    let (d, _) = s.diagnostics_for(URI, 3).await;
    expect![[r#"
        2:9-2:16 hint [sdy] mesh @unused is never used
        10:9-10:14 hint [sdy] mesh @mesh is never used
    "#]]
    .assert_eq(&render_diagnostics(&d));
    assert_eq!(render_diagnostics(&d), fresh(&text).await);

    // A whole-text change.
    s.change(
        URI,
        4,
        json!([{"text": "func.func @f(%x: tensor<2xf32>) {\n  return %y : tensor<2xf32>\n}\n"}]),
    )
    .await;
    let (d, _) = s.diagnostics_for(URI, 4).await;
    expect![[r#"
        1:2-1:8 error [sdy] 'func.return' op has 1 operands, but enclosing function (@f) returns 0
        1:9-1:11 error [sdy] use of undeclared SSA value name
    "#]]
    .assert_eq(&render_diagnostics(&d));
}

/// Edits sent faster than they are analysed: versions are published in order, never an
/// outdated one after a newer one, and the last version's diagnostics are right.
#[tokio::test]
async fn rapid_changes_never_publish_stale_results() {
    let mut s = TestServer::start().await;
    let text = fixture("errors.mlir");
    s.open_and_wait(&text).await;
    // Type ` xyz` after `%b` (chunk 2) one character at a time, without waiting.
    let (line, col) = pos16(&text, "%b", 0, 2);
    let typed = "xyz";
    let mut version = 1;
    for (i, ch) in typed.chars().enumerate() {
        version += 1;
        let at = json!({"line": line, "character": col + i as u32});
        s.change(
            URI,
            version,
            json!([{"range": {"start": at, "end": at}, "text": ch.to_string()}]),
        )
        .await;
    }
    let text = replace(&text, "%b", 0, &format!("%b{typed}")).1;
    // Also an edit in chunk 1 (its analysis is redone; chunk 2's may be reused).
    version += 1;
    let (change, text) = replace(&text, "@unused", 0, "@spare");
    s.change(URI, version, json!([change])).await;
    let (last, skipped) = s.diagnostics_for(URI, version).await;
    let mut seen = Vec::new();
    for m in &skipped {
        if m["method"] == "textDocument/publishDiagnostics" {
            seen.push(m["params"]["version"].as_i64().unwrap());
        }
    }
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "versions out of order: {seen:?}");
    assert_eq!(render_diagnostics(&last), fresh(&text).await);
    // Nothing else comes (an outdated result published late).
    assert_eq!(s.quiet_for(200).await, None);
}

#[tokio::test]
async fn close_clears_diagnostics() {
    let mut s = TestServer::start().await;
    s.open_and_wait(&fixture("errors.mlir")).await;
    s.notify("textDocument/didClose", json!({"textDocument": {"uri": URI}})).await;
    let (p, _) = s.wait_for("textDocument/publishDiagnostics").await;
    assert_eq!(p, json!({"uri": URI, "diagnostics": []}));
    // Requests on a closed document answer null.
    assert_eq!(s.hover(0, 0).await, Ok(Value::Null));
}

#[tokio::test]
async fn many_documents() {
    let mut s = TestServer::start().await;
    for i in 0..5 {
        s.open(
            &format!("file:///test/{i}.mlir"),
            1,
            &format!("func.func @f{i}() {{\n  return %v{i}\n}}\n"),
        )
        .await;
    }
    for i in 0..5 {
        let uri = format!("file:///test/{i}.mlir");
        let (d, _) = s.diagnostics_for(&uri, 1).await;
        assert!(render_diagnostics(&d).contains("use of undeclared SSA value name"), "{uri}: {d}");
    }
}
