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

/// A diagnostic on an op or value whose `loc(...)` has a Python file position: related
/// information in that file when it exists (Shardy's message unchanged); our own
/// "ends up replicated" note says the position in its text when the file does not; a
/// pass warning of the propagation run gets the related information too.
#[tokio::test]
async fn python_source_of_diagnostics() {
    let dir = std::env::temp_dir().join(format!("sdy-diag-loc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("model.py"), "import jax\n\ndef f(x):\n    return -x\n").unwrap();
    let uri = format!("file://{}/a.mlir", dir.display());
    let text = r#"sdy.mesh @mesh = <["x"=2]>
func.func @bad(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}]>]>} : tensor<8xf32> loc(#loc2)
  return %0 : tensor<8xf32>
}
#loc1 = loc("model.py":4:12)
#loc2 = loc("jit(f)/abs"(#loc1))
// -----
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>},
                %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}], replicated={"x"}>} loc("params['w']"(#loc1)),
                %arg2: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}], replicated={"x"}>} loc("b"("gone.py":2:1))) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = stablehlo.add %arg1, %arg0 : tensor<8xf32>
  %1 = stablehlo.add %arg2, %arg0 : tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
#loc1 = loc("model.py":3:1)
// -----
sdy.mesh @mesh = <["x"=2]>
func.func @kernel(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.custom_call @my_kernel(%arg0) : (tensor<8xf32>) -> tensor<8xf32> loc("jit(f)/my_kernel"("model.py":4:5))
  return %0 : tensor<8xf32>
}
"#;
    let mut s = TestServer::start().await;
    s.open(&uri, 1, text).await;
    let (d, _) = s.diagnostics_for(&uri, 1).await;
    let shown = render_diagnostics(&d).replace(&format!("file://{}", dir.display()), "DIR");
    expect![[r#"
        2:78-2:81 error [sdy] 'stablehlo.abs' op result - unknown axis name: "z"
            related DIR/model.py 3:11-3:11: Python source: `jit(f)/abs` at `model.py:4:12`
    "#]]
    .assert_eq(&shown);

    let args = json!([{"uri": uri, "strategy": "pipeline"}]);
    let run = json!({"command": "sdy.propagate", "arguments": args});
    s.request("workspace/executeCommand", run).await.expect("sdy.propagate");
    let (d, _) = s.diagnostics_for(&uri, 1).await;
    let shown = render_diagnostics(&d).replace(&format!("file://{}", dir.display()), "DIR");
    expect![[r#"
        2:78-2:81 error [sdy] 'stablehlo.abs' op result - unknown axis name: "z"
            related DIR/model.py 3:11-3:11: Python source: `jit(f)/abs` at `model.py:4:12`
        10:16-10:21 info [sdy] ends up replicated: `%arg1` (`params['w']`) of `@main`: dimension 0: `{"x"}` not taken from its operand 1 at `stablehlo.add` (line 13, factor `i`): it is explicitly replicated in the value's sharding (`replicated=`)
            related DIR/model.py 2:0-2:0: Python source: `params['w']` at `model.py:3:1`
        11:16-11:21 info [sdy] ends up replicated: `%arg2` (`b`) of `@main`: dimension 0: `{"x"}` not taken from its operand 1 at `stablehlo.add` (line 14, factor `i`): it is explicitly replicated in the value's sharding (`replicated=`) (Python source: `gone.py:2:1`)
        20:7-20:7 info [sdy] custom call @my_kernel is unknown to SDY sharding rule registry
            related DIR/model.py 3:4-3:4: Python source: `jit(f)/my_kernel` at `model.py:4:5`
    "#]].assert_eq(&shown);
    let _ = std::fs::remove_dir_all(&dir);
}
