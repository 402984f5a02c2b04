//! In-process harness for the language server: the tower-lsp service driven directly
//! (`Service::call`), server-to-client messages read from its `ClientSocket`.
#![allow(dead_code)]

pub mod rng;
pub mod stdio;

use futures::StreamExt;
use sdy_lsp::lsp::{self, Options, Server};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::mpsc;
use tower::{Service, ServiceExt};
use tower_lsp::jsonrpc::Request;
use tower_lsp::LspService;

pub const URI: &str = "file:///test/a.mlir";

/// How long to wait for a message that should come.
const TIMEOUT: Duration = Duration::from_secs(20);

pub struct TestServer {
    service: LspService<Server>,
    /// Server-to-client messages (notifications; the server sends no requests).
    inbox: mpsc::UnboundedReceiver<Value>,
    next_id: i64,
}

/// A fixture file of `tests/lsp_fixtures`.
pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/lsp_fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Client capabilities: related information and Markdown hovers, and the given position
/// encodings (none: the client says nothing, which means UTF-16).
pub fn capabilities(encodings: &[&str]) -> Value {
    let mut caps = json!({
        "textDocument": {
            "publishDiagnostics": {"relatedInformation": true, "versionSupport": true},
            "hover": {"contentFormat": ["markdown", "plaintext"]}
        }
    });
    if !encodings.is_empty() {
        caps["general"] = json!({"positionEncodings": encodings});
    }
    caps
}

impl Default for TestServer {
    fn default() -> TestServer {
        TestServer::new()
    }
}

impl TestServer {
    /// A server with test hooks and no debounce, not yet initialized.
    pub fn new() -> TestServer {
        TestServer::with_options(Options { debounce: Duration::ZERO, test_hooks: true })
    }

    pub fn with_options(options: Options) -> TestServer {
        let (service, mut socket) = lsp::service(options);
        let (tx, inbox) = mpsc::unbounded_channel();
        // The socket is a bounded channel: keep draining it.
        tokio::spawn(async move {
            while let Some(req) = socket.next().await {
                if tx.send(serde_json::to_value(&req).unwrap()).is_err() {
                    break;
                }
            }
        });
        TestServer { service, inbox, next_id: 0 }
    }

    /// `initialize` + `initialized`; returns the `initialize` result.
    pub async fn initialize(&mut self, capabilities: Value) -> Value {
        let r = self.request("initialize", json!({"capabilities": capabilities})).await;
        self.notify("initialized", json!({})).await;
        r.expect("initialize failed")
    }

    /// A started server: UTF-16, related information, Markdown.
    pub async fn start() -> TestServer {
        let mut s = TestServer::new();
        s.initialize(capabilities(&[])).await;
        s
    }

    /// Sends a request; `Ok(result)` or `Err(error object)`. Null `params` are left out.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let b = Request::build(method.to_string()).id(self.next_id);
        // `Value::Null`: no `params` member at all.
        let req = if params.is_null() { b.finish() } else { b.params(params).finish() };
        self.call_raw(req).await
    }

    /// Sends a request without waiting for its answer: its id and the answer to come
    /// (the whole response: `result` or `error`).
    pub async fn send(
        &mut self,
        method: &str,
        params: Value,
    ) -> (i64, tokio::task::JoinHandle<Value>) {
        self.next_id += 1;
        let req = Request::build(method.to_string()).id(self.next_id).params(params).finish();
        let fut = self.service.ready().await.expect("service gone").call(req);
        let answer = tokio::spawn(async move {
            let resp = tokio::time::timeout(TIMEOUT, fut).await.expect("request timed out");
            serde_json::to_value(resp.expect("service error").expect("a response")).unwrap()
        });
        (self.next_id, answer)
    }

    pub async fn call_raw(&mut self, req: Request) -> Result<Value, Value> {
        let fut = self.service.ready().await.expect("service gone").call(req);
        let resp = tokio::time::timeout(TIMEOUT, fut)
            .await
            .expect("request timed out")
            .expect("service error")
            .expect("a request has a response");
        let v = serde_json::to_value(&resp).unwrap();
        match v.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(v["result"].clone()),
        }
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        let req = Request::build(method.to_string()).params(params).finish();
        let fut = self.service.ready().await.expect("service gone").call(req);
        let resp = fut.await.expect("service error");
        assert!(resp.is_none(), "a notification got a response: {resp:?}");
    }

    /// The next server-to-client message.
    pub async fn next_message(&mut self) -> Value {
        tokio::time::timeout(TIMEOUT, self.inbox.recv())
            .await
            .expect("no message from the server")
            .expect("server socket closed")
    }

    /// Waits for the next message with `method`, returning its params and the messages
    /// skipped on the way.
    pub async fn wait_for(&mut self, method: &str) -> (Value, Vec<Value>) {
        let mut skipped = Vec::new();
        loop {
            let m = self.next_message().await;
            if m["method"] == method {
                return (m["params"].clone(), skipped);
            }
            skipped.push(m);
        }
    }

    /// Waits for the diagnostics of `version` of `uri`; diagnostics of other versions
    /// on the way are returned too (oldest first), as are other messages.
    pub async fn diagnostics_for(&mut self, uri: &str, version: i64) -> (Value, Vec<Value>) {
        let mut skipped = Vec::new();
        loop {
            let (p, mut other) = self.wait_for("textDocument/publishDiagnostics").await;
            skipped.append(&mut other);
            if p["uri"] == uri && p["version"] == version {
                return (p, skipped);
            }
            skipped.push(json!({"method": "textDocument/publishDiagnostics", "params": p}));
        }
    }

    /// Whether the server sent nothing within `ms`.
    pub async fn quiet_for(&mut self, ms: u64) -> Option<Value> {
        tokio::time::timeout(Duration::from_millis(ms), self.inbox.recv()).await.ok().flatten()
    }

    pub async fn open(&mut self, uri: &str, version: i64, text: &str) {
        let doc = json!({"uri": uri, "languageId": "mlir", "version": version, "text": text});
        self.notify("textDocument/didOpen", json!({"textDocument": doc})).await;
    }

    /// Opens `text` as [`URI`] version 1 and returns its first diagnostics.
    pub async fn open_and_wait(&mut self, text: &str) -> Value {
        self.open(URI, 1, text).await;
        self.diagnostics_for(URI, 1).await.0
    }

    /// One `didChange` with the given content changes.
    pub async fn change(&mut self, uri: &str, version: i64, changes: Value) {
        let params =
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes});
        self.notify("textDocument/didChange", params).await;
    }

    pub async fn hover(&mut self, line: u32, character: u32) -> Result<Value, Value> {
        let pos = json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}});
        self.request("textDocument/hover", pos).await
    }

    pub async fn definition(&mut self, line: u32, character: u32) -> Result<Value, Value> {
        let pos = json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}});
        self.request("textDocument/definition", pos).await
    }
}

