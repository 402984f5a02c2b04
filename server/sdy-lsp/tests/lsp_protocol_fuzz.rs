//! Protocol fuzzer: the real binary over pipes, fed random and mutated framing, headers,
//! JSON, method names and params (wrong types, lone surrogates, bytes that are no UTF-8,
//! huge and truncated bodies), interleaved with valid traffic. After every bad message
//! a valid request must get its answer; every response must be a well-formed frame
//! answering an id that was sent (or `null`, for what had none that could be read);
//! the session ends with `shutdown` and `exit` and status 0.
//!
//! A few seconds in the normal test run; `SDY_FUZZ_SECONDS=600 cargo test --release -p
//! sdy-lsp --test lsp_protocol_fuzz -- --nocapture` runs it for that long and prints the
//! figures. `SDY_FUZZ_SEED` repeats a run.

use serde_json::{json, Value};
use std::collections::HashSet;
use std::io::Write;
use std::process::{Child, ChildStdin};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod lsp_common;

use lsp_common::rng::Rng;
use lsp_common::stdio::spawn;

const URI: &str = "file:///fuzz.mlir";
const DOC: &str = "sdy.mesh @mesh = <[\"x\"=2]>\nfunc.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> tensor<8xf32> {\n  return %a : tensor<8xf32>\n}\n";

const METHODS: &[&str] = &[
    "textDocument/hover",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/documentSymbol",
    "textDocument/foldingRange",
    "textDocument/completion",
    "textDocument/semanticTokens/full",
    "textDocument/semanticTokens/range",
    "textDocument/inlayHint",
    "inlayHint/resolve",
    "textDocument/codeAction",
    "textDocument/codeLens",
    "textDocument/rename",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didSave",
    "workspace/executeCommand",
    "workspace/didChangeConfiguration",
    "$/cancelRequest",
    "$/setTrace",
    "$/unknown",
    "$/sdy-lsp/answer",
    "$/sdy-lsp/open",
    "initialize",
    "initialized",
    "nonexistent/method",
    "",
];

struct Server {
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Result<Value, String>>,
}

impl Server {
    fn start() -> Server {
        let (child, stdin, messages) = spawn(&[("SDY_LSP_DEBOUNCE_MS", "0")]);
        Server { child, stdin, messages }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("the server closed its input");
    }

    fn send(&mut self, msg: &Value) {
        self.send_raw(&frame(msg.to_string().as_bytes()));
    }

    /// Waits for the response to `id`, checking every message on the way.
    fn answer(&mut self, id: i64, ids: &HashSet<Value>, stats: &mut Stats) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = match self.messages.recv_timeout(left) {
                Ok(Ok(m)) => m,
                Ok(Err(e)) => panic!("the server's output: {e}"),
                Err(_) => panic!("no answer to request {id}"),
            };
            assert_eq!(m["jsonrpc"], "2.0", "{m}");
            if m.get("method").is_some() {
                continue; // a notification or a request of the server's
            }
            stats.responses += 1;
            let rid = &m["id"];
            if m.get("error").is_some() {
                stats.errors += 1;
                let code = m["error"]["code"].as_i64().unwrap_or_else(|| panic!("{m}"));
                assert!((-32899..=-32000).contains(&code) || code == -32700, "{m}");
                assert_ne!(code, -32603, "a handler failed (panicked): {m}");
            } else {
                assert!(m.get("result").is_some(), "{m}");
            }
            assert!(rid.is_null() || ids.contains(rid), "an answer to an id never sent: {m}");
            if *rid == json!(id) {
                return m;
            }
        }
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut m = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    m.extend_from_slice(body);
    m
}

#[derive(Default)]
struct Stats {
    bad: u64,
    valid: u64,
    probes: u64,
    responses: u64,
    errors: u64,
    bytes: u64,
}

/// A position in the document, sometimes past its end.
fn position(rng: &mut Rng) -> Value {
    let line = if rng.chance(8) { rng.next() as u32 as i64 } else { rng.below(5) as i64 };
    json!({"line": line, "character": rng.below(90)})
}

