//! Panics are caught, logged and answered with an error; the server keeps serving.
mod lsp_common;

use lsp_common::{fixture, pos16, render_diagnostics, replace, TestServer, URI};
use sdy_lsp::lsp::Options;
use serde_json::json;

#[tokio::test]
async fn a_panicking_request_gets_an_internal_error() {
    let mut s = TestServer::start().await;
    let text = fixture("nav.mlir");
    s.open_and_wait(&text).await;
    let err = s.request("sdy/testPanic", serde_json::Value::Null).await.unwrap_err();
    assert_eq!(err["code"], -32603, "{err}");
    assert!(err["message"].as_str().unwrap().contains("test panic requested"), "{err}");
    let (log, _) = s.wait_for("window/logMessage").await;
    assert_eq!(log["type"], 1);
    assert!(log["message"].as_str().unwrap().contains("sdy/testPanic"), "{log}");
    // Still serving: a hover, an edit and its diagnostics.
    let (line, col) = pos16(&text, "%1 =", 0, 1);
    assert!(s.hover(line, col).await.unwrap()["contents"]["value"]
        .as_str()
        .unwrap()
        .contains("tensor<8x8xf32>"));
    let (change, _) = replace(&text, "%c = ", 0, "%c2 = ");
    s.change(URI, 2, json!([change])).await;
    let (d, _) = s.diagnostics_for(URI, 2).await;
    assert!(render_diagnostics(&d).contains("undeclared"), "{d}");
}

#[tokio::test]
async fn the_test_request_exists_only_with_test_hooks() {
    let mut s = TestServer::with_options(Options::default());
    s.initialize(json!({})).await;
    let err = s.request("sdy/testPanic", serde_json::Value::Null).await.unwrap_err();
    assert_eq!(err["code"], -32601, "{err}");
}

/// A chunk whose analysis panics has no diagnostics (and a log entry); the other chunks
/// are analysed, and the chunk is analysed again once it changes.
#[tokio::test]
async fn a_panicking_analysis_is_contained() {
    let mut s = TestServer::start().await;
    let text = fixture("errors.mlir").replace("// ünïcödé", "// sdy-lsp-test-panic");
    s.open(URI, 1, &text).await;
    let (d, skipped) = s.diagnostics_for(URI, 1).await;
    let logs: Vec<_> = skipped.iter().filter(|m| m["method"] == "window/logMessage").collect();
    assert_eq!(logs.len(), 1, "{skipped:?}");
    assert!(logs[0]["params"]["message"].as_str().unwrap().contains("analysis panic requested"));
    let rendered = render_diagnostics(&d);
    assert!(rendered.contains("unknown axis name"), "{rendered}"); // chunk 1
    assert!(!rendered.contains("undeclared"), "{rendered}"); // chunk 2 failed

    let (change, _) = replace(&text, "sdy-lsp-test-panic", 0, "fixed");
    s.change(URI, 2, json!([change])).await;
    let (d, _) = s.diagnostics_for(URI, 2).await;
    assert!(render_diagnostics(&d).contains("undeclared"), "{d}");
}

#[tokio::test]
async fn changes_to_unknown_documents_are_logged() {
    let mut s = TestServer::start().await;
    s.change("file:///nowhere.mlir", 2, json!([{"text": "x"}])).await;
    let (log, _) = s.wait_for("window/logMessage").await;
    assert_eq!(log["type"], 2);
    // Requests on it answer null.
    let r = s.request("textDocument/hover", json!({"textDocument": {"uri": "file:///nowhere.mlir"}, "position": {"line": 0, "character": 0}})).await;
    assert_eq!(r, Ok(serde_json::Value::Null));
}

/// Edits while a request waits for the analysis: the request answers for its own
/// revision, or `ContentModified` if the document moved on before that was analysed.
#[tokio::test]
async fn requests_answer_for_their_revision() {
    let mut s = TestServer::start().await;
    let text = fixture("nav.mlir");
    s.open_and_wait(&text).await;
    let (line, col) = pos16(&text, "%1 =", 0, 1);
    for round in 0..20 {
        let (change, _) = replace(&text, "// ünï", 0, &format!("// ünï {round}"));
        s.change(URI, 2 + round, json!([change])).await;
        match s.hover(line, col).await {
            Ok(h) => assert!(h["contents"]["value"].as_str().unwrap().contains("%1"), "{h}"),
            Err(e) => assert_eq!(e["code"], -32801, "{e}"),
        }
    }
}