/// A range as `l:c-l:c` (0-based, as sent).
pub fn range(r: &Value) -> String {
    format!(
        "{}:{}-{}:{}",
        r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"]
    )
}

/// Diagnostics of a `publishDiagnostics` as compact lines.
pub fn render_diagnostics(params: &Value) -> String {
    let mut out = String::new();
    for d in params["diagnostics"].as_array().expect("diagnostics") {
        let sev = match d["severity"].as_i64() {
            Some(1) => "error",
            Some(2) => "warning",
            Some(3) => "info",
            Some(4) => "hint",
            _ => "?",
        };
        out.push_str(&format!(
            "{} {sev} [{}] {}\n",
            range(&d["range"]),
            d["source"].as_str().unwrap_or("-"),
            d["message"].as_str().unwrap_or("")
        ));
        for r in d["relatedInformation"].as_array().into_iter().flatten() {
            let loc = &r["location"];
            out.push_str(&format!(
                "    related {} {}: {}\n",
                loc["uri"].as_str().unwrap_or(""),
                range(&loc["range"]),
                r["message"].as_str().unwrap_or("")
            ));
        }
    }
    out
}

/// A hover result as its range and text.
pub fn render_hover(h: &Value) -> String {
    if h.is_null() {
        return "null".into();
    }
    format!(
        "{} {}\n{}",
        range(&h["range"]),
        h["contents"]["kind"],
        h["contents"]["value"].as_str().unwrap_or("")
    )
}

/// The LSP position of byte `offset` of `text`, in UTF-16 code units.
pub fn position16(text: &str, offset: usize) -> (u32, u32) {
    let line = text[..offset].matches('\n').count();
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let col: usize = text[line_start..offset].chars().map(char::len_utf16).sum();
    (line as u32, col as u32)
}

/// The same in bytes (UTF-8 code units).
pub fn position8(text: &str, offset: usize) -> (u32, u32) {
    let line = text[..offset].matches('\n').count();
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    (line as u32, (offset - line_start) as u32)
}

/// The byte offset of the `nth` (0-based) occurrence of `needle` in `text`.
pub fn find(text: &str, needle: &str, nth: usize) -> usize {
    text.match_indices(needle).nth(nth).unwrap_or_else(|| panic!("no {needle:?} #{nth}")).0
}

/// The UTF-16 position `delta` bytes into the `nth` occurrence of `needle`.
pub fn pos16(text: &str, needle: &str, nth: usize, delta: usize) -> (u32, u32) {
    position16(text, find(text, needle, nth) + delta)
}

/// The UTF-8 position `delta` bytes into the `nth` occurrence of `needle`.
pub fn pos8(text: &str, needle: &str, nth: usize, delta: usize) -> (u32, u32) {
    position8(text, find(text, needle, nth) + delta)
}

/// A content change replacing the `nth` `needle` of `text` by `new` (UTF-16 range),
/// and the text after it.
pub fn replace(text: &str, needle: &str, nth: usize, new: &str) -> (Value, String) {
    let at = find(text, needle, nth);
    let (l0, c0) = position16(text, at);
    let (l1, c1) = position16(text, at + needle.len());
    let change = json!({
        "range": {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}},
        "text": new
    });
    (change, format!("{}{new}{}", &text[..at], &text[at + needle.len()..]))
}