/// Params for `method`: right, or of the wrong shape or type.
fn params(rng: &mut Rng, method: &str) -> Value {
    let doc = json!({"uri": URI});
    let good = match method {
        "textDocument/didOpen" => {
            json!({"textDocument": {"uri": format!("file:///o{}.mlir", rng.below(4)),
            "languageId": "mlir", "version": 1, "text": DOC}})
        }
        "textDocument/didChange" => {
            json!({"textDocument": {"uri": URI, "version": rng.below(1000)},
            "contentChanges": [{"range": {"start": position(rng), "end": position(rng)}, "text": "x"}]})
        }
        "textDocument/rename" => {
            json!({"textDocument": doc, "position": position(rng), "newName": "y"})
        }
        "textDocument/references" => json!({"textDocument": doc, "position": position(rng),
            "context": {"includeDeclaration": true}}),
        "textDocument/semanticTokens/range"
        | "textDocument/inlayHint"
        | "textDocument/codeAction" => {
            json!({"textDocument": doc, "range": {"start": position(rng), "end": position(rng)},
                   "context": {"diagnostics": []}})
        }
        "workspace/executeCommand" => json!({"command": "sdy.propagate", "arguments": [URI]}),
        "$/cancelRequest" => json!({"id": rng.below(1000)}),
        _ => json!({"textDocument": doc, "position": position(rng)}),
    };
    match rng.below(6) {
        0 => json!(null),
        1 => json!([1, "two", null]),
        2 => json!("string"),
        3 => {
            // A member of the wrong type.
            let mut p = good;
            if let Some(obj) = p.as_object_mut() {
                let keys: Vec<String> = obj.keys().cloned().collect();
                if !keys.is_empty() {
                    let k = rng.pick(&keys).clone();
                    obj.insert(
                        k,
                        rng.pick(&[json!(1.5), json!("s"), json!({}), json!([])]).clone(),
                    );
                }
            }
            p
        }
        _ => good,
    }
}

/// A JSON-RPC message that may be right or wrong in any member.
fn message(rng: &mut Rng, ids: &mut HashSet<Value>, next_id: &mut i64) -> Value {
    let method = *rng.pick(METHODS);
    let mut m = json!({"jsonrpc": "2.0", "method": method, "params": params(rng, method)});
    if rng.chance(2) {
        *next_id += 1;
        let id = match rng.below(8) {
            0 => json!(format!("s{next_id}")),
            1 => json!(null),
            2 => json!(1.5),
            3 => json!({"n": 1}),
            4 => json!(u64::MAX),
            _ => json!(*next_id),
        };
        ids.insert(id.clone());
        m["id"] = id;
    }
    match rng.below(14) {
        0 => m["jsonrpc"] = json!("1.0"),
        1 => {
            m.as_object_mut().unwrap().remove("jsonrpc");
        }
        2 => m["method"] = json!(7),
        3 => m["result"] = json!(null),
        4 => m = json!([m]),
        5 => m = json!({}),
        6 => m = json!([]),
        7 => {
            m.as_object_mut().unwrap().remove("method");
            m["error"] = json!({"code": "x"});
        }
        _ => {}
    }
    m
}

/// The bytes of a message that should not be (quite) right.
fn bad_bytes(rng: &mut Rng, ids: &mut HashSet<Value>, next_id: &mut i64) -> Vec<u8> {
    let body = message(rng, ids, next_id).to_string().into_bytes();
    match rng.below(16) {
        // Random bytes, with and without line breaks.
        0 => (0..rng.below(300)).map(|_| rng.next() as u8).collect(),
        1 => (0..rng.below(300)).map(|_| *rng.pick(b"ab: \r\n{}\"0")).collect(),
        // A body with bytes flipped, inserted or removed.
        2 | 3 => {
            let mut b = body;
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(b.len());
                match rng.below(3) {
                    0 if !b.is_empty() => b[at] = rng.next() as u8,
                    1 => b.insert(at, *rng.pick(b"\"\\{}[],:\xe9\xff\x00")),
                    _ if !b.is_empty() => {
                        b.remove(at);
                    }
                    _ => {}
                }
            }
            frame(&b)
        }
        // Escapes JSON has that serde_json refuses or that are no text.
        4 => {
            let s = String::from_utf8(body).unwrap();
            let s = s.replacen("\"params\":", "\"x\":\"\\ud800\\udc00\\udfff\",\"params\":", 1);
            frame(s.replace("1.5", "1e999").as_bytes())
        }
        // Deep nesting.
        5 => {
            let d = 1 + rng.below(400);
            let b = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{}{}}}"#,
                "[".repeat(d),
                "]".repeat(d)
            );
            ids.insert(json!(1));
            frame(b.as_bytes())
        }
        // Header variants.
        6 => {
            let header = rng.pick(&[
                "content-length: {n}\r\n\r\n",
                "Content-Length: {n}\r\nX-Extra: 1\r\nX-More: 2\r\n\r\n",
                "Content-Length: {n}\r\nContent-Type: application/vscode-jsonrpc; charset=latin1\r\n\r\n",
                "Content-Length: {n}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n",
                "Content-Type: x\r\n\r\n",
                "Content-Length: -{n}\r\n\r\n",
                "Content-Length: {n}x\r\n\r\n",
                "Content-Length: {n}\r\nContent-Length: 1{n}\r\n\r\n",
                "Content-Length {n}\r\n\r\n",
                "Content-Length: {n}\n\n",
                "\r\n\r\nContent-Length: {n}\r\n\r\n",
            ]);
            let mut m = header.replace("{n}", &body.len().to_string()).into_bytes();
            m.extend(body);
            m
        }
        // Lengths over the limit, with or without the bytes.
        7 => {
            let n = rng.pick(&[
                "9223372036854775807",
                "18446744073709551615",
                "1073741825",
                "99999999999999999999999",
            ]);
            let mut m = format!("Content-Length: {n}\r\n\r\n").into_bytes();
            m.extend(body);
            m
        }
        // Truncated or overlong bodies (the filler after it completes them).
        8 => {
            let cut = rng.below(body.len());
            let mut m = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
            m.extend(&body[..cut]);
            m
        }
        9 => {
            let n = body.len() - rng.below(body.len());
            let mut m = format!("Content-Length: {n}\r\n\r\n").into_bytes();
            m.extend(body);
            m
        }
        // A big body: a big didOpen with a bad text, or big garbage.
        10 => {
            let text = "é\\ud800x\\n".repeat(10_000 + rng.below(100_000));
            let version = rng.pick(&["1", "\"v\""]);
            let uri = format!("file:///big{}.mlir", rng.below(3));
            let b = format!(
                r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{uri}","languageId":"mlir","version":{version},"text":"{text}"}}}}}}"#
            );
            frame(b.as_bytes())
        }
        11 => frame(&vec![b'{'; 70_000 + rng.below(1 << 20)]),
        // A message that is right in its framing, wrong (or right) inside.
        _ => frame(&body),
    }
}

