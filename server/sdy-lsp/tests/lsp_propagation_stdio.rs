//! The built `sdy-lsp` over stdio on a real module (`../shared/corpus/tfm_1k.mlir`,
//! skipped when absent): open it, run `sdy.propagate`, receive inlay hints with the
//! propagated shardings; edit it: the hints are marked stale; run again: fresh.

mod lsp_common;

use lsp_common::stdio::spawn;
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Child, ChildStdin};
use std::sync::mpsc;
use std::time::Duration;

const URI: &str = "file:///corpus/tfm_1k.mlir";
const TIMEOUT: Duration = Duration::from_secs(120);

struct Server {
    child: Child,
    stdin: ChildStdin,
    inbox: mpsc::Receiver<Result<Value, String>>,
    next_id: i64,
}

impl Server {
    fn start() -> Server {
        let (child, stdin, inbox) = spawn(&[]);
        Server { child, stdin, inbox, next_id: 0 }
    }

    fn send(&mut self, mut msg: Value) {
        msg["jsonrpc"] = json!("2.0");
        let body = serde_json::to_vec(&msg).unwrap();
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.stdin.write_all(&body).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        let mut m = json!({"method": method});
        if !params.is_null() {
            m["params"] = params;
        }
        self.send(m);
    }

    /// Sends a request and waits for its response (answering the server's own requests
    /// on the way, as a client does).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut m = json!({"id": id, "method": method});
        if !params.is_null() {
            m["params"] = params;
        }
        self.send(m);
        loop {
            let m =
                self.inbox.recv_timeout(TIMEOUT).expect("no response").expect("a framed message");
            if m["id"] == id && m.get("method").is_none() {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
            self.answer_server_request(&m);
        }
    }

    fn answer_server_request(&mut self, m: &Value) {
        if m.get("method").is_some() && m.get("id").is_some() {
            let id = m["id"].clone();
            self.send(json!({"id": id, "result": null}));
        }
    }

    fn diagnostics(&mut self, version: i64) -> Value {
        loop {
            let m = self
                .inbox
                .recv_timeout(TIMEOUT)
                .expect("no diagnostics")
                .expect("a framed message");
            self.answer_server_request(&m);
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version
            {
                return m["params"].clone();
            }
        }
    }

    fn hints(&mut self, lines: usize) -> Vec<String> {
        let range =
            json!({"start": {"line": 0, "character": 0}, "end": {"line": lines, "character": 0}});
        let h = self.request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": URI}, "range": range}),
        );
        h.as_array().unwrap().iter().map(|h| h["label"].as_str().unwrap().to_string()).collect()
    }

    fn propagate(&mut self) -> Value {
        let args = json!([{"uri": URI, "strategy": "pipeline"}]);
        self.request(
            "workspace/executeCommand",
            json!({"command": "sdy.propagate", "arguments": args}),
        )
    }
}

fn shardings(hints: &[String]) -> Vec<&String> {
    hints.iter().filter(|l| !l.starts_with("per-device")).collect()
}

#[test]
fn propagate_hints_stale_and_fresh_over_stdio() {
    let path = format!("{}/../../../shared/corpus/tfm_1k.mlir", env!("CARGO_MANIFEST_DIR"));
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipping: {path} not found");
        return;
    };
    let lines = text.lines().count();
    let mut s = Server::start();
    let caps = json!({
        "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}},
        "textDocument": {"inlayHint": {"resolveSupport": {"properties": ["tooltip"]}}}
    });
    let init = s.request("initialize", json!({"capabilities": caps}));
    assert_eq!(init["capabilities"]["inlayHintProvider"]["resolveProvider"], true);
    s.notify("initialized", json!({}));
    let doc = json!({"uri": URI, "languageId": "mlir", "version": 1, "text": text});
    s.notify("textDocument/didOpen", json!({"textDocument": doc}));
    s.diagnostics(1);

    // Before the run: no propagated shardings.
    assert!(shardings(&s.hints(lines)).is_empty());
    let answer = s.propagate();
    assert_eq!(
        (answer["version"].as_i64(), answer["failed"].as_u64()),
        (Some(1), Some(0)),
        "{answer}"
    );
    let fresh = s.hints(lines);
    let n = shardings(&fresh).len();
    assert!(n > 100, "{n} sharding hints");
    assert!(shardings(&fresh).iter().all(|l| !l.ends_with("(stale)")));

    // An edit inside @main: the chunk's hints are now stale.
    let at = text.find("stablehlo.").expect("an op");
    let before = &text[..at];
    let (line, col) = (before.matches('\n').count(), at - before.rfind('\n').map_or(0, |i| i + 1));
    let change = json!({
        "range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col}},
        "text": " "
    });
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [change]}),
    );
    s.diagnostics(2);
    let stale = s.hints(lines);
    let marked = shardings(&stale);
    assert!(!marked.is_empty() && marked.iter().all(|l| l.ends_with("(stale)")), "{marked:?}");

    // The next run: fresh again, for version 2.
    let answer = s.propagate();
    assert_eq!(answer["version"], 2, "{answer}");
    let again = s.hints(lines);
    assert_eq!(shardings(&again).len(), n);
    assert!(shardings(&again).iter().all(|l| !l.ends_with("(stale)")));

    s.request("shutdown", Value::Null);
    s.notify("exit", Value::Null);
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status}");
}