/// Keeps editing the document with valid changes.
fn valid_traffic(
    rng: &mut Rng,
    version: &mut i64,
    next_id: &mut i64,
    ids: &mut HashSet<Value>,
) -> Vec<Value> {
    *version += 1;
    let mut out = vec![json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": URI, "version": *version},
        "contentChanges": [{"text": if rng.chance(2) { DOC.to_string() } else { DOC.replace("@mesh,", "@nomesh,") }}]}})];
    if rng.chance(2) {
        *next_id += 1;
        ids.insert(json!(*next_id));
        out.push(json!({"jsonrpc": "2.0", "id": *next_id, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": URI}, "position": {"line": 1, "character": 70}}}));
    }
    out
}

#[test]
fn the_server_answers_or_ignores_every_message_and_keeps_serving() {
    let budget = std::env::var("SDY_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(Duration::from_secs(3), Duration::from_secs);
    let seed =
        std::env::var("SDY_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
                as u64
                | 1
        });
    eprintln!("lsp_protocol_fuzz: seed {seed} (SDY_FUZZ_SEED), {} s", budget.as_secs());
    let mut rng = Rng(seed);
    let mut s = Server::start();
    let mut stats = Stats::default();
    let mut ids: HashSet<Value> = HashSet::new();
    // Probe ids are negative: no fuzzed message uses them.
    let mut probe = 0i64;
    let mut next_id = 0i64;
    let mut version = 1;

    ids.insert(json!(0));
    s.send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}),
    );
    s.answer(0, &ids, &mut stats);
    s.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    s.send(
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": URI, "languageId": "mlir", "version": 1, "text": DOC}}}),
    );

    let t0 = Instant::now();
    // A filler that completes a body claiming up to this many bytes more than it has
    // (blank lines between messages are skipped).
    let filler = vec![b'\n'; 4200];
    while t0.elapsed() < budget {
        let bad = bad_bytes(&mut rng, &mut ids, &mut next_id);
        // A mutation may have made another valid id.
        if let Some(at) = bad.windows(4).position(|w| w == b"\r\n\r\n") {
            if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(&bad[at + 4..]) {
                ids.extend(m.get("id").cloned());
            }
        }
        stats.bad += 1;
        stats.bytes += bad.len() as u64;
        s.send_raw(&bad);
        s.send_raw(&filler);
        if rng.chance(3) {
            for m in valid_traffic(&mut rng, &mut version, &mut next_id, &mut ids) {
                stats.valid += 1;
                s.send(&m);
            }
        }
        probe -= 1;
        ids.insert(json!(probe));
        s.send(&json!({"jsonrpc": "2.0", "id": probe, "method": "textDocument/documentSymbol",
                       "params": {"textDocument": {"uri": URI}}}));
        stats.probes += 1;
        let answer = s.answer(probe, &ids, &mut stats);
        assert!(
            answer.get("result").is_some(),
            "the valid request after a bad one failed: {answer}\nbad message: {}",
            String::from_utf8_lossy(&bad[..bad.len().min(2000)])
        );
    }
    probe -= 1;
    ids.insert(json!(probe));
    s.send(&json!({"jsonrpc": "2.0", "id": probe, "method": "shutdown"}));
    s.answer(probe, &ids, &mut stats);
    s.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    let status = s.child.wait().unwrap();
    eprintln!(
        "lsp_protocol_fuzz: {} bad messages ({} MB), {} valid ones, {} probes answered, {} responses ({} errors), exit {:?}, in {:.1} s",
        stats.bad,
        stats.bytes >> 20,
        stats.valid,
        stats.probes,
        stats.responses,
        stats.errors,
        status.code(),
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(status.code(), Some(0));
}
